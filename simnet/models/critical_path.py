"""The critical-path model of any schedule: the longest path through its transfers without contention."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from simnet.links import route_figures
from simnet.network import Network
from simnet.schedule import Schedule

__all__ = ["critical_path_finish_s", "critical_path_time"]


def _pair_costs(network: Network, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Route latency and inverse bottleneck bandwidth of the distinct (src, dst) pairs (network endpoints),
    and the pair of every transfer.

    Latencies are summed link by link along the route, as :meth:`Network.route_latency_s`
    sums them; a pair ``src == dst`` has no links, latency 0 and inverse bandwidth 0. Pairs are
    routed in order of source, so that the router's search from one source serves all its pairs.
    """
    if len(src) == 0:
        return np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64)
    size = int(max(src.max(), dst.max())) + 1
    keys = src.astype(np.int64)
    keys *= size
    keys += dst
    if size * size <= 4 * len(keys) + (1 << 20):
        present = np.bincount(keys, minlength=size * size) > 0
        pairs = np.flatnonzero(present)
        slot = np.cumsum(present) - 1
        inverse = slot[keys]
        order = np.arange(len(pairs))
    else:
        import pandas as pd

        inverse, pairs = pd.factorize(keys)
        order = np.argsort(pairs)
    del keys
    routes = network.route_table(pairs[order] // size, pairs[order] % size)
    latency, rate, _, _ = route_figures(routes, network.latency_s, network.bandwidth_Bps)
    inverse_bw = 1.0 / rate
    pair_latency, pair_inverse_bw = np.empty(len(routes)), np.empty(len(routes))
    pair_latency[order], pair_inverse_bw[order] = latency, inverse_bw
    return pair_latency, pair_inverse_bw, inverse


def critical_path_finish_s(
    network: Network, schedule: Schedule, *, gamma_s_per_byte: float | Sequence[float] = 0.0,
    overhead_s: float = 0.0, start_offset_s: Sequence[float] | None = None, slowdown: Sequence[float] | None = None,
) -> np.ndarray:
    """Finishing instant of every transfer without contention, seconds.

    Transfer ``i`` starts when its last dependency finishes, or at its source's
    start offset if that is later, and takes ``o s[src] + d_i + α_i + n_i β_i``
    (software overhead times the source's slowdown, protocol delay, route latency,
    wire bytes times inverse bottleneck bandwidth, at a switch endpoint's reduce
    efficiency; nothing for a copy between two buffers of one rank), plus
    ``n_i γ[dst] s[dst]`` for a reduction (payload bytes; none at a switch): the
    costs :func:`simnet.engine.simulate` charges with the same options.
    Dependencies point to earlier transfers, so the
    schedule is cut into consecutive blocks whose dependencies all lie in earlier
    blocks, and each block is one vectorized step. Per-transfer arrays are made
    once and updated in place (a schedule of tens of millions of transfers is
    bound by memory traffic).

    Parameters
    ----------
    network : Network
        Supplies routes.
    schedule : Schedule
        Any schedule.
    gamma_s_per_byte : float or sequence of float, optional
        Reduction cost γ of every rank, or per rank, seconds per byte.
    overhead_s : float, optional
        Software overhead paid by every transfer before it enters the network, seconds.
    start_offset_s : sequence of float, optional
        Per rank, the instant it starts, seconds (default 0).
    slowdown : sequence of float, optional
        Per rank, a factor multiplying the overhead of the transfers it sends and γ of those it reduces.
    """
    count = len(schedule)
    if count == 0:
        return np.zeros(0)
    columns = schedule.columns
    costs = _RankCosts(schedule, gamma_s_per_byte, overhead_s, start_offset_s, slowdown)
    if count < _OVERLAPPED:
        return _finish_s(network, schedule, costs, _blocks(columns.deps, columns.dep_offsets))
    with ThreadPoolExecutor(max_workers=1) as pool:
        blocks = pool.submit(_blocks, columns.deps, columns.dep_offsets)
        return _finish_s(network, schedule, costs, blocks)


class _RankCosts:
    """Per endpoint (ranks, then switch endpoints): γ, overhead and start offset, as the engine charges them."""

    def __init__(self, schedule: Schedule, gamma_s_per_byte, overhead_s: float, start_offset_s, slowdown) -> None:
        ranks, switches = schedule.nranks, len(schedule.switches)

        def per_rank(values, default: float) -> np.ndarray:
            values = np.broadcast_to(np.asarray(default if values is None else values, dtype=float), (ranks,))
            return np.concatenate([values, np.full(switches, default)])

        slow = per_rank(slowdown, 1.0)
        self.gamma = per_rank(gamma_s_per_byte, 0.0) * slow
        self.overhead = float(overhead_s) * slow
        self.offset = per_rank(start_offset_s, 0.0)


_OVERLAPPED = 1 << 20
"""Transfers from which the blocks are cut on a thread while the routes are computed."""

_PIECE = 1 << 18
"""Dependencies gathered at a time: a block is added in pieces of about this many (whole transfers)."""


def _blocks(deps: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Which transfers wait for others, and the starts of consecutive blocks whose dependencies all lie in
    earlier blocks (the last entry is the transfer count)."""
    count = len(offsets) - 1
    waits = offsets[1:] > offsets[:-1]
    last_dep = np.full(count, -1, dtype=np.int64)
    if len(deps):
        last_dep[waits] = np.maximum.reduceat(deps, offsets[:-1][waits])
    reach = np.maximum.accumulate(last_dep)
    del last_dep
    cuts = [0]
    while cuts[-1] < count:
        start = cuts[-1]
        cuts.append(max(int(np.searchsorted(reach, start, side="left")), start + 1))
    return waits, cuts


def _finish_s(network: Network, schedule: Schedule, costs: _RankCosts, blocks) -> np.ndarray:
    """:func:`critical_path_finish_s` given the blocks of :func:`_blocks` (or a future of them)."""
    columns = schedule.columns
    src, dst, nbytes, reduce = columns.src, columns.dst, columns.nbytes, columns.reduce
    gamma = costs.gamma
    endpoints, efficiency = network.place(np.arange(schedule.nranks), schedule.switches)
    if np.array_equal(endpoints, np.arange(len(endpoints))):
        pair_latency, pair_inverse_bw, pair = _pair_costs(network, src, dst)
    else:
        pair_latency, pair_inverse_bw, pair = _pair_costs(network, endpoints[src], endpoints[dst])
    duration = pair_latency[pair]
    if columns.delay_s.any():
        np.add(columns.delay_s, duration, out=duration)
    cost = pair_inverse_bw[pair]
    del pair
    cost *= nbytes / np.minimum(efficiency[src], efficiency[dst]) if schedule.switches else nbytes
    duration += cost
    del cost
    if gamma.any():
        duration += np.where(reduce, columns.payload * gamma[dst], 0.0)
    if costs.overhead.any():
        duration += costs.overhead[src]
    earliest = costs.offset[src] if costs.offset.any() else None

    deps, offsets = columns.deps, columns.dep_offsets
    waits, cuts = blocks.result() if isinstance(blocks, Future) else blocks
    finish = duration
    scratch = np.empty(min(_PIECE, len(deps)))
    for start, stop in zip(cuts[:-1], cuts[1:]):
        a = start
        while a < stop:
            lo = int(offsets[a])
            b = min(stop, max(a + 1, int(np.searchsorted(offsets, lo + _PIECE, side="right")) - 1))
            hi = int(offsets[b])
            ready = None
            if hi > lo:
                gathered = np.take(finish, deps[lo:hi], out=scratch[: hi - lo] if hi - lo <= len(scratch) else None)
                some = waits[a:b]
                if some.all():
                    ready = np.maximum.reduceat(gathered, offsets[a:b] - lo)
                else:
                    ready = np.zeros(b - a)
                    ready[some] = np.maximum.reduceat(gathered, offsets[a:b][some] - lo)
            if earliest is not None:
                ready = earliest[a:b] if ready is None else np.maximum(ready, earliest[a:b])
            if ready is not None:
                finish[a:b] += ready
            a = b
    return finish


def critical_path_time(
    network: Network, schedule: Schedule, gamma_s_per_byte: float | Sequence[float] = 0.0, *,
    overhead_s: float = 0.0, start_offset_s: Sequence[float] | None = None, slowdown: Sequence[float] | None = None,
) -> float:
    """Contention-free completion time of any schedule, seconds.

    The longest path through the transfer DAG, each transfer costing
    ``o + α + n β`` on its own route (``+ n γ`` for a reduction; see
    :func:`critical_path_finish_s`, which takes the options of
    :func:`simnet.engine.simulate` that change a transfer's cost). It ignores that
    transfers sharing a link slow each other down, so it is a lower bound of the
    simulated time with the same options, and equal to it when no transfer waits
    for another: none uses a link with another at the same time, and none queues
    behind an earlier transfer of its connection (same source, destination and
    channel), which the critical path does not model.
    """
    finish = critical_path_finish_s(network, schedule, gamma_s_per_byte=gamma_s_per_byte, overhead_s=overhead_s,
                                    start_offset_s=start_offset_s, slowdown=slowdown)
    return float(finish.max()) if len(finish) else 0.0
