"""Plots of result frames: a metric against size or any swept key, and speedups over a baseline.

Every plot is laid out by one rule (:func:`layout`): each variable of the runs
(the algorithm choice, the size, a sparse payload's density, each key a sweep
varies) other than the x axis is either a line or a panel. Lines get the first
say (one line per size when the x axis is a swept key, one per algorithm when it
is the size), and variables move to panels, algorithms first, until a panel holds
at most :data:`MAX_SERIES` lines, so no legend has more than
:data:`~simnet.plots._figure.MAX_LEGEND` entries and no colour repeats. Swept keys
that always change together (:func:`simnet.analysis.keys_together`) are one
variable, named by the first of them (or by the x axis, when that is one of them)
and labelled on the axis with the others. A figure holds at most :data:`MAX_PANELS` panels; beyond them
variables join the lines, then the panels drawn are chosen so that every value of every variable is in one.
Panel titles wrap to their panel's width.
"""

from __future__ import annotations

import json
import math
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from simnet.algorithms.nccl import NCCL_CHOICES, NCCL_NAMES
from simnet.analysis import (baseline_label, baseline_runs, busbw_factor, factors, format_fraction, keys_together,
                             numeric_values, speedups, swept_keys)
from simnet.errors import SimnetError
from simnet.plots._figure import MAX_SIZE_IN, new_figure, save, size_axis, time_axis, value_axis, wrap
from simnet.units import format_bandwidth, format_size, format_time

__all__ = ["METRICS", "MAX_SERIES", "MAX_PANELS", "Layout", "layout", "default_against", "plotted_axes",
           "metric_plot", "time_vs_size", "busbw_vs_size", "speedup_bars", "category_labels"]

METRICS = ("time", "busbw")
"""Metrics :func:`metric_plot` draws: completion time, bus bandwidth."""

MAX_SERIES = 8
"""Most lines (or bars) in one panel."""

MAX_PANELS = 16
"""Most panels in one figure (4 x 4 panels of 4 x 3 inches fill :data:`~simnet.plots._figure.MAX_SIZE_IN`).
Beyond it, variables join the lines while a panel keeps at most :data:`MAX_SERIES` of them; panels still
beyond it are left out so that every value of every panel variable stays in some panel, and the title says
how many were left out (see :func:`layout`)."""

_MARKERS = "osD^v<>Ph"
_LINE_STYLES = ("-", "--", "-.", ":")
"""Model curves and marker sizes (8 down to 5 points) cycle with the series, so that series with equal values
(NCCL's choice and the schedule it picks) stay visible on top of each other."""


@dataclass(frozen=True)
class Layout:
    """Which variables are panels and which are lines, and the panels and series drawn.

    Attributes
    ----------
    x : str
        Variable on the x axis (a :func:`simnet.analysis.factors` column).
    facets : tuple of str
        Variables whose combination is a panel.
    lines : tuple of str
        Variables whose combination is a line (a bar series for speedups).
    panels : list of tuple
        ``(facet values, series)`` per panel drawn: the facets' values (as text)
        and the series (tuples of the lines' values, as text) it shows.
    hidden : int
        Panels left out beyond :data:`MAX_PANELS` (those drawn still show every value of every facet).
    shared_legend : bool
        Whether every panel uses the same series and colours (one legend for the
        figure) or each has its own legend (a variable with more values than
        :data:`MAX_SERIES` is split over several panels).
    every_value : bool
        Whether the panels drawn show every value of every facet (always, unless
        a facet has more values than :data:`MAX_PANELS`).
    """

    x: str
    facets: tuple[str, ...]
    lines: tuple[str, ...]
    panels: list[tuple[tuple[str, ...], list[tuple[str, ...]]]]
    hidden: int
    shared_legend: bool
    every_value: bool = True


def _ordered(frame: pd.DataFrame, key: str) -> list[str]:
    """Distinct values of `key` as text: numerically ascending when numeric, else as they first appear."""
    first = frame[key].drop_duplicates()
    numeric = numeric_values(key, list(first))
    if numeric is not None:
        first = first.iloc[np.argsort(numeric[0], kind="stable")]
    return [str(v) for v in first]


def _combinations(frame: pd.DataFrame, keys: list[str]) -> list[tuple[str, ...]]:
    """Distinct value tuples of `keys` present in `frame`, ordered key by key."""
    if not keys:
        return [()]
    present = set(map(tuple, frame[keys].map(str).to_numpy().tolist()))
    ranks = {key: {value: index for index, value in enumerate(_ordered(frame, key))} for key in keys}
    return sorted(present, key=lambda combo: [ranks[key][value] for key, value in zip(keys, combo)])


def layout(frame: pd.DataFrame, x: str, *, primary: str | None = None) -> Layout:
    """Plan panels and lines for the rows of `frame` against `x`.

    Parameters
    ----------
    frame : pandas.DataFrame
        The rows to draw; ``frame.attrs["variables"]`` lists its columns from
        :func:`simnet.analysis.factors` (default: every column).
    x : str
        The x-axis variable.
    primary : str, optional
        The line variable, every other one a panel (speedup bars: one bar per
        ``choice``) unless that makes more than :data:`MAX_PANELS` panels. By default
        ``size`` when `x` is another variable and sizes vary, else ``choice``, is a line
        whatever the count, and other variables are lines too as long as a panel keeps
        at most :data:`MAX_SERIES` of them.

    Returns
    -------
    Layout

    Notes
    -----
    A figure holds at most :data:`MAX_PANELS` panels. Beyond that, panel variables
    join the lines, fewest values first, while a panel keeps at most
    :data:`MAX_SERIES` lines; if panels are still too many, those drawn are chosen so
    that every value of every panel variable is in at least one, as evenly as they
    can (each next panel the one whose values are drawn least so far, earliest on
    ties), in their order, and :attr:`Layout.hidden` counts the others. A reader
    then sees every machine, size and setting, if not every combination; the tables
    hold all of them.
    """
    variables = frame[frame.attrs.get("variables", list(frame.columns))]
    varying = [key for key in (["choice"] if frame["choice"].nunique() > 1 else []) + swept_keys(variables) if key != x]
    if primary is not None:
        lines, facets = [primary], [key for key in varying if key != primary]
    else:
        primary = "size" if x != "size" and "size" in varying else "choice"
        lines = [primary] if primary in varying else []
        lines += [key for key in varying if key not in lines]
        lines = lines or ["choice"]
        facets = []
        for key in [k for k in dict.fromkeys(("choice", *varying)) if k != primary and k in lines]:
            if len(_combinations(frame, lines)) <= MAX_SERIES:
                break
            lines.remove(key)
            facets.append(key)
        facets.sort(key=varying.index)
    _fold(frame, facets, lines)
    series = _combinations(frame, lines)
    shared = len(series) <= MAX_SERIES
    panels = []
    for combo in _combinations(frame, facets):
        mine = frame[(frame[facets].map(str) == list(combo)).all(axis=1)] if facets else frame
        present = set(_combinations(mine, lines))
        shown = [s for s in series if s in present]
        for start in range(0, len(shown), MAX_SERIES):
            panels.append((combo, shown[start:start + MAX_SERIES] if not shared else series))
    drawn = _covering(panels, MAX_PANELS)
    every_value = all({combo[i] for combo, _ in drawn} == {combo[i] for combo, _ in panels}
                      for i in range(len(facets)))
    return Layout(x, tuple(facets), tuple(lines), drawn, len(panels) - len(drawn), shared, every_value)


def _fold(frame: pd.DataFrame, facets: list[str], lines: list[str]) -> None:
    """Move panel variables of `facets` to `lines` (in place) while there are more than :data:`MAX_PANELS`
    panels and the lines stay within :data:`MAX_SERIES`: the variable with the fewest values first, the last
    written on ties."""
    while len(_combinations(frame, facets)) > MAX_PANELS:
        fitting = [key for key in facets if len(_combinations(frame, [*lines, key])) <= MAX_SERIES]
        if not fitting:
            return
        key = min(reversed(fitting), key=lambda k: frame[k].map(str).nunique())
        facets.remove(key)
        lines.append(key)


def _covering(panels: list, most: int) -> list:
    """At most `most` of `panels` (``(facet values, series)``), in their order: each next one the panel whose
    facet values are drawn least so far (earliest on ties), so every value of every facet is drawn if `most`
    allows and the values are drawn about equally often."""
    if len(panels) <= most:
        return panels
    drawn: dict[tuple[int, str], int] = {}
    chosen: set[int] = set()
    for _ in range(most):
        def rarity(index: int) -> float:
            return sum(1.0 / (1 + drawn.get((position, value), 0))
                       for position, value in enumerate(panels[index][0]))

        best = max((index for index in range(len(panels)) if index not in chosen), key=lambda i: (rarity(i), -i))
        chosen.add(best)
        for position, value in enumerate(panels[best][0]):
            drawn[(position, value)] = drawn.get((position, value), 0) + 1
    return [panel for index, panel in enumerate(panels) if index in chosen]


def _panel_titles(plan: Layout) -> list[str]:
    """Each panel's facet values, with ``(part k/n)`` when a facet's lines are split over n panels."""
    parts: dict[tuple, int] = {}
    for facet, _ in plan.panels:
        parts[facet] = parts.get(facet, 0) + 1
    seen: dict[tuple, int] = {}
    titles = []
    for facet, _ in plan.panels:
        seen[facet] = seen.get(facet, 0) + 1
        part = f"part {seen[facet]}/{parts[facet]}" if parts[facet] > 1 else ""
        titles.append(" ".join(t for t in ((_label(plan.facets, facet) if plan.facets else ""), part) if t))
    return titles


def _panel_width_in(width_in: float, legend_in: float, columns: int) -> float:
    """The width of one of `columns` panels in a figure asked to be `width_in` wide (as
    :func:`~simnet.plots._figure.new_figure` clips it) beside a legend `legend_in` wide, less the axis labels."""
    return max(1.0, (min(width_in, MAX_SIZE_IN[0]) - legend_in - _AXIS_LABELS_IN) / columns)


_AXIS_LABELS_IN = 0.8
"""Width the y-axis label and ticks of the first column of panels take, inches."""


def _fitted(heading: str, width_in: float) -> str:
    """A panel title broken between words into lines narrower than its panel (`width_in`), so that titles
    of neighbouring panels never overlap."""
    return wrap(heading, 0.9 * width_in, points=FontProperties(size="small").get_size_in_points())


def _short(key: str, keys: tuple[str, ...]) -> str:
    """`key` without its path when that is unambiguous among `keys` (``topology.hosts`` -> ``hosts``)."""
    tail = key.rsplit(".", 1)[-1]
    return tail if sum(k.rsplit(".", 1)[-1] == tail for k in keys) == 1 else key


def _shown(key: str, value: str, keys: tuple[str, ...]) -> str:
    """One variable's value for a legend or a panel title."""
    if key == "choice":
        return value
    if key == "size":
        return format_size(float(value))
    if key == "payload.density":
        return f"density {format_fraction(float(value))}"
    return f"{_short(key, keys)}={value}"


def _label(keys: tuple[str, ...], values: tuple[str, ...]) -> str:
    return ", ".join(_shown(key, value, keys) for key, value in zip(keys, values)) or "all runs"


def _keyed(frame: pd.DataFrame, plan: Layout) -> pd.DataFrame:
    """`frame` with the text keys of its panel (``_panel``) and line (``_line``) under `plan`."""
    def joined(keys: tuple[str, ...]) -> pd.Series:
        if not keys:
            return pd.Series("", index=frame.index)
        return frame[list(keys)].map(str).agg("\x1f".join, axis=1)

    return frame.assign(_panel=joined(plan.facets), _line=joined(plan.lines))


def _select(frame: pd.DataFrame, column: str, values: tuple[str, ...]) -> pd.Series:
    return frame[column] == "\x1f".join(values)


def _with_factors(results: pd.DataFrame, labels: dict[str, dict[str, str]] | None = None,
                  x: str | None = None) -> pd.DataFrame:
    """`results` beside its :func:`~simnet.analysis.factors`, whose names are kept in ``attrs["variables"]``;
    a variable whose values are mappings (a sweep point's whole topology) shows each by :func:`category_labels`
    (or by `labels`, ``{variable: {value: label}}``, kept in ``attrs["labels"]``). Of keys that always change
    together only `x`, if it is one of them, else the first, is a variable; ``attrs["with"]`` maps it to the
    others."""
    variables = factors(results)
    together = {}
    for group in keys_together(variables):
        kept = x if x in group else group[0]
        together[kept] = [key for key in group if key != kept]
        variables = variables.drop(columns=together[kept])
    if labels is None:
        labels = {}
        for column in variables.columns:
            values = [str(v) for v in variables[column].drop_duplicates()]
            if any(v.startswith("{") for v in values):
                labels[column] = dict(zip(values, category_labels(values)))
    for column, shown in labels.items():
        if column in variables:
            variables[column] = [shown.get(str(v), v) for v in variables[column]]
    frame = pd.concat([results.drop(columns=[c for c in variables if c in results]), variables], axis=1)
    frame.attrs["variables"] = list(variables.columns)
    frame.attrs["labels"] = labels
    frame.attrs["with"] = together
    return frame


def _flat(value, prefix: str = "") -> dict[str, str]:
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in _flat(item, f"{prefix}{key}.").items()}
    return {prefix.rstrip("."): json.dumps(value) if isinstance(value, (list, bool)) or value is None else str(value)}


def category_labels(values: list[str]) -> list[str]:
    """Short, distinct labels for the values of a categorical variable, in order.

    A mapping (JSON text, such as a sweep point's whole topology) shows only the keys whose values differ
    among the mappings (``kind=dgx_b200``; all its keys, ``builder=…, kind=…``, when no other mapping
    differs from it), nested keys dotted; other values (a preset's name) are shown as they are. Values
    whose short labels would collide keep their full text.

    >>> category_labels(['{"kind": "dgx_h100", "nodes": 16}', '{"kind": "dgx_b200", "nodes": 16}', 'gb200'])
    ['kind=dgx_h100', 'kind=dgx_b200', 'gb200']
    >>> category_labels(['{"builder": "cluster", "nodes": 2}', 'dgx_h100'])
    ['builder=cluster, nodes=2', 'dgx_h100']
    """
    parsed = {}
    for value in values:
        try:
            mapping = json.loads(value)
        except (json.JSONDecodeError, TypeError):
            continue
        if isinstance(mapping, dict):
            parsed[value] = _flat(mapping)
    keys = list(dict.fromkeys(key for flat in parsed.values() for key in flat))
    differ = [key for key in keys if len({flat.get(key) for flat in parsed.values()}) > 1]
    shown = []
    for value in values:
        if value not in parsed:
            shown.append(value)
            continue
        flat = parsed[value]
        mine = [key for key in differ if key in flat] or list(flat)
        shown.append(", ".join(f"{key}={flat[key]}" for key in mine) or value)
    return shown if len(set(shown)) == len(set(values)) else list(values)


def _tick_labels(labels: list[str], slot_in: float) -> tuple[list[str], int]:
    """`labels` wrapped between words to fit `slot_in` inches each at a small font, and their rotation: 0, or
    90 degrees (wrapped to :data:`_UPRIGHT` characters) where a word is wider than that."""
    def wrapped(width: int) -> list[str]:
        return ["\n".join(textwrap.wrap(label, width, break_long_words=False, break_on_hyphens=False)) or label
                for label in labels]

    characters = max(8, int(slot_in * 72 / (0.55 * 8)))
    flat = wrapped(characters)
    if max((len(line) for label in flat for line in label.splitlines()), default=0) <= characters:
        return flat, 0
    return wrapped(_UPRIGHT), 90


_UPRIGHT = 32
"""Characters per line of a tick label turned upright."""


def default_against(results: pd.DataFrame) -> str:
    """The x axis a results frame is best shown against: ``size`` when sizes vary, else the first swept key."""
    return plotted_axes(results)[0]


def plotted_axes(results: pd.DataFrame) -> list[str]:
    """The x axes worth a plot: ``size`` when sizes vary (or nothing does), then every other swept key but those
    that change together with an earlier one (:func:`simnet.analysis.keys_together`)."""
    variables = factors(results)
    companions = {key for group in keys_together(variables) for key in group[1:]}
    keys = [key for key in swept_keys(variables) if key not in companions]
    return ["size", *[k for k in keys if k != "size"]] if "size" in keys or not keys else keys


def _context(results: pd.DataFrame) -> str:
    """What the runs share: collective, ranks, size, topology and link model, for titles."""
    def one(column: str, many: str) -> str:
        values = list(dict.fromkeys(results[column].astype(str)))
        return values[0] if len(values) == 1 else many

    ranks = sorted(set(results["ranks"].astype(int)))
    sizes = sorted(set(results["size_bytes"].astype(float)))
    shown_ranks = f"{ranks[0]} ranks" if len(ranks) == 1 else f"{ranks[0]}–{ranks[-1]} ranks"
    shown_size = f", {format_size(sizes[0])} per rank" if len(sizes) == 1 else ""
    return (f"{one('op', 'several collectives')} on {shown_ranks}{shown_size}, "
            f"{one('network_model', 'several link models')} links; "
            f"{one('topology', 'the topology changes with the sweep')}")


def _title(figure: Figure, title: str, results: pd.DataFrame, plan: Layout) -> None:
    parts = [f"{title}: {_context(results)}" if title else _context(results)]
    if plan.hidden:
        covering = ", covering every value of each variable" if plan.every_value else ""
        parts.append(f"({len(plan.panels)} of {len(plan.panels) + plan.hidden} panels shown{covering})")
    figure.suptitle(wrap(" ".join(parts), figure.get_figwidth(), points=10), fontsize=10)


def _legend_title(keys: tuple[str, ...]) -> str:
    return " · ".join("algorithm" if key == "choice" else "density" if key == "payload.density"
                      else _short(key, keys) for key in keys)


def _legend(axes, handles: dict, title: str) -> None:
    """A legend beside `axes`, to its right."""
    axes.legend(list(handles.values()), list(handles), fontsize="small", title=title or None,
                title_fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)


def _grid(panels: int, panel_in: tuple[float, float], legend_in: float) -> tuple[int, int, float, float]:
    columns = 4 if panels > 9 else 3 if panels > 4 else 2 if panels == 4 else panels
    rows = math.ceil(panels / columns)
    return rows, columns, columns * panel_in[0] + legend_in, rows * panel_in[1] + 1.1


def _x_values(frame: pd.DataFrame, x: str, order: list[str], rows: pd.DataFrame | None = None
              ) -> tuple[np.ndarray, str | None]:
    """Positions on the x axis of `rows` (default: all of `frame`), and the unit kind (None: categorical); the
    axis is numeric only where every value of `frame` is, so a line whose values all are still sits at its
    category on an axis of mixed values."""
    rows = frame if rows is None else rows
    if numeric_values(x, list(frame[x].drop_duplicates())) is not None:
        numeric = numeric_values(x, list(rows[x]))
        return numeric[0], numeric[1]
    position = {value: index for index, value in enumerate(order)}
    return np.array([position[str(v)] for v in rows[x]], dtype=float), None


def _x_axis(axes, frame: pd.DataFrame, x: str, sparse: bool, most: int, width_in: float,
            together: tuple[str, ...] = ()) -> None:
    order = _ordered(frame, x)
    values, kind = _x_values(frame, x, order)
    if x == "size":
        size_axis(axes.xaxis, values.min(), values.max(), most=most, at=np.unique(values))
        axes.set_xlabel(_axis_label(x, sparse, frame.get("op")))
        return
    distinct = np.unique(values)
    if kind is None:
        labels, rotation = _tick_labels(order, width_in / max(1, min(len(order), 12)))
        value_axis(axes.xaxis, np.arange(len(order), dtype=float), labels, log=False)
        axes.set_xlim(-0.5, len(order) - 0.5)
        if rotation:
            for axis in axes.figure.axes:
                axis.tick_params(axis="x", labelrotation=rotation)
    else:
        format_value = {"size": format_size, "time": format_time, "bandwidth": format_bandwidth,
                        "fraction": format_fraction}.get(kind, lambda v: f"{v:g}")
        log = bool(distinct.min() > 0 and distinct.max() / distinct.min() >= 8)
        value_axis(axes.xaxis, distinct, [format_value(v) for v in distinct], log=log)
    axes.set_xlabel(_axis_label(x, sparse, frame.get("op"), together))


def _axis_label(x: str, sparse: bool, ops: pd.Series | None = None, together: tuple[str, ...] = ()) -> str:
    """The x axis' label; keys that change together with `x` follow it (``a (with b)``)."""
    if x == "size":
        if ops is not None and len(ops) and (ops == "all_gather").all():
            return "gathered result per rank"
        return "dense payload per rank (sparse: N × value bytes)" if sparse else "payload per rank"
    if x == "payload.density":
        return "payload density (nonzeros / N)"
    return f"{x} (with {', '.join(together)})" if together else x


def _metric(frame: pd.DataFrame, metric: str, column: str) -> np.ndarray:
    """Simulated (`column` = ``sim_time_s``) or modelled (``model_time_s``) value of `metric` per row."""
    time_s = frame[column].to_numpy(dtype=float)
    if metric == "time":
        return time_s
    factor = np.array([busbw_factor(op, int(p)) for op, p in zip(frame["op"], frame["ranks"])])
    return frame["size_bytes"].to_numpy(dtype=float) / time_s * factor / 1e9


def _is_sparse(frame: pd.DataFrame) -> pd.Series:
    if "payload_kind" not in frame:
        return pd.Series(False, index=frame.index)
    return frame["payload_kind"].astype(str) == "sparse"


def metric_plot(
    results: pd.DataFrame,
    path: str | Path,
    *,
    metric: str = "time",
    against: str = "size",
    curves: pd.DataFrame | None = None,
    title: str = "",
) -> Figure:
    """A metric of every run against the size or a swept key: simulated points, the α-β model as lines.

    Parameters
    ----------
    results : pandas.DataFrame
        Result rows (:data:`simnet.analysis.RESULT_COLUMNS`).
    path : str or pathlib.Path
        PNG file to write.
    metric : {"time", "busbw"}
        Completion time (log axis), or nccl-tests' bus bandwidth in GB/s from 0
        (for sparse algorithms the dense-equivalent figure, labelled so). All
        panels share the y axis, so values compare across panels; a time axis
        runs between labelled ticks (:func:`~simnet.plots._figure.time_ticks`).
        Series without a model value are drawn as points alone, and the legend
        shows no model line then.
    against : str
        x axis: ``size``, ``payload.density`` or a swept key (a column of
        :func:`simnet.analysis.factors`).
    curves : pandas.DataFrame, optional
        The closed forms evaluated densely along `against`
        (:func:`simnet.scenario.model_curves`); without them the model is drawn
        through its values at the runs, and the legend says so.
    title : str, optional
        First words of the title (e.g. the scenario's name); the collective,
        ranks, topology and link model follow.

    Raises
    ------
    SimnetError
        For an unknown metric or an x axis that is not a variable of the runs.
    """
    if metric not in METRICS:
        raise SimnetError(f"must be one of {', '.join(METRICS)}, got {metric!r}", path="metric")
    results = results.reset_index(drop=True)
    frame = _with_factors(results, x=against)
    together = tuple(frame.attrs["with"].get(against, ()))
    if against not in frame.attrs["variables"] or against == "choice":
        options = ", ".join(["size", *[k for k in swept_keys(factors(results)) if k != "size"]])
        raise SimnetError(f"{against!r} is not a variable of these runs (choose from: {options})", path="against")
    plan = layout(frame, against)
    frame = _keyed(frame, plan)
    model = None
    if curves is not None and len(curves) and against in ("size", "payload.density"):
        model = _keyed(_with_factors(curves.reset_index(drop=True), frame.attrs["labels"], x=against), plan)
    sparse = bool(_is_sparse(results).any())
    categorical = _x_values(frame, against, _ordered(frame, against))[1] is None
    panel_in = (4.0, 3.0) if len(plan.panels) > 1 else (7.0, 4.4)
    rows, columns, width, height = _grid(len(plan.panels), panel_in, 2.8)
    title_in = _panel_width_in(width, 2.8, columns)
    figure = new_figure(width, height)
    grid = figure.subplots(rows, columns, sharex=True, sharey=True, squeeze=False)
    colours: dict[tuple, int] = {}
    legend: dict[str, Line2D] = {}
    modelled: dict[str, bool] = {}
    for (facet, series), heading, axes in zip(plan.panels, _panel_titles(plan), grid.flat):
        mine = _select(frame, "_panel", facet)
        panel_modelled = False
        for index, line in enumerate(series):
            colour_index = colours.setdefault(line, len(colours)) if plan.shared_legend else index
            colour, marker = f"C{colour_index % 10}", _MARKERS[colour_index % len(_MARKERS)]
            style, size = _LINE_STYLES[colour_index % len(_LINE_STYLES)], 8.0 - colour_index % len(_LINE_STYLES)
            rows_ = frame[mine & _select(frame, "_line", line)]
            order = _ordered(frame, against)
            xs, _ = _x_values(frame, against, order, rows_)
            sort = np.argsort(xs, kind="stable")
            axes.plot(xs[sort], _metric(rows_, metric, "sim_time_s")[sort], marker, color=colour, zorder=3,
                      markersize=size)
            if model is not None:
                fitted = model[_select(model, "_panel", facet) & _select(model, "_line", line)]
                fitted = fitted.sort_values("size_bytes" if against == "size" else against)
                modelled_y = _metric(fitted, metric, "model_time_s")
                axes.plot(fitted[against].astype(float), modelled_y, linestyle=style,
                          color=colour, alpha=0.75, linewidth=1.3)
            elif categorical:
                modelled_y = _metric(rows_, metric, "model_time_s")[sort]
                axes.plot(xs[sort], modelled_y, linestyle="", marker="_",
                          markersize=size + 8, markeredgewidth=1.6, color=colour, alpha=0.75)
            else:
                alone = len(xs) == 1
                modelled_y = _metric(rows_, metric, "model_time_s")[sort]
                axes.plot(xs[sort], modelled_y, linestyle=style, color=colour,
                          alpha=0.75, linewidth=1.3, marker="_" if alone else "",
                          markersize=size + 8 if alone else 0, markeredgewidth=1.6)
            label = _label(plan.lines, line)
            drawn = bool(np.isfinite(np.asarray(modelled_y, dtype=float)).any())
            panel_modelled |= drawn
            modelled[label] = modelled.get(label, False) or drawn
            legend[label] = Line2D([], [], color=colour, marker=marker, markersize=size,
                                   linestyle=style if modelled[label] and not categorical else "", linewidth=1.3)
        if not plan.shared_legend:
            _legend(axes, {label: legend.pop(label) for label in list(legend)}
                    | _styles(model, against, results, categorical, modelled=panel_modelled),
                    _legend_title(plan.lines))
        axes.set_title(_fitted(heading, title_in), fontsize="small")
        axes.grid(True, which="major", alpha=0.3)
    for axes in grid.flat[len(plan.panels):]:
        axes.set_axis_off()
    first = grid.flat[0]
    _x_axis(first, frame, against, sparse, 9 if len(plan.panels) == 1 else 6, panel_in[0], together)
    for axes in grid.flat[: len(plan.panels)]:
        axes.tick_params(axis="x", labelsize="small", labelbottom=True)
        axes.tick_params(axis="y", labelsize="small")
    drawn_y = [y[np.isfinite(y) & (y > 0)] for axes in grid.flat[: len(plan.panels)]
               for y in (np.asarray(line.get_ydata(), dtype=float) for line in axes.get_lines())]
    drawn_y = [y for y in drawn_y if len(y)]
    if metric == "time":
        if drawn_y:
            time_axis(first.yaxis, min(float(y.min()) for y in drawn_y), max(float(y.max()) for y in drawn_y))
        else:
            first.set_yscale("log")
        ylabel = "completion time"
    else:
        top = max((float(y.max()) for y in drawn_y), default=1.0)
        first.set_ylim(0, 1.08 * top)
        ylabel = "busbw (GB/s)\nsparse algorithms: dense-equivalent" if sparse else "bus bandwidth, busbw (GB/s)"
    for axes in grid[:, 0]:
        axes.set_ylabel(ylabel, fontsize="small")
    label = first.get_xlabel()
    for index, axes in enumerate(grid.flat):
        last_row = index >= len(plan.panels) - grid.shape[1]
        axes.set_xlabel(label if last_row else "", fontsize="small")
    if plan.shared_legend:
        _legend(grid[0, min(len(plan.panels), grid.shape[1]) - 1],
                legend | _styles(model, against, results, categorical, modelled=any(modelled.values())),
                _legend_title(plan.lines))
    _title(figure, title, results, plan)
    return save(figure, path)


def _styles(model: pd.DataFrame | None, against: str, results: pd.DataFrame,
            categorical: bool = False, *, modelled: bool = True) -> dict[str, Line2D]:
    """Legend entries for the two ways a series is drawn: simulated points, the model's line (a dash at each
    category on a categorical axis, where a line between categories would mean nothing); the model's only
    where one was drawn (`modelled`).

    NCCL's schedules are drawn against NCCL's own cost model, which the label says.
    """
    if not modelled:
        return {"simulated": Line2D([], [], color="0.3", marker="o", linestyle="")}
    dense = model is not None or against not in ("size", "payload.density")
    name = "α-β model" + (" (NCCL's own for NCCL's schedules)" if _has_nccl(results) else "")
    if categorical:
        return {"simulated": Line2D([], [], color="0.3", marker="o", linestyle=""),
                name: Line2D([], [], color="0.3", marker="_", markersize=14, markeredgewidth=1.6, linestyle="")}
    return {"simulated": Line2D([], [], color="0.3", marker="o", linestyle=""),
            name if dense else f"{name} (joined at the runs only)": Line2D([], [], color="0.3")}


def _has_nccl(results: pd.DataFrame) -> bool:
    return bool(results["algorithm"].isin([*NCCL_NAMES, *NCCL_CHOICES]).any())


def time_vs_size(results: pd.DataFrame, path: str | Path, *, curves: pd.DataFrame | None = None,
                 title: str = "") -> Figure:
    """Completion time against payload size (:func:`metric_plot` with ``metric="time"``)."""
    return metric_plot(results, path, metric="time", against="size", curves=curves, title=title)


def busbw_vs_size(results: pd.DataFrame, path: str | Path, *, curves: pd.DataFrame | None = None,
                  title: str = "") -> Figure:
    """Bus bandwidth against payload size (:func:`metric_plot` with ``metric="busbw"``)."""
    return metric_plot(results, path, metric="busbw", against="size", curves=curves, title=title)


def speedup_bars(results: pd.DataFrame, path: str | Path, *, baseline: str = "ring", against: str | None = None,
                 title: str = "") -> Figure:
    """Bars of each choice's speedup over `baseline` in the same case, grouped along `against`.

    ``speedup = baseline time / time`` (simulated) at the same point, size and
    payload; a dashed line marks 1. The baseline's own bars are left out unless it
    names an algorithm that ran only with several parameter sets (then each is measured
    against the fastest; see :func:`simnet.analysis.baseline_runs`).

    Parameters
    ----------
    results : pandas.DataFrame
        Result rows.
    path : str or pathlib.Path
        PNG file to write.
    baseline : str
        The choice the others are measured against: an algorithm, or an algorithm and its
        parameters as the tables show them (``ring {"channels": 8}``).
    against : str, optional
        Variable along which bars are grouped (default :func:`default_against`).
    title : str, optional
        First words of the title.

    Raises
    ------
    SimnetError
        If the baseline did not run (``path="baseline"``) or nothing else ran
        beside it in any case.
    """
    results = results.reset_index(drop=True)
    against = against or default_against(results)
    frame = _with_factors(results, x=against)
    together = tuple(frame.attrs["with"].get(against, ()))
    frame = frame.assign(speedup=speedups(results, baseline)["speedup"].to_numpy())
    if against not in frame.attrs["variables"] or against == "choice":
        raise SimnetError(f"{against!r} is not a variable of these runs", path="against")
    own = baseline_runs(results, baseline)
    named = baseline_label(results, baseline, legend=True)
    if frame.loc[own, "choice"].nunique() == 1:
        frame = frame[~own]
    frame = frame[frame["speedup"].notna()]
    if frame.empty:
        raise SimnetError(f"nothing to compare: no algorithm other than {baseline} ran beside it", path="baseline")
    plan = layout(frame, against, primary="choice")
    frame = _keyed(frame, plan)
    order = _ordered(frame, against)
    bars = max(len(series) for _, series in plan.panels)
    panel_width = min(9.0, max(4.0, 0.22 * len(order) * bars + 1.2))
    rows, columns, width, height = _grid(len(plan.panels), (panel_width, 3.2), 2.8)
    title_in = _panel_width_in(width, 2.8, columns)
    figure = new_figure(width, height)
    grid = figure.subplots(rows, columns, sharey=True, squeeze=False)
    colours: dict[tuple, int] = {}
    handles: dict[str, Patch] = {}
    step = 0.8 / bars
    for (facet, series), heading, axes in zip(plan.panels, _panel_titles(plan), grid.flat):
        mine = frame[_select(frame, "_panel", facet)]
        for index, line in enumerate(series):
            colour_index = colours.setdefault(line, len(colours)) if plan.shared_legend else index
            rows_ = mine[_select(mine, "_line", line)]
            position = {value: i for i, value in enumerate(order)}
            xs = np.array([position[str(v)] for v in rows_[against]], dtype=float)
            offset = (index - (len(series) - 1) / 2) * step
            axes.bar(xs + offset, rows_["speedup"], step, color=f"C{colour_index % 10}", label=_label(plan.lines, line))
            handles.setdefault(_label(plan.lines, line), Patch(color=f"C{colour_index % 10}"))
        axes.axhline(1.0, linestyle="--", color="black", linewidth=1)
        labels = [_shown(against, value, (against,)) if against in ("size", "payload.density") else value
                  for value in order]
        labels, rotation = _tick_labels(labels, panel_width / max(1, len(order)))
        rotation = rotation or (30 if len(order) > 6 else 0)
        axes.set_xticks(range(len(order)), labels, fontsize="small", rotation=rotation,
                        ha="right" if rotation == 30 else "center")
        axes.set_xlim(-0.6, len(order) - 0.4)
        axes.tick_params(axis="y", labelsize="small")
        axes.set_title(_fitted(heading, title_in), fontsize="small")
        if not plan.shared_legend:
            _legend(axes, {label: handles[label] for label in (_label(plan.lines, line) for line in series)},
                    _legend_title(plan.lines))
        axes.grid(True, axis="y", alpha=0.3)
    for axes in grid.flat[len(plan.panels):]:
        axes.set_axis_off()
    for axes in grid[:, 0]:
        axes.set_ylabel(f"speedup over {named}\n(simulated; > 1 is faster)", fontsize="small")
    for axes in grid[-1, :]:
        axes.set_xlabel(_axis_label(against, bool(_is_sparse(results).any()), results.get("op"), together),
                        fontsize="small")
    if plan.shared_legend:
        _legend(grid[0, min(len(plan.panels), grid.shape[1]) - 1], handles, _legend_title(plan.lines))
    _title(figure, title, results, plan)
    return save(figure, path)
