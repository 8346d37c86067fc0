"""Speed of simnet on a fixed set of cases, and of SimGrid SMPI on the same ring runs.

Run from the repository root::

    PYTHONPATH=. python benchmarks/run.py            # every case, SimGrid if installed
    PYTHONPATH=. python benchmarks/run.py --quick    # small sizes, one run each (smoke test)
    PYTHONPATH=. python benchmarks/run.py --cases ring_1024_maxmin --no-simgrid
    PYTHONPATH=. python benchmarks/run.py --compare ../old-checkout   # also the simnet of another tree

With ``--compare TREE`` every case also runs on the simnet package of another
checkout (its ``simnet/`` found through ``PYTHONPATH=TREE``), alternating with this
one case by case, so that both are measured in the same run and under the same
load; a ``ratio`` line gives this tree's ``wall_s`` and ``sim_s`` over the other's.

Each case runs in a subprocess of its own (a clean peak RSS), each run of it after a full garbage
collection (so that what one run left in reference cycles is not freed, or kept, inside the next one's
timing), and prints, per case:
``wall_s`` (median over the runs: topology, Network, schedule and simulation or
model, everything from the inputs to the result), ``sim_s`` (median time of
:func:`simnet.engine.simulate` or of the critical-path model alone; a case of one run also pays there
what the process does once, such as importing the compiled loop and loading its machine code from Numba's
cache, which the median of three runs leaves out),
``transfers/s`` (transfers / ``sim_s``), ``vs_simpy`` (that rate over the rate of a
bare SimPy loop of ``env.timeout`` events measured in the same run: the ceiling of
a SimPy engine handling one event per transfer), ``rss_MB`` (peak resident set of
the case's process) and the simulated time.

With ``smpirun`` on PATH, the ring cases under ``maxmin`` also run in SimGrid 3.32
SMPI (``smpi/allreduce:lr``, the platform exported by
:func:`simnet.simgrid.to_simgrid_platform`, flags of :mod:`simnet.smpi`:
correction factors off, shared malloc): ``smpi_wall_s`` (one run), the wall-time
ratio SMPI / simnet, and the relative difference between SMPI's simulated time and
simnet's on the same program (:func:`simnet.smpi.as_mpi`: 16-byte envelopes,
blocking sends).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MIB = 2**20
BANDWIDTH_Bps = 12.5e9
LATENCY_S = 1e-6

CASES = {
    "ring_256_fifo": {"kind": "ring", "ranks": 256, "model": "fifo", "runs": 3},
    "ring_256_maxmin": {"kind": "ring", "ranks": 256, "model": "maxmin", "runs": 3},
    "ring_1024_fifo": {"kind": "ring", "ranks": 1024, "model": "fifo", "runs": 3},
    "ring_1024_maxmin": {"kind": "ring", "ranks": 1024, "model": "maxmin", "runs": 3},
    "ring_1024_cli": {"kind": "cli_ring", "ranks": 1024, "runs": 3},
    "ring_4096_maxmin": {"kind": "ring", "ranks": 4096, "model": "maxmin", "size": MIB, "runs": 1},
    "blueconnect_512": {"kind": "blueconnect", "nodes": 64, "k": 16, "runs": 1},
    "blueconnect_4096": {"kind": "blueconnect", "nodes": 512, "k": 32, "runs": 3},
    "critical_path_1M": {"kind": "critical_path", "ranks": 64, "chunks": 128, "runs": 3},
    "sparse_ring_ring_64": {"kind": "sparse", "ranks": 64, "dimension": 128 * 2**20, "density": 1 / 128, "runs": 1},
    "jobs_4096": {"kind": "jobs", "nodes": 512, "k": 32, "ep": 16, "runs": 3},
    "alltoall_512": {"kind": "alltoall", "nodes": 64, "k": 16, "runs": 3},
    "alltoall_4096": {"kind": "alltoall", "nodes": 512, "k": 32, "runs": 1},
    "nccl_tree_512": {"kind": "nccl_tree", "nodes": 64, "k": 16, "runs": 3},
    "nccl_ring_256": {"kind": "nccl_ring", "preset": "dgx_h100_ndr_32", "size": 256 * MIB, "runs": 3},
    "blueconnect_16384": {"kind": "blueconnect", "node": "dgx_h100", "nodes": 2048, "k": 42, "bandwidth_Bps": 50e9,
                          "factors": (8, 16, 128), "runs": 1},
    "critical_path_100k": {"kind": "blueconnect_critical_path", "ranks": 100_000, "factors": (8, 4, 25, 125),
                           "runs": 1},
}
"""Ring all-reduce of 64 MiB on ``switch(p)`` (12.5 GB/s, 1 µs per link); ``ring_1024_cli``: the same
ring on 1024 GPUs as a scenario run by ``simnet run`` in a fresh interpreter (start-up, simulation,
critical path, α-β model, tables and two plots; its SMPI columns are those of ``ring_1024_maxmin`` run
before it in the same invocation); ``ring_4096_maxmin``: the ring of 1 MiB on ``switch(4096)``
(33 546 240 transfers, no SMPI run); BlueConnect
of 64 MiB on 64 DGX A100 (512 GPUs, rails on a k = 16 fat-tree of 25 GB/s, 1 µs,
factors (4, 2, 16, 4)) and on 512 DGX A100 (4096 GPUs, k = 32 fat-tree, factors
(4, 2, 16, 32)); the critical-path model of a ring of 64 ranks with 128
sub-chunks (1 032 192 transfers) on ``switch(64)``; sparse ``sparse_ring_ring`` on
16 ABCI nodes (64 V100, ``cluster("abci_node", 16)`` on one EDR switch, 12.5 GB/s, 1 µs) at N = 128Mi
entries and density 1/128, uniform indices, seed 1 (payload generation included
in ``wall_s``); ``jobs_4096``: 512 DGX A100 (4096 GPUs, the k = 32 fat-tree above) shared by two jobs
and background traffic, run together and then each alone (:func:`simnet.jobs.run_jobs`, interference
report included): BlueConnect all-reduce of 64 MiB on the first 2048 GPUs (factors (4, 2, 16, 16)),
pairwise all-to-all of 16 MiB in 128 expert-parallel groups of 16 GPUs (two servers each) on the
other 2048, and a random permutation of 4 MiB flows over all 4096 GPUs at 10 % load (``transfers``
counts the concurrent run, background flows included; ``time_s`` is when its last collective ends;
``sim_s`` is all of :func:`~simnet.jobs.run_jobs`: the jobs together, each alone, the interference report);
``alltoall_512``: pairwise all-to-all (:func:`~simnet.algorithms.direct_alltoall`, window 1) of 16 MiB on the
64 DGX A100 of ``blueconnect_512`` (261 632 transfers between as many pairs of GPUs, each routed once:
``sim_s`` is :func:`~simnet.engine.simulate` with the routing, which the BlueConnect cases do before it);
``alltoall_4096``: the same all-to-all on the 512 DGX A100 of ``blueconnect_4096`` (16 773 120 transfers and
routes);
``nccl_tree_512``: NCCL's tree all-reduce (two channels, simple protocol) of 64 MiB on the 64 DGX A100 of
``blueconnect_512`` (130 816 transfers whose instants are rarely shared: a tree's sends start and end at
their own times, so it measures the cost per instant of the general max-min path); ``nccl_ring_256``:
NCCL's ring all-reduce (simple protocol, the channels and parameters NCCL's model resolves on the network:
16 channels) of 256 MiB on the preset ``dgx_h100_ndr_32`` (32 DGX H100, NDR rails, the cluster of issue 16),
whose pipelined chunks meet the same sets of routes over and over; ``blueconnect_16384``:
BlueConnect of 64 MiB on 2048 DGX H100 (16 384 GPUs, rails on a three-tier k = 42 fat-tree of 50 GB/s,
1 µs, factors (8, 16, 128)); ``critical_path_100k``: the critical-path model of BlueConnect of 64 MiB on
100 000 ranks of ``switch(100000)``, factors (8, 4, 25, 125) (31.6 M transfers; ``sim_s`` includes
computing the 400 000 routes)."""

QUICK = {
    "ring_256_fifo": {"ranks": 32},
    "ring_256_maxmin": {"ranks": 32},
    "ring_1024_fifo": {"ranks": 64},
    "ring_1024_maxmin": {"ranks": 64},
    "ring_1024_cli": {"ranks": 64},
    "ring_4096_maxmin": {"ranks": 64},
    "blueconnect_512": {"nodes": 4, "k": 8},
    "blueconnect_4096": {"nodes": 4, "k": 8},
    "critical_path_1M": {"chunks": 2},
    "sparse_ring_ring_64": {"ranks": 8, "dimension": 2**20},
    "jobs_4096": {"nodes": 4, "k": 8, "ep": 8},
    "alltoall_512": {"nodes": 4, "k": 8},
    "alltoall_4096": {"nodes": 4, "k": 8},
    "nccl_tree_512": {"nodes": 4, "k": 8},
    "nccl_ring_256": {"preset": "dgx_h100", "size": MIB},
    "blueconnect_16384": {"nodes": 4, "k": 8, "factors": (8, 4)},
    "critical_path_100k": {"ranks": 64, "factors": (8, 8)},
}


def simpy_rate(events: int = 500_000) -> float:
    """Events per second of a bare SimPy loop: one process yielding ``env.timeout(1)``."""
    import simpy

    env = simpy.Environment()

    def loop():
        for _ in range(events):
            yield env.timeout(1)

    env.process(loop())
    began = time.perf_counter()
    env.run()
    return events / (time.perf_counter() - began)


def peak_rss_MB() -> float:
    """Peak resident set of this process, MiB.

    ``VmHWM`` of ``/proc/self/status`` where there is one: ``getrusage``'s
    ``ru_maxrss`` survives ``execve`` on Linux, so a case process would inherit the
    peak of the benchmark process that spawned it (which exports SimGrid platforms).
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _progress(began: float, what: str) -> None:
    print(f"{time.perf_counter() - began:8.1f} s: {what}", file=sys.stderr, flush=True)


def simnet_path() -> str:
    """Where the simnet package being measured lives."""
    import simnet

    return simnet.__file__


def _ring(spec: dict) -> dict:
    from simnet.algorithms import ring_allreduce
    from simnet.engine import simulate
    from simnet.network import Network
    from simnet.topology import switch

    began = time.perf_counter()
    network = Network(switch(spec["ranks"], BANDWIDTH_Bps, LATENCY_S))
    schedule = ring_allreduce(spec["ranks"], spec.get("size", 64 * MIB))
    simulating = time.perf_counter()
    trace = simulate(network, schedule, model=spec["model"])
    done = time.perf_counter()
    return {"wall_s": done - began, "sim_s": done - simulating, "transfers": len(schedule), "time_s": trace.time_s}


def _mpi_ring_time_s(spec: dict) -> float:
    from simnet.algorithms import ring_allreduce
    from simnet.engine import simulate
    from simnet.network import Network
    from simnet.smpi import as_mpi
    from simnet.topology import switch

    network = Network(switch(spec["ranks"], BANDWIDTH_Bps, LATENCY_S))
    return simulate(network, as_mpi(ring_allreduce(spec["ranks"], 64 * MIB)), model="maxmin").time_s


def _blueconnect(spec: dict) -> dict:
    from simnet.algorithms import blueconnect_allreduce
    from simnet.engine import simulate
    from simnet.network import Network
    from simnet.topology import cluster

    nodes = spec["nodes"]
    began = time.perf_counter()
    fabric = {"k": spec["k"], "bandwidth_Bps": spec.get("bandwidth_Bps", 25e9), "latency_s": LATENCY_S}
    network = Network(cluster(spec.get("node", "dgx_a100"), nodes, fabric="fat_tree", fabric_params=fabric))
    factors = spec.get("factors") or ((4, 2, 16, nodes // 16) if nodes >= 32 else (4, 2, nodes))
    schedule = blueconnect_allreduce(network.size, 64 * MIB, factors=factors)
    _progress(began, f"built {len(schedule)} transfers")
    pairs = np.unique(schedule.columns.src.astype(np.int64) * network.size + schedule.columns.dst)
    for key in pairs.tolist():
        network.route(*divmod(key, network.size))
    _progress(began, f"routed {len(pairs)} rank pairs")
    simulating = time.perf_counter()
    trace = simulate(network, schedule, model="maxmin")
    done = time.perf_counter()
    return {"wall_s": done - began, "sim_s": done - simulating, "transfers": len(schedule), "time_s": trace.time_s}


def _alltoall(spec: dict) -> dict:
    from simnet.algorithms import direct_alltoall
    from simnet.engine import simulate
    from simnet.network import Network
    from simnet.topology import cluster

    began = time.perf_counter()
    fabric = {"k": spec["k"], "bandwidth_Bps": 25e9, "latency_s": LATENCY_S}
    network = Network(cluster("dgx_a100", spec["nodes"], fabric="fat_tree", fabric_params=fabric))
    schedule = direct_alltoall(network.size, 16 * MIB)
    _progress(began, f"built {len(schedule)} transfers")
    simulating = time.perf_counter()
    trace = simulate(network, schedule, model="maxmin")
    done = time.perf_counter()
    return {"wall_s": done - began, "sim_s": done - simulating, "transfers": len(schedule), "time_s": trace.time_s}


def _nccl_tree(spec: dict) -> dict:
    from simnet.algorithms import ALGORITHMS
    from simnet.engine import simulate
    from simnet.network import Network
    from simnet.topology import cluster

    began = time.perf_counter()
    fabric = {"k": spec["k"], "bandwidth_Bps": 25e9, "latency_s": LATENCY_S}
    network = Network(cluster("dgx_a100", spec["nodes"], fabric="fat_tree", fabric_params=fabric))
    schedule = ALGORITHMS["nccl_tree"].builder(network.size, 64 * MIB)
    simulating = time.perf_counter()
    trace = simulate(network, schedule, model="maxmin")
    done = time.perf_counter()
    return {"wall_s": done - began, "sim_s": done - simulating, "transfers": len(schedule), "time_s": trace.time_s}


def _nccl_ring(spec: dict) -> dict:
    from simnet.algorithms import ALGORITHMS
    from simnet.engine import simulate
    from simnet.network import Network
    from simnet.topology import load

    began = time.perf_counter()
    network = Network(load(spec["preset"]))
    algorithm = ALGORITHMS["nccl_ring"]
    params = algorithm.resolved(network, spec["size"], {"protocol": "simple"})
    schedule = algorithm.build(network.size, spec["size"], **params)
    simulating = time.perf_counter()
    trace = simulate(network, schedule, model="maxmin")
    done = time.perf_counter()
    return {"wall_s": done - began, "sim_s": done - simulating, "transfers": len(schedule), "time_s": trace.time_s}


def _critical_path(spec: dict) -> dict:
    from simnet.algorithms import ring_allreduce
    from simnet.models import critical_path_time
    from simnet.network import Network
    from simnet.topology import switch

    began = time.perf_counter()
    network = Network(switch(spec["ranks"], BANDWIDTH_Bps, LATENCY_S))
    schedule = ring_allreduce(spec["ranks"], 1024 * MIB, chunks=spec["chunks"])
    modelling = time.perf_counter()
    time_s = critical_path_time(network, schedule)
    done = time.perf_counter()
    return {"wall_s": done - began, "sim_s": done - modelling, "transfers": len(schedule), "time_s": time_s}


def _blueconnect_critical_path(spec: dict) -> dict:
    from simnet.algorithms import blueconnect_allreduce
    from simnet.models import critical_path_time
    from simnet.network import Network
    from simnet.topology import switch

    began = time.perf_counter()
    network = Network(switch(spec["ranks"], BANDWIDTH_Bps, LATENCY_S))
    schedule = blueconnect_allreduce(spec["ranks"], 64 * MIB, factors=spec["factors"])
    _progress(began, f"built {len(schedule)} transfers")
    modelling = time.perf_counter()
    time_s = critical_path_time(network, schedule)
    done = time.perf_counter()
    return {"wall_s": done - began, "sim_s": done - modelling, "transfers": len(schedule), "time_s": time_s}


def _sparse(spec: dict) -> dict | None:
    from simnet.algorithms import ALGORITHMS

    if "sparse_ring_ring" not in ALGORITHMS:
        return None
    from simnet.engine import simulate
    from simnet.network import Network
    from simnet.payloads import SparsePayload
    from simnet.topology import cluster

    began = time.perf_counter()
    fabric = {"bandwidth_Bps": 12.5e9, "latency_s": LATENCY_S}
    network = Network(cluster("abci_node", spec["ranks"] // 4, fabric="switch", fabric_params=fabric))
    payload = SparsePayload(dimension=spec["dimension"], density=spec["density"], seed=1)
    schedule = ALGORITHMS["sparse_ring_ring"].builder(spec["ranks"], payload.size_bytes, payload=payload)
    simulating = time.perf_counter()
    trace = simulate(network, schedule, model="maxmin")
    done = time.perf_counter()
    return {"wall_s": done - began, "sim_s": done - simulating, "transfers": len(schedule), "time_s": trace.time_s}


def _jobs(spec: dict) -> dict | None:
    try:
        from simnet.jobs import Flows, Job, communicators, run_jobs
    except ImportError:
        return None
    from simnet.algorithms import blueconnect_allreduce, direct_alltoall
    from simnet.network import Network
    from simnet.topology import cluster

    nodes = spec["nodes"]
    began = time.perf_counter()
    fabric = {"k": spec["k"], "bandwidth_Bps": 25e9, "latency_s": LATENCY_S}
    network = Network(cluster("dgx_a100", nodes, fabric="fat_tree", fabric_params=fabric))
    half = network.size // 2
    factors = (4, 2, 16, nodes // 32) if nodes >= 64 else (4, 2, nodes // 2)
    train = Job("train", (tuple(range(half)),), schedule=blueconnect_allreduce(half, 64 * MIB, factors=factors))
    groups = communicators(range(half, network.size), {"ep": spec["ep"], "dp": "rest"})["ep"]
    moe = Job("moe", groups, schedule=direct_alltoall(spec["ep"], 16 * MIB))
    noise = Job("noise", (tuple(range(network.size)),), flows=Flows("permutation", 0.1, 4 * MIB, seed=1))
    _progress(began, "built the jobs")
    simulating = time.perf_counter()
    result = run_jobs(network, [train, moe, noise])
    done = time.perf_counter()
    _progress(began, f"ran: {result.jobs[['job', 'time_s', 'alone_s', 'slowdown']].to_dict(orient='records')}")
    transfers = sum(len(trace.schedule) for traces in result.traces.values() for trace in traces)
    collectives = result.jobs[result.jobs["op"] != "flows"]
    return {"wall_s": done - began, "sim_s": done - simulating, "transfers": transfers,
            "time_s": float(collectives["end_s"].max())}


CLI_SCENARIO = """\
name: ring_cli
topology: {{builder: switch, hosts: {ranks}, bandwidth: 12.5 GB/s, latency: 1 us}}
collective: {{op: allreduce, algorithms: [ring], chunks: 1}}
sizes: [64 MiB]
network: {{model: maxmin}}
"""


def _cli_ring(spec: dict) -> dict:
    """``simnet run`` of the ring case's scenario in a fresh interpreter: start-up, simulation, critical
    path, α-β model, tables and plots. ``rss_MB`` is the command's peak. The command runs in a scratch
    directory (``python -m`` puts the working directory first on the path) on the simnet this process
    imported."""
    import csv

    with tempfile.TemporaryDirectory() as tmp:
        scenario = Path(tmp) / "ring.yaml"
        scenario.write_text(CLI_SCENARIO.format(ranks=spec["ranks"]))
        env = {**os.environ, "PYTHONPATH": str(Path(simnet_path()).parents[1])}
        began = time.perf_counter()
        subprocess.run([sys.executable, "-m", "simnet", "run", str(scenario), "--out", str(Path(tmp) / "out")],
                       check=True, capture_output=True, cwd=tmp, env=env)
        wall = time.perf_counter() - began
        with open(Path(tmp) / "out" / "results.csv", newline="") as table:
            (row,) = csv.DictReader(table)
    p = spec["ranks"]
    return {"wall_s": wall, "sim_s": wall, "transfers": 2 * p * (p - 1), "time_s": float(row["sim_time_s"]),
            "rss_MB": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


RUNNERS = {"ring": _ring, "cli_ring": _cli_ring, "blueconnect": _blueconnect, "critical_path": _critical_path, "sparse": _sparse,
           "jobs": _jobs, "alltoall": _alltoall, "nccl_tree": _nccl_tree, "nccl_ring": _nccl_ring,
           "blueconnect_critical_path": _blueconnect_critical_path}


def child(name: str, quick: bool, smpi: bool) -> None:
    """Run case `name` in this process and print one JSON line."""
    spec = {**CASES[name], **(QUICK.get(name, {}) if quick else {})}
    runs = 1 if quick else spec["runs"]
    results = []
    for _ in range(runs):
        gc.collect()
        result = RUNNERS[spec["kind"]](spec)
        if result is None:
            missing = "simnet.jobs" if spec["kind"] == "jobs" else "simnet.algorithms' sparse_ring_ring"
            print(json.dumps({"skipped": f"no {missing} on this branch"}))
            return
        results.append(result)
    summary = {
        "runs": runs,
        "wall_s": statistics.median(r["wall_s"] for r in results),
        "sim_s": statistics.median(r["sim_s"] for r in results),
        "transfers": results[0]["transfers"],
        "time_s": results[0]["time_s"],
        "rss_MB": max([peak_rss_MB()] + [r["rss_MB"] for r in results if "rss_MB" in r]),
    }
    if smpi:
        summary["mpi_time_s"] = _mpi_ring_time_s(spec)
    print(json.dumps(summary))


def _smpi(spec: dict, program: Path, directory: Path) -> tuple[float, float]:
    from simnet.network import Network
    from simnet.smpi import smpi_time_s
    from simnet.topology import switch

    began = time.perf_counter()
    network = Network(switch(spec["ranks"], BANDWIDTH_Bps, LATENCY_S))
    reference = smpi_time_s(program, network, "lr", 64 * MIB, directory, timeout_s=1800)
    return time.perf_counter() - began, reference


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one run each")
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=list(CASES))
    parser.add_argument("--no-simgrid", action="store_true", help="do not run SimGrid SMPI")
    parser.add_argument("--timeout", type=float, default=600.0, help="wall-time limit per case, seconds")
    parser.add_argument("--compare", metavar="TREE", help="also run every case on the simnet of checkout TREE")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--smpi", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.quick, args.smpi)
        return

    use_smpi = False
    if not args.no_simgrid:
        from simnet.smpi import available, compile_program

        use_smpi = available()
    rates = [simpy_rate() for _ in range(3)]
    rate = statistics.median(rates)
    print(f"simnet from {Path(simnet_path()).parent}")
    print(f"bare SimPy loop: {rate / 1e6:.2f} M timeouts/s (median of 3)")
    if not use_smpi:
        print("SimGrid: skipped (" + ("--no-simgrid" if args.no_simgrid else "smpirun/smpicc not on PATH") + ")")
    header = (
        f"{'case':<28} {'runs':>4} {'transfers':>10} {'wall_s':>8} {'sim_s':>8} {'transfers/s':>12} "
        f"{'vs_simpy':>8} {'rss_MB':>7} {'time_s':>14} {'smpi_wall_s':>11} {'smpi/simnet':>11} {'smpi_diff':>10}"
    )
    print(header)
    trees = [("this", None)] + ([("compared", str(Path(args.compare).resolve()))] if args.compare else [])
    if args.compare:
        print(f"compared tree: {trees[1][1]}")
    smpi_walls: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        program = compile_program(tmp) if use_smpi else None
        for name in args.cases:
            spec = {**CASES[name], **(QUICK.get(name, {}) if args.quick else {})}
            measured = {}
            for label, tree in trees:
                compare = (use_smpi and spec["kind"] == "ring" and spec["model"] == "maxmin" and "size" not in spec
                           and label == "this")
                result = _case(name, args, compare, tree)
                shown = name if tree is None else f"{name}@{label}"
                if isinstance(result, str):
                    print(f"{shown:<28} {result}", flush=True)
                    continue
                measured[label] = result
                per_s = result["transfers"] / result["sim_s"]
                line = (
                    f"{shown:<28} {result['runs']:>4} {result['transfers']:>10} {result['wall_s']:>8.2f} "
                    f"{result['sim_s']:>8.2f} {per_s:>12,.0f} {per_s / rate:>8.3f} {result['rss_MB']:>7.0f} "
                    f"{result['time_s']:>14.9g}"
                )
                if compare:
                    smpi_wall, reference = _smpi(spec, program, Path(tmp))
                    smpi_walls[spec["ranks"]] = smpi_wall
                    diff = (result["mpi_time_s"] - reference) / reference
                    line += f" {smpi_wall:>11.2f} {smpi_wall / result['wall_s']:>11.1f} {diff:>+10.2e}"
                elif spec["kind"] == "cli_ring" and spec["ranks"] in smpi_walls and label == "this":
                    smpi_wall = smpi_walls[spec["ranks"]]
                    line += f" {smpi_wall:>11.2f} {smpi_wall / result['wall_s']:>11.1f}  (SMPI of the ring case above)"
                print(line, flush=True)
            if len(measured) == 2:
                this, other = measured["this"], measured["compared"]
                same = "same simulated time" if this["time_s"] == other["time_s"] else (
                    f"simulated time differs by {this['time_s'] / other['time_s'] - 1:+.2e}")
                print(f"{name + '@ratio':<28} wall {this['wall_s'] / other['wall_s']:.2f}x, "
                      f"sim {this['sim_s'] / other['sim_s']:.2f}x, rss {this['rss_MB'] / other['rss_MB']:.2f}x; "
                      f"{same}", flush=True)


def _case(name: str, args, compare: bool, tree: str | None) -> dict | str:
    """Run case `name` in a fresh process (on the simnet of `tree` if given); its summary or why not."""
    command = [sys.executable, __file__, "--child", name] + ["--quick"] * args.quick + ["--smpi"] * compare
    env = None if tree is None else {**os.environ, "PYTHONPATH": tree}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        out, err = process.communicate(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        return f"timed out after {args.timeout:.0f} s; progress: {err.strip() or 'none'}"
    if process.returncode != 0:
        return f"failed:\n{err[-2000:]}"
    result = json.loads(out.strip().splitlines()[-1])
    if "skipped" in result:
        return f"skipped: {result['skipped']}"
    return result

if __name__ == "__main__":
    main()
