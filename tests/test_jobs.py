"""Jobs run together: closed forms of shared links, laws of placement and groups, the interference report."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet import engine
from simnet import jobs as jobs_module
from simnet.algorithms import ALGORITHMS, direct_alltoall, ring_allreduce
from simnet.errors import SimnetError
from simnet.jobs import (Flows, Job, _blocks, _covered_blocks, _intersect_blocks, _merge, _merge_blocks, communicators,
                         place, run_jobs)
from simnet.network import Network
from simnet.schedule import Schedule, Transfer
from simnet.topology import cluster, fat_tree, leaf_spine, switch
from tests.algorithms.fabrics import dgx_cluster
from tests.test_engine import assert_identical

BANDWIDTH_Bps = 12.5e9
LATENCY_S = 1e-6
FAT_TREE = Network(fat_tree(4, BANDWIDTH_Bps, LATENCY_S))
OVERSUBSCRIBED = Network(leaf_spine(4, 1, 2, BANDWIDTH_Bps, LATENCY_S, oversubscription=2.0))
"""Four leaves of two GPUs, one spine; each leaf's uplink carries 2 B / 2 = B: a 2:1 oversubscribed uplink."""
DGX = Network(dgx_cluster(4, 8))


@given(st.sampled_from(["ring", "recursive_doubling", "direct", "bruck"]), st.sampled_from(["ring", "direct"]),
       st.integers(1, 2**24), st.integers(1, 2**24), st.integers(1, 3))
@settings(max_examples=12, deadline=None)
def test_jobs_on_disjoint_halves_of_a_non_blocking_fat_tree_take_their_time_alone(first, second, size_a, size_b,
                                                                                 repeat):
    """Pods 0-1 and pods 2-3 of a k = 4 fat-tree share no link, whatever the routing picks."""
    jobs = [Job("a", (tuple(range(8)),), schedule=ALGORITHMS[first].build(8, size_a), repeat=repeat),
            Job("b", (tuple(range(8, 16)),), schedule=ALGORITHMS[second].build(8, size_b))]
    result = run_jobs(FAT_TREE, jobs)
    assert result.jobs["time_s"].to_numpy() == pytest.approx(result.jobs["alone_s"].to_numpy(), rel=1e-9)
    assert result.interference.empty and (result.jobs["shared_s"] == 0).all()


@given(st.integers(1, 2**22))
@settings(max_examples=10, deadline=None)
def test_two_ring_jobs_sharing_oversubscribed_uplinks_take_the_max_min_closed_form(quarter):
    """Ring [0, 2, 4, 6] and ring [1, 3, 5, 7]: in every step each job's flow leaf i -> leaf i+1 shares
    that leaf's uplink (bandwidth B) with the other job's, so max-min gives each B / 2::

        T = 2 (p - 1) (4 λ + (n/p) / (B / 2)),   alone: 2 (p - 1) (4 λ + (n/p) / B)
    """
    p, size = 4, 4 * quarter
    jobs = [Job("a", ((0, 2, 4, 6),), schedule=ring_allreduce(p, size)),
            Job("b", ((1, 3, 5, 7),), schedule=ring_allreduce(p, size))]
    result = run_jobs(OVERSUBSCRIBED, jobs)
    steps, alpha = 2 * (p - 1), 4 * LATENCY_S
    together = steps * (alpha + quarter / (BANDWIDTH_Bps / 2))
    alone = steps * (alpha + quarter / BANDWIDTH_Bps)
    assert result.jobs["time_s"].tolist() == pytest.approx([together, together], rel=1e-9)
    assert result.jobs["alone_s"].tolist() == pytest.approx([alone, alone], rel=1e-9)
    report = result.interference
    assert set(report["job"]) == {"a", "b"} and set(zip(report["job"], report["other"])) == {("a", "b"), ("b", "a")}
    assert all("spine0" in (src, dst) for src, dst in zip(report["src"], report["dst"]))
    assert report["shared_s"].to_numpy() == pytest.approx(steps * quarter / (BANDWIDTH_Bps / 2), rel=1e-9)
    assert report["other_bytes"].to_numpy() == pytest.approx(steps * quarter, rel=1e-9)
    assert result.jobs["slowed_by"].tolist() == ["b", "a"]


@given(st.integers(2**10, 2**26), st.integers(2**10, 2**26), st.sampled_from([1, 4]),
       st.sampled_from(["ring", "double_binary_tree"]))
@settings(max_examples=10, deadline=None)
def test_tp_and_dp_groups_together_take_between_the_slower_alone_and_both_back_to_back(tp_bytes, dp_bytes, chunks,
                                                                                      dp_algorithm):
    """Four DGX-style servers: 4 tensor-parallel groups of 8 (one per server) and 8 data-parallel groups
    of 4 (one GPU per server) all-reduce at once; they share the GPUs' NVSwitch links."""
    groups = communicators(range(32), {"tp": 8, "dp": "rest"})
    jobs = [Job("tp", groups["tp"], schedule=ring_allreduce(8, tp_bytes, chunks=chunks)),
            Job("dp", groups["dp"], schedule=ALGORITHMS[dp_algorithm].build(4, dp_bytes, chunks=chunks))]
    result = run_jobs(DGX, jobs)
    together = result.jobs["end_s"].max()
    tp_alone, dp_alone = result.jobs["alone_s"]
    assert together >= max(tp_alone, dp_alone) * (1 - 1e-12)
    assert together <= (tp_alone + dp_alone) * (1 + 1e-12)
    assert (result.jobs["time_s"] >= result.jobs["alone_s"] * (1 - 1e-12)).all()
    assert set(result.interference["tier"]) <= {"nvlink"}


def test_the_tp_dp_report_names_the_nvswitch_links_both_groups_cross():
    groups = communicators(range(32), {"tp": 8, "dp": "rest"})
    jobs = [Job("tp", groups["tp"], schedule=ring_allreduce(8, 16 * 2**20)),
            Job("dp", groups["dp"], schedule=ring_allreduce(4, 64 * 2**20))]
    result = run_jobs(DGX, jobs)
    shared = result.interference
    tp = shared[shared["job"] == "tp"]
    assert set(tp["other"]) == {"dp"} and set(tp["tier"]) == {"nvlink"}
    gpu_links = {(f"n{node}g{local}", f"n{node}sw") for node in range(4) for local in range(8)}
    assert set(zip(tp["src"], tp["dst"])) <= gpu_links | {(v, u) for u, v in gpu_links}
    row = result.jobs.set_index("job").loc["tp"]
    assert row["slowed_by"] == "dp" and row["slowdown"] > 1 and "sw" in row["shared_link"]


def test_the_job_that_waits_reports_the_link_and_the_job_that_held_it():
    """A 2-rank ring and a long transfer over the same uplink: the ring names the uplink and the flow job."""
    jobs = [Job("ring", ((0, 2),), schedule=ring_allreduce(2, 2**20)),
            Job("bulk", ((1, 3),), schedule=direct_alltoall(2, 2**24))]
    result = run_jobs(OVERSUBSCRIBED, jobs)
    row = result.jobs.set_index("job").loc["ring"]
    assert row["slowed_by"] == "bulk" and "spine0" in row["shared_link"] and row["slowdown"] > 1.9
    assert 0 < row["shared_s"] <= row["time_s"]


def test_permutation_flows_at_half_load_never_overlap_and_take_their_lone_time():
    network = Network(switch(8, BANDWIDTH_Bps, LATENCY_S))
    message = 2**20
    duration = 1e-3
    job = Job("noise", (tuple(range(8)),), flows=Flows("permutation", 0.5, message, seed=3, duration_s=duration))
    result = run_jobs(network, [job])
    lone = 2 * LATENCY_S + message / BANDWIDTH_Bps
    period = message / BANDWIDTH_Bps / 0.5
    row = result.jobs.iloc[0]
    assert row["repeat"] == math.ceil(duration / period)
    assert row["time_s"] == pytest.approx(lone, rel=1e-12) and row["alone_s"] == pytest.approx(lone, rel=1e-12)
    starts = result.timeline["start_s"].to_numpy()
    assert np.diff(starts) == pytest.approx(np.full(len(starts) - 1, period), rel=1e-9)


def test_background_flows_stop_when_the_collective_jobs_end():
    jobs = [Job("ring", ((0, 1, 2, 3),), schedule=ring_allreduce(4, 2**22)),
            Job("noise", (tuple(range(8)),), flows=Flows("random", 0.2, 2**18, seed=1))]
    result = run_jobs(Network(switch(8, BANDWIDTH_Bps, LATENCY_S)), jobs)
    ring_end = result.jobs.set_index("job").loc["ring", "end_s"]
    assert result.timeline[result.timeline["job"] == "noise"]["start_s"].max() < ring_end


def test_runs_are_deterministic():
    def once():
        jobs = [Job("a", (place(DGX, "random", 8, seed=5),), schedule=ring_allreduce(8, 2**20)),
                Job("noise", (tuple(range(32)),), flows=Flows("random", 0.3, 2**20, seed=2))]
        return run_jobs(DGX, jobs)

    first, second = once(), once()
    assert first.jobs.equals(second.jobs) and first.interference.equals(second.interference)


def test_bad_jobs_are_refused_with_the_job_name():
    with pytest.raises(SimnetError, match="give a schedule or flows"):
        Job("x", ((0, 1),))
    with pytest.raises(SimnetError, match="communicators of \\[3\\] ranks run a schedule of 2"):
        Job("x", ((0, 1, 2),), schedule=ring_allreduce(2, 100))
    with pytest.raises(SimnetError) as error:
        run_jobs(DGX, [Job("x", ((0, 99),), schedule=ring_allreduce(2, 100))])
    assert error.value.path == "x"
    with pytest.raises(SimnetError, match="need a collective job to stop with"):
        run_jobs(DGX, [Job("noise", ((0, 1),), flows=Flows())])
    with pytest.raises(SimnetError, match="distinct"):
        run_jobs(DGX, [Job("x", ((0, 1),), schedule=ring_allreduce(2, 100))] * 2)


@given(st.integers(1, 64), st.sampled_from(["contiguous", "strided", "random", "rail_aligned"]), st.integers(0, 9),
       st.lists(st.integers(0, 63), max_size=20))
@settings(max_examples=60, deadline=None)
def test_placements_pick_distinct_free_gpus_and_follow_their_seed(count, kind, seed, taken):
    network = RAILS
    free = network.size - len(set(taken))
    if count > free:
        with pytest.raises(SimnetError):
            place(network, kind, count, taken=taken, seed=seed)
        return
    chosen = place(network, kind, count, taken=taken, seed=seed)
    assert len(set(chosen)) == count and not set(chosen) & set(taken)
    order = {"strided": lambda r: (r % 8, r), "rail_aligned": lambda r: (r % 8, r // 8, r)}.get(kind, lambda r: r)
    assert list(chosen) == sorted(chosen, key=order)
    assert chosen == place(network, kind, count, taken=taken, seed=seed)
    if kind == "contiguous":
        assert chosen == tuple(r for r in range(64) if r not in set(taken))[:count]
    if kind == "random":
        shuffled = place(network, "shuffled", count, taken=taken, seed=seed)
        assert sorted(shuffled) == list(chosen)
        assert shuffled == place(network, "shuffled", count, taken=taken, seed=seed)


def test_a_shuffled_placement_of_every_gpu_is_a_seeded_permutation_of_the_ranks():
    orders = {place(FAT_TREE, "shuffled", FAT_TREE.size, seed=seed) for seed in range(4)}
    assert len(orders) == 4
    assert all(sorted(order) == list(range(FAT_TREE.size)) for order in orders)
    assert {place(FAT_TREE, "random", FAT_TREE.size, seed=seed) for seed in range(4)} == {tuple(range(FAT_TREE.size))}


RAILS = Network(cluster("dgx_a100", 8, fabric="leaf_spine",
                        fabric_params={"leaves": 8, "spines": 2, "hosts_per_leaf": 8, "bandwidth_Bps": 25e9,
                                       "latency_s": 1e-6}))
"""8 DGX A100 (64 GPUs, 8 rails): rail j of every server on leaf j."""


def test_rail_aligned_jobs_keep_to_their_rails_and_strided_ones_spread_over_servers():
    first = place(RAILS, "rail_aligned", 16)
    second = place(RAILS, "rail_aligned", 16, taken=first)
    rails = [{r % 8 for r in job} for job in (first, second)]
    assert rails == [{0, 1}, {2, 3}]
    assert {r // 8 for r in first} == set(range(8))
    assert [r // 8 for r in place(RAILS, "strided", 8)] == list(range(8))


@pytest.mark.parametrize("kind", ["strided", "rail_aligned"])
def test_strided_and_rail_aligned_placements_of_every_gpu_order_the_jobs_ranks_across_servers(kind):
    """Study r25 F1: both sorted the GPUs they picked, so over all GPUs they were ``contiguous`` and a DP group of
    ``groups: {dp: 8, ...}`` sat inside one server; job ranks 0..7 are now one GPU (of one rail) per server."""
    chosen = place(RAILS, kind, RAILS.size)
    assert chosen[:10] == (0, 8, 16, 24, 32, 40, 48, 56, 1, 9)
    dp = communicators(chosen, {"dp": 8, "local": "rest"})["dp"]
    assert all(sorted(r // 8 for r in group) == list(range(8)) and len({r % 8 for r in group}) == 1 for group in dp)
    assert place(RAILS, kind, 16, stride=8) == place(RAILS, kind, 16) == chosen[:16]


@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
@settings(max_examples=50, deadline=None)
def test_every_level_of_groups_partitions_the_ranks(sizes, data):
    total = math.prod(sizes)
    ranks = data.draw(st.permutations(range(100, 100 + total)))
    names = [f"l{i}" for i in range(len(sizes))]
    rest = data.draw(st.sampled_from([None, *names]))
    levels = communicators(ranks, {name: ("rest" if name == rest else size) for name, size in zip(names, sizes)})
    stride = 1
    for name, size in zip(names, sizes):
        groups = levels[name]
        assert sorted(r for group in groups for r in group) == sorted(ranks)
        assert all(len(group) == size for group in groups)
        first = groups[0]
        assert [ranks.index(r) for r in first] == [k * stride for k in range(size)]
        stride *= size


def test_groups_that_do_not_fit_are_refused_with_the_level():
    with pytest.raises(SimnetError) as error:
        communicators(range(12), {"tp": 5, "dp": "rest"})
    assert error.value.path == "tp"
    with pytest.raises(SimnetError) as error:
        communicators(range(12), {"tp": "rest", "dp": "rest"})
    assert error.value.path == "dp"


def _measure(starts, ends, grid):
    inside = np.zeros(len(grid) - 1, dtype=bool)
    middle = (grid[:-1] + grid[1:]) / 2
    for s, e in zip(starts, ends):
        inside |= (middle >= s) & (middle < e)
    return inside


intervals = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=8).map(
    lambda pairs: (np.array([min(p) for p in pairs], dtype=float), np.array([max(p) for p in pairs], dtype=float)))


@given(intervals, intervals)
@settings(max_examples=100, deadline=None)
def test_interval_union_intersection_and_cover_agree_with_counting_unit_cells(first, second):
    grid = np.arange(0, 41, dtype=float)
    a_start, a_end = _merge(*first)
    b_start, b_end = _merge(*second)
    assert (np.diff(a_start) > 0).all() and (a_start[1:] > a_end[:-1]).all()
    assert _measure(a_start, a_end, grid).tolist() == _measure(*first, grid).tolist()
    _, s_start, s_end = _intersect_blocks(np.zeros(len(a_start), dtype=np.int64), a_start, a_end,
                                          np.zeros(len(b_start), dtype=np.int64), b_start, b_end)
    both = _measure(*first, grid) & _measure(*second, grid)
    assert _measure(s_start, s_end, grid).tolist() == both.tolist()
    covered = _covered_blocks(a_start, a_end, np.array([0]), np.array([len(a_start)]),
                              np.zeros(len(second[0]), dtype=np.int64), second[0], second[1])
    expected = [(_measure(*first, grid) & _measure([s], [e], grid)).sum() for s, e in zip(*second)]
    assert covered.tolist() == pytest.approx(expected)


@given(st.lists(intervals, min_size=1, max_size=5), st.lists(st.tuples(st.integers(0, 4), st.floats(0, 40),
                                                                        st.floats(0, 40)), max_size=30))
@settings(max_examples=200, deadline=None)
def test_covering_in_many_blocks_at_once_gives_each_blocks_own_lengths(blocks, asked):
    """The lengths of intervals inside the union of their own block, all blocks asked at once, are those of each
    block asked alone, bit for bit."""
    merged = [_merge(start * 0.37, end * 0.37) for start, end in blocks]
    starts = np.concatenate([start for start, _ in merged])
    ends = np.concatenate([end for _, end in merged])
    hi = np.cumsum([len(start) for start, _ in merged])
    lo = hi - [len(start) for start, _ in merged]
    block = np.array([k % len(blocks) for k, _, _ in asked], dtype=np.int64)
    a = np.array([min(x, y) for _, x, y in asked])
    b = np.array([max(x, y) for _, x, y in asked])
    together = _covered_blocks(starts, ends, lo, hi, block, a, b)
    for k, j in enumerate(block.tolist()):
        alone = _covered_blocks(*merged[j], np.array([0]), np.array([len(merged[j][0])]), np.zeros(1, dtype=np.int64),
                                a[k:k + 1], b[k:k + 1])
        assert together[k] == alone[0]


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.floats(0, 40), st.floats(0, 40)), max_size=40))
@settings(max_examples=200, deadline=None)
def test_merging_every_link_and_job_at_once_gives_each_ones_own_union(rows):
    """The union of each (link, job)'s intervals, all merged in one pass, is :func:`_merge` of that block alone,
    bit for bit, blocks in order of their key."""
    rows.sort(key=lambda row: (row[0], row[1]))
    link = np.array([row[0] for row in rows], dtype=np.int64)
    job = np.array([row[1] for row in rows], dtype=np.int64)
    start = np.array([min(row[2:]) for row in rows])
    end = np.array([max(row[2:]) if row[2] != row[3] else row[2] for row in rows])
    keys, first = _blocks(link, job, 3)
    merged_key, merged_start, merged_end = _merge_blocks(keys, first, start, end)
    expected_key, expected_start, expected_end = [], [], []
    for block, key in enumerate(keys.tolist()):
        one_start, one_end = _merge(start[first[block]:first[block + 1]], end[first[block]:first[block + 1]])
        expected_key += [key] * len(one_start)
        expected_start += one_start.tolist()
        expected_end += one_end.tolist()
    assert merged_key.tolist() == expected_key
    assert merged_start.tolist() == expected_start
    assert merged_end.tolist() == expected_end


@given(st.lists(st.tuples(intervals, intervals), max_size=6))
@settings(max_examples=200, deadline=None)
def test_intersecting_many_blocks_at_once_gives_each_pairs_own_intersection(pairs):
    """Each union of B against its own block of A, all in one call, gives the pieces of that pair alone
    (as counted on unit cells), in order; blocks of A with no B, or B with no A, give none."""
    a_block, a_start, a_end, b_block, b_start, b_end = ([] for _ in range(6))
    for block, (first, second) in enumerate(pairs):
        for blocks, starts, ends, (start, end) in ((a_block, a_start, a_end, _merge(*first)),
                                                    (b_block, b_start, b_end, _merge(*second))):
            blocks += [block] * len(start)
            starts += start.tolist()
            ends += end.tolist()
    arrays = [np.array(values, dtype=float) for values in (a_start, a_end, b_start, b_end)]
    b, start, end = _intersect_blocks(np.array(a_block, dtype=np.int64), arrays[0], arrays[1],
                                      np.array(b_block, dtype=np.int64), arrays[2], arrays[3])
    grid = np.arange(0, 41, dtype=float)
    owner = np.array(b_block, dtype=np.int64)[b]
    assert (np.diff(owner) >= 0).all() and (end > start).all()
    for block, (first, second) in enumerate(pairs):
        mine = owner == block
        assert (np.diff(start[mine]) > 0).all() and (start[mine][1:] >= end[mine][:-1]).all()
        both = _measure(*first, grid) & _measure(*second, grid)
        assert _measure(start[mine], end[mine], grid).tolist() == both.tolist()


def _compiled_and_simpys(monkeypatch, network: Network, jobs: list[Job], **options) -> tuple[list, list]:
    """`run_jobs` with every run in the compiled loop and in SimPy's loop, and per compiled run whether
    :meth:`Simulation._drive` went to the end (True) or met an instant SimPy's clock would not land on."""
    drive, outcomes = engine.Simulation._drive, []

    def spied(sim):
        try:
            drive(sim)
        except engine._Unreachable:
            outcomes.append(False)
            raise
        outcomes.append(True)

    monkeypatch.setattr(engine.Simulation, "_drive", spied)
    results = []
    for threshold in (0, math.inf):
        monkeypatch.setattr(engine, "COMPILED_FROM", threshold)
        results.append(run_jobs(network, jobs, **options))
    return results, outcomes


def _assert_same_jobs(mine, theirs) -> None:
    for name in ("jobs", "timeline", "interference"):
        pd.testing.assert_frame_equal(getattr(mine, name), getattr(theirs, name), check_exact=True)
    for job, traces in theirs.traces.items():
        for a, b in zip(mine.traces[job], traces, strict=True):
            assert a.begin_s == b.begin_s and a.flows == b.flows
            assert_identical(a, b)


@pytest.mark.parametrize("compiled_from", [0, math.inf])
@pytest.mark.parametrize("in_order", [False, True])
def test_an_in_order_schedule_reorders_only_its_own_waiting_transfers(monkeypatch, compiled_from, in_order):
    """On one connection, A's 4 MiB transfer drains while B's (3 us), A's third (6 us) and A's second (11 us)
    wait, in that order. In program order A's second takes its third's place, never B's: B, then A's second and
    third, and B's time does not depend on whether A is `in_order`."""
    monkeypatch.setattr(engine, "COMPILED_FROM", compiled_from)
    bandwidth_Bps, mib = 100e9, 2**20
    network = Network(switch(2, bandwidth_Bps, LATENCY_S))
    first = Schedule(collective="allreduce", nranks=2, chunk_bytes=(1, 1, 1), in_order=in_order,
                     transfers=(Transfer(0, 1, (0,), 4 * mib), Transfer(0, 1, (1,), mib, delay_s=9e-6),
                                Transfer(0, 1, (2,), mib, delay_s=4e-6)))
    second = Schedule(collective="allreduce", nranks=2, chunk_bytes=(1,), transfers=(Transfer(0, 1, (0,), mib),))
    result = run_jobs(network, [Job("a", ((0, 1),), schedule=first),
                                Job("b", ((0, 1),), schedule=second, start_s=1e-6)], alone=False)
    ends_s = [2 * LATENCY_S + k * mib / bandwidth_Bps for k in (4, 5, 6, 7)]
    order = (0, 2, 3) if in_order else (0, 3, 2)
    assert result.traces["a"][0].end_s == pytest.approx([ends_s[k] for k in order], rel=1e-12)
    assert result.traces["b"][0].end_s == pytest.approx([ends_s[1]], rel=1e-12)


def test_jobs_run_in_the_compiled_loop_as_in_simpys(monkeypatch):
    """BlueConnect twice in a row on half of 4 DGX A100, 8 all-to-all groups three times each from 0.1 ms,
    and a permutation of background flows over all of them: the compiled loop (stopping at every round,
    start and completion) gives SimPy's jobs, timelines, interference and traces, bit for bit."""
    network = Network(cluster("dgx_a100", 4, fabric="fat_tree",
                              fabric_params={"k": 8, "bandwidth_Bps": 25e9, "latency_s": LATENCY_S}))
    half = network.size // 2
    jobs = [Job("train", (tuple(range(half)),), schedule=ALGORITHMS["blueconnect"].build(half, 2**26), repeat=2),
            Job("moe", communicators(range(half, network.size), {"ep": 8, "dp": "rest"})["ep"],
                schedule=direct_alltoall(8, 2**24), start_s=1e-4, repeat=3),
            Job("noise", (tuple(range(network.size)),), flows=Flows("permutation", 0.1, 2**22, seed=1))]
    (mine, theirs), outcomes = _compiled_and_simpys(monkeypatch, network, jobs)
    assert outcomes == [True] * 4
    _assert_same_jobs(mine, theirs)
    assert (mine.jobs["slowdown"] > 1).all()


def test_jobs_fall_back_to_simpys_loop_where_its_clock_cannot_follow(monkeypatch):
    """A job started at 0.31 µs whose ranks start late by 20.8 µs and pay 615 µs of overhead issues transfers at
    an instant SimPy's clock does not land on from its start: the compiled run is dropped and SimPy's loop
    gives the result."""
    jobs = [Job("late", ((0, 1, 2, 3),), schedule=ring_allreduce(4, 2**20), start_s=3.133201784809455e-07),
            Job("ring", ((4, 5, 6, 7),), schedule=ring_allreduce(4, 2**20))]
    options = {"overhead_s": 0.0006150309700816586, "start_offset_s": [2.0810475128435035e-05] * FAT_TREE.size}
    (mine, theirs), outcomes = _compiled_and_simpys(monkeypatch, FAT_TREE, jobs, **options)
    assert outcomes[0] is False
    _assert_same_jobs(mine, theirs)


def test_every_communicators_pairs_are_routed_in_one_table(monkeypatch):
    """Two all-to-all groups of 16 GPUs (two servers each) on 4 DGX A100: the routes of both groups' 480 pairs
    are composed in one call, not one call per group, and the jobs' times are those of routing per group."""
    def network():
        return Network(cluster("dgx_a100", 4, fabric="fat_tree",
                               fabric_params={"k": 8, "bandwidth_Bps": 25e9, "latency_s": LATENCY_S}))

    groups = communicators(range(32), {"ep": 16, "dp": "rest"})["ep"]
    jobs = [Job("moe", groups, schedule=direct_alltoall(16, 2**20)),
            Job("noise", (tuple(range(32)),), flows=Flows("permutation", 0.1, 2**20, seed=1))]
    composed = Network._composed
    calls = []

    def counted(self, src, dst):
        calls.append(len(src))
        return composed(self, src, dst)

    monkeypatch.setattr(Network, "_composed", counted)
    ahead = run_jobs(network(), jobs)
    assert calls == [2 * 16 * 15]
    monkeypatch.setattr(jobs_module, "_route_ahead", lambda network, jobs: None)
    calls.clear()
    apart = run_jobs(network(), jobs)
    assert calls[:2] == [16 * 15, 16 * 15]
    pd.testing.assert_frame_equal(ahead.jobs, apart.jobs)
    pd.testing.assert_frame_equal(ahead.timeline, apart.timeline)


def test_the_documented_python_route_to_a_jobs_scenarios_tables():
    """Study r23: docs/concurrency.md showed jobs built by hand only; a scenario's interference table was not
    reachable from the documented API. simnet.run gives every point's job rows, run_jobs_point each point's
    rows with its tables, the same rows."""
    import simnet
    from simnet.analysis import JOB_COLUMNS
    from simnet.scenario import expand, run_jobs_point

    scenario = simnet.load_scenario("scenarios/jobs_tp_dp.yaml")
    rows = simnet.run(scenario)
    assert [column for column in rows.columns if column in JOB_COLUMNS] == list(JOB_COLUMNS)
    results = [run_jobs_point(point) for point in expand(scenario)]
    pd.testing.assert_frame_equal(rows[list(JOB_COLUMNS)],
                                  pd.concat([result.jobs for result in results], ignore_index=True))
    assert any(len(result.interference) for result in results)
    assert "jobs_tp_dp.yaml" in open("docs/concurrency.md").read()


def test_every_python_block_of_docs_concurrency_runs_as_written(monkeypatch):
    """Study r25 F6: the hand-built run_jobs example used a `network` it never built (NameError). A block that
    prints (the sparse job beside TP against NCCL, study r25 F2) prints the lines the text quotes after it."""
    import contextlib
    import io
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(root)
    text = (root / "docs" / "concurrency.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 3
    for index, block in enumerate(blocks):
        namespace: dict = {}
        with contextlib.redirect_stdout(io.StringIO()) as out:
            exec(compile(block, f"docs/concurrency.md block {index}", "exec"), namespace)
        printed = out.getvalue().splitlines()
        after = text.split(block, 1)[1].removeprefix("```\n\n").split("\n\n")[0]
        assert all(f"`{line}`" in after for line in printed)
        assert not printed or index == 0
    traces = namespace["result"].traces
    assert isinstance(traces["tp"], list) and len(traces["tp"]) == 4 and len(traces["dp"]) == 8


def test_a_missing_builder_parameter_is_named_as_its_caller_writes_it():
    """Study r25 F6: from Python, an unknown `bandwidth` was told 'did you mean bandwidth_Bps' and a missing one
    'missing parameter bandwidth'."""
    from simnet.topology.io import build

    params = {"leaves": 8, "spines": 2, "hosts_per_leaf": 4, "latency_s": 1e-6}
    with pytest.raises(SimnetError) as error:
        cluster("dgx_a100", 4, fabric="leaf_spine", fabric_params=params)
    assert str(error.value) == ("fabric_params.bandwidth: missing parameter 'bandwidth_Bps' (bandwidth in a "
                                "scenario file)")
    with pytest.raises(SimnetError) as error:
        build({"builder": "leaf_spine", "leaves": 2, "spines": 1, "hosts_per_leaf": 2, "bandwidth": "1 GB/s"})
    assert str(error.value) == "latency: missing parameter 'latency' (latency_s)"


def test_a_sparse_all_reduce_runs_as_a_job_alone_as_simulated_and_no_faster_beside_tensor_parallel_rings():
    """Study r25 F2: a sparse schedule is a job like any other. Alone it takes `simulate`'s time exactly; beside TP
    rings on the same GPUs (reverse order: no GPU pair carries both, so nothing queues on a shared connection) it
    is slower, held back on NVSwitch links by them. Its bus bandwidth is NaN (docs/sparse.md): its algbw is on
    the dense size and no link carries it."""
    from simnet.algorithms.sparse import sparse_ring_ring
    from simnet.engine import simulate
    from simnet.payloads import SparsePayload

    payload = SparsePayload(dimension=2**18, density=1 / 64, seed=1)
    grad = Job("grad", (tuple(range(32)),),
               schedule=sparse_ring_ring(32, payload.size_bytes, payload=payload, gpus_per_node=8))
    tp = Job("tp", tuple(tuple(range(8 * n + 7, 8 * n - 1, -1)) for n in range(4)),
             schedule=ring_allreduce(8, 16 * 2**20))
    alone = run_jobs(DGX, [grad])
    (row,) = alone.jobs.to_dict("records")
    assert row["time_s"] == row["alone_s"] == simulate(DGX, grad.schedule).time_s
    assert math.isnan(row["busbw_GBps"])
    assert row["algbw_GBps"] == pytest.approx(payload.size_bytes / row["time_s"] / 1e9)
    both = run_jobs(DGX, [grad, tp])
    jobs = both.jobs.set_index("job")
    assert jobs.loc["grad", "alone_s"] == row["time_s"] < jobs.loc["grad", "time_s"]
    assert jobs.loc["grad", "slowed_by"] == "tp" and jobs.loc["tp", "time_s"] >= jobs.loc["tp", "alone_s"]
    held = both.interference[both.interference["job"] == "grad"]
    assert len(held) and set(held["tier"]) == {"nvlink"} and set(held["other"]) == {"tp"}
