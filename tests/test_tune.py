import math

import pytest

from simnet.errors import UnitError
from simnet.topology import cluster, find, load
from simnet.algorithms.hierarchical import factorizations as _factorizations
from simnet.tune import candidates, parse_size_range, tune, tuner_table


def test_size_ranges():
    assert parse_size_range("1KiB..8KiB") == [1024, 2048, 4096, 8192]
    assert parse_size_range("1KiB..1GiB:x1024") == [2**10, 2**20, 2**30]
    assert parse_size_range("1 KiB, 64 MiB") == [1024, 64 * 2**20]
    for bad in ("8KiB..1KiB", "1KiB..1GiB:y2", "1KiB..1GiB:x1", "1 parsec..2 KiB"):
        with pytest.raises(UnitError):
            parse_size_range(bad)


def test_blueconnect_factorizations_are_orderings_of_coarsenings():
    found = _factorizations((2, 2, 8))
    assert set(found) == {(2, 2, 8), (2, 8, 2), (8, 2, 2), (4, 8), (8, 4), (2, 16), (16, 2)}
    assert all(math.prod(f) == 32 for f in found)


def test_candidates_follow_the_hierarchy():
    flat = candidates(load(find("switch8")))
    assert {name for name, _ in flat} == {"ring", "recursive_doubling", "halving_doubling", "binomial_tree",
                                          "double_binary_tree"}
    names = {name for name, _ in candidates(load(find("power9_cluster")))}
    assert {"blueconnect", "hierarchical_ring", "torus_2d"} <= names


def slow_power9_cluster():
    """Four AC922 nodes whose InfiniBand ports run at 10 Gb/s: the inter-node level is the bottleneck."""
    return cluster("power9_ac922", 4, node_params={"nic_bandwidth_Bps": 1.25e9},
                   fabric_params={"bandwidth_Bps": 1.25e9, "latency_s": 5e-6})


def assert_simulation_confirms(tuned):
    table = tuner_table(tuned)
    for row in table.itertuples():
        at_sizes = tuned[(tuned["size_bytes"] >= row.from_bytes) & (tuned["size_bytes"] <= row.to_bytes)]
        for _, group in at_sizes.groupby("size_bytes"):
            chosen = group[group["choice"] == row.choice]["simulated_s"]
            assert len(chosen) == 1 and not math.isnan(chosen.iloc[0])
            assert chosen.iloc[0] == pytest.approx(group["simulated_s"].min(), rel=1e-9)
    return table


def test_tuner_picks_a_blueconnect_factorization_on_a_power9_cluster_with_slow_links_and_names_it():
    """Halving-doubling is BlueConnect with every factor 2 (Cho et al. 2019), so either names its factors."""
    tuned = tune(slow_power9_cluster(), [2**12, 2**24], top=3, channel_counts=(1, 2))
    table = assert_simulation_confirms(tuned)
    large = table[table["to_bytes"] == 2**24].iloc[0]
    assert large["algorithm"] in ("blueconnect", "halving_doubling")
    assert large["blueconnect_factors"]
    assert large["algorithm"] == "halving_doubling" or large["blueconnect_factors"] in large["choice"]
    assert large["model_first"]
    assert large["simulated_s"] < tuned[(tuned["size_bytes"] == 2**24) & (tuned["algorithm"] == "ring")][
        "predicted_s"].min()


def test_tuner_on_a_four_node_dgx_a100_cluster_is_confirmed_by_simulation():
    tuned = tune(load(find("dgx_a100_superpod_slice")), [2**12, 2**26], top=2, channel_counts=(1, 8),
                 chunk_counts=(1, 4))
    table = assert_simulation_confirms(tuned)
    assert table["from_bytes"].iloc[0] == 2**12 and table["to_bytes"].iloc[-1] == 2**26
    assert (tuned.groupby("size_bytes")["sim_rank"].count() >= 2).all()


def test_winners_name_the_blueconnect_factorization_they_amount_to():
    from simnet.tune import as_blueconnect

    assert as_blueconnect("blueconnect", '{"chunks": 4, "factors": [4, 8]}', 32) == "[4, 8]"
    assert as_blueconnect("halving_doubling", '{"chunks": 1}', 32) == "[2, 2, 2, 2, 2]"
    assert as_blueconnect("halving_doubling", "{}", 24) == ""
    assert as_blueconnect("ring", '{"channels": 1, "chunks": 4}', 16) == "[16]"
    assert as_blueconnect("ring", '{"channels": 2, "chunks": 4}', 16) == ""
    assert as_blueconnect("recursive_doubling", "{}", 16) == ""


def test_top_must_be_positive():
    with pytest.raises(Exception, match="must be ≥ 1"):
        tune(load(find("switch8")), [1024], top=0)
