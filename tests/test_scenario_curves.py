"""model_curves: the closed forms of a scenario's algorithms between and beyond the sizes it ran."""

from pathlib import Path

import numpy as np
import pytest
import yaml

from simnet.errors import ScenarioError
from simnet.models import predict
from simnet.scenario import expand, load_scenario, model_curves, parse_scenario, run

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = [p for p in sorted((ROOT / "scenarios").glob("*.yaml")) if load_scenario(p).jobs is None]


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_curves_pass_through_every_run_model_time(path):
    scenario = load_scenario(path)
    points, results = expand(scenario), run(scenario)
    along = "payload.density" if scenario.payload is not None else "size"
    values = sorted({p.density for p in scenario.payload.payloads()}) if scenario.payload is not None else \
        sorted(set(results["size_bytes"]))
    curves = model_curves(points, along, values)
    keys = ["point", "algorithm", "params", "size_bytes"]
    merged = results.merge(curves, on=keys, suffixes=("", "_curve"), validate="one_to_one")
    assert len(merged) == len(results)
    assert np.array_equal(merged["model_time_s"], merged["model_time_s_curve"], equal_nan=True)


def test_a_curve_between_the_sizes_is_the_closed_form_there():
    scenario = load_scenario(ROOT / "scenarios" / "quickstart.yaml")
    curves = model_curves(expand(scenario), "size", [100e3])
    network = scenario.built_network()
    assert curves["size_bytes"].tolist() == [100_000]
    assert curves["model_time_s"].iloc[0] == predict("ring", network, 8, 100_000, chunks=1, gamma_s_per_byte=0.0)


def test_sparse_curves_along_the_size_keep_the_density_and_scale_the_dimension():
    scenario = load_scenario(ROOT / "scenarios" / "sparse_quick.yaml")
    curves = model_curves(expand(scenario), "size", [1e6, 4e6, 16e6])
    gtopk = curves[curves["algorithm"] == "gtopk"]
    assert sorted(set(gtopk["size_bytes"])) == [1_000_000, 4_000_000, 16_000_000]
    assert len(gtopk) == 6
    for density in (0.0625, 0.0078125):
        mine = gtopk[gtopk["params"].str.contains(f'"density": {density}')].sort_values("size_bytes")
        assert mine["model_time_s"].is_monotonic_increasing
        assert all(f'"dimension": {size // 4}' in params for size, params in zip(mine["size_bytes"], mine["params"]))


def test_only_size_and_density_are_curves():
    scenario = load_scenario(ROOT / "scenarios" / "quickstart.yaml")
    with pytest.raises(ScenarioError, match="along: must be 'size' or 'payload.density'"):
        model_curves(expand(scenario), "topology.hosts", [4])
    assert model_curves(expand(scenario), "payload.density", [0.5]).empty


def test_jobs_scenarios_have_no_curves():
    scenario = load_scenario(ROOT / "scenarios" / "jobs_tenants.yaml")
    assert model_curves(expand(scenario), "size", [1e6]).empty


def test_curves_take_the_networks_overhead_and_stragglers_as_the_rows_do():
    text = (ROOT / "scenarios" / "quickstart.yaml").read_text()
    scenario = parse_scenario(yaml.safe_load(text) | {"network": {"model": "fifo", "overhead": "5 us",
                                                                  "stragglers": {"3": 1.5}}})
    points, results = expand(scenario), run(scenario)
    curves = model_curves(points, "size", sorted(set(results["size_bytes"])))
    merged = results.merge(curves, on=["point", "algorithm", "params", "size_bytes"], suffixes=("", "_curve"))
    assert len(merged) == len(results)
    assert np.array_equal(merged["model_time_s"], merged["model_time_s_curve"])
