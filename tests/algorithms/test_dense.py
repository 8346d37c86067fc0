"""Every dense algorithm computes all-reduce; the special cases of BlueConnect are what Cho et al. say."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet.algorithms import ALGORITHMS
from simnet.algorithms.dense import btree_parents, double_binary_tree_parents, ring_allreduce, ring_orders
from simnet.algorithms.hierarchical import (
    blueconnect_allreduce,
    halving_doubling_allreduce,
    level_groups,
    torus_2d_allreduce,
)
from simnet.engine import simulate
from simnet.errors import ScheduleError
from simnet.network import Network
from simnet.schedule import Schedule, Transfer, check, split_bytes
from simnet.topology import ring, switch
from tests.algorithms.fabrics import dgx_cluster
from tests.algorithms.orders import assert_same_schedule

ALLREDUCE = [
    "ring",
    "recursive_doubling",
    "halving_doubling",
    "binomial_tree",
    "double_binary_tree",
    "hierarchical_ring",
    "torus_2d",
    "blueconnect",
]
HIERARCHICAL = {"blueconnect", "torus_2d", "hierarchical_ring"}


@st.composite
def factorizations(draw, p: int, levels: int | None = None):
    """A random ordered factorization of `p` (exactly `levels` factors if given)."""
    factors, rest = [], p
    while rest > 1 and (levels is None or len(factors) < levels - 1):
        factors.append(draw(st.sampled_from([d for d in range(2, rest + 1) if rest % d == 0])))
        rest //= factors[-1]
    if levels is not None or rest > 1 or not factors:
        factors.append(rest)
    return factors


@pytest.mark.parametrize("name", ALLREDUCE)
@settings(max_examples=6, deadline=None)
@given(p=st.integers(2, 64), size=st.integers(1, 700), chunks=st.integers(1, 3), data=st.data())
def test_every_allreduce_passes_the_symbolic_and_numeric_check(name, p, size, chunks, data):
    params = {"chunks": chunks}
    if name in HIERARCHICAL:
        params["factors"] = data.draw(factorizations(p, 2 if name != "blueconnect" else None))
    if name == "ring":
        params["channels"] = data.draw(st.integers(1, 3))
    schedule = ALGORITHMS[name].builder(p, size, **params)
    assert schedule.collective == "allreduce" and schedule.size_bytes == size
    check(schedule, numeric=True)


@pytest.mark.parametrize("name", ALLREDUCE)
def test_every_allreduce_is_correct_on_64_ranks(name):
    params = {"factors": [8, 8]} if name in HIERARCHICAL else {}
    check(ALGORITHMS[name].builder(64, 64 * 3 + 5, **params))


def _reference_ring(nranks, size_bytes, chunks):
    """The ring all-reduce of the first commit, kept verbatim as the reference."""
    p = nranks
    chunk_bytes = [piece for segment in split_bytes(size_bytes, p) for piece in split_bytes(segment, chunks)]
    transfers, previous = [], {}
    for step in range(2 * (p - 1)):
        reducing = step < p - 1
        current = {}
        for rank in range(p):
            segment = (rank - step) % p if reducing else (rank + 1 - (step - (p - 1))) % p
            for j in range(chunks):
                chunk = segment * chunks + j
                dep = previous.get(((rank - 1) % p, chunk))
                current[(rank, chunk)] = len(transfers)
                transfers.append(
                    Transfer(
                        src=rank,
                        dst=(rank + 1) % p,
                        chunks=(chunk,),
                        nbytes=chunk_bytes[chunk],
                        op="reduce" if reducing else "copy",
                        deps=() if dep is None else (dep,),
                        stage="reduce_scatter" if reducing else "all_gather",
                    )
                )
        previous = current
    return Schedule("allreduce", p, tuple(chunk_bytes), tuple(transfers), "ring", params={"chunks": chunks})


@pytest.mark.parametrize(("p", "size", "chunks"), [(2, 1, 1), (5, 1003, 1), (8, 4096, 3), (13, 77, 2)])
def test_ring_with_one_channel_is_the_original_ring(p, size, chunks):
    assert_same_schedule(ring_allreduce(p, size, chunks=chunks), _reference_ring(p, size, chunks))


def test_ring_channels_alternate_direction_and_rotate():
    assert ring_orders(4, 3) == [[0, 1, 2, 3], [0, 3, 2, 1], [1, 2, 3, 0]]
    schedule = ring_allreduce(4, 1000, channels=2)
    assert {(t.src, t.dst) for t in schedule.transfers} == {(r, (r + 1) % 4) for r in range(4)} | {
        ((r + 1) % 4, r) for r in range(4)
    }
    per_channel = 2 * (4 - 1) * 4 * 125
    assert schedule.total_bytes == 2 * per_channel


def test_two_opposite_channels_halve_the_time_on_a_bidirectional_ring():
    network = Network(ring(8, 25e9, 1e-6))
    one = simulate(network, ring_allreduce(8, 2**24)).time_s
    two = simulate(network, ring_allreduce(8, 2**24, channels=2)).time_s
    assert two < 0.51 * one


def _wire(schedule):
    return [(t.src, t.dst, t.chunks, t.nbytes, t.op) for t in schedule.transfers], schedule.chunk_bytes


NETWORKS = [
    Network(switch(16, 12.5e9, 1e-6)),
    Network(ring(16, 25e9, 0.7e-6)),
    Network(dgx_cluster(2, 8)),
]


@pytest.mark.parametrize(("p", "size", "chunks"), [(16, 2**20, 1), (16, 10**6 + 7, 2), (12, 999, 3)])
def test_blueconnect_with_one_factor_is_the_ring(p, size, chunks):
    """Cho et al. 2019, §3: one level of BlueConnect is the ring all-reduce."""
    blue, ring_ = blueconnect_allreduce(p, size, factors=[p], chunks=chunks), ring_allreduce(p, size, chunks=chunks)
    assert _wire(blue) == _wire(ring_)
    assert_same_schedule(blue, ring_, stages=False)
    for network in NETWORKS:
        assert simulate(network, blue).time_s == pytest.approx(simulate(network, ring_).time_s, rel=1e-12)


@pytest.mark.parametrize(("k", "size", "chunks"), [(1, 100, 1), (2, 2**20, 1), (4, 2**20 + 3, 1), (4, 5000, 3)])
def test_blueconnect_with_all_factors_two_is_halving_doubling(k, size, chunks):
    """Cho et al. 2019, §3: factors of 2 at every level give Rabenseifner's algorithm."""
    p = 2**k
    blue = blueconnect_allreduce(p, size, factors=[2] * k, chunks=chunks)
    rabenseifner = halving_doubling_allreduce(p, size, chunks=chunks)
    assert list(blue.transfers) == list(rabenseifner.transfers) and blue.chunk_bytes == rabenseifner.chunk_bytes
    for network in NETWORKS:
        assert simulate(network, blue).time_s == simulate(network, rabenseifner).time_s


def test_torus_2d_is_two_level_blueconnect():
    torus = torus_2d_allreduce(12, 1200, factors=[3, 4])
    assert _wire(torus) == _wire(blueconnect_allreduce(12, 1200, factors=[3, 4]))
    assert torus_2d_allreduce(12, 1200).params["factors"] == [3, 4]


def test_level_groups_vary_one_coordinate():
    assert level_groups([2, 3], 0) == [[0, 1], [2, 3], [4, 5]]
    assert level_groups([2, 3], 1) == [[0, 2, 4], [1, 3, 5]]


def test_halving_doubling_folds_non_powers_of_two_the_mpich_way():
    schedule = halving_doubling_allreduce(6, 600)
    fold = [t for t in schedule.transfers if t.stage == "fold"]
    unfold = [t for t in schedule.transfers if t.stage == "unfold"]
    assert [(t.src, t.dst, t.op) for t in fold] == [(0, 1, "reduce"), (2, 3, "reduce")]
    assert [(t.src, t.dst, t.op) for t in unfold] == [(1, 0, "copy"), (3, 2, "copy")]


def test_recursive_doubling_exchanges_the_whole_payload_log_p_times():
    schedule = ALGORITHMS["recursive_doubling"].builder(8, 800)
    assert len(schedule) == 8 * 3 and {t.nbytes for t in schedule.transfers} == {800}


@pytest.mark.parametrize("p", [2, 3, 8, 13, 14, 64])
def test_double_binary_tree_is_two_spanning_binary_trees(p):
    """NCCL's ncclGetDtree: the trees of the NCCL source comment for 13 and 12 ranks."""
    for parents in double_binary_tree_parents(p):
        assert sum(x is None for x in parents) == 1
        children = [sum(x == r for x in parents) for r in range(p)]
        assert max(children) <= 2
        for r in range(p):
            seen, node = set(), r
            while parents[node] is not None:
                assert node not in seen
                seen.add(node)
                node = parents[node]
    if p == 13:
        assert btree_parents(13)[12] == 8 and btree_parents(13)[8] == 0 and btree_parents(13)[13 - 2] == 10
        assert double_binary_tree_parents(13)[1].index(None) == 1
    if p == 14:
        assert double_binary_tree_parents(14)[1].index(None) == 13


def test_double_binary_tree_inner_nodes_are_leaves_in_the_other_tree():
    first, second = double_binary_tree_parents(16)
    inner = [{x for x in parents if x is not None} for parents in (first, second)]
    assert not (inner[0] & inner[1] - {0, 15})


@pytest.mark.parametrize(
    ("build", "params", "path"),
    [
        (blueconnect_allreduce, {"factors": [3, 3]}, "factors"),
        (blueconnect_allreduce, {"factors": "8"}, "factors"),
        (blueconnect_allreduce, {"factors": [0, 8]}, "factors"),
        (torus_2d_allreduce, {"factors": [2, 2, 2]}, "factors"),
        (ring_allreduce, {"channels": 0}, "channels"),
        (ring_allreduce, {"chunks": 1.5}, "chunks"),
    ],
)
def test_bad_parameters_name_the_parameter(build, params, path):
    with pytest.raises(ScheduleError) as error:
        build(8, 1024, **params)
    assert error.value.path == path


def test_hierarchical_ring_reduces_inside_nodes_and_rings_between_leaders():
    schedule = ALGORITHMS["hierarchical_ring"].builder(8, 800, factors=[4, 2])
    inter = {(t.src, t.dst) for t in schedule.transfers if t.stage.startswith("inter")}
    assert inter == {(0, 4), (4, 0)}
    assert {t.stage for t in schedule.transfers} == {
        "intra_reduce",
        "inter_reduce_scatter",
        "inter_all_gather",
        "intra_broadcast",
    }
    assert math.prod(schedule.params["factors"]) == 8


def reference_ring(p: int, size: int, chunks: int, channels: int) -> list[Transfer]:
    """The ring all-reduce written out transfer by transfer, as its docstring describes it."""
    chunk_bytes = [c for part in split_bytes(size, channels) for g in split_bytes(part, p) for c in split_bytes(g, chunks)]
    orders = ring_orders(p, channels)
    transfers: list[Transfer] = []
    index: dict[tuple[int, int, int, int], int] = {}
    for step in range(2 * (p - 1)):
        reducing = step < p - 1
        for k, order in enumerate(orders):
            for position in range(p):
                segment = (position - step) % p if reducing else (position + 1 - (step - (p - 1))) % p
                for j in range(chunks):
                    chunk = (k * p + segment) * chunks + j
                    deps = (index[(step - 1, k, (position - 1) % p, j)],) if step else ()
                    index[(step, k, position, j)] = len(transfers)
                    transfers.append(
                        Transfer(
                            order[position], order[(position + 1) % p], (chunk,), chunk_bytes[chunk],
                            "reduce" if reducing else "copy", deps, "reduce_scatter" if reducing else "all_gather",
                        )
                    )
    return transfers


@pytest.mark.parametrize("p", [2, 3, 5, 8])
@pytest.mark.parametrize(("chunks", "channels"), [(1, 1), (3, 1), (1, 3), (2, 4)])
@pytest.mark.parametrize("size", [1, 7, 1000, 2**20 + 3])
def test_the_batch_built_ring_equals_the_ring_written_out(p, chunks, channels, size):
    schedule = ring_allreduce(p, size, chunks=chunks, channels=channels)
    chunk_bytes = tuple(c for part in split_bytes(size, channels) for g in split_bytes(part, p)
                        for c in split_bytes(g, chunks))
    assert_same_schedule(schedule, Schedule("allreduce", p, chunk_bytes, reference_ring(p, size, chunks, channels)))
