"""Sparse (top-k) all-reduce algorithms whose message sizes come from real index sets.

Every builder takes ``(nranks, size_bytes, *, payload, ...)`` like
:func:`simnet.algorithms.dense.ring_allreduce`, where ``payload`` is a
:class:`simnet.payloads.SparsePayload` and ``size_bytes`` must equal its dense size
``dimension * value_bytes`` (so that sparse and dense runs of one gradient compare
on the same ``size``). A builder lays out the transfers with the same
:class:`~simnet.algorithms.builder.ScheduleBuilder` as every other algorithm, then
runs them with :func:`simnet.schedule.execute` on the ranks' actual sparse vectors
(:class:`SparseSemantics`): each message's nonzeros are the sorted union of the
index sets it sums, so fill-in is measured, not assumed, and the message is
encoded sparse or dense, whichever is smaller
(:meth:`~simnet.payloads.SparsePayload.encoded_bytes`). Transfers record ``nbytes``
(the encoded size), ``nnz``, ``dense`` and ``merged`` (how many ranks' vectors it
sums).

Chunks are index ranges: ``Schedule.chunk_bytes[c]`` is the dense size of range
``c`` (its entries times ``value_bytes``), so ``schedule.size_bytes`` is the dense
size of the gradient. A rank that sends its own vector to many peers while adding
theirs reads it from its ``"input"`` buffer; gTop-k's merges are ``"reduce_topk"``
transfers. Ranks are numbered node-major (rank ``= node * gpus_per_node + local``),
as simnet's builders number GPUs.

References
----------
Renggli, C., Ashkboos, S., Aghagolzadeh, M., Alistarh, D. and Hoefler, T. (2019).
SparCML: high-performance sparse communication for machine learning. SC'19.
Shi, S., Wang, Q., Zhao, K., Tang, Z., Wang, Y., Huang, X. and Chu, X. (2019). A
distributed synchronous SGD algorithm with global top-k sparsification for low
bandwidth networks. ICDCS 2019.
Nguyen, T. T., Wahib, M. and Takano, R. (2019). Topology-aware sparse allreduce for
large-scale deep learning. IPCCC 2019.
"""

from __future__ import annotations

import functools
import math
import os
import weakref
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from simnet.algorithms.builder import ScheduleBuilder
from simnet.algorithms.dense import power_of_two_members
from simnet.algorithms.hierarchy import node_defaults
from simnet.algorithms.primitives import ring_all_gather, ring_reduce_scatter
from simnet.algorithms.registry import Algorithm, PairCosts
from simnet.errors import ScheduleError
from simnet.payloads import SparsePayload, SparseVector, index_dtype
from simnet.schedule import Schedule, split_bytes
from simnet.schedule import execute as execute_schedule
from simnet.speed import sorted_unique

__all__ = [
    "SparseSemantics",
    "SparseExecution",
    "execute",
    "fill_in",
    "expected_density",
    "sparse_message_bytes",
    "topk_allgather",
    "ssar_recursive_doubling",
    "ssar_split_allgather",
    "dsar_split_allgather",
    "gtopk",
    "sparse_ring",
    "sparse_ring_ring",
    "ALGORITHMS",
]


@dataclass(eq=False)
class _Part:
    """Contents of one chunk: the ranks it sums (a bitmask) and its nonzeros.

    The nonzeros are sorted ``indices`` (with their ``values`` when values are
    carried), or, for an index-only union dense enough that a bitmap is the
    smaller of the two, ``bits``: bit ``i`` of the little-endian ``uint64`` words
    stands for index ``base + i``.
    """

    key: int
    indices: np.ndarray | None
    values: np.ndarray | None
    bits: np.ndarray | None = None
    base: int = 0
    nnz: int = field(init=False)

    def __post_init__(self) -> None:
        self.nnz = self.indices.size if self.bits is None else int(np.bitwise_count(self.bits).sum())

    def sorted_indices(self, dtype: np.dtype) -> np.ndarray:
        """The nonzeros' indices, sorted, as `dtype`."""
        if self.bits is None:
            return self.indices
        offsets = np.flatnonzero(np.unpackbits(self.bits.view(np.uint8), bitorder="little").view(bool))
        return (offsets + self.base).astype(dtype)


_EMPTY = np.empty(0, dtype=np.uint32)

_WORD = np.dtype("<u8")
"""Bitmap words: little-endian, so that their bytes, read in order with bit 0 first, are the entries in order."""

_BITMAP_SPAN = 1 << 22
"""Largest chunk (entries) whose unions may be bitmaps: at most 512 KiB of words, and 4 MiB for the byte
mask that fills them (unions of larger chunks are sorted, as fast for parts of similar size)."""

_BITMAP_ENTRIES_PER_INDEX = 32
"""A bitmap of a chunk's range is smaller than its sorted ``uint32`` indices from
one nonzero per this many entries on."""


def _set_bits(words: np.ndarray, offsets: np.ndarray) -> None:
    """Set the bits `offsets` (``int64``, within ``64 * words.size``, repeats allowed) of `words`.

    Bit by bit for few offsets; from one per 64 entries on, through a byte per
    entry packed into bits, whose cost is the span's rather than the offsets'.
    """
    span = 64 * words.size
    if 64 * offsets.size < span:
        np.bitwise_or.at(words, offsets >> 6, np.left_shift(np.uint64(1), (offsets & 63).astype(np.uint64)))
        return
    mask = np.zeros(span, dtype=bool)
    mask[offsets] = True
    words |= np.packbits(mask, bitorder="little").view(_WORD)


def _union(parts: list[_Part], key: int, base: int, span: int) -> _Part:
    """The union of `parts` of the chunk of indices ``base .. base + span - 1``.

    Index-only parts of a chunk of at most :data:`_BITMAP_SPAN` entries are merged
    into a bitmap when the bitmap is likely the smaller result (their nonzeros,
    counted with repeats, are at least ``span / 32``, or one of them is a bitmap):
    an OR of words instead of a sort, and the same index set.
    """
    if parts[0].values is None:
        if all(p.bits is None for p in parts) and (
                span > _BITMAP_SPAN or _BITMAP_ENTRIES_PER_INDEX * sum(p.nnz for p in parts) < span):
            return _Part(key, sorted_unique(np.concatenate([p.indices for p in parts]), kind="stable"), None)
        maps = [p.bits for p in parts if p.bits is not None]
        words = maps[0].copy() if maps else np.zeros(-(-span // 64), dtype=_WORD)
        for more in maps[1:]:
            np.bitwise_or(words, more, out=words)
        listed = [p.indices for p in parts if p.bits is None]
        if listed:
            offsets = np.concatenate(listed).astype(np.int64)
            offsets -= base
            _set_bits(words, offsets)
        return _Part(key, None, None, bits=words, base=base)
    indices = np.concatenate([p.indices for p in parts])
    order = np.argsort(indices, kind="stable")
    indices = indices[order]
    values = np.concatenate([p.values for p in parts])[order]
    starts = np.flatnonzero(np.concatenate(([True], indices[1:] != indices[:-1]))) if indices.size else order[:0]
    return _Part(key, indices[starts], np.add.reduceat(values, starts) if indices.size else values)


def _top_k(part: _Part, k: int) -> _Part:
    """The `k` entries of largest magnitude; among equal magnitudes the lower indices win."""
    size = part.indices.size
    if size <= k:
        return part
    magnitude = np.abs(part.values)
    threshold = np.partition(magnitude, size - k)[size - k]
    keep = magnitude > threshold
    ties = np.flatnonzero(magnitude == threshold)
    keep[ties[: k - int(keep.sum())]] = True
    return _Part(part.key, part.indices[keep], part.values[keep])


def _keys(parts: tuple[_Part, ...]) -> int:
    key = 0
    for p in parts:
        key |= p.key
    return key


_THREADED_ENTRIES = 1 << 20
"""Total nonzeros from which the ranks' vectors are generated on threads."""


def _vectors(payload: SparsePayload, nranks: int, values: bool) -> list[SparseVector]:
    """Every rank's vector, in rank order; on one thread per core when they are large.

    Each rank's vector comes from its own generator (:meth:`SparsePayload.vector`), so
    the order they are made in changes nothing, and NumPy's sorts and generators
    release the GIL, so threads run them side by side.
    """
    workers = min(nranks, os.cpu_count() or 1)
    if workers < 2 or payload.k * nranks < _THREADED_ENTRIES:
        return [payload.vector(rank, values=values) for rank in range(nranks)]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda rank: payload.vector(rank, values=values), range(nranks)))


class SparseSemantics:
    """Values are the ranks' sparse vectors, chunk by chunk (a :class:`simnet.schedule.Semantics`).

    A buffer holds a tuple of parts whose union it is; additions only append, and a
    value is merged (sorted union of indices, values summed) when it is sent, once
    per (chunk, set of ranks) thanks to a cache. Without values, a union of parts
    holding at least one nonzero per 32 entries of a chunk of at most 4 Mi entries
    (or uniting a bitmap) is held as a bitmap of the chunk (smaller than its
    ``uint32`` indices, and merged by OR instead of a sort). ``"reduce_topk"`` keeps
    the ``k`` entries of largest magnitude, lower indices first among ties.

    Parameters
    ----------
    payload : SparsePayload
        The ranks' vectors and their encoding.
    nranks : int
        Ranks.
    bounds : numpy.ndarray
        Chunk boundaries: chunk ``c`` covers indices ``bounds[c] .. bounds[c+1]-1``.
    values : bool
        Carry values (needed for top-k selection and for :meth:`SparseExecution.result` values).
    """

    def __init__(self, payload: SparsePayload, nranks: int, bounds: np.ndarray, *, values: bool) -> None:
        self._cache: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._bounds = bounds.tolist()
        self._dtype = index_dtype(payload.dimension)
        self._parts: list[list[_Part]] = []
        for rank, vector in enumerate(_vectors(payload, nranks, values)):
            cuts = np.searchsorted(vector.indices, bounds)
            self._parts.append([
                _Part(1 << rank, vector.indices[cuts[c] : cuts[c + 1]],
                      None if vector.values is None else vector.values[cuts[c] : cuts[c + 1]])
                for c in range(len(bounds) - 1)
            ])

    def initial(self, rank: int, chunk: int) -> tuple[_Part, ...]:
        return (self._parts[rank][chunk],)

    def merge(self, parts: tuple[_Part, ...], chunk: int) -> _Part:
        """The union of `parts` (cached per chunk and set of ranks for index-only vectors)."""
        if len(parts) == 1:
            return parts[0]
        key = _keys(parts)
        cacheable = parts[0].values is None
        if cacheable:
            found = self._cache.get((chunk, key))
            if found is not None:
                return found
        base = self._bounds[chunk]
        merged = self._unite(list(parts), key, base, self._bounds[chunk + 1] - base)
        if cacheable:
            self._cache[(chunk, key)] = merged
        return merged

    def _unite(self, parts: list[_Part], key: int, base: int, span: int) -> _Part:
        return _union(parts, key, base, span)

    def read(self, value: tuple[_Part, ...], chunk: int) -> tuple[_Part, ...]:
        return (self.merge(value, chunk),)

    def reduce(self, held, sent, chunk: int, where: tuple[int, int, int]):
        overlap = _keys(held) & _keys(sent)
        if overlap:
            transfer, rank, c = where
            twice = [r for r in range(overlap.bit_length()) if overlap >> r & 1]
            raise ScheduleError(f"rank {rank}, chunk {c}: transfer {transfer} counts the contributions of ranks "
                                f"{twice} twice")
        return held + sent

    def select(self, value, k: int, chunk: int):
        return (_top_k(self.merge(value, chunk), k),)

    def drop(self, value):
        return (_Part(_keys(value), _EMPTY, None),)


class _Pending:
    """An index-only union being computed on a worker thread: its key at once, its part when done."""

    __slots__ = ("key", "_future", "__weakref__")
    values = None

    def __init__(self, key: int, future: Future) -> None:
        self.key, self._future = key, future

    def part(self) -> _Part:
        """The union, once computed; :class:`_Unavailable` if it failed (its own error is raised once)."""
        if self._future.exception() is not None:
            raise _Unavailable
        return self._future.result()


class _Unavailable(Exception):
    """A union could not be computed because one it unites failed."""


def _union_when_ready(parts: list, key: int, base: int, span: int) -> _Part:
    return _union([p.part() if isinstance(p, _Pending) else p for p in parts], key, base, span)


class _Threaded(SparseSemantics):
    """Index-only semantics whose unions run on `pool`'s threads while the executor goes on.

    A merge only needs the keys of its parts at once (to check double counting and
    to cache), so the executor gets a :class:`_Pending` and moves on; NumPy's sorts
    and element-wise operations release the GIL. A union waits only for unions
    merged before it, and the pool starts tasks in the order they come, so every
    union it waits for has started: none waits forever. The executor runs at most
    two unions per worker ahead of the pool (it waits for the oldest), so the parts
    held for unions not yet computed, and the unions' own memory, stay bounded.
    """

    def __init__(self, payload: SparsePayload, nranks: int, bounds: np.ndarray, pool: ThreadPoolExecutor,
                 workers: int) -> None:
        super().__init__(payload, nranks, bounds, values=False)
        self._pool = pool
        self._flight: deque[Future] = deque()
        self._ahead = 2 * workers

    def _unite(self, parts: list, key: int, base: int, span: int) -> _Pending:
        flight = self._flight
        while len(flight) >= self._ahead:
            flight.popleft().exception()
        future = self._pool.submit(_union_when_ready, parts, key, base, span)
        flight.append(future)
        return _Pending(key, future)


@dataclass(frozen=True)
class SparseExecution:
    """Outcome of executing a sparse schedule on real vectors.

    Attributes
    ----------
    nnz, merged : tuple of int
        Per transfer: nonzeros carried and ranks whose vectors it sums.
    final : list of list of tuple
        Per rank and chunk, the parts the work buffer ends with.
    """

    nnz: tuple[int, ...]
    merged: tuple[int, ...]
    final: list
    _semantics: SparseSemantics = field(repr=False)

    def result(self, rank: int) -> SparseVector:
        """The vector rank `rank` ends with, all chunks concatenated."""
        parts = [self._semantics.merge(state, c) for c, state in enumerate(self.final[rank])]
        indices = np.concatenate([p.sorted_indices(self._semantics._dtype) for p in parts])
        values = None if parts[0].values is None else np.concatenate([p.values for p in parts])
        return SparseVector(indices, values)

    def contributors(self, rank: int) -> list[int]:
        """Bitmask of the ranks whose vectors rank `rank` holds, per chunk."""
        return [_keys(state) for state in self.final[rank]]


def _bounds(schedule: Schedule, payload: SparsePayload) -> np.ndarray:
    entries = [b // payload.value_bytes for b in schedule.chunk_bytes]
    return np.concatenate(([0], np.cumsum(entries))).astype(np.int64)


def _run(schedule: Schedule, payload: SparsePayload, *, values: bool, keep_final: bool) -> SparseExecution:
    values = values or schedule.topk is not None
    workers = os.cpu_count() or 1
    if values or keep_final or workers < 2 or payload.k * schedule.nranks < _THREADED_ENTRIES:
        return _execute(schedule, SparseSemantics(payload, schedule.nranks, _bounds(schedule, payload),
                                                  values=values), keep_final)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return _execute(schedule, _Threaded(payload, schedule.nranks, _bounds(schedule, payload), pool, workers),
                        keep_final)


def _execute(schedule: Schedule, semantics: SparseSemantics, keep_final: bool) -> SparseExecution:
    """Run `schedule` on `semantics`, counting what each transfer carries (unions still being computed are
    counted when they are done; their errors are raised here)."""
    count = len(schedule)
    nnz, merged = [0] * count, [0] * count
    counted: list[tuple[int, int]] = []
    failed: list[BaseException] = []

    def done(transfer: int, future: Future) -> None:
        error = future.exception()
        if error is None:
            counted.append((transfer, future.result().nnz))
        else:
            failed.append(error)

    def sent(transfer: int, chunk: int, value: tuple[_Part, ...]) -> None:
        part = value[0]
        if isinstance(part, _Pending):
            part._future.add_done_callback(functools.partial(done, transfer))
        else:
            nnz[transfer] += part.nnz
        merged[transfer] = max(merged[transfer], part.key.bit_count())

    state = execute_schedule(schedule, semantics, keep_final=keep_final, on_send=sent)
    if isinstance(semantics, _Threaded):
        semantics._pool.shutdown(wait=True)
    if failed:
        raise next((error for error in failed if not isinstance(error, _Unavailable)), failed[0])
    for transfer, found in counted:
        nnz[transfer] += found
    return SparseExecution(tuple(nnz), tuple(merged), state[0], semantics)


def execute(schedule: Schedule, payload: SparsePayload, *, values: bool = True) -> SparseExecution:
    """Execute a sparse schedule on `payload`'s vectors.

    Parameters
    ----------
    schedule : Schedule
        A schedule built by one of this module's builders (its chunks are index
        ranges of ``chunk_bytes / value_bytes`` entries).
    payload : SparsePayload
        The ranks' vectors.
    values : bool, optional
        Carry values too (needed for :meth:`SparseExecution.result` values;
        ``gtopk``'s selection always carries them).

    Raises
    ------
    ScheduleError
        If a message would count a rank's contribution twice.
    """
    return _run(schedule, payload, values=values, keep_final=True)


def _check(nranks: int, size_bytes: int, payload: SparsePayload) -> None:
    if not isinstance(nranks, int) or isinstance(nranks, bool) or nranks < 2:
        raise ScheduleError(f"must be an integer ≥ 2, got {nranks!r}", path="nranks")
    if not isinstance(payload, SparsePayload):
        raise ScheduleError(f"must be a SparsePayload, got {type(payload).__name__}", path="payload")
    if size_bytes != payload.size_bytes:
        raise ScheduleError(
            f"must be the payload's dense size dimension * value_bytes = {payload.size_bytes} B, got {size_bytes!r}",
            path="size_bytes",
        )


def _chunk_bytes(payload: SparsePayload, parts: int) -> list[int]:
    return [entries * payload.value_bytes for entries in split_bytes(payload.dimension, parts)]


def _finish(builder: ScheduleBuilder, name: str, payload: SparsePayload, dense: Sequence[bool | None], *,
            params: dict | None = None, topk: int | None = None) -> Schedule:
    """The schedule with each transfer's encoded size, nnz, form and merged count from executing it."""
    schedule = builder.schedule("allreduce", name, {"payload": payload.describe(), **(params or {})}, topk=topk)
    run = _run(schedule, payload, values=topk is not None, keep_final=False)
    table = schedule.transfers
    entries = np.diff(_bounds(schedule, payload))
    piece_entries = np.add.reduceat(entries[table.piece_chunks], table.piece_offsets[:-1]) if len(table) else entries
    carried = piece_entries[table.piece] if len(table) else np.zeros(0, dtype=np.int64)
    encoded = [payload.encoded_bytes(z, int(n), dense=d) for z, n, d in zip(run.nnz, carried.tolist(), dense)]
    return schedule.replace(transfers=table.replace(
        nbytes=np.array([b for b, _ in encoded], dtype=np.int64),
        nnz=np.array(run.nnz, dtype=np.int64),
        dense=np.array([d for _, d in encoded], dtype=bool),
        merged=np.array(run.merged, dtype=np.int64),
    ))


def _pairwise(nranks: int, send) -> None:
    """``p - 1`` rounds; in round ``s`` rank ``r`` sends to ``r + s`` once its round ``s - 1``
    send and receive have finished (pairwise exchange, Thakur et al. 2005).

    ``send(rank, peer, after)`` adds one message and returns its index.
    """
    sent: dict[int, int] = {}
    received: dict[int, int] = {}
    for shift in range(1, nranks):
        now_sent, now_received = {}, {}
        for rank in range(nranks):
            peer = (rank + shift) % nranks
            after = tuple(i for i in (sent.get(rank), received.get(rank)) if i is not None)
            now_sent[rank] = now_received[peer] = send(rank, peer, after)
        sent, received = now_sent, now_received


def topk_allgather(nranks: int, size_bytes: int, *, payload: SparsePayload) -> Schedule:
    """All-gather of every rank's top-k (index, value) pairs, summed locally.

    Every rank sends its own k-sparse vector (its input buffer) directly to each
    other rank (in ``p - 1`` rounds, round ``s`` sending ``r -> r + s``), so every
    message holds exactly one rank's nonzeros; the fill-in happens only in the
    local sum. One chunk: the whole index space.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Dense size ``N * value_bytes``, bytes (must equal ``payload.size_bytes``).
    payload : SparsePayload
        The ranks' sparse vectors and their encoding.

    Returns
    -------
    Schedule
        ``p (p - 1)`` transfers, stage ``"all_gather"``.
    """
    _check(nranks, size_bytes, payload)
    builder = ScheduleBuilder(_chunk_bytes(payload, 1), nranks)
    _pairwise(nranks, lambda rank, peer, after: builder.send(rank, peer, (0,), "reduce", "all_gather", after=after,
                                                            src_buffer="input"))
    return _finish(builder, "topk_allgather", payload, [None] * len(builder))


def ssar_recursive_doubling(nranks: int, size_bytes: int, *, payload: SparsePayload) -> Schedule:
    """SparCML's SSAR_Recursive_double: ``log2 p`` pairwise exchanges of whole vectors.

    In step ``i`` rank ``r`` and ``r XOR 2^i`` swap their current sums and add them
    (a pairwise exchange), so messages of step ``i`` carry the union of ``2^i``
    vectors and switch to the dense form once that is smaller. When ``p`` is not a
    power of two, MPICH's folding: the even ranks below ``2 (p - 2^⌊log2 p⌋)`` first
    add their vector into their odd neighbour, and get the result back at the end.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Dense size ``N * value_bytes``, bytes.
    payload : SparsePayload
        The ranks' sparse vectors.

    Returns
    -------
    Schedule
        ``p log2 p`` transfers for ``p = 2^k``, stages ``"exchange_<distance>"``
        (and ``"fold"``/``"unfold"``).

    References
    ----------
    Renggli et al. (2019), SparCML, Sec. 4 (SSAR_Recursive_double); Thakur et al.
    (2005) for the folding.
    """
    _check(nranks, size_bytes, payload)
    rem, members = power_of_two_members(nranks)
    builder = ScheduleBuilder(_chunk_bytes(payload, 1), nranks)
    for r in range(rem):
        builder.send(2 * r, 2 * r + 1, (0,), "reduce", "fold")
    distance = 1
    while distance < len(members):
        for i in range(len(members)):
            if i < i ^ distance:
                builder.exchange(members[i], members[i ^ distance], (0,), "reduce", f"exchange_{distance}")
        distance *= 2
    for r in range(rem):
        builder.send(2 * r + 1, 2 * r, (0,), "copy", "unfold")
    return _finish(builder, "ssar_recursive_doubling", payload, [None] * len(builder))


def _split_allgather(name: str, nranks: int, size_bytes: int, payload: SparsePayload, dense: bool | None) -> Schedule:
    _check(nranks, size_bytes, payload)
    builder = ScheduleBuilder(_chunk_bytes(payload, nranks), nranks)
    forms: list[bool | None] = []

    def scatter(rank: int, owner: int, after) -> int:
        forms.append(None)
        return builder.send(rank, owner, (owner,), "reduce", "reduce_scatter", after=after)

    def gather(owner: int, peer: int, after) -> int:
        forms.append(dense)
        return builder.send(owner, peer, (owner,), "copy", "all_gather", after=after)

    _pairwise(nranks, scatter)
    _pairwise(nranks, gather)
    return _finish(builder, name, payload, forms)


def ssar_split_allgather(nranks: int, size_bytes: int, *, payload: SparsePayload) -> Schedule:
    """SparCML's SSAR_Split_allgather: split the index space, reduce each range at its owner, all-gather.

    The index space is split into ``p`` equal ranges; rank ``j`` owns range ``j``.
    Every rank sends its nonzeros of range ``j`` directly to rank ``j`` (reduce-scatter
    by direct exchange, ``p - 1`` rounds), then every owner sends its summed range,
    sparse or dense, whichever is smaller, to every other rank (all-gather,
    ``p - 1`` rounds).

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Dense size ``N * value_bytes``, bytes (must equal ``payload.size_bytes``).
    payload : SparsePayload
        The ranks' sparse vectors and their encoding.

    Returns
    -------
    Schedule
        ``2 p (p - 1)`` transfers, stages ``"reduce_scatter"`` and ``"all_gather"``.

    References
    ----------
    Renggli et al. (2019), SparCML, Sec. 4 (SSAR_Split_allgather).
    """
    return _split_allgather("ssar_split_allgather", nranks, size_bytes, payload, None)


def dsar_split_allgather(nranks: int, size_bytes: int, *, payload: SparsePayload) -> Schedule:
    """SparCML's DSAR_Split_allgather: as :func:`ssar_split_allgather`, but the all-gather is dense.

    The reduce-scatter exchanges sparse ranges; each owner then densifies its summed
    range and the all-gather sends ``N / p`` values per message.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Dense size ``N * value_bytes``, bytes (must equal ``payload.size_bytes``).
    payload : SparsePayload
        The ranks' sparse vectors and their encoding.

    Returns
    -------
    Schedule
        ``2 p (p - 1)`` transfers; all-gather messages have ``dense=True``.

    References
    ----------
    Renggli et al. (2019), SparCML, Sec. 4 (DSAR_Split_allgather).
    """
    return _split_allgather("dsar_split_allgather", nranks, size_bytes, payload, True)


def gtopk(nranks: int, size_bytes: int, *, payload: SparsePayload, k: int | None = None) -> Schedule:
    """Global top-k (gTop-k): a binomial-tree reduction that re-selects top-k at every merge, then a broadcast.

    In round ``i`` (``i = 0 .. ceil(log2 p) - 1``) rank ``r + 2^i`` sends its current
    k-sparse vector to rank ``r`` for every ``r`` divisible by ``2^(i+1)``; the receiver
    adds it to its own and keeps the ``k`` entries of largest magnitude (ties: lower
    index first): a ``"reduce_topk"`` transfer. Rank 0 then broadcasts the global
    top-k down the same tree.

    Semantics (lossy by design): every rank ends with the same ``k``-sparse vector,
    ``T(0)``, where ``T(r)`` for a subtree rooted at ``r`` is
    ``top_k(T(r's own, rounds < i) + T(r + 2^i))`` applied round by round; entries
    dropped by a selection are lost (in gTop-k S-SGD they stay in the local
    residual). :func:`simnet.schedule.check` verifies exactly that every rank ends
    with the same selection, which sums every rank's vector once.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Dense size ``N * value_bytes``, bytes.
    payload : SparsePayload
        The ranks' sparse vectors (values are generated: selection needs them).
    k : int, optional
        Entries kept at each merge; default ``payload.k``.

    Returns
    -------
    Schedule
        ``2 (p - 1)`` transfers, stages ``"reduce"`` and ``"broadcast"``;
        ``schedule.topk`` is ``k``.

    References
    ----------
    Shi et al. (2019), gTop-k S-SGD, Algorithm 2 (gTopKAllReduce).
    """
    _check(nranks, size_bytes, payload)
    k = payload.k if k is None else k
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ScheduleError(f"must be an integer ≥ 1, got {k!r}", path="k")
    builder = ScheduleBuilder(_chunk_bytes(payload, 1), nranks)
    distances = []
    distance = 1
    while distance < nranks:
        distances.append(distance)
        for root in range(0, nranks, 2 * distance):
            if root + distance < nranks:
                builder.send(root + distance, root, (0,), "reduce_topk", "reduce")
        distance *= 2
    for distance in reversed(distances):
        for root in range(0, nranks, 2 * distance):
            if root + distance < nranks:
                builder.send(root, root + distance, (0,), "copy", "broadcast")
    return _finish(builder, "gtopk", payload, [None] * len(builder), params={"k": k}, topk=k)


def sparse_ring(nranks: int, size_bytes: int, *, payload: SparsePayload) -> Schedule:
    """Ring reduce-scatter and all-gather on sparse segments.

    As :func:`simnet.algorithms.dense.ring_allreduce` with ``p`` index ranges: in
    reduce-scatter step ``s`` rank ``r`` sends the union of ``s + 1`` vectors on range
    ``(r - s) mod p`` to ``r + 1``; the all-gather forwards the fully summed ranges.
    Each message is sparse or dense, whichever is smaller.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Dense size ``N * value_bytes``, bytes (must equal ``payload.size_bytes``).
    payload : SparsePayload
        The ranks' sparse vectors and their encoding.

    Returns
    -------
    Schedule
        ``2 p (p - 1)`` transfers.
    """
    _check(nranks, size_bytes, payload)
    builder = ScheduleBuilder(_chunk_bytes(payload, nranks), nranks)
    groups = [(range(nranks), [[(c,)] for c in range(nranks)])]
    ring_reduce_scatter(builder, groups, "reduce_scatter")
    ring_all_gather(builder, groups, "all_gather")
    return _finish(builder, "sparse_ring", payload, [None] * len(builder))


def sparse_ring_ring(nranks: int, size_bytes: int, *, payload: SparsePayload, gpus_per_node: int = 4) -> Schedule:
    """Topology-aware sparse all-reduce (Nguyen, Wahib & Takano 2019): rings inside and across nodes.

    With ``g = gpus_per_node`` and ``n = p / g`` nodes, the index space is split into
    ``g`` segments of ``n`` chunks each (chunk ``a n + b`` is chunk ``b`` of segment ``a``).

    1. ``intra_reduce_scatter``: in every node, a sparse ring reduce-scatter over its
       ``g`` GPUs on the ``g`` segments; local GPU ``l`` ends with segment
       ``(l + 1) mod g`` summed over its node (fill-in stays on the fast intra-node links).
    2. ``inter_reduce_scatter``: for every local index ``l``, a ring over the ``n`` GPUs
       with local index ``l`` (one ring per local GPU, concurrently) reduce-scatters
       the ``n`` chunks of that segment.
    3. ``inter_all_gather``: the same rings all-gather the summed chunks.
    4. ``intra_all_gather``: every node ring all-gathers the ``g`` segments.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2, a multiple of `gpus_per_node`.
    size_bytes : int
        Dense size ``N * value_bytes``, bytes.
    payload : SparsePayload
        The ranks' sparse vectors.
    gpus_per_node : int, optional
        GPUs per node ``g``. Scenarios, jobs and :func:`simnet.models.predict` read it off
        the topology (its GPUs per server, :func:`~simnet.algorithms.hierarchy.node_defaults`);
        a bare builder call defaults to 4, as on ABCI.

    Returns
    -------
    Schedule
        ``2 n g (g - 1) + 2 g n (n - 1)`` transfers.

    References
    ----------
    Nguyen, T. T., Wahib, M. and Takano, R. (2019). Topology-aware sparse allreduce
    for large-scale deep learning. IPCCC 2019.
    """
    _check(nranks, size_bytes, payload)
    g = gpus_per_node
    if not isinstance(g, int) or isinstance(g, bool) or g < 1 or nranks % g:
        raise ScheduleError(f"must be an integer ≥ 1 dividing nranks={nranks}, got {g!r}", path="gpus_per_node")
    nodes = nranks // g
    segments = [tuple(a * nodes + b for b in range(nodes)) for a in range(g)]
    node_rings = [[node * g + local for local in range(g)] for node in range(nodes)]
    builder = ScheduleBuilder(_chunk_bytes(payload, g * nodes), nranks)
    if g > 1:
        for ring in node_rings:
            ring_reduce_scatter(builder, [(ring, [[segment] for segment in segments])], "intra_reduce_scatter")
    if nodes > 1:
        for phase, label in ((ring_reduce_scatter, "inter_reduce_scatter"), (ring_all_gather, "inter_all_gather")):
            for local in range(g):
                ring = [node * g + local for node in range(nodes)]
                phase(builder, [(ring, [[(c,)] for c in segments[(local + 1) % g]])], label)
    if g > 1:
        for ring in node_rings:
            ring_all_gather(builder, [(ring, [[segment] for segment in segments])], "intra_all_gather")
    return _finish(builder, "sparse_ring_ring", payload, [None] * len(builder), params={"gpus_per_node": g})


def expected_density(density: float, merged: int) -> float:
    """Expected density of the sum of `merged` independent uniform vectors of density `density`.

    An entry is zero in the sum only if it is zero in all ``m`` vectors::

        f(m) = 1 - (1 - d)^m

    exact for independent uniformly random k-subsets with ``d = k / N``.
    """
    return 1.0 - (1.0 - density) ** merged


def sparse_message_bytes(
    entries: float,
    density: float,
    merged: int,
    *,
    index_bytes: int = 4,
    value_bytes: int = 4,
    header_bytes: int = 4,
) -> float:
    """Expected wire size of a segment of `entries` entries summing `merged` uniform vectors, bytes.

    ``S(n, m) = h + min(n f(m) (b_i + b_v), n b_v)``: the sparse encoding of the
    expected nonzeros or the dense segment, whichever is smaller (SparCML).
    """
    nnz = entries * expected_density(density, merged)
    return header_bytes + min(nnz * (index_bytes + value_bytes), entries * value_bytes)


def _encoding(payload: SparsePayload) -> dict:
    return {"index_bytes": payload.index_bytes, "value_bytes": payload.value_bytes, "header_bytes": payload.header_bytes}


def sparse_ring_allreduce_time(
    nranks: int,
    payload: SparsePayload,
    alpha_s: float | Sequence[float],
    beta_s_per_byte: float | Sequence[float],
    *,
    gamma_s_per_byte: float = 0.0,
) -> float:
    """Ring reduce-scatter + all-gather on sparse segments, seconds.

    With ``p`` ranks and segments of ``n = N / p`` entries, reduce-scatter step ``s``
    carries the sum of ``s`` vectors and the all-gather the sum of all ``p``::

        T = Σ_{s=1}^{p-1} (α + S(N/p, s) (β + γ)) + (p - 1) (α + S(N/p, p) β)

    When the hops differ (``α_h``, ``β_h`` for hop ``h -> h + 1``), segment ``g``
    crosses hop ``g + s - 1`` at reduce-scatter step ``s`` and hops ``g-1 .. g+p-3``
    gathering, as in :func:`simnet.algorithms.dense.ring_allreduce_time`: ``T`` is the
    slowest such chain, or the slowest hop (largest ``β_h``) busy with one message
    of every step, ``(Σ_s S(N/p, s) + (p - 1) S(N/p, p)) β_h + α_h``, if that is longer.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    payload : SparsePayload
        Dimension, density and encoding of the ranks' vectors.
    alpha_s : float or sequence of float
        Latency of a ring hop, seconds (or one per hop ``h -> h + 1``).
    beta_s_per_byte : float or sequence of float
        Inverse bandwidth of a ring hop, seconds per byte (or one per hop).
    gamma_s_per_byte : float, optional
        Reduction cost ``γ``, seconds per byte.

    References
    ----------
    Patarasuk & Yuan (2009) for the ring; Renggli et al. (2019), SparCML, for the
    sparse/dense switch; Nguyen, Wahib & Takano (2019), Sec. III, for the fill-in.
    """
    d, n, enc = payload.k / payload.dimension, payload.dimension / nranks, _encoding(payload)
    if isinstance(alpha_s, (int, float)) and isinstance(beta_s_per_byte, (int, float)):
        reduce = beta_s_per_byte + gamma_s_per_byte
        steps = sum(alpha_s + sparse_message_bytes(n, d, s, **enc) * reduce for s in range(1, nranks))
        return steps + (nranks - 1) * (alpha_s + sparse_message_bytes(n, d, nranks, **enc) * beta_s_per_byte)
    p = nranks
    alphas = np.broadcast_to(np.asarray(alpha_s, dtype=float), (p,))
    betas = np.broadcast_to(np.asarray(beta_s_per_byte, dtype=float), (p,))
    scatter = np.array([sparse_message_bytes(n, d, s, **enc) for s in range(1, p)])
    gather = sparse_message_bytes(n, d, p, **enc)
    segment, step = np.arange(p)[:, None], np.arange(p - 1)[None, :]
    reducing = (segment + step) % p
    gathering = (segment - 1 + step) % p
    chains = ((alphas[reducing] + scatter * (betas[reducing] + gamma_s_per_byte)).sum(axis=1)
              + (alphas[gathering] + gather * betas[gathering]).sum(axis=1))
    slowest = int(np.lexsort((alphas, betas))[-1])
    busy = (scatter.sum() + (p - 1) * gather) * betas[slowest] + alphas[slowest]
    return float(max(chains.max(), busy))


def sparse_ring_ring_allreduce_time(
    nranks: int,
    payload: SparsePayload,
    gpus_per_node: int,
    intra_alpha_s: float,
    intra_beta_s_per_byte: float,
    inter_alpha_s: float,
    inter_beta_s_per_byte: float,
    *,
    gamma_s_per_byte: float = 0.0,
) -> float:
    """Topology-aware sparse all-reduce (intra ring, inter rings, inter and intra all-gathers), seconds.

    With ``g`` GPUs per node and ``q = p / g`` nodes::

        T = Σ_{s=1}^{g-1} (α_a + S(N/g, s) β_a)                 intra reduce-scatter
          + Σ_{s=1}^{q-1} (α_e + S(N/(g q), g s) β_e)           inter reduce-scatter
          + (q - 1) (α_e + S(N/(g q), p) β_e)                   inter all-gather
          + (g - 1) (α_a + S(N/g, p) β_a)                       intra all-gather

    ``β_e`` includes the sharing of a node's network ports by its ``g`` concurrent
    inter-node rings.

    References
    ----------
    Nguyen, T. T., Wahib, M. and Takano, R. (2019). Topology-aware sparse allreduce
    for large-scale deep learning. IPCCC 2019.
    """
    g, q = gpus_per_node, nranks // gpus_per_node
    d, enc = payload.k / payload.dimension, _encoding(payload)
    n_intra, n_inter = payload.dimension / g, payload.dimension / nranks
    a_reduce, e_reduce = intra_beta_s_per_byte + gamma_s_per_byte, inter_beta_s_per_byte + gamma_s_per_byte
    intra = sum(intra_alpha_s + sparse_message_bytes(n_intra, d, s, **enc) * a_reduce for s in range(1, g))
    inter = sum(inter_alpha_s + sparse_message_bytes(n_inter, d, g * s, **enc) * e_reduce for s in range(1, q))
    inter += (q - 1) * (inter_alpha_s + sparse_message_bytes(n_inter, d, nranks, **enc) * inter_beta_s_per_byte)
    intra += (g - 1) * (intra_alpha_s + sparse_message_bytes(n_intra, d, nranks, **enc) * intra_beta_s_per_byte)
    return intra + inter


def topk_allgather_time(nranks: int, payload: SparsePayload, alpha_s: float, beta_s_per_byte: float) -> float:
    """All-gather of every rank's k nonzeros by ``p - 1`` pairwise rounds, seconds.

    ``T = (p - 1) (α + S(N, 1) β)`` (pairwise exchange, Thakur et al. 2005).
    """
    d = payload.k / payload.dimension
    return (nranks - 1) * (alpha_s + sparse_message_bytes(payload.dimension, d, 1, **_encoding(payload)) * beta_s_per_byte)


def split_allgather_time(
    nranks: int, payload: SparsePayload, alpha_s: float, beta_s_per_byte: float, *, dense_all_gather: bool = False
) -> float:
    """SparCML's SSAR/DSAR_Split_allgather by pairwise rounds, seconds.

    ``T = (p - 1) (α + S(N/p, 1) β) + (p - 1) (α + A β)`` with ``A = S(N/p, p)``
    (SSAR) or ``h + (N/p) b_v`` (DSAR, dense all-gather).
    """
    d, enc, n = payload.k / payload.dimension, _encoding(payload), payload.dimension / nranks
    gather = payload.header_bytes + n * payload.value_bytes if dense_all_gather else sparse_message_bytes(n, d, nranks, **enc)
    scatter = sparse_message_bytes(n, d, 1, **enc)
    return (nranks - 1) * (2 * alpha_s + (scatter + gather) * beta_s_per_byte)


def gtopk_time(nranks: int, payload: SparsePayload, alpha_s: float, beta_s_per_byte: float, *,
               k: int | None = None) -> float:
    """gTop-k: tree reduction with top-k re-selection then broadcast, seconds.

    ``T = 2 ceil(log2 p) (α + S_k β)`` with ``S_k = h + min(k (b_i + b_v), N b_v)``
    (Shi et al. 2019 give ``2 α log p + 4 k β log p`` for 4-byte indices and values).
    """
    kept = payload.k if k is None else k
    message = payload.header_bytes + min(kept * (payload.index_bytes + payload.value_bytes),
                                         payload.dimension * payload.value_bytes)
    return 2 * math.ceil(math.log2(nranks)) * (alpha_s + message * beta_s_per_byte)


def _worst(costs: PairCosts, patterns: list[list[tuple[int, int]]]) -> tuple[float, float]:
    found = [costs.pattern(pairs) for pairs in patterns if pairs]
    return max(a for a, _ in found), max(b for _, b in found)


def _shifts(nranks: int) -> list[list[tuple[int, int]]]:
    return [[(r, (r + s) % nranks) for r in range(nranks)] for s in range(1, nranks)]


def _sparse_ring_model(costs: PairCosts, nranks: int, size_bytes: int, *, payload: SparsePayload,
                       gamma_s_per_byte: float = 0.0) -> float:
    hops = costs.pairs(_shifts(nranks)[0])
    alphas, betas = [a for a, _, _ in hops], [b * s for _, b, s in hops]
    if len(set(alphas)) == 1 and len(set(betas)) == 1:
        alphas, betas = alphas[0], betas[0]
    return sparse_ring_allreduce_time(nranks, payload, alphas, betas, gamma_s_per_byte=gamma_s_per_byte)


def _sparse_ring_ring_model(costs: PairCosts, nranks: int, size_bytes: int, *, payload: SparsePayload,
                            gpus_per_node: int = 4, gamma_s_per_byte: float = 0.0) -> float:
    g = gpus_per_node
    intra = [(r, r - r % g + (r + 1) % g) for r in range(nranks)] if g > 1 else []
    inter = [(r, (r + g) % nranks) for r in range(nranks)] if nranks > g else []
    a_alpha, a_beta = costs.pattern(intra) if intra else (0.0, 0.0)
    e_alpha, e_beta = costs.pattern(inter) if inter else (0.0, 0.0)
    return sparse_ring_ring_allreduce_time(nranks, payload, g, a_alpha, a_beta, e_alpha, e_beta,
                                           gamma_s_per_byte=gamma_s_per_byte)


def _topk_allgather_model(costs: PairCosts, nranks: int, size_bytes: int, *, payload: SparsePayload,
                          gamma_s_per_byte: float = 0.0) -> float:
    return topk_allgather_time(nranks, payload, *_worst(costs, _shifts(nranks)))


def _recursive_doubling_model(costs: PairCosts, nranks: int, size_bytes: int, *, payload: SparsePayload,
                              gamma_s_per_byte: float = 0.0) -> float:
    rem, members = power_of_two_members(nranks)
    d, enc = payload.k / payload.dimension, _encoding(payload)
    total = 0.0
    if rem:
        for pairs in ([(2 * r, 2 * r + 1) for r in range(rem)], [(2 * r + 1, 2 * r) for r in range(rem)]):
            alpha, beta = costs.pattern(pairs)
            merged = 1 if pairs[0][0] % 2 == 0 else nranks
            total += alpha + sparse_message_bytes(payload.dimension, d, merged, **enc) * beta
    distance, merged = 1, 2 if rem else 1
    while distance < len(members):
        alpha, beta = costs.pattern([(members[i], members[i ^ distance]) for i in range(len(members))])
        total += alpha + sparse_message_bytes(payload.dimension, d, merged, **enc) * beta
        distance, merged = 2 * distance, 2 * merged
    return total


def _ssar_split_model(costs: PairCosts, nranks: int, size_bytes: int, *, payload: SparsePayload,
                      gamma_s_per_byte: float = 0.0) -> float:
    return split_allgather_time(nranks, payload, *_worst(costs, _shifts(nranks)))


def _dsar_split_model(costs: PairCosts, nranks: int, size_bytes: int, *, payload: SparsePayload,
                      gamma_s_per_byte: float = 0.0) -> float:
    return split_allgather_time(nranks, payload, *_worst(costs, _shifts(nranks)), dense_all_gather=True)


def _gtopk_model(costs: PairCosts, nranks: int, size_bytes: int, *, payload: SparsePayload, k: int | None = None,
                 gamma_s_per_byte: float = 0.0) -> float:
    tree = []
    distance = 1
    while distance < nranks:
        tree.append([(r + distance, r) for r in range(0, nranks, 2 * distance) if r + distance < nranks])
        distance *= 2
    return gtopk_time(nranks, payload, *_worst(costs, tree), k=k)


def fill_in(schedule: Schedule):
    """Measured fill-in of a sparse schedule beside the uniform expectation.

    One row per ``(stage, merged)``: ``transfers``, mean ``entries`` and ``nnz`` per
    message, ``measured`` density (``nnz / entries`` over the group), ``expected``
    density ``1 - (1 - k/N)^m`` and the fraction of messages sent ``dense``.

    Parameters
    ----------
    schedule : Schedule
        Built by this module (``schedule.params["payload"]`` holds ``dimension`` and
        ``density``; transfers hold ``nnz`` and ``merged``).
    """
    import pandas as pd

    spec = schedule.params["payload"]
    value_bytes = spec["value_bytes"]
    density = max(1, min(spec["dimension"], round(spec["density"] * spec["dimension"]))) / spec["dimension"]
    table = schedule.transfers
    chunk_entries = np.array(schedule.chunk_bytes, dtype=np.int64) // value_bytes
    piece_entries = np.add.reduceat(chunk_entries[table.piece_chunks], table.piece_offsets[:-1])
    rows = pd.DataFrame({
        "stage": np.asarray(table.stages, dtype=object)[table.stage],
        "merged": table.merged,
        "entries": piece_entries[table.piece],
        "nnz": table.nnz,
        "dense": table.dense,
    })
    grouped = rows.groupby(["stage", "merged"], sort=False)
    frame = grouped.agg(transfers=("nnz", "size"), entries=("entries", "mean"), nnz=("nnz", "mean"),
                        dense=("dense", "mean"))
    frame["measured"] = grouped["nnz"].sum() / grouped["entries"].sum()
    frame["expected"] = [expected_density(density, m) for m in frame.index.get_level_values("merged")]
    return frame.reset_index()


def _sparse_transfers(nranks: int, size_bytes: int, params) -> int:
    return 2 * nranks * nranks


ALGORITHMS = (
    Algorithm(
        "topk_allgather", ("allreduce",), topk_allgather,
        "every rank sends its k (index, value) pairs to every other rank; local sum",
        "(p-1)(α + S(N,1)β)   [S(n,m) = h + min(n f(m)(b_i+b_v), n b_v), f(m) = 1-(1-d)^m]",
        model=_topk_allgather_model, citation="Renggli et al. (2019), SparCML, SC'19.", payload="sparse",
        transfers=_sparse_transfers,
    ),
    Algorithm(
        "ssar_recursive_doubling", ("allreduce",), ssar_recursive_doubling,
        "SparCML: log2 p exchanges of the whole sparse sum, dense once smaller (MPICH folding otherwise)",
        "Σ_i (α + S(N, 2^i)β) + fold   [p' = 2^⌊log2 p⌋ exchanges]",
        model=_recursive_doubling_model, citation="Renggli et al. (2019), SparCML, SC'19, Sec. 4.",
        payload="sparse", transfers=_sparse_transfers,
    ),
    Algorithm(
        "ssar_split_allgather", ("allreduce",), ssar_split_allgather,
        "SparCML: sparse reduce of p index ranges at their owners, sparse all-gather",
        "(p-1)(2α + (S(N/p,1) + S(N/p,p))β)",
        model=_ssar_split_model, citation="Renggli et al. (2019), SparCML, SC'19, Sec. 4.", payload="sparse",
        transfers=_sparse_transfers,
    ),
    Algorithm(
        "dsar_split_allgather", ("allreduce",), dsar_split_allgather,
        "SparCML: sparse reduce of p index ranges at their owners, dense all-gather",
        "(p-1)(2α + (S(N/p,1) + h + N/p·b_v)β)",
        model=_dsar_split_model, citation="Renggli et al. (2019), SparCML, SC'19, Sec. 4.", payload="sparse",
        transfers=_sparse_transfers,
    ),
    Algorithm(
        "gtopk", ("allreduce",), gtopk,
        "Shi et al.: binomial-tree reduce re-selecting the top-k, then broadcast (lossy)",
        "2⌈log2 p⌉(α + S_k β)   [S_k = h + k(b_i+b_v)]",
        model=_gtopk_model, citation="Shi et al. (2019), gTop-k S-SGD, ICDCS 2019.", payload="sparse",
        transfers=_sparse_transfers, lossy=True,
    ),
    Algorithm(
        "sparse_ring", ("allreduce",), sparse_ring,
        "ring reduce-scatter + all-gather on sparse segments",
        "Σ_s (α + S(N/p,s)β) + (p-1)(α + S(N/p,p)β)",
        model=_sparse_ring_model, citation="Nguyen, Wahib & Takano (2019), IPCCC 2019, Sec. III.", payload="sparse",
        transfers=_sparse_transfers,
    ),
    Algorithm(
        "sparse_ring_ring", ("allreduce",), sparse_ring_ring,
        "Nguyen et al.: intra-node sparse ring RS, inter-node rings per local GPU, AG back",
        "Σ_s(α_a + S(N/g,s)β_a) + Σ_s(α_e + S(N/p,gs)β_e) + (q-1)(α_e + S(N/p,p)β_e) + (g-1)(α_a + S(N/g,p)β_a)",
        model=_sparse_ring_ring_model,
        citation="Nguyen, T. T., Wahib, M. and Takano, R. (2019). Topology-aware sparse allreduce for large-scale "
                 "deep learning. IPCCC 2019.",
        payload="sparse", transfers=_sparse_transfers, defaults=node_defaults,
    ),
)
"""Registry records of the sparse all-reduce algorithms."""
