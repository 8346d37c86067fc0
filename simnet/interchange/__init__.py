"""Schedules in and out of other tools' formats.

``msccl``
    MSCCL XML algorithm files (msccl-tools, TACCL, the MSCCL executor and
    scheduler, RCCL): :func:`simnet.interchange.msccl.load` turns a file into a
    checked :class:`~simnet.schedule.Schedule`, :func:`simnet.interchange.msccl.dump`
    writes any dense all-reduce, all-gather or reduce-scatter schedule as one.

This package sits above :mod:`simnet.schedule` and :mod:`simnet.algorithms`; nothing
below it imports it.
"""

from __future__ import annotations

from simnet.interchange import msccl

__all__ = ["msccl"]
