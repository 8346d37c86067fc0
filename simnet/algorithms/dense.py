"""Dense all-reduce algorithms: functions of (ranks, size, parameters) that return a Schedule.

Schedules know ranks, never links: where a message goes on the network is the
engine's business. Hierarchical algorithms take the hierarchy as plain data,
``factors = (p1, p2, ..., pk)`` with ``p1 p2 ... pk = p``: rank ``r`` has
coordinates ``c_i = (r // (p1 ... p_{i-1})) mod p_i``, so level 1 varies fastest
(GPUs of a node when ranks are numbered node by node, as the topology builders
do). :func:`simnet.algorithms.hierarchy.hierarchy_factors` derives them from a
topology graph.

Every builder has the signature ``(nranks, size_bytes, **params)`` and accepts
``chunks``: the payload's pieces are split further into ``chunks`` sub-chunks
sent as separate, pipelined transfers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from simnet.algorithms.primitives import (
    Block,
    ScheduleBuilder,
    binomial_parents,
    check_args,
    ring_all_gather,
    ring_reduce_scatter,
    tree_broadcast,
    tree_reduce,
)
from simnet.errors import ScheduleError
from simnet.schedule import Schedule, TransferTable, split_bytes
from simnet.speed import gc_paused

__all__ = [
    "ring_allreduce",
    "recursive_doubling_allreduce",
    "halving_doubling_allreduce",
    "binomial_tree_allreduce",
    "double_binary_tree_allreduce",
    "hierarchical_ring_allreduce",
    "torus_2d_allreduce",
    "blueconnect_allreduce",
    "ring_orders",
    "btree_parents",
    "double_binary_tree_parents",
    "check_factors",
    "level_groups",
    "power_of_two_members",
    "square_factors",
]


def ring_orders(nranks: int, channels: int) -> list[list[int]]:
    """Rank order of each ring channel.

    Channel ``k`` runs forward (``0 -> 1 -> ...``) for even ``k`` and backward for
    odd ``k``, rotated by ``k // 2`` ranks so that channels start their segments on
    different ranks; channel 0 is ``0, 1, ..., p-1``. Forward and backward channels
    use opposite directions of every full-duplex link, as NCCL's rings do.
    """
    orders = []
    for k in range(channels):
        shift = k // 2
        orders.append([(i + shift) % nranks if k % 2 == 0 else (shift - i) % nranks for i in range(nranks)])
    return orders


@gc_paused()
def ring_allreduce(nranks: int, size_bytes: int, *, chunks: int = 1, channels: int = 1) -> Schedule:
    """Ring all-reduce: a reduce-scatter then an all-gather around the ring of ranks.

    The payload is split into ``channels`` parts, one per concurrent ring (see
    :func:`ring_orders`); each part into ``nranks`` segments and each segment into
    ``chunks`` pipelined sub-chunks (whole bytes; pieces differ by at most one
    byte). In step ``s`` of the reduce-scatter (``s = 0 .. p-2``) the rank at
    position ``i`` of a ring sends segment ``(i - s) mod p`` to position ``i + 1``,
    which adds it to its own; after ``p - 1`` steps position ``i`` holds the fully
    reduced segment ``(i + 1) mod p``. The all-gather then forwards the reduced
    segments ``p - 1`` more steps. Each sub-chunk's transfer depends only on the
    arrival of the same sub-chunk in the previous step, so sub-chunks pipeline
    through the ring.

    Parameters
    ----------
    nranks : int
        Number of ranks ``p`` ≥ 2; channel 0 is the ring ``0 -> 1 -> … -> p-1 -> 0``.
    size_bytes : int
        Payload per rank ``n``, bytes.
    chunks : int, optional
        Sub-chunks per segment ``C`` (default 1).
    channels : int, optional
        Concurrent rings ``K``, each carrying ``n / K`` bytes (default 1).

    Returns
    -------
    Schedule
        ``2 (p - 1) p C K`` transfers; chunk ``j`` of segment ``g`` of channel ``k``
        has index ``(k p + g) C + j``.

    References
    ----------
    Patarasuk, P. and Yuan, X. (2009). Bandwidth optimal all-reduce algorithms for
    clusters of workstations. J. Parallel Distrib. Comput. 69(2), 117-124.
    """
    check_args(nranks, size_bytes, chunks)
    if not isinstance(channels, int) or isinstance(channels, bool) or channels < 1:
        raise ScheduleError(f"must be an integer ≥ 1, got {channels!r}", path="channels")
    p = nranks
    chunk_bytes = [
        piece
        for part in split_bytes(size_bytes, channels)
        for segment in split_bytes(part, p)
        for piece in split_bytes(segment, chunks)
    ]
    orders = np.array(ring_orders(p, channels), dtype=np.int64)
    steps = 2 * (p - 1)
    step = np.arange(steps, dtype=np.int64)[:, None, None, None]
    k = np.arange(channels, dtype=np.int64)[None, :, None, None]
    position = np.arange(p, dtype=np.int64)[None, None, :, None]
    sub = np.arange(chunks, dtype=np.int64)[None, None, None, :]
    shape = (steps, channels, p, chunks)
    count, first_step = math.prod(shape), channels * p * chunks
    reducing = step < p - 1
    shift = np.where(reducing, step, step - p)
    chunk = (k * p + (position - shift) % p) * chunks + sub
    previous = (((step - 1) * channels + k) * p + (position - 1) % p) * chunks + sub
    transfers = TransferTable(
        src=np.broadcast_to(orders[k, position], shape).ravel(),
        dst=np.broadcast_to(orders[k, (position + 1) % p], shape).ravel(),
        nbytes=np.asarray(chunk_bytes, dtype=np.int64)[chunk.ravel()],
        reduce=np.broadcast_to(reducing, shape).ravel(),
        chunks=chunk.ravel(),
        deps=previous.ravel()[first_step:],
        dep_offsets=np.concatenate([np.zeros(first_step, dtype=np.int64), np.arange(count - first_step + 1)]),
        stage=np.broadcast_to(~reducing, shape).ravel().astype(np.int64),
        stages=("reduce_scatter", "all_gather"),
    )
    params = {"chunks": chunks} if channels == 1 else {"chunks": chunks, "channels": channels}
    return Schedule(
        collective="allreduce",
        nranks=p,
        chunk_bytes=tuple(chunk_bytes),
        transfers=transfers,
        algorithm="ring",
        params=params,
    )


def check_factors(nranks: int, factors: Sequence[int] | None, *, default: Sequence[int] | None = None) -> tuple[int, ...]:
    """Validate hierarchy `factors` (positive integers whose product is `nranks`).

    ``None`` gives `default`, or ``(nranks,)``.
    """
    if factors is None:
        return tuple(default) if default is not None else (nranks,)
    if isinstance(factors, (str, bytes)) or not isinstance(factors, Sequence) or not factors:
        raise ScheduleError(f"must be a non-empty list of integers, got {factors!r}", path="factors")
    for f in factors:
        if not isinstance(f, int) or isinstance(f, bool) or f < 1:
            raise ScheduleError(f"must be integers ≥ 1, got {list(factors)!r}", path="factors")
    if math.prod(factors) != nranks:
        raise ScheduleError(
            f"the product of {list(factors)} is {math.prod(factors)}, not the {nranks} ranks", path="factors"
        )
    return tuple(factors)


def level_groups(factors: Sequence[int], level: int) -> list[list[int]]:
    """Groups of positions that differ only in coordinate `level` (0-based), each ordered by it.

    There are ``p / p_level`` groups of ``p_level`` positions; groups are listed by
    their smallest position.
    """
    stride = math.prod(factors[:level])
    size = factors[level]
    total = math.prod(factors)
    return [
        [base + c * stride for c in range(size)]
        for base in range(total)
        if (base // stride) % size == 0
    ]


def _pieces(leaves: range, chunks: int) -> Block:
    return [tuple(leaf * chunks + j for leaf in leaves) for j in range(chunks)]


def _nested_leaves(size_bytes: int, factors: Sequence[int], chunks: int) -> list[int]:
    sizes = [size_bytes]
    for f in factors:
        sizes = [piece for s in sizes for piece in split_bytes(s, f)]
    return [piece for s in sizes for piece in split_bytes(s, chunks)]


def _staged_allreduce(
    builder: ScheduleBuilder,
    members: Sequence[int],
    factors: Sequence[int],
    chunks: int,
    labels: Sequence[tuple[str, str]],
) -> None:
    """Reduce-scatter over levels 1..k, then all-gather over levels k..1 (BlueConnect).

    ``members[i]`` is the rank at position ``i``; leaves are the ``prod(factors)``
    nested segments of :func:`_nested_leaves`. After reduce-scatter level ``i`` the
    position with coordinate ``c_i`` keeps block ``(c_i + 1) mod p_i`` of its region.
    """
    k = len(factors)
    below = [math.prod(factors[i + 1 :]) for i in range(k)]
    stride = [math.prod(factors[:i]) for i in range(k)]
    blocks_at: dict[tuple[int, int, int], list[Block]] = {}

    def stage_groups(level: int) -> list[tuple[list[int], list[Block]]]:
        groups = []
        for positions in level_groups(factors, level):
            first = positions[0]
            start = sum(
                ((first // stride[j]) % factors[j] + 1) % factors[j] * below[j] for j in range(level)
            )
            width = below[level]
            key = (start, width, factors[level])
            if key not in blocks_at:
                blocks_at[key] = [
                    _pieces(range(start + b * width, start + (b + 1) * width), chunks) for b in range(factors[level])
                ]
            groups.append(([members[q] for q in positions], blocks_at[key]))
        return groups

    for level in range(k):
        ring_reduce_scatter(builder, stage_groups(level), labels[level][0])
    for level in reversed(range(k)):
        ring_all_gather(builder, stage_groups(level), labels[level][1])


def _level_labels(levels: int) -> list[tuple[str, str]]:
    return [(f"reduce_scatter_{i + 1}", f"all_gather_{i + 1}") for i in range(levels)]


@gc_paused()
def blueconnect_allreduce(
    nranks: int, size_bytes: int, *, factors: Sequence[int] | None = None, chunks: int = 1
) -> Schedule:
    """BlueConnect: all-reduce decomposed into per-level reduce-scatters and all-gathers.

    With ``factors = (p1, ..., pk)``, stage ``i`` of the reduce-scatter runs a ring
    reduce-scatter inside each of the ``p / p_i`` concurrent groups of ranks that
    differ only in coordinate ``i``, on the ``n / (p1 ... p_{i-1})`` bytes each rank
    is still responsible for; the all-gather stages follow in reverse order. One
    factor ``(p,)`` gives the ring all-reduce; all factors 2 give Rabenseifner's
    halving-doubling; ``(X, Y)`` is the 2D-torus all-reduce.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Payload per rank ``n``, bytes.
    factors : list of int, optional
        Group size per level, innermost first, product ``p`` (default ``[p]``: one
        ring). Derive them from a topology with
        :func:`simnet.algorithms.hierarchy.hierarchy_factors`.
    chunks : int, optional
        Pipelined sub-chunks per leaf segment ``C``.

    Returns
    -------
    Schedule
        ``2 Σ_i (p_i - 1) p C`` transfers; the payload is split into ``p`` nested
        leaf segments (first into ``p1`` parts, each into ``p2``, ...), each into
        ``C`` sub-chunks.

    References
    ----------
    Cho, M., Finkler, U., Serrano, M., Kung, D. and Hunter, H. (2019). BlueConnect:
    Decomposing all-reduce for deep learning on heterogeneous network hierarchy.
    IBM J. Res. Dev. 63(6), 1:1-1:11 (also SysML 2019).
    """
    check_args(nranks, size_bytes, chunks)
    factors = check_factors(nranks, factors)
    builder = ScheduleBuilder(_nested_leaves(size_bytes, factors, chunks))
    _staged_allreduce(builder, range(nranks), factors, chunks, _level_labels(len(factors)))
    return builder.schedule(
        "allreduce", nranks, "blueconnect", {"factors": list(factors), "chunks": chunks}
    )


@gc_paused()
def torus_2d_allreduce(
    nranks: int, size_bytes: int, *, factors: Sequence[int] | None = None, chunks: int = 1
) -> Schedule:
    """2D-torus all-reduce: reduce-scatter along X, all-reduce along Y, all-gather along X.

    Ranks form an ``X × Y`` grid, ``r = x + X y``. Rings along X (the ``Y``
    concurrent rows) reduce-scatter the payload; rings along Y (the ``X``
    concurrent columns) all-reduce the ``n / X`` bytes each rank holds, as a ring
    reduce-scatter plus all-gather; rings along X all-gather the result. It is the
    two-level case of :func:`blueconnect_allreduce`.

    Parameters
    ----------
    nranks : int
        Ranks ``p = X Y`` ≥ 2.
    size_bytes : int
        Payload per rank ``n``, bytes.
    factors : list of two int, optional
        ``[X, Y]`` (default: ``X`` the largest divisor of ``p`` not above ``sqrt(p)``).
    chunks : int, optional
        Pipelined sub-chunks per segment ``C``.

    References
    ----------
    Mikami, H., Suganuma, H., U-chupala, P., Tanaka, Y. and Kageyama, Y. (2018).
    Massively distributed SGD: ImageNet/ResNet-50 training in a flash.
    arXiv:1811.05233.
    """
    check_args(nranks, size_bytes, chunks)
    factors = check_factors(nranks, factors, default=square_factors(nranks))
    if len(factors) != 2:
        raise ScheduleError(f"must be two factors [X, Y], got {list(factors)!r}", path="factors")
    builder = ScheduleBuilder(_nested_leaves(size_bytes, factors, chunks))
    _staged_allreduce(
        builder, range(nranks), factors, chunks, [("reduce_scatter_x", "all_gather_x"), ("reduce_scatter_y", "all_gather_y")]
    )
    return builder.schedule("allreduce", nranks, "torus_2d", {"factors": list(factors), "chunks": chunks})


def power_of_two_members(nranks: int) -> tuple[int, list[int]]:
    """MPICH's folding of ``p`` ranks onto ``2^floor(log2 p)``: ``(rem, members)``.

    The first ``2 rem`` ranks pair up (even into odd) and the odd ones take part;
    ``members[i]`` is the rank playing new rank ``i``.
    """
    pof2 = 1 << (nranks.bit_length() - 1)
    rem = nranks - pof2
    return rem, [2 * i + 1 if i < rem else i + rem for i in range(pof2)]


def _fold(builder: ScheduleBuilder, rem: int, pieces: Block, unfold: bool) -> None:
    """MPICH's fold (even ``r < 2 rem`` adds into ``r + 1``) or unfold (copy back)."""
    for r in range(rem):
        for piece in pieces:
            if unfold:
                builder.send(2 * r + 1, 2 * r, piece, "copy", "unfold")
            else:
                builder.send(2 * r, 2 * r + 1, piece, "reduce", "fold")


def square_factors(nranks: int) -> tuple[int, int]:
    """``(X, Y)`` with ``X Y = p`` and ``X`` the largest divisor of ``p`` not above ``sqrt(p)``."""
    x = max(d for d in range(1, math.isqrt(nranks) + 1) if nranks % d == 0)
    return x, nranks // x


@gc_paused()
def halving_doubling_allreduce(nranks: int, size_bytes: int, *, chunks: int = 1) -> Schedule:
    """Rabenseifner's all-reduce: recursive-halving reduce-scatter, recursive-doubling all-gather.

    For ``p = 2^k`` the reduce-scatter exchanges half of the current data with the
    partner at distance ``1, 2, 4, …`` and the all-gather mirrors it, distances
    ``…, 2, 1``. When ``p`` is not a power of two, MPICH's way: with
    ``p' = 2^floor(log2 p)`` and ``rem = p - p'``, each even rank ``r < 2 rem``
    first adds its whole payload into rank ``r + 1`` and waits; the other ``p'``
    ranks run the power-of-two algorithm; the odd ranks finally copy the result
    back to their even neighbour.

    For ``p = 2^k`` the transfers are those of ``blueconnect`` with
    ``factors = [2] * k``.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Payload per rank ``n``, bytes.
    chunks : int, optional
        Pipelined sub-chunks per segment ``C``.

    References
    ----------
    Thakur, R., Rabenseifner, R. and Gropp, W. (2005). Optimization of collective
    communication operations in MPICH. Int. J. High Perform. Comput. Appl. 19(1), 49-66.
    """
    check_args(nranks, size_bytes, chunks)
    rem, members = power_of_two_members(nranks)
    levels = len(members).bit_length() - 1
    builder = ScheduleBuilder(_nested_leaves(size_bytes, [2] * levels, chunks))
    everything = _pieces(range(len(members)), chunks)
    _fold(builder, rem, everything, unfold=False)
    _staged_allreduce(builder, members, [2] * levels, chunks, _level_labels(levels))
    _fold(builder, rem, everything, unfold=True)
    return builder.schedule("allreduce", nranks, "halving_doubling", {"chunks": chunks})


@gc_paused()
def recursive_doubling_allreduce(nranks: int, size_bytes: int, *, chunks: int = 1) -> Schedule:
    """Recursive-doubling all-reduce: ``log2 p`` pairwise exchanges of the whole payload.

    In step ``k`` every rank exchanges its partial sums with the rank at distance
    ``2^k`` and both add (a pairwise exchange, see :mod:`simnet.schedule`). Non
    powers of two are folded MPICH's way (see
    :func:`halving_doubling_allreduce`).

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Payload per rank ``n``, bytes.
    chunks : int, optional
        Pipelined sub-chunks ``C`` of the payload.

    References
    ----------
    Thakur, R., Rabenseifner, R. and Gropp, W. (2005). Optimization of collective
    communication operations in MPICH. Int. J. High Perform. Comput. Appl. 19(1), 49-66.
    """
    check_args(nranks, size_bytes, chunks)
    rem, members = power_of_two_members(nranks)
    builder = ScheduleBuilder(split_bytes(size_bytes, chunks))
    pieces = [(j,) for j in range(chunks)]
    _fold(builder, rem, pieces, unfold=False)
    mask = 1
    while mask < len(members):
        for i in range(len(members)):
            if i < i ^ mask:
                for piece in pieces:
                    builder.exchange(members[i], members[i ^ mask], piece, "reduce", f"exchange_{mask}")
        mask <<= 1
    _fold(builder, rem, pieces, unfold=True)
    return builder.schedule("allreduce", nranks, "recursive_doubling", {"chunks": chunks})


@gc_paused()
def binomial_tree_allreduce(nranks: int, size_bytes: int, *, chunks: int = 1) -> Schedule:
    """Binomial-tree reduce to rank 0 followed by a binomial-tree broadcast.

    Rank ``r > 0`` hangs under ``r - lowbit(r)``; both trees have depth
    ``ceil(log2 p)``. Sub-chunks pipeline through the trees.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Payload per rank ``n``, bytes.
    chunks : int, optional
        Pipelined sub-chunks ``C``.

    References
    ----------
    Thakur, R., Rabenseifner, R. and Gropp, W. (2005). Optimization of collective
    communication operations in MPICH. Int. J. High Perform. Comput. Appl. 19(1), 49-66.
    """
    check_args(nranks, size_bytes, chunks)
    builder = ScheduleBuilder(split_bytes(size_bytes, chunks))
    trees = [(range(nranks), binomial_parents(nranks), [(j,) for j in range(chunks)])]
    tree_reduce(builder, trees, "reduce")
    tree_broadcast(builder, trees, "broadcast")
    return builder.schedule("allreduce", nranks, "binomial_tree", {"chunks": chunks})


def btree_parents(nranks: int) -> list[int | None]:
    """NCCL's binary tree over ranks ``0 .. p-1`` rooted at 0 (``ncclGetBtree``).

    With ``b`` the lowest set bit of ``r > 0``, the parent is ``(r ^ b) | 2b``, or
    ``r ^ b`` when that is out of range; rank 0 has the single child
    ``2^floor(log2(p - 1))``. Leaves are the odd ranks.
    """
    parents: list[int | None] = [None]
    for r in range(1, nranks):
        bit = r & -r
        up = (r ^ bit) | (bit << 1)
        parents.append(up if up < nranks else r ^ bit)
    return parents


def double_binary_tree_parents(nranks: int) -> tuple[list[int | None], list[int | None]]:
    """NCCL's two complementary binary trees (``ncclGetDtree``).

    The first is :func:`btree_parents`; the second mirrors it (rank ``r`` plays
    ``p - 1 - r``) when ``p`` is even and shifts it by one rank when ``p`` is odd,
    so that most ranks are a leaf in one tree and an inner node in the other.
    """
    first = btree_parents(nranks)
    if nranks % 2 == 0:
        second = [None if first[nranks - 1 - r] is None else nranks - 1 - first[nranks - 1 - r] for r in range(nranks)]
    else:
        second = [None if first[(r - 1) % nranks] is None else (first[(r - 1) % nranks] + 1) % nranks for r in range(nranks)]
    return first, second


@gc_paused()
def double_binary_tree_allreduce(nranks: int, size_bytes: int, *, chunks: int = 1) -> Schedule:
    """NCCL's double binary tree: each of two complementary trees all-reduces half the data.

    Each tree reduces its half to its root and broadcasts it back, chunk by chunk,
    so the reduction of later sub-chunks overlaps the broadcast of earlier ones.
    Every rank sends and receives about the same amount in total, unlike a single
    tree whose leaves idle.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Payload per rank ``n``, bytes; tree ``t`` carries half ``t``.
    chunks : int, optional
        Pipelined sub-chunks ``C`` per half.

    References
    ----------
    Sanders, P., Speck, J. and Träff, J. L. (2009). Two-tree algorithms for full
    bandwidth broadcast, reduction and scan. Parallel Computing 35(12), 581-594.
    Jeaugey, S. (2019). Massively scale your deep learning training with NCCL 2.4.
    NVIDIA Developer Blog.
    """
    check_args(nranks, size_bytes, chunks)
    chunk_bytes = [piece for half in split_bytes(size_bytes, 2) for piece in split_bytes(half, chunks)]
    builder = ScheduleBuilder(chunk_bytes)
    trees = [
        (range(nranks), parents, [(t * chunks + j,) for j in range(chunks)])
        for t, parents in enumerate(double_binary_tree_parents(nranks))
    ]
    tree_reduce(builder, trees, "reduce")
    tree_broadcast(builder, trees, "broadcast")
    return builder.schedule("allreduce", nranks, "double_binary_tree", {"chunks": chunks})


@gc_paused()
def hierarchical_ring_allreduce(
    nranks: int, size_bytes: int, *, factors: Sequence[int] | None = None, chunks: int = 1
) -> Schedule:
    """Intra-node reduce, ring all-reduce among node leaders, intra-node broadcast.

    Nodes are the ``N = p / p1`` groups of ``p1 = factors[0]`` consecutive ranks;
    the leader of a node is its first rank. Each node reduces the payload to its
    leader along a binomial tree, the leaders run a ring all-reduce, and each
    leader broadcasts the result along the tree. Sub-chunks pipeline across the
    three phases.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Payload per rank ``n``, bytes.
    factors : list of int, optional
        Hierarchy factors, innermost first (see :mod:`simnet.algorithms.dense`); only
        ``p1`` (ranks per node) matters (default ``[1, p]``: a plain ring).
    chunks : int, optional
        Pipelined sub-chunks per ring segment ``C``.

    References
    ----------
    Thakur, R., Rabenseifner, R. and Gropp, W. (2005), §4 (hierarchical variants);
    Jia, X. et al. (2018). Highly scalable deep learning training system with
    mixed-precision: training ImageNet in four minutes. arXiv:1807.11205.
    """
    check_args(nranks, size_bytes, chunks)
    factors = check_factors(nranks, factors, default=(1, nranks))
    local = factors[0]
    nodes = nranks // local
    chunk_bytes = [piece for segment in split_bytes(size_bytes, nodes) for piece in split_bytes(segment, chunks)]
    builder = ScheduleBuilder(chunk_bytes)
    everything = [tuple(g * chunks + j for g in range(nodes)) for j in range(chunks)]
    trees = [(range(node * local, (node + 1) * local), binomial_parents(local), everything) for node in range(nodes)]
    tree_reduce(builder, trees, "intra_reduce")
    leaders = [(range(0, nranks, local), [[(g * chunks + j,) for j in range(chunks)] for g in range(nodes)])]
    ring_reduce_scatter(builder, leaders, "inter_reduce_scatter")
    ring_all_gather(builder, leaders, "inter_all_gather")
    tree_broadcast(builder, trees, "intra_broadcast")
    return builder.schedule(
        "allreduce", nranks, "hierarchical_ring", {"factors": list(factors), "chunks": chunks}
    )
