"""Builders for network fabrics: one function per family.

Every builder returns a validated :class:`networkx.DiGraph` that obeys
:mod:`simnet.topology.contract`, with GPUs named ``gpu0 .. gpu{n-1}`` in rank order.
The switched fabrics (:func:`switch`, :func:`fat_tree`, :func:`leaf_spine`,
:func:`torus`) are also available as *skeletons* through ``FABRICS``: a function
``skeleton(graph, **params) -> list`` that adds the fabric's switches and cables to
`graph` and returns its host ports, one edge switch per port in port order. The
public builders put one GPU on every port; :func:`simnet.topology.cluster.cluster`
puts the NICs of whole servers there instead.
"""

from __future__ import annotations

import itertools
import math
from types import MappingProxyType

import networkx as nx

from simnet.errors import TopologyError
from simnet.topology.contract import ROUTINGS, validate
from simnet.units import format_bandwidth, format_time

__all__ = ["switch", "ring", "fat_tree", "leaf_spine", "torus", "pgft", "add_cable", "tiers_by_level", "FABRICS"]


def add_cable(
    graph: nx.DiGraph,
    u,
    v,
    bandwidth_Bps: float,
    latency_s: float,
    tier: str,
    *,
    cables: int = 1,
    striped: bool | None = None,
) -> None:
    """Add a full-duplex cable ``u <-> v`` as two directed edges.

    A second cable between the same nodes joins the first in a *bundle*: the edges'
    bandwidth becomes the sum and their ``cables`` count grows. Whether a bundle is
    one striped link or separate cables is the edge attribute ``striped`` (see
    :mod:`simnet.topology.contract`).

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
    striped : bool, optional
        Sets the bundle's ``striped`` attribute (default: leave it to the contract's
        rule, striped inside a server).

    Raises
    ------
    TopologyError
        If the new cables differ from the bundle's in tier, latency or bandwidth.
    """
    for a, b in ((u, v), (v, u)):
        if graph.has_edge(a, b):
            edge = graph.edges[a, b]
            if (
                edge["tier"] != tier
                or edge["latency_s"] != latency_s
                or not math.isclose(edge["bandwidth_Bps"], edge["cables"] * bandwidth_Bps, rel_tol=1e-12)
            ):
                raise TopologyError(
                    f"link {a!r} -> {b!r}: parallel cables must share tier, latency and bandwidth"
                )
            edge["bandwidth_Bps"] += cables * bandwidth_Bps
            edge["cables"] += cables
        else:
            graph.add_edge(
                a, b, bandwidth_Bps=cables * bandwidth_Bps, latency_s=latency_s, tier=tier, cables=cables
            )
        if striped is not None:
            graph.edges[a, b]["striped"] = striped


_LEVEL_ORDER = {"host": 0, "edge": 1, "leaf": 1, "router": 1, "aggregation": 2, "spine": 2, "core": 3}


def _level_rank(level: str) -> tuple[int, str]:
    if level in _LEVEL_ORDER:
        return _LEVEL_ORDER[level], level
    digits = level.removeprefix("level")
    return (int(digits), level) if digits.isdigit() else (len(_LEVEL_ORDER), level)


def tiers_by_level(graph: nx.DiGraph) -> nx.DiGraph:
    """A copy of `graph` whose fabric cables carry a tier per level: ``"<tier>:<lower>-<upper>"``.

    A cable with a switch of the fabric at one end (a switch with a ``level``: ``leaf``/``spine``,
    ``edge``/``aggregation``/``core``, a torus ``router``, a PGFT's ``levelN``) is named by its tier and
    the levels it joins, lower first, an endpoint without a level (a GPU, a NIC) being ``host``:
    ``fabric:host-edge``, ``fabric:edge-aggregation``, ``ib:leaf-spine``. Cables inside servers keep their
    tier. :meth:`simnet.engine.Trace.tiers`, the critical path and ``tier_efficiency`` then tell the fabric's
    levels apart (the Gantt plot colours a transfer by its route's slowest cable, the first on ties, so on a
    fabric of equal cables it still shows the host level). The YAML form is ``tiers: per_level`` beside a
    topology's keys.

    >>> g = tiers_by_level(fat_tree(4, 12.5e9, 1e-6))
    >>> sorted({d["tier"] for _, _, d in g.edges(data=True)})
    ['fabric:aggregation-core', 'fabric:edge-aggregation', 'fabric:host-edge']
    """
    out = graph.copy()

    def level(node) -> str | None:
        data = out.nodes[node]
        return data.get("level") if data.get("kind") == "switch" else None

    for u, v, data in out.edges(data=True):
        ends = (level(u), level(v))
        if ends == (None, None):
            continue
        lower, upper = sorted((end or "host" for end in ends), key=_level_rank)
        data["tier"] = f"{data['tier']}:{lower}-{upper}"
    return out


def _check_int(value: object, path: str, minimum: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise TopologyError(f"must be an integer ≥ {minimum}, got {value!r}", path=path)


def _unit_hint(value: object, parser: str) -> str:
    """For a unit string given where Python builders take SI numbers: how to convert it."""
    return f" (simnet.units.{parser}({value!r}) converts a unit string)" if isinstance(value, str) else ""


def _check_bandwidth(value: object, path: str = "bandwidth_Bps") -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
        raise TopologyError(f"must be a finite bandwidth > 0 in bytes/s{_unit_hint(value, 'parse_bandwidth')}, "
                            f"got {value!r}", path=path)


def _check_latency(value: object, path: str = "latency_s") -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
        raise TopologyError(f"must be a finite time ≥ 0 in seconds{_unit_hint(value, 'parse_time')}, got {value!r}",
                            path=path)


def _check_flag(value: object, path: str) -> None:
    if not isinstance(value, bool):
        raise TopologyError(f"must be true or false, got {value!r}", path=path)


def _capability(sharp: bool) -> dict:
    """Node attributes of a fabric switch: ``reduce = True`` when it runs SHARP."""
    return {"reduce": True} if sharp else {}


def _check_tier(value: object) -> None:
    if not isinstance(value, str) or not value:
        raise TopologyError(f"must be a non-empty string, got {value!r}", path="tier")


def _set_routing(graph: nx.DiGraph, routing: str | None, default: str | None) -> None:
    """Record `routing` (or the family's `default`) as the graph's ``routing`` attribute."""
    if routing is not None and (not isinstance(routing, str) or routing not in ROUTINGS):
        raise TopologyError(f"must be one of {list(ROUTINGS)}, got {routing!r}", path="routing")
    chosen = routing if routing is not None else default
    if chosen is not None:
        graph.graph["routing"] = chosen


def _check_common(hosts: int, bandwidth_Bps: float, latency_s: float, tier: str, minimum_hosts: int = 2) -> None:
    _check_int(hosts, "hosts", minimum_hosts)
    _check_bandwidth(bandwidth_Bps)
    _check_latency(latency_s)
    _check_tier(tier)


_QUIET_DEFAULTS = MappingProxyType(
    {"tier": "fabric", "oversubscription": 1.0, "double_links": False, "routing": None, "parallel": 1,
     "gpu_routers": False, "sharp": False}
)


def _label(builder: str, **params) -> str:
    """Name of a graph of `builder` with `params`: the parameters not at a quiet default, and for a leaf-spine
    the uplink cables a leaf gets (:func:`_leaf_spine_uplinks`), e.g.
    ``leaf_spine(leaves=4, spines=2, hosts_per_leaf=4, bandwidth=1 GB/s, latency=1 us; 2 uplink cables of 2 GB/s
    per leaf)``."""
    shown = []
    for key, value in params.items():
        if key in _QUIET_DEFAULTS and value == _QUIET_DEFAULTS[key]:
            continue
        if key.endswith("_Bps"):
            shown.append(f"{key.removesuffix('_Bps')}={format_bandwidth(value)}")
        elif key.endswith("_s"):
            shown.append(f"{key.removesuffix('_s')}={format_time(value)}")
        else:
            shown.append(f"{key}={value}")
    if builder == "leaf_spine":
        cables, cable_Bps, removed = _leaf_spine_uplinks(**params)
        shown[-1] += f"; {cables} uplink cable{'s' if cables != 1 else ''} of {format_bandwidth(cable_Bps)} per leaf"
        ratio = params.get("oversubscription", 1.0)
        full = params["spines"] * params.get("parallel", 1)
        if removed:
            used = min(cables, params["spines"])
            on = f", on {used} of {params['spines']} spines" if used < params["spines"] else ""
            shown[-1] += f" ({ratio:g}:1 keeps {cables} of {full} at full rate{on})"
        elif ratio < 1:
            shown[-1] += f" ({ratio:g}:1, undersubscribed: each runs at {1 / ratio:g} × full rate)"
        elif ratio != 1:
            shown[-1] += f" ({ratio:g}:1 does not divide {full} cables: each runs at 1/{ratio:g} of full rate)"
    return f"{builder}({', '.join(shown)})"


def _leaf_spine_uplinks(
    spines: int, hosts_per_leaf: int, bandwidth_Bps: float, oversubscription: float = 1.0, parallel: int = 1, **_
) -> tuple[int, float, bool]:
    """Uplink cables of one leaf of :func:`leaf_spine`, the bandwidth of each per direction, and whether
    `oversubscription` removed cables.

    Parameters
    ----------
    spines, hosts_per_leaf, bandwidth_Bps, oversubscription, parallel
        As :func:`leaf_spine` takes them; other parameters are ignored.

    Returns
    -------
    tuple of (int, float, bool)
        Non-blocking, a leaf has ``C = spines * parallel`` cables of ``hosts_per_leaf *
        bandwidth_Bps / C`` each. When `oversubscription` ``r > 1`` divides ``C`` into a whole
        number, ``C / r`` of them remain at that rate (as oversubscribed fabrics are built:
        fewer uplinks at line rate) and the flag is True; otherwise all ``C`` remain, each
        at ``1 / r`` of that rate, and the flag is False.

    Examples
    --------
    >>> _leaf_spine_uplinks(spines=4, hosts_per_leaf=32, bandwidth_Bps=50e9, oversubscription=2.0, parallel=8)
    (16, 50000000000.0, True)
    >>> _leaf_spine_uplinks(spines=2, hosts_per_leaf=8, bandwidth_Bps=12.5e9, oversubscription=3.0)
    (2, 16666666666.666666, False)
    """
    cables = spines * parallel
    kept = cables / oversubscription
    if oversubscription > 1 and kept >= 1 and math.isclose(kept, round(kept), rel_tol=0, abs_tol=1e-9):
        return round(kept), hosts_per_leaf * bandwidth_Bps / cables, True
    return cables, hosts_per_leaf * bandwidth_Bps / (oversubscription * cables), False


def _new_graph(builder: str, **params) -> nx.DiGraph:
    """A graph named after `builder` and its parameters, which it records in ``params``."""
    graph = nx.DiGraph(name=_label(builder, **params), builder=builder, params=dict(params))
    return graph


def _add_hosts(graph: nx.DiGraph, ports: list, bandwidth_Bps: float, latency_s: float, tier: str) -> None:
    for i in range(len(ports)):
        graph.add_node(f"gpu{i}", kind="gpu", host=i, port=i)
    for i, port in enumerate(ports):
        add_cable(graph, f"gpu{i}", port, bandwidth_Bps, latency_s, tier)


def _switch_fabric(
    graph: nx.DiGraph, hosts: int, bandwidth_Bps: float, latency_s: float, tier: str = "fabric",
    routing: str | None = None, sharp: bool = False,
) -> list:
    _check_common(hosts, bandwidth_Bps, latency_s, tier, minimum_hosts=1)
    _check_flag(sharp, "sharp")
    _set_routing(graph, routing, None)
    graph.add_node("switch", kind="switch", **_capability(sharp))
    return ["switch"] * hosts


def switch(
    hosts: int, bandwidth_Bps: float, latency_s: float, *, tier: str = "fabric", routing: str | None = None,
    sharp: bool = False,
) -> nx.DiGraph:
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
    routing : str, optional
        Routing rule (graph attribute ``routing``; default ``"shortest"``).
    sharp : bool, optional
        Mark every switch as able to reduce in flight (``reduce = True``, see
        :mod:`simnet.topology.contract`), as InfiniBand SHARP does on NVIDIA Quantum,
        Quantum-2 and Quantum-X800 switches (default False).

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
    _check_common(hosts, bandwidth_Bps, latency_s, tier)
    graph = _new_graph(
        "switch", hosts=hosts, bandwidth_Bps=bandwidth_Bps, latency_s=latency_s, tier=tier, routing=routing,
        sharp=sharp,
    )
    ports = _switch_fabric(graph, hosts, bandwidth_Bps, latency_s, tier, routing, sharp)
    _add_hosts(graph, ports, bandwidth_Bps, latency_s, tier)
    return validate(graph)


def ring(
    hosts: int, bandwidth_Bps: float, latency_s: float, *, tier: str = "fabric", routing: str | None = None
) -> nx.DiGraph:
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
    routing : str, optional
        Routing rule (graph attribute ``routing``; default ``"shortest"``, which
        goes the shorter way round and, between opposite GPUs, towards the lower
        GPU index first: ``gpu0 -> gpu4`` of 8 goes through ``gpu1 .. gpu3``).

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
    _check_common(hosts, bandwidth_Bps, latency_s, tier)
    graph = _new_graph("ring", hosts=hosts, bandwidth_Bps=bandwidth_Bps, latency_s=latency_s, tier=tier, routing=routing)
    _set_routing(graph, routing, None)
    for i in range(hosts):
        graph.add_node(f"gpu{i}", kind="gpu", host=i)
    for i in range(hosts):
        j = (i + 1) % hosts
        if not graph.has_edge(f"gpu{i}", f"gpu{j}"):
            add_cable(graph, f"gpu{i}", f"gpu{j}", bandwidth_Bps, latency_s, tier)
    return validate(graph)


def _fat_tree_fabric(
    graph: nx.DiGraph, k: int, bandwidth_Bps: float, latency_s: float, tier: str = "fabric",
    routing: str | None = None, sharp: bool = False,
) -> list:
    _check_int(k, "k", 2)
    if k % 2:
        raise TopologyError(f"a k-ary fat-tree needs an even k (k/2 ports down, k/2 up), got {k}", path="k")
    _check_bandwidth(bandwidth_Bps)
    _check_latency(latency_s)
    _check_tier(tier)
    _check_flag(sharp, "sharp")
    _set_routing(graph, routing, "dmodk")
    half = k // 2
    for c in range(half * half):
        graph.add_node(f"core{c}", kind="switch", level="core", **_capability(sharp))
    ports = []
    for pod in range(k):
        for j in range(half):
            graph.add_node(f"agg{pod}_{j}", kind="switch", level="aggregation", pod=pod, **_capability(sharp))
            graph.add_node(f"edge{pod}_{j}", kind="switch", level="edge", pod=pod, **_capability(sharp))
        for j in range(half):
            for a in range(half):
                add_cable(graph, f"edge{pod}_{j}", f"agg{pod}_{a}", bandwidth_Bps, latency_s, tier)
            for c in range(half):
                add_cable(graph, f"agg{pod}_{j}", f"core{j * half + c}", bandwidth_Bps, latency_s, tier)
            ports.extend([f"edge{pod}_{j}"] * half)
    return ports


def fat_tree(
    k: int, bandwidth_Bps: float, latency_s: float, *, tier: str = "fabric", routing: str | None = None,
    sharp: bool = False,
) -> nx.DiGraph:
    """A k-ary three-tier fat-tree of identical k-port switches (Al-Fares et al. 2008).

    There are ``k`` pods; pod ``p`` has ``k/2`` edge switches ``edge{p}_{j}`` and
    ``k/2`` aggregation switches ``agg{p}_{j}``. Every edge switch serves ``k/2``
    hosts and is cabled to every aggregation switch of its pod. Aggregation switch
    ``agg{p}_{j}`` is cabled to the core switches ``core{j*k/2} .. core{j*k/2 + k/2 - 1}``
    (``(k/2)^2`` cores in all), so every core switch reaches every pod once.

    Parameters
    ----------
    k : int
        Switch radix, even and ≥ 2.
    bandwidth_Bps : float
        Bandwidth of every cable, per direction, bytes/s.
    latency_s : float
        Latency of every cable, seconds.
    tier : str, optional
        Tier label of the links (default ``"fabric"``).
    routing : str, optional
        Routing rule (graph attribute ``routing``; default ``"dmodk"``: GPU ``d``
        is reached from edge switches through ``agg{p}_{d mod k/2}`` and from
        aggregation switches through their ``⌊d / (k/2)⌋ mod k/2``-th core,
        Zahavi's destination-based d-mod-k; Al-Fares et al.'s two-level tables
        also offset the port by the switch's position in its pod).
    sharp : bool, optional
        Mark every switch as able to reduce in flight (``reduce = True``, see
        :mod:`simnet.topology.contract`), as InfiniBand SHARP does on NVIDIA Quantum,
        Quantum-2 and Quantum-X800 switches (default False).

    Returns
    -------
    networkx.DiGraph
        ``k^3/4`` GPUs ``gpu0 .. gpu{k^3/4 - 1}`` (GPU ``i`` is on edge switch
        ``edge{i // (k^2/4)}_{(i // (k/2)) % (k/2)}``), ``5k^2/4`` switches (each of
        degree ``k``) and ``3k^3/4`` cables. Full bisection bandwidth:
        ``k^3/8 * bandwidth_Bps`` between the first and last ``k/2`` pods.
        Switches carry ``level`` (``"edge"``, ``"aggregation"``, ``"core"``) and,
        except cores, ``pod``.

    Raises
    ------
    TopologyError
        If `k` is odd or < 2.

    References
    ----------
    Al-Fares, M., Loukissas, A. and Vahdat, A. (2008). A scalable, commodity data
    center network architecture. SIGCOMM '08, 63-74.

    Examples
    --------
    >>> G = fat_tree(4, 12.5e9, 1e-6)
    >>> len([n for n, kind in G.nodes(data="kind") if kind == "switch"])
    20
    """
    _fat_tree_fabric(nx.DiGraph(), k, bandwidth_Bps, latency_s, tier, routing, sharp)
    graph = _new_graph("fat_tree", k=k, bandwidth_Bps=bandwidth_Bps, latency_s=latency_s, tier=tier, routing=routing,
                       sharp=sharp)
    ports = _fat_tree_fabric(graph, k, bandwidth_Bps, latency_s, tier, routing, sharp)
    _add_hosts(graph, ports, bandwidth_Bps, latency_s, tier)
    return validate(graph)


def _leaf_spine_fabric(
    graph: nx.DiGraph,
    leaves: int,
    spines: int,
    hosts_per_leaf: int,
    bandwidth_Bps: float,
    latency_s: float,
    oversubscription: float = 1.0,
    parallel: int = 1,
    tier: str = "fabric",
    routing: str | None = None,
    sharp: bool = False,
) -> list:
    _check_int(leaves, "leaves", 1)
    _check_int(spines, "spines", 1)
    _check_int(hosts_per_leaf, "hosts_per_leaf", 1)
    _check_int(parallel, "parallel", 1)
    _check_bandwidth(bandwidth_Bps)
    _check_latency(latency_s)
    _check_tier(tier)
    _check_flag(sharp, "sharp")
    _set_routing(graph, routing, "dmodk")
    if isinstance(oversubscription, bool) or not isinstance(oversubscription, (int, float)) or not (
        0 < oversubscription < float("inf")
    ):
        raise TopologyError(f"must be a finite ratio > 0, got {oversubscription!r}", path="oversubscription")
    uplinks, cable_Bps, _ = _leaf_spine_uplinks(spines, hosts_per_leaf, bandwidth_Bps, oversubscription, parallel)
    per_spine = [len(range(s, uplinks, spines)) for s in range(spines)]
    for s in range(spines):
        if per_spine[s]:
            graph.add_node(f"spine{s}", kind="switch", level="spine", **_capability(sharp))
    ports = []
    for leaf in range(leaves):
        graph.add_node(f"leaf{leaf}", kind="switch", level="leaf", **_capability(sharp))
        for s in range(spines):
            if per_spine[s]:
                add_cable(graph, f"leaf{leaf}", f"spine{s}", cable_Bps, latency_s, tier, cables=per_spine[s])
        ports.extend([f"leaf{leaf}"] * hosts_per_leaf)
    return ports


def leaf_spine(
    leaves: int,
    spines: int,
    hosts_per_leaf: int,
    bandwidth_Bps: float,
    latency_s: float,
    *,
    oversubscription: float = 1.0,
    parallel: int = 1,
    tier: str = "fabric",
    routing: str | None = None,
    sharp: bool = False,
) -> nx.DiGraph:
    """A two-tier leaf-spine (folded Clos) fabric with explicit oversubscription.

    Every leaf ``leaf{l}`` serves `hosts_per_leaf` hosts and is cabled to every
    spine ``spine{s}`` by `parallel` cables. The uplinks of a leaf carry in total
    ``hosts_per_leaf * bandwidth_Bps / oversubscription`` per direction. Non-blocking,
    a leaf has ``C = spines * parallel`` uplink cables of ``hosts_per_leaf * bandwidth_Bps / C``
    each. An `oversubscription` ``r > 1`` that divides ``C`` into a whole number removes cables
    and keeps that rate, as oversubscribed fabrics are built (fewer uplinks at line rate):
    a leaf keeps its up-ports ``0 .. C/r - 1`` in d-mod-k's numbering (port ``p + j·spines``
    is cable ``j`` to ``spine{p}``), so every spine keeps ``parallel / r`` cables when ``r``
    divides `parallel`, the first ``C/r`` spines one each when ``C/r < spines`` (the others
    are left out), and the kept cables share the destinations evenly in every case. Any
    other ratio keeps all ``C`` cables, each at ``1/r`` of that rate. The graph's name ends
    with a leaf's uplinks and how `oversubscription` got them, e.g. ``; 8 uplink cables of
    12.5 GB/s per leaf (2:1 keeps 8 of 16 at full rate)``.

    Parameters
    ----------
    leaves, spines : int
        Number of leaf and spine switches, each ≥ 1.
    hosts_per_leaf : int
        Hosts under every leaf, ≥ 1 (``leaves * hosts_per_leaf`` ≥ 2).
    bandwidth_Bps : float
        Bandwidth of each host link, per direction, bytes/s.
    latency_s : float
        Latency of every cable, seconds.
    oversubscription : float, optional
        Downlink-to-uplink capacity ratio of a leaf (default 1.0, non-blocking;
        3.0 means 3:1): fewer cables where it divides their number, slower ones otherwise.
    parallel : int, optional
        Cables between every leaf and every spine (default 1). They are separate
        links, each route pinned to one by the routing rule.
    tier : str, optional
        Tier label of the links (default ``"fabric"``).
    routing : str, optional
        Routing rule (graph attribute ``routing``; default ``"dmodk"``: a leaf
        sends to GPU ``d`` through up-port ``d mod (spines * parallel)``, spine
        ``d mod spines``, cable ``⌊d / spines⌋ mod parallel``; with ``U`` up-ports left
        by `oversubscription`, up-port ``d mod U``).
    sharp : bool, optional
        Mark every switch as able to reduce in flight (``reduce = True``, see
        :mod:`simnet.topology.contract`), as InfiniBand SHARP does on NVIDIA Quantum,
        Quantum-2 and Quantum-X800 switches (default False).

    Returns
    -------
    networkx.DiGraph
        ``leaves * hosts_per_leaf`` GPUs ``gpu0 ..`` (GPU ``i`` on ``leaf{i // hosts_per_leaf}``),
        ``leaves + spines`` switches, ``leaves * (hosts_per_leaf + spines * parallel)`` cables
        (fewer cables, and the spines left without one, when `oversubscription` removes uplinks).
        ``leaf_spine(4, 2, 4, ..., parallel=2)`` is SimGrid's ``FAT_TREE``
        cluster ``2;4,4;1,2;1,2``.

    Examples
    --------
    >>> G = leaf_spine(2, 2, 4, 25e9, 1e-6, oversubscription=2.0)
    >>> G.edges["leaf0", "spine0"]["bandwidth_Bps"], G.has_node("spine1")
    (50000000000.0, False)
    >>> leaf_spine(2, 2, 4, 25e9, 1e-6, oversubscription=3.0).edges["leaf0", "spine0"]["bandwidth_Bps"]
    16666666666.666666
    """
    _check_int(leaves, "leaves", 1)
    _check_int(hosts_per_leaf, "hosts_per_leaf", 1)
    if leaves * hosts_per_leaf < 2:
        raise TopologyError(f"needs at least 2 hosts, got leaves * hosts_per_leaf = {leaves * hosts_per_leaf}", path="hosts_per_leaf")
    params = dict(locals())
    _leaf_spine_fabric(nx.DiGraph(), **params)
    graph = _new_graph("leaf_spine", **params)
    ports = _leaf_spine_fabric(graph, **params)
    _add_hosts(graph, ports, bandwidth_Bps, latency_s, tier)
    return validate(graph)


def _router(coord: tuple) -> str:
    return "r" + "_".join(str(c) for c in coord)


def _torus_fabric(
    graph: nx.DiGraph,
    dims: list,
    bandwidth_Bps: float,
    latency_s: float,
    double_links: bool = False,
    tier: str = "fabric",
    routing: str | None = None,
) -> list:
    if isinstance(dims, (str, bytes)) or not isinstance(dims, (list, tuple)) or not dims:
        raise TopologyError(f"must be a non-empty list of ring sizes such as [4, 4], got {dims!r}", path="dims")
    for i, size in enumerate(dims):
        _check_int(size, f"dims[{i}]", 1)
    if math.prod(dims) < 2:
        raise TopologyError(f"needs at least 2 routers, got dims {list(dims)}", path="dims")
    _check_bandwidth(bandwidth_Bps)
    _check_latency(latency_s)
    _check_tier(tier)
    if not isinstance(double_links, bool):
        raise TopologyError(f"must be true or false, got {double_links!r}", path="double_links")
    coords = list(itertools.product(*(range(size) for size in dims)))
    for coord in coords:
        graph.add_node(_router(coord), kind="switch", level="router", coord=coord)
    for coord in coords:
        for axis, size in enumerate(dims):
            if size == 1:
                continue
            nxt = list(coord)
            nxt[axis] = (coord[axis] + 1) % size
            u, v = _router(coord), _router(tuple(nxt))
            if size == 2 and not double_links and coord[axis] == 1:
                continue
            add_cable(graph, u, v, bandwidth_Bps, latency_s, tier)
    _set_routing(graph, routing, "dimension_order")
    graph.graph["dims"] = [int(size) for size in dims]
    return [_router(coord) for coord in coords]


def torus(
    dims: list[int],
    bandwidth_Bps: float,
    latency_s: float,
    *,
    double_links: bool = False,
    gpu_routers: bool = False,
    tier: str = "fabric",
    routing: str | None = None,
) -> nx.DiGraph:
    """A torus of routers with wrap-around in every dimension and one GPU per router.

    Routers ``r{c0}_{c1}_..`` sit at the coordinates of ``dims`` (attribute
    ``coord``); along every dimension of size ``d ≥ 3`` each router is cabled to its
    two neighbours ``c ± 1 mod d``. In a dimension of size 2 both neighbours are the
    same router and there is a single cable between them, unless `double_links`
    asks for the two (a bundle of two cables, ``cables == 2``). A dimension of size
    1 has no cable. GPU ``gpu{i}`` hangs off the ``i``-th router in row-major order
    (the first dimension varies slowest) through its own cable; with `gpu_routers`
    the GPUs are the routers themselves (``gpu{i}`` carries ``coord``), as TPU chips
    and the hosts of SimGrid's ``TORUS`` cluster are, so nothing limits how many of
    its ``2 len(dims)`` links a GPU drives at once.

    Routes follow dimension-order routing: the graph carries ``routing =
    "dimension_order"`` and ``dims``, which :class:`~simnet.topology.Router` honours.

    Parameters
    ----------
    dims : list of int
        Ring size of every dimension, each ≥ 1, at least 2 routers in all.
    bandwidth_Bps : float
        Bandwidth of every cable (router-router and GPU-router), per direction, bytes/s.
    latency_s : float
        Latency of every cable, seconds.
    double_links : bool, optional
        Cable size-2 dimensions twice, once per direction of the ring (default False).
    gpu_routers : bool, optional
        Make every GPU its own router, without a GPU-router cable (default False).
    tier : str, optional
        Tier label of the links (default ``"fabric"``).
    routing : str, optional
        Routing rule (graph attribute ``routing``; default ``"dimension_order"``,
        ``+1`` on a tie; ``"simgrid"`` is SimGrid's TorusZone).

    Returns
    -------
    networkx.DiGraph
        ``prod(dims)`` routers and as many GPUs (or ``prod(dims)`` GPU routers).
        With every ``d_i ≥ 3`` the routers form a ``2 len(dims)``-regular graph
        whose diameter is ``sum(d_i // 2)`` hops; cutting dimension ``i`` in half
        (``d_i`` even) takes ``2 prod(dims) / d_i`` cables, so the bisection cuts a
        longest dimension: ``2 prod(dims) / max(dims)`` when that is even
        (:func:`simnet.topology.describe.bisection`).

    References
    ----------
    Dally, W. J. and Towles, B. (2004). Principles and Practices of Interconnection
    Networks, ch. 5 (tori) and 14.2 (dimension-order routing). Morgan Kaufmann.

    Examples
    --------
    >>> G = torus([4, 4], 25e9, 1e-6)
    >>> G.out_degree("r0_0") - 1
    4
    >>> torus([4, 4], 25e9, 1e-6, gpu_routers=True).out_degree("gpu0")
    4
    """
    if not isinstance(gpu_routers, bool):
        raise TopologyError(f"must be true or false, got {gpu_routers!r}", path="gpu_routers")
    params = dict(dims=dims, bandwidth_Bps=bandwidth_Bps, latency_s=latency_s, double_links=double_links, tier=tier,
                  routing=routing)
    _torus_fabric(nx.DiGraph(), **params)
    params["dims"] = [int(size) for size in dims]
    graph = _new_graph("torus", **params, gpu_routers=gpu_routers)
    ports = _torus_fabric(graph, **params)
    if not gpu_routers:
        _add_hosts(graph, ports, bandwidth_Bps, latency_s, tier)
        return validate(graph)
    nx.relabel_nodes(graph, {router: f"gpu{i}" for i, router in enumerate(ports)}, copy=False)
    for i in range(len(ports)):
        data = graph.nodes[f"gpu{i}"]
        data.pop("level")
        data.update(kind="gpu", host=i)
    return validate(graph)


def _pgft_labels(down: list, up: list, level: int, count: int) -> list[tuple]:
    """Labels of the `count` nodes of `level`, in position order (SimGrid's FatTreeZone::generate_labels)."""
    radix = [down[j] if j >= level else up[j] for j in range(len(down))]
    labels = []
    for position in range(count):
        label = []
        for r in radix:
            position, digit = divmod(position, r)
            label.append(digit)
        labels.append(tuple(label))
    return labels


def _pgft_fabric(
    graph: nx.DiGraph,
    down: list,
    up: list,
    bandwidth_Bps: float,
    latency_s: float,
    parallel: list | None = None,
    tier: str = "fabric",
    routing: str | None = None,
    sharp: bool = False,
) -> list:
    for key, value in (("down", down), ("up", up), ("parallel", parallel)):
        if value is None and key == "parallel":
            continue
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)) or not value:
            raise TopologyError(f"must be a non-empty list of counts such as [4, 4], got {value!r}", path=key)
        if len(value) != len(down):
            raise TopologyError(f"must have one entry per level ({len(down)} in down), got {value!r}", path=key)
        for i, count in enumerate(value):
            _check_int(count, f"{key}[{i}]", 1)
    _check_bandwidth(bandwidth_Bps)
    _check_latency(latency_s)
    _check_tier(tier)
    _check_flag(sharp, "sharp")
    _set_routing(graph, routing, "dmodk")
    levels = len(down)
    parallel = list(parallel) if parallel is not None else [1] * levels
    if math.prod(down) < 2:
        raise TopologyError(f"needs at least 2 hosts (the product of down), got {math.prod(down)}", path="down")
    if up[0] != 1 or parallel[0] != 1:
        raise TopologyError(
            f"a GPU has one port: up[0] and parallel[0] must be 1, got {up[0]} and {parallel[0]}", path="up"
        )
    names = {2: ("leaf", "spine"), 3: ("edge", "aggregation", "core")}.get(levels)
    counts = [math.prod(down)]
    for i in range(levels):
        counts.append(math.prod(up[: i + 1]) * math.prod(down[i + 1:]))
    labels = [_pgft_labels(down, up, level, count) for level, count in enumerate(counts)]
    for level in range(1, levels + 1):
        for position in range(counts[level]):
            graph.add_node(f"s{level}_{position}", kind="switch", level=names[level - 1] if names else f"level{level}",
                           **_capability(sharp))

    def parents(level: int, label: tuple) -> list[int]:
        return [
            place for place, parent in enumerate(labels[level + 1])
            if all(parent[j] == label[j] for j in range(levels) if j != level)
        ]

    for level in range(1, levels):
        for position, label in enumerate(labels[level]):
            for place in parents(level, label):
                add_cable(graph, f"s{level}_{position}", f"s{level + 1}_{place}", bandwidth_Bps, latency_s, tier,
                          cables=parallel[level])
    return [f"s1_{parents(0, label)[0]}" for label in labels[0]]


def pgft(
    down: list[int],
    up: list[int],
    bandwidth_Bps: float,
    latency_s: float,
    *,
    parallel: list[int] | None = None,
    tier: str = "fabric",
    routing: str | None = None,
    sharp: bool = False,
) -> nx.DiGraph:
    """A parallel generalized fat-tree PGFT(h; down; up; parallel), SimGrid's ``FAT_TREE`` cluster.

    ``h = len(down)`` levels of switches above the hosts. Every switch of level
    ``l`` (1..h) has ``down[l-1]`` children; every node of level ``l`` (0..h-1)
    has ``up[l]`` parents, to each of which it is cabled by ``parallel[l]`` cables.
    Nodes are labelled and related exactly as SimGrid's FatTreeZone does it: a node
    of level ``l`` at position ``p`` has the mixed-radix digits of ``p`` as label
    (radix ``down[j]`` for ``j ≥ l``, ``up[j]`` below), and a switch of level ``l+1``
    is a parent of a node of level ``l`` when their labels agree except at digit
    ``l``. k-ary n-trees are ``pgft([k] * n, [1] + [k] * (n - 1))``; a leaf-spine is
    ``pgft([hosts_per_leaf, leaves], [1, spines], parallel=[1, cables])``.

    Parameters
    ----------
    down : list of int
        Children per switch, level 1 first.
    up : list of int
        Parents per node, hosts first; ``up[0]`` must be 1 (a GPU has one port).
    bandwidth_Bps : float
        Bandwidth of every cable, per direction, bytes/s.
    latency_s : float
        Latency of every cable, seconds.
    parallel : list of int, optional
        Cables between a node and each of its parents, per level (default all 1;
        ``parallel[0]`` must be 1). They are separate links, each route pinned to one.
    tier : str, optional
        Tier label of the links (default ``"fabric"``).
    routing : str, optional
        Routing rule (graph attribute ``routing``; default ``"dmodk"``; ``"simgrid"``
        is SimGrid's FatTreeZone).
    sharp : bool, optional
        Mark every switch as able to reduce in flight (``reduce = True``, see
        :mod:`simnet.topology.contract`), as InfiniBand SHARP does on NVIDIA Quantum,
        Quantum-2 and Quantum-X800 switches (default False).

    Returns
    -------
    networkx.DiGraph
        ``prod(down)`` GPUs ``gpu0 ..`` (GPU ``i`` at host position ``i``) and switches
        ``s{level}_{position}``; level ``l`` has ``prod(up[:l]) * prod(down[l:])``
        switches. ``level`` is ``"leaf"``/``"spine"`` (2 levels),
        ``"edge"``/``"aggregation"``/``"core"`` (3 levels) or ``"level{l}"``.

    Raises
    ------
    TopologyError
        For lists of different lengths, counts below 1, or several host ports.

    References
    ----------
    Zahavi, E. (2010). D-Mod-K routing providing non-blocking traffic for shift
    permutations on real life fat trees. CCIT Report 776, Technion (PGFT).
    Öhring, S. R., Ibel, M., Das, S. K. and Kumar, M. J. (1995). On generalized fat
    trees. IPPS '95, 37-44.
    SimGrid 3.32, src/kernel/routing/FatTreeZone.cpp and the ``FAT_TREE`` cluster
    of https://simgrid.org/doc/latest/Platform_examples.html.

    Examples
    --------
    >>> G = pgft([4, 4, 4], [1, 4, 4], 12.5e9, 1e-6)
    >>> len([n for n, kind in G.nodes(data="kind") if kind == "switch"])
    48
    """
    params = dict(down=down, up=up, bandwidth_Bps=bandwidth_Bps, latency_s=latency_s, parallel=parallel, tier=tier,
                  routing=routing, sharp=sharp)
    _pgft_fabric(nx.DiGraph(), **params)
    params["down"], params["up"] = [int(x) for x in down], [int(x) for x in up]
    if parallel is not None:
        params["parallel"] = [int(x) for x in parallel]
    graph = _new_graph("pgft", **{k: v for k, v in params.items() if not (k == "parallel" and v is None)})
    ports = _pgft_fabric(graph, **params)
    _add_hosts(graph, ports, bandwidth_Bps, latency_s, tier)
    return validate(graph)


FABRICS = MappingProxyType(
    {
        "switch": (switch, _switch_fabric),
        "fat_tree": (fat_tree, _fat_tree_fabric),
        "leaf_spine": (leaf_spine, _leaf_spine_fabric),
        "torus": (torus, _torus_fabric),
        "pgft": (pgft, _pgft_fabric),
    }
)
"""Fabric name -> ``(builder, skeleton)``; a skeleton takes the builder's parameters
after a graph to extend and returns the edge switch of every host port."""
