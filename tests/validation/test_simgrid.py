"""Cross-check simnet's max-min model against SimGrid SMPI (CM02) on exported platforms.

Skipped unless ``smpirun`` and ``smpicc`` are on PATH (Debian/Ubuntu:
``apt-get install libsimgrid-dev``; SimGrid 3.32 was used to write this test).

SMPI is made a plain α-β + flow-level max-min simulator (see ``docs`` and
/work/shared/notes/simgrid.md): CM02 network model, no reverse cross-traffic, no
TCP-γ window bound, no computation, free ``MPI_Wtime``. The platform is written by
:func:`simnet.simgrid.to_simgrid_platform` with explicit routes taken from
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

import networkx as nx
import pytest

from simnet.algorithms import ALGORITHMS
from simnet.engine import simulate
from simnet.network import Network
from simnet.schedule import check
from simnet.smpi import as_mpi, available, compile_program, smpi_time_s
from simnet.topology import leaf_spine, switch, torus

pytestmark = pytest.mark.skipif(not available(), reason="SimGrid SMPI (smpirun, smpicc) is not installed")

B = 12.5e9
LAT = 1e-6
MIB = 2**20

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
    return compile_program(tmp_path_factory.mktemp("smpi"))


def simnet_time_s(graph: nx.DiGraph, algorithm: str, size_bytes: int) -> float:
    network = Network(graph)
    schedule = as_mpi(ALGORITHMS[algorithm].build(network.size, size_bytes))
    check(schedule)
    return simulate(network, schedule, model="maxmin").time_s


@pytest.mark.parametrize("size_bytes", [16 * MIB, 64 * MIB], ids=["16MiB", "64MiB"])
@pytest.mark.parametrize("topology", sorted(TOPOLOGIES))
@pytest.mark.parametrize("algorithm", sorted(PAIRS))
def test_simnet_agrees_with_smpi_within_one_percent(program, tmp_path, algorithm, topology, size_bytes):
    if algorithm not in ALGORITHMS:
        pytest.skip(f"simnet has no {algorithm!r} algorithm yet")
    graph = TOPOLOGIES[topology]()
    reference = smpi_time_s(program, Network(graph), PAIRS[algorithm], size_bytes, tmp_path)
    assert simnet_time_s(graph, algorithm, size_bytes) == pytest.approx(reference, rel=0.01)
