import pandas as pd
import pytest

from simnet.analysis import RESULT_COLUMNS, busbw_factor, display_table, result_row


@pytest.mark.parametrize(
    ("op", "p", "factor"),
    [("allreduce", 8, 1.75), ("allreduce", 2, 1.0), ("reduce_scatter", 4, 0.75), ("all_gather", 4, 0.75),
     ("broadcast", 16, 1.0), ("reduce", 16, 1.0)],
)
def test_busbw_factors_are_nccl_tests_ones(op, p, factor):
    assert busbw_factor(op, p) == factor


def test_result_row_derives_bandwidths():
    row = result_row(scenario="s", point="", topology="t", op="allreduce", algorithm="ring", params="{}",
                     network_model="fifo", ranks=8, size_bytes=10**9, sim_time_s=0.5, model_time_s=0.25)
    assert tuple(row) == RESULT_COLUMNS
    assert row["algbw_GBps"] == 2.0
    assert row["busbw_GBps"] == 3.5
    assert row["sim_over_model"] == 2.0
    shown = display_table(pd.DataFrame([row]))
    assert shown.iloc[0]["size"] == "1 GB" and shown.iloc[0]["sim time"] == "500 ms"
