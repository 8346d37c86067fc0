"""Tests of simnet.links: the link-sharing models' laws, through the engine."""

from __future__ import annotations

import math
from unittest import mock

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet import links as links_module
from simnet.engine import simulate
from simnet.algorithms.dense import ring_allreduce_time
from simnet.links import LINK_MODELS, FifoLinks, MaxMinLinks, RouteTable
from simnet.perflow import Constant, appended, take
from simnet.network import Network
from simnet.schedule import Schedule, Transfer
from simnet.topology import add_cable, switch

B = 12.5e9
LAT = 1e-6
MIB = 2**20


def star(bandwidths: list[float], latency_s: float = LAT) -> nx.DiGraph:
    """GPUs on one switch, GPU ``i``'s cable having bandwidth ``bandwidths[i]``."""
    graph = nx.DiGraph(name="star")
    for i in range(len(bandwidths)):
        graph.add_node(f"gpu{i}", kind="gpu", host=i)
    graph.add_node("switch", kind="switch")
    for i, bandwidth in enumerate(bandwidths):
        add_cable(graph, f"gpu{i}", "switch", bandwidth, latency_s, "fabric")
    return graph


def leaf_spine(hosts_per_leaf: int, uplink_Bps: float, latency_s: float = LAT) -> nx.DiGraph:
    """Two leaves and one spine; rank ``i`` sits on leaf ``i % 2`` so every ring hop crosses the spine."""
    graph = nx.DiGraph(name="leaf-spine")
    for i in range(2 * hosts_per_leaf):
        graph.add_node(f"gpu{i}", kind="gpu", host=i)
    for leaf in range(2):
        graph.add_node(f"leaf{leaf}", kind="switch")
    graph.add_node("spine", kind="switch")
    for i in range(2 * hosts_per_leaf):
        add_cable(graph, f"gpu{i}", f"leaf{i % 2}", B, latency_s, "fabric")
    for leaf in range(2):
        add_cable(graph, f"leaf{leaf}", "spine", uplink_Bps, latency_s, "spine")
    return graph


def flows(pairs: list[tuple[int, int]], nbytes: int | list[int]) -> Schedule:
    """Independent transfers (no dependencies), all ready at time 0."""
    sizes = nbytes if isinstance(nbytes, list) else [nbytes] * len(pairs)
    nranks = 1 + max(max(pair) for pair in pairs)
    transfers = tuple(Transfer(src=s, dst=d, chunks=(0,), nbytes=n) for (s, d), n in zip(pairs, sizes))
    return Schedule(collective="allreduce", nranks=nranks, chunk_bytes=(1,), transfers=transfers)


def test_registry_has_both_models_and_maxmin_is_default():
    assert LINK_MODELS["maxmin"] is MaxMinLinks and LINK_MODELS["fifo"] is FifoLinks
    net = Network(switch(2, B, LAT))
    assert simulate(net, flows([(0, 1)], 1000)).model == "maxmin"


@pytest.mark.parametrize("model", sorted(LINK_MODELS))
def test_lone_transfer_is_exact_alpha_beta(model):
    net = Network(star([B, B / 3, 7e9]))
    trace = simulate(net, flows([(1, 2)], 12345), model=model)
    assert trace.end_s[0] == net.route_latency_s(1, 2) + 12345 / net.route_bandwidth_Bps(1, 2)
    assert trace.end_s[0] == net.transfer_time_s(1, 2, 12345)


def test_two_flows_on_one_link_get_half_each():
    net = Network(switch(3, B, LAT))
    trace = simulate(net, flows([(0, 2), (1, 2)], 8 * MIB))
    assert trace.end_s[0] == trace.end_s[1] == pytest.approx(2 * LAT + 8 * MIB / (B / 2), rel=1e-12)
    timeline = trace.timeline()
    shared = timeline[timeline["link"] == net.link("switch", "gpu2")]
    assert list(shared["flows"]) == [2] and shared["rate_Bps"].iloc[0] == pytest.approx(B, rel=1e-12)
    assert shared["utilization"].iloc[0] == pytest.approx(1.0, rel=1e-12)


def test_flow_bottlenecked_elsewhere_leaves_its_share_to_the_others():
    net = Network(star([B, B, B / 4]))
    trace = simulate(net, flows([(0, 1), (2, 1)], 8 * MIB))
    assert trace.end_s[1] == pytest.approx(2 * LAT + 8 * MIB / (B / 4), rel=1e-12)
    assert trace.end_s[0] == pytest.approx(2 * LAT + 8 * MIB / (3 * B / 4), rel=1e-12)
    assert trace.end_s[0] < 2 * LAT + 8 * MIB / (B / 2)
    assert trace.bottlenecks[1] == {net.link("gpu2", "switch"): pytest.approx(8 * MIB / (B / 4), rel=1e-12)}


def test_freed_capacity_is_redistributed_when_a_flow_ends():
    net = Network(switch(3, B, LAT))
    small, large = 1 * MIB, 4 * MIB
    trace = simulate(net, flows([(0, 2), (1, 2)], [small, large]))
    first = 2 * LAT + small / (B / 2)
    assert trace.end_s[0] == pytest.approx(first, rel=1e-12)
    assert trace.end_s[1] == pytest.approx(first + (large - small) / B, rel=1e-12)


@pytest.mark.parametrize("k", [2, 3, 5, 8])
def test_k_way_incast_takes_k_times_the_lone_time(k):
    net = Network(switch(k + 1, B, LAT))
    trace = simulate(net, flows([(i, 0) for i in range(1, k + 1)], 4 * MIB))
    lone_drain = 4 * MIB / B
    for end in trace.end_s:
        assert end - 2 * LAT == pytest.approx(k * lone_drain, rel=1e-12)
    assert trace.links().set_index("link").loc[net.link("switch", "gpu0"), "peak_flows"] == k


@pytest.mark.parametrize("oversubscription", [1, 2, 4])
def test_ring_across_oversubscribed_leaf_spine_slows_by_predicted_factor(oversubscription):
    hosts_per_leaf, size = 4, 64 * MIB
    p = 2 * hosts_per_leaf
    from simnet.algorithms import ring_allreduce

    uplink = hosts_per_leaf * B / oversubscription
    net = Network(leaf_spine(hosts_per_leaf, uplink))
    trace = simulate(net, ring_allreduce(p, size))
    per_flow_Bps = min(B, uplink / hosts_per_leaf)
    predicted = ring_allreduce_time(p, size, 4 * LAT, 1 / per_flow_Bps)
    assert trace.time_s == pytest.approx(predicted, rel=1e-9)
    drain = trace.time_s - 2 * (p - 1) * 4 * LAT
    full_drain = ring_allreduce_time(p, size, 0.0, 1 / B)
    assert drain / full_drain == pytest.approx(oversubscription, rel=1e-9)


def test_zero_byte_transfers_finish_after_their_latency():
    net = Network(switch(3, B, LAT))
    for model in LINK_MODELS:
        trace = simulate(net, flows([(0, 1), (2, 1)], 0), model=model)
        assert trace.end_s.tolist() == [2 * LAT, 2 * LAT]


transfer_sets = st.lists(
    st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 10 * MIB), st.integers(0, 3)).filter(
        lambda t: t[0] != t[1]
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(transfer_sets, st.sampled_from(sorted(LINK_MODELS)))
def test_contention_never_makes_a_transfer_faster_than_alone(specs, model):
    net = Network(star([B, B / 2, B, B / 5, 3e9]))
    offsets = [0.0, 3e-6, 1e-4, 7e-5, 2.5e-4]
    transfers = tuple(Transfer(src=s, dst=d, chunks=(0,), nbytes=n) for s, d, n, _ in specs)
    schedule = Schedule(collective="allreduce", nranks=5, chunk_bytes=(1,), transfers=transfers)
    trace = simulate(net, schedule, model=model, start_offset_s=offsets)
    assert not any(math.isnan(e) for e in trace.end_s)
    for i, t in enumerate(transfers):
        alone = net.transfer_time_s(t.src, t.dst, t.nbytes)
        assert trace.end_s[i] - trace.ready_s[i] >= alone * (1 - 1e-12)
        assert trace.ready_s[i] == offsets[t.src]
    again = simulate(net, schedule, model=model, start_offset_s=offsets)
    assert again.end_s.tobytes() == trace.end_s.tobytes()


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 12), st.integers(1, 2**28))
def test_maxmin_and_fifo_agree_without_overlap_and_match_the_ring_closed_form(p, size):
    from simnet.algorithms import ring_allreduce
    from simnet.models import predict

    net = Network(switch(p, B, LAT))
    schedule = ring_allreduce(p, size)
    maxmin = simulate(net, schedule, model="maxmin")
    fifo = simulate(net, schedule, model="fifo")
    assert maxmin.end_s == pytest.approx(fifo.end_s, rel=1e-9)
    assert maxmin.time_s == pytest.approx(predict("ring", net, p, size), rel=1e-9)


@pytest.mark.parametrize("model", sorted(LINK_MODELS))
def test_ring_64MiB_on_16_host_switch_is_unchanged(model):
    from simnet.algorithms import ring_allreduce

    net = Network(switch(16, 12.5e9, 1e-6))
    assert simulate(net, ring_allreduce(16, 64 * MIB), model=model).time_s == pytest.approx(10.1263296e-3, rel=1e-9)


def test_bottleneck_of_a_flow_moves_when_its_competitor_leaves():
    net = Network(star([B, B, B / 4]))
    trace = simulate(net, flows([(0, 1), (2, 1)], [8 * MIB, MIB]))
    shared_until = 2 * LAT + MIB / (B / 4)
    limits = trace.bottlenecks[0]
    down, up = net.link("switch", "gpu1"), net.link("gpu0", "switch")
    assert set(limits) == {down, up}
    assert limits[down] == pytest.approx(MIB / (B / 4), rel=1e-12)
    assert sum(limits.values()) == pytest.approx(trace.arrive_s[0] - 2 * LAT, rel=1e-12)
    assert trace.end_s[0] == pytest.approx(shared_until + (8 * MIB - 3 * MIB) / B, rel=1e-12)


def test_a_column_stays_one_value_until_a_value_differs_in_any_bit():
    column = appended(Constant(), np.zeros(3))
    assert isinstance(column, Constant) and len(column) == 3 and column[2] == 0.0
    column = appended(column, np.array([-0.0]))
    assert not isinstance(column, Constant)
    assert [math.copysign(1.0, value) for value in column] == [1.0, 1.0, 1.0, -1.0]
    channels = appended(appended(Constant(0), np.zeros(2, dtype=np.int32), "i"), np.array([0, 2]), "i")
    assert list(channels) == [0, 0, 0, 2] and channels.typecode == "i"
    assert list(take(appended(Constant(), np.full(4, 2.5)), np.array([3, 0]))) == [2.5, 2.5]


def _hash_of_length(links, first, hops):
    return hops.copy()


def _one_hash(links, first, hops):
    return np.zeros(len(hops), dtype=np.int64)


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from(["equal", "rtt_weighted"]),
       st.sampled_from([links_module._route_hashes, _hash_of_length, _one_hash]))
def test_interning_routes_gives_each_the_lone_flow_figures_of_its_links_in_order(data, sharing, hashing):
    """Numbering routes in one pass gives what a flow alone on each would get, link by link: latency added
    in route order, the rate of the slowest link, the lowest-numbered slowest link as its limit, the first
    slowest along the route as its blocker; a route seen before keeps its number, and new ones are numbered
    in the order they first appear, whether given as tuples or as a table, and whether or not different
    routes share a hash (here forced: routes hashed by their length alone, or all alike)."""
    nlinks = data.draw(st.integers(1, 6))
    bandwidth = np.array(data.draw(st.lists(st.sampled_from([1e9, 2.5e9, 12.5e9, math.inf]), min_size=nlinks,
                                            max_size=nlinks)))
    latency = np.array(data.draw(st.lists(st.sampled_from([0.0, 1e-7, 3e-7, 1e-6, 0.1]), min_size=nlinks,
                                          max_size=nlinks)))
    route = st.lists(st.integers(0, nlinks - 1), max_size=5).map(tuple)
    batches = data.draw(st.lists(st.lists(route, max_size=6), min_size=1, max_size=3))
    tables = data.draw(st.lists(st.booleans(), min_size=len(batches), max_size=len(batches)))
    links = MaxMinLinks(bandwidth, latency, lambda now_s, key: None, sharing=sharing)
    numbers: dict[tuple[int, ...], int] = {}
    for batch, table in zip(batches, tables):
        with mock.patch.object(links_module, "_route_hashes", hashing):
            ids = links.intern(RouteTable.of(batch) if table else batch).tolist()
        for route_links, route_id in zip(batch, ids):
            assert numbers.setdefault(route_links, len(numbers)) == route_id
    for route_links, route_id in numbers.items():
        total = 0.0
        for link in route_links:
            total += float(latency[link])
        assert links._route_latency_s[route_id] == total
        assert links._route_links[route_id] == route_links
        assert links._route_hops[route_id] == len(route_links)
        first = links._route_first[route_id]
        assert tuple(links._route_flat[first:first + len(route_links)]) == route_links
        if route_links:
            slowest = min(bandwidth[link] for link in route_links)
            assert links._route_rate_Bps[route_id] == slowest
            assert links._route_limit[route_id] == min(link for link in route_links if bandwidth[link] == slowest)
            assert links._route_blocker[route_id] == next(link for link in route_links if bandwidth[link] == slowest)
        else:
            assert (links._route_rate_Bps[route_id], links._route_limit[route_id]) == (math.inf, -1)
            assert links._route_blocker[route_id] == -1
        if sharing == "rtt_weighted":
            assert links._route_weight[route_id] == (1.0 / total if total > 0 else 1.0)
    assert len(links._route_weight) == (len(numbers) if sharing == "rtt_weighted" else 0)


@given(st.lists(st.lists(st.integers(0, 50), max_size=6).map(tuple), max_size=12))
def test_a_route_table_holds_its_routes_in_order(routes):
    table = RouteTable.of(routes)
    assert len(table) == len(routes) and table.hops.tolist() == list(map(len, routes))
    assert table.tuples() == routes and table.offsets[0] == 0 and table.offsets[-1] == len(table.links)
    padded = table.padded(-1)
    assert padded.shape == (len(routes), max(map(len, routes), default=0))
    assert [tuple(v for v in row if v >= 0) for row in padded.tolist()] == routes
    assert RouteTable.of_padded(padded).tuples() == routes and RouteTable.of_padded(padded).links.dtype == np.int64


@given(st.lists(st.integers(-5, 5), min_size=1, max_size=30), st.data())
def test_concatenated_rows_are_the_slices_one_after_the_other(source, data):
    """In several gathering steps where rows outnumber :data:`simnet.links._ROWS_AT_ONCE` (made small here), of
    the type of the source."""
    count = data.draw(st.integers(0, 12))
    first = data.draw(st.lists(st.integers(0, len(source)), min_size=count, max_size=count))
    hops = [data.draw(st.integers(0, len(source) - f)) for f in first]
    expected = [v for f, h in zip(first, hops) for v in source[f:f + h]]
    for at_once in (1, 3, 2**16):
        for kind in (np.int32, np.int64):
            with mock.patch.object(links_module, "_ROWS_AT_ONCE", at_once):
                flat = links_module.concatenated(np.array(source, dtype=kind), np.array(first, dtype=np.int64),
                                                 np.array(hops, dtype=np.int64))
            assert flat.dtype == kind and flat.tolist() == expected


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 4), max_size=5).map(tuple), max_size=12),
       st.lists(st.sampled_from([1e9, 2.5e9, math.inf]), min_size=5, max_size=5),
       st.lists(st.sampled_from([0.0, 1e-7, 3e-7, 0.1]), min_size=5, max_size=5))
def test_route_figures_are_each_routes_own_in_any_number_of_steps(routes, bandwidth, latency):
    """Latency added in route order, the slowest link's rate, the lowest-numbered slowest link and the first slowest
    along the route, the same whether the table is read in one step or a few routes at a time."""
    expected = []
    for route in routes:
        total = 0.0
        for link in route:
            total += latency[link]
        slowest = min((bandwidth[link] for link in route), default=math.inf)
        expected.append((total, slowest, min((k for k in route if bandwidth[k] == slowest), default=-1),
                         next((k for k in route if bandwidth[k] == slowest), -1)))
    for at_once in (1, 3, 4096):
        with mock.patch.object(links_module, "_INTERNED_AT_ONCE", at_once):
            figures = links_module.route_figures(RouteTable.of(routes), latency, bandwidth)
        assert list(zip(*(figure.tolist() for figure in figures))) == expected


def test_interning_empty_routes_needs_no_links_and_a_bad_link_numbers_nothing():
    links = MaxMinLinks(np.zeros(0), np.zeros(0), lambda now_s, key: None)
    assert links.intern([(), ()]).tolist() == [0, 0]
    assert (links._route_latency_s[0], links._route_rate_Bps[0], links._route_limit[0]) == (0.0, math.inf, -1)
    two = MaxMinLinks(np.array([1e9, 2e9]), np.array([1e-6, 1e-6]), lambda now_s, key: None)
    for _ in range(2):
        with pytest.raises(IndexError):
            two.intern([(0,), (5,)])
    assert two.intern([(1,), (0,)]).tolist() == [0, 1]
    assert two._route_links == [(1,), (0,)]


@settings(max_examples=60, deadline=None)
@given(blocked=st.dictionaries(st.integers(0, 40), st.integers(0, 9), max_size=30),
       lo=st.integers(0, 40), length=st.integers(0, 40))
def test_the_links_flows_queued_for_read_the_same_from_a_dict_and_from_arrays(blocked, lo, length):
    """The waits of a simulation run in Python (a dict in the order flows queued) and of one run by the compiled
    loop (two arrays in that order) answer alike: every wait in order, and per flow of any range its link or -1,
    whether the range holds fewer flows than the dict (looked up one by one) or more."""
    python = MaxMinLinks(np.ones(10), np.zeros(10), lambda _: None)
    python.blocked_by.update(blocked)
    compiled = MaxMinLinks(np.ones(10), np.zeros(10), lambda _: None)
    compiled._waits = (np.fromiter(blocked, dtype=np.int64, count=len(blocked)),
                       np.fromiter(blocked.values(), dtype=np.int64, count=len(blocked)))
    compiled._blocked_by = None
    flows = range(lo, lo + length)
    expected = [blocked.get(flow, -1) for flow in flows]
    for links in (python, compiled):
        waited, link = links.waits()
        assert list(zip(waited.tolist(), link.tolist())) == list(blocked.items())
        assert links.queued_for(flows).tolist() == expected
    assert list(compiled.blocked_by.items()) == list(blocked.items())
    fifo = FifoLinks(np.ones(10), np.zeros(10), lambda _: None)
    fifo.blocked_by.update(blocked)
    assert fifo.queued_for(flows).tolist() == expected
    assert list(zip(*(column.tolist() for column in fifo.waits()))) == list(blocked.items())
