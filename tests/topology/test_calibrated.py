"""The calibrated machines as topology builders: a file or scenario names them as the Python call does."""

from __future__ import annotations

import networkx as nx
import pytest

from simnet.errors import TopologyError
from simnet.topology import BUILDERS, calibrated_cluster, calibrated_node, loads
from simnet.topology.calibrated import NIC_EFFECTIVE_Bps, NVLINK_EFFECTIVE_Bps


def same_graph(a: nx.DiGraph, b: nx.DiGraph) -> bool:
    return (a.graph == b.graph and list(a.nodes(data=True)) == list(b.nodes(data=True))
            and list(a.edges(data=True)) == list(b.edges(data=True)))


@pytest.mark.parametrize(
    ("text", "call"),
    [
        ("builder: calibrated_node\nkind: dgx_h100\n", lambda: calibrated_node("dgx_h100")),
        ("builder: calibrated_node\nkind: gb200_nvl72\n", lambda: calibrated_node("gb200_nvl72")),
        ("builder: calibrated_cluster\nkind: dgx_h100\nnodes: 8\npxn: true\n",
         lambda: calibrated_cluster("dgx_h100", 8, pxn=True)),
        ("builder: calibrated_cluster\nkind: dgx_a100\nnodes: 3\nnic_share: 0.5\n",
         lambda: calibrated_cluster("dgx_a100", 3, nic_share=0.5)),
        ("builder: calibrated_cluster\nkind: dgx_a100\nnodes: 3\nnic_share: 50%\n",
         lambda: calibrated_cluster("dgx_a100", 3, nic_share=0.5)),
        ("builder: calibrated_cluster\nkind: dgx_h100\nnodes: 2\noversubscription: 2:1\n",
         lambda: calibrated_cluster("dgx_h100", 2, oversubscription=2.0)),
        ("builder: calibrated_cluster\nkind: dgx_h100\nnodes: 2\noversubscription: 3:2\n",
         lambda: calibrated_cluster("dgx_h100", 2, oversubscription=1.5)),
    ],
)
def test_the_file_form_builds_the_graph_of_the_python_call(text, call):
    assert same_graph(loads(text), call())


def test_a_calibrated_node_is_its_template_at_nccls_effective_rates():
    for kind in NVLINK_EFFECTIVE_Bps:
        expected = BUILDERS[kind](nvlink_bandwidth_Bps=NVLINK_EFFECTIVE_Bps[kind],
                                  nic_bandwidth_Bps=NIC_EFFECTIVE_Bps[kind])
        assert same_graph(calibrated_node(kind), expected)


@pytest.mark.parametrize(
    ("text", "path", "needle"),
    [
        ("builder: calibrated_node\nkind: dgx_h10\n", "kind",
         "no calibrated machine 'dgx_h10'; did you mean 'dgx_h100'?"),
        ("builder: calibrated_node\nkind: dgx1\n", "kind",
         "(expected one of: dgx_a100, dgx_h100, dgx_b200, gb200_nvl72)"),
        ("builder: calibrated_cluster\nkind: dgx_h100\nnodes: 0\n", "nodes", "must be an integer ≥ 1, got 0"),
        ("builder: calibrated_cluster\nkind: dgx_h100\nnodes: 2\nnic_share: 0\n", "nic_share", "must be a number > 0"),
        ("builder: calibrated_cluster\nkind: dgx_h100\nnodes: 2\nnic_share: 3\n", "nic_share",
         "must be at most 1, got 3: it is a GPU's share of one NIC port"),
        ("builder: calibrated_cluster\nkind: dgx_h100\n", "nodes", "missing parameter 'nodes'"),
        ("builder: calibrated_cluster\nkind: dgx_h100\nnodes: 2\noversubscription: 2to1\n", "oversubscription",
         "expected a ratio > 0 such as 2:1, 1.5, 3/2 or 150%, got '2to1'"),
    ],
)
def test_bad_parameters_name_their_key(text, path, needle):
    with pytest.raises(TopologyError) as error:
        loads(text)
    assert error.value.path == path and needle in str(error.value)


def test_the_calibrated_cluster_answers_what_ifs_of_its_fabric_and_servers():
    """SHARP on the leaves and spines, oversubscribed leaves and servers without NVLS, from the file form as from
    the call; defaults leave the graph as it was."""
    from simnet.topology import cluster

    base = calibrated_cluster("dgx_h100", 4)
    assert same_graph(loads("builder: calibrated_cluster\nkind: dgx_h100\nnodes: 4\noversubscription: 1\n"
                            "sharp: false\n"), base)
    what_if = loads("builder: calibrated_cluster\nkind: dgx_h100\nnodes: 4\nsharp: true\noversubscription: 2\n"
                    "nvls: false\n")
    assert same_graph(what_if, calibrated_cluster("dgx_h100", 4, sharp=True, oversubscription=2, nvls=False))
    fabric = {"leaves": 8, "spines": 4, "hosts_per_leaf": 4, "bandwidth_Bps": NIC_EFFECTIVE_Bps["dgx_h100"],
              "latency_s": 1e-6, "oversubscription": 2, "sharp": True}
    assert same_graph(what_if, cluster("dgx_h100", 4, fabric="leaf_spine", fabric_params=fabric, node_params={
        "nvlink_bandwidth_Bps": NVLINK_EFFECTIVE_Bps["dgx_h100"], "nic_bandwidth_Bps": NIC_EFFECTIVE_Bps["dgx_h100"],
        "nvls": False}))
    reducing = {n for n, data in what_if.nodes(data=True) if data.get("reduce")}
    assert reducing and all(what_if.nodes[n].get("host") is None for n in reducing)
    with pytest.raises(TopologyError, match="dgx_a100 has no NVLS to turn on") as raised:
        calibrated_node("dgx_a100", nvls=True)
    assert raised.value.path == "nvls"
    assert same_graph(calibrated_node("dgx_a100", nvls=False), calibrated_node("dgx_a100"))
