import pandas as pd
import pytest

from simnet.analysis import read_results
from simnet.errors import SimnetError
from simnet.scenario import load_scenario, parse_scenario, run
from simnet.testing import Golden, assert_timings, assert_under, timing_changes

from tests.test_scenario import ROOT, with_changes


@pytest.fixture(scope="module")
def quickstart() -> pd.DataFrame:
    return run(load_scenario(ROOT / "scenarios" / "quickstart.yaml"))


def test_identical_results_have_no_changes(quickstart):
    assert timing_changes(quickstart, quickstart.copy()).empty
    assert_timings(quickstart, quickstart.copy())


def test_moved_added_and_removed_rows_are_reported(quickstart):
    moved = quickstart.copy()
    moved.loc[1, "sim_time_s"] *= 1 + 1e-8
    changes = timing_changes(moved.iloc[:2], quickstart)
    assert list(changes["change"]) == ["moved", "removed"]
    assert changes.iloc[0]["relative_change"] == pytest.approx(1e-8, rel=1e-6)
    assert list(timing_changes(quickstart, quickstart.iloc[:2])["change"]) == ["added"]
    with pytest.raises(AssertionError, match=r"^1 timing\(s\) changed, 1 row\(s\) removed \(rtol=1e-09\):"):
        assert_timings(moved.iloc[:2], quickstart)


def test_the_header_counts_added_and_removed_rows_apart_from_changed_timings(tmp_path, quickstart):
    """Study r26 F8: 30 rows added or removed (fewer sizes, an algorithm dropped) were "30 timing(s) changed"."""
    Golden(tmp_path, update=True).check("q", quickstart.iloc[1:])
    with pytest.raises(pytest.fail.Exception) as failed:
        Golden(tmp_path).check("q", quickstart.iloc[:2])
    assert str(failed.value).startswith(f"{tmp_path / 'q.csv'}: 1 row(s) added, 1 row(s) removed (rtol=1e-09):\n")
    with pytest.raises(AssertionError, match=r"^2 row\(s\) removed \(rtol=1e-09\):"):
        assert_timings(quickstart.iloc[:1], quickstart)


def test_a_latency_change_fails_the_golden_check_naming_the_scenario(tmp_path, quickstart):
    golden = Golden(tmp_path, update=True)
    golden.check("quickstart", quickstart)
    slower = run(parse_scenario(with_changes("topology.latency", "1.1 us")))
    with pytest.raises(pytest.fail.Exception) as failed:
        Golden(tmp_path).check("quickstart", slower)
    message = str(failed.value)
    assert "quickstart.csv: 9 timing(s) changed, 3 label(s) changed" in message
    lines = message.splitlines()
    assert all(line.split()[0] == "quickstart" for line in lines[2:])
    assert sum("sim_time_s" in line and "moved" in line for line in lines) == 3
    assert sum("critical_path_s" in line and "moved" in line for line in lines) == 3
    relabelled = [line for line in lines if "relabelled" in line]
    assert len(relabelled) == 3 and all("…s, latency=1 us)" in line and "…s, latency=1.1 us)" in line
                                        for line in relabelled)
    assert max(map(len, lines)) < 200, "study r23: a relabelled topology printed 420-character lines"


def test_update_mode_writes_and_reports(tmp_path, quickstart, capsys):
    golden = Golden(tmp_path, update=True)
    assert len(golden.check("q", quickstart)) == 3
    assert golden.check("q", quickstart).empty
    assert "3 change(s)" in capsys.readouterr().out
    assert Golden(tmp_path).check("q", quickstart).empty


def test_missing_table_fails_outside_update_mode(tmp_path, quickstart):
    with pytest.raises(pytest.fail.Exception, match="--simnet-update-golden"):
        Golden(tmp_path).check("absent", quickstart)


def test_a_missing_model_time_is_unchanged_until_it_appears(tmp_path, quickstart):
    """Algorithms without a closed form have no model time; a golden file stores it as an empty cell."""
    without = quickstart.assign(model_time_s=float("nan"))
    path = tmp_path / "golden.csv"
    without.to_csv(path, index=False)
    stored = pd.read_csv(path, keep_default_na=False)
    assert timing_changes(without, stored).empty
    moved = timing_changes(quickstart, stored)
    assert set(moved["column"]) == {"model_time_s"} and set(moved["change"]) == {"moved"}


def test_update_mode_leaves_a_table_alone_when_nothing_moved_beyond_the_tolerance(tmp_path, quickstart):
    golden = Golden(tmp_path, update=True)
    golden.check("q", quickstart)
    written = golden.path("q").read_bytes()
    noise = quickstart.copy()
    noise["sim_time_s"] *= 1 + 1e-15
    assert golden.check("q", noise).empty
    assert golden.path("q").read_bytes() == written
    moved = quickstart.copy()
    moved.loc[0, "sim_time_s"] *= 1.01
    assert len(golden.check("q", moved)) == 1
    assert golden.path("q").read_bytes() != written


def test_one_check_can_loosen_the_tolerance(tmp_path, quickstart):
    Golden(tmp_path, update=True).check("q", quickstart)
    moved = quickstart.copy()
    moved["sim_time_s"] *= 1 + 1e-6
    with pytest.raises(pytest.fail.Exception, match=r"rtol=1e-09"):
        Golden(tmp_path).check("q", moved)
    assert Golden(tmp_path).check("q", moved, rtol=1e-5).empty


def test_a_changed_nccl_choice_is_reported_beside_the_times_it_moved():
    """Study r23: a golden table did not say when NCCL's choice changed (nvls_tree to ring), only that the
    `nccl` row's times moved. `resolved` is compared as a label; a table written without it still compares."""
    from simnet.analysis import result_row

    def row(resolved: str, time_s: float) -> dict:
        return result_row(scenario="s", point="", topology="t", op="allreduce", algorithm="nccl", params="{}",
                          network_model="maxmin", ranks=16, size_bytes=2**30, sim_time_s=time_s,
                          model_time_s=time_s, critical_path_s=time_s, resolved=resolved)

    before = pd.DataFrame([row('{"channels": 16, "nccl_algorithm": "nvls_tree", "protocol": "simple"}', 1.0)])
    after = pd.DataFrame([row('{"channels": 16, "nccl_algorithm": "ring", "protocol": "simple"}', 1.5)])
    changes = timing_changes(after, before)
    relabelled = changes[changes["change"] == "relabelled"]
    assert relabelled["column"].tolist() == ["resolved"]
    with pytest.raises(AssertionError, match=r"3 timing\(s\) changed, 1 label\(s\) changed") as failed:
        assert_timings(after, before)
    assert 'nvls_tree' in str(failed.value) and '"ring"' in str(failed.value)
    assert timing_changes(after, before.drop(columns=["resolved"]))["change"].tolist() == ["moved"] * 3


def test_a_budget_names_the_rows_over_it(quickstart):
    from simnet.testing import assert_under

    assert_under(quickstart, "10 ms")
    with pytest.raises(AssertionError, match=r"1 row\(s\) over 5 ms in sim_time_s:") as failed:
        assert_under(quickstart, "5 ms")
    assert "ring" in str(failed.value) and "67108864" in str(failed.value)
    with pytest.raises(SimnetError, match="^column: no column 'time_s'"):
        assert_under(quickstart, 1.0, column="time_s")


@pytest.mark.parametrize(("call", "message"), [
    (lambda q: assert_timings(q, q, rtol=-1),
     "rtol: must be a finite number ≥ 0 (a relative tolerance such as 1e-9), got -1"),
    (lambda q: timing_changes(q, q, rtol=float("nan")), "rtol: must be a finite number ≥ 0"),
    (lambda q: Golden(".", rtol="1e-9"), "rtol: must be a finite number ≥ 0 (a relative tolerance such as 1e-9), "
                                         "got '1e-9'"),
    (lambda q: assert_under(q, "-1 ms"), "limit: must be a time > 0 such as '6.5 ms' (or seconds), got '-1 ms'"),
    (lambda q: assert_under(q, 0), "limit: must be a time > 0 such as '6.5 ms' (or seconds), got 0"),
    (lambda q: assert_under(q, "5 parsecs"), "limit: unknown unit 'parsecs'"),
    (lambda q: assert_timings(pd.concat([q, q.iloc[:1]]), q),
     "actual: expected one row per (scenario, point, algorithm, params, network_model, ranks, size_bytes); 1 row(s) "
     "repeat an earlier one, the first: scenario='quickstart', point='', algorithm='ring', "
     "params='{\"chunks\": 1}', network_model='fifo', ranks=8, size_bytes=1024"),
    (lambda q: assert_timings(q, pd.concat([q, q])), "expected: expected one row per"),
    (lambda q: assert_timings(q.drop(columns="sim_time_s"), q), "actual: timings need the columns ['sim_time_s']"),
], ids=["negative rtol", "nan rtol", "rtol as text", "negative budget", "zero budget", "budget without a time unit",
        "repeated actual row", "repeated expected row", "missing column"])
def test_a_bad_argument_names_itself_its_value_and_what_was_expected(quickstart, call, message):
    """Study r26 F7: rtol=-1 reported every timing as changed, a negative budget and a row given twice passed."""
    with pytest.raises(SimnetError) as raised:
        call(quickstart)
    assert str(raised.value).startswith(message), str(raised.value)


@pytest.mark.parametrize("reader", ["read_results", "pandas.read_json", "json.load", "pandas.read_csv"])
def test_timings_compare_however_the_written_results_are_read(tmp_path, reader):
    """Study r26 F5: assert_timings on results.json read back ended in pandas' `unhashable type: 'dict'` (params
    and resolved are JSON objects there, JSON text in the frame and results.csv)."""
    import json

    from simnet.analysis import read_results
    from simnet.sweep import run_sweep
    from simnet.scenario import expand

    from tests.test_analysis import ROUND_TRIP

    results = run_sweep(expand(parse_scenario(ROUND_TRIP)), out_dir=tmp_path)
    read = {"read_results": lambda: read_results(tmp_path / "results.json"),
            "pandas.read_json": lambda: pd.read_json(tmp_path / "results.json"),
            "json.load": lambda: pd.DataFrame(json.loads((tmp_path / "results.json").read_text())),
            "pandas.read_csv": lambda: pd.read_csv(tmp_path / "results.csv")}[reader]()
    assert_timings(read, results)
    assert_timings(results, read)
    moved = results.assign(sim_time_s=results["sim_time_s"] * (1 + 1e-6))
    with pytest.raises(AssertionError, match=rf"^{len(results)} timing\(s\) changed"):
        assert_timings(moved, read)


def python_blocks(markdown: str) -> list[str]:
    """The ```python blocks of a Markdown text, as written (a block inside a list item dedented)."""
    import re
    import textwrap

    return [textwrap.dedent(body) for _, body in
            re.findall(r"^( *)```python\n(.*?)^\1```$", markdown, re.S | re.M)]


def test_the_python_of_docs_testing_md_runs_as_written(tmp_path):
    """Study r26 F6: docs/testing.md called simnet.testing.assert_under after a bare `import simnet` (an
    AttributeError outside pytest's plugin) and its result_row snippet used names it never defined. Every
    Python block now runs as written: the conftest and test files in a project of their own (with
    --simnet-update-golden, then checking), the sweeps as scripts."""
    import os
    import subprocess
    import sys

    import yaml

    blocks = python_blocks((ROOT / "docs" / "testing.md").read_text(encoding="utf-8"))
    (conftest,) = [block for block in blocks if "pytest_plugins" in block]
    tests = [block for block in blocks if "def test_" in block]
    scripts = [block for block in blocks if block not in tests and block != conftest]
    assert len(tests) == 3 and len(scripts) == 2
    (tmp_path / "scenarios").mkdir()
    mine = yaml.safe_load((ROOT / "scenarios" / "quickstart.yaml").read_text()) | {"sizes": ["1 KiB", "1 MiB"]}
    (tmp_path / "scenarios" / "my_allreduce.yaml").write_text(yaml.safe_dump(mine))
    (tmp_path / "scenarios" / "ring_chunks_sweep.yaml").write_text(
        (ROOT / "scenarios" / "ring_chunks_sweep.yaml").read_text())
    (tmp_path / "conftest.py").write_text(conftest)
    for number, block in enumerate(tests):
        (tmp_path / f"test_doc_{number}.py").write_text(block)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for update in (["--simnet-update-golden"], []):
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *update],
                              cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "3 passed" in done.stdout
    assert sorted(path.name for path in (tmp_path / "golden").iterdir()) == ["my_allreduce.csv", "python_ring.csv"]
    printed = []
    for script in scripts:
        done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        printed.append(done.stdout)
    assert printed == ["36 rows from 12 of 12 points\n", ""]
    pd.testing.assert_frame_equal(read_results(tmp_path / "results" / "nightly" / "results.json"),
                                  read_results(tmp_path / "results" / "nightly_dask" / "results.csv"))
