"""Topology files: presets, round trips, GraphML and one-line errors for malformed files."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet.algorithms import ring_allreduce
from simnet.engine import simulate
from simnet.errors import TopologyError
from simnet.network import Network
from simnet.topology import (
    BUILDERS, build, cluster, dgx1, dgx_b200, dumps, export_graphml, fat_tree, gpus, leaf_spine, load, loads, save, torus,
)
from simnet.topology.io import PRESETS as PRESET_DIR
from simnet.topology.io import to_spec
from simnet.topology.params import quantity
from simnet.units import parse_bandwidth, parse_time

PRESETS = sorted(PRESET_DIR.glob("*.yaml"))


def test_there_is_a_preset_for_every_builder_and_the_two_clusters():
    """The calibrated builders make the graphs of a template or a cluster (their ``builder``), so no file
    records them."""
    stems = {path.stem for path in PRESETS}
    builders = {load(path).graph["builder"] for path in PRESETS}
    assert builders == set(BUILDERS) - {"calibrated_node", "calibrated_cluster"}
    assert {"abci_rack", "dgx_a100_superpod_slice", "dgx_h100_ndr_32", "gb200_nvl72_xdr_2"} <= stems


@pytest.mark.parametrize("path", PRESETS, ids=lambda p: p.stem)
def test_preset_validates_round_trips_and_lists_sources(path):
    graph = load(path)
    assert graph.graph["sources"] and graph.graph["description"]
    assert dumps(graph) == path.read_text(encoding="utf-8")
    assert dumps(loads(dumps(graph))) == dumps(graph)


@pytest.mark.parametrize("path", PRESETS, ids=lambda p: p.stem)
def test_preset_runs_ring_allreduce_end_to_end(path):
    network = Network(load(path))
    size = 1 << 20
    trace = simulate(network, ring_allreduce(network.size, size))
    p = network.size
    lower = 2 * (p - 1) / p * size / max(network.bandwidth_Bps)
    assert trace.time_s > lower
    assert simulate(network, ring_allreduce(network.size, size)).time_s == trace.time_s


def test_explicit_form_round_trips(tmp_path):
    graph = dgx1()
    del graph.graph["builder"], graph.graph["params"]
    file = tmp_path / "dgx1_explicit.yaml"
    save(graph, file)
    text = file.read_text()
    assert "links:" in text and "builder" not in text
    again = load(file)
    assert dumps(again) == text
    assert list(again.nodes(data=True)) == list(graph.nodes(data=True))
    assert {(u, v): d for u, v, d in again.edges(data=True)} == {(u, v): d for u, v, d in graph.edges(data=True)}


def test_explicit_form_round_trips_the_switch_reduce_capability():
    graph = dgx_b200()
    del graph.graph["builder"], graph.graph["params"]
    text = dumps(graph)
    assert "  reduce: true\n  reduce_efficiency: 0.74\n" in text
    again = loads(text)
    assert dumps(again) == text
    assert again.nodes["nvswitch0"]["reduce"] is True and again.nodes["nvswitch0"]["reduce_efficiency"] == 0.74


@pytest.mark.parametrize(
    ("attrs", "path", "message"),
    [
        ("kind: switch, reduce: maybe", "nodes[1].reduce", "node 'sw': reduce must be true or false, got 'maybe'"),
        ("kind: gpu, reduce: true", "nodes[1].reduce", "node 'sw': reduce is a switch capability"),
        ("kind: switch, reduce: true, reduce_efficiency: 1.5", "nodes[1].reduce_efficiency",
         "node 'sw': reduce_efficiency must be a number in (0, 1], got 1.5"),
        ("kind: switch, reduce_efficiency: 0.8", "nodes[1].reduce_efficiency",
         "node 'sw': reduce_efficiency is given but reduce is not true"),
    ],
)
def test_bad_reduce_attributes_name_the_node_and_key(attrs, path, message):
    text = (f"nodes:\n- {{name: gpu0, kind: gpu}}\n- {{name: sw, {attrs}}}\n"
            "links:\n- {from: gpu0, to: sw, bandwidth: 25 GB/s, latency: 1 us, tier: nvswitch}\n")
    with pytest.raises(TopologyError) as error:
        loads(text)
    assert error.value.path == path and error.value.message.startswith(message)
    assert "\n" not in str(error.value)


def test_sharp_round_trips_in_the_builder_form():
    graph = loads("builder: leaf_spine\nleaves: 2\nspines: 1\nhosts_per_leaf: 2\nbandwidth: 800 Gb/s\n"
                  "latency: 1 us\nsharp: true\n")
    assert all(data.get("reduce") for _, data in graph.nodes(data=True) if data["kind"] == "switch")
    assert "sharp: true" in dumps(graph) and dumps(loads(dumps(graph))) == dumps(graph)


def test_explicit_torus_keeps_dimension_order_routing():
    graph = torus([3, 3], 1e9, 1e-6)
    del graph.graph["builder"], graph.graph["params"]
    again = loads(dumps(graph))
    assert again.graph["routing"] == "dimension_order" and again.nodes["r1_2"]["coord"] == (1, 2)


def test_builder_form_with_units_and_nested_cluster_params():
    graph = loads(
        """
builder: cluster
node: abci_node
nodes: 2
node_params: {nic_bandwidth: 200 Gb/s}
fabric: leaf_spine
fabric_params: {leaves: 2, spines: 1, hosts_per_leaf: 2, bandwidth: 25 GB/s, latency: 600 ns}
"""
    )
    assert graph.edges["n0.nic0", "leaf0"]["bandwidth_Bps"] == 25e9
    assert graph.edges["n0.nic0", "leaf0"]["latency_s"] == pytest.approx(600e-9, rel=1e-12)
    assert to_spec(graph)["node_params"] == {"nic_bandwidth": "25 GB/s"}


def test_build_accepts_a_file_reference(tmp_path):
    save(dgx1(), tmp_path / "x.yaml")
    assert len(gpus(build({"file": "x.yaml"}, base=tmp_path))) == 8


def test_a_file_reference_overrides_its_builders_parameters_key_by_key():
    """``nodes`` replaces the preset's 32; ``node_params`` is merged into the preset's (none) and
    ``fabric_params`` keeps every key the override does not name: with 32 ports per leaf still, NIC ``j``
    of server ``h`` takes port ``32j + h`` of its rail's leaf ``leaf{j}``, as the preset wires it."""
    preset = load("dgx_h100_ndr_32")
    graph = build({"file": "dgx_h100_ndr_32", "nodes": 2, "node_params": {"nic_bandwidth": "200 Gb/s"},
                   "fabric_params": {"latency": "2 us"}})
    assert len(gpus(graph)) == 2 * 8 and {graph.nodes[g]["host"] for g in gpus(graph)} == {0, 1}
    for h in range(2):
        for j in range(8):
            assert graph.nodes[f"n{h}.nic{j}"]["port"] == 32 * j + h
            assert graph.edges[f"n{h}.nic{j}", f"leaf{j}"]["bandwidth_Bps"] == 200e9 / 8
            assert graph.edges[f"n{h}.nic{j}", f"leaf{j}"]["latency_s"] == pytest.approx(2e-6, rel=1e-12)
    assert graph.edges["leaf0", "spine0"] == preset.edges["leaf0", "spine0"] | {"latency_s": graph.edges[
        "leaf0", "spine0"]["latency_s"]}
    assert graph.edges["n0.gpu0", "n0.nvswitch0"] == preset.edges["n0.gpu0", "n0.nvswitch0"]
    assert graph.graph["params"]["fabric_params"] == {**preset.graph["params"]["fabric_params"], "latency_s": 2e-6}
    assert graph.graph["pxn"] is True
    assert graph.graph["sources"] == preset.graph["sources"]
    assert graph.graph["description"] == (f"{preset.graph['description']} Overridden: nodes: 2, "
                                          "node_params.nic_bandwidth: 200 Gb/s, fabric_params.latency: 2 us.")


def test_800_gbps_nics_on_the_gb200_racks_need_the_pcie_link_raised_as_the_docs_say():
    """Each NIC of the template hangs on a PCIe Gen5 x16 link (63 GB/s) to its Grace CPU: with the NIC
    rate alone a route between racks is capped by PCIe; with both, by the 800 Gb/s NIC."""
    nic_only = Network(build({"file": "gb200_nvl72_xdr_2", "node_params": {"nic_bandwidth": "800 Gb/s"}}))
    both = Network(build({"file": "gb200_nvl72_xdr_2",
                          "node_params": {"nic_bandwidth": "800 Gb/s", "pcie_bandwidth": "800 Gb/s"}}))
    preset = Network(load("gb200_nvl72_xdr_2"))
    assert preset.route_bandwidth_Bps(3, 72 + 3) == 400e9 / 8
    assert nic_only.route_bandwidth_Bps(3, 72 + 3) == preset.graph.edges["n0.nic3", "n0.cpu1"]["bandwidth_Bps"]
    assert both.route_bandwidth_Bps(3, 72 + 3) == 800e9 / 8
    assert "pcie_bandwidth: 800 Gb/s" in preset.graph.graph["description"]


@pytest.mark.parametrize(
    ("overrides", "path", "needle"),
    [
        ({"servers": 2}, "servers", "'dgx_h100_ndr_32' is built by 'cluster', which takes no 'servers' (it "
                                    "takes: fabric, fabric_params, node, node_params, nodes, pxn, rails)"),
        ({"fabric_param": {}}, "fabric_param", "which takes no 'fabric_param'; did you mean 'fabric_params'?"),
        ({"description": "mine"}, "description", "which takes no 'description'"),
        ({"node_params": {"nic_bandwdith": "1 GB/s"}}, "node_params.nic_bandwdith",
         "unknown parameter 'nic_bandwdith'; did you mean 'nic_bandwidth'? (expected one of ["),
        ({"nodes": 0}, "nodes", "must be an integer ≥ 1, got 0"),
    ],
)
def test_an_override_the_builder_does_not_take_names_its_path_and_not_the_file(overrides, path, needle):
    with pytest.raises(TopologyError) as error:
        build({"file": "dgx_h100_ndr_32", **overrides})
    assert (error.value.path, error.value.source) == (path, "")
    assert needle in str(error.value) and "\n" not in str(error.value)


def test_a_file_may_override_a_preset_and_be_overridden_in_turn_but_not_a_file_of_links(tmp_path):
    (tmp_path / "four.yaml").write_text("file: dgx_h100_ndr_32\nnodes: 4\nnode_params: {nic_bandwidth: 25 GB/s}\n")
    four = build({"file": "four.yaml"}, base=tmp_path)
    two = build({"file": "four.yaml", "nodes": 2}, base=tmp_path)
    assert (len(gpus(four)), len(gpus(two))) == (32, 16)
    assert two.edges["n1.nic0", "leaf0"]["bandwidth_Bps"] == 25e9
    (tmp_path / "bad.yaml").write_text("file: dgx_h100_ndr_32\nnodes: [4]\n")
    with pytest.raises(TopologyError, match="nodes: must be an integer") as error:
        build({"file": "bad.yaml", "pxn": False}, base=tmp_path)
    assert error.value.source == str(tmp_path / "bad.yaml")
    graph = dgx1()
    graph.remove_edge("gpu0", "gpu1")
    graph.remove_edge("gpu1", "gpu0")
    save(graph, tmp_path / "links.yaml")
    with pytest.raises(TopologyError, match="lists its nodes and links: only a file of the builder form") as error:
        build({"file": "links.yaml", "nvlink_bandwidth": "1 GB/s"}, base=tmp_path)
    assert error.value.path == "nvlink_bandwidth"


def test_graphml_export_reads_back(tmp_path):
    file = tmp_path / "t.graphml"
    export_graphml(torus([3, 2], 1e9, 1e-6), file)
    back = nx.read_graphml(file)
    assert back.number_of_edges() == torus([3, 2], 1e9, 1e-6).number_of_edges()
    assert back.edges["gpu0", "r0_0"]["bandwidth_Bps"] == 1e9
    assert back.nodes["r2_1"]["coord"] == "[2, 1]"


HEADER = """
nodes:
- {name: gpu0, kind: gpu}
- {name: gpu1, kind: gpu}
- {name: sw, kind: switch}
links:
"""
GOOD = "- {from: gpu0, to: sw, bandwidth: 25 GB/s, latency: 1 us, tier: fabric}\n"


@pytest.mark.parametrize(
    ("links", "path", "names"),
    [
        (GOOD + "- {from: gpu1, to: sw, latency: 1 us, tier: fabric}\n", "links[1].bandwidth", "'gpu1' <-> 'sw'"),
        (GOOD + "- {from: gpu1, to: sw, bandwidth: 25 GB/x, latency: 1 us, tier: fabric}\n", "links[1].bandwidth", "'gpu1' <-> 'sw'"),
        (GOOD + "- {from: gpu1, to: sw, bandwidth: 25 GB/s, latency: 1 parsec, tier: fabric}\n", "links[1].latency", "'gpu1' <-> 'sw'"),
        (GOOD + "- {from: gpu1, to: nic9, bandwidth: 25 GB/s, latency: 1 us, tier: fabric}\n", "links[1].to", "'nic9'"),
        (GOOD + "- {from: gpu1, to: sw, bandwidth: 0 GB/s, latency: 1 us, tier: fabric}\n", "links[1].bandwidth", "'gpu1' <-> 'sw'"),
        (GOOD + "- {from: gpu1, to: sw, bandwidth: -5 GB/s, latency: 1 us, tier: fabric}\n", "links[1].bandwidth", "'gpu1' <-> 'sw'"),
        (GOOD + "- {from: gpu1, to: sw, bandwidth: 5 GB/s, latency: -1 us, tier: fabric}\n", "links[1].latency", "'gpu1' <-> 'sw'"),
        (GOOD + "- {from: gpu1, to: sw, bandwidth: 5 GB/s, latency: 1 us}\n", "links[1].tier", "'gpu1' <-> 'sw'"),
        (GOOD + GOOD, "links[1]", "'gpu0' <-> 'sw'"),
        (GOOD, "", "'gpu1'"),
    ],
    ids=["missing-bandwidth", "unknown-unit", "unknown-time-unit", "dangling", "zero", "negative", "negative-latency",
         "missing-tier", "duplicate-link", "disconnected-gpu"],
)
def test_malformed_links_give_one_line_errors_naming_the_link(tmp_path, links, path, names):
    file = tmp_path / "bad.yaml"
    file.write_text(HEADER + links)
    with pytest.raises(TopologyError) as error:
        load(file)
    message = str(error.value)
    assert "\n" not in message
    assert error.value.path == path
    assert names in message
    assert message.startswith(str(file))


@pytest.mark.parametrize(
    ("text", "path", "needle"),
    [
        (HEADER.replace("- {name: sw", "- {name: gpu0, kind: gpu}\n- {name: sw") + GOOD, "nodes[2].name", "duplicate node 'gpu0'"),
        (HEADER.replace("kind: switch", "kind: router") + GOOD, "nodes[2].kind", "node 'sw'"),
        ("builder: fat_tree\nk: 3\nbandwidth: 1 GB/s\nlatency: 1 us\n", "k", "even"),
        ("builder: fat_tree\nk: 4\nlatency: 1 us\n", "bandwidth", "missing"),
        ("builder: fat_tree\nk: 4\nbandwidth: 1 GB\nlatency: 1 us\n", "bandwidth", "unknown unit"),
        ("builder: fat_tree\nk: 4\nbandwidth: 1 GB/s\nlatency: 1 us\nradix: 4\n", "radix", "unknown parameter"),
        ("builder: fat_tree\nk: 4\nbandwidth: 0 GB/s\nlatency: 1 us\n", "bandwidth", "> 0"),
        ("builder: hypercube\n", "builder", "unknown builder"),
        ("builder: cluster\nnode: dgx1\nnodes: 2\nfabric_params: {bandwidth: 1 Gbps, latency: 2 lightyears}\n",
         "fabric_params.latency", "unknown unit"),
        ("nodes: [\n", "", "line"),
        ("- 1\n- 2\n", "", "mapping"),
    ],
)
def test_malformed_files_give_one_line_errors(text, path, needle):
    with pytest.raises(TopologyError) as error:
        loads(text, source="t.yaml")
    assert "\n" not in str(error.value)
    assert error.value.path == path
    assert needle in str(error.value)


def test_missing_file_is_a_topology_error(tmp_path):
    with pytest.raises(TopologyError, match="cannot read"):
        load(tmp_path / "nope.yaml")


@settings(max_examples=60, deadline=None)
@given(
    value=st.floats(min_value=1e-3, max_value=1e15, allow_nan=False, allow_infinity=False),
    name=st.sampled_from(["bandwidth_Bps", "latency_s"]),
)
def test_unit_strings_written_by_save_parse_back_exactly(value, name):
    text = quantity(name, value)
    assert (parse_bandwidth if name.endswith("_Bps") else parse_time)(text) == value


@settings(max_examples=25, deadline=None)
@given(
    family=st.sampled_from(["fat_tree", "leaf_spine", "torus"]),
    bandwidth=st.floats(min_value=1e6, max_value=1e12, allow_nan=False),
    latency=st.floats(min_value=0.0, max_value=1e-3, allow_nan=False),
    data=st.data(),
)
def test_builder_graphs_round_trip_through_yaml(family, bandwidth, latency, data):
    if family == "fat_tree":
        graph = fat_tree(data.draw(st.sampled_from([2, 4])), bandwidth, latency)
    elif family == "leaf_spine":
        graph = leaf_spine(
            data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)), data.draw(st.integers(2, 4)), bandwidth, latency,
            oversubscription=data.draw(st.sampled_from([1.0, 2.5, 3.0])),
        )
    else:
        graph = torus(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=2).filter(lambda d: max(d) > 1)),
                      bandwidth, latency, double_links=data.draw(st.booleans()))
    text = dumps(graph)
    again = loads(text)
    assert dumps(again) == text
    assert list(again.edges(data=True)) == list(graph.edges(data=True))


def test_an_unknown_link_key_that_is_not_printable_is_named_in_one_line():
    """Found by the fuzz test: a link key with a newline broke the one-line error."""
    text = yaml.safe_dump({"nodes": [{"name": "a", "kind": "gpu"}, {"name": "b", "kind": "gpu"}],
                           "links": [{"from": "a", "to": "b", "bandwidth": "1 GB/s", "latency": "1 us", "\n": 1}]})
    with pytest.raises(TopologyError) as error:
        loads(text)
    assert "\n" not in str(error.value)
    assert str(error.value).startswith("'links[0].\\n': link 'a' <-> 'b': unknown key '\\n'")


@pytest.mark.parametrize("edit", ["remove GPUs", "slow a link"])
def test_a_built_graph_edited_afterwards_is_saved_as_edited(tmp_path, edit):
    """The builder form would rebuild the unedited graph; an edited one is written explicitly."""
    graph = cluster("dgx_h100", 2, fabric="switch", fabric_params={"bandwidth_Bps": 50e9, "latency_s": 1e-6})
    assert "builder" in to_spec(graph)
    if edit == "remove GPUs":
        graph.remove_nodes_from([n for n, d in graph.nodes(data=True) if d["kind"] == "gpu" and n.endswith("gpu7")])
    else:
        for u, v in (("n0.gpu0", "n0.nvswitch0"), ("n0.nvswitch0", "n0.gpu0")):
            graph.edges[u, v]["bandwidth_Bps"] /= 2
    save(graph, tmp_path / "edited.yaml")
    back = load(tmp_path / "edited.yaml")
    assert "builder" not in to_spec(graph) and to_spec(graph)["server"] == back.graph["server"] == "dgx_h100"
    assert back.graph["name"] == f"edited {graph.graph['name']}" and to_spec(back)["name"] == back.graph["name"]
    assert dict(back.nodes(data=True)).keys() == dict(graph.nodes(data=True)).keys()
    assert {(u, v): d["bandwidth_Bps"] for u, v, d in back.edges(data=True)} == {
        (u, v): d["bandwidth_Bps"] for u, v, d in graph.edges(data=True)}


@pytest.mark.parametrize("server", ["dgx_h900", ["dgx_h100"], {"a": 1}])
def test_the_server_template_of_an_explicit_file_must_be_known(server):
    spec = {"server": server, "nodes": [{"name": "gpu0", "kind": "gpu"}], "links": []}
    with pytest.raises(TopologyError, match="unknown server template") as caught:
        loads(yaml.safe_dump(spec))
    assert caught.value.path == "server"


def test_an_edited_cluster_round_trips_byte_for_byte_and_graph_level_edits_count():
    graph = cluster("dgx_h100", 2, fabric="switch", fabric_params={"bandwidth_Bps": 50e9, "latency_s": 1e-6})
    graph.remove_nodes_from(["n0.gpu7", "n1.gpu7"])
    text = dumps(graph)
    assert dumps(loads(text)) == text
    built = cluster("dgx_h100", 2, fabric="switch", fabric_params={"bandwidth_Bps": 50e9, "latency_s": 1e-6})
    built.graph["pxn"] = True
    assert "builder" not in to_spec(built) and loads(dumps(built)).graph["pxn"] is True
    reordered = cluster("dgx_h100", 2, fabric="switch", fabric_params={"bandwidth_Bps": 50e9, "latency_s": 1e-6})
    data, edges = reordered.nodes["n0.gpu0"], list(reordered.in_edges("n0.gpu0", data=True)) + list(
        reordered.out_edges("n0.gpu0", data=True))
    reordered.remove_node("n0.gpu0")
    reordered.add_node("n0.gpu0", **data)
    reordered.add_edges_from(edges)
    assert "builder" not in to_spec(reordered) and list(loads(dumps(reordered)))[-1] == "n0.gpu0"


def test_load_takes_a_preset_by_name_and_lists_the_presets_otherwise():
    assert nx.utils.graphs_equal(load("dgx_h100"), load(PRESET_DIR / "dgx_h100.yaml"))
    with pytest.raises(TopologyError, match=r"^file: no topology file 'dgx_h1000' .*presets: .*dgx_h100,"):
        load("dgx_h1000")


def test_the_presets_ship_inside_the_package():
    assert PRESET_DIR.parent == Path(load.__code__.co_filename).parent
    assert {"dgx_h100", "gb200_nvl72"} <= {path.stem for path in PRESET_DIR.glob("*.yaml")}
