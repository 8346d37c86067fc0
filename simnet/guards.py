"""Refuse runs that would not fit on this machine, before they start.

A simulation's memory grows with the topology (graph, routes) and with the number
of transfers (schedule, event bookkeeping, trace). Both are estimated from the
scenario before anything large is built, using per-item costs measured with
:mod:`tracemalloc` on ring all-reduce (about 500 B per transfer at peak when they
were set, 253 B since issue 20's array path; 1.5 kB per GPU of a switch topology),
rounded up: schedules whose flows share links keep more state per transfer (the
16 384-GPU BlueConnect of ``benchmarks/run.py`` peaks at about 400 B of resident
memory per transfer, its topology included). A run whose estimate exceeds 80 % of
the memory available now is refused with a :class:`ResourceError` that gives the
estimate and the algorithm's parameters that shrink it (``max_pieces``, ``channels``,
``chunks``, ... with their values); ``force=True`` (``--force`` on the command line) runs it
anyway.

"Available" is ``MemAvailable`` of the machine that runs the simulation; inside a Dask
worker (``--executor dask``) with a memory limit, the smaller of that and what the worker
may still use, its ``--memory-limit`` less its process's resident memory, so a point is
refused before Dask stops the worker for exceeding its limit.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from simnet.errors import SimnetError
from simnet.units import format_size

__all__ = ["ResourceError", "BYTES_PER_TRANSFER", "BYTES_PER_GPU", "available_memory_bytes",
           "estimate_gpus", "check_fits"]

BYTES_PER_TRANSFER = 600
BYTES_PER_GPU = 4096
_USABLE_FRACTION = 0.8


class ResourceError(SimnetError):
    """A run estimated to need more memory than the machine has."""


def _host_available_bytes() -> int:
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def _dask_worker_budget_bytes() -> int | None:
    """What the Dask worker running this call may still use (its memory limit less its process's resident
    memory), bytes; ``None`` outside a worker or without a limit. Dask is not imported for it."""
    distributed = sys.modules.get("distributed")
    if distributed is None:
        return None
    try:
        worker = distributed.get_worker()
    except ValueError:
        return None
    limit = getattr(getattr(worker, "memory_manager", None), "memory_limit", None)
    if not limit:
        return None
    return max(0, int(limit) - int(worker.monitor.get_process_memory()))


def available_memory_bytes() -> int:
    """Memory available to a new allocation now, bytes: ``MemAvailable`` on Linux, and within a Dask worker's
    memory limit inside one."""
    host = _host_available_bytes()
    budget = _dask_worker_budget_bytes()
    return host if budget is None else min(host, budget)


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def estimate_gpus(spec: Mapping[str, Any]) -> int | None:
    """GPU count of a topology spec ``{builder: NAME, ...}`` without building it.

    Returns ``None`` when the builder is not a parametric fabric or the parameters
    are not plain positive integers (validation will then say what is wrong).
    """
    builder = spec.get("builder")
    if builder in ("switch", "ring"):
        return _positive_int(spec.get("hosts"))
    if builder == "fat_tree":
        k = _positive_int(spec.get("k"))
        return k**3 // 4 if k else None
    if builder == "leaf_spine":
        leaves, hosts = _positive_int(spec.get("leaves")), _positive_int(spec.get("hosts_per_leaf"))
        return leaves * hosts if leaves and hosts else None
    if builder in ("torus", "pgft"):
        dims = spec.get("dims" if builder == "torus" else "down")
        if isinstance(dims, list) and dims and all(_positive_int(d) for d in dims):
            return math.prod(dims)
    if builder == "cluster":
        return _positive_int(spec.get("nodes")) and 18 * spec["nodes"]
    if builder == "calibrated_cluster":
        return _positive_int(spec.get("nodes")) and (72 if spec.get("kind") == "gb200_nvl72" else 8) * spec["nodes"]
    return None


def check_fits(what: str, needed_bytes: float, *, force: bool, path: str = "", lower: Sequence[str] = ()) -> None:
    """Raise :class:`ResourceError` if `needed_bytes` exceed the usable memory, unless `force`.

    `lower` names the parameters that shrink the run, with their values (``"max_pieces (64 now)"``); the error
    offers them before ``--force``.
    """
    if force:
        return
    available = available_memory_bytes()
    if needed_bytes > _USABLE_FRACTION * available:
        fix = f"lower {' or '.join(lower)}, or pass --force" if lower else "pass --force"
        raise ResourceError(
            f"{what} needs an estimated {format_size(needed_bytes, decimal=True)} of memory, more than "
            f"{_USABLE_FRACTION:.0%} of the {format_size(available, decimal=True)} available; {fix} (force=True) "
            "to run it anyway",
            path=path,
        )
