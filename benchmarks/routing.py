"""How fast :meth:`simnet.network.Network.route` finds routes it has not seen, outside the unit tests.

Run from the repository root::

    PYTHONPATH=. python benchmarks/routing.py                     # both topologies, 3 runs each, medians
    PYTHONPATH=. python benchmarks/routing.py --runs 5 --pairs 100000

Topologies: ``switch(100000)`` (the critical-path benchmark's 100 000 ranks; four peers per
rank, like BlueConnect's rings there) and 64 DGX H100 with rails on a k = 16 fat-tree (PXN on),
each with ``--pairs`` random pairs; and every ordered pair of the 512 GPUs of 64 DGX A100 on a
k = 16 fat-tree (the routes of an all-to-all, as ``alltoall_512`` of ``benchmarks/run.py`` finds them).
Each run builds a fresh :class:`~simnet.network.Network` (routes are cached per network) and
routes the same random pairs (a pair drawn twice is found in the cache), in order of source as
the critical-path model does, one by one (``route``) and, on other fresh networks, all at once
as tuples (``routes``) and as one table (``table``: :meth:`~simnet.network.Network.route_table`, as
``simulate`` asks); the script prints the median time and routes per second of each, and whether all
three found the same routes. ``--quick`` routes 1000 pairs once (the all-to-all on 4 servers), a smoke test.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _pairs(size: int, count: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    src = np.sort(rng.integers(0, size, count))
    dst = (src + rng.integers(1, size, count)) % size
    return list(zip(src.tolist(), dst.tolist()))


def _every_pair(size: int, count: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    return [(src, dst) for src in range(size) for dst in range(size) if src != dst]


def main() -> None:
    from simnet.network import Network
    from simnet.topology import cluster, switch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=400_000, help="random pairs per topology")
    parser.add_argument("--quick", action="store_true", help="1000 pairs, one run")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.pairs = 1, 1000
    servers, k = (4, 8) if args.quick else (64, 16)
    graphs = {
        "switch(100000)": (lambda: switch(100_000, 12.5e9, 1e-6), _pairs),
        "64 x dgx_h100, fat_tree k=16, pxn": (lambda: cluster(
            "dgx_h100", 64, fabric="fat_tree", fabric_params={"k": 16, "bandwidth_Bps": 50e9, "latency_s": 1e-6},
            pxn=True), _pairs),
        f"{servers} x dgx_a100, fat_tree k={k}, all": (lambda: cluster(
            "dgx_a100", servers, fabric="fat_tree", fabric_params={"k": k, "bandwidth_Bps": 25e9, "latency_s": 1e-6}),
            _every_pair),
    }
    for name, (build, chosen) in graphs.items():
        graph = build()
        times: dict[str, list[float]] = {"route": [], "routes": [], "table": []}
        for _ in range(args.runs):
            network = Network(graph)
            pairs = chosen(network.size, args.pairs, np.random.default_rng(0))
            began = time.perf_counter()
            one_by_one = [network.route(src, dst) for src, dst in pairs]
            times["route"].append(time.perf_counter() - began)
            network = Network(graph)
            src, dst = np.array(pairs, dtype=np.int64).T
            began = time.perf_counter()
            at_once = network.routes(src, dst)
            times["routes"].append(time.perf_counter() - began)
            network = Network(graph)
            began = time.perf_counter()
            table = network.route_table(src, dst)
            times["table"].append(time.perf_counter() - began)
        for way, taken in times.items():
            median = statistics.median(taken)
            print(f"{name:36s} {len(pairs)} routes, {way:6s}: median {median:.2f} s ({len(pairs) / median:,.0f} "
                  f"routes/s)")
        print(f"{name:36s} same routes all three ways: {one_by_one == at_once == table.tuples()}")


if __name__ == "__main__":
    main()
