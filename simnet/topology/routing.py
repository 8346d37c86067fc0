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
from itertools import count
from types import MappingProxyType

import networkx as nx

from simnet.errors import TopologyError

__all__ = ["Router"]

_HOP_SCALE = 1 << 20
_SEARCHES_KEPT = 64
"""Searches kept (least recently used dropped first). Routes themselves are all
cached; searches only speed up further routes from the same source, which callers
such as the engine request together (pairs sorted by source)."""
_NOTHING = MappingProxyType({})


def _cost(data) -> int:
    return round(data["latency_s"] * 1e12) * _HOP_SCALE + 1


def _pick(choices: list, source: Hashable, target: Hashable, node: Hashable):
    if len(choices) == 1:
        return choices[0]
    ordered = sorted(choices, key=str)
    digest = zlib.crc32(f"{source}|{target}|{node}".encode())
    return ordered[digest % len(ordered)]


class _Search:
    """A resumable Dijkstra from one source over integer costs.

    ``best[v]`` is the shortest distance to ``v`` found so far and ``pred[v]`` every
    expanding node ``u`` found so far with ``dist(u) + cost(u, v) == best[v]``.
    Costs are positive integers, so once every node at distance below ``best[v]``
    has been expanded, that is once the heap holds nothing smaller than
    ``best[v]``, neither can change again: :meth:`Router._advance` stops there and
    a later call resumes. Non-forwarding nodes other than the source never expand,
    so they never enter the heap.

    A search with a `base` extends a complete search (the base) to more nodes: it
    holds only the nodes whose distance or predecessors differ from the base's and
    falls back to the base for the others (see :meth:`Router._overlay`).
    """

    __slots__ = ("source", "hosts", "heap", "best", "pred", "ticket", "stubs", "base_best", "base_pred")

    def __init__(self, source: Hashable, hosts: tuple, stubs: frozenset, base: _Search | None = None) -> None:
        self.source = source
        self.hosts = hosts
        self.stubs = stubs
        self.ticket = count(1)
        if base is None:
            self.heap = [(0, 0, source)]
            self.best = {source: 0}
            self.pred = {source: []}
            self.base_best = self.base_pred = _NOTHING
        else:
            self.heap, self.best, self.pred = [], {}, {}
            self.base_best, self.base_pred = base.best, base.pred

    def relax(self, u: Hashable, d: int, edges: list) -> None:
        """Offer the links `edges` out of `u`, at distance `d`, to their heads."""
        best, pred, base_best, stubs = self.best, self.pred, self.base_best, self.stubs
        for v, cost in edges:
            candidate = d + cost
            known = best.get(v)
            if known is None:
                known = base_best.get(v)
            if known is None or candidate < known:
                best[v] = candidate
                pred[v] = [u]
                if v not in stubs:
                    heappush(self.heap, (candidate, next(self.ticket), v))
            elif candidate == known:
                choices = pred.get(v)
                if choices is None:
                    pred[v] = [*self.base_pred[v], u]
                else:
                    choices.append(u)

    def predecessors(self, node: Hashable) -> list:
        """The equal-cost predecessors of `node` (its own, else the base's)."""
        choices = self.pred.get(node)
        return self.base_pred[node] if choices is None else choices


class Router:
    """Computes and caches routes on one topology graph.

    Searches are Dijkstra's algorithm over integer costs, each node's
    equal-cost predecessors collected in full, with two savings that leave every
    route unchanged:

    * a search stops as soon as the target's distance and the predecessors of
      every node on its routes are final (the heap holds nothing closer), and a
      later route from the same source resumes it: Dijkstra settles nodes in
      order of distance, so stopping early changes nothing already settled;
    * on a graph with ``host_transit = False`` the links into each server are kept
      apart, so that a search scans only the links into the servers it may use;
      the search over the fabric and the source's server (the base) is done once
      per source, and a route into another server ``B`` extends it by ``B`` alone
      (see :meth:`_overlay`).

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
        self._searches: dict[tuple, _Search] = {}
        self._paths: dict[tuple, tuple] = {}
        self._stubs = frozenset(node for node, forward in graph.nodes(data="forward") if forward is False)
        self._host = {node: host for node, host in graph.nodes(data="host") if host is not None}
        self._transit = graph.graph.get("host_transit", True) is not False
        hosts = {} if self._transit else self._host
        self._open: dict = {}
        self._into: dict = {}
        self._feeders: dict = {}
        for u in graph:
            self._open[u], self._into[u] = [], {}
            for v, data in graph.adj[u].items():
                host = hosts.get(v)
                if host is None:
                    self._open[u].append((v, _cost(data)))
                else:
                    self._into[u].setdefault(host, []).append((v, _cost(data)))
            for host in self._into[u]:
                if host != hosts.get(u):
                    self._feeders.setdefault(host, []).append(u)
        self._dims = None
        if graph.graph.get("routing") == "dimension_order":
            self._dims = tuple(graph.graph["dims"])
            self._routers = {
                tuple(coord): node for node, coord in graph.nodes(data="coord") if coord is not None
            }
            self._coord = {node: coord for coord, node in self._routers.items()}

    def _search(self, source: Hashable, target: Hashable) -> _Search:
        """The search from `source` that may route to `target`, from the cache or new.

        Searches are kept in a small least-recently-used cache: one search can be as
        large as the graph, so keeping all of them would cost gigabytes on thousands
        of GPUs.
        """
        home = self._host.get(source)
        extra = None
        if not self._transit:
            host = self._host.get(target)
            if host is not None and host != home:
                extra = host
        key = (source, extra)
        search = self._searches.pop(key, None)
        if search is None:
            if extra is None:
                search = _Search(source, () if self._transit or home is None else (home,), self._stubs)
            else:
                search = self._overlay(self._search(source, source), extra)
            if len(self._searches) >= _SEARCHES_KEPT:
                del self._searches[next(iter(self._searches))]
        self._searches[key] = search
        return search

    def _overlay(self, base: _Search, host: Hashable) -> _Search:
        """Extend the complete `base` search by the nodes of server `host`.

        The base searched the fabric (nodes without a host) and the source's server.
        The overlay seeds the nodes of `host` from the links into them out of the
        base's expanding nodes, then runs Dijkstra on, relaxing links into the
        fabric, the source's server and `host`. A base node keeps its base distance
        and predecessors unless the overlay reaches it at most as cheaply:

        * cheaper: it enters the overlay with the new distance and its one new
          predecessor (no base node can be one: its base distance plus the link
          cost is at least the node's base distance, more than the new one);
        * as cheaply: the overlay node is added to a copy of its base predecessors,
          which all stay valid (a base predecessor reached more cheaply would make
          the node cheaper too).

        A node reached more cheaply through `host` enters the heap, so everything
        the extension changes is found, in order of distance as in one search over
        the fabric, the source's server and `host` together.
        """
        self._advance(base, None)
        source, stubs = base.source, self._stubs
        overlay = _Search(source, (*base.hosts, host), stubs, base)
        for u in self._feeders.get(host, ()):
            d = base.best.get(u)
            if d is not None and (u not in stubs or u == source):
                overlay.relax(u, d, self._into[u][host])
        return overlay

    def _advance(self, search: _Search, target: Hashable) -> None:
        """Run `search` until `target`'s route is final (to the end for ``None``)."""
        heap, best, hosts, relax = search.heap, search.best, search.hosts, search.relax
        links, into = self._open, self._into
        while heap:
            known = best.get(target)
            if known is not None and heap[0][0] >= known:
                return
            d, _, u = heappop(heap)
            if best[u] < d:
                continue
            relax(u, d, links[u])
            extra = into[u]
            if extra:
                for host in hosts:
                    edges = extra.get(host)
                    if edges:
                        relax(u, d, edges)

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
        search = self._search(source, target)
        self._advance(search, target)
        if target not in search.best and target not in search.base_best:
            raise TopologyError(f"no route from {source!r} to {target!r}")
        nodes = [target]
        node = target
        while node != source:
            node = _pick(search.predecessors(node), source, target, node)
            nodes.append(node)
        nodes.reverse()
        if self._dims is not None:
            nodes = self._reroute(nodes)
        self._paths[(source, target)] = tuple(nodes)
        return nodes
