"""Hierarchy factors of a topology, for the hierarchical algorithms.

Hierarchical algorithms (``blueconnect``, ``torus_2d``, ``hierarchical_ring``) take
the hierarchy as plain data: ``factors = (p1, ..., pk)``, innermost level first,
with ``p1 ... pk = p`` and rank ``r`` at coordinates
``c_i = (r // (p1 ... p_{i-1})) mod p_i`` (see :mod:`simnet.algorithms.hierarchical`).
Their registry records derive default factors from :func:`hierarchy_factors`.
This module is the one place that reads them off a topology graph, from the GPU
node attributes (all optional):

``socket``
    CPU socket (or NVSwitch/PCIe domain) of the GPU inside its host;
``host``
    server the GPU belongs to (the contract's hierarchy level 1);
``leaf``
    leaf (top-of-rack) switch its host hangs under;
``local_rank``
    position of the GPU inside its host; when present it must increase with the
    rank inside every host.

The ranks must be numbered hierarchy-major (all GPUs of a socket, then of a host,
then of a leaf, consecutively, as the topology builders do) and every group of a
level must have the same size; otherwise :class:`~simnet.errors.TopologyError`
says which rank breaks it.

A torus is a hierarchy too, read off the routers the GPUs sit on rather than a GPU
attribute: :data:`TORUS`, asked for alone, gives its ``dims`` innermost first.

Examples
--------
>>> from simnet.topology import switch
>>> hierarchy_factors(switch(16, 12.5e9, 1e-6))
(1, 16)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import networkx as nx

from simnet.errors import TopologyError
from simnet.topology import gpus, torus_coordinates

__all__ = ["LEVELS", "TORUS", "hierarchy_factors", "node_defaults", "rank_coordinates"]

LEVELS = ("socket", "host", "leaf")
"""GPU attributes that name hierarchy levels, innermost first."""

TORUS = "torus"
"""The level :func:`hierarchy_factors` reads off torus coordinates instead of a GPU attribute."""

def _present(graph: nx.DiGraph, ranks: list, levels: Sequence[str]) -> list[str]:
    used = []
    for level in levels:
        if level not in LEVELS:
            raise TopologyError(f"must be among {list(LEVELS)}, got {level!r}", path="levels")
        has = [level in graph.nodes[gpu] for gpu in ranks]
        if any(has) and not all(has):
            missing = ranks[has.index(False)]
            raise TopologyError(f"node {missing!r}: GPU has no {level!r} attribute while other GPUs do")
        if all(has):
            used.append(level)
    return used


def rank_coordinates(graph: nx.DiGraph, levels: Sequence[str] = LEVELS, ranks: Sequence | None = None) -> list[tuple]:
    """Per rank, the values of the hierarchy attributes present, outermost first.

    Parameters
    ----------
    graph : networkx.DiGraph
        A topology (see :mod:`simnet.topology.contract`).
    levels : sequence of str, optional
        Attributes to use, among :data:`LEVELS`; those no GPU carries are skipped.
    ranks : sequence, optional
        GPU nodes in rank order (default: every GPU of `graph`, in graph order),
        e.g. the GPUs a job was placed on.

    Returns
    -------
    list of tuple
        ``[(leaf, host, socket), ...]`` restricted to the attributes present.
    """
    ranks = gpus(graph) if ranks is None else list(ranks)
    used = _present(graph, ranks, levels)
    return [tuple(graph.nodes[gpu][level] for level in reversed(used)) for gpu in ranks]


def _check_local_ranks(graph: nx.DiGraph, ranks: list) -> None:
    if not all("local_rank" in graph.nodes[gpu] and "host" in graph.nodes[gpu] for gpu in ranks):
        return
    last: dict = {}
    for gpu in ranks:
        host, local = graph.nodes[gpu]["host"], graph.nodes[gpu]["local_rank"]
        if host in last and local <= last[host]:
            raise TopologyError(
                f"node {gpu!r}: local_rank {local} does not increase with the rank inside host {host!r}"
            )
        last[host] = local


def hierarchy_factors(graph: nx.DiGraph, levels: Sequence[str] = LEVELS, ranks: Sequence | None = None
                      ) -> tuple[int, ...]:
    """Group size per hierarchy level, innermost first, read from GPU attributes.

    With the attributes ``socket``, ``host`` and ``leaf`` all present this is
    ``(GPUs per socket, sockets per host, hosts per leaf, leaves)``; levels whose
    attribute no GPU carries are left out, so a graph with only ``host`` gives
    ``(GPUs per host, hosts)`` and a graph without any ``(p,)``. There is one
    factor more than levels used and their product is the number of GPUs;
    factors of 1 are kept.

    Parameters
    ----------
    graph : networkx.DiGraph
        A topology (see :mod:`simnet.topology.contract`).
    levels : sequence of str, optional
        Attributes to use, among :data:`LEVELS` (default all).
    ranks : sequence, optional
        GPU nodes in rank order (default: every GPU of `graph`), e.g. the GPUs of a
        job, whose hierarchy its algorithms follow.

    ``levels=(TORUS,)`` reads the torus the GPUs sit on (or are, ``gpu_routers``;
    :func:`simnet.topology.torus_coordinates`) instead: when the ranks are all its
    GPUs in row-major order of their coordinates (the last dimension fastest, as
    :func:`simnet.topology.torus` numbers them) the factors are ``dims`` reversed,
    ``(d_{n-1}, ..., d_0)``; otherwise, as for an attribute no GPU carries,
    ``(p,)``.

    Returns
    -------
    tuple of int
        The ``factors`` parameter of ``blueconnect``, ``torus_2d`` (with
        ``levels=("host",)``, or ``(TORUS,)`` on a torus) and ``hierarchical_ring``.

    Raises
    ------
    TopologyError
        When the ranks are not numbered hierarchy-major or a level's groups differ
        in size, naming the first offending GPU; when :data:`TORUS` comes with
        other levels.
    """
    ranks = gpus(graph) if ranks is None else list(ranks)
    if TORUS in levels:
        if len(levels) != 1:
            raise TopologyError(f"{TORUS!r} is a level of its own, got {list(levels)}", path="levels")
        return _torus_factors(graph, ranks)
    _check_local_ranks(graph, ranks)
    coordinates = rank_coordinates(graph, levels, ranks)
    depth = len(coordinates[0])
    sizes = [len(ranks)]
    for prefix in range(1, depth + 1):
        runs: list[int] = []
        seen: set = set()
        previous = None
        for index, coordinate in enumerate(coordinates):
            key = coordinate[:prefix]
            if key != previous:
                if key in seen:
                    raise TopologyError(
                        f"node {ranks[index]!r}: ranks are not numbered hierarchy-major "
                        f"(group {key!r} resumes after another group)"
                    )
                seen.add(key)
                runs.append(0)
                previous = key
            runs[-1] += 1
        if len(set(runs)) != 1:
            first = ranks[sum(runs[: runs.index(min(runs))])]
            raise TopologyError(
                f"node {first!r}: groups of level {prefix} differ in size ({sorted(set(runs))} GPUs)"
            )
        sizes.append(runs[0])
    return (sizes[depth], *(sizes[i] // sizes[i + 1] for i in reversed(range(depth))))


def _torus_factors(graph: nx.DiGraph, ranks: list) -> tuple[int, ...]:
    """``dims`` innermost first when `ranks` are the torus' GPUs in row-major order, else ``(p,)``."""
    coords = torus_coordinates(graph, ranks)
    if coords is None:
        return (len(ranks),)
    dims = [int(size) for size in graph.graph["dims"]]
    if [coords[node] for node in ranks] != list(itertools.product(*(range(size) for size in dims))):
        return (len(ranks),)
    return tuple(reversed(dims))


def node_defaults(factors: Callable[[Sequence[str]], tuple[int, ...]]) -> dict:
    """The ``gpus_per_node`` of an algorithm laid out server by server (``hierarchical`` and ``rail_aligned``
    all-to-all, ``sparse_ring_ring``): the GPUs per host, 1 on a topology whose GPUs name no host.

    `factors` is ``hierarchy_factors`` of the topology (an :attr:`~simnet.algorithms.registry.Algorithm.defaults`
    callable).

    >>> import functools
    >>> from simnet.topology import switch
    >>> node_defaults(functools.partial(hierarchy_factors, switch(16, 12.5e9, 1e-6)))
    {'gpus_per_node': 1}
    """
    found = factors(("host",))
    return {"gpus_per_node": found[0] if len(found) > 1 else 1}
