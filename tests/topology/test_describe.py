"""describe(): counts, tiers, bisection and diameter."""

from __future__ import annotations

import pytest

from simnet.topology import cluster, describe, dgx1, dgx_a100, dgx_h100, format_description, leaf_spine, switch


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
