"""NCCL's TUNING log lines: printed from a model, and parsed from a log.

:func:`init_table` prints the table rank 0 logs at init (``NCCL_DEBUG=INFO
NCCL_DEBUG_SUBSYS=TUNING``) in the release's own format, line for line, so that
it can be diffed with a log; :func:`decision_line` prints the per-size choice
line. :func:`parse_init_table` and :func:`parse_decision_line` read both from a
log (``host:pid:tid [dev] NCCL INFO`` prefixes and truncated lines allowed).

Formats (research notes §5.2-5.3)
    Init table (tuning.cc l.543-585 of v2.30.7-1): blocks of algorithms (2.23+:
    blocks of 3; 2.18-2.22: the two halves of 6), each with an ``Algorithm`` row
    (``" %14s   %14s   %14s |"``), a ``Protocol`` row (``" %14s |"`` for 3
    algorithms even in a shorter last block), a ``Max NThreads`` row
    (``" %14d |"``) and one row per function (``"%13s |"`` then ``"%8.1f/%6.1f |"``
    = latency µs / bandwidth GB/s).
    Decision line: ``"%ld Bytes -> Algo %d proto %d time %f"`` (2.20-2.22; a
    TRACE line in 2.18-2.19), prefixed by ``"%s: "`` and the function (2.23),
    ``"%s: %ld Bytes -> Algo %s proto %s channel{Lo..Hi}={%d..%d}"`` with the
    per-rank bytes and upper-case names, no time (2.24+, enqueue.cc l.822).
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

import numpy as np

from simnet.errors import SimnetError
from simnet.models.nccl.inputs import (
    ALGORITHM_NAMES,
    ALGORITHMS,
    FUNCTION_NAMES,
    FUNCTIONS,
    PROTOCOL_NAMES,
    PROTOCOLS,
    function_index,
)
from simnet.models.nccl.model import ALL_GATHER, REDUCE_SCATTER, NcclChoice, NcclTuning, choose, launch_config

__all__ = [
    "init_table",
    "thread_thresholds_line",
    "decision_line",
    "log_message",
    "InitTable",
    "parse_init_table",
    "Decision",
    "parse_decision_line",
    "ALGORITHM_LOG_NAMES",
    "PROTOCOL_LOG_NAMES",
]

ALGORITHM_LOG_NAMES = ("TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT")
"""``ncclAlgoToString`` (collectives.cc l.95-114 of v2.30.7-1), used by the 2.24+ decision line."""

PROTOCOL_LOG_NAMES = ("LL", "LL128", "SIMPLE")
"""``ncclProtoToString`` (collectives.cc l.116-127 of v2.30.7-1)."""

_PREFIX = "NCCL INFO "
_SENTINEL_US = 3600000000.0


def _f32(value: float) -> float:
    return float(np.float32(value))


def log_message(line: str) -> str:
    """The message of a log line: what follows ``"NCCL INFO "``, or the line itself."""
    position = line.find(_PREFIX)
    return line[position + len(_PREFIX):] if position >= 0 else line


def _blocks(tuning: NcclTuning) -> list[list[int]]:
    n = tuning.version.n_algorithms
    if tuning.version.init_blocks_of_three:
        return [list(range(start, min(start + 3, n))) for start in range(0, n, 3)]
    half = n // 2
    return [list(range(0, half)), list(range(half, n))]


def init_table(tuning: NcclTuning) -> str:
    """The init-time TUNING table NCCL's rank 0 prints for this model, one line per log line.

    Lines are the messages after ``"NCCL INFO "``; values are printed from
    single-precision numbers, as NCCL stores them. A single-rank communicator
    prints zeros (NCCL returns before filling the tables).

    Examples
    --------
    >>> from simnet.models.nccl import NcclGraph, NcclGraphs, NcclSystem, tune_model
    >>> system = NcclSystem(n_ranks=2, n_nodes=2, min_compcap=120)
    >>> ring = NcclGraph("ring", 2, 1.2, 1.2, "LOC", "PHB", same_channels=True)
    >>> print(init_table(tune_model(system, NcclGraphs(ring=ring), "2.29.7")).splitlines()[3])
        Broadcast |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     9.3/   1.2 |    18.0/   0.0 |    22.4/   2.4 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
    """
    lines = []
    for block in _blocks(tuning):
        lines.append("  Algorithm   |" + "".join(f" {'':>14}   {ALGORITHM_NAMES[a]:>14}   {'':>14} |" for a in block))
        lines.append("  Protocol    |" + "".join(f" {name:>14} |" for _ in range(3) for name in PROTOCOL_NAMES))
        threads = "".join(f" {tuning.max_threads[a][p]:>14d} |" for a in block for p in range(3))
        lines.append(f" Max NThreads |{threads}")
        for c, name in enumerate(FUNCTION_NAMES):
            cells = "".join(
                f"{_f32(tuning.latency_us[c][a][p]):8.1f}/{_f32(tuning.bandwidth_GBps[c][a][p]):6.1f} |"
                for a in block for p in range(3)
            )
            lines.append(f"{name:>13} |{cells}")
    return "\n".join(lines)


def thread_thresholds_line(tuning: NcclTuning) -> str:
    """The ``threadThresholds`` init line (tuning.cc l.610 of v2.30.7-1)."""
    t = tuning.thread_thresholds
    return (f"threadThresholds {t[0][0]}/{t[0][1]}/{t[0][2]} | {t[1][0]}/{t[1][1]}/{t[1][2]} | {t[2][2]} | "
            f"{t[3][2]}")


def decision_line(tuning: NcclTuning, collective: str, nbytes: int, choice: NcclChoice | None = None, *,
                  channels: tuple[int, int] | None = None) -> str:
    """The per-size TUNING line NCCL's rank 0 prints for one operation, in the release's format.

    Parameters
    ----------
    tuning : NcclTuning
        From :func:`~simnet.models.nccl.tune_model`.
    collective : str
        simnet collective name.
    nbytes : int
        Model bytes (:func:`~simnet.models.nccl.model_nbytes`); 2.24+ prints the
        per-rank bytes, ``nbytes / nRanks`` for AllGather and ReduceScatter.
    choice : NcclChoice, optional
        Default: :func:`~simnet.models.nccl.choose`.
    channels : tuple of int, optional
        ``(lo, hi)`` printed by 2.24+; default ``(0, n - 1)`` with ``n`` the
        channels of :func:`~simnet.models.nccl.launch_config` (NCCL's data split
        may print a narrower range for small sizes).

    Returns
    -------
    str
        The message after ``"NCCL INFO "`` (2.18-2.19 print it only in TRACE builds).
    """
    c = function_index(collective)
    choice = choose(tuning, collective, nbytes) if choice is None else choice
    a, p = ALGORITHMS.index(choice.algorithm), PROTOCOLS.index(choice.protocol)
    style = tuning.version.decision_format
    if style == "names":
        if channels is None:
            channels = (0, launch_config(tuning, collective, choice.algorithm, choice.protocol, nbytes)[0] - 1)
        count = nbytes // tuning.system.n_ranks if c in (ALL_GATHER, REDUCE_SCATTER) else nbytes
        return (f"{FUNCTION_NAMES[c]}: {count} Bytes -> Algo {ALGORITHM_LOG_NAMES[a]} proto "
                f"{PROTOCOL_LOG_NAMES[p]} channel{{Lo..Hi}}={{{channels[0]}..{channels[1]}}}")
    time_us = choice.time_s * 1e6
    sentinel = tuning.version.backup_prints_sentinel and not tuning.enabled(collective, choice.algorithm,
                                                                              choice.protocol)
    text = f"{nbytes} Bytes -> Algo {a} proto {p} time {_f32(_SENTINEL_US if sentinel else time_us):f}"
    return f"{FUNCTION_NAMES[c]}: {text}" if style == "numeric_function" else text


class InitTable(NamedTuple):
    """Entries of a printed init table, keyed by simnet names.

    Attributes
    ----------
    max_threads : dict
        ``(algorithm, protocol) -> int``.
    latency_us, bandwidth_GBps : dict
        ``(collective, algorithm, protocol) -> float`` as printed (1 decimal).
    """

    max_threads: dict
    latency_us: dict
    bandwidth_GBps: dict


_CELL = re.compile(r"^\s*(-?\d+(?:\.\d+)?)/\s*(-?\d+(?:\.\d+)?)\s*$")


def parse_init_table(text: str) -> InitTable:
    """Read the TUNING init table(s) in a log excerpt.

    Lines may carry NCCL's log prefix; cells cut off by a truncated line are left
    out. Blocks are recognised by their ``Algorithm`` rows; a table without one
    (an excerpt starting at ``Protocol``) is read as starting at Tree.

    Raises
    ------
    SimnetError
        For an ``Algorithm`` row naming an algorithm NCCL does not have.
    """
    max_threads, latency, bandwidth = {}, {}, {}
    block = [0, 1, 2]
    for number, raw in enumerate(text.splitlines(), start=1):
        message = log_message(raw)
        head, _, rest = message.partition("|")
        label = head.strip()
        cells = rest.split("|")
        if label == "Algorithm":
            names = [cell.strip() for cell in cells if cell.strip()]
            for name in names:
                if name not in ALGORITHM_NAMES:
                    raise SimnetError(f"unknown algorithm {name!r} in an Algorithm row", path=f"line {number}")
            block = [ALGORITHM_NAMES.index(name) for name in names]
        elif label == "Max NThreads":
            for i, cell in enumerate(cells[: 3 * len(block)]):
                if cell.strip().isdigit():
                    max_threads[(ALGORITHMS[block[i // 3]], PROTOCOLS[i % 3])] = int(cell.strip())
        elif label in FUNCTION_NAMES:
            collective = FUNCTIONS[FUNCTION_NAMES.index(label)]
            for i, cell in enumerate(cells[: 3 * len(block)]):
                match = _CELL.match(cell)
                if match:
                    key = (collective, ALGORITHMS[block[i // 3]], PROTOCOLS[i % 3])
                    latency[key], bandwidth[key] = float(match.group(1)), float(match.group(2))
    return InitTable(max_threads, latency, bandwidth)


class Decision(NamedTuple):
    """One per-size TUNING line as printed.

    Attributes
    ----------
    collective : str or None
        simnet collective name (2.23+ lines name it).
    printed_bytes : int
        The bytes printed (model bytes before 2.24; per-rank bytes since).
    algorithm, protocol : str
        simnet names of the printed algorithm and protocol.
    time_s : float or None
        Printed model time, seconds (2.18-2.23 formats).
    channels : tuple of int or None
        Printed ``(lo, hi)`` channel range (2.24+).
    """

    collective: str | None
    printed_bytes: int
    algorithm: str
    protocol: str
    time_s: float | None
    channels: tuple[int, int] | None


_NUMERIC = re.compile(r"(?:(\w+):\s*)?(\d+) Bytes -> Algo (\d+) proto (\d+) time (\S+)")
_NAMED = re.compile(r"(\w+):\s*(\d+) Bytes -> Algo (\w+)\s+proto (\w+)\s+channel\{Lo\.\.Hi\}=\{(\d+)\.\.(\d+)\}")


def _collective(name: str | None, line: str) -> str | None:
    if name is None:
        return None
    if name not in FUNCTION_NAMES:
        raise SimnetError(f"unknown NCCL function {name!r}", path=line)
    return FUNCTIONS[FUNCTION_NAMES.index(name)]


def parse_decision_line(line: str) -> Decision:
    """Read one per-size TUNING line (any release's format, with or without log prefix).

    Raises
    ------
    SimnetError
        When the line is not a decision line, or names an unknown function,
        algorithm or protocol.
    """
    named = _NAMED.search(line)
    if named:
        function, count, algo, proto, lo, hi = named.groups()
        if algo not in ALGORITHM_LOG_NAMES or proto not in PROTOCOL_LOG_NAMES:
            raise SimnetError(f"unknown algorithm or protocol {algo}/{proto}", path=line)
        return Decision(_collective(function, line), int(count), ALGORITHMS[ALGORITHM_LOG_NAMES.index(algo)],
                        PROTOCOLS[PROTOCOL_LOG_NAMES.index(proto)], None, (int(lo), int(hi)))
    numeric = _NUMERIC.search(line)
    if numeric:
        function, count, algo, proto, time = numeric.groups()
        if int(algo) >= len(ALGORITHMS) or int(proto) >= len(PROTOCOLS):
            raise SimnetError(f"unknown algorithm or protocol id {algo}/{proto}", path=line)
        time_s = float(time) * 1e-6
        if not math.isfinite(time_s):
            raise SimnetError(f"time must be a finite number, got {time!r}", path=line)
        return Decision(_collective(function, line), int(count), ALGORITHMS[int(algo)], PROTOCOLS[int(proto)],
                        time_s, None)
    raise SimnetError("not an NCCL 'Bytes -> Algo' TUNING line", path=line)
