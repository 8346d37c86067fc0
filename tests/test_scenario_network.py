"""The ``network:`` keys of a scenario reach the engine in SI units (fidelity options)."""

import pytest

from simnet.errors import ScenarioError
from simnet.algorithms.dense import ring_allreduce_time
from simnet.scenario import parse_scenario, run

B = 12.5e9
BASE = {
    "name": "fidelity",
    "topology": {"builder": "switch", "hosts": 4, "bandwidth": "100 Gbps", "latency": "1 us"},
    "collective": {"algorithms": ["ring"]},
    "sizes": ["4 MiB"],
}


def scenario(**network):
    return parse_scenario(BASE | {"network": network})


def test_maxmin_is_the_default_model():
    assert parse_scenario(BASE).network.model == "maxmin"
    assert run(parse_scenario(BASE))["network_model"].tolist() == ["maxmin"]


def test_overhead_reduce_bandwidth_and_tier_efficiency_reach_the_simulation():
    size, m = 4 * 2**20, 2**20
    spec = scenario(overhead="3 us", reduce_bandwidth="100 GB/s", tier_efficiency={"fabric": "80%"})
    row = run(spec).iloc[0]
    expected = ring_allreduce_time(4, size, 2e-6 + 3e-6, 1 / (0.8 * B)) + 3 * m / 100e9
    assert row["sim_time_s"] == pytest.approx(expected, rel=1e-9)
    assert row["model_time_s"] == pytest.approx(expected, rel=1e-9)


def test_stragglers_and_start_offsets_are_per_rank_mappings():
    options = scenario(stragglers={2: 3.0}, start_offset={1: "5 us"}).network.simulate_kwargs(4)
    assert options["slowdown"] == [1.0, 1.0, 3.0, 1.0]
    assert options["start_offset_s"] == pytest.approx([0.0, 5e-6, 0.0, 0.0], rel=1e-12)
    late = run(scenario(start_offset={0: "5 us"}))["sim_time_s"].iloc[0]
    assert late > run(parse_scenario(BASE))["sim_time_s"].iloc[0]


@pytest.mark.parametrize(
    ("network", "path", "message"),
    [
        ({"tier_efficiency": {"nvlink": 0.5}}, "network.tier_efficiency.nvlink", "no tier 'nvlink'"),
        ({"tier_efficiency": {"fabric": 1.5}}, "network.tier_efficiency.fabric", "less than or equal to 1"),
        ({"stragglers": {7: 2.0}}, "network.stragglers[7]", "no rank 7"),
        ({"start_offset": {0: "-1 us"}}, "network.start_offset[0]", "≥ 0"),
        ({"overhead": "5 GB"}, "network.overhead", "unknown unit"),
        ({"model": "ideal"}, "network.model", "must be one of"),
    ],
)
def test_bad_network_keys_name_their_path(network, path, message):
    with pytest.raises(ScenarioError, match=message) as info:
        scenario(**network)
    assert info.value.path == path


TWO_CABLES = {"builder": "leaf_spine", "leaves": 2, "spines": 1, "hosts_per_leaf": 8, "bandwidth": "100 Gbps",
              "latency": "1 us", "parallel": 4, "oversubscription": 2.0}


def test_routing_and_bundles_override_the_topology_per_scenario():
    """Recursive doubling across an oversubscribed leaf pair: d-mod-k pins the 8 crossing flows two per cable
    (each at half a cable), ECMP hashes some three to a cable; one merged link shares them perfectly."""
    base = BASE | {"topology": TWO_CABLES, "collective": {"algorithms": ["recursive_doubling"]}}
    times = {}
    for network in ({}, {"routing": "ecmp_hash"}, {"bundles": "merged"}, {"routing": "ecmp_hash", "bundles": "merged"}):
        times[tuple(network.values())] = run(parse_scenario(base | {"network": network}))["sim_time_s"].iloc[0]
    assert times[()] == pytest.approx(times[("merged",)], rel=1e-12)
    assert times[("merged",)] == times[("ecmp_hash", "merged")]
    assert times[("ecmp_hash",)] > times[()]


def test_result_rows_name_the_routing_in_force_and_the_seed_only_where_it_hashes():
    """Study r26 F3: only manifest.json named the routing and seed, so a one-seed ECMP run and a d-mod-k run
    printed the same header and rows."""
    base = BASE | {"topology": TWO_CABLES}
    rows = {name: run(parse_scenario(base | {"network": network})).iloc[0]
            for name, network in (("default", {}), ("seed", {"routing": "ecmp_hash", "hash_seed": 3}),
                                  ("shortest", {"routing": "shortest"}))}
    assert (rows["default"]["routing"], rows["default"]["hash_seed"]) == ("dmodk", "")
    assert (rows["seed"]["routing"], rows["seed"]["hash_seed"]) == ("ecmp_hash", 3)
    assert (rows["shortest"]["routing"], rows["shortest"]["hash_seed"]) == ("shortest", "")


@pytest.mark.parametrize(("key", "value"), [("routing", "ospf"), ("bundles", "striped")])
def test_bad_routing_or_bundles_name_the_key(key, value):
    with pytest.raises(ScenarioError) as error:
        scenario(**{key: value})
    assert error.value.path == f"network.{key}"


def test_rtt_weighted_sharing_is_a_scenario_option_of_the_maxmin_model():
    """On a switch every route has the same latency, so weighting by it changes nothing."""
    spec = scenario(sharing="rtt_weighted")
    assert spec.network.simulate_kwargs(4)["sharing"] == "rtt_weighted"
    assert run(spec)["sim_time_s"].iloc[0] == run(parse_scenario(BASE))["sim_time_s"].iloc[0]
    with pytest.raises(ScenarioError) as error:
        scenario(sharing="rtt_weighted", model="fifo")
    assert error.value.path == "network.sharing"


def test_a_routing_the_topology_cannot_take_is_an_error_at_validation():
    """d-mod-k needs a fabric of levels (a torus' routers are all one level); dimension order a torus."""
    link = {"bandwidth": "25 GB/s", "latency": "1 us"}
    for topology, routing in (({"builder": "torus", "dims": [4], **link}, "dmodk"),
                              ({"builder": "ring", "hosts": 4, **link}, "dimension_order")):
        with pytest.raises(ScenarioError) as error:
            parse_scenario(BASE | {"topology": topology, "network": {"routing": routing}})
        assert error.value.path == "network.routing" and "\n" not in str(error.value)


def test_a_sweep_over_the_ecmp_hash_seed_varies_the_hash_luck_and_seed_0_is_the_default_hash():
    """Recursive doubling over two cables per leaf pair: which flows share a cable depends on the hash, so
    some seeds give other times than others, and seed 0 is the hash of a scenario that names no seed."""
    base = BASE | {"topology": TWO_CABLES, "collective": {"algorithms": ["recursive_doubling"]},
                   "network": {"routing": "ecmp_hash"}}
    unseeded = run(parse_scenario(base))["sim_time_s"].iloc[0]
    swept = run(parse_scenario(base | {"sweep": {"grid": {"network.hash_seed": [0, 1, 2, 3, 4, 5]}}}))
    times = swept.set_index("point")["sim_time_s"]
    assert times["network.hash_seed=0"] == unseeded
    assert len(set(times)) > 1


@pytest.mark.parametrize(("network", "message"), [
    ({"hash_seed": 3}, "only routing 'ecmp_hash' hashes, and the routing is 'dmodk'"),
    ({"routing": "ecmp_hash", "hash_seed": -1}, "≥ 0"),
])
def test_a_hash_seed_that_would_change_nothing_or_is_no_seed_is_refused(network, message):
    with pytest.raises(ScenarioError, match=message) as error:
        parse_scenario(BASE | {"topology": TWO_CABLES, "network": network})
    assert error.value.path == "network.hash_seed"


def test_a_scenario_takes_per_level_tiers_and_names_a_bad_value():
    data = {"name": "t", "topology": {"builder": "fat_tree", "k": 4, "bandwidth": "100 Gbps", "latency": "1 us",
                                      "tiers": "per_level"},
            "collective": {"op": "allreduce", "algorithms": ["ring"]}, "sizes": ["1 MiB"]}
    plain = {**data, "topology": {k: v for k, v in data["topology"].items() if k != "tiers"}}
    assert run(parse_scenario(data))["sim_time_s"].tolist() == run(parse_scenario(plain))["sim_time_s"].tolist()
    with pytest.raises(ScenarioError, match="must be .per_level.") as error:
        run(parse_scenario({**data, "topology": {**data["topology"], "tiers": "levels"}}))
    assert error.value.path == "topology.tiers"
