"""NCCL's TUNING lines: formats per release, round trips through the parsers, and the module doctests."""

from __future__ import annotations

import doctest

import pytest

import simnet.models.nccl as nccl_package
from simnet.errors import SimnetError
from simnet.models.nccl import (
    NcclChoice,
    NcclEnv,
    choose,
    decision_line,
    init_table,
    parse_decision_line,
    parse_init_table,
    thread_thresholds_line,
    tune_model,
)
from simnet.models.nccl import inputs, logs, model, topology, tuner, versions


@pytest.mark.parametrize("module", [nccl_package, inputs, logs, model, topology, tuner, versions])
def test_doctests(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_decision_line_formats(communicators):
    system, graphs = communicators["h100x3_log"]
    old = tune_model(system, graphs, "2.22.3")
    assert decision_line(old, "allreduce", 65536) == "65536 Bytes -> Algo 0 proto 0 time 37.798233"
    assert decision_line(tune_model(system, graphs, "2.23.4"), "allreduce", 8).startswith(
        "AllReduce: 8 Bytes -> Algo 0 proto 0 time ")
    new = tune_model(*communicators["h100"], "2.30.7")
    assert decision_line(new, "allreduce", 2 << 20) == \
        "AllReduce: 2097152 Bytes -> Algo NVLS proto SIMPLE channel{Lo..Hi}={0..15}"
    assert decision_line(new, "all_gather", 8 << 20, NcclChoice("ring", "simple", 0.0), channels=(0, 3)) == \
        "AllGather: 1048576 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}"


def test_backup_ring_prints_the_sentinel_in_2_20(communicators):
    """2.20: with NCCL_ALGO=NVLS and an operation NVLS cannot reduce, Ring runs on its backup bandwidth and
    the line keeps the 3600000000 µs start value of the search (enqueue.cc l.1455-1498 of v2.20.5-1)."""
    tuning = tune_model(*communicators["h100"], "2.20.5", NcclEnv(algo="NVLS"))
    assert not tuning.enabled("allreduce", "ring", "ll")
    chosen = choose(tuning, "allreduce", 1 << 20, nvls_op_support=False)
    assert chosen.algorithm == "ring" and chosen.time_s < 1e-3
    assert decision_line(tuning, "allreduce", 1 << 20, chosen).endswith("time 3600000000.000000")
    with pytest.raises(SimnetError, match="no algorithm"):
        choose(tune_model(*communicators["h100"], "2.24.3", NcclEnv(algo="NVLS")), "allreduce", 1 << 20,
               nvls_op_support=False)


@pytest.mark.parametrize("release", ["2.20.5", "2.23.4", "2.30.7"])
def test_decision_lines_parse_back(communicators, release):
    tuning = tune_model(*communicators["h100x4"], release)
    for nbytes in (8, 1 << 16, 1 << 26):
        line = f"host:1:2 [0] NCCL INFO {decision_line(tuning, 'allreduce', nbytes)}"
        parsed = parse_decision_line(line)
        chosen = choose(tuning, "allreduce", nbytes)
        assert (parsed.algorithm, parsed.protocol) == chosen[:2]
        assert parsed.printed_bytes == nbytes
        if parsed.time_s is not None:
            assert parsed.time_s == pytest.approx(chosen.time_s, rel=1e-6)


def test_init_table_parses_back_and_has_the_release_layout(communicators):
    system, graphs = communicators["h100x4"]
    old = init_table(tune_model(system, graphs, "2.22.3")).splitlines()
    new_tuning = tune_model(system, graphs, "2.30.7")
    new = init_table(new_tuning).splitlines()
    assert len(old) == 2 * 8 and len(new) == 3 * 8
    assert old[8].split("|")[1].split() == ["CollNetChain"] and new[16].split("|")[1].split() == ["PAT"]
    assert new[17].count("|") == 10 and new[18].count("|") == 4
    parsed = parse_init_table("\n".join(new))
    assert parsed.max_threads[("ring", "simple")] == 512
    assert parsed.latency_us[("allreduce", "nvls_tree", "simple")] == pytest.approx(
        new_tuning.latency_s("allreduce", "nvls_tree", "simple") * 1e6, abs=0.05)
    assert len(parsed.bandwidth_GBps) == 5 * 7 * 3


def test_thread_thresholds_line(communicators):
    tuning = tune_model(*communicators["h100"], "2.30.7")
    assert thread_thresholds_line(tuning) == "threadThresholds 8/8/64 | 64/8/64 | 512 | 512"


@pytest.mark.parametrize(
    "line",
    ["NCCL INFO Init COMPLETE", "NCCL INFO 8 Bytes -> Algo 9 proto 0 time 1.0",
     "NCCL INFO Gather: 8 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}",
     "NCCL INFO AllReduce: 8 Bytes -> Algo RINGS proto LL channel{Lo..Hi}={0..0}"],
)
def test_parse_decision_line_refuses(line):
    with pytest.raises(SimnetError):
        parse_decision_line(line)


def test_parse_init_table_refuses_an_unknown_algorithm():
    with pytest.raises(SimnetError, match="Tre") as error:
        parse_init_table("NCCL INFO   Algorithm   |     Tre    |")
    assert error.value.path == "line 1"


def test_choice_tuple():
    assert NcclChoice("ring", "ll", 1e-5)[:2] == ("ring", "ll")
