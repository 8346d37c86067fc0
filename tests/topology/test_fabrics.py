"""Fabric builders against their closed forms (Al-Fares et al. 2008; Dally & Towles 2004)."""

from __future__ import annotations

import math

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet.errors import TopologyError
from simnet.network import Network
from simnet.topology import describe, fat_tree, gpus, leaf_spine, pgft, ring, switch, torus
from simnet.topology.describe import bisection_bandwidth_Bps
from simnet.units import format_bandwidth


@given(st.integers(min_value=2, max_value=200))
def test_switch_counts_and_degrees(n):
    graph = switch(n, 12.5e9, 1e-6)
    assert graph.number_of_nodes() == n + 1
    assert graph.number_of_edges() == 2 * n
    assert graph.in_degree("switch") == graph.out_degree("switch") == n
    assert all(graph.in_degree(f"gpu{i}") == graph.out_degree(f"gpu{i}") == 1 for i in range(n))
    assert graph.graph["name"] == f"switch(hosts={n}, bandwidth=12.5 GB/s, latency=1 us)"


@given(st.integers(min_value=3, max_value=200))
def test_ring_is_two_regular(n):
    graph = ring(n, 25e9, 1e-6)
    assert graph.number_of_edges() == 2 * n
    assert all(graph.in_degree(v) == graph.out_degree(v) == 2 for v in graph)


def test_two_host_ring_has_a_single_cable():
    graph = ring(2, 25e9, 1e-6)
    assert graph.number_of_edges() == 2
    assert graph.edges["gpu0", "gpu1"]["bandwidth_Bps"] == 25e9
    assert graph.edges["gpu0", "gpu1"]["cables"] == 1


@pytest.mark.parametrize("builder", [switch, ring])
@pytest.mark.parametrize(
    ("args", "path"),
    [((1, 1e9, 0.0), "hosts"), ((2.5, 1e9, 0.0), "hosts"), ((4, 0.0, 0.0), "bandwidth_Bps"),
     ((4, -1e9, 0.0), "bandwidth_Bps"), ((4, float("inf"), 0.0), "bandwidth_Bps"), ((4, 1e9, -1.0), "latency_s")],
)
def test_builders_reject_bad_arguments_naming_them(builder, args, path):
    with pytest.raises(TopologyError) as raised:
        builder(*args)
    assert raised.value.path == path


def _switches(graph):
    return [n for n, kind in graph.nodes(data="kind") if kind == "switch"]


def _cables(graph, nodes=None):
    return sum(1 for u, v in graph.edges if (nodes is None or (u in nodes and v in nodes)) and str(u) < str(v))


@pytest.mark.parametrize("k", [2, 4, 6, 8])
def test_fat_tree_counts_and_degrees_match_al_fares(k):
    graph = fat_tree(k, 12.5e9, 1e-6)
    hosts = [n for n, kind in graph.nodes(data="kind") if kind == "gpu"]
    switches = _switches(graph)
    assert len(hosts) == k**3 // 4
    assert len(switches) == 5 * k**2 // 4
    assert sum(1 for n in switches if n.startswith("core")) == (k // 2) ** 2
    assert all(graph.out_degree(n) == k and graph.in_degree(n) == k for n in switches)
    assert all(graph.out_degree(n) == 1 for n in hosts)
    assert graph.number_of_edges() == 2 * 3 * k**3 // 4
    assert graph.graph["name"] == f"fat_tree(k={k}, bandwidth=12.5 GB/s, latency=1 us)"
    assert graph.graph["builder"] == "fat_tree" and graph.graph["params"]["k"] == k


@pytest.mark.parametrize("k", [4, 6])
def test_fat_tree_has_full_bisection(k):
    assert bisection_bandwidth_Bps(fat_tree(k, 1e9, 1e-6)) == pytest.approx(k**3 / 8 * 1e9, rel=1e-9)


@pytest.mark.parametrize("k", [1, 3, 5, 7, 0, -2])
def test_fat_tree_rejects_odd_or_small_k(k):
    with pytest.raises(TopologyError) as error:
        fat_tree(k, 1e9, 1e-6)
    assert error.value.path == "k"


@settings(max_examples=30, deadline=None)
@given(
    leaves=st.integers(1, 6),
    spines=st.integers(1, 4),
    hosts_per_leaf=st.integers(2, 8),
    oversubscription=st.sampled_from([1.0, 1.5, 2.0, 3.0, 4.0]),
)
def test_leaf_spine_uplink_capacity_matches_oversubscription(leaves, spines, hosts_per_leaf, oversubscription):
    bandwidth = 12.5e9
    graph = leaf_spine(leaves, spines, hosts_per_leaf, bandwidth, 1e-6, oversubscription=oversubscription)
    for leaf in range(leaves):
        up = sum(d["bandwidth_Bps"] for _, v, d in graph.out_edges(f"leaf{leaf}", data=True) if v.startswith("spine"))
        down = sum(d["bandwidth_Bps"] for _, v, d in graph.out_edges(f"leaf{leaf}", data=True) if v.startswith("gpu"))
        assert down == pytest.approx(hosts_per_leaf * bandwidth, rel=1e-12)
        assert up == pytest.approx(hosts_per_leaf * bandwidth / oversubscription, rel=1e-12)
        assert down / up == pytest.approx(oversubscription, rel=1e-12)
    kept = spines / oversubscription
    used = min(spines, round(kept)) if oversubscription != 1 and kept >= 1 and kept == round(kept) else spines
    assert len(_switches(graph)) == leaves + used


def test_the_3_to_1_preset_is_oversubscribed_by_cable_count_at_one_line_rate():
    """Study r26 F5: leaf_spine_3to1 had 2 uplinks of 16.67 GB/s (133 Gb/s) beside 12.5 GB/s host cables;
    switch ports run at one line rate, so 3:1 is 6 host cables and 2 uplink cables per leaf, all 12.5 GB/s."""
    from simnet.topology import load

    graph = load("leaf_spine_3to1")
    assert {data["bandwidth_Bps"] for _, _, data in graph.edges(data=True)} == {12.5e9}
    leaves = [n for n, level in graph.nodes(data="level") if level == "leaf"]
    assert len(leaves) == 4
    for leaf in leaves:
        kinds = [graph.nodes[v]["kind"] for v in graph.successors(leaf)]
        assert (kinds.count("gpu"), kinds.count("switch")) == (6, 2)
    assert graph.graph["name"].endswith("; 2 uplink cables of 12.5 GB/s per leaf (3:1 keeps 2 of 6 at full rate))")


def test_leaf_spine_name_shows_oversubscription_only_when_set():
    assert "oversubscription=3.0" in leaf_spine(2, 2, 4, 1e9, 1e-6, oversubscription=3.0).graph["name"]
    assert "oversubscription" not in leaf_spine(2, 2, 4, 1e9, 1e-6).graph["name"]
    assert "(0.5:1, undersubscribed: each runs at 2 × full rate)" in leaf_spine(
        2, 2, 4, 1e9, 1e-6, oversubscription=0.5).graph["name"]


@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), "3"])
def test_leaf_spine_rejects_bad_oversubscription(bad):
    with pytest.raises(TopologyError) as error:
        leaf_spine(2, 2, 4, 1e9, 1e-6, oversubscription=bad)
    assert error.value.path == "oversubscription"


def _routers(graph):
    return graph.subgraph(n for n, level in graph.nodes(data="level") if level == "router")


@settings(max_examples=20, deadline=None)
@given(dims=st.lists(st.integers(3, 5), min_size=1, max_size=3))
def test_torus_is_2d_regular_with_closed_form_diameter(dims):
    graph = torus(dims, 25e9, 1e-6)
    routers = _routers(graph)
    assert routers.number_of_nodes() == math.prod(dims)
    assert all(routers.out_degree(n) == 2 * len(dims) for n in routers)
    assert nx.diameter(routers.to_undirected(as_view=True)) == sum(d // 2 for d in dims)
    assert graph.graph["name"] == f"torus(dims={dims}, bandwidth=25 GB/s, latency=1 us)"


@pytest.mark.parametrize("dims", [[4, 4], [4, 3], [6, 4, 3]])
def test_torus_route_diameter_and_bisection(dims):
    info = describe(torus(dims, 1e9, 1e-6))
    assert info["diameter_hops"] == sum(d // 2 for d in dims) + 2
    assert info["bisection_Bps"] == pytest.approx(2 * math.prod(dims) / dims[0] * 1e9, rel=1e-9)


def test_torus_size_two_dimension_has_a_single_cable_unless_asked():
    single = torus([2, 4], 10e9, 1e-6)
    assert single.edges["r0_0", "r1_0"]["cables"] == 1
    assert single.edges["r0_0", "r1_0"]["bandwidth_Bps"] == 10e9
    double = torus([2, 4], 10e9, 1e-6, double_links=True)
    assert double.edges["r0_0", "r1_0"]["cables"] == 2
    assert double.edges["r0_0", "r1_0"]["bandwidth_Bps"] == 20e9
    assert all(sum(d["cables"] for *_, d in _routers(double).out_edges(n, data=True)) == 4 for n in _routers(double))


def test_torus_dimension_of_size_one_adds_no_cable():
    graph = torus([1, 3], 1e9, 1e-6)
    assert all(_routers(graph).out_degree(n) == 2 for n in _routers(graph))


@pytest.mark.parametrize(
    ("dims", "path"), [([], "dims"), ("44", "dims"), ([4, 0], "dims[1]"), ([1], "dims"), ([4, 2.5], "dims[1]")]
)
def test_torus_rejects_bad_dims(dims, path):
    with pytest.raises(TopologyError) as error:
        torus(dims, 1e9, 1e-6)
    assert error.value.path == path


@pytest.mark.parametrize(("k", "n"), [(2, 2), (4, 3), (3, 2), (2, 4)])
def test_pgft_k_ary_n_tree_counts_and_degrees(k, n):
    """A k-ary n-tree: k^n hosts, n k^(n-1) switches of k ports down and k up (the top: down only)."""
    graph = pgft([k] * n, [1] + [k] * (n - 1), 1e9, 1e-6)
    switches = [node for node, kind in graph.nodes(data="kind") if kind == "switch"]
    assert len(gpus(graph)) == k**n and len(switches) == n * k ** (n - 1)
    for node in switches:
        level = int(node[1:].split("_")[0])
        assert graph.out_degree(node) == (k if level == n else 2 * k)
    assert bisection_bandwidth_Bps(graph) == pytest.approx(k**n // 2 * 1e9)


def test_pgft_with_parallel_cables_is_simgrids_two_level_tree_and_a_leaf_spine():
    """SimGrid's FAT_TREE 2;4,4;1,2;1,2 is leaf_spine(4, 2, 4, parallel=2), node for node."""
    tree = pgft([4, 4], [1, 2], 12.5e9, 1e-6, parallel=[1, 2])
    spine = leaf_spine(4, 2, 4, 12.5e9, 1e-6, parallel=2)
    names = {f"s1_{i}": f"leaf{i}" for i in range(4)} | {f"s2_{i}": f"spine{i}" for i in range(2)}
    relabelled = nx.relabel_nodes(tree, names)
    assert sorted(relabelled.edges(data="cables")) == sorted(spine.edges(data="cables"))
    assert tree.edges["s1_0", "s2_1"]["bandwidth_Bps"] == spine.edges["leaf0", "spine1"]["bandwidth_Bps"] == 25e9
    assert tree.graph["routing"] == spine.graph["routing"] == "dmodk"


@pytest.mark.parametrize(
    ("args", "path"),
    [
        (([4, 4], [1], 1e9, 1e-6), "up"),
        (([4, 4], [2, 2], 1e9, 1e-6), "up"),
        (([4, 0], [1, 2], 1e9, 1e-6), "down[1]"),
        (("44", [1, 2], 1e9, 1e-6), "down"),
        (([1], [1], 1e9, 1e-6), "down"),
    ],
)
def test_pgft_rejects_bad_shapes_naming_them(args, path):
    with pytest.raises(TopologyError) as error:
        pgft(*args)
    assert error.value.path == path


def test_leaf_spine_oversubscription_removes_cables_when_it_divides_them():
    """Study r25 F1: 2:1 keeps half the cables, at the non-blocking rate, on every spine alike."""
    graph = leaf_spine(2, 2, 8, 25e9, 1e-6, oversubscription=2.0, parallel=4)
    for s in (0, 1):
        assert graph.edges["leaf0", f"spine{s}"]["cables"] == 2
        assert graph.edges["leaf0", f"spine{s}"]["bandwidth_Bps"] == 2 * 8 * 25e9 / 8
    assert graph.graph["name"].endswith(
        "oversubscription=2.0, parallel=4; 4 uplink cables of 25 GB/s per leaf (2:1 keeps 4 of 8 at full rate))")


def test_leaf_spine_oversubscription_lowers_the_rate_when_it_does_not_divide_the_cables():
    graph = leaf_spine(2, 2, 8, 25e9, 1e-6, oversubscription=3.0, parallel=4)
    assert graph.edges["leaf0", "spine1"]["cables"] == 4
    assert graph.edges["leaf0", "spine1"]["bandwidth_Bps"] == pytest.approx(4 * 8 * 25e9 / 8 / 3, rel=1e-12)
    assert graph.graph["name"].endswith(
        "; 8 uplink cables of 8.333 GB/s per leaf (3:1 does not divide 8 cables: each runs at 1/3 of full rate))")


def test_leaf_spine_fewer_uplinks_than_spines_use_the_first_spines_only():
    graph = leaf_spine(2, 4, 8, 25e9, 1e-6, oversubscription=2.0)
    assert [n for n in graph if str(n).startswith("spine")] == ["spine0", "spine1"]
    assert graph.edges["leaf1", "spine1"]["bandwidth_Bps"] == 8 * 25e9 / 4
    assert graph.graph["name"].endswith("(2:1 keeps 2 of 4 at full rate, on 2 of 4 spines))")


@pytest.mark.parametrize("spines, parallel, ratio", [(2, 4, 2.0), (4, 2, 4.0), (3, 2, 1.5), (4, 3, 2.0)])
def test_oversubscribed_uplinks_share_destinations_evenly(spines, parallel, ratio):
    """Under d-mod-k every kept uplink cable of a leaf carries the same number of destinations, also when the
    spines keep unequal numbers of cables (4 spines, 3 cables each, 2:1: 2, 2, 1, 1)."""
    graph = leaf_spine(2, spines, 12, 25e9, 1e-6, oversubscription=ratio, parallel=parallel)
    network = Network(graph)
    kept = round(spines * parallel / ratio)
    load = {}
    for d in range(12, 24):
        up = network.links[network.route(0, d)[1]]
        assert up[0] == "leaf0" and str(up[1]).startswith("spine")
        load[up] = load.get(up, 0) + 1
    assert len(load) == kept and len(set(load.values())) == 1


@pytest.mark.parametrize("kwargs, cables, rate", [
    ({}, 2, "16 GB/s"), ({"oversubscription": 3.0}, 2, "5.333 GB/s"), ({"parallel": 4}, 8, "4 GB/s"),
    ({"oversubscription": 2.0, "parallel": 2}, 2, "8 GB/s"), ({"spines": 1}, 1, "32 GB/s"),
])
def test_leaf_spine_name_shows_the_uplink_cables_of_a_leaf(kwargs, cables, rate):
    """The name says how many cables leave a leaf and at what rate, which oversubscription lowers and parallel
    splits: 8 hosts of 4 GB/s over 2 spines."""
    params = {"spines": 2, **kwargs}
    graph = leaf_spine(2, params.pop("spines"), 8, 4e9, 1e-6, **params)
    suffix = f"; {cables} uplink cable{'s' if cables > 1 else ''} of {rate} per leaf"
    assert suffix in graph.graph["name"]
    uplinks = [graph.edges["leaf0", v] for v in graph.successors("leaf0") if v.startswith("spine")]
    assert sum(edge["cables"] for edge in uplinks) == cables
    assert {format_bandwidth(edge["bandwidth_Bps"] / edge["cables"]) for edge in uplinks} == {rate}


def test_torus_with_gpu_routers_has_no_injection_cable():
    graph = torus([4, 4], 25e9, 1e-6, gpu_routers=True)
    assert len(gpus(graph)) == graph.number_of_nodes() == 16
    assert all(graph.out_degree(g) == 4 for g in gpus(graph))
    assert graph.nodes["gpu5"]["coord"] == (1, 1) and graph.graph["routing"] == "dimension_order"


@pytest.mark.parametrize("builder", [switch, ring, fat_tree, leaf_spine, torus, pgft])
def test_routing_is_a_builder_parameter_checked_against_the_rules(builder):
    args = {
        switch: (4, 1e9, 1e-6), ring: (4, 1e9, 1e-6), fat_tree: (4, 1e9, 1e-6), leaf_spine: (2, 2, 2, 1e9, 1e-6),
        torus: ([3, 3], 1e9, 1e-6), pgft: ([2, 2], [1, 2], 1e9, 1e-6),
    }[builder]
    assert builder(*args, routing="ecmp_hash").graph["routing"] == "ecmp_hash"
    with pytest.raises(TopologyError, match="must be one of") as error:
        builder(*args, routing="ospf")
    assert error.value.path == "routing"


SHARP_FABRICS = [
    lambda sharp: switch(4, 50e9, 1e-6, sharp=sharp),
    lambda sharp: fat_tree(4, 50e9, 1e-6, sharp=sharp),
    lambda sharp: leaf_spine(2, 2, 4, 50e9, 1e-6, parallel=2, sharp=sharp),
    lambda sharp: pgft([4, 4], [1, 2], 50e9, 1e-6, sharp=sharp),
]


@pytest.mark.parametrize("build", SHARP_FABRICS, ids=["switch", "fat_tree", "leaf_spine", "pgft"])
def test_sharp_marks_every_fabric_switch_and_only_when_asked(build):
    """InfiniBand SHARP runs on NVIDIA Quantum, Quantum-2 and Quantum-X800 switches (NVIDIA SHARP documentation)."""
    plain, sharp = build(False), build(True)
    switches = [node for node, kind in sharp.nodes(data="kind") if kind == "switch"]
    assert all(sharp.nodes[node]["reduce"] is True and "reduce_efficiency" not in sharp.nodes[node]
               for node in switches)
    assert not any("reduce" in data for _, data in plain.nodes(data=True))
    assert "sharp=True" in sharp.graph["name"] and "sharp" not in plain.graph["name"]


@pytest.mark.parametrize("build", [
    lambda: switch(4, 50e9, 1e-6, sharp="yes"),
    lambda: fat_tree(4, 50e9, 1e-6, sharp=1),
    lambda: leaf_spine(2, 2, 4, 50e9, 1e-6, sharp=None),
    lambda: pgft([4, 4], [1, 2], 50e9, 1e-6, sharp="true"),
])
def test_sharp_must_be_a_boolean(build):
    with pytest.raises(TopologyError, match="must be true or false") as error:
        build()
    assert error.value.path == "sharp"


def test_tiers_by_level_name_each_cable_by_the_levels_it_joins():
    """Study r23 F3: every fabric cable was one tier, so the breakdown by tier could not tell edge, aggregation
    and core apart."""
    from simnet.topology import build, tiers_by_level

    tiers = {d["tier"] for _, _, d in tiers_by_level(fat_tree(4, 12.5e9, 1e-6)).edges(data=True)}
    assert tiers == {"fabric:host-edge", "fabric:edge-aggregation", "fabric:aggregation-core"}
    tiers = {d["tier"] for _, _, d in tiers_by_level(leaf_spine(2, 2, 4, 12.5e9, 1e-6)).edges(data=True)}
    assert tiers == {"fabric:host-leaf", "fabric:leaf-spine"}
    cluster = build({"file": "dgx_h100_ndr_32", "nodes": 2, "tiers": "per_level"})
    plain = build({"file": "dgx_h100_ndr_32", "nodes": 2})
    assert {d["tier"] for _, _, d in cluster.edges(data=True)} == {"ib:host-leaf", "ib:leaf-spine", "nvswitch",
                                                                   "pcie", "upi"}
    assert [(u, v) for u, v in cluster.edges] == [(u, v) for u, v in plain.edges]
    assert all(cluster.edges[e]["bandwidth_Bps"] == plain.edges[e]["bandwidth_Bps"] for e in plain.edges)
    with pytest.raises(TopologyError, match="tiers: must be 'per_level'"):
        build({"builder": "switch", "hosts": 2, "bandwidth": "1 GB/s", "latency": "1 us", "tiers": "yes"})


def test_per_level_tiers_split_the_critical_path_as_a_relabelled_graph_does_and_move_no_time():
    """The study's workaround, relabelling the edges in Python, gives the same breakdown (host 48.1 %,
    edge-aggregation 31.6 %, aggregation-core 20.3 % for halving-doubling of 16 MiB on ECMP seed 1; 47.7, 31.7
    and 20.7 % at 64 MiB, the sizes docs/topology.md names), and the times are those of the plain fat-tree."""
    from simnet.algorithms import ALGORITHMS
    from simnet.engine import simulate
    from simnet.network import Network
    from simnet.topology import tiers_by_level

    plain = fat_tree(4, 12.5e9, 1e-6)
    relabelled = plain.copy()
    for u, v, data in relabelled.edges(data=True):
        names = (str(u)[:3], str(v)[:3])
        data["tier"] = "host" if "gpu" in names else ("edge-agg" if "edg" in names else "agg-core")
    schedule = ALGORITHMS["halving_doubling"].build(16, 16 * 2**20)
    traces = [simulate(Network(graph, routing="ecmp_hash", hash_seed=1), schedule)
              for graph in (plain, tiers_by_level(plain), relabelled)]
    assert traces[0].time_s == traces[1].time_s == traces[2].time_s
    ours = traces[1].tiers().set_index("tier")["fraction"]
    theirs = traces[2].tiers().set_index("tier")["fraction"]
    assert ours.rename({"fabric:host-edge": "host", "fabric:edge-aggregation": "edge-agg",
                        "fabric:aggregation-core": "agg-core"}).sort_index().tolist() == \
        pytest.approx(theirs.sort_index().tolist(), rel=1e-12)
    assert [round(ours[f"fabric:{level}"], 3) for level in ("host-edge", "edge-aggregation", "aggregation-core")] \
        == [0.481, 0.316, 0.203], "the figures docs/topology.md quotes"
    larger = simulate(Network(tiers_by_level(plain), routing="ecmp_hash", hash_seed=1),
                      ALGORITHMS["halving_doubling"].build(16, 64 * 2**20)).tiers().set_index("tier")["fraction"]
    assert [round(larger[f"fabric:{level}"], 3) for level in ("host-edge", "edge-aggregation", "aggregation-core")] \
        == [0.477, 0.317, 0.207], "the 64 MiB figures docs/topology.md quotes"
