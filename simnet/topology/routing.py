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
"""

from __future__ import annotations

import zlib
from collections.abc import Hashable

import networkx as nx

from simnet.errors import TopologyError

__all__ = ["Router"]

_HOP_SCALE = 1 << 20


def _cost(u, v, data) -> int:
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
        self._predecessors: dict[Hashable, dict] = {}

    def _tree(self, source: Hashable) -> dict:
        tree = self._predecessors.get(source)
        if tree is None:
            tree, _ = nx.dijkstra_predecessor_and_distance(self._graph, source, weight=_cost)
            self._predecessors[source] = tree
        return tree

    def path(self, source: Hashable, target: Hashable) -> list:
        """Return the route from `source` to `target` as a list of nodes.

        Raises
        ------
        TopologyError
            If `target` cannot be reached from `source`.
        """
        if source == target:
            return [source]
        tree = self._tree(source)
        if target not in tree:
            raise TopologyError(f"no route from {source!r} to {target!r}")
        nodes = [target]
        node = target
        while node != source:
            node = _pick(tree[node], source, target, node)
            nodes.append(node)
        nodes.reverse()
        return nodes
