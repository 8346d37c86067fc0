"""Server templates against their published figures."""

from __future__ import annotations

import pytest


from simnet.errors import TopologyError
from simnet.network import Network
from simnet.topology import NODES, Router, abci_node, dgx1, dgx2, dgx_a100, dgx_h100, gpus, power9_ac922

NVLINK_TIERS = ("nvlink", "nvswitch")

# Per GPU, per direction: V100 6 x 25 GB/s (Tesla V100 whitepaper WP-08608-001),
# A100 12 x 25 GB/s (A100 architecture whitepaper), H100 18 x 25 GB/s (H100 whitepaper).
PUBLISHED_NVLINK_Bps = {
    "dgx1": 150e9,
    "dgx2": 150e9,
    "abci_node": 150e9,
    "power9_ac922": 150e9,
    "dgx_a100": 300e9,
    "dgx_h100": 450e9,
}
NVLINKS_PER_GPU = {"dgx1": 6, "dgx2": 6, "abci_node": 6, "power9_ac922": 6, "dgx_a100": 12, "dgx_h100": 18}


def _nvlink_out(graph, gpu):
    return [d for _, _, d in graph.out_edges(gpu, data=True) if d["tier"] in NVLINK_TIERS]


@pytest.mark.parametrize("name", sorted(NODES))
def test_every_gpu_has_the_published_nvlink_bandwidth(name):
    graph = NODES[name]()
    for gpu in gpus(graph):
        links = _nvlink_out(graph, gpu)
        assert sum(d["bandwidth_Bps"] for d in links) == pytest.approx(PUBLISHED_NVLINK_Bps[name], rel=1e-12)
        assert sum(d["cables"] for d in links) == NVLINKS_PER_GPU[name]
        incoming = [d for _, _, d in graph.in_edges(gpu, data=True) if d["tier"] in NVLINK_TIERS]
        assert sum(d["bandwidth_Bps"] for d in incoming) == pytest.approx(PUBLISHED_NVLINK_Bps[name], rel=1e-12)


def test_power9_six_gpu_model_uses_two_bricks_per_pair():
    graph = power9_ac922(gpus_per_socket=3)
    assert len(gpus(graph)) == 6
    assert graph.edges["gpu0", "cpu0"]["cables"] == 2
    assert graph.edges["gpu0", "gpu1"]["bandwidth_Bps"] == 50e9
    assert all(sum(d["bandwidth_Bps"] for d in _nvlink_out(graph, g)) == 150e9 for g in gpus(graph))
    assert graph.edges["cpu0", "cpu1"]["tier"] == "xbus"
    with pytest.raises(TopologyError) as error:
        power9_ac922(gpus_per_socket=4)
    assert error.value.path == "gpus_per_socket"


def test_dgx1_is_a_hybrid_cube_mesh_with_eight_double_links():
    graph = dgx1()
    nvlink = [(u, v, d) for u, v, d in graph.edges(data=True) if d["tier"] == "nvlink" and u < v]
    assert len(nvlink) == 16
    assert sum(d["cables"] for *_, d in nvlink) == 24
    assert sum(1 for *_, d in nvlink if d["cables"] == 2) == 8
    for quad in ((0, 1, 2, 3), (4, 5, 6, 7)):
        assert all(graph.has_edge(f"gpu{a}", f"gpu{b}") for a in quad for b in quad if a != b)
    assert all(graph.has_edge(f"gpu{i}", f"gpu{i + 4}") for i in range(4))
    assert sum(1 for n, kind in graph.nodes(data="kind") if kind == "nic") == 4


def test_dgx2_nvswitch_planes_join_the_boards():
    graph = dgx2(nvswitch_planes=True)
    assert len(gpus(graph)) == 16
    assert sum(1 for n in graph if n.startswith("nvswitch")) == 12
    assert graph.edges["nvswitch0", "nvswitch6"]["cables"] == 8
    assert Router(graph).path("gpu0", "gpu15")[1].startswith("nvswitch")


def test_dgx2_striped_boards_carry_all_48_cables():
    graph = dgx2()
    assert sorted(n for n in graph if n.startswith("nvswitch")) == ["nvswitch0", "nvswitch1"]
    assert graph.edges["nvswitch0", "nvswitch1"]["cables"] == 48
    assert graph.edges["nvswitch0", "nvswitch1"]["bandwidth_Bps"] == 48 * 25e9


@pytest.mark.parametrize(("builder", "per_gpu_Bps"), [(dgx2, 150e9), (dgx_a100, 300e9), (dgx_h100, 450e9)])
def test_a_gpu_pair_gets_the_full_nvlink_bandwidth_through_striped_planes(builder, per_gpu_Bps):
    """A GPU stripes over all NVSwitch planes (NCCL measures ~80 % of this line rate, nccl-tests#149)."""
    network = Network(builder())
    assert network.route_bandwidth_Bps(0, 1) == per_gpu_Bps
    single_plane = Network(builder(nvswitch_planes=True))
    assert single_plane.route_bandwidth_Bps(0, 1) < per_gpu_Bps


def test_nic_counts_and_rates():
    assert [d["port_bandwidth_Bps"] for n, d in dgx_a100().nodes(data=True) if d["kind"] == "nic"] == [25e9] * 8
    assert [d["port_bandwidth_Bps"] for n, d in dgx_h100().nodes(data=True) if d["kind"] == "nic"] == [50e9] * 8
    assert [d["port_bandwidth_Bps"] for n, d in abci_node().nodes(data=True) if d["kind"] == "nic"] == [12.5e9] * 2


def test_abci_node_has_two_gpus_and_one_hca_per_pcie_switch():
    graph = abci_node()
    for j, members in enumerate((("gpu0", "gpu1", "nic0"), ("gpu2", "gpu3", "nic1"))):
        assert sorted(n for n in graph.neighbors(f"pcie{j}") if not n.startswith("cpu")) == sorted(members)
    assert all(graph.edges[f"gpu{a}", f"gpu{b}"]["cables"] == 2 for a in range(4) for b in range(4) if a != b)


@pytest.mark.parametrize("name", sorted(NODES))
def test_gpus_carry_the_hierarchy(name):
    graph = NODES[name]()
    for i, gpu in enumerate(gpus(graph)):
        data = graph.nodes[gpu]
        assert (data["host"], data["local_rank"]) == (0, i)
        assert data["socket"] in (0, 1) and data["forward"] is False
        assert f"nic{data['rail']}" in graph


@pytest.mark.parametrize("name", sorted(NODES))
def test_gpu_pairs_take_nvlink_when_present_and_pcie_otherwise(name):
    graph = NODES[name]()
    router = Router(graph)
    for a in gpus(graph):
        for b in gpus(graph):
            if a == b:
                continue
            path = router.path(a, b)
            tiers = {graph.edges[e]["tier"] for e in zip(path, path[1:])}
            direct = graph.has_edge(a, b) and graph.edges[a, b]["tier"] == "nvlink"
            shares_nvswitch = any(
                graph.edges[a, s]["tier"] == "nvswitch" and graph.has_edge(s, b) for s in graph.successors(a)
            )
            if direct:
                assert path == [a, b]
            elif shares_nvswitch:
                assert len(path) == 3 and tiers == {"nvswitch"}
            elif name == "dgx2":
                assert tiers == {"nvswitch"}
            else:
                assert all(graph.nodes[n]["kind"] != "gpu" for n in path[1:-1])
                assert tiers & {"pcie", "qpi", "upi", "xbus", "xgmi"}


def test_dgx1_pair_without_nvlink_crosses_the_sockets_over_pcie():
    assert Router(dgx1()).path("gpu0", "gpu5") == ["gpu0", "pcie0", "cpu0", "cpu1", "pcie2", "gpu5"]


@pytest.mark.parametrize("name", sorted(NODES))
def test_template_names_and_sources(name):
    graph = NODES[name]()
    assert graph.graph["name"] == f"{name}()"
    assert graph.graph["builder"] == name
    assert graph.graph["sources"] and all(isinstance(s, str) for s in graph.graph["sources"])


def test_template_rejects_bad_bandwidth_with_its_name():
    with pytest.raises(TopologyError) as error:
        dgx_a100(nic_bandwidth_Bps=0)
    assert error.value.path == "nic_bandwidth_Bps"
