"""Every published nccl-tests curve of ``tests/validation/nccl_curves.py``, simulated point by point.

Run from the repository root::

    PYTHONPATH=. python benchmarks/nccl_curves.py            # simulate all, list what moved vs the table
    PYTHONPATH=. python benchmarks/nccl_curves.py --write    # and rewrite tests/validation/nccl_curves.csv
    PYTHONPATH=. python benchmarks/nccl_curves.py --write --markdown   # and print docs/validation.md's section

``tests/validation/test_nccl_curves.py`` re-simulates the points of the committed table
that fit its budget and checks the bars on the table; this script is how the other
points (large rings on several servers, up to a million transfers) are re-simulated
after a change. It prints, per curve, the wall time and the points whose simulated or
modelled time moved by more than 1e-9 relative, then the total wall time.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from tests.validation import nccl_curves
from tests.validation.tables import nccl_curves_markdown


def main(argv: list[str]) -> int:
    """Simulate, compare with the committed table, optionally rewrite it and print the Markdown."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite tests/validation/nccl_curves.csv")
    parser.add_argument("--markdown", action="store_true", help="print the docs/validation.md section")
    args = parser.parse_args(argv)
    simulator = nccl_curves.CurveSimulator()
    start = time.perf_counter()
    frames = []
    for curve in nccl_curves.CURVES:
        began = time.perf_counter()
        frames.append(nccl_curves.curve_rows([curve], simulator))
        print(f"{curve.key:34s} {len(curve.points):3d} points {time.perf_counter() - began:8.1f} s", flush=True)
    rows = nccl_curves.curve_rows(nccl_curves.CURVES, simulator)
    total = time.perf_counter() - start
    moved = _moved(rows)
    print(f"{len(rows)} points, {rows['transfers'].sum():,} transfers, {total:.1f} s; "
          f"{len(moved)} moved against {nccl_curves.TABLE.name}")
    for line in moved:
        print("  " + line)
    if args.write:
        rows.to_csv(nccl_curves.TABLE, index=False)
        print(f"wrote {nccl_curves.TABLE}")
    if args.markdown:
        print(nccl_curves_markdown(rows))
    return 0


def _moved(rows) -> list[str]:
    """Points whose simnet or model time differs from the committed table (or that it lacks)."""
    if not nccl_curves.TABLE.exists():
        return ["(no committed table)"]
    table = nccl_curves.read_table().set_index(["curve", "size_bytes"])
    out = []
    for record in rows.to_dict("records"):
        key = (record["curve"], record["size_bytes"])
        if key not in table.index:
            out.append(f"{key}: new")
            continue
        old = table.loc[key]
        for column in ("simnet_us", "model_GBps"):
            if not np.isclose(record[column], old[column], rtol=1e-9, atol=0.0):
                out.append(f"{key} {column}: {old[column]!r} -> {record[column]!r}")
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
