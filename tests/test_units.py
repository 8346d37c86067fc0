import itertools
import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from simnet.errors import SimnetError, UnitError
from simnet.units import (
    format_bandwidth,
    format_exact,
    format_size,
    format_size_bound,
    format_size_span,
    format_time,
    parse_bandwidth,
    parse_count_range,
    parse_fraction,
    parse_fraction_range,
    parse_ratio,
    parse_payload_size,
    parse_size,
    parse_size_range,
    parse_time,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("25 GB/s", 25e9),
        ("100 Gbps", 12.5e9),
        ("12.5GBps", 12.5e9),
        ("200 Gb/s", 25e9),
        ("10 Gbit/s", 1.25e9),
        ("1 GiB/s", 2**30),
        ("400 Gbps", 50e9),
        ("1e9 B/s", 1e9),
        (0, 0.0),
    ],
)
def test_parse_bandwidth(text, expected):
    assert parse_bandwidth(text) == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1 us", 1e-6), ("1 µs", 1e-6), ("500 ns", 500e-9), ("2 ms", 2e-3), ("0.5 s", 0.5), ("0", 0.0), (0, 0.0)],
)
def test_parse_time(text, expected):
    assert parse_time(text) == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("64 MiB", 64 * 2**20), ("1 KB", 1000), ("1 kB", 1000), ("1 KiB", 1024), ("1 GB", 10**9),
     ("1 GiB", 2**30), ("512B", 512), (0, 0), ("1.5 KiB", 1536), ("1_000 B", 1000)],
)
def test_parse_size(text, expected):
    assert parse_size(text) == expected
    assert isinstance(parse_size(text), int)


@pytest.mark.parametrize(
    ("parse", "text", "fragment"),
    [
        (parse_size, "64 Mb", "'Mb'"),
        (parse_size, "64 parsecs", "'parsecs'"),
        (parse_size, "0.5 B", "whole number"),
        (parse_bandwidth, "100 Gbs", "'100 Gbs'"),
        (parse_bandwidth, "fast", "'fast'"),
        (parse_time, "1 us us", "'1 us us'"),
        (parse_time, "3 GB", "'GB'"),
        (parse_time, "", "''"),
        (parse_time, True, "True"),
        (parse_size, None, "None"),
        (parse_bandwidth, "1e400 GB/s", "finite"),
        (parse_bandwidth, "nan GB/s", "nan"),
    ],
)
def test_bad_units_name_the_text(parse, text, fragment):
    with pytest.raises(UnitError, match=None) as raised:
        parse(text)
    assert fragment in str(raised.value)
    assert isinstance(raised.value, SimnetError)


@pytest.mark.parametrize(
    ("parse", "text", "fix"),
    [
        (parse_bandwidth, "100", "100 Gbps or 12.5 GB/s (100 B/s if bytes per second was meant)"),
        (parse_bandwidth, 1e9, "1 GB/s"),
        (parse_time, 3, "3 us or 3 ms (3 s if seconds was meant)"),
        (parse_time, 1e-6, "1 us"),
        (parse_size, 4096, "4 KiB"),
        (parse_size, "1e3", "1 kB"),
    ],
)
def test_numbers_without_units_are_refused_with_the_fix(parse, text, fix):
    with pytest.raises(UnitError) as raised:
        parse(text)
    assert str(raised.value) == f"{text!r} needs a unit, e.g. {fix}"


@pytest.mark.parametrize(("parse", "what"), [(parse_bandwidth, "bandwidth"), (parse_time, "time"),
                                             (parse_size, "size")])
def test_negative_numbers_without_units_are_refused_without_suggesting_a_negative_fix(parse, what):
    with pytest.raises(UnitError) as raised:
        parse("-5")
    assert str(raised.value).startswith(f"expected a {what} of at least 0 with a unit, such as '")
    assert str(raised.value).endswith("got '-5'")


@given(st.floats(min_value=1e-12, max_value=1e15, allow_nan=False))
def test_every_suggested_fix_parses(x):
    for parse in (parse_bandwidth, parse_time):
        with pytest.raises(UnitError) as raised:
            parse(x)
        fixes = str(raised.value).split("e.g. ", 1)[1].replace("(", " or ").replace(" if ", " or ").split(" or ")
        quantities = [fix.strip(" )") for fix in fixes if fix[:1].isdigit()]
        assert quantities
        for fix in quantities:
            assert parse(fix) > 0
        assert x in [parse(fix) for fix in quantities]


def test_fractions():
    assert parse_fraction("1/128") == 1 / 128
    assert parse_fraction("1%") == pytest.approx(0.01)
    assert parse_fraction(0.25) == 0.25
    with pytest.raises(UnitError):
        parse_fraction("1/0")


@pytest.mark.parametrize(("text", "expected"), [("2:1", 2.0), ("3:2", 1.5), ("1:2", 0.5), (" 4 : 1 ", 4.0),
                                              ("3/2", 1.5), ("200%", 2.0), ("1.5", 1.5), (2, 2), (0.5, 0.5)])
def test_a_ratio_takes_vendor_notation_fractions_and_percentages(text, expected):
    assert parse_ratio(text) == expected


@pytest.mark.parametrize("text", ["two", "2:1:1", "2:", ":1", "2:0", "0:1", "-2:1", "0", "-1", "1/0", "inf", True,
                                  None])
def test_a_malformed_ratio_is_refused_quoting_it(text):
    with pytest.raises(UnitError) as error:
        parse_ratio(text)
    assert error.value.message == f"expected a ratio > 0 such as 2:1, 1.5, 3/2 or 150%, got {text!r}"


def test_formatting():
    assert format_size(64 * 2**20) == "64 MiB"
    assert format_size(1000) == "1 kB"
    assert format_size(0) == "0 B"
    assert format_time(0.0101263296) == "10.13 ms"
    assert format_time(2e-6) == "2 us"
    assert format_time(0) == "0 s"
    assert format_time(5e-13) == "0.5 ps"
    assert format_bandwidth(12.5e9) == "12.5 GB/s"


@given(st.integers(min_value=0, max_value=2**62))
def test_plain_byte_counts_round_trip(n):
    assert parse_size(f"{n} B") == n


@given(st.integers(min_value=0, max_value=2**40))
def test_binary_sizes_format_and_parse_back(n):
    assert parse_size(format_size(n * 1024)) == pytest.approx(n * 1024, rel=1e-3)


@given(st.floats(min_value=1e-3, max_value=1e6, allow_nan=False))
def test_bits_are_an_eighth_of_bytes(x):
    assert parse_bandwidth(f"{x!r} Gbps") * 8 == pytest.approx(parse_bandwidth(f"{x!r} GB/s"), rel=1e-15)


@given(st.text(max_size=20))
def test_only_unit_errors_escape(text):
    for parse in (parse_size, parse_time, parse_bandwidth, parse_fraction):
        try:
            value = parse(text)
        except UnitError:
            continue
        assert math.isfinite(value)


@given(st.integers(0, 2**50))
def test_every_whole_size_formats_to_a_string_that_parses_back_exactly(nbytes):
    """Decimal sizes (1 MB, 100000000 B) too: a binary prefix that leaves a fraction of a byte is skipped."""
    assert parse_size(format_exact(nbytes, "size")) == nbytes


def test_decimal_sizes_format_with_decimal_prefixes():
    assert [format_exact(n, "size") for n in (10**6, 10**8, 3 * 2**20 + 1)] == ["1 MB", "100 MB", "3145729 B"]


def test_size_ranges():
    assert parse_size_range("1KiB..8KiB") == [1024, 2048, 4096, 8192]
    assert parse_size_range("1KiB..1GiB:x1024") == [2**10, 2**20, 2**30]
    assert parse_size_range("1 KiB, 64 MiB") == [1024, 64 * 2**20]
    assert parse_size_range("64 MiB,1 KiB,64MiB") == [1024, 64 * 2**20]
    for bad in ("8KiB..1KiB", "1KiB..1GiB:y2", "1KiB..1GiB:x1", "1 parsec..2 KiB"):
        with pytest.raises(UnitError):
            parse_size_range(bad)


def test_count_and_fraction_ranges_step_as_size_ranges_do():
    """Study r26 F9: a sparse payload's dimension and density take ranges as sizes do."""
    assert parse_count_range("256Ki..4Mi:x4") == [2**18, 2**20, 2**22]
    assert parse_count_range("1Mi..3Mi") == [2**20, 2**21, 3 * 2**20]
    assert parse_count_range("16M, 1M,16M") == [10**6, 16 * 10**6]
    assert parse_fraction_range("1/1024..1/4:x4") == [1 / 1024, 1 / 256, 1 / 64, 1 / 16, 1 / 4]
    assert parse_fraction_range("1/1024..1/128") == [1 / 1024, 1 / 512, 1 / 256, 1 / 128]
    assert parse_fraction_range("0.001..0.1:x10") == pytest.approx([0.001, 0.01, 0.1])
    assert len(parse_fraction_range("0.001..0.1:x10")) == 3
    assert parse_fraction_range("1%, 1/128") == [1 / 128, 0.01]
    for bad, message in (("4Mi..256Ki", "expected a range 'LOW..HIGH' with 1 ≤ LOW ≤ HIGH, got '4Mi..256Ki'"),
                         ("0..1Mi", "must be ≥ 1, got '0'"),
                         ("256Ki..4Mi:x4x", "expected a step such as ':x4' after the range, got '256Ki..4Mi:x4x'")):
        with pytest.raises(UnitError) as error:
            parse_count_range(bad)
        assert error.value.message == message
    for bad, message in (("1/4..1/1024", "expected a range 'LOW..HIGH' with 0 < LOW ≤ HIGH, got '1/4..1/1024'"),
                         ("0..1/4", "must be > 0, got '0'")):
        with pytest.raises(UnitError) as error:
            parse_fraction_range(bad)
        assert error.value.message == message


def test_a_fraction_that_is_not_one_is_quoted_whole():
    """Study r26 F9: '1/1024..1/4:x4' given as one fraction was refused quoting '1024..1/4:x4'."""
    for text in ("1/1024..1/4:x4", "1/1024/2", "1/x"):
        with pytest.raises(UnitError) as error:
            parse_fraction(text)
        assert error.value.message == f"expected a fraction such as '1/128', '0.5%' or 0.01, got {text!r}"


@pytest.mark.parametrize(("text", "bad"), [("-1KiB", "-1KiB"), ("0", "0"), ("1MiB, -4MiB", "-4MiB"),
                                           ("0 B..1 MiB", "0 B"), ("-2KiB..1KiB", "-2KiB")])
def test_a_range_or_list_of_sizes_holds_payloads_of_at_least_one_byte(text, bad):
    """The one rule of a scenario's sizes (parse_payload_size), for lists and ranges alike: no size is dropped."""
    with pytest.raises(UnitError) as error:
        parse_size_range(text)
    assert error.value.message == f"must be ≥ 1 B, got '{bad}'"
    assert parse_payload_size("1 B") == 1
    with pytest.raises(UnitError, match="must be ≥ 1 B"):
        parse_payload_size(0)


def test_a_span_of_one_size_is_that_size():
    assert format_size_span(1024, 1 << 30) == "1 KiB .. 1 GiB"
    assert format_size_span(64 << 20, 64 << 20) == "64 MiB"


@given(st.integers(min_value=0, max_value=2**52))
def test_a_size_bound_is_exact_and_binary(size_bytes):
    """MSCCL's minBytes/maxBytes as ``verify msccl`` prints them: never a decimal prefix, and the value itself."""
    text = format_size_bound(size_bytes)
    assert not any(unit in text for unit in (" kB", " MB", " GB", " TB", " PB"))
    whole, _, less = text.partition(" - ")
    assert parse_size(whole) - (1 if less else 0) == size_bytes and less in ("", "1 B")


def test_size_bounds_show_the_boundary():
    assert [format_size_bound(n) for n in (2**25 - 1, 2030 * 2**10, 20 * 2**20, 3 * 2**20 + 1)] == [
        "32 MiB - 1 B", "2030 KiB", "20 MiB", "3145729 B"]


def test_the_help_example_range_ends_at_its_upper_bound():
    """1 GiB is not 1 KiB times a power of 8, yet the range asked for ends there (issue 19)."""
    sizes = parse_size_range("1KiB..1GiB:x8")
    assert sizes == [2**10, 2**13, 2**16, 2**19, 2**22, 2**25, 2**28, 2**30]
    assert parse_size_range("1KiB..1GiB:x4") == [2 ** (10 + 2 * k) for k in range(11)]


@given(low=st.integers(1, 2**40), factor=st.integers(2, 16), steps=st.integers(0, 12), extra=st.integers(0, 2**45))
def test_ranges_include_both_ends_and_grow_by_the_factor(low, factor, steps, extra):
    reachable = low * factor**steps
    assume(reachable < 2**63 and low + extra < 2**63)
    exact = parse_size_range(f"{low}B..{reachable}B:x{factor}")
    assert exact == [low * factor**k for k in range(steps + 1)]
    high = low + extra
    sizes = parse_size_range(f"{low} B..{high} B:x{factor}")
    assert sizes[0] == low and sizes[-1] == high
    steps_taken = list(itertools.pairwise(sizes))
    assert all(a < b <= a * factor for a, b in steps_taken)
    assert all(b == a * factor for a, b in steps_taken[:-1])


def test_sizes_are_64_bit_counts_of_bytes():
    assert parse_size("8192 TiB") == 2**53 and parse_size(f"{2**63 - 1} B") == 2**63 - 1
    for text in (f"{2**63} B", "1e100 B", "1e19 B"):
        with pytest.raises(UnitError, match=f"size '{text}' is too large: sizes are whole bytes below 2\\*\\*63"):
            parse_size(text)
    with pytest.raises(UnitError, match="too large"):
        parse_size_range("1 KiB..1e20 B")


def test_positive_counts_and_fractions_name_the_text_they_refuse():
    from simnet.units import parse_positive_count, parse_positive_fraction

    assert parse_positive_count("4Mi") == 4 * 2**20 and parse_positive_fraction("1/128") == 1 / 128
    with pytest.raises(UnitError, match="must be ≥ 1, got '0'"):
        parse_positive_count("0")
    with pytest.raises(UnitError, match="must be > 0, got '0'"):
        parse_positive_fraction("0")
