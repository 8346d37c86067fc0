"""Plots of results; the only module that imports matplotlib.

Every function takes tidy frames from :mod:`simnet.analysis` and a path, writes a
PNG and returns the :class:`matplotlib.figure.Figure`. Figures are built with the
object-oriented API, so no pyplot state or GUI backend is involved.
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pandas as pd
from matplotlib import colormaps
from matplotlib.cm import ScalarMappable
from matplotlib.collections import LineCollection
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from simnet.analysis import speedups
from simnet.engine import Trace
from simnet.units import format_size, format_time

__all__ = ["time_vs_size", "busbw_vs_size", "speedup_bars", "draw_topology", "link_utilization", "gantt", "jobs_gantt",
           "slowdown_bars"]


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


def _layout(graph: nx.DiGraph) -> tuple[dict[int, list], dict]:
    """Nodes per layer and the (x, y) position of every node."""
    layers: dict[int, list] = {}
    for order, (node, data) in enumerate(graph.nodes(data=True)):
        layers.setdefault(_layer(data), []).append((data.get("host", -1), data.get("socket", -1), order, node))
    layers = {level: [entry[-1] for entry in sorted(members)] for level, members in layers.items()}
    position = {}
    for level, members in layers.items():
        for index, node in enumerate(members):
            position[node] = ((index + 0.5) / len(members), float(level))
    return layers, position


def _finish_layers(axes, layers: dict[int, list]) -> None:
    axes.set_xlim(0, 1)
    axes.set_ylim(-0.9, max(layers) + 0.9)
    names = {0: "GPUs", 1: "NICs, CPUs, server switches", 2: "edge / leaf / routers", 3: "aggregation / spine", 4: "core"}
    axes.set_yticks(sorted(layers), [names[level] for level in sorted(layers)])
    axes.set_xticks([])


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
    layers, position = _layout(graph)
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
    _finish_layers(axes, layers)
    axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    axes.set_title(title or str(graph.graph.get("name", "topology")), fontsize="small")
    figure.savefig(path, dpi=120)
    return figure


def _series(results: pd.DataFrame):
    for (point, algorithm, params), group in results.groupby(["point", "algorithm", "params"], sort=False):
        label = " ".join(part for part in (point, algorithm, "" if params == "{}" else params) if part)
        yield label, group.sort_values("size_bytes")


def _size_axis(axes) -> None:
    axes.xaxis.set_major_formatter(FuncFormatter(lambda x, _: format_size(x) if x >= 1 else ""))
    axes.set_xlabel("payload per rank")
    axes.grid(True, which="major", alpha=0.3)


def busbw_vs_size(
    results: pd.DataFrame, path: str | Path, *, title: str = "", reference_GBps: dict[str, float] | None = None
) -> Figure:
    """Bus bandwidth (nccl-tests' busbw) against payload size, per algorithm.

    Points are simulated; lines are the same quantity computed from the
    closed-form model's time, so the curves show where each model stops holding.

    Parameters
    ----------
    results : pandas.DataFrame
        Rows of :data:`simnet.analysis.RESULT_COLUMNS`.
    path : str or pathlib.Path
        PNG file to write.
    title : str, optional
        Figure title.
    reference_GBps : dict of str to float, optional
        Horizontal reference lines, e.g. published busbw figures or link peaks.
    """
    figure = Figure(figsize=(7, 4.5), layout="constrained")
    axes = figure.subplots()
    for label, group in _series(results):
        model_busbw = group["busbw_GBps"] * group["sim_time_s"] / group["model_time_s"]
        points = axes.semilogx(group["size_bytes"], group["busbw_GBps"], "o", label=f"{label} (simulated)")
        axes.semilogx(group["size_bytes"], model_busbw, "-", color=points[0].get_color(), alpha=0.7,
                      label=f"{label} (α-β model)")
    for name, value in (reference_GBps or {}).items():
        axes.axhline(value, linestyle="--", color="black", alpha=0.5, linewidth=1)
        axes.annotate(name, (axes.get_xlim()[0], value), xytext=(4, 3), textcoords="offset points", fontsize="x-small")
    _size_axis(axes)
    axes.set_ylabel("bus bandwidth (GB/s)")
    axes.set_ylim(bottom=0)
    axes.legend(fontsize="x-small")
    if title:
        axes.set_title(title)
    figure.savefig(path, dpi=120)
    return figure


def speedup_bars(results: pd.DataFrame, path: str | Path, *, baseline: str = "ring", title: str = "") -> Figure:
    """Grouped bars of each algorithm's speedup over `baseline`, one group per size (and point).

    A dashed line marks 1 (as fast as the baseline); bars above it are faster.
    """
    table = speedups(results, baseline)
    table = table.assign(choice=table["algorithm"] + table["params"].map(lambda p: "" if p == "{}" else f" {p}"))
    groups = list(dict.fromkeys(zip(table["point"], table["size_bytes"])))
    choices = list(dict.fromkeys(table["choice"]))
    figure = Figure(figsize=(max(6, 1.2 * len(groups) + 3), 4.5), layout="constrained")
    axes = figure.subplots()
    width = 0.8 / len(choices)
    for index, choice in enumerate(choices):
        mine = table[table["choice"] == choice].set_index(["point", "size_bytes"])["speedup"]
        heights = [mine.get(group, float("nan")) for group in groups]
        axes.bar([g + (index - (len(choices) - 1) / 2) * width for g in range(len(groups))], heights, width,
                 label=choice)
    axes.axhline(1.0, linestyle="--", color="black", linewidth=1)
    axes.set_xticks(range(len(groups)), [" ".join(p for p in (point, format_size(size)) if p) for point, size in groups],
                    rotation=30 if len(groups) > 6 else 0, fontsize="small")
    axes.set_ylabel(f"speedup over {baseline} (simulated)")
    axes.legend(fontsize="x-small")
    if title:
        axes.set_title(title)
    figure.savefig(path, dpi=120)
    return figure


def link_utilization(trace: Trace, path: str | Path, *, title: str = "") -> Figure:
    """The topology drawn with every cable coloured by how busy it was in one run.

    Colour is the largest utilization (busy time / completion time) among the
    cable's two directions (and among the cables of a bundle, which are drawn as
    one); width grows with bandwidth. Idle cables are light grey.
    """
    graph = trace.network.graph
    layers, position = _layout(graph)
    links = trace.links()
    busy: dict = {}
    for u, v, value in zip(links["src"], links["dst"], links["utilization"]):
        busy[(u, v)] = max(busy.get((u, v), 0.0), value)
    cmap = colormaps["inferno_r"]
    norm = Normalize(0.0, 1.0)
    widest = max((bw for _, _, bw in graph.edges(data="bandwidth_Bps")), default=1.0)
    segments, colors, widths = [], [], []
    for u, v, data in graph.edges(data=True):
        if str(u) >= str(v) and graph.has_edge(v, u):
            continue
        level = max(busy.get((str(u), str(v)), 0.0), busy.get((str(v), str(u)), 0.0))
        segments.append(_cable(position[u], position[v]))
        colors.append(cmap(norm(level)) if level > 0 else (0.85, 0.85, 0.85, 1.0))
        widths.append(0.6 + 2.5 * data["bandwidth_Bps"] / widest)
    figure = Figure(figsize=(10, 1.6 * (max(layers) + 1) + 1), layout="constrained")
    axes = figure.subplots()
    axes.add_collection(LineCollection(segments, colors=colors, linewidths=widths))
    for kind, (marker, color) in _KIND_STYLE.items():
        members = [n for n, k in graph.nodes(data="kind") if k == kind]
        if members:
            xs, ys = zip(*(position[n] for n in members))
            axes.scatter(xs, ys, marker=marker, color=color, s=30, zorder=3, label=kind)
    _finish_layers(axes, layers)
    figure.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=axes, label="utilization (busy time / completion time)")
    axes.legend(fontsize="small", loc="upper left")
    axes.set_title(title or f"{trace.schedule.algorithm} on {graph.graph.get('name', 'topology')}: "
                            f"{format_time(trace.time_s)}", fontsize="small")
    figure.savefig(path, dpi=120)
    return figure


def gantt(trace: Trace, path: str | Path, *, title: str = "", max_ranks: int = 64) -> Figure:
    """Per-rank timeline of one run: each transfer a bar on its sender's row, coloured by tier.

    A bar spans ``[start_s, end_s]`` of the transfer (first byte in to completion);
    its colour is the tier of its route's slowest link, so waits on InfiniBand
    stand out from NVLink traffic. At most `max_ranks` rows are drawn.
    """
    network = trace.network
    transfers = trace.schedule.transfers
    tiers_of_route = {}
    rows: dict[str, list] = {}
    for index, t in enumerate(transfers):
        if t.src >= max_ranks:
            continue
        key = (t.src, t.dst)
        if key not in tiers_of_route:
            route = network.route(t.src, t.dst)
            tiers_of_route[key] = network.tiers[min(route, key=lambda link: network.bandwidth_Bps[link])] if route else "local"
        rows.setdefault(tiers_of_route[key], []).append((t.src, trace.start_s[index], trace.end_s[index]))
    tiers = sorted(rows)
    colors = {tier: f"C{i % 10}" for i, tier in enumerate(tiers)}
    shown_ranks = min(max_ranks, trace.schedule.nranks)
    figure = Figure(figsize=(10, min(12, 1.5 + 0.22 * shown_ranks)), layout="constrained")
    axes = figure.subplots()
    for tier in tiers:
        bars = rows[tier]
        axes.barh([rank for rank, _, _ in bars], [end - start for _, start, end in bars],
                  left=[start for _, start, _ in bars], height=0.8, color=colors[tier], alpha=0.55, linewidth=0)
    axes.xaxis.set_major_formatter(FuncFormatter(lambda x, _: format_time(x)))
    axes.set_xlabel("simulated time")
    axes.set_ylabel("sending rank")
    axes.set_ylim(shown_ranks - 0.5, -0.5)
    axes.legend(handles=[Patch(color=colors[t], alpha=0.55, label=t) for t in tiers], fontsize="small",
                title="bottleneck tier", loc="upper right")
    axes.set_title(title or f"{trace.schedule.algorithm}: {format_size(trace.schedule.size_bytes)} per rank, "
                            f"{format_time(trace.time_s)}", fontsize="small")
    figure.savefig(path, dpi=120)
    return figure


def jobs_gantt(timeline: pd.DataFrame, path: str | Path, *, title: str = "", max_rows: int = 48) -> Figure:
    """Per-job timeline of jobs run together: one row per communicator, one bar per collective (or round of flows).

    Parameters
    ----------
    timeline : pandas.DataFrame
        Rows with ``job, communicator, iteration, start_s, end_s`` (:data:`simnet.jobs.TIMELINE_COLUMNS`);
        with a ``point`` column, only the first point is drawn.
    path : str or pathlib.Path
        PNG file to write.
    title : str, optional
        Figure title.
    max_rows : int, optional
        Communicators drawn at most (the first of each job first).
    """
    frame = timeline
    if "point" in frame and len(frame):
        frame = frame[frame["point"] == frame["point"].iloc[0]]
    jobs = list(dict.fromkeys(frame["job"]))
    rows = list(dict.fromkeys(zip(frame["job"], frame["communicator"])))
    rows.sort(key=lambda row: (row[1] > 0, jobs.index(row[0]), row[1]))
    rows = sorted(rows[:max_rows], key=lambda row: (jobs.index(row[0]), row[1]))
    position = {row: index for index, row in enumerate(rows)}
    colors = {job: f"C{i % 10}" for i, job in enumerate(jobs)}
    figure = Figure(figsize=(10, min(12, 1.5 + 0.3 * max(len(rows), 1))), layout="constrained")
    axes = figure.subplots()
    for job in jobs:
        mine = frame[frame["job"] == job]
        keep = [(j, c) in position for j, c in zip(mine["job"], mine["communicator"])]
        mine = mine[keep]
        axes.barh([position[(j, c)] for j, c in zip(mine["job"], mine["communicator"])],
                  mine["end_s"] - mine["start_s"], left=mine["start_s"], height=0.7, color=colors[job], alpha=0.6,
                  edgecolor="black", linewidth=0.3)
    axes.set_yticks(range(len(rows)), [job if communicator == 0 else f"{job} #{communicator}"
                                       for job, communicator in rows], fontsize="small")
    axes.set_ylim(len(rows) - 0.5, -0.5)
    axes.xaxis.set_major_formatter(FuncFormatter(lambda x, _: format_time(x)))
    axes.set_xlabel("simulated time")
    axes.legend(handles=[Patch(color=colors[job], alpha=0.6, label=job) for job in jobs], fontsize="small",
                loc="upper left", bbox_to_anchor=(1.01, 1.0))
    axes.set_title(title or "jobs run together: one bar per collective", fontsize="small")
    figure.savefig(path, dpi=120)
    return figure


def slowdown_bars(jobs: pd.DataFrame, path: str | Path, *, title: str = "") -> Figure:
    """Bars of each job's slowdown (time together / time alone), grouped by sweep point.

    A dashed line marks 1 (as fast as alone).
    """
    points = list(dict.fromkeys(jobs["point"]))
    names = list(dict.fromkeys(jobs["job"]))
    figure = Figure(figsize=(max(6, 1.2 * len(points) * max(1, len(names)) / 2 + 3), 4.5), layout="constrained")
    axes = figure.subplots()
    width = 0.8 / max(1, len(names))
    for index, name in enumerate(names):
        mine = jobs[jobs["job"] == name].set_index("point")["slowdown"]
        heights = [float(mine.get(point, float("nan"))) for point in points]
        axes.bar([p + (index - (len(names) - 1) / 2) * width for p in range(len(points))], heights, width, label=name)
    axes.axhline(1.0, linestyle="--", color="black", linewidth=1)
    axes.set_xticks(range(len(points)), [point or "jobs" for point in points], rotation=30 if len(points) > 4 else 0,
                    fontsize="small")
    axes.set_ylabel("slowdown (time together / time alone)")
    axes.set_ylim(bottom=0)
    axes.legend(fontsize="x-small")
    if title:
        axes.set_title(title)
    figure.savefig(path, dpi=120)
    return figure
