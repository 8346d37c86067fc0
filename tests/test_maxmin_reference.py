"""The max-min link model against an independent fluid reference simulator and hand-computed closed forms.

:func:`reference` is written from the documented semantics of
:class:`simnet.links.MaxMinLinks` and :mod:`simnet.engine` alone, as plainly as
possible: at every event it recomputes the rates of all draining flows from scratch
by progressive filling (Bertsekas, D. and Gallager, R. (1992). Data Networks,
2nd ed., §6.5.2), weighted by the inverse route latency for ``"rtt_weighted"``
(Casanova, H. et al. (2014). J. Parallel Distrib. Comput. 74(10), 2899-2917), and
steps to the earliest next event. The properties compare every transfer's times with
simnet's to a relative 1e-12.
"""

from __future__ import annotations

import math
from collections import deque

import networkx as nx
import numpy as np
import pytest
import simpy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from simnet.engine import Simulation, simulate
from simnet.links import SHARING
from simnet.network import Network
from simnet.schedule import Schedule, Transfer
from simnet.topology import add_cable, leaf_spine, ring, switch, torus

B = 12.5e9
LAT = 1e-6
MIB = 2**20
RTOL = 1e-12

LATENCY_ELAPSED, REDUCED = 0, 1


def progressive_filling(routes: list[tuple[int, ...]], weights: list[float], bandwidth_Bps) -> list[float]:
    """Weighted max-min fair rates of flows crossing `routes`.

    All unfixed flows grow at paces proportional to their weights until a link is
    full; the flows crossing a full link are fixed; repeat until every flow is fixed.

    Parameters
    ----------
    routes : list of tuple of int
        Links crossed by each flow.
    weights : list of float
        Pace of each flow.
    bandwidth_Bps : numpy.ndarray
        Capacity of each link.

    Returns
    -------
    list of float
        Rate of each flow, bytes/s.
    """
    rates = [0.0] * len(routes)
    spare = {link: float(bandwidth_Bps[link]) for route in routes for link in route}
    unfixed = set(range(len(routes)))
    while unfixed:
        pace: dict[int, float] = {}
        for flow in unfixed:
            for link in routes[flow]:
                pace[link] = pace.get(link, 0.0) + weights[flow]
        level = min(spare[link] / pace[link] for link in pace)
        for flow in unfixed:
            rates[flow] += weights[flow] * level
        full = set()
        for link, total in pace.items():
            if spare[link] / total == level:
                full.add(link)
                spare[link] = 0.0
            else:
                spare[link] = max(spare[link] - total * level, 0.0)
        unfixed = {flow for flow in unfixed if full.isdisjoint(routes[flow])}
    return rates


def fluid(
    routes: list[tuple[int, ...]],
    nbytes: list[float],
    deps: list[tuple[int, ...]],
    *,
    bandwidth_Bps,
    latency_s,
    sharing: str,
    not_before: list[float],
    overhead: list[float],
    reduction: list[float],
) -> dict[str, np.ndarray]:
    """Event-driven fluid simulation of transfers with dependencies over shared links.

    Transfer ``i`` is ready when its `deps` have ended (not before
    ``not_before[i]``), enters the network ``overhead[i]`` later, spends its route
    latency, then drains behind the earlier transfers of its route (one connection,
    first come first served, ties by index) at its max-min fair rate; it ends
    ``reduction[i]`` after its last byte. Rates are recomputed from scratch at every
    event; a flow's remaining bytes are brought up to date when its rate changes, so
    a flow that never shares a link ends exactly at the lone-transfer time.

    Returns
    -------
    dict of str to numpy.ndarray
        ``ready_s``, ``arrive_s`` and ``end_s`` of every transfer.
    """
    count = len(routes)
    latency = []
    for route in routes:
        total = 0.0
        for link in route:
            total += float(latency_s[link])
        latency.append(total)
    weight = [1.0 / L if sharing == "rtt_weighted" and L > 0 else 1.0 for L in latency]
    children: list[list[int]] = [[] for _ in range(count)]
    for i, before in enumerate(deps):
        for d in before:
            children[d].append(i)
    waiting = [len(before) for before in deps]
    ready, arrive, end = [math.nan] * count, [math.nan] * count, [math.nan] * count
    timers: list[tuple[float, int, int]] = []
    connections: dict[tuple[int, ...], deque[int]] = {}
    draining: dict[int, dict[str, float]] = {}

    def release(flow: int, now: float) -> None:
        ready[flow] = max(now, not_before[flow])
        timers.append(((ready[flow] + overhead[flow]) + latency[flow], LATENCY_ELAPSED, flow))

    def reshare(now: float) -> None:
        flows = sorted(draining)
        rates = progressive_filling([routes[f] for f in flows], [weight[f] for f in flows], bandwidth_Bps)
        for flow, rate in zip(flows, rates):
            state = draining[flow]
            if state["rate"] == rate:
                continue
            if state["rate"] > 0:
                state["remaining"] = max(state["remaining"] - state["rate"] * (now - state["since"]), 0.0)
            state.update(rate=rate, since=now, finish=now + state["remaining"] / rate)

    for flow in range(count):
        if not deps[flow]:
            release(flow, 0.0)
    while timers or draining:
        now = min([t for t, _, _ in timers] + [s["finish"] for s in draining.values()])
        while True:
            ended = sorted(f for f, s in draining.items() if s["finish"] == now)
            due = sorted((kind, f) for t, kind, f in timers if t == now)
            if not ended and not due:
                break
            timers = [timer for timer in timers if timer[0] != now]
            arrived = []
            for flow in ended:
                del draining[flow]
                arrived.append(flow)
                line = connections[routes[flow]]
                line.popleft()
                if line:
                    draining[line[0]] = {"rate": 0.0, "remaining": nbytes[line[0]], "since": now, "finish": math.inf}
            finished = [f for kind, f in due if kind == REDUCED]
            for kind, flow in due:
                if kind != LATENCY_ELAPSED:
                    continue
                line = connections.setdefault(routes[flow], deque())
                line.append(flow)
                if len(line) == 1:
                    draining[flow] = {"rate": 0.0, "remaining": nbytes[flow], "since": now, "finish": math.inf}
            for flow in arrived:
                arrive[flow] = now
                if now + reduction[flow] > now:
                    timers.append((now + reduction[flow], REDUCED, flow))
                else:
                    finished.append(flow)
            for flow in finished:
                end[flow] = now
                for child in children[flow]:
                    waiting[child] -= 1
                    if waiting[child] == 0:
                        release(child, now)
            reshare(now)
    return {"ready_s": np.array(ready), "arrive_s": np.array(arrive), "end_s": np.array(end)}


def reference(
    network: Network,
    schedule: Schedule,
    *,
    sharing: str = "equal",
    overhead_s: float = 0.0,
    gamma_s_per_byte: float = 0.0,
    start_offset_s=None,
    slowdown=None,
) -> dict[str, np.ndarray]:
    """:func:`fluid` for `schedule` run alone on `network` from time 0 (options as :func:`simnet.engine.simulate`)."""
    transfers = list(schedule.transfers)
    ranks = schedule.nranks
    gamma = [float(gamma_s_per_byte)] * ranks if np.isscalar(gamma_s_per_byte) else list(gamma_s_per_byte)
    offset = [0.0] * ranks if start_offset_s is None else list(start_offset_s)
    slow = [1.0] * ranks if slowdown is None else list(slowdown)
    return fluid(
        [network.route(t.src, t.dst) for t in transfers],
        [float(t.nbytes) for t in transfers],
        [t.deps for t in transfers],
        bandwidth_Bps=network.bandwidth_Bps,
        latency_s=network.latency_s,
        sharing=sharing,
        not_before=[offset[t.src] for t in transfers],
        overhead=[overhead_s * slow[t.src] for t in transfers],
        reduction=[t.nbytes * gamma[t.dst] * slow[t.dst] if t.op != "copy" else 0.0 for t in transfers],
    )


def assert_same_times(trace, expected: dict[str, np.ndarray]) -> None:
    for name, times in expected.items():
        assert_allclose(getattr(trace, name), times, rtol=RTOL, atol=0, err_msg=name)


def schedule_of(transfers, nranks: int) -> Schedule:
    return Schedule(collective="allreduce", nranks=nranks, chunk_bytes=(1,), transfers=tuple(transfers))


def independent(pairs, nbytes, nranks: int = 3) -> Schedule:
    sizes = nbytes if isinstance(nbytes, (list, tuple)) else [nbytes] * len(pairs)
    return schedule_of([Transfer(s, d, (0,), n) for (s, d), n in zip(pairs, sizes)], nranks)


def star(cables: list[tuple[float, float]]) -> nx.DiGraph:
    """GPUs on one switch, GPU ``i``'s cable having ``(bandwidth, latency) = cables[i]``."""
    graph = nx.DiGraph(name="star")
    for i in range(len(cables)):
        graph.add_node(f"gpu{i}", kind="gpu", host=i)
    graph.add_node("switch", kind="switch")
    for i, (bandwidth, latency) in enumerate(cables):
        add_cable(graph, f"gpu{i}", "switch", bandwidth, latency, "fabric")
    return graph


# closed forms


def test_two_flows_on_one_link_get_half_each_then_the_survivor_gets_all():
    n1, n2 = MIB, 3 * MIB
    net = Network(switch(3, B, LAT))
    trace = simulate(net, independent([(0, 2), (1, 2)], [n1, n2]))
    assert trace.end_s[0] == pytest.approx(2 * LAT + n1 / (B / 2), rel=RTOL)
    assert trace.end_s[1] == pytest.approx(2 * LAT + (n1 + n2) / B, rel=RTOL)


def test_a_flow_bottlenecked_elsewhere_leaves_its_share_to_the_other():
    net = Network(star([(B / 4, LAT), (B, LAT), (B, LAT)]))
    trace = simulate(net, independent([(0, 2), (1, 2)], MIB))
    assert trace.end_s[0] == pytest.approx(2 * LAT + MIB / (B / 4), rel=RTOL)
    assert trace.end_s[1] == pytest.approx(2 * LAT + MIB / (3 * B / 4), rel=RTOL)


def test_rtt_weighted_shares_are_in_the_ratio_of_inverse_route_latencies():
    a, b, c = 1e-6, 4e-6, 1e-6
    L0, L1 = a + c, b + c
    n = 2 * MIB
    net = Network(star([(B, a), (B, b), (B, c)]))
    trace = simulate(net, independent([(0, 2), (1, 2)], n), sharing="rtt_weighted")
    alone = B * (L1 - L0)
    r0, r1 = B * L1 / (L0 + L1), B * L0 / (L0 + L1)
    end0 = L1 + (n - alone) / r0
    end1 = end0 + (n - r1 * (end0 - L1)) / B
    assert trace.end_s[0] == pytest.approx(end0, rel=RTOL)
    assert trace.end_s[1] == pytest.approx(end1, rel=RTOL)
    link, flow, start, _, rate = trace.usage
    shared = (link == net.link("switch", "gpu2")) & (start == L1)
    assert rate[shared & (flow == 0)] / rate[shared & (flow == 1)] == pytest.approx(L1 / L0, rel=RTOL)


def test_a_zero_latency_route_has_weight_one_under_rtt_weighted_sharing():
    bandwidth, latency, n0, n1 = 1e6, 0.5, 2e6, 1e6
    graph = nx.DiGraph(name="line")
    graph.add_nodes_from(["gpu0", "gpu1", "gpu2"], kind="gpu")
    add_cable(graph, "gpu0", "gpu1", bandwidth, latency, "fabric")
    add_cable(graph, "gpu1", "gpu2", bandwidth, 0.0, "fabric")
    net = Network(graph)
    trace = simulate(net, independent([(0, 2), (1, 2)], [n0, n1]), sharing="rtt_weighted")
    r0, r1 = bandwidth * (1 / latency) / (1 / latency + 1), bandwidth * 1 / (1 / latency + 1)
    end1 = latency + (n1 - bandwidth * latency) / r1
    assert trace.end_s[1] == pytest.approx(end1, rel=RTOL)
    assert trace.end_s[0] == pytest.approx(end1 + (n0 - r0 * (end1 - latency)) / bandwidth, rel=RTOL)


def test_rtt_weighted_shares_survive_weights_of_very_different_size():
    la, lb, n = 1.323e-9, 1.836e-9, 8 * 10**6
    graph = star([(1e9, la), (1e10, 0.0), (1e10, 0.0), (1e9, lb)])
    net = Network(graph)
    trace = simulate(net, independent([(0, 2), (3, 2), (1, 2)], [10**7, 10**7, n], nranks=4), sharing="rtt_weighted")
    drained = 1e10 * la + 9e9 * (lb - la)
    assert trace.end_s[2] == pytest.approx(lb + (n - drained) / 8e9, rel=RTOL)


def test_transfers_of_one_connection_drain_one_after_the_other():
    net = Network(switch(2, B, LAT))
    trace = simulate(net, independent([(0, 1), (0, 1), (0, 1)], MIB, nranks=2))
    assert_allclose(trace.end_s, 2 * LAT + np.arange(1, 4) * MIB / B, rtol=RTOL, atol=0)


@pytest.mark.parametrize("sharing", SHARING)
def test_the_reference_reproduces_the_closed_forms(sharing):
    net = Network(star([(B / 4, LAT), (B, LAT), (B, LAT)]))
    times = reference(net, independent([(0, 2), (1, 2), (1, 2)], MIB), sharing=sharing)["end_s"]
    assert times[0] == pytest.approx(2 * LAT + MIB / (B / 4), rel=RTOL)
    assert times[1] == pytest.approx(2 * LAT + MIB / (3 * B / 4), rel=RTOL)
    assert times[2] == pytest.approx(2 * LAT + 2 * MIB / (3 * B / 4), rel=RTOL)


# random topologies and transfers

BANDWIDTHS = st.one_of(st.sampled_from([10e9, 25e9, 50e9]), st.floats(1e9, 1e11))
LATENCIES = st.one_of(st.sampled_from([0.0, 1e-6, 2e-6]), st.floats(1e-7, 5e-6))


@st.composite
def random_graphs(draw) -> nx.DiGraph:
    """A random connected graph of 3-6 GPUs and 0-3 switches; each direction of a cable has its own bandwidth."""
    gpus = [f"gpu{i}" for i in range(draw(st.integers(3, 6)))]
    switches = [f"sw{i}" for i in range(draw(st.integers(0, 3)))]
    graph = nx.DiGraph(name="random")
    graph.add_nodes_from(gpus, kind="gpu")
    graph.add_nodes_from(switches, kind="switch")
    nodes = draw(st.permutations(gpus + switches))
    cables = [(node, nodes[draw(st.integers(0, k - 1))]) for k, node in enumerate(nodes) if k]
    cables += draw(st.lists(st.tuples(st.sampled_from(nodes), st.sampled_from(nodes)), max_size=4))
    for u, v in cables:
        if u != v and not graph.has_edge(u, v):
            add_cable(graph, u, v, draw(BANDWIDTHS), draw(LATENCIES), "fabric")
            graph.edges[v, u]["bandwidth_Bps"] = draw(BANDWIDTHS)
    return graph


BUILT = st.one_of(
    st.builds(ring, st.integers(3, 6), BANDWIDTHS, LATENCIES),
    st.builds(switch, st.integers(3, 6), BANDWIDTHS, LATENCIES),
    st.builds(
        lambda leaves, spines, hosts, bandwidth, latency, ratio: leaf_spine(
            leaves, spines, hosts, bandwidth, latency, oversubscription=ratio),
        st.integers(2, 3), st.integers(1, 2), st.integers(1, 3), BANDWIDTHS, LATENCIES,
        st.sampled_from([1.0, 2.0, 3.0]),
    ),
    st.builds(torus, st.sampled_from([[3], [2, 2], [2, 3], [3, 3], [1, 4]]), BANDWIDTHS, LATENCIES),
)
TOPOLOGIES = st.one_of(random_graphs(), BUILT)


@st.composite
def programs(draw, nranks: int, *, dependent: bool, most: int = 12) -> list[Transfer]:
    """Random transfers between `nranks` ranks (each with up to three earlier dependencies if `dependent`)."""
    transfers = []
    for i in range(draw(st.integers(1, most))):
        src = draw(st.integers(0, nranks - 1))
        dst = draw(st.integers(0, nranks - 2))
        dst += dst >= src
        deps = tuple(sorted(draw(st.sets(st.integers(0, i - 1), max_size=3)))) if dependent and i else ()
        op = draw(st.sampled_from(["copy", "reduce"]))
        transfers.append(Transfer(src, dst, (0,), draw(st.integers(1, 4 * MIB)), op, deps))
    return transfers


PROPERTY = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("sharing", SHARING)
@PROPERTY
@given(data=st.data())
def test_independent_transfers_match_the_reference(sharing, data):
    net = Network(data.draw(TOPOLOGIES, label="graph"))
    p = net.size
    schedule = schedule_of(data.draw(programs(p, dependent=False), label="transfers"), p)
    offsets = data.draw(st.one_of(st.none(), st.lists(st.floats(0, 5e-6), min_size=p, max_size=p)), label="offsets")
    trace = simulate(net, schedule, sharing=sharing, start_offset_s=offsets)
    assert_same_times(trace, reference(net, schedule, sharing=sharing, start_offset_s=offsets))


@pytest.mark.parametrize("sharing", SHARING)
@PROPERTY
@given(data=st.data())
def test_dependent_transfers_match_the_reference(sharing, data):
    net = Network(data.draw(TOPOLOGIES, label="graph"))
    p = net.size
    schedule = schedule_of(data.draw(programs(p, dependent=True), label="transfers"), p)
    options = {
        "overhead_s": data.draw(st.sampled_from([0.0, 1e-6]) | st.floats(0, 3e-6), label="overhead"),
        "gamma_s_per_byte": data.draw(st.lists(st.sampled_from([0.0, 1e-11, 2e-10]), min_size=p, max_size=p),
                                      label="gamma"),
        "slowdown": data.draw(st.lists(st.floats(0.5, 3.0), min_size=p, max_size=p), label="slowdown"),
    }
    trace = simulate(net, schedule, sharing=sharing, **options)
    assert_same_times(trace, reference(net, schedule, sharing=sharing, **options))


@pytest.mark.parametrize("sharing", SHARING)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_concurrent_schedules_of_one_simulation_match_the_reference(sharing, data):
    net = Network(data.draw(random_graphs(), label="graph"))
    p = net.size
    first = schedule_of(data.draw(programs(p, dependent=True, most=8), label="first"), p)
    second = schedule_of(data.draw(programs(p, dependent=True, most=8), label="second"), p)
    later = data.draw(st.floats(0, 50e-6), label="later")
    env = simpy.Environment()
    sim = Simulation(env, net, sharing=sharing)
    traces = [sim.run(first)]

    def start_later(env):
        yield env.timeout(later)
        traces.append(sim.run(second))

    env.process(start_later(env))
    env.run()
    shift = len(first)
    transfers = list(first.transfers) + list(second.transfers)
    expected = fluid(
        [net.route(t.src, t.dst) for t in transfers],
        [float(t.nbytes) for t in transfers],
        [tuple(d + shift * (i >= shift) for d in t.deps) for i, t in enumerate(transfers)],
        bandwidth_Bps=net.bandwidth_Bps,
        latency_s=net.latency_s,
        sharing=sharing,
        not_before=[0.0] * shift + [later] * len(second),
        overhead=[0.0] * len(transfers),
        reduction=[0.0] * len(transfers),
    )
    for trace, part in zip((traces[0].value, traces[1].value), (slice(0, shift), slice(shift, None))):
        assert_same_times(trace, {name: times[part] for name, times in expected.items()})


@pytest.mark.parametrize("model", ["maxmin", "fifo"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_simulate_alone_gives_the_trace_of_the_simpy_environment_bit_for_bit(model, data):
    """`simulate` keeps its instants on a heap of its own instead of SimPy timeouts; every array of its
    trace equals that of the same schedule run by `Simulation` in a SimPy environment."""
    net = Network(data.draw(random_graphs(), label="graph"))
    schedule = schedule_of(data.draw(programs(net.size, dependent=True), label="program"), net.size)
    overhead_s = data.draw(st.sampled_from([0.0, 1e-6]), label="overhead")
    alone = simulate(net, schedule, model=model, overhead_s=overhead_s)
    env = simpy.Environment()
    done = Simulation(env, net, model=model).run(schedule, overhead_s=overhead_s)
    env.run()
    shared = done.value
    for name in ("ready_s", "issue_s", "start_s", "arrive_s", "end_s", "blocked_by"):
        assert np.array_equal(getattr(alone, name), getattr(shared, name), equal_nan=True), name
    for mine, theirs in zip(alone.usage, shared.usage, strict=True):
        assert np.array_equal(mine, theirs)
    assert alone.bottlenecks == shared.bottlenecks
    for mine, theirs in zip(alone.limits, shared.limits, strict=True):
        assert np.array_equal(mine, theirs)
