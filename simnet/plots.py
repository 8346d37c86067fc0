"""Plots of results; the only module that imports matplotlib.

Every function takes tidy frames from :mod:`simnet.analysis` and a path, writes a
PNG and returns the :class:`matplotlib.figure.Figure`. Figures are built with the
object-oriented API, so no pyplot state or GUI backend is involved.
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pandas as pd
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from simnet.units import format_size, format_time

__all__ = ["time_vs_size", "draw_topology"]


def time_vs_size(results: pd.DataFrame, path: str | Path, *, title: str = "") -> Figure:
    """Log-log plot of completion time against payload size, per algorithm.

    Simulated times are drawn as points and the closed-form model as a line of
    the same colour, so the gap between the two views is visible at a glance.

    Parameters
    ----------
    results : pandas.DataFrame
        Rows with ``point, algorithm, params, size_bytes, sim_time_s, model_time_s``;
        one pair of series per (point, algorithm, params).
    path : str or pathlib.Path
        PNG file to write.
    title : str, optional
        Figure title.
    """
    figure = Figure(figsize=(7, 4.5), layout="constrained")
    axes = figure.subplots()
    for (point, algorithm, params), group in results.groupby(["point", "algorithm", "params"], sort=False):
        group = group.sort_values("size_bytes")
        label = " ".join(part for part in (point, algorithm, "" if params == "{}" else params) if part)
        points = axes.loglog(group["size_bytes"], group["sim_time_s"], "o", label=f"{label} (simulated)")
        axes.loglog(
            group["size_bytes"],
            group["model_time_s"],
            "-",
            color=points[0].get_color(),
            alpha=0.7,
            label=f"{label} (α-β model)",
        )
    axes.xaxis.set_major_formatter(FuncFormatter(lambda x, _: format_size(x) if x >= 1 else ""))
    axes.yaxis.set_major_formatter(FuncFormatter(lambda y, _: format_time(y)))
    axes.set_xlabel("payload per rank")
    axes.set_ylabel("completion time")
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(fontsize="x-small" if results["point"].nunique() > 4 else "small", ncols=2 if len(axes.lines) > 12 else 1)
    if title:
        axes.set_title(title)
    figure.savefig(path, dpi=120)
    return figure


_FABRIC_LAYERS = {"edge": 2, "leaf": 2, "router": 2, "aggregation": 3, "spine": 3, "core": 4}
_KIND_STYLE = {"gpu": ("s", "tab:green"), "nic": ("D", "tab:orange"), "cpu": ("h", "tab:blue"), "switch": ("o", "tab:gray")}


def _layer(data: dict) -> int:
    if data["kind"] == "gpu":
        return 0
    if data["kind"] in ("nic", "cpu") or data.get("host") is not None:
        return 1
    return _FABRIC_LAYERS.get(data.get("level"), 2)


def _cable(a: tuple[float, float], b: tuple[float, float]) -> list[tuple[float, float]]:
    """A straight segment between layers; an arc within a layer (below the GPUs, above others)."""
    if a[1] != b[1]:
        return [a, b]
    height = 0.8 * abs(b[0] - a[0]) * (-1 if a[1] == 0 else 1)
    steps = 16
    return [
        (a[0] + (b[0] - a[0]) * t / steps, a[1] + height * 4 * (t / steps) * (1 - t / steps))
        for t in range(steps + 1)
    ]


def draw_topology(graph: nx.DiGraph, path: str | Path, *, title: str = "") -> Figure:
    """Layered drawing of a topology: GPUs at the bottom, then NICs, CPUs and in-server
    switches, then the fabric's switches by level (edge/leaf/router, aggregation/spine, core).

    Nodes keep their graph order from left to right within a layer, so servers and
    pods stay together; cables are coloured by tier, thicker for more bandwidth.
    Node names are printed when there are at most 64 nodes.

    Parameters
    ----------
    graph : networkx.DiGraph
        A topology (see :mod:`simnet.topology.contract`).
    path : str or pathlib.Path
        PNG file to write.
    title : str, optional
        Figure title (default: the graph's name).
    """
    layers: dict[int, list] = {}
    for order, (node, data) in enumerate(graph.nodes(data=True)):
        layers.setdefault(_layer(data), []).append((data.get("host", -1), data.get("socket", -1), order, node))
    layers = {level: [entry[-1] for entry in sorted(members)] for level, members in layers.items()}
    position = {}
    for level, members in layers.items():
        for index, node in enumerate(members):
            position[node] = ((index + 0.5) / len(members), float(level))
    tiers = sorted({tier for _, _, tier in graph.edges(data="tier")})
    colors = {tier: f"C{i % 10}" for i, tier in enumerate(tiers)}
    widest = max((bw for _, _, bw in graph.edges(data="bandwidth_Bps")), default=1.0)
    figure = Figure(figsize=(10, 1.6 * (max(layers) + 1) + 1), layout="constrained")
    axes = figure.subplots()
    for tier in tiers:
        cables = [(u, v, d) for u, v, d in graph.edges(data=True) if d["tier"] == tier and str(u) < str(v)]
        segments = [_cable(position[u], position[v]) for u, v, _ in cables]
        widths = [0.4 + 2.0 * d["bandwidth_Bps"] / widest for *_, d in cables]
        axes.add_collection(LineCollection(segments, colors=colors[tier], linewidths=widths, alpha=0.6, label=tier))
    for kind, (marker, color) in _KIND_STYLE.items():
        members = [n for n, k in graph.nodes(data="kind") if k == kind]
        if members:
            xs, ys = zip(*(position[n] for n in members))
            axes.scatter(xs, ys, marker=marker, color=color, s=40, zorder=3, label=kind)
    if graph.number_of_nodes() <= 64:
        for node, (x, y) in position.items():
            axes.annotate(str(node), (x, y), xytext=(0, 7), textcoords="offset points", ha="center", fontsize=6)
    axes.set_xlim(0, 1)
    axes.set_ylim(-0.9, max(layers) + 0.9)
    names = {0: "GPUs", 1: "NICs, CPUs, server switches", 2: "edge / leaf / routers", 3: "aggregation / spine", 4: "core"}
    axes.set_yticks(sorted(layers), [names[level] for level in sorted(layers)])
    axes.set_xticks([])
    axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    axes.set_title(title or str(graph.graph.get("name", "topology")), fontsize="small")
    figure.savefig(path, dpi=120)
    return figure
