"""Every registered algorithm, enumerated from the registry: an algorithm is tested by being registered.

For each record: the schedule it builds computes its collective for 2 to 17 ranks
(symbolically, and numerically for small cases; all-to-all-v algorithms also with
skewed traffic matrices), its record is complete, its
closed form answers every parameter the builder takes (a change of ``chunks`` moves
the prediction the way it moves the simulation), its transfer estimate bounds the
schedule, its tuning variants build, and what it derives from a topology builds.
"""

import functools
import math

import pytest

from simnet.algorithms import ALGORITHMS
from simnet.algorithms.hierarchy import hierarchy_factors
from simnet.engine import simulate
from simnet.models import NetworkCosts, predict
from simnet.network import Network
from simnet.payloads import SparsePayload
from simnet.schedule import COLLECTIVES, check
from simnet.topology import switch
from simnet.traffic import TrafficMatrix
from tests.algorithms.fabrics import dgx_cluster, full_mesh

NAMES = list(ALGORITHMS)


def parameters(name: str, nranks: int, *, chunks: int | None = None) -> tuple[int, dict]:
    """A payload size and parameters valid for `nranks` ranks (defaults for everything else)."""
    record = ALGORITHMS[name]
    taken = {p.name for p in record.parameters}
    params: dict = {}
    if record.payload == "sparse":
        payload = SparsePayload(dimension=1500 + nranks, density=1 / 16, seed=nranks)
        params["payload"] = payload
        size = payload.size_bytes
    else:
        size = 1000 + 7 * nranks
    if "gpus_per_node" in taken:
        servers = 2 if "heads" in taken else 1
        params["gpus_per_node"] = max(d for d in range(1, 5) if nranks % d == 0 and nranks // d >= servers)
    if "root" in taken:
        params["root"] = nranks // 2
    if chunks is not None and "chunks" in taken:
        params["chunks"] = chunks
    return size, params


MATRICES = (TrafficMatrix("zipf", exponent=1.2, seed=3), TrafficMatrix("hotspot", hotspots=2, fraction=0.7, seed=1))
"""Skewed traffic matrices every all-to-all-v algorithm is checked with."""


@pytest.mark.parametrize("name", NAMES)
def test_every_algorithm_computes_its_collective_on_2_to_17_ranks(name):
    record = ALGORITHMS[name]
    for nranks in range(2, 18):
        if not record.supports(nranks):
            continue
        for chunks in (1, 3):
            size, params = parameters(name, nranks, chunks=chunks)
            schedule = record.build(nranks, size, **params)
            assert schedule.collective in record.ops and schedule.nranks == nranks
            assert schedule.size_bytes == size
            check(schedule, numeric=nranks <= 7)
            if "alltoallv" in record.ops:
                for matrix in MATRICES:
                    skewed = record.build(nranks, size, **params, matrix=matrix)
                    assert skewed.collective == "alltoallv" and skewed.size_bytes == size
                    check(skewed, numeric=nranks <= 5)


@pytest.mark.parametrize("name", NAMES)
def test_every_record_is_complete(name):
    record = ALGORITHMS[name]
    assert record.name == name and set(record.ops) <= set(COLLECTIVES)
    assert record.description and record.citation
    assert (record.model is not None) != bool(record.no_model)
    assert record.formula or record.no_model
    for parameter in record.parameters:
        assert parameter.name.isidentifier()


@pytest.mark.parametrize("name", NAMES)
def test_the_transfer_estimate_bounds_the_schedule(name):
    record = ALGORITHMS[name]
    for nranks in (2, 5, 8, 16):
        size, params = parameters(name, nranks, chunks=2)
        schedule = record.build(nranks, size, **params)
        assert len(schedule) <= record.transfers(nranks, size, params), nranks


DGX = dgx_cluster(2, 4)


@pytest.mark.parametrize("name", [n for n in NAMES if ALGORITHMS[n].defaults is not None])
def test_topology_defaults_build_on_a_hierarchical_cluster(name):
    record = ALGORITHMS[name]
    derived = record.defaults(functools.partial(hierarchy_factors, DGX))
    size, params = parameters(name, 8)
    check(record.build(8, size, **{**params, **derived}))


@pytest.mark.parametrize("name", [n for n in NAMES if ALGORITHMS[n].payload == "dense"])
def test_every_tuning_variant_builds_and_is_priced(name):
    record = ALGORITHMS[name]
    costs = NetworkCosts(Network(DGX))
    factors = functools.partial(hierarchy_factors, DGX)
    for params in record.variants(8, factors, (1, 2), (1, 2)):
        schedule = record.build(8, 4096, **params)
        assert len(schedule) <= record.transfers(8, 4096, params)
        if record.model is not None:
            assert math.isfinite(record.predict(costs, 8, 4096, **params))


@pytest.mark.parametrize("name", ["torus_2d", "hierarchical_ring"])
def test_no_two_level_variant_where_a_level_is_one(name):
    """One GB200 NVL72 rack is one server of 72 GPUs on 36 sockets: its two-level factors are [72, 1], where a
    torus of 72 x 1 is the ring and a hierarchical ring the binomial tree, both candidates already; a cluster of
    its racks gets them."""
    from simnet.topology import cluster, gb200_nvl72

    variants = ALGORITHMS[name].variants
    rack = functools.partial(hierarchy_factors, gb200_nvl72())
    assert rack(("host",)) == (72, 1) and variants(72, rack, (1, 4), (1,)) == []
    racks = functools.partial(hierarchy_factors, cluster("gb200_nvl72", 2, fabric_params={"bandwidth_Bps": 50e9,
                                                                                   "latency_s": 1e-6}))
    assert variants(144, racks, (1, 4), (1,)) == [{"factors": [72, 2], "chunks": 1}, {"factors": [72, 2], "chunks": 4}]


def test_topology_defaults_are_read_off_the_network_or_given():
    """with_topology_defaults reads the GPUs' hierarchy (of a communicator too); GPUs that break it need the
    derived parameters given, and the error names the first one missing."""
    from simnet.errors import SimnetError
    from simnet.topology import gpus

    record = ALGORITHMS["sparse_ring_ring"]
    assert record.derived == ("gpus_per_node",)
    assert record.with_topology_defaults(Network(DGX), {}) == {"gpus_per_node": 4}
    assert record.with_topology_defaults(Network(DGX), {}, ranks=[4, 5]) == {"gpus_per_node": 2}
    assert record.with_topology_defaults(Network(DGX), {"gpus_per_node": 2}) == {"gpus_per_node": 2}
    order = gpus(DGX)
    interleaved = Network(DGX, ranks=[gpu for pair in zip(order[:4], order[4:]) for gpu in pair])
    with pytest.raises(SimnetError, match=r"cannot derive gpus_per_node from the hierarchy of these GPUs \(") as error:
        record.with_topology_defaults(interleaved, {})
    assert error.value.path == "gpus_per_node"
    assert record.with_topology_defaults(interleaved, {"gpus_per_node": 1}) == {"gpus_per_node": 1}
    assert ALGORITHMS["ring"].with_topology_defaults(interleaved, {"chunks": 2}) == {"chunks": 2}


CHUNKED = [n for n in NAMES if ALGORITHMS[n].model is not None and "chunks" in {p.name for p in ALGORITHMS[n].parameters}]
NETWORKS = {"full_mesh": Network(full_mesh(8)), "switch": Network(switch(8, 12.5e9, 1e-6)), "dgx": Network(DGX)}


@pytest.mark.parametrize("network", sorted(NETWORKS))
@pytest.mark.parametrize("name", CHUNKED)
def test_closed_forms_move_with_chunks_as_the_simulation_does(name, network):
    """predict() honours chunks: pipelining that speeds the simulation up speeds the closed form up (the schedule
    built with what predict() reads off the network, e.g. torus_2d's factors)."""
    net = NETWORKS[network]
    size = 4 * 2**20
    _, params = parameters(name, 8)
    params = ALGORITHMS[name].with_topology_defaults(net, params)
    times = {}
    for chunks in (1, 8):
        schedule = ALGORITHMS[name].build(8, size, **params, chunks=chunks)
        times[chunks] = (simulate(net, schedule).time_s, predict(name, net, 8, size, **params, chunks=chunks))
    (sim1, model1), (sim8, model8) = times[1], times[8]
    if sim8 < 0.95 * sim1:
        assert model8 < 0.95 * model1, (sim1, sim8, model1, model8)


@pytest.mark.parametrize("name", [n for n in CHUNKED if n != "double_binary_tree"])
def test_pipelined_closed_forms_track_the_simulation_without_contention(name):
    """On a full mesh (one cable per GPU pair) the closed forms stay within 25 % of the simulation for any chunks."""
    net = NETWORKS["full_mesh"]
    _, params = parameters(name, 8)
    if "factors" in {p.name for p in ALGORITHMS[name].parameters}:
        params["factors"] = [2, 4]
    for size in (4096, 2**20, 64 * 2**20):
        for chunks in (1, 2, 4, 8):
            schedule = ALGORITHMS[name].build(8, size, **params, chunks=chunks)
            simulated = simulate(net, schedule).time_s
            assert predict(name, net, 8, size, **params, chunks=chunks) == pytest.approx(simulated, rel=0.25)
