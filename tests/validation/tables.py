"""The validation tables of docs/validation.md, computed, and printed by one command.

    PYTHONPATH=. python -m tests.validation.tables            # all four (SimGrid when smpirun exists)
    PYTHONPATH=. python -m tests.validation.tables published  # one of: published, alpha_beta, simgrid,
                                                              # simgrid_clusters

* ``published_table``: calibrated DGX machines (:mod:`simnet.calibration`)
  beside published nccl-tests all-reduce bus bandwidths, with sources and errors.
* ``alpha_beta_table``: simulated time on ``switch(16)`` against the textbook closed
  forms of ring, halving-doubling and recursive doubling (Thakur, Rabenseifner &
  Gropp 2005; Patarasuk & Yuan 2009), with α = two link latencies and β = 1/B.
* ``simgrid_table``: simnet against SimGrid SMPI on the platforms exported with simnet's
  routes, and ``simgrid_clusters_table`` on SimGrid's own FAT_TREE and TORUS clusters: the
  platforms, algorithms, placements and sizes of ``tests/validation/test_simgrid.py``,
  through that test's own functions.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import pandas as pd

from simnet.algorithms import ALGORITHMS
from simnet.engine import simulate
from simnet.algorithms.dense import recursive_doubling_time, ring_allreduce_time
from simnet.algorithms.hierarchical import halving_doubling_time
from simnet.network import Network
from simnet.smpi import as_mpi, compile_program, smpi_time_s
from simnet.topology import switch
from simnet.units import format_size
from tests.validation import test_simgrid
from simnet.calibration import published_comparison as published_table

__all__ = [
    "published_table", "alpha_beta_table", "simgrid_table", "simgrid_clusters_table", "TABLES", "markdown", "main"
]

SWITCH_HOSTS = 16
SWITCH_Bps = 12.5e9
SWITCH_LATENCY_S = 1e-6
ALPHA_BETA_SIZES = (1 << 10, 1 << 20, 64 << 20, 100_000_000)
CLOSED_FORMS = {
    "ring": ring_allreduce_time,
    "halving_doubling": halving_doubling_time,
    "recursive_doubling": recursive_doubling_time,
}


def alpha_beta_table() -> pd.DataFrame:
    """Simulated time vs closed form on ``switch(16, 12.5 GB/s, 1 us)``, both link models."""
    network = Network(switch(SWITCH_HOSTS, SWITCH_Bps, SWITCH_LATENCY_S))
    alpha, beta = 2 * SWITCH_LATENCY_S, 1 / SWITCH_Bps
    rows = []
    for name, closed_form in CLOSED_FORMS.items():
        for size in ALPHA_BETA_SIZES:
            schedule = ALGORITHMS[name].builder(SWITCH_HOSTS, size)
            model = closed_form(SWITCH_HOSTS, size, alpha, beta)
            row = {"algorithm": name, "size": format_size(size), "closed form": model}
            for link_model in ("maxmin", "fifo"):
                row[f"sim {link_model}"] = simulate(network, schedule, model=link_model).time_s
            row["max relative error"] = max(abs(row[f"sim {m}"] / model - 1) for m in ("maxmin", "fifo"))
            rows.append(row)
    return pd.DataFrame(rows)


def simgrid_table() -> pd.DataFrame:
    """simnet (max-min) vs SMPI (CM02) on the platforms exported with simnet's routes, 16 MiB and 64 MiB."""
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        program = compile_program(directory)
        for ours, theirs in test_simgrid.PAIRS.items():
            for topology, make in sorted(test_simgrid.EXPORTED.items()):
                for size in (16 * test_simgrid.MIB, 64 * test_simgrid.MIB):
                    graph = make()
                    reference = smpi_time_s(program, Network(graph), theirs, size, directory)
                    mine = test_simgrid.simnet_time_s(graph, ours, size)
                    rows.append(
                        {
                            "simnet vs SMPI": f"{ours} vs {theirs}",
                            "topology": topology,
                            "size": format_size(size),
                            "simnet": mine,
                            "SMPI": reference,
                            "relative difference": mine / reference - 1,
                        }
                    )
    return pd.DataFrame(rows)


def simgrid_clusters_table() -> pd.DataFrame:
    """simnet (routing "simgrid", RTT-weighted sharing) vs SMPI on SimGrid's own clusters, per size."""
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        program = compile_program(directory)
        for cluster, make in sorted(test_simgrid.CLUSTERS.items()):
            for ours, theirs in test_simgrid.PAIRS.items():
                for placement in ("ordered", "shuffled"):
                    network = test_simgrid.cluster_network(make(), placement)
                    row = {"cluster": cluster, "simnet vs SMPI": f"{ours} vs {theirs}", "placement": placement}
                    for name, size in test_simgrid.SIZES.items():
                        reference = smpi_time_s(program, network, theirs, size, directory, platform="cluster")
                        schedule = as_mpi(ALGORITHMS[ours].build(network.size, size))
                        mine = simulate(network, schedule, sharing="rtt_weighted").time_s
                        row[f"SMPI {name}"] = reference
                        row[f"difference {name}"] = mine / reference - 1
                    rows.append(row)
    return pd.DataFrame(rows)


TABLES = {
    "published": published_table,
    "alpha_beta": alpha_beta_table,
    "simgrid": simgrid_table,
    "simgrid_clusters": simgrid_clusters_table,
}


def markdown(frame: pd.DataFrame) -> str:
    """`frame` as a Markdown table, times in ms, bandwidths in GB/s, errors signed."""

    def cell(column: str, value) -> str:
        if isinstance(value, float):
            if column in ("error", "relative difference", "max relative error") or column.startswith("difference"):
                return f"{value:+.2e}" if abs(value) < 1e-3 else f"{value:+.1%}"
            if "GB/s" in column:
                return f"{value:.1f}"
            return f"{value * 1e3:.6f} ms"
        return str(value)

    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    for record in frame.itertuples(index=False):
        lines.append("| " + " | ".join(cell(c, v) for c, v in zip(frame.columns, record)) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    """Print the named tables (default all) as Markdown."""
    names = argv or list(TABLES)
    for name in names:
        if name.startswith("simgrid") and not shutil.which("smpirun"):
            print(f"## {name}\n\nskipped: smpirun is not installed\n")
            continue
        print(f"## {name}\n\n{markdown(TABLES[name]())}\n")


if __name__ == "__main__":
    main(sys.argv[1:])
