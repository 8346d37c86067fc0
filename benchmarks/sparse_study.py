"""The sparse all-reduce study of docs/sparse.md: topology-aware sparse_ring_ring against flat sparse and dense.

Runs every sparse algorithm and the dense ring on ABCI-like clusters (4 V100 per
node, doubled NVLink2 between every pair, 2 GPUs and one EDR HCA per PCIe switch,
nodes on one EDR switch) for each GPU count, dimension and density, and prints a
Markdown table of simulated times (FIFO link model) with the closed-form model in
brackets. Usage::

    PYTHONPATH=. python benchmarks/sparse_study.py --gpus 16,32,64 --dimensions 16M,64M \\
        --densities 1/16,1/128,1/512 > study.md
"""

import argparse
import time

from simnet.algorithms import ring_allreduce
from simnet.algorithms import ALGORITHMS
from simnet.engine import simulate
from simnet.models import predict
from simnet.payloads import SparsePayload
from simnet.units import format_time, parse_count, parse_fraction
from simnet.network import Network
from simnet.topology import cluster

EXACT = ["sparse_ring_ring", "sparse_ring", "ssar_recursive_doubling", "ssar_split_allgather", "dsar_split_allgather", "topk_allgather"]


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f}"


def study(gpus: list[int], dimensions: list[str], densities: list[str], seed: int) -> None:
    """Print the table row by row as the cases finish."""
    header = ["GPUs", "N", "d", *EXACT, "ring (dense)", "gtopk (lossy)", "best exact", "vs next", "vs ring"]
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header), flush=True)
    for count in gpus:
        network = Network(cluster("abci_node", count // 4, fabric="switch",
                                  fabric_params={"bandwidth_Bps": 12.5e9, "latency_s": 0.5e-6}))
        for dimension in dimensions:
            for density in densities:
                payload = SparsePayload(dimension=parse_count(dimension), density=parse_fraction(density), seed=seed)
                times, cells = {}, []
                for name in [*EXACT, "gtopk"]:
                    schedule = ALGORITHMS[name].builder(count, payload.size_bytes, payload=payload)
                    times[name] = simulate(network, schedule, model="fifo").time_s
                    model = predict(name, network, count, payload.size_bytes, payload=payload)
                    cells.append(f"{_ms(times[name])} ({_ms(model)})")
                ring = simulate(network, ring_allreduce(count, payload.size_bytes), model="fifo").time_s
                ranked = sorted(EXACT, key=times.get)
                row = [str(count), dimension, density, *cells[:-1], _ms(ring), cells[-1], ranked[0]]
                row += [f"{times[ranked[1]] / times[ranked[0]]:.2f}x", f"{ring / times[ranked[0]]:.2f}x"]
                print("| " + " | ".join(row) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", default="16,32,64")
    parser.add_argument("--dimensions", default="16M,64M")
    parser.add_argument("--densities", default="1/16,1/128,1/512")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    start = time.perf_counter()
    study([int(g) for g in args.gpus.split(",")], args.dimensions.split(","), args.densities.split(","), args.seed)
    print(f"\n(simulated in {format_time(time.perf_counter() - start)} of wall time)")


if __name__ == "__main__":
    main()
