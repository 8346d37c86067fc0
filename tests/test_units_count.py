"""Tests of simnet.units.parse_count (counts such as a sparse payload's dimension)."""

import pytest

from simnet.errors import UnitError
from simnet.units import parse_count


@pytest.mark.parametrize(
    "text, count",
    [("32M", 32_000_000), ("128M", 128_000_000), ("16Mi", 16 * 2**20), ("1.5k", 1500), (7, 7), ("1_000", 1000)],
)
def test_counts_with_prefixes(text, count):
    assert parse_count(text) == count


@pytest.mark.parametrize("text", ["1.5", "3 MB", "many", True, None])
def test_bad_counts_raise_unit_errors(text):
    with pytest.raises(UnitError):
        parse_count(text)
