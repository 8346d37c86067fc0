"""The discrete-event engine: run a schedule over a network and record a trace.

:func:`simulate` is the only entry point. It runs one SimPy process that keeps the
schedule's dependency bookkeeping and hands every transfer, once it is *issued*,
to a link-sharing model from :mod:`simnet.network`. The process sleeps until the
next instant at which the model or the engine has something to do, retires what
has finished, releases the transfers that were waiting for it and repeats.

The life of a transfer (all times in simulated seconds)::

    ready_s    its dependencies have finished and its sending rank has started
               (rank start offsets)
    issue_s    = ready_s + overhead_s * slowdown[src]  (software overhead α_sw)
    start_s    its first byte enters the network (later than issue_s only when a
               FIFO link makes it queue)
    arrive_s   its last byte has arrived
    end_s      = arrive_s + nbytes * gamma_s_per_byte[dst] * slowdown[dst] for a
               "reduce" transfer (the reduction γ), = arrive_s for a "copy"

Reductions are not serialized with other work of the rank: the convention shared
with the algorithms is that a reduce transfer's dependants may start ``nbytes γ``
after its last byte arrives. Transfers issued at the same instant are submitted in
schedule order, so a run is deterministic bit for bit. The engine knows neither
YAML nor plots, and adding an algorithm never touches it.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
import simpy

from simnet.errors import SimnetError
from simnet.network import LINK_MODELS, Network
from simnet.schedule import Schedule
from simnet.speed import gc_paused

__all__ = ["Trace", "simulate"]


@dataclass(frozen=True)
class Trace:
    """What happened in one simulated run; times are simulated seconds.

    Attributes
    ----------
    schedule : Schedule
        The schedule that ran.
    network : Network
        The network it ran on.
    model : str
        Link-sharing model (a key of :data:`simnet.network.LINK_MODELS`).
    ready_s, issue_s, start_s, arrive_s, end_s : numpy.ndarray
        Per transfer: when it could be issued, when it entered the link model,
        when its first byte entered the network, when its last byte arrived and
        when it completed (see :mod:`simnet.engine`).
    blocked_by : numpy.ndarray
        Per transfer, the link it queued for before starting, ``-1`` if none.
    usage : tuple of numpy.ndarray
        Per-link drain segments ``(link, transfer, start_s, end_s, rate_Bps)``
        (computed from the link model on first access).
    bottlenecks : tuple of dict
        Per transfer, ``{link: seconds}`` during which that link limited its rate
        (computed from the link model on first access).
    """

    schedule: Schedule
    network: Network
    model: str
    ready_s: np.ndarray
    issue_s: np.ndarray
    start_s: np.ndarray
    arrive_s: np.ndarray
    end_s: np.ndarray
    blocked_by: np.ndarray
    _links: object = field(repr=False, compare=False)

    @cached_property
    def usage(self) -> tuple[np.ndarray, ...]:
        """Per-link drain segments: arrays ``(link, transfer, start_s, end_s, rate_Bps)``."""
        return self._links.usage()

    @cached_property
    def bottlenecks(self) -> tuple[dict[int, float], ...]:
        """Per transfer, ``{link: seconds}`` during which that link limited its rate."""
        limits = self._links.bottlenecks()
        return tuple(
            {int(k): float(v) for k, v in limits.get(i, {}).items()} for i in range(len(self.end_s))
        )

    @property
    def time_s(self) -> float:
        """Completion time of the collective (last transfer's end), seconds."""
        return float(self.end_s.max()) if len(self.end_s) else 0.0

    def transfers(self) -> pd.DataFrame:
        """One row per transfer.

        Columns: ``transfer, src, dst, chunk, nbytes, op, stage, hops, ready_s,
        issue_s, start_s, arrive_s, end_s, duration_s`` (``end_s - ready_s``);
        ``chunk`` is the first chunk carried. Schedules of sparse payloads add
        ``nnz`` (nonzeros carried), ``dense`` (sent in dense form) and ``merged``
        (how many ranks' vectors the message sums).
        """
        transfers = list(self.schedule.transfers)
        columns = self.schedule.columns
        sparse = any(t.nnz is not None for t in transfers)
        frame = pd.DataFrame(
            {
                "transfer": np.arange(len(transfers)),
                "src": columns.src,
                "dst": columns.dst,
                "chunk": [t.chunks[0] for t in transfers],
                "nbytes": [t.nbytes for t in transfers],
                "op": [t.op for t in transfers],
                "stage": [t.stage for t in transfers],
                "hops": [len(route) for route in _routes(self.network, columns.src, columns.dst)],
                "ready_s": self.ready_s,
                "issue_s": self.issue_s,
                "start_s": self.start_s,
                "arrive_s": self.arrive_s,
                "end_s": self.end_s,
                "duration_s": self.end_s - self.ready_s,
            }
        )
        if sparse:
            for column in ("nnz", "dense", "merged"):
                frame[column] = [getattr(t, column) for t in transfers]
        return frame

    def _sweep(self) -> tuple[np.ndarray, ...]:
        link, _, start, end, rate = self.usage
        keep = end > start
        link, start, end, rate = link[keep], start[keep], end[keep], rate[keep]
        links = np.concatenate([link, link])
        times = np.concatenate([start, end])
        delta = np.concatenate([np.ones(len(link), dtype=int), -np.ones(len(link), dtype=int)])
        rates = np.concatenate([rate, -rate])
        order = np.lexsort((delta, times, links))
        return links[order], times[order], np.cumsum(delta[order]), rates[order]

    def links(self) -> pd.DataFrame:
        """One row per directed link: what it carried and how busy it was.

        Columns: ``link, src, dst, tier, bandwidth_Bps, bytes, busy_s, utilization,
        load, peak_flows``. ``bytes`` counts every transfer routed over the link;
        ``busy_s`` is the time during which at least one transfer drained bytes
        through it (latency phases do not count); ``utilization = busy_s / time_s``;
        ``load = bytes / (bandwidth_Bps * time_s)`` is the fraction of its capacity
        used over the run; ``peak_flows`` is the largest number of transfers
        draining through it at once.
        """
        net = self.network
        count = len(net.links)
        carried = np.zeros(count)
        for t in self.schedule.transfers:
            for link in net.route(t.src, t.dst):
                carried[link] += t.nbytes
        links, times, active, _ = self._sweep()
        same = links[:-1] == links[1:]
        busy_mask = same & (active[:-1] > 0)
        busy = np.bincount(links[:-1][busy_mask], weights=np.diff(times)[busy_mask], minlength=count)
        peak = np.zeros(count, dtype=int)
        np.maximum.at(peak, links, active)
        makespan = self.time_s
        frame = net.links_frame()[["link", "src", "dst", "tier", "bandwidth_Bps"]].copy()
        frame["bytes"] = carried
        frame["busy_s"] = busy
        frame["utilization"] = busy / makespan if makespan > 0 else 0.0
        frame["load"] = carried / (net.bandwidth_Bps * makespan) if makespan > 0 else 0.0
        frame["peak_flows"] = peak
        return frame

    def timeline(self) -> pd.DataFrame:
        """Utilization of every link over time, piecewise constant, one row per busy interval.

        Columns: ``link, src, dst, tier, start_s, end_s, flows, rate_Bps,
        utilization`` (``rate_Bps / bandwidth_Bps``). Between two rows of a link
        that do not touch, the link is idle. ``rate_Bps`` is the sum of the rates of
        the ``flows`` transfers draining through the link in ``[start_s, end_s)``.
        """
        links, times, active, rates = self._sweep()
        frame = pd.DataFrame({"link": links, "start_s": times, "flows": active, "rate_Bps": rates})
        frame["rate_Bps"] = frame.groupby("link")["rate_Bps"].cumsum()
        frame["end_s"] = frame.groupby("link")["start_s"].shift(-1)
        frame = frame[(frame["flows"] > 0) & (frame["end_s"] > frame["start_s"])]
        info = self.network.links_frame()[["link", "src", "dst", "tier", "bandwidth_Bps"]]
        frame = frame.merge(info, on="link", how="left")
        frame["utilization"] = frame["rate_Bps"] / frame["bandwidth_Bps"]
        columns = ["link", "src", "dst", "tier", "start_s", "end_s", "flows", "rate_Bps", "utilization"]
        return frame[columns].reset_index(drop=True)

    def critical_path(self) -> pd.DataFrame:
        """The chain of waits that determined the completion time, as contiguous segments.

        Starting from the last-finishing transfer (lowest index on ties), each
        transfer's life is cut into segments, and the walk continues with the
        dependency that finished last (the one that released it), until a
        transfer with no dependency. The segments tile ``[0, time_s]``:

        ``start_offset``
            its rank had not started yet (``ready_s`` later than its dependencies);
        ``overhead``
            software overhead, ``[ready_s, issue_s]``;
        ``wait``
            queued for a busy link (FIFO), ``[issue_s, start_s]``: tier of that link;
        ``latency``
            route latency, split by the tier of each link's latency;
        ``drain``
            bytes draining, split among the links that limited the transfer's rate
            in proportion to how long each did (the bottleneck): their tiers;
        ``reduction``
            the reduction γ, ``[arrive_s, end_s]``.

        Columns: ``transfer, src, dst, kind, tier, start_s, end_s, duration_s``
        (``tier`` repeats ``kind`` for segments not spent on a link), in time order.
        Split segments of one kind share ``start_s``/``end_s`` and divide ``duration_s``.
        """
        rows: list[tuple] = []
        if len(self.end_s) == 0:
            return pd.DataFrame(
                columns=["transfer", "src", "dst", "kind", "tier", "start_s", "end_s", "duration_s"]
            )
        net = self.network
        transfers = self.schedule.transfers
        index = int(np.argmax(self.end_s))
        while True:
            t = transfers[index]
            route = net.route(t.src, t.dst)
            latency = sum(net.latency_s[link] for link in route)
            drain_from = self.start_s[index] + latency
            pieces = [("reduction", {"reduction": 1.0}, self.arrive_s[index], self.end_s[index])]
            limits = self.bottlenecks[index]
            total = sum(limits.values())
            drain: dict[str, float] = {}
            for link, seconds in limits.items():
                drain[net.tiers[link]] = drain.get(net.tiers[link], 0.0) + (seconds / total if total > 0 else 1.0)
            pieces.append(("drain", drain, drain_from, self.arrive_s[index]))
            by_tier: dict[str, float] = {}
            for link in route:
                by_tier[net.tiers[link]] = by_tier.get(net.tiers[link], 0.0) + net.latency_s[link]
            shares = {tier: value / latency for tier, value in by_tier.items()} if latency > 0 else {}
            pieces.append(("latency", shares, self.start_s[index], drain_from))
            blocker = int(self.blocked_by[index])
            waited_on = net.tiers[blocker] if blocker >= 0 else "wait"
            pieces.append(("wait", {waited_on: 1.0}, self.issue_s[index], self.start_s[index]))
            pieces.append(("overhead", {"overhead": 1.0}, self.ready_s[index], self.issue_s[index]))
            released = max(t.deps, key=lambda d: (self.end_s[d], -d)) if t.deps else None
            released_s = self.end_s[released] if released is not None else 0.0
            pieces.append(("start_offset", {"start_offset": 1.0}, released_s, self.ready_s[index]))
            for kind, shares, begin, end in pieces:
                duration = float(end - begin)
                if duration <= 0:
                    continue
                for tier, share in sorted(shares.items()):
                    rows.append((index, t.src, t.dst, kind, tier, float(begin), float(end), duration * share))
            if released is None:
                break
            index = released
        rows.reverse()
        return pd.DataFrame(rows, columns=["transfer", "src", "dst", "kind", "tier", "start_s", "end_s", "duration_s"])

    def tiers(self) -> pd.DataFrame:
        """Time along the critical path by tier: ``tier, time_s, fraction``.

        Tiers are the link tiers of the topology (``"nvlink"``, ``"pcie"``, ``"ib"``,
        ...) plus ``"overhead"``, ``"reduction"``, ``"start_offset"`` and ``"wait"``
        for time not spent on a link; see :meth:`critical_path` for the attribution
        rule. ``time_s`` sums to :attr:`time_s`. Sorted by decreasing time.
        """
        path = self.critical_path()
        frame = path.groupby("tier", as_index=False)["duration_s"].sum().rename(columns={"duration_s": "time_s"})
        frame["fraction"] = frame["time_s"] / self.time_s if self.time_s > 0 else 0.0
        return frame.sort_values(["time_s", "tier"], ascending=[False, True]).reset_index(drop=True)


def _routes(network: Network, src: np.ndarray, dst: np.ndarray) -> list[tuple[int, ...]]:
    """Route of every transfer, looked up once per distinct (src, dst) pair."""
    if len(src) == 0:
        return []
    pairs, inverse = np.unique(src * network.size + dst, return_inverse=True)
    distinct = [network.route(*divmod(key, network.size)) for key in pairs.tolist()]
    return [distinct[k] for k in inverse.tolist()]


def _finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _per_rank(value: object, nranks: int, path: str, *, default: float, positive: bool = False) -> np.ndarray:
    """Validate a per-rank sequence of finite numbers (≥ 0, or > 0 if `positive`)."""
    bound = "> 0" if positive else "≥ 0"
    if value is None:
        return np.full(nranks, default)
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence | np.ndarray):
        raise SimnetError(f"must be a sequence of {nranks} numbers {bound}, one per rank, got {value!r}", path=path)
    if len(value) != nranks:
        raise SimnetError(f"must have one value per rank ({nranks}), got {len(value)}", path=path)
    for rank, item in enumerate(value):
        item = item.item() if isinstance(item, np.generic) else item
        if not _finite(item) or item < 0 or (positive and item == 0):
            raise SimnetError(f"rank {rank}: must be a finite number {bound}, got {item!r}", path=path)
    return np.array(value, dtype=float)


@gc_paused()
def simulate(
    network: Network,
    schedule: Schedule,
    *,
    model: str = "maxmin",
    overhead_s: float = 0.0,
    gamma_s_per_byte: float | Sequence[float] = 0.0,
    start_offset_s: Sequence[float] | None = None,
    slowdown: Sequence[float] | None = None,
) -> Trace:
    """Run `schedule` on `network` and return its :class:`Trace`.

    Parameters
    ----------
    network : Network
        Where the ranks live; must have at least ``schedule.nranks`` ranks
        (schedule rank ``i`` runs on network rank ``i``). Per-tier efficiency
        factors are a property of the network (``Network(graph, tier_efficiency=...)``).
    schedule : Schedule
        What to send.
    model : {"maxmin", "fifo"}, optional
        Link-sharing model (see :mod:`simnet.network`); max-min fair sharing by default.
    overhead_s : float, optional
        Software overhead α_sw paid by every transfer, seconds, before it enters the
        network (e.g. a collective library's per-message base latency).
    gamma_s_per_byte : float or sequence of float, optional
        Reduction cost γ, seconds per byte, of every rank or of each rank: a
        ``"reduce"`` transfer completes ``nbytes γ[dst]`` after its last byte arrives.
    start_offset_s : sequence of float, optional
        Per rank, the instant (seconds) before which it issues no transfer (skew).
    slowdown : sequence of float, optional
        Per rank, a factor > 0 (a straggler has > 1) multiplying the overhead of the
        transfers it sends and the γ of the reductions it performs.

    Returns
    -------
    Trace
        Per-transfer times; ``trace.time_s`` is the collective's completion time.

    Raises
    ------
    SimnetError
        For an unknown model, a schedule larger than the network, or an overhead,
        γ, offset or slowdown that is not finite and non-negative (``path`` names it).
    """
    if model not in LINK_MODELS:
        raise SimnetError(f"network model must be one of {sorted(LINK_MODELS)}, got {model!r}", path="network.model")
    if schedule.nranks > network.size:
        raise SimnetError(
            f"the schedule needs {schedule.nranks} ranks but the network has only {network.size} GPUs"
        )
    nranks = schedule.nranks
    if not _finite(overhead_s) or overhead_s < 0:
        raise SimnetError(f"must be a finite time ≥ 0 seconds, got {overhead_s!r}", path="network.overhead")
    if _finite(gamma_s_per_byte):
        if gamma_s_per_byte < 0:
            raise SimnetError(f"must be ≥ 0 seconds per byte, got {gamma_s_per_byte!r}", path="network.gamma")
        gamma = np.full(nranks, float(gamma_s_per_byte))
    else:
        gamma = _per_rank(gamma_s_per_byte, nranks, "network.gamma", default=0.0)
    offset = _per_rank(start_offset_s, nranks, "network.start_offset", default=0.0)
    slow = _per_rank(slowdown, nranks, "network.stragglers", default=1.0, positive=True)

    count = len(schedule)
    links = LINK_MODELS[model](network)
    columns = schedule.columns
    routes = _routes(network, columns.src, columns.dst)
    nbytes = columns.nbytes.tolist()
    src = columns.src.tolist()
    overhead = (overhead_s * slow[columns.src]).tolist()
    reduction = np.where(columns.reduce, columns.nbytes * gamma[columns.dst] * slow[columns.dst], 0.0).tolist()
    offset = offset.tolist()
    waiting = np.diff(columns.dep_offsets).tolist()
    order = np.argsort(columns.deps, kind="stable")
    dependents = np.repeat(np.arange(count), np.diff(columns.dep_offsets))[order].tolist()
    first_dependent = np.searchsorted(columns.deps[order], np.arange(count + 1)).tolist()
    ready_s = [math.nan] * count
    issue_s = [math.nan] * count
    arrive_s = [math.nan] * count
    end_s = [math.nan] * count
    pending: list[tuple[float, int]] = []
    heappush, heappop = heapq.heappush, heapq.heappop

    env = simpy.Environment()
    submit_many, next_time_s, pop_finished = links.submit_many, links.next_time_s, links.pop_finished

    def run():
        now = 0.0
        done: list[int] = []
        released = [i for i in range(count) if waiting[i] == 0]
        issued: list[int] = []
        while True:
            for index in done:
                end_s[index] = now
                for k in range(first_dependent[index], first_dependent[index + 1]):
                    child = dependents[k]
                    waiting[child] -= 1
                    if waiting[child] == 0:
                        released.append(child)
            for index in released:
                ready = offset[src[index]]
                if now > ready:
                    ready = now
                ready_s[index] = ready
                issue = ready + overhead[index]
                issue_s[index] = issue
                if issue <= now:
                    issued.append(index)
                else:
                    heappush(pending, (issue, index))
            issued.sort()
            submit_many(now, issued, routes, nbytes)
            now = next_time_s()
            if pending and pending[0][0] < now:
                now = pending[0][0]
            if now == math.inf:
                return
            yield env.timeout(max(0.0, now - env.now))
            done, released, issued = [], [], []
            for i in pop_finished(now):
                arrive_s[i] = now
                reduced = now + reduction[i]
                if reduced > now:
                    heappush(pending, (reduced, -1 - i))
                else:
                    done.append(i)
            while pending and pending[0][0] <= now:
                key = heappop(pending)[1]
                if key < 0:
                    done.append(-1 - key)
                else:
                    issued.append(key)

    env.process(run())
    env.run()
    started = links.started_s
    start_s = np.fromiter((started[i] for i in range(count)), dtype=float, count=count)
    blocked = links.blocked_by
    blocked_by = np.full(count, -1, dtype=int)
    if blocked:
        blocked_by[np.fromiter(blocked.keys(), dtype=int)] = np.fromiter(blocked.values(), dtype=int)
    return Trace(
        schedule=schedule,
        network=network,
        model=model,
        ready_s=np.array(ready_s, dtype=float),
        issue_s=np.array(issue_s, dtype=float),
        start_s=start_s,
        arrive_s=np.array(arrive_s, dtype=float),
        end_s=np.array(end_s, dtype=float),
        blocked_by=blocked_by,
        _links=links,
    )
