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
simulated winners were; ``prune_factor=math.inf`` simulates everything.
Consecutive sizes with the same winner merge into ranges, giving a table such as::

    sizes              choice                              at size    predicted   simulated   runner-up
    1 KiB .. 64 KiB    recursive_doubling                  64 KiB     ...
    128 KiB .. 1 GiB   blueconnect {"factors": [8, 4]}     1 GiB      ...

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
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import networkx as nx
import pandas as pd
from tqdm import tqdm

from simnet.algorithms import ALGORITHMS
from simnet.algorithms.hierarchy import LEVELS, hierarchy_factors
from simnet.engine import simulate
from simnet.errors import SimnetError
from simnet.models import NetworkCosts
from simnet.scenario import parse_network
from simnet.units import UnitError, format_size, format_time, parse_size

__all__ = [
    "PRUNE_FACTOR",
    "parse_size_range",
    "candidates",
    "tune",
    "tuner_table",
    "display_tuner_table",
    "as_blueconnect",
]

PRUNE_FACTOR = 1.5
"""Default of :func:`tune`'s `prune_factor`: simulate the candidates whose model time is within 1.5× of the best."""


def parse_size_range(text: str) -> list[int]:
    """Sizes in bytes from ``"1KiB..1GiB"`` (doubling), ``"1KiB..1GiB:x8"`` (×8 steps) or ``"1KiB,1MiB"``.

    A range gives ``LOW, LOW·N, LOW·N², …`` while below ``HIGH``, then ``HIGH``
    itself: both ends are always included, so ``1KiB..1GiB:x8`` ends with
    ``256 MiB, 1 GiB`` (1 GiB is not 1 KiB times a power of 8) and
    ``1KiB..1GiB:x4`` is exactly the powers of 4 from 1 KiB to 1 GiB. A list is
    sorted and each size kept once.

    Raises
    ------
    UnitError
        For a malformed range, naming the text.
    """
    if ".." not in text:
        return sorted({parse_size(part) for part in text.split(",")})
    bounds, _, step = text.partition(":")
    low_text, _, high_text = bounds.partition("..")
    low, high = parse_size(low_text.strip()), parse_size(high_text.strip())
    factor = 2
    if step:
        step = step.strip()
        if not (step.startswith("x") and step[1:].isdigit() and int(step[1:]) >= 2):
            raise UnitError(f"expected a step such as ':x4' after the range, got {text!r}")
        factor = int(step[1:])
    if not 1 <= low <= high:
        raise UnitError(f"expected a range 'LOW..HIGH' with 1 B ≤ LOW ≤ HIGH, got {text!r}")
    sizes = [low]
    while sizes[-1] * factor < high:
        sizes.append(sizes[-1] * factor)
    if sizes[-1] != high:
        sizes.append(high)
    return sizes


def candidates(
    graph: nx.DiGraph, *, chunk_counts: Sequence[int] = (1, 4), channel_counts: Sequence[int] = (1, 2)
) -> list[tuple[str, dict]]:
    """Algorithm and parameter choices to consider on `graph`: every registered dense
    all-reduce algorithm's tuning variants (:attr:`Algorithm.variants`), in registry order."""
    nranks = sum(1 for _, kind in graph.nodes(data="kind") if kind == "gpu")
    factors = functools.partial(hierarchy_factors, graph)
    try:
        factors(LEVELS)
    except SimnetError:
        factors = None
    choices: list[tuple[str, dict]] = []
    for name in ALGORITHMS.for_op("allreduce"):
        record = ALGORITHMS[name]
        if record.payload == "dense":
            choices += [(name, params) for params in record.variants(nranks, factors, chunk_counts, channel_counts)]
    order = {name: i for i, name in enumerate(ALGORITHMS)}
    return sorted(choices, key=lambda choice: order[choice[0]])


def _label(name: str, params: dict) -> str:
    return f"{name} {json.dumps(params, sort_keys=True)}" if params else name


def tune(
    graph: nx.DiGraph,
    sizes: Iterable[int],
    *,
    network: Mapping[str, Any] | None = None,
    prune_factor: float = PRUNE_FACTOR,
    chunk_counts: Sequence[int] = (1, 4),
    channel_counts: Sequence[int] = (1, 2),
    progress: bool = False,
) -> pd.DataFrame:
    """Price every candidate by its model, simulate those within `prune_factor` of the best time known.

    Parameters
    ----------
    graph : networkx.DiGraph
        The topology.
    sizes : iterable of int
        Payloads per rank, bytes (each tuned once).
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
    progress : bool
        Show a tqdm progress bar of the simulations on standard error.

    Returns
    -------
    pandas.DataFrame
        One row per (size, candidate): ``size_bytes, ranks, algorithm, params, choice,
        predicted_s`` (the closed form, with the reduction cost γ and the
        per-message overhead, as ``simnet run``'s ``model_time_s``), ``simulated_s``
        (``NaN`` when pruned), ``model_rank``, ``sim_rank`` (1 = fastest simulated,
        ``NaN`` when pruned; simulated times within a relative 1e-9 tie, and a tie
        goes to the candidate the model prices lower) and ``pruned``.
        Candidates without a closed form are left out; one whose schedule cannot
        be built for this topology keeps a ``NaN`` simulated time.

    Raises
    ------
    SimnetError
        For a `prune_factor` below 1 (path ``prune_factor``) or a `network` block
        that does not validate (path ``network.<key>``).
    """
    if not prune_factor >= 1:
        raise SimnetError(f"must be ≥ 1, got {prune_factor}", path="prune_factor")
    spec = parse_network(network)
    net = spec.network(graph)
    nranks = net.size
    options = spec.simulate_kwargs(nranks)
    gamma = options["gamma_s_per_byte"]
    costs = NetworkCosts(net, overhead_s=[options["overhead_s"] * slowdown for slowdown in options["slowdown"]])
    choices = candidates(graph, chunk_counts=chunk_counts, channel_counts=channel_counts)
    priced: dict[int, list[tuple[float, str, str, dict]]] = {}
    for size in sorted(set(sizes)):
        entries = []
        for name, params in choices:
            record = ALGORITHMS[name]
            if record.model is None:
                continue
            try:
                predicted = record.predict(costs, nranks, size, gamma_s_per_byte=gamma, **params)
            except (SimnetError, ValueError):
                continue
            entries.append((predicted, _label(name, params), name, params))
        entries.sort(key=lambda entry: (entry[0], entry[1]))
        priced[size] = entries
    simulated: dict[tuple[int, str], float] = {}
    tried: set[tuple[int, str]] = set()
    first = sum(entry[0] <= prune_factor * entries[0][0] for entries in priced.values() for entry in entries)
    with tqdm(total=first, unit="sim", disable=not progress, file=sys.stderr, dynamic_ncols=True,
              desc="simulating") as bar:
        for size, entries in priced.items():
            within = sum(entry[0] <= prune_factor * entries[0][0] for entry in entries)
            best_s = math.inf
            for position, (predicted, label, name, params) in enumerate(entries):
                reference = entries[0][0] if math.isinf(best_s) else max(entries[0][0], best_s)
                if predicted > prune_factor * reference:
                    break
                if position >= within:
                    bar.total += 1
                bar.set_postfix_str(f"{format_size(size)} {label}", refresh=False)
                tried.add((size, label))
                try:
                    schedule = ALGORITHMS[name].build(nranks, size, **params)
                except SimnetError:
                    bar.update(1)
                    continue
                simulated[size, label] = simulate(net, schedule, **options).time_s
                best_s = min(best_s, simulated[size, label])
                bar.update(1)
    rows = []
    for size, entries in priced.items():
        model_rank = {label: rank for rank, (_, label, _, _) in enumerate(entries, 1)}
        times = {label: simulated[size, label] for _, label, _, _ in entries if (size, label) in simulated}
        fastest = min(times.values(), default=1.0)
        ranking = sorted(times, key=lambda k: (round(times[k] / fastest, 9), model_rank[k]))
        order = {label: rank for rank, label in enumerate(ranking, 1)}
        for rank, (predicted, label, name, params) in enumerate(entries, 1):
            rows.append({
                "size_bytes": size,
                "ranks": nranks,
                "algorithm": name,
                "params": json.dumps(params, sort_keys=True),
                "choice": label,
                "predicted_s": predicted,
                "simulated_s": times.get(label, math.nan),
                "model_rank": rank,
                "sim_rank": order.get(label, math.nan),
                "pruned": (size, label) not in tried,
            })
    return pd.DataFrame(rows, columns=["size_bytes", "ranks", "algorithm", "params", "choice", "predicted_s",
                                       "simulated_s", "model_rank", "sim_rank", "pruned"])


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
        at_bytes, predicted_s, simulated_s, runner_up, margin, model_first`` per range
        of consecutive sizes with the same simulated winner. ``predicted_s``,
        ``simulated_s``, ``runner_up`` and ``margin`` are those at the size
        ``at_bytes``, the range's largest (its ``to_bytes``); ``margin`` is how much
        slower the runner-up simulated there; ``model_first`` whether the model
        alone would have chosen the winner at every size of the range;
        ``blueconnect_factors`` the factorization the choice amounts to (see
        :func:`as_blueconnect`).
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
            "sizes": f"{format_size(run[0]['size_bytes'])} .. {format_size(last['size_bytes'])}",
            **{key: last[key] for key in ("choice", "blueconnect_factors", "algorithm", "params")},
            "at_bytes": last["size_bytes"],
            **{key: last[key] for key in ("predicted_s", "simulated_s", "runner_up", "margin")},
            "model_first": all(row["model_first"] for row in run),
        })
    return pd.DataFrame(ranges, columns=["from_bytes", "to_bytes", "sizes", "choice", "blueconnect_factors",
                                         "algorithm", "params", "at_bytes", "predicted_s", "simulated_s",
                                         "runner_up", "margin", "model_first"])


def display_tuner_table(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`tuner_table` for people: times with units, margins in percent, the size they are for."""
    return pd.DataFrame({
        "sizes": table["sizes"],
        "choice": table["choice"],
        "as BlueConnect": table["blueconnect_factors"],
        "at size": table["at_bytes"].map(format_size),
        "predicted": table["predicted_s"].map(format_time),
        "simulated": table["simulated_s"].map(format_time),
        "runner-up": table["runner_up"],
        "margin": table["margin"].map(lambda m: "" if m != m else f"{m:.1%}"),
        "model agrees": table["model_first"].map({True: "yes", False: "no"}),
    })
