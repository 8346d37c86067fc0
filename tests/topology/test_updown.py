"""Up/down routing: d-mod-k's defining properties and SimGrid's FatTreeZone rule."""

from __future__ import annotations

import random
from collections import Counter

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet.errors import TopologyError
from simnet.network import Network
from simnet.topology import Router, add_cable, cluster, fat_tree, gpus, leaf_spine, pgft, torus
from simnet.topology.updown import UpDown

B, LAT = 12.5e9, 1e-6


def full_bisection(family: str, size: int, extra: int) -> nx.DiGraph:
    """Non-blocking fat-trees: Al-Fares k-ary, k-ary n-trees, leaf-spines with as many uplinks as hosts."""
    if family == "fat_tree":
        return fat_tree(2 * size, B, LAT)
    if family == "k_ary_n_tree":
        return pgft([size] * extra, [1] + [size] * (extra - 1), B, LAT)
    return leaf_spine(size + 1, size, size * extra, B, LAT, parallel=extra)


FAMILIES = st.one_of(
    st.tuples(st.just("fat_tree"), st.integers(1, 4), st.just(1)),
    st.tuples(st.just("k_ary_n_tree"), st.integers(2, 4), st.integers(1, 3)),
    st.tuples(st.just("leaf_spine"), st.integers(1, 4), st.integers(1, 3)),
)


@settings(max_examples=60, deadline=None)
@given(family=FAMILIES, data=st.data())
def test_dmodk_routes_a_shift_permutation_with_at_most_one_flow_per_link(family, data):
    """Zahavi (2010): d-mod-k on a full-bisection fat-tree is non-blocking for every shift i -> i + s."""
    network = Network(full_bisection(*family))
    p = network.size
    shift = data.draw(st.integers(1, p - 1))
    flows = Counter(link for i in range(p) for link in network.route(i, (i + shift) % p))
    assert max(flows.values()) == 1


@pytest.mark.parametrize(
    "graph",
    [
        fat_tree(4, B, LAT),
        pgft([4, 4, 4], [1, 4, 4], B, LAT),
        pgft([2, 3, 2], [1, 2, 3], B, LAT, parallel=[1, 2, 2]),
        leaf_spine(4, 2, 4, B, LAT, parallel=2),
        cluster("dgx_a100", 4, fabric="leaf_spine",
                fabric_params={"leaves": 8, "spines": 4, "hosts_per_leaf": 4, "bandwidth_Bps": B, "latency_s": LAT}),
    ],
    ids=["fat_tree", "4_ary_3_tree", "pgft_cables", "leaf_spine_cables", "superpod"],
)
def test_dmodk_forwards_by_destination_only(graph):
    """Every switch sends all traffic for one destination out of one port: a linear forwarding table."""
    router = Router(graph)
    assert router.routing == "dmodk"
    fabric = {n for n, data in graph.nodes(data=True) if data["kind"] == "switch" and data.get("host") is None}
    ranks = gpus(graph)
    for b in ranks:
        table: dict = {}
        for a in ranks:
            for u, v, cable in router.hops(a, b):
                if u in fabric:
                    assert table.setdefault(u, (v, cable)) == (v, cable), (a, b, u)


@pytest.mark.parametrize("simgrid", [False, True])
@pytest.mark.parametrize(
    "graph",
    [fat_tree(6, B, LAT), pgft([2, 3, 2], [1, 2, 3], B, LAT, parallel=[1, 2, 2]), leaf_spine(3, 2, 5, B, LAT, parallel=3)],
    ids=["fat_tree", "pgft_cables", "leaf_spine_cables"],
)
def test_up_down_routes_climb_to_the_lowest_common_level_and_descend(graph, simgrid):
    tree = UpDown(graph, simgrid=simgrid)
    level = {node: 0 for node in tree.endpoints} | {node: at + 1 for node, at in tree._level.items()}
    shortest = dict(nx.all_pairs_shortest_path_length(graph))
    for a in tree.endpoints:
        for b in tree.endpoints:
            nodes, cables = tree.route(a, b)
            assert nodes[0] == a and nodes[-1] == b and len(cables) == len(nodes) - 1
            assert len(nodes) - 1 == shortest[a][b]
            heights = [level[n] for n in nodes]
            top = heights.index(max(heights))
            assert heights[: top + 1] == sorted(heights[: top + 1])
            assert heights[top:] == sorted(heights[top:], reverse=True)
            for u, v, cable in zip(nodes, nodes[1:], cables):
                assert 0 <= cable < graph.edges[u, v].get("cables", 1)


@pytest.mark.parametrize("simgrid", [False, True])
@pytest.mark.parametrize("servers", [5, 9])
def test_a_partly_filled_fat_tree_routes_every_nic_pair_up_then_down(servers, simgrid):
    """Edge switches with no NIC cabled to them stay edge switches: no route climbs into one as if it were a core."""
    graph = cluster("dgx_a100", servers, fabric="fat_tree", fabric_params={"k": 8, "bandwidth_Bps": B, "latency_s": LAT})
    tree = UpDown(graph, simgrid=simgrid)
    tiers = {"edge": 1, "aggregation": 2, "core": 3}
    assert {tiers[graph.nodes[node]["level"]] - 1 for node in tree._level} == set(tree._level.values()) == {0, 1, 2}
    fabric = graph.subgraph([*tree.endpoints, *tree._level])
    shortest = dict(nx.all_pairs_shortest_path_length(fabric))
    for a in tree.endpoints:
        for b in tree.endpoints:
            nodes, _ = tree.route(a, b)
            heights = [tiers.get(graph.nodes[n].get("level"), 0) for n in nodes]
            top = heights.index(max(heights))
            assert len(nodes) - 1 == shortest[a][b], (a, b, nodes)
            assert heights[: top + 1] == sorted(heights[: top + 1]) and heights[top:] == sorted(heights[top:])[::-1]


def test_dmodk_up_ports_take_the_destination_modulo_parents_then_cables():
    """Leaf up-port d mod (spines * cables): spine d mod spines, cable floor(d / spines) mod cables."""
    graph = leaf_spine(4, 2, 4, B, LAT, parallel=2)
    router = Router(graph)
    for d in range(4, 16):
        (_, leaf, _), (_, spine, cable), *_ = router.hops("gpu0", f"gpu{d}")
        assert (leaf, spine, cable) == ("leaf0", f"spine{d % 2}", (d // 2) % 2)


def test_simgrid_descends_on_the_cable_of_the_source_index():
    """SimGrid 3.32 FatTreeZone: down cable = source position mod the bundle's cables."""
    graph = leaf_spine(4, 2, 4, B, LAT, parallel=2)
    dmodk, simgrid = Router(graph), Router(graph, routing="simgrid")
    for a in range(4):
        for d in range(4, 16):
            ours, theirs = dmodk.hops(f"gpu{a}", f"gpu{d}"), simgrid.hops(f"gpu{a}", f"gpu{d}")
            assert ours[:2] == theirs[:2]
            assert theirs[2][2] == a % 2 and ours[2][2] == (d // 2) % 2


def test_simgrid_down_cables_collide_on_a_shift_where_dmodk_does_not():
    """Recursive doubling's distance-8 exchange on SimGrid's 2;4,4;1,2;1,2 tree: two flows per down cable."""
    graph = leaf_spine(4, 2, 4, B, LAT, parallel=2)
    peaks = {}
    for routing in ("dmodk", "simgrid"):
        network = Network(graph, routing=routing)
        flows = Counter(link for i in range(16) for link in network.route(i, i ^ 8))
        peaks[routing] = max(flows.values())
    assert peaks == {"dmodk": 1, "simgrid": 2}


@pytest.mark.parametrize("k", [4, 8])
def test_dmodk_on_a_fat_tree_climbs_by_the_destination_alone_unlike_al_fares_tables(k):
    """Study r26 F4: docs/topology.md called this Al-Fares' two-level table, whose suffix port (i - 2 + z) mod
    (k/2) also depends on the switch's position z in its pod. Under d-mod-k every edge switch of a pod sends to
    GPU d through agg{p}_{d mod k/2}, then core ⌊d/(k/2)⌋ mod k/2 of that aggregation switch."""
    graph = fat_tree(k, B, LAT)
    router = Router(graph)
    half, ranks = k // 2, gpus(graph)
    per_pod = half * half
    for d, target in enumerate(ranks):
        for source in ranks[::half]:
            pod = ranks.index(source) // per_pod
            if pod == d // per_pod:
                continue
            nodes = router.path(source, target)
            assert nodes[2] == f"agg{pod}_{d % half}"
            assert nodes[3] == f"core{(d % half) * half + (d // half) % half}"


def test_dmodk_destinations_are_port_indices_of_cluster_nics():
    graph = cluster("dgx_a100", 2, fabric="leaf_spine",
                    fabric_params={"leaves": 4, "spines": 2, "hosts_per_leaf": 4, "bandwidth_Bps": B, "latency_s": LAT})
    tree = UpDown(graph, simgrid=False)
    assert tree.endpoints == {f"n{h}.nic{j}": j * 2 + h for h in range(2) for j in range(8)}


def test_dmodk_on_a_graph_without_levels_is_an_error_naming_the_routing():
    with pytest.raises(TopologyError, match="no d-mod-k route .* needs a fat-tree or leaf-spine fabric") as error:
        Router(torus([4], B, LAT), routing="dmodk").path("gpu0", "gpu2")
    assert error.value.path == "routing"


def _without(graph: nx.DiGraph, *cables: tuple[str, str]) -> nx.DiGraph:
    for u, v in cables:
        graph.remove_edge(u, v)
        graph.remove_edge(v, u)
    return graph


def test_a_missing_cable_names_the_climb_the_switches_short_of_cables_and_the_routings_that_avoid_it():
    """Study r26 F2: without agg0_1-core2, gpu4's climb for gpu1 (port 1: agg1_1, then core2) ends at core2,
    which reaches no switch above gpu1 (pod 0's aggregation switches); the message blamed core2 for having no
    link up, as cores never have."""
    graph = _without(fat_tree(4, B, LAT), ("agg0_1", "core2"))
    with pytest.raises(TopologyError) as error:
        Router(graph).path("gpu4", "gpu1")
    assert error.value.path == "routing"
    assert str(error.value.message) == (
        "no d-mod-k route from 'gpu4' to 'gpu1': its climb gpu4 → edge1_0 → agg1_1 → core2 ends at 'core2', "
        "which has no cable down to 'agg0_0' or 'agg0_1', the switches above 'gpu1' one level lower (switches "
        "with fewer cables than most of their level: 'agg0_1' 1 of 2 up-ports, 'core2' 3 of 4 down-ports); "
        "d-mod-k needs every cable of a regular fat-tree (OpenSM's ftree refuses such a fabric and falls back "
        "to min-hop): routing 'shortest' or 'ecmp_hash' takes shortest paths around missing cables")
    ranks = gpus(graph)
    for routing in ("shortest", "ecmp_hash"):
        router = Router(graph, routing=routing)
        for a in ranks:
            for b in ranks:
                nodes = router.path(a, b)
                assert len(nodes) <= 7 and ("agg0_1", "core2") not in zip(nodes, nodes[1:])


def test_a_switch_cut_off_from_the_level_above_is_named_with_its_usual_up_ports():
    """Every spine lost its cable to leaf0 alike, so only leaf0 is short of cables for its level."""
    graph = _without(leaf_spine(4, 4, 4, B, LAT), *(("leaf0", f"spine{s}") for s in range(4)))
    with pytest.raises(TopologyError) as error:
        Router(graph).path("gpu0", "gpu4")
    assert error.value.message.startswith(
        "no d-mod-k route from 'gpu0' to 'gpu4': its climb gpu0 → leaf0 ends at 'leaf0', which has no cable to a "
        "higher level where most switches of its level have 4 (switches with fewer cables than most of their "
        "level: 'leaf0' 0 of 4 up-ports); d-mod-k needs every cable")


@pytest.mark.parametrize("simgrid", [False, True])
@pytest.mark.parametrize(
    "graph",
    [
        fat_tree(6, B, LAT),
        pgft([4, 4, 4], [1, 4, 4], B, LAT),
        pgft([2, 3, 2], [1, 2, 3], B, LAT, parallel=[1, 2, 2]),
        leaf_spine(3, 2, 5, B, LAT, parallel=3),
        cluster("dgx_a100", 9, fabric="fat_tree", fabric_params={"k": 8, "bandwidth_Bps": B, "latency_s": LAT}),
        leaf_spine(3, 1, 2, B, LAT),
        pgft([2, 2, 2], [1, 1, 2], B, LAT),
    ],
    ids=["fat_tree", "4_ary_3_tree", "pgft_cables", "leaf_spine_cables", "partly_filled", "one_spine",
         "one_up_port"],
)
def test_routes_of_many_pairs_at_once_are_route_of_each(graph, simgrid):
    """To every endpoint from every endpoint and, under d-mod-k, from every switch (a switch with one up-port
    goes down to a target below it, where an endpoint with one up-port always climbs)."""
    tree = UpDown(graph, simgrid=simgrid)
    pairs = [(a, b) for a in (tree.endpoints if simgrid else tree._arrays().nodes) for b in tree.endpoints]
    ids = tree._arrays().ids
    found = tree.routes_of(np.array([ids[a] for a, _ in pairs]), np.array([ids[b] for _, b in pairs]))
    assert found.hops.shape[1] == found.cables.shape[1] + 1 == found.hop_edges.shape[1] + 1
    for (a, b), row, pins, edges in zip(pairs, found.hops.tolist(), found.cables.tolist(), found.hop_edges.tolist()):
        nodes, cables = tree.route(a, b)
        assert (tuple(found.nodes[n] for n in row if n >= 0), tuple(c for c in pins if c >= 0)) == (nodes, cables)
        assert [found.edges[e] for e in edges if e >= 0] == list(zip(nodes, nodes[1:]))


@pytest.mark.parametrize("simgrid", [False, True])
@pytest.mark.parametrize(
    "graph",
    [
        fat_tree(6, B, LAT),
        pgft([2, 3, 2], [1, 2, 3], B, LAT, parallel=[1, 2, 2]),
        cluster("dgx_a100", 9, fabric="fat_tree", fabric_params={"k": 8, "bandwidth_Bps": B, "latency_s": LAT}),
        pgft([2, 2, 2], [1, 1, 2], B, LAT),
    ],
    ids=["fat_tree", "pgft_cables", "partly_filled", "one_up_port"],
)
def test_a_led_route_is_its_lead_hop_then_the_route_from_the_switch_it_reaches(graph, simgrid):
    """The law the network's composed routes rest on: every route from an endpoint with a lead to another
    endpoint is that hop (edge and cable) followed by :meth:`UpDown.routes_of` from the switch it reaches."""
    tree = UpDown(graph, simgrid=simgrid)
    endpoints = list(tree.endpoints)
    numbers = tree.numbers([*endpoints, "no such node"])
    assert numbers[-1] == -1 and (numbers[:-1] >= 0).all()
    edge, cable, start = tree.leads(numbers[:-1])
    assert (edge >= 0).any() != simgrid
    for a, e, c, s in zip(endpoints, edge.tolist(), cable.tolist(), start.tolist()):
        if e < 0:
            assert s == tree.numbers([a])[0]
            continue
        targets = [b for b in endpoints if b != a]
        rest = tree.routes_of(np.full(len(targets), s), tree.numbers(targets))
        for b, row, pins in zip(targets, rest.hops.tolist(), rest.cables.tolist()):
            nodes, cables = tree.route(a, b)
            assert tree.edges[e] == nodes[:2] and cables[0] == c
            assert (tuple(rest.nodes[n] for n in row if n >= 0), tuple(k for k in pins if k >= 0)) == (
                nodes[1:], cables[1:])


def test_routes_at_once_raise_where_route_does():
    tree = UpDown(torus([4], B, LAT), simgrid=False)
    with pytest.raises(TopologyError, match="no d-mod-k route") as error:
        tree.routes_of(tree.numbers(["gpu0", "gpu1"]), tree.numbers(["gpu1", "gpu2"]))
    assert error.value.path == "routing"


def _layered(seed: int) -> nx.DiGraph:
    """A random layered fabric: uneven up-links, bundles of separate cables, hosts on any level, ports and
    tier names sometimes. Routes on it often leave a destination's own climb on the way down."""
    draw = random.Random(seed)
    graph = nx.DiGraph()
    levels = [[f"s{at}_{i}" for i in range(draw.randint(1, 4))] for at in range(draw.randint(1, 4))]
    tiered = draw.random() < 0.3
    for at, switches in enumerate(levels):
        for name in switches:
            graph.add_node(name, kind="switch", **({"level": f"t{at}"} if tiered else {}))
    for below, above in zip(levels, levels[1:]):
        for name in below:
            for parent in draw.sample(above, draw.randint(1 if draw.random() < 0.9 else 0, len(above))):
                cables = draw.choice([1, 1, 2, 3])
                add_cable(graph, name, parent, B, LAT, "fabric", cables=cables, striped=False if cables > 1 else None)
    ported = draw.random() < 0.5
    for host in range(draw.randint(2, 12)):
        graph.add_node(f"h{host}", kind="gpu", **({"port": draw.randint(0, 50)} if ported else {}))
        switches = levels[0 if draw.random() < 0.85 else draw.randrange(len(levels))]
        for name in draw.sample(switches, draw.randint(1, min(2, len(switches)))):
            cables = draw.choice([1, 1, 2])
            add_cable(graph, f"h{host}", name, B, LAT, "fabric", cables=cables, striped=False if cables > 1 else None)
    return graph


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_routes_at_once_on_irregular_fabrics_are_route_of_each_or_raise_as_it_does(seed):
    graph = _layered(seed)
    try:
        tree = UpDown(graph, simgrid=False)
    except TopologyError:
        return
    pairs = [(a, b) for a in tree.endpoints for b in tree.endpoints]
    found = []
    for a, b in pairs:
        try:
            found.append(tree.route(a, b))
        except TopologyError:
            found.append(None)
    routed = [(pair, route) for pair, route in zip(pairs, found) if route is not None]
    if len(routed) < len(pairs):
        with pytest.raises(TopologyError):
            _led_routes(UpDown(graph, simgrid=False), pairs)
    at_once = _led_routes(UpDown(graph, simgrid=False), [pair for pair, _ in routed])
    assert at_once == [route for _, route in routed]


def _led_routes(tree: UpDown, pairs: list[tuple]) -> list[tuple[tuple, tuple]]:
    """Nodes and cables of the routes of `pairs` of endpoints as the network composes them: the lead hop of a
    source that has one (:meth:`UpDown.leads`, checked against the edge it names), then :meth:`UpDown.routes_of`
    from the switch it reaches, all pairs at once; from the source itself otherwise."""
    source, target = tree.numbers([a for a, _ in pairs]), tree.numbers([b for _, b in pairs])
    edge, cable, start = tree.leads(source)
    led = (edge >= 0) & (source != target)
    rest = tree.routes_of(np.where(led, start, source), target)
    routes = [(tuple(rest.nodes[n] for n in row if n >= 0), tuple(c for c in pins if c >= 0))
              for row, pins in zip(rest.hops.tolist(), rest.cables.tolist())]
    for k in np.flatnonzero(led).tolist():
        nodes, cables = routes[k]
        assert tree.edges[edge[k]] == (pairs[k][0], nodes[0])
        routes[k] = (pairs[k][0], *nodes), (int(cable[k]), *cables)
    return routes


def test_simgrid_routes_on_an_irregular_fabric_stop_with_an_error_where_the_port_scan_finds_no_way_down():
    """SimGrid's descent scans down-ports from the source's index; on this irregular fabric some scans find
    none, which used to repeat forever."""
    tree = UpDown(_layered(288), simgrid=True)
    failed = []
    for a in tree.endpoints:
        for b in tree.endpoints:
            try:
                tree.route(a, b)
            except TopologyError as error:
                failed.append(error)
    assert any("SimGrid's rule needs a regular fat-tree" in str(error) for error in failed)
    assert all(error.path == "routing" for error in failed)
