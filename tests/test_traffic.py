"""Traffic matrices and background patterns: exact totals, proportions, seeds."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet.errors import SimnetError
from simnet.schedule import split_bytes
from simnet.traffic import TrafficMatrix, cyclic_permutation, pattern_targets, round_shares

KINDS = [TrafficMatrix("uniform"), TrafficMatrix("zipf", exponent=1.5, seed=4),
         TrafficMatrix("hotspot", hotspots=1, fraction=0.8, seed=2)]


@given(st.integers(1, 40), st.integers(1, 10**9), st.sampled_from(KINDS))
@settings(max_examples=60, deadline=None)
def test_a_matrix_moves_exactly_p_times_size_bytes_in_whole_bytes(nranks, size, matrix):
    data = matrix.bytes(nranks, size)
    assert data.dtype == np.int64 and data.shape == (nranks, nranks) and (data >= 0).all()
    assert int(data.sum()) == nranks * size


@given(st.integers(1, 30), st.integers(1, 10**7))
@settings(max_examples=40, deadline=None)
def test_a_uniform_matrix_is_the_blocks_of_alltoall(nranks, size):
    assert TrafficMatrix("uniform").bytes(nranks, size).tolist() == [split_bytes(size, nranks)] * nranks


@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=30), st.integers(0, 10**12))
@settings(max_examples=80, deadline=None)
def test_shares_sum_to_the_total_and_stay_within_one_byte_of_the_proportion(weights, total):
    weights = np.array(weights)
    if weights.sum() <= 0:
        weights[0] = 1.0
    shares = round_shares(total, weights)
    assert int(shares.sum()) == total and (shares >= 0).all()
    exact = total * weights / weights.sum()
    assert (np.abs(shares - exact) <= 1 + 1e-9 * total).all()
    assert (shares[weights == 0] == 0).all()


def test_zipf_skew_follows_popularity_ranks_and_the_seed():
    data = TrafficMatrix("zipf", exponent=2.0, seed=7).weights_for(6)
    ranks = np.sort(1 / np.sqrt(data[0]))
    assert np.allclose(ranks, np.arange(1, 7)) and (data == data[0]).all()
    assert np.array_equal(data, TrafficMatrix("zipf", exponent=2.0, seed=7).weights_for(6))
    assert not np.array_equal(data, TrafficMatrix("zipf", exponent=2.0, seed=8).weights_for(6))


def test_hot_ranks_receive_their_fraction_of_every_row():
    weights = TrafficMatrix("hotspot", hotspots=2, fraction=0.6, seed=0).weights_for(10)
    hot = weights[0] > weights[0].min()
    assert hot.sum() == 2
    assert np.allclose(weights[:, hot].sum(axis=1) / weights.sum(axis=1), 0.6)


@pytest.mark.parametrize(("kwargs", "path"), [
    ({"kind": "gaussian"}, "kind"), ({"kind": "zipf", "exponent": 0}, "exponent"), ({"seed": -1}, "seed"),
    ({"kind": "hotspot", "fraction": 1.5}, "fraction"), ({"kind": "explicit"}, "weights"),
    ({"kind": "explicit", "weights": np.ones((2, 3))}, "weights"),
    ({"kind": "explicit", "weights": [[1, -1], [0, 0]]}, "weights"),
    ({"kind": "explicit", "weights": np.zeros((2, 2))}, "weights"),
])
def test_bad_matrices_are_refused_with_the_parameter_path(kwargs, path):
    with pytest.raises(SimnetError) as error:
        TrafficMatrix(**kwargs)
    assert error.value.path == path


def test_matrices_compare_by_content():
    assert TrafficMatrix("explicit", weights=np.eye(3)) == TrafficMatrix("explicit", weights=np.eye(3))
    assert TrafficMatrix("explicit", weights=np.eye(3)) != TrafficMatrix("explicit", weights=2 * np.eye(3))
    assert hash(TrafficMatrix("zipf", seed=1)) == hash(TrafficMatrix("zipf", seed=1))


@given(st.integers(2, 200), st.integers(0, 2**32))
@settings(max_examples=40, deadline=None)
def test_a_cyclic_permutation_is_one_cycle_through_every_rank(nranks, seed):
    target = cyclic_permutation(nranks, seed)
    seen, rank = set(), 0
    while rank not in seen:
        seen.add(rank)
        rank = int(target[rank])
    assert len(seen) == nranks and rank == 0


def test_random_destinations_never_pick_the_sender_and_follow_the_seed():
    first = pattern_targets("random", 50, np.random.default_rng(3))
    assert (first != np.arange(50)).all()
    assert np.array_equal(first, pattern_targets("random", 50, np.random.default_rng(3)))
