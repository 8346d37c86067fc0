import contextlib
import functools
import json
import math
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from unittest import mock

import pandas as pd
import pytest

from simnet.errors import ScenarioError, SimnetError
from simnet.scenario import build_topology, load_scenario, parse_scenario, run
from simnet.topology import cluster, find, load
from simnet.algorithms.hierarchical import factorizations as _factorizations
from simnet.tune import PRUNE_FACTOR, candidates, display_tuner_table, tune, tuner_table


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


def test_algorithms_restricts_the_candidates_and_the_tuned_rows():
    graph = load(find("power9_cluster"))
    tuned = tune(graph, [1 << 20], algorithms=["blueconnect", "ring"], chunk_counts=(1,), channel_counts=(1,))
    assert set(tuned["algorithm"]) == {"ring", "blueconnect"}
    factors = {tuple(json.loads(p)["factors"]) for a, p in zip(tuned["algorithm"], tuned["params"])
               if a == "blueconnect"}
    assert factors == {(2, 2, 8), (2, 8, 2), (8, 2, 2), (4, 8), (8, 4), (2, 16), (16, 2)}
    assert candidates(graph, algorithms=["ring"]) == [c for c in candidates(graph) if c[0] == "ring"]


@pytest.mark.parametrize(("names", "nccl", "message"), [
    (["blueconect"], False, "unknown algorithm 'blueconect' for allreduce; did you mean 'blueconnect'? (tune tries "
                            "ring, recursive_doubling, binomial_tree, double_binary_tree, halving_doubling, "
                            "hierarchical_ring, torus_2d, blueconnect)"),
    (["ring", "sparse_ring"], False, "tune tries no 'sparse_ring' here: it reduces sparse payloads"),
    (["nccl_ring"], False, "tune tries no 'nccl_ring' here: NCCL's schedules are tried with nccl (--nccl)"),
    ([], False, "must name at least one algorithm"),
])
def test_algorithms_names_an_algorithm_it_cannot_tune_in_one_line(names, nccl, message):
    with pytest.raises(SimnetError) as raised:
        tune(load(find("power9_cluster")), [1 << 20], algorithms=names, nccl=nccl)
    assert raised.value.path == "algorithms" and message in raised.value.message


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
    """Halving-doubling is BlueConnect with every factor 2 (Cho et al. 2019), so either names its factors.

    The model ranks the winner first or level with it: with 4 chunks halving-doubling and BlueConnect [4, 2, 2]
    are both bound by the slow inter-node link's load, the same time (the name breaks the tie)."""
    tuned = tune(slow_power9_cluster(), [2**12, 2**24], channel_counts=(1, 2))
    table = assert_simulation_confirms(tuned)
    large = table[table["to_bytes"] == 2**24].iloc[0]
    assert large["algorithm"] in ("blueconnect", "halving_doubling")
    assert large["blueconnect_factors"]
    assert large["algorithm"] == "halving_doubling" or large["blueconnect_factors"] in large["choice"]
    at_large = tuned[tuned["size_bytes"] == 2**24]
    assert large["predicted_s"] == at_large["predicted_s"].min()
    assert large["simulated_s"] < tuned[(tuned["size_bytes"] == 2**24) & (tuned["algorithm"] == "ring")][
        "predicted_s"].min()


def test_tuner_on_a_four_node_dgx_a100_cluster_is_confirmed_by_simulation():
    tuned = tune(load(find("dgx_a100_superpod_slice")), [2**12, 2**26], channel_counts=(1, 8),
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


def test_prune_factor_must_be_at_least_one():
    for bad in (0.5, math.nan):
        with pytest.raises(SimnetError, match="must be ≥ 1") as info:
            tune(load(find("switch8")), [1024], prune_factor=bad)
        assert info.value.path == "prune_factor"


@pytest.mark.parametrize(("topology", "network"), [("dgx1", {}), ("ring8", {"model": "fifo"})])
def test_pruned_candidates_are_those_priced_beyond_the_factor_of_the_best_time_known(topology, network):
    tuned = tune(load(find(topology)), [2**10, 2**26], network=network, channel_counts=(1, 2), prune_factor=1.2)
    for _, group in tuned.groupby("size_bytes"):
        reference = max(group["predicted_s"].min(), group["simulated_s"].min())
        beyond = group["predicted_s"] > 1.2 * reference
        assert beyond[group["pruned"]].all() and not group["pruned"][~beyond].any()
        assert group["simulated_s"].isna().tolist() == group["pruned"].tolist()
        assert group.sort_values("model_rank")["pruned"].is_monotonic_increasing
        assert group["sim_rank"].notna().sum() == (~group["pruned"]).sum() >= 1


TOPOLOGIES = ["switch8", "ring8", "dgx1", "dgx_h100", "power9_ac922", "abci_node", "fat_tree_k4"]


@pytest.mark.parametrize("topology", TOPOLOGIES)
def test_pruning_keeps_the_simulated_winner(topology):
    """Pruned and unpruned tuning choose the same winner at every size (benchmarks/tune.py --check-pruning
    holds it on every shipped topology and 1 KiB .. 1 GiB)."""
    graph = load(find(topology))
    sizes = [2**10, 2**16, 2**22, 2**28]
    everything = tuner_table(tune(graph, sizes, prune_factor=math.inf, channel_counts=(1, 2, 4)))
    pruned = tuner_table(tune(graph, sizes, channel_counts=(1, 2, 4)))
    columns = ["from_bytes", "to_bytes", "choice", "simulated_s"]
    assert pruned[columns].equals(everything[columns])


@pytest.mark.parametrize("name", ["blueconnect.yaml", "ring_channels.yaml", "torus_2d.yaml"])
def test_pruning_keeps_the_simulated_winner_on_shipped_scenarios(name):
    """On a scenario's topology and network block (these run fifo links). On the rings of ring_channels and
    torus_2d at 1 KiB, recursive doubling simulates at twice its model time over FIFO links and the winning
    ring's model time is 1.9 times the best: pruning against the best model time alone would drop it."""
    scenario = load_scenario(Path(__file__).resolve().parents[1] / "scenarios" / name)
    graph = build_topology(scenario.topology)
    network = scenario.network.model_dump(mode="json", exclude_defaults=True)
    sizes = [2**10, 2**18, 2**26]
    everything = tuner_table(tune(graph, sizes, network=network, prune_factor=math.inf, channel_counts=(1, 2)))
    pruned = tuner_table(tune(graph, sizes, network=network, channel_counts=(1, 2)))
    columns = ["from_bytes", "to_bytes", "choice", "simulated_s"]
    assert pruned[columns].equals(everything[columns])


def test_pruning_keeps_the_winner_on_a_calibrated_cluster():
    network = {"tier_efficiency": {"ib": "85%", "nvlink": "80%"}, "overhead": "5 us",
               "reduce_bandwidth": "200 GB/s"}
    graph = slow_power9_cluster()
    sizes = [2**10, 2**20, 2**26]
    everything = tuner_table(tune(graph, sizes, network=network, prune_factor=math.inf))
    pruned = tuner_table(tune(graph, sizes, network=network))
    assert pruned["choice"].tolist() == everything["choice"].tolist()


def test_tuned_times_are_the_times_run_simulates_with_the_same_network_block():
    network = {"tier_efficiency": {"nvlink": "80%", "pcie": "90%"}, "overhead": "2 us",
               "reduce_bandwidth": "100 GB/s", "model": "fifo", "stragglers": {3: 1.5}}
    sizes = [2**12, 2**24]
    tuned = tune(load(find("dgx1")), sizes, network=network, channel_counts=(1, 2))
    plain = tune(load(find("dgx1")), sizes, channel_counts=(1, 2))
    assert not plain["simulated_s"].equals(tuned["simulated_s"])
    simulated = tuned.dropna(subset=["simulated_s"])
    listed = ({"name": row.algorithm, **json.loads(row.params)} for row in simulated.itertuples())
    algorithms = list({json.dumps(entry, sort_keys=True): entry for entry in listed}.values())
    scenario = parse_scenario({"name": "calibrated", "topology": {"file": "dgx1"}, "network": network,
                               "collective": {"op": "allreduce", "algorithms": algorithms},
                               "sizes": [f"{size} B" for size in sizes]})
    ran = run(scenario)
    ran["choice"] = [f"{a} {p}" for a, p in zip(ran["algorithm"], ran["params"])]
    by_run = {(row.size_bytes, row.algorithm, json.loads(row.params).get("chunks"),
               json.loads(row.params).get("channels"), str(json.loads(row.params).get("factors"))):
              (row.sim_time_s, row.model_time_s) for row in ran.itertuples()}
    for row in simulated.itertuples():
        params = json.loads(row.params)
        key = (row.size_bytes, row.algorithm, params.get("chunks"), params.get("channels"),
               str(params.get("factors")))
        assert by_run[key] == (row.simulated_s, row.predicted_s)


def test_a_bad_network_block_names_its_key():
    with pytest.raises(ScenarioError, match="network.overhead: 5 needs a unit"):
        tune(load(find("switch8")), [1024], network={"overhead": 5})
    with pytest.raises(ScenarioError, match="network.tier_efficiency.nvlink: the topology has no tier 'nvlink'"):
        tune(load(find("switch8")), [1024], network={"tier_efficiency": {"nvlink": 0.5}})


def test_the_table_says_which_size_its_figures_are_for():
    tuned = tune(load(find("switch8")), [2**10, 2**12, 2**14])
    table = tuner_table(tuned)
    assert (table["at_bytes"] == table["to_bytes"]).all()
    for row in table.itertuples():
        at = tuned[(tuned["size_bytes"] == row.at_bytes) & (tuned["choice"] == row.choice)]
        assert at["simulated_s"].iloc[0] == row.simulated_s and at["predicted_s"].iloc[0] == row.predicted_s
    shown = display_tuner_table(table)
    assert shown.columns[:4].tolist() == ["sizes", "choice", "as BlueConnect", "at size"]
    assert shown["at size"].iloc[-1] == "16 KiB"


def test_the_default_prune_factor_is_the_documented_one():
    import inspect

    assert inspect.signature(tune).parameters["prune_factor"].default == PRUNE_FACTOR == 1.5


@functools.cache
def _tuned_dgx_h100():
    from simnet.network import Network

    graph = load(find("dgx_h100"))
    sizes = [64 << 10, 1 << 20, 16 << 20, 256 << 20]
    return graph, Network(graph), tune(graph, sizes, nccl=True), tune(graph, sizes)


def test_nccl_candidates_are_pruned_among_themselves_and_leave_the_others_unchanged():
    _, _, with_nccl, without = _tuned_dgx_h100()
    from simnet.algorithms import ALGORITHMS
    from simnet.algorithms.nccl import NCCL_NAMES

    nccl = with_nccl["algorithm"].isin(list(NCCL_NAMES))
    all_reduce = {name for name in NCCL_NAMES if "allreduce" in ALGORITHMS[name].ops}
    assert set(with_nccl.loc[nccl, "algorithm"]) == all_reduce - {"nvls_tree", "collnet_direct", "collnet_chain"}
    columns = ["size_bytes", "choice", "predicted_s", "simulated_s", "pruned"]
    others = with_nccl.loc[~nccl, columns].reset_index(drop=True)
    pd.testing.assert_frame_equal(others, without[columns].reset_index(drop=True))
    for _, group in with_nccl[nccl].groupby("size_bytes"):
        best_model = group["predicted_s"].min()
        assert not group.loc[group["predicted_s"] <= PRUNE_FACTOR * best_model, "pruned"].any()
        assert group["resolved"].str.contains('"channels"').any()


def test_the_python_table_says_what_a_winner_outside_nccls_family_paid():
    """Study r23: in Python, tune() named halving_doubling the best at 1 MiB beside NCCL's schedules with no word
    that it paid link latencies only; the command line printed that note."""
    from simnet.analysis import NCCL_COMPARISON_NOTE
    from simnet.algorithms.nccl import NCCL_NAMES

    _, _, with_nccl, without = _tuned_dgx_h100()
    table = tuner_table(with_nccl)
    assert not table["algorithm"].isin(list(NCCL_NAMES)).all()
    assert table.attrs["note"] == NCCL_COMPARISON_NOTE
    shown = display_tuner_table(table)
    assert shown.attrs["note"] == NCCL_COMPARISON_NOTE
    assert shown["costs"].tolist() == ["NCCL's" if name in NCCL_NAMES else "links only" for name in table["algorithm"]]
    plain = display_tuner_table(tuner_table(without))
    assert "costs" not in plain and not plain.attrs.get("note")


def test_the_emitted_nccl_tuner_file_parses_and_runs_each_size_on_its_fastest_simulated_nccl_schedule():
    from simnet.algorithms.nccl import NCCL_NAMES
    from simnet.models.nccl import parse_tuner_csv, tuner_lookup, tuner_rows_to_csv
    from simnet.tune import nccl_tuner_rows

    _, network, tuned, _ = _tuned_dgx_h100()
    rows, comments = nccl_tuner_rows(tuned, network)
    text = tuner_rows_to_csv(rows, comments)
    assert parse_tuner_csv(text) == rows
    assert rows[0].min_bytes == 0 and rows[-1].max_bytes == 2**64 - 1
    assert all(b.min_bytes == a.max_bytes + 1 for a, b in zip(rows, rows[1:]))
    assert {(row.n_nodes, row.n_ranks) for row in rows} == {(1, 8)}
    for size, group in tuned[tuned["algorithm"].isin(list(NCCL_NAMES))].groupby("size_bytes"):
        best = group.sort_values("sim_rank").iloc[0]
        values = json.loads(best["params"]) | (json.loads(best["resolved"]) if best["resolved"] else {})
        row = tuner_lookup(rows, "allreduce", int(size), 1, 8)
        assert (row.algorithm, row.protocol) == (NCCL_NAMES[best["algorithm"]], values.get("protocol", "simple"))
        if "channels" in values:
            assert row.channels == values["channels"]
    assert comments[0].startswith("written by simnet tune: NCCL 2.30.7 schedules simulated on dgx_h100()")
    pruned = int(tuned.loc[tuned["algorithm"].isin(list(NCCL_NAMES)), "pruned"].sum())
    assert pruned and f"fastest of the NCCL schedules simulated: {pruned} NCCL candidate(s)" in " ".join(comments)
    _, unpruned = nccl_tuner_rows(tuned.assign(pruned=False), network)
    assert not any("were not simulated" in line for line in unpruned)


def test_the_tuner_files_fastest_candidate_is_the_tables_winner_ties_included():
    """Two generic schedules tied in simulated time: the table ranks them (by model rank), and the file names
    the table's winner, not the other one."""
    from simnet.algorithms.nccl import NCCL_NAMES
    from simnet.tune import nccl_tuner_rows

    _, network, tuned, _ = _tuned_dgx_h100()
    tied = tuned.copy()
    generic = tied[tied["simulated_s"].notna() & ~tied["algorithm"].isin(list(NCCL_NAMES))]
    winners = {}
    for size, group in generic.groupby("size_bytes"):
        first, second = group.sort_values("sim_rank").index[:2]
        tied.loc[second, "simulated_s"] = tied.loc[first, "simulated_s"]
        tied.loc[[first, second], "sim_rank"] = tied.loc[[second, first], "sim_rank"].to_numpy()
        winners[size] = tied.loc[second, "choice"]
    _, comments = nccl_tuner_rows(tied, network)
    text = " ".join(comments).replace("# ", "")
    for size, choice in winners.items():
        if tied[tied["size_bytes"] == size].sort_values("sim_rank").iloc[0]["choice"] == choice:
            assert f"fastest candidate {choice}" in text


def test_no_tuner_file_where_nccl_has_no_model(tmp_path, capsys):
    from simnet.cli import main
    from simnet.network import Network
    from simnet.tune import nccl_tuner_rows

    graph = load(find("switch8"))
    tuned = tune(graph, [1 << 20], nccl=True)
    assert not tuned["algorithm"].str.startswith(("nccl_", "nvls", "collnet")).any()
    with pytest.raises(SimnetError, match="no NCCL schedule was simulated") as raised:
        nccl_tuner_rows(tuned, Network(graph))
    assert raised.value.path == "nccl"
    target = tmp_path / "nccl_tuner.conf"
    assert main(["tune", "switch8", "--sizes", "1MiB", "--emit", "nccl-tuner", str(target), "-q"]) == 2
    assert capsys.readouterr().err.startswith("error: --emit: NCCL's model exists for servers of GPUs on one NVSwitch")
    assert not target.exists()


def test_tuner_file_comments_stay_within_the_plugins_line_buffer_on_a_long_topology_name():
    from simnet.models.nccl import tuner_rows_to_csv
    from simnet.models.nccl.tuner import MAX_LINE_LENGTH
    from simnet.tune import nccl_tuner_rows

    _, network, tuned, _ = _tuned_dgx_h100()
    name = network.graph.graph["name"]
    network.graph.graph["name"] = "dgx_h100 " + "with a very long description " * 20
    try:
        rows, comments = nccl_tuner_rows(tuned, network)
    finally:
        network.graph.graph["name"] = name
    text = tuner_rows_to_csv(rows, comments)
    assert max(len(line.encode()) for line in text.splitlines()) <= MAX_LINE_LENGTH - 2
    assert "with a very long description" in text
    assert not any(line.split()[1] in ("ns", "us", "ms", "s") for line in text.splitlines()[1:] if line.startswith("#"))
    assert text.isascii()


@pytest.mark.parametrize("op", ["all_gather", "reduce_scatter"])
def test_the_tuner_file_of_an_all_gather_or_reduce_scatter_names_its_collective_and_its_winners(op):
    """Rows carry NCCL's collective; sizes are simnet's (the total NCCL's model and tuner see)."""
    from simnet.algorithms import ALGORITHMS
    from simnet.algorithms.nccl import NCCL_NAMES
    from simnet.models.nccl import parse_tuner_csv, tuner_lookup, tuner_rows_to_csv
    from simnet.network import Network
    from simnet.tune import nccl_tuner_rows

    graph = load(find("dgx_h100"))
    sizes = [64 << 10, 16 << 20, 1 << 30]
    tuned = tune(graph, sizes, op=op, nccl=True)
    assert set(tuned["algorithm"]) == {op, f"nccl_ring_{op}"}
    assert all(op in ALGORITHMS[name].ops for name in tuned["algorithm"])
    rows, comments = nccl_tuner_rows(tuned, Network(graph), op=op)
    text = tuner_rows_to_csv(rows, comments)
    assert parse_tuner_csv(text) == rows
    assert text.splitlines()[len(comments)].startswith(op.replace("_", "") + ",")
    for size, group in tuned[tuned["algorithm"].isin(list(NCCL_NAMES))].groupby("size_bytes"):
        best = group.sort_values("sim_rank").iloc[0]
        values = json.loads(best["params"]) | (json.loads(best["resolved"]) if best["resolved"] else {})
        row = tuner_lookup(rows, op, int(size), 1, 8)
        assert (row.algorithm, row.protocol, row.channels) == ("ring", values["protocol"], values["channels"])


@pytest.mark.parametrize("pool", [functools.partial(ThreadPoolExecutor, max_workers=3),
                                  functools.partial(ProcessPoolExecutor, max_workers=2)])
def test_an_executor_simulates_and_prunes_exactly_what_one_process_does(pool):
    """On the FIFO ring of `ring_channels.yaml` the best simulated time exceeds the best model time at 1 KiB, so
    candidates beyond the first wave are decided by simulated times; finishing in any order changes nothing."""
    scenario = load_scenario(Path(__file__).resolve().parents[1] / "scenarios" / "ring_channels.yaml")
    graph = build_topology(scenario.topology)
    network = scenario.network.model_dump(mode="json", exclude_defaults=True)
    sizes = [2**10, 2**18, 2**26]
    alone = tune(graph, sizes, network=network, channel_counts=(1, 2))
    late = alone[~alone["pruned"]].groupby("size_bytes")["predicted_s"].max()
    assert (late > PRUNE_FACTOR * alone.groupby("size_bytes")["predicted_s"].min()).any()
    with pool() as executor:
        spread = tune(graph, sizes, network=network, channel_counts=(1, 2), executor=executor)
    pd.testing.assert_frame_equal(spread, alone)


def _pruned_as_the_rule_says(tuned: pd.DataFrame, prune_factor: float) -> list[bool]:
    """The documented rule, one candidate after the other over each size's candidates in order of model time:
    those within the factor of the best model time, then each next while within the factor of the best
    model time or, once one has simulated, of the larger of it and the best simulated time."""
    pruned = []
    for _, group in tuned.groupby("size_bytes", sort=False):
        rows = group.sort_values(["predicted_s", "choice"])
        first, best, stopped = rows["predicted_s"].iloc[0], math.inf, False
        tried = {}
        for row in rows.itertuples():
            reference = first if math.isinf(best) else max(first, best)
            stopped = stopped or row.predicted_s > prune_factor * reference
            tried[row.Index] = not stopped
            if not stopped and not math.isnan(row.simulated_s):
                best = min(best, row.simulated_s)
        pruned += [not tried[index] for index in group.index]
    return pruned


@pytest.mark.parametrize("pool", [None, functools.partial(ThreadPoolExecutor, max_workers=3)])
@pytest.mark.parametrize("prune_factor", [1.0, 1.5])
def test_candidates_that_fail_to_build_leave_the_pruning_rule_as_it_is(pool, prune_factor):
    """A candidate whose schedule cannot be built is tried and has no time; while nothing of its size has
    simulated, the next candidates are still judged against the best model time alone."""
    from simnet.algorithms import ALGORITHMS
    from simnet.algorithms.registry import Algorithm

    build = Algorithm.build

    def failing(self, *args, **kwargs):
        if self.name in ("ring", "recursive_doubling"):
            raise SimnetError("cannot build here")
        return build(self, *args, **kwargs)

    assert "ring" in ALGORITHMS
    with mock.patch.object(Algorithm, "build", failing):
        with pool() if pool else contextlib.nullcontext() as executor:
            tuned = tune(load(find("switch8")), [2**10, 2**20, 2**26], prune_factor=prune_factor,
                         channel_counts=(1, 2), executor=executor)
    failed = tuned["algorithm"].isin(["ring", "recursive_doubling"])
    assert (failed & ~tuned["pruned"]).any() and tuned.loc[failed, "simulated_s"].isna().all()
    assert tuned["pruned"].tolist() == _pruned_as_the_rule_says(tuned, prune_factor)


def test_candidates_in_a_large_batch_run_compiled_with_the_same_times(monkeypatch):
    """Candidates of `simnet.engine.COMPILED_IN_BATCHES_FROM` transfers or more in a run estimated at
    `COMPILED_FROM` transfers in all take the compiled loop, and tune to the same table."""
    import simnet.tune as tune_module

    graph = cluster("dgx_a100", 2, fabric="switch", fabric_params={"bandwidth_Bps": 25e9, "latency_s": 1e-6})
    monkeypatch.setattr("simnet.engine.COMPILED_FROM", math.inf)
    python = tune(graph, [1 << 20, 64 << 20], nccl=True)
    chosen = []
    simulated = tune_module.simulate

    def recorded(network, schedule, **options):
        chosen.append((len(schedule), options["compiled"]))
        return simulated(network, schedule, **options)

    monkeypatch.setattr("simnet.engine.COMPILED_FROM", 0)
    monkeypatch.setattr(tune_module, "simulate", recorded)
    compiled = tune(graph, [1 << 20, 64 << 20], nccl=True)
    pd.testing.assert_frame_equal(compiled, python)
    assert {flag for transfers, flag in chosen if transfers >= 5000} == {True}
    assert {flag for transfers, flag in chosen if transfers < 5000} == {None}


def _dgx_h100_pair(sharp: bool):
    """Two DGX H100 on a rail-optimised leaf-spine, its switches SHARP-capable or not."""
    fabric = {"leaves": 8, "spines": 4, "hosts_per_leaf": 2, "bandwidth_Bps": 50e9, "latency_s": 1e-6, "sharp": sharp}
    return cluster("dgx_h100", 2, fabric="leaf_spine", fabric_params=fabric)


@functools.cache
def _tuned_pair(sharp: bool):
    return tune(_dgx_h100_pair(sharp), [1 << 20, 256 << 20], nccl=True)


def test_collnet_which_nccls_model_cannot_price_is_simulated_where_the_fabric_has_sharp():
    """NCCL's model here has CollNet off, so it gives CollNet no time; tune simulates it at every size anyway,
    outside the pruning, with the time the schedule simulates, so the NCCL schedule the tuner file names is the
    fastest simulated one, CollNet included. The other candidates are tried and pruned as without SHARP."""
    from simnet.algorithms import ALGORITHMS
    from simnet.engine import simulate
    from simnet.network import Network
    from simnet.tune import nccl_tuner_rows, skipped_note

    tuned = _tuned_pair(True)
    net = Network(_dgx_h100_pair(True))
    collnet = tuned[tuned["algorithm"].isin(["collnet_direct", "collnet_chain"])]
    assert len(collnet) == 4 and not collnet["pruned"].any()
    assert collnet["predicted_s"].isna().all() and collnet["model_rank"].isna().all()
    for row in collnet.itertuples():
        record = ALGORITHMS[row.algorithm]
        schedule = record.build(net.size, row.size_bytes, **record.resolved(net, row.size_bytes, {}))
        assert simulate(net, schedule).time_s == pytest.approx(row.simulated_s, rel=1e-12)
    assert "collnet" not in skipped_note(tuned)
    rows, comments = nccl_tuner_rows(tuned, net)
    nccl = tuned[tuned["algorithm"].str.startswith(("nccl_", "nvls", "collnet"))]
    fastest = nccl.loc[nccl.groupby("size_bytes")["simulated_s"].idxmin(), "algorithm"].tolist()
    assert [row.algorithm for row in rows] == [name.removeprefix("nccl_") for name in fastest]
    assert any(name.startswith("collnet") for name in fastest)
    assert "need CollNet enabled (NCCL_COLLNET_ENABLE=1" in " ".join(comments)
    _, plain = nccl_tuner_rows(_tuned_pair(False), Network(_dgx_h100_pair(False)))
    assert "CollNet" not in " ".join(plain)
    others = tuned[~tuned["algorithm"].str.startswith("collnet")].reset_index(drop=True)
    without = _tuned_pair(False)
    columns = ["size_bytes", "choice", "predicted_s", "pruned"]
    pd.testing.assert_frame_equal(others[columns], without[columns], check_dtype=False)


def test_nccl_schedules_the_topology_cannot_run_are_not_tried_and_named():
    """Without SHARP no switch serves CollNet's heads, nor NVLS's GPUs of two servers: tune leaves them out and
    says why in one line; the same on a DGX H100 built without NVLS, whose NVLS the run would refuse."""
    from simnet.topology import dgx_h100
    from simnet.tune import skipped_note

    tuned = _tuned_pair(False)
    assert not tuned["algorithm"].isin(["nvls", "collnet_direct", "collnet_chain"]).any()
    assert set(tuned.attrs["skipped"]) == {"nvls", "collnet_direct", "collnet_chain"}
    assert skipped_note(tuned) == ("not tried: nvls, collnet_direct, collnet_chain (no switch with reduce: true "
                                   "serves every group of GPUs it reduces across)")
    off = tune(dgx_h100(nvls=False), [64 << 20], nccl=True)
    assert "nvls" in off.attrs["skipped"] and not (off["algorithm"] == "nvls").any()
    assert off[off["algorithm"] == "nccl_ring"]["simulated_s"].notna().any()
    assert tune(dgx_h100(), [64 << 20]).attrs["skipped"] == {}


def test_tune_tries_torus_2d_on_the_dims_of_a_torus():
    """torus_2d's tuning choices came from the host hierarchy, which a torus lacks, so tune never tried it
    there; on a 4 x 4 torus at 64 MiB it is now a candidate, one ring per torus dimension, and wins."""
    from simnet.topology import torus

    tuned = tune(torus([4, 4], 25e9, 1e-6), [64 * 2**20])
    torus_2d = tuned[tuned["algorithm"] == "torus_2d"]
    assert set(torus_2d["params"]) == {'{"chunks": 1, "factors": [4, 4]}', '{"chunks": 4, "factors": [4, 4]}'}
    assert tuner_table(tuned)["algorithm"].tolist() == ["torus_2d"]
