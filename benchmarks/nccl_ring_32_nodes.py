"""NCCL's ring on 32 DGX H100 (256 GPUs) on a rail-optimised NDR leaf-spine, against NCCL's own model.

Run from the repository root::

    PYTHONPATH=. python benchmarks/nccl_ring_32_nodes.py                  # 32 servers, 8 GiB (about 4 M transfers)
    PYTHONPATH=. python benchmarks/nccl_ring_32_nodes.py --nodes 8 --size 2GiB   # 8 servers, 2 GiB

The machine is :func:`simnet.calibration.calibrated_cluster` with ``pxn=True`` (8
leaves, one per rail, 4 spines, NDR at NCCL's 96 % of 400 Gb/s, NVLink at
``SM90_NVLINK_BW``, the template's NVLS-capable NVSwitches); the algorithm is
``nccl_ring`` with ``protocol: auto`` and the channels of NCCL's launch configuration
(resolved per size by the registry record). It prints the parameters given and the
values resolved for the size, the transfers, simnet's time
and busbw, NCCL's modelled time and busbw (``ncclTopoGetAlgoTime``, Ring), their
ratio, and the wall time of the simulation.
"""

from __future__ import annotations

import argparse
import sys

from simnet.units import format_size, parse_size
from tests.validation.nccl_curves import ring_against_model


def main(argv: list[str]) -> int:
    """Print the comparison for the given servers and size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=32)
    parser.add_argument("--size", default="8GiB", help="payload per GPU with its unit (default 8GiB)")
    parser.add_argument("--version", default="2.30.7", help="NCCL release of the constants")
    args = parser.parse_args(argv)
    size = int(parse_size(args.size))
    result = ring_against_model(args.nodes, size, args.version)
    given = ", ".join(f"{k}={v}" for k, v in sorted(result["params"].items()))
    resolved = ", ".join(f"{k}={v}" for k, v in sorted(result["resolved"].items()) if result["params"].get(k) != v)
    print(f"{args.nodes} x DGX H100, {args.nodes * 8} GPUs, nccl_ring at {format_size(size)} ({given}; "
          f"resolved: {resolved})")
    print(f"transfers {result['transfers']:,}; simulated in {result['wall_s']:.1f} s")
    print(f"simnet      {result['time_s'] * 1e3:10.3f} ms  busbw {result['busbw_GBps']:7.1f} GB/s")
    print(f"NCCL model  {result['model_time_s'] * 1e3:10.3f} ms  busbw {result['model_busbw_GBps']:7.1f} GB/s")
    print(f"simnet / NCCL model busbw: {result['busbw_GBps'] / result['model_busbw_GBps'] - 1:+.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
