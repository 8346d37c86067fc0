"""NCCL's search graphs and communicator facts derived from a simnet topology (an approximation).

:func:`graphs_from_network` reads what a simnet topology graph carries (the
server template named in ``graph.graph`` (``server``, or the builder), NVLink cable counts, PCIe and NIC
rates, hosts) and replays NCCL's topology search the way the research notes
describe it (§6: link bandwidths per GPU generation, ``maxBw``/``totalBw``, speed
arrays, the pass-1 speed descent, channel duplication, pass 2, compute channels,
NVLS heads). It is an honest approximation, not NCCL's recursive search:

* Capacity, not paths: at a speed ``s`` a server supports as many ring or tree
  channels as its links allow: a GPU's NVLink (to the NVSwitch) carries ``s`` per
  channel it sends on inside the server (every channel on one node; all but the
  exit GPU's share across nodes), and a NIC carries ``floor(min(path, port) / s)``
  channels. NVLS needs ``(heads + 1) s`` on every GPU's NVLink (the head doubles)
  and, across nodes, one NIC-local head GPU per NIC. NCCL's search finds the same
  counts on the NVSwitch servers of :data:`simnet.topology.NODES` (``dgx_a100``,
  ``dgx_h100``), where every GPU sees the others at full NVLink bandwidth and has
  a NIC on its PCIe switch; servers whose GPUs are joined by point-to-point
  NVLinks or PCIe only (``dgx1``, ``abci_node``, ``power9_ac922``) are refused.
* The pass-1 relaxations of NCCL (``sameChannels``, path types, ``crossNic``) add
  no capacity in this model and are skipped, except that a balanced tree needs a
  second GPU on a NIC's PCIe switch; without one, SM90+ falls back to the TREE
  pattern as NCCL does (search.cc ``ncclTopoCompute``).
* ``sameChannels`` is 1 on one node or with one GPU per node (NCCL's first try
  succeeds there), 0 otherwise (channels start on different NICs).
* CollNet graphs are not derived (CollNet stays disabled).
* Channels are duplicated at the end of pass 1 as in 2.19+; 2.18 duplicated after
  pass 2, which differs only where pass 2 raises a speed.

Link figures in NCCL's units (topo.h, topo.cc of each release): NVLink
``count × SMxx_NVLINK_BW`` (A100 12 × 20 = 240, H100 18 × 20.6 = 370.8 GB/s);
PCIe ``lanes × rate / 80`` (Gen3/4/5 x16: 12/24/48 GB/s), i.e. simnet's PCIe
line rate × 12 / 15.75; a NIC ``speed / 8000`` (its port rate in GB/s: HDR 25,
NDR 50). GPU models by template: ``dgx_a100`` SM80 with AMD EPYC 7742,
``dgx_h100`` SM90 with Intel Xeon 8480C (the templates' own sources), others by
``compute_capability``/``cpu_vendor``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import networkx as nx

from simnet.errors import SimnetError, expect_instance
from simnet.models.nccl.inputs import CPU_ARCHS, CPU_VENDORS, NcclGraph, NcclGraphs, NcclSystem
from simnet.models.nccl.versions import NcclVersion, nccl_version
from simnet.network import Network
from simnet.topology.io import server_template

__all__ = ["NcclInputs", "graphs_from_network", "network_tuning", "TEMPLATES", "MODELLED_SYSTEMS"]

TEMPLATES = {
    "dgx_a100": (80, "x86", "amd"),
    "dgx_h100": (90, "x86", "intel"),
    "dgx_b200": (100, "x86", "intel"),
    "gb200_nvl72": (100, "arm", "other"),
    "dgx1": (70, "x86", "intel"),
    "dgx2": (70, "x86", "intel"),
    "abci_node": (70, "x86", "intel"),
    "power9_ac922": (70, "power", "other"),
}
"""Server template -> (compute capability × 10, CPU architecture, CPU vendor), from the templates' sources."""

MODELLED_SYSTEMS = ("servers of GPUs on one NVSwitch or of one GPU (dgx_a100, dgx_h100, dgx_b200 and their "
                    "clusters, one gb200_nvl72 rack; a topology file of nodes and links names its server "
                    "template, e.g. server: dgx_h100)")
"""The systems :func:`network_tuning` derives NCCL's model for, as error messages name them."""

MAXCHANNELS = 64
MAX_NVLS_ARITY = 32
PCIE_GEN3_X16_Bps = 15.75e9
NCCL_PCI_GEN3_X16_GBps = 12.0
INTER_CPU_GBps = {"intel": 10.0, "amd": 16.0, "power": 32.0}
OTHER_INTER_CPU_GBps = 6.0
DUP_MIN_BW_GBps = 25.0
DUP_SM90_MIN_BW_GBps = 50.0
DOUBLING_MIN_RING_BW_GBps = 45.0
SM60_NVLINK_GBps = 18.0
SM70_SM80_NVLINK_GBps = 20.0
SM86_NVLINK_GBps = 12.0
SOCKET_TIERS = frozenset({"qpi", "upi", "xgmi", "xbus"})
EPSILON = 1e-3


class NcclInputs(NamedTuple):
    """What :func:`~simnet.models.nccl.tune_model` needs: ``tune_model(*inputs, version)``."""

    system: NcclSystem
    graphs: NcclGraphs


@dataclass(frozen=True)
class _Nic:
    port_GBps: float
    path_type: str
    path_GBps: float
    local_gpus: int


@dataclass(frozen=True)
class _Host:
    gpus: int
    nvlink_GBps: float
    pci_GBps: float
    nics: tuple[_Nic, ...]
    best_net_GBps: float


_PATH_RANK = {"PIX": 0, "PXB": 1, "PHB": 2, "SYS": 3}


def _nvlink_per_link(compcap: int, version: NcclVersion) -> float:
    """``ncclTopoNVLinkBw`` (topo.h ``SMxx_NVLINK_BW``) for a compute capability; SM100 is absent before 2.25."""
    if compcap >= 100 and version.nvlink_sm100_GBps:
        return version.nvlink_sm100_GBps
    if compcap >= 90:
        return version.nvlink_sm90_GBps
    if compcap == 86:
        return SM86_NVLINK_GBps
    return SM70_SM80_NVLINK_GBps if compcap >= 70 else SM60_NVLINK_GBps


def _pci_GBps(bandwidth_Bps: float) -> float:
    return round(bandwidth_Bps / PCIE_GEN3_X16_Bps * NCCL_PCI_GEN3_X16_GBps, 1)


def _host(graph: nx.DiGraph, gpus: list, members: list, compcap: int, vendor: str, version: NcclVersion) -> _Host:
    """The server of `gpus`, whose nodes are `members` (in graph order), as NCCL's search sees it."""
    per_link = _nvlink_per_link(compcap, version)
    nvlink, pci = [], []
    for gpu in gpus:
        links = [(v, data) for _, v, data in graph.out_edges(gpu, data=True)]
        cables = sum(data.get("cables", 1) for _, data in links if data["tier"] == "nvswitch")
        if len(gpus) > 1 and (cables == 0 or any(data["tier"] == "nvlink" for _, data in links)):
            raise SimnetError(
                f"GPU {gpu!r}: NCCL's search is only reproduced for servers whose GPUs share an NVSwitch "
                f"(dgx_a100, dgx_h100)", path="network")
        nvlink.append(cables * per_link)
        pci.append(max((_pci_GBps(data["bandwidth_Bps"]) for _, data in links if data["tier"] == "pcie"),
                       default=0.0))
    inside, tiers = set(members), SOCKET_TIERS | {"pcie"}
    wires = nx.Graph()
    wires.add_nodes_from(members)
    wires.add_edges_from((u, v) for u in members for v, data in graph.succ[u].items()
                         if v in inside and data["tier"] in tiers)

    def link(u, v) -> dict:
        return graph.edges[u, v] if graph.has_edge(u, v) else graph.edges[v, u]

    nics, best = [], 0.0
    for nic in members:
        data = graph.nodes[nic]
        if data.get("kind") != "nic":
            continue
        port = data.get("port_bandwidth_Bps", 0.0) / 1e9
        paths = []
        for gpu in gpus:
            try:
                route = nx.shortest_path(wires, gpu, nic)
            except nx.NetworkXNoPath:
                continue
            kinds = [graph.nodes[node]["kind"] for node in route[1:-1]]
            cpus = kinds.count("cpu")
            kind = ("PIX" if kinds.count("switch") == 1 else "PXB") if cpus == 0 else "PHB" if cpus == 1 else "SYS"
            bw = min(
                _pci_GBps(link(u, v)["bandwidth_Bps"]) if link(u, v)["tier"] == "pcie"
                else INTER_CPU_GBps.get(vendor, OTHER_INTER_CPU_GBps)
                for u, v in zip(route, route[1:])
            )
            paths.append((_PATH_RANK[kind], min(bw, port), kind))
        if not paths:
            continue
        best = max(best, max(bw for _, bw, _ in paths))
        rank = min(p[0] for p in paths)
        nearest = [p for p in paths if p[0] == rank]
        nics.append(_Nic(port, nearest[0][2], max(p[1] for p in nearest), len(nearest)))
    return _Host(len(gpus), min(nvlink), max(pci) if pci else 0.0, tuple(nics), best)


def _speeds(version: NcclVersion, compcap: int, inter: bool) -> tuple[float, ...]:
    if compcap >= 100 and version.sm100_speed_intra:
        return version.sm100_speed_inter if inter else version.sm100_speed_intra
    if compcap >= 90:
        return version.sm90_speed_inter if inter else version.sm90_speed_intra
    return version.speed_inter if inter else version.speed_intra


def _ring_tree_channels(host: _Host, inter: bool, type_inter: str, s_intra: float, s_inter: float) -> int:
    """Channels one server carries at these speeds (ring and tree; see the module docstring)."""
    if host.gpus > 1:
        if inter:
            n = 0
            while (n + 1 - (n + 1) // host.gpus) * s_intra <= host.nvlink_GBps + EPSILON:
                n += 1
                if n > MAXCHANNELS:
                    break
        else:
            n = math.floor(host.nvlink_GBps / s_intra + EPSILON)
    else:
        n = MAXCHANNELS
    if inter:
        usable = [nic for nic in host.nics if _PATH_RANK[nic.path_type] <= _PATH_RANK[type_inter]]
        n = min(n, sum(math.floor(min(nic.path_GBps, nic.port_GBps) / s_inter + EPSILON) for nic in usable))
    return n


def _nvls_channels(host: _Host, inter: bool, type_inter: str, s_intra: float, s_inter: float) -> int:
    n = min(host.gpus, MAX_NVLS_ARITY, math.floor(host.nvlink_GBps / s_intra + EPSILON) - 1)
    if inter:
        heads = [nic for nic in host.nics if nic.path_type == type_inter and nic.local_gpus >= 1
                 and min(nic.path_GBps, nic.port_GBps) + EPSILON >= s_inter]
        n = min(n, len(heads))
    return max(n, 0)


@dataclass(frozen=True)
class _Found:
    channels: int
    bw_intra: float
    bw_inter: float


FALLBACK = _Found(1, 0.1, 0.1)
"""NCCL's graph when the search finds nothing: one channel at 0.1 GB/s (search.cc ``ncclTopoCompute``)."""


def _better(pattern: str, found: _Found, best: _Found | None, gpus: int) -> bool:
    if best is None:
        return True
    if pattern == "nvls":
        return (best.channels < found.channels <= gpus) or \
            found.channels * found.bw_inter > best.channels * best.bw_inter + EPSILON
    return found.channels * found.bw_intra > best.channels * best.bw_intra + EPSILON


def _search(pattern: str, hosts: list[_Host], inter: bool, type_inter: str, speeds: tuple, max_bw: float,
            total_bw: float, min_channels: int, max_channels: int, compcap: int) -> _Found | None:
    """Pass 1, duplication and pass 2 of ``ncclTopoCompute`` over the capacity model (§6.3)."""
    gpus = min(host.gpus for host in hosts)
    count = _nvls_channels if pattern == "nvls" else _ring_tree_channels

    def channels(s_intra: float, s_inter: float) -> int:
        return min(max_channels, *(count(host, inter, type_inter, s_intra, s_inter) for host in hosts))

    scaled_total = total_bw * gpus / (gpus - 1) if gpus > 1 and pattern != "ring" else total_bw
    index = 0
    while (speeds[index] > max_bw or speeds[index] * min_channels > scaled_total) and index < len(speeds) - 1:
        index += 1
    best = None
    while True:
        speed = speeds[index]
        found = _Found(channels(speed, speed), speed, speed)
        if found.channels >= min_channels and found.channels > 0 and _better(pattern, found, best, gpus):
            best = found
        if best is not None and (best.channels == max_channels or best.channels * best.bw_inter >= total_bw):
            break
        if index < len(speeds) - 1 and (best is None or speeds[index + 1] / best.bw_inter > 0.49):
            index += 1
            continue
        break
    if best is None:
        return None
    if pattern != "nvls" and best.bw_intra >= DUP_MIN_BW_GBps and not (
            compcap > 80 and best.bw_intra < DUP_SM90_MIN_BW_GBps and best.channels > 4):
        doubled = min(2 * best.channels, max_channels)
        factor = -(-doubled // best.channels)
        best = _Found(doubled, best.bw_intra / factor, best.bw_inter / factor)
    index = 0
    while speeds[index] > best.bw_inter and index < len(speeds) - 1:
        index += 1
    intra = inter_bw = speeds[index]
    while index > 0:
        index -= 1
        if pattern == "ring":
            intra = inter_bw = speeds[index]
        elif pattern == "nvls":
            if not (inter_bw == best.bw_inter and inter_bw < 2 * best.bw_intra):
                break
            intra, inter_bw = best.bw_intra, speeds[index]
        else:
            if not (intra == best.bw_intra and intra < 2 * best.bw_inter):
                break
            intra, inter_bw = speeds[index], best.bw_inter
        found = _Found(channels(intra, inter_bw), intra, inter_bw)
        if found.channels >= best.channels and (
                _better(pattern, found, best, gpus) or (pattern == "nvls" and found.channels == best.channels
                                                        and found.bw_inter > best.bw_inter)):
            best = found
    return best


def _reduces_in_server(network: Network, ranks: Sequence[int]) -> bool:
    """Whether the GPUs of network ranks `ranks`, all of one server, share a reduce-capable switch of that
    server: :meth:`Network.reduction_switch`, where the NVLS schedules reduce, finds one inside the server
    (a fabric's SHARP switch serving them is not NVLS)."""
    try:
        switch = network.reduction_switch(ranks)
    except SimnetError:
        return False
    nodes = network.graph.nodes
    return nodes[switch].get("host") == nodes[network.ranks[ranks[0]]].get("host")


def graphs_from_network(network: Network, version: str | NcclVersion = "2.30.7", *,
                        ranks: Sequence[int] | None = None, compute_capability: int | None = None,
                        cpu_vendor: str | None = None, cpu_arch: str | None = None,
                        nvls: bool = True) -> NcclInputs:
    """NCCL's search graphs and communicator for ranks of a simnet network (approximation).

    Parameters
    ----------
    network : Network
        A topology of NVSwitch servers (:func:`simnet.topology.dgx_a100`,
        :func:`~simnet.topology.dgx_h100`, or :func:`~simnet.topology.cluster` of them).
    version : str or NcclVersion, optional
        NCCL release whose constants (NVLink per link, speed arrays, channel rules)
        apply (default ``"2.30.7"``).
    ranks : sequence of int, optional
        The communicator's ranks (default: every GPU of the network).
    compute_capability : int, optional
        CUDA compute capability × 10 (default: from the server template).
    cpu_vendor, cpu_arch : str, optional
        Defaults from the server template.
    nvls : bool, optional
        Allow NVLink SHARP where the hardware has it (``NCCL_NVLS_ENABLE``): SM90+
        with an NVSwitch that reduces (``reduce = True``) and serves the
        communicator's GPUs of every server, the switch
        :meth:`simnet.network.Network.reduction_switch` places the reductions of
        the ``nvls`` and ``nvls_tree`` schedules on. Without one (a template
        built with ``nvls=False``), NVLS and NVLSTree get no bandwidth, as in
        NCCL without NVLS support.

    Returns
    -------
    NcclInputs
        ``(system, graphs)`` for :func:`~simnet.models.nccl.tune_model`.

    Raises
    ------
    SimnetError
        For an unknown template without ``compute_capability``, bad ranks, or a
        server whose GPUs do not share an NVSwitch.

    Examples
    --------
    >>> from simnet.topology import dgx_h100
    >>> system, graphs = graphs_from_network(Network(dgx_h100()))
    >>> graphs.ring.n_channels, graphs.ring.bw_intra_GBps, system.n_channels, graphs.nvls.n_channels
    (12, 30.0, 24, 8)
    """
    expect_instance(network, Network, "network")
    version = nccl_version(version)
    graph = network.graph
    template = server_template(graph)
    defaults = TEMPLATES.get(template)
    if compute_capability is None:
        if defaults is None:
            raise SimnetError(f"server template {template!r} has no known GPU; pass compute_capability",
                              path="compute_capability")
        compute_capability = defaults[0]
    if isinstance(compute_capability, bool) or not isinstance(compute_capability, int) or compute_capability < 30:
        raise SimnetError(f"must be an integer ≥ 30 (e.g. 90 for SM90), got {compute_capability!r}",
                          path="compute_capability")
    arch = cpu_arch if cpu_arch is not None else defaults[1] if defaults else "x86"
    vendor = cpu_vendor if cpu_vendor is not None else defaults[2] if defaults else "other"
    if arch not in CPU_ARCHS:
        raise SimnetError(f"must be one of {', '.join(CPU_ARCHS)}, got {arch!r}", path="cpu_arch")
    if vendor not in CPU_VENDORS:
        raise SimnetError(f"must be one of {', '.join(CPU_VENDORS)}, got {vendor!r}", path="cpu_vendor")
    if not isinstance(nvls, bool):
        raise SimnetError(f"must be true or false, got {nvls!r}", path="nvls")
    chosen = list(range(network.size)) if ranks is None else list(ranks)
    if not chosen or len(set(chosen)) != len(chosen) or any(
            isinstance(r, bool) or not isinstance(r, int) or not 0 <= r < network.size for r in chosen):
        raise SimnetError(f"must be distinct ranks of the network (0..{network.size - 1}), got {ranks!r}",
                          path="ranks")
    ranks_by_host: dict = {}
    for rank in chosen:
        ranks_by_host.setdefault(graph.nodes[network.ranks[rank]].get("host", 0), []).append(rank)
    n_ranks, n_nodes = len(chosen), len(ranks_by_host)
    nodes_by_host: dict = {}
    for node, host in graph.nodes(data="host"):
        nodes_by_host.setdefault(host, []).append(node)
    hosts = [_host(graph, [network.ranks[rank] for rank in members], nodes_by_host.get(host, []), compute_capability,
                   vendor, version) for host, members in ranks_by_host.items()]
    inter = n_nodes > 1
    if inter and any(not host.nics for host in hosts):
        raise SimnetError("every server of a multi-node communicator needs a NIC", path="network")
    has_nvswitch = any(data["tier"] == "nvswitch" for _, _, data in graph.edges(data=True))
    same = not inter or all(host.gpus == 1 for host in hosts)
    type_intra = "NVL" if min(host.gpus for host in hosts) > 1 else "LOC"
    type_inter = "PIX"
    if inter:
        type_inter = max((min((nic.path_type for nic in host.nics), key=_PATH_RANK.get) for host in hosts),
                         key=_PATH_RANK.get)
    max_bw = min(host.best_net_GBps if inter else host.nvlink_GBps for host in hosts)
    total_bw = min(max(host.nvlink_GBps, host.pci_GBps) for host in hosts)
    speeds = _speeds(version, compute_capability, inter)
    system_args = dict(n_ranks=n_ranks, n_nodes=n_nodes, min_compcap=compute_capability, cpu_arch=arch,
                       cpu_vendor=vendor, has_nvswitch=has_nvswitch, max_local_ranks=max(h.gpus for h in hosts))
    if n_ranks == 1:
        return NcclInputs(NcclSystem(**system_args), NcclGraphs())
    ring = _search("ring", hosts, inter, type_inter, speeds, max_bw, total_bw, 1, MAXCHANNELS // 2,
                   compute_capability) or FALLBACK
    balanced = not inter or all(nic.local_gpus >= 2 for host in hosts for nic in host.nics
                                if nic.path_type == type_inter)
    tree_pattern = "balanced_tree" if balanced or compute_capability < 90 else "tree"
    if min(host.gpus for host in hosts) == 1:
        tree_pattern = "tree"
    tree = _search(tree_pattern, hosts, inter, type_inter, speeds, max_bw, total_bw, ring.channels, ring.channels,
                   compute_capability) or FALLBACK
    channels = min(ring.channels, tree.channels)
    nvls_graph = NcclGraph(pattern="nvls")
    nvls_channels = 0
    if nvls and has_nvswitch and compute_capability >= 90 and all(
            _reduces_in_server(network, ranks) for ranks in ranks_by_host.values()):
        gpus = min(host.gpus for host in hosts)
        max_heads = min(MAX_NVLS_ARITY, gpus)
        found = _search("nvls", hosts, inter, type_inter, speeds, max_bw, total_bw,
                        1 if inter else max_heads, max_heads, compute_capability)
        if found is not None:
            nvls_graph = NcclGraph("nvls", found.channels, found.bw_intra, found.bw_inter, type_intra, type_inter)
            if compute_capability >= 100:
                nvls_channels = version.nvls_channels_sm100 if inter else version.nvls_channels_sm100_single
            else:
                nvls_channels = version.nvls_channels_sm90
    compute = min(MAXCHANNELS, 2 * channels)
    rule = version.compute_doubling
    sm90 = compute_capability == 90 if rule in ("2.18", "2.20") else compute_capability >= 90
    small = 2 * compute <= MAXCHANNELS if rule == "2.18" else compute < 16
    if sm90 and inter and ring.bw_intra > DOUBLING_MIN_RING_BW_GBps and small:
        compute *= 2
    if version.nvls_raises_channels and compute < nvls_channels:
        compute = nvls_channels
    graphs = NcclGraphs(
        ring=NcclGraph("ring", channels, ring.bw_intra, ring.bw_inter, type_intra, type_inter, same),
        tree=NcclGraph(tree_pattern, channels, tree.bw_intra, tree.bw_inter, type_intra, type_inter, same),
        nvls=nvls_graph,
    )
    system = NcclSystem(**system_args, n_channels=compute, nvls_channels=nvls_channels,
                        nvls_support=nvls_graph.n_channels > 0, max_tree_pattern=tree_pattern)
    return NcclInputs(system, graphs)


def network_tuning(network: Network, version: str | NcclVersion = "2.30.7", ranks: Sequence[int] | None = None):
    """NCCL's cost model of all ranks of `network` (or of a communicator of `ranks`), or ``None`` where
    :func:`graphs_from_network` cannot derive it.

    A convenience for reports that set NCCL's choice beside simnet's: topologies
    that are not servers of GPUs on one NVSwitch (``switch``, tori, ``dgx1``, ...)
    have no NCCL model here and get ``None`` instead of an error. Computed once per
    network, release and communicator (:meth:`simnet.network.Network.derived`).

    Raises
    ------
    SimnetError
        For a release NCCL's model does not know (path ``version``): that is the caller's input, not the
        topology's.
    """
    from simnet.models.nccl.model import tune_model

    nccl_version(version)
    chosen = None if ranks is None else tuple(int(rank) for rank in ranks)

    def compute():
        try:
            system, graphs = graphs_from_network(network, version, ranks=chosen)
            return tune_model(system, graphs, version)
        except SimnetError:
            return None

    return network.derived(("nccl_tuning", str(version)) + (() if chosen is None else (chosen,)), compute)
