"""DGX machines at NCCL's effective link rates: the builders ``calibrated_node`` and ``calibrated_cluster``.

The templates of :mod:`simnet.topology.nodes` run at line rate; these builders give
the same machines at the rates NCCL itself reaches, from public sources only (never
fitted to a measurement; :mod:`simnet.calibration` sets them beside published
nccl-tests figures):

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

Everything else (PCIe, latencies, fabric) is the templates' defaults. Both functions
are builders of :data:`simnet.topology.BUILDERS`, so a scenario or a topology file
names them as any other (``topology: {builder: calibrated_node, kind: dgx_h100}``).
"""

from __future__ import annotations

import inspect

import networkx as nx

from simnet.errors import TopologyError, did_you_mean
from simnet.topology.cluster import cluster
from simnet.topology.fabrics import _check_int
from simnet.topology.nodes import NODES

__all__ = ["NVLINK_EFFECTIVE_Bps", "NIC_EFFECTIVE_Bps", "calibrated_node", "calibrated_cluster"]

NVLINK_EFFECTIVE_Bps = {"dgx_a100": 20.0e9, "dgx_h100": 20.6e9, "dgx_b200": 40.1e9, "gb200_nvl72": 40.1e9}
"""NCCL's effective bandwidth of one NVLink, bytes/s (topo.h SM80_, SM90_ and SM100_NVLINK_BW)."""

NIC_EFFECTIVE_Bps = {
    "dgx_a100": 200e9 / 8 * 0.96, "dgx_h100": 400e9 / 8 * 0.96, "dgx_b200": 400e9 / 8 * 0.96,
    "gb200_nvl72": 400e9 / 8 * 0.96,
}
"""Effective InfiniBand port rate, bytes/s: line rate times NET_BW / 100 Gbit/s = 12 / 12.5."""


def _check_kind(kind: object) -> None:
    if not isinstance(kind, str) or kind not in NVLINK_EFFECTIVE_Bps:
        kinds = list(NVLINK_EFFECTIVE_Bps)
        raise TopologyError(f"no calibrated machine {kind!r}{did_you_mean(str(kind), kinds)} "
                            f"(expected one of: {', '.join(kinds)})", path="kind")


def _node_params(kind: str, nic_share: float = 1.0, nvls: bool | None = None) -> dict:
    takes = "nvls" in inspect.signature(NODES[kind]).parameters
    if nvls and not takes:
        raise TopologyError(f"{kind} has no NVLS to turn on (its NVSwitches do not reduce)", path="nvls")
    return {
        "nvlink_bandwidth_Bps": NVLINK_EFFECTIVE_Bps[kind],
        "nic_bandwidth_Bps": NIC_EFFECTIVE_Bps[kind] * nic_share,
        **({"nvls": nvls} if nvls is not None and takes else {}),
    }


def calibrated_node(kind: str, *, nvls: bool | None = None) -> nx.DiGraph:
    """One server (or NVL72 rack) of a kind in :data:`NVLINK_EFFECTIVE_Bps` at NCCL's effective rates.

    Parameters
    ----------
    kind : str
        ``"dgx_a100"``, ``"dgx_h100"``, ``"dgx_b200"`` or ``"gb200_nvl72"``.
    nvls : bool, optional
        Whether the NVSwitches reduce in flight (the template's ``nvls``; default: the
        template's own, on for Hopper and Blackwell; DGX A100 has none, and takes only
        ``False``).

    Returns
    -------
    networkx.DiGraph
        The template of that name with ``nvlink_bandwidth_Bps`` and
        ``nic_bandwidth_Bps`` at the effective rates (the graph records them as its
        ``params``).

    Raises
    ------
    TopologyError
        For another `kind` (path ``kind``), or `nvls` for a template without it.
    """
    _check_kind(kind)
    return NODES[kind](**_node_params(kind, nvls=nvls))


def calibrated_cluster(kind: str, nodes: int, *, nic_share: float = 1.0, pxn: bool = False,
                       oversubscription: float = 1.0, sharp: bool = False, nvls: bool | None = None) -> nx.DiGraph:
    """`nodes` calibrated servers, NIC ``j`` of every server on leaf ``j`` (rail-optimised, non-blocking).

    One leaf per NIC of the template (8 for the DGX servers, 72 for an NVL72 rack),
    4 spines, every fabric cable at the effective NIC rate, 1 us.

    Parameters
    ----------
    kind : str
        As :func:`calibrated_node`.
    nodes : int
        Number of servers (racks), ≥ 1.
    nic_share : float, optional
        Each GPU's share of one NIC port, in (0, 1]: scales every NIC's port rate, and a
        NIC's cable runs at the lower of its port and the fabric's cable rate (one port's
        effective rate), so 0.5 models a server with 4 NICs for 8 GPUs (two GPUs share a
        port), as in the HGX systems of the multi-node rows of
        :data:`simnet.calibration.PUBLISHED`. Default 1.
    pxn : bool, optional
        Send to another server through the NIC of the destination's rail, reached over
        NVLink, as NCCL's PXN does by default (``NCCL_PXN_DISABLE=0``). Default False.
    oversubscription : float, optional
        The leaves' down-to-up bandwidth ratio (:func:`~simnet.topology.fabrics.leaf_spine`);
        default 1, non-blocking.
    sharp : bool, optional
        Leaves and spines reduce in the network (InfiniBand SHARP, for CollNet). Default False.
    nvls : bool, optional
        As :func:`calibrated_node`.

    Raises
    ------
    TopologyError
        For an unknown `kind`, `nodes` < 1 or `nic_share` outside (0, 1].
    """
    _check_kind(kind)
    _check_int(nodes, "nodes", 1)
    if isinstance(nic_share, bool) or not isinstance(nic_share, (int, float)) or not 0 < nic_share < float("inf"):
        raise TopologyError(f"must be a number > 0, got {nic_share!r}", path="nic_share")
    if nic_share > 1:
        raise TopologyError(f"must be at most 1, got {nic_share!r}: it is a GPU's share of one NIC port, and a NIC's "
                            f"cable runs at the lower of its port and one port's effective rate, so more has no effect",
                            path="nic_share")
    fabric = {
        "leaves": sum(1 for _, node_kind in calibrated_node(kind).nodes(data="kind") if node_kind == "nic"),
        "spines": 4,
        "hosts_per_leaf": nodes,
        "bandwidth_Bps": NIC_EFFECTIVE_Bps[kind],
        "latency_s": 1e-6,
        "oversubscription": oversubscription,
        "sharp": sharp,
    }
    return cluster(kind, nodes, fabric="leaf_spine", fabric_params=fabric,
                   node_params=_node_params(kind, nic_share, nvls), pxn=pxn)
