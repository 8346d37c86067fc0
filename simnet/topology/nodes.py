"""Server templates: the GPUs, NVLinks, NVSwitches, PCIe switches, CPUs and NICs of one node.

Each builder returns a validated :class:`networkx.DiGraph` of one server (all nodes
carry ``host = 0``), with the public figures it is built from cited in its
docstring and listed in the graph attribute ``sources``.
:func:`simnet.topology.cluster.cluster` composes copies of them on a fabric.

Node naming (rank order is GPU order)
    ``gpu{i}``
        GPUs, kind ``gpu``, with ``local_rank = i``, ``socket`` and ``rail`` (the
        NIC they send through); GPUs do not relay traffic (``forward = False``).
    ``nvswitch{b}`` (or ``nvswitch{j}`` with ``nvswitch_planes=True``)
        NVSwitch crossbars, kind ``switch``. A GPU stripes its traffic to a peer over
        all of its NVLinks, hence over every NVSwitch chip of its board (the chips are
        parallel *planes*). Routes here are single paths, so by default the planes of
        board ``b`` are one crossbar ``nvswitch{b}`` whose GPU ports carry all of the
        GPU's links: a GPU pair then gets the GPU's full NVLink bandwidth, as NCCL
        measures. ``nvswitch_planes=True`` keeps one node per chip, as in NVIDIA's
        drawings; a GPU pair then uses a single plane.
        Third-generation NVSwitch (H100) and later can reduce in flight and
        multicast (NVLink SHARP, "NVLS"): those templates mark their NVSwitches
        ``reduce = True`` with NCCL's ``nvlsEfficiency`` as ``reduce_efficiency``
        (parameters ``nvls`` and ``nvls_efficiency``); first- and second-generation
        NVSwitches (DGX-2, DGX A100) have no such capability.
    ``pcie{j}``
        PCIe switches, kind ``switch``, with ``socket``.
    ``cpu{s}``
        CPU sockets, kind ``cpu``; they route PCIe traffic between their switches and
        across the inter-socket link (on :func:`gb200_nvl72`, the Grace CPUs, each
        joined to its two GPUs by NVLink-C2C).
    ``nic{j}``
        Network adapters, kind ``nic``, with ``rail = j`` and ``port_bandwidth_Bps``
        (the line rate of the port a fabric cables to). A template alone leaves the
        ports uncabled.

Tiers: ``"nvlink"`` (GPU-GPU and POWER9 GPU-CPU NVLink), ``"nvswitch"`` (GPU-NVSwitch
and NVSwitch-NVSwitch), ``"c2c"`` (Grace-Blackwell NVLink-C2C), ``"pcie"``, and the
inter-socket link: ``"qpi"``, ``"upi"``, ``"xgmi"`` or ``"xbus"``.

Figures
    Bandwidths are per direction of one link. NVLink 2, 3 and 4 all run 25 GB/s per
    link per direction (NVIDIA V100, A100 and H100 architecture whitepapers: 6 links
    = 300 GB/s, 12 links = 600 GB/s and 18 links = 900 GB/s bidirectional per GPU);
    NVLink 5 runs 50 GB/s (NVIDIA Blackwell architecture technical brief: 18 links =
    1.8 TB/s bidirectional per GPU). NVLink-C2C between a Grace CPU and a Blackwell
    GPU carries 450 GB/s per direction (900 GB/s bidirectional).
    PCIe x16 carries 15.75 GB/s (Gen3, 8 GT/s with 128b/130b coding), 31.5 GB/s (Gen4)
    and 63 GB/s (Gen5) per direction (PCI-SIG base specifications 3.0, 4.0, 5.0).
    InfiniBand EDR, HDR, NDR and XDR ports run 100, 200, 400 and 800 Gb/s (InfiniBand
    Trade Association roadmap).

    Latencies are modelling assumptions, not datasheet figures, chosen so that the
    shortest route between two GPUs of a server is the one CUDA peer-to-peer takes:
    a direct NVLink or the NVSwitch when present, PCIe through the switches and
    CPUs otherwise. Per link: NVLink and NVLink-C2C 0.5 us, GPU-NVSwitch 0.25 us,
    PCIe 0.5 us, inter-socket 1 us. Every builder takes them as parameters.
"""

from __future__ import annotations

import inspect
from types import MappingProxyType

import networkx as nx

from simnet.errors import TopologyError
from simnet.topology.contract import validate
from simnet.topology.fabrics import _check_bandwidth, _check_latency, _label, add_cable

__all__ = [
    "dgx1", "dgx2", "dgx_a100", "dgx_h100", "dgx_b200", "gb200_nvl72", "power9_ac922", "abci_node", "NODES",
    "HOPPER_NVLS_EFFICIENCY", "BLACKWELL_NVLS_EFFICIENCY",
]

NVLINK_Bps = 25e9
NVLINK5_Bps = 50e9
C2C_Bps = 450e9
PCIE3_Bps = 15.75e9
PCIE4_Bps = 31.5e9
PCIE5_Bps = 63e9
EDR_Bps = 100e9 / 8
HDR_Bps = 200e9 / 8
NDR_Bps = 400e9 / 8
NVLINK_LATENCY_S = 0.5e-6
NVSWITCH_LATENCY_S = 0.25e-6
PCIE_LATENCY_S = 0.5e-6
SOCKET_LATENCY_S = 1e-6

HOPPER_NVLS_EFFICIENCY = 0.85
"""NCCL's ``nvlsEfficiency`` for Hopper (NVIDIA/nccl ``src/graph/tuning.cc``, 2.28 and later)."""

BLACKWELL_NVLS_EFFICIENCY = 0.74
"""NCCL's ``nvlsEfficiency`` for Blackwell (NVIDIA/nccl ``src/graph/tuning.cc``, 2.28 and later)."""

NVLS_SOURCE = (
    "NVIDIA/nccl src/graph/tuning.cc (2.28.3 and later): nvlsEfficiency Volta 0, Ampere 0, Hopper 0.85, "
    "Blackwell 0.74 (the share of NVLink bandwidth NVLS reductions reach)"
)

_SPEC_SOURCES = (
    "NVIDIA Tesla V100 GPU Architecture whitepaper WP-08608-001 (2017): 6 NVLink2 links x 25 GB/s per direction",
    "PCI-SIG PCI Express Base Specification 3.0/4.0/5.0: 8/16/32 GT/s per lane, 128b/130b",
    "InfiniBand Trade Association roadmap: EDR 100 Gb/s, HDR 200 Gb/s, NDR 400 Gb/s per 4x port",
)


def _start(builder: str, params: dict, sources: tuple) -> nx.DiGraph:
    for key, value in params.items():
        if key.endswith("_Bps"):
            _check_bandwidth(value, key)
        elif key.endswith("_s"):
            _check_latency(value, key)
        elif key in ("nvls", "nvswitch_planes") and not isinstance(value, bool):
            raise TopologyError(f"must be true or false, got {value!r}", path=key)
        elif key == "nvls_efficiency" and (
            isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1
        ):
            raise TopologyError(f"must be a fraction in (0, 1], got {value!r}", path=key)
    defaults = {
        name: parameter.default for name, parameter in inspect.signature(NODES[builder]).parameters.items()
    }
    changed = {key: value for key, value in params.items() if defaults.get(key) != value}
    graph = nx.DiGraph(name=_label(builder, **changed), builder=builder, params=dict(params))
    graph.graph["sources"] = list(sources)
    return graph


def _add_gpus(graph: nx.DiGraph, count: int, socket_of, rail_of) -> None:
    for i in range(count):
        graph.add_node(
            f"gpu{i}", kind="gpu", host=0, local_rank=i, socket=socket_of(i), rail=rail_of(i), forward=False
        )


def _add_cpus(graph: nx.DiGraph, bandwidth_Bps: float, latency_s: float, tier: str) -> None:
    graph.add_node("cpu0", kind="cpu", host=0, socket=0)
    graph.add_node("cpu1", kind="cpu", host=0, socket=1)
    add_cable(graph, "cpu0", "cpu1", bandwidth_Bps, latency_s, tier)


def _add_nics(graph: nx.DiGraph, count: int, port_Bps: float, socket_of) -> None:
    for j in range(count):
        graph.add_node(f"nic{j}", kind="nic", host=0, socket=socket_of(j), rail=j, port_bandwidth_Bps=port_Bps)


def _add_pcie_tree(
    graph: nx.DiGraph, switches: int, gpus: int, nics: int, bandwidth_Bps: float, latency_s: float
) -> None:
    """`switches` PCIe switches, half per socket; GPUs and NICs spread evenly in index order."""
    for j in range(switches):
        socket = j * 2 // switches
        graph.add_node(f"pcie{j}", kind="switch", host=0, socket=socket)
        add_cable(graph, f"pcie{j}", f"cpu{socket}", bandwidth_Bps, latency_s, "pcie")
    for i in range(gpus):
        add_cable(graph, f"gpu{i}", f"pcie{i * switches // gpus}", bandwidth_Bps, latency_s, "pcie")
    for j in range(nics):
        add_cable(graph, f"nic{j}", f"pcie{j * switches // nics}", bandwidth_Bps, latency_s, "pcie")


def _add_nvswitches(
    graph: nx.DiGraph, cables_per_switch: list, gpus: range, first: int, bandwidth_Bps: float, latency_s: float,
    planes: bool, nvls_efficiency: float | None = None,
) -> list[str]:
    """One node per NVSwitch chip (`planes`), or one striped crossbar for all of them; returns their names.

    With `nvls_efficiency` the switches can reduce in flight (NVLS) at that fraction of their port bandwidth.
    """
    groups = [[cables] for cables in cables_per_switch] if planes else [cables_per_switch]
    capability = {} if nvls_efficiency is None else {"reduce": True, "reduce_efficiency": nvls_efficiency}
    names = []
    for s, group in enumerate(groups):
        name = f"nvswitch{first + s}"
        graph.add_node(name, kind="switch", host=0, planes=len(group), **capability)
        for i in gpus:
            add_cable(graph, f"gpu{i}", name, bandwidth_Bps, latency_s, "nvswitch", cables=sum(group))
        names.append(name)
    return names


DGX1_NVLINKS = (
    (0, 1, 1), (0, 2, 1), (0, 3, 2), (0, 4, 2), (1, 2, 2), (1, 3, 1), (1, 5, 2), (2, 3, 2),
    (2, 6, 1), (3, 7, 1), (4, 5, 1), (4, 6, 1), (4, 7, 2), (5, 6, 2), (5, 7, 1), (6, 7, 2),
)
"""DGX-1 (V100) NVLink cables as (GPU, GPU, cables), as ``nvidia-smi topo -m`` shows them."""


def dgx1(
    *,
    nvlink_bandwidth_Bps: float = NVLINK_Bps,
    nvlink_latency_s: float = NVLINK_LATENCY_S,
    pcie_bandwidth_Bps: float = PCIE3_Bps,
    pcie_latency_s: float = PCIE_LATENCY_S,
    socket_bandwidth_Bps: float = 2 * 19.2e9,
    socket_latency_s: float = SOCKET_LATENCY_S,
    nic_bandwidth_Bps: float = EDR_Bps,
) -> nx.DiGraph:
    """NVIDIA DGX-1 with 8 Tesla V100: NVLink2 hybrid cube-mesh, PCIe Gen3, 4 EDR NICs.

    GPUs 0-3 and 4-7 form two fully connected quads, GPU ``i`` is cabled to
    ``i + 4``, and eight pairs have a double link (:data:`DGX1_NVLINKS`), so that every
    GPU uses all 6 of its NVLinks: 6 x 25 GB/s = 150 GB/s per direction. Four PCIe
    switches ``pcie0..3`` each hold GPUs ``2j, 2j+1`` and NIC ``nic{j}``; ``pcie0,1``
    hang off ``cpu0``, ``pcie2,3`` off ``cpu1``; the two Xeon E5-2698 v4 sockets are
    joined by two QPI links at 9.6 GT/s (19.2 GB/s each per direction).

    Parameters
    ----------
    nvlink_bandwidth_Bps, nvlink_latency_s : float
        One NVLink2 link, per direction (default 25 GB/s, 0.5 us).
    pcie_bandwidth_Bps, pcie_latency_s : float
        One PCIe Gen3 x16 link (default 15.75 GB/s, 0.5 us).
    socket_bandwidth_Bps, socket_latency_s : float
        The QPI links between the sockets together (default 38.4 GB/s, 1 us).
    nic_bandwidth_Bps : float
        Port rate of each InfiniBand EDR NIC (default 100 Gb/s).

    Returns
    -------
    networkx.DiGraph
        8 GPUs, 4 PCIe switches, 2 CPUs, 4 NICs; 24 NVLink cables on 16 GPU pairs.

    References
    ----------
    NVIDIA (2017). NVIDIA DGX-1 with Tesla V100 System Architecture, WP-08437-002.
    NVIDIA (2017). Tesla V100 GPU Architecture, WP-08608-001.
    """
    params = dict(locals())
    graph = _start(
        "dgx1",
        params,
        ("NVIDIA DGX-1 with Tesla V100 System Architecture whitepaper WP-08437-002 (2017): hybrid cube-mesh, "
         "4 PCIe switches, 4 EDR IB NICs, 2 Xeon E5-2698 v4", *_SPEC_SOURCES,
         "Intel Xeon E5-2698 v4 datasheet: 2 QPI links at 9.6 GT/s"),
    )
    _add_gpus(graph, 8, lambda i: i // 4, lambda i: i // 2)
    _add_cpus(graph, socket_bandwidth_Bps, socket_latency_s, "qpi")
    _add_nics(graph, 4, nic_bandwidth_Bps, lambda j: j // 2)
    _add_pcie_tree(graph, 4, 8, 4, pcie_bandwidth_Bps, pcie_latency_s)
    for a, b, cables in DGX1_NVLINKS:
        add_cable(graph, f"gpu{a}", f"gpu{b}", nvlink_bandwidth_Bps, nvlink_latency_s, "nvlink", cables=cables)
    return validate(graph)


def dgx2(
    *,
    nvlink_bandwidth_Bps: float = NVLINK_Bps,
    nvswitch_latency_s: float = NVSWITCH_LATENCY_S,
    pcie_bandwidth_Bps: float = PCIE3_Bps,
    pcie_latency_s: float = PCIE_LATENCY_S,
    socket_bandwidth_Bps: float = 3 * 20.8e9,
    socket_latency_s: float = SOCKET_LATENCY_S,
    nic_bandwidth_Bps: float = EDR_Bps,
    nvswitch_planes: bool = False,
) -> nx.DiGraph:
    """NVIDIA DGX-2 with 16 Tesla V100 on 12 NVSwitches, PCIe Gen3, 8 EDR NICs.

    Two baseboards of 8 GPUs and 6 NVSwitches each. Every GPU has one NVLink to each
    NVSwitch of its board: 6 x 25 GB/s = 150 GB/s per direction; NVSwitch ``s`` of
    one board is joined to NVSwitch ``s`` of the other by 8 cables, 48 in all. By
    default each board's six planes are one crossbar (``nvswitch0``, ``nvswitch1``,
    joined by the 48 cables); with ``nvswitch_planes=True`` the chips are
    ``nvswitch0..5`` and ``nvswitch6..11``, ``s`` joined to ``s + 6``. PCIe is simplified to one level: eight
    switches ``pcie0..7``, switch ``j`` holding GPUs ``2j, 2j+1`` and ``nic{j}``,
    ``pcie0..3`` on ``cpu0`` and ``pcie4..7`` on ``cpu1`` (two Xeon Platinum 8168,
    3 UPI links at 10.4 GT/s, 20.8 GB/s each per direction).

    Parameters
    ----------
    nvlink_bandwidth_Bps, nvswitch_latency_s : float
        One NVLink2 link, per direction (default 25 GB/s), and one GPU-NVSwitch or
        NVSwitch-NVSwitch hop (default 0.25 us).
    pcie_bandwidth_Bps, pcie_latency_s : float
        One PCIe Gen3 x16 link (default 15.75 GB/s, 0.5 us).
    socket_bandwidth_Bps, socket_latency_s : float
        The UPI links between the sockets together (default 62.4 GB/s, 1 us).
    nic_bandwidth_Bps : float
        Port rate of each InfiniBand EDR NIC (default 100 Gb/s).
    nvswitch_planes : bool
        One node per NVSwitch chip instead of one striped crossbar per board.

    Returns
    -------
    networkx.DiGraph
        16 GPUs, 2 NVSwitch crossbars (12 chips with ``nvswitch_planes``), 8 PCIe
        switches, 2 CPUs, 8 NICs.

    References
    ----------
    NVIDIA (2018). NVIDIA DGX-2 System Architecture whitepaper, WP-09131-001.
    Ishii, A., Foley, D., Anderson, E. et al. (2018). NVSwitch and DGX-2: NVIDIA's
    NVLink-switching chip and scale-up compute server. Hot Chips 30 (18 ports).
    """
    params = dict(locals())
    graph = _start(
        "dgx2",
        params,
        ("NVIDIA DGX-2 System Architecture whitepaper WP-09131-001 (2018): 16 V100, 12 NVSwitches, "
         "8 EDR IB NICs, 2 Xeon Platinum 8168", *_SPEC_SOURCES,
         "Intel Xeon Platinum 8168 datasheet: 3 UPI links at 10.4 GT/s"),
    )
    _add_gpus(graph, 16, lambda i: i // 8, lambda i: i // 2)
    _add_cpus(graph, socket_bandwidth_Bps, socket_latency_s, "upi")
    _add_nics(graph, 8, nic_bandwidth_Bps, lambda j: j // 4)
    _add_pcie_tree(graph, 8, 16, 8, pcie_bandwidth_Bps, pcie_latency_s)
    boards = [
        _add_nvswitches(graph, [1] * 6, range(8 * board, 8 * board + 8), board * (6 if nvswitch_planes else 1),
                        nvlink_bandwidth_Bps, nvswitch_latency_s, nvswitch_planes)
        for board in range(2)
    ]
    for a, b in zip(*boards):
        add_cable(graph, a, b, nvlink_bandwidth_Bps, nvswitch_latency_s, "nvswitch", cables=48 // len(boards[0]))
    return validate(graph)


def _dgx_nvswitch_node(
    builder: str,
    params: dict,
    sources: tuple,
    cables_per_switch: list,
    socket_tier: str,
) -> nx.DiGraph:
    graph = _start(builder, params, sources)
    _add_gpus(graph, 8, lambda i: i // 4, lambda i: i)
    _add_cpus(graph, params["socket_bandwidth_Bps"], params["socket_latency_s"], socket_tier)
    _add_nics(graph, 8, params["nic_bandwidth_Bps"], lambda j: j // 4)
    _add_pcie_tree(graph, 4, 8, 8, params["pcie_bandwidth_Bps"], params["pcie_latency_s"])
    nvls = params["nvls_efficiency"] if params.get("nvls") else None
    _add_nvswitches(graph, cables_per_switch, range(8), 0, params["nvlink_bandwidth_Bps"], params["nvswitch_latency_s"],
                    params["nvswitch_planes"], nvls)
    return validate(graph)


def dgx_a100(
    *,
    nvlink_bandwidth_Bps: float = NVLINK_Bps,
    nvswitch_latency_s: float = NVSWITCH_LATENCY_S,
    pcie_bandwidth_Bps: float = PCIE4_Bps,
    pcie_latency_s: float = PCIE_LATENCY_S,
    socket_bandwidth_Bps: float = 4 * 36e9,
    socket_latency_s: float = SOCKET_LATENCY_S,
    nic_bandwidth_Bps: float = HDR_Bps,
    nvswitch_planes: bool = False,
) -> nx.DiGraph:
    """NVIDIA DGX A100 with 8 A100 on 6 NVSwitches, PCIe Gen4, 8 HDR NICs.

    Every GPU has 12 NVLink3 links, two to each of 6 NVSwitch chips:
    12 x 25 GB/s = 300 GB/s per direction. By default the chips are one striped
    crossbar ``nvswitch0`` (see the module docstring); ``nvswitch_planes=True`` gives
    ``nvswitch0..5``. Four PCIe Gen4 switches ``pcie0..3``
    each hold GPUs ``2j, 2j+1`` and NICs ``nic{2j}, nic{2j+1}`` (ConnectX-6 HDR
    200 Gb/s); GPU ``i`` sends through ``nic{i}`` (rail ``i``). ``pcie0,1`` hang off
    ``cpu0``, ``pcie2,3`` off ``cpu1`` (two AMD EPYC 7742). The inter-socket
    Infinity Fabric is assumed to be 4 xGMI links of 36 GB/s per direction.

    Parameters
    ----------
    nvlink_bandwidth_Bps, nvswitch_latency_s : float
        One NVLink3 link, per direction (default 25 GB/s), and one GPU-NVSwitch hop
        (default 0.25 us).
    pcie_bandwidth_Bps, pcie_latency_s : float
        One PCIe Gen4 x16 link (default 31.5 GB/s, 0.5 us).
    socket_bandwidth_Bps, socket_latency_s : float
        The inter-socket link (default 144 GB/s, 1 us; an assumption).
    nic_bandwidth_Bps : float
        Port rate of each HDR NIC (default 200 Gb/s).
    nvswitch_planes : bool
        One node per NVSwitch chip instead of one striped crossbar.

    Returns
    -------
    networkx.DiGraph
        8 GPUs, 1 NVSwitch crossbar (6 chips with ``nvswitch_planes``), 4 PCIe
        switches, 2 CPUs, 8 NICs.

    References
    ----------
    NVIDIA (2020). NVIDIA DGX A100 System Architecture, WP-10083-001.
    NVIDIA (2020). NVIDIA A100 Tensor Core GPU Architecture whitepaper.
    """
    params = dict(locals())
    sources = (
        "NVIDIA DGX A100 System Architecture whitepaper WP-10083-001 (2020): 8 A100, 6 NVSwitches, "
        "8 ConnectX-6 HDR 200 Gb/s compute NICs, 4 PCIe Gen4 switches, 2 AMD EPYC 7742",
        "NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020): 12 NVLink3 links, 600 GB/s bidirectional",
        *_SPEC_SOURCES[1:],
    )
    return _dgx_nvswitch_node("dgx_a100", params, sources, [2] * 6, "xgmi")


def dgx_h100(
    *,
    nvlink_bandwidth_Bps: float = NVLINK_Bps,
    nvswitch_latency_s: float = NVSWITCH_LATENCY_S,
    pcie_bandwidth_Bps: float = PCIE5_Bps,
    pcie_latency_s: float = PCIE_LATENCY_S,
    socket_bandwidth_Bps: float = 4 * 32e9,
    socket_latency_s: float = SOCKET_LATENCY_S,
    nic_bandwidth_Bps: float = NDR_Bps,
    nvswitch_planes: bool = False,
    nvls: bool = True,
    nvls_efficiency: float = HOPPER_NVLS_EFFICIENCY,
) -> nx.DiGraph:
    """NVIDIA DGX H100 with 8 H100 on 4 NVSwitches, PCIe Gen5, 8 NDR NICs.

    Every GPU has 18 NVLink4 links, cabled 5, 4, 4, 5 to 4 NVSwitch chips:
    18 x 25 GB/s = 450 GB/s per direction. By default the chips are one striped
    crossbar ``nvswitch0`` (see the module docstring); ``nvswitch_planes=True`` gives
    ``nvswitch0..3``. The third-generation NVSwitches reduce in flight (NVLS):
    every NVSwitch node carries ``reduce = True`` and ``reduce_efficiency = 0.85``,
    NCCL's ``nvlsEfficiency`` for Hopper. Four PCIe Gen5 switches ``pcie0..3`` each
    hold GPUs ``2j, 2j+1`` and NICs ``nic{2j}, nic{2j+1}`` (ConnectX-7 NDR
    400 Gb/s); GPU ``i`` sends through ``nic{i}``. Two Xeon Platinum 8480C joined by
    4 UPI links at 16 GT/s (32 GB/s each per direction).

    Parameters
    ----------
    nvlink_bandwidth_Bps, nvswitch_latency_s : float
        One NVLink4 link, per direction (default 25 GB/s), and one GPU-NVSwitch hop
        (default 0.25 us).
    pcie_bandwidth_Bps, pcie_latency_s : float
        One PCIe Gen5 x16 link (default 63 GB/s, 0.5 us).
    socket_bandwidth_Bps, socket_latency_s : float
        The UPI links between the sockets together (default 128 GB/s, 1 us).
    nic_bandwidth_Bps : float
        Port rate of each NDR NIC (default 400 Gb/s).
    nvswitch_planes : bool
        One node per NVSwitch chip instead of one striped crossbar.
    nvls : bool
        Whether the NVSwitches reduce in flight (NVLink SHARP; default True).
    nvls_efficiency : float
        Fraction of the port bandwidth NVLS achieves, in (0, 1] (default 0.85).

    Returns
    -------
    networkx.DiGraph
        8 GPUs, 1 NVSwitch crossbar (4 chips with ``nvswitch_planes``), 4 PCIe
        switches, 2 CPUs, 8 NICs.

    References
    ----------
    NVIDIA (2023). NVIDIA DGX H100 System Architecture / DGX SuperPOD reference
    architecture: 4 NVSwitch chips, 18 NVLink4 links per GPU, 8 ConnectX-7 NDR.
    NVIDIA (2022). NVIDIA H100 Tensor Core GPU Architecture whitepaper: 900 GB/s
    bidirectional NVLink per GPU; third-generation NVSwitch with NVLink SHARP.
    NVIDIA/nccl, ``src/graph/tuning.cc`` (2.28.3 and later): ``nvlsEfficiency``.
    """
    params = dict(locals())
    sources = (
        "NVIDIA DGX H100 user guide / DGX SuperPOD H100 reference architecture (2023): 8 H100, 4 NVSwitches "
        "(5/4/4/5 links per GPU), 8 ConnectX-7 NDR 400 Gb/s, 2 Xeon Platinum 8480C",
        "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022): 18 NVLink4 links, 900 GB/s bidirectional",
        *_SPEC_SOURCES[1:],
        *((NVLS_SOURCE,) if nvls else ()),
    )
    return _dgx_nvswitch_node("dgx_h100", params, sources, [5, 4, 4, 5], "upi")


def dgx_b200(
    *,
    nvlink_bandwidth_Bps: float = NVLINK5_Bps,
    nvswitch_latency_s: float = NVSWITCH_LATENCY_S,
    pcie_bandwidth_Bps: float = PCIE5_Bps,
    pcie_latency_s: float = PCIE_LATENCY_S,
    socket_bandwidth_Bps: float = 4 * 40e9,
    socket_latency_s: float = SOCKET_LATENCY_S,
    nic_bandwidth_Bps: float = NDR_Bps,
    nvswitch_planes: bool = False,
    nvls: bool = True,
    nvls_efficiency: float = BLACKWELL_NVLS_EFFICIENCY,
) -> nx.DiGraph:
    """NVIDIA DGX B200 with 8 B200 on 2 NVLink 5 switch chips, PCIe Gen5, 8 ConnectX-7 400 Gb/s NICs.

    Every GPU has 18 NVLink 5 links: 18 x 50 GB/s = 900 GB/s per direction
    (1.8 TB/s bidirectional; 14.4 TB/s for the eight GPUs). The links are cabled
    9 and 9 to the two NVSwitch chips (an assumption: the user guide gives the
    chip count, not the split). By default the chips are one striped crossbar
    ``nvswitch0`` (see the module docstring); ``nvswitch_planes=True`` gives
    ``nvswitch0, nvswitch1``. The NVSwitches reduce in flight (NVLS) with
    ``reduce_efficiency = 0.74``, NCCL's ``nvlsEfficiency`` for Blackwell. The
    eight single-port ConnectX-7 cards of the compute fabric run InfiniBand at up
    to 400 Gb/s; GPU ``i`` sends through ``nic{i}``. Four PCIe Gen5 switches
    ``pcie0..3`` each hold GPUs ``2j, 2j+1`` and NICs ``nic{2j}, nic{2j+1}``, as on
    DGX H100 (an assumption: the user guide shows no PCIe diagram). The two
    BlueField-3 DPUs serve storage and management and are left out. The two Xeon
    Platinum 8570 are assumed to be joined by 4 UPI links at 20 GT/s (40 GB/s each
    per direction).

    Parameters
    ----------
    nvlink_bandwidth_Bps, nvswitch_latency_s : float
        One NVLink 5 link, per direction (default 50 GB/s), and one GPU-NVSwitch
        hop (default 0.25 us).
    pcie_bandwidth_Bps, pcie_latency_s : float
        One PCIe Gen5 x16 link (default 63 GB/s, 0.5 us).
    socket_bandwidth_Bps, socket_latency_s : float
        The UPI links between the sockets together (default 160 GB/s, 1 us; an
        assumption).
    nic_bandwidth_Bps : float
        Port rate of each ConnectX-7 NIC (default 400 Gb/s).
    nvswitch_planes : bool
        One node per NVSwitch chip instead of one striped crossbar.
    nvls : bool
        Whether the NVSwitches reduce in flight (NVLink SHARP; default True).
    nvls_efficiency : float
        Fraction of the port bandwidth NVLS achieves, in (0, 1] (default 0.74).

    Returns
    -------
    networkx.DiGraph
        8 GPUs, 1 NVSwitch crossbar (2 chips with ``nvswitch_planes``), 4 PCIe
        switches, 2 CPUs, 8 NICs.

    References
    ----------
    NVIDIA (2024). NVIDIA DGX B200 User Guide, Introduction: 8 B200, 2
    fifth-generation NVLink switches (14.4 TB/s aggregate), 4 OSFP ports for 8
    single-port ConnectX-7 (InfiniBand up to 400 Gb/s), 2 BlueField-3 DPUs, 2 Intel
    Xeon 8570 PCIe Gen5 CPUs.
    NVIDIA (2024). NVIDIA Blackwell Architecture Technical Brief: fifth-generation
    NVLink, 18 links, 1.8 TB/s bidirectional per GPU.
    NVIDIA/nccl, ``src/graph/tuning.cc`` (2.28.3 and later): ``nvlsEfficiency``.
    """
    params = dict(locals())
    sources = (
        "NVIDIA DGX B200 User Guide, Introduction to NVIDIA DGX B200 Systems (2024): 8 B200, 2 fifth-generation "
        "NVLink switches (14.4 TB/s aggregate), 4 OSFP ports for 8 single-port ConnectX-7 (InfiniBand up to "
        "400 Gb/s), 2 BlueField-3 DPUs (storage, management), 2 Intel Xeon 8570 PCIe Gen5 CPUs",
        "NVIDIA Blackwell Architecture Technical Brief (2024): fifth-generation NVLink, 18 links, 1.8 TB/s "
        "bidirectional per GPU",
        *_SPEC_SOURCES[1:],
        *((NVLS_SOURCE,) if nvls else ()),
        "Assumptions: 9 + 9 links to the two NVSwitch chips, 2 GPUs and 2 NICs per PCIe switch as on DGX H100, "
        "4 UPI links at 20 GT/s between the Xeon 8570 sockets",
    )
    return _dgx_nvswitch_node("dgx_b200", params, sources, [9, 9], "upi")


NVL72_GPUS = 72
"""GPUs in a GB200 NVL72 rack: 18 compute trays x 2 GB200 superchips x 2 B200."""

NVL72_SWITCH_CHIPS = 18
"""NVLink switch chips in a GB200 NVL72 rack: 9 switch trays x 2; every GPU has one link to each."""


def gb200_nvl72(
    *,
    nvlink_bandwidth_Bps: float = NVLINK5_Bps,
    nvswitch_latency_s: float = NVSWITCH_LATENCY_S,
    c2c_bandwidth_Bps: float = C2C_Bps,
    c2c_latency_s: float = NVLINK_LATENCY_S,
    pcie_bandwidth_Bps: float = PCIE5_Bps,
    pcie_latency_s: float = PCIE_LATENCY_S,
    nic_bandwidth_Bps: float = NDR_Bps,
    nvswitch_planes: bool = False,
    nvls: bool = True,
    nvls_efficiency: float = BLACKWELL_NVLS_EFFICIENCY,
) -> nx.DiGraph:
    """An NVIDIA GB200 NVL72 rack: 72 B200 and 36 Grace CPUs in one NVLink domain, 72 ConnectX-7 NICs.

    The "server" of this template is the whole NVLink domain, so that
    :func:`~simnet.topology.cluster.cluster` puts racks on a fabric (``host`` is
    the rack). The rack has 18 compute trays of two GB200 superchips, each one
    Grace CPU and two B200 GPUs; GPU ``i`` sits in tray ``i // 4`` on Grace
    ``cpu{i // 2}`` (its ``socket``), joined to it by NVLink-C2C (450 GB/s per
    direction). Nine NVLink switch trays hold 18 NVLink switch chips and every GPU
    has one NVLink 5 link to each: 18 x 50 GB/s = 900 GB/s per direction. By
    default the 18 chips are one striped crossbar ``nvswitch0`` of the 72 GPUs'
    ports (see the module docstring), so every GPU is one hop from every other's
    switch port; ``nvswitch_planes=True`` gives ``nvswitch0..17``. The NVSwitches
    reduce in flight (NVLS) with ``reduce_efficiency = 0.74``, NCCL's
    ``nvlsEfficiency`` for Blackwell. Every compute tray has four single-port
    ConnectX-7 400 Gb/s NICs for the compute fabric, one per GPU: GPU ``i`` sends
    through ``nic{i}`` (``rail = i``). Where a NIC attaches inside the tray is an
    assumption: on a PCIe Gen5 x16 link to the Grace CPU of its GPU, so that a GPU
    reaches its NIC over NVLink-C2C and PCIe. The Grace CPUs of a tray are not
    joined to each other here; the BlueField-3 DPUs (storage, management) are left
    out.

    Parameters
    ----------
    nvlink_bandwidth_Bps, nvswitch_latency_s : float
        One NVLink 5 link, per direction (default 50 GB/s), and one GPU-NVSwitch
        hop (default 0.25 us).
    c2c_bandwidth_Bps, c2c_latency_s : float
        NVLink-C2C between a GPU and its Grace CPU, per direction (default 450 GB/s,
        0.5 us).
    pcie_bandwidth_Bps, pcie_latency_s : float
        The PCIe Gen5 x16 link of each NIC (default 63 GB/s, 0.5 us).
    nic_bandwidth_Bps : float
        Port rate of each ConnectX-7 NIC (default 400 Gb/s).
    nvswitch_planes : bool
        One node per NVLink switch chip instead of one striped crossbar.
    nvls : bool
        Whether the NVSwitches reduce in flight (NVLink SHARP; default True).
    nvls_efficiency : float
        Fraction of the port bandwidth NVLS achieves, in (0, 1] (default 0.74).

    Returns
    -------
    networkx.DiGraph
        72 GPUs, 1 NVSwitch crossbar (18 chips with ``nvswitch_planes``), 36 CPUs,
        72 NICs; GPU ``i`` has ``local_rank = i``, ``socket = i // 2`` and
        ``rail = i``.

    References
    ----------
    NVIDIA (2025). NVIDIA DGX GB200 User Guide, Hardware: 72-GPU rack of 18 compute
    trays (2 Grace CPUs and 4 Blackwell GPUs each) and 9 NVLink switch trays;
    compute tray cluster network 4x ConnectX-7 single-port 400G OSFP.
    NVIDIA (2024). GB200 NVL72 product page: 36 Grace CPUs, 72 Blackwell GPUs,
    130 TB/s NVLink domain, NVLink-C2C 900 GB/s.
    NVIDIA (2024). NVIDIA Blackwell Architecture Technical Brief: fifth-generation
    NVLink, 18 links, 1.8 TB/s bidirectional per GPU.
    NVIDIA/nccl, ``src/graph/tuning.cc`` (2.28.3 and later): ``nvlsEfficiency``.
    """
    params = dict(locals())
    graph = _start(
        "gb200_nvl72",
        params,
        ("NVIDIA DGX GB200 User Guide, Hardware (2025): 72-GPU rack, 18 compute trays with 2 Grace CPUs and "
         "4 Blackwell GPUs each, 9 NVLink switch trays; cluster network 4x ConnectX-7 single-port 400G OSFP "
         "per compute tray",
         "NVIDIA GB200 NVL72 (2024): 36 Grace CPUs, 72 Blackwell GPUs, 130 TB/s NVLink domain, NVLink-C2C "
         "900 GB/s bidirectional",
         "NVIDIA Blackwell Architecture Technical Brief (2024): fifth-generation NVLink, 18 links, 1.8 TB/s "
         "bidirectional per GPU",
         *_SPEC_SOURCES[1:],
         *((NVLS_SOURCE,) if nvls else ()),
         "Assumptions: each NIC on a PCIe Gen5 x16 link to the Grace CPU of its GPU; 18 NVLink switch chips "
         "(2 per switch tray), one link from every GPU to each"),
    )
    _add_gpus(graph, NVL72_GPUS, lambda i: i // 2, lambda i: i)
    for s in range(NVL72_GPUS // 2):
        graph.add_node(f"cpu{s}", kind="cpu", host=0, socket=s)
    _add_nics(graph, NVL72_GPUS, nic_bandwidth_Bps, lambda j: j // 2)
    for i in range(NVL72_GPUS):
        add_cable(graph, f"gpu{i}", f"cpu{i // 2}", c2c_bandwidth_Bps, c2c_latency_s, "c2c")
        add_cable(graph, f"nic{i}", f"cpu{i // 2}", pcie_bandwidth_Bps, pcie_latency_s, "pcie")
    _add_nvswitches(graph, [1] * NVL72_SWITCH_CHIPS, range(NVL72_GPUS), 0, nvlink_bandwidth_Bps,
                    nvswitch_latency_s, nvswitch_planes, nvls_efficiency if nvls else None)
    return validate(graph)


def power9_ac922(
    *,
    gpus_per_socket: int = 2,
    nvlink_bandwidth_Bps: float = NVLINK_Bps,
    nvlink_latency_s: float = NVLINK_LATENCY_S,
    xbus_bandwidth_Bps: float = 64e9,
    xbus_latency_s: float = SOCKET_LATENCY_S,
    pcie_bandwidth_Bps: float = PCIE4_Bps,
    pcie_latency_s: float = PCIE_LATENCY_S,
    nic_bandwidth_Bps: float = EDR_Bps,
) -> nx.DiGraph:
    """IBM Power System AC922: two POWER9 sockets, V100s on NVLink2 to their CPU.

    Each POWER9 socket and each V100 has 6 NVLink2 bricks (25 GB/s per direction
    each). With ``g`` GPUs per socket (2 in the air-cooled 4-GPU model 8335-GTH, 3 in
    the water-cooled 6-GPU 8335-GTW of Summit), GPU ``i`` sits on ``cpu{i // g}`` and
    every GPU-CPU and GPU-GPU pair of a socket is cabled with ``6 // g`` bricks:
    75 GB/s (g = 2) or 50 GB/s (g = 3), 150 GB/s per GPU in all. The sockets are
    joined by the 64 GB/s X-bus. One InfiniBand EDR port ``nic{s}`` per socket
    sits on a PCIe Gen4 x16 slot of ``cpu{s}``.

    Parameters
    ----------
    gpus_per_socket : {2, 3}
        GPUs per socket (default 2).
    nvlink_bandwidth_Bps, nvlink_latency_s : float
        One NVLink2 brick, per direction (default 25 GB/s, 0.5 us).
    xbus_bandwidth_Bps, xbus_latency_s : float
        The X-bus between the sockets (default 64 GB/s, 1 us).
    pcie_bandwidth_Bps, pcie_latency_s : float
        The NIC's PCIe Gen4 x16 slot (default 31.5 GB/s, 0.5 us).
    nic_bandwidth_Bps : float
        Port rate of each EDR port (default 100 Gb/s).

    Returns
    -------
    networkx.DiGraph
        ``2 g`` GPUs, 2 CPUs, 2 NICs.

    References
    ----------
    IBM (2018). IBM Power System AC922 Introduction and Technical Overview, Redpaper
    REDP-5472 (NVLink 2.0 bricks, X-bus, 4- and 6-GPU configurations).
    Cho, M., Finkler, U., Kung, D. and Hunter, H. (2019). BlueConnect: Decomposing
    all-reduce for deep learning on heterogeneous network hierarchy. SysML 2019.
    """
    if gpus_per_socket not in (2, 3) or isinstance(gpus_per_socket, bool):
        raise TopologyError(f"must be 2 or 3 (the AC922 models), got {gpus_per_socket!r}", path="gpus_per_socket")
    params = dict(locals())
    graph = _start(
        "power9_ac922",
        params,
        ("IBM Redpaper REDP-5472, IBM Power System AC922 Introduction and Technical Overview (2018): "
         "6 NVLink2 bricks per POWER9 and per V100, X-bus 64 GB/s, 4- and 6-GPU models", *_SPEC_SOURCES),
    )
    g = gpus_per_socket
    bricks = 6 // g
    _add_gpus(graph, 2 * g, lambda i: i // g, lambda i: i // g)
    _add_cpus(graph, xbus_bandwidth_Bps, xbus_latency_s, "xbus")
    _add_nics(graph, 2, nic_bandwidth_Bps, lambda j: j)
    for s in range(2):
        add_cable(graph, f"nic{s}", f"cpu{s}", pcie_bandwidth_Bps, pcie_latency_s, "pcie")
        members = range(s * g, (s + 1) * g)
        for i in members:
            add_cable(graph, f"gpu{i}", f"cpu{s}", nvlink_bandwidth_Bps, nvlink_latency_s, "nvlink", cables=bricks)
            for j in members:
                if i < j:
                    add_cable(graph, f"gpu{i}", f"gpu{j}", nvlink_bandwidth_Bps, nvlink_latency_s, "nvlink", cables=bricks)
    return validate(graph)


def abci_node(
    *,
    nvlink_bandwidth_Bps: float = NVLINK_Bps,
    nvlink_latency_s: float = NVLINK_LATENCY_S,
    pcie_bandwidth_Bps: float = PCIE3_Bps,
    pcie_latency_s: float = PCIE_LATENCY_S,
    socket_bandwidth_Bps: float = 3 * 20.8e9,
    socket_latency_s: float = SOCKET_LATENCY_S,
    nic_bandwidth_Bps: float = EDR_Bps,
) -> nx.DiGraph:
    """An ABCI compute node (AIST): 4 Tesla V100 SXM2, 2 Xeon Gold 6148, 2 EDR HCAs.

    The four V100 are fully connected by NVLink2 with every pair doubled (2 x 3
    pairs use all 6 links of a GPU: 150 GB/s per direction). Two PCIe Gen3
    switches each hold two GPUs and one InfiniBand EDR HCA: ``pcie0`` with
    ``gpu0, gpu1, nic0`` on ``cpu0``, ``pcie1`` with ``gpu2, gpu3, nic1`` on
    ``cpu1``; the sockets are joined by 3 UPI links at 10.4 GT/s.

    Parameters
    ----------
    nvlink_bandwidth_Bps, nvlink_latency_s : float
        One NVLink2 link, per direction (default 25 GB/s, 0.5 us).
    pcie_bandwidth_Bps, pcie_latency_s : float
        One PCIe Gen3 x16 link (default 15.75 GB/s, 0.5 us).
    socket_bandwidth_Bps, socket_latency_s : float
        The UPI links between the sockets together (default 62.4 GB/s, 1 us).
    nic_bandwidth_Bps : float
        Port rate of each EDR HCA (default 100 Gb/s).

    Returns
    -------
    networkx.DiGraph
        4 GPUs, 2 PCIe switches, 2 CPUs, 2 NICs; 12 NVLink cables on 6 pairs.

    References
    ----------
    AIST (2018). ABCI system overview: compute node (FUJITSU PRIMERGY CX2570 M4)
    with 4 NVIDIA Tesla V100 SXM2, 2 Intel Xeon Gold 6148, 2 InfiniBand EDR HCAs.
    Nguyen, T. T., Wahib, M. and Takano, R. (2019). Topology-aware sparse allreduce
    for large-scale deep learning. IPCCC 2019 (evaluated on ABCI).
    """
    params = dict(locals())
    graph = _start(
        "abci_node",
        params,
        ("AIST ABCI system overview (2018): compute node with 4 V100 SXM2 (NVLink2), 2 Xeon Gold 6148, "
         "2 InfiniBand EDR HCAs, 2 GPUs and 1 HCA per PCIe switch", *_SPEC_SOURCES,
         "Intel Xeon Gold 6148 datasheet: 3 UPI links at 10.4 GT/s"),
    )
    _add_gpus(graph, 4, lambda i: i // 2, lambda i: i // 2)
    _add_cpus(graph, socket_bandwidth_Bps, socket_latency_s, "upi")
    _add_nics(graph, 2, nic_bandwidth_Bps, lambda j: j)
    _add_pcie_tree(graph, 2, 4, 2, pcie_bandwidth_Bps, pcie_latency_s)
    for a in range(4):
        for b in range(a + 1, 4):
            add_cable(graph, f"gpu{a}", f"gpu{b}", nvlink_bandwidth_Bps, nvlink_latency_s, "nvlink", cables=2)
    return validate(graph)


NODES = MappingProxyType(
    {
        "dgx1": dgx1,
        "dgx2": dgx2,
        "dgx_a100": dgx_a100,
        "dgx_h100": dgx_h100,
        "dgx_b200": dgx_b200,
        "gb200_nvl72": gb200_nvl72,
        "power9_ac922": power9_ac922,
        "abci_node": abci_node,
    }
)
"""Server template name -> builder."""
