"""DGX machines calibrated from public sources only, and the published nccl-tests figures they face.

The machines are :func:`calibrated_node` and :func:`calibrated_cluster`, defined in
:mod:`simnet.topology.calibrated` (where their sources are listed) and re-exported
here: the templates at NCCL's effective rates, ``SM80/SM90/SM100_NVLINK_BW`` per
NVLink and ``NET_BW`` per 100 Gbit/s of InfiniBand (NVIDIA/nccl ``src/graph/topo.h``),
never fitted to the figures in :data:`PUBLISHED`. Both are topology builders, so a
scenario or topology file asks for them by name with the parameters of the Python
call::

    topology: {builder: calibrated_node, kind: dgx_h100}
    topology: {builder: calibrated_cluster, kind: dgx_h100, nodes: 8, pxn: true}

build the same graphs as ``calibrated_node("dgx_h100")`` and
``calibrated_cluster("dgx_h100", 8, pxn=True)``. The presets and plain templates
(``topology: dgx_h100``) stay at line rate.
"""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd

from simnet.algorithms import ALGORITHMS
from simnet.analysis import busbw_factor
from simnet.engine import simulate
from simnet.network import Network
from simnet.topology.calibrated import NIC_EFFECTIVE_Bps, NVLINK_EFFECTIVE_Bps, calibrated_cluster, calibrated_node
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
