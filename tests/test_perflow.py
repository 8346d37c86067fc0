from array import array

import numpy as np
import pytest

from simnet.perflow import Constant, appended, grown, view


@pytest.mark.parametrize("more", [array("i", [7, -8]), np.array([7, -8], dtype=np.int64),
                                  array("i", [7, -8]).tobytes()], ids=["array", "ndarray", "bytes"])
def test_grown_appends_in_place_while_nothing_views_the_column(more):
    values = array("i", [1, 2])
    assert grown(values, more) is values
    assert values.tolist() == [1, 2, 7, -8]


@pytest.mark.parametrize("values,more,expected", [
    (array("d", [0.5]), np.array([1.5, 2.5]), [0.5, 1.5, 2.5]),
    (array("q", [3]), b"\xff" * 8, [3, -1]),
    (bytearray(b"\x01"), b"\x00\x02", [1, 0, 2]),
])
def test_grown_copies_a_column_something_views_and_leaves_the_view_as_it_was(values, more, expected):
    held = np.frombuffer(values, dtype=np.uint8) if isinstance(values, bytearray) else view(values)
    before = held.copy()
    result = grown(values, more)
    assert result is not values and list(result) == expected
    assert np.array_equal(held, before) and len(values) == len(before)


def test_appended_keeps_one_value_while_it_can_then_an_array_that_grows_by_copy_while_viewed():
    column = appended(Constant(), np.array([2.0, 2.0]))
    assert isinstance(column, Constant) and (column.value, column.length) == (2.0, 2)
    column = appended(column, np.array([3.0]))
    assert isinstance(column, array) and column.tolist() == [2.0, 2.0, 3.0]
    held = view(column)
    longer = appended(column, np.array([4.0]))
    assert longer.tolist() == [2.0, 2.0, 3.0, 4.0] and held.tolist() == [2.0, 2.0, 3.0]


def test_an_adopted_column_is_the_array_given_until_more_comes():
    """A schedule's own read-only column serves as the simulation's, uncopied; a second schedule's values copy it
    into an array that grows; values all alike stay one value."""
    values = np.array([1.5, 2.5])
    values.flags.writeable = False
    column = appended(Constant(), values, adopt=True)
    assert column is values
    fresh = np.array([1, 2], dtype=np.int32)
    taken = appended(Constant(0), fresh, "i", adopt=True)
    assert np.shares_memory(taken, fresh) and not taken.flags.writeable
    assert isinstance(appended(Constant(), np.array([3.0, 3.0]), adopt=True), Constant)
    longer = appended(column, np.array([4.0]), adopt=True)
    assert isinstance(longer, array) and longer.tolist() == [1.5, 2.5, 4.0] and values.tolist() == [1.5, 2.5]
