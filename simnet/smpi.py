"""Run SimGrid SMPI as a reference simulator: the MPI program, its flags and the matching schedule.

Shared by the cross-check tests (``tests/validation``) and the benchmarks. SMPI is
made a plain α-β + flow-level max-min simulator: CM02 network model, no reverse
cross-traffic, no TCP-γ window bound, no computation, free ``MPI_Wtime``; buffers
are ``SMPI_SHARED_MALLOC`` with large shared blocks so that a thousand ranks stay
under ``vm.max_map_count``. The platform is either written by
:func:`simnet.simgrid.to_simgrid_platform` with simnet's own routes, or SimGrid's
own cluster (:func:`simnet.simgrid.to_simgrid_cluster`), routed by SimGrid.

Envelope: every SMPI message carries :data:`ENVELOPE_BYTES` on top of its payload
(an isolated message takes ``α + (S + 16) / B``); :func:`as_mpi` adds it to every
transfer and adds the dependencies of SMPI's blocking ``MPI_Sendrecv`` steps, on the
sender's and on the receiver's side (rendezvous), so that simnet runs the same thing.

Ranks start the all-reduce at the same simulated instant: after a barrier they sleep
until t = 1 s with ``sg_actor_sleep_until`` (``nanosleep`` would wake each rank up to 1 ns
early, its own amount, as it truncates the remaining time to whole nanoseconds). The time
is the latest end minus the latest start.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
from pathlib import Path

from simnet.errors import SimnetError
from simnet.network import Network
from simnet.schedule import Schedule
from simnet.simgrid import simgrid_hosts, to_simgrid_cluster, to_simgrid_platform, write_hostfile

__all__ = [
    "ENVELOPE_BYTES",
    "DETACHED_BELOW_BYTES",
    "FLAGS",
    "PROGRAM",
    "available",
    "as_mpi",
    "compile_program",
    "smpi_time_s",
]

ENVELOPE_BYTES = 16

DETACHED_BELOW_BYTES = 65536
"""SMPI 3.32's default ``smpi/send-is-detached-thresh``: a send of fewer payload bytes is
detached (the sender goes on at once, like ``MPI_Isend``); from it on, ``MPI_Send`` behaves
like ``MPI_Ssend``. src/smpi/internals/smpi_config.cpp declares the flag with default 65536
and src/smpi/mpi/smpi_request.cpp (``Request::start``) detaches a send when
``size_ < smpi_cfg_detached_send_thresh()``."""

PROGRAM = r"""
#include <mpi.h>
#include <simgrid/actor.h>
#include <stdio.h>
#include <stdlib.h>

/* Simulated time does not depend on the data: payloads are neither copied nor summed. */
static void no_copy(smx_activity_t comm, void *buffer, size_t size) {}
static void no_sum(void *in, void *inout, int *count, MPI_Datatype *type) {}

int main(int argc, char **argv) {
  smpi_comm_set_copy_data_callback(no_copy);
  MPI_Init(&argc, &argv);
  MPI_Op sum;
  MPI_Op_create(no_sum, 1, &sum);
  long count = atol(argv[1]);
  double *in = SMPI_SHARED_MALLOC(count * sizeof(double));
  double *out = SMPI_SHARED_MALLOC(count * sizeof(double));
  MPI_Barrier(MPI_COMM_WORLD);
  sg_actor_sleep_until(1.0);
  double start = MPI_Wtime();
  MPI_Allreduce(in, out, count, MPI_DOUBLE, sum, MPI_COMM_WORLD);
  double end = MPI_Wtime();
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  printf("%d %.17g %.17g\n", rank, start, end);
  SMPI_SHARED_FREE(in);
  SMPI_SHARED_FREE(out);
  MPI_Finalize();
  return 0;
}
"""
"""An MPI program timing one ``MPI_Allreduce`` of ``argv[1]`` doubles: every rank prints
its rank, start and end. A commutative no-op reduction and SMPI's data-copy callback
(``smpi_comm_set_copy_data_callback``, include/smpi/smpi.h) keep SMPI from moving and
summing gigabytes of payload for nothing: simulated times stay the same, wall time and
memory drop several-fold."""

FLAGS = (
    "--cfg=network/model:CM02",
    "--cfg=network/optim:Full",
    "--cfg=surf/precision:1e-12",
    "--cfg=network/crosstraffic:0",
    "--cfg=network/TCP-gamma:0",
    "--cfg=smpi/simulate-computation:no",
    "--cfg=smpi/wtime:0",
    "--cfg=smpi/host-speed:1Gf",
    "--cfg=smpi/shared-malloc-blocksize:4194304",
    "--log=root.thres:warning",
)
"""smpirun flags making SMPI a plain α-β + max-min simulator (no correction factors).

``network/optim:Full`` re-solves the sharing problem at every event. SimGrid 3.32's default,
``Lazy``, updates only what it believes changed and can miss a rate change: on the 4x4x4
TORUS cluster with ranks shuffled (``random.Random(1)``) and every rank exchanging 64 KiB
with rank ``r ^ 1`` through ``MPI_Sendrecv``, the flow 48 -> 49 keeps running alone after
0 -> 1 joins its link (it ends at 8.243 us instead of 10.190 us), and the answer depends on
whether the ranks post the send or the receive first; ``Full`` gives 10.190 us either way,
which is the weighted max-min allocation.

``surf/precision:1e-12``: SimGrid treats events less than ``surf/precision`` apart as
simultaneous (``double_equals(..., sg_surf_precision)`` in src/surf/network_cm02.cpp), 1e-9 s by
default (src/kernel/lmm/System.cpp). With messages of a few microseconds that is an error of a
few 1e-4 per event, which schedules whose contention depends on the order of events amplify:
the ring on the 4x4x4 TORUS cluster with shuffled ranks at 4 MiB moves from 1.9140 ms to
1.8833 ms when the precision goes from 1 ns to 10 ps, and stays there at 1 ps."""


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
    network: Network,
    algorithm: str,
    size_bytes: int,
    directory: str | os.PathLike,
    *,
    platform: str = "routes",
    timeout_s: float = 120.0,
) -> float:
    """Simulated time of one SMPI ``MPI_Allreduce`` of `size_bytes` on `network`, seconds.

    Parameters
    ----------
    program : path-like
        Binary from :func:`compile_program`.
    network : Network
        Topology and placement (rank ``i`` runs on the host of ``network.ranks[i]``).
    algorithm : str
        SMPI all-reduce algorithm (``"lr"`` ring, ``"rab_rdb"``, ``"rdb"``).
    size_bytes : int
        Payload per rank, bytes (a multiple of 8: it is sent as doubles).
    directory : path-like
        Where the platform and hostfile are written.
    platform : {"routes", "cluster"}, optional
        ``"routes"`` (default): :func:`~simnet.simgrid.to_simgrid_platform`, every
        route simnet's own; ``"cluster"``: SimGrid's own cluster zone
        (:func:`~simnet.simgrid.to_simgrid_cluster`), routed by SimGrid.
    timeout_s : float, optional
        Wall-time limit of ``smpirun``, seconds.

    Raises
    ------
    SimnetError
        For an unknown `platform`, or when ``smpirun`` fails.
    """
    directory = Path(directory)
    path, hosts = directory / "platform.xml", directory / "hosts"
    if platform == "routes":
        to_simgrid_platform(network, path)
        write_hostfile(network, hosts)
    elif platform == "cluster":
        to_simgrid_cluster(network, path)
        write_hostfile(network, hosts, hosts=simgrid_hosts(network))
    else:
        raise SimnetError(f"must be 'routes' or 'cluster', got {platform!r}", path="platform")
    command = [
        "smpirun",
        "-np",
        str(network.size),
        "-platform",
        str(path),
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
    spans = [line.split() for line in done.stdout.splitlines() if len(line.split()) == 3]
    if sorted(int(rank) for rank, _, _ in spans) != list(range(network.size)):
        raise SimnetError(f"smpirun printed {len(spans)} spans for {network.size} ranks:\n{done.stdout[-3000:]}")
    return max(float(end) for _, _, end in spans) - max(float(start) for _, start, _ in spans)


def as_mpi(schedule: Schedule, *, detached_below_bytes: int = DETACHED_BELOW_BYTES) -> Schedule:
    """`schedule` as SMPI runs it: 16-byte envelopes and the dependencies of blocking sendrecv steps.

    SMPI's all-reduce algorithms (``lr``, ``rab_rdb``, ``rdb``) are sequences of
    ``MPI_Sendrecv`` steps: at its ``k``-th step a rank posts its ``k``-th send and its
    ``k``-th receive together and waits for both before it starts step ``k + 1``. The
    schedules compared with them send and receive one message per rank and step, in
    step order, so step ``k`` of a rank is its ``k``-th send and ``k``-th receive in
    schedule order. A message from ``a`` to ``b`` then starts once

    * ``a`` has finished its previous step (sender side): its previous receive has
      arrived and, unless that send was detached, its previous send has been
      delivered;
    * ``b`` has finished its previous step, i.e. posted the receive (receiver side):
      SMPI 3.32 moves a message only once both sides are there. With the default
      ``smpi/async-small-thresh`` of 0 no message is sent eagerly into a permanent
      mailbox (src/smpi/mpi/smpi_request.cpp, ``Request::start``: sends go to the
      receiver's ordinary mailbox; src/kernel/activity/CommImpl.cpp, ``isend``: a
      send without a matching receive waits in the mailbox, unless it is permanent).

    A send of fewer than `detached_below_bytes` payload bytes is detached: its sender
    does not wait for it before its next step (:data:`DETACHED_BELOW_BYTES`).

    Parameters
    ----------
    schedule : Schedule
        A schedule whose every rank sends and receives in steps, listed step by step.
    detached_below_bytes : int, optional
        SMPI's ``smpi/send-is-detached-thresh`` (default 65536).

    Returns
    -------
    Schedule
        The same transfers with ``ENVELOPE_BYTES`` more each and the steps' dependencies.

    Raises
    ------
    SimnetError
        If a step's dependency would point to a later transfer (transfers not listed
        step by step).
    """
    sends: dict[int, list[int]] = {}
    receives: dict[int, list[int]] = {}
    step_of_send, step_of_receive = [], []
    for index, t in enumerate(schedule.transfers):
        step_of_send.append(len(sends.setdefault(t.src, [])))
        sends[t.src].append(index)
        step_of_receive.append(len(receives.setdefault(t.dst, [])))
        receives[t.dst].append(index)

    def finished(rank: int, step: int) -> list[int]:
        """Transfers rank `rank` waits for at the end of its step `step`."""
        done = []
        if 0 <= step < len(receives.get(rank, ())):
            done.append(receives[rank][step])
        if 0 <= step < len(sends.get(rank, ())):
            sent = sends[rank][step]
            if schedule.transfers[sent].nbytes >= detached_below_bytes:
                done.append(sent)
        return done

    transfers = []
    for index, t in enumerate(schedule.transfers):
        steps = finished(t.src, step_of_send[index] - 1) + finished(t.dst, step_of_receive[index] - 1)
        later = [d for d in steps if d >= index]
        if later:
            raise SimnetError(
                f"transfer {index} ({t.src} -> {t.dst}) would wait for the later transfer {later[0]}: "
                "as_mpi needs the transfers listed step by step"
            )
        deps = tuple(dict.fromkeys((*t.deps, *sorted(d for d in steps if d not in t.deps))))
        transfers.append(dataclasses.replace(t, nbytes=t.nbytes + ENVELOPE_BYTES, deps=deps))
    return dataclasses.replace(schedule, transfers=tuple(transfers))
