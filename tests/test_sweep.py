import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from simnet.analysis import RESULT_COLUMNS
from simnet.errors import ScenarioError, SimnetError, SweepFailed
from simnet.scenario import expand, parse_scenario, run
from simnet.sweep import SweepInterrupted, run_sweep

from tests.test_scenario import QUICKSTART

ROOT = Path(__file__).resolve().parents[1]


def sweep_scenario(grid=None, points=None, **changes) -> dict:
    data = json.loads(json.dumps(QUICKSTART)) | changes
    data["sweep"] = {k: v for k, v in (("grid", grid), ("points", points)) if v is not None}
    return data


def test_grid_multiplies_in_the_order_written():
    points = expand(parse_scenario(sweep_scenario(
        grid={"topology.hosts": [2, 4, 8], "collective.chunks": [1, 2]},
        points=[{"topology.latency": "1 us"}, {"topology.latency": "2 us"}],
    )))
    assert len(points) == 12
    assert [p.index for p in points] == list(range(12))
    assert points[0].label == "topology.hosts=2,collective.chunks=1,topology.latency=1 us"
    assert points[-1].label == "topology.hosts=8,collective.chunks=2,topology.latency=2 us"
    assert points[3].scenario.topology["hosts"] == 2 and points[3].scenario.collective.model_extra["chunks"] == 2
    assert len({p.digest for p in points}) == 12
    assert all(p.scenario.sweep is None for p in points)


def test_scalar_sizes_and_algorithms_become_lists():
    points = expand(parse_scenario(sweep_scenario(grid={"sizes": ["1 KiB", "1 MiB"],
                                                         "collective.algorithms": ["ring"]})))
    assert [p.scenario.sizes for p in points] == [[1024], [2**20]]


def test_scenario_without_sweep_is_one_unlabelled_point():
    (point,) = expand(parse_scenario(QUICKSTART))
    assert point.label == "" and point.index == 0


@pytest.mark.parametrize(
    ("sweep", "message"),
    [
        ({"grid": {"topology.hosts": [1, 0]}}, "sweep: point 0 (topology.hosts=1): topology.hosts: must be an "
                                               "integer ≥ 2, got 1"),
        ({"grid": {"topology.hosts": []}}, "sweep.grid.topology.hosts: must list at least one value"),
        ({"grid": {"name.first": ["x"]}}, "sweep: cannot set 'name.first': name is not a mapping"),
        ({"grid": {"topology.bandwith": ["1 GB/s"]}}, "did you mean 'bandwidth'?"),
        ({"grdi": {}}, "sweep.grdi: unknown key; did you mean 'grid'?"),
        ({"grid": {"sizes": "1 KiB"}}, "sweep.grid.sizes: input should be a valid list"),
    ],
)
def test_sweep_errors_name_the_key(sweep, message):
    data = sweep_scenario()
    data["sweep"] = sweep
    with pytest.raises(ScenarioError) as raised:
        expand(parse_scenario(data, source="s.yaml"), source="s.yaml")
    assert message in str(raised.value)


GRID_200 = {"topology.hosts": list(range(2, 12)), "collective.chunks": [1, 2, 3, 4],
            "topology.latency": ["1 us", "2 us", "3 us", "4 us", "5 us"]}


def test_two_hundred_points_locally_and_on_dask_give_identical_results(tmp_path):
    from dask.distributed import LocalCluster

    points = expand(parse_scenario(sweep_scenario(grid=GRID_200, sizes=["4 KiB", "1 MiB"])))
    assert len(points) == 200
    local = run_sweep(points, workers=2, progress=True, out_dir=tmp_path / "local")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        distributed = run_sweep(points, executor="dask", scheduler=cluster.scheduler_address,
                                out_dir=tmp_path / "dask")
    assert len(local) == 400
    pd.testing.assert_frame_equal(local, distributed)
    assert (tmp_path / "local" / "results.csv").read_bytes() == (tmp_path / "dask" / "results.csv").read_bytes()
    sequential = run(parse_scenario(sweep_scenario(grid=GRID_200, sizes=["4 KiB", "1 MiB"])))
    pd.testing.assert_frame_equal(local, sequential)


def test_dask_without_a_scheduler_runs_on_a_local_cluster_of_workers_processes():
    """Study r26 F3: the in-process cluster had no worker processes whatever `workers` said."""
    from simnet.sweep import dask_client

    with dask_client(None, 2) as client:
        pids = client.run(os.getpid)
    assert len(pids) == 2 and len(set(pids.values())) == 2 and os.getpid() not in pids.values()


@pytest.mark.parametrize(("options", "message"), [
    ({"workers": 0}, "workers: must be an integer ≥ 1 (worker processes), got 0"),
    ({"workers": -1}, "workers: must be an integer ≥ 1 (worker processes), got -1"),
    ({"workers": 2.0}, "workers: must be an integer ≥ 1 (worker processes), got 2.0"),
    ({"scheduler": "tcp://1.2.3.4:1"}, "scheduler: 'tcp://1.2.3.4:1' is a Dask scheduler; give it with "
                                       "executor='dask'"),
    ({"executor": "ray"}, "executor: executor must be 'local' or 'dask', got 'ray'"),
])
def test_bad_arguments_are_refused_before_anything_runs(tmp_path, options, message):
    """Study r26 F7: workers=0 and -1 ran quietly, and a scheduler with the local executor was ignored, where
    the command line refuses both."""
    points = expand(parse_scenario(QUICKSTART))
    with pytest.raises(SimnetError) as raised:
        run_sweep(points, out_dir=tmp_path / "out", **options)
    assert str(raised.value) == message
    assert not (tmp_path / "out").exists()


def test_run_sweep_takes_its_output_directory_as_text_too(tmp_path, monkeypatch):
    """As read_results takes its file: out_dir='nightly' ended in "'str' object has no attribute 'mkdir'"."""
    from simnet.analysis import read_results

    monkeypatch.chdir(tmp_path)
    results = run_sweep(expand(parse_scenario(QUICKSTART)), out_dir="nightly")
    pd.testing.assert_frame_equal(read_results("nightly/results.csv"), results)


def test_run_sweep_refuses_a_directory_of_another_study_as_the_command_line_does(tmp_path):
    """Study r26 F2: run_sweep(out_dir=...) wrote one study's results.csv beside another's manifest, results.md,
    plots and point files, and said nothing. It now holds the directory as `simnet run --out` does: another
    study's directory is refused (overwrite=True replaces that study's files), the same study's is reused."""
    from simnet.cli import main

    out = tmp_path / "out"
    assert main(["run", str(ROOT / "scenarios" / "ring_chunks_sweep.yaml"), "-o", str(out), "-q", "--no-plots"]) == 0
    before = sorted(path.name for path in out.rglob("*"))
    points = expand(parse_scenario(QUICKSTART, source="quickstart.yaml"))
    with pytest.raises(SimnetError) as raised:
        run_sweep(points, out_dir=out)
    assert str(raised.value) == (f"{out}: holds the results of 'ring_chunks_sweep' "
                                 f"({ROOT / 'scenarios' / 'ring_chunks_sweep.yaml'}), not 'quickstart'; pass "
                                 "overwrite=True to replace them, or choose another out_dir")
    assert sorted(path.name for path in out.rglob("*")) == before
    results = run_sweep(points, out_dir=out, overwrite=True)
    assert sorted(path.name for path in out.rglob("*")) == [
        f"00000-{points[0].digest}.json", "manifest.json", "points", "results.csv", "results.json"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["name"], manifest["scenario"], manifest["files"]) == (
        "quickstart", "quickstart.yaml", ["results.csv", "results.json"])
    assert [point["label"] for point in manifest["points"]] == [""]
    pd.testing.assert_frame_equal(run_sweep(points, out_dir=out, resume=True), results)
    assert main(["run", str(ROOT / "scenarios" / "ring_chunks_sweep.yaml"), "-o", str(out), "-q"]) == 2


def test_results_have_a_column_per_swept_key_holding_its_value(tmp_path):
    """The new-user study: results.csv and results.json held the swept values only inside the ``point`` label,
    whose values may hold commas. Each swept key is now a column named by its key path: numbers as numbers,
    strings as written, lists as the label's JSON, empty where a point leaves the key; ``point`` stays."""
    data = sweep_scenario(grid={"topology.hosts": [4, 8], "topology.bandwidth": ["100 Gbps", "200 Gbps"]},
                          points=[{"collective.chunks": 2}, {"topology.latency": "2 us"}], sizes=["1 MiB"])
    points = expand(parse_scenario(data))
    results = run_sweep(points, out_dir=tmp_path)
    assert list(results.columns[:6]) == ["scenario", "point", "topology.hosts", "topology.bandwidth",
                                         "collective.chunks", "topology.latency"]
    assert list(results.columns[6:]) == [c for c in RESULT_COLUMNS if c not in ("scenario", "point")]
    assert results[["topology.hosts", "topology.bandwidth", "collective.chunks", "topology.latency"]].values.tolist() \
        == [[hosts, bandwidth, *extra] for hosts in (4, 8) for bandwidth in ("100 Gbps", "200 Gbps")
            for extra in ([2, None], [None, "2 us"])]
    pd.testing.assert_frame_equal(results, run(parse_scenario(data)))
    written = pd.read_csv(tmp_path / "results.csv")
    assert written["topology.hosts"].tolist() == [4] * 4 + [8] * 4
    assert written["collective.chunks"].isna().tolist()[:2] == [False, True]
    assert (tmp_path / "results.csv").read_text().splitlines()[1].startswith(
        'quickstart,"topology.hosts=4,topology.bandwidth=100 Gbps,collective.chunks=2",4,100 Gbps,2,,')
    first = json.loads((tmp_path / "results.json").read_text())[0]
    assert [first[key] for key in ("topology.hosts", "topology.bandwidth", "collective.chunks", "topology.latency")] \
        == [4, "100 Gbps", 2, None]
    assert first["point"] == "topology.hosts=4,topology.bandwidth=100 Gbps,collective.chunks=2"


def test_a_swept_key_that_is_a_result_column_is_named_as_swept_and_lists_stay_json():
    data = sweep_scenario(grid={"topology": ["switch8", {"builder": "switch", "hosts": 4, "bandwidth": "1 GB/s",
                                                          "latency": "1 us"}]}, sizes=["1 MiB"])
    results = run(parse_scenario(data))
    assert list(results.columns[:4]) == ["scenario", "point", "sweep.topology", "topology"]
    assert results["sweep.topology"].tolist() == [
        "switch8", '{"bandwidth": "1 GB/s", "builder": "switch", "hosts": 4, "latency": "1 us"}']
    assert results["topology"].tolist()[1].startswith("switch(hosts=4")
    unswept = run(parse_scenario(json.loads(json.dumps(QUICKSTART))))
    assert list(unswept.columns) == list(RESULT_COLUMNS)


def test_resume_reuses_only_unchanged_finished_points(tmp_path):
    points = expand(parse_scenario(sweep_scenario(grid={"topology.hosts": [2, 3, 4, 5]})))
    calls = []
    run_sweep(points[:2], out_dir=tmp_path, on_point=calls.append)
    assert [p.index for p in calls] == [0, 1]
    calls.clear()
    results = run_sweep(points, out_dir=tmp_path, resume=True, on_point=calls.append)
    assert [p.index for p in calls] == [2, 3]
    assert list(results["ranks"].unique()) == [2, 3, 4, 5]
    changed = expand(parse_scenario(sweep_scenario(grid={"topology.hosts": [2, 3, 4, 5]}, sizes=["2 KiB"])))
    calls.clear()
    run_sweep(changed, out_dir=tmp_path, resume=True, on_point=calls.append)
    assert [p.index for p in calls] == [0, 1, 2, 3]


NVLS_SERVERS = sweep_scenario(grid={"topology": ["dgx_h100", "dgx_a100", "dgx_b200", "dgx1"]}, topology="dgx_h100",
                              collective={"op": "allreduce", "algorithms": ["ring", "nvls"]})
"""NVLS on DGX H100, DGX A100 and DGX-1 (no reducing NVSwitch: nvls cannot run) and DGX B200."""

NVLS_ERROR = ("collective.algorithms[1]: nvls on this topology: ranks [0, 1, 2, 3, 4, 5, 6, 7] have no "
              "reduce-capable switch")


@pytest.mark.parametrize("executor", ["local", "local-2", "dask"])
def test_an_algorithm_a_point_cannot_run_fails_alone(tmp_path, executor):
    """The new-user study: nvls failing on the A100 point took ring with it, so the A100 point vanished from
    results.csv and the plots. Now every point's ring runs and is written, each (point, nvls) that cannot run
    is one failure, and the error names the first and says what ran; local processes and Dask agree."""
    points = expand(parse_scenario(NVLS_SERVERS))
    options = {"local": {}, "local-2": {"workers": 2}, "dask": {"executor": "dask"}}[executor]
    with pytest.raises(SweepFailed) as raised:
        run_sweep(points, out_dir=tmp_path, **options)
    error = raised.value
    assert error.path == "sweep"
    assert error.message.startswith(f"point 1 (topology=dgx_a100): {NVLS_ERROR}")
    assert error.message.endswith(f"; 1 more failed; 4 of the 4 points ran, 2 of them in part, results in "
                                  f"{tmp_path / 'results.csv'}")
    assert error.summary == f"4 of the 4 points ran, 2 of them in part, results in {tmp_path / 'results.csv'}"
    assert error.failures[["index", "point", "algorithm", "entry", "sizes", "path"]].values.tolist() == [
        [1, "topology=dgx_a100", "nvls", "collective.algorithms[1]", "all", "collective.algorithms[1]"],
        [3, "topology=dgx1", "nvls", "collective.algorithms[1]", "all", "collective.algorithms[1]"]]
    assert error.failures["message"].str.startswith("nvls on this topology: ").all()
    ran = {point: sorted(set(rows["algorithm"])) for point, rows in error.results.groupby("point")}
    assert ran == {"topology=dgx_h100": ["nvls", "ring"], "topology=dgx_a100": ["ring"],
                   "topology=dgx_b200": ["nvls", "ring"], "topology=dgx1": ["ring"]}
    written = pd.read_csv(tmp_path / "results.csv", keep_default_na=False)
    assert written[["point", "algorithm"]].values.tolist() == error.results[["point", "algorithm"]].values.tolist()
    records = {path.name[:5]: json.loads(path.read_text()) for path in (tmp_path / "points").iterdir()}
    assert sorted(records) == ["00000", "00001", "00002", "00003"]
    assert [failure["index"] for failure in records["00001"]["failed"]] == [1] and "failed" not in records["00000"]
    assert error.at(source="s.yaml").failures is error.failures


def test_resume_runs_again_only_the_points_that_had_failures(tmp_path):
    points = expand(parse_scenario(NVLS_SERVERS))
    with pytest.raises(SweepFailed):
        run_sweep(points, out_dir=tmp_path)
    calls = []
    with pytest.raises(SweepFailed) as again:
        run_sweep(points, out_dir=tmp_path, resume=True, on_point=calls.append)
    assert [point.index for point in calls] == [1, 3]
    assert len(again.value.failures) == 2 and len(again.value.results) == 6 * len(QUICKSTART["sizes"])


def test_one_point_keeps_the_algorithms_that_ran_and_raises_its_own_error_when_none_did(tmp_path):
    points = expand(parse_scenario(NVLS_SERVERS))
    with pytest.raises(SweepFailed) as partly:
        run_sweep(points[1:2], out_dir=tmp_path / "partly")
    assert partly.value.path == "collective.algorithms[1]" and str(partly.value).startswith(NVLS_ERROR)
    assert partly.value.summary == f"the other algorithms ran, results in {tmp_path / 'partly' / 'results.csv'}"
    assert set(pd.read_csv(tmp_path / "partly" / "results.csv")["algorithm"]) == {"ring"}
    only_nvls = NVLS_SERVERS | {"collective": {"op": "allreduce", "algorithms": ["nvls"]}}
    points = expand(parse_scenario(only_nvls))
    with pytest.raises(ScenarioError, match=r"^collective.algorithms\[0\]: nvls on this topology") as alone:
        run_sweep(points[1:2], out_dir=tmp_path / "alone")
    assert alone.value.path == "collective.algorithms[0]"
    assert not (tmp_path / "alone" / "results.csv").exists(), "no empty table over what was there"
    with pytest.raises(SweepFailed, match=r"; 1 more failed; no point ran$"):
        run_sweep([points[1], points[3]])


def test_an_algorithm_failing_at_some_sizes_keeps_the_others(tmp_path, monkeypatch):
    """An algorithm that fails at one size (here the simulation refuses halving_doubling at 1 MiB) keeps its rows
    at the sizes it ran; the failure names the size."""
    from simnet import scenario
    from simnet.errors import ScheduleError

    simulate = scenario.simulate

    def refusing(network, schedule, **options):
        if schedule.algorithm == "halving_doubling" and schedule.size_bytes == 2**20:
            raise ScheduleError("refused at this size")
        return simulate(network, schedule, **options)

    monkeypatch.setattr(scenario, "simulate", refusing)
    data = sweep_scenario(grid={"topology.hosts": [4, 8]},
                          collective={"op": "allreduce", "algorithms": ["ring", "halving_doubling"]})
    with pytest.raises(SweepFailed) as raised:
        run_sweep(expand(parse_scenario(data)), out_dir=tmp_path)
    failures = raised.value.failures
    assert failures[["index", "algorithm", "sizes", "path", "message"]].values.tolist() == [
        [index, "halving_doubling", "1 MiB", "collective.algorithms[1]",
         "halving_doubling on this topology: refused at this size"] for index in (0, 1)]
    results = raised.value.results
    assert len(results) == 2 * (3 + 2)
    assert sorted(set(results.loc[results["algorithm"] == "halving_doubling", "size_bytes"])) == [1024, 64 * 2**20]


def test_a_point_that_fails_as_a_whole_is_one_failure(tmp_path, monkeypatch):
    """An error of the point itself (raised by point_tables, not recorded per algorithm) fails the point."""
    from simnet import sweep

    points = expand(parse_scenario(sweep_scenario(grid={"topology.hosts": [2, 3, 4]})))
    tables = sweep.point_tables

    def broken(point, force=False, on_phase=None):
        if point.index == 1:
            raise ScenarioError("cannot build", path="topology")
        return tables(point, force=force, on_phase=on_phase)

    monkeypatch.setattr(sweep, "point_tables", broken)
    with pytest.raises(SweepFailed) as raised:
        run_sweep(points, out_dir=tmp_path)
    assert raised.value.message.startswith("point 1 (topology.hosts=3): topology: cannot build; 2 of the 3 points ran")
    assert raised.value.failures[["index", "algorithm", "entry", "sizes"]].values.tolist() == [[1, "", "", "all"]]


@pytest.mark.parametrize(("changes", "grid", "failed"), [
    ({}, {"topology.hosts": [4, 1, 8]}, [1, "topology.hosts=1", "topology.hosts", "must be an integer ≥ 2, got 1"]),
    ({"network": {"stragglers": {5: 2.0}}}, {"topology.hosts": [8, 4, 6]},
     [1, "topology.hosts=4", "network.stragglers[5]", "no rank 5; ranks are 0 .. 3"]),
], ids=["topology", "network"])
@pytest.mark.parametrize("workers", [1, 2])
def test_a_point_whose_scenario_does_not_validate_fails_alone(tmp_path, changes, grid, failed, workers):
    """Study r26 F1: a sweep point whose topology cannot be built, or whose `network:` names a rank it does not
    have, stopped the whole sweep when it was loaded: no point ran and nothing was written. It is now kept with
    its error (Point.error), not run, and recorded as the point's failure; the other points run and are written."""
    data = sweep_scenario(grid=grid, sizes=["1 MiB"]) | changes
    points = expand(parse_scenario(data, source="s.yaml"), source="s.yaml")
    assert [point.error is None for point in points] == [True, False, True]
    assert points[1].scenario is None and (points[1].error.path, points[1].error.message) == tuple(failed[2:])
    with pytest.raises(SweepFailed) as raised:
        run_sweep(points, out_dir=tmp_path, workers=workers)
    error = raised.value
    index, label, path, message = failed
    assert str(error) == (f"s.yaml: sweep: point {index} ({label}): {path}: {message}; 2 of the 3 points ran, results in "
                          f"{tmp_path / 'results.csv'}")
    assert error.failures.values.tolist() == [[index, label, "", "", "all", path, message]]
    written = pd.read_csv(tmp_path / "results.csv")
    assert written["point"].unique().tolist() == [points[0].label, points[2].label]
    pd.testing.assert_frame_equal(error.results.reset_index(drop=True), run_sweep([points[0], points[2]]))
    recorded = json.loads((tmp_path / "manifest.json").read_text())["points"][1]
    assert recorded == {"index": 1, "label": label, "digest": points[1].digest, "error": f"{path}: {message}"}
    assert len(list((tmp_path / "points").glob("*.json"))) == 2


def test_a_sweep_of_which_no_point_validates_fails_as_a_whole():
    """Every point alike: the error is the scenario's, raised when it is loaded, naming the first point."""
    data = sweep_scenario(grid={"topology.hosts": [1, 0]})
    with pytest.raises(ScenarioError) as raised:
        expand(parse_scenario(data, source="s.yaml"), source="s.yaml")
    assert str(raised.value) == "s.yaml: sweep: point 0 (topology.hosts=1): topology.hosts: must be an integer ≥ 2, " \
                                "got 1"


def test_keyboard_interrupt_keeps_finished_points(tmp_path):
    points = expand(parse_scenario(sweep_scenario(grid={"topology.hosts": [2, 3, 4, 5]})))

    def interrupt_after_two(point):
        if point.index == 1:
            raise KeyboardInterrupt

    with pytest.raises(SweepInterrupted, match="after 2 of 4 points"):
        run_sweep(points, out_dir=tmp_path, on_point=interrupt_after_two)
    kept = pd.read_csv(tmp_path / "results.csv")
    assert sorted(kept["ranks"].unique()) == [2, 3]
    assert len(list((tmp_path / "points").glob("*.json"))) == 2


SLOW_SWEEP = {
    "name": "slow",
    "topology": {"builder": "switch", "hosts": 16, "bandwidth": "100 Gbps", "latency": "1 us"},
    "collective": {"algorithms": ["ring"], "chunks": 4},
    "sizes": ["64 MiB"],
    "sweep": {"grid": {"topology.latency": [f"{i} us" for i in range(1, 21)]}},
}


def simnet_command(*args) -> list[str]:
    return [sys.executable, "-m", "simnet.cli", *args]


def subprocess_env(seed: str = "0") -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT), PYTHONHASHSEED=seed)


def wait_for_points(directory: Path, count: int, process: subprocess.Popen, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while len(list(directory.glob("*.json"))) < count:
        assert process.poll() is None, "the sweep ended before it could be interrupted"
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_sigkill_then_resume_gives_the_uninterrupted_table(tmp_path):
    scenario = tmp_path / "slow.yaml"
    scenario.write_text(yaml.safe_dump(SLOW_SWEEP))
    full = tmp_path / "full"
    subprocess.run(simnet_command("run", str(scenario), "--out", str(full), "--format", "csv"),
                   check=True, env=subprocess_env(), capture_output=True)
    killed = tmp_path / "killed"
    process = subprocess.Popen(simnet_command("run", str(scenario), "--out", str(killed)),
                               env=subprocess_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_points(killed / "points", 5, process)
    process.send_signal(signal.SIGKILL)
    process.wait()
    finished = len(list((killed / "points").glob("*.json")))
    assert 5 <= finished < 20
    assert all(json.loads(path.read_text())["rows"] for path in (killed / "points").glob("*.json"))
    assert len(list((killed / "points").glob(".*"))) <= 1
    resumed = subprocess.run(simnet_command("run", str(scenario), "--out", str(killed), "--resume"),
                             env=subprocess_env(), capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert not list((killed / "points").glob(".*"))
    assert (killed / "results.csv").read_bytes() == (full / "results.csv").read_bytes()
    assert (killed / "results.json").read_bytes() == (full / "results.json").read_bytes()


def test_sigint_stops_cleanly_and_says_how_to_resume(tmp_path):
    scenario = tmp_path / "slow.yaml"
    scenario.write_text(yaml.safe_dump(SLOW_SWEEP))
    out = tmp_path / "out"
    process = subprocess.Popen(simnet_command("run", str(scenario), "--out", str(out)), env=subprocess_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_points(out / "points", 2, process)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130
    assert "Traceback" not in err
    assert f"resume with: simnet run {scenario} --out {out} --resume" in err
    finished = len(list((out / "points").glob("*.json")))
    assert len(pd.read_csv(out / "results.csv")) == finished


def test_outputs_are_byte_identical_across_processes_and_hash_seeds(tmp_path):
    outputs = []
    for seed in ("1", "987654"):
        out = tmp_path / seed
        subprocess.run(simnet_command("run", str(ROOT / "scenarios" / "ring_chunks_sweep.yaml"), "--out", str(out),
                                      "--workers", "2"), check=True, env=subprocess_env(seed), capture_output=True)
        outputs.append([(out / name).read_bytes() for name in ("results.csv", "results.json", "manifest.json")])
    assert outputs[0] == outputs[1]


def test_run_sweep_names_each_phase_of_a_point_before_it_starts():
    """``on_phase`` hears of the network, NCCL's choice, and each run's schedule and simulation before it starts
    (a 4096-GPU point spent minutes in one of them with nothing on the terminal)."""
    heard = []
    run_sweep(expand(parse_scenario(QUICKSTART | {"sizes": ["1 KiB", "1 MiB"]})),
              on_phase=lambda point, text: heard.append((point.index, text)))
    assert heard == [(0, "building the network"), (0, "NCCL's own choice on 8 ranks"),
                     (0, "ring at 1 KiB (1 of 2): building the schedule"),
                     (0, "ring at 1 KiB (1 of 2): simulating 112 transfers"),
                     (0, "ring at 1 MiB (2 of 2): building the schedule"),
                     (0, "ring at 1 MiB (2 of 2): simulating 112 transfers")]
