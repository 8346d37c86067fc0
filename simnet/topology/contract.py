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
    ``routing`` (str), optional
        How routes are chosen, one of :data:`ROUTINGS` (see
        :mod:`simnet.topology.routing`): ``"dmodk"`` (fat-trees and leaf-spines),
        ``"dimension_order"`` (tori), ``"ecmp_hash"``, ``"shortest"`` (the default) or
        ``"simgrid"`` (SimGrid's own fat-tree and torus rules, for cross-checks).
    ``dims`` (list of int), optional
        On tori, the ring size of every dimension; routers then carry ``coord``.
    ``host_transit`` (bool), optional
        ``False`` forbids routes between two servers through a third (default True).
    ``pxn`` (bool), optional
        ``True``: a GPU sends to another server through the NIC of the destination's
        rail, reached over NVLink through the GPU of that rail in its own server
        (NCCL's PXN); ``False`` (default): through the NIC of its own rail.

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
    ``port`` (int), optional
        On a node cabled to a fabric switch (a GPU of a fabric, a NIC of a cluster):
        the index of the fabric's host port it occupies, the destination index of
        d-mod-k routing. Without it, such nodes are numbered in graph order.
    ``coord`` (tuple of int), ``level`` (str), ``pod`` (int), optional
        Position of a switch in its fabric (torus coordinate, fabric level, pod).
    ``reduce`` (bool), optional, switches only
        ``True`` when the switch can reduce data in flight and multicast the
        result (default False): NVSwitch's NVLink SHARP ("NVLS", third-generation
        NVSwitch of H100/H200 systems and later) and InfiniBand SHARP on NVIDIA
        Quantum, Quantum-2 and Quantum-X800 switches.
    ``reduce_efficiency`` (float in (0, 1]), optional, only with ``reduce``
        The fraction of its ports' bandwidth that in-switch reductions and
        multicasts achieve (default 1.0). NCCL's ``nvlsEfficiency`` (NVIDIA/nccl
        ``src/graph/tuning.cc``, 2.28 and later) is 0.85 on Hopper and 0.74 on
        Blackwell; the NVSwitch templates use these figures.

Edge attributes (one directed edge per direction of a cable)
    ``bandwidth_Bps`` (float > 0)
        Capacity of this direction in bytes per second. Parallel cables between
        the same two nodes (a *bundle*) are one edge whose bandwidth is their sum;
        the cables of a bundle are identical.
    ``latency_s`` (float ≥ 0)
        Latency of this direction in seconds.
    ``tier`` (str)
        Technology or level the link belongs to, e.g. ``"nvlink"``, ``"pcie"``,
        ``"ib"``, ``"fabric"``; used to break time down by tier.
    ``cables`` (int ≥ 1), optional
        How many physical cables the edge stands for (default 1).
    ``striped`` (bool), optional
        Whether the hardware spreads every transfer over all cables of the bundle
        (NVLinks between two GPUs, a GPU's NVLinks to an NVSwitch): the bundle is
        then one link of the summed bandwidth. Otherwise each cable is a link of its
        own (``bandwidth_Bps / cables``) and the routing pins every route to one of
        them, as switches do with the ports of a fabric bundle. Default
        (:func:`striped`): ``True`` when both ends belong to the same server (the
        same ``host``), ``False`` otherwise.

Links are full duplex: every edge ``u -> v`` must have its reverse ``v -> u``
(the two directions may differ in bandwidth).
"""

from __future__ import annotations

import math

import networkx as nx

from simnet.errors import TopologyError

__all__ = [
    "NODE_KINDS", "ROUTINGS", "validate", "gpus", "striped", "separate_cables", "reducing_switches",
    "reduce_efficiency", "switch_capability_error", "torus_coordinates",
]

NODE_KINDS = frozenset({"gpu", "nic", "cpu", "switch"})

ROUTINGS = ("shortest", "ecmp_hash", "dmodk", "dimension_order", "simgrid")
"""Routing rules a graph may ask for (graph attribute ``routing``)."""


def gpus(graph: nx.DiGraph) -> list:
    """Return the GPU nodes in the order the graph lists them (the rank order)."""
    return [node for node, kind in graph.nodes(data="kind") if kind == "gpu"]


def torus_coordinates(graph: nx.DiGraph, ranks: list | None = None) -> dict | None:
    """The torus coordinate of every GPU: its own ``coord`` (GPUs that are routers) or its one router's.

    Parameters
    ----------
    graph : networkx.DiGraph
        A topology.
    ranks : list, optional
        GPU nodes (default: all, :func:`gpus`).

    Returns
    -------
    dict or None
        GPU -> ``coord`` tuple; ``None`` unless `graph` carries ``dims`` and every GPU
        of `ranks` is a router or is cabled to exactly one (not so in a cluster,
        whose GPUs reach a torus through NICs).
    """
    if "dims" not in graph.graph:
        return None
    coords = {}
    for node in gpus(graph) if ranks is None else ranks:
        coord = graph.nodes[node].get("coord")
        if coord is None:
            routers = [graph.nodes[v]["coord"] for v in graph.successors(node) if "coord" in graph.nodes[v]]
            if len(routers) != 1:
                return None
            coord = routers[0]
        coords[node] = tuple(coord)
    return coords


def striped(graph: nx.DiGraph, u, v) -> bool:
    """Whether the bundle ``u -> v`` is striped: its ``striped`` attribute, else whether ``u`` and ``v`` share a host."""
    value = graph.edges[u, v].get("striped")
    if value is not None:
        return value
    host = graph.nodes[u].get("host")
    return host is not None and host == graph.nodes[v].get("host")


def separate_cables(graph: nx.DiGraph, u, v) -> int:
    """How many links the edge ``u -> v`` is: its ``cables`` unless the bundle is striped, then 1."""
    cables = graph.edges[u, v].get("cables", 1)
    return 1 if cables == 1 or striped(graph, u, v) else cables


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def reducing_switches(graph: nx.DiGraph) -> list:
    """Return the switches that can reduce in flight (``reduce = True``), in graph order."""
    return [node for node, data in graph.nodes(data=True) if data.get("kind") == "switch" and data.get("reduce")]


def reduce_efficiency(graph: nx.DiGraph, node) -> float:
    """Fraction of its port bandwidth that `node` reduces and multicasts at: its ``reduce_efficiency``, default 1.0.

    Raises
    ------
    TopologyError
        If `node` cannot reduce (no ``reduce = True``).
    """
    data = graph.nodes[node]
    if not data.get("reduce"):
        raise TopologyError(f"node {node!r}: cannot reduce in flight (reduce is not true)")
    return float(data.get("reduce_efficiency", 1.0))


def switch_capability_error(node, data: dict) -> tuple[str, str] | None:
    """What is wrong with the ``reduce`` and ``reduce_efficiency`` attributes of `node`, if anything.

    Returns
    -------
    tuple of (str, str) or None
        The offending attribute and a one-line message naming `node`, or None when
        both attributes are absent or valid.
    """
    has_reduce, has_efficiency = "reduce" in data, "reduce_efficiency" in data
    if not has_reduce and not has_efficiency:
        return None
    if has_reduce and not isinstance(data["reduce"], bool):
        return "reduce", f"node {node!r}: reduce must be true or false, got {data['reduce']!r}"
    if has_reduce and data.get("kind") != "switch":
        return "reduce", (
            f"node {node!r}: reduce is a switch capability (NVLS, SHARP), but the node is of kind {data.get('kind')!r}"
        )
    if has_efficiency:
        efficiency = data["reduce_efficiency"]
        if not _number(efficiency) or not 0 < efficiency <= 1:
            return "reduce_efficiency", (
                f"node {node!r}: reduce_efficiency must be a number in (0, 1], got {efficiency!r}"
            )
        if not data.get("reduce"):
            return "reduce_efficiency", f"node {node!r}: reduce_efficiency is given but reduce is not true"
    return None


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
    routing = graph.graph.get("routing")
    if routing is not None and routing not in ROUTINGS:
        raise TopologyError(f"must be one of {list(ROUTINGS)}, got {routing!r}", path="routing")
    if graph.graph.get("pxn", False) not in (True, False):
        raise TopologyError(f"must be true or false, got {graph.graph['pxn']!r}", path="pxn")
    for node, data in graph.nodes(data=True):
        kind = data.get("kind")
        if not isinstance(kind, str) or kind not in NODE_KINDS:
            raise TopologyError(
                f"node {node!r}: kind must be one of {sorted(NODE_KINDS)}, got {kind!r}"
            )
        for key in ("host", "local_rank", "socket", "rail", "port"):
            value = data.get(key)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                raise TopologyError(f"node {node!r}: {key} must be an integer ≥ 0, got {value!r}")
        if data.get("forward", True) not in (True, False):
            raise TopologyError(f"node {node!r}: forward must be true or false, got {data['forward']!r}")
        problem = switch_capability_error(node, data)
        if problem is not None:
            raise TopologyError(problem[1])
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
        if data.get("striped", False) not in (True, False):
            raise TopologyError(f"{where}: striped must be true or false, got {data['striped']!r}")
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
