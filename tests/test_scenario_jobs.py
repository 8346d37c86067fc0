"""Scenarios with jobs and with all-to-all-v matrices: parsing, placement, groups, key paths of errors, sweeps."""

import copy
import json

import numpy as np
import pandas as pd
import pytest

from simnet.errors import ScenarioError
from simnet.scenario import expand, parse_matrix, parse_scenario, plan_jobs, run, run_jobs_point
from simnet.sweep import run_sweep
from simnet.traffic import TrafficMatrix

CLUSTER = {"builder": "cluster", "node": "dgx_a100", "nodes": 2, "fabric": "switch",
           "fabric_params": {"bandwidth": "25 GB/s", "latency": "1 us"}}
BASE = {
    "name": "jobs",
    "topology": CLUSTER,
    "jobs": {
        "train": {"ranks": 8, "groups": {"tp": 4, "dp": {"ranks": "rest", "size": "2 MiB"}},
                  "collective": {"op": "allreduce", "algorithm": "ring", "size": "1 MiB"}, "repeat": 2},
        "moe": {"ranks": 8, "placement": "strided",
                "collective": {"op": "alltoallv", "algorithm": "hierarchical", "size": "512 KiB",
                               "matrix": {"kind": "zipf", "exponent": 1.2, "seed": 3}}},
        "noise": {"flows": {"pattern": "permutation", "load": "20%", "size": "256 KiB"}, "start": "10 us"},
    },
}


def with_changes(path: str, value, base=BASE) -> dict:
    data = copy.deepcopy(base)
    parts = path.split(".")
    target = data
    for part in parts[:-1]:
        target = target.setdefault(part, {})
    if value is None:
        del target[parts[-1]]
    else:
        target[parts[-1]] = value
    return data


def test_jobs_are_placed_in_order_and_groups_become_jobs():
    scenario = parse_scenario(BASE)
    plans = {plan.name: plan for plan in plan_jobs(scenario, scenario.built_network())}
    assert list(plans) == ["train.tp", "train.dp", "moe", "noise"]
    assert plans["train.tp"].communicators == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert plans["train.dp"].communicators == ((0, 4), (1, 5), (2, 6), (3, 7))
    assert plans["train.dp"].size_bytes == 2 * 2**20 and plans["train.tp"].size_bytes == 2**20
    assert plans["moe"].communicators == (tuple(range(8, 16)),)
    assert plans["moe"].params["gpus_per_node"] == 8 and isinstance(plans["moe"].params["matrix"], TrafficMatrix)
    assert plans["noise"].communicators == (tuple(range(16)),) and plans["noise"].start_s == pytest.approx(1e-5)
    assert plans["noise"].flows.load == pytest.approx(0.2)


def test_a_jobs_point_runs_and_names_its_scenario_and_point():
    scenario = parse_scenario(BASE)
    (point,) = expand(scenario)
    result = run_jobs_point(point)
    assert list(result.jobs["job"]) == ["train.tp", "train.dp", "moe", "noise"]
    assert set(result.jobs["scenario"]) == {"jobs"} and (result.jobs["slowdown"] >= 1 - 1e-12).all()
    assert list(result.interference.columns[:2]) == ["point", "job"]
    assert set(result.timeline["job"]) == {"train.tp", "train.dp", "moe", "noise"}
    assert run(scenario)["time_s"].tolist() == result.jobs["time_s"].tolist()


def test_a_sweep_over_placement_and_load_writes_every_table(tmp_path):
    data = with_changes("sweep", {"grid": {"jobs.moe.placement": ["contiguous", {"kind": "random", "seed": 2}],
                                           "jobs.noise.flows.load": ["10%", "50%"]}}, with_changes("jobs.moe.ranks", 4))
    points = expand(parse_scenario(data))
    assert len(points) == 4
    results = run_sweep(points, out_dir=tmp_path)
    assert len(results) == 16 and set(results["point"]) == {p.label for p in points}
    interference = pd.read_csv(tmp_path / "interference.csv", keep_default_na=False)
    timeline = pd.read_csv(tmp_path / "timeline.csv", keep_default_na=False)
    assert set(timeline["point"]) == {p.label for p in points} and set(interference["point"]) <= set(timeline["point"])
    again = run_sweep(points, out_dir=tmp_path, resume=True)
    assert again.equals(results)
    assert pd.read_csv(tmp_path / "timeline.csv", keep_default_na=False).equals(timeline)


@pytest.mark.parametrize(("path", "value", "message"), [
    ("jobs.train.collective", None, "jobs.train.collective: missing; give a collective or flows"),
    ("jobs.noise.collective", {"op": "allreduce", "algorithm": "ring", "size": "1 MiB"},
     "jobs.noise.collective: give a collective or flows, not both"),
    ("collective", {"op": "allreduce", "algorithms": ["ring"]}, "jobs: a scenario runs either one collective"),
    ("sizes", ["1 MiB"], "sizes: every job gives its own size; remove sizes"),
    ("jobs", {}, "jobs: must list at least one job"),
    ("jobs.moe.placement", "scattered", "jobs.moe.placement.kind: must be one of"),
    ("jobs.moe.ranks", 9, "jobs.moe.ranks: asks for 9 GPUs but 8 of 16 are free"),
    ("jobs.moe.ranks", 1, "jobs.moe.ranks: a job needs at least 2 GPUs, got 1"),
    ("jobs.moe.ranks", [3, 99], "jobs.moe.ranks: rank 99 is not among the network's 16 GPUs"),
    ("jobs.train.groups", {"tp": 3, "dp": "rest"}, "jobs.train.groups.tp: group sizes multiply to 3"),
    ("jobs.train.collective.algorithm", "direct", "jobs.train.collective.algorithm: algorithm 'direct' computes "
                                                  "alltoall, alltoallv, not allreduce"),
    ("jobs.train.collective.chunk", 2, "jobs.train.collective.chunk: unknown parameter of algorithm 'ring' 'chunk'; "
                                       "did you mean 'chunks'?"),
    ("jobs.moe.collective.matrix", None, "jobs.moe.collective.matrix: missing; alltoallv needs a traffic matrix"),
    ("jobs.moe.collective.matrix", {"kind": "zipff"}, "jobs.moe.collective.matrix.kind: unknown matrix kind 'zipff'; "
                                                      "did you mean 'zipf'?"),
    ("jobs.moe.collective.matrix", {"kind": "zipf", "exponent": -1},
     "jobs.moe.collective.matrix.exponent: must be a finite number > 0, got -1"),
    ("jobs.moe.collective.matrix", {"kind": "uniform", "seed": 1},
     "jobs.moe.collective.matrix.seed: unknown key of a uniform matrix 'seed'"),
    ("jobs.moe.collective.op", "alltoall", "jobs.moe.collective.matrix: a traffic matrix makes the collective an "
                                           "alltoallv, not alltoall"),
    ("jobs.noise.flows.load", "150%", "jobs.noise.flows.load: "),
    ("jobs.noise.flows.pattern", "shift", "jobs.noise.flows.pattern: must be one of"),
    ("jobs.noise.groups", {"a": 2, "b": "rest"}, "jobs.noise.groups: background flows have no communicator groups"),
    ("jobs.train.colective", 1, "jobs.train.colective: unknown key; did you mean 'collective'?"),
    ("jobs.train.repeat", 0, "jobs.train.repeat: must be ≥ 1, got 0"),
    ("jobs.train.collective.algorithm", "sparse_ring",
     "jobs.train.collective.algorithm: 'sparse_ring' is a sparse all-reduce and needs a sparse payload in place of "
     "size (payload: {kind: sparse, dimension: 16M, density: 1/128}: docs/sparse.md)"),
    ("jobs.train.groups.dp.algorithm", "gtopk", "jobs.train.groups.dp.algorithm: 'gtopk' is a sparse all-reduce and "
                                                "needs a sparse payload"),
    ("jobs.train.collective.payload", {"kind": "sparse", "dimension": "1M", "density": "1/128"},
     "jobs.train.collective.size: a sparse payload fixes the size (dimension * value_bytes); remove size"),
    ("payload", {"kind": "sparse", "dimension": "1M"},
     "payload: every job gives its own payload; move it into the job's collective (jobs.<name>.collective.payload, "
     "in place of size)"),
    ("jobs.train.collective.size", None, "jobs.train.collective.size: missing; give the size of the collective (or a "
                                         "sparse payload, which fixes it)"),
])
def test_job_errors_name_the_key_path(path, value, message):
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(with_changes(path, value), source="s.yaml")
    assert str(raised.value).startswith(f"s.yaml: {message}")


def test_ranks_all_with_no_gpu_left_says_earlier_jobs_took_them_and_how_to_share():
    """Study r25 F7: a second `ranks: all` job was told it 'asks for 0 GPUs but 0 of 4 are free'."""
    data = with_changes("jobs.moe.ranks", "all", with_changes("jobs.train.ranks", 16))
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(data, source="s.yaml")
    assert str(raised.value) == ("s.yaml: jobs.moe.ranks: ranks: all, but earlier jobs took all 16 GPUs; give an "
                                 "explicit list of ranks to share GPUs with them (ranks: [0, 1, ...])")


def test_build_errors_of_a_group_point_at_its_override():
    data = with_changes("jobs.train.groups.dp", {"ranks": "rest", "chunks": 0})
    (point,) = expand(parse_scenario(data))
    with pytest.raises(ScenarioError) as raised:
        run_jobs_point(point)
    assert str(raised.value).startswith("jobs.train.groups.dp.chunks: must be an integer ≥ 1, got 0")


@pytest.mark.parametrize(("job", "path", "prefix"), [
    ({"ranks": 32, "groups": {"tp": 8, "dp": "rest"},
      "collective": {"op": "allreduce", "algorithm": "nvls", "size": "1 MiB"}},
     "jobs.a.groups.dp", "nvls (from jobs.a.collective.algorithm): ranks [0, 8, 16, 24] have"),
    ({"ranks": 32, "groups": {"tp": 8, "dp": {"ranks": "rest", "algorithm": "nvls"}},
      "collective": {"op": "allreduce", "algorithm": "ring", "size": "1 MiB"}},
     "jobs.a.groups.dp.algorithm", "nvls: ranks [0, 8, 16, 24] have"),
    ({"ranks": 16, "collective": {"op": "allreduce", "algorithm": "nvls", "size": "1 MiB"}},
     "jobs.a.collective.algorithm", "nvls: ranks [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] have"),
])
def test_an_in_network_reduction_without_a_common_switch_names_its_job_and_level(job, path, prefix):
    """Study r22 F8: NVLS across servers named the key path ``jobs.switches``, which does not exist."""
    data = {"name": "j", "topology": {"builder": "calibrated_cluster", "kind": "dgx_h100", "nodes": 4},
            "jobs": {"a": job}}
    (point,) = expand(parse_scenario(data))
    with pytest.raises(ScenarioError) as raised:
        run_jobs_point(point)
    assert raised.value.path == path
    assert raised.value.message.startswith(prefix)
    assert raised.value.message.endswith(" no reduce-capable switch in common (a switch with reduce: true that "
                                         "reaches all of them); in-network reductions need one")


def test_a_job_whose_gpus_break_the_hierarchy_must_say_its_gpus_per_node():
    data = with_changes("jobs.moe.ranks", [0, 1, 2, 8])
    with pytest.raises(ScenarioError, match="jobs.moe.collective.algorithm: cannot derive gpus_per_node"):
        parse_scenario(data)
    parse_scenario(with_changes("jobs.moe.collective.gpus_per_node", 1, data))


def test_matrices_parse_from_kinds_rows_and_npy_files(tmp_path):
    assert parse_matrix("uniform") == TrafficMatrix("uniform")
    assert parse_matrix({"kind": "hotspot", "fraction": "80%", "hotspots": 2}) == TrafficMatrix(
        "hotspot", fraction=0.8, hotspots=2)
    rows = [[0, 1], [2, 0]]
    assert parse_matrix(rows) == TrafficMatrix("explicit", weights=np.array(rows, dtype=float))
    path = tmp_path / "traffic.npy"
    np.save(path, np.array(rows, dtype=float))
    loaded = parse_matrix({"file": str(path)})
    assert np.array_equal(loaded.weights, rows) and loaded.describe()["source"] == str(path)
    for bad, where in (({"file": str(tmp_path / "none.npy")}, "matrix.file"), ([[1, "a"], [1, 1]], "matrix.weights"),
                       ({"file": str(path), "kind": "zipf"}, "matrix.kind"), (3, "matrix")):
        with pytest.raises(ScenarioError) as raised:
            parse_matrix(bad)
        assert raised.value.path == where


def test_a_jobs_matrix_file_starts_at_the_scenario_files_directory(tmp_path, monkeypatch):
    folder = tmp_path / "study"
    folder.mkdir()
    weights = np.ones((4, 4)) - np.eye(4)
    np.save(folder / "traffic.npy", weights)
    job = {"ranks": 4, "collective": {"op": "alltoallv", "algorithm": "direct", "size": "1 MiB",
                                      "matrix": {"file": "traffic.npy"}}}
    data = {"name": "a2av", "topology": CLUSTER, "jobs": {"moe": job}}
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScenarioError, match=r"^jobs.moe.collective.matrix.file: no file 'traffic.npy'$"):
        parse_scenario(data)
    scenario = parse_scenario(data, base_dir=folder)
    plan, = plan_jobs(scenario, scenario.built_network())
    assert np.array_equal(plan.params["matrix"].weights, weights)


def test_an_alltoallv_scenario_runs_each_algorithm_with_its_matrix():
    data = {"name": "a2av", "topology": CLUSTER, "sizes": ["1 MiB"],
            "collective": {"op": "alltoallv", "algorithms": ["direct", {"name": "bruck", "matrix": "uniform"}],
                           "matrix": {"kind": "hotspot", "hotspots": 1, "fraction": 0.5, "seed": 4}}}
    results = run(parse_scenario(data))
    params = [json.loads(p) for p in results["params"]]
    assert params[0]["matrix"] == {"kind": "hotspot", "hotspots": 1, "fraction": 0.5, "seed": 4}
    assert params[1]["matrix"] == {"kind": "uniform"} and set(results["op"]) == {"alltoallv"}
    with pytest.raises(ScenarioError, match="collective.matrix: missing; alltoallv needs a traffic matrix"):
        parse_scenario({**data, "collective": {"op": "alltoallv", "algorithms": ["direct"]}})


def test_nccls_choice_in_a_job_is_made_for_each_communicator_of_its_gpus():
    """FSDP on 4 DGX H100: NCCL's model of an 8-GPU server picks Ring for the all-gather, and its model of a
    data-parallel group of one GPU per server picks PAT for the 1 MiB reduce-scatter (``nNodes == nRanks``)."""
    from simnet.analysis import display_jobs
    from simnet.models.nccl import choose, network_tuning

    scenario = parse_scenario({
        "name": "fsdp",
        "topology": {"builder": "cluster", "node": "dgx_h100", "nodes": 4, "fabric": "leaf_spine",
                     "fabric_params": {"leaves": 8, "spines": 4, "hosts_per_leaf": 4, "bandwidth": "50 GB/s",
                                       "latency": "1 us"}},
        "jobs": {"train": {"ranks": "all",
                           "groups": {"tp": 8, "dp": {"ranks": "rest", "op": "reduce_scatter",
                                                      "algorithm": "nccl_reduce_scatter", "size": "1 MiB"}},
                           "collective": {"op": "all_gather", "algorithm": "nccl_all_gather", "size": "16 MiB"}}},
    })
    network = scenario.built_network()
    tp, dp = plan_jobs(scenario, network)
    assert dp.communicators[0] == (0, 8, 16, 24)
    assert (dp.params["nccl_algorithm"], dp.params["gpus_per_node"]) == ("pat", 1)
    assert dp.params["nccl_algorithm"] == choose(network_tuning(network, ranks=(0, 8, 16, 24)),
                                                  "reduce_scatter", 1 << 20).algorithm
    assert (tp.params["nccl_algorithm"], tp.params["gpus_per_node"]) == ("ring", 8)
    assert choose(network_tuning(network), "reduce_scatter", 1 << 20).algorithm != "pat"
    shown = display_jobs(run_jobs_point(expand(scenario)[0]).jobs)
    assert list(shown["algorithm"]) == ["nccl_all_gather (ring/ll128 x24)", "nccl_reduce_scatter (pat/simple x16)"]


def test_a_job_no_slower_than_alone_names_no_job_that_slowed_it():
    from pathlib import Path

    from simnet.scenario import load_scenario

    results = run(load_scenario(Path(__file__).resolve().parents[1] / "scenarios" / "jobs_tenants.yaml"))
    not_slowed = results["slowdown"] <= 1
    assert not_slowed.any() and (results.loc[not_slowed, "shared_s"] > 0).any()
    assert (results.loc[not_slowed, "slowed_by"].fillna("") == "").all()
    assert (results.loc[~not_slowed & (results["shared_s"] > 0), "slowed_by"] != "").all()
    assert ((results["shared_link"].fillna("") != "") == (results["shared_s"] > 0)).all()


FULL_MACHINE = {
    "name": "full",
    "topology": {"builder": "fat_tree", "k": 4, "bandwidth": "100 Gbps", "latency": "1 us"},
    "network": {"routing": "dmodk"},
    "jobs": {"hd": {"ranks": 16, "placement": {"kind": "random", "seed": 1},
                    "collective": {"op": "allreduce", "algorithm": "halving_doubling", "size": "1 MiB"}}},
}


@pytest.mark.parametrize("ranks", [16, None])
def test_a_random_placement_of_every_free_gpu_is_refused_as_its_seed_changes_nothing(ranks):
    data = with_changes("jobs.hd.ranks", ranks, FULL_MACHINE)
    with pytest.raises(ScenarioError, match="random placement of all 16 free GPUs is the contiguous one") as error:
        parse_scenario(data)
    assert error.value.path == "jobs.hd.placement"


@pytest.mark.parametrize("algorithm", ["nccl_ring", "collnet_direct"])
def test_nccls_schedules_refuse_ranks_not_laid_out_server_by_server(algorithm):
    """Review r22: a shuffled placement on 2 DGX H100 built NCCL's ring as if its 16 ranks were one server (8x
    slower than contiguous), and CollNet said they were one server; NCCL lays its rings out by the topology."""
    data = {"name": "js", "topology": {"builder": "calibrated_cluster", "kind": "dgx_h100", "nodes": 2, "sharp": True},
            "jobs": {"a": {"placement": {"kind": "shuffled", "seed": 1},
                           "collective": {"op": "allreduce", "algorithm": algorithm, "size": "64 MiB"}}}}
    with pytest.raises(ScenarioError, match="take the ranks server by server.*16 ranks on 2 servers are not") as error:
        [run_jobs_point(point) for point in expand(parse_scenario(data))]
    assert error.value.path == "jobs.a.collective.algorithm"
    data["jobs"]["a"]["placement"] = "contiguous"
    assert [run_jobs_point(point) for point in expand(parse_scenario(data))]


def test_a_sweep_over_the_seed_of_a_shuffled_full_machine_placement_permutes_the_ranks():
    data = with_changes("jobs.hd.placement", {"kind": "shuffled", "seed": 1}, FULL_MACHINE)
    data["sweep"] = {"grid": {"jobs.hd.placement.seed": [1, 2, 3]}}
    points = expand(parse_scenario(data))
    orders = [plan_jobs(p.scenario, p.scenario.built_network())[0].communicators[0] for p in points]
    assert len(set(orders)) == 3 and all(sorted(order) == list(range(16)) for order in orders)
    contiguous = run(parse_scenario(with_changes("jobs.hd.placement", "contiguous", FULL_MACHINE)))["time_s"].iloc[0]
    assert (run_sweep(points)["time_s"] > contiguous).any()


def test_an_all_gather_jobs_size_is_the_whole_output_buffer_as_the_docs_say():
    """Study r25 F8: docs/concurrency.md called a job's size 'per rank'; an all-gather's is the whole output."""
    from pathlib import Path

    data = {"name": "ag", "topology": {"builder": "switch", "hosts": 4, "bandwidth": "1 GB/s", "latency": "1 us"},
            "jobs": {"ag": {"collective": {"op": "all_gather", "algorithm": "all_gather", "size": "4 MB"}}}}
    (row,) = run(parse_scenario(data)).to_dict(orient="records")
    assert row["time_s"] == pytest.approx(3 * (2e-6 + 1e6 / 1e9), rel=1e-9)
    text = (Path(__file__).resolve().parents[1] / "docs" / "concurrency.md").read_text()
    assert "whole *output* buffer for `all_gather`" in text and "(per rank; for all-to-all" not in text


SPARSE = {"kind": "sparse", "dimension": "256K", "density": "1/64", "seed": 1}
"""A 256K-entry gradient (1.024 MB dense) at density 1/64: big enough that the ring's hops fill in."""


def sparse_jobs(collective: dict, **more) -> dict:
    """A scenario whose job ``grad`` runs `collective` on all 16 GPUs of :data:`CLUSTER`, with jobs `more` after it."""
    return {"name": "sparse", "topology": CLUSTER, "jobs": {"grad": {"ranks": "all", "collective": collective}, **more}}


def plain_time_s(listed: dict, payload: dict = SPARSE) -> float:
    """The simulated time of one algorithm of a plain scenario on :data:`CLUSTER` with a top-level payload."""
    rows = run(parse_scenario({"name": "plain", "topology": CLUSTER, "payload": payload,
                               "collective": {"op": "allreduce", "algorithms": [listed]}}))
    (time_s,) = rows["sim_time_s"]
    return time_s


@pytest.mark.parametrize("listed", [{"name": "sparse_ring"}, {"name": "sparse_ring_ring", "gpus_per_node": 8},
                                    {"name": "ssar_recursive_doubling"}, {"name": "gtopk"}, {"name": "ring"}])
def test_a_job_with_a_payload_alone_takes_exactly_the_time_of_the_same_plain_scenario(listed):
    """Study r25 F2: a job could not run a sparse all-reduce. A job's payload is the top-level one: sparse algorithms
    get it, dense ones run at its dense size, and alone each takes what the plain scenario simulates, exactly."""
    collective = {"op": "allreduce", "algorithm": listed["name"], "payload": SPARSE,
                  **{key: value for key, value in listed.items() if key != "name"}}
    (point,) = expand(parse_scenario(sparse_jobs(collective)))
    (job,) = run_jobs_point(point).jobs.to_dict("records")
    assert job["time_s"] == job["alone_s"] == plain_time_s(listed)
    assert job["size_bytes"] == 256_000 * 4 and job["slowdown"] == 1
    sparse = listed["name"] != "ring"
    assert np.isnan(job["busbw_GBps"]) == sparse and job["algbw_GBps"] == pytest.approx(1.024e6 / job["time_s"] / 1e9)
    assert ('"payload": {' in job["params"]) == sparse


def test_a_sparse_job_beside_tensor_parallel_traffic_is_slower_than_alone_and_the_report_names_the_links():
    collective = {"op": "allreduce", "algorithm": "sparse_ring_ring", "gpus_per_node": 8, "payload": SPARSE}
    tp = {"ranks": list(range(7, -1, -1)), "collective": {"op": "allreduce", "algorithm": "ring", "size": "16 MiB"}}
    (point,) = expand(parse_scenario(sparse_jobs(collective, tp=tp)))
    result = run_jobs_point(point)
    jobs = result.jobs.set_index("job")
    assert jobs.loc["grad", "alone_s"] == plain_time_s({"name": "sparse_ring_ring", "gpus_per_node": 8})
    assert jobs.loc["grad", "time_s"] > jobs.loc["grad", "alone_s"]
    assert jobs.loc["grad", "slowed_by"] == "tp" and jobs.loc["grad", "shared_s"] > 0
    mine = result.interference[result.interference["job"] == "grad"]
    assert set(mine["other"]) == {"tp"} and (mine["shared_s"] <= mine["held_s"] + 1e-15).all()
    assert all("nvswitch" in src + dst for src, dst in zip(mine["src"], mine["dst"]))


def test_a_level_of_groups_may_give_a_payload_in_place_of_the_jobs_size():
    data = with_changes("jobs.train.groups.dp", {"ranks": "rest", "algorithm": "sparse_ring", "payload": SPARSE})
    scenario = parse_scenario(data)
    plans = {plan.name: plan for plan in plan_jobs(scenario, scenario.built_network())}
    assert plans["train.tp"].size_bytes == 2**20 and "payload" not in plans["train.tp"].params
    assert plans["train.dp"].size_bytes == 1_024_000 and plans["train.dp"].params["payload"].density == 1 / 64
    result = run_jobs_point(expand(scenario)[0])
    assert list(result.jobs["job"]) == ["train.tp", "train.dp", "moe", "noise"]


def test_a_sweep_varies_a_jobs_payload_and_a_denser_one_takes_longer():
    collective = {"op": "allreduce", "algorithm": "sparse_ring", "payload": SPARSE}
    data = sparse_jobs(collective) | {"sweep": {"grid": {"jobs.grad.collective.payload.density": ["1/256", "1/16"]}}}
    sparse, denser = (run_jobs_point(point).jobs["time_s"].item() for point in expand(parse_scenario(data)))
    assert sparse == plain_time_s({"name": "sparse_ring"}, SPARSE | {"density": "1/256"}) and denser > sparse


@pytest.mark.parametrize(("path", "value", "message"), [
    ("jobs.grad.collective.payload.density", ["1/16", "1/128"],
     "jobs.grad.collective.payload.density: a job runs one payload, got 2 values; give one, and sweep "
     "jobs.grad.collective.payload.density to compare several"),
    ("jobs.grad.collective.payload.densty", "1/16",
     "jobs.grad.collective.payload.densty: unknown key; did you mean 'density'?"),
    ("jobs.grad.collective.payload.kind", "dense", "jobs.grad.collective.payload.kind: must be one of 'sparse', got "
                                                   "'dense'"),
    ("jobs.grad.collective.payload.density", "2", "jobs.grad.collective.payload.density: must be ≤ 1, got '2'"),
    ("jobs.grad.collective.payload.dimension", None, "jobs.grad.collective.payload.dimension: missing"),
    ("jobs.grad.collective.payload", "16M", "jobs.grad.collective.payload: expected a sparse payload such as {kind: "
                                            "sparse, dimension: 16M, density: 1/128}, got '16M'"),
    ("jobs.grad.collective.size", "1 MiB", "jobs.grad.collective.size: a sparse payload fixes the size "
                                           "(dimension * value_bytes); remove size"),
    ("jobs.grad.collective.payload", None, "jobs.grad.collective.algorithm: 'sparse_ring' is a sparse all-reduce and "
                                           "needs a sparse payload"),
])
def test_a_bad_job_payload_is_one_line_naming_its_key_path(path, value, message):
    base = sparse_jobs({"op": "allreduce", "algorithm": "sparse_ring", "payload": SPARSE})
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(with_changes(path, value, base), source="s.yaml")
    assert str(raised.value).startswith(f"s.yaml: {message}") and "\n" not in str(raised.value)


def test_the_sparse_jobs_example_of_docs_concurrency_is_the_shipped_scenario():
    """The YAML that docs/concurrency.md shows for a sparse job beside TP is scenarios/jobs_sparse_tp.yaml's."""
    import re
    from pathlib import Path

    from simnet.scenario import read_yaml
    from simnet.yamlio import safe_load

    root = Path(__file__).resolve().parents[1]
    (block,) = [b for b in re.findall(r"```yaml\n(.*?)```", (root / "docs" / "concurrency.md").read_text(), re.S)
                if "payload" in b]
    shown = safe_load(block)
    shipped = read_yaml(root / "scenarios" / "jobs_sparse_tp.yaml")
    assert shown == {key: shipped[key] for key in shown}
    parse_scenario(shipped | {"name": "doc"})
