"""Speed helpers that change no result.

:func:`gc_paused` pauses Python's cyclic garbage collector while a schedule is built
or simulated. Those phases allocate millions of small container objects
(transfers, flows, tuples) and create no reference cycles worth collecting, yet
every few hundred allocations the collector would walk the young objects, and
ever more often the old ones: on a 130 560-transfer ring that walk took over half
of the run (see ``docs/performance.md``). Reference counting still frees every
object that is no longer used; cycles made meanwhile are collected once the
collector runs again. No value computed depends on when the collector runs.

:func:`unique_inverse` is ``np.unique(values, return_inverse=True)`` for integers, by a
table over their range (no sort) when that range is no longer than the array, and by hashing
(:func:`pandas.factorize`, then a sort of the distinct values only) when a wider range holds many values;
:func:`shared_ints` is ``tuple(values.tolist())`` with one int object per distinct value;
:func:`sorted_unique` is ``np.unique`` of an array the caller hands over, sorted in place;
:func:`unique_first` is ``np.unique(values, return_index=True, return_inverse=True)`` for integers, by NumPy's
default (unstable) sort, which is faster than the stable sort ``np.unique`` needs for the first positions.

:class:`KeyedRows` keeps rows of numbers per integer key in two arrays sorted by key, where a dict of
Python ints would hold an object per key; :func:`with_room` grows an array by doubling.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import chain

import numpy as np

__all__ = ["KeyedRows", "gc_paused", "shared_ints", "sorted_unique", "unique_first", "unique_inverse", "with_room"]

_SHARED_BLOCK = 2**16
"""Entries :func:`shared_ints` makes ints for at a time."""
HASHED_FROM = 2**19
"""Values from which :func:`unique_inverse` hashes a wide range instead of sorting it (below, the sort
costs less than importing pandas, should nothing have imported it yet)."""


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic garbage collector inside the block (or decorated function).

    The collector is re-enabled on exit only if it was enabled on entry, so nested
    uses are safe.

    Examples
    --------
    >>> import gc
    >>> with gc_paused():
    ...     gc.isenabled()
    False
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def unique_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct values of a 1-D integer array and the index of each value among them.

    Equal to ``np.unique(values, return_inverse=True)``; when the values span no more
    integers than there are values, computed by marking them in a table over that span
    (linear time) instead of sorting; over a wider span, at :data:`HASHED_FROM` values or
    more, by :func:`pandas.factorize` (a hash table, then a sort of the distinct values
    only, which are few where they are a schedule's rank pairs).

    Examples
    --------
    >>> distinct, inverse = unique_inverse(np.array([7, 3, 7, 5]))
    >>> distinct.tolist(), inverse.tolist()
    ([3, 5, 7], [2, 0, 2, 1])
    """
    if not len(values):
        return np.unique(values, return_inverse=True)
    low = int(values.min())
    span = int(values.max()) - low + 1
    if span > len(values):
        if len(values) >= HASHED_FROM:
            import pandas as pd

            inverse, distinct = pd.factorize(values, sort=True)
            return distinct.astype(values.dtype, copy=False), inverse.astype(np.intp, copy=False)
        distinct, inverse = np.unique(values, return_inverse=True)
        return distinct, inverse.ravel()
    seen = np.zeros(span, dtype=bool)
    offset = values - low
    seen[offset] = True
    return np.flatnonzero(seen).astype(values.dtype) + low, (np.cumsum(seen, dtype=np.int64) - 1)[offset]


def shared_ints(values: np.ndarray) -> tuple[int, ...]:
    """A 1-D integer array as a tuple of Python ints in which equal values are one object.

    Equal to ``tuple(values.tolist())``, but a tuple of a million rank numbers or chunk sizes then takes
    8 bytes an entry (its pointer) instead of about 36 (the pointer and an int of its own, where the value
    is above the 256 Python keeps once); the ints are made a block at a time, so at most a block's of them
    exist besides the distinct values.

    Examples
    --------
    >>> shared = shared_ints(np.array([1000, 7, 1000]))
    >>> shared, shared[0] is shared[2]
    ((1000, 7, 1000), True)
    """
    if not len(values):
        return ()
    distinct, inverse = unique_inverse(np.asarray(values).ravel())
    objects = distinct.tolist()
    block = _SHARED_BLOCK
    return tuple(chain.from_iterable(map(objects.__getitem__, inverse[start:start + block].tolist())
                                     for start in range(0, len(inverse), block)))


def sorted_unique(values: np.ndarray, *, kind: str | None = None) -> np.ndarray:
    """The sorted distinct values of a 1-D array, sorting `values` itself (``np.unique`` copies it first,
    and NumPy 2's hash-based ``unique`` of integers is slower still here).

    `kind` is the sort's (``"stable"`` merges already sorted runs in linear time). Callers hand over an
    array of their own making: it is left sorted.

    Examples
    --------
    >>> sorted_unique(np.array([7, 3, 7, 5])).tolist()
    [3, 5, 7]
    """
    values.sort(kind=kind)
    keep = np.empty(values.size, dtype=bool)
    keep[:1] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def unique_first(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sorted distinct values of a 1-D integer array, the first position of each and the index of each value
    among them: ``np.unique(values, return_index=True, return_inverse=True)``.

    Sorted unstably; the first position of each value is then the smallest position
    the sort put in its run.

    Examples
    --------
    >>> distinct, first, inverse = unique_first(np.array([7, 3, 7, 5]))
    >>> distinct.tolist(), first.tolist(), inverse.tolist()
    ([3, 5, 7], [1, 3, 0], [2, 0, 2, 1])
    """
    if not len(values):
        return values[:0], np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    order = np.argsort(values)
    ordered = values[order]
    starts = np.empty(len(values), dtype=bool)
    starts[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    runs = np.flatnonzero(starts)
    inverse = np.empty(len(values), dtype=np.intp)
    inverse[order] = np.cumsum(starts) - 1
    return ordered[runs], np.minimum.reduceat(order, runs), inverse


class KeyedRows:
    """Rows of int32 numbers kept per int64 key, both in key order: 8 bytes a key and 4 a number, with no
    room kept spare (a table of every pair of 4096 GPUs holds 16.8 M keys)."""

    def __init__(self, width: int) -> None:
        self._keys = np.zeros(0, dtype=np.int64)
        self._values = np.zeros((0, width), dtype=np.int32)

    @property
    def values(self) -> np.ndarray:
        """The rows kept, in key order (:meth:`find` gives a key's position, valid until the next :meth:`add`)."""
        return self._values

    def find(self, keys: np.ndarray) -> np.ndarray:
        """The position in :attr:`values` of each of `keys`, -1 where none is kept."""
        if not len(self._keys):
            return np.full(len(keys), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self._keys, keys), len(self._keys) - 1)
        return np.where(self._keys[at] == keys, at, -1)

    def add(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Keep the rows `values` of `keys`, none kept yet; of a key given twice, the first row."""
        keys, once = np.unique(keys, return_index=True)
        rows = np.asarray(values)[once].astype(np.int32, copy=False)
        if not len(self._keys) or (len(keys) and keys[0] > self._keys[-1]):
            self._keys = np.concatenate([self._keys, keys])
            self._values = np.concatenate([self._values, rows])
            return
        at = np.searchsorted(self._keys, keys)
        self._keys = np.insert(self._keys, at, keys)
        self._values = np.insert(self._values, at, rows, axis=0)


def with_room(values: np.ndarray, used: int, needed: int) -> np.ndarray:
    """`values`, or a copy of its first `used` entries twice as long (or `needed` long) when it is shorter than
    `needed`."""
    if needed <= len(values):
        return values
    grown = np.empty((max(needed, 2 * len(values)), *values.shape[1:]), dtype=values.dtype)
    grown[:used] = values[:used]
    return grown
