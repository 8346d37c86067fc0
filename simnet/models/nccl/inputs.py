"""Inputs of NCCL's cost model as plain data: graphs, the system, the environment.

NCCL tunes a communicator from the graphs its topology search found (one per
algorithm family: ring, tree, CollNet chain and direct, NVLS) and a few facts
about the communicator (ranks, nodes, GPU and CPU kinds, channel counts). These
records carry exactly those facts, in NCCL's own units (GB/s, µs) with the unit in
every name; the public functions of :mod:`simnet.models.nccl` return seconds.

Names
    Collectives use simnet's names (:data:`simnet.schedule.COLLECTIVES`), mapped to
    NCCL's functions in NCCL's order (:data:`FUNCTIONS`: Broadcast 0, Reduce 1,
    AllGather 2, ReduceScatter 3, AllReduce 4). Algorithms and protocols use the
    lower-case names of NCCL's example tuner plugin (:data:`ALGORITHMS`,
    :data:`PROTOCOLS`), whose positions are NCCL's ids (``NCCL_ALGO_TREE`` 0 ...
    ``NCCL_ALGO_PAT`` 6; ``NCCL_PROTO_LL`` 0, ``LL128`` 1, ``SIMPLE`` 2).

References
----------
NVIDIA/nccl ``src/include/nccl_common.h`` (ids, v2.19+), ``src/init.cc`` l.52-55
(``ncclFuncStr``, ``ncclAlgoStr``, ``ncclProtoStr``, v2.30.7-1),
``src/include/graph.h`` (``NCCL_TOPO_PATTERN_*``, ``PATH_*``, ``struct
ncclTopoGraph``), ``plugins/tuner/example/plugin.c`` l.60-110 (names).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

from simnet.errors import SimnetError

__all__ = [
    "FUNCTIONS",
    "FUNCTION_NAMES",
    "ALGORITHMS",
    "ALGORITHM_NAMES",
    "PROTOCOLS",
    "PROTOCOL_NAMES",
    "PATTERNS",
    "PATH_TYPES",
    "CPU_ARCHS",
    "CPU_VENDORS",
    "NcclGraph",
    "NcclGraphs",
    "NcclSystem",
    "NcclEnv",
    "function_index",
    "algorithm_index",
    "protocol_index",
]

FUNCTIONS = ("broadcast", "reduce", "all_gather", "reduce_scatter", "allreduce")
"""simnet collective of each NCCL function id (``ncclFunc_t``: Broadcast 0 ... AllReduce 4)."""

FUNCTION_NAMES = ("Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce")
"""NCCL's ``ncclFuncStr`` (init.cc l.52), as printed in its logs."""

ALGORITHMS = ("tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat")
"""Algorithm of each NCCL id (``NCCL_ALGO_*``), named as in NCCL's example tuner plugin."""

ALGORITHM_NAMES = ("Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT")
"""NCCL's ``ncclAlgoStr`` (init.cc l.53-54), printed in the init table and parsed by ``NCCL_ALGO``."""

PROTOCOLS = ("ll", "ll128", "simple")
"""Protocol of each NCCL id (``NCCL_PROTO_LL`` 0, ``LL128`` 1, ``SIMPLE`` 2)."""

PROTOCOL_NAMES = ("LL", "LL128", "Simple")
"""NCCL's ``ncclProtoStr`` (init.cc l.55)."""

PATTERNS = {"balanced_tree": 1, "split_tree": 2, "tree": 3, "ring": 4, "nvls": 5, "collnet_direct": 6}
"""Graph search patterns and their ``NCCL_TOPO_PATTERN_*`` values (graph.h, unchanged 2.18-2.30)."""

CPU_ARCHS = ("x86", "power", "arm", "mixed")
"""``NCCL_TOPO_CPU_ARCH_*``."""

CPU_VENDORS = ("intel", "amd", "zhaoxin", "mixed", "other")
"""``NCCL_TOPO_CPU_VENDOR_*`` (``mixed`` since 2.24); ``other`` stands for any vendor NCCL does not name."""

PATH_TYPES = ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS")
"""Path types NCCL prints (``topoPathTypeStr``); their order is per version (see ``NcclVersion.path_order``)."""


def _index(kind: str, names: tuple[str, ...], value: object, path: str) -> int:
    if not isinstance(value, str) or value not in names:
        raise SimnetError(f"unknown {kind} {value!r}; expected one of {', '.join(names)}", path=path)
    return names.index(value)


def function_index(collective: str, path: str = "collective") -> int:
    """NCCL function id of a simnet collective name (``"allreduce"`` -> 4)."""
    return _index("collective", FUNCTIONS, collective, path)


def algorithm_index(algorithm: str, path: str = "algorithm") -> int:
    """NCCL algorithm id of an algorithm name (``"ring"`` -> 1)."""
    return _index("algorithm", ALGORITHMS, algorithm, path)


def protocol_index(protocol: str, path: str = "protocol") -> int:
    """NCCL protocol id of a protocol name (``"simple"`` -> 2)."""
    return _index("protocol", PROTOCOLS, protocol, path)


def _check_number(value: object, path: str, *, minimum: float = 0.0) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < minimum:
        raise SimnetError(f"must be a finite number ≥ {minimum:g}, got {value!r}", path=path)


def _check_int(value: object, path: str, *, minimum: int = 0) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise SimnetError(f"must be an integer ≥ {minimum}, got {value!r}", path=path)


def _check_choice(value: object, choices: tuple, path: str) -> None:
    if isinstance(value, bool) or value not in choices:
        raise SimnetError(f"must be one of {', '.join(map(str, choices))}, got {value!r}", path=path)


@dataclass(frozen=True)
class NcclGraph:
    """One graph found by NCCL's topology search (``struct ncclTopoGraph``, graph.h).

    The values are those NCCL prints in ``Pattern %d, crossNic %d, nChannels %d,
    bw %f/%f, type %s/%s, sameChannels %d`` (search.cc ``ncclTopoPrintGraph``),
    after NCCL's alignment over ranks (init.cc: minimum of channels and
    bandwidths, maximum of path types). The default is the zeroed graph NCCL keeps
    for a search it did not run (CollNet disabled, no NVLS).

    Parameters
    ----------
    pattern : str
        Key of :data:`PATTERNS` (``"ring"``, ``"balanced_tree"``, ``"tree"``,
        ``"split_tree"``, ``"nvls"``, ``"collnet_direct"``).
    n_channels : int
        Search channels (``graph->nChannels``), before the compute-channel
        duplication of ``ncclTopoPostset``; for NVLS, the number of heads.
    bw_intra_GBps, bw_inter_GBps : float
        Per-channel bandwidth inside a node and across the network, GB/s.
    type_intra, type_inter : str
        Worst path type used inside a node and to the NIC (``"NVL"``, ``"PIX"``,
        ``"PXN"``, ``"SYS"``, ...; see :data:`PATH_TYPES`).
    same_channels : bool
        Whether every channel uses the same GPU order.
    latency_inter_us : float
        Network latency reported by the net plugin, µs (0 for IB and sockets).
    cross_nic : int
        0, 1 or 2 as printed (informational).
    """

    pattern: str = "ring"
    n_channels: int = 0
    bw_intra_GBps: float = 0.0
    bw_inter_GBps: float = 0.0
    type_intra: str = "LOC"
    type_inter: str = "LOC"
    same_channels: bool = False
    latency_inter_us: float = 0.0
    cross_nic: int = 0

    def __post_init__(self) -> None:
        _check_choice(self.pattern, tuple(PATTERNS), "pattern")
        _check_int(self.n_channels, "n_channels")
        _check_number(self.bw_intra_GBps, "bw_intra_GBps")
        _check_number(self.bw_inter_GBps, "bw_inter_GBps")
        _check_choice(self.type_intra, PATH_TYPES, "type_intra")
        _check_choice(self.type_inter, PATH_TYPES, "type_inter")
        if not isinstance(self.same_channels, bool):
            raise SimnetError(f"must be true or false, got {self.same_channels!r}", path="same_channels")
        _check_number(self.latency_inter_us, "latency_inter_us")
        _check_choice(self.cross_nic, (0, 1, 2), "cross_nic")


@dataclass(frozen=True)
class NcclGraphs:
    """The five graphs NCCL searches, by role (init.cc ``initTransportsRank``).

    NCCL costs Tree and PAT with ``tree``, Ring with ``ring``, CollNetDirect with
    ``collnet_direct``, CollNetChain with ``collnet_chain``, NVLS and NVLSTree with
    ``nvls`` (init.cc l.980-981, v2.30.7-1).
    """

    ring: NcclGraph = field(default_factory=lambda: NcclGraph(pattern="ring"))
    tree: NcclGraph = field(default_factory=lambda: NcclGraph(pattern="balanced_tree"))
    collnet_chain: NcclGraph = field(default_factory=lambda: NcclGraph(pattern="tree"))
    collnet_direct: NcclGraph = field(default_factory=lambda: NcclGraph(pattern="collnet_direct"))
    nvls: NcclGraph = field(default_factory=lambda: NcclGraph(pattern="nvls"))

    def __post_init__(self) -> None:
        for item in fields(self):
            if not isinstance(getattr(self, item.name), NcclGraph):
                raise SimnetError(f"must be an NcclGraph, got {getattr(self, item.name)!r}", path=item.name)

    def of_algorithm(self, algorithm: int) -> NcclGraph:
        """The graph NCCL costs algorithm id `algorithm` with."""
        return (self.tree, self.ring, self.collnet_direct, self.collnet_chain, self.nvls, self.nvls, self.tree)[
            algorithm
        ]


@dataclass(frozen=True)
class NcclSystem:
    """What NCCL knows of a communicator besides its graphs.

    Parameters
    ----------
    n_ranks, n_nodes : int
        Ranks and nodes (hosts) of the communicator (``comm->nRanks``, ``nNodes``).
    min_compcap, max_compcap : int
        Smallest and largest CUDA compute capability × 10 (80 for A100, 90 for
        H100, 100 for B200, 120 for RTX 50xx).
    cpu_arch, cpu_vendor : str
        Of the first CPU of the topology (:data:`CPU_ARCHS`, :data:`CPU_VENDORS`).
    n_channels : int
        Compute channels of the communicator (``comm->nChannels`` after
        ``ncclTopoPostset``); enters the Ring/Simple plateau test and the channel
        choice, never the bandwidths.
    nvls_channels : int
        ``comm->nvlsChannels`` (0 without NVLS).
    nvls_support : bool
        The communicator has NVLink SHARP (``comm->nvlsSupport``).
    collnet_enabled : bool
        CollNet is enabled and supported (``config.collnetEnable`` in 2.27+,
        ``collNetSupport`` before).
    collnet_chain_support : bool
        ``comm->collNetChainSupport`` (read by 2.30.7 only).
    collnet_heads : int
        ``comm->collNetHeadsNum``.
    collnet_allgather, collnet_reducescatter : bool
        The CollNet plugin offers ``iallgather`` / ``ireducescatter``.
    has_nvswitch : bool
        The topology has an NVSwitch (``ncclTopoGetNvsCount > 0``).
    max_local_ranks : int, optional
        Largest number of ranks on one node (default ``n_ranks // n_nodes``).
    net_device_host : bool
        The network device type is HOST (not a device-side unpack network).
    mnnvl : bool
        Multi-node NVLink (2.20 costs such a communicator as one node).
    max_tree_pattern : str, optional
        ``comm->maxTreePattern`` (2.26+); default: the tree graph's pattern.
    cuda_runtime : int
        CUDA runtime version NCCL was built with (11080 triggers an LL128 exception).
    """

    n_ranks: int
    n_nodes: int
    min_compcap: int
    max_compcap: int | None = None
    cpu_arch: str = "x86"
    cpu_vendor: str = "intel"
    n_channels: int = 1
    nvls_channels: int = 0
    nvls_support: bool = False
    collnet_enabled: bool = False
    collnet_chain_support: bool = True
    collnet_heads: int = 0
    collnet_allgather: bool = False
    collnet_reducescatter: bool = False
    has_nvswitch: bool = False
    max_local_ranks: int | None = None
    net_device_host: bool = True
    mnnvl: bool = False
    max_tree_pattern: str | None = None
    cuda_runtime: int = 12000

    def __post_init__(self) -> None:
        _check_int(self.n_ranks, "n_ranks", minimum=1)
        _check_int(self.n_nodes, "n_nodes", minimum=1)
        if self.n_nodes > self.n_ranks:
            raise SimnetError(f"must not exceed n_ranks ({self.n_ranks}), got {self.n_nodes}", path="n_nodes")
        _check_int(self.min_compcap, "min_compcap", minimum=30)
        if self.max_compcap is None:
            object.__setattr__(self, "max_compcap", self.min_compcap)
        _check_int(self.max_compcap, "max_compcap", minimum=self.min_compcap)
        _check_choice(self.cpu_arch, CPU_ARCHS, "cpu_arch")
        _check_choice(self.cpu_vendor, CPU_VENDORS, "cpu_vendor")
        _check_int(self.n_channels, "n_channels", minimum=1)
        _check_int(self.nvls_channels, "nvls_channels")
        _check_int(self.collnet_heads, "collnet_heads")
        if self.max_local_ranks is None:
            object.__setattr__(self, "max_local_ranks", -(-self.n_ranks // self.n_nodes))
        _check_int(self.max_local_ranks, "max_local_ranks", minimum=1)
        for name in ("nvls_support", "collnet_enabled", "collnet_chain_support", "collnet_allgather",
                     "collnet_reducescatter", "has_nvswitch", "net_device_host", "mnnvl"):
            if not isinstance(getattr(self, name), bool):
                raise SimnetError(f"must be true or false, got {getattr(self, name)!r}", path=name)
        if self.max_tree_pattern is not None:
            _check_choice(self.max_tree_pattern, tuple(PATTERNS), "max_tree_pattern")
        _check_int(self.cuda_runtime, "cuda_runtime")


@dataclass(frozen=True)
class NcclEnv:
    """NCCL environment variables the cost model reads (unset = ``None``).

    Parameters
    ----------
    algo, proto : str, optional
        ``NCCL_ALGO`` and ``NCCL_PROTO`` exactly as a user would set them; the
        grammar is the version's (global list before 2.24, ``[func:]list;...`` since).
    nthreads, ll128_nthreads : int, optional
        ``NCCL_NTHREADS`` and ``NCCL_LL128_NTHREADS``.
    net_overhead_ns : int, optional
        ``NCCL_NET_OVERHEAD`` in nanoseconds.
    pat_enable : int
        ``NCCL_PAT_ENABLE``: 0, 1 or 2 (auto, the default).
    ll128_c2c : int
        ``NCCL_LL128_C2C`` (default 1).
    thread_thresholds : str, optional
        ``NCCL_THREAD_THRESHOLDS``: up to six integers (tree LL, LL128, Simple,
        ring LL, LL128, Simple).
    """

    algo: str | None = None
    proto: str | None = None
    nthreads: int | None = None
    ll128_nthreads: int | None = None
    net_overhead_ns: int | None = None
    pat_enable: int = 2
    ll128_c2c: int = 1
    thread_thresholds: str | None = None

    def __post_init__(self) -> None:
        for name in ("algo", "proto", "thread_thresholds"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise SimnetError(f"must be a string, got {value!r}", path=name)
        for name in ("nthreads", "ll128_nthreads", "net_overhead_ns"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise SimnetError(f"must be an integer, got {value!r}", path=name)
        _check_choice(self.pat_enable, (0, 1, 2), "pat_enable")
        _check_choice(self.ll128_c2c, (0, 1), "ll128_c2c")
