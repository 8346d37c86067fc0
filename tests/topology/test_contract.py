import networkx as nx
import pytest

from simnet.errors import TopologyError
from simnet.topology import add_cable, gpus, reduce_efficiency, reducing_switches, switch, validate


def two_gpus() -> nx.DiGraph:
    graph = nx.DiGraph(name="pair")
    graph.add_node("a", kind="gpu")
    graph.add_node("b", kind="gpu")
    add_cable(graph, "a", "b", 1e9, 1e-6, "nvlink")
    return graph


def _switch(graph: nx.DiGraph, **attrs) -> None:
    graph.add_node("sw", kind="switch", **attrs)
    add_cable(graph, "a", "sw", 1e9, 1e-6, "nvswitch")


def test_valid_graph_is_returned_unchanged():
    graph = two_gpus()
    assert validate(graph) is graph


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda g: g.edges["a", "b"].pop("bandwidth_Bps"), r"link 'a' -> 'b': bandwidth_Bps must be .* got None"),
        (lambda g: g.edges["a", "b"].update(bandwidth_Bps=0.0), r"link 'a' -> 'b': bandwidth_Bps .* got 0.0"),
        (lambda g: g.edges["b", "a"].update(bandwidth_Bps=-1.0), r"link 'b' -> 'a': bandwidth_Bps .* got -1.0"),
        (lambda g: g.edges["a", "b"].update(latency_s=-1e-6), r"link 'a' -> 'b': latency_s must be"),
        (lambda g: g.edges["a", "b"].update(latency_s=float("nan")), r"latency_s must be a finite"),
        (lambda g: g.edges["a", "b"].update(tier=""), r"link 'a' -> 'b': tier"),
        (lambda g: g.edges["a", "b"].update(cables=0), r"cables must be an integer"),
        (lambda g: g.remove_edge("b", "a"), r"link 'a' -> 'b': .*reverse link 'b' -> 'a' is missing"),
        (lambda g: g.nodes["a"].update(kind="router"), r"node 'a': kind must be one of .* got 'router'"),
        (lambda g: g.add_node("c", kind="gpu"), r"node 'c': GPU is not connected to GPU 'a'"),
        (lambda g: [g.nodes[n].update(kind="switch") for n in g], r"no node of kind 'gpu'"),
        (lambda g: g.nodes["a"].update(reduce=True), r"^node 'a': reduce is a switch capability .* kind 'gpu'$"),
        (lambda g: g.nodes["a"].update(reduce=False), r"^node 'a': reduce is a switch capability"),
        (lambda g: _switch(g, reduce="yes"), r"^node 'sw': reduce must be true or false, got 'yes'$"),
        (lambda g: _switch(g, reduce=1), r"^node 'sw': reduce must be true or false, got 1$"),
        (lambda g: _switch(g, reduce=True, reduce_efficiency=0.0), r"^node 'sw': reduce_efficiency .* got 0.0$"),
        (lambda g: _switch(g, reduce=True, reduce_efficiency=1.5), r"reduce_efficiency must be a number in \(0, 1\]"),
        (lambda g: _switch(g, reduce=True, reduce_efficiency=True), r"reduce_efficiency must be a number"),
        (lambda g: _switch(g, reduce=True, reduce_efficiency=float("nan")), r"reduce_efficiency must be a number"),
        (lambda g: _switch(g, reduce_efficiency=0.5), r"^node 'sw': reduce_efficiency is given but reduce is not"),
        (lambda g: _switch(g, reduce=False, reduce_efficiency=0.5), r"reduce_efficiency is given but reduce is not"),
    ],
)
def test_violations_name_the_node_or_edge(mutate, message):
    graph = two_gpus()
    mutate(graph)
    with pytest.raises(TopologyError, match=message):
        validate(graph)


def test_multigraphs_and_undirected_graphs_are_refused():
    with pytest.raises(TopologyError, match="DiGraph"):
        validate(nx.MultiDiGraph(two_gpus()))
    with pytest.raises(TopologyError, match="DiGraph"):
        validate(nx.Graph(two_gpus()))


def test_parallel_cables_add_bandwidth():
    graph = two_gpus()
    add_cable(graph, "a", "b", 1e9, 1e-6, "nvlink")
    assert graph.edges["a", "b"]["bandwidth_Bps"] == 2e9
    assert graph.edges["b", "a"]["cables"] == 2
    with pytest.raises(TopologyError, match="parallel cables must share tier"):
        add_cable(graph, "a", "b", 1e9, 1e-6, "pcie")


def test_gpus_are_listed_in_graph_order():
    assert gpus(switch(5, 1e9, 0.0)) == [f"gpu{i}" for i in range(5)]


def test_reducing_switches_and_their_efficiency():
    graph = two_gpus()
    _switch(graph, reduce=True, reduce_efficiency=0.74)
    graph.add_node("plain", kind="switch", reduce=False)
    add_cable(graph, "b", "plain", 1e9, 1e-6, "ib")
    graph.add_node("sharp", kind="switch", reduce=True)
    add_cable(graph, "b", "sharp", 1e9, 1e-6, "ib")
    assert validate(graph) is graph
    assert reducing_switches(graph) == ["sw", "sharp"]
    assert (reduce_efficiency(graph, "sw"), reduce_efficiency(graph, "sharp")) == (0.74, 1.0)
    with pytest.raises(TopologyError, match="node 'plain': cannot reduce in flight"):
        reduce_efficiency(graph, "plain")
