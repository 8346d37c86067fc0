"""Hand-built topologies for the algorithm and model tests (no builder on main yet)."""

import networkx as nx

from simnet.topology import add_cable, validate

__all__ = ["full_mesh", "dgx_cluster"]


def full_mesh(nranks: int, bandwidth_Bps: float = 12.5e9, latency_s: float = 1e-6) -> nx.DiGraph:
    """Every GPU pair on its own cable: transfers share a link only if they share (src, dst)."""
    graph = nx.DiGraph(name=f"full_mesh({nranks})")
    for i in range(nranks):
        graph.add_node(f"gpu{i}", kind="gpu", host=i)
    for i in range(nranks):
        for j in range(i + 1, nranks):
            add_cable(graph, f"gpu{i}", f"gpu{j}", bandwidth_Bps, latency_s, "fabric")
    return validate(graph)


def dgx_cluster(
    nodes: int = 4,
    gpus_per_node: int = 8,
    nvswitch_Bps: float = 150e9,
    nvswitch_latency_s: float = 0.5e-6,
    nic_Bps: float = 12.5e9,
    nic_latency_s: float = 2e-6,
) -> nx.DiGraph:
    """DGX-style nodes: GPUs on a fast NVSwitch, one slow NIC per node on a leaf switch.

    Defaults: NVSwitch 150 GB/s per GPU per direction (DGX-2: 6 NVLink2 links of
    25 GB/s, NVIDIA DGX-2 datasheet); one 100 Gb/s (12.5 GB/s) NIC per node.
    Ranks are numbered node by node; GPUs carry ``host``, ``local_rank`` and ``leaf``.
    """
    graph = nx.DiGraph(name=f"dgx_cluster({nodes}x{gpus_per_node})")
    for node in range(nodes):
        for local in range(gpus_per_node):
            graph.add_node(f"n{node}g{local}", kind="gpu", host=node, local_rank=local, leaf=0)
    graph.add_node("leaf", kind="switch")
    for node in range(nodes):
        graph.add_node(f"n{node}sw", kind="switch")
        graph.add_node(f"n{node}nic", kind="nic", host=node)
        for local in range(gpus_per_node):
            add_cable(graph, f"n{node}g{local}", f"n{node}sw", nvswitch_Bps, nvswitch_latency_s, "nvlink")
        add_cable(graph, f"n{node}sw", f"n{node}nic", nvswitch_Bps, nvswitch_latency_s, "pcie")
        add_cable(graph, f"n{node}nic", "leaf", nic_Bps, nic_latency_s, "ib")
    return validate(graph)
