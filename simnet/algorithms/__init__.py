"""Collective algorithms: each a function returning a :class:`~simnet.schedule.Schedule`.

``ALGORITHMS`` maps the names used on the command line and in scenario files to
``(collective, builder)``; every builder takes ``(nranks, size_bytes, **params)``.
"""

from __future__ import annotations

from types import MappingProxyType

from simnet.algorithms.dense import ring_allreduce

__all__ = ["ALGORITHMS", "ring_allreduce"]

ALGORITHMS = MappingProxyType({"ring": ("allreduce", ring_allreduce)})
