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
    the pods of a fat-tree (``k^3/8`` links), half of the first dimension of a
    torus, half the servers of a cluster.
Diameter
    The longest route between two GPUs, in hops and in latency, over every ordered
    GPU pair, with the routes :class:`~simnet.topology.Router` chooses (``p (p-1)``
    route look-ups).
In-switch reduction
    The switches that can reduce in flight and multicast (``reduce = True``:
    NVSwitch NVLS, InfiniBand SHARP), grouped by ``reduce_efficiency``.
"""

from __future__ import annotations

from collections import Counter

import networkx as nx

from simnet.topology.contract import NODE_KINDS, gpus, reduce_efficiency, reducing_switches, validate
from simnet.topology.routing import Router
from simnet.units import format_bandwidth, format_time

__all__ = ["describe", "bisection_bandwidth_Bps", "format_description"]

_KIND_ORDER = ("gpu", "nic", "cpu", "switch")


def bisection_bandwidth_Bps(graph: nx.DiGraph) -> float:
    """Maximum flow from the first half of the GPUs (rank order) to the second, bytes/s."""
    ranks = gpus(graph)
    half = len(ranks) // 2
    flow = nx.DiGraph()
    flow.add_edges_from((u, v, {"capacity": data["bandwidth_Bps"]}) for u, v, data in graph.edges(data=True))
    source, sink = ("bisection", "source"), ("bisection", "sink")
    flow.add_edges_from((source, node) for node in ranks[:half])
    flow.add_edges_from((node, sink) for node in ranks[half:])
    return float(nx.maximum_flow_value(flow, source, sink))


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
        docstring for the definitions).
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
        "bisection_Bps": bisection_bandwidth_Bps(graph),
        "diameter_hops": hops,
        "diameter_s": latency,
        "reduce_switches": dict(sorted(reducing.items())),
    }


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
    lines.append(f"  bisection bandwidth: {format_bandwidth(info['bisection_Bps'])} (first half of ranks -> second)")
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
    return "\n".join(lines)


def _count(number: int, noun: str) -> str:
    """`number` `noun`, plural unless one."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
