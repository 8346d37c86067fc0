"""Cross-check simnet's max-min model against SimGrid SMPI (CM02) on exported platforms.

Skipped unless ``smpirun`` and ``smpicc`` are on PATH (Debian/Ubuntu:
``apt-get install libsimgrid-dev``; SimGrid 3.32 was used to write this test).

SMPI is made a plain α-β + flow-level max-min simulator (see ``docs`` and
/work/shared/notes/simgrid.md): CM02 network model, no reverse cross-traffic, no
TCP-γ window bound, no computation, free ``MPI_Wtime``. The platform is written by
:func:`simnet.topology.simgrid.to_simgrid_platform` with explicit routes taken from
simnet's router, so both simulators route every message identically.

Envelope: every SMPI message carries 16 bytes on top of its payload (an isolated
message takes ``α + (S + 16) / B``); simnet is run on the same schedule with 16
bytes added to every transfer, so the comparison is like for like.

Blocking steps: SMPI's algorithms are built from blocking ``MPI_Sendrecv``, so a
rank starts its next message only once its previous send has completed, which
paces every rank of a ring at its slowest hop. simnet's schedules carry data
dependencies only; the test adds to every transfer a dependency on the previous
transfer sent by the same rank, which is what ``MPI_Sendrecv`` imposes.

SMPI's ``lr`` is ring all-reduce (reduce-scatter + all-gather), ``rab_rdb``
Rabenseifner's (recursive halving + recursive doubling), ``rdb`` recursive
doubling. Ranks start the all-reduce at the same simulated instant (they sleep
until t = 1 s after a barrier); the time is the latest end minus that instant.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess

import networkx as nx
import pytest

from simnet.algorithms import ALGORITHMS
from simnet.engine import simulate
from simnet.network import Network
from simnet.schedule import Schedule, check
from simnet.topology import leaf_spine, switch, torus
from simnet.topology.simgrid import to_simgrid_platform, write_hostfile

pytestmark = pytest.mark.skipif(
    shutil.which("smpirun") is None or shutil.which("smpicc") is None,
    reason="SimGrid SMPI (smpirun, smpicc) is not installed",
)

B = 12.5e9
LAT = 1e-6
MIB = 2**20
ENVELOPE_BYTES = 16

PROGRAM = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long count = atol(argv[1]);
  double *in = SMPI_SHARED_MALLOC(count * sizeof(double));
  double *out = SMPI_SHARED_MALLOC(count * sizeof(double));
  MPI_Barrier(MPI_COMM_WORLD);
  double wait = 1.0 - MPI_Wtime();
  struct timespec ts = {(time_t)wait, (long)((wait - (time_t)wait) * 1e9)};
  nanosleep(&ts, NULL);
  double span[2], latest[2];
  span[0] = MPI_Wtime();
  MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  span[1] = MPI_Wtime();
  MPI_Reduce(span, latest, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("%.17g\n", latest[1] - latest[0]);
  SMPI_SHARED_FREE(in);
  SMPI_SHARED_FREE(out);
  MPI_Finalize();
  return 0;
}
"""

FLAGS = [
    "--cfg=network/model:CM02",
    "--cfg=network/crosstraffic:0",
    "--cfg=network/TCP-gamma:0",
    "--cfg=smpi/simulate-computation:no",
    "--cfg=smpi/wtime:0",
    "--cfg=smpi/host-speed:1Gf",
    "--cfg=smpi/shared-malloc-blocksize:4194304",
    "--log=root.thres:warning",
]

PAIRS = {"ring": "lr", "halving_doubling": "rab_rdb", "recursive_doubling": "rdb"}


TOPOLOGIES = {
    "switch": lambda: switch(16, B, LAT),
    "leaf_spine": lambda: leaf_spine(4, 2, 4, B, LAT, oversubscription=2.0),
    "torus": lambda: torus([4, 4], B, LAT),
}
"""16 hosts each: one switch; 4 leaves of 4 hosts under 2 spines (2:1 oversubscribed);
a 4 x 4 torus of routers with one GPU per router and dimension-order routes."""


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    directory = tmp_path_factory.mktemp("smpi")
    source = directory / "allreduce.c"
    source.write_text(PROGRAM)
    binary = directory / "allreduce"
    compile_command = ["smpicc", "-O1", str(source), "-o", str(binary)]
    done = subprocess.run(compile_command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"smpicc failed:\n{done.stderr[-3000:]}"
    return binary


def smpi_time_s(program, graph: nx.DiGraph, algorithm: str, size_bytes: int, directory) -> float:
    platform, hosts = directory / "platform.xml", directory / "hosts"
    network = to_simgrid_platform(graph, platform)
    write_hostfile(network, hosts)
    command = [
        "smpirun",
        "-np",
        str(network.size),
        "-platform",
        str(platform),
        "-hostfile",
        str(hosts),
        "-no-privatize",
        *FLAGS,
        f"--cfg=smpi/allreduce:{algorithm}",
        str(program),
        str(size_bytes // 8),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"smpirun failed ({done.returncode}):\n{done.stderr[-3000:]}"
    return float(done.stdout.split()[-1])


def as_mpi(schedule: Schedule) -> Schedule:
    """Add the 16-byte envelope to every transfer and order each rank's sends (blocking sendrecv)."""
    last_sent: dict[int, int] = {}
    transfers = []
    for index, t in enumerate(schedule.transfers):
        previous = last_sent.get(t.src)
        deps = t.deps if previous is None or previous in t.deps else (*t.deps, previous)
        transfers.append(dataclasses.replace(t, nbytes=t.nbytes + ENVELOPE_BYTES, deps=deps))
        last_sent[t.src] = index
    return dataclasses.replace(schedule, transfers=tuple(transfers))


def simnet_time_s(graph: nx.DiGraph, algorithm: str, size_bytes: int) -> float:
    network = Network(graph)
    schedule = as_mpi(ALGORITHMS[algorithm][1](network.size, size_bytes))
    check(schedule)
    return simulate(network, schedule, model="maxmin").time_s


@pytest.mark.parametrize("size_bytes", [16 * MIB, 64 * MIB], ids=["16MiB", "64MiB"])
@pytest.mark.parametrize("topology", sorted(TOPOLOGIES))
@pytest.mark.parametrize("algorithm", sorted(PAIRS))
def test_simnet_agrees_with_smpi_within_one_percent(program, tmp_path, algorithm, topology, size_bytes):
    if algorithm not in ALGORITHMS:
        pytest.skip(f"simnet has no {algorithm!r} algorithm yet")
    graph = TOPOLOGIES[topology]()
    reference = smpi_time_s(program, graph, PAIRS[algorithm], size_bytes, tmp_path)
    assert simnet_time_s(graph, algorithm, size_bytes) == pytest.approx(reference, rel=0.01)
