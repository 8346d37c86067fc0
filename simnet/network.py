"""Network: ranks, routes and directed links of a topology, and link-sharing models.

A :class:`Network` numbers the GPUs of a topology graph as ranks (in the order the
graph lists them; builders add GPUs hierarchy-major, node by node and GPU by GPU),
numbers its directed edges as links, and maps every ordered rank pair to a route:
a tuple of link indices (see :class:`simnet.topology.Router` for the rule).

A link-sharing model decides when transfers that share links finish. Models are
plain objects with no notion of time passing; the engine drives them:

``submit(now_s, transfer, route, nbytes)``
    a transfer is ready to send at ``now_s``;
``next_time_s()``
    the earliest instant at which some submitted transfer finishes (``inf`` if none);
``pop_finished(now_s)``
    the transfers that finish at ``now_s``, in transfer order; each also reports the
    instant its first byte entered the network through ``started_s``.

Every model gives a lone transfer of ``n`` bytes over route ``r`` exactly
``sum(latency_s[r]) + n / min(bandwidth_Bps[r])`` (cut-through).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable
from types import MappingProxyType

import networkx as nx
import numpy as np
import pandas as pd

from simnet.errors import SimnetError
from simnet.topology import Router, gpus, validate

__all__ = ["Network", "FifoLinks", "LINK_MODELS"]


class Network:
    """Ranks, routes and directed links of a validated topology.

    Parameters
    ----------
    graph : networkx.DiGraph
        Topology obeying :mod:`simnet.topology.contract`; it is validated here.

    Attributes
    ----------
    graph : networkx.DiGraph
        The topology.
    ranks : tuple
        GPU node of each rank.
    links : tuple of (node, node)
        Directed edge of each link index.
    bandwidth_Bps, latency_s : numpy.ndarray
        Per-link bandwidth (bytes/s) and latency (s).
    tiers : tuple of str
        Per-link tier.
    """

    def __init__(self, graph: nx.DiGraph) -> None:
        self.graph = validate(graph)
        self.ranks = tuple(gpus(graph))
        self.links = tuple(graph.edges)
        self._link_index = {edge: i for i, edge in enumerate(self.links)}
        self.bandwidth_Bps = np.array([graph.edges[e]["bandwidth_Bps"] for e in self.links], dtype=float)
        self.latency_s = np.array([graph.edges[e]["latency_s"] for e in self.links], dtype=float)
        self.tiers = tuple(graph.edges[e]["tier"] for e in self.links)
        self._router = Router(graph)
        self._routes: dict[tuple[int, int], tuple[int, ...]] = {}

    @property
    def name(self) -> str:
        """Name of the topology (``graph.graph["name"]``)."""
        return str(self.graph.graph.get("name", "topology"))

    @property
    def size(self) -> int:
        """Number of ranks."""
        return len(self.ranks)

    def link(self, u: Hashable, v: Hashable) -> int:
        """Index of the directed link ``u -> v``."""
        return self._link_index[(u, v)]

    def route(self, src: int, dst: int) -> tuple[int, ...]:
        """Links from rank `src` to rank `dst`, in order (empty when ``src == dst``)."""
        key = (src, dst)
        route = self._routes.get(key)
        if route is None:
            for rank in key:
                if not 0 <= rank < len(self.ranks):
                    raise SimnetError(f"rank {rank} does not exist; the network has {len(self.ranks)} ranks")
            nodes = self._router.path(self.ranks[src], self.ranks[dst])
            route = tuple(self._link_index[edge] for edge in zip(nodes, nodes[1:]))
            self._routes[key] = route
        return route

    def route_latency_s(self, src: int, dst: int) -> float:
        """Sum of link latencies from rank `src` to rank `dst`, seconds."""
        return float(sum(self.latency_s[i] for i in self.route(src, dst)))

    def route_bandwidth_Bps(self, src: int, dst: int) -> float:
        """Bottleneck bandwidth from rank `src` to rank `dst`, bytes/s (``inf`` for ``src == dst``)."""
        route = self.route(src, dst)
        return float(min(self.bandwidth_Bps[i] for i in route)) if route else math.inf

    def transfer_time_s(self, src: int, dst: int, nbytes: float) -> float:
        """Time of a lone transfer: ``sum(latency) + nbytes / min(bandwidth)``, seconds."""
        return self.route_latency_s(src, dst) + nbytes / self.route_bandwidth_Bps(src, dst)

    def links_frame(self) -> pd.DataFrame:
        """One row per directed link: ``link, src, dst, tier, bandwidth_Bps, latency_s``."""
        return pd.DataFrame(
            {
                "link": np.arange(len(self.links)),
                "src": [str(u) for u, _ in self.links],
                "dst": [str(v) for _, v in self.links],
                "tier": list(self.tiers),
                "bandwidth_Bps": self.bandwidth_Bps,
                "latency_s": self.latency_s,
            }
        )


class FifoLinks:
    """Each directed link carries one transfer at a time, in arrival order.

    A transfer reserves its whole route cut-through: link ``i`` of the route is busy
    for ``nbytes / min(bandwidth)`` starting ``sum(latency of links before i)`` after
    the transfer's start, and the transfer starts at the first instant at which that
    reservation collides with no earlier one. It finishes
    ``sum(latency) + nbytes / min(bandwidth)`` after its start. Transfers that are
    submitted at the same instant are served in the order they are submitted.

    Parameters
    ----------
    network : Network
        Links to serve.
    """

    def __init__(self, network: Network) -> None:
        self._bandwidth_Bps = network.bandwidth_Bps
        self._latency_s = network.latency_s
        self._free_s = np.zeros(len(network.links))
        self._finishing: list[tuple[float, int]] = []
        self.started_s: dict[int, float] = {}

    def submit(self, now_s: float, transfer: int, route: tuple[int, ...], nbytes: float) -> None:
        """Reserve `route` for `transfer`, which is ready at `now_s`."""
        start = now_s
        offset = 0.0
        offsets = []
        for link in route:
            offsets.append(offset)
            start = max(start, self._free_s[link] - offset)
            offset += self._latency_s[link]
        occupancy = nbytes / min(self._bandwidth_Bps[link] for link in route) if route else 0.0
        for link, link_offset in zip(route, offsets):
            self._free_s[link] = start + link_offset + occupancy
        self.started_s[transfer] = start
        heapq.heappush(self._finishing, (start + offset + occupancy, transfer))

    def next_time_s(self) -> float:
        """Earliest finishing time of a submitted transfer, ``inf`` if none."""
        return self._finishing[0][0] if self._finishing else math.inf

    def pop_finished(self, now_s: float) -> list[int]:
        """Transfers finishing at or before `now_s`, in (time, transfer) order."""
        done = []
        while self._finishing and self._finishing[0][0] <= now_s:
            done.append(heapq.heappop(self._finishing)[1])
        return done


LINK_MODELS = MappingProxyType({"fifo": FifoLinks})
