"""The memory guard: a run estimated not to fit is refused, naming the parameters that shrink it."""

from __future__ import annotations

import pytest

from simnet import guards
from simnet.errors import SimnetError
from simnet.scenario import expand, parse_scenario, run, run_jobs_point

SMALL = {"name": "g", "topology": {"builder": "calibrated_cluster", "kind": "dgx_h100", "nodes": 2},
         "sizes": ["1 MiB"]}


@pytest.fixture
def little_memory(monkeypatch):
    """A machine with 1 MB available: every run but the tiniest is refused."""
    monkeypatch.setattr(guards, "available_memory_bytes", lambda: 10**6)


def test_the_refusal_offers_the_parameters_that_shrink_the_run_before_force(little_memory):
    with pytest.raises(guards.ResourceError) as error:
        guards.check_fits("x", 10**9, force=False, lower=["max_pieces (64 now)", "channels (16 now)"])
    assert error.value.message == ("x needs an estimated 1 GB of memory, more than 80% of the 1 MB available; lower "
                                   "max_pieces (64 now) or channels (16 now), or pass --force (force=True) to run it "
                                   "anyway")
    guards.check_fits("x", 10**9, force=True)


@pytest.mark.parametrize(("algorithm", "offered"), [
    ({"name": "nccl_ring", "protocol": "simple", "channels": 16}, "lower channels (16 now), "),
    ({"name": "nccl_ring", "protocol": "simple", "channels": 2, "size": "64 MiB"},
     "lower max_pieces (64 now), "),
    ({"name": "nccl_tree", "protocol": "simple", "size": "1 GiB"}, "lower channels (16 now) or max_pieces (256 now), "),
    ({"name": "nvls", "size": "1 GiB"}, "lower max_pieces (64 now), "),
    ({"name": "ring", "chunks": 4}, "lower chunks (4 now), "),
])
def test_a_collective_too_large_names_what_its_algorithm_takes_to_shrink(little_memory, algorithm, offered):
    """Study r22 F2: the refusal said only --force though max_pieces: 4 made the run fit. Study r23: it offered
    max_pieces where the sizes cut no block into more than one piece, so lowering it changed nothing."""
    if isinstance(algorithm, dict) and "size" in algorithm:
        algorithm = dict(algorithm)
        data = SMALL | {"sizes": [algorithm.pop("size")]}
    else:
        data = SMALL
    data = data | {"collective": {"op": "allreduce", "algorithms": [algorithm]}}
    with pytest.raises(SimnetError) as error:
        run(parse_scenario(data))
    assert error.value.path == "collective"
    assert f" available; {offered}or pass --force (force=True) to run it anyway" in error.value.message


def test_a_ring_of_one_chunk_offers_only_force(little_memory):
    data = {**SMALL, "topology": {"builder": "calibrated_cluster", "kind": "dgx_h100", "nodes": 4},
            "collective": {"op": "allreduce", "algorithms": ["ring"]}}
    with pytest.raises(SimnetError, match=r" available; pass --force \(force=True\)"):
        run(parse_scenario(data))


def test_a_job_too_large_names_its_collectives_parameters_and_repeat(little_memory):
    data = {"name": "j", "topology": SMALL["topology"],
            "jobs": {"a": {"ranks": 16, "repeat": 3,
                           "collective": {"op": "allreduce", "algorithm": "nccl_ring", "protocol": "simple",
                                          "size": "1 MiB"}}}}
    [point] = expand(parse_scenario(data))
    with pytest.raises(SimnetError) as error:
        run_jobs_point(point)
    assert error.value.path == "jobs.a"
    assert "lower channels (16 now) or repeat (3 now), or pass --force" in error.value.message


def test_the_estimate_counts_the_channels_nccl_launches_at_each_size(monkeypatch):
    """nccl_ring given no channels was estimated with the builder's 2, though NCCL's launch on 2 DGX H100 is more
    (16, so 4x the blocks at 64 MiB): memory between the two estimates let a run several times the estimate
    start. Each size is now checked with the parameters resolved for it."""
    from simnet.algorithms import ALGORITHMS

    data = SMALL | {"sizes": ["64 MiB"],
                    "collective": {"op": "allreduce", "algorithms": [{"name": "nccl_ring", "protocol": "simple"}]}}
    scenario = parse_scenario(data)
    network = scenario.built_network()
    record = ALGORITHMS["nccl_ring"]
    resolved = record.resolved(network, 2**26, {"protocol": "simple"})
    two, launched = record.transfers(16, 2**26, {"protocol": "simple"}), record.transfers(16, 2**26, resolved)
    assert launched > 2 * two
    per_gpu = 16 * guards.BYTES_PER_GPU
    middle = (two + launched) / 2 * guards.BYTES_PER_TRANSFER + per_gpu
    monkeypatch.setattr(guards, "available_memory_bytes", lambda: int(middle / 0.8))
    with pytest.raises(guards.ResourceError) as error:
        run(scenario)
    assert error.value.path == "collective"
    assert f"(about {launched:,} transfers)" in error.value.message


def test_inside_a_dask_worker_the_guard_counts_the_workers_memory_limit():
    """The guard compared with the host's free memory inside a Dask worker, admitting points Dask then stopped
    for exceeding the worker's --memory-limit; it now takes the smaller of the two."""
    distributed = pytest.importorskip("distributed")

    limit = 3 * 10**9
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, memory_limit=limit,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        inside = client.submit(guards.available_memory_bytes, pure=False).result()
    assert 0 < inside < limit
    assert guards._dask_worker_budget_bytes() is None


def test_nccls_ring_on_16_dgx_h100_at_1_gib_is_admitted_where_it_fits(monkeypatch):
    """Study r23: with 24 GB free the guard refused nccl_ring on 16 DGX H100 at every size (33.3 M transfers
    estimated, 19.98 GB); the schedule has 520,192 transfers and the run peaks under 0.7 GB. With 1 GB free,
    both sizes now run, each checked with what NCCL launches at that size."""
    monkeypatch.setattr(guards, "available_memory_bytes", lambda: 10**9)
    data = {"name": "g16", "topology": {"file": "dgx_h100_ndr_32", "nodes": 16}, "sizes": ["1 MiB", "1 GiB"],
            "collective": {"op": "allreduce", "algorithms": ["nccl_ring"]}}
    rows = run(parse_scenario(data))
    assert rows["size_bytes"].tolist() == [2**20, 2**30] and rows["sim_time_s"].gt(0).all()
