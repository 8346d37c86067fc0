"""How long :func:`simnet.schedule.check` takes to prove registry schedules, outside the unit tests.

Run from a directory outside the checkout, so that ``PYTHONPATH`` picks the tree measured::

    PYTHONPATH=/path/to/simnet python /path/to/simnet/benchmarks/check.py
    PYTHONPATH=/path/to/simnet python /path/to/simnet/benchmarks/check.py --size 1MiB --topology dgx_h100

Each schedule is built for the topology (NCCL's schedules with NCCL's channel count and the
``simple`` protocol) and checked once; the script prints its transfer count and the seconds
``check()`` took. ``check()`` executes the schedule symbolically and walks the dependencies of
every pair of transfers that touch one buffer cell, so its time grows with the transfers that
share cells, not only with their number.
"""

from __future__ import annotations

import argparse
import time

CASES = (
    ("ring", {"chunks": 4}),
    ("halving_doubling", {}),
    ("recursive_doubling", {}),
    ("blueconnect", {"factors": [8, 32]}),
    ("nccl_tree", None),
    ("nccl_ring", None),
)
"""Algorithms and their parameters (``None``: resolved for the network, as NCCL would, with ``protocol: simple``)."""


def main() -> None:
    from simnet import __file__ as simnet_file
    from simnet.algorithms import ALGORITHMS
    from simnet.network import Network
    from simnet.schedule import check
    from simnet.topology import load
    from simnet.units import parse_size

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topology", default="dgx_h100_ndr_32", help="preset or topology file")
    parser.add_argument("--size", default="16MiB", help="payload per rank")
    parser.add_argument("--cases", nargs="*", help="algorithm names (default: all of CASES)")
    args = parser.parse_args()
    network = Network(load(args.topology))
    size = parse_size(args.size)
    print(f"simnet from {simnet_file}; {args.topology} ({network.size} GPUs), {args.size}")
    print(f"{'schedule':20s} {'transfers':>10s} {'check_s':>8s}")
    for name, params in CASES:
        if args.cases and name not in args.cases:
            continue
        record = ALGORITHMS[name]
        resolved = record.resolved(network, size, {"protocol": "simple"} if params is None else params)
        schedule = record.build(network.size, size, **resolved)
        began = time.perf_counter()
        check(schedule)
        print(f"{name:20s} {len(schedule):10d} {time.perf_counter() - began:8.2f}", flush=True)


if __name__ == "__main__":
    main()
