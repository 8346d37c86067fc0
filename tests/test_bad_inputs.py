"""The bad-input corpus: every malformed file gives exit code 2 and one clean line."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from simnet.cli import main

CORPUS = Path(__file__).parent / "bad_inputs"
CASES = yaml.safe_load((CORPUS / "cases.yaml").read_text(encoding="utf-8"))
COMMANDS = {"run": ["run"], "topo": ["topo", "show"]}


def test_the_corpus_is_large_and_complete():
    assert len(CASES) >= 40
    listed = set(CASES) | {"t08_include_cycle_b.yaml"}
    assert listed == {p.name for p in CORPUS.glob("*.yaml")} - {"cases.yaml"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_gives_one_clean_line_and_exit_code_2(name, capsys, monkeypatch):
    monkeypatch.chdir(CORPUS)
    case = CASES[name]
    assert main([*COMMANDS[case["command"]], name]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("error: ") and "Traceback" not in captured.err
    source, _, message = lines[0].removeprefix("error: ").partition(".yaml: ")
    assert Path(f"{source}.yaml").name.startswith(name[:3])
    assert message.startswith(case["expect"]), f"{message!r} does not start with {case['expect']!r}"


@pytest.mark.parametrize("where", ["before the command", "after it"])
def test_debug_shows_the_traceback(where):
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    args = ["--debug", "run", "s08_one_host.yaml"] if where == "before the command" else [
        "run", "s08_one_host.yaml", "--debug"]
    result = subprocess.run([sys.executable, "-m", "simnet.cli", *args], cwd=CORPUS, env=env, capture_output=True,
                            text=True)
    assert result.returncode != 0
    assert "Traceback" in result.stderr and "topology.hosts" in result.stderr
