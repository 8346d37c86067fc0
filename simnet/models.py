"""Closed-form α-β cost models of collective algorithms.

Every model is a pure function of the number of ranks ``p``, the payload ``n``
(bytes), a per-message latency ``α`` (seconds) and an inverse bandwidth ``β``
(seconds per byte). :func:`predict` derives ``α`` and ``β`` from a network and
evaluates the model of a named algorithm, so that a simulation can be set beside
its closed form.
"""

from __future__ import annotations

import math
from types import MappingProxyType

from simnet.errors import SimnetError
from simnet.network import Network

__all__ = ["ring_allreduce_time", "ring_hop_alpha_beta", "predict", "MODELS"]


def ring_allreduce_time(
    nranks: int, size_bytes: int, alpha_s: float, beta_s_per_byte: float, *, chunks: int = 1
) -> float:
    """Time of ring all-reduce (reduce-scatter + all-gather), seconds.

    With ``L = 2 (p - 1)`` steps and messages of ``m = n / (p C)`` bytes
    (``C`` = ``chunks`` pipelined sub-chunks per segment)::

        T = max( L (α + m β) + (C - 1) m β ,   L C m β + α )

    The first term is the latency-bound pipeline (one sub-chunk crosses ``L`` hops,
    the other ``C - 1`` follow one occupancy ``m β`` behind); the second is the
    bandwidth-bound one (every link carries ``L C`` messages back to back, the last
    one arriving ``α`` later). For ``C = 1`` this is the textbook
    ``2 (p - 1) α + 2 (p - 1) / p · n β``.

    The payload is split in whole bytes, so ``m`` is the largest piece,
    ``ceil(ceil(n / p) / C)``; for ``C = 1`` the formula stays exact when ``p``
    does not divide ``n``, because the largest segment is on the critical path.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Payload per rank ``n``, bytes.
    alpha_s : float
        Latency of one ring hop, seconds.
    beta_s_per_byte : float
        Inverse bandwidth of one ring hop, seconds per byte.
    chunks : int, optional
        Pipelined sub-chunks per segment ``C``.

    References
    ----------
    Patarasuk, P. and Yuan, X. (2009). Bandwidth optimal all-reduce algorithms for
    clusters of workstations. J. Parallel Distrib. Comput. 69(2), 117-124.
    Thakur, R., Rabenseifner, R. and Gropp, W. (2005). Optimization of collective
    communication operations in MPICH. Int. J. High Perform. Comput. Appl. 19(1), 49-66.
    """
    steps = 2 * (nranks - 1)
    message = math.ceil(math.ceil(size_bytes / nranks) / chunks)
    occupancy = message * beta_s_per_byte
    latency_bound = steps * (alpha_s + occupancy) + (chunks - 1) * occupancy
    bandwidth_bound = steps * chunks * occupancy + alpha_s
    return max(latency_bound, bandwidth_bound)


def ring_hop_alpha_beta(network: Network, nranks: int, message_bytes: float) -> tuple[float, float]:
    """α and β of the slowest hop ``r -> r + 1`` of the ring over ranks ``0 .. p-1``.

    The slowest hop is the one with the largest ``α + m β`` for messages of
    ``message_bytes``; ``α`` is its route latency and ``β`` the inverse of its
    bottleneck bandwidth.

    Returns
    -------
    tuple of float
        ``(alpha_s, beta_s_per_byte)``.
    """
    hops = [
        (network.route_latency_s(r, (r + 1) % nranks), 1.0 / network.route_bandwidth_Bps(r, (r + 1) % nranks))
        for r in range(nranks)
    ]
    return max(hops, key=lambda ab: ab[0] + message_bytes * ab[1])


def _ring(network: Network, nranks: int, size_bytes: int, *, chunks: int = 1) -> float:
    message = math.ceil(math.ceil(size_bytes / nranks) / chunks)
    alpha, beta = ring_hop_alpha_beta(network, nranks, message)
    return ring_allreduce_time(nranks, size_bytes, alpha, beta, chunks=chunks)


MODELS = MappingProxyType({"ring": _ring})


def predict(algorithm: str, network: Network, nranks: int, size_bytes: int, **params) -> float:
    """Closed-form time of `algorithm` on `network`, seconds.

    Parameters
    ----------
    algorithm : str
        Name as in :data:`simnet.algorithms.ALGORITHMS`.
    network : Network
        Supplies α and β.
    nranks : int
        Ranks taking part.
    size_bytes : int
        Payload per rank, bytes.
    **params
        The algorithm's parameters (e.g. ``chunks``).
    """
    if algorithm not in MODELS:
        raise SimnetError(f"no closed-form model for algorithm {algorithm!r}")
    return MODELS[algorithm](network, nranks, size_bytes, **params)
