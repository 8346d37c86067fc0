"""Tests of simnet.engine: overheads, reductions, offsets, stragglers, the Trace's telemetry, and SimPy composition."""

from __future__ import annotations

import functools
import gc
import math
import sys
import weakref

import networkx as nx
import numpy as np
import pytest
import simpy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simnet.algorithms import ALGORITHMS, ring_allreduce
from simnet.algorithms.hierarchy import hierarchy_factors
from simnet.algorithms.dense import ring_allreduce_time
from simnet.engine import Simulation, Trace, simulate
from simnet.errors import SimnetError
from simnet import links as link_models
from simnet.links import LINK_MODELS
from simnet.network import Network
from simnet.schedule import Schedule, Transfer
from simnet.topology import add_cable, cluster, switch
from tests.test_maxmin_reference import TOPOLOGIES, random_graphs

B = 12.5e9
LAT = 1e-6
MIB = 2**20


def independent(pairs: list[tuple[int, int]], nbytes: int, op: str = "copy", nranks: int = 3) -> Schedule:
    """Transfers with no dependencies, all ready at time 0."""
    transfers = tuple(Transfer(src=s, dst=d, chunks=(0,), nbytes=nbytes, op=op) for s, d in pairs)
    return Schedule(collective="allreduce", nranks=nranks, chunk_bytes=(1,), transfers=transfers)


def one(src: int, dst: int, nbytes: int, op: str = "copy", nranks: int = 2) -> Schedule:
    return independent([(src, dst)], nbytes, op, nranks)


def two_tier() -> nx.DiGraph:
    """Two hosts of two GPUs: NVLink inside a host (fast), one InfiniBand cable between hosts."""
    graph = nx.DiGraph(name="two-tier")
    for i in range(4):
        graph.add_node(f"gpu{i}", kind="gpu", host=i // 2)
    for h in range(2):
        graph.add_node(f"nic{h}", kind="nic", host=h)
        add_cable(graph, f"gpu{2 * h}", f"gpu{2 * h + 1}", 150e9, 0.5e-6, "nvlink")
        for g in (2 * h, 2 * h + 1):
            add_cable(graph, f"gpu{g}", f"nic{h}", 25e9, 1e-6, "pcie")
    add_cable(graph, "nic0", "nic1", 12.5e9, 2e-6, "ib")
    return graph


@pytest.mark.parametrize("model", sorted(LINK_MODELS))
def test_overhead_adds_to_every_message_of_the_ring(model):
    p, size, overhead = 8, 8 * MIB, 5e-6
    net = Network(switch(p, B, LAT))
    trace = simulate(net, ring_allreduce(p, size), model=model, overhead_s=overhead)
    assert trace.time_s == pytest.approx(ring_allreduce_time(p, size, 2 * LAT + overhead, 1 / B), rel=1e-9)
    assert np.allclose(trace.issue_s - trace.ready_s, overhead, rtol=1e-9, atol=0)


@pytest.mark.parametrize("model", sorted(LINK_MODELS))
def test_gamma_delays_each_reduce_transfer_after_its_last_byte(model):
    p, size, gamma = 8, 8 * MIB, 1 / 200e9
    net = Network(switch(p, B, LAT))
    trace = simulate(net, ring_allreduce(p, size), model=model, gamma_s_per_byte=gamma)
    m = size // p
    assert trace.time_s == pytest.approx(ring_allreduce_time(p, size, 2 * LAT, 1 / B) + (p - 1) * m * gamma, rel=1e-9)
    frame = trace.transfers()
    reduce = frame[frame["op"] == "reduce"]
    assert np.allclose(reduce["end_s"] - reduce["arrive_s"], m * gamma, rtol=1e-9)
    copy = frame[frame["op"] == "copy"]
    assert (copy["end_s"] == copy["arrive_s"]).all()


def test_per_rank_gamma_and_stragglers_apply_at_the_reducing_rank():
    net = Network(switch(3, B, LAT))
    lone = net.transfer_time_s(0, 1, MIB)
    trace = simulate(net, one(0, 1, MIB, "reduce", nranks=3), gamma_s_per_byte=[1e-9, 2e-9, 0.0])
    assert trace.time_s == pytest.approx(lone + MIB * 2e-9, rel=1e-12)
    trace = simulate(
        net, one(0, 1, MIB, "reduce", nranks=3), gamma_s_per_byte=1e-9, overhead_s=1e-6, slowdown=[3.0, 2.0, 1.0]
    )
    assert trace.time_s == pytest.approx(3e-6 + lone + MIB * 2e-9, rel=1e-12)


@pytest.mark.parametrize("model", sorted(LINK_MODELS))
def test_start_offset_delays_the_ring_by_the_late_rank(model):
    """Each ring transfer depends on one earlier transfer, so a late rank delays its chains by its offset;
    its next messages queue behind the late one on the same connection, under either model."""
    p, size, late = 8, 8 * MIB, 30e-6
    net = Network(switch(p, B, LAT))
    offsets = [late] + [0.0] * (p - 1)
    trace = simulate(net, ring_allreduce(p, size), model=model, start_offset_s=offsets)
    assert trace.time_s == pytest.approx(ring_allreduce_time(p, size, 2 * LAT, 1 / B) + late, rel=1e-9)
    assert trace.ready_s[0] == trace.start_s[0] == late
    assert trace.tiers()["time_s"].sum() == pytest.approx(trace.time_s, rel=1e-9)


def test_messages_of_one_connection_drain_in_order_under_maxmin():
    net = Network(switch(3, B, LAT))
    schedule = independent([(0, 1)] * 3, MIB)
    maxmin = simulate(net, schedule)
    fifo = simulate(net, schedule, model="fifo")
    assert maxmin.end_s == pytest.approx(fifo.end_s, rel=1e-12)
    assert maxmin.end_s == pytest.approx([2 * LAT + k * MIB / B for k in (1, 2, 3)], rel=1e-12)
    assert maxmin.start_s == pytest.approx(fifo.start_s, rel=1e-9, abs=1e-18)
    assert maxmin.blocked_by.tolist() == [-1, net.link("gpu0", "switch"), net.link("gpu0", "switch")]
    assert maxmin.links()["peak_flows"].max() == 1


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"model": "ideal"}, "model"),
        ({"overhead_s": -1e-6}, "overhead_s"),
        ({"overhead_s": float("nan")}, "overhead_s"),
        ({"gamma_s_per_byte": -1.0}, "gamma_s_per_byte"),
        ({"gamma_s_per_byte": [1e-9]}, "gamma_s_per_byte"),
        ({"gamma_s_per_byte": "fast"}, "gamma_s_per_byte"),
        ({"start_offset_s": [0.0, -1.0]}, "start_offset_s"),
        ({"slowdown": [1.0, 0.0]}, "slowdown"),
        ({"slowdown": [1.0, float("inf")]}, "slowdown"),
    ],
)
def test_bad_arguments_raise_simnet_error_with_path(kwargs, path):
    net = Network(switch(2, B, LAT))
    with pytest.raises(SimnetError) as info:
        simulate(net, one(0, 1, 10), **kwargs)
    assert info.value.path == path


def test_links_frame_counts_bytes_busy_time_and_peak_flows():
    net = Network(switch(3, B, LAT))
    schedule = independent([(0, 2), (1, 2)], MIB)
    trace = simulate(net, schedule)
    links = trace.links().set_index("link")
    down = links.loc[net.link("switch", "gpu2")]
    assert down["bytes"] == 2 * MIB and down["peak_flows"] == 2
    assert down["busy_s"] == pytest.approx(2 * MIB / B, rel=1e-12)
    assert down["utilization"] == pytest.approx(down["busy_s"] / trace.time_s, rel=1e-12)
    assert down["load"] == pytest.approx(2 * MIB / (B * trace.time_s), rel=1e-12)
    up = links.loc[net.link("gpu0", "switch")]
    assert up["bytes"] == MIB and up["peak_flows"] == 1
    idle = links.loc[net.link("switch", "gpu0")]
    assert idle["bytes"] == 0 and idle["busy_s"] == 0 and idle["peak_flows"] == 0


def test_held_back_time_is_the_time_an_oversubscribed_uplink_kept_transfers_below_their_lone_rate():
    """Halving-doubling on 8 hosts of two leaves under one spine at 4:1 (uplink 12.5 GB/s, the NIC rate): the
    distance-4 steps of its reduce-scatter and all-gather each send 4 transfers of S/8 over each uplink at a
    quarter of their lone rate, so the downlinks progressive filling names hold them back for
    2 x 4 x 4 (S/8) / B in all; no host link holds anything back though each carries more for its capacity."""
    from simnet.topology import build

    bandwidth_Bps = 12.5e9
    graph = build({"builder": "leaf_spine", "leaves": 2, "spines": 1, "hosts_per_leaf": 4,
                   "bandwidth": "100 Gbps", "latency": "1 us", "oversubscription": "4:1"})
    trace = simulate(Network(graph), ALGORITHMS["halving_doubling"].build(8, MIB))
    links = trace.links().set_index(["src", "dst"])
    for leaf in ("leaf0", "leaf1"):
        assert links.loc[("spine0", leaf), "held_flow_s"] == pytest.approx(2 * 4 * 4 * (MIB / 8) / bandwidth_Bps,
                                                                      rel=1e-12)
    hosts = links[[str(dst).startswith("gpu") or str(src).startswith("gpu") for src, dst in links.index]]
    assert hosts["held_flow_s"].max() == 0 and hosts["load"].min() > links.loc[("spine0", "leaf0"), "load"]
    assert links["held_flow_s"].sum() == pytest.approx(sum(end - start for _, _, start, end in zip(*trace.limits)))


def test_fifo_timeline_shows_busy_intervals_back_to_back():
    net = Network(switch(3, B, LAT))
    schedule = independent([(0, 2), (1, 2)], MIB)
    trace = simulate(net, schedule, model="fifo")
    down = trace.timeline().query("link == @net.link('switch', 'gpu2')")
    assert down["flows"].tolist() == [1, 1]
    assert down["rate_Bps"].tolist() == [B, B]
    assert down["end_s"].iloc[0] == down["start_s"].iloc[1]
    path = trace.critical_path()
    wait = path[path["kind"] == "wait"]
    assert wait["tier"].tolist() == ["fabric"] and wait["duration_s"].iloc[0] == pytest.approx(MIB / B, rel=1e-9)


@pytest.mark.parametrize("model", sorted(LINK_MODELS))
def test_tier_breakdown_walks_the_critical_path(model):
    net = Network(two_tier())
    trace = simulate(net, ring_allreduce(4, 16 * MIB), model=model, overhead_s=2e-6, gamma_s_per_byte=1e-11)
    path = trace.critical_path()
    assert path["duration_s"].sum() == pytest.approx(trace.time_s, rel=1e-9)
    tiers = trace.tiers().set_index("tier")
    assert tiers["time_s"].sum() == pytest.approx(trace.time_s, rel=1e-9)
    assert tiers["fraction"].sum() == pytest.approx(1.0, rel=1e-9)
    assert set(tiers.index) == {"ib", "pcie", "nvlink", "overhead", "reduction"}
    assert tiers.index[0] == "ib"
    assert tiers.loc["overhead", "time_s"] == pytest.approx(6 * 2e-6, rel=1e-9)
    assert trace.tiers().equals(trace.tiers())


def test_empty_schedule_gives_empty_telemetry():
    net = Network(switch(2, B, LAT))
    trace = simulate(net, Schedule(collective="allreduce", nranks=2, chunk_bytes=(1,), transfers=()))
    assert trace.time_s == 0.0
    assert trace.links()["busy_s"].sum() == 0 and trace.timeline().empty and trace.critical_path().empty


def test_a_simpy_process_starts_a_collective_and_waits_for_it():
    net = Network(switch(8, B, LAT))
    alone = simulate(net, ring_allreduce(8, 2**20))
    env = simpy.Environment()
    sim = Simulation(env, net)
    seen = {}

    def step(env):
        yield env.timeout(1e-3)
        seen["trace"] = yield sim.run(ring_allreduce(8, 2**20))
        seen["now"] = env.now

    env.process(step(env))
    env.run()
    trace = seen["trace"]
    assert trace.begin_s == 1e-3
    assert trace.time_s == pytest.approx(alone.time_s, rel=1e-12)
    assert seen["now"] == pytest.approx(1e-3 + alone.time_s, rel=1e-12)


def test_collectives_on_disjoint_ranks_run_at_once_as_if_alone():
    net = Network(switch(8, B, LAT))
    alone = simulate(net, ring_allreduce(4, 8 * 2**20))
    env = simpy.Environment()
    sim = Simulation(env, net)
    first = sim.run(ring_allreduce(4, 8 * 2**20), ranks=[0, 1, 2, 3])
    second = sim.run(ring_allreduce(4, 8 * 2**20), ranks=[4, 5, 6, 7])
    env.run()
    for done in (first, second):
        assert np.array_equal(done.value.end_s, alone.end_s)
    assert second.value.route(0) == (net.link("gpu4", "switch"), net.link("switch", "gpu5"))


def test_collectives_sharing_links_slow_each_other_but_not_beyond_back_to_back():
    net = Network(switch(4, B, LAT))
    schedule = ring_allreduce(4, 16 * 2**20)
    alone = simulate(net, schedule).time_s
    env = simpy.Environment()
    sim = Simulation(env, net)
    both = [sim.run(schedule), sim.run(schedule, ranks=[2, 3, 0, 1])]
    env.run()
    for done in both:
        assert alone * (1 - 1e-12) <= done.value.time_s <= 2 * alone * (1 + 1e-12)
    assert max(done.value.time_s for done in both) > 1.5 * alone


@pytest.mark.parametrize("ranks", [[0, 0], [0, 9], [0], [0.0, 1.0]])
def test_a_bad_rank_placement_is_refused_by_name(ranks):
    sim = Simulation(simpy.Environment(), Network(switch(4, B, LAT)))
    with pytest.raises(SimnetError) as info:
        sim.run(one(0, 1, 10), ranks=ranks)
    assert info.value.path == "ranks"


@settings(max_examples=200, deadline=None)
@given(now=st.floats(0, 1e3, allow_subnormal=False), ahead=st.floats(0, 1e3, allow_subnormal=False))
def test_every_instant_is_scheduled_at_the_first_clock_value_not_before_it(now, ahead):
    """SimPy adds the delay to its clock in floating point: the instant is reached exactly, or by the next float."""

    env = simpy.Environment(initial_time=now)
    target = now + ahead
    delay = Simulation(env, Network(switch(2, B, LAT)))._delay(target)
    clock = now + delay
    assert delay >= 0 and target <= clock <= math.nextafter(target, math.inf)
    assert clock == target or now + math.nextafter(delay, 0) < target


def reducing_switch(nranks: int = 4, bandwidth_Bps: float = B, efficiency: float = 1.0) -> nx.DiGraph:
    """GPUs on one switch that can reduce in flight (an NVSwitch with NVLS)."""
    graph = switch(nranks, bandwidth_Bps, LAT)
    graph.nodes["switch"]["reduce"] = True
    graph.nodes["switch"]["reduce_efficiency"] = efficiency
    return graph


@pytest.mark.parametrize("model", sorted(LINK_MODELS))
def test_a_protocol_delay_is_paid_before_the_message_enters_the_network(model):
    net = Network(switch(2, B, LAT))
    table = Schedule(collective="allreduce", nranks=2, chunk_bytes=(1,),
                     transfers=(Transfer(0, 1, (0,), MIB, delay_s=3e-6),))
    trace = simulate(net, table, model=model, overhead_s=1e-6)
    assert trace.issue_s[0] - trace.ready_s[0] == pytest.approx(4e-6, rel=1e-12)
    assert trace.time_s == pytest.approx(4e-6 + 2 * LAT + MIB / B, rel=1e-12)


@pytest.mark.parametrize("model", sorted(LINK_MODELS))
def test_wire_bytes_occupy_the_links_and_payload_bytes_are_reduced(model):
    net = Network(switch(2, B, LAT))
    schedule = Schedule(collective="allreduce", nranks=2, chunk_bytes=(1,),
                        transfers=(Transfer(0, 1, (0,), MIB, op="reduce", wire_bytes=2 * MIB),))
    trace = simulate(net, schedule, model=model, gamma_s_per_byte=1e-12)
    assert trace.arrive_s[0] == pytest.approx(2 * LAT + 2 * MIB / B, rel=1e-12)
    assert trace.end_s[0] - trace.arrive_s[0] == pytest.approx(MIB * 1e-12, rel=1e-12)
    assert trace.links()["bytes"].max() == 2 * MIB


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("in_order", [False, True])
def test_a_connection_drains_waiting_transfers_as_they_came_or_in_program_order(compiled, in_order):
    """Transfers 1 and 2 wait behind 0 on one connection and 2's latency elapses first: it drains first, unless
    the schedule is `in_order` (numbered as the program issues them), where 1 goes first."""
    net = Network(switch(2, B, LAT))
    transfers = (Transfer(0, 1, (0,), MIB), Transfer(0, 1, (1,), MIB, delay_s=2e-6),
                 Transfer(0, 1, (2,), MIB, delay_s=1e-6))
    schedule = Schedule(collective="allreduce", nranks=2, chunk_bytes=(1, 1, 1), transfers=transfers,
                        in_order=in_order)
    trace = simulate(net, schedule, compiled=compiled)
    second, third = (1, 2) if in_order else (2, 1)
    assert trace.end_s[[0, second, third]] == pytest.approx([2 * LAT + k * MIB / B for k in (1, 2, 3)], rel=1e-12)


def test_in_order_is_a_bool():
    with pytest.raises(SimnetError, match="in_order must be True or False"):
        Schedule(collective="allreduce", nranks=2, chunk_bytes=(1,), transfers=(Transfer(0, 1, (0,), MIB),),
                 in_order=1)


def test_channels_between_the_same_endpoints_share_links_and_one_channel_keeps_order():
    net = Network(switch(2, B, LAT))
    transfers = tuple(Transfer(0, 1, (c,), MIB, channel=c) for c in range(2))
    shared = simulate(net, Schedule(collective="allreduce", nranks=2, chunk_bytes=(1, 1), transfers=transfers))
    assert shared.end_s == pytest.approx([2 * LAT + 2 * MIB / B] * 2, rel=1e-12)
    queued = simulate(net, Schedule(collective="allreduce", nranks=2, chunk_bytes=(1, 1),
                                    transfers=tuple(t.__class__(0, 1, t.chunks, MIB) for t in transfers)))
    assert queued.end_s == pytest.approx([2 * LAT + MIB / B, 2 * LAT + 2 * MIB / B], rel=1e-12)


def switch_sum(nranks: int, nbytes: int) -> Schedule:
    """Every rank adds into the switch endpoint, which multicasts the sum back."""
    reduce = tuple(Transfer(r, nranks, (0,), nbytes, op="reduce") for r in range(nranks))
    back = tuple(Transfer(nranks, r, (0,), nbytes, deps=tuple(range(nranks))) for r in range(nranks))
    return Schedule(collective="allreduce", nranks=nranks, chunk_bytes=(nbytes,), transfers=reduce + back,
                    switches=(tuple(range(nranks)),))


@pytest.mark.parametrize("efficiency", [1.0, 0.85])
def test_a_switch_endpoint_runs_on_the_reduce_capable_switch_at_its_efficiency(efficiency):
    net = Network(reducing_switch(4, efficiency=efficiency))
    trace = simulate(net, switch_sum(4, MIB))
    assert [len(trace.route(i)) for i in range(8)] == [1] * 8
    assert trace.time_s == pytest.approx(2 * (LAT + MIB / efficiency / B), rel=1e-12)
    assert trace.ranks.tolist() == [0, 1, 2, 3, net.endpoint("switch")]


def test_critical_path_knows_switches_delays_and_wire_bytes():
    from simnet.models import critical_path_time

    net = Network(reducing_switch(4, efficiency=0.5))
    schedule = switch_sum(4, MIB)
    table = schedule.transfers.replace(delay_s=np.full(8, 1e-6), wire_bytes=np.full(8, 2 * MIB))
    schedule = schedule.replace(transfers=table)
    expected = 2 * (1e-6 + LAT + 2 * MIB / 0.5 / B)
    assert critical_path_time(net, schedule) == pytest.approx(expected, rel=1e-12)
    assert simulate(net, schedule).time_s == pytest.approx(expected, rel=1e-12)


def test_a_switch_endpoint_without_a_reduce_capable_switch_is_refused():
    with pytest.raises(SimnetError, match="no reduce-capable switch") as raised:
        simulate(Network(switch(4, B, LAT)), switch_sum(4, MIB))
    assert raised.value.path == "switches"


@pytest.mark.parametrize("model", sorted(LINK_MODELS))
def test_a_closed_simulation_is_freed_by_reference_counting_and_its_traces_stay_whole(model):
    """A trace reads its link model's history, not the simulation: closing drops the only way back to it."""
    network = Network(switch(4, 1e9, 1e-6))
    env = simpy.Environment()
    sim = Simulation(env, network, model=model)
    done = sim.run(ring_allreduce(4, 4096))
    env.run()
    trace = done.value
    usage = [column.copy() for column in trace.usage]
    sim.close()
    with pytest.raises(SimnetError, match="closed"):
        sim.run(ring_allreduce(4, 4096))
    alive = weakref.ref(sim)
    collecting = gc.isenabled()
    gc.disable()
    try:
        del sim, done
        assert alive() is None
    finally:
        if collecting:
            gc.enable()
    fresh = simulate(network, ring_allreduce(4, 4096), model=model)
    assert trace.time_s == fresh.time_s
    for column, again in zip(usage, fresh.usage):
        np.testing.assert_array_equal(column, again)


@st.composite
def waves(draw, nranks: int) -> list[Transfer]:
    """Random transfers in waves: each wave's transfers wait for one earlier wave, so many start at one instant.

    Sizes include zero-byte synchronisations and equal sizes (flows that finish together), channels make
    connections between the same ranks, and a wave may cross itself (shared links, queued connections).
    """
    transfers: list[Transfer] = []
    previous: tuple[int, ...] = ()
    for _ in range(draw(st.integers(1, 5))):
        first = len(transfers)
        size = draw(st.sampled_from([0, 1, 3 * 2**20]) | st.integers(1, 2**22))
        for _ in range(draw(st.integers(1, 3 * nranks))):
            src = draw(st.integers(0, nranks - 1))
            dst = (src + draw(st.integers(1, nranks - 1))) % nranks
            nbytes = size if draw(st.booleans()) else draw(st.integers(0, 2**22))
            transfers.append(Transfer(src, dst, (0,), nbytes, draw(st.sampled_from(["copy", "reduce"])),
                                      deps=draw(st.sampled_from([(), previous])), channel=draw(st.integers(0, 2))))
        previous = tuple(range(first, len(transfers)))
    return transfers


def random_run(data, *, stragglers: bool = False) -> tuple[Network, Schedule, dict]:
    """A Hypothesis topology, random waves of transfers on its GPUs, and simulate()'s options: no overhead or
    1 µs, γ or none, late ranks or none (and stragglers or none, with `stragglers`)."""
    net = Network(data.draw(TOPOLOGIES, label="graph"))
    p = net.size
    schedule = Schedule(collective="allreduce", nranks=p, chunk_bytes=(1,),
                        transfers=tuple(data.draw(waves(p), label="waves")))
    options = {
        "overhead_s": data.draw(st.sampled_from([0.0, 1e-6]), label="overhead"),
        "gamma_s_per_byte": data.draw(st.sampled_from([0.0, 1e-11]), label="gamma"),
        "start_offset_s": data.draw(st.none() | st.lists(st.sampled_from([0.0, 2e-6]), min_size=p, max_size=p),
                                    label="offsets"),
    }
    if stragglers:
        options["slowdown"] = data.draw(st.none() | st.lists(st.sampled_from([1.0, 2.0]), min_size=p, max_size=p),
                                        label="slowdown")
    return net, schedule, options


def under_each(monkeypatch, attribute: str, values, run) -> list:
    """What `run()` returns with `attribute` (a dotted name) set to each of `values` in turn."""
    results = []
    for value in values:
        monkeypatch.setattr(attribute, value)
        results.append(run())
    return results


def run_both_ways(monkeypatch, run):
    """What `run()` returns with the array path taken wherever it can be, where three flows or more meet
    (the path and the loop mixed in one run), and with the loop only; always in the Python engine, whose
    paths these are (`simnet.engine.COMPILED_FROM` off)."""
    monkeypatch.setattr("simnet.engine.COMPILED_FROM", math.inf)
    return under_each(monkeypatch, "simnet.links.BATCH", (1, 3, 10**9), run)


def assert_identical(mine: Trace, theirs: Trace) -> None:
    for name in ("ready_s", "issue_s", "start_s", "arrive_s", "end_s", "blocked_by"):
        assert np.array_equal(getattr(mine, name), getattr(theirs, name), equal_nan=True), name
    for a, b in zip(mine.usage, theirs.usage, strict=True):
        assert np.array_equal(a, b)
    for a, b in zip(mine.limits, theirs.limits, strict=True):
        assert np.array_equal(a, b)
    assert mine.bottlenecks == theirs.bottlenecks


@pytest.mark.parametrize("model,sharing", [("maxmin", "equal"), ("maxmin", "rtt_weighted"), ("fifo", "equal")])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_array_path_gives_the_trace_of_the_loop_bit_for_bit(monkeypatch, model, sharing, data):
    """Instants with many flows take array arithmetic (`simnet.links.BATCH`); forced on every instant and
    forced off, every array of the trace is the same, for transfers that share links and connections or not."""
    net, schedule, options = random_run(data)
    *mine, theirs = run_both_ways(monkeypatch, lambda: simulate(net, schedule, model=model, sharing=sharing,
                                                                **options))
    for trace in mine:
        assert_identical(trace, theirs)


def with_each_memory(monkeypatch, run):
    """What `run()` returns with max-min's memory of component allocations at its default size, holding at most
    two flows (so forgetting at almost every new allocation), and off (0); always in the Python engine, whose
    memory it is."""
    monkeypatch.setattr("simnet.engine.COMPILED_FROM", math.inf)
    return under_each(monkeypatch, "simnet.links.FLOWS_REMEMBERED", (link_models.FLOWS_REMEMBERED, 2, 0), run)


@pytest.mark.parametrize("sharing", ["equal", "rtt_weighted"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_remembered_allocations_give_the_trace_of_filling_afresh_bit_for_bit(monkeypatch, sharing, data):
    """A component's max-min allocation is remembered by the multiset of its routes
    (`simnet.links.FLOWS_REMEMBERED`): remembered, forgotten at once, or never kept, every array of the trace is
    the same. Weighted sharing never remembers; its case guards that it stays so or stays exact."""
    net = Network(data.draw(TOPOLOGIES, label="graph"))
    p = net.size
    schedule = Schedule(collective="allreduce", nranks=p, chunk_bytes=(1,),
                        transfers=tuple(data.draw(waves(p), label="waves")))
    *mine, theirs = with_each_memory(monkeypatch, lambda: simulate(net, schedule, sharing=sharing))
    for trace in mine:
        assert_identical(trace, theirs)


def test_a_pipelined_ring_fills_each_configuration_of_its_links_once(monkeypatch):
    """NCCL's ring with 4 channels on 4 DGX H100 meets the same multisets of routes chunk after chunk: the
    memory fills 96 components where filling afresh takes 1400, and the trace is the same."""
    net = Network(cluster("dgx_h100", 4, fabric="switch", fabric_params={"bandwidth_Bps": 48e9, "latency_s": 1e-6}))
    schedule = ALGORITHMS["nccl_ring"].build(32, 16 * MIB, gpus_per_node=8, channels=4)
    fills = []
    fill = link_models.MaxMinLinks._fill

    def counted(self, links):
        fills[-1] += 1
        return fill(self, links)

    monkeypatch.setattr(link_models.MaxMinLinks, "_fill", counted)

    def run():
        fills.append(0)
        return simulate(net, schedule)

    remembered, forgotten, afresh = with_each_memory(monkeypatch, run)
    assert fills == [96, 1400, 1400]
    assert_identical(remembered, afresh)
    assert_identical(forgotten, afresh)


@pytest.mark.parametrize("model,sharing", [("maxmin", "equal"), ("maxmin", "rtt_weighted"), ("fifo", "equal")])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_array_path_finishes_concurrent_schedules_as_the_loop_does(monkeypatch, model, sharing, data):
    """Several schedules of one simulation, some finishing at one instant, each with its own placement,
    overhead, γ and stragglers (per-transfer columns of one value turn into arrays mid-run): the same
    traces, delivered in the same order."""
    net = Network(data.draw(random_graphs(), label="graph"))
    p = net.size
    schedules = [Schedule(collective="allreduce", nranks=p, chunk_bytes=(1,),
                          transfers=tuple(data.draw(waves(p), label=f"waves{k}"))) for k in range(3)]
    later = data.draw(st.sampled_from([0.0, 1e-6]), label="later")
    options = [{
        "gamma_s_per_byte": data.draw(st.sampled_from([0.0, 1e-11, 1e-10]), label=f"gamma{k}"),
        "overhead_s": data.draw(st.sampled_from([0.0, 1e-6]), label=f"overhead{k}"),
        "ranks": data.draw(st.none() | st.permutations(range(p)), label=f"ranks{k}"),
        "slowdown": data.draw(st.none() | st.lists(st.sampled_from([1.0, 2.0]), min_size=p, max_size=p),
                              label=f"slowdown{k}"),
    } for k in range(4)]

    def run():
        env = simpy.Environment()
        sim = Simulation(env, net, model=model, sharing=sharing)
        delivered = []
        for schedule, option in zip(schedules, options):
            sim.run(schedule, **option).callbacks.append(lambda event: delivered.append(event.value))

        def third(env):
            yield env.timeout(later)
            sim.run(schedules[0], **options[3]).callbacks.append(lambda event: delivered.append(event.value))

        env.process(third(env))
        env.run()
        return delivered

    *mine, theirs = run_both_ways(monkeypatch, run)
    for runs in mine:
        assert len(runs) == len(theirs) == 4
        for a, b in zip(runs, theirs):
            assert a.schedule is b.schedule
            assert_identical(a, b)


def test_the_array_path_on_a_reducing_switch_and_at_instants_that_round_back_to_now(monkeypatch):
    """Switch endpoints (wire bytes at the switch's efficiency) and transfers so fast that their finish
    rounds back to the instant they start draining: the array path gives the loop's traces."""
    graph = reducing_switch(6, efficiency=0.7)
    switched = switch_sum(4, 3 * 2**20)
    fast = Network(switch(8, 1e30, 0.0))
    rounding = Schedule(collective="allreduce", nranks=8, chunk_bytes=(1,), transfers=tuple(
        [Transfer(k, (k + 1) % 8, (0,), 1) for k in range(8)]
        + [Transfer(k, (k + 2) % 8, (0,), 1, "reduce", deps=(k,)) for k in range(8)]))
    *mine, theirs = run_both_ways(monkeypatch, lambda: (
        simulate(Network(graph), switched, overhead_s=1e-6),
        simulate(fast, rounding, start_offset_s=[1.0] * 8, gamma_s_per_byte=1e-40)))
    for runs in mine:
        for a, b in zip(runs, theirs):
            assert_identical(a, b)
    assert theirs[1].end_s.max() == 1.0


def registered(net: Network, name: str, size_bytes: int) -> Schedule:
    """The schedule of the registered algorithm `name` for `size_bytes` on `net`, with the parameters it derives
    there."""
    algorithm = ALGORITHMS[name]
    params = algorithm.defaults(functools.partial(hierarchy_factors, net.graph)) if algorithm.defaults else {}
    return algorithm.build(net.size, size_bytes, **algorithm.resolved(net, size_bytes, params))


def fresh_simulation(net: Network, compiled: bool) -> Simulation:
    """A simulation of `net` in a new environment; `compiled`: it runs every schedule in the compiled loop
    (drive it with `_drive`)."""
    sim = Simulation(simpy.Environment(), net)
    if compiled:
        sim._resumable()
    return sim


@pytest.mark.parametrize("name", ["ring", "halving_doubling", "blueconnect", "nccl_ring", "nccl_tree"])
def test_registered_algorithms_on_a_cluster_take_the_array_path_to_the_same_trace(monkeypatch, name):
    net = Network(cluster("dgx_a100", 2, fabric_params={"bandwidth_Bps": 25e9, "latency_s": 1e-6}))
    schedule = registered(net, name, 16 * 2**20)
    *mine, theirs = run_both_ways(monkeypatch, lambda: simulate(net, schedule, overhead_s=1e-6,
                                                                gamma_s_per_byte=1e-11))
    for trace in mine:
        assert_identical(trace, theirs)


def test_schedules_finishing_at_one_instant_are_delivered_in_the_order_they_were_started(monkeypatch):
    """A reducing transfer that completes at the instant another schedule's last byte arrives: both are
    delivered once the instant is over, the schedule started first first, on every path of the Python engine
    and in the compiled loop (:meth:`Simulation._drive`)."""
    net = Network(switch(4, 2.0**30, 2.0**-20))
    reducing = Schedule(collective="allreduce", nranks=2, chunk_bytes=(1,),
                        transfers=(Transfer(0, 1, (0,), 2**10, "reduce"),))
    copying = Schedule(collective="allreduce", nranks=2, chunk_bytes=(1,), transfers=(Transfer(0, 1, (0,), 2**11),))

    def run(compiled: bool = False):
        sim = fresh_simulation(net, compiled)
        env = sim.env
        delivered = []
        sim.run(reducing, gamma_s_per_byte=2.0**-30).callbacks.append(lambda event: delivered.append(event.value))
        sim.run(copying, ranks=[2, 3]).callbacks.append(lambda event: delivered.append(event.value))
        sim._drive() if compiled else env.run()
        return delivered

    *mine, theirs = run_both_ways(monkeypatch, run)
    for runs in (*mine, run(compiled=True)):
        assert [trace.schedule for trace in runs] == [trace.schedule for trace in theirs] == [reducing, copying]
        assert runs[0].end_s[0] == runs[1].end_s[0] == 4 * 2.0**-20


def three_schedules_every_way(monkeypatch) -> list[list[Trace]]:
    """The traces of three schedules on two DGX A100 (NCCL's ring with its channels, BlueConnect with γ, NCCL's
    tree with overhead and added during the run on reversed ranks), each read as it completes: on every path
    of the Python engine (:func:`run_both_ways`) and in the compiled loop."""
    net = Network(cluster("dgx_a100", 2, fabric_params={"bandwidth_Bps": 25e9, "latency_s": 1e-6}))
    schedules = [registered(net, name, size)
                 for name, size in (("nccl_ring", 2**17), ("blueconnect", 3 * 2**17), ("nccl_tree", 2**16))]

    def run(compiled: bool = False):
        sim = fresh_simulation(net, compiled)
        env = sim.env
        delivered = []

        def deliver(event):
            delivered.append(event.value)
            event.value.usage

        sim.run(schedules[0], overhead_s=1e-6).callbacks.append(deliver)
        sim.run(schedules[1], gamma_s_per_byte=1e-11).callbacks.append(deliver)

        def later(env):
            yield env.timeout(2e-5)
            sim.run(schedules[2], ranks=list(reversed(range(net.size)))).callbacks.append(deliver)

        env.process(later(env))
        sim._drive() if compiled else env.run()
        return delivered

    return [*run_both_ways(monkeypatch, run), run(compiled=True)]


def test_a_profiler_holding_every_frame_changes_no_trace(monkeypatch):
    """Dask's workers sample the frames of running tasks. A frame sampled just before its function returns
    keeps that function's NumPy views of the engine's columns, which then cannot grow in place (this ended a
    `simnet tune --executor dask` run with BufferError). With every returned frame kept, every path (the
    loop, the array path, the compiled loop) gives its trace without: schedules added before and during the
    run, with channels, overhead and γ, and traces read as each schedule completes."""
    plain = three_schedules_every_way(monkeypatch)
    kept = []
    sys.setprofile(lambda frame, event, arg: kept.append(frame) if event == "return" else None)
    try:
        held = three_schedules_every_way(monkeypatch)
    finally:
        sys.setprofile(None)
    assert len(kept) > 1000
    for runs, theirs in zip(held, plain, strict=True):
        assert [trace.schedule for trace in runs] == [trace.schedule for trace in theirs] and len(runs) == 3
        for a, b in zip(runs, theirs):
            assert_identical(a, b)


def test_only_the_time_columns_a_trace_holds_are_copied_to_grow(monkeypatch):
    """A column copied to grow (:func:`simnet.perflow.grown`) is one something still views. Without a profiler
    only the time columns a trace is given views of may be: a copy of any other column is a view left alive,
    and would copy that column again at each growth (with a profiler keeping frames, copies of others do
    happen, which shows the check sees them)."""
    import inspect

    from simnet import perflow

    original = perflow.grown
    copied: list[str] = []

    def watched(values, more):
        result = original(values, more)
        if result is not values:
            caller = sys._getframe(1)
            if caller.f_code is perflow.appended.__code__:
                caller = caller.f_back
            copied.append(inspect.getframeinfo(caller).code_context[0].split("=")[0].strip())
        return result

    timed = {"self.started_s", "self.finished_s", "self._ready_s, self._issue_s", "self._end_s"}
    for module in ("simnet.links", "simnet.engine", "simnet.perflow"):
        monkeypatch.setattr(f"{module}.grown", watched)
    three_schedules_every_way(monkeypatch)
    assert set(copied) <= timed, copied
    copied.clear()
    kept = []
    sys.setprofile(lambda frame, event, arg: kept.append(frame) if event == "return" else None)
    try:
        three_schedules_every_way(monkeypatch)
    finally:
        sys.setprofile(None)
    assert {"self._nbytes", "self._overhead"} <= set(copied) - timed, "frames kept by a profiler hold views"


def test_a_trace_keeps_its_times_when_the_simulation_runs_more_schedules():
    """The only schedule run so far gets views of the time columns; a later run copies them before growing."""
    env = simpy.Environment()
    sim = Simulation(env, Network(switch(8, B, LAT)))
    first = sim.run(ring_allreduce(8, 1 << 20))
    env.run()
    kept = {name: getattr(first.value, name).copy() for name in ("ready_s", "issue_s", "start_s", "arrive_s", "end_s")}
    second = sim.run(ring_allreduce(8, 3 << 20), overhead_s=1e-6)
    env.run()
    for name, times in kept.items():
        assert np.array_equal(getattr(first.value, name), times), name
    assert second.value.end_s.max() > first.value.end_s.max()
    alone = simulate(Network(switch(8, B, LAT)), ring_allreduce(8, 3 << 20), overhead_s=1e-6)
    assert np.allclose(second.value.end_s - second.value.begin_s, alone.end_s, rtol=1e-12, atol=0)


@pytest.mark.parametrize("sharing", ["equal", "rtt_weighted"])
def test_choosing_the_loop_gives_the_same_trace_and_only_maxmin_has_a_compiled_one(sharing):
    network = Network(cluster("dgx_a100", 2, fabric="switch", fabric_params={"bandwidth_Bps": 25e9, "latency_s": 1e-6}))
    schedule = ALGORITHMS["nccl_ring"].build(network.size, 8 << 20, channels=4)
    by_size = simulate(network, schedule, sharing=sharing)
    for compiled in (True, False):
        assert_identical(simulate(network, schedule, sharing=sharing, compiled=compiled), by_size)
    assert simulate(network, schedule, model="fifo", compiled=False).time_s > 0
    for options, path in (({"model": "fifo", "compiled": True}, "compiled"), ({"compiled": "yes"}, "compiled"),
                          ({"model": "bogus", "compiled": True}, "model")):
        with pytest.raises(SimnetError) as error:
            simulate(network, schedule, **options)
        assert error.value.path == path


@pytest.mark.parametrize("model", ["fifo", "maxmin"])
def test_a_copy_on_one_gpu_without_links_takes_no_time(model):
    graph = nx.DiGraph()
    graph.add_node("gpu0", kind="gpu")
    schedule = Schedule("all_gather", 1, (8,), [Transfer(src=0, dst=0, chunks=(0,), nbytes=8, src_buffer="input",
                                                         dst_buffer="work")], owners=(0,))
    assert simulate(Network(graph), schedule, model=model).time_s == 0.0


def interned(sim: Simulation) -> tuple:
    """Every route number of a simulation's transfers and the link model's route columns it reads them in."""
    links = sim._links
    return (np.array(sim._route_ids).tolist(),) + tuple(np.asarray(column).tolist() for column in (
        links._route_first, links._route_hops, links._route_flat, links._route_latency_s, links._route_rate_Bps,
        links._route_limit, links._route_blocker))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_routes_interned_in_blocks_are_numbered_as_all_at_once(monkeypatch, data):
    """A schedule's distinct pairs are routed and interned a block at a time (`simnet.engine.PAIRS_AT_ONCE`): in
    blocks of one pair, of three and all at once, every route number, route column and trace is the same."""
    net, schedule, options = random_run(data)
    sharing = data.draw(st.sampled_from(["equal", "rtt_weighted"]), label="sharing")

    def run():
        sim = Simulation(simpy.Environment(), Network(net.graph), sharing=sharing)
        done = sim.run(schedule, **options)
        sim.env.run()
        return interned(sim), done.value

    *mine, theirs = under_each(monkeypatch, "simnet.engine.PAIRS_AT_ONCE", (1, 3, 10**9), run)
    for numbers, trace in mine:
        assert numbers == theirs[0]
        assert_identical(trace, theirs[1])


def test_an_all_to_all_composed_in_blocks_numbers_its_routes_as_all_at_once(monkeypatch):
    """Blocks of 100 pairs (each composed from its pieces by the network) and of 7 (each routed pair by pair)
    give the routes, numbers and trace of routing the 992 pairs of 4 DGX A100 at once."""
    net = Network(cluster("dgx_a100", 4, fabric="fat_tree",
                          fabric_params={"k": 8, "bandwidth_Bps": 25e9, "latency_s": 1e-6}))
    schedule = ALGORITHMS["direct"].build(net.size, 4 * MIB)

    def run():
        sim = Simulation(simpy.Environment(), Network(net.graph))
        done = sim.run(schedule)
        sim.env.run()
        return interned(sim), done.value

    *mine, theirs = under_each(monkeypatch, "simnet.engine.PAIRS_AT_ONCE", (7, 100, 10**9), run)
    assert len(set(theirs[0][0])) == net.size * (net.size - 1)
    for numbers, trace in mine:
        assert numbers == theirs[0]
        assert_identical(trace, theirs[1])
