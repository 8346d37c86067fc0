"""Published nccl-tests all-reduce curves, size by size, and simnet's NCCL twin beside every point.

Each :class:`Curve` is one published sweep (or a few published points of one
configuration) of NVIDIA's ``all_reduce_perf``: the sizes, the bus bandwidth (GB/s)
and, where printed, the time (µs) of the column the source reports, with its
citation, hardware, NCCL release, launch mode and any ``NCCL_ALGO`` the run forced.
Beside it, how simnet models the run:

* the machine: :func:`simnet.calibration.calibrated_node` or
  :func:`~simnet.calibration.calibrated_cluster` (``pxn=True``: NCCL's PXN is on by
  default), i.e. NCCL's own link constants (``SM80_NVLINK_BW 20.0``, ``SM90_NVLINK_BW
  20.6``, ``SM100_NVLINK_BW 40.1`` GB/s per NVLink, ``NET_BW`` 96 % of an InfiniBand
  port), with the templates' NVSwitches, which reduce in flight at NCCL's
  ``nvlsEfficiency`` from H100 on (0.85 Hopper, 0.74 Blackwell);
* the algorithm: ``nccl`` (NCCL's own choice of algorithm, protocol and channels per
  size from its cost model, :mod:`simnet.models.nccl`) unless the run forced one,
  then ``nccl_ring``, ``nvls``, ... with ``protocol: auto``;
* the NCCL release whose constants simnet uses: the run's when printed and covered
  (2.18.3-2.30.7), else simnet's default :data:`simnet.algorithms.nccl.NCCL_RELEASE`.

Nothing here is fitted to the points: the constants are NCCL's and the templates'.
:class:`CurveSimulator` simulates every point (each distinct run once) and gives the
error ``simnet busbw / published busbw - 1``, and NCCL's own modelled busbw for the
same algorithm and protocol. ``python -m tests.validation.tables nccl_curves`` prints
the tables of ``docs/validation.md``; ``benchmarks/nccl_curves.py`` rewrites the
committed table ``tests/validation/nccl_curves.csv`` that ``test_nccl_curves.py``
checks.

References
----------
NVIDIA nccl-tests, ``doc/PERFORMANCE.md`` (algbw = S / t, all-reduce busbw = algbw
· 2(n-1)/n). NVIDIA NCCL ``src/graph/topo.h`` (link constants), ``src/graph/tuning.cc``
(``nvlsEfficiency`` 0.85 on SM90 and 0.74 on SM100, introduced in 2.28). The sources of the points
are cited per curve; the transcriptions are those of the project's research notes
``nccl_measurements.md`` (sections named in :attr:`Curve.figure`), re-checked
against the stored copies where marked.
"""

from __future__ import annotations

import functools
import json
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import networkx as nx
import numpy as np
import pandas as pd

from simnet.algorithms import ALGORITHMS
from simnet.algorithms.nccl import NCCL_NAMES, NCCL_RELEASE, NVLS_CHUNK_BYTES, PROTOCOLS
from simnet.analysis import busbw_factor
from simnet.calibration import calibrated_cluster, calibrated_node
from simnet.engine import simulate
from simnet.models.nccl import algo_time_s, graphs_from_network, tune_model
from simnet.network import Network
from simnet.schedule import split_bytes
from simnet.topology import gpus
from simnet.units import format_size

__all__ = [
    "KiB",
    "MiB",
    "GiB",
    "Point",
    "Curve",
    "CURVES",
    "NOT_MODELLED",
    "curve_graph",
    "Run",
    "CurveSimulator",
    "curve_rows",
    "summary",
    "FAMILIES",
    "family",
    "family_summary",
    "ring_against_model",
    "BARS",
    "bar_status",
    "TABLE",
    "read_table",
    "describe",
    "label",
]

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

@dataclass(frozen=True)
class Point:
    """One published row: size (bytes), bus bandwidth (GB/s) and time (µs) when printed."""

    size_bytes: int
    busbw_GBps: float
    time_us: float | None = None


@dataclass(frozen=True)
class Curve:
    """A published all-reduce sweep and how simnet models it.

    Attributes
    ----------
    key : str
        Short name (the rows' ``curve``).
    title : str
        Machine and run, one line.
    source : str
        Where the numbers are: URL, or repository, path and commit, or the stored copy.
    figure : str
        Section of the research notes ``nccl_measurements.md`` holding the transcription.
    hardware : str
        GPUs, servers, NICs as the source states them.
    nccl : str
        NCCL release as printed by the source (``"not shown"`` otherwise).
    launch : str
        How nccl-tests was launched (one process for all GPUs, ``-g 8``, or one per GPU).
    forced : str
        NCCL settings the run forced (``NCCL_ALGO``, ...); empty for NCCL's own choice.
    column : str
        nccl-tests column the points are from (``"out-of-place"`` or ``"in-place"``).
    machine : str
        simnet template: ``"dgx_a100"``, ``"dgx_h100"``, ``"dgx_b200"`` or ``"gb200_nvl72"``.
    nodes : int
        Servers.
    points : tuple of Point
        The published rows, sizes ≥ 1 KiB.
    algorithm : str
        simnet algorithm (a registry name).
    params : tuple of (str, object)
        Its parameters besides ``version``.
    version : str
        NCCL release whose constants simnet uses.
    gpus_per_node : int
        GPUs used in each server; fewer than the template has keeps its first
        ``gpus_per_node`` GPUs (72 for a whole NVL72 rack).
    nic_share : float
        Share of a NIC port per GPU (0.5: four NICs for eight GPUs).
    notes : str
        What the model approximates.
    """

    key: str
    title: str
    source: str
    figure: str
    hardware: str
    nccl: str
    launch: str
    forced: str
    column: str
    machine: str
    nodes: int
    points: tuple[Point, ...]
    algorithm: str = "nccl"
    params: tuple[tuple[str, object], ...] = ()
    version: str = NCCL_RELEASE
    gpus_per_node: int = 8
    nic_share: float = 1.0
    notes: str = ""

    @property
    def single_server(self) -> bool:
        """Whether all GPUs are in one server."""
        return self.nodes == 1

    @property
    def ranks(self) -> int:
        """GPUs in the run."""
        return self.nodes * self.gpus_per_node

    @property
    def simnet(self) -> str:
        """The simnet run, one line (algorithm, parameters, NCCL release)."""
        shown = ", ".join(f"{k}: {v}" for k, v in self.params)
        return f"{self.algorithm}" + (f" ({shown})" if shown else "") + f", NCCL {self.version}"


def _rows(rows: Iterable[tuple[int, float | None, float]]) -> tuple[Point, ...]:
    """Points from ``(size bytes, time µs or None, busbw GB/s)`` rows as nccl-tests prints them."""
    return tuple(Point(size, busbw, time_us) for size, time_us, busbw in rows)


def _busbw(rows: Iterable[tuple[int, float]]) -> tuple[Point, ...]:
    """Points from ``(size bytes, busbw GB/s)`` rows (sources that print no time)."""
    return tuple(Point(size, busbw) for size, busbw in rows)


_DGX_A100 = "8x A100-SXM4-80GB, NVSwitch (NVLink3, 12 links per GPU)"
_H100 = "8x H100 80GB HBM3 SXM, NVSwitch (NVLink4, 18 links per GPU)"
_H200 = "8x H200 141GB SXM, NVSwitch (NVLink4, 18 links per GPU)"
_H200_NOTE = ("H200 modelled on the H100 template: same NVLink4 links and NVSwitch generation; "
              "its larger, faster HBM3e is not modelled")
_THANOS = ("public GitHub Markdown notes (Chinese nccl-tests how-to, host 'thanos', pip nvidia-nccl-cu12); "
           "repository not exposed by the stored copy (search index id 33201577724), re-checked")
_AZURE = "Azure/AI-benchmarking-guide"
_ISSUE_309 = "https://github.com/NVIDIA/nccl-tests/issues/309"
_BLOG = ("blog post 'Inside NCCL's all-reduce: ring, double binary tree, or neither?' (2026-08-02 and later "
         "revisions, section 'Watch it decide'); repository not exposed (stored copies 61961162582, 61959078495)")
_STAS = ("stas00/ml-engineering, network/benchmarks/README.md, 'How the bandwidth is measured' "
         "(2026 revision; stored copy 70468674928)")
_STAS_SHARP = "stas00/ml-engineering, network/README.md, section 'SHARP' (2026 revisions)"
_B200 = "8x B200 SXM, NVSwitch (NVLink5, 18 links per GPU)"
_GKE_A4 = ("public GitHub Markdown 'DeepEP on GKE B200 GPU nodes' (Chinese README, 2025-10-26; section 'NCCL cross-node "
           "performance test', job nccl-test-internode-job.yaml, container ngc-25-04, nodes "
           "gke-chrisya-gke-a4-a4-highgpu-ubuntu--752c886b-*); repository not exposed by the stored copy (search index "
           "id 36588483035), re-checked")
_GKE_A4_NOTE = ("GKE's a4-highgpu-8g on the DGX B200 template (8 B200 on NVLink5 NVSwitches); the NCCL release is not "
                "printed (the container is NGC PyTorch 25.04): simnet's default release; the source prints only the "
                "out-of-place columns")
_NOT_SHOWN = "not shown"
_AUTO = (("protocol", "auto"),)

CURVES: tuple[Curve, ...] = (
    Curve(
        "a100_thanos_g8",
        "8x A100 SXM4, one process driving 8 GPUs",
        _THANOS,
        "A1.1 (a)",
        _DGX_A100,
        _NOT_SHOWN,
        "one process, -g 8 (all_reduce_perf -b 8 -e 4G -f 2 -g 8)",
        "",
        "out-of-place",
        "dgx_a100",
        1,
        _rows([
            (1024, 42.05, 0.04), (2048, 38.39, 0.09), (4096, 39.12, 0.18), (8192, 39.39, 0.36),
            (16384, 39.47, 0.73), (32768, 40.93, 1.4), (65536, 40.97, 2.8), (131072, 42.26, 5.43),
            (262144, 43.97, 10.43), (524288, 48.31, 18.99), (1048576, 52.61, 34.88), (2097152, 59.3, 61.89),
            (4194304, 103.8, 70.7), (8388608, 162.6, 90.27), (16777216, 260.5, 112.72),
            (33554432, 439.2, 133.71), (67108864, 695.5, 168.86), (134217728, 1305.0, 179.99),
            (268435456, 2392.6, 196.34), (536870912, 4627.5, 203.03), (1073741824, 8247.6, 227.83),
            (2147483648, 16330.0, 230.13), (4294967296, 32336.0, 232.44),
        ]),
        notes="NCCL release not printed (pip nvidia-nccl-cu12, mid-2024 or later): simnet's default release",
    ),
    Curve(
        "a100_thanos_mpi",
        "8x A100 SXM4, same server, one process per GPU",
        _THANOS,
        "A1.1 (b)",
        _DGX_A100,
        _NOT_SHOWN,
        "one process per GPU (mpirun -np 8 all_reduce_perf -b 8 -e 4G -f 2 -g 1)",
        "",
        "out-of-place",
        "dgx_a100",
        1,
        _rows([
            (1024, 24.43, 0.07), (2048, 24.32, 0.15), (4096, 25.29, 0.28), (8192, 25.84, 0.55),
            (16384, 26.15, 1.1), (32768, 30.25, 1.9), (65536, 31.82, 3.6), (131072, 31.9, 7.19),
            (262144, 27.65, 16.59), (524288, 28.11, 32.64), (1048576, 37.89, 48.43), (2097152, 55.39, 66.26),
            (4194304, 81.66, 89.89), (8388608, 130.6, 112.37), (16777216, 213.3, 137.68),
            (33554432, 377.6, 155.53), (67108864, 615.7, 190.73), (134217728, 1181.6, 198.78),
            (268435456, 2218.2, 211.78), (536870912, 4248.8, 221.13), (1073741824, 8244.5, 227.91),
            (2147483648, 16288.0, 230.72), (4294967296, 32285.0, 232.81),
        ]),
        notes="NCCL release not printed: simnet's default release",
    ),
    Curve(
        "a100_dkh_2193",
        "8x A100 SXM4, one process driving 8 GPUs, NCCL 2.19.3",
        "public GitHub Markdown notes (host 'dkh', nccl-tests 2.19.4); repository not exposed by the stored copy "
        "(search index id 69473998636)",
        "A1.2",
        _DGX_A100,
        "2.19.3",
        "one process, -g 8 (all_reduce_perf -b 8 -e 128M -f 2 -g 8)",
        "",
        "out-of-place",
        "dgx_a100",
        1,
        _rows([
            (1024, 36.57, 0.05), (2048, 36.58, 0.1), (4096, 37.17, 0.19), (8192, 36.86, 0.39),
            (16384, 36.47, 0.79), (32768, 36.74, 1.56), (65536, 37.48, 3.06), (131072, 40.33, 5.69),
            (262144, 46.38, 9.89), (524288, 56.27, 16.31), (1048576, 67.31, 27.26), (2097152, 81.12, 45.24),
            (4194304, 106.56, 68.88), (8388608, 161.65, 90.81), (16777216, 273.12, 107.5),
            (33554432, 431.4, 136.11), (67108864, 671.74, 174.83), (134217728, 1295.41, 181.32),
        ]),
        version="2.19.3",
    ),
    Curve(
        "azure_nd_a100_v4",
        "Azure ND A100 v4 (8x A100 SXM4), one process driving 8 GPUs",
        f"{_AZURE}, Azure_Results/ND_A100_v4_results.md @3bb66cacc25632d8ece36bc1d5128c5ea886a60b "
        "(script Benchmarks/NVIDIA/NCCLBandwidth.py @545c5c6a), re-checked",
        "A2.3",
        "8x A100-SXM4-80GB, NVSwitch, AMD EPYC 7V12",
        "2.18.5",
        "one process, -g 8 (NCCL_ALGO=NVLS all_reduce_perf -b 8 -e 8G -f 2 -g 8 -n 40)",
        "NCCL_ALGO=NVLS (no NVLS on A100; the numbers are those of NCCL's fallback)",
        "in-place",
        "dgx_a100",
        1,
        _busbw([
            (1 * KiB, 0.04), (2 * KiB, 0.08), (4 * KiB, 0.17), (8 * KiB, 0.33), (16 * KiB, 0.67),
            (32 * KiB, 1.37), (64 * KiB, 2.70), (128 * KiB, 5.15), (256 * KiB, 10.11), (512 * KiB, 19.24),
            (1 * MiB, 36.22), (2 * MiB, 53.54), (4 * MiB, 71.43), (8 * MiB, 89.99), (16 * MiB, 109.22),
            (32 * MiB, 132.77), (64 * MiB, 166.63), (128 * MiB, 174.18), (256 * MiB, 213.87),
            (512 * MiB, 221.58), (1 * GiB, 228.10), (2 * GiB, 230.22), (4 * GiB, 230.48), (8 * GiB, 231.58),
        ]),
        version="2.18.5",
        notes="A100 has no NVLS, so simnet runs NCCL's own choice; the source labels sizes 65K, 132K, 524K, "
              "33M, ... for the powers of two",
    ),
    Curve(
        "azure_nd_h100_v5",
        "Azure ND H100 v5 (8x H100 SXM), NVLS forced, one process driving 8 GPUs",
        f"{_AZURE}, 'Azure Results/ND_H100_v5_results.md' @f350e7e65b82cfcb9220b32b582bc34342d9c1a6, re-checked",
        "A2.3",
        _H100 + ", Intel Xeon Platinum 8480C",
        "2.18.5",
        "one process, -g 8 (NCCL_ALGO=NVLS all_reduce_perf -b 8 -e 8G -f 2 -g 8 -n 40)",
        "NCCL_ALGO=NVLS",
        "in-place",
        "dgx_h100",
        1,
        _busbw([
            (1 * KiB, 0.07), (2 * KiB, 0.14), (4 * KiB, 0.27), (8 * KiB, 0.53), (16 * KiB, 0.95),
            (32 * KiB, 1.71), (64 * KiB, 2.72), (128 * KiB, 5.40), (256 * KiB, 10.86), (512 * KiB, 21.35),
            (1 * MiB, 43.70), (2 * MiB, 81.93), (4 * MiB, 128.73), (8 * MiB, 172.13), (16 * MiB, 234.45),
            (32 * MiB, 295.53), (64 * MiB, 361.78), (128 * MiB, 400.61), (256 * MiB, 423.38),
            (512 * MiB, 438.46), (1 * GiB, 466.35), (2 * GiB, 472.36), (4 * GiB, 475.54), (8 * GiB, 478.87),
        ]),
        algorithm="nvls",
        version="2.18.5",
    ),
    Curve(
        "azure_nd_h200_v5",
        "Azure ND H200 v5 (8x H200 SXM), NVLS forced, one process driving 8 GPUs",
        f"{_AZURE}, Azure_Results/ND_H200_v5_results.md @7f20e5fa3b2f9a46d8404af1f6fb14b049d6d5cc, re-checked",
        "A2.3",
        _H200 + ", Intel Xeon Platinum 8480C",
        "2.20.5",
        "one process, -g 8 (NCCL_ALGO=NVLS all_reduce_perf -b 8 -e 8G -f 2 -g 8 -n 40)",
        "NCCL_ALGO=NVLS",
        "in-place",
        "dgx_h100",
        1,
        _busbw([
            (1 * KiB, 0.06), (2 * KiB, 0.12), (4 * KiB, 0.23), (8 * KiB, 0.47), (16 * KiB, 0.93),
            (32 * KiB, 1.84), (64 * KiB, 3.72), (128 * KiB, 7.39), (256 * KiB, 14.75), (512 * KiB, 29.38),
            (1 * MiB, 52.96), (2 * MiB, 88.78), (4 * MiB, 138.44), (8 * MiB, 181.94), (16 * MiB, 240.41),
            (32 * MiB, 300.91), (64 * MiB, 368.11), (128 * MiB, 412.45), (256 * MiB, 432.24),
            (512 * MiB, 442.72), (1 * GiB, 467.58), (2 * GiB, 472.57), (4 * GiB, 477.41), (8 * GiB, 479.98),
        ]),
        algorithm="nvls",
        version="2.20.5",
        notes=_H200_NOTE,
    ),
    Curve(
        "h100_nccl_tests_290",
        "8x H100 SXM, NCCL's choice (NVLS), one process driving 8 GPUs",
        "https://github.com/NVIDIA/nccl-tests/issues/290 (shahizat, 2025; AddyLaddy 2025-03-03: '476GB/s looks "
        "to be in the expected range for H100')",
        "A2.1 (a)",
        _H100,
        _NOT_SHOWN,
        "one process, -g 8 (nGpus 8, 128 MB-4 GB, iters 2)",
        "",
        "out-of-place",
        "dgx_h100",
        1,
        _rows([
            (134217728, 613.3, 382.99), (268435456, 1139.2, 412.35), (536870912, 2175.8, 431.81),
            (1073741824, 4038.8, 465.25), (2147483648, 8020.3, 468.57), (4294967296, 15870.0, 473.6),
        ]),
        notes="NCCL release not printed: simnet's default release",
    ),
    Curve(
        "h100_digitalocean_2gpu",
        "2 H100 SXM of one NVSwitch server, one process driving 2 GPUs",
        "public GitHub Markdown 'NCCL Guide for DigitalOcean Bare Metal Machines' (host am4g2r31bm1); "
        "repository not exposed by the stored copy (search index id 16230771796)",
        "A2.2",
        "2 of 8 H100 80GB HBM3 SXM, NVSwitch",
        _NOT_SHOWN,
        "one process, -g 2 (all_reduce_perf -b 1K -e 1G -f 2)",
        "",
        "out-of-place",
        "dgx_h100",
        1,
        _rows([
            (1024, 15.75, 0.07), (2048, 14.16, 0.14), (4096, 13.1, 0.31), (8192, 12.32, 0.66),
            (16384, 12.17, 1.35), (32768, 12.68, 2.58), (65536, 14.05, 4.67), (131072, 15.62, 8.39),
            (262144, 17.68, 14.83), (524288, 17.23, 30.43), (1048576, 26.3, 39.88), (2097152, 30.67, 68.38),
            (4194304, 35.13, 119.39), (8388608, 47.86, 175.26), (16777216, 73.28, 228.94),
            (33554432, 127.7, 262.68), (67108864, 223.4, 300.35), (134217728, 415.0, 323.41),
            (268435456, 792.7, 338.64), (536870912, 1541.7, 348.22), (1073741824, 2996.1, 358.38),
        ]),
        gpus_per_node=2,
        notes="the template's GPUs 2-7 removed: NCCL sees two GPUs on the NVSwitch; NCCL release not printed",
    ),
    Curve(
        "h200_stas00_nccl_tests",
        "8x H200 SXM, NCCL's choice, nccl-tests built against PyTorch's NCCL 2.30.7",
        _STAS,
        "A2.4 (ii)",
        _H200,
        "2.30.7",
        "one process (nccl-tests built with MPI=0)",
        "",
        "out-of-place",
        "dgx_h100",
        1,
        _busbw([
            (32 * KiB, 3.20), (64 * KiB, 6.26), (128 * KiB, 12.40), (256 * KiB, 24.63), (512 * KiB, 48.30),
            (1 * MiB, 72.45), (2 * MiB, 91.48), (4 * MiB, 139.97), (8 * MiB, 182.03), (16 * MiB, 242.45),
            (32 * MiB, 298.44), (64 * MiB, 369.82), (128 * MiB, 411.21), (256 * MiB, 442.27),
            (512 * MiB, 455.82), (1 * GiB, 464.00), (2 * GiB, 468.31), (4 * GiB, 473.10), (8 * GiB, 475.16),
            (16 * GiB, 480.70),
        ]),
        version="2.30.7",
        notes=_H200_NOTE + "; the source's 'nccl-tests' column, beside its PyTorch benchmark",
    ),
    Curve(
        "h200_stas00_latency",
        "8x H200 SXM, NCCL's choice, per-call time of 1000 calls (nccl-tests -I 1), NCCL 2.30.7",
        _STAS + ", 'How the latency is measured'",
        "A2.4 (ii), latency table",
        _H200,
        "2.30.7",
        "one process, -n 1000 -w 200 -I 1 (per-iteration timing)",
        "",
        "in-place",
        "dgx_h100",
        1,
        tuple(Point(size, size / (time_us * 1e-6) * busbw_factor("allreduce", 8) / 1e9, time_us)
              for size, time_us in ((1 * KiB, 18.2), (32 * KiB, 20.4), (256 * KiB, 21.0), (1 * MiB, 27.8))),
        version="2.30.7",
        notes=_H200_NOTE + "; busbw computed from the printed median time",
    ),
    Curve(
        "h100_blog_default",
        "8x H100 SXM, NCCL's choice, NCCL 2.30.7 built from source, one process driving 8 GPUs",
        _BLOG,
        "A2.5",
        _H100,
        "2.30.7",
        "one process, -g 8 (all_reduce_perf -b 256 -e 1G -f 2 -g 8)",
        "",
        "in-place",
        "dgx_h100",
        1,
        (Point(32 * MiB, 289.0), Point(128 * MiB, 399.0), Point(4 * GiB, 475.0, 15808.0)),
        version="2.30.7",
    ),
    Curve(
        "h100_blog_ring",
        "8x H100 SXM, ring forced (protocol free), NCCL 2.30.7, one process driving 8 GPUs",
        _BLOG,
        "A2.5",
        _H100,
        "2.30.7",
        "one process, -g 8",
        "NCCL_ALGO=Ring",
        "in-place",
        "dgx_h100",
        1,
        (Point(64 * KiB, 65536 / 50e-6 * 1.75 / 1e9, 50.0), Point(1 * MiB, MiB / 61e-6 * 1.75 / 1e9, 61.0),
         Point(8 * MiB, 186.0, 79.0), Point(32 * MiB, 279.0), Point(128 * MiB, 333.0),
         Point(4 * GiB, 366.0, 20537.0)),
        algorithm="nccl_ring",
        params=_AUTO,
        version="2.30.7",
        notes="the post says NCCL picks LL at 64 KiB-8 MiB; 32 MiB-4 GiB are its 'best ring'; busbw of the first "
              "two sizes computed from the printed time",
    ),
    Curve(
        "h100_blog_ring_simple",
        "8x H100 SXM, ring and Simple forced, NCCL 2.30.7, one process driving 8 GPUs",
        _BLOG,
        "A2.5",
        _H100,
        "2.30.7",
        "one process, -g 8",
        "NCCL_ALGO=Ring NCCL_PROTO=Simple",
        "in-place",
        "dgx_h100",
        1,
        (Point(64 * KiB, 65536 / 76e-6 * 1.75 / 1e9, 76.0), Point(1 * MiB, MiB / 112e-6 * 1.75 / 1e9, 112.0),
         Point(8 * MiB, 105.0, 140.0)),
        algorithm="nccl_ring",
        params=(("protocol", "simple"),),
        version="2.30.7",
        notes="busbw of the first two sizes computed from the printed time",
    ),
    Curve(
        "h100_nccl_1455_ring",
        "8x H100 SXM, ring forced, 2-4 GiB",
        "https://github.com/NVIDIA/nccl/issues/1455 (shh2000, 2024-09-19): 'when using ALGO=RING, busbw is about "
        "365-370 GBps when gpus from 2 to 8'",
        "A6",
        _H100,
        _NOT_SHOWN,
        "NCCL_ALGO=RING all_reduce_perf -b 2G -e 4G -f 2 -g 8",
        "NCCL_ALGO=Ring",
        "out-of-place",
        "dgx_h100",
        1,
        (Point(4 * GiB, 367.5),),
        algorithm="nccl_ring",
        params=_AUTO,
        notes="the midpoint of '365-370 GBps', at the sweep's largest size",
    ),
    Curve(
        "h100_nccl_tests_309_single",
        "8x H100 SXM (Dell XE9680), NCCL's choice, peak of an 8 B-16 GiB sweep, NCCL 2.26.2",
        _ISSUE_309 + " (qoofyk, 2025-05): 'up to 482.12 GB/s out-of-place Bus-BW', re-checked",
        "A5.1",
        _H100,
        "2.26.2",
        "one process per GPU (all_reduce_perf_mpi -b 8 -e 16g -f 2 -g 1)",
        "",
        "out-of-place",
        "dgx_h100",
        1,
        (Point(16 * GiB, 482.12),),
        version="2.26.2",
        notes="the peak of the sweep, compared at its largest size",
    ),
    Curve(
        "h100_nccl_tests_309_no_nvls",
        "8x H100 SXM (Dell XE9680), NVLS disabled, peak of an 8 B-16 GiB sweep, NCCL 2.26.2",
        _ISSUE_309 + " (qoofyk, 2025-05-23): 'Once I disable NVLS, i got 368.76 GB/s', re-checked",
        "A5.1",
        _H100,
        "2.26.2",
        "one process per GPU",
        "NCCL_NVLS_ENABLE=0",
        "out-of-place",
        "dgx_h100",
        1,
        (Point(16 * GiB, 368.76),),
        algorithm="nccl_ring",
        params=_AUTO,
        version="2.26.2",
        notes="without NVLS NCCL runs Ring/Simple at large sizes (A2.4 (iii)); the peak, at the largest size",
    ),
    Curve(
        "h200_stas00_nvls",
        "8x H200 SXM, NVLS (NCCL's choice), 8 and 16 GiB, NCCL 2.27.7",
        _STAS_SHARP,
        "A2.4 (iii), (iv)",
        _H200,
        "2.27.7",
        "one process, -g 8 (all_reduce_perf -b 16G -e 16G -g 8 -z 1)",
        "",
        "out-of-place",
        "dgx_h100",
        1,
        (Point(8 * GiB, 473.1), Point(16 * GiB, 480.0)),
        version="2.27.7",
        notes=_H200_NOTE,
    ),
    Curve(
        "h200_stas00_no_nvls",
        "8x H200 SXM, NVLS disabled (NCCL runs Ring/Simple), 8 and 16 GiB, NCCL 2.27.7",
        _STAS_SHARP,
        "A2.4 (iii), (iv)",
        _H200,
        "2.27.7",
        "one process, -g 8",
        "NCCL_NVLS_ENABLE=0",
        "out-of-place",
        "dgx_h100",
        1,
        (Point(8 * GiB, 365.6), Point(16 * GiB, 367.2)),
        algorithm="nccl_ring",
        params=_AUTO,
        version="2.27.7",
        notes=_H200_NOTE + "; the source: 'Algo RING proto SIMPLE throughout when NVLS is disabled'",
    ),
    Curve(
        "b200_gke_a4",
        "8x B200 (GKE a4-highgpu-8g), NCCL's choice, one process driving 8 GPUs",
        _GKE_A4,
        "A3.1 (a)",
        _B200,
        _NOT_SHOWN,
        "one process, -g 8 (nThread 1 nGpus 8 minBytes 8388608 maxBytes 17179869184)",
        "",
        "out-of-place",
        "dgx_b200",
        1,
        _rows([
            (8388608, 80.32, 182.77), (16777216, 110.5, 265.67), (33554432, 172.6, 340.13),
            (67108864, 280.0, 419.49), (134217728, 396.9, 591.81), (268435456, 714.7, 657.26),
            (536870912, 1335.6, 703.44), (1073741824, 2576.7, 729.25), (2147483648, 5102.4, 736.53),
            (4294967296, 10171.0, 738.97), (8589934592, 17899.0, 839.82), (17179869184, 35561.0, 845.44),
        ]),
        notes=_GKE_A4_NOTE,
    ),
    Curve(
        "b200_stas00_nvls",
        "8x B200 (AWS p6-b200.48xlarge), NVLS (chosen by AWS's tuner plugin), 8 GiB, NCCL 2.27.7",
        _STAS_SHARP + ": 8x B200 sweep over 4-8 GPUs, 'measured 2026-08-09' (stored copy 58486794893), re-checked",
        "A2.4 (iv)",
        _B200,
        "2.27.7",
        "nccl-tests all_reduce_perf at 8 GiB on 8 GPUs (command not printed for this sweep)",
        "NCCL_TUNER_PLUGIN=ofi (AWS's tuner chooses; NVLS per the source's NCCL_DEBUG_SUBSYS=INIT,TUNING log)",
        "out-of-place",
        "dgx_b200",
        1,
        (Point(8 * GiB, 838.0),),
        algorithm="nvls",
        version="2.27.7",
        notes="AWS's p6-b200 server on the DGX B200 template; the algorithm AWS's tuner chose, run as such",
    ),
    Curve(
        "b200_stas00_no_nvls",
        "8x B200 (AWS p6-b200.48xlarge), NVLS disabled, 8 GiB, NCCL 2.27.7",
        _STAS_SHARP + ": 8x B200 sweep over 4-8 GPUs, 'measured 2026-08-09' (stored copy 58486794893), re-checked",
        "A2.4 (iv)",
        _B200,
        "2.27.7",
        "nccl-tests all_reduce_perf at 8 GiB on 8 GPUs (command not printed for this sweep)",
        "NCCL_NVLS_ENABLE=0 (AWS's tuner plugin NCCL_TUNER_PLUGIN=ofi loaded)",
        "out-of-place",
        "dgx_b200",
        1,
        (Point(8 * GiB, 682.2),),
        algorithm="nccl_ring",
        params=_AUTO,
        version="2.27.7",
        notes="AWS's p6-b200 server on the DGX B200 template; without NVLS the source's runs are rings",
    ),
    Curve(
        "gb200_azure_nd_v6_tray",
        "Azure ND GB200 v6 (the 4 GPUs of one NVL72 compute tray), ring forced, one process driving 4 GPUs",
        f"{_AZURE}, Azure_Results/ND_GB200_v6_results.md @2a370be6de9586d365feed77e014a73f25198f4d ('NCCL AllReduce "
        "(Ring algorithm) tests in-place'), re-checked; Azure/AI-benchmarking-guide#7 (avnf, 2025-04-11: 4 GPUs "
        "per GB200 host)",
        "A2.3",
        "4 GB200 185GB of one compute tray, NVLink5 to the rack's NVSwitches, ARM Neoverse-V2",
        "2.25.1",
        "one process, -g 4 (NCCL_ALGO=Ring all_reduce_perf -b 8 -e 8G -f 2 -g 4 -n 40)",
        "NCCL_ALGO=Ring",
        "in-place",
        "gb200_nvl72",
        1,
        _busbw([
            (1 * KiB, 0.10), (2 * KiB, 0.19), (4 * KiB, 0.38), (8 * KiB, 0.76), (16 * KiB, 1.46),
            (32 * KiB, 2.88), (64 * KiB, 5.71), (128 * KiB, 11.29), (256 * KiB, 22.41), (512 * KiB, 44.07),
            (1 * MiB, 80.48), (2 * MiB, 110.43), (4 * MiB, 146.27), (8 * MiB, 253.46), (16 * MiB, 331.09),
            (32 * MiB, 422.62), (64 * MiB, 550.73), (128 * MiB, 574.19), (256 * MiB, 593.53),
            (512 * MiB, 618.74), (1 * GiB, 646.87), (2 * GiB, 666.63), (4 * GiB, 673.06), (8 * GiB, 679.61),
        ]),
        algorithm="nccl_ring",
        params=_AUTO,
        version="2.25.1",
        gpus_per_node=4,
        notes="the GB200 NVL72 template's first compute tray (GPUs 0-3), the other 68 GPUs removed: the VM sees "
              "its tray's 4 GPUs on the rack's NVLink switches",
    ),
    Curve(
        "gb200_coreweave_rack",
        "GB200 NVL72, one rack (72 GPUs), NCCL's choice, NCCL 2.26.2",
        "https://github.com/coreweave/nccl-tests, README.md 'Expected Performance / GB200 / Single Rack' "
        "@0120901ac7a1e6425640a57540e142070452f8a2 ('The following runs used NCCL 2.26.2'), re-checked",
        "A3.2 (a)",
        "GB200 NVL72: 72 B200 GPUs (36 GB200 superchips) on 18 compute trays, one NVLink5 domain",
        "2.26.2",
        "one process per GPU (72 ranks, Rank 71 on device 3 of its tray; the repository's Slurm/MPI Operator jobs)",
        "",
        "out-of-place",
        "gb200_nvl72",
        1,
        _rows([
            (536870912, 1806.7, 586.06), (1073741824, 3108.8, 681.17), (2147483648, 5589.1, 757.78),
            (4294967296, 10094.0, 839.16), (8589934592, 20299.0, 834.57),
        ]),
        version="2.26.2",
        gpus_per_node=72,
        notes="the rack is one NVLink domain: one node to NCCL (MNNVL) and one server to simnet, its 18 NVLink "
              "switch chips one reduce-capable crossbar; the source prints the sizes from 512 MiB only",
    ),
    Curve(
        "h100_309_2_nodes",
        "2 x 8 H100 (Dell XE9680, 8 CX-7 NDR each), NCCL's choice, NCCL 2.26.2",
        _ISSUE_309 + " (qoofyk, 2025-05), re-checked",
        "A5.1 (a)",
        "2 servers x 8 H100 SXM, 8x ConnectX-7 IB 400 Gb/s per server",
        "2.26.2",
        "one process per GPU (mpirun --np 16 all_reduce_perf_mpi -b 8 -e 16g -f 2 -g 1)",
        "",
        "out-of-place",
        "dgx_h100",
        2,
        _rows([
            (1024, 29.75, 0.06), (2048, 28.19, 0.14), (4096, 30.24, 0.25), (8192, 32.12, 0.48),
            (16384, 32.74, 0.94), (32768, 34.1, 1.8), (65536, 33.84, 3.63), (131072, 38.77, 6.34),
            (262144, 48.67, 10.1), (524288, 77.69, 12.65), (1048576, 71.93, 27.33), (2097152, 76.24, 51.58),
            (4194304, 94.38, 83.33), (8388608, 132.6, 118.57), (16777216, 185.4, 169.67),
            (33554432, 267.9, 234.81), (67108864, 466.1, 269.98), (134217728, 748.3, 336.29),
            (268435456, 1282.8, 392.35), (536870912, 2357.6, 426.97), (1073741824, 4484.9, 448.9),
            (2147483648, 8729.8, 461.24), (4294967296, 17262.0, 466.52), (8589934592, 34381.0, 468.46),
            (17179869184, 68652.0, 469.21),
        ]),
        version="2.26.2",
        notes="HGX servers on the DGX H100 template (same GPUs, NVSwitch and NIC count); fabric: rail-optimised "
              "leaf-spine",
    ),
    Curve(
        "h100_309_4_nodes_vm",
        "4 x 8 H100 (VMs, NCCL_TOPO_FILE given), NCCL's choice, NCCL 2.26.2",
        _ISSUE_309 + " (qoofyk, 2025-05-22), re-checked",
        "A5.1 (b)",
        "4 servers (VMs) x 8 H100 SXM, 8x ConnectX-7 IB 400 Gb/s per server",
        "2.26.2",
        "one process per GPU (mpirun --np 32 ... -g 1)",
        "NCCL_TOPO_FILE (a hand-made topology of the VMs), NCCL_NET_GDR_LEVEL=1",
        "out-of-place",
        "dgx_h100",
        4,
        _rows([
            (1024, 39.79, 0.05), (2048, 39.59, 0.1), (4096, 42.18, 0.19), (8192, 46.84, 0.34),
            (16384, 48.51, 0.65), (32768, 49.13, 1.29), (65536, 50.83, 2.5), (131072, 55.87, 4.55),
            (262144, 67.82, 7.49), (524288, 72.88, 13.94), (1048576, 82.17, 24.73), (2097152, 191.3, 21.24),
            (4194304, 151.1, 53.77), (8388608, 217.3, 74.78), (16777216, 259.6, 125.23),
            (33554432, 376.0, 172.92), (67108864, 579.1, 224.53), (134217728, 990.7, 262.48),
            (268435456, 1768.0, 294.16), (536870912, 3109.0, 334.58), (1073741824, 5808.8, 358.14),
            (2147483648, 11508.0, 361.56), (4294967296, 22890.0, 363.54), (8589934592, 45606.0, 364.93),
            (17179869184, 90986.0, 365.84),
        ]),
        version="2.26.2",
        notes="VMs modelled as bare-metal DGX H100 servers",
    ),
    Curve(
        "h100_309_8_nodes",
        "8 x 8 H100 (NDR 400 Gb/s), NCCL's choice",
        _ISSUE_309 + " (gj-aion, 2025-06-18)",
        "A5.1 (c)",
        "8 servers x 8 H100, IB 400 Gb/s",
        _NOT_SHOWN,
        "one process per GPU (mpirun -np 64 -N 8 all_reduce_perf -b 1M -e 8G -f 2 -g 1)",
        "",
        "out-of-place",
        "dgx_h100",
        8,
        _rows([
            (1048576, 117.0, 17.64), (2097152, 143.4, 28.78), (4194304, 203.8, 40.52), (8388608, 1272.4, 12.98),
            (16777216, 378.1, 87.36), (33554432, 509.6, 129.63), (67108864, 718.1, 184.0),
            (134217728, 1159.1, 227.97), (268435456, 1955.1, 270.31), (536870912, 3517.3, 300.51),
            (1073741824, 7370.5, 286.81), (2147483648, 13252.0, 319.03), (4294967296, 26438.0, 319.83),
            (8589934592, 52733.0, 320.7),
        ]),
        notes="NCCL release not printed: simnet's default release",
    ),
    Curve(
        "h100_309_2_of_8_nodes",
        "2 of the same 8 servers, NCCL's choice",
        _ISSUE_309 + " (gj-aion, 2025-06-18)",
        "A5.1 (d)",
        "2 servers x 8 H100, IB 400 Gb/s",
        _NOT_SHOWN,
        "one process per GPU (-g 1)",
        "",
        "out-of-place",
        "dgx_h100",
        2,
        _rows([
            (1048576, 93.25, 21.08), (2097152, 94.22, 41.73), (4194304, 110.9, 70.91), (8388608, 151.6, 103.78),
            (16777216, 201.6, 156.07), (33554432, 274.8, 228.91), (67108864, 477.2, 263.66),
            (134217728, 750.7, 335.25), (268435456, 1296.2, 388.31), (536870912, 2376.5, 423.57),
            (1073741824, 4497.4, 447.65), (2147483648, 8766.9, 459.29), (4294967296, 17290.0, 465.77),
            (8589934592, 34508.0, 466.73),
        ]),
        notes="NCCL release not printed: simnet's default release",
    ),
    Curve(
        "h100_309_4_of_8_nodes",
        "4 of the same 8 servers, NCCL's choice",
        _ISSUE_309 + " (gj-aion, 2025-06-18)",
        "A5.1 (e)",
        "4 servers x 8 H100, IB 400 Gb/s",
        _NOT_SHOWN,
        "one process per GPU (mpirun -np 32 -N 8 all_reduce_perf -b 1M -e 8G -f 2 -g 1)",
        "",
        "out-of-place",
        "dgx_h100",
        4,
        _rows([
            (1048576, 317.0, 6.41), (2097152, 226.8, 17.91), (4194304, 231.3, 35.13), (8388608, 239.0, 68.01),
            (16777216, 304.5, 106.75), (33554432, 413.7, 157.14), (67108864, 624.1, 208.34),
            (134217728, 1055.3, 246.41), (268435456, 2219.3, 234.35), (536870912, 3600.8, 288.88),
            (1073741824, 6460.4, 322.02), (2147483648, 12893.0, 322.71), (4294967296, 25605.0, 324.99),
            (8589934592, 51285.0, 324.52),
        ]),
        notes="NCCL release not printed: simnet's default release",
    ),
    Curve(
        "h100_309_8_nodes_ctas24",
        "8 x 8 H100, NCCL's choice with 24 CTAs",
        _ISSUE_309 + " (gj-aion, 2025-06-18)",
        "A5.1 (f)",
        "8 servers x 8 H100, IB 400 Gb/s",
        _NOT_SHOWN,
        "one process per GPU (-g 1)",
        "NCCL_MIN_CTAS=24 NCCL_IB_QPS_PER_CONNECTION=2",
        "out-of-place",
        "dgx_h100",
        8,
        _rows([
            (1048576, 127.0, 16.26), (2097152, 125.8, 32.81), (4194304, 180.9, 45.64), (8388608, 889.1, 18.58),
            (16777216, 510.5, 64.71), (33554432, 621.2, 106.34), (67108864, 891.7, 148.16),
            (134217728, 1395.4, 189.36), (268435456, 2199.4, 240.29), (536870912, 3869.0, 273.19),
            (1073741824, 5640.1, 374.81), (2147483648, 10977.0, 385.17), (4294967296, 21882.0, 386.42),
            (8589934592, 43211.0, 391.37),
        ]),
        params=(("channels", 24),),
        notes="NCCL_MIN_CTAS=24 as 24 channels for rings and trees (NVLS channels are not a simnet parameter); "
              "queue pairs per connection not modelled; NCCL release not printed",
    ),
    Curve(
        "h100_309_2_nodes_ring_ctas24",
        "2 of the same servers, ring forced, 24 CTAs",
        _ISSUE_309 + " (gj-aion, 2025-06-18): 'the busbw drops to sub 400 GB/s, which is the IB limit of our network'",
        "A5.1 (g)",
        "2 servers x 8 H100, IB 400 Gb/s",
        _NOT_SHOWN,
        "one process per GPU (-g 1)",
        "NCCL_ALGO=Ring NCCL_MIN_CTAS=24 NCCL_IB_QPS_PER_CONNECTION=2",
        "out-of-place",
        "dgx_h100",
        2,
        _rows([
            (1048576, 156.9, 12.53), (2097152, 156.6, 25.1), (4194304, 178.1, 44.15), (8388608, 177.8, 88.44),
            (16777216, 199.3, 157.83), (33554432, 274.2, 229.42), (67108864, 433.8, 290.04),
            (134217728, 795.8, 316.24), (268435456, 1355.9, 371.22), (536870912, 2649.9, 379.87),
            (1073741824, 5236.2, 384.49), (2147483648, 10340.0, 389.4), (4294967296, 20575.0, 391.39),
            (8589934592, 41015.0, 392.69),
        ]),
        algorithm="nccl_ring",
        params=(("protocol", "auto"), ("channels", 24)),
        notes="NCCL_MIN_CTAS=24 as 24 channels; NCCL release not printed",
    ),
    Curve(
        "dgx_h100_2_nodes_cnh",
        "2 x DGX H100, NCCL's choice, one process per server driving 8 GPUs",
        "public GitHub Markdown logs (hosts dgx-06, dgx-07, user 'cnh'); repository not exposed by the stored "
        "copies (search index ids 27038435184, 26662597992)",
        "A5.3 (b)",
        "2 DGX H100 (8 H100, 8 ConnectX-7 NDR each)",
        _NOT_SHOWN,
        "one process per server, -g 8 (mpirun -n 2 all_reduce_perf -b 8 -e 16384M -f 2 -g 8 -n 30)",
        "",
        "out-of-place",
        "dgx_h100",
        2,
        _rows([
            (1024, 39.56, 0.05), (2048, 40.22, 0.1), (4096, 40.82, 0.19), (8192, 296.5, 0.05),
            (16384, 966.6, 0.03), (32768, 1112.2, 0.06), (65536, 1656.1, 0.07), (131072, 1660.1, 0.15),
            (262144, 580.3, 0.85), (524288, 744.8, 1.32), (1048576, 764.0, 2.57), (2097152, 844.6, 4.66),
            (4194304, 1131.0, 6.95), (8388608, 2022.1, 7.78), (16777216, 1373.1, 22.91),
            (33554432, 1568.7, 40.11), (67108864, 2219.0, 56.71), (134217728, 1615.8, 155.75),
            (268435456, 3231.0, 155.78), (536870912, 3345.7, 300.87), (1073741824, 5961.9, 337.69),
            (2147483648, 9270.2, 434.35), (4294967296, 17662.0, 455.95), (8589934592, 34409.0, 468.09),
            (17179869184, 68195.0, 472.35),
        ]),
        notes="multi-millisecond outliers from 8 KiB to 1 GiB (the source's run is noisy); NCCL release not printed",
    ),
    Curve(
        "h200_nebius_2_nodes",
        "2 x 8 H200 (Nebius, InfiniBand), NCCL's choice",
        "public GitHub Markdown 'Run:ai examples on Nebius infrastructure' (job demo-nccl-hopper-8g2n); repository "
        "not exposed by the stored copy (search index id 34012719961)",
        "A5.4",
        "2 servers x 8 H200 SXM, InfiniBand (8x 400 Gb/s per server on Nebius H200 nodes, not stated in the file)",
        _NOT_SHOWN,
        "one process per GPU (16 ranks)",
        "",
        "out-of-place",
        "dgx_h100",
        2,
        _rows([
            (1073741824, 4508.0, 446.6), (2147483648, 8680.6, 463.85), (4294967296, 17054.0, 472.21),
            (8589934592, 34104.0, 472.26), (17179869184, 67369.0, 478.15),
        ]),
        notes=_H200_NOTE + "; NCCL release not printed",
    ),
    Curve(
        "b200_gke_a4_2_nodes",
        "2 x 8 B200 (GKE a4-highgpu-8g, 8 RDMA NICs each, Google's gIB plugin), NCCL's choice",
        _GKE_A4,
        "A3.1 (b)",
        "2 servers x 8 B200, 8 RDMA NICs per server (8 RDMA subnets, NCCL_IB_HCA of 8 adapters); NIC rate not stated",
        _NOT_SHOWN,
        "one process per GPU (Open MPI, nThread 1 nGpus 1, 16 ranks)",
        "NCCL_NET=gIB NCCL_CROSS_NIC=0",
        "out-of-place",
        "dgx_b200",
        2,
        _rows([
            (8388608, 158.8, 99.06), (16777216, 193.2, 162.81), (33554432, 291.0, 216.22),
            (67108864, 483.3, 260.35), (134217728, 714.1, 352.39), (268435456, 1114.8, 451.48),
            (536870912, 1808.9, 556.48), (1073741824, 3328.7, 604.82), (2147483648, 6171.1, 652.48),
            (4294967296, 12219.0, 659.09), (8589934592, 23842.0, 675.54), (17179869184, 47062.0, 684.46),
        ]),
        notes="the NICs as the DGX B200 template's 400 Gb/s ConnectX-7 at NET_BW on a rail-optimised leaf-spine "
              "(Google's RoCE fabric and gIB plugin are not modelled); NCCL release not printed (container NGC "
              "PyTorch 25.04): simnet's default release",
    ),
    Curve(
        "a100_nccl_tests_100_2_nodes",
        "2 x HGX A100, 4 HDR NICs per server, NCCL's choice, 1-8 GiB",
        "https://github.com/NVIDIA/nccl-tests/issues/100 (2022-01-17): 'the testing result can reach 91GB/s in busbw'",
        "docs/validation.md §1 (simnet.calibration.PUBLISHED)",
        "2 HGX A100 servers, 4 ConnectX-6 IB 200 Gb/s each",
        _NOT_SHOWN,
        "all_reduce_perf -b 1G -e 8G",
        "",
        "out-of-place",
        "dgx_a100",
        2,
        (Point(8 * GiB, 91.0),),
        nic_share=0.5,
        notes="four NICs per server as eight half-rate NICs (simnet's dgx_a100 has one per GPU); the peak of the "
              "sweep, at its largest size; the 2022 NCCL release predates simnet's model (2.18.3+): default release",
    ),
    Curve(
        "a100_nccl_tests_119_3_nodes",
        "3 x A100 SXM4 servers, 4 HDR NICs per server, NCCL's choice, 128 MB",
        "https://github.com/NVIDIA/nccl-tests/issues/119 (Yujaeseo, 2022-11-17; sjeaugey: '96GB/s is the target, "
        "which you seem to reach')",
        "A6",
        "3 servers x 8 A100-SXM4-40GB, 4 HDR IB per server",
        _NOT_SHOWN,
        "one process per GPU (mpirun -np 24 all_reduce_perf -b 8 -e 128M -g 1, 1 MB steps)",
        "",
        "out-of-place",
        "dgx_a100",
        3,
        (Point(131072008, 96.45, 2604.6),),
        nic_share=0.5,
        notes="four NICs per server as eight half-rate NICs; the 2022 NCCL release predates simnet's model: "
              "default release",
    ),
)
"""Every published all-reduce curve simnet models, single-server first."""

NOT_MODELLED: tuple[tuple[str, str], ...] = (
    (
        "8x B300 (NVIDIA/nccl#2140; 16 servers in nccl#2035): notes A6",
        "no B300 template (Blackwell Ultra); #2140 gives no size",
    ),
    (
        ("GB200 NVL72, 2 and 20 racks (coreweave/nccl-tests README), 32 trays over 2 racks "
         "(oracle-quickstart/oci-hpc-oke), NVL4/NVL8 partitions (nccl#1801): notes A3.2 (b, c), A3.3 (a), A6"),
        ("racks joined by Quantum-X800 InfiniBand with SHARP (CoreWeave), OCI's RoCE cluster network, or "
         "partitions over IB: fabric and SHARP aggregation not public enough to model"),
    ),
    (
        "NVIDIA/nccl-tests#290 2-node runs (notes A2.1 (b), (c))",
        ("a misconfigured system by the thread's own account (HCAs missing from the list, ~90-155 GB/s against the "
         "~370-390 expected)"),
    ),
    (
        ("GCP A3 Mega, 2 x 8 H100 over GPUDirect-TCPXO (lessizzmore/create-a3mega-ztan-fork, ztan-NCCL-test-result "
         "@02dd8f455c43ced1cf442ef29334bda97149264b; notes A5.2)"),
        "host-mediated TCPXO NICs: no template and no public NCCL constants for them",
    ),
    (
        "2 x DGX H100 with 2 GPUs each (notes A5.3 (a))",
        "partial servers across nodes: simnet's NCCL graphs are derived for whole servers",
    ),
    (
        "CoreWeave 8 x 8 H100 with IB SHARP, NCCL_ALGO=COLLNETCHAIN (notes A3.2 (d))",
        "the SHARP fabric's switches and aggregation rate are not public",
    ),
    (
        ("OCI 2 x BM.GPU4.8 A100 over RoCE SR-IOV (notes A3.3 (b)), AWS EFA runs (notes A2.4 (vi), A2.5), GKE "
         "single-NIC H200 pair (notes A5.5)"),
        "NICs and fabrics without a simnet template (16 RoCE VFs per server, EFA, one GPU and NIC per pod)",
    ),
    ("stas00 all_reduce_bench.py tables (notes A2.4 (i), (v))", "PyTorch's harness, not nccl-tests"),
    (
        "GPU-count sweeps at one size (notes A2.4 (iv) at 4-7 GPUs, A2.6)",
        "not size curves; A2.6 does not name the GPU",
    ),
    (
        ("H800, H20 (notes A4), nccl#1221, #1031, #1368 (RoCE), #1469, #652 (small sizes only), nccl-tests#252 "
         "(hardware not stated), nccl#1047 (reduce-scatter)"),
        "export variants with other NVLink counts, fabrics without a template, missing hardware, or not all-reduce",
    ),
)
"""Public curves found and not compared, with the reason."""


def curve_graph(curve: Curve) -> nx.DiGraph:
    """The calibrated machine of `curve`: one server (its first ``gpus_per_node`` GPUs) or a PXN cluster."""
    if curve.single_server:
        graph = calibrated_node(curve.machine)
        graph.remove_nodes_from(gpus(graph)[curve.gpus_per_node:])
        return graph
    return calibrated_cluster(curve.machine, curve.nodes, nic_share=curve.nic_share, pxn=True)


class Run(NamedTuple):
    """One simulated point: simnet's time, NCCL's modelled time (seconds) and what ran."""

    time_s: float
    model_time_s: float
    algorithm: str
    protocol: str
    channels: int | None
    transfers: int


def _ring_transfers(nranks: int, size_bytes: int, params: Mapping) -> int:
    """Transfers of :func:`simnet.algorithms.nccl.nccl_ring_allreduce` with `params`, without building it."""
    slice_bytes = PROTOCOLS[params["protocol"]].ring_slice_bytes
    channels = min(int(params["channels"]), size_bytes)
    pieces = 0
    for part in split_bytes(size_bytes, channels):
        for block in split_bytes(part, nranks):
            pieces += min(int(params.get("max_pieces", 64)), max(1, -(-block // slice_bytes)))
    return 2 * (nranks - 1) * pieces


def _nvls_transfers(nranks: int, size_bytes: int, params: Mapping) -> int:
    """Transfers of :func:`simnet.algorithms.nccl.nvls_allreduce` with `params`, without building it.

    Each chunk (at most ``max_pieces`` of 128 KiB per part) is ``nranks`` additions
    into the switch, the sum to the part's owner, the owner's store into the switch
    and ``nranks - 1`` multicast copies.
    """
    max_pieces = int(params.get("max_pieces", 64))
    chunks = sum(min(max_pieces, max(1, -(-part // NVLS_CHUNK_BYTES))) for part in split_bytes(size_bytes, nranks))
    return (2 * nranks + 1) * chunks


_COUNTED = {"ring": _ring_transfers, "nvls": _nvls_transfers}
"""Schedules counted before they are built, by NCCL algorithm (the large ones of the curves)."""


@dataclass
class CurveSimulator:
    """Simulates the points of curves, each distinct run once (networks and runs are shared between curves).

    Parameters
    ----------
    max_transfers : int, optional
        Skip points whose schedule has more transfers (their rows keep NaN times);
        ``None`` simulates everything.
    """

    max_transfers: int | None = None
    _networks: dict = field(default_factory=dict, repr=False)
    _tunings: dict = field(default_factory=dict, repr=False)
    _params: dict = field(default_factory=dict, repr=False)
    _runs: dict = field(default_factory=dict, repr=False)

    def network(self, curve: Curve) -> Network:
        """The :class:`~simnet.network.Network` of `curve`'s machine (built once per machine)."""
        key = (curve.machine, curve.nodes, curve.gpus_per_node, curve.nic_share)
        if key not in self._networks:
            self._networks[key] = Network(curve_graph(curve))
        return self._networks[key]

    def _tuning(self, curve: Curve):
        key = (curve.machine, curve.nodes, curve.gpus_per_node, curve.nic_share, curve.version)
        if key not in self._tunings:
            self._tunings[key] = tune_model(*graphs_from_network(self.network(curve), curve.version), curve.version)
        return self._tunings[key]

    def resolved(self, curve: Curve, size_bytes: int) -> dict:
        """The parameters simnet runs at `size_bytes` (NCCL's choices filled in by the registry record)."""
        key = (curve.machine, curve.nodes, curve.gpus_per_node, curve.nic_share, curve.algorithm, curve.params,
               curve.version, size_bytes)
        if key not in self._params:
            record = ALGORITHMS[curve.algorithm]
            self._params[key] = record.resolve(self.network(curve), size_bytes,
                                               {**dict(curve.params), "version": curve.version})
        return self._params[key]

    def run(self, curve: Curve, size_bytes: int) -> Run | None:
        """simnet and NCCL's model at one size (``None`` when over :attr:`max_transfers`).

        Rings and NVLS are counted before they are built (:func:`_ring_transfers`,
        :func:`_nvls_transfers`); other schedules, tens of thousands of transfers at
        most here, are built to be counted.
        """
        params = self.resolved(curve, size_bytes)
        key = (curve.machine, curve.nodes, curve.gpus_per_node, curve.nic_share, curve.algorithm, size_bytes,
               json.dumps(params, sort_keys=True))
        if key in self._runs:
            return self._runs[key]
        algorithm = params.get("nccl_algorithm", NCCL_NAMES.get(curve.algorithm))
        budget = math.inf if self.max_transfers is None else self.max_transfers
        if algorithm in _COUNTED and _COUNTED[algorithm](curve.ranks, size_bytes, params) > budget:
            return None
        network = self.network(curve)
        schedule = ALGORITHMS[curve.algorithm].build(network.size, size_bytes, **params)
        if len(schedule.transfers) > budget:
            return None
        protocol = params.get("protocol", "simple")
        model = algo_time_s(self._tuning(curve), "allreduce", algorithm, protocol, size_bytes)
        run = Run(simulate(network, schedule).time_s, model, algorithm, protocol, params.get("channels"),
                  len(schedule.transfers))
        self._runs[key] = run
        return run


def ring_against_model(nodes: int, size_bytes: int, version: str = NCCL_RELEASE) -> dict:
    """simnet's ``nccl_ring`` and NCCL's Ring model on `nodes` calibrated DGX H100 servers.

    The servers are :func:`~simnet.calibration.calibrated_cluster` ``("dgx_h100", nodes,
    pxn=True)`` (a rail-optimised leaf-spine, one leaf per rail); the ring is
    ``nccl_ring`` with ``protocol: auto`` and NCCL's launch channels, resolved by the
    registry record.

    Returns
    -------
    dict
        ``params`` (as given: ``protocol: auto`` and the release), ``resolved`` (the
        protocol and channels chosen for `size_bytes`), ``transfers``, ``time_s``,
        ``busbw_GBps``, ``model_time_s``, ``model_busbw_GBps``, ``wall_s`` (building
        and simulating).
    """
    network = Network(calibrated_cluster("dgx_h100", nodes, pxn=True))
    record = ALGORITHMS["nccl_ring"]
    params = {"protocol": "auto", "version": version}
    resolved = record.resolve(network, size_bytes, params)
    began = time.perf_counter()
    schedule = record.build(network.size, size_bytes, **resolved)
    time_s = simulate(network, schedule).time_s
    wall_s = time.perf_counter() - began
    tuning = tune_model(*graphs_from_network(network, version), version)
    model_s = algo_time_s(tuning, "allreduce", "ring", resolved["protocol"], size_bytes)
    factor = busbw_factor("allreduce", network.size) / 1e9
    return {
        "params": params,
        "resolved": resolved,
        "transfers": len(schedule.transfers),
        "time_s": time_s,
        "busbw_GBps": size_bytes / time_s * factor,
        "model_time_s": model_s,
        "model_busbw_GBps": size_bytes / model_s * factor,
        "wall_s": wall_s,
    }


def _busbw_GBps(size_bytes: int, time_s: float, nranks: int) -> float:
    return size_bytes / time_s * busbw_factor("allreduce", nranks) / 1e9


def curve_rows(curves: Sequence[Curve] = CURVES, simulator: CurveSimulator | None = None) -> pd.DataFrame:
    """One row per published point: published, simnet and NCCL-model busbw (GB/s), times, errors.

    Parameters
    ----------
    curves : sequence of Curve
        The curves (default :data:`CURVES`).
    simulator : CurveSimulator, optional
        Shares runs between calls; a fresh one simulates every point.

    Returns
    -------
    pandas.DataFrame
        Columns ``curve``, ``single_server``, ``size_bytes``, ``published_GBps``,
        ``published_us`` (NaN when not printed), ``simnet_GBps``, ``simnet_us``,
        ``model_GBps`` (NCCL's ``ncclTopoGetAlgoTime`` for the algorithm and protocol
        simnet runs), ``error`` and ``model_error`` (relative to the published busbw),
        ``runs`` (algorithm/protocol and channels) and ``transfers``. Points not
        simulated (over the simulator's ``max_transfers``) have NaN simnet columns.
    """
    simulator = CurveSimulator() if simulator is None else simulator
    rows = []
    for curve in curves:
        for point in curve.points:
            run = simulator.run(curve, point.size_bytes)
            row = {
                "curve": curve.key,
                "single_server": curve.single_server,
                "size_bytes": point.size_bytes,
                "published_GBps": point.busbw_GBps,
                "published_us": math.nan if point.time_us is None else point.time_us,
            }
            if run is None:
                row.update(simnet_GBps=math.nan, simnet_us=math.nan, model_GBps=math.nan, runs="", transfers=0)
            else:
                channels = "" if run.channels is None else f" x{run.channels}"
                row.update(
                    simnet_GBps=_busbw_GBps(point.size_bytes, run.time_s, curve.ranks),
                    simnet_us=run.time_s * 1e6,
                    model_GBps=_busbw_GBps(point.size_bytes, run.model_time_s, curve.ranks),
                    runs=f"{run.algorithm}/{run.protocol}{channels}",
                    transfers=run.transfers,
                )
            rows.append(row)
    frame = pd.DataFrame(rows)
    frame["error"] = frame["simnet_GBps"] / frame["published_GBps"] - 1
    frame["model_error"] = frame["model_GBps"] / frame["published_GBps"] - 1
    return frame


def summary(rows: pd.DataFrame, curves: Sequence[Curve] = CURVES) -> pd.DataFrame:
    """Per curve: median |error| at ≥ 1 MiB and below, max |error| at ≥ 1 GiB and (multi-server) ≥ 256 MiB.

    Returns
    -------
    pandas.DataFrame
        One row per curve: ``curve``, ``servers``, ``points``, ``median_ge_1MiB``,
        ``median_lt_1MiB``, ``max_ge_256MiB``, ``max_ge_1GiB`` (fractions; NaN
        where the curve has no such point), and the same medians for NCCL's model.
    """
    out = []
    for curve in curves:
        mine = rows[rows["curve"] == curve.key]
        big, small = mine[mine["size_bytes"] >= MiB], mine[mine["size_bytes"] < MiB]
        out.append({
            "curve": curve.key,
            "servers": curve.nodes,
            "points": len(mine),
            "median_ge_1MiB": _median_abs(big["error"]),
            "median_lt_1MiB": _median_abs(small["error"]),
            "max_ge_256MiB": _max_abs(mine[mine["size_bytes"] >= 256 * MiB]["error"]),
            "max_ge_1GiB": _max_abs(mine[mine["size_bytes"] >= GiB]["error"]),
            "model_median_ge_1MiB": _median_abs(big["model_error"]),
            "model_median_lt_1MiB": _median_abs(small["model_error"]),
        })
    return pd.DataFrame(out)


BARS = {
    "median_ge_1MiB": 0.10,
    "median_lt_1MiB": 0.25,
    "hopper_ge_1GiB": 0.05,
    "max_ge_256MiB": 0.10,
}
"""Issue 16's bars on |busbw error|: single-server curves' medians at ≥ 1 MiB and below 1 MiB,
8 x H100-class (NVLS and ring) points at ≥ 1 GiB, every multi-server point at ≥ 256 MiB."""


def bar_status(row: Mapping) -> str:
    """``"holds"``, ``"misses"`` or ``"n/a"``: a :func:`summary` row against its bar.

    Single-server curves: both medians (a curve without points below 1 MiB is
    judged on the other). Multi-server curves: every point at ≥ 256 MiB (``"n/a"``
    without such points).
    """
    keys = ("median_ge_1MiB", "median_lt_1MiB") if row["servers"] == 1 else ("max_ge_256MiB",)
    values = [row[key] for key in keys if not math.isnan(row[key])]
    if not values:
        return "n/a"
    return "holds" if all(row[key] <= BARS[key] for key in keys if not math.isnan(row[key])) else "misses"


FAMILIES = (
    "A100, one server",
    "H100/H200, one server, NVLS or NCCL's choice",
    "H100/H200, one server, ring forced",
    "B200/GB200, one server or NVL72 rack",
    "A100, several servers",
    "H100/H200, several servers",
    "B200, several servers",
)
"""The curve families of the validation summary, in its order (:func:`family`)."""

_GENERATION = {"dgx_a100": "A100", "dgx_h100": "H100/H200", "dgx_b200": "B200", "gb200_nvl72": "GB200"}


def family(curve: Curve) -> str:
    """The family of `curve` in :data:`FAMILIES`.

    GPU generation, one server (or NVL72 rack) or several, and on one Hopper server
    whether the run was a ring (``NCCL_ALGO=Ring`` or NVLS disabled) or NVLS and
    NCCL's own choice.
    """
    generation = _GENERATION[curve.machine]
    if not curve.single_server:
        return f"{generation}, several servers"
    if generation in ("B200", "GB200"):
        return "B200/GB200, one server or NVL72 rack"
    if generation == "H100/H200":
        return "H100/H200, one server, " + ("ring forced" if curve.algorithm == "nccl_ring" else "NVLS or NCCL's choice")
    return f"{generation}, one server"


def family_summary(rows: pd.DataFrame, curves: Sequence[Curve] = CURVES) -> pd.DataFrame:
    """Per curve family: median |busbw error| of simnet's twin and of NCCL's model over its points.

    The medians pool the points of the family's curves (a long sweep weighs more
    than a single figure); NCCL's model is that of the algorithm and protocol simnet
    runs at each point.

    Parameters
    ----------
    rows : pandas.DataFrame
        :func:`curve_rows` of `curves` (or the committed table :func:`read_table`).
    curves : sequence of Curve
        The curves (default :data:`CURVES`).

    Returns
    -------
    pandas.DataFrame
        One row per family of :data:`FAMILIES` that has curves: ``family``,
        ``curves``, ``points``, ``median``, ``model_median`` (all points),
        ``median_ge_1MiB``, ``model_median_ge_1MiB``, ``median_lt_1MiB``,
        ``model_median_lt_1MiB`` (fractions; NaN without such points), ``holding``
        and ``judged`` (curves meeting their bar of :func:`bar_status`, and curves
        with a bar that applies).
    """
    stats = {record["curve"]: bar_status(record) for record in summary(rows, curves).to_dict("records")}
    keys = {name: [curve.key for curve in curves if family(curve) == name] for name in FAMILIES}
    out = []
    for name, members in keys.items():
        if not members:
            continue
        mine = rows[rows["curve"].isin(members)]
        big, small = mine[mine["size_bytes"] >= MiB], mine[mine["size_bytes"] < MiB]
        out.append({
            "family": name,
            "curves": len(members),
            "points": len(mine),
            "median": _median_abs(mine["error"]),
            "model_median": _median_abs(mine["model_error"]),
            "median_ge_1MiB": _median_abs(big["error"]),
            "model_median_ge_1MiB": _median_abs(big["model_error"]),
            "median_lt_1MiB": _median_abs(small["error"]),
            "model_median_lt_1MiB": _median_abs(small["model_error"]),
            "holding": sum(stats[key] == "holds" for key in members),
            "judged": sum(stats[key] != "n/a" for key in members),
        })
    return pd.DataFrame(out)


def _median_abs(errors: pd.Series) -> float:
    return float(np.median(np.abs(errors))) if len(errors) else math.nan


def _max_abs(errors: pd.Series) -> float:
    return float(np.max(np.abs(errors))) if len(errors) else math.nan


TABLE = Path(__file__).with_name("nccl_curves.csv")
"""The committed per-point table (:func:`curve_rows` of every point), written by ``benchmarks/nccl_curves.py``."""


def read_table(path: Path = TABLE) -> pd.DataFrame:
    """The committed table of :func:`curve_rows`, in :data:`CURVES` order."""
    frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
    frame["runs"] = frame["runs"].fillna("").astype(str)
    return frame


def describe(curve: Curve) -> str:
    """`curve` in one Markdown line: source, hardware, NCCL, launch, forced settings, simnet's run."""
    forced = curve.forced or "none (NCCL's own choice)"
    notes = f"; {curve.notes}" if curve.notes else ""
    return (f"**{curve.key}**: {curve.title}. Source: {curve.source} (notes {curve.figure}). Hardware: "
            f"{curve.hardware}. NCCL: {curve.nccl}. Launch: {curve.launch}. Forced: {forced}. Column: "
            f"{curve.column}. simnet: {curve.simnet} on {_machine(curve)}{notes}.")


@functools.cache
def _template_gpus(machine: str) -> int:
    """GPUs of the template `machine` (8 for the DGX servers, 72 for an NVL72 rack)."""
    return len(gpus(calibrated_node(machine)))


def _machine(curve: Curve) -> str:
    if curve.single_server:
        kept = "" if curve.gpus_per_node == _template_gpus(curve.machine) else f", GPUs 0-{curve.gpus_per_node - 1}"
        return f"calibrated_node('{curve.machine}'{kept})"
    share = "" if curve.nic_share == 1 else f", nic_share={curve.nic_share}"
    return f"calibrated_cluster('{curve.machine}', {curve.nodes}{share}, pxn=True)"


def label(size_bytes: int) -> str:
    """A size as nccl-tests sweeps print it: binary prefixes when exact, else bytes."""
    return format_size(size_bytes)
