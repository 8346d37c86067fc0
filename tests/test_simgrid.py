"""simnet.simgrid: platforms for SimGrid, with simnet's routes or as SimGrid's own clusters."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from simnet.errors import SimnetError
from simnet.network import Network
from simnet.simgrid import simgrid_hosts, to_simgrid_cluster, to_simgrid_platform, write_hostfile
from simnet.topology import fat_tree, gpus, leaf_spine, pgft, switch, torus

B, LAT = 12.5e9, 1e-6


def _cluster(network: Network, tmp_path) -> dict:
    path = tmp_path / "platform.xml"
    to_simgrid_cluster(network, path)
    return ET.parse(path).getroot().find("zone/cluster").attrib


@pytest.mark.parametrize(
    ("graph", "topology", "parameters"),
    [
        (pgft([4, 4], [1, 2], B, LAT, parallel=[1, 2]), "FAT_TREE", "2;4,4;1,2;1,2"),
        (pgft([4, 4, 4], [1, 4, 4], B, LAT), "FAT_TREE", "3;4,4,4;1,4,4;1,1,1"),
        (torus([4, 4, 4], B, LAT, gpu_routers=True), "TORUS", "4,4,4"),
        (switch(8, B, LAT), None, None),
    ],
    ids=["fat_tree_2l", "fat_tree_3l", "torus", "flat"],
)
def test_simgrids_own_cluster_describes_the_same_machine(graph, topology, parameters, tmp_path):
    attributes = _cluster(Network(graph), tmp_path)
    assert attributes.get("topology") == topology and attributes.get("topo_parameters") == parameters
    assert attributes["bw"] == "12500000000.0Bps" and attributes["lat"] == "1e-06s"
    assert attributes["sharing_policy"] == "SPLITDUPLEX" and attributes["radical"] == f"0-{len(gpus(graph)) - 1}"


def test_simgrid_numbers_torus_hosts_with_dimension_zero_fastest(tmp_path):
    """TorusZone: host id = c0 + d0 c1; simnet lists GPUs row-major (c0 slowest)."""
    network = Network(torus([2, 3], B, LAT, gpu_routers=True))
    coords = [network.graph.nodes[gpu]["coord"] for gpu in network.ranks]
    assert simgrid_hosts(network) == tuple(f"host{c0 + 2 * c1}" for c0, c1 in coords)
    placed = Network(network.graph, ranks=list(reversed(network.ranks)))
    hostfile = tmp_path / "hosts"
    write_hostfile(placed, hostfile, hosts=simgrid_hosts(placed))
    assert hostfile.read_text().split() == list(reversed(simgrid_hosts(network)))


@pytest.mark.parametrize(
    "graph",
    [fat_tree(4, B, LAT), leaf_spine(2, 2, 2, B, LAT), torus([4, 4], B, LAT)],
    ids=["fat_tree", "leaf_spine", "torus_with_injection_cables"],
)
def test_topologies_simgrid_has_no_cluster_for_are_refused(graph, tmp_path):
    with pytest.raises(SimnetError, match="no cluster zone"):
        to_simgrid_cluster(Network(graph), tmp_path / "p.xml")


def test_a_cluster_with_tier_efficiencies_is_refused(tmp_path):
    with pytest.raises(SimnetError, match="one bandwidth"):
        to_simgrid_cluster(Network(switch(4, B, LAT), tier_efficiency={"fabric": 0.5}), tmp_path / "p.xml")


def test_exported_routes_name_each_cable_of_a_bundle(tmp_path):
    network = Network(leaf_spine(4, 2, 4, B, LAT, parallel=2))
    path = tmp_path / "platform.xml"
    to_simgrid_platform(network, path)
    zone = ET.parse(path).getroot().find("zone")
    names = {link.attrib["id"] for link in zone.findall("link")}
    assert {"leaf0->spine1#0", "leaf0->spine1#1", "gpu0->leaf0"} <= names
    route = zone.find("route[@src='gpu0'][@dst='gpu10']")
    assert [link.attrib["id"] for link in route] == [
        "gpu0->leaf0", "leaf0->spine0#1", "spine0->leaf2#1", "leaf2->gpu10"
    ]
