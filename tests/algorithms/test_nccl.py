"""NCCL's algorithms: correct for every shape, rail-aligned, NCCL's latencies on the critical path, NCCL's protocols."""

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet.algorithms import ALGORITHMS
from simnet.algorithms.dense import double_binary_tree_parents
from simnet.algorithms.nccl import (
    PROTOCOLS,
    collnet_chain_allreduce,
    collnet_direct_allreduce,
    nccl_ring_all_gather,
    nccl_ring_allreduce,
    nccl_ring_broadcast,
    nccl_ring_reduce,
    nccl_ring_reduce_scatter,
    nccl_tree_allreduce,
    nvls_allreduce,
    nvls_tree_allreduce,
    rail_ring_orders,
)
from simnet.calibration import calibrated_node
from simnet.engine import simulate
from simnet.errors import ScheduleError, SimnetError
from simnet.models.nccl import (NCCL_VERSIONS, algo_time_s, choose, cost_table, graphs_from_network, launch_config,
                                tune_model)
from simnet.network import Network
from simnet.schedule import check
from simnet.topology import Router, cluster, dgx_h100, switch
from simnet.topology import build as build_topology

MIB = 1 << 20
V = NCCL_VERSIONS["2.30.7"]
LL, LL128, SIMPLE = 0, 1, 2
TREE, RING, COLLNET_DIRECT, COLLNET_CHAIN, NVLS, NVLS_TREE = range(6)
NVLINK, NET = 0, 2


@settings(max_examples=40, deadline=None)
@given(g=st.integers(1, 8), nodes=st.integers(1, 6), channels=st.integers(1, 20))
def test_ring_channels_enter_and_leave_every_server_on_one_rail(g, nodes, channels):
    n = g * nodes
    for c, order in enumerate(rail_ring_orders(n, g, channels)):
        assert sorted(order) == list(range(n))
        entry = c % g
        for k in range(nodes):
            assert order[k * g] == k * g + entry
            assert {r // g for r in order[k * g:(k + 1) * g]} == {k}


@settings(max_examples=40, deadline=None)
@given(g=st.integers(2, 8), nodes=st.integers(1, 4), channels=st.integers(1, 20), data=st.data())
def test_ring_channels_leave_every_server_from_a_gpu_of_their_exits(g, nodes, channels, data):
    """With `exits`, each ring still enters at GPU e and visits each server's GPUs once, and leaves from the
    last GPU of the plain order that is in exits[e] (the plain order's last where none is)."""
    exits = [data.draw(st.lists(st.integers(0, g - 1), max_size=3)) for _ in range(g)]
    plain = rail_ring_orders(g * nodes, g, channels)
    for c, (order, before) in enumerate(zip(rail_ring_orders(g * nodes, g, channels, exits), plain)):
        entry, local, was = c % g, [r % g for r in order[:g]], [r % g for r in before[:g]]
        assert local[0] == entry and sorted(local) == list(range(g))
        candidates = [x for x in was[1:] if x in exits[entry]]
        assert local[-1] == (candidates[-1] if candidates else was[-1])
        assert [x for x in local if x != local[-1]] == [x for x in was if x != local[-1]]
        assert order == [k * g + r for k in range(nodes) for r in local]


@settings(max_examples=40, deadline=None)
@given(g=st.integers(1, 8), nodes=st.integers(1, 4), channels=st.integers(1, 20), data=st.data())
def test_ring_channels_enter_at_the_gpus_of_their_entries(g, nodes, channels, data):
    """With `entries`, channel c enters every server at GPU entries[c mod g], and is otherwise the plain ring of
    the channel that entered there."""
    entries = data.draw(st.permutations(range(g)))
    plain = rail_ring_orders(g * nodes, g, g * (1 + channels // g))
    for c, order in enumerate(rail_ring_orders(g * nodes, g, channels, entries=entries)):
        assert order == plain[c - c % g + entries[c % g]]


def test_entries_that_are_not_a_servers_gpus_are_refused():
    for entries in ([0, 1, 2], [0, 0, 1, 2], [0, 1, 2, 4], [True, 0, 2, 3], [0, "1", 2, 3], [0, None, 2, 3]):
        with pytest.raises(ScheduleError) as error:
            nccl_ring_allreduce(8, MIB, gpus_per_node=4, entries=entries)
        assert error.value.path == "entries" and "the 4 GPUs of a server" in error.value.message


ABCI = {"builder": "cluster", "node": "abci_node", "nodes": 4, "fabric": "switch",
        "fabric_params": {"bandwidth": "100 Gbps", "latency": "0.5 us"}}
"""4 ABCI servers: 4 V100 and 2 EDR HCAs each, GPUs 0-1 on NIC 0's PCIe switch, 2-3 on NIC 1's."""


@pytest.mark.parametrize("name", ["nccl_ring", "nccl_tree"])
def test_channels_spread_over_the_nics_as_nccls_search_does(name):
    """Study r26 F5: on ABCI both channels of nccl_ring entered at GPUs 0 and 1 and crossed servers through NIC 0
    (busbw 12.47 GB/s at 64 MiB, NIC 1 idle). NCCL's search starts channel c from NIC c mod 2, at its nearest GPU
    (ncclTopoSearchRecNet, search.cc): channel 1 enters at GPU 2, and two channels use both NICs."""
    net = Network(build_topology(ABCI))
    record = ALGORITHMS[name]
    size = 64 * MIB
    busy = {}
    for channels in (1, 2):
        params = record.resolved(net, size, {"channels": channels, "protocol": "simple"})
        assert params["entries"] == [0, 2, 1, 3]
        trace = simulate(net, record.build(net.size, size, **params))
        links = trace.links()
        busy[channels] = trace.time_s, {nic for nic in ("n0.nic0", "n0.nic1")
                                        if links.loc[(links.src == nic) & (links.dst == "switch"), "load"].max() > 0.1}
    assert busy[1][1] == {"n0.nic0"} and busy[2][1] == {"n0.nic0", "n0.nic1"}
    one_nic = simulate(net, record.build(net.size, size, **{**params, "entries": [0, 1, 2, 3]})).time_s
    assert busy[2][0] < 0.6 * busy[1][0] and busy[2][0] < one_nic / 1.25


def test_the_documented_busbw_of_two_channels_on_abci_is_what_a_run_gives():
    """docs/nccl.md quotes nccl_ring with channels: 2 on 4 ABCI servers at 64 MiB, spread and on NIC 0 alone."""
    from simnet.analysis import busbw_factor

    net = Network(build_topology(ABCI))
    record, size = ALGORITHMS["nccl_ring"], 64 * MIB
    params = record.resolved(net, size, {"channels": 2})
    busbw = {}
    for entries in (params["entries"], [0, 1, 2, 3]):
        time_s = simulate(net, record.build(net.size, size, **{**params, "entries": entries})).time_s
        busbw[tuple(entries)] = f"{size / time_s * busbw_factor('allreduce', net.size) / 1e9:.2f}"
    doc = " ".join((Path(__file__).resolve().parents[2] / "docs" / "nccl.md").read_text().split())
    assert (f"`{{name: nccl_ring, channels: 2}}` reaches busbw {busbw[0, 2, 1, 3]} GB/s, both HCAs busy "
            f"({busbw[0, 1, 2, 3]} GB/s through NIC 0 alone before the channels spread)") in doc


def test_channels_enter_as_before_where_every_gpu_has_its_own_nic():
    """One NIC per GPU (DGX A100, H100, B200): channel c enters at GPU c mod g, and a run records no entries."""
    for preset in ("dgx_a100", "dgx_h100", "dgx_b200"):
        net = Network(cluster(preset, 2, fabric="switch", fabric_params={"bandwidth_Bps": 50e9, "latency_s": 1e-6}))
        assert "entries" not in ALGORITHMS["nccl_ring"].resolved(net, 64 * MIB, {"protocol": "simple"}), preset
    dgx1 = Network(cluster("dgx1", 2, fabric="switch", fabric_params={"bandwidth_Bps": 12.5e9, "latency_s": 1e-6}))
    assert ALGORITHMS["nccl_tree"].resolved(dgx1, MIB, {})["entries"] == [0, 2, 4, 6, 1, 3, 5, 7]


def test_exits_that_do_not_fit_the_servers_are_refused():
    with pytest.raises(ScheduleError) as error:
        nccl_ring_allreduce(16, MIB, gpus_per_node=8, exits=[[1]] * 4)
    assert error.value.path == "exits" and "8 lists" in error.value.message
    with pytest.raises(ScheduleError) as error:
        nccl_ring_allreduce(16, MIB, gpus_per_node=8, exits=[[1]] * 7 + [[8]])
    assert error.value.path == "exits[7]" and "[8]" in error.value.message


@pytest.mark.parametrize("pxn", [False, True])
@pytest.mark.parametrize("name", ["nccl_ring", "nccl_ring_all_gather", "nccl_ring_broadcast"])
def test_nccl_rings_stay_on_their_rails_and_no_spine_oversubscription_slows_them(name, pxn):
    """DGX A100 servers put two GPUs and their two NICs on each PCIe switch. NCCL's search (crossNic 0) ends each
    server's ring at the GPU beside the NIC it entered through, which reaches that NIC over PCIe: every message
    between servers leaves and enters on one rail (no spine on a leaf-per-rail fabric, no NVLink relay), with
    or without PXN, and a 4:1 spine takes nothing from the ring."""
    times = []
    for ratio in ("1:1", "4:1"):
        net = Network(build_topology({"file": "dgx_a100_superpod_slice", "pxn": pxn,
                             "fabric_params": {"oversubscription": ratio}}))
        record = ALGORITHMS[name]
        params = record.resolved(net, 64 * MIB, {"protocol": "simple"})
        assert params["exits"] == [[1], [0], [3], [2], [5], [4], [7], [6]]
        schedule = record.build(net.size, 64 * MIB, **params)
        table = schedule.transfers
        nodes = net.graph.nodes
        between = np.flatnonzero(table.src // 8 != table.dst // 8)
        pairs = {(int(a), int(b)) for a, b in zip(table.src[between], table.dst[between])}
        links = net.links_frame()
        for a, b in pairs:
            hops = [node for link in net.route(a, b) for node in links.loc[link, ["src", "dst"]]]
            assert not any("spine" in str(node) for node in hops), (a, b)
            assert [n for n in hops if nodes[n]["kind"] == "gpu"] == [net.node(a), net.node(b)]
            assert net.exit_rail(a, b) == nodes[net.node(b)]["rail"]
        times.append(simulate(net, schedule).time_s)
    assert times[0] == times[1]


def test_a_gpu_leaves_through_the_nic_of_the_destinations_rail_when_it_shares_its_pcie_switch():
    net = Network(build_topology({"file": "dgx_a100_superpod_slice", "nodes": 2}))
    route = Router(net.graph)
    assert route.path("n0.gpu0", "n1.gpu1")[:3] == ["n0.gpu0", "n0.pcie0", "n0.nic1"]
    assert route.path("n0.gpu0", "n1.gpu2")[:3] == ["n0.gpu0", "n0.pcie0", "n0.nic0"]
    assert (net.exit_rail(0, 9), net.exit_rail(0, 10), net.exit_rail(0, 1)) == (1, 0, None)
    relayed = Network(build_topology({"file": "dgx_a100_superpod_slice", "nodes": 2, "pxn": True}))
    assert Router(relayed.graph).path("n0.gpu0", "n1.gpu2")[:4] == ["n0.gpu0", "n0.nvswitch0", "n0.gpu2", "n0.pcie1"]
    assert relayed.exit_rail(0, 10) is None and relayed.exit_rail(0, 9) == 1


BUILDERS = {
    "nccl_ring": lambda n, size, g, protocol: nccl_ring_allreduce(n, size, gpus_per_node=g, channels=3,
                                                                  protocol=protocol, max_pieces=3),
    "nccl_tree": lambda n, size, g, protocol: nccl_tree_allreduce(n, size, gpus_per_node=g, channels=3,
                                                                  protocol=protocol, max_pieces=3),
    "nvls_tree": lambda n, size, g, protocol: nvls_tree_allreduce(n, size, gpus_per_node=g, max_pieces=3),
    "collnet_direct": lambda n, size, g, protocol: collnet_direct_allreduce(n, size, gpus_per_node=g, max_pieces=3),
    "collnet_chain": lambda n, size, g, protocol: collnet_chain_allreduce(n, size, gpus_per_node=g, max_pieces=3),
}


@pytest.mark.parametrize("name", sorted(BUILDERS))
@settings(max_examples=8, deadline=None)
@given(g=st.integers(1, 4), nodes=st.integers(2, 4), size=st.integers(1, 3 * MIB),
       protocol=st.sampled_from(sorted(PROTOCOLS)))
def test_every_nccl_schedule_computes_the_all_reduce(name, g, nodes, size, protocol):
    schedule = BUILDERS[name](g * nodes, size, g, protocol)
    assert schedule.size_bytes == size
    check(schedule, numeric=size <= 4096)


@settings(max_examples=10, deadline=None)
@given(n=st.integers(2, 9), size=st.integers(1, 4 * MIB))
def test_nvls_computes_the_all_reduce_through_one_switch(n, size):
    schedule = nvls_allreduce(n, size, max_pieces=4)
    assert schedule.switches == (tuple(range(n)),)
    check(schedule, numeric=size <= 4096)


@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
def test_protocols_put_their_lines_on_the_wire(protocol):
    schedule = nccl_ring_allreduce(8, 10 * MIB + 3, protocol=protocol, channels=2)
    table = schedule.transfers
    proto = PROTOCOLS[protocol]
    wire = table.nbytes if table.wire_bytes is None else table.wire_bytes
    assert (wire == -(-table.nbytes // proto.line_payload_bytes) * proto.line_bytes).all()
    assert table.nbytes.max() <= proto.ring_slice_bytes
    assert {"simple": 1.0, "ll": 0.5, "ll128": 120 / 128}[protocol] == float(proto.efficiency)


def _ideal(n: int):
    """A network with no latency and (nearly) no transfer time: only the protocol latencies remain."""
    return Network(switch(n, 1e30, 0.0))


@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
@pytest.mark.parametrize(("g", "nodes"), [(8, 1), (4, 2), (8, 4), (1, 5)])
def test_the_ring_critical_path_carries_nccls_ring_latency(protocol, g, nodes):
    """base + intra per hop inside a server + net per hop between servers, along the 2(p-1) steps of a block.

    A block's 2(p-1) hops around a ring through N servers cross between servers
    2N times at most (NCCL up to 2.22 counted 2N such steps, 2.23+ counts 2(N-1)).
    """
    n = g * nodes
    p = {"ll": LL, "ll128": LL128, "simple": SIMPLE}[protocol]
    base, intra = V.base_latency_us[RING][p], V.hw_latency_us[NVLINK][RING][p]
    net = V.hw_latency_us[NET][TREE if g == 1 else RING][p]
    order = rail_ring_orders(n, g, 1)[0]
    crossings = max(sum(order[(s + i) % n] // g != order[(s + i + 1) % n] // g for i in range(2 * (n - 1)))
                    for s in range(n))
    assert crossings == (0 if nodes == 1 else min(2 * nodes, 2 * (n - 1)))
    expected = base + (2 * (n - 1) - crossings) * intra + crossings * net
    trace = simulate(_ideal(n), nccl_ring_allreduce(n, 64, gpus_per_node=g, protocol=protocol, channels=2))
    assert trace.time_s * 1e6 == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
@pytest.mark.parametrize(("g", "nodes"), [(8, 1), (4, 2), (8, 4), (2, 8), (4, 6)])
def test_the_tree_critical_path_carries_nccls_tree_latency(protocol, g, nodes):
    """base + 2(chain hops x intra + tree depth x net); NCCL's model takes floor(log2 N) for the depth."""
    n = g * nodes
    p = {"ll": LL, "ll128": LL128, "simple": SIMPLE}[protocol]
    base, intra, net = V.base_latency_us[TREE][p], V.hw_latency_us[NVLINK][TREE][p], V.hw_latency_us[NET][TREE][p]
    parents = double_binary_tree_parents(nodes)[0]
    depth = max(_depth(parents, node) for node in range(nodes))
    assert depth == math.ceil(math.log2(nodes))
    expected = base + 2 * ((g - 1) * intra + depth * net)
    trace = simulate(_ideal(n), nccl_tree_allreduce(n, 64, gpus_per_node=g, protocol=protocol, channels=1))
    assert trace.time_s * 1e6 == pytest.approx(expected, rel=1e-9)


def _depth(parents, node):
    depth = 0
    while parents[node] is not None:
        node, depth = parents[node], depth + 1
    return depth


def test_tree_channels_alternate_nccls_two_trees():
    schedule = nccl_tree_allreduce(16, 4 * MIB, gpus_per_node=2, channels=2, max_pieces=1)
    table = schedule.transfers
    first, second = double_binary_tree_parents(8)
    for channel, parents in ((0, first), (1, second)):
        heads = {(int(s), int(d)) for s, d, stage, ch in zip(table.src, table.dst, table.stage, table.channel)
                 if schedule.transfers.stages[stage] == "reduce" and s // 2 != d // 2 and ch // 2 == channel}
        assert heads == {(node * 2 + channel, parent * 2 + channel) for node, parent in enumerate(parents)
                         if parent is not None}


@pytest.mark.parametrize("version", ["2.18.5", "2.20.5", "2.30.7"])
def test_the_nvls_critical_path_carries_nccls_nvls_latency(version):
    """NVLS's latency is baseLat in 2.18 (23 us) and hwLat[NVLink] from 2.19 (23 us, then 25 us)."""
    graph = switch(8, 1e30, 0.0)
    graph.nodes["switch"]["reduce"] = True
    constants = NCCL_VERSIONS[version]
    expected = constants.base_latency_us[NVLS][SIMPLE] + constants.hw_latency_us[NVLINK][NVLS][SIMPLE]
    trace = simulate(Network(graph), nvls_allreduce(8, 64, version=version))
    assert trace.time_s * 1e6 == pytest.approx(expected, rel=1e-9)
    assert expected in (23.0, 25.0)


def test_nvls_tree_splits_every_heads_part_between_nccls_two_trees():
    """NCCL's NVLS channel c serves all heads over tree c mod 2 (connectNvls, src/graph/connect.cc)."""
    g, nodes = 2, 4
    schedule = nvls_tree_allreduce(g * nodes, 4 * MIB, gpus_per_node=g, max_pieces=4)
    table = schedule.transfers
    stages = np.asarray(table.stages)[table.stage]
    first, second = double_binary_tree_parents(nodes)
    for head in range(g):
        edges = {(int(s) // g, int(d) // g) for s, d, stage in zip(table.src, table.dst, stages)
                 if stage == "tree_reduce" and s % g == head}
        assert edges == {(node, parent) for parents in (first, second) for node, parent in enumerate(parents)
                         if parent is not None}


def nvls_node() -> Network:
    """One DGX H100 at NCCL's effective NVLink rate; its NVSwitch reduces at 85 % (the template's NVLS)."""
    return Network(calibrated_node("dgx_h100"))


def test_nvls_runs_through_the_nvswitch_at_its_efficiency():
    """Each GPU sends S + S/p up and gets S down: busbw ≤ 2(p-1)/(p+1) x port x efficiency (pipeline fill aside)."""
    net = nvls_node()
    size = 1 << 30
    trace = simulate(net, nvls_allreduce(8, size, max_pieces=64))
    assert net.node(int(trace.ranks[-1])) == "nvswitch0"
    port = 18 * 20.6e9
    busbw = size / trace.time_s * 2 * 7 / 8
    bound = 2 * 7 / 9 * port * 0.85
    assert 0.95 * bound < busbw < bound


def test_the_ring_runs_at_the_nvlink_rate_on_a_dgx_h100():
    net = nvls_node()
    size = 1 << 30
    trace = simulate(net, nccl_ring_allreduce(8, size, channels=8))
    busbw = size / trace.time_s * 2 * 7 / 8
    assert busbw == pytest.approx(18 * 20.6e9, rel=0.01)
    assert busbw <= 18 * 20.6e9


def test_protocol_auto_and_nccl_follow_nccls_cost_table():
    net = nvls_node()
    tuning = tune_model(*graphs_from_network(net, "2.30.7"), "2.30.7")
    for size in (8, 64 << 10, 4 * MIB, 256 * MIB):
        table = cost_table(tuning, "allreduce", size)
        ring = ALGORITHMS["nccl_ring"].resolve(net, size, {"protocol": "auto"})
        assert table[("ring", ring["protocol"])] == min(table[("ring", p)] for p in ("ll", "ll128", "simple"))
        pick = choose(tuning, "allreduce", size)
        nccl = ALGORITHMS["nccl"].resolve(net, size, {})
        assert nccl["nccl_algorithm"] == pick.algorithm
        schedule = ALGORITHMS["nccl"].build(8, size, **nccl)
        assert schedule.params["nccl_algorithm"] == pick.algorithm
        assert ALGORITHMS["nccl"].predict(_costs(net), 8, size, **nccl) == pytest.approx(pick.time_s, rel=1e-12)


def test_nccls_algorithms_take_nccls_protocol_and_channels_unless_given():
    """As NCCL with only NCCL_ALGO set: on a network NCCL's model covers, a ring or tree given no protocol runs the
    protocol NCCL's cost table prefers at that size (LL at 1 KiB on a DGX H100, Simple at 256 MiB) and NCCL's
    channels; without the model (a plain switch) Simple on 2 channels; a protocol given is kept."""

    net = nvls_node()
    tuning = tune_model(*graphs_from_network(net, "2.30.7"), "2.30.7")
    for name, nccl_name in (("nccl_ring", "ring"), ("nccl_tree", "tree")):
        for size, expected in ((1024, "ll"), (256 * MIB, "simple")):
            table = cost_table(tuning, "allreduce", size)
            resolved = ALGORITHMS[name].resolve(net, size, {})
            assert resolved["protocol"] == expected == min(("ll", "ll128", "simple"),
                                                           key=lambda p: table[(nccl_name, p)])
            assert resolved["channels"] == launch_config(tuning, "allreduce", nccl_name, expected, size)[0]
        assert ALGORITHMS[name].resolve(net, 1024, {"protocol": "simple"})["protocol"] == "simple"
        plain = ALGORITHMS[name].resolve(Network(switch(8, 25e9, 1e-6)), 1024, {})
        assert (plain["protocol"], plain["channels"]) == ("simple", 2)


def test_nccl_runs_ring_where_the_topology_has_no_nvls_also_in_a_sweep():
    """`nccl` on a DGX H100 built with nvls=False: NCCL's choice is the ring at 64 MiB (where with NVLS it picks
    NVLS) and the run succeeds; a sweep over topology.nvls runs both points, each with its own choice."""
    from simnet.scenario import parse_scenario, run

    data = {"name": "nvls_off", "topology": {"builder": "dgx_h100", "nvls": False},
            "collective": {"op": "allreduce", "algorithms": ["nccl"]}, "sizes": ["64 MiB"]}
    off = run(parse_scenario(data))
    assert [json.loads(r)["nccl_algorithm"] for r in off["resolved"]] == ["ring"]
    swept = run(parse_scenario({**data, "sweep": {"grid": {"topology.nvls": [True, False]}}}))
    assert [json.loads(r)["nccl_algorithm"] for r in swept["resolved"]] == ["nvls", "ring"]
    assert swept["sim_time_s"].iloc[1] == off["sim_time_s"].iloc[0]


def test_the_schedules_that_reduce_in_a_switch_are_the_ones_named_so():
    """SWITCH_SCHEDULES, which tune checks against the topology before simulating, are exactly NCCL's
    schedules with switch groups (every one of them is built, so one left off the list fails)."""
    from simnet.algorithms.nccl import NCCL_NAMES, SWITCH_SCHEDULES

    assert set(SWITCH_SCHEDULES) <= set(NCCL_NAMES)
    for name in NCCL_NAMES:
        params = {} if name == "nvls" else {"gpus_per_node": 4}
        schedule = ALGORITHMS[name].build(8, MIB, max_pieces=1, **params)
        assert bool(schedule.switches) == (name in SWITCH_SCHEDULES), name


def _costs(net):
    from simnet.models import NetworkCosts

    return NetworkCosts(net)


def test_the_model_of_an_nccl_record_is_nccls_own():
    net = nvls_node()
    tuning = tune_model(*graphs_from_network(net, "2.30.7"), "2.30.7")
    for protocol in ("ll", "ll128", "simple"):
        assert ALGORITHMS["nccl_ring"].predict(_costs(net), 8, 4 * MIB, protocol=protocol) == pytest.approx(
            algo_time_s(tuning, "allreduce", "ring", protocol, 4 * MIB), rel=1e-12)
    assert math.isnan(ALGORITHMS["nccl_ring"].predict(_costs(Network(switch(4, 1e9, 1e-6))), 4, 4096))


def test_channels_follow_nccls_launch_configuration_when_not_given():
    net = nvls_node()
    small, large = (ALGORITHMS["nccl_ring"].resolve(net, size, {"protocol": "simple"})["channels"]
                    for size in (4096, 1 << 30))
    assert 1 <= small < large


@pytest.mark.parametrize(
    ("build", "path"),
    [
        (lambda: nccl_ring_allreduce(8, 100, protocol="ll64"), "protocol"),
        (lambda: nccl_ring_allreduce(8, 100, gpus_per_node=3), "gpus_per_node"),
        (lambda: nccl_ring_allreduce(8, 100, channels=0), "channels"),
        (lambda: nvls_tree_allreduce(8, 100, gpus_per_node=8), "gpus_per_node"),
        (lambda: collnet_direct_allreduce(8, 100, gpus_per_node=4, heads=5), "heads"),
    ],
)
def test_bad_parameters_name_themselves(build, path):
    with pytest.raises(ScheduleError) as raised:
        build()
    assert raised.value.path == path


def test_channels_and_stages_are_separate_connections():
    schedule = nvls_allreduce(4, 4 * MIB, max_pieces=2)
    table = schedule.transfers
    stages = np.asarray(table.stages)[table.stage]
    assert set(table.channel[stages == "reduce"]) .isdisjoint(set(table.channel[stages == "multicast"]))


PHASES = {"all_gather": nccl_ring_all_gather, "reduce_scatter": nccl_ring_reduce_scatter}


def _ring_path_us(protocol: str, g: int, ranks: list[int]) -> float:
    """NCCL's ring base latency plus, per hop along `ranks`, its intra- or inter-server hop latency (µs)."""
    p = {"ll": LL, "ll128": LL128, "simple": SIMPLE}[protocol]
    crossings = sum(a // g != b // g for a, b in zip(ranks, ranks[1:]))
    return (V.base_latency_us[RING][p] + (len(ranks) - 1 - crossings) * V.hw_latency_us[NVLINK][RING][p]
            + crossings * V.hw_latency_us[NET][RING][p])


@pytest.mark.parametrize("collective", sorted(PHASES))
@pytest.mark.parametrize(("g", "nodes"), [(8, 1), (4, 2), (2, 3)])
@pytest.mark.parametrize("size", [5, 1000, 3 * MIB + 7])
@pytest.mark.parametrize("channels", [1, 3])
def test_the_ring_phases_compute_their_collective_with_each_rank_at_its_offset(collective, g, nodes, size, channels):
    """Rank r contributes (all-gather) or receives (reduce-scatter) part r of the buffer; p - 1 shares cross per rank."""
    n = g * nodes
    schedule = PHASES[collective](n, size, gpus_per_node=g, channels=channels)
    assert schedule.collective == collective
    check(schedule, numeric=True)
    shares = np.array([len(range(size)[r::n]) for r in range(n)])
    owners = np.array(schedule.owners)
    assert (np.diff(owners) >= 0).all()
    assert [sum(b for b, o in zip(schedule.chunk_bytes, owners) if o == r) for r in range(n)] == sorted(shares)[::-1]
    assert schedule.total_bytes == (n - 1) * size


@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
@pytest.mark.parametrize(("g", "nodes"), [(8, 1), (4, 2), (8, 4)])
def test_the_ring_phases_carry_nccls_ring_latency_over_p_minus_1_steps(protocol, g, nodes):
    """base + intra per hop inside a server + net per hop between servers, along the p - 1 steps of a block."""
    n = g * nodes
    order = rail_ring_orders(n, g, 1)[0]
    expected = max(_ring_path_us(protocol, g, [order[(s + i) % n] for i in range(n)]) for s in range(n))
    for build in PHASES.values():
        trace = simulate(_ideal(n), build(n, 64 * n, gpus_per_node=g, protocol=protocol, channels=2))
        assert trace.time_s * 1e6 == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("collective", sorted(PHASES))
def test_the_ring_phases_are_priced_by_nccls_model_of_their_collective(collective):
    """The scenario size (gathered result, or input per rank) is the byte count NCCL's model takes."""
    from simnet.scenario import _nccl_references

    net = nvls_node()
    tuning = tune_model(*graphs_from_network(net, "2.30.7"), "2.30.7")
    record = ALGORITHMS[f"nccl_ring_{collective}"]
    for size in (64 << 10, 256 * MIB):
        resolved = record.resolve(net, size, {"protocol": "auto"})
        table = cost_table(tuning, collective, size)
        assert table[("ring", resolved["protocol"])] == min(table[("ring", p)] for p in ("ll", "ll128", "simple"))
        predicted = record.predict(_costs(net), 8, size, **resolved)
        assert predicted == pytest.approx(algo_time_s(tuning, collective, "ring", resolved["protocol"], size),
                                          rel=1e-12)
        assert predicted < ALGORITHMS["nccl_ring"].predict(_costs(net), 8, size, protocol=resolved["protocol"])
        choice, time_s, latency_s = _nccl_references(net, collective, [size])[size]
        assert choice == f"ring/{resolved['protocol']}" and time_s == pytest.approx(predicted, rel=1e-12)
        assert 0 < latency_s < time_s


@pytest.mark.parametrize("collective", sorted(PHASES))
def test_nccls_own_choice_for_all_gather_and_reduce_scatter_is_built_where_it_is_a_ring(collective):
    net = nvls_node()
    tuning = tune_model(*graphs_from_network(net, "2.30.7"), "2.30.7")
    record = ALGORITHMS[f"nccl_{collective}"]
    for size in (64 << 10, 4 * MIB, 256 * MIB):
        pick = choose(tuning, collective, size)
        params = record.resolve(net, size, {})
        assert (params["nccl_algorithm"], params.get("protocol", "simple")) == (pick.algorithm, pick.protocol) == (
            "ring", params["protocol"])
        schedule = record.build(8, size, **params)
        assert schedule.algorithm == f"nccl_{collective}" and schedule.params["nccl_algorithm"] == "ring"
        check(schedule)
        assert record.predict(_costs(net), 8, size, **params) == pytest.approx(pick.time_s, rel=1e-12)
    with pytest.raises(ScheduleError, match="as ring or pat"):
        record.build(8, MIB, nccl_algorithm="nvls")


CHAINS = {"broadcast": nccl_ring_broadcast, "reduce": nccl_ring_reduce}


@pytest.mark.parametrize("collective", sorted(CHAINS))
@pytest.mark.parametrize(("g", "nodes"), [(8, 1), (4, 2)])
@pytest.mark.parametrize("root", [0, 5])
@pytest.mark.parametrize("size", [3, 1000, 3 * MIB + 7])
def test_the_ring_chains_compute_their_collective_once_around_the_ring(collective, g, nodes, root, size):
    """Every byte crosses p - 1 hops, leaving the root (broadcast) or ending at it (reduce)."""
    n = g * nodes
    schedule = CHAINS[collective](n, size, root=root, gpus_per_node=g, channels=3)
    assert schedule.collective == collective and schedule.root == root
    check(schedule, numeric=True)
    assert schedule.total_bytes == (n - 1) * size
    table = schedule.transfers
    ends = table.src if collective == "broadcast" else table.dst
    assert (table.dst != root).all() if collective == "broadcast" else (table.src != root).all()
    assert root in set(ends.tolist())


@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
@pytest.mark.parametrize(("g", "nodes"), [(8, 1), (4, 2)])
def test_the_ring_chains_carry_nccls_ring_latency_over_p_minus_1_hops(protocol, g, nodes):
    n = g * nodes
    order = rail_ring_orders(n, g, 1)[0]
    chains = {"broadcast": order, "reduce": order[1:] + order[:1]}
    for collective, build in CHAINS.items():
        expected = _ring_path_us(protocol, g, chains[collective])
        trace = simulate(_ideal(n), build(n, 64, gpus_per_node=g, protocol=protocol, channels=1))
        assert trace.time_s * 1e6 == pytest.approx(expected, rel=1e-9), collective


@pytest.mark.parametrize("collective", sorted(CHAINS))
def test_nccls_broadcast_and_reduce_follow_its_model(collective):
    net = nvls_node()
    tuning = tune_model(*graphs_from_network(net, "2.30.7"), "2.30.7")
    record = ALGORITHMS[f"nccl_{collective}"]
    for size in (64 << 10, 64 * MIB):
        pick = choose(tuning, collective, size)
        params = record.resolve(net, size, {"root": 2})
        assert (params["nccl_algorithm"], params["protocol"], params["root"]) == ("ring", pick.protocol, 2)
        schedule = record.build(8, size, **params)
        assert schedule.root == 2 and schedule.algorithm == f"nccl_{collective}"
        assert record.predict(_costs(net), 8, size, **params) == pytest.approx(pick.time_s, rel=1e-12)


@pytest.mark.parametrize("name", ["collnet_direct", "collnet_chain"])
@pytest.mark.parametrize("pxn", [False, True])
def test_collnet_reduces_each_rail_in_its_own_leaf_and_uses_every_nic(name, pxn):
    graph = cluster("dgx_h100", 2, pxn=pxn, fabric="leaf_spine",
                    fabric_params={"leaves": 8, "spines": 2, "hosts_per_leaf": 2, "bandwidth_Bps": 50e9,
                                   "latency_s": 1e-6, "sharp": True})
    net = Network(graph)
    schedule = ALGORITHMS[name].build(16, 16 * MIB, gpus_per_node=8)
    heads = [net.node(group[0]) for group in schedule.switches]
    leaves = [net.reduction_switch(list(group)) for group in schedule.switches]
    assert leaves == [f"leaf{graph.nodes[head]['rail']}" for head in heads]
    links = simulate(net, schedule).links()
    carried = links.groupby(["src", "dst"])["bytes"].sum()
    up = [carried.get((f"n{s}.nic{r}", f"leaf{r}"), 0) for s in range(2) for r in range(8)]
    assert min(up) == max(up) > 0


def _sharp_cluster(hosts_per_leaf: int, leaves: int, nodes: int = 8) -> Network:
    """`nodes` DGX H100 on a rail-optimised SHARP leaf-spine of ``leaves / 8`` leaves per rail (rail ``r`` on
    leaves ``r·leaves/8 ...``, `hosts_per_leaf` servers each) and 4 spines."""
    return Network(cluster("dgx_h100", nodes, pxn=True, fabric="leaf_spine",
                           fabric_params={"leaves": leaves, "hosts_per_leaf": hosts_per_leaf, "spines": 4,
                                          "parallel": max(1, hosts_per_leaf // 4), "bandwidth_Bps": 50e9,
                                          "latency_s": 1e-6, "sharp": True}))


@pytest.mark.parametrize("name", ["collnet_direct", "collnet_chain"])
def test_collnet_over_two_leaves_per_rail_sums_in_each_leaf_and_sends_one_stream_up(name):
    """SHARP's aggregation tree (new-user study F5): with a rail over two leaves, each leaf sums its four heads and
    sends one stream to the spine, so a leaf's uplinks carry S/8 (part of one rail) each way, not 4 x S/8, and the
    all-reduce is about as fast as on one leaf per rail (it was 6x slower)."""
    size = 64 * MIB
    record = ALGORITHMS[name]
    one, two = _sharp_cluster(8, 8), _sharp_cluster(4, 16)
    params = record.resolved(two, size, {})
    assert params["leaf_servers"] == [4, 4] and "leaf_servers" not in record.resolved(one, size, {})
    schedule = record.build(64, size, **params)
    check(schedule)
    endpoints, efficiency = two.place(range(64), schedule.switches)
    placed = [two.node(int(e)) for e in endpoints[64:]]
    assert all(node.startswith("spine") for node in placed[:8])
    assert [(group[0] // 8, group[0] % 8, len(group)) for group in schedule.switches[8:]] == [
        (server, rail, 4) for server in (0, 4) for rail in range(8)]
    assert placed[8:] == [f"leaf{2 * rail + server // 4}" for server in (0, 4) for rail in range(8)]
    trace = simulate(two, schedule)
    links = trace.links()
    fabric = links[links["src"].str.startswith(("leaf", "spine")) & links["dst"].str.startswith(("leaf", "spine"))]
    carried = fabric.groupby(["src", "dst"])["bytes"].sum()
    part = size / 8 / min(efficiency[64:])
    for leaf in range(16):
        assert carried[[key for key in carried.index if key[0] == f"leaf{leaf}"]].sum() == pytest.approx(part)
        assert carried[[key for key in carried.index if key[1] == f"leaf{leaf}"]].sum() == pytest.approx(part)
    flat = simulate(one, record.build(64, size, **record.resolved(one, size, {}))).time_s
    assert flat <= trace.time_s <= 1.05 * flat


def test_collnet_over_one_leaf_per_rail_is_the_schedule_it_was():
    """Where every rail sums in one switch, the resolver adds nothing and one leaf builds the very same transfers."""
    net = _sharp_cluster(4, 8, nodes=4)
    for name in ("collnet_direct", "collnet_chain"):
        params = ALGORITHMS[name].resolved(net, MIB, {})
        assert "leaf_servers" not in params
        flat = ALGORITHMS[name].build(32, MIB, **params)
        assert flat.switches == tuple(tuple(range(h, 32, 8)) for h in range(8))
        same = ALGORITHMS[name].build(32, MIB, **params, leaf_servers=[4])
        assert same.switches == flat.switches
        assert all(np.array_equal(a, b) for a, b in zip(same.columns, flat.columns))


def test_collnets_leaves_follow_a_communicators_servers():
    """A job on servers 2..5 of leaves of four servers per rail sums servers 2-3 and 4-5 in their leaves."""
    net = _sharp_cluster(4, 16)
    members = list(range(16, 48))
    params = ALGORITHMS["collnet_direct"].resolved(net, MIB, {}, ranks=members)
    assert params["leaf_servers"] == [2, 2]
    assert net.aggregation_switches(members[::8]) == ["leaf0", "leaf0", "leaf1", "leaf1"]


@pytest.mark.parametrize("leaf_servers", [[3], [2, 0, 2], 4, ["2", "2"]])
def test_collnet_refuses_leaves_that_do_not_add_up_to_its_servers(leaf_servers):
    with pytest.raises(ScheduleError, match="must be a list of server counts") as raised:
        collnet_direct_allreduce(32, MIB, gpus_per_node=8, leaf_servers=leaf_servers)
    assert raised.value.path == "leaf_servers"


@pytest.mark.parametrize("name,collective", [("nccl", "allreduce"), ("nccl_all_gather", "all_gather")])
def test_nccls_choice_is_that_of_the_release_asked_for(name, collective):
    """``version`` picks the release whose model decides, and the schedule is built with that release's
    constants: on 2 DGX H100 at 1 MiB, 2.21.5 and 2.30.7 choose differently for the all-reduce."""
    from simnet.models.nccl import network_tuning

    net = Network(cluster("dgx_h100", 2, fabric="switch", fabric_params={"bandwidth_Bps": 50e9, "latency_s": 1e-6},
                          pxn=True))
    chosen = ALGORITHMS[name]
    picks = {}
    for version in ("2.21.5", "2.30.7"):
        params = chosen.resolved(net, MIB, {"version": version})
        pick = choose(network_tuning(net, version), collective, MIB)
        assert (params["nccl_algorithm"], params.get("protocol", "simple")) == (pick.algorithm, pick.protocol)
        assert params["version"] == version
        schedule = chosen.build(16, MIB, **params)
        assert schedule.params["version"] == version
        picks[version] = pick.algorithm
    if collective == "allreduce":
        assert picks["2.21.5"] != picks["2.30.7"]


def test_a_scenario_asks_nccl_of_a_release():
    """``{name: nccl, version: ...}`` in a scenario runs that release's choice (it was refused as unknown)."""
    import json

    from simnet.models.nccl import network_tuning
    from simnet.scenario import expand, parse_scenario, run_point

    scenario = parse_scenario({
        "name": "releases", "sizes": ["1 MiB"],
        "topology": {"builder": "cluster", "node": "dgx_h100", "nodes": 2, "fabric": "switch", "pxn": True,
                     "fabric_params": {"bandwidth": "50 GB/s", "latency": "1 us"}},
        "collective": {"op": "allreduce", "algorithms": ["nccl", {"name": "nccl", "version": "2.21.5"}]},
    })
    rows = run_point(expand(scenario)[0])
    assert [json.loads(text).get("version") for text in rows["params"]] == [None, "2.21.5"]
    picks = [json.loads(text)["nccl_algorithm"] for text in rows["resolved"]]
    net = expand(scenario)[0].scenario.built_network()
    assert picks == [choose(network_tuning(net, version), "allreduce", MIB).algorithm
                     for version in ("2.30.7", "2.21.5")]
    assert picks[0] != picks[1]


@pytest.mark.parametrize("params,path,message", [
    ({"version": "2.17.1"}, "version", "unknown NCCL release '2.17.1'; known: 2.18.3, "),
    ({"nccl_algorithm": "NVLS"}, "nccl_algorithm",
     "unknown algorithm 'NVLS' (simnet builds NCCL's allreduce as: ring, tree, nvls, "),
])
def test_nccl_names_an_unknown_release_or_a_forced_algorithm_it_does_not_know(params, path, message):
    """Not 'NCCL's choice needs NCCL's model of the topology' nor 'NCCL chose ...': the user's value is wrong."""
    net = Network(cluster("dgx_h100", 1, fabric="switch", fabric_params={"bandwidth_Bps": 50e9, "latency_s": 1e-6}))
    with pytest.raises(SimnetError) as error:
        ALGORITHMS["nccl"].resolved(net, MIB, params)
    assert error.value.path == path and error.value.message.startswith(message)


def test_the_documented_gap_of_forced_ll_at_large_sizes_is_what_a_run_gives():
    """docs/nccl.md quotes forced Ring/LL on 2 x DGX H100 at 256 MiB, simulated (no per-channel LL cap) and in
    NCCL's model (capped at llMaxBw): both numbers come from this run, and the gap is the documented one."""
    from pathlib import Path

    from simnet.scenario import parse_scenario, run
    from simnet.units import format_time

    scenario = parse_scenario({
        "name": "ll_large", "topology": {"file": "dgx_h100_ndr_32", "nodes": 2},
        "collective": {"op": "allreduce", "algorithms": [{"name": "nccl_ring", "protocol": "ll", "channels": 16}]},
        "sizes": ["256 MiB"]})
    [row] = run(scenario).to_dict("records")
    doc = (Path(__file__).resolve().parents[2] / "docs" / "nccl.md").read_text()
    quoted = (f"at 256 MiB takes {format_time(row['sim_time_s'])} simulated against {format_time(row['model_time_s'])} "
              "in NCCL's model")
    assert quoted in " ".join(doc.split()), quoted
    assert row["sim_time_s"] < row["model_time_s"] / 4


_ESTIMATED = ["nccl_ring", "nccl_tree", "nvls_tree", "collnet_direct", "collnet_chain", "nccl_ring_all_gather",
              "nccl_ring_reduce_scatter", "nccl_ring_broadcast", "nccl_ring_reduce", "nccl_pat_all_gather",
              "nccl_pat_reduce_scatter"]


@pytest.mark.parametrize("name", _ESTIMATED)
@pytest.mark.parametrize("size", [4096, 2**20, 48 * 2**20 + 7, 2**28])
def test_the_memory_estimate_follows_the_size(name, size):
    """Study r23: the estimate charged max_pieces pieces per block at every size, 64x the 520,192 transfers of
    nccl_ring on 16 DGX H100 at 1 GiB, and refused runs that fit. It now bounds the schedule within 4x (PAT's
    aggregation, which it does not count, within 8x) at every size."""
    record = ALGORITHMS[name]
    gpus = 1 if "pat" in name else 8
    for extra in ({"protocol": "simple", "channels": 4}, {"protocol": "ll", "channels": 2},
                  {"protocol": "ll128", "channels": 8}):
        params = {key: value for key, value in {"gpus_per_node": gpus, **extra}.items()
                  if key in {parameter.name for parameter in record.parameters}}
        built = len(record.build(32, size, **params))
        assert built <= record.transfers(32, size, params) <= (8 if "pat" in name else 4) * built, extra


_HEAD_CASES = [(name, nranks, extra) for name in ("nvls_tree", "collnet_direct", "collnet_chain")
               for nranks, extra in ((16, {}), (32, {}), (64, {"heads": 2}), (256, {}))]


@pytest.mark.parametrize("name,nranks,extra", [*_HEAD_CASES, ("collnet_direct", 64, {"leaf_servers": [3, 1, 4]}),
                                               ("collnet_chain", 64, {"leaf_servers": [2, 2, 2, 2]})])
def test_the_memory_estimate_of_head_schedules_counts_their_messages(name, nranks, extra):
    """The estimate charged 6 p messages per chunk; NVLSTree sends 2 p + 3 s - 2 and CollNet at most 2 p + s over s
    servers, so at 512 DGX H100 it was 2.5-3x the schedule. It now bounds it within 10 %."""
    record = ALGORITHMS[name]
    params = {"gpus_per_node": 8, **extra}
    for size in (2**20, 2**26 + 5, 2**30):
        built = len(record.build(nranks, size, **params))
        assert built <= record.transfers(nranks, size, params) <= 1.1 * built, size


def test_the_memory_estimate_of_nccls_ring_on_16_dgx_h100_is_its_transfer_count():
    network = build_topology({"file": "dgx_h100_ndr_32", "nodes": 16})
    record = ALGORITHMS["nccl_ring"]
    resolved = record.resolved(Network(network), 2**30, {})
    assert resolved["channels"] == 16 and resolved["protocol"] == "simple"
    assert record.transfers(128, 2**30, resolved) == 2 * 127 * 16 * 128 == 520_192


@pytest.mark.parametrize("version,per_rank_bytes,picked", [
    ("2.26.2", 579_600, "nvls"), ("2.23.4", 579_600, "nvls"), ("2.19.1", 300_000, "nvls"),
    ("2.26.2", 1 << 20, "ring"), ("2.21.5", 579_600, "ring"), ("2.27.3", 579_600, "ring"), ("2.30.7", 579_600, "ring"),
])
def test_nccls_all_gather_on_one_h100_server_is_ring_except_a_band_of_older_releases(version, per_rank_bytes, picked):
    """Study r25 finding 3: docs/nccl.md said Ring at every size; 2.26.2 picks NVLS at 579600 B per rank
    (nccl#1906's row), as the doc now says release by release."""
    from simnet.models.nccl import choose, network_tuning

    tuning = network_tuning(Network(dgx_h100()), version)
    for collective in ("all_gather", "reduce_scatter"):
        assert choose(tuning, collective, 8 * per_rank_bytes).algorithm == picked
    doc = " ".join((Path(__file__).resolve().parents[2] / "docs" / "nccl.md").read_text().split())
    assert "576-595 kB per rank with 2.23-2.26" in doc and "every size with 2.21-2.22 and from 2.27 on" in doc


def test_nccls_choice_simnet_does_not_build_names_the_release_and_size_and_a_way_out():
    """Study r25 finding 3: the error names NCCL's release and the size and says what to pin; in a run over
    sizes only that size fails."""
    from simnet.scenario import expand, parse_scenario, point_tables

    net = Network(dgx_h100())
    with pytest.raises(SimnetError) as error:
        ALGORITHMS["nccl_all_gather"].resolved(net, 8 * 579_600, {"version": "2.26.2"})
    assert error.value.path == "nccl_algorithm"
    assert error.value.message.startswith("NCCL 2.26.2 chose 'nvls' at 4.637 MB, which simnet does not build for "
                                          "all_gather (it builds ring and pat); give nccl_algorithm: ring (or list "
                                          "nccl_ring_all_gather)")
    assert ALGORITHMS["nccl_all_gather"].resolved(net, 8 * 579_600, {"version": "2.26.2", "nccl_algorithm": "ring"})
    [point] = expand(parse_scenario({
        "name": "band", "topology": "dgx_h100",
        "collective": {"op": "all_gather", "algorithms": [{"name": "nccl_all_gather", "version": "2.26.2"}]},
        "sizes": ["4636800 B", "1 MiB"]}))
    tables = point_tables(point)
    assert [row["size_bytes"] for row in tables["rows"]] == [1 << 20]
    assert [failure["sizes"] for failure in tables["failed"]] == ["4.637 MB"]
