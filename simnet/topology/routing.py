"""Deterministic routing: what real fabrics do, chosen per topology.

Every route is a list of nodes plus, for every hop over a bundle of separate cables
(see ``striped`` in :mod:`simnet.topology.contract`), the cable it is pinned to. The
graph attribute ``routing`` (or the ``routing`` argument of :class:`Router`,
overriding it) names the rule; all of them are deterministic, so routes are the same
in every run and process whatever ``PYTHONHASHSEED`` is.

``"shortest"`` (the default)
    A shortest path under the lexicographic cost (total latency, hop count), with
    latencies compared in whole picoseconds so that equal-cost paths are recognised
    exactly. Walking back from the target, at a node with several equal-cost
    predecessors the one first in graph order is taken, as a static shortest-path
    table does; a bundle's cable is the target's position in graph order modulo the
    bundle's cables.
``"ecmp_hash"``
    The same shortest paths with ties broken like ECMP in a switch, but without
    randomness: at every node with ``k`` equal-cost predecessors the one at index
    ``h("s|t|node") mod k`` of the predecessors sorted by name (then by type
    name, should two names print alike), and over a bundle the cable
    ``h("s|t|u|v") mod cables``, ``s`` and ``t`` being the route's end points.
    ``h`` is BLAKE2b keyed with ``hash_seed`` (8 bytes, little-endian; the first 4
    bytes of the digest, little-endian), so every seed, 0 (the default) included,
    stands for one switch's hash function, one draw of the hash's luck: different
    pairs spread over the equal-cost paths as a random hash spreads them. CRC-32
    would not do: CRC is affine, so over these structured keys it spreads pairs in
    a regular pattern (on fat-trees and leaf-spines often as evenly as d-mod-k, on
    others worse than a random hash), and a salt only relabels the paths of keys
    of one length and keeps which pairs collide.
``"dmodk"``
    Up/down destination-mod-k on fat-trees and leaf-spines, as an InfiniBand subnet
    manager programs them (:mod:`simnet.topology.updown`): between two nodes cabled
    to the fabric, the route climbs by the destination's port index and descends
    along the destination's own climb. Other stretches (inside a server) follow
    ``"shortest"``. The default of :func:`~simnet.topology.fat_tree` and
    :func:`~simnet.topology.leaf_spine`.
``"dimension_order"``
    On tori (graph attribute ``dims``, routers with ``coord``): every stretch of a
    route over routers is replaced by dimension-order routing, dimension 0 first,
    each along the shorter way around its ring, the ``+1`` direction when both ways
    are equally long (Dally and Towles 2004, 14.2). Other stretches follow
    ``"shortest"``; bundles as ``"shortest"``. The default of
    :func:`~simnet.topology.torus`.
``"simgrid"``
    SimGrid 3.32's own zones, for cross-checks against SMPI: on a torus,
    TorusZone's dimension order, whose tie goes ``+1`` except from coordinate
    ``d/2`` of an even ring, which goes ``-1``, the source's coordinate deciding
    (src/kernel/routing/TorusZone.cpp, ``get_local_route``); on a fat-tree,
    FatTreeZone's d-mod-k (see :mod:`simnet.topology.updown`).

Servers and rails: a route between GPUs (or any nodes with ``rail``) of two
different servers enters the other server through the NIC of the destination's
rail. It leaves its server through the NIC of the destination's rail where that
NIC is as near to a source GPU as the GPU's own (cabled to the GPU, or to the PCIe
switch or CPU the GPU and its own NIC hang off), else through the NIC of the
source's rail: NCCL's GPU-NIC affinity, each GPU using a NIC closest to it (on its
PCIe switch), and its graph search keeping a ring on one rail where such a NIC
allows (``crossNic = 0``, ``ncclTopoSearchCheckNet`` in ``src/graph/search.cc``),
which a rail-optimised fabric is built for. The two stretches inside the servers
are shortest paths over the server's own nodes, the stretch between the NICs
follows the fabric's rule. With the graph attribute ``pxn`` (NCCL's PXN, "PCI x
NVLink") a source GPU with no NIC of the destination's rail that near first moves
the data over NVLink to the GPU of its own server on the destination's rail (the
first such GPU in graph order) and sends through that GPU's NIC, so a message
crosses the fabric between NICs of one rail.

Three optional attributes of the contract (:mod:`simnet.topology.contract`)
restrict the shortest paths:

* a node with ``forward = False`` relays nothing: only routes that start or end
  at it use its links (GPUs inside a server do not relay for each other);
* a graph with ``host_transit = False`` never routes traffic between two servers
  through a third: nodes whose ``host`` is neither endpoint's host are avoided;
* ``dims`` and ``coord`` mark tori for the dimension-order rules.

References
----------
Dally, W. J. and Towles, B. (2004). Principles and Practices of Interconnection
Networks, 14.2 (dimension-order routing). Morgan Kaufmann.
NVIDIA NCCL documentation, Environment Variables: ``NCCL_PXN_DISABLE`` (inter-node
communication through a non-local NIC, over NVLink and an intermediate GPU).
SimGrid 3.32 source: src/kernel/routing/TorusZone.cpp, FatTreeZone.cpp.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Sequence
from heapq import heappop, heappush
from itertools import chain, count

import networkx as nx
import numpy as np

from simnet.errors import TopologyError
from simnet.topology.contract import ROUTINGS, separate_cables
from simnet.topology.updown import UpDown

__all__ = ["Router"]

_HOP_SCALE = 1 << 20
_LINKS_SCANNED = 16
"""Incoming links of a relaying target up to which a search rescans them after every step
to stop as early as possible (see :class:`_Search`)."""
_SEARCHES_KEPT = 64
"""Searches from a source kept (least recently used dropped first). Routes
themselves are all cached; searches only speed up further routes from the same
source, which callers such as the engine request together (pairs sorted by source)."""
_FABRIC_NODES_KEPT = 2_000_000
"""Fabric searches kept, counted in nodes reached (least recently used dropped first)."""


def _cost(data) -> int:
    return round(data["latency_s"] * 1e12) * _HOP_SCALE + 1


def _digest(key: str, seed: int) -> int:
    """The ECMP hash of `key`: BLAKE2b keyed with the seed (8 bytes in, 4 bytes out, both little-endian)."""
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=4, key=seed.to_bytes(8, "little")).digest(),
                          "little")


def _hashed(choices: list, source: Hashable, target: Hashable, node: Hashable, seed: int = 0):
    ordered = sorted(choices, key=lambda node: (str(node), type(node).__name__))
    return ordered[_digest(f"{source}|{target}|{node}", seed) % len(ordered)]


def _over_links(links: list, distance: Callable, source: Hashable, stubs: frozenset) -> tuple[int | None, list]:
    """Distance of a node and its equal-cost predecessors, from its incoming `links`.

    This is the definition itself: the distance is the least ``distance(u) + cost``
    over the links ``u -> node`` out of nodes that expand (forwarding ones and
    `source`), the predecessors are the ``u`` that reach it. It is exact once
    ``distance`` is final for every ``u`` with ``distance(u) + cost`` at most the
    result.
    """
    best, choices = None, []
    for u, cost in links:
        if u in stubs and u != source:
            continue
        d = distance(u)
        if d is None:
            continue
        d += cost
        if best is None or d < best:
            best, choices = d, [u]
        elif d == best:
            choices.append(u)
    return best, choices


class _Search:
    """Resumable Dijkstra from `source` over integer costs.

    It scans the links of ``links[u]`` and, for each host of `hosts`, of
    ``into[u][host]``; the router leaves links into non-forwarding nodes out of
    both, as such nodes relay nothing. ``best[v]`` is the least distance to ``v``
    found so far and ``pred[v]`` every expanded ``u`` with ``best[u] + cost(u, v)
    == best[v]``. Costs are positive integers, so every node at a distance below
    the top of the heap has been expanded: the labels at most the top are final
    and so are their ``pred`` lists (their predecessors are closer still).

    A target's distance and predecessors are read off its incoming links
    (:func:`_over_links`). :meth:`reach` searches only until that is final, that is
    until every link ``u -> target`` comes out of a node with a final label or can
    no longer reach the target as cheaply (``u`` is at least as far as the top of
    the heap), and a later call resumes: Dijkstra settles nodes in order of
    distance, so stopping early changes nothing already settled. A relaying target
    with more than ``_LINKS_SCANNED`` incoming links (a switch with thousands of
    GPUs) is not rescanned after every step: the search runs until the target's own
    label is final (at most the top of the heap), as in a plain Dijkstra; every
    node closer than the target has then been expanded, so the reading off its
    links is exact.
    """

    __slots__ = ("source", "hosts", "router", "heap", "best", "pred", "ticket")

    def __init__(self, router: Router, source: Hashable, hosts: tuple) -> None:
        self.router, self.source, self.hosts = router, source, hosts
        self.heap = [(0, 0, source)]
        self.best = {source: 0}
        self.pred = {source: []}
        self.ticket = count(1)

    def predecessors(self, node: Hashable) -> list:
        """Equal-cost predecessors of a node on a route found by :meth:`reach`."""
        return self.pred[node]

    def reach(self, target: Hashable) -> tuple[int | None, list]:
        """Distance to `target` (``None``: unreachable) and its equal-cost predecessors."""
        links, stubs = self.router._incoming[target], self.router._stubs
        source, best, heap = self.source, self.best, self.heap
        if len(links) > _LINKS_SCANNED and target not in stubs:
            while heap and best.get(target, heap[0][0] + 1) > heap[0][0]:
                self.advance(1)
            return _over_links(links, best.get, source, stubs)
        while True:
            found = _over_links(links, best.get, source, stubs)
            if not heap:
                return found
            top = heap[0][0]
            if found[0] is not None and all(
                (u in stubs and u != source) or best.get(u, top + 1) <= top or top + cost > found[0]
                for u, cost in links
            ):
                return found
            self.advance(1)

    def advance(self, steps: int | None = None) -> None:
        """Expand `steps` more nodes (all for ``None``)."""
        heap, best, pred, hosts, ticket = self.heap, self.best, self.pred, self.hosts, self.ticket
        links, into = self.router._links, self.router._into
        while heap and steps != 0:
            d, _, u = heappop(heap)
            if best[u] < d:
                continue
            if steps is not None:
                steps -= 1
            edges = links[u]
            extra = into[u]
            if extra:
                edges = chain(edges, *(extra.get(host, ()) for host in hosts))
            for v, cost in edges:
                candidate = d + cost
                known = best.get(v)
                if known is None or candidate < known:
                    best[v] = candidate
                    pred[v] = [u]
                    heappush(heap, (candidate, next(ticket), v))
                elif candidate == known:
                    pred[v].append(u)


class _Composite:
    """Routes from `source` (in a server) over the fabric and the servers `hosts` only.

    For ``host_transit = False``: the allowed nodes are the servers' (``I``) and
    the fabric's (nodes without a host, ``F``). A shortest route leaves ``I`` for
    ``F`` through a link ``a -> b`` (an *exit*) and comes back through a link
    ``b' -> a'``, so with ``δ_b`` the distances of a search from ``b`` over ``F``
    alone (shared by every source, :meth:`Router._fabric`):

    * distances in ``I`` are those of a Dijkstra over ``I`` whose links are the
      links inside ``I`` plus one shortcut ``a -> a'`` of cost
      ``cost(a, b) + δ_b(b') + cost(b', a')`` per exit and entry (``a``, ``b'``
      relaying);
    * the distance of a fabric node ``x`` is the least ``dist(a) + cost(a, b) +
      δ_b(x)`` over the exits out of relaying ``a`` (the last stretch of a route
      to ``x`` in ``F`` starts after its last node in ``I``);
    * the equal-cost predecessors of a fabric node ``x`` are, over the exits that
      reach it at that distance, ``a`` where ``b = x`` and else the predecessors of
      ``x`` in the search from ``b``: a predecessor ``u`` in ``F`` lies at its own
      distance on an exit's search, which then reaches ``x`` through ``u`` at the
      same distance, and conversely;
    * a server node's predecessors follow from its incoming links
      (:func:`_over_links`).

    These are the distances and predecessors of one Dijkstra over ``I`` and ``F``
    together, which the servers' few nodes make cheap to assemble.
    """

    __slots__ = ("source", "router", "islands", "exits", "fabric")

    def __init__(self, router: Router, source: Hashable, hosts: tuple) -> None:
        self.router, self.source = router, source
        stubs = router._stubs
        exits = [
            (a, router._fabric(b), cost)
            for host in hosts
            for a, b, cost in router._exits.get(host, ())
            if a not in stubs or a == source
        ]
        entries = [(b, a, cost) for host in hosts for b, a, cost in router._entries.get(host, ()) if b not in stubs]
        shortcuts: dict = {}
        for a, search, out in exits:
            for b, a2, back in entries:
                d = search.best.get(b)
                if d is not None:
                    shortcuts.setdefault(a, []).append((a2, out + d + back))
        self.islands = router._islands(source, hosts, shortcuts)
        self.exits = [(self.islands[a] + cost, search, a) for a, search, cost in exits if a in self.islands]
        self.fabric: dict = {}

    def reach(self, target: Hashable) -> tuple[int | None, list]:
        """Distance to `target` (``None``: unreachable) and its equal-cost predecessors."""
        router = self.router
        return _over_links(router._incoming[target], self.distance, self.source, router._stubs)

    def distance(self, node: Hashable) -> int | None:
        """Distance to `node` (``None``: unreachable)."""
        router = self.router
        if node in router._host:
            return self.islands.get(node)
        if node in router._stubs:
            return _over_links(router._incoming[node], self.distance, self.source, router._stubs)[0]
        if node not in self.fabric:
            found = [out + d for out, search, _ in self.exits if (d := search.best.get(node)) is not None]
            self.fabric[node] = min(found, default=None)
        return self.fabric[node]

    def predecessors(self, node: Hashable) -> list:
        """Equal-cost predecessors of `node`."""
        router = self.router
        if node in router._host:
            return _over_links(router._incoming[node], self.distance, self.source, router._stubs)[1]
        best = self.distance(node)
        choices: dict = {}
        for out, search, a in self.exits:
            d = search.best.get(node)
            if d is not None and out + d == best:
                choices.update(dict.fromkeys([a] if search.source == node else search.pred[node]))
        return list(choices)


class Router:
    """Computes and caches routes on one topology graph, by the rule its ``routing`` names.

    Shortest paths are the ones a Dijkstra over the allowed nodes from their source
    would give (equal-cost predecessors collected in full), found with less work:

    * a search stops once the target's distance and the predecessors of the nodes
      on its routes are final, and the next route from the same source resumes it
      (:class:`_Search`); non-forwarding nodes, which relay nothing, are left out
      of the search and only read off their incoming links when they are the
      target;
    * with ``host_transit = False`` a route from a server's node is assembled from
      a small search over the servers involved and searches over the fabric alone
      from each switch a server is cabled to, which all sources share
      (:class:`_Composite`).

    Between servers a route goes through the NICs of the rails (see the module
    docstring), the stretch between them by the fabric's rule.

    Parameters
    ----------
    graph : networkx.DiGraph
        A validated topology (see :mod:`simnet.topology.contract`).
    routing : str, optional
        One of :data:`~simnet.topology.contract.ROUTINGS`; default the graph's
        ``routing`` attribute, else ``"shortest"``.
    pxn : bool, optional
        Send to other servers through the NIC of the destination's rail (default the
        graph's ``pxn`` attribute, else False).
    hash_seed : int, optional
        Seed of the ``ecmp_hash`` tie-breaking hash, in ``[0, 2**64)`` (default 0):
        every seed is another hash function, one draw of the hash's luck (see the
        module docstring). Only ``ecmp_hash`` hashes.

    Raises
    ------
    TopologyError
        For an unknown `routing`, or dimension-order routing on a graph that is no
        torus (path ``routing``); for a `hash_seed` that is no such integer, or one
        other than 0 under another routing than ``ecmp_hash`` (path ``hash_seed``).

    Examples
    --------
    >>> from simnet.topology import switch
    >>> Router(switch(4, 1e9, 1e-6)).path("gpu0", "gpu3")
    ['gpu0', 'switch', 'gpu3']
    """

    def __init__(self, graph: nx.DiGraph, *, routing: str | None = None, pxn: bool | None = None,
                 hash_seed: int = 0) -> None:
        mode = graph.graph.get("routing", "shortest") if routing is None else routing
        if not isinstance(mode, str) or mode not in ROUTINGS:
            raise TopologyError(f"must be one of {list(ROUTINGS)}, got {mode!r}", path="routing")
        if not isinstance(hash_seed, (int, np.integer)) or isinstance(hash_seed, bool) or not 0 <= hash_seed < 2**64:
            raise TopologyError(f"must be an integer in [0, 2**64), got {hash_seed!r}", path="hash_seed")
        if hash_seed and mode != "ecmp_hash":
            raise TopologyError(f"only routing 'ecmp_hash' hashes, and the routing is {mode!r}: seed {hash_seed} "
                                "would change nothing", path="hash_seed")
        pxn = graph.graph.get("pxn", False) if pxn is None else pxn
        if pxn not in (True, False):
            raise TopologyError(f"must be true or false, got {pxn!r}", path="pxn")
        self.routing: str = mode
        self.pxn: bool = bool(pxn)
        self.hash_seed: int = int(hash_seed)
        self._graph = graph
        self._searches: dict[tuple, _Search | _Composite] = {}
        self._fabrics: dict[Hashable, _Search] = {}
        self._fabric_nodes = 0
        self._paths: dict[tuple, tuple] = {}
        self._local: dict[Hashable, tuple[dict, dict]] = {}
        self._members: dict[Hashable, list] = {}
        self._place: dict[Hashable, int] = {}
        self._shapes: dict[tuple, list] = {}
        self._twins: dict[Hashable, list] = {}
        self._walks: dict[tuple, tuple] = {}
        self._unpinned: dict[int, tuple[int, ...]] = {}
        self._middles: dict[tuple, tuple] = {}
        self._ways_out: dict[Hashable, int | None] = {}
        self._ways_in: dict[Hashable, int | None] = {}
        self._kinds: dict[tuple, int] = {}
        self._kind_of: dict[Hashable, int] = {}
        self._kind_members: list[list] = []
        self._order = {node: i for i, node in enumerate(graph)}
        self._stubs = stubs = frozenset(node for node, forward in graph.nodes(data="forward") if forward is False)
        self._host = {node: host for node, host in graph.nodes(data="host") if host is not None}
        for node, host in self._host.items():
            members = self._members.setdefault(host, [])
            self._place[node] = len(members)
            members.append(node)
        self._transit = graph.graph.get("host_transit", True) is not False
        hosts = {} if self._transit else self._host
        self._links: dict = {u: [] for u in graph}
        self._into: dict = {u: {} for u in graph}
        self._incoming: dict = {v: [] for v in graph}
        self._out: dict = {u: [] for u in graph}
        self._inner: dict = {u: [] for u in hosts}
        self._exits: dict = {}
        self._entries: dict = {}
        self._bundles: dict = {}
        for u, v, data in graph.edges(data=True):
            cost = _cost(data)
            self._incoming[v].append((u, cost))
            self._out[u].append((v, cost))
            home, host = hosts.get(u), hosts.get(v)
            if v not in stubs:
                (self._links[u] if host is None else self._into[u].setdefault(host, [])).append((v, cost))
            if home is not None and host is not None:
                self._inner[u].append((v, cost))
            elif home is not None:
                self._exits.setdefault(home, []).append((u, v, cost))
            elif host is not None:
                self._entries.setdefault(host, []).append((u, v, cost))
            cables = separate_cables(graph, u, v) if data.get("cables", 1) != 1 else 1
            if cables > 1:
                self._bundles[u, v] = cables
        self._bundled = {self._host[u] for u, v in self._bundles
                         if u in self._host and self._host.get(v) == self._host[u]}
        self._uplink = {u: links[0][0] for u, links in self._out.items() if len(links) == 1
                        and links[0][0] not in stubs}
        self._downlink = {v: links[0][0] for v, links in self._incoming.items() if len(links) == 1
                          and links[0][0] not in stubs}
        self._between: dict[tuple, tuple] = {}
        self._nics: dict = {}
        self._rail_gpus: dict = {}
        self._rail = {node: rail for node, rail in graph.nodes(data="rail") if rail is not None}
        self._rail_kinds = {node: graph.nodes[node]["kind"] for node in self._rail}
        self._gpus = frozenset(node for node, kind in graph.nodes(data="kind") if kind == "gpu")
        for node, rail in self._rail.items():
            if node in self._host:
                kind = graph.nodes[node]["kind"]
                if kind == "nic":
                    self._nics.setdefault((self._host[node], rail), node)
                elif kind == "gpu":
                    self._rail_gpus.setdefault((self._host[node], rail), node)
        self._near_rails = self._local_nic_rails(graph)
        self._dims = None
        if mode == "dimension_order" or (mode == "simgrid" and "dims" in graph.graph):
            if "dims" not in graph.graph:
                raise TopologyError(
                    "dimension-order routing needs a torus (graph attribute dims, routers with coord); "
                    "routing 'shortest' takes any graph",
                    path="routing",
                )
            self._dims = tuple(graph.graph["dims"])
            self._routers = {
                tuple(coord): node for node, coord in graph.nodes(data="coord") if coord is not None
            }
            self._coord = {node: coord for coord, node in self._routers.items()}
        self._updown: UpDown | None = None
        self._tree = mode == "dmodk" or (mode == "simgrid" and self._dims is None)

    def _search(self, source: Hashable, target: Hashable) -> _Search | _Composite:
        """The search from `source` that routes to `target`, from the cache or new.

        Searches are kept in a small least-recently-used cache: one search can be as
        large as the graph, so keeping all of them would cost gigabytes on thousands
        of GPUs.
        """
        if self._transit:
            return self._cached((source, ()), lambda: _Search(self, source, ()))
        home, host = self._host.get(source), self._host.get(target)
        hosts = tuple(dict.fromkeys(h for h in (home, host) if h is not None))
        return self._cached((source, hosts), lambda: (
            _Search(self, source, hosts) if home is None else _Composite(self, source, hosts)
        ))

    def _cached(self, key: tuple, make: Callable):
        search = self._searches.pop(key, None)
        if search is None:
            search = make()
            if len(self._searches) >= _SEARCHES_KEPT:
                del self._searches[next(iter(self._searches))]
        self._searches[key] = search
        return search

    def _fabric(self, switch: Hashable) -> _Search:
        """The complete search from `switch` over the nodes without a host (shared by all sources)."""
        search = self._fabrics.pop(switch, None)
        if search is None:
            search = _Search(self, switch, ())
            if switch not in self._stubs:
                search.advance()
            self._fabric_nodes += len(search.best)
            while self._fabrics and self._fabric_nodes > _FABRIC_NODES_KEPT:
                self._fabric_nodes -= len(self._fabrics.pop(next(iter(self._fabrics))).best)
        self._fabrics[switch] = search
        return search

    def _islands(self, source: Hashable, hosts: tuple, shortcuts: dict) -> dict:
        """Distances from `source` to the nodes of the servers `hosts` (Dijkstra over them and `shortcuts`)."""
        stubs, host, inner = self._stubs, self._host, self._inner
        dist: dict = {}
        heap = [(0, 0, source)]
        ticket = count(1)
        while heap:
            d, _, u = heappop(heap)
            if u in dist:
                continue
            dist[u] = d
            if u in stubs and u != source:
                continue
            for v, cost in chain(inner[u], shortcuts.get(u, ())):
                if v not in dist and host[v] in hosts:
                    heappush(heap, (d + cost, next(ticket), v))
        return dist

    def _pick(self, choices: list, source: Hashable, target: Hashable, node: Hashable):
        """One of the equal-cost predecessors `choices` of `node` on the route `source` -> `target`."""
        if len(choices) == 1:
            return choices[0]
        if self.routing == "ecmp_hash":
            return _hashed(choices, source, target, node, self.hash_seed)
        return min(choices, key=self._order.__getitem__)

    def _pin(self, nodes: Sequence, source: Hashable, target: Hashable) -> tuple[int, ...]:
        """The cable of every hop of `nodes` on the route `source` -> `target` (0 unless a bundle); where
        nothing is bundled, one tuple of zeros per length serves every route."""
        if not self._bundles:
            pins = self._unpinned.get(len(nodes))
            if pins is None:
                pins = self._unpinned[len(nodes)] = (0,) * (len(nodes) - 1)
            return pins
        cables = []
        for u, v in zip(nodes, nodes[1:]):
            bundle = self._bundles.get((u, v), 1)
            if bundle == 1:
                cables.append(0)
            elif self.routing == "ecmp_hash":
                cables.append(_digest(f"{source}|{target}|{u}|{v}", self.hash_seed) % bundle)
            else:
                cables.append(self._order[target] % bundle)
        return tuple(cables)

    def _walk(self, search, first: Hashable, last: Hashable, source: Hashable, target: Hashable) -> list:
        """Nodes from `first` to `last` along `search`'s equal-cost predecessors, ties by :meth:`_pick`."""
        best, choices = search.reach(last)
        if best is None:
            raise TopologyError(f"no route from {first!r} to {last!r}")
        node = self._pick(choices, source, target, last)
        nodes = [last, node]
        while node != first:
            node = self._pick(search.predecessors(node), source, target, node)
            nodes.append(node)
        nodes.reverse()
        return nodes

    def _inside(self, first: Hashable, last: Hashable, source: Hashable, target: Hashable) -> tuple:
        """Shortest path from `first` to `last` over the nodes of `first`'s server only.

        Ties are broken by :meth:`_pick`, which depends on the route's `source` and `target` only under
        ``ecmp_hash``; under every other routing the path is kept per (`first`, `last`).
        """
        if first == last:
            return (first,)
        hashed = self.routing == "ecmp_hash"
        if not hashed:
            walk = self._walks.get((first, last))
            if walk is not None:
                return walk
            home = self._host.get(first)
            if home is not None and self._host.get(last) == home:
                twins, members = self._twin_server(home), self._members[home]
                if twins is not members:
                    place = self._place
                    try:
                        there = self._inside(twins[place[first]], twins[place[last]], source, target)
                    except TopologyError:
                        raise TopologyError(f"no route from {first!r} to {last!r} inside their server") from None
                    walk = self._walks[first, last] = tuple(members[place[node]] for node in there)
                    return walk
        best, pred = self._inside_search(first)
        if last not in best:
            raise TopologyError(f"no route from {first!r} to {last!r} inside their server")
        nodes = [last]
        while nodes[-1] != first:
            nodes.append(self._pick(pred[nodes[-1]], source, target, nodes[-1]))
        walk = tuple(reversed(nodes))
        if not hashed:
            self._walks[first, last] = walk
        return walk

    def _twin_server(self, host: Hashable) -> list:
        """The nodes, in graph order, of the first server built like `host` (`host`'s own when it is the first).

        Two servers are built alike when their nodes, numbered in graph order, have the same ``forward``
        flags and the same links between them with the same costs. Their searches inside the server are then
        the same up to that numbering, and so are their walks where ties go to the first node in graph order
        (every routing but ``ecmp_hash``, whose ties hash node names): one server's searches serve all its
        twins.
        """
        twins = self._twins.get(host)
        if twins is None:
            members, place, stubs = self._members[host], self._place, self._stubs
            shape = (
                tuple(node in stubs for node in members),
                tuple(sorted((place[u], place[v], cost) for u in members for v, cost in self._out[u]
                             if self._host.get(v) == host)),
            )
            twins = self._twins[host] = self._shapes.setdefault(shape, members)
        return twins

    def _inside_search(self, first: Hashable) -> tuple[dict, dict]:
        """Distances and equal-cost predecessors from `first` over the nodes of its server (cached)."""
        found = self._local.get(first)
        if found is None:
            host, stubs = self._host[first], self._stubs
            best, pred, done = {first: 0}, {first: []}, set()
            heap = [(0, 0, first)]
            ticket = count(1)
            while heap:
                d, _, u = heappop(heap)
                if u in done:
                    continue
                done.add(u)
                if u in stubs and u != first:
                    continue
                for v, cost in self._out[u]:
                    if self._host.get(v) != host:
                        continue
                    known = best.get(v)
                    if known is None or d + cost < known:
                        best[v], pred[v] = d + cost, [u]
                        heappush(heap, (d + cost, next(ticket), v))
                    elif d + cost == known:
                        pred[v].append(u)
            found = self._local[first] = (best, pred)
        return found

    def _stays_inside(self, source: Hashable, target: Hashable) -> bool:
        """Whether every shortest route between two nodes of one server stays inside it.

        Asked only where a route is searched, not where the fabric's up/down rule
        routes two of its endpoints. A route that leaves the server costs at least the cheapest way out (distance
        inside to a relaying node with a link to the fabric, plus that link) plus the
        cheapest link back in. When that bound exceeds the distance inside, the
        Dijkstra over the server and the fabric (:class:`_Composite`) finds the same
        distances and equal-cost predecessors on the way as the one inside the server
        alone, so :meth:`_inside` gives its route.
        """
        home = self._host.get(source)
        if self._transit or home is None or self._host.get(target) != home:
            return False
        twins, place = self._twin_server(home), self._place
        best = self._inside_search(twins[place[source]])[0]
        inside = best.get(twins[place[target]])
        if inside is None:
            return False
        if source not in self._ways_out:
            self._ways_out[source] = min(
                (best[twins[place[a]]] + cost for a, _, cost in self._exits.get(home, ())
                 if twins[place[a]] in best and (a not in self._stubs or a == source)), default=None)
        back, out = self._way_in(home), self._ways_out[source]
        return back is None or out is None or out + back > inside

    def _way_in(self, host: Hashable) -> int | None:
        """Cost of the cheapest link into server `host` from a node that relays traffic (None: no such link)."""
        if host not in self._ways_in:
            self._ways_in[host] = min(
                (cost for b, _, cost in self._entries.get(host, ()) if b not in self._stubs), default=None)
        return self._ways_in[host]

    def server_kinds(self, nodes: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray, list[list]]:
        """Servers that route alike inside, for routing many pairs inside servers at once.

        Per node of `nodes`, the number of its server's kind (-1 where it has none) and its place among
        its server's nodes in graph order (-1 outside servers); per kind, the nodes of its first server.
        Servers of one kind are built alike (:meth:`_twin_server`), have their cheapest links in and their
        links out at the same places with the same costs, the same kinds of nodes on the same rails at the
        same places, and no bundle of separate cables inside. The route between two nodes of such a server
        is searched inside it exactly as between the nodes at the same places of any other server of the
        kind (:meth:`_stays_inside`, :meth:`_inside`) and pins cable 0 on every hop, so :meth:`inside_walk`
        of those two, mapped place by place, is the route's one stretch where :meth:`stretches` searches
        inside the server; likewise the first and last stretches of a route between rails
        (:meth:`rail_ends`) from or to nodes at the same places, towards or from the same rail. That holds
        under every routing but ``ecmp_hash`` (whose ties hash node names) and only where servers relay no
        traffic between others (``host_transit = False``); otherwise every node is of no kind. Nodes that the
        fabric's up/down rule routes between (:attr:`simnet.topology.updown.UpDown.endpoints`) are of no kind
        either. The list of first servers is the caller's own (more kinds may be found later).
        """
        kind = np.full(len(nodes), -1, dtype=np.int64)
        place = np.array([self._place.get(node, -1) for node in nodes], dtype=np.int64)
        if self.routing == "ecmp_hash" or self._transit:
            return kind, place, []
        endpoints = self._tree_routes().endpoints if self._tree else ()
        for k, node in enumerate(nodes):
            host = self._host.get(node)
            if host is not None and node not in endpoints:
                kind[k] = self._server_kind(host)
        return kind, place, list(self._kind_members)

    def _server_kind(self, host: Hashable) -> int:
        """The number of server `host`'s kind (:meth:`server_kinds`), -1 where it has none."""
        found = self._kind_of.get(host)
        if found is None:
            members, place = self._members[host], self._place
            if host in self._bundled:
                found = -1
            else:
                shape = (self._twin_server(host)[0], self._way_in(host),
                         tuple(sorted((place[a], cost) for a, _, cost in self._exits.get(host, ()))),
                         tuple((self._rail_kinds.get(node), self._rail.get(node)) for node in members))
                found = self._kinds.setdefault(shape, len(self._kinds))
                if found == len(self._kind_members):
                    self._kind_members.append(members)
            self._kind_of[host] = found
        return found

    def server_nodes(self, node: Hashable) -> list:
        """The nodes of `node`'s server in graph order (their places, :meth:`server_kinds`)."""
        return self._members[self._host[node]]

    def inside_walk(self, source: Hashable, target: Hashable) -> tuple | None:
        """The nodes of the route from `source` to `target`, two nodes of one server, where it is searched
        inside the server (:meth:`_stays_inside`); None where it is not (it may then leave the server)."""
        if not self._stays_inside(source, target):
            return None
        return self._inside(source, target, source, target)

    def _tree_routes(self) -> UpDown:
        if self._updown is None:
            self._updown = UpDown(self._graph, simgrid=self.routing == "simgrid")
        return self._updown

    def _fabric_route(self, first: Hashable, last: Hashable, source: Hashable, target: Hashable) -> tuple:
        """Nodes and cables from NIC `first` to NIC `last` over the fabric, by the fabric's rule.

        Kept per (`first`, `last`) where the route's `source` and `target` cannot change it: under the
        fabric's up/down rule, or without ``ecmp_hash`` and bundles of separate cables (:meth:`_pick`,
        :meth:`_pin`).
        """
        found = self._middles.get((first, last))
        if found is not None:
            return found
        if self._tree:
            tree = self._tree_routes()
            if first in tree.endpoints and last in tree.endpoints:
                found = self._middles[first, last] = tree.route(first, last)
                return found
        search = self._cached((first, "fabric"), lambda: _Search(self, first, ()))
        nodes = self._walk(search, first, last, source, target)
        if self._dims is not None:
            nodes = self._reroute(nodes)
        found = tuple(nodes), self._pin(nodes, source, target)
        if self.routing != "ecmp_hash" and not self._bundles:
            self._middles[first, last] = found
        return found

    def _local_nic_rails(self, graph: nx.DiGraph) -> dict[Hashable, frozenset]:
        """Per GPU of a rail whose server has NICs of other rails as near as its own, the rails of those NICs.

        As near: no more hops from the GPU, where its own NIC is one or two hops away (cabled to the GPU, or
        to a relaying node the GPU is cabled to: its PCIe switch or CPU), over nodes of its server.
        """
        near: dict[Hashable, frozenset] = {}
        nodes = graph.nodes
        hubs: dict[Hashable, list] = {}
        for (host, _), nic in self._nics.items():
            for hub in graph.predecessors(nic):
                if hub not in self._gpus and nodes[hub].get("forward", True) and self._host.get(hub) == host:
                    hubs.setdefault(hub, []).append(nic)
        for gpu in self._gpus:
            home = self._host.get(gpu)
            own = self._nics.get((home, self._rail.get(gpu)))
            if own is None:
                continue
            found = [nic for nic in graph.successors(gpu) if self._rail_kinds.get(nic) == "nic"
                     and self._nics.get((home, self._rail[nic])) == nic]
            if own not in found:
                found += [nic for hub in graph.successors(gpu) for nic in hubs.get(hub, ())]
                if own not in found:
                    continue
            rails = frozenset(self._rail[nic] for nic in found if self._host.get(nic) == home) - {self._rail[gpu]}
            if rails:
                near[gpu] = rails
        return near

    @property
    def exits_by_target(self) -> bool:
        """Whether the NIC a route between servers leaves through can depend on the target's rail (:attr:`pxn`,
        or a GPU with NICs of other rails as near as its own), not on its source alone."""
        return self.pxn or bool(self._near_rails)

    def _rails(self, source: Hashable, target: Hashable) -> tuple | None:
        """Exit NIC, entry NIC and relaying GPU of a route between the rails of two servers, or None."""
        home, host = self._host.get(source), self._host.get(target)
        if home is None or host is None or home == host:
            return None
        out, into = self._rail.get(source), self._rail.get(target)
        if out is None or into is None:
            return None
        relay = source
        if out != into and into in self._near_rails.get(source, ()):
            out = into
        elif self.pxn and out != into and source in self._gpus:
            relay = self._rail_gpus.get((home, into), source)
            out = into if relay != source else out
        exit_nic, entry_nic = self._nics.get((home, out)), self._nics.get((host, into))
        for nic, node, server, rail in ((exit_nic, source, home, out), (entry_nic, target, host, into)):
            if nic is None:
                raise TopologyError(f"node {node!r}: rail {rail} has no NIC with rail {rail} in server {server}")
        return exit_nic, entry_nic, relay

    def _route(self, source: Hashable, target: Hashable) -> tuple[tuple, tuple]:
        """Nodes and per-hop cables from `source` to `target` (cached)."""
        key = (source, target)
        cached = self._paths.get(key)
        if cached is not None:
            return cached
        stretches = self.stretches(source, target)
        if len(stretches) == 1:
            route = stretches[0]
        else:
            nodes, cables = stretches[0]
            for more, pins in stretches[1:]:
                nodes, cables = nodes + more[1:], cables + pins
            route = (nodes, cables)
        self._paths[key] = route
        return route

    def rails(self, nodes: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray] | None:
        """Server and rail of each node as integers (-1 where it has none), for routing many pairs at once; None
        where the fabric has no up/down rule to serve them (:meth:`fabric`: ``shortest``, ``ecmp_hash``, tori).

        A route between the rails of two servers is three stretches (:meth:`stretches`): the first depends
        only on its source (and, where :attr:`exits_by_target`, on the target's rail), the last only on its target, the
        middle only on the NICs they end and start at; but where the first crosses a bundle of separate
        cables (:meth:`crosses_bundle`), the route's target picks the cable.
        """
        if not self._tree:
            return None
        servers: dict[Hashable, int] = {}
        rails: dict[Hashable, int] = {}
        server = [servers.setdefault(self._host[n], len(servers)) if n in self._host else -1 for n in nodes]
        rail = [rails.setdefault(self._rail[n], len(rails)) if n in self._rail else -1 for n in nodes]
        return np.array(server, dtype=np.int64), np.array(rail, dtype=np.int64)

    def crosses_bundle(self, nodes: Sequence[Hashable]) -> bool:
        """Whether a path of `nodes` crosses a bundle of separate cables (whose cable :meth:`_pin` picks per
        route)."""
        return bool(self._bundles) and any((u, v) in self._bundles for u, v in zip(nodes, nodes[1:]))

    def fabric(self) -> UpDown | None:
        """The fabric's up/down routes (:class:`simnet.topology.updown.UpDown`), for routing many pairs of its
        endpoints (NICs of a cluster) at once; None where the fabric has no up/down rule."""
        return self._tree_routes() if self._tree else None

    def rail_ends(self, source: Hashable, target: Hashable) -> tuple[tuple[tuple, tuple], tuple[tuple, tuple]] | None:
        """The first and last of the three :meth:`stretches` of a route between the rails of two servers (from
        the source to its exit NIC, from the entry NIC to the target), or None for any other route.

        Raises
        ------
        TopologyError
            If a server has no NIC on the route's rail.
        """
        if (rails := self._rails(source, target)) is None:
            return None
        exit_nic, entry_nic, relay = rails
        return self._head(source, target, relay, exit_nic), self._tail(source, target, entry_nic)

    def _head(self, source: Hashable, target: Hashable, relay: Hashable, exit_nic: Hashable) -> tuple[tuple, tuple]:
        """First stretch of a route between rails: inside the source's server, by `relay`, to `exit_nic`."""
        nodes = self._inside(source, relay, source, target)[:-1] + self._inside(relay, exit_nic, source, target)
        return nodes, self._pin(nodes, source, target)

    def _tail(self, source: Hashable, target: Hashable, entry_nic: Hashable) -> tuple[tuple, tuple]:
        """Last stretch of a route between rails: from `entry_nic` to the target inside its server."""
        nodes = self._inside(entry_nic, target, source, target)
        return nodes, self._pin(nodes, source, target)

    def stretches(self, source: Hashable, target: Hashable) -> tuple[tuple[tuple, tuple], ...]:
        """The route from `source` to `target` as consecutive stretches of ``(nodes, cables)``.

        A route between the rails of two servers has three: inside the source's server to its exit NIC,
        the fabric to the entry NIC, inside the target's server; each starts at the node where the one
        before it ends. Every other route is one stretch. Stretches are shared by many routes (every GPU
        of a rail leaves through the same NIC pairs), so a caller can key what it derives from a route by
        its stretches (:meth:`simnet.network.Network.route` numbers links that way).

        Raises
        ------
        TopologyError
            As :meth:`path`.
        """
        for node in (source, target):
            if node not in self._incoming:
                raise TopologyError(f"no node {node!r} in the topology")
        if source == target:
            return (((source,), ()),)
        if (rails := self._rails(source, target)) is not None:
            exit_nic, entry_nic, relay = rails
            first = self._head(source, target, relay, exit_nic)
            middle = self._fabric_route(exit_nic, entry_nic, source, target)
            return first, middle, self._tail(source, target, entry_nic)
        tree = self._tree_routes() if self._tree else None
        if tree is not None and source in tree.endpoints and target in tree.endpoints:
            return (tree.route(source, target),)
        if self._stays_inside(source, target):
            nodes = self._inside(source, target, source, target)
            return ((nodes, self._pin(nodes, source, target)),)
        nodes = self._searched(source, target)
        if self._dims is not None:
            nodes = self._reroute(nodes)
        return ((tuple(nodes), self._pin(nodes, source, target)),)

    def _searched(self, source: Hashable, target: Hashable) -> list:
        """Nodes of the shortest route from `source` to `target` by a search from `source`, or from the only
        node `source` has a link to.

        Every route out of a node with one outgoing link ``source -> up``, ``up`` a relaying node, starts with it,
        so a search from ``up`` settles every other node at its distance from `source` less that link's
        cost, with the same equal-cost predecessors (none of them is `source`, whose only link leads to
        ``up``, settled first): the walk back from `target` is the same down to ``up``. One search then
        serves every node below a switch (the hosts of a star, a leaf's servers) where each would otherwise
        start its own. Likewise a route into a node whose only incoming link is ``down -> target``, ``down``
        a relaying node, ends with it; where ties do not depend on the route's ends (all routings but
        ``ecmp_hash``), the walk from ``up`` to ``down`` is kept for every such pair of ends.
        """
        up = self._uplink.get(source) if self._transit else None
        if up is None:
            return self._walk(self._search(source, target), source, target, source, target)
        if target == up:
            return [source, up]
        down = self._downlink.get(target) if self.routing != "ecmp_hash" else None
        try:
            if down is None:
                return [source, *self._walk(self._search(up, target), up, target, source, target)]
            middle = self._between.get((up, down))
            if middle is None:
                middle = self._between[up, down] = (
                    (up,) if up == down else tuple(self._walk(self._search(up, down), up, down, source, target)))
            return [source, *middle, target]
        except TopologyError:
            raise TopologyError(f"no route from {source!r} to {target!r}") from None

    def _dimension_order(self, first: Hashable, last: Hashable) -> list:
        coord = list(self._coord[first])
        goal = self._coord[last]
        nodes = [first]
        for axis, size in enumerate(self._dims):
            forward = (goal[axis] - coord[axis]) % size
            if forward == 0:
                continue
            if self.routing == "simgrid":
                mine, half = coord[axis], size // 2
                ahead = mine < goal[axis] <= mine + half or (mine > half and (mine + half) % size >= goal[axis])
                step = 1 if ahead else -1
            else:
                step = 1 if forward <= size - forward else -1
            for _ in range(forward if step == 1 else size - forward):
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
            If `source` or `target` is not a node of the graph, or `target` cannot be
            reached from `source`.
        """
        return list(self._route(source, target)[0])

    def hops(self, source: Hashable, target: Hashable) -> list[tuple[Hashable, Hashable, int]]:
        """The route from `source` to `target` as ``(u, v, cable)`` hops.

        ``cable`` is the index of the cable of the bundle ``u -> v`` the route is
        pinned to (0 for a single cable or a striped bundle).

        Raises
        ------
        TopologyError
            As :meth:`path`.
        """
        nodes, cables = self._route(source, target)
        return list(zip(nodes, nodes[1:], cables))
