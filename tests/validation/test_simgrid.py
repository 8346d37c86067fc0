"""Cross-check simnet's max-min model against SimGrid SMPI (CM02): on platforms exported with
simnet's routes, and on SimGrid's own FAT_TREE and TORUS clusters, routed by SimGrid.

Skipped unless ``smpirun`` and ``smpicc`` are on PATH (Debian/Ubuntu:
``apt-get install libsimgrid-dev``; SimGrid 3.32 was used to write this test).

SMPI is made a plain α-β + flow-level max-min simulator (see ``docs/fidelity.md`` and
:mod:`simnet.smpi`): CM02 network model, exact re-solving (``network/optim:Full``), no
reverse cross-traffic, no TCP-γ window bound, no computation, free ``MPI_Wtime``. simnet runs
the same schedule as SMPI (:func:`simnet.smpi.as_mpi`: 16-byte envelopes, the sender's and
the receiver's side of blocking ``MPI_Sendrecv`` steps, sends below 64 KiB detached).

Two kinds of platform:

* ``EXPORTED``: simnet topologies written with :func:`simnet.simgrid.to_simgrid_platform`,
  every route simnet's own, so both simulators route every message identically;
* ``CLUSTERS``: SimGrid's own ``<cluster>`` zones (:func:`simnet.simgrid.to_simgrid_cluster`)
  against the matching simnet topology with ``routing="simgrid"`` (SimGrid's FatTreeZone and
  TorusZone rules) and ``sharing="rtt_weighted"`` (CM02 weighs a flow by 1 / its route latency).
  ``test_simgrid_routes_every_pair_as_simnet_does`` checks the routing itself, link for link.

Placements: ``ordered`` puts rank ``r`` on SimGrid host ``r``; ``shuffled`` on host
``SHUFFLED[r]`` (the issue's order on 16 hosts, a fixed random one on 64).

SMPI's ``lr`` is ring all-reduce (reduce-scatter + all-gather), ``rab_rdb`` Rabenseifner's
(recursive halving + recursive doubling), ``rdb`` recursive doubling. Ranks start the
all-reduce at the same simulated instant (they sleep until t = 1 s after a barrier).

Most of the module's time is SMPI on 64 hosts at 64 MiB.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess

import networkx as nx
import pytest

from simnet.algorithms import ALGORITHMS
from simnet.engine import simulate
from simnet.network import Network
from simnet.schedule import check
from simnet.simgrid import simgrid_hosts, to_simgrid_cluster
from simnet.smpi import as_mpi, available, compile_program, smpi_time_s
from simnet.topology import Router, gpus, leaf_spine, pgft, switch, torus

pytestmark = pytest.mark.skipif(not available(), reason="SimGrid SMPI (smpirun, smpicc) is not installed")

B = 12.5e9
LAT = 1e-6
KIB, MIB = 2**10, 2**20

PAIRS = {"ring": "lr", "halving_doubling": "rab_rdb", "recursive_doubling": "rdb"}

EXPORTED = {
    "switch": lambda: switch(16, B, LAT),
    "leaf_spine": lambda: leaf_spine(4, 2, 4, B, LAT, oversubscription=2.0),
    "torus": lambda: torus([4, 4], B, LAT),
}
"""16 hosts each: one switch; 4 leaves of 4 hosts under 2 spines (2:1 oversubscribed, d-mod-k);
a 4 x 4 torus of routers with one GPU per router and dimension-order routes."""

CLUSTERS = {
    "fat_tree_2l": lambda: pgft([4, 4], [1, 2], B, LAT, parallel=[1, 2]),
    "fat_tree_3l": lambda: pgft([4, 4, 4], [1, 4, 4], B, LAT),
    "torus_4x4": lambda: torus([4, 4], B, LAT, gpu_routers=True),
    "torus_4x4x4": lambda: torus([4, 4, 4], B, LAT, gpu_routers=True),
}
"""SimGrid clusters FAT_TREE 2;4,4;1,2;1,2 (16 hosts, two cables per leaf-spine pair; the
example of SimGrid's docs after Zahavi's D-mod-K paper), FAT_TREE 3;4,4,4;1,4,4;1,1,1 (the
4-ary 3-tree, 64 hosts), TORUS 4,4 and 4,4,4 (hosts are the routers), all 12.5 GB/s, 1 us."""

SHUFFLED = {
    16: [2, 10, 0, 14, 6, 5, 3, 8, 7, 11, 15, 1, 12, 13, 9, 4],
    64: [22, 12, 52, 3, 19, 5, 60, 58, 2, 33, 10, 8, 29, 26, 25, 9, 44, 18, 62, 11, 47, 40, 15, 39, 56, 57, 32, 23,
         49, 43, 21, 45, 42, 34, 35, 46, 20, 61, 37, 14, 63, 53, 0, 38, 27, 50, 1, 55, 6, 13, 24, 41, 30, 28, 59, 31,
         7, 16, 4, 48, 51, 54, 36, 17],
}
"""SimGrid host of each rank, shuffled: issue 15's order, and random.Random(1).shuffle(range(64))."""

SIZES = {"64KiB": 64 * KIB, "4MiB": 4 * MIB, "64MiB": 64 * MIB}


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    return compile_program(tmp_path_factory.mktemp("smpi"))


def simnet_time_s(graph: nx.DiGraph, algorithm: str, size_bytes: int) -> float:
    """simnet's time of `algorithm` on an exported platform (simnet's own routing and sharing)."""
    network = Network(graph)
    schedule = as_mpi(ALGORITHMS[algorithm].build(network.size, size_bytes))
    check(schedule)
    return simulate(network, schedule, model="maxmin").time_s


def cluster_network(graph: nx.DiGraph, placement: str) -> Network:
    """`graph` routed as SimGrid does, its ranks on SimGrid hosts in `placement` order (simulate it with
    ``sharing="rtt_weighted"``, SimGrid's CM02 sharing)."""
    by_host = {host: gpu for host, gpu in zip(simgrid_hosts(Network(graph)), gpus(graph))}
    order = range(len(by_host)) if placement == "ordered" else SHUFFLED[len(by_host)]
    return Network(graph, routing="simgrid", ranks=[by_host[f"host{h}"] for h in order])


@pytest.mark.parametrize("size", ["16MiB", "64MiB"])
@pytest.mark.parametrize("topology", sorted(EXPORTED))
@pytest.mark.parametrize("algorithm", sorted(PAIRS))
def test_simnet_agrees_with_smpi_on_exported_platforms(program, tmp_path, algorithm, topology, size):
    graph = EXPORTED[topology]()
    size_bytes = {"16MiB": 16 * MIB, "64MiB": 64 * MIB}[size]
    reference = smpi_time_s(program, Network(graph), PAIRS[algorithm], size_bytes, tmp_path)
    assert simnet_time_s(graph, algorithm, size_bytes) == pytest.approx(reference, rel=0.01)


@pytest.mark.parametrize("routing", ["ecmp_hash", "dmodk"])
@pytest.mark.parametrize("algorithm", sorted(PAIRS))
def test_shuffled_ranks_on_an_exported_leaf_spine(program, tmp_path, algorithm, routing):
    """Issue 15's case: ranks in SHUFFLED[16] order on leaf_spine(4, 2, 4), 64 MiB, with ECMP and d-mod-k
    routes; it needs both sides of MPI_Sendrecv's dependencies (simnet.smpi.as_mpi)."""
    graph = leaf_spine(4, 2, 4, B, LAT)
    ranks = gpus(graph)
    network = Network(graph, routing=routing, ranks=[ranks[i] for i in SHUFFLED[16]])
    reference = smpi_time_s(program, network, PAIRS[algorithm], 64 * MIB, tmp_path)
    schedule = as_mpi(ALGORITHMS[algorithm].build(network.size, 64 * MIB))
    assert simulate(network, schedule, sharing="rtt_weighted").time_s == pytest.approx(reference, rel=1e-6)


@pytest.mark.parametrize("size", sorted(SIZES))
@pytest.mark.parametrize("placement", ["ordered", "shuffled"])
@pytest.mark.parametrize("algorithm", sorted(PAIRS))
@pytest.mark.parametrize("cluster", sorted(CLUSTERS))
def test_simnet_agrees_with_smpi_on_simgrids_own_clusters(program, tmp_path, cluster, algorithm, placement, size):
    network = cluster_network(CLUSTERS[cluster](), placement)
    reference = smpi_time_s(program, network, PAIRS[algorithm], SIZES[size], tmp_path, platform="cluster")
    schedule = as_mpi(ALGORITHMS[algorithm].build(network.size, SIZES[size]))
    assert simulate(network, schedule, sharing="rtt_weighted").time_s == pytest.approx(reference, rel=0.01)


ROUTES_PROGRAM = r"""
#include <simgrid/s4u.hpp>
#include <cstdio>
int main(int argc, char** argv) {
  simgrid::s4u::Engine engine(&argc, argv);
  engine.load_platform(argv[1]);
  for (auto* a : engine.get_all_hosts())
    for (auto* b : engine.get_all_hosts()) {
      if (a == b) continue;
      std::vector<simgrid::s4u::Link*> links;
      double latency = 0;
      a->route_to(b, links, &latency);
      std::printf("%s %s", a->get_cname(), b->get_cname());
      for (auto* link : links) std::printf(" %s", link->get_cname());
      std::printf("\n");
    }
  return 0;
}
"""
"""Prints every route of a platform, as SimGrid computes it, link names in order."""


def _fat_tree_links(graph: nx.DiGraph) -> dict:
    """FatTreeZone's link number -> (child, parent, cable): it cables nodes level by level, in
    position order, each to its parents in position order, ``parallel`` cables each."""
    down = graph.graph["params"]["down"]
    levels = len(down)
    children = [f"gpu{i}" for i in range(math.prod(down))]
    children += sorted((n for n in graph if n.startswith("s") and int(n[1:].split("_")[0]) < levels),
                       key=lambda n: tuple(map(int, n[1:].split("_"))))
    links = {}
    for child in children:
        level = 0 if child.startswith("gpu") else int(child[1:].split("_")[0])
        parents = sorted((v for v in graph.successors(child) if v.startswith(f"s{level + 1}_")),
                         key=lambda v: int(v.split("_")[1]))
        for parent in parents:
            for cable in range(graph.edges[child, parent].get("cables", 1)):
                links[len(links)] = (child, parent, cable)
    return links


@pytest.fixture(scope="module")
def route_dumper(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.skip("g++ is needed to build the route dumper")
    directory = tmp_path_factory.mktemp("routes")
    source, binary = directory / "routes.cpp", directory / "routes"
    source.write_text(ROUTES_PROGRAM)
    subprocess.run(["g++", "-std=c++17", "-O1", str(source), "-o", str(binary), "-lsimgrid"], check=True, timeout=300)
    return binary


@pytest.mark.parametrize("cluster", sorted(CLUSTERS) + ["fat_tree_cables_2_levels"])
def test_simgrid_routes_every_pair_as_simnet_does(route_dumper, cluster, tmp_path):
    """SimGrid's own routes, link for link and cable for cable, equal simnet's routing "simgrid"
    (the extra 3-level tree has bundles at two levels, where FatTreeZone's port scan matters)."""
    binary = route_dumper
    graph = CLUSTERS[cluster]() if cluster in CLUSTERS else pgft([2, 3, 2], [1, 2, 3], B, LAT, parallel=[1, 2, 2])
    network = Network(graph, routing="simgrid")
    to_simgrid_cluster(network, tmp_path / "platform.xml")
    done = subprocess.run([str(binary), str(tmp_path / "platform.xml"), "--log=root.thres:critical"],
                          capture_output=True, text=True, check=True, timeout=300)
    gpu = dict(zip(simgrid_hosts(network), network.ranks))
    router = Router(graph, routing="simgrid")
    fat_tree = graph.graph["builder"] == "pgft"
    numbered = _fat_tree_links(graph) if fat_tree else None
    routes = 0
    for line in done.stdout.splitlines():
        a, b, *names = line.split()
        theirs = []
        for name in names:
            if fat_tree:
                child, parent, cable = numbered[int(re.fullmatch(r"link_from_\d+_\d+_(\d+)_(UP|DOWN)", name)[1])]
                theirs.append((child, parent, cable) if name.endswith("_UP") else (parent, child, cable))
            else:
                u, v, way = re.fullmatch(r"simnet_link_from_(\d+)_to_(\d+)_(UP|DOWN)", name).groups()
                u, v = gpu[f"host{u}"], gpu[f"host{v}"]
                theirs.append((u, v, 0) if way == "UP" else (v, u, 0))
        assert router.hops(gpu[a], gpu[b]) == theirs, (a, b)
        routes += 1
    assert routes == network.size * (network.size - 1)
