import json
import os
import subprocess
import sys

import networkx as nx
import pytest

from simnet.errors import TopologyError
from simnet.topology import Router, add_cable, ring, switch


def two_spines(leaves: int = 4) -> nx.DiGraph:
    """Leaves, each with two GPUs, all cabled to two spines: every cross-leaf pair has two equal paths."""
    graph = nx.DiGraph(name="two-spine")
    for leaf in range(leaves):
        for g in range(2):
            graph.add_node(f"gpu{leaf}.{g}", kind="gpu")
    for leaf in range(leaves):
        graph.add_node(f"leaf{leaf}", kind="switch")
    for spine in range(2):
        graph.add_node(f"spine{spine}", kind="switch")
    for leaf in range(leaves):
        for g in range(2):
            add_cable(graph, f"gpu{leaf}.{g}", f"leaf{leaf}", 10e9, 1e-6, "ib")
        for spine in range(2):
            add_cable(graph, f"leaf{leaf}", f"spine{spine}", 10e9, 1e-6, "ib")
    return graph


def test_switch_route_is_two_links():
    assert Router(switch(4, 1e9, 1e-6)).path("gpu1", "gpu2") == ["gpu1", "switch", "gpu2"]


def test_ring_takes_the_shorter_way_round():
    router = Router(ring(8, 1e9, 1e-6))
    assert router.path("gpu0", "gpu2") == ["gpu0", "gpu1", "gpu2"]
    assert router.path("gpu0", "gpu6") == ["gpu0", "gpu7", "gpu6"]


def test_latency_beats_hops_and_hops_break_latency_ties():
    graph = nx.DiGraph()
    for node in "abcd":
        graph.add_node(node, kind="gpu")
    add_cable(graph, "a", "d", 1e9, 5e-6, "slow")
    add_cable(graph, "a", "b", 1e9, 1e-6, "fast")
    add_cable(graph, "b", "c", 1e9, 1e-6, "fast")
    add_cable(graph, "c", "d", 1e9, 1e-6, "fast")
    assert Router(graph).path("a", "d") == ["a", "b", "c", "d"]
    graph.edges["a", "d"]["latency_s"] = 3e-6
    assert Router(graph).path("a", "d") == ["a", "d"]


def test_ecmp_spreads_pairs_over_both_spines():
    router = Router(two_spines())
    spines = {router.path(f"gpu{a}.{x}", f"gpu{b}.{y}")[2]
              for a in range(4) for b in range(4) if a != b for x in range(2) for y in range(2)}
    assert spines == {"spine0", "spine1"}


def test_unreachable_target_is_an_error():
    graph = nx.DiGraph()
    graph.add_node("a", kind="gpu")
    graph.add_node("b", kind="gpu")
    with pytest.raises(TopologyError, match="no route from 'a' to 'b'"):
        Router(graph).path("a", "b")


_ROUTES_SCRIPT = """
import json, sys
sys.path.insert(0, {root!r})
from tests.topology.test_routing import two_spines
from simnet.topology import Router
router = Router(two_spines())
nodes = [n for n, k in two_spines().nodes(data="kind") if k == "gpu"]
print(json.dumps([router.path(a, b) for a in nodes for b in nodes if a != b]))
"""


def test_routes_are_identical_across_processes_and_hash_seeds():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    outputs = []
    for seed in ("0", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        result = subprocess.run(
            [sys.executable, "-c", _ROUTES_SCRIPT.format(root=root)],
            env=env, capture_output=True, text=True, check=True,
        )
        outputs.append(json.loads(result.stdout))
    assert outputs[0] == outputs[1]
    router = Router(two_spines())
    nodes = [n for n, k in two_spines().nodes(data="kind") if k == "gpu"]
    assert outputs[0] == [router.path(a, b) for a in nodes for b in nodes if a != b]
