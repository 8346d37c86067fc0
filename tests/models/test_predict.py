"""predict(): the registered closed forms against the simulator, and BlueConnect on a DGX-style cluster."""

import inspect
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet.algorithms import ALGORITHMS
from simnet.algorithms.dense import binomial_tree_time, recursive_doubling_time, ring_allreduce_time
from simnet.algorithms.hierarchical import blueconnect_levels, blueconnect_time, halving_doubling_time
from simnet.engine import simulate
from simnet.models import NetworkCosts, critical_path_finish_s, critical_path_time, predict
from simnet.links import LINK_MODELS
from simnet.network import Network
from simnet.schedule import Schedule, Transfer
from simnet.topology import switch
from tests.algorithms.fabrics import dgx_cluster, full_mesh
from tests.algorithms.test_dense import ALLREDUCE
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
    if name in ("blueconnect", "torus_2d", "hierarchical_ring"):
        return {"factors": [2, p // 2]}
    return {}


def _links_shared_concurrently(trace):
    """Whether two transfers ever use the same link at overlapping times."""
    busy = {}
    for t, start, end in zip(trace.schedule.transfers, trace.start_s, trace.end_s):
        for link in trace.network.route(t.src, t.dst):
            busy.setdefault(link, []).append((start, end))
    for intervals in busy.values():
        intervals.sort()
        if any(later[0] < earlier[1] for earlier, later in zip(intervals, intervals[1:])):
            return True
    return False


@pytest.mark.parametrize("name", ALLREDUCE)
@pytest.mark.parametrize("size", [1024, 2**20])
def test_critical_path_equals_simulation_without_link_sharing(name, size):
    """On a full mesh, with chunks = 1 and equal pieces, no two transfers share a link at once."""
    p = 8
    network = Network(full_mesh(p))
    schedule = ALGORITHMS[name].builder(p, size, **_params(name, p))
    trace = simulate(network, schedule)
    assert not _links_shared_concurrently(trace)
    assert critical_path_time(network, schedule) == pytest.approx(trace.time_s, rel=1e-9)
    np.testing.assert_allclose(critical_path_finish_s(network, schedule), trace.end_s, rtol=1e-9)


@pytest.mark.parametrize("name", ["ring", "recursive_doubling", "halving_doubling", "binomial_tree"])
def test_critical_path_equals_closed_form_with_reduction_cost(name):
    p, n, gamma = 16, 2**20, 3e-11
    schedule = ALGORITHMS[name].builder(p, n)
    assert critical_path_time(SWITCH16, schedule, gamma) == pytest.approx(
        predict(name, SWITCH16, p, n, gamma_s_per_byte=gamma), rel=1e-9
    )


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


@pytest.mark.parametrize("name", ALLREDUCE)
@settings(max_examples=4, deadline=None)
@given(p=st.sampled_from([4, 6, 8, 12, 16]), size=st.integers(1, 10**6), chunks=st.integers(1, 4))
def test_contention_never_beats_the_critical_path(name, p, size, chunks):
    network = Network(dgx_cluster(2, 8))
    schedule = ALGORITHMS[name].builder(p, size, chunks=chunks, **_params(name, p))
    assert critical_path_time(network, schedule) <= simulate(network, schedule).time_s * (1 + 1e-12)


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_critical_path_matches_a_plain_longest_path(data):
    count = data.draw(st.integers(1, 60))
    transfers = []
    for i in range(count):
        deps = data.draw(st.lists(st.integers(0, i - 1), max_size=3, unique=True)) if i else []
        src = data.draw(st.integers(0, 3))
        dst = (src + data.draw(st.integers(1, 3))) % 4
        op = data.draw(st.sampled_from(["copy", "reduce"]))
        transfers.append(Transfer(src, dst, (0,), data.draw(st.integers(0, 10**6)), op, tuple(sorted(deps))))
    schedule = Schedule("allreduce", 4, (1,), tuple(transfers))
    network = Network(switch(4, 1e9, 1e-6))
    gamma = 1e-10
    finish = []
    for t in transfers:
        ready = max((finish[d] for d in t.deps), default=0.0)
        cost = network.transfer_time_s(t.src, t.dst, t.nbytes) + (t.nbytes * gamma if t.op == "reduce" else 0.0)
        finish.append(ready + cost)
    np.testing.assert_allclose(critical_path_finish_s(network, schedule, gamma_s_per_byte=gamma), finish, rtol=1e-12)


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
