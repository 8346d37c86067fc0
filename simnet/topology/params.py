"""Builder parameters between YAML and Python: unit strings, key names and calls.

In a file a builder parameter is written without its unit suffix and with a unit
string (``bandwidth: 25 GB/s`` for ``bandwidth_Bps``, ``latency: 1 us`` for
``latency_s``, ``size: 64 MiB`` for ``size_bytes``); the full Python name with a
plain SI number is accepted too. :func:`to_python` maps such a mapping onto a
builder's signature, :func:`to_yaml` writes it back with lossless unit strings,
and :func:`call` runs a builder, turning unknown or missing parameters into a
:class:`~simnet.errors.TopologyError` that names the key.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping

from simnet.errors import SimnetError, TopologyError, UnitError, did_you_mean
from simnet.units import format_exact, parse_bandwidth, parse_fraction, parse_ratio, parse_size, parse_time

__all__ = ["SUFFIXES", "to_python", "to_yaml", "call", "quantity", "parse_quantity", "written_number"]

SUFFIXES = {"_Bps": parse_bandwidth, "_s": parse_time, "_bytes": parse_size}

def _suffix(name: str) -> str:
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return suffix
    return ""


_KINDS = {"_Bps": "bandwidth", "_s": "time", "_bytes": "size"}


def quantity(name: str, value: float) -> str:
    """Shortest unit string for `value` of the parameter `name` that parses back exactly (:func:`simnet.units.format_exact`).

    >>> quantity("bandwidth_Bps", 25e9), quantity("latency_s", 5e-7), quantity("nic_bandwidth_Bps", 12.5e9)
    ('25 GB/s', '0.5 us', '100 Gb/s')
    """
    return format_exact(value, _KINDS[_suffix(name)])


def parse_quantity(suffix: str, value: object) -> float:
    """`value` (a unit string) of a parameter whose name ends in `suffix` (``_Bps``, ``_s``, ``_bytes``), in SI.

    A bandwidth must be positive, a time or a size not negative; the error quotes
    `value` as written.

    Raises
    ------
    UnitError
        For a bad unit or sign.
    """
    parsed = SUFFIXES[suffix](value)
    if suffix == "_Bps" and parsed <= 0:
        raise UnitError(f"must be a finite bandwidth > 0, got {value!r}")
    if parsed < 0:
        raise UnitError(f"must be a finite {_KINDS[suffix]} ≥ 0, got {value!r}")
    return parsed


def written_number(name: str, value: object, annotation: object = None) -> object:
    """`value` of the parameter `name` (of type `annotation`) as a number where it is text of a number: an
    ``oversubscription`` as a ratio (:func:`~simnet.units.parse_ratio`: ``2:1``, ``3/2``, ``150%``), an efficiency
    or another parameter of type ``float`` as a fraction (:func:`~simnet.units.parse_fraction`: ``85%``,
    ``17/20``); any other value as it is.

    >>> written_number("oversubscription", "3:2"), written_number("nvls_efficiency", "85%"), written_number("x", "a")
    (1.5, 0.85, 'a')

    Raises
    ------
    UnitError
        For such a parameter written as malformed text, quoting it.
    """
    if not isinstance(value, str):
        return value
    if name.endswith("oversubscription"):
        return parse_ratio(value)
    if name.endswith("efficiency") or annotation is float:
        return parse_fraction(value)
    return value


def _parameters(builder: Callable) -> dict[str, inspect.Parameter]:
    return dict(inspect.signature(builder).parameters)


def to_python(builder: Callable, params: Mapping, path: str = "") -> dict:
    """Map YAML keys with unit strings onto `builder`'s parameter names and SI floats.

    Raises
    ------
    TopologyError
        For a key the builder does not take (path ``path.key``) or a bad unit.
    """
    known = _parameters(builder)
    annotations = typing.get_type_hints(builder)
    result = {}
    for key, value in params.items():
        where = f"{path}.{key}" if path else str(key)
        name = key if key in known else next(
            (key + suffix for suffix in SUFFIXES if key + suffix in known), None
        )
        if name is None:
            expected = sorted(_yaml_name(p) for p in known)
            raise TopologyError(f"unknown parameter {key!r}{did_you_mean(str(key), expected)} (expected one of "
                                f"{expected})", path=where)
        suffix = _suffix(name)
        try:
            if suffix:
                value = parse_quantity(suffix, value)
            else:
                value = written_number(name, value, annotations.get(name))
        except UnitError as error:
            raise TopologyError(error.message, path=where) from None
        result[name] = value
    return result


def _yaml_name(name: str) -> str:
    suffix = _suffix(name)
    return name.removesuffix(suffix) if suffix else name


def to_yaml(builder: Callable, params: Mapping, *, keep_defaults: bool = False) -> dict:
    """Inverse of :func:`to_python`: YAML keys and unit strings.

    Parameters at their default are left out unless `keep_defaults`.
    """
    known = _parameters(builder)
    result = {}
    for name, value in params.items():
        parameter = known.get(name)
        default = parameter.default if parameter is not None else inspect.Parameter.empty
        if not keep_defaults and default is not inspect.Parameter.empty and default == value:
            continue
        suffix = _suffix(name)
        result[_yaml_name(name)] = quantity(name, value) if suffix and value is not None else value
    return result


def call(builder: Callable, params: Mapping, path: str = "", *, written: str = "python"):
    """Call `builder(**params)`, naming missing parameters and prefixing error paths with `path`.

    A missing parameter is named as its caller writes it, the other name beside it: ``'bandwidth_Bps' (bandwidth
    in a scenario file)`` for a call from Python (`written` ``"python"``, as an unknown parameter is named), and
    ``'bandwidth' (bandwidth_Bps)`` for parameters read from a file (``"yaml"``). Its key path is the file's
    (``fabric_params.bandwidth``) either way: a file's nested parameters reach this call under Python names.
    """
    known = _parameters(builder)
    for name in params:
        if name not in known:
            where = f"{path}.{name}" if path else str(name)
            raise TopologyError(f"unknown parameter {name!r}{did_you_mean(str(name), known)} (expected one of "
                                f"{sorted(known)})", path=where)
    for name, parameter in known.items():
        if parameter.default is inspect.Parameter.empty and name not in params:
            shown, other = (_yaml_name(name), name) if written == "yaml" else (name, f"{_yaml_name(name)} in a "
                                                                                       "scenario file")
            where = f"{path}.{_yaml_name(name)}" if path else _yaml_name(name)
            raise TopologyError(f"missing parameter {shown!r} ({other})", path=where)
    try:
        return builder(**params)
    except SimnetError as error:
        head, dot, rest = error.path.partition(".")
        inner = _yaml_name(head) + dot + rest
        joined = ".".join(p for p in (path, inner) if p)
        raise type(error)(error.message, path=joined, source=error.source) from None
