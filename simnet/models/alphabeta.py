"""α and β of rank-to-rank messages read off a network: the :class:`~simnet.algorithms.registry.PairCosts` of closed forms.

A message of ``m`` bytes from rank ``s`` to rank ``d`` alone costs ``α + m β`` with
``α`` the latency of its route and ``β`` the inverse of its bottleneck bandwidth
(the engine's lone-transfer time, exactly). When several messages are sent at
once, a link crossed by ``k`` of them gives each ``1 / k`` of its bandwidth (fair
sharing; FIFO finishes the last one at the same time), so a message's effective
inverse bandwidth is ``max over its links of k / bandwidth = β s``.
"""

from __future__ import annotations

from collections.abc import Sequence

from simnet.network import Network

__all__ = ["NetworkCosts"]


class NetworkCosts:
    """α, β and link sharing of concurrent rank-to-rank messages on `network`.

    Parameters
    ----------
    network : Network
        Supplies routes, latencies and (effective) bandwidths.
    overhead_s : float or sequence of float, optional
        Software overhead α_sw of every message, seconds, or per sending rank (the
        engine's ``overhead_s`` times a straggler's slowdown): the engine issues a
        message that long after it is ready, so it adds to the message's α.

    Examples
    --------
    >>> from simnet.topology import switch
    >>> costs = NetworkCosts(Network(switch(4, 12.5e9, 1e-6)))
    >>> costs.pairs([(0, 1), (2, 1)])
    [(2e-06, 8e-11, 2.0), (2e-06, 8e-11, 2.0)]
    """

    def __init__(self, network: Network, *, overhead_s: float | Sequence[float] = 0.0) -> None:
        self.network = network
        self._overhead_s = ([float(overhead_s)] * network.size if isinstance(overhead_s, (int, float))
                            else [float(value) for value in overhead_s])
        self._pairs: dict[tuple[tuple[int, int], ...], list[tuple[float, float, float]]] = {}
        self._links: dict[tuple[tuple[int, int], ...], dict[int, int]] = {}

    def _links_of(self, key: tuple[tuple[int, int], ...]) -> dict[int, int]:
        """Link -> number of the messages of `key` crossing it (kept for the next call with the same pairs)."""
        found = self._links.get(key)
        if found is None:
            found = {}
            route = self.network.route
            for s, d in key:
                for link in route(s, d):
                    found[link] = found.get(link, 0) + 1
            self._links[key] = found
        return found

    def pairs(self, pairs: Sequence[tuple[int, int]]) -> list[tuple[float, float, float]]:
        """Per pair ``(α_s, β_s_per_byte, sharing)``: a message of ``m`` bytes takes ``α + m β sharing``.

        The result depends on the pairs only, so it is kept per set of pairs: the
        closed forms of one algorithm at many sizes (the tuner) ask the same sets.
        """
        key = tuple((s, d) for s, d in pairs)
        found = self._pairs.get(key)
        if found is not None:
            return list(found)
        network, overhead = self.network, self._overhead_s
        load = self._links_of(key)
        result = []
        for s, d in key:
            route = network.route(s, d)
            if not route:
                result.append((overhead[s], 0.0, 1.0))
                continue
            beta = 1.0 / network.route_bandwidth_Bps(s, d)
            effective = max(load[link] / network.bandwidth_Bps[link] for link in route)
            result.append((network.route_latency_s(s, d) + overhead[s], beta, effective / beta))
        self._pairs[key] = result
        return list(result)

    def step(self, pairs: Sequence[tuple[int, int]], message_bytes: float) -> tuple[float, float, float]:
        """``(α, β, sharing)`` of the slowest of concurrent messages of `message_bytes` (``(0, 0, 1)`` for none)."""
        costs = self.pairs(pairs)
        return max(costs, key=lambda c: c[0] + message_bytes * c[1] * c[2], default=(0.0, 0.0, 1.0))

    def load(self, traffic: Sequence[tuple[Sequence[tuple[int, int]], float]]) -> float:
        """Seconds the busiest link needs to carry `traffic`, a list of ``(pairs, bytes each pair sends)``."""
        carried: dict[int, float] = {}
        for pairs, nbytes in traffic:
            for link, count in self._links_of(tuple((s, d) for s, d in pairs)).items():
                total = carried.get(link, 0.0)
                for _ in range(count):
                    total += nbytes
                carried[link] = total
        bandwidth = self.network.bandwidth_Bps
        return max((nbytes / bandwidth[link] for link, nbytes in carried.items()), default=0.0)

    def pattern(self, pairs: Sequence[tuple[int, int]]) -> tuple[float, float]:
        """``(largest α, largest β · sharing)`` of concurrent messages of equal size."""
        costs = self.pairs(pairs)
        return max(c[0] for c in costs), max(c[1] * c[2] for c in costs)
