"""Server templates against their published figures."""

from __future__ import annotations

import pytest


from simnet.errors import TopologyError
from simnet.network import Network
from simnet.topology import (
    NODES, Router, abci_node, dgx1, dgx2, dgx_a100, dgx_b200, dgx_h100, gb200_nvl72, gpus, power9_ac922,
    reduce_efficiency, reducing_switches,
)

NVLINK_TIERS = ("nvlink", "nvswitch")

# Per GPU, per direction: V100 6 x 25 GB/s (Tesla V100 whitepaper WP-08608-001),
# A100 12 x 25 GB/s (A100 architecture whitepaper), H100 18 x 25 GB/s (H100 whitepaper),
# B200 18 x 50 GB/s (Blackwell architecture technical brief: 1.8 TB/s bidirectional per GPU).
PUBLISHED_NVLINK_Bps = {
    "dgx1": 150e9,
    "dgx2": 150e9,
    "abci_node": 150e9,
    "power9_ac922": 150e9,
    "dgx_a100": 300e9,
    "dgx_h100": 450e9,
    "dgx_b200": 900e9,
    "gb200_nvl72": 900e9,
}
NVLINKS_PER_GPU = {
    "dgx1": 6, "dgx2": 6, "abci_node": 6, "power9_ac922": 6, "dgx_a100": 12, "dgx_h100": 18, "dgx_b200": 18,
    "gb200_nvl72": 18,
}
# NCCL's nvlsEfficiency (NVIDIA/nccl src/graph/tuning.cc, 2.28.3+): Hopper 0.85, Blackwell 0.74;
# first- and second-generation NVSwitches (DGX-2, DGX A100) have no NVLS.
NVLS_EFFICIENCY = {"dgx_h100": 0.85, "dgx_b200": 0.74, "gb200_nvl72": 0.74}


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


@pytest.mark.parametrize(
    ("builder", "per_gpu_Bps"),
    [(dgx2, 150e9), (dgx_a100, 300e9), (dgx_h100, 450e9), (dgx_b200, 900e9), (gb200_nvl72, 900e9)],
)
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
    assert [d["port_bandwidth_Bps"] for n, d in dgx_b200().nodes(data=True) if d["kind"] == "nic"] == [50e9] * 8
    assert [d["port_bandwidth_Bps"] for n, d in gb200_nvl72().nodes(data=True) if d["kind"] == "nic"] == [50e9] * 72


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
        assert graph.nodes[f"cpu{data['socket']}"]["kind"] == "cpu" and data["forward"] is False
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


@pytest.mark.parametrize("name", sorted(NODES))
def test_nvls_switches_are_exactly_the_third_generation_nvswitches_and_later(name):
    graph = NODES[name]()
    expected = {"nvswitch0": NVLS_EFFICIENCY[name]} if name in NVLS_EFFICIENCY else {}
    assert {node: reduce_efficiency(graph, node) for node in reducing_switches(graph)} == expected
    assert all("reduce" not in data for node, data in graph.nodes(data=True) if node not in expected)


@pytest.mark.parametrize("builder", [dgx_h100, dgx_b200, gb200_nvl72])
def test_every_nvswitch_plane_reduces_and_nvls_can_be_turned_off(builder):
    planes = builder(nvswitch_planes=True)
    chips = [node for node, kind in planes.nodes(data="kind") if kind == "switch" and node.startswith("nvswitch")]
    assert reducing_switches(planes) == chips and len(chips) > 1
    assert reducing_switches(builder(nvls=False)) == []
    assert reduce_efficiency(builder(nvls_efficiency=0.5), "nvswitch0") == 0.5
    assert builder(nvls=False).graph["name"] == f"{builder.__name__}(nvls=False)"


@pytest.mark.parametrize(("kwargs", "path"), [
    ({"nvls": "yes"}, "nvls"), ({"nvls_efficiency": 0.0}, "nvls_efficiency"),
    ({"nvls_efficiency": 1.5}, "nvls_efficiency"), ({"nvswitch_planes": 1}, "nvswitch_planes"),
])
def test_nvls_parameters_are_checked(kwargs, path):
    with pytest.raises(TopologyError) as error:
        dgx_b200(**kwargs)
    assert error.value.path == path


@pytest.mark.parametrize(("builder", "domain_Bps"), [(dgx_b200, 14.4e12), (gb200_nvl72, 129.6e12)])
def test_blackwell_nvlink_domain_bandwidth_is_the_published_aggregate(builder, domain_Bps):
    """DGX B200 user guide: 14.4 TB/s aggregate; GB200 NVL72: 72 x 1.8 TB/s (NVIDIA quotes 130 TB/s)."""
    graph = builder()
    both_directions = sum(
        data["bandwidth_Bps"] for u, v, data in graph.edges(data=True) if data["tier"] == "nvswitch"
    )
    assert both_directions == pytest.approx(domain_Bps, rel=1e-12)


def test_dgx_b200_stripes_nine_links_over_each_of_two_nvswitch_chips():
    graph = dgx_b200(nvswitch_planes=True)
    assert sorted(n for n in graph if n.startswith("nvswitch")) == ["nvswitch0", "nvswitch1"]
    assert all(graph.edges[f"gpu{i}", f"nvswitch{s}"]["cables"] == 9 for i in range(8) for s in range(2))
    assert Network(graph).route_bandwidth_Bps(0, 1) == 9 * 50e9
    assert dgx_b200().edges["cpu0", "cpu1"]["bandwidth_Bps"] == 4 * 40e9


def test_gb200_nvl72_is_one_nvlink_domain_of_72_gpus_on_36_grace_cpus():
    graph = gb200_nvl72()
    kinds = [kind for _, kind in graph.nodes(data="kind")]
    assert (kinds.count("gpu"), kinds.count("cpu"), kinds.count("nic"), kinds.count("switch")) == (72, 36, 72, 1)
    for i, gpu in enumerate(gpus(graph)):
        assert graph.edges[gpu, "nvswitch0"]["cables"] == 18
        assert graph.edges[gpu, "nvswitch0"]["bandwidth_Bps"] == 18 * 50e9
        assert graph.edges[gpu, f"cpu{i // 2}"] == {"bandwidth_Bps": 450e9, "latency_s": 0.5e-6, "tier": "c2c",
                                                   "cables": 1}
        assert graph.nodes[gpu]["rail"] == i and graph.nodes[gpu]["socket"] == i // 2
    router = Router(graph)
    assert all(router.path("gpu0", gpu) == ["gpu0", "nvswitch0", gpu] for gpu in gpus(graph)[1:])


def test_gb200_nvl72_planes_are_eighteen_chips_with_one_link_from_every_gpu():
    graph = gb200_nvl72(nvswitch_planes=True)
    chips = [f"nvswitch{s}" for s in range(18)]
    assert sorted(n for n in graph if n.startswith("nvswitch")) == sorted(chips)
    assert all(graph.edges[gpu, chip]["cables"] == 1 for gpu in gpus(graph) for chip in chips)
    assert all(graph.in_degree(chip) == 72 for chip in chips)


@pytest.mark.parametrize("builder", [dgx_a100, dgx_h100, dgx_b200, gb200_nvl72])
def test_every_gpus_rail_nic_is_on_its_own_pcie_switch_or_grace_cpu(builder):
    """NCCL's GPU-NIC affinity: one NIC per GPU, two hops away, through no other GPU."""
    graph = builder()
    router = Router(graph)
    nics = [node for node, kind in graph.nodes(data="kind") if kind == "nic"]
    assert len(nics) == len(gpus(graph))
    for gpu in gpus(graph):
        data = graph.nodes[gpu]
        nic = f"nic{data['rail']}"
        path = router.path(gpu, nic)
        assert len(path) == 3 and graph.nodes[path[1]]["kind"] in ("switch", "cpu")
        assert graph.nodes[path[1]]["socket"] == data["socket"] == graph.nodes[nic]["socket"]
