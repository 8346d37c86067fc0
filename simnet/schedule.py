"""Schedules of collectives as data, and the check that they compute their collective.

A :class:`Schedule` splits the payload into *chunks* and lists *transfers*: each
moves the current contents of some chunks from one rank's buffer to another's,
either overwriting (``"copy"``) or adding into (``"reduce"``) the destination,
after the transfers it depends on have finished. Dependencies always point to
earlier transfers, so the list is already in a valid execution order.

:func:`check` proves that the transfers compute the collective, whatever the
timing: it follows, for every rank and chunk, the *set of ranks whose
contribution* the buffer holds, refuses races (an unordered read and write, or
two unordered writes one of which is a copy, of the same buffer), double counting
and reads of empty buffers, and compares the final sets with what the collective
must produce. With ``numeric=True`` it moves real numpy payloads instead and
compares with :func:`numpy.sum`.

Two transfers ``a -> b`` and ``b -> a`` over the same chunks with no dependency
between them form a *pairwise exchange* (``MPI_Sendrecv`` into a temporary
buffer, then a local copy or reduction): both read their source before either
writes, so the read of one and the write of the other are not a race. Recursive
doubling needs it.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from operator import attrgetter
from typing import Literal, NamedTuple

import numpy as np

from simnet.errors import ScheduleError

__all__ = ["COLLECTIVES", "Transfer", "Columns", "TransferTable", "Schedule", "split_bytes", "check"]

COLLECTIVES = ("allreduce", "reduce_scatter", "all_gather", "broadcast", "reduce")


@dataclass(frozen=True, slots=True)
class Transfer:
    """One message of a schedule.

    Parameters
    ----------
    src, dst : int
        Sending and receiving rank.
    chunks : tuple of int
        Chunks whose contents the message carries.
    nbytes : int
        Size of the message on the wire, bytes (the chunks' bytes for dense data).
    op : {"copy", "reduce"}
        Whether the destination overwrites or adds into its copy of the chunks.
    deps : tuple of int
        Indices of earlier transfers that must finish before this one starts.
    stage : str, optional
        Label of the algorithm phase, e.g. ``"reduce_scatter"``, for analysis.
    nnz : int, optional
        Sparse payloads only: nonzeros the message carries (``None`` for dense data).
    dense : bool, optional
        Sparse payloads only: whether the message was sent in dense form.
    merged : int, optional
        Sparse payloads only: how many ranks' contributions the message sums, the
        ``m`` of the expected fill-in ``1 - (1 - d)^m``.
    """

    src: int
    dst: int
    chunks: tuple[int, ...]
    nbytes: int
    op: Literal["copy", "reduce"] = "copy"
    deps: tuple[int, ...] = ()
    stage: str = ""
    nnz: int | None = None
    dense: bool | None = None
    merged: int | None = None


class Columns(NamedTuple):
    """The transfers of a schedule as arrays, one entry per transfer (see :attr:`Schedule.columns`).

    Attributes
    ----------
    src, dst : numpy.ndarray of int64
        Sending and receiving rank.
    nbytes : numpy.ndarray of float64
        Size on the wire, bytes.
    reduce : numpy.ndarray of bool
        Whether the transfer is a ``"reduce"``.
    dep_offsets : numpy.ndarray of int64
        ``count + 1`` offsets into `deps`: the dependencies of transfer ``i`` are
        ``deps[dep_offsets[i]:dep_offsets[i + 1]]``.
    deps : numpy.ndarray of int64
        All dependencies, transfer after transfer, each transfer's in its own order.
    """

    src: np.ndarray
    dst: np.ndarray
    nbytes: np.ndarray
    reduce: np.ndarray
    dep_offsets: np.ndarray
    deps: np.ndarray


def _integers(value, name: str, count: int | None = None) -> np.ndarray:
    """A private int64 copy of a 1-D array of integers (of `count` entries if given)."""
    array = np.asarray(value)
    if array.ndim != 1 or (count is not None and len(array) != count) or (
        array.size and not np.issubdtype(array.dtype, np.integer)
    ):
        expected = "a 1-D array of integers" if count is None else f"{count} integers"
        raise ScheduleError(f"must be {expected}, got shape {array.shape}, dtype {array.dtype}", path=name)
    if array.size and array.dtype.kind == "u" and array.max() > np.iinfo(np.int64).max:
        raise ScheduleError(f"must fit in 64-bit signed integers, got {array.max()}", path=name)
    return array.astype(np.int64)


def _csr(offsets, values, count: int, name: str, offsets_name: str) -> tuple[np.ndarray, np.ndarray]:
    """Validate a CSR pair (``offsets`` of ``count + 1``; ``None``: one value per row)."""
    values = _integers(values, name, None if offsets is not None else count)
    if offsets is None:
        return np.arange(count + 1, dtype=np.int64), values
    offsets = _integers(offsets, offsets_name, count + 1)
    if offsets[0] != 0 or offsets[-1] != len(values) or (np.diff(offsets) < 0).any():
        raise ScheduleError(
            f"must be {count + 1} non-decreasing offsets from 0 to {len(values)}", path=offsets_name
        )
    return offsets, values


_TABLE_ARRAYS = ("src", "dst", "nbytes", "reduce", "stage", "chunk_offsets", "chunks", "dep_offsets", "deps")


class TransferTable(Sequence):
    """The transfers of a schedule stored as arrays, for schedules of millions of transfers.

    A drop-in for the tuple of :class:`Transfer` in :attr:`Schedule.transfers`:
    indexing and iteration build :class:`Transfer` objects on demand, while
    :attr:`Schedule.columns` and the engine read the arrays directly, so a
    schedule of 2 M transfers costs a few arrays instead of 2 M objects. Dense
    payloads only (``nnz``, ``dense`` and ``merged`` are ``None``).

    Parameters
    ----------
    src, dst : array_like of int
        Sending and receiving rank of each transfer.
    nbytes : array_like of int
        Size on the wire of each transfer, bytes.
    reduce : array_like of bool
        Whether each transfer is a ``"reduce"`` (else a ``"copy"``).
    chunks : array_like of int
        Chunks carried: one per transfer, or with `chunk_offsets` the chunks of
        transfer ``i`` are ``chunks[chunk_offsets[i]:chunk_offsets[i + 1]]``.
    deps : array_like of int
        Dependencies: with `dep_offsets` (``count + 1`` offsets, like
        `chunk_offsets`); without, exactly one per transfer.
    stage : array_like of int, optional
        Index into `stages` of each transfer's stage label (default all 0).
    stages : sequence of str, optional
        Stage labels (default ``("",)``).
    chunk_offsets, dep_offsets : array_like of int, optional
        CSR offsets of `chunks` and `deps`.

    Raises
    ------
    ScheduleError
        If the arrays disagree in length or type (``path`` names the argument).
        Ranks, chunks and dependencies are range-checked by :class:`Schedule`.

    Examples
    --------
    >>> table = TransferTable(src=[0, 1], dst=[1, 0], nbytes=[8, 8], reduce=[True, False],
    ...                       chunks=[0, 0], deps=[0], dep_offsets=[0, 0, 1])
    >>> table[1]
    Transfer(src=1, dst=0, chunks=(0,), nbytes=8, op='copy', deps=(0,), stage='', nnz=None, dense=None, merged=None)
    """

    def __init__(
        self,
        *,
        src,
        dst,
        nbytes,
        reduce,
        chunks,
        deps,
        stage=None,
        stages: Sequence[str] = ("",),
        chunk_offsets=None,
        dep_offsets=None,
    ) -> None:
        count = len(np.asarray(src))
        self.src = _integers(src, "src", count)
        self.dst = _integers(dst, "dst", count)
        self.nbytes = _integers(nbytes, "nbytes", count)
        reduce = np.asarray(reduce)
        if reduce.shape != (count,) or (count and reduce.dtype != bool):
            raise ScheduleError(f"must be {count} booleans, got shape {reduce.shape}, dtype {reduce.dtype}", path="reduce")
        self.reduce = reduce.astype(bool)
        self.stages = tuple(stages)
        if not self.stages or not all(isinstance(label, str) for label in self.stages):
            raise ScheduleError(f"must be a non-empty sequence of labels, got {stages!r}", path="stages")
        self.stage = np.zeros(count, dtype=np.int64) if stage is None else _integers(stage, "stage", count)
        if count and not ((self.stage >= 0) & (self.stage < len(self.stages))).all():
            raise ScheduleError(f"must index the {len(self.stages)} stages", path="stage")
        self.chunk_offsets, self.chunks = _csr(chunk_offsets, chunks, count, "chunks", "chunk_offsets")
        self.dep_offsets, self.deps = _csr(dep_offsets, deps, count, "deps", "dep_offsets")
        self._freeze()

    def _freeze(self) -> None:
        for name in _TABLE_ARRAYS:
            getattr(self, name).flags.writeable = False

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._freeze()

    def __len__(self) -> int:
        return len(self.src)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        i = operator.index(index)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(f"transfer index {index} out of range for {len(self)} transfers")
        co, do = self.chunk_offsets, self.dep_offsets
        return Transfer(
            int(self.src[i]),
            int(self.dst[i]),
            tuple(self.chunks[co[i] : co[i + 1]].tolist()),
            int(self.nbytes[i]),
            "reduce" if self.reduce[i] else "copy",
            tuple(self.deps[do[i] : do[i + 1]].tolist()),
            self.stages[self.stage[i]],
        )

    def __iter__(self) -> Iterator[Transfer]:
        chunks, deps = self.chunks.tolist(), self.deps.tolist()
        co, do = self.chunk_offsets.tolist(), self.dep_offsets.tolist()
        stages = self.stages
        rows = zip(self.src.tolist(), self.dst.tolist(), self.nbytes.tolist(), self.reduce.tolist(), self.stage.tolist())
        for i, (src, dst, nbytes, reduce, stage) in enumerate(rows):
            yield Transfer(
                src,
                dst,
                tuple(chunks[co[i] : co[i + 1]]),
                nbytes,
                "reduce" if reduce else "copy",
                tuple(deps[do[i] : do[i + 1]]),
                stages[stage],
            )

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TransferTable):
            return all(
                np.array_equal(getattr(self, name), getattr(other, name)) for name in _TABLE_ARRAYS if name != "stage"
            ) and np.array_equal(np.asarray(self.stages)[self.stage], np.asarray(other.stages)[other.stage])
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(other) == len(self) and all(a == b for a, b in zip(self, other))

    __hash__ = None

    def __repr__(self) -> str:
        return f"<TransferTable of {len(self)} transfers>"

    @property
    def columns(self) -> Columns:
        """The arrays as :class:`Columns` (``nbytes`` as float64)."""
        nbytes = self.nbytes.astype(float)
        nbytes.flags.writeable = False
        return Columns(self.src, self.dst, nbytes, self.reduce, self.dep_offsets, self.deps)


@dataclass(frozen=True)
class Schedule:
    """A collective as data: chunks, transfers and what the result must be.

    Parameters
    ----------
    collective : str
        One of :data:`COLLECTIVES`.
    nranks : int
        Number of ranks taking part.
    chunk_bytes : tuple of int
        Size of each chunk, bytes; they partition the payload of every rank.
    transfers : tuple of Transfer or TransferTable
        The messages, each depending only on earlier ones.
    algorithm : str
        Name of the algorithm that built the schedule.
    root : int, optional
        Root rank of ``broadcast`` and ``reduce``.
    owners : tuple of int, optional
        Rank owning each chunk: the rank that ends with the reduced chunk in
        ``reduce_scatter`` and that starts with it in ``all_gather``.
    params : dict
        Parameters the algorithm was built with.
    """

    collective: str
    nranks: int
    chunk_bytes: tuple[int, ...]
    transfers: tuple[Transfer, ...] | TransferTable
    algorithm: str = ""
    root: int | None = None
    owners: tuple[int, ...] | None = None
    params: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.collective not in COLLECTIVES:
            raise ScheduleError(f"collective must be one of {COLLECTIVES}, got {self.collective!r}")
        if self.nranks < 1:
            raise ScheduleError(f"nranks must be ≥ 1, got {self.nranks}")
        if self.collective in ("broadcast", "reduce") and not (
            self.root is not None and 0 <= self.root < self.nranks
        ):
            raise ScheduleError(f"{self.collective} needs a root rank in [0, {self.nranks}), got {self.root!r}")
        if self.collective in ("reduce_scatter", "all_gather") and (
            self.owners is None or len(self.owners) != len(self.chunk_bytes)
        ):
            raise ScheduleError(f"{self.collective} needs one owner rank per chunk")
        if self._valid_transfers():
            return
        nchunks = len(self.chunk_bytes)
        for index, t in enumerate(self.transfers):
            where = f"transfer {index} ({t.src} -> {t.dst})"
            if not (0 <= t.src < self.nranks and 0 <= t.dst < self.nranks) or t.src == t.dst:
                raise ScheduleError(f"{where}: needs two distinct ranks in [0, {self.nranks})")
            if not t.chunks or any(not 0 <= c < nchunks for c in t.chunks):
                raise ScheduleError(f"{where}: chunks must be in [0, {nchunks}), got {t.chunks}")
            if t.op not in ("copy", "reduce"):
                raise ScheduleError(f"{where}: op must be 'copy' or 'reduce', got {t.op!r}")
            if t.nbytes < 0:
                raise ScheduleError(f"{where}: nbytes must be ≥ 0, got {t.nbytes}")
            if any(not 0 <= d < index for d in t.deps):
                raise ScheduleError(f"{where}: dependencies must be earlier transfers, got {t.deps}")

    def _valid_transfers(self) -> bool:
        """Whether every transfer passes the checks of :meth:`__post_init__`, vectorized.

        ``False`` when one does not (or a field has an unexpected type); the loop
        of :meth:`__post_init__` then finds the first offender and names it.
        """
        transfers = self.transfers
        if not transfers:
            return True
        if isinstance(transfers, TransferTable):
            columns = self.columns
            lengths = np.diff(transfers.chunk_offsets)
            chunks = transfers.chunks
        else:
            try:
                if not all(type(t) is Transfer for t in transfers):
                    return False
                if not {t.op for t in transfers} <= {"copy", "reduce"}:
                    return False
                columns = self.columns
                chunk_lists = list(map(attrgetter("chunks"), transfers))
                lengths = np.fromiter(map(len, chunk_lists), dtype=np.int64, count=len(chunk_lists))
                chunks = np.fromiter(chain.from_iterable(chunk_lists), dtype=np.int64, count=int(lengths.sum()))
            except (TypeError, ValueError, OverflowError):
                self.__dict__.pop("columns", None)
                return False
        src, dst = columns.src, columns.dst
        index = np.repeat(np.arange(len(transfers)), np.diff(columns.dep_offsets))
        valid = (
            bool(((src >= 0) & (src < self.nranks) & (dst >= 0) & (dst < self.nranks) & (src != dst)).all())
            and bool((lengths > 0).all())
            and bool(((chunks >= 0) & (chunks < len(self.chunk_bytes))).all())
            and bool((columns.nbytes >= 0).all())
            and bool(((columns.deps >= 0) & (columns.deps < index)).all())
        )
        if not valid:
            self.__dict__.pop("columns", None)
        return valid

    @property
    def size_bytes(self) -> int:
        """Payload size per rank, bytes."""
        return sum(self.chunk_bytes)

    @property
    def total_bytes(self) -> int:
        """Bytes on the wire summed over all transfers."""
        if isinstance(self.transfers, TransferTable):
            return int(self.transfers.nbytes.sum())
        return sum(t.nbytes for t in self.transfers)

    def __len__(self) -> int:
        return len(self.transfers)

    @cached_property
    def columns(self) -> Columns:
        """The transfers as arrays (computed once, read-only), for vectorized consumers."""
        transfers = self.transfers
        if isinstance(transfers, TransferTable):
            return transfers.columns
        count = len(transfers)
        dep_lists = list(map(attrgetter("deps"), transfers))
        ndeps = np.fromiter(map(len, dep_lists), dtype=np.int64, count=count)
        offsets = np.zeros(count + 1, dtype=np.int64)
        np.cumsum(ndeps, out=offsets[1:])
        columns = Columns(
            src=np.fromiter(map(attrgetter("src"), transfers), dtype=np.int64, count=count),
            dst=np.fromiter(map(attrgetter("dst"), transfers), dtype=np.int64, count=count),
            nbytes=np.fromiter(map(attrgetter("nbytes"), transfers), dtype=float, count=count),
            reduce=np.fromiter(map("reduce".__eq__, map(attrgetter("op"), transfers)), dtype=bool, count=count),
            dep_offsets=offsets,
            deps=np.fromiter(chain.from_iterable(dep_lists), dtype=np.int64, count=int(offsets[-1])),
        )
        for array in columns:
            array.flags.writeable = False
        return columns


def split_bytes(size_bytes: int, parts: int) -> list[int]:
    """Split `size_bytes` into `parts` whole-byte pieces differing by at most one.

    The first ``size_bytes % parts`` pieces get the extra byte.

    >>> split_bytes(10, 4)
    [3, 3, 2, 2]
    """
    base, extra = divmod(size_bytes, parts)
    return [base + 1 if i < extra else base for i in range(parts)]


def _initial(schedule: Schedule, rank: int, chunk: int) -> int | None:
    """Contribution set (bitmask of ranks) that `rank` starts with for `chunk`."""
    if schedule.collective in ("allreduce", "reduce_scatter", "reduce"):
        return 1 << rank
    if schedule.collective == "all_gather":
        return 1 << rank if schedule.owners[chunk] == rank else None
    return 1 << rank if rank == schedule.root else None


def _expected(schedule: Schedule, rank: int, chunk: int) -> int | None:
    """Contribution set `rank` must end with for `chunk` (``None``: anything)."""
    everyone = (1 << schedule.nranks) - 1
    match schedule.collective:
        case "allreduce":
            return everyone
        case "reduce_scatter":
            return everyone if schedule.owners[chunk] == rank else None
        case "all_gather":
            return 1 << schedule.owners[chunk]
        case "broadcast":
            return 1 << schedule.root
        case _:
            return everyone if rank == schedule.root else None


def _ranks(mask: int | None) -> str:
    if mask is None:
        return "nothing"
    members = [i for i in range(mask.bit_length()) if mask >> i & 1]
    return "{" + ", ".join(map(str, members)) + "}"


def _depends_on(schedule: Schedule, later: int, earlier: int) -> bool:
    """Whether transfer `later` (transitively) depends on transfer `earlier`."""
    stack, seen = [later], {later}
    while stack:
        for d in schedule.transfers[stack.pop()].deps:
            if d == earlier:
                return True
            if d > earlier and d not in seen:
                seen.add(d)
                stack.append(d)
    return False


def _exchange_partners(schedule: Schedule) -> dict[int, int]:
    """Map each transfer of a pairwise exchange to its partner (both directions)."""
    waiting: dict[tuple[int, int, tuple[int, ...]], list[int]] = {}
    partners: dict[int, int] = {}
    for index, t in enumerate(schedule.transfers):
        earlier = waiting.get((t.dst, t.src, t.chunks), [])
        match = next((i for i in earlier if not _depends_on(schedule, index, i)), None)
        if match is None:
            waiting.setdefault((t.src, t.dst, t.chunks), []).append(index)
        else:
            earlier.remove(match)
            partners[index], partners[match] = match, index
    return partners


def _check_races(schedule: Schedule, partners: dict[int, int]) -> None:
    readers: dict[tuple[int, int], list[int]] = {}
    writers: dict[tuple[int, int], list[int]] = {}
    for index, t in enumerate(schedule.transfers):
        for c in t.chunks:
            readers.setdefault((t.src, c), []).append(index)
            writers.setdefault((t.dst, c), []).append(index)

    def ordered(a: int, b: int) -> bool:
        return a == b or _depends_on(schedule, max(a, b), min(a, b))

    for (rank, chunk), writes in writers.items():
        for w_i, w in enumerate(writes):
            for other in writes[w_i + 1 :]:
                both_reduce = schedule.transfers[w].op == schedule.transfers[other].op == "reduce"
                if not both_reduce and not ordered(w, other):
                    raise ScheduleError(
                        f"rank {rank}, chunk {chunk}: transfers {w} and {other} both write it "
                        "with no dependency between them"
                    )
            for r in readers.get((rank, chunk), []):
                if partners.get(r) != w and not ordered(r, w):
                    raise ScheduleError(
                        f"rank {rank}, chunk {chunk}: transfer {r} reads it while transfer {w} "
                        "writes it, with no dependency between them"
                    )


def _run_symbolic(schedule: Schedule, partners: dict[int, int]) -> list[list[int | None]]:
    state = [[_initial(schedule, r, c) for c in range(len(schedule.chunk_bytes))] for r in range(schedule.nranks)]
    before: dict[tuple[int, int], int | None] = {}
    for index, t in enumerate(schedule.transfers):
        partner = partners.get(index, index)
        for c in t.chunks:
            if partner > index:
                before[(index, c)] = state[t.dst][c]
            sent = before.pop((partner, c)) if partner < index else state[t.src][c]
            if sent is None:
                raise ScheduleError(
                    f"rank {t.src}, chunk {c}: transfer {index} sends it before the rank holds any data of it"
                )
            held = state[t.dst][c]
            if t.op == "copy":
                state[t.dst][c] = sent
            elif held is None:
                raise ScheduleError(
                    f"rank {t.dst}, chunk {c}: transfer {index} reduces into it before the rank holds any data of it"
                )
            elif held & sent:
                raise ScheduleError(
                    f"rank {t.dst}, chunk {c}: transfer {index} counts the contributions of ranks "
                    f"{_ranks(held & sent)} twice"
                )
            else:
                state[t.dst][c] = held | sent
    return state


def _run_numeric(schedule: Schedule, partners: dict[int, int], seed: int) -> None:
    rng = np.random.default_rng(seed)
    nchunks = len(schedule.chunk_bytes)
    payload = [
        [rng.integers(-1000, 1000, size=schedule.chunk_bytes[c], dtype=np.int64) for c in range(nchunks)]
        for _ in range(schedule.nranks)
    ]
    state = [
        [payload[r][c].copy() if _initial(schedule, r, c) is not None else None for c in range(nchunks)]
        for r in range(schedule.nranks)
    ]
    before: dict[tuple[int, int], np.ndarray | None] = {}
    for index, t in enumerate(schedule.transfers):
        partner = partners.get(index, index)
        for c in t.chunks:
            if partner > index:
                before[(index, c)] = state[t.dst][c]
            sent = before.pop((partner, c)) if partner < index else state[t.src][c]
            state[t.dst][c] = sent.copy() if t.op == "copy" else state[t.dst][c] + sent
    for rank in range(schedule.nranks):
        for c in range(nchunks):
            expected = _expected(schedule, rank, c)
            if expected is None:
                continue
            contributors = [i for i in range(schedule.nranks) if expected >> i & 1]
            want = np.sum([payload[i][c] for i in contributors], axis=0)
            if state[rank][c] is None or not np.array_equal(state[rank][c], want):
                raise ScheduleError(f"rank {rank}, chunk {c}: numeric result differs from np.sum")


def check(schedule: Schedule, *, numeric: bool = False, seed: int = 0) -> None:
    """Prove that `schedule` computes its collective; raise if it does not.

    Parameters
    ----------
    schedule : Schedule
        The schedule to check.
    numeric : bool, optional
        Also execute the schedule on random integer payloads (one ``int64`` per byte
        of each chunk) and compare every rank's result with :func:`numpy.sum` of the
        contributions it must hold. Use it for payloads up to a few MiB.
    seed : int, optional
        Seed of the numeric payloads.

    Raises
    ------
    ScheduleError
        Naming the first rank and chunk that is wrong, e.g.
        ``"rank 3, chunk 5: holds contributions of {0, 1, 2}, expected all 8 ranks"``.
    """
    if isinstance(schedule.transfers, TransferTable):
        schedule = dataclasses.replace(schedule, transfers=tuple(schedule.transfers))
    partners = _exchange_partners(schedule)
    _check_races(schedule, partners)
    state = _run_symbolic(schedule, partners)
    everyone = (1 << schedule.nranks) - 1
    for rank in range(schedule.nranks):
        for c in range(len(schedule.chunk_bytes)):
            expected = _expected(schedule, rank, c)
            if expected is None or state[rank][c] == expected:
                continue
            wanted = f"all {schedule.nranks} ranks" if expected == everyone else _ranks(expected)
            raise ScheduleError(
                f"rank {rank}, chunk {c}: holds contributions of {_ranks(state[rank][c])}, expected {wanted}"
            )
    if numeric:
        _run_numeric(schedule, partners, seed)
