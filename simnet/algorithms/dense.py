"""Dense all-reduce algorithms: functions of (ranks, size) that return a Schedule.

Schedules know ranks, never links: where a message goes on the network is the
engine's business.
"""

from __future__ import annotations

from simnet.errors import ScheduleError
from simnet.schedule import Schedule, Transfer, split_bytes

__all__ = ["ring_allreduce"]


def _check_args(nranks: int, size_bytes: int, chunks: int) -> None:
    if not isinstance(nranks, int) or nranks < 2:
        raise ScheduleError(f"must be an integer ≥ 2, got {nranks!r}", path="ranks")
    if not isinstance(size_bytes, int) or size_bytes < 1:
        raise ScheduleError(f"must be a whole number of bytes ≥ 1, got {size_bytes!r}", path="size")
    if not isinstance(chunks, int) or isinstance(chunks, bool) or chunks < 1:
        raise ScheduleError(f"must be an integer ≥ 1, got {chunks!r}", path="chunks")


def ring_allreduce(nranks: int, size_bytes: int, *, chunks: int = 1) -> Schedule:
    """Ring all-reduce: a reduce-scatter then an all-gather around the ring of ranks.

    The payload is split into ``nranks`` segments and each segment into ``chunks``
    pipelined sub-chunks (whole bytes; pieces differ by at most one byte). In step
    ``s`` of the reduce-scatter (``s = 0 .. p-2``) rank ``r`` sends segment
    ``(r - s) mod p`` to rank ``r + 1``, which adds it to its own; after ``p - 1``
    steps rank ``r`` holds the fully reduced segment ``(r + 1) mod p``. The
    all-gather then forwards the reduced segments ``p - 1`` more steps. Each
    sub-chunk's transfer depends only on the arrival of the same sub-chunk in the
    previous step, so sub-chunks pipeline through the ring.

    Parameters
    ----------
    nranks : int
        Number of ranks ``p`` ≥ 2; the ring is ``0 -> 1 -> … -> p-1 -> 0``.
    size_bytes : int
        Payload per rank ``n``, bytes.
    chunks : int, optional
        Sub-chunks per segment ``C`` (default 1).

    Returns
    -------
    Schedule
        ``2 (p - 1) p C`` transfers; chunk ``j`` of segment ``g`` has index ``g C + j``.

    References
    ----------
    Patarasuk, P. and Yuan, X. (2009). Bandwidth optimal all-reduce algorithms for
    clusters of workstations. J. Parallel Distrib. Comput. 69(2), 117-124.
    """
    _check_args(nranks, size_bytes, chunks)
    p = nranks
    chunk_bytes = [piece for segment in split_bytes(size_bytes, p) for piece in split_bytes(segment, chunks)]
    transfers: list[Transfer] = []
    previous: dict[tuple[int, int], int] = {}
    for step in range(2 * (p - 1)):
        reducing = step < p - 1
        current: dict[tuple[int, int], int] = {}
        for rank in range(p):
            segment = (rank - step) % p if reducing else (rank + 1 - (step - (p - 1))) % p
            for j in range(chunks):
                chunk = segment * chunks + j
                dep = previous.get(((rank - 1) % p, chunk))
                current[(rank, chunk)] = len(transfers)
                transfers.append(
                    Transfer(
                        src=rank,
                        dst=(rank + 1) % p,
                        chunks=(chunk,),
                        nbytes=chunk_bytes[chunk],
                        op="reduce" if reducing else "copy",
                        deps=() if dep is None else (dep,),
                        stage="reduce_scatter" if reducing else "all_gather",
                    )
                )
        previous = current
    return Schedule(
        collective="allreduce",
        nranks=p,
        chunk_bytes=tuple(chunk_bytes),
        transfers=tuple(transfers),
        algorithm="ring",
        params={"chunks": chunks},
    )
