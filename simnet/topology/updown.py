"""Up/down routing on fat-trees and leaf-spines: d-mod-k, and SimGrid's FatTreeZone rule.

The fabric is the set of switches that belong to no server (no ``host``); its
*endpoints* are the nodes cabled to it that are not fabric switches (the GPUs of a
fabric builder, the NICs of a cluster). Endpoints carry a destination index ``d``:
their ``port`` attribute, the fabric's host port they occupy, or else their position
in graph order. Levels are counted from the endpoints: a fabric switch cabled to an
endpoint is at level 0, a switch cabled to a level-``l`` switch and to none below is
at level ``l + 1``. When every fabric switch names its tier (the ``level`` attribute
of the fabric builders: edge, aggregation, core; leaf, spine), a tier's switches all
take the lowest level found for it: an edge switch with no endpoint cabled to it (a
fat-tree only partly filled) stays an edge switch instead of passing for a core. A node's *up-ports* are its cables to the next level up, ordered
parent fastest: with ``P`` parents in graph order and ``L`` cables to each, port
``p + j P`` is cable ``j`` to parent ``p`` (the port order of SimGrid's FatTreeZone).

d-mod-k (``routing = "dmodk"``)
    A route climbs until it reaches a switch above its destination ``d`` (the
    destination is reachable downwards from it). At the ``k``-th node of the climb
    it takes up-port ``⌊d / (K_0 ... K_{k-1})⌋ mod K_k``, where ``K_i`` is the
    number of up-ports of the ``i``-th node, so every destination owns one up-port
    per switch and consecutive destinations fan out over the parents, then over
    the cables of a bundle. The descent is the climb that the destination itself
    would make with its own index, run backwards: every route to ``d`` descends
    along the same cables, as a linear forwarding table indexed by destination
    (the only kind an InfiniBand switch has) makes it. On a k-ary n-tree or any
    parallel generalized fat-tree whose endpoints are numbered in port order, a
    shift permutation ``i -> i + s`` then puts at most one route on every link
    (Zahavi 2010).

SimGrid (``routing = "simgrid"``)
    SimGrid 3.32's ``FatTreeZone::get_local_route`` (src/kernel/routing/
    FatTreeZone.cpp): the same climb, except that the divisor grows by the number
    of parents of each node rather than its up-ports, and on the way down the
    cable of a bundle is the *source's* index modulo the bundle's cables (its scan
    over the ports continues after each step down, which this reproduces too).

References
----------
Zahavi, E. (2010). D-Mod-K routing providing non-blocking traffic for shift
permutations on real life fat trees. CCIT Report 776, Technion.
Zahavi, E., Johnson, G., Kerbyson, D. J. and Lang, M. (2010). Optimized InfiniBand
fat-tree routing for shift all-to-all communication patterns. Concurrency and
Computation: Practice and Experience 22(2), 217-231.
OpenSM, the InfiniBand subnet manager: ``ftree`` and ``updn`` routing engines,
which fill every switch's linear forwarding table (LFT) by destination LID
(opensm/osm_ucast_ftree.c; ``opensm(8)``, "Routing").
Öhring, S. R., Ibel, M., Das, S. K. and Kumar, M. J. (1995). On generalized fat
trees. IPPS '95, 37-44.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from typing import NamedTuple

import networkx as nx
import numpy as np

from simnet.errors import TopologyError
from simnet.speed import unique_inverse
from simnet.topology.contract import separate_cables

__all__ = ["UpDown", "FabricRoutes"]


class UpDown:
    """Levels, up- and down-ports of a fabric, and its d-mod-k or SimGrid routes.

    Parameters
    ----------
    graph : networkx.DiGraph
        A validated topology.
    simgrid : bool
        Route as SimGrid's FatTreeZone instead of d-mod-k (see the module docstring).

    Examples
    --------
    >>> from simnet.topology import fat_tree
    >>> nodes, cables = UpDown(fat_tree(4, 1e9, 1e-6), simgrid=False).route("gpu0", "gpu5")
    >>> nodes
    ('gpu0', 'edge0_0', 'agg0_1', 'core2', 'agg1_1', 'edge1_0', 'gpu5')
    """

    def __init__(self, graph: nx.DiGraph, *, simgrid: bool) -> None:
        self._simgrid = simgrid
        order = {node: i for i, node in enumerate(graph)}
        fabric = {n for n, data in graph.nodes(data=True) if data["kind"] == "switch" and data.get("host") is None}
        endpoints = [n for n in graph if n not in fabric and any(v in fabric for v in graph.successors(n))]
        ports = [graph.nodes[n].get("port") for n in endpoints]
        self._index = dict(zip(endpoints, ports if None not in ports else range(len(endpoints))))
        self._bit = {node: i for i, node in enumerate(endpoints)}
        level: dict[Hashable, int] = {}
        frontier = sorted({v for n in endpoints for v in graph.successors(n) if v in fabric}, key=order.__getitem__)
        depth = 0
        while frontier:
            level.update(dict.fromkeys(frontier, depth))
            frontier = sorted(
                {v for u in frontier for v in graph.successors(u) if v in fabric and v not in level},
                key=order.__getitem__,
            )
            depth += 1
        tiers = {node: graph.nodes[node].get("level") for node in level}
        if None not in tiers.values():
            lowest: dict = {}
            for node, tier in tiers.items():
                lowest[tier] = min(lowest.get(tier, depth), level[node])
            level = {node: lowest[tier] for node, tier in tiers.items()}
        self._level = level

        adjacency = graph.adj

        def ports_to(node: Hashable, neighbours: list) -> list[tuple[Hashable, int]]:
            edges = adjacency[node]
            counts = [1 if edges[v].get("cables", 1) == 1 else separate_cables(graph, node, v) for v in neighbours]
            if all(count == 1 for count in counts):
                return [(v, 0) for v in neighbours]
            return [
                (v, cable)
                for cable in range(max(counts, default=0))
                for v, count in zip(neighbours, counts)
                if count > cable
            ]

        self._up: dict[Hashable, list] = {}
        self._parents: dict[Hashable, int] = {}
        self._down: dict[Hashable, list] = {}
        for node in [*endpoints, *level]:
            above = level.get(node, -1) + 1
            parents = sorted((v for v in graph.successors(node) if level.get(v) == above), key=order.__getitem__)
            self._up[node] = ports_to(node, parents)
            self._parents[node] = len(parents)
        for node, at in level.items():
            below = [v for v in graph.successors(node) if (level.get(v) == at - 1 if at else v in self._index)]
            self._down[node] = ports_to(node, sorted(below, key=order.__getitem__))
        self._reach: dict[Hashable, int] = {}
        for node in sorted(level, key=level.__getitem__):
            mask = 0
            for child, _ in self._down[node]:
                mask |= (1 << self._bit[child]) if child in self._bit else self._reach[child]
            self._reach[node] = mask
        self._mirrors: dict[Hashable, dict] = {}
        self._tables: _Tables | None = None

    @property
    def endpoints(self) -> dict:
        """Endpoint -> destination index (its host port)."""
        return self._index

    def _above(self, node: Hashable, target: Hashable) -> bool:
        """Whether `target` is `node` or reachable from it going down only."""
        return node == target or (self._reach.get(node, 0) >> self._bit[target]) & 1 == 1

    def _climb(self, source: Hashable, target: Hashable, index: int, *, top: bool) -> tuple[list, list]:
        """Nodes and cables from `source` up to the first switch above `target` (the top with `top`)."""
        nodes, cables = [source], []
        node, divisor = source, 1
        while top or not self._above(node, target):
            ports = self._up[node]
            if not ports:
                if top:
                    break
                raise TopologyError(self._stuck(source, target, nodes), path="routing")
            parent, cable = ports[(index // divisor) % len(ports)]
            divisor *= self._parents[node] if self._simgrid else len(ports)
            nodes.append(parent)
            cables.append(cable)
            node = parent
        return nodes, cables

    def _stuck(self, source: Hashable, target: Hashable, climb: list) -> str:
        """Why the climb `climb` from `source` towards `target` ends below no switch above `target`.

        Either its last switch has no cable up where most switches of its level have some, or it is a top
        switch with no cable down to a switch above `target`. The message then lists the switches with fewer
        cables to other switches than most of their level (a missing cable shows at both its ends).
        """
        rule = "SimGrid's fat-tree rule" if self._simgrid else "d-mod-k"
        node = climb[-1]
        walked = " → ".join(map(str, climb))
        head = f"no {rule} route from {source!r} to {target!r}: its climb {walked} ends at {node!r}"
        at = self._level.get(node, -1)
        usual_up = _usual(len(self._up[s]) for s, level in self._level.items() if level == at)
        if usual_up:
            reason = f"which has no cable to a higher level where most switches of its level have {usual_up}"
        elif at > 0:
            below = [s for s, level in self._level.items() if level == at - 1 and self._above(s, target)]
            reason = (f"which has no cable down to {' or '.join(map(repr, below))}, the switches above {target!r} "
                      "one level lower" if below else f"and {target!r} reaches no switch of level {at - 1} going up")
        else:
            return (f"{head}, which has no link to a higher level; {rule} needs a fat-tree or leaf-spine fabric "
                    "(routing 'shortest' takes any graph)")
        short = self._short_of_cables()
        listed = ", ".join(short[:6]) + (", …" if len(short) > 6 else "")
        irregular = f" (switches with fewer cables than most of their level: {listed})" if short else ""
        return (f"{head}, {reason}{irregular}; {rule} needs every cable of a regular fat-tree (OpenSM's ftree "
                "refuses such a fabric and falls back to min-hop): routing 'shortest' or 'ecmp_hash' takes shortest "
                "paths around missing cables")

    def _short_of_cables(self) -> list[str]:
        """``'agg0_1' 1 of 2 up-ports`` for every switch with fewer up- or down-ports to other switches than most
        switches of its level, lowest level first."""
        levels: dict[int, list] = {}
        for switch, level in self._level.items():
            levels.setdefault(level, []).append(switch)
        short = []
        for level in sorted(levels):
            for ports, kind in ((self._up, "up"), (self._down, "down")):
                if kind == "down" and level == 0:
                    continue
                usual = _usual(len(ports[s]) for s in levels[level])
                short += [f"{s!r} {len(ports[s])} of {usual} {kind}-port{'' if usual == 1 else 's'}"
                          for s in levels[level] if len(ports[s]) < usual]
        return short

    def _mirror(self, target: Hashable) -> dict:
        """Switch -> (next node, cable) down to `target`: `target`'s own climb, backwards."""
        mirror = self._mirrors.get(target)
        if mirror is None:
            nodes, cables = self._climb(target, target, self._index[target], top=True)
            mirror = self._mirrors[target] = {
                upper: (lower, cable) for lower, upper, cable in zip(nodes, nodes[1:], cables)
            }
        return mirror

    def route(self, source: Hashable, target: Hashable) -> tuple[tuple, tuple]:
        """Nodes and cable indices (one per hop) from endpoint `source` to endpoint `target`.

        Raises
        ------
        TopologyError
            If the fabric has no up/down route between them.
        """
        nodes, cables = self._climb(source, target, self._index[target], top=False)
        node = nodes[-1]
        if self._simgrid:
            position = self._index[source]
            while node != target:
                ports = self._down[node]
                child_count = len({child for child, _ in ports})
                bundle = max(cable for child, cable in ports if self._above(child, target)) + 1
                i = (position % bundle) * child_count
                descended = len(nodes)
                while node != target and i < len(self._down[node]):
                    child, cable = self._down[node][i]
                    if self._above(child, target):
                        nodes.append(child)
                        cables.append(cable)
                        node = child
                    i += 1
                if len(nodes) == descended:
                    raise TopologyError(
                        f"no SimGrid fat-tree route from {source!r} to {target!r}: from {node!r} the port scan "
                        f"that starts at port {(position % bundle) * child_count} finds no way down; SimGrid's "
                        "rule needs a regular fat-tree (routing 'dmodk' takes this fabric)",
                        path="routing",
                    )
            return tuple(nodes), tuple(cables)
        mirror = self._mirror(target)
        while node != target:
            step = mirror.get(node)
            if step is None:
                child, cable = next((c, k) for c, k in self._down[node] if self._above(c, target))
                cable = self._index[target] % (1 + max(k for c, k in self._down[node] if c == child))
                step = (child, cable)
            node, cable = step
            nodes.append(node)
            cables.append(cable)
        return tuple(nodes), tuple(cables)

    @property
    def edges(self) -> list[tuple[Hashable, Hashable]]:
        """The directed edges that :meth:`leads` and :class:`FabricRoutes` ``hop_edges`` number (it grows as
        routes find more)."""
        return self._arrays().edges

    def numbers(self, nodes: Sequence[Hashable]) -> np.ndarray:
        """The number of each of `nodes` in the arrays of :meth:`leads` and :meth:`routes_of` (-1 for a node that
        is not an endpoint)."""
        tables = self._arrays()
        return np.array([tables.ids[node] if node in self._index else -1 for node in nodes], dtype=np.int64)

    def leads(self, source: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The hop every route from each of the endpoints `source` (:meth:`numbers`) to another endpoint starts
        with: its edge (a number in :class:`FabricRoutes` ``edges``), its cable and the switch it reaches; -1,
        -1 and the endpoint itself where routes start differently.

        Under d-mod-k an endpoint with one up-port climbs through it to any target (its port
        is ``⌊d / 1⌋ mod 1``, and the divisor stays 1), so its route to any other endpoint is
        that hop followed by the switch's route to the target (:meth:`routes_of`). Under
        SimGrid's rule the cable down depends on the source, so no route is led.
        """
        tables = self._arrays()
        single = (source < tables.endpoints) & (tables.up_count[source] == 1) & (not self._simgrid)
        return (np.where(single, tables.up_edge[source, 0], -1), np.where(single, tables.up_cable[source, 0], -1),
                np.where(single, tables.up_parent[source, 0], source))

    def routes_of(self, source: np.ndarray, target: np.ndarray) -> FabricRoutes:
        """:meth:`route` from each node `source[i]` (an endpoint, or a switch that :meth:`leads` reaches) to
        the endpoint `target[i]`, all given as numbers (:meth:`numbers`); under d-mod-k every pair climbs and
        descends together, one level per step, on tables of the up- and down-ports; under SimGrid's rule each
        pair is routed by :meth:`route`.

        Raises
        ------
        TopologyError
            As :meth:`route`, for a pair without an up/down route.
        """
        tables = self._arrays()
        if self._simgrid:
            nodes = tables.nodes
            routed = _padded([self.route(nodes[s], nodes[t]) for s, t in zip(source.tolist(), target.tolist())],
                             tables)
        else:
            routed = self._routed(tables, source, target)
        return FabricRoutes(tables.nodes, tables.edges, *routed)

    def _routed(self, tables: _Tables, source: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, ...]:
        """The d-mod-k routes of pairs of nodes (numbers in `tables`) as padded arrays: nodes, cables, edges."""
        climbed, climb_cables, climb_edges, _, top = self._climbs(tables, source, target)
        rows = np.arange(len(source))
        length = (climbed >= 0).sum(axis=1) - 1
        hops, cables, edges = _blank(len(source), climbed.shape[1] - 1 + int(tables.level.max(initial=0)) + 1)
        hops[:, :climbed.shape[1]] = climbed
        cables[:, :climb_cables.shape[1]] = climb_cables
        edges[:, :climb_edges.shape[1]] = climb_edges
        distinct, local = unique_inverse(target)
        own, own_cables, _, own_down, _ = self._climbs(tables, distinct, distinct, top=True)
        node, at = top, length.copy()
        moving = node != target
        while moving.any():
            row, here = rows[moving], node[moving]
            goal, place = target[moving], local[moving]
            position = tables.level[here] + 1
            inside = position < own.shape[1]
            hit = np.zeros(len(row), dtype=bool)
            hit[inside] = own[place[inside], position[inside]] == here[inside]
            lower = np.empty(len(row), dtype=np.int64)
            cable = np.empty(len(row), dtype=np.int64)
            edge = np.empty(len(row), dtype=np.int64)
            lower[hit] = own[place[hit], position[hit] - 1]
            cable[hit] = own_cables[place[hit], position[hit] - 1]
            edge[hit] = own_down[place[hit], position[hit] - 1]
            miss = ~hit
            if miss.any():
                children = tables.down_child[here[miss]]
                first = _below(tables, children, goal[miss][:, None]).argmax(axis=1)
                lower[miss] = children[np.arange(len(first)), first]
                cable[miss] = tables.index[goal[miss]] % tables.down_bundle[here[miss], first]
                edge[miss] = tables.down_edge[here[miss], first]
            at[moving] += 1
            hops[row, at[moving]] = lower
            cables[row, at[moving] - 1] = cable
            edges[row, at[moving] - 1] = edge
            node[moving] = lower
            moving = node != target
        used = int(at.max(initial=0))
        return hops[:, :used + 1], cables[:, :used], edges[:, :used]

    def _climbs(self, tables: _Tables, source: np.ndarray, target: np.ndarray, *, top: bool = False):
        """:meth:`_climb` of many pairs: nodes (padded with -1), cables, edges up and the same edges down (numbers
        in ``tables.edges``) of each hop, and the last node of each climb."""
        node = source.copy()
        divisor = np.ones(len(source), dtype=np.int64)
        index = tables.index[target]
        most = int(tables.level.max(initial=-1)) + 1
        steps = np.full((len(node), most + 1), -1, dtype=np.int32)
        steps[:, 0] = node
        pins, ups, downs = (np.full((len(node), most), -1, dtype=np.int32) for _ in range(3))
        taken = 0
        moving = np.flatnonzero(tables.up_count[node] > 0 if top else ~_below(tables, node, target))
        while len(moving):
            here = node[moving]
            count = tables.up_count[here]
            if not top and (count == 0).any():
                stuck = moving[count == 0][0]
                self._climb(tables.nodes[source[stuck]], tables.nodes[target[stuck]],
                            int(tables.index[target[stuck]]), top=False)
            port = (index[moving] // divisor[moving]) % count
            parent = tables.up_parent[here, port]
            divisor[moving] *= count
            steps[moving, taken + 1], pins[moving, taken] = parent, tables.up_cable[here, port]
            ups[moving, taken], downs[moving, taken] = tables.up_edge[here, port], tables.down_of_up[here, port]
            node[moving] = parent
            taken += 1
            moving = moving[(tables.up_count[parent] > 0) if top else ~_below(tables, parent, target[moving])]
        return steps[:, :taken + 1], pins[:, :taken], ups[:, :taken], downs[:, :taken], node

    def _arrays(self) -> _Tables:
        """The port tables of :meth:`numbers`, :meth:`leads` and :meth:`routes_of`, built on first use."""
        if self._tables is None:
            self._tables = _Tables(self)
        return self._tables


class FabricRoutes(NamedTuple):
    """Routes of many pairs of nodes of a fabric (:meth:`UpDown.routes_of`), one row per pair."""

    nodes: list
    """The nodes `hops` numbers."""
    edges: list[tuple[Hashable, Hashable]]
    """The directed edges `hop_edges` numbers."""
    hops: np.ndarray
    """int32 (pairs, width + 1): number in `nodes` of each node of each route, padded with -1."""
    cables: np.ndarray
    """int32 (pairs, width): cable of each hop, padded with -1."""
    hop_edges: np.ndarray
    """int32 (pairs, width): number in `edges` of each hop, padded with -1."""


class _Tables:
    """An :class:`UpDown`'s ports as arrays: nodes numbered endpoints first, then switches in level order."""

    def __init__(self, updown: UpDown) -> None:
        endpoints = list(updown._index)
        switches = sorted(updown._level, key=updown._level.__getitem__)
        self.nodes = [*endpoints, *switches]
        self.ids = ids = {node: i for i, node in enumerate(self.nodes)}
        self.endpoints = len(endpoints)
        size = len(self.nodes)
        self.level = np.array([-1] * len(endpoints) + [updown._level[s] for s in switches], dtype=np.int64)
        self.index = np.zeros(size, dtype=np.int64)
        self.index[:len(endpoints)] = [updown._index[e] for e in endpoints]
        self.bit = np.full(size, -1, dtype=np.int64)
        self.bit[:len(endpoints)] = [updown._bit[e] for e in endpoints]
        up_width = max((len(updown._up.get(n, ())) for n in self.nodes), default=0)
        self.up_count = np.array([len(updown._up.get(n, ())) for n in self.nodes], dtype=np.int64)
        self.up_parent = np.full((size, max(up_width, 1)), -1, dtype=np.int64)
        self.up_cable = np.full((size, max(up_width, 1)), -1, dtype=np.int64)
        self.edges: list[tuple[Hashable, Hashable]] = []
        self.edge_ids: dict[tuple[Hashable, Hashable], int] = {}
        self.up_edge = np.full((size, max(up_width, 1)), -1, dtype=np.int64)
        self.down_of_up = np.full((size, max(up_width, 1)), -1, dtype=np.int64)
        numbers = self.edge_ids
        at, parent, cable, up, down = [], [], [], [], []
        for n, node in enumerate(self.nodes):
            for p, (above, pin) in enumerate(updown._up.get(node, ())):
                at.append(n * self.up_parent.shape[1] + p)
                parent.append(ids[above])
                cable.append(pin)
                up.append(numbers.setdefault((node, above), len(numbers)))
                down.append(numbers.setdefault((above, node), len(numbers)))
        for table, values in ((self.up_parent, parent), (self.up_cable, cable), (self.up_edge, up),
                              (self.down_of_up, down)):
            table.ravel()[at] = values
        down_width = max((len(updown._down[s]) for s in switches), default=0)
        self.down_child = np.full((size, max(down_width, 1)), -1, dtype=np.int64)
        self.down_bundle = np.ones((size, max(down_width, 1)), dtype=np.int64)
        self.down_edge = np.full((size, max(down_width, 1)), -1, dtype=np.int64)
        at, child, bundles, edge = [], [], [], []
        for s in switches:
            ports = updown._down[s]
            bundle: dict = {}
            for below, pin in ports:
                bundle[below] = max(bundle.get(below, 0), pin + 1)
            row = ids[s] * self.down_child.shape[1]
            for j, (below, _) in enumerate(ports):
                at.append(row + j)
                child.append(ids[below])
                bundles.append(bundle[below])
                edge.append(numbers.setdefault((s, below), len(numbers)))
        for table, values in ((self.down_child, child), (self.down_bundle, bundles), (self.down_edge, edge)):
            table.ravel()[at] = values
        self.edges.extend(list(numbers)[len(self.edges):])
        words = max(1, -(-len(updown._bit) // 64))
        self.reach = np.zeros((len(switches), words), dtype=np.uint64)
        for row, s in enumerate(switches):
            self.reach[row] = np.frombuffer(updown._reach.get(s, 0).to_bytes(8 * words, "little"), dtype="<u8")

    def _edge(self, u: Hashable, v: Hashable) -> int:
        """Number of the directed edge ``u -> v`` in :attr:`edges`, given on first sight."""
        number = self.edge_ids.get((u, v))
        if number is None:
            number = self.edge_ids[u, v] = len(self.edges)
            self.edges.append((u, v))
        return number


def _usual(counts) -> int:
    """The most common of `counts` (the larger on a tie; 0 for none)."""
    tally = Counter(counts)
    return max(tally, key=lambda count: (tally[count], count), default=0)


def _below(tables: _Tables, node: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Whether each `target` endpoint is `node` or reachable from it going down only (:meth:`UpDown._above`)."""
    node, target = np.broadcast_arrays(node, target)
    bit = tables.bit[target]
    row = node - tables.endpoints
    word = tables.reach[np.maximum(row, 0), bit >> 6]
    return (node == target) | ((row >= 0) & (((word >> (bit & 63).astype(np.uint64)) & np.uint64(1)) == 1))


def _padded(routes: list[tuple[tuple, tuple]], tables: _Tables) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Routes of nodes and cables as the padded arrays of :class:`FabricRoutes`."""
    hops, cables, edges = _blank(len(routes), max((len(cables) for _, cables in routes), default=0))
    for row, (nodes, pins) in enumerate(routes):
        hops[row, :len(nodes)] = [tables.ids[node] for node in nodes]
        cables[row, :len(pins)] = pins
        edges[row, :len(pins)] = [tables._edge(u, v) for u, v in zip(nodes, nodes[1:])]
    return hops, cables, edges


def _blank(count: int, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The padded arrays of :class:`FabricRoutes` for `count` routes of up to `width` hops, all -1: nodes,
    cables, edges."""
    return (np.full((count, width + 1), -1, dtype=np.int32), np.full((count, width), -1, dtype=np.int32),
            np.full((count, width), -1, dtype=np.int32))
