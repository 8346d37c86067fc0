"""Cost models beside the simulation: closed forms of the registered algorithms, and the critical path of any schedule.

The closed form of an algorithm lives with its builder (its record's ``model``, in
:mod:`simnet.algorithms`), written against α and β of rank pairs;
:func:`predict` evaluates it on a network, reading α and β off the network with
:class:`~simnet.models.alphabeta.NetworkCosts` (per step, including how many
concurrent messages share a link). :func:`critical_path_time` models *any*
schedule without a hand formula: the longest path through its transfers when each
costs ``α + n β`` on its own route, i.e. without contention
(:mod:`simnet.models.critical_path`).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

from simnet.algorithms import ALGORITHMS
from simnet.errors import SimnetError
from simnet.models.alphabeta import NetworkCosts
from simnet.models.critical_path import critical_path_finish_s, critical_path_time
from simnet.network import Network

__all__ = ["predict", "NetworkCosts", "critical_path_finish_s", "critical_path_time"]


def predict(algorithm: str, network: Network, nranks: int, size_bytes: int, *,
            overhead_s: float | Sequence[float] = 0.0, **params) -> float:
    """Closed-form time of `algorithm` on `network`, seconds.

    Parameters
    ----------
    algorithm : str
        Name in :data:`simnet.algorithms.ALGORITHMS`.
    network : Network
        Supplies α and β (see :class:`~simnet.models.alphabeta.NetworkCosts`).
    nranks : int
        Ranks taking part.
    size_bytes : int
        Payload per rank, bytes.
    overhead_s : float or sequence of float, optional
        Software overhead of every message, or per sending rank, seconds: it adds
        to every message's α, as the engine issues a message that long after it
        is ready (see :class:`~simnet.models.alphabeta.NetworkCosts`).
    **params
        The algorithm's parameters (e.g. ``chunks``, ``factors``, ``channels``;
        every parameter the builder takes changes the closed form accordingly) and
        ``gamma_s_per_byte``. What the algorithm reads off `network` and was not
        given is decided first, by the one call a scenario run decides it with
        (:meth:`~simnet.algorithms.registry.Algorithm.on_network`): the topology's
        defaults (``factors`` of BlueConnect and ``hierarchical_ring``,
        ``gpus_per_node`` of ``sparse_ring_ring``), then what a library decides at
        run time (``protocol: auto``, NCCL's algorithm, protocol and channels for
        ``nccl``). With `nranks` below the network's ranks, they are decided on
        the communicator of its first `nranks` ranks.

    Raises
    ------
    SimnetError
        For an unknown algorithm or one without a closed form (saying why).
    """
    record = ALGORITHMS[algorithm]
    if record.model is None:
        raise SimnetError(f"{algorithm} has no closed form: {record.no_model}", path="algorithm")
    if not isinstance(nranks, numbers.Integral) or isinstance(nranks, bool) or not 2 <= nranks <= network.size:
        raise SimnetError(f"must be an integer from 2 to the network's {network.size} ranks, got {nranks!r}",
                          path="nranks")
    if not isinstance(size_bytes, numbers.Integral) or isinstance(size_bytes, bool) or size_bytes < 0:
        hint = f" (simnet.units.parse_size({size_bytes!r}) converts a unit string)" if isinstance(size_bytes, str) else ""
        raise SimnetError(f"must be a whole number of bytes ≥ 0{hint}, got {size_bytes!r}", path="size_bytes")
    gamma = params.pop("gamma_s_per_byte", 0.0)
    params = record.on_network(network, size_bytes, params, ranks=None if nranks == network.size else range(nranks))
    return record.predict(NetworkCosts(network, overhead_s=overhead_s), nranks, size_bytes, gamma_s_per_byte=gamma,
                          **params)
