"""Results as tidy pandas frames: one row per (scenario, algorithm, size).

Bandwidths follow the nccl-tests definitions (``doc/PERFORMANCE.md`` of
NVIDIA/nccl-tests): ``algbw = size / time`` and ``busbw = algbw * factor`` with the
factor that makes busbw comparable to the hardware's peak bandwidth, for
all-reduce ``2 (p - 1) / p``.
"""

from __future__ import annotations

import pandas as pd

from simnet.units import format_size, format_time

__all__ = ["RESULT_COLUMNS", "busbw_factor", "result_row", "display_table"]

RESULT_COLUMNS = (
    "scenario",
    "point",
    "topology",
    "op",
    "algorithm",
    "params",
    "network_model",
    "ranks",
    "size_bytes",
    "sim_time_s",
    "model_time_s",
    "sim_over_model",
    "algbw_GBps",
    "busbw_GBps",
)

_BUSBW_FACTORS = {
    "allreduce": lambda p: 2 * (p - 1) / p,
    "reduce_scatter": lambda p: (p - 1) / p,
    "all_gather": lambda p: (p - 1) / p,
    "broadcast": lambda p: 1.0,
    "reduce": lambda p: 1.0,
}


def busbw_factor(op: str, nranks: int) -> float:
    """nccl-tests' bus-bandwidth factor of collective `op` on `nranks` ranks.

    >>> busbw_factor("allreduce", 8)
    1.75
    """
    return _BUSBW_FACTORS[op](nranks)


def result_row(
    *,
    scenario: str,
    point: str,
    topology: str,
    op: str,
    algorithm: str,
    params: str,
    network_model: str,
    ranks: int,
    size_bytes: int,
    sim_time_s: float,
    model_time_s: float,
) -> dict:
    """One result row with derived columns (ratio to the model, algbw, busbw in GB/s)."""
    algbw_GBps = size_bytes / sim_time_s / 1e9
    return {
        "scenario": scenario,
        "point": point,
        "topology": topology,
        "op": op,
        "algorithm": algorithm,
        "params": params,
        "network_model": network_model,
        "ranks": ranks,
        "size_bytes": size_bytes,
        "sim_time_s": sim_time_s,
        "model_time_s": model_time_s,
        "sim_over_model": sim_time_s / model_time_s,
        "algbw_GBps": algbw_GBps,
        "busbw_GBps": algbw_GBps * busbw_factor(op, ranks),
    }


def display_table(results: pd.DataFrame) -> pd.DataFrame:
    """A copy of `results` for people: sizes and times with units, ratios rounded."""
    shown = pd.DataFrame(
        {
            "point": results["point"],
            "algorithm": results["algorithm"],
            "params": results["params"],
            "ranks": results["ranks"],
            "size": results["size_bytes"].map(format_size),
            "sim time": results["sim_time_s"].map(format_time),
            "model time": results["model_time_s"].map(format_time),
            "sim/model": results["sim_over_model"].map("{:.4f}".format),
            "algbw GB/s": results["algbw_GBps"].map("{:.2f}".format),
            "busbw GB/s": results["busbw_GBps"].map("{:.2f}".format),
        }
    )
    if not results["point"].astype(bool).any():
        shown = shown.drop(columns="point")
    return shown
