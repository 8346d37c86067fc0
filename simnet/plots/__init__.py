"""Plots of results, traces and topologies; the only package that imports matplotlib.

Every function writes one PNG and returns its :class:`matplotlib.figure.Figure`,
built with the object-oriented API (no pyplot state, no GUI backend). Figures stay
within 2400 x 1800 px, legends within 12 entries (see :mod:`simnet.plots.results`
for how panels and lines are chosen), sizes are ticked in binary units and times
with their unit.

- :func:`metric_plot` (:func:`time_vs_size`, :func:`busbw_vs_size`) and
  :func:`speedup_bars`: result frames of :mod:`simnet.analysis`, against the size or
  any swept key, the α-β model as curves (:func:`simnet.scenario.model_curves`);
- :func:`draw_topology`: a topology, aggregated when large;
- :func:`link_utilization` and :func:`gantt`: one run's trace;
- :func:`jobs_gantt` and :func:`slowdown_bars`: jobs run together (:mod:`simnet.jobs`).

A tier has one colour in every plot that colours tiers (:data:`TIER_COLORS`, :func:`tier_colors`).
"""

from simnet.plots._figure import TIER_COLORS, tier_colors
from simnet.plots.jobs import jobs_gantt, slowdown_bars
from simnet.plots.results import (METRICS, busbw_vs_size, default_against, metric_plot, plotted_axes, speedup_bars,
                                  time_vs_size)
from simnet.plots.topology import draw_topology, link_utilization
from simnet.plots.traces import gantt

__all__ = [
    "METRICS",
    "default_against",
    "plotted_axes",
    "metric_plot",
    "time_vs_size",
    "busbw_vs_size",
    "speedup_bars",
    "draw_topology",
    "link_utilization",
    "gantt",
    "jobs_gantt",
    "slowdown_bars",
    "TIER_COLORS",
    "tier_colors",
]
