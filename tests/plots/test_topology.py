"""simnet.plots.topology: drawings stay readable at any size and keep what they stand for."""

import networkx as nx
import numpy as np
import pytest
from matplotlib.collections import LineCollection

from simnet import plots
from simnet.algorithms import ALGORITHMS
from simnet.engine import simulate
from simnet.errors import SimnetError
from simnet.network import Network
from simnet.plots.topology import DETAIL_NODES, GROUPS, MAX_SERVERS, MAX_SWITCHES, _drawing
from simnet.topology import build, cluster, find, load, switch, torus
from tests.plots.checks import assert_readable


def dgx_h100_cluster(nodes: int = 32) -> nx.DiGraph:
    return cluster("dgx_h100", nodes, fabric="leaf_spine",
                   fabric_params={"leaves": 8, "spines": 4, "hosts_per_leaf": nodes, "bandwidth_Bps": 50e9,
                                  "latency_s": 1e-6})


GRAPHS = {
    "torus_4x4x4": lambda: load(find("torus_4x4x4")),
    "abci_rack": lambda: load(find("abci_rack")),
    "dgx_a100_superpod_slice": lambda: load(find("dgx_a100_superpod_slice")),
    "dgx_h100 x 32": dgx_h100_cluster,
    "k_ary_n_tree_4x3": lambda: load(find("k_ary_n_tree_4x3")),
    "dgx1": lambda: load(find("dgx1")),
}


@pytest.mark.parametrize("name", list(GRAPHS))
def test_every_cable_and_gpu_is_drawn_once(name):
    graph = GRAPHS[name]()
    drawing = _drawing(graph)
    drawn = [node for node in drawing.nodes if node.kind != "bundle"]
    assert sorted(m for node in drawn for m in node.members) == sorted(graph.nodes)
    assert sum(node.gpus for node in drawn) == sum(k == "gpu" for _, k in graph.nodes(data="kind"))
    lines = sorted(edge for line in drawing.edges for edge in line.members)
    inside = sorted(edge for members in drawing.internal.values() for edge in members)
    assert sorted(lines + inside) == sorted(graph.edges)
    both_ways = sum(graph.edges[u, v]["bandwidth_Bps"] for u, v in lines)
    assert sum(line.bandwidth_Bps for line in drawing.edges) == pytest.approx(both_ways / 2, rel=1e-12)


@pytest.mark.parametrize("name", list(GRAPHS))
def test_large_graphs_are_aggregated_within_bounds(name, tmp_path):
    graph = GRAPHS[name]()
    drawing = _drawing(graph)
    levels: dict[float, int] = {}
    for node in drawing.nodes:
        levels[node.y] = levels.get(node.y, 0) + 1
    if graph.number_of_nodes() > DETAIL_NODES and not drawing.frames:
        assert all(count <= max(MAX_SERVERS, MAX_SWITCHES, 2 * GROUPS) for count in levels.values())
        assert len(drawing.edges) <= 200
    figure = plots.draw_topology(graph, tmp_path / "topology.png")
    assert_readable(figure, tmp_path / "topology.png")


def test_a_torus_is_drawn_as_grids_with_the_other_dimensions_bundled():
    drawing = _drawing(torus([4, 4, 4], 25e9, 1e-6))
    assert [frame[-1] for frame in drawing.frames] == ["c2=0", "c2=1", "c2=2", "c2=3"]
    bundles = [edge for edge in drawing.edges if drawing.nodes[edge.a].kind == "bundle"]
    assert len(bundles) == 4 and {edge.cables for edge in bundles} == {16}
    assert {edge.bandwidth_Bps for edge in bundles} == {16 * 25e9}
    assert {node.gpus for node in drawing.nodes if node.kind == "router"} == {1}
    wraps = [edge for edge in drawing.edges if edge.stubs]
    assert len(wraps) == 4 * 2 * 4


def test_servers_with_the_same_switches_are_grouped_when_there_are_many():
    drawing = _drawing(dgx_h100_cluster(64))
    servers = [node for node in drawing.nodes if node.kind == "server"]
    assert len(servers) <= GROUPS
    assert sum(node.gpus for node in servers) == 64 * 8
    assert servers[0].label.startswith("n0–") and "servers)" in servers[0].label


def test_link_utilization_colours_busy_links_and_aggregated_servers(tmp_path):
    graph = load(find("power9_cluster"))
    network = Network(graph)
    trace = simulate(network, ALGORITHMS["ring"].builder(network.size, 2**20))
    figure = plots.link_utilization(trace, tmp_path / "links.png")
    assert "ring allreduce, 1 MiB per rank" in figure.get_suptitle()
    assert "maxmin links" in " ".join(figure.get_suptitle().split())
    assert_readable(figure, tmp_path / "links.png")


def legend_of(figure) -> list[str]:
    return [text.get_text() for text in figure.axes[0].get_legend().get_texts()]


def test_idle_links_are_named_in_the_legend_only_when_some_are_drawn(tmp_path):
    """A flat ring on a rail-optimised slice leaves links idle (grey, named); on one switch every link works."""
    for graph, idle in ((load(find("dgx_a100_superpod_slice")), True), (switch(4, 12.5e9, 1e-6), False)):
        network = Network(graph)
        trace = simulate(network, ALGORITHMS["ring"].builder(network.size, 2**16))
        assert trace.links()["utilization"].min() == 0.0 if idle else trace.links()["utilization"].min() > 0.0
        figure = plots.link_utilization(trace, tmp_path / "links.png")
        assert ("idle: carried nothing" in legend_of(figure)) is idle


@pytest.fixture(scope="module")
def nic_bound_ring():
    """nccl_ring, 64 MiB on 2 x DGX H100: NICs busy 94 % of the time at 94 % load; the PCIe links from the GPUs
    that leave each server to their NICs as busy, at 74 % load (PCIe Gen5 is faster than NDR)."""
    network = Network(build({"file": "dgx_h100_ndr_32", "nodes": 2, "fabric_params": {"hosts_per_leaf": 2}}))
    params = ALGORITHMS["nccl_ring"].resolved(network, 64 * 2**20, {"protocol": "auto"})
    return simulate(network, ALGORITHMS["nccl_ring"].build(network.size, 64 * 2**20, **params))


def darkness_by_tier(figure, graph) -> dict[str, float]:
    """Per tier, the darkest line's darkness (1 - mean RGB: the colour map runs light to dark as values grow)."""
    edges = _drawing(graph).edges
    (lines,) = [c for c in figure.axes[0].collections if isinstance(c, LineCollection) and c.get_zorder() == 1]
    darkness = 1 - np.asarray(lines.get_colors())[:, :3].mean(axis=1)
    assert len(darkness) == len(edges)
    return {tier: float(max(d for d, e in zip(darkness, edges) if e.tier == tier)) for tier in {e.tier for e in edges}}


def test_links_are_coloured_by_load_so_the_nics_of_a_nic_bound_ring_are_the_darkest(nic_bound_ring, tmp_path):
    links = nic_bound_ring.links()
    peak = links.groupby("tier")[["load", "utilization"]].max()
    assert peak.loc["ib", "load"] > max(peak.loc["nvswitch", "load"], peak.loc["pcie", "load"])
    assert peak.loc["ib", "utilization"] == pytest.approx(peak.loc["pcie", "utilization"], rel=1e-9)
    graph = nic_bound_ring.network.graph
    figure = plots.link_utilization(nic_bound_ring, tmp_path / "load.png")
    darkness = darkness_by_tier(figure, graph)
    assert darkness["ib"] > max(darkness["nvswitch"], darkness["pcie"])
    named = legend_of(figure)
    assert f"most loaded link, load {peak.loc['ib', 'load']:.2f}:" in named[1] and "(ib)" in named[1]
    assert named[2].replace("\n", " ").startswith(
        f"most loaded per tier: ib {peak.loc['ib', 'load']:.2f}, pcie {peak.loc['pcie', 'load']:.2f}, "
        f"nvswitch {peak.loc['nvswitch', 'load']:.2f}")
    assert "load of the most loaded link" in figure.axes[1].get_xlabel()
    assert figure.get_suptitle().endswith("lines coloured by load")
    assert_readable(figure, tmp_path / "load.png")
    busy = plots.link_utilization(nic_bound_ring, tmp_path / "busy.png", metric="busy")
    darkness = darkness_by_tier(busy, graph)
    assert darkness["ib"] == pytest.approx(darkness["pcie"]) and darkness["ib"] > darkness["nvswitch"]
    assert f"busiest link, busy time {peak.loc['ib', 'utilization']:.2f}:" in legend_of(busy)[1]
    assert "busy time of the busiest link" in busy.axes[1].get_xlabel()
    assert_readable(busy, tmp_path / "busy.png")
    with pytest.raises(SimnetError, match="must be one of load, busy, held, got .bytes."):
        plots.link_utilization(nic_bound_ring, tmp_path / "x.png", metric="bytes")


def test_links_coloured_by_held_back_time_name_the_oversubscribed_uplink_not_the_most_loaded_host_link(tmp_path):
    """Study r23 F2: on a 4:1 leaf-spine, halving-doubling loses its time where four transfers share an uplink,
    yet the load plot named a host link; held back time names the uplink."""
    graph = build({"builder": "leaf_spine", "leaves": 2, "spines": 1, "hosts_per_leaf": 4,
                   "bandwidth": "100 Gbps", "latency": "1 us", "oversubscription": "4:1"})
    trace = simulate(Network(graph), ALGORITHMS["halving_doubling"].build(8, 2**20))
    links = trace.links()
    assert links.loc[links["load"].idxmax(), "src"] == "leaf0"
    assert str(links.loc[links["load"].idxmax(), "dst"]).startswith("gpu")
    figure = plots.link_utilization(trace, tmp_path / "held.png", metric="held")
    held = links["held_flow_s"].max() / trace.time_s
    assert f"most contended link, held back {held:.2f}:\nspine0 → leaf0 (fabric)" in legend_of(figure)[1]
    assert "transfers held back on average" in figure.axes[1].get_xlabel()
    assert_readable(figure, tmp_path / "held.png")


def test_one_server_too_large_for_detail_is_drawn_inside_with_its_kinds_on_rows_and_grouped():
    """A GB200 NVL72 rack (72 GPUs, 36 Grace CPUs, 72 NICs, one NVSwitch: 181 nodes, one host) is not one
    box: GPUs, the switch, CPUs and NICs get a row each, groups of at most GROUPS, every cable in one line."""
    graph = load(find("gb200_nvl72"))
    assert graph.number_of_nodes() > DETAIL_NODES
    drawing = _drawing(graph)
    assert list(drawing.layers.values()) == ["GPUs", "server switches", "CPUs", "NICs"]
    rows = {}
    for node in drawing.nodes:
        rows.setdefault(drawing.layers[node.y], []).append(node)
    assert [len(rows[name]) for name in drawing.layers.values()] == [GROUPS, 1, GROUPS, GROUPS]
    assert sum(node.gpus for node in rows["GPUs"]) == 72
    assert rows["GPUs"][0].label == "gpu0–5\n(6 GPUs)" and rows["CPUs"][0].label == "cpu0–2\n(3 CPUs)"
    assert sum(edge.cables for edge in drawing.edges) == sum(data.get("cables", 1) for *_, data in
                                                            graph.edges(data=True)) / 2
    assert not drawing.internal
    fabric = cluster("gb200_nvl72", 1, fabric="switch", fabric_params={"bandwidth_Bps": 50e9, "latency_s": 1e-6})
    assert list(_drawing(fabric).layers.values()) == ["GPUs", "server switches", "CPUs", "NICs",
                                                       "edge / leaf / routers"]


def test_a_small_graph_is_drawn_node_by_node():
    drawing = _drawing(switch(4, 12.5e9, 1e-6))
    assert [node.label for node in drawing.nodes] == ["gpu0", "gpu1", "gpu2", "gpu3", "switch"]
    assert set(drawing.layers.values()) == {"GPUs", "edge / leaf / routers"}
