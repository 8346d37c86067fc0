"""Several collectives at once on one fabric: jobs, communicator groups, background flows, and who slowed whom.

A :class:`Job` runs one collective on each of its *communicators* (lists of network
ranks), all at once, ``repeat`` times each (each communicator starts its next
repetition when its previous one ends), from ``start_s``; or it is background
traffic, :class:`Flows`: rounds of plain flows in a pattern at a given load.
:func:`run_jobs` runs all jobs in one SimPy environment over one
:class:`~simnet.engine.Simulation`, so they share its links, then runs each job
alone on the same fabric, and reports (:class:`JobsResult`):

* per job its time, its time alone and the slowdown;
* a timeline of every collective (or round of flows) of every communicator;
* *interference*: for every job, link and other job, how long the job was held back
  by that link (``held_s``: a transfer of the job drained at the rate the link set,
  or waited for it; see :attr:`simnet.engine.Trace.limits`), how much of that time
  the other job had traffic on the link (``shared_s``), and how many bytes the other
  job pushed through the link while the job was held back there (``other_bytes``).

Placement (:func:`place`) picks a job's GPUs among those earlier jobs left free;
:func:`communicators` cuts a job's ranks into communicator groups, innermost level
first (``{tp: 8, dp: rest}``: every 8 consecutive ranks all-reduce together, and the
ranks with the same position in their group of 8 form the data-parallel groups).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import simpy

from simnet import engine
from simnet.algorithms.alltoall import flows_schedule
from simnet.analysis import JOB_COLUMNS, busbw_factor, routing_cells
from simnet.engine import Simulation, Trace
from simnet.errors import SimnetError
from simnet.network import Network
from simnet.schedule import Schedule
from simnet.speed import gc_paused
from simnet.traffic import PATTERNS, cyclic_permutation, pattern_targets

__all__ = [
    "PLACEMENTS",
    "Flows",
    "Job",
    "JobsResult",
    "place",
    "communicators",
    "run_jobs",
    "interference",
    "INTERFERENCE_COLUMNS",
    "TIMELINE_COLUMNS",
]

PLACEMENTS = ("contiguous", "strided", "random", "shuffled", "rail_aligned")
"""Ways :func:`place` picks a job's GPUs (an explicit list of ranks is the other way)."""

INTERFERENCE_COLUMNS = ("job", "other", "link", "src", "dst", "tier", "held_s", "shared_s", "other_bytes")
TIMELINE_COLUMNS = ("job", "communicator", "iteration", "start_s", "end_s", "time_s")


@dataclass(frozen=True)
class Flows:
    """Background traffic: plain flows, one per rank and round, at a given load.

    In every round each rank of the job sends `message_bytes` to its destination in
    `pattern` (see :func:`simnet.traffic.pattern_targets`), at its own phase within
    the round (drawn once with the seed, uniform over the round), as independent
    periodic sources would. If a round's busiest link
    needs ``T`` seconds for its bytes (``max over links of bytes / bandwidth``), the
    round lasts ``T / load``: the background alone keeps its busiest link busy a
    fraction `load` of the time (on a non-blocking fabric, a permutation at load
    ``x`` sends at ``x`` times each GPU's injection bandwidth). Rounds do not wait
    for each other: the load is offered, whatever the network does with it. They
    stop starting after `duration_s`, or, without one, once no other job has
    anything left to run. A flow's time is its completion time, from its phase to
    its last byte.

    Parameters
    ----------
    pattern : {"permutation", "random"}
        Destinations (:data:`simnet.traffic.PATTERNS`).
    load : float
        Offered load as a fraction of ``B``, in (0, 1].
    message_bytes : int
        Bytes of every flow.
    seed : int, optional
        Seed of the permutation or of the random destinations.
    duration_s : float, optional
        How long rounds keep starting, seconds.
    """

    pattern: str = "permutation"
    load: float = 0.5
    message_bytes: int = 2**20
    seed: int = 0
    duration_s: float | None = None

    def __post_init__(self) -> None:
        if self.pattern not in PATTERNS:
            raise SimnetError(f"must be one of {list(PATTERNS)}, got {self.pattern!r}", path="pattern")
        if not (isinstance(self.load, (int, float)) and 0 < self.load <= 1):
            raise SimnetError(f"must be a fraction in (0, 1], got {self.load!r}", path="load")
        if not isinstance(self.message_bytes, int) or isinstance(self.message_bytes, bool) or self.message_bytes < 1:
            raise SimnetError(f"must be a whole number of bytes ≥ 1, got {self.message_bytes!r}", path="message_bytes")
        if self.duration_s is not None and not (math.isfinite(self.duration_s) and self.duration_s > 0):
            raise SimnetError(f"must be a finite time > 0 seconds, got {self.duration_s!r}", path="duration_s")


@dataclass(frozen=True)
class Job:
    """One job: a collective on each of its communicators, or background flows.

    Parameters
    ----------
    name : str
        Name in reports.
    communicators : tuple of tuple of int
        Network ranks of each communicator (schedule rank ``i`` runs on ``communicator[i]``);
        a :class:`Flows` job has one, the ranks that send.
    schedule : Schedule, optional
        What every communicator runs (``schedule.nranks`` = communicator size).
    flows : Flows, optional
        Background traffic instead of a collective.
    start_s : float, optional
        When the job starts, seconds.
    repeat : int, optional
        Collectives each communicator runs one after the other (default 1).
    """

    name: str
    communicators: tuple[tuple[int, ...], ...]
    schedule: Schedule | None = None
    flows: Flows | None = None
    start_s: float = 0.0
    repeat: int = 1

    def __post_init__(self) -> None:
        if (self.schedule is None) == (self.flows is None):
            raise SimnetError(f"job {self.name!r}: give a schedule or flows, not both or neither", path="schedule")
        comms = tuple(tuple(int(r) for r in c) for c in self.communicators)
        object.__setattr__(self, "communicators", comms)
        if not comms or any(len(set(c)) != len(c) or len(c) < 2 for c in comms):
            raise SimnetError(f"job {self.name!r}: every communicator needs at least 2 distinct ranks",
                              path="communicators")
        if self.schedule is not None and any(len(c) != self.schedule.nranks for c in comms):
            raise SimnetError(f"job {self.name!r}: communicators of {sorted({len(c) for c in comms})} ranks run a "
                              f"schedule of {self.schedule.nranks}", path="communicators")
        if self.flows is not None and len(comms) != 1:
            raise SimnetError(f"job {self.name!r}: background flows take one set of ranks", path="communicators")
        if not (isinstance(self.start_s, (int, float)) and math.isfinite(self.start_s) and self.start_s >= 0):
            raise SimnetError(f"must be a finite time ≥ 0 seconds, got {self.start_s!r}", path="start_s")
        if not isinstance(self.repeat, int) or isinstance(self.repeat, bool) or self.repeat < 1:
            raise SimnetError(f"must be an integer ≥ 1, got {self.repeat!r}", path="repeat")

    @property
    def ranks(self) -> tuple[int, ...]:
        """Every network rank of the job, sorted."""
        return tuple(sorted({r for c in self.communicators for r in c}))


def _attribute(network: Network, rank: int, names: Sequence[str], default):
    data = network.graph.nodes[network.ranks[rank]]
    return next((data[name] for name in names if name in data), default)


def place(network: Network, kind: str, count: int, *, taken: Sequence[int] = (), seed: int = 0,
          stride: int | None = None) -> tuple[int, ...]:
    """Pick `count` GPUs for a job among those not `taken`, in the job's rank order (the placement's order).

    Parameters
    ----------
    network : Network
        The fabric (GPU attributes ``host``, ``rail`` / ``local_rank`` are used when present).
    kind : {"contiguous", "strided", "random", "shuffled", "rail_aligned"}
        ``contiguous``: the first free GPUs, in rank order. ``strided``: every
        `stride`-th rank first: the job's ranks are the free GPUs ``r`` ordered by
        ``(r mod stride, r)`` (default stride: GPUs per host, so one GPU per server
        before a second one, and job ranks ``0 .. servers - 1`` sit on different
        servers). ``random``: a seeded uniform choice, in rank order (so all free
        GPUs are ``contiguous`` whatever the seed). ``shuffled``: the GPUs
        ``random`` picks with the same seed, in the order drawn, so the job's ranks
        are a seeded random permutation of them (of all free GPUs if `count` takes
        them all). ``rail_aligned``: rails first: the job's ranks are the free GPUs
        ordered by ``(rail, host, r)``, so that a job gets the same rails, hence the
        same NICs and rail switches, on every server it uses, and consecutive job
        ranks are the GPUs of one rail on successive servers.
    count : int
        GPUs wanted, ≥ 1.
    taken : sequence of int, optional
        GPUs of earlier jobs.
    seed : int, optional
        Seed of ``random`` and ``shuffled``.
    stride : int, optional
        Stride of ``strided`` (≥ 1).

    Returns
    -------
    tuple of int
        Network ranks in the job's rank order (the job's rank ``i`` is the ``i``-th):
        ascending for ``contiguous`` and ``random``, as ordered above otherwise.

    Raises
    ------
    SimnetError
        For an unknown kind, or fewer free GPUs than `count` (``path`` names the argument).
    """
    if kind not in PLACEMENTS:
        raise SimnetError(f"must be one of {list(PLACEMENTS)} or a list of ranks, got {kind!r}", path="placement")
    blocked = set(taken)
    free = np.array([r for r in range(network.size) if r not in blocked], dtype=np.int64)
    if not isinstance(count, int) or isinstance(count, bool) or count < 1 or count > len(free):
        raise SimnetError(f"asks for {count!r} GPUs but {len(free)} of {network.size} are free", path="ranks")
    if kind == "contiguous":
        chosen = free[:count]
    elif kind == "strided":
        if stride is None:
            hosts = [_attribute(network, r, ("host",), r) for r in range(network.size)]
            stride = max(1, network.size // max(1, len(set(hosts))))
        if not isinstance(stride, int) or isinstance(stride, bool) or stride < 1:
            raise SimnetError(f"must be an integer ≥ 1, got {stride!r}", path="stride")
        chosen = free[np.lexsort((free, free % stride))][:count]
    elif kind in ("random", "shuffled"):
        drawn = tuple(int(r) for r in np.random.default_rng(seed).choice(free, size=count, replace=False))
        return drawn if kind == "shuffled" else tuple(sorted(drawn))
    else:
        rails = np.array([_attribute(network, int(r), ("rail", "local_rank"), 0) for r in free])
        hosts = np.array([_attribute(network, int(r), ("host",), int(r)) for r in free])
        chosen = free[np.lexsort((free, hosts, rails))][:count]
    return tuple(int(r) for r in chosen)


def communicators(ranks: Sequence[int], groups: Mapping[str, int | str] | None = None
                  ) -> dict[str, tuple[tuple[int, ...], ...]]:
    """Cut a job's ranks into communicator groups, one level per entry of `groups`, innermost first.

    With sizes ``f1, f2, ...`` (their product the number of ranks; at most one
    ``"rest"``, which takes what is left), job rank ``j`` has coordinates
    ``c_i = (j // (f1 ... f_{i-1})) mod f_i``; the communicators of level ``i`` are the
    ranks that agree on every coordinate but ``c_i``, ordered by it. ``{tp: 8, dp: rest}``
    on 32 ranks gives four ``tp`` groups of 8 consecutive ranks and eight ``dp``
    groups of 4 ranks 8 apart.

    Parameters
    ----------
    ranks : sequence of int
        The job's network ranks, in job-rank order.
    groups : mapping of str to int or "rest", optional
        Level name -> group size (default: one communicator of every rank, named ``""``).

    Returns
    -------
    dict of str to tuple of tuple of int
        Level name -> its communicators (network ranks).

    Raises
    ------
    SimnetError
        When the sizes do not multiply to the number of ranks (``path`` names the level).

    Examples
    --------
    >>> communicators(range(6), {"tp": 2, "dp": "rest"})["dp"]
    ((0, 2, 4), (1, 3, 5))
    """
    ranks = [int(r) for r in ranks]
    if not groups:
        return {"": (tuple(ranks),)}
    rest = [name for name, size in groups.items() if size == "rest"]
    if len(rest) > 1:
        raise SimnetError("only one level may be 'rest'", path=rest[1])
    known = 1
    for name, size in groups.items():
        if size != "rest" and (not isinstance(size, int) or isinstance(size, bool) or size < 1):
            raise SimnetError(f"must be an integer ≥ 1 or 'rest', got {size!r}", path=name)
        known *= 1 if size == "rest" else size
    if len(ranks) % known or (not rest and known != len(ranks)):
        raise SimnetError(f"group sizes multiply to {known}, which does not "
                          f"{'divide' if rest else 'equal'} the job's {len(ranks)} ranks", path=next(iter(groups)))
    sizes = [len(ranks) // known if size == "rest" else size for size in groups.values()]
    shape = tuple(reversed(sizes))
    grid = np.array(ranks, dtype=np.int64).reshape(shape)
    result = {}
    for level, name in enumerate(groups):
        axis = len(sizes) - 1 - level
        moved = np.moveaxis(grid, axis, -1).reshape(-1, sizes[level])
        result[name] = tuple(tuple(int(r) for r in row) for row in moved)
    return result


@dataclass
class _Record:
    job: int
    communicator: int
    iteration: int
    trace: Trace


@dataclass
class _State:
    remaining: int
    records: list[_Record] = field(default_factory=list)
    rounds: dict[int, int] = field(default_factory=dict)


def _options(ranks: Sequence[int], overhead_s: float, gamma_s_per_byte: float, slowdown, start_offset_s) -> dict:
    picked = list(ranks)
    return {
        "ranks": picked,
        "overhead_s": overhead_s,
        "gamma_s_per_byte": gamma_s_per_byte,
        "slowdown": None if slowdown is None else [slowdown[r] for r in picked],
        "start_offset_s": None if start_offset_s is None else [start_offset_s[r] for r in picked],
    }


def _collective(env: simpy.Environment, sim: Simulation, state: _State, index: int, job: Job, which: int,
                options: dict):
    if job.start_s > 0:
        yield env.timeout(job.start_s)
    for iteration in range(job.repeat):
        trace = yield sim.run(job.schedule, **options)
        state.records.append(_Record(index, which, iteration, trace))
    state.remaining -= 1


def _busiest_s(network: Network, ranks: Sequence[int], targets: np.ndarray, message_bytes: int) -> float:
    """Seconds the busiest link needs for one round: ``max over links of bytes / bandwidth``."""
    placed = np.asarray(ranks, dtype=np.int64)
    routes = network.route_table(placed[:len(targets)], placed[targets])
    carried = np.bincount(routes.links, minlength=len(network.links)) * float(message_bytes)
    return float((carried / network.bandwidth_Bps).max())


def _background(env: simpy.Environment, sim: Simulation, state: _State, index: int, job: Job, options: dict,
                rounds: int | None):
    flows = job.flows
    ranks = job.communicators[0]
    n = len(ranks)
    rng = np.random.default_rng(flows.seed)
    phase = np.random.default_rng((flows.seed, 1)).uniform(0.0, 1.0, size=n)
    permutation = cyclic_permutation(n, flows.seed) if flows.pattern == "permutation" else None
    if job.start_s > 0:
        yield env.timeout(job.start_s)
    stop = job.start_s + flows.duration_s if flows.duration_s is not None else math.inf
    sizes = np.full(n, flows.message_bytes, dtype=np.int64)
    skew = np.zeros(n) if options["start_offset_s"] is None else np.asarray(options["start_offset_s"], dtype=float)
    count = 0
    while (count < rounds) if rounds is not None else (env.now < stop and (flows.duration_s is not None
                                                                          or state.remaining > 0)):
        if count == 0 or flows.pattern == "random":
            targets = pattern_targets(flows.pattern, n, rng, permutation)
            schedule = flows_schedule(n, np.arange(n), targets, sizes)
            period = _busiest_s(sim.network, ranks, targets, flows.message_bytes) / flows.load
        start = (skew + phase * period).tolist()
        done = sim.run(schedule, **(options | {"start_offset_s": start}))
        done.callbacks.append(lambda event, k=count: state.records.append(_Record(index, 0, k, event.value)))
        count += 1
        yield env.timeout(period)
    state.rounds[index] = count


def _transfers(jobs: Sequence[Job], rounds: Mapping[int, int] | None) -> int:
    """Transfers of `jobs`' collectives, and of one round of each background job (or of the `rounds` given)."""
    return sum(len(job.schedule) * len(job.communicators) * job.repeat if job.schedule is not None
               else len(job.ranks) * (1 if rounds is None else rounds.get(index, 1))
               for index, job in enumerate(jobs))


def _simulate(network: Network, jobs: Sequence[Job], settings: dict, per_rank: dict, compiled: bool,
              rounds: Mapping[int, int] | None = None) -> tuple[Simulation, _State]:
    """Run `jobs` together, with `compiled` in the compiled loop (:meth:`Simulation._drive`, the same times as
    SimPy's loop), or in SimPy's loop, where the compiled one meets an instant SimPy's clock would not land
    on as well."""
    if compiled:
        try:
            return _run(network, jobs, settings, per_rank, rounds, compiled=True)
        except engine._Unreachable:
            pass
    return _run(network, jobs, settings, per_rank, rounds, compiled=False)


def _run(network: Network, jobs: Sequence[Job], settings: dict, per_rank: dict, rounds: Mapping[int, int] | None,
         *, compiled: bool) -> tuple[Simulation, _State]:
    env = simpy.Environment()
    sim = Simulation(env, network, model=settings["model"], sharing=settings["sharing"])
    if compiled:
        sim._resumable()
    state = _State(remaining=sum(len(job.communicators) for job in jobs if job.schedule is not None))
    for index, job in enumerate(jobs):
        for which, members in enumerate(job.communicators):
            options = _options(members, **per_rank)
            if job.schedule is not None:
                env.process(_collective(env, sim, state, index, job, which, options))
            else:
                env.process(_background(env, sim, state, index, job, options,
                                        None if rounds is None else rounds.get(index)))
    if compiled:
        sim._drive()
    else:
        env.run()
    sim.close()
    state.records.sort(key=lambda r: (r.job, r.communicator, r.iteration))
    return sim, state


def _merge(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of intervals ``[start, end)`` as sorted disjoint intervals."""
    keep = end > start
    start, end = start[keep], end[keep]
    if not len(start):
        return start, end
    order = np.argsort(start, kind="stable")
    start, end = start[order], end[order]
    reach = np.maximum.accumulate(end)
    first = np.flatnonzero(np.concatenate(([True], start[1:] > reach[:-1])))
    return start[first], np.maximum.reduceat(end, first)


def _runs(keys: np.ndarray) -> np.ndarray:
    """The first position of every run of equal values in `keys`, and ``len(keys)`` last."""
    first = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1]))) if len(keys) else np.zeros(0, np.int64)
    return np.append(first, len(keys))


def _ranges(lo: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ranges ``lo[i] : lo[i] + counts[i]`` one after another: each element's ``i`` and its index."""
    owner = np.repeat(np.arange(len(counts)), counts)
    return owner, np.arange(len(owner)) + np.repeat(lo - (np.cumsum(counts) - counts), counts)


def _blocks(link: np.ndarray, job: np.ndarray, jobs: int) -> tuple[np.ndarray, np.ndarray]:
    """The runs of equal (link, job) in arrays sorted by both: each run's key ``link * jobs + job`` and
    :func:`_runs`."""
    key = link.astype(np.int64) * jobs + job
    first = _runs(key)
    return key[first[:-1]], first


def _merge_blocks(keys: np.ndarray, first: np.ndarray, start: np.ndarray, end: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_merge` of every block ``first[i]:first[i + 1]`` at once: the key of each merged interval's
    block, and the intervals, sorted by block then start.

    Within a block the running end is a running maximum of the ends' ranks offset by the block's number,
    which no end of an earlier block can reach, so it is that of the block alone, and exact."""
    block = np.repeat(np.arange(len(keys)), np.diff(first))
    keep = end > start
    block, start, end = block[keep], start[keep], end[keep]
    if not len(start):
        return keys[:0], start, end
    order = np.lexsort((start, block))
    block, start, end = block[order], start[order], end[order]
    values, rank = np.unique(end, return_inverse=True)
    reach = values[np.maximum.accumulate(block * len(values) + rank) - block * len(values)]
    opens = np.flatnonzero(np.concatenate(([True], (block[1:] != block[:-1]) | (start[1:] > reach[:-1]))))
    return keys[block[opens]], start[opens], np.maximum.reduceat(end, opens)


def _covered_blocks(starts: np.ndarray, ends: np.ndarray, lo: np.ndarray, hi: np.ndarray, block: np.ndarray,
                    a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per interval ``[a[i], b[i]]``: its length inside the disjoint sorted intervals ``[starts, ends)`` of block
    ``block[i]``, those at ``lo[block[i]]:hi[block[i]]`` (blocks one after the other, covering `starts`).

    Each block's intervals are measured from their own running sum of lengths, as if the block were alone, so
    every length is the same to the bit whichever other blocks are asked at once. Times are compared through
    their ranks among all of them, offset by the block (exact integers), so one search finds each interval's
    place within its own block.
    """
    if not len(starts):
        return np.zeros(len(a))
    lengths = ends - starts
    used = np.unique(block)
    sizes = hi[used] - lo[used] + 1
    base = np.zeros(len(lo), dtype=np.int64)
    base[used] = np.cumsum(sizes) - sizes
    before = np.zeros(int(sizes.sum()))
    for first, last, at in zip(lo[used].tolist(), hi[used].tolist(), base[used].tolist()):
        np.cumsum(lengths[first:last], out=before[at + 1:at + 1 + last - first])
    times = np.unique(np.concatenate((starts, a, b)))
    span = len(times) + 1
    keys = np.repeat(np.arange(len(lo), dtype=np.int64), hi - lo) * span + np.searchsorted(times, starts)

    def upto(t: np.ndarray) -> np.ndarray:
        k = np.searchsorted(keys, block * span + np.searchsorted(times, t), side="right") - 1 - lo[block]
        last = np.maximum(k, 0)
        at = np.minimum(lo[block] + last, len(starts) - 1)
        return np.where(k >= 0, before[base[block] + last] + np.clip(t - starts[at], 0.0, lengths[at]), 0.0)

    return upto(b) - upto(a)


def _intersect_blocks(a_block: np.ndarray, a_start: np.ndarray, a_end: np.ndarray, b_block: np.ndarray,
                      b_start: np.ndarray, b_end: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The intersection of every interval ``b`` of `b_start`, `b_end` with the intervals of block
    ``b_block[b]`` of A (disjoint and sorted within a block; blocks in increasing order of `a_block`).

    Returns the pieces with their ``b``, in order of ``b`` and then of A's intervals: for the intervals
    ``b`` of a sorted disjoint union B, all against one block, the disjoint sorted intervals of its
    intersection with that block. Times are compared through their ranks among all of them, offset by the
    block (exact integers), so one search finds each ``b``'s overlaps within its own block.
    """
    times = np.unique(np.concatenate((a_start, a_end, b_start, b_end)))
    span = len(times) + 1
    a_base, b_base = a_block.astype(np.int64) * span, b_block.astype(np.int64) * span
    first = np.searchsorted(a_base + np.searchsorted(times, a_end), b_base + np.searchsorted(times, b_start),
                            side="right")
    last = np.searchsorted(a_base + np.searchsorted(times, a_start), b_base + np.searchsorted(times, b_end),
                           side="left")
    b, a = _ranges(first, np.maximum(last - first, 0))
    start = np.maximum(a_start[a], b_start[b])
    end = np.minimum(a_end[a], b_end[b])
    keep = end > start
    return b[keep], start[keep], end[keep]


def interference(network: Network, usage: tuple[np.ndarray, ...], limits: tuple[np.ndarray, ...],
                 owner: np.ndarray, names: Sequence[str]) -> tuple[pd.DataFrame, dict[int, float]]:
    """Who held whom back on which link: one row per (job, link, other job).

    Parameters
    ----------
    network : Network
        Names the links.
    usage : tuple of numpy.ndarray
        ``(link, flow, start_s, end_s, rate_Bps)`` of every flow (:meth:`Simulation.usage`).
    limits : tuple of numpy.ndarray
        ``(link, flow, start_s, end_s)`` of every flow (:meth:`Simulation.limits`).
    owner : numpy.ndarray
        Job index of every flow.
    names : sequence of str
        Job names, by index.

    Returns
    -------
    frame : pandas.DataFrame
        :data:`INTERFERENCE_COLUMNS`: ``held_s`` is the time (a union over the job's
        transfers) during which the link held some transfer of `job` back;
        ``shared_s`` the part of it during which `other` had traffic on the link;
        ``other_bytes`` what `other` pushed through the link in that time. Sorted
        by decreasing ``shared_s``.
    shared : dict of int to float
        Per job index, the time during which any link held it back while another
        job had traffic on that link (a union over links and jobs), seconds.
    """
    u_link, u_flow, u_start, u_end, u_rate = usage
    l_link, l_flow, l_start, l_end = limits
    u_job, l_job = owner[u_flow], owner[l_flow]
    jobs = len(names)
    on = np.zeros((len(network.links), jobs), dtype=bool)
    on[u_link, u_job] = True
    busy = on.sum(axis=1) >= 2
    l_keep = busy[l_link]
    held = np.zeros(len(network.links), dtype=bool)
    held[l_link[l_keep]] = True
    u_keep = held[u_link]
    u_order = np.lexsort((u_job[u_keep], u_link[u_keep]))
    l_order = np.lexsort((l_job[l_keep], l_link[l_keep]))
    u = [array[u_keep][u_order] for array in (u_link, u_job, u_start, u_end, u_rate)]
    lim = [array[l_keep][l_order] for array in (l_link, l_job, l_start, l_end)]
    u_key, u_first = _blocks(u[0], u[1], jobs)
    l_key, l_first = _blocks(lim[0], lim[1], jobs)
    p_key, p_start, p_end = _merge_blocks(u_key, u_first, u[2], u[3])
    h_key, h_start, h_end = _merge_blocks(l_key, l_first, lim[2], lim[3])
    u_link_of = u_key // jobs
    u_lo = np.searchsorted(u_link_of, l_key // jobs, side="left")
    t_held, t_user = _ranges(u_lo, np.searchsorted(u_link_of, l_key // jobs, side="right") - u_lo)
    mine = u_key[t_user] % jobs != l_key[t_held] % jobs
    t_held, t_user = t_held[mine], t_user[mine]
    p_lo = np.searchsorted(p_key, u_key[t_user], side="left")
    row_of, b = _ranges(p_lo, np.searchsorted(p_key, u_key[t_user], side="right") - p_lo)
    piece_b, s_start, s_end = _intersect_blocks(np.searchsorted(l_key, h_key), h_start, h_end, t_held[row_of],
                                                p_start[b], p_end[b])
    triple = row_of[piece_b]
    lengths = s_end - s_start
    h_lo, h_hi = np.searchsorted(h_key, l_key, side="left"), np.searchsorted(h_key, l_key, side="right")
    h_lengths = h_end - h_start
    bounds = _runs(triple)
    listed = triple[bounds[:-1]]
    counts = u_first[t_user[listed] + 1] - u_first[t_user[listed]]
    owner, used = _ranges(u_first[t_user[listed]], counts)
    moving = u[4][used] * _covered_blocks(h_start, h_end, h_lo, h_hi, t_held[listed][owner], u[2][used], u[3][used])
    moves = np.concatenate(([0], np.cumsum(counts))).tolist()
    held_of: dict[int, float] = {}
    rows, pieces = [], {}
    for row, (t, lo, hi) in enumerate(zip(listed.tolist(), bounds[:-1].tolist(), bounds[1:].tolist())):
        block, user = int(t_held[t]), int(t_user[t])
        link, job = divmod(int(l_key[block]), jobs)
        other = int(u_key[user]) % jobs
        held = held_of.get(block)
        if held is None:
            held = held_of[block] = float(h_lengths[h_lo[block]:h_hi[block]].sum())
        moved = float(moving[moves[row]:moves[row + 1]].sum())
        pieces.setdefault(job, []).append((s_start[lo:hi], s_end[lo:hi]))
        src, dst, _ = network.links[link]
        rows.append((names[job], names[other], link, str(src), str(dst), network.tiers[link], held,
                     float(lengths[lo:hi].sum()), moved))
    result = pd.DataFrame(rows, columns=list(INTERFERENCE_COLUMNS))
    result = result.sort_values(["shared_s", "job", "other", "link"], ascending=[False, True, True, True],
                                kind="stable").reset_index(drop=True)
    shared_s = {}
    for job, parts in pieces.items():
        start, end = _merge(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))
        shared_s[job] = float((end - start).sum())
    return result, shared_s


@dataclass(frozen=True)
class JobsResult:
    """What :func:`run_jobs` found.

    Attributes
    ----------
    jobs : pandas.DataFrame
        One row per job (:data:`simnet.analysis.JOB_COLUMNS`, with empty ``scenario``,
        ``point``): ``time_s`` (collectives: from its start to its last collective's
        end; flows: the mean flow completion time), ``alone_s`` (the same, the job
        alone on the same fabric), ``slowdown = time_s / alone_s``, bandwidths per
        collective (a sparse payload's job: ``algbw_GBps`` on its dense size, ``busbw_GBps``
        NaN, as :func:`simnet.analysis.result_row` leaves it), ``shared_s`` (time held
        back on links other jobs used), whenever
        ``shared_s > 0`` the link with the most shared time (``shared_link``) and, only
        if the job also took longer than alone, the other job with the most shared time
        (``slowed_by``; sharing a link can delay some transfers of a job and not its
        end); both empty otherwise.
    timeline : pandas.DataFrame
        :data:`TIMELINE_COLUMNS`: every collective (or round of flows) of every communicator.
    interference : pandas.DataFrame
        :data:`INTERFERENCE_COLUMNS` (see :func:`interference`).
    traces : dict of str to list of Trace
        The traces of each job's collectives (or rounds of flows) in the concurrent run.
    """

    jobs: pd.DataFrame
    timeline: pd.DataFrame
    interference: pd.DataFrame
    traces: dict


def _times(jobs: Sequence[Job], state: _State) -> dict[int, tuple[float, float]]:
    """Per job: (time_s, end_s); for background flows time_s is the mean flow completion time."""
    ends: dict[int, list[float]] = {}
    spans: dict[int, list[float]] = {}
    for record in state.records:
        trace = record.trace
        ends.setdefault(record.job, []).append(trace.begin_s + trace.time_s)
        if jobs[record.job].flows is not None:
            spans.setdefault(record.job, []).extend((trace.end_s - trace.ready_s).tolist())
    result = {}
    for index, job in enumerate(jobs):
        if index not in ends:
            result[index] = (math.nan, math.nan)
        elif job.schedule is not None:
            result[index] = (max(ends[index]) - job.start_s, max(ends[index]))
        else:
            result[index] = (float(np.mean(spans[index])), max(ends[index]))
    return result


def _route_ahead(network: Network, jobs: Sequence[Job]) -> None:
    """Route the pairs of every communicator's collective in one :meth:`Network.route_table` call.

    Each collective of a simulation routes its own pairs as it starts, and a table of a few hundred pairs
    costs nearly what one of thousands does (its pieces are derived per call); with many communicators (a
    TP × DP layout, expert-parallel groups) that was most of a run. The network keeps the routes, so the
    collectives then look theirs up, together and alone; no route differs (each is :meth:`Network.route`'s).
    """
    collectives = [job for job in jobs if job.schedule is not None]
    if sum(len(job.communicators) for job in collectives) < 2:
        return
    src, dst = [], []
    for job in collectives:
        columns = job.schedule.columns
        span = job.schedule.nranks + len(job.schedule.switches)
        pairs = np.unique(columns.src.astype(np.int64) * span + columns.dst)
        for members in job.communicators:
            placed, _ = network.place(members, job.schedule.switches)
            src.append(placed[pairs // span])
            dst.append(placed[pairs % span])
    network.route_table(np.concatenate(src), np.concatenate(dst))


def _label(network: Network, link: int) -> str:
    u, v = network.links[link][:2]
    return f"{u}->{v}"


@gc_paused()
def run_jobs(network: Network, jobs: Sequence[Job], *, model: str = "maxmin", sharing: str = "equal",
             overhead_s: float = 0.0, gamma_s_per_byte: float = 0.0, slowdown: Sequence[float] | None = None,
             start_offset_s: Sequence[float] | None = None, alone: bool = True) -> JobsResult:
    """Run `jobs` together on `network`, then each alone, and say who slowed whom.

    Parameters
    ----------
    network : Network
        The shared fabric.
    jobs : sequence of Job
        Jobs with distinct names; at least one runs a collective unless every
        :class:`Flows` job has a duration.
    model, sharing : str, optional
        Link model and max-min sharing (see :class:`simnet.engine.Simulation`).
    overhead_s, gamma_s_per_byte : float, optional
        Software overhead per transfer and reduction cost (see :meth:`Simulation.run`).
    slowdown, start_offset_s : sequence of float, optional
        Per *network* rank, as in :meth:`Simulation.run`; every collective a rank
        takes part in gets its value.
    alone : bool, optional
        Also run each job alone (default); without, ``alone_s`` and ``slowdown`` are NaN.

    Notes
    -----
    Under ``maxmin``, jobs of :data:`simnet.engine.COMPILED_FROM` transfers or more (their collectives
    and one round of background flows) run in the compiled loop of :mod:`simnet.kernel`, together and
    alone, with the times of SimPy's loop bit for bit (:meth:`simnet.engine.Simulation._drive`).

    Returns
    -------
    JobsResult

    Raises
    ------
    SimnetError
        For repeated names, ranks outside the network, or background flows that
        would never stop (``path`` names the job).
    """
    names = [job.name for job in jobs]
    if len(set(names)) != len(names):
        raise SimnetError(f"job names must be distinct, got {names}", path="jobs")
    for job in jobs:
        outside = [r for r in job.ranks if not 0 <= r < network.size]
        if outside:
            raise SimnetError(f"rank {outside[0]} is not in the network's {network.size} GPUs", path=job.name)
    if not any(job.schedule is not None for job in jobs) and any(job.flows.duration_s is None for job in jobs):
        raise SimnetError("background flows without a duration need a collective job to stop with",
                          path=next(job.name for job in jobs if job.flows.duration_s is None))
    settings = {"model": model, "sharing": sharing}
    per_rank = {"overhead_s": overhead_s, "gamma_s_per_byte": gamma_s_per_byte, "slowdown": slowdown,
                "start_offset_s": start_offset_s}
    compiled = model == "maxmin" and _transfers(jobs, None) >= engine.COMPILED_FROM
    _route_ahead(network, jobs)
    sim, state = _simulate(network, jobs, settings, per_rank, compiled)
    together = _times(jobs, state)
    alone_times = {}
    for index, job in enumerate(jobs):
        if alone:
            rounds = {0: state.rounds[index]} if job.flows is not None else None
            _, solo = _simulate(network, [job], settings, per_rank, compiled, rounds)
            alone_times[index] = _times([job], solo)[0][0]
        else:
            alone_times[index] = math.nan
    owner = np.empty(sum(len(r.trace.flows) for r in state.records), dtype=np.int64)
    for record in state.records:
        owner[record.trace.flows.start:record.trace.flows.stop] = record.job
    frame, shared = interference(network, sim.usage(), sim.limits(), owner, names)
    rows = []
    for index, job in enumerate(jobs):
        time_s, end_s = together[index]
        mine = frame[frame["job"] == job.name]
        by_other = mine.groupby("other")["shared_s"].sum().sort_values(ascending=False, kind="stable")
        by_link = mine.groupby("link")["shared_s"].sum().sort_values(ascending=False, kind="stable")
        size = job.schedule.size_bytes if job.schedule is not None else job.flows.message_bytes
        width = len(job.communicators[0])
        op = job.schedule.collective if job.schedule is not None else "flows"
        per_collective = time_s / job.repeat if job.schedule is not None else time_s
        algbw = size / per_collective / 1e9 if per_collective > 0 else math.nan
        rows.append({
            "scenario": "", "point": "", "topology": network.name, "network_model": model,
            **routing_cells(network.routing, network.hash_seed),
            "job": job.name,
            "op": op,
            "algorithm": job.schedule.algorithm if job.schedule is not None else job.flows.pattern,
            "params": _params(job), "gpus": len(job.ranks), "communicators": len(job.communicators),
            "ranks": width, "size_bytes": size, "start_s": job.start_s,
            "repeat": job.repeat if job.schedule is not None else state.rounds.get(index, 0),
            "end_s": end_s, "time_s": time_s, "alone_s": alone_times[index],
            "slowdown": time_s / alone_times[index] if alone_times[index] > 0 else math.nan,
            "algbw_GBps": algbw,
            "busbw_GBps": _busbw(job, op, width, algbw),
            "shared_s": shared.get(index, 0.0),
            "slowed_by": by_other.index[0] if shared.get(index, 0.0) > 0 and time_s > alone_times[index] else "",
            "shared_link": _label(network, int(by_link.index[0])) if shared.get(index, 0.0) > 0 else "",
        })
    timeline = pd.DataFrame(
        [(names[r.job], r.communicator, r.iteration, r.trace.begin_s, r.trace.begin_s + r.trace.time_s,
          r.trace.time_s) for r in state.records], columns=list(TIMELINE_COLUMNS))
    traces: dict[str, list[Trace]] = {name: [] for name in names}
    for record in state.records:
        traces[names[record.job]].append(record.trace)
    return JobsResult(pd.DataFrame(rows, columns=list(JOB_COLUMNS)), timeline, frame, traces)


def _busbw(job: Job, op: str, width: int, algbw_GBps: float) -> float:
    """nccl-tests' bus bandwidth of a collective job (a flows job's algbw); NaN for a sparse payload, whose
    dense-equivalent figure can exceed every link's bandwidth (docs/sparse.md)."""
    if job.schedule is None:
        return algbw_GBps
    if "payload" in job.schedule.params:
        return math.nan
    return algbw_GBps * busbw_factor(op, width)


def _params(job: Job) -> str:
    if job.flows is not None:
        flows = job.flows
        shown = {"load": flows.load, "seed": flows.seed} | (
            {"duration_s": flows.duration_s} if flows.duration_s is not None else {})
    else:
        shown = {k: (v.describe() if hasattr(v, "describe") else v) for k, v in job.schedule.params.items()}
    return json.dumps(shown, sort_keys=True)
