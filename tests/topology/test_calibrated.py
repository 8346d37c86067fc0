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
        ("builder: calibrated_cluster\nkind: dgx_h100\n", "nodes", "missing parameter 'nodes'"),
    ],
)
def test_bad_parameters_name_their_key(text, path, needle):
    with pytest.raises(TopologyError) as error:
        loads(text)
    assert error.value.path == path and needle in str(error.value)
