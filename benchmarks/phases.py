"""Where the time of a ring all-reduce goes: topology, schedule, routes, simulation.

Run from the repository root::

    PYTHONPATH=. python benchmarks/phases.py --ranks 1024 --model maxmin

Prints the wall time of each phase of one run (64 MiB on ``switch(p)``, 12.5 GB/s and
1 µs per link) and the simulated time. ``routes`` computes the route of every distinct
pair of ranks as :func:`simnet.engine.simulate` would; ``simulate`` then finds them cached
in the network (and numbers them for its link model). Point
``PYTHONPATH`` at another checkout to time that code on the same machine.
"""

from __future__ import annotations

import argparse
import time

from simnet.algorithms import ring_allreduce
from simnet.engine import _pair_routes, simulate
from simnet.network import Network
from simnet.topology import switch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ranks", type=int, default=1024)
    parser.add_argument("--model", choices=["maxmin", "fifo"], default="maxmin")
    args = parser.parse_args()
    times = {}
    began = time.perf_counter()
    network = Network(switch(args.ranks, 12.5e9, 1e-6))
    times["topology"] = time.perf_counter() - began
    began = time.perf_counter()
    schedule = ring_allreduce(args.ranks, 64 * 2**20)
    times["schedule"] = time.perf_counter() - began
    began = time.perf_counter()
    _pair_routes(network, schedule.columns.src, schedule.columns.dst)
    times["routes"] = time.perf_counter() - began
    began = time.perf_counter()
    trace = simulate(network, schedule, model=args.model)
    times["simulate"] = time.perf_counter() - began
    phases = "  ".join(f"{name} {seconds:.2f} s" for name, seconds in times.items())
    print(f"{phases}  total {sum(times.values()):.2f} s  simulated {trace.time_s:.10g} s")


if __name__ == "__main__":
    main()
