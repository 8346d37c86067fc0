"""Plots of results; the only module that imports matplotlib.

Every function takes tidy frames from :mod:`simnet.analysis` and a path, writes a
PNG and returns the :class:`matplotlib.figure.Figure`. Figures are built with the
object-oriented API, so no pyplot state or GUI backend is involved.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from simnet.units import format_size, format_time

__all__ = ["time_vs_size"]


def time_vs_size(results: pd.DataFrame, path: str | Path, *, title: str = "") -> Figure:
    """Log-log plot of completion time against payload size, per algorithm.

    Simulated times are drawn as points and the closed-form model as a line of
    the same colour, so the gap between the two views is visible at a glance.

    Parameters
    ----------
    results : pandas.DataFrame
        Rows with ``point, algorithm, params, size_bytes, sim_time_s, model_time_s``;
        one pair of series per (point, algorithm, params).
    path : str or pathlib.Path
        PNG file to write.
    title : str, optional
        Figure title.
    """
    figure = Figure(figsize=(7, 4.5), layout="constrained")
    axes = figure.subplots()
    for (point, algorithm, params), group in results.groupby(["point", "algorithm", "params"], sort=False):
        group = group.sort_values("size_bytes")
        label = " ".join(part for part in (point, algorithm, "" if params == "{}" else params) if part)
        points = axes.loglog(group["size_bytes"], group["sim_time_s"], "o", label=f"{label} (simulated)")
        axes.loglog(
            group["size_bytes"],
            group["model_time_s"],
            "-",
            color=points[0].get_color(),
            alpha=0.7,
            label=f"{label} (α-β model)",
        )
    axes.xaxis.set_major_formatter(FuncFormatter(lambda x, _: format_size(x) if x >= 1 else ""))
    axes.yaxis.set_major_formatter(FuncFormatter(lambda y, _: format_time(y)))
    axes.set_xlabel("payload per rank")
    axes.set_ylabel("completion time")
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(fontsize="x-small" if results["point"].nunique() > 4 else "small", ncols=2 if len(axes.lines) > 12 else 1)
    if title:
        axes.set_title(title)
    figure.savefig(path, dpi=120)
    return figure
