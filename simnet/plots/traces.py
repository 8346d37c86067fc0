"""Timelines of one run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from simnet.engine import Trace
from simnet.plots._figure import new_figure, run_title, save, tier_colors, wrap
from simnet.units import format_time

__all__ = ["gantt"]


def _tiers(trace: Trace, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Per transfer, the tier of its route's slowest link (``"local"`` inside a rank)."""
    network = trace.network
    keys = src.astype(np.int64) * network.size + dst
    pairs, inverse = np.unique(keys, return_inverse=True)
    names = []
    for key in pairs.tolist():
        route = network.route(*divmod(key, network.size))
        names.append(network.tiers[min(route, key=lambda link: network.bandwidth_Bps[link])] if route else "local")
    return np.asarray(names, dtype=object)[inverse] if len(pairs) else np.asarray([], dtype=object)


def gantt(trace: Trace, path: str | Path, *, title: str = "", max_ranks: int = 64) -> Figure:
    """Per-rank timeline of one run: each transfer a bar on its sender's row, coloured by tier.

    A bar spans ``[start_s, end_s]`` of the transfer (first byte in to completion);
    its colour is the tier of its route's slowest link, so waits on InfiniBand
    stand out from NVLink traffic; a tier has the same colour in every plot
    (:data:`simnet.plots.TIER_COLORS`). Each tier has its own lane of a rank's
    row, in the legend's order, and bars are opaque: a rank that sends on two
    tiers at once shows both lanes filled, never a blend of their colours. Times
    are counted from the run's start.

    Parameters
    ----------
    trace : Trace
        One simulated run.
    path : str or pathlib.Path
        PNG file to write.
    title : str, optional
        Figure title (default: algorithm, collective, size per rank, topology,
        simulated time and link model).
    max_ranks : int, optional
        Rows drawn: ranks ``0 .. max_ranks - 1`` (default 64); the title says when
        more ranks ran.

    Returns
    -------
    matplotlib.figure.Figure
    """
    table = trace.schedule.transfers
    shown = min(max_ranks, trace.schedule.nranks)
    mine = table.src < shown
    src = table.src[mine]
    start = trace.start_s[mine] - trace.begin_s
    end = trace.end_s[mine] - trace.begin_s
    tiers = _tiers(trace, trace.ranks[src], trace.ranks[table.dst[mine]])
    colors = tier_colors(tiers.tolist())
    names = list(colors)
    figure = new_figure(10, min(12.0, 2.0 + 0.22 * shown))
    axes = figure.subplots()
    lane = 0.8 / max(1, len(names))
    for index, tier in enumerate(names):
        pick = tiers == tier
        rows, lo, hi = src[pick], start[pick], end[pick]
        top = rows - 0.4 + index * lane
        boxes = np.stack([np.stack([lo, top], 1), np.stack([hi, top], 1),
                          np.stack([hi, top + lane], 1), np.stack([lo, top + lane], 1)], 1)
        axes.add_collection(PolyCollection(boxes, facecolors=colors[tier], linewidths=0))
    axes.set_xlim(0, max(float(end.max()) if len(end) else 0.0, trace.time_s) * 1.01 or 1e-9)
    axes.xaxis.set_major_formatter(FuncFormatter(lambda x, _: format_time(x)))
    axes.set_xlabel("simulated time since the run's start")
    axes.set_ylabel("sending rank")
    axes.set_ylim(shown - 0.5, -0.5)
    axes.legend(handles=[Patch(color=colors[t], label=t) for t in names], fontsize="small",
                title="bottleneck tier\n(one lane each,\ntop to bottom)" if len(names) > 1 else "bottleneck tier",
                title_fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0),
                borderaxespad=0)
    more = f" (ranks 0–{shown - 1} of {trace.schedule.nranks} shown)" if shown < trace.schedule.nranks else ""
    figure.suptitle(wrap((title or run_title(trace)) + more, figure.get_figwidth(), points=10), fontsize=10)
    return save(figure, path)
