"""All-to-all algorithms against their closed forms and the laws of their data paths.

(The registry tests already check every algorithm for 2 to 17 ranks, with skewed matrices.)
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet.algorithms import ALGORITHMS
from simnet.algorithms.alltoall import (
    bruck_alltoall,
    bruck_alltoall_time,
    direct_alltoall,
    direct_alltoall_time,
    flows_schedule,
    hierarchical_alltoall,
    rail_aligned_alltoall,
)
from simnet.analysis import busbw_factor
from simnet.engine import simulate
from simnet.errors import ScheduleError
from simnet.network import Network
from simnet.schedule import Schedule, check, split_bytes
from simnet.topology import fat_tree, leaf_spine, switch
from simnet.traffic import TrafficMatrix
from tests.algorithms.fabrics import dgx_cluster

BANDWIDTH_Bps = 12.5e9
LATENCY_S = 1e-6
ALLTOALL = ALGORITHMS.for_op("alltoall")
BLOCK_BYTES = 8 * 2**20
"""Per-pair block of the busbw tests: 8 MiB, so that α is 1.5 % of a block's time on 4-hop routes."""


def _busbw_Bps(network: Network, nranks: int, **params) -> float:
    size = nranks * BLOCK_BYTES
    time_s = simulate(network, direct_alltoall(nranks, size, **params)).time_s
    return size / time_s * busbw_factor("alltoall", nranks)


def test_direct_busbw_is_the_injection_bandwidth_on_a_non_blocking_fat_tree():
    """A two-level fat-tree whose leaf uplink is as fat as its 8 host links (Leiserson's fat-tree):
    every shift permutation of the pairwise exchange is contention-free, so busbw = (n/p)/(α + (n/p)β) → 1/β."""
    network = Network(leaf_spine(8, 1, 8, BANDWIDTH_Bps, LATENCY_S))
    for nranks in range(2, 65):  # docs/algorithms.md: "within 1 % for 2 to 64 ranks (tested)"
        assert _busbw_Bps(network, nranks) == pytest.approx(BANDWIDTH_Bps, rel=0.01), nranks


def test_direct_busbw_is_the_injection_bandwidth_on_a_k_ary_fat_tree_over_whole_switches():
    """Under destination-mod-k routing a shift among the hosts of whole edge switches, pods or pairs of
    pods of ``fat_tree(8)`` puts at most one flow on every link (other counts wrap around unevenly)."""
    network = Network(fat_tree(8, BANDWIDTH_Bps, LATENCY_S))
    assert network.routing == "dmodk"
    for nranks in (2, 4, 8, 16, 32, 64):
        assert _busbw_Bps(network, nranks) == pytest.approx(BANDWIDTH_Bps, rel=0.02), nranks


@pytest.mark.parametrize("nranks", [2, 3, 5, 8, 13, 16])
def test_direct_and_bruck_match_their_closed_forms_on_a_switch(nranks):
    network = Network(switch(16, BANDWIDTH_Bps, LATENCY_S))
    size = nranks * 3 * 2**16
    alpha_s, beta = 2 * LATENCY_S, 1 / BANDWIDTH_Bps
    assert simulate(network, direct_alltoall(nranks, size)).time_s == pytest.approx(
        direct_alltoall_time(nranks, size, alpha_s, beta), rel=1e-12)
    assert simulate(network, bruck_alltoall(nranks, size)).time_s == pytest.approx(
        bruck_alltoall_time(nranks, size, alpha_s, beta), rel=1e-12)


def test_bruck_takes_log2_p_steps_of_half_the_buffer():
    for q in range(1, 6):
        p = 2**q
        assert bruck_alltoall_time(p, 1024.0 * p, 1e-6, 1e-9) == pytest.approx(q * (1e-6 + 512 * p * 1e-9))


@pytest.mark.parametrize("name", ALLTOALL)
@pytest.mark.parametrize("matrix", [TrafficMatrix("uniform"), TrafficMatrix("explicit", weights=np.full((8, 8), 3.0))])
def test_alltoallv_with_an_all_equal_matrix_is_alltoall(name, matrix):
    params = {"gpus_per_node": 4} if "gpus_per_node" in {p.name for p in ALGORITHMS[name].parameters} else {}
    network = Network(dgx_cluster(2, 4))
    for size in (8000, 8 * 2**20 + 5):
        plain = ALGORITHMS[name].build(8, size, **params)
        skewless = ALGORITHMS[name].build(8, size, **params, matrix=matrix)
        assert skewless.collective == "alltoallv" and skewless.chunk_bytes == plain.chunk_bytes
        assert skewless.transfers == plain.transfers
        assert simulate(network, skewless).time_s == simulate(network, plain).time_s


@given(st.integers(2, 6), st.integers(1, 4), st.integers(1, 3), st.integers(1, 5000))
@settings(max_examples=25, deadline=None)
def test_rail_aligned_traffic_leaves_a_node_only_on_its_own_rail(nodes, gpus_per_node, chunks, size):
    nranks = nodes * gpus_per_node
    schedule = rail_aligned_alltoall(nranks, size + nranks, chunks=chunks, gpus_per_node=gpus_per_node)
    table = schedule.transfers
    across = table.src // gpus_per_node != table.dst // gpus_per_node
    assert (table.src[across] % gpus_per_node == table.dst[across] % gpus_per_node).all()


@given(st.integers(2, 5), st.integers(1, 4), st.integers(1, 3))
@settings(max_examples=25, deadline=None)
def test_hierarchical_traffic_leaves_a_node_only_between_leaders(nodes, gpus_per_node, chunks):
    nranks = nodes * gpus_per_node
    schedule = hierarchical_alltoall(nranks, 997 * nranks, chunks=chunks, gpus_per_node=gpus_per_node)
    table = schedule.transfers
    across = table.src // gpus_per_node != table.dst // gpus_per_node
    assert (table.src[across] % gpus_per_node == 0).all() and (table.dst[across] % gpus_per_node == 0).all()
    assert across.sum() == nodes * (nodes - 1) * chunks


@given(st.integers(2, 12), st.integers(1, 10**6), st.sampled_from(ALLTOALL))
@settings(max_examples=30, deadline=None)
def test_direct_sends_every_off_diagonal_byte_once_and_the_others_at_least_once(nranks, size, name):
    """Row i keeps its block i (``split_bytes(size, p)[i]``, summing to one size over the rows)."""
    gpus = next(d for d in (4, 3, 2, 1) if nranks % d == 0)
    params = {"gpus_per_node": gpus} if name in ("hierarchical", "rail_aligned") else {}
    schedule = ALGORITHMS[name].build(nranks, size, **params)
    moved = size * nranks - sum(split_bytes(size, nranks))
    assert schedule.total_bytes >= moved
    if name == "direct":
        assert schedule.total_bytes == moved


def test_zero_entries_of_a_matrix_send_nothing():
    weights = np.array([[0, 1, 0], [0, 0, 0], [2, 0, 1]], dtype=float)
    for name in ALLTOALL:
        schedule = ALGORITHMS[name].build(3, 300, matrix=TrafficMatrix("explicit", weights=weights))
        check(schedule, numeric=True)
        assert set(zip(schedule.owners, schedule.targets)) == {(0, 1), (2, 0), (2, 2)}


def test_an_explicit_matrix_of_another_size_is_refused_with_its_path():
    with pytest.raises(ScheduleError, match="3 × 3 but the communicator has 4 ranks") as error:
        direct_alltoall(4, 100, matrix=TrafficMatrix("explicit", weights=np.ones((3, 3))))
    assert error.value.path == "matrix"
    with pytest.raises(ScheduleError) as error:
        direct_alltoall(4, 100, matrix=TrafficMatrix("hotspot", hotspots=5))
    assert error.value.path == "matrix.hotspots"


def test_window_keeps_steps_in_flight_and_still_computes_the_collective():
    for window in (1, 2, 4, 7):
        schedule = direct_alltoall(8, 8 * 4096, window=window, chunks=2)
        check(schedule)
        first = schedule.transfers.deps_of(len(schedule) - 1)
        assert len(first) == (0 if window >= 7 else 4)


def test_check_refuses_a_block_left_at_a_relay():
    good = bruck_alltoall(4, 400)
    last = len(good) - 1
    with pytest.raises(ScheduleError, match="expected \\{"):
        check(good.replace(transfers=good.transfers[:last]))


def test_flows_are_an_alltoallv_without_dependencies():
    schedule = flows_schedule(4, [0, 1, 2, 3], [1, 2, 3, 0], [10, 0, 30, 40])
    check(schedule, numeric=True)
    assert isinstance(schedule, Schedule) and len(schedule) == 3 and not len(schedule.transfers.deps)
    with pytest.raises(ScheduleError, match="distinct pairs"):
        flows_schedule(4, [0, 0], [1, 1], [5, 5])
