"""Speed helpers and the internal structures the fast paths rely on (no timing here)."""

import gc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simnet.algorithms import ALGORITHMS
from simnet.errors import ScheduleError
from simnet.schedule import Schedule, Transfer
from simnet import speed
from simnet.speed import KeyedRows, gc_paused, sorted_unique, unique_first, unique_inverse, with_room


def test_gc_paused_restores_the_collector_and_nests():
    assert gc.isenabled()
    with gc_paused():
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_gc_paused_restores_the_collector_after_an_error():
    with pytest.raises(ValueError), gc_paused():
        raise ValueError
    assert gc.isenabled()


@given(st.lists(st.integers(-2**40, 2**40), max_size=60), st.integers(0, 2**40), st.integers(1, 100))
def test_unique_inverse_is_numpys_unique_with_inverse_by_table_or_by_sort(values, low, narrow):
    """Wide spans take np.unique, narrow ones (values folded into `narrow` integers from `low`) the table."""
    for array in (np.array(values, dtype=np.int64), np.array([low + v % narrow for v in values], dtype=np.int64)):
        distinct, inverse = unique_inverse(array)
        expected, expected_inverse = np.unique(array, return_inverse=True)
        assert distinct.dtype == expected.dtype and np.array_equal(distinct, expected)
        assert np.array_equal(inverse, expected_inverse.ravel()) and np.array_equal(distinct[inverse], array)


@given(st.lists(st.integers(-2**63, 2**63 - 1), max_size=80), st.integers(1, 100))
def test_unique_first_is_numpys_unique_with_first_positions_and_inverse(values, narrow):
    """Runs of equal values in any order (values folded into `narrow` integers repeat often)."""
    for array in (np.array(values, dtype=np.int64), np.array([v % narrow for v in values], dtype=np.int64)):
        found = unique_first(array)
        expected = np.unique(array, return_index=True, return_inverse=True)
        for got, want in zip(found, expected):
            assert got.dtype == want.dtype and np.array_equal(got, want.ravel())


@given(st.lists(st.integers(-2**40, 2**40), max_size=60), st.sampled_from([np.int64, np.int32, np.uint32]))
def test_unique_inverse_by_hashing_is_numpys_unique_with_inverse(values, dtype):
    """A wide span of many values is hashed; here from the first value on, for every integer type."""
    info = np.iinfo(dtype)
    array = np.array([info.min + v % (int(info.max) - int(info.min)) for v in values], dtype=dtype)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(speed, "HASHED_FROM", 0)
        distinct, inverse = unique_inverse(array)
    expected, expected_inverse = np.unique(array, return_inverse=True)
    assert distinct.dtype == expected.dtype and np.array_equal(distinct, expected)
    assert inverse.dtype == expected_inverse.dtype and np.array_equal(inverse, expected_inverse.ravel())


def test_unique_inverse_hashes_a_wide_span_of_many_values():
    rng = np.random.default_rng(1)
    array = rng.integers(0, 2**40, speed.HASHED_FROM) * 7
    array[::3] = array[0]
    distinct, inverse = unique_inverse(array)
    expected, expected_inverse = np.unique(array, return_inverse=True)
    assert np.array_equal(distinct, expected) and np.array_equal(inverse, expected_inverse.ravel())


@given(st.lists(st.integers(0, 2**32 - 1), max_size=80), st.sampled_from([None, "stable"]))
def test_sorted_unique_is_numpys_unique_and_sorts_the_array_it_is_given(values, kind):
    array = np.array(values, dtype=np.uint32)
    expected = np.unique(array)
    distinct = sorted_unique(array, kind=kind)
    assert distinct.dtype == expected.dtype and np.array_equal(distinct, expected)
    assert np.array_equal(array, np.sort(values).astype(np.uint32))


@pytest.mark.parametrize("name", ["ring", "blueconnect", "recursive_doubling", "binomial_tree"])
def test_columns_match_the_transfers(name):
    schedule = ALGORITHMS[name].builder(8, 4096, chunks=2)
    columns = schedule.columns
    transfers = schedule.transfers
    assert columns.src.tolist() == [t.src for t in transfers]
    assert columns.dst.tolist() == [t.dst for t in transfers]
    assert columns.nbytes.tolist() == [t.nbytes for t in transfers]
    assert columns.reduce.tolist() == [t.op == "reduce" for t in transfers]
    deps = [columns.deps[a:b].tolist() for a, b in zip(columns.dep_offsets[:-1], columns.dep_offsets[1:])]
    assert deps == [list(t.deps) for t in transfers]
    assert not columns.src.flags.writeable


def test_columns_of_an_empty_schedule():
    columns = Schedule("allreduce", 1, (4,), ()).columns
    assert len(columns.src) == 0 and columns.dep_offsets.tolist() == [0]


@pytest.mark.parametrize(
    ("transfer", "message"),
    [
        (Transfer(0, 0, (0,), 4), "two distinct ranks"),
        (Transfer(0, 5, (0,), 4), "two distinct ranks"),
        (Transfer(0, 1, (3,), 4), "chunks must be in"),
        (Transfer(0, 1, (), 4), "chunks must be in"),
        (Transfer(0, 1, (0,), 4, op="sum"), "op must be"),
        (Transfer(0, 1, (0,), -1), "nbytes must be"),
        (Transfer(0, 1, (0,), 4, deps=(1,)), "dependencies must be earlier"),
    ],
)
def test_vectorized_validation_names_the_first_bad_transfer(transfer, message):
    good = Transfer(1, 0, (0,), 4)
    with pytest.raises(ScheduleError, match=rf"transfer 1 \(.*{message}"):
        Schedule("allreduce", 2, (4,), (good, transfer))


def test_numpy_fields_are_accepted_as_before():
    transfer = Transfer(np.int64(0), np.int64(1), (np.int64(0),), np.int64(4))
    assert len(Schedule("allreduce", 2, (4,), (transfer,)).columns.src) == 1


@given(st.lists(st.integers(-2**62, 2**62), max_size=300), st.sampled_from([np.int64, np.int32, np.uint16]),
       st.integers(1, 70_000))
def test_shared_ints_is_the_tuple_of_the_values_with_one_object_per_value(values, dtype, block):
    """Over narrow and wide spans, in blocks smaller and larger than the array (patched)."""
    array = np.array([v % 60_000 if dtype != np.int64 else v for v in values], dtype=dtype)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(speed, "_SHARED_BLOCK", block)
        shared = speed.shared_ints(array)
    assert type(shared) is tuple and shared == tuple(array.tolist())
    assert all(type(value) is int for value in shared)
    assert len({id(value) for value in shared}) == len(set(shared))


def test_an_all_to_all_schedules_ranks_and_chunk_sizes_share_their_ints():
    """``owners``, ``targets`` and ``chunk_bytes`` given as arrays are tuples of one int object per value."""
    schedule = ALGORITHMS["direct"].build(300, 300 * 1000)
    for ranks in (schedule.owners, schedule.targets, schedule.chunk_bytes):
        assert type(ranks) is tuple and len({id(value) for value in ranks}) == len(set(ranks))
    assert schedule.owners[:3] == (0, 0, 0) and schedule.chunk_bytes[0] == 1000


@given(st.lists(st.lists(st.tuples(st.integers(-2**40, 2**40), st.integers(0, 2**31 - 1)), max_size=20), max_size=6),
       st.lists(st.integers(-2**40, 2**40), max_size=20))
def test_keyed_rows_find_what_a_dict_of_first_rows_holds(batches, asked):
    """Rows added in batches of new keys (a key given twice in a batch keeps its first row), the table growing."""
    kept, expected = KeyedRows(2), {}
    for batch in batches:
        fresh = [(key, value) for key, value in batch if key not in expected]
        if fresh:
            kept.add(np.array([key for key, _ in fresh], dtype=np.int64),
                     np.array([[value, -value] for _, value in fresh], dtype=np.int64))
            for key, value in fresh:
                expected.setdefault(key, value)
    keys = np.array(asked + list(expected), dtype=np.int64)
    found = kept.find(keys)
    assert [None if at < 0 else tuple(kept.values[at]) for at in found.tolist()] == [
        None if key not in expected else (expected[key], -expected[key]) for key in keys.tolist()]


def test_with_room_doubles_and_keeps_what_was_used():
    values = np.arange(6).reshape(3, 2)
    assert with_room(values, 3, 3) is values
    grown = with_room(values, 2, 4)
    assert grown.shape == (6, 2) and grown.dtype == values.dtype and grown[:2].tolist() == [[0, 1], [2, 3]]
    assert with_room(values, 3, 10).shape == (10, 2)
