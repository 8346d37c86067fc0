"""Network: ranks, routes and directed links of a topology.

A :class:`Network` numbers the GPUs of a topology graph as ranks (in the order the
graph lists them; builders add GPUs hierarchy-major, node by node and GPU by GPU),
numbers its directed links, one per directed edge and, for a bundle of separate
cables (see ``striped`` in :mod:`simnet.topology.contract`), one per cable, and maps
every ordered rank pair to a route: a tuple of link indices (see
:class:`simnet.topology.Router` for the rules). How transfers share those links is
the business of the link models (:mod:`simnet.links`), which the engine drives.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from itertools import starmap
from typing import TYPE_CHECKING, Any

import networkx as nx
import numpy as np

from simnet.errors import SimnetError, TopologyError, did_you_mean
from simnet.links import RouteTable, concatenated
from simnet.speed import KeyedRows, unique_inverse, with_room
from simnet.topology import ROUTINGS, Router, gpus, reduce_efficiency, reducing_switches, separate_cables, validate

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Network", "BUNDLES"]

_COMPOSED_FROM = 64
"""Fewest routes to find at once for which :meth:`Network.routes` composes routes from stretches."""

BUNDLES = ("cables", "merged")
"""How a network models a bundle of separate cables: one link per cable, or one merged link."""


class Network:
    """Ranks, routes and directed links of a validated topology.

    Parameters
    ----------
    graph : networkx.DiGraph
        Topology obeying :mod:`simnet.topology.contract`; it is validated here.
    tier_efficiency : mapping of str to float, optional
        Fraction of line rate each named tier achieves, in ``(0, 1]``, e.g.
        ``{"nvlink": 0.8}`` for an effective NVLink bandwidth of 80 % of line rate.
        It scales ``bandwidth_Bps`` of every link of that tier; everything built on
        the network (link models, closed forms, exports) then sees the effective
        bandwidth, while the graph keeps the line rate. Tiers not named keep 1.
    routing : str, optional
        Routing rule, one of :data:`~simnet.topology.ROUTINGS`, overriding the
        graph's ``routing`` attribute (see :mod:`simnet.topology.routing`).
    hash_seed : int, optional
        Seed of the ``ecmp_hash`` routing's hash (default 0; see
        :class:`~simnet.topology.Router`): every seed breaks the ties of equal-cost
        paths by another hash function, one draw of the hash's luck. Refused (other
        than 0) under another routing.
    bundles : {"cables", "merged"}, optional
        ``"cables"`` (default): every cable of a bundle that is not striped is a link
        of its own, ``bandwidth_Bps / cables``, and each route uses the one its
        routing rule pins it to. ``"merged"``: every bundle is one link of the
        summed bandwidth, an approximation that lets flows of one bundle share its
        cables perfectly (what simnet did before cables were links).
    ranks : sequence of nodes, optional
        The GPU each rank runs on (a placement, like an MPI hostfile); distinct GPUs
        of the graph, default all of them in graph order.

    Attributes
    ----------
    graph : networkx.DiGraph
        The topology.
    ranks : tuple
        GPU node of each rank.
    links : tuple of (node, node, int)
        Directed edge and cable index of each link index (cable 0 for a single
        cable, a striped bundle or a merged one).
    bandwidth_Bps, latency_s : numpy.ndarray
        Per-link effective bandwidth (bytes/s) and latency (s).
    efficiency : numpy.ndarray
        Per-link factor applied to the graph's line rate.
    tiers : tuple of str
        Per-link tier.
    routing : str
        The routing rule in force.
    hash_seed : int
        Seed of the ``ecmp_hash`` hash.
    bundles : str
        How bundles are modelled.
    """

    def __init__(
        self,
        graph: nx.DiGraph,
        *,
        tier_efficiency: Mapping[str, float] | None = None,
        routing: str | None = None,
        hash_seed: int = 0,
        bundles: str = "cables",
        ranks: Sequence[Hashable] | None = None,
    ) -> None:
        self.graph = validate(graph)
        if routing is not None and routing not in ROUTINGS:
            raise SimnetError(f"must be one of {list(ROUTINGS)}, got {routing!r}", path="routing")
        if bundles not in BUNDLES:
            raise SimnetError(f"must be one of {list(BUNDLES)}, got {bundles!r}", path="bundles")
        self.bundles = bundles
        self.ranks = tuple(gpus(graph)) if ranks is None else _placement(graph, ranks)
        links = []
        line_rate = []
        for u, v, data in graph.edges(data=True):
            cables = separate_cables(graph, u, v) if bundles == "cables" and data.get("cables", 1) != 1 else 1
            links.extend((u, v, cable) for cable in range(cables))
            line_rate.extend([data["bandwidth_Bps"] / cables] * cables)
        self.links = tuple(links)
        self._link_index = {link: i for i, link in enumerate(self.links)}
        self.tiers = tuple(graph.edges[u, v]["tier"] for u, v, _ in self.links)
        self.efficiency = _efficiency(self.tiers, tier_efficiency)
        self.bandwidth_Bps = np.array(line_rate, dtype=float) * self.efficiency
        self.latency_s = np.array([graph.edges[u, v]["latency_s"] for u, v, _ in self.links], dtype=float)
        self._router = Router(graph, routing=routing, hash_seed=hash_seed)
        self.routing = self._router.routing
        self.hash_seed = self._router.hash_seed
        self._routes: dict[tuple[int, int], tuple[int, ...]] = {}
        self._stretch_links: dict[tuple, tuple[int, ...]] = {}
        self._rails: tuple[np.ndarray, np.ndarray] | tuple[()] | None = None
        self._edge_table: tuple[list, np.ndarray, np.ndarray] | None = None
        self._pieces = _Pieces()
        self._heads: dict[int, tuple[int, int]] = {}
        self._tails: dict[int, tuple[int, int]] = {}
        self._middles = KeyedRows(1)
        self._kept_routes = KeyedRows(3)
        self._kinds: tuple[np.ndarray, np.ndarray, list[list], int] | None = None
        self._server_ranks: np.ndarray | None = None
        self._walks: dict[int, list[int] | None] = {}
        self._inner_links = KeyedRows(1)
        self._endpoints: list[Hashable] = []
        self._endpoint_ids: dict[Hashable, int] = {}
        self._reducers: dict[tuple[int, ...], Hashable] = {}
        self._hops_to: dict[Hashable, np.ndarray] = {}
        self._into: tuple[np.ndarray, np.ndarray, dict[Hashable, int]] | None = None
        self._derived: dict[Hashable, Any] = {}

    def derived(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """What `compute` derives from this network, computed once per `key`.

        For models that read the whole network (NCCL's graphs and cost model per
        release): a network is not changed after it is built, so the value holds.
        """
        if key not in self._derived:
            self._derived[key] = compute()
        return self._derived[key]

    @property
    def name(self) -> str:
        """Name of the topology (``graph.graph["name"]``)."""
        return str(self.graph.graph.get("name", "topology"))

    @property
    def size(self) -> int:
        """Number of ranks."""
        return len(self.ranks)

    def link(self, u: Hashable, v: Hashable, cable: int = 0) -> int:
        """Index of the directed link ``u -> v`` (cable `cable` of a bundle of separate cables)."""
        return self._link_index[(u, v, cable)]

    def node(self, endpoint: int) -> Hashable:
        """The graph node of an endpoint: rank ``i < size`` is GPU ``ranks[i]``, higher ids are :meth:`endpoint` nodes."""
        if 0 <= endpoint < len(self.ranks):
            return self.ranks[endpoint]
        extra = endpoint - len(self.ranks)
        if 0 <= extra < len(self._endpoints):
            return self._endpoints[extra]
        raise SimnetError(f"rank {endpoint} does not exist; the network has {len(self.ranks)} ranks")

    def endpoint(self, node: Hashable) -> int:
        """The endpoint id of a node that is not a rank (a switch), ``≥ size``, numbered on first use."""
        found = self._endpoint_ids.get(node)
        if found is None:
            if node not in self.graph:
                raise SimnetError(f"no node {node!r} in the topology")
            found = self._endpoint_ids[node] = len(self.ranks) + len(self._endpoints)
            self._endpoints.append(node)
        return found

    def reduction_switch(self, ranks: Sequence[int]) -> Hashable:
        """The reduce-capable switch (node attribute ``reduce``) that serves the GPUs of `ranks`.

        Among the switches with ``reduce = True`` that every GPU of the group reaches,
        the one whose farthest GPU is the fewest hops away, then the one with the
        fewest hops in all, then the one the fewest GPUs reach through a NIC of
        another rail than their own (node attribute ``rail``; two GPUs sharing a PCIe
        switch with two NICs are as near to both NICs' leaves), then the first in graph
        order: the NVSwitch of a server for a group inside it, the lowest common SHARP
        switch of a fabric otherwise (for the heads of rail ``h``, the leaf of rail ``h``, or a
        spine when the rail spans several leaves: :meth:`aggregation_switches` gives the leaves below).
        A group inside one server of several is served by that server's switches only:
        a fabric's SHARP switch does not stand in for an NVSwitch without NVLS. (On a
        topology of one server, a switch without a ``host`` is that server's.)

        Raises
        ------
        SimnetError
            When no reduce-capable switch serves every GPU of the group, or a group
            inside one server has none in that server (path ``switches``).
        """
        key = tuple(int(r) for r in ranks)
        found = self._reducers.get(key)
        if found is not None:
            return found
        nodes = [self.node(r) for r in key]
        hosts = {self.graph.nodes[n].get("host") for n in nodes}
        candidates = reducing_switches(self.graph)
        local = [n for n in candidates if len(hosts) == 1 and self.graph.nodes[n].get("host") in hosts]
        if not local and len(hosts) == 1 and None not in hosts and self._servers() > 1:
            fabric = any(self.graph.nodes[n].get("host") is None for n in candidates)
            raise SimnetError(
                f"ranks {list(key)} are GPUs of one server, which has no reduce-capable switch (reduce: true on "
                "its NVSwitch)" + ("; the fabric's SHARP switches do not reduce inside a server" if fabric else ""),
                path="switches")
        position = self._links_into()[2]
        positions = np.array([position[n] for n in nodes], dtype=np.int64)
        best, rest = None, []
        for order, switch in enumerate(local or [n for n in candidates if self.graph.nodes[n].get("host") is None]):
            fewest = self._fewest_hops(switch)[positions]
            if (fewest < 0).any():
                continue
            if best is None:
                best = next(iter(self._reduction_scores(nodes, [(order, switch)])), None)
            elif (int(fewest.max()), int(fewest.sum()), 0) < best[0][:3]:
                rest.append((order, switch))
        if best is not None and rest:
            best = min([best, *self._reduction_scores(nodes, rest, best[0][:3])])
        if best is None:
            raise SimnetError(
                f"ranks {list(key)} have no reduce-capable switch in common (a switch with reduce: true that "
                "reaches all of them); in-network reductions need one",
                path="switches",
            )
        self._reducers[key] = best[1]
        return best[1]

    def _links_into(self) -> tuple[np.ndarray, np.ndarray, dict[Hashable, int]]:
        """The graph's links by their head, for searches against the links: the tails of the links into the node
        at position ``i`` (graph order) are ``sources[starts[i]:starts[i + 1]]``; and each node's position."""
        if self._into is None:
            order = {node: i for i, node in enumerate(self.graph)}
            heads = np.array([order[v] for _, v in self.graph.edges], dtype=np.int64)
            tails = np.array([order[u] for u, _ in self.graph.edges], dtype=np.int64)
            by_head = np.argsort(heads, kind="stable")
            self._into = (np.searchsorted(heads[by_head], np.arange(len(order) + 1)), tails[by_head], order)
        return self._into

    def _fewest_hops(self, switch: Hashable) -> np.ndarray:
        """Hops of the shortest path to `switch` from each node, by its position in graph order (-1 where no path
        leads there; no route has fewer): a breadth-first search against the links, kept for the fabric's
        switches (each group of a rail scores them all) but not for a server's (one group each)."""
        found = self._hops_to.get(switch)
        if found is not None:
            return found
        starts, sources, order = self._links_into()
        hops = np.full(len(order), -1, dtype=np.int32)
        frontier = np.array([order[switch]], dtype=np.int64)
        hops[frontier] = level = 0
        while frontier.size:
            level += 1
            first, counts = starts[frontier], starts[frontier + 1] - starts[frontier]
            offsets = np.repeat(first - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
            reached = np.unique(sources[offsets])
            frontier = reached[hops[reached] < 0]
            hops[frontier] = level
        if self.graph.nodes[switch].get("host") is None:
            self._hops_to[switch] = hops
        return hops

    def _reduction_scores(self, nodes: Sequence[Hashable], switches: Sequence[tuple[int, Hashable]],
                          bound: tuple[int, int, int] | None = None
                          ) -> list[tuple[tuple[int, int, int, int], Hashable]]:
        """``((max hops, sum of hops, routes off their GPU's rail, order), switch)`` of the routes from `nodes` to
        each ``(order, switch)`` of `switches` that every node reaches and that scores below `bound` (each term only
        grows, so a switch is dropped as soon as its routes so far reach it). Routed GPU by GPU to every switch
        still in play, so that the routes from one GPU share its search (switch by switch, each route of a large
        group started its own)."""
        alive = {order: [switch, 0, 0, 0] for order, switch in switches}
        for node in nodes:
            for order in list(alive):
                entry = alive[order]
                try:
                    route = self._router.hops(node, entry[0])
                except TopologyError:
                    del alive[order]
                    continue
                entry[1], entry[2] = max(entry[1], len(route)), entry[2] + len(route)
                entry[3] += self._off_rail(node, route)
                if bound is not None and tuple(entry[1:]) >= bound:
                    del alive[order]
            if not alive:
                return []
        return [((most, total, off, order), switch) for order, (switch, most, total, off) in alive.items()]

    def aggregation_switches(self, ranks: Sequence[int]) -> list[Hashable]:
        """Where the data of each GPU of `ranks` is first reduced on its way to :meth:`reduction_switch` of them.

        An in-network reduction of GPUs on several servers (InfiniBand SHARP) runs along
        an aggregation tree: every reduce-capable switch sums what reaches it from below
        and sends one stream up (Graham et al., 2016, SHArP). For each GPU of the group,
        the first reduce-capable fabric switch (``reduce = True``, no ``host``) on its
        route to the group's :meth:`reduction_switch`, leaving its server through the NIC
        of its own rail where it has one (node attribute ``rail``, as a CollNet head uses
        its own NIC): its leaf where the leaf reduces, the group's switch itself where
        nothing below it does.

        Raises
        ------
        SimnetError
            As :meth:`reduction_switch`.
        """
        root = self.reduction_switch(ranks)
        nodes = self.graph.nodes
        nics = {(data.get("host"), data.get("rail")): nic for nic, data in self.graph.nodes(data=True)
                if data.get("kind") == "nic" and data.get("rail") is not None}
        found = []
        for rank in ranks:
            gpu = self.node(int(rank))
            nic = nics.get((nodes[gpu].get("host"), nodes[gpu].get("rail")))
            route = self._router.hops(gpu, root) if nic is None else self._router.hops(nic, root)
            found.append(next((hop[1] for hop in route if nodes[hop[1]].get("kind") == "switch"
                               and nodes[hop[1]].get("reduce") and nodes[hop[1]].get("host") is None), root))
        return found

    def exit_rail(self, src: int, dst: int) -> Hashable | None:
        """The rail of the NIC that the route from rank `src` to rank `dst` leaves its server through.

        Defined for routes between the rails of two servers (see :mod:`simnet.topology.routing`) that leave
        without relaying over another GPU: through the NIC of the source's rail, or of the target's rail where
        that NIC is as near to the source. None for any other route (inside a server, relayed by PXN, or without
        rails).
        """
        try:
            ends = self._router.rail_ends(self.node(int(src)), self.node(int(dst)))
        except TopologyError:
            return None
        if ends is None:
            return None
        nodes = ends[0][0]
        if any(self.graph.nodes[node].get("kind") == "gpu" for node in nodes[1:]):
            return None
        return self.graph.nodes[nodes[-1]].get("rail")

    def _off_rail(self, gpu: Hashable, route: Sequence[tuple]) -> bool:
        """Whether `route` from `gpu` leaves through a NIC of another rail than the GPU's."""
        nodes = self.graph.nodes
        rail = nodes[gpu].get("rail")
        if rail is None:
            return False
        return any(nodes[hop[1]].get("kind") == "nic" and nodes[hop[1]].get("rail", rail) != rail for hop in route)

    def _servers(self) -> int:
        """How many hosts the ranks' GPUs are on (GPUs without a ``host`` count as one)."""
        return len({self.graph.nodes[self.node(rank)].get("host") for rank in range(len(self.ranks))})

    def place(self, ranks: Sequence[int], switches: Sequence[Sequence[int]] = ()) -> tuple[np.ndarray, np.ndarray]:
        """Network endpoints of a schedule's endpoints, and the reduce efficiency of each.

        Parameters
        ----------
        ranks : sequence of int
            Network rank of each schedule rank.
        switches : sequence of sequence of int
            The schedule's switch groups (:attr:`simnet.schedule.Schedule.switches`),
            in schedule ranks; each is placed on :meth:`reduction_switch` of its GPUs.

        Returns
        -------
        endpoints : numpy.ndarray of int64
            The ranks, then one endpoint id per switch group.
        efficiency : numpy.ndarray of float
            :meth:`reduce_efficiency` of each endpoint.
        """
        placed = np.asarray(ranks, dtype=np.int64)
        extra = [self.endpoint(self.reduction_switch(placed[list(group)].tolist())) for group in switches]
        endpoints = np.concatenate([placed, np.array(extra, dtype=np.int64)])
        efficiency = np.array([self.reduce_efficiency(int(e)) for e in endpoints])
        return endpoints, efficiency

    def reduce_efficiency(self, endpoint: int) -> float:
        """Fraction of link bandwidth the reductions and multicasts of a switch endpoint achieve (1 for a rank)."""
        if endpoint < len(self.ranks):
            return 1.0
        return reduce_efficiency(self.graph, self.node(endpoint))

    def route(self, src: int, dst: int) -> tuple[int, ...]:
        """Links from endpoint `src` to endpoint `dst` (ranks or switches), in order (empty when ``src == dst``)."""
        key = (src, dst)
        route = self._routes.get(key)
        if route is None:
            stretches = self._router.stretches(self.node(src), self.node(dst))
            if len(stretches) == 1:
                route = self._links_of(stretches[0])
            else:
                route = ()
                for stretch in stretches:
                    route += self._kept_links(stretch)
            self._routes[key] = route
        return route

    def routes(self, src: np.ndarray, dst: np.ndarray) -> list[tuple[int, ...]]:
        """:meth:`route` of every pair ``(src[i], dst[i])`` of endpoints, in order.

        The tuples of :meth:`route_table`: routes between the rails of two servers over an
        up/down fabric are composed from their stretches, every other pair is routed by
        :meth:`route`. Each route is the one :meth:`route` gives.

        Raises
        ------
        SimnetError, TopologyError
            As :meth:`route_table`.
        """
        src, dst = _pair_arrays(src, dst)
        if len(src) < _COMPOSED_FROM or not self._has_rails():
            return list(starmap(self.route, zip(src.tolist(), dst.tolist())))
        return self.route_table(src, dst).tuples()

    def route_table(self, src: np.ndarray, dst: np.ndarray, *, keep: bool = True) -> RouteTable:
        """:meth:`route` of every pair ``(src[i], dst[i])`` of endpoints, in order, as one table.

        Routes between the rails of two servers over an up/down fabric are composed from
        three pieces (:meth:`_composed`): the first stretch of the route (:meth:`simnet.topology.Router.stretches`)
        with the fabric's first hop where every route from its NIC starts with the same hop
        (:meth:`simnet.topology.updown.UpDown.leads`), derived once per source (per source and target rail under
        PXN); the rest of the fabric, once per pair of the switch or NIC it starts at and the target's NIC
        (:meth:`simnet.topology.updown.UpDown.routes_of`, for all such pairs at once); and the last stretch,
        once per target. A pair of ranks of one server whose route is searched inside it takes the walk found
        once for the pair at the same places of servers of its kind (:meth:`_inside`), its route then a piece of
        its own. Every other pair, and every pair :meth:`route` was already asked for, is routed (or looked
        up) by :meth:`route`, its route then a piece of its own. Pieces are kept once, and the pieces of each pair
        per pair (with `keep` false, not those of pairs composed in this call); the table is the pieces of its
        pairs one after the other. Fewer than 64 pairs, or ranks that sit on no rails of servers (see
        :meth:`simnet.topology.Router.rails`), are routed by :meth:`route` alone and kept by it only. Each route
        is the one :meth:`route` gives.

        Parameters
        ----------
        src, dst : numpy.ndarray of int
            Endpoints of each pair.
        keep : bool, optional
            Keep the pieces of the pairs composed here per pair, so that asking for them again looks them up
            (default). Composing a pair again from the kept pieces takes less time than looking it up among
            many (4.2 M pairs of 2048 GPUs: 0.24 s against 1 s) and no memory per pair (20 bytes kept):
            :meth:`simnet.engine.Simulation.run` routes without keeping, after :func:`simnet.jobs.run_jobs`
            routed its communicators' pairs ahead with keeping.

        Raises
        ------
        SimnetError
            If `src` and `dst` are not 1-D arrays of integers of one length; as :meth:`route`, for an
            endpoint that does not exist.
        TopologyError
            As :meth:`route`, for a pair without a route (not necessarily the first such pair in order).
        """
        src, dst = _pair_arrays(src, dst)
        if not (len(src) >= _COMPOSED_FROM and self._has_rails()
                and bool(((src >= 0) & (dst >= 0) & (src < 2**31) & (dst < 2**31)).all())):
            return RouteTable.of([self.route(a, b) for a, b in zip(src.tolist(), dst.tolist())])
        kept = self._kept_routes
        keys = (src << 32) | dst
        stored = kept.find(keys)
        pieces = np.full((len(src), 3), -1, dtype=np.int32)
        found = np.flatnonzero(stored >= 0)
        pieces[found] = kept.values[stored[found]]
        missing = np.flatnonzero(stored < 0)
        if self._routes and len(missing):
            missing = missing[~self._routed(src[missing], dst[missing], keys[missing])]
        if len(missing) >= _COMPOSED_FROM:
            at, composed = self._composed(src[missing], dst[missing])
            if len(at):
                if keep:
                    kept.add(keys[missing[at]], composed)
                pieces[missing[at]] = composed
            missing = missing[pieces[missing, 0] < 0]
            at, inside = self._inside(src[missing], dst[missing])
            if len(at):
                kept.add(keys[missing[at]], inside)
                pieces[missing[at]] = inside
        routed = np.flatnonzero(pieces[:, 0] < 0)
        if len(routed):
            pairs, pair = unique_inverse(keys[routed])
            own = np.full((len(pairs), 3), _Pieces.EMPTY, dtype=np.int32)
            own[:, 0] = self._pieces.add(RouteTable.of([self.route(key >> 32, key & 0xFFFFFFFF)
                                                        for key in pairs.tolist()]))
            kept.add(pairs, own)
            pieces[routed] = own[pair]
        parts = pieces.ravel()
        widths = self._pieces.hops[parts]
        offsets = np.zeros(len(src) + 1, dtype=np.int64)
        np.cumsum(widths.reshape(-1, 3).sum(axis=1), out=offsets[1:])
        return RouteTable(offsets, concatenated(self._pieces.links, self._pieces.first[parts], widths))

    def _routed(self, src: np.ndarray, dst: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """Per pair ``(src[i], dst[i])`` (key ``keys[i]``, as :meth:`route_table` makes them), whether :meth:`route`
        has routed it: each pair looked up among those, or each of those among the pairs, whichever are fewer."""
        cached = self._routes.keys()
        if len(cached) >= len(keys):
            return np.array([pair in cached for pair in zip(src.tolist(), dst.tolist())], dtype=bool)
        routed = np.fromiter((int(a) << 32 | int(b) for a, b in cached if 0 <= a < 2**31 and 0 <= b < 2**31),
                             dtype=np.int64)
        return np.isin(keys, routed)

    def _has_rails(self) -> bool:
        """Whether the ranks sit on the rails of servers (see :meth:`simnet.topology.Router.rails`)."""
        if self._rails is None:
            self._rails = self._router.rails(self.ranks) or ()
        return bool(self._rails)

    def _composed(self, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The routes of the pairs among `src`, `dst` that run between the rails of two servers over an up/down
        fabric (see :meth:`route_table`): their positions in the arguments, and the numbers of their three
        pieces in :attr:`_pieces` (int32, one row per position)."""
        none = np.zeros(0, dtype=np.int64), np.zeros((0, 3), dtype=np.int32)
        ranks = len(self.ranks)
        server, rail = self._rails
        chosen = np.flatnonzero((src >= 0) & (src < ranks) & (dst >= 0) & (dst < ranks))
        a, b = src[chosen], dst[chosen]
        railed = (server[a] >= 0) & (server[b] >= 0) & (server[a] != server[b]) & (rail[a] >= 0) & (rail[b] >= 0)
        chosen, a, b = chosen[railed], a[railed], b[railed]
        if len(chosen) == 0:
            return none
        rails = int(rail.max()) + 1
        firsts, first_at = unique_inverse(a * rails + rail[b] if self._router.exits_by_target else a * rails)
        lasts, last_at = unique_inverse(b)
        heads = self._ends(self._heads, firsts, a, b, first_at, 0)
        tails = self._ends(self._tails, lasts, a, b, last_at, 1)
        usable = (heads[first_at, 0] >= 0) & (tails[last_at, 0] >= 0)
        if not usable.all():
            chosen, first_at, last_at = chosen[usable], first_at[usable], last_at[usable]
            if len(chosen) == 0:
                return none
        starts, start_at = unique_inverse(heads[:, 1])
        entries, entry_at = unique_inverse(tails[:, 1])
        middles, middle_at = unique_inverse(start_at[first_at] * len(entries) + entry_at[last_at])
        keys = (starts[middles // len(entries)] << 32) | entries[middles % len(entries)]
        stored = self._middles.find(keys)
        middle = np.full(len(keys), -1, dtype=np.int64)
        old, new = np.flatnonzero(stored >= 0), np.flatnonzero(stored < 0)
        middle[old] = self._middles.values[stored[old], 0]
        if len(new):
            try:
                routed = self._router.fabric().routes_of(keys[new] >> 32, keys[new] & 0xFFFFFFFF)
            except TopologyError:
                return none
            middle[new] = self._pieces.add(RouteTable.of_padded(self._fabric_links(routed.edges, routed.hop_edges,
                                                                                   routed.cables)))
            self._middles.add(keys[new], middle[new, None])
        return chosen, np.stack([heads[first_at, 0], middle[middle_at], tails[last_at, 0]], axis=1).astype(np.int32)

    def _inside(self, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The routes of the pairs among `src`, `dst` of two ranks of one server that are searched inside it
        (see :meth:`route_table`): their positions in the arguments, and per position the numbers of its
        route's pieces in :attr:`_pieces` (int32; the route one piece per distinct pair, then two empty pieces).

        Pairs of servers of one kind (:meth:`simnet.topology.Router.server_kinds`) at the same places share
        one walk (:meth:`simnet.topology.Router.inside_walk`), found once; each hop's link is then read per
        server off the places of the hop's ends (:meth:`_server_links`).
        """
        none = np.zeros(0, dtype=np.int64), np.zeros((0, 3), dtype=np.int32)
        ranks = len(self.ranks)
        kind, place, _, width = self._server_kinds()
        server = self._rails[0]
        chosen = np.flatnonzero((src >= 0) & (src < ranks) & (dst >= 0) & (dst < ranks))
        a, b = src[chosen], dst[chosen]
        alike = (kind[a] >= 0) & (server[a] == server[b]) & (a != b)
        chosen, a, b = chosen[alike], a[alike], b[alike]
        if len(chosen) == 0:
            return none
        walks, walk_at = unique_inverse((kind[a] * width + place[a]) * width + place[b])
        hops = [self._walk_hops(code, width) for code in walks.tolist()]
        searched = np.array([hop is not None for hop in hops])[walk_at]
        chosen, a, b, walk_at = chosen[searched], a[searched], b[searched], walk_at[searched]
        if len(chosen) == 0:
            return none
        pairs, pair_at = unique_inverse(a * ranks + b)
        first = _one_of_each(pair_at, len(pairs))
        codes = RouteTable.of([hop or () for hop in hops]).padded(-1)[walk_at[first]]
        own = np.full((len(pairs), 3), _Pieces.EMPTY, dtype=np.int32)
        own[:, 0] = self._pieces.add(RouteTable.of_padded(self._server_links(server[a[first]], codes)))
        return chosen, own[pair_at]

    def _server_kinds(self) -> tuple[np.ndarray, np.ndarray, list[list], int]:
        """:meth:`simnet.topology.Router.server_kinds` of the ranks (kind, place, the nodes of each kind's first
        server) and the most nodes a server of a kind has, found on first use."""
        if self._kinds is None:
            kind, place, members = self._router.server_kinds(self.ranks)
            self._kinds = kind, place, members, max(map(len, members), default=0)
        return self._kinds

    def _walk_hops(self, code: int, width: int) -> list[int] | None:
        """The hops of :meth:`simnet.topology.Router.inside_walk` between the nodes at places ``code // width %
        width`` and ``code % width`` of the first server of kind ``code // width**2``, each as ``width`` times
        the place it leaves plus the place it reaches (kept per `code`); None where the route is not searched
        inside the server."""
        if code not in self._walks:
            nodes = self._kinds[2][code // (width * width)]
            walk = self._router.inside_walk(nodes[code // width % width], nodes[code % width])
            self._walks[code] = None if walk is None else _place_codes(walk, nodes, width)
        return self._walks[code]

    def _server_links(self, server: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """Per row, the links of hops inside server ``server[row]`` (a server number of :meth:`_has_rails`, all of
        whose ranks are of a kind) given as ``place * width + place`` of their ends (:meth:`_walk_hops`, -1 pads);
        -1 pads. Each is read off the server's nodes once and kept per server and hop."""
        width = self._kinds[3]
        square = width * width
        present = codes >= 0
        ends, end_at = unique_inverse((server[:, None] * square + codes)[present])
        stored = self._inner_links.find(ends)
        new = np.flatnonzero(stored < 0)
        if len(new):
            if self._server_ranks is None:
                numbers, first = np.unique(self._rails[0], return_index=True)
                self._server_ranks = np.full(int(numbers[-1]) + 1, -1, dtype=np.int64)
                self._server_ranks[numbers[numbers >= 0]] = first[numbers >= 0]
            index, links = self._link_index, []
            for code in ends[new].tolist():
                nodes = self._router.server_nodes(self.ranks[self._server_ranks[code // square]])
                links.append(index[(nodes[code // width % width], nodes[code % width], 0)])
            self._inner_links.add(ends[new], np.array(links, dtype=np.int32)[:, None])
            stored = self._inner_links.find(ends)
        rows = np.full(codes.shape, -1, dtype=np.int64)
        rows[present] = self._inner_links.values[stored[end_at], 0]
        return rows

    def _ends(self, kept: dict, keys: np.ndarray, a: np.ndarray, b: np.ndarray, at: np.ndarray,
              which: int) -> np.ndarray:
        """Per key of `keys`, from a route ``a[k] -> b[k]`` with that key, the number in :attr:`_pieces` of its
        first (`which` 0) or last (1) piece and the fabric node (:meth:`simnet.topology.updown.UpDown.numbers`)
        where the middle piece starts or ends, kept per key; -1, -1 where the route cannot be composed.

        The last piece is the last stretch of the route. The first is its first stretch and, where every
        route from the exit NIC starts with one hop (:meth:`simnet.topology.updown.UpDown.leads`), that hop:
        the middle then starts at the switch the hop reaches. A first stretch over a bundle of separate
        cables, one per link, whose cable each target picks (a last stretch's cables are its target's), or a
        NIC that is not the fabric's endpoint, cannot be composed. Stretches from or to ranks at the same
        place of servers of one kind, towards or from the same rail (:meth:`simnet.topology.Router.server_kinds`),
        are found once and read off each server's nodes (:meth:`_server_links`).
        """
        found = list(map(kept.get, keys.tolist()))
        if None in found:
            fabric = self._router.fabric()
            new = np.array([k for k, end in enumerate(found) if end is None], dtype=np.int64)
            pick = np.array(_one_of_each(at, len(keys)), dtype=np.int64)[new]
            end, far = (a[pick], b[pick]) if which == 0 else (b[pick], a[pick])
            kind, place, _, width = self._server_kinds()
            server, rail = self._rails
            shape = (kind[end] * width + place[end]) * (int(rail.max()) + 2)
            if which == 0 and self._router.exits_by_target:
                shape += rail[far] + 1
            shapes, shape_at = unique_inverse(np.where(kind[end] >= 0, shape, -1 - np.arange(len(new))))
            firsts = _one_of_each(shape_at, len(shapes))
            ends = [(end[k], far[k]) if which == 0 else (far[k], end[k]) for k in firsts]
            stretches = [self._router.rail_ends(self.ranks[int(source)], self.ranks[int(target)])[which]
                         for source, target in ends]
            longest = max(len(stretch[1]) for stretch in stretches) + 1 - which
            rows = np.full((len(new), longest), -1, dtype=np.int64)
            nic = [stretch[0][-1 if which == 0 else 0] for stretch in stretches]
            bundled = np.zeros(len(shapes), dtype=bool)
            if which == 0 and self.bundles == "cables":
                bundled[:] = [self._router.crosses_bundle(stretch[0]) for stretch in stretches]
            nics = [None] * len(new)
            for shape_number, (k, stretch) in enumerate(zip(firsts, stretches)):
                links = self._kept_links(stretch)
                rows[k, :len(links)] = links
                nics[k] = nic[shape_number]
            others = np.setdiff1d(np.arange(len(new)), firsts)
            if len(others):
                nodes = self._router.server_nodes
                alike = kind[end[firsts]] >= 0
                codes = RouteTable.of([_place_codes(stretch[0], nodes(stretch[0][0]), width) if shared else ()
                                       for stretch, shared in zip(stretches, alike.tolist())]).padded(-1)
                rows[others, :codes.shape[1]] = self._server_links(server[end[others]], codes[shape_at[others]])
                spots = [nodes(n).index(n) if shared else -1 for n, shared in zip(nic, alike.tolist())]
                for k in others.tolist():
                    nics[k] = nodes(self.ranks[int(end[k])])[spots[shape_at[k]]]
            number = fabric.numbers(nics)
            number[bundled[shape_at]] = -1
            usable = np.flatnonzero(number >= 0)
            if which == 0:
                edge, cable, number[usable] = fabric.leads(number[usable])
                led = usable[edge >= 0]
                hops = (rows[led] >= 0).sum(axis=1)
                rows[led, hops] = self._fabric_links(fabric.edges, edge[edge >= 0, None], cable[edge >= 0, None])[:, 0]
            pieces = np.full(len(new), -1, dtype=np.int64)
            pieces[usable] = self._pieces.add(RouteTable.of_padded(rows[usable]))
            for k, piece, node in zip(new.tolist(), pieces.tolist(), number.tolist()):
                found[k] = kept[int(keys[k])] = (piece, node if piece >= 0 else -1)
        return np.array(found, dtype=np.int64).reshape(len(keys), 2)

    def _fabric_links(self, edges: list[tuple[Hashable, Hashable]], hop_edges: np.ndarray,
                      cables: np.ndarray) -> np.ndarray:
        """Link indices of the hops of up/down routes (-1 pads), given by the number in `edges` of each hop's
        edge and its cable (:class:`simnet.topology.updown.FabricRoutes`): the first link of the edge, plus
        its cable where a bundle's cables are separate links (:meth:`_links_of`)."""
        first, count = self._edge_links(edges)
        present = hop_edges >= 0
        edge = np.where(present, hop_edges, 0)
        pins = np.where(present, cables, 0) if self.bundles == "cables" else np.zeros_like(cables)
        missing = present & ((first[edge] < 0) | (pins >= count[edge]))
        if missing.any():
            row, hop = np.argwhere(missing)[0]
            raise KeyError((*edges[edge[row, hop]], int(pins[row, hop])))
        return np.where(present, first[edge] + pins, -1)

    def _edge_links(self, edges: list[tuple[Hashable, Hashable]]) -> tuple[np.ndarray, np.ndarray]:
        """First link and number of links of each directed edge of `edges` (-1 and 0 where the graph has none),
        kept for the last list asked and extended as it grows."""
        if self._edge_table is None or self._edge_table[0] is not edges:
            self._edge_table = (edges, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        _, first, count = self._edge_table
        if len(first) < len(edges):
            more = edges[len(first):]
            first = np.concatenate([first, [self._link_index.get((u, v, 0), -1) for u, v in more]]).astype(np.int64)
            count = np.concatenate([count, [self._cable_count(u, v) for u, v in more]]).astype(np.int64)
            self._edge_table = (edges, first, count)
        return first, count

    def _cable_count(self, u: Hashable, v: Hashable) -> int:
        """How many links the edge ``u -> v`` is (numbered one after the other; 0 where there is no edge)."""
        count = 0
        while (u, v, count) in self._link_index:
            count += 1
        return count

    def _kept_links(self, stretch: tuple[tuple, tuple]) -> tuple[int, ...]:
        """:meth:`_links_of` a stretch that many routes share (kept per stretch)."""
        links = self._stretch_links.get(stretch)
        if links is None:
            links = self._stretch_links[stretch] = self._links_of(stretch)
        return links

    def _links_of(self, stretch: tuple[tuple, tuple]) -> tuple[int, ...]:
        """Link indices of a stretch ``(nodes, cables)`` of a route."""
        nodes, cables = stretch
        if self.bundles == "merged":
            cables = (0,) * len(cables)
        return tuple(map(self._link_index.__getitem__, zip(nodes, nodes[1:], cables)))

    def route_latency_s(self, src: int, dst: int) -> float:
        """Sum of link latencies from rank `src` to rank `dst`, seconds."""
        return float(sum(self.latency_s[i] for i in self.route(src, dst)))

    def route_bandwidth_Bps(self, src: int, dst: int) -> float:
        """Bottleneck bandwidth from rank `src` to rank `dst`, bytes/s (``inf`` for ``src == dst``)."""
        route = self.route(src, dst)
        return float(min(self.bandwidth_Bps[i] for i in route)) if route else math.inf

    def transfer_time_s(self, src: int, dst: int, nbytes: float) -> float:
        """Time of a lone transfer: ``sum(latency) + nbytes / min(bandwidth)``, seconds."""
        return self.route_latency_s(src, dst) + nbytes / self.route_bandwidth_Bps(src, dst)

    def links_frame(self) -> pd.DataFrame:
        """One row per directed link: ``link, src, dst, cable, tier, bandwidth_Bps, latency_s, efficiency``.

        ``cable`` numbers the cables of a bundle of separate cables (0 otherwise);
        ``bandwidth_Bps`` is the effective bandwidth (line rate times ``efficiency``).
        """
        import pandas as pd

        return pd.DataFrame(
            {
                "link": np.arange(len(self.links)),
                "src": [str(u) for u, _, _ in self.links],
                "dst": [str(v) for _, v, _ in self.links],
                "cable": [cable for _, _, cable in self.links],
                "tier": list(self.tiers),
                "bandwidth_Bps": self.bandwidth_Bps,
                "latency_s": self.latency_s,
                "efficiency": self.efficiency,
            }
        )


def _placement(graph: nx.DiGraph, ranks: Sequence[Hashable]) -> tuple:
    placed = tuple(ranks)
    for rank, node in enumerate(placed):
        if node not in graph or graph.nodes[node]["kind"] != "gpu":
            raise SimnetError(f"must be a GPU of the topology, got {node!r}", path=f"ranks[{rank}]")
    if len(set(placed)) != len(placed):
        twice = next(node for node in placed if placed.count(node) > 1)
        raise SimnetError(f"GPU {twice!r} holds two ranks; a placement lists distinct GPUs", path="ranks")
    if not placed:
        raise SimnetError("a placement needs at least one GPU", path="ranks")
    return placed


def _efficiency(tiers: tuple[str, ...], tier_efficiency: Mapping[str, float] | None) -> np.ndarray:
    factors = np.ones(len(tiers))
    if tier_efficiency is None:
        return factors
    if not isinstance(tier_efficiency, Mapping):
        raise SimnetError(
            f"must map tier names to factors in (0, 1], got {tier_efficiency!r}", path="tier_efficiency"
        )
    known = set(tiers)
    for tier, factor in tier_efficiency.items():
        where = f"tier_efficiency.{tier}"
        if tier not in known:
            raise SimnetError(f"the topology has no tier {tier!r}{did_you_mean(str(tier), sorted(known))} (its tiers "
                              f"are {sorted(known)})", path=where)
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not 0 < factor <= 1:
            raise SimnetError(f"must be a factor in (0, 1], got {factor!r}", path=where)
        factors[[i for i, t in enumerate(tiers) if t == tier]] = float(factor)
    return factors


def _pair_arrays(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`src` and `dst` as int64 arrays, checked to be 1-D arrays of integers of one length."""
    src, dst = np.asarray(src), np.asarray(dst)
    if src.shape != dst.shape or src.ndim != 1 or (len(src) and not (
            np.issubdtype(src.dtype, np.integer) and np.issubdtype(dst.dtype, np.integer))):
        raise SimnetError(f"must be 1-D arrays of integers of one length, got {src.dtype} of shape "
                          f"{src.shape} and {dst.dtype} of shape {dst.shape}", path="src, dst")
    return src.astype(np.int64), dst.astype(np.int64)


class _Pieces:
    """Pieces of routes kept as one table of link indices (int32: a network has fewer than 2**31 links), with
    per piece its first position and length in :attr:`links`; each array doubles as it fills."""

    EMPTY = 0
    """The number of the piece of no links."""

    def __init__(self) -> None:
        self._first = np.zeros(1, dtype=np.int64)
        self._hops = np.zeros(1, dtype=np.int64)
        self._links = np.zeros(0, dtype=np.int32)
        self._count = 1
        self._used = 0

    @property
    def links(self) -> np.ndarray:
        """The link indices of the pieces, one piece after the other."""
        return self._links[:self._used]

    @property
    def first(self) -> np.ndarray:
        """Per piece, its first position in :attr:`links`."""
        return self._first[:self._count]

    @property
    def hops(self) -> np.ndarray:
        """Per piece, its number of links."""
        return self._hops[:self._count]

    def add(self, table: RouteTable) -> np.ndarray:
        """Keep the routes of `table` as pieces; their numbers."""
        flat, hops = table.links, table.hops
        count, used = self._count + len(hops), self._used + len(flat)
        self._links = with_room(self._links, self._used, used)
        self._first, self._hops = with_room(self._first, self._count, count), with_room(self._hops, self._count, count)
        self._links[self._used:used] = flat
        self._first[self._count:count] = self._used + np.cumsum(hops) - hops
        self._hops[self._count:count] = hops
        ids = np.arange(self._count, count)
        self._count, self._used = count, used
        return ids


def _place_codes(walk: Sequence[Hashable], nodes: list, width: int) -> list[int]:
    """Each hop of `walk`, a walk over `nodes` (a server's, in graph order), as ``width`` times the place in
    `nodes` it leaves plus the place it reaches."""
    place = {node: k for k, node in enumerate(nodes)}
    return [place[u] * width + place[v] for u, v in zip(walk, walk[1:])]


def _one_of_each(group: np.ndarray, groups: int) -> list[int]:
    """A position of each of `groups` values in `group` (every value present)."""
    chosen = np.empty(groups, dtype=np.int64)
    chosen[group] = np.arange(len(group))
    return chosen.tolist()
