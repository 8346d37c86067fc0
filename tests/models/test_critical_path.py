"""The critical-path model: the longest path through a schedule without contention."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from simnet.algorithms import ALGORITHMS
from simnet.engine import simulate
from simnet.models import critical_path_finish_s, critical_path_time, predict
from simnet.network import Network
from simnet.schedule import Schedule, Transfer
from simnet.topology import switch
from tests.algorithms.fabrics import dgx_cluster, full_mesh
from tests.algorithms.test_dense import ALLREDUCE, HIERARCHICAL

SWITCH16 = Network(switch(16, 12.5e9, 1e-6))


def _params(name, p):
    return {"factors": [2, p // 2]} if name in HIERARCHICAL else {}


def _links_shared_concurrently(trace):
    """Whether two transfers ever use the same link at overlapping times."""
    busy = {}
    for t, start, end in zip(trace.schedule.transfers, trace.start_s, trace.end_s):
        for link in trace.network.route(t.src, t.dst):
            busy.setdefault(link, []).append((start, end))
    for intervals in busy.values():
        intervals.sort()
        if any(later[0] < earlier[1] for earlier, later in zip(intervals, intervals[1:])):
            return True
    return False


@pytest.mark.parametrize("name", ALLREDUCE)
@pytest.mark.parametrize("size", [1024, 2**20])
def test_critical_path_equals_simulation_without_link_sharing(name, size):
    """On a full mesh, with chunks = 1 and equal pieces, no two transfers share a link at once."""
    p = 8
    network = Network(full_mesh(p))
    schedule = ALGORITHMS[name].builder(p, size, **_params(name, p))
    trace = simulate(network, schedule)
    assert not _links_shared_concurrently(trace)
    assert critical_path_time(network, schedule) == pytest.approx(trace.time_s, rel=1e-9)
    np.testing.assert_allclose(critical_path_finish_s(network, schedule), trace.end_s, rtol=1e-9)


@pytest.mark.parametrize("name", ALLREDUCE)
@settings(max_examples=6, deadline=None)
@given(overhead=st.sampled_from([0.0, 1e-7, 3e-6]), gamma=st.sampled_from([0.0, 2e-11]),
       offset=st.sampled_from([0.0, 5e-7, 4e-6]), slowdown=st.lists(st.sampled_from([1.0, 1.5, 3.0]), min_size=8,
                                                                     max_size=8))
def test_critical_path_charges_the_simulations_overhead_offsets_and_stragglers(name, overhead, gamma, offset,
                                                                               slowdown):
    """What :func:`simulate` charges per transfer beyond the wire is on the critical path too: with no link
    shared at once the two agree."""
    p, size = 8, 2**16
    network = Network(full_mesh(p))
    schedule = ALGORITHMS[name].builder(p, size, **_params(name, p))
    options = {"gamma_s_per_byte": gamma, "overhead_s": overhead, "start_offset_s": [offset] * p,
               "slowdown": slowdown}
    trace = simulate(network, schedule, **options)
    assume(not _links_shared_concurrently(trace))
    np.testing.assert_allclose(critical_path_finish_s(network, schedule, **options), trace.end_s, rtol=1e-9)
    assert critical_path_time(network, schedule, **options) == pytest.approx(trace.time_s, rel=1e-9)


def test_a_late_rank_delays_the_critical_path_as_it_delays_the_simulation():
    p = 8
    network = Network(full_mesh(p))
    schedule = ALGORITHMS["ring"].builder(p, 2**16, chunks=1)
    offsets = [0.0] * p
    offsets[3] = 7e-6
    trace = simulate(network, schedule, start_offset_s=offsets)
    finish = critical_path_finish_s(network, schedule, start_offset_s=offsets)
    on_time = critical_path_finish_s(network, schedule)
    waits = np.diff(schedule.columns.dep_offsets) > 0
    first_of_late = (schedule.columns.src == 3) & ~waits
    np.testing.assert_allclose(finish[first_of_late], 7e-6 + on_time[first_of_late], rtol=1e-12)
    assert on_time.max() + 1e-6 < finish.max() <= trace.time_s * (1 + 1e-12)


@pytest.mark.parametrize("name", ["ring", "recursive_doubling", "halving_doubling", "binomial_tree"])
def test_critical_path_equals_closed_form_with_reduction_cost(name):
    p, n, gamma = 16, 2**20, 3e-11
    schedule = ALGORITHMS[name].builder(p, n)
    assert critical_path_time(SWITCH16, schedule, gamma) == pytest.approx(
        predict(name, SWITCH16, p, n, gamma_s_per_byte=gamma), rel=1e-9
    )


@pytest.mark.parametrize("name", ALLREDUCE)
@settings(max_examples=4, deadline=None)
@given(p=st.sampled_from([4, 6, 8, 12, 16]), size=st.integers(1, 10**6), chunks=st.integers(1, 4))
def test_contention_never_beats_the_critical_path(name, p, size, chunks):
    network = Network(dgx_cluster(2, 8))
    schedule = ALGORITHMS[name].builder(p, size, chunks=chunks, **_params(name, p))
    assert critical_path_time(network, schedule) <= simulate(network, schedule).time_s * (1 + 1e-12)


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_critical_path_matches_a_plain_longest_path(data):
    count = data.draw(st.integers(1, 60))
    transfers = []
    for i in range(count):
        deps = data.draw(st.lists(st.integers(0, i - 1), max_size=3, unique=True)) if i else []
        src = data.draw(st.integers(0, 3))
        dst = (src + data.draw(st.integers(1, 3))) % 4
        op = data.draw(st.sampled_from(["copy", "reduce"]))
        transfers.append(Transfer(src, dst, (0,), data.draw(st.integers(0, 10**6)), op, tuple(sorted(deps))))
    schedule = Schedule("allreduce", 4, (1,), tuple(transfers))
    network = Network(switch(4, 1e9, 1e-6))
    gamma = 1e-10
    finish = []
    for t in transfers:
        ready = max((finish[d] for d in t.deps), default=0.0)
        cost = network.transfer_time_s(t.src, t.dst, t.nbytes) + (t.nbytes * gamma if t.op == "reduce" else 0.0)
        finish.append(ready + cost)
    np.testing.assert_allclose(critical_path_finish_s(network, schedule, gamma_s_per_byte=gamma), finish, rtol=1e-12)


@pytest.mark.parametrize("piece", [1, 3, 64])
@pytest.mark.parametrize("name", ["ring", "blueconnect", "double_binary_tree", "nccl_tree"])
def test_blocks_cut_on_a_thread_and_added_in_pieces_give_the_same_finish_times(monkeypatch, name, piece):
    """Large schedules cut their blocks on a thread while the routes are computed, and gather dependencies a
    piece at a time: forced on a small schedule, every finish time is the same float."""
    from simnet.models import critical_path

    schedule = ALGORITHMS[name].build(16, 3 * 2**20, **_params(name, 16))
    whole = critical_path_finish_s(SWITCH16, schedule, gamma_s_per_byte=1e-11)
    monkeypatch.setattr(critical_path, "_OVERLAPPED", 0)
    monkeypatch.setattr(critical_path, "_PIECE", piece)
    np.testing.assert_array_equal(critical_path_finish_s(SWITCH16, schedule, gamma_s_per_byte=1e-11), whole)
