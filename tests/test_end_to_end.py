"""The first slice end to end: ring all-reduce on a switch, simulated vs closed form."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet.algorithms import ring_allreduce
from simnet.engine import simulate
from simnet.algorithms.dense import ring_allreduce_time
from simnet.models import predict
from simnet.network import Network
from simnet.topology import ring, switch

BANDWIDTH_Bps = 12.5e9
LATENCY_s = 1e-6


def ring_time_on_switch(p: int, size: int, chunks: int = 1) -> float:
    return ring_allreduce_time(p, size, 2 * LATENCY_s, 1 / BANDWIDTH_Bps, chunks=chunks)


@settings(max_examples=40, deadline=None)
@given(p=st.integers(2, 64), size=st.integers(1, 2**30))
def test_ring_on_switch_equals_closed_form(p, size):
    network = Network(switch(p, BANDWIDTH_Bps, LATENCY_s))
    trace = simulate(network, ring_allreduce(p, size))
    steps = 2 * (p - 1)
    largest_segment = math.ceil(size / p)
    textbook = steps * (2 * LATENCY_s + largest_segment / BANDWIDTH_Bps)
    assert trace.time_s == pytest.approx(textbook, rel=1e-9)
    assert trace.time_s == pytest.approx(predict("ring", network, p, size), rel=1e-9)


@pytest.mark.parametrize("p", [2, 16, 64])
@pytest.mark.parametrize("size", [1024, 2**20, 2**26, 2**30])
def test_ring_on_switch_divisible_sizes_match_textbook_form(p, size):
    """2(p-1)α + 2(p-1)/p·nβ (Patarasuk & Yuan 2009) when p divides n."""
    trace = simulate(Network(switch(p, BANDWIDTH_Bps, LATENCY_s)), ring_allreduce(p, size))
    expected = 2 * (p - 1) * 2 * LATENCY_s + 2 * (p - 1) / p * size / BANDWIDTH_Bps
    assert trace.time_s == pytest.approx(expected, rel=1e-9)


def test_64_mib_on_16_gpus_is_10_126_ms():
    trace = simulate(Network(switch(16, BANDWIDTH_Bps, LATENCY_s)), ring_allreduce(16, 64 * 2**20))
    assert trace.time_s == pytest.approx(10.1263296e-3, rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(p=st.integers(2, 32), pieces=st.integers(1, 2**16), chunks=st.integers(2, 8),
       latency_s=st.sampled_from([0.0, 1e-7, 1e-6, 1e-5]))
def test_pipelined_ring_matches_pipelined_form(p, pieces, chunks, latency_s):
    size = p * chunks * pieces
    network = Network(switch(p, BANDWIDTH_Bps, latency_s))
    trace = simulate(network, ring_allreduce(p, size, chunks=chunks))
    expected = ring_allreduce_time(p, size, 2 * latency_s, 1 / BANDWIDTH_Bps, chunks=chunks)
    assert trace.time_s == pytest.approx(expected, rel=1e-9)
    assert trace.time_s == pytest.approx(predict("ring", network, p, size, chunks=chunks), rel=1e-9)


def test_pipelining_hides_latency_when_bandwidth_bound():
    network = Network(switch(8, BANDWIDTH_Bps, LATENCY_s))
    size = 64 * 2**20
    plain = simulate(network, ring_allreduce(8, size)).time_s
    piped = simulate(network, ring_allreduce(8, size, chunks=8)).time_s
    assert piped < plain
    assert piped == pytest.approx(2 * 7 / 8 * size / BANDWIDTH_Bps + 2 * LATENCY_s, rel=1e-9)


def test_ring_on_a_ring_topology_uses_neighbour_links():
    network = Network(ring(6, 25e9, 5e-7))
    trace = simulate(network, ring_allreduce(6, 6 * 2**20))
    assert set(trace.transfers()["hops"]) == {1}
    assert trace.time_s == pytest.approx(10 * (5e-7 + 2**20 / 25e9), rel=1e-9)


def test_lone_transfer_takes_latency_plus_size_over_bottleneck():
    from simnet.schedule import Schedule, Transfer

    network = Network(ring(5, 10e9, 1e-6))
    schedule = Schedule("broadcast", 5, (10**6,), (Transfer(0, 2, (0,), 10**6),), root=0)
    trace = simulate(network, schedule)
    assert trace.time_s == pytest.approx(2e-6 + 10**6 / 10e9, rel=1e-12)
    assert trace.time_s == pytest.approx(network.transfer_time_s(0, 2, 10**6), rel=1e-12)


def test_fifo_serializes_transfers_sharing_a_link():
    from simnet.schedule import Schedule, Transfer

    network = Network(switch(3, 1e9, 1e-6))
    schedule = Schedule(
        "broadcast", 3, (1000, 1000), (Transfer(0, 1, (0,), 1000), Transfer(0, 2, (1,), 1000)), root=0
    )
    frame = simulate(network, schedule, model="fifo").transfers()
    assert list(frame["end_s"]) == pytest.approx([2e-6 + 1e-6, 2e-6 + 2e-6], rel=1e-12)
    assert list(frame["start_s"]) == pytest.approx([0.0, 1e-6], rel=1e-12)


def test_trace_frame_has_one_row_per_transfer():
    schedule = ring_allreduce(4, 4096, chunks=2)
    frame = simulate(Network(switch(4, 1e9, 1e-6)), schedule).transfers()
    assert len(frame) == len(schedule)
    assert (frame["end_s"] >= frame["start_s"]).all() and (frame["start_s"] >= frame["ready_s"]).all()
    assert set(frame["stage"]) == {"reduce_scatter", "all_gather"}
