"""DGX machines calibrated from public sources only, and the published nccl-tests figures they face.

Calibration (never fitted to the figures in :data:`PUBLISHED`):

* NVLink: NCCL's own effective per-link rate, ``SM80_NVLINK_BW 20.0`` (A100),
  ``SM90_NVLINK_BW 20.6`` (H100) and ``SM100_NVLINK_BW 40.1`` (B200, GB200; 2.27.5
  and later, 40.0 in 2.26 to 2.27.3) GB/s in NVIDIA/nccl ``src/graph/topo.h``, i.e.
  the 25 GB/s line rate of one NVLink3/4 link (50 GB/s for NVLink 5) less the ~20 %
  packet overhead
  (S. Jeaugey in NVIDIA/nccl#1054: "the app-level bandwidth is 80% of the peak
  bandwidth"; NVIDIA/nccl-tests#149: "25GB/s ... converts to ~20GB/s effective
  bandwidth with a 128B payload size").
* InfiniBand: NCCL's ``NET_BW 12.0`` GB/s for a 100 Gbit/s port (same file), i.e.
  96 % of line rate: 24 GB/s for HDR 200 Gb/s, 48 GB/s for NDR 400 Gb/s (the
  ConnectX-7 ports of B200 and GB200 systems too).
* NVSwitch planes: an A100, H100 or B200 stripes its traffic to another GPU over all
  of its NVLinks, hence over every NVSwitch chip; the templates model a server's
  (or an NVL72 rack's) planes as one crossbar (their default), so a GPU port carries
  all of the GPU's links (12 x 20 = 240 GB/s on A100, 18 x 20.6 = 370.8 GB/s on
  H100, 18 x 40.1 = 721.8 GB/s on B200).

Everything else (PCIe, latencies, fabric) is the templates' defaults.
"""

from __future__ import annotations

from typing import NamedTuple

import networkx as nx
import pandas as pd

from simnet.algorithms import ALGORITHMS
from simnet.analysis import busbw_factor
from simnet.engine import simulate
from simnet.network import Network
from simnet.topology import NODES, cluster
from simnet.units import format_size

__all__ = [
    "published_comparison",
    "NVLINK_EFFECTIVE_Bps",
    "NIC_EFFECTIVE_Bps",
    "Published",
    "PUBLISHED",
    "calibrated_node",
    "calibrated_cluster",
]

NVLINK_EFFECTIVE_Bps = {"dgx_a100": 20.0e9, "dgx_h100": 20.6e9, "dgx_b200": 40.1e9, "gb200_nvl72": 40.1e9}
"""NCCL's effective bandwidth of one NVLink, bytes/s (topo.h SM80_, SM90_ and SM100_NVLINK_BW)."""

NIC_EFFECTIVE_Bps = {
    "dgx_a100": 200e9 / 8 * 0.96, "dgx_h100": 400e9 / 8 * 0.96, "dgx_b200": 400e9 / 8 * 0.96,
    "gb200_nvl72": 400e9 / 8 * 0.96,
}
"""Effective InfiniBand port rate, bytes/s: line rate times NET_BW / 100 Gbit/s = 12 / 12.5."""

TOPO_H = (
    "NVIDIA/nccl src/graph/topo.h: SM80_NVLINK_BW 20.0, SM90_NVLINK_BW 20.6, SM100_NVLINK_BW 40.1 (2.27.5 and "
    "later), NET_BW 12.0 (100Gbit)"
)


def _node_params(kind: str, nic_share: float = 1.0) -> dict:
    return {
        "nvlink_bandwidth_Bps": NVLINK_EFFECTIVE_Bps[kind],
        "nic_bandwidth_Bps": NIC_EFFECTIVE_Bps[kind] * nic_share,
    }


def calibrated_node(kind: str) -> nx.DiGraph:
    """One server (or NVL72 rack) of a kind in :data:`NVLINK_EFFECTIVE_Bps` at NCCL's effective rates.

    Kinds: ``"dgx_a100"``, ``"dgx_h100"``, ``"dgx_b200"``, ``"gb200_nvl72"``.
    """
    return NODES[kind](**_node_params(kind))


def calibrated_cluster(kind: str, nodes: int, *, nic_share: float = 1.0) -> nx.DiGraph:
    """`nodes` calibrated servers, NIC ``j`` of every server on leaf ``j`` (rail-optimised, non-blocking).

    One leaf per NIC of the template (8 for the DGX servers, 72 for an NVL72 rack).
    ``nic_share`` scales every NIC: 0.5 models a server with 4 NICs for 8 GPUs (each
    GPU's share of a NIC is half a port), as in the HGX systems of the multi-node rows.
    """
    fabric = {
        "leaves": sum(1 for _, node_kind in calibrated_node(kind).nodes(data="kind") if node_kind == "nic"),
        "spines": 4,
        "hosts_per_leaf": nodes,
        "bandwidth_Bps": NIC_EFFECTIVE_Bps[kind],
        "latency_s": 1e-6,
    }
    return cluster(kind, nodes, fabric="leaf_spine", fabric_params=fabric, node_params=_node_params(kind, nic_share))


class Published(NamedTuple):
    """One published nccl-tests all_reduce_perf figure and the simnet run set beside it."""

    machine: str
    kind: str
    nodes: int
    nic_share: float
    size_bytes: int
    algorithm: str
    params: dict
    busbw_GBps: float
    source: str
    quote: str
    intra_node: bool


PUBLISHED = (
    Published(
        "8x A100 SXM4, NVSwitch (1 node)",
        "dgx_a100",
        1,
        1.0,
        8 << 30,
        "ring",
        {},
        230.0,
        "NVIDIA/nccl-tests#149 (S. Jeaugey, 2023-07-05)",
        "total effective bandwidth should be 240GB/s on A100, but other bottlenecks limit it to ~230GB/s; "
        "run up to 8G to reach 230 GB/s",
        True,
    ),
    Published(
        "8x H100 SXM5, NVSwitch, NCCL_ALGO=RING (1 node)",
        "dgx_h100",
        1,
        1.0,
        8 << 30,
        "ring",
        {},
        370.0,
        "NVIDIA/nccl-tests#212 (S. Jeaugey, 2024-05-06)",
        "450GB/s is the line rate; with the protocol overhead (~20%) NCCL gets an effective NVLink "
        "bandwidth of 370GB/s, observed as BusBw with NCCL_ALGO=RING",
        True,
    ),
    Published(
        "8x H100 SXM5, NCCL_ALGO=RING, 2G-4G (1 node)",
        "dgx_h100",
        1,
        1.0,
        4 << 30,
        "ring",
        {},
        367.5,
        "NVIDIA/nccl#1455 (measured, 2024-09-19)",
        "when using ALGO=RING, busbw is about 365-370 GBps when gpus from 2 to 8",
        True,
    ),
    Published(
        "2x HGX A100, 4 HDR NICs per node (16 GPUs)",
        "dgx_a100",
        2,
        0.5,
        8 << 30,
        "blueconnect",
        {"factors": [8, 2]},
        91.0,
        "NVIDIA/nccl-tests#100 (measured, 2022-01-17)",
        "two HGX-A100 with four ConnectX-6 IB 200Gbps, all_reduce_perf -b 1G -e 8G reaches 91GB/s busbw",
        False,
    ),
    Published(
        "3x A100 SXM4 servers, 4 HDR NICs per node (24 GPUs)",
        "dgx_a100",
        3,
        0.5,
        128 << 20,
        "blueconnect",
        {"factors": [8, 3]},
        96.0,
        "NVIDIA/nccl-tests#119 (measured, 2022-11-17)",
        "3 servers x 8 A100 SXM4, 4 HDR cards: theoretical 100GB/s, average 84.8GB/s, peak about 96GB/s "
        "(up to 128M)",
        False,
    ),
)
"""Published all-reduce bus bandwidths (GB/s) with their sources.

The multi-node systems have 4 HDR NICs for 8 GPUs; they are modelled with the
8-NIC template at half a port per GPU (``nic_share = 0.5``), the same 100 GB/s of
line rate per server (96 GB/s effective). NCCL runs one ring per NIC there, so
every NIC carries traffic; simnet's ``ring`` is a single ring of ranks that
crosses each server boundary through one NIC, so the rows use BlueConnect with
``[GPUs per node, nodes]``: eight concurrent rail rings between the servers,
which is how NCCL's channels spread over the rails.
"""


def published_comparison() -> pd.DataFrame:
    """One row per :data:`PUBLISHED` figure: simulated busbw, published busbw, relative error."""
    rows = []
    for row in PUBLISHED:
        graph = calibrated_node(row.kind) if row.nodes == 1 else calibrated_cluster(
            row.kind, row.nodes, nic_share=row.nic_share
        )
        network = Network(graph)
        schedule = ALGORITHMS[row.algorithm].builder(network.size, row.size_bytes, **row.params)
        time_s = simulate(network, schedule).time_s
        busbw = row.size_bytes / time_s * busbw_factor("allreduce", network.size) / 1e9
        rows.append(
            {
                "machine": row.machine,
                "GPUs": network.size,
                "size": format_size(row.size_bytes),
                "simnet algorithm": row.algorithm + (f" {row.params['factors']}" if row.params else ""),
                "simnet busbw GB/s": busbw,
                "published busbw GB/s": row.busbw_GBps,
                "error": busbw / row.busbw_GBps - 1,
                "intra-node": row.intra_node,
                "source": row.source,
            }
        )
    return pd.DataFrame(rows)
