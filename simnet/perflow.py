"""Per-flow columns of the engine and the link models: NumPy views of growing ``array`` columns,
columns of one value kept as one, and grouping by instant.

Internal to :mod:`simnet.engine` and :mod:`simnet.links` (no public API); both keep per-flow
state in :class:`array.array` columns that grow as schedules are added, and read many flows at
once through NumPy views of them.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

import numpy as np

__all__ = ["TYPECODES", "view", "grown", "Constant", "appended", "take", "by_time"]

TYPECODES = {"d": np.float64, "q": np.int64, "i": np.int32}


def view(values: array | np.ndarray) -> np.ndarray:
    """A NumPy view of `values` (typecode ``"d"``, ``"q"`` or ``"i"``); `values` cannot grow in place while it
    exists (see :func:`grown`).

    A column that is already a NumPy array (as :mod:`simnet.kernel` leaves them) is its own view.
    """
    if isinstance(values, np.ndarray):
        return values
    return np.frombuffer(values, dtype=TYPECODES[values.typecode])


def grown(values: array | bytearray, more: array | bytes | np.ndarray) -> array | bytearray:
    """`values` with `more` appended, or a grown copy of `values` if it cannot grow.

    `more` is an ``array`` of the same type, raw bytes, or a NumPy array converted to the type of `values`
    (an ``array``; a ``bytearray`` takes bytes).

    A column cannot grow in place while a NumPy view of it exists: a trace holds views, and so does the
    frame of a function that made one and has returned, for as long as a sampling profiler (Dask's
    workers run one) still holds that frame. Every growth of the engine's and the link model's columns
    goes through here, and the owner keeps what it returns; nothing may hold the column across the call.
    """
    if isinstance(more, np.ndarray):
        more = memoryview(np.ascontiguousarray(more, dtype=TYPECODES[values.typecode])).cast("B")
    try:
        _append(values, more)
    except BufferError:
        values = values[:]
        _append(values, more)
    return values


def _append(values: array | bytearray, more: array | bytes | memoryview) -> None:
    """Append `more` to `values` in place (raises ``BufferError`` while a view of `values` exists)."""
    if isinstance(values, bytearray) or isinstance(more, array):
        values.extend(more)
    else:
        values.frombytes(more)


class Constant:
    """A per-flow column of `length` equal values, kept as one (``column[flow]`` is `value`)."""

    __slots__ = ("value", "length")

    def __init__(self, value: float = 0.0, length: int = 0) -> None:
        self.value = value
        self.length = length

    def __getitem__(self, flow: int) -> float:
        return self.value

    def __len__(self) -> int:
        return self.length


def appended(column: array | np.ndarray | Constant, values: np.ndarray, typecode: str = "d", *,
             adopt: bool = False) -> array | np.ndarray | Constant:
    """`column` with `values` appended: still one value while they all have its bits, else an ``array``.

    With `adopt`, values given to an empty column become the column as they are (a read-only NumPy array,
    no copy: a schedule's own column then serves the simulation); a later append copies them into an
    ``array`` first.
    """
    values = np.ascontiguousarray(values, dtype=TYPECODES[typecode])
    if isinstance(column, Constant):
        if not len(values):
            return column
        first = np.array([values[0] if not column.length else column.value], dtype=values.dtype)
        unsigned = f"u{values.itemsize}"
        if (values.view(unsigned) == first.view(unsigned)[0]).all():
            return Constant(first[0].item(), column.length + len(values))
        if adopt and not column.length:
            if values.flags.writeable:
                values = values.view()
                values.flags.writeable = False
            return values
        column = array(typecode, [column.value]) * column.length
    elif isinstance(column, np.ndarray):
        column = array(typecode, column.tobytes())
    return grown(column, values)


def take(values: Sequence, index: np.ndarray) -> np.ndarray:
    """``values[index]`` of a per-flow column: an ``array`` (read through :func:`view`), a :class:`Constant`
    or any sequence."""
    if isinstance(values, Constant):
        return np.full(len(index), values.value)
    if isinstance(values, array):
        return view(values)[index]
    return np.asarray(values)[index]


def by_time(time_s: np.ndarray, items: np.ndarray):
    """``(time, items at that time as a list)`` for each distinct time, items in their order."""
    if not len(time_s):
        return
    first = time_s[0]
    if (time_s == first).all():
        yield float(first), items.tolist()
        return
    order = np.argsort(time_s, kind="stable")
    ordered = time_s[order]
    cuts = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
    for group in np.split(order, cuts):
        yield float(time_s[group[0]]), items[group].tolist()
