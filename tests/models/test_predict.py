"""predict(): the registered closed forms against the simulator, and BlueConnect on a DGX-style cluster."""

import inspect
import json
import math

import pytest

from simnet.algorithms import ALGORITHMS
from simnet.algorithms.dense import binomial_tree_time, recursive_doubling_time, ring_allreduce_time
from simnet.algorithms.hierarchical import blueconnect_levels, blueconnect_time, halving_doubling_time
from simnet.engine import simulate
from simnet.models import NetworkCosts, critical_path_time, predict
from simnet.links import LINK_MODELS
from simnet.network import Network
from simnet.topology import switch
from tests.algorithms.fabrics import dgx_cluster
from tests.algorithms.test_dense import HIERARCHICAL
from tests.algorithms.test_hierarchy import default_factors

ALPHA_s = 2e-6
BETA_s_per_byte = 1 / 12.5e9
SIZES = [2**10, 2**14, 2**20, 2**26, 2**30]
SWITCH16 = Network(switch(16, 12.5e9, 1e-6))
CLOSED = {
    "ring": lambda p, n: ring_allreduce_time(p, n, ALPHA_s, BETA_s_per_byte),
    "recursive_doubling": lambda p, n: recursive_doubling_time(p, n, ALPHA_s, BETA_s_per_byte),
    "halving_doubling": lambda p, n: halving_doubling_time(p, n, ALPHA_s, BETA_s_per_byte),
}


@pytest.mark.parametrize("link_model", sorted(LINK_MODELS))
@pytest.mark.parametrize("name", sorted(CLOSED))
@pytest.mark.parametrize("size", SIZES)
def test_closed_forms_equal_the_simulation_on_a_switch(name, size, link_model):
    """switch(16, 12.5 GB/s, 1 us): every step is contention-free, so simulation = closed form."""
    simulated = simulate(SWITCH16, ALGORITHMS[name].builder(16, size), model=link_model).time_s
    assert simulated == pytest.approx(CLOSED[name](16, size), rel=1e-9)
    assert predict(name, SWITCH16, 16, size) == pytest.approx(CLOSED[name](16, size), rel=1e-9)


@pytest.mark.parametrize(("name", "chunks"), [*((name, 1) for name in sorted(CLOSED)), ("ring", 4)])
def test_the_overhead_of_every_message_adds_to_its_alpha(name, chunks):
    """The engine issues a message α_sw after it is ready; on a contention-free switch the closed form with
    α + α_sw is the simulation (where it is exact without overhead: unpipelined, and the pipelined ring),
    per rank too (a straggler's overhead is multiplied by its slowdown)."""
    size, overhead_s = 2**20, 3e-6
    schedule = ALGORITHMS[name].builder(16, size, chunks=chunks)
    simulated = simulate(SWITCH16, schedule, overhead_s=overhead_s).time_s
    assert predict(name, SWITCH16, 16, size, chunks=chunks, overhead_s=overhead_s) == pytest.approx(simulated, rel=1e-9)
    if chunks == 1:
        closed = {"ring": ring_allreduce_time, "recursive_doubling": recursive_doubling_time,
                  "halving_doubling": halving_doubling_time}[name]
        assert simulated == pytest.approx(closed(16, size, ALPHA_s + overhead_s, BETA_s_per_byte), rel=1e-9)
    slow = [overhead_s] * 16
    slow[5] = 2 * overhead_s
    assert predict(name, SWITCH16, 16, size, chunks=chunks, overhead_s=slow) > simulated
    assert NetworkCosts(SWITCH16, overhead_s=slow).pairs([(5, 6), (6, 5)]) == [
        (ALPHA_s + 2 * overhead_s, BETA_s_per_byte, 1.0), (ALPHA_s + overhead_s, BETA_s_per_byte, 1.0)]


def test_published_64_mib_figures():
    """Issue 4's reference values for 64 MiB on switch(16, 12.5 GB/s, 1 us) (α = 2 us, β = 80 ps/B)."""
    n = 64 * 2**20
    assert CLOSED["ring"](16, n) == pytest.approx(10.126e-3, abs=1e-6)
    assert CLOSED["halving_doubling"](16, n) == pytest.approx(10.082e-3, abs=1e-6)
    assert CLOSED["recursive_doubling"](16, n) == pytest.approx(21.483e-3, abs=1e-6)


def test_textbook_forms_for_powers_of_two():
    """Thakur, Rabenseifner & Gropp 2005, Table 1 (γ = 0 and γ > 0)."""
    p, n, a, b, g = 8, 8 * 1024, 3e-6, 1e-10, 2e-11
    assert recursive_doubling_time(p, n, a, b, gamma_s_per_byte=g) == pytest.approx(3 * (a + n * b + n * g))
    assert halving_doubling_time(p, n, a, b, gamma_s_per_byte=g) == pytest.approx(
        2 * 3 * a + 2 * (p - 1) / p * n * b + (p - 1) / p * n * g
    )
    assert ring_allreduce_time(p, n, a, b, gamma_s_per_byte=g) == pytest.approx(
        2 * (p - 1) * a + 2 * (p - 1) / p * n * b + (p - 1) / p * n * g
    )
    assert binomial_tree_time(p, n, a, b, gamma_s_per_byte=g) == pytest.approx(6 * (a + n * b) + 3 * n * g)
    assert blueconnect_time(n, [p], [a], [b], gamma_s_per_byte=g) == pytest.approx(
        ring_allreduce_time(p, n, a, b, gamma_s_per_byte=g)
    )
    assert blueconnect_time(n, [2, 2, 2], [a] * 3, [b] * 3) == pytest.approx(halving_doubling_time(p, n, a, b))


def test_non_powers_of_two_pay_the_fold():
    """The folded ranks run ahead and may share links with the fold, so only the critical path is exact."""
    p, n = 12, 12 * 4096
    base = halving_doubling_time(8, n, ALPHA_s, BETA_s_per_byte)
    assert halving_doubling_time(p, n, ALPHA_s, BETA_s_per_byte) == pytest.approx(
        base + 2 * ALPHA_s + 2 * n * BETA_s_per_byte
    )
    network = Network(switch(12, 12.5e9, 1e-6))
    for name in ("recursive_doubling", "halving_doubling"):
        schedule = ALGORITHMS[name].builder(p, n)
        assert critical_path_time(network, schedule) == pytest.approx(CLOSED[name](p, n), rel=1e-9)
        assert simulate(network, schedule).time_s >= CLOSED[name](p, n) * (1 - 1e-12)


def _params(name, p):
    return {"factors": [2, p // 2]} if name in HIERARCHICAL else {}


@pytest.mark.skipif(
    "gamma_s_per_byte" not in inspect.signature(simulate).parameters, reason="the engine has no reduction cost yet"
)
@pytest.mark.parametrize("name", sorted(CLOSED))
def test_engine_and_models_share_the_reduction_convention(name):
    """A reduce transfer completes n γ after its last byte (the engine/model convention)."""
    p, n, gamma = 16, 2**20, 3e-11
    schedule = ALGORITHMS[name].builder(p, n)
    simulated = simulate(SWITCH16, schedule, gamma_s_per_byte=gamma).time_s
    assert simulated == pytest.approx(predict(name, SWITCH16, p, n, gamma_s_per_byte=gamma), rel=1e-9)
    assert simulated == pytest.approx(critical_path_time(SWITCH16, schedule, gamma), rel=1e-9)


def test_every_algorithm_has_a_closed_form_or_says_why_not():
    for name, record in ALGORITHMS.items():
        assert (record.model is not None) != bool(record.no_model), name


DGX = Network(dgx_cluster(4, 8))


@pytest.mark.parametrize("size", [2**10, 2**26, 2**28])
def test_blueconnect_beats_ring_on_a_dgx_cluster_and_the_model_says_so(size):
    """4 nodes × 8 GPUs, 150 GB/s NVSwitch, one 12.5 GB/s NIC per node (Cho et al. 2019, Fig. 7 setting)."""
    factors = default_factors(DGX.graph, "blueconnect")
    assert factors == (8, 4)
    blue = simulate(DGX, ALGORITHMS["blueconnect"].builder(32, size, factors=factors)).time_s
    ring = simulate(DGX, ALGORITHMS["ring"].builder(32, size)).time_s
    assert blue < ring
    assert predict("blueconnect", DGX, 32, size, factors=factors) < predict("ring", DGX, 32, size)
    assert predict("blueconnect", DGX, 32, size, factors=factors) == pytest.approx(blue, rel=0.01)
    assert predict("ring", DGX, 32, size) == pytest.approx(ring, rel=0.01)


def test_blueconnect_per_level_breakdown():
    """Level 1: 4 groups of 8 on the NVSwitch; level 2: 8 groups of 4 nodes, all 8 crossing each NIC."""
    n = 2**26
    levels = blueconnect_levels(NetworkCosts(DGX), 32, n, [8, 4])
    assert list(levels["level"]) == [1, 2]
    assert list(levels["group_size"]) == [8, 4] and list(levels["groups"]) == [4, 8]
    assert list(levels["message_bytes"]) == [n // 8, n // 32]
    assert levels["alpha_s"].tolist() == pytest.approx([2 * 0.5e-6, 4 * 0.5e-6 + 2 * 2e-6])
    assert levels["beta_s_per_byte"].tolist() == pytest.approx([1 / 150e9, 1 / 12.5e9])
    assert levels["sharing"].tolist() == [1.0, 8.0]
    inter = levels.iloc[1]
    assert inter["time_s"] == pytest.approx(2 * 3 * 8 * (n // 32) / 12.5e9 + inter["alpha_s"])
    assert levels["time_s"].sum() == pytest.approx(predict("blueconnect", DGX, 32, n, factors=[8, 4]))
    assert levels["time_s"].iloc[1] > 9 * levels["time_s"].iloc[0]
    assert math.isclose(levels["reduce_scatter_s"].sum(), levels["all_gather_s"].sum())


@pytest.mark.parametrize("size", [4096, 2**20, 2**30])
def test_predict_decides_what_nccl_decides_on_the_network(size):
    from simnet.errors import ScheduleError
    from simnet.models.nccl import choose, graphs_from_network, tune_model
    from simnet.topology import load

    net = Network(load("dgx_h100"))
    pick = choose(tune_model(*graphs_from_network(net, "2.30.7"), "2.30.7"), "allreduce", size)
    assert predict("nccl", net, 8, size) == pytest.approx(pick.time_s, rel=1e-12)
    if pick.algorithm == "ring":
        assert predict("nccl_ring", net, 8, size, protocol="auto") == pytest.approx(pick.time_s, rel=1e-12)
    with pytest.raises(ScheduleError, match=r"got 'auto'; 'auto' is NCCL's choice on a network: .*resolved"):
        ALGORITHMS["nccl_ring"].build(8, size, protocol="auto")


CLUSTERS = {
    "abci": {"builder": "cluster", "node": "abci_node", "nodes": 4, "fabric": "switch",
             "fabric_params": {"bandwidth": "100 Gbps", "latency": "0.5 us"}},
    "dgx_h100": {"file": "dgx_h100_ndr_32", "nodes": 4},
}
"""4 ABCI servers (4 V100, 2 EDR HCAs each) on a switch, and 4 DGX H100 (8 GPUs, 8 NDR NICs each)."""


@pytest.mark.parametrize("cluster", sorted(CLUSTERS))
def test_predict_decides_parameters_as_a_scenario_run_does(cluster):
    """Study r26 F3/F4: predict() read none of the topology's defaults (BlueConnect and hierarchical_ring priced
    flat, 2.520 ms for 3.375 ms / 1.515 ms on ABCI) and sparse_ring_ring took 4 GPUs per server on 8-GPU DGX
    H100s in both. Now predict() is the run's model column, and the run shows the GPUs per server it read."""
    from simnet.scenario import parse_scenario, run

    scenario = parse_scenario({
        "name": "predict", "topology": CLUSTERS[cluster],
        "collective": {"op": "allreduce", "algorithms": ["blueconnect", "hierarchical_ring", "sparse_ring_ring"]},
        "payload": {"kind": "sparse", "dimension": "256Ki", "density": "1/64", "seed": 1},
    })
    network = scenario.built_network()
    (payload,) = scenario.sparse_payloads()
    rows = run(scenario).set_index("algorithm")
    per_server = {"abci": 4, "dgx_h100": 8}[cluster]
    assert json.loads(rows.loc["sparse_ring_ring", "params"])["gpus_per_node"] == per_server
    assert json.loads(rows.loc["hierarchical_ring", "params"])["factors"] == [per_server, 4]
    for name, row in rows.iterrows():
        given = {"payload": payload} if name == "sparse_ring_ring" else {}
        assert predict(name, network, network.size, payload.size_bytes, **given) == row["model_time_s"], name
