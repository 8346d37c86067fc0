"""Routing: latency then hops, ECMP, determinism across processes, dimension order on tori, relays."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet.errors import TopologyError
from simnet.topology import Router, add_cable, cluster, fat_tree, gpus, ring, switch, torus


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


REPO = Path(__file__).resolve().parents[2]

_ROUTES = """
import json
from simnet.topology import Router, cluster, fat_tree, gpus, load
graphs = [fat_tree(4, 1e9, 1e-6), load("topologies/dgx_a100_superpod_slice.yaml"), load("topologies/torus_4x4x4.yaml")]
out = []
for graph in graphs:
    router = Router(graph)
    ranks = gpus(graph)
    out.append([router.path(a, b) for a in ranks[::3] for b in ranks[::5]])
print(json.dumps(out))
"""


def _routes_in_subprocess(seed: str) -> list:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", _ROUTES], cwd=REPO, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def test_routes_on_builder_graphs_are_identical_across_processes():
    assert _routes_in_subprocess("1") == _routes_in_subprocess("4242")


def test_ecmp_spreads_pairs_over_the_cores_of_a_fat_tree():
    graph = fat_tree(4, 1e9, 1e-6)
    router = Router(graph)
    ranks = gpus(graph)
    cores = {router.path(a, b)[3] for a in ranks[:4] for b in ranks[12:]}
    assert len(cores) > 1
    assert all(len(router.path(a, b)) == 7 for a in ranks[:4] for b in ranks[12:])


def test_routes_are_cached():
    router = Router(fat_tree(4, 1e9, 1e-6))
    first = router.path("gpu0", "gpu9")
    assert router.path("gpu0", "gpu9") == first
    assert len(router._paths) == 1


@settings(max_examples=40, deadline=None)
@given(
    dims=st.lists(st.integers(1, 5), min_size=1, max_size=3).filter(lambda d: len(d) and max(d) >= 2),
    data=st.data(),
)
def test_torus_routes_follow_dimension_order_along_the_shorter_way(dims, data):
    graph = torus(dims, 1e9, 1e-6)
    ranks = gpus(graph)
    a = data.draw(st.sampled_from(ranks))
    b = data.draw(st.sampled_from(ranks))
    path = Router(graph).path(a, b)
    if a == b:
        assert path == [a]
        return
    coords = [graph.nodes[n]["coord"] for n in path[1:-1]]
    axes = [next(i for i, (x, y) in enumerate(zip(p, q)) if x != y) for p, q in zip(coords, coords[1:])]
    assert axes == sorted(axes)
    start, goal = coords[0], coords[-1]
    assert len(coords) - 1 == sum(min((g - s) % d, (s - g) % d) for s, g, d in zip(start, goal, dims))
    assert all(graph.has_edge(u, v) for u, v in zip(path, path[1:]))


def test_torus_tie_takes_the_positive_direction():
    graph = torus([4], 1e9, 1e-6)
    assert Router(graph).path("gpu0", "gpu2") == ["gpu0", "r0", "r1", "r2", "gpu2"]
    assert Router(graph).path("gpu2", "gpu0") == ["gpu2", "r2", "r3", "r0", "gpu0"]


def test_cluster_routes_never_cross_a_third_server_or_relay_through_gpus():
    graph = cluster(
        "abci_node", 6, fabric="torus", fabric_params={"dims": [3, 4], "bandwidth_Bps": 12.5e9, "latency_s": 1e-6}
    )
    router = Router(graph)
    ranks = gpus(graph)
    for a in ranks[::3]:
        for b in ranks[::5]:
            path = router.path(a, b)
            ends = {graph.nodes[a]["host"], graph.nodes[b]["host"]}
            assert {graph.nodes[n].get("host") for n in path} - {None} <= ends
            assert all(graph.nodes[n]["kind"] != "gpu" for n in path[1:-1])


def test_relays_can_be_switched_off_per_node():
    graph = nx.DiGraph()
    for name in ("gpu0", "gpu1", "gpu2"):
        graph.add_node(name, kind="gpu", forward=name != "gpu1")
    graph.add_node("sw", kind="switch")
    for u, v, latency in (("gpu0", "gpu1", 1e-6), ("gpu1", "gpu2", 1e-6), ("gpu0", "sw", 5e-6), ("sw", "gpu2", 5e-6)):
        for a, b in ((u, v), (v, u)):
            graph.add_edge(a, b, bandwidth_Bps=1e9, latency_s=latency, tier="t")
    assert Router(graph).path("gpu0", "gpu2") == ["gpu0", "sw", "gpu2"]
    graph.nodes["gpu1"]["forward"] = True
    assert Router(graph).path("gpu0", "gpu2") == ["gpu0", "gpu1", "gpu2"]


def test_unreachable_target_is_an_error_on_a_torus():
    graph = torus([3], 1e9, 1e-6)
    graph.add_node("lonely", kind="switch")
    with pytest.raises(Exception, match="no route"):
        Router(graph).path("gpu0", "lonely")


def test_equal_cost_predecessors_are_complete():
    """Every equal-cost predecessor is kept, so the ECMP choice sees all of them."""
    router = Router(two_spines())
    tree = router._tree("gpu0.0", "gpu1.0")
    assert sorted(tree["leaf1"]) == ["spine0", "spine1"]
    assert tree["gpu0.0"] == []
