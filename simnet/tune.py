"""Auto-tuning: the best all-reduce algorithm and parameters per message size, for one topology.

Like NCCL's tuner, but explained: every candidate is first priced by its
closed-form α-β model (:func:`simnet.models.predict`, cheap); the `top` algorithms
whose best variant is cheapest are kept, every variant of them (chunk and channel
counts, BlueConnect factor orderings) is simulated on the network (contention
included), and the simulated winner is kept. Pruning by algorithm rather than by
variant keeps variants the closed forms price poorly: most of them ignore
pipelining over chunks, which the simulation captures. Consecutive sizes with the same winner merge into
ranges, giving a table such as::

    sizes              choice                              predicted   simulated   runner-up
    1 KiB .. 64 KiB    recursive_doubling                  ...
    128 KiB .. 1 GiB   blueconnect {"factors": [8, 4]}     ...

Candidates are the tuning variants of every registered dense all-reduce
algorithm (its record's ``variants``): ``ring`` with every chunk and channel count
asked for, the flat algorithms with every chunk count, and where the topology has
a hierarchy (GPU attributes ``socket``, ``host``, ``leaf``; see
:mod:`simnet.algorithms.hierarchy`) ``hierarchical_ring`` and ``torus_2d`` with
their default factors and ``blueconnect`` with every distinct ordering of the
hierarchy's factors and of their coarsenings (adjacent levels merged).
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections.abc import Iterable, Sequence

import networkx as nx
import pandas as pd

from simnet.algorithms import ALGORITHMS
from simnet.algorithms.hierarchy import LEVELS, hierarchy_factors
from simnet.engine import simulate
from simnet.errors import SimnetError
from simnet.models import predict
from simnet.network import Network
from simnet.units import UnitError, format_size, format_time, parse_size

__all__ = ["parse_size_range", "candidates", "tune", "tuner_table", "display_tuner_table", "as_blueconnect"]

def parse_size_range(text: str) -> list[int]:
    """Sizes from ``"1KiB..1GiB"`` (doubling), ``"1KiB..1GiB:x4"`` (×4 steps) or ``"1KiB,1MiB"``.

    Raises
    ------
    UnitError
        For a malformed range, naming the text.
    """
    if ".." not in text:
        return [parse_size(part) for part in text.split(",")]
    bounds, _, step = text.partition(":")
    low_text, _, high_text = bounds.partition("..")
    low, high = parse_size(low_text.strip()), parse_size(high_text.strip())
    factor = 2
    if step:
        if not (step.startswith("x") and step[1:].isdigit() and int(step[1:]) >= 2):
            raise UnitError(f"expected a step such as ':x4' after the range, got {text!r}")
        factor = int(step[1:])
    if not 1 <= low <= high:
        raise UnitError(f"expected a range 'LOW..HIGH' with 1 B ≤ LOW ≤ HIGH, got {text!r}")
    sizes = [low]
    while sizes[-1] * factor <= high:
        sizes.append(sizes[-1] * factor)
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
    model: str = "maxmin",
    top: int = 3,
    chunk_counts: Sequence[int] = (1, 4),
    channel_counts: Sequence[int] = (1, 2),
) -> pd.DataFrame:
    """Price every candidate by its model, simulate the `top` cheapest per size.

    Parameters
    ----------
    graph : networkx.DiGraph
        The topology.
    sizes : iterable of int
        Payloads per rank, bytes.
    model : str
        Link-sharing model of the simulations.
    top : int
        Algorithms (with all their variants) simulated per size.
    chunk_counts, channel_counts : sequence of int
        Pipelining and channel counts to try.

    Returns
    -------
    pandas.DataFrame
        One row per (size, candidate): ``size_bytes, ranks, algorithm, params, choice,
        predicted_s, simulated_s`` (``NaN`` when pruned by the model),
        ``model_rank``, ``sim_rank`` (1 = fastest simulated, ``NaN`` when pruned;
        simulated times within a relative 1e-9 tie, and a tie goes to the candidate
        the model prices lower).
        Candidates whose schedule cannot be built for this topology are left out.
    """
    if top < 1:
        raise SimnetError(f"must be ≥ 1, got {top}", path="top")
    network = Network(graph)
    nranks = network.size
    rows = []
    for size in sizes:
        priced = []
        for name, params in candidates(graph, chunk_counts=chunk_counts, channel_counts=channel_counts):
            try:
                predicted = predict(name, network, nranks, size, **params)
            except (SimnetError, ValueError):
                continue
            priced.append((predicted, _label(name, params), name, params))
        priced.sort(key=lambda entry: (entry[0], entry[1]))
        families = list(dict.fromkeys(name for _, _, name, _ in priced))[:top]
        simulated: dict[str, float] = {}
        for predicted, label, name, params in priced:
            if name not in families:
                continue
            try:
                schedule = ALGORITHMS[name].build(nranks, size, **params)
            except SimnetError:
                continue
            simulated[label] = simulate(network, schedule, model=model).time_s
        model_rank = {label: rank for rank, (_, label, _, _) in enumerate(priced, 1)}
        fastest = min(simulated.values(), default=1.0)
        ranking = sorted(simulated, key=lambda k: (round(simulated[k] / fastest, 9), model_rank[k]))
        order = {label: rank for rank, label in enumerate(ranking, 1)}
        for model_rank, (predicted, label, name, params) in enumerate(priced, 1):
            rows.append({
                "size_bytes": size,
                "ranks": nranks,
                "algorithm": name,
                "params": json.dumps(params, sort_keys=True),
                "choice": label,
                "predicted_s": predicted,
                "simulated_s": simulated.get(label, math.nan),
                "model_rank": model_rank,
                "sim_rank": order.get(label, math.nan),
            })
    return pd.DataFrame(rows)


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
        predicted_s, simulated_s, runner_up, margin, model_first`` per range of consecutive sizes
        with the same simulated winner; times and the runner-up are those of the
        range's largest size; ``margin`` is how much slower the runner-up
        simulated; ``model_first`` whether the model alone would have chosen it;
        ``blueconnect_factors`` the factorization the choice amounts to (see
        :func:`as_blueconnect`).
    """
    per_size = []
    for size, group in tuned.groupby("size_bytes", sort=True):
        ranked = group.dropna(subset=["sim_rank"]).sort_values("sim_rank")
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
            **{key: last[key] for key in ("choice", "blueconnect_factors", "algorithm", "params", "predicted_s",
                                          "simulated_s", "runner_up", "margin")},
            "model_first": all(row["model_first"] for row in run),
        })
    return pd.DataFrame(ranges)


def display_tuner_table(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`tuner_table` for people: times with units, margins in percent."""
    return pd.DataFrame({
        "sizes": table["sizes"],
        "choice": table["choice"],
        "as BlueConnect": table["blueconnect_factors"],
        "predicted": table["predicted_s"].map(format_time),
        "simulated": table["simulated_s"].map(format_time),
        "runner-up": table["runner_up"],
        "margin": table["margin"].map(lambda m: "" if m != m else f"{m:.1%}"),
        "model agrees": table["model_first"].map({True: "yes", False: "no"}),
    })
