import csv
import io
import json
import os
import re
import signal
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


@pytest.mark.parametrize(("network", "named"), [
    ({}, ", routing dmodk\n"),
    ({"routing": "ecmp_hash", "hash_seed": 2},
     ", routing ecmp_hash, hash_seed 2 (one draw of the ECMP hash; sweep network.hash_seed for the spread)\n"),
])
def test_run_and_compare_headers_and_the_report_name_the_routing_and_its_seed(tmp_path, capsys, network, named):
    """Study r26 F3: a one-seed ECMP run and a d-mod-k run printed the same header, the report too."""
    path = tmp_path / "fabric.yaml"
    path.write_text(json.dumps({
        "name": "fabric", "sizes": ["1 MiB"], "collective": {"op": "alltoall", "algorithms": ["direct"]},
        "topology": {"builder": "fat_tree", "k": 4, "bandwidth": "100 Gbps", "latency": "1 us"},
        "network": network}))
    assert main(["run", str(path), "-q", "--out", str(tmp_path / "out"), "--no-plots"]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith(named.rstrip("\n"))
    assert f"- routing: {named.removeprefix(', routing ')}" in (tmp_path / "out" / "results.md").read_text()
    assert main(["compare", str(path), "-q"]) == 0
    assert f"- routing: {named.removeprefix(', routing ')}" in capsys.readouterr().out
    row = pd.read_csv(tmp_path / "out" / "results.csv", keep_default_na=False).iloc[0]
    assert (row["routing"], str(row["hash_seed"])) == (network.get("routing", "dmodk"),
                                                       str(network.get("hash_seed", "")))


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
    written = json.loads((out / "results.json").read_text())
    assert written[2]["sim_time_s"] == frame["sim_time_s"][2]
    assert written[2]["params"] == json.loads(frame["params"][2]) == {"chunks": 1}, "an object, not JSON text"
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
    assert "blueconnect (allreduce):" in out
    assert "factors: Sequence[int] | None = read off the topology's hierarchy on a network" in out
    assert "channels: int = 1" in out and "2(p-1)α + 2(p-1)/p·nβ" in out
    assert main(["algorithms", "--format", "json"]) == 0
    entries = {e["name"]: e for e in json.loads(capsys.readouterr().out)}
    assert entries["halving_doubling"]["parameters"] == {"chunks": {"type": "int", "default": 1, "decided_by": None}}
    derived = entries["sparse_ring_ring"]["parameters"]["gpus_per_node"]
    assert derived["default"] is None and derived["decided_by"].startswith("read off the topology's hierarchy")


def test_nccl_runs_on_a_topology_without_nvls(tmp_path, capsys):
    """NCCL's choice on an H100 server built with nvls: false is the ring, which runs (it used to pick NVLS,
    which the topology cannot run, and the whole run failed)."""
    scenario = tmp_path / "nvls_off.yaml"
    scenario.write_text("name: nvls_off\ntopology: {builder: dgx_h100, nvls: false}\n"
                        "collective: {op: allreduce, algorithms: [nccl]}\nsizes: [64 MiB]\n")
    assert main(["run", str(scenario), "--format", "json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["resolved"]["nccl_algorithm"] == "ring" and row["sim_time_s"] > 0


def test_tune_names_one_size_once(capsys):
    assert main(["tune", "switch8", "--sizes", "64MiB", "--prune-factor", "1"]) == 0
    out = capsys.readouterr().out
    assert ", 1 size (64 MiB), " in out and "64 MiB .. 64 MiB" not in out


def test_tune_nccl_on_a_server_without_nvls_names_what_it_did_not_try(tmp_path, capsys):
    """--nccl on an H100 server built without NVLS tunes (it used to fail on NVLS, naming no file and no key)
    and says in one line on stderr what it did not try, unless -q."""
    topology = tmp_path / "h100_nonvls.yaml"
    topology.write_text("builder: dgx_h100\nnvls: false\n")
    assert main(["tune", str(topology), "--sizes", "64MiB", "--nccl", "--prune-factor", "1"]) == 0
    [note] = capsys.readouterr().err.splitlines()
    assert note.startswith("--nccl: not tried: nvls (no switch with reduce: true serves every group")
    assert main(["tune", str(topology), "--sizes", "64MiB", "--nccl", "--prune-factor", "1", "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_tune_nccl_says_under_its_table_that_a_winner_outside_nccls_family_pays_link_latencies_only(capsys):
    """With --nccl, a range won by a schedule NCCL does not run (recursive doubling at 1 KiB) gets the caveat
    `run` prints; a table tuned without NCCL's schedules does not."""
    from simnet.analysis import NCCL_COMPARISON_NOTE

    assert main(["tune", "dgx_h100", "--sizes", "1KiB", "--nccl", "--prune-factor", "1"]) == 0
    out = capsys.readouterr().out
    assert "recursive_doubling" in out and out.rstrip().endswith(NCCL_COMPARISON_NOTE)
    assert main(["tune", "dgx_h100", "--sizes", "1KiB", "--prune-factor", "1"]) == 0
    assert NCCL_COMPARISON_NOTE not in capsys.readouterr().out


def test_algorithms_says_nccls_algorithm_is_its_choice_not_ring(capsys):
    """nccl's `nccl_algorithm` is decided per size by NCCL's model unless given: the listing says so instead of
    the builder's fallback 'ring', which reads as if NCCL always ran Ring."""
    assert main(["algorithms"]) == 0
    out = capsys.readouterr().out
    assert "nccl_algorithm: str = 'ring'" not in out
    assert "nccl_algorithm: str = NCCL's choice per size, from its cost model of the topology (give one of ring, " \
           "tree, nvls" in out
    assert main(["algorithms", "--format", "json"]) == 0
    entries = {e["name"]: e for e in json.loads(capsys.readouterr().out)}
    for name in ("nccl", "nccl_all_gather", "nccl_reduce"):
        parameter = entries[name]["parameters"]["nccl_algorithm"]
        assert parameter["default"] is None and parameter["decided_by"].startswith("NCCL's choice per size")
    assert all(set(parameter) == {"type", "default", "decided_by"}
               for entry in entries.values() for parameter in entry["parameters"].values())
    assert entries["ring"]["parameters"]["chunks"]["decided_by"] is None


def test_compare_prints_winners_and_rejects_unknown_baselines(capsys, monkeypatch):
    """A baseline whose algorithm the scenario does not list is refused before anything runs."""
    assert main(["compare", str(ROOT / "scenarios" / "blueconnect_dgx.yaml"), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {row["size_bytes"] for row in report["winners"]} == {2**20, 64 * 2**20}
    ran = []
    monkeypatch.setattr("simnet.cli._sweep", lambda *a, **k: ran.append(1))
    assert main(["compare", str(QUICKSTART), "--baseline", "tree"]) == 2
    assert "--baseline: baseline 'tree' names 'tree', which the scenario does not list (ring)" \
        in capsys.readouterr().err
    assert ran == []
    assert main(["compare", str(QUICKSTART), "--baseline", "ring channels"]) == 2
    assert "--baseline: baseline 'ring channels': expected key=value" in capsys.readouterr().err
    assert ran == []


def test_compare_without_ring_measures_speedups_against_the_first_algorithm_listed(capsys):
    assert main(["compare", str(ROOT / "scenarios" / "all_gather.yaml")]) == 0
    assert "speedups over all_gather" in capsys.readouterr().out


def test_tune_prints_a_tuner_table(tmp_path, capsys):
    assert main(["tune", "power9_cluster", "--sizes", "4KiB,16MiB", "--channels", "1,2",
                 "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "sizes" in out and "choice" in out and "at size" in out and "simulated" in out
    table = pd.read_csv(tmp_path / "tuner.csv")
    assert table["from_bytes"].iloc[0] == 4096 and table["to_bytes"].iloc[-1] == 16 * 2**20
    assert (table["at_bytes"] == table["to_bytes"]).all()
    candidates = pd.read_csv(tmp_path / "candidates.csv")
    assert len(candidates) > len(table)
    pruned = int(candidates["pruned"].sum())
    assert f"simulated {len(candidates) - pruned} of {len(candidates)} (size, candidate) pairs; pruned {pruned} " \
           "whose model time exceeds 1.5× the best time known at their size" in out


def test_tune_on_worker_processes_or_dask_prints_the_table_of_one_process(capsys):
    command = ["tune", "power9_cluster", "--sizes", "4KiB,16MiB", "--channels", "1,2", "--format", "csv", "-q"]
    assert main(command) == 0
    alone = capsys.readouterr().out
    assert main([*command, "--workers", "2"]) == 0
    assert capsys.readouterr().out == alone
    assert main([*command, "--executor", "dask", "--workers", "2"]) == 0
    assert capsys.readouterr().out == alone


@pytest.mark.parametrize("command", [["tune", "switch8", "--sizes", "1MiB", "-q"], ["run", str(QUICKSTART), "-q"]],
                         ids=["tune", "run"])
def test_a_scheduler_that_cannot_be_used_is_named_in_one_line(capsys, tmp_path, monkeypatch, command):
    """Study r22 F7: run gave a 74-line traceback and exit 1 for an unreachable scheduler, where tune gave one line;
    a malformed address (Dask's ValueError, stood in for here: a second failed Client in one process can deadlock
    Dask's loop runner as the first is collected) printed a traceback in both."""
    import dask
    import distributed  # noqa: F401 - its defaults enter dask's config before the timeout below, not inside it

    command = [*command, "-o", str(tmp_path / "out")] if command[0] == "run" else command
    assert main([*command, "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert capsys.readouterr().err == ("error: --scheduler: 'tcp://127.0.0.1:1' is a Dask scheduler; give it with "
                                       "--executor dask\n")
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        assert main([*command, "--executor", "dask", "--scheduler", "tcp://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --scheduler: cannot reach the Dask scheduler at 'tcp://127.0.0.1:1': ")
    assert err.count("\n") == 1

    def malformed(address, *args, **kwargs):
        raise ValueError(f"missing port number in address {address!r}")

    monkeypatch.setattr("dask.distributed.Client", malformed)
    assert main([*command, "--executor", "dask", "--scheduler", "127.0.0.1"]) == 2
    assert capsys.readouterr().err == ("error: --scheduler: cannot reach the Dask scheduler at '127.0.0.1': missing "
                                       "port number in address '127.0.0.1'\n")


def test_dask_workers_mean_the_same_under_run_and_tune(capsys, tmp_path, monkeypatch):
    """Study r26 F3: `run --executor dask --workers 2` without --scheduler ran on threads inside the process
    (Client(processes=False)) and dropped --workers, where `tune` started 2 worker processes. Both now ask
    simnet.sweep.dask_client for a local cluster of --workers processes."""
    import contextlib

    from simnet import sweep

    asked = []
    real = sweep.dask_client

    @contextlib.contextmanager
    def recorded(scheduler, workers):
        asked.append((scheduler, workers))
        with real(scheduler, workers) as client:
            yield client

    monkeypatch.setattr(sweep, "dask_client", recorded)
    assert main(["run", str(QUICKSTART), "-q", "--format", "csv", "--executor", "dask", "--workers", "2"]) == 0
    assert main(["tune", "switch8", "--sizes", "1MiB", "-q", "--format", "csv", "--executor", "dask",
                 "--workers", "2"]) == 0
    assert asked == [(None, 2), (None, 2)]


def test_tune_workers_end_at_once_when_the_command_fails():
    """An error or Ctrl-C must not wait for simulations already handed to the workers (a hang guard: the
    tasks sleep ten minutes)."""
    import time

    from simnet.cli import _tune_executor

    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with _tune_executor("local", 2, None) as pool:
            running = [pool.submit(time.sleep, 600) for _ in range(3)]
            time.sleep(0.5)
            raise KeyboardInterrupt
    assert time.monotonic() - began < 60
    assert not [f for f in running if f.done() and not f.cancelled() and f.exception() is None]


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_tune_worker_that_dies_is_a_one_line_error():
    from simnet.cli import _tune_executor
    from simnet.errors import SimnetError

    with pytest.raises(SimnetError, match="a worker process died") as info:
        with _tune_executor("local", 2, None) as pool:
            pool.submit(_die).result()
    assert info.value.path == "--workers"


def test_tune_says_how_many_it_pruned_on_stderr_unless_quiet(capsys):
    assert main(["tune", "switch8", "--sizes", "1MiB", "--format", "csv", "--prune-factor", "inf"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "simulated 16 of 16 (size, candidate) pairs; pruned 0 whose model time exceeds " \
                           "inf× the best time known at their size\n"
    assert main(["tune", "switch8", "--sizes", "1MiB", "--format", "csv", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_tune_takes_the_network_block_of_a_scenario_and_agrees_with_run(tmp_path, capsys):
    scenario = tmp_path / "calibrated.yaml"
    scenario.write_text(
        "name: calibrated\n"
        "topology: {file: dgx1}\n"
        "collective: {op: allreduce, algorithms: [{name: ring, chunks: 4, channels: 2}, halving_doubling]}\n"
        "sizes: [64 KiB, 16 MiB]\n"
        "network: {tier_efficiency: {nvlink: 80%, pcie: 90%}, overhead: 2 us, reduce_bandwidth: 100 GB/s}\n")
    assert main(["run", str(scenario), "--format", "json"]) == 0
    ran = {(row["algorithm"], row["size_bytes"]): row["sim_time_s"] for row in json.loads(capsys.readouterr().out)}
    assert main(["tune", str(scenario), "--sizes", "64KiB,16MiB", "--prune-factor", "inf", "--chunks", "1,4",
                 "--channels", "1,2", "--out", str(tmp_path / "tuned"), "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    tuned = pd.read_csv(tmp_path / "tuned" / "candidates.csv")
    chosen = {"ring": '{"channels": 2, "chunks": 4}', "halving_doubling": '{"chunks": 1}'}
    for (algorithm, size), time in ran.items():
        row = tuned[(tuned["algorithm"] == algorithm) & (tuned["params"] == chosen[algorithm])
                    & (tuned["size_bytes"] == size)]
        assert row["simulated_s"].iloc[0] == time
    assert main(["tune", str(scenario), "--sizes", "64KiB,16MiB", "--prune-factor", "inf", "--chunks", "1,4",
                 "--channels", "1,2", "--tier-efficiency", "nvlink=100%", "--format", "csv"]) == 0
    faster = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert faster["simulated_s"].iloc[-1] < pd.read_csv(tmp_path / "tuned" / "tuner.csv")["simulated_s"].iloc[-1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sizes", "1KiB..1GiB:y2"], "--sizes: expected a step such as ':x4'"),
        (["--sizes", "-1KiB"], "error: --sizes: must be ≥ 1 B, got '-1KiB'\n"),
        (["--sizes", "0"], "error: --sizes: must be ≥ 1 B, got '0'\n"),
        (["--sizes", "1MiB,-4MiB"], "error: --sizes: must be ≥ 1 B, got '-4MiB'\n"),
        (["--sizes", "0B..1MiB"], "error: --sizes: must be ≥ 1 B, got '0B'\n"),
        (["--chunks", "1,x"], "--chunks: expected comma-separated integers"),
        (["--channels", "0"], "--channels: counts must be ≥ 1"),
        (["--prune-factor", "0.5"], "Invalid value for '--prune-factor'"),
        (["--tier-efficiency", "nvlink"], "--tier-efficiency: expected TIER=FRACTION such as 'nvlink=80%'"),
        (["--tier-efficiency", "nvlink=0.8"], "--tier-efficiency nvlink: the topology has no tier 'nvlink'"),
        (["--overhead", "5"], "--overhead: '5' needs a unit"),
        (["--straggler", "x=2"], "--straggler x: input should be a valid integer"),
        (["--reduce-bandwidth", "fast"], "--reduce-bandwidth:"),
        (["--top", "3"], "--top is gone: tune simulates the candidates within --prune-factor"),
    ],
)
def test_tune_argument_errors(capsys, args, message):
    assert main(["tune", "switch8", *args]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(("args", "line"), [
    (["run", "scenarios/quickstart.yaml", "--bogus"],
     "error: No such option '--bogus'. Did you mean '--out'? (see 'simnet run --help')"),
    (["nosuch"], "error: No such command 'nosuch'. (see 'simnet --help')"),
    (["tune", "switch8", "--op", "scan"], "error: Invalid value for '--op': 'scan' is not one of"),
    (["topo", "show"], "error: Missing argument 'TOPOLOGY'. (see 'simnet topo show --help')"),
    (["run", "scenarios/quickstart.yaml", "--out"],
     "error: Option '--out' requires an argument. (see 'simnet run --help')"),
    (["--debug", "topo", "draw", "dgx1", "-o"],
     "error: Option '-o' requires an argument. (see 'simnet topo draw --help')"),
    (["plot", "results"],
     "error: Missing option '--kind'. Choose from: time, busbw, speedup, links, gantt, jobs, slowdown"),
])
def test_a_mistyped_command_line_is_one_line_too(args, line, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(line), err


@pytest.mark.parametrize("command", [[], ["topo"], ["export"], ["verify"], ["--debug"]])
def test_a_group_without_its_command_shows_its_help(command, capsys):
    assert main(command) == 2
    err = capsys.readouterr().err
    shown = [word for word in command if word != "--debug"]
    assert err.startswith(f"Usage: {' '.join(['simnet', *shown])} [OPTIONS] COMMAND"), err


@pytest.mark.parametrize("command", ["", "run", "compare", "tune", "plot", "algorithms", "topo", "topo show", "topo draw"])
def test_every_subcommand_help_shows_an_example(command, capsys):
    assert main([*command.split(), "--help"]) == 0
    assert "Example" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("topology", "facts"),
    [
        ("simnet/topology/presets/dgx_b200.yaml",
         ["GPUs: 8 on 1 host(s)", "8 nic", "1 switch at 74% of port bandwidth (nvswitch0)"]),
        ("simnet/topology/presets/gb200_nvl72.yaml", ["GPUs: 72 on 1 host(s)", "72 gpu, 72 nic, 36 cpu, 1 switch",
                                         "tier nvswitch: 72 links, 1296 cables of 50 GB/s",
                                         "1 switch at 74% of port bandwidth (nvswitch0)"]),
        ("dgx_h100", ["1 switch at 85% of port bandwidth (nvswitch0)",
                      "tier upi: 1 link, 1 cable of 128 GB/s, 128 GB/s per direction in all"]),
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


def test_topo_show_and_draw_a_scenarios_topology_at_a_sweep_point(capsys, tmp_path, monkeypatch):
    """Study r25 finding 7: `simnet topo show scenario.yaml` failed with "a topology needs 'builder' ... or
    'file'"; it shows the scenario's topology with its overrides, at the point --point names (index or label)."""
    monkeypatch.chdir(ROOT)
    sweep = "scenarios/ring_chunks_sweep.yaml"
    assert main(["topo", "show", sweep]) == 0
    shown = capsys.readouterr()
    assert "switch(hosts=4, bandwidth=25 GB/s" in shown.out and "GPUs: 4 on 4 host(s)" in shown.out
    assert "sweep point 0 'topology.hosts=4,collective.chunks=1' (of 12" in shown.err
    assert main(["topo", "show", sweep, "--point", "topology.hosts=16, collective.chunks=1", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["gpus"] == 16
    scenario = tmp_path / "cluster.yaml"
    scenario.write_text("name: c\ntopology: {file: dgx_h100_ndr_32, nodes: 4, fabric_params: {leaves: 2}}\n"
                        "collective: {op: allreduce, algorithms: [ring]}\nsizes: [1 MiB]\n")
    assert main(["topo", "show", str(scenario)]) == 0
    out = capsys.readouterr().out
    assert "leaves=2" in out and "GPUs: 32 on 4 host(s)" in out
    assert main(["topo", "draw", str(scenario), "-o", str(tmp_path / "c.png")]) == 0 and (tmp_path / "c.png").is_file()
    assert main(["topo", "show", "dgx1", "--point", "1"]) == 2
    assert "--point: picks a sweep point of a scenario file, got '1' with a topology" in capsys.readouterr().err


def test_topo_show_names_the_file_of_a_fabric_its_routing_cannot_route(tmp_path, capsys):
    """Study r26 F2: `simnet run` named the file of a fat-tree short of a cable, `topo show` did not."""
    from simnet.topology import dumps, fat_tree

    graph = fat_tree(4, 12.5e9, 1e-6)
    graph.remove_edge("agg0_1", "core2")
    graph.remove_edge("core2", "agg0_1")
    del graph.graph["builder"]
    path = tmp_path / "failed.yaml"
    path.write_text(dumps(graph))
    assert main(["topo", "show", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: routing: no d-mod-k route from 'gpu4' to 'gpu1': ") and err.count("\n") == 1
    assert "'agg0_1' 1 of 2 up-ports, 'core2' 3 of 4 down-ports" in err


@pytest.mark.parametrize("command", [["topo", "show", "dgx_h10"], ["topo", "draw", "dgx_h10", "-o", "x.png"],
                                     ["tune", "dgx_h10", "--sizes", "1MiB"]])
def test_a_misspelt_topology_argument_is_named_as_the_argument_with_the_closest_preset(command, capsys, tmp_path,
                                                                                       monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(command) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: TOPOLOGY: no topology file 'dgx_h10' and no preset of that name; "
                          "did you mean 'dgx_h100'? (presets: abci_node,") and err.count("\n") == 1
    assert not (tmp_path / "x.png").exists()


def test_a_directory_holding_another_scenarios_results_needs_overwrite(tmp_path, capsys):
    out = tmp_path / "D"
    sweep = ROOT / "scenarios" / "ring_chunks_sweep.yaml"
    assert main(["run", str(sweep), "--out", str(out), "--format", "csv"]) == 0
    swept = (out / "results.csv").read_text()
    capsys.readouterr()
    assert main(["run", str(QUICKSTART), "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: {out}: holds the results of 'ring_chunks_sweep' ({sweep}), not 'quickstart'; "
        "pass --overwrite to replace them, or choose another --out\n")
    assert (out / "results.csv").read_text() == swept
    assert main(["run", str(QUICKSTART), "--out", str(out), "--overwrite", "--format", "csv"]) == 0
    assert (out / "results.csv").read_text() == capsys.readouterr().out
    assert len(list((out / "points").glob("*.json"))) == 1 and not (out / "speedup.png").exists()
    assert json.loads((out / "manifest.json").read_text())["name"] == "quickstart"
    assert main(["run", str(QUICKSTART), "--out", str(out), "--resume", "--overwrite"]) == 2
    assert "--resume keeps the finished points in --out and --overwrite removes them" in capsys.readouterr().err


def test_a_second_run_into_a_directory_in_use_is_refused_in_one_line(tmp_path, capsys):
    from tests.test_outputs import HOLDER

    out = tmp_path / "D"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(out)], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        assert holder.stdout.readline() == "held\n"
        for command in (["run", str(QUICKSTART)], ["compare", str(QUICKSTART)], ["tune", "switch8", "--sizes", "1KiB"]):
            assert main([*command, "--out", str(out)]) == 2
            err = capsys.readouterr().err
            assert err.startswith(f"error: {out}: in use by simnet run of 'ring_chunks_sweep' "
                                  f"(scenarios/ring_chunks_sweep.yaml), pid {holder.pid}, started ")
            assert err.count("\n") == 1
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    assert main(["run", str(QUICKSTART), "--out", str(out), "--format", "csv"]) == 0


def test_tune_owns_its_output_directory_too(tmp_path, capsys):
    out = tmp_path / "T"
    assert main(["tune", "switch8", "--sizes", "1KiB", "--out", str(out), "--quiet"]) == 0
    assert json.loads((out / "manifest.json").read_text())["files"] == ["candidates.csv", "tuner.csv"]
    assert main(["tune", "ring8", "--sizes", "1KiB", "--out", str(out), "--quiet"]) == 2
    assert "holds the results of 'tune switch8' (switch8), not 'tune ring8'" in capsys.readouterr().err
    assert main(["run", str(QUICKSTART), "--out", str(out), "--overwrite", "--format", "csv"]) == 0
    assert not (out / "tuner.csv").exists() and (out / "results.csv").exists()


HEAVY = ("matplotlib", "pandas", "dask", "distributed", "numpy", "networkx", "simpy", "pydantic", "scipy", "tqdm",
         "yaml")


@pytest.mark.parametrize("code", [
    "import simnet.cli",
    "import simnet",
    "from simnet.cli import main; main(['--help'])",
    "from simnet.cli import main; main(['tune', '--help'])",
])
def test_startup_imports_no_heavy_module(code):
    """`simnet --help` and every command's start load only click: the rest is imported where it is used."""
    probe = f"{code}\nimport sys\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.stdout.splitlines()[-1] == "[]"


@pytest.mark.parametrize("scenario", ["quickstart.yaml", "jobs_tp_dp.yaml"])
def test_run_without_plots_does_not_import_matplotlib(scenario, tmp_path):
    """`simnet run --no-plots` (sweeps on workers, scripted runs) leaves matplotlib unloaded."""
    code = (f"import sys\nfrom simnet.cli import main\n"
            f"main(['run', {str(ROOT / 'scenarios' / scenario)!r}, '--no-plots', '-o', {str(tmp_path / 'out')!r}])\n"
            f"print('matplotlib' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.stdout.splitlines()[-1] == "False"


def test_python_dash_m_simnet_is_the_command_line():
    result = subprocess.run([sys.executable, "-m", "simnet", "--help"], capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 0 and "simnet tune" in result.stdout


def test_the_library_attributes_load_on_first_use():
    import simnet

    assert {"Network", "simulate", "run", "__version__"} <= set(dir(simnet))
    assert simnet.Network.__module__ == "simnet.network" and simnet.units.parse_size("1 KiB") == 1024
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        simnet.nope


def test_every_submodule_is_an_attribute_after_a_bare_import_and_loads_on_first_use():
    """Study r26 F6: `import simnet; simnet.testing` was an AttributeError (docs/testing.md wrote it so), and
    so was simnet.sweep. A bare import still loads no heavy module."""
    code = ("import sys, simnet; heavy = 'pandas' in sys.modules; "
            "print(heavy, simnet.testing.assert_under.__module__, simnet.sweep.run_sweep.__module__, "
            "simnet.analysis.read_results.__name__)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.stdout.split() == ["False", "simnet.testing", "simnet.sweep", "read_results"], result.stderr


def test_the_choices_written_into_the_command_line_are_the_librarys():
    from simnet import cli, links, network
    from simnet.topology import contract

    assert cli._LINK_MODELS == tuple(links.LINK_MODELS)
    assert cli._SHARING == links.SHARING and cli._BUNDLES == network.BUNDLES and cli._ROUTINGS == contract.ROUTINGS


def _commands(group, prefix=()):
    import click

    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _commands(command, (*prefix, name))
        else:
            yield " ".join((*prefix, name)), command


def test_one_vocabulary_of_options_across_commands():
    """An output path is -o/--out everywhere, a format is table|csv|json everywhere (issue 19)."""
    from simnet.cli import cli

    seen = set()
    for name, command in _commands(cli):
        for param in command.params:
            if "--out" in param.opts or "--output" in param.opts or param.name in ("out_dir", "out_path", "output"):
                assert param.opts == ["-o", "--out"], name
                seen.add(name)
            if "--format" in param.opts:
                assert list(param.type.choices) == ["table", "csv", "json"] and param.default == "table", name
            if "--quiet" in param.opts:
                assert param.opts == ["-q", "--quiet"], name
    assert seen == {"run", "compare", "tune", "plot", "topo draw", "export msccl"}


@pytest.mark.parametrize("command", [["algorithms"], ["topo", "show", "dgx1"], ["topo", "list"]])
def test_every_format_prints(command, capsys):
    assert main([*command, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows
    assert main([*command, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)
    assert main([*command, "--format", "table"]) == 0
    table = capsys.readouterr().out
    if command[0] == "topo":
        assert main([*command, "--format", "text"]) == 0
        assert capsys.readouterr().out == table


def test_topo_list_names_every_preset_with_the_gpus_and_hosts_topo_show_counts(capsys):
    from simnet.topology import PRESETS

    assert main(["topo", "list", "--format", "json"]) == 0
    entries = {entry["name"]: entry for entry in json.loads(capsys.readouterr().out)}
    assert sorted(entries) == sorted(path.stem for path in PRESETS.glob("*.yaml"))
    for name in ("dgx_h100_ndr_32", "gb200_nvl72", "torus_4x4x4"):
        assert main(["topo", "show", name, "--format", "json"]) == 0
        shown = json.loads(capsys.readouterr().out)
        assert (entries[name]["gpus"], entries[name]["hosts"]) == (shown["gpus"], shown["hosts"])
    assert entries["dgx_h100_ndr_32"]["gpus"] == 256 and entries["dgx_h100_ndr_32"]["sources"]
    assert main(["topo", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "dgx_h100_ndr_32: 256 GPUs on 32 hosts (cluster)" in lines
    assert lines[lines.index("dgx_h100_ndr_32: 256 GPUs on 32 hosts (cluster)") + 1].startswith("    32 DGX H100")


def test_topo_show_csv_has_one_row_per_figure(capsys):
    assert main(["topo", "show", "dgx1", "--format", "csv"]) == 0
    rows = {row["key"]: row["value"] for row in csv.DictReader(io.StringIO(capsys.readouterr().out))}
    assert rows["gpus"] == "8" and rows["tiers.nvlink.links"] == "16" and rows["nodes.gpu"] == "8"


def test_tune_shows_a_progress_bar_only_when_asked_or_on_a_terminal(capsys):
    assert main(["tune", "switch8", "--sizes", "1KiB,2KiB", "--format", "csv", "--progress"]) == 0
    err = capsys.readouterr().err
    assert "simulating" in err and "sim/s" in err
    assert main(["tune", "switch8", "--sizes", "1KiB,2KiB", "--format", "csv", "--progress", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_no_plots_writes_the_tables_and_the_summary_only(tmp_path, capsys):
    out = tmp_path / "tables"
    assert main(["run", str(QUICKSTART), "--out", str(out), "--no-plots", "--format", "csv"]) == 0
    assert sorted(p.name for p in out.iterdir() if p.is_file()) == ["manifest.json", "results.csv", "results.json",
                                                                    "results.md"]
    assert (out / "results.csv").read_text() == capsys.readouterr().out
    assert main(["run", str(QUICKSTART), "--out", str(out), "-q"]) == 0
    assert {"time_vs_size.png", "busbw_vs_size.png"} <= {p.name for p in out.iterdir()}


def test_decimal_sizes_run_and_print_as_written(tmp_path, capsys):
    scenario = tmp_path / "decimal.yaml"
    scenario.write_text(QUICKSTART.read_text().replace("sizes: [1 KiB, 1 MiB, 64 MiB]", "sizes: [1 MB, 100 MB]"))
    assert main(["run", str(scenario)]) == 0
    out = capsys.readouterr().out
    assert " 1 MB " in out and " 100 MB " in out


def test_plot_and_emit_create_the_directory_they_write_in(tmp_path, capsys):
    target = tmp_path / "new" / "dir" / "time.png"
    assert main(["plot", str(QUICKSTART), "--kind", "time", "-o", str(target)]) == 0
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    conf = tmp_path / "tuner" / "nccl_tuner.conf"
    assert main(["tune", "dgx_h100", "--sizes", "1MiB", "--emit", "nccl-tuner", str(conf), "-q"]) == 0
    assert conf.read_text().startswith("#")
    capsys.readouterr()
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["plot", str(QUICKSTART), "--kind", "time", "-o", str(blocker / "time.png")]) == 2
    assert capsys.readouterr().err == (f"error: --out: cannot write {str(blocker / 'time.png')!r}: "
                                       f"{str(blocker)!r} is a file, not a directory\n")


def test_commands_given_a_scenario_find_its_files_from_another_directory(tmp_path, capsys, monkeypatch):
    """run, compare, tune, export and plot (also of the results of a run made elsewhere) read the topology
    file next to the scenario, not one of that name in the working directory."""
    study, elsewhere = tmp_path / "study", tmp_path / "elsewhere"
    for folder, hosts in ((study, 4), (elsewhere, 2)):
        folder.mkdir()
        (folder / "fabric.yaml").write_text(f"builder: switch\nhosts: {hosts}\nbandwidth: 25 GB/s\nlatency: 1 us\n")
    scenario = study / "s.yaml"
    scenario.write_text("name: s\ntopology: fabric.yaml\ncollective: {op: allreduce, algorithms: [ring, "
                        "halving_doubling]}\nsizes: [1 MiB]\n")
    monkeypatch.chdir(study)
    assert main(["run", "s.yaml", "--out", str(tmp_path / "out"), "--format", "json", "--no-plots"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {row["ranks"] for row in rows} == {4}
    monkeypatch.chdir(elsewhere)
    relative = os.path.relpath(scenario)
    assert main(["compare", relative, "--format", "json"]) == 0
    compared = json.loads(capsys.readouterr().out)["speedups"]
    assert sorted(row["sim_time_s"] for row in compared) == sorted(row["sim_time_s"] for row in rows)
    assert main(["tune", relative, "--sizes", "1MiB", "--format", "json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["blueconnect_factors"] == "[2, 2]"
    assert main(["export", "msccl", relative, "--algorithm", "ring", "--out", "ring.xml"]) == 0
    assert main(["plot", str(tmp_path / "out"), "--kind", "gantt", "--out", "gantt.png"]) == 0
    assert 'ngpus="4"' in Path("ring.xml").read_text() and Path("gantt.png").is_file()


@pytest.mark.parametrize("command", [["topo", "draw", "dgx1"],
                                     ["export", "msccl", str(QUICKSTART), "--algorithm", "ring"],
                                     ["plot", str(QUICKSTART), "--kind", "time"],
                                     ["plot", str(ROOT / "scenarios" / "jobs_tp_dp.yaml"), "--kind", "slowdown"]])
def test_a_file_a_command_writes_gets_its_directory_or_one_line_saying_why_not(command, tmp_path, capsys):
    target = tmp_path / "new" / "dir" / "out.png"
    assert main([*command, "-o", str(target)]) == 0
    assert target.stat().st_size > 0
    capsys.readouterr()
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main([*command, "-o", str(blocker / "out.png")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert err.endswith(f"--out: cannot write {str(blocker / 'out.png')!r}: {str(blocker)!r} is a file, "
                        "not a directory\n")
    unwritable = tmp_path / ("x" * 300 + ".png")
    assert main([*command, "-o", str(unwritable)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert err.endswith(f"--out: cannot write {str(unwritable)!r}: File name too long\n")


def test_emit_says_in_one_line_when_its_file_cannot_be_written(tmp_path, capsys, monkeypatch):
    """Before tuning, whose work would be lost; a file that can be written is not left behind by the check."""
    from simnet import tune

    tuned = []
    monkeypatch.setattr(tune, "tune", lambda *a, **k: tuned.append(1))
    unwritable = tmp_path / ("x" * 300 + ".conf")
    assert main(["tune", "dgx_h100", "--sizes", "1MiB", "--emit", "nccl-tuner", str(unwritable), "-q"]) == 2
    assert capsys.readouterr().err == f"error: --emit: cannot write {str(unwritable)!r}: File name too long\n"
    assert tuned == []
    from simnet.cli import _writable

    _writable(tmp_path / "new" / "tuner.conf", "--emit")
    assert (tmp_path / "new").is_dir() and not (tmp_path / "new" / "tuner.conf").exists()
    link, fifo, kept = tmp_path / "link.conf", tmp_path / "fifo.conf", tmp_path / "kept.conf"
    link.symlink_to(tmp_path / "later" / "real.conf")
    os.mkfifo(fifo)
    kept.write_text("mine")
    for path in (link, fifo, kept):
        _writable(path, "--emit")
    assert link.is_symlink() and not (tmp_path / "later").exists() and fifo.is_fifo() and kept.read_text() == "mine"


def test_a_sweep_point_that_does_not_validate_fails_alone_on_the_command_line(tmp_path, capsys):
    """Study r26 F1: `topology.hosts: [4, 1, 8]` (or a straggler rank one point lacks) refused the whole sweep
    when it was loaded, though README promised that only the point fails. Points 0 and 2 now run and are written,
    results.md lists point 1 under Failed, stderr has its one-line error and exit code is 2; commands that need the
    point's scenario give that error."""
    scenario = tmp_path / "hosts.yaml"
    scenario.write_text("name: hosts\ntopology: {builder: switch, hosts: 8, bandwidth: 100 Gbps, latency: 1 us}\n"
                        "collective: {op: allreduce, algorithms: [ring]}\nsizes: [1 MiB]\n"
                        "sweep: {grid: {topology.hosts: [4, 1, 8]}}\n")
    out = tmp_path / "out"
    assert main(["run", str(scenario), "--out", str(out), "-q", "--no-plots"]) == 2
    captured = capsys.readouterr()
    assert captured.out.startswith("hosts: 2 of 3 sweep points (1 failure, on stderr), allreduce, maxmin links")
    line = "sweep: point 1 (topology.hosts=1): topology.hosts: must be an integer ≥ 2, got 1"
    assert captured.err.splitlines() == [
        f"error: {scenario}: {line}",
        f"error: {scenario}: sweep: 1 failure (also listed in {out / 'results.md'}); 2 of the 3 points ran, results "
        f"in {out / 'results.csv'}"]
    assert pd.read_csv(out / "results.csv")["topology.hosts"].tolist() == [4, 8]
    report = (out / "results.md").read_text()
    assert "- failed: 1 whole point" in report
    assert ("| topology.hosts=1 | every algorithm (the point failed) | all     | topology.hosts: must be an integer "
            "≥ 2, got 1 |") in report
    assert main(["topo", "show", str(scenario), "--point", "1"]) == 2
    assert capsys.readouterr().err == f"error: {scenario}: {line}\n"
    assert main(["plot", str(out), "--kind", "gantt", "--point", "1"]) == 2
    assert capsys.readouterr().err == f"error: {out}: {line}\n"
    assert main(["plot", str(out), "--kind", "gantt", "--point", "2", "-o", str(tmp_path / "g.png")]) == 0


def test_run_keeps_what_a_point_could_run_and_lists_what_failed(tmp_path, capsys):
    """NVLS on DGX H100 and DGX A100 (the new-user study): the A100 point keeps its ring in the table, results and
    plots; results.md counts and lists the failed (point, nvls); stderr has one error
    line per failure and one saying what ran, exit code 2."""
    scenario = tmp_path / "nvls.yaml"
    scenario.write_text("name: nvls_by_server\ntopology: dgx_h100\ncollective: {op: allreduce, algorithms: [ring, "
                        "nvls]}\nsizes: [1 MiB]\nsweep: {grid: {topology: [dgx_h100, dgx_a100]}}\n")
    out = tmp_path / "out"
    assert main(["run", str(scenario), "--out", str(out), "-q"]) == 2
    captured = capsys.readouterr()
    assert captured.out.startswith("nvls_by_server: 2 of 2 sweep points (1 failure, on stderr), allreduce, maxmin")
    assert "topology=dgx_a100      ring" in captured.out
    first, last = captured.err.splitlines()
    assert first.startswith(f"error: {scenario}: sweep: point 1 (topology=dgx_a100): collective.algorithms[1]: nvls "
                            "on this topology: ranks [0, 1, 2, 3, 4, 5, 6, 7] have no reduce-capable switch")
    assert last == (f"error: {scenario}: sweep: 1 failure (also listed in {out / 'results.md'}); 2 of the 2 points "
                    f"ran, 1 of them in part, results in {out / 'results.csv'}")
    report = (out / "results.md").read_text()
    assert "- runs: 3\n- failed: 1 algorithm at 1 point (listed under Failed, below)\n" in report
    failed = report.split("## Failed")[1].split("##")[0]
    assert "| topology=dgx_a100 | nvls (collective.algorithms[1]) | all     | nvls on " \
           "this topology: ranks [0, 1, 2, 3, 4, 5, 6, 7] have no reduce-capable switch" in failed
    assert sorted(set(pd.read_csv(out / "results.csv")["point"])) == ["topology=dgx_a100", "topology=dgx_h100"]
    assert (out / "busbw_vs_topology.png").is_file() and (out / "speedup.png").is_file()
    assert main(["compare", str(scenario), "--baseline", "nvls", "-q"]) == 2
    captured = capsys.readouterr()
    assert "## Failed" in captured.out
    assert captured.err.startswith(f"error: {scenario}: sweep: point 1 (topology=dgx_a100)"), \
        "the sweep's error, not that the baseline did not run"
    alone = tmp_path / "alone.yaml"
    alone.write_text("name: a100\ntopology: dgx_a100\ncollective: {op: allreduce, algorithms: [ring, nvls]}\n"
                     "sizes: [1 MiB]\n")
    assert main(["run", str(alone), "--format", "csv"]) == 2
    captured = capsys.readouterr()
    assert set(pd.read_csv(io.StringIO(captured.out))["algorithm"]) == {"ring"}
    first, last = captured.err.splitlines()
    assert first.startswith(f"error: {alone}: collective.algorithms[1]: nvls on this topology: ")
    assert last == f"error: {alone}: 1 failure; the other algorithms ran"
    alone.write_text("name: a100\ntopology: dgx_a100\ncollective: {op: allreduce, algorithms: [nvls]}\n"
                     "sizes: [1 MiB]\n")
    assert main(["run", str(alone)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {alone}: collective.algorithms[0]: nvls on this topology") and err.count("\n") == 1
    alone.write_text("name: a100\ntopology: dgx_a100\ncollective: {op: allreduce, algorithms: [nvls, "
                     "{name: ring, chunks: 0}]}\nsizes: [1 MiB]\n")
    assert main(["run", str(alone)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3, "review: the second failure of a point where nothing ran went unsaid"
    assert lines[1] == f"error: {alone}: collective.algorithms[1].chunks: must be an integer ≥ 1, got 0"
    assert lines[2] == f"error: {alone}: 2 failures; no algorithm ran"


def test_run_says_nccls_channels_fell_back_where_simnet_has_no_nccl_model(tmp_path, capsys):
    """On a topology without NCCL's model, `run`'s note says which of NCCL's decisions fell back to what."""
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: s\ntopology: {builder: switch, hosts: 4, bandwidth: 25 GB/s, latency: 1 us}\n"
                        "collective: {op: allreduce, algorithms: [nccl_ring, {name: nccl_tree, channels: 4}]}\n"
                        "sizes: [1 MiB]\n")
    assert main(["run", str(scenario)]) == 0
    out = capsys.readouterr().out
    assert "channels fell back to 2 (nccl_ring) and protocol to simple (nccl_ring, nccl_tree)" in out


def test_run_says_in_one_note_that_an_entry_repeating_an_earlier_one_runs_once(tmp_path, capsys):
    scenario = tmp_path / "repeat.yaml"
    scenario.write_text("name: repeat\ntopology: switch8\ncollective: {op: allreduce, algorithms: [blueconnect, "
                        "{name: blueconnect, factors: [2, 4]}, {name: blueconnect, factors: [8]}]}\n"
                        "sizes: [1 MiB]\n")
    assert main(["run", str(scenario), "--out", str(tmp_path / "out"), "--no-plots"]) == 0
    out, err = capsys.readouterr()
    assert 'note: collective.algorithms[2] is the same run as collective.algorithms[0] (blueconnect {"factors": ' \
           '[8]}); it runs once\n' in err and err.count("note:") == 1
    assert [line.split()[:2] for line in out.splitlines()[2:]] == [["blueconnect", "factors=[8]"],
                                                                   ["blueconnect", "factors=[2,"]]
    written = pd.read_csv(tmp_path / "out" / "results.csv")
    assert list(written["params"]) == ['{"factors": [8]}', '{"factors": [2, 4]}']
    assert main(["run", str(scenario), "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_tune_algorithms_tunes_only_those_and_refuses_an_unknown_name_in_one_line(capsys):
    assert main(["tune", "power9_cluster", "--sizes", "1MiB", "--algorithms", "blueconnect", "--chunks", "1",
                 "--format", "csv"]) == 0
    assert set(pd.read_csv(io.StringIO(capsys.readouterr().out))["algorithm"]) == {"blueconnect"}
    assert main(["tune", "power9_cluster", "--sizes", "1MiB", "--algorithms", "ring,blueconect"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --algorithms: unknown algorithm 'blueconect' for allreduce; did you mean "
                          "'blueconnect'?") and len(err.strip().splitlines()) == 1
    assert main(["tune", "power9_cluster", "--sizes", "1MiB", "--algorithms", " , "]) == 2
    assert "error: --algorithms: expected comma-separated algorithm names" in capsys.readouterr().err


def test_tune_takes_the_ecmp_hash_seed_as_run_does(capsys):
    """tune had --routing but no --hash-seed: its ECMP results were those of one hash's luck only."""
    command = ["tune", "fat_tree_k4", "--sizes", "4MiB", "--algorithms", "recursive_doubling", "--chunks", "1",
               "-q", "--format", "csv"]
    times = []
    for seed in (0, 1):
        assert main([*command, "--routing", "ecmp_hash", "--hash-seed", str(seed)]) == 0
        times.append(capsys.readouterr().out.strip().splitlines()[-1])
    assert times[0] != times[1]
    assert main([*command, "--hash-seed", "3"]) == 2
    assert capsys.readouterr().err == ("error: --hash-seed: only routing 'ecmp_hash' hashes, and the routing is "
                                       "'dmodk': seed 3 would change nothing\n")


def test_an_interrupted_tune_says_what_is_kept_and_how_to_keep_more(capsys, monkeypatch):
    """Study r23: Ctrl-C of simnet tune printed only 'aborted'."""
    from simnet import tune

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tune, "tune", interrupted)
    assert main(["tune", "switch8", "--sizes", "1KiB,1MiB"]) == 130
    assert capsys.readouterr().err == ("interrupted: tune writes its table once every size is tuned, so nothing of "
                                       "this run is kept; tune fewer sizes at a time (--sizes, 2 now) to keep answers "
                                       "as they come\n")


SMALL_LEAF_SPINE = ("builder: leaf_spine\nswitch_ports: 12\nleaves: 2\nspines: 2\nhosts_per_leaf: 8\nparallel: 4\n"
                    "bandwidth: 25 GB/s\nlatency: 1 us\n")


@pytest.mark.parametrize("ratio, bisection, cables, warned", [
    ("1", "200 GB/s", "8 uplink cables of 25 GB/s per leaf)", True),
    ("2:1", "100 GB/s", "4 uplink cables of 25 GB/s per leaf (2:1 keeps 4 of 8 at full rate))", False),
    ("3:1", "66.67 GB/s", "8 uplink cables of 8.333 GB/s per leaf (3:1 does not divide 8 cables", True),
])
def test_topo_show_of_an_oversubscribed_leaf_spine(ratio, bisection, cables, warned, capsys, tmp_path):
    """Study r25 F1 and F4: two leaves of 8 hosts at 25 GB/s, 4 cables to each of 2 spines. The bisection is one
    leaf's uplinks, 200 GB/s / ratio; 2:1 keeps 4 full-rate cables, so a leaf has 8 + 4 = 12 cables and fits the
    file's 12-port switch model, while 1:1 and 3:1 keep 16 cables per leaf and are warned about (and still shown)."""
    path = tmp_path / "ls.yaml"
    path.write_text(f"{SMALL_LEAF_SPINE}oversubscription: {ratio}\n")
    assert main(["topo", "show", str(path)]) == 0
    out = capsys.readouterr().out
    assert cables in out.splitlines()[0]
    assert f"bisection bandwidth: {bisection} (first half of ranks -> second)" in out
    warning = ("warning: 2 switches (leaf0 .. leaf1) have up to 16 cables, more than the 12 ports of the topology's "
               "switch model (switch_ports)")
    assert (warning in out) == warned


def test_run_warns_on_stderr_about_switches_with_more_cables_than_ports_and_still_runs(capsys, tmp_path):
    (tmp_path / "ls.yaml").write_text(SMALL_LEAF_SPINE)
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: s\ntopology: {file: ls.yaml}\ncollective: {op: allreduce, algorithms: [ring]}\n"
                        "sizes: [1 MiB]\nsweep: {points: [{topology.oversubscription: 1}, "
                        "{topology.oversubscription: '2:1'}]}\n")
    assert main(["run", str(scenario), "--no-plots"]) == 0
    captured = capsys.readouterr()
    assert captured.err.count("warning: 2 switches (leaf0 .. leaf1) have up to 16 cables") == 1
    assert "(sweep point 0)" in captured.err
    assert "2 sweep points" in captured.out


def test_run_prints_each_phase_on_stderr_once_it_has_taken_a_while_unless_quiet(monkeypatch, capsys):
    """A run that takes longer than a moment (here: any) says on stderr which phase it is in, with the time since it
    started, so a long run is not silent; -q prints none, and neither does a short run (other tests: stderr empty)."""
    import simnet.cli

    monkeypatch.setattr(simnet.cli, "_QUIET_FOR_S", 0.0)
    assert main(["run", "scenarios/quickstart.yaml"]) == 0
    lines = [re.sub(r"\[\d+ s\]", "[t]", line) for line in capsys.readouterr().err.splitlines()]
    assert lines == ["quickstart: [t] building the network", "quickstart: [t] NCCL's own choice on 8 ranks",
                     *(f"quickstart: [t] ring at {size} ({i} of 3): {phase}"
                       for i, size in enumerate(["1 KiB", "1 MiB", "64 MiB"], 1)
                       for phase in ("building the schedule", "simulating 112 transfers"))]
    assert main(["run", "scenarios/quickstart.yaml", "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_a_jobs_results_directory_is_recognised_beside_a_point_that_failed_to_validate(tmp_path):
    """A sweep's manifest records a point that does not validate with its error and no scenario; reading whether
    the directory holds a jobs run stopped at that point (a KeyError) and said no."""
    from simnet.cli import _recorded_jobs

    (tmp_path / "manifest.json").write_text(json.dumps({"points": [
        {"label": "nodes=40", "error": "topology.nodes: ..."},
        {"label": "nodes=4", "scenario": {"name": "j", "jobs": {"train": {}}}}]}))
    assert _recorded_jobs(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"points": [{"label": "", "scenario": {"name": "r"}}]}))
    assert not _recorded_jobs(tmp_path)
