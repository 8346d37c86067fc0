"""Tests of simnet.algorithms.sparse: exact sums, fill-in, encoding, and the topology-aware claim."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet.algorithms.dense import ring_allreduce
from simnet.algorithms import ALGORITHMS
from simnet.algorithms.sparse import execute, gtopk, sparse_ring, sparse_ring_allreduce_time, sparse_ring_ring
from simnet.engine import simulate
from simnet.errors import ScheduleError
from simnet.models import predict
from simnet.network import Network
from simnet.payloads import SparsePayload
from simnet.schedule import check
from simnet.topology import add_cable, validate

SPARSE = [name for name, record in ALGORITHMS.items() if record.payload == "sparse"]
EXACT = [name for name in SPARSE if name != "gtopk"]


def build(name, nranks, payload, **params):
    return ALGORITHMS[name].build(nranks, payload.size_bytes, payload=payload, **params)


def dense_sum(payload, nranks):
    total = np.zeros(payload.dimension, dtype=np.float64)
    for rank in range(nranks):
        vector = payload.vector(rank)
        total[vector.indices.astype(np.int64)] += vector.values
    return total


def densify(vector, dimension):
    out = np.zeros(dimension, dtype=np.float64)
    out[vector.indices.astype(np.int64)] = vector.values
    return out


def abci_like(nodes):
    """`nodes` ABCI-like nodes on one EDR switch (figures as in docs/sparse.md).

    Per node: 4 V100 with a doubled NVLink2 (2 x 25 GB/s per direction, NVIDIA V100
    whitepaper) between every pair; 2 PCIe Gen3 x16 switches (15.75 GB/s) each with
    2 GPUs and one EDR HCA (100 Gb/s); AIST ABCI system overview (2018).
    """
    graph = nx.DiGraph(name=f"abci_like(nodes={nodes})")
    graph.add_node("ib", kind="switch")
    for node in range(nodes):
        for local in range(4):
            graph.add_node(f"n{node}g{local}", kind="gpu", host=node)
        for half in range(2):
            graph.add_node(f"n{node}pcie{half}", kind="switch", host=node)
            graph.add_node(f"n{node}hca{half}", kind="nic", host=node)
            add_cable(graph, f"n{node}pcie{half}", f"n{node}hca{half}", 15.75e9, 0.5e-6, "pcie")
            add_cable(graph, f"n{node}hca{half}", "ib", 12.5e9, 0.5e-6, "ib")
        for local in range(4):
            add_cable(graph, f"n{node}g{local}", f"n{node}pcie{local // 2}", 15.75e9, 0.5e-6, "pcie")
            for other in range(local + 1, 4):
                add_cable(graph, f"n{node}g{local}", f"n{node}g{other}", 25e9, 0.5e-6, "nvlink", cables=2)
    return Network(validate(graph))


@pytest.mark.parametrize("name", EXACT)
@pytest.mark.parametrize("distribution", ["uniform", "zipf", "clustered"])
def test_exact_algorithms_compute_the_dense_sum(name, distribution):
    payload = SparsePayload(dimension=4096, density=1 / 32, distribution=distribution, seed=7, cluster=8)
    schedule = build(name, 8, payload)
    run = execute(schedule, payload)
    want = dense_sum(payload, 8)
    for rank in range(8):
        np.testing.assert_allclose(densify(run.result(rank), payload.dimension), want, rtol=1e-5, atol=1e-5)
    assert run.nnz == tuple(t.nnz for t in schedule.transfers)


@settings(max_examples=15, deadline=None)
@given(
    nodes=st.integers(1, 4),
    gpus_per_node=st.integers(1, 4),
    dimension=st.integers(16, 3000),
    density=st.sampled_from([1 / 2, 1 / 8, 1 / 64]),
    seed=st.integers(0, 100),
)
def test_sparse_ring_ring_is_exact_for_any_shape(nodes, gpus_per_node, dimension, density, seed):
    nranks = nodes * gpus_per_node
    if nranks < 2:
        return
    payload = SparsePayload(dimension=dimension, density=density, seed=seed)
    schedule = sparse_ring_ring(nranks, payload.size_bytes, payload=payload, gpus_per_node=gpus_per_node)
    check(schedule)
    want = dense_sum(payload, nranks)
    result = execute(schedule, payload).result(nranks - 1)
    np.testing.assert_allclose(densify(result, dimension), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", SPARSE)
@pytest.mark.parametrize("nranks", [2, 6, 8])
def test_every_sparse_schedule_passes_check(name, nranks):
    payload = SparsePayload(dimension=2000, density=1 / 16, seed=1)
    params = {"gpus_per_node": 2} if name == "sparse_ring_ring" else {}
    check(build(name, nranks, payload, **params), numeric=nranks <= 6)


@pytest.mark.parametrize("nranks", [3, 6, 7])
def test_recursive_doubling_folds_non_powers_of_two_and_stays_exact(nranks):
    payload = SparsePayload(dimension=1000, density=0.1, seed=5)
    schedule = build("ssar_recursive_doubling", nranks, payload)
    rem = nranks - (1 << (nranks.bit_length() - 1))
    assert [(t.src, t.dst) for t in schedule.transfers if t.stage == "fold"] == [(2 * r, 2 * r + 1) for r in range(rem)]
    want = dense_sum(payload, nranks)
    run = execute(schedule, payload)
    for rank in range(nranks):
        np.testing.assert_allclose(densify(run.result(rank), payload.dimension), want, rtol=1e-5, atol=1e-5)


def test_size_must_be_the_dense_size_and_hierarchy_must_divide():
    payload = SparsePayload(dimension=100, density=0.1)
    with pytest.raises(ScheduleError) as error:
        sparse_ring(4, 100, payload=payload)
    assert error.value.path == "size_bytes"
    with pytest.raises(ScheduleError) as error:
        sparse_ring_ring(6, 400, payload=payload, gpus_per_node=4)
    assert error.value.path == "gpus_per_node"


def reference_gtopk(payload, nranks, k):
    """gTop-k by its definition (Shi et al. 2019, Algorithm 2) on dense arrays."""

    def top_k(x):
        nonzero = np.flatnonzero(x)
        keep = nonzero[np.lexsort((nonzero, -np.abs(x[nonzero])))[:k]]
        out = np.zeros_like(x)
        out[keep] = x[keep]
        return out

    held = [densify(payload.vector(r), payload.dimension).astype(np.float32) for r in range(nranks)]
    distance = 1
    while distance < nranks:
        for root in range(0, nranks, 2 * distance):
            if root + distance < nranks:
                held[root] = top_k(held[root] + held[root + distance])
        distance *= 2
    return held[0]


@pytest.mark.parametrize("nranks", [2, 5, 8])
def test_gtopk_follows_its_documented_semantics(nranks):
    payload = SparsePayload(dimension=3000, density=1 / 30, seed=4)
    schedule = gtopk(nranks, payload.size_bytes, payload=payload)
    run = execute(schedule, payload)
    want = reference_gtopk(payload, nranks, payload.k)
    for rank in range(nranks):
        result = run.result(rank)
        assert result.nnz == payload.k
        np.testing.assert_allclose(densify(result, payload.dimension), want, rtol=1e-6)
    assert max(t.nnz for t in schedule.transfers) == payload.k
    assert len(schedule.transfers) == 2 * (nranks - 1)


@pytest.mark.parametrize("name", SPARSE)
def test_nbytes_is_the_smaller_encoding_of_the_actual_nonzeros(name):
    payload = SparsePayload(dimension=4000, density=1 / 8, seed=2, header_bytes=16)
    schedule = build(name, 8, payload)
    for t in schedule.transfers:
        entries = sum(schedule.chunk_bytes[c] for c in t.chunks) // payload.value_bytes
        sparse_bytes, dense_bytes = 8 * t.nnz, 4 * entries
        assert t.nbytes == 16 + (dense_bytes if t.dense else sparse_bytes)
        if not (name == "dsar_split_allgather" and t.stage == "all_gather"):
            assert t.dense == (dense_bytes < sparse_bytes)
    assert schedule.size_bytes == payload.size_bytes


def test_dsar_all_gather_is_dense_and_ssar_reduce_scatter_is_identical():
    payload = SparsePayload(dimension=64_000, density=1 / 256, seed=3)
    ssar, dsar = build("ssar_split_allgather", 8, payload), build("dsar_split_allgather", 8, payload)
    for s, d in zip(ssar.transfers, dsar.transfers):
        if d.stage == "all_gather":
            assert d.dense and d.nbytes == 4 + 4 * 8000 and not s.dense
        else:
            assert s == d


def test_dense_payload_sparse_ring_times_equal_the_dense_ring():
    payload = SparsePayload(dimension=8000, density=1.0, header_bytes=0)
    network = abci_like(2)
    sparse = simulate(network, sparse_ring(8, payload.size_bytes, payload=payload))
    dense = simulate(network, ring_allreduce(8, payload.size_bytes))
    assert all(t.dense for t in sparse.schedule.transfers)
    assert sparse.time_s == pytest.approx(dense.time_s, rel=1e-9)


def test_measured_fill_in_matches_the_uniform_expectation():
    """Summing m independent uniform k-subsets of n entries leaves n (1 - (1 - k/n)^m) nonzeros on average."""
    nranks, dimension, density = 16, 2**20, 1 / 64
    payload = SparsePayload(dimension=dimension, density=density, seed=11)
    schedule = sparse_ring(nranks, payload.size_bytes, payload=payload)
    entries = dimension // nranks
    d = payload.k / dimension
    for m in range(1, nranks + 1):
        counts = np.array([t.nnz for t in schedule.transfers if t.merged == m])
        expected = 1 - (1 - d) ** m
        sigma = np.sqrt(expected * (1 - expected) / (entries * counts.size))
        assert counts.size >= nranks - 1
        assert abs(counts.mean() / entries - expected) < 5 * sigma


def test_topology_aware_sparse_ring_ring_beats_flat_sparse_and_dense_ring():
    """Nguyen, Wahib & Takano (2019): keeping fill-in on NVLink beats flat sparse rings and the dense ring."""
    network = abci_like(4)
    payload = SparsePayload(dimension=2**20, density=1 / 64, seed=1)
    times = {
        name: simulate(network, build(name, 16, payload)).time_s
        for name in ("sparse_ring_ring", "sparse_ring", "ssar_split_allgather", "topk_allgather")
    }
    times["ring"] = simulate(network, ring_allreduce(16, payload.size_bytes)).time_s
    best = min(times, key=times.get)
    assert best == "sparse_ring_ring", times


SPARSE_SCENARIO = {
    "name": "sparse",
    "topology": {"builder": "switch", "hosts": 4, "bandwidth": "100 Gbps", "latency": "1 us"},
    "collective": {"algorithms": ["ring", "sparse_ring", {"name": "sparse_ring_ring", "gpus_per_node": 2}]},
    "payload": {"kind": "sparse", "dimension": "4k", "density": ["1/16", "50%"], "seed": 2},
}


def test_scenario_payload_key_runs_every_dimension_and_density():
    from simnet.scenario import parse_scenario, run

    scenario = parse_scenario(SPARSE_SCENARIO)
    assert [(p.dimension, p.density) for p in scenario.payload.payloads()] == [(4000, 1 / 16), (4000, 0.5)]
    rows = run(scenario)
    assert len(rows) == 6 and set(rows["size_bytes"]) == {16_000}
    sparse = rows[rows["algorithm"] == "sparse_ring"]
    assert sparse["sim_time_s"].iloc[0] < sparse["sim_time_s"].iloc[1]


@pytest.mark.parametrize(
    "change, message",
    [
        ({"payload": {"kind": "sparse", "dimension": "4k", "density": "2"}}, "payload.density: must be ≤ 1, got '2'"),
        ({"payload": {"kind": "sparse", "dimension": "4k", "density": ["1/2", "2"]}}, "payload.density[1]: "),
        ({"payload": {"kind": "dense", "dimension": 10}}, "payload.kind"),
        ({"sizes": ["1 MiB"]}, "sizes: a sparse payload fixes the size"),
        ({"payload": None}, "collective.algorithms[1].payload: missing"),
    ],
)
def test_scenario_payload_errors_name_their_key(change, message):
    from simnet.errors import ScenarioError
    from simnet.scenario import parse_scenario

    data = {**SPARSE_SCENARIO, **change}
    if change.get("payload", 1) is None:
        data = {k: v for k, v in data.items() if k != "payload"} | {"sizes": ["1 KiB"]}
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(data)
    assert str(raised.value).startswith(message), str(raised.value)


def test_gtopk_breaks_magnitude_ties_by_lower_index(tmp_path):
    for rank in range(4):
        np.save(tmp_path / f"idx_{rank}.npy", np.arange(rank, 40, 4 - rank % 2))
    payload = SparsePayload(dimension=40, distribution="file", indices_file=str(tmp_path / "idx_{rank}.npy"))
    schedule = gtopk(4, payload.size_bytes, payload=payload, k=5)
    result = execute(schedule, payload).result(2)
    np.testing.assert_allclose(densify(result, 40), reference_gtopk(payload, 4, 5))


def test_trace_records_nnz_and_dense_form_per_transfer():
    from simnet.topology import switch

    payload = SparsePayload(dimension=4096, density=1 / 8, seed=3)
    schedule = ALGORITHMS["sparse_ring"].build(4, payload.size_bytes, payload=payload)
    frame = simulate(Network(switch(4, 1e9, 1e-6)), schedule).transfers()
    assert {"nnz", "dense", "merged"} <= set(frame.columns)
    assert (frame["nnz"] > 0).all() and frame["dense"].isin([True, False]).all()
    assert frame["merged"].max() == 4
    dense = simulate(Network(switch(4, 1e9, 1e-6)), ring_allreduce(4, 4096)).transfers()
    assert "nnz" not in dense.columns


@pytest.mark.parametrize("distribution", ["uniform", "zipf", "clustered"])
def test_vectors_made_on_threads_are_the_ones_made_in_turn(monkeypatch, distribution):
    """Large payloads generate the ranks' vectors on threads; every rank's vector is its own generator's."""
    from simnet.algorithms import sparse

    payload = SparsePayload(dimension=1 << 16, density=1 / 16, seed=7, distribution=distribution)
    in_turn = sparse._vectors(payload, 8, True)
    monkeypatch.setattr(sparse, "_THREADED_ENTRIES", 0)
    monkeypatch.setattr(sparse.os, "cpu_count", lambda: 4)
    on_threads = sparse._vectors(payload, 8, True)
    for a, b in zip(in_turn, on_threads):
        np.testing.assert_array_equal(a.indices, b.indices)
        np.testing.assert_array_equal(a.values, b.values)
    size = payload.size_bytes
    schedule = sparse_ring_ring(8, size, payload=payload, gpus_per_node=4)
    monkeypatch.setattr(sparse, "_THREADED_ENTRIES", 1 << 60)
    again = sparse_ring_ring(8, size, payload=payload, gpus_per_node=4)
    np.testing.assert_array_equal(schedule.transfers.nbytes, again.transfers.nbytes)


@settings(max_examples=60, deadline=None)
@given(
    span=st.integers(1, 700),
    base=st.integers(0, 1000),
    sizes=st.lists(st.integers(0, 700), min_size=2, max_size=5),
    as_bitmap=st.lists(st.booleans(), min_size=5, max_size=5),
    seed=st.integers(0, 2**16),
)
def test_index_unions_are_the_same_set_as_bitmaps_or_sorted_indices(span, base, sizes, as_bitmap, seed):
    """An index-only union is a bitmap once that is smaller; either way it is the sorted union of its parts."""
    from simnet.algorithms.sparse import _Part, _union

    rng = np.random.default_rng(seed)
    sets = [np.sort(rng.choice(span, min(size, span), replace=False)).astype(np.uint32) + np.uint32(base)
            for size in sizes]
    parts = []
    for rank, (indices, bitmap) in enumerate(zip(sets, as_bitmap)):
        if bitmap:
            words = [0] * -(-span // 64)
            for index in indices.tolist():
                words[(index - base) // 64] |= 1 << (index - base) % 64
            parts.append(_Part(1 << rank, None, None, bits=np.array(words, dtype=np.uint64), base=base))
        else:
            parts.append(_Part(1 << rank, indices, None))
    merged = _union(parts, (1 << len(parts)) - 1, base, span)
    want = np.union1d(np.concatenate(sets), np.empty(0, dtype=np.uint32))
    assert merged.nnz == want.size
    np.testing.assert_array_equal(merged.sorted_indices(np.dtype(np.uint32)), want)
    assert merged.sorted_indices(np.dtype(np.uint32)).dtype == np.uint32
    if merged.bits is None:
        assert 32 * sum(p.nnz for p in parts) < span and not any(p.bits is not None for p in parts)


def test_unions_of_a_chunk_too_large_for_a_bitmap_stay_sorted(monkeypatch):
    from simnet.algorithms import sparse

    monkeypatch.setattr(sparse, "_BITMAP_SPAN", 512)
    rng = np.random.default_rng(4)
    sets = [np.sort(rng.choice(700, 300, replace=False)).astype(np.uint32) + np.uint32(64) for _ in range(2)]
    merged = sparse._union([sparse._Part(1, sets[0], None), sparse._Part(2, sets[1], None)], 3, 64, 700)
    assert merged.bits is None
    np.testing.assert_array_equal(merged.indices, np.union1d(*sets))
    within = [np.sort(rng.choice(500, 200, replace=False)).astype(np.uint32) for _ in range(2)]
    small = sparse._union([sparse._Part(1, within[0], None), sparse._Part(2, within[1], None)], 3, 0, 500)
    assert small.bits is not None
    np.testing.assert_array_equal(small.sorted_indices(np.dtype(np.uint32)), np.union1d(*within))


@pytest.mark.parametrize("name", EXACT)
def test_index_only_execution_ends_with_the_same_index_sets(name):
    """Dense enough unions are bitmaps when values are not carried; the index sets are those with values."""
    payload = SparsePayload(dimension=5000, density=1 / 4, seed=3)
    schedule = build(name, 8, payload)
    with_values, index_only = execute(schedule, payload), execute(schedule, payload, values=False)
    assert with_values.nnz == index_only.nnz == tuple(t.nnz for t in schedule.transfers)
    for rank in range(8):
        np.testing.assert_array_equal(index_only.result(rank).indices, with_values.result(rank).indices)
        assert index_only.result(rank).indices.dtype == with_values.result(rank).indices.dtype


@pytest.mark.parametrize("name", SPARSE)
def test_unions_on_threads_give_the_schedule_of_unions_in_turn(monkeypatch, name):
    """Building a large schedule runs its index-only unions on worker threads while the executor goes on:
    every transfer's size, nonzeros, form and merged count are those of the unions done in turn."""
    from simnet.algorithms import sparse

    payload = SparsePayload(dimension=1 << 14, density=1 / 6, seed=11)
    monkeypatch.setattr(sparse, "_THREADED_ENTRIES", 1 << 60)
    in_turn = build(name, 8, payload).transfers
    monkeypatch.setattr(sparse, "_THREADED_ENTRIES", 0)
    monkeypatch.setattr(sparse.os, "cpu_count", lambda: 3)
    made = []

    class Spy(sparse._Threaded):
        def __init__(self, *args):
            super().__init__(*args)
            made.append(self)

    monkeypatch.setattr(sparse, "_Threaded", Spy)
    on_threads = build(name, 8, payload).transfers
    assert made or name == "gtopk"
    for column in ("nbytes", "nnz", "dense", "merged"):
        np.testing.assert_array_equal(getattr(on_threads, column), getattr(in_turn, column))


def test_a_union_that_fails_on_a_thread_fails_the_build(monkeypatch):
    from simnet.algorithms import sparse

    monkeypatch.setattr(sparse, "_THREADED_ENTRIES", 0)
    monkeypatch.setattr(sparse.os, "cpu_count", lambda: 2)
    union = sparse._union

    def broken(parts, key, base, span):
        if key.bit_count() == 3:
            raise MemoryError("no room for this union")
        return union(parts, key, base, span)

    monkeypatch.setattr(sparse, "_union", broken)
    payload = SparsePayload(dimension=4096, density=1 / 8, seed=2)
    with pytest.raises(MemoryError, match="no room"):
        sparse_ring(8, payload.size_bytes, payload=payload)


@pytest.mark.parametrize("density", [1 / 1024, 1 / 256, 1 / 16])
def test_sparse_ring_model_costs_the_ring_hop_by_hop(density):
    """4 ABCI-like nodes, N = 4M: 4 of the 16 hops leave a node. Charging all 30 steps the cross-node α and β gave
    146 µs at d = 1/1024 against 65 µs simulated (study F6); the slow hops busy with their messages give 60 µs."""
    network = abci_like(4)
    payload = SparsePayload(dimension=4_000_000, density=density, seed=1)
    simulated = simulate(network, build("sparse_ring", 16, payload)).time_s
    assert predict("sparse_ring", network, 16, payload.size_bytes, payload=payload) == pytest.approx(simulated, rel=0.1)


def test_sparse_ring_time_of_alike_hops_is_the_per_step_sum():
    payload = SparsePayload(dimension=10**5, density=1 / 32, seed=1)
    alike = sparse_ring_allreduce_time(8, payload, [2e-6] * 8, [1e-10] * 8, gamma_s_per_byte=1e-11)
    assert alike == pytest.approx(sparse_ring_allreduce_time(8, payload, 2e-6, 1e-10, gamma_s_per_byte=1e-11),
                                  rel=1e-12)
    slower = sparse_ring_allreduce_time(8, payload, [2e-6] * 7 + [5e-6], [1e-10] * 8)
    assert slower == pytest.approx(sparse_ring_allreduce_time(8, payload, 2e-6, 1e-10) + 2 * 3e-6, rel=1e-12)
