import json
import math

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simnet.errors import SimnetError

from simnet.analysis import RESULT_COLUMNS, busbw_factor, display_table, result_row


@pytest.mark.parametrize(
    ("op", "p", "factor"),
    [("allreduce", 8, 1.75), ("allreduce", 2, 1.0), ("reduce_scatter", 4, 0.75), ("all_gather", 4, 0.75),
     ("broadcast", 16, 1.0), ("reduce", 16, 1.0), ("alltoall", 8, 0.875), ("alltoallv", 4, 0.75)],
)
def test_busbw_factors_are_nccl_tests_ones(op, p, factor):
    assert busbw_factor(op, p) == factor


def test_result_row_derives_bandwidths():
    row = result_row(scenario="s", point="", topology="t", op="allreduce", algorithm="ring", params="{}", critical_path_s=0.4,
                     network_model="fifo", ranks=8, size_bytes=10**9, sim_time_s=0.5, model_time_s=0.25)
    assert tuple(row) == RESULT_COLUMNS
    assert row["algbw_GBps"] == 2.0
    assert row["busbw_GBps"] == 3.5
    assert row["sim_over_model"] == 2.0
    shown = display_table(pd.DataFrame([row]))
    assert shown.iloc[0]["size"] == "1 GB" and shown.iloc[0]["sim time"] == "500 ms"


def test_result_row_keeps_the_hash_seed_only_under_the_routing_that_hashes():
    common = dict(scenario="s", point="", topology="t", op="allreduce", algorithm="ring", params="{}",
                  critical_path_s=0.4, network_model="fifo", ranks=8, size_bytes=10**9, sim_time_s=0.5,
                  model_time_s=0.25)
    assert result_row(**common, routing="ecmp_hash", hash_seed=5)["hash_seed"] == 5
    assert result_row(**common, routing="dmodk", hash_seed=0)["hash_seed"] == ""
    assert result_row(**common)["routing"] == ""


@pytest.mark.parametrize(("routing", "seeds", "text"), [
    (["dmodk"], [""], "dmodk"),
    (["ecmp_hash"], [0], "ecmp_hash, hash_seed 0 (one draw of the ECMP hash; sweep network.hash_seed for the "
                         "spread)"),
    (["ecmp_hash"] * 8, list(range(8)), "ecmp_hash, hash_seed 0-7 (8 draws of the ECMP hash)"),
    (["ecmp_hash", "ecmp_hash", "dmodk"], [1.0, 7.0, float("nan")],
     "ecmp_hash, hash_seed 1, 7 (2 draws of the ECMP hash); dmodk"),
])
def test_the_routing_text_names_each_rule_and_only_the_hashed_one_with_its_seeds(routing, seeds, text):
    """As read back from results.csv too: seeds as floats, an empty seed as NaN."""
    from simnet.analysis import routing_text

    assert routing_text(pd.DataFrame({"routing": routing, "hash_seed": seeds})) == text


def test_results_written_before_the_routing_column_have_no_routing_line():
    from simnet.analysis import markdown_summary, routing_text

    old = TABLE.drop(columns=["routing", "hash_seed"])
    assert routing_text(old) == "" and "- routing" not in markdown_summary(old, title="study")


def results_frame(rows):
    return pd.DataFrame([
        result_row(scenario="s", point=point, topology="t", op="allreduce", algorithm=algorithm, params=params,
                   network_model="maxmin", ranks=8, size_bytes=size, sim_time_s=sim, model_time_s=model,
                   critical_path_s=crit, routing="dmodk")
        for point, algorithm, params, size, sim, model, crit in rows
    ])


TABLE = results_frame([
    ("", "ring", "{}", 1024, 4.0, 4.0, 4.0),
    ("", "tree", "{}", 1024, 2.0, 3.0, 2.0),
    ("", "hd", "{}", 1024, 2.5, 2.0, 2.5),
    ("", "ring", "{}", 2048, 6.0, 6.0, 3.0),
    ("", "tree", "{}", 2048, 9.0, 9.0, 9.0),
    ("", "hd", "{}", 2048, 6.0, 7.0, 6.0),
])


def test_speedups_are_relative_to_the_baseline_at_the_same_size():
    from simnet.analysis import speedups

    table = speedups(TABLE, "ring")
    assert list(table["speedup"]) == [1.0, 2.0, 1.6, 1.0, 6.0 / 9.0, 1.0]
    with pytest.raises(SimnetError, match="baseline 'nccl' is not among the algorithms run"):
        speedups(TABLE, "nccl")


def test_a_baseline_is_the_choice_the_tables_name_or_the_fastest_run_of_its_algorithm():
    """``ring`` is the ring listed without parameters, not a faster ring with channels; ``ring {"channels": 4}``
    names that one; an algorithm that ran only with parameters is measured at its fastest run."""
    from simnet.analysis import baseline_runs, speedups

    table = results_frame([
        ("", "ring", "{}", 1024, 4.0, 4.0, 4.0),
        ("", "ring", '{"channels": 4}', 1024, 2.0, 2.0, 2.0),
        ("", "tree", '{"channels": 2}', 1024, 8.0, 8.0, 8.0),
        ("", "tree", '{"channels": 1}', 1024, 5.0, 5.0, 5.0),
    ])
    assert list(speedups(table, "ring")["speedup"]) == [1.0, 2.0, 0.5, 0.8]
    assert list(speedups(table, 'ring {"channels": 4}')["speedup"]) == [0.5, 1.0, 0.25, 0.4]
    assert list(speedups(table, "tree")["speedup"]) == [1.25, 2.5, 0.625, 1.0]
    assert baseline_runs(table, "tree").tolist() == [False, False, True, True]
    with pytest.raises(SimnetError, match=r"""'ring \{"channels": 8\}' is not among the choices run \(ring, ring """):
        speedups(table, 'ring {"channels": 8}')
    for written in ('ring {"channels":4}', 'ring{"channels": 4}', "ring  channels=4", " ring channels=4 "):
        assert list(speedups(table, written)["speedup"]) == [0.5, 1.0, 0.25, 0.4]
    assert baseline_runs(table, "tree channels=1").tolist() == [False, False, False, True]
    for bad, message in (('ring {"channels": 4', "are not a JSON object"), ("ring channels", "expected key=value")):
        with pytest.raises(SimnetError, match=message):
            baseline_runs(table, bad)


def test_winners_margin_and_model_agreement():
    from simnet.analysis import winners

    best = winners(TABLE)
    assert list(best["winner"]) == ["tree", "ring"]
    assert list(best["runner_up"]) == ["hd", "hd"]
    assert best["margin"].tolist() == pytest.approx([0.25, 0.0])
    assert list(best["model_agrees"]) == [False, True]


def test_residuals_per_algorithm():
    from simnet.analysis import residuals

    table = residuals(TABLE).set_index("algorithm")
    assert table.loc["ring", "critical_path_worst"] == pytest.approx(1.0)
    assert table.loc["tree", "model_worst"] == pytest.approx(2.0 / 3.0 - 1)
    assert table.loc["hd", "runs"] == 2


def test_markdown_summary_names_winners_and_speedups():
    from simnet.analysis import markdown_summary

    text = markdown_summary(TABLE, title="study")
    assert text.startswith("# study")
    assert "- link model: maxmin\n- routing: dmodk\n- runs:" in text
    assert "## Fastest choice per size" in text and "| 1 KiB  | tree" in text
    assert "## Speedup over ring" in text and "## Models against the simulation" in text


def test_markdown_summary_counts_and_lists_what_failed_first():
    """The new-user study: a failed (point, algorithm) left no trace in results.md."""
    from simnet.analysis import FAILURE_COLUMNS, markdown_summary

    failures = pd.DataFrame([
        (1, "hosts=4", "nvls", "collective.algorithms[2]", "all", "collective.algorithms[2]",
         "nvls on this topology: x|y"),
        (2, "hosts=8", "nvls", "collective.algorithms[2]", "1 KiB", "collective.algorithms[2]", "refused"),
        (3, "hosts=16", "", "", "all", "topology", "cannot build"),
    ], columns=list(FAILURE_COLUMNS))
    text = markdown_summary(TABLE, title="study", failures=failures)
    header, rest = text.split("## Failed")
    assert header.endswith("- runs: 6\n- failed: 1 algorithm at 2 points, 1 whole point (listed under Failed, "
                           "below)\n\n")
    section = rest.split("## Fastest choice per size")[0]
    assert "| hosts=4  | nvls (collective.algorithms[2])    | all     | nvls on this topology: x\\|y" in section, \
        "review: the error repeated the key path the algorithm column gives"
    assert "| hosts=16 | every algorithm (the point failed) | all     | topology: cannot build" in section
    assert "## Failed" not in markdown_summary(TABLE, title="study", failures=failures.iloc[:0])
    one = failures.iloc[:1].assign(point="")
    assert "| algorithm " in markdown_summary(TABLE, title="study", failures=one).split("## Failed")[1].split("\n")[4]
    assert "- failed: 1 algorithm (listed" in markdown_summary(TABLE, title="study", failures=one)


def test_speedups_are_over_ring_if_it_ran_else_over_the_first_algorithm():
    from simnet.analysis import default_baseline, markdown_summary

    without_ring = TABLE[TABLE["algorithm"] != "ring"]
    assert default_baseline(TABLE) == "ring" and default_baseline(without_ring) == "tree"
    assert default_baseline(TABLE.iloc[:0]) is None
    assert "## Speedup over tree" in markdown_summary(without_ring, title="study")


def test_a_variant_keeps_the_parameters_it_was_given_in_labels_and_headings():
    """Study r26 F7: a lone {name: ring, channels: 2} was "ring" in legends and "speedup over ring" in results.md
    and speedup.png, while the column was `ring {"channels": 2}`. Given parameters stay in the label; those read off
    the topology (blueconnect's factors) and swept ones (they belong to the point) do not."""
    from simnet.analysis import baseline_label, factors, markdown_summary

    rows = results_frame([
        ("", "ring", '{"channels": 2}', 1024, 4.0, 4.0, 4.0),
        ("", "halving_doubling", '{"chunks": 4}', 1024, 2.0, 2.0, 2.0),
        ("", "blueconnect", '{"factors": [2, 2, 4]}', 1024, 3.0, 3.0, 3.0),
    ])
    assert list(factors(rows)["choice"]) == ["ring channels=2", "halving_doubling chunks=4", "blueconnect"]
    assert baseline_label(rows, "ring") == 'ring {"channels": 2}'
    assert baseline_label(rows, "ring", legend=True) == "ring channels=2"
    assert '## Speedup over ring {"channels": 2}\n' in markdown_summary(rows, title="study")
    two = pd.concat([rows, results_frame([("", "ring", '{"channels": 1}', 1024, 5.0, 5.0, 5.0)])])
    assert baseline_label(two, "ring", legend=True) == "the fastest of ring channels=2, ring channels=1"
    swept = results_frame([(f"collective.chunks={c}", "ring", json.dumps({"chunks": c}), 1024, 1.0, 1.0, 1.0)
                           for c in (1, 2)])
    assert list(factors(swept)["choice"]) == ["ring", "ring"]


def test_tier_and_link_summaries_of_a_run():
    from simnet.algorithms import ring_allreduce
    from simnet.analysis import link_summary, tier_summary
    from simnet.engine import simulate
    from simnet.network import Network
    from simnet.topology import switch

    trace = simulate(Network(switch(4, 1e9, 1e-6)), ring_allreduce(4, 4 * 10**6))
    tiers = tier_summary(trace)
    assert tiers["time_s"].sum() == pytest.approx(trace.time_s)
    assert tiers.iloc[0]["tier"] == "fabric"
    busiest = link_summary(trace, top=3)
    assert len(busiest) == 3 and (busiest["utilization"].diff().dropna() <= 0).all()


def nccl_rows(rows):
    return pd.DataFrame([
        result_row(scenario="s", point="", topology="t", op="allreduce", algorithm=algorithm, params=params,
                   network_model="maxmin", ranks=8, size_bytes=size, sim_time_s=sim, model_time_s=1.0,
                   critical_path_s=1.0, nccl_choice=choice, nccl_model_s=model)
        for algorithm, params, size, sim, choice, model in rows
    ])


def test_nccl_comparison_sets_simnets_winner_beside_nccls_choice():
    from simnet.analysis import display_nccl_comparison, nccl_comparison

    frame = nccl_rows([
        ("nccl_ring", '{"protocol": "ll"}', 1024, 3.0, "ring/ll", 2.5),
        ("blueconnect", '{"factors": [4, 2]}', 1024, 2.0, "ring/ll", 2.5),
        ("nccl", '{"nccl_algorithm": "nvls"}', 1 << 30, 5.0, "nvls/simple", 6.0),
        ("nccl_ring", '{"protocol": "simple"}', 1 << 30, 7.0, "nvls/simple", 6.0),
    ])
    table = nccl_comparison(frame)
    assert table[["size_bytes", "nccl_choice", "nccl_simulated_s", "agree"]].values.tolist() == [
        [1024, "ring/ll", 3.0, False], [1 << 30, "nvls/simple", 5.0, True]]
    assert table.iloc[0]["simnet_best"].startswith("blueconnect") and table.iloc[0]["simnet_best_s"] == 2.0
    assert table.iloc[1]["simnet_best"].startswith("nccl ") and table.iloc[1]["simnet_best"].endswith(" (nvls/simple)")
    shown = display_nccl_comparison(frame)
    assert shown.iloc[0]["same"] == "no" and shown.iloc[0]["NCCL model"] == "2.5 s"
    unrecorded = nccl_comparison(nccl_rows([("nccl", "{}", 1 << 30, 5.0, "nvls/simple", 6.0)]))
    assert unrecorded.iloc[0][["simnet_best", "nccl_best", "agree"]].tolist() == ["nccl", "", False], \
        "a pick the results do not record is not taken for ring/simple"


@pytest.mark.parametrize(("latency_s", "decides"), [(1.5, True), (0.5, False)])
def test_a_best_outside_nccls_family_is_shown_with_nccls_latency_and_whether_that_decides(latency_s, decides):
    """Study r26 F6: a sparse schedule at density 1 "beat NCCL 2.6x" at 1 MiB because simnet's own schedules pay
    link latencies only. The table adds the latency NCCL's model charges its choice to such a best, and says
    whether the best is ahead of the best NCCL schedule only by less than that."""
    from simnet.analysis import NCCL_COMPARISON_NOTE, NCCL_LATENCY_NOTE, display_nccl_comparison, nccl_comparison
    from simnet.analysis import nccl_comparison_note

    frame = nccl_rows([("nccl_ring", '{"protocol": "ll"}', 1024, 3.0, "ring/ll", 2.5),
                       ("blueconnect", "{}", 1024, 2.0, "ring/ll", 2.5),
                       ("nccl", "{}", 1 << 30, 5.0, "nvls/simple", 6.0),
                       ("ring", "{}", 1 << 30, 7.0, "nvls/simple", 6.0)]).assign(nccl_latency_s=latency_s)
    table = nccl_comparison(frame)
    assert table["simnet_best_pays_nccl_latency"].tolist() == [False, True]
    assert table["simnet_best_with_nccl_latency_s"].tolist() == [2.0 + latency_s, 5.0]
    assert table["latency_decides"].tolist() == [decides, False]
    shown = display_nccl_comparison(frame)
    assert shown["+ NCCL latency"].tolist() == [f"{2.0 + latency_s:g} s", "paid"]
    assert shown["latency decides"].tolist() == ["yes" if decides else "no", "—"]
    assert nccl_comparison_note(frame) == f"{NCCL_COMPARISON_NOTE} {NCCL_LATENCY_NOTE}"
    assert nccl_comparison_note(frame[frame["algorithm"] != "blueconnect"]) == NCCL_COMPARISON_NOTE
    legacy = display_nccl_comparison(frame.drop(columns=["nccl_latency_s"]))
    assert legacy["+ NCCL latency"].tolist() == ["—", "paid"] and legacy["latency decides"].tolist() == ["—", "—"]


def test_nccl_comparison_has_one_row_per_size_and_sparse_payload():
    """Study r25 F4: densities 1/16 and 1/1024 of one dense size made one row, the 1/1024 run's time unlabelled."""
    from simnet.analysis import display_nccl_comparison, nccl_comparison

    def params(density):
        return json.dumps({"payload": {"dimension": 1000, "density": density}})

    frame = nccl_rows([("sparse_ring_ring", params(1 / 16), 4000, 3.0, "ring/simple", 2.5),
                       ("nccl_ring", params(1 / 16), 4000, 2.0, "ring/simple", 2.5),
                       ("sparse_ring_ring", params(1 / 1024), 4000, 1.0, "ring/simple", 2.5),
                       ("nccl_ring", params(1 / 1024), 4000, 2.0, "ring/simple", 2.5)])
    table = nccl_comparison(frame)
    assert table[["payload", "simnet_best_s", "nccl_best_s", "agree"]].values.tolist() == [
        ["N=1000 d=1/16", 2.0, 2.0, True], ["N=1000 d=1/1024", 1.0, 2.0, False]]
    assert list(display_nccl_comparison(frame)["payload"]) == ["N=1000 d=1/16", "N=1000 d=1/1024"]
    assert "payload" not in display_nccl_comparison(nccl_rows([("nccl_ring", "{}", 4000, 2.0, "ring/simple", 2.5)]))


def test_nccls_choice_is_timed_by_a_run_of_the_release_whose_model_chose_it():
    """One row per release the NCCL schedules ran, each with its release's choice (study r25: a pinned release
    was priced with the default one's model); a run of another release is not its simulated time."""
    from simnet.analysis import display_nccl_comparison, nccl_comparison

    frame = nccl_rows([
        ("nccl", '{"nccl_algorithm": "nvls", "version": "2.18.3"}', 1 << 26, 2.0, "ring/simple", 4.0),
        ("nccl", '{"nccl_algorithm": "nvls"}', 1 << 26, 2.5, "nvls/simple", 3.0),
        ("ring", "{}", 1 << 26, 1.5, "nvls/simple", 3.0),
        ("nvls", '{"version": "2.18.3"}', 1 << 20, 1.0, "nvls/simple", 3.0),
    ])
    table = nccl_comparison(frame)
    assert table[["size_bytes", "nccl_release", "nccl_choice", "nccl_model_s"]].values.tolist() == [
        [1 << 26, "2.18.3", "ring/simple", 4.0], [1 << 26, "2.30.7", "nvls/simple", 3.0],
        [1 << 20, "2.18.3", "nvls/simple", 3.0]]
    assert math.isnan(table["nccl_simulated_s"][0]) and table["nccl_best_s"][0] == 2.0
    assert table["nccl_simulated_s"][1] == 2.5 and table["nccl_best_s"][1] == 2.5
    assert table["nccl_simulated_s"][2] == 1.0 and table["agree"].tolist() == [False, False, True]
    assert display_nccl_comparison(frame)["NCCL release"].tolist() == ["2.18.3", "2.30.7", "2.18.3"]
    shown = display_nccl_comparison(frame.iloc[:1])
    assert shown.iloc[0][["simulated", "same"]].tolist() == ["not run", "no"], "not run is never the same"


def test_the_winner_says_what_nccl_ran_and_its_runner_up_is_not_that_schedule_again():
    """`nccl` that picked NVLS beats `nvls` only by name: the runner-up is the next schedule that differs."""
    from simnet.analysis import winners

    frame = nccl_rows([
        ("nccl", "{}", 1 << 30, 5.0, "nvls/simple", 6.0),
        ("nvls", "{}", 1 << 30, 5.0, "nvls/simple", 6.0),
        ("nccl_ring", '{"protocol": "auto"}', 1 << 30, 6.5, "nvls/simple", 6.0),
        ("ring", "{}", 1 << 30, 7.0, "nvls/simple", 6.0),
        ("nvls", "{}", 1 << 20, 2.0, "nvls/simple", 1.0),
        ("nccl", "{}", 1 << 20, 2.0, "nvls/simple", 1.0),
    ]).assign(resolved=['{"nccl_algorithm": "nvls", "protocol": "simple"}', "", '{"protocol": "ll128"}', "",
                        "", '{"nccl_algorithm": "nvls", "protocol": "simple"}'])
    best = winners(frame)
    assert best[["winner", "runner_up"]].values.tolist() == [
        ["nccl (nvls/simple)", 'nccl_ring {"protocol": "auto"} (ring/ll128)'], ["nvls", ""]]
    assert best["margin"][0] == pytest.approx(0.3) and math.isnan(best["margin"][1])
    alone = winners(frame.assign(sim_time_s=[5.0, 5.5, 6.5, 7.0, 2.0, 2.0]))
    assert alone.iloc[0][["runner_up", "runner_up_time_s"]].tolist() == ["nvls", 5.5]
    nvls_first = winners(frame.assign(model_time_s=[2.0, 1.0, 3.0, 4.0, 1.0, 1.0]))
    assert nvls_first["model_agrees"].tolist() == [True, True], "the model's nvls is what nccl ran"
    rings = nccl_rows([("nccl_ring", '{"channels": 8, "protocol": "simple"}', 1 << 30, 5.0, "ring/simple", 6.0),
                       ("nccl_ring", '{"channels": 24, "protocol": "simple"}', 1 << 30, 7.0, "ring/simple", 6.0)])
    assert not winners(rings.assign(model_time_s=[9.0, 4.0]))["model_agrees"][0], "another setup of the ring"
    unrecorded = winners(frame.drop(columns=["resolved"]))
    assert unrecorded["winner"].tolist() == ["nccl", "nvls"] and unrecorded["runner_up"].tolist() == ["nvls", "nccl"]


def test_nccl_comparison_is_empty_without_an_nccl_model():
    from simnet.analysis import nccl_comparison

    assert nccl_comparison(TABLE).empty


def test_nccl_schedules_without_an_nccl_model_are_named_in_a_note():
    """Rows of NCCL's schedules with no NCCL choice (a topology simnet has no NCCL model of) get a note naming
    them once each; where every NCCL row has its choice, and where none ran, there is no note."""
    from simnet.analysis import nccl_without_model

    rows = nccl_rows([("nccl_ring", "{}", 1024, 3.0, "", float("nan")), ("ring", "{}", 1024, 1.0, "", float("nan")),
                      ("nccl_tree", "{}", 1024, 3.5, "", float("nan")),
                      ("nccl_ring", "{}", 1 << 20, 9.0, "", float("nan"))])
    without = rows.assign(model_time_s=float("nan"))
    note = nccl_without_model(without)
    assert note.startswith("nccl_ring, nccl_tree carry NCCL's latencies") and "dgx_h100" in note
    assert nccl_without_model(rows) == "", "a model time but no choice: NCCL's model ran, its choice did not"
    modelled = nccl_rows([("nccl_ring", '{"protocol": "ll"}', 1024, 3.0, "ring/ll", 2.5),
                          ("blueconnect", "{}", 1024, 2.0, "ring/ll", 2.5)])
    assert nccl_without_model(modelled) == "" and nccl_without_model(TABLE) == ""


def test_a_forced_nccl_schedule_nccls_model_has_off_is_named_with_why():
    """Study r23: PAT forced on 8 GPUs per server ran with an empty model column and no word why; NCCL enables
    PAT only with one GPU per server. Rows with a model time, or no NCCL choice, get no such note."""
    from simnet.analysis import nccl_switched_off

    rows = nccl_rows([("nccl_all_gather", '{"nccl_algorithm": "pat"}', 1 << 26, 2.0, "ring/ll128", 1.0),
                      ("nccl_all_gather", "{}", 1 << 26, 1.0, "ring/ll128", 1.0)])
    rows = rows.assign(model_time_s=[float("nan"), 1.0])
    note = nccl_switched_off(rows)
    assert note.startswith("nccl_all_gather (pat/simple) ran without a model time: NCCL enables PAT only with one "
                           "GPU per server unless NCCL_PAT_ENABLE=1")
    collnet = nccl_rows([("collnet_direct", "{}", 1 << 26, 2.0, "nvls_tree/simple", 1.0)])
    assert nccl_switched_off(collnet.assign(model_time_s=float("nan"))) == (
        "collnet_direct (collnet_direct/simple) ran without a model time: simnet's twin of NCCL's model derives no "
        "CollNet graphs, so it prices no CollNet (NCCL itself does where SHARP is enabled).")
    assert nccl_switched_off(rows.assign(model_time_s=1.0)) == ""
    assert nccl_switched_off(rows.assign(model_time_s=float("nan"), nccl_choice="")) == ""


def test_the_comparison_note_is_given_only_where_a_schedule_outside_nccls_family_ran():
    from simnet.analysis import NCCL_COMPARISON_NOTE, NCCL_LATENCY_NOTE, nccl_comparison_note

    nccl_only = nccl_rows([("nccl_ring", '{"protocol": "ll"}', 1024, 3.0, "ring/ll", 2.5),
                           ("nccl", "{}", 1024, 3.0, "ring/ll", 2.5)])
    assert nccl_comparison_note(nccl_only) == ""
    mixed = nccl_rows([("nccl_ring", '{"protocol": "ll"}', 1024, 3.0, "ring/ll", 2.5),
                       ("blueconnect", "{}", 1024, 2.0, "ring/ll", 2.5)])
    assert nccl_comparison_note(mixed) == f"{NCCL_COMPARISON_NOTE} {NCCL_LATENCY_NOTE}"
    assert nccl_comparison_note(mixed.assign(sim_time_s=[2.0, 3.0])) == NCCL_COMPARISON_NOTE


def test_the_note_says_which_of_nccls_decisions_fell_back_to_what():
    """Where NCCL's model is missing, the channels and protocol NCCL would have chosen fall back to simnet's
    defaults; the note names each with its value and the schedules it applies to, from the rows' ``resolved``,
    and leaves out what the run gave (a gb200_nvl72_xdr_2 ring at 2 channels looked 7x slower than at 16)."""
    from simnet.analysis import nccl_without_model

    rows = nccl_rows([("nccl_ring", '{"protocol": "simple"}', 1 << 30, 3.0, "", float("nan")),
                      ("nccl_tree", "{}", 1 << 30, 3.5, "", float("nan")),
                      ("nccl_ring", '{"channels": 16, "protocol": "simple"}', 1 << 30, 1.0, "", float("nan"))])
    rows = rows.assign(model_time_s=float("nan"),
                       resolved=['{"channels": 2, "gpus_per_node": 72}',
                                 '{"channels": 2, "gpus_per_node": 72, "protocol": "simple"}',
                                 '{"gpus_per_node": 72}'])
    note = nccl_without_model(rows)
    assert "channels fell back to 2 (nccl_ring, nccl_tree) and protocol to simple (nccl_tree)" in note
    assert "Set channels: (" in note and "protocol: (simple, ll or ll128)" in note
    given = rows.iloc[[2]]
    assert "fell back" not in nccl_without_model(given) and nccl_without_model(given).startswith("nccl_ring carry")


def test_sparse_rows_carry_the_dense_equivalent_busbw_beside_the_bytes_sent():
    sent = [3.0e6, 1.0e6, 1.0e6, 1.0e6]
    row = result_row(scenario="s", point="", topology="t", op="allreduce", algorithm="gtopk", params="{}",
                     network_model="fifo", ranks=4, size_bytes=10**9, sim_time_s=0.5, model_time_s=0.5,
                     critical_path_s=0.5, payload_kind="sparse", sent_bytes_per_rank=sent)
    assert row["busbw_GBps"] is None and row["effective_busbw_GBps"] == 3.0
    assert row["sent_bytes_per_rank_max"] == 3.0e6 and row["sent_bytes_per_rank_mean"] == 1.5e6
    dense = result_row(scenario="s", point="", topology="t", op="allreduce", algorithm="ring", params="{}",
                       network_model="fifo", ranks=4, size_bytes=10**9, sim_time_s=0.5, model_time_s=0.5,
                       critical_path_s=0.5)
    assert dense["busbw_GBps"] == 3.0 and dense["effective_busbw_GBps"] is None
    assert dense["sent_bytes_per_rank_max"] is None
    shown = display_table(pd.DataFrame([dense, row]))
    assert list(shown["busbw GB/s"]) == ["3.00", ""]
    assert list(shown["dense-eq. busbw GB/s"]) == ["", "3.00"]
    assert list(shown["sent/rank max"]) == ["", "3 MB"]
    assert "dense-eq. busbw GB/s" not in display_table(pd.DataFrame([dense])).columns


@given(st.integers(2, 12), st.integers(1, 10**6))
def test_a_ring_sends_two_p_minus_one_chunks_from_every_rank(nranks, size_bytes):
    from simnet.algorithms import ALGORITHMS
    from simnet.analysis import sent_bytes_per_rank

    schedule = ALGORITHMS["ring"].builder(nranks, size_bytes)
    sent = sent_bytes_per_rank(schedule)
    assert sent.sum() == 2 * (nranks - 1) * size_bytes
    assert sent.max() - sent.min() <= 2 * (nranks - 1)


def test_point_labels_read_back_as_the_values_the_sweep_set():
    from simnet.analysis import point_keys
    from simnet.scenario import expand, parse_scenario

    data = {"name": "s", "topology": {"builder": "switch", "hosts": 4, "bandwidth": "100 Gbps", "latency": "1 us"},
            "collective": {"op": "allreduce", "algorithms": ["ring"]}, "sizes": ["1 KiB"],
            "sweep": {"grid": {"topology.bandwidth": ["100 Gbps", "200 Gbps"]},
                      "points": [{"topology.hosts": 4, "topology.latency": "2 us"}]}}
    labels = [p.label for p in expand(parse_scenario(data))]
    assert [point_keys(label) for label in labels] == [
        {"topology.bandwidth": "100 Gbps", "topology.hosts": 4, "topology.latency": "2 us"},
        {"topology.bandwidth": "200 Gbps", "topology.hosts": 4, "topology.latency": "2 us"},
    ]
    assert point_keys('collective.factors=[4, 2],topology.hosts=8') == {"collective.factors": "[4, 2]",
                                                                       "topology.hosts": 8}


def test_factors_name_the_choice_by_what_tells_runs_of_one_case_apart():
    from simnet.analysis import factors, swept_keys

    rows = results_frame([
        ("topology.hosts=4,collective.chunks=1", "ring", '{"chunks": 1}', 1024, 1.0, 1.0, 1.0),
        ("topology.hosts=4,collective.chunks=2", "ring", '{"chunks": 2}', 1024, 1.0, 1.0, 1.0),
        ("topology.hosts=8,collective.chunks=1", "ring", '{"chunks": 1}', 1024, 1.0, 1.0, 1.0),
        ("topology.hosts=8,collective.chunks=1", "tree", '{}', 1024, 1.0, 1.0, 1.0),
        ("topology.hosts=8,collective.chunks=1", "tree", '{"chunks": 8}', 1024, 1.0, 1.0, 1.0),
    ])
    frame = factors(rows)
    assert list(frame["choice"]) == ["ring", "ring", "ring", "tree", "tree chunks=8"]
    assert list(frame["topology.hosts"]) == [4, 4, 8, 8, 8]
    assert swept_keys(frame) == ["topology.hosts", "collective.chunks"]
    sparse = results_frame([("", "gtopk", json.dumps({"payload": {"dimension": 10, "density": d}}), 40, 1.0, 1.0, 1.0)
                            for d in (0.5, 0.25)])
    assert swept_keys(factors(sparse)) == ["payload.density"]


@pytest.mark.parametrize(
    ("key", "values", "expected", "kind"),
    [("topology.hosts", [4, 8], [4.0, 8.0], "number"), ("size", [1024.0], [1024.0], "size"),
     ("payload.density", [0.5], [0.5], "fraction"), ("topology.latency", ["1 us", "2 us"], [1e-6, 2e-6], "time"),
     ("collective.size", ["1 KiB"], [1024.0], "size")],
)
def test_numeric_values_of_swept_keys(key, values, expected, kind):
    from simnet.analysis import numeric_values

    parsed, found = numeric_values(key, values)
    assert parsed.tolist() == pytest.approx(expected) and found == kind


def test_winners_and_speedups_tell_sparse_payloads_apart():
    from simnet.analysis import speedups, winners

    def params(density):
        return json.dumps({"payload": {"dimension": 1000, "density": density}})

    rows = results_frame([("", "ring", params(0.5), 4000, 4.0, 4.0, 4.0),
                          ("", "ring", params(0.125), 4000, 4.0, 4.0, 4.0),
                          ("", "sparse_ring", params(0.5), 4000, 8.0, 8.0, 8.0),
                          ("", "sparse_ring", params(0.125), 4000, 1.0, 1.0, 1.0)])
    best = winners(rows)
    assert list(best["payload"]) == ["N=1000 d=1/2", "N=1000 d=1/8"]
    assert list(best["winner"]) == ["ring", "sparse_ring"]
    assert list(speedups(rows, "ring")["speedup"]) == [1.0, 1.0, 0.5, 4.0]


def test_a_lossy_algorithm_is_never_the_fastest_beside_exact_ones_and_is_labelled_wherever_it_shows():
    """Study r25 F3: gtopk (a global top-k, not the sum) was the "winner" and "simnet's best" of sparse_quick."""
    from simnet.analysis import factors, markdown_summary, nccl_comparison, winners

    payload = json.dumps({"payload": {"dimension": 1000, "density": 0.125}})
    rows = results_frame([("", "ring", payload, 4000, 4.0, 4.0, 4.0),
                          ("", "sparse_ring", payload, 4000, 2.0, 2.0, 2.0),
                          ("", "gtopk", payload, 4000, 1.0, 1.0, 1.0)])
    best = winners(rows)
    assert best[["winner", "runner_up"]].values.tolist() == [["sparse_ring", "ring"]]
    assert list(display_table(rows)["algorithm"]) == ["ring", "sparse_ring", "gtopk (lossy)"]
    assert list(factors(rows)["choice"]) == ["ring", "sparse_ring", "gtopk (lossy)"]
    summary = markdown_summary(rows, title="t", baseline="ring")
    assert "gtopk (lossy): lossy by design, not an exact allreduce" in summary
    assert "gtopk (lossy)" in summary.split("## Speedup over ring\n\n")[1].splitlines()[0]
    assert winners(rows[rows["algorithm"] == "gtopk"])["winner"].tolist() == ["gtopk (lossy)"]
    nccl = nccl_rows([("gtopk", payload, 4000, 1.0, "ring/ll", 2.5), ("nccl_ring", payload, 4000, 3.0, "ring/ll", 2.5)])
    assert nccl_comparison(nccl)["simnet_best"].tolist() == ["nccl_ring (ring/simple)"]


def test_tables_cut_long_list_parameters_and_files_keep_them():
    """A network-derived parameter such as NCCL ring's ``exits`` (one list per GPU of a server) is cut in tables."""
    import doctest

    from simnet import analysis

    assert doctest.testmod(analysis).failed == 0
    params = json.dumps({"exits": [[x ^ 1] for x in range(72)], "factors": [4, 2, 16, 32]})
    shown = analysis._compact(params)
    assert shown == "exits=[[1],[0],[3],…(72) factors=[4, 2, 16, 32]"


@pytest.mark.parametrize("name", ["nvls_tree", "collnet_direct"])
def test_bytes_sent_per_rank_leave_out_the_switches_of_an_in_network_reduction(name):
    """The switch endpoints' multicast is not a rank's: one value per rank, and every GPU of an NVLSTree or
    CollNet all-reduce sends its part up once (NVLSTree: also to the tree over the network)."""
    from simnet.algorithms import ALGORITHMS
    from simnet.analysis import sent_bytes_per_rank

    schedule = ALGORITHMS[name].build(16, 2**20, gpus_per_node=8)
    assert schedule.switches
    sent = sent_bytes_per_rank(schedule)
    assert len(sent) == 16
    assert sent.max() < 2 * 2**20
    table = schedule.transfers
    ranks = table.src < 16
    assert sent.sum() == table.nbytes[ranks & (table.src != table.dst)].sum()


def test_an_nccl_ring_or_tree_at_its_default_protocol_says_the_protocol_too():
    """Study r23: compare's runner-up read "nccl_tree (tree/ll128)" at 64 MiB and "nccl_tree" at 1 GiB, where
    the protocol was the default simple; ring and tree now always say theirs, NVLS (Simple only) does not."""
    from simnet.analysis import winners

    rows = nccl_rows([("nccl_ring", "{}", 1 << 30, 1.0, "ring/simple", 1.0),
                      ("nccl_tree", "{}", 1 << 30, 2.0, "ring/simple", 1.0),
                      ("nvls", "{}", 1 << 30, 3.0, "ring/simple", 1.0)])
    rows = rows.assign(resolved=['{"protocol": "simple"}', '{"protocol": "simple"}', ""])
    table = winners(rows)
    assert table[["winner", "runner_up"]].values.tolist() == [["nccl_ring (ring/simple)", "nccl_tree (tree/simple)"]]
    assert winners(rows.iloc[[2, 0]])["winner"].tolist() == ["nccl_ring (ring/simple)"]
    assert winners(rows.iloc[[2]])["winner"].tolist() == ["nvls"]


def test_the_spread_over_hash_seeds_gives_best_median_and_worst_with_their_seeds():
    """Study r23 F7: hash luck was measurable only by post-processing results.csv; a sweep of
    network.hash_seed now gets the spread per case, points of another routing left out."""
    from simnet.analysis import hash_seed_spread, markdown_summary

    times = {0: 3.0, 1: 1.0, 2: 2.0, 3: 5.0}
    rows = nccl_rows([("halving_doubling", "{}", 1024, t, "", float("nan")) for t in times.values()]
                     + [("halving_doubling", "{}", 1024, 0.5, "", float("nan"))])
    rows.insert(2, "network.routing", [None] * 4 + ["dmodk"])
    rows.insert(3, "network.hash_seed", [*times, None])
    spread = hash_seed_spread(rows)
    assert spread.to_dict(orient="records") == [{
        "choice": "halving_doubling", "size_bytes": 1024, "seeds": 4, "best_s": 1.0, "median_s": 2.5, "worst_s": 5.0,
        "worst_over_best": 5.0, "best_seed": 1, "worst_seed": 3}]
    assert "## Over ECMP hash seeds" in markdown_summary(rows, title="t")
    assert hash_seed_spread(rows.iloc[[0, 4]]).empty and hash_seed_spread(nccl_rows([])).empty


ROUND_TRIP = {"name": "round_trip", "topology": {"builder": "calibrated_cluster", "kind": "dgx_h100", "nodes": 1},
              "collective": {"op": "allreduce", "algorithms": ["ring", "nccl"]}, "sizes": ["1 MiB"],
              "sweep": {"grid": {"topology.nodes": [1, 2]},
                        "points": [{"network.overhead": "100 ns"}, {"collective.chunks": 2},
                                   {"network.routing": "ecmp_hash", "network.hash_seed": 3}]}}


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """A sweep's rows as run_sweep returns them and the directory it wrote them into: a swept key every point sets
    (integers), others that some points leave (text, integers), NCCL's `resolved` choice beside rings without one,
    a hash seed beside rules without one."""
    from simnet.scenario import expand, parse_scenario
    from simnet.sweep import run_sweep

    out = tmp_path_factory.mktemp("round_trip")
    return run_sweep(expand(parse_scenario(ROUND_TRIP)), out_dir=out), out


@pytest.mark.parametrize("name", ["results.csv", "results.json"])
def test_results_read_back_from_either_file_are_the_frame_that_was_written(written, name):
    """Study r26 F5: results.json held params as an object and resolved as null where the frame has JSON text
    and "", and the swept topology.nodes was an object column in the frame but int64 read back."""
    from simnet.analysis import read_results

    frame, out = written
    assert (frame["resolved"] != "").any() and (frame["resolved"] == "").any()
    assert frame["topology.nodes"].dtype == "int64"
    assert frame["network.overhead"].tolist()[:4] == ["100 ns", "100 ns", None, None]
    assert frame["effective_busbw_GBps"].dtype == "float64"
    assert frame["hash_seed"].tolist()[:6] == ["", "", "", "", 3, 3]
    pd.testing.assert_frame_equal(read_results(out / name), frame)


def test_reading_something_else_than_results_is_one_error(tmp_path):
    from simnet.analysis import read_results

    (tmp_path / "x.txt").write_text("")
    (tmp_path / "x.json").write_text('{"a": 1}')
    with pytest.raises(SimnetError, match=r"x.txt: expected a results.csv or results.json file, got 'x.txt'$"):
        read_results(tmp_path / "x.txt")
    with pytest.raises(SimnetError, match=r"x.json: expected a list of result rows \(objects\)$"):
        read_results(tmp_path / "x.json")
    with pytest.raises(SimnetError, match=r"absent.csv: cannot read results: "):
        read_results(tmp_path / "absent.csv")


def test_the_speedup_table_has_one_column_per_listed_algorithm_across_a_sweep_and_topologies_in_sweep_order():
    """Study r26 F9: hierarchical_ring's default factors come from each point's topology ([8, 4] at 4 servers,
    [8, 16] at 16), and the speedup table made a column of each, half of it nan. Parameters that change only from
    point to point now belong to the point; two variants run at one point stay apart. The topology line listed
    the 16-server cluster before the 4-server one (sorted as text); it now follows the rows."""
    from simnet.analysis import markdown_summary

    rows = []
    for nodes, scale in ((4, 1.0), (16, 2.0)):
        point = f"topology.nodes={nodes}"
        for algorithm, params, time_s in (("ring", "{}", 1.0), ("ring", '{"chunks": 4}', 0.8),
                                          ("hierarchical_ring", json.dumps({"factors": [8, nodes]}), 0.5)):
            rows.append(result_row(scenario="s", point=point, topology=f"cluster({nodes} x dgx_h100())",
                                   op="allreduce", algorithm=algorithm, params=params, network_model="maxmin",
                                   ranks=8 * nodes, size_bytes=2**20, sim_time_s=time_s * scale,
                                   model_time_s=time_s, critical_path_s=time_s))
    report = markdown_summary(pd.DataFrame(rows), title="s")
    assert "- topology: cluster(4 x dgx_h100()), cluster(16 x dgx_h100())\n" in report
    table = report.split("## Speedup over ring\n\n")[1].split("\n\n")[0].splitlines()
    assert [cell.strip() for cell in table[0].strip("|").split("|")] == [
        "point", "size", "ring", 'ring {"chunks": 4}', "hierarchical_ring"]
    assert [cell.strip() for cell in table[3].strip("|").split("|")] == [
        "topology.nodes=16", "1 MiB", "1.000", "1.250", "2.000"]
    assert "nan" not in "\n".join(table)


@pytest.mark.parametrize("name", ["results.csv", "results.json"])
def test_hash_seeds_beyond_a_float_and_int64_are_recorded_exactly_and_read_back(tmp_path, name):
    """Seeds go up to 2**64 - 1: 2**60 + 1 was recorded as 2**60 (through a float) and 2**63 + 1 ended the run
    with an OverflowError (an int64 column) after simulating."""
    from simnet.analysis import read_results, routing_text
    from simnet.scenario import expand, parse_scenario
    from simnet.sweep import run_sweep

    seeds = [2**60 + 1, 2**64 - 1]
    scenario = {"name": "seeds", "topology": {"builder": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 2,
                                              "bandwidth": "100 Gbps", "latency": "1 us"},
                "collective": {"op": "allreduce", "algorithms": ["ring"]}, "sizes": ["1 KiB"],
                "network": {"routing": "ecmp_hash"}, "sweep": {"grid": {"network.hash_seed": seeds}}}
    frame = run_sweep(expand(parse_scenario(scenario)), out_dir=tmp_path)
    assert frame["hash_seed"].tolist() == frame["network.hash_seed"].tolist() == seeds
    assert routing_text(frame) == f"ecmp_hash, hash_seed {seeds[0]}, {seeds[1]} (2 draws of the ECMP hash)"
    pd.testing.assert_frame_equal(read_results(tmp_path / name), frame)
