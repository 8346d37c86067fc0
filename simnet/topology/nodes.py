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
    ``pcie{j}``
        PCIe switches, kind ``switch``, with ``socket``.
    ``cpu{s}``
        CPU sockets, kind ``cpu``; they route PCIe traffic between their switches and
        across the inter-socket link.
    ``nic{j}``
        Network adapters, kind ``nic``, with ``rail = j`` and ``port_bandwidth_Bps``
        (the line rate of the port a fabric cables to). A template alone leaves the
        ports uncabled.

Tiers: ``"nvlink"`` (GPU-GPU and POWER9 GPU-CPU NVLink), ``"nvswitch"`` (GPU-NVSwitch
and NVSwitch-NVSwitch), ``"pcie"``, and the inter-socket link: ``"qpi"``, ``"upi"``,
``"xgmi"`` or ``"xbus"``.

Figures
    Bandwidths are per direction of one link. NVLink 2, 3 and 4 all run 25 GB/s per
    link per direction (NVIDIA V100, A100 and H100 architecture whitepapers: 6 links
    = 300 GB/s, 12 links = 600 GB/s and 18 links = 900 GB/s bidirectional per GPU).
    PCIe x16 carries 15.75 GB/s (Gen3, 8 GT/s with 128b/130b coding), 31.5 GB/s (Gen4)
    and 63 GB/s (Gen5) per direction (PCI-SIG base specifications 3.0, 4.0, 5.0).
    InfiniBand EDR, HDR and NDR ports run 100, 200 and 400 Gb/s (InfiniBand Trade
    Association roadmap).

    Latencies are modelling assumptions, not datasheet figures, chosen so that the
    shortest route between two GPUs of a server is the one CUDA peer-to-peer takes:
    a direct NVLink or the NVSwitch when present, PCIe through the switches and
    CPUs otherwise. Per link: NVLink 0.5 us, GPU-NVSwitch 0.25 us, PCIe 0.5 us,
    inter-socket 1 us. Every builder takes them as parameters.
"""

from __future__ import annotations

import inspect
from types import MappingProxyType

import networkx as nx

from simnet.errors import TopologyError
from simnet.topology.contract import validate
from simnet.topology.fabrics import _check_bandwidth, _check_latency, _label, add_cable

__all__ = ["dgx1", "dgx2", "dgx_a100", "dgx_h100", "power9_ac922", "abci_node", "NODES"]

NVLINK_Bps = 25e9
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
    planes: bool,
) -> list[str]:
    """One node per NVSwitch chip (`planes`), or one striped crossbar for all of them; returns their names."""
    groups = [[cables] for cables in cables_per_switch] if planes else [cables_per_switch]
    names = []
    for s, group in enumerate(groups):
        name = f"nvswitch{first + s}"
        graph.add_node(name, kind="switch", host=0, planes=len(group))
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
    _add_nvswitches(graph, cables_per_switch, range(8), 0, params["nvlink_bandwidth_Bps"], params["nvswitch_latency_s"],
                    params["nvswitch_planes"])
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
) -> nx.DiGraph:
    """NVIDIA DGX H100 with 8 H100 on 4 NVSwitches, PCIe Gen5, 8 NDR NICs.

    Every GPU has 18 NVLink4 links, cabled 5, 4, 4, 5 to 4 NVSwitch chips:
    18 x 25 GB/s = 450 GB/s per direction. By default the chips are one striped
    crossbar ``nvswitch0`` (see the module docstring); ``nvswitch_planes=True`` gives
    ``nvswitch0..3``. Four PCIe Gen5 switches ``pcie0..3`` each
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
    bidirectional NVLink per GPU.
    """
    params = dict(locals())
    sources = (
        "NVIDIA DGX H100 user guide / DGX SuperPOD H100 reference architecture (2023): 8 H100, 4 NVSwitches "
        "(5/4/4/5 links per GPU), 8 ConnectX-7 NDR 400 Gb/s, 2 Xeon Platinum 8480C",
        "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022): 18 NVLink4 links, 900 GB/s bidirectional",
        *_SPEC_SOURCES[1:],
    )
    return _dgx_nvswitch_node("dgx_h100", params, sources, [5, 4, 4, 5], "upi")


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
        "power9_ac922": power9_ac922,
        "abci_node": abci_node,
    }
)
"""Server template name -> builder."""
