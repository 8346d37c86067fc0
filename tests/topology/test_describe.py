"""describe(): counts, tiers, bisection and diameter."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import pytest

from simnet.topology import (
    PRESETS, cluster, describe, dgx1, dgx_a100, dgx_h100, format_description, gpus, leaf_spine, load, switch,
    torus,
)
from simnet.topology.describe import over_ports, ports_warning
from simnet.topology.io import build, find


def test_dgx1_counts_tiers_and_diameter():
    info = describe(dgx1())
    assert info["gpus"] == 8 and info["hosts"] == 1
    assert info["nodes"] == {"gpu": 8, "nic": 4, "cpu": 2, "switch": 4}
    assert info["tiers"]["nvlink"] == {"links": 16, "cables": 24, "bandwidth_Bps": 24 * 25e9, "cable_Bps": [25e9]}
    assert info["diameter_hops"] == 5
    assert info["diameter_s"] == pytest.approx(4 * 0.5e-6 + 1e-6, rel=1e-12)


def test_bisection_of_a_switch_and_an_oversubscribed_leaf_spine():
    assert describe(switch(8, 1e9, 1e-6))["bisection_Bps"] == pytest.approx(4e9, rel=1e-12)
    graph = leaf_spine(2, 2, 4, 1e9, 1e-6, oversubscription=2.0)
    assert describe(graph)["bisection_Bps"] == pytest.approx(2e9, rel=1e-12)


@pytest.mark.parametrize("ratio", [1.0, 2.0, 4.0, 3.0])
def test_bisection_of_two_leaves_is_one_leafs_uplink_capacity_however_oversubscription_is_built(ratio):
    """Closed form: two leaves of 8 hosts at 25 GB/s split into halves by leaf, so the cut is one leaf's uplinks,
    8 * 25 GB/s / ratio, whether the ratio removes cables (2, 4 of 8) or slows them (3)."""
    graph = leaf_spine(2, 2, 8, 25e9, 1e-6, parallel=4, oversubscription=ratio)
    assert describe(graph)["bisection_Bps"] == pytest.approx(8 * 25e9 / ratio, rel=1e-12)


def test_dgx_a100_bisection_is_the_nvswitch_bandwidth_of_half_the_gpus():
    assert describe(dgx_a100())["bisection_Bps"] >= 4 * 300e9


def test_format_description_prints_one_fact_per_line():
    text = format_description(describe(dgx1()))
    assert text.splitlines()[0] == "dgx1()"
    assert "tier nvlink: 16 links, 24 cables of 25 GB/s, 600 GB/s per direction in all" in text
    assert "routing: shortest" in text
    assert "bisection bandwidth" in text and "diameter: 5 hops, 3 us" in text


def test_reduce_capable_switches_are_listed_by_efficiency():
    assert describe(dgx_a100())["reduce_switches"] == {}
    assert describe(dgx_h100())["reduce_switches"] == {0.85: ["nvswitch0"]}
    graph = cluster("dgx_h100", 2, fabric_params={"bandwidth_Bps": 50e9, "latency_s": 1e-6, "sharp": True})
    info = describe(graph)
    assert info["reduce_switches"] == {0.85: ["n0.nvswitch0", "n1.nvswitch0"], 1.0: ["switch"]}
    line = format_description(info).splitlines()[-1]
    assert line == ("  in-switch reduction (NVLS/SHARP): 2 switches at 85% of port bandwidth "
                    "(n0.nvswitch0 .. n1.nvswitch0); 1 switch at 100% of port bandwidth (switch)")
    assert format_description(describe(dgx1())).splitlines()[-1] == "  in-switch reduction (NVLS/SHARP): none"


@pytest.mark.parametrize("dims, links", [
    ([4, 8], 8), ([8, 4], 8), ([4, 4], 8), ([6, 4], 8), ([4, 6], 8),
    ([2, 4, 8], 16), ([8, 4, 2], 16), ([4, 8, 2], 16), ([4, 4, 4], 32),
    ([3, 4], 6), ([4, 3], 6), ([5, 8], 10), ([8, 5], 10),
])
def test_torus_bisection_cuts_across_the_longest_even_dimension_in_any_order(dims, links):
    """Dally and Towles (2004), sec. 3.3: a k-ary n-cube's bisection cuts across a dimension of largest even
    extent k, 2 N / k cables each way; which position that dimension has in `dims` does not matter."""
    info = describe(torus(dims, 25e9, 1e-6))
    nranks, longest = math.prod(dims), max(d for d in dims if d % 2 == 0)
    assert links == 2 * nranks // longest
    assert info["bisection_Bps"] == pytest.approx(links * 25e9, rel=1e-12)
    axis = dims.index(longest)
    half = longest // 2
    assert info["bisection_cut"] == (f"cut across torus dimension {axis} of {dims}: "
                                     f"c{axis} < {half} -> c{axis} ≥ {half}")


@pytest.mark.parametrize("dims", [[3, 5], [5, 3], [3, 3, 3], [7, 4], [4, 7], [5, 5]])
def test_torus_bisection_with_odd_extents_is_the_same_in_every_dimension_order(dims):
    """A dimension of odd extent is cut through its middle slice (halves one rank apart at most), so odd and
    all-odd tori get a value too; it is the same for every permutation of `dims` and never above the cut
    across the longest even dimension."""
    values = {describe(torus(list(order), 25e9, 1e-6))["bisection_Bps"] for order in itertools.permutations(dims)}
    assert len(values) == 1
    (value,) = values
    even = [d for d in dims if d % 2 == 0]
    if even:
        assert value <= 2 * math.prod(dims) // max(even) * 25e9


def test_odd_torus_bisection_counts_the_middle_slice():
    """[7, 4]: 2 x 4 cables across dimension 0 at its two cuts plus 2 inside the middle ring of 4 (10) are
    fewer than the 14 across the even dimension; [3, 5] and [5, 3]: across the 5, 2 x 3 ring cables, and the
    one rank of the middle ring of 3 on the first side is cheaper to cut at its GPU cable (7)."""
    assert describe(torus([7, 4], 25e9, 1e-6))["bisection_Bps"] == pytest.approx(10 * 25e9, rel=1e-12)
    info = describe(torus([3, 5], 25e9, 1e-6))
    assert info["bisection_Bps"] == pytest.approx(7 * 25e9, rel=1e-12)
    assert info["bisection_cut"] == "cut across torus dimension 1 of [3, 5]: c1 < 2 plus 1 rank of c1 = 2 -> the rest"
    assert describe(torus([3], 25e9, 1e-6))["bisection_cut"] == ("cut across torus dimension 0 of [3]: c0 < 1 -> "
                                                                  "the rest")


def test_gpu_router_and_double_link_tori_cut_their_own_cables():
    assert describe(torus([2, 8], 25e9, 1e-6, gpu_routers=True))["bisection_Bps"] == pytest.approx(4 * 25e9)
    assert describe(torus([8, 2], 25e9, 1e-6, double_links=True))["bisection_Bps"] == pytest.approx(4 * 25e9)
    assert describe(torus([2, 2], 25e9, 1e-6, double_links=True))["bisection_Bps"] == pytest.approx(2 * 25e9)


def test_other_families_keep_the_rank_halves():
    info = describe(switch(8, 1e9, 1e-6))
    assert info["bisection_cut"] == "first half of ranks -> second"
    assert "bisection bandwidth: 4 GB/s (first half of ranks -> second)" in format_description(info)


def _flow_Bps(graph, first, second):
    """Maximum flow from the GPUs `first` to the GPUs `second`, every link capped at its bandwidth."""
    flow = nx.DiGraph()
    flow.add_edges_from((u, v, {"capacity": bw}) for u, v, bw in graph.edges(data="bandwidth_Bps"))
    flow.add_edges_from(("source", node) for node in first)
    flow.add_edges_from((node, "sink") for node in second)
    return nx.maximum_flow_value(flow, "source", "sink")


@pytest.mark.parametrize("name", ["abci_node", "power9_ac922", "dgx1", "dgx_a100", "dgx_h100", "ring8", "switch8"])
def test_rank_halves_are_the_smallest_balanced_cut_of_the_small_presets(name):
    """docs/topology.md: on the shipped presets of up to 8 GPUs no other balanced split of the GPUs has a
    smaller maximum flow than the rank halves describe() reports."""
    graph = load(PRESETS / f"{name}.yaml")
    ranks = gpus(graph)
    flows = []
    for rest in itertools.combinations(ranks[1:], len(ranks) // 2 - 1):
        first = {ranks[0], *rest}
        flows.append(_flow_Bps(graph, first, [node for node in ranks if node not in first]))
    info = describe(graph)
    assert info["bisection_cut"] == "first half of ranks -> second"
    assert info["bisection_Bps"] == pytest.approx(min(flows), rel=1e-12)


def test_the_documented_64_server_ndr_fabric_needs_128_port_spines_and_2_to_1_fits_64():
    """Study r25 F4: dgx_h100_ndr_32 names 64-port Quantum-2 QM9700 switches (switch_ports: 64); grown to 64
    servers on 16 leaves its 4 spines end 16 x 8 = 128 cables each. At 2:1 they end 64 and fit."""
    grown = {"file": "dgx_h100_ndr_32", "nodes": 64, "fabric_params": {"leaves": 16}}
    assert over_ports(build(grown)) == {f"spine{s}": 128 for s in range(4)}
    assert over_ports(build({**grown, "fabric_params": {"leaves": 16, "oversubscription": "2:1"}})) == {}
    assert over_ports(load(find("dgx_h100_ndr_32"))) == {} and over_ports(load(find("gb200_nvl72_xdr_2"))) == {}
    assert ports_warning(leaf_spine(2, 2, 4, 1e9, 1e-6)) is None
