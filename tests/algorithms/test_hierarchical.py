"""The hierarchical all-reduce algorithms: BlueConnect's special cases are what Cho et al. (2019) say."""

import functools
import json
import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet.algorithms import ALGORITHMS, hierarchical
from simnet.algorithms.builder import ScheduleBuilder
from simnet.algorithms.hierarchy import hierarchy_factors
from simnet.algorithms.dense import ring_allreduce
from simnet.algorithms.hierarchical import (
    blueconnect_allreduce,
    blueconnect_levels,
    blueconnect_time,
    halving_doubling_allreduce,
    level_groups,
    torus_2d_allreduce,
)
from simnet.engine import simulate
from simnet.models import NetworkCosts, predict
from simnet.network import Network
from simnet.scenario import parse_scenario, run
from simnet.topology import add_cable, load, ring, switch, torus, validate
from tests.algorithms.fabrics import dgx_cluster
from tests.algorithms.orders import assert_same_schedule, wire

NETWORKS = [
    Network(switch(16, 12.5e9, 1e-6)),
    Network(ring(16, 25e9, 0.7e-6)),
    Network(dgx_cluster(2, 8)),
]


@pytest.mark.parametrize(("p", "size", "chunks"), [(16, 2**20, 1), (16, 10**6 + 7, 2), (12, 999, 3)])
def test_blueconnect_with_one_factor_is_the_ring(p, size, chunks):
    """Cho et al. 2019, §3: one level of BlueConnect is the ring all-reduce."""
    blue, ring_ = blueconnect_allreduce(p, size, factors=[p], chunks=chunks), ring_allreduce(p, size, chunks=chunks)
    assert wire(blue, stages=False) == wire(ring_, stages=False)
    assert_same_schedule(blue, ring_, stages=False)
    for network in NETWORKS:
        assert simulate(network, blue).time_s == pytest.approx(simulate(network, ring_).time_s, rel=1e-12)


@pytest.mark.parametrize(("k", "size", "chunks"), [(1, 100, 1), (2, 2**20, 1), (4, 2**20 + 3, 1), (4, 5000, 3)])
def test_blueconnect_with_all_factors_two_is_halving_doubling(k, size, chunks):
    """Cho et al. 2019, §3: factors of 2 at every level give Rabenseifner's algorithm."""
    p = 2**k
    blue = blueconnect_allreduce(p, size, factors=[2] * k, chunks=chunks)
    rabenseifner = halving_doubling_allreduce(p, size, chunks=chunks)
    assert list(blue.transfers) == list(rabenseifner.transfers) and blue.chunk_bytes == rabenseifner.chunk_bytes
    for network in NETWORKS:
        assert simulate(network, blue).time_s == simulate(network, rabenseifner).time_s


def test_torus_2d_is_two_level_blueconnect():
    torus = torus_2d_allreduce(12, 1200, factors=[3, 4])
    assert wire(torus, stages=False) == wire(blueconnect_allreduce(12, 1200, factors=[3, 4]), stages=False)
    assert torus_2d_allreduce(12, 1200).params["factors"] == [3, 4]


def test_level_groups_vary_one_coordinate():
    assert level_groups([2, 3], 0) == [[0, 1], [2, 3], [4, 5]]
    assert level_groups([2, 3], 1) == [[0, 2, 4], [1, 3, 5]]


def test_halving_doubling_folds_non_powers_of_two_the_mpich_way():
    schedule = halving_doubling_allreduce(6, 600)
    fold = [t for t in schedule.transfers if t.stage == "fold"]
    unfold = [t for t in schedule.transfers if t.stage == "unfold"]
    assert [(t.src, t.dst, t.op) for t in fold] == [(0, 1, "reduce"), (2, 3, "reduce")]
    assert [(t.src, t.dst, t.op) for t in unfold] == [(1, 0, "copy"), (3, 2, "copy")]


def test_hierarchical_ring_reduces_inside_nodes_and_rings_between_leaders():
    schedule = ALGORITHMS["hierarchical_ring"].builder(8, 800, factors=[4, 2])
    inter = {(t.src, t.dst) for t in schedule.transfers if t.stage.startswith("inter")}
    assert inter == {(0, 4), (4, 0)}
    assert {t.stage for t in schedule.transfers} == {
        "intra_reduce",
        "inter_reduce_scatter",
        "inter_all_gather",
        "intra_broadcast",
    }
    assert math.prod(schedule.params["factors"]) == 8


@settings(max_examples=80, deadline=None)
@given(factors=st.lists(st.integers(2, 5), min_size=1, max_size=4).filter(lambda f: math.prod(f) <= 96),
       chunks=st.integers(1, 3), size=st.sampled_from([1, 999, 2**20 + 3]), torus=st.booleans())
def test_the_structural_staged_schedule_is_what_the_builder_derives(factors, chunks, size, torus):
    """BlueConnect and the 2D torus are built from their structure; the cells of ScheduleBuilder give the same bits."""
    p = math.prod(factors)
    labels = ([("reduce_scatter_x", "all_gather_x"), ("reduce_scatter_y", "all_gather_y")] if torus
              else [(f"rs{i}", f"ag{i}") for i in range(len(factors))])
    labels = labels[: len(factors)] + [(f"rs{i}", f"ag{i}") for i in range(len(labels), len(factors))]
    builder = ScheduleBuilder(hierarchical._nested_leaves(size, factors, chunks), p)
    hierarchical._staged_allreduce(builder, range(p), factors, chunks, labels)
    expected = hierarchical._pipelined(builder.schedule("allreduce", "blueconnect", {"factors": factors}),
                                                factors, chunks)
    actual = hierarchical._staged_schedule(p, size, factors, chunks, labels, "blueconnect", {"factors": factors})
    assert actual.chunk_bytes == expected.chunk_bytes and actual.transfers.stages == expected.transfers.stages
    for name in ("src", "dst", "nbytes", "op", "piece", "piece_offsets", "piece_chunks", "deps", "dep_offsets",
                 "stage", "src_buffer", "dst_buffer"):
        actual_column, expected_column = getattr(actual.transfers, name), getattr(expected.transfers, name)
        assert actual_column.dtype == expected_column.dtype, name
        np.testing.assert_array_equal(actual_column, expected_column, err_msg=name)


def test_blueconnect_builds_65536_ranks_from_its_structure():
    """No per-(rank, chunk) state (the builder's cells would number 2^32), and the dependencies of halving-doubling.

    With factors ``[2] * k`` a reduce-scatter of level ``i`` waits for the ``i`` additions into its cells; an
    all-gather of level ``i`` for the ``k`` additions and the ``k - 1 - i`` all-gathers into the region it sends
    (the read it overwrites is the level-``i`` addition already counted): ``p (2k² - k)`` in all.
    """
    k = 16
    schedule = blueconnect_allreduce(2**k, 2**20, factors=[2] * k)
    table = schedule.transfers
    assert len(schedule) == 2 * k * 2**k
    assert len(table.deps) == 2**k * (2 * k**2 - k)
    assert len(table.deps_of(len(schedule) - 1)) == 2 * k - 1


def uneven_switch(hosts: int = 8) -> nx.DiGraph:
    """One switch whose GPU cables differ: latency ``(0.5 + i)`` µs and bandwidth ``12.5 (1 + i mod 3)`` GB/s."""
    graph = nx.DiGraph(name=f"uneven_switch({hosts})")
    graph.add_node("switch", kind="switch")
    for i in range(hosts):
        graph.add_node(f"gpu{i}", kind="gpu", host=i)
        add_cable(graph, f"gpu{i}", "switch", 12.5e9 * (1 + i % 3), (0.5 + i) * 1e-6, "fabric")
    return validate(graph)


UNEVEN = {
    "power9_cluster": Network(load("power9_cluster")),
    "dgx_cluster": Network(dgx_cluster(4, 8)),
    "uneven_switch": Network(uneven_switch()),
}


@pytest.mark.parametrize("name", UNEVEN)
@pytest.mark.parametrize("size", [1, 1000, 65536, 10**6 + 7, 2**26])
@pytest.mark.parametrize("chunks", [1, 4])
def test_blueconnect_with_one_factor_is_the_ring_in_the_model_too(name, size, chunks):
    """The same transfers get the same closed form on hops that differ: the ring's per-hop chains (study F1)."""
    network = UNEVEN[name]
    p = network.size
    hops = NetworkCosts(network).pairs([(r, (r + 1) % p) for r in range(p)])
    assert len({alpha for alpha, _, _ in hops}) > 1 and {sharing for _, _, sharing in hops} == {1.0}
    ring_model = predict("ring", network, p, size, chunks=chunks)
    assert predict("blueconnect", network, p, size, factors=[p], chunks=chunks) == ring_model
    assert predict("torus_2d", network, p, size, factors=[p, 1], chunks=chunks) == ring_model


@pytest.mark.parametrize("name", UNEVEN)
def test_blueconnect_with_one_factor_and_reductions_is_the_ring_unless_the_slowest_hop_bounds_it(name):
    """With γ the level adds ``(p - 1) m γ`` to whichever of its chain and its slowest hop is longer; the ring adds it
    to the chain only, so the two agree when the chain is the longer (small messages)."""
    network = UNEVEN[name]
    p, gamma = network.size, 1e-10
    small = predict("ring", network, p, 1000, gamma_s_per_byte=gamma)
    assert predict("blueconnect", network, p, 1000, factors=[p], gamma_s_per_byte=gamma) == small
    large = predict("ring", network, p, 2**26, gamma_s_per_byte=gamma)
    blue = predict("blueconnect", network, p, 2**26, factors=[p], gamma_s_per_byte=gamma)
    assert large < blue <= large + (p - 1) * math.ceil(2**26 / p) * gamma


@pytest.mark.parametrize("factors", [[32], [8, 4], [4, 8], [2, 2, 8]])
def test_blueconnect_levels_sum_to_the_model_on_uneven_levels(factors):
    network = UNEVEN["power9_cluster"]
    levels = blueconnect_levels(NetworkCosts(network), 32, 65536, factors, gamma_s_per_byte=1e-11)
    assert levels["time_s"].sum() == pytest.approx(
        predict("blueconnect", network, 32, 65536, factors=factors, gamma_s_per_byte=1e-11), rel=1e-12)


def test_blueconnect_model_follows_the_simulation_when_a_level_spans_two_nodes():
    """power9_cluster, factors [8, 4] at 64 KiB: level 1 rings cross a node boundary twice; charging all 14 of
    their steps the cross-node α gave 90 µs against 54 µs simulated (study F1)."""
    network = UNEVEN["power9_cluster"]
    simulated = simulate(network, blueconnect_allreduce(32, 65536, factors=[8, 4])).time_s
    assert predict("blueconnect", network, 32, 65536, factors=[8, 4]) == pytest.approx(simulated, rel=0.01)


def test_blueconnect_time_takes_per_hop_costs_and_alike_hops_give_the_per_level_form():
    n, factors, alphas, betas, sharing = 10**6, [4, 3], [1e-6, 5e-6], [1e-11, 8e-11], [1.0, 3.0]
    per_level = blueconnect_time(n, factors, alphas, betas, sharing=sharing, chunks=2, gamma_s_per_byte=1e-12)
    per_hop = [[np.full((12 // f, f), x) for f, x in zip(factors, values)] for values in (alphas, betas, sharing)]
    assert blueconnect_time(n, factors, per_hop[0], per_hop[1], sharing=per_hop[2], chunks=2,
                            gamma_s_per_byte=1e-12) == per_level
    slower = [a.copy() for a in per_hop[0]]
    slower[0][1, 2] = 2e-6
    assert blueconnect_time(n, factors, slower, per_hop[1], sharing=per_hop[2]) == pytest.approx(
        blueconnect_time(n, factors, alphas, betas, sharing=sharing) + 2 * 1e-6)


@pytest.mark.parametrize("dims, explicit", [([4, 4], [4, 4]), ([4, 8], [8, 4]), ([8, 4], [4, 8])])
def test_torus_2d_by_default_on_a_2d_torus_runs_its_rings_on_the_torus_rings(dims, explicit):
    """A scenario on a 2-D torus that gives torus_2d no factors runs the explicit [d1, d0] (on [4, 4] it ran the
    plain ring [1, 16], 5.131 ms against 5.069 ms at 64 MiB), and every transfer crosses one torus cable
    (GPU -> router -> router -> GPU)."""
    rows = [run(parse_scenario({
        "name": "t", "topology": {"builder": "torus", "dims": dims, "bandwidth": "25 GB/s", "latency": "1 us"},
        "collective": {"op": "allreduce", "algorithms": [algorithm]}, "sizes": ["64 MiB"]})).iloc[0]
        for algorithm in ("torus_2d", {"name": "torus_2d", "factors": explicit})]
    assert [json.loads(row["params"])["factors"] for row in rows] == [explicit, explicit]
    assert rows[0]["sim_time_s"] == rows[1]["sim_time_s"]
    for gpu_routers, links in ((False, 3), (True, 1)):
        network = Network(torus(dims, 25e9, 1e-6, gpu_routers=gpu_routers))
        defaults = ALGORITHMS["torus_2d"].defaults(functools.partial(hierarchy_factors, network.graph))
        schedule = torus_2d_allreduce(network.size, 2**20, **defaults)
        pairs = set(zip(schedule.transfers.src.tolist(), schedule.transfers.dst.tolist()))
        assert {len(network.route(src, dst)) for src, dst in pairs} == {links}
