"""Output directories: one run at a time (a lock that dies with its process), one study per directory."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from simnet.errors import SimnetError
from simnet.outputs import LOCK_FILE, MANIFEST_FILE, OutputBusy, claim

ROOT = Path(__file__).resolve().parents[1]

HOLDER = """
import sys, time
from pathlib import Path
from simnet.outputs import claim
with claim(Path(sys.argv[1]), name="ring_chunks_sweep", command="run", source="scenarios/ring_chunks_sweep.yaml"):
    print("held", flush=True)
    time.sleep(600)
"""


@pytest.fixture
def holder(tmp_path):
    """A process holding a claim on ``tmp_path / "out"`` until it is killed."""
    process = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path / "out")], stdout=subprocess.PIPE,
                               text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert process.stdout.readline() == "held\n"
    yield process
    if process.poll() is None:
        process.kill()
    process.wait()
    process.stdout.close()


def test_a_claim_leaves_no_lock_file_behind(tmp_path):
    out = tmp_path / "new" / "out"
    with claim(out, name="quickstart", command="run") as claimed:
        assert claimed == out and (out / LOCK_FILE).is_file()
        assert json.loads((out / LOCK_FILE).read_text())["pid"] == os.getpid()
    assert list(out.iterdir()) == []


def test_a_second_claim_is_refused_naming_the_first(tmp_path, holder):
    with pytest.raises(OutputBusy) as info:
        with claim(tmp_path / "out", name="quickstart", command="run"):
            pass
    message = str(info.value)
    assert message.startswith(f"{tmp_path / 'out'}: in use by simnet run of 'ring_chunks_sweep' "
                              f"(scenarios/ring_chunks_sweep.yaml), pid {holder.pid}, started 20")
    assert message.endswith("; wait for it or choose another --out") and "\n" not in message


def test_the_lock_of_a_killed_run_does_not_block(tmp_path, holder):
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    stale = tmp_path / "out" / LOCK_FILE
    assert json.loads(stale.read_text())["pid"] == holder.pid
    with claim(tmp_path / "out", name="quickstart", command="run"):
        assert json.loads(stale.read_text())["pid"] == os.getpid()
    assert not stale.exists()


def test_a_lock_file_nobody_holds_is_taken_over(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / LOCK_FILE).write_text(json.dumps({"pid": 999_999_999, "name": "gone"}))
    with claim(out, name="quickstart", command="run"):
        pass
    assert not (out / LOCK_FILE).exists()


def test_claims_in_one_process_exclude_each_other(tmp_path):
    with claim(tmp_path, name="a", command="run"):
        with pytest.raises(OutputBusy, match=f"pid {os.getpid()}"):
            with claim(tmp_path, name="a", command="run"):
                pass


def write_study(out: Path, name: str, files: list[str] | None) -> None:
    manifest = {"name": name, "scenario": f"scenarios/{name}.yaml"}
    if files is not None:
        manifest["files"] = files
    (out / MANIFEST_FILE).write_text(json.dumps(manifest))
    for file in files or ["results.csv", "time_vs_size.png"]:
        (out / file).write_text(name)
    (out / "points").mkdir()
    (out / "points" / "00000-0123456789abcdef.json").write_text("{}")


def test_another_study_is_refused_and_the_same_one_allowed(tmp_path):
    write_study(tmp_path, "ring_chunks_sweep", ["results.csv", "sweep.png"])
    with pytest.raises(SimnetError) as info:
        with claim(tmp_path, name="quickstart", command="run"):
            pass
    assert str(info.value) == (f"{tmp_path}: holds the results of 'ring_chunks_sweep' "
                               "(scenarios/ring_chunks_sweep.yaml), not 'quickstart'; pass --overwrite to replace "
                               "them, or choose another --out")
    with claim(tmp_path, name="ring_chunks_sweep", command="run"):
        assert (tmp_path / "sweep.png").exists()


@pytest.mark.parametrize("listed", [["results.csv", "sweep.png"], None])
def test_overwrite_removes_the_other_studys_files_and_nothing_else(tmp_path, listed):
    write_study(tmp_path, "ring_chunks_sweep", listed)
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "points" / "mine.json").write_text("{}")
    with claim(tmp_path, name="quickstart", command="run", overwrite=True):
        remaining = sorted(path.name for path in tmp_path.rglob("*") if path.name != LOCK_FILE)
    assert remaining == ["mine.json", "notes.txt", "points"]
