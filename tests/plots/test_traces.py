"""simnet.plots.traces: the Gantt chart of one run."""

import numpy as np

from simnet import plots
from simnet.algorithms import ALGORITHMS
from simnet.engine import simulate
from simnet.network import Network
from simnet.topology import find, load
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
