"""The graph attribute contract every simnet topology obeys, and its one validator.

A topology is a :class:`networkx.DiGraph`.

Graph attributes
    ``name`` (str)
        Human-readable name with the builder's parameters, e.g.
        ``"switch(hosts=8, bandwidth=12.5 GB/s, latency=1 us)"``.
    ``builder`` (str) and ``params`` (dict), optional
        How to rebuild the graph; present when a builder made it.
    ``sources`` (list of str) and ``description`` (str), optional
        Where the figures come from and what the machine is (topology files).
    ``routing`` (str) and ``dims`` (list of int), optional
        ``"dimension_order"`` on tori, with the ring size of every dimension;
        routers then carry ``coord`` (see :mod:`simnet.topology.routing`).
    ``host_transit`` (bool), optional
        ``False`` forbids routes between two servers through a third (default True).

Node attributes
    ``kind`` (str)
        One of ``"gpu"``, ``"nic"``, ``"cpu"``, ``"switch"``. GPUs are the ranks of a
        collective; every other kind only forwards traffic. Any node may forward.
    ``host`` (int), optional
        Index of the server a GPU, NIC or CPU belongs to (hierarchy level 1).
    ``local_rank`` (int), optional
        Index of a GPU inside its server (hierarchy level 2).
    ``socket`` (int), optional
        CPU socket a GPU, NIC or CPU is attached to inside its server.
    ``rail`` (int), optional
        On a GPU: index of the NIC it sends through (the server's NIC order); on a
        NIC: its own index.
    ``forward`` (bool), optional
        ``False`` when the node relays no traffic of others (default True).
    ``port_bandwidth_Bps`` (float), optional
        On a NIC: line rate of its network port, bytes/s.
    ``coord`` (tuple of int), ``level`` (str), ``pod`` (int), optional
        Position of a switch in its fabric (torus coordinate, fabric level, pod).

Edge attributes (one directed edge per direction of a cable)
    ``bandwidth_Bps`` (float > 0)
        Capacity of this direction in bytes per second. Parallel cables between
        the same two nodes are one edge whose bandwidth is their sum.
    ``latency_s`` (float ≥ 0)
        Latency of this direction in seconds.
    ``tier`` (str)
        Technology or level the link belongs to, e.g. ``"nvlink"``, ``"pcie"``,
        ``"ib"``, ``"fabric"``; used to break time down by tier.
    ``cables`` (int ≥ 1), optional
        How many physical cables the edge stands for (default 1).

Links are full duplex: every edge ``u -> v`` must have its reverse ``v -> u``
(the two directions may differ in bandwidth).
"""

from __future__ import annotations

import math

import networkx as nx

from simnet.errors import TopologyError

__all__ = ["NODE_KINDS", "validate", "gpus"]

NODE_KINDS = frozenset({"gpu", "nic", "cpu", "switch"})


def gpus(graph: nx.DiGraph) -> list:
    """Return the GPU nodes in the order the graph lists them (the rank order)."""
    return [node for node, kind in graph.nodes(data="kind") if kind == "gpu"]


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def validate(graph: nx.DiGraph) -> nx.DiGraph:
    """Check that `graph` obeys the topology contract; return it unchanged.

    Parameters
    ----------
    graph : networkx.DiGraph
        The topology to check.

    Returns
    -------
    networkx.DiGraph
        The same graph, so that builders can end with ``return validate(G)``.

    Raises
    ------
    TopologyError
        Naming the first offending node or edge and what was expected.
    """
    if not isinstance(graph, nx.DiGraph) or graph.is_multigraph():
        raise TopologyError(
            f"a topology must be a networkx.DiGraph, got {type(graph).__name__}; "
            "merge parallel cables into one edge with summed bandwidth_Bps"
        )
    for node, data in graph.nodes(data=True):
        kind = data.get("kind")
        if not isinstance(kind, str) or kind not in NODE_KINDS:
            raise TopologyError(
                f"node {node!r}: kind must be one of {sorted(NODE_KINDS)}, got {kind!r}"
            )
        for key in ("host", "local_rank", "socket", "rail"):
            value = data.get(key)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                raise TopologyError(f"node {node!r}: {key} must be an integer ≥ 0, got {value!r}")
        if data.get("forward", True) not in (True, False):
            raise TopologyError(f"node {node!r}: forward must be true or false, got {data['forward']!r}")
    for u, v, data in graph.edges(data=True):
        where = f"link {u!r} -> {v!r}"
        bandwidth = data.get("bandwidth_Bps")
        if not _number(bandwidth) or bandwidth <= 0:
            raise TopologyError(f"{where}: bandwidth_Bps must be a finite number > 0, got {bandwidth!r}")
        latency = data.get("latency_s")
        if not _number(latency) or latency < 0:
            raise TopologyError(f"{where}: latency_s must be a finite number ≥ 0, got {latency!r}")
        tier = data.get("tier")
        if not isinstance(tier, str) or not tier:
            raise TopologyError(f"{where}: tier must be a non-empty string, got {tier!r}")
        cables = data.get("cables", 1)
        if not isinstance(cables, int) or isinstance(cables, bool) or cables < 1:
            raise TopologyError(f"{where}: cables must be an integer ≥ 1, got {cables!r}")
        if not graph.has_edge(v, u):
            raise TopologyError(f"{where}: links are full duplex, but the reverse link {v!r} -> {u!r} is missing")
    ranks = gpus(graph)
    if not ranks:
        raise TopologyError("the topology has no node of kind 'gpu'")
    reachable = nx.descendants(graph, ranks[0]) | {ranks[0]}
    for gpu in ranks:
        if gpu not in reachable:
            raise TopologyError(f"node {gpu!r}: GPU is not connected to GPU {ranks[0]!r}")
    return graph
