"""Speed of the critical-path model on schedules of about a million transfers.

Run: ``PYTHONPATH=. python benchmarks/critical_path.py``; prints transfers, seconds
to build the schedule and seconds for :func:`simnet.models.critical_path_time`
(best of three).
"""

import time

from simnet.algorithms import ALGORITHMS
from simnet.models import critical_path_time
from simnet.network import Network
from simnet.topology import switch


def main() -> None:
    network = Network(switch(64, 12.5e9, 1e-6))
    cases = [
        ("ring", {"chunks": 64, "channels": 2}),
        ("blueconnect", {"factors": [8, 8], "chunks": 512}),
    ]
    for name, params in cases:
        began = time.perf_counter()
        schedule = ALGORITHMS[name].builder(64, 2**30, **params)
        built = time.perf_counter() - began
        best = float("inf")
        for _ in range(3):
            began = time.perf_counter()
            critical_path_time(network, schedule)
            best = min(best, time.perf_counter() - began)
        print(f"{name} {params}: {len(schedule)} transfers, build {built:.2f} s, critical path {best:.3f} s")


if __name__ == "__main__":
    main()
