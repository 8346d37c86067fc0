"""Tests of simnet.network: ranks, links, routes and tier efficiency."""

import pytest

from simnet.errors import SimnetError
from simnet.network import Network
from simnet.topology import switch

B = 12.5e9
LAT = 1e-6


def test_tier_efficiency_scales_bandwidth_and_is_validated():
    graph = switch(2, B, LAT, tier="nvlink")
    net = Network(graph, tier_efficiency={"nvlink": 0.8})
    assert net.bandwidth_Bps.tolist() == [0.8 * B] * 4
    assert net.links_frame()["efficiency"].tolist() == [0.8] * 4
    assert graph.edges["gpu0", "switch"]["bandwidth_Bps"] == B
    assert net.transfer_time_s(0, 1, 2**20) == pytest.approx(2 * LAT + 2**20 / (0.8 * B), rel=1e-12)
    with pytest.raises(SimnetError, match="no tier 'ib'") as info:
        Network(graph, tier_efficiency={"ib": 0.5})
    assert info.value.path == "tier_efficiency.ib"
    for bad in (0, 1.5, -1, "x", True):
        with pytest.raises(SimnetError, match=r"\(0, 1\]"):
            Network(graph, tier_efficiency={"nvlink": bad})


def test_ranks_links_and_routes_follow_the_graph():
    net = Network(switch(3, B, LAT))
    assert net.size == 3 and net.ranks == ("gpu0", "gpu1", "gpu2")
    route = net.route(0, 2)
    assert route == (net.link("gpu0", "switch"), net.link("switch", "gpu2"))
    assert net.route(1, 1) == ()
    assert net.transfer_time_s(0, 2, 1000) == 2 * LAT + 1000 / B
    with pytest.raises(SimnetError, match="does not exist"):
        net.route(0, 3)
