"""Regression tables: every shipped scenario's simulated and model times, to a relative 1e-9.

Regenerate with ``make golden`` after an intended change; it prints what moved.
"""

from pathlib import Path

import pytest

from simnet.scenario import load_scenario, run

SCENARIOS = sorted((Path(__file__).resolve().parents[1] / "scenarios").glob("*.yaml"))


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario_timings_match_golden_table(path, simnet_golden):
    simnet_golden.check(path.stem, run(load_scenario(path)))


def test_every_scenario_has_a_golden_table():
    golden = Path(__file__).parent / "golden"
    assert {p.stem for p in SCENARIOS} <= {p.stem for p in golden.glob("*.csv")}
