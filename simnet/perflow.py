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

__all__ = ["TYPECODES", "view", "grown", "extend", "Constant", "appended", "take", "by_time"]

TYPECODES = {"d": np.float64, "q": np.int64, "i": np.int32}


def view(values: array | np.ndarray) -> np.ndarray:
    """A NumPy view of `values` (typecode ``"d"``, ``"q"`` or ``"i"``); it must be gone before `values` grows.

    A column that is already a NumPy array (as :mod:`simnet.kernel` leaves them) is its own view.
    """
    if isinstance(values, np.ndarray):
        return values
    return np.frombuffer(values, dtype=TYPECODES[values.typecode])


def extend(values: array, more: np.ndarray) -> None:
    """Append the elements of `more` to `values`, converted to its type (``"d"``, ``"q"`` or ``"i"``), without
    a Python object per element."""
    values.frombytes(memoryview(np.ascontiguousarray(more, dtype=TYPECODES[values.typecode])).cast("B"))


def grown(values: array, more: array) -> array:
    """`values` with `more` appended, or a grown copy if a trace holds a view of `values` (it cannot grow then)."""
    try:
        values.extend(more)
    except BufferError:
        values = values[:]
        values.extend(more)
    return values


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


def appended(column: array | Constant, values: np.ndarray, typecode: str = "d") -> array | Constant:
    """`column` with `values` appended: still one value while they all have its bits, else an ``array``."""
    values = np.ascontiguousarray(values, dtype=TYPECODES[typecode])
    if isinstance(column, Constant):
        if not len(values):
            return column
        first = np.array([values[0] if not column.length else column.value], dtype=values.dtype)
        unsigned = f"u{values.itemsize}"
        if (values.view(unsigned) == first.view(unsigned)[0]).all():
            return Constant(first[0].item(), column.length + len(values))
        column = array(typecode, [column.value]) * column.length
    column.frombytes(values.tobytes())
    return column


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
