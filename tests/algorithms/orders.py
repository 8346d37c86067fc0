"""Compare schedules up to redundant dependencies: same messages, same partial order."""

from simnet.schedule import Schedule

__all__ = ["ancestors", "assert_same_schedule"]


def ancestors(schedule: Schedule) -> list[int]:
    """Per transfer, the bitmask of the transfers it (transitively) depends on."""
    table = schedule.transfers
    masks: list[int] = []
    for index in range(len(table)):
        mask = 0
        for d in table.deps_of(index).tolist():
            mask |= masks[d] | (1 << d)
        masks.append(mask)
    return masks


def wire(schedule: Schedule, *, stages: bool = True) -> list[tuple]:
    """What each transfer moves: ranks, chunks, bytes, op, buffers (and stage)."""
    return [(t.src, t.dst, t.chunks, t.nbytes, t.op, t.src_buffer, t.dst_buffer) + ((t.stage,) if stages else ())
            for t in schedule.transfers]


def assert_same_schedule(actual: Schedule, expected: Schedule, *, stages: bool = True) -> None:
    """Same transfers in the same order and the same partial order (dependency lists may differ by redundant edges)."""
    assert actual.chunk_bytes == expected.chunk_bytes
    assert wire(actual, stages=stages) == wire(expected, stages=stages)
    assert ancestors(actual) == ancestors(expected)
