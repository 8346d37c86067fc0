"""Link-sharing models: when do transfers that share links finish?

A model is driven by :class:`simnet.engine.Simulation` and knows nothing of
schedules. Transfers enter it as *flows* (an integer id and a route, a tuple of
link indices); the model asks the simulation's clock for the :class:`Instant` of
every moment at which something happens to a flow (its latency has elapsed and it
starts draining bytes, or its last byte arrives), and the simulation hands that
instant back to :meth:`LinkModel.advance` when the SimPy environment reaches it.

Every model gives a lone transfer of ``n`` bytes over route ``r`` exactly
``sum(latency_s[r]) + n / min(bandwidth_Bps[r])``, bit for bit the same float; a
flow with an empty route (a copy between two buffers of one rank) finishes at once.

``maxmin``
    flow-level max-min fair sharing (progressive filling), the default; with
    ``sharing="rtt_weighted"`` each flow's share is weighted by the inverse of its
    route latency, as SimGrid's CM02 model does.
``fifo``
    each link carries one transfer at a time, cut-through, in arrival order.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from types import MappingProxyType
from typing import Protocol

import numpy as np

from simnet.perflow import Constant, by_time, grown, take, view
from simnet.speed import KeyedRows, unique_first

__all__ = ["Instant", "LinkModel", "FifoLinks", "MaxMinLinks", "RouteTable", "LINK_MODELS", "SHARING"]

SHARING = ("equal", "rtt_weighted")
"""How :class:`MaxMinLinks` shares a saturated link: equally, or in inverse proportion to route latency."""


BATCH = 32
"""Instants with at least this many flows starting, finishing, released or submitted take the array
path (of :class:`MaxMinLinks` and of :class:`simnet.engine.Simulation`, which reads it here): the same
floats, events and state as the loop, for many flows at once. The tests set it to 1, to 3 and to
infinity and compare whole traces."""

_INTERNED_AT_ONCE = 4096
"""Routes :func:`route_figures` reads in one padded matrix (bounds its scratch memory)."""

FLOWS_REMEMBERED = 2**17
"""A bound on the memory of a :class:`MaxMinLinks` of equal sharing for component allocations (see
:meth:`MaxMinLinks._reshare`): the flows of all remembered components together, each remembered as its
route number and its share. A component larger than the bound is never remembered; one that would
exceed it makes the memory forget everything first. 0 turns the memory off. The tests set it to 0, 2 and
the default and compare whole traces."""


@dataclass(frozen=True, eq=False)
class RouteTable:
    """Routes as one table of link indices: route ``i`` is ``links[offsets[i]:offsets[i + 1]]``, in order.

    Many routes kept this way cost two integers per hop and nothing per route, where a tuple per route
    costs a Python object each (:meth:`simnet.network.Network.route_table` gives them, :meth:`LinkModel.intern`
    takes them).

    Attributes
    ----------
    offsets : numpy.ndarray of int64
        ``len(self) + 1`` non-decreasing positions in `links`, from 0 to ``len(links)``.
    links : numpy.ndarray of int32 or int64
        The link indices of all routes, one route after the other (:meth:`simnet.network.Network.route_table`
        gives int32, which holds the index of every link of a network and takes half the memory).
    """

    offsets: np.ndarray
    links: np.ndarray

    @classmethod
    def of(cls, routes: Sequence[tuple[int, ...]]) -> RouteTable:
        """The table of `routes`, tuples of link indices."""
        hops = np.fromiter(map(len, routes), dtype=np.int64, count=len(routes))
        offsets = np.zeros(len(routes) + 1, dtype=np.int64)
        np.cumsum(hops, out=offsets[1:])
        return cls(offsets, np.fromiter(chain.from_iterable(routes), dtype=np.int64, count=int(offsets[-1])))

    @classmethod
    def of_padded(cls, rows: np.ndarray) -> RouteTable:
        """The table of the rows of a matrix of link indices, each padded with -1 after its links."""
        present = rows >= 0
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(present.sum(axis=1), out=offsets[1:])
        return cls(offsets, rows[present].astype(np.int64))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def hops(self) -> np.ndarray:
        """Links per route."""
        return np.diff(self.offsets)

    def tuples(self) -> list[tuple[int, ...]]:
        """Every route as a tuple of link indices."""
        return _tuples(self.links, self.offsets[:-1], self.hops)

    def padded(self, fill: int) -> np.ndarray:
        """The routes as the rows of one matrix as wide as the longest, `fill` after each route's links."""
        return padded_rows(self.links, self.hops, fill)


_ROWS_AT_ONCE = 1 << 16
"""Routes the table helpers below read in one step (bounds their scratch memory to a few arrays of this
many rows by the widest route)."""


def rows_by_width(hops: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """The positions of `hops` grouped by value, in ascending order within a group: ``(width, positions)``,
    at most :data:`_ROWS_AT_ONCE` positions at a time."""
    order = np.argsort(hops.astype(np.uint16) if len(hops) and hops.max() < 2**16 else hops, kind="stable")
    widths = hops[order]
    bounds = np.concatenate(([0], np.flatnonzero(widths[1:] != widths[:-1]) + 1, [len(order)]))
    for low, high in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        for begin in range(low, high, _ROWS_AT_ONCE):
            yield int(widths[low]), order[begin:min(begin + _ROWS_AT_ONCE, high)]


def padded_rows(flat: np.ndarray, hops: np.ndarray, fill: int) -> np.ndarray:
    """Rows of `hops` entries each, listed one after the other in `flat`, as the rows of one int64 matrix as wide
    as the longest, `fill` after each row's entries."""
    width = int(hops.max(initial=0))
    rows = np.full((len(hops), width), fill, dtype=np.int64)
    rows[np.arange(width) < hops[:, None]] = flat
    return rows


def concatenated(source: np.ndarray, first: np.ndarray, hops: np.ndarray) -> np.ndarray:
    """``source[first[i]:first[i] + hops[i]]`` for every ``i``, one after the other, of the type of `source`
    (gathered :data:`_ROWS_AT_ONCE` rows at a time)."""
    ends = np.cumsum(hops)
    flat = np.empty(int(ends[-1]) if len(ends) else 0, dtype=source.dtype)
    for low in range(0, len(hops), _ROWS_AT_ONCE):
        high = min(low + _ROWS_AT_ONCE, len(hops))
        width = hops[low:high]
        begin, end = int(ends[low] - width[0]), int(ends[high - 1])
        flat[begin:end] = source[np.repeat(first[low:high] - (ends[low:high] - width), width) + np.arange(begin, end)]
    return flat


def route_figures(routes: RouteTable, latency_s: Sequence[float] | np.ndarray,
                  bandwidth_Bps: Sequence[float] | np.ndarray) -> tuple[np.ndarray, ...]:
    """Per route of `routes`, given the latency (s) and bandwidth (bytes/s) of every link: its latency, the
    links' latencies added in route order (s); its lone rate, the bandwidth of its slowest link (bytes/s,
    ``inf`` for a route of no links); its limit, the lowest-numbered slowest link; and its blocker, the first
    slowest link along it (both -1 for a route of no links). These are what :meth:`MaxMinLinks.intern` keeps
    per route and what the critical-path model charges a transfer alone.
    """
    latency = np.append(np.asarray(latency_s, dtype=np.float64), 0.0)
    bandwidth = np.append(np.asarray(bandwidth_Bps, dtype=np.float64), math.inf)
    hops, offsets = routes.hops, routes.offsets
    count = len(hops)
    figures = (np.empty(count), np.empty(count), np.empty(count, dtype=np.int64), np.empty(count, dtype=np.int64))
    for low in range(0, count, _INTERNED_AT_ONCE):
        high = min(low + _INTERNED_AT_ONCE, count)
        for figure, part in zip(figures, _figures(hops[low:high], routes.links[offsets[low]:offsets[high]], latency,
                                                  bandwidth)):
            figure[low:high] = part
    return figures


def _figures(hops: np.ndarray, flat: np.ndarray, latency_s: np.ndarray,
             bandwidth_Bps: np.ndarray) -> tuple[np.ndarray, ...]:
    """Latency, lone rate, limit and blocker (see :meth:`MaxMinLinks.intern`) of routes of `hops` links each,
    listed one after the other in `flat`, found on one hop matrix padded with the link that `latency_s` and
    `bandwidth_Bps` end with (0 s, infinitely fast, numbered after every link): it adds no latency, and is
    slowest only where all of a route's links are infinitely fast, after them and of a higher number, so it is
    never the first slowest link nor the lowest numbered."""
    count = len(hops)
    total_s = np.zeros(count)
    if not len(flat):
        return total_s, np.full(count, math.inf), np.full(count, -1, dtype=np.int64), np.full(count, -1, dtype=np.int64)
    links = padded_rows(flat, hops, len(latency_s) - 1)
    hop_s = latency_s[links]
    for hop in range(links.shape[1]):
        total_s += hop_s[:, hop]
    bandwidth = bandwidth_Bps[links]
    rate = bandwidth.min(axis=1)
    slowest = bandwidth == rate[:, None]
    none = hops == 0
    limit = np.where(slowest, links, np.iinfo(np.int64).max).min(axis=1)
    blocker = links[np.arange(count), np.argmax(slowest, axis=1)]
    limit[none] = blocker[none] = -1
    return total_s, rate, limit, blocker


def _tuples(links: np.ndarray, first: np.ndarray, hops: np.ndarray) -> list[tuple[int, ...]]:
    """Route ``i`` as ``tuple(links[first[i]:first[i] + hops[i]])``, each link index one shared int per link."""
    if not len(hops):
        return []
    numbers = np.array(list(range(int(links.max(initial=-1)) + 1)), dtype=object)
    routes: list[tuple[int, ...]] = [()] * len(hops)
    for width, rows in rows_by_width(hops):
        if width:
            for k, route in zip(rows.tolist(), zip(*numbers[links[first[rows, None] + np.arange(width)]].T.tolist())):
                routes[k] = route
    return routes


def _same_routes(links_a: np.ndarray, first_a: np.ndarray, hops_a: np.ndarray, links_b: np.ndarray,
                 first_b: np.ndarray, hops_b: np.ndarray) -> np.ndarray:
    """Per pair ``i``, whether the route of ``first_a[i], hops_a[i]`` in `links_a` equals that of
    ``first_b[i], hops_b[i]`` in `links_b`."""
    same = hops_a == hops_b
    both = np.flatnonzero(same)
    for width, rows in rows_by_width(hops_a[both]):
        if width:
            span, rows = np.arange(width), both[rows]
            same[rows] = (links_a[first_a[rows, None] + span] == links_b[first_b[rows, None] + span]).all(axis=1)
    return same


def _route_hashes(links: np.ndarray, first: np.ndarray, hops: np.ndarray) -> np.ndarray:
    """A 64-bit hash of every route (of its links in order and its length), as int64.

    Each hop's link is multiplied by a pseudo-random odd constant of its position in
    the route (SplitMix64 of the position), and the products are summed modulo 2**64.
    Equal routes have equal hashes; :meth:`MaxMinLinks.intern` compares the links of
    routes whose hashes are equal, so a collision costs time, never a wrong number.
    """
    positions = np.arange(int(hops.max(initial=0)), dtype=np.uint64)
    codes = hops.astype(np.uint64) * np.uint64(0xD6E8FEB86659FD93)
    with np.errstate(over="ignore"):
        mix = positions * np.uint64(0x9E3779B97F4A7C15) + np.uint64(0x632BE59BD9B4E019)
        mix = (mix ^ (mix >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        mix = (mix ^ (mix >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        mix = (mix ^ (mix >> np.uint64(31))) | np.uint64(1)
        for width, rows in rows_by_width(hops):
            if width:
                terms = (links[first[rows, None] + np.arange(width)].astype(np.uint64) + np.uint64(1)) * mix[:width]
                codes[rows] += terms.sum(axis=1, dtype=np.uint64)
    return codes.view(np.int64)


def _distinct(items: np.ndarray, scratch: np.ndarray) -> bool:
    """Whether `items` (indices into `scratch`, all of which hold 0) are pairwise distinct; `scratch` is left as it was.

    Each item writes its position; a repeated item keeps only its last one.
    """
    position = np.arange(1, len(items) + 1, dtype=scratch.dtype)
    scratch[items] = position
    distinct = bool((scratch[items] == position).all())
    scratch[items] = 0
    return distinct


class Instant:
    """Everything that happens at one simulated instant: the work list of a SimPy event.

    Attributes
    ----------
    time_s : float
        The instant, seconds.
    starting : list of int
        Flows whose route latency has elapsed (they start draining bytes).
    finishing : list
        Flows whose last byte arrives, as the model records them (``(flow, version)``
        for :class:`MaxMinLinks`, flow ids for :class:`FifoLinks`).
    issued : list of int
        Transfers the engine hands to the model at this instant (after their overhead).
    reduced : list of int
        Transfers whose reduction completes at this instant.
    """

    __slots__ = ("time_s", "starting", "finishing", "issued", "reduced")

    def __init__(self, time_s: float) -> None:
        self.time_s = time_s
        self.starting: list[int] = []
        self.finishing: list = []
        self.issued: list[int] = []
        self.reduced: list[int] = []

    def __bool__(self) -> bool:
        return bool(self.starting or self.finishing or self.issued or self.reduced)


Clock = Callable[[float], Instant]
"""``at(time_s)``: the :class:`Instant` at `time_s`, created and scheduled if it does not exist yet."""


class LinkModel(Protocol):
    """What the engine needs of a link-sharing model.

    Attributes
    ----------
    started_s : array of float
        Per flow, the instant its first byte entered the network (NaN until it is submitted).
    finished_s : array of float
        Per flow, the instant its last byte arrived (NaN until then).
    blocked_by : dict of int to int
        Flow -> link it queued for before it could start.
    """

    started_s: array
    finished_s: array
    blocked_by: dict[int, int]

    def reserve(self, count: int) -> None:
        """Make room for flows ``0 .. count - 1`` (the engine numbers flows consecutively)."""

    def close(self) -> None:
        """Drop the clock: no more flows come; the history (:meth:`usage`, :meth:`limits`) stays readable."""

    def intern(self, routes: RouteTable | Sequence[tuple[int, ...]]) -> np.ndarray:
        """The number of each of `routes` (a table, or tuples of link indices), given on first sight and kept."""

    def submit(self, now_s: float, flows: Sequence[int], routes: Sequence[int],
               nbytes: Sequence[float], channels: Sequence[int] | None = None,
               in_order: Sequence[int] | None = None) -> None:
        """Flows ready at `now_s` (the current instant), in this order; ``routes[f]`` (a number from
        :meth:`intern`), ``nbytes[f]`` describe flow ``f``.

        ``channels[f]`` (default 0) names the connection a flow belongs to among those
        of its route, for models that keep connections in order; ``in_order[f]`` (default 0)
        is 0 or the number of the flow's in-order schedule, and a flow with one takes the place
        of the first flow of its connection and schedule waiting with a higher number, which
        moves back by one (:attr:`simnet.schedule.Schedule.in_order`)."""

    def advance(self, now_s: float, instant: Instant) -> list[int]:
        """Process the model's events of `instant` (at `now_s`); return the flows finishing now, sorted."""

    def usage(self, flows: range | None = None) -> tuple[np.ndarray, ...]:
        """Per-link drain segments ``(link, flow, start_s, end_s, rate_Bps)`` (of `flows` only, if given)."""

    def bottlenecks(self) -> dict[int, dict[int, float]]:
        """Flow -> ``{link: seconds}`` during which that link limited its rate."""

    def limits(self, flows: range | None = None) -> tuple[np.ndarray, ...]:
        """Intervals during which a link held a flow below its lone rate: arrays ``(link, flow, start_s, end_s)``."""

    def waits(self) -> tuple[np.ndarray, np.ndarray]:
        """The flows that queued before they could start, in the order they started, and the link each queued
        for (:attr:`blocked_by` as two arrays)."""

    def queued_for(self, flows: range) -> np.ndarray:
        """Per flow of `flows`, the link it queued for (:attr:`blocked_by`), -1 if none."""


def _dict_waits(blocked: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The keys and values of `blocked` as two arrays, in its order."""
    return (np.fromiter(blocked.keys(), dtype=np.int64, count=len(blocked)),
            np.fromiter(blocked.values(), dtype=np.int64, count=len(blocked)))


def _queued_for(flows: range, blocked: dict[int, int] | None,
                waits: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
    """Per flow of `flows`, the link it queued for, -1 if none, from the `waits` arrays or else the `blocked`
    dict (looked up flow by flow when it holds more flows than `flows`: one of many jobs)."""
    if waits is None:
        if len(blocked) > len(flows):
            return np.fromiter((blocked.get(f, -1) for f in flows), dtype=int, count=len(flows))
        waits = _dict_waits(blocked)
    flow, link = waits
    links = np.full(len(flows), -1, dtype=int)
    mine = (flow >= flows.start) & (flow < flows.stop)
    links[flow[mine] - flows.start] = link[mine]
    return links


def _segments(rows: list[tuple[int, int, float, float, float]]) -> tuple[np.ndarray, ...]:
    if not rows:
        return (np.zeros(0, dtype=int), np.zeros(0, dtype=int), np.zeros(0), np.zeros(0), np.zeros(0))
    link, flow, start, end, rate = zip(*rows)
    return (
        np.array(link, dtype=int),
        np.array(flow, dtype=int),
        np.array(start, dtype=float),
        np.array(end, dtype=float),
        np.array(rate, dtype=float),
    )


def _limit_arrays(rows: list[tuple[int, int, float, float]]) -> tuple[np.ndarray, ...]:
    if not rows:
        return (np.zeros(0, dtype=int), np.zeros(0, dtype=int), np.zeros(0), np.zeros(0))
    link, flow, start, end = zip(*rows)
    return (np.array(link, dtype=int), np.array(flow, dtype=int), np.array(start, dtype=float),
            np.array(end, dtype=float))


class FifoLinks:
    """Each directed link carries one transfer at a time, in arrival order.

    A transfer reserves its whole route cut-through: link ``i`` of the route is busy
    for ``nbytes / min(bandwidth)`` starting ``sum(latency of links before i)`` after
    the transfer's start, and the transfer starts at the first instant at which that
    reservation collides with no earlier one. It finishes
    ``sum(latency) + nbytes / min(bandwidth)`` after its start. Transfers submitted
    at the same instant are served in the order they are submitted.

    Parameters
    ----------
    bandwidth_Bps, latency_s : numpy.ndarray
        Per link.
    at : callable
        The simulation's clock (see :data:`Clock`).
    """

    def __init__(self, bandwidth_Bps: np.ndarray, latency_s: np.ndarray, at: Clock) -> None:
        self._bandwidth_Bps = bandwidth_Bps
        self._latency_s = latency_s
        self._at = at
        self._free_s = [0.0] * len(bandwidth_Bps)
        self._routes: dict[tuple[int, ...], tuple[tuple[float, ...], float, int, float]] = {}
        self._route_ids: dict[tuple[int, ...], int] = {}
        self._route_list: list[tuple[int, ...]] = []
        self._reservations: list[tuple[int, tuple[int, ...], float, float]] = []
        self.started_s = array("d")
        self.finished_s = array("d")
        self.blocked_by: dict[int, int] = {}

    def reserve(self, count: int) -> None:
        """Make room for flows up to ``count - 1`` (flow ids are consecutive from 0)."""
        if count > len(self.started_s):
            nan = array("d", [math.nan]) * (count - len(self.started_s))
            self.started_s = grown(self.started_s, nan)
            self.finished_s = grown(self.finished_s, nan)

    def close(self) -> None:
        """Drop the clock (see :meth:`LinkModel.close`)."""
        self._at = None

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

    def intern(self, routes: RouteTable | Sequence[tuple[int, ...]]) -> np.ndarray:
        """Number `routes` (each once); see :meth:`LinkModel.intern`."""
        if isinstance(routes, RouteTable):
            routes = routes.tuples()
        ids = np.empty(len(routes), dtype=np.int64)
        for k, route in enumerate(routes):
            route_id = self._route_ids.get(route)
            if route_id is None:
                route_id = self._route_ids[route] = len(self._route_list)
                self._route_list.append(route)
                self._route(route)
            ids[k] = route_id
        return ids

    def submit(self, now_s: float, flows: Sequence[int], routes, nbytes, channels=None, in_order=None) -> None:
        """Reserve the routes of `flows`, ready at `now_s`, in order (channels and `in_order` play no part: links
        serialize in arrival order)."""
        cache = self._routes
        route_list = self._route_list
        free = self._free_s
        blocked_by = self.blocked_by
        started = self.started_s
        reservations = self._reservations
        at = self._at
        instant, bucket = math.nan, None
        for flow in flows:
            route = route_list[routes[flow]]
            offsets, latency, _, rate = cache[route]
            start = now_s
            for link, offset in zip(route, offsets):
                if free[link] - offset > start:
                    start = free[link] - offset
                    blocked_by[flow] = link
            occupancy = 0.0
            if route:
                occupancy = nbytes[flow] / rate
                reservations.append((flow, route, start, occupancy))
                for link, offset in zip(route, offsets):
                    free[link] = start + offset + occupancy
            started[flow] = start
            end = start + latency + occupancy
            if end != instant:
                instant, bucket = end, at(end).finishing
            bucket.append(flow)

    def advance(self, now_s: float, instant: Instant) -> list[int]:
        """The flows finishing at `instant`, in flow order."""
        finished = sorted(instant.finishing)
        instant.finishing = []
        finished_s = self.finished_s
        for flow in finished:
            finished_s[flow] = now_s
        return finished

    def usage(self, flows: range | None = None) -> tuple[np.ndarray, ...]:
        """Per-link drain segments: arrays ``(link, flow, start_s, end_s, rate_Bps)``.

        Link ``i`` of a route carries the transfer at its bottleneck rate from
        ``start + sum(latency of links before i)`` for ``nbytes / rate`` seconds.
        """
        reservations = self._reservations
        if flows is not None:
            reservations = [r for r in reservations if r[0] in flows]
        if not reservations:
            return _segments([])
        flow, routes, start, occupancy = zip(*reservations)
        lengths = np.fromiter(map(len, routes), dtype=np.int64, count=len(routes))
        link = np.fromiter(chain.from_iterable(routes), dtype=np.int64, count=int(lengths.sum()))
        offset = np.fromiter(chain.from_iterable(self._routes[route][0] for route in routes), dtype=float,
                             count=len(link))
        begin = np.repeat(np.array(start, dtype=float), lengths) + offset
        occupied = np.repeat(np.array(occupancy, dtype=float), lengths)
        rate = np.repeat(np.array([self._routes[route][3] for route in routes], dtype=float), lengths)
        return (link.astype(int), np.repeat(np.array(flow, dtype=int), lengths), begin, begin + occupied, rate)

    def bottlenecks(self) -> dict[int, dict[int, float]]:
        """Flow -> ``{bottleneck link: nbytes / rate}`` (the slowest link, first on ties)."""
        return {flow: {self._routes[route][2]: occupancy} for flow, route, _, occupancy in self._reservations}

    def limits(self, flows: range | None = None) -> tuple[np.ndarray, ...]:
        """None: a reservation always drains at its lone rate (what holds it back is the wait before it starts,
        :attr:`blocked_by`). Arrays ``(link, flow, start_s, end_s)``, empty."""
        return _limit_arrays([])

    def waits(self) -> tuple[np.ndarray, np.ndarray]:
        """The flows that waited for a link, in the order they were reserved, and the link each waited for."""
        return _dict_waits(self.blocked_by)

    def queued_for(self, flows: range) -> np.ndarray:
        """Per flow of `flows`, the link it waited for (:attr:`blocked_by`), -1 if none."""
        return _queued_for(flows, self.blocked_by, None)


class MaxMinLinks:
    """Flow-level max-min fair sharing of links (progressive filling), SimGrid CM02 style.

    A transfer submitted at ``t`` first spends its route latency ``L = sum(latency)``
    without using bandwidth, then drains its bytes through every link of its route
    at once at its max-min fair rate; it finishes when its last byte has drained.
    A lone transfer therefore takes exactly ``L + nbytes / min(bandwidth)``.

    Transfers between the same two end points (the same route) and of the same
    channel (a schedule's :attr:`~simnet.schedule.TransferTable.channel`, default 0)
    form one connection and drain in order, one at a time, as on one NCCL channel
    or one MPI queue pair:
    a transfer whose latency has elapsed while an earlier one of its connection is
    still draining waits, and starts draining the instant that one finishes (its
    latency overlapped the wait, as in a pipeline); several waiting start in the order
    their latencies elapsed, except that a flow of an ``in_order`` schedule goes ahead of
    the waiting flows of that schedule numbered after it (not of other schedules'). Its ``started_s`` is then
    ``L`` before it starts draining, and it is ``blocked_by`` the route's slowest
    link. Transfers of different connections (other end points, or other channels
    between the same ones) share links max-min fairly. Hence a
    pipelined ring, whose sub-chunks follow each other over the same connection,
    takes the same time as under :class:`FifoLinks`. (SimGrid lets two concurrent
    messages of one pair share bandwidth instead; MPI collectives built from
    blocking ``MPI_Sendrecv`` never have two.) A transfer of zero bytes (a pure
    synchronisation) does not queue on its connection: it finishes one route
    latency after it is submitted.

    Rates are the max-min fair allocation of the links' bandwidths among the
    draining flows, computed by progressive filling: every unfixed flow grows at a
    pace proportional to its weight (1, or the inverse of its route latency with
    ``sharing="rtt_weighted"``); when a link saturates, the flows crossing it are
    fixed at ``weight × remaining capacity / unfixed weight``, and that link is their
    bottleneck (see :meth:`bottlenecks`). A flow bottlenecked elsewhere thus leaves
    its unused share to the others.

    Rates are recomputed whenever a flow starts or stops draining, and only for the
    *connected components* of the changed flows' links in the bipartite graph of
    draining flows and the links they cross. This is exact: the max-min allocation
    is the solution of independent problems, one per connected component (no
    constraint of one component mentions a flow of another), so a change leaves the
    rates of every other component untouched. A component of one flow alone on its
    links gets that flow's lone rate, the smallest bandwidth of its route (what
    progressive filling gives it).

    Floating point: a flow whose recomputed rate is bit-identical keeps its pending
    finish instant, so transfers that never share a link get exactly the lone-
    transfer time. Otherwise its remaining bytes are brought up to date
    (``remaining -= rate * elapsed``, clamped at 0) and its finish is rescheduled at
    ``now + remaining / rate``. Completion is an event, never a test of
    ``remaining == 0``: each flow has one valid finish event (older ones carry a
    stale version and are skipped). Ties are broken by link and flow index, so
    results are deterministic bit for bit.

    Parameters
    ----------
    bandwidth_Bps, latency_s : numpy.ndarray
        Per link.
    at : callable
        The simulation's clock (see :data:`Clock`).
    sharing : {"equal", "rtt_weighted"}, optional
        How a saturated link is shared (see :data:`SHARING`).

    Notes
    -----
    References: Casanova, H. et al. (2014). Versatile, scalable, and accurate
    simulation of distributed applications and platforms. J. Parallel Distrib.
    Comput. 74(10), 2899-2917 (CM02, RTT-weighted sharing); Bertsekas, D. and
    Gallager, R. (1992). Data Networks, §6.5.2 (max-min fairness by progressive
    filling).
    """

    def __init__(self, bandwidth_Bps: np.ndarray, latency_s: np.ndarray, at: Clock, *, sharing: str = "equal") -> None:
        if sharing not in SHARING:
            raise ValueError(f"sharing must be one of {SHARING}, got {sharing!r}")
        self._bandwidth_Bps = bandwidth_Bps
        self._capacity_Bps: list[float] = bandwidth_Bps.tolist()
        self._latency_s = latency_s
        self._at = at
        self._weighted = sharing == "rtt_weighted"
        self._flows_remembered = FLOWS_REMEMBERED
        self._remembered = 0
        self._fills: dict[tuple[int, ...], dict[int, tuple[float, int]]] | None = (
            {} if FLOWS_REMEMBERED > 0 and not self._weighted else None)
        self._on_link: list[dict[int, None]] = [{} for _ in range(len(bandwidth_Bps))]
        self._by_hash = KeyedRows(1)
        self._by_tuple: dict[tuple[int, ...], int] = {}
        self._route_tuples: list[tuple[int, ...]] = []
        self._route_latency_s = array("d")
        self._route_rate_Bps = array("d")
        self._route_limit = array("i")
        self._route_blocker = array("i")
        self._route_weight = array("d")
        self._route_line = array("i")
        self._route_first = array("q")
        self._route_hops = array("i")
        self._route_flat = array("i")
        self._line_ids: dict[tuple[int, int], int] = {}
        self._lines: list[deque[int]] = []
        self._in_order: Sequence[int] = Constant(0)
        self._busy = bytearray()
        self._queued = array("i")
        self._load = array("i", bytes(4 * len(bandwidth_Bps)))
        self._sole = array("q", [-1]) * len(bandwidth_Bps)
        self._route = array("i")
        self._line = array("i")
        self._limit = array("i")
        self._version = array("i")
        self._draining = bytearray()
        self._remaining_bytes = array("d")
        self._rate_Bps = array("d")
        self._since_s = array("d")
        self.finished_s = array("d")
        self._order = array("i")
        self._history_flow = array("i")
        self._history_s = array("d")
        self._history_instants: tuple[np.ndarray, np.ndarray] | None = None
        self._history_rate_Bps = array("d")
        self._history_limit = array("i")
        self.started_s = array("d")
        self._blocked_by: dict[int, int] | None = {}
        self._waits: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def blocked_by(self) -> dict[int, int]:
        """Flow -> link it queued for before it could start (:class:`LinkModel`); after the compiled loop
        (:meth:`_adopt`) made from :meth:`waits` when first asked for."""
        if self._blocked_by is None:
            flows, links = self._waits
            self._blocked_by = dict(zip(flows.tolist(), links.tolist()))
        return self._blocked_by

    def waits(self) -> tuple[np.ndarray, np.ndarray]:
        """The flows that queued for their connection, in the order they started draining, and the link each
        queued for (:attr:`blocked_by` as two arrays)."""
        return self._waits if self._waits is not None else _dict_waits(self._blocked_by)

    def queued_for(self, flows: range) -> np.ndarray:
        """Per flow of `flows`, the link it queued for (:attr:`blocked_by`), -1 if none."""
        return _queued_for(flows, self._blocked_by, self._waits)

    def reserve(self, count: int) -> None:
        """Make room for flows up to ``count - 1`` (flow ids are consecutive from 0)."""
        more = count - len(self._route)
        if more <= 0:
            return
        minus = array("i", [-1]) * more
        self._route, self._line, self._limit = (grown(values, minus)
                                                for values in (self._route, self._line, self._limit))
        self._version = grown(self._version, bytes(4 * more))
        self._draining = grown(self._draining, bytes(more))
        zeros = bytes(8 * more)
        self._remaining_bytes, self._rate_Bps, self._since_s = (
            grown(values, zeros) for values in (self._remaining_bytes, self._rate_Bps, self._since_s))
        nan = array("d", [math.nan]) * more
        self.finished_s = grown(self.finished_s, nan)
        self.started_s = grown(self.started_s, nan)

    def close(self) -> None:
        """Drop the clock (see :meth:`LinkModel.close`)."""
        self._at = None

    def intern(self, routes: RouteTable | Sequence[tuple[int, ...]]) -> np.ndarray:
        """Number `routes` (each once): the latency, the rate and bottleneck of a flow alone on its links, and
        under RTT-weighted sharing the weight of each new one (equal sharing weighs every flow 1 and keeps none).

        Alone, progressive filling fixes the flow at the smallest ``bandwidth / 1`` of
        its route, on the link of lowest index among the slowest (the heap order of
        :meth:`_fill`), so this is exactly what :meth:`_fill` would compute. A flow
        that waits for its connection is `blocked_by` the first of the slowest links
        along the route. The latency adds the links' latencies in route order, as a flow crosses them.

        New routes are numbered in the order they first appear. A route is known by the
        64-bit hash of its links (:func:`_route_hashes`), confirmed by comparing the links
        themselves; a route whose hash another route already holds is known by its tuple.
        """
        table = routes if isinstance(routes, RouteTable) else RouteTable.of(routes)
        links, first, hops = table.links, table.offsets[:-1], table.hops
        if len(links) and not 0 <= links.min() <= links.max() < len(self._bandwidth_Bps):
            raise IndexError(f"a route names a link outside 0..{len(self._bandwidth_Bps) - 1}")
        ids, fresh = self._numbered(links, first, hops)
        if len(fresh):
            self._keep(links, first, hops, fresh)
        return ids

    def _numbered(self, links: np.ndarray, first: np.ndarray, hops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The number of each route of :meth:`intern` (new ones numbered after those known), and the rows of the
        routes numbered anew, in order (the lookup's temporaries are gone when :meth:`_keep` grows the columns)."""
        count = len(hops)
        ids = np.empty(count, dtype=np.int64)
        if count == 0:
            return ids, ids
        codes, rep, group = unique_first(_route_hashes(links, first, hops))
        known = self._by_hash.find(codes)
        hit = known >= 0
        known[hit] = self._by_hash.values[known[hit], 0]
        held = known[group]
        slow = np.zeros(count, dtype=bool)
        old = np.flatnonzero(held >= 0)
        slow[old] = ~_same_routes(links, first[old], hops[old], view(self._route_flat),
                                  view(self._route_first)[held[old]], view(self._route_hops)[held[old]])
        repeated = np.flatnonzero((held < 0) & (rep[group] != np.arange(count)))
        slow[repeated] = ~_same_routes(links, first[repeated], hops[repeated], links, first[rep[group[repeated]]],
                                       hops[rep[group[repeated]]])
        news = np.flatnonzero(known < 0)
        pending: dict[tuple[int, ...], int] = {}
        later: list[tuple[int, int]] = []
        rows = np.flatnonzero(slow)
        for row, route in zip(rows.tolist(), _tuples(links, first[rows], hops[rows])):
            route_id = self._by_tuple.get(route)
            if route_id is None:
                later.append((row, pending.setdefault(route, row)))
            else:
                ids[row] = route_id
        fresh = np.sort(np.concatenate([rep[news], np.array(list(pending.values()), dtype=np.int64)]))
        numbered = np.full(count, -1, dtype=np.int64)
        numbered[fresh] = len(self._route_hops) + np.arange(len(fresh))
        fast = np.flatnonzero(~slow)
        ids[fast] = np.where(held >= 0, held, numbered[rep[group]])[fast]
        if later:
            row, origin = np.array(later, dtype=np.int64).T
            ids[row] = numbered[origin]
        self._by_hash.add(codes[news], numbered[rep[news], None])
        self._by_tuple.update((route, int(numbered[row])) for route, row in pending.items())
        return ids, fresh

    def _keep(self, links: np.ndarray, first: np.ndarray, hops: np.ndarray, fresh: np.ndarray) -> None:
        """Append the routes of rows `fresh` (of :meth:`intern`'s table) and their figures to the route columns."""
        count = len(hops)
        width = hops[fresh]
        starts = np.concatenate(([0], np.cumsum(width)))
        if len(fresh) == count and first[0] == 0 and len(links) == starts[-1] and (first == starts[:-1]).all():
            flat = links
        else:
            flat = concatenated(links, first[fresh], width)
        total_s, rate, limit, blocker = route_figures(RouteTable(starts, flat), self._latency_s, self._bandwidth_Bps)
        self._route_latency_s = grown(self._route_latency_s, total_s)
        self._route_rate_Bps = grown(self._route_rate_Bps, rate)
        self._route_limit = grown(self._route_limit, limit)
        self._route_blocker = grown(self._route_blocker, blocker)
        if self._weighted:
            self._route_weight = grown(self._route_weight, np.where(total_s > 0, 1.0 / np.where(total_s > 0, total_s,
                                                                                                  1.0), 1.0))
        self._route_line = grown(self._route_line, b"\xff" * (4 * len(fresh)))
        self._route_first = grown(self._route_first, len(self._route_flat) + starts[:-1])
        self._route_hops = grown(self._route_hops, width)
        self._route_flat = grown(self._route_flat, flat)

    @property
    def _route_links(self) -> list[tuple[int, ...]]:
        """Every route numbered so far, as a tuple of link indices (made when first read: the compiled loop
        reads the table of :meth:`_kernel_routes` instead)."""
        tuples = self._route_tuples
        if len(tuples) < len(self._route_hops):
            done = len(tuples)
            tuples.extend(_tuples(view(self._route_flat), view(self._route_first)[done:],
                                  view(self._route_hops)[done:]))
        return tuples

    def _connection(self, route_id: int, channel: int) -> int:
        """Number the connection of `channel` over route `route_id` (once, when a flow first takes it: the
        compiled loop numbers its own, so a route it runs needs none here)."""
        line = self._line_ids.get((route_id, channel))
        if line is None:
            line = self._line_ids[(route_id, channel)] = len(self._lines)
            self._lines.append(deque())
            self._busy = grown(self._busy, bytes(1))
            self._queued = grown(self._queued, bytes(4))
            if channel == 0:
                self._route_line[route_id] = line
        return line

    def submit(self, now_s: float, flows: Sequence[int], routes, nbytes, channels=None, in_order=None) -> None:
        """Start `flows` at `now_s`, in order; each drains once its route latency has passed."""
        if in_order is not None:
            self._in_order = in_order
        if len(flows) >= BATCH:
            self._submit_batch(now_s, flows, routes, nbytes, channels)
            return
        route_latency, route_hops = self._route_latency_s, self._route_hops
        route_line = self._route_line
        route_of, line_of = self._route, self._line
        remaining, started = self._remaining_bytes, self.started_s
        at = self._at
        instant, bucket = math.nan, None
        same = nbytes.value if isinstance(nbytes, Constant) else None
        for flow in flows:
            route_id = routes[flow]
            size = nbytes[flow] if same is None else same
            channel = channels[flow] if channels is not None else 0
            route_of[flow] = route_id
            line = route_line[route_id] if channel == 0 else -1
            line_of[flow] = line if line >= 0 else self._connection(route_id, channel)
            remaining[flow] = size
            started[flow] = now_s
            time_s = now_s + route_latency[route_id]
            if time_s != instant:
                instant = time_s
                bucket = at(time_s)
            if route_hops[route_id] and size > 0:
                bucket.starting.append(flow)
            else:
                bucket.finishing.append((flow, 0))
        self._order = grown(self._order, array("i", flows))

    def _submit_batch(self, now_s: float, flows: Sequence[int], routes, nbytes, channels) -> None:
        """:meth:`submit` with array arithmetic: the same state and instants, for many flows at once."""
        flow = np.array(flows, dtype=np.int64)
        route_id = take(routes, flow)
        line = view(self._route_line)[route_id]
        if channels is not None:
            channel = take(channels, flow)
            for k in np.flatnonzero(channel).tolist():
                line[k] = self._connection(int(route_id[k]), int(channel[k]))
        for k in np.flatnonzero(line < 0).tolist():
            line[k] = self._connection(int(route_id[k]), 0)
        size = take(nbytes, flow)
        view(self._route)[flow] = route_id
        view(self._line)[flow] = line
        view(self._remaining_bytes)[flow] = size
        view(self.started_s)[flow] = now_s
        self._order = grown(self._order, flow)
        time_s = now_s + view(self._route_latency_s)[route_id]
        drains = (view(self._route_hops)[route_id] > 0) & (size > 0)
        at = self._at
        if drains.all():
            for moment, group in by_time(time_s, flow):
                at(moment).starting.extend(group)
            return
        for moment, group in by_time(time_s[drains], flow[drains]):
            at(moment).starting.extend(group)
        for moment, group in by_time(time_s[~drains], flow[~drains]):
            at(moment).finishing.extend((member, 0) for member in group)

    def advance(self, now_s: float, instant: Instant) -> list[int]:
        """Process the flows starting and finishing at `instant`; return the finished ones, sorted.

        Finished flows leave their links (the next transfer of a connection starts
        draining), starting flows join theirs, and the components of every link
        touched are re-shared; a flow whose finish that reschedules to `now_s` is
        processed in the same call.
        """
        if not (instant.starting or instant.finishing):
            return []
        finished = []
        on_link, load, sole = self._on_link, self._load, self._sole
        lines, busy, queued = self._lines, self._busy, self._queued
        route_links = self._route_links
        route_of, line_of = self._route, self._line
        version, draining = self._version, self._draining
        remaining, since, finished_s = self._remaining_bytes, self._since_s, self.finished_s
        while instant.starting or instant.finishing:
            finishing, started = instant.finishing, instant.starting
            instant.starting, instant.finishing = [], []
            if len(finishing) == 1:
                flow, valid = finishing[0]
                ended = [flow] if version[flow] == valid else []
            else:
                ended = sorted(flow for flow, valid in finishing if version[flow] == valid)
            started.sort()
            if not started and len(ended) >= BATCH and self._end_batch(now_s, ended):
                finished.extend(ended)
                continue
            if not ended and len(started) >= BATCH and self._start_batch(now_s, started):
                continue
            touched: list[int] = []
            joined: list[int] = []
            simple = True
            for flow in ended:
                version[flow] = -1
                finished.append(flow)
                finished_s[flow] = now_s
                if draining[flow]:
                    draining[flow] = False
                    remaining[flow] = 0.0
                    route = route_links[route_of[flow]]
                    for link in route:
                        load[link] -= 1
                        if sole[link] == flow:
                            sole[link] = -1
                            continue
                        holders = on_link[link]
                        del holders[flow]
                        if holders:
                            simple = False
                    touched.extend(route)
                    line = line_of[flow]
                    if queued[line]:
                        queued[line] -= 1
                        successor = lines[line].popleft()
                        simple &= self._drain(successor, now_s)
                        joined.append(successor)
                    else:
                        busy[line] = False
            for flow in started:
                line = line_of[flow]
                if busy[line]:
                    waiting, tags = lines[line], self._in_order
                    tag = tags[flow]
                    place = next((k for k, other in enumerate(waiting) if other > flow and tags[other] == tag),
                                 None) if tag else None
                    if place is None:
                        waiting.append(flow)
                    else:
                        waiting.insert(place, flow)
                    queued[line] += 1
                    continue
                busy[line] = True
                draining[flow] = True
                since[flow] = now_s
                route = route_links[route_of[flow]]
                for link in route:
                    if sole[link] >= 0:
                        self._materialise(sole[link])
                    holders = on_link[link]
                    if holders:
                        simple = False
                    holders[flow] = None
                    load[link] += 1
                touched.extend(route)
                joined.append(flow)
            if touched:
                self._reshare(now_s, touched, joined if simple else None)
        finished.sort()
        return finished

    def _links_of(self, route_id: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The links of routes `route_id`, one after the other, and each route's hop count."""
        hops = view(self._route_hops)[route_id]
        ends = np.cumsum(hops)
        position = np.arange(int(ends[-1]) if len(ends) else 0) + np.repeat(
            view(self._route_first)[route_id] - (ends - hops), hops)
        return view(self._route_flat)[position], hops

    def _start_batch(self, now_s: float, started: list[int]) -> bool:
        """Start draining `started` at once if each is alone on its connection and its links; whether it did.

        Then no link is shared and every flow gets its lone rate, exactly what the
        loop of :meth:`advance` and :meth:`_reshare` would give it. Each flow becomes
        the sole holder of its links without entering their holder sets (see
        :meth:`_materialise`).
        """
        flow = np.array(started, dtype=np.int64)
        line = view(self._line)[flow]
        busy = np.frombuffer(self._busy, dtype=np.uint8)
        if busy[line].any() or not _distinct(line, view(self._queued)):
            return False
        route_id = view(self._route)[flow]
        links, hops = self._links_of(route_id)
        load = view(self._load)
        if load[links].any() or not _distinct(links, load):
            return False
        busy[line] = 1
        np.frombuffer(self._draining, dtype=np.uint8)[flow] = 1
        view(self._since_s)[flow] = now_s
        load[links] = 1
        view(self._sole)[links] = np.repeat(flow, hops)
        self._assign_batch(now_s, flow, view(self._route_rate_Bps)[route_id], view(self._route_limit)[route_id])
        return True

    def _end_batch(self, now_s: float, ended: list[int]) -> bool:
        """Finish `ended` at once if each drains alone on its links and none has a successor waiting; whether it did.

        Then every link they leave is empty and nothing is re-shared, as in the loop of :meth:`advance`.
        """
        flow = np.array(ended, dtype=np.int64)
        draining = np.frombuffer(self._draining, dtype=np.uint8)
        if not draining[flow].all():
            return False
        line = view(self._line)[flow]
        if view(self._queued)[line].any():
            return False
        links, hops = self._links_of(view(self._route)[flow])
        load = view(self._load)
        if (load[links] != 1).any():
            return False
        view(self._version)[flow] = -1
        view(self.finished_s)[flow] = now_s
        draining[flow] = 0
        view(self._remaining_bytes)[flow] = 0.0
        load[links] = 0
        np.frombuffer(self._busy, dtype=np.uint8)[line] = 0
        sole = view(self._sole)
        held = sole[links] != np.repeat(flow, hops)
        sole[links] = -1
        if held.any():
            on_link = self._on_link
            for link in links[held].tolist():
                on_link[link].clear()
        return True

    def _materialise(self, flow: int) -> None:
        """Enter `flow`, the sole holder of its links since :meth:`_start_batch`, into their holder sets.

        A flow started by the array path is alone on all its links until a flow of
        the loop joins one of them; that flow materialises it first, so the loop,
        :meth:`_reshare` and :meth:`_fill` see every holder of every link they reach.
        """
        on_link, sole = self._on_link, self._sole
        for link in self._route_links[self._route[flow]]:
            on_link[link][flow] = None
            sole[link] = -1

    def _drain(self, flow: int, now_s: float) -> bool:
        """Start draining `flow`, which waited for its connection: it joins its links; whether all were empty."""
        route_id = self._route[flow]
        self._draining[flow] = True
        self._since_s[flow] = now_s
        empty = True
        load, sole = self._load, self._sole
        for link in self._route_links[route_id]:
            if sole[link] >= 0:
                self._materialise(sole[link])
            holders = self._on_link[link]
            if holders:
                empty = False
            holders[flow] = None
            load[link] += 1
        self.started_s[flow] = now_s - self._route_latency_s[route_id]
        self.blocked_by[flow] = self._route_blocker[route_id]
        return empty

    def _reshare(self, now_s: float, touched: list[int], alone: list[int] | None) -> None:
        """Recompute the rates of the components of the `touched` links.

        A component of one flow alone on its links gets that flow's lone rate. When
        the caller knows the changed components are all such flows (`alone`: every
        link a finished flow left is empty and every flow that joined found its links
        empty), they are exactly the flows that joined, and nothing is searched.

        Under equal sharing the allocation of a component is a function of the
        multiset of its flows' routes alone: :meth:`_fill` pops links by
        ``(capacity / count, link)``, and every flow it fixes at one pop subtracts the
        same share from its links, so neither the flows' numbers nor their order can
        change a float; flows of one route get the same rate and bottleneck. A
        pipelined schedule meets the same multiset again and again (the chunks of a
        channel over the same links), so the allocation is remembered per sorted
        tuple of route numbers (within :data:`FLOWS_REMEMBERED`) and filled once. Weighted sharing
        sums weights in the order flows joined a link, and is filled every time.
        """
        route_of = self._route
        rate, limit = self._route_rate_Bps, self._route_limit
        if alone is not None:
            self._assign(now_s, [(flow, rate[route_of[flow]], limit[route_of[flow]]) for flow in alone])
            return
        on_link = self._on_link
        route_links = self._route_links
        fills = self._fills
        seen: set[int] = set()
        allocation: list[tuple[int, float, int]] = []
        for start in touched:
            holders = on_link[start]
            if not holders or start in seen:
                continue
            if len(holders) == 1:
                (flow,) = holders
                route_id = route_of[flow]
                route = route_links[route_id]
                if all(len(on_link[link]) == 1 for link in route):
                    seen.update(route)
                    allocation.append((flow, rate[route_id], limit[route_id]))
                    continue
            component_links: list[int] = []
            component_flows: dict[int, None] = {}
            stack = [start]
            seen.add(start)
            while stack:
                link = stack.pop()
                component_links.append(link)
                for flow in on_link[link]:
                    if flow not in component_flows:
                        component_flows[flow] = None
                        for other in route_links[route_of[flow]]:
                            if other not in seen:
                                seen.add(other)
                                stack.append(other)
            flows = sorted(component_flows)
            if fills is None:
                fixed = self._fill(sorted(component_links))
                allocation.extend((flow, *fixed[flow]) for flow in flows)
                continue
            routes = [route_of[flow] for flow in flows]
            key = tuple(sorted(routes))
            per_route = fills.get(key)
            if per_route is None:
                fixed = self._fill(sorted(component_links))
                per_route = {route_id: fixed[flow] for flow, route_id in zip(flows, routes)}
                self._remember(key, per_route)
            allocation.extend((flow, *per_route[route_id]) for flow, route_id in zip(flows, routes))
        self._assign(now_s, allocation)

    def _remember(self, key: tuple[int, ...], per_route: dict[int, tuple[float, int]]) -> None:
        """Keep the allocation of the component of routes `key`, forgetting all others first if the flows kept
        would exceed :data:`FLOWS_REMEMBERED`; a component larger than that is not kept."""
        if len(key) > self._flows_remembered:
            return
        if self._remembered + len(key) > self._flows_remembered:
            self._fills.clear()
            self._remembered = 0
        self._fills[key] = per_route
        self._remembered += len(key)

    def _fill(self, links: list[int]) -> dict[int, tuple[float, int]]:
        """Progressive filling over `links` (a union of components): flow -> (rate, bottleneck link).

        The fill level rises until a link saturates: its level is its remaining
        capacity over the weight of its unfixed flows (their number when sharing
        equally; the weights are summed afresh, never by subtraction, so that weights
        of very different size lose no precision); its flows are fixed at
        ``level × weight``.
        """
        on_link = self._on_link
        route_of, route_links, route_weight = self._route, self._route_links, self._route_weight
        weighted = self._weighted
        bandwidth = self._capacity_Bps
        capacity = {link: bandwidth[link] for link in links}
        count = {link: len(on_link[link]) for link in links}
        total = ({link: sum(route_weight[route_of[flow]] for flow in on_link[link]) for link in links}
                 if weighted else count)
        heap = [(capacity[link] / total[link], link) for link in links]
        heapq.heapify(heap)
        fixed: dict[int, tuple[float, int]] = {}
        floor = 0.0
        while heap:
            share, link = heapq.heappop(heap)
            if count[link] == 0:
                continue
            current = capacity[link] / total[link]
            if current != share:
                heapq.heappush(heap, (current, link))
                continue
            share = max(share, floor)
            floor = share
            for flow in sorted(on_link[link]):
                if flow in fixed:
                    continue
                route_id = route_of[flow]
                rate = share * route_weight[route_id] if weighted else share
                fixed[flow] = (rate, link)
                for other in route_links[route_id]:
                    capacity[other] -= rate
                    count[other] -= 1
                    if weighted:
                        total[other] = sum(route_weight[route_of[f]] for f in on_link[other] if f not in fixed)
        return fixed

    def _assign(self, now_s: float, allocation: list[tuple[int, float, int]]) -> None:
        """Give each ``(flow, rate, bottleneck link)`` its rate from `now_s` on; reschedule its finish."""
        rates, limits, version = self._rate_Bps, self._limit, self._version
        remaining, since = self._remaining_bytes, self._since_s
        noted_flow, noted_rate, noted_limit = [], [], []
        note_flow, note_rate, note_limit = noted_flow.append, noted_rate.append, noted_limit.append
        at = self._at
        instant, bucket = math.nan, None
        for flow, rate, limit in allocation:
            old = rates[flow]
            if rate == old:
                if limit != limits[flow]:
                    limits[flow] = limit
                    note_flow(flow)
                    note_rate(rate)
                    note_limit(limit)
                continue
            if old > 0:
                remaining[flow] = max(0.0, remaining[flow] - old * (now_s - since[flow]))
            since[flow] = now_s
            rates[flow] = rate
            limits[flow] = limit
            valid = version[flow] + 1
            version[flow] = valid
            note_flow(flow)
            note_rate(rate)
            note_limit(limit)
            end = now_s + remaining[flow] / rate
            if end != instant:
                instant, bucket = end, at(end).finishing
            bucket.append((flow, valid))
        if noted_flow:
            self._history_flow = grown(self._history_flow, array("i", noted_flow))
            self._history_s = grown(self._history_s, array("d", [now_s]) * len(noted_flow))
            self._history_rate_Bps = grown(self._history_rate_Bps, array("d", noted_rate))
            self._history_limit = grown(self._history_limit, array("i", noted_limit))

    def _assign_batch(self, now_s: float, flow: np.ndarray, rate: np.ndarray, limit: np.ndarray) -> None:
        """:meth:`_assign` for flows that had no rate yet, with array arithmetic (the same floats and events).

        A flow that had no rate cannot keep it (rates are positive), so every flow gets a new rate, a new
        version and its finish, as in the loop.
        """
        rates = view(self._rate_Bps)
        view(self._since_s)[flow] = now_s
        rates[flow] = rate
        view(self._limit)[flow] = limit
        version = view(self._version)
        version[flow] += 1
        valid = version[flow]
        self._history_flow = grown(self._history_flow, flow)
        self._history_s = grown(self._history_s, np.full(len(flow), now_s))
        self._history_rate_Bps = grown(self._history_rate_Bps, rate)
        self._history_limit = grown(self._history_limit, limit)
        end = now_s + view(self._remaining_bytes)[flow] / rate
        at = self._at
        for moment, group in by_time(end, np.stack([flow, valid], axis=1)):
            at(moment).finishing.extend(map(tuple, group))

    def _kernel_routes(self) -> tuple:
        """What :func:`simnet.kernel.run` needs of the routes and links: ``(route_first, route_hops, route_flat,
        route_latency_s, route_rate_Bps, route_limit, route_weight, capacity_Bps, weighted)``; `route_weight` is
        empty unless `weighted`."""
        return (view(self._route_first), view(self._route_hops), view(self._route_flat), view(self._route_latency_s),
                view(self._route_rate_Bps), view(self._route_limit), view(self._route_weight),
                np.asarray(self._bandwidth_Bps, dtype=np.float64), self._weighted)

    def _adopt(self, count: int, order: np.ndarray, route: np.ndarray, started_s: np.ndarray, finished_s: np.ndarray,
               history_flow: np.ndarray, history_instants: tuple[np.ndarray, np.ndarray],
               history_rate_Bps: np.ndarray, history_limit: np.ndarray, blocked: np.ndarray) -> None:
        """Take what :func:`simnet.kernel.run` did with `count` flows (never reserved here): the flows
        submitted in `order` over routes `route`, their start and finish times, the rate history (its times
        one per instant: :meth:`_history_times`) and the flows that waited for their connection (in the order
        they started draining). What only running needs (rates, versions, connections) stays empty: a model
        whose simulation is closed only reports."""
        if len(order) == count:
            self._route = route
        else:
            self._route = np.full(count, -1, dtype=np.int32)
            self._route[order] = route[order]
        self._order = order
        self.started_s, self.finished_s = started_s, finished_s
        self._history_flow, self._history_instants = history_flow, history_instants
        self._history_rate_Bps, self._history_limit = history_rate_Bps, history_limit
        self._waits = (blocked, view(self._route_blocker)[route[blocked]])
        self._blocked_by = None

    def _history_times(self) -> array | np.ndarray:
        """When each change of the rate history was made, seconds: the compiled loop keeps one time per instant
        with changes (a ring all-reduce of 2 M transfers makes 3.6 M changes in 5 274 instants), laid out per
        change here when a trace first needs them."""
        if self._history_instants is not None:
            times, ends = self._history_instants
            self._history_s = np.repeat(times, np.diff(ends, prepend=0))
            self._history_instants = None
        return self._history_s

    def _drains(self, flows: range | None = None) -> tuple[np.ndarray, ...]:
        """Intervals of constant rate: arrays ``(flow, route, start_s, end_s, rate_Bps, limit)``.

        Flows in the order they were submitted, each one's intervals in time order; an
        interval ends where the next begins, the last one when the flow finished (or
        where it began, for a flow still draining).
        """
        flow = view(self._history_flow).astype(np.int64)
        begin = view(self._history_times()).copy()
        rate = view(self._history_rate_Bps).copy()
        limit = view(self._history_limit).astype(np.int64)
        if flows is not None:
            keep = (flow >= flows.start) & (flow < flows.stop)
            flow, begin, rate, limit = flow[keep], begin[keep], rate[keep], limit[keep]
        order = view(self._order)
        rank = np.zeros(len(self._route), dtype=np.int64)
        rank[order] = np.arange(len(order))
        by_flow = np.argsort(rank[flow], kind="stable")
        flow, begin, rate, limit = flow[by_flow], begin[by_flow], rate[by_flow], limit[by_flow]
        finished = np.frombuffer(self.finished_s, dtype=float)[flow]
        last = np.ones(len(flow), dtype=bool)
        last[:-1] = flow[1:] != flow[:-1]
        end = np.where(np.isnan(finished), begin, finished)
        end[~last] = begin[1:][~last[:-1]]
        route = view(self._route)[flow].astype(np.int64)
        return flow, route, begin, end, rate, limit

    def usage(self, flows: range | None = None) -> tuple[np.ndarray, ...]:
        """Per-link drain segments: arrays ``(link, flow, start_s, end_s, rate_Bps)``.

        One segment per link of the route and per interval of constant rate.
        """
        flow, route, begin, end, rate, _ = self._drains(flows)
        keep = end > begin
        flow, route, begin, end, rate = flow[keep], route[keep], begin[keep], end[keep], rate[keep]
        if not len(flow):
            return _segments([])
        hops = view(self._route_hops)[route]
        row = np.repeat(np.arange(len(flow)), hops)
        position = np.arange(len(row)) - np.repeat(np.cumsum(hops) - hops, hops)
        return (view(self._route_flat)[view(self._route_first)[route][row] + position].astype(int),
                flow[row].astype(int), begin[row], end[row], rate[row])

    def bottlenecks(self) -> dict[int, dict[int, float]]:
        """Flow -> ``{link: seconds}`` during which that link limited its rate."""
        flow, _, begin, end, _, limit = self._drains()
        limits: dict[int, dict[int, float]] = {}
        for key, link, seconds in zip(flow.tolist(), limit.tolist(), (end - begin).tolist()):
            per_link = limits.setdefault(key, {})
            per_link[link] = per_link.get(link, 0.0) + seconds
        return limits

    def limits(self, flows: range | None = None) -> tuple[np.ndarray, ...]:
        """Intervals during which a link held a flow below its lone rate: arrays ``(link, flow, start_s, end_s)``.

        The intervals of constant rate in which the flow drained slower than it would
        alone (the smallest bandwidth of its route), with the link on which progressive
        filling fixed its rate (:meth:`bottlenecks` sums all intervals, these and
        those at the lone rate, per link); empty intervals are left out.
        """
        flow, route, begin, end, rate, limit = self._drains(flows)
        lone = np.asarray(self._route_rate_Bps, dtype=float)[route]
        keep = (end > begin) & (rate < lone)
        if not keep.any():
            return _limit_arrays([])
        return limit[keep].astype(int), flow[keep].astype(int), begin[keep], end[keep]


LINK_MODELS = MappingProxyType({"maxmin": MaxMinLinks, "fifo": FifoLinks})
"""Name -> link model class."""
