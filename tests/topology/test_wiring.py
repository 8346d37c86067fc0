"""The topology library behind `simnet topo show|draw` and scenario `topology:` keys."""

from __future__ import annotations

import json

import pytest

from simnet.cli import main
from simnet.errors import ScenarioError
from simnet.scenario import parse_scenario, run

SCENARIO = {"name": "t", "collective": {"op": "allreduce", "algorithms": ["ring"]}, "sizes": ["1 MiB"]}


def test_topo_show_prints_counts_bisection_and_diameter(capsys):
    assert main(["topo", "show", "fat_tree_k4"]) == 0
    out = capsys.readouterr().out
    assert "16 gpu, 20 switch" in out and "bisection bandwidth: 100 GB/s" in out and "diameter: 6 hops" in out


def test_topo_show_json(capsys):
    assert main(["topo", "show", "dgx1", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["nodes"]["gpu"] == 8


def test_topo_draw_writes_a_png(tmp_path, capsys):
    out = tmp_path / "t.png"
    assert main(["topo", "draw", "abci_node", "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_topo_show_unknown_name_is_one_line_error(capsys):
    assert main(["topo", "show", "dgx99"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no preset" in err


def test_scenario_takes_a_topology_file_or_preset():
    frame = run(parse_scenario({**SCENARIO, "topology": {"file": "dgx_a100"}}))
    assert frame["ranks"].iloc[0] == 8


def test_scenario_builds_a_cluster_with_nested_units():
    topology = {
        "builder": "cluster",
        "node": "abci_node",
        "nodes": 2,
        "fabric_params": {"bandwidth": "100 Gbps", "latency": "1 us"},
    }
    frame = run(parse_scenario({**SCENARIO, "topology": topology}))
    assert frame["ranks"].iloc[0] == 8


@pytest.mark.parametrize(
    ("topology", "path"),
    [
        ({"file": "nope.yaml"}, "topology.file"),
        ({"builder": "cluster", "node": "abci_node", "nodes": 2, "fabric_params": {"bandwidth": "1 Gbps", "latency": "1 yr"}},
         "topology.fabric_params.latency"),
    ],
)
def test_scenario_topology_errors_name_the_key(topology, path):
    with pytest.raises(ScenarioError) as error:
        parse_scenario({**SCENARIO, "topology": topology})
    assert error.value.path == path
