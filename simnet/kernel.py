"""The engine's loop under max-min sharing, compiled with Numba.

Internal to :mod:`simnet.engine` (no public API). :func:`_loop` is the loop of
:meth:`simnet.engine.Simulation._process`, :meth:`~simnet.engine.Simulation._finish` and
:class:`simnet.links.MaxMinLinks` (``advance``, ``_reshare``, ``_fill``, ``_assign``, ``submit``)
written once more over flat arrays, with the same floating-point operations in the same order (Numba
neither contracts nor reorders them without ``fastmath``). :func:`run` runs one schedule alone to its end
(:func:`simnet.engine.simulate`); a :class:`Loop` keeps the loop's state between calls, so that
:meth:`simnet.engine.Simulation._drive` can stop it before each event of a SimPy environment and at each
completed schedule, and hand it more transfers (:func:`simnet.jobs.run_jobs`):

* Instants are processed in increasing exact time. An instant's clock value
  (:meth:`~simnet.engine.Simulation._delay`) groups instants but never reorders them, so this is the
  environment's order. What happens at one instant is kept as events on one heap keyed by time; the
  order of the events of one instant does not matter, because the Python loop sorts the flows that
  start, finish and are issued there before it touches them, and a transfer's release and completion
  write only its own columns.
* Progressive filling pops links by ``(share, link)``, a total order, so any binary heap pops them in
  the order of :func:`heapq`. Under equal sharing the allocation of a component is a function of the
  multiset of its routes (:meth:`~simnet.links.MaxMinLinks._reshare`), so the loop remembers it, as the
  Python model does: per sorted tuple of routes, in an open-addressed table over a pool of per-flow rates
  and bottlenecks (:func:`_recall`, :func:`_keep`), forgotten whole when full. Which components either model
  remembers does not change a float. A flow alone on its links gets its lone rate, as there.
* There is no array path: the array paths of the Python model give the loop's floats.

``tests/test_kernel.py`` runs both engines on every Hypothesis topology with random waves of transfers,
alone and started by SimPy processes at drawn times and on completion, and on NCCL's and BlueConnect's
schedules, and compares whole traces, each flow's rate history and the submission order bit for bit.

The loop reads and writes its buffers through views that own nothing (:func:`_unowned`), so that Numba's
atomic reference counts are not paid every time an inlined helper takes an array; the buffers belong to
its :class:`Loop`, and what :func:`run` returns owns its memory (``tests/test_kernel.py`` checks that
each returned array has an owner).

The loop does not look at signals: Ctrl-C takes effect when it returns.
"""

from __future__ import annotations

import gc

import numpy as np
from numba import njit, types
from numba.extending import intrinsic
from numba.typed import List

__all__ = ["run"]

_FINISHING, _STARTING, _ISSUED, _REDUCED = 0, 1, 2, 3
_REMEMBERED_FLOWS = 2**17
"""Flows whose allocation the loop remembers at most (their components' routes, rates and bottlenecks), as the
Python model's :data:`simnet.links.FLOWS_REMEMBERED`; a component of more than half as many is filled every time."""
_REMEMBERED_COMPONENTS = 2**16
"""Slots of the table of remembered components (a power of two of at least 2, so that probing ends: at most half
of them are used)."""


@intrinsic
def _unowned(typingctx, arrays):
    """Views of the tuple `arrays` that own nothing (a null NRT meminfo), valid while the arrays live.

    Numba counts references to an array atomically, and every array handed to an inlined helper is one
    more reference for as long as the helper's loops run: on NCCL's tree the loop spent most of its time
    in those atomic additions (``docs/performance.md``, round eleven). ``NRT_incref`` and
    ``NRT_decref`` return before their atomic operation on a view that owns nothing; the caller of
    :func:`_loop` holds the owners for the whole call.
    """

    if not isinstance(arrays, types.BaseTuple) or not all(isinstance(kind, types.Array) for kind in arrays.types):
        return None

    def codegen(context, builder, signature, args):
        views = []
        for position, kind in enumerate(arrays.types):
            source = context.make_array(kind)(context, builder, builder.extract_value(args[0], position))
            view = context.make_array(kind)(context, builder)
            context.populate_array(view, data=source.data, shape=source.shape, strides=source.strides,
                                   itemsize=source.itemsize, meminfo=None)
            views.append(view._getvalue())
        return context.make_tuple(builder, signature.return_type, views)

    return arrays(arrays), codegen


@njit(cache=True)
def _grown(values, size, need):
    """A copy of `values` with its first `size` entries, at least `need` long (twice as long, or more)."""
    bigger = np.empty(max(2 * len(values), need), dtype=values.dtype)
    bigger[:size] = values[:size]
    return bigger


@njit(cache=True, inline="always")
def _sift(values, low, root, size):
    """Move ``values[low + root]`` down the max-heap of the `size` values from `low` until it is in place."""
    value = values[low + root]
    while True:
        child = 2 * root + 1
        if child >= size:
            break
        if child + 1 < size and values[low + child + 1] > values[low + child]:
            child += 1
        if values[low + child] <= value:
            break
        values[low + root] = values[low + child]
        root = child
    values[low + root] = value


@njit(cache=True, inline="always")
def _insertion(values, low, high):
    """Sort the short ``values[low:high]`` in place by insertion."""
    for i in range(low + 1, high):
        value = values[i]
        j = i - 1
        while j >= low and values[j] > value:
            values[j + 1] = values[j]
            j -= 1
        values[j + 1] = value


@njit(cache=True)
def _introsort(values, low, high, depth):
    """Sort ``values[low:high]`` in place: quicksort on a median of three, a range by heapsort once it lies
    `depth` splits deep (``n log n`` on any order with a depth of twice the size's logarithm), short ranges by
    insertion."""
    ranges = np.empty((64, 3), dtype=np.int64)
    ranges[0, 0], ranges[0, 1], ranges[0, 2] = low, high, depth
    stacked = 1
    while stacked:
        stacked -= 1
        low, high, depth = ranges[stacked, 0], ranges[stacked, 1], ranges[stacked, 2]
        while high - low > _SHORT:
            if depth == 0:
                size = high - low
                for root in range(size // 2 - 1, -1, -1):
                    _sift(values, low, root, size)
                for last in range(size - 1, 0, -1):
                    values[low], values[low + last] = values[low + last], values[low]
                    _sift(values, low, 0, last)
                break
            depth -= 1
            first, middle, last = values[low], values[(low + high) >> 1], values[high - 1]
            if first > middle:
                first, middle = middle, first
            if middle > last:
                middle = first if first > last else last
            i, j = low, high - 1
            while True:
                while values[i] < middle:
                    i += 1
                while values[j] > middle:
                    j -= 1
                if i >= j:
                    break
                values[i], values[j] = values[j], values[i]
                i += 1
                j -= 1
            split = j + 1
            if split - low < high - split:
                ranges[stacked, 0], ranges[stacked, 1], ranges[stacked, 2] = split, high, depth
                high = split
            else:
                ranges[stacked, 0], ranges[stacked, 1], ranges[stacked, 2] = low, split, depth
                low = split
            stacked += 1
        else:
            _insertion(values, low, high)


_SHORT = 24
"""Ranges of at most this many values are sorted by insertion."""


@njit(cache=True, inline="always")
def _sort(values, low, high):
    """Sort ``values[low:high]`` in place: by insertion when short, else by :func:`_introsort` (Numba's own
    quicksort, a median of three without a fallback, took quadratic time on the order in which the event heap
    pops the flows of one instant)."""
    if high - low > _SHORT:
        _introsort(values, low, high, 2 * int(np.log2(high - low)))
    else:
        _insertion(values, low, high)


@njit(cache=True, inline="always")
def _least_child(heap_time, size, at):
    """The earliest of the up to four children of position `at` in the 4-ary heap of `size` events (the first of
    equals), or -1. Four children are compared in two pairs, then the pairs' winners: selections the compiler
    can make without branches, which the data would mispredict."""
    first = 4 * at + 1
    if first + 3 < size:
        early = heap_time[first]
        left = first
        other = heap_time[first + 1]
        if other < early:
            left, early = first + 1, other
        late = heap_time[first + 2]
        right = first + 2
        other = heap_time[first + 3]
        if other < late:
            right, late = first + 3, other
        return right if late < early else left
    if first >= size:
        return -1
    least = first
    for child in range(first + 1, min(first + 4, size)):
        if heap_time[child] < heap_time[least]:
            least = child
    return least


@njit(cache=True, inline="always")
def _settle(heap_flow, heap_time, position, size, at, flow, time_s):
    """Place event ``(flow, time_s)`` at position `at` of the heap of `size` events or below, moving earlier
    children up."""
    while True:
        child = _least_child(heap_time, size, at)
        if child < 0 or time_s <= heap_time[child]:
            break
        heap_flow[at], heap_time[at] = heap_flow[child], heap_time[child]
        position[heap_flow[at]] = at
        at = child
    heap_flow[at], heap_time[at] = flow, time_s
    position[flow] = at


@njit(cache=True, inline="always")
def _schedule(heap_flow, heap_time, position, size, flow, time_s):
    """Put `flow`'s one pending event at `time_s` on the 4-ary heap of the first `size` flows (ordered by event
    time), or move it there; return the new size."""
    at = position[flow]
    if at < 0:
        at = size
        size += 1
    elif time_s > heap_time[at]:
        _settle(heap_flow, heap_time, position, size, at, flow, time_s)
        return size
    while at > 0:
        parent = (at - 1) >> 2
        if heap_time[parent] <= time_s:
            break
        heap_flow[at], heap_time[at] = heap_flow[parent], heap_time[parent]
        position[heap_flow[at]] = at
        at = parent
    heap_flow[at], heap_time[at] = flow, time_s
    position[flow] = at
    return size


@njit(cache=True, inline="always")
def _unschedule(heap_flow, heap_time, position, size):
    """Remove the earliest event (that of flow ``heap_flow[0]``) from the heap of `size` flows; return the new
    size."""
    position[heap_flow[0]] = -1
    size -= 1
    if size:
        _settle(heap_flow, heap_time, position, size, 0, heap_flow[size], heap_time[size])
    return size


@njit(cache=True, inline="always")
def _join(flow, slot, size_bytes, now, width, route, route_first, route_hops, route_flat, slot_of, slot_remaining,
          slot_rate, slot_since, slot_limit, holder_prev, holder_next, holder_flow, link_head, link_tail, link_count,
          touched, ntouched, touch):
    """`flow` starts draining at `now` in `slot` (no rate yet, `size_bytes` to go) and joins the holders of its
    links, last; with `touch`, its links are added to the `ntouched` links of `touched`. Returns how many
    `touched` holds then."""
    slot_of[flow] = slot
    slot_remaining[slot] = size_bytes
    slot_rate[slot] = 0.0
    slot_since[slot] = now
    slot_limit[slot] = -1
    route_id = route[flow]
    for h in range(route_hops[route_id]):
        link = route_flat[route_first[route_id] + h]
        node = slot * width + h
        holder_flow[node] = flow
        holder_next[node] = -1
        holder_prev[node] = link_tail[link]
        if link_tail[link] >= 0:
            holder_next[link_tail[link]] = node
        else:
            link_head[link] = node
        link_tail[link] = node
        link_count[link] += 1
        if touch:
            touched[ntouched] = link
            ntouched += 1
    return ntouched


@njit(cache=True, inline="always")
def _heap_push(keys, links, size, key, link):
    """Push ``(key, link)`` onto the heap of the first `size` entries (room is the caller's); return the new size."""
    position = size
    while position > 0:
        parent = (position - 1) >> 1
        if keys[parent] < key or (keys[parent] == key and links[parent] < link):
            break
        keys[position] = keys[parent]
        links[position] = links[parent]
        position = parent
    keys[position] = key
    links[position] = link
    return size + 1


@njit(cache=True, inline="always")
def _heap_pop(keys, links, size):
    """Remove and return the least ``(key, link)`` of the heap of `size` entries."""
    key, link = keys[0], links[0]
    size -= 1
    last_key, last_link = keys[size], links[size]
    position = 0
    while True:
        child = 2 * position + 1
        if child >= size:
            break
        if child + 1 < size and (keys[child + 1] < keys[child]
                                 or (keys[child + 1] == keys[child] and links[child + 1] < links[child])):
            child += 1
        if last_key < keys[child] or (last_key == keys[child] and last_link < links[child]):
            break
        keys[position] = keys[child]
        links[position] = links[child]
        position = child
    keys[position] = last_key
    links[position] = last_link
    return key, link


@njit(cache=True, inline="always")
def _weight(link, link_head, holder_next, holder_flow, route, route_weight, slot_of, fixed, stamp):
    """The weights of the unfixed holders of `link`, summed in the order they joined it (as Python's ``sum``)."""
    weight = 0.0
    first = True
    node = link_head[link]
    while node >= 0:
        flow = holder_flow[node]
        if fixed[slot_of[flow]] != stamp:
            value = route_weight[route[flow]]
            weight = value if first else weight + value
            first = False
        node = holder_next[node]
    return weight


@njit(cache=True, inline="always")
def _fill(links, nlinks, link_head, holder_next, holder_flow, link_count, capacity_Bps, route, route_first,
          route_hops, route_flat, route_weight, weighted, cap, count, total, slot_of, fixed, stamp, out_rate,
          out_limit, heap_keys, heap_links, holders):
    """Progressive filling over the first `nlinks` of `links` (sorted), as :meth:`simnet.links.MaxMinLinks._fill`:
    each flow's rate and bottleneck into `out_rate` and `out_limit` at its slot."""
    size = 0
    for position in range(nlinks):
        link = links[position]
        cap[link] = capacity_Bps[link]
        count[link] = link_count[link]
        if weighted:
            total[link] = _weight(link, link_head, holder_next, holder_flow, route, route_weight, slot_of, fixed,
                                  stamp)
        else:
            total[link] = count[link]
        size = _heap_push(heap_keys, heap_links, size, cap[link] / total[link], link)
    floor = 0.0
    while size > 0:
        share, link = _heap_pop(heap_keys, heap_links, size)
        size -= 1
        if count[link] == 0:
            continue
        current = cap[link] / total[link]
        if current != share:
            size = _heap_push(heap_keys, heap_links, size, current, link)
            continue
        if floor > share:
            share = floor
        floor = share
        held = 0
        node = link_head[link]
        while node >= 0:
            holders[held] = holder_flow[node]
            held += 1
            node = holder_next[node]
        _sort(holders, 0, held)
        for position in range(held):
            flow = holders[position]
            slot = slot_of[flow]
            if fixed[slot] == stamp:
                continue
            route_id = route[flow]
            rate = share * route_weight[route_id] if weighted else share
            fixed[slot] = stamp
            out_rate[slot] = rate
            out_limit[slot] = link
            for k in range(route_first[route_id], route_first[route_id] + route_hops[route_id]):
                other = route_flat[k]
                cap[other] -= rate
                count[other] -= 1
                if weighted:
                    total[other] = _weight(other, link_head, holder_next, holder_flow, route, route_weight, slot_of,
                                           fixed, stamp)
                else:
                    total[other] = count[other]


_ROUTE_SHIFT = 31
"""A component's key packs each flow as ``route << _ROUTE_SHIFT | flow`` (flows are int32)."""
_FLOW_MASK = (1 << _ROUTE_SHIFT) - 1
"""The flow of a packed key: ``key & _FLOW_MASK``."""


@njit(cache=True, inline="always")
def _digest(keys, size):
    """FNV-1a over the routes of the first `size` packed `keys` (sorted): the multiset of a component's routes."""
    digest = np.uint64(14695981039346656037)
    for position in range(size):
        digest = (digest ^ np.uint64(keys[position] >> _ROUTE_SHIFT)) * np.uint64(1099511628211)
    return digest


@njit(cache=True, inline="always")
def _recall(memo_digest, memo_start, memo_size, memo_route, keys, size, digest):
    """Where the allocation of the routes of `keys` starts in the remembered pool, or -1 if it is not kept."""
    mask = np.uint64(len(memo_size) - 1)
    index = np.int64(digest & mask)
    while memo_size[index] != 0:
        if memo_digest[index] == digest and memo_size[index] == size:
            start = memo_start[index]
            same = True
            for position in range(size):
                if memo_route[start + position] != keys[position] >> _ROUTE_SHIFT:
                    same = False
                    break
            if same:
                return start
        index = np.int64((np.uint64(index) + np.uint64(1)) & mask)
    return -1


@njit(cache=True, inline="always")
def _keep(memo_digest, memo_start, memo_size, memo_route, memo_rate, memo_limit, keys, size, digest, slot_of,
          out_rate, out_limit, entries, used):
    """Remember the allocation just filled for the component of `keys` (forgetting every other first when the
    table is half full or the pool has no room); returns the new ``(entries, used)``."""
    if 2 * (entries + 1) > len(memo_size) or used + size > len(memo_route):
        memo_size[:] = 0
        entries = used = 0
    mask = np.uint64(len(memo_size) - 1)
    index = np.int64(digest & mask)
    while memo_size[index] != 0:
        index = np.int64((np.uint64(index) + np.uint64(1)) & mask)
    memo_digest[index] = digest
    memo_start[index] = used
    memo_size[index] = size
    for position in range(size):
        slot = slot_of[keys[position] & _FLOW_MASK]
        memo_route[used + position] = keys[position] >> _ROUTE_SHIFT
        memo_rate[used + position] = out_rate[slot]
        memo_limit[used + position] = out_limit[slot]
    return entries + 1, used + size


_DONE, _COMPLETED, _BOUND, _UNREACHABLE, _FULL = 0, 1, 2, 3, 4
(_EVENTS, _FREE, _HISTORY, _SUBMITTED, _BLOCKED, _STAMP, _COMPLETIONS, _MEMO_ENTRIES, _MEMO_USED,
 _SLOTS_NEEDED, _REPORTED, _INSTANTS) = range(12)


@njit(cache=True)
def _loop(now, bound, strict, initial, width, weighted, columns, routes, state, history_ints, history_reals,
          history_ends, counters):
    """Release `initial` at `now`, then process instants in time order until none is left, or until the next
    one is later than `bound`, or (`strict`) until one where a job completed is over, or until the next
    instant might start more flows than there are free slots (one per pending event) while the slots are
    fewer than ``counters[_SLOTS_NEEDED]``, the most that can drain at once.

    `columns` are the simulation's per-transfer columns (a column of length 1 holds one value for all),
    `routes` what the link model knows of its routes and links, `state` the buffers of :class:`Loop`,
    `counters` its counts (``_EVENTS`` ... ``_INSTANTS``), updated in place; a job completed counts as new
    when ``completed`` holds more than ``counters[_REPORTED]`` jobs, the number it held when
    :meth:`Loop.advance` was called (so a call after ``_FULL`` still reports it). With `strict`, every event
    time must be reachable from the instant that schedules it as a SimPy delay (``now + (t - now) == t``),
    so that the environment's clock is each instant's exact time. Returns ``(now, status)``: ``_DONE``,
    ``_COMPLETED`` (``completed`` has new jobs; the instant `now` is over), ``_BOUND``, ``_FULL`` (grow the
    slots and call again with nothing new) or ``_UNREACHABLE`` (an event time was not reachable; the state is
    then of no further use).
    """
    (route, line, nbytes, not_before, overhead, reduction, waiting, bounds, dependents, ready_s, issue_s, end_s,
     flow_job, in_order) = columns
    (route_first, route_hops, route_flat, route_latency_s, route_rate_Bps, route_limit, route_weight,
     capacity_Bps) = routes
    (slot_of, queue_next, place, kind_of, heap_flow, heap_time, blocked, order, passing, handing, finished,
     started_s, finished_s, free_slots, slot_remaining, slot_rate, slot_since, slot_limit, seen_slot, fixed,
     out_rate, out_limit, holders, component_flows, component_keys, allocated, holder_prev, holder_next,
     holder_flow, touched, busy, queue_head, queue_tail, link_head, link_tail, link_count, seen_link, cap, count_left,
     total, heap_keys, heap_links, component_links, stack, memo_digest, memo_start, memo_size, memo_route, memo_rate,
     memo_limit, job_left, completed) = state
    # The caller holds every array for the whole call; the loop works on views of them that own nothing.
    (
        initial, route, line, nbytes, not_before, overhead, reduction, waiting, bounds, dependents, ready_s,
        issue_s, end_s, flow_job, in_order, route_first, route_hops, route_flat, route_latency_s, route_rate_Bps,
        route_limit, route_weight, capacity_Bps, slot_of, queue_next, place, kind_of, heap_flow, heap_time,
        blocked, order, passing, handing, finished, started_s, finished_s, free_slots, slot_remaining, slot_rate,
        slot_since, slot_limit, seen_slot, fixed, out_rate, out_limit, holders, component_flows, component_keys,
        allocated, holder_prev, holder_next, holder_flow, touched, busy, queue_head, queue_tail, link_head,
        link_tail, link_count, seen_link, cap, count_left, total, heap_keys, heap_links, component_links, stack,
        memo_digest, memo_start, memo_size, memo_route, memo_rate, memo_limit, job_left, completed,
    ) = _unowned((
        initial, route, line, nbytes, not_before, overhead, reduction, waiting, bounds, dependents, ready_s,
        issue_s, end_s, flow_job, in_order, route_first, route_hops, route_flat, route_latency_s, route_rate_Bps,
        route_limit, route_weight, capacity_Bps, slot_of, queue_next, place, kind_of, heap_flow, heap_time,
        blocked, order, passing, handing, finished, started_s, finished_s, free_slots, slot_remaining, slot_rate,
        slot_since, slot_limit, seen_slot, fixed, out_rate, out_limit, holders, component_flows, component_keys,
        allocated, holder_prev, holder_next, holder_flow, touched, busy, queue_head, queue_tail, link_head,
        link_tail, link_count, seen_link, cap, count_left, total, heap_keys, heap_links, component_links, stack,
        memo_digest, memo_start, memo_size, memo_route, memo_rate, memo_limit, job_left, completed,
    ))
    history_flow, history_limit, history_s, history_rate = _unowned(
        (history_ints[0], history_ints[1], history_reals[0], history_reals[1]))
    history_end = _unowned((history_ends[0],))[0]
    ninstants = counters[_INSTANTS]
    nevents, nfree, nhistory = counters[_EVENTS], counters[_FREE], counters[_HISTORY]
    submitted, nblocked, stamp = counters[_SUBMITTED], counters[_BLOCKED], counters[_STAMP]
    ncompleted, completions = counters[_COMPLETIONS], counters[_REPORTED]
    nmemo, memo_used = counters[_MEMO_ENTRIES], counters[_MEMO_USED]
    remembers = not weighted and len(memo_size) > 0
    # Three buffers of one slot per transfer, each shared by two lists of distinct transfers: the flows that
    # finish (from the front) and start (from the back) in one pass of an instant; those done (front) and
    # issued (back) at an instant; those finished at an instant, and later those released.
    released = finished
    room = len(heap_flow)
    last = room - 1
    nended = nstarted = nfinished = ndone = nissued = ntouched = 0
    unreachable = False
    status = _DONE

    one_size = len(nbytes) == 1
    one_ready = len(not_before) == 1
    one_overhead = len(overhead) == 1
    one_reduction = len(reduction) == 1
    one_job = len(flow_job) == 1
    reduces = not (one_reduction and reduction[0] == 0.0)

    nreleased = len(initial)
    released[:nreleased] = initial
    while True:
        # Simulation._finish: complete `done`, release what waited for them, issue, submit in order.
        for position in range(ndone):
            flow = handing[position]
            end_s[flow] = now
            job = flow_job[0] if one_job else flow_job[flow]
            job_left[job] -= 1
            if job_left[job] == 0:
                completed[ncompleted] = job
                ncompleted += 1
            for k in range(bounds[flow], bounds[flow + 1]):
                child = dependents[k]
                waiting[child] -= 1
                if waiting[child] == 0:
                    released[nreleased] = child
                    nreleased += 1
        ndone = 0
        for position in range(nreleased):
            flow = released[position]
            ready = not_before[0] if one_ready else not_before[flow]
            if now > ready:
                ready = now
            ready_s[flow] = ready
            issue = ready + (overhead[0] if one_overhead else overhead[flow])
            issue_s[flow] = issue
            if issue <= now:
                handing[last - nissued] = flow
                nissued += 1
            else:
                kind_of[flow] = _ISSUED
                if strict and now + (issue - now) != issue:
                    unreachable = True
                nevents = _schedule(heap_flow, heap_time, place, nevents, flow, issue)
        nreleased = 0
        if nissued:
            _sort(handing, room - nissued, room)
            for position in range(room - nissued, room):
                flow = handing[position]
                route_id = route[flow]
                message = nbytes[0] if one_size else nbytes[flow]
                started_s[flow] = now
                order[submitted] = flow
                submitted += 1
                kind_of[flow] = _STARTING if route_hops[route_id] > 0 and message > 0 else _FINISHING
                at = now + route_latency_s[route_id]
                if strict and now + (at - now) != at:
                    unreachable = True
                nevents = _schedule(heap_flow, heap_time, place, nevents, flow, at)
            nissued = 0

        if unreachable:
            status = _UNREACHABLE
            break
        if strict and ncompleted > completions and (nevents == 0 or heap_time[0] > now):
            status = _COMPLETED
            break
        if nevents == 0:
            status = _DONE
            break
        if heap_time[0] > bound:
            status = _BOUND
            break
        if nfree < nevents and len(slot_remaining) < counters[_SLOTS_NEEDED]:
            status = _FULL
            break
        now = heap_time[0]

        # MaxMinLinks.advance: finishing and starting flows, until none is left at `now`.
        nfinished = 0
        while nevents and heap_time[0] == now:
            nended = nstarted = 0
            while nevents and heap_time[0] == now:
                flow = heap_flow[0]
                kind = kind_of[flow]
                nevents = _unschedule(heap_flow, heap_time, place, nevents)
                if kind == _FINISHING:
                    passing[nended] = flow
                    nended += 1
                elif kind == _STARTING:
                    passing[last - nstarted] = flow
                    nstarted += 1
                elif kind == _ISSUED:
                    handing[last - nissued] = flow
                    nissued += 1
                else:
                    handing[ndone] = flow
                    ndone += 1
            if nended == 0 and nstarted == 0:
                break
            _sort(passing, 0, nended)
            _sort(passing, room - nstarted, room)
            ntouched = 0
            for position in range(nended):
                flow = passing[position]
                finished[nfinished] = flow
                nfinished += 1
                finished_s[flow] = now
                slot = slot_of[flow]
                if slot < 0:
                    continue
                route_id = route[flow]
                for h in range(route_hops[route_id]):
                    link = route_flat[route_first[route_id] + h]
                    node = slot * width + h
                    before, after = holder_prev[node], holder_next[node]
                    if before >= 0:
                        holder_next[before] = after
                    else:
                        link_head[link] = after
                    if after >= 0:
                        holder_prev[after] = before
                    else:
                        link_tail[link] = before
                    link_count[link] -= 1
                    touched[ntouched] = link
                    ntouched += 1
                free_slots[nfree] = slot
                nfree += 1
                slot_of[flow] = -1
                connection = line[flow]
                successor = queue_head[connection]
                if successor < 0:
                    busy[connection] = False
                    continue
                queue_head[connection] = queue_next[successor]
                if queue_head[connection] < 0:
                    queue_tail[connection] = -1
                nfree -= 1
                _join(successor, free_slots[nfree], nbytes[0] if one_size else nbytes[successor], now, width, route,
                      route_first, route_hops, route_flat, slot_of, slot_remaining, slot_rate, slot_since, slot_limit,
                      holder_prev, holder_next, holder_flow, link_head, link_tail, link_count, touched, ntouched, False)
                successor_route = route[successor]
                started_s[successor] = now - route_latency_s[successor_route]
                blocked[nblocked] = successor
                nblocked += 1
            for position in range(room - nstarted, room):
                flow = passing[position]
                connection = line[flow]
                if busy[connection]:
                    tail = queue_tail[connection]
                    tag = in_order[0] if len(in_order) == 1 else in_order[flow]
                    before, after = -1, -1
                    if tag != 0:
                        after = queue_head[connection]
                        while after >= 0 and not (after > flow and (in_order[0] if len(in_order) == 1
                                                                    else in_order[after]) == tag):
                            before, after = after, queue_next[after]
                    if after < 0:
                        queue_next[flow] = -1
                        if tail >= 0:
                            queue_next[tail] = flow
                        else:
                            queue_head[connection] = flow
                        queue_tail[connection] = flow
                        continue
                    queue_next[flow] = after
                    if before < 0:
                        queue_head[connection] = flow
                    else:
                        queue_next[before] = flow
                    continue
                busy[connection] = True
                nfree -= 1
                ntouched = _join(flow, free_slots[nfree], nbytes[0] if one_size else nbytes[flow], now, width, route,
                                 route_first, route_hops, route_flat, slot_of, slot_remaining, slot_rate, slot_since,
                                 slot_limit, holder_prev, holder_next, holder_flow, link_head, link_tail, link_count,
                                 touched, ntouched, True)
            if ntouched == 0:
                continue

            # MaxMinLinks._reshare: the components of the touched links.
            stamp += 1
            nallocated = 0
            for position in range(ntouched):
                first_link = touched[position]
                if link_count[first_link] == 0 or seen_link[first_link] == stamp:
                    continue
                if link_count[first_link] == 1:
                    flow = holder_flow[link_head[first_link]]
                    route_id = route[flow]
                    alone = True
                    for k in range(route_first[route_id], route_first[route_id] + route_hops[route_id]):
                        if link_count[route_flat[k]] != 1:
                            alone = False
                            break
                    if alone:
                        for k in range(route_first[route_id], route_first[route_id] + route_hops[route_id]):
                            seen_link[route_flat[k]] = stamp
                        slot = slot_of[flow]
                        out_rate[slot] = route_rate_Bps[route_id]
                        out_limit[slot] = route_limit[route_id]
                        allocated[nallocated] = flow
                        nallocated += 1
                        continue
                nlinks_found = nflows_found = 0
                depth = 1
                stack[0] = first_link
                seen_link[first_link] = stamp
                while depth:
                    depth -= 1
                    link = stack[depth]
                    component_links[nlinks_found] = link
                    nlinks_found += 1
                    node = link_head[link]
                    while node >= 0:
                        flow = holder_flow[node]
                        slot = slot_of[flow]
                        if seen_slot[slot] != stamp:
                            seen_slot[slot] = stamp
                            component_flows[nflows_found] = flow
                            nflows_found += 1
                            route_id = route[flow]
                            for k in range(route_first[route_id], route_first[route_id] + route_hops[route_id]):
                                other = route_flat[k]
                                if seen_link[other] != stamp:
                                    seen_link[other] = stamp
                                    stack[depth] = other
                                    depth += 1
                        node = holder_next[node]
                remember = remembers and 2 * nflows_found <= len(memo_route)
                start = -1
                if remember:
                    for position in range(nflows_found):
                        flow = component_flows[position]
                        component_keys[position] = (np.int64(route[flow]) << _ROUTE_SHIFT) | flow
                    _sort(component_keys, 0, nflows_found)
                    digest = _digest(component_keys, nflows_found)
                    start = _recall(memo_digest, memo_start, memo_size, memo_route, component_keys, nflows_found,
                                    digest)
                if start >= 0:
                    for position in range(nflows_found):
                        slot = slot_of[component_keys[position] & _FLOW_MASK]
                        out_rate[slot] = memo_rate[start + position]
                        out_limit[slot] = memo_limit[start + position]
                else:
                    _sort(component_links, 0, nlinks_found)
                    _fill(component_links, nlinks_found, link_head, holder_next, holder_flow, link_count,
                          capacity_Bps, route, route_first, route_hops, route_flat, route_weight, weighted, cap,
                          count_left, total, slot_of, fixed, stamp, out_rate, out_limit, heap_keys, heap_links,
                          holders)
                    if remember:
                        nmemo, memo_used = _keep(memo_digest, memo_start, memo_size, memo_route, memo_rate,
                                                 memo_limit, component_keys, nflows_found, digest, slot_of, out_rate,
                                                 out_limit, nmemo, memo_used)
                _sort(component_flows, 0, nflows_found)
                allocated[nallocated:nallocated + nflows_found] = component_flows[:nflows_found]
                nallocated += nflows_found

            # MaxMinLinks._assign
            need = nhistory + nallocated
            if need > len(history_flow):
                for which in range(2):
                    history_ints[which] = _grown(history_ints[which], nhistory, need)
                history_reals[1] = _grown(history_reals[1], nhistory, need)
                history_flow, history_limit, history_s, history_rate = _unowned(
                    (history_ints[0], history_ints[1], history_reals[0], history_reals[1]))
            noted = nhistory
            for position in range(nallocated):
                flow = allocated[position]
                slot = slot_of[flow]
                rate = out_rate[slot]
                limit = out_limit[slot]
                old = slot_rate[slot]
                if rate == old and limit == slot_limit[slot]:
                    continue
                history_flow[nhistory] = flow
                history_rate[nhistory] = rate
                history_limit[nhistory] = limit
                nhistory += 1
                slot_limit[slot] = limit
                if rate == old:
                    continue
                if old > 0:
                    left = slot_remaining[slot] - old * (now - slot_since[slot])
                    slot_remaining[slot] = left if left > 0.0 else 0.0
                slot_since[slot] = now
                slot_rate[slot] = rate
                kind_of[flow] = _FINISHING
                at = now + slot_remaining[slot] / rate
                if strict and now + (at - now) != at:
                    unreachable = True
                nevents = _schedule(heap_flow, heap_time, place, nevents, flow, at)
            if nhistory > noted:
                if ninstants > 0 and history_s[ninstants - 1] == now:
                    history_end[ninstants - 1] = nhistory
                else:
                    if ninstants == len(history_s):
                        history_reals[0] = _grown(history_reals[0], ninstants, ninstants + 1)
                        history_ends[0] = _grown(history_ends[0], ninstants, ninstants + 1)
                        history_s = _unowned((history_reals[0],))[0]
                        history_end = _unowned((history_ends[0],))[0]
                    history_s[ninstants] = now
                    history_end[ninstants] = nhistory
                    ninstants += 1

        # Simulation._process: the finished transfers whose reduction takes time wait for it.
        _sort(finished, 0, nfinished)
        for position in range(nfinished):
            flow = finished[position]
            if reduces:
                reduced = now + (reduction[0] if one_reduction else reduction[flow])
                if reduced > now:
                    kind_of[flow] = _REDUCED
                    if strict and now + (reduced - now) != reduced:
                        unreachable = True
                    nevents = _schedule(heap_flow, heap_time, place, nevents, flow, reduced)
                    continue
            handing[ndone] = flow
            ndone += 1

    counters[_EVENTS], counters[_FREE], counters[_HISTORY] = nevents, nfree, nhistory
    counters[_SUBMITTED], counters[_BLOCKED], counters[_STAMP] = submitted, nblocked, stamp
    counters[_COMPLETIONS] = ncompleted
    counters[_MEMO_ENTRIES], counters[_MEMO_USED] = nmemo, memo_used
    counters[_INSTANTS] = ninstants
    return now, status


@njit(cache=True)
def _history():
    """The owners of the rate history: a list of two arrays per change (flow and bottleneck), a list of two of
    floats (the times of the instants with changes, and per change its rate), and a list of one array (per such
    instant, how many changes were made up to its end). An instant's changes are made together, so its time is
    kept once, not once per change (a ring all-reduce of 2 M transfers makes 3.6 M changes in 5 274 instants).
    The arrays grow; they are made here, compiled and cached, rather than from Python, which compiles the
    list's methods each time."""
    ints = List()
    ints.append(np.zeros(1024, dtype=np.int32))
    ints.append(np.zeros(1024, dtype=np.int32))
    reals = List()
    reals.append(np.zeros(1024, dtype=np.float64))
    reals.append(np.zeros(1024, dtype=np.float64))
    ends = List()
    ends.append(np.zeros(1024, dtype=np.int64))
    return ints, reals, ends


@njit(cache=True)
def _history_room(ints, reals, size, need):
    """Grow the per-change arrays of the rate history (:func:`_history`) to room for at least `need` changes,
    keeping the first `size`."""
    if need > len(ints[0]):
        for which in range(2):
            ints[which] = _grown(ints[which], size, need)
        reals[1] = _grown(reals[1], size, need)


@njit(cache=True)
def _history_slices(ints, reals, ends, size, instants):
    """``(flow, (time_s, end), rate_Bps, bottleneck)`` of the first `size` changes of rate, made in `instants`
    instants: slices of their owners, the times one per instant with the number of changes made up to its end
    (:meth:`simnet.links.MaxMinLinks._history_times` lays them out per change when a trace needs them). Compiled
    and cached: indexing the typed lists from Python compiles their methods in every process."""
    return ints[0][:size], (reals[0][:instants], ends[0][:instants]), reals[1][:size], ints[1][:size]


class Loop:
    """The buffers and counts of the compiled loop, kept between calls so that a simulation can stop at an
    instant and go on with more transfers (:meth:`simnet.engine.Simulation._drive`).

    Parameters
    ----------
    nlinks : int
        Links of the network.
    """

    def __init__(self, nlinks: int) -> None:
        if _REMEMBERED_COMPONENTS < 2 or _REMEMBERED_COMPONENTS & (_REMEMBERED_COMPONENTS - 1):
            raise ValueError(f"the table of remembered components needs a power of two of at least 2 slots, "
                             f"got {_REMEMBERED_COMPONENTS}")
        self.counters = np.zeros(12, dtype=np.int64)
        self.history_ints, self.history_reals, self.history_ends = _history()
        self.width = 1
        self._transfers = self._slots = self._lines = self._jobs = 0
        self._finished: np.ndarray | None = None
        self._arrays = {
            "link_head": np.full(nlinks, -1, dtype=np.int64), "link_tail": np.full(nlinks, -1, dtype=np.int64),
            "link_count": np.zeros(nlinks, dtype=np.int32), "seen_link": np.zeros(nlinks, dtype=np.int64),
            "cap": np.zeros(nlinks, dtype=np.float64), "count_left": np.zeros(nlinks, dtype=np.int32),
            "total": np.zeros(nlinks, dtype=np.float64), "heap_keys": np.zeros(nlinks, dtype=np.float64),
            "heap_links": np.zeros(nlinks, dtype=np.int32), "component_links": np.zeros(nlinks, dtype=np.int32),
            "stack": np.zeros(nlinks, dtype=np.int32),
            "memo_digest": np.zeros(_REMEMBERED_COMPONENTS, dtype=np.uint64),
            "memo_start": np.zeros(_REMEMBERED_COMPONENTS, dtype=np.int64),
            "memo_size": np.zeros(_REMEMBERED_COMPONENTS, dtype=np.int32),
            "memo_route": np.zeros(_REMEMBERED_FLOWS, dtype=np.int64),
            "memo_rate": np.zeros(_REMEMBERED_FLOWS, dtype=np.float64),
            "memo_limit": np.zeros(_REMEMBERED_FLOWS, dtype=np.int32),
        }
        for name, kind, fill in _PER_TRANSFER + _PER_SLOT + _PER_LINE + _PER_JOB:
            self._arrays[name] = np.empty(0, dtype=kind)
        self._arrays["holder_prev"] = np.empty(0, dtype=np.int64)
        self._arrays["holder_next"] = np.empty(0, dtype=np.int64)
        self._arrays["holder_flow"] = np.empty(0, dtype=np.int32)
        self._arrays["touched"] = np.empty(0, dtype=np.int32)

    @property
    def started_s(self) -> np.ndarray:
        """Per transfer reserved, when it entered the network (NaN if not yet), seconds."""
        return self._arrays["started_s"]

    @property
    def finished_s(self) -> np.ndarray:
        """Per transfer reserved, when its last byte arrived (NaN if not yet), seconds."""
        return self._arrays["finished_s"]

    @property
    def job_left(self) -> np.ndarray:
        """Per job reserved, how many of its transfers have not completed."""
        return self._arrays["job_left"]

    def share_finished(self, end_s: np.ndarray) -> None:
        """Keep :attr:`finished_s` in `end_s`, a run's completion times per transfer, before the first
        :meth:`reserve`: without reductions a transfer completes in the instant its last byte arrives, so
        both are written with the same times (and both stay NaN for a transfer never reached)."""
        self._finished = end_s

    def reserve(self, transfers: int, lines: int, width: int, job_sizes: np.ndarray) -> None:
        """Make room for `transfers` transfers on `lines` connections over routes of up to `width` links, and
        for the jobs whose sizes (transfers) `job_sizes` lists, those already known first; room that grows
        at least doubles. The rate history gets room for :data:`_CHANGES_PER_TRANSFER` changes per transfer.

        A connection drains one flow at a time, so at most ``min(lines, transfers)`` flows drain at once; the
        slots that hold them grow here (at least doubling) up to :data:`_FIRST_SLOTS` and beyond only when a
        run needs more (by :meth:`advance`, again at least doubling), so that a schedule of many connections
        used one after another (an all-to-all's ``p (p - 1)``) holds slots for the flows that drain together,
        not one per connection."""
        arrays = self._arrays
        slots = max(1, min(lines, transfers))
        self.counters[_SLOTS_NEEDED] = slots
        if transfers > self._transfers:
            room = max(transfers, 2 * self._transfers, 1)
            for name, kind, fill in _PER_TRANSFER:
                if name == "finished_s" and self._finished is not None:
                    if len(self._finished) < room:
                        raise ValueError(f"the shared finished times hold {len(self._finished)} transfers, not "
                                         f"{room}")
                    arrays[name] = self._finished
                    continue
                arrays[name] = _longer(arrays[name], self._transfers, room, fill)
            self._transfers = room
            _history_room(self.history_ints, self.history_reals, int(self.counters[_HISTORY]),
                          _CHANGES_PER_TRANSFER * room)
        if lines > self._lines:
            room = max(lines, 2 * self._lines)
            for name, kind, fill in _PER_LINE:
                arrays[name] = _longer(arrays[name], self._lines, room, fill)
            self._lines = room
        if len(job_sizes) > self._jobs:
            left = arrays["job_left"]
            arrays["job_left"] = np.concatenate([left, np.asarray(job_sizes[self._jobs:], dtype=np.int64)])
            arrays["completed"] = np.zeros(len(job_sizes), dtype=np.int32)
            self._jobs = len(job_sizes)
        width = max(width, self.width)
        first = min(slots, _FIRST_SLOTS)
        if first > self._slots:
            self._relayout(max(first, min(2 * self._slots, _FIRST_SLOTS)), width)
        elif width > self.width:
            self._relayout(self._slots, width)

    def _relayout(self, slots: int, width: int) -> None:
        """Grow the per-slot buffers to `slots` and the holder lists to `width` links per slot; a holder node
        ``slot * width + hop`` keeps its slot and hop."""
        arrays, old_slots, old_width = self._arrays, self._slots, self.width
        for name, kind, fill in _PER_SLOT:
            arrays[name] = _longer(arrays[name], old_slots, slots, fill)
        nfree = int(self.counters[_FREE])
        arrays["free_slots"][:slots - old_slots + nfree] = np.concatenate(
            [np.arange(slots - 1, old_slots - 1, -1, dtype=np.int32), arrays["free_slots"][:nfree]])
        self.counters[_FREE] = nfree + slots - old_slots

        def moved(nodes: np.ndarray) -> np.ndarray:
            return np.where(nodes >= 0, nodes // old_width * width + nodes % old_width, -1)

        for name, kind in (("holder_prev", np.int64), ("holder_next", np.int64), ("holder_flow", np.int32)):
            new = np.full(width * slots, -1, dtype=kind)
            old = arrays[name].reshape(old_slots, old_width) if old_slots else arrays[name].reshape(0, old_width)
            values = moved(old) if name != "holder_flow" else old
            new.reshape(slots, width)[:old_slots, :old_width] = values
            arrays[name] = new
        for name in ("link_head", "link_tail"):
            arrays[name] = moved(arrays[name])
        arrays["touched"] = np.zeros(2 * slots * width, dtype=np.int32)
        self._slots, self.width = slots, width

    def advance(self, now: float, bound: float, strict: bool, initial: np.ndarray, columns: tuple, routes: tuple,
                weighted: bool) -> tuple[float, int]:
        """Run :func:`_loop` on this state, growing its slots whenever it asks for more; see there."""
        arrays, counters = self._arrays, self.counters
        known = len(_loop.overloads)
        counters[_REPORTED] = counters[_COMPLETIONS]
        while True:
            state = tuple(arrays[name] for name in _STATE)
            result = _loop(now, bound, strict, initial, self.width, weighted, columns, routes, state,
                           self.history_ints, self.history_reals, self.history_ends, counters)
            del state
            if result[1] != _FULL:
                break
            now, initial = result[0], initial[:0]
            draining = self._slots - int(counters[_FREE])
            needed = int(counters[_SLOTS_NEEDED])
            self._relayout(max(2 * self._slots, min(needed, draining + int(counters[_EVENTS]))), self.width)
        if strict and len(_loop.overloads) > known:
            # Typing the loop leaves its arguments in reference cycles (exceptions caught on the way); while
            # they hold views of a driven simulation's columns, each growth of one copies it. (Collecting in every
            # first call would move what is alive then, the simulation included, to the oldest generation,
            # where it outlives the run.)
            gc.collect()
        return result

    def completed_jobs(self) -> list[int]:
        """The jobs that completed since the last call, in increasing order."""
        count = int(self.counters[_COMPLETIONS])
        self.counters[_COMPLETIONS] = 0
        return sorted(self._arrays["completed"][:count].tolist())

    @property
    def blocked(self) -> np.ndarray:
        """The transfers that waited for their connection, in the order they started draining."""
        return self._arrays["blocked"][:int(self.counters[_BLOCKED])]

    def results(self) -> tuple:
        """``(order, history_flow, history_instants, history_rate_Bps, history_limit, blocked)`` so far, as in
        :func:`run`."""
        counters = self.counters
        history = _history_slices(self.history_ints, self.history_reals, self.history_ends, int(counters[_HISTORY]),
                                  int(counters[_INSTANTS]))
        return (self._arrays["order"][:int(counters[_SUBMITTED])],) + history + (self.blocked,)


_CHANGES_PER_TRANSFER = 2
"""Changes of rate per transfer the rate history makes room for when a :class:`Loop` makes room for transfers.
Its pages are written only as changes are made, so room never used takes no memory, while growing a full history
held it twice for a moment: an all-to-all of 16.8 M transfers makes a change or so per transfer (its history, 16
bytes a change, doubled to 2**25 changes for its last few thousand), a ring about 1.7."""
_FIRST_SLOTS = 4096
"""Slots for draining flows a :class:`Loop` makes room for before a run shows it needs more."""
_PER_TRANSFER = (
    ("started_s", np.float64, np.nan), ("finished_s", np.float64, np.nan), ("order", np.int32, None),
    ("slot_of", np.int32, -1), ("place", np.int32, -1), ("kind_of", np.int8, 0),
    ("queue_next", np.int32, None), ("heap_flow", np.int32, None), ("heap_time", np.float64, None),
    ("blocked", np.int32, None), ("passing", np.int32, None), ("handing", np.int32, None),
    ("finished", np.int32, None),
)
"""Buffers of one entry per transfer: name, type, and the value of a new entry (``None``: written before it
is read; such pages of a fresh allocation that the run never reaches take no memory). Those a run writes in
full come first: allocated first, they take the memory that the engine's freed temporaries leave resident,
and the buffers a run touches here and there (an event heap, the flows of one instant) get fresh pages,
which cost nothing until touched (``docs/performance.md``, round thirteen, measures the peaks before and
after this order)."""
_PER_SLOT = (
    ("free_slots", np.int32, None), ("slot_remaining", np.float64, 0.0), ("slot_rate", np.float64, 0.0),
    ("slot_since", np.float64, 0.0), ("slot_limit", np.int32, 0), ("seen_slot", np.int64, 0),
    ("fixed", np.int64, 0), ("out_rate", np.float64, 0.0), ("out_limit", np.int32, 0), ("holders", np.int32, 0),
    ("component_flows", np.int32, 0), ("component_keys", np.int64, 0), ("allocated", np.int32, 0),
)
_PER_LINE = (("busy", np.bool_, False), ("queue_head", np.int32, -1), ("queue_tail", np.int32, -1))
_PER_JOB = (("job_left", np.int64, 0), ("completed", np.int32, 0))
_STATE = (
    "slot_of", "queue_next", "place", "kind_of", "heap_flow", "heap_time", "blocked", "order", "passing",
    "handing", "finished", "started_s", "finished_s", "free_slots", "slot_remaining", "slot_rate", "slot_since",
    "slot_limit", "seen_slot", "fixed", "out_rate", "out_limit", "holders", "component_flows", "component_keys",
    "allocated", "holder_prev", "holder_next", "holder_flow", "touched", "busy", "queue_head", "queue_tail",
    "link_head", "link_tail", "link_count", "seen_link", "cap", "count_left", "total", "heap_keys", "heap_links",
    "component_links", "stack", "memo_digest", "memo_start", "memo_size", "memo_route", "memo_rate", "memo_limit",
    "job_left", "completed",
)
"""The order of :func:`_loop`'s `state`."""


def _longer(values: np.ndarray, size: int, length: int, fill) -> np.ndarray:
    """`values` with its first `size` entries kept, `length` long; new entries `fill` (``None``: unset; zeros
    come from pages the system zeroes when first touched, which take no memory until then)."""
    if length <= len(values):
        return values
    if fill is None:
        longer = np.empty(length, dtype=values.dtype)
    elif fill == 0:
        longer = np.zeros(length, dtype=values.dtype)
    else:
        longer = np.full(length, fill, dtype=values.dtype)
    longer[:size] = values[:size]
    return longer


def run(start_s, initial, route, line, lines, nbytes, not_before, overhead, reduction, waiting, bounds, dependents,
        route_first, route_hops, route_flat, route_latency_s, route_rate_Bps, route_limit, route_weight, capacity_Bps,
        weighted, ready_s, issue_s, end_s, in_order):
    """Run the transfers `initial` (ready at `start_s`) and everything they release to the end.

    Per-transfer columns (`nbytes`, `not_before`, `overhead`, `reduction`, `in_order`) of length 1 hold one value
    for all; `line` numbers each transfer's connection, of `lines`; `in_order` is 0 or the number of the
    transfer's in-order schedule, and a transfer with one that finds its connection busy takes the place of the first
    waiting transfer of that schedule numbered after it (which moves back by one), the others queue last. `ready_s`,
    `issue_s` and `end_s` are filled in place; `waiting` is consumed. Returns ``(order, history_flow,
    history_instants, history_rate_Bps, history_limit, blocked, started_s, finished_s)``: the transfers in the order
    they were submitted, each change of a flow's rate or bottleneck in the order made (its time as
    ``history_instants``, the times of the instants with changes and the number of changes made up to the end of
    each), the flows that waited for their connection in the order they started draining (slices of longer buffers:
    copying them would double the peak), and when each transfer entered the network and when its last byte arrived
    (NaN for those never reached).

    State of a draining flow lives in one of ``min(lines, transfers)`` slots (a connection drains one flow
    at a time), and each transfer has at most one pending event (issued, starting, finishing or reduced):
    the events form an indexed heap on which a new finish moves the old one (the Python model leaves it
    stale and skips it by version).
    """
    count = len(route)
    loop = Loop(len(capacity_Bps))
    if len(reduction) == 1 and reduction[0] == 0.0:
        loop.share_finished(end_s)
    loop.reserve(count, lines, int(route_hops.max()) if len(route_hops) else 1, np.array([count]))
    columns = (route, line, nbytes, not_before, overhead, reduction, waiting, bounds, dependents, ready_s, issue_s,
               end_s, np.zeros(1, dtype=np.int32), in_order)
    routes = (route_first, route_hops, route_flat, route_latency_s, route_rate_Bps, route_limit, route_weight,
              capacity_Bps)
    loop.advance(start_s, np.inf, False, initial, columns, routes, weighted)
    return loop.results() + (loop.started_s, loop.finished_s)
