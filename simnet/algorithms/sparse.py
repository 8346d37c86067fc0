"""Sparse (top-k) all-reduce algorithms whose message sizes come from real index sets.

Every builder takes ``(nranks, size_bytes, *, payload, ...)`` like
:func:`simnet.algorithms.dense.ring_allreduce`, where ``payload`` is a
:class:`simnet.payloads.SparsePayload` and ``size_bytes`` must equal its dense size
``dimension * value_bytes`` (so that sparse and dense runs of one gradient compare
on the same ``size``). The builder first lays out the messages (who sends which
index ranges to whom, after what), then *executes* them on the ranks' actual
sparse vectors: each message's nonzeros are the sorted union of the index sets it
sums, so fill-in is measured, not assumed, and the message is encoded sparse or
dense, whichever is smaller (:meth:`~simnet.payloads.SparsePayload.encoded_bytes`).
Each :class:`~simnet.schedule.Transfer` records ``nbytes`` (the encoded size),
``nnz``, ``dense`` and ``merged`` (how many ranks' vectors it sums).

Chunks are index ranges: ``Schedule.chunk_bytes[c]`` is the dense size of range
``c`` (its entries times ``value_bytes``), so ``schedule.size_bytes`` is the dense
size of the gradient.

Execution semantics (:func:`execute`): a message carries its source's contents as
they stand once its dependencies have finished, and is added into (``reduce``) or
overwrites (``copy``) its destination on arrival. Messages are executed in waves
of equal dependency depth; every wave's messages read before any of them writes,
which is what the exchange steps of recursive doubling and of the all-gather of
top-k vectors need (both partners send before either adds). Ranks are numbered
node-major (rank ``= node * gpus_per_node + local``), as simnet's builders number
GPUs.

Algorithms (``SPARSE_ALGORITHMS``): ``topk_allgather``,
``ssar_recursive_doubling``, ``ssar_split_allgather``, ``dsar_split_allgather``,
``gtopk`` (lossy by design), ``sparse_ring`` and the topology-aware
``sparse_ring_ring``.

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

import weakref
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from simnet.errors import ScheduleError
from simnet.payloads import SparsePayload, SparseVector
from simnet.schedule import Schedule, Transfer, split_bytes

__all__ = [
    "SPARSE_ALGORITHMS",
    "Execution",
    "execute",
    "topk_allgather",
    "ssar_recursive_doubling",
    "ssar_split_allgather",
    "dsar_split_allgather",
    "gtopk",
    "sparse_ring",
    "sparse_ring_ring",
]


@dataclass(frozen=True, slots=True)
class _Send:
    src: int
    dst: int
    chunks: tuple[int, ...]
    op: str
    deps: tuple[int, ...]
    stage: str
    dense: bool | None = None
    own: bool = False


@dataclass(eq=False)
class _Part:
    """Contents of one chunk: the ranks it sums (a bitmask) and its nonzeros."""

    key: int
    indices: np.ndarray
    values: np.ndarray | None


class _Plan:
    """Messages laid out in order; dependencies follow from buffer reads and writes.

    ``deps`` replaces the derived dependencies (exchanges), ``after`` adds to them
    (rounds of a pairwise exchange); an ``own`` message carries the sender's own
    vector rather than its buffer (the all-gather of top-k vectors).

    A read of ``(rank, chunk)`` waits for the writes that produced it; a write waits
    for the earlier reads and writes of the buffer, except that reductions into the
    same buffer with no read in between may proceed in any order (as in
    :func:`simnet.schedule.check`) unless the send is ``ordered`` (gTop-k's
    selection after each addition does not commute).
    """

    def __init__(self) -> None:
        self.sends: list[_Send] = []
        self._writes: dict[tuple[int, int], list[int]] = {}
        self._write_op: dict[tuple[int, int], str] = {}
        self._reads: dict[tuple[int, int], list[int]] = {}

    def send(
        self,
        src: int,
        dst: int,
        chunks: tuple[int, ...],
        op: str,
        stage: str,
        *,
        dense: bool | None = None,
        deps: tuple[int, ...] | None = None,
        after: tuple[int, ...] = (),
        ordered: bool = False,
        own: bool = False,
    ) -> int:
        index = len(self.sends)
        found: set[int] = set()
        joins = []
        for c in chunks:
            found.update(self._writes.get((src, c), ()))
            target = (dst, c)
            found.update(self._reads.get(target, ()))
            joining = (
                not ordered
                and op == "reduce"
                and self._write_op.get(target) == "reduce"
                and not self._reads.get(target)
            )
            if not joining:
                found.update(self._writes.get(target, ()))
            joins.append(joining)
        for c, joining in zip(chunks, joins):
            self._reads.setdefault((src, c), []).append(index)
            target = (dst, c)
            if joining:
                self._writes[target].append(index)
            else:
                self._writes[target] = [index]
                self._write_op[target] = op
                self._reads[target] = []
        chosen = tuple(sorted(found | set(after))) if deps is None else tuple(sorted(deps))
        self.sends.append(_Send(src, dst, tuple(chunks), op, chosen, stage, dense, own))
        return index

    def pairwise(self, nranks: int, send) -> None:
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

    def ring_reduce_scatter(self, ring: list[int], segments: list[tuple[int, ...]], stage: str) -> None:
        """Ring reduce-scatter: afterwards ``ring[i]`` holds segment ``(i + 1) % q`` reduced."""
        q = len(ring)
        for step in range(q - 1):
            for pos, rank in enumerate(ring):
                self.send(rank, ring[(pos + 1) % q], segments[(pos - step) % q], "reduce", stage)

    def ring_all_gather(
        self, ring: list[int], segments: list[tuple[int, ...]], stage: str, *, dense: bool | None = None
    ) -> None:
        """Ring all-gather starting from ``ring[i]`` holding segment ``(i + 1) % q``."""
        q = len(ring)
        for step in range(q - 1):
            for pos, rank in enumerate(ring):
                segment = segments[(pos + 1 - step) % q]
                self.send(rank, ring[(pos + 1) % q], segment, "copy", stage, dense=dense)


@dataclass(frozen=True)
class Execution:
    """Outcome of executing sparse messages on real vectors.

    Attributes
    ----------
    nnz, merged : tuple of int
        Per message: nonzeros carried and ranks whose vectors it sums.
    final : list of list of tuple
        Per rank and chunk, the parts the buffer ends with (see :meth:`result`).
    bounds : numpy.ndarray
        Chunk boundaries, ``chunk c`` covers indices ``bounds[c] .. bounds[c+1]-1``.
    """

    nnz: tuple[int, ...]
    merged: tuple[int, ...]
    final: list
    bounds: np.ndarray
    _merge: object = field(repr=False)

    def result(self, rank: int) -> SparseVector:
        """The vector rank `rank` ends with, all chunks concatenated."""
        parts = [self._merge(state, c) for c, state in enumerate(self.final[rank])]
        indices = np.concatenate([p.indices for p in parts])
        values = None if parts[0].values is None else np.concatenate([p.values for p in parts])
        return SparseVector(indices, values)

    def contributors(self, rank: int) -> list[int]:
        """Bitmask of the ranks whose vectors rank `rank` holds, per chunk."""
        masks = []
        for state in self.final[rank]:
            key = 0
            for part in state:
                key |= part.key
            masks.append(key)
        return masks


def _union(parts: list[_Part], key: int) -> _Part:
    indices = np.concatenate([p.indices for p in parts])
    if parts[0].values is None:
        indices = np.sort(indices, kind="stable")
        keep = np.empty(indices.size, dtype=bool)
        keep[:1] = True
        np.not_equal(indices[1:], indices[:-1], out=keep[1:])
        return _Part(key, indices[keep], None)
    order = np.argsort(indices, kind="stable")
    indices = indices[order]
    values = np.concatenate([p.values for p in parts])[order]
    starts = np.flatnonzero(np.concatenate(([True], indices[1:] != indices[:-1]))) if indices.size else order[:0]
    return _Part(key, indices[starts], np.add.reduceat(values, starts) if indices.size else values)


_EMPTY = np.empty(0, dtype=np.uint32)


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


def _waves(sends: list) -> list[list[int]]:
    level: list[int] = []
    for s in sends:
        level.append(1 + max((level[d] for d in s.deps), default=-1))
    waves: list[list[int]] = [[] for _ in range(max(level, default=-1) + 1)]
    for i, depth in enumerate(level):
        waves[depth].append(i)
    return waves


def _liveness(sends: list, waves: list[list[int]], keep_final: bool) -> tuple[dict, dict]:
    """Whether a buffer's contents are still needed after each read and each write of it.

    Walking backwards, a buffer is needed before a read, not before a copy into it,
    and before a reduction into it exactly when it is needed after (the sum carries
    it). Contents nobody needs are dropped to keep memory to what is live.
    """
    events: dict[tuple[int, int], list[tuple[str, int]]] = {}
    for wave in waves:
        for i in wave:
            if not sends[i].own:
                for c in sends[i].chunks:
                    events.setdefault((sends[i].src, c), []).append(("read", i))
        for i in wave:
            for c in sends[i].chunks:
                events.setdefault((sends[i].dst, c), []).append((sends[i].op, i))
    after_read: dict[tuple[int, int], bool] = {}
    after_write: dict[tuple[int, int], bool] = {}
    for (_, c), history in events.items():
        needed = keep_final
        for kind, i in reversed(history):
            if kind == "read":
                after_read[(i, c)] = needed
                needed = True
            else:
                after_write[(i, c)] = needed
                needed = needed and kind == "reduce"
    return after_read, after_write


def _keys(parts: tuple[_Part, ...]) -> int:
    key = 0
    for p in parts:
        key |= p.key
    return key


def _run(
    sends: list,
    nranks: int,
    bounds: np.ndarray,
    vectors: list[SparseVector],
    *,
    select_k: int | None = None,
    keep_final: bool = True,
) -> Execution:
    nchunks = len(bounds) - 1
    cache: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
    state: list[list[tuple[_Part, ...]]] = []
    for rank, vector in enumerate(vectors):
        cuts = np.searchsorted(vector.indices, bounds)
        state.append(
            [
                (
                    _Part(
                        1 << rank,
                        vector.indices[cuts[c] : cuts[c + 1]],
                        None if vector.values is None else vector.values[cuts[c] : cuts[c + 1]],
                    ),
                )
                for c in range(nchunks)
            ]
        )
    originals = [[parts[0] for parts in row] for row in state]

    def merge(parts: tuple[_Part, ...], chunk: int) -> _Part:
        if len(parts) == 1:
            return parts[0]
        key = _keys(parts)
        if select_k is None:
            found = cache.get((chunk, key))
            if found is not None:
                return found
        merged = _union(list(parts), key)
        if select_k is None:
            cache[(chunk, key)] = merged
        return merged

    def dropped(parts: tuple[_Part, ...]) -> tuple[_Part, ...]:
        return (_Part(_keys(parts), _EMPTY, None),)

    nnz = [0] * len(sends)
    merged_count = [0] * len(sends)
    waves = _waves(sends)
    after_read, after_write = _liveness(sends, waves, keep_final)
    for wave in waves:
        payloads = {}
        for i in wave:
            s = sends[i]
            parts = []
            for c in s.chunks:
                if s.own:
                    parts.append(originals[s.src][c])
                    continue
                part = merge(state[s.src][c], c)
                state[s.src][c] = (part,) if after_read[(i, c)] else dropped((part,))
                parts.append(part)
            payloads[i] = parts
            nnz[i] = sum(p.indices.size for p in parts)
            merged_count[i] = max(p.key.bit_count() for p in parts)
        for i in wave:
            s = sends[i]
            for c, part in zip(s.chunks, payloads[i]):
                if s.op == "copy":
                    held = (part,)
                else:
                    overlap = _keys(state[s.dst][c]) & part.key
                    if overlap:
                        twice = [r for r in range(nranks) if overlap >> r & 1]
                        raise ScheduleError(
                            f"rank {s.dst}, chunk {c}: transfer {i} counts the contributions of ranks {twice} twice"
                        )
                    held = state[s.dst][c] + (part,)
                    if select_k is not None and after_write[(i, c)]:
                        held = (_top_k(merge(held, c), select_k),)
                state[s.dst][c] = held if after_write[(i, c)] else dropped(held)
    return Execution(tuple(nnz), tuple(merged_count), state, bounds, merge)


def _bounds(schedule: Schedule, payload: SparsePayload) -> np.ndarray:
    entries = [b // payload.value_bytes for b in schedule.chunk_bytes]
    return np.concatenate(([0], np.cumsum(entries))).astype(np.int64)


def execute(schedule: Schedule, payload: SparsePayload, *, values: bool = True) -> Execution:
    """Execute a sparse schedule on `payload`'s vectors (see the module's semantics).

    Parameters
    ----------
    schedule : Schedule
        A schedule built by one of this module's builders (its chunks are index
        ranges of ``chunk_bytes / value_bytes`` entries).
    payload : SparsePayload
        The ranks' vectors.
    values : bool, optional
        Carry values too (needed for :meth:`Execution.result` values and for
        ``gtopk``, whose selection depends on them).

    Returns
    -------
    Execution

    Raises
    ------
    ScheduleError
        If a message would count a rank's contribution twice.
    """
    own = bool(schedule.params.get("sends_own"))
    sends = [_Send(t.src, t.dst, t.chunks, t.op, t.deps, t.stage, own=own) for t in schedule.transfers]
    select_k = schedule.params.get("select_k")
    vectors = [payload.vector(r, values=values or select_k is not None) for r in range(schedule.nranks)]
    return _run(sends, schedule.nranks, _bounds(schedule, payload), vectors, select_k=select_k)


def _check(nranks: int, size_bytes: int, payload: SparsePayload) -> None:
    if not isinstance(nranks, int) or isinstance(nranks, bool) or nranks < 2:
        raise ScheduleError(f"must be an integer ≥ 2, got {nranks!r}", path="ranks")
    if not isinstance(payload, SparsePayload):
        raise ScheduleError(f"must be a SparsePayload, got {type(payload).__name__}", path="payload")
    if size_bytes != payload.size_bytes:
        raise ScheduleError(
            f"must be the payload's dense size dimension * value_bytes = {payload.size_bytes} B, "
            f"got {size_bytes!r}",
            path="size",
        )


def _entry_bounds(dimension: int, parts: int) -> np.ndarray:
    return np.concatenate(([0], np.cumsum(split_bytes(dimension, parts)))).astype(np.int64)


def _finish(
    name: str,
    nranks: int,
    payload: SparsePayload,
    plan: _Plan,
    bounds: np.ndarray,
    *,
    select_k: int | None = None,
    params: dict | None = None,
) -> Schedule:
    vectors = [payload.vector(r, values=select_k is not None) for r in range(nranks)]
    run = _run(plan.sends, nranks, bounds, vectors, select_k=select_k, keep_final=False)
    entries = np.diff(bounds)
    transfers = []
    for i, s in enumerate(plan.sends):
        carried = int(sum(entries[c] for c in s.chunks))
        nbytes, dense = payload.encoded_bytes(run.nnz[i], carried, dense=s.dense)
        transfers.append(
            Transfer(
                src=s.src,
                dst=s.dst,
                chunks=s.chunks,
                nbytes=nbytes,
                op=s.op,
                deps=s.deps,
                stage=s.stage,
                nnz=run.nnz[i],
                dense=dense,
                merged=run.merged[i],
            )
        )
    everyone = (1 << nranks) - 1
    for rank in range(nranks):
        for c, mask in enumerate(run.contributors(rank)):
            if mask != everyone:
                raise ScheduleError(f"{name}: rank {rank}, chunk {c} does not end with all {nranks} contributions")
    return Schedule(
        collective="allreduce",
        nranks=nranks,
        chunk_bytes=tuple(int(e) * payload.value_bytes for e in entries),
        transfers=tuple(transfers),
        algorithm=name,
        params={"payload": payload.describe(), **(params or {}), **({"select_k": select_k} if select_k else {})},
    )


_PARAMETERS = """nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Dense size ``N * value_bytes``, bytes (must equal ``payload.size_bytes``).
    payload : SparsePayload
        The ranks' sparse vectors and their encoding."""


def _documented(builder):
    """Fill the shared ``{parameters}`` block of a builder's docstring."""
    builder.__doc__ = builder.__doc__.replace("{parameters}", _PARAMETERS)
    return builder


@_documented
def topk_allgather(nranks: int, size_bytes: int, *, payload: SparsePayload) -> Schedule:
    """All-gather of every rank's top-k (index, value) pairs, summed locally.

    Every rank sends its own k-sparse vector directly to each other rank (in
    ``p - 1`` rounds, round ``s`` sending ``r -> r + s``), so every message holds
    exactly one rank's nonzeros; the fill-in happens only in the local sum.
    One chunk: the whole index space.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    Schedule
        ``p (p - 1)`` transfers, stage ``"all_gather"``.
    """
    _check(nranks, size_bytes, payload)
    plan = _Plan()
    plan.pairwise(
        nranks, lambda rank, peer, after: plan.send(rank, peer, (0,), "reduce", "all_gather", deps=after, own=True)
    )
    return _finish(
        "topk_allgather", nranks, payload, plan, _entry_bounds(payload.dimension, 1), params={"sends_own": True}
    )


def ssar_recursive_doubling(nranks: int, size_bytes: int, *, payload: SparsePayload) -> Schedule:
    """SparCML's SSAR_Recursive_double: ``log2 p`` pairwise exchanges of whole vectors.

    In step ``i`` rank ``r`` and ``r XOR 2^i`` swap their current sums and add them,
    so messages of step ``i`` carry the union of ``2^i`` vectors and switch to the
    dense form once that is smaller. Both messages of an exchange wait for both
    partners to finish step ``i - 1``.

    Parameters
    ----------
    nranks : int
        Ranks ``p``, a power of two ≥ 2.
    size_bytes : int
        Dense size ``N * value_bytes``, bytes.
    payload : SparsePayload
        The ranks' sparse vectors.

    Returns
    -------
    Schedule
        ``p log2 p`` transfers, stage ``"exchange"``.

    References
    ----------
    Renggli et al. (2019), SparCML, Sec. 4 (SSAR_Recursive_double).
    """
    _check(nranks, size_bytes, payload)
    if nranks & (nranks - 1):
        raise ScheduleError(f"recursive doubling needs a power of two, got {nranks}", path="ranks")
    plan = _Plan()
    arrived: dict[int, int] = {}
    distance = 1
    while distance < nranks:
        incoming = {}
        for rank in range(nranks):
            partner = rank ^ distance
            deps = tuple(arrived[r] for r in (rank, partner) if r in arrived)
            incoming[partner] = plan.send(rank, partner, (0,), "reduce", "exchange", deps=deps)
        arrived = incoming
        distance *= 2
    return _finish("ssar_recursive_doubling", nranks, payload, plan, _entry_bounds(payload.dimension, 1))


def _split_allgather(name: str, nranks: int, size_bytes: int, payload: SparsePayload, dense: bool | None) -> Schedule:
    _check(nranks, size_bytes, payload)
    plan = _Plan()
    plan.pairwise(
        nranks, lambda rank, owner, after: plan.send(rank, owner, (owner,), "reduce", "reduce_scatter", after=after)
    )
    plan.pairwise(
        nranks,
        lambda owner, peer, after: plan.send(owner, peer, (owner,), "copy", "all_gather", dense=dense, after=after),
    )
    return _finish(name, nranks, payload, plan, _entry_bounds(payload.dimension, nranks))


@_documented
def ssar_split_allgather(nranks: int, size_bytes: int, *, payload: SparsePayload) -> Schedule:
    """SparCML's SSAR_Split_allgather: split the index space, reduce each range at its owner, all-gather.

    The index space is split into ``p`` equal ranges; rank ``j`` owns range ``j``.
    Every rank sends its nonzeros of range ``j`` directly to rank ``j`` (reduce-scatter
    by direct exchange, ``p - 1`` rounds), then every owner sends its summed range,
    sparse or dense, whichever is smaller, to every other rank (all-gather,
    ``p - 1`` rounds).

    Parameters
    ----------
    {parameters}

    Returns
    -------
    Schedule
        ``2 p (p - 1)`` transfers, stages ``"reduce_scatter"`` and ``"all_gather"``;
        it passes :func:`simnet.schedule.check`.

    References
    ----------
    Renggli et al. (2019), SparCML, Sec. 4 (SSAR_Split_allgather).
    """
    return _split_allgather("ssar_split_allgather", nranks, size_bytes, payload, None)


@_documented
def dsar_split_allgather(nranks: int, size_bytes: int, *, payload: SparsePayload) -> Schedule:
    """SparCML's DSAR_Split_allgather: as :func:`ssar_split_allgather`, but the all-gather is dense.

    The reduce-scatter exchanges sparse ranges; each owner then densifies its summed
    range and the all-gather sends ``N / p`` values per message.

    Parameters
    ----------
    {parameters}

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
    index first). Rank 0 then broadcasts the global top-k down the same tree.

    Semantics (lossy by design): every rank ends with the same ``k``-sparse vector,
    ``T(0)``, where ``T(r)`` for a subtree rooted at ``r`` is
    ``top_k(T(r's own, rounds < i) + T(r + 2^i))`` applied round by round; entries
    dropped by a selection are lost (in gTop-k S-SGD they stay in the local
    residual). Message sizes are at most ``k`` nonzeros.

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
        ``params["select_k"]`` is ``k``.

    References
    ----------
    Shi et al. (2019), gTop-k S-SGD, Algorithm 2 (gTopKAllReduce).
    """
    _check(nranks, size_bytes, payload)
    k = payload.k if k is None else k
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ScheduleError(f"must be an integer ≥ 1, got {k!r}", path="k")
    plan = _Plan()
    distances = []
    distance = 1
    while distance < nranks:
        distances.append(distance)
        for root in range(0, nranks, 2 * distance):
            if root + distance < nranks:
                plan.send(root + distance, root, (0,), "reduce", "reduce", ordered=True)
        distance *= 2
    for distance in reversed(distances):
        for root in range(0, nranks, 2 * distance):
            if root + distance < nranks:
                plan.send(root, root + distance, (0,), "copy", "broadcast")
    return _finish("gtopk", nranks, payload, plan, _entry_bounds(payload.dimension, 1), select_k=k)


@_documented
def sparse_ring(nranks: int, size_bytes: int, *, payload: SparsePayload) -> Schedule:
    """Ring reduce-scatter and all-gather on sparse segments.

    As :func:`simnet.algorithms.dense.ring_allreduce` with ``p`` index ranges: in
    reduce-scatter step ``s`` rank ``r`` sends the union of ``s + 1`` vectors on range
    ``(r - s) mod p`` to ``r + 1``; the all-gather forwards the fully summed ranges.
    Each message is sparse or dense, whichever is smaller.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    Schedule
        ``2 p (p - 1)`` transfers; passes :func:`simnet.schedule.check`.
    """
    _check(nranks, size_bytes, payload)
    plan = _Plan()
    ring = list(range(nranks))
    segments = [(c,) for c in range(nranks)]
    plan.ring_reduce_scatter(ring, segments, "reduce_scatter")
    plan.ring_all_gather(ring, segments, "all_gather")
    return _finish("sparse_ring", nranks, payload, plan, _entry_bounds(payload.dimension, nranks))


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

    Hierarchy is plain data: rank ``= node * g + local``.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2, a multiple of `gpus_per_node`.
    size_bytes : int
        Dense size ``N * value_bytes``, bytes.
    payload : SparsePayload
        The ranks' sparse vectors.
    gpus_per_node : int, optional
        GPUs per node ``g`` (default 4, as on ABCI).

    Returns
    -------
    Schedule
        ``2 n g (g - 1) + 2 g n (n - 1)`` transfers; passes :func:`simnet.schedule.check`.

    References
    ----------
    Nguyen, T. T., Wahib, M. and Takano, R. (2019). Topology-aware sparse allreduce
    for large-scale deep learning. IPCCC 2019.
    """
    _check(nranks, size_bytes, payload)
    g = gpus_per_node
    if not isinstance(g, int) or isinstance(g, bool) or g < 1 or nranks % g:
        raise ScheduleError(f"must be an integer ≥ 1 dividing ranks={nranks}, got {g!r}", path="gpus_per_node")
    nodes = nranks // g
    segments = [tuple(a * nodes + b for b in range(nodes)) for a in range(g)]
    node_rings = [[node * g + local for local in range(g)] for node in range(nodes)]
    plan = _Plan()
    if g > 1:
        for ring in node_rings:
            plan.ring_reduce_scatter(ring, segments, "intra_reduce_scatter")
    if nodes > 1:
        for local in range(g):
            ring = [node * g + local for node in range(nodes)]
            held = segments[(local + 1) % g]
            plan.ring_reduce_scatter(ring, [(c,) for c in held], "inter_reduce_scatter")
        for local in range(g):
            ring = [node * g + local for node in range(nodes)]
            held = segments[(local + 1) % g]
            plan.ring_all_gather(ring, [(c,) for c in held], "inter_all_gather")
    if g > 1:
        for ring in node_rings:
            plan.ring_all_gather(ring, segments, "intra_all_gather")
    return _finish(
        "sparse_ring_ring",
        nranks,
        payload,
        plan,
        _entry_bounds(payload.dimension, g * nodes),
        params={"gpus_per_node": g},
    )


SPARSE_ALGORITHMS = MappingProxyType(
    {
        "topk_allgather": (
            "allreduce",
            topk_allgather,
            "every rank sends its k (index, value) pairs to every other rank; local sum",
            "(p-1)(α + S(N,1)β)   [S(n,m) = h + min(n f(m)(b_i+b_v), n b_v), f(m) = 1-(1-d)^m]",
        ),
        "ssar_recursive_doubling": (
            "allreduce",
            ssar_recursive_doubling,
            "SparCML: log2 p exchanges of the whole sparse sum, dense once smaller",
            "Σ_i (α + S(N, 2^i)β)   [p = 2^k]",
        ),
        "ssar_split_allgather": (
            "allreduce",
            ssar_split_allgather,
            "SparCML: sparse reduce of p index ranges at their owners, sparse all-gather",
            "(p-1)(2α + (S(N/p,1) + S(N/p,p))β)",
        ),
        "dsar_split_allgather": (
            "allreduce",
            dsar_split_allgather,
            "SparCML: sparse reduce of p index ranges at their owners, dense all-gather",
            "(p-1)(2α + (S(N/p,1) + h + N/p·b_v)β)",
        ),
        "gtopk": (
            "allreduce",
            gtopk,
            "Shi et al.: binomial-tree reduce re-selecting the top-k, then broadcast (lossy)",
            "2⌈log2 p⌉(α + S_k β)   [S_k = h + k(b_i+b_v)]",
        ),
        "sparse_ring": (
            "allreduce",
            sparse_ring,
            "ring reduce-scatter + all-gather on sparse segments",
            "Σ_s (α + S(N/p,s)β) + (p-1)(α + S(N/p,p)β)",
        ),
        "sparse_ring_ring": (
            "allreduce",
            sparse_ring_ring,
            "Nguyen et al.: intra-node sparse ring RS, inter-node rings per local GPU, AG back",
            "Σ_s(α_a + S(N/g,s)β_a) + Σ_s(α_e + S(N/p,gs)β_e) + (q-1)(α_e + S(N/p,p)β_e) + (g-1)(α_a + S(N/g,p)β_a)",
        ),
    }
)
