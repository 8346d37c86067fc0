"""Auto-tuning: the best all-reduce algorithm and parameters per message size, for one topology.

Like NCCL's tuner, but explained: every candidate is first priced by its
closed-form α-β model (the record's ``model``, as :func:`simnet.models.predict`;
cheap), then simulated on the network (contention included) in order of model
time, as long as its model time is within ``prune_factor`` of the best time known
at that size: the best model time, or the best simulated time so far when that is
larger. Every other candidate is pruned, and the simulated winner is kept. The
second reference is there because a closed form can price the model's favourite
far too low: over FIFO links on a ring of 8, recursive doubling's multi-hop
exchanges queue behind each other and simulate at twice their model time, and the
rings that win there would be pruned against the model alone (a test holds it).
``benchmarks/tune.py --check-pruning`` tunes every shipped topology and scenario
with and without pruning and reports how close to the best model time the
simulated winners were; ``prune_factor=math.inf`` simulates everything. The
simulations may run on an executor (worker processes, a Dask cluster): sizes are
independent, and within a size each candidate beyond the first ones is decided
only once those priced lower have finished, so the table does not depend on it.
Consecutive sizes with the same winner merge into ranges, giving a table such as::

    sizes              choice                              at size    predicted   simulated   runner-up
    1 KiB .. 64 KiB    recursive_doubling                  64 KiB     ...
    128 KiB .. 1 GiB   blueconnect {"factors": [8, 4]}     1 GiB      ...

With ``nccl``, NCCL's schedules are priced by NCCL's own model and pruned among
themselves; CollNet, which that model cannot price here, is simulated at every
size where the topology's switches can run it, and every NCCL schedule not tried
is named with the reason (:func:`skipped_note`).

Candidates are the tuning variants of every registered dense all-reduce
algorithm (its record's ``variants``): ``ring`` with every chunk and channel count
asked for, the flat algorithms with every chunk count, and where the topology has
a hierarchy (GPU attributes ``socket``, ``host``, ``leaf``; see
:mod:`simnet.algorithms.hierarchy`) ``hierarchical_ring`` and ``torus_2d`` with
their default factors and ``blueconnect`` with every distinct ordering of the
hierarchy's factors and of their coarsenings (adjacent levels merged).

The network is what a scenario's ``network:`` block makes of the topology (tier
efficiencies, routing, bundles, link model and sharing, overhead, reduction
bandwidth, stragglers, start offsets; :class:`simnet.scenario.NetworkSpec`), so a
tuned time is the time ``simnet run`` simulates for the same choice.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import sys
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass
from typing import Any

import networkx as nx
import pandas as pd
from tqdm import tqdm

from simnet import engine
from simnet.algorithms import ALGORITHMS
from simnet.algorithms.nccl import NCCL_NAMES, NCCL_RELEASE, SWITCH_SCHEDULES, nccl_variants
from simnet.algorithms.hierarchy import LEVELS, hierarchy_factors
from simnet.algorithms.registry import resolved_changes
from simnet.analysis import NCCL_COMPARISON_NOTE, nccl_key
from simnet.engine import simulate
from simnet.errors import SimnetError, did_you_mean
from simnet.models import NetworkCosts
from simnet.models.nccl import network_tuning
from simnet.scenario import parse_network
from simnet.units import format_size, format_size_span, format_time

__all__ = [
    "PRUNE_FACTOR",
    "candidates",
    "tune",
    "TUNE_COLUMNS",
    "tuner_table",
    "display_tuner_table",
    "as_blueconnect",
    "nccl_tuner_rows",
    "skipped_note",
    "comparison_note",
]

PRUNE_FACTOR = 1.5
"""Default of :func:`tune`'s `prune_factor`: simulate the candidates whose model time is within 1.5× of the best."""


def candidates(
    graph: nx.DiGraph, *, op: str = "allreduce", chunk_counts: Sequence[int] = (1, 4),
    channel_counts: Sequence[int] = (1, 2), nccl: bool = False, algorithms: Sequence[str] | None = None,
) -> list[tuple[str, dict]]:
    """Algorithm and parameter choices to consider on `graph`: every registered dense
    algorithm of collective `op` with its tuning variants (:attr:`Algorithm.variants`), in
    registry order; with `nccl`, also NCCL's schedules of `op` in every protocol they run
    (:func:`nccl_variants`); only those of `algorithms` if given (names are not checked here;
    :func:`tune` checks them)."""
    nranks = sum(1 for _, kind in graph.nodes(data="kind") if kind == "gpu")
    factors = functools.partial(hierarchy_factors, graph)
    try:
        factors(LEVELS)
    except SimnetError:
        factors = None
    choices: list[tuple[str, dict]] = []
    for name in ALGORITHMS.for_op(op):
        if algorithms is not None and name not in algorithms:
            continue
        record = ALGORITHMS[name]
        if record.payload == "dense":
            choices += [(name, params) for params in record.variants(nranks, factors, chunk_counts, channel_counts)]
        if nccl and name in NCCL_NAMES and record.supports(nranks):
            choices += [(name, params) for params in nccl_variants(name)]
    order = {name: i for i, name in enumerate(ALGORITHMS)}
    return sorted(choices, key=lambda choice: order[choice[0]])


_ALPHA_BETA_POOL, _NCCL_POOL, _UNPRICED_POOL = "alpha-beta", "nccl", "unpriced"
_COLLNET = ("collnet_direct", "collnet_chain")

TUNE_COLUMNS = ("size_bytes", "ranks", "algorithm", "params", "resolved", "choice", "predicted_s", "simulated_s",
                "model_rank", "sim_rank", "pruned")
"""Columns of :func:`tune`'s rows."""


@dataclass(frozen=True)
class _Priced:
    """A candidate at one size: its model time, label, name, parameters as given and as run."""

    predicted_s: float
    label: str
    name: str
    params: dict
    resolved: dict


def _label(name: str, params: dict) -> str:
    return f"{name} {json.dumps(params, sort_keys=True)}" if params else name


def tune(
    graph: nx.DiGraph,
    sizes: Iterable[int],
    *,
    op: str = "allreduce",
    network: Mapping[str, Any] | None = None,
    prune_factor: float = PRUNE_FACTOR,
    chunk_counts: Sequence[int] = (1, 4),
    channel_counts: Sequence[int] = (1, 2),
    nccl: bool = False,
    algorithms: Sequence[str] | None = None,
    progress: bool = False,
    executor: Executor | None = None,
) -> pd.DataFrame:
    """Price every candidate by its model, simulate those within `prune_factor` of the best time known.

    Parameters
    ----------
    graph : networkx.DiGraph
        The topology.
    sizes : iterable of int
        Payloads per rank, bytes (each tuned once; for ``all_gather`` the gathered result).
    op : str, optional
        Collective to tune (``"allreduce"``, ``"all_gather"``, ``"reduce_scatter"``, ...).
    network : mapping, optional
        A scenario's ``network:`` block as YAML data (``{"tier_efficiency":
        {"nvlink": "80%"}, "overhead": "5 us", "model": "fifo"}``; see
        :class:`simnet.scenario.NetworkSpec`): the same network and simulation
        options as ``simnet run``. Default: max-min links at line rate.
    prune_factor : float
        Simulate, in order of model time, the candidates whose model time is at
        most this times the best model time at that size, or the best simulated
        time so far if larger (≥ 1; ``math.inf`` simulates every candidate).
    chunk_counts, channel_counts : sequence of int
        Pipelining and channel counts to try.
    nccl : bool
        Also try NCCL's schedules (``nccl_ring``, ``nccl_tree``, ``nvls``, ...) in
        every protocol, on topologies where simnet has NCCL's model (servers of GPUs
        on one NVSwitch). They are priced by NCCL's own cost model, whose latencies
        and bandwidths are not the α-β forms', so they are pruned among themselves:
        against the best NCCL model time (or simulated time) at that size. Their
        channels are what NCCL launches at each size. CollNet, which that model
        cannot price (simnet derives no CollNet graphs, so the model has CollNet
        off), is simulated at every size without pruning, where the topology can
        run it. A schedule that reduces in a switch (NVLS, NVLSTree, CollNet) is
        tried only where it can be built for the network and a reduce-capable switch
        serves every group of GPUs it reduces across (the check the simulation
        makes); one NCCL's model gives no time is not tried either. What is not
        tried, and why, is in the result's ``attrs["skipped"]``
        (:func:`skipped_note`).
    algorithms : sequence of str, optional
        Tune only these algorithms (``["blueconnect", "ring"]``); default: every one
        with candidates for `op` on `graph`.
    progress : bool
        Show a tqdm progress bar of the simulations on standard error.
    executor : concurrent.futures.Executor, optional
        Where the simulations run: a :class:`~concurrent.futures.ProcessPoolExecutor`,
        or a Dask client's ``get_executor()``; ``None`` (default) runs them here, one
        after the other. Sizes are independent, and so are the α-β and the NCCL
        candidates of one size; among either, those whose model time is within
        `prune_factor` of the best model time are submitted at once, and a further
        one only when every one priced lower has finished, so the same candidates are
        simulated and pruned as without an executor.

    Returns
    -------
    pandas.DataFrame
        One row per (size, candidate), columns :data:`TUNE_COLUMNS`: ``size_bytes, ranks,
        algorithm, params, resolved`` (JSON of the values the algorithm chose for the
        network and size itself, NCCL's channels and protocol; ``""`` if none), ``choice,
        predicted_s`` (the closed form, with the reduction cost γ and the
        per-message overhead, as ``simnet run``'s ``model_time_s``), ``simulated_s``
        (``NaN`` when pruned), ``model_rank``, ``sim_rank`` (1 = fastest simulated,
        ``NaN`` when pruned; simulated times within a relative 1e-9 tie, and a tie
        goes to the candidate the model prices lower) and ``pruned``.
        Candidates without a closed form are left out; one whose schedule cannot
        be built for this topology keeps a ``NaN`` simulated time. CollNet's rows
        (with `nccl`) have ``NaN`` for ``predicted_s`` and ``model_rank``.
        ``attrs["skipped"]`` maps each of NCCL's schedules (with `nccl`) not tried
        at any size to the reason.

    Raises
    ------
    SimnetError
        For a `prune_factor` below 1 (path ``prune_factor``), a `network` block
        that does not validate (path ``network.<key>``), or a name of `algorithms` that
        is no algorithm of `op` or has no candidate here (path ``algorithms``).
    """
    if not prune_factor >= 1:
        raise SimnetError(f"must be ≥ 1, got {prune_factor}", path="prune_factor")
    if algorithms is not None:
        _check_algorithms(graph, op, algorithms, chunk_counts=chunk_counts, channel_counts=channel_counts,
                          nccl=nccl)
    spec = parse_network(network)
    net = spec.network(graph)
    nranks = net.size
    options = spec.simulate_kwargs(nranks)
    gamma = options["gamma_s_per_byte"]
    costs = NetworkCosts(net, overhead_s=[options["overhead_s"] * slowdown for slowdown in options["slowdown"]])
    choices = candidates(graph, op=op, chunk_counts=chunk_counts, channel_counts=channel_counts, nccl=nccl,
                         algorithms=algorithms)
    tuning = network_tuning(net, NCCL_RELEASE) if nccl else None
    priced: dict[tuple[int, str], list[_Priced]] = {}
    why_not: dict[str, str] = {}
    for size in sorted(set(sizes)):
        for name, params in choices:
            record = ALGORITHMS[name]
            if record.model is None:
                continue
            label = _label(name, params)
            try:
                resolved = record.resolved(net, size, params)
                if name in SWITCH_SCHEDULES and (reason := _cannot_run(net, name, resolved, size)) is not None:
                    why_not[label] = reason
                    continue
                predicted = record.predict(costs, nranks, size, gamma_s_per_byte=gamma, **resolved)
            except (SimnetError, ValueError) as error:
                if name in NCCL_NAMES:
                    why_not[label] = getattr(error, "message", str(error))
                continue
            pool = _NCCL_POOL if name in NCCL_NAMES else _ALPHA_BETA_POOL
            if not math.isfinite(predicted):
                if name in _COLLNET and tuning is not None and not tuning.system.collnet_enabled:
                    pool, predicted = _UNPRICED_POOL, math.nan
                else:
                    if name in NCCL_NAMES:
                        why_not[label] = ("simnet has no NCCL model of this topology" if tuning is None
                                          else "NCCL's model gives it no time here, so NCCL would not run it")
                    continue
            priced.setdefault((size, pool), []).append(_Priced(predicted, label, name, params, resolved))
    for entries in priced.values():
        entries.sort(key=lambda entry: (0.0 if math.isnan(entry.predicted_s) else entry.predicted_s, entry.label))
    tried_labels = {entry.label for entries in priced.values() for entry in entries}
    skipped = {label: reason for label, reason in why_not.items() if label not in tried_labels}
    simulated, tried = _simulate_pools(net, priced, options, prune_factor=prune_factor, executor=executor,
                                       progress=progress)
    rows = []
    for size in sorted(set(sizes)):
        entries = sorted((e for pool in (_ALPHA_BETA_POOL, _NCCL_POOL) for e in priced.get((size, pool), [])),
                         key=lambda entry: (entry.predicted_s, entry.label))
        ranked = len(entries)
        entries += priced.get((size, _UNPRICED_POOL), [])
        position = {entry.label: index for index, entry in enumerate(entries)}
        times = {e.label: simulated[size, e.label] for e in entries if (size, e.label) in simulated}
        fastest = min(times.values(), default=1.0)
        ranking = sorted(times, key=lambda k: (round(times[k] / fastest, 9), position[k]))
        order = {label: rank for rank, label in enumerate(ranking, 1)}
        for rank, entry in enumerate(entries, 1):
            chosen = resolved_changes(entry.params, entry.resolved)
            rows.append({
                "size_bytes": size,
                "ranks": nranks,
                "algorithm": entry.name,
                "params": json.dumps(entry.params, sort_keys=True),
                "resolved": json.dumps(chosen, sort_keys=True) if chosen else "",
                "choice": entry.label,
                "predicted_s": entry.predicted_s,
                "simulated_s": times.get(entry.label, math.nan),
                "model_rank": rank if rank <= ranked else math.nan,
                "sim_rank": order.get(entry.label, math.nan),
                "pruned": (size, entry.label) not in tried,
            })
    frame = pd.DataFrame(rows, columns=list(TUNE_COLUMNS))
    frame.attrs["skipped"] = skipped
    return frame


def _check_algorithms(graph: nx.DiGraph, op: str, algorithms: Sequence[str], **options: Any) -> None:
    """Refuse (path ``algorithms``) a name that is no algorithm of `op`, or one :func:`candidates` offers nothing
    of that has a model (what :func:`tune` prices) on `graph` with `options`."""
    if not algorithms:
        raise SimnetError("must name at least one algorithm", path="algorithms")
    known = ALGORITHMS.for_op(op)
    tried = list(dict.fromkeys(name for name, _ in candidates(graph, op=op, **options)
                               if ALGORITHMS[name].model is not None or name in _COLLNET))
    for name in algorithms:
        if name not in known:
            raise SimnetError(f"unknown algorithm {name!r} for {op}{did_you_mean(name, tried or known)} (tune tries "
                              f"{', '.join(tried)})", path="algorithms")
        if name not in tried:
            if name in NCCL_NAMES and not options["nccl"]:
                why = "NCCL's schedules are tried with nccl (--nccl)"
            elif ALGORITHMS[name].payload != "dense":
                why = "it reduces sparse payloads, and tune tunes dense sizes"
            else:
                why = "it has no tuning variant with a model on this topology"
            raise SimnetError(f"tune tries no {name!r} here: {why} (it tries {', '.join(tried)})", path="algorithms")


def _cannot_run(net, name: str, resolved: dict, size: int) -> str | None:
    """Why `net` cannot run NCCL schedule `name`, which reduces in a switch, or None if it can.

    Its schedule at `size` with its `resolved` parameters (one piece per part) cannot be
    built for the network's ranks (NVLSTree and CollNet join servers), or no
    reduce-capable switch serves one of its groups of GPUs
    (:meth:`simnet.network.Network.place`, where the simulation would fail)."""
    try:
        schedule = ALGORITHMS[name].build(net.size, size, **{**resolved, "max_pieces": 1})
    except SimnetError as error:
        return error.message
    try:
        net.place(range(net.size), schedule.switches)
    except SimnetError:
        return "no switch with reduce: true serves every group of GPUs it reduces across"
    return None


def skipped_note(tuned: pd.DataFrame) -> str:
    """One line saying which of NCCL's schedules :func:`tune` did not try and why (``""`` if none): schedules
    with the same reason share it, e.g. ``"not tried: nvls_tree, collnet_direct, collnet_chain (...)"``."""
    skipped = tuned.attrs.get("skipped", {})
    by_reason: dict[str, list[str]] = {}
    for label, reason in skipped.items():
        by_reason.setdefault(reason, []).append(label)
    if not by_reason:
        return ""
    return "not tried: " + "; ".join(f"{', '.join(labels)} ({reason})" for reason, labels in by_reason.items())


def comparison_note(tuned: pd.DataFrame, table: pd.DataFrame) -> str:
    """:data:`~simnet.analysis.NCCL_COMPARISON_NOTE` where a range of `table` (:func:`tuner_table` of `tuned`) is
    won by a schedule outside NCCL's family while NCCL's schedules were simulated beside it (``""`` otherwise):
    the winner paid link latencies only, NCCL's schedules NCCL's protocol and launch costs too."""
    simulated = tuned["algorithm"].isin(list(NCCL_NAMES)) & tuned["simulated_s"].notna()
    outside = ~table["algorithm"].isin(list(NCCL_NAMES))
    return NCCL_COMPARISON_NOTE if simulated.any() and outside.any() else ""


def _simulated_s(net, name: str, size: int, resolved: dict, options: dict, batch: int) -> float | None:
    """Simulated time of candidate `name` with parameters `resolved` at `size`; ``None`` if it cannot be built.

    `batch` is the number of transfers the run's candidates are estimated to send in all
    (:data:`simnet.engine.COMPILED_IN_BATCHES_FROM`)."""
    try:
        schedule = ALGORITHMS[name].build(net.size, size, **resolved)
    except SimnetError:
        return None
    return simulate(net, schedule, **options,
                    compiled=engine._batch_compiled(options["model"], batch, len(schedule))).time_s


def _batch(nranks: int, priced: dict[tuple[int, str], list[_Priced]], within: dict[tuple[int, str], int]) -> int:
    """Transfers the candidates simulated whatever the others give (those `within` the pruning factor of each
    pool's best model time) are estimated to send in all; one whose estimate fails counts none."""
    total = 0
    for key, count in within.items():
        for entry in priced[key][:count]:
            try:
                total += ALGORITHMS[entry.name].transfers(nranks, key[0], entry.resolved)
            except SimnetError:
                continue
    return total


def _simulate_pools(net, priced: dict[tuple[int, str], list[_Priced]], options: dict, *, prune_factor: float,
                    executor: Executor | None, progress: bool) -> tuple[dict[tuple[int, str], float],
                                                                        set[tuple[int, str]]]:
    """Simulate each pool's candidates in order of model time while within `prune_factor` of the best time known.

    A pool's first candidates, those within the factor of its best model time, are
    simulated whatever the others give (all of them in the pool of candidates NCCL's
    model cannot price, CollNet); each further one is decided when every
    candidate before it has finished, against the best simulated time among them,
    as a loop over the candidates would. Returns the simulated times and the
    ``(size, label)`` pairs tried (simulated or failing to build).
    """
    simulated: dict[tuple[int, str], float] = {}
    tried: set[tuple[int, str]] = set()
    pools = sorted(priced, key=lambda key: -key[0])
    within = {key: len(priced[key]) if key[1] == _UNPRICED_POOL else
              sum(entry.predicted_s <= prune_factor * priced[key][0].predicted_s for entry in priced[key])
              for key in pools}
    following = dict(within)
    batch = _batch(net.size, priced, within)
    outstanding = dict(within)
    best_s = dict.fromkeys(pools, math.inf)
    pending: dict[Future, tuple[tuple[int, str], _Priced]] = {}

    def start(key: tuple[int, str], entry: _Priced) -> None:
        tried.add((key[0], entry.label))
        arguments = (net, entry.name, key[0], entry.resolved, options, batch)
        if executor is None:
            bar.set_postfix_str(f"{format_size(key[0])} {entry.label}", refresh=False)
            finish(key, entry, _simulated_s(*arguments))
        else:
            pending[executor.submit(_simulated_s, *arguments)] = key, entry

    def finish(key: tuple[int, str], entry: _Priced, time_s: float | None) -> None:
        if time_s is not None:
            simulated[key[0], entry.label] = time_s
            best_s[key] = min(best_s[key], time_s)
        bar.update(1)
        outstanding[key] -= 1
        entries = priced[key]
        if outstanding[key] == 0 and following[key] < len(entries):
            entry = entries[following[key]]
            reference = entries[0].predicted_s if math.isinf(best_s[key]) else max(entries[0].predicted_s, best_s[key])
            if entry.predicted_s <= prune_factor * reference:
                following[key] += 1
                outstanding[key] += 1
                bar.total += 1
                start(key, entry)

    with tqdm(total=sum(within.values()), unit="sim", disable=not progress, file=sys.stderr, dynamic_ncols=True,
              desc="simulating") as bar:
        try:
            for key in pools:
                for entry in priced[key][:within[key]]:
                    start(key, entry)
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=lambda future: (-pending[future][0][0], pending[future][1].label)):
                    key, entry = pending.pop(future)
                    bar.set_postfix_str(f"{format_size(key[0])} {entry.label}", refresh=False)
                    finish(key, entry, future.result())
        except BaseException:
            for future in pending:
                future.cancel()
            raise
    return simulated, tried


def as_blueconnect(algorithm: str, params: str, nranks: int) -> str:
    """The BlueConnect factorization a choice amounts to, e.g. ``"[2, 2, 2, 2, 2]"``; ``""`` if none.

    BlueConnect with factors ``[p]`` is the ring and with all factors 2 it is
    halving-doubling (Cho et al. 2019; both equalities are tested), so those
    winners name their factorization too.
    """
    values = json.loads(params) if params else {}
    if algorithm == "blueconnect":
        return str(values["factors"])
    if algorithm == "halving_doubling" and nranks & (nranks - 1) == 0:
        return str([2] * (nranks.bit_length() - 1))
    if algorithm == "ring" and values.get("channels", 1) == 1:
        return str([nranks])
    return ""


def tuner_table(tuned: pd.DataFrame) -> pd.DataFrame:
    """The winner per size range, NCCL-tuner style, from :func:`tune`'s rows.

    Returns
    -------
    pandas.DataFrame
        ``from_bytes, to_bytes, sizes, choice, blueconnect_factors, algorithm, params,
        resolved, at_bytes, predicted_s, simulated_s, runner_up, margin, model_first`` per range
        of consecutive sizes with the same simulated winner. ``predicted_s``,
        ``simulated_s``, ``runner_up`` and ``margin`` are those at the size
        ``at_bytes``, the range's largest (its ``to_bytes``); ``margin`` is how much
        slower the runner-up simulated there; ``model_first`` whether the model
        alone would have chosen the winner at every size of the range;
        ``blueconnect_factors`` the factorization the choice amounts to (see
        :func:`as_blueconnect`). ``attrs["note"]`` is :func:`comparison_note`: where
        a schedule outside NCCL's family won a range while NCCL's schedules were
        simulated beside it, that the winner paid link latencies only.
    """
    per_size = []
    for size, group in tuned.groupby("size_bytes", sort=True):
        ranked = group.dropna(subset=["sim_rank"]).sort_values("sim_rank")
        if ranked.empty:
            continue
        best = ranked.iloc[0]
        runner = ranked.iloc[1] if len(ranked) > 1 else None
        per_size.append({
            "size_bytes": size,
            "choice": best["choice"],
            "blueconnect_factors": as_blueconnect(best["algorithm"], best["params"], int(best["ranks"])),
            "algorithm": best["algorithm"],
            "params": best["params"],
            "resolved": best["resolved"],
            "predicted_s": best["predicted_s"],
            "simulated_s": best["simulated_s"],
            "runner_up": runner["choice"] if runner is not None else "",
            "margin": runner["simulated_s"] / best["simulated_s"] - 1 if runner is not None else math.nan,
            "model_first": bool(best["model_rank"] == 1),
        })
    ranges = []
    for _, run in itertools.groupby(per_size, key=lambda row: row["choice"]):
        run = list(run)
        last = run[-1]
        ranges.append({
            "from_bytes": run[0]["size_bytes"],
            "to_bytes": last["size_bytes"],
            "sizes": format_size_span(run[0]["size_bytes"], last["size_bytes"]),
            **{key: last[key] for key in ("choice", "blueconnect_factors", "algorithm", "params", "resolved")},
            "at_bytes": last["size_bytes"],
            **{key: last[key] for key in ("predicted_s", "simulated_s", "runner_up", "margin")},
            "model_first": all(row["model_first"] for row in run),
        })
    table = pd.DataFrame(ranges, columns=["from_bytes", "to_bytes", "sizes", "choice", "blueconnect_factors",
                                          "algorithm", "params", "resolved", "at_bytes", "predicted_s",
                                          "simulated_s", "runner_up", "margin", "model_first"])
    table.attrs["note"] = comparison_note(tuned, table)
    return table


def display_tuner_table(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`tuner_table` for people: times with units, margins in percent, the size they are for.

    Where the table carries :func:`comparison_note` (a schedule outside NCCL's family
    won beside simulated NCCL schedules), a ``costs`` column says what each winner
    paid: ``"NCCL's"`` (protocol, kernel and launch costs) or ``"links only"``, and
    the note is kept in ``attrs["note"]``.
    """
    shown = pd.DataFrame({
        "sizes": table["sizes"],
        "choice": [choice + (f" x{channels} ch" if (channels := json.loads(r or "{}").get("channels")) else "")
                   for choice, r in zip(table["choice"], table["resolved"])],
        "as BlueConnect": table["blueconnect_factors"],
        "at size": table["at_bytes"].map(format_size),
        "predicted": table["predicted_s"].map(lambda t: "" if t != t else format_time(t)),
        "simulated": table["simulated_s"].map(format_time),
        "runner-up": table["runner_up"],
        "margin": table["margin"].map(lambda m: "" if m != m else f"{m:.1%}".replace("-0.0%", "0.0%")),
        "model agrees": table["model_first"].map({True: "yes", False: "no"}),
    })
    if note := table.attrs.get("note"):
        shown["costs"] = ["NCCL's" if name in NCCL_NAMES else "links only" for name in table["algorithm"]]
        shown.attrs["note"] = note
    return shown


_UINT64_MAX = 2**64 - 1
_COMMENT_WIDTH = 120
"""Comment lines are wrapped to this many characters, far within the plugin's 256-byte line buffer."""


def nccl_tuner_rows(tuned: pd.DataFrame, network, *, op: str = "allreduce",
                    version: str = NCCL_RELEASE) -> tuple[list, list[str]]:
    """NCCL's example tuner plugin configuration from :func:`tune`'s simulated NCCL winners.

    At each tuned size the fastest *simulated* of NCCL's schedules (``tune(...,
    nccl=True)``) gives a line ``collective,min,max,algorithm,protocol,channels,nNodes,
    nRanks`` (:class:`simnet.models.nccl.TunerRow`); consecutive sizes with the same
    algorithm, protocol and channels merge. Range bounds lie halfway (geometric mean,
    rounded down) between sampled sizes; the first range starts at 0 and the last ends
    at 2^64 - 1, because the example plugin runs an operation that matches no line on
    one channel. Channels are those the schedule ran with, or NCCL's launch
    configuration for schedules without a channel parameter (NVLS, CollNet).

    Parameters
    ----------
    tuned : pandas.DataFrame
        :func:`tune`'s rows, with NCCL's schedules among the candidates.
    network : Network
        The network they were tuned on (for NCCL's model and the server count).
    op : str, optional
        The collective `tuned` is of; sizes are the bytes NCCL's model and tuner see
        (simnet's size of an all-gather or reduce-scatter is already that total).
    version : str
        NCCL release whose model gives launch channels and NCCL's own choice.

    Returns
    -------
    rows : list of TunerRow
        The configuration, in size order.
    comments : list of str
        What the file says about itself: the network, the sampled sizes, that CollNet
        rows need CollNet enabled (where there are any), and each size where a schedule
        other than NCCL's simulated faster (simnet's generic schedules carry link
        latencies only, not NCCL's per-step protocol latencies) or NCCL's own model picks
        another algorithm or protocol, with the times.

    Raises
    ------
    SimnetError
        When no NCCL schedule was simulated at any size (path ``nccl``), e.g. on a
        topology without NCCL's model.
    """
    from simnet.models.nccl import MODELLED_SYSTEMS, TunerRow, choose, launch_config

    tuning = network_tuning(network, version)
    nccl_rows = tuned[tuned["algorithm"].isin(list(NCCL_NAMES)) & tuned["simulated_s"].notna()]
    if tuning is None or nccl_rows.empty:
        raise SimnetError(f"no NCCL schedule was simulated: NCCL's model exists for {MODELLED_SYSTEMS}", path="nccl")
    nranks = network.size
    try:
        per_node = hierarchy_factors(network.graph, ["host"])[0]
    except SimnetError:
        per_node = nranks
    n_nodes = nranks // per_node
    picks, notes = [], []
    for size, group in nccl_rows.groupby("size_bytes", sort=True):
        group = group.sort_values("sim_rank", kind="stable")
        keys = [nccl_key(a, p, r) for a, p, r in zip(group["algorithm"], group["params"], group["resolved"])]
        best = group.iloc[0]
        algorithm, protocol = keys[0].split("/")
        channels = json.loads(best["resolved"] or "{}").get("channels") or \
            launch_config(tuning, op, algorithm, protocol, int(size))[0]
        nbytes = int(size)
        picks.append((nbytes, (algorithm, protocol, int(channels))))
        label = f"{format_size(int(size))}: best simulated NCCL schedule {keys[0]} x{channels} " \
                f"{_unbroken(format_time(best['simulated_s']))}"
        everything = tuned[(tuned["size_bytes"] == size) & tuned["simulated_s"].notna()]
        fastest = everything.sort_values("sim_rank", kind="stable").iloc[0]
        if fastest["algorithm"] not in NCCL_NAMES:
            time_text = _unbroken(format_time(fastest["simulated_s"]))
            notes.append(f"{label}; fastest candidate {fastest['choice']} {time_text} "
                         "(simnet's schedule: link latencies only, no NCCL protocol costs)")
        own = choose(tuning, op, nbytes)
        if f"{own.algorithm}/{own.protocol}" != keys[0]:
            ran = group["simulated_s"][[key == f"{own.algorithm}/{own.protocol}" for key in keys]]
            shown = f"simulated {_unbroken(format_time(ran.min()))}" if len(ran) else "not simulated (pruned)"
            notes.append(f"{label}; NCCL's own model picks {own.algorithm}/{own.protocol}, {shown}")
    rows = []
    for key, run in itertools.groupby(enumerate(picks), key=lambda item: item[1][1]):
        run = list(run)
        first, last = run[0][0], run[-1][0]
        low = 0 if first == 0 else math.isqrt(picks[first - 1][0] * picks[first][0]) + 1
        high = _UINT64_MAX if last == len(picks) - 1 else math.isqrt(picks[last][0] * picks[last + 1][0])
        rows.append(TunerRow(op, low, high, *key, n_nodes=n_nodes, n_ranks=nranks))
    sizes = [nbytes for nbytes, _ in picks]
    candidates = tuned[tuned["algorithm"].isin(list(NCCL_NAMES))]
    pruned = int(candidates["pruned"].sum()) if "pruned" in candidates else 0
    comments = [
        f"written by simnet tune: NCCL {version} schedules simulated on {network.name}, {nranks} ranks on "
        f"{n_nodes} node(s)",
        f"fastest simulated NCCL algorithm/protocol at {len(sizes)} size{'s' if len(sizes) > 1 else ''}, "
        f"{format_size_span(sizes[0], sizes[-1])}; bounds halfway (geometric) between them, first from 0, last to "
        "2^64-1",
        *([f"fastest of the NCCL schedules simulated: {pruned} NCCL candidate(s) at these sizes were not simulated, "
           "their NCCL model time over the prune factor times the best (simnet tune --prune-factor inf simulates "
           "them all)"] if pruned else []),
        "load with NCCL_TUNER_PLUGIN=<example plugin> NCCL_TUNER_CONFIG_FILE=<this file>",
        *([f"rows of {' and '.join(collnet)} need CollNet enabled (NCCL_COLLNET_ENABLE=1 and a SHARP (CollNet) "
           "network plugin); where NCCL has no CollNet, the plugin skips them and such sizes run on one channel"]
          if (collnet := sorted({row[0] for _, row in picks} & set(_COLLNET))) else []),
        *notes,
    ]
    wrapped = (line for comment in comments for line in textwrap.wrap(comment, _COMMENT_WIDTH))
    return rows, [line.replace(_NO_BREAK, " ") for line in wrapped]


_NO_BREAK = "\u00a0"


def _unbroken(text: str) -> str:
    """`text` kept on one comment line when wrapped (a number and its unit)."""
    return text.replace(" ", _NO_BREAK)
