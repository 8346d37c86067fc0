"""NCCL releases 2.18.3 to 2.30.7: the constants and formula variants of NCCL's cost model.

Every release is one :class:`NcclVersion` record in :data:`NCCL_VERSIONS`, keyed by
its release number (``"2.22.3"``). Constants are data read from the release's
source (NVIDIA/nccl, tag ``v<release>-1``): ``src/graph/tuning.cc`` (latencies,
per-architecture bandwidth caps, tree correction, NVLS efficiency),
``src/graph/topo.h`` (NVLink bandwidth per link), ``src/graph/search.cc`` (speed
arrays), ``src/transport/nvls.cc`` (NVLS compute channels). Where the model's
*formulas* changed between releases, the record names the variant in a small
field (``ring_ll_rule``, ``nvls_model``, ...) and :mod:`simnet.models.nccl.model`
branches on it; each field's docstring says which releases do what. The change
log is the research note's §3.9 and §4.5, checked release by release against
``git diff`` of ``tuning.cc`` (identical files are grouped below).

Units: latencies µs, bandwidths GB/s (NCCL's). Table rows are indexed by NCCL's
ids (algorithm ``NCCL_ALGO_*``, protocol LL/LL128/Simple, hardware
NVLink/PCI/NET, compute-capability row Volta/Ampere/Hopper[/Blackwell], column
1 node / 2 nodes / ≥ 3 nodes).

Not covered: 2.18.1 and earlier (different latency tables, one-line init table);
their logs cannot be replayed here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType

from simnet.errors import SimnetError

__all__ = ["NcclVersion", "NCCL_VERSIONS", "nccl_version"]

_TREE_CORRECTION_23 = (
    (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0),
    (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0),
    (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9),
)
_TREE_CORRECTION_24 = tuple(row + (last,) for row, last in zip(_TREE_CORRECTION_23, (1.0, 1.0, .9)))

_ZERO = (0.0, 0.0, 0.0)

_PATH_ORDER_2_18 = ("LOC", "NVL", "NVB", "PIX", "PXB", "PXN", "PHB", "SYS", "NET", "DIS")
_PATH_ORDER_2_26 = ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "PXN", "PHB", "SYS", "NET", "DIS")
_PATH_ORDER_2_27_3 = ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "PXN", "P2C", "PHB", "SYS", "NET", "DIS")
_PATH_ORDER_2_27_5 = ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS")

_SPEED_INTRA = (40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0)
_SPEED_INTER = (48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.4, 1.2, 0.24,
                0.12)
_SM90_INTER_2_18 = (48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12)
_SM90_INTER = (48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12)


@dataclass(frozen=True)
class NcclVersion:
    """Constants and formula variants of one NCCL release.

    Attributes
    ----------
    release : str
        ``"2.30.7"``; the source tag is ``v<release>-1``.
    source : str
        File and line anchors of the tables and functions in that tag.
    n_algorithms : int
        ``NCCL_NUM_ALGORITHMS``: 6 before 2.23 (no PAT), 7 since.
    base_latency_us : tuple
        ``baseLat`` / ``baseLatencies[algo][proto]``, µs.
    hw_latency_us : tuple
        ``hwLat`` / ``hwLatencies[NVLink|PCI|NET][algo][proto]``, µs.
    ll_max_GBps, ring_ll128_GBps, tree_ll128_GBps, tree_GBps : tuple
        ``llMaxBws``, ``perChMaxRingLL128Bws``, ``perChMaxTreeLL128Bws``,
        ``perChMaxTreeBws`` rows by compute-capability index (3 rows before 2.25,
        4 since), columns 1 / 2 / ≥ 3 nodes, GB/s.
    nvls_tree_GBps : tuple or None
        ``perChMaxNVLSTreeBws`` (2.28+).
    nvls_efficiency : tuple or None
        ``nvlsEfficiency`` by compute-capability index (2.28+).
    tree_correction : tuple
        ``treeCorrectionFactor[proto][log2(nBytes/64)]`` (23 entries, 24 in 2.29+).
    ring_ll_rule : str
        ``"quarter"`` (≤ 2.20: Ring/LL bus bandwidth × 1/4, or × 1/3 for one node
        and Broadcast/AllGather/ReduceScatter) or ``"half"`` (2.21+: × 0.5).
    ring_ll128_low_ppn : bool
        Ring/LL128 × 0.7 instead of 0.92 when fewer than 2 ranks per node (≤ 2.22).
    nvls_model : str
        NVLS/NVLSTree bandwidth and latency: ``"2.18"`` (graph bandwidth like the
        others, NVLSTree ratio 0.70·n/(2(n−1)), base latency 23 µs), ``"2.19"``
        (min of intra and inter bandwidth, NVLSTree inter halved beyond 2 nodes,
        ratio 5/6), ``"2.27"`` (as 2.19, AllGather/ReduceScatter NVLS
        min(bwIntra·(ppn−1)/ppn, 0.9·bwInter)), ``"2.28"`` (``nvlsEfficiency``,
        at least 2 channels, ratio nRanks/nsteps).
    ag_rs_algorithms : tuple of int
        Algorithms modelled for AllGather and ReduceScatter.
    ratio_skip : str
        Which AllGather/ReduceScatter entries keep bus bandwidth (no algBw
        ratio): ``"none"`` (≤ 2.19), ``"collnet_direct"`` (2.20-2.22),
        ``"non_ring"`` (2.23+).
    collnet_direct_ag_rs : str or None
        CollNetDirect AllGather/ReduceScatter bandwidth: ``"interpolated"``
        (2.20-2.26: ppn·bw × (0.85 w + 0.95 (1 − w)), w = (ppn−1)/7),
        ``"min_inter"`` (2.27+: ppn·min(bwIntra, 0.9·bwInter)).
    inter_steps_2n : bool
        Ring AllReduce counts 2·nNodes network steps (≤ 2.22) instead of 2(nNodes−1).
    ppn1_tree_latency : bool
        With one rank per node every algorithm uses Tree's network latency (2.23+).
    collnet_arity_us : float
        CollNetDirect arity serialisation latency (0.5 µs in 2.18, 0.4 since).
    pat_factor : float or None
        PAT bus-bandwidth factor (0.85 in 2.23, 0.75 since); None before PAT.
    pat_needs_sm60 : bool
        PAT disabled below compute capability 6.0 (2.26+).
    mnnvl_single_node : bool
        A multi-node NVLink communicator is costed as one node (2.20 only).
    ring_backup : str or None
        Ring "backup" bandwidth when every algorithm of a function is disabled:
        ``"2.19"`` (2.19-2.21), ``"2.22"`` (2.22-2.23: also cleared when a ring
        protocol is disabled), None otherwise.
    ring_kept_non_allreduce : bool
        ``NCCL_ALGO`` never disables Ring for non-AllReduce functions (2.18).
    collnet_restores_ring_tree : bool
        Without CollNet, an ``NCCL_ALGO`` that disables Ring, Tree, NVLS and NVLSTree
        re-enables Ring and Tree (≤ 2.23).
    per_function_enable : bool
        ``NCCL_ALGO``/``NCCL_PROTO`` take ``func:list`` entries and reject unknown
        names (2.24+); before, one global list, unknown names ignored.
    ll_mixed_cpu_is_amd : bool
        A mixed-vendor CPU set picks the AMD ``llMaxBws`` row (2.24+).
    tree_pattern_from_comm : bool
        The Tree 0.85 factor tests ``comm->maxTreePattern`` (2.26+) instead of the
        tree graph's pattern.
    collnet_chain_support_check : bool
        CollNetChain disabled without ``collNetChainSupport`` (2.30.7).
    ll128_rule : str
        LL128 default-enable rule: ``"2.18"``, ``"2.25"`` (adds SM100/SM120),
        ``"2.27.3"``, ``"2.27.5"``, ``"2.30"`` (mixed compute capabilities allowed
        from SM90).
    path_order : tuple of str
        Path types in increasing ``PATH_*`` value for this release.
    blackwell_row : bool
        Tables have a Blackwell row and SM100+ uses it (2.25+); before, SM ≥ 90
        uses the Hopper row.
    nvls_tree_correction : bool
        NVLSTree AllReduce gets the tree correction on SM100+ x86 (2.29+).
    old_log2 : bool
        ``log2i(0)`` is 0 (≤ 2.21) rather than −1, so sizes below 64 B use entry 0.
    plateau_skips_mnnvl : bool
        The Ring/Simple plateau ignores multi-node NVLink communicators (2.20).
    work_batch : int
        Aggregated operations per latency count for non-ring algorithms:
        ``NCCL_MAX_WORK_ELEMENTS`` 9 (≤ 2.21, static-asserted) or
        ``NCCL_MAX_DEV_WORK_BATCH_COLLS`` = 1024 / sizeof(ncclDevWorkColl) (2.22+;
        8 assumed, from the 128-byte struct of 2.30).
    decision_format : str
        Per-size TUNING line: ``"trace"`` (2.18-2.19, TRACE builds only),
        ``"numeric"`` (2.20-2.22), ``"numeric_function"`` (2.23), ``"names"`` (2.24+).
    backup_prints_sentinel : bool
        A backup Ring choice prints the 3600000000 µs sentinel as its time (2.20-2.21).
    init_blocks_of_three : bool
        The init table prints algorithms in blocks of 3 (2.23+) instead of 2 halves.
    runtime_filter : str
        Per-operation filters of ``updateCollCostTable``/``getAlgoInfo``: ``"2.18"``,
        ``"2.19"``, ``"2.20"``, ``"2.22"``, ``"2.23"``, ``"2.25"``, ``"2.27"``, ``"2.28"``.
    fp8_ring_penalty : bool
        Ring time × 1024 for fp8 with more than 8 ranks (2.24+).
    nvlink_sm90_GBps, nvlink_sm100_GBps : float
        ``SM90_NVLINK_BW`` and ``SM100_NVLINK_BW`` (topo.h); 0 where absent.
    speed_intra, speed_inter, sm90_speed_intra, sm90_speed_inter, sm100_speed_intra, sm100_speed_inter : tuple
        Search speed arrays (search.cc), GB/s; the SM100 ones are empty before 2.25.
    compute_doubling : str
        Compute-channel doubling of SM90 multi-node rings with bwIntra > 45:
        ``"2.18"`` (minCC == 90 and 2n ≤ 64), ``"2.20"`` (minCC == 90 and n < 16),
        ``"2.25"`` (minCC ≥ 90 and n < 16).
    nvls_raises_channels : bool
        Compute channels are raised to ``nvlsChannels`` (2.20+).
    nvls_channels_sm90, nvls_channels_sm100, nvls_channels_sm100_single : int
        Default NVLS compute channels (nvls.cc ``NVLS_NCHANNELS_*``).
    """

    release: str
    source: str
    n_algorithms: int
    base_latency_us: tuple
    hw_latency_us: tuple
    ll_max_GBps: tuple
    ring_ll128_GBps: tuple
    tree_ll128_GBps: tuple
    tree_GBps: tuple
    nvls_tree_GBps: tuple | None
    nvls_efficiency: tuple | None
    tree_correction: tuple
    ring_ll_rule: str
    ring_ll128_low_ppn: bool
    nvls_model: str
    ag_rs_algorithms: tuple
    ratio_skip: str
    collnet_direct_ag_rs: str | None
    inter_steps_2n: bool
    ppn1_tree_latency: bool
    collnet_arity_us: float
    pat_factor: float | None
    pat_needs_sm60: bool
    mnnvl_single_node: bool
    ring_backup: str | None
    ring_kept_non_allreduce: bool
    collnet_restores_ring_tree: bool
    per_function_enable: bool
    ll_mixed_cpu_is_amd: bool
    tree_pattern_from_comm: bool
    collnet_chain_support_check: bool
    ll128_rule: str
    path_order: tuple
    blackwell_row: bool
    nvls_tree_correction: bool
    old_log2: bool
    plateau_skips_mnnvl: bool
    work_batch: int
    decision_format: str
    backup_prints_sentinel: bool
    init_blocks_of_three: bool
    runtime_filter: str
    fp8_ring_penalty: bool
    nvlink_sm90_GBps: float
    nvlink_sm100_GBps: float
    speed_intra: tuple
    speed_inter: tuple
    sm90_speed_intra: tuple
    sm90_speed_inter: tuple
    sm100_speed_intra: tuple
    sm100_speed_inter: tuple
    compute_doubling: str
    nvls_raises_channels: bool
    nvls_channels_sm90: int
    nvls_channels_sm100: int
    nvls_channels_sm100_single: int

    @property
    def tag(self) -> str:
        """Git tag of the release in NVIDIA/nccl, e.g. ``"v2.30.7-1"``."""
        return f"v{self.release}-1"

    @property
    def key(self) -> tuple[int, ...]:
        """Release as a comparable tuple, e.g. ``(2, 30, 7)``."""
        return tuple(int(part) for part in self.release.split("."))


def _source(tag: str, base: int, hw: int, llmax: int, tune: int, corr: int, time: int) -> str:
    return (
        f"NVIDIA/nccl {tag} src/graph/tuning.cc: base latencies l.{base}, hw latencies l.{hw}, "
        f"llMaxBws and per-channel caps l.{llmax}, ncclTopoTuneModel l.{tune}, treeCorrectionFactor l.{corr}, "
        f"ncclTopoGetAlgoTime l.{time}"
    )


# 2.18.3 (= 2.18.5, 2.18.6): tuning.cc l.56 baseLat, l.65 hwLat, l.86 llMaxBws, l.120 ncclTopoTuneModel.
_V2_18 = NcclVersion(
    release="2.18.3",
    source=_source("v2.18.3-1", 56, 65, 86, 120, 375, 381),
    n_algorithms=6,
    base_latency_us=(
        (6.8, 14.0, 0.0), (6.6, 14.0, 8.4), (6.8, 14.0, 0.0), (6.8, 14.0, 0.0), (0.0, 0.0, 23.0), (0.0, 0.0, 23.0),
        _ZERO,
    ),
    hw_latency_us=(
        ((.6, 1.25, 4.0), (.6, 1.9, 3.4), (0.0, 0.0, 8.0), (0.0, 0.0, 4.75), _ZERO, _ZERO, _ZERO),
        ((1.0, 1.9, 6.0), (1.0, 2.5, 5.7), (0.0, 0.0, 8.0), (0.0, 0.0, 8.0), _ZERO, _ZERO, _ZERO),
        ((5.0, 8.5, 14.0), (2.7, 4.0, 14.0), (0.0, 0.0, 10.7), (0.0, 0.0, 14.0), (0.0, 0.0, 18.0), (0.0, 0.0, 19.0),
         _ZERO),
    ),
    ll_max_GBps=((39.0, 39.0, 20.4), (87.7, 22.5, 19.0), (87.7, 22.5, 19.0)),
    ring_ll128_GBps=((20.0, 20.0, 20.0), (20.0, 20.0, 20.0), (36.7, 36.7, 36.7)),
    tree_ll128_GBps=((20.0, 20.0, 20.0), (20.0, 20.0, 20.0), (36.7, 36.7, 29.0)),
    tree_GBps=((26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (38.7, 41.4, 36.0)),
    nvls_tree_GBps=None,
    nvls_efficiency=None,
    tree_correction=_TREE_CORRECTION_23,
    ring_ll_rule="quarter",
    ring_ll128_low_ppn=True,
    nvls_model="2.18",
    ag_rs_algorithms=(1,),
    ratio_skip="none",
    collnet_direct_ag_rs=None,
    inter_steps_2n=True,
    ppn1_tree_latency=False,
    collnet_arity_us=0.5,
    pat_factor=None,
    pat_needs_sm60=False,
    mnnvl_single_node=False,
    ring_backup=None,
    ring_kept_non_allreduce=True,
    collnet_restores_ring_tree=True,
    per_function_enable=False,
    ll_mixed_cpu_is_amd=False,
    tree_pattern_from_comm=False,
    collnet_chain_support_check=False,
    ll128_rule="2.18",
    path_order=_PATH_ORDER_2_18,
    blackwell_row=False,
    nvls_tree_correction=False,
    old_log2=True,
    plateau_skips_mnnvl=False,
    work_batch=9,
    decision_format="trace",
    backup_prints_sentinel=False,
    init_blocks_of_three=False,
    runtime_filter="2.18",
    fp8_ring_penalty=False,
    nvlink_sm90_GBps=20.0,
    nvlink_sm100_GBps=0.0,
    speed_intra=_SPEED_INTRA,
    speed_inter=_SPEED_INTER,
    sm90_speed_intra=(60.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 6.0, 3.0),
    sm90_speed_inter=_SM90_INTER_2_18,
    sm100_speed_intra=(),
    sm100_speed_inter=(),
    compute_doubling="2.18",
    nvls_raises_channels=False,
    nvls_channels_sm90=16,
    nvls_channels_sm100=16,
    nvls_channels_sm100_single=16,
)

# 2.19.x: CollNet/NVLS latencies, Tree Simple hw latency 28, NVLS AllGather/ReduceScatter, ring backup
# (tuning.cc l.56-86, l.120; search.cc l.843-844 sm90 speeds; git diff v2.18.6-1 v2.19.1-1).
_V2_19 = replace(
    _V2_18,
    release="2.19.1",
    source=_source("v2.19.4-1", 56, 65, 86, 120, 394, 400),
    base_latency_us=((6.8, 14.0, 0.0), (6.6, 14.0, 8.4), _ZERO, _ZERO, _ZERO, _ZERO, _ZERO),
    hw_latency_us=(
        ((.6, 1.25, 28.0), (.6, 1.9, 3.4), (0.0, 0.0, 3.7), (0.0, 0.0, 2.8), (0.0, 0.0, 23.0), (0.0, 0.0, 23.0),
         _ZERO),
        ((1.0, 1.9, 28.0), (1.0, 2.5, 5.7), (0.0, 0.0, 3.7), (0.0, 0.0, 2.8), _ZERO, _ZERO, _ZERO),
        ((5.0, 8.5, 28.0), (2.7, 4.0, 14.0), (0.0, 0.0, 31.0), (0.0, 0.0, 30.0), (0.0, 0.0, 18.0), (0.0, 0.0, 14.0),
         _ZERO),
    ),
    nvls_model="2.19",
    ag_rs_algorithms=(1, 4),
    collnet_arity_us=0.4,
    ring_backup="2.19",
    ring_kept_non_allreduce=False,
    runtime_filter="2.19",
    sm90_speed_intra=(60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 6.0, 3.0),
    sm90_speed_inter=_SM90_INTER,
)

# 2.20.x: CollNetDirect AllGather/ReduceScatter, MNNVL as one node, TUNING line printed, SM90 NVLink 20.6
# (tuning.cc l.120; enqueue.cc l.1498; topo.h l.17; connect.cc l.456 and l.473).
_V2_20 = replace(
    _V2_19,
    release="2.20.3",
    source=_source("v2.20.5-1", 56, 65, 86, 120, 415, 421),
    ag_rs_algorithms=(1, 2, 4),
    ratio_skip="collnet_direct",
    collnet_direct_ag_rs="interpolated",
    mnnvl_single_node=True,
    plateau_skips_mnnvl=True,
    decision_format="numeric",
    backup_prints_sentinel=True,
    runtime_filter="2.20",
    nvlink_sm90_GBps=20.6,
    compute_doubling="2.20",
    nvls_raises_channels=True,
)

# 2.21.5: Ring/LL x 0.5, Hopper llMaxBws 141/45/35, NVLS NVLink latency 25 (git diff v2.20.5-1 v2.21.5-1).
_V2_21 = replace(
    _V2_20,
    release="2.21.5",
    source=_source("v2.21.5-1", 56, 65, 86, 120, 412, 418),
    hw_latency_us=(
        ((.6, 1.25, 28.0), (.6, 1.9, 3.4), (0.0, 0.0, 3.7), (0.0, 0.0, 2.8), (0.0, 0.0, 25.0), (0.0, 0.0, 25.0),
         _ZERO),
        _V2_20.hw_latency_us[1],
        _V2_20.hw_latency_us[2],
    ),
    ll_max_GBps=((39.0, 39.0, 20.4), (87.7, 22.5, 19.0), (141.0, 45.0, 35.0)),
    ring_ll_rule="half",
    mnnvl_single_node=False,
    plateau_skips_mnnvl=False,
    sm90_speed_intra=(60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0),
)

# 2.22.3: new ncclTopoGetAlgoTime signature, log2i(0) = -1, ring backup cleared by disabled protocols,
# work batch NCCL_MAX_DEV_WORK_BATCH_COLLS, unpack networks (git diff v2.21.5-1 v2.22.3-1; enqueue.cc l.1543-1613).
_V2_22 = replace(
    _V2_21,
    release="2.22.3",
    source=_source("v2.22.3-1", 56, 65, 86, 118, 411, 417),
    ring_backup="2.22",
    old_log2=False,
    work_batch=8,
    backup_prints_sentinel=False,
    runtime_filter="2.22",
)

# 2.23.4: PAT, Tree Simple latency 8.4 + 4/4/14, ring nInterSteps 2(n-1), Tree-network latency at 1 rank per
# node, init table in blocks of 3 (git diff v2.22.3-1 v2.23.4-1; tuning.cc l.109 ncclPatEnable; enqueue.cc l.1855).
_V2_23 = replace(
    _V2_22,
    release="2.23.4",
    source=_source("v2.23.4-1", 56, 65, 86, 127, 435, 441),
    n_algorithms=7,
    base_latency_us=((6.8, 14.0, 8.4), (6.6, 14.0, 8.4), _ZERO, _ZERO, _ZERO, _ZERO, _ZERO),
    hw_latency_us=(
        ((.6, 1.25, 4.0), (.6, 1.9, 3.4), (0.0, 0.0, 3.7), (0.0, 0.0, 2.8), (0.0, 0.0, 25.0), (0.0, 0.0, 25.0), _ZERO),
        ((1.0, 1.9, 4.0), (1.0, 2.5, 5.7), (0.0, 0.0, 3.7), (0.0, 0.0, 2.8), _ZERO, _ZERO, _ZERO),
        ((5.0, 8.5, 14.0), (2.7, 4.0, 14.0), (0.0, 0.0, 31.0), (0.0, 0.0, 30.0), (0.0, 0.0, 18.0), (0.0, 0.0, 14.0),
         _ZERO),
    ),
    ring_ll128_low_ppn=False,
    ag_rs_algorithms=(1, 2, 4, 6),
    ratio_skip="non_ring",
    inter_steps_2n=False,
    ppn1_tree_latency=True,
    pat_factor=0.85,
    decision_format="numeric_function",
    init_blocks_of_three=True,
    runtime_filter="2.23",
)

# 2.24.3: per-function NCCL_ALGO/NCCL_PROTO, PAT x 0.75, no ring backup, mixed CPUs use the AMD row, decision
# line with names and channels, fp8 ring penalty (git diff v2.23.4-1 v2.24.3-1; enqueue.cc l.678).
_V2_24 = replace(
    _V2_23,
    release="2.24.3",
    source=_source("v2.24.3-1", 120, 129, 150, 191, 516, 522),
    pat_factor=0.75,
    ring_backup=None,
    collnet_restores_ring_tree=False,
    per_function_enable=True,
    ll_mixed_cpu_is_amd=True,
    decision_format="names",
    fp8_ring_penalty=True,
)

# 2.25.1: Blackwell rows (2 x Hopper), LL128 on SM100/SM120, SM100 NVLink 40.0 and speed arrays, NVLS channels
# 16/32, compute doubling for minCC >= 90 (git diff v2.24.3-1 v2.25.1-1; topo.h l.19; search.cc l.940-941;
# nvls.cc l.144-145; connect.cc l.466).
_V2_25 = replace(
    _V2_24,
    release="2.25.1",
    source=_source("v2.25.1-1", 120, 129, 151, 196, 523, 529),
    ll_max_GBps=((39.0, 39.0, 20.4), (87.7, 22.5, 19.0), (141.0, 45.0, 35.0), (282.0, 90.0, 70.0)),
    ring_ll128_GBps=((20.0, 20.0, 20.0), (20.0, 20.0, 20.0), (36.7, 36.7, 36.7), (73.4, 73.4, 73.4)),
    tree_ll128_GBps=((20.0, 20.0, 20.0), (20.0, 20.0, 20.0), (36.7, 36.7, 29.0), (73.4, 73.4, 58.0)),
    tree_GBps=((26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (38.7, 41.4, 36.0), (77.4, 82.8, 72.0)),
    ll128_rule="2.25",
    blackwell_row=True,
    runtime_filter="2.25",
    nvlink_sm100_GBps=40.0,
    sm100_speed_intra=(90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0),
    sm100_speed_inter=_SM90_INTER,
    compute_doubling="2.25",
    nvls_channels_sm100=32,
    nvls_channels_sm100_single=32,
)

# 2.26.x: Tree 0.85 on comm->maxTreePattern, PAT needs SM60, C2C path type (git diff v2.25.1-1 v2.26.2-1).
_V2_26 = replace(
    _V2_25,
    release="2.26.2",
    source=_source("v2.26.6-1", 120, 129, 151, 197, 524, 530),
    pat_needs_sm60=True,
    tree_pattern_from_comm=True,
    path_order=_PATH_ORDER_2_26,
)

# 2.27.3: NVLS AllGather/ReduceScatter bandwidth, CollNetDirect AG/RS min(bwIntra, 0.9 bwInter), NVLS/CollNet
# AG/RS need the plugin's collectives, LL128 up to P2C, SM100 NVLink 40.1, NVLS channels 32/24
# (git diff v2.26.6-1 v2.27.3-1; topo.h l.21; search.cc l.962-963; nvls.cc l.147-149).
_V2_27_3 = replace(
    _V2_26,
    release="2.27.3",
    source=_source("v2.27.3-1", 134, 143, 165, 213, 548, 554),
    nvls_model="2.27",
    collnet_direct_ag_rs="min_inter",
    ll128_rule="2.27.3",
    path_order=_PATH_ORDER_2_27_3,
    runtime_filter="2.27",
    nvlink_sm100_GBps=40.1,
    sm100_speed_intra=(90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0),
    sm100_speed_inter=(96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2,
                       0.24, 0.12),
    nvls_channels_sm100_single=24,
)

# 2.27.5 (= 2.27.6, 2.27.7): LL128 rule with NCCL_LL128_C2C, P2C before PXN (git diff v2.27.3-1 v2.27.5-1).
_V2_27_5 = replace(
    _V2_27_3,
    release="2.27.5",
    source=_source("v2.27.7-1", 134, 143, 165, 213, 555, 561),
    ll128_rule="2.27.5",
    path_order=_PATH_ORDER_2_27_5,
)

# 2.28.3: ncclTunerConstants (PAT base latency 8, PAT hw latencies), nvlsEfficiency, NVLS model of 2.28, Blackwell
# caps 55.6/31.67/20 and 70/42.8/24, perChMaxNVLSTreeBws, CollNetChain local-rank filter
# (git diff v2.27.7-1 v2.28.3-1; tuning.cc l.134 nvlsEfficiency).
_V2_28_3 = replace(
    _V2_27_5,
    release="2.28.3",
    source=_source("v2.28.3-1", 143, 149, 169, 230, 578, 584),
    base_latency_us=((6.8, 14.0, 8.4), (6.6, 14.0, 8.4), _ZERO, _ZERO, _ZERO, _ZERO, (8.0, 8.0, 8.0)),
    hw_latency_us=(
        _V2_27_5.hw_latency_us[0][:6] + ((0.0, 0.0, 4.0),),
        _V2_27_5.hw_latency_us[1][:6] + ((0.0, 0.0, 4.0),),
        _V2_27_5.hw_latency_us[2][:6] + ((0.0, 0.0, 14.0),),
    ),
    tree_ll128_GBps=((20.0, 20.0, 20.0), (20.0, 20.0, 20.0), (36.7, 36.7, 29.0), (55.6, 31.67, 20.0)),
    tree_GBps=((26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (38.7, 41.4, 36.0), (70.0, 42.8, 24.0)),
    nvls_tree_GBps=((26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (0.0, 57.7, 45.5), (0.0, 96.0, 43.1)),
    nvls_efficiency=(0.0, 0.0, 0.85, 0.74),
    nvls_model="2.28",
    runtime_filter="2.28",
)

# 2.28.7: Blackwell Ring/LL128 cap at 2 nodes 34.6 (git diff v2.28.3-1 v2.28.7-1).
_V2_28_7 = replace(
    _V2_28_3,
    release="2.28.7",
    ring_ll128_GBps=((20.0, 20.0, 20.0), (20.0, 20.0, 20.0), (36.7, 36.7, 36.7), (73.4, 34.6, 73.4)),
)

# 2.28.9: NVLSTree network latency 20.9, Blackwell NVLSTree cap at >= 3 nodes 43.8 (git diff v2.28.7-1 v2.28.9-1).
_V2_28_9 = replace(
    _V2_28_7,
    release="2.28.9",
    source=_source("v2.28.9-1", 143, 149, 169, 230, 578, 584),
    hw_latency_us=(
        _V2_28_7.hw_latency_us[0],
        _V2_28_7.hw_latency_us[1],
        _V2_28_7.hw_latency_us[2][:5] + ((0.0, 0.0, 20.9), (0.0, 0.0, 14.0)),
    ),
    nvls_tree_GBps=((26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (0.0, 57.7, 45.5), (0.0, 96.0, 43.8)),
)

# 2.29.2 (= 2.29.3): Blackwell Ring/LL128 34.5/34.6/34.5, 24-entry tree correction, NVLSTree correction on
# SM100+ x86, SM100 speeds add 45 and 80 (git diff v2.28.9-1 v2.29.2-1; search.cc l.987-988 of v2.29.7-1).
_V2_29_2 = replace(
    _V2_28_9,
    release="2.29.2",
    source=_source("v2.29.3-1", 143, 149, 169, 230, 580, 586),
    ring_ll128_GBps=((20.0, 20.0, 20.0), (20.0, 20.0, 20.0), (36.7, 36.7, 36.7), (34.5, 34.6, 34.5)),
    tree_correction=_TREE_CORRECTION_24,
    nvls_tree_correction=True,
    sm100_speed_intra=(90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0),
    sm100_speed_inter=(96.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4,
                       1.2, 0.24, 0.12),
)

# 2.29.7: Blackwell Ring/LL128 40/40/40 (git diff v2.29.3-1 v2.29.7-1).
_V2_29_7 = replace(
    _V2_29_2,
    release="2.29.7",
    source=_source("v2.29.7-1", 144, 150, 170, 231, 581, 587),
    ring_ll128_GBps=((20.0, 20.0, 20.0), (20.0, 20.0, 20.0), (36.7, 36.7, 36.7), (40.0, 40.0, 40.0)),
)

# 2.30.3 (= 2.30.4): Blackwell NVLSTree cap at >= 3 nodes 80, LL128 across compute capabilities from SM90,
# SM100 inter speed 86 (git diff v2.29.7-1 v2.30.3-1; search.cc l.1064 of v2.30.7-1).
_V2_30_3 = replace(
    _V2_29_7,
    release="2.30.3",
    source=_source("v2.30.4-1", 144, 151, 172, 238, 587, 593),
    nvls_tree_GBps=((26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (0.0, 57.7, 45.5), (0.0, 96.0, 80.0)),
    ll128_rule="2.30",
    sm100_speed_inter=(96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0,
                       2.4, 1.2, 0.24, 0.12),
)

# 2.30.7: CollNetChain needs collNetChainSupport; otherwise a reformatting of 2.30.4 (git diff -w).
_V2_30_7 = replace(
    _V2_30_3,
    release="2.30.7",
    source=_source("v2.30.7-1", 149, 156, 177, 243, 623, 630),
    collnet_chain_support_check=True,
)

_SAME = (
    (_V2_18, ("2.18.3", "2.18.5", "2.18.6")),
    (_V2_19, ("2.19.1", "2.19.3", "2.19.4")),
    (_V2_20, ("2.20.3", "2.20.5")),
    (_V2_21, ("2.21.5",)),
    (_V2_22, ("2.22.3",)),
    (_V2_23, ("2.23.4",)),
    (_V2_24, ("2.24.3",)),
    (_V2_25, ("2.25.1",)),
    (_V2_26, ("2.26.2", "2.26.3", "2.26.5", "2.26.6")),
    (_V2_27_3, ("2.27.3",)),
    (_V2_27_5, ("2.27.5", "2.27.6", "2.27.7")),
    (_V2_28_3, ("2.28.3",)),
    (_V2_28_7, ("2.28.7",)),
    (_V2_28_9, ("2.28.9",)),
    (_V2_29_2, ("2.29.2", "2.29.3")),
    (_V2_29_7, ("2.29.7",)),
    (_V2_30_3, ("2.30.3", "2.30.4")),
    (_V2_30_7, ("2.30.7",)),
)

NCCL_VERSIONS = MappingProxyType(
    {release: replace(record, release=release) for record, releases in _SAME for release in releases}
)
"""Release (``"2.18.3"`` ... ``"2.30.7"``) -> :class:`NcclVersion`; releases whose
``tuning.cc`` is identical share their constants."""


def nccl_version(version: str | NcclVersion, path: str = "version") -> NcclVersion:
    """The :class:`NcclVersion` of a release number, or `version` itself.

    Raises
    ------
    SimnetError
        For a release not in :data:`NCCL_VERSIONS`.
    """
    if isinstance(version, NcclVersion):
        return version
    record = NCCL_VERSIONS.get(version) if isinstance(version, str) else None
    if record is None:
        raise SimnetError(f"unknown NCCL release {version!r}; known: {', '.join(NCCL_VERSIONS)}", path=path)
    return record
