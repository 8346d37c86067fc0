"""Summaries of a topology: counts, tiers, bisection bandwidth and diameter.

:func:`describe` backs ``simnet topo show``. Its two global measures are defined
on the GPUs in rank order, so that they mean the same on every family:

Bisection bandwidth
    The maximum flow, in bytes per second, from the first ``⌊p/2⌋`` GPUs (rank
    order) to the other ``⌈p/2⌉``, every directed link carrying at most its
    ``bandwidth_Bps`` (computed with :func:`networkx.maximum_flow_value`; by the
    max-flow/min-cut theorem it is the capacity of the smallest cut between the
    halves). Flows may use any node, so it bounds what any routing achieves. As
    builders number hosts hierarchy-major, the halves are the natural ones: half
    the pods of a fat-tree (``k^3/8`` links), half the servers of a cluster.
    On a torus whose GPUs sit on (or are) its routers, the rank halves cut across
    dimension 0 only, so the value would depend on the order of ``dims``; there it
    is the smallest maximum flow over one cut across each dimension of extent
    ``d ≥ 2``: the ranks ordered by their coordinate ``c_i`` (rank order among
    equals), first ``⌊p/2⌋`` against the rest. For an even ``d`` these halves are
    ``c_i < d/2`` and ``c_i ≥ d/2``, ``2 p / d`` cables each way for ``d ≥ 3``; for
    an odd ``d`` they are ``⌊d/2⌋`` slices plus the first half (rank order) of the
    middle slice. The label names the cut reaching the minimum (on a tie the
    exactly balanced one of an even dimension, then the longest, then the first).
    With the longest dimension even this is the bisection of Dally and Towles
    (2004, sec. 3.3), ``2 p / k_max`` cables; with odd extents it is the smallest
    of these cuts, an upper bound on the minimum over all balanced cuts. Other
    families, and clusters whose servers hang off a torus, keep the rank halves.
Diameter
    The longest route between two GPUs, in hops and in latency, over every ordered
    GPU pair, with the routes :class:`~simnet.topology.Router` chooses (``p (p-1)``
    route look-ups).
In-switch reduction
    The switches that can reduce in flight and multicast (``reduce = True``:
    NVSwitch NVLS, InfiniBand SHARP), grouped by ``reduce_efficiency``.

References
----------
Dally, W. J. and Towles, B. (2004). Principles and Practices of Interconnection
Networks, sec. 3.3 (bisection) and ch. 5 (tori). Morgan Kaufmann.
"""

from __future__ import annotations

from collections import Counter

import networkx as nx

from simnet.topology.contract import (
    NODE_KINDS, gpus, reduce_efficiency, reducing_switches, torus_coordinates, validate,
)
from simnet.topology.routing import Router
from simnet.units import format_bandwidth, format_time

__all__ = ["describe", "bisection", "bisection_bandwidth_Bps", "format_description", "over_ports",
           "ports_warning"]

_KIND_ORDER = ("gpu", "nic", "cpu", "switch")


def bisection(graph: nx.DiGraph) -> tuple[float, str]:
    """Bisection bandwidth of `graph` and the cut it was measured across.

    Parameters
    ----------
    graph : networkx.DiGraph
        A topology (see :mod:`simnet.topology.contract`).

    Returns
    -------
    tuple of (float, str)
        The maximum flow in bytes/s between the halves (see the module docstring)
        and which halves: ``"first half of ranks -> second"``, or on a torus e.g.
        ``"cut across torus dimension 1 of [4, 8]: c1 < 4 -> c1 ≥ 4"``.
    """
    ranks = gpus(graph)
    coords = torus_coordinates(graph, ranks)
    if coords is None:
        return _max_flow_Bps(graph, ranks), "first half of ranks -> second"
    dims = [int(size) for size in graph.graph["dims"]]
    flows = {axis: _max_flow_Bps(graph, sorted(ranks, key=lambda node: coords[node][axis]))
             for axis, size in enumerate(dims) if size >= 2}
    least = min(flows.values())
    axis = min((axis for axis, value in flows.items() if value <= least * (1 + 1e-12)),
               key=lambda axis: (dims[axis] % 2, -dims[axis], axis))
    return least, _torus_cut(dims, axis, len(ranks))


def bisection_bandwidth_Bps(graph: nx.DiGraph) -> float:
    """Bisection bandwidth of `graph`, bytes/s (the first element of :func:`bisection`)."""
    return bisection(graph)[0]


def _max_flow_Bps(graph: nx.DiGraph, order: list) -> float:
    """Maximum flow from the first ``⌊p/2⌋`` GPUs of `order` to the others, links capped at their bandwidth."""
    half = len(order) // 2
    flow = nx.DiGraph()
    flow.add_edges_from((u, v, {"capacity": data["bandwidth_Bps"]}) for u, v, data in graph.edges(data=True))
    source, sink = ("bisection", "source"), ("bisection", "sink")
    flow.add_edges_from((source, node) for node in order[:half])
    flow.add_edges_from((node, sink) for node in order[half:])
    return float(nx.maximum_flow_value(flow, source, sink))


def _torus_cut(dims: list[int], axis: int, nranks: int) -> str:
    """Label of the halves :func:`bisection` takes across dimension `axis` of a torus of `nranks` GPUs."""
    size, half = dims[axis], dims[axis] // 2
    if size % 2 == 0:
        return f"cut across torus dimension {axis} of {dims}: c{axis} < {half} -> c{axis} ≥ {half}"
    extra = nranks // 2 - half * (nranks // size)
    middle = f" plus {_count(extra, 'rank')} of c{axis} = {half}" if extra else ""
    return f"cut across torus dimension {axis} of {dims}: c{axis} < {half}{middle} -> the rest"


def describe(graph: nx.DiGraph) -> dict:
    """Counts per node kind and per tier, bisection bandwidth and diameter of `graph`.

    Returns
    -------
    dict
        ``name`` (str); ``gpus`` and ``hosts`` (servers the GPUs sit on); ``nodes``:
        kind -> count; ``tiers``: tier -> ``{"links", "cables", "bandwidth_Bps"}``
        (full-duplex links, physical cables, and their summed bandwidth per
        direction) and ``cable_Bps`` (the distinct bandwidths of one cable, per
        direction); ``routing`` (the rule routes follow); ``bisection_Bps``;
        ``diameter_hops``; ``diameter_s``; ``reduce_switches``: efficiency -> the
        switches that reduce in flight at it, in graph order (see the module
        docstring for the definitions); ``switch_ports`` (the port count of the fabric's
        switch model, or None), ``over_ports`` (:func:`over_ports`, by name) and
        ``ports_warning`` (:func:`ports_warning`).
    """
    validate(graph)
    kinds = Counter(kind for _, kind in graph.nodes(data="kind"))
    tiers: dict[str, dict] = {}
    for u, v, data in graph.edges(data=True):
        entry = tiers.setdefault(data["tier"], {"links": 0, "cables": 0, "bandwidth_Bps": 0.0, "cable_Bps": set()})
        entry["links"] += 0.5
        entry["cables"] += 0.5 * data.get("cables", 1)
        entry["bandwidth_Bps"] += 0.5 * data["bandwidth_Bps"]
        entry["cable_Bps"].add(data["bandwidth_Bps"] / data.get("cables", 1))
    for entry in tiers.values():
        entry["links"] = int(entry["links"])
        entry["cables"] = int(entry["cables"])
        entry["cable_Bps"] = sorted(entry["cable_Bps"])
    ranks = gpus(graph)
    router = Router(graph)
    hops, latency = 0, 0.0
    for a in ranks:
        for b in ranks:
            if a != b:
                path = router.path(a, b)
                hops = max(hops, len(path) - 1)
                latency = max(latency, sum(graph.edges[e]["latency_s"] for e in zip(path, path[1:])))
    hosts = {graph.nodes[node].get("host") for node in ranks}
    bisection_Bps, cut = bisection(graph)
    reducing: dict[float, list] = {}
    for node in reducing_switches(graph):
        reducing.setdefault(reduce_efficiency(graph, node), []).append(node)
    return {
        "name": str(graph.graph.get("name", "topology")),
        "gpus": len(ranks),
        "hosts": len(hosts - {None}),
        "nodes": {kind: kinds[kind] for kind in _KIND_ORDER if kind in NODE_KINDS and kinds[kind]},
        "tiers": dict(sorted(tiers.items())),
        "routing": router.routing,
        "bisection_Bps": bisection_Bps,
        "bisection_cut": cut,
        "diameter_hops": hops,
        "diameter_s": latency,
        "reduce_switches": dict(sorted(reducing.items())),
        "switch_ports": graph.graph.get("switch_ports"),
        "over_ports": {str(node): count for node, count in over_ports(graph).items()},
        "ports_warning": ports_warning(graph),
    }


def over_ports(graph: nx.DiGraph) -> dict:
    """Fabric switches with more cables than the ports of their model, from the graph's ``switch_ports``.

    ``switch_ports`` is the port count of the model the topology file names for its fabric
    switches (a file-level key, like ``description``); a fabric switch is a switch without a
    ``host``, and its cables count every full-duplex cable it ends, host cables included.

    Returns
    -------
    dict
        Switch -> its cables, in graph order, for every fabric switch with more cables than
        ``switch_ports``; empty when the graph carries no ``switch_ports``.
    """
    ports = graph.graph.get("switch_ports")
    if ports is None:
        return {}
    cables = {node: sum(data.get("cables", 1) for _, _, data in graph.out_edges(node, data=True))
              for node, data in graph.nodes(data=True) if data.get("kind") == "switch" and data.get("host") is None}
    return {node: count for node, count in cables.items() if count > ports}


def ports_warning(graph: nx.DiGraph) -> str | None:
    """One line saying which fabric switches have more cables than their model's ports (:func:`over_ports`), or
    None when all fit."""
    over = over_ports(graph)
    if not over:
        return None
    names = list(over)
    shown = f"{names[0]} has" if len(names) == 1 else f"{len(names)} switches ({names[0]} .. {names[-1]}) have"
    return (f"warning: {shown} up to {max(over.values())} cables, more than the {graph.graph['switch_ports']} "
            f"ports of the topology's switch model (switch_ports): no such switch exists, so a fabric this size "
            f"needs bigger switches or another tier")


def format_description(info: dict) -> str:
    """Human-readable text of a :func:`describe` result, one fact per line."""
    lines = [info["name"], f"  GPUs: {info['gpus']} on {info['hosts']} host(s)"]
    lines.append("  nodes: " + ", ".join(f"{count} {kind}" for kind, count in info["nodes"].items()))
    for tier, entry in info["tiers"].items():
        rates = " or ".join(format_bandwidth(rate) for rate in entry["cable_Bps"])
        lines.append(
            f"  tier {tier}: {_count(entry['links'], 'link')}, {_count(entry['cables'], 'cable')} of {rates}, "
            f"{format_bandwidth(entry['bandwidth_Bps'])} per direction in all"
        )
    lines.append(f"  routing: {info['routing']}")
    cut = info.get("bisection_cut", "first half of ranks -> second")
    lines.append(f"  bisection bandwidth: {format_bandwidth(info['bisection_Bps'])} ({cut})")
    lines.append(f"  diameter: {info['diameter_hops']} hops, {format_time(info['diameter_s'])} (longest GPU-to-GPU route)")
    groups = info.get("reduce_switches", {})
    if groups:
        shown = []
        for efficiency, switches in groups.items():
            names = str(switches[0]) if len(switches) == 1 else f"{switches[0]} .. {switches[-1]}"
            count = f"{len(switches)} switch" + ("es" if len(switches) > 1 else "")
            shown.append(f"{count} at {efficiency:.0%} of port bandwidth ({names})")
        lines.append("  in-switch reduction (NVLS/SHARP): " + "; ".join(shown))
    else:
        lines.append("  in-switch reduction (NVLS/SHARP): none")
    if info.get("ports_warning"):
        lines.append(info["ports_warning"])
    return "\n".join(lines)


def _count(number: int, noun: str) -> str:
    """`number` `noun`, plural unless one."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
