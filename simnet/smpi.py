"""Run SimGrid SMPI as a reference simulator: the MPI program, its flags and the matching schedule.

Shared by the cross-check tests (``tests/validation``) and the benchmarks. SMPI is
made a plain α-β + flow-level max-min simulator: CM02 network model, no reverse
cross-traffic, no TCP-γ window bound, no computation, free ``MPI_Wtime``; buffers
are ``SMPI_SHARED_MALLOC`` with large shared blocks so that a thousand ranks stay
under ``vm.max_map_count``. The platform is written by
:func:`simnet.simgrid.to_simgrid_platform` with simnet's own routes.

Envelope: every SMPI message carries :data:`ENVELOPE_BYTES` on top of its payload
(an isolated message takes ``α + (S + 16) / B``); :func:`as_mpi` adds it to every
transfer and makes each rank send in order (SMPI's collectives are built from
blocking ``MPI_Sendrecv``), so that simnet runs the same thing.

Ranks start the all-reduce at the same simulated instant (they sleep until
t = 1 s after a barrier); the printed time is the latest end minus that instant.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
from pathlib import Path

import networkx as nx

from simnet.errors import SimnetError
from simnet.network import Network
from simnet.schedule import Schedule
from simnet.simgrid import to_simgrid_platform, write_hostfile

__all__ = ["ENVELOPE_BYTES", "FLAGS", "PROGRAM", "available", "as_mpi", "compile_program", "smpi_time_s"]

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
"""An MPI program timing one ``MPI_Allreduce`` of ``argv[1]`` doubles."""

FLAGS = (
    "--cfg=network/model:CM02",
    "--cfg=network/crosstraffic:0",
    "--cfg=network/TCP-gamma:0",
    "--cfg=smpi/simulate-computation:no",
    "--cfg=smpi/wtime:0",
    "--cfg=smpi/host-speed:1Gf",
    "--cfg=smpi/shared-malloc-blocksize:4194304",
    "--log=root.thres:warning",
)
"""smpirun flags making SMPI a plain α-β + max-min simulator (no correction factors)."""


def available() -> bool:
    """Whether ``smpirun`` and ``smpicc`` are on PATH."""
    return shutil.which("smpirun") is not None and shutil.which("smpicc") is not None


def compile_program(directory: str | os.PathLike) -> Path:
    """Compile :data:`PROGRAM` with ``smpicc`` into `directory`; return the binary's path."""
    directory = Path(directory)
    source = directory / "allreduce.c"
    source.write_text(PROGRAM)
    binary = directory / "allreduce"
    done = subprocess.run(
        ["smpicc", "-O1", str(source), "-o", str(binary)], capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0:
        raise SimnetError(f"smpicc failed:\n{done.stderr[-3000:]}")
    return binary


def smpi_time_s(
    program: str | os.PathLike,
    graph: nx.DiGraph,
    algorithm: str,
    size_bytes: int,
    directory: str | os.PathLike,
    *,
    timeout_s: float = 120.0,
) -> float:
    """Simulated time of one SMPI ``MPI_Allreduce`` of `size_bytes` on `graph`, seconds.

    Parameters
    ----------
    program : path-like
        Binary from :func:`compile_program`.
    graph : networkx.DiGraph
        Topology; its :class:`~simnet.network.Network` is exported with
        :func:`~simnet.simgrid.to_simgrid_platform`.
    algorithm : str
        SMPI all-reduce algorithm (``"lr"`` ring, ``"rab_rdb"``, ``"rdb"``).
    size_bytes : int
        Payload per rank, bytes (a multiple of 8: it is sent as doubles).
    directory : path-like
        Where the platform and hostfile are written.
    timeout_s : float, optional
        Wall-time limit of ``smpirun``, seconds.
    """
    directory = Path(directory)
    platform, hosts = directory / "platform.xml", directory / "hosts"
    network = Network(graph)
    to_simgrid_platform(network, platform)
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
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
    if done.returncode != 0:
        raise SimnetError(f"smpirun failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return float(done.stdout.split()[-1])


def as_mpi(schedule: Schedule) -> Schedule:
    """`schedule` as SMPI runs it: 16-byte envelopes, and each rank's sends in order (blocking sendrecv)."""
    last_sent: dict[int, int] = {}
    transfers = []
    for index, t in enumerate(schedule.transfers):
        previous = last_sent.get(t.src)
        deps = t.deps if previous is None or previous in t.deps else (*t.deps, previous)
        transfers.append(dataclasses.replace(t, nbytes=t.nbytes + ENVELOPE_BYTES, deps=deps))
        last_sent[t.src] = index
    return dataclasses.replace(schedule, transfers=tuple(transfers))
