"""The sparse all-reduce study of docs/sparse.md: topology-aware sparse_ring_ring against flat sparse and dense.

Runs every sparse algorithm and the dense ring on ABCI-like clusters (4 V100 per
node, doubled NVLink2 between every pair, 2 GPUs and one EDR HCA per PCIe switch,
nodes on one EDR switch) for each GPU count, dimension and density, and prints a
Markdown table of simulated times (FIFO link model unless ``--model maxmin``) with
the closed-form model in brackets, beside the best dense all-reduce ``simnet tune``
finds on the same cluster and link model (:func:`best_dense`). With ``--crossover`` it
prints instead, per GPU count and dimension, the density at which ``sparse_ring_ring``
stops beating that dense schedule (:func:`crossover`; use ``--model maxmin``, under
which the time grows with the density). Usage::

    PYTHONPATH=. python benchmarks/sparse_study.py --gpus 16,32,64 --dimensions 16M,64M \\
        --densities 1/16,1/128,1/512 > study.md
    PYTHONPATH=. python benchmarks/sparse_study.py --gpus 16,32,64 --dimensions 16M --model maxmin --crossover

``tests/test_quoted_numbers.py`` compares the rows of docs/sparse.md with :func:`row`
and :func:`crossover_row`.
"""

import argparse
import functools
import json
import math
import time

from simnet.algorithms import ALGORITHMS, ring_allreduce
from simnet.engine import simulate
from simnet.models import predict
from simnet.network import Network
from simnet.payloads import SparsePayload
from simnet.schedule import Schedule
from simnet.topology import cluster
from simnet.tune import tune
from simnet.units import format_time, parse_count, parse_fraction

EXACT = ["sparse_ring_ring", "sparse_ring", "ssar_recursive_doubling", "ssar_split_allgather", "dsar_split_allgather", "topk_allgather"]
HEADER = ["GPUs", "N", "d", *EXACT, "gtopk (lossy)", "best exact", "vs next", "ring, 1 channel (dense)",
          "best dense (`simnet tune`)", "vs best dense"]
CROSSOVER_HEADER = ["GPUs", "N", "best dense (`simnet tune`)", "sparse_ring_ring as fast at d ≈"]


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


@functools.cache
def best_dense(count: int, size_bytes: int, model: str = "fifo") -> tuple[str, float]:
    """The best dense all-reduce of `size_bytes` that ``simnet tune`` finds on :func:`abci_network` of `count`
    GPUs under link `model` (its chunks, channels and factors tried, the winner simulated), as
    ``("halving_doubling chunks=4", seconds)``.

    The plain ``ring`` of :func:`schedules` is one ring: every hop between nodes leaves through one of the
    node's two HCAs, so it reaches half of what the node can inject; ``tune`` tries two channels, pipelining
    and the hierarchical schedules, and its winner uses both.
    """
    tuned = tune(abci_network(count).graph, [size_bytes], network={"model": model})
    winner = tuned.dropna(subset=["sim_rank"]).sort_values("sim_rank").iloc[0]
    params = json.loads(winner["params"]) if winner["params"] else {}
    label = " ".join([winner["algorithm"], *(f"{key}={value}" for key, value in params.items())])
    return label.replace(", ", ","), float(winner["simulated_s"])


def row(network: Network, sparse: SparsePayload, dimension: str, density: str, times: dict[str, float],
        model: str = "fifo") -> str:
    """One Markdown row of the study: simulated ms (model ms) per algorithm, the winner and its margins over the
    next exact algorithm and over the best dense all-reduce (:func:`best_dense`, under the same link `model`)."""
    count = network.size
    cells = [f"{_ms(times[name])} ({_ms(predict(name, network, count, sparse.size_bytes, payload=sparse))})"
             for name in [*EXACT, "gtopk"]]
    ranked = sorted(EXACT, key=times.get)
    dense_label, dense_s = best_dense(count, sparse.size_bytes, model)
    fields = [str(count), dimension, density, *cells, ranked[0], f"{times[ranked[1]] / times[ranked[0]]:.2f}x",
              _ms(times["ring"]), f"{_ms(dense_s)} {dense_label}", f"{dense_s / times[ranked[0]]:.2f}x"]
    return "| " + " | ".join(fields) + " |"


def crossover(count: int, dimension: str, model: str = "fifo", seed: int = 1, low: str = "1/256",
              high: str = "1/8", steps: int = 6) -> tuple[float, float]:
    """The densities between which ``sparse_ring_ring`` on `count` GPUs becomes slower than :func:`best_dense`.

    Bisects ``log d`` from ``[low, high]`` `steps` times (each step halves the bracket, here from 5 octaves to
    5/64 of one, about 6 %): ``(d_fast, d_slow)`` with ``sparse_ring_ring`` simulated faster than the best
    dense at ``d_fast`` and not at ``d_slow``. An end of ``[low, high]`` is simulated only if the bracket
    keeps it (dense payloads take long to build: 33 s at d = 1/4 on 64 GPUs, N = 16M).

    Raises
    ------
    ValueError
        If the crossover is not inside ``[low, high]``.
    """
    network = abci_network(count)
    dense_s = best_dense(count, payload(dimension, low, seed).size_bytes, model)[1]

    def faster(density: float) -> bool:
        sparse = SparsePayload(dimension=parse_count(dimension), density=density, seed=seed)
        schedule = ALGORITHMS["sparse_ring_ring"].builder(count, sparse.size_bytes, payload=sparse)
        return simulate(network, schedule, model=model).time_s < dense_s

    lowest, highest = parse_fraction(low), parse_fraction(high)
    fast, slow = lowest, highest
    for _ in range(steps):
        middle = math.sqrt(fast * slow)
        fast, slow = (middle, slow) if faster(middle) else (fast, middle)
    if (fast == lowest and not faster(fast)) or (slow == highest and faster(slow)):
        raise ValueError(f"{count} GPUs, N = {dimension}: the crossover is not between {low} and {high}")
    return fast, slow


def crossover_row(count: int, dimension: str, model: str = "fifo", seed: int = 1) -> str:
    """One Markdown row of the crossover table: the best dense all-reduce and where ``sparse_ring_ring`` meets it
    (the geometric middle of :func:`crossover`'s bracket, as ``1/n``)."""
    fast, slow = crossover(count, dimension, model, seed)
    label, dense_s = best_dense(count, payload(dimension, "1/256", seed).size_bytes, model)
    middle = f"1/{round(1 / math.sqrt(fast * slow))} (faster at 1/{1 / fast:.1f}, not at 1/{1 / slow:.1f})"
    return "| " + " | ".join([str(count), dimension, f"{_ms(dense_s)} {label}", middle]) + " |"


def study(gpus: list[int], dimensions: list[str], densities: list[str], seed: int, model: str) -> None:
    """Print the table row by row as the cases finish."""
    print("| " + " | ".join(HEADER) + " |\n|" + "---|" * len(HEADER), flush=True)
    for count in gpus:
        network = abci_network(count)
        for dimension in dimensions:
            for density in densities:
                sparse = payload(dimension, density, seed)
                times = simulated(network, schedules(count, sparse), model)
                print(row(network, sparse, dimension, density, times, model), flush=True)


def crossovers(gpus: list[int], dimensions: list[str], seed: int, model: str) -> None:
    """Print the crossover table row by row as the cases finish."""
    print("| " + " | ".join(CROSSOVER_HEADER) + " |\n|" + "---|" * len(CROSSOVER_HEADER), flush=True)
    for count in gpus:
        for dimension in dimensions:
            print(crossover_row(count, dimension, model, seed), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", default="16,32,64")
    parser.add_argument("--dimensions", default="16M,64M")
    parser.add_argument("--densities", default="1/16,1/128,1/512")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--model", choices=["fifo", "maxmin"], default="fifo", help="link model (default fifo)")
    parser.add_argument("--crossover", action="store_true",
                        help="instead, bisect the density where sparse_ring_ring meets the best dense all-reduce")
    args = parser.parse_args()
    start = time.perf_counter()
    gpus = [int(g) for g in args.gpus.split(",")]
    if args.crossover:
        crossovers(gpus, args.dimensions.split(","), args.seed, args.model)
    else:
        study(gpus, args.dimensions.split(","), args.densities.split(","), args.seed, args.model)
    print(f"\n(simulated in {format_time(time.perf_counter() - start)} of wall time)")


if __name__ == "__main__":
    main()
