"""How long the ``simnet`` command line takes to start, outside the unit tests.

Run from the repository root::

    PYTHONPATH=. python benchmarks/startup.py              # 7 runs of each command, medians
    PYTHONPATH=. python benchmarks/startup.py --runs 11
    PYTHONPATH=. python -X importtime -m simnet --help     # where the import time goes

Each command runs in a fresh interpreter (``python -m simnet ...``), as a user types
it; the script prints the median wall time per command and the slowest imports of
``simnet --help`` by ``-X importtime`` (cumulative microseconds).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = (
    ["--help"],
    ["run", "--help"],
    ["tune", "--help"],
    ["topo", "show", "dgx1"],
    ["algorithms"],
)


def median_wall_s(arguments: list[str], runs: int) -> float:
    """Median wall time of ``python -m simnet ARGUMENTS`` over `runs` fresh processes, seconds."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    walls = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-m", "simnet", *arguments], check=True, capture_output=True, env=env,
                       cwd=ROOT)
        walls.append(time.perf_counter() - began)
    return statistics.median(walls)


def slowest_imports(count: int = 8) -> list[tuple[int, str]]:
    """The `count` largest cumulative import times of ``simnet --help``, microseconds."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "simnet", "--help"], check=True,
                            capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=ROOT)
    found = []
    for line in result.stderr.splitlines():
        if line.startswith("import time:") and "|" in line and "cumulative" not in line:
            _, cumulative, name = line.split("|")
            found.append((int(cumulative), name.strip()))
    return sorted(found, reverse=True)[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    for arguments in COMMANDS:
        wall = median_wall_s(arguments, args.runs)
        print(f"simnet {' '.join(arguments):24s} median of {args.runs}: {wall:.3f} s", flush=True)
    print("slowest imports of `simnet --help` (cumulative):")
    for microseconds, name in slowest_imports():
        print(f"  {microseconds / 1000:8.1f} ms  {name}")


if __name__ == "__main__":
    main()
