"""Flat all-reduce algorithms: ring, recursive doubling, binomial tree, double binary tree.

Each is a builder ``(nranks, size_bytes, **params) -> Schedule``, its closed-form
cost as a pure function of ``(p, n, α, β, γ)`` with the formula and citation in
its docstring, a model that reads α and β off a :class:`PairCosts`, and a registry
record (:data:`ALGORITHMS`). Every builder accepts ``chunks``: the payload's
pieces are split further into ``chunks`` sub-chunks sent as separate, pipelined
transfers. The reduction convention is the engine's: a ``"reduce"`` transfer of
``m`` bytes completes ``m γ`` after its last byte arrives.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from simnet.algorithms.builder import ScheduleBuilder
from simnet.algorithms.primitives import (
    _THAKUR,
    binomial_parents,
    check_args,
    ring_all_gather,
    ring_pairs,
    ring_reduce_scatter,
    tree_alpha_beta,
    tree_broadcast,
    tree_reduce,
)
from simnet.algorithms.registry import Algorithm, PairCosts, chunk_variants, steps_time
from simnet.errors import ScheduleError
from simnet.schedule import Schedule, split_bytes
from simnet.speed import gc_paused

__all__ = [
    "ring_allreduce",
    "recursive_doubling_allreduce",
    "binomial_tree_allreduce",
    "double_binary_tree_allreduce",
    "ring_orders",
    "btree_parents",
    "double_binary_tree_parents",
    "power_of_two_members",
    "fold",
    "ring_allreduce_time",
    "ring_chain_times",
    "recursive_doubling_time",
    "binomial_tree_time",
    "double_binary_tree_time",
    "tree_height",
    "ALGORITHMS",
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
    builder = ScheduleBuilder(chunk_bytes, p)
    groups = [
        (order, [[((k * p + g) * chunks + j,) for j in range(chunks)] for g in range(p)])
        for k, order in enumerate(ring_orders(p, channels))
    ]
    ring_reduce_scatter(builder, groups, "reduce_scatter")
    ring_all_gather(builder, groups, "all_gather")
    params = {"chunks": chunks} if channels == 1 else {"chunks": chunks, "channels": channels}
    return builder.schedule("allreduce", "ring", params)


def power_of_two_members(nranks: int) -> tuple[int, list[int]]:
    """MPICH's folding of ``p`` ranks onto ``2^floor(log2 p)``: ``(rem, members)``.

    The first ``2 rem`` ranks pair up (even into odd) and the odd ones take part;
    ``members[i]`` is the rank playing new rank ``i``.
    """
    pof2 = 1 << (nranks.bit_length() - 1)
    rem = nranks - pof2
    return rem, [2 * i + 1 if i < rem else i + rem for i in range(pof2)]


def fold(builder: ScheduleBuilder, rem: int, pieces: Sequence[tuple[int, ...]], unfold: bool) -> None:
    """MPICH's fold (even ``r < 2 rem`` adds into ``r + 1``) or unfold (copy back)."""
    for r in range(rem):
        for piece in pieces:
            if unfold:
                builder.send(2 * r + 1, 2 * r, piece, "copy", "unfold")
            else:
                builder.send(2 * r, 2 * r + 1, piece, "reduce", "fold")


@gc_paused()
def recursive_doubling_allreduce(nranks: int, size_bytes: int, *, chunks: int = 1) -> Schedule:
    """Recursive-doubling all-reduce: ``log2 p`` pairwise exchanges of the whole payload.

    In step ``k`` every rank exchanges its partial sums with the rank at distance
    ``2^k`` and both add (a pairwise exchange, see :mod:`simnet.schedule`). When
    ``p`` is not a power of two, MPICH's way: with ``p' = 2^floor(log2 p)`` and
    ``rem = p - p'``, each even rank ``r < 2 rem`` first adds its whole payload
    into rank ``r + 1``; the other ``p'`` ranks run the power-of-two algorithm; the
    odd ranks finally copy the result back to their even neighbour.

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
    builder = ScheduleBuilder(split_bytes(size_bytes, chunks), nranks)
    pieces = [(j,) for j in range(chunks)]
    fold(builder, rem, pieces, unfold=False)
    mask = 1
    while mask < len(members):
        for i in range(len(members)):
            if i < i ^ mask:
                for piece in pieces:
                    builder.exchange(members[i], members[i ^ mask], piece, "reduce", f"exchange_{mask}")
        mask <<= 1
    fold(builder, rem, pieces, unfold=True)
    return builder.schedule("allreduce", "recursive_doubling", {"chunks": chunks})


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
    builder = ScheduleBuilder(split_bytes(size_bytes, chunks), nranks)
    trees = [(range(nranks), binomial_parents(nranks), [(j,) for j in range(chunks)])]
    tree_reduce(builder, trees, "reduce")
    tree_broadcast(builder, trees, "broadcast")
    return builder.schedule("allreduce", "binomial_tree", {"chunks": chunks})


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
        second = [None if first[(r - 1) % nranks] is None else (first[(r - 1) % nranks] + 1) % nranks
                  for r in range(nranks)]
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
    builder = ScheduleBuilder(chunk_bytes, nranks)
    trees = [
        (range(nranks), parents, [(t * chunks + j,) for j in range(chunks)])
        for t, parents in enumerate(double_binary_tree_parents(nranks))
    ]
    tree_reduce(builder, trees, "reduce")
    tree_broadcast(builder, trees, "broadcast")
    return builder.schedule("allreduce", "double_binary_tree", {"chunks": chunks})


def ring_allreduce_time(
    nranks: int,
    size_bytes: int,
    alpha_s: float | Sequence[float],
    beta_s_per_byte: float | Sequence[float],
    *,
    chunks: int = 1,
    gamma_s_per_byte: float = 0.0,
) -> float:
    """Time of ring all-reduce (reduce-scatter + all-gather), seconds.

    With ``L = 2 (p - 1)`` steps and messages of ``m = n / (p C)`` bytes
    (``C`` = ``chunks`` pipelined sub-chunks per segment)::

        T = max( L (α + m β) + (p - 1) m γ + (C - 1) m β ,   L C m β + α )

    The first term is the latency-bound pipeline (one sub-chunk crosses ``L`` hops,
    ``p - 1`` of them reductions, the other ``C - 1`` follow one occupancy ``m β``
    behind); the second is the bandwidth-bound one (every link carries ``L C``
    messages back to back, the last one arriving ``α`` later). For ``C = 1`` this
    is the textbook ``2 (p - 1) α + 2 (p - 1) / p · n β + (p - 1) / p · n γ``.

    When the hops differ (``α_h``, ``β_h`` for hop ``h -> h + 1``), segment ``g``
    crosses hops ``g .. g+p-2`` reducing and ``g-1 .. g+p-3`` gathering, so the
    latency-bound term takes the slowest such chain,
    ``max_g Σ_chain (α_h + m β_h)``, and the bandwidth-bound term the slowest hop
    (largest ``β_h``).

    The payload is split in whole bytes, so ``m`` is the largest piece,
    ``ceil(ceil(n / p) / C)``; for ``C = 1`` the formula stays exact when ``p``
    does not divide ``n``, because the largest segment is on the critical path.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Payload per rank ``n``, bytes.
    alpha_s : float or sequence of float
        Latency of a ring hop, seconds (or one per hop ``h -> h + 1``).
    beta_s_per_byte : float or sequence of float
        Inverse bandwidth of a ring hop, seconds per byte (or one per hop).
    chunks : int, optional
        Pipelined sub-chunks per segment ``C``.
    gamma_s_per_byte : float, optional
        Reduction cost ``γ``, seconds per byte.

    References
    ----------
    Patarasuk, P. and Yuan, X. (2009). Bandwidth optimal all-reduce algorithms for
    clusters of workstations. J. Parallel Distrib. Comput. 69(2), 117-124.
    Thakur, R., Rabenseifner, R. and Gropp, W. (2005). Optimization of collective
    communication operations in MPICH. Int. J. High Perform. Comput. Appl. 19(1), 49-66.
    """
    steps = 2 * (nranks - 1)
    message = math.ceil(math.ceil(size_bytes / nranks) / chunks)
    reductions = (nranks - 1) * message * gamma_s_per_byte
    if isinstance(alpha_s, (int, float)) and isinstance(beta_s_per_byte, (int, float)):
        occupancy = message * beta_s_per_byte
        latency_bound = steps * (alpha_s + occupancy) + reductions + (chunks - 1) * occupancy
        return max(latency_bound, steps * chunks * occupancy + alpha_s)
    alphas = np.broadcast_to(np.asarray(alpha_s, dtype=float), (nranks,))
    betas = np.broadcast_to(np.asarray(beta_s_per_byte, dtype=float), (nranks,))
    chains = ring_chain_times(alphas + message * betas)
    slowest = int(np.lexsort((alphas, betas))[-1])
    occupancy = message * betas[slowest]
    latency_bound = float(chains.max()) + reductions + (chunks - 1) * occupancy
    return max(latency_bound, steps * chunks * occupancy + float(alphas[slowest]))


def ring_chain_times(hop_s: np.ndarray) -> np.ndarray:
    """Time of one piece of each segment through a ring all-reduce whose hop ``h -> h + 1`` takes ``hop_s[h]``.

    Segment ``g`` is reduced over hops ``g .. g+p-2`` and gathered over hops
    ``g-1 .. g+p-3`` (indices mod ``p``, :func:`ring_allreduce`), so its chain is
    the sum of ``hop_s`` over both runs.

    Parameters
    ----------
    hop_s : numpy.ndarray
        Seconds per hop, shape ``(..., p)``: the last axis runs around one ring,
        leading axes index independent rings.

    Returns
    -------
    numpy.ndarray
        Seconds per segment, the shape of `hop_s`.
    """
    hop_s = np.asarray(hop_s, dtype=float)
    p = hop_s.shape[-1]
    hop = np.tile(hop_s, (1,) * (hop_s.ndim - 1) + (3,))
    prefix = np.concatenate([np.zeros(hop_s.shape[:-1] + (1,)), np.cumsum(hop, axis=-1)], axis=-1)
    g = np.arange(p) + p
    return (prefix[..., g + p - 1] - prefix[..., g]) + (prefix[..., g + p - 2] - prefix[..., g - 1])


def _folds(nranks: int) -> tuple[int, int]:
    rem, members = power_of_two_members(nranks)
    return len(members).bit_length() - 1, rem


def recursive_doubling_time(
    nranks: int, size_bytes: int, alpha_s: float, beta_s_per_byte: float, *, gamma_s_per_byte: float = 0.0
) -> float:
    """Time of recursive-doubling all-reduce, seconds.

    With ``p' = 2^k ≤ p`` the largest power of two and ``rem = p - p'``::

        T = k (α + n β + n γ) + [rem > 0] (2 α + 2 n β + n γ)

    ``k`` pairwise exchanges of the whole payload, plus MPICH's fold (the even
    ranks below ``2 rem`` add their data into their odd neighbour) and unfold
    (copy the result back).

    References
    ----------
    Thakur, R., Rabenseifner, R. and Gropp, W. (2005). Optimization of collective
    communication operations in MPICH. Int. J. High Perform. Comput. Appl. 19(1),
    49-66, §4.3.
    """
    levels, rem = _folds(nranks)
    n = size_bytes
    folded = (2 * alpha_s + 2 * n * beta_s_per_byte + n * gamma_s_per_byte) if rem else 0.0
    return levels * (alpha_s + n * beta_s_per_byte + n * gamma_s_per_byte) + folded


def tree_height(parents: Sequence[int | None]) -> int:
    """Largest number of edges from a node to the root of a tree given by `parents`."""
    height = 0
    for node in range(len(parents)):
        depth = 0
        while parents[node] is not None:
            node, depth = parents[node], depth + 1
        height = max(height, depth)
    return height


def binomial_tree_time(
    nranks: int,
    size_bytes: int,
    alpha_s: float,
    beta_s_per_byte: float,
    *,
    chunks: int = 1,
    gamma_s_per_byte: float = 0.0,
) -> float:
    """Time of binomial-tree reduce + broadcast all-reduce, seconds.

    With ``L = ceil(log2 p)`` and pieces ``m = n / C``::

        T = 2 L (α + m β) + L m γ + (C - 1) L m β

    The root receives (and later sends) ``L`` messages per piece, so successive
    pieces follow ``L m β`` apart. Exact for ``C = 1`` without contention; for
    ``C > 1`` the pipelined estimate of Thakur et al.

    References
    ----------
    Thakur, R., Rabenseifner, R. and Gropp, W. (2005). Optimization of collective
    communication operations in MPICH. Int. J. High Perform. Comput. Appl. 19(1), 49-66.
    """
    depth = math.ceil(math.log2(nranks))
    m = math.ceil(size_bytes / chunks)
    return 2 * depth * (alpha_s + m * beta_s_per_byte) + depth * m * gamma_s_per_byte + (
        chunks - 1
    ) * depth * m * beta_s_per_byte


def double_binary_tree_time(
    nranks: int,
    size_bytes: int,
    alpha_s: float,
    beta_s_per_byte: float,
    *,
    chunks: int = 1,
    gamma_s_per_byte: float = 0.0,
) -> float:
    """Time of NCCL's double-binary-tree all-reduce, seconds.

    Each tree carries half the payload in ``C`` pieces of ``m = n / (2 C)`` bytes;
    with ``h`` the larger tree height::

        T = 2 h (α + m β) + h m γ + (C - 1) · 4 m β

    The first terms are one piece's way up and down a tree without contention; in
    steady state the busiest port (an inner node of one tree, a leaf of the other)
    carries ``4 m`` bytes per piece each way, ``2 n`` in all (Sanders et al. 2009:
    the two-tree all-reduce moves ``2 n`` per port, like the ring's
    ``2 (p - 1) / p · n``). Exact for ``C = 1`` when no two transfers share a link.

    References
    ----------
    Sanders, P., Speck, J. and Träff, J. L. (2009). Two-tree algorithms for full
    bandwidth broadcast, reduction and scan. Parallel Computing 35(12), 581-594.
    """
    height = max(tree_height(parents) for parents in double_binary_tree_parents(nranks))
    m = math.ceil(math.ceil(size_bytes / 2) / chunks)
    return (
        2 * height * (alpha_s + m * beta_s_per_byte)
        + height * m * gamma_s_per_byte
        + (chunks - 1) * 4 * m * beta_s_per_byte
    )


def _ring_model(costs: PairCosts, nranks: int, size_bytes: int, *, chunks: int = 1, channels: int = 1,
                gamma_s_per_byte: float = 0.0) -> float:
    part = math.ceil(size_bytes / channels)
    orders = ring_orders(nranks, channels)
    hops_all = costs.pairs([pair for order in orders for pair in ring_pairs(order)])
    times = []
    for k in range(channels):
        hops = hops_all[k * nranks : (k + 1) * nranks]
        alphas = [a for a, _, _ in hops]
        betas = [b * s for _, b, s in hops]
        if len(set(alphas)) == 1 and len(set(betas)) == 1:
            alphas, betas = alphas[0], betas[0]
        times.append(ring_allreduce_time(nranks, part, alphas, betas, chunks=chunks, gamma_s_per_byte=gamma_s_per_byte))
    return max(times)


def fold_time(costs: PairCosts, rem: int, size_bytes: int, gamma_s_per_byte: float) -> float:
    """Time of MPICH's fold and unfold of `rem` pairs moving the whole payload, seconds."""
    if not rem:
        return 0.0
    down = costs.step([(2 * r, 2 * r + 1) for r in range(rem)], size_bytes)
    up = costs.step([(2 * r + 1, 2 * r) for r in range(rem)], size_bytes)
    return sum(a + size_bytes * b * s for a, b, s in (down, up)) + size_bytes * gamma_s_per_byte


def fold_steps(rem: int, message_bytes: float, gamma_s_per_byte: float) -> tuple[tuple, tuple]:
    """MPICH's fold and unfold as steps of :func:`steps_time` (empty when ``rem = 0``)."""
    if not rem:
        return (), ()
    fold_pairs = [(2 * r, 2 * r + 1) for r in range(rem)]
    unfold_pairs = [(2 * r + 1, 2 * r) for r in range(rem)]
    return ((fold_pairs, message_bytes, message_bytes * gamma_s_per_byte),), ((unfold_pairs, message_bytes, 0.0),)


def _recursive_doubling_model(costs: PairCosts, nranks: int, size_bytes: int, *, chunks: int = 1,
                              gamma_s_per_byte: float = 0.0) -> float:
    rem, members = power_of_two_members(nranks)
    m = math.ceil(size_bytes / chunks)
    folded, unfolded = fold_steps(rem, m, gamma_s_per_byte)
    steps = list(folded)
    mask = 1
    while mask < len(members):
        steps.append(([(members[i], members[i ^ mask]) for i in range(len(members))], m, m * gamma_s_per_byte))
        mask <<= 1
    return steps_time(costs, [*steps, *unfolded], chunks)


def _binomial_rounds(nranks: int) -> list[list[tuple[int, int]]]:
    rounds = []
    mask = 1
    while mask < nranks:
        rounds.append([(r, r - mask) for r in range(mask, nranks, 2 * mask)])
        mask <<= 1
    return rounds


def _binomial_tree_model(costs: PairCosts, nranks: int, size_bytes: int, *, chunks: int = 1,
                         gamma_s_per_byte: float = 0.0) -> float:
    m = math.ceil(size_bytes / chunks)
    rounds = _binomial_rounds(nranks)
    up = [(pairs, m, m * gamma_s_per_byte) for pairs in rounds]
    down = [([(d, s) for s, d in pairs], m, 0.0) for pairs in reversed(rounds)]
    return steps_time(costs, [*up, *down], chunks)


def _double_binary_tree_model(costs: PairCosts, nranks: int, size_bytes: int, *, chunks: int = 1,
                              gamma_s_per_byte: float = 0.0) -> float:
    edges = [(child, parent) for parents in double_binary_tree_parents(nranks)
             for child, parent in enumerate(parents) if parent is not None]
    alpha, beta = tree_alpha_beta(costs, edges, math.ceil(size_bytes / (2 * chunks)))
    return double_binary_tree_time(nranks, size_bytes, alpha, beta, chunks=chunks, gamma_s_per_byte=gamma_s_per_byte)


def _ring_variants(nranks, factors, chunk_counts, channel_counts) -> list[dict]:
    return [{"chunks": chunks, "channels": channels} for chunks in chunk_counts for channels in channel_counts]


def _exchange_transfers(nranks: int, size_bytes: int, params) -> int:
    return (2 * nranks * max(1, math.ceil(math.log2(nranks))) + 2 * nranks) * int(params.get("chunks", 1))


def _tree_allreduce_transfers(nranks: int, size_bytes: int, params) -> int:
    return 4 * nranks * int(params.get("chunks", 1))


_SANDERS = ("Sanders, P., Speck, J. and Träff, J. L. (2009). Two-tree algorithms for full bandwidth broadcast, "
            "reduction and scan. Parallel Computing 35(12), 581-594.")

ALGORITHMS = (
    Algorithm(
        "ring", ("allreduce",), ring_allreduce,
        "ring reduce-scatter + all-gather, optionally over several channel rings",
        "2(p-1)α + 2(p-1)/p·nβ + (p-1)/p·nγ   [C = K = 1; pipelined: max(L(α + mβ) + (p-1)mγ + (C-1)mβ, "
        "LCmβ + α), L = 2(p-1), m = n/(pCK)]",
        model=_ring_model,
        citation="Patarasuk, P. and Yuan, X. (2009). Bandwidth optimal all-reduce algorithms for clusters of "
                 "workstations. J. Parallel Distrib. Comput. 69(2), 117-124.",
        variants=_ring_variants,
    ),
    Algorithm(
        "recursive_doubling", ("allreduce",), recursive_doubling_allreduce,
        "log2 p pairwise exchanges of the whole payload (MPICH folding for non powers of two)",
        "log2(p')·(α + nβ + nγ) + fold   [C = 1, p' = 2^⌊log2 p⌋; pipelined over steps for C > 1]",
        model=_recursive_doubling_model, citation=_THAKUR, variants=chunk_variants, transfers=_exchange_transfers,
    ),
    Algorithm(
        "binomial_tree", ("allreduce",), binomial_tree_allreduce,
        "binomial-tree reduce to rank 0, then binomial-tree broadcast",
        "2L(α + nβ) + Lnγ   [L = ⌈log2 p⌉, C = 1; pipelined over rounds for C > 1]",
        model=_binomial_tree_model, citation=_THAKUR, variants=chunk_variants, transfers=_tree_allreduce_transfers,
    ),
    Algorithm(
        "double_binary_tree", ("allreduce",), double_binary_tree_allreduce,
        "NCCL's two complementary binary trees, each reducing and broadcasting half the data",
        "2h(α + mβ) + hmγ + (C-1)·4mβ   [h = tree height, m = n/(2C), contention-free]",
        model=_double_binary_tree_model, citation=_SANDERS, variants=chunk_variants,
        transfers=_tree_allreduce_transfers,
    ),
)
"""Registry records of the flat all-reduce algorithms."""
