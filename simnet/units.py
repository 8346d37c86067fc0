"""Quantities with units: the one place where simnet converts them.

Inside simnet every quantity is a float in SI base units, named with its unit:
``size_bytes``, ``latency_s``, ``bandwidth_Bps`` (bytes per second). People type and
read numbers with units; this module turns text such as ``"25 GB/s"``, ``"100 Gbps"``,
``"1 us"`` or ``"64 MiB"`` into those floats and back.

Conventions (as in datasheets and nccl-tests):

* decimal prefixes are powers of 1000 (``GB = 1e9 B``), binary ones powers of 1024
  (``GiB = 2**30 B``);
* ``B`` is a byte and ``b``/``bit`` a bit, so ``Gbps`` and ``Gb/s`` are ``1e9 / 8`` bytes
  per second while ``GBps`` and ``GB/s`` are ``1e9`` bytes per second;
* a size, time or bandwidth needs its unit: a plain number other than 0 (``100``,
  ``"1"``) is refused with the fix (``100 needs a unit, e.g. 100 Gbps or 12.5 GB/s (100 B/s if
  bytes per second was meant)``),
  because taking it as bytes, seconds or bytes per second silently runs at absurd
  rates; counts and fractions stay plain numbers.

Examples
--------
>>> parse_bandwidth("100 Gbps")
12500000000.0
>>> parse_time("1 us")
1e-06
>>> parse_size("64 MiB")
67108864
>>> format_size(67108864)
'64 MiB'
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from simnet.errors import UnitError

__all__ = [
    "parse_size",
    "parse_payload_size",
    "parse_size_range",
    "parse_count_range",
    "parse_fraction_range",
    "parse_positive_count",
    "parse_positive_fraction",
    "parse_time",
    "parse_bandwidth",
    "parse_fraction",
    "parse_ratio",
    "parse_count",
    "format_size",
    "format_size_span",
    "format_size_bound",
    "format_time",
    "format_bandwidth",
    "format_exact",
]

_DECIMAL = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50}

_SIZE_UNITS: dict[str, float] = {}
_BANDWIDTH_UNITS: dict[str, float] = {}
for _prefix, _factor in (_DECIMAL | _BINARY).items():
    _SIZE_UNITS[f"{_prefix}B"] = _factor
    for _per_second in ("/s", "ps"):
        _BANDWIDTH_UNITS[f"{_prefix}B{_per_second}"] = _factor
        _BANDWIDTH_UNITS[f"{_prefix}b{_per_second}"] = _factor / 8
    _BANDWIDTH_UNITS[f"{_prefix}bit/s"] = _factor / 8
_SIZE_UNITS["bytes"] = _SIZE_UNITS["byte"] = 1.0
_EXACT_SIZE_FACTORS = {f"{prefix}B": 10 ** (3 * i) for i, prefix in enumerate(("", "k", "M", "G", "T", "P"))}
_EXACT_SIZE_FACTORS |= {"KB": 1000} | {f"{p}B": 2 ** (10 * (i + 1)) for i, p in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi"))}

_TIME_UNITS = {
    "s": 1.0,
    "sec": 1.0,
    "ms": 1e-3,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ns": 1e-9,
    "ps": 1e-12,
    "min": 60.0,
    "h": 3600.0,
}

_NUMBER = r"[+-]?(?:\d+(?:_\d+)*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_QUANTITY = re.compile(rf"^\s*(?P<number>{_NUMBER})\s*(?P<unit>[^\s\d.+-][^\s]*)?\s*$")


def _split(text: object, what: str, example: str) -> tuple[float, str]:
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise UnitError(f"expected a {what} such as '{example}', got {text!r}")
    if isinstance(text, (int, float)):
        value, unit = float(text), ""
    else:
        match = _QUANTITY.match(text)
        if match is None:
            raise UnitError(f"expected a {what} such as '{example}', got {text!r}")
        value, unit = float(match["number"].replace("_", "")), match["unit"] or ""
    if not math.isfinite(value):
        raise UnitError(f"expected a finite {what}, got {text!r}")
    return value, unit


def _with_units(value: float, what: str) -> str:
    """What a plain `value` of `what` most likely meant, written with units."""
    exact = format_exact(value, what)
    if what == "bandwidth" and value < 1e5:
        return f"{value:g} Gbps or {value / 8:g} GB/s ({exact} if bytes per second was meant)"
    if what == "time" and value >= 1e-3:
        return f"{value:g} us or {value:g} ms ({exact} if seconds was meant)"
    return exact


def _parse(text: object, units: dict[str, float], what: str, example: str) -> float:
    value, unit = _split(text, what, example)
    if not unit and "" not in units:
        if value == 0:
            return 0.0
        if value < 0:
            raise UnitError(f"expected a {what} of at least 0 with a unit, such as '{example}', got {text!r}")
        raise UnitError(f"{text!r} needs a unit, e.g. {_with_units(value, what)}")
    if unit not in units:
        raise UnitError(
            f"unknown unit {unit!r} in {text!r}: expected a {what} such as '{example}'"
        )
    result = value * units[unit]
    if not math.isfinite(result):
        raise UnitError(f"{what} {text!r} is too large")
    return result


def parse_size(text: str | int | float) -> int:
    """Parse a data size into a whole number of bytes.

    Parameters
    ----------
    text : str or int or float
        ``"64 MiB"``, ``"1 KB"``, ``"512B"``, ``"1.5 GiB"`` (or ``0``).

    Returns
    -------
    int
        Size in bytes.

    Raises
    ------
    UnitError
        If the unit is missing or unknown (``"64 Mb"`` is a rate of bits, not a
        size), the value is not a whole number of bytes, or it is 2**63 B or more
        (sizes are 64-bit counts of bytes).
    """
    value = _parse(text, _SIZE_UNITS, "size", "64 MiB")
    _, unit = _split(text, "size", "64 MiB")
    if isinstance(text, str):
        number = _QUANTITY.match(text)["number"].replace("_", "")
        exact = Fraction(number) * _EXACT_SIZE_FACTORS.get(unit, 1)
    else:
        exact = Fraction(text)
    if exact.denominator != 1:
        raise UnitError(f"size {text!r} is not a whole number of bytes")
    if not math.isfinite(value) or abs(exact) >= 2**63:
        raise UnitError(f"size {text!r} is too large: sizes are whole bytes below 2**63")
    return int(exact)


def parse_payload_size(text: str | int | float) -> int:
    """A collective's payload: :func:`parse_size`, and at least 1 B (the one rule for what a valid size is, for
    a scenario's ``sizes`` and ``simnet tune --sizes``).

    Raises
    ------
    UnitError
        As :func:`parse_size`, or ``must be ≥ 1 B, got ...`` for zero or a negative size.
    """
    size = parse_size(text)
    if size < 1:
        raise UnitError(f"must be ≥ 1 B, got {text!r}")
    return size


def parse_size_range(text: str) -> list[int]:
    """Sizes in bytes from ``"1KiB..1GiB"`` (doubling), ``"1KiB..1GiB:x8"`` (×8 steps) or ``"1KiB,1MiB"``
    (what ``simnet tune --sizes`` and a scenario's ``sizes`` take).

    A range gives ``LOW, LOW·N, LOW·N², …`` while below ``HIGH``, then ``HIGH``
    itself: both ends are always included, so ``1KiB..1GiB:x8`` ends with
    ``256 MiB, 1 GiB`` (1 GiB is not 1 KiB times a power of 8) and
    ``1KiB..1GiB:x4`` is exactly the powers of 4 from 1 KiB to 1 GiB. A list is
    sorted and each size kept once. Every size is a payload
    (:func:`parse_payload_size`: at least 1 B).

    Raises
    ------
    UnitError
        For a malformed range, naming the text, or a size below 1 B, naming it.
    """
    return _geometric_range(text, parse_payload_size, "1 B ≤ LOW ≤ HIGH")


def parse_count_range(text: str) -> list[int]:
    """Counts from ``"256Ki..4Mi:x4"`` (×4 steps), ``"256Ki..4Mi"`` (doubling) or ``"1M,16M"``, as
    :func:`parse_size_range` reads sizes (a sparse payload's ``dimension``); each count at least 1.

    >>> parse_count_range("256Ki..4Mi:x4"), parse_count_range("16M, 1M")
    ([262144, 1048576, 4194304], [1000000, 16000000])

    Raises
    ------
    UnitError
        For a malformed range, naming the text, or a count that is not a whole number ≥ 1, naming it.
    """
    return _geometric_range(text, parse_positive_count, "1 ≤ LOW ≤ HIGH")


def parse_fraction_range(text: str) -> list[float]:
    """Fractions from ``"1/1024..1/4:x4"`` (×4 steps), ``"1/1024..1/4"`` (doubling) or ``"1/128, 1%"``, as
    :func:`parse_size_range` reads sizes (a sparse payload's ``density``): ``LOW, LOW·N, …`` while below
    ``HIGH``, then ``HIGH``.

    >>> parse_fraction_range("1/1024..1/4:x4")
    [0.0009765625, 0.00390625, 0.015625, 0.0625, 0.25]

    Raises
    ------
    UnitError
        For a malformed range or a fraction that is not a number > 0, naming the text.
    """
    return _geometric_range(text, parse_positive_fraction, "0 < LOW ≤ HIGH")


def parse_positive_count(text: str) -> int:
    """:func:`parse_count` of `text`, which must be ≥ 1 (:class:`~simnet.errors.UnitError` naming it otherwise)."""
    count = parse_count(text)
    if count < 1:
        raise UnitError(f"must be ≥ 1, got {text!r}")
    return count


def parse_positive_fraction(text: str) -> float:
    """:func:`parse_fraction` of `text`, which must be > 0 (:class:`~simnet.errors.UnitError` naming it otherwise)."""
    value = parse_fraction(text)
    if not value > 0:
        raise UnitError(f"must be > 0, got {text!r}")
    return value


def _geometric_range(text: str, parse, bounds_rule: str) -> list:
    """The values of a range ``LOW..HIGH[:xN]`` or a comma-separated list (sorted, each once), each read by
    `parse`: ``LOW, LOW·N, LOW·N², …`` while below ``HIGH`` (N = 2 without a step), then ``HIGH``."""
    if ".." not in text:
        return sorted({parse(part.strip()) for part in text.split(",")})
    bounds, _, step = text.partition(":")
    low_text, _, high_text = bounds.partition("..")
    low, high = parse(low_text.strip()), parse(high_text.strip())
    factor = 2
    if step:
        step = step.strip()
        if not (step.startswith("x") and step[1:].isdigit() and int(step[1:]) >= 2):
            raise UnitError(f"expected a step such as ':x4' after the range, got {text!r}")
        factor = int(step[1:])
    if not low <= high:
        raise UnitError(f"expected a range 'LOW..HIGH' with {bounds_rule}, got {text!r}")
    below = high if isinstance(high, int) else high * (1 - 1e-9)
    values = [low]
    while low * factor ** len(values) < below:
        values.append(low * factor ** len(values))
    if values[-1] != high:
        values.append(high)
    return values


def parse_time(text: str | int | float) -> float:
    """Parse a duration into seconds.

    Parameters
    ----------
    text : str or int or float
        ``"1 us"`` (or ``"1 µs"``), ``"500 ns"``, ``"2 ms"``, ``"0.5 s"`` (or ``0``).

    Returns
    -------
    float
        Duration in seconds.
    """
    return _parse(text, _TIME_UNITS, "time", "1 us")


def parse_bandwidth(text: str | int | float) -> float:
    """Parse a data rate into bytes per second.

    Parameters
    ----------
    text : str or int or float
        ``"25 GB/s"``, ``"12.5GBps"``, ``"100 Gbps"``, ``"200 Gb/s"``, ``"10 Gbit/s"``.

    Returns
    -------
    float
        Rate in bytes per second (``"100 Gbps"`` is ``12.5e9``).
    """
    return _parse(text, _BANDWIDTH_UNITS, "bandwidth", "25 GB/s")


def parse_fraction(text: str | int | float) -> float:
    """Parse a fraction written as ``0.01``, ``"1%"`` or ``"1/128"``.

    Returns
    -------
    float
        The fraction as a plain number (``"1/128"`` is ``0.0078125``).
    """
    if isinstance(text, str):
        stripped = text.strip()
        if stripped.endswith("%"):
            return _parse(stripped[:-1], {"": 1.0}, "fraction", "1/128") / 100
        if "/" in stripped:
            numerator, _, denominator = stripped.partition("/")
            try:
                top = _parse(numerator, {"": 1.0}, "fraction", "1/128")
                bottom = _parse(denominator, {"": 1.0}, "fraction", "1/128")
            except UnitError:
                raise UnitError(f"expected a fraction such as '1/128', '0.5%' or 0.01, got {text!r}") from None
            if bottom == 0:
                raise UnitError(f"fraction {text!r} divides by zero")
            return top / bottom
    return _parse(text, {"": 1.0}, "fraction", "1/128")


def parse_ratio(text: str | int | float) -> float:
    """Parse a ratio such as an oversubscription: ``2``, ``1.5``, ``"2:1"`` (vendor notation, N:M is N/M),
    ``"3/2"`` or ``"150%"``.

    >>> parse_ratio("2:1"), parse_ratio("3:2"), parse_ratio("1:2"), parse_ratio("3/2"), parse_ratio("200%")
    (2.0, 1.5, 0.5, 1.5, 2.0)

    Raises
    ------
    UnitError
        For text that is none of these forms, or a ratio that is not a finite number > 0, quoting the text.
    """
    expected = f"expected a ratio > 0 such as 2:1, 1.5, 3/2 or 150%, got {text!r}"
    if isinstance(text, str) and ":" in text:
        parts = text.split(":")
        if len(parts) != 2:
            raise UnitError(expected)
        try:
            top, bottom = (_parse(part, {"": 1.0}, "ratio", "2:1") for part in parts)
        except UnitError:
            raise UnitError(expected) from None
        value = top / bottom if bottom > 0 else math.nan
    else:
        try:
            value = parse_fraction(text)
        except UnitError:
            raise UnitError(expected) from None
    if not (math.isfinite(value) and value > 0):
        raise UnitError(expected)
    return value


def parse_count(text: str | int) -> int:
    """Parse a whole count with an optional prefix: ``"32M"`` is 32 000 000, ``"16Mi"`` is 16 * 2**20.

    Decimal prefixes (``k``, ``M``, ``G``, ...) are powers of 1000, binary ones
    (``Ki``, ``Mi``, ``Gi``, ...) powers of 1024, as for sizes.

    >>> parse_count("32M"), parse_count("1Ki"), parse_count(7)
    (32000000, 1024, 7)
    """
    value = _parse(text, _DECIMAL | _BINARY, "count", "32M")
    if value != math.floor(value):
        raise UnitError(f"count {text!r} is not a whole number")
    return int(value)


def _scaled(value: float, steps: list[tuple[float, str]], digits: int) -> str:
    magnitude = abs(value)
    factor, unit = steps[-1]
    for step_factor, step_unit in steps:
        if magnitude >= step_factor:
            factor, unit = step_factor, step_unit
            break
    text = f"{value / factor:.{digits}g}"
    return f"{text} {unit}"


def format_size(size_bytes: float, *, decimal: bool = False) -> str:
    """Format bytes with the largest binary prefix when exact, otherwise (or if `decimal`) a decimal one.

    >>> format_size(1024), format_size(1_000_000), format_size(3), format_size(1536 * 2**20)
    ('1 KiB', '1 MB', '3 B', '1.5 GiB')
    >>> format_size(1536 * 2**20, decimal=True)
    '1.611 GB'
    """
    size = float(size_bytes)
    for factor, unit in ((2.0**50, "PiB"), (2.0**40, "TiB"), (2.0**30, "GiB"), (2.0**20, "MiB"), (2.0**10, "KiB")):
        if size >= factor and not decimal:
            mantissa = size / factor
            if mantissa * 1000 == round(mantissa * 1000) and mantissa < 1024:
                return f"{mantissa:g} {unit}"
            break
    steps = [(1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "B")]
    return _scaled(size, steps, 4)


def format_size_span(first_bytes: float, last_bytes: float) -> str:
    """Sizes from `first_bytes` to `last_bytes` as ``"1 KiB .. 64 MiB"``, or the one size when they are equal.

    >>> format_size_span(1024, 1 << 26), format_size_span(1 << 26, 1 << 26)
    ('1 KiB .. 64 MiB', '64 MiB')
    """
    if first_bytes == last_bytes:
        return format_size(first_bytes)
    return f"{format_size(first_bytes)} .. {format_size(last_bytes)}"


def format_size_bound(size_bytes: int) -> str:
    """Exactly `size_bytes`, in binary units only: the largest binary unit that holds it whole, one byte less than
    such a size as ``"32 MiB - 1 B"``, else bytes (for bounds such as MSCCL's minBytes/maxBytes).

    >>> format_size_bound(16 * 2**20), format_size_bound(2030 * 2**10), format_size_bound(32 * 2**20 - 1)
    ('16 MiB', '2030 KiB', '32 MiB - 1 B')
    >>> format_size_bound(0), format_size_bound(1023), format_size_bound(1_000_000)
    ('0 B', '1 KiB - 1 B', '1000000 B')
    """
    size = int(size_bytes)

    def whole(n: int) -> str | None:
        for shift, unit in ((50, "PiB"), (40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")):
            if n >= 1 << shift and n % (1 << shift) == 0:
                return f"{n >> shift} {unit}"
        return None

    return whole(size) or (f"{whole(size + 1)} - 1 B" if whole(size + 1) else f"{size} B")


def format_time(time_s: float) -> str:
    """Format seconds with the largest unit that keeps the mantissa ≥ 1.

    >>> format_time(0.010126), format_time(2e-6)
    ('10.13 ms', '2 us')
    """
    if time_s == 0:
        return "0 s"
    steps = [(1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns"), (1e-12, "ps")]
    return _scaled(time_s, steps, 4)


def format_bandwidth(bandwidth_Bps: float) -> str:
    """Format bytes per second with a decimal prefix, as nccl-tests prints GB/s.

    >>> format_bandwidth(12.5e9)
    '12.5 GB/s'
    """
    steps = [(1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s"), (1.0, "B/s")]
    return _scaled(bandwidth_Bps, steps, 4)


_EXACT_UNITS = {
    "bandwidth": (
        (1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s"), (1.0, "B/s"),
        (1e12 / 8, "Tb/s"), (1e9 / 8, "Gb/s"), (1e6 / 8, "Mb/s"),
    ),
    "time": ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns"), (1e-12, "ps")),
    "size": ((2.0**30, "GiB"), (2.0**20, "MiB"), (2.0**10, "KiB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "B")),
}
_BASE_UNITS = {"bandwidth": "B/s", "time": "s", "size": "B"}


def format_exact(value: float, kind: str) -> str:
    """The shortest unit string for `value` that parses back to exactly `value`.

    `kind` is ``"size"``, ``"time"`` or ``"bandwidth"``. A mantissa below 1 counts
    two characters more; among equally short ones byte units come first; when no
    prefix gives an exact short form, the base unit with the full float.

    >>> format_exact(25e9, "bandwidth"), format_exact(5e-7, "time"), format_exact(12.5e9, "bandwidth")
    ('25 GB/s', '0.5 us', '100 Gb/s')
    >>> format_exact(10**6, "size"), format_exact(3 * 2**20 + 1, "size")
    ('1 MB', '3145729 B')
    """
    parse = {"bandwidth": parse_bandwidth, "time": parse_time, "size": parse_size}[kind]
    best = None
    for factor, unit in _EXACT_UNITS[kind]:
        text = f"{value / factor:.15g}"
        if "e" in text:
            continue
        try:
            if parse(f"{text} {unit}") != value:
                continue
        except UnitError:
            continue
        score = len(text) + 2 * text.startswith(("0.", "-0."))
        if best is None or score < best[0]:
            best = (score, text, unit)
    if best is None:
        return f"{int(value) if kind == 'size' else float(value)!r} {_BASE_UNITS[kind]}"
    return f"{best[1]} {best[2]}"
