"""Schedules of collectives as data, one executor for them, and the check that they compute their collective.

A :class:`Schedule` splits every rank's payload into *chunks* and lists *transfers*.
A transfer moves the current contents of some chunks from a buffer of one rank to a
buffer of another (or of the same rank, between two of its buffers), either
overwriting the destination (``"copy"``), adding into it (``"reduce"``), or adding
and then keeping only the ``k`` entries of largest magnitude (``"reduce_topk"``, the
merge step of a global top-k), after the transfers it depends on have finished.
Dependencies point to earlier transfers, so the order of the transfers is an
execution order and no cycle can be written.

Buffers (:data:`BUFFERS`) make collectives that keep their input apart expressible:
``"work"`` starts as a copy of the rank's input (in-place collectives; what the
collective leaves there is its result), ``"input"`` holds the rank's own
contribution and is never written (a rank that sends its own vector to many peers
while it adds theirs reads it there), ``"scratch"`` starts empty, and so do the
further scratch buffers ``"scratch1"``, ``"scratch2"``, ... (:func:`buffer_name`),
for schedules that keep several partial sums of one chunk on one rank at once (an
all-pairs reduction receiving a chunk from every peer before adding them up).

*Switch endpoints* make in-network reduction and multicast expressible (NVSwitch
NVLS, InfiniBand SHARP): a schedule may list groups of ranks in
:attr:`Schedule.switches`; endpoint ``nranks + j`` is the reduce-capable switch that
serves group ``j`` (the network decides which switch that is). A switch endpoint has
only a work buffer, which starts as the identity of the sum: the first transfer that
adds into a chunk there simply deposits it. A multicast is a copy into the switch
followed by copies out of it.

Transfers may also carry protocol detail (:attr:`TransferTable.wire_bytes`, the bytes
that cross the links, e.g. twice the payload for NCCL's LL protocol, and
:attr:`TransferTable.delay_s`, a per-message latency the protocol adds before the
message enters the network).

The transfers are stored once, as columns (:class:`TransferTable`): ranks, bytes,
op, buffers, the chunks carried (an index into a table of distinct *pieces*, which
many transfers share), dependencies in CSR form and stage labels, plus the sparse
payload's ``nnz``/``dense``/``merged`` when there is one. A :class:`Transfer` is a
read-only view of one row.

:func:`execute` runs a schedule on values of any kind given by a
:class:`Semantics` (sets of contributing ranks, numpy payloads, sparse index sets),
in the order of the transfers, with one exception that makes pairwise algorithms
expressible: two transfers ``a -> b`` and ``b -> a`` over the same chunk and
buffers, with no dependency between them, form a *pairwise exchange* (like
``MPI_Sendrecv`` into a temporary buffer): both read their source before either
writes. :func:`check` proves, whatever the timing, that a schedule computes its
collective: it refuses races (an unordered read and write, or two unordered writes
that do not both add, of one buffer), double counting and reads of empty buffers,
executes the schedule on contribution sets and compares them with what the
collective must produce; ``numeric=True`` also executes it on random integer
payloads and compares with :func:`numpy.sum`.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, NamedTuple, Protocol

import numpy as np

from simnet.errors import ScheduleError, expect_instance
from simnet.speed import shared_ints

__all__ = [
    "COLLECTIVES",
    "ALL_TO_ALL",
    "OPS",
    "BUFFERS",
    "MAX_BUFFERS",
    "buffer_name",
    "buffer_code",
    "Transfer",
    "Columns",
    "TransferTable",
    "Schedule",
    "Semantics",
    "execute",
    "split_bytes",
    "check",
]

COLLECTIVES = ("allreduce", "reduce_scatter", "all_gather", "broadcast", "reduce", "alltoall", "alltoallv")
ALL_TO_ALL = ("alltoall", "alltoallv")
"""Collectives that move blocks from rank to rank: chunk ``c`` starts at ``owners[c]`` and must end at ``targets[c]``."""
OPS = ("copy", "reduce", "reduce_topk")
"""Transfer ops; their index is the op code stored in :attr:`TransferTable.op`."""
BUFFERS = ("work", "input", "scratch")
"""The named buffers of a rank; their index is the buffer code stored in the table.

Codes ``3 .. MAX_BUFFERS - 1`` are further scratch buffers ``"scratch1"``,
``"scratch2"``, ... (see :func:`buffer_name`)."""
MAX_BUFFERS = 256
"""Buffer codes are stored as 8-bit unsigned integers."""

COPY, REDUCE, REDUCE_TOPK = range(len(OPS))
WORK, INPUT, SCRATCH = range(len(BUFFERS))


def buffer_name(code: int) -> str:
    """The name of buffer `code`: ``BUFFERS[code]``, or ``"scratch<k>"`` for code ``k + 2``, ``k ≥ 1``.

    >>> buffer_name(1), buffer_name(4)
    ('input', 'scratch2')
    """
    return BUFFERS[code] if code < len(BUFFERS) else f"scratch{code - SCRATCH}"


def buffer_code(name: str) -> int:
    """The code of buffer `name` (see :func:`buffer_name`).

    Raises
    ------
    ScheduleError
        For a name that is no buffer.
    """
    if name in BUFFERS:
        return BUFFERS.index(name)
    suffix = name.removeprefix("scratch") if isinstance(name, str) else ""
    if suffix.isdecimal() and suffix[0] != "0" and int(suffix) < MAX_BUFFERS - SCRATCH:
        return SCRATCH + int(suffix)
    raise ScheduleError(f"must be one of {BUFFERS} or 'scratch1' .. 'scratch{MAX_BUFFERS - 1 - SCRATCH}', "
                        f"got {name!r}")


@dataclass(frozen=True, slots=True)
class Transfer:
    """One message of a schedule (a read-only view of one row of its :class:`TransferTable`).

    Parameters
    ----------
    src, dst : int
        Sending and receiving rank.
    chunks : tuple of int
        Chunks whose contents the message carries.
    nbytes : int
        Size of the message on the wire, bytes (the chunks' bytes for dense data).
    op : {"copy", "reduce", "reduce_topk"}
        Whether the destination overwrites, adds into, or adds into and keeps the
        schedule's ``topk`` largest entries of, its copy of the chunks.
    deps : tuple of int
        Indices of earlier transfers that must finish before this one starts.
    stage : str, optional
        Label of the algorithm phase, e.g. ``"reduce_scatter"``, for analysis.
    nnz : int, optional
        Sparse payloads only: nonzeros the message carries (``None`` for dense data).
    dense : bool, optional
        Sparse payloads only: whether the message was sent in dense form.
    merged : int, optional
        Sparse payloads only: how many ranks' contributions the message sums.
    src_buffer, dst_buffer : str, optional
        Buffer read at the source and written at the destination (default
        ``"work"``): ``"work"``, ``"input"``, ``"scratch"`` or a further scratch
        buffer ``"scratch1"``, ``"scratch2"``, ...
    wire_bytes : int, optional
        Bytes that cross the links, when a protocol sends more than the payload
        (``None``: `nbytes`).
    delay_s : float, optional
        Latency the protocol adds to this message before it enters the network, seconds.
    channel : int, optional
        Connection among those between the same two endpoints (NCCL's channel): the
        messages of one connection drain in order (see :class:`simnet.links.MaxMinLinks`).
    """

    src: int
    dst: int
    chunks: tuple[int, ...]
    nbytes: int
    op: Literal["copy", "reduce", "reduce_topk"] = "copy"
    deps: tuple[int, ...] = ()
    stage: str = ""
    nnz: int | None = None
    dense: bool | None = None
    merged: int | None = None
    src_buffer: str = "work"
    dst_buffer: str = "work"
    wire_bytes: int | None = None
    delay_s: float = 0.0
    channel: int = 0


class Columns(NamedTuple):
    """The transfers as the engine and the models read them, one entry per transfer.

    Attributes
    ----------
    src, dst : numpy.ndarray of int
        Sending and receiving rank.
    nbytes : numpy.ndarray of float64
        Size on the wire, bytes (the protocol's wire bytes where the table has them).
    reduce : numpy.ndarray of bool
        Whether the destination adds (``"reduce"`` or ``"reduce_topk"``), which costs the reduction γ.
    dep_offsets : numpy.ndarray of int64
        ``count + 1`` offsets into `deps`: the dependencies of transfer ``i`` are
        ``deps[dep_offsets[i]:dep_offsets[i + 1]]``.
    deps : numpy.ndarray of int
        All dependencies, transfer after transfer.
    delay_s : numpy.ndarray of float64
        Protocol latency of each message before it enters the network, seconds.
    payload : numpy.ndarray of float64
        Payload bytes (what a reduction adds up).
    channel : numpy.ndarray of int
        Connection of each transfer among those between its two endpoints.
    """

    src: np.ndarray
    dst: np.ndarray
    nbytes: np.ndarray
    reduce: np.ndarray
    dep_offsets: np.ndarray
    deps: np.ndarray
    delay_s: np.ndarray
    payload: np.ndarray
    channel: np.ndarray


def _integers(value, name: str, count: int | None, dtype) -> np.ndarray:
    """A read-only 1-D array of integers as `dtype` (of `count` entries if given) for a table to hold.

    A writable array is copied. An array of `dtype` that owns its data and is already
    read-only is taken as it is, so that columns tables share (the builder's, those
    :meth:`TransferTable.replace` keeps) are held once; making such an array writable
    again and writing it is not supported.
    """
    array = np.asarray(value)
    if array.size == 0:
        array = array.reshape(0).astype(np.int64)
    if array.ndim != 1 or (count is not None and len(array) != count) or not np.issubdtype(array.dtype, np.integer):
        expected = "a 1-D array of integers" if count is None else f"{count} integers"
        raise ScheduleError(f"must be {expected}, got shape {array.shape}, dtype {array.dtype}", path=name)
    limit = np.iinfo(dtype)
    if array.size and (array.max() > limit.max or array.min() < limit.min):
        raise ScheduleError(f"must fit in {8 * np.dtype(dtype).itemsize}-bit signed integers, got values in "
                            f"[{array.min()}, {array.max()}]", path=name)
    if array.dtype == dtype and array.flags.owndata and not array.flags.writeable:
        return array
    return array.astype(dtype)


def _offsets(offsets, values: np.ndarray, count: int, name: str) -> np.ndarray:
    """Validated CSR offsets (``None``: one value per row)."""
    if offsets is None:
        if len(values) != count:
            raise ScheduleError(f"must hold one value per transfer ({count}) without offsets, got {len(values)}",
                                path=name)
        return np.arange(count + 1, dtype=np.int64)
    offsets = _integers(offsets, f"{name}_offsets", count + 1, np.int64)
    if offsets[0] != 0 or offsets[-1] != len(values) or (np.diff(offsets) < 0).any():
        raise ScheduleError(f"must be {count + 1} non-decreasing offsets from 0 to {len(values)}",
                            path=f"{name}_offsets")
    return offsets


def _codes(value, names: tuple[str, ...], name: str, count: int, default: int) -> np.ndarray:
    """Codes of an array of names or of codes (``None``: all `default`)."""
    if value is None:
        return np.full(count, default, dtype=np.uint8)
    array = np.asarray(value)
    if array.dtype.kind in "UO":
        lookup = {label: code for code, label in enumerate(names)}
        unknown = [item for item in dict.fromkeys(array.tolist()) if item not in lookup]
        if unknown:
            raise ScheduleError(f"must be among {names}, got {unknown[0]!r}", path=name)
        array = np.fromiter((lookup[item] for item in array.tolist()), dtype=np.int64, count=len(array))
    codes = _integers(array, name, count, np.uint8 if array.dtype == np.uint8 else np.int64)
    if codes.size and (codes.min() < 0 or codes.max() >= len(names)):
        raise ScheduleError(f"must be codes of {names} (0 .. {len(names) - 1})", path=name)
    return codes.astype(np.uint8, copy=False)


def _buffer_codes(value, name: str, count: int) -> np.ndarray:
    """Codes of an array of buffer names or codes (``None``: all ``"work"``)."""
    if value is None:
        return np.full(count, WORK, dtype=np.uint8)
    array = np.asarray(value)
    if array.dtype.kind in "UO":
        codes = {}
        for item in dict.fromkeys(array.tolist()):
            try:
                codes[item] = buffer_code(item)
            except ScheduleError as error:
                raise ScheduleError(error.message, path=name) from None
        array = np.fromiter((codes[item] for item in array.tolist()), dtype=np.int64, count=len(array))
    codes = _integers(array, name, count, np.uint8 if array.dtype == np.uint8 else np.int64)
    if codes.size and (codes.min() < 0 or codes.max() >= MAX_BUFFERS):
        raise ScheduleError(f"must be buffer codes (0 .. {MAX_BUFFERS - 1})", path=name)
    return codes.astype(np.uint8, copy=False)


_REQUIRED = ("src", "dst", "nbytes", "op", "src_buffer", "dst_buffer", "piece", "piece_offsets", "piece_chunks",
             "dep_offsets", "deps", "stage")
_SPARSE = ("nnz", "dense", "merged")
_PROTOCOL = ("wire_bytes", "delay_s", "channel")


def _seconds(value, count: int) -> np.ndarray:
    """A private copy of `count` finite times ≥ 0, seconds."""
    array = np.array(value, dtype=float)
    if array.shape != (count,):
        raise ScheduleError(f"must be {count} times in seconds, got shape {array.shape}", path="delay_s")
    if count and not (np.isfinite(array).all() and array.min() >= 0):
        raise ScheduleError("must be finite times ≥ 0 seconds", path="delay_s")
    return array


class TransferTable(Sequence):
    """The transfers of a schedule as columns; indexing and iteration give :class:`Transfer` views.

    Parameters
    ----------
    src, dst : array_like of int
        Sending and receiving rank of each transfer.
    nbytes : array_like of int
        Size on the wire of each transfer, bytes.
    op : array_like, optional
        Op of each transfer, as names of :data:`OPS` or their codes (default all ``"copy"``).
    chunks : array_like of int, optional
        Chunks carried: one per transfer, or with `chunk_offsets` the chunks of
        transfer ``i`` are ``chunks[chunk_offsets[i]:chunk_offsets[i + 1]]``.
        Give either `chunks` or `piece` with `pieces`.
    piece : array_like of int, optional
        Index of each transfer's piece in `pieces`.
    pieces : tuple of (array_like, array_like), optional
        ``(offsets, chunks)``: the chunks of piece ``j`` are
        ``chunks[offsets[j]:offsets[j + 1]]``. Many transfers may share a piece.
    deps : array_like of int
        Dependencies: with `dep_offsets` (``count + 1`` offsets, like `chunk_offsets`);
        without, exactly one per transfer.
    stage : array_like of int, optional
        Index into `stages` of each transfer's stage label (default all 0).
    stages : sequence of str, optional
        Stage labels (default ``("",)``).
    src_buffer, dst_buffer : array_like, optional
        Buffers (names, see :func:`buffer_name`, or codes; default ``"work"``).
    nnz, dense, merged : array_like, optional
        Sparse payloads: nonzeros carried, sent in dense form, ranks summed (all three or none).
    wire_bytes : array_like of int, optional
        Bytes on the links of each transfer when a protocol sends more than its
        payload (default: `nbytes`).
    delay_s : array_like of float, optional
        Per-message protocol latency before the message enters the network, seconds
        (default 0).
    channel : array_like of int, optional
        Connection of each transfer among those between its two endpoints (default 0).
    chunk_offsets, dep_offsets : array_like of int, optional
        CSR offsets of `chunks` and `deps`.

    Raises
    ------
    ScheduleError
        If the arrays disagree in length or type (``path`` names the argument).
        Ranks, chunks and dependencies are range-checked by :class:`Schedule`.

    Examples
    --------
    >>> table = TransferTable(src=[0, 1], dst=[1, 0], nbytes=[8, 8], op=["reduce", "copy"],
    ...                       chunks=[0, 0], deps=[0], dep_offsets=[0, 0, 1])
    >>> table[1].op, table[1].deps
    ('copy', (0,))
    """

    def __init__(
        self,
        *,
        src,
        dst,
        nbytes,
        op=None,
        chunks=None,
        chunk_offsets=None,
        piece=None,
        pieces=None,
        deps=(),
        dep_offsets=None,
        stage=None,
        stages: Sequence[str] = ("",),
        src_buffer=None,
        dst_buffer=None,
        nnz=None,
        dense=None,
        merged=None,
        wire_bytes=None,
        delay_s=None,
        channel=None,
    ) -> None:
        count = len(np.asarray(src))
        self.src = _integers(src, "src", count, np.int32)
        self.dst = _integers(dst, "dst", count, np.int32)
        self.nbytes = _integers(nbytes, "nbytes", count, np.int64)
        self.op = _codes(op, OPS, "op", count, COPY)
        self.src_buffer = _buffer_codes(src_buffer, "src_buffer", count)
        self.dst_buffer = _buffer_codes(dst_buffer, "dst_buffer", count)
        if (chunks is None) == (piece is None) or (piece is None) != (pieces is None):
            raise ScheduleError("give either chunks (with chunk_offsets) or piece with pieces", path="chunks")
        if chunks is not None:
            self.piece_chunks = _integers(chunks, "chunks", None, np.int32)
            self.piece_offsets = _offsets(chunk_offsets, self.piece_chunks, count, "chunk")
            self.piece = np.arange(count, dtype=np.int32)
        else:
            offsets, members = pieces
            self.piece_chunks = _integers(members, "pieces", None, np.int32)
            npieces = len(np.asarray(offsets)) - 1
            self.piece_offsets = _offsets(offsets, self.piece_chunks, max(npieces, 0), "piece")
            self.piece = _integers(piece, "piece", count, np.int32)
            if count and (self.piece.min() < 0 or self.piece.max() >= npieces):
                raise ScheduleError(f"must index the {npieces} pieces", path="piece")
        self.deps = _integers(deps, "deps", None, np.int32)
        self.dep_offsets = _offsets(dep_offsets, self.deps, count, "dep")
        self.stages = tuple(stages)
        if not self.stages or not all(isinstance(label, str) for label in self.stages):
            raise ScheduleError(f"must be a non-empty sequence of labels, got {stages!r}", path="stages")
        self.stage = np.zeros(count, dtype=np.int32) if stage is None else _integers(stage, "stage", count, np.int32)
        if count and not ((self.stage >= 0) & (self.stage < len(self.stages))).all():
            raise ScheduleError(f"must index the {len(self.stages)} stages", path="stage")
        given = [name for name, value in zip(_SPARSE, (nnz, dense, merged)) if value is not None]
        if given and len(given) != 3:
            raise ScheduleError("give nnz, dense and merged together", path=given[0])
        self.nnz = None if nnz is None else _integers(nnz, "nnz", count, np.int64)
        self.dense = None if dense is None else np.asarray(dense, dtype=bool).copy()
        self.merged = None if merged is None else _integers(merged, "merged", count, np.int32)
        if self.dense is not None and self.dense.shape != (count,):
            raise ScheduleError(f"must be {count} booleans, got shape {self.dense.shape}", path="dense")
        self.wire_bytes = None if wire_bytes is None else _integers(wire_bytes, "wire_bytes", count, np.int64)
        if self.wire_bytes is not None and count and self.wire_bytes.min() < 0:
            raise ScheduleError(f"must be ≥ 0, got {self.wire_bytes.min()}", path="wire_bytes")
        self.delay_s = None if delay_s is None else _seconds(delay_s, count)
        self.channel = None if channel is None else _integers(channel, "channel", count, np.int32)
        if self.channel is not None and count and self.channel.min() < 0:
            raise ScheduleError(f"must be ≥ 0, got {self.channel.min()}", path="channel")
        self._freeze()

    def _freeze(self) -> None:
        for name in (*_REQUIRED, *_SPARSE, *_PROTOCOL):
            array = getattr(self, name, None)
            if array is not None:
                array.flags.writeable = False

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update({"wire_bytes": None, "delay_s": None, "channel": None, **state})
        self._freeze()

    def __len__(self) -> int:
        return len(self.src)

    @property
    def sparse(self) -> bool:
        """Whether the transfers carry sparse-payload detail (``nnz``, ``dense``, ``merged``)."""
        return self.nnz is not None

    def chunks_of(self, index: int) -> np.ndarray:
        """Chunks carried by transfer `index` (a read-only array)."""
        piece = self.piece[index]
        return self.piece_chunks[self.piece_offsets[piece] : self.piece_offsets[piece + 1]]

    def deps_of(self, index: int) -> np.ndarray:
        """Dependencies of transfer `index` (a read-only array)."""
        return self.deps[self.dep_offsets[index] : self.dep_offsets[index + 1]]

    def __getitem__(self, index):
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        i = operator.index(index)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(f"transfer index {index} out of range for {len(self)} transfers")
        sparse = self.sparse
        return Transfer(
            int(self.src[i]),
            int(self.dst[i]),
            tuple(self.chunks_of(i).tolist()),
            int(self.nbytes[i]),
            OPS[self.op[i]],
            tuple(self.deps_of(i).tolist()),
            self.stages[self.stage[i]],
            int(self.nnz[i]) if sparse else None,
            bool(self.dense[i]) if sparse else None,
            int(self.merged[i]) if sparse else None,
            buffer_name(int(self.src_buffer[i])),
            buffer_name(int(self.dst_buffer[i])),
            None if self.wire_bytes is None else int(self.wire_bytes[i]),
            0.0 if self.delay_s is None else float(self.delay_s[i]),
            0 if self.channel is None else int(self.channel[i]),
        )

    def __iter__(self) -> Iterator[Transfer]:
        pieces = self.piece_chunks.tolist()
        po = self.piece_offsets.tolist()
        chunks = [tuple(pieces[po[j] : po[j + 1]]) for j in range(len(po) - 1)]
        deps, do = self.deps.tolist(), self.dep_offsets.tolist()
        stages = self.stages
        sparse = self.sparse
        nnz = self.nnz.tolist() if sparse else [None] * len(self)
        dense = self.dense.tolist() if sparse else [None] * len(self)
        merged = self.merged.tolist() if sparse else [None] * len(self)
        wire = self.wire_bytes.tolist() if self.wire_bytes is not None else [None] * len(self)
        delay = self.delay_s.tolist() if self.delay_s is not None else [0.0] * len(self)
        channel = self.channel.tolist() if self.channel is not None else [0] * len(self)
        rows = zip(self.src.tolist(), self.dst.tolist(), self.nbytes.tolist(), self.op.tolist(), self.stage.tolist(),
                   self.piece.tolist(), self.src_buffer.tolist(), self.dst_buffer.tolist(), nnz, dense, merged, wire,
                   delay, channel)
        for i, (src, dst, nbytes, op, stage, piece, sb, db, z, d, m, w, t, k) in enumerate(rows):
            yield Transfer(src, dst, chunks[piece], nbytes, OPS[op], tuple(deps[do[i] : do[i + 1]]), stages[stage],
                           z, d, m, buffer_name(sb), buffer_name(db), w, t, k)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(other) == len(self) and all(a == b for a, b in zip(self, other))

    __hash__ = None

    def __repr__(self) -> str:
        return f"<TransferTable of {len(self)} transfers>"

    @classmethod
    def from_transfers(cls, transfers: Sequence[Transfer]) -> TransferTable:
        """The table of a sequence of :class:`Transfer` (identical pieces are shared)."""
        transfers = list(transfers)
        for index, t in enumerate(transfers):
            if not isinstance(t, Transfer):
                raise ScheduleError(f"must be a Transfer, got {type(t).__name__}", path=f"transfers[{index}]")
            if t.op not in OPS:
                raise ScheduleError(f"transfer {index} ({t.src} -> {t.dst}): op must be one of {OPS}, got {t.op!r}")
            for name, value in (("src_buffer", t.src_buffer), ("dst_buffer", t.dst_buffer)):
                try:
                    buffer_code(value)
                except ScheduleError as error:
                    raise ScheduleError(f"transfer {index} ({t.src} -> {t.dst}): {name} {error.message}") from None
        pieces: dict[tuple[int, ...], int] = {}
        for t in transfers:
            pieces.setdefault(tuple(t.chunks), len(pieces))
        stages = list(dict.fromkeys(t.stage for t in transfers)) or [""]
        stage_code = {label: code for code, label in enumerate(stages)}
        sparse = any(t.nnz is not None for t in transfers)
        wire = any(t.wire_bytes is not None for t in transfers)
        delayed = any(t.delay_s != 0 for t in transfers)
        channels = any(t.channel != 0 for t in transfers)
        lengths = [len(p) for p in pieces]
        return cls(
            src=np.array([t.src for t in transfers], dtype=np.int64),
            dst=np.array([t.dst for t in transfers], dtype=np.int64),
            nbytes=np.array([t.nbytes for t in transfers], dtype=np.int64),
            op=np.array([t.op for t in transfers], dtype=object) if transfers else None,
            piece=np.array([pieces[tuple(t.chunks)] for t in transfers], dtype=np.int64),
            pieces=(np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]),
                    np.array([c for p in pieces for c in p], dtype=np.int64)),
            deps=np.array([d for t in transfers for d in t.deps], dtype=np.int64),
            dep_offsets=np.concatenate([[0], np.cumsum([len(t.deps) for t in transfers], dtype=np.int64)]),
            stage=np.array([stage_code[t.stage] for t in transfers], dtype=np.int64),
            stages=stages,
            src_buffer=np.array([t.src_buffer for t in transfers], dtype=object) if transfers else None,
            dst_buffer=np.array([t.dst_buffer for t in transfers], dtype=object) if transfers else None,
            nnz=[t.nnz or 0 for t in transfers] if sparse else None,
            dense=[bool(t.dense) for t in transfers] if sparse else None,
            merged=[t.merged or 0 for t in transfers] if sparse else None,
            wire_bytes=[t.nbytes if t.wire_bytes is None else t.wire_bytes for t in transfers] if wire else None,
            delay_s=[t.delay_s for t in transfers] if delayed else None,
            channel=[t.channel for t in transfers] if channels else None,
        )

    @property
    def columns(self) -> Columns:
        """The arrays as :class:`Columns` (byte counts as float64, wire bytes where the table has them)."""
        payload = self.nbytes.astype(float)
        nbytes = payload if self.wire_bytes is None else self.wire_bytes.astype(float)
        reduce = self.op != COPY
        delay = np.zeros(len(self)) if self.delay_s is None else self.delay_s
        channel = np.zeros(len(self), dtype=np.int32) if self.channel is None else self.channel
        for array in (nbytes, payload, reduce, delay, channel):
            array.flags.writeable = False
        return Columns(self.src, self.dst, nbytes, reduce, self.dep_offsets, self.deps, delay, payload, channel)

    def replace(self, **arrays) -> TransferTable:
        """A copy with some columns replaced, e.g. ``table.replace(nbytes=..., nnz=..., dense=..., merged=...)``."""
        current = {name: getattr(self, name) for name in _PER_TRANSFER} | {
            "pieces": (self.piece_offsets, self.piece_chunks), "deps": self.deps, "dep_offsets": self.dep_offsets,
            "stages": self.stages,
        }
        unknown = set(arrays) - set(current)
        if unknown:
            raise ScheduleError(f"no column {sorted(unknown)[0]!r}", path="replace")
        return TransferTable(**{**current, **arrays})

    def reordered(self, order: np.ndarray) -> TransferTable:
        """The table with transfer ``order[i]`` as transfer ``i``, every column and dependency moved along (a
        :class:`Schedule` checks that each dependency stays an earlier transfer)."""
        count = len(self)
        place = np.empty(count, dtype=np.int64)
        place[order] = np.arange(count)
        keys = np.sort(place[np.repeat(np.arange(count), np.diff(self.dep_offsets))] * count + place[self.deps])
        dep_offsets = np.zeros(count + 1, dtype=np.int64)
        np.cumsum(np.bincount(keys // count, minlength=count), out=dep_offsets[1:])
        moved = {name: getattr(self, name)[order] for name in _PER_TRANSFER if getattr(self, name) is not None}
        return self.replace(deps=(keys % count).astype(self.deps.dtype), dep_offsets=dep_offsets, **moved)


_PER_TRANSFER = ("src", "dst", "nbytes", "op", "piece", "stage", "src_buffer", "dst_buffer", "nnz", "dense",
                 "merged", "wire_bytes", "delay_s", "channel")
"""The columns of :class:`TransferTable` with one entry per transfer (besides the dependencies)."""


def _int_tuple(values: Any) -> tuple[int, ...]:
    """`values` as a tuple of ints; an integer array's equal values share one int object."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        return shared_ints(values)
    return tuple(int(value) for value in values)


def _first(mask: np.ndarray) -> int | None:
    """Index of the first True of a boolean array (``None`` if none)."""
    hit = int(np.argmax(mask)) if mask.size else 0
    return hit if mask.size and mask[hit] else None


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
        Size of each chunk, bytes; they partition the payload of every rank. For
        ``alltoall`` and ``alltoallv`` each chunk is (a piece of) one *block*: the data
        rank ``owners[c]`` sends to rank ``targets[c]``, so the chunks of all ranks'
        send buffers together partition the payload of the whole communicator.
    transfers : TransferTable or sequence of Transfer
        The messages, each depending only on earlier ones (a sequence is turned into a table).
    algorithm : str
        Name of the algorithm that built the schedule.
    root : int, optional
        Root rank of ``broadcast`` and ``reduce``.
    owners : tuple of int, optional
        Rank owning each chunk: the rank that ends with the reduced chunk in
        ``reduce_scatter`` and that starts with it in ``all_gather``, ``alltoall``
        and ``alltoallv``.
    params : dict
        Parameters the algorithm was built with.
    topk : int, optional
        Entries a ``"reduce_topk"`` transfer keeps (required when one is present).
    switches : tuple of tuple of int, optional
        Rank groups served by in-network reductions: endpoint ``nranks + j`` is the
        reduce-capable switch of group ``j`` (see the module docstring). Transfers may
        name endpoints in ``[0, nranks + len(switches))``.
    targets : tuple of int, optional
        ``alltoall`` and ``alltoallv``: the rank each chunk must end at (in its work
        buffer). Other ranks may hold it on the way (Bruck's algorithm, leaders of
        hierarchical schemes); what they are left with does not matter.
    in_order : bool, optional
        Whether the transfers are numbered in the order the program issues them on
        each connection: a connection with several of them waiting then drains the
        lowest numbered first, as an implementation that posts its sends in that order
        does (and never idles while one waits). By default a connection drains them
        first come, first served: in the order their latencies elapsed. Another schedule
        run at the same time keeps its places in the connection's queue either way.
    """

    collective: str
    nranks: int
    chunk_bytes: tuple[int, ...]
    transfers: TransferTable
    algorithm: str = ""
    root: int | None = None
    owners: tuple[int, ...] | None = None
    params: dict = field(default_factory=dict)
    topk: int | None = None
    switches: tuple[tuple[int, ...], ...] = ()
    targets: tuple[int, ...] | None = None
    in_order: bool = False

    def __post_init__(self) -> None:
        if self.collective not in COLLECTIVES:
            raise ScheduleError(f"collective must be one of {COLLECTIVES}, got {self.collective!r}")
        if not isinstance(self.in_order, bool):
            raise ScheduleError(f"in_order must be True or False, got {self.in_order!r}")
        if not isinstance(self.nranks, int) or self.nranks < 1:
            raise ScheduleError(f"nranks must be an integer ≥ 1, got {self.nranks!r}")
        if self.collective in ("broadcast", "reduce") and not (
            self.root is not None and 0 <= self.root < self.nranks
        ):
            raise ScheduleError(f"{self.collective} needs a root rank in [0, {self.nranks}), got {self.root!r}")
        if self.collective in ("reduce_scatter", "all_gather") and (
            self.owners is None or len(self.owners) != len(self.chunk_bytes)
        ):
            raise ScheduleError(f"{self.collective} needs one owner rank per chunk")
        if self.collective in ALL_TO_ALL:
            for name in ("owners", "targets"):
                ranks = getattr(self, name)
                if ranks is None or len(ranks) != len(self.chunk_bytes):
                    raise ScheduleError(f"{self.collective} needs one {name[:-1]} rank per chunk")
                if not isinstance(ranks, tuple):
                    ranks = _int_tuple(ranks)
                    object.__setattr__(self, name, ranks)
                if ranks and not 0 <= min(ranks) <= max(ranks) < self.nranks:
                    raise ScheduleError(f"{self.collective}: {name} must be ranks in [0, {self.nranks})")
        if not isinstance(self.chunk_bytes, tuple):
            object.__setattr__(self, "chunk_bytes", _int_tuple(self.chunk_bytes))
        if not isinstance(self.transfers, TransferTable):
            object.__setattr__(self, "transfers", TransferTable.from_transfers(self.transfers))
        self._validate_switches()
        self._validate()

    def _validate_switches(self) -> None:
        groups = tuple(tuple(int(r) for r in group) for group in self.switches)
        for j, group in enumerate(groups):
            if not group or len(set(group)) != len(group) or not all(0 <= r < self.nranks for r in group):
                raise ScheduleError(f"switch {j} (endpoint {self.nranks + j}) must serve distinct ranks in "
                                    f"[0, {self.nranks}), got {group!r}", path="switches")
        object.__setattr__(self, "switches", groups)

    @property
    def endpoints(self) -> int:
        """Ranks plus switch endpoints: transfers name endpoints in ``[0, endpoints)``."""
        return self.nranks + len(self.switches)

    def _validate(self) -> None:
        table = self.transfers
        count = len(table)
        if not count:
            return
        nchunks = len(self.chunk_bytes)
        src, dst = table.src, table.dst
        lengths = np.diff(table.piece_offsets)
        chunks = table.piece_chunks
        bad_piece = lengths == 0
        outside = (chunks < 0) | (chunks >= nchunks)
        if outside.any():
            bad_piece[np.repeat(np.arange(len(lengths)), lengths)[outside]] = True
        bad_dep = np.zeros(count, dtype=bool)
        if len(table.deps):
            waits = np.flatnonzero(table.dep_offsets[1:] > table.dep_offsets[:-1])
            heads = table.dep_offsets[waits]
            bad_dep[waits] = ((np.maximum.reduceat(table.deps, heads) >= waits)
                              | (np.minimum.reduceat(table.deps, heads) < 0))
        ends = self.endpoints
        span = f"[0, {self.nranks})" if ends == self.nranks else f"[0, {ends}) (ranks and switch endpoints)"
        switch = (src >= self.nranks) & (table.src_buffer != WORK) | (dst >= self.nranks) & (table.dst_buffer != WORK)
        checks = (
            (~((src >= 0) & (src < ends) & (dst >= 0) & (dst < ends)), lambda i: f"needs two distinct ranks in {span}"),
            ((src == dst) & (table.src_buffer == table.dst_buffer),
             lambda i: f"needs two distinct ranks in {span}, or two buffers of one rank"),
            (switch, lambda i: "uses a buffer other than work at a switch endpoint"),
            (bad_piece[table.piece], lambda i: f"chunks must be in [0, {nchunks}), got "
                                               f"{tuple(table.chunks_of(i).tolist())}"),
            (table.dst_buffer == INPUT, lambda i: "writes the input buffer, which is read-only"),
            (table.nbytes < 0, lambda i: f"nbytes must be ≥ 0, got {table.nbytes[i]}"),
            (bad_dep, lambda i: f"dependencies must be earlier transfers, got {tuple(table.deps_of(i).tolist())}"),
            ((table.op == REDUCE_TOPK) & (self.topk is None),
             lambda i: "is a reduce_topk but the schedule has no topk"),
        )
        for mask, message in checks:
            i = _first(mask)
            if i is not None:
                raise ScheduleError(f"transfer {i} ({src[i]} -> {dst[i]}): {message(i)}")

    @property
    def size_bytes(self) -> int:
        """Payload size per rank, bytes (all-to-all: the mean send buffer, all blocks over the ranks, rounded down)."""
        if self.collective in ALL_TO_ALL:
            return sum(self.chunk_bytes) // self.nranks
        return sum(self.chunk_bytes)

    @property
    def total_bytes(self) -> int:
        """Bytes on the wire summed over all transfers."""
        return int(self.transfers.nbytes.sum())

    def __len__(self) -> int:
        return len(self.transfers)

    @cached_property
    def columns(self) -> Columns:
        """The transfers as :class:`Columns` (read-only arrays), for the engine and the models."""
        return self.transfers.columns

    def replace(self, **changes: Any) -> Schedule:
        """A copy with fields changed (``transfers`` may be a table or a sequence of :class:`Transfer`)."""
        values = {name: getattr(self, name) for name in self.__dataclass_fields__}
        return Schedule(**{**values, **changes})


def split_bytes(size_bytes: int, parts: int) -> list[int]:
    """Split `size_bytes` into `parts` whole-byte pieces differing by at most one.

    The first ``size_bytes % parts`` pieces get the extra byte.

    >>> split_bytes(10, 4)
    [3, 3, 2, 2]
    """
    base, extra = divmod(size_bytes, parts)
    return [base + 1 if i < extra else base for i in range(parts)]


class Semantics(Protocol):
    """What the values in the buffers are and how transfers combine them (see :func:`execute`).

    ``where`` is ``(transfer, rank, chunk)`` of the destination, for error messages.
    """

    def initial(self, rank: int, chunk: int) -> Any:
        """The rank's own contribution to `chunk` (its input)."""

    def read(self, value: Any, chunk: int) -> Any:
        """The value a transfer sends, from the value its source holds."""

    def reduce(self, held: Any, sent: Any, chunk: int, where: tuple[int, int, int]) -> Any:
        """The destination's value after adding `sent` into `held`."""

    def select(self, value: Any, k: int, chunk: int) -> Any:
        """`value` reduced to its `k` entries of largest magnitude."""

    def drop(self, value: Any) -> Any:
        """A stand-in for a value that nothing reads again (frees memory; may return `value`)."""


def _parents(table: TransferTable) -> list[list[int]]:
    """Each transfer's dependencies as a Python list, for walks that visit them many times."""
    deps, offsets = table.deps.tolist(), table.dep_offsets.tolist()
    return [deps[offsets[t] : offsets[t + 1]] for t in range(len(table))]


def _depends_on(parents: list[list[int]], later: int, earlier: int) -> bool:
    """Whether transfer `later` (transitively) depends on transfer `earlier` (`parents`: :func:`_parents`).

    Depth first, taking each transfer's dependencies in their listed order (increasing in the builders'
    schedules), so the walk heads for the oldest ones, toward `earlier` (``benchmarks/check.py`` times
    the race check of registry schedules).
    """
    stack, seen = [later], {later}
    while stack:
        for d in reversed(parents[stack.pop()]):
            if d == earlier:
                return True
            if d > earlier and d not in seen:
                seen.add(d)
                stack.append(d)
    return False


def _exchange_partners(table: TransferTable, parents: list[list[int]] | None = None) -> dict[int, int]:
    """Map each transfer of a pairwise exchange to its partner (both directions)."""
    waiting: dict[tuple, list[int]] = {}
    partners: dict[int, int] = {}
    rows = zip(table.src.tolist(), table.dst.tolist(), table.piece.tolist(), table.src_buffer.tolist(),
               table.dst_buffer.tolist())
    for index, (src, dst, piece, sb, db) in enumerate(rows):
        if sb != db:
            continue
        earlier = waiting.get((dst, src, piece, sb))
        match = None
        if earlier:
            parents = _parents(table) if parents is None else parents
            match = next((i for i in earlier if not _depends_on(parents, index, i)), None)
        if match is None:
            waiting.setdefault((src, dst, piece, sb), []).append(index)
        else:
            earlier.remove(match)
            partners[index], partners[match] = match, index
    return partners


def _cells(table: TransferTable):
    """Per transfer: source rank and buffer, destination rank and buffer, op, and its chunks as a list."""
    pieces = table.piece_chunks.tolist()
    po = table.piece_offsets.tolist()
    chunks = [pieces[po[j] : po[j + 1]] for j in range(len(po) - 1)]
    return zip(table.src.tolist(), table.src_buffer.tolist(), table.dst.tolist(), table.dst_buffer.tolist(),
               table.op.tolist(), (chunks[p] for p in table.piece.tolist()))


def _check_races(table: TransferTable, partners: dict[int, int], parents: list[list[int]]) -> None:
    readers: dict[tuple[int, int, int], list[int]] = {}
    writers: dict[tuple[int, int, int], list[int]] = {}
    ops = table.op
    for index, (src, sb, dst, db, _, chunks) in enumerate(_cells(table)):
        for c in chunks:
            if sb != INPUT:
                readers.setdefault((src, sb, c), []).append(index)
            writers.setdefault((dst, db, c), []).append(index)

    def ordered(a: int, b: int) -> bool:
        return a == b or _depends_on(parents, max(a, b), min(a, b))

    for (rank, buffer, chunk), writes in writers.items():
        where = f"rank {rank}, chunk {chunk}" + ("" if buffer == WORK else f" ({buffer_name(buffer)} buffer)")
        for w_i, w in enumerate(writes):
            for other in writes[w_i + 1 :]:
                commute = ops[w] == ops[other] == REDUCE
                if not commute and not ordered(w, other):
                    raise ScheduleError(
                        f"{where}: transfers {w} and {other} both write it with no dependency between them"
                    )
            for r in readers.get((rank, buffer, chunk), []):
                if partners.get(r) != w and not ordered(r, w):
                    raise ScheduleError(
                        f"{where}: transfer {r} reads it while transfer {w} writes it, with no dependency between them"
                    )


def _initial_holds(collective: str, rank: int, chunk: int, root: int | None, owners) -> bool:
    """Whether `rank`'s work buffer starts with its contribution to `chunk`."""
    if collective == "all_gather" or collective in ALL_TO_ALL:
        return owners[chunk] == rank
    if collective == "broadcast":
        return rank == root
    return True


def _liveness(table: TransferTable, partners: dict[int, int]) -> tuple[list[list[bool]], list[list[bool]]]:
    """Per transfer and chunk: whether the value it reads, and the value it writes, are read again later.

    A backward walk over the cells (rank, buffer, chunk): a read needs the value; a
    copy does not need what it overwrites, a reduction needs it exactly when its
    result is needed; the first transfer of a pairwise exchange reads its
    destination for its partner before writing it.
    """
    needed: dict[tuple[int, int, int], bool] = {}
    rows = list(_cells(table))
    after_read: list[list[bool]] = [[] for _ in rows]
    after_write: list[list[bool]] = [[] for _ in rows]
    for index in range(len(rows) - 1, -1, -1):
        src, sb, dst, db, op, chunks = rows[index]
        partner = partners.get(index, index)
        for c in chunks:
            cell = (dst, db, c)
            after_write[index].append(needed.get(cell, False))
            if op == COPY:
                needed[cell] = False
            if partner > index:
                needed[cell] = True
        if partner >= index and sb != INPUT:
            for c in chunks:
                cell = (src, sb, c)
                after_read[index].append(needed.get(cell, False))
                needed[cell] = True
    return after_read, after_write


def execute(
    schedule: Schedule, semantics: Semantics, *, keep_final: bool = True, on_send=None
) -> list[list[list[Any]]]:
    """Run `schedule` on the values of `semantics`, in transfer order (pairwise exchanges read first).

    Parameters
    ----------
    schedule : Schedule
        The schedule.
    semantics : Semantics
        What a value is and how transfers combine values.
    keep_final : bool, optional
        Keep what the buffers end with (``False``: values nothing reads again are
        dropped as soon as possible, to save memory).
    on_send : callable, optional
        Called as ``on_send(transfer, chunk, value)`` with every value a transfer sends.

    Returns
    -------
    list
        ``state[buffer][rank][chunk]``: what each buffer of each endpoint (ranks,
        then switch endpoints) ends with (``None`` for nothing), buffers by code
        (:data:`BUFFERS`, then the further scratch buffers the schedule uses).

    Raises
    ------
    ScheduleError
        When a transfer sends, or adds into, a buffer that holds nothing yet, or
        when `semantics` refuses a combination (e.g. double counting).
    """
    table = schedule.transfers
    nchunks = len(schedule.chunk_bytes)
    partners = _exchange_partners(table)
    empty = [[None] * nchunks for _ in schedule.switches]
    initial = [[semantics.initial(r, c) for c in range(nchunks)] for r in range(schedule.nranks)]
    nbuffers = max(SCRATCH, int(table.src_buffer.max(initial=0)), int(table.dst_buffer.max(initial=0))) + 1
    state = [
        [[initial[r][c] if _initial_holds(schedule.collective, r, c, schedule.root, schedule.owners) else None
          for c in range(nchunks)] for r in range(schedule.nranks)] + empty,
        initial + [list(row) for row in empty],
        *([[None] * nchunks for _ in range(schedule.endpoints)] for _ in range(SCRATCH, nbuffers)),
    ]
    if schedule.collective == "all_gather" or schedule.collective in ALL_TO_ALL:
        state[INPUT] = [[initial[r][c] if schedule.owners[c] == r else None for c in range(nchunks)]
                        for r in range(schedule.nranks)] + empty
    elif schedule.collective == "broadcast":
        state[INPUT] = [[initial[r][c] if r == schedule.root else None for c in range(nchunks)]
                        for r in range(schedule.nranks)] + empty
    after_read, after_write = _liveness(table, partners) if not keep_final else (None, None)
    nranks = schedule.nranks
    before: dict[tuple[int, int], Any] = {}
    k = schedule.topk
    for index, (src, sb, dst, db, op, chunks) in enumerate(_cells(table)):
        partner = partners.get(index, index)
        source, target = state[sb][src], state[db][dst]
        for position, c in enumerate(chunks):
            if partner > index:
                before[(index, c)] = target[c]
            sent = before.pop((partner, c)) if partner < index else source[c]
            if sent is None:
                raise ScheduleError(
                    f"rank {src}, chunk {c}: transfer {index} sends it before the rank holds any data of it"
                )
            sent = semantics.read(sent, c)
            if sb != INPUT and partner >= index:
                source[c] = sent if after_read is None or after_read[index][position] else semantics.drop(sent)
            if on_send is not None:
                on_send(index, c, sent)
            if op == COPY or (dst >= nranks and target[c] is None):
                value = sent
            else:
                held = target[c]
                if held is None:
                    raise ScheduleError(
                        f"rank {dst}, chunk {c}: transfer {index} reduces into it before the rank holds any data of it"
                    )
                value = semantics.reduce(held, sent, c, (index, dst, c))
                if op == REDUCE_TOPK:
                    value = semantics.select(value, k, c)
            if after_write is not None and not after_write[index][position]:
                value = semantics.drop(value)
            target[c] = value
    return state


class _Lossy(NamedTuple):
    """A value that involves a top-k selection: the ranks it sums and its expression.

    ``terms`` is the sum as a set of addends, each a rank's own contribution
    ``("r", rank)`` or a selection ``("s", ident)``; two values are the same
    computation exactly when their terms are equal.
    """

    mask: int
    terms: frozenset


class _Contributions:
    """Values are sets of contributing ranks (bitmasks); sums involving a top-k selection are :class:`_Lossy`."""

    def __init__(self) -> None:
        self._selections: dict[tuple, int] = {}

    def initial(self, rank: int, chunk: int) -> int:
        return 1 << rank

    def read(self, value, chunk: int):
        return value

    @staticmethod
    def mask(value) -> int:
        return value.mask if isinstance(value, _Lossy) else value

    @staticmethod
    def terms(value) -> frozenset:
        if isinstance(value, _Lossy):
            return value.terms
        return frozenset(("r", r) for r in range(value.bit_length()) if value >> r & 1)

    def reduce(self, held, sent, chunk: int, where: tuple[int, int, int]):
        overlap = self.mask(held) & self.mask(sent)
        if overlap:
            transfer, rank, c = where
            raise ScheduleError(
                f"rank {rank}, chunk {c}: transfer {transfer} counts the contributions of ranks {_ranks(overlap)} twice"
            )
        if isinstance(held, _Lossy) or isinstance(sent, _Lossy):
            return _Lossy(self.mask(held) | self.mask(sent), self.terms(held) | self.terms(sent))
        return held | sent

    def select(self, value, k: int, chunk: int):
        ident = self._selections.setdefault((chunk, self.terms(value)), len(self._selections))
        return _Lossy(self.mask(value), frozenset({("s", ident)}))

    def drop(self, value):
        return value


class _Numeric:
    """Values are int64 arrays, one entry per byte of the chunk; top-k keeps the largest magnitudes."""

    def __init__(self, schedule: Schedule, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.payload = [
            [rng.integers(-1000, 1000, size=schedule.chunk_bytes[c], dtype=np.int64)
             for c in range(len(schedule.chunk_bytes))]
            for _ in range(schedule.nranks)
        ]

    def initial(self, rank: int, chunk: int) -> np.ndarray:
        return self.payload[rank][chunk]

    def read(self, value, chunk: int):
        return value

    def reduce(self, held, sent, chunk: int, where):
        return held + sent

    def select(self, value, k: int, chunk: int):
        if np.count_nonzero(value) <= k:
            return value
        order = np.lexsort((np.arange(len(value)), -np.abs(value)))
        kept = np.zeros_like(value)
        kept[order[:k]] = value[order[:k]]
        return kept

    def drop(self, value):
        return value


def _ranks(mask: int | None) -> str:
    if mask is None:
        return "nothing"
    members = [i for i in range(mask.bit_length()) if mask >> i & 1]
    return "{" + ", ".join(map(str, members)) + "}"


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
        case "alltoall" | "alltoallv":
            return 1 << schedule.owners[chunk] if schedule.targets[chunk] == rank else None
        case _:
            return everyone if rank == schedule.root else None


def check(schedule: Schedule, *, numeric: bool = False, seed: int = 0) -> None:
    """Prove that `schedule` computes its collective; raise if it does not.

    A schedule with ``"reduce_topk"`` transfers (a global top-k, lossy by design)
    must leave, wherever the collective puts a result, one and the same top-k
    selection that sums every required rank's contribution exactly once.

    Parameters
    ----------
    schedule : Schedule
        The schedule to check.
    numeric : bool, optional
        Also execute the schedule on random integer payloads (one ``int64`` per byte
        of each chunk) and compare every rank's result with :func:`numpy.sum` of the
        contributions it must hold (for top-k schedules: that the results agree and
        keep at most ``topk`` entries). Use it for payloads up to a few MiB.
    seed : int, optional
        Seed of the numeric payloads.

    Raises
    ------
    ScheduleError
        Naming the first rank and chunk that is wrong, e.g.
        ``"rank 3, chunk 5: holds contributions of {0, 1, 2}, expected all 8 ranks"``.
    """
    expect_instance(schedule, Schedule, "schedule", error=ScheduleError)
    table = schedule.transfers
    parents = _parents(table)
    partners = _exchange_partners(table, parents)
    _check_races(table, partners, parents)
    del parents
    state = execute(schedule, _Contributions())[WORK]
    everyone = (1 << schedule.nranks) - 1
    lossy = bool((table.op == REDUCE_TOPK).any())
    selections: dict[int, tuple] = {}
    for rank in range(schedule.nranks):
        for c in range(len(schedule.chunk_bytes)):
            expected = _expected(schedule, rank, c)
            value = state[rank][c]
            if expected is None:
                continue
            held = _Contributions.mask(value) if value is not None else None
            if held != expected:
                wanted = f"all {schedule.nranks} ranks" if expected == everyone else _ranks(expected)
                raise ScheduleError(f"rank {rank}, chunk {c}: holds contributions of {_ranks(held)}, expected {wanted}")
            if lossy:
                if not isinstance(value, _Lossy) or len(value.terms) != 1 or next(iter(value.terms))[0] != "s":
                    raise ScheduleError(f"rank {rank}, chunk {c}: holds a sum that is not a top-{schedule.topk} "
                                        "selection")
                first = selections.setdefault(c, (rank, value.terms))
                if first[1] != value.terms:
                    raise ScheduleError(f"rank {rank}, chunk {c}: holds another top-{schedule.topk} selection "
                                        f"than rank {first[0]}")
    if numeric:
        _check_numeric(schedule, seed, lossy)


def _check_numeric(schedule: Schedule, seed: int, lossy: bool) -> None:
    semantics = _Numeric(schedule, seed)
    state = execute(schedule, semantics)[WORK]
    reference: dict[int, np.ndarray] = {}
    for rank in range(schedule.nranks):
        for c in range(len(schedule.chunk_bytes)):
            expected = _expected(schedule, rank, c)
            if expected is None:
                continue
            held = state[rank][c]
            if lossy:
                first = reference.setdefault(c, held)
                if np.count_nonzero(held) > schedule.topk or not np.array_equal(held, first):
                    raise ScheduleError(f"rank {rank}, chunk {c}: numeric result differs from the other ranks' "
                                        f"top-{schedule.topk} selection")
                continue
            contributors = [i for i in range(schedule.nranks) if expected >> i & 1]
            want = np.sum([semantics.payload[i][c] for i in contributors], axis=0)
            if held is None or not np.array_equal(held, want):
                raise ScheduleError(f"rank {rank}, chunk {c}: numeric result differs from np.sum")
