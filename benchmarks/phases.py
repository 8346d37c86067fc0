"""Where the time of a ring all-reduce goes: topology, schedule, routes, simulation.

Run from the repository root::

    PYTHONPATH=. python benchmarks/phases.py --ranks 1024 --model maxmin
    PYTHONPATH=. python benchmarks/phases.py --runs 7 --compare ../old-checkout   # medians, tree beside tree

Prints the wall time of each phase of one run (64 MiB on ``switch(p)``, 12.5 GB/s and
1 µs per link) and the simulated time. ``routes`` computes the route of every distinct
pair of ranks as :func:`simnet.engine.simulate` would; ``simulate`` then finds them cached
in the network (and numbers them for its link model); ``setup`` is the part of ``simulate``
spent in :meth:`simnet.engine.Simulation.run` (the columns, routes and dependency arrays the
loop needs). ``schedule_peak_MB`` is the peak of memory ``tracemalloc`` traces while the
schedule is built once more, above what was traced before. With ``--runs N`` each time is the
median of N runs in one process. With ``--compare TREE ...`` the same command runs in a fresh
process on this tree and on each other checkout (its ``simnet/`` found through
``PYTHONPATH=TREE``), alternating, ``--rounds`` times, one line per run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path


def _phases(ranks: int, model: str, runs: int) -> str:
    from simnet.algorithms import ring_allreduce
    from simnet.engine import Simulation, _pair_routes, simulate
    from simnet.network import Network
    from simnet.topology import switch

    times: dict[str, list[float]] = {name: [] for name in ("topology", "schedule", "routes", "simulate", "setup")}
    run = Simulation.run

    def timed(self, *args, **kwargs):
        began = time.perf_counter()
        done = run(self, *args, **kwargs)
        times["setup"].append(time.perf_counter() - began)
        return done

    Simulation.run = timed
    for _ in range(runs):
        began = time.perf_counter()
        network = Network(switch(ranks, 12.5e9, 1e-6))
        times["topology"].append(time.perf_counter() - began)
        began = time.perf_counter()
        schedule = ring_allreduce(ranks, 64 * 2**20)
        times["schedule"].append(time.perf_counter() - began)
        began = time.perf_counter()
        _pair_routes(network, schedule.columns.src, schedule.columns.dst)
        times["routes"].append(time.perf_counter() - began)
        began = time.perf_counter()
        trace = simulate(network, schedule, model=model)
        times["simulate"].append(time.perf_counter() - began)
    Simulation.run = run
    del schedule
    tracemalloc.start()
    before, _ = tracemalloc.get_traced_memory()
    ring_allreduce(ranks, 64 * 2**20)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    median = {name: statistics.median(values) for name, values in times.items()}
    total = sum(value for name, value in median.items() if name != "setup")
    phases = "  ".join(f"{name} {seconds:.2f} s" for name, seconds in median.items())
    return (f"{phases}  total {total:.2f} s  schedule_peak_MB {(peak - before) / 1e6:.0f}"
            f"  simulated {trace.time_s:.10g} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ranks", type=int, default=1024)
    parser.add_argument("--model", choices=["maxmin", "fifo"], default="maxmin")
    parser.add_argument("--runs", type=int, default=1, help="runs per process; times are their medians")
    parser.add_argument("--compare", nargs="+", metavar="TREE", help="other checkouts to run beside this one")
    parser.add_argument("--rounds", type=int, default=3, help="processes per tree with --compare")
    args = parser.parse_args()
    if not args.compare:
        print(_phases(args.ranks, args.model, args.runs))
        return
    trees = [Path(__file__).resolve().parents[1]] + [Path(tree).resolve() for tree in args.compare]
    command = [sys.executable, __file__, "--ranks", str(args.ranks), "--model", args.model, "--runs", str(args.runs)]
    for _ in range(args.rounds):
        for tree in trees:
            out = subprocess.run(command, check=True, capture_output=True, text=True,
                                 env={**os.environ, "PYTHONPATH": str(tree)})
            print(f"{tree}: {out.stdout.strip()}", flush=True)


if __name__ == "__main__":
    main()
