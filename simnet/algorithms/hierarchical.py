"""All-reduce decomposed over the levels of a hierarchy: BlueConnect, the 2D torus, halving-doubling, hierarchical ring.

Hierarchical algorithms take the hierarchy as plain data, ``factors = (p1, p2, ...,
pk)`` with ``p1 p2 ... pk = p``: rank ``r`` has coordinates
``c_i = (r // (p1 ... p_{i-1})) mod p_i``, so level 1 varies fastest (GPUs of a
node when ranks are numbered node by node, as the topology builders do).
:func:`simnet.algorithms.hierarchy.hierarchy_factors` derives them from a topology
graph; the records' ``defaults`` use it when a scenario gives no ``factors``.

BlueConnect (Cho et al. 2019) runs, for every level, a ring reduce-scatter inside
each of the ``p / p_i`` groups of ranks that differ only in coordinate ``i``, then
the all-gathers in reverse order. One factor is the ring; all factors 2 are
Rabenseifner's halving-doubling; two factors are the 2D-torus all-reduce.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np

from simnet.algorithms.builder import ScheduleBuilder
from simnet.algorithms.dense import fold, fold_time, power_of_two_members, ring_chain_times
from simnet.algorithms.hierarchy import TORUS
from simnet.algorithms.primitives import (
    _THAKUR,
    Block,
    binomial_parents,
    check_args,
    ring_all_gather,
    ring_pairs,
    ring_reduce_scatter,
    tree_alpha_beta,
    tree_broadcast,
    tree_reduce,
)
from simnet.algorithms.registry import Algorithm, PairCosts, Stage, chunk_variants, pipelined_time
from simnet.errors import ScheduleError
from simnet.schedule import COPY, REDUCE, Schedule, TransferTable, split_bytes
from simnet.speed import gc_paused

__all__ = [
    "halving_doubling_allreduce",
    "hierarchical_ring_allreduce",
    "torus_2d_allreduce",
    "blueconnect_allreduce",
    "check_factors",
    "level_groups",
    "square_factors",
    "factorizations",
    "blueconnect_time",
    "hierarchical_ring_time",
    "halving_doubling_time",
    "blueconnect_levels",
    "ALGORITHMS",
]

_CHO = ("Cho, M., Finkler, U., Serrano, M., Kung, D. and Hunter, H. (2019). BlueConnect: Decomposing all-reduce "
        "for deep learning on heterogeneous network hierarchy. IBM J. Res. Dev. 63(6), 1:1-1:11.")


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
    return [[base + c * stride for c in range(size)] for base in range(total) if (base // stride) % size == 0]


def square_factors(nranks: int) -> tuple[int, int]:
    """``(X, Y)`` with ``X Y = p`` and ``X`` the largest divisor of ``p`` not above ``sqrt(p)``."""
    x = max(d for d in range(1, math.isqrt(nranks) + 1) if nranks % d == 0)
    return x, nranks // x


def factorizations(factors: Sequence[int]) -> list[tuple[int, ...]]:
    """Every ordering of every coarsening of a hierarchy's factors, with at least two levels.

    Coarsening merges adjacent levels (``(2, 2, 8)`` also gives ``(4, 8)`` and
    ``(2, 16)``), as when one BlueConnect stage spans a whole server.
    """
    found: dict[tuple[int, ...], None] = {}
    for cuts in itertools.product((False, True), repeat=len(factors) - 1):
        merged = [factors[0]]
        for factor, cut in zip(factors[1:], cuts):
            if cut:
                merged.append(factor)
            else:
                merged[-1] *= factor
        if len(merged) > 1:
            found.update(dict.fromkeys(itertools.permutations(merged)))
    return list(found)


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
            start = sum(((first // stride[j]) % factors[j] + 1) % factors[j] * below[j] for j in range(level))
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


def _staged_schedule(nranks: int, size_bytes: int, factors: Sequence[int], chunks: int,
                     labels: Sequence[tuple[str, str]], algorithm: str, params: dict) -> Schedule:
    """The schedule :func:`_staged_allreduce` builds on a fresh builder, from its structure.

    A factor of 1 (a level with no ring) leaves the builder to do it.

    It is the same schedule bit for bit (same transfers, pieces and dependencies;
    ``tests/algorithms/test_hierarchical.py`` compares the two), without the
    builder's per-(rank, chunk) cell state, whose ``p × p C`` cells do not fit in
    memory for tens of thousands of ranks. With ``R(i, s, m)`` the reduce-scatter
    transfer of level ``i``, step ``s`` and member ``m`` of a group (and of one
    sub-chunk ``j``), ``G(i, s, m)`` the all-gather one, and ``c_l`` the
    coordinates of the sending position ``q``, the cells give:

    * ``R(i, s, m)`` reads what the reduce-scatters of the levels ``l < i`` added
      into ``q``'s cells, ``a_l(q) = R(l, p_l - 2, c_l - 1)``, and for ``s ≥ 1``
      the block it received the step before, ``R(i, s - 1, m - 1)``; it adds into
      cells nobody read, so its write waits for nothing;
    * ``G(i, 0, m)`` reads ``q``'s finished region: every ``a_l(q)``, ``l < k``, and
      the all-gathers of the levels ``l > i`` into ``q``, ``G(l, s', c_l - 1)``;
      ``G(i, s, m)`` for ``s ≥ 1`` reads the block ``G(i, s - 1, m - 1)`` brought;
    * ``G(i, s, m)`` overwrites the block member ``m + 1`` forwarded at step ``s``
      of the reduce-scatter, so it waits for that read, ``R(i, s, m + 1)``.

    Transfers are numbered as the builder numbers them: phases in order (the
    reduce-scatters of levels ``0 .. k-1``, then the all-gathers of levels
    ``k-1 .. 0``), within a phase by step, group, member and sub-chunk; pieces in the
    order the builder meets them.
    """
    if min(factors) < 2:
        builder = ScheduleBuilder(_nested_leaves(size_bytes, factors, chunks), nranks)
        _staged_allreduce(builder, range(nranks), factors, chunks, labels)
        return _pipelined(builder.schedule("allreduce", algorithm, params), factors, chunks)
    p, k, C = nranks, len(factors), chunks
    f = [int(x) for x in factors]
    stride = [math.prod(f[:i]) for i in range(k)]
    below = [math.prod(f[i + 1:]) for i in range(k)]
    chunk_bytes = _nested_leaves(size_bytes, f, C)
    positions = np.arange(p, dtype=np.int64)
    coord = [(positions // stride[i]) % f[i] for i in range(k)]
    group = [(positions // (stride[i] * f[i])) * stride[i] + positions % stride[i] for i in range(k)]
    phases = [(False, i) for i in range(k)] + [(True, i) for i in reversed(range(k))]
    first = {}
    count = 0
    for phase in phases:
        first[phase] = count
        count += (f[phase[1]] - 1) * p * C
    if count >= 2**31:
        raise ScheduleError(f"{count} transfers do not fit 32-bit transfer indices", path="factors")

    def index(gather: bool, level: int, step, grp, member, sub):
        return first[gather, level] + ((step * (p // f[level]) + grp) * f[level] + member) * C + sub

    sub = np.arange(C)
    piece_first, chunk_rows = [], []
    pieces = 0
    for i in range(k):
        piece_first.append(pieces)
        lo = np.arange(stride[i])
        start = sum(((lo // stride[l]) % f[l] + 1) % f[l] * below[l] for l in range(i)) + np.zeros_like(lo)
        leaf = start[:, None, None, None] + np.arange(f[i])[None, :, None, None] * below[i] \
            + np.arange(below[i])[None, None, None, :]
        chunk_rows.append((leaf * C + sub[None, None, :, None]).reshape(-1))
        pieces += stride[i] * f[i] * C
    piece_chunks = np.concatenate(chunk_rows)
    piece_offsets = np.concatenate([[0], np.cumsum(np.repeat([below[i] for i in range(k)],
                                                             [stride[i] * f[i] * C for i in range(k)]))])
    piece_bytes = np.add.reduceat(np.asarray(chunk_bytes, dtype=np.int64)[piece_chunks], piece_offsets[:-1])

    src, dst = np.empty(count, dtype=np.int32), np.empty(count, dtype=np.int32)
    piece, stage = np.empty(count, dtype=np.int32), np.empty(count, dtype=np.int32)
    op = np.empty(count, dtype=np.uint8)
    dep_counts = np.empty(count, dtype=np.int64)
    dep_rows = []
    for code, (gather, i) in enumerate(phases):
        fi, si, groups = f[i], stride[i], p // f[i]
        shape = (fi - 1, groups, fi, C)
        rows = slice(first[gather, i], first[gather, i] + math.prod(shape))
        step = np.arange(fi - 1)[:, None, None, None]
        grp = np.arange(groups)[None, :, None, None]
        member = np.arange(fi)[None, None, :, None]
        j = sub[None, None, None, :]
        base = (grp // si) * si * fi + grp % si
        q = (base + member * si)[0, :, :, 0]
        src[rows].reshape(shape)[...] = base + member * si
        dst[rows].reshape(shape)[...] = base + (member + 1) % fi * si
        piece[rows].reshape(shape)[...] = piece_first[i] + ((grp % si) * fi + (member + gather - step) % fi) * C + j
        op[rows] = COPY if gather else REDUCE
        stage[rows] = code
        sub3 = sub[None, None, :]
        added = [index(False, l, f[l] - 2, group[l][q][..., None], (coord[l][q][..., None] - 1) % f[l], sub3)
                 for l in range(k if gather else i)]
        later = [index(True, l, s2, group[l][q][..., None], (coord[l][q][..., None] - 1) % f[l], sub3)
                 for l in range(i + 1, k) if gather for s2 in range(f[l] - 1)]
        previous = index(gather, i, step[1:] - 1, grp, (member - 1) % fi, j)
        if gather:
            forwarded = index(False, i, step, grp, (member + 1) % fi, j)
            slots = ([*added, *later, forwarded[:1]], [previous, forwarded[1:]])
        else:
            slots = (added, [*added, previous])
        at = rows.start
        for steps, columns in zip((1, fi - 2), slots):
            n = steps * groups * fi * C
            if n and not columns:
                dep_counts[at:at + n] = 0
            elif n:
                matrix = np.empty((n, len(columns)), dtype=np.int32)
                for slot, column in enumerate(columns):
                    matrix[:, slot].reshape(steps, groups, fi, C)[...] = column
                matrix.sort(axis=1)
                keep = np.ones(matrix.shape, dtype=bool)
                keep[:, 1:] = matrix[:, 1:] != matrix[:, :-1]
                dep_rows.append(matrix[keep])
                dep_counts[at:at + n] = keep.sum(axis=1)
            at += n
    deps = np.concatenate(dep_rows) if dep_rows else np.zeros(0, dtype=np.int32)
    dep_offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(dep_counts, out=dep_offsets[1:])
    del dep_rows, dep_counts
    table = TransferTable(
        src=src, dst=dst, nbytes=piece_bytes[piece], op=op, piece=piece, pieces=(piece_offsets, piece_chunks),
        deps=deps, dep_offsets=dep_offsets, stage=stage,
        stages=tuple(labels[i][1 if gather else 0] for gather, i in phases),
        src_buffer=np.zeros(count, dtype=np.uint8), dst_buffer=np.zeros(count, dtype=np.uint8),
    )
    schedule = Schedule(collective="allreduce", nranks=nranks, chunk_bytes=tuple(chunk_bytes), transfers=table,
                        algorithm=algorithm, params=dict(params))
    return _pipelined(schedule, f, C)


def _in_sub_chunk_order(schedule: Schedule, chunks: int) -> Schedule:
    """`schedule`, whose phases (stages) follow each other in its numbering and whose chunk ``c`` is sub-chunk
    ``c mod chunks`` of its segment, renumbered by phase, then sub-chunk, then as before, and run in that order
    (:attr:`~simnet.schedule.Schedule.in_order`).

    Every sub-chunk reaches a phase at once. Served first come, first served, a ring of ``p_i ≥ 3`` members
    would drain step 0 of all ``C`` sub-chunks on each connection before any step 1, as their latencies
    elapse, and no sub-chunk would leave the phase before its last step, the next phase idle until then. Issued
    sub-chunk by sub-chunk, as a pipelined implementation posts them, sub-chunk 0 leaves after ``p_i - 1``
    steps and the phases overlap, as the pipelined closed forms (:func:`blueconnect_time`) assume.
    Sub-chunks touch disjoint cells, so every dependency still points to an earlier transfer.
    """
    table = schedule.transfers
    sub = table.piece_chunks[table.piece_offsets[table.piece]] % chunks
    phase = np.concatenate([[0], np.cumsum(table.stage[1:] != table.stage[:-1])])
    order = np.lexsort((np.arange(len(table)), sub, phase))
    return schedule.replace(transfers=table.reordered(order), in_order=True)


def _pipelined(schedule: Schedule, factors: Sequence[int], chunks: int) -> Schedule:
    """A staged all-reduce (:func:`_staged_schedule`) in sub-chunk order (:func:`_in_sub_chunk_order`) where that
    matters: a ring of two members has one step, and one level has no next level to feed (it stays the ring
    all-reduce, transfer for transfer)."""
    if chunks == 1 or max(factors) < 3 or len(factors) < 2:
        return schedule
    return _in_sub_chunk_order(schedule, chunks)


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
        ring; scenarios default to the topology's hierarchy).
    chunks : int, optional
        Pipelined sub-chunks per leaf segment ``C``.

    Returns
    -------
    Schedule
        ``2 Σ_i (p_i - 1) p C`` transfers; the payload is split into ``p`` nested
        leaf segments (first into ``p1`` parts, each into ``p2``, ...), each into
        ``C`` sub-chunks.

    Notes
    -----
    With every factor ≥ 2 the schedule is computed from the algorithm's structure:
    the transfers and dependencies that :class:`~simnet.algorithms.builder.ScheduleBuilder`
    derives from the cells they touch, without its state of ``p × p C`` cells, so
    tens of thousands of ranks build in seconds.

    References
    ----------
    Cho, M., Finkler, U., Serrano, M., Kung, D. and Hunter, H. (2019). BlueConnect:
    Decomposing all-reduce for deep learning on heterogeneous network hierarchy.
    IBM J. Res. Dev. 63(6), 1:1-1:11 (also SysML 2019).
    """
    check_args(nranks, size_bytes, chunks)
    factors = check_factors(nranks, factors)
    params = {"factors": list(factors), "chunks": chunks}
    return _staged_schedule(nranks, size_bytes, factors, chunks, _level_labels(len(factors)), "blueconnect", params)


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
    factors = _torus_factors(nranks, factors)
    labels = [("reduce_scatter_x", "all_gather_x"), ("reduce_scatter_y", "all_gather_y")]
    params = {"factors": list(factors), "chunks": chunks}
    return _staged_schedule(nranks, size_bytes, factors, chunks, labels, "torus_2d", params)


def _torus_factors(nranks: int, factors: Sequence[int] | None) -> tuple[int, ...]:
    factors = check_factors(nranks, factors, default=square_factors(nranks))
    if len(factors) != 2:
        raise ScheduleError(f"must be two factors [X, Y], got {list(factors)!r}", path="factors")
    return factors


@gc_paused()
def halving_doubling_allreduce(nranks: int, size_bytes: int, *, chunks: int = 1) -> Schedule:
    """Rabenseifner's all-reduce: recursive-halving reduce-scatter, recursive-doubling all-gather.

    For ``p = 2^k`` the reduce-scatter exchanges half of the current data with the
    partner at distance ``1, 2, 4, …`` and the all-gather mirrors it, distances
    ``…, 2, 1``: the transfers of ``blueconnect`` with ``factors = [2] * k``. When
    ``p`` is not a power of two, MPICH's folding (see
    :func:`simnet.algorithms.dense.recursive_doubling_allreduce`).

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
    builder = ScheduleBuilder(_nested_leaves(size_bytes, [2] * levels, chunks), nranks)
    everything = _pieces(range(len(members)), chunks)
    fold(builder, rem, everything, unfold=False)
    _staged_allreduce(builder, members, [2] * levels, chunks, _level_labels(levels))
    fold(builder, rem, everything, unfold=True)
    return builder.schedule("allreduce", "halving_doubling", {"chunks": chunks})


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
        Hierarchy factors, innermost first; only ``p1`` (ranks per node) matters
        (default ``[1, p]``: a plain ring).
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
    builder = ScheduleBuilder(chunk_bytes, nranks)
    everything = [tuple(g * chunks + j for g in range(nodes)) for j in range(chunks)]
    trees = [(range(node * local, (node + 1) * local), binomial_parents(local), everything) for node in range(nodes)]
    tree_reduce(builder, trees, "intra_reduce")
    leaders = [(range(0, nranks, local), [[(g * chunks + j,) for j in range(chunks)] for g in range(nodes)])]
    ring_reduce_scatter(builder, leaders, "inter_reduce_scatter")
    ring_all_gather(builder, leaders, "inter_all_gather")
    tree_broadcast(builder, trees, "intra_broadcast")
    schedule = builder.schedule("allreduce", "hierarchical_ring", {"factors": list(factors), "chunks": chunks})
    return _in_sub_chunk_order(schedule, chunks) if chunks > 1 and 1 < local < nranks else schedule


def _slowest_hop(alpha, beta, sharing) -> tuple[float, float, float, np.ndarray | None]:
    """``(α, β, s)`` of a level's slowest hop (largest ``β s``, then largest ``α``) and the hop arrays.

    The arrays, stacked ``(α, β, s)`` of shape ``(3, groups, p_i)``, are ``None`` when
    every hop has the same ``α``, ``β`` and ``s`` (given as scalars or not).
    """
    hops = np.broadcast_arrays(*(np.atleast_2d(np.asarray(x, dtype=float)) for x in (alpha, beta, sharing)))
    if all((h == h.flat[0]).all() for h in hops):
        return float(hops[0].flat[0]), float(hops[1].flat[0]), float(hops[2].flat[0]), None
    alphas, betas, shares = (h.ravel() for h in hops)
    slowest = int(np.lexsort((alphas, betas * shares))[-1])
    return float(alphas[slowest]), float(betas[slowest]), float(shares[slowest]), np.stack(hops)


def _one_piece(steps: int, message_bytes: float, hops: np.ndarray) -> float:
    """One piece through a level whose groups' hops differ: the slowest group's chain or bottleneck hop.

    Per group, as for one ring (:func:`simnet.algorithms.dense.ring_allreduce_time`): the
    slowest chain of per-hop ``α_h + m β_h`` plus ``(s - 1) m β`` of its slowest hop, or that
    hop busy ``S s m β + α``; a group whose hops are all alike gives ``S (α + m β)`` itself.
    """
    alphas, betas, shares = hops
    slowest = np.lexsort((alphas, betas * shares), axis=-1)[:, -1:]
    alpha, beta, share = (np.take_along_axis(h, slowest, axis=-1)[:, 0] for h in hops)
    occupancy = message_bytes * beta
    alike = np.all(hops == hops[..., :1], axis=(0, 2))
    chain = np.where(alike, steps * (alpha + occupancy), ring_chain_times(alphas + message_bytes * betas).max(axis=-1))
    return float(np.maximum(chain + (share - 1) * occupancy, steps * share * occupancy + alpha).max())


def _level_stage(group_size: int, message_bytes: float, alpha, beta, sharing, chunks: int,
                 gamma: float) -> Stage:
    """One BlueConnect level (a ring reduce-scatter and all-gather in every group) as a pipeline stage.

    `alpha`, `beta` and `sharing` are scalars, or per hop of every group, shape
    ``(groups, group_size)`` (hop ``h`` from a group's member ``h`` to member ``h + 1``).
    """
    steps = 2 * (group_size - 1)
    if steps == 0:
        return Stage(0.0, 0.0, 0.0)
    alpha, beta, sharing, hops = _slowest_hop(alpha, beta, sharing)
    occupancy = message_bytes * beta
    reductions = (group_size - 1) * message_bytes * gamma
    if hops is None:
        one_piece = max(steps * (alpha + occupancy) + (sharing - 1) * occupancy, steps * sharing * occupancy + alpha)
    else:
        one_piece = _one_piece(steps, message_bytes, hops)
    return Stage(one_piece + reductions, sharing * occupancy, steps * chunks * sharing * occupancy + alpha)


def blueconnect_time(
    size_bytes: int,
    factors: Sequence[int],
    alphas_s: Sequence[float | np.ndarray],
    betas_s_per_byte: Sequence[float | np.ndarray],
    *,
    sharing: Sequence[float | np.ndarray] | None = None,
    chunks: int = 1,
    gamma_s_per_byte: float = 0.0,
    load_s: float = 0.0,
) -> float:
    """Time of BlueConnect (and of the 2D-torus all-reduce), seconds.

    With group sizes ``p_i``, per-level latency ``α_i``, inverse bandwidth ``β_i``,
    link-sharing factor ``s_i`` (how many of the level's concurrent groups'
    transfers cross the same bottleneck link), ``S_i = 2 (p_i - 1)`` ring steps per
    level and pieces of ``m_i = n / (p_1 ... p_i C)`` bytes, one piece takes at
    level ``i``::

        P_i = max( S_i (α_i + m_i β_i) + (s_i - 1) m_i β_i ,  S_i s_i m_i β_i + α_i ) + (p_i - 1) m_i γ

    (a ring reduce-scatter and all-gather in each group; the ``s_i`` groups sharing a
    link interleave on it like pipelined chunks of one ring, Cho et al. 2019), and
    the ``C`` pieces pipeline through the levels (:func:`pipelined_time`)::

        T = max( Σ_i P_i + (C - 1) max_i s_i m_i β_i ,  max_i ( S_i C s_i m_i β_i + α_i + Σ_{j≠i} P_j ),  L )

    with ``L`` (`load_s`) the time the busiest link needs for the traffic of all
    levels together (levels crossing the same link cannot overlap on it). For
    ``C = 1`` this is ``Σ_i P_i``; one level gives the ring, all ``p_i = 2`` the
    halving-doubling. Cho et al.'s per-step form ``S_i (α_i + m_i β_i s_i)`` is the
    upper bound that also charges the latency ``s_i`` times.

    When a level's hops differ (``α_h``, ``β_h``, ``s_h`` per hop of each group's
    ring), each group is costed as the ring's closed form costs its hops
    (:func:`simnet.algorithms.dense.ring_allreduce_time`): a piece of segment ``g``
    crosses hops ``g .. g+p_i-2`` reducing and ``g-1 .. g+p_i-3`` gathering, so the
    first term of ``P_i`` becomes the group's slowest chain ``Σ_chain (α_h + m_i β_h)``
    plus ``(s - 1) m_i β`` of its slowest hop (largest ``β_h s_h``), the second that
    hop busy, and ``P_i`` takes the slowest group; ``α_i``, ``β_i``, ``s_i`` in the
    pipelining terms are the level's slowest hop's. One level ``(p,)`` without link
    sharing then gives :func:`~simnet.algorithms.dense.ring_allreduce_time` of the
    same hops exactly for ``γ = 0``; with ``γ > 0`` also, unless the slowest hop busy
    outlasts the slowest chain, where ``P_1`` adds ``(p - 1) m γ`` that the ring's
    bandwidth term leaves out.

    Parameters
    ----------
    size_bytes : int
        Payload per rank ``n``, bytes.
    factors : sequence of int
        ``p_1 .. p_k``.
    alphas_s, betas_s_per_byte : sequence of float or numpy.ndarray
        ``α_i`` (s) and ``β_i`` (s/byte) per level: one value, or one per hop of
        every group, shape ``(p / p_i, p_i)`` (hop ``h`` from a group's member ``h``
        to member ``h + 1``, groups as :func:`level_groups` lists them).
    sharing : sequence of float or numpy.ndarray, optional
        ``s_i`` per level, likewise (default all 1).
    chunks : int, optional
        Pipelined sub-chunks per leaf segment ``C``.
    gamma_s_per_byte : float, optional
        ``γ``, seconds per byte.
    load_s : float, optional
        Busiest link's time for all levels' traffic, seconds (0: not known).

    References
    ----------
    Cho, M., Finkler, U., Serrano, M., Kung, D. and Hunter, H. (2019). BlueConnect:
    Decomposing all-reduce for deep learning on heterogeneous network hierarchy.
    IBM J. Res. Dev. 63(6), 1:1-1:11.
    """
    sharing = [1.0] * len(factors) if sharing is None else sharing
    stages, share = [], size_bytes
    for p_i, alpha, beta, s in zip(factors, alphas_s, betas_s_per_byte, sharing):
        share = math.ceil(share / p_i)
        stages.append(_level_stage(p_i, math.ceil(share / chunks), alpha, beta, s, chunks, gamma_s_per_byte))
    return pipelined_time(stages, chunks, load_s=load_s)


def halving_doubling_time(
    nranks: int, size_bytes: int, alpha_s: float, beta_s_per_byte: float, *, gamma_s_per_byte: float = 0.0
) -> float:
    """Time of Rabenseifner's halving-doubling all-reduce without contention, seconds.

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
    rem, members = power_of_two_members(nranks)
    levels = len(members).bit_length() - 1
    total = 0.0
    for j in range(1, levels + 1):
        m = math.ceil(size_bytes / (1 << j))
        total += 2 * alpha_s + 2 * m * beta_s_per_byte + m * gamma_s_per_byte
    if rem:
        total += 2 * alpha_s + 2 * size_bytes * beta_s_per_byte + size_bytes * gamma_s_per_byte
    return total


def hierarchical_ring_time(
    local_ranks: int,
    nodes: int,
    size_bytes: int,
    intra_alpha_s: float,
    intra_beta_s_per_byte: float,
    inter_alpha_s: float,
    inter_beta_s_per_byte: float,
    *,
    chunks: int = 1,
    gamma_s_per_byte: float = 0.0,
) -> float:
    """Time of the hierarchical ring all-reduce, seconds.

    With ``L = ceil(log2 p1)`` for ``p1`` ranks per node, ``N`` nodes and ``C``
    pieces of ``m = n / C`` bytes, three pipelined stages (:func:`pipelined_time`):
    a binomial reduce inside each node (one piece ``L (α1 + m β1 + m γ)``; the leader
    receives ``L`` messages per piece), the pipelined ring all-reduce
    (:func:`simnet.algorithms.dense.ring_allreduce_time`) among the ``N`` leaders,
    and a binomial broadcast inside each node. For ``C = 1``::

        T = L (α1 + n β1 + n γ) + T_ring(N, n; α2, β2, γ) + L (α1 + n β1)

    References
    ----------
    Thakur, R., Rabenseifner, R. and Gropp, W. (2005); Patarasuk, P. and Yuan, X.
    (2009) for the ring term.
    """
    depth = math.ceil(math.log2(local_ranks)) if local_ranks > 1 else 0
    m = math.ceil(size_bytes / chunks)
    stages = []
    if depth:
        occupancy = depth * m * intra_beta_s_per_byte
        stages.append(Stage(depth * (intra_alpha_s + m * (intra_beta_s_per_byte + gamma_s_per_byte)), occupancy,
                            chunks * occupancy + intra_alpha_s))
    if nodes > 1:
        steps = 2 * (nodes - 1)
        message = math.ceil(math.ceil(size_bytes / nodes) / chunks)
        occupancy = message * inter_beta_s_per_byte
        stages.append(Stage(steps * (inter_alpha_s + occupancy) + (nodes - 1) * message * gamma_s_per_byte,
                            occupancy, steps * chunks * occupancy + inter_alpha_s))
    if depth:
        occupancy = depth * m * intra_beta_s_per_byte
        stages.append(Stage(depth * (intra_alpha_s + m * intra_beta_s_per_byte), occupancy,
                            chunks * occupancy + intra_alpha_s))
    return pipelined_time(stages, chunks)


def _level_alpha_beta(costs: PairCosts, members: Sequence[int],
                      factors: Sequence[int]) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Per level, ``α``, ``β`` and sharing of every hop of its group rings, each of shape ``(groups, p_i)``."""
    alphas, betas, sharing = [], [], []
    for level, p_i in enumerate(factors):
        pairs = [pair for positions in level_groups(factors, level)
                 for pair in ring_pairs([members[q] for q in positions])]
        hops = np.array(costs.pairs(pairs), dtype=float).reshape(-1, p_i, 3) if pairs else np.zeros((1, 1, 3))
        alphas.append(hops[..., 0])
        betas.append(hops[..., 1])
        sharing.append(hops[..., 2] if pairs else np.ones((1, 1)))
    return alphas, betas, sharing


def _smallest_alpha(alphas: Sequence[np.ndarray]) -> float:
    """The smallest hop latency over all levels (a level without hops counts 0), seconds."""
    return min((float(a.min()) for a in alphas), default=0.0)


def _level_traffic(members: Sequence[int], factors: Sequence[int], size_bytes: int,
                   chunks: int = 1) -> list[tuple[list, float]]:
    """Per level, the ring edges of its groups and the bytes each carries per sub-chunk index (RS and all-gather)."""
    traffic, share = [], size_bytes
    for level, p_i in enumerate(factors):
        share = math.ceil(share / p_i)
        pairs = [pair for positions in level_groups(factors, level) for pair in ring_pairs([members[q] for q in positions])]
        traffic.append((pairs, 2 * (p_i - 1) * math.ceil(share / chunks)))
    return traffic


def blueconnect_levels(
    costs: PairCosts,
    nranks: int,
    size_bytes: int,
    factors: Sequence[int] | None = None,
    *,
    gamma_s_per_byte: float = 0.0,
):
    """Per-level cost breakdown of BlueConnect (``chunks = 1``, Cho et al. 2019).

    Parameters
    ----------
    costs : PairCosts
        α and β of rank pairs, e.g. :class:`simnet.models.alphabeta.NetworkCosts` of a network.
    nranks : int
        Ranks ``p``.
    size_bytes : int
        Payload per rank ``n``, bytes.
    factors : sequence of int, optional
        ``p_1 .. p_k`` (default ``[p]``).
    gamma_s_per_byte : float, optional
        Reduction cost γ, seconds per byte.

    Returns
    -------
    pandas.DataFrame
        One row per level: ``level`` (1-based), ``group_size`` ``p_i``, ``groups``
        (``p / p_i`` concurrent groups), ``message_bytes`` ``m_i``, ``alpha_s``,
        ``beta_s_per_byte`` and ``sharing`` ``s_i`` of the level's slowest hop (largest
        ``β s``; every hop's when they are all alike), ``reduce_scatter_s`` and
        ``all_gather_s`` (half the level's communication time each, from the per-hop
        chains of :func:`blueconnect_time`, plus ``(p_i - 1) m_i γ`` for the
        reduce-scatter) and ``time_s`` (their sum). The column ``time_s`` sums to
        :func:`blueconnect_time` with ``chunks = 1``.
    """
    import pandas as pd

    factors = check_factors(nranks, factors)
    alphas, betas, sharing = _level_alpha_beta(costs, range(nranks), factors)
    rows, share = [], size_bytes
    for level, (p_i, hop_alphas, hop_betas, hop_sharing) in enumerate(zip(factors, alphas, betas, sharing)):
        share = math.ceil(share / p_i)
        communication = _level_stage(p_i, share, hop_alphas, hop_betas, hop_sharing, 1, 0.0).path_s
        alpha, beta, s, _ = _slowest_hop(hop_alphas, hop_betas, hop_sharing)
        reduce_scatter_s = communication / 2 + (p_i - 1) * share * gamma_s_per_byte
        all_gather_s = communication / 2
        rows.append({
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
        })
    return pd.DataFrame(rows)


def _blueconnect_model(costs: PairCosts, nranks: int, size_bytes: int, *, factors: Sequence[int] | None = None,
                       chunks: int = 1, gamma_s_per_byte: float = 0.0) -> float:
    factors = check_factors(nranks, factors)
    alphas, betas, sharing = _level_alpha_beta(costs, range(nranks), factors)
    interval = costs.load(_level_traffic(range(nranks), factors, size_bytes, chunks))
    return blueconnect_time(size_bytes, factors, alphas, betas, sharing=sharing, chunks=chunks,
                            gamma_s_per_byte=gamma_s_per_byte, load_s=chunks * interval + _smallest_alpha(alphas))


def _torus_2d_model(costs: PairCosts, nranks: int, size_bytes: int, *, factors: Sequence[int] | None = None,
                    chunks: int = 1, gamma_s_per_byte: float = 0.0) -> float:
    return _blueconnect_model(costs, nranks, size_bytes, factors=_torus_factors(nranks, factors), chunks=chunks,
                              gamma_s_per_byte=gamma_s_per_byte)


def _halving_doubling_model(costs: PairCosts, nranks: int, size_bytes: int, *, chunks: int = 1,
                            gamma_s_per_byte: float = 0.0) -> float:
    rem, members = power_of_two_members(nranks)
    factors = [2] * (len(members).bit_length() - 1)
    alphas, betas, sharing = _level_alpha_beta(costs, members, factors)
    interval = costs.load(_level_traffic(members, factors, size_bytes, chunks))
    return fold_time(costs, rem, size_bytes, gamma_s_per_byte) + blueconnect_time(
        size_bytes, factors, alphas, betas, sharing=sharing, chunks=chunks, gamma_s_per_byte=gamma_s_per_byte,
        load_s=chunks * interval + _smallest_alpha(alphas))


def _hierarchical_ring_model(costs: PairCosts, nranks: int, size_bytes: int, *,
                             factors: Sequence[int] | None = None, chunks: int = 1,
                             gamma_s_per_byte: float = 0.0) -> float:
    factors = check_factors(nranks, factors, default=(1, nranks))
    local, nodes = factors[0], nranks // factors[0]
    piece = math.ceil(size_bytes / chunks)
    intra_alpha, intra_beta = 0.0, 0.0
    if local > 1:
        parents = binomial_parents(local)
        edges = [(r, r - r % local + parents[r % local]) for r in range(nranks) if parents[r % local] is not None]
        intra_alpha, intra_beta = tree_alpha_beta(costs, edges, piece)
    leaders = list(range(0, nranks, local))
    inter_alpha, inter_beta, sharing = costs.step(ring_pairs(leaders), math.ceil(math.ceil(size_bytes / nodes) / chunks))
    return hierarchical_ring_time(local, nodes, size_bytes, intra_alpha, intra_beta, inter_alpha, inter_beta * sharing,
                                  chunks=chunks, gamma_s_per_byte=gamma_s_per_byte)


def _blueconnect_defaults(factors: Callable[[Sequence[str]], tuple[int, ...]]) -> dict:
    levels = tuple(f for f in factors(("socket", "host", "leaf")) if f > 1)
    return {"factors": list(levels or (1,))}


def _two_level_defaults(factors: Callable[[Sequence[str]], tuple[int, ...]]) -> dict:
    found = factors(("host",))
    return {"factors": list((1, *found) if len(found) == 1 else found)}


def _torus_2d_defaults(factors: Callable[[Sequence[str]], tuple[int, ...]]) -> dict:
    """On a torus of at least two dimensions above 1, X its last dimension and Y the others (so X rings, which carry
    the most bytes, are torus rings, and on a 2-D torus Y rings too); elsewhere ``[GPUs per host, hosts]``."""
    dims = [size for size in factors((TORUS,)) if size > 1]
    if len(dims) >= 2:
        return {"factors": [dims[0], math.prod(dims[1:])]}
    return _two_level_defaults(factors)


def _hierarchical(factors) -> list[int]:
    """The hierarchy's factors above 1 (empty on a flat topology)."""
    return [] if factors is None else [f for f in factors(("socket", "host", "leaf")) if f > 1]


def _two_level_variants(nranks, factors, chunk_counts, channel_counts) -> list[dict]:
    """The two-level factors of hosts with each chunk count; none where a level would be 1, since the
    schedule is then another candidate again (one server of 72 GPUs is ``[72, 1]``: ``torus_2d`` is the
    ring, ``hierarchical_ring`` the binomial tree)."""
    if len(_hierarchical(factors)) < 2 or 1 in (default := _two_level_defaults(factors)["factors"]):
        return []
    return [{"factors": default, "chunks": chunks} for chunks in chunk_counts]


def _torus_2d_variants(nranks, factors, chunk_counts, channel_counts) -> list[dict]:
    """On a torus of at least two dimensions above 1, its default factors (:func:`_torus_2d_defaults`) with each
    chunk count; elsewhere the two-level factors of hosts."""
    if factors is not None and sum(size > 1 for size in factors((TORUS,))) >= 2:
        return [{"factors": _torus_2d_defaults(factors)["factors"], "chunks": chunks} for chunks in chunk_counts]
    return _two_level_variants(nranks, factors, chunk_counts, channel_counts)


def _blueconnect_variants(nranks, factors, chunk_counts, channel_counts) -> list[dict]:
    levels = _hierarchical(factors)
    if len(levels) < 2:
        return []
    return [{"factors": list(order), "chunks": chunks} for order in factorizations(levels) for chunks in chunk_counts]


def _staged_transfers(nranks: int, size_bytes: int, params) -> int:
    factors = params.get("factors") or (nranks,)
    return 2 * sum(f - 1 for f in factors) * nranks * int(params.get("chunks", 1))


def _halving_doubling_transfers(nranks: int, size_bytes: int, params) -> int:
    return (2 * nranks * max(1, math.ceil(math.log2(nranks))) + 2 * nranks) * int(params.get("chunks", 1))


def _hierarchical_ring_transfers(nranks: int, size_bytes: int, params) -> int:
    return 4 * nranks * int(params.get("chunks", 1)) + 2 * nranks * nranks * int(params.get("chunks", 1))


ALGORITHMS = (
    Algorithm(
        "halving_doubling", ("allreduce",), halving_doubling_allreduce,
        "Rabenseifner: recursive-halving reduce-scatter + recursive-doubling all-gather",
        "2log2(p)·α + 2(p-1)/p·nβ + (p-1)/p·nγ   [p = 2^k, C = 1; pipelined levels for C > 1]",
        model=_halving_doubling_model, citation=_THAKUR, variants=chunk_variants,
        transfers=_halving_doubling_transfers,
    ),
    Algorithm(
        "hierarchical_ring", ("allreduce",), hierarchical_ring_allreduce,
        "intra-node binomial reduce, ring all-reduce among node leaders, intra-node broadcast",
        "2⌈log2 p1⌉·(α1 + nβ1) + 2(N-1)α2 + 2(N-1)/N·nβ2 + γ terms   [N = p/p1, C = 1]",
        model=_hierarchical_ring_model, citation=_THAKUR, defaults=_two_level_defaults,
        variants=_two_level_variants, transfers=_hierarchical_ring_transfers,
    ),
    Algorithm(
        "torus_2d", ("allreduce",), torus_2d_allreduce,
        "Mikami et al.: reduce-scatter along X, all-reduce along Y, all-gather along X",
        "2(X-1)(α_x + n/X·β_x) + 2(Y-1)(α_y + n/(XY)·β_y) + γ terms   [no link sharing, C = 1]",
        model=_torus_2d_model,
        citation="Mikami, H. et al. (2018). Massively distributed SGD: ImageNet/ResNet-50 training in a flash. "
                 "arXiv:1811.05233.",
        defaults=_torus_2d_defaults, variants=_torus_2d_variants, transfers=_staged_transfers,
    ),
    Algorithm(
        "blueconnect", ("allreduce",), blueconnect_allreduce,
        "Cho et al.: reduce-scatter over levels 1..k, all-gather over k..1, concurrent groups per level",
        "Σ_i max(S_i(α_i + m_iβ_i) + (s_i-1)m_iβ_i, S_i·s_i·m_iβ_i + α_i) + (p_i-1)m_iγ"
        "   [S_i = 2(p_i-1), m_i = n/(p_1…p_i), s_i groups sharing a link; pipelined levels for C > 1]",
        model=_blueconnect_model, citation=_CHO, defaults=_blueconnect_defaults, variants=_blueconnect_variants,
        transfers=_staged_transfers,
    ),
)
"""Registry records of the hierarchical all-reduce algorithms."""
