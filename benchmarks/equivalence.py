"""Are two simnet trees bit-identical in what they compute? A check for speed work, outside the unit tests.

Run from the repository root::

    PYTHONPATH=. python benchmarks/equivalence.py --compare ../old-checkout
    PYTHONPATH=. python benchmarks/equivalence.py --compare ../old-checkout --families routes sparse
    PYTHONPATH=. python benchmarks/equivalence.py --compare ../old-checkout --batch 1   # array path on every instant
    PYTHONPATH=. python benchmarks/equivalence.py --compare ../old-checkout --compiled-from 0   # simnet.kernel always

Each family runs in a subprocess per tree (the other tree's ``simnet/`` found through
``PYTHONPATH=TREE``, as ``benchmarks/run.py --compare`` does), digests every result with
SHA-256 and prints, per family, how many cases both trees have, which of those differ, and how many only
one tree has (an algorithm added since, say):

``schedules``
    every registered dense algorithm on 2 to 64 ranks (odd counts included) at three sizes, with its
    defaults and with each of ``chunks=3``, ``channels=2`` and NCCL's ``protocol="ll128"`` that it
    takes: every column of its transfer table.
``traces``
    every registered dense algorithm at 64 KiB and 3 MiB on eight topologies (switches with and
    without latency, a ring, a fat-tree, a torus, DGX A100 and H100 clusters, a DGX H100), under
    max-min (equal and RTT-weighted sharing) and FIFO, with five option sets (none; an overhead;
    an overhead and γ; an overhead and start offsets; an overhead and a straggler): every time
    column of the trace, ``blocked_by``, the usage and limit rows in order, the bottlenecks.
    ``--batch`` sets :data:`simnet.links.BATCH` and ``--compiled-from`` sets
    :data:`simnet.engine.COMPILED_FROM` (0: every ``maxmin`` trace through :mod:`simnet.kernel`) on the
    tree under test only.
``sparse``
    every sparse algorithm on 4, 8 and 12 ranks, three index distributions, densities 1/1000 to
    1/3, a dimension that is not a multiple of 64: the schedule's ``nbytes``, ``nnz``, ``dense``
    and ``merged``, and every rank's final index set; built in turn and, with ``--threads``, with
    the unions forced onto worker threads; plus generated vectors (indices and values) up to
    N = 128 M.
``critical_path``
    :func:`simnet.models.critical_path_finish_s` of every dense algorithm on five topologies with γ
    zero, uniform and per rank, and of BlueConnect on 4096 ranks.
``routes``
    :meth:`simnet.network.Network.route` of every preset topology and ten built ones (all pairs up
    to 64 endpoints, 4000 random pairs beyond), and of three servers with bundles merged.
``jobs``
    :func:`simnet.jobs.run_jobs` on 4 DGX A100 (k = 8 fat-tree) and a 2:1 oversubscribed leaf-spine:
    a collective (ring, BlueConnect, NCCL's ring; once or twice in a row, from 0 or 3 µs) on half the
    GPUs, all-to-all groups (three times, from 0 or 100 µs) on the other half, background flows
    (permutation or random, 10 % or 50 % load, with or without a duration), under equal and
    RTT-weighted sharing, with none, an overhead and γ, or start offsets and a straggler: the jobs,
    timeline and interference tables and every trace. ``--compiled-from 0`` sends every run of the tree
    under test through :meth:`simnet.engine.Simulation._drive`.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pickle
import random
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

FAMILIES = ("schedules", "traces", "sparse", "critical_path", "routes", "jobs")


def _hash(*parts) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.tobytes() if isinstance(part, np.ndarray) else repr(part).encode())
    return digest.hexdigest()


def _dense_schedules(networks: dict, sizes: tuple[int, ...]):
    """``(network name, Network, algorithm name, size, schedule)`` of every dense algorithm that builds on each
    network at each size."""
    from simnet.algorithms import ALGORITHMS
    from simnet.network import Network

    for net_name, graph in networks.items():
        network = Network(graph)
        for name, algorithm in ALGORITHMS.items():
            if algorithm.payload != "dense":
                continue
            for size in sizes:
                try:
                    yield net_name, network, name, size, algorithm.build(network.size, size)
                except Exception:
                    continue


def _schedules() -> dict:
    from simnet.algorithms import ALGORITHMS

    variants = ({}, {"chunks": 3}, {"channels": 2}, {"protocol": "ll128"})
    out = {}
    for name, algorithm in ALGORITHMS.items():
        if algorithm.payload != "dense":
            continue
        for p in (2, 3, 4, 5, 8, 12, 16, 32, 64):
            for size in (1000, 1 << 20, (3 << 20) + 7):
                for k, params in enumerate(variants):
                    try:
                        table = algorithm.build(p, size, **params).transfers
                    except Exception as error:
                        out[(name, p, size, k)] = type(error).__name__
                        continue
                    out[(name, p, size, k)] = _hash(*(getattr(table, column) for column in (
                        "src", "dst", "nbytes", "op", "piece", "piece_offsets", "piece_chunks", "deps", "dep_offsets",
                        "stage", "src_buffer", "dst_buffer", "wire_bytes", "delay_s", "channel")), table.stages)
    return out


def _traces() -> dict:
    from simnet import topology as T
    from simnet.engine import simulate

    fat = {"fabric": "fat_tree", "fabric_params": {"k": 8, "bandwidth_Bps": 25e9, "latency_s": 1e-6}}
    flat = {"fabric": "switch", "fabric_params": {"bandwidth_Bps": 50e9, "latency_s": 1e-6}}
    networks = {
        "switch8": T.switch(8, 12.5e9, 1e-6), "switch6_no_latency": T.switch(6, 10e9, 0.0),
        "ring8": T.ring(8, 25e9, 2e-6), "fat_tree": T.fat_tree(4, 12.5e9, 1e-6), "torus": T.torus((4, 4), 25e9, 1e-6),
        "dgx_a100x2": T.cluster("dgx_a100", 2, **fat), "dgx_h100x2": T.cluster("dgx_h100", 2, **flat),
        "dgx_h100": T.dgx_h100(),
    }
    options = [{}, {"overhead_s": 1e-6}, {"overhead_s": 3.3e-7, "gamma_s_per_byte": 1e-11},
               {"overhead_s": 2e-6, "start_offset_s": "alternate"}, {"overhead_s": 5e-7, "slowdown": "rank 1"}]
    out = {}
    for net_name, network, name, size, schedule in _dense_schedules(networks, (1 << 16, 3 << 20)):
        if len(schedule) > 60_000:
            continue
        p = schedule.nranks
        for model, sharing in (("maxmin", "equal"), ("maxmin", "rtt_weighted"), ("fifo", "equal")):
            for k, option in enumerate(options):
                option = dict(option)
                if option.get("start_offset_s") == "alternate":
                    option["start_offset_s"] = [(r % 3) * 1e-6 for r in range(p)]
                if option.get("slowdown") == "rank 1":
                    option["slowdown"] = [2.0 if r == 1 else 1.0 for r in range(p)]
                key = (net_name, name, size, model, sharing, k)
                try:
                    trace = simulate(network, schedule, model=model, sharing=sharing, **option)
                except Exception as error:
                    out[key] = type(error).__name__
                    continue
                out[key] = _hash(*(np.asarray(getattr(trace, column)) for column in
                                   ("ready_s", "issue_s", "start_s", "arrive_s", "end_s", "blocked_by")),
                                 *trace.usage, *trace.limits, [sorted(b.items()) for b in trace.bottlenecks],
                                 trace.time_s)
    return out


def _sparse(threads: bool) -> dict:
    from simnet.algorithms import ALGORITHMS
    from simnet.algorithms import sparse
    from simnet.payloads import SparsePayload

    if threads:
        sparse._THREADED_ENTRIES = 0
        sparse.os.cpu_count = lambda: 2
    out = {}
    for distribution in ("uniform", "zipf", "clustered"):
        for density in (1 / 1000, 1 / 128, 1 / 16, 1 / 3):
            payload = SparsePayload(dimension=3 * 2**16 + 7, density=density, seed=3, distribution=distribution)
            for name, algorithm in ALGORITHMS.items():
                if algorithm.payload != "sparse":
                    continue
                for p in (4, 8, 12):
                    key = (distribution, density, name, p)
                    try:
                        schedule = algorithm.builder(p, payload.size_bytes, payload=payload)
                    except Exception as error:
                        out[key] = type(error).__name__
                        continue
                    table = schedule.transfers
                    run = sparse.execute(schedule, payload, values=False)
                    out[key] = _hash(table.nbytes, table.nnz, table.dense, table.merged,
                                     *(run.result(r).indices for r in range(p)))
    for distribution in ("uniform", "zipf", "clustered"):
        for dimension, density in ((128 * 2**20, 1 / 128), (10**6, 1 / 3), (10**5, 0.6), (5000, 1 / 50)):
            payload = SparsePayload(dimension=dimension, density=density, seed=5, distribution=distribution)
            for rank in range(4):
                vector = payload.vector(rank)
                out[("vector", distribution, dimension, density, rank)] = _hash(vector.indices, vector.values)
    return out


def _critical_path() -> dict:
    from simnet import topology as T
    from simnet.algorithms import blueconnect_allreduce
    from simnet.models.critical_path import critical_path_finish_s
    from simnet.network import Network

    networks = {
        "switch16": T.switch(16, 12.5e9, 1e-6), "fat_tree": T.fat_tree(4, 12.5e9, 1e-6),
        "dgx_a100x2": T.cluster("dgx_a100", 2, fabric="fat_tree",
                                fabric_params={"k": 8, "bandwidth_Bps": 25e9, "latency_s": 1e-6}),
        "dgx_h100": T.dgx_h100(),
    }
    out = {}
    for net_name, network, name, _, schedule in _dense_schedules(networks, (3 << 20,)):
        for gamma in (0.0, 1e-11, [1e-11 * (r % 3) for r in range(schedule.nranks)]):
            key = (net_name, name, repr(gamma)[:20])
            try:
                out[key] = _hash(critical_path_finish_s(network, schedule, gamma_s_per_byte=gamma))
            except Exception as error:
                out[key] = type(error).__name__
    big = Network(T.switch(4096, 12.5e9, 1e-6))
    out["blueconnect_4096"] = _hash(critical_path_finish_s(big, blueconnect_allreduce(4096, 64 << 20,
                                                                                       factors=(8, 8, 64))))
    return out


def _routes() -> dict:
    from simnet import topology as T
    from simnet.network import Network

    graphs = {path.stem: T.load(path) for path in sorted(Path(T.PRESETS).glob("*.yaml"))}
    for routing in ("shortest", "ecmp_hash", "dmodk", "simgrid"):
        graphs[f"fat_tree_{routing}"] = T.fat_tree(4, 12.5e9, 1e-6, routing=routing)
    graphs["torus"] = T.torus((4, 4), 25e9, 1e-6)
    for pxn in (False, True):
        graphs[f"dgx_a100x4_pxn_{pxn}"] = T.cluster(
            "dgx_a100", 4, fabric="fat_tree", fabric_params={"k": 8, "bandwidth_Bps": 25e9, "latency_s": 1e-6}, pxn=pxn)
        graphs[f"dgx_h100x2_pxn_{pxn}"] = T.cluster(
            "dgx_h100", 2, fabric="switch", fabric_params={"bandwidth_Bps": 50e9, "latency_s": 1e-6}, pxn=pxn)
    graphs["dgx_a100x2_no_rails"] = T.cluster(
        "dgx_a100", 2, fabric="switch", fabric_params={"bandwidth_Bps": 25e9, "latency_s": 1e-6}, rails=False)
    out = {}
    pick = random.Random(0)
    for name, graph in graphs.items():
        network = Network(graph)
        n = network.size
        pairs = ([(s, d) for s in range(n) for d in range(n)] if n <= 64 else
                 [(pick.randrange(n), pick.randrange(n)) for _ in range(4000)])
        out[name] = _hash([network.route(s, d) for s, d in pairs])
    for name in ("dgx1", "dgx_a100", "dgx_h100x2_pxn_False"):
        network = Network(graphs[name], bundles="merged")
        out[f"{name}_merged"] = _hash([network.route(s, d) for s in range(network.size) for d in range(network.size)])
    return out


_DESCRIBED = ("routing", "hash_seed")
"""Columns of the jobs table that describe the run's settings (added in round twenty-six), left out of its digest
so that trees before and after them compare by what they simulate."""


def _jobs() -> dict:
    from simnet import topology as T
    from simnet.algorithms import ALGORITHMS, direct_alltoall
    from simnet.jobs import Flows, Job, communicators, run_jobs
    from simnet.network import Network

    networks = {
        "dgx_a100x4": Network(T.cluster("dgx_a100", 4, fabric="fat_tree",
                                        fabric_params={"k": 8, "bandwidth_Bps": 25e9, "latency_s": 1e-6})),
        "leaf_spine": Network(T.leaf_spine(8, 2, 4, 12.5e9, 1e-6, oversubscription=2.0)),
    }
    options = [{}, {"overhead_s": 1e-6, "gamma_s_per_byte": 1e-11}, {"start_offset_s": "alternate", "slowdown": "one"}]
    out = {}
    for net_name, network in networks.items():
        size = network.size
        half = size // 2
        groups = communicators(range(half, size), {"ep": 8, "dp": "rest"})["ep"]
        for algorithm in ("ring", "blueconnect", "nccl_ring"):
            chosen = ALGORITHMS[algorithm]
            try:
                schedule = chosen.build(half, 3 << 20, **chosen.resolved(network, 3 << 20, {}))
            except Exception as error:
                out[(net_name, algorithm)] = type(error).__name__
                continue
            for repeat, start, moe_start, pattern, load, duration, sharing, k in (
                    (1, 0.0, 0.0, "permutation", 0.1, None, "equal", 0),
                    (2, 3e-6, 1e-4, "random", 0.5, None, "equal", 1),
                    (2, 0.0, 0.0, "permutation", 0.5, 2e-4, "rtt_weighted", 2),
                    (1, 3e-6, 1e-4, "random", 0.1, 2e-4, "rtt_weighted", 0)):
                option = dict(options[k])
                if option.get("start_offset_s") == "alternate":
                    option["start_offset_s"] = [(r % 3) * 1e-6 for r in range(size)]
                if option.get("slowdown") == "one":
                    option["slowdown"] = [2.0 if r == 1 else 1.0 for r in range(size)]
                jobs = [Job("train", (tuple(range(half)),), schedule=schedule, repeat=repeat, start_s=start),
                        Job("moe", groups, schedule=direct_alltoall(8, 1 << 20), repeat=3, start_s=moe_start),
                        Job("noise", (tuple(range(size)),), flows=Flows(pattern, load, 1 << 20, seed=3,
                                                                          duration_s=duration))]
                key = (net_name, algorithm, repeat, start, moe_start, pattern, load, duration, sharing, k)
                result = run_jobs(network, jobs, sharing=sharing, **option)
                traces = [trace for name in sorted(result.traces) for trace in result.traces[name]]
                named = result.jobs.drop(columns=list(_DESCRIBED), errors="ignore")
                out[key] = _hash(*(frame.to_csv() for frame in (named, result.timeline, result.interference)),
                                 *(np.asarray(getattr(trace, column)) for trace in traces for column in
                                   ("ready_s", "issue_s", "start_s", "arrive_s", "end_s", "blocked_by")),
                                 *(part for trace in traces for part in trace.usage),
                                 [trace.begin_s for trace in traces])
    return out


def _dump(family: str, path: str, batch: int | None, threads: bool, compiled_from: int | None) -> None:
    warnings.filterwarnings("ignore")
    if batch is not None:
        import simnet.links

        simnet.links.BATCH = batch
    if compiled_from is not None:
        import simnet.engine

        simnet.engine.COMPILED_FROM = compiled_from
    results = {"schedules": _schedules, "traces": _traces, "critical_path": _critical_path,
               "routes": _routes, "jobs": _jobs}.get(family)
    with open(path, "wb") as file:
        pickle.dump(results() if results else _sparse(threads), file)


def _run(family: str, tree: Path, batch: int | None, threads: bool, compiled_from: int | None,
         scratch: str) -> dict:
    out = os.path.join(scratch, f"{family}-{abs(hash(str(tree)))}.pkl")
    command = [sys.executable, __file__, "--child", family, out]
    command += ["--batch", str(batch)] * (batch is not None) + ["--threads"] * threads
    command += ["--compiled-from", str(compiled_from)] * (compiled_from is not None)
    subprocess.run(command, check=True, env={**os.environ, "PYTHONPATH": str(tree)})
    with open(out, "rb") as file:
        return pickle.load(file)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", metavar="TREE", required=False, help="the other checkout")
    parser.add_argument("--families", nargs="+", choices=FAMILIES, default=list(FAMILIES))
    parser.add_argument("--batch", type=int, help="simnet.links.BATCH for this tree's traces")
    parser.add_argument("--threads", action="store_true", help="force this tree's sparse unions onto threads")
    parser.add_argument("--compiled-from", type=int, help="simnet.engine.COMPILED_FROM for this tree's traces")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _dump(args.child[0], args.child[1], args.batch, args.threads, args.compiled_from)
        return
    if not args.compare:
        parser.error("--compare TREE is required")
    here = Path(__file__).resolve().parents[1]
    failed = False
    with tempfile.TemporaryDirectory() as scratch:
        for family in args.families:
            mine = _run(family, here, args.batch, args.threads, args.compiled_from, scratch)
            theirs = _run(family, Path(args.compare).resolve(), None, False, None, scratch)
            common = mine.keys() & theirs.keys()
            differ = sorted((k for k in common if mine[k] != theirs[k]), key=repr)
            only = f", {len(mine.keys() - common)} only here, {len(theirs.keys() - common)} only there"
            print(f"{family:14s} {len(common):6d} common cases, {len(differ)} differ{only}"
                  + "".join(f"\n  {k!r}" for k in differ[:10]))
            failed |= bool(differ)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
