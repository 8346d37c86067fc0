"""`simnet run/compare --out`, `simnet plot` and `simnet topo draw`: every plot reachable, one-line errors."""

import json
from pathlib import Path
from unittest import mock

import pytest

from simnet import plots
from simnet.cli import main
from tests.interchange.programs import allpairs, program, ring
from tests.plots.checks import png_size

ROOT = Path(__file__).resolve().parents[2]
SPARSE = ROOT / "scenarios" / "sparse_quick.yaml"
SWEEP = ROOT / "scenarios" / "ring_chunks_sweep.yaml"

pytestmark = pytest.mark.filterwarnings("error")


@pytest.fixture(scope="module")
def sparse_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("sparse")
    assert main(["compare", str(SPARSE), "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep")
    scenario = out / "sweep.yaml"
    scenario.write_text(SWEEP.read_text().replace("[4, 8, 16]", "[4, 8]").replace("[1, 2, 4, 8]", "[1, 4]")
                        .replace("[64 KiB, 1 MiB, 64 MiB]", "[64 KiB, 64 MiB]"))
    assert main(["run", str(scenario), "--out", str(out)]) == 0
    return out


def test_a_sparse_report_plots_against_the_density(sparse_dir):
    pngs = sorted(p.name for p in sparse_dir.glob("*.png"))
    assert pngs == ["busbw_vs_payload_density.png", "speedup.png", "time_vs_payload_density.png"]
    summary = (sparse_dir / "results.md").read_text()
    assert "| 4 MB   | N=1000000 d=1/128 | ssar_recursive_doubling" in summary
    assert "dense-eq. busbw GB/s" in summary and "sent/rank max" in summary
    rows = json.loads((sparse_dir / "results.json").read_text())
    gtopk = [row for row in rows if row["algorithm"] == "gtopk"]
    assert all(row["busbw_GBps"] is None and row["effective_busbw_GBps"] > 12.5 for row in gtopk)
    assert all(row["sent_bytes_per_rank_max"] < 4e6 for row in gtopk)


def test_a_sweep_report_plots_against_every_swept_key_and_no_speedup_of_ring_over_itself(sweep_dir, capsys):
    pngs = sorted(p.name for p in sweep_dir.glob("*.png"))
    assert pngs == [f"{metric}_vs_{key}.png" for metric in ("busbw", "time")
                    for key in ("collective_chunks", "size", "topology_hosts")]
    assert all(png_size(sweep_dir / name)[0] <= 2400 for name in pngs)
    assert main(["plot", str(sweep_dir), "--kind", "speedup"]) == 2
    assert "--baseline: nothing to compare: no algorithm other than ring ran beside it" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("where", "args"),
    [("sparse", ["--kind", "links"]),
     ("sparse", ["--kind", "gantt", "--algorithm", "gtopk", "--size", "4 MB", "--density", "1/128"]),
     ("sweep", ["--kind", "links", "--point", "3", "--size", "64 KiB"]),
     ("sweep", ["--kind", "links", "--metric", "busy"]),
     ("sweep", ["--kind", "time", "--against", "collective.chunks"])],
)
def test_plot_reaches_every_run_of_a_results_directory(sparse_dir, sweep_dir, tmp_path, where, args):
    target = tmp_path / "plot.png"
    source = sparse_dir if where == "sparse" else sweep_dir
    assert main(["plot", str(source), *args, "-o", str(target)]) == 0
    width, height = png_size(target)
    assert width <= 2400 and height <= 1800


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kind", "gantt", "--algorithm", "rign"], "--algorithm: the scenario lists no algorithm 'rign'"),
        (["--kind", "links", "--size", "3 MiB"], "--size: size '3 MiB' is not in the scenario's sizes (4 MB)"),
        (["--kind", "links", "--density", "1/3"],
         "--density: density '1/3' is not among the payload's densities at 4 MB (0.0625, 0.0078125)"),
        (["--kind", "links", "--point", "4"], "--point: no point 4; the sweep has 1"),
        (["--kind", "time", "--against", "topology.hosts"],
         "--against: 'topology.hosts' is not a variable of these runs (choose from: size, payload.density)"),
        (["--kind", "speedup", "--baseline", "nccl"], "--baseline: baseline 'nccl' is not among the algorithms run"),
        (["--kind", "gantt", "--metric", "busy"], "--metric: only --kind links is coloured by a metric, not gantt"),
    ],
)
def test_plot_arguments_are_checked(sparse_dir, tmp_path, capsys, args, message):
    assert main(["plot", str(sparse_dir), *args, "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def msccl_dir(tmp_path_factory):
    """Results of a scenario listing two MSCCL files (named ring_x and pairs_x) beside ring."""
    out = tmp_path_factory.mktemp("msccl")
    (out / "ring8.xml").write_text(program(ring(8), nchunks=8, name="ring_x"))
    (out / "pairs8.xml").write_text(program(allpairs(8), nchunks=8, name="pairs_x"))
    scenario = out / "two_files.yaml"
    scenario.write_text("name: two_files\ntopology: switch8\n"
                        "collective: {op: allreduce, algorithms: [{msccl: ring8.xml}, {msccl: pairs8.xml}, ring]}\n"
                        "sizes: [1 MiB]\n")
    assert main(["run", str(scenario), "--out", str(out / "results"), "--no-plots", "-q"]) == 0
    return out


@pytest.mark.parametrize("kind", ["gantt", "links"])
@pytest.mark.parametrize("name", ["msccl:ring_x", "msccl:pairs_x", "ring"])
def test_plot_draws_the_algorithm_a_result_row_names_even_the_second_msccl_file(msccl_dir, tmp_path, kind, name):
    drawn = []
    draw = "gantt" if kind == "gantt" else "link_utilization"
    with mock.patch.object(plots, draw, lambda trace, path, **_: drawn.append(trace.schedule.algorithm)):
        assert main(["plot", str(msccl_dir / "results"), "--kind", kind, "--algorithm", name,
                     "-o", str(tmp_path / "x.png")]) == 0
    assert drawn == [name]


def test_plot_refuses_a_bare_msccl_among_several_files_naming_each_as_the_rows_do(msccl_dir, tmp_path, capsys):
    assert main(["plot", str(msccl_dir / "results"), "--kind", "gantt", "--algorithm", "msccl",
                 "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "--algorithm: 'msccl' is ambiguous: the scenario lists 2 MSCCL files; name one as result rows do: " \
           "msccl:ring_x (ring8.xml), msccl:pairs_x (pairs8.xml)" in err
    assert main(["plot", str(msccl_dir / "results"), "--kind", "gantt", "--algorithm", "pairs8.xml",
                 "-o", str(tmp_path / "x.png")]) == 2
    assert "(it lists msccl:ring_x, msccl:pairs_x, ring)" in capsys.readouterr().err


def test_plot_takes_a_bare_msccl_when_the_scenario_lists_one_file(msccl_dir, tmp_path):
    scenario = msccl_dir / "one_file.yaml"
    scenario.write_text((msccl_dir / "two_files.yaml").read_text().replace("{msccl: ring8.xml}, ", ""))
    drawn = []
    with mock.patch.object(plots, "gantt", lambda trace, path, **_: drawn.append(trace.schedule.algorithm)):
        assert main(["plot", str(scenario), "--kind", "gantt", "--algorithm", "msccl",
                     "-o", str(tmp_path / "x.png")]) == 0
    assert drawn == ["msccl:pairs_x"]


@pytest.fixture(scope="module")
def variants_dir(tmp_path_factory):
    """Results of a scenario listing three BlueConnect factorisations on a switch of 8 (whose own factors are
    [8]) beside ring."""
    out = tmp_path_factory.mktemp("variants")
    scenario = out / "variants.yaml"
    scenario.write_text("name: variants\ntopology: switch8\ncollective: {op: allreduce, algorithms: [ring, "
                        "blueconnect, {name: blueconnect, factors: [2, 4]}, {name: blueconnect, factors: [4, 2]}]}\n"
                        "sizes: [1 MiB]\n")
    assert main(["run", str(scenario), "--out", str(out / "results"), "--no-plots", "-q"]) == 0
    return out / "results"


@pytest.mark.parametrize("kind", ["gantt", "links"])
@pytest.mark.parametrize(("name", "params"), [
    ('blueconnect {"factors": [4, 2]}', {"factors": [4, 2]}),
    ('blueconnect{"factors":[2,4]}', {"factors": [2, 4]}),
    ("blueconnect  factors=[4,2]", {"factors": [4, 2]}),
    ("blueconnect factors=[2, 4]", {"factors": [2, 4]}),
    ("blueconnect factors=[8]", {"factors": [8]}),
    ("ring", {}),
])
def test_plot_draws_the_variant_named_as_the_tables_or_the_run_table_name_it(variants_dir, tmp_path, kind, name,
                                                                             params):
    drawn = []
    draw = "gantt" if kind == "gantt" else "link_utilization"
    with mock.patch.object(plots, draw, lambda trace, path, **_: drawn.append(trace.schedule)):
        assert main(["plot", str(variants_dir), "--kind", kind, "--algorithm", name,
                     "-o", str(tmp_path / "x.png")]) == 0
    (schedule,) = drawn
    assert schedule.algorithm == name.partition("{")[0].split()[0] and params.items() <= schedule.params.items()


@pytest.mark.parametrize(("name", "message"), [
    ("blueconnect", "--algorithm: 'blueconnect' is ambiguous: the scenario lists 3 blueconnect choices; name one as "
                    "the tables do: 'blueconnect {\"factors\": [8]}', 'blueconnect {\"factors\": [2, 4]}', "
                    "'blueconnect {\"factors\": [4, 2]}'"),
    ('blueconnect {"chunks": 4, "factors": [2, 4]}',
     "--algorithm: the scenario lists no 'blueconnect {\"chunks\": 4, "),
    ('blueconnect {"factors": [2, 2, 2]}', "--algorithm: the scenario lists no 'blueconnect {\"factors\": [2, 2, 2]}'; "
                                           "its blueconnect choices, as they would be typed: 'blueconnect {"),
    ("blueconnect {factors: [2, 4]}", "--algorithm: the parameters of algorithm 'blueconnect {factors: [2, 4]}' are "
                                      "not a JSON object"),
    ("blueconect factors=[2, 4]", "--algorithm: the scenario lists no algorithm 'blueconect'; did you mean "
                                  "'blueconnect'?"),
])
def test_plot_refuses_a_name_that_fits_several_variants_or_none_in_one_line(variants_dir, tmp_path, capsys, name,
                                                                           message):
    assert main(["plot", str(variants_dir), "--kind", "gantt", "--algorithm", name, "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_plot_says_precisely_what_a_directory_lacks(sparse_dir, tmp_path, capsys):
    (tmp_path / "results.csv").write_text((sparse_dir / "results.csv").read_text())
    assert main(["plot", str(tmp_path), "--kind", "gantt"]) == 2
    assert "no manifest.json in this directory: links and gantt re-run one case of the scenario it records" in \
        capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["plot", str(empty), "--kind", "time"]) == 2
    assert "no results.csv in this directory; `simnet run SCENARIO --out" in capsys.readouterr().err
    assert main(["plot", str(tmp_path / "results.csv"), "--kind", "time"]) == 2
    assert "expected a results directory (written by `simnet run --out`) or a scenario .yaml file, got a file " \
           "ending in '.csv'" in capsys.readouterr().err
    assert main(["plot", str(tmp_path / "nowhere"), "--kind", "time"]) == 2
    assert "nowhere: no such file or directory" in capsys.readouterr().err


@pytest.mark.parametrize("topology", ["torus_4x4x4", "abci_rack"])
def test_topology_drawing(tmp_path, topology):
    target = tmp_path / f"{topology}.png"
    assert main(["topo", "draw", topology, "-o", str(target)]) == 0
    width, height = png_size(target)
    assert 600 <= width <= 2400 and 300 <= height <= 1800


def test_speedups_of_results_without_ring_are_over_the_first_algorithm_as_in_compare(tmp_path, capsys):
    out = tmp_path / "alltoall"
    assert main(["run", str(ROOT / "scenarios" / "alltoall.yaml"), "--out", str(out), "-q"]) == 0
    capsys.readouterr()
    assert (out / "speedup.png").exists() and "## Speedup over direct" in (out / "results.md").read_text()
    target = tmp_path / "speedup.png"
    assert main(["plot", str(out), "--kind", "speedup", "-o", str(target)]) == 0
    assert png_size(target)[0] > 0
    assert main(["plot", str(out), "--kind", "speedup", "--baseline", "ring", "-o", str(target)]) == 2
    assert "--baseline: baseline 'ring' is not among the algorithms run" in capsys.readouterr().err


def test_plot_point_takes_a_label_as_the_tables_show_it(sweep_dir, tmp_path, capsys):
    """Study r25 finding 7: `--point 'topology.fabric_params.oversubscription=2:1'` was 'not a valid integer',
    though tables and results.csv name points by label. A label (spaces aside) picks the same run as its
    index; a wrong one is an error listing the points."""
    import pandas as pd

    labels = list(dict.fromkeys(pd.read_csv(sweep_dir / "results.csv")["point"]))
    by_index, by_label = tmp_path / "index.png", tmp_path / "label.png"
    assert main(["plot", str(sweep_dir), "--kind", "links", "--point", "2", "-o", str(by_index)]) == 0
    assert main(["plot", str(sweep_dir), "--kind", "links", "--point", labels[2].replace(",", ", "),
                 "-o", str(by_label)]) == 0
    assert by_index.read_bytes() == by_label.read_bytes()
    capsys.readouterr()
    assert main(["plot", str(sweep_dir), "--kind", "links", "--point", "topology.hosts=9", "-o",
                 str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert (f"--point: no point 'topology.hosts=9'; give an index from 0 to 3 or a label (points: 0 = {labels[0]!r}; "
            f"1 = {labels[1]!r}") in err and len(err.strip().splitlines()) == 1
