import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet.algorithms import ring_allreduce
from simnet.errors import ScheduleError
from simnet.schedule import Schedule, Transfer, check, split_bytes


def replace_transfer(schedule: Schedule, index: int, **changes) -> Schedule:
    transfers = list(schedule.transfers)
    transfers[index] = dataclasses.replace(transfers[index], **changes)
    return dataclasses.replace(schedule, transfers=tuple(transfers))


def drop_transfer(schedule: Schedule, index: int) -> Schedule:
    """Remove transfer `index`; dependents inherit its dependencies, later indices shift down."""
    dropped = schedule.transfers[index]
    kept = []
    for i, t in enumerate(schedule.transfers):
        if i == index:
            continue
        deps = set()
        for d in t.deps:
            deps.update(dropped.deps if d == index else (d,))
        kept.append(dataclasses.replace(t, deps=tuple(sorted(d - (d > index) for d in deps))))
    return dataclasses.replace(schedule, transfers=tuple(kept))


@settings(max_examples=60, deadline=None)
@given(p=st.integers(2, 64), size=st.integers(1, 5000), chunks=st.integers(1, 4))
def test_every_ring_schedule_computes_allreduce(p, size, chunks):
    schedule = ring_allreduce(p, size, chunks=chunks)
    assert len(schedule) == 2 * (p - 1) * p * chunks
    assert schedule.size_bytes == size
    check(schedule)


@settings(max_examples=25, deadline=None)
@given(p=st.integers(2, 24), size=st.integers(1, 3000), chunks=st.integers(1, 3))
def test_numeric_mode_agrees_with_numpy_sum(p, size, chunks):
    check(ring_allreduce(p, size, chunks=chunks), numeric=True, seed=p)


def test_dropped_transfer_names_rank_and_chunk():
    schedule = ring_allreduce(4, 400)
    last = len(schedule) - 1
    broken = drop_transfer(schedule, last)
    t = schedule.transfers[last]
    with pytest.raises(ScheduleError, match=rf"^rank {t.dst}, chunk {t.chunks[0]}: holds contributions of"):
        check(broken)


def test_dropped_reduce_is_caught_as_missing_contributions():
    broken = drop_transfer(ring_allreduce(4, 400), 0)
    with pytest.raises(ScheduleError, match=r"rank \d, chunk 0: holds contributions of \{.*\}, expected all 4 ranks"):
        check(broken)


def test_redirected_transfer_is_caught():
    schedule = ring_allreduce(4, 400)
    last = schedule.transfers[-1]
    broken = replace_transfer(schedule, len(schedule) - 1, dst=(last.dst + 1) % 4)
    with pytest.raises(ScheduleError, match=rf"^rank {last.dst}, chunk {last.chunks[0]}: holds contributions"):
        check(broken)


def test_redirecting_a_first_reduce_elsewhere_still_sums_everything():
    """Not every mutation is a bug: the contribution still reaches the chunk's chain."""
    check(replace_transfer(ring_allreduce(4, 400), 0, dst=2))


def test_race_without_dependency_is_caught():
    schedule = ring_allreduce(4, 400)
    index = next(i for i, t in enumerate(schedule.transfers) if t.deps)
    broken = replace_transfer(schedule, index, deps=())
    with pytest.raises(ScheduleError, match="with no dependency between them"):
        check(broken)


def test_double_counting_is_caught():
    transfers = (
        Transfer(0, 1, (0,), 1, "reduce"),
        Transfer(0, 1, (0,), 1, "reduce", deps=(0,)),
    )
    schedule = Schedule("allreduce", 2, (1,), transfers)
    with pytest.raises(ScheduleError, match=r"rank 1, chunk 0: transfer 1 counts the contributions of ranks \{0\} twice"):
        check(schedule)


def test_sending_data_a_rank_does_not_hold_is_caught():
    schedule = Schedule("broadcast", 3, (4,), (Transfer(1, 2, (0,), 4),), root=0)
    with pytest.raises(ScheduleError, match="rank 1, chunk 0: transfer 0 sends it before the rank holds any data"):
        check(schedule)


def test_numeric_mode_catches_what_it_executes():
    schedule = Schedule("broadcast", 2, (4,), (Transfer(0, 1, (0,), 4),), root=0)
    check(schedule, numeric=True)


@pytest.mark.parametrize(
    ("transfer", "message"),
    [
        (Transfer(0, 0, (0,), 1), "two distinct ranks"),
        (Transfer(0, 5, (0,), 1), "two distinct ranks"),
        (Transfer(0, 1, (3,), 1), "chunks must be in"),
        (Transfer(0, 1, (0,), -1), "nbytes must be"),
        (Transfer(0, 1, (0,), 1, "add"), "op must be"),
        (Transfer(0, 1, (0,), 1, deps=(0,)), "dependencies must be earlier"),
    ],
)
def test_malformed_transfers_are_refused(transfer, message):
    with pytest.raises(ScheduleError, match=message):
        Schedule("allreduce", 2, (1,), (transfer,))


def test_collective_needs_root_or_owners():
    with pytest.raises(ScheduleError, match="needs a root"):
        Schedule("broadcast", 2, (1,), ())
    with pytest.raises(ScheduleError, match="one owner rank per chunk"):
        Schedule("all_gather", 2, (1, 1), ())
    with pytest.raises(ScheduleError, match="collective must be one of"):
        Schedule("alltoall", 2, (1,), ())


@given(st.integers(0, 10**9), st.integers(1, 1000))
def test_split_bytes_partitions_evenly(size, parts):
    pieces = split_bytes(size, parts)
    assert sum(pieces) == size and len(pieces) == parts
    assert max(pieces) - min(pieces) <= 1
    assert pieces == sorted(pieces, reverse=True)


def test_a_pairwise_exchange_reads_before_either_side_writes():
    """MPI_Sendrecv semantics: 0 -> 1 and 1 -> 0 over the same chunk, unordered, both reduce."""
    exchange = (Transfer(0, 1, (0,), 4, "reduce"), Transfer(1, 0, (0,), 4, "reduce"))
    check(Schedule("allreduce", 2, (4,), exchange), numeric=True)
    ordered = (exchange[0], Transfer(1, 0, (0,), 4, "reduce", deps=(0,)))
    with pytest.raises(ScheduleError, match="twice"):
        check(Schedule("allreduce", 2, (4,), ordered))
    one_way = (Transfer(0, 1, (0,), 4, "reduce"), Transfer(1, 2, (0,), 4, "reduce"))
    with pytest.raises(ScheduleError, match="no dependency"):
        check(Schedule("reduce", 3, (4,), one_way, root=2))
