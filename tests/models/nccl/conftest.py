"""Communicators shared by the NCCL model tests: derived DGX servers and clusters, and hand-built graphs."""

from __future__ import annotations

import pytest

from simnet.models.nccl import NcclGraph, NcclGraphs, NcclSystem, graphs_from_network
from simnet.network import Network
from simnet.topology import cluster, dgx_a100, dgx_h100


def dgx_cluster(node: str, nodes: int) -> Network:
    """``nodes`` DGX servers on a rail-optimised leaf-spine (one leaf per rail), NIC port rates of the template."""
    port = 50e9 if node == "dgx_h100" else 25e9
    fabric = {"leaves": 8, "spines": 4, "hosts_per_leaf": nodes, "bandwidth_Bps": port, "latency_s": 1e-6}
    return Network(cluster(node, nodes, fabric="leaf_spine", fabric_params=fabric))


@pytest.fixture(scope="session")
def communicators():
    """Name -> (system, graphs): derived single nodes and clusters, a 3-node H100 and a 2-rank socket pair."""
    shared = dict(n_channels=8, bw_intra_GBps=24.0, bw_inter_GBps=24.0, type_intra="NVL", type_inter="PIX")
    return {
        "h100": graphs_from_network(Network(dgx_h100())),
        "a100": graphs_from_network(Network(dgx_a100())),
        "h100x4": graphs_from_network(dgx_cluster("dgx_h100", 4)),
        "a100x4": graphs_from_network(dgx_cluster("dgx_a100", 4)),
        "h100x3_log": (
            NcclSystem(n_ranks=24, n_nodes=3, min_compcap=90, n_channels=16, nvls_channels=16, nvls_support=True,
                       has_nvswitch=True),
            NcclGraphs(ring=NcclGraph("ring", **shared), tree=NcclGraph("tree", **shared),
                       nvls=NcclGraph("nvls", **shared)),
        ),
        "socket": (
            NcclSystem(n_ranks=2, n_nodes=2, min_compcap=120, n_channels=4),
            NcclGraphs(ring=NcclGraph("ring", 2, 1.2, 1.2, "LOC", "PHB", True),
                       tree=NcclGraph("tree", 2, 2.4, 1.2, "LOC", "PHB", True)),
        ),
    }
