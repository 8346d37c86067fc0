"""Every dense algorithm computes all-reduce; the special cases of BlueConnect are what Cho et al. say."""


import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet.algorithms import ALGORITHMS
from simnet.algorithms.dense import btree_parents, double_binary_tree_parents, ring_allreduce, ring_orders
from simnet.algorithms.hierarchical import (
    blueconnect_allreduce,
    torus_2d_allreduce,
)
from simnet.engine import simulate
from simnet.errors import ScheduleError
from simnet.network import Network
from simnet.schedule import Schedule, Transfer, check, split_bytes
from simnet.topology import ring
from tests.algorithms.orders import assert_same_schedule

ALLREDUCE = [name for name in ALGORITHMS.for_op("allreduce") if ALGORITHMS[name].payload == "dense"
             and "chunks" in {p.name for p in ALGORITHMS[name].parameters}]
HIERARCHICAL = {name for name in ALLREDUCE if "factors" in {p.name for p in ALGORITHMS[name].parameters}}


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
        params["factors"] = data.draw(factorizations(p, None if name == "blueconnect" else 2))
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
