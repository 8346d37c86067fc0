"""Hierarchy factors read off GPU attributes."""

import functools
import math

import networkx as nx
import pytest

from simnet.algorithms import ALGORITHMS
from simnet.algorithms.hierarchy import hierarchy_factors, rank_coordinates
from simnet.errors import TopologyError
from simnet.topology import add_cable, switch, torus, validate
from tests.algorithms.fabrics import dgx_cluster


def default_factors(graph, name):
    """The ``factors`` the algorithm's registry record derives from `graph` (``None`` if it derives none)."""
    defaults = ALGORITHMS[name].defaults
    return None if defaults is None else tuple(defaults(functools.partial(hierarchy_factors, graph))["factors"])


def _two_socket_nodes(nodes=2, sockets=2, gpus=2, shuffle=False):
    graph = nx.DiGraph()
    order = [(n, s, g) for n in range(nodes) for s in range(sockets) for g in range(gpus)]
    if shuffle:
        order[1], order[2] = order[2], order[1]
    for n, s, g in order:
        graph.add_node(f"n{n}s{s}g{g}", kind="gpu", host=n, socket=s, local_rank=s * gpus + g)
    graph.add_node("sw", kind="switch")
    for node in list(graph.nodes):
        if node != "sw":
            add_cable(graph, node, "sw", 1e9, 1e-6, "fabric")
    return validate(graph)


def test_switch_hosts_hold_one_gpu_each():
    graph = switch(16, 12.5e9, 1e-6)
    assert hierarchy_factors(graph) == (1, 16)
    assert default_factors(graph, "blueconnect") == (16,)
    assert default_factors(graph, "hierarchical_ring") == (1, 16)
    assert default_factors(graph, "ring") is None


def test_dgx_cluster_is_gpus_per_node_times_nodes_per_leaf():
    graph = dgx_cluster(4, 8)
    assert hierarchy_factors(graph) == (8, 4, 1)
    assert hierarchy_factors(graph, ("host",)) == (8, 4)
    assert default_factors(graph, "blueconnect") == (8, 4)
    assert default_factors(graph, "torus_2d") == (8, 4)
    assert rank_coordinates(graph)[9] == (0, 1)


def test_sockets_add_an_inner_level():
    assert hierarchy_factors(_two_socket_nodes(2, 2, 2)) == (2, 2, 2)


def test_ranks_out_of_hierarchy_order_are_refused():
    with pytest.raises(TopologyError, match="local_rank"):
        hierarchy_factors(_two_socket_nodes(shuffle=True))


def test_uneven_nodes_are_refused_naming_a_gpu():
    graph = dgx_cluster(2, 4)
    graph.nodes["n1g3"]["host"] = 2
    graph.nodes["n1g3"]["local_rank"] = 0
    with pytest.raises(TopologyError, match="differ in size"):
        hierarchy_factors(graph)


def test_partial_attributes_are_refused():
    graph = dgx_cluster(2, 4)
    del graph.nodes["n0g1"]["leaf"]
    with pytest.raises(TopologyError, match="n0g1"):
        hierarchy_factors(graph)


@pytest.mark.parametrize("dims, found", [([4, 8], (8, 4)), ([8, 4], (4, 8)), ([2, 4, 8], (8, 4, 2)),
                                         ([1, 16], (16, 1))])
def test_the_torus_level_is_the_dims_innermost_first(dims, found):
    """Ranks run row-major over the torus coordinates (the last dimension fastest), so the group sizes of the
    ``torus`` level, innermost first, are the dims reversed; the GPUs may be the routers themselves."""
    assert hierarchy_factors(torus(dims, 25e9, 1e-6), ("torus",)) == found
    assert hierarchy_factors(torus(dims, 25e9, 1e-6, gpu_routers=True), ("torus",)) == found


def test_the_torus_level_is_absent_off_a_whole_torus():
    assert hierarchy_factors(switch(16, 12.5e9, 1e-6), ("torus",)) == (16,)
    graph = torus([4, 4], 25e9, 1e-6)
    assert hierarchy_factors(graph, ("torus",), ranks=[f"gpu{i}" for i in range(8)]) == (8,)
    assert hierarchy_factors(graph, ("torus",), ranks=[f"gpu{i}" for i in reversed(range(16))]) == (16,)
    with pytest.raises(TopologyError, match="torus"):
        hierarchy_factors(graph, ("torus", "host"))


@pytest.mark.parametrize("dims, factors", [
    ([4, 4], (4, 4)), ([4, 8], (8, 4)), ([8, 4], (4, 8)), ([3, 5], (5, 3)), ([1, 16], (1, 16)), ([16, 1], (1, 16)),
    ([4, 4, 4], (4, 16)), ([2, 4, 8], (8, 8)), ([2, 1, 3, 4], (4, 6)),
])
def test_torus_2d_on_a_torus_defaults_to_its_dims(dims, factors):
    """On a torus torus_2d's X rings run along the last dimension (ranks r = x + X y); on a 2-D torus its Y rings
    along the first, on more dimensions over all the others in rank order. The other algorithms keep the hosts."""
    graph = torus(dims, 25e9, 1e-6)
    assert default_factors(graph, "torus_2d") == factors
    assert default_factors(graph, "hierarchical_ring") == (1, math.prod(dims))
    assert default_factors(graph, "blueconnect") == (math.prod(dims),)
