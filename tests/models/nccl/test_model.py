"""tune_model, algo_time_s, cost_table, choose and launch_config: hand computations, laws, restrictions."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet.errors import SimnetError
from simnet.models.nccl import (
    ALGORITHMS,
    FUNCTIONS,
    NCCL_VERSIONS,
    PROTOCOLS,
    NcclEnv,
    NcclGraph,
    NcclGraphs,
    NcclSystem,
    algo_latency_s,
    algo_time_s,
    choose,
    cost_table,
    launch_config,
    model_nbytes,
    tune_model,
)

RELEASES = sorted(NCCL_VERSIONS, key=lambda r: NCCL_VERSIONS[r].key)
SIZES = st.integers(min_value=0, max_value=1 << 36)
NAMES = ("h100", "a100", "h100x4", "a100x4", "h100x3_log", "socket")


def _tuning(communicators, name, release, env=None):
    system, graphs = communicators[name]
    return tune_model(system, graphs, release, env)


def test_h100_single_node_table_is_the_hand_computation_of_the_notes(communicators):
    """nccl_model.md §11.3 (8 x H100, 2.23+): latency µs / bandwidth GB/s of every AllReduce entry."""
    tuning = _tuning(communicators, "h100", "2.30.7")
    expected = {
        ("tree", "ll"): (15.2, 43.6), ("tree", "ll128"): (31.5, 128.8), ("tree", "simple"): (64.4, 165.6),
        ("ring", "ll"): (15.0, 80.6), ("ring", "ll128"): (40.6, 189.3), ("ring", "simple"): (56.0, 205.7),
        ("nvls", "simple"): (25.0, 272.0),
    }
    for (algorithm, protocol), (latency_us, bandwidth_GBps) in expected.items():
        assert tuning.latency_s("allreduce", algorithm, protocol) * 1e6 == pytest.approx(latency_us, abs=0.05)
        assert tuning.bandwidth_Bps("allreduce", algorithm, protocol) / 1e9 == pytest.approx(bandwidth_GBps, abs=0.05)
    assert _tuning(communicators, "h100", "2.27.7").bandwidth_Bps("allreduce", "nvls", "simple") / 1e9 == \
        pytest.approx(8 * 40 * 5 / 6)


def test_nccl1453_lines_by_hand(communicators):
    """§11.1: Tree/LL 65536 B = 25.2 + 65536 / (1000 · 20.4 · 0.85 · 0.5 · 0.6) µs."""
    tuning = _tuning(communicators, "h100x3_log", "2.22.3")
    assert algo_time_s(tuning, "allreduce", "tree", "ll", 65536) * 1e6 == \
        pytest.approx(25.2 + 65536 / (1000 * 20.4 * 0.85 * 0.5 * 0.6))
    assert algo_time_s(tuning, "allreduce", "tree", "ll128", 131072) * 1e6 == \
        pytest.approx(48.5 + 131072 / (1000 * 8 * 24 * 0.92 * 120 / 128 * 0.85 * 0.5 * 0.6))


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(NAMES), release=st.sampled_from(RELEASES), nbytes=SIZES,
       collective=st.sampled_from(FUNCTIONS))
def test_choice_is_the_argmin_of_the_cost_table_with_ties_to_lower_ids(communicators, name, release, nbytes,
                                                                        collective):
    tuning = _tuning(communicators, name, release)
    table = cost_table(tuning, collective, nbytes)
    finite = {key: time for key, time in table.items() if math.isfinite(time)}
    chosen = choose(tuning, collective, nbytes)
    if not finite:
        assert (chosen.algorithm, chosen.protocol) == ("ring", chosen.protocol)
        return
    best = min(finite.values())
    first = next(key for key in sorted(finite, key=lambda k: (ALGORITHMS.index(k[0]), PROTOCOLS.index(k[1])))
                 if finite[key] == best)
    assert (chosen.algorithm, chosen.protocol) == first
    assert chosen.time_s == best
    assert tuning.enabled(collective, chosen.algorithm, chosen.protocol)


def test_ties_go_to_the_lower_algorithm_then_protocol(communicators):
    tuning = _tuning(communicators, "h100", "2.30.7")
    latency = [list(map(list, row)) for row in tuning.latency_us]
    bandwidth = [list(map(list, row)) for row in tuning.bandwidth_GBps]
    for a, p in ((1, 2), (1, 1), (4, 2)):
        latency[4][a][p], bandwidth[4][a][p] = 10.0, 100.0
    latency[4][0] = [1e9, 1e9, 1e9]
    for entry in ((1, 0),):
        latency[4][entry[0]][entry[1]] = 1e9
    tied = replace(tuning, latency_us=tuple(tuple(map(tuple, r)) for r in latency),
                   bandwidth_GBps=tuple(tuple(map(tuple, r)) for r in bandwidth))
    assert choose(tied, "allreduce", 1 << 26)[:2] == ("ring", "ll128")


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(NAMES), release=st.sampled_from(RELEASES),
       collective=st.sampled_from(FUNCTIONS), low=st.integers(0, 1 << 34), factor=st.integers(1, 1 << 10))
def test_time_grows_with_size_except_across_tree_correction_steps(communicators, name, release, collective, low,
                                                                   factor):
    """Monotone for every entry without the tree correction; tree entries only within one octave of 64 B.

    NCCL's ``treeCorrectionFactor`` changes by octave of ``nBytes / 64`` (e.g. LL 0.4 at 512 KiB, 0.5 at
    1 MiB), so NCCL's own Tree time drops at some powers of two: a property of NCCL's model, kept.
    """
    tuning = _tuning(communicators, name, release)
    high = low * factor + factor
    for algorithm in tuning.algorithms:
        for protocol in PROTOCOLS:
            small = algo_time_s(tuning, collective, algorithm, protocol, low)
            large = algo_time_s(tuning, collective, algorithm, protocol, high)
            corrected = algorithm in ("tree", "nvls_tree") and collective == "allreduce"
            if not corrected or (low >> 6).bit_length() == (high >> 6).bit_length():
                assert large >= small


def test_tree_time_can_drop_at_an_octave_as_in_nccl(communicators):
    tuning = _tuning(communicators, "h100x3_log", "2.22.3")
    below = algo_time_s(tuning, "allreduce", "tree", "ll", (1 << 20) - 64)
    at = algo_time_s(tuning, "allreduce", "tree", "ll", 1 << 20)
    assert at < below


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(NAMES), release=st.sampled_from(RELEASES[-12:]), nbytes=SIZES,
       algos=st.sets(st.sampled_from(("Tree", "Ring", "NVLS", "NVLSTree", "PAT", "CollNetDirect")), min_size=1),
       protos=st.sets(st.sampled_from(("LL", "LL128", "Simple")), min_size=1))
def test_restrictions_are_obeyed_and_disabled_entries_never_chosen(communicators, name, release, nbytes, algos,
                                                                   protos):
    env = NcclEnv(algo=",".join(sorted(algos)), proto=",".join(sorted(protos)))
    tuning = _tuning(communicators, name, release, env)
    for collective in FUNCTIONS:
        try:
            chosen = choose(tuning, collective, nbytes)
        except SimnetError:
            assert all(not math.isfinite(t) for t in cost_table(tuning, collective, nbytes).values())
            continue
        assert tuning.enabled(collective, chosen.algorithm, chosen.protocol)
        names = {"tree": "Tree", "ring": "Ring", "nvls": "NVLS", "nvls_tree": "NVLSTree", "pat": "PAT",
                 "collnet_direct": "CollNetDirect", "collnet_chain": "CollNetChain"}
        assert names[chosen.algorithm] in algos
        assert {"ll": "LL", "ll128": "LL128", "simple": "Simple"}[chosen.protocol] in protos


def test_nccl_algo_grammar_per_release(communicators):
    system, graphs = communicators["h100"]
    per_function = tune_model(system, graphs, "2.30.7", NcclEnv(algo="ring;allreduce:tree"))
    assert choose(per_function, "allreduce", 1 << 30).algorithm == "tree"
    assert choose(per_function, "broadcast", 1 << 30).algorithm == "ring"
    excluded = tune_model(system, graphs, "2.30.7", NcclEnv(algo="allreduce:^nvls,ring"))
    assert choose(excluded, "allreduce", 1 << 30).algorithm == "tree"
    with pytest.raises(SimnetError, match="unknown name 'rings'") as error:
        tune_model(system, graphs, "2.30.7", NcclEnv(algo="rings"))
    assert error.value.path == "env.algo"
    with pytest.raises(SimnetError, match="prefix"):
        tune_model(system, graphs, "2.30.7", NcclEnv(algo="ring;tree"))
    with pytest.raises(SimnetError, match="unknown function"):
        tune_model(system, graphs, "2.30.7", NcclEnv(proto="allgatherv:simple"))
    lenient = tune_model(system, graphs, "2.23.4", NcclEnv(algo="rings,Tree"))
    assert choose(lenient, "allreduce", 1 << 30).algorithm == "tree"


def test_tree_only_leaves_broadcast_to_the_release(communicators):
    """``NCCL_ALGO=Tree``: 2.18 never disables Ring outside AllReduce, 2.19-2.23 fall back on Ring, 2.24+ fail."""
    system, graphs = communicators["h100"]
    env = NcclEnv(algo="Tree")
    assert choose(tune_model(system, graphs, "2.18.6", env), "broadcast", 1 << 20).algorithm == "ring"
    fallback = tune_model(system, graphs, "2.22.3", env)
    assert fallback.enabled("broadcast", "ring", "simple")
    assert choose(fallback, "broadcast", 1 << 20).algorithm == "ring"
    with pytest.raises(SimnetError, match="no algorithm/protocol available"):
        choose(tune_model(system, graphs, "2.24.3", env), "broadcast", 1 << 20)


def test_ll128_auto_rule_and_forcing(communicators):
    phb = NcclGraphs(ring=NcclGraph("ring", 8, 24.0, 24.0, "NVL", "PHB"), tree=NcclGraph("tree", 8, 24.0, 24.0,
                                                                                         "NVL", "PHB"))
    system = NcclSystem(n_ranks=16, n_nodes=2, min_compcap=90, n_channels=16, has_nvswitch=True)
    assert not tune_model(system, phb, "2.30.7").enabled("allreduce", "ring", "ll128")
    assert tune_model(system, phb, "2.30.7", NcclEnv(proto="LL128,Simple")).enabled("allreduce", "ring", "ll128")
    assert tune_model(system, phb, "2.30.7", NcclEnv(proto="^LL")).enabled("allreduce", "ring", "ll128")
    pxn = NcclGraphs(ring=replace(phb.ring, type_inter="PXN"), tree=replace(phb.tree, type_inter="PXN"))
    assert tune_model(system, pxn, "2.30.7").enabled("allreduce", "ring", "ll128")
    assert not tune_model(system, pxn, "2.30.7", NcclEnv(ll128_c2c=0)).enabled("allreduce", "ring", "ll128")
    mixed = replace(system, min_compcap=90, max_compcap=100)
    assert tune_model(mixed, pxn, "2.30.7").enabled("allreduce", "ring", "ll128")
    assert not tune_model(mixed, pxn, "2.29.7").enabled("allreduce", "ring", "ll128")
    sm86 = replace(system, min_compcap=86, max_compcap=86)
    assert not tune_model(sm86, pxn, "2.26.6").enabled("allreduce", "ring", "ll128")
    with pytest.raises(SimnetError, match="P2C") as error:
        tune_model(system, NcclGraphs(ring=replace(phb.ring, type_inter="P2C")), "2.26.6")
    assert error.value.path == "graphs.ring.type_inter"


def test_ring_plateau_and_pipelined_operations(communicators):
    """Ring/Simple multi-node AllReduce latency × 1.4 once nbytes / (channels · ranks) ≥ 64; lat × numPipeOps."""
    tuning = _tuning(communicators, "h100x4", "2.30.7")
    system = tuning.system
    lat = tuning.latency_s("allreduce", "ring", "simple")
    bw = tuning.bandwidth_Bps("allreduce", "ring", "simple")
    edge = 64 * system.n_channels * system.n_ranks
    assert algo_time_s(tuning, "allreduce", "ring", "simple", edge - 1) == pytest.approx(lat + (edge - 1) / bw)
    assert algo_time_s(tuning, "allreduce", "ring", "simple", edge) == pytest.approx(1.4 * lat + edge / bw)
    assert algo_time_s(tuning, "allreduce", "ring", "ll", 0, num_pipe_ops=5) == \
        pytest.approx(5 * tuning.latency_s("allreduce", "ring", "ll"))
    tree_lat = tuning.latency_s("allreduce", "tree", "simple")
    assert algo_time_s(tuning, "allreduce", "tree", "simple", 0, num_pipe_ops=9) == pytest.approx(2 * tree_lat)
    old = _tuning(communicators, "h100x4", "2.21.5")
    assert algo_time_s(old, "allreduce", "tree", "simple", 0, num_pipe_ops=9) == \
        pytest.approx(old.latency_s("allreduce", "tree", "simple"))


def test_the_latency_part_is_the_model_time_without_its_bytes(communicators):
    """algo_latency_s is algo_time_s less its bytes: nbytes / bw for Ring (the plateau and pipelined operations
    included), the time of 0 bytes for the others (whose bandwidth a tree correction may scale); inf off."""
    tuning = _tuning(communicators, "h100x4", "2.30.7")
    system = tuning.system
    edge = 64 * system.n_channels * system.n_ranks
    for protocol in ("simple", "ll", "ll128"):
        bw = tuning.bandwidth_Bps("allreduce", "ring", protocol)
        for nbytes, pipe in ((edge - 1, 1), (edge, 1), (1 << 24, 3)):
            assert algo_latency_s(tuning, "allreduce", "ring", protocol, nbytes, pipe) == pytest.approx(
                algo_time_s(tuning, "allreduce", "ring", protocol, nbytes, pipe) - nbytes / bw, rel=1e-9)
    assert algo_latency_s(tuning, "allreduce", "ring", "simple", edge) == \
        pytest.approx(1.4 * tuning.latency_s("allreduce", "ring", "simple"))
    for algorithm, protocol in (("tree", "ll128"), ("nvls_tree", "simple"), ("collnet_direct", "simple")):
        if tuning.bandwidth_Bps("allreduce", algorithm, protocol) == 0:
            assert algo_latency_s(tuning, "allreduce", algorithm, protocol, 1 << 20) == math.inf
        else:
            assert algo_latency_s(tuning, "allreduce", algorithm, protocol, 1 << 20) == \
                algo_time_s(tuning, "allreduce", algorithm, protocol, 0)


def test_derived_multinode_models(communicators):
    h100 = _tuning(communicators, "h100x4", "2.30.7")
    assert h100.bandwidth_Bps("allreduce", "ring", "simple") == pytest.approx(8 * 48 * 32 / 62 * 1e9)
    assert not h100.enabled("allreduce", "nvls", "simple")
    assert h100.enabled("allreduce", "nvls_tree", "simple")
    assert h100.latency_s("allreduce", "nvls_tree", "simple") == pytest.approx((25 + 2 * 2 * 20.9) * 1e-6)
    a100 = _tuning(communicators, "a100x4", "2.30.7")
    assert a100.bandwidth_Bps("allreduce", "tree", "simple") == pytest.approx(min(8 * 24 * 0.92, 8 * 17.8) * 0.5e9)
    assert a100.latency_s("allreduce", "ring", "ll") == pytest.approx((6.6 + 56 * 2.0 + 6 * 2.7) * 1e-6)


def test_single_rank_and_pat(communicators):
    alone = tune_model(NcclSystem(n_ranks=1, n_nodes=1, min_compcap=90), NcclGraphs(), "2.30.7")
    assert choose(alone, "allreduce", 1 << 20) == ("ring", "simple", 0.0)
    socket = _tuning(communicators, "socket", "2.29.7")
    assert socket.latency_s("all_gather", "pat", "simple") == pytest.approx(17.6e-6)
    assert not _tuning(communicators, "socket", "2.29.7", NcclEnv(pat_enable=0)).enabled("all_gather", "pat",
                                                                                             "simple")
    with pytest.raises(SimnetError, match="no algorithm 'pat'"):
        algo_time_s(_tuning(communicators, "socket", "2.22.3"), "all_gather", "pat", "simple", 1)


def test_filters_of_the_operation(communicators):
    tuning = _tuning(communicators, "h100", "2.30.7")
    assert choose(tuning, "allreduce", 1 << 30).algorithm == "nvls"
    assert choose(tuning, "allreduce", 1 << 30, nvls_op_support=False).algorithm == "ring"
    assert cost_table(tuning, "allreduce", 1 << 30, nvls_op_support=False)[("nvls", "simple")] == math.inf
    fp8 = cost_table(tuning, "allreduce", 1 << 30, fp8=True)
    assert fp8[("ring", "simple")] == cost_table(tuning, "allreduce", 1 << 30)[("ring", "simple")]


def test_launch_config(communicators):
    tuning = _tuning(communicators, "h100", "2.30.7")
    assert launch_config(tuning, "allreduce", "ring", "ll", 4096) == (1, 96)
    assert launch_config(tuning, "allreduce", "ring", "ll", 1 << 20) == (24, 512)
    assert launch_config(tuning, "allreduce", "nvls", "simple", 1 << 21) == (16, 640)
    assert launch_config(tuning, "allreduce", "tree", "simple", 1 << 30) == (24, 640)
    assert launch_config(tuning, "allreduce", "ring", "simple", 1 << 30) == (24, 544)


def test_model_nbytes():
    assert model_nbytes("all_gather", 1024, 8) == 8192
    assert model_nbytes("allreduce", 1024, 8) == 1024


@pytest.mark.parametrize(
    ("call", "path"),
    [
        (lambda t: algo_time_s(t, "allgather", "ring", "ll", 1), "collective"),
        (lambda t: algo_time_s(t, "allreduce", "rings", "ll", 1), "algorithm"),
        (lambda t: algo_time_s(t, "allreduce", "ring", "LL", 1), "protocol"),
        (lambda t: algo_time_s(t, "allreduce", "ring", "ll", -1), "nbytes"),
        (lambda t: algo_time_s(t, "allreduce", "ring", "ll", 1.5), "nbytes"),
        (lambda t: algo_time_s(t, "allreduce", "ring", "ll", 1, num_pipe_ops=0), "num_pipe_ops"),
        (lambda t: choose(t, "allreduce", 1, fp8=1), "fp8"),
        (lambda t: tune_model(t.system, t.graphs, "2.17.1"), "version"),
        (lambda t: tune_model(t.graphs, t.graphs, "2.30.7"), "system"),
        (lambda t: tune_model(t.system, t.system, "2.30.7"), "graphs"),
    ],
)
def test_bad_input_names_the_parameter(communicators, call, path):
    tuning = _tuning(communicators, "h100", "2.30.7")
    with pytest.raises(SimnetError) as error:
        call(tuning)
    assert error.value.path == path
    assert "\n" not in str(error.value)
