import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from simnet.cli import main

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "scenarios" / "quickstart.yaml"


def test_run_prints_a_table(capsys):
    assert main(["run", str(QUICKSTART)]) == 0
    out = capsys.readouterr().out
    assert "quickstart: switch(hosts=8, bandwidth=12.5 GB/s, latency=1 us)" in out
    assert "64 MiB" in out and "9.423 ms" in out


def test_json_is_the_only_output(capsys):
    assert main(["run", str(QUICKSTART), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["size_bytes"] for row in rows] == [1024, 2**20, 64 * 2**20]
    assert {row["algorithm"] for row in rows} == {"ring"}


def test_out_writes_csv_json_and_plot(tmp_path, capsys):
    out = tmp_path / "results"
    assert main(["run", str(QUICKSTART), "--out", str(out), "--format", "csv"]) == 0
    printed = capsys.readouterr().out
    frame = pd.read_csv(out / "results.csv")
    assert len(frame) == 3
    assert printed == (out / "results.csv").read_text()
    assert json.loads((out / "results.json").read_text())[2]["sim_time_s"] == frame["sim_time_s"][2]
    assert (out / "time_vs_size.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_bad_input_is_one_line_with_exit_code_2(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text(QUICKSTART.read_text().replace("hosts: 8", "hosts: 1"))
    assert main(["run", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {bad}: topology.hosts: must be an integer ≥ 2, got 1\n"


def test_console_script_has_no_traceback_unless_debug(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(QUICKSTART.read_text().replace("100 Gbps", "100 Gbs"))
    command = [sys.executable, "-m", "simnet.cli"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    plain = subprocess.run([*command, "run", str(bad)], capture_output=True, text=True, env=env)
    assert plain.returncode == 2
    assert plain.stderr.count("\n") == 1 and "Traceback" not in plain.stderr
    debug = subprocess.run([*command, "--debug", "run", str(bad)], capture_output=True, text=True, env=env)
    assert debug.returncode != 0 and "Traceback" in debug.stderr


def test_missing_scenario_file(capsys):
    assert main(["run", "does-not-exist.yaml"]) == 2
    assert capsys.readouterr().err == "error: does-not-exist.yaml: file not found\n"


@pytest.mark.parametrize("args", [["--help"], ["run", "--help"]])
def test_help_shows_an_example(args, capsys):
    assert main(args) == 0
    assert "simnet" in capsys.readouterr().out


def test_algorithms_lists_parameters_and_formulas(capsys):
    assert main(["algorithms"]) == 0
    out = capsys.readouterr().out
    assert "blueconnect (allreduce):" in out and "factors: Sequence[int] | None = None" in out
    assert "channels: int = 1" in out and "2(p-1)α + 2(p-1)/p·nβ" in out
    assert main(["algorithms", "--format", "json"]) == 0
    entries = {e["name"]: e for e in json.loads(capsys.readouterr().out)}
    assert entries["halving_doubling"]["parameters"] == {"chunks": {"type": "int", "default": 1}}


def test_compare_prints_winners_and_rejects_unknown_baselines(capsys):
    assert main(["compare", str(ROOT / "scenarios" / "blueconnect_dgx.yaml"), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {row["size_bytes"] for row in report["winners"]} == {2**20, 64 * 2**20}
    assert main(["compare", str(QUICKSTART), "--baseline", "tree"]) == 2
    assert "--baseline: baseline 'tree' is not among the algorithms run (ring)" in capsys.readouterr().err


def test_tune_prints_a_tuner_table(tmp_path, capsys):
    assert main(["tune", "power9_cluster", "--sizes", "4KiB,16MiB", "--top", "2", "--channels", "1,2",
                 "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "sizes" in out and "choice" in out and "simulated" in out
    table = pd.read_csv(tmp_path / "tuner.csv")
    assert table["from_bytes"].iloc[0] == 4096 and table["to_bytes"].iloc[-1] == 16 * 2**20
    assert len(pd.read_csv(tmp_path / "candidates.csv")) > len(table)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sizes", "1KiB..1GiB:y2"], "--sizes: expected a step such as ':x4'"),
        (["--chunks", "1,x"], "--chunks: expected comma-separated integers"),
        (["--channels", "0"], "--channels: counts must be ≥ 1"),
    ],
)
def test_tune_argument_errors(capsys, args, message):
    assert main(["tune", "switch8", *args]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("command", ["", "run", "compare", "tune", "plot", "algorithms", "topo", "topo show", "topo draw"])
def test_every_subcommand_help_shows_an_example(command, capsys):
    assert main([*command.split(), "--help"]) == 0
    assert "Example" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("topology", "facts"),
    [
        ("topologies/dgx_b200.yaml",
         ["GPUs: 8 on 1 host(s)", "8 nic", "1 switch at 74% of port bandwidth (nvswitch0)"]),
        ("topologies/gb200_nvl72.yaml", ["GPUs: 72 on 1 host(s)", "72 gpu, 72 nic, 36 cpu, 1 switch",
                                         "tier nvswitch: 72 links, 1296 cables of 50 GB/s",
                                         "1 switch at 74% of port bandwidth (nvswitch0)"]),
        ("dgx_h100", ["1 switch at 85% of port bandwidth (nvswitch0)"]),
    ],
)
def test_topo_show_describes_the_current_machines_and_their_nvls(topology, facts, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["topo", "show", topology]) == 0
    out = capsys.readouterr().out
    assert all(fact in out for fact in facts), out
    assert main(["topo", "show", topology, "--format", "json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert list(info["reduce_switches"].values()) == [["nvswitch0"]]
