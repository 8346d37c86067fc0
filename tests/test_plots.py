"""Every plot kind is drawn by the command line into --out / -o and is a real, non-empty PNG."""

from pathlib import Path

import pytest
from matplotlib.image import imread

from simnet.cli import main

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "blueconnect_dgx.yaml"


def assert_png(path: Path) -> None:
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pixels = imread(path)
    assert pixels.shape[0] > 200 and pixels.shape[1] > 300
    assert pixels[..., :3].std() > 0.05, "the image is blank"


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("compare")
    assert main(["compare", str(SCENARIO), "--out", str(out)]) == 0
    return out


def test_compare_writes_every_results_plot_and_a_summary(results_dir):
    for name in ("time_vs_size.png", "busbw_vs_size.png", "speedup.png"):
        assert_png(results_dir / name)
    summary = (results_dir / "results.md").read_text()
    assert "## Fastest choice per size" in summary and "## Speedup over ring" in summary


@pytest.mark.parametrize("kind", ["time", "busbw", "speedup"])
def test_plot_from_a_results_directory(results_dir, kind):
    assert main(["plot", str(results_dir), "--kind", kind]) == 0
    assert_png(results_dir / f"{kind}.png")


@pytest.mark.parametrize(("kind", "algorithm"), [("links", "ring"), ("gantt", "blueconnect")])
def test_trace_plots_from_a_scenario(tmp_path, kind, algorithm):
    target = tmp_path / f"{kind}.png"
    assert main(["plot", str(SCENARIO), "--kind", kind, "--algorithm", algorithm, "--size", "1 MiB",
                 "-o", str(target)]) == 0
    assert_png(target)


def test_topology_drawing(tmp_path):
    assert main(["topo", "draw", "power9_cluster", "-o", str(tmp_path / "p9.png")]) == 0
    assert_png(tmp_path / "p9.png")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kind", "gantt", "--algorithm", "rign"], "--algorithm: algorithm 'rign' is not in the scenario"),
        (["--kind", "links", "--size", "3 MiB"], "--size: size '3 MiB' is not in the scenario's sizes"),
        (["--kind", "links", "--point", "4"], "--point: no point 4; the sweep has 1"),
    ],
)
def test_plot_arguments_are_checked(tmp_path, capsys, args, message):
    assert main(["plot", str(SCENARIO), *args, "-o", str(tmp_path / "x.png")]) == 2
    assert message in capsys.readouterr().err


def test_results_plot_needs_results(tmp_path, capsys):
    assert main(["plot", str(tmp_path), "--kind", "time"]) == 2
    assert "no results.csv here" in capsys.readouterr().err
