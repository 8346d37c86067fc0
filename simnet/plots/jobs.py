"""Plots of jobs run together on one fabric: a per-job Gantt and slowdown bars (:mod:`simnet.jobs`)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from simnet.errors import SimnetError
from simnet.plots._figure import new_figure, save
from simnet.units import format_time

__all__ = ["jobs_gantt", "slowdown_bars"]


def jobs_gantt(timeline: pd.DataFrame, path: str | Path, *, title: str = "", max_rows: int = 48,
               point: int = 0) -> Figure:
    """Per-job timeline of jobs run together: one row per communicator, one bar per collective (or round of flows).

    Parameters
    ----------
    timeline : pandas.DataFrame
        Rows with ``job, communicator, iteration, start_s, end_s`` (:data:`simnet.jobs.TIMELINE_COLUMNS`);
        with a ``point`` column of several sweep points, one point is drawn, and the title says which.
    path : str or pathlib.Path
        PNG file to write.
    title : str, optional
        Figure title.
    max_rows : int, optional
        Communicators drawn at most (the first of each job first).
    point : int, optional
        Which sweep point to draw, in the order of `timeline` (default: the first).

    Raises
    ------
    SimnetError
        For a `point` that is not one of `timeline`'s (``path="point"``).
    """
    frame = timeline
    shown = ""
    labels = list(dict.fromkeys(frame["point"])) if "point" in frame else [""]
    if not 0 <= point < max(len(labels), 1):
        raise SimnetError(f"no point {point}; the sweep has {len(labels)}", path="point")
    if "point" in frame and len(frame):
        if len(labels) > 1:
            shown = f"{labels[point]} (sweep point {point} of {len(labels)}, counted from 0)"
        frame = frame[frame["point"] == labels[point]]
    jobs = list(dict.fromkeys(frame["job"]))
    rows = list(dict.fromkeys(zip(frame["job"], frame["communicator"])))
    rows.sort(key=lambda row: (row[1] > 0, jobs.index(row[0]), row[1]))
    rows = sorted(rows[:max_rows], key=lambda row: (jobs.index(row[0]), row[1]))
    position = {row: index for index, row in enumerate(rows)}
    colors = {job: f"C{i % 10}" for i, job in enumerate(jobs)}
    figure = new_figure(10, min(12, 1.5 + 0.3 * max(len(rows), 1)))
    axes = figure.subplots()
    for job in jobs:
        mine = frame[frame["job"] == job]
        keep = [(j, c) in position for j, c in zip(mine["job"], mine["communicator"])]
        mine = mine[keep]
        axes.barh([position[(j, c)] for j, c in zip(mine["job"], mine["communicator"])],
                  mine["end_s"] - mine["start_s"], left=mine["start_s"], height=0.7, color=colors[job], alpha=0.6,
                  edgecolor="black", linewidth=0.3)
    axes.set_yticks(range(len(rows)), [job if communicator == 0 else f"{job} #{communicator}"
                                       for job, communicator in rows], fontsize="small")
    axes.set_ylim(len(rows) - 0.5, -0.5)
    axes.xaxis.set_major_formatter(FuncFormatter(lambda x, _: format_time(x)))
    axes.set_xlabel("simulated time")
    axes.legend(handles=[Patch(color=colors[job], alpha=0.6, label=job) for job in jobs], fontsize="small",
                loc="upper left", bbox_to_anchor=(1.01, 1.0))
    heading = title or "jobs run together: one bar per collective"
    axes.set_title(f"{heading}\n{shown}" if shown else heading, fontsize="small")
    return save(figure, path)


def slowdown_bars(jobs: pd.DataFrame, path: str | Path, *, title: str = "") -> Figure:
    """Bars of each job's slowdown (time together / time alone), grouped by sweep point.

    Bars rise from 1 (as fast as alone, a dashed line) up for a job slowed down and
    down for one that finished sooner, so that slowdowns of a few percent stay visible;
    each bar is labelled with its slowdown (a job exactly as fast as alone has a bar of no
    height, and its label shows it); the legend sits beside the axes.
    """
    points = list(dict.fromkeys(jobs["point"]))
    names = list(dict.fromkeys(jobs["job"]))
    figure = new_figure(max(6, 1.2 * len(points) * max(1, len(names)) / 2 + 4), 4.5)
    axes = figure.subplots()
    width = 0.8 / max(1, len(names))
    for index, name in enumerate(names):
        mine = jobs[jobs["job"] == name].set_index("point")["slowdown"]
        heights = [float(mine.get(point, float("nan"))) - 1.0 for point in points]
        bars = axes.bar([p + (index - (len(names) - 1) / 2) * width for p in range(len(points))], heights, width,
                        bottom=1.0, label=name)
        axes.bar_label(bars, labels=["" if math.isnan(h) else f"{h + 1.0:.3f}×" for h in heights],
                       fontsize="x-small", padding=2)
    axes.axhline(1.0, linestyle="--", color="black", linewidth=1)
    rotate = len(points) > 2 or max((len(str(point)) for point in points), default=0) > 20
    axes.set_xticks(range(len(points)), [point or "jobs" for point in points], rotation=25 if rotate else 0,
                    ha="right" if rotate else "center", fontsize="small")
    axes.set_ylabel("slowdown (time together / time alone)")
    values = jobs["slowdown"].dropna()
    if len(values):
        low, high = min(float(values.min()), 1.0), max(float(values.max()), 1.0)
        margin = max(0.05 * (high - low), 0.01)
        axes.set_ylim(low - margin, high + margin)
    axes.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    if title:
        axes.set_title(title)
    return save(figure, path)
