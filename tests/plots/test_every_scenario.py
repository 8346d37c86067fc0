"""Every plot kind of every shipped scenario renders without a warning, within bounds, with short legends.

Results are computed once per scenario; time and busbw are drawn against the
first x axis `simnet run --out` uses (the size, or a sparse payload's density),
time also against every other swept key; the α-β curves on a coarse grid; trace
plots use the first case of the last sweep point. Jobs scenarios draw their
per-job Gantt and slowdown bars instead.
"""

import functools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from simnet import plots
from simnet.analysis import factors, swept_keys
from simnet.errors import SimnetError
from simnet.scenario import expand, load_scenario, model_curves, run, run_jobs_point, runs
from tests.plots.checks import assert_readable

ALL = sorted((Path(__file__).resolve().parents[2] / "scenarios").glob("*.yaml"))
JOBS = [p for p in ALL if load_scenario(p).jobs is not None]
SCENARIOS = [p for p in ALL if p not in JOBS]


@functools.cache
def computed(path: Path):
    scenario = load_scenario(path)
    points = expand(scenario)
    return scenario.name, points, run(scenario)


def curves(points, results, against: str):
    if against not in ("size", "payload.density"):
        return None
    values = factors(results)[against].astype(float)
    grid = sorted(set(np.geomspace(values.min(), values.max(), 12).tolist()) | set(values))
    return model_curves(points, against, grid)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_every_results_plot(path, tmp_path):
    name, points, results = computed(path)
    keys = swept_keys(factors(results))
    axes = ["size", *(k for k in keys if k != "size")] if "size" in keys or not keys else keys
    for against in axes:
        fitted = curves(points, results, against)
        for metric in plots.METRICS if against == axes[0] else ("time",):
            target = tmp_path / f"{metric}_vs_{against}.png"
            assert_readable(plots.metric_plot(results, target, metric=metric, against=against, curves=fitted,
                                              title=name), target)
    target = tmp_path / "speedup.png"
    if "ring" in set(results["algorithm"]) and factors(results)["choice"].nunique() > 1:
        assert_readable(plots.speedup_bars(results, target, title=name), target)
    else:
        with pytest.raises(SimnetError, match="nothing to compare|baseline 'ring' is not among"):
            plots.speedup_bars(results, target, title=name)


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_no_dense_busbw_beyond_what_a_gpu_can_send(path):
    """A dense collective's busbw (nccl-tests' normalisation) is bounded by the bandwidth a GPU's links give it."""
    _, points, results = computed(path)
    for point in points:
        graph = point.scenario.built_network().graph
        egress = max(sum(bw for _, _, bw in graph.out_edges(gpu, data="bandwidth_Bps"))
                     for gpu, kind in graph.nodes(data="kind") if kind == "gpu")
        mine = results[(results["point"] == point.label) & (results["payload_kind"] == "dense")]
        assert (mine["busbw_GBps"] * 1e9 <= egress * (1 + 1e-9)).all(), point.label


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_every_trace_plot(path, tmp_path):
    _, points, _ = computed(path)
    trace = next(runs(points[-1])).trace
    for kind, draw in (("links", plots.link_utilization), ("gantt", plots.gantt)):
        target = tmp_path / f"{kind}.png"
        assert_readable(draw(trace, target), target)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("path", JOBS, ids=[p.stem for p in JOBS])
def test_every_jobs_plot(path, tmp_path):
    scenario = load_scenario(path)
    results = [run_jobs_point(point) for point in expand(scenario)]
    timeline = pd.concat([r.timeline for r in results], ignore_index=True)
    jobs = pd.concat([r.jobs for r in results], ignore_index=True)
    assert_readable(plots.jobs_gantt(timeline, tmp_path / "jobs.png", title=scenario.name), tmp_path / "jobs.png")
    assert_readable(plots.slowdown_bars(jobs, tmp_path / "slowdown.png", title=scenario.name),
                    tmp_path / "slowdown.png")


def test_slowdown_bars_rise_from_one_and_keep_the_legend_off_the_bars(tmp_path):
    jobs = pd.DataFrame({"point": ["a", "a", "b", "b"], "job": ["x", "y", "x", "y"],
                         "slowdown": [1.12, 0.996, 1.05, 1.0]})
    figure = plots.slowdown_bars(jobs, tmp_path / "slowdown.png")
    axes = figure.axes[0]
    bars = [bar for container in axes.containers for bar in container]
    assert {bar.get_y() for bar in bars} == {1.0}
    assert sorted(round(bar.get_y() + bar.get_height(), 9) for bar in bars) == [0.996, 1.0, 1.05, 1.12]
    low, high = axes.get_ylim()
    assert 0.9 < low < 0.996 and 1.12 < high < 1.2
    legend = axes.get_legend().get_window_extent()
    assert legend.x0 >= axes.get_window_extent().x1
    assert sorted(text.get_text() for text in axes.texts) == ["0.996×", "1.000×", "1.050×", "1.120×"]


def test_slowdown_bars_of_jobs_as_fast_as_alone_still_show_each_job(tmp_path):
    """Bars of no height (every job as fast as alone) would leave the axes empty: each bar's label shows it."""
    jobs = pd.DataFrame({"point": ["", ""], "job": ["x", "y"], "slowdown": [1.0, 1.0]})
    axes = plots.slowdown_bars(jobs, tmp_path / "slowdown.png").axes[0]
    assert [text.get_text() for text in axes.texts] == ["1.000×", "1.000×"]
    low, high = axes.get_ylim()
    assert all(low < text.xy[1] < high for text in axes.texts)
