"""The command line on jobs scenarios: table, files, report, plots, and what it refuses."""

import json
from pathlib import Path

import pandas as pd
import pytest

from simnet import analysis, plots, scenario
from simnet.cli import main

ROOT = Path(__file__).resolve().parents[1]
TP_DP = ROOT / "scenarios" / "jobs_tp_dp.yaml"
PNG = b"\x89PNG\r\n\x1a\n"


def test_run_prints_one_row_per_job(capsys):
    assert main(["run", str(TP_DP)]) == 0
    out = capsys.readouterr().out
    assert "jobs_tp_dp: 2 sweep points, 2 jobs together, maxmin links, routing dmodk\n" in out
    *lines, note = out.splitlines()[2:]
    assert [line.split()[1] for line in lines] == ["train.tp", "train.dp"] * 2
    assert note == analysis.JOBS_NOTE


def test_the_table_says_why_a_job_that_shared_a_link_names_no_job_that_slowed_it(capsys):
    """Study r22 F4: a row no slower than alone showed ``shared`` and ``on link`` but a blank ``slowed by``, while
    docs/concurrency.md said both columns name the other job and link of most shared time."""
    assert main(["run", str(ROOT / "scenarios" / "jobs_tenants.yaml")]) == 0
    out = capsys.readouterr().out.splitlines()
    header, *rows, note = out[1:]
    assert header.split()[-6:] == ["shared", "slowed", "by", "most", "shared", "link"]
    assert note == analysis.JOBS_NOTE
    assert "named only if the job took longer than alone" in note and "whenever shared > 0" in note
    not_slowed = [row.split() for row in rows if float(row.split()[-5]) <= 1]
    assert not_slowed
    for *_, shared, unit, link in not_slowed:
        assert float(shared) > 0 and unit in ("us", "ms") and "->" in link, "no job named between shared and link"


def test_out_writes_tables_plots_and_a_report_naming_the_shared_links(tmp_path, capsys):
    out = tmp_path / "tp_dp"
    assert main(["run", str(TP_DP), "--out", str(out), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["job"] for row in rows] == ["train.tp", "train.dp"] * 2
    interference = pd.read_csv(out / "interference.csv", keep_default_na=False)
    assert set(interference["point"]) == {"topology.node=dgx1"}
    report = (out / "results.md").read_text()
    assert "## Shared links" in report and "### train.tp (topology.node=dgx1)" in report
    for src, dst in zip(interference["src"], interference["dst"]):
        assert f"{src} -> {dst}" in report
    for name in ("jobs_gantt.png", "slowdown.png"):
        assert (out / name).read_bytes()[:8] == PNG
    assert main(["plot", str(out), "--kind", "slowdown", "-o", str(tmp_path / "again.png")]) == 0
    assert (tmp_path / "again.png").read_bytes()[:8] == PNG
    drawn = []
    real = plots.jobs_gantt
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(plots, "jobs_gantt", lambda *a, **k: drawn.append(real(*a, **k)))
        assert main(["plot", str(out), "--kind", "jobs", "--point", "1", "-o", str(tmp_path / "second.png")]) == 0
    (axes,) = drawn[0].axes
    assert axes.get_title() == "jobs_tp_dp\ntopology.node=dgx1 (sweep point 1 of 2, counted from 0)"
    capsys.readouterr()
    for kind, point, message in [("jobs", "2", "--point: no point 2; the sweep has 2"),
                                 ("slowdown", "1", "--point: slowdown draws every sweep point")]:
        assert main(["plot", str(out), "--kind", kind, "--point", point, "-o", str(tmp_path / "x.png")]) == 2
        assert capsys.readouterr().err.startswith(f"error: {out}: {message}")


def test_plot_draws_the_jobs_gantt_from_a_scenario(tmp_path, capsys, monkeypatch):
    """Only the sweep point drawn is run; one out of range is refused before any runs."""
    target = tmp_path / "gantt.png"
    ran, drawn = [], []
    real_run, real_draw = scenario.run_jobs_point, plots.jobs_gantt
    monkeypatch.setattr(scenario, "run_jobs_point", lambda point, **k: (ran.append(point.label), real_run(point))[1])
    monkeypatch.setattr(plots, "jobs_gantt", lambda *a, **k: drawn.append(real_draw(*a, **k)))
    assert main(["plot", str(TP_DP), "--kind", "jobs", "--point", "1", "-o", str(target)]) == 0
    assert target.read_bytes()[:8] == PNG
    assert ran == ["topology.node=dgx1"]
    assert drawn[0].axes[0].get_title() == "jobs_tp_dp\ntopology.node=dgx1 (sweep point 1 of 2, counted from 0)"
    assert main(["plot", str(TP_DP), "--kind", "jobs", "--point", "2", "-o", str(target)]) == 2
    assert ran == ["topology.node=dgx1"]
    assert "--point: no point 2; the sweep has 2" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["time", "busbw", "speedup", "links", "gantt"])
def test_plots_of_one_run_refuse_a_jobs_results_directory_as_they_refuse_its_scenario(tmp_path, capsys, kind):
    """Study r25 F5: a jobs run's directory blamed the `sizes: []` its manifest.json recorded, which simnet wrote."""
    loaded = scenario.load_scenario(TP_DP)
    recorded = {"name": loaded.name, "points": [{"index": 0, "label": "", "digest": "0",
                                                 "scenario": loaded.model_dump(mode="json", exclude_none=True)}]}
    (tmp_path / "manifest.json").write_text(json.dumps(recorded))
    message = "--kind: a jobs scenario has no single run to draw; use --kind jobs or --kind slowdown"
    for source in (tmp_path, TP_DP):
        assert main(["plot", str(source), "--kind", kind, "-o", str(tmp_path / "x.png")]) == 2
        assert capsys.readouterr().err == f"error: {source}: {message}\n"


def test_a_jobs_runs_manifest_records_points_that_parse_again(tmp_path):
    out = tmp_path / "tp_dp"
    assert main(["run", str(TP_DP), "--out", str(out), "--format", "csv"]) == 0
    for point in json.loads((out / "manifest.json").read_text())["points"]:
        assert "sizes" not in point["scenario"]
        assert scenario.parse_scenario(point["scenario"]).jobs


def test_commands_for_one_collective_refuse_jobs_scenarios(tmp_path, capsys):
    assert main(["compare", str(TP_DP)]) == 2
    assert capsys.readouterr().err.startswith(f"error: {TP_DP}: jobs: compare compares algorithms of one collective")
    assert main(["plot", str(TP_DP), "--kind", "gantt"]) == 2
    assert "use --kind jobs or --kind slowdown" in capsys.readouterr().err
    quickstart = ROOT / "scenarios" / "quickstart.yaml"
    assert main(["plot", str(quickstart), "--kind", "slowdown"]) == 2
    assert "this scenario has no jobs" in capsys.readouterr().err
