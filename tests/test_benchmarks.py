"""The benchmark script stays runnable: its smoke-test sizes, in a subprocess (no timing is asserted)."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from simnet.algorithms.dense import ring_allreduce_time

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def rows() -> dict[str, list[str]]:
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--no-simgrid", "--timeout", "120"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=600,
        check=True,
    )
    lines = result.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("case "))
    return {line.split()[0]: line.split() for line in lines[header + 1 :]}


def test_every_case_runs_and_reports(rows):
    spec = importlib.util.spec_from_file_location("benchmark_run", ROOT / "benchmarks" / "run.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert set(rows) == set(script.CASES)
    for name, fields in rows.items():
        runs, transfers, wall_s, sim_s, _, _, rss_MB, time_s = fields[1:9]
        assert int(runs) == 1 and int(transfers) > 0, fields
        assert 0 <= float(sim_s) <= float(wall_s) and float(rss_MB) > 0 and float(time_s) > 0, fields


def test_the_ring_cases_report_the_closed_form_time(rows):
    quick = {"ring_256_fifo": 32, "ring_256_maxmin": 32, "ring_1024_fifo": 64, "ring_1024_maxmin": 64,
             "ring_1024_cli": 64}
    for name, ranks in quick.items():
        expected = ring_allreduce_time(ranks, 64 * 2**20, 2e-6, 1 / 12.5e9)
        assert float(rows[name][8]) == pytest.approx(expected, rel=1e-8), name
    expected = ring_allreduce_time(64, 2**20, 2e-6, 1 / 12.5e9)
    assert float(rows["ring_4096_maxmin"][8]) == pytest.approx(expected, rel=1e-8)


def test_the_routing_benchmark_runs():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "routing.py"), "--quick"],
        capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=300, check=True,
    )
    lines = result.stdout.splitlines()
    assert len(lines) == 12
    assert sum("1000 routes, route " in line for line in lines) == sum("1000 routes, routes" in line
                                                                      for line in lines) == 2
    assert sum("1000 routes, table" in line for line in lines) == 2
    assert sum("992 routes, " in line for line in lines) == 3
    assert sum(line.endswith("same routes all three ways: True") for line in lines) == 3


def test_the_equivalence_check_finds_a_tree_equal_to_itself():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "equivalence.py"), "--compare", str(ROOT), "--families", "routes"],
        capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=300, check=True,
    )
    assert result.stdout.split()[:9] == ["routes", "32", "common", "cases,", "0", "differ,", "0", "only", "here,"]


def test_the_phases_of_a_small_ring_beside_the_same_tree_report_the_closed_form_time():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "phases.py"), "--ranks", "8", "--runs", "2", "--rounds", "1",
         "--compare", str(ROOT)],
        capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=300, check=True,
    )
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith(f"{ROOT}: topology ") for line in lines)
    expected = ring_allreduce_time(8, 64 * 2**20, 2e-6, 1 / 12.5e9)
    for line in lines:
        fields = line.split()
        assert "setup" in fields and "schedule_peak_MB" in fields
        assert float(fields[fields.index("simulated") + 1]) == pytest.approx(expected, rel=1e-8)


def test_the_nccl_loop_benchmark_reports_the_engines_times_and_sorts():
    """`benchmarks/nccl_loop.py --quick --fills`: each schedule's simulated time is what `simulate` gives on its
    network, both sorts sort (the script checks), and the Python model fills no more components than it
    re-shares."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "nccl_loop.py"), "--quick", "--fills"],
        capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=300, check=True,
    )
    lines = result.stdout.splitlines()
    assert len(lines) == 6 and [line.split()[0] for line in lines[:5]] == [
        "nvls_tree", "nccl_tree", "nccl_ring", "sort", "sort"]
    spec = importlib.util.spec_from_file_location("nccl_loop", ROOT / "benchmarks" / "nccl_loop.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    from simnet.algorithms import ALGORITHMS
    from simnet.engine import simulate

    network = script._network(True)
    for line, (name, _, params) in zip(lines, script.SCHEDULES):
        record = ALGORITHMS[name]
        schedule = record.build(network.size, 2**20, **record.resolved(network, 2**20, params))
        assert f"time {simulate(network, schedule).time_s * 1e3:.6f} ms" in line
    reshares, fills = (int(number.replace(",", "")) for number in
                       re.search(r"re-shares ([\d,]+), components filled ([\d,]+)", lines[5]).groups())
    assert 0 < fills <= reshares


def test_the_pruning_check_of_the_tune_benchmark_runs():
    """`benchmarks/tune.py --check-pruning` is the evidence docs/design.md cites for the prune factor."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "tune.py"), "--check-pruning", "--topologies", "switch8",
         "--sizes", "1KiB,1MiB"],
        capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert re.search(r"^switch8\s+8\s+\d+/\d+\s+[\d.]+\s+yes$", result.stdout, re.MULTILINE), result.stdout
