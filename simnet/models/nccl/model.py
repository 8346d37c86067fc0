"""NCCL's analytical cost model and its choice of algorithm and protocol.

:func:`tune_model` reproduces ``ncclTopoTuneModel`` (NVIDIA/nccl
``src/graph/tuning.cc``): from the graphs of the topology search and the
communicator it builds, per function, algorithm and protocol, a latency (µs) and
a bandwidth (GB/s), the maximum thread counts, the enable rules (``NCCL_ALGO``,
``NCCL_PROTO``, LL128 safety, CollNet/NVLS availability) and the thread
thresholds. :func:`algo_time_s` reproduces ``ncclTopoGetAlgoTime`` (tree
correction, Ring/Simple plateau, pipelined operations):

.. math:: t = \\mathrm{lat} \\cdot n_\\mathrm{lat} + \\frac{n_\\mathrm{bytes}}{1000\\, \\mathrm{bw}}
          \\quad [\\mu s,\\ \\mathrm{bw\\ in\\ GB/s}]

returned in seconds. :func:`cost_table` and :func:`choose` reproduce
``updateCollCostTable`` and ``topoGetAlgoInfo`` (``src/enqueue.cc``): the
per-operation filters, then the smallest non-negative time, scanning algorithms
then protocols in id order with a strict ``<`` (ties go to the lower algorithm
id, then the lower protocol id). :func:`launch_config` gives the channel and
thread counts NCCL then launches with.

Every formula is written from the research notes on NCCL's source (§3-§4 of
``nccl_model.md``) and the release's own ``tuning.cc``; the version differences
are data in :class:`~simnet.models.nccl.versions.NcclVersion` and the small
branches below name the field they test.

References
----------
NVIDIA/nccl v2.30.7-1: ``src/graph/tuning.cc`` ``ncclTopoTuneModel`` l.243-618,
``treeCorrectionFactor`` l.623-627, ``ncclTopoGetAlgoTime`` l.630-655;
``src/enqueue.cc`` ``updateCollCostTable`` l.1989-2026, ``topoGetAlgoInfo``
l.2028-2117, ``ncclGetAlgoInfo`` l.2123-2180. Older releases: see each
:class:`NcclVersion` ``source``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from simnet.errors import SimnetError
from simnet.models.nccl.inputs import (
    ALGORITHM_NAMES,
    ALGORITHMS,
    FUNCTION_NAMES,
    PATTERNS,
    PROTOCOL_NAMES,
    PROTOCOLS,
    NcclEnv,
    NcclGraph,
    NcclGraphs,
    NcclSystem,
    algorithm_index,
    function_index,
    protocol_index,
)
from simnet.models.nccl.versions import NcclVersion, nccl_version

__all__ = [
    "NcclTuning",
    "NcclChoice",
    "tune_model",
    "algo_time_s",
    "algo_latency_s",
    "cost_table",
    "choose",
    "launch_config",
    "model_nbytes",
]

TREE, RING, COLLNET_DIRECT, COLLNET_CHAIN, NVLS, NVLS_TREE, PAT = range(7)
LL, LL128, SIMPLE = range(3)
BROADCAST, REDUCE, ALL_GATHER, REDUCE_SCATTER, ALL_REDUCE = range(5)
NVLINK, PCI, NET = range(3)

WARP_SIZE = 32
MAX_NTHREADS = 640
SIMPLE_MAX_NTHREADS = 512
LL_MAX_NTHREADS = 512
LL128_MAX_NTHREADS = 640
PCI_BW_GBps = 12.0
PAT_BASE_LATENCY_US = 8.0
PAT_PER_RANK_LATENCY_US = 2.8
MAX_DIRECT_ARITY = 7
MAX_NVLS_ARITY = 32
THREAD_THRESHOLDS = (8, 8, 64)
COLLNET_THREAD_THRESHOLD = 512


def _log2i(n: int) -> int:
    return n.bit_length() - 1


def _as_table(rows: list) -> tuple:
    return tuple(_as_table(row) if isinstance(row, list) else row for row in rows)


@dataclass(frozen=True)
class NcclTuning:
    """The model NCCL builds at communicator init (``comm->latencies``, ``bandwidths``, ...).

    Attributes
    ----------
    version : NcclVersion
        The release whose constants and formulas were used.
    system : NcclSystem
        The communicator.
    graphs : NcclGraphs
        The search graphs.
    env : NcclEnv
        The environment variables read.
    latency_us : tuple
        ``[function][algorithm][protocol]`` latency, µs, as NCCL stores and prints it.
    bandwidth_GBps : tuple
        ``[function][algorithm][protocol]`` bandwidth, GB/s; 0 means disabled (the
        number after the "/" of the init table).
    max_threads : tuple
        ``[algorithm][protocol]`` maximum threads per block (the "Max NThreads" row).
    thread_thresholds : tuple
        ``[algorithm][protocol]`` bytes per thread below which NCCL reduces
        channels and threads.
    ring_backup_GBps : tuple or None
        ``[function][protocol]`` Ring "backup" bandwidths (2.19-2.23), else None.
    """

    version: NcclVersion
    system: NcclSystem
    graphs: NcclGraphs
    env: NcclEnv
    latency_us: tuple
    bandwidth_GBps: tuple
    max_threads: tuple
    thread_thresholds: tuple
    ring_backup_GBps: tuple | None

    def latency_s(self, collective: str, algorithm: str, protocol: str) -> float:
        """Latency term of one entry, seconds."""
        c, a, p = self._indices(collective, algorithm, protocol)
        return self.latency_us[c][a][p] * 1e-6

    def bandwidth_Bps(self, collective: str, algorithm: str, protocol: str) -> float:
        """Bandwidth of one entry, bytes/s (0 when disabled)."""
        c, a, p = self._indices(collective, algorithm, protocol)
        return self.bandwidth_GBps[c][a][p] * 1e9

    def enabled(self, collective: str, algorithm: str, protocol: str) -> bool:
        """Whether NCCL's model gives this entry a bandwidth (``bw != 0``)."""
        c, a, p = self._indices(collective, algorithm, protocol)
        return self.bandwidth_GBps[c][a][p] != 0

    @property
    def algorithms(self) -> tuple[str, ...]:
        """Algorithms of this release, in id order."""
        return ALGORITHMS[: self.version.n_algorithms]

    def _indices(self, collective: str, algorithm: str, protocol: str) -> tuple[int, int, int]:
        c = function_index(collective)
        a = algorithm_index(algorithm)
        if a >= self.version.n_algorithms:
            raise SimnetError(f"NCCL {self.version.release} has no algorithm {algorithm!r}", path="algorithm")
        return c, a, protocol_index(protocol)


class NcclChoice(NamedTuple):
    """NCCL's choice for one operation: algorithm, protocol and its model time (seconds)."""

    algorithm: str
    protocol: str
    time_s: float


def model_nbytes(collective: str, count_bytes: int, n_ranks: int) -> int:
    """Bytes NCCL feeds its model: ``count × typeSize × (nRanks for AllGather/ReduceScatter)``.

    ``count_bytes`` is the per-rank count times the type size, what NCCL 2.24+
    prints in its per-size TUNING line (enqueue.cc ``ncclGetAlgoInfo`` l.2127 of
    v2.30.7-1).
    """
    c = function_index(collective)
    return count_bytes * n_ranks if c in (ALL_GATHER, REDUCE_SCATTER) else count_bytes


def _nthreads(env_value: int | None, minimum: int, maximum: int, default: int) -> int:
    if env_value is None or env_value <= 0:
        return default
    if env_value % WARP_SIZE != 0 or env_value > maximum:
        return maximum
    return max(env_value, minimum)


def _max_threads(version: NcclVersion, graphs: NcclGraphs, env: NcclEnv) -> list[list[int]]:
    """``comm->maxThreads`` (tuning.cc l.244-257 of v2.30.7-1; ``getNthreads``)."""
    table = [[0, 0, 0] for _ in range(version.n_algorithms)]
    ring = graphs.ring
    simple_default = 256 if ring.bw_intra_GBps * ring.n_channels <= PCI_BW_GBps else SIMPLE_MAX_NTHREADS
    table[RING][SIMPLE] = _nthreads(env.nthreads, 2 * WARP_SIZE, SIMPLE_MAX_NTHREADS, simple_default)
    table[TREE][SIMPLE] = _nthreads(env.nthreads, 2 * WARP_SIZE, SIMPLE_MAX_NTHREADS, SIMPLE_MAX_NTHREADS)
    for a in (COLLNET_DIRECT, COLLNET_CHAIN, NVLS, NVLS_TREE):
        table[a][SIMPLE] = MAX_NTHREADS
    for a in (RING, TREE):
        table[a][LL] = _nthreads(env.nthreads, 2 * WARP_SIZE, LL_MAX_NTHREADS, LL_MAX_NTHREADS)
        table[a][LL128] = _nthreads(env.ll128_nthreads, LL128_MAX_NTHREADS // 4, LL128_MAX_NTHREADS,
                                    LL128_MAX_NTHREADS)
    return table


def _parse_list(version: NcclVersion, text: str, names: tuple[str, ...], default: list[int],
                path: str) -> list[list[int]]:
    """``parseList`` of ``NCCL_ALGO``/``NCCL_PROTO``: one enable list per function (tuning.cc l.55-136)."""
    if not version.per_function_enable:
        unset, value = (1, 0) if text.startswith("^") else (0, 1)
        listed = [token.lower() for token in (text[1:] if text.startswith("^") else text).split(",") if token]
        row = [value if name.lower() in listed else unset for name in names]
        return [list(row) for _ in FUNCTION_NAMES]
    table = [list(default) for _ in FUNCTION_NAMES]
    for position, entry in enumerate(part for part in text.split(";") if part):
        pieces = [piece for piece in entry.split(":") if piece]
        if not pieces:
            continue
        prefix, elements = (pieces[0], pieces[1]) if len(pieces) > 1 else (None, pieces[0])
        if prefix is None and position > 0:
            raise SimnetError(f"every entry but the first needs a 'function:' prefix, got {entry!r}", path=path)
        unset, value = (1, 0) if elements.startswith("^") else (0, 1)
        wanted = [token.lower() for token in (elements[1:] if elements.startswith("^") else elements).split(",")
                  if token]
        lowered = [name.lower() for name in names]
        for token in wanted:
            if token not in lowered:
                raise SimnetError(f"unknown name {token!r}; expected one of {', '.join(names)}", path=path)
        functions = [f for f, name in enumerate(FUNCTION_NAMES) if prefix is None or prefix.lower() == name.lower()]
        if not functions:
            raise SimnetError(f"unknown function {prefix!r}; expected one of {', '.join(FUNCTION_NAMES)}", path=path)
        for f in functions:
            table[f] = [value if name in wanted else unset for name in lowered]
    return table


def _path_rank(version: NcclVersion, path_type: str, where: str) -> int:
    if path_type not in version.path_order:
        raise SimnetError(f"path type {path_type!r} does not exist in NCCL {version.release}", path=where)
    return version.path_order.index(path_type)


def _ll128_auto(version: NcclVersion, system: NcclSystem, env: NcclEnv, graph: NcclGraph, role: str,
                function: int, algorithm: int) -> bool:
    """LL128 "auto" (value 2) resolved per graph: the release's safety rule (§3.6 and §3.9)."""
    inter = _path_rank(version, graph.type_inter, f"graphs.{role}.type_inter")
    intra = _path_rank(version, graph.type_intra, f"graphs.{role}.type_intra")

    def rank(name: str) -> int:
        return version.path_order.index(name)

    lo, hi = system.min_compcap, system.max_compcap
    quirk = lo == 90 and system.cuda_runtime == 11080 and function == ALL_REDUCE and algorithm == RING \
        and system.n_ranks == 2
    rule = version.ll128_rule
    if rule in ("2.18", "2.25"):
        ok = inter <= rank("PXB") or (lo >= 90 and inter <= rank("PXN"))
        ok = ok and intra <= rank("NVB") and lo == hi
        allowed = (70, 80, 90, 100, 120) if rule == "2.25" else (70, 80, 90)
        return ok and lo in allowed and not quirk
    if rule == "2.27.3":
        limit = rank("P2C") if env.ll128_c2c else rank("PXN")
        ok = inter <= rank("PXB") or (lo >= 90 and inter <= limit)
    else:
        ok = inter <= (rank("PXN") if env.ll128_c2c and lo >= 90 else rank("PXB"))
    same = lo == hi or (rule == "2.30" and lo >= 90)
    return ok and intra <= rank("NVB") and same and not (lo < 70 or quirk)


def _pat_enabled(version: NcclVersion, system: NcclSystem, env: NcclEnv) -> bool:
    """``ncclPatEnable`` (tuning.cc l.215-223 of v2.30.7-1)."""
    if version.pat_needs_sm60 and system.min_compcap < 60:
        return False
    if env.pat_enable != 2:
        return env.pat_enable == 1
    return system.n_nodes == system.n_ranks and system.net_device_host


def _net_overhead_us(system: NcclSystem, env: NcclEnv) -> float:
    """``getNetOverhead`` (tuning.cc l.226-233 of v2.30.7-1)."""
    if env.net_overhead_ns is not None and env.net_overhead_ns != -2:
        return env.net_overhead_ns * 0.001
    if system.cpu_arch == "x86" and system.cpu_vendor == "amd":
        return 2.0
    return 1.0


def _visited(version: NcclVersion, function: int, algorithm: int) -> bool:
    if function in (BROADCAST, REDUCE):
        return algorithm == RING
    if function in (ALL_GATHER, REDUCE_SCATTER):
        return algorithm in version.ag_rs_algorithms
    return algorithm != PAT


def _compcap_row(version: NcclVersion, compcap: int) -> int:
    if compcap >= 100 and version.blackwell_row:
        return 3
    return 2 if compcap >= 90 else 1 if compcap >= 80 else 0


def _bandwidth(version: NcclVersion, system: NcclSystem, graph: NcclGraph, caps: dict, function: int,
               algorithm: int, protocol: int, n_nodes: int, ppn: float) -> float | None:
    """Bus bandwidth turned algorithm bandwidth of one entry, GB/s; None when NCCL skips the entry (§3.4)."""
    nc = graph.n_channels
    collnet = algorithm in (COLLNET_DIRECT, COLLNET_CHAIN)
    agrs = function in (ALL_GATHER, REDUCE_SCATTER)
    bw = graph.bw_intra_GBps if n_nodes <= 2 or collnet else graph.bw_inter_GBps
    if algorithm in (NVLS, NVLS_TREE):
        model = version.nvls_model
        if model == "2.28":
            if nc < 2:
                return None
            intra = graph.bw_intra_GBps * version.nvls_efficiency[caps["row"]] * (nc - 1) / nc
            intra *= 2.0 if function == ALL_REDUCE else (ppn - 1) / ppn
            inter = graph.bw_inter_GBps * (2 if n_nodes <= 2 and algorithm == NVLS_TREE else 1)
            bw = min(intra, inter, caps["nvls_tree"] if algorithm == NVLS_TREE else math.inf)
        elif model in ("2.19", "2.27") and algorithm == NVLS:
            if model == "2.27" and function != ALL_REDUCE:
                bw = min(graph.bw_intra_GBps * (ppn - 1.0) / ppn, graph.bw_inter_GBps * 0.9)
            else:
                bw = min(graph.bw_intra_GBps, graph.bw_inter_GBps)
        elif model in ("2.19", "2.27"):
            bw = min(graph.bw_intra_GBps, graph.bw_inter_GBps if n_nodes <= 2 else graph.bw_inter_GBps / 2)
    bus = nc * bw
    if algorithm == RING and protocol == LL:
        if version.ring_ll_rule == "quarter":
            factor = 1 / 4 if n_nodes > 1 or function in (ALL_REDUCE, REDUCE) else 1 / 3
        else:
            factor = 0.5
        bus = min(caps["ll_max"], bus * factor)
    if algorithm == RING and protocol == LL128:
        bus = min(bus * (0.7 if version.ring_ll128_low_ppn and ppn < 2 else 0.92), nc * caps["ring_ll128"])
    if algorithm == TREE:
        bus = min(bus * 0.92, nc * caps["tree"])
        if protocol == LL:
            bus = min(bus / 3.8, caps["ll_max"])
        if protocol == LL128:
            bus = min(bus * (7.0 / 9.0 if n_nodes == 1 else 120.0 / 128.0), nc * caps["tree_ll128"])
        if caps["tree_pattern"] == PATTERNS["tree"]:
            bus *= 0.85
    if algorithm == PAT:
        bus *= version.pat_factor
    if collnet and protocol != SIMPLE:
        bus = 0.0
    if algorithm == COLLNET_DIRECT and protocol == SIMPLE:
        bus = _collnet_direct(version, system, graph, function, bus, bw, n_nodes, ppn)
    if version.collnet_direct_ag_rs == "min_inter" and algorithm in (NVLS, COLLNET_DIRECT) and protocol == SIMPLE \
            and agrs and system.n_nodes > 1:
        plugin = system.collnet_allgather if function == ALL_GATHER else system.collnet_reducescatter
        if not (plugin and system.collnet_enabled and system.max_local_ranks <= system.collnet_heads):
            bus = 0.0
    return bus * _ratio(version, function, algorithm, system.n_ranks, n_nodes)


def _collnet_direct(version: NcclVersion, system: NcclSystem, graph: NcclGraph, function: int, bus: float,
                    bw: float, n_nodes: int, ppn: float) -> float:
    """CollNetDirect Simple refinements (§3.4 step 12; 2.20-2.26 AllGather/ReduceScatter interpolation)."""
    if function in (ALL_GATHER, REDUCE_SCATTER):
        if version.collnet_direct_ag_rs == "min_inter":
            return ppn * min(graph.bw_intra_GBps, graph.bw_inter_GBps * 0.9)
        bus = ppn * bw
        plugin = system.collnet_allgather if function == ALL_GATHER else system.collnet_reducescatter
        if system.n_nodes > 1 and (not plugin or ppn > system.collnet_heads):
            bus = 0.0
        weight = (ppn - 1) / (8 - 1)
        return bus * (weight * 0.85 + (1 - weight) * 0.95)
    if graph.n_channels == 0:
        return 0.0
    factor = ppn / graph.n_channels
    factor -= (factor - 1) / 2
    bus /= factor
    return bus * 0.85 if system.min_compcap >= 90 else bus


def _ratio(version: NcclVersion, function: int, algorithm: int, n_ranks: int, n_nodes: int) -> float:
    """Bus bandwidth to algorithm bandwidth (§3.4 step 14 and its history)."""
    agrs = function in (ALL_GATHER, REDUCE_SCATTER)
    if agrs and (version.ratio_skip == "non_ring" and algorithm != RING
                 or version.ratio_skip == "collnet_direct" and algorithm == COLLNET_DIRECT):
        return 1.0
    nsteps = 2 * (n_ranks - 1) if function == ALL_REDUCE else n_ranks - 1 if agrs else n_ranks
    if algorithm == RING or (algorithm in (NVLS, NVLS_TREE) and version.nvls_model == "2.28"):
        return n_ranks / nsteps
    if algorithm == NVLS_TREE and version.nvls_model == "2.18":
        # 2.18 divides by 2(nNodes - 1): infinite on one node, where NVLSTree is disabled anyway.
        return 0.70 * n_nodes / (2 * (n_nodes - 1)) if n_nodes > 1 else 0.0
    if algorithm in (NVLS, NVLS_TREE):
        return 5.0 / 6.0
    return 0.5


def _latency(version: NcclVersion, system: NcclSystem, env: NcclEnv, graph: NcclGraph, hw_lat: list,
             intra_hw: int, function: int, algorithm: int, protocol: int, n_nodes: int, ppn: float) -> float:
    """Latency of one entry, µs (§3.5 and its history)."""
    n_ranks = system.n_ranks
    ppn_int = n_ranks // n_nodes
    agrs = function in (ALL_GATHER, REDUCE_SCATTER)
    nsteps = 2 * (n_ranks - 1) if function == ALL_REDUCE else n_ranks - 1 if agrs else n_ranks
    lat = version.base_latency_us[algorithm][protocol]
    intra = hw_lat[intra_hw][algorithm][protocol]
    tree_net = version.ppn1_tree_latency and ppn == 1
    inter = hw_lat[NET][TREE if tree_net else algorithm][protocol] + graph.latency_inter_us
    if protocol == SIMPLE:
        inter += graph.latency_inter_us
    if algorithm == RING:
        hw = intra_hw if n_nodes == 1 else NET
        if function in (REDUCE, BROADCAST):
            if graph.same_channels:
                return lat + hw_lat[hw][RING][protocol]
            step = hw_lat[hw][TREE][protocol] if protocol == SIMPLE else hw_lat[hw][RING][protocol]
            return lat + nsteps * step
        overhead = 0.0
        if n_nodes > 1:
            overhead = _net_overhead_us(system, env) * (3 if protocol == SIMPLE else 1)
        intra = max(intra, overhead)
        if n_nodes == 1:
            inter_steps = 0
        elif function == ALL_REDUCE:
            inter_steps = 2 * n_nodes if version.inter_steps_2n else 2 * (n_nodes - 1)
        else:
            inter_steps = n_nodes - 1
        return lat + (nsteps - inter_steps) * intra + inter_steps * inter
    if algorithm == TREE:
        return lat + 2 * ((ppn_int - 1) * intra + _log2i(n_nodes) * inter)
    if algorithm == COLLNET_DIRECT:
        return lat + 2 * (min(1, ppn_int - 1) * intra + (ppn_int - 1) * version.collnet_arity_us) + inter
    if algorithm == COLLNET_CHAIN:
        return lat + 2 * (ppn_int - 1) * intra + inter
    if algorithm == NVLS:
        if version.nvls_model == "2.18":
            return lat + (hw_lat[NET][NVLS][protocol] if n_nodes > 1 else 0.0)
        return intra + (inter if n_nodes > 1 else 0.0)
    if algorithm == NVLS_TREE:
        if version.nvls_model == "2.18":
            return lat + 2 * (n_nodes - 1) * hw_lat[NET][NVLS_TREE][protocol]
        return lat + intra + 2 * _log2i(n_nodes) * inter
    return PAT_BASE_LATENCY_US + _log2i(n_nodes) * (inter / 3.5) + n_ranks * PAT_PER_RANK_LATENCY_US


def _enables(version: NcclVersion, system: NcclSystem, env: NcclEnv, n_nodes: int) -> tuple[list, list]:
    """Protocol and algorithm enable matrices per function, before LL128's auto rule (§3.6)."""
    n_algos = version.n_algorithms
    protos = [[1, 2, 1] for _ in FUNCTION_NAMES]
    algos = [[1] * n_algos for _ in FUNCTION_NAMES]
    if env.proto is not None:
        protos = _parse_list(version, env.proto, PROTOCOL_NAMES, [1, 2, 1], "env.proto")
    if env.algo is not None:
        algos = _parse_list(version, env.algo, ALGORITHM_NAMES[:n_algos], [1] * n_algos, "env.algo")
    multi = system.n_nodes > 1 or (version.mnnvl_single_node and system.mnnvl)
    for row in algos:
        off = set()
        if system.n_nodes == 1 or (version.mnnvl_single_node and system.mnnvl):
            off.add(NVLS_TREE)
        if not system.collnet_enabled:
            off |= {COLLNET_DIRECT, COLLNET_CHAIN} | ({NVLS} if multi else set())
        if not system.has_nvswitch and (system.collnet_enabled or version.per_function_enable):
            off.add(COLLNET_DIRECT)
        if version.collnet_chain_support_check and system.collnet_enabled and not system.collnet_chain_support:
            off.add(COLLNET_CHAIN)
        for a in off:
            row[a] = 0
        if version.collnet_restores_ring_tree and not system.collnet_enabled \
                and not any(row[a] for a in (RING, TREE, NVLS, NVLS_TREE)):
            row[RING] = row[TREE] = 1
    return protos, algos


def _thread_thresholds(version: NcclVersion, n_ranks: int, env: NcclEnv) -> list[list[int]]:
    """``comm->threadThresholds`` (tuning.cc l.587-616 of v2.30.7-1)."""
    table = [list(THREAD_THRESHOLDS) for _ in range(version.n_algorithms)]
    table[RING][LL] *= n_ranks
    table[COLLNET_DIRECT][SIMPLE] = table[COLLNET_CHAIN][SIMPLE] = COLLNET_THREAD_THRESHOLD
    if env.thread_thresholds is not None:
        values = []
        for token in env.thread_thresholds.split()[:6]:
            try:
                values.append(int(token))
            except ValueError:
                break
        for i, value in enumerate(values):
            if value >= 0:
                table[i // 3][i % 3] = value
    return table


def tune_model(system: NcclSystem, graphs: NcclGraphs, version: str | NcclVersion,
               env: NcclEnv | None = None) -> NcclTuning:
    """Build NCCL's cost model of a communicator, as ``ncclTopoTuneModel`` does.

    Parameters
    ----------
    system : NcclSystem
        The communicator (ranks, nodes, GPU and CPU kinds, channel counts, CollNet
        and NVLS support).
    graphs : NcclGraphs
        The search graphs, aligned over ranks (see :class:`NcclGraph`).
    version : str or NcclVersion
        NCCL release, a key of :data:`~simnet.models.nccl.NCCL_VERSIONS` (``"2.30.7"``).
    env : NcclEnv, optional
        ``NCCL_ALGO``, ``NCCL_PROTO``, thread and overhead variables (default: unset).

    Returns
    -------
    NcclTuning
        Latencies (µs) and bandwidths (GB/s) per function, algorithm and protocol,
        maximum threads and thread thresholds, exactly the tables NCCL prints
        (:func:`~simnet.models.nccl.init_table`).

    Raises
    ------
    SimnetError
        For an unknown release, inputs of the wrong type, a path type the release
        does not know, or an ``NCCL_ALGO``/``NCCL_PROTO`` string the release rejects.

    Notes
    -----
    Per entry (§3.4-3.5 of the notes; tuning.cc l.288-435 of v2.30.7-1): the base
    per-channel bandwidth is the graph's ``bwIntra`` (≤ 2 nodes or CollNet) or
    ``bwInter``; NVLS applies its own model; bus bandwidth = channels × bandwidth;
    then the protocol refinements (Ring/LL ``min(llMaxBw, ·0.5)``, Ring/LL128
    ``min(·0.92, channels × cap)``, Tree ``min(·0.92, channels × cap)``, Tree/LL
    ``min(·/3.8, llMaxBw)``, Tree/LL128 ``min(·7/9 or ·120/128, channels × cap)``,
    ×0.85 for a TREE-pattern tree, ×0.75 for PAT, CollNet rules) and the bus to
    algorithm bandwidth ratio (nRanks/nsteps for Ring, NVLS; 0.5 for trees). The
    latency is the base latency plus per-step hardware latencies (ring:
    ``(nsteps − nInterSteps)·intra + nInterSteps·inter``; tree: ``2((ppn−1)·intra
    + log2(nNodes)·inter)``; NVLS: ``intra (+ inter)``; ...). LL128 is enabled by
    default only where the release's safety rule allows it; disabled entries keep
    their latency and get bandwidth 0.
    """
    if not isinstance(system, NcclSystem):
        raise SimnetError(f"must be an NcclSystem, got {type(system).__name__}", path="system")
    if not isinstance(graphs, NcclGraphs):
        raise SimnetError(f"must be an NcclGraphs, got {type(graphs).__name__}", path="graphs")
    env = NcclEnv() if env is None else env
    if not isinstance(env, NcclEnv):
        raise SimnetError(f"must be an NcclEnv, got {type(env).__name__}", path="env")
    version = nccl_version(version)
    n_algos = version.n_algorithms
    max_threads = _max_threads(version, graphs, env)
    latency = [[[0.0] * 3 for _ in range(n_algos)] for _ in FUNCTION_NAMES]
    bandwidth = [[[0.0] * 3 for _ in range(n_algos)] for _ in FUNCTION_NAMES]
    backup = [[0.0] * 3 for _ in FUNCTION_NAMES] if version.ring_backup else None
    n_ranks = system.n_ranks
    if n_ranks <= 1:
        return NcclTuning(version, system, graphs, env, _as_table(latency), _as_table(bandwidth),
                          _as_table(max_threads), _as_table([[0] * 3 for _ in range(n_algos)]),
                          None if backup is None else _as_table(backup))
    n_nodes = 1 if version.mnnvl_single_node and system.mnnvl else system.n_nodes
    row = _compcap_row(version, system.min_compcap)
    column = n_nodes - 1 if n_nodes <= 2 else 2
    mixed = version.ll_mixed_cpu_is_amd and system.cpu_vendor == "mixed"
    ll_row = row if n_nodes == 1 else 1 if system.cpu_vendor == "amd" or mixed else 0
    tree_pattern = graphs.tree.pattern
    if version.tree_pattern_from_comm and system.max_tree_pattern is not None:
        tree_pattern = system.max_tree_pattern
    caps = {
        "row": row,
        "ll_max": version.ll_max_GBps[ll_row][column],
        "tree": version.tree_GBps[row][column],
        "ring_ll128": version.ring_ll128_GBps[row][column],
        "tree_ll128": version.tree_ll128_GBps[row][column],
        "nvls_tree": version.nvls_tree_GBps[row][column] if version.nvls_tree_GBps else math.inf,
        "tree_pattern": PATTERNS[tree_pattern],
    }
    hw_lat = [[list(protos) for protos in algos] for algos in version.hw_latency_us]
    if system.cpu_arch == "power":
        hw_lat[PCI][TREE][SIMPLE] = hw_lat[PCI][RING][SIMPLE]
    ppn = n_ranks / n_nodes
    pat = version.pat_factor is not None and _pat_enabled(version, system, env)
    for c in range(len(FUNCTION_NAMES)):
        for a in range(n_algos):
            if not _visited(version, c, a):
                continue
            graph = graphs.of_algorithm(a)
            intra_hw = NVLINK if graph.type_intra == "NVL" else PCI
            for p in range(3):
                if a in (NVLS, NVLS_TREE) and p != SIMPLE:
                    continue
                if a == PAT and (p != SIMPLE or not pat):
                    continue
                bus = _bandwidth(version, system, graph, caps, c, a, p, n_nodes, ppn)
                if bus is None:
                    continue
                bandwidth[c][a][p] = bus
                if backup is not None and a == RING:
                    backup[c][p] = bus
                latency[c][a][p] = _latency(version, system, env, graph, hw_lat, intra_hw, c, a, p, n_nodes, ppn)
    protos, algos = _enables(version, system, env, n_nodes)
    roles = ("tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls", "tree")
    for c in range(len(FUNCTION_NAMES)):
        for a in range(n_algos):
            for p in range(3):
                enabled = protos[c][p]
                if enabled == 2 and p == LL128:
                    graph = graphs.of_algorithm(a)
                    enabled = _ll128_auto(version, system, env, graph, roles[a], c, a)
                if not enabled:
                    bandwidth[c][a][p] = 0.0
                    if version.ring_backup == "2.22" and a == RING:
                        backup[c][p] = 0.0
                kept = version.ring_kept_non_allreduce and a == RING and c != ALL_REDUCE
                if not algos[c][a] and not kept:
                    bandwidth[c][a][p] = 0.0
        if backup is not None and not any(bw for row_bw in bandwidth[c] for bw in row_bw):
            bandwidth[c][RING] = list(backup[c])
    return NcclTuning(version, system, graphs, env, _as_table(latency), _as_table(bandwidth),
                      _as_table(max_threads), _as_table(_thread_thresholds(version, n_ranks, env)),
                      None if backup is None else _as_table(backup))


def _check_nbytes(nbytes: object, path: str = "nbytes") -> int:
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
        raise SimnetError(f"must be an integer number of bytes ≥ 0, got {nbytes!r}", path=path)
    return nbytes


def _check_pipe_ops(num_pipe_ops: object) -> int:
    if isinstance(num_pipe_ops, bool) or not isinstance(num_pipe_ops, int) or num_pipe_ops < 1:
        raise SimnetError(f"must be an integer ≥ 1, got {num_pipe_ops!r}", path="num_pipe_ops")
    return num_pipe_ops


def _latency_term_us(tuning: NcclTuning, c: int, a: int, p: int, nbytes: int, num_pipe_ops: int) -> float:
    """The latency term ``lat · n_lat`` of ``ncclTopoGetAlgoTime``, µs (§4.2): the Ring/Simple multi-node
    AllReduce plateau factor once ``nbytes / (channels · ranks) ≥ 64``, ``n_lat`` per pipelined operation."""
    version, system = tuning.version, tuning.system
    lat = tuning.latency_us[c][a][p]
    multi = system.n_nodes > 1 and not (version.plateau_skips_mnnvl and system.mnnvl)
    if a == RING and p == SIMPLE and multi and c == ALL_REDUCE \
            and nbytes // (system.n_channels * system.n_ranks) >= 64:
        lat *= 1.9 if system.min_compcap < 80 else 1.4
    lat_count = num_pipe_ops if a == RING else -(-num_pipe_ops // version.work_batch)
    return lat * lat_count


def _time_us(tuning: NcclTuning, c: int, a: int, p: int, nbytes: int, num_pipe_ops: int, bw: float) -> float:
    """``ncclTopoGetAlgoTime`` with a given bandwidth, µs (§4.2 and §4.5)."""
    version, system = tuning.version, tuning.system
    shifted = nbytes >> 6
    log_size = (_log2i(shifted) if shifted > 0 else 0) if version.old_log2 else _log2i(shifted)
    if a == TREE and c == ALL_REDUCE and 0 <= log_size < 23:
        bw *= version.tree_correction[p][log_size]
    if version.nvls_tree_correction and a == NVLS_TREE and c == ALL_REDUCE and 0 <= log_size < 24 \
            and system.min_compcap >= 100 and system.cpu_arch == "x86":
        bw *= version.tree_correction[p][log_size]
    return _latency_term_us(tuning, c, a, p, nbytes, num_pipe_ops) + nbytes / (1000 * bw)


def algo_time_s(tuning: NcclTuning, collective: str, algorithm: str, protocol: str, nbytes: int,
                num_pipe_ops: int = 1) -> float:
    """NCCL's model time of one algorithm and protocol, seconds (``ncclTopoGetAlgoTime``).

    Parameters
    ----------
    tuning : NcclTuning
        From :func:`tune_model`.
    collective : str
        simnet collective name (``"allreduce"``, ``"all_gather"``, ...).
    algorithm, protocol : str
        ``"tree"``, ``"ring"``, ... and ``"ll"``, ``"ll128"``, ``"simple"``.
    nbytes : int
        The bytes NCCL models (:func:`model_nbytes`: the total for AllGather and
        ReduceScatter).
    num_pipe_ops : int, optional
        Operations aggregated in one launch (1 for a lone collective).

    Returns
    -------
    float
        ``(lat · n_lat + nbytes / (1000 · bw)) · 1e-6`` with the tree correction
        ``treeCorrectionFactor[proto][floor(log2(nbytes/64))]`` on Tree AllReduce
        (and NVLSTree on SM100+ x86 from 2.29), the Ring/Simple multi-node
        AllReduce latency × 1.4 (× 1.9 before SM80) once ``nbytes /
        (channels · ranks) ≥ 64``, and ``n_lat = num_pipe_ops`` for Ring or
        ``ceil(num_pipe_ops / batch)`` otherwise; ``math.inf`` for a disabled
        entry (NCCL's −1).
    """
    c, a, p = tuning._indices(collective, algorithm, protocol)
    nbytes = _check_nbytes(nbytes)
    num_pipe_ops = _check_pipe_ops(num_pipe_ops)
    bw = tuning.bandwidth_GBps[c][a][p]
    if bw == 0:
        return math.inf
    return _time_us(tuning, c, a, p, nbytes, num_pipe_ops, bw) * 1e-6


def algo_latency_s(tuning: NcclTuning, collective: str, algorithm: str, protocol: str, nbytes: int,
                   num_pipe_ops: int = 1) -> float:
    """The latency part of :func:`algo_time_s`, ``lat · n_lat · 1e-6``, seconds: what NCCL's model charges one
    algorithm and protocol before any byte moves (its base latency plus the per-step latencies of its
    pattern, ``ncclTopoTuneModel``), with the same corrections; ``math.inf`` for a disabled entry.

    Parameters are those of :func:`algo_time_s`.
    """
    c, a, p = tuning._indices(collective, algorithm, protocol)
    nbytes = _check_nbytes(nbytes)
    num_pipe_ops = _check_pipe_ops(num_pipe_ops)
    if tuning.bandwidth_GBps[c][a][p] == 0:
        return math.inf
    return _latency_term_us(tuning, c, a, p, nbytes, num_pipe_ops) * 1e-6


def _filtered(tuning: NcclTuning, c: int, a: int, nvls_op_support: bool, collnet_op_support: bool) -> bool:
    """Per-operation filters of ``updateCollCostTable`` / ``getAlgoInfo`` (§3.6, enqueue.cc)."""
    version, system = tuning.version, tuning.system
    rule = version.runtime_filter
    multi = system.n_nodes > 1
    local = system.max_local_ranks
    if a in (COLLNET_DIRECT, COLLNET_CHAIN) and not collnet_op_support:
        return True
    if a == COLLNET_DIRECT and rule in ("2.23", "2.25", "2.27", "2.28") and local > MAX_DIRECT_ARITY + 1:
        return True
    if a == COLLNET_CHAIN and rule == "2.28" and local > MAX_DIRECT_ARITY + 1:
        return True
    if a in (NVLS, NVLS_TREE):
        exempt = c == ALL_GATHER and (rule in ("2.22", "2.23", "2.25") or (rule == "2.19" and a == NVLS))
        if not nvls_op_support and not exempt:
            return True
        if rule in ("2.27", "2.28") and c != ALL_REDUCE and local > MAX_NVLS_ARITY:
            return True
    if a == NVLS and not collnet_op_support and multi:
        return True
    if a == NVLS and c in (ALL_GATHER, REDUCE_SCATTER):
        if rule in ("2.19", "2.20", "2.22", "2.23") and multi:
            return True
        if rule == "2.25" and (multi or system.n_ranks > MAX_NVLS_ARITY):
            return True
    return False


def _table_us(tuning: NcclTuning, collective: str, nbytes: int, num_pipe_ops: int, nvls_op_support: bool,
              collnet_op_support: bool | None, fp8: bool) -> tuple[dict, dict]:
    c = function_index(collective)
    nbytes = _check_nbytes(nbytes)
    num_pipe_ops = _check_pipe_ops(num_pipe_ops)
    for name, value in (("nvls_op_support", nvls_op_support), ("fp8", fp8)):
        if not isinstance(value, bool):
            raise SimnetError(f"must be true or false, got {value!r}", path=name)
    if collnet_op_support is None:
        collnet_op_support = tuning.system.collnet_enabled
    elif not isinstance(collnet_op_support, bool):
        raise SimnetError(f"must be true, false or None, got {collnet_op_support!r}", path="collnet_op_support")
    version = tuning.version
    table, backups = {}, {}
    for a in range(version.n_algorithms):
        skip = _filtered(tuning, c, a, nvls_op_support, collnet_op_support)
        for p in range(3):
            bw = tuning.bandwidth_GBps[c][a][p]
            time = math.inf
            if not skip and bw != 0:
                time = _time_us(tuning, c, a, p, nbytes, num_pipe_ops, bw)
                if fp8 and version.fp8_ring_penalty and a == RING and tuning.system.n_ranks > 8:
                    time *= 1024.0
            elif not skip and a == RING and tuning.ring_backup_GBps is not None and tuning.ring_backup_GBps[c][p]:
                backups[(ALGORITHMS[a], PROTOCOLS[p])] = _time_us(tuning, c, a, p, nbytes, num_pipe_ops,
                                                                  tuning.ring_backup_GBps[c][p])
            table[(ALGORITHMS[a], PROTOCOLS[p])] = time
    return table, backups


def cost_table(tuning: NcclTuning, collective: str, nbytes: int, *, num_pipe_ops: int = 1,
               nvls_op_support: bool = True, collnet_op_support: bool | None = None,
               fp8: bool = False) -> dict[tuple[str, str], float]:
    """NCCL's cost table for one operation: model time of every algorithm and protocol, seconds.

    Parameters
    ----------
    tuning : NcclTuning
        From :func:`tune_model`.
    collective : str
        simnet collective name.
    nbytes : int
        Model bytes (:func:`model_nbytes`).
    num_pipe_ops : int, optional
        Operations aggregated in one launch.
    nvls_op_support : bool, optional
        The reduction operator and type are supported by NVLS (``ncclNvlsSupported``:
        sum/min/max on 32/64-bit integers, fp16, bf16; sum on float and double).
    collnet_op_support : bool, optional
        The CollNet plugin supports the operation (default: CollNet enabled).
    fp8 : bool, optional
        fp8 data: Ring times × 1024 above 8 ranks (2.24+).

    Returns
    -------
    dict
        ``(algorithm, protocol) -> seconds``, with ``math.inf`` for entries disabled
        by the model or skipped by the per-operation filters (``updateCollCostTable``).
    """
    table, _ = _table_us(tuning, collective, nbytes, num_pipe_ops, nvls_op_support, collnet_op_support, fp8)
    return {key: value * 1e-6 for key, value in table.items()}


def choose(tuning: NcclTuning, collective: str, nbytes: int, *, num_pipe_ops: int = 1,
           nvls_op_support: bool = True, collnet_op_support: bool | None = None, fp8: bool = False) -> NcclChoice:
    """NCCL's algorithm and protocol for one operation and its model time (``topoGetAlgoInfo``).

    The smallest finite time of :func:`cost_table`, scanning algorithms then
    protocols in NCCL's id order with a strict ``<``: ties go to the lower
    algorithm id (Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT),
    then to the lower protocol id (LL, LL128, Simple). From 2.19 to 2.23, when
    nothing is available, Ring falls back on its "backup" bandwidth. A single
    rank runs Ring/Simple in no time.

    Parameters are those of :func:`cost_table`.

    Returns
    -------
    NcclChoice
        ``(algorithm, protocol, time_s)``.

    Raises
    ------
    SimnetError
        When no algorithm or protocol is available (NCCL's "no algorithm/protocol
        available" error), e.g. after an ``NCCL_ALGO`` that leaves nothing.
    """
    if tuning.system.n_ranks == 1:
        function_index(collective)
        return NcclChoice("ring", "simple", 0.0)
    table, backups = _table_us(tuning, collective, nbytes, num_pipe_ops, nvls_op_support, collnet_op_support, fp8)
    for candidates in (table, backups):
        finite = [(time, key) for key, time in candidates.items() if math.isfinite(time)]
        if finite:
            best_time, best = finite[0]
            for time, key in finite[1:]:
                if time < best_time:
                    best_time, best = time, key
            return NcclChoice(best[0], best[1], best_time * 1e-6)
    raise SimnetError(f"no algorithm/protocol available for {collective} in NCCL {tuning.version.release}",
                      path="collective")


def launch_config(tuning: NcclTuning, collective: str, algorithm: str, protocol: str,
                  nbytes: int) -> tuple[int, int]:
    """Channels and threads per block NCCL launches an operation with (``topoGetAlgoInfo``, 2.22+).

    Starting from the communicator's channels and the entry's maximum threads,
    Ring/Tree/PAT/CollNetChain drop channels while ``nbytes < channels × threads
    × threshold``, then halve threads likewise; NVLS uses ``nvlsChannels``
    (multi-node NVLS at most the communicator's channels, 2.28+); CollNetDirect
    steps channels down 16 → 8 → ... A Simple ring adds a warp, a Simple tree 4;
    Tree and PAT always run 640 threads. The data split over channels that NCCL
    prints as ``channel{Lo..Hi}`` since 2.22 may use fewer channels than this
    maximum for small sizes.

    Returns
    -------
    tuple of int
        ``(n_channels, n_threads)``.
    """
    c, a, p = tuning._indices(collective, algorithm, protocol)
    nbytes = _check_nbytes(nbytes)
    system = tuning.system
    nc = system.n_channels
    nt = tuning.max_threads[a][p]
    threshold = tuning.thread_thresholds[a][p]
    if a == COLLNET_DIRECT:
        heads = max(tuning.graphs.collnet_direct.n_channels, 1)
        switch = 16
        shrinking = True
        while switch >= 1 and shrinking:
            while True:
                shrinking = nbytes < nc * nt * heads * threshold
                if not shrinking or nc <= switch:
                    break
                if nc == switch + switch // 2:
                    threshold //= 2
                nc -= 1
            switch //= 2
    elif a in (NVLS, NVLS_TREE):
        nc = system.nvls_channels
        if a == NVLS and system.n_nodes > 1 and tuning.version.nvls_model == "2.28":
            nc = min(system.nvls_channels, system.n_channels)
    else:
        while nbytes < nc * nt * threshold and nc >= 2:
            nc -= 1
    if a not in (NVLS, NVLS_TREE, COLLNET_DIRECT):
        while nbytes < nc * nt * threshold and nt % 128 == 0 and nt > 0:
            nt //= 2
    if p == SIMPLE:
        nt += WARP_SIZE if a == RING else 4 * WARP_SIZE if a == TREE else 0
    nt = max(nt, 3 * WARP_SIZE)
    if a in (TREE, PAT):
        nt = MAX_NTHREADS
    return nc, nt
