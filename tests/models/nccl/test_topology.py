"""graphs_from_network: the worked channel counts of nccl_model.md §6.7, version rules, refusals."""

from __future__ import annotations

import pytest

from simnet.errors import SimnetError
from simnet.models.nccl import choose, graphs_from_network, network_tuning
from simnet.network import Network
from simnet.topology import cluster, dgx1, dgx_a100, dgx_h100, switch
from tests.models.nccl.conftest import dgx_cluster


def _summary(system, graphs):
    return {
        "ring": (graphs.ring.n_channels, graphs.ring.bw_intra_GBps, graphs.ring.bw_inter_GBps),
        "tree": (graphs.tree.n_channels, graphs.tree.bw_intra_GBps, graphs.tree.bw_inter_GBps),
        "nvls": (graphs.nvls.n_channels, graphs.nvls.bw_intra_GBps, graphs.nvls.bw_inter_GBps),
        "compute": system.n_channels,
        "nvls channels": system.nvls_channels,
    }


def test_single_node_8xa100():
    """§6.7: totalBw = maxBw = 240; ring 6 x 40, duplicated to 12 x 20; tree 12 x 20; 24 compute channels."""
    system, graphs = graphs_from_network(Network(dgx_a100()))
    assert _summary(system, graphs) == {"ring": (12, 20.0, 20.0), "tree": (12, 20.0, 20.0), "nvls": (0, 0.0, 0.0),
                                        "compute": 24, "nvls channels": 0}
    assert (system.min_compcap, system.cpu_vendor, system.nvls_support) == (80, "amd", False)
    assert graphs.ring.same_channels and graphs.tree.pattern == "balanced_tree"


def test_single_node_8xh100():
    """§6.7: 18 x 20.6 = 370.8; ring 6 x 60 -> 12 x 30; tree 12 x 30; NVLS 8 heads at 40, bwInter raised to 60."""
    system, graphs = graphs_from_network(Network(dgx_h100()))
    assert _summary(system, graphs) == {"ring": (12, 30.0, 30.0), "tree": (12, 30.0, 30.0), "nvls": (8, 40.0, 60.0),
                                        "compute": 24, "nvls channels": 16}
    assert (graphs.ring.type_intra, graphs.ring.type_inter) == ("NVL", "PIX")


def test_multi_node_dgx_h100_rail_optimised():
    """§6.7: maxBw 48 (PCIe Gen5 x16 to an NDR NIC); ring 8 x 48, not duplicated; 16 compute channels;
    NVLS 8 heads, bwIntra 40, bwInter 48."""
    system, graphs = graphs_from_network(dgx_cluster("dgx_h100", 4))
    assert _summary(system, graphs) == {"ring": (8, 48.0, 48.0), "tree": (8, 48.0, 48.0), "nvls": (8, 40.0, 48.0),
                                        "compute": 16, "nvls channels": 16}
    assert (system.n_ranks, system.n_nodes, system.max_local_ranks) == (32, 4, 8)
    assert not graphs.ring.same_channels


def test_multi_node_dgx_a100_rail_optimised():
    """§6.7: maxBw 24 (PCIe Gen4 x16 to an HDR NIC); ring 8 x 24, not duplicated (24 < 25); 16 compute channels.
    The tree's pass 2 raises its intra-node bandwidth while it stays below twice the network's (30 GB/s)."""
    system, graphs = graphs_from_network(dgx_cluster("dgx_a100", 2))
    assert _summary(system, graphs) == {"ring": (8, 24.0, 24.0), "tree": (8, 30.0, 24.0), "nvls": (0, 0.0, 0.0),
                                        "compute": 16, "nvls channels": 0}


def test_version_rules():
    """SM90 NVLink is 20.0 GB/s before 2.20 (18 x 20 = 360: ring 6 x 60 already perfect); 2.18-2.19 double
    multi-node SM90 compute channels while 2n <= 64; 2.20+ raise compute channels to nvlsChannels."""
    h100 = Network(dgx_h100())
    system, graphs = graphs_from_network(h100, "2.19.4")
    assert (graphs.ring.n_channels, graphs.ring.bw_intra_GBps, graphs.nvls.bw_intra_GBps) == (12, 30.0, 40.0)
    cluster = dgx_cluster("dgx_h100", 2)
    assert graphs_from_network(cluster, "2.18.6").system.n_channels == 32
    assert graphs_from_network(cluster, "2.20.5").system.n_channels == 16


def test_ranks_subset_and_nvls_switch():
    h100 = Network(dgx_h100())
    system, graphs = graphs_from_network(h100, ranks=[0, 1, 2, 3])
    assert (system.n_ranks, graphs.nvls.n_channels, graphs.nvls.bw_intra_GBps) == (4, 4, 60.0)
    system, graphs = graphs_from_network(h100, nvls=False)
    assert (system.nvls_support, system.nvls_channels, graphs.nvls.n_channels) == (False, 0, 0)
    assert graphs_from_network(h100, ranks=[5]).system.n_ranks == 1


SIZES = [1 << k for k in range(3, 37)]
"""8 B to 64 GiB, doubling."""


def test_without_a_reducing_nvswitch_nccl_has_no_nvls_and_never_picks_it():
    """An H100 server built with nvls=False has NVSwitches that do not reduce: NCCL's model gets no NVLS (as NCCL
    without NVLS support), so it picks Ring or Tree at every size where, with NVLS, it picks NVLS from 2 MiB."""
    off = Network(dgx_h100(nvls=False))
    system, graphs = graphs_from_network(off)
    assert (system.nvls_support, system.nvls_channels, graphs.nvls.n_channels) == (False, 0, 0)
    assert {choose(network_tuning(off), "allreduce", size).algorithm for size in SIZES} <= {"ring", "tree"}
    assert "nvls" in {choose(network_tuning(Network(dgx_h100())), "allreduce", size).algorithm for size in SIZES}


def test_a_fabrics_sharp_switch_is_no_nvls_for_servers_without_one():
    """Servers without NVLS on a SHARP fabric: the fabric's switches reduce and serve each server's GPUs, but NVLS
    and NVLSTree need the server's own NVSwitch, so the model has neither; with NVLS servers it has both."""
    fabric = {"leaves": 8, "spines": 4, "hosts_per_leaf": 2, "bandwidth_Bps": 50e9, "latency_s": 1e-6, "sharp": True}
    for nvls in (False, True):
        net = Network(cluster("dgx_h100", 2, fabric="leaf_spine", fabric_params=fabric, node_params={"nvls": nvls}))
        system, graphs = graphs_from_network(net)
        assert (system.nvls_support, graphs.nvls.n_channels > 0) == (nvls, nvls)
        picks = {choose(network_tuning(net), "allreduce", size).algorithm for size in SIZES}
        assert bool(picks & {"nvls", "nvls_tree"}) == nvls, picks


def test_one_gpu_per_node_uses_the_tree_pattern():
    system, graphs = graphs_from_network(dgx_cluster("dgx_h100", 2), ranks=[0, 8])
    assert (system.n_nodes, graphs.tree.pattern, graphs.ring.type_intra, graphs.ring.same_channels) == \
        (2, "tree", "LOC", True)


@pytest.mark.parametrize(
    ("network", "kwargs", "path", "match"),
    [
        (Network(dgx1()), {}, "network", "NVSwitch"),
        (Network(switch(4, 12.5e9, 1e-6)), {}, "compute_capability", "no known GPU"),
        (Network(dgx_h100()), {"ranks": [0, 0]}, "ranks", "distinct"),
        (Network(dgx_h100()), {"ranks": [8]}, "ranks", "0..7"),
        (Network(dgx_h100()), {"compute_capability": 9.0}, "compute_capability", "integer"),
        (Network(dgx_h100()), {"cpu_vendor": "Intel"}, "cpu_vendor", "intel"),
        (Network(dgx_h100()), {"nvls": "yes"}, "nvls", "true or false"),
        (Network(dgx_h100()), {"version": "2.17.1"}, "version", "unknown NCCL release"),
    ],
)
def test_refusals_name_the_parameter(network, kwargs, path, match):
    with pytest.raises(SimnetError, match=match) as error:
        graphs_from_network(network, **kwargs)
    assert error.value.path == path


def test_gpus_without_nics_across_hosts_are_refused():
    with pytest.raises(SimnetError, match="needs a NIC") as error:
        graphs_from_network(Network(switch(4, 12.5e9, 1e-6)), compute_capability=90)
    assert error.value.path == "network"
