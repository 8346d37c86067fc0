"""All-to-all (``alltoall``, ``alltoallv``): pairwise exchange, Bruck, leader-based hierarchical, rail-aligned.

In an all-to-all every rank ``i`` sends a *block* to every rank ``j``. A schedule
holds one chunk per block and sub-chunk: chunk ``c`` starts at rank
``owners[c]`` and must end at rank ``targets[c]`` (:class:`~simnet.schedule.Schedule`);
relaying ranks may hold it on the way. Blocks are numbered row by row over the
pairs ``(i, j)`` that carry data (the diagonal block ``(i, i)`` stays where it is
and is never sent), and block ``k`` has chunks ``k C .. k C + C - 1``, its bytes
split into ``C = chunks`` whole-byte sub-chunks that are sent as separate,
pipelined transfers.

``size_bytes`` is what nccl-tests calls the size of an all-to-all: each rank's
whole send buffer. ``alltoall`` splits it into ``p`` blocks (:func:`~simnet.schedule.split_bytes`);
``alltoallv`` takes a :class:`~simnet.traffic.TrafficMatrix` and moves
``p · size_bytes`` bytes in all in its proportions, so ``size_bytes`` is the mean
send buffer and a uniform matrix gives exactly ``alltoall``'s blocks.

Every builder takes ``matrix`` (``None``: ``alltoall``) and ``chunks``. Ranks
exchange in *steps*: a transfer of step ``s`` waits for the transfers the same
rank sent and received in its previous step (``MPI_Sendrecv`` order), and for the
transfers that brought the data it forwards. The closed forms are written against
:class:`~simnet.algorithms.registry.PairCosts` per step; for ``alltoallv`` a step
costs what its largest message costs.

``flows_schedule`` turns a list of plain flows (background traffic) into an
``alltoallv`` schedule without dependencies.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from simnet.algorithms.hierarchy import node_defaults
from simnet.algorithms.primitives import check_args
from simnet.algorithms.registry import Algorithm, PairCosts, steps_time
from simnet.errors import ScheduleError, SimnetError
from simnet.schedule import Schedule, TransferTable, split_bytes
from simnet.speed import gc_paused
from simnet.traffic import TrafficMatrix

__all__ = [
    "direct_alltoall",
    "bruck_alltoall",
    "hierarchical_alltoall",
    "rail_aligned_alltoall",
    "flows_schedule",
    "byte_matrix",
    "direct_alltoall_time",
    "bruck_alltoall_time",
    "hierarchical_alltoall_time",
    "rail_aligned_alltoall_time",
    "ALGORITHMS",
]


def byte_matrix(nranks: int, size_bytes: int, matrix: TrafficMatrix | None = None) -> np.ndarray:
    """Bytes rank ``i`` sends to rank ``j`` (int64, ``nranks × nranks``), the diagonal included.

    ``None`` is ``alltoall``: every row is :func:`~simnet.schedule.split_bytes` of
    `size_bytes` into `nranks` blocks.

    Raises
    ------
    ScheduleError
        For a `matrix` that is not a :class:`~simnet.traffic.TrafficMatrix` or does
        not fit `nranks` (``path`` starts with ``matrix``).
    """
    if matrix is None:
        return np.tile(np.array(split_bytes(size_bytes, nranks), dtype=np.int64), (nranks, 1))
    if not isinstance(matrix, TrafficMatrix):
        raise ScheduleError(f"must be a TrafficMatrix, got {type(matrix).__name__}", path="matrix")
    try:
        return matrix.bytes(nranks, size_bytes)
    except SimnetError as error:
        path = "matrix" if error.path in ("", "matrix") else f"matrix.{error.path}"
        raise ScheduleError(error.message, path=path) from None


class _Layout:
    """The blocks of an all-to-all and their chunks (see the module docstring)."""

    def __init__(self, nranks: int, size_bytes: int, matrix: TrafficMatrix | None, chunks: int) -> None:
        check_args(nranks, size_bytes, chunks)
        self.n = nranks
        self.chunks = chunks
        self.matrix = matrix
        data = byte_matrix(nranks, size_bytes, matrix)
        self.bytes = data
        src, dst = np.nonzero(data)
        self.src, self.dst = src.astype(np.int64), dst.astype(np.int64)
        self.index = np.full((nranks, nranks), -1, dtype=np.int64)
        self.index[src, dst] = np.arange(len(src))
        sizes = data[src, dst]
        sub = np.arange(chunks)
        self.chunk_bytes = (sizes[:, None] // chunks + (sub[None, :] < (sizes % chunks)[:, None])).ravel()

    def chunk_ids(self, blocks: np.ndarray, sub: int) -> np.ndarray:
        """Chunk ``sub`` of each of `blocks` (block ids ≥ 0)."""
        return blocks * self.chunks + sub

    def moving(self, src, dst) -> np.ndarray:
        """Block ids of the ``(src, dst)`` pairs that carry data and are not on the diagonal."""
        src, dst = np.broadcast_arrays(np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64))
        blocks = self.index[src, dst]
        return blocks[(blocks >= 0) & (src != dst)]

    def schedule(self, table: TransferTable, algorithm: str, params: dict) -> Schedule:
        op = "alltoall" if self.matrix is None else "alltoallv"
        shown = dict(params) | ({"matrix": self.matrix} if self.matrix is not None else {})
        return Schedule(
            collective=op,
            nranks=self.n,
            chunk_bytes=self.chunk_bytes,
            transfers=table,
            algorithm=algorithm,
            params=shown,
            owners=np.repeat(self.src, self.chunks),
            targets=np.repeat(self.dst, self.chunks),
        )


class _Transfers:
    """Transfers added one at a time: source, destination, chunks carried, stage and dependencies."""

    def __init__(self, layout: _Layout) -> None:
        self.layout = layout
        self.src: list[int] = []
        self.dst: list[int] = []
        self.pieces: list[np.ndarray] = []
        self.stage: list[int] = []
        self.stages: dict[str, int] = {}
        self.deps: list[np.ndarray] = []

    def add(self, src: int, dst: int, chunks: np.ndarray, stage: str, deps: np.ndarray) -> int:
        """Append a transfer of `chunks` (its dependencies: the ids ≥ 0 of `deps`); return its index."""
        self.src.append(src)
        self.dst.append(dst)
        self.pieces.append(chunks)
        self.stage.append(self.stages.setdefault(stage, len(self.stages)))
        deps = np.unique(np.asarray(deps, dtype=np.int64))
        self.deps.append(deps[deps >= 0])
        return len(self.src) - 1

    def table(self) -> TransferTable:
        count = len(self.src)
        lengths = np.array([len(p) for p in self.pieces], dtype=np.int64)
        chunks = np.concatenate(self.pieces) if count else np.zeros(0, dtype=np.int64)
        dep_lengths = np.array([len(d) for d in self.deps], dtype=np.int64)
        nbytes = np.add.reduceat(self.layout.chunk_bytes[chunks], np.concatenate(([0], np.cumsum(lengths)[:-1]))) \
            if count else np.zeros(0, dtype=np.int64)
        return TransferTable(
            src=np.array(self.src, dtype=np.int64),
            dst=np.array(self.dst, dtype=np.int64),
            nbytes=nbytes,
            chunks=chunks,
            chunk_offsets=np.concatenate(([0], np.cumsum(lengths))),
            deps=np.concatenate(self.deps) if count else np.zeros(0, dtype=np.int64),
            dep_offsets=np.concatenate(([0], np.cumsum(dep_lengths))),
            stage=np.array(self.stage, dtype=np.int64),
            stages=tuple(self.stages) or ("",),
        )


def _check_window(window: int) -> None:
    if not isinstance(window, int) or isinstance(window, bool) or window < 1:
        raise ScheduleError(f"must be an integer ≥ 1, got {window!r}", path="window")


def _check_gpus_per_node(nranks: int, gpus_per_node: int) -> None:
    if (not isinstance(gpus_per_node, int) or isinstance(gpus_per_node, bool) or gpus_per_node < 1
            or nranks % gpus_per_node):
        raise ScheduleError(f"must be an integer ≥ 1 dividing nranks={nranks}, got {gpus_per_node!r}",
                            path="gpus_per_node")


@gc_paused()
def direct_alltoall(nranks: int, size_bytes: int, *, chunks: int = 1, window: int = 1,
                    matrix: TrafficMatrix | None = None) -> Schedule:
    """Pairwise-exchange all-to-all: in step ``s`` every rank ``i`` sends its block for ``i + s``.

    Steps ``s = 1 .. p-1``: rank ``i`` sends block ``(i, (i + s) mod p)`` and receives
    block ``((i - s) mod p, i)``, so every step is a shift permutation. A transfer
    of step ``s`` waits for the transfers rank ``i`` sent and received in step
    ``s - window``: with ``window = 1`` the exchanges are strictly one after the
    other (MPI's pairwise exchange); NCCL's all-to-all, grouped ``ncclSend`` /
    ``ncclRecv`` to every peer in this order, keeps several peers in flight
    (``window > 1``; ``window ≥ p - 1``: every block at once).

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Send buffer per rank ``n``, bytes (``alltoallv``: the mean).
    chunks : int, optional
        Pipelined sub-chunks ``C`` of every block.
    window : int, optional
        Steps in flight at once per rank (default 1).
    matrix : TrafficMatrix, optional
        Traffic matrix of an ``alltoallv`` (default: ``alltoall``).

    Returns
    -------
    Schedule
        ``p (p - 1) C`` transfers for ``alltoall``; none for blocks of zero bytes.

    References
    ----------
    Thakur, R., Rabenseifner, R. and Gropp, W. (2005). Optimization of collective
    communication operations in MPICH. Int. J. High Perform. Comput. Appl. 19(1), 49-66.
    NVIDIA NCCL documentation, "Point-to-point communication: all-to-all".
    """
    _check_window(window)
    layout = _Layout(nranks, size_bytes, matrix, chunks)
    n, C = nranks, chunks
    step = np.arange(1, n)[:, None]
    rank = np.arange(n)[None, :]
    blocks = layout.index[np.broadcast_to(rank, (n - 1, n)), (rank + step) % n]
    exists = blocks >= 0
    blocks = blocks[exists]
    count = len(blocks) * C
    kind = np.int32 if count < 2**31 else np.int64
    ids = np.full((n - 1, n, C), -1, dtype=kind)
    ids[exists] = np.arange(count, dtype=kind).reshape(-1, C)
    s_of, r_of = (index.astype(kind) for index in np.nonzero(exists))
    del exists
    previous = s_of - window
    earlier = np.flatnonzero(previous >= 0)
    sent = np.full((len(s_of), C), -1, dtype=kind)
    received = np.full((len(s_of), C), -1, dtype=kind)
    sent[earlier] = ids[previous[earlier], r_of[earlier]]
    received[earlier] = ids[previous[earlier], (r_of[earlier] - previous[earlier] - 1) % n]
    del ids, previous, earlier
    # A block's C ids are consecutive, so the dependencies in increasing order are the two blocks, the one
    # with the smaller first id first, a missing one (-1s) last.
    swap = (received[:, 0] >= 0) & ((sent[:, 0] < 0) | (received[:, 0] < sent[:, 0]))
    pairs = np.concatenate([np.where(swap[:, None], received, sent), np.where(swap[:, None], sent, received)], axis=1)
    del sent, received, swap
    pairs = np.repeat(pairs, C, axis=0) if C > 1 else pairs
    keep = pairs >= 0
    counts = keep.sum(axis=1)
    deps = pairs[keep]
    del pairs, keep
    chunk = layout.chunk_ids(np.repeat(blocks, C), np.tile(np.arange(C), len(s_of)))
    table = TransferTable(
        src=np.repeat(r_of, C),
        dst=np.repeat((r_of + s_of + 1) % n, C),
        nbytes=layout.chunk_bytes[chunk],
        chunks=chunk,
        deps=deps,
        dep_offsets=np.concatenate(([0], np.cumsum(counts))),
        stages=("exchange",),
    )
    params = {"chunks": C} if window == 1 else {"chunks": C, "window": window}
    return layout.schedule(table, "direct", params)


def _steps_of(nranks: int) -> int:
    return max(1, math.ceil(math.log2(nranks)))


@gc_paused()
def bruck_alltoall(nranks: int, size_bytes: int, *, chunks: int = 1, matrix: TrafficMatrix | None = None) -> Schedule:
    """Bruck's all-to-all: ``ceil(log2 p)`` steps, each moving about half of all blocks a power of two further.

    The block from ``i`` to ``j`` has offset ``d = (j - i) mod p``. In step ``k`` every
    rank ``r`` sends to ``(r + 2^k) mod p``, in one message per sub-chunk, every block
    it holds whose offset has bit ``k`` set; a block therefore reaches its target
    after crossing the ranks of the partial sums of its offset's bits. Step ``k``
    of rank ``r`` waits for the transfers that brought those blocks and for the
    rank's step ``k - 1`` (send and receive). The local rotations of the published
    algorithm are index arithmetic here and cost nothing.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Send buffer per rank ``n``, bytes (``alltoallv``: the mean).
    chunks : int, optional
        Pipelined sub-chunks ``C`` of every block: message ``c`` of a step carries
        sub-chunk ``c`` of its blocks.
    matrix : TrafficMatrix, optional
        Traffic matrix of an ``alltoallv`` (default: ``alltoall``).

    Returns
    -------
    Schedule
        At most ``p ceil(log2 p) C`` transfers.

    References
    ----------
    Bruck, J., Ho, C.-T., Kipnis, S., Upfal, E. and Weathersby, D. (1997). Efficient
    algorithms for all-to-all communications in multiport message-passing systems.
    IEEE Trans. Parallel Distrib. Syst. 8(11), 1143-1156.
    """
    layout = _Layout(nranks, size_bytes, matrix, chunks)
    n, C = nranks, chunks
    steps = _steps_of(n)
    out = _Transfers(layout)
    ids = np.full((steps, n, C), -1, dtype=np.int64)
    offsets = np.arange(1, n)
    for k in range(steps):
        mine = offsets[(offsets >> k) & 1 == 1]
        low = mine & ((1 << k) - 1)
        arrived = np.where(low > 0, np.floor(np.log2(np.maximum(low, 1))).astype(np.int64), -1)
        for r in range(n):
            src = (r - low) % n
            blocks = layout.index[src, (src + mine) % n]
            present = blocks >= 0
            if not present.any():
                continue
            came = np.unique(arrived[present & (arrived >= 0)])
            for c in range(C):
                deps = [ids[came, (r - (1 << came)) % n, c]]
                if k:
                    deps.append(ids[k - 1, [r, (r - (1 << (k - 1))) % n], c])
                ids[k, r, c] = out.add(r, (r + (1 << k)) % n, layout.chunk_ids(blocks[present], c), f"step_{k}",
                                       np.concatenate(deps))
    return layout.schedule(out.table(), "bruck", {"chunks": C})


@gc_paused()
def hierarchical_alltoall(nranks: int, size_bytes: int, *, chunks: int = 1, gpus_per_node: int = 1,
                          matrix: TrafficMatrix | None = None) -> Schedule:
    """Leader-based hierarchical all-to-all: gather to each node's leader, exchange between leaders, scatter.

    With ``g = gpus_per_node`` and ``m = p / g`` nodes, rank ``r`` is GPU ``r mod g``
    of node ``r // g``; GPU 0 is the node's leader. Every other GPU sends the
    leader all its blocks (``gather``); the leaders then exchange, pairwise in
    ``m - 1`` steps, everything their node sends to the other node (``exchange``,
    ``g²`` blocks per message); finally each leader sends every other GPU of its node
    the blocks addressed to it (``scatter``). Every block leaves its node once, in a
    message of ``g²`` blocks: ``m (m - 1)`` inter-node messages instead of ``p (p - 1)``,
    through one NIC per node.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2, numbered node by node.
    size_bytes : int
        Send buffer per rank ``n``, bytes (``alltoallv``: the mean).
    chunks : int, optional
        Pipelined sub-chunks ``C`` of every block (message ``c`` of each phase carries
        sub-chunk ``c`` of its blocks).
    gpus_per_node : int, optional
        ``g``, dividing ``p`` (default 1; scenarios take it from the topology).
    matrix : TrafficMatrix, optional
        Traffic matrix of an ``alltoallv`` (default: ``alltoall``).

    Returns
    -------
    Schedule
        At most ``(2 m (g - 1) + m (m - 1)) C`` transfers.

    References
    ----------
    Kumar, R., Mamidala, A. and Panda, D. K. (2008). Scaling alltoall collective on
    multi-core systems. IEEE IPDPS 2008 (workshops), 1-8.
    """
    _check_gpus_per_node(nranks, gpus_per_node)
    layout = _Layout(nranks, size_bytes, matrix, chunks)
    n, C, g = nranks, chunks, gpus_per_node
    m = n // g
    everyone = np.arange(n)
    out = _Transfers(layout)
    gathered = np.full((m, g, C), -1, dtype=np.int64)
    exchanged = np.full((max(m - 1, 1), m, C), -1, dtype=np.int64)
    for node in range(m):
        for local in range(1, g):
            rank = node * g + local
            blocks = layout.moving(rank, everyone)
            for c in range(C):
                if len(blocks):
                    gathered[node, local, c] = out.add(rank, node * g, layout.chunk_ids(blocks, c), "gather", [])
    members = everyone.reshape(m, g)
    for q in range(1, m):
        for node in range(m):
            other = (node + q) % m
            blocks = layout.moving(members[node][:, None], members[other][None, :])
            if not len(blocks):
                continue
            for c in range(C):
                deps = [gathered[node, 1:, c]]
                if q > 1:
                    deps.append(exchanged[q - 2, [node, (node - q + 1) % m], c])
                exchanged[q - 1, node, c] = out.add(node * g, other * g, layout.chunk_ids(blocks, c), "exchange",
                                                    np.concatenate(deps))
    for node in range(m):
        senders = [(node - q) % m for q in range(1, m)]
        for local in range(1, g):
            rank = node * g + local
            blocks = layout.moving(everyone, rank)
            for c in range(C):
                if len(blocks):
                    deps = [gathered[node, 1:, c]] + ([exchanged[np.arange(m - 1), senders, c]] if m > 1 else [])
                    out.add(node * g, rank, layout.chunk_ids(blocks, c), "scatter", np.concatenate(deps))
    return layout.schedule(out.table(), "hierarchical", {"chunks": C, "gpus_per_node": g})


@gc_paused()
def rail_aligned_alltoall(nranks: int, size_bytes: int, *, chunks: int = 1, gpus_per_node: int = 1,
                          matrix: TrafficMatrix | None = None) -> Schedule:
    """Rail-aligned all-to-all: NVLink to the GPU on the destination's rail, then that GPU's NIC.

    With ``g = gpus_per_node`` and ``m = p / g`` nodes, GPU ``l`` of node ``s`` first
    sends, over the node's fast links, every block for a GPU ``l'`` (of any node) to
    its own node's GPU ``l'``, in ``g - 1`` pairwise steps (``nvlink``). Then GPU ``l'``
    of each node sends every other node's GPU ``l'`` the ``g`` blocks it holds for it,
    in ``m - 1`` pairwise steps (``rail``): inter-node traffic only ever runs between
    GPUs of the same local index, i.e. on one rail, through their own NICs. This is
    NCCL's PXN (PCI × NVLink) data path, expressed in ranks.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2, numbered node by node, GPU ``l`` of every node on rail ``l``.
    size_bytes : int
        Send buffer per rank ``n``, bytes (``alltoallv``: the mean).
    chunks : int, optional
        Pipelined sub-chunks ``C`` of every block.
    gpus_per_node : int, optional
        ``g``, dividing ``p`` (default 1; scenarios take it from the topology).
    matrix : TrafficMatrix, optional
        Traffic matrix of an ``alltoallv`` (default: ``alltoall``).

    Returns
    -------
    Schedule
        At most ``p (g - 1 + m - 1) C`` transfers.

    References
    ----------
    Jeaugey, S. (2022). Doubling all2all performance with NVIDIA Collective
    Communication Library 2.12. NVIDIA Technical Blog (PXN).
    """
    _check_gpus_per_node(nranks, gpus_per_node)
    layout = _Layout(nranks, size_bytes, matrix, chunks)
    n, C, g = nranks, chunks, gpus_per_node
    m = n // g
    everyone = np.arange(n)
    out = _Transfers(layout)
    local_ids = np.full((max(g - 1, 1), n, C), -1, dtype=np.int64)
    rail_ids = np.full((max(m - 1, 1), n, C), -1, dtype=np.int64)
    for q in range(1, g):
        for rank in range(n):
            node, local = divmod(rank, g)
            peer = node * g + (local + q) % g
            blocks = layout.moving(rank, everyone[everyone % g == (local + q) % g])
            if not len(blocks):
                continue
            for c in range(C):
                deps = []
                if q > 1:
                    deps = local_ids[q - 2, [rank, node * g + (local - q + 1) % g], c]
                local_ids[q - 1, rank, c] = out.add(rank, peer, layout.chunk_ids(blocks, c), "nvlink", deps)
    for q in range(1, m):
        for rank in range(n):
            node, local = divmod(rank, g)
            target = ((node + q) % m) * g + local
            blocks = layout.moving(node * g + np.arange(g), target)
            if not len(blocks):
                continue
            senders = node * g + (local - np.arange(1, g)) % g
            for c in range(C):
                deps = [local_ids[np.arange(g - 1), senders, c]] if g > 1 else []
                if q > 1:
                    deps.append(rail_ids[q - 2, [rank, ((node - q + 1) % m) * g + local], c])
                rail_ids[q - 1, rank, c] = out.add(rank, target, layout.chunk_ids(blocks, c), "rail",
                                                   np.concatenate(deps) if deps else [])
    return layout.schedule(out.table(), "rail_aligned", {"chunks": C, "gpus_per_node": g})


def flows_schedule(nranks: int, src, dst, nbytes) -> Schedule:
    """Plain flows as an ``alltoallv`` schedule: flow ``f`` sends ``nbytes[f]`` from ``src[f]`` to ``dst[f]``.

    One block and one transfer per flow, no dependencies (background traffic).
    The ``(src, dst)`` pairs must be distinct and off the diagonal; flows of zero
    bytes are left out.

    Raises
    ------
    ScheduleError
        For pairs that repeat or stay on one rank.
    """
    src, dst, nbytes = (np.asarray(a, dtype=np.int64) for a in (src, dst, nbytes))
    keep = nbytes > 0
    src, dst, nbytes = src[keep], dst[keep], nbytes[keep]
    if (src == dst).any() or len(np.unique(src * nranks + dst)) != len(src):
        raise ScheduleError("flows must join distinct pairs of distinct ranks", path="flows")
    count = len(src)
    table = TransferTable(src=src, dst=dst, nbytes=nbytes, chunks=np.arange(count), deps=np.zeros(0, dtype=np.int64),
                          dep_offsets=np.zeros(count + 1, dtype=np.int64), stages=("flow",))
    return Schedule(collective="alltoallv", nranks=nranks, chunk_bytes=tuple(nbytes.tolist()), transfers=table,
                    algorithm="flows", owners=tuple(src.tolist()), targets=tuple(dst.tolist()))


def direct_alltoall_time(nranks: int, size_bytes: float, alpha_s: float, beta_s_per_byte: float) -> float:
    """Pairwise-exchange all-to-all without contention: ``(p - 1)(α + (n/p) β)``, seconds.

    nccl-tests' bus bandwidth, ``(n / T)(p - 1)/p``, is then ``(n/p) / (α + (n/p) β)``:
    the injection bandwidth ``1/β`` once ``(n/p) β ≫ α`` (Thakur et al. 2005).
    """
    return (nranks - 1) * (alpha_s + size_bytes / nranks * beta_s_per_byte)


def bruck_alltoall_time(nranks: int, size_bytes: float, alpha_s: float, beta_s_per_byte: float) -> float:
    """Bruck's all-to-all without contention: ``Σ_k (α + c_k (n/p) β)``, seconds.

    ``c_k`` is the number of offsets ``1 ≤ d < p`` with bit ``k`` set; for ``p = 2^q``
    this is ``q (α + n β / 2)`` (Bruck et al. 1997).
    """
    offsets = np.arange(1, nranks)
    return float(sum(alpha_s + int(((offsets >> k) & 1).sum()) * size_bytes / nranks * beta_s_per_byte
                     for k in range(_steps_of(nranks))))


def hierarchical_alltoall_time(nranks: int, gpus_per_node: int, size_bytes: float, intra_alpha_s: float,
                               intra_beta_s_per_byte: float, inter_alpha_s: float,
                               inter_beta_s_per_byte: float) -> float:
    """Leader-based all-to-all without pipelining, seconds.

    ``2 (α_in + (g - 1)(p - 1)(n/p) β_in) + (m - 1)(α_out + g² (n/p) β_out)``: the
    ``g - 1`` gathers into a leader (and scatters out of it) share its link, then
    ``m - 1`` leader exchanges of ``g²`` blocks (Kumar et al. 2008).
    """
    g = gpus_per_node
    m = nranks // g
    block = size_bytes / nranks
    local = intra_alpha_s + (g - 1) * (nranks - 1) * block * intra_beta_s_per_byte if g > 1 else 0.0
    return 2 * local + (m - 1) * (inter_alpha_s + g * g * block * inter_beta_s_per_byte)


def rail_aligned_alltoall_time(nranks: int, gpus_per_node: int, size_bytes: float, intra_alpha_s: float,
                               intra_beta_s_per_byte: float, inter_alpha_s: float,
                               inter_beta_s_per_byte: float) -> float:
    """Rail-aligned all-to-all without pipelining: ``(g - 1)(α_in + m (n/p) β_in) + (m - 1)(α_out + g (n/p) β_out)``, seconds."""
    g = gpus_per_node
    m = nranks // g
    block = size_bytes / nranks
    return (g - 1) * (intra_alpha_s + m * block * intra_beta_s_per_byte) + (m - 1) * (
        inter_alpha_s + g * block * inter_beta_s_per_byte)


def _largest(costs: PairCosts, pairs: Sequence[tuple[int, int]], sizes: Sequence[float]) -> float:
    """Time of the slowest of concurrent messages of the given sizes, seconds."""
    return max((a + size * b * sharing for (a, b, sharing), size in zip(costs.pairs(pairs), sizes)), default=0.0)


def _direct_model(costs: PairCosts, nranks: int, size_bytes: int, *, chunks: int = 1, window: int = 1,
                  matrix: TrafficMatrix | None = None, gamma_s_per_byte: float = 0.0) -> float:
    data = byte_matrix(nranks, size_bytes, matrix)
    rank = np.arange(nranks)
    total = 0.0
    for first in range(1, nranks, window):
        pairs, sizes = [], []
        for shift in range(first, min(first + window, nranks)):
            for s, d in zip(rank.tolist(), ((rank + shift) % nranks).tolist()):
                if data[s, d] > 0:
                    pairs.append((s, d))
                    sizes.append(float(data[s, d]))
        total += _largest(costs, pairs, sizes)
    return total


def _bruck_steps(nranks: int, data: np.ndarray, chunks: int) -> list[tuple[list[tuple[int, int]], float, float]]:
    steps = []
    offsets = np.arange(1, nranks)
    for k in range(_steps_of(nranks)):
        mine = offsets[(offsets >> k) & 1 == 1]
        low = mine & ((1 << k) - 1)
        pairs, largest = [], 0
        for r in range(nranks):
            src = (r - low) % nranks
            carried = int(data[src, (src + mine) % nranks].sum())
            if carried:
                pairs.append((r, (r + (1 << k)) % nranks))
                largest = max(largest, carried)
        if pairs:
            steps.append((pairs, math.ceil(largest / chunks), 0.0))
    return steps


def _bruck_model(costs: PairCosts, nranks: int, size_bytes: int, *, chunks: int = 1,
                 matrix: TrafficMatrix | None = None, gamma_s_per_byte: float = 0.0) -> float:
    data = byte_matrix(nranks, size_bytes, matrix)
    return steps_time(costs, _bruck_steps(nranks, data, chunks), chunks)


def _off_diagonal(data: np.ndarray) -> np.ndarray:
    moved = data.copy()
    np.fill_diagonal(moved, 0)
    return moved


def _hierarchical_model(costs: PairCosts, nranks: int, size_bytes: int, *, chunks: int = 1, gpus_per_node: int = 1,
                        matrix: TrafficMatrix | None = None, gamma_s_per_byte: float = 0.0) -> float:
    g = gpus_per_node
    m = nranks // g
    data = _off_diagonal(byte_matrix(nranks, size_bytes, matrix))
    per_node = data.reshape(m, g, m, g).sum(axis=(1, 3))
    steps = []
    if g > 1:
        others = [r for r in range(nranks) if r % g]
        steps.append(([(r, r - r % g) for r in others], math.ceil(int(data[others].sum(axis=1).max()) / chunks), 0.0))
    for q in range(1, m):
        pairs = [(s * g, ((s + q) % m) * g) for s in range(m)]
        steps.append((pairs, math.ceil(int(per_node[np.arange(m), (np.arange(m) + q) % m].max()) / chunks), 0.0))
    if g > 1:
        steps.append(([(r - r % g, r) for r in others], math.ceil(int(data[:, others].sum(axis=0).max()) / chunks),
                      0.0))
    return steps_time(costs, steps, chunks)


def _rail_aligned_model(costs: PairCosts, nranks: int, size_bytes: int, *, chunks: int = 1, gpus_per_node: int = 1,
                        matrix: TrafficMatrix | None = None, gamma_s_per_byte: float = 0.0) -> float:
    g = gpus_per_node
    m = nranks // g
    data = _off_diagonal(byte_matrix(nranks, size_bytes, matrix))
    by_rail = data.reshape(nranks, m, g).sum(axis=1)
    rank = np.arange(nranks)
    steps = []
    for q in range(1, g):
        peer = rank - rank % g + (rank % g + q) % g
        steps.append(([(int(r), int(p)) for r, p in zip(rank, peer)],
                      math.ceil(int(by_rail[rank, (rank % g + q) % g].max()) / chunks), 0.0))
    per_rail = data.reshape(m, g, m, g).sum(axis=1)
    for q in range(1, m):
        target = ((rank // g + q) % m) * g + rank % g
        carried = per_rail[rank // g, target // g, rank % g]
        steps.append(([(int(r), int(t)) for r, t in zip(rank, target)], math.ceil(int(carried.max()) / chunks), 0.0))
    return steps_time(costs, steps, chunks)


def _chunked(nranks: int, params) -> int:
    return int(params.get("chunks", 1))


def _direct_transfers(nranks: int, size_bytes: int, params) -> int:
    return nranks * (nranks - 1) * _chunked(nranks, params)


def _bruck_transfers(nranks: int, size_bytes: int, params) -> int:
    return nranks * _steps_of(nranks) * _chunked(nranks, params)


def _hierarchical_transfers(nranks: int, size_bytes: int, params) -> int:
    g = int(params.get("gpus_per_node", 1))
    m = nranks // g
    return (2 * m * (g - 1) + m * (m - 1)) * _chunked(nranks, params)


def _rail_transfers(nranks: int, size_bytes: int, params) -> int:
    g = int(params.get("gpus_per_node", 1))
    return nranks * (g - 1 + nranks // g - 1) * _chunked(nranks, params)


_OPS = ("alltoall", "alltoallv")
_THAKUR = ("Thakur, R., Rabenseifner, R. and Gropp, W. (2005). Optimization of collective communication "
           "operations in MPICH. Int. J. High Perform. Comput. Appl. 19(1), 49-66; NVIDIA NCCL documentation, "
           "'Point-to-point communication: all-to-all'.")
_BRUCK = ("Bruck, J., Ho, C.-T., Kipnis, S., Upfal, E. and Weathersby, D. (1997). Efficient algorithms for all-to-all "
          "communications in multiport message-passing systems. IEEE Trans. Parallel Distrib. Syst. 8(11), 1143-1156.")
_KUMAR = ("Kumar, R., Mamidala, A. and Panda, D. K. (2008). Scaling alltoall collective on multi-core systems. "
          "IEEE IPDPS 2008 (workshops), 1-8.")
_PXN = ("Jeaugey, S. (2022). Doubling all2all performance with NVIDIA Collective Communication Library 2.12. "
        "NVIDIA Technical Blog (PXN).")

ALGORITHMS = (
    Algorithm("direct", _OPS, direct_alltoall, "pairwise exchange: p-1 shift permutations, window steps in flight",
              "(p-1)(α + n/p·β)   [window 1, no contention; per step the slowest message of the shift]",
              model=_direct_model, citation=_THAKUR, transfers=_direct_transfers),
    Algorithm("bruck", _OPS, bruck_alltoall, "Bruck: ceil(log2 p) steps to rank + 2^k, about half the blocks each",
              "Σ_k (α + c_k·n/p·β), c_k offsets with bit k set   [p = 2^q: q(α + nβ/2)]",
              model=_bruck_model, citation=_BRUCK, transfers=_bruck_transfers),
    Algorithm("hierarchical", _OPS, hierarchical_alltoall,
              "leader-based: gather to the node leader, exchange between leaders, scatter",
              "2(α_in + (g-1)(p-1)·n/p·β_in) + (m-1)(α_out + g²·n/p·β_out)   [C = 1]",
              model=_hierarchical_model, citation=_KUMAR, defaults=node_defaults, transfers=_hierarchical_transfers),
    Algorithm("rail_aligned", _OPS, rail_aligned_alltoall,
              "NVLink to the GPU on the destination's rail, then that GPU's NIC (NCCL PXN)",
              "(g-1)(α_in + m·n/p·β_in) + (m-1)(α_out + g·n/p·β_out)   [C = 1]",
              model=_rail_aligned_model, citation=_PXN, defaults=node_defaults, transfers=_rail_transfers),
)
