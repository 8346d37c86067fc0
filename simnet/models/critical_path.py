"""The critical-path model of any schedule: the longest path through its transfers without contention."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from simnet.network import Network
from simnet.schedule import Schedule

__all__ = ["critical_path_finish_s", "critical_path_time"]


def _pair_costs(network: Network, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Route latency and inverse bottleneck bandwidth of every (src, dst) (network endpoints)."""
    if len(src) == 0:
        return np.zeros(0), np.zeros(0)
    size = int(max(src.max(), dst.max())) + 1
    keys = src.astype(np.int64) * size + dst
    if size * size <= 4 * len(keys) + (1 << 20):
        present = np.bincount(keys, minlength=size * size) > 0
        pairs = np.flatnonzero(present)
        slot = np.cumsum(present) - 1
        inverse = slot[keys]
    else:
        pairs, inverse = np.unique(keys, return_inverse=True)
    latency = np.zeros(len(pairs))
    inverse_bw = np.zeros(len(pairs))
    for k, key in enumerate(pairs.tolist()):
        s, d = divmod(key, size)
        if s != d:
            latency[k] = network.route_latency_s(s, d)
            inverse_bw[k] = 1.0 / network.route_bandwidth_Bps(s, d)
    return latency[inverse], inverse_bw[inverse]


def critical_path_finish_s(
    network: Network, schedule: Schedule, *, gamma_s_per_byte: float | Sequence[float] = 0.0
) -> np.ndarray:
    """Finishing instant of every transfer without contention, seconds.

    Transfer ``i`` starts when its last dependency finishes and takes
    ``d_i + α_i + n_i β_i`` on its own route (protocol delay, route latency, wire
    bytes times inverse bottleneck bandwidth, at a switch endpoint's reduce
    efficiency; nothing for a copy between two buffers of one rank), plus
    ``n_i γ[dst]`` for a reduction (payload bytes; none at a switch). Dependencies point to earlier transfers, so the
    schedule is cut into consecutive blocks whose dependencies all lie in earlier
    blocks, and each block is one vectorized step.

    Parameters
    ----------
    network : Network
        Supplies routes.
    schedule : Schedule
        Any schedule.
    gamma_s_per_byte : float or sequence of float, optional
        Reduction cost γ of every rank, or per rank, seconds per byte.
    """
    count = len(schedule)
    if count == 0:
        return np.zeros(0)
    columns = schedule.columns
    src, dst, nbytes, reduce = columns.src, columns.dst, columns.nbytes, columns.reduce
    no_deps = np.diff(columns.dep_offsets) == 0
    ndeps = np.where(no_deps, 1, np.diff(columns.dep_offsets))
    deps = np.insert(columns.deps.astype(np.int64), columns.dep_offsets[:-1][no_deps], count)
    gamma = np.concatenate([np.broadcast_to(np.asarray(gamma_s_per_byte, dtype=float), (schedule.nranks,)),
                            np.zeros(len(schedule.switches))])
    endpoints, efficiency = network.place(np.arange(schedule.nranks), schedule.switches)
    latency, inverse_bw = _pair_costs(network, endpoints[src], endpoints[dst])
    wire = nbytes / np.minimum(efficiency[src], efficiency[dst]) if schedule.switches else nbytes
    duration = (columns.delay_s + latency + wire * inverse_bw
                + np.where(reduce, columns.payload * gamma[dst], 0.0))

    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(ndeps, out=offsets[1:])
    last_dep = np.maximum.reduceat(np.where(deps == count, -1, deps), offsets[:-1])
    reach = np.maximum.accumulate(last_dep)
    finish = np.zeros(count + 1)
    start = 0
    while start < count:
        stop = int(np.searchsorted(reach, start, side="left"))
        stop = max(stop, start + 1)
        lo, hi = offsets[start], offsets[stop]
        ready = np.maximum.reduceat(finish[deps[lo:hi]], offsets[start:stop] - lo)
        finish[start:stop] = ready + duration[start:stop]
        start = stop
    return finish[:count]


def critical_path_time(
    network: Network, schedule: Schedule, gamma_s_per_byte: float | Sequence[float] = 0.0
) -> float:
    """Contention-free completion time of any schedule, seconds.

    The longest path through the transfer DAG, each transfer costing
    ``α + n β`` on its own route (``+ n γ`` for a reduction; see
    :func:`critical_path_finish_s`). It ignores that transfers sharing a link
    slow each other down, so it is a lower bound of the simulated time, and equal
    to it when no two transfers use a link at the same time.
    """
    finish = critical_path_finish_s(network, schedule, gamma_s_per_byte=gamma_s_per_byte)
    return float(finish.max()) if len(finish) else 0.0
