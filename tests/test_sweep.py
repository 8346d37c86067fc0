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

from simnet.errors import ScenarioError, SweepFailed
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
        ({"grid": {"topology.hosts": [4, 1]}}, "sweep: point 1 (topology.hosts=1): topology.hosts: must be an integer ≥ 2, got 1"),
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


@pytest.mark.parametrize("workers", [1, 2])
def test_a_point_the_input_makes_fail_leaves_the_others_run_and_written(tmp_path, workers):
    """NVLS on DGX H100, DGX A100 (no reducing NVSwitch) and DGX B200: the A100 point fails, the others run and
    are written; the error names the point as a point's scenario errors are, and where the results are."""
    data = sweep_scenario(grid={"topology": ["dgx_h100", "dgx_a100", "dgx_b200", "dgx1"]}, topology="dgx_h100",
                          collective={"op": "allreduce", "algorithms": ["ring", "nvls"]})
    points = expand(parse_scenario(data))
    with pytest.raises(SweepFailed) as raised:
        run_sweep(points, out_dir=tmp_path, workers=workers)
    assert raised.value.path == "sweep"
    assert sorted(set(raised.value.results["point"])) == ["topology=dgx_b200", "topology=dgx_h100"]
    assert raised.value.message.startswith("point 1 (topology=dgx_a100): collective.algorithms[1]: nvls on this "
                                           "topology: ranks [0, 1, 2, 3, 4, 5, 6, 7] have no reduce-capable switch")
    assert raised.value.message.endswith(f"; 1 more of the 4 points failed; 2 of the 4 points ran, results in "
                                         f"{tmp_path / 'results.csv'}")
    written = pd.read_csv(tmp_path / "results.csv", keep_default_na=False)
    assert sorted(set(written["point"])) == ["topology=dgx_b200", "topology=dgx_h100"]
    assert len(list((tmp_path / "points").iterdir())) == 2
    with pytest.raises(ScenarioError, match=r"^collective.algorithms\[1\]: nvls on this topology") as alone:
        run_sweep(points[1:2], out_dir=tmp_path / "alone")
    assert alone.value.path == "collective.algorithms[1]"
    assert not (tmp_path / "alone" / "results.csv").exists(), "no empty table over what was there"
    assert raised.value.at(source="s.yaml").results is raised.value.results
    with pytest.raises(SweepFailed, match=r"; 1 more of the 2 points failed; no point ran$"):
        run_sweep([points[1], points[3]])


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
