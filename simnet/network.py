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
from itertools import chain, starmap
from typing import TYPE_CHECKING, Any

import networkx as nx
import numpy as np

from simnet.errors import SimnetError, TopologyError
from simnet.links import RouteTable, copy_rows
from simnet.speed import unique_inverse
from simnet.topology import ROUTINGS, Router, gpus, reduce_efficiency, reducing_switches, separate_cables, validate
from simnet.topology.updown import FabricRoutes

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
    bundles : str
        How bundles are modelled.
    """

    def __init__(
        self,
        graph: nx.DiGraph,
        *,
        tier_efficiency: Mapping[str, float] | None = None,
        routing: str | None = None,
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
        self._router = Router(graph, routing=routing)
        self.routing = self._router.routing
        self._routes: dict[tuple[int, int], tuple[int, ...]] = {}
        self._stretch_links: dict[tuple, tuple[int, ...]] = {}
        self._rails: tuple[np.ndarray, np.ndarray] | tuple[()] | None = None
        self._router_nodes: list[Hashable] = []
        self._router_ids: dict[Hashable, int] = {}
        self._edge_table: tuple[list, np.ndarray, np.ndarray] | None = None
        self._heads: dict[int, tuple[tuple[int, ...], int] | tuple[()]] = {}
        self._tails: dict[int, tuple[tuple[int, ...], int] | tuple[()]] = {}
        self._kept_routes = _RouteStore()
        self._endpoints: list[Hashable] = []
        self._endpoint_ids: dict[Hashable, int] = {}
        self._reducers: dict[tuple[int, ...], Hashable] = {}
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
        switch of a fabric otherwise (for the heads of rail ``h``, the leaf of rail ``h``).

        Raises
        ------
        SimnetError
            When no reduce-capable switch serves every GPU of the group (path ``switches``).
        """
        key = tuple(int(r) for r in ranks)
        found = self._reducers.get(key)
        if found is not None:
            return found
        nodes = [self.node(r) for r in key]
        hosts = {self.graph.nodes[n].get("host") for n in nodes}
        candidates = reducing_switches(self.graph)
        local = [n for n in candidates if len(hosts) == 1 and self.graph.nodes[n].get("host") in hosts]
        best = None
        for order, switch in enumerate(local or [n for n in candidates if self.graph.nodes[n].get("host") is None]):
            try:
                routes = [self._router.hops(n, switch) for n in nodes]
            except TopologyError:
                continue
            hops = [len(route) for route in routes]
            score = (max(hops), sum(hops), sum(self._off_rail(n, route) for n, route in zip(nodes, routes)), order)
            if best is None or score < best[0]:
                best = (score, switch)
        if best is None:
            raise SimnetError(
                f"ranks {list(key)} have no reduce-capable switch in common (a switch with reduce: true that "
                "reaches all of them); in-network reductions need one",
                path="switches",
            )
        self._reducers[key] = best[1]
        return best[1]

    def _off_rail(self, gpu: Hashable, route: Sequence[tuple]) -> bool:
        """Whether `route` from `gpu` leaves through a NIC of another rail than the GPU's."""
        nodes = self.graph.nodes
        rail = nodes[gpu].get("rail")
        if rail is None:
            return False
        return any(nodes[hop[1]].get("kind") == "nic" and nodes[hop[1]].get("rail", rail) != rail for hop in route)

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

    def route_table(self, src: np.ndarray, dst: np.ndarray) -> RouteTable:
        """:meth:`route` of every pair ``(src[i], dst[i])`` of endpoints, in order, as one table.

        Routes between the rails of two servers over an up/down fabric are composed from
        their three stretches (:meth:`simnet.topology.Router.stretches`): the first is derived
        once per source (per source and target rail under PXN), the last once per target, and
        the fabric's middles for all pairs at once
        (:meth:`simnet.topology.Router.fabric_routes`), and kept per pair as one table. Every
        other pair, and every pair :meth:`route` was already asked for, is routed (or looked up)
        by :meth:`route`. Each route is the one :meth:`route` gives.

        Raises
        ------
        SimnetError
            If `src` and `dst` are not 1-D arrays of integers of one length; as :meth:`route`, for an
            endpoint that does not exist.
        TopologyError
            As :meth:`route`, for a pair without a route (not necessarily the first such pair in order).
        """
        src, dst = _pair_arrays(src, dst)
        kept = self._kept_routes
        stored = np.full(len(src), -1, dtype=np.int64)
        keep = (len(src) >= _COMPOSED_FROM and self._has_rails()
                and bool(((src >= 0) & (dst >= 0) & (src < 2**31) & (dst < 2**31)).all()))
        if keep:
            keys = (src << 32) | dst
            stored = kept.find(keys)
            missing = np.flatnonzero(stored < 0)
            if self._routes and len(missing):
                cached = self._routes.keys()
                missing = missing[np.array([pair not in cached for pair in zip(src[missing].tolist(),
                                                                                dst[missing].tolist())])]
            if len(missing) >= _COMPOSED_FROM:
                at, tables = self._composed(src[missing], dst[missing])
                if len(at):
                    kept.add(keys[missing[at]], tables)
                    stored[missing] = kept.find(keys[missing])
        routed = np.flatnonzero(stored < 0)
        alone = [self.route(a, b) for a, b in zip(src[routed].tolist(), dst[routed].tolist())]
        found = np.flatnonzero(stored >= 0)
        hops = np.zeros(len(src), dtype=np.int64)
        hops[found] = kept.hops[stored[found]]
        hops[routed] = np.fromiter(map(len, alone), dtype=np.int64, count=len(alone))
        offsets = np.zeros(len(src) + 1, dtype=np.int64)
        np.cumsum(hops, out=offsets[1:])
        links = np.empty(int(offsets[-1]), dtype=np.int64)
        copy_rows(links, offsets[found], kept.links, kept.first[stored[found]], hops[found])
        width = hops[routed]
        copy_rows(links, offsets[routed], np.fromiter(chain.from_iterable(alone), dtype=np.int64,
                                                       count=int(width.sum())), np.cumsum(width) - width, width)
        return RouteTable(offsets, links)

    def _has_rails(self) -> bool:
        """Whether the ranks sit on the rails of servers (see :meth:`simnet.topology.Router.rails`)."""
        if self._rails is None:
            self._rails = self._router.rails(self.ranks) or ()
        return bool(self._rails)

    def _composed(self, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """The routes of the pairs among `src`, `dst` that run between the rails of two servers over an up/down
        fabric (see :meth:`route_table`): their positions in the arguments, and their link indices as tables of
        routes of one length each, in the order of the positions."""
        none = np.zeros(0, dtype=np.int64), []
        ranks = len(self.ranks)
        server, rail = self._rails
        chosen = np.flatnonzero((src >= 0) & (src < ranks) & (dst >= 0) & (dst < ranks))
        a, b = src[chosen], dst[chosen]
        railed = (server[a] >= 0) & (server[b] >= 0) & (server[a] != server[b]) & (rail[a] >= 0) & (rail[b] >= 0)
        chosen, a, b = chosen[railed], a[railed], b[railed]
        if len(chosen) == 0:
            return none
        rails = int(rail.max()) + 1
        firsts, first_at = unique_inverse(a * rails + rail[b] if self._router.pxn else a * rails)
        lasts, last_at = unique_inverse(b)
        heads = self._ends(self._heads, firsts, a, b, first_at, 0)
        tails = self._ends(self._tails, lasts, a, b, last_at, 1)
        usable = np.array([bool(head) for head in heads])[first_at] & np.array([bool(tail) for tail in tails])[last_at]
        if not usable.all():
            chosen, first_at, last_at = chosen[usable], first_at[usable], last_at[usable]
            if len(chosen) == 0:
                return none
        exits = np.array([head[1] if head else -1 for head in heads], dtype=np.int64)[first_at]
        entries = np.array([tail[1] if tail else -1 for tail in tails], dtype=np.int64)[last_at]
        nodes = self._router_nodes
        middles, middle_at = unique_inverse(exits * len(nodes) + entries)
        routed = self._router.fabric_routes([nodes[n] for n in (middles // len(nodes)).tolist()],
                                           [nodes[n] for n in (middles % len(nodes)).tolist()])
        if routed is None:
            return none
        middle = self._fabric_links(routed)
        pieces = (_table([head[0] if head else () for head in heads]), middle, _table([tail[0] if tail else ()
                                                                                       for tail in tails]))
        rows = (first_at, middle_at, last_at)
        lengths = [(piece >= 0).sum(axis=1) for piece in pieces]
        span = max(piece.shape[1] for piece in pieces) + 1
        shapes, shape_of = unique_inverse((lengths[0][first_at] * span + lengths[1][middle_at]) * span
                                          + lengths[2][last_at])
        positions, tables = [], []
        for shape, code in enumerate(shapes.tolist()):
            widths = (code // span // span, code // span % span, code % span)
            members = np.flatnonzero(shape_of == shape)
            tables.append(np.concatenate([piece[row[members], :width] for piece, row, width in zip(pieces, rows,
                                                                                                    widths)], axis=1))
            positions.append(chosen[members])
        return np.concatenate(positions), tables

    def _ends(self, kept: dict, keys: np.ndarray, a: np.ndarray, b: np.ndarray, at: np.ndarray, which: int) -> list:
        """:meth:`_end_stretch` of each of `keys` (kept per key), from a route ``a[k] -> b[k]`` with that key."""
        found = list(map(kept.get, keys.tolist()))
        if None in found:
            pick = _one_of_each(at, len(keys))
            for k, end in enumerate(found):
                if end is None:
                    found[k] = kept[int(keys[k])] = self._end_stretch(int(a[pick[k]]), int(b[pick[k]]), which)
        return found

    def _end_stretch(self, a: int, b: int, which: int) -> tuple[tuple[int, ...], int] | tuple[()]:
        """Links of the first (`which` 0) or last (1) stretch of the route from rank `a` to rank `b`, and the
        number of the NIC where it meets the fabric (see :meth:`routes`); empty for a first stretch over a
        bundle of separate cables, one per link, whose cable each target picks (a last stretch's cables are
        its target's)."""
        stretch = self._router.rail_ends(self.ranks[a], self.ranks[b])[which]
        if which == 0 and self.bundles == "cables" and self._router.crosses_bundle(stretch[0]):
            return ()
        nic = stretch[0][-1 if which == 0 else 0]
        number = self._router_ids.setdefault(nic, len(self._router_nodes))
        if number == len(self._router_nodes):
            self._router_nodes.append(nic)
        return self._kept_links(stretch), number

    def _fabric_links(self, routed: FabricRoutes) -> np.ndarray:
        """Link indices of the hops of up/down routes (-1 pads): the first link of each hop's edge, plus its
        cable where a bundle's cables are separate links (:meth:`_links_of`)."""
        first, count = self._edge_links(routed.edges)
        present = routed.hop_edges >= 0
        edge = np.where(present, routed.hop_edges, 0)
        pins = np.where(present, routed.cables, 0) if self.bundles == "cables" else np.zeros_like(routed.cables)
        missing = present & ((first[edge] < 0) | (pins >= count[edge]))
        if missing.any():
            row, hop = np.argwhere(missing)[0]
            raise KeyError((*routed.edges[edge[row, hop]], int(pins[row, hop])))
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
            raise SimnetError(f"the topology has no tier {tier!r}; its tiers are {sorted(known)}", path=where)
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


class _RouteStore:
    """Routes kept per pair of endpoints as one growing table: the pairs' keys sorted for lookup, and per
    route its first position and length in :attr:`links` (int32: a network has fewer than 2**31 links)."""

    def __init__(self) -> None:
        self._keys = np.zeros(0, dtype=np.int64)
        self._rows = np.zeros(0, dtype=np.int64)
        self.first = np.zeros(0, dtype=np.int64)
        self.hops = np.zeros(0, dtype=np.int32)
        self._links = np.zeros(0, dtype=np.int32)
        self._used = 0

    @property
    def links(self) -> np.ndarray:
        """The link indices of the kept routes, one route after the other."""
        return self._links[:self._used]

    def find(self, keys: np.ndarray) -> np.ndarray:
        """The row of each of `keys`, -1 where none is kept."""
        if not len(self._keys):
            return np.full(len(keys), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self._keys, keys), len(self._keys) - 1)
        return np.where(self._keys[at] == keys, self._rows[at], -1)

    def add(self, keys: np.ndarray, tables: list[np.ndarray]) -> None:
        """Keep the routes of `keys`, none kept yet, given in order as the rows of `tables` (a table per
        length); of a key given twice, the first route."""
        keys, once = np.unique(keys, return_index=True)
        ends = np.cumsum([len(table) for table in tables])
        kept = np.zeros(int(ends[-1]) if len(ends) else 0, dtype=bool)
        kept[once] = True
        tables = [table[kept[end - len(table):end]] for table, end in zip(tables, ends.tolist())]
        needed = self._used + sum(table.size for table in tables)
        if needed > len(self._links):
            grown = np.empty(max(needed, 2 * len(self._links)), dtype=np.int32)
            grown[:self._used] = self._links[:self._used]
            self._links = grown
        first, hops = [], []
        for table in tables:
            self._links[self._used:self._used + table.size] = table.ravel()
            first.append(self._used + table.shape[1] * np.arange(len(table)))
            hops.append(np.full(len(table), table.shape[1]))
            self._used += table.size
        by_key = np.argsort(once)
        rows = np.empty_like(by_key)
        rows[by_key] = len(self.first) + np.arange(len(keys))
        self.first = np.concatenate([self.first, *first])
        self.hops = np.concatenate([self.hops, *hops]).astype(np.int32)
        at = np.searchsorted(self._keys, keys)
        self._keys, self._rows = np.insert(self._keys, at, keys), np.insert(self._rows, at, rows)


def _one_of_each(group: np.ndarray, groups: int) -> list[int]:
    """A position of each of `groups` values in `group` (every value present)."""
    chosen = np.empty(groups, dtype=np.int64)
    chosen[group] = np.arange(len(group))
    return chosen.tolist()


def _table(rows: list[tuple[int, ...]]) -> np.ndarray:
    """Tuples of link indices as one array, padded with -1."""
    width = max(map(len, rows), default=0)
    table = np.full((len(rows), width), -1, dtype=np.int64)
    for k, row in enumerate(rows):
        table[k, :len(row)] = row
    return table
