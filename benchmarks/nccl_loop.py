"""NCCL's schedules in the compiled loop: time, queued transfers, and the sort the loop depends on.

Run from the repository root (in each checkout to compare, as ``benchmarks/routing.py``)::

    PYTHONPATH=. python benchmarks/nccl_loop.py                # the three schedules and the sort
    PYTHONPATH=. python benchmarks/nccl_loop.py --fills        # also: components the Python model fills
    PYTHONPATH=. python benchmarks/nccl_loop.py --quick        # smoke test: 4 servers, 1 MiB, 4096 flows

On the preset ``dgx_h100_ndr_32`` (32 DGX H100, NDR rails), one line per schedule: NVLSTree and NCCL's tree
(Simple, NCCL's 16 channels) at 1 GiB, NCCL's ring (Simple, 16 channels) at 8 GiB; its transfers, how many
queued for their connection, the simulated time, the wall time of building the schedule (a second build in
the process) and that of :func:`simnet.engine.simulate` (the median of ``--runs`` calls after a first one in
the same process, which loads the compiled loop).

``sort``: sorting the order in which a 4-ary event heap hands back 131 072 flows due at one time (as an
instant of NVLSTree at 1 GiB collects them) with Numba's ``ndarray.sort()`` and with the loop's own
``simnet.kernel._sort``.

``--fills``: how many components the Python model fills (rather than recalls) in NCCL's ring at 64 MiB on
the same preset, and in how many re-shares it looked them up.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from simnet.units import format_size

GiB = 2**30
SCHEDULES = (("nvls_tree", GiB, {}), ("nccl_tree", GiB, {"protocol": "simple"}),
             ("nccl_ring", 8 * GiB, {"protocol": "simple"}))
HEAP_FLOWS = 131_072


def _network(quick: bool):
    """The preset ``dgx_h100_ndr_32``, or with `quick` 4 DGX H100 on one switch of 48 GB/s and 1 µs."""
    from simnet.network import Network
    from simnet.topology import cluster, load

    if quick:
        return Network(cluster("dgx_h100", 4, fabric="switch", fabric_params={"bandwidth_Bps": 48e9,
                                                                               "latency_s": 1e-6}))
    return Network(load("dgx_h100_ndr_32"))


def _schedules(runs: int, quick: bool) -> None:
    from simnet.algorithms import ALGORITHMS
    from simnet.engine import simulate

    network = _network(quick)
    for name, size, params in SCHEDULES:
        size = 2**20 if quick else size
        record = ALGORITHMS[name]
        resolved = record.resolved(network, size, params)
        record.build(network.size, size, **resolved)
        began = time.perf_counter()
        schedule = record.build(network.size, size, **resolved)
        build_s = time.perf_counter() - began
        trace = simulate(network, schedule)
        walls = []
        for _ in range(runs):
            began = time.perf_counter()
            trace = simulate(network, schedule)
            walls.append(time.perf_counter() - began)
        queued = int((trace.blocked_by >= 0).sum())
        print(f"{name:10s} {format_size(size)}  transfers {len(schedule):>9,}  queued {queued:>9,}  "
              f"time {trace.time_s * 1e3:.6f} ms  build {build_s:5.2f} s  simulate {statistics.median(walls):6.2f} s",
              flush=True)


def _sort(flows: int) -> None:
    from numba import njit

    from simnet import kernel

    @njit
    def popped(count):
        heap_flow, heap_time = np.zeros(count, np.int32), np.zeros(count)
        place = np.full(count, -1, np.int32)
        size = 0
        for flow in range(count):
            size = kernel._schedule(heap_flow, heap_time, place, size, flow, 1.0)
        order = np.empty(count, np.int32)
        for position in range(count - 1, -1, -1):
            order[position] = heap_flow[0]
            size = kernel._unschedule(heap_flow, heap_time, place, size)
        return order

    @njit
    def numbas(values):
        values.sort()

    @njit
    def loops(values):
        kernel._sort(values, 0, len(values))

    order = popped(flows)
    for label, sort in (("ndarray.sort()", numbas), ("simnet.kernel._sort", loops)):
        sort(order[:64].copy())
        values = order.copy()
        began = time.perf_counter()
        sort(values)
        wall = time.perf_counter() - began
        assert (values == np.arange(flows)).all()
        print(f"sort {flows:,} flows in heap order  {label:20s} {wall * 1e3:9.2f} ms", flush=True)


def _fills(quick: bool) -> None:
    import simnet.links as links
    from simnet.algorithms import ALGORITHMS
    from simnet.engine import simulate

    counts = {"fills": 0, "reshares": 0}
    fill, reshare = links.MaxMinLinks._fill, links.MaxMinLinks._reshare

    def counted_fill(self, *args):
        counts["fills"] += 1
        return fill(self, *args)

    def counted_reshare(self, *args):
        counts["reshares"] += 1
        return reshare(self, *args)

    links.MaxMinLinks._fill, links.MaxMinLinks._reshare = counted_fill, counted_reshare
    network = _network(quick)
    record, size = ALGORITHMS["nccl_ring"], 2**20 if quick else 64 * 2**20
    schedule = record.build(network.size, size, **record.resolved(network, size, {"protocol": "simple"}))
    simulate(network, schedule, compiled=False)
    print(f"nccl_ring {format_size(size)} in the Python model: transfers {len(schedule):,}, "
          f"re-shares {counts['reshares']:,}, components filled {counts['fills']:,}", flush=True)


def main(argv: list[str]) -> int:
    """Print the lines described in the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="simulations timed per schedule (median)")
    parser.add_argument("--fills", action="store_true", help="also count the Python model's fills (slow)")
    parser.add_argument("--quick", action="store_true", help="4 servers, 1 MiB schedules, 4096 flows to sort, one run")
    args = parser.parse_args(argv)
    _schedules(1 if args.quick else args.runs, args.quick)
    _sort(4096 if args.quick else HEAP_FLOWS)
    if args.fills:
        _fills(args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
