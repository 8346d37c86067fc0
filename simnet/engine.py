"""The discrete-event engine: run a schedule over a network and record a trace.

:func:`simulate` is the only entry point. It runs one SimPy process that keeps the
schedule's dependency bookkeeping and hands every transfer, the instant its
dependencies have finished, to a link-sharing model from :mod:`simnet.network`.
The process sleeps until the model's next finishing instant, retires what has
finished, releases the transfers that were waiting for it and repeats. Transfers
released at the same instant are submitted in schedule order, so a run is
deterministic bit for bit. The engine knows neither YAML nor plots, and adding an
algorithm never touches it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import simpy

from simnet.errors import SimnetError
from simnet.network import LINK_MODELS, Network
from simnet.schedule import Schedule

__all__ = ["Trace", "simulate"]


@dataclass(frozen=True)
class Trace:
    """What happened in one simulated run; times are simulated seconds.

    Attributes
    ----------
    schedule : Schedule
        The schedule that ran.
    network : Network
        The network it ran on.
    model : str
        Link-sharing model (``"fifo"``).
    ready_s, start_s, end_s : numpy.ndarray
        Per transfer: when its dependencies had finished, when its first byte
        entered the network, and when its last byte arrived.
    """

    schedule: Schedule
    network: Network
    model: str
    ready_s: np.ndarray
    start_s: np.ndarray
    end_s: np.ndarray

    @property
    def time_s(self) -> float:
        """Completion time of the collective (last transfer's end), seconds."""
        return float(self.end_s.max()) if len(self.end_s) else 0.0

    def transfers(self) -> pd.DataFrame:
        """One row per transfer.

        Columns: ``transfer, src, dst, chunk, nbytes, op, stage, hops, ready_s,
        start_s, end_s, duration_s``; ``chunk`` is the first chunk carried.
        """
        transfers = self.schedule.transfers
        return pd.DataFrame(
            {
                "transfer": np.arange(len(transfers)),
                "src": [t.src for t in transfers],
                "dst": [t.dst for t in transfers],
                "chunk": [t.chunks[0] for t in transfers],
                "nbytes": [t.nbytes for t in transfers],
                "op": [t.op for t in transfers],
                "stage": [t.stage for t in transfers],
                "hops": [len(self.network.route(t.src, t.dst)) for t in transfers],
                "ready_s": self.ready_s,
                "start_s": self.start_s,
                "end_s": self.end_s,
                "duration_s": self.end_s - self.ready_s,
            }
        )


def simulate(network: Network, schedule: Schedule, *, model: str = "fifo") -> Trace:
    """Run `schedule` on `network` and return its :class:`Trace`.

    Parameters
    ----------
    network : Network
        Where the ranks live; must have at least ``schedule.nranks`` ranks
        (schedule rank ``i`` runs on network rank ``i``).
    schedule : Schedule
        What to send.
    model : {"fifo"}, optional
        Link-sharing model (see :mod:`simnet.network`).

    Returns
    -------
    Trace
        Per-transfer times; ``trace.time_s`` is the collective's completion time.
    """
    if model not in LINK_MODELS:
        raise SimnetError(f"network model must be one of {sorted(LINK_MODELS)}, got {model!r}", path="network.model")
    if schedule.nranks > network.size:
        raise SimnetError(
            f"the schedule needs {schedule.nranks} ranks but the network has only {network.size} GPUs"
        )
    transfers = schedule.transfers
    count = len(transfers)
    links = LINK_MODELS[model](network)
    routes = [network.route(t.src, t.dst) for t in transfers]
    waiting = [len(t.deps) for t in transfers]
    dependents: list[list[int]] = [[] for _ in range(count)]
    for index, t in enumerate(transfers):
        for d in t.deps:
            dependents[d].append(index)
    ready_s = np.full(count, math.nan)
    end_s = np.full(count, math.nan)

    env = simpy.Environment()

    def run():
        released = [i for i in range(count) if waiting[i] == 0]
        now = 0.0
        while True:
            for i in sorted(released):
                ready_s[i] = now
                links.submit(now, i, routes[i], transfers[i].nbytes)
            released = []
            now = links.next_time_s()
            if now == math.inf:
                return
            yield env.timeout(max(0.0, now - env.now))
            for i in links.pop_finished(now):
                end_s[i] = now
                for child in dependents[i]:
                    waiting[child] -= 1
                    if waiting[child] == 0:
                        released.append(child)

    env.process(run())
    env.run()
    start_s = np.array([links.started_s[i] for i in range(count)], dtype=float)
    return Trace(schedule=schedule, network=network, model=model, ready_s=ready_s, start_s=start_s, end_s=end_s)
