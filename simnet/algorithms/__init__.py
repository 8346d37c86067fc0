"""Collective algorithms: each a function returning a :class:`~simnet.schedule.Schedule`.

``ALGORITHMS`` maps the names used on the command line and in scenario files to an
:class:`Algorithm` entry: the collective it computes, its builder, a one-line
description and its cost formula. Every builder takes ``(nranks, size_bytes,
**params)``; an entry still unpacks as ``collective, builder = ALGORITHMS[name][:2]``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from types import MappingProxyType
from typing import NamedTuple

from simnet.algorithms.dense import (
    binomial_tree_allreduce,
    blueconnect_allreduce,
    double_binary_tree_allreduce,
    halving_doubling_allreduce,
    hierarchical_ring_allreduce,
    recursive_doubling_allreduce,
    ring_allreduce,
    torus_2d_allreduce,
)
from simnet.algorithms.primitives import all_gather, broadcast, reduce, reduce_scatter
from simnet.algorithms.sparse import SPARSE_ALGORITHMS
from simnet.errors import ScheduleError
from simnet.schedule import Schedule

__all__ = [
    "ALGORITHMS",
    "Algorithm",
    "Parameter",
    "all_reduce",
    "reduce_scatter",
    "all_gather",
    "broadcast",
    "reduce",
    "ring_allreduce",
    "recursive_doubling_allreduce",
    "halving_doubling_allreduce",
    "binomial_tree_allreduce",
    "double_binary_tree_allreduce",
    "hierarchical_ring_allreduce",
    "torus_2d_allreduce",
    "blueconnect_allreduce",
    "SPARSE_ALGORITHMS",
]


class Parameter(NamedTuple):
    """One keyword parameter of an algorithm builder."""

    name: str
    type: str
    default: object


class Algorithm(NamedTuple):
    """Registry entry of an algorithm.

    Attributes
    ----------
    collective : str
        Collective computed (one of :data:`simnet.schedule.COLLECTIVES`).
    builder : callable
        ``builder(nranks, size_bytes, **params) -> Schedule``.
    description : str
        One line.
    formula : str
        α-β cost for chunks = 1 (``p`` ranks, ``n`` bytes, ``γ`` reduction s/byte).
    """

    collective: str
    builder: Callable[..., Schedule]
    description: str = ""
    formula: str = ""

    @property
    def parameters(self) -> tuple[Parameter, ...]:
        """Keyword parameters of the builder, with their type hints and defaults (``None`` if required)."""
        hints = inspect.get_annotations(self.builder, eval_str=False)
        return tuple(
            Parameter(p.name, str(hints.get(p.name, "")), None if p.default is p.empty else p.default)
            for p in inspect.signature(self.builder).parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        )


ALGORITHMS = MappingProxyType(
    {
        "ring": Algorithm(
            "allreduce",
            ring_allreduce,
            "ring reduce-scatter + all-gather, optionally over several channel rings",
            "2(p-1)α + 2(p-1)/p·nβ + (p-1)/p·nγ",
        ),
        "recursive_doubling": Algorithm(
            "allreduce",
            recursive_doubling_allreduce,
            "log2 p pairwise exchanges of the whole payload (MPICH folding for non powers of two)",
            "log2(p)·(α + nβ + nγ)   [p = 2^k]",
        ),
        "halving_doubling": Algorithm(
            "allreduce",
            halving_doubling_allreduce,
            "Rabenseifner: recursive-halving reduce-scatter + recursive-doubling all-gather",
            "2log2(p)·α + 2(p-1)/p·nβ + (p-1)/p·nγ   [p = 2^k]",
        ),
        "binomial_tree": Algorithm(
            "allreduce",
            binomial_tree_allreduce,
            "binomial-tree reduce to rank 0, then binomial-tree broadcast",
            "2⌈log2 p⌉·(α + nβ) + ⌈log2 p⌉·nγ",
        ),
        "double_binary_tree": Algorithm(
            "allreduce",
            double_binary_tree_allreduce,
            "NCCL's two complementary binary trees, each reducing and broadcasting half the data",
            "2h·(α + n/2·β) + h·n/2·γ   [h = tree height, contention-free]",
        ),
        "hierarchical_ring": Algorithm(
            "allreduce",
            hierarchical_ring_allreduce,
            "intra-node binomial reduce, ring all-reduce among node leaders, intra-node broadcast",
            "2⌈log2 p1⌉·(α1 + nβ1) + 2(N-1)α2 + 2(N-1)/N·nβ2 + γ terms   [N = p/p1]",
        ),
        "torus_2d": Algorithm(
            "allreduce",
            torus_2d_allreduce,
            "Mikami et al.: reduce-scatter along X, all-reduce along Y, all-gather along X",
            "2(X-1)(α_x + n/X·β_x) + 2(Y-1)(α_y + n/(XY)·β_y) + γ terms   [no link sharing]",
        ),
        "blueconnect": Algorithm(
            "allreduce",
            blueconnect_allreduce,
            "Cho et al.: reduce-scatter over levels 1..k, all-gather over k..1, concurrent groups per level",
            "Σ_i max(S_i(α_i + m_iβ_i) + (s_i-1)m_iβ_i, S_i·s_i·m_iβ_i + α_i) + (p_i-1)m_iγ"
            "   [S_i = 2(p_i-1), m_i = n/(p_1…p_i), s_i groups sharing a link]",
        ),
        "reduce_scatter": Algorithm(
            "reduce_scatter",
            reduce_scatter,
            "ring reduce-scatter",
            "(p-1)α + (p-1)/p·n(β + γ)",
        ),
        "all_gather": Algorithm("all_gather", all_gather, "ring all-gather", "(p-1)α + (p-1)/p·nβ"),
        "broadcast": Algorithm(
            "broadcast", broadcast, "binomial-tree broadcast", "⌈log2 p⌉·(α + nβ)"
        ),
        "reduce": Algorithm("reduce", reduce, "binomial-tree reduce", "⌈log2 p⌉·(α + nβ + nγ)"),
    }
)

ALGORITHMS = MappingProxyType({**ALGORITHMS, **{name: Algorithm(*entry) for name, entry in SPARSE_ALGORITHMS.items()}})


def all_reduce(nranks: int, size_bytes: int, *, algorithm: str = "ring", **params) -> Schedule:
    """All-reduce with a named all-reduce algorithm of :data:`ALGORITHMS`.

    Parameters
    ----------
    nranks : int
        Ranks ``p``.
    size_bytes : int
        Payload per rank, bytes.
    algorithm : str, optional
        Name of an all-reduce algorithm (default ``"ring"``).
    **params
        The algorithm's parameters (``chunks``, ``factors``, ...).
    """
    names = sorted(name for name, entry in ALGORITHMS.items() if entry[0] == "allreduce")
    if algorithm not in names:
        raise ScheduleError(f"must be one of {names}, got {algorithm!r}", path="algorithm")
    return ALGORITHMS[algorithm][1](nranks, size_bytes, **params)
