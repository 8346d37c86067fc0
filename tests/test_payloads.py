"""Tests of simnet.payloads: generated and loaded sparse vectors, and their wire encoding."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet.errors import SimnetError
from simnet.payloads import SparsePayload


@pytest.mark.parametrize("distribution", ["uniform", "zipf", "clustered"])
def test_vectors_are_sorted_unique_k_sparse_and_reproducible(distribution):
    payload = SparsePayload(dimension=100_000, density=1 / 64, distribution=distribution, seed=3, cluster=16)
    a, b = payload.vector(5), payload.vector(5)
    assert a.indices.dtype == np.uint32 and a.values.dtype == np.float32
    assert a.nnz == payload.k == 1562
    assert np.all(np.diff(a.indices.astype(np.int64)) > 0)
    assert int(a.indices[-1]) < payload.dimension
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.values, b.values)
    assert not np.array_equal(a.indices, payload.vector(6).indices)
    assert payload.vector(5, values=False).values is None


def test_rank_vector_does_not_depend_on_other_parameters_than_seed_and_rank():
    small = SparsePayload(dimension=50_000, density=0.01, seed=9)
    np.testing.assert_array_equal(small.vector(2).indices, SparsePayload(dimension=50_000, density=0.01, seed=9).vector(2).indices)
    assert not np.array_equal(small.vector(2).indices, SparsePayload(dimension=50_000, density=0.01, seed=10).vector(2).indices)


def test_zipf_ranks_overlap_more_than_uniform_ones():
    def union_size(distribution):
        payload = SparsePayload(dimension=200_000, density=1 / 32, distribution=distribution, seed=1)
        return np.union1d(payload.vector(0, values=False).indices, payload.vector(1, values=False).indices).size

    assert union_size("zipf") < 0.9 * union_size("uniform")


def test_clustered_indices_come_in_aligned_runs():
    payload = SparsePayload(dimension=64_000, density=1 / 16, distribution="clustered", cluster=40, seed=2)
    runs = np.unique(payload.vector(0).indices // 40)
    assert runs.size == payload.k // 40


def test_file_distribution_loads_and_sorts(tmp_path):
    np.save(tmp_path / "idx_0.npy", np.array([7, 2, 5], dtype=np.int64))
    np.save(tmp_path / "val_0.npy", np.array([0.7, 0.2, 0.5]))
    payload = SparsePayload(
        dimension=10,
        distribution="file",
        indices_file=str(tmp_path / "idx_{rank}.npy"),
        values_file=str(tmp_path / "val_{rank}.npy"),
    )
    vector = payload.vector(0)
    assert vector.indices.tolist() == [2, 5, 7]
    np.testing.assert_allclose(vector.values, [0.2, 0.5, 0.7])
    with pytest.raises(SimnetError) as missing:
        payload.vector(1)
    assert missing.value.path == "indices_file"


@pytest.mark.parametrize(
    "kwargs, path",
    [
        ({"dimension": 0}, "dimension"),
        ({"dimension": 10, "density": 0}, "density"),
        ({"dimension": 10, "density": 1.5}, "density"),
        ({"dimension": 10, "distribution": "normal"}, "distribution"),
        ({"dimension": 10, "index_bytes": 0}, "index_bytes"),
        ({"dimension": 10, "distribution": "file", "indices_file": "x.npy"}, "indices_file"),
    ],
)
def test_bad_parameters_name_their_key(kwargs, path):
    with pytest.raises(SimnetError) as error:
        SparsePayload(**kwargs)
    assert error.value.path == path


def test_encoding_switches_to_dense_only_when_strictly_smaller():
    payload = SparsePayload(dimension=1000, index_bytes=4, value_bytes=4, header_bytes=4)
    assert payload.encoded_bytes(10, 100) == (4 + 80, False)
    assert payload.encoded_bytes(50, 100) == (4 + 400, False)
    assert payload.encoded_bytes(51, 100) == (4 + 400, True)
    assert payload.encoded_bytes(1, 100, dense=True) == (4 + 400, True)
    assert payload.size_bytes == 4000


@settings(max_examples=80, deadline=None)
@given(
    size=st.integers(1, 3000),
    share=st.floats(0.0, 1.0),
    ties=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_the_smallest_draws_are_those_a_full_partition_picks(size, share, ties, seed):
    """Keeping a random k of the candidates drops the positions of the smallest draws; partitioning only the
    draws under a bound picks the same positions, ties at the cut included."""
    from simnet.payloads import _smallest

    rng = np.random.default_rng(seed)
    draws = rng.integers(0, 50, size) / 50 if ties else rng.random(size)
    count = max(1, min(size, round(share * size)))
    picked = _smallest(draws, count)
    assert sorted(picked.tolist()) == sorted(np.argpartition(draws, count - 1)[:count].tolist())


def test_the_smallest_draws_when_too_few_fall_under_the_bound():
    from simnet.payloads import _smallest

    draws = np.full(1000, 0.75)
    draws[[3, 500]] = 0.001
    assert sorted(_smallest(draws, 5).tolist()) == sorted(np.argpartition(draws, 4)[:5].tolist())
