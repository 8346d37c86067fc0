"""simnet.plots.results: which variables become panels and lines, and what the plots draw."""

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgba

from simnet import plots
from simnet.analysis import busbw_factor, factors, result_row
from simnet.errors import SimnetError
from simnet.models import predict
from simnet.plots.results import MAX_PANELS, MAX_SERIES, layout
from simnet.scenario import expand, load_scenario, model_curves, run
from tests.plots.checks import assert_readable, legends, overlapping_titles

ROOT = Path(__file__).resolve().parents[2]


def rows(points, algorithms, sizes, *, op="allreduce", ranks=8):
    return pd.DataFrame([
        result_row(scenario="s", point=point, topology="t", op=op, algorithm=algorithm, params="{}",
                   network_model="fifo", ranks=ranks, size_bytes=size, sim_time_s=1e-3 + size * 1e-10,
                   model_time_s=1e-3 + size * 1e-10, critical_path_s=1e-3)
        for point in points for algorithm in algorithms for size in sizes
    ])


def planned(results, against, **options):
    return layout(factors(results), against, **options)


def test_a_swept_key_is_faceted_by_algorithm_with_one_line_per_size():
    points = [f"topology.hosts={h}" for h in (4, 8, 16)]
    results = rows(points, ["ring", "tree", "hd"], [2**10, 2**20, 2**26])
    plan = planned(results, "topology.hosts")
    assert plan.facets == ("choice",) and plan.lines == ("size",)
    assert [facet for facet, _ in plan.panels] == [("ring",), ("tree",), ("hd",)]
    assert all(len(series) == 3 for _, series in plan.panels) and plan.shared_legend


def test_few_series_share_one_panel():
    plan = planned(rows([f"topology.hosts={h}" for h in (4, 8)], ["ring", "tree"], [2**10, 2**20]),
                   "topology.hosts")
    assert plan.facets == () and plan.lines == ("size", "choice") and len(plan.panels) == 1


def test_against_the_size_algorithms_are_lines_and_other_keys_panels():
    points = [f"topology.hosts={h},collective.chunks={c}" for h in (4, 8, 16) for c in (1, 2, 4, 8)]
    plan = planned(rows(points, ["ring"], [2**10, 2**20]), "size")
    assert plan.facets == ("topology.hosts",) and plan.lines == ("collective.chunks",)
    assert len(plan.panels) == 3


def test_four_swept_keys_and_two_algorithms_lay_out_against_each_key():
    """Four keys of two values and two algorithms: too many lines for one panel whichever key is the x-axis
    (this raised ValueError: list.remove(x), and the run lost its plots and results.md)."""
    keys = {"topology.hosts": (4, 8), "topology.bandwidth": ("100 Gbps", "200 Gbps"),
            "topology.latency": ("1 us", "2 us"), "network.overhead": ("0 us", "1 us")}
    points = [",".join(f"{k}={v}" for k, v in zip(keys, values))
              for values in np.array(np.meshgrid(*keys.values())).T.reshape(-1, 4)]
    results = rows(points, ["ring", "recursive_doubling"], [2**20, 2**26])
    for against in ("size", *keys):
        plan = planned(results, against)
        assert all(len(series) <= MAX_SERIES for _, series in plan.panels) and plan.panels
        assert "choice" in plan.facets + plan.lines


@pytest.mark.parametrize("algorithms", [20, 40])
def test_legends_and_panels_stay_bounded(algorithms):
    names = [f"algo{i:02d}" for i in range(algorithms)]
    points = [f"topology.hosts={h}" for h in range(2, 2 + 2 * MAX_PANELS)]
    plan = planned(rows(points[:1], names, [2**10, 2**20]), "size")
    assert not plan.shared_legend
    assert all(len(series) <= MAX_SERIES for _, series in plan.panels)
    assert sum(len(series) for _, series in plan.panels) == algorithms
    many = planned(rows(points, names[:2] + names[:0], [2**10, 2**20]), "topology.hosts")
    assert len(many.panels) <= MAX_PANELS


FOUR_KEYS = {"topology.kind": ("dgx_a100", "dgx_h100", "dgx_b200"), "topology.nodes": (2, 4),
             "network.model": ("maxmin", "fifo"), "topology.latency": ("1 us", "2 us")}
"""The new-user study's sweep: 24 points of four keys."""

FOUR_KEY_POINTS = [",".join(f"{k}={v}" for k, v in zip(FOUR_KEYS, values))
                   for values in itertools.product(*FOUR_KEYS.values())]


def drawn_values(plan) -> dict[str, set[str]]:
    return {facet: {combo[i] for combo, _ in plan.panels} for i, facet in enumerate(plan.facets)}


def test_panels_beyond_the_cap_fold_into_the_bars_before_any_is_left_out():
    """Speedups of nccl over ring at 24 points made 24 panels, one bar each; the 8 beyond the cap were those of
    dgx_b200, left out. One key joins the bars and every point is drawn."""
    results = rows(FOUR_KEY_POINTS, ["ring", "nccl"], [2**20, 2**26])
    frame = factors(results)
    plan = layout(frame[frame["choice"] != "ring"], "size", primary="choice")
    assert plan.hidden == 0 and len(plan.panels) == 12
    assert plan.lines == ("choice", "topology.latency") and plan.every_value
    assert drawn_values(plan)["topology.kind"] == set(FOUR_KEYS["topology.kind"])


def test_panels_left_out_still_show_every_value_of_every_key_about_equally(tmp_path):
    """Eight algorithms fill a panel's lines, so the 24 points are 24 panels: the 16 drawn show each value of
    each key, no value more than once more often than another of its key, and the title says so."""
    results = rows(FOUR_KEY_POINTS, [f"algorithm{i}" for i in range(8)], [2**20, 2**26])
    plan = planned(results, "size")
    assert plan.facets == tuple(FOUR_KEYS) and len(plan.panels) == MAX_PANELS and plan.hidden == 8
    assert drawn_values(plan) == {key: {str(v) for v in values} for key, values in FOUR_KEYS.items()}
    for i, key in enumerate(plan.facets):
        counts = pd.Series([combo[i] for combo, _ in plan.panels]).value_counts()
        assert counts.max() - counts.min() <= 1, (key, counts.to_dict())
    drawn = [combo for combo, _ in plan.panels]
    assert drawn == sorted(drawn, key=lambda combo: [[str(v) for v in values].index(value)
                                                     for values, value in zip(FOUR_KEYS.values(), combo)]), \
        "drawn in the order of the values"
    figure = plots.metric_plot(results, tmp_path / "time.png", against="size", title="four_keys")
    assert "(16 of 24 panels shown, covering every value of each variable)" in figure.get_suptitle()
    assert_readable(figure, tmp_path / "time.png")
    many = planned(rows([f"topology.hosts={h}" for h in range(2, 22)], [f"a{i}" for i in range(8)], [2**20]),
                   "size")
    assert many.hidden == 4 and not many.every_value
    assert "covering" not in plots.metric_plot(
        rows([f"topology.hosts={h}" for h in range(2, 22)], [f"a{i}" for i in range(8)], [2**20]),
        tmp_path / "many.png").get_suptitle()


@pytest.mark.parametrize("kind", ["speedup", "time"])
def test_long_panel_titles_wrap_within_their_panel(tmp_path, kind):
    """Four long keys made titles wider than their panels, written over each other."""
    keys = {"topology.node_params.nic_bandwidth": ["100 Gbps", "200 Gbps", "400 Gbps"],
            "topology.fabric_params.oversubscription": [1, 2], "network.tier_efficiency.nvswitch": ["80%", "90%"],
            "topology.node_params.nvlink_bandwidth": ["25 GB/s", "50 GB/s"]}
    points = [",".join(f"{k}={v}" for k, v in zip(keys, values)) for values in itertools.product(*keys.values())]
    if kind == "speedup":
        figure = plots.speedup_bars(rows(points, ["ring", "nccl"], [2**20, 2**26]), tmp_path / "plot.png",
                                    against="size")
    else:
        figure = plots.metric_plot(rows(points, [f"a{i}" for i in range(8)], [2**20, 2**26]), tmp_path / "plot.png")
    assert not overlapping_titles(figure)
    renderer = FigureCanvasAgg(figure).get_renderer()
    for axes in figure.axes:
        if axes.title.get_text():
            assert axes.title.get_window_extent(renderer).width <= axes.get_window_extent(renderer).width
    assert any("\n" in axes.title.get_text() for axes in figure.axes)
    assert_readable(figure, tmp_path / "plot.png")


@pytest.fixture(scope="module")
def quickstart():
    scenario = load_scenario(ROOT / "scenarios" / "quickstart.yaml")
    points, results = expand(scenario), run(scenario)
    return scenario, points, results


def test_the_model_is_a_curve_over_the_whole_size_range(quickstart, tmp_path):
    scenario, points, results = quickstart
    grid = np.geomspace(1024, 64 * 2**20, 40)
    curves = model_curves(points, "size", sorted(set(grid) | set(results["size_bytes"].astype(float))))
    figure = plots.busbw_vs_size(results, tmp_path / "busbw.png", curves=curves, title="quickstart")
    axes = figure.axes[0]
    (model,) = [line for line in axes.get_lines() if line.get_linestyle() == "-" and len(line.get_xdata()) > 3]
    x, y = np.asarray(model.get_xdata(), float), np.asarray(model.get_ydata(), float)
    assert len(x) >= 40 and x.min() == 1024 and x.max() == 64 * 2**20
    near = int(np.argmin(abs(np.log(x / 100e3))))
    expected = x[near] / predict("ring", scenario.built_network(), 8, int(x[near]), chunks=1, gamma_s_per_byte=0.0)
    assert y[near] == pytest.approx(expected * busbw_factor("allreduce", 8) / 1e9, rel=1e-12)
    assert y[near] < 5.0
    labels = [tick.get_text() for tick in axes.get_xticklabels()]
    assert labels and all(label.endswith(("KiB", "MiB", "GiB")) for label in labels)
    assert "quickstart" in figure.get_suptitle() and "switch(hosts=8" in figure.get_suptitle()
    assert "fifo links" in figure.get_suptitle()
    assert_readable(figure, tmp_path / "busbw.png")


def test_without_curves_the_legend_says_the_model_is_joined_at_the_runs(quickstart, tmp_path):
    _, _, results = quickstart
    figure = plots.time_vs_size(results, tmp_path / "time.png")
    texts = [t.get_text() for legend in legends(figure) for t in legend.get_texts()]
    assert "α-β model (joined at the runs only)" in texts


def test_sparse_bandwidth_is_labelled_dense_equivalent(tmp_path):
    scenario = load_scenario(ROOT / "scenarios" / "sparse_quick.yaml")
    results = run(scenario)
    figure = plots.metric_plot(results, tmp_path / "busbw.png", metric="busbw", against="payload.density")
    assert "dense-equivalent" in figure.axes[0].get_ylabel()
    assert "4 MB per rank" in figure.get_suptitle()
    gtopk = results[results["algorithm"] == "gtopk"]
    plotted = {round(y, 9) for line in figure.axes[0].get_lines() for y in line.get_ydata()}
    assert {round(v, 9) for v in gtopk["effective_busbw_GBps"]} <= plotted
    dense = results[results["payload_kind"] == "dense"]
    assert (dense["busbw_GBps"] <= 12.5).all()


def test_errors_name_the_option(quickstart, tmp_path):
    _, _, results = quickstart
    with pytest.raises(SimnetError, match=r"'topology.hosts' is not a variable of these runs \(choose from: size\)"):
        plots.metric_plot(results, tmp_path / "x.png", against="topology.hosts")
    with pytest.raises(SimnetError, match="metric: must be one of time, busbw"):
        plots.metric_plot(results, tmp_path / "x.png", metric="latency")
    with pytest.raises(SimnetError, match="nothing to compare: no algorithm other than ring ran beside it"):
        plots.speedup_bars(results, tmp_path / "x.png")


def test_speedup_bars_leave_out_the_baseline_and_compare_case_by_case(tmp_path):
    results = rows(["topology.hosts=4", "topology.hosts=8"], ["ring", "tree"], [2**10, 2**20])
    results.loc[results["algorithm"] == "tree", "sim_time_s"] /= 2
    figure = plots.speedup_bars(results, tmp_path / "speedup.png", against="size")
    heights = [patch.get_height() for axes in figure.axes for patch in axes.patches]
    assert heights == [2.0, 2.0, 2.0, 2.0]
    texts = [t.get_text() for legend in legends(figure) for t in legend.get_texts()]
    assert texts == ["tree"]
    assert [axes.get_title() for axes in figure.axes] == ["hosts=4", "hosts=8"]
    assert all(to_rgba(p.get_facecolor()) == to_rgba("C0") for axes in figure.axes for p in axes.patches)


def test_legends_and_the_speedup_axis_keep_the_parameters_a_lone_variant_was_given(tmp_path):
    """Study r26 F7: {name: ring, channels: 2} and {name: halving_doubling, chunks: 4} were "ring" and
    "halving_doubling" in every legend, and speedup.png said "speedup over ring"."""
    results = rows([""], ["ring", "halving_doubling"], [2**20, 2**26])
    results["params"] = results["algorithm"].map({"ring": '{"channels": 2}', "halving_doubling": '{"chunks": 4}'})
    bars = plots.speedup_bars(results, tmp_path / "speedup.png", against="size")
    assert bars.axes[0].get_ylabel().startswith("speedup over ring channels=2\n")
    assert [t.get_text() for legend in legends(bars) for t in legend.get_texts()] == ["halving_doubling chunks=4"]
    lines = plots.time_vs_size(results, tmp_path / "time.png")
    shown = {t.get_text() for legend in legends(lines) for t in legend.get_texts()}
    assert {"ring channels=2", "halving_doubling chunks=4"} <= shown


def test_the_speedup_legend_has_each_choices_colour_when_the_first_panel_lacks_one(tmp_path):
    """nvls could not run at the DGX A100 point, the first panel: the legend took nvls's handle from that panel's
    empty bars and drew it in nccl's blue."""
    results = rows(["topology=dgx_a100", "topology=dgx_h100"], ["ring", "nccl", "nvls"], [2**20, 2**26])
    results = results[~((results["point"] == "topology=dgx_a100") & (results["algorithm"] == "nvls"))]
    figure = plots.speedup_bars(results, tmp_path / "speedup.png", against="size")
    (legend,) = legends(figure)
    shown = {text.get_text(): to_rgba(handle.get_facecolor())
             for text, handle in zip(legend.get_texts(), legend.legend_handles)}
    assert shown == {"nccl": to_rgba("C0"), "nvls": to_rgba("C1")}
    drawn = {to_rgba(patch.get_facecolor()) for patch in figure.axes[1].patches}
    assert drawn == set(shown.values())


def test_results_from_a_csv_without_the_sparse_columns_still_plot(quickstart, tmp_path):
    _, _, results = quickstart
    legacy = results.drop(columns=["payload_kind", "effective_busbw_GBps", "sent_bytes_per_rank_max",
                                   "sent_bytes_per_rank_mean"])
    figure = plots.busbw_vs_size(legacy, tmp_path / "busbw.png")
    assert not math.isnan(max(y for line in figure.axes[0].get_lines() for y in line.get_ydata()))


@pytest.mark.parametrize("width_in", [3.0, 4.0, 5.0, 6.0, 8.0])
def test_titles_wrap_to_the_width_but_never_between_a_number_and_its_unit(width_in):
    from simnet.plots._figure import wrap

    title = ("nccl_all_gather_dgx_h100: dgx_h100(bandwidth=25 GB/s, latency=1 us), allreduce, maxmin links, "
             "sizes 64 MiB to 4 GiB, 8 ranks")
    wrapped = wrap(title, width_in)
    assert wrapped.replace("\n", " ") == title
    lines = wrapped.splitlines()
    assert not any(line[-1].isdigit() and following[0].isalpha() for line, following in zip(lines, lines[1:]))
    assert max(map(len, lines)) <= max(20, int(width_in * 72 / 5.5))


def test_points_that_set_different_keys_sit_at_their_own_values(tmp_path):
    """A sweep of ``points`` where only some set a key: those that do not are at the scenario's value (not
    'nan', and not a float '2.0' for 2), and a line whose values are all numbers still sits at its category on
    the axis of mixed values (it was drawn off the axis)."""
    from simnet.analysis import NOT_SET

    points = ["name=base", "name=oversub2,topology.fabric_params.oversubscription=2", "name=slow,topology.bw=1"]
    results = rows(points, ["ring"], [2**20, 2**26])
    frame = factors(results)
    assert frame["topology.fabric_params.oversubscription"].tolist() == [NOT_SET, NOT_SET, 2, 2, NOT_SET, NOT_SET]
    figure = plots.metric_plot(results, tmp_path / "o.png", metric="busbw",
                               against="topology.fabric_params.oversubscription")
    axes = figure.axes[0]
    ticks = [label.get_text() for label in axes.get_xticklabels()]
    assert ticks == [NOT_SET, "2"]
    low, high = axes.get_xlim()
    drawn = [x for line in axes.get_lines() for x in np.asarray(line.get_xdata(), dtype=float)]
    assert drawn and all(low <= x <= high for x in drawn) and sorted(set(drawn)) == [0.0, 1.0]


MACHINES = ['topology={"builder": "calibrated_cluster", "kind": "dgx_h100", "nodes": 16, "pxn": true}',
            'topology={"builder": "calibrated_cluster", "kind": "dgx_b200", "nodes": 16, "pxn": true}',
            "topology=gb200_nvl72_xdr_2"]


def test_short_labels_name_only_the_keys_that_differ_between_mappings():
    from simnet.plots.results import category_labels

    values = [point.partition("=")[2] for point in MACHINES]
    assert category_labels(values) == ["kind=dgx_h100", "kind=dgx_b200", "gb200_nvl72_xdr_2"]
    assert category_labels(['{"builder": "cluster", "fabric_params": {"leaves": 2}}', "dgx_h100"]) == [
        "builder=cluster, fabric_params.leaves=2", "dgx_h100"]
    assert category_labels(["ring", "tree"]) == ["ring", "tree"]


@pytest.mark.parametrize("metric", ["busbw", "time"])
def test_a_sweep_of_whole_topologies_is_ticked_with_short_labels_and_drawn_without_lines(metric, tmp_path):
    """Sweep points that are whole topology mappings were ticked with their JSON, overlapping into a smear, and
    the model was a line from one machine to the next; now each tick names what differs (a preset by its name),
    no two labels overlap, and nothing joins the categories (the model is a dash at each)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    path = tmp_path / "o.png"
    figure = plots.metric_plot(rows(MACHINES, ["nccl_ring", "nccl_tree"], [2**26, 2**30]), path, metric=metric,
                               against="topology")
    axes = figure.axes[0]
    assert [label.get_text() for label in axes.get_xticklabels()] == ["kind=dgx_h100", "kind=dgx_b200",
                                                                      "gb200_nvl72_xdr_2"]
    assert all(line.get_linestyle() == "None" for line in axes.get_lines())
    renderer = FigureCanvasAgg(figure).get_renderer()
    boxes = [label.get_window_extent(renderer) for label in axes.get_xticklabels()]
    assert not any(a.overlaps(b) for a, b in zip(boxes, boxes[1:]))
    assert_readable(figure, path)


def test_long_category_labels_are_wrapped_or_rotated_so_they_do_not_overlap(tmp_path):
    points = [f'topology={{"builder": "calibrated_cluster", "kind": "dgx_h100", "nodes": {n}, '
              f'"oversubscription": {n}, "pxn": {"true" if n % 2 else "false"}, "sharp": true}}' for n in range(1, 9)]
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    path = tmp_path / "o.png"
    figure = plots.metric_plot(rows(points, ["ring"], [2**20, 2**26]), path, metric="busbw", against="topology")
    axes = figure.axes[0]
    labels = axes.get_xticklabels()
    assert labels[0].get_text().replace("\n", " ") == "nodes=1, oversubscription=1, pxn=true"
    renderer = FigureCanvasAgg(figure).get_renderer()
    boxes = [label.get_window_extent(renderer) for label in labels]
    assert not any(a.overlaps(b) for a, b in zip(boxes, boxes[1:]))
    assert_readable(figure, path)


BANDWIDTHS = [f'topology.fabric_params.bandwidth={b} Gbps,topology.node_params={{"nic_bandwidth": "{b} Gbps"}}'
              for b in (25, 100, 400, 1600)]


@pytest.mark.parametrize("metric", ["time", "busbw"])
def test_keys_that_change_together_are_one_axis_with_one_curve_per_algorithm(metric, tmp_path):
    """A sweep of ``points`` setting a switch's and a NIC's bandwidth alike was drawn against each key apart,
    faceted by the other: a grid of panels with one point each and no curve. Now the keys are one axis."""
    results = rows(BANDWIDTHS, ["ring", "tree"], [2**26])
    assert plots.plotted_axes(results) == ["topology.fabric_params.bandwidth"]
    path = tmp_path / "o.png"
    figure = plots.metric_plot(results, path, metric=metric, against="topology.fabric_params.bandwidth")
    (axes,) = [axes for axes in figure.axes if axes.get_visible() and axes.axison]
    assert axes.get_xlabel() == "topology.fabric_params.bandwidth (with topology.node_params)"
    assert all(len(line.get_xdata()) == 4 for line in axes.get_lines())
    assert len(axes.get_lines()) == 4
    assert_readable(figure, path)
    other = plots.metric_plot(results, tmp_path / "n.png", metric=metric, against="topology.node_params")
    assert other.axes[0].get_xlabel() == "topology.node_params (with topology.fabric_params.bandwidth)"
    bars = plots.speedup_bars(results, tmp_path / "s.png", baseline="ring")
    assert bars.axes[0].get_xlabel() == "topology.fabric_params.bandwidth (with topology.node_params)"
    assert [label.get_text() for label in bars.axes[0].get_xticklabels()] == ["25 Gbps", "100 Gbps", "400 Gbps",
                                                                              "1600 Gbps"]


def test_keys_that_only_sometimes_change_together_stay_apart():
    points = [f"topology.hosts={h},topology.bw={b}" for h, b in ((4, 1), (8, 2), (8, 1))]
    assert plots.plotted_axes(rows(points, ["ring"], [2**20])) == ["topology.hosts", "topology.bw"]


def test_a_line_with_one_run_still_shows_its_model(tmp_path):
    """On a numeric axis the model was a line through the runs: a line of one run drew nothing, though the
    legend listed the model."""
    points = [f"topology.hosts={h},topology.latency={lat}" for h, lat in ((4, 1), (8, 2), (4, 2))]
    figure = plots.metric_plot(rows(points, ["ring"], [2**20]), tmp_path / "o.png", against="topology.hosts")
    lines = figure.axes[0].get_lines()
    single = [line for line in lines if len(line.get_xdata()) == 1]
    assert single and all(line.get_marker() not in ("None", "", None) for line in single)


def test_panels_of_one_figure_share_the_y_axis(tmp_path):
    """Study r25 finding 6a: the 1:1 panel ran 0-550 GB/s and the 2:1 panel 0-400, so 379 looked as high as
    512. Panels of a busbw (and time) plot have one y range."""
    results = rows([f"topology.hosts={h}" for h in (4, 8, 16)], ["ring", "tree", "hd", "bruck", "direct"],
                   [2**20, 2**26])
    results.loc[results["algorithm"] == "hd", ["sim_time_s", "model_time_s"]] *= 3
    for metric in ("busbw", "time"):
        figure = plots.metric_plot(results, tmp_path / f"{metric}.png", metric=metric, against="topology.hosts")
        panels = [axes for axes in figure.axes if axes.get_visible() and axes.get_lines()]
        assert len(panels) >= 2 and len({tuple(axes.get_ylim()) for axes in panels}) == 1, metric


def test_a_time_axis_has_labelled_ticks_around_every_point_and_no_model_legend_without_a_model(tmp_path):
    """Study r25 finding 6b/6c: GB200 points at 248 and 313 us sat below the lowest label (500 us), and the
    legend listed the α-β model and line styles although no model line was drawn."""
    from simnet.plots._figure import time_ticks

    results = rows(["topology.hosts=4", "topology.hosts=8"], ["nvls_tree", "collnet_direct"], [2**26, 2**30])
    results["sim_time_s"] = [313e-6, 1.95e-3, 248e-6, 2.4e-3] * 2
    results["model_time_s"] = math.nan
    figure = plots.time_vs_size(results, tmp_path / "time.png")
    FigureCanvasAgg(figure).draw()
    axes = figure.axes[0]
    low, high = axes.get_ylim()
    labelled = [tick for tick, text in zip(axes.get_yticks(), axes.get_yticklabels())
                if text.get_text() and low <= tick <= high]
    assert min(labelled) <= 248e-6 and max(labelled) >= 2.4e-3 and len(labelled) >= 4
    assert [round(t * 1e6) for t in time_ticks(248e-6, 313e-6)] == [200, 300, 500]
    texts = [t.get_text() for legend in legends(figure) for t in legend.get_texts()]
    assert not any("model" in text for text in texts), texts
    assert all(handle.get_linestyle() in ("None", "", " ") for legend in legends(figure)
               for handle in legend.legend_handles), "no line style where no line is drawn"
