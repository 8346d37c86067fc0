"""simnet's YAML loader: YAML 1.1 as PyYAML's safe loader reads it, minus base-60 (sexagesimal) numbers."""

from __future__ import annotations

import pytest
import yaml

from simnet.yamlio import safe_load


@pytest.mark.parametrize("text", ["2:1", "3:2", "1:30", "-1:30", "190:20:30", "190:20:30.15", "1:30.5"])
def test_a_base_60_number_stays_the_text_written(text):
    """YAML 1.1 reads an unquoted ``2:1`` as 121 and ``1:30`` as 90; YAML 1.2 and simnet keep the text."""
    assert yaml.safe_load(f"x: {text}")["x"] != text
    assert safe_load(f"x: {text}") == {"x": text}
    assert safe_load(f"x: [{text}, 1]") == {"x": [text, 1]}


@pytest.mark.parametrize("text", ["0", "12", "-7", "+3", "1_000", "0x1f", "0b101", "017", "1.5", "-2.5e+3", ".5",
                                  "1.", ".inf", "-.inf", "true", "no", "~", "null", "2024-05-01", "abc", "1 us",
                                  "'2:1'", "[1, 2.5]", "{a: 1}"])
def test_every_other_scalar_loads_as_yaml_safe_load_reads_it(text):
    assert safe_load(f"x: {text}") == yaml.safe_load(f"x: {text}")


def test_nan_is_still_a_float():
    assert safe_load("x: .nan")["x"] != safe_load("x: .nan")["x"]
