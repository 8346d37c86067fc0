"""Tests of simnet.network: ranks, links, routes and tier efficiency."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet.engine import simulate
from simnet.errors import SimnetError
from simnet.network import Network
from simnet.schedule import Schedule, Transfer
from simnet.topology import cluster, switch
from simnet.topology import leaf_spine as leaf_spine_builder
from simnet.topology.routing import Router

B = 12.5e9
LAT = 1e-6
MIB = 2**20


def flows(pairs: list[tuple[int, int]], nbytes: int) -> Schedule:
    """Independent transfers (no dependencies), all ready at time 0."""
    nranks = 1 + max(max(pair) for pair in pairs)
    transfers = tuple(Transfer(src=s, dst=d, chunks=(0,), nbytes=nbytes) for s, d in pairs)
    return Schedule(collective="allreduce", nranks=nranks, chunk_bytes=(1,), transfers=transfers)


def test_tier_efficiency_scales_bandwidth_and_is_validated():
    graph = switch(2, B, LAT, tier="nvlink")
    net = Network(graph, tier_efficiency={"nvlink": 0.8})
    assert net.bandwidth_Bps.tolist() == [0.8 * B] * 4
    assert net.links_frame()["efficiency"].tolist() == [0.8] * 4
    assert graph.edges["gpu0", "switch"]["bandwidth_Bps"] == B
    assert net.transfer_time_s(0, 1, 2**20) == pytest.approx(2 * LAT + 2**20 / (0.8 * B), rel=1e-12)
    with pytest.raises(SimnetError, match="no tier 'ib'") as info:
        Network(graph, tier_efficiency={"ib": 0.5})
    assert info.value.path == "tier_efficiency.ib"
    for bad in (0, 1.5, -1, "x", True):
        with pytest.raises(SimnetError, match=r"\(0, 1\]"):
            Network(graph, tier_efficiency={"nvlink": bad})


def test_ranks_links_and_routes_follow_the_graph():
    net = Network(switch(3, B, LAT))
    assert net.size == 3 and net.ranks == ("gpu0", "gpu1", "gpu2")
    route = net.route(0, 2)
    assert route == (net.link("gpu0", "switch"), net.link("switch", "gpu2"))
    assert net.route(1, 1) == ()
    assert net.transfer_time_s(0, 2, 1000) == 2 * LAT + 1000 / B
    with pytest.raises(SimnetError, match="does not exist"):
        net.route(0, 3)


@pytest.mark.parametrize("bundles", ["cables", "merged"])
@pytest.mark.parametrize("pxn", [False, True])
@pytest.mark.parametrize("routing", ["shortest", "ecmp_hash"])
def test_routes_number_the_routers_hops_whatever_stretches_they_share(bundles, pxn, routing):
    """Routes between rails are numbered from stretches kept across routes; each must still be its own hops."""
    graph = cluster("dgx1", 3, fabric="leaf_spine", pxn=pxn, fabric_params={
        "leaves": 2, "spines": 2, "hosts_per_leaf": 6, "parallel": 2, "bandwidth_Bps": B, "latency_s": LAT})
    net = Network(graph, bundles=bundles, routing=routing)
    router = Router(graph, routing=routing)
    for src in range(net.size):
        for dst in range(net.size):
            hops = router.hops(net.ranks[src], net.ranks[dst])
            expected = tuple(net.link(u, v, cable if bundles == "cables" else 0) for u, v, cable in hops)
            assert net.route(src, dst) == expected, (src, dst)


def test_a_fabric_bundle_is_one_link_per_cable_and_merging_is_an_option():
    """leaf0 -> spine0 with 2 cables: two links of half the bandwidth, or one merged link on request."""
    graph = leaf_spine_builder(4, 2, 4, B, LAT, parallel=2)
    cables = Network(graph)
    frame = cables.links_frame().set_index(["src", "dst", "cable"])
    assert frame.loc[("leaf0", "spine0", 1), "bandwidth_Bps"] == B
    assert cables.link("leaf0", "spine0", 1) == cables.link("leaf0", "spine0") + 1
    assert len(cables.links) == graph.number_of_edges() + 2 * 8
    merged = Network(graph, bundles="merged")
    assert len(merged.links) == graph.number_of_edges() and merged.bandwidth_Bps.max() == 2 * B
    assert [merged.links[i][:2] for i in merged.route(0, 9)] == [cables.links[i][:2] for i in cables.route(0, 9)]
    with pytest.raises(SimnetError, match="must be one of") as error:
        Network(graph, bundles="striped")
    assert error.value.path == "bundles"


def test_flows_pinned_to_the_two_cables_of_a_bundle_each_run_alone():
    """d-mod-k pins gpu8 and gpu10 to the two cables leaf0 -> spine0: each runs alone at B."""
    graph = leaf_spine_builder(4, 2, 4, B, LAT, parallel=2)
    schedule = flows([(0, 8), (1, 10)], 8 * MIB)
    for bundles in ("cables", "merged"):
        network = Network(graph, bundles=bundles)
        up = {network.route(0, 8)[1], network.route(1, 10)[1]}
        assert len(up) == (2 if bundles == "cables" else 1)
        assert simulate(network, schedule).time_s == pytest.approx(network.transfer_time_s(0, 8, 8 * MIB), rel=1e-12)


def test_ecmp_hash_can_pin_two_flows_to_one_cable_of_a_bundle_where_merging_hides_it():
    graph = leaf_spine_builder(2, 1, 8, B, LAT, parallel=4, oversubscription=2.0)
    network = Network(graph, routing="ecmp_hash")
    pairs = [(i, 8 + i) for i in range(8)]
    cables = [network.route(s, d)[1] for s, d in pairs]
    assert len(set(cables)) < len(cables)
    slowest = simulate(network, flows(pairs, 8 * MIB)).time_s
    merged = simulate(Network(graph, routing="ecmp_hash", bundles="merged"), flows(pairs, 8 * MIB)).time_s
    assert slowest > merged


def test_striped_bundles_stay_one_link():
    """DGX-1's double NVLinks and a GPU's links to an NVSwitch are striped by the hardware."""
    from simnet.topology import dgx1, dgx_a100

    for graph, (u, v) in ((dgx1(), ("gpu0", "gpu3")), (dgx_a100(), ("gpu0", "nvswitch0"))):
        network = Network(graph)
        assert graph.edges[u, v]["cables"] > 1
        assert network.links_frame().query("src == @u and dst == @v")["bandwidth_Bps"].tolist() == [
            graph.edges[u, v]["bandwidth_Bps"]
        ]


def test_routing_override_is_validated_and_applied():
    graph = leaf_spine_builder(2, 2, 2, B, LAT)
    assert Network(graph).routing == "dmodk" and Network(graph, routing="shortest").routing == "shortest"
    with pytest.raises(SimnetError) as error:
        Network(graph, routing="random")
    assert error.value.path == "routing"


def test_a_placement_puts_ranks_on_the_gpus_it_lists():
    graph = switch(4, B, LAT)
    network = Network(graph, ranks=["gpu2", "gpu0", "gpu3"])
    assert network.size == 3 and network.ranks == ("gpu2", "gpu0", "gpu3")
    assert network.links[network.route(0, 1)[0]][:2] == ("gpu2", "switch")
    for ranks, path in ((["gpu0", "gpu0"], "ranks"), (["gpu0", "switch"], "ranks[1]"), ([], "ranks")):
        with pytest.raises(SimnetError) as error:
            Network(graph, ranks=ranks)
        assert error.value.path == path


def _bundled_inside(graph):
    """`graph` with every GPU's PCIe cable to its switch in server 1 made a bundle of two separate cables."""
    for u, v, data in list(graph.edges(data=True)):
        if graph.nodes[u]["kind"] == "gpu" and graph.nodes[v]["kind"] == "switch" and graph.nodes[v].get("host") == 1:
            for a, b in ((u, v), (v, u)):
                graph.edges[a, b].update(cables=2, striped=False)
    return graph


def _exits_differ(graph):
    """`graph` with the NVLink links and the link between the CPUs of 1 ms, the other links inside a server of
    0 s, and the links between servers and the fabric of 0 s at server 1 and of 1 ms elsewhere: servers built
    alike inside, where a route between GPUs of the two CPUs stays inside servers 0 and 2 and leaves server 1
    through the fabric."""
    for u, v, data in graph.edges(data=True):
        home, host = graph.nodes[u].get("host"), graph.nodes[v].get("host")
        if home is not None and home == host:
            data["latency_s"] = 1e-3 if "nvswitch" in u + v or "cpu" in u and "cpu" in v else 0.0
        elif (home is None) != (host is None):
            data["latency_s"] = 0.0 if 1 in (home, host) else 1e-3
    return graph


def _rails_swapped(graph):
    """`graph` with the rails of the first two NICs and of the first two GPUs of server 1 swapped, cables
    unchanged: servers built alike, whose GPUs leave through the NICs at other places."""
    for kind in ("nic", "gpu"):
        first, second = [n for n, data in graph.nodes(data=True) if data.get("host") == 1 and data["kind"] == kind][:2]
        graph.nodes[first]["rail"], graph.nodes[second]["rail"] = graph.nodes[second]["rail"], graph.nodes[first]["rail"]
    return graph


FAT_TREE = {"k": 8, "bandwidth_Bps": B, "latency_s": LAT}
BATCHED = {
    "a100_partly_filled_fat_tree": lambda: cluster("dgx_a100", 9, fabric="fat_tree", fabric_params=FAT_TREE),
    "h100_pxn": lambda: cluster("dgx_h100", 3, fabric="fat_tree", fabric_params=FAT_TREE, pxn=True),
    "a100_leaf_spine_cables": lambda: cluster("dgx_a100", 4, fabric="leaf_spine", fabric_params={
        "leaves": 4, "spines": 2, "hosts_per_leaf": 8, "bandwidth_Bps": B, "latency_s": LAT, "parallel": 2}),
    "a100_cables_inside": lambda: _bundled_inside(cluster("dgx_a100", 3, fabric="fat_tree", fabric_params=FAT_TREE)),
    "a100_exits_differ": lambda: _exits_differ(cluster("dgx_a100", 3, fabric="fat_tree", fabric_params=FAT_TREE)),
    "h100_pxn_rails_swapped": lambda: _rails_swapped(cluster("dgx_h100", 3, fabric="fat_tree", fabric_params=FAT_TREE,
                                                             pxn=True)),
    "switch": lambda: switch(16, B, LAT),
}


@pytest.mark.parametrize("options", [{}, {"bundles": "merged"}, {"routing": "simgrid"}, {"routing": "ecmp_hash"},
                                     {"routing": "shortest"}], ids=["dmodk", "merged", "simgrid", "hash", "shortest"])
@pytest.mark.parametrize("name", list(BATCHED))
def test_routes_of_many_pairs_are_route_of_each(name, options):
    """Routes composed from stretches (rails over an up/down fabric) and the rest, cold and cached, in any
    order and with switch endpoints among them, are exactly what route() gives pair by pair."""
    batched, single = Network(BATCHED[name](), **options), Network(BATCHED[name](), **options)
    n = batched.size
    src, dst = np.divmod(np.arange(n * n), n)
    order = np.random.default_rng(1).permutation(n * n)
    src, dst = src[order], dst[order]
    switch_node = next(node for node, kind in batched.graph.nodes(data="kind") if kind == "switch")
    extra = batched.endpoint(switch_node)
    assert single.endpoint(switch_node) == extra
    src, dst = np.append(src, [extra, 0]), np.append(dst, [0, extra])
    half = len(src) // 2
    first = batched.routes(src[:half], dst[:half])
    assert first + batched.routes(src[half:], dst[half:]) == [single.route(a, b) for a, b in zip(src.tolist(),
                                                                                                 dst.tolist())]
    assert batched.routes(src, dst)[:half] == first
    fresh = Network(BATCHED[name](), **options)
    assert fresh.endpoint(switch_node) == extra
    twice = np.concatenate([src, src[::3]]), np.concatenate([dst, dst[::3]])
    expected = [single.route(a, b) for a, b in zip(*(side.tolist() for side in twice))]
    assert fresh.route_table(*twice).tuples() == expected == batched.route_table(*twice).tuples()
    composes = name != "switch" and options.get("routing") not in ("ecmp_hash", "shortest")
    assert (any(piece >= 0 for piece, _ in batched._heads.values())
            == any(piece >= 0 for piece, _ in batched._tails.values()) == composes)


@pytest.mark.parametrize("name", list(BATCHED))
def test_routes_composed_without_keeping_them_per_pair_are_route_of_each(name):
    """With ``keep=False`` the pairs composed from pieces are not kept per pair (every other pair is) and are
    composed again when asked again; pairs route() found before, fewer or more than those asked, are taken
    from it (and kept as pieces of their own); kept afterwards, all are looked up. Each route is route()'s
    throughout."""
    loose, single = Network(BATCHED[name]()), Network(BATCHED[name]())
    n = loose.size
    src, dst = np.divmod(np.random.default_rng(3).permutation(n * n), n)
    expected = [single.route(a, b) for a, b in zip(src.tolist(), dst.tolist())]
    fresh = Network(BATCHED[name]())
    railed = fresh._has_rails()
    composed = len(fresh._composed(src, dst)[0]) if railed else 0
    assert loose.route_table(src, dst, keep=False).tuples() == expected
    assert len(loose._kept_routes.values) == (n * n - composed if railed else 0)
    for a, b in zip(src[:5].tolist(), dst[:5].tolist()):
        loose.route(a, b)
    assert loose.route_table(src, dst, keep=False).tuples() == expected
    for a, b in zip(src[-300:].tolist(), dst[-300:].tolist()):
        loose.route(a, b)
    assert loose.route_table(src[-200:], dst[-200:], keep=False).tuples() == expected[-200:]
    assert loose.route_table(src, dst).tuples() == expected
    assert len(loose._kept_routes.values) == (n * n if railed else 0)


def test_servers_route_alike_inside_only_where_their_ways_out_and_in_cost_alike():
    """The servers of :func:`_exits_differ` are built alike, but a route inside server 1 is searched over the
    fabric too, and one inside server 0 or 2 is not: server 1 is of another kind, and each pair inside a server
    is the route of its own (:func:`test_routes_of_many_pairs_are_route_of_each` checks all pairs)."""
    graph = _exits_differ(cluster("dgx_a100", 3, fabric="fat_tree", fabric_params=FAT_TREE))
    router = Router(graph)
    kind, place, firsts = router.server_kinds(["n0.gpu0", "n1.gpu0", "n2.gpu7", "n0.nvswitch0", "leaf0"])
    assert kind.tolist() == [0, 1, 0, 0, -1] and place.tolist() == [0, 0, 7, 22, -1]
    assert [nodes[0] for nodes in firsts] == ["n0.gpu0", "n1.gpu0"]
    assert router.inside_walk("n0.gpu0", "n0.gpu7") == ("n0.gpu0", "n0.pcie0", "n0.cpu0", "n0.cpu1", "n0.pcie3",
                                                         "n0.gpu7")
    assert router.inside_walk("n1.gpu0", "n1.gpu7") is None
    assert "host" not in graph.nodes[router.path("n1.gpu0", "n1.gpu7")[3]]
    assert Router(graph, routing="ecmp_hash").server_kinds(["n0.gpu0"])[0].tolist() == [-1]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), routing=st.sampled_from(["dmodk", "simgrid", "shortest"]),
       unlike=st.booleans())
def test_routes_inside_servers_with_random_latencies_are_route_of_each(seed, routing, unlike):
    """Links inside servers of random latencies (ties likely), the same at every server or, with `unlike`, drawn
    anew for server 2; links between servers and the fabric of random latencies per server."""
    rng = np.random.default_rng(seed)
    graph = cluster("dgx_a100", 3, fabric="fat_tree", fabric_params=FAT_TREE)
    drawn = {}
    choices = [0.0, 1e-6, 1e-6, 1e-4]
    exits = {host: rng.choice([0.0, 1e-6, 1e-3]) for host in range(3)}
    for u, v, data in graph.edges(data=True):
        home, host = graph.nodes[u].get("host"), graph.nodes[v].get("host")
        if home is not None and home == host:
            key = (u.split(".")[1], v.split(".")[1], unlike and home == 2)
            data["latency_s"] = drawn.setdefault(key, rng.choice(choices))
        elif (home is None) != (host is None):
            data["latency_s"] = exits[host if home is None else home]
    batched, single = Network(graph, routing=routing), Network(graph, routing=routing)
    src, dst = np.divmod(rng.permutation(batched.size ** 2), batched.size)
    assert batched.route_table(src, dst).tuples() == [single.route(a, b) for a, b in zip(src.tolist(), dst.tolist())]


def test_routes_of_many_pairs_on_placed_ranks_and_after_pickling_are_route_of_each():
    """Ranks placed on a permutation of a subset of the GPUs; a network pickled after it composed routes."""
    import pickle

    graph = cluster("dgx_h100", 3, fabric="fat_tree", fabric_params=FAT_TREE, pxn=True)
    placed = list(np.random.default_rng(2).permutation([node for node, kind in graph.nodes(data="kind")
                                                        if kind == "gpu"])[:20])
    batched, single = Network(graph, ranks=placed), Network(graph, ranks=placed)
    src, dst = np.divmod(np.arange(400), 20)
    expected = [single.route(a, b) for a, b in zip(src.tolist(), dst.tolist())]
    assert batched.routes(src[:200], dst[:200]) == expected[:200]
    copy = pickle.loads(pickle.dumps(batched))
    assert copy.routes(src[::-1], dst[::-1])[::-1] == batched.routes(src, dst) == expected


@pytest.mark.parametrize("src, dst", [(np.full(64, -1), np.zeros(64, dtype=int)), (np.zeros(64, dtype=int),
                                      np.full(64, 16)), (np.array([1.5]), np.array([2])),
                                     (np.arange(3), np.arange(2))])
def test_routes_of_endpoints_that_do_not_exist_are_an_error(src, dst):
    network = Network(cluster("dgx_a100", 2, fabric="fat_tree", fabric_params=FAT_TREE))
    with pytest.raises(SimnetError):
        network.routes(src, dst)
    with pytest.raises(SimnetError):
        network.route_table(src, dst)
    assert network.routes(np.array([0]), np.array([15])) == [network.route(0, 15)]


def test_routes_of_a_server_without_a_nic_on_the_rail_raise_as_route_does():
    graph = cluster("dgx_a100", 2, fabric="fat_tree", fabric_params=FAT_TREE)
    nic = next(node for node, kind in graph.nodes(data="kind") if kind == "nic" and graph.nodes[node]["rail"] == 3)
    del graph.nodes[nic]["rail"]
    network = Network(graph)
    with pytest.raises(Exception) as single:
        network.route(3, 11)
    with pytest.raises(type(single.value), match=str(single.value).split(":")[0]):
        Network(graph).routes(np.arange(16).repeat(16), np.tile(np.arange(16), 16))


def test_a_group_inside_a_server_without_nvls_is_not_reduced_by_the_fabrics_sharp_switch():
    """The GPUs of one DGX H100 built with ``nvls=False`` on a SHARP fabric: their reduce-capable switch must be
    in their server, so the NVLS group is refused, while a rail's GPUs across servers still meet at the SHARP
    leaf of their rail, and with NVLS a server's group meets at its own NVSwitch."""
    fabric = {"leaves": 8, "spines": 2, "hosts_per_leaf": 2, "bandwidth_Bps": 50e9, "latency_s": 1e-6, "sharp": True}
    without = Network(cluster("dgx_h100", 2, fabric="leaf_spine", fabric_params=fabric,
                              node_params={"nvls": False}))
    with pytest.raises(SimnetError, match=r"ranks \[0, 1, 2, 3, 4, 5, 6, 7\] are GPUs of one server, which has no "
                                          r"reduce-capable switch .*; the fabric's SHARP switches") as raised:
        without.reduction_switch(range(8))
    assert raised.value.path == "switches"
    rail = without.reduction_switch([0, 8])
    assert without.graph.nodes[rail].get("host") is None
    with_nvls = Network(cluster("dgx_h100", 2, fabric="leaf_spine", fabric_params=fabric))
    inside = with_nvls.reduction_switch(range(8))
    assert with_nvls.graph.nodes[inside]["host"] == with_nvls.graph.nodes[with_nvls.ranks[0]]["host"]


def test_on_a_topology_of_one_server_a_reduce_capable_switch_without_a_host_is_that_servers():
    """A hand-written server whose NVSwitch names no host (the contract asks it only of GPUs, NICs and CPUs)."""
    from simnet.topology import loads

    server = loads("nodes:\n" + "".join(f"- {{name: gpu{i}, kind: gpu, host: 0, local_rank: {i}}}\n" for i in range(4))
                   + "- {name: nvs, kind: switch, reduce: true}\nlinks:\n"
                   + "".join(f"- {{from: gpu{i}, to: nvs, bandwidth: 100 GB/s, latency: 0.25 us, tier: nvswitch}}\n"
                             for i in range(4)))
    assert Network(server).reduction_switch(range(4)) == "nvs"


def test_aggregation_switches_are_each_gpus_first_sharp_switch_below_the_groups():
    """A rail over two leaves meets at a spine and is first summed in each GPU's leaf; a rail on one leaf is summed
    there: SHARP's aggregation tree (the leaves) below :meth:`Network.reduction_switch` (its root)."""
    def rail_of_eight(hosts_per_leaf, leaves):
        return Network(cluster("dgx_h100", 8, fabric="leaf_spine", pxn=True, fabric_params={
            "leaves": leaves, "spines": 4, "hosts_per_leaf": hosts_per_leaf, "parallel": 1, "bandwidth_Bps": 50e9,
            "latency_s": 1e-6, "sharp": True}))

    two, one = rail_of_eight(4, 16), rail_of_eight(8, 8)
    rail = list(range(3, 64, 8))
    assert two.reduction_switch(rail).startswith("spine")
    assert two.aggregation_switches(rail) == ["leaf6"] * 4 + ["leaf7"] * 4
    assert one.aggregation_switches(rail) == [one.reduction_switch(rail)] * 8 == ["leaf3"] * 8


def _reduction_switch_by_definition(network, ranks):
    """:meth:`Network.reduction_switch` of a group spanning servers, every fabric SHARP switch scored in full."""
    nodes = [network.node(rank) for rank in ranks]
    scored = []
    fabric = [n for n, data in network.graph.nodes(data=True)
              if data.get("kind") == "switch" and data.get("reduce") and data.get("host") is None]
    for order, candidate in enumerate(fabric):
        routes = [network._router.hops(node, candidate) for node in nodes]
        hops = [len(route) for route in routes]
        scored.append(((max(hops), sum(hops), sum(map(network._off_rail, nodes, routes)), order), candidate))
    return min(scored)[1]


@pytest.mark.parametrize("graph", [
    cluster("dgx_h100", 4, fabric="leaf_spine", pxn=True, fabric_params={
        "leaves": 16, "spines": 2, "hosts_per_leaf": 2, "parallel": 1, "bandwidth_Bps": 50e9, "latency_s": 1e-6,
        "sharp": True}),
    switch(4, 1e9, 1e-6), leaf_spine_builder(4, 2, 3, 25e9, 1e-6)], ids=["h100_sharp", "switch", "leaf_spine"])
def test_fewest_hops_are_networkx_shortest_path_lengths_against_the_links(graph):
    """The numpy breadth-first search behind reduction_switch gives NetworkX's hop counts to every node of the
    graph, -1 where no path leads."""
    network = Network(graph)
    position = network._links_into()[2]
    for target in graph:
        expected = nx.single_source_shortest_path_length(graph.reverse(copy=False), target)
        hops = network._fewest_hops(target)
        assert {node: int(hops[position[node]]) for node in graph if hops[position[node]] >= 0} == expected


def test_reduction_switch_scores_in_full_only_switches_that_can_beat_the_best_so_far():
    """Groups of GPUs over 16 DGX H100 under 16 SHARP leaves (two per rail) and 4 spines: the switch is the one
    scoring every candidate in full gives, and no leaf whose shortest paths already score worse than the best so far
    is routed to: at most one route per GPU and spine, and one per GPU to the first candidate, where it was one per
    GPU and candidate (20 here), growing with the leaves, so with the servers."""
    network = Network(cluster("dgx_h100", 16, fabric="leaf_spine", pxn=True, fabric_params={
        "leaves": 16, "spines": 4, "hosts_per_leaf": 8, "parallel": 1, "bandwidth_Bps": 50e9, "latency_s": 1e-6,
        "sharp": True}))
    reference = Network(network.graph)
    routed = []
    hops = network._router.hops
    network._router.hops = lambda source, target: routed.append(target) or hops(source, target)
    for group in ([*range(3, 128, 8)], [*range(0, 32, 8)], [0, 9, 18, 27], [*range(0, 128, 5)]):
        routed.clear()
        assert network.reduction_switch(group) == _reduction_switch_by_definition(reference, group)
        assert len(routed) <= (1 + 4) * len(group)
