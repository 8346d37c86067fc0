"""Collective algorithms, each one :class:`~simnet.algorithms.registry.Algorithm` record in one registry.

``ALGORITHMS`` maps the names used on the command line and in scenario files to
their records: the collectives each computes, its builder ``builder(nranks,
size_bytes, **params) -> Schedule``, its parameters, its closed form (or why it has
none), its tuning variants and its citation. Records live with their builders,
one module per family:

``primitives``
    phases (ring reduce-scatter and all-gather, tree reduce and broadcast) and the
    primitive collectives ``reduce_scatter``, ``all_gather``, ``broadcast``, ``reduce``;
``dense``
    flat all-reduce: ``ring``, ``recursive_doubling``, ``binomial_tree``, ``double_binary_tree``;
``hierarchical``
    all-reduce over hierarchy levels: ``halving_doubling``, ``hierarchical_ring``,
    ``torus_2d``, ``blueconnect``;
``nccl``
    what NCCL runs: ``nccl_ring``, ``nccl_tree``, ``nvls``, ``nvls_tree``,
    ``collnet_direct``, ``collnet_chain`` with NCCL's protocols, and ``nccl``, NCCL's
    own choice per size;
``sparse``
    top-k all-reduce on real index sets;
``alltoall``
    all-to-all and all-to-all-v: ``direct``, ``bruck``, ``hierarchical``, ``rail_aligned``.

Registering a record here is all the command line, scenarios, the tuner, the
models and the tests need (``docs/design.md`` walks through adding one).
"""

from __future__ import annotations

from simnet.algorithms import alltoall, dense, hierarchical, nccl, primitives, sparse
from simnet.algorithms.alltoall import bruck_alltoall, direct_alltoall, hierarchical_alltoall, rail_aligned_alltoall
from simnet.algorithms.builder import ScheduleBuilder
from simnet.algorithms.dense import (
    binomial_tree_allreduce,
    double_binary_tree_allreduce,
    recursive_doubling_allreduce,
    ring_allreduce,
)
from simnet.algorithms.hierarchical import (
    blueconnect_allreduce,
    halving_doubling_allreduce,
    hierarchical_ring_allreduce,
    torus_2d_allreduce,
)
from simnet.algorithms.primitives import all_gather, broadcast, reduce, reduce_scatter
from simnet.algorithms.registry import Algorithm, Parameter, Registry
from simnet.errors import ScheduleError
from simnet.schedule import Schedule

__all__ = [
    "ALGORITHMS",
    "Algorithm",
    "Parameter",
    "ScheduleBuilder",
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
    "direct_alltoall",
    "bruck_alltoall",
    "hierarchical_alltoall",
    "rail_aligned_alltoall",
]

ALGORITHMS = Registry([*dense.ALGORITHMS, *hierarchical.ALGORITHMS, *nccl.ALGORITHMS, *primitives.ALGORITHMS,
                       *sparse.ALGORITHMS, *alltoall.ALGORITHMS])
"""Name -> :class:`Algorithm`: every algorithm simnet offers."""


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
    names = ALGORITHMS.for_op("allreduce")
    if algorithm not in names:
        raise ScheduleError(f"must be one of {names}, got {algorithm!r}", path="algorithm")
    return ALGORITHMS[algorithm].build(nranks, size_bytes, **params)
