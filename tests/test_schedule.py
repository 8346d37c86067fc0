import dataclasses
import pickle
import re

import numpy as np

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet.algorithms import ring_allreduce
from simnet.errors import ScheduleError
from simnet.schedule import (
    MAX_BUFFERS,
    OPS,
    Columns,
    Schedule,
    Transfer,
    TransferTable,
    buffer_code,
    buffer_name,
    check,
    split_bytes,
)


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
        Schedule("scan", 2, (1,), ())
    with pytest.raises(ScheduleError, match="alltoall needs one target rank per chunk"):
        Schedule("alltoall", 2, (1,), (), owners=(0,))
    with pytest.raises(ScheduleError, match="targets must be ranks in"):
        Schedule("alltoallv", 2, (1,), (), owners=(0,), targets=(2,))


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


def table_of(transfers: list[Transfer]) -> TransferTable:
    stages = sorted({t.stage for t in transfers}) or [""]
    return TransferTable(
        src=np.array([t.src for t in transfers], dtype=np.int64),
        dst=np.array([t.dst for t in transfers], dtype=np.int64),
        nbytes=np.array([t.nbytes for t in transfers], dtype=np.int64),
        op=np.array([OPS.index(t.op) for t in transfers], dtype=np.int64),
        chunks=np.array([c for t in transfers for c in t.chunks], dtype=np.int64),
        chunk_offsets=np.cumsum([0] + [len(t.chunks) for t in transfers]),
        deps=np.array([d for t in transfers for d in t.deps], dtype=np.int64),
        dep_offsets=np.cumsum([0] + [len(t.deps) for t in transfers]),
        stage=np.array([stages.index(t.stage) for t in transfers], dtype=np.int64),
        stages=stages,
    )


@st.composite
def transfer_lists(draw):
    count = draw(st.integers(0, 12))
    transfers = []
    for index in range(count):
        src = draw(st.integers(0, 3))
        transfers.append(
            Transfer(
                src,
                draw(st.integers(0, 3).filter(lambda d, src=src: d != src)),
                tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=3))),
                draw(st.integers(0, 10**12)),
                draw(st.sampled_from(["copy", "reduce"])),
                tuple(draw(st.lists(st.integers(0, index - 1), max_size=3))) if index else (),
                draw(st.sampled_from(["", "reduce_scatter", "all_gather"])),
            )
        )
    return transfers


@settings(max_examples=100, deadline=None)
@given(transfers=transfer_lists())
def test_a_transfer_table_is_the_same_schedule_as_its_tuple(transfers):
    table = table_of(transfers)
    assert list(table) == transfers
    assert [table[i] for i in range(-len(table), len(table))] == transfers + transfers
    assert table == transfers and table[1:3] == tuple(transfers[1:3])
    assert table == table_of(transfers)
    if transfers:
        assert table != table_of(transfers[:-1]) and table != table_of([dataclasses.replace(transfers[0], stage="x")] + transfers[1:])
    as_tuple = Schedule("allreduce", 4, (1,) * 5, tuple(transfers))
    as_table = Schedule("allreduce", 4, (1,) * 5, table)
    assert as_table == as_tuple and len(as_table) == len(transfers)
    assert as_table.total_bytes == as_tuple.total_bytes
    for name in Columns._fields:
        assert np.array_equal(getattr(as_table.columns, name), getattr(as_tuple.columns, name)), name
        assert getattr(as_table.columns, name).dtype == getattr(as_tuple.columns, name).dtype, name
    assert pickle.loads(pickle.dumps(as_table)) == as_tuple


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"dst": 0}, "transfer 1 (0 -> 0): needs two distinct ranks"),
        ({"chunks": (9,)}, "transfer 1 (0 -> 1): chunks must be in [0, 2), got (9,)"),
        ({"deps": (1,)}, "transfer 1 (0 -> 1): dependencies must be earlier transfers, got (1,)"),
    ],
)
def test_a_transfer_table_names_the_first_bad_transfer_like_a_tuple(change, message):
    transfers = [Transfer(1, 0, (0,), 4), dataclasses.replace(Transfer(0, 1, (1,), 4, deps=(0,)), **change)]
    for given_as in (tuple(transfers), table_of(transfers)):
        with pytest.raises(ScheduleError, match=re.escape(message)):
            Schedule("allreduce", 2, (4, 4), given_as)


@pytest.mark.parametrize(
    ("arrays", "path"),
    [
        ({"dst": [1, 0, 1]}, "dst"),
        ({"nbytes": [1.5, 2.0]}, "nbytes"),
        ({"op": [3, 0]}, "op"),
        ({"deps": [[0]]}, "deps"),
        ({"dep_offsets": [0, 2, 1]}, "dep_offsets"),
        ({"stage": [0, 3]}, "stage"),
    ],
)
def test_inconsistent_table_arrays_are_refused_with_their_name(arrays, path):
    good = {"src": [0, 1], "dst": [1, 0], "nbytes": [8, 8], "op": ["reduce", "copy"], "chunks": [0, 0],
            "deps": [0], "dep_offsets": [0, 0, 1]}
    with pytest.raises(ScheduleError) as error:
        TransferTable(**{**good, **arrays})
    assert error.value.path == path


def test_the_ring_is_built_as_a_table_and_checks_out():
    schedule = ring_allreduce(5, 1001, chunks=2, channels=3)
    assert isinstance(schedule.transfers, TransferTable)
    check(schedule, numeric=True)


def test_a_table_owns_frozen_copies_of_writable_arrays_even_after_pickling():
    src = np.array([0, 1])
    table = TransferTable(src=src, dst=[1, 0], nbytes=[8, 8], op=["reduce", "copy"], chunks=[0, 0], deps=[0],
                          dep_offsets=[0, 0, 1])
    src[0] = 1
    assert table[0].src == 0 and src.flags.writeable
    restored = pickle.loads(pickle.dumps(table))
    assert restored == table
    with pytest.raises(ValueError):
        restored.src[0] = 1


def test_frozen_columns_are_shared_between_tables_and_writable_ones_copied():
    table = ring_allreduce(4, 4096).transfers
    nbytes = np.asarray(table.nbytes // 2)
    smaller = table.replace(nbytes=nbytes)
    assert smaller.src is table.src and smaller.deps is table.deps and smaller.op is table.op
    assert smaller.nbytes is not nbytes and not smaller.nbytes.flags.writeable
    nbytes[0] = 1
    assert smaller.nbytes[0] == table.nbytes[0] // 2
    view = table.src[:]
    assert TransferTable(src=view, dst=table.dst, nbytes=table.nbytes, op=table.op, piece=table.piece,
                         pieces=(table.piece_offsets, table.piece_chunks), deps=table.deps,
                         dep_offsets=table.dep_offsets).src is not view


def test_unsigned_sizes_beyond_int64_are_refused_by_name():
    with pytest.raises(ScheduleError) as error:
        TransferTable(src=[0], dst=[1], nbytes=np.array([2**63], dtype=np.uint64), op=["copy"], chunks=[0], deps=[],
                      dep_offsets=[0, 0])
    assert error.value.path == "nbytes" and "64-bit" in str(error.value)


def test_numbered_scratch_buffers_start_empty_and_round_trip_their_names():
    for code in (0, 1, 2, 3, 17, MAX_BUFFERS - 1):
        assert buffer_code(buffer_name(code)) == code
    for bad in ("scratch0", "scratch01", f"scratch{MAX_BUFFERS}", "scratchx", "output"):
        with pytest.raises(ScheduleError):
            buffer_code(bad)
    transfers = [
        Transfer(0, 1, (0,), 4, "copy", src_buffer="work", dst_buffer="scratch1"),
        Transfer(1, 1, (0,), 4, "reduce", (0,), src_buffer="scratch1", dst_buffer="work"),
        Transfer(1, 0, (0,), 4, "copy", (1,)),
    ]
    schedule = Schedule("allreduce", 2, (4,), transfers)
    assert schedule.transfers[0].dst_buffer == "scratch1"
    check(schedule, numeric=True)
    reading_empty = [Transfer(1, 0, (0,), 4, "reduce", src_buffer="scratch2")]
    with pytest.raises(ScheduleError, match="before the rank holds any data"):
        check(Schedule("allreduce", 2, (4,), reading_empty))


def test_a_switch_endpoint_starts_empty_and_sums_what_is_added_into_it():
    n = 4
    reduce = [Transfer(r, n, (0,), 8, op="reduce") for r in range(n)]
    back = [Transfer(n, r, (0,), 8, deps=tuple(range(n))) for r in range(n)]
    schedule = Schedule(collective="allreduce", nranks=n, chunk_bytes=(8,), transfers=reduce + back,
                        switches=((0, 1, 2, 3),))
    assert schedule.endpoints == 5
    check(schedule, numeric=True)
    with pytest.raises(ScheduleError, match="holds contributions of {0, 1, 2}, expected all 4"):
        check(schedule.replace(transfers=reduce[:3] + [t.__class__(n, t.dst, t.chunks, 8, deps=(0, 1, 2))
                                                       for t in back]))


@pytest.mark.parametrize(
    ("switches", "transfers", "message"),
    [
        (((0, 0),), [], "must serve distinct ranks"),
        (((0, 5),), [], "must serve distinct ranks"),
        ((), [Transfer(0, 2, (0,), 1)], r"needs two distinct ranks in \[0, 2\)"),
        (((0, 1),), [Transfer(0, 2, (0,), 1, dst_buffer="scratch")], "buffer other than work at a switch"),
    ],
)
def test_switch_endpoints_are_validated(switches, transfers, message):
    with pytest.raises(ScheduleError, match=message):
        Schedule(collective="allreduce", nranks=2, chunk_bytes=(1,), transfers=transfers, switches=switches)


def test_protocol_columns_round_trip_through_transfers_and_pickle():
    import pickle

    transfers = [Transfer(0, 1, (0,), 8, wire_bytes=16, delay_s=1e-6, channel=3), Transfer(1, 0, (0,), 8, deps=(0,))]
    schedule = Schedule(collective="allreduce", nranks=2, chunk_bytes=(8,), transfers=transfers)
    assert list(schedule.transfers) == [transfers[0], Transfer(1, 0, (0,), 8, deps=(0,), wire_bytes=8)]
    columns = schedule.columns
    assert columns.nbytes.tolist() == [16, 8] and columns.payload.tolist() == [8, 8]
    assert columns.delay_s.tolist() == [1e-6, 0.0] and columns.channel.tolist() == [3, 0]
    assert pickle.loads(pickle.dumps(schedule)) == schedule
    with pytest.raises(ScheduleError, match="finite times"):
        schedule.transfers.replace(delay_s=[-1.0, 0.0])


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_depends_on_is_reachability_through_dependencies_in_any_order(data):
    """The race check's walk (it tries the dependency nearest the target first) agrees with NetworkX's
    ancestors on random dependency graphs whose lists come in any order."""
    import networkx as nx

    from simnet.schedule import _depends_on

    count = data.draw(st.integers(2, 40))
    parents = [data.draw(st.permutations(sorted(data.draw(st.sets(st.integers(0, t - 1), max_size=4))) if t else []))
               for t in range(count)]
    graph = nx.DiGraph()
    graph.add_nodes_from(range(count))
    graph.add_edges_from((d, t) for t in range(count) for d in parents[t])
    for later in range(count):
        ancestors = nx.ancestors(graph, later)
        assert [_depends_on(parents, later, earlier) for earlier in range(later)] == \
               [earlier in ancestors for earlier in range(later)]


def test_reordered_moves_every_column_and_renumbers_the_dependencies():
    table = TransferTable.from_transfers([
        Transfer(0, 1, (0,), 10, wire_bytes=20, channel=1),
        Transfer(1, 2, (1,), 11, delay_s=1e-6),
        Transfer(1, 2, (0,), 12, deps=(0,)),
        Transfer(2, 0, (1,), 13, deps=(1, 2)),
    ])
    moved = table.reordered(np.array([1, 0, 2, 3]))
    assert [(t.src, t.dst, t.nbytes, t.deps) for t in moved] == [(1, 2, 11, ()), (0, 1, 10, ()), (1, 2, 12, (1,)),
                                                                 (2, 0, 13, (0, 2))]
    assert moved.wire_bytes.tolist() == [11, 20, 12, 13] and moved.channel.tolist() == [0, 1, 0, 0]
    assert moved.delay_s.tolist() == [1e-6, 0.0, 0.0, 0.0]
    assert table.reordered(np.arange(4)) == table
    assert len(TransferTable.from_transfers([]).reordered(np.zeros(0, dtype=np.int64))) == 0
