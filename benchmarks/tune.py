"""Speed of ``simnet tune`` at scale, and whether pruning by the closed forms ever changes its answer.

Run from the repository root::

    PYTHONPATH=. python benchmarks/tune.py                       # 256 GPUs, 1 KiB .. 1 GiB (x4), 3 runs
    PYTHONPATH=. python benchmarks/tune.py --runs 5 --sizes 1KiB..1GiB:x8
    PYTHONPATH=. python benchmarks/tune.py --workers 1,2         # the same, alternating 1 and 2 worker processes
    PYTHONPATH=. python benchmarks/tune.py --topology dgx_h100_ndr_32 --sizes 1MiB..1GiB:x32 --nccl --workers 1,2 --runs 1
    PYTHONPATH=. python benchmarks/tune.py --check-pruning       # every shipped topology, pruned vs not
    PYTHONPATH=. python benchmarks/tune.py --check-pruning --topologies dgx1,scenarios/torus_2d.yaml

Timing runs the command a user types, ``python -m simnet tune TOPOLOGY --sizes SIZES
--format csv --quiet``, each run in a fresh process, and prints per run the wall time
and the CPU time of the process and its workers, then their medians. The default topology is
``benchmarks/dgx_a100_256.yaml`` (32 DGX A100, 256 GPUs, rail-optimised leaf-spine). With
``--workers 1,2`` each run times the command with ``--workers 1`` and then ``--workers 2``, prints
the ratio of the medians, and fails if the two print different tables (``--nccl`` adds NCCL's
schedules).

``--check-pruning`` tunes each topology (a preset, or a scenario file: its topology
and ``network:`` block, as ``simnet tune SCENARIO``; default: every shipped topology
and scenario) twice in this process, with the default pruning factor and with
``prune_factor=inf`` (every candidate simulated), and prints
per topology the winners' largest ratio of model time to the best model time at
their size (pruning keeps a winner exactly when that ratio is within the factor)
and whether the two tuner tables agree; it exits with status 1 if any differ.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOPOLOGY = ROOT / "benchmarks" / "dgx_a100_256.yaml"


def time_tune(topology: str, sizes: str, runs: int, workers: list[int],
              nccl: bool = False) -> dict[int, list[tuple[float, float]]]:
    """Wall and CPU seconds of `runs` runs of ``simnet tune`` per worker count, each in a fresh process; exits
    if a run fails or two worker counts print different tables."""
    command = [sys.executable, "-m", "simnet", "tune", topology, "--sizes", sizes, "--format", "csv", "--quiet",
               *(["--nccl"] if nccl else [])]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    print("$", " ".join(command[1:]), "--workers", ",".join(map(str, workers)), flush=True)
    measured: dict[int, list[tuple[float, float]]] = {count: [] for count in workers}
    tables = set()
    for run in range(runs):
        for count in workers:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            began = time.perf_counter()
            result = subprocess.run([*command, "--workers", str(count)], capture_output=True, text=True, env=env,
                                    cwd=ROOT, check=False)
            wall = time.perf_counter() - began
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if result.returncode != 0:
                sys.exit(f"simnet tune failed: {result.stderr.strip()}")
            tables.add(result.stdout)
            if len(tables) > 1:
                sys.exit(f"simnet tune --workers {count} printed a different table")
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            measured[count].append((wall, cpu))
            print(f"run {run + 1}, {count} worker(s): wall {wall:.1f} s, cpu {cpu:.1f} s", flush=True)
    return measured


def _target(name: str):
    """The graph and ``network:`` block of a preset or topology file (default network) or a scenario file."""
    from simnet.scenario import build_topology, load_scenario, read_yaml
    from simnet.topology import find, load

    path = ROOT / name
    if path.suffix == ".yaml" and path.is_file():
        data = read_yaml(path)
        if isinstance(data, dict) and "collective" in data:
            scenario = load_scenario(path)
            return build_topology(scenario.topology), scenario.network.model_dump(mode="json", exclude_defaults=True)
    return load(find(name)), {}


def check_pruning(topologies: list[str], sizes: str) -> bool:
    """Tune each topology with and without pruning; True when every tuner table agrees."""
    from simnet.tune import PRUNE_FACTOR, tune, tuner_table
    from simnet.units import parse_size_range

    size_list = parse_size_range(sizes)
    agree = True
    print(f"{'topology':36s} {'ranks':>5s} {'simulated':>12s} {'winner/best model':>17s}  same winners")
    for name in topologies:
        graph, network = _target(name)
        everything = tune(graph, size_list, network=network, prune_factor=math.inf, channel_counts=(1, 2, 4, 8))
        pruned = tune(graph, size_list, network=network, channel_counts=(1, 2, 4, 8))
        ratio = 0.0
        for _, group in everything.groupby("size_bytes"):
            winner = group[group["sim_rank"] == 1]
            ratio = max(ratio, winner["predicted_s"].iloc[0] / group["predicted_s"].min())
        columns = ["from_bytes", "to_bytes", "choice", "simulated_s"]
        same = tuner_table(pruned)[columns].equals(tuner_table(everything)[columns])
        agree &= same
        kept = f"{int((~pruned['pruned']).sum())}/{len(pruned)}"
        print(f"{name:36s} {int(everything['ranks'].iloc[0]):5d} {kept:>12s} {ratio:17.3f}  "
              f"{'yes' if same else 'NO'}", flush=True)
    print(f"pruning factor {PRUNE_FACTOR}")
    return agree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topology", default=str(TOPOLOGY.relative_to(ROOT)), help="topology file or preset")
    parser.add_argument("--sizes", default="1KiB..1GiB:x4")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", default="1", help="comma-separated worker counts, timed alternately")
    parser.add_argument("--nccl", action="store_true", help="also tune NCCL's schedules")
    parser.add_argument("--check-pruning", action="store_true", help="compare pruned and unpruned tuning")
    parser.add_argument("--topologies", help="comma-separated presets for --check-pruning (default: all shipped)")
    args = parser.parse_args()
    if args.check_pruning:
        from simnet.topology import PRESETS

        names = args.topologies.split(",") if args.topologies else [
            *sorted(path.stem for path in PRESETS.glob("*.yaml")),
            *sorted(f"scenarios/{path.name}" for path in (ROOT / "scenarios").glob("*.yaml"))]
        sys.exit(0 if check_pruning(names, args.sizes) else 1)
    workers = [int(count) for count in args.workers.split(",")]
    measured = time_tune(args.topology, args.sizes, args.runs, workers, nccl=args.nccl)
    medians = {}
    for count, runs in measured.items():
        walls, cpus = zip(*runs)
        medians[count] = statistics.median(walls)
        print(f"{count} worker(s), median of {len(runs)}: wall {medians[count]:.1f} s, "
              f"cpu {statistics.median(cpus):.1f} s")
    for count in workers[1:]:
        print(f"{count} worker(s) / {workers[0]}: wall {medians[count] / medians[workers[0]]:.2f}x, same table")


if __name__ == "__main__":
    main()
