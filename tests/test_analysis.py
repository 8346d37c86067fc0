import pandas as pd
import pytest

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


def results_frame(rows):
    return pd.DataFrame([
        result_row(scenario="s", point=point, topology="t", op="allreduce", algorithm=algorithm, params=params,
                   network_model="maxmin", ranks=8, size_bytes=size, sim_time_s=sim, model_time_s=model,
                   critical_path_s=crit)
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
    assert "## Fastest choice per size" in text and "| 1 KiB  | tree" in text
    assert "## Speedup over ring" in text and "## Models against the simulation" in text


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
    shown = display_nccl_comparison(frame)
    assert shown.iloc[0]["same"] == "no" and shown.iloc[0]["NCCL model"] == "2.5 s"


def test_nccl_comparison_is_empty_without_an_nccl_model():
    from simnet.analysis import nccl_comparison

    assert nccl_comparison(TABLE).empty
