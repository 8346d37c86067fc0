"""Network: ranks, routes and directed links of a topology, and link-sharing models.

A :class:`Network` numbers the GPUs of a topology graph as ranks (in the order the
graph lists them; builders add GPUs hierarchy-major, node by node and GPU by GPU),
numbers its directed edges as links, and maps every ordered rank pair to a route:
a tuple of link indices (see :class:`simnet.topology.Router` for the rule).

A link-sharing model decides when transfers that share links finish. Models are
plain objects with no notion of time passing; the engine drives them:

``submit(now_s, transfer, route, nbytes)``
    a transfer is ready to send at ``now_s`` (always the engine's current instant);
``submit_many(now_s, transfers, routes, nbytes)``
    the same for several transfers at once, in the given order (``routes[i]`` and
    ``nbytes[i]`` describe transfer ``i``): what the engine calls, once per instant;
``next_time_s()``
    the earliest instant at which the model's state changes: a transfer finishes or,
    for :class:`MaxMinLinks`, starts draining bytes (``inf`` if nothing is pending);
``pop_finished(now_s)``
    advance to ``now_s`` (a value ``next_time_s()`` returned) and return the transfers
    whose last byte arrives at ``now_s``, in transfer order (possibly none).

and, for the trace, every model exposes

``started_s``
    transfer -> instant its first byte entered the network;
``bottlenecks()``
    transfer -> ``{link: seconds}``: how long each link limited the transfer's rate
    while it drained its bytes (its values sum to the drain time);
``blocked_by``
    transfer -> the link it queued for before it could start (FIFO only);
``usage()``
    per-link drain segments ``(link, transfer, start_s, end_s, rate_Bps)``.

Every model gives a lone transfer of ``n`` bytes over route ``r`` exactly
``sum(latency_s[r]) + n / min(bandwidth_Bps[r])``, bit for bit the same float.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Hashable, Iterable, Mapping, Sequence
from itertools import chain
from types import MappingProxyType

import networkx as nx
import numpy as np
import pandas as pd

from simnet.errors import SimnetError
from simnet.topology import Router, gpus, validate

__all__ = ["Network", "FifoLinks", "MaxMinLinks", "LINK_MODELS"]


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

    Attributes
    ----------
    graph : networkx.DiGraph
        The topology.
    ranks : tuple
        GPU node of each rank.
    links : tuple of (node, node)
        Directed edge of each link index.
    bandwidth_Bps, latency_s : numpy.ndarray
        Per-link effective bandwidth (bytes/s) and latency (s).
    efficiency : numpy.ndarray
        Per-link factor applied to the graph's line rate.
    tiers : tuple of str
        Per-link tier.
    """

    def __init__(self, graph: nx.DiGraph, *, tier_efficiency: Mapping[str, float] | None = None) -> None:
        self.graph = validate(graph)
        self.ranks = tuple(gpus(graph))
        self.links = tuple(graph.edges)
        self._link_index = {edge: i for i, edge in enumerate(self.links)}
        self.tiers = tuple(graph.edges[e]["tier"] for e in self.links)
        self.efficiency = _efficiency(self.tiers, tier_efficiency)
        line_rate = np.array([graph.edges[e]["bandwidth_Bps"] for e in self.links], dtype=float)
        self.bandwidth_Bps = line_rate * self.efficiency
        self.latency_s = np.array([graph.edges[e]["latency_s"] for e in self.links], dtype=float)
        self._router = Router(graph)
        self._routes: dict[tuple[int, int], tuple[int, ...]] = {}

    @property
    def name(self) -> str:
        """Name of the topology (``graph.graph["name"]``)."""
        return str(self.graph.graph.get("name", "topology"))

    @property
    def size(self) -> int:
        """Number of ranks."""
        return len(self.ranks)

    def link(self, u: Hashable, v: Hashable) -> int:
        """Index of the directed link ``u -> v``."""
        return self._link_index[(u, v)]

    def route(self, src: int, dst: int) -> tuple[int, ...]:
        """Links from rank `src` to rank `dst`, in order (empty when ``src == dst``)."""
        key = (src, dst)
        route = self._routes.get(key)
        if route is None:
            for rank in key:
                if not 0 <= rank < len(self.ranks):
                    raise SimnetError(f"rank {rank} does not exist; the network has {len(self.ranks)} ranks")
            nodes = self._router.path(self.ranks[src], self.ranks[dst])
            route = tuple(self._link_index[edge] for edge in zip(nodes, nodes[1:]))
            self._routes[key] = route
        return route

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
        """One row per directed link: ``link, src, dst, tier, bandwidth_Bps, latency_s, efficiency``.

        ``bandwidth_Bps`` is the effective bandwidth (line rate times ``efficiency``).
        """
        return pd.DataFrame(
            {
                "link": np.arange(len(self.links)),
                "src": [str(u) for u, _ in self.links],
                "dst": [str(v) for _, v in self.links],
                "tier": list(self.tiers),
                "bandwidth_Bps": self.bandwidth_Bps,
                "latency_s": self.latency_s,
                "efficiency": self.efficiency,
            }
        )


def _efficiency(tiers: tuple[str, ...], tier_efficiency: Mapping[str, float] | None) -> np.ndarray:
    factors = np.ones(len(tiers))
    if tier_efficiency is None:
        return factors
    if not isinstance(tier_efficiency, Mapping):
        raise SimnetError(
            f"must map tier names to factors in (0, 1], got {tier_efficiency!r}", path="network.tier_efficiency"
        )
    known = set(tiers)
    for tier, factor in tier_efficiency.items():
        where = f"network.tier_efficiency.{tier}"
        if tier not in known:
            raise SimnetError(f"the topology has no tier {tier!r}; its tiers are {sorted(known)}", path=where)
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not 0 < factor <= 1:
            raise SimnetError(f"must be a factor in (0, 1], got {factor!r}", path=where)
        factors[[i for i, t in enumerate(tiers) if t == tier]] = float(factor)
    return factors


def _segments(rows: list[tuple[int, int, float, float, float]]) -> tuple[np.ndarray, ...]:
    if not rows:
        return (np.zeros(0, dtype=int), np.zeros(0, dtype=int), np.zeros(0), np.zeros(0), np.zeros(0))
    link, transfer, start, end, rate = zip(*rows)
    return (
        np.array(link, dtype=int),
        np.array(transfer, dtype=int),
        np.array(start, dtype=float),
        np.array(end, dtype=float),
        np.array(rate, dtype=float),
    )


class _Batched:
    """What both link models share: :meth:`submit` is :meth:`submit_many` of one transfer.

    ``submit_many(now_s, transfers, routes, nbytes)`` handles `transfers` in the given
    order, exactly as that many calls of :meth:`submit` would; ``routes[i]`` and
    ``nbytes[i]`` describe transfer ``i`` (sequences or mappings indexed by transfer).
    """

    def submit(self, now_s: float, transfer: int, route: tuple[int, ...], nbytes: float) -> None:
        """Hand `transfer`, ready at `now_s`, to the model."""
        self.submit_many(now_s, (transfer,), {transfer: route}, {transfer: nbytes})


class FifoLinks(_Batched):
    """Each directed link carries one transfer at a time, in arrival order.

    A transfer reserves its whole route cut-through: link ``i`` of the route is busy
    for ``nbytes / min(bandwidth)`` starting ``sum(latency of links before i)`` after
    the transfer's start, and the transfer starts at the first instant at which that
    reservation collides with no earlier one. It finishes
    ``sum(latency) + nbytes / min(bandwidth)`` after its start. Transfers that are
    submitted at the same instant are served in the order they are submitted.

    Parameters
    ----------
    network : Network
        Links to serve.
    """

    def __init__(self, network: Network) -> None:
        self._bandwidth_Bps = network.bandwidth_Bps
        self._latency_s = network.latency_s
        self._free_s = [0.0] * len(network.links)
        self._instants: list[float] = []
        self._finishing: dict[float, list[int]] = {}
        self._routes: dict[tuple[int, ...], tuple[tuple[float, ...], float, int, float]] = {}
        self._reservations: list[tuple[int, tuple[int, ...], float, float]] = []
        self.started_s: dict[int, float] = {}
        self.blocked_by: dict[int, int] = {}

    def _route(self, route: tuple[int, ...]) -> tuple[tuple[float, ...], float, int, float]:
        """Per route (once): link offsets, total latency, bottleneck link and its bandwidth."""
        offset = 0.0
        offsets = []
        for link in route:
            offsets.append(offset)
            offset += float(self._latency_s[link])
        bottleneck = min(route, key=lambda link: self._bandwidth_Bps[link]) if route else -1
        rate = float(self._bandwidth_Bps[bottleneck]) if route else math.inf
        info = self._routes[route] = (tuple(offsets), offset, bottleneck, rate)
        return info

    def submit_many(
        self,
        now_s: float,
        transfers: Iterable[int],
        routes: Sequence[tuple[int, ...]] | Mapping[int, tuple[int, ...]],
        nbytes: Sequence[float] | Mapping[int, float],
    ) -> None:
        """Reserve the routes of `transfers`, ready at `now_s`, in order (see :class:`_Batched`)."""
        cache = self._routes
        free = self._free_s
        blocked_by = self.blocked_by
        started = self.started_s
        reservations = self._reservations
        finishing = self._finishing
        for transfer in transfers:
            route = routes[transfer]
            info = cache.get(route)
            if info is None:
                info = self._route(route)
            offsets, latency, _, rate = info
            start = now_s
            for link, offset in zip(route, offsets):
                if free[link] - offset > start:
                    start = free[link] - offset
                    blocked_by[transfer] = link
            occupancy = 0.0
            if route:
                occupancy = nbytes[transfer] / rate
                reservations.append((transfer, route, start, occupancy))
                for link, offset in zip(route, offsets):
                    free[link] = start + offset + occupancy
            started[transfer] = start
            end = start + latency + occupancy
            bucket = finishing.get(end)
            if bucket is None:
                bucket = finishing[end] = []
                heapq.heappush(self._instants, end)
            bucket.append(transfer)

    def next_time_s(self) -> float:
        """Earliest finishing time of a submitted transfer, ``inf`` if none."""
        return self._instants[0] if self._instants else math.inf

    def pop_finished(self, now_s: float) -> list[int]:
        """Transfers finishing at or before `now_s`, in (time, transfer) order."""
        done = []
        instants = self._instants
        while instants and instants[0] <= now_s:
            done.extend(sorted(self._finishing.pop(heapq.heappop(instants))))
        return done

    def usage(self) -> tuple[np.ndarray, ...]:
        """Per-link drain segments: arrays ``(link, transfer, start_s, end_s, rate_Bps)``.

        Link ``i`` of a route carries the transfer at its bottleneck rate from
        ``start + sum(latency of links before i)`` for ``nbytes / rate`` seconds.
        """
        if not self._reservations:
            return _segments([])
        transfer, routes, start, occupancy = zip(*self._reservations)
        lengths = np.fromiter(map(len, routes), dtype=np.int64, count=len(routes))
        link = np.fromiter(chain.from_iterable(routes), dtype=np.int64, count=int(lengths.sum()))
        offset = np.fromiter(
            chain.from_iterable(self._routes[route][0] for route in routes), dtype=float, count=len(link)
        )
        begin = np.repeat(np.array(start, dtype=float), lengths) + offset
        occupied = np.repeat(np.array(occupancy, dtype=float), lengths)
        rate = np.repeat(np.array([self._routes[route][3] for route in routes], dtype=float), lengths)
        return (link.astype(int), np.repeat(np.array(transfer, dtype=int), lengths), begin, begin + occupied, rate)

    def bottlenecks(self) -> dict[int, dict[int, float]]:
        """Transfer -> ``{bottleneck link: nbytes / rate}`` (the slowest link, first on ties)."""
        return {
            transfer: {self._routes[route][2]: occupancy} for transfer, route, _, occupancy in self._reservations
        }


class _Flow:
    __slots__ = ("route", "latency_s", "remaining", "rate", "limit", "since_s", "version", "draining", "history")

    def __init__(self, route: tuple[int, ...], latency_s: float, nbytes: float) -> None:
        self.route = route
        self.latency_s = latency_s
        self.remaining = float(nbytes)
        self.rate = 0.0
        self.limit = -1
        self.since_s = 0.0
        self.version = 0
        self.draining = False
        self.history: list[tuple[float, float, int]] = []


_ACTIVATE, _FINISH = 0, 1


class MaxMinLinks(_Batched):
    """Flow-level max-min fair sharing of links (progressive filling), SimGrid CM02 style.

    A transfer submitted at ``t`` first spends its route latency ``L = sum(latency)``
    without using bandwidth, then drains its bytes through every link of its route
    at once at its max-min fair rate; it finishes when its last byte has drained.
    A lone transfer therefore takes exactly ``L + nbytes / min(bandwidth)``.

    Transfers between the same two end points (the same route) form one connection
    and drain in order, one at a time, as on one NCCL channel or one MPI queue pair:
    a transfer whose latency has elapsed while an earlier one of its connection is
    still draining waits, and starts draining the instant that one finishes (its
    latency overlapped the wait, as in a pipeline). Its ``started_s`` is then
    ``L`` before it starts draining, and it is ``blocked_by`` the route's slowest
    link. Transfers of different connections share links max-min fairly. Hence a
    pipelined ring, whose sub-chunks follow each other over the same connection,
    takes the same time as under :class:`FifoLinks`. (SimGrid lets two concurrent
    messages of one pair share bandwidth instead; MPI collectives built from
    blocking ``MPI_Sendrecv`` never have two.)

    Rates are the max-min fair allocation of the links' bandwidths among the
    draining flows, computed by progressive filling: all unfixed flows grow at the
    same pace; when a link saturates, the flows crossing it are fixed at its fair
    share ``remaining capacity / unfixed flows``, and that link is their bottleneck
    (see :meth:`bottlenecks`). A flow bottlenecked elsewhere thus leaves its unused
    share to the others.

    Rates are recomputed whenever a flow starts or stops draining, and only for the
    *connected component* of the changed flows' links in the bipartite graph of
    draining flows and the links they cross. This is exact: the max-min allocation
    is the solution of independent problems, one per connected component (no
    constraint of one component mentions a flow of another), so a change leaves the
    rates of every other component untouched. Components are found by a breadth-
    first walk from the links of the flows that changed, after removing finished and
    adding newly draining flows, so a component split by a departure is covered too.

    Floating point: a flow whose recomputed rate is bit-identical keeps its pending
    finish instant, so transfers that never share a link get exactly the lone-
    transfer time. Otherwise its remaining bytes are brought up to date
    (``remaining -= rate * elapsed``, clamped at 0) and its finish is rescheduled at
    ``now + remaining / rate``. Completion is an event, never a test of
    ``remaining == 0``: each flow has one valid finish event (older ones carry a
    stale version and are skipped), so no completion is lost and the event loop
    advances by at least one event per step. Ties are broken by link and transfer
    index, so results are deterministic bit for bit.

    Parameters
    ----------
    network : Network
        Links to share.

    Notes
    -----
    SimGrid's CM02 model shares links max-min weighted by route latency (RTT-fair);
    this model is unweighted, and the two agree when competing flows have equal route
    latency. References: Casanova, H. et al. (2014). Versatile, scalable, and accurate
    simulation of distributed applications and platforms. J. Parallel Distrib. Comput.
    74(10), 2899-2917; Bertsekas, D. and Gallager, R. (1992). Data Networks, §6.5.2
    (max-min fairness by progressive filling).
    """

    def __init__(self, network: Network) -> None:
        self._bandwidth_Bps = network.bandwidth_Bps
        self._latency_s = network.latency_s
        self._flows: dict[int, _Flow] = {}
        self._on_link: list[dict[int, None]] = [{} for _ in network.links]
        self._routes: dict[tuple[int, ...], tuple[float, float, int]] = {}
        self._instants: list[float] = []
        self._events: dict[float, tuple[list[int], list[tuple[int, int]]]] = {}
        self._finished_s: dict[int, float] = {}
        self._connections: dict[tuple[int, ...], deque[int]] = {}
        self.started_s: dict[int, float] = {}
        self.blocked_by: dict[int, int] = {}

    def _route(self, route: tuple[int, ...]) -> tuple[float, float, int]:
        """Per route (once): latency, and the rate and bottleneck of a flow alone on its links.

        Alone, progressive filling fixes the flow at the smallest ``bandwidth / 1`` of
        its route, on the link of lowest index among the slowest (the heap order of
        :meth:`_fill`), so this is exactly what :meth:`_fill` would compute.
        """
        latency = 0.0
        for link in route:
            latency += self._latency_s[link]
        limit = min(route, key=lambda link: (self._bandwidth_Bps[link], link)) if route else -1
        rate = float(self._bandwidth_Bps[limit]) / 1 if route else math.inf
        info = self._routes[route] = (latency, rate, limit)
        return info

    def _at(self, instant: float) -> tuple[list[int], list[tuple[int, int]]]:
        """The events at `instant`: transfers starting to drain, ``(transfer, version)`` finishing."""
        bucket = self._events.get(instant)
        if bucket is None:
            bucket = self._events[instant] = ([], [])
            heapq.heappush(self._instants, instant)
        return bucket

    def submit_many(self, now_s: float, transfers: Iterable[int], routes, nbytes) -> None:
        """Start `transfers` at `now_s`, in order; each drains once its route latency has passed."""
        cache = self._routes
        flows = self._flows
        started = self.started_s
        at = self._at
        instant, bucket = math.nan, ([], [])
        for transfer in transfers:
            route = routes[transfer]
            info = cache.get(route)
            if info is None:
                info = self._route(route)
            size = nbytes[transfer]
            flows[transfer] = _Flow(route, info[0], size)
            started[transfer] = now_s
            if now_s + info[0] != instant:
                instant = now_s + info[0]
                bucket = at(instant)
            if route and size > 0:
                bucket[0].append(transfer)
            else:
                bucket[1].append((transfer, 0))

    def next_time_s(self) -> float:
        """Earliest instant a flow starts draining or finishes, ``inf`` if none."""
        instants = self._instants
        flows = self._flows
        while instants:
            starting, finishing = self._events[instants[0]]
            if starting or any(flows[transfer].version == version for transfer, version in finishing):
                return instants[0]
            del self._events[heapq.heappop(instants)]
        return math.inf

    def pop_finished(self, now_s: float) -> list[int]:
        """Advance to `now_s` and return the transfers finishing then, in transfer order.

        While it updates the links it notes whether the instant is *simple*: every
        link a finished flow leaves ends up empty and every flow that starts draining
        finds all the links of its route empty. Then the flows starting to drain are
        exactly what :meth:`_alone` would return for the touched links, each alone on
        its route, and they get their lone rate directly; otherwise :meth:`_reshare`
        decides.
        """
        finished = []
        instants = self._instants
        events = self._events
        flows = self._flows
        on_link = self._on_link
        connections = self._connections
        finished_s = self._finished_s
        while instants and instants[0] <= now_s:
            ended, started = [], []
            while instants and instants[0] <= now_s:
                starting, finishing = events.pop(heapq.heappop(instants))
                started.extend(sorted(starting))
                ended.extend(sorted(transfer for transfer, version in finishing if flows[transfer].version == version))
            simple = True
            draining: list[int] = []
            touched: list[int] = []
            for transfer in ended:
                flow = flows[transfer]
                flow.version = -1
                finished.append(transfer)
                finished_s[transfer] = now_s
                if flow.draining:
                    flow.draining = False
                    flow.remaining = 0.0
                    route = flow.route
                    for link in route:
                        holders = on_link[link]
                        del holders[transfer]
                        if holders:
                            simple = False
                    touched.extend(route)
                    line = connections[route]
                    line.popleft()
                    if line:
                        if not self._drain(line[0], now_s, queued=True):
                            simple = False
                        draining.append(line[0])
            for transfer in started:
                flow = flows[transfer]
                route = flow.route
                line = connections.get(route)
                if line is None:
                    line = connections[route] = deque()
                line.append(transfer)
                if len(line) == 1:
                    flow.draining = True
                    flow.since_s = now_s
                    for link in route:
                        holders = on_link[link]
                        if holders:
                            simple = False
                        holders[transfer] = None
                    touched.extend(route)
                    draining.append(transfer)
            if simple:
                routes = self._routes
                self._assign(now_s, [(transfer, *routes[flows[transfer].route][1:]) for transfer in draining])
            elif touched:
                self._reshare(now_s, touched)
        finished.sort()
        return finished

    def _drain(self, transfer: int, now_s: float, *, queued: bool) -> bool:
        """Start draining `transfer`; whether every link of its route was free of flows."""
        flow = self._flows[transfer]
        flow.draining = True
        flow.since_s = now_s
        on_link = self._on_link
        free = True
        for link in flow.route:
            holders = on_link[link]
            if holders:
                free = False
            holders[transfer] = None
        if queued:
            self.started_s[transfer] = now_s - flow.latency_s
            self.blocked_by[transfer] = min(flow.route, key=lambda link: self._bandwidth_Bps[link])
        return free

    def _alone(self, touched: list[int]) -> list[int] | None:
        """The flows on the `touched` links if each is alone on every link of its route, else ``None``.

        Then each is a component of its own (a single flow on links no other flow
        crosses), and these flows are the whole of what :meth:`_component` finds.
        """
        on_link = self._on_link
        flows = self._flows
        alone: dict[int, None] = {}
        for link in touched:
            holders = on_link[link]
            if not holders:
                continue
            if len(holders) > 1:
                return None
            for transfer in holders:
                if transfer in alone:
                    continue
                for other in flows[transfer].route:
                    if len(on_link[other]) != 1:
                        return None
                alone[transfer] = None
        return list(alone)

    def _component(self, links: list[int]) -> tuple[list[int], list[int]]:
        on_link = self._on_link
        flows = self._flows
        seen_links: set[int] = set()
        seen_flows: set[int] = set()
        stack = [link for link in links if on_link[link]]
        while stack:
            link = stack.pop()
            if link in seen_links:
                continue
            seen_links.add(link)
            for transfer in on_link[link]:
                if transfer not in seen_flows:
                    seen_flows.add(transfer)
                    stack.extend(other for other in flows[transfer].route if other not in seen_links)
        return sorted(seen_flows), sorted(seen_links)

    def _fill(self, links: list[int]) -> dict[int, tuple[float, int]]:
        on_link = self._on_link
        flows = self._flows
        capacity = {link: float(self._bandwidth_Bps[link]) for link in links}
        unfixed = {link: len(on_link[link]) for link in links}
        heap = [(capacity[link] / unfixed[link], link) for link in links]
        heapq.heapify(heap)
        fixed: dict[int, tuple[float, int]] = {}
        floor = 0.0
        while heap:
            share, link = heapq.heappop(heap)
            if unfixed[link] == 0:
                continue
            current = capacity[link] / unfixed[link]
            if current != share:
                heapq.heappush(heap, (current, link))
                continue
            share = max(share, floor)
            floor = share
            for transfer in sorted(on_link[link]):
                if transfer in fixed:
                    continue
                fixed[transfer] = (share, link)
                for other in flows[transfer].route:
                    capacity[other] -= share
                    unfixed[other] -= 1
        return fixed

    def _reshare(self, now_s: float, touched: list[int]) -> None:
        flows = self._flows
        alone = self._alone(touched)
        if alone is None:
            component, links = self._component(touched)
            allocation = self._fill(links)
            self._assign(now_s, [(transfer, *allocation[transfer]) for transfer in component])
        else:
            routes = self._routes
            self._assign(now_s, [(transfer, *routes[flows[transfer].route][1:]) for transfer in alone])

    def _assign(self, now_s: float, allocation: list[tuple[int, float, int]]) -> None:
        """Give each ``(transfer, rate, bottleneck link)`` its rate from `now_s` on; reschedule its finish."""
        flows = self._flows
        at = self._at
        instant, bucket = math.nan, ([], [])
        for transfer, rate, limit in allocation:
            flow = flows[transfer]
            if rate == flow.rate:
                if limit != flow.limit:
                    flow.limit = limit
                    flow.history.append((now_s, rate, limit))
                continue
            if flow.rate > 0:
                flow.remaining = max(0.0, flow.remaining - flow.rate * (now_s - flow.since_s))
            flow.since_s = now_s
            flow.rate = rate
            flow.limit = limit
            flow.version += 1
            flow.history.append((now_s, rate, limit))
            end = now_s + flow.remaining / rate
            if end != instant:
                instant = end
                bucket = at(end)
            bucket[1].append((transfer, flow.version))

    def _drains(self):
        for transfer, flow in self._flows.items():
            history = flow.history
            for k, (begin, rate, limit) in enumerate(history):
                end = history[k + 1][0] if k + 1 < len(history) else self._finished_s.get(transfer, begin)
                yield transfer, flow.route, begin, end, rate, limit

    def usage(self) -> tuple[np.ndarray, ...]:
        """Per-link drain segments: arrays ``(link, transfer, start_s, end_s, rate_Bps)``.

        One segment per link of the route and per interval of constant rate.
        """
        rows = []
        for transfer, route, begin, end, rate, _ in self._drains():
            if end > begin:
                rows.extend((link, transfer, begin, end, rate) for link in route)
        return _segments(rows)

    def bottlenecks(self) -> dict[int, dict[int, float]]:
        """Transfer -> ``{link: seconds}`` during which that link limited its rate."""
        limits: dict[int, dict[int, float]] = {}
        for transfer, _, begin, end, _, limit in self._drains():
            per_link = limits.setdefault(transfer, {})
            per_link[limit] = per_link.get(limit, 0.0) + (end - begin)
        return limits


LINK_MODELS = MappingProxyType({"maxmin": MaxMinLinks, "fifo": FifoLinks})
