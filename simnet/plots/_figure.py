"""What every simnet figure shares: size bounds, titles that fit, binary size and time axes."""

from __future__ import annotations

import math
import re
import textwrap
import zlib
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter, NullLocator

from simnet.analysis import format_fraction
from simnet.engine import Trace
from simnet.units import format_size, format_time

DPI = 120
"""Pixels per inch of every PNG."""

MAX_SIZE_IN = (20.0, 15.0)
"""Largest figure, inches: 2400 x 1800 px at :data:`DPI`."""

MAX_LEGEND = 12
"""Most entries one legend may hold."""


TIER_COLORS = {
    "nvswitch": "tab:blue", "nvlink": "tab:cyan", "c2c": "tab:purple", "pcie": "tab:green", "ib": "tab:orange",
    "fabric": "tab:red", "qpi": "tab:brown", "upi": "tab:brown", "xgmi": "tab:brown", "xbus": "tab:brown",
    "local": "tab:gray",
}
"""The colour of each tier simnet's topologies name, the same in every plot (the inter-socket links share one:
a server has one kind)."""

_OTHER_TIER_COLORS = ("tab:pink", "tab:olive", "#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02",
                      "#a6761d", "#666666")


def tier_colors(tiers: Iterable[str]) -> dict[str, str]:
    """A colour per tier, the same for a tier in every plot: :data:`TIER_COLORS` for known tiers, for others one
    picked by a checksum of the name; a tier whose colour another tier of `tiers` already has gets the next free one.

    >>> tier_colors(["ib", "nvswitch"])
    {'ib': 'tab:orange', 'nvswitch': 'tab:blue'}
    """
    colors: dict[str, str] = {}
    for tier in sorted(set(tiers), key=lambda name: (name not in TIER_COLORS, name)):
        taken = set(colors.values())
        color = TIER_COLORS.get(tier)
        if color is None or color in taken:
            start, count = zlib.crc32(tier.encode()), len(_OTHER_TIER_COLORS)
            palette = [_OTHER_TIER_COLORS[(start + i) % count] for i in range(count)]
            color = next((c for c in palette if c not in taken), palette[0])
        colors[tier] = color
    return dict(sorted(colors.items()))


def new_figure(width_in: float, height_in: float) -> Figure:
    """A constrained-layout figure, its size clipped to :data:`MAX_SIZE_IN`."""
    return Figure(figsize=(min(width_in, MAX_SIZE_IN[0]), min(height_in, MAX_SIZE_IN[1])), layout="constrained")


def save(figure: Figure, path: str | Path) -> Figure:
    """Write `figure` as a PNG at :data:`DPI` (its pixel size is its size in inches times DPI)."""
    figure.savefig(path, dpi=DPI)
    return figure


def wrap(text: str, width_in: float, *, points: float = 10.0) -> str:
    """`text` broken into lines that fit `width_in` inches at a font of `points` points, never between a
    number and the word after it (its unit: ``1 us``, ``25 GB/s``)."""
    characters = max(20, int(width_in * 72 / (0.55 * points)))
    return "\n".join(textwrap.fill(_NUMBER_SPACE.sub("\u00a0", line), characters, break_on_hyphens=False)
                     for line in text.splitlines()).replace("\u00a0", " ")


_NUMBER_SPACE = re.compile(r"(?<=\d) (?=[^\W\d_])")
"""A space between a digit and a letter, which :func:`wrap` keeps on one line."""


def binary_ticks(low: float, high: float, *, most: int = 8) -> list[float]:
    """Powers of two between `low` and `high` (bytes): at most `most`, every ``stride``-th power.

    The stride is the smallest of 1, 2, 5, 10, 20, ... that keeps at most `most`
    ticks, and ticks sit on its multiples, so 1 KiB, 1 MiB and 1 GiB are kept.

    >>> [int(t) for t in binary_ticks(1024, 2**30)]
    [1024, 32768, 1048576, 33554432, 1073741824]
    >>> [int(t) for t in binary_ticks(65536, 2**26)]
    [65536, 262144, 1048576, 4194304, 16777216, 67108864]
    """
    first, last = math.ceil(math.log2(max(low, 1)) - 1e-9), math.floor(math.log2(max(high, 1)) + 1e-9)
    for stride in (1, 2, 5, 10, 20, 30, 40, 50, 60):
        exponents = range(stride * math.ceil(first / stride), last + 1, stride)
        if len(exponents) <= most:
            return [2.0**e for e in exponents]
    return [2.0**first]


def size_axis(axis, low: float, high: float, *, most: int = 8, at: np.ndarray | None = None) -> None:
    """A log2 axis of bytes from `low` to `high`, labelled with units (``64 KiB``, ``1 MiB``, ``64 MB``).

    Ticks sit at (at most `most`) powers of two, or at the sizes `at` that ran
    when those are not all powers of two (decimal sizes such as 64 MB would
    otherwise fall between binary ticks) and at most `most` of them.
    """
    axis.axes.set_xscale("log", base=2) if axis.axis_name == "x" else axis.axes.set_yscale("log", base=2)
    ticks = binary_ticks(low, high, most=most)
    decimal = at is not None and any(math.log2(v) != round(math.log2(v)) for v in at if v > 0)
    if decimal and len(at) <= most:
        ticks = [float(v) for v in at]
    if len(ticks) < 2:
        ticks = sorted({*ticks, float(low), float(high)})
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(FuncFormatter(lambda value, _: format_size(value)))
    axis.set_minor_locator(NullLocator())
    axis.set_minor_formatter(NullFormatter())


def time_ticks(low: float, high: float) -> list[float]:
    """Labelled ticks of a log time axis from `low` to `high` seconds, from the tick at or below `low` to the
    tick at or above `high`, so that every value between has a labelled tick on each side.

    Ticks are at 1, 2, 3 and 5 times powers of ten when the range spans less than
    one and a half decades, at 1, 2 and 5 times them when it spans less than three,
    at powers of ten otherwise.

    >>> [format_time(t) for t in time_ticks(248e-6, 2.6e-3)]
    ['200 us', '300 us', '500 us', '1 ms', '2 ms', '3 ms']
    >>> [format_time(t) for t in time_ticks(1e-6, 1e-2)]
    ['1 us', '10 us', '100 us', '1 ms', '10 ms']
    """
    if not (0 < low <= high and math.isfinite(high)):
        return []
    decades = math.log10(high / low)
    subs = (1.0, 2.0, 3.0, 5.0) if decades < 1.5 else (1.0, 2.0, 5.0) if decades < 3 else (1.0,)
    candidates = sorted(sub * 10.0**power for power in range(math.floor(math.log10(low)) - 1,
                                                             math.ceil(math.log10(high)) + 1) for sub in subs)
    first = max(t for t in candidates if t <= low * (1 + 1e-9))
    last = min(t for t in candidates if t >= high * (1 - 1e-9))
    return [t for t in candidates if first <= t <= last]


def time_axis(axis, low: float, high: float) -> None:
    """A log axis of seconds from `low` to `high` with unit-carrying labels (``10 us``, ``20 us``, ``1 ms``).

    The axis runs from the :func:`time_ticks` tick at or below `low` to the one at or above `high` (a little
    beyond, so that a point on them is whole), so every point lies between two labelled ticks.
    """
    ticks = time_ticks(low, high)
    horizontal = axis.axis_name == "x"
    (axis.axes.set_xscale if horizontal else axis.axes.set_yscale)("log")
    if len(ticks) < 2:
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    else:
        axis.set_major_locator(FixedLocator(ticks))
        limits = (ticks[0] / _TIME_MARGIN, ticks[-1] * _TIME_MARGIN)
        (axis.axes.set_xlim if horizontal else axis.axes.set_ylim)(*limits)
    axis.set_major_formatter(FuncFormatter(lambda value, _: format_time(value)))
    axis.set_minor_formatter(NullFormatter())


_TIME_MARGIN = 1.06
"""How far a time axis runs beyond its outer ticks (a factor), so that a marker on one is not cut."""


def value_axis(axis, values: np.ndarray, labels: list[str], *, log: bool) -> None:
    """An axis ticked exactly at `values` (at most 12 of them labelled) with `labels`."""
    if log:
        axis.axes.set_xscale("log", base=2) if axis.axis_name == "x" else axis.axes.set_yscale("log", base=2)
    order = np.argsort(values)
    values, labels = np.asarray(values)[order], [labels[i] for i in order]
    step = max(1, math.ceil(len(values) / 12))
    axis.set_major_locator(FixedLocator(values[::step]))
    axis.set_major_formatter(FuncFormatter(lambda value, position: labels[::step][position]
                                           if position is not None and position < len(labels[::step]) else ""))
    axis.set_minor_locator(NullLocator())


def run_title(trace: Trace) -> str:
    """What one run was: algorithm, collective, size per rank (and sparse density), topology, time, link model."""
    schedule = trace.schedule
    payload = schedule.params.get("payload") if isinstance(schedule.params, dict) else None
    sparse = (f" (sparse, density {format_fraction(payload['density'])})"
              if isinstance(payload, dict) and isinstance(payload.get("density"), (int, float)) else "")
    return (f"{schedule.algorithm} {schedule.collective}, {format_size(schedule.size_bytes)} per rank{sparse}, "
            f"on {trace.network.name}: {format_time(trace.time_s)} simulated, {trace.model} links")
