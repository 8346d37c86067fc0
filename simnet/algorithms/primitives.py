"""Building blocks of collective schedules, and the primitive collectives.

A :class:`ScheduleBuilder` records transfers one after another and derives their
dependencies from the data they touch, per (rank, chunk) buffer: a transfer waits
for the last writes of the buffer it reads (read after write) and, before writing
a buffer, for the reads and writes of it that came earlier (write after read,
write after write); reductions into the same buffer stay unordered because they
commute. Every read already waits for the writes before it, so a write after
reads waits only for those reads. Algorithms therefore only say *what* moves in which order; sub-chunks
pipeline on their own because each depends only on its own history.

The phase functions (:func:`ring_reduce_scatter`, :func:`ring_all_gather`,
:func:`tree_reduce`, :func:`tree_broadcast`) add the transfers of one phase to a
builder, for several concurrent groups of ranks at once; the algorithms in
:mod:`simnet.algorithms.dense` compose them. The primitive collectives
(:func:`reduce_scatter`, :func:`all_gather`, :func:`broadcast`, :func:`reduce`;
``all_reduce`` is in :mod:`simnet.algorithms`) are the same phases wrapped into
schedules of their own.

A *block* is a list of *pieces*; a piece is a tuple of chunk indices sent as one
transfer. A block of ``C`` pieces is sent as ``C`` pipelined transfers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from simnet.errors import ScheduleError
from simnet.schedule import Schedule, Transfer, split_bytes
from simnet.speed import gc_paused

__all__ = [
    "ScheduleBuilder",
    "check_args",
    "ring_reduce_scatter",
    "ring_all_gather",
    "binomial_parents",
    "tree_reduce",
    "tree_broadcast",
    "reduce_scatter",
    "all_gather",
    "broadcast",
    "reduce",
]

Piece = tuple[int, ...]
Block = list[Piece]


class _Buffer:
    """Bookkeeping of a set of chunks of one rank with the same history: last writes and reads since.

    ``size`` counts the chunks of the rank that share this object; a transfer that
    touches only some of them first gives those a copy of their own.
    """

    __slots__ = ("base", "reduces", "readers", "size")

    def __init__(self, size: int) -> None:
        self.base: list[int] = []
        self.reduces: list[int] = []
        self.readers: list[int] = []
        self.size = size

    def split(self, size: int) -> _Buffer:
        """Detach `size` of the chunks into a copy with the same history."""
        part = _Buffer(size)
        part.base, part.reduces, part.readers = list(self.base), list(self.reduces), list(self.readers)
        self.size -= size
        return part

    def read_deps(self, deps: set[int]) -> None:
        deps.update(self.base)
        deps.update(self.reduces)

    def write_deps(self, deps: set[int], op: str) -> None:
        if self.readers:
            deps.update(self.readers)
        else:
            deps.update(self.base)
            if op != "reduce":
                deps.update(self.reduces)

    def write(self, index: int, op: str) -> None:
        if op == "reduce" and not self.readers:
            self.reduces.append(index)
        else:
            self.base, self.reduces, self.readers = [index], [], []


class ScheduleBuilder:
    """Accumulates transfers and derives their data dependencies.

    The state of every (rank, chunk) buffer is kept, but chunks of a rank whose
    history is the same share one record, which a transfer touching only some of
    them splits: a transfer costs a pass over its chunks in C plus work per
    distinct history, not per chunk (a BlueConnect level-1 message carries
    thousands of leaf chunks at p = 4096).

    Parameters
    ----------
    chunk_bytes : sequence of int
        Size of every chunk, bytes.
    """

    def __init__(self, chunk_bytes: Sequence[int]) -> None:
        self.chunk_bytes = tuple(chunk_bytes)
        self.transfers: list[Transfer] = []
        self._buffers: dict[int, list[_Buffer]] = {}
        self._pieces: dict[int, tuple[Piece, Piece, int]] = {}

    def _piece(self, piece: Piece) -> tuple[Piece, int]:
        """`piece` without repeated chunks, and its bytes; remembered per piece object.

        Algorithms send the same piece tuple from many ranks; the entry keeps the
        tuple alive, so its ``id`` cannot be reused while it is cached.
        """
        known = self._pieces.get(id(piece))
        if known is None or known[0] is not piece:
            distinct = piece if len(set(piece)) == len(piece) else tuple(dict.fromkeys(piece))
            known = (piece, distinct, sum(map(self.chunk_bytes.__getitem__, piece)))
            if type(piece) is tuple:
                self._pieces[id(piece)] = known
        return known[1], known[2]

    def _owned(self, rank: int, piece: Piece) -> list[_Buffer]:
        """The records of `piece`'s chunks at `rank`, split so that each holds only chunks of `piece`."""
        records = self._buffers.get(rank)
        if records is None:
            records = self._buffers[rank] = [_Buffer(len(self.chunk_bytes))] * len(self.chunk_bytes)
        piece = self._piece(piece)[0]
        touched = Counter(map(records.__getitem__, piece))
        owned = []
        for buffer, count in touched.items():
            if count < buffer.size:
                part = buffer.split(count)
                for c in piece:
                    if records[c] is buffer:
                        records[c] = part
                buffer = part
            owned.append(buffer)
        return owned

    def _append(self, src: int, dst: int, piece: Piece, op: str, stage: str, deps: set[int]) -> int:
        index = len(self.transfers)
        self.transfers.append(
            Transfer(
                src=src,
                dst=dst,
                chunks=tuple(piece),
                nbytes=self._piece(piece)[1],
                op=op,
                deps=tuple(sorted(deps)),
                stage=stage,
            )
        )
        return index

    def send(self, src: int, dst: int, piece: Piece, op: str, stage: str, *, after: Sequence[int] = ()) -> int:
        """Add a transfer of `piece` from `src` to `dst`; return its index.

        It depends on the transfers its buffers need, and on `after` (program
        order a data dependency does not capture, such as a blocking send).
        """
        deps: set[int] = set(after)
        read, written = self._owned(src, piece), self._owned(dst, piece)
        for buffer in read:
            buffer.read_deps(deps)
        for buffer in written:
            buffer.write_deps(deps, op)
        index = self._append(src, dst, piece, op, stage, deps)
        for buffer in read:
            buffer.readers.append(index)
        for buffer in written:
            buffer.write(index, op)
        return index

    def exchange(self, a: int, b: int, piece: Piece, op: str, stage: str) -> tuple[int, int]:
        """Add a pairwise exchange of `piece` between `a` and `b` (see :mod:`simnet.schedule`).

        Both transfers read their source before either writes, so neither waits
        for the other; whatever touches the two buffers next waits for both, as
        after ``MPI_Sendrecv``.
        """
        deps_ab: set[int] = set()
        deps_ba: set[int] = set()
        at_a, at_b = self._owned(a, piece), self._owned(b, piece)
        for buffer in at_a:
            buffer.read_deps(deps_ab)
            buffer.write_deps(deps_ba, "copy")
        for buffer in at_b:
            buffer.write_deps(deps_ab, "copy")
            buffer.read_deps(deps_ba)
        first = self._append(a, b, piece, op, stage, deps_ab)
        second = self._append(b, a, piece, op, stage, deps_ba)
        for buffer in (*at_a, *at_b):
            buffer.base, buffer.reduces, buffer.readers = [first, second], [], []
        return first, second

    def schedule(self, collective: str, nranks: int, algorithm: str, params: dict, **extra) -> Schedule:
        """Freeze the transfers into a :class:`~simnet.schedule.Schedule`."""
        return Schedule(
            collective=collective,
            nranks=nranks,
            chunk_bytes=self.chunk_bytes,
            transfers=tuple(self.transfers),
            algorithm=algorithm,
            params=dict(params),
            **extra,
        )


def check_args(nranks: int, size_bytes: int, chunks: int, *, minimum_ranks: int = 2) -> None:
    """Raise :class:`ScheduleError` unless ranks, size and chunks are usable."""
    if not isinstance(nranks, int) or isinstance(nranks, bool) or nranks < minimum_ranks:
        raise ScheduleError(f"must be an integer ≥ {minimum_ranks}, got {nranks!r}", path="ranks")
    if not isinstance(size_bytes, int) or isinstance(size_bytes, bool) or size_bytes < 1:
        raise ScheduleError(f"must be a whole number of bytes ≥ 1, got {size_bytes!r}", path="size")
    if not isinstance(chunks, int) or isinstance(chunks, bool) or chunks < 1:
        raise ScheduleError(f"must be an integer ≥ 1, got {chunks!r}", path="chunks")


Groups = Sequence[tuple[Sequence[int], Sequence[Block]]]


def _ring_steps(builder: ScheduleBuilder, groups: Groups, stage: str, offset: int, op: str) -> None:
    """``m - 1`` steps per group; in step ``s`` member ``i`` sends block ``(i + offset - s) mod m``."""
    steps = max((len(members) - 1 for members, _ in groups), default=0)
    for step in range(steps):
        for members, blocks in groups:
            m = len(members)
            if step >= m - 1:
                continue
            for i in range(m):
                for piece in blocks[(i + offset - step) % m]:
                    builder.send(members[i], members[(i + 1) % m], piece, op, stage)


def ring_reduce_scatter(builder: ScheduleBuilder, groups: Groups, stage: str) -> None:
    """Ring reduce-scatter within each group, all groups concurrently.

    Each group is ``(members, blocks)`` with as many blocks as members. In step
    ``s`` (``0 .. m-2``) member ``i`` sends block ``(i - s) mod m`` to member
    ``i + 1``, which adds it into its own; member ``i`` ends holding block
    ``(i + 1) mod m`` reduced over the group (Patarasuk & Yuan 2009).
    """
    _ring_steps(builder, groups, stage, 0, "reduce")


def ring_all_gather(builder: ScheduleBuilder, groups: Groups, stage: str) -> None:
    """Ring all-gather within each group, all groups concurrently.

    Member ``i`` starts holding block ``(i + 1) mod m`` (where
    :func:`ring_reduce_scatter` leaves it); in step ``s`` it forwards block
    ``(i + 1 - s) mod m`` to member ``i + 1``.
    """
    _ring_steps(builder, groups, stage, 1, "copy")


def binomial_parents(size: int) -> list[int | None]:
    """Parent of each position ``0 .. size-1`` in a binomial tree rooted at 0.

    Position ``i > 0`` hangs under ``i - lowbit(i)`` (MPICH's binomial reduce and
    broadcast); the tree has depth ``ceil(log2 size)``.
    """
    return [None] + [i - (i & -i) for i in range(1, size)]


def _heights(parents: Sequence[int | None]) -> list[int]:
    """Height of the subtree under each position (0 for a leaf)."""
    height = [0] * len(parents)
    for i in _by_depth(parents)[::-1]:
        parent = parents[i]
        if parent is not None:
            height[parent] = max(height[parent], height[i] + 1)
    return height


def _by_depth(parents: Sequence[int | None]) -> list[int]:
    depth: dict[int, int] = {}

    def depth_of(i: int) -> int:
        if i not in depth:
            depth[i] = 0 if parents[i] is None else depth_of(parents[i]) + 1
        return depth[i]

    return sorted(range(len(parents)), key=lambda i: (depth_of(i), i))


def _reduce_order(parents: Sequence[int | None]) -> list[int]:
    """Non-root positions, smallest subtrees first: children before their parent."""
    height = _heights(parents)
    return sorted((i for i, p in enumerate(parents) if p is not None), key=lambda i: (height[i], i))


def _broadcast_order(parents: Sequence[int | None]) -> list[int]:
    """Non-root positions, parents before children and, among siblings, largest subtree first."""
    height = _heights(parents)
    order = _by_depth(parents)
    place = {i: k for k, i in enumerate(order)}
    return sorted(
        (i for i in order if parents[i] is not None),
        key=lambda i: (place[parents[i]], -height[i], i),
    )


def tree_reduce(
    builder: ScheduleBuilder,
    trees: Sequence[tuple[Sequence[int], Sequence[int | None], Block]],
    stage: str,
) -> None:
    """Reduce every piece of each tree's block to the tree's root.

    Each tree is ``(members, parents, block)``: ``parents[i]`` is the position of
    member ``i``'s parent (``None`` for the root). A member forwards a piece to its
    parent once its children's contributions have arrived; trees and pieces
    proceed concurrently.
    """
    for piece_index in range(max((len(block) for _, _, block in trees), default=0)):
        for members, parents, block in trees:
            if piece_index >= len(block):
                continue
            for i in _reduce_order(parents):
                builder.send(members[i], members[parents[i]], block[piece_index], "reduce", stage)


def tree_broadcast(
    builder: ScheduleBuilder,
    trees: Sequence[tuple[Sequence[int], Sequence[int | None], Block]],
    stage: str,
) -> None:
    """Copy every piece of each tree's block from its root down the tree (see :func:`tree_reduce`).

    A member sends a piece to its children one after the other, largest subtree
    first, as MPICH's binomial broadcast does with blocking sends: its link then
    carries one copy at a time instead of sharing it between all the children.
    """
    for piece_index in range(max((len(block) for _, _, block in trees), default=0)):
        for members, parents, block in trees:
            if piece_index >= len(block):
                continue
            previous: dict[int, int] = {}
            for i in _broadcast_order(parents):
                sender = parents[i]
                after = (previous[sender],) if sender in previous else ()
                previous[sender] = builder.send(members[sender], members[i], block[piece_index], "copy", stage,
                                                after=after)


def _ring_primitive(collective: str, nranks: int, size_bytes: int, chunks: int) -> Schedule:
    check_args(nranks, size_bytes, chunks)
    chunk_bytes = [piece for segment in split_bytes(size_bytes, nranks) for piece in split_bytes(segment, chunks)]
    blocks = [[(g * chunks + j,) for j in range(chunks)] for g in range(nranks)]
    builder = ScheduleBuilder(chunk_bytes)
    phase = ring_reduce_scatter if collective == "reduce_scatter" else ring_all_gather
    phase(builder, [(range(nranks), blocks)], collective)
    owners = tuple((g - 1) % nranks for g in range(nranks) for _ in range(chunks))
    return builder.schedule(collective, nranks, "ring", {"chunks": chunks}, owners=owners)


@gc_paused()
def reduce_scatter(nranks: int, size_bytes: int, *, chunks: int = 1) -> Schedule:
    """Ring reduce-scatter: rank ``r`` ends with segment ``(r + 1) mod p`` summed over all ranks.

    ``(p - 1) p C`` transfers of ``n / (p C)`` bytes; time
    ``(p - 1)(α + n/p β)`` for ``C = 1`` (Patarasuk & Yuan 2009).

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Payload per rank ``n``, bytes, split into ``p`` segments.
    chunks : int, optional
        Pipelined sub-chunks per segment ``C``.
    """
    return _ring_primitive("reduce_scatter", nranks, size_bytes, chunks)


@gc_paused()
def all_gather(nranks: int, size_bytes: int, *, chunks: int = 1) -> Schedule:
    """Ring all-gather: rank ``r`` starts with segment ``(r + 1) mod p``; all end with every segment.

    ``(p - 1) p C`` transfers; time ``(p - 1)(α + n/p β)`` for ``C = 1``.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Size of the gathered result ``n``, bytes (``p`` segments).
    chunks : int, optional
        Pipelined sub-chunks per segment ``C``.
    """
    return _ring_primitive("all_gather", nranks, size_bytes, chunks)


def _rooted_primitive(collective: str, nranks: int, size_bytes: int, root: int, chunks: int) -> Schedule:
    check_args(nranks, size_bytes, chunks)
    if not isinstance(root, int) or isinstance(root, bool) or not 0 <= root < nranks:
        raise ScheduleError(f"must be a rank in [0, {nranks}), got {root!r}", path="root")
    members = [(root + i) % nranks for i in range(nranks)]
    trees = [(members, binomial_parents(nranks), [(j,) for j in range(chunks)])]
    builder = ScheduleBuilder(split_bytes(size_bytes, chunks))
    (tree_broadcast if collective == "broadcast" else tree_reduce)(builder, trees, collective)
    return builder.schedule(collective, nranks, "binomial_tree", {"root": root, "chunks": chunks}, root=root)


@gc_paused()
def broadcast(nranks: int, size_bytes: int, *, root: int = 0, chunks: int = 1) -> Schedule:
    """Binomial-tree broadcast from `root`, pipelined in `chunks` pieces.

    Time ``ceil(log2 p)(α + n β)`` for ``C = 1`` (Thakur et al. 2005).

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Payload ``n``, bytes.
    root : int, optional
        Rank that holds the data.
    chunks : int, optional
        Pipelined pieces ``C``.
    """
    return _rooted_primitive("broadcast", nranks, size_bytes, root, chunks)


@gc_paused()
def reduce(nranks: int, size_bytes: int, *, root: int = 0, chunks: int = 1) -> Schedule:
    """Binomial-tree reduce to `root`, pipelined in `chunks` pieces.

    Time ``ceil(log2 p)(α + n β + n γ)`` for ``C = 1`` (Thakur et al. 2005).

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Payload per rank ``n``, bytes.
    root : int, optional
        Rank that ends with the sum.
    chunks : int, optional
        Pipelined pieces ``C``.
    """
    return _rooted_primitive("reduce", nranks, size_bytes, root, chunks)
