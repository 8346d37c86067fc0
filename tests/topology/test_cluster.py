"""Composition of server templates on fabrics."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path

import networkx as nx
import pytest

from simnet.algorithms import ALGORITHMS, blueconnect_allreduce
from simnet.engine import simulate
from simnet.errors import TopologyError
from simnet.network import Network
from simnet.topology import Router, build, calibrated_cluster, cluster, describe, gpus, load, reducing_switches
from simnet.topology.io import PRESETS as PRESET_DIR

PRESETS = sorted(PRESET_DIR.glob("*.yaml"))
CLUSTERS = [path for path in PRESETS if load(path).graph["builder"] == "cluster"]
RAIL_OPTIMISED = [path for path in CLUSTERS
                  if load(path).graph["params"]["fabric"] == "leaf_spine" and load(path).graph["params"]["rails"]]
GRAPHS = Path(__file__).parent / "golden" / "preset_graphs.json"

LEAF_SPINE = {"leaves": 8, "spines": 4, "hosts_per_leaf": 4, "bandwidth_Bps": 25e9, "latency_s": 1e-6}


def test_ranks_are_hierarchy_major():
    graph = cluster("dgx_a100", 3, fabric="leaf_spine", fabric_params=LEAF_SPINE)
    ranks = gpus(graph)
    assert ranks == [f"n{h}.gpu{i}" for h in range(3) for i in range(8)]
    assert [(graph.nodes[g]["host"], graph.nodes[g]["local_rank"]) for g in ranks] == [
        (h, i) for h in range(3) for i in range(8)
    ]
    assert graph.graph["host_transit"] is False


@pytest.mark.parametrize("nodes", [1, 2, 3, 4])
def test_rails_put_each_rail_on_its_own_leaf(nodes):
    """NIC ``j`` of every server on ``leaf{j}`` for any number of servers up to a leaf's ports, not only 4."""
    graph = cluster("dgx_a100", nodes, fabric="leaf_spine", fabric_params=LEAF_SPINE)
    by_rail, _ = _rail_leaves(graph)
    assert by_rail == {j: {f"leaf{j}"} for j in range(8)}
    for h in range(nodes):
        for j in range(8):
            assert graph.nodes[f"n{h}.nic{j}"]["port"] == 4 * j + h
    if nodes < 4:
        return
    for h in range(4):
        for j in range(8):
            assert graph.has_edge(f"n{h}.nic{j}", f"leaf{j}")
            assert graph.edges[f"n{h}.nic{j}", f"leaf{j}"]["bandwidth_Bps"] == 25e9
            assert graph.edges[f"n{h}.nic{j}", f"leaf{j}"]["tier"] == "ib"
    router = Router(graph)
    same_rail = router.path("n0.gpu5", "n3.gpu5")
    assert "leaf5" in same_rail and not any(n.startswith("spine") for n in same_rail)


@pytest.mark.parametrize("nodes", [1, 2, 3, 4])
def test_a_rail_optimised_leaf_spine_gives_each_rail_a_leaf_group_or_several_rails_a_leaf(nodes):
    """16 leaves for 8 rails: rail ``j`` fills ``leaf{2j}`` then ``leaf{2j+1}``; 4 leaves for 8 rails: rails
    ``2l`` and ``2l+1`` share ``leaf{l}`` and no other; the spines are cabled as the fabric says either way."""
    groups, shares = {**LEAF_SPINE, "leaves": 16, "hosts_per_leaf": 2}, {**LEAF_SPINE, "leaves": 4, "hosts_per_leaf": 8}
    group = cluster("dgx_a100", nodes, fabric="leaf_spine", fabric_params=groups)
    assert _rail_leaves(group)[0] == {j: {f"leaf{2 * j + h // 2}" for h in range(nodes)} for j in range(8)}
    shared = cluster("dgx_a100", nodes, fabric="leaf_spine", fabric_params=shares)
    assert _rail_leaves(shared)[0] == {j: {f"leaf{j // 2}"} for j in range(8)}
    full = cluster("dgx_a100", 4, fabric="leaf_spine", fabric_params=shares)
    assert [shared.edges[e] for e in shared.edges if "spine" in e[1]] == [full.edges[e] for e in full.edges
                                                                         if "spine" in e[1]]


def test_leaves_that_do_not_split_among_the_rails_take_the_rails_one_after_another():
    """3 leaves for 2 rails: no leaf per rail to keep, NIC ``j`` of server ``h`` takes port ``j * nodes + h``."""
    fabric = {"leaves": 3, "spines": 1, "hosts_per_leaf": 4, "bandwidth_Bps": 12.5e9, "latency_s": 1e-6}
    graph = cluster("abci_node", 3, fabric="leaf_spine", fabric_params=fabric)
    assert [graph.nodes[f"n{h}.nic{j}"]["port"] for j in range(2) for h in range(3)] == list(range(6))


def test_without_rails_a_server_sits_on_one_leaf():
    params = {"leaves": 4, "spines": 2, "hosts_per_leaf": 8, "bandwidth_Bps": 25e9, "latency_s": 1e-6}
    graph = cluster("dgx_a100", 4, fabric="leaf_spine", fabric_params=params, rails=False)
    for h in range(4):
        assert {v for j in range(8) for v in graph.successors(f"n{h}.nic{j}") if v.startswith("leaf")} == {f"leaf{h}"}


@pytest.mark.parametrize(
    ("fabric", "params"),
    [
        ("switch", {"bandwidth_Bps": 12.5e9, "latency_s": 1e-6}),
        ("fat_tree", {"k": 4, "bandwidth_Bps": 12.5e9, "latency_s": 1e-6}),
        ("torus", {"dims": [2, 2, 2], "bandwidth_Bps": 12.5e9, "latency_s": 1e-6}),
        ("leaf_spine", {"leaves": 2, "spines": 1, "hosts_per_leaf": 4, "bandwidth_Bps": 12.5e9, "latency_s": 1e-6}),
    ],
)
def test_every_fabric_composes(fabric, params):
    graph = cluster("abci_node", 4, fabric=fabric, fabric_params=params)
    info = describe(graph)
    assert info["gpus"] == 16 and info["hosts"] == 4
    assert info["nodes"]["nic"] == 8
    assert info["tiers"]["ib"]["links"] >= 8


def test_cluster_name_and_params_are_recorded():
    fabric = {"bandwidth_Bps": 25e9, "latency_s": 1e-6}
    graph = cluster("dgx1", 2, node_params={"nic_bandwidth_Bps": 25e9}, fabric_params=fabric)
    assert graph.graph["name"].startswith("cluster(2 x dgx1(nic_bandwidth=25 GB/s) on switch(")
    assert graph.graph["params"]["node_params"] == {"nic_bandwidth_Bps": 25e9}
    assert graph.edges["n0.nic0", "switch"]["bandwidth_Bps"] == 25e9


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"node": "dgx9", "nodes": 2}, "node"),
        ({"node": "dgx1", "nodes": 0}, "nodes"),
        ({"node": "dgx1", "nodes": 2, "fabric": "mesh"}, "fabric"),
        ({"node": "dgx1", "nodes": 2, "fabric": "fat_tree", "fabric_params": {"k": 2, "bandwidth_Bps": 1e9, "latency_s": 0.0}}, "fabric_params"),
        ({"node": "dgx1", "nodes": 2, "fabric": "fat_tree", "fabric_params": {"k": 3, "bandwidth_Bps": 1e9, "latency_s": 0.0}}, "fabric_params.k"),
        ({"node": "dgx1", "nodes": 2, "fabric": "fat_tree", "fabric_params": {"k": 4, "latency_s": 0.0}}, "fabric_params.bandwidth"),
        ({"node": "dgx1", "nodes": 2, "node_params": {"nvlink": 1}}, "node_params.nvlink"),
        ({"node": "dgx1", "nodes": 2, "rails": "yes"}, "rails"),
        ({"node": "dgx_b200", "nodes": 2, "fabric_params": {"bandwidth_Bps": 1e9, "latency_s": 0.0, "sharp": "on"}},
         "fabric_params.sharp"),
        ({"node": "dgx_b200", "nodes": 2, "node_params": {"nvls": "off"}}, "node_params.nvls"),
        ({"node": "dgx_a100", "nodes": 5, "fabric": "leaf_spine", "fabric_params": LEAF_SPINE}, "nodes"),
    ],
)
def test_bad_arguments_name_their_key(kwargs, path):
    with pytest.raises(TopologyError) as error:
        cluster(**kwargs)
    assert error.value.path == path
    assert "\n" not in str(error.value)


def _nics(graph: nx.DiGraph, path: list) -> list:
    return [node for node in path if graph.nodes[node]["kind"] == "nic"]


def _rail_nic(graph: nx.DiGraph, gpu) -> str:
    host, rail = graph.nodes[gpu]["host"], graph.nodes[gpu]["rail"]
    return next(n for n, data in graph.nodes(data=True)
                if data["kind"] == "nic" and data.get("host") == host and data.get("rail") == rail)


@pytest.mark.parametrize("path", CLUSTERS, ids=lambda p: p.stem)
def test_every_same_rail_pair_of_a_cluster_preset_goes_through_its_own_nics(path):
    """NCCL's GPU-NIC affinity: a GPU leaves and enters a server through the NIC of its rail."""
    graph = load(path)
    router = Router(graph)
    ranks = gpus(graph)
    nic = {gpu: _rail_nic(graph, gpu) for gpu in ranks}
    pairs = 0
    for a in ranks:
        for b in ranks:
            same_rail = graph.nodes[a]["rail"] == graph.nodes[b]["rail"]
            if same_rail and graph.nodes[a]["host"] != graph.nodes[b]["host"]:
                assert _nics(graph, router.path(a, b)) == [nic[a], nic[b]], (a, b)
                pairs += 1
    assert pairs >= len(ranks)


def test_cross_rail_routes_use_both_rails_nics_and_pxn_moves_to_the_destinations_rail_first():
    graph = load(CLUSTERS[[p.stem for p in CLUSTERS].index("dgx_a100_superpod_slice")])
    plain = Router(graph).path("n0.gpu0", "n1.gpu3")
    assert _nics(graph, plain) == ["n0.nic0", "n1.nic3"] and any(n.startswith("spine") for n in plain)
    pxn = Router(graph, pxn=True).path("n0.gpu0", "n1.gpu3")
    assert pxn[:3] == ["n0.gpu0", "n0.nvswitch0", "n0.gpu3"]
    assert _nics(graph, pxn) == ["n0.nic3", "n1.nic3"] and not any(n.startswith("spine") for n in pxn)
    assert Router(graph, pxn=True).path("n0.gpu2", "n1.gpu2") == Router(graph).path("n0.gpu2", "n1.gpu2")


def test_pxn_is_a_cluster_option_recorded_in_the_graph_and_name():
    graph = cluster("dgx_h100", 2, fabric_params={"bandwidth_Bps": 50e9, "latency_s": 1e-6}, pxn=True)
    assert graph.graph["pxn"] is True and graph.graph["name"].endswith("rails=True, pxn=True)")
    assert _nics(graph, Router(graph).path("n0.gpu1", "n1.gpu6")) == ["n0.nic6", "n1.nic6"]


def test_a_nic_cable_runs_at_the_lower_of_the_nic_port_and_the_fabric_port():
    """Two DGX H100 (400 Gb/s NDR NICs) on a 1 Gb/s switch: the link trains at 1 Gb/s."""
    graph = cluster("dgx_h100", 2, fabric_params={"bandwidth_Bps": 125e6, "latency_s": 1e-6})
    assert graph.edges["n0.nic0", "switch"]["bandwidth_Bps"] == 125e6
    assert "NIC cables 125 MB/s" in graph.graph["name"]
    assert Network(graph).route_bandwidth_Bps(0, 8) == 125e6
    fast = cluster("dgx_h100", 2, fabric_params={"bandwidth_Bps": 100e9, "latency_s": 1e-6})
    assert fast.edges["n0.nic0", "switch"]["bandwidth_Bps"] == 50e9
    assert "NIC cables 50 GB/s" in fast.graph["name"]


def test_rail_rings_load_every_nic_equally():
    """BlueConnect's 8 rail rings on a rail-optimised fabric: no NIC idle while its sibling carries double."""
    graph = load(CLUSTERS[[p.stem for p in CLUSTERS].index("dgx_a100_superpod_slice")])
    network = Network(graph)
    links = simulate(network, blueconnect_allreduce(32, 1 << 24, factors=[8, 4])).links()
    up = links[links["src"].str.contains("nic") & links["tier"].eq("ib")]
    assert len(up) == 32 and up["bytes"].nunique() == 1 and up["bytes"].iloc[0] > 0


def test_two_nvl72_racks_on_a_switch_build_hierarchy_major_and_route_rail_by_rail():
    graph = cluster("gb200_nvl72", 2, fabric_params={"bandwidth_Bps": 100e9, "latency_s": 1e-6, "sharp": True})
    ranks = gpus(graph)
    assert ranks == [f"n{h}.gpu{i}" for h in range(2) for i in range(72)]
    assert [(graph.nodes[g]["host"], graph.nodes[g]["socket"] // 2) for g in ranks] == [
        (h, tray) for h in range(2) for tray in range(18) for _ in range(4)
    ]
    assert all(graph.nodes[f"n{h}.nic{j}"]["port"] == 2 * j + h for h in range(2) for j in range(72))
    router = Router(graph)
    for i in (0, 37, 71):
        assert _nics(graph, router.path(f"n0.gpu{i}", f"n1.gpu{i}")) == [f"n0.nic{i}", f"n1.nic{i}"]
    assert router.path("n0.gpu3", "n0.gpu70") == ["n0.gpu3", "n0.nvswitch0", "n0.gpu70"]
    network = Network(graph)
    assert network.size == 144 and network.route_bandwidth_Bps(5, 77) == 50e9
    assert reducing_switches(graph) == ["n0.nvswitch0", "n1.nvswitch0", "switch"]


def test_the_xdr_preset_puts_half_of_the_72_rails_of_both_racks_on_each_leaf():
    graph = load(CLUSTERS[[p.stem for p in CLUSTERS].index("gb200_nvl72_xdr_2")])
    for h in range(2):
        for j in range(72):
            assert graph.has_edge(f"n{h}.nic{j}", f"leaf{j // 36}")
            assert graph.edges[f"n{h}.nic{j}", f"leaf{j // 36}"]["bandwidth_Bps"] == 50e9
    assert graph.edges["leaf0", "spine0"]["cables"] == 72
    assert graph.edges["leaf0", "spine0"]["bandwidth_Bps"] == 72 * 100e9
    assert set(reducing_switches(graph)) == {"n0.nvswitch0", "n1.nvswitch0", "leaf0", "leaf1", "spine0"}
    assert describe(graph)["bisection_Bps"] == pytest.approx(72 * 50e9, rel=1e-12)


def test_the_ndr_preset_is_32_dgx_h100_with_one_sharp_leaf_per_rail():
    graph = load(CLUSTERS[[p.stem for p in CLUSTERS].index("dgx_h100_ndr_32")])
    assert len(gpus(graph)) == 256
    for j in range(8):
        assert {v for h in range(32) for v in graph.successors(f"n{h}.nic{j}") if v.startswith("leaf")} == {f"leaf{j}"}
    assert all(graph.edges[f"leaf{j}", f"spine{s}"]["cables"] == 8 for j in range(8) for s in range(4))
    assert all(graph.edges[f"leaf{j}", f"spine{s}"]["bandwidth_Bps"] == 8 * 50e9 for j in range(8) for s in range(4))
    fabric = [node for node, data in graph.nodes(data=True) if data["kind"] == "switch" and "host" not in data]
    assert len(fabric) == 12 and set(fabric) <= set(reducing_switches(graph))


def _rail_leaves(graph: nx.DiGraph) -> tuple[dict, dict]:
    """Rail -> the leaves its NICs are cabled to, and leaf -> the rails cabled to it."""
    by_rail, by_leaf = defaultdict(set), defaultdict(set)
    for nic, data in graph.nodes(data=True):
        if data["kind"] == "nic":
            for leaf in graph.successors(nic):
                if graph.nodes[leaf].get("level") == "leaf":
                    by_rail[data["rail"]].add(leaf)
                    by_leaf[leaf].add(data["rail"])
    return dict(by_rail), dict(by_leaf)


def _canonical(graph: nx.DiGraph) -> str:
    return json.dumps({"graph": graph.graph, "nodes": sorted([str(n), d] for n, d in graph.nodes(data=True)),
                       "edges": sorted([str(u), str(v), d] for u, v, d in graph.edges(data=True))},
                      sort_keys=True, default=repr)


def test_every_preset_builds_the_graph_it_always_built(request):
    """Nodes, edges and every attribute of each preset at its shipped size, against digests written before
    rails kept their leaves under a ``nodes`` override (so no simulated time of a preset moved); an intended
    change rewrites them with ``pytest --simnet-update-golden``."""
    digests = {path.stem: {"nodes": graph.number_of_nodes(), "edges": graph.number_of_edges(),
                           "sha256": hashlib.sha256(_canonical(graph).encode()).hexdigest()}
               for path in PRESETS for graph in [load(path)]}
    if request.config.getoption("--simnet-update-golden"):
        GRAPHS.parent.mkdir(exist_ok=True)
        GRAPHS.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
    expected = json.loads(GRAPHS.read_text())
    assert {name: digest for name, digest in digests.items() if expected.get(name) != digest} == {}
    assert set(expected) == set(digests)


def test_the_rail_optimised_presets_are_the_leaf_spine_clusters_and_keep_one_rail_per_leaf():
    assert RAIL_OPTIMISED
    for path in RAIL_OPTIMISED:
        by_rail, by_leaf = _rail_leaves(load(path))
        assert all(len(rails) == 1 for rails in by_leaf.values()) or all(len(v) == 1 for v in by_rail.values())


@pytest.mark.parametrize("path", RAIL_OPTIMISED, ids=lambda p: p.stem)
def test_overriding_nodes_of_a_rail_optimised_preset_keeps_every_rail_on_its_own_leaves(path):
    """``{file: PRESET, nodes: N}`` for N from 1 up to the preset's size: NIC ``j`` of every server stays on
    the leaves rail ``j`` has in the preset, a leaf (or leaf group) only rail ``j`` uses where there are
    as many leaves as rails, else one leaf per rail as the preset shares them."""
    preset = load(path)
    shipped = preset.graph["params"]["nodes"]
    shipped_rails, shipped_leaves = _rail_leaves(preset)
    one_rail_per_leaf = len(shipped_leaves) >= len(shipped_rails)
    for nodes in sorted({1, 2, 3, shipped // 2, shipped - 1, shipped} & set(range(1, shipped + 1))):
        graph = build({"file": str(path), "nodes": nodes})
        by_rail, by_leaf = _rail_leaves(graph)
        assert set(by_rail) == set(shipped_rails), nodes
        assert all(leaves <= shipped_rails[rail] for rail, leaves in by_rail.items()), nodes
        if one_rail_per_leaf:
            assert all(len(rails) == 1 for rails in by_leaf.values()), nodes
        else:
            assert all(len(leaves) == 1 for leaves in by_rail.values()), nodes
        assert graph.edges["leaf0", "spine0"] == preset.edges["leaf0", "spine0"], nodes


@pytest.mark.parametrize("path", RAIL_OPTIMISED, ids=lambda p: p.stem)
def test_more_servers_than_a_rail_optimised_preset_has_ports_per_rail_is_an_error_naming_nodes(path):
    shipped = load(path).graph["params"]["nodes"]
    with pytest.raises(TopologyError) as error:
        build({"file": str(path), "nodes": shipped + 1})
    assert error.value.path == "nodes" and "\n" not in str(error.value)
    assert f"{shipped + 1} servers do not fit" in error.value.message
    assert f"expected nodes ≤ {shipped}" in error.value.message


def test_collnet_on_4_servers_of_the_ndr_preset_reduces_each_rail_on_its_own_sharp_leaf():
    """The case of the study that found it: with every rail on ``leaf0`` one switch carried all 8 rails'
    SHARP reductions; with the rails kept, each of the 8 leaves carries the same bytes and no spine any."""
    network = Network(build({"file": "dgx_h100_ndr_32", "nodes": 4}))
    algorithm = ALGORITHMS["collnet_direct"]
    schedule = algorithm.build(network.size, 1 << 20, **algorithm.resolved(network, 1 << 20, {}))
    links = simulate(network, schedule).links()
    carried = links[links["bytes"] > 0]
    leaves = carried[carried["dst"].str.startswith("leaf")].groupby("dst")["bytes"].sum()
    assert sorted(leaves.index) == [f"leaf{j}" for j in range(8)] and leaves.nunique() == 1
    assert not carried["dst"].str.startswith("spine").any()


@pytest.mark.parametrize("kind", ["dgx_h100", "gb200_nvl72"])
def test_the_calibrated_cluster_keeps_one_leaf_per_rail_for_any_number_of_servers(kind):
    for nodes in (1, 2, 3, 5):
        by_rail, by_leaf = _rail_leaves(calibrated_cluster(kind, nodes))
        assert by_rail == {rail: {f"leaf{rail}"} for rail in by_rail} and len(by_leaf) == len(by_rail)


def test_an_oversubscribed_leaf_spine_cluster_keeps_fewer_cables_at_line_rate():
    """Study r25 F1: on dgx_h100_ndr_32 grown to 64 servers, 2:1 keeps 16 of a leaf's 32 spine cables at the NDR
    rate of 50 GB/s (4 to every spine), so a lone flow between the two leaves of rail 0 keeps 50 GB/s while a
    leaf's uplinks carry 800 GB/s instead of 1.6 TB/s; 2.5:1 does not divide 32 cables and slows all 32 to
    20 GB/s, which the name says."""
    names, uplinks, flows = [], [], []
    for ratio in ("1", "2:1", "5:2"):
        graph = build({"file": "dgx_h100_ndr_32", "nodes": 64, "fabric_params": {"leaves": 16,
                                                                                 "oversubscription": ratio}})
        names.append(graph.graph["name"])
        edges = [graph.edges["leaf0", f"spine{s}"] for s in range(4)]
        uplinks.append(([e["cables"] for e in edges], {e["bandwidth_Bps"] / e["cables"] for e in edges},
                        sum(e["bandwidth_Bps"] for e in edges)))
        network = Network(graph)
        flows.append(network.route_bandwidth_Bps(network.endpoint("n0.gpu0"), network.endpoint("n63.gpu0")))
    assert uplinks == [([8] * 4, {50e9}, 1600e9), ([4] * 4, {50e9}, 800e9), ([8] * 4, {20e9}, 640e9)]
    assert flows == [50e9, 50e9, 20e9]
    assert "; 16 uplink cables of 50 GB/s per leaf (2:1 keeps 16 of 32 at full rate)), NIC cables 50 GB/s" in names[1]
    assert ("; 32 uplink cables of 20 GB/s per leaf (2.5:1 does not divide 32 cables: each runs at 1/2.5 of full "
            "rate)), NIC cables 50 GB/s") in names[2]
