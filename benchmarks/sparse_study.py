"""The sparse all-reduce study of docs/sparse.md: topology-aware sparse_ring_ring against flat sparse and dense.

Runs every sparse algorithm and the dense ring on ABCI-like clusters (4 V100 per
node, doubled NVLink2 between every pair, 2 GPUs and one EDR HCA per PCIe switch,
nodes on one EDR switch) for each GPU count, dimension and density, and prints a
Markdown table of simulated times (FIFO link model unless ``--model maxmin``) with
the closed-form model in brackets. Usage::

    PYTHONPATH=. python benchmarks/sparse_study.py --gpus 16,32,64 --dimensions 16M,64M \\
        --densities 1/16,1/128,1/512 > study.md

``tests/test_quoted_numbers.py`` compares the rows of docs/sparse.md with :func:`row`.
"""

import argparse
import time

from simnet.algorithms import ALGORITHMS, ring_allreduce
from simnet.engine import simulate
from simnet.models import predict
from simnet.network import Network
from simnet.payloads import SparsePayload
from simnet.schedule import Schedule
from simnet.topology import cluster
from simnet.units import format_time, parse_count, parse_fraction

EXACT = ["sparse_ring_ring", "sparse_ring", "ssar_recursive_doubling", "ssar_split_allgather", "dsar_split_allgather", "topk_allgather"]
HEADER = ["GPUs", "N", "d", *EXACT, "ring (dense)", "gtopk (lossy)", "best exact", "vs next", "vs ring"]


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f}"


def abci_network(count: int) -> Network:
    """`count` GPUs on ABCI-like nodes (``abci_node``, 4 GPUs each) on one EDR switch."""
    return Network(cluster("abci_node", count // 4, fabric="switch",
                           fabric_params={"bandwidth_Bps": 12.5e9, "latency_s": 0.5e-6}))


def payload(dimension: str, density: str, seed: int = 1) -> SparsePayload:
    """The study's payload: uniform indices, 4 + 4-byte pairs, 4-byte header."""
    return SparsePayload(dimension=parse_count(dimension), density=parse_fraction(density), seed=seed)


def schedules(count: int, sparse: SparsePayload) -> dict[str, Schedule]:
    """Every exact sparse algorithm, gtopk and the dense ring on `count` ranks, built once."""
    built = {name: ALGORITHMS[name].builder(count, sparse.size_bytes, payload=sparse) for name in [*EXACT, "gtopk"]}
    return built | {"ring": ring_allreduce(count, sparse.size_bytes)}


def simulated(network: Network, built: dict[str, Schedule], model: str = "fifo") -> dict[str, float]:
    """Simulated time of every schedule of :func:`schedules`, seconds."""
    return {name: simulate(network, schedule, model=model).time_s for name, schedule in built.items()}


def row(network: Network, sparse: SparsePayload, dimension: str, density: str, times: dict[str, float]) -> str:
    """One Markdown row of the study: simulated ms (model ms) per algorithm, the winner and its margins."""
    count = network.size
    cells = [f"{_ms(times[name])} ({_ms(predict(name, network, count, sparse.size_bytes, payload=sparse))})"
             for name in [*EXACT, "gtopk"]]
    ranked = sorted(EXACT, key=times.get)
    fields = [str(count), dimension, density, *cells[:-1], _ms(times["ring"]), cells[-1], ranked[0],
              f"{times[ranked[1]] / times[ranked[0]]:.2f}x", f"{times['ring'] / times[ranked[0]]:.2f}x"]
    return "| " + " | ".join(fields) + " |"


def study(gpus: list[int], dimensions: list[str], densities: list[str], seed: int, model: str) -> None:
    """Print the table row by row as the cases finish."""
    print("| " + " | ".join(HEADER) + " |\n|" + "---|" * len(HEADER), flush=True)
    for count in gpus:
        network = abci_network(count)
        for dimension in dimensions:
            for density in densities:
                sparse = payload(dimension, density, seed)
                times = simulated(network, schedules(count, sparse), model)
                print(row(network, sparse, dimension, density, times), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", default="16,32,64")
    parser.add_argument("--dimensions", default="16M,64M")
    parser.add_argument("--densities", default="1/16,1/128,1/512")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--model", choices=["fifo", "maxmin"], default="fifo", help="link model (default fifo)")
    args = parser.parse_args()
    start = time.perf_counter()
    study([int(g) for g in args.gpus.split(",")], args.dimensions.split(","), args.densities.split(","), args.seed,
          args.model)
    print(f"\n(simulated in {format_time(time.perf_counter() - start)} of wall time)")


if __name__ == "__main__":
    main()
