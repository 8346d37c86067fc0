"""Builders for network fabrics: one function per family.

Every builder returns a validated :class:`networkx.DiGraph` that obeys
:mod:`simnet.topology.contract`, with GPUs named ``gpu0 .. gpu{n-1}`` in rank order.
"""

from __future__ import annotations

import networkx as nx

from simnet.errors import TopologyError
from simnet.topology.contract import validate
from simnet.units import format_bandwidth, format_time

__all__ = ["switch", "ring", "add_cable"]


def add_cable(
    graph: nx.DiGraph, u, v, bandwidth_Bps: float, latency_s: float, tier: str, *, cables: int = 1
) -> None:
    """Add a full-duplex cable ``u <-> v`` as two directed edges.

    A second cable between the same nodes adds its bandwidth to the existing edges
    (as DGX-1's double NVLinks do) and increments their ``cables`` count.

    Parameters
    ----------
    graph : networkx.DiGraph
        Graph to extend in place.
    u, v : hashable
        End points.
    bandwidth_Bps : float
        Bandwidth of each direction of one cable, in bytes per second.
    latency_s : float
        Latency of each direction, in seconds.
    tier : str
        Tier of the link (see the contract).
    cables : int, optional
        Number of identical cables to add (default 1).
    """
    for a, b in ((u, v), (v, u)):
        if graph.has_edge(a, b):
            edge = graph.edges[a, b]
            if edge["tier"] != tier or edge["latency_s"] != latency_s:
                raise TopologyError(
                    f"link {a!r} -> {b!r}: parallel cables must share tier and latency"
                )
            edge["bandwidth_Bps"] += cables * bandwidth_Bps
            edge["cables"] += cables
        else:
            graph.add_edge(
                a, b, bandwidth_Bps=cables * bandwidth_Bps, latency_s=latency_s, tier=tier, cables=cables
            )


def _check_common(hosts: int, bandwidth_Bps: float, latency_s: float, minimum_hosts: int = 2) -> None:
    if not isinstance(hosts, int) or isinstance(hosts, bool) or hosts < minimum_hosts:
        raise TopologyError(f"must be an integer ≥ {minimum_hosts}, got {hosts!r}", path="hosts")
    if not isinstance(bandwidth_Bps, (int, float)) or not bandwidth_Bps > 0 or bandwidth_Bps == float("inf"):
        raise TopologyError(f"must be a finite bandwidth > 0, got {bandwidth_Bps!r}", path="bandwidth_Bps")
    if not isinstance(latency_s, (int, float)) or not 0 <= latency_s < float("inf"):
        raise TopologyError(f"must be a finite time ≥ 0, got {latency_s!r}", path="latency_s")


def _label(builder: str, **params) -> str:
    shown = []
    for key, value in params.items():
        if key.endswith("_Bps"):
            shown.append(f"{key.removesuffix('_Bps')}={format_bandwidth(value)}")
        elif key.endswith("_s"):
            shown.append(f"{key.removesuffix('_s')}={format_time(value)}")
        else:
            shown.append(f"{key}={value}")
    return f"{builder}({', '.join(shown)})"


def _new_graph(builder: str, **params) -> nx.DiGraph:
    graph = nx.DiGraph(name=_label(builder, **params), builder=builder, params=dict(params))
    return graph


def switch(hosts: int, bandwidth_Bps: float, latency_s: float, *, tier: str = "fabric") -> nx.DiGraph:
    """Every GPU on one non-blocking switch (a crossbar).

    Parameters
    ----------
    hosts : int
        Number of GPUs, ≥ 2.
    bandwidth_Bps : float
        Bandwidth of each GPU's link to the switch, per direction, bytes/s.
    latency_s : float
        Latency of each link, seconds. A GPU-to-GPU path is two links, so its
        latency is ``2 * latency_s``.
    tier : str, optional
        Tier label of the links (default ``"fabric"``).

    Returns
    -------
    networkx.DiGraph
        Nodes ``gpu0 .. gpu{hosts-1}`` (kind ``gpu``) and ``switch`` (kind ``switch``);
        ``2 * hosts`` directed edges. Every GPU has in- and out-degree 1.

    Notes
    -----
    This is SimGrid's ``<cluster>`` without topology: each host has a private
    full-duplex link to a crossbar that never limits bandwidth.

    Examples
    --------
    >>> G = switch(8, 12.5e9, 1e-6)
    >>> G.number_of_nodes(), G.number_of_edges()
    (9, 16)
    """
    _check_common(hosts, bandwidth_Bps, latency_s)
    graph = _new_graph("switch", hosts=hosts, bandwidth_Bps=bandwidth_Bps, latency_s=latency_s)
    for i in range(hosts):
        graph.add_node(f"gpu{i}", kind="gpu", host=i)
    graph.add_node("switch", kind="switch")
    for i in range(hosts):
        add_cable(graph, f"gpu{i}", "switch", bandwidth_Bps, latency_s, tier)
    return validate(graph)


def ring(hosts: int, bandwidth_Bps: float, latency_s: float, *, tier: str = "fabric") -> nx.DiGraph:
    """GPUs on a bidirectional ring, each cabled to its two neighbours.

    Parameters
    ----------
    hosts : int
        Number of GPUs, ≥ 2. With two GPUs there is a single cable between them,
        not a double one.
    bandwidth_Bps : float
        Bandwidth of each cable, per direction, bytes/s.
    latency_s : float
        Latency of each cable, seconds.
    tier : str, optional
        Tier label of the links (default ``"fabric"``).

    Returns
    -------
    networkx.DiGraph
        Nodes ``gpu0 .. gpu{hosts-1}``; edges ``gpu{i} <-> gpu{(i+1) % hosts}``:
        ``2 * hosts`` directed edges for ``hosts ≥ 3``, 2 for ``hosts == 2``.
        GPUs forward traffic for each other; the diameter is ``hosts // 2`` hops.

    Examples
    --------
    >>> ring(4, 25e9, 1e-6).number_of_edges()
    8
    """
    _check_common(hosts, bandwidth_Bps, latency_s)
    graph = _new_graph("ring", hosts=hosts, bandwidth_Bps=bandwidth_Bps, latency_s=latency_s)
    for i in range(hosts):
        graph.add_node(f"gpu{i}", kind="gpu", host=i)
    for i in range(hosts):
        j = (i + 1) % hosts
        if not graph.has_edge(f"gpu{i}", f"gpu{j}"):
            add_cable(graph, f"gpu{i}", f"gpu{j}", bandwidth_Bps, latency_s, tier)
    return validate(graph)
