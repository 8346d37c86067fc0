"""benchmarks/msccl_corpus.py on a corpus of four small files: a whole run, then a re-check of a subset."""

import importlib.util
from pathlib import Path

import pytest

from tests.interchange.programs import direct_alltoall, program, ring

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("msccl_corpus", ROOT / "benchmarks" / "msccl_corpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def corpus(tmp_path) -> Path:
    files = {"a__x/ring.xml": program(ring(4), nchunks=4), "a__x/copy/ring.xml": program(ring(4), nchunks=4),
             "a__x/a2a.xml": program(direct_alltoall(3, 1), nchunks=3, coll="alltoall", inplace=0),
             "b__y/bad.xml": "<?xml version=\"1.0\"?>\n<algo/>\n"}
    for name, text in files.items():
        (tmp_path / "corpus" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "corpus" / name).write_text(text)
    return tmp_path / "corpus"


def generated(path: Path, marker: str) -> list[str]:
    return path.read_text().split(marker)[1].splitlines()


def test_a_recheck_rewrites_matching_rows_and_recounts(script, corpus, tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("Prose that stays.\n\n" + script.MARKER + "\nstale\n")
    assert script.main([str(corpus), "--update", str(doc)]) == 0
    whole = doc.read_text()
    assert whole.startswith("Prose that stays.\n\n" + script.MARKER)
    assert "4 files, 3 distinct (SHA-1)" in whole and "| imports, passes check() | 2 |" in whole
    assert "| a/x | a2a.xml | alltoall | 3 |  | imports, passes check() |" in whole
    assert "| a/x | copy/ring.xml | allreduce | 4 | 1 | imports, passes check() |" in whole

    stale = whole.replace("| a/x | a2a.xml | alltoall | 3 |  | imports, passes check() |",
                          "| a/x | a2a.xml | alltoall | 3 |  | unsupported (collective): no alltoall |")
    stale = stale.replace("| defect (format): ", "| defect (format): kept as written; ")
    doc.write_text(stale)
    assert script.main([str(corpus), "--update", str(doc), "--recheck-outcome", "unsupported"]) == 0
    lines = generated(doc, script.MARKER)
    assert "| a/x | a2a.xml | alltoall | 3 |  | imports, passes check() |" in lines
    assert any("| defect (format): kept as written; " in line for line in lines)
    assert "| imports, passes check() | 2 |" in lines and "| defect | 1 |" in lines
    assert not any(line.startswith("| unsupported") for line in lines)
    assert ("Re-checked after the last whole-corpus run: the 1 distinct files of result unsupported "
            "(the others as that run left them).") in lines


def test_a_recheck_refuses_a_corpus_that_no_longer_matches_the_table(script, corpus, tmp_path, capsys):
    doc = tmp_path / "doc.md"
    assert script.main([str(corpus), "--update", str(doc)]) == 0
    (corpus / "a__x" / "new.xml").write_text(program(ring(2), nchunks=2))
    with pytest.raises(SystemExit) as stopped:
        script.main([str(corpus), "--update", str(doc), "--recheck-coll", "alltoall"])
    message = capsys.readouterr().err.strip().splitlines()[-1]
    assert stopped.value.code == 2 and "differ in 1 distinct files (e.g. a/x new.xml); run the whole corpus" in message
    with pytest.raises(SystemExit):
        script.main([str(corpus), "--update", str(doc), "--recheck-outcome", "broken"])
    assert "'broken' is not one of imports, defect, unsupported" in capsys.readouterr().err
