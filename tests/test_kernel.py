"""The compiled loop of :mod:`simnet.kernel` against the Python engine it restates: whole traces, bit for bit."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import simpy
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from simnet import engine, kernel
from simnet.algorithms import ALGORITHMS
from simnet.engine import Simulation, simulate
from simnet.network import Network
from simnet.schedule import Schedule, Transfer
from simnet.topology import cluster, load, switch
from tests.test_engine import assert_identical, random_run, under_each

MIB = 2**20


def compiled_and_python(monkeypatch, run):
    """What `run()` returns through the compiled loop (every schedule takes it) and through the Python engine."""
    return under_each(monkeypatch, "simnet.engine.COMPILED_FROM", (0, float("inf")), run)


def recorded_loops(monkeypatch) -> list:
    """Every :class:`simnet.kernel.Loop` made from now on, in the order made."""
    loops = []

    class Recorded(kernel.Loop):
        def __init__(self, nlinks: int) -> None:
            super().__init__(nlinks)
            loops.append(self)

    monkeypatch.setattr(kernel, "Loop", Recorded)
    return loops


def assert_same_run(mine, theirs) -> None:
    """The traces equal, and what the link models keep beneath them: each flow's rate changes in the order
    made (the order across flows at one instant is the loops' own and reaches no output), the submission
    order, the waits for a connection in the order they began."""
    assert_identical(mine, theirs)
    rows = []
    for trace in (mine, theirs):
        links = trace._links
        flow = np.asarray(links._history_flow)
        by_flow = np.argsort(flow, kind="stable")
        rows.append([np.asarray(column)[by_flow] for column in (links._history_flow, links._history_times(),
                                                                  links._history_rate_Bps, links._history_limit)])
    for a, b in zip(*rows, strict=True):
        assert np.array_equal(a, b)
    assert np.array_equal(np.asarray(mine._links._order), np.asarray(theirs._links._order))
    assert list(mine._links.blocked_by.items()) == list(theirs._links.blocked_by.items())


@pytest.mark.parametrize("sharing", ["equal", "rtt_weighted"])
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_compiled_loop_gives_the_trace_of_the_engine_bit_for_bit(monkeypatch, sharing, data):
    """Random waves of transfers on every Hypothesis topology: shared links, queued connections on channels,
    zero-byte synchronisations, flows that finish together, software overhead, reductions (γ), late ranks
    and stragglers; every array of the trace and of the rate history is the same."""
    net, schedule, options = random_run(data, stragglers=True)
    mine, theirs = compiled_and_python(monkeypatch, lambda: simulate(net, schedule, sharing=sharing, **options))
    assert_same_run(mine, theirs)
    assert mine.time_s == theirs.time_s


@pytest.mark.parametrize("algorithm,params", [
    ("nccl_ring", {"channels": 4}),
    ("nccl_ring", {"channels": 2, "protocol": "ll128"}),
    ("nccl_tree", {"channels": 2}),
    ("nvls_tree", {}),
    ("blueconnect", {}),
])
def test_nccl_and_hierarchical_schedules_on_dgx_h100_servers_match(monkeypatch, algorithm, params):
    """Pipelined channels that queue on their connections, trees, in-switch reduction (NVLS) and BlueConnect's
    stages on 4 DGX H100: the same traces and the same critical path."""
    net = Network(cluster("dgx_h100", 4, fabric="switch", fabric_params={"bandwidth_Bps": 48e9, "latency_s": 1e-6}))
    chosen = ALGORITHMS[algorithm]
    schedule = chosen.build(32, 16 * MIB, **chosen.resolved(net, 16 * MIB, params))
    mine, theirs = compiled_and_python(monkeypatch, lambda: simulate(net, schedule, gamma_s_per_byte=1e-12))
    assert_same_run(mine, theirs)
    assert mine.critical_path().equals(theirs.critical_path())


@pytest.mark.parametrize("flows,components", [(0, 2), (4, 2), (24, 4), (96, 64)])
@pytest.mark.parametrize("algorithm,params", [("nccl_ring", {"channels": 4}), ("nccl_tree", {"channels": 2})])
def test_remembered_allocations_give_the_fill_of_the_engine(monkeypatch, flows, components, algorithm, params):
    """The loop remembers the allocation of a component's multiset of routes; with room for none, with so little
    room that most components are too large to keep and the table is forgotten over and over, and with room
    to hit, the traces are those of the Python engine."""
    monkeypatch.setattr(kernel, "_REMEMBERED_FLOWS", flows)
    monkeypatch.setattr(kernel, "_REMEMBERED_COMPONENTS", components)
    loops = recorded_loops(monkeypatch)
    net = Network(cluster("dgx_h100", 4, fabric="switch", fabric_params={"bandwidth_Bps": 48e9, "latency_s": 1e-6}))
    chosen = ALGORITHMS[algorithm]
    schedule = chosen.build(32, 4 * MIB, **chosen.resolved(net, 4 * MIB, params))
    mine, theirs = compiled_and_python(monkeypatch, lambda: simulate(net, schedule))
    assert_same_run(mine, theirs)
    (loop,) = loops
    assert loop.counters[kernel._MEMO_USED] <= flows
    assert 2 * loop.counters[kernel._MEMO_ENTRIES] <= components
    if flows in (0, 96):
        assert (loop.counters[kernel._MEMO_ENTRIES] > 0) == (flows > 0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data(), room=st.sampled_from([(4, 2), (24, 4), (96, 64)]))
def test_remembered_allocations_on_random_runs_give_the_fill_of_the_engine(monkeypatch, data, room):
    """Random waves of transfers on every Hypothesis topology, whose components mix flows of different rates
    and bottlenecks, with little room to remember them: the traces are those of the Python engine."""
    monkeypatch.setattr(kernel, "_REMEMBERED_FLOWS", room[0])
    monkeypatch.setattr(kernel, "_REMEMBERED_COMPONENTS", room[1])
    net, schedule, options = random_run(data, stragglers=True)
    mine, theirs = compiled_and_python(monkeypatch, lambda: simulate(net, schedule, **options))
    assert_same_run(mine, theirs)


@pytest.mark.parametrize("components", [0, 1, 3, 6])
def test_a_table_of_remembered_components_that_probing_could_not_end_in_is_refused(monkeypatch, components):
    """Open addressing ends because the table is a power of two of at least 2 slots and at most half full."""
    monkeypatch.setattr(kernel, "_REMEMBERED_COMPONENTS", components)
    with pytest.raises(ValueError, match=f"power of two of at least 2 slots, got {components}"):
        kernel.Loop(4)


def test_a_remembered_allocation_is_found_only_for_the_same_routes():
    """A component is recalled by the sorted routes of its flows, whatever their numbers: a digest that
    collides with another multiset's, or the same routes in a different count, is not a match; a full table
    is forgotten before the next component is kept."""
    memo = {"digest": np.zeros(4, dtype=np.uint64), "start": np.zeros(4, dtype=np.int64),
            "size": np.zeros(4, dtype=np.int32), "route": np.zeros(8, dtype=np.int64),
            "rate": np.zeros(8), "limit": np.zeros(8, dtype=np.int32)}
    tables = tuple(memo[name] for name in ("digest", "start", "size", "route", "rate", "limit"))

    def packed(*pairs):
        return np.array(sorted((route << kernel._ROUTE_SHIFT) | flow for route, flow in pairs), dtype=np.int64)

    slot_of = np.arange(8, dtype=np.int32)
    out_rate = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
    out_limit = np.arange(10, 18, dtype=np.int32)
    kept = packed((7, 0), (3, 1), (7, 2))
    digest = np.uint64(kernel._digest(kept, 3))
    entries, used = kernel._keep(*tables, kept, 3, digest, slot_of, out_rate, out_limit, 0, 0)
    assert (entries, used) == (1, 3)
    assert memo["route"][:3].tolist() == [3, 7, 7]
    assert memo["rate"][:3].tolist() == [2.0, 1.0, 3.0] and memo["limit"][:3].tolist() == [11, 10, 12]

    same_routes = packed((7, 5), (3, 4), (7, 6))
    assert kernel._digest(same_routes, 3) == digest
    assert kernel._recall(*tables[:4], same_routes, 3, digest) == 0
    other_routes = packed((7, 0), (4, 1), (7, 2))
    assert kernel._recall(*tables[:4], other_routes, 3, digest) == -1
    assert kernel._recall(*tables[:4], same_routes[:2], 2, np.uint64(kernel._digest(same_routes, 2))) == -1

    entries, used = kernel._keep(*tables, other_routes, 3, digest, slot_of, out_rate, out_limit, entries, used)
    assert (entries, used) == (2, 6)
    assert kernel._recall(*tables[:4], other_routes, 3, digest) == 3
    assert kernel._recall(*tables[:4], same_routes, 3, digest) == 0
    alone = np.uint64(kernel._digest(same_routes, 1))
    entries, used = kernel._keep(*tables, same_routes[:1], 1, alone, slot_of, out_rate, out_limit, entries, used)
    assert (entries, used) == (1, 1)
    assert kernel._recall(*tables[:4], same_routes, 3, digest) == -1


def test_a_rail_optimised_cluster_under_rtt_weighted_sharing_matches(monkeypatch):
    """The preset 32-server DGX H100 cluster's fabric (NIC rails, leaf-spine) with weighted sharing, whose
    sums depend on the order flows joined a link."""
    net = Network(load("dgx_h100_ndr_32"))
    schedule = ALGORITHMS["nccl_ring"].build(net.size, 256 * 1024, channels=2)
    mine, theirs = compiled_and_python(monkeypatch, lambda: simulate(net, schedule, sharing="rtt_weighted"))
    assert_same_run(mine, theirs)


def test_an_empty_schedule_and_a_schedule_of_copies_within_ranks(monkeypatch):
    """Nothing to run, and transfers over empty routes (a rank to itself) that finish at once."""
    net = Network(load("dgx_h100"))
    empty = Schedule(collective="allreduce", nranks=8, chunk_bytes=(1,), transfers=())
    mine, theirs = compiled_and_python(monkeypatch, lambda: simulate(net, empty))
    assert mine.time_s == theirs.time_s == 0.0
    copies = tuple(Transfer(k, k, (0,), MIB, src_buffer="input") for k in range(8))
    schedule = Schedule(collective="allreduce", nranks=8, chunk_bytes=(MIB,), transfers=copies + tuple(
        Transfer(k, (k + 1) % 8, (0,), MIB, "reduce", deps=(k,)) for k in range(8)))
    mine, theirs = compiled_and_python(monkeypatch, lambda: simulate(net, schedule, overhead_s=1e-6))
    assert_same_run(mine, theirs)
    assert [len(mine.route(k)) for k in range(8)] == [0] * 8
    assert np.array_equal(mine.end_s[:8], mine.issue_s[:8])


def test_the_compiled_loop_refuses_a_simulation_of_several_schedules():
    """It runs one schedule alone (what simulate() gives it); two would share its count of transfers left."""
    net = Network(load("dgx_h100"))
    simulation = Simulation(simpy.Environment(), net)
    simulation._alone()
    simulation._compiled()
    for _ in range(2):
        simulation.run(ALGORITHMS["ring"].build(8, MIB))
    with pytest.raises(ValueError, match="one schedule alone, got 2"):
        simulation._run_compiled()


def test_what_the_compiled_loop_returns_owns_its_memory(monkeypatch):
    """The loop works through views that own nothing; what it returns must hold its memory (an array over a
    view neither owns its data nor has a base), grown history included (a 64-rank ring changes rates far
    more than the 1024 entries the history starts with, here given no room ahead), and keep its values once the
    trace is dropped and memory is reused."""
    captured = []
    run = kernel.run

    def keeping(*args):
        returned = run(*args)
        for item in returned:
            captured.extend(item if isinstance(item, tuple) else (item,))
        return returned

    monkeypatch.setattr(kernel, "run", keeping)
    monkeypatch.setattr("simnet.engine.COMPILED_FROM", 0)
    monkeypatch.setattr(kernel, "_CHANGES_PER_TRANSFER", 0)
    net = Network(cluster("dgx_h100", 8, fabric="switch", fabric_params={"bandwidth_Bps": 50e9, "latency_s": 1e-6}))
    trace = simulate(net, ALGORITHMS["ring"].build(64, 64 * MIB))
    history = captured[1]
    assert len(history) > 1024
    assert all(array.flags.owndata or array.base is not None for array in captured)
    copies = [array.copy() for array in captured]
    del trace
    gc.collect()
    filler = [np.full(len(array), -7, dtype=array.dtype) for array in captured]
    assert all(np.array_equal(array, copy) for array, copy in zip(captured, copies, strict=True))
    del filler


def test_the_history_keeps_a_time_per_instant_and_gives_one_per_change(monkeypatch):
    """A 64-rank ring in 16 chunks changes rates at more than the 1024 instants the history starts with room
    for, many flows at each: the loop keeps one time per instant, and its results give every change its
    instant's time, as the Python engine records them."""
    loops = recorded_loops(monkeypatch)
    net = Network(switch(64, 12.5e9, 1e-6))
    schedule = ALGORITHMS["ring"].build(64, 16 * MIB, chunks=16)
    mine, theirs = compiled_and_python(monkeypatch, lambda: simulate(net, schedule))
    assert_same_run(mine, theirs)
    counters = loops[0].counters
    instants, changes = int(counters[kernel._INSTANTS]), int(counters[kernel._HISTORY])
    history_s = np.asarray(mine._links._history_times())
    assert 1024 < instants < changes == len(history_s)
    assert instants == len(np.unique(history_s)) and (np.diff(history_s) >= 0).all()


def test_a_loop_makes_room_in_its_rate_history_for_the_changes_of_its_transfers():
    """Room for the history is made with room for transfers (untouched pages cost nothing), so that it rarely
    grows, which holds a full history twice for a moment; room already made keeps its changes."""
    loop = kernel.Loop(4)
    loop.reserve(5000, 1, 1, np.array([5000]))
    flow, _, rate, limit = kernel._history_slices(loop.history_ints, loop.history_reals, loop.history_ends,
                                                  kernel._CHANGES_PER_TRANSFER * 5000, 0)
    assert len(flow) == len(rate) == len(limit) == kernel._CHANGES_PER_TRANSFER * 5000 >= 5000
    flow[:3] = [7, 8, 9]
    loop.counters[kernel._HISTORY] = 3
    loop.reserve(20_000, 1, 1, np.array([20_000]))
    grown, *_ = kernel._history_slices(loop.history_ints, loop.history_reals, loop.history_ends,
                                       kernel._CHANGES_PER_TRANSFER * 20_000, 0)
    assert len(grown) == kernel._CHANGES_PER_TRANSFER * 20_000 and grown[:3].tolist() == [7, 8, 9]


def test_finished_times_shared_with_the_completions_must_hold_every_transfer():
    """The loop writes the times it shares without bounds checks, so room for fewer transfers than it reserves
    is refused (a run without reductions shares its completion times: see the bit-for-bit tests)."""
    loop = kernel.Loop(4)
    loop.share_finished(np.full(3, np.nan))
    with pytest.raises(ValueError, match="hold 3 transfers, not 4"):
        loop.reserve(4, 1, 1, np.array([4]))


def programs(data, net: Network, schedule: Schedule) -> list[tuple]:
    """SimPy processes that start `schedule` on drawn GPUs: after a delay (none, or a whole or half number of
    microseconds, so that starts meet the network's instants and each other), `repeat` times, each time
    waiting for it to complete or starting the next a microsecond later (background rounds)."""
    drawn = data.draw(st.lists(st.tuples(st.sampled_from([0.0, 0.5e-6, 1e-6, 2e-6, 3e-6]), st.integers(1, 3),
                                         st.booleans()), min_size=1, max_size=4), label="processes")
    return [(start, repeat, wait, data.draw(st.permutations(range(net.size)), label="ranks")[:schedule.nranks])
            for start, repeat, wait in drawn]


def driven(net: Network, schedule: Schedule, options: dict, sharing: str, plan: list[tuple], compiled: bool):
    """The traces delivered to `plan`'s processes with the clock at delivery, run by SimPy's loop or driven by
    the compiled one; None if the compiled loop met an instant SimPy's clock would not land on."""
    env = simpy.Environment()
    sim = Simulation(env, net, sharing=sharing)
    if compiled:
        sim._resumable()
    delivered = []

    def process(start, repeat, wait, ranks):
        if start:
            yield env.timeout(start)
        for _ in range(repeat):
            done = sim.run(schedule, ranks=ranks, **options)
            if wait:
                trace = yield done
                delivered.append((env.now, trace))
            else:
                done.callbacks.append(lambda event: delivered.append((env.now, event.value)))
                yield env.timeout(1e-6)

    for item in plan:
        env.process(process(*item))
    try:
        sim._drive() if compiled else env.run()
    except engine._Unreachable:
        return None
    return delivered


@pytest.mark.parametrize("sharing", ["equal", "rtt_weighted"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_compiled_loop_drives_simpy_processes_as_simpys_loop_does(sharing, data):
    """Random waves of transfers started by several SimPy processes, at once, at the network's instants, again
    when they complete or without waiting: stopped before each of the environment's events and at each
    completion, the compiled loop delivers the same traces in the same order at the same clock, and leaves
    the same rate history."""
    net, schedule, options = random_run(data, stragglers=True)
    assert_driven_alike(data, net, schedule, options, sharing)


def assert_driven_alike(data, net: Network, schedule: Schedule, options: dict, sharing: str) -> None:
    """Drawn SimPy processes of `schedule` (:func:`programs`), run by SimPy's loop and driven by the compiled one,
    deliver the same traces in the same order at the same clock and leave the same rate history."""
    plan = programs(data, net, schedule)
    theirs = driven(net, schedule, options, sharing, plan, compiled=False)
    mine = driven(net, schedule, options, sharing, plan, compiled=True)
    assume(mine is not None)
    assert [now for now, _ in mine] == [now for now, _ in theirs]
    for (_, a), (_, b) in zip(mine, theirs, strict=True):
        assert a.schedule is b.schedule and a.begin_s == b.begin_s and a.flows == b.flows
        assert_identical(a, b)
    if mine:
        assert_same_run(mine[-1][1], theirs[-1][1])


@pytest.mark.parametrize("sharing", ["equal", "rtt_weighted"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_slots_grown_as_flows_need_them_give_the_trace_of_the_engine(monkeypatch, sharing, data):
    """With room for one draining flow at first, the loop stops before every instant that might start more
    flows than it has free slots, grows them and goes on: run alone and driven through SimPy processes, the
    traces are those of the Python engine bit for bit."""
    monkeypatch.setattr(kernel, "_FIRST_SLOTS", 1)
    net, schedule, options = random_run(data, stragglers=True)
    mine, theirs = compiled_and_python(monkeypatch, lambda: simulate(net, schedule, sharing=sharing, **options))
    assert_same_run(mine, theirs)
    assert_driven_alike(data, net, schedule, options, sharing)


def test_a_completion_in_an_instant_the_loop_stops_in_to_grow_is_still_delivered_then(monkeypatch):
    """Job A ends at the instant where B's first transfer releases a copy inside a rank (an event at that same
    instant) and twelve sends: with more events pending than free slots, the loop stops there to grow them
    (``_FULL``) before the instant is over, and must still end the instant with A's completion, so that A's
    process goes on then, as under SimPy's loop (it went on at the next completion, B's, 1 ms later)."""
    net = Network(switch(32, 12.5e9, 1e-6))

    def schedule(*transfers: Transfer) -> Schedule:
        return Schedule(collective="allreduce", nranks=32, chunk_bytes=(MIB,), transfers=transfers)

    jobs = {
        "a": (schedule(Transfer(0, 1, (0,), MIB)), {}),
        "b": (schedule(Transfer(2, 3, (0,), MIB),
                       Transfer(3, 3, (0,), MIB, deps=(0,), src_buffer="work", dst_buffer="scratch"),
                       *(Transfer(3, 10 + k, (0,), MIB, deps=(0,)) for k in range(12))), {}),
        "c": (schedule(Transfer(4, 5, (0,), 64 * MIB)), {}),
        "d": (schedule(Transfer(6, 7, (0,), MIB), *(Transfer(7, 24 + k, (0,), MIB) for k in range(4))),
              {"overhead_s": 5e-3}),
    }

    def run(compiled: bool) -> dict:
        env = simpy.Environment()
        sim = Simulation(env, net)
        if compiled:
            sim._resumable()
        seen = {}

        def process(name: str):
            one, options = jobs[name]
            trace = yield sim.run(one, **options)
            seen[name] = (env.now, trace.time_s)
            if name == "a":
                again = yield sim.run(one)
                seen["a again"] = (env.now, again.time_s)

        for name in jobs:
            env.process(process(name))
        sim._drive() if compiled else env.run()
        return seen

    theirs = run(compiled=False)
    monkeypatch.setattr(kernel, "_FIRST_SLOTS", 1)
    loops = recorded_loops(monkeypatch)
    assert run(compiled=True) == theirs
    assert theirs["a"][0] < theirs["b"][0] and loops[0]._slots > 16


def test_slots_made_room_for_as_connections_come_one_by_one_double(monkeypatch):
    """A driven run reserves again at each stop with one more connection: the room for slots doubles (13
    layouts for 4096 connections), it is not laid out anew for each."""
    loop = kernel.Loop(1000)
    sizes = []
    real = loop._relayout
    monkeypatch.setattr(loop, "_relayout", lambda slots, width: (sizes.append(slots), real(slots, width)))
    for lines in range(1, 4097):
        loop.reserve(10 * lines, lines, 6, np.array([10 * lines]))
    assert sizes == [2**k for k in range(13)]


def test_slots_grow_no_further_than_the_connections_can_drain(monkeypatch):
    """A ring of 64 sub-chunks issues many transfers on each of its 16 connections at once: more pending events
    than slots, but never more than 16 flows draining, so from room for 8 the slots stop at 16."""
    loops = recorded_loops(monkeypatch)
    monkeypatch.setattr(engine, "COMPILED_FROM", 0)
    monkeypatch.setattr(kernel, "_FIRST_SLOTS", 8)
    simulate(Network(switch(16, 12.5e9, 1e-6)), ALGORITHMS["ring"].build(16, 64 * MIB, chunks=64))
    (loop,) = loops
    assert loop._slots == int(loop.counters[kernel._SLOTS_NEEDED]) == 16


def test_an_all_to_all_holds_slots_for_the_flows_that_drain_together(monkeypatch):
    """The pairwise all-to-all on 64 ranks uses 4032 connections one step after another: at most 64 flows
    drain at once, so from room for 8 the slots grow to twice that many, not to one per connection;
    the trace is that of a loop with room for every connection from the start."""
    from simnet.algorithms import direct_alltoall

    loops = recorded_loops(monkeypatch)
    monkeypatch.setattr(engine, "COMPILED_FROM", 0)
    net = Network(switch(64, 12.5e9, 1e-6))
    schedule = direct_alltoall(64, 4 * MIB)
    monkeypatch.setattr(kernel, "_FIRST_SLOTS", 8)
    grown = simulate(net, schedule)
    monkeypatch.setattr(kernel, "_FIRST_SLOTS", 2**31)
    whole = simulate(net, schedule)
    assert_same_run(grown, whole)
    assert [loop._slots for loop in loops] == [128, 64 * 63]
    assert int(loops[0].counters[kernel._SLOTS_NEEDED]) == 64 * 63


def test_an_instant_simpys_clock_cannot_land_on_stops_the_compiled_loop():
    """A schedule started at 0.31 µs whose transfer is issued after a start offset and an overhead: the sum is
    not where SimPy's clock lands from 0.31 µs (``now + (t - now) != t``), so the compiled loop refuses to go
    on rather than give a clock SimPy's loop would not."""
    now, offset, overhead = 3.133201784809455e-07, 2.0810475128435035e-05, 0.0006150309700816586
    issue = (now + offset) + overhead
    assert now + (issue - now) != issue
    net = Network(load("dgx_h100"))
    one = Schedule(collective="allreduce", nranks=2, chunk_bytes=(1,), transfers=(Transfer(0, 1, (0,), MIB),))

    def run(compiled: bool):
        env = simpy.Environment()
        sim = Simulation(env, net)
        if compiled:
            sim._resumable()

        def process():
            yield env.timeout(now)
            return (yield sim.run(one, start_offset_s=[offset, offset], overhead_s=overhead))

        started = env.process(process())
        sim._drive() if compiled else env.run()
        return started.value

    trace = run(compiled=False)
    assert trace.issue_s[0] == issue
    with pytest.raises(engine._Unreachable):
        run(compiled=True)


def test_a_loop_that_grows_keeps_every_links_holders_in_order():
    """Room for more slots and longer routes moves each holder node ``slot * width + hop`` to the same slot
    and hop of the wider layout: every link's list of holders reads the same flows in the same order, back
    and forth, and the new slots are free."""
    loop = kernel.Loop(5)
    loop.reserve(transfers=8, lines=3, width=2, job_sizes=np.array([8]))
    arrays = loop._arrays
    holders = {0: [(0, 0), (2, 1)], 3: [(1, 0), (0, 1), (2, 0)]}
    for link, nodes in holders.items():
        previous = -1
        for slot, hop in nodes:
            node = slot * 2 + hop
            arrays["holder_flow"][node] = 10 * slot + hop
            arrays["holder_prev"][node] = previous
            if previous >= 0:
                arrays["holder_next"][previous] = node
            else:
                arrays["link_head"][link] = node
            previous = node
        arrays["holder_next"][previous] = -1
        arrays["link_tail"][link] = previous
    loop.counters[kernel._FREE] = 0

    loop.reserve(transfers=20, lines=9, width=4, job_sizes=np.array([8]))
    arrays = loop._arrays
    assert loop.width == 4 and len(arrays["slot_rate"]) == 9
    for link, nodes in holders.items():
        forward, node = [], arrays["link_head"][link]
        while node >= 0:
            forward.append(int(arrays["holder_flow"][node]))
            assert node == 4 * (forward[-1] // 10) + forward[-1] % 10
            node = arrays["holder_next"][node]
        backward, node = [], arrays["link_tail"][link]
        while node >= 0:
            backward.append(int(arrays["holder_flow"][node]))
            node = arrays["holder_prev"][node]
        assert forward == [10 * slot + hop for slot, hop in nodes] == backward[::-1]
    free = int(loop.counters[kernel._FREE])
    assert sorted(arrays["free_slots"][:free].tolist()) == list(range(3, 9))
    assert (arrays["link_head"][[1, 2, 4]] == -1).all()


@settings(max_examples=200, deadline=None)
@given(size=st.integers(0, 300), pattern=st.sampled_from(["drawn", "sorted", "reversed", "organ pipe"]),
       data=st.data())
def test_the_loops_sort_sorts_any_range_of_any_order(size, pattern, data):
    """``_sort`` sorts ``values[low:high]`` in place and leaves the rest alone, on drawn values (duplicates
    included), sorted, reversed and organ-pipe orders, short (insertion) and long (introsort) ranges; so does
    the introsort when it turns to heapsort after 0 to 3 splits."""
    values = data.draw(st.lists(st.integers(-2**31, 2**31 - 1) | st.integers(0, 3), min_size=size, max_size=size))
    if pattern == "sorted":
        values = sorted(values)
    elif pattern == "reversed":
        values = sorted(values, reverse=True)
    elif pattern == "organ pipe":
        values = sorted(values)[::2] + sorted(values)[1::2][::-1]
    low = data.draw(st.integers(0, len(values)))
    high = data.draw(st.integers(low, len(values)))
    expected = values[:low] + sorted(values[low:high]) + values[high:]
    array = np.array(values, dtype=np.int64)
    kernel._sort(array, low, high)
    assert array.tolist() == expected
    if high - low > kernel._SHORT:
        depth = data.draw(st.integers(0, 3), label="depth before heapsort")
        array = np.array(values, dtype=np.int64)
        kernel._introsort(array, low, high, depth)
        assert array.tolist() == expected


def test_the_loops_sort_sorts_the_order_its_event_heap_pops_equal_times_in():
    """Flows popped from the event heap at one time, as an instant collects them (from the back of a buffer):
    the order on which Numba's own quicksort takes quadratic time (``docs/performance.md``, round fifteen)."""
    count = 4096
    heap_flow, heap_time = np.zeros(count, dtype=np.int32), np.zeros(count)
    place = np.full(count, -1, dtype=np.int32)
    size = 0
    for flow in range(count):
        size = kernel._schedule(heap_flow, heap_time, place, size, flow, 1.0)
    popped = np.empty(count, dtype=np.int32)
    for position in range(count - 1, -1, -1):
        popped[position] = heap_flow[0]
        size = kernel._unschedule(heap_flow, heap_time, place, size)
    assert sorted(popped.tolist()) == list(range(count))
    kernel._sort(popped, 0, count)
    assert popped.tolist() == list(range(count))


@settings(max_examples=300, deadline=None)
@given(times=st.lists(st.sampled_from([0.0, 1.0, 2.0, np.inf]) | st.floats(0, 10), min_size=1, max_size=40),
       size=st.integers(1, 40), at=st.integers(0, 10))
def test_the_event_heaps_least_child_is_the_first_of_the_earliest(times, size, at):
    """Of the up to four children ``4 at + 1 ..`` of a position within the heap's `size` events, the earliest,
    the first of equal times (so the heap's order does not depend on how the children are compared), or -1."""
    size = min(size, len(times))
    children = range(4 * at + 1, min(4 * at + 5, size))
    expected = min(children, key=lambda child: (times[child], child)) if len(children) else -1
    assert kernel._least_child(np.array(times), size, at) == expected
    assert kernel._least_child(np.array([5.0, 1.0, 1.0, 1.0, 1.0]), 5, 0) == 1
