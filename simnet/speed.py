"""Speed helpers that change no result.

:func:`gc_paused` pauses Python's cyclic garbage collector while a schedule is built
or simulated. Those phases allocate millions of small container objects
(transfers, flows, tuples) and create no reference cycles worth collecting, yet
every few hundred allocations the collector would walk the young objects, and
ever more often the old ones: on a 130 560-transfer ring that walk took over half
of the run (see ``docs/performance.md``). Reference counting still frees every
object that is no longer used; cycles made meanwhile are collected once the
collector runs again. No value computed depends on when the collector runs.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]


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
