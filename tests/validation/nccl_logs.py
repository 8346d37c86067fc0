"""Public NCCL TUNING logs replayed by NCCL's cost model (:mod:`simnet.models.nccl`), with sources.

    PYTHONPATH=. python -m tests.validation.nccl_logs     # the validation table of docs/nccl.md

Every case below quotes a public log (verbatim, log prefixes trimmed), names its
source, and builds NCCL's inputs from what the log itself prints. Where a log
does not print a graph parameter, the case says which printed number it is
recovered from (one number per unknown; every other printed number is then a
prediction) or which topology it is derived from; no parameter is fitted.

Cases
-----
``nccl1453``
    NVIDIA/nccl#1453 (twichell, 2024), 3 nodes x 8 "NVIDIA H100 80GB HBM3", 24
    ranks. Printed: ``nRanks 24 nNodes 3 localRanks 8``, ``16 coll channels, 16
    nvls channels``, ``NVLS Head 0..7`` (8 NVLS heads), ``NVLS multicast support is
    available``, ``Channel xx/16`` rings, and nine per-size lines
    ``N Bytes -> Algo a proto p time t``. Release: the line format without a
    function name exists in 2.20-2.22 only (enqueue.cc l.1498 of v2.20.5-1, l.1613
    of v2.22.3-1) and the log looks up ``ncclTunerPlugin_v3`` (added in 2.22):
    2.22.3. 16 compute channels = 8 search channels duplicated (connect.cc).
    Not printed in the retrievable excerpts, recovered from one printed line
    each: the CPU vendor (Intel: ``llMaxBws`` 20.4 at >= 3 nodes; the 65536 B
    Tree/LL line), the tree pattern TREE (the 0.85 factor; same line), and the
    per-channel network bandwidth 24 GB/s shared by the ring, tree and NVLS
    graphs (the 8589934592 B Ring/Simple line; 24 is NCCL's speed for a PCIe
    Gen4 x16 NIC path). The other lines, including the 131072 B Tree/LL128 and
    524288 B NVLSTree lines that depend on the same 24 GB/s through other
    formulas, are predictions.
``nccl1519``
    NVIDIA/nccl#1519 (thecodingwizard, 2024-11-19), two GCP a3-megagpu-8g (8 H100
    each, 16 ranks), the init table of the run that used one 200 Gb/s NIC.
    Release 2.20: the Ring/LL bandwidth is 1/4 of Simple (2.18-2.20 rule) and
    CollNetDirect has AllGather entries (2.20+); CPU Intel (the AllGather Ring/LL
    latency 23.3 = 6.6 + 14 x 1.0 + 2.7 needs the Intel net overhead of 1 us).
    Recovered: the ring graph's channels x bandwidth = 20 GB/s (Broadcast
    Ring/Simple), sameChannels (Broadcast Ring/LL latency 9.3 = 6.6 + 2.7), Tree
    disabled by ``NCCL_ALGO`` (every Tree bandwidth prints 0.0; the excerpt does
    not show the environment), LL128 off because the NIC path is PHB (the
    topology lines print the NICs under the CPU, ``NET/5 : GPU/0-84000
    (5/24.0/PHB)``). Compute channels 16 (``Ring 00..15``).
``ebpf_socket``
    eunomia-bpf/nccl-eBPF @ 14f9bca8b8a0a6eea21beec714340663b5fcb668,
    ``docs/tmp/default-suboptimal-search.md`` l.147-189 (init table, Broadcast
    decisions) and ``docs/tmp/p3-allgather-reducescatter-sweep.md`` l.62-84
    (AllGather decisions; ReduceScatter printed the same, l.56-58): NCCL 2.29.7,
    two ranks on one RTX 5090 (SM120) made two "hosts" with ``NCCL_HOSTID``, TCP
    sockets (``NCCL_NET=Socket``). Recovered: ring channels x bandwidth 2.4 GB/s
    (Broadcast Ring/Simple), tree channels x bandwidth 4.8 GB/s (PAT 3.6 =
    4.8 x 0.75), sameChannels (Broadcast Ring/LL 9.3), 4 compute channels
    (``channel{Lo..Hi}={0..3}``). Derived: one GPU per node makes the tree
    pattern TREE (search.cc ``ncclTopoCompute``) and the intra path LOC; the
    socket NIC hangs off the CPU, so LL128 is off (its latency prints, its
    bandwidth 0.0). The CPU vendor does not enter (no intra-node ring steps).
``h100_*``
    8-GPU H100/H200 servers, decisions only, graphs from
    :func:`~simnet.models.nccl.graphs_from_network` on :func:`simnet.topology.dgx_h100`
    (research notes §6.7: ring and tree 12 channels x 30 GB/s, 24 compute
    channels, NVLS 8 heads at 40/60 GB/s, 16 NVLS channels); the logs print 24
    ring channels (``{0..23}``) and 16 NVLS channels (``{0..15}``), as derived.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import pandas as pd

from simnet.models.nccl import (
    NcclEnv,
    NcclGraph,
    NcclGraphs,
    NcclSystem,
    algo_time_s,
    choose,
    graphs_from_network,
    init_table,
    launch_config,
    model_nbytes,
    parse_decision_line,
    parse_init_table,
    tune_model,
)
from simnet.network import Network
from simnet.topology import dgx_h100

__all__ = [
    "LogCase",
    "ChoiceCase",
    "LOG_CASES",
    "CHOICE_CASES",
    "tuning_of",
    "time_rows",
    "table_rows",
    "choice_rows",
    "validation_table",
    "main",
]

NCCL1453_LINES = """\
NCCL INFO 8 Bytes -> Algo 0 proto 0 time 25.200924
NCCL INFO 16 Bytes -> Algo 0 proto 0 time 25.201847
NCCL INFO 256 Bytes -> Algo 0 proto 0 time 25.229528
NCCL INFO 512 Bytes -> Algo 0 proto 0 time 25.259054
NCCL INFO 2048 Bytes -> Algo 0 proto 0 time 25.495272
NCCL INFO 65536 Bytes -> Algo 0 proto 0 time 37.798233
NCCL INFO 131072 Bytes -> Algo 0 proto 1 time 51.603912
NCCL INFO 524288 Bytes -> Algo 5 proto 2 time 59.553600
NCCL INFO 8589934592 Bytes -> Algo 1 proto 2 time 86069.968750"""
"""NVIDIA/nccl#1453, turn 2 (each line repeated many times in the log)."""

NCCL1519_TABLE = """\
NCCL INFO   Protocol    |             LL |          LL128 |         Simple |             LL |          LL128 |         Simple |             LL |          LL128 |         Simple |
NCCL INFO  Max NThreads |            512 |            640 |            512 |            512 |            640 |            512 |              0 |              0 |            640 |
NCCL INFO     Broadcast |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     9.3/   5.0 |    18.0/   0.0 |    22.4/  20.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
NCCL INFO        Reduce |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     9.3/   5.0 |    18.0/   0.0 |    22.4/  20.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
NCCL INFO     AllGather |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |    23.3/   5.3 |    44.6/   0.0 |    70.0/  21.3 |     5.6/   0.0 |     5.6/   0.0 |    44.0/   0.0 |
NCCL INFO ReduceScatter |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |    23.3/   5.3 |    44.6/   0.0 |    70.0/  21.3 |     5.6/   0.0 |     5.6/   0.0 |    44.0/   0.0 |
NCCL INFO     AllReduce |    25.2/   0.0 |    48.5/   0.0 |   448.0/   0.0 |    43.4/   2.7 |    79.4 \u2026"""
"""NVIDIA/nccl#1519, the TUNING table (the AllReduce row is cut in the stored excerpt)."""

EBPF_TABLE = """\
NCCL INFO   Algorithm   |                            Tree                  |                            Ring                  |                   CollNetDirect                  |
NCCL INFO   Protocol    |             LL |          LL128 |         Simple |             LL |          LL128 |         Simple |             LL |          LL128 |         Simple |
NCCL INFO  Max NThreads |            512 |            640 |            512 |            512 |            640 |            256 |              0 |              0 |            640 |
NCCL INFO     Broadcast |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     9.3/   1.2 |    18.0/   0.0 |    22.4/   2.4 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
NCCL INFO        Reduce |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     9.3/   1.2 |    18.0/   0.0 |    22.4/   2.4 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
NCCL INFO     AllGather |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |    11.6/   2.4 |    22.5/   0.0 |    22.4/   4.8 |     5.0/   0.0 |     8.5/   0.0 |    14.0/   0.0 |
NCCL INFO ReduceScatter |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |    11.6/   2.4 |    22.5/   0.0 |    22.4/   4.8 |     5.0/   0.0 |     8.5/   0.0 |    14.0/   0.0 |
NCCL INFO     AllReduce |    16.8/   0.5 |    31.0/   0.0 |    36.4/   1.9 |    16.6/   1.2 |    31.0/   0.0 |    36.4/   2.4 |     5.0/   0.0 |     8.5/   0.0 |    14.0/   0.0 |
NCCL INFO   Algorithm   |                    CollNetChain                  |                            NVLS                  |                        NVLSTree                  |
NCCL INFO   Protocol    |             LL |          LL128 |         Simple |             LL |          LL128 |         Simple |             LL |          LL128 |         Simple |
NCCL INFO  Max NThreads |              0 |              0 |            640 |              0 |              0 |            640 |              0 |              0 |            640 |
NCCL INFO     Broadcast |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
NCCL INFO        Reduce |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
NCCL INFO     AllGather |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
NCCL INFO ReduceScatter |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
NCCL INFO     AllReduce |     5.0/   0.0 |     8.5/   0.0 |    14.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
NCCL INFO   Algorithm   |                             PAT                  |
NCCL INFO   Protocol    |             LL |          LL128 |         Simple |             LL |          LL128 |         Simple |             LL |          LL128 |         Simple |
NCCL INFO  Max NThreads |              0 |              0 |              0 |
NCCL INFO     Broadcast |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
NCCL INFO        Reduce |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
NCCL INFO     AllGather |     0.0/   0.0 |     0.0/   0.0 |    17.6/   3.6 |
NCCL INFO ReduceScatter |     0.0/   0.0 |     0.0/   0.0 |    17.6/   3.6 |
NCCL INFO     AllReduce |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |"""
"""eunomia-bpf/nccl-eBPF docs/tmp/default-suboptimal-search.md l.148-171 (NCCL 2.29.7)."""

EBPF_BROADCAST = """\
NCCL INFO Broadcast: 1024 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}
NCCL INFO Broadcast: 2048 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}
NCCL INFO Broadcast: 4096 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}
NCCL INFO Broadcast: 8192 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}
NCCL INFO Broadcast: 16384 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}
NCCL INFO Broadcast: 32768 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..0}
NCCL INFO Broadcast: 65536 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..1}
NCCL INFO Broadcast: 131072 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}
NCCL INFO Broadcast: 262144 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}
NCCL INFO Broadcast: 524288 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}
NCCL INFO Broadcast: 1048576 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}
NCCL INFO Broadcast: 2097152 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}
NCCL INFO Broadcast: 4194304 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}
NCCL INFO Broadcast: 8388608 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}
NCCL INFO Broadcast: 16777216 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}
NCCL INFO Broadcast: 33554432 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}
NCCL INFO Broadcast: 67108864 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}
NCCL INFO Broadcast: 134217728 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}"""
"""Same file, l.172-189."""

EBPF_ALLGATHER = """\
NCCL INFO AllGather:    16 Bytes -> Algo RING  proto LL     channel{Lo..Hi}={0..0}
NCCL INFO AllGather:    32 Bytes -> Algo RING  proto LL     channel{Lo..Hi}={0..0}
NCCL INFO AllGather:    64 Bytes -> Algo RING  proto LL     channel{Lo..Hi}={0..0}
NCCL INFO AllGather:   128 Bytes -> Algo RING  proto LL     channel{Lo..Hi}={0..0}
NCCL INFO AllGather:   256 Bytes -> Algo RING  proto LL     channel{Lo..Hi}={0..0}
NCCL INFO AllGather:   512 Bytes -> Algo RING  proto LL     channel{Lo..Hi}={0..0}
NCCL INFO AllGather:  1024 Bytes -> Algo RING  proto LL     channel{Lo..Hi}={0..0}
NCCL INFO AllGather:  2048 Bytes -> Algo RING  proto LL     channel{Lo..Hi}={0..0}
NCCL INFO AllGather:  4096 Bytes -> Algo RING  proto LL     channel{Lo..Hi}={0..0}
NCCL INFO AllGather:  8192 Bytes -> Algo RING  proto LL     channel{Lo..Hi}={0..1}
NCCL INFO AllGather: 16384 Bytes -> Algo RING  proto LL     channel{Lo..Hi}={0..3}
NCCL INFO AllGather: 32768 Bytes -> Algo PAT   proto SIMPLE channel{Lo..Hi}={0..1}
NCCL INFO AllGather: 65536 Bytes -> Algo RING  proto SIMPLE channel{Lo..Hi}={0..3}
NCCL INFO AllGather:131072 Bytes -> Algo RING  proto SIMPLE channel{Lo..Hi}={0..3}
NCCL INFO AllGather:262144 Bytes -> Algo RING  proto SIMPLE channel{Lo..Hi}={0..3}
NCCL INFO AllGather:524288 Bytes -> Algo RING  proto SIMPLE channel{Lo..Hi}={0..3}
NCCL INFO AllGather:  1048576 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}
NCCL INFO AllGather:  2097152 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}
NCCL INFO AllGather:  4194304 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}
NCCL INFO AllGather:  8388608 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}
NCCL INFO AllGather: 16777216 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}
NCCL INFO AllGather: 33554432 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}
NCCL INFO AllGather: 67108864 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}"""
"""eunomia-bpf/nccl-eBPF docs/tmp/p3-allgather-reducescatter-sweep.md l.62-84 (column alignment is the author's)."""


@dataclass(frozen=True)
class LogCase:
    """A public log and NCCL's inputs for it.

    Attributes
    ----------
    name, source, topology : str
        Identifier, where the log is, the machine it ran on.
    version : str
        NCCL release.
    system : NcclSystem
    graphs : NcclGraphs
    env : NcclEnv
    table : str
        Printed init-table excerpt ("" if none).
    decisions : dict
        collective -> printed per-size lines (one string).
    """

    name: str
    source: str
    topology: str
    version: str
    system: NcclSystem
    graphs: NcclGraphs
    env: NcclEnv = field(default_factory=NcclEnv)
    table: str = ""
    decisions: dict = field(default_factory=dict)


H100_3NODE_GRAPH = dict(n_channels=8, bw_intra_GBps=24.0, bw_inter_GBps=24.0, type_intra="NVL", type_inter="PIX")

LOG_CASES = (
    LogCase(
        name="nccl1453",
        source="NVIDIA/nccl#1453",
        topology="3 nodes x 8 H100 (24 ranks)",
        version="2.22.3",
        system=NcclSystem(n_ranks=24, n_nodes=3, min_compcap=90, cpu_vendor="intel", n_channels=16,
                          nvls_channels=16, nvls_support=True, has_nvswitch=True),
        graphs=NcclGraphs(
            ring=NcclGraph("ring", **H100_3NODE_GRAPH),
            tree=NcclGraph("tree", **H100_3NODE_GRAPH),
            nvls=NcclGraph("nvls", **H100_3NODE_GRAPH),
        ),
        decisions={"allreduce": NCCL1453_LINES},
    ),
    LogCase(
        name="nccl1519",
        source="NVIDIA/nccl#1519",
        topology="2 x GCP a3-megagpu-8g (8 H100 each), one 200G NIC in use",
        version="2.20.5",
        system=NcclSystem(n_ranks=16, n_nodes=2, min_compcap=90, cpu_vendor="intel", n_channels=16,
                          has_nvswitch=True),
        graphs=NcclGraphs(
            ring=NcclGraph("ring", 1, 20.0, 20.0, "NVL", "PHB", same_channels=True),
            tree=NcclGraph("balanced_tree", 1, 20.0, 20.0, "NVL", "PHB"),
        ),
        env=NcclEnv(algo="Ring"),
        table=NCCL1519_TABLE,
    ),
    LogCase(
        name="ebpf_socket",
        source="eunomia-bpf/nccl-eBPF@14f9bca docs/tmp",
        topology="2 ranks on 1 RTX 5090 as 2 hosts, TCP sockets",
        version="2.29.7",
        system=NcclSystem(n_ranks=2, n_nodes=2, min_compcap=120, n_channels=4),
        graphs=NcclGraphs(
            ring=NcclGraph("ring", 2, 1.2, 1.2, "LOC", "PHB", same_channels=True),
            tree=NcclGraph("tree", 2, 2.4, 1.2, "LOC", "PHB", same_channels=True),
        ),
        table=EBPF_TABLE,
        decisions={"broadcast": EBPF_BROADCAST, "all_gather": EBPF_ALLGATHER, "reduce_scatter": EBPF_ALLGATHER},
    ),
)
"""Logs whose NCCL inputs come from the log itself."""


@dataclass(frozen=True)
class ChoiceCase:
    """A published choice of NCCL on a simnet topology: model bytes -> (algorithm, protocol[, channels]).

    Attributes
    ----------
    name, source, quote : str
        Identifier, where it is published, and the published words or lines.
    version : str
        NCCL release of the run.
    collective : str
    gpus : int
        GPUs of one ``dgx_h100`` server in the communicator.
    expected : tuple
        ``(model bytes, algorithm, protocol, printed channel count or None)``.
    """

    name: str
    source: str
    quote: str
    version: str
    collective: str
    gpus: int
    expected: tuple


def _sweep(low: int, high: int, algorithm: str, protocol: str) -> tuple:
    return tuple((1 << k, algorithm, protocol, None) for k in range(low, high + 1))


CHOICE_CASES = (
    ChoiceCase(
        "h100_blog_2_30_7",
        "public blog post on NCCL's cost model ('Watch it decide'), 8x H100, NCCL 2.30.7 "
        "(research notes nccl_measurements.md A2.5/B7)",
        "AllReduce: 4096 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}; 1048576 -> RING LL {0..23}; "
        "2097152 -> NVLS SIMPLE {0..15}; 'ring with LL up to 1 MiB, then straight to the switch from 2 MiB on, "
        "everything on Simple after that. No tree at any size ... No LL128 window' (swept 256 B to 4 GiB)",
        "2.30.7", "allreduce", 8,
        ((4096, "ring", "ll", 1), (1048576, "ring", "ll", 24), (2097152, "nvls", "simple", 16))
        + _sweep(8, 20, "ring", "ll") + _sweep(21, 32, "nvls", "simple"),
    ),
    ChoiceCase(
        "h100_nccl_tests_309",
        "NVIDIA/nccl-tests#309 (qoofyk), HGX H100 single node, NCCL 2.26.2",
        "8B~1MB: uses Algo RING proto LL; 2MB~16GB uses Algo NVLS proto SIMPLE",
        "2.26.2", "allreduce", 8,
        _sweep(3, 20, "ring", "ll") + _sweep(21, 34, "nvls", "simple"),
    ),
    ChoiceCase(
        "h200_stas00_2_27_7",
        "stas00/ml-engineering network/benchmarks/results/all-reduce-8xH200.md, 8x H200, NCCL 2.27.7",
        "NCCL uses Ring with the LL protocol up to a 1MiB payload and NVLS with SIMPLE from 2MiB up",
        "2.27.7", "allreduce", 8,
        _sweep(15, 20, "ring", "ll") + _sweep(21, 34, "nvls", "simple"),
    ),
) + tuple(
    ChoiceCase(
        f"h200_stas00_gpus_{gpus}",
        "stas00/ml-engineering network/README.md 'SHARP', NVLS gain vs number of GPUs, 8x H200, NCCL 2.27.7",
        f"{gpus} GPUs: algo NCCL picks {'Ring' if gpus == 4 else 'NVLS'} (all-reduce, 8 GiB)",
        "2.27.7", "allreduce", gpus,
        ((8 << 30, "ring" if gpus == 4 else "nvls", "simple", None),),
    )
    for gpus in (4, 5, 6, 7, 8)
) + tuple(
    ChoiceCase(
        f"hopper_report_2_29_2_gpus_{gpus}",
        "public results report 'Scaling-study algorithm attribution' (research notes nccl_measurements.md A2.6), "
        "GPUs of one 8-GPU Hopper NVSwitch node, NCCL 2.29.2",
        f"auto picks {'RING (SIMPLE, channels 0..23)' if gpus < 6 else 'NVLS (SIMPLE, channels 0..15)'} at "
        f"{gpus} GPUs, 256 MB-8 GB",
        "2.29.2", "allreduce", gpus,
        tuple((1 << k, "ring" if gpus < 6 else "nvls", "simple", 24 if gpus < 6 else 16) for k in range(28, 34)),
    )
    for gpus in (2, 4, 6)
) + (
    ChoiceCase(
        "sm90_nccl1906_allgather",
        "NVIDIA/nccl#1906 (xiangxl-a, 2025-11-23), 8 GPUs of one node, NCCL 2.26.2 (GPU model not printed; "
        "assumed SM90 with 18 NVLinks, consistent with the printed 24 ring and 16 NVLS channels)",
        "AllGather: 579600 Bytes -> Algo NVLS proto SIMPLE channel{Lo..Hi}={0..15}; "
        "AllGather: 515200 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..23}",
        "2.26.2", "all_gather", 8,
        ((8 * 515200, "ring", "ll", 24), (8 * 579600, "nvls", "simple", 16)),
    ),
)
"""Published choices on 8-GPU SM90 NVSwitch servers, checked with graphs derived from ``dgx_h100``."""


def tuning_of(case: LogCase):
    """NCCL's model for a log case."""
    return tune_model(case.system, case.graphs, case.version, case.env)


def time_rows() -> list[dict]:
    """Printed per-size model times beside computed ones (cases whose log prints times)."""
    rows = []
    for case in LOG_CASES:
        tuning = tuning_of(case)
        for collective, text in case.decisions.items():
            for line in text.splitlines():
                printed = parse_decision_line(line)
                if printed.time_s is None:
                    continue
                chosen = choose(tuning, collective, printed.printed_bytes)
                computed = algo_time_s(tuning, collective, printed.algorithm, printed.protocol, printed.printed_bytes)
                rows.append({
                    "case": case.name, "source": case.source, "topology": case.topology, "version": case.version,
                    "quantity": f"{collective} {printed.printed_bytes} B {printed.algorithm}/{printed.protocol} time",
                    "printed": printed.time_s * 1e6, "computed": computed * 1e6,
                    "error": computed / printed.time_s - 1,
                    "choice": (chosen.algorithm, chosen.protocol) == (printed.algorithm, printed.protocol),
                })
    return rows


def table_rows() -> list[dict]:
    """Every printed init-table cell (latency µs, bandwidth GB/s, max threads) beside the computed one."""
    rows = []
    for case in LOG_CASES:
        if not case.table:
            continue
        printed = parse_init_table(case.table)
        computed = parse_init_table(init_table(tuning_of(case)))
        for name, values in (("latency us", "latency_us"), ("bandwidth GB/s", "bandwidth_GBps"),
                             ("max threads", "max_threads")):
            for key, value in getattr(printed, values).items():
                mine = getattr(computed, values)[key]
                rows.append({
                    "case": case.name, "source": case.source, "topology": case.topology, "version": case.version,
                    "quantity": f"{name} {'/'.join(key)}", "printed": value, "computed": mine,
                    "error": abs(mine - value),
                })
    return rows


def choice_rows() -> list[dict]:
    """Every published choice beside NCCL's modelled one."""
    rows = []
    for case in LOG_CASES:
        tuning = tuning_of(case)
        for collective, text in case.decisions.items():
            for line in text.splitlines():
                printed = parse_decision_line(line)
                nbytes = model_nbytes(collective, printed.printed_bytes, case.system.n_ranks)                     if printed.channels is not None else printed.printed_bytes
                chosen = choose(tuning, collective, nbytes)
                rows.append({
                    "case": case.name, "source": case.source, "version": case.version, "collective": collective,
                    "nbytes": nbytes, "printed": f"{printed.algorithm}/{printed.protocol}",
                    "computed": f"{chosen.algorithm}/{chosen.protocol}", "printed channels": None,
                    "computed channels": None,
                })
    networks = {}
    for case in CHOICE_CASES:
        network = networks.setdefault("dgx_h100", Network(dgx_h100()))
        system, graphs = graphs_from_network(network, case.version, ranks=range(case.gpus))
        tuning = tune_model(system, graphs, case.version)
        for nbytes, algorithm, protocol, channels in case.expected:
            chosen = choose(tuning, case.collective, nbytes)
            rows.append({
                "case": case.name, "source": case.source, "version": case.version, "collective": case.collective,
                "nbytes": nbytes, "printed": f"{algorithm}/{protocol}",
                "computed": f"{chosen.algorithm}/{chosen.protocol}", "printed channels": channels,
                "computed channels": launch_config(tuning, case.collective, chosen.algorithm, chosen.protocol,
                                                   nbytes)[0],
            })
    return rows


def validation_table() -> pd.DataFrame:
    """One row per log and quantity kind: how many printed values, largest error, all choices equal."""
    summary = []
    times = pd.DataFrame(time_rows())
    for (case, source, topology, version), group in times.groupby(["case", "source", "topology", "version"],
                                                                  sort=False):
        summary.append({"source": source, "topology": topology, "NCCL": version, "compared": "per-size times (us)",
                        "values": len(group), "printed": ", ".join(f"{v:.6f}" for v in group["printed"]),
                        "computed": ", ".join(f"{v:.6f}" for v in group["computed"]),
                        "max |error|": f"{group['error'].abs().max():.1e} (relative)",
                        "choices equal": f"{int(group['choice'].sum())}/{len(group)}"})
    cells = pd.DataFrame(table_rows())
    for (case, source, topology, version), group in cells.groupby(["case", "source", "topology", "version"],
                                                                  sort=False):
        summary.append({"source": source, "topology": topology, "NCCL": version,
                        "compared": "init-table cells (latency/bandwidth/threads)", "values": len(group),
                        "printed": "printed table", "computed": "init_table()",
                        "max |error|": f"{group['error'].max():.2f} (absolute, printed to 0.1)",
                        "choices equal": ""})
    choices = pd.DataFrame(choice_rows())
    logs = {case.name for case in LOG_CASES}
    for (source, version), group in choices.groupby(["source", "version"], sort=False):
        same = (group["printed"] == group["computed"]).sum()
        derived = not set(group["case"]) & logs
        summary.append({"source": source, "topology": "dgx_h100 (derived graphs)" if derived else "",
                        "NCCL": version, "compared": "choices", "values": len(group),
                        "printed": "", "computed": "", "max |error|": "", "choices equal": f"{same}/{len(group)}"})
    return pd.DataFrame(summary)


def main(argv: list[str] | None = None) -> int:
    """Print the validation table (markdown) and the per-value rows."""
    del argv
    print(validation_table().to_markdown(index=False))
    print()
    print(pd.DataFrame(time_rows()).to_markdown(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
