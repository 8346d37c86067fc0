"""The discrete-event engine: schedules run over a network inside a SimPy environment.

:class:`Simulation` is a SimPy component: ``Simulation(env, network).run(schedule)``
starts a collective at the environment's current time and returns a SimPy event
that succeeds with its :class:`Trace` when its last transfer completes. Several
schedules may run at once on one simulation (they share its links), and SimPy
processes of the user's may start collectives and wait for them.
:func:`simulate` is the one-call form.

Everything the engine and its link model (:mod:`simnet.links`) have to do at one
simulated instant is collected in one :class:`~simnet.links.Instant`, and each
instant is one SimPy event, scheduled at exactly that time (its delay is chosen so
that ``now + delay`` is the instant bit for bit) ahead of every other event of that
time (:data:`FIRST`). When the event fires, the link
model retires and starts what it must, then the engine completes transfers,
releases the transfers that were waiting for them and hands those ready now to the
link model, until nothing is left at that instant. Then the events of the
schedules completed at that instant succeed, in the order the schedules were started.

The life of a transfer (all times in simulated seconds)::

    ready_s    its dependencies have finished and its sending rank has started
               (rank start offsets)
    issue_s    = ready_s + overhead_s * slowdown[src] + delay_s  (software overhead α_sw
               and the protocol's latency of this message, see
               :attr:`simnet.schedule.TransferTable.delay_s`)
    start_s    its first byte enters the network (later than issue_s only when it
               queues behind another transfer)
    arrive_s   its last byte has arrived
    end_s      = arrive_s + nbytes * gamma_s_per_byte[dst] * slowdown[dst] for a
               reducing transfer (the reduction γ), = arrive_s for a "copy"

A transfer puts its wire bytes on the links (the payload, or what its protocol
sends: :attr:`simnet.schedule.TransferTable.wire_bytes`). A schedule's switch
endpoints (:attr:`simnet.schedule.Schedule.switches`) are placed on the
reduce-capable switch serving their group (:meth:`Network.reduction_switch`);
transfers into or out of one carry their bytes at the switch's
``reduce_efficiency`` (they put ``wire / efficiency`` bytes on their links), and a
switch reduces with no γ, in flight.

Reductions are not serialized with other work of the rank: the convention shared
with the algorithms is that a reduce transfer's dependants may start ``nbytes γ``
after its last byte arrives. Transfers issued at the same instant are submitted in
order (schedule order; schedules started earlier first), so a run is deterministic
bit for bit. The engine knows neither YAML nor plots, and adding an algorithm never
touches it.
"""

from __future__ import annotations

import bisect
import heapq
import math
import struct
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import simpy

from simnet.errors import SimnetError, expect_instance
from simnet import links as link_models
from simnet.links import LINK_MODELS, SHARING, Instant, RouteTable
from simnet.network import Network
from simnet.perflow import Constant, appended, by_time, grown, take, view
from simnet.schedule import OPS, Schedule
from simnet.speed import gc_paused, unique_inverse

__all__ = ["Simulation", "Trace", "simulate"]

COMPILED_FROM = 100_000
"""Schedules of at least this many transfers that :func:`simulate` runs under ``maxmin`` take the compiled
loop of :mod:`simnet.kernel`. Its first call in a process imports Numba and loads the machine code cached
beside the module, a fixed cost in time and memory (``docs/performance.md`` measures it); the first call
after installing or changing simnet compiles that code, once. Below the threshold that fixed cost
outweighs what the loop saves; above it the loop is several times faster where flows share links or queue
on their connections (NCCL's schedules, trees), and about level with the Python engine's array path, or
slower, where every flow is alone on its links (``docs/performance.md``, round nine). The loop does not
look at signals, so Ctrl-C takes effect when it returns. The tests set it to 0 and to infinity and
compare whole traces."""

COMPILED_IN_BATCHES_FROM = 5_000
"""Schedules of at least this many transfers take the compiled loop when they are simulated as one of a
batch (a scenario point's algorithms and sizes, a tuning run's candidates) estimated at
:data:`COMPILED_FROM` transfers or more in all: the batch pays for loading the loop (once per process
that runs its simulations), and, loaded, the loop is the faster one from a few thousand transfers on."""


def _batch_compiled(model: str, batch_transfers: int, transfers: int) -> bool | None:
    """The `compiled` argument of :func:`simulate` for a schedule of `transfers` in a batch of
    `batch_transfers` in all (:data:`COMPILED_IN_BATCHES_FROM`); ``None`` leaves it to the size."""
    if model == "maxmin" and batch_transfers >= COMPILED_FROM and transfers >= COMPILED_IN_BATCHES_FROM:
        return True
    return None


def _bits(value: float) -> int:
    """The IEEE 754 bit pattern of a non-negative float, as an integer (monotone in the value)."""
    return struct.unpack("<q", struct.pack("<d", value))[0]


def _float(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<q", bits))[0]


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


def _column(values: array | np.ndarray | Constant) -> np.ndarray:
    """A per-transfer column as the compiled loop takes it, read-only (a schedule's own column can be one): one
    value for all is an array of length 1."""
    column = np.array([values.value]) if isinstance(values, Constant) else view(values).view()
    column.flags.writeable = False
    return column


def _tags(values: array | Constant) -> np.ndarray:
    """A per-transfer int32 column as the compiled loop takes it (:func:`_column`)."""
    return np.asarray(_column(values), dtype=np.int32)


def _distinct_pairs(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, int, np.ndarray]:
    """The distinct (src, dst) pairs of network endpoints as keys ``src * span + dst``, `span`, and the pair of
    every one of `src`, `dst` (not empty). One int64 key per pair, where sources and destinations would take two."""
    span = int(max(src.max(), dst.max())) + 1
    pairs, inverse = unique_inverse(src.astype(np.int64) * span + dst)
    return pairs, span, inverse


def _pair_routes(network: Network, src: np.ndarray, dst: np.ndarray) -> tuple[RouteTable, np.ndarray]:
    """The routes of the distinct (src, dst) pairs (network endpoints) and the pair of every transfer."""
    if len(src) == 0:
        return RouteTable.of([]), np.zeros(0, dtype=np.int64)
    pairs, span, inverse = _distinct_pairs(src, dst)
    return network.route_table(pairs // span, pairs % span, keep=False), inverse


PAIRS_AT_ONCE = 2**19
"""Distinct (src, dst) pairs :func:`_interned_routes` routes and interns at a time (bounds the scratch memory of
routing and numbering to that many routes: an all-to-all routes every pair of GPUs once)."""


def _interned_routes(network: Network, links, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The number `links` gives (:meth:`~simnet.links.LinkModel.intern`) the route of every pair ``(src[i],
    dst[i])`` of network endpoints, int32.

    The distinct pairs are routed and interned in order, in blocks of about :data:`PAIRS_AT_ONCE`: a route is
    numbered when it first appears and looked up afterwards, and every route is the one
    :meth:`~simnet.network.Network.route` gives, so the numbers are those of interning all routes at once. The
    network does not keep the pairs it composes here (see :meth:`~simnet.network.Network.route_table`): `links`
    keeps their routes.
    """
    if len(src) == 0:
        return np.zeros(0, dtype=np.int32)
    pairs, span, inverse = _distinct_pairs(src, dst)
    ids = np.empty(len(pairs), dtype=np.int32)
    blocks = -(-len(pairs) // PAIRS_AT_ONCE)
    bounds = [len(pairs) * block // blocks for block in range(blocks + 1)]
    for low, high in zip(bounds[:-1], bounds[1:]):
        part = pairs[low:high]
        ids[low:high] = links.intern(network.route_table(part // span, part % span, keep=False))
    del pairs
    return ids[inverse]


FIRST = -1
"""SimPy priority of the simulation's own events: ahead of every other event at the same time (SimPy's
``URGENT`` is 0, ``NORMAL`` 1), so the network is brought up to an instant before any process sees it."""


class _Tick(simpy.events.Event):
    """A SimPy event of the simulation's: it fires `delay` seconds from now with value `clock`, before any
    other event of that time (:data:`FIRST`)."""

    def __init__(self, env: simpy.Environment, delay: float, clock: float) -> None:
        super().__init__(env)
        self._ok = True
        self._value = clock
        env.schedule(self, FIRST, delay)


class _Unreachable(Exception):
    """The compiled loop met an instant that SimPy's clock cannot reach from the instant that set it
    (:meth:`Simulation._drive`)."""


@dataclass(eq=False)
class _Job:
    """One schedule running in a simulation: its flows are ``offset .. offset + count - 1``."""

    schedule: Schedule
    offset: int
    count: int
    begin_s: float
    ranks: np.ndarray
    done: simpy.Event


class Simulation:
    """A network whose links carry the transfers of the schedules run on it, in a SimPy environment.

    Parameters
    ----------
    env : simpy.Environment
        The environment whose clock the simulation uses (simulated seconds).
    network : Network
        The links; per-tier efficiencies are a property of the network.
    model : {"maxmin", "fifo"}, optional
        Link-sharing model (:data:`simnet.links.LINK_MODELS`).
    sharing : {"equal", "rtt_weighted"}, optional
        How ``maxmin`` shares a saturated link (:data:`simnet.links.SHARING`).

    Raises
    ------
    SimnetError
        For an unknown model or sharing (``path`` names the argument).

    Examples
    --------
    >>> import simpy
    >>> from simnet.algorithms import ring_allreduce
    >>> from simnet.topology import switch
    >>> env = simpy.Environment()
    >>> sim = Simulation(env, Network(switch(8, 12.5e9, 1e-6)))
    >>> def training_step(env):
    ...     yield env.timeout(1e-3)
    ...     trace = yield sim.run(ring_allreduce(8, 1 << 20))
    ...     print(f"{trace.time_s * 1e6:.3f} us, done at {env.now * 1e3:.4f} ms")
    >>> _ = env.process(training_step(env))
    >>> env.run()
    174.801 us, done at 1.1748 ms
    """

    def __init__(self, env: simpy.Environment, network: Network, *, model: str = "maxmin",
                 sharing: str = "equal") -> None:
        expect_instance(network, Network, "network")
        if model not in LINK_MODELS:
            raise SimnetError(f"must be one of {sorted(LINK_MODELS)}, got {model!r}", path="model")
        if sharing not in SHARING:
            raise SimnetError(f"must be one of {list(SHARING)}, got {sharing!r}", path="sharing")
        if sharing != "equal" and model != "maxmin":
            raise SimnetError(f"sharing {sharing!r} needs the maxmin model, got {model!r}", path="sharing")
        self.env = env
        self.network = network
        self.model = model
        self.sharing = sharing
        options = {"sharing": sharing} if model == "maxmin" else {}
        self._links = LINK_MODELS[model](network.bandwidth_Bps, network.latency_s, self._at, **options)
        self._instants: dict[float, Instant] = {}
        self._buckets: dict[float, dict[float, Instant]] = {}
        self._clocks: list[float] | None = None
        self._deferred: list[int] | None = None
        self._flow_job: array | None = None
        self._completing: list[int] = []
        self._clock = 0.0
        self._jobs: list[_Job] = []
        self._closed = False
        self._remaining: list[int] = []
        self._job_ends: list[int] = []
        self._route_ids = array("i")
        self._nbytes: array | Constant = Constant()
        self._channels: array | Constant = Constant(0)
        self._in_order: array | Constant = Constant(0)
        self._not_before: array | Constant = Constant()
        self._overhead: array | Constant = Constant()
        self._reduction: array | Constant = Constant()
        self._waiting = array("i")
        self._bounds = array("i", [0])
        self._dependents = array("i")
        self._ready_s = array("d")
        self._issue_s = array("d")
        self._end_s = array("d")

    def _delay(self, time_s: float) -> float:
        """The smallest delay that brings the environment's clock to `time_s` or just past it.

        ``now + delay`` is computed by SimPy in floating point, and not every float
        can be reached from every ``now``; the clock then stops at the next
        reachable float, at most one unit in the last place later. Events keep
        their exact instant (:attr:`Instant.time_s`), and instants that reach the
        same clock value share one event, so they are processed in exact order.
        """
        now = self.env.now if self._clocks is None else self._clock
        delay = time_s - now
        if now + delay == time_s:
            return delay
        while now + delay < time_s:
            delay = math.nextafter(delay, math.inf)
        low, high = 0, _bits(delay)
        while high - low > 1:
            middle = (low + high) // 2
            if now + _float(middle) >= time_s:
                high = middle
            else:
                low = middle
        return _float(high)

    def _at(self, time_s: float) -> Instant:
        """The instant at exactly `time_s`, created (and scheduled in the environment) on first use."""
        instant = self._instants.get(time_s)
        if instant is None:
            instant = self._instants[time_s] = Instant(time_s)
            clocks = self._clocks
            now = self.env.now if clocks is None else self._clock
            delay = time_s - now
            if now + delay != time_s:
                delay = self._delay(time_s)
            clock = now + delay
            bucket = self._buckets.get(clock)
            if bucket is None:
                bucket = self._buckets[clock] = {}
                if clocks is None:
                    event = _Tick(self.env, delay, clock)
                    event.callbacks.append(self._fire)
                else:
                    heapq.heappush(clocks, clock)
            bucket[time_s] = instant
        return instant

    def run(
        self,
        schedule: Schedule,
        *,
        ranks: Sequence[int] | None = None,
        overhead_s: float = 0.0,
        gamma_s_per_byte: float | Sequence[float] = 0.0,
        start_offset_s: Sequence[float] | None = None,
        slowdown: Sequence[float] | None = None,
    ) -> simpy.Event:
        """Start `schedule` now; return the event that succeeds with its :class:`Trace`.

        Parameters
        ----------
        schedule : Schedule
            What to send.
        ranks : sequence of int, optional
            Network rank of each schedule rank (default: schedule rank ``i`` on network rank ``i``).
        overhead_s : float, optional
            Software overhead α_sw paid by every transfer, seconds, before it enters the
            network (e.g. a collective library's per-message base latency).
        gamma_s_per_byte : float or sequence of float, optional
            Reduction cost γ, seconds per byte, of every rank or of each (schedule) rank:
            a reducing transfer completes ``nbytes γ[dst]`` after its last byte arrives.
        start_offset_s : sequence of float, optional
            Per rank, how long after now it starts issuing transfers (skew), seconds.
        slowdown : sequence of float, optional
            Per rank, a factor > 0 (a straggler has > 1) multiplying the overhead of the
            transfers it sends and the γ of the reductions it performs.

        Raises
        ------
        SimnetError
            For a schedule larger than the network, a bad rank mapping, or an
            overhead, γ, offset or slowdown that is not finite and non-negative
            (``path`` names the argument).
        """
        if self._closed:
            raise SimnetError("this simulation is closed; start a new one", path="schedule")
        expect_instance(schedule, Schedule, "schedule")
        network = self.network
        nranks = schedule.nranks
        if ranks is None:
            if nranks > network.size:
                raise SimnetError(
                    f"the schedule needs {nranks} ranks but the network has only {network.size} GPUs", path="ranks"
                )
            placed = np.arange(nranks, dtype=np.int64)
        else:
            placed = np.asarray(ranks)
            if (placed.shape != (nranks,) or not np.issubdtype(placed.dtype, np.integer)
                    or (nranks and (placed.min() < 0 or placed.max() >= network.size))
                    or len(np.unique(placed)) != nranks):
                raise SimnetError(f"must be {nranks} distinct network ranks in [0, {network.size}), got {ranks!r}",
                                  path="ranks")
            placed = placed.astype(np.int64)
        placed, efficiency = network.place(placed, schedule.switches)
        switches = len(schedule.switches)
        if not _finite(overhead_s) or overhead_s < 0:
            raise SimnetError(f"must be a finite time ≥ 0 seconds, got {overhead_s!r}", path="overhead_s")
        if _finite(gamma_s_per_byte):
            if gamma_s_per_byte < 0:
                raise SimnetError(f"must be ≥ 0 seconds per byte, got {gamma_s_per_byte!r}", path="gamma_s_per_byte")
            gamma = np.full(nranks, float(gamma_s_per_byte))
        else:
            gamma = _per_rank(gamma_s_per_byte, nranks, "gamma_s_per_byte", default=0.0)
        offset = np.concatenate([_per_rank(start_offset_s, nranks, "start_offset_s", default=0.0), np.zeros(switches)])
        slow = np.concatenate([_per_rank(slowdown, nranks, "slowdown", default=1.0, positive=True), np.ones(switches)])
        gamma = np.concatenate([gamma, np.zeros(switches)])

        now = self.env.now
        first = len(self._ready_s)
        count = len(schedule)
        if first + count >= 2**31:
            raise SimnetError(f"a simulation holds fewer than 2**31 transfers, got {first + count}", path="schedule")
        if len(self._dependents) + len(schedule.columns.deps) >= 2**31:
            raise SimnetError(f"a simulation holds fewer than 2**31 dependencies, got "
                              f"{len(self._dependents) + len(schedule.columns.deps)}", path="schedule")
        done = self.env.event()
        job = _Job(schedule, first, count, now, placed, done)
        self._jobs.append(job)
        self._remaining.append(count)
        self._job_ends.append(first + count)
        if self._flow_job is not None:
            self._flow_job = grown(self._flow_job, np.full(count, len(self._jobs) - 1))
        columns = schedule.columns
        src = columns.src.astype(np.int64)
        self._route_ids = grown(self._route_ids, _interned_routes(network, self._links, placed[src],
                                                                  placed[columns.dst]))
        wire = columns.nbytes
        if switches:
            wire = wire / np.minimum(efficiency[src], efficiency[columns.dst])
        adopt = self._deferred is not None
        self._nbytes = appended(self._nbytes, wire, adopt=adopt)
        self._channels = appended(self._channels, columns.channel, "i", adopt=adopt)
        self._in_order = appended(self._in_order, np.full(count, len(self._jobs) if schedule.in_order else 0), "i")
        self._not_before = appended(self._not_before, now + offset[src] if offset.any() else np.full(count, now))
        self._overhead = appended(self._overhead, overhead_s * slow[src] + columns.delay_s if overhead_s
                                  else columns.delay_s, adopt=adopt)
        self._reduction = appended(self._reduction, np.where(columns.reduce, columns.payload * gamma[columns.dst]
                                                              * slow[columns.dst], 0.0))
        waiting = np.diff(columns.dep_offsets)
        self._waiting = grown(self._waiting, waiting)
        order = np.argsort(columns.deps, kind="stable")
        base = len(self._dependents)
        self._dependents = grown(self._dependents, np.repeat(np.arange(count), waiting)[order] + first)
        self._bounds = grown(self._bounds, np.cumsum(np.bincount(columns.deps, minlength=count)) + base)
        nan = array("d", [math.nan]) * count
        self._ready_s, self._issue_s = grown(self._ready_s, nan), grown(self._issue_s, nan)
        self._end_s = grown(self._end_s, nan)
        if self._deferred is None:
            self._links.reserve(len(self._ready_s))
        if count == 0:
            done.succeed(self._trace(job))
            return done
        ready = [first + i for i in np.flatnonzero(waiting == 0).tolist()]
        if self._deferred is not None:
            self._deferred.extend(ready)
        else:
            self._finish(now, [], ready, [])
        return done

    def _alone(self) -> None:
        """Run without SimPy events from now on: this simulation is the only user of its environment.

        Each clock value an instant needs goes onto a heap instead of becoming a
        SimPy timeout, and :meth:`_run_alone` processes them in increasing order,
        the order in which the environment would have fired those timeouts (one per
        clock value, nothing else scheduled). The clock the instants' delays are
        computed from is the one the environment would show.
        """
        self._clocks = []
        self._clock = self.env.now

    def _run_alone(self) -> None:
        """Process every pending instant, in clock order, until none is left."""
        clocks = self._clocks
        while clocks:
            clock = heapq.heappop(clocks)
            self._clock = clock
            self._process(clock)

    def _compiled(self) -> None:
        """Run the first schedule given to :meth:`run` with :func:`simnet.kernel.run` instead of SimPy.

        Call before that :meth:`run` and call :meth:`_run_compiled` after it; only for a
        :class:`~simnet.links.MaxMinLinks` simulation that runs that one schedule alone.
        """
        self._deferred = []

    def _run_compiled(self) -> None:
        """Run the deferred transfers and all they release to the end in compiled code, leaving the columns of
        this simulation and what its link model's traces read as the loop of :meth:`_process` leaves them."""
        from simnet import kernel

        if len(self._jobs) != 1:
            raise ValueError(f"the compiled loop runs one schedule alone, got {len(self._jobs)}")
        links = self._links
        initial = np.array(self._deferred, dtype=np.int32)
        self._deferred = None
        count = len(self._ready_s)
        route = view(self._route_ids)
        if isinstance(self._channels, Constant) and self._channels.value == 0:
            line, lines = route, len(links._route_hops)
        else:
            channel = np.broadcast_to(np.int64(self._channels.value), count) if isinstance(
                self._channels, Constant) else view(self._channels)
            _, line = unique_inverse(route.astype(np.int64) * (int(channel.max(initial=0)) + 1) + channel)
            line = line.astype(np.int32)
            lines = int(line.max(initial=-1)) + 1

        (order, history_flow, history_instants, history_rate, history_limit, blocked, started_s,
         finished_s) = kernel.run(
            float(self.env.now), initial, route, line, lines, _column(self._nbytes), _column(self._not_before),
            _column(self._overhead), _column(self._reduction), view(self._waiting), view(self._bounds),
            view(self._dependents), *links._kernel_routes(), view(self._ready_s), view(self._issue_s),
            view(self._end_s), _tags(self._in_order))
        links._adopt(count, order, route, started_s, finished_s, history_flow, history_instants, history_rate,
                     history_limit, blocked)
        self._remaining[0] -= count - int(np.isnan(view(self._end_s)).sum())
        if self._remaining[0] == 0 and not self._jobs[0].done.triggered:
            self._jobs[0].done.succeed(self._trace(self._jobs[0]))

    def _resumable(self) -> None:
        """Run every schedule given to :meth:`run` in the compiled loop of :mod:`simnet.kernel`; call before
        the first :meth:`run` and let :meth:`_drive` run the environment instead of ``env.run()``.

        Only for a :class:`~simnet.links.MaxMinLinks` simulation whose environment has, besides the
        simulation's own events, only processes started before :meth:`_drive` and their events of
        ``NORMAL`` priority (what :func:`simnet.jobs.run_jobs` does).
        """
        self._deferred = []
        self._flow_job = array("i")

    def _drive(self) -> None:
        """Run the environment to its end, the network's instants in the compiled loop.

        Before every event of the environment the loop processes the network up to that event's time, as the
        simulation's own events (:data:`FIRST`) would in SimPy. It stops after an instant at which a schedule
        completed; a :class:`_Tick` at that instant then brings the clock there and succeeds the schedules'
        events, as :meth:`_process` does. So every time is that of the SimPy loop, as long as each instant's
        time is where SimPy's clock lands from the instant that scheduled it (true but for a rounding of
        its delay, rarely). Where it is not, the loop stops and :class:`_Unreachable` is raised: the run
        is then of no use and must be made again without :meth:`_resumable`.

        Raises
        ------
        _Unreachable
            For an instant SimPy's clock would not land on.
        """
        from simnet import kernel

        env, links = self.env, self._links
        loop = kernel.Loop(len(self.network.links))
        lines: dict[int, int] = {}
        line = array("i")
        reported = 0
        while True:
            now, status, line = self._advance(loop, lines, line)
            if status == kernel._UNREACHABLE:
                raise _Unreachable(f"an instant scheduled at {now!r} s is not where SimPy's clock lands from there")
            if status == kernel._COMPLETED:
                delay = now - env.now
                if env.now + delay != now:
                    raise _Unreachable(f"no SimPy delay from {env.now!r} lands on {now!r}")
                links.started_s, links.finished_s = loop.started_s, loop.finished_s
                route, blocked = view(self._route_ids), loop.blocked
                blocker = view(links._route_blocker)[route[blocked[reported:]]]
                links.blocked_by.update(zip(blocked[reported:].tolist(), blocker.tolist()))
                reported = len(blocked)
                del route
                tick = _Tick(env, delay, now)
                tick.callbacks.append(lambda _, jobs=loop.completed_jobs(): self._complete(jobs))
            elif env.peek() == math.inf:
                break
            env.step()
        count = len(self._ready_s)
        order, history_flow, history_instants, history_rate, history_limit, blocked = loop.results()
        links._adopt(count, order, view(self._route_ids).copy(), loop.started_s[:count], loop.finished_s[:count],
                     history_flow, history_instants, history_rate, history_limit, blocked)
        left = loop.job_left
        self._remaining = [int(value) for value in left[:len(self._jobs)]]
        self._deferred = None

    def _advance(self, loop, lines: dict[int, int], line: array) -> tuple[float, int, array]:
        """Hand what :meth:`run` deferred to `loop` and run it up to the environment's next event; `lines`
        and `line` number the connections (route and channel) of the transfers as they come.

        Returns the time and status the loop stopped at, and `line` grown to every transfer so far.
        """
        count = len(self._ready_s)
        initial = np.array(self._deferred, dtype=np.int32)
        self._deferred.clear()
        route = view(self._route_ids)
        if len(line) < count:
            channels = self._channels
            channel = (np.full(count - len(line), channels.value, dtype=np.int64) if isinstance(channels, Constant)
                       else view(channels)[len(line):].astype(np.int64))
            keys, inverse = unique_inverse((route[len(line):].astype(np.int64) << 32) | channel)
            ids = np.array([lines.setdefault(key, len(lines)) for key in keys.tolist()], dtype=np.int64)
            line = grown(line, ids[inverse])
        *routes, weighted = self._links._kernel_routes()
        hops = routes[1]
        loop.reserve(count, len(lines), int(hops.max()) if len(hops) else 1,
                     np.array([job.count for job in self._jobs], dtype=np.int64))
        columns = (route, view(line), _column(self._nbytes), _column(self._not_before), _column(self._overhead),
                   _column(self._reduction), view(self._waiting), view(self._bounds), view(self._dependents),
                   view(self._ready_s), view(self._issue_s), view(self._end_s), view(self._flow_job),
                   _tags(self._in_order))
        now, status = loop.advance(float(self.env.now), float(self.env.peek()), True, initial, columns,
                                   tuple(routes), weighted)
        return now, status, line

    def _fire(self, event: simpy.Event) -> None:
        """Process everything that happens at the instants of `event`, in exact time order."""
        self._process(event.value)

    def _process(self, clock: float) -> None:
        """Process everything that happens at the instants of clock value `clock`, in exact time order."""
        bucket = self._buckets[clock]
        links = self._links
        reduction = self._reduction
        at_once = isinstance(reduction, Constant) and reduction.value == 0.0
        while bucket:
            now = min(bucket)
            instant = bucket[now]
            while instant.starting or instant.finishing or instant.issued or instant.reduced:
                finished = links.advance(now, instant)
                if at_once:
                    done = finished
                elif len(finished) >= link_models.BATCH:
                    done = self._reduce_batch(now, finished)
                else:
                    done = []
                    for flow in finished:
                        reduced = now + reduction[flow]
                        if reduced > now:
                            self._at(reduced).reduced.append(flow)
                        else:
                            done.append(flow)
                done.extend(instant.reduced)
                issued = instant.issued
                instant.reduced, instant.issued = [], []
                self._finish(now, done, [], issued)
            del bucket[now]
            del self._instants[now]
        del self._buckets[clock]
        if self._completing:
            self._complete(sorted(self._completing))
            self._completing = []

    def _complete(self, jobs: list[int]) -> None:
        """Succeed the events of `jobs`, which completed at the instant just processed, in that order."""
        for job in jobs:
            self._jobs[job].done.succeed(self._trace(self._jobs[job]))

    def _reduce_batch(self, now: float, finished: list[int]) -> list[int]:
        """The loop of :meth:`_process` over `finished` with array arithmetic: those whose reduction is done now."""
        flow = np.array(finished, dtype=np.int64)
        reduced = now + take(self._reduction, flow)
        later = reduced > now
        if not later.any():
            return finished
        for moment, group in by_time(reduced[later], flow[later]):
            self._at(moment).reduced.extend(group)
        return flow[~later].tolist()

    def _finish(self, now: float, done: list[int], released: list[int], issued: list[int]) -> None:
        """Complete `done`, release what waited for them, hand everything ready now to the link model."""
        if not done and not released:
            if issued:
                self._submit(now, issued)
            return
        if len(done) >= link_models.BATCH:
            released.extend(self._done_batch(now, done))
            done = []
        end_s, waiting, dependents, bounds = self._end_s, self._waiting, self._dependents, self._bounds
        remaining, ends = self._remaining, self._job_ends
        one = len(ends) == 1
        for flow in done:
            end_s[flow] = now
            for k in range(bounds[flow], bounds[flow + 1]):
                child = dependents[k]
                waiting[child] -= 1
                if waiting[child] == 0:
                    released.append(child)
            job = 0 if one else bisect.bisect_right(ends, flow)
            remaining[job] -= 1
            if remaining[job] == 0:
                self._completing.append(job)
        if len(released) >= link_models.BATCH:
            self._release_batch(now, released, issued)
        else:
            not_before, overhead = self._not_before, self._overhead
            ready_s, issue_s = self._ready_s, self._issue_s
            earliest = not_before.value if isinstance(not_before, Constant) else None
            delay = overhead.value if isinstance(overhead, Constant) else None
            for flow in released:
                ready = not_before[flow] if earliest is None else earliest
                if now > ready:
                    ready = now
                ready_s[flow] = ready
                issue = ready + (overhead[flow] if delay is None else delay)
                issue_s[flow] = issue
                if issue <= now:
                    issued.append(flow)
                else:
                    self._at(issue).issued.append(flow)
        if issued:
            self._submit(now, issued)

    def _submit(self, now: float, issued: list[int]) -> None:
        """Hand `issued` to the link model, in increasing order."""
        issued.sort()
        channels, in_order = self._channels, self._in_order
        self._links.submit(now, issued, self._route_ids, self._nbytes,
                           None if isinstance(channels, Constant) and channels.value == 0 else channels,
                           None if isinstance(in_order, Constant) and in_order.value == 0 else in_order)

    def _done_batch(self, now: float, done: list[int]) -> list[int]:
        """The loop of :meth:`_finish` over `done` with array arithmetic; return the transfers it releases.

        The released transfers come in increasing order, not in the loop's order;
        nothing downstream depends on that order (the transfers issued at an
        instant are sorted before they reach the link model).
        """
        flow = np.array(done, dtype=np.int64)
        view(self._end_s)[flow] = now
        bounds = view(self._bounds)
        first = bounds[flow]
        counts = bounds[flow + 1] - first
        ends = np.cumsum(counts)
        total = int(ends[-1])
        released: list[int] = []
        if total:
            children = view(self._dependents)[np.arange(total) + np.repeat(first - (ends - counts), counts)]
            low = int(children.min())
            span = int(children.max()) - low + 1
            if span <= 8 * total:
                times = np.bincount(children - low, minlength=span)
                child = np.flatnonzero(times)
                times = times[child]
                child += low
            else:
                child, times = np.unique(children, return_counts=True)
            waiting = view(self._waiting)
            left = waiting[child] - times
            waiting[child] = left
            released = child[left == 0].tolist()
        remaining = self._remaining
        if len(remaining) == 1:
            finishing = [0] if remaining[0] == len(done) else []
            remaining[0] -= len(done)
        else:
            job = np.searchsorted(np.array(self._job_ends), flow, side="right")
            per_job = np.bincount(job, minlength=len(remaining))
            finishing = [int(j) for j in np.flatnonzero(per_job) if remaining[j] == per_job[j]]
            for j in np.flatnonzero(per_job).tolist():
                remaining[j] -= int(per_job[j])
        self._completing.extend(finishing)
        return released

    def _release_batch(self, now: float, released: list[int], issued: list[int]) -> None:
        """The release loop of :meth:`_finish` with array arithmetic: ready and issue times, then the issued."""
        flow = np.array(released, dtype=np.int64)
        not_before = take(self._not_before, flow)
        ready = np.where(now > not_before, now, not_before)
        view(self._ready_s)[flow] = ready
        issue = ready + take(self._overhead, flow)
        view(self._issue_s)[flow] = issue
        due = issue <= now
        issued.extend(flow[due].tolist())
        if not due.all():
            for moment, group in by_time(issue[~due], flow[~due]):
                self._at(moment).issued.extend(group)

    def close(self) -> None:
        """Release what running needs: the per-transfer state and the link model's clock.

        The traces already delivered stay whole (they hold their time columns, which
        closing does not free, and read the link model's history), as do :meth:`usage`
        and :meth:`limits`; :meth:`run`
        refuses new schedules. Without it a trace keeps the whole simulation alive
        through its link model, whose clock is this simulation's.
        """
        self._closed = True
        self._links.close()
        for name in ("_ready_s", "_end_s"):
            setattr(self, name, array("d"))
        self._nbytes = self._not_before = self._overhead = self._reduction = Constant()
        self._channels = self._in_order = Constant(0)
        for name in ("_route_ids", "_waiting", "_dependents"):
            setattr(self, name, array("i"))
        self._bounds = array("i", [0])

    def usage(self) -> tuple[np.ndarray, ...]:
        """Per-link drain segments of every transfer run so far: arrays ``(link, flow, start_s, end_s, rate_Bps)``.

        Flows are numbered across all the schedules run on this simulation (see
        :attr:`Trace.flows`); one segment per link of a route and interval of constant rate.
        """
        return self._links.usage()

    def limits(self) -> tuple[np.ndarray, ...]:
        """When each link held each flow back, over every schedule run so far: arrays ``(link, flow, start_s, end_s)``.

        As :attr:`Trace.limits`, with flows numbered across schedules (:attr:`Trace.flows`).
        """
        link, flow, start, end = self._links.limits()
        waited, blocker = self._links.waits()
        started = view(self._links.started_s)[waited]
        issue = view(self._issue_s)[waited]
        late = started > issue
        if not late.any():
            return link, flow, start, end
        return (np.concatenate([link, blocker[late]]).astype(int), np.concatenate([flow, waited[late]]).astype(int),
                np.concatenate([start, issue[late]]), np.concatenate([end, started[late]]))

    def _trace(self, job: _Job) -> Trace:
        """The trace of `job`, which has just finished.

        A job that holds every transfer run so far (the usual single collective) is
        given read-only views of the time columns instead of copies; a later
        :meth:`run` copies a column before it grows it (:func:`simnet.perflow.grown`).
        """
        lo, hi = job.offset, job.offset + job.count
        if lo == 0 and hi == len(self._ready_s):
            def column(values: array) -> np.ndarray:
                frozen = np.frombuffer(values, dtype=float)
                frozen.setflags(write=False)
                return frozen
        else:
            def column(values: array) -> np.ndarray:
                return np.array(values[lo:hi], dtype=float)
        return Trace(
            schedule=job.schedule,
            network=self.network,
            model=self.model,
            ranks=job.ranks,
            begin_s=job.begin_s,
            ready_s=column(self._ready_s),
            issue_s=column(self._issue_s),
            start_s=column(self._links.started_s),
            arrive_s=column(self._links.finished_s),
            end_s=column(self._end_s),
            blocked_by=self._links.queued_for(range(lo, hi)),
            _links=self._links,
            _flows=range(lo, hi),
        )


@dataclass(frozen=True)
class Trace:
    """What happened to one schedule in a simulation; times are simulated seconds.

    Attributes
    ----------
    schedule : Schedule
        The schedule that ran.
    network : Network
        The network it ran on.
    model : str
        Link-sharing model (a key of :data:`simnet.links.LINK_MODELS`).
    ranks : numpy.ndarray
        Network endpoint of each schedule endpoint: the network rank of each
        schedule rank, then the switch endpoints (see :meth:`Network.endpoint`).
    begin_s : float
        The instant the schedule was started.
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
    limits : tuple of numpy.ndarray
        When each link held each transfer back: ``(link, transfer, start_s, end_s)``
        (computed on first access, see :attr:`limits`).
    """

    schedule: Schedule
    network: Network
    model: str
    ranks: np.ndarray
    begin_s: float
    ready_s: np.ndarray
    issue_s: np.ndarray
    start_s: np.ndarray
    arrive_s: np.ndarray
    end_s: np.ndarray
    blocked_by: np.ndarray
    _links: object = field(repr=False, compare=False)
    _flows: range = field(repr=False, compare=False)

    @cached_property
    def usage(self) -> tuple[np.ndarray, ...]:
        """Per-link drain segments: arrays ``(link, transfer, start_s, end_s, rate_Bps)``."""
        link, flow, start, end, rate = self._links.usage(self._flows)
        return link, flow - self._flows.start, start, end, rate

    @cached_property
    def bottlenecks(self) -> tuple[dict[int, float], ...]:
        """Per transfer, ``{link: seconds}`` during which that link limited its rate."""
        limits = self._links.bottlenecks()
        return tuple({int(k): float(v) for k, v in limits.get(f, {}).items()} for f in self._flows)

    @cached_property
    def limits(self) -> tuple[np.ndarray, ...]:
        """When each link held each transfer back: arrays ``(link, transfer, start_s, end_s)``.

        Two kinds of interval: a transfer draining slower than it would alone on its
        route, at the rate a link set (its bottleneck under ``maxmin``; under ``fifo``
        a transfer always drains at its lone rate), and a transfer waiting to start,
        ``[issue_s, start_s]``, for the link it queued for (:attr:`blocked_by`). What
        else crossed that link meanwhile is what slowed the transfer down (see
        :mod:`simnet.jobs`).
        """
        link, flow, start, end = self._links.limits(self._flows)
        waited = (self.blocked_by >= 0) & (self.start_s > self.issue_s)
        index = np.flatnonzero(waited)
        return (np.concatenate([link, self.blocked_by[index]]).astype(int),
                np.concatenate([flow - self._flows.start, index]).astype(int),
                np.concatenate([start, self.issue_s[index]]), np.concatenate([end, self.start_s[index]]))

    @property
    def flows(self) -> range:
        """Flow ids of the transfers in their simulation: transfer ``i`` is flow ``flows[i]``
        (see :meth:`Simulation.usage` and :meth:`Simulation.limits`)."""
        return self._flows

    @property
    def time_s(self) -> float:
        """Completion time of the collective (last transfer's end) after it was started, seconds."""
        return float(self.end_s.max()) - self.begin_s if len(self.end_s) else 0.0

    def route(self, index: int) -> tuple[int, ...]:
        """Links crossed by transfer `index`."""
        table = self.schedule.transfers
        return self.network.route(int(self.ranks[table.src[index]]), int(self.ranks[table.dst[index]]))

    def _hops(self) -> np.ndarray:
        """Links crossed by every transfer."""
        table = self.schedule.transfers
        routes, pair = _pair_routes(self.network, self.ranks[table.src], self.ranks[table.dst])
        return routes.hops[pair]

    def transfers(self):
        """One row per transfer.

        Columns: ``transfer, src, dst, chunk, nbytes, op, stage, hops, ready_s,
        issue_s, start_s, arrive_s, end_s, duration_s`` (``end_s - ready_s``);
        ``src`` and ``dst`` are schedule ranks; ``chunk`` is the first chunk carried.
        Schedules of sparse payloads add ``nnz`` (nonzeros carried), ``dense`` (sent
        in dense form) and ``merged`` (how many ranks' vectors the message sums).
        """
        import pandas as pd

        table = self.schedule.transfers
        frame = pd.DataFrame({
            "transfer": np.arange(len(table)),
            "src": table.src,
            "dst": table.dst,
            "chunk": table.piece_chunks[table.piece_offsets[:-1]][table.piece] if len(table) else table.piece,
            "nbytes": table.nbytes,
            "op": np.asarray(OPS, dtype=object)[table.op],
            "stage": np.asarray(table.stages, dtype=object)[table.stage],
            "hops": self._hops(),
            "ready_s": self.ready_s,
            "issue_s": self.issue_s,
            "start_s": self.start_s,
            "arrive_s": self.arrive_s,
            "end_s": self.end_s,
            "duration_s": self.end_s - self.ready_s,
        })
        if table.sparse:
            frame["nnz"] = table.nnz
            frame["dense"] = table.dense
            frame["merged"] = table.merged
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

    def links(self):
        """One row per directed link: what it carried and how busy it was.

        Columns: ``link, src, dst, cable, tier, bandwidth_Bps, bytes, busy_s,
        utilization, load, peak_flows, held_flow_s`` (``cable`` numbers the cables of a
        bundle). ``bytes`` counts the wire bytes of every transfer routed over the
        link; ``busy_s`` is the time during which at least one transfer drained bytes
        through it (latency phases do not count); ``utilization = busy_s / time_s``;
        ``load = bytes / (bandwidth_Bps * time_s)`` is the fraction of its capacity
        used over the run; ``peak_flows`` is the largest number of transfers
        draining through it at once; ``held_flow_s`` sums, over the transfers, the time
        the link held each back (:meth:`limits`: drained below its lone rate at the
        rate the link set, or waited to start for it), the link where transfers
        competed rather than the one that carried the most. Every column counts this
        trace's transfers only: in a simulation of several schedules (jobs), the others'
        traffic on a link is in their traces.
        """
        net = self.network
        count = len(net.links)
        carried = np.zeros(count)
        table = self.schedule.transfers
        if len(table):
            span = int(self.ranks.max()) + 1
            keys = self.ranks[table.src].astype(np.int64) * span + self.ranks[table.dst]
            pairs, inverse = unique_inverse(keys)
            per_pair = np.bincount(inverse, weights=self.schedule.columns.nbytes, minlength=len(pairs))
            for key, nbytes in zip(pairs.tolist(), per_pair.tolist()):
                route = net.route(*divmod(key, span))
                if route:
                    carried[list(route)] += nbytes
        links, times, active, _ = self._sweep()
        same = links[:-1] == links[1:]
        busy_mask = same & (active[:-1] > 0)
        busy = np.bincount(links[:-1][busy_mask], weights=np.diff(times)[busy_mask], minlength=count)
        peak = np.zeros(count, dtype=int)
        np.maximum.at(peak, links, active)
        makespan = self.time_s
        frame = net.links_frame()[["link", "src", "dst", "cable", "tier", "bandwidth_Bps"]].copy()
        frame["bytes"] = carried
        frame["busy_s"] = busy
        frame["utilization"] = busy / makespan if makespan > 0 else 0.0
        frame["load"] = carried / (net.bandwidth_Bps * makespan) if makespan > 0 else 0.0
        frame["peak_flows"] = peak
        held_link, _, held_start, held_end = self.limits
        frame["held_flow_s"] = np.bincount(held_link, weights=held_end - held_start, minlength=count)
        return frame

    def timeline(self):
        """Utilization of every link over time, piecewise constant, one row per busy interval.

        Columns: ``link, src, dst, cable, tier, start_s, end_s, flows, rate_Bps,
        utilization`` (``rate_Bps / bandwidth_Bps``). Between two rows of a link
        that do not touch, the link is idle. ``rate_Bps`` is the sum of the rates of
        the ``flows`` transfers draining through the link in ``[start_s, end_s)``.
        """
        import pandas as pd

        links, times, active, rates = self._sweep()
        frame = pd.DataFrame({"link": links, "start_s": times, "flows": active, "rate_Bps": rates})
        frame["rate_Bps"] = frame.groupby("link")["rate_Bps"].cumsum()
        frame["end_s"] = frame.groupby("link")["start_s"].shift(-1)
        frame = frame[(frame["flows"] > 0) & (frame["end_s"] > frame["start_s"])]
        info = self.network.links_frame()[["link", "src", "dst", "cable", "tier", "bandwidth_Bps"]]
        frame = frame.merge(info, on="link", how="left")
        frame["utilization"] = frame["rate_Bps"] / frame["bandwidth_Bps"]
        columns = ["link", "src", "dst", "cable", "tier", "start_s", "end_s", "flows", "rate_Bps", "utilization"]
        return frame[columns].reset_index(drop=True)

    def critical_path(self):
        """The chain of waits that determined the completion time, as contiguous segments.

        Starting from the last-finishing transfer (lowest index on ties), each
        transfer's life is cut into segments, and the walk continues with the
        dependency that finished last (the one that released it), until a
        transfer with no dependency. The segments tile ``[begin_s, begin_s + time_s]``:

        ``start_offset``
            its rank had not started yet (``ready_s`` later than its dependencies);
        ``overhead``
            software overhead, ``[ready_s, issue_s]``;
        ``wait``
            queued for a busy link, ``[issue_s, start_s]``: tier of that link;
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
        import pandas as pd

        columns = ["transfer", "src", "dst", "kind", "tier", "start_s", "end_s", "duration_s"]
        if len(self.end_s) == 0:
            return pd.DataFrame(columns=columns)
        rows: list[tuple] = []
        net = self.network
        table = self.schedule.transfers
        index = int(np.argmax(self.end_s))
        while True:
            src, dst = int(table.src[index]), int(table.dst[index])
            route = self.route(index)
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
            deps = table.deps_of(index).tolist()
            released = max(deps, key=lambda d: (self.end_s[d], -d)) if deps else None
            released_s = self.end_s[released] if released is not None else self.begin_s
            pieces.append(("start_offset", {"start_offset": 1.0}, released_s, self.ready_s[index]))
            for kind, shares, begin, end in pieces:
                duration = float(end - begin)
                if duration <= 0:
                    continue
                for tier, share in sorted(shares.items()):
                    rows.append((index, src, dst, kind, tier, float(begin), float(end), duration * share))
            if released is None:
                break
            index = released
        rows.reverse()
        return pd.DataFrame(rows, columns=columns)

    def tiers(self):
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


@gc_paused()
def simulate(
    network: Network,
    schedule: Schedule,
    *,
    model: str = "maxmin",
    sharing: str = "equal",
    overhead_s: float = 0.0,
    gamma_s_per_byte: float | Sequence[float] = 0.0,
    start_offset_s: Sequence[float] | None = None,
    slowdown: Sequence[float] | None = None,
    compiled: bool | None = None,
) -> Trace:
    """Run `schedule` alone on `network` from time 0 and return its :class:`Trace`.

    The one-call form of ``Simulation(env, network, model=...).run(schedule, ...)``
    in a fresh ``simpy.Environment``; see :meth:`Simulation.run` for the options.
    Schedule rank ``i`` runs on network rank ``i``. Nothing else runs in that
    environment, so the simulation keeps its instants on a heap of its own instead of
    scheduling a SimPy event for each (:meth:`Simulation._alone`); the order, the
    clock and every time are those of the environment's loop. Under ``maxmin``, a
    schedule of :data:`COMPILED_FROM` transfers or more runs in the compiled loop of
    :mod:`simnet.kernel`, which gives the same trace bit for bit.

    `compiled` chooses that loop (True) or Python's (False) instead of the size: the compiled loop takes
    a moment to load in a new process (and compiles once per installation), after which it is the
    faster of the two for every schedule of a few thousand transfers or more.

    Raises
    ------
    SimnetError
        For an unknown model, a schedule larger than the network, an overhead,
        γ, offset or slowdown that is not finite and non-negative, or `compiled` under a model other
        than ``maxmin`` (``path`` names it).
    """
    env = simpy.Environment()
    simulation = Simulation(env, network, model=model, sharing=sharing)
    if compiled is not None and not isinstance(compiled, bool):
        raise SimnetError(f"must be True, False or None, got {compiled!r}", path="compiled")
    if compiled and model != "maxmin":
        raise SimnetError(f"the compiled loop runs the 'maxmin' model, got model {model!r}", path="compiled")
    simulation._alone()
    if compiled is None:
        compiled = model == "maxmin" and len(schedule) >= COMPILED_FROM
    if compiled:
        simulation._compiled()
    done = simulation.run(
        schedule, overhead_s=overhead_s, gamma_s_per_byte=gamma_s_per_byte, start_offset_s=start_offset_s,
        slowdown=slowdown,
    )
    if compiled:
        simulation._run_compiled()
    else:
        simulation._run_alone()
    simulation.close()
    return done.value
