"""Drawings of topologies, and of one run's link utilization on them, readable at any size.

A small graph (at most :data:`DETAIL_NODES` nodes) is drawn node by node in
layers: GPUs, then NICs, CPUs and in-server switches, then the fabric's switches
by level. A larger one is aggregated: each server is one box (its GPU count in the
label, the links inside it hidden), a level with more than :data:`MAX_SWITCHES`
switches or more than :data:`MAX_SERVERS` servers is drawn as at most
:data:`GROUPS` groups of neighbours, and the cables between two boxes are one line
whose width grows with their summed bandwidth; a single server that large (a GB200
NVL72 rack) is drawn inside instead, a row per kind of node, large rows as groups. A
torus (graph attribute ``dims``) is drawn as a grid of routers, one panel of the
first two dimensions per combination of the others, the cables between panels
summed into one bundle.
"""

from __future__ import annotations

import itertools
import math
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx
import numpy as np
from matplotlib import colormaps
from matplotlib.cm import ScalarMappable
from matplotlib.collections import LineCollection
from matplotlib.colors import ListedColormap, Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from simnet.engine import Trace
from simnet.errors import SimnetError
from simnet.plots._figure import new_figure, run_title, save, tier_colors, wrap
from simnet.units import format_bandwidth

__all__ = ["DETAIL_NODES", "MAX_SERVERS", "MAX_SWITCHES", "GROUPS", "LINK_METRICS", "draw_topology",
           "link_utilization"]

DETAIL_NODES = 64
"""Graphs with at most this many nodes are drawn node by node."""

MAX_SERVERS = 40
"""Servers are drawn one by one up to this many (and at most :data:`_MAX_SERVER_EDGES` lines to the fabric)."""

MAX_SWITCHES = 24
"""Switches of one fabric level are drawn one by one up to this many."""

GROUPS = 12
"""A level with more servers or switches is drawn as at most this many groups."""

_MAX_SERVER_EDGES = 160
_FABRIC_LAYERS = {"edge": 2, "leaf": 2, "router": 2, "aggregation": 3, "spine": 3, "core": 4}
_LAYER_NAMES = {0: "GPUs", 1: "NICs, CPUs, server switches", 2: "edge / leaf / routers", 3: "aggregation / spine",
                4: "core"}
_KIND_STYLE = {"gpu": ("s", "tab:green"), "nic": ("D", "tab:orange"), "cpu": ("h", "tab:blue"),
               "switch": ("o", "tab:gray"), "server": ("s", "tab:green"), "router": ("o", "tab:gray")}
_KIND_NAMES = {"gpu": "GPU", "nic": "NIC", "cpu": "CPU", "switch": "switch", "server": "server (box of its GPUs)",
               "router": "router"}
_IDLE = (0.85, 0.85, 0.85, 1.0)
_SERVER_ROWS = {"switch": 0, "cpu": 1, "nic": 2}
_PLURALS = {"switch": "switches"}
_SERVER_ROW_NAMES = {"switch": "server switches", "cpu": "CPUs", "nic": "NICs"}
_WIDTH_NOTE = "line width grows with the summed bandwidth of the cables it stands for"
_MARK = "tab:cyan"

LINK_METRICS = {
    "load": ("load", "load", "most loaded",
             "load of the most loaded link it stands for: bytes / (capacity × completion time)"),
    "busy": ("utilization", "busy time", "busiest", "busy time of the busiest link it stands for / completion time"),
    "held": ("held", "held back", "most contended",
             "transfers held back on average by the link it stands for: held_flow_s / completion time"),
}
"""What :func:`link_utilization` colours by: metric -> (column of :meth:`simnet.engine.Trace.links`, short name,
superlative, colour bar label)."""


@dataclass
class _Node:
    """A drawn node: one graph node, a server, or a group of servers or switches."""

    label: str
    kind: str
    members: list
    x: float = 0.0
    y: float = 0.0
    gpus: int = 0


@dataclass
class _Edge:
    """A drawn line: one cable, or every cable between two drawn nodes (their bandwidth summed)."""

    a: int
    b: int
    tier: str
    bandwidth_Bps: float = 0.0
    cables: int = 0
    members: list = field(default_factory=list)
    bend: float = 0.0
    stubs: bool = False


@dataclass
class _Drawing:
    nodes: list[_Node]
    edges: list[_Edge]
    internal: dict[int, list]
    layers: dict[float, str]
    frames: list[tuple[float, float, float, float, str]]
    note: str
    labels: bool
    size_in: tuple[float, float]


def _layer(data: dict) -> int:
    if data["kind"] == "gpu":
        return 0
    if data["kind"] in ("nic", "cpu") or data.get("host") is not None:
        return 1
    return _FABRIC_LAYERS.get(data.get("level"), 2)


def _edges(graph: nx.DiGraph, group: dict, nodes: list[_Node]) -> tuple[list[_Edge], dict[int, list]]:
    """Cables between drawn nodes, summed per (pair, tier); those inside one drawn node apart."""
    edges: dict[tuple, _Edge] = {}
    internal: dict[int, list] = {}
    for u, v, data in graph.edges(data=True):
        a, b = group[u], group[v]
        if a == b:
            internal.setdefault(a, []).append((u, v))
            continue
        key = (min(a, b), max(a, b), data["tier"])
        edge = edges.setdefault(key, _Edge(key[0], key[1], data["tier"]))
        edge.members.append((u, v))
        if a < b:
            edge.bandwidth_Bps += data["bandwidth_Bps"]
            edge.cables += data.get("cables", 1)
    return list(edges.values()), internal


def _arcs(edges: list[_Edge], nodes: list[_Node]) -> list[_Edge]:
    """Lines within one layer bent into arcs (below the GPUs, above other layers), so they do not overlap."""
    for edge in edges:
        first, second = nodes[edge.a], nodes[edge.b]
        if first.y == second.y:
            edge.bend = 0.8 * abs(second.x - first.x) * (-1 if first.y == 0 else 1)
    return edges


def _spread(members: list, y: float) -> None:
    for index, node in enumerate(members):
        node.x, node.y = (index + 0.5) / len(members), y


def _detailed(graph: nx.DiGraph, *, grouped: bool = False) -> _Drawing:
    """Every node drawn, in layers, in graph order within a layer (servers and pods stay together).

    `grouped` (one server too large to draw node by node, such as a GB200 NVL72 rack): each kind of
    node of the server gets its own row (GPUs, server switches, CPUs, NICs, then the fabric's levels),
    and a kind with more than :data:`MAX_SWITCHES` nodes in a row is drawn as at most :data:`GROUPS`
    groups of neighbours, their cables summed.
    """
    layers: dict[int, list] = {}
    for order, (name, data) in enumerate(graph.nodes(data=True)):
        layers.setdefault(_layer(data), []).append((data.get("host", -1), data.get("socket", -1), order, name, data))
    rows: list[tuple[str, list[list[tuple]]]] = []
    for level in sorted(layers):
        ordered = [(name, data["kind"]) for *_, name, data in sorted(layers[level], key=lambda entry: entry[:3])]
        if not grouped:
            rows.append((_LAYER_NAMES[level], [[entry] for entry in ordered]))
            continue
        kinds = sorted(dict.fromkeys(kind for _, kind in ordered), key=lambda kind: _SERVER_ROWS.get(kind, 0))
        for kind in kinds:
            mine = [entry for entry in ordered if entry[1] == kind]
            runs = _chunks(mine, GROUPS) if len(mine) > MAX_SWITCHES else [[entry] for entry in mine]
            rows.append((_LAYER_NAMES[level] if level != 1 else _SERVER_ROW_NAMES[kind], runs))
    nodes, group = [], {}
    for y, (_, runs) in enumerate(rows):
        members = []
        for run in runs:
            kind = run[0][1]
            for name, _ in run:
                group[name] = len(nodes)
            label = _range_label([str(name) for name, _ in run], _PLURALS.get(kind, _KIND_NAMES[kind] + "s"))
            node = _Node(label, kind, [name for name, _ in run], gpus=len(run) if kind == "gpu" else 0)
            nodes.append(node)
            members.append(node)
        _spread(members, float(y))
    edges, internal = _edges(graph, group, nodes)
    names = {float(y): name for y, (name, _) in enumerate(rows)}
    note = f"large levels of the server aggregated; {_WIDTH_NOTE}" if len(nodes) < graph.number_of_nodes() else ""
    return _Drawing(nodes, _arcs(edges, nodes), internal, names, [], note, True,
                    (13.0 if grouped else 10.0, 1.6 * len(rows) + 1.2))


def _chunks(items: list, count: int) -> list[list]:
    """`items` cut into at most `count` runs of consecutive items: equal runs if some count ≥ `count` / 2 divides
    their number, else runs as equal as possible."""
    count = max(1, min(count, len(items)))
    count = next((c for c in range(count, (count - 1) // 2, -1) if len(items) % c == 0), count)
    bounds = np.linspace(0, len(items), count + 1).round().astype(int)
    return [items[lo:hi] for lo, hi in itertools.pairwise(bounds) if hi > lo]


def _range_label(names: list[str], what: str) -> str:
    """``leaf0`` for one name, ``leaf0–7 (8 switches)`` for a run of them."""
    if len(names) == 1:
        return names[0]
    first, last = names[0], names[-1]
    stem = first.rstrip("0123456789")
    if stem and last.startswith(stem) and last[len(stem):].isdigit() and first[len(stem):].isdigit():
        last = last[len(stem):]
    return f"{first}–{last}\n({len(names)} {what})"


def _server_name(graph: nx.DiGraph, members: list) -> str:
    if len(members) == 1:
        return str(members[0])
    prefixes = {str(m).split(".", 1)[0] for m in members}
    return prefixes.pop() if len(prefixes) == 1 else f"host {graph.nodes[members[0]]['host']}"


def _aggregated(graph: nx.DiGraph) -> _Drawing:
    """Servers as boxes, large levels as groups of neighbours, cables summed between them."""
    servers: dict = {}
    switches: dict[int, list] = {}
    for name, data in graph.nodes(data=True):
        host = data.get("host")
        if host is not None:
            servers.setdefault(("host", host), []).append(name)
        elif data["kind"] == "switch":
            switches.setdefault(_layer(data), []).append(name)
        else:
            servers.setdefault(("node", name), [name])
    nodes: list[_Node] = []
    group: dict = {}
    layer_names: dict[float, str] = {}
    for y, level in enumerate(sorted(switches), start=1):
        members = switches[level]
        pods = list(dict.fromkeys(graph.nodes[m].get("pod") for m in members))
        if len(members) <= MAX_SWITCHES:
            runs = [[m] for m in members]
        elif None not in pods and len(pods) <= GROUPS:
            runs = [[m for m in members if graph.nodes[m].get("pod") == pod] for pod in pods]
        else:
            runs = _chunks(members, GROUPS)
        drawn = []
        for run in runs:
            for m in run:
                group[m] = len(nodes)
            drawn.append(_Node(_range_label([str(m) for m in run], "switches"), "switch", run))
            nodes.append(drawn[-1])
        _spread(drawn, float(y))
        layer_names[float(y)] = _LAYER_NAMES[level] + ("" if len(runs) == len(members) else " (groups)")
    boxes = list(servers.values())
    reach = [frozenset(group[n] for m in box for n in graph.successors(m) if n in group) for box in boxes]
    pairs = sum(len(r) for r in reach)
    if len(boxes) <= MAX_SERVERS and pairs <= _MAX_SERVER_EDGES:
        runs = [[index] for index in range(len(boxes))]
    else:
        same = [[0]]
        for index in range(1, len(boxes)):
            if reach[index] == reach[index - 1]:
                same[-1].append(index)
            else:
                same.append([index])
        runs = [chunk for run in same for chunk in _chunks(run, max(1, round(GROUPS * len(run) / len(boxes))))]
    bare = all(len(box) == 1 and graph.nodes[box[0]]["kind"] == "gpu" for box in boxes)
    per_box = sorted({sum(graph.nodes[m]["kind"] == "gpu" for m in box) for box in boxes})
    drawn = []
    for run in runs:
        members = [m for index in run for m in boxes[index]]
        gpus = sum(graph.nodes[m]["kind"] == "gpu" for m in members)
        label = _range_label([_server_name(graph, boxes[index]) for index in run], "GPUs" if bare else "servers")
        label += f"\n{gpus} GPUs" if len(per_box) > 1 else ""
        for m in members:
            group[m] = len(nodes)
        drawn.append(_Node(label, "gpu" if bare and len(run) == 1 else "server", members, gpus=gpus))
        nodes.append(drawn[-1])
    _spread(drawn, 0.0)
    each = f"{per_box[0]} GPU{'s' if per_box[0] != 1 else ''} each" if len(per_box) == 1 else "GPUs in the labels"
    if bare:
        layer_names[0.0] = f"GPUs ({len(boxes)})" if len(runs) == len(boxes) else f"GPU groups ({len(boxes)} GPUs)"
    else:
        layer_names[0.0] = f"servers ({len(boxes)}, {each})" if len(runs) == len(boxes) else \
            f"server groups ({len(boxes)} servers, {each})"
    edges, internal = _edges(graph, group, nodes)
    note = f"servers and large levels aggregated; {_WIDTH_NOTE}"
    return _Drawing(nodes, _arcs(edges, nodes), internal, layer_names, [], note, True,
                    (12.0, 1.8 * len(layer_names) + 1.6))


def _torus(graph: nx.DiGraph) -> _Drawing | None:
    """Routers on grids of the first two dimensions, one panel per combination of the others; None if not a torus."""
    dims = graph.graph.get("dims")
    routers = [n for n, c in graph.nodes(data="coord") if c is not None]
    if not dims or len(routers) < 2:
        return None
    rest = nx.Graph(graph.subgraph(n for n in graph if n not in set(routers)).to_undirected())
    owner: dict = {}
    for component in nx.connected_components(rest):
        anchors = {r for m in component for r in graph.successors(m) if graph.nodes[r].get("coord") is not None}
        if len(anchors) != 1:
            return None
        (anchor,) = anchors
        for m in component:
            owner[m] = anchor
    dims = [int(d) for d in dims] + [1] * max(0, 2 - len(dims))
    rows, columns = dims[0], dims[1]
    slices = list(np.ndindex(*dims[2:])) if len(dims) > 2 else [()]
    per_row = min(len(slices), 4)
    gap = 1.4
    position = {s: ((i % per_row) * (columns + gap), -(i // per_row) * (rows + gap)) for i, s in enumerate(slices)}
    nodes, group = [], {}
    for router in routers:
        coord = tuple(graph.nodes[router]["coord"]) + (0,) * max(0, 2 - len(dims))
        attached = [m for m, a in owner.items() if a == router]
        members = [router, *attached]
        gpus = sum(graph.nodes[m]["kind"] == "gpu" for m in members)
        ox, oy = position[tuple(coord[2:])]
        for m in members:
            group[m] = len(nodes)
        nodes.append(_Node(str(router), "router", members, ox + coord[1], oy - coord[0], gpus))
    cables, internal = _edges(graph, group, nodes)
    edges, bundles = [], {}
    for edge in cables:
        first, second = (tuple(graph.nodes[nodes[i].members[0]]["coord"]) for i in (edge.a, edge.b))
        if first[2:] == second[2:]:
            edge.stubs = abs(nodes[edge.a].x - nodes[edge.b].x) + abs(nodes[edge.a].y - nodes[edge.b].y) > 1 + 1e-9
            edges.append(edge)
            continue
        key = tuple(sorted((first[2:], second[2:])))
        bundle = bundles.setdefault(key, _Edge(0, 0, edge.tier))
        bundle.members += edge.members
        bundle.bandwidth_Bps += edge.bandwidth_Bps
        bundle.cables += edge.cables
    frames = []
    for s in slices:
        ox, oy = position[s]
        name = ", ".join(f"c{d + 2}={c}" for d, c in enumerate(s)) or "torus"
        frames.append((ox - 0.5, oy - rows + 0.5, columns, rows, name))
    for (s, t), bundle in bundles.items():
        (sx, sy), (tx, ty) = position[s], position[t]
        middle_x, middle_y = (columns - 1) / 2, -(rows - 1) / 2
        if sy == ty and abs(tx - sx) <= columns + gap + 1e-9:
            left, right = sorted((sx, tx))
            ends = [(left + columns - 0.5, sy + middle_y), (right - 0.5, sy + middle_y)]
        elif sx == tx and abs(ty - sy) <= rows + gap + 1e-9:
            top, bottom = sorted((sy, ty), reverse=True)
            ends = [(sx + middle_x, top - rows + 0.5), (sx + middle_x, bottom + 0.5)]
        else:
            ends = [(sx + middle_x, sy - rows + 0.5), (tx + middle_x, ty - rows + 0.5)]
            bundle.bend = -(0.25 * math.hypot(tx - sx, ty - sy) ** 0.5 + 0.6)
        bundle.a, bundle.b = len(nodes), len(nodes) + 1
        nodes += [_Node(f"{bundle.cables} cables, {format_bandwidth(bundle.bandwidth_Bps)}", "bundle", [], *ends[0]),
                  _Node("", "bundle", [], *ends[1])]
        edges.append(bundle)
    per_router = sorted({n.gpus for n in nodes if n.kind == "router"})
    gpus = f"{'/'.join(map(str, per_router))} GPU{'' if per_router == [1] else 's'} per router"
    note = (f"{'×'.join(map(str, graph.graph['dims']))} torus: routers on grids of dimensions c0 (down) × c1 "
            f"(across), one panel per {'combination of ' if len(dims) > 3 else ''}"
            f"{', '.join(f'c{d}' for d in range(2, len(dims))) or 'torus'}; {gpus}; "
            f"lines between panels: the cables of the other dimensions, summed")
    depth = -min((e.bend for e in edges), default=0.0)
    scale = min(0.55, 15.0 / (per_row * (columns + gap)))
    width = 3.5 + scale * per_row * (columns + gap)
    height = 2.2 + scale * (math.ceil(len(slices) / per_row) * (rows + gap) + depth)
    return _Drawing(nodes, edges, internal, {}, frames, note, len(routers) <= 16, (max(width, 7.0), height))


def _drawing(graph: nx.DiGraph) -> _Drawing:
    if (torus := _torus(graph)) is not None:
        return torus
    if graph.number_of_nodes() <= DETAIL_NODES:
        return _detailed(graph)
    hosts = {data.get("host") for _, data in graph.nodes(data=True)} - {None}
    return _detailed(graph, grouped=True) if len(hosts) == 1 else _aggregated(graph)


def _segments(drawing: _Drawing, edge: _Edge) -> list[list[tuple[float, float]]]:
    """The polylines of one drawn line: a segment, an arc, or two stubs leaving the grid (a torus wrap-around)."""
    a, b = drawing.nodes[edge.a], drawing.nodes[edge.b]
    if edge.stubs:
        dx, dy = a.x - b.x, a.y - b.y
        length = math.hypot(dx, dy)
        ux, uy = 0.42 * dx / length, 0.42 * dy / length
        return [[(a.x, a.y), (a.x + ux, a.y + uy)], [(b.x, b.y), (b.x - ux, b.y - uy)]]
    if not edge.bend:
        return [[(a.x, a.y), (b.x, b.y)]]
    steps = 24
    dx, dy = b.x - a.x, b.y - a.y
    length = math.hypot(dx, dy) or 1.0
    nx_, ny_ = -dy / length, dx / length
    if a.y == b.y and drawing.layers:
        nx_, ny_ = 0.0, 1.0
    return [[(a.x + dx * t + nx_ * edge.bend * 4 * t * (1 - t), a.y + dy * t + ny_ * edge.bend * 4 * t * (1 - t))
             for t in (i / steps for i in range(steps + 1))]]


def _render(figure: Figure, drawing: _Drawing, colors: list, widths: list, faces: dict[int, tuple] | None,
            legend: list, marked: frozenset[int] = frozenset()) -> object:
    """Draw `drawing` on a new axes of `figure`; the lines `marked` (indices into its edges) get a halo."""
    axes = figure.subplots()
    pieces = [(line, color, width) for edge, color, width in zip(drawing.edges, colors, widths)
              for line in _segments(drawing, edge)]
    halos = [(line, width + 6) for index, (edge, width) in enumerate(zip(drawing.edges, widths)) if index in marked
             for line in _segments(drawing, edge)]
    if halos:
        axes.add_collection(LineCollection([h[0] for h in halos], colors=_MARK, linewidths=[h[1] for h in halos],
                                           alpha=0.6, capstyle="round", zorder=0.9))
    axes.add_collection(LineCollection([p[0] for p in pieces], colors=[p[1] for p in pieces],
                                       linewidths=[p[2] for p in pieces], alpha=0.75, capstyle="round", zorder=1))
    for x, y, w, h, name in drawing.frames:
        axes.add_patch(Rectangle((x, y), w, h, fill=False, edgecolor="0.6", linestyle="--", linewidth=0.8))
        axes.annotate(name, (x + w / 2, y + h), xytext=(0, 3), textcoords="offset points", ha="center",
                      va="bottom", fontsize="small", color="0.3")
    for edge in drawing.edges:
        start = drawing.nodes[edge.a]
        if start.kind == "bundle" and start.label:
            (x0, y0), (x1, y1) = _segments(drawing, edge)[0][0], _segments(drawing, edge)[0][-1]
            middle = _segments(drawing, edge)[0][len(_segments(drawing, edge)[0]) // 2] if edge.bend else \
                ((x0 + x1) / 2, (y0 + y1) / 2)
            axes.annotate(start.label, middle, xytext=(0, 4), textcoords="offset points", ha="center",
                          va="bottom", fontsize=6, color="0.25", rotation=90 if x0 == x1 else 0)
    shown = [i for i, n in enumerate(drawing.nodes) if n.kind != "bundle"]
    per_layer: dict[float, int] = {}
    for i in shown:
        per_layer[drawing.nodes[i].y] = per_layer.get(drawing.nodes[i].y, 0) + 1
    for kind, (marker, color) in _KIND_STYLE.items():
        mine = [i for i in shown if drawing.nodes[i].kind == kind]
        if not mine:
            continue
        big = kind == "server" or any(len(drawing.nodes[i].members) > 1 for i in mine)
        sizes = [(150 if per_layer[drawing.nodes[i].y] <= 24 else 70) if big else 40 for i in mine]
        face = [faces.get(i, color) if faces is not None else color for i in mine]
        axes.scatter([drawing.nodes[i].x for i in mine], [drawing.nodes[i].y for i in mine], marker=marker, s=sizes,
                     c=face, edgecolors="0.2", linewidths=0.6, zorder=3)
    if drawing.labels or drawing.layers:
        for i in shown:
            node = drawing.nodes[i]
            if not drawing.labels and len(node.members) == 1:
                continue
            crowded = per_layer[node.y] > 12
            below = node.y == 0 and drawing.layers
            axes.annotate(node.label, (node.x, node.y), xytext=(0, -9 if below else 8), textcoords="offset points",
                          ha="center", va="top" if below else "bottom", fontsize=5 if crowded else 6.5,
                          rotation=90 if crowded and below else 0)
    if drawing.layers:
        axes.set_xlim(0, 1)
        axes.set_ylim(-0.75, max(drawing.layers) + 0.5)
        axes.set_yticks(sorted(drawing.layers), [drawing.layers[y] for y in sorted(drawing.layers)], fontsize="small")
        axes.set_xticks([])
    else:
        axes.set_aspect("equal")
        axes.autoscale_view()
        xs = [n.x for n in drawing.nodes] + [x + w for x, _, w, _, _ in drawing.frames]
        ys = [n.y for n in drawing.nodes] + [y for _, y, _, _, _ in drawing.frames]
        bends = min((e.bend for e in drawing.edges), default=0.0)
        axes.set_xlim(min(xs) - 0.8, max(xs) + 0.8)
        axes.set_ylim(min(ys) - 0.6 + min(0.0, bends), max(ys) + 1.0)
        axes.set_axis_off()
    for kind, (marker, color) in _KIND_STYLE.items():
        if any(n.kind == kind for n in drawing.nodes):
            legend.append(Line2D([], [], marker=marker, color=color, linestyle="", markeredgecolor="0.2",
                                 label=_KIND_NAMES[kind]))
    axes.legend(handles=legend, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return axes


def _widths(drawing: _Drawing) -> list[float]:
    widest = max((e.bandwidth_Bps for e in drawing.edges), default=1.0) or 1.0
    return [0.5 + 3.5 * e.bandwidth_Bps / widest for e in drawing.edges]


def _width_note(drawing: _Drawing) -> Line2D:
    widest = max(drawing.edges, key=lambda e: e.bandwidth_Bps, default=None)
    text = "" if widest is None else f"widest line: {format_bandwidth(widest.bandwidth_Bps)}" + (
        f" ({widest.cables} cables)" if widest.cables > 1 else "")
    return Line2D([], [], color="0.3", linewidth=5.0, label=text or "no cables")


def _title(figure: Figure, text: str, note: str) -> None:
    figure.suptitle(wrap(text, figure.get_figwidth(), points=10), fontsize=10)
    if note:
        figure.supxlabel(wrap(note, figure.get_figwidth(), points=8), fontsize=8, color="0.3")


def draw_topology(graph: nx.DiGraph, path: str | Path, *, title: str = "") -> Figure:
    """Draw a topology, readable at any size (see the module docstring).

    Cables are coloured by tier, a tier the same colour in every plot
    (:data:`simnet.plots.TIER_COLORS`); line width grows with bandwidth (summed
    over the cables a line stands for).

    Parameters
    ----------
    graph : networkx.DiGraph
        A topology (see :mod:`simnet.topology.contract`).
    path : str or pathlib.Path
        PNG file to write.
    title : str, optional
        Figure title (default: the graph's name).

    Returns
    -------
    matplotlib.figure.Figure
    """
    drawing = _drawing(graph)
    colors = tier_colors(e.tier for e in drawing.edges)
    tiers = list(colors)
    figure = new_figure(*drawing.size_in)
    legend = [Line2D([], [], color=colors[t], linewidth=2.5, label=t) for t in tiers] + [_width_note(drawing)]
    _render(figure, drawing, [colors[e.tier] for e in drawing.edges], _widths(drawing), None, legend)
    _title(figure, title or str(graph.graph.get("name", "topology")), drawing.note)
    return save(figure, path)


def link_utilization(trace: Trace, path: str | Path, *, title: str = "", metric: str = "load") -> Figure:
    """The topology with every line coloured by how loaded (or busy) its links were in one run.

    ``metric="load"`` (the default) colours by a link's load, the bytes it carried
    over what it could carry in the run, ``bytes / (bandwidth_Bps * time_s)``: the
    link that carried the most for its capacity, which is often a GPU's or host's
    own link that every step uses, not where transfers competed. ``metric="held"``
    colours by the time the link held transfers back (below their lone rate, or
    waiting to start), summed over the transfers, over the completion time
    (``held_flow_s / time_s``, the number of transfers it held back on average): the
    link where contention cost time, an oversubscribed uplink or an ECMP hot spot.
    ``metric="busy"`` colours by its busy time over the completion time
    (``utilization``), which is high for any link that carries a trickle all along.
    All come from :meth:`simnet.engine.Trace.links`. A line shows the largest value among the
    links (both directions, every cable) it stands for, idle ones in light grey
    (named in the legend); the lines holding the largest value of the run get a
    halo, and the legend names that link and each tier's largest value. An
    aggregated server (see :func:`draw_topology`) is filled with the value of its
    most loaded (busiest) internal link.

    Parameters
    ----------
    trace : Trace
        One simulated run.
    path : str or pathlib.Path
        PNG file to write.
    title : str, optional
        Figure title (default: algorithm, collective, size per rank, topology,
        simulated time and link model).
    metric : {"load", "busy", "held"}, optional
        What colours the lines (see :data:`LINK_METRICS`).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    SimnetError
        For another `metric` (``path="metric"``).
    """
    if metric not in LINK_METRICS:
        raise SimnetError(f"must be one of {', '.join(LINK_METRICS)}, got {metric!r}", path="metric")
    column, short, most, label = LINK_METRICS[metric]
    graph = trace.network.graph
    drawing = _drawing(graph)
    links = trace.links()
    if metric == "held":
        links["held"] = links["held_flow_s"] / trace.time_s if trace.time_s > 0 else 0.0
    values = links[column].to_numpy(dtype=float)
    level_of: dict = {}
    carried_by: set = set()
    for u, v, value, carried in zip(links["src"], links["dst"], values, links["bytes"] > 0):
        level_of[(u, v)] = max(level_of.get((u, v), 0.0), float(value))
        if carried:
            carried_by.add((u, v))
    top = float(values.max()) if len(values) else 0.0
    cmap = ListedColormap(colormaps["inferno_r"](np.linspace(0.2, 1.0, 256)))
    norm = Normalize(0.0, max(1.0, top) if metric == "held" else 1.0)

    def level(members: list) -> float:
        return max((level_of.get((str(u), str(v)), 0.0) for u, v in members), default=0.0)

    def carried(members: list) -> bool:
        return any((str(u), str(v)) in carried_by for u, v in members)

    levels = [level(e.members) for e in drawing.edges]
    colors = [cmap(norm(value)) if value > 0 or carried(e.members) else _IDLE
              for value, e in zip(levels, drawing.edges)]
    faces = {i: cmap(norm(level(members))) for i, members in drawing.internal.items() if level(members) > 0}
    legend = [_width_note(drawing)]
    marked = frozenset(i for i, value in enumerate(levels) if top > 0 and value >= top * (1 - 1e-9))
    if top > 0:
        first = int(np.argmax(values))
        ties = int(np.count_nonzero(values >= top * (1 - 1e-9))) - 1
        where = "" if marked else " (inside a server box)"
        legend.append(Line2D([], [], color=_MARK, alpha=0.6, linewidth=6, label=(
            f"{most} link, {short} {top:.2f}:\n{links['src'].iloc[first]} → {links['dst'].iloc[first]} "
            f"({links['tier'].iloc[first]}){where}" + (f"\nand {ties} more as {most}" if ties else ""))))
        per_tier = links.assign(value=values).groupby("tier")["value"].max().sort_values(ascending=False)
        legend.append(Line2D([], [], linestyle="", label=textwrap.fill(f"{most} per tier: " + ", ".join(
            f"{tier}\u00a0{value:.2f}" for tier, value in per_tier.items() if value > 0), 36).replace("\u00a0", " ")))
    if _IDLE in colors:
        legend.append(Line2D([], [], color=_IDLE, linewidth=2.5, label="idle: carried nothing"))
    figure = new_figure(drawing.size_in[0] + 1.2, drawing.size_in[1])
    axes = _render(figure, drawing, colors, _widths(drawing), faces, legend, marked)
    figure.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=axes, location="bottom", shrink=0.5, aspect=40,
                    label=label)
    _title(figure, f"{title or run_title(trace)}; lines coloured by {short}", drawing.note)
    return save(figure, path)
