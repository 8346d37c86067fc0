"""Peak memory and build time of one sparse all-reduce schedule (a benchmark, not a test).

Usage::

    PYTHONPATH=. /usr/bin/time -v python benchmarks/sparse_memory.py ALGORITHM DIMENSION RANKS DENSITY

e.g. ``sparse_ring_ring 128M 64 1/128``; prints transfers, bytes on the wire, build
time and peak resident memory (``ru_maxrss``).
"""

import resource
import sys
import time

from simnet.algorithms import ALGORITHMS
from simnet.payloads import SparsePayload
from simnet.units import parse_count, parse_fraction


def main(algorithm: str, dimension: str, ranks: str, density: str) -> None:
    payload = SparsePayload(dimension=parse_count(dimension), density=parse_fraction(density), seed=1)
    start = time.perf_counter()
    schedule = ALGORITHMS[algorithm].builder(int(ranks), payload.size_bytes, payload=payload)
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(
        f"{algorithm} N={dimension} p={ranks} d={density}: {len(schedule.transfers)} transfers, "
        f"{schedule.total_bytes / 1e9:.3f} GB on the wire, built in {elapsed:.1f} s, peak RSS {peak:.2f} GiB"
    )


if __name__ == "__main__":
    main(*sys.argv[1:])
