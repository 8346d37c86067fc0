"""Cost models of collective algorithms: closed-form α-β and the critical path of any schedule.

Every closed form is a pure function of the number of ranks ``p``, the payload
``n`` (bytes), a per-message latency ``α`` (seconds), an inverse bandwidth ``β``
(seconds per byte) and a reduction cost ``γ`` (seconds per byte, default 0). The
reduction convention is the engine's: a ``"reduce"`` transfer of ``m`` bytes
completes ``m γ`` after its last byte arrives, and reductions are not serialized
with other transfers. Formulas are for ``chunks = 1`` unless said otherwise.

:func:`predict` derives ``α`` and ``β`` from a network (per step or per level:
``α`` is the route latency of the slowest transfer of a step, ``β`` the inverse
bottleneck bandwidth times the number of the step's transfers that share that
link, see :func:`pair_alpha_beta`; the ring and the binomial tree sum their
hops or rounds) and evaluates the model of a named algorithm,
so that a simulation can be set beside its closed form.

:func:`critical_path_time` models *any* schedule without a hand formula: the
longest path through the transfer DAG when every transfer costs ``α + n β`` on
its own route (plus ``n γ`` for reductions), i.e. without contention.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import MappingProxyType

import numpy as np
import pandas as pd

from simnet.algorithms.dense import (
    btree_parents,
    check_factors,
    double_binary_tree_parents,
    level_groups,
    power_of_two_members,
    ring_orders,
    square_factors,
)
from simnet.algorithms.primitives import binomial_parents
from simnet.errors import SimnetError
from simnet.network import Network
from simnet.payloads import SparsePayload
from simnet.schedule import Schedule

__all__ = [
    "ring_allreduce_time",
    "recursive_doubling_time",
    "halving_doubling_time",
    "binomial_tree_time",
    "double_binary_tree_time",
    "hierarchical_ring_time",
    "blueconnect_time",
    "tree_height",
    "ring_hop_alpha_beta",
    "pair_alpha_beta",
    "step_alpha_beta",
    "blueconnect_levels",
    "critical_path_finish_s",
    "critical_path_time",
    "predict",
    "MODELS",
    "expected_density",
    "sparse_message_bytes",
    "sparse_ring_allreduce_time",
    "sparse_ring_ring_allreduce_time",
    "topk_allgather_time",
    "ssar_recursive_doubling_time",
    "split_allgather_time",
    "gtopk_time",
    "pattern_alpha_beta",
    "sparse_fill_in",
    "SPARSE_MODELS",
]


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
    hop = np.tile(alphas + message * betas, 3)
    prefix = np.concatenate([[0.0], np.cumsum(hop)])
    g = np.arange(nranks) + nranks
    chains = (prefix[g + nranks - 1] - prefix[g]) + (prefix[g + nranks - 2] - prefix[g - 1])
    slowest = int(np.lexsort((alphas, betas))[-1])
    occupancy = message * betas[slowest]
    latency_bound = float(chains.max()) + reductions + (chunks - 1) * occupancy
    return max(latency_bound, steps * chunks * occupancy + float(alphas[slowest]))


def _fold(nranks: int) -> tuple[int, int]:
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
    levels, rem = _fold(nranks)
    n = size_bytes
    fold = (2 * alpha_s + 2 * n * beta_s_per_byte + n * gamma_s_per_byte) if rem else 0.0
    return levels * (alpha_s + n * beta_s_per_byte + n * gamma_s_per_byte) + fold


def halving_doubling_time(
    nranks: int, size_bytes: int, alpha_s: float, beta_s_per_byte: float, *, gamma_s_per_byte: float = 0.0
) -> float:
    """Time of Rabenseifner's halving-doubling all-reduce, seconds.

    With ``p' = 2^k ≤ p``, ``rem = p - p'`` and messages ``m_j = ceil(n / 2^j)``::

        T = Σ_{j=1..k} (2 α + 2 m_j β + m_j γ) + [rem > 0] (2 α + 2 n β + n γ)
          = 2 k α + 2 (p' - 1) / p' · n β + (p' - 1) / p' · n γ + fold     (2^k | n)

    Exact when ``2^k`` divides ``n``; otherwise an upper bound by at most a few
    bytes' worth of ``β``.

    References
    ----------
    Thakur, R., Rabenseifner, R. and Gropp, W. (2005). Optimization of collective
    communication operations in MPICH. Int. J. High Perform. Comput. Appl. 19(1),
    49-66, §4.4 (Rabenseifner's algorithm).
    """
    levels, rem = _fold(nranks)
    total = 0.0
    for j in range(1, levels + 1):
        m = math.ceil(size_bytes / (1 << j))
        total += 2 * alpha_s + 2 * m * beta_s_per_byte + m * gamma_s_per_byte
    if rem:
        total += 2 * alpha_s + 2 * size_bytes * beta_s_per_byte + size_bytes * gamma_s_per_byte
    return total


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


def hierarchical_ring_time(
    local_ranks: int,
    nodes: int,
    size_bytes: int,
    intra_alpha_s: float,
    intra_beta_s_per_byte: float,
    inter_alpha_s: float,
    inter_beta_s_per_byte: float,
    *,
    gamma_s_per_byte: float = 0.0,
) -> float:
    """Time of the hierarchical ring all-reduce (``chunks = 1``), seconds.

    With ``L = ceil(log2 p1)`` for ``p1`` ranks per node and ``N`` nodes::

        T = L (α1 + n β1 + n γ) + T_ring(N, n; α2, β2, γ) + L (α1 + n β1)

    a binomial reduce inside each node, the ring all-reduce
    (:func:`ring_allreduce_time`) among the ``N`` leaders, and a binomial
    broadcast inside each node.

    References
    ----------
    Thakur, R., Rabenseifner, R. and Gropp, W. (2005); Patarasuk, P. and Yuan, X.
    (2009) for the ring term.
    """
    depth = math.ceil(math.log2(local_ranks)) if local_ranks > 1 else 0
    n = size_bytes
    intra = depth * (2 * intra_alpha_s + 2 * n * intra_beta_s_per_byte + n * gamma_s_per_byte)
    inter = (
        ring_allreduce_time(nodes, n, inter_alpha_s, inter_beta_s_per_byte, gamma_s_per_byte=gamma_s_per_byte)
        if nodes > 1
        else 0.0
    )
    return intra + inter


def blueconnect_time(
    size_bytes: int,
    factors: Sequence[int],
    alphas_s: Sequence[float],
    betas_s_per_byte: Sequence[float],
    *,
    sharing: Sequence[float] | None = None,
    gamma_s_per_byte: float = 0.0,
) -> float:
    """Time of BlueConnect (and of the 2D-torus all-reduce), seconds: a sum over levels.

    With group sizes ``p_i``, per-level latency ``α_i``, inverse bandwidth ``β_i``
    and link-sharing factor ``s_i`` (how many of the level's concurrent groups'
    transfers cross the same bottleneck link), ``m_i = n / (p_1 ... p_i)`` the bytes
    per message at level ``i`` and ``S_i = 2 (p_i - 1)`` ring steps per level::

        T   = Σ_i T_i
        T_i = max( S_i (α_i + m_i β_i) + (s_i - 1) m_i β_i ,  S_i s_i m_i β_i + α_i ) + (p_i - 1) m_i γ

    a ring reduce-scatter and a ring all-gather per level (Cho et al. 2019). The
    ``s_i`` groups sharing a link interleave on it like pipelined chunks of one ring
    (compare :func:`ring_allreduce_time` with ``C = s_i``): either one group's chain
    of steps is the bottleneck, or the shared link, busy back to back. Cho et al.'s
    per-step form ``S_i (α_i + m_i β_i s_i)`` is the upper bound that also charges
    the latency ``s_i`` times. One level gives the ring, all ``p_i = 2`` the
    halving-doubling; with ``s_i = 1`` everything reduces to
    ``Σ_i 2 (p_i - 1)(α_i + m_i β_i) + (p_i - 1) m_i γ``.

    Parameters
    ----------
    size_bytes : int
        Payload per rank ``n``, bytes.
    factors : sequence of int
        ``p_1 .. p_k``.
    alphas_s, betas_s_per_byte : sequence of float
        ``α_i`` (s) and ``β_i`` (s/byte) per level.
    sharing : sequence of float, optional
        ``s_i`` per level (default all 1).
    gamma_s_per_byte : float, optional
        ``γ``, seconds per byte.

    References
    ----------
    Cho, M., Finkler, U., Serrano, M., Kung, D. and Hunter, H. (2019). BlueConnect:
    Decomposing all-reduce for deep learning on heterogeneous network hierarchy.
    IBM J. Res. Dev. 63(6), 1:1-1:11.
    """
    sharing = [1.0] * len(factors) if sharing is None else sharing
    total, share = 0.0, size_bytes
    for p_i, alpha, beta, s in zip(factors, alphas_s, betas_s_per_byte, sharing):
        share = math.ceil(share / p_i)
        total += _level_time(p_i, share, alpha, beta, s) + (p_i - 1) * share * gamma_s_per_byte
    return total


def _level_time(group_size: int, message_bytes: int, alpha: float, beta: float, sharing: float) -> float:
    """Ring reduce-scatter + all-gather of one level whose groups share links `sharing` ways."""
    steps = 2 * (group_size - 1)
    if steps == 0:
        return 0.0
    occupancy = message_bytes * beta
    return max(steps * (alpha + occupancy) + (sharing - 1) * occupancy, steps * sharing * occupancy + alpha)


def ring_hop_alpha_beta(network: Network, nranks: int, message_bytes: float) -> tuple[float, float]:
    """α and β of the slowest hop ``r -> r + 1`` of the ring over ranks ``0 .. p-1``.

    The slowest hop is the one with the largest ``α + m β`` for messages of
    ``message_bytes``; ``α`` is its route latency and ``β`` the inverse of its
    bottleneck bandwidth.

    Returns
    -------
    tuple of float
        ``(alpha_s, beta_s_per_byte)``.
    """
    hops = [
        (network.route_latency_s(r, (r + 1) % nranks), 1.0 / network.route_bandwidth_Bps(r, (r + 1) % nranks))
        for r in range(nranks)
    ]
    return max(hops, key=lambda ab: ab[0] + message_bytes * ab[1])


def pair_alpha_beta(
    network: Network, pairs: Sequence[tuple[int, int]]
) -> list[tuple[float, float, float]]:
    """α, β and link-sharing factor of each of concurrent transfers.

    Every ``(src, dst)`` pair sends at once. A link crossed by ``k`` of them gives
    each ``1 / k`` of its bandwidth (fair sharing; FIFO finishes the last one at the
    same time), so a transfer's effective inverse bandwidth is ``max over its
    links of k / bandwidth``.

    Returns
    -------
    list of tuple of float
        Per pair ``(alpha_s, beta_s_per_byte, sharing)``: route latency, inverse
        bottleneck bandwidth ``1 / B`` and the factor ``s ≥ 1`` such that a message
        of ``m`` bytes takes ``α + m β s``.
    """
    load: dict[int, int] = {}
    routes = [network.route(s, d) for s, d in pairs]
    for route in routes:
        for link in route:
            load[link] = load.get(link, 0) + 1
    result = []
    for (s, d), route in zip(pairs, routes):
        if not route:
            result.append((0.0, 0.0, 1.0))
            continue
        beta = 1.0 / network.route_bandwidth_Bps(s, d)
        effective = max(load[link] / network.bandwidth_Bps[link] for link in route)
        result.append((network.route_latency_s(s, d), beta, effective / beta))
    return result


def step_alpha_beta(
    network: Network, pairs: Sequence[tuple[int, int]], message_bytes: float
) -> tuple[float, float, float]:
    """α, β and link-sharing factor of the slowest of concurrent transfers.

    The slowest transfer of :func:`pair_alpha_beta` is the one maximising
    ``α + m β s`` for messages of ``m = message_bytes``; the step takes that long.

    Returns
    -------
    tuple of float
        ``(alpha_s, beta_s_per_byte, sharing)``; ``(0, 0, 1)`` for no pairs.
    """
    costs = pair_alpha_beta(network, pairs)
    return max(costs, key=lambda c: c[0] + message_bytes * c[1] * c[2], default=(0.0, 0.0, 1.0))


def _ring_pairs(members: Sequence[int]) -> list[tuple[int, int]]:
    return [(members[i], members[(i + 1) % len(members)]) for i in range(len(members))] if len(members) > 1 else []


def _ring(
    network: Network, nranks: int, size_bytes: int, *, chunks: int = 1, channels: int = 1, gamma_s_per_byte: float = 0.0
) -> float:
    part = math.ceil(size_bytes / channels)
    orders = ring_orders(nranks, channels)
    costs = pair_alpha_beta(network, [pair for order in orders for pair in _ring_pairs(order)])
    times = []
    for k in range(channels):
        hops = costs[k * nranks : (k + 1) * nranks]
        alphas = [a for a, _, _ in hops]
        betas = [b * s for _, b, s in hops]
        if len(set(alphas)) == 1 and len(set(betas)) == 1:
            alphas, betas = alphas[0], betas[0]
        times.append(ring_allreduce_time(nranks, part, alphas, betas, chunks=chunks, gamma_s_per_byte=gamma_s_per_byte))
    return max(times)


def _fold_time(network: Network, rem: int, size_bytes: int, gamma: float) -> float:
    if not rem:
        return 0.0
    down = step_alpha_beta(network, [(2 * r, 2 * r + 1) for r in range(rem)], size_bytes)
    up = step_alpha_beta(network, [(2 * r + 1, 2 * r) for r in range(rem)], size_bytes)
    return sum(a + size_bytes * b * s for a, b, s in (down, up)) + size_bytes * gamma


def _recursive_doubling(
    network: Network, nranks: int, size_bytes: int, *, chunks: int = 1, gamma_s_per_byte: float = 0.0
) -> float:
    rem, members = power_of_two_members(nranks)
    m = math.ceil(size_bytes / chunks)
    total = _fold_time(network, rem, size_bytes, gamma_s_per_byte)
    mask = 1
    while mask < len(members):
        pairs = [(members[i], members[i ^ mask]) for i in range(len(members))]
        alpha, beta, sharing = step_alpha_beta(network, pairs, m)
        total += alpha + m * beta * sharing + m * gamma_s_per_byte + (chunks - 1) * m * beta * sharing
        mask <<= 1
    return total


def _halving_doubling(
    network: Network, nranks: int, size_bytes: int, *, chunks: int = 1, gamma_s_per_byte: float = 0.0
) -> float:
    rem, members = power_of_two_members(nranks)
    levels = len(members).bit_length() - 1
    alphas, betas, sharing = _level_alpha_beta(network, members, [2] * levels, size_bytes)
    return _fold_time(network, rem, size_bytes, gamma_s_per_byte) + blueconnect_time(
        size_bytes, [2] * levels, alphas, betas, sharing=sharing, gamma_s_per_byte=gamma_s_per_byte
    )


def _tree_alpha_beta(network: Network, trees: Sequence[Sequence[int | None]], message_bytes: float):
    edges = [(child, parent) for parents in trees for child, parent in enumerate(parents) if parent is not None]
    alpha, beta, _ = max(
        (step_alpha_beta(network, [edge], message_bytes) for edge in edges),
        key=lambda abs_: abs_[0] + message_bytes * abs_[1],
    )
    return alpha, beta


def _binomial_tree(
    network: Network, nranks: int, size_bytes: int, *, chunks: int = 1, gamma_s_per_byte: float = 0.0
) -> float:
    m = math.ceil(size_bytes / chunks)
    rounds = []
    mask = 1
    while mask < nranks:
        pairs = [(r, r - mask) for r in range(mask, nranks, 2 * mask)]
        alpha, beta, sharing = step_alpha_beta(network, pairs, m)
        rounds.append((alpha, beta * sharing))
        mask <<= 1
    occupancy = sum(m * beta for _, beta in rounds)
    return sum(2 * (alpha + m * beta) for alpha, beta in rounds) + len(rounds) * m * gamma_s_per_byte + (
        chunks - 1
    ) * occupancy


def _double_binary_tree(
    network: Network, nranks: int, size_bytes: int, *, chunks: int = 1, gamma_s_per_byte: float = 0.0
) -> float:
    trees = double_binary_tree_parents(nranks)
    alpha, beta = _tree_alpha_beta(network, trees, math.ceil(size_bytes / (2 * chunks)))
    return double_binary_tree_time(
        nranks, size_bytes, alpha, beta, chunks=chunks, gamma_s_per_byte=gamma_s_per_byte
    )


def _hierarchical_ring(
    network: Network,
    nranks: int,
    size_bytes: int,
    *,
    factors: Sequence[int] | None = None,
    chunks: int = 1,
    gamma_s_per_byte: float = 0.0,
) -> float:
    factors = check_factors(nranks, factors, default=(1, nranks))
    local, nodes = factors[0], nranks // factors[0]
    intra_alpha, intra_beta = 0.0, 0.0
    if local > 1:
        forest = [
            None if parent is None else rank - rank % local + parent
            for rank, parent in ((r, binomial_parents(local)[r % local]) for r in range(nranks))
        ]
        intra_alpha, intra_beta = _tree_alpha_beta(network, [forest], size_bytes)
    leaders = list(range(0, nranks, local))
    inter_alpha, inter_beta, sharing = step_alpha_beta(
        network, _ring_pairs(leaders), math.ceil(size_bytes / nodes)
    )
    return hierarchical_ring_time(
        local,
        nodes,
        size_bytes,
        intra_alpha,
        intra_beta,
        inter_alpha,
        inter_beta * sharing,
        gamma_s_per_byte=gamma_s_per_byte,
    )


def _level_alpha_beta(
    network: Network, members: Sequence[int], factors: Sequence[int], size_bytes: int
) -> tuple[list[float], list[float], list[float]]:
    alphas, betas, sharing = [], [], []
    share = size_bytes
    for level, p_i in enumerate(factors):
        share = math.ceil(share / p_i)
        pairs = [
            pair
            for positions in level_groups(factors, level)
            for pair in _ring_pairs([members[q] for q in positions])
        ]
        alpha, beta, s = step_alpha_beta(network, pairs, share) if pairs else (0.0, 0.0, 1.0)
        alphas.append(alpha)
        betas.append(beta)
        sharing.append(s)
    return alphas, betas, sharing


def blueconnect_levels(
    network: Network,
    nranks: int,
    size_bytes: int,
    factors: Sequence[int] | None = None,
    *,
    gamma_s_per_byte: float = 0.0,
) -> pd.DataFrame:
    """Per-level cost breakdown of BlueConnect on `network` (Cho et al. 2019).

    Returns
    -------
    pandas.DataFrame
        One row per level: ``level`` (1-based), ``group_size`` ``p_i``, ``groups``
        (``p / p_i`` concurrent groups), ``message_bytes`` ``m_i``, ``alpha_s``,
        ``beta_s_per_byte``, ``sharing`` ``s_i``, ``reduce_scatter_s`` and
        ``all_gather_s`` (half the level's communication time ``T_i`` of
        :func:`blueconnect_time` each, plus ``(p_i - 1) m_i γ`` for the
        reduce-scatter) and ``time_s`` (their sum). The column ``time_s`` sums to
        :func:`blueconnect_time`.
    """
    factors = check_factors(nranks, factors)
    alphas, betas, sharing = _level_alpha_beta(network, range(nranks), factors, size_bytes)
    rows, share = [], size_bytes
    for level, (p_i, alpha, beta, s) in enumerate(zip(factors, alphas, betas, sharing)):
        share = math.ceil(share / p_i)
        communication = _level_time(p_i, share, alpha, beta, s)
        reduce_scatter_s = communication / 2 + (p_i - 1) * share * gamma_s_per_byte
        all_gather_s = communication / 2
        rows.append(
            {
                "level": level + 1,
                "group_size": p_i,
                "groups": nranks // p_i,
                "message_bytes": share,
                "alpha_s": alpha,
                "beta_s_per_byte": beta,
                "sharing": s,
                "reduce_scatter_s": reduce_scatter_s,
                "all_gather_s": all_gather_s,
                "time_s": reduce_scatter_s + all_gather_s,
            }
        )
    return pd.DataFrame(rows)


def _blueconnect(
    network: Network,
    nranks: int,
    size_bytes: int,
    *,
    factors: Sequence[int] | None = None,
    chunks: int = 1,
    gamma_s_per_byte: float = 0.0,
) -> float:
    levels = blueconnect_levels(network, nranks, size_bytes, factors, gamma_s_per_byte=gamma_s_per_byte)
    return float(levels["time_s"].sum())


def _torus_2d(
    network: Network,
    nranks: int,
    size_bytes: int,
    *,
    factors: Sequence[int] | None = None,
    chunks: int = 1,
    gamma_s_per_byte: float = 0.0,
) -> float:
    factors = check_factors(nranks, factors, default=square_factors(nranks))
    return _blueconnect(network, nranks, size_bytes, factors=factors, gamma_s_per_byte=gamma_s_per_byte)


def _reduce_scatter(
    network: Network, nranks: int, size_bytes: int, *, chunks: int = 1, gamma_s_per_byte: float = 0.0
) -> float:
    message = math.ceil(size_bytes / nranks)
    alpha, beta, sharing = step_alpha_beta(network, _ring_pairs(range(nranks)), message)
    return (nranks - 1) * (alpha + message * (beta * sharing + gamma_s_per_byte))


def _all_gather(
    network: Network, nranks: int, size_bytes: int, *, chunks: int = 1, gamma_s_per_byte: float = 0.0
) -> float:
    return _reduce_scatter(network, nranks, size_bytes)


def _rooted(op: str):
    def model(
        network: Network,
        nranks: int,
        size_bytes: int,
        *,
        root: int = 0,
        chunks: int = 1,
        gamma_s_per_byte: float = 0.0,
    ) -> float:
        parents = [None if p is None else (root + p) % nranks for p in binomial_parents(nranks)]
        rooted = [None] * nranks
        for position, parent in enumerate(parents):
            rooted[(root + position) % nranks] = parent
        alpha, beta = _tree_alpha_beta(network, [rooted], size_bytes)
        depth = math.ceil(math.log2(nranks))
        gamma = gamma_s_per_byte if op == "reduce" else 0.0
        return depth * (alpha + size_bytes * (beta + gamma))

    return model


MODELS = MappingProxyType(
    {
        "ring": _ring,
        "recursive_doubling": _recursive_doubling,
        "halving_doubling": _halving_doubling,
        "binomial_tree": _binomial_tree,
        "double_binary_tree": _double_binary_tree,
        "hierarchical_ring": _hierarchical_ring,
        "torus_2d": _torus_2d,
        "blueconnect": _blueconnect,
        "reduce_scatter": _reduce_scatter,
        "all_gather": _all_gather,
        "broadcast": _rooted("broadcast"),
        "reduce": _rooted("reduce"),
    }
)


def predict(algorithm: str, network: Network, nranks: int, size_bytes: int, **params) -> float:
    """Closed-form time of `algorithm` on `network`, seconds.

    Parameters
    ----------
    algorithm : str
        Name as in :data:`simnet.algorithms.ALGORITHMS`.
    network : Network
        Supplies α and β (see :func:`step_alpha_beta`).
    nranks : int
        Ranks taking part.
    size_bytes : int
        Payload per rank, bytes.
    **params
        The algorithm's parameters (e.g. ``chunks``, ``factors``, ``channels``) and
        ``gamma_s_per_byte``.
    """
    if algorithm not in MODELS:
        raise SimnetError(f"no closed-form model for algorithm {algorithm!r}")
    return MODELS[algorithm](network, nranks, size_bytes, **params)


def _pair_costs(network: Network, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Route latency and inverse bottleneck bandwidth of every (src, dst)."""
    size = network.size
    keys = src * size + dst
    present = np.zeros(size * size, dtype=bool)
    present[keys] = True
    latency = np.zeros(size * size)
    inverse_bw = np.zeros(size * size)
    for key in np.flatnonzero(present).tolist():
        s, d = divmod(key, size)
        latency[key] = network.route_latency_s(s, d)
        inverse_bw[key] = 1.0 / network.route_bandwidth_Bps(s, d)
    return latency[keys], inverse_bw[keys]


def critical_path_finish_s(
    network: Network, schedule: Schedule, *, gamma_s_per_byte: float | Sequence[float] = 0.0
) -> np.ndarray:
    """Finishing instant of every transfer without contention, seconds.

    Transfer ``i`` starts when its last dependency finishes and takes
    ``α_i + n_i β_i`` on its own route (route latency, inverse bottleneck
    bandwidth), plus ``n_i γ[dst]`` for a reduction. Dependencies point to earlier
    transfers, so the schedule is cut into consecutive blocks whose dependencies
    all lie in earlier blocks, and each block is one vectorized step.

    Parameters
    ----------
    network : Network
        Supplies routes.
    schedule : Schedule
        Any schedule.
    gamma_s_per_byte : float or sequence of float, optional
        Reduction cost γ of every rank, or per rank, seconds per byte.
    """
    count = len(schedule)
    if count == 0:
        return np.zeros(0)
    columns = schedule.columns
    src, dst, nbytes, reduce = columns.src, columns.dst, columns.nbytes, columns.reduce
    no_deps = np.diff(columns.dep_offsets) == 0
    ndeps = np.where(no_deps, 1, np.diff(columns.dep_offsets))
    deps = np.insert(columns.deps, columns.dep_offsets[:-1][no_deps], count)
    gamma = np.broadcast_to(np.asarray(gamma_s_per_byte, dtype=float), (schedule.nranks,))
    latency, inverse_bw = _pair_costs(network, src, dst)
    duration = latency + nbytes * inverse_bw + np.where(reduce, nbytes * gamma[dst], 0.0)

    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(ndeps, out=offsets[1:])
    last_dep = np.maximum.reduceat(np.where(deps == count, -1, deps), offsets[:-1])
    reach = np.maximum.accumulate(last_dep)
    finish = np.zeros(count + 1)
    start = 0
    while start < count:
        stop = int(np.searchsorted(reach, start, side="left"))
        stop = max(stop, start + 1)
        lo, hi = offsets[start], offsets[stop]
        ready = np.maximum.reduceat(finish[deps[lo:hi]], offsets[start:stop] - lo)
        finish[start:stop] = ready + duration[start:stop]
        start = stop
    return finish[:count]


def critical_path_time(
    network: Network, schedule: Schedule, gamma_s_per_byte: float | Sequence[float] = 0.0
) -> float:
    """Contention-free completion time of any schedule, seconds.

    The longest path through the transfer DAG, each transfer costing
    ``α + n β`` on its own route (``+ n γ`` for a reduction; see
    :func:`critical_path_finish_s`). It ignores that transfers sharing a link
    slow each other down, so it is a lower bound of the simulated time, and equal
    to it when no two transfers use a link at the same time.
    """
    finish = critical_path_finish_s(network, schedule, gamma_s_per_byte=gamma_s_per_byte)
    return float(finish.max()) if len(finish) else 0.0


# Sparse all-reduce (issue 5): α-β models with the expected fill-in of uniform indices.

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
    nranks: int, payload: SparsePayload, alpha_s: float, beta_s_per_byte: float, *, gamma_s_per_byte: float = 0.0
) -> float:
    """Ring reduce-scatter + all-gather on sparse segments, seconds.

    With ``p`` ranks and segments of ``n = N / p`` entries, reduce-scatter step ``s``
    carries the sum of ``s`` vectors and the all-gather the sum of all ``p``::

        T = Σ_{s=1}^{p-1} (α + S(N/p, s) β) + (p - 1) (α + S(N/p, p) β)

    References
    ----------
    Patarasuk & Yuan (2009) for the ring; Renggli et al. (2019), SparCML, for the
    sparse/dense switch; Nguyen, Wahib & Takano (2019), Sec. III, for the fill-in.
    """
    d, n, enc = payload.k / payload.dimension, payload.dimension / nranks, _encoding(payload)
    reduce = beta_s_per_byte + gamma_s_per_byte
    steps = sum(alpha_s + sparse_message_bytes(n, d, s, **enc) * reduce for s in range(1, nranks))
    return steps + (nranks - 1) * (alpha_s + sparse_message_bytes(n, d, nranks, **enc) * beta_s_per_byte)


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


def ssar_recursive_doubling_time(nranks: int, payload: SparsePayload, alpha_s: float, beta_s_per_byte: float) -> float:
    """SparCML's SSAR_Recursive_double, seconds: ``T = Σ_{i=0}^{log2 p - 1} (α + S(N, 2^i) β)``.

    References
    ----------
    Renggli et al. (2019), SparCML, Sec. 4 and its cost analysis.
    """
    d, enc = payload.k / payload.dimension, _encoding(payload)
    steps = max(1, math.ceil(math.log2(nranks)))
    return sum(alpha_s + sparse_message_bytes(payload.dimension, d, 2**i, **enc) * beta_s_per_byte for i in range(steps))


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


def gtopk_time(nranks: int, payload: SparsePayload, alpha_s: float, beta_s_per_byte: float) -> float:
    """gTop-k: tree reduction with top-k re-selection then broadcast, seconds.

    ``T = 2 ceil(log2 p) (α + S_k β)`` with ``S_k = h + min(k (b_i + b_v), N b_v)``
    (Shi et al. 2019 give ``2 α log p + 4 k β log p`` for 4-byte indices and values).
    """
    message = payload.header_bytes + min(
        payload.k * (payload.index_bytes + payload.value_bytes), payload.dimension * payload.value_bytes
    )
    return 2 * math.ceil(math.log2(nranks)) * (alpha_s + message * beta_s_per_byte)


def pattern_alpha_beta(network: Network, pairs: list[tuple[int, int]]) -> tuple[float, float]:
    """α and effective β of a step in which every pair sends a message of equal size at once.

    ``α`` is the largest route latency and ``β`` the largest ``β s`` of
    :func:`pair_alpha_beta` (inverse bottleneck bandwidth times link sharing).
    """
    costs = pair_alpha_beta(network, pairs)
    return max(c[0] for c in costs), max(c[1] * c[2] for c in costs)


def _worst(network: Network, patterns: list[list[tuple[int, int]]]) -> tuple[float, float]:
    found = [pattern_alpha_beta(network, pairs) for pairs in patterns if pairs]
    return max(a for a, _ in found), max(b for _, b in found)


def _shifts(nranks: int) -> list[list[tuple[int, int]]]:
    return [[(r, (r + s) % nranks) for r in range(nranks)] for s in range(1, nranks)]


def _sparse_ring_model(
    network: Network, nranks: int, size_bytes: int, *, payload: SparsePayload, gamma_s_per_byte: float = 0.0
) -> float:
    return sparse_ring_allreduce_time(
        nranks, payload, *_worst(network, _shifts(nranks)[:1]), gamma_s_per_byte=gamma_s_per_byte
    )


def _sparse_ring_ring_model(
    network: Network,
    nranks: int,
    size_bytes: int,
    *,
    payload: SparsePayload,
    gpus_per_node: int = 4,
    gamma_s_per_byte: float = 0.0,
) -> float:
    g = gpus_per_node
    intra = [(r, r - r % g + (r + 1) % g) for r in range(nranks)] if g > 1 else []
    inter = [(r, (r + g) % nranks) for r in range(nranks)] if nranks > g else []
    a_alpha, a_beta = pattern_alpha_beta(network, intra) if intra else (0.0, 0.0)
    e_alpha, e_beta = pattern_alpha_beta(network, inter) if inter else (0.0, 0.0)
    return sparse_ring_ring_allreduce_time(
        nranks, payload, g, a_alpha, a_beta, e_alpha, e_beta, gamma_s_per_byte=gamma_s_per_byte
    )


def _topk_allgather_model(
    network: Network, nranks: int, size_bytes: int, *, payload: SparsePayload, gamma_s_per_byte: float = 0.0
) -> float:
    return topk_allgather_time(nranks, payload, *_worst(network, _shifts(nranks)))


def _recursive_doubling_model(
    network: Network, nranks: int, size_bytes: int, *, payload: SparsePayload, gamma_s_per_byte: float = 0.0
) -> float:
    d, enc = payload.k / payload.dimension, _encoding(payload)
    total, distance, merged = 0.0, 1, 1
    while distance < nranks:
        alpha, beta = pattern_alpha_beta(network, [(r, r ^ distance) for r in range(nranks)])
        total += alpha + sparse_message_bytes(payload.dimension, d, merged, **enc) * beta
        distance, merged = 2 * distance, 2 * merged
    return total


def _ssar_split_model(
    network: Network, nranks: int, size_bytes: int, *, payload: SparsePayload, gamma_s_per_byte: float = 0.0
) -> float:
    return split_allgather_time(nranks, payload, *_worst(network, _shifts(nranks)))


def _dsar_split_model(
    network: Network, nranks: int, size_bytes: int, *, payload: SparsePayload, gamma_s_per_byte: float = 0.0
) -> float:
    return split_allgather_time(nranks, payload, *_worst(network, _shifts(nranks)), dense_all_gather=True)


def _gtopk_model(
    network: Network,
    nranks: int,
    size_bytes: int,
    *,
    payload: SparsePayload,
    k: int | None = None,
    gamma_s_per_byte: float = 0.0,
) -> float:
    tree = []
    distance = 1
    while distance < nranks:
        tree.append([(r + distance, r) for r in range(0, nranks, 2 * distance) if r + distance < nranks])
        distance *= 2
    chosen = payload if k is None else SparsePayload(**{**payload.describe(), "density": k / payload.dimension})
    return gtopk_time(nranks, chosen, *_worst(network, tree))


SPARSE_MODELS = MappingProxyType(
    {
        "topk_allgather": _topk_allgather_model,
        "ssar_recursive_doubling": _recursive_doubling_model,
        "ssar_split_allgather": _ssar_split_model,
        "dsar_split_allgather": _dsar_split_model,
        "gtopk": _gtopk_model,
        "sparse_ring": _sparse_ring_model,
        "sparse_ring_ring": _sparse_ring_ring_model,
    }
)

MODELS = MappingProxyType({**MODELS, **SPARSE_MODELS})


def sparse_fill_in(schedule: Schedule) -> pd.DataFrame:
    """Measured fill-in of a sparse schedule beside the uniform expectation.

    One row per ``(stage, merged)``: ``transfers``, mean ``entries`` and ``nnz`` per
    message, ``measured`` density (``nnz / entries`` over the group), ``expected``
    density ``1 - (1 - k/N)^m`` and the fraction of messages sent ``dense``.

    Parameters
    ----------
    schedule : Schedule
        Built by :mod:`simnet.algorithms.sparse` (``schedule.params["payload"]``
        holds ``dimension`` and ``density``; transfers hold ``nnz`` and ``merged``).
    """
    spec = schedule.params["payload"]
    value_bytes = spec["value_bytes"]
    density = max(1, min(spec["dimension"], round(spec["density"] * spec["dimension"]))) / spec["dimension"]
    rows = pd.DataFrame(
        {
            "stage": [t.stage for t in schedule.transfers],
            "merged": [t.merged for t in schedule.transfers],
            "entries": [sum(schedule.chunk_bytes[c] for c in t.chunks) // value_bytes for t in schedule.transfers],
            "nnz": [t.nnz for t in schedule.transfers],
            "dense": [bool(t.dense) for t in schedule.transfers],
        }
    )
    grouped = rows.groupby(["stage", "merged"], sort=False)
    table = grouped.agg(transfers=("nnz", "size"), entries=("entries", "mean"), nnz=("nnz", "mean"), dense=("dense", "mean"))
    table["measured"] = grouped["nnz"].sum() / grouped["entries"].sum()
    table["expected"] = [expected_density(density, m) for m in table.index.get_level_values("merged")]
    return table.reset_index()
