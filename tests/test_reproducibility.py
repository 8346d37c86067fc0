"""Every shipped scenario, run twice in fresh processes with different hash seeds, writes the same bytes.

Without plots: PNGs are not compared, and tests/plots draws every plot of every scenario."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))

_RUN_ALL = """
import sys
from pathlib import Path
from simnet.cli import main
out = Path(sys.argv[1])
for scenario in sys.argv[2:]:
    code = main(["run", scenario, "--out", str(out / Path(scenario).stem), "--format", "csv", "--no-plots"])
    if code:
        sys.exit(code)
"""

OUTPUTS = ("results.csv", "results.json", "manifest.json", "results.md")


def run_all(out: Path, seed: str) -> dict[str, bytes]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONHASHSEED=seed)
    subprocess.run([sys.executable, "-c", _RUN_ALL, str(out), *map(str, SCENARIOS)], check=True, env=env,
                   capture_output=True, cwd=ROOT)
    return {f"{s.stem}/{name}": (out / s.stem / name).read_bytes() for s in SCENARIOS for name in OUTPUTS}


def test_two_full_runs_of_every_scenario_are_byte_identical(tmp_path):
    first = run_all(tmp_path / "first", "1")
    second = run_all(tmp_path / "second", "4242")
    assert first.keys() == second.keys() and len(first) == len(OUTPUTS) * len(SCENARIOS)
    different = [name for name in first if first[name] != second[name]]
    assert not different
    manifest = json.loads(first[f"{SCENARIOS[0].stem}/manifest.json"])
    assert manifest["simnet_version"] and manifest["points"][0]["scenario"]["name"]
