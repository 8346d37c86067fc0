"""Composition of server templates on fabrics."""

from __future__ import annotations

import pytest

from simnet.errors import TopologyError
from simnet.topology import Router, cluster, describe, gpus

LEAF_SPINE = {"leaves": 8, "spines": 4, "hosts_per_leaf": 4, "bandwidth_Bps": 25e9, "latency_s": 1e-6}


def test_ranks_are_hierarchy_major():
    graph = cluster("dgx_a100", 3, fabric="leaf_spine", fabric_params=LEAF_SPINE)
    ranks = gpus(graph)
    assert ranks == [f"n{h}.gpu{i}" for h in range(3) for i in range(8)]
    assert [(graph.nodes[g]["host"], graph.nodes[g]["local_rank"]) for g in ranks] == [
        (h, i) for h in range(3) for i in range(8)
    ]
    assert graph.graph["host_transit"] is False


def test_rails_put_each_rail_on_its_own_leaf():
    graph = cluster("dgx_a100", 4, fabric="leaf_spine", fabric_params=LEAF_SPINE)
    for h in range(4):
        for j in range(8):
            assert graph.has_edge(f"n{h}.nic{j}", f"leaf{j}")
            assert graph.edges[f"n{h}.nic{j}", f"leaf{j}"]["bandwidth_Bps"] == 25e9
            assert graph.edges[f"n{h}.nic{j}", f"leaf{j}"]["tier"] == "ib"
    router = Router(graph)
    same_rail = router.path("n0.gpu5", "n3.gpu5")
    assert "leaf5" in same_rail and not any(n.startswith("spine") for n in same_rail)


def test_without_rails_a_server_sits_on_one_leaf():
    params = {"leaves": 4, "spines": 2, "hosts_per_leaf": 8, "bandwidth_Bps": 25e9, "latency_s": 1e-6}
    graph = cluster("dgx_a100", 4, fabric="leaf_spine", fabric_params=params, rails=False)
    for h in range(4):
        assert {v for j in range(8) for v in graph.successors(f"n{h}.nic{j}") if v.startswith("leaf")} == {f"leaf{h}"}


@pytest.mark.parametrize(
    ("fabric", "params"),
    [
        ("switch", {"bandwidth_Bps": 12.5e9, "latency_s": 1e-6}),
        ("fat_tree", {"k": 4, "bandwidth_Bps": 12.5e9, "latency_s": 1e-6}),
        ("torus", {"dims": [2, 2, 2], "bandwidth_Bps": 12.5e9, "latency_s": 1e-6}),
        ("leaf_spine", {"leaves": 2, "spines": 1, "hosts_per_leaf": 4, "bandwidth_Bps": 12.5e9, "latency_s": 1e-6}),
    ],
)
def test_every_fabric_composes(fabric, params):
    graph = cluster("abci_node", 4, fabric=fabric, fabric_params=params)
    info = describe(graph)
    assert info["gpus"] == 16 and info["hosts"] == 4
    assert info["nodes"]["nic"] == 8
    assert info["tiers"]["ib"]["links"] >= 8


def test_cluster_name_and_params_are_recorded():
    fabric = {"bandwidth_Bps": 25e9, "latency_s": 1e-6}
    graph = cluster("dgx1", 2, node_params={"nic_bandwidth_Bps": 25e9}, fabric_params=fabric)
    assert graph.graph["name"].startswith("cluster(2 x dgx1(nic_bandwidth=25 GB/s) on switch(")
    assert graph.graph["params"]["node_params"] == {"nic_bandwidth_Bps": 25e9}
    assert graph.edges["n0.nic0", "switch"]["bandwidth_Bps"] == 25e9


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"node": "dgx9", "nodes": 2}, "node"),
        ({"node": "dgx1", "nodes": 0}, "nodes"),
        ({"node": "dgx1", "nodes": 2, "fabric": "mesh"}, "fabric"),
        ({"node": "dgx1", "nodes": 2, "fabric": "fat_tree", "fabric_params": {"k": 2, "bandwidth_Bps": 1e9, "latency_s": 0.0}}, "fabric_params"),
        ({"node": "dgx1", "nodes": 2, "fabric": "fat_tree", "fabric_params": {"k": 3, "bandwidth_Bps": 1e9, "latency_s": 0.0}}, "fabric_params.k"),
        ({"node": "dgx1", "nodes": 2, "fabric": "fat_tree", "fabric_params": {"k": 4, "latency_s": 0.0}}, "fabric_params.bandwidth"),
        ({"node": "dgx1", "nodes": 2, "node_params": {"nvlink": 1}}, "node_params.nvlink"),
        ({"node": "dgx1", "nodes": 2, "rails": "yes"}, "rails"),
    ],
)
def test_bad_arguments_name_their_key(kwargs, path):
    with pytest.raises(TopologyError) as error:
        cluster(**kwargs)
    assert error.value.path == path
    assert "\n" not in str(error.value)
