"""Deterministic routing: shortest paths by latency, then hops, then an ECMP hash.

A route from node ``s`` to node ``t`` is a shortest path under the lexicographic
cost (total latency, hop count). Latencies are compared in whole picoseconds so
that equal-cost paths are recognised exactly, without floating-point ties.
Where several paths tie, the choice is made like ECMP in a switch, but without
randomness: walking back from ``t``, at every node with several equal-cost
predecessors the one at index ``crc32("s|t|node") mod k`` of the predecessors
sorted by name is taken. Routes are therefore identical across runs, processes
and ``PYTHONHASHSEED`` values, and different endpoint pairs spread over the
equal-cost paths.

Three optional attributes of the contract (:mod:`simnet.topology.contract`)
restrict or override the shortest path:

* a node with ``forward = False`` relays nothing: only routes that start or end
  at it use its links (GPUs inside a server do not relay for each other);
* a graph with ``host_transit = False`` never routes traffic between two servers
  through a third: nodes whose ``host`` is neither endpoint's host are avoided;
* a graph with ``routing = "dimension_order"`` and ``dims`` re-routes every stretch
  of a route that runs over torus routers (nodes with ``coord``) by dimension-order
  routing: the first dimension is corrected first, each along the shorter way
  around its ring, the ``+1`` direction when both ways are equally long.
"""

from __future__ import annotations

import zlib
from collections.abc import Hashable
from heapq import heappop, heappush

import networkx as nx

from simnet.errors import TopologyError

__all__ = ["Router"]

_HOP_SCALE = 1 << 20
_TREES_KEPT = 64
"""Shortest-path trees kept (least recently used dropped first). Routes themselves are
all cached; trees only speed up further routes from the same source, which callers
such as the engine request together (pairs sorted by source)."""


def _cost(data) -> int:
    return round(data["latency_s"] * 1e12) * _HOP_SCALE + 1


def _pick(choices: list, source: Hashable, target: Hashable, node: Hashable):
    if len(choices) == 1:
        return choices[0]
    ordered = sorted(choices, key=str)
    digest = zlib.crc32(f"{source}|{target}|{node}".encode())
    return ordered[digest % len(ordered)]


class Router:
    """Computes and caches routes on one topology graph.

    Parameters
    ----------
    graph : networkx.DiGraph
        A validated topology (see :mod:`simnet.topology.contract`).

    Examples
    --------
    >>> from simnet.topology import switch
    >>> Router(switch(4, 1e9, 1e-6)).path("gpu0", "gpu3")
    ['gpu0', 'switch', 'gpu3']
    """

    def __init__(self, graph: nx.DiGraph) -> None:
        self._graph = graph
        self._trees: dict[tuple, dict] = {}
        self._paths: dict[tuple, list] = {}
        self._stubs = frozenset(node for node, forward in graph.nodes(data="forward") if forward is False)
        self._host = {node: host for node, host in graph.nodes(data="host") if host is not None}
        self._adjacency = {u: [(v, _cost(data)) for v, data in graph.adj[u].items()] for u in graph}
        self._transit = graph.graph.get("host_transit", True) is not False
        self._dims = None
        if graph.graph.get("routing") == "dimension_order":
            self._dims = tuple(graph.graph["dims"])
            self._routers = {
                tuple(coord): node for node, coord in graph.nodes(data="coord") if coord is not None
            }
            self._coord = {node: coord for coord, node in self._routers.items()}

    def _tree(self, source: Hashable, target: Hashable) -> dict:
        """Every node's equal-cost predecessors on shortest routes from `source` (Dijkstra).

        Trees are kept in a small least-recently-used cache: one tree per source can
        be as large as the graph, so keeping all of them would cost gigabytes on
        thousands of GPUs.
        """
        allowed = None
        if not self._transit:
            allowed = frozenset(h for h in (self._host.get(source), self._host.get(target)) if h is not None)
        key = (source, allowed)
        tree = self._trees.pop(key, None)
        if tree is None:
            tree = self._dijkstra(source, allowed)
            if len(self._trees) >= _TREES_KEPT:
                del self._trees[next(iter(self._trees))]
        self._trees[key] = tree
        return tree

    def _dijkstra(self, source: Hashable, allowed: frozenset | None) -> dict:
        """Dijkstra over integer costs; ``pred[v]`` holds every predecessor on a shortest route.

        Costs are positive integers, so a node's set of equal-cost predecessors is
        complete when it is popped. Links out of a non-forwarding node (other than
        `source`) and into a server outside `allowed` are skipped.
        """
        adjacency, stubs, hosts = self._adjacency, self._stubs, self._host
        dist: dict = {}
        best = {source: 0}
        pred: dict = {source: []}
        heap = [(0, 0, source)]
        counter = 1
        while heap:
            d, _, u = heappop(heap)
            if u in dist:
                continue
            dist[u] = d
            if u in stubs and u != source:
                continue
            for v, cost in adjacency[u]:
                if allowed is not None and v in hosts and hosts[v] not in allowed:
                    continue
                candidate = d + cost
                known = best.get(v)
                if known is None or candidate < known:
                    best[v] = candidate
                    pred[v] = [u]
                    heappush(heap, (candidate, counter, v))
                    counter += 1
                elif candidate == known and v not in dist:
                    pred[v].append(u)
        return pred

    def _dimension_order(self, first: Hashable, last: Hashable) -> list:
        coord = list(self._coord[first])
        goal = self._coord[last]
        nodes = [first]
        for axis, size in enumerate(self._dims):
            forward = (goal[axis] - coord[axis]) % size
            step = 1 if forward <= size - forward else -1
            for _ in range(min(forward, size - forward)):
                coord[axis] = (coord[axis] + step) % size
                nodes.append(self._routers[tuple(coord)])
        return nodes

    def _reroute(self, nodes: list) -> list:
        result: list = []
        i = 0
        while i < len(nodes):
            j = i
            while j + 1 < len(nodes) and nodes[j] in self._coord and nodes[j + 1] in self._coord:
                j += 1
            if j > i:
                result.extend(self._dimension_order(nodes[i], nodes[j]))
            else:
                result.append(nodes[i])
            i = j + 1
        return result

    def path(self, source: Hashable, target: Hashable) -> list:
        """Return the route from `source` to `target` as a list of nodes.

        Raises
        ------
        TopologyError
            If `target` cannot be reached from `source`.
        """
        if source == target:
            return [source]
        cached = self._paths.get((source, target))
        if cached is not None:
            return list(cached)
        tree = self._tree(source, target)
        if target not in tree:
            raise TopologyError(f"no route from {source!r} to {target!r}")
        nodes = [target]
        node = target
        while node != source:
            node = _pick(tree[node], source, target, node)
            nodes.append(node)
        nodes.reverse()
        if self._dims is not None:
            nodes = self._reroute(nodes)
        self._paths[(source, target)] = tuple(nodes)
        return nodes
