"""Tests of simnet.algorithms.builder: the dependencies ScheduleBuilder derives from the cells transfers touch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet.algorithms.builder import ScheduleBuilder
from simnet.errors import ScheduleError
from simnet.schedule import BUFFERS, INPUT, OPS, REDUCE

COLUMNS = ("src", "dst", "nbytes", "op", "piece", "piece_offsets", "piece_chunks", "deps", "dep_offsets", "stage",
           "src_buffer", "dst_buffer")
TARGETS = tuple(b for b in BUFFERS if b != "input")


def deps(builder: ScheduleBuilder) -> list[tuple[int, ...]]:
    return [t.deps for t in built(builder).transfers]


def built(builder: ScheduleBuilder):
    return builder.schedule("allreduce", "test", {}, topk=1)


# the rules, one small example each


def test_a_read_waits_for_the_write_of_its_cell():
    builder = ScheduleBuilder([8, 8], 3)
    write = builder.send(0, 1, (0,), "copy", "s")
    other_chunk = builder.send(1, 2, (1,), "copy", "s")
    read = builder.send(1, 2, (0,), "copy", "s")
    assert deps(builder)[other_chunk] == ()
    assert deps(builder)[read] == (write,)


def test_a_write_waits_for_the_reads_since_the_last_write_and_only_for_them():
    builder = ScheduleBuilder([8], 4)
    write = builder.send(0, 1, (0,), "copy", "s")
    read = builder.send(1, 2, (0,), "copy", "s")
    again = builder.send(1, 3, (0,), "copy", "s")
    overwrite = builder.send(3, 1, (0,), "copy", "s")
    assert deps(builder)[read] == deps(builder)[again] == (write,)
    assert deps(builder)[overwrite] == (read, again)


@pytest.mark.parametrize("op", OPS)
def test_a_write_waits_for_the_last_plain_write(op):
    builder = ScheduleBuilder([8], 3)
    first = builder.send(0, 1, (0,), "copy", "s")
    second = builder.send(2, 1, (0,), op, "s")
    assert deps(builder)[second] == (first,)


def test_reductions_into_a_cell_commute_until_someone_reads_it():
    builder = ScheduleBuilder([8], 4)
    a = builder.send(0, 1, (0,), "reduce", "s")
    b = builder.send(2, 1, (0,), "reduce", "s")
    c = builder.send(3, 1, (0,), "reduce", "s")
    read = builder.send(1, 3, (0,), "copy", "s")
    after_read = builder.send(0, 1, (0,), "reduce", "s")
    overwrite = builder.send(2, 1, (0,), "copy", "s")
    got = deps(builder)
    assert got[a] == got[b] == got[c] == ()
    assert got[read] == (a, b, c)
    assert got[after_read] == (read,)
    assert got[overwrite] == (after_read,)


def test_a_plain_write_waits_for_every_pending_reduction():
    builder = ScheduleBuilder([8], 4)
    a = builder.send(0, 1, (0,), "reduce", "s")
    b = builder.send(2, 1, (0,), "reduce", "s")
    copy = builder.send(3, 1, (0,), "copy", "s")
    assert deps(builder)[copy] == (a, b)


@pytest.mark.parametrize("first, second", [("reduce", "reduce_topk"), ("reduce_topk", "reduce"),
                                           ("reduce_topk", "reduce_topk")])
def test_reduce_topk_does_not_commute(first, second):
    builder = ScheduleBuilder([8], 3)
    a = builder.send(0, 1, (0,), first, "s")
    b = builder.send(2, 1, (0,), second, "s")
    assert deps(builder)[b] == (a,)


def test_reading_the_input_buffer_waits_for_nothing_and_is_waited_for_by_nothing():
    builder = ScheduleBuilder([8], 3)
    into_work = builder.send(1, 0, (0,), "copy", "s")
    from_input = builder.send(0, 2, (0,), "reduce", "s", src_buffer="input")
    overwrite = builder.send(1, 0, (0,), "copy", "s")
    assert deps(builder)[from_input] == ()
    assert deps(builder)[overwrite] == (into_work,)
    with pytest.raises(ScheduleError, match="read-only"):
        builder.send(1, 0, (0,), "copy", "s", dst_buffer="input")


def test_buffers_of_one_rank_are_distinct_cells():
    builder = ScheduleBuilder([8], 2)
    work = builder.send(1, 0, (0,), "copy", "s")
    scratch = builder.send(1, 0, (0,), "copy", "s", dst_buffer="scratch")
    move = builder.send(0, 0, (0,), "copy", "s", src_buffer="scratch")
    got = deps(builder)
    assert got[scratch] == ()
    assert got[move] == (work, scratch)
    with pytest.raises(ScheduleError, match="onto itself"):
        builder.send(0, 0, (0,), "copy", "s", src_buffer="scratch", dst_buffer="scratch")


def test_a_piece_waits_for_the_union_of_its_chunks_histories():
    builder = ScheduleBuilder([8, 8, 8], 3)
    a = builder.send(0, 1, (0,), "copy", "s")
    b = builder.send(2, 1, (2,), "copy", "s")
    both = builder.send(1, 2, (2, 0, 2), "copy", "s")
    got = built(builder).transfers
    assert got[both].deps == (a, b)
    assert got[both].chunks == (2, 0) and got[both].nbytes == 16


def test_after_adds_program_order():
    builder = ScheduleBuilder([8, 8], 3)
    a = builder.send(0, 1, (0,), "copy", "s")
    b = builder.send(2, 0, (1,), "copy", "s", after=(a,))
    assert deps(builder)[b] == (a,)
    with pytest.raises(ScheduleError, match="earlier transfers"):
        builder.send(2, 0, (1,), "copy", "s", after=(5,))


@pytest.mark.parametrize("op", OPS)
def test_an_exchange_reads_both_cells_before_writing_either(op):
    builder = ScheduleBuilder([8], 4)
    before = builder.send(3, 0, (0,), "copy", "s")
    first, second = builder.exchange(0, 1, (0,), op, "x")
    read = builder.send(1, 2, (0,), "copy", "s")
    write = builder.send(3, 0, (0,), "copy", "s")
    got = built(builder).transfers
    assert (got[first].src, got[first].dst, got[second].src, got[second].dst) == (0, 1, 1, 0)
    assert got[first].deps == got[second].deps == (before,)
    assert got[read].deps == (first, second)
    assert got[write].deps == (first, second)


def test_an_exchange_waits_for_the_reads_and_reductions_of_both_cells():
    builder = ScheduleBuilder([8], 4)
    reduce = builder.send(2, 1, (0,), "reduce", "s")
    read = builder.send(0, 3, (0,), "copy", "s")
    first, second = builder.exchange(0, 1, (0,), "reduce", "x")
    got = deps(builder)
    assert got[first] == (reduce,)
    assert got[second] == (reduce, read)


# send_batch


def test_send_batch_refuses_two_writes_of_one_cell():
    builder = ScheduleBuilder([8, 8], 3)
    piece = builder.piece((0,))
    with pytest.raises(ScheduleError, match="same buffer cell"):
        builder.send_batch([0, 1], [2, 2], [piece, piece], "reduce", "s")


def test_send_batch_refuses_two_reads_of_one_cell():
    builder = ScheduleBuilder([8, 8], 3)
    piece = builder.piece((0,))
    with pytest.raises(ScheduleError, match="same buffer cell"):
        builder.send_batch([0, 0], [1, 2], [piece, piece], "copy", "s")


def test_send_batch_refuses_a_cell_read_by_one_and_written_by_another():
    builder = ScheduleBuilder([8] * 40, 3)
    long, short = builder.piece(tuple(range(40))), builder.piece((39,))
    with pytest.raises(ScheduleError, match="same buffer cell"):
        builder.send_batch([0, 1], [1, 2], [long, short], "copy", "s")


def test_send_batch_accepts_the_same_chunk_in_two_buffers():
    builder = ScheduleBuilder([8], 2)
    piece = builder.piece((0,))
    builder.send_batch([0], [1], [piece], "copy", "s")
    builder.send_batch([1, 0], [0, 1], [piece, piece], "copy", "s", src_buffer="work", dst_buffer="scratch")
    assert deps(builder) == [(), (0,), ()]


def test_a_refused_batch_leaves_the_builder_as_it_was():
    refused, clean = ScheduleBuilder([8, 8], 3), ScheduleBuilder([8, 8], 3)
    for builder in (refused, clean):
        builder.send(0, 1, (0,), "reduce", "s")
    piece = refused.piece((0,))
    with pytest.raises(ScheduleError):
        refused.send_batch([1, 2], [2, 2], [piece, piece], "copy", "s")
    for builder in (refused, clean):
        builder.send(2, 1, (0,), "reduce", "s")
        builder.send(1, 2, (0, 1), "copy", "s")
    assert deps(refused) == deps(clean) == [(), (), (0, 1)]


# random programs


@st.composite
def programs(draw, *, exchanges: bool = False):
    """Steps of transfers touching disjoint cells: ``(nranks, chunk_bytes, steps)``.

    A step is ``("batch", op, src_buffer, dst_buffer, [(src, dst, piece), ...])``, or
    ``("exchange", op, a, b, piece)`` if `exchanges`. Pieces may repeat a chunk and
    may hold more than 32 chunks.
    """
    nranks = draw(st.integers(2, 4))
    nchunks = draw(st.sampled_from([1, 3, 6, 40]))
    chunk_bytes = draw(st.lists(st.integers(1, 1000), min_size=nchunks, max_size=nchunks))

    def pieces():
        order = draw(st.permutations(range(nchunks)))
        piece = tuple(order[: draw(st.integers(1, nchunks))])
        return piece + piece[:1] if draw(st.booleans()) else piece

    steps = []
    for _ in range(draw(st.integers(1, 10))):
        op = draw(st.sampled_from(OPS))
        if exchanges and draw(st.integers(0, 3)) == 0:
            a, b = draw(st.permutations(range(nranks)))[:2]
            steps.append(("exchange", op, a, b, pieces()))
            continue
        sb, db = draw(st.sampled_from(BUFFERS)), draw(st.sampled_from(TARGETS))
        used: set[tuple] = set()
        transfers = []
        for _ in range(draw(st.integers(1, 4))):
            src, dst = draw(st.integers(0, nranks - 1)), draw(st.integers(0, nranks - 1))
            piece = pieces()
            cells = {(src, sb, c) for c in piece} | {(dst, db, c) for c in piece}
            if (src == dst and sb == db) or cells & used:
                continue
            used |= cells
            transfers.append((src, dst, piece))
        if transfers:
            steps.append(("batch", op, sb, db, transfers))
    return nranks, chunk_bytes, steps


@settings(max_examples=150, deadline=None)
@given(programs())
def test_send_batch_gives_the_schedule_that_sending_one_by_one_gives(program):
    nranks, chunk_bytes, steps = program
    batched, single = ScheduleBuilder(chunk_bytes, nranks), ScheduleBuilder(chunk_bytes, nranks)
    for k, (_, op, sb, db, transfers) in enumerate(steps):
        src, dst, pieces = zip(*transfers)
        batched.send_batch(src, dst, [batched.piece(p) for p in pieces], op, f"step{k}", src_buffer=sb,
                           dst_buffer=db)
        for s, d, p in transfers:
            single.send(s, d, p, op, f"step{k}", src_buffer=sb, dst_buffer=db)
    a, b = built(batched).transfers, built(single).transfers
    for name in COLUMNS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.stages == b.stages


def accesses(table, partners: dict[int, int]):
    """Per transfer: cells read, cells written (``(rank, buffer, chunk)``), both with those of its exchange partner."""
    reads, writes = [], []
    for i in range(len(table)):
        chunks = table.chunks_of(i).tolist()
        sb, db = int(table.src_buffer[i]), int(table.dst_buffer[i])
        reads.append({(int(table.src[i]), sb, c) for c in chunks} if sb != INPUT else set())
        writes.append({(int(table.dst[i]), db, c) for c in chunks})
    grouped_reads = [reads[i] | reads[partners[i]] if i in partners else reads[i] for i in range(len(table))]
    grouped_writes = [writes[i] | writes[partners[i]] if i in partners else writes[i] for i in range(len(table))]
    return reads, writes, grouped_reads, grouped_writes


def conflict(cell, i: int, j: int, reads, writes, table) -> bool:
    """Whether `i` and `j` touch `cell` in an order-sensitive way (not two reads, not two plain reductions)."""
    wi, wj = cell in writes[i], cell in writes[j]
    ri, rj = cell in reads[i], cell in reads[j]
    if not (wi or wj) or not ((wi or ri) and (wj or rj)):
        return False
    commuting = wi and wj and not (ri or rj) and table.op[i] == table.op[j] == REDUCE
    return not commuting


def build(program, batch: bool):
    """The table `program` builds (steps with `send_batch` if `batch`, else `send`) and its exchange partners."""
    nranks, chunk_bytes, steps = program
    builder = ScheduleBuilder(chunk_bytes, nranks)
    partners: dict[int, int] = {}
    for k, step in enumerate(steps):
        if step[0] == "exchange":
            _, op, a, b, piece = step
            first, second = builder.exchange(a, b, piece, op, f"step{k}")
            partners[first], partners[second] = second, first
            continue
        _, op, sb, db, transfers = step
        if batch:
            src, dst, pieces = zip(*transfers)
            builder.send_batch(src, dst, [builder.piece(p) for p in pieces], op, f"step{k}", src_buffer=sb,
                               dst_buffer=db)
        else:
            for s, d, p in transfers:
                builder.send(s, d, p, op, f"step{k}", src_buffer=sb, dst_buffer=db)
    return built(builder).transfers, partners


def ancestors(table) -> list[int]:
    """Per transfer, the set of transfers it transitively depends on, as a bit mask."""
    before: list[int] = []
    for j in range(len(table)):
        mask = 0
        for d in table.deps_of(j).tolist():
            mask |= before[d] | (1 << d)
        before.append(mask)
    return before


@settings(max_examples=150, deadline=None)
@given(programs(exchanges=True), st.booleans())
def test_every_conflicting_pair_of_accesses_is_ordered(program, batch):
    table, partners = build(program, batch)
    reads, writes, _, _ = accesses(table, partners)
    before = ancestors(table)
    for j in range(len(table)):
        for i in range(j):
            if partners.get(j) == i:
                assert not before[j] >> i & 1, f"exchange {i}, {j} is ordered"
                continue
            shared = (reads[i] | writes[i]) & (reads[j] | writes[j])
            if any(conflict(cell, i, j, reads, writes, table) for cell in shared):
                assert before[j] >> i & 1, f"transfers {i} and {j} conflict but are unordered"


@settings(max_examples=150, deadline=None)
@given(programs(exchanges=True), st.booleans())
def test_every_dependency_orders_a_conflict_or_two_reductions(program, batch):
    table, partners = build(program, batch)
    _, writes, grouped_reads, grouped_writes = accesses(table, partners)
    for j in range(len(table)):
        for d in table.deps_of(j).tolist():
            shared = (grouped_reads[d] | grouped_writes[d]) & (grouped_reads[j] | grouped_writes[j])
            reductions = table.op[d] == table.op[j] == REDUCE and writes[d] & writes[j]
            assert reductions or any(conflict(cell, d, j, grouped_reads, grouped_writes, table) for cell in shared), \
                f"transfer {j} depends on {d} without a conflict"


def test_an_addition_after_a_read_orders_the_additions_after_it():
    """The documented conservative rule: it keeps each cell's record to a few transfers."""
    builder = ScheduleBuilder([8], 4)
    read = builder.send(0, 1, (0,), "copy", "s")
    first = builder.send(2, 0, (0,), "reduce", "s")
    second = builder.send(3, 0, (0,), "reduce", "s")
    assert deps(builder)[first] == (read,)
    assert deps(builder)[second] == (first,)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_whole_ring_phase_equals_its_steps_added_one_batch_at_a_time(data):
    """ScheduleBuilder.ring gives exactly the dependencies of the step-by-step batches, after any earlier history."""
    groups = data.draw(st.integers(1, 3))
    m = data.draw(st.integers(2, 5))
    per_block = data.draw(st.integers(1, 3))
    shared = data.draw(st.booleans())
    span = m * per_block * data.draw(st.integers(1, 2))
    if shared:
        nranks, nchunks = m, groups * span
        members = np.array([data.draw(st.permutations(range(m))) for _ in range(groups)])
    else:
        nranks, nchunks = groups * m, span
        members = np.arange(nranks).reshape(groups, m)
    chunk_bytes = [1 + c for c in range(nchunks)]
    pieces_of = [[tuple(sorted(data.draw(st.sets(st.integers(0, span - 1), min_size=1, max_size=6))))
                  for _ in range(per_block)] for _ in range(m)]
    disjoint = [[(b * per_block + k,) for k in range(per_block)] for b in range(m)]
    blocks = disjoint if data.draw(st.booleans()) else pieces_of
    if len({c for block in blocks for piece in block for c in piece}) != sum(len(p) for b in blocks for p in b):
        blocks = disjoint
    shift = span if shared else 0
    blocks_of = [[[tuple(c + g * shift for c in piece) for piece in block] for block in blocks] for g in range(groups)]
    history = data.draw(st.lists(st.tuples(st.integers(0, nranks - 1), st.integers(0, nranks - 1),
                                           st.integers(0, nchunks - 1), st.sampled_from(["copy", "reduce"])),
                                 max_size=8))
    offset, op = data.draw(st.sampled_from([(0, "reduce"), (1, "copy")]))
    built = []
    for whole in (True, False):
        builder = ScheduleBuilder(chunk_bytes, nranks)
        for src, dst, chunk, kind in history:
            if src != dst:
                builder.send(src, dst, (chunk,), kind, "h")
        ids = np.array([[[builder.piece(piece) for piece in block] for block in blocks_of[g]] for g in range(groups)])
        if whole:
            builder.ring(members, ids, offset, op, "ring")
        else:
            for step in range(m - 1):
                src, dst, chosen = [], [], []
                for g in range(groups):
                    for i in range(m):
                        for k in range(per_block):
                            src.append(int(members[g, i]))
                            dst.append(int(members[g, (i + 1) % m]))
                            chosen.append(int(ids[g, (i + offset - step) % m, k]))
                builder.send_batch(src, dst, chosen, op, "ring")
        built.append(builder.schedule("allreduce", "test", {}).transfers)
    assert list(built[0]) == list(built[1])


@pytest.mark.parametrize("shared", [False, True])
def test_a_ring_phase_refuses_a_cell_two_groups_or_two_blocks_touch(shared):
    builder = ScheduleBuilder([1] * 4, 4)
    a, b, c = builder.piece((0, 1)), builder.piece((1, 2)), builder.piece((3,))
    members, pieces = ([[0, 1], [1, 2]], [[[c], [a]], [[b], [c]]]) if shared else ([[0, 1]], [[[a], [b]]])
    with pytest.raises(ScheduleError, match="disjoint cells"):
        builder.ring(members, pieces, 0, "reduce", "ring")
    assert len(builder) == 0
