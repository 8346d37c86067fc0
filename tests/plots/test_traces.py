"""simnet.plots.traces: the Gantt chart of one run."""

import numpy as np
from matplotlib.colors import to_rgb
from matplotlib.patches import Patch

from simnet import plots
from simnet.algorithms import ALGORITHMS
from simnet.engine import simulate
from simnet.network import Network
from simnet.topology import cluster, find, load
from tests.plots.checks import assert_readable, legends


def test_gantt_bars_are_the_transfers_coloured_by_bottleneck_tier(tmp_path):
    network = Network(load(find("dgx1")))
    schedule = ALGORITHMS["ring"].builder(network.size, 2**20)
    trace = simulate(network, schedule)
    figure = plots.gantt(trace, tmp_path / "gantt.png")
    boxes = [path for collection in figure.axes[0].collections for path in collection.get_paths()]
    assert len(boxes) == len(schedule.transfers)
    right = max(float(np.max(path.vertices[:, 0])) for path in boxes)
    assert right == trace.time_s
    (legend,) = legends(figure)
    tiers = {network.tiers[min(network.route(t.src, t.dst), key=lambda link: network.bandwidth_Bps[link])]
             for t in schedule.transfers}
    assert [t.get_text() for t in legend.get_texts()] == sorted(tiers)
    assert "ring allreduce, 1 MiB per rank, on dgx1()" in figure.get_suptitle()
    assert_readable(figure, tmp_path / "gantt.png")


def test_gantt_says_when_ranks_are_left_out(tmp_path):
    network = Network(load(find("dgx1")))
    trace = simulate(network, ALGORITHMS["ring"].builder(network.size, 2**10))
    figure = plots.gantt(trace, tmp_path / "gantt.png", max_ranks=4)
    assert "(ranks 0–3 of 8 shown)" in figure.get_suptitle()
    assert figure.axes[0].get_ylim() == (3.5, -0.5)


def tier_legend(figure) -> dict[str, tuple]:
    """Tier name -> RGB of its entry in the figure's legend."""
    (legend,) = legends(figure)
    return {text.get_text(): to_rgb(handle.get_facecolor() if isinstance(handle, Patch) else handle.get_color())
            for text, handle in zip(legend.get_texts(), legend.legend_handles) if text.get_text()}


def test_a_tier_has_one_colour_in_every_gantt_and_topology_drawing(tmp_path):
    """nvswitch alone (one server) and beside ib (two servers), and in the drawing of the topology: one colour."""
    alone = Network(load(find("dgx_h100")))
    one = plots.gantt(simulate(alone, ALGORITHMS["ring"].builder(alone.size, 2**20)), tmp_path / "one.png")
    pair = Network(cluster("dgx_h100", 2, fabric_params={"bandwidth_Bps": 50e9, "latency_s": 1e-6}))
    two = plots.gantt(simulate(pair, ALGORITHMS["ring"].builder(pair.size, 2**20)), tmp_path / "two.png")
    drawn = plots.draw_topology(pair.graph, tmp_path / "topology.png")
    one, two, drawn = tier_legend(one), tier_legend(two), tier_legend(drawn)
    assert list(one) == ["nvswitch"] and {"ib", "nvswitch"} <= set(two) and {"ib", "nvswitch", "pcie"} <= set(drawn)
    assert one["nvswitch"] == two["nvswitch"] == drawn["nvswitch"] and two["ib"] == drawn["ib"] != two["nvswitch"]


def test_tiers_simnet_does_not_know_keep_their_colour_and_never_share_one_in_a_plot():
    assert plots.tier_colors(["roce", "nvswitch"])["roce"] == plots.tier_colors(["roce"])["roce"]
    colors = plots.tier_colors(["qpi", "upi", "nvswitch", *(f"t{i}" for i in range(8))])
    assert len(set(colors.values())) == len(colors) and colors["nvswitch"] == plots.TIER_COLORS["nvswitch"]


def test_two_tiers_of_one_rank_take_separate_lanes_in_opaque_colours_the_legend_names(tmp_path):
    """Overlapping bars of two tiers on one rank never blend into a colour the legend lacks (they used to be
    translucent and drawn over each other: blue over orange read as a grey third tier)."""
    network = Network(cluster("dgx_h100", 2, fabric_params={"bandwidth_Bps": 50e9, "latency_s": 1e-6}))
    figure = plots.gantt(simulate(network, ALGORITHMS["blueconnect"].builder(network.size, 2**20, factors=[8, 2])),
                         tmp_path / "gantt.png")
    legend = tier_legend(figure)
    assert set(legend) == {"ib", "nvswitch"}
    lanes = {}
    for collection in figure.axes[0].collections:
        assert collection.get_alpha() in (None, 1.0)
        (colour,) = {to_rgb(face) for face in collection.get_facecolors()}
        (tier,) = [name for name, rgb in legend.items() if rgb == colour]
        for path in collection.get_paths():
            row = int(round(float(path.vertices[:, 1].mean())))
            lanes.setdefault(row, {}).setdefault(tier, set()).add(
                (float(path.vertices[:, 1].min()), float(path.vertices[:, 1].max())))
    both = [row for row, tiers in lanes.items() if len(tiers) == 2]
    assert both
    for row in both:
        (ib,), (nvswitch,) = lanes[row]["ib"], lanes[row]["nvswitch"]
        assert ib[1] <= nvswitch[0] or nvswitch[1] <= ib[0]
