"""Phases of collective schedules, and the primitive collectives built from them.

The phase functions (:func:`ring_reduce_scatter`, :func:`ring_all_gather`,
:func:`tree_reduce`, :func:`tree_broadcast`) add the transfers of one phase to a
:class:`~simnet.algorithms.builder.ScheduleBuilder`, for several concurrent groups
of ranks at once; the all-reduce algorithms compose them. A ring phase adds each
of its steps as one batch (all groups, members and pieces at once), which is what
lets a ring of thousands of ranks be built in a fraction of a second.

A *block* is a list of *pieces*; a piece is a tuple of chunk indices sent as one
transfer. A block of ``C`` pieces is sent as ``C`` pipelined transfers.

The primitive collectives (:func:`reduce_scatter`, :func:`all_gather`,
:func:`broadcast`, :func:`reduce`) are those phases wrapped into schedules of
their own, registered with their closed forms in :data:`ALGORITHMS`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from simnet.algorithms.builder import ScheduleBuilder
from simnet.algorithms.registry import Algorithm, PairCosts, Stage, chunk_variants, pipelined_time, steps_time
from simnet.errors import ScheduleError
from simnet.schedule import Schedule, split_bytes
from simnet.speed import gc_paused

__all__ = [
    "check_args",
    "ring_reduce_scatter",
    "ring_all_gather",
    "binomial_parents",
    "tree_reduce",
    "tree_broadcast",
    "tree_alpha_beta",
    "ring_pairs",
    "reduce_scatter",
    "all_gather",
    "broadcast",
    "reduce",
    "ALGORITHMS",
]

Piece = tuple[int, ...]
Block = list[Piece]
Groups = Sequence[tuple[Sequence[int], Sequence[Block]]]


def check_args(nranks: int, size_bytes: int, chunks: int, *, minimum_ranks: int = 2) -> None:
    """Raise :class:`ScheduleError` unless ranks, size and chunks are usable."""
    if not isinstance(nranks, int) or isinstance(nranks, bool) or nranks < minimum_ranks:
        raise ScheduleError(f"must be an integer ≥ {minimum_ranks}, got {nranks!r}", path="nranks")
    if not isinstance(size_bytes, int) or isinstance(size_bytes, bool) or size_bytes < 1:
        raise ScheduleError(f"must be a whole number of bytes ≥ 1, got {size_bytes!r}", path="size_bytes")
    if not isinstance(chunks, int) or isinstance(chunks, bool) or chunks < 1:
        raise ScheduleError(f"must be an integer ≥ 1, got {chunks!r}", path="chunks")


def _ring_steps(builder: ScheduleBuilder, groups: Groups, stage: str, offset: int, op: str) -> None:
    """``m - 1`` steps per group; in step ``s`` member ``i`` sends block ``(i + offset - s) mod m``.

    Transfers are numbered step by step, then by group, member and piece. Groups of
    one size whose blocks have one number of pieces are added as one ring phase
    (:meth:`ScheduleBuilder.ring`), others one step batch at a time.
    """
    prepared = []
    for members, blocks in groups:
        if len(blocks) != len(members):
            raise ScheduleError(f"a group of {len(members)} ranks needs as many blocks, got {len(blocks)}",
                                path="blocks")
        ids = [[builder.piece(piece) for piece in block] for block in blocks]
        prepared.append((np.asarray(members, dtype=np.int64), ids))
    steps = max((len(members) - 1 for members, _ in prepared), default=0)
    uniform = len({(len(m), tuple(len(b) for b in ids)) for m, ids in prepared}) == 1
    if uniform and prepared and len({len(b) for b in prepared[0][1]}) == 1:
        builder.ring(np.stack([m for m, _ in prepared]), np.array([ids for _, ids in prepared], dtype=np.int64),
                     offset, op, stage)
        return
    for step in range(steps):
        src, dst, ids_of_step = [], [], []
        for members, ids in prepared:
            m = len(members)
            if step >= m - 1:
                continue
            for i in range(m):
                block = ids[(i + offset - step) % m]
                src.extend([int(members[i])] * len(block))
                dst.extend([int(members[(i + 1) % m])] * len(block))
                ids_of_step.extend(block)
        builder.send_batch(src, dst, ids_of_step, op, stage)


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
    orders = [_reduce_order(parents) for _, parents, _ in trees]
    for piece_index in range(max((len(block) for _, _, block in trees), default=0)):
        for (members, parents, block), order in zip(trees, orders):
            if piece_index >= len(block):
                continue
            for i in order:
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
    orders = [_broadcast_order(parents) for _, parents, _ in trees]
    for piece_index in range(max((len(block) for _, _, block in trees), default=0)):
        for (members, parents, block), order in zip(trees, orders):
            if piece_index >= len(block):
                continue
            previous: dict[int, int] = {}
            for i in order:
                sender = parents[i]
                after = (previous[sender],) if sender in previous else ()
                previous[sender] = builder.send(members[sender], members[i], block[piece_index], "copy", stage,
                                                after=after)


def ring_pairs(members: Sequence[int]) -> list[tuple[int, int]]:
    """``(member i, member i + 1)`` around a ring (none for a single member)."""
    return [(members[i], members[(i + 1) % len(members)]) for i in range(len(members))] if len(members) > 1 else []


def tree_alpha_beta(costs: PairCosts, edges: Sequence[tuple[int, int]], message_bytes: float) -> tuple[float, float]:
    """α and β of the slowest edge of a tree, each edge alone: the largest ``α + m β``."""
    alpha, beta, _ = max(
        (costs.step([edge], message_bytes) for edge in edges),
        key=lambda abs_: abs_[0] + message_bytes * abs_[1],
        default=(0.0, 0.0, 1.0),
    )
    return alpha, beta


def _ring_primitive(collective: str, nranks: int, size_bytes: int, chunks: int) -> Schedule:
    check_args(nranks, size_bytes, chunks)
    chunk_bytes = [piece for segment in split_bytes(size_bytes, nranks) for piece in split_bytes(segment, chunks)]
    blocks = [[(g * chunks + j,) for j in range(chunks)] for g in range(nranks)]
    builder = ScheduleBuilder(chunk_bytes, nranks)
    phase = ring_reduce_scatter if collective == "reduce_scatter" else ring_all_gather
    phase(builder, [(range(nranks), blocks)], collective)
    owners = tuple((g - 1) % nranks for g in range(nranks) for _ in range(chunks))
    return builder.schedule(collective, "ring", {"chunks": chunks}, owners=owners)


@gc_paused()
def reduce_scatter(nranks: int, size_bytes: int, *, chunks: int = 1) -> Schedule:
    """Ring reduce-scatter: rank ``r`` ends with segment ``(r + 1) mod p`` summed over all ranks.

    ``(p - 1) p C`` transfers of ``n / (p C)`` bytes (Patarasuk & Yuan 2009).

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

    ``(p - 1) p C`` transfers.

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
    builder = ScheduleBuilder(split_bytes(size_bytes, chunks), nranks)
    (tree_broadcast if collective == "broadcast" else tree_reduce)(builder, trees, collective)
    return builder.schedule(collective, "binomial_tree", {"root": root, "chunks": chunks}, root=root)


@gc_paused()
def broadcast(nranks: int, size_bytes: int, *, root: int = 0, chunks: int = 1) -> Schedule:
    """Binomial-tree broadcast from `root`, pipelined in `chunks` pieces (Thakur et al. 2005).

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
    """Binomial-tree reduce to `root`, pipelined in `chunks` pieces (Thakur et al. 2005).

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


def ring_phase_time(steps: int, message_bytes: float, alpha_s, beta_s_per_byte, *, chunks: int = 1,
                    gamma_s_per_byte: float = 0.0) -> float:
    """Time of a ring reduce-scatter (or, with γ = 0, all-gather) of ``steps = p - 1`` steps, seconds.

    With pieces of ``m`` bytes (``C`` per segment) and hop ``h -> h + 1`` costing
    ``α_h + m β_h``, segment ``b`` crosses the ``p - 1`` consecutive hops
    ``b .. b + p - 2`` (reducing at each), so::

        T = max( max_b Σ_{h=b}^{b+p-2} (α_h + m β_h + m γ) + (C - 1) m β_max ,  (p - 1) C m β_max + α )

    the pipelined ring of Patarasuk & Yuan (2009) (:func:`pipelined_time` of one
    stage), ``(p - 1)(α + m β + m γ)`` for ``C = 1`` and equal hops; ``β`` includes
    the sharing of links by concurrent messages. `alpha_s` and `beta_s_per_byte`
    are one value for every hop or one per hop.
    """
    alphas = np.broadcast_to(np.asarray(alpha_s, dtype=float), (steps + 1,))
    betas = np.broadcast_to(np.asarray(beta_s_per_byte, dtype=float), (steps + 1,))
    hop = np.tile(alphas + message_bytes * (betas + gamma_s_per_byte), 2)
    prefix = np.concatenate([[0.0], np.cumsum(hop)])
    chain = float((prefix[steps : 2 * steps + 1] - prefix[: steps + 1]).max()) if steps else 0.0
    slowest = int(np.lexsort((alphas, betas))[-1])
    occupancy = message_bytes * float(betas[slowest])
    stage = Stage(chain, occupancy, steps * chunks * occupancy + float(alphas[slowest]))
    return pipelined_time([stage], chunks)


def _ring_primitive_model(costs: PairCosts, nranks: int, size_bytes: int, *, chunks: int = 1,
                          gamma_s_per_byte: float = 0.0) -> float:
    message = math.ceil(math.ceil(size_bytes / nranks) / chunks)
    hops = costs.pairs(ring_pairs(range(nranks)))
    alphas = [a for a, _, _ in hops]
    betas = [b * s for _, b, s in hops]
    if len(set(alphas)) == 1 and len(set(betas)) == 1:
        alphas, betas = alphas[0], betas[0]
    return ring_phase_time(nranks - 1, message, alphas, betas, chunks=chunks, gamma_s_per_byte=gamma_s_per_byte)


def _all_gather_model(costs: PairCosts, nranks: int, size_bytes: int, *, chunks: int = 1,
                      gamma_s_per_byte: float = 0.0) -> float:
    return _ring_primitive_model(costs, nranks, size_bytes, chunks=chunks)


def binomial_rooted_time(nranks: int, size_bytes: int, alpha_s, beta_s_per_byte, *, chunks: int = 1,
                         gamma_s_per_byte: float = 0.0) -> float:
    """Time of a binomial-tree broadcast (γ = 0) or reduce from/to one root, seconds.

    With ``L = ceil(log2 p)`` rounds, round ``k`` costing ``α_k + m β_k`` for pieces
    of ``m = n / C`` bytes, and the root sending (or receiving) one message per
    round and piece::

        T = max( Σ_k (α_k + m β_k + m γ) + (C - 1) Σ_k m β_k ,  C Σ_k m β_k + α )

    which is ``ceil(log2 p)(α + n β + n γ)`` for ``C = 1`` and equal rounds
    (Thakur et al. 2005). `alpha_s` and `beta_s_per_byte` are one value for every
    round or one per round.
    """
    depth = math.ceil(math.log2(nranks))
    m = math.ceil(size_bytes / chunks)
    alphas = np.broadcast_to(np.asarray(alpha_s, dtype=float), (depth,))
    betas = np.broadcast_to(np.asarray(beta_s_per_byte, dtype=float), (depth,))
    occupancy = float(m * betas.sum())
    path = float((alphas + m * (betas + gamma_s_per_byte)).sum())
    stage = Stage(path, occupancy, chunks * occupancy + float(alphas.min(initial=math.inf) if depth else 0.0))
    return pipelined_time([stage], chunks)


def _rooted_model(op: str):
    def model(costs: PairCosts, nranks: int, size_bytes: int, *, root: int = 0, chunks: int = 1,
              gamma_s_per_byte: float = 0.0) -> float:
        m = math.ceil(size_bytes / chunks)
        steps = []
        mask = 1
        while mask < nranks:
            pairs = [((root + r) % nranks, (root + r - mask) % nranks) for r in range(mask, nranks, 2 * mask)]
            steps.append((pairs, m, m * gamma_s_per_byte))
            mask <<= 1
        if op == "broadcast":
            steps = [([(d, s) for s, d in pairs], m, 0.0) for pairs, _, _ in reversed(steps)]
        return steps_time(costs, steps, chunks)

    return model


def _tree_transfers(nranks: int, size_bytes: int, params) -> int:
    return (nranks - 1) * int(params.get("chunks", 1))


def _ring_phase_transfers(nranks: int, size_bytes: int, params) -> int:
    return nranks * (nranks - 1) * int(params.get("chunks", 1))


_THAKUR = ("Thakur, R., Rabenseifner, R. and Gropp, W. (2005). Optimization of collective communication "
           "operations in MPICH. Int. J. High Perform. Comput. Appl. 19(1), 49-66.")
_PATARASUK = ("Patarasuk, P. and Yuan, X. (2009). Bandwidth optimal all-reduce algorithms for clusters of "
              "workstations. J. Parallel Distrib. Comput. 69(2), 117-124.")

ALGORITHMS = (
    Algorithm("reduce_scatter", ("reduce_scatter",), reduce_scatter, "ring reduce-scatter",
              "(p-1)(α + n/p·β + n/p·γ)   [C = 1, equal hops; pipelined: max(chain + (C-1)mβ, (p-1)Cmβ + α), "
              "m = n/(pC)]",
              model=_ring_primitive_model, citation=_PATARASUK, transfers=_ring_phase_transfers,
              variants=chunk_variants),
    Algorithm("all_gather", ("all_gather",), all_gather, "ring all-gather",
              "(p-1)(α + n/p·β)   [C = 1, equal hops; pipelined: max(chain + (C-1)mβ, (p-1)Cmβ + α), m = n/(pC)]",
              model=_all_gather_model, citation=_PATARASUK, transfers=_ring_phase_transfers,
              variants=chunk_variants),
    Algorithm("broadcast", ("broadcast",), broadcast, "binomial-tree broadcast",
              "⌈log2 p⌉(α + nβ)   [C = 1; pipelined: max(Σ_k(α_k + mβ_k) + (C-1)Σ_k mβ_k, CΣ_k mβ_k + α), m = n/C]",
              model=_rooted_model("broadcast"), citation=_THAKUR, transfers=_tree_transfers, variants=chunk_variants),
    Algorithm("reduce", ("reduce",), reduce, "binomial-tree reduce",
              "⌈log2 p⌉(α + nβ + nγ)   [C = 1; pipelined: max(Σ_k(α_k + mβ_k + mγ) + (C-1)Σ_k mβ_k, CΣ_k mβ_k + α)]",
              model=_rooted_model("reduce"), citation=_THAKUR, transfers=_tree_transfers, variants=chunk_variants),
)
"""Registry records of the primitive collectives."""
