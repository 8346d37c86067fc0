import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from simnet.analysis import RESULT_COLUMNS
from simnet.errors import ScenarioError, SweepFailed
from simnet.algorithms.dense import ring_allreduce_time
from simnet.scenario import (build_topology, expand, load_scenario, parse_scenario, point_error, repeated_algorithms,
                             run)
from simnet.topology import calibrated_cluster, dgx_h100
from simnet.topology.calibrated import NVLINK_EFFECTIVE_Bps

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = {
    "name": "quickstart",
    "topology": {"builder": "switch", "hosts": 8, "bandwidth": "100 Gbps", "latency": "1 us"},
    "collective": {"op": "allreduce", "algorithms": ["ring"], "chunks": 1},
    "sizes": ["1 KiB", "1 MiB", "64 MiB"],
    "network": {"model": "fifo"},
}


def with_changes(path: str, value):
    data = {key: (dict(v) if isinstance(v, dict) else v) for key, v in QUICKSTART.items()}
    *parents, last = path.split(".")
    target = data
    for part in parents:
        target = target[part]
    if value is None:
        del target[last]
    else:
        target[last] = value
    return data


def test_quickstart_file_as_written_in_the_issue():
    scenario = load_scenario(ROOT / "scenarios" / "quickstart.yaml")
    assert scenario.model_dump(exclude={"description"}) == parse_scenario(QUICKSTART).model_dump(exclude={"description"})
    assert scenario.sizes == [1024, 2**20, 64 * 2**20]


def test_run_gives_one_row_per_size_with_the_model_beside_it():
    results = run(parse_scenario(QUICKSTART))
    assert list(results.columns) == list(RESULT_COLUMNS)
    assert list(results["size_bytes"]) == [1024, 2**20, 64 * 2**20]
    assert set(results["ranks"]) == {8}
    for row in results.itertuples():
        assert row.model_time_s == pytest.approx(ring_allreduce_time(8, row.size_bytes, 2e-6, 1 / 12.5e9))
        assert row.sim_over_model == pytest.approx(1.0, rel=1e-9)
        assert row.algbw_GBps == pytest.approx(row.size_bytes / row.sim_time_s / 1e9)
        assert row.busbw_GBps == pytest.approx(row.algbw_GBps * 2 * 7 / 8)


def test_chunks_reach_the_algorithm():
    results = run(parse_scenario(with_changes("collective.chunks", 4)))
    assert set(results["params"]) == {'{"chunks": 4}'}
    per_algorithm = run(parse_scenario(with_changes("collective.algorithms", [{"name": "ring", "chunks": 2}])))
    assert set(per_algorithm["params"]) == {'{"chunks": 2}'}


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("topology.hosts", 1, "topology.hosts: must be an integer ≥ 2, got 1"),
        ("topology.hosts", "8", "topology.hosts: input should be a valid integer, got '8'"),
        ("topology.bandwidth", "100 Gbs", "topology.bandwidth: unknown unit 'Gbs' in '100 Gbs'"),
        ("topology.bandwidth", "0 Gbps", "topology.bandwidth: must be a finite bandwidth > 0, got '0 Gbps'"),
        ("topology.latency", None, "topology.latency: missing; builder 'switch' needs a time such as '1 us'"),
        ("topology.bandwith", "1 GB/s", "topology.bandwith: unknown parameter of builder 'switch' 'bandwith'; "
                                        "did you mean 'bandwidth'?"),
        ("topology.builder", "fat", "topology.builder: unknown builder 'fat'"),
        ("topology.builder", None, "topology.builder: missing"),
        ("collective.algorithms", ["rign"], "collective.algorithms[0]: unknown algorithm 'rign'; did you mean 'ring'?"),
        ("collective.algorithms", [], "collective.algorithms: must not be empty"),
        ("collective.chunk", 2, "collective.chunk: no listed algorithm takes this parameter; did you mean 'chunks'? "
                                "(algorithms: ring)"),
        ("collective.chunks", "four", "collective.chunks: input should be a valid integer, got 'four'"),
        ("collective.op", "scan", "collective.op: must be one of 'allreduce', 'reduce_scatter', 'all_gather', 'broadcast', 'reduce', 'alltoall' or 'alltoallv', got 'scan'"),
        ("collective.op", "alltoall", "collective.algorithms[0]: algorithm 'ring' computes allreduce, not alltoall (algorithms for alltoall: bruck, direct, hierarchical, rail_aligned)"),
        ("collective.op", "reduce_scatter", "collective.algorithms[0]: algorithm 'ring' computes allreduce, not reduce_scatter"),
        ("sizes", ["1 KiB", "-5 MiB"], "sizes[1]: must be ≥ 1 B, got '-5 MiB'"),
        ("sizes", ["12 parsecs"], "sizes[0]: unknown unit 'parsecs'"),
        ("sizes", [], "sizes: must not be empty"),
        ("sizes", None, "sizes: missing"),
        ("network.model", "tcp", "network.model: must be one of 'maxmin' or 'fifo', got 'tcp'"),
        ("network.stragglers", {"x": 2}, "network.stragglers.x: input should be a valid integer, unable to parse "
                                         "string as an integer, got 'x'"),
        ("netwrk", {"model": "fifo"}, "netwrk: unknown key; did you mean 'network'?"),
    ],
)
def test_errors_name_the_key_path(path, value, message):
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(with_changes(path, value), source="s.yaml")
    assert str(raised.value).startswith(f"s.yaml: {message}")
    assert "\n" not in str(raised.value)


def test_algorithm_argument_errors_surface_at_run_with_their_key():
    with pytest.raises(ScenarioError, match=r"^collective.chunks: must be an integer ≥ 1, got 0$"):
        run(parse_scenario(with_changes("collective.chunks", 0)))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "expected a mapping with keys name, topology, collective, sizes; found an empty file"),
        ("- 1\n- 2\n", "found a list"),
        ("name: [unclosed\n", "invalid YAML"),
        ("name: !!python/object/apply:os.system [echo hi]\n", "invalid YAML: could not determine a constructor"),
    ],
)
def test_file_level_errors(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError, match=message) as raised:
        load_scenario(path)
    assert str(raised.value).startswith(str(path))


def test_non_utf8_and_missing_files(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("name: caf\xe9\n".encode("latin-1"))
    with pytest.raises(ScenarioError, match="not UTF-8"):
        load_scenario(path)
    with pytest.raises(ScenarioError, match="file not found"):
        load_scenario(tmp_path / "nope.yaml")


def test_hierarchical_algorithms_take_factors_from_yaml_or_from_the_topology():
    algorithms = [{"name": "blueconnect", "factors": [2, 4]}, "blueconnect", "hierarchical_ring", "torus_2d"]
    results = run(parse_scenario(with_changes("collective.algorithms", algorithms)))
    assert list(results["params"].unique()) == [
        '{"chunks": 1, "factors": [2, 4]}',
        '{"chunks": 1, "factors": [8]}',
        '{"chunks": 1, "factors": [1, 8]}',
    ]
    with pytest.raises(ScenarioError) as error:
        run(parse_scenario(with_changes("collective.algorithms", [{"name": "blueconnect", "factors": [3, 3]}])))
    assert error.value.path == "collective.algorithms[0].factors"


def test_an_entry_that_comes_to_an_earlier_ones_parameters_runs_once_under_the_earlier_one():
    """The switch's own factors are [8]: the default blueconnect and an explicit [8] are one run."""
    algorithms = ["blueconnect", {"name": "blueconnect", "factors": [2, 4]}, {"name": "blueconnect", "factors": [8]},
                  "ring", "ring"]
    scenario = parse_scenario(with_changes("collective.algorithms", algorithms))
    assert repeated_algorithms(scenario) == [(2, 0, 'blueconnect {"chunks": 1, "factors": [8]}'),
                                             (4, 3, 'ring {"chunks": 1}')]
    results = run(scenario)
    assert list(results["params"]) == ['{"chunks": 1, "factors": [8]}'] * 3 + ['{"chunks": 1, "factors": [2, 4]}'] * 3 \
        + ['{"chunks": 1}'] * 3
    assert repeated_algorithms(parse_scenario(with_changes("collective.algorithms", algorithms[:2]))) == []


def test_nccl_rows_carry_nccls_choice_on_nvswitch_servers_only():
    import yaml

    text = """
name: twin
topology: {file: dgx_h100}
collective: {op: allreduce, algorithms: [nccl, {name: nccl_ring, protocol: auto}]}
sizes: [8 KiB, 256 MiB]
"""
    results = run(parse_scenario(yaml.safe_load(text)))
    assert set(results["nccl_choice"]) == {"ring/ll", "nvls/simple"}
    nccl = results[results["algorithm"] == "nccl"]
    assert [json.loads(p)["nccl_algorithm"] for p in nccl["resolved"]] == ["ring", "nvls"]
    assert set(nccl["params"]) == {"{}"}
    ring = results[results["algorithm"] == "nccl_ring"]
    assert [json.loads(p)["protocol"] for p in ring["resolved"]] == ["ll", "simple"]
    assert set(ring["params"]) == {'{"protocol": "auto"}'}
    flat = text.replace("{file: dgx_h100}", "{builder: switch, hosts: 8, bandwidth: 25 GB/s, latency: 1 us}")
    with pytest.raises(ScenarioError, match="protocol auto needs NCCL's model") as raised:
        run(parse_scenario(yaml.safe_load(flat.replace("nccl, ", ""))))
    assert raised.value.path == "collective.algorithms[0].protocol"
    results = run(parse_scenario(yaml.safe_load(flat.replace("nccl, ", "").replace("auto", "ll"))))
    assert set(results["nccl_choice"]) == {""}


def test_a_bare_topology_name_is_a_file_or_preset_also_in_a_sweep():
    """``topology: dgx_h100`` reads as ``{file: dgx_h100}``; a sweep may list preset names; a wrong name
    names the key and the presets."""
    data = {"name": "named", "topology": "dgx_h100", "collective": {"op": "allreduce", "algorithms": ["ring"]},
            "sizes": ["1 MiB"]}
    named = run(parse_scenario(data))
    spelled = run(parse_scenario({**data, "topology": {"file": "dgx_h100"}}))
    assert named["sim_time_s"].tolist() == spelled["sim_time_s"].tolist()
    swept = run(parse_scenario({**data, "sweep": {"grid": {"topology": ["dgx_h100", "dgx_a100"]}}}))
    assert swept["sim_time_s"].iloc[0] == named["sim_time_s"].iloc[0]
    assert swept["sim_time_s"].iloc[1] > swept["sim_time_s"].iloc[0]
    with pytest.raises(ScenarioError, match="no preset of that name.*dgx_h100_ndr_32") as error:
        run(parse_scenario({**data, "topology": "dgx_h1000"}))
    assert error.value.path == "topology.file"


def test_a_preset_takes_overrides_of_its_builders_parameters_also_in_a_sweep():
    """``{file: PRESET, nodes: 2}`` is the preset with 2 servers (docs/topology.md, "Overriding a preset");
    a sweep varies ``topology.nodes`` on a preset named by itself, every point keeping NIC ``j`` of every
    server on the rail's own leaf ``leaf{j}`` as the rail-optimised preset has it."""
    data = {"name": "over", "topology": {"file": "dgx_h100_ndr_32", "nodes": 2,
                                         "node_params": {"nic_bandwidth": "200 Gb/s"}},
            "collective": {"op": "allreduce", "algorithms": ["ring"]}, "sizes": ["1 MiB"]}
    network = parse_scenario(data).built_network()
    assert network.size == 16
    assert network.graph.edges["n1.nic7", "leaf7"]["bandwidth_Bps"] == 200e9 / 8
    swept = {**data, "topology": "dgx_h100_ndr_32", "sweep": {"grid": {"topology.nodes": [1, 2]}}}
    points = expand(parse_scenario(swept))
    assert [point.label for point in points] == ["topology.nodes=1", "topology.nodes=2"]
    assert [point.scenario.built_network().size for point in points] == [8, 16]
    assert run(parse_scenario(swept))["ranks"].tolist() == [8, 16]
    wide = {**swept, "sweep": {"grid": {"topology.nodes": [3, 5, 8, 16, 31]}}}
    for point in expand(parse_scenario(wide)):
        graph = point.scenario.built_network().graph
        leaves = {nic: [v for v in graph.successors(nic) if graph.nodes[v].get("level") == "leaf"]
                  for nic, kind in graph.nodes(data="kind") if kind == "nic"}
        assert all(on == [f"leaf{graph.nodes[nic]['rail']}"] for nic, on in leaves.items()), point.label


@pytest.mark.parametrize(
    ("topology", "path", "needle"),
    [
        ({"file": "dgx_h100_ndr_32", "servers": 2}, "topology.servers",
         "'dgx_h100_ndr_32' is built by 'cluster', which takes no 'servers' (it takes: fabric, fabric_params, node, "
         "node_params, nodes, pxn, rails)"),
        ({"file": "gb200_nvl72_xdr_2", "node_params": {"nic_bandwdith": "800 Gb/s"}},
         "topology.node_params.nic_bandwdith",
         "unknown parameter 'nic_bandwdith'; did you mean 'nic_bandwidth'? (expected one of ["),
        ({"file": "gb200_nvl72_xdr_2", "fabric_params": {"spines": 0}}, "topology.fabric_params.spines",
         "must be an integer ≥ 1, got 0"),
        ({"file": ["dgx_h100"]}, "topology.file", "expected a topology file or a preset name, got ['dgx_h100']"),
        ({"builder": "calibrated_cluster", "kind": "dgx_h100", "nodes": "8"}, "topology.nodes",
         "input should be a valid integer, got '8'"),
        ({"builder": "calibrated_node", "kind": "h100"}, "topology.kind", "no calibrated machine 'h100'"),
        ({"file": "dgx_h100_ndr_32", "nodes": 40}, "topology.nodes",
         "40 servers do not fit the rail-optimised leaf_spine of 8 leaves x 32 hosts_per_leaf: each of the 8 rails"),
    ],
)
def test_a_bad_topology_override_or_calibrated_parameter_names_its_key_path(topology, path, needle):
    with pytest.raises(ScenarioError) as raised:
        parse_scenario({**QUICKSTART, "topology": topology}, source="s.yaml")
    assert raised.value.path == path and needle in str(raised.value)
    assert str(raised.value).startswith(f"s.yaml: {path}: ") and "\n" not in str(raised.value)


def test_the_calibrated_machines_are_topology_builders_of_a_scenario():
    """The YAML form builds the graph of the Python call; a ring on the calibrated DGX H100 plateaus at
    the GPU port's 18 NVLinks at NCCL's ``SM90_NVLINK_BW`` (the 370.8 GB/s of docs/validation.md), as
    ``tier_efficiency: {nvswitch: 0.824}`` on the line-rate template does."""
    yaml_form = {"builder": "calibrated_cluster", "kind": "dgx_h100", "nodes": 2, "pxn": True}
    built, called = build_topology(yaml_form), calibrated_cluster("dgx_h100", 2, pxn=True)
    assert built.graph == called.graph
    assert list(built.nodes(data=True)) == list(called.nodes(data=True))
    assert list(built.edges(data=True)) == list(called.edges(data=True))
    data = {"name": "cal", "topology": {"builder": "calibrated_node", "kind": "dgx_h100"},
            "collective": {"op": "allreduce", "algorithms": ["ring"]}, "sizes": ["8 GiB"]}
    links = dgx_h100().edges["gpu0", "nvswitch0"]["cables"]
    row = run(parse_scenario(data)).iloc[0]
    assert row.busbw_GBps == pytest.approx(links * NVLINK_EFFECTIVE_Bps["dgx_h100"] / 1e9, rel=1e-3)
    assert row.sim_over_model == pytest.approx(1.0, rel=1e-9)
    by_hand = {**data, "topology": "dgx_h100", "network": {"tier_efficiency": {"nvswitch": 0.824}}}
    assert run(parse_scenario(by_hand)).iloc[0].sim_time_s == pytest.approx(row.sim_time_s, rel=1e-12)


def test_an_unknown_key_that_is_not_printable_is_named_in_one_line():
    """Found by the fuzz test: a key with a newline broke the one-line error."""
    data = {"name": "x", "topology": {"builder": "switch", "hosts": 4, "bandwidth": "1 GB/s", "latency": "1 us"},
            "collective": {"op": "allreduce", "algorithms": ["ring"]}, "sizes": ["1 KiB"], "network": {"\n": 1}}
    with pytest.raises(ScenarioError) as error:
        expand(parse_scenario(data))
    assert "\n" not in str(error.value) and str(error.value).startswith("network.'\\n': unknown key")


def test_repeats_are_refused_in_a_file_but_recorded_points_with_repeats_still_parse(tmp_path):
    """Results written before the check (a manifest's points) keep their repeated sizes and can be plotted."""
    data = {"name": "repeats", "topology": {"builder": "switch", "hosts": 4, "bandwidth": "25 GB/s",
                                            "latency": "1 us"},
            "collective": {"op": "allreduce", "algorithms": ["ring", "ring"]}, "sizes": ["1 MiB", "1 MiB"]}
    assert parse_scenario(data).sizes == [1 << 20, 1 << 20]
    path = tmp_path / "repeats.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ScenarioError, match=r"sizes\[1\]: 1 MiB is listed twice"):
        load_scenario(path)


@pytest.mark.parametrize("sizes,expected", [
    ("1 KiB..1 MiB:x32", [2**10, 2**15, 2**20]),
    ("1KiB..8KiB", [2**10, 2**11, 2**12, 2**13]),
    ("64 MiB, 1 KiB", [2**10, 2**26]),
    ("64 MiB", [2**26]),
    (["8 MiB", "1 KiB..1 MiB:x4", "3 GiB"], [2**23, 2**10, 2**12, 2**14, 2**16, 2**18, 2**20, 3 * 2**30]),
])
def test_sizes_take_the_ranges_tune_takes_in_place_of_the_item(sizes, expected):
    data = {"name": "ranges", "topology": "switch8", "collective": {"op": "allreduce", "algorithms": ["ring"]},
            "sizes": sizes}
    scenario = parse_scenario(data)
    assert scenario.sizes == expected
    assert [point.scenario.sizes for point in expand(scenario)] == [expected]
    swept = parse_scenario({**data, "sizes": ["1 KiB"], "sweep": {"grid": {"sizes": [sizes, "2 KiB"]}}})
    assert [point.scenario.sizes for point in expand(swept)] == [expected, [2048]]


@pytest.mark.parametrize("sizes,message", [
    ("1 KiB..1 parsec", "sizes: unknown unit 'parsec' in '1 parsec'"),
    (["1 MiB", "8KiB..1KiB"], "sizes[1]: expected a range 'LOW..HIGH' with 1 B ≤ LOW ≤ HIGH, got '8KiB..1KiB'"),
    ("1KiB..1MiB:x1", "sizes: expected a step such as ':x4' after the range, got '1KiB..1MiB:x1'"),
    (["1 KiB..1 MiB", 3], "sizes[1]: 3 needs a unit, e.g. 3 B"),
    (["1 KiB..4 KiB", 0], "sizes[1]: must be ≥ 1 B, got 0"),
    (["1 KiB..4 KiB", "bogus"], "sizes[1]: expected a size such as '64 MiB', got 'bogus'"),
    (["4 KiB", "1 KiB..4 KiB"], "sizes[1]: 4 KiB is listed twice (also sizes[0])"),
    (1024, "sizes: 1024 needs a unit, e.g. 1 KiB"),
    ("0 B", "sizes: must be ≥ 1 B, got '0 B'"),
    ({"smallest": "1 KiB"}, "sizes: expected a size such as '64 MiB', a range such as '1 KiB..1 GiB:x4' or a list"),
])
def test_a_bad_range_of_sizes_is_named_in_one_line(sizes, message):
    data = {"name": "ranges", "topology": "switch8", "collective": {"op": "allreduce", "algorithms": ["ring"]},
            "sizes": sizes}
    with pytest.raises(ScenarioError) as error:
        parse_scenario(data)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_a_sweep_point_listing_a_size_twice_is_refused_like_a_file(tmp_path):
    data = {"name": "swept", "topology": "switch8", "collective": {"op": "allreduce", "algorithms": ["ring"]},
            "sizes": ["1 KiB"], "sweep": {"grid": {"sizes": [["2 KiB", "4 KiB"], ["2 KiB", "2 KiB"]]}}}
    path = tmp_path / "swept.yaml"
    path.write_text(yaml.safe_dump(data))
    points = expand(load_scenario(path), source=str(path))
    assert points[0].error is None and points[1].scenario is None
    assert str(point_error(points[1], source=str(path))) == (
        f'{path}: sweep: point 1 (sizes=["2 KiB", "2 KiB"]): sizes[1]: 2 KiB is listed twice (also sizes[0])')


@pytest.mark.parametrize("compiled_from,runs_compiled", [(20_000, 4), (10**12, 0)])
def test_a_point_of_many_transfers_runs_its_larger_schedules_compiled_with_the_same_results(monkeypatch,
                                                                                            compiled_from,
                                                                                            runs_compiled):
    """Where a point's schedules are estimated at `simnet.engine.COMPILED_FROM` transfers in all, those of at
    least `COMPILED_IN_BATCHES_FROM` (5000) run in the compiled loop, those below `COMPILED_FROM` each (8064
    transfers) too; the results are those of the Python loop."""
    from simnet import engine

    data = with_changes("topology", {"builder": "switch", "hosts": 64, "bandwidth": "100 Gbps", "latency": "1 us"})
    data = {**data, "network": {"model": "maxmin"}, "sizes": ["64 KiB", "64 MiB"],
            "collective": {"op": "allreduce", "algorithms": ["ring", {"name": "ring", "chunks": 4}], "chunks": 1}}
    monkeypatch.setattr(engine, "COMPILED_FROM", 10**12)
    expected = run(parse_scenario(data))
    compiled = []
    run_compiled = engine.Simulation._run_compiled
    monkeypatch.setattr(engine.Simulation, "_run_compiled",
                        lambda self: compiled.append(len(self._ready_s)) or run_compiled(self))
    monkeypatch.setattr(engine, "COMPILED_FROM", compiled_from)
    results = run(parse_scenario(data))
    assert len(compiled) == runs_compiled
    assert runs_compiled == 0 or min(compiled) == 2 * 63 * 64
    assert results.drop(columns=["wall_s"], errors="ignore").equals(expected.drop(columns=["wall_s"], errors="ignore"))


def _beside(folder: Path, name: str, hosts: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(f"builder: switch\nhosts: {hosts}\nbandwidth: 25 GB/s\nlatency: 1 us\n")


def test_relative_paths_start_at_the_scenario_files_directory(tmp_path, monkeypatch):
    """A topology file and a traffic matrix next to a scenario are found from any working directory, even
    when the working directory holds a file of the same name; a sweep point's path too."""
    folder = tmp_path / "study"
    _beside(folder, "fabric.yaml", 8)
    _beside(folder, "small.yaml", 4)
    _beside(tmp_path / "elsewhere", "fabric.yaml", 2)
    weights = np.arange(64, dtype=float).reshape(8, 8) % 3
    np.fill_diagonal(weights, 0)
    np.save(folder / "traffic.npy", weights)
    (folder / "a2av.yaml").write_text(
        "name: a2av\ntopology: fabric.yaml\n"
        "collective: {op: alltoallv, algorithms: [direct], matrix: {file: traffic.npy}}\nsizes: [1 MiB]\n")
    (folder / "swept.yaml").write_text(
        "name: swept\ntopology: fabric.yaml\ncollective: {op: allreduce, algorithms: [ring]}\nsizes: [1 MiB]\n"
        "sweep: {grid: {topology: [fabric.yaml, {file: small.yaml}]}}\n")
    np.save(tmp_path / "elsewhere" / "traffic.npy", np.ones((2, 2)))
    monkeypatch.chdir(tmp_path / "elsewhere")
    scenario = load_scenario(Path("..") / "study" / "a2av.yaml")
    assert scenario.base_dir == Path("..") / "study"
    assert scenario.built_network().size == 8
    matrix = json.loads(run(scenario)["params"].iloc[0])["matrix"]
    assert matrix["source"] == "traffic.npy" and matrix["sum"] == weights.sum()
    assert run(load_scenario(Path("..") / "study" / "swept.yaml"))["ranks"].tolist() == [8, 4]


def test_a_missing_file_of_a_scenario_is_named_by_the_path_tried(tmp_path, monkeypatch):
    folder = tmp_path / "study"
    folder.mkdir()
    text = ("name: missing\ntopology: {builder: switch, hosts: 8, bandwidth: 25 GB/s, latency: 1 us}\n"
            "collective: {op: alltoallv, algorithms: [direct], matrix: {file: traffic.npy}}\nsizes: [1 MiB]\n")
    (folder / "matrix.yaml").write_text(text)
    (folder / "topology.yaml").write_text(text.replace("{builder: switch, hosts: 8, bandwidth: 25 GB/s, "
                                                       "latency: 1 us}", "fabric.yaml"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScenarioError) as raised:
        load_scenario("study/matrix.yaml")
    assert str(raised.value) == "study/matrix.yaml: collective.matrix.file: no file 'study/traffic.npy'"
    with pytest.raises(ScenarioError, match=r"^study/topology.yaml: topology.file: no topology file "
                                            r"'study/fabric.yaml' and no preset of that name"):
        load_scenario("study/topology.yaml")


def test_a_scenario_given_as_data_resolves_paths_from_the_working_directory(tmp_path, monkeypatch):
    """No file, no directory of its own: relative paths start where the process runs; a name that is no file
    there is a preset; a file named like a preset, where paths start, is that file."""
    _beside(tmp_path, "fabric.yaml", 4)
    _beside(tmp_path, "switch8", 2)
    monkeypatch.chdir(tmp_path)
    data = {"name": "data", "topology": "fabric.yaml", "collective": {"op": "allreduce", "algorithms": ["ring"]},
            "sizes": ["1 MiB"]}
    scenario = parse_scenario(data)
    assert scenario.base_dir is None and scenario.built_network().size == 4
    assert parse_scenario({**data, "topology": "dgx1"}).built_network().size == 8
    assert parse_scenario({**data, "topology": "switch8"}).built_network().size == 2


def test_sparse_payload_files_start_at_the_scenario_files_directory(tmp_path, monkeypatch):
    folder = tmp_path / "grads"
    folder.mkdir()
    for rank in range(4):
        np.save(folder / f"idx_{rank}.npy", np.arange(rank, 40, 4))
    (folder / "sparse.yaml").write_text(
        "name: sparse\ntopology: {builder: switch, hosts: 4, bandwidth: 25 GB/s, latency: 1 us}\n"
        "collective: {op: allreduce, algorithms: [sparse_ring]}\n"
        "payload: {kind: sparse, dimension: 40, distribution: file, indices_file: 'idx_{rank}.npy'}\n")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    scenario = load_scenario(folder / "sparse.yaml")
    assert [payload.indices_file for payload in scenario.sparse_payloads()] == [str(folder / "idx_{rank}.npy")]
    assert len(run(scenario)) == 1


SPARSE_SCENARIO = {"name": "sparse", "topology": {"builder": "switch", "hosts": 4, "bandwidth": "25 GB/s",
                                                 "latency": "1 us"},
                   "collective": {"op": "allreduce", "algorithms": ["sparse_ring"]}}


def test_a_sparse_payload_takes_ranges_of_dimensions_and_densities():
    """Study r26 F9: `dimension: 256Ki..4Mi:x4` was refused ("unknown unit 'Ki..4Mi:x4'") and `density:
    1/1024..1/4:x4` quoted a mangled value; both are ranges as `sizes` takes them, alone or as list items."""
    payload = {"kind": "sparse", "dimension": "256Ki..4Mi:x4", "density": ["1/1024..1/16:x4", "1/4"]}
    scenario = parse_scenario({**SPARSE_SCENARIO, "payload": payload})
    assert scenario.payload.dimension == [2**18, 2**20, 2**22]
    assert scenario.payload.density == [1 / 1024, 1 / 256, 1 / 64, 1 / 16, 1 / 4]
    assert len(scenario.sparse_payloads()) == 15


@pytest.mark.parametrize(("key", "value", "message"), [
    ("dimension", "4Mi..256Ki", "payload.dimension: expected a range 'LOW..HIGH' with 1 ≤ LOW ≤ HIGH, got "
                                "'4Mi..256Ki'"),
    ("dimension", ["1Mi", "256Ki..4Mi:x4"], "payload.dimension[1]: dimension 1048576 is listed twice (also "
                                            "dimension[0])"),
    ("density", "1/4..2", "payload.density: must be ≤ 1, got '1/4..2'"),
    ("density", ["1/1024..1/4:x4", "abc"], "payload.density[1]: expected a fraction such as '1/128', got 'abc'"),
    ("density", ["1/1024..1/4:x4", 2], "payload.density[1]: must be ≤ 1, got 2"),
    ("density", 0, "payload.density: must be > 0, got 0"),
])
def test_a_bad_range_of_a_payload_names_the_item_as_written(key, value, message):
    payload = {"kind": "sparse", "dimension": "1M", key: value}
    with pytest.raises(ScenarioError) as raised:
        parse_scenario({**SPARSE_SCENARIO, "payload": payload})
    assert str(raised.value) == message


CLUSTER = {"builder": "cluster", "node": "dgx1", "nodes": 2, "fabric": "switch",
           "fabric_params": {"bandwidth": "100 Gbps", "latency": "1 us"}}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"collective": {"algoritms": ["ring"]}},
         "collective.algorithms: missing (the key 'algoritms' is not one; a misspelling of 'algorithms'?)"),
        ({"collective": {"algorithms": [{"nme": "ring"}]}},
         "collective.algorithms[0].name: missing (the key 'nme' is not one; a misspelling of 'name'?)"),
        ({"topology": {"fil": "dgx1"}}, "topology.fil: unknown key; did you mean 'file'?"),
        ({"topology": {**CLUSTER, "fabric_params": {"bandwdth": "1 GB/s", "latency": "1 us"}}},
         "topology.fabric_params.bandwdth: unknown parameter 'bandwdth'; did you mean 'bandwidth'?"),
        ({"topology": {**CLUSTER, "pxm": True}}, "topology.pxm: unknown parameter 'pxm'; did you mean 'pxn'?"),
        ({"topology": CLUSTER, "network": {"tier_efficiency": {"nvlnk": 0.5}}},
         "network.tier_efficiency.nvlnk: the topology has no tier 'nvlnk'; did you mean 'nvlink'?"),
        ({"collective": None, "sizes": None, "jobs": {"a": {"ranks": 8, "collective": {
            "op": "allreduce", "algoritm": "ring", "size": "1 MiB"}}}},
         "jobs.a.collective.algorithm: missing (the key 'algoritm' is not one; a misspelling of 'algorithm'?)"),
        ({"collective": None, "sizes": None, "jobs": {"a": {"ranks": 8, "groups": {"tp": {"rank": 4}, "dp": "rest"},
                                                            "collective": {"op": "allreduce", "algorithm": "ring",
                                                                           "size": "1 MiB"}}}},
         "jobs.a.groups.tp.ranks: missing (the key 'rank' is not one; a misspelling of 'ranks'?)"),
    ],
)
def test_a_misspelt_key_in_any_mapping_is_named_with_the_closest_key(changes, message):
    data = {key: value for key, value in {**QUICKSTART, **changes}.items() if value is not None}
    with pytest.raises(ScenarioError) as raised:
        expand(parse_scenario(data))
    assert str(raised.value).startswith(message)


def test_a_sweep_point_with_a_misspelt_parameter_names_the_closest_one():
    data = {**QUICKSTART, "sweep": {"grid": {"collective.chunk": [1, 2]}}}
    with pytest.raises(ScenarioError, match=r"^sweep: point 0 \(collective.chunk=1\): collective.chunk: no listed "
                                            r"algorithm takes this parameter; did you mean 'chunks'\?"):
        expand(parse_scenario(data))


@pytest.mark.parametrize("spec", [
    {"builder": "dgx_h100", "nvls_efficiency": "{}"},
    {"file": "dgx_h100", "nvls_efficiency": "{}"},
    {"builder": "cluster", "node": "dgx_h100", "nodes": 2, "node_params": {"nvls_efficiency": "{}"},
     "fabric_params": {"bandwidth": "50 GB/s", "latency": "1 us"}},
])
def test_an_efficiency_of_a_topology_takes_a_fraction_as_written(spec):
    """``85%`` and ``17/20`` build the graph ``0.85`` builds, in a builder's keys, a preset's override and a
    cluster's node_params (README: fractions take ``80%``); a fraction out of range names its key."""
    def built(value):
        text = json.dumps(spec).replace('"{}"', json.dumps(value))
        graph = build_topology(json.loads(text))
        return sorted(graph.nodes(data=True), key=str), sorted(graph.edges(data=True), key=str)

    assert built("85%") == built("17/20") == built(0.85) != built(0.5)
    with pytest.raises(ScenarioError, match=r"nvls_efficiency: must be a fraction in \(0, 1\], got 1.85"):
        built("185%")


def _uplink_Bps(graph) -> float:
    return sum(data["bandwidth_Bps"] for _, v, data in graph.out_edges("leaf0", data=True) if v.startswith("spine"))


OVERSUBSCRIBED = """name: os
topology:
  builder: cluster
  node: dgx_h100
  nodes: 4
  rails: false
  fabric: leaf_spine
  fabric_params: {leaves: 2, spines: 2, hosts_per_leaf: 16, bandwidth: 400 Gbps, latency: 1 us, oversubscription: OS}
collective: {op: allreduce, algorithms: [ring]}
sizes: [1 MiB]
"""


def test_an_unquoted_vendor_ratio_is_the_oversubscription_it_says_not_a_base_60_number(tmp_path):
    """Study r22 F6: PyYAML read an unquoted ``oversubscription: 2:1`` as 121 and simnet ran at 1/60 of the
    uplink bandwidth meant; ``2:1`` is now the ratio 2 in a cluster's fabric_params as in calibrated_cluster."""
    def uplink(value: str, text: str = OVERSUBSCRIBED) -> float:
        path = tmp_path / "os.yaml"
        path.write_text(text.replace("OS", value))
        return _uplink_Bps(load_scenario(path).built_network().graph)

    assert uplink("2:1") == uplink('"2:1"') == uplink("2") == uplink("200%") == uplink("4/2") == uplink("1") / 2
    assert uplink("3:2") == uplink("1.5")
    calibrated = "name: c\ntopology: {builder: calibrated_cluster, kind: dgx_h100, nodes: 2, oversubscription: OS}\n" \
                 "collective: {op: allreduce, algorithms: [ring]}\nsizes: [1 MiB]\n"
    assert uplink("2:1", calibrated) == uplink("2", calibrated) == uplink("1/2", calibrated) / 4


@pytest.mark.parametrize(("topology", "path"), [
    ({"builder": "calibrated_cluster", "kind": "dgx_h100", "nodes": 2, "oversubscription": "two"},
     "topology.oversubscription"),
    ({"builder": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 2, "bandwidth": "1 GB/s",
      "latency": "1 us", "oversubscription": "2:1:1"}, "topology.oversubscription"),
    ({"file": "dgx_h100_ndr_32", "nodes": 2, "fabric_params": {"oversubscription": "2:0"}},
     "topology.fabric_params.oversubscription"),
])
def test_an_oversubscription_that_is_no_ratio_is_refused_naming_its_key(topology, path):
    with pytest.raises(ScenarioError) as raised:
        parse_scenario({**QUICKSTART, "topology": topology}, source="s.yaml")
    value = topology.get("oversubscription") or topology["fabric_params"]["oversubscription"]
    assert str(raised.value) == f"s.yaml: {path}: expected a ratio > 0 such as 2:1, 1.5, 3/2 or 150%, got {value!r}"


def test_a_time_written_as_minutes_and_seconds_is_not_read_as_a_base_60_number(tmp_path):
    """``1:30`` was the integer 90 to PyYAML; it stays the text written, which a time refuses by name."""
    path = tmp_path / "t.yaml"
    path.write_text("name: t\ntopology: {builder: switch, hosts: 4, bandwidth: 1 GB/s, latency: 1:30}\n"
                    "collective: {op: allreduce, algorithms: [ring]}\nsizes: [1 MiB]\n")
    with pytest.raises(ScenarioError) as raised:
        load_scenario(path)
    assert raised.value.path == "topology.latency" and "'1:30'" in raised.value.message


def test_nccls_choice_is_priced_with_the_release_each_nccl_entry_pinned():
    """Study r25 finding 2: with ``{name: nccl, version: "2.26.2"}`` the comparison priced the default release
    (271.7 us instead of 276.7 us) and called the run of that choice "not run" beside "same: yes". Each NCCL
    entry's rows carry its release's choice; another schedule's rows the one release the entries pinned."""
    from simnet.analysis import nccl_comparison

    text = """
name: releases
topology: dgx_h100
collective: {op: allreduce, algorithms: [{name: nccl, version: "2.26.2"}, ring]}
sizes: [64 MiB]
"""
    results = run(parse_scenario(yaml.safe_load(text)))
    pinned = results[results["algorithm"] == "nccl"].iloc[0]
    assert pinned["nccl_model_s"] == pytest.approx(pinned["model_time_s"]) == pytest.approx(276.66e-6, rel=1e-3)
    assert results["nccl_model_s"].nunique() == 1, "the ring's rows are priced with the release nccl pinned"
    table = nccl_comparison(results)
    assert table[["nccl_release", "nccl_choice", "agree"]].values.tolist() == [["2.26.2", "nvls/simple", True]]
    assert table["nccl_simulated_s"][0] == pinned["sim_time_s"]
    both = run(parse_scenario(yaml.safe_load(text.replace("ring]", "nccl]"))))
    table = nccl_comparison(both)
    assert table["nccl_release"].tolist() == ["2.26.2", "2.30.7"]
    assert table["nccl_model_s"][1] == pytest.approx(271.72e-6, rel=1e-3)
    assert not table["nccl_simulated_s"].isna().any()


def test_run_of_a_sweep_keeps_what_ran_and_names_the_failing_point_and_file(tmp_path):
    """Study r26 F4: simnet.run stopped at the first algorithm a point could not run, lost the points that had run
    and named neither the point nor the file; run_sweep and the command line kept the rows. run now fails as
    run_sweep does."""
    from simnet.sweep import run_sweep

    path = tmp_path / "nvls.yaml"
    path.write_text("name: nvls_by_server\ntopology: dgx_h100\ncollective: {op: allreduce, algorithms: [ring, nvls]}\n"
                    "sizes: [1 MiB]\nsweep: {grid: {topology: [dgx_h100, {builder: switch, hosts: 1, bandwidth: "
                    "1 GB/s, latency: 1 us}, dgx_a100]}}\n")
    scenario = load_scenario(path)
    with pytest.raises(SweepFailed) as raised:
        run(scenario)
    error = raised.value
    assert str(error).startswith(f'{path}: sweep: point 1 (topology={{"bandwidth": "1 GB/s", "builder": "switch", '
                                 '"hosts": 1, "latency": "1 us"}): topology.hosts: must be an integer ≥ 2, got 1; '
                                 '1 more failed; 2 of the 3 points ran, 1 of them in part')
    assert error.failures[["index", "algorithm", "sizes"]].values.tolist() == [[1, "", "all"], [2, "nvls", "all"]]
    assert error.failures["message"].iloc[1].startswith("nvls on this topology: ")
    assert list(zip(error.results["point"], error.results["algorithm"])) == [
        ("topology=dgx_h100", "ring"), ("topology=dgx_h100", "nvls"), ("topology=dgx_a100", "ring")]
    with pytest.raises(SweepFailed) as again:
        run_sweep(expand(scenario))
    pd.testing.assert_frame_equal(error.results, again.value.results)
    path.write_text("name: nvls_a100\ntopology: dgx_a100\ncollective: {op: allreduce, algorithms: [nvls]}\n"
                    "sizes: [1 MiB]\n")
    with pytest.raises(ScenarioError) as alone:
        run(load_scenario(path))
    assert str(alone.value).startswith(f"{path}: collective.algorithms[0]: nvls on this topology: ")


def test_a_sparse_all_reduce_at_density_1_beats_nccl_only_by_the_latency_it_does_not_pay():
    """Study r26 F6: on 4 DGX H100 at 1 MiB, sparse_ring_ring at density 1 (no sparsity at all) ran in 39 us beside
    NCCL's 100 us and was named simnet's best. Each row carries the latency NCCL's model charges its choice, and the
    comparison says that latency, not the algorithm, puts it ahead."""
    from simnet.analysis import nccl_comparison
    from simnet.models.nccl import algo_latency_s, network_tuning

    scenario = parse_scenario({
        "name": "f6", "topology": {"file": "dgx_h100_ndr_32", "nodes": 4},
        "collective": {"op": "allreduce", "algorithms": ["sparse_ring_ring", "nccl"]},
        "payload": {"kind": "sparse", "dimension": "256Ki", "density": 1, "seed": 1}})
    rows = run(scenario)
    algorithm, protocol = rows["nccl_choice"].iloc[0].split("/")
    tuning = network_tuning(scenario.built_network(), "2.30.7")
    assert (rows["nccl_latency_s"] == algo_latency_s(tuning, "allreduce", algorithm, protocol, 2**20)).all()
    (row,) = nccl_comparison(rows).to_dict(orient="records")
    assert row["simnet_best"].startswith("sparse_ring_ring") and not row["simnet_best_pays_nccl_latency"]
    assert row["simnet_best_s"] < 0.5 * row["nccl_best_s"]
    assert row["nccl_best_s"] <= row["simnet_best_with_nccl_latency_s"]
    assert row["latency_decides"]
    doc = " ".join((Path(__file__).resolve().parents[1] / "docs" / "nccl.md").read_text().split())
    assert (f"`sparse_ring_ring` at density 1 (no sparsity at all) simulates in {row['simnet_best_s'] * 1e6:.0f} us "
            f"beside NCCL's {row['nccl_best_s'] * 1e6:.0f} us, but NCCL's Tree/LL128 pays "
            f"{row['nccl_latency_s'] * 1e6:.0f} us of latency before any byte moves") in doc
    assert row["nccl_choice"] == "tree/ll128"
