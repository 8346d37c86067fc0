"""ScheduleBuilder: append transfers to column buffers and derive their dependencies from the data they touch.

A transfer reads the cells ``(source rank, source buffer, chunk)`` of its piece and
writes the cells ``(destination rank, destination buffer, chunk)``. Its
dependencies follow from what happened to those cells before, per cell:

* a read waits for the last writes of the cell (read after write);
* a write waits for the reads of the cell since its last write (write after read)
  or, when there were none, for the last writes (write after write), except that
  additions into a cell with no read in between stay unordered because they
  commute (``"reduce"``; a ``"reduce_topk"`` keeps the largest entries and does not
  commute). An addition after a read waits for the read and becomes the cell's last
  write, so the additions after it wait for it too: a little more order than the
  data needs, which keeps every cell's record to a few transfers;
* the ``"input"`` buffer is never written, so reading it waits for nothing.

Every read already waits for the writes before it, so a write after reads waits
only for those reads. Algorithms therefore only say *what* moves in which order;
sub-chunks pipeline on their own because each depends only on its own history.

Each cell keeps its *base* (the last write that is not an addition, or both
transfers of a pairwise exchange), the additions since, and the reads since, as
transfer indices in arrays over (rank, chunk) per buffer; a set of more than one
transfer is stored once, as a link to the set it extends and the transfer it adds,
and referred to by a negative code. Transfers can be added
one at a time (:meth:`ScheduleBuilder.send`, :meth:`ScheduleBuilder.exchange`) or a
whole step at once with arrays (:meth:`ScheduleBuilder.send_batch`: transfers that
touch disjoint cells, such as one step of many concurrent rings), which derives
exactly the dependencies that sending them one by one would.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

import numpy as np

from simnet.errors import ScheduleError
from simnet.schedule import COPY, INPUT, OPS, REDUCE, Schedule, TransferTable, buffer_code
from simnet.speed import sorted_unique, unique_inverse

__all__ = ["ScheduleBuilder"]

Piece = tuple[int, ...]

_EMPTY = -1
_SCALAR_CHUNKS = 32
"""Pieces of at most this many chunks sent one transfer at a time take the scalar path."""


class _Cells:
    """Per (rank, chunk) of one buffer: base write(s), additions since, reads since (codes, see module)."""

    __slots__ = ("base", "base2", "red", "read", "stamp")

    def __init__(self, cells: int) -> None:
        self.base = np.full(cells, _EMPTY, dtype=np.int32)
        self.base2: np.ndarray | None = None
        self.red = np.full(cells, _EMPTY, dtype=np.int32)
        self.read = np.full(cells, _EMPTY, dtype=np.int32)
        self.stamp: np.ndarray | None = None

    def distinct(self, cells: np.ndarray) -> bool:
        """Whether no cell occurs twice in `cells` (one write and read-back of positions, no sort)."""
        if self.stamp is None:
            self.stamp = np.zeros(len(self.base), dtype=np.int32)
        positions = np.arange(len(cells), dtype=np.int32)
        self.stamp[cells] = positions
        return bool((self.stamp[cells] == positions).all())

    def second(self) -> np.ndarray:
        """The array of second base writes (pairwise exchanges), allocated on first use."""
        if self.base2 is None:
            self.base2 = np.full(len(self.base), _EMPTY, dtype=np.int32)
        return self.base2


_FIELDS = (("src", np.int32), ("dst", np.int32), ("op", np.uint8), ("src_buffer", np.uint8),
           ("dst_buffer", np.uint8), ("piece", np.int32), ("stage", np.int32))


class _Columns:
    """The transfers added so far: whole batches as numpy segments, single transfers as Python rows."""

    def __init__(self) -> None:
        self.segments: list[tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]] = []
        self.rows: list[tuple] = []
        self.row_deps: list[int] = []
        self.row_counts: list[int] = []
        self.count = 0

    def append(self, row: tuple, deps: list[int]) -> int:
        self.rows.append(row)
        self.row_deps.extend(deps)
        self.row_counts.append(len(deps))
        self.count += 1
        return self.count - 1

    def flush(self) -> None:
        if self.rows:
            columns = list(zip(*self.rows))
            arrays = {name: np.array(values, dtype=dtype) for (name, dtype), values in zip(_FIELDS, columns)}
            self.segments.append((arrays, np.array(self.row_deps, dtype=np.int32),
                                  np.array(self.row_counts, dtype=np.int64)))
            self.rows, self.row_deps, self.row_counts = [], [], []

    def extend(self, arrays: dict[str, np.ndarray], deps: np.ndarray, counts: np.ndarray) -> None:
        self.flush()
        self.segments.append(({name: np.asarray(arrays[name], dtype=dtype) for name, dtype in _FIELDS},
                              deps.astype(np.int32), counts))
        self.count += len(counts)

    def arrays(self) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
        """All columns, the dependencies and their offsets, as read-only arrays of their own.

        The segments are joined one column at a time and replaced by the joined
        arrays, which a :class:`~simnet.schedule.TransferTable` shares rather than copies;
        a lone segment is joined already when its dependencies are read-only (those of
        :meth:`flush` and :meth:`extend` never are).
        """
        self.flush()
        if not self.segments:
            empty = {name: np.zeros(0, dtype=dtype) for name, dtype in _FIELDS}
            return empty, np.zeros(0, dtype=np.int32), np.zeros(1, dtype=np.int64)
        segments = self.segments
        if len(segments) > 1 or segments[0][1].flags.writeable:
            columns = {name: _frozen(np.concatenate([segment[0].pop(name) for segment in segments]))
                       for name, _ in _FIELDS}
            self.segments = [(columns, _frozen(np.concatenate([segment[1] for segment in segments])),
                              np.concatenate([segment[2] for segment in segments]))]
            del segments
        columns, deps, counts = self.segments[0]
        offsets = np.zeros(self.count + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return dict(columns), deps, _frozen(offsets)


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


class ScheduleBuilder:
    """Accumulates transfers in column buffers and derives their data dependencies.

    Parameters
    ----------
    chunk_bytes : sequence of int
        Size of every chunk, bytes.
    nranks : int
        Number of ranks.
    switches : sequence of sequence of int, optional
        Rank groups of the schedule's switch endpoints (see
        :attr:`simnet.schedule.Schedule.switches`); endpoint ``nranks + j`` may then be
        the source or destination of transfers, in its work buffer.

    Examples
    --------
    >>> builder = ScheduleBuilder([4, 4], 2)
    >>> builder.send(0, 1, (0,), "reduce", "rs"), builder.send(1, 0, (0,), "copy", "ag")
    (0, 1)
    >>> builder.schedule("allreduce", "example", {}).transfers[1].deps
    (0,)
    """

    def __init__(self, chunk_bytes: Sequence[int], nranks: int, *, switches: Sequence[Sequence[int]] = ()) -> None:
        self.chunk_bytes = tuple(int(b) for b in chunk_bytes)
        self.nranks = nranks
        self.switches = tuple(tuple(group) for group in switches)
        self.endpoints = nranks + len(self.switches)
        self._nchunks = len(self.chunk_bytes)
        self._cells: dict[int, _Cells] = {}
        self._set_parent = array("i")
        self._set_transfer = array("i")
        self._columns = _Columns()
        self._stages: dict[str, int] = {}
        self._piece_ids: dict[int, tuple[Piece, int]] = {}
        self._piece_index: dict[Piece, int] = {}
        self._piece_chunks = array("i")
        self._piece_offsets = array("q", [0])
        self._piece_bytes = array("q")
        self._piece_list: list[Piece] = []
        self._piece_arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def __len__(self) -> int:
        return self._columns.count

    # pieces

    def piece(self, piece: Piece) -> int:
        """The id of `piece` (a tuple of chunk indices; repeated chunks count once)."""
        known = self._piece_ids.get(id(piece))
        if known is not None and known[0] is piece:
            return known[1]
        distinct = tuple(dict.fromkeys(piece))
        pid = self._piece_index.get(distinct)
        if pid is None:
            if not distinct or not all(isinstance(c, int) and 0 <= c < self._nchunks for c in distinct):
                raise ScheduleError(f"must be a non-empty tuple of chunks in [0, {self._nchunks}), got {piece!r}",
                                    path="piece")
            pid = self._piece_index[distinct] = len(self._piece_bytes)
            self._piece_list.append(distinct)
            self._piece_chunks.extend(distinct)
            self._piece_offsets.append(len(self._piece_chunks))
            self._piece_bytes.append(sum(self.chunk_bytes[c] for c in distinct))
            self._piece_arrays = None
        if type(piece) is tuple:
            self._piece_ids[id(piece)] = (piece, pid)
        return pid

    def piece_bytes(self, pid: int) -> int:
        """Bytes of piece `pid`."""
        return self._piece_bytes[pid]

    def _pieces(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._piece_arrays is None:
            self._piece_arrays = (
                np.frombuffer(self._piece_offsets, dtype=np.int64).copy(),
                np.frombuffer(self._piece_chunks, dtype=np.int32).copy(),
                np.frombuffer(self._piece_bytes, dtype=np.int64).copy(),
            )
        return self._piece_arrays

    # state

    def _buffer(self, buffer: int) -> _Cells:
        cells = self._cells.get(buffer)
        if cells is None:
            cells = self._cells[buffer] = _Cells(self.endpoints * self._nchunks)
        return cells

    def _members(self, code: int) -> tuple[int, ...]:
        members = []
        while code < _EMPTY:
            members.append(self._set_transfer[-2 - code])
            code = self._set_parent[-2 - code]
        if code != _EMPTY:
            members.append(code)
        return tuple(members)

    def _add(self, code: int, transfer: int) -> int:
        """The code of the set `code` with `transfer` added (a new set links to the one it extends)."""
        if code == _EMPTY:
            return transfer
        self._set_parent.append(code)
        self._set_transfer.append(transfer)
        return -1 - len(self._set_parent)

    def _stage_code(self, stage: str) -> int:
        code = self._stages.get(stage)
        if code is None:
            code = self._stages[stage] = len(self._stages)
        return code

    def _check_ranks(self, *ranks: int) -> None:
        for rank in ranks:
            if not isinstance(rank, int) or not 0 <= rank < self.endpoints:
                raise ScheduleError(f"must be a rank in [0, {self.endpoints}), got {rank!r}", path="rank")

    @staticmethod
    def _code(names: tuple[str, ...], value: str, path: str) -> int:
        if value not in names:
            raise ScheduleError(f"must be one of {names}, got {value!r}", path=path)
        return names.index(value)

    @staticmethod
    def _buffer_code(name: str, path: str) -> int:
        try:
            return buffer_code(name)
        except ScheduleError as error:
            raise ScheduleError(error.message, path=path) from None

    def _append(self, src: int, dst: int, op: int, sb: int, db: int, pid: int, stage: int, deps: list[int]) -> int:
        return self._columns.append((src, dst, op, sb, db, pid, stage), deps)

    def _read_deps(self, cells: _Cells, cell: int, deps: set[int]) -> None:
        base = int(cells.base[cell])
        if base != _EMPTY:
            deps.add(base)
            if cells.base2 is not None and cells.base2[cell] != _EMPTY:
                deps.add(int(cells.base2[cell]))
        deps.update(self._members(int(cells.red[cell])))

    def _write_deps(self, cells: _Cells, cell: int, op: int, deps: set[int]) -> None:
        read = int(cells.read[cell])
        if read != _EMPTY:
            deps.update(self._members(read))
            return
        base = int(cells.base[cell])
        if base != _EMPTY:
            deps.add(base)
            if cells.base2 is not None and cells.base2[cell] != _EMPTY:
                deps.add(int(cells.base2[cell]))
        if op != REDUCE:
            deps.update(self._members(int(cells.red[cell])))

    def _wrote(self, cells: _Cells, cell: int, op: int, transfer: int) -> None:
        if op == REDUCE and cells.read[cell] == _EMPTY:
            cells.red[cell] = self._add(int(cells.red[cell]), transfer)
            return
        cells.base[cell] = transfer
        if cells.base2 is not None:
            cells.base2[cell] = _EMPTY
        cells.red[cell] = _EMPTY
        cells.read[cell] = _EMPTY

    # adding transfers

    def send(
        self,
        src: int,
        dst: int,
        piece: Piece,
        op: str,
        stage: str,
        *,
        after: Sequence[int] = (),
        src_buffer: str = "work",
        dst_buffer: str = "work",
    ) -> int:
        """Add a transfer of `piece` from `src` to `dst`; return its index.

        It depends on the transfers its cells need, and on `after` (program order a
        data dependency does not capture, such as a blocking send).
        """
        self._check_ranks(src, dst)
        code = self._code(OPS, op, "op")
        sb, db = self._buffer_code(src_buffer, "src_buffer"), self._buffer_code(dst_buffer, "dst_buffer")
        if db == INPUT:
            raise ScheduleError("the input buffer is read-only", path="dst_buffer")
        if src == dst and sb == db:
            raise ScheduleError(f"moves rank {src}'s {src_buffer} buffer onto itself", path="dst")
        pid = self.piece(piece)
        for d in after:
            if not isinstance(d, int) or not 0 <= d < len(self):
                raise ScheduleError(f"must be earlier transfers, got {tuple(after)!r}", path="after")
        chunk_list = self._piece_list[pid]
        if len(chunk_list) > _SCALAR_CHUNKS:
            return self._batch(np.array([src]), np.array([dst]), np.array([pid]), code, sb, db,
                               self._stage_code(stage), after=tuple(after))
        deps: set[int] = set(after)
        index = len(self)
        nchunks = self._nchunks
        source = self._buffer(sb) if sb != INPUT else None
        target = self._buffer(db)
        if source is not None:
            for c in chunk_list:
                self._read_deps(source, src * nchunks + c, deps)
        for c in chunk_list:
            self._write_deps(target, dst * nchunks + c, code, deps)
        self._append(src, dst, code, sb, db, pid, self._stage_code(stage), sorted(deps))
        if source is not None:
            for c in chunk_list:
                cell = src * nchunks + c
                source.read[cell] = self._add(int(source.read[cell]), index)
        for c in chunk_list:
            self._wrote(target, dst * nchunks + c, code, index)
        return index

    def exchange(self, a: int, b: int, piece: Piece, op: str, stage: str) -> tuple[int, int]:
        """Add a pairwise exchange of `piece` between `a` and `b` in the work buffer (see :mod:`simnet.schedule`).

        Both transfers read their source before either writes, so neither waits
        for the other; whatever touches the two cells next waits for both, as after
        ``MPI_Sendrecv``.
        """
        self._check_ranks(a, b)
        code = self._code(OPS, op, "op")
        if a == b:
            raise ScheduleError(f"exchanges rank {a} with itself", path="b")
        pid = self.piece(piece)
        chunk_list = self._piece_list[pid]
        cells = self._buffer(0)
        nchunks = self._nchunks
        deps_ab: set[int] = set()
        deps_ba: set[int] = set()
        for c in chunk_list:
            self._read_deps(cells, a * nchunks + c, deps_ab)
            self._write_deps(cells, b * nchunks + c, COPY, deps_ab)
            self._write_deps(cells, a * nchunks + c, COPY, deps_ba)
            self._read_deps(cells, b * nchunks + c, deps_ba)
        stage_code = self._stage_code(stage)
        first = self._append(a, b, code, 0, 0, pid, stage_code, sorted(deps_ab))
        second = self._append(b, a, code, 0, 0, pid, stage_code, sorted(deps_ba))
        second_base = cells.second()
        for c in chunk_list:
            for cell in (a * nchunks + c, b * nchunks + c):
                cells.base[cell] = first
                second_base[cell] = second
                cells.red[cell] = _EMPTY
                cells.read[cell] = _EMPTY
        return first, second

    def send_batch(
        self,
        src,
        dst,
        pieces,
        op: str,
        stage: str,
        *,
        src_buffer: str = "work",
        dst_buffer: str = "work",
    ) -> int:
        """Add many transfers that touch disjoint cells (one step of concurrent rings, say); return the first index.

        Transfer ``i`` moves piece ``pieces[i]`` (ids from :meth:`piece`) from
        ``src[i]`` to ``dst[i]``; they get exactly the dependencies that sending
        them one by one in this order would give.

        Raises
        ------
        ScheduleError
            If two of the transfers touch the same cell.
        """
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        pieces = np.asarray(pieces, dtype=np.int64)
        if not (src.shape == dst.shape == pieces.shape) or src.ndim != 1:
            raise ScheduleError("src, dst and pieces must be 1-D arrays of one length", path="send_batch")
        if len(src) and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= self.endpoints):
            raise ScheduleError(f"ranks must be in [0, {self.endpoints})", path="send_batch")
        if len(pieces) and (pieces.min() < 0 or pieces.max() >= len(self._piece_bytes)):
            raise ScheduleError("pieces must be ids returned by piece()", path="send_batch")
        code = self._code(OPS, op, "op")
        sb, db = self._buffer_code(src_buffer, "src_buffer"), self._buffer_code(dst_buffer, "dst_buffer")
        if db == INPUT:
            raise ScheduleError("the input buffer is read-only", path="dst_buffer")
        if ((src == dst) & (sb == db)).any():
            raise ScheduleError("a transfer moves a buffer onto itself", path="send_batch")
        return self._batch(src, dst, pieces, code, sb, db, self._stage_code(stage))

    def ring(self, members, pieces, offset: int, op: str, stage: str) -> int:
        """Add a whole ring phase of concurrent groups at once; return the index of its first transfer.

        Group ``g`` has members ``members[g]`` (``m`` ranks) and blocks ``pieces[g, b]``
        (``C`` piece ids each). In step ``s = 0 .. m-2``, member ``i`` sends every piece of
        block ``(i + offset - s) mod m`` to member ``i + 1``; transfers are numbered step
        by step, then by group, member and piece (the order of sending them one step
        batch at a time). A ring reduce-scatter is ``offset = 0`` with ``"reduce"``, a
        ring all-gather ``offset = 1`` with ``"copy"``.

        Within a phase every cell is written at most once and read at most once, the
        read one step after the write: so each transfer's dependencies are the state
        of its cells before the phase and, from the second step on, the transfer that
        brought its piece the step before. They are computed for all steps at once, on
        one row per transfer of the chunks it carries (shorter pieces padded with their
        last chunk, which changes no union), and are exactly those that sending the
        steps one by one would give; a phase whose pieces differ so much in length that
        padding would double the work is added one step batch at a time.

        Raises
        ------
        ScheduleError
            If the groups' cells are not disjoint or the arrays do not fit.
        """
        members = np.asarray(members, dtype=np.int64)
        pieces = np.asarray(pieces, dtype=np.int64)
        code = self._code(OPS, op, "op")
        if members.ndim != 2 or pieces.ndim != 3 or pieces.shape[:2] != members.shape:
            raise ScheduleError("members must be (groups, m) and pieces (groups, m, C)", path="ring")
        groups, m = members.shape
        per_block = pieces.shape[2]
        start = len(self)
        if m < 2 or groups == 0 or per_block == 0:
            return start
        if members.min() < 0 or members.max() >= self.endpoints or (
                pieces.min() < 0 or pieces.max() >= len(self._piece_bytes)):
            raise ScheduleError("members must be ranks and pieces ids returned by piece()", path="ring")
        cells = self._buffer(0)
        if not self._ring_disjoint(cells, members, pieces):
            raise ScheduleError("the groups of a ring phase must touch disjoint cells", path="ring")
        offsets, _, _ = self._pieces()
        lengths = offsets[pieces + 1] - offsets[pieces]
        width = int(lengths.max())
        steps = m - 1
        if width * lengths.size > 2 * int(lengths.sum()):
            for s in range(steps):
                block = (np.arange(m)[None, :, None] + offset - s) % m
                chosen = pieces[np.arange(groups)[:, None, None], block, np.arange(per_block)[None, None, :]]
                self._batch(np.repeat(members, per_block, axis=1).ravel(),
                            np.repeat(np.roll(members, -1, axis=1), per_block, axis=1).ravel(),
                            chosen.ravel(), code, 0, 0, self._stage_code(stage))
            return start
        shape = (steps, groups, m, per_block)
        step = np.arange(steps)[:, None, None, None]
        group = np.arange(groups)[None, :, None, None]
        position = np.arange(m)[None, None, :, None]
        sub = np.arange(per_block)[None, None, None, :]
        block = (position + offset - step) % m
        piece = np.broadcast_to(pieces[group, block, sub], shape).ravel()
        src = np.broadcast_to(members[group, position], shape).ravel()
        dst = np.broadcast_to(members[group, (position + 1) % m], shape).ravel()
        count = len(piece)
        first = groups * m * per_block
        writer = np.broadcast_to(start + (((step - 1) * groups + group) * m + (position - 1) % m) * per_block + sub,
                                 shape).ravel()[first:]
        chunks = self._padded(piece, width)
        read_cells = src[:, None] * self._nchunks + chunks
        write_cells = dst[:, None] * self._nchunks + chunks
        readers = cells.read[write_cells]
        has_readers = readers != _EMPTY
        if code == REDUCE:
            brought = np.concatenate((np.arange(first), writer - start))
            kept = ~has_readers[brought]
            kept[:first] = True
            rows = 0
        else:
            kept, rows = None, first
        columns = [(0, self._masked(cells.base, read_cells[:rows or None], kept))]
        if cells.base2 is not None:
            columns.append((0, self._masked(cells.base2, read_cells[:rows or None], kept)))
        columns.append((0, self._masked(cells.red, read_cells[:rows or None], kept)))
        columns.append((first, writer.astype(np.int32)))
        columns.append((0, np.where(has_readers, readers, cells.base[write_cells])))
        if cells.base2 is not None:
            columns.append((0, np.where(has_readers, _EMPTY, cells.base2[write_cells])))
        if code != REDUCE:
            columns.append((0, np.where(has_readers, _EMPTY, cells.red[write_cells])))
        dep_offsets, deps = self._union_rows(count, columns)
        stage_code = self._stage_code(stage)
        self._columns.extend(
            {"src": src, "dst": dst, "op": np.full(count, code), "src_buffer": np.zeros(count),
             "dst_buffer": np.zeros(count), "piece": piece, "stage": np.full(count, stage_code)},
            deps, np.diff(dep_offsets))
        transfer = np.broadcast_to(np.arange(start, start + count, dtype=np.int32)[:, None], chunks.shape)
        self._written(cells, write_cells, transfer, code, has_readers)
        cells.read[read_cells] = self._added(cells.read[read_cells], transfer)
        return start

    def _ring_disjoint(self, cells: _Cells, members: np.ndarray, pieces: np.ndarray) -> bool:
        """Whether no (member, chunk) cell belongs to two groups of a ring phase, or twice to one.

        When no rank is in two groups this is whether each group's blocks share no
        chunk, checked once per distinct set of blocks.
        """
        groups, m, per_block = pieces.shape
        if np.bincount(members.ravel()).max() == 1:
            patterns = np.unique(pieces.reshape(groups, -1), axis=0)
            rows = np.repeat(np.arange(len(patterns)), m * per_block)
            _, _, cells_of, _ = self._elements(rows, rows, patterns.ravel())
            return cells.distinct(cells_of)
        owned = self._elements(np.repeat(members, m * per_block, axis=1).ravel(), np.zeros(members.size * m
                               * per_block, dtype=np.int64), np.repeat(pieces.reshape(groups, 1, -1), m, axis=1).ravel())
        return cells.distinct(owned[2])

    def _padded(self, pieces: np.ndarray, width: int) -> np.ndarray:
        """Chunks of each piece as a row of `width`, shorter pieces padded with their last chunk."""
        offsets, chunk_table, _ = self._pieces()
        used, local = unique_inverse(pieces)
        length = offsets[used + 1] - offsets[used]
        table = chunk_table[offsets[used][:, None] + np.minimum(np.arange(width), length[:, None] - 1)]
        return table.astype(np.int64)[local]

    @staticmethod
    def _masked(state: np.ndarray, cells: np.ndarray, kept: np.ndarray | None) -> np.ndarray:
        """``state[cells]`` where `kept` (everywhere if ``None``), empty elsewhere."""
        return state[cells] if kept is None else np.where(kept, state[cells], _EMPTY)

    def _elements(self, src: np.ndarray, dst: np.ndarray, pieces: np.ndarray):
        """Per chunk carried: its transfer (position in the batch), chunk, source cell and destination cell."""
        offsets, members, _ = self._pieces()
        lengths = offsets[pieces + 1] - offsets[pieces]
        total = int(lengths.sum())
        seg = np.repeat(np.arange(len(pieces)), lengths)
        first = np.concatenate(([0], np.cumsum(lengths)[:-1])) if len(lengths) else lengths
        chunk = members[np.repeat(offsets[pieces] - first, lengths) + np.arange(total)].astype(np.int64)
        return seg, lengths, src[seg] * self._nchunks + chunk, dst[seg] * self._nchunks + chunk

    def _batch(self, src, dst, pieces, code: int, sb: int, db: int, stage: int, after: tuple[int, ...] = ()) -> int:
        start = len(self)
        count = len(src)
        if count == 0:
            return start
        seg, lengths, read_cells, write_cells = self._elements(src, dst, pieces)
        target = self._buffer(db)
        source = self._buffer(sb) if sb != INPUT else None
        if source is target:
            distinct = target.distinct(np.concatenate([read_cells, write_cells]))
        else:
            distinct = target.distinct(write_cells) and (source is None or source.distinct(read_cells))
        if not distinct:
            raise ScheduleError("two transfers of a batch touch the same buffer cell", path="send_batch")
        columns = []
        if source is not None:
            columns.append(source.base[read_cells])
            if source.base2 is not None:
                columns.append(source.base2[read_cells])
            columns.append(source.red[read_cells])
        readers = target.read[write_cells]
        has_readers = readers != _EMPTY
        columns.append(np.where(has_readers, readers, target.base[write_cells]))
        if target.base2 is not None:
            columns.append(np.where(has_readers, _EMPTY, target.base2[write_cells]))
        if code != REDUCE:
            columns.append(np.where(has_readers, _EMPTY, target.red[write_cells]))
        dep_offsets, deps = self._union(seg, count, columns, start, after)
        self._columns.extend(
            {"src": src, "dst": dst, "op": np.full(count, code), "src_buffer": np.full(count, sb),
             "dst_buffer": np.full(count, db), "piece": pieces, "stage": np.full(count, stage)},
            deps, np.diff(dep_offsets))
        transfer = (start + seg).astype(np.int32)
        if source is not None:
            source.read[read_cells] = self._added(source.read[read_cells], transfer)
        self._written(target, write_cells, transfer, code, has_readers)
        return start

    def _written(self, cells: _Cells, write_cells: np.ndarray, transfer: np.ndarray, code: int,
                 has_readers: np.ndarray) -> None:
        """Record writes (vectorized :meth:`_wrote`): an addition into an unread cell joins its additions."""
        if code == REDUCE:
            adds = ~has_readers
            cells.red[write_cells[adds]] = self._added(cells.red[write_cells[adds]], transfer[adds])
            write_cells, transfer = write_cells[has_readers], transfer[has_readers]
        cells.base[write_cells] = transfer
        if cells.base2 is not None:
            cells.base2[write_cells] = _EMPTY
        cells.red[write_cells] = _EMPTY
        cells.read[write_cells] = _EMPTY

    def _added(self, codes: np.ndarray, transfers: np.ndarray) -> np.ndarray:
        """Codes of the sets `codes` with the matching `transfers` added (vectorized :meth:`_add`, any shape)."""
        shape = codes.shape
        codes = codes.ravel()
        transfers = np.broadcast_to(transfers, shape).ravel()
        result = np.where(codes == _EMPTY, transfers, codes).astype(np.int32)
        busy = np.flatnonzero(codes != _EMPTY)
        if len(busy):
            keys = (codes[busy].astype(np.int64) << 32) | (transfers[busy].astype(np.int64) & 0xFFFFFFFF)
            head = np.ones(len(keys), dtype=bool)
            head[1:] = keys[1:] != keys[:-1]
            pairs, inverse = unique_inverse(keys[head])
            made = (-2 - len(self._set_parent) - np.arange(len(pairs))).astype(np.int32)
            self._set_parent.frombytes((pairs >> 32).astype(np.int32).tobytes())
            self._set_transfer.frombytes((pairs & 0xFFFFFFFF).astype(np.int32).tobytes())
            result[busy] = made[inverse.ravel()][np.cumsum(head) - 1]
        return result.reshape(shape)

    def _union(self, seg, count: int, columns: list[np.ndarray], start: int, after: tuple[int, ...]):
        """Per transfer, the sorted union of the sets coded in `columns` (and `after`), as CSR."""
        firsts = np.ones(len(seg), dtype=bool)
        firsts[1:] = seg[1:] != seg[:-1]
        keys = []
        for codes in columns:
            keep = codes != _EMPTY
            keep[1:] &= firsts[1:] | (codes[1:] != codes[:-1])
            keys.append((seg[keep].astype(np.int64) << 32) | (codes[keep].astype(np.int64) & 0xFFFFFFFF))
        return self._csr(keys, count, after)

    def _union_rows(self, count: int, columns: list[tuple[int, np.ndarray]]):
        """:meth:`_union` of columns given per row: ``(first row, codes)``, codes of shape (rows,) or (rows, width).

        The columns are laid side by side in one table of a row per transfer and each row
        is sorted on its own, unless a column holds a set code (which only :meth:`_csr`
        expands).
        """
        blocks = [(first, codes.reshape(-1, 1) if codes.ndim == 1 else codes) for first, codes in columns]
        table = np.full((count, sum(codes.shape[1] for _, codes in blocks)), _EMPTY, dtype=np.int32)
        at = 0
        for first, codes in blocks:
            table[first:first + len(codes), at:at + codes.shape[1]] = codes
            at += codes.shape[1]
        if (table < _EMPTY).any():
            keys = []
            for first, codes in blocks:
                keep = codes != _EMPTY
                keep[:, 1:] &= codes[:, 1:] != codes[:, :-1]
                row, column = np.nonzero(keep)
                keys.append(((row + first).astype(np.int64) << 32)
                            | (codes[row, column].astype(np.int64) & 0xFFFFFFFF))
            return self._csr(keys, count, ())
        table.sort(axis=1)
        keep = table != _EMPTY
        keep[:, 1:] &= table[:, 1:] != table[:, :-1]
        offsets = np.zeros(count + 1, dtype=np.int64)
        np.cumsum(np.count_nonzero(keep, axis=1), out=offsets[1:])
        return offsets, table[keep].astype(np.int64)

    def _csr(self, keys: list[np.ndarray], count: int, after: tuple[int, ...]):
        """Sorted, distinct ``(transfer << 32) | code`` keys (set codes expanded, `after` added) as CSR."""
        keys = sorted_unique(np.concatenate(keys)) if keys else np.zeros(0, dtype=np.int64)
        owner = keys >> 32
        code = (keys & 0xFFFFFFFF).astype(np.uint32).astype(np.int32)
        multi = code < _EMPTY
        if multi.any() or after:
            owners, codes = [owner[~multi]], [code[~multi].astype(np.int64)]
            parents = np.frombuffer(self._set_parent, dtype=np.int32)
            transfers = np.frombuffer(self._set_transfer, dtype=np.int32)
            at, link = owner[multi], -2 - code[multi].astype(np.int64)
            while len(link):
                owners.append(at)
                codes.append(transfers[link].astype(np.int64))
                parent = parents[link]
                plain = parent >= 0
                owners.append(at[plain])
                codes.append(parent[plain].astype(np.int64))
                at, link = at[~plain], -2 - parent[~plain].astype(np.int64)
            del parents, transfers
            owners.append(np.zeros(len(after), dtype=np.int64))
            codes.append(np.asarray(after, dtype=np.int64))
            keys = np.unique((np.concatenate(owners) << 32) | np.concatenate(codes))
            owner, code = keys >> 32, keys & 0xFFFFFFFF
        counts = np.bincount(owner, minlength=count)
        offsets = np.zeros(count + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return offsets, code.astype(np.int64)

    # result

    def schedule(self, collective: str, algorithm: str, params: dict, **extra) -> Schedule:
        """Freeze the transfers into a :class:`~simnet.schedule.Schedule` (``extra``: root, owners, topk)."""
        offsets, members, piece_bytes = self._pieces()
        columns, deps, dep_offsets = self._columns.arrays()
        table = TransferTable(
            src=columns["src"],
            dst=columns["dst"],
            nbytes=piece_bytes[columns["piece"]],
            op=columns["op"],
            piece=columns["piece"],
            pieces=(offsets, members),
            deps=deps,
            dep_offsets=dep_offsets,
            stage=columns["stage"],
            stages=tuple(self._stages) or ("",),
            src_buffer=columns["src_buffer"],
            dst_buffer=columns["dst_buffer"],
        )
        return Schedule(
            collective=collective,
            nranks=self.nranks,
            chunk_bytes=self.chunk_bytes,
            transfers=table,
            algorithm=algorithm,
            params=dict(params),
            switches=self.switches,
            **extra,
        )
