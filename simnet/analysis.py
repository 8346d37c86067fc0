"""Results as tidy pandas frames: one row per (scenario, algorithm, size).

Bandwidths follow the nccl-tests definitions (``doc/PERFORMANCE.md`` of
NVIDIA/nccl-tests): ``algbw = size / time`` and ``busbw = algbw * factor`` with the
factor that makes busbw comparable to the hardware's peak bandwidth, for
all-reduce ``2 (p - 1) / p``, for all-to-all ``(p - 1) / p`` (``size`` is each rank's
whole send buffer, of which the ``1/p`` addressed to itself never moves; for
``alltoallv`` the mean send buffer). A sparse algorithm moves far fewer bytes than the
dense payload it reduces, so the same formula gives it a *dense-equivalent* figure
(the busbw a dense algorithm would need to finish as fast), which can exceed any
link's bandwidth: its rows carry it as ``effective_busbw_GBps`` and leave
``busbw_GBps`` empty, beside the bytes each rank really sent.
"""

from __future__ import annotations

import json
import math
import numbers
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simnet import units
from simnet.algorithms import ALGORITHMS
from simnet.algorithms.nccl import NCCL_CHOICES, NCCL_NAMES, built_release
from simnet.engine import Trace
from simnet.errors import SimnetError
from simnet.schedule import Schedule
from simnet.units import format_size, format_time

__all__ = [
    "HASH_SEED",
    "hash_seed_spread",
    "HASHED_ROUTING",
    "routing_cells",
    "routing_label",
    "routing_text",
    "RESULT_COLUMNS",
    "JOB_COLUMNS",
    "FAILURE_COLUMNS",
    "busbw_factor",
    "sent_bytes_per_rank",
    "result_row",
    "records",
    "TEXT_COLUMNS",
    "COUNT_COLUMNS",
    "json_text",
    "typed_column",
    "result_frame",
    "read_results",
    "display_table",
    "point_keys",
    "factors",
    "NOT_SET",
    "swept_keys",
    "keys_together",
    "numeric_values",
    "format_fraction",
    "default_baseline",
    "baseline_label",
    "baseline_runs",
    "parse_choice",
    "choice_text",
    "choice_matches",
    "speedups",
    "winners",
    "residuals",
    "tier_summary",
    "link_summary",
    "markdown_summary",
    "display_jobs",
    "JOBS_NOTE",
    "jobs_markdown",
    "nccl_key",
    "nccl_comparison",
    "nccl_release",
    "nccl_without_model",
    "nccl_comparison_note",
    "NCCL_LATENCY_NOTE",
    "nccl_switched_off",
    "display_nccl_comparison",
    "NCCL_COMPARISON_NOTE",
    "LOSSY_LABEL",
    "lossy_rows",
]

RESULT_COLUMNS = (
    "scenario",
    "point",
    "topology",
    "op",
    "algorithm",
    "params",
    "resolved",
    "network_model",
    "routing",
    "hash_seed",
    "ranks",
    "size_bytes",
    "sim_time_s",
    "model_time_s",
    "critical_path_s",
    "sim_over_model",
    "sim_over_critical_path",
    "algbw_GBps",
    "busbw_GBps",
    "nccl_choice",
    "nccl_model_s",
    "nccl_latency_s",
    "payload_kind",
    "effective_busbw_GBps",
    "sent_bytes_per_rank_max",
    "sent_bytes_per_rank_mean",
)
"""Columns of a result row (see :func:`result_row`)."""

JOB_COLUMNS = (
    "scenario",
    "point",
    "topology",
    "network_model",
    "routing",
    "hash_seed",
    "job",
    "op",
    "algorithm",
    "params",
    "gpus",
    "communicators",
    "ranks",
    "size_bytes",
    "start_s",
    "repeat",
    "end_s",
    "time_s",
    "alone_s",
    "slowdown",
    "algbw_GBps",
    "busbw_GBps",
    "shared_s",
    "slowed_by",
    "shared_link",
)
"""Columns of a job's result row (see :func:`simnet.jobs.run_jobs`): the routing rule and hash seed as in
:func:`result_row`, ``gpus`` of the job, ``communicators`` of ``ranks`` each, ``repeat`` collectives each (rounds
for background flows), ``time_s`` and ``alone_s``, bandwidths per collective, time held back on shared links
and by whom."""

FAILURE_COLUMNS = ("index", "point", "algorithm", "entry", "sizes", "path", "message")
"""Columns of what a sweep could not run (:class:`simnet.errors.SweepFailed`, ``results.md``), one row per
algorithm and error of a point: the sweep point's ``index`` and label (``point``), the ``algorithm`` and its
``entry``'s key path (``collective.algorithms[1]``; both empty when the whole point failed), the ``sizes`` it
failed at (``"all"``, or ``"1 KiB, 4 KiB"``), and the error's key path (``path``) and ``message``."""

_BUSBW_FACTORS = {
    "allreduce": lambda p: 2 * (p - 1) / p,
    "reduce_scatter": lambda p: (p - 1) / p,
    "all_gather": lambda p: (p - 1) / p,
    "broadcast": lambda p: 1.0,
    "reduce": lambda p: 1.0,
    "alltoall": lambda p: (p - 1) / p,
    "alltoallv": lambda p: (p - 1) / p,
}


def busbw_factor(op: str, nranks: int) -> float:
    """nccl-tests' bus-bandwidth factor of collective `op` on `nranks` ranks.

    >>> busbw_factor("allreduce", 8)
    1.75
    """
    return _BUSBW_FACTORS[op](nranks)


def sent_bytes_per_rank(schedule: Schedule) -> np.ndarray:
    """Bytes each rank sends over the network in `schedule` (copies inside a rank excluded; what switch endpoints
    of an in-network reduction send, such as an NVSwitch's multicast, is no rank's).

    >>> from simnet.algorithms import ALGORITHMS
    >>> sent_bytes_per_rank(ALGORITHMS["ring"].builder(4, 4096)).tolist()
    [6144.0, 6144.0, 6144.0, 6144.0]
    """
    table = schedule.transfers
    sent = (table.src != table.dst) & (table.src < schedule.nranks)
    return np.bincount(table.src[sent], weights=table.nbytes[sent], minlength=schedule.nranks)


def result_row(
    *,
    scenario: str,
    point: str,
    topology: str,
    op: str,
    algorithm: str,
    params: str,
    network_model: str,
    ranks: int,
    size_bytes: int,
    sim_time_s: float,
    model_time_s: float,
    critical_path_s: float,
    resolved: str = "",
    nccl_choice: str = "",
    nccl_model_s: float = math.nan,
    nccl_latency_s: float = math.nan,
    payload_kind: str = "dense",
    sent_bytes_per_rank: Sequence[float] = (),
    routing: str = "",
    hash_seed: int = 0,
) -> dict:
    """One result row with derived columns (ratios to the two models, algbw, busbw in GB/s).

    ``model_time_s`` is the algorithm's closed form; ``critical_path_s`` the
    contention-free longest path through the schedule's transfers
    (:func:`simnet.models.critical_path_time`). Their ratios to the simulated time
    show how much of it the formula explains, and how much contention adds.
    ``params`` are the algorithm's parameters as the scenario gave them (JSON);
    ``resolved`` (JSON, ``""`` when none) the values an algorithm chose for this
    network and size itself, the way NCCL picks its protocol and channel count
    (:attr:`simnet.algorithms.Algorithm.resolve`), so one configuration keeps one
    ``params`` across sizes.
    ``nccl_choice`` (``"algorithm/protocol"``) and ``nccl_model_s`` are what NCCL's
    own cost model picks for this collective and size on the topology and the time
    it predicts for it, ``nccl_latency_s`` the latency part of that time
    (:func:`simnet.models.nccl.algo_latency_s`: what NCCL's model charges before any
    byte moves) (empty and ``nan`` where simnet has no NCCL model of the
    topology), the same on every row of one size.
    ``routing`` is the routing rule in force (:attr:`simnet.network.Network.routing`)
    and ``hash_seed`` the seed of its hash under ``ecmp_hash`` (one draw of the hash's
    luck), ``""`` under the rules that do not hash.

    `payload_kind` is ``"sparse"`` for an algorithm that moves a sparse payload:
    its bus bandwidth is then the dense-equivalent figure ``effective_busbw_GBps``
    (``size_bytes`` is the dense size) and ``busbw_GBps`` is ``None``; a dense row
    has ``busbw_GBps`` and ``effective_busbw_GBps = None``.
    `sent_bytes_per_rank` (bytes each rank sent, see :func:`sent_bytes_per_rank`)
    gives ``sent_bytes_per_rank_max`` and ``_mean`` (``None`` when not given).
    ``None`` is an empty cell in CSV, ``null`` in JSON and ``NaN`` in a frame.
    """
    algbw_GBps = size_bytes / sim_time_s / 1e9
    busbw_GBps = algbw_GBps * busbw_factor(op, ranks)
    sparse = payload_kind == "sparse"
    sent = np.asarray(sent_bytes_per_rank, dtype=float)
    return {
        "scenario": scenario,
        "point": point,
        "topology": topology,
        "op": op,
        "algorithm": algorithm,
        "params": params,
        "resolved": resolved,
        "network_model": network_model,
        **routing_cells(routing, hash_seed),
        "ranks": ranks,
        "size_bytes": size_bytes,
        "sim_time_s": sim_time_s,
        "model_time_s": model_time_s,
        "critical_path_s": critical_path_s,
        "sim_over_model": sim_time_s / model_time_s,
        "sim_over_critical_path": sim_time_s / critical_path_s,
        "algbw_GBps": algbw_GBps,
        "busbw_GBps": None if sparse else busbw_GBps,
        "nccl_choice": nccl_choice,
        "nccl_model_s": nccl_model_s,
        "nccl_latency_s": nccl_latency_s,
        "payload_kind": payload_kind,
        "effective_busbw_GBps": busbw_GBps if sparse else None,
        "sent_bytes_per_rank_max": float(sent.max()) if sent.size else None,
        "sent_bytes_per_rank_mean": float(sent.mean()) if sent.size else None,
    }


HASHED_ROUTING = "ecmp_hash"
"""The routing rule whose routes depend on a hash seed."""


def routing_cells(routing: str, hash_seed: int) -> dict[str, Any]:
    """A result row's ``routing`` and ``hash_seed`` cells: the seed only under the rule that hashes, else ``""``.

    >>> routing_cells("ecmp_hash", 3), routing_cells("dmodk", 0)
    ({'routing': 'ecmp_hash', 'hash_seed': 3}, {'routing': 'dmodk', 'hash_seed': ''})
    """
    return {"routing": routing, "hash_seed": hash_seed if routing == HASHED_ROUTING else ""}


def routing_label(routing: str, hash_seeds: Sequence[int] = ()) -> str:
    """`routing` as a report's header names it: with its hash seeds under ``ecmp_hash``, a single seed called
    one draw of the hash.

    >>> routing_label("dmodk")
    'dmodk'
    >>> routing_label("ecmp_hash", [0])
    'ecmp_hash, hash_seed 0 (one draw of the ECMP hash; sweep network.hash_seed for the spread)'
    >>> routing_label("ecmp_hash", [0, 1, 2, 3])
    'ecmp_hash, hash_seed 0-3 (4 draws of the ECMP hash)'
    """
    seeds = sorted(set(hash_seeds))
    if routing != HASHED_ROUTING or not seeds:
        return routing
    if len(seeds) == 1:
        return f"{routing}, hash_seed {seeds[0]} (one draw of the ECMP hash; sweep network.hash_seed for the spread)"
    listed = (f"{seeds[0]}-{seeds[-1]}" if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1))
              else ", ".join(map(str, seeds)))
    return f"{routing}, hash_seed {listed} ({len(seeds)} draws of the ECMP hash)"


def routing_text(results: pd.DataFrame) -> str:
    """The routing rules of `results`' rows (:data:`RESULT_COLUMNS` or :data:`JOB_COLUMNS`), each as
    :func:`routing_label` names it, ``; ``-separated; ``""`` for rows without a ``routing`` column (results
    written before simnet recorded it).

    >>> routing_text(pd.DataFrame({"routing": ["dmodk", "ecmp_hash", "ecmp_hash"], "hash_seed": ["", 1, 2]}))
    'dmodk; ecmp_hash, hash_seed 1, 2 (2 draws of the ECMP hash)'
    """
    if "routing" not in results:
        return ""
    labels = []
    for rule in dict.fromkeys(r for r in results["routing"] if isinstance(r, str) and r):
        seeds = results.loc[results["routing"] == rule, "hash_seed"] if "hash_seed" in results else []
        labels.append(routing_label(rule, [seed for seed in map(_seed, seeds) if seed != ""]))
    return "; ".join(labels)


def _seed(cell: Any) -> int | str:
    """A ``hash_seed`` cell as an exact integer (an integer, or text as results.csv gives it back: ``"7"``,
    ``"7.0"``), ``""`` for none; seeds go up to ``2**64 - 1``, beyond a float's 53 bits."""
    if cell is None or cell is pd.NA or (isinstance(cell, float) and math.isnan(cell)) or cell == "":
        return ""
    if isinstance(cell, numbers.Integral):
        return int(cell)
    text = str(cell).strip()
    return int(text) if text.isdigit() else int(float(text))


def records(frame: pd.DataFrame) -> list[dict]:
    """Rows of `frame` as dicts for JSON, missing values (``NaN``) as ``None``, and ``params`` and ``resolved``
    (JSON text in tables and CSV) as the objects they spell (``None`` where empty), not as strings of JSON.

    >>> records(pd.DataFrame({"busbw_GBps": [3.5, float("nan")], "params": ['{"chunks": 4}', "{}"]}))
    [{'busbw_GBps': 3.5, 'params': {'chunks': 4}}, {'busbw_GBps': None, 'params': {}}]
    """
    rows = frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
    for row in rows:
        for key in ("params", "resolved"):
            text = row.get(key)
            if isinstance(text, str):
                try:
                    row[key] = json.loads(text) if text else None
                except json.JSONDecodeError:
                    pass
    return rows


TEXT_COLUMNS = ("scenario", "point", "topology", "op", "algorithm", "params", "resolved", "network_model",
                "routing", "nccl_choice", "payload_kind", "job", "slowed_by", "shared_link")
"""Columns of result rows (:data:`RESULT_COLUMNS`, :data:`JOB_COLUMNS`) that hold text, ``""`` where empty;
``params`` and ``resolved`` hold JSON text (:func:`json_text`)."""

COUNT_COLUMNS = ("ranks", "size_bytes", "gpus", "communicators", "repeat")
"""Columns of result rows that hold integers. ``hash_seed`` holds an integer under ``ecmp_hash`` and ``""``
under the other rules (typed as :func:`typed_column` types its cells); every other column holds floats
(``NaN`` where empty)."""


def json_text(value: Any) -> str:
    """A ``params`` or ``resolved`` cell as result frames and CSV hold it: JSON text with sorted keys, ``""`` for
    none. The object results.json holds (:func:`records`) becomes that text again; text stays as it is.

    >>> json_text({"chunks": 4}), json_text(None), json_text('{"chunks": 4}')
    ('{"chunks": 4}', '', '{"chunks": 4}')
    """
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


_INT64 = np.iinfo(np.int64)


def typed_column(cells: Sequence[Any], index: pd.Index | None = None) -> pd.Series:
    """A column of swept values (:func:`simnet.scenario.swept_columns`) with the type its cells share: integers
    as ``int64``, numbers as ``float64``, text as ``str``; with a cell missing (``None``, a key some points do not
    set), kinds mixed or an integer beyond ``int64`` (a hash seed up to ``2**64 - 1``), the values themselves
    (``object``).

    >>> typed_column([4, 8]).dtype, typed_column([4, None]).tolist()
    (dtype('int64'), [4, None])
    """
    values = list(cells)

    def every(kind: type) -> bool:
        return bool(values) and all(isinstance(v, kind) and not isinstance(v, bool) for v in values)

    if every(numbers.Integral):
        fits = all(_INT64.min <= v <= _INT64.max for v in values)
        return pd.Series(values, index=index, dtype="int64" if fits else object)
    if every(numbers.Real):
        return pd.Series(values, index=index, dtype="float64")
    if every(str):
        return pd.Series(values, index=index, dtype=str)
    return pd.Series(values, index=index, dtype=object)


def result_frame(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> pd.DataFrame:
    """Result rows (:func:`result_row`, or a job's) as a frame with one type per column: text as ``str``
    (:data:`TEXT_COLUMNS`), counts as ``int64`` (:data:`COUNT_COLUMNS`), every other column as ``float64``
    (``None`` as ``NaN``), whatever the rows hold."""
    frame = pd.DataFrame(list(rows), columns=list(columns))
    return _typed(frame, list(columns))


def _typed(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    for column in columns:
        if column in ("params", "resolved"):
            frame[column] = pd.Series([json_text(v) for v in frame[column]], index=frame.index, dtype=str)
        elif column in TEXT_COLUMNS:
            frame[column] = pd.Series(["" if v is None or v != v else str(v) for v in frame[column]],
                                      index=frame.index, dtype=str)
        elif column in COUNT_COLUMNS:
            frame[column] = frame[column].astype("int64")
        elif column == "hash_seed":
            frame[column] = typed_column([_seed(v) for v in frame[column]], frame.index)
        else:
            frame[column] = pd.to_numeric(frame[column].astype(object).where(frame[column].notna(), math.nan),
                                          errors="raise").astype("float64")
    return frame


_NUMBER = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?")


def _written_value(text: str) -> Any:
    """A swept value as results.csv wrote it, read back: an integer or a number where the text is one, ``None``
    where it is empty, else the text."""
    if text == "":
        return None
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    if _NUMBER.fullmatch(text):
        return float(text)
    return text


def read_results(path: str | Path) -> pd.DataFrame:
    """The rows of a ``results.csv`` or ``results.json`` (``simnet run --out``, :func:`simnet.sweep.run_sweep`)
    as :func:`simnet.run` returned them: ``params`` and ``resolved`` as JSON text (results.json holds them as
    objects), ``""`` for empty text, ``NaN`` for missing numbers, and each swept key's column typed as
    :func:`typed_column` types it, ``None`` where a point does not set the key.

    From results.json the swept values come back exactly; results.csv cannot tell a number from text that
    reads as one (a value written as the string ``"8"`` comes back as 8).

    Raises
    ------
    SimnetError
        For a file that is neither, or that cannot be read as one (naming the file).
    """
    path = Path(path)
    try:
        if path.suffix == ".json":
            rows = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
                raise SimnetError("expected a list of result rows (objects)", source=str(path))
            frame = pd.DataFrame(rows)
            written = False
        elif path.suffix == ".csv":
            header = list(pd.read_csv(path, nrows=0).columns)
            known = JOB_COLUMNS if "job" in header else RESULT_COLUMNS
            text = [c for c in header if c in TEXT_COLUMNS or c == "hash_seed" or c not in known]
            frame = pd.read_csv(path, dtype={c: str for c in text}, keep_default_na=False,
                                na_values={c: [""] for c in header if c not in text})
            written = True
        else:
            raise SimnetError(f"expected a results.csv or results.json file, got {path.name!r}", source=str(path))
    except (OSError, ValueError) as error:
        if isinstance(error, SimnetError):
            raise
        raise SimnetError(f"cannot read results: {error}", source=str(path)) from None
    known = JOB_COLUMNS if "job" in frame.columns else RESULT_COLUMNS
    missing = [c for c in ("scenario", "point") if c not in frame.columns]
    if missing:
        raise SimnetError(f"not a table of results: no column {missing[0]!r}", source=str(path))
    frame = _typed(frame, [c for c in frame.columns if c in known])
    for column in [c for c in frame.columns if c not in known]:
        cells = [_written_value(v) if written else (None if v is None or v != v else v) for v in frame[column]]
        frame[column] = typed_column(cells, frame.index)
    return frame


def _compact(params: str) -> str:
    """``{"chunks": 4, "payload": {...}}`` as ``chunks=4 N=1000000 d=1/16``, for tables; a long list is cut.

    >>> _compact('{"channels": 16, "exits": [[1], [0], [3], [2], [5], [4], [7], [6]]}')
    'channels=16 exits=[[1],[0],[3],…(8)'
    """
    try:
        values = json.loads(params) if params else {}
    except json.JSONDecodeError:
        return params
    shown = []
    for key, value in values.items():
        if key == "payload" and isinstance(value, dict):
            density = value.get("density")
            fraction = format_fraction(density) if isinstance(density, (int, float)) and density > 0 else density
            shown.append(f"N={value.get('dimension')} d={fraction}")
        elif isinstance(value, list) and len(text := json.dumps(value, separators=(",", ":"))) > _LONGEST_VALUE:
            shown.append(f"{key}={text[:_LONGEST_VALUE - 8].rsplit(',', 1)[0]},…({len(value)})")
        else:
            shown.append(f"{key}={json.dumps(value)}")
    return " ".join(shown)


_LONGEST_VALUE = 24
"""Characters of a list parameter a table shows before it cuts it (``exits=[[1],[0],[3],…(8)``); files keep all."""


def _sparse_rows(results: pd.DataFrame) -> pd.Series:
    if "payload_kind" not in results:
        return pd.Series(False, index=results.index)
    return results["payload_kind"] == "sparse"


LOSSY_LABEL = " (lossy)"
"""What tables, legends and reports append to a lossy algorithm (:attr:`Algorithm.lossy`, ``gtopk``)."""


def lossy_rows(results: pd.DataFrame) -> pd.Series:
    """Whether each row ran a lossy algorithm (:attr:`simnet.algorithms.Algorithm.lossy`): not an exact collective,
    so never the fastest choice beside exact ones (:func:`winners`, :func:`nccl_comparison`)."""
    lossy = {name for name, record in ALGORITHMS.items() if record.lossy}
    return results["algorithm"].isin(lossy)


def _exact_first(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of exact algorithms where any ran, else all of them (lossy ones alone: they are the case)."""
    lossy = lossy_rows(rows)
    return rows[~lossy] if (~lossy).any() else rows


def _marked(labels: Sequence[str], rows: pd.DataFrame) -> list[str]:
    """`labels` of `rows` with :data:`LOSSY_LABEL` after those of lossy algorithms."""
    return [label + (LOSSY_LABEL if lossy else "") for label, lossy in zip(labels, lossy_rows(rows))]


def _bandwidth(values: pd.Series) -> pd.Series:
    return values.map(lambda v: "" if pd.isna(v) else f"{v:.2f}")


def display_table(results: pd.DataFrame) -> pd.DataFrame:
    """A copy of `results` for people: sizes and times with units, ratios rounded (``—``: no closed form).

    Where an algorithm chose values per size (``resolved``, such as NCCL's protocol
    and channels) they show as ``chosen per size``. With sparse rows it adds
    ``dense-eq. busbw GB/s`` (their dense-equivalent bus
    bandwidth, empty for dense rows, whose ``busbw GB/s`` is real) and the bytes
    each rank sent (``sent/rank max``, ``sent/rank mean``).
    """
    shown = pd.DataFrame(
        {
            "point": results["point"],
            "algorithm": _marked(results["algorithm"], results),
            "params": results["params"].map(_compact),
            "ranks": results["ranks"],
            "size": results["size_bytes"].map(format_size),
            "sim time": results["sim_time_s"].map(format_time),
            "model time": results["model_time_s"].map(lambda t: format_time(t) if t == t else "—"),
            "sim/model": results["sim_over_model"].map(lambda r: f"{r:.4f}" if r == r else "—"),
            "sim/crit.path": results["sim_over_critical_path"].map("{:.4f}".format),
            "algbw GB/s": results["algbw_GBps"].map("{:.2f}".format),
            "busbw GB/s": _bandwidth(results["busbw_GBps"]),
        }
    )
    if "resolved" in results and results["resolved"].fillna("").astype(bool).any():
        shown.insert(3, "chosen per size", results["resolved"].fillna("").map(_compact))
    if _sparse_rows(results).any():
        shown["dense-eq. busbw GB/s"] = _bandwidth(results["effective_busbw_GBps"])
        for column, name in (("sent_bytes_per_rank_max", "sent/rank max"),
                             ("sent_bytes_per_rank_mean", "sent/rank mean")):
            shown[name] = results[column].map(lambda v: "" if pd.isna(v) else format_size(round(v)))
    if not results["point"].astype(bool).any():
        shown = shown.drop(columns="point")
    return shown


_LABEL_SPLIT = re.compile(r",(?=[A-Za-z_][\w.\[\]]*=)")


def point_keys(label: str) -> dict[str, Any]:
    """The keys and values a sweep point overrides, read back from its label.

    Values written as JSON (numbers, lists) come back as such; lists and
    mappings as their JSON text; anything else as the string written.

    >>> point_keys('topology.hosts=8,collective.factors=[4, 2],topology.node=dgx1')
    {'topology.hosts': 8, 'collective.factors': '[4, 2]', 'topology.node': 'dgx1'}
    >>> point_keys("")
    {}
    """
    keys: dict[str, Any] = {}
    for part in _LABEL_SPLIT.split(label) if label else ():
        key, _, text = part.partition("=")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = text
        keys[key] = json.dumps(value, sort_keys=True) if isinstance(value, (list, dict)) else value
    return keys


def _params(text: str) -> dict[str, Any]:
    try:
        values = json.loads(text) if text else {}
    except json.JSONDecodeError:
        return {}
    return values if isinstance(values, dict) else {}


def _choices(results: pd.DataFrame, params: list[dict], density: pd.Series) -> list[str]:
    """Algorithm names with the parameters that tell two runs of one case apart, and those a scenario gave its
    every run of the algorithm (``ring channels=2``, also when it is the only ring).

    A parameter is part of the choice when two rows of the same algorithm at the same point, size and density
    differ in it (``binomial_tree chunks=8``), or when it has one value in every row of the algorithm and is
    not one the algorithm reads off the topology's hierarchy (:attr:`Algorithm.derived`, BlueConnect's
    ``factors``): the scenario gave it. One that only changes from point to point (a swept ``chunks``,
    factors derived from each point's topology) belongs to the point, not the choice.
    """
    frame = pd.DataFrame({"algorithm": results["algorithm"].to_numpy(), "point": results["point"].to_numpy(),
                          "size": results["size_bytes"].to_numpy(), "density": density.fillna(-1.0).to_numpy()})
    shown_keys: dict[str, list[str]] = {}
    for algorithm, rows in frame.groupby("algorithm", sort=False):
        keys = list(dict.fromkeys(k for i in rows.index for k in params[i] if k != "payload"))
        derived = ALGORITHMS[algorithm].derived if algorithm in ALGORITHMS else ()
        distinguishing = []
        for key in keys:
            values = rows.assign(value=[json.dumps(params[i].get(key), sort_keys=True) for i in rows.index])
            given = key not in derived and values["value"].nunique() == 1
            if given or (values.groupby(["point", "size", "density"])["value"].nunique() > 1).any():
                distinguishing.append(key)
        shown_keys[algorithm] = distinguishing
    labels = []
    for i, algorithm in enumerate(frame["algorithm"]):
        shown = [f"{key}={json.dumps(params[i][key])}" for key in shown_keys[algorithm] if key in params[i]]
        labels.append(" ".join([algorithm, *shown]))
    return _marked(labels, results)


NOT_SET = "(scenario's)"
"""The value :func:`factors` gives a swept key at a point that does not set it (a sweep of ``points`` may set
different keys at each): the scenario's own value, which the results do not record."""


def factors(results: pd.DataFrame) -> pd.DataFrame:
    """What each result row is a case of: its choice of algorithm and the values of every variable.

    Returns
    -------
    pandas.DataFrame
        Same index as `results`, columns ``choice`` (the algorithm and any
        parameters that tell two runs of one case apart, e.g. ``ring chunks=4``),
        ``size`` (payload per rank, bytes), ``payload.density`` (sparse scenarios
        only) and one column per key a sweep point overrides (``topology.hosts``,
        ...; values as written, see :func:`point_keys`; :data:`NOT_SET` for a point
        that leaves the key as the scenario has it). A sweep of ``sizes`` or of
        the payload's ``dimension`` is the ``size`` column.
    """
    results = results.reset_index(drop=True)
    params = [_params(text) for text in results["params"]]
    densities = [p["payload"].get("density") if isinstance(p.get("payload"), dict) else None for p in params]
    density = pd.Series([math.nan if d is None else float(d) for d in densities], dtype=float)
    frame = pd.DataFrame({"choice": _choices(results, params, density), "size": results["size_bytes"].astype(float)})
    if density.notna().any():
        frame["payload.density"] = density
    swept = [point_keys(label) for label in results["point"].astype(str)]
    for key in dict.fromkeys(k for keys in swept for k in keys):
        if key in ("sizes", "payload.dimension") or key in frame:
            continue
        frame[key] = pd.Series([keys.get(key, NOT_SET) for keys in swept], index=frame.index, dtype=object)
    return frame


def swept_keys(frame: pd.DataFrame) -> list[str]:
    """Columns of a :func:`factors` frame other than ``choice`` that take more than one value."""
    return [key for key in frame.columns if key != "choice" and frame[key].map(str).nunique() > 1]


def keys_together(frame: pd.DataFrame) -> list[list[str]]:
    """Swept keys of a :func:`factors` frame that always change together, in groups of two or more.

    Two keys change together when each one's value fixes the other's in every row (a sweep of
    ``points`` that sets a switch's and a NIC's bandwidth alike): plotted apart, each would be
    an axis along which the other stays put. ``size`` and ``payload.density`` are axes of their
    own and never grouped. Keys keep their column order, in groups and within a group.

    >>> frame = pd.DataFrame({"choice": ["ring"] * 3, "size": [1.0] * 3, "a": [1, 2, 4], "b": ["x", "y", "z"],
    ...                       "c": [1, 1, 2]})
    >>> keys_together(frame)
    [['a', 'b']]
    """
    keys = [key for key in swept_keys(frame) if key not in ("size", "payload.density")]
    codes = {key: pd.factorize(frame[key].map(str))[0] for key in keys}
    groups: list[list[str]] = []
    grouped: set[str] = set()
    for index, key in enumerate(keys):
        if key in grouped:
            continue
        distinct = len(set(codes[key]))
        group = [key] + [other for other in keys[index + 1:] if other not in grouped
                         and len(set(codes[other])) == distinct == len(set(zip(codes[key], codes[other])))]
        if len(group) > 1:
            groups.append(group)
            grouped.update(group)
    return groups


_PARSERS = (("size", units.parse_size), ("time", units.parse_time), ("bandwidth", units.parse_bandwidth))


def numeric_values(key: str, values: Sequence[Any]) -> tuple[np.ndarray, str] | None:
    """Values of one :func:`factors` column as SI floats, with their kind; ``None`` if not numeric.

    Numbers stay numbers (kind ``"size"`` for the ``size`` column, ``"fraction"``
    for ``payload.density``, else ``"number"``); strings with units (``"100 Gbps"``)
    are parsed when all of them parse as one kind (``"size"``, ``"time"`` or
    ``"bandwidth"``).

    >>> numeric_values("topology.bandwidth", ["100 Gbps", "200 Gbps"])
    (array([1.25e+10, 2.50e+10]), 'bandwidth')
    >>> numeric_values("topology.node", ["dgx1", "dgx2"]) is None
    True
    """
    values = list(values)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values):
        kind = {"size": "size", "payload.density": "fraction"}.get(key, "number")
        return np.asarray(values, dtype=float), kind
    if all(isinstance(v, str) for v in values):
        for kind, parse in _PARSERS:
            try:
                return np.asarray([float(parse(v)) for v in values]), kind
            except SimnetError:
                continue
    return None


def format_fraction(value: float) -> str:
    """A density as people write it: ``1/16`` when it is one over an integer, else its value.

    >>> format_fraction(0.0625), format_fraction(0.3)
    ('1/16', '0.3')
    """
    inverse = 1 / value
    if abs(inverse - round(inverse)) < 1e-9 * inverse:
        return f"1/{round(inverse)}"
    return f"{value:.4g}"


_RUN_KEY = ["point", "size_bytes", "payload"]


def choice_text(algorithm: str, params: Mapping) -> str:
    """A choice as tables name it and :func:`parse_choice` reads it: ``ring``, ``ring {"channels": 8}``."""
    return f"{algorithm} {json.dumps(params, sort_keys=True)}" if params else algorithm


def _choice(frame: pd.DataFrame) -> pd.Series:
    """Algorithm and parameters (a sparse payload is the case, not the choice)."""
    return pd.Series([choice_text(algorithm, {k: v for k, v in _params(params).items() if k != "payload"})
                      for algorithm, params in zip(frame["algorithm"], frame["params"])], index=frame.index,
                     dtype=object)


def _column_choice(frame: pd.DataFrame) -> pd.Series:
    """Choices as :func:`_choice` names them, without the parameters that change only from point to point
    (``factors`` derived from each point's topology, a swept ``chunks``): those belong to the point, so one
    listed algorithm is one column of a table across a sweep. A parameter in which two runs of one case (point,
    size, payload) differ stays."""
    given = [{key: value for key, value in _params(text).items() if key != "payload"} for text in frame["params"]]
    cases = _with_payload(frame)[["point", "size_bytes", "payload"]].reset_index(drop=True)
    algorithms = frame["algorithm"].to_numpy()
    dropped: dict[str, set[str]] = {}
    for algorithm in dict.fromkeys(algorithms):
        rows = np.flatnonzero(algorithms == algorithm)
        for key in dict.fromkeys(key for row in rows for key in given[row]):
            values = pd.Series([json.dumps(given[row].get(key), sort_keys=True) for row in rows])
            within_case = values.groupby([cases.loc[rows, c].to_numpy() for c in cases.columns]).nunique()
            if values.nunique() > 1 and not (within_case > 1).any():
                dropped.setdefault(algorithm, set()).add(key)
    return pd.Series([choice_text(algorithm, {k: v for k, v in params.items() if k not in dropped.get(algorithm, ())})
                      for algorithm, params in zip(algorithms, given)], index=frame.index, dtype=object)


def _with_payload(results: pd.DataFrame) -> pd.DataFrame:
    """`results` with ``payload``: a sparse payload's dimension and density (``N=1000000 d=1/16``), else empty."""
    def described(params: str) -> str:
        payload = _params(params).get("payload")
        return _compact(json.dumps({"payload": payload})) if isinstance(payload, dict) else ""

    return results.assign(payload=results["params"].map(described))


HASH_SEED = "network.hash_seed"
"""The swept key whose values :func:`hash_seed_spread` reads as draws of the ECMP hash."""

_SPREAD_COLUMNS = ("choice", "size_bytes", "seeds", "best_s", "median_s", "worst_s", "worst_over_best", "best_seed",
                   "worst_seed")
"""Columns of :func:`hash_seed_spread` after the other swept keys'."""


def hash_seed_spread(results: pd.DataFrame) -> pd.DataFrame:
    """Simulated time over the ECMP hash seeds a sweep tried, per choice, size and other swept values.

    Under ``routing: ecmp_hash`` a result is one draw of the hash (``docs/topology.md``); a
    sweep of ``network.hash_seed`` makes several. This sets them side by side.

    Parameters
    ----------
    results : pandas.DataFrame
        Rows with one column per swept key (:func:`simnet.scenario.swept_columns`).

    Returns
    -------
    pandas.DataFrame
        The other swept keys' columns, then ``choice, size_bytes, seeds, best_s, median_s, worst_s,
        worst_over_best, best_seed, worst_seed``: per case, the number of seeds and the fastest, median and
        slowest simulated time with the seeds that gave them (the first seed on ties). Empty unless at least
        two seeds ran; points that leave the seed unset (another routing) are not counted.
    """
    if HASH_SEED not in results:
        return pd.DataFrame(columns=list(_SPREAD_COLUMNS))
    seeded = results[results[HASH_SEED].notna()]
    if seeded[HASH_SEED].nunique() < 2:
        return pd.DataFrame(columns=list(_SPREAD_COLUMNS))
    others = [c for c in results.columns if c not in RESULT_COLUMNS and c != HASH_SEED and seeded[c].notna().any()]
    frame = seeded.assign(choice=_choice(seeded))
    rows = []
    for key, group in frame.groupby([*others, "choice", "size_bytes"], sort=False, dropna=False):
        times = group["sim_time_s"].to_numpy(dtype=float)
        seeds = group[HASH_SEED].tolist()
        best, worst = int(times.argmin()), int(times.argmax())
        rows.append(dict(zip([*others, "choice", "size_bytes"], key)) | {
            "seeds": len(group), "best_s": times[best], "median_s": float(pd.Series(times).median()),
            "worst_s": times[worst], "worst_over_best": times[worst] / times[best],
            "best_seed": seeds[best], "worst_seed": seeds[worst]})
    return pd.DataFrame(rows, columns=[*others, *_SPREAD_COLUMNS])


def default_baseline(results: pd.DataFrame) -> str | None:
    """The algorithm speedups are measured against unless one is named: ``ring`` if it ran, else the first
    algorithm of `results` (None for no results)."""
    if not len(results):
        return None
    return "ring" if (results["algorithm"] == "ring").any() else str(results["algorithm"].iloc[0])


def baseline_label(results: pd.DataFrame, baseline: str, *, legend: bool = False) -> str:
    """The runs of `baseline` (:func:`baseline_runs`) named as the speedup table's columns name choices, or with
    `legend` as plot legends do (:func:`factors`): ``ring {"channels": 2}`` (``ring channels=2``) for a baseline
    ``ring`` that ran only with two channels; ``the fastest of ...`` where several choices are the baseline.

    Raises
    ------
    SimnetError
        If the baseline is not among the results.
    """
    runs = baseline_runs(results, baseline)
    results = results.reset_index(drop=True)
    names = factors(results)["choice"].to_numpy() if legend else np.array(_marked(_choice(results), results))
    chosen = list(dict.fromkeys(names[runs]))
    return chosen[0] if len(chosen) == 1 else f"the fastest of {', '.join(chosen)}"


def baseline_runs(results: pd.DataFrame, baseline: str) -> np.ndarray:
    """Which rows of `results` are runs of the baseline `baseline` (a boolean mask).

    `baseline` names a choice as the tables show it, an algorithm and the parameters it was given
    (``ring``: the ring as listed without parameters; ``ring {"channels": 8}``, spaced as one likes), or as a
    plot's legend does (``ring channels=8``: the runs with these among their parameters); if no run is the
    choice ``ring``, every run of the algorithm ``ring`` is (the fastest of them in each case is then the
    baseline).

    Raises
    ------
    SimnetError
        If no run is that choice or of that algorithm (``path="baseline"``).
    """
    choices = _choice(results).to_numpy()
    name, asked, exact = parse_choice(baseline)
    algorithms = results["algorithm"].to_numpy()
    if asked is None:
        runs = choices == name
        if not runs.any():
            runs = algorithms == name
    else:
        given = [{key: value for key, value in _params(text).items() if key != "payload"}
                 for text in results["params"]]
        runs = np.array([algorithm == name and choice_matches(values, asked, exact)
                         for algorithm, values in zip(algorithms, given)], dtype=bool)
    if not runs.any():
        named, kind = (set(choices), "choices") if asked is not None else (set(results["algorithm"]), "algorithms")
        raise SimnetError(f"baseline {baseline!r} is not among the {kind} run ({', '.join(sorted(named))})",
                          path="baseline")
    return runs


def parse_choice(choice: str, *, what: str = "baseline") -> tuple[str, dict | None, bool]:
    """``(algorithm, parameters, exact)`` of a choice as a user writes it: ``ring`` (no parameters);
    ``ring {"channels": 2}`` (exactly these parameters, as the tables name a choice); ``ring channels=2`` (these
    among its parameters, as a plot's legend and the run table's ``params`` name a choice).

    `what` names the choice in messages and is their key path (``"baseline"``, ``"algorithm"``).

    Raises
    ------
    SimnetError
        For parameters that are neither a JSON object nor ``key=value`` pairs (``path=what``).
    """
    text = choice.strip()
    cut = min((at for at in (text.find(" "), text.find("{")) if at >= 0), default=len(text))
    name, rest = text[:cut], text[cut:].strip()
    if not rest:
        return name, None, True
    if rest.startswith("{"):
        try:
            values = json.loads(rest)
        except json.JSONDecodeError as error:
            raise SimnetError(f"the parameters of {what} {choice!r} are not a JSON object ({error.msg})",
                              path=what) from None
        if not isinstance(values, dict):
            raise SimnetError(f"the parameters of {what} {choice!r} are not a JSON object", path=what)
        return name, values, True
    values = {}
    for part in re.split(r"\s+(?=[A-Za-z_]\w*=)", rest):
        key, equals, written = part.partition("=")
        if not equals:
            raise SimnetError(f"{what} {choice!r}: expected key=value after the algorithm, got {part!r}",
                              path=what)
        try:
            values[key] = json.loads(written)
        except json.JSONDecodeError:
            values[key] = written
    return name, values, False


def choice_matches(params: dict, asked: dict, exact: bool) -> bool:
    """Whether a run's `params` (its ``params`` column read as JSON, without the payload) are the parameters
    :func:`parse_choice` read: all of them if `exact`, else `asked` among them."""
    if exact:
        return params == asked
    return all(key in params and params[key] == value for key, value in asked.items())


def speedups(results: pd.DataFrame, baseline: str = "ring") -> pd.DataFrame:
    """Speedup of every run over the `baseline` choice at the same point and size.

    Returns
    -------
    pandas.DataFrame
        ``point, size_bytes, payload, algorithm, params, sim_time_s, baseline_time_s,
        speedup`` in the order of `results`, where ``speedup = baseline_time_s /
        sim_time_s`` (> 1: faster than the baseline) and ``payload`` tells the cases
        of a sparse payload apart (``N=1000000 d=1/16``; empty for dense sizes). The
        baseline's runs are those of :func:`baseline_runs`: ``ring`` is the ring run
        without parameters, ``ring {"channels": 8}`` one with them; an algorithm that ran
        only with parameters is measured at the fastest of its runs in each case.

    Raises
    ------
    SimnetError
        If the baseline is not among the results.
    """
    runs = baseline_runs(results, baseline)
    results = _with_payload(results)
    base = (
        results[runs]
        .groupby(_RUN_KEY, as_index=False)["sim_time_s"]
        .min()
        .rename(columns={"sim_time_s": "baseline_time_s"})
    )
    frame = results.merge(base, on=_RUN_KEY, how="left")
    frame["speedup"] = frame["baseline_time_s"] / frame["sim_time_s"]
    return frame[["point", "size_bytes", "payload", "algorithm", "params", "sim_time_s", "baseline_time_s",
                  "speedup"]]


_PROTOCOL_CHOSEN = ("ring", "tree")
"""NCCL's algorithms that run in more than one protocol (the others are Simple only)."""


def winners(results: pd.DataFrame) -> pd.DataFrame:
    """The fastest simulated choice per (point, size, sparse payload), the runner-up and the margin.

    Lossy algorithms (:func:`lossy_rows`, ``gtopk``) compete only where nothing exact ran, and are then labelled
    ``gtopk (lossy)``.

    Returns
    -------
    pandas.DataFrame
        ``point, size_bytes, payload, winner, time_s, runner_up, runner_up_time_s,
        margin, model_agrees``; ``margin = runner_up_time_s / time_s - 1`` (``NaN``
        with a single choice); ``model_agrees`` says whether the closed-form model
        ranks the same choice first (``None`` when the winner has no closed form,
        e.g. an imported MSCCL program); ``payload`` as in :func:`speedups`. Ties go
        to the earlier row. A choice of NCCL's schedules whose name does not say what ran
        is labelled with it (``nccl (nvls/simple)``, ``nccl_ring {"protocol": "auto"} (ring/ll128)``,
        ``nccl_tree (tree/simple)`` where the protocol was its default),
        and the runner-up is never the winner's own schedule run under another name (``nvls``
        when ``nccl`` picked NVLS: the same NCCL algorithm and protocol in the same time).
    """
    rows = []
    for (point, size, payload), group in _with_payload(results).groupby(_RUN_KEY, sort=False):
        group = _exact_first(group)
        ordered = group.sort_values("sim_time_s", kind="stable")
        best = ordered.iloc[0]
        labels = _choice(ordered)
        ran = _ran(ordered)
        shown = [label + (f" ({key})" if key and (algorithm in NCCL_CHOICES or key != nccl_key(algorithm, params)
                                                   or key.split("/")[0] in _PROTOCOL_CHOSEN
                                                   and "protocol" not in _params(params)) else "")
                 for label, key, algorithm, params in zip(_marked(labels, ordered), ran, ordered["algorithm"],
                                                          ordered["params"])]
        times = ordered["sim_time_s"].tolist()
        second = next((k for k in range(1, len(ordered)) if not (ran[k] and ran[k] == ran[0] and times[k] == times[0])),
                      None)
        runner = ordered.iloc[second] if second is not None else None
        modelled = group.sort_values("model_time_s", kind="stable").iloc[:1]
        predicted = _choice(modelled).iloc[0]
        alias = (bool(ran[0]) and _ran(modelled)[0] == ran[0] and modelled["sim_time_s"].iloc[0] == times[0]
                 and (best["algorithm"] in NCCL_CHOICES or modelled["algorithm"].iloc[0] in NCCL_CHOICES))
        rows.append(
            {
                "point": point,
                "size_bytes": size,
                "payload": payload,
                "winner": shown[0],
                "time_s": best["sim_time_s"],
                "runner_up": shown[second] if runner is not None else "",
                "runner_up_time_s": runner["sim_time_s"] if runner is not None else float("nan"),
                "margin": runner["sim_time_s"] / best["sim_time_s"] - 1 if runner is not None else float("nan"),
                "model_agrees": bool(predicted == labels.iloc[0] or alias)
                if best["model_time_s"] == best["model_time_s"] else None,
            }
        )
    return pd.DataFrame(rows)


def _ran(rows: pd.DataFrame) -> list[str]:
    """:func:`nccl_key` of each row, ``""`` for NCCL's own choice where the row does not record what it
    picked (results written without ``resolved``)."""
    resolved = rows["resolved"].fillna("") if "resolved" in rows else [""] * len(rows)
    return ["" if algorithm in NCCL_CHOICES and "nccl_algorithm" not in f"{params}{picked}"
            else nccl_key(algorithm, params, picked)
            for algorithm, params, picked in zip(rows["algorithm"], rows["params"], resolved)]


def nccl_key(algorithm: str, params: str, resolved: str = "") -> str:
    """``"algorithm/protocol"`` in NCCL's names for a run of an NCCL-family schedule, ``""`` for any other.

    `params` and `resolved` are a result row's columns (JSON); a resolved value wins.

    >>> nccl_key("nccl_ring", '{"channels": 24, "protocol": "ll128"}'), nccl_key("nvls", "{}"), nccl_key("ring", "{}")
    ('ring/ll128', 'nvls/simple', '')
    >>> nccl_key("nccl", "{}", '{"nccl_algorithm": "nvls_tree", "protocol": "simple"}')
    'nvls_tree/simple'
    """
    values = (json.loads(params) if params else {}) | (json.loads(resolved) if resolved else {})
    if algorithm in NCCL_CHOICES:
        name = values.get("nccl_algorithm", "ring")
    elif algorithm in NCCL_NAMES:
        name = NCCL_NAMES[algorithm]
    else:
        return ""
    return f"{name}/{values.get('protocol', 'simple')}"


NCCL_COMPARISON_NOTE = ("Schedules outside NCCL's family (ring, trees, BlueConnect, sparse all-reduces, imported "
                        "MSCCL programs, ...) pay link latencies only, none of NCCL's per-step, kernel or launch "
                        "latencies (an MSCCL program pays only its LL or LL128 wire bytes): NCCL's choice is best "
                        "compared with the best NCCL schedule.")
"""What the NCCL comparison's reader must know about its "simnet's best" column (and ``tune``'s reader about a
winner outside NCCL's family)."""

NCCL_LATENCY_NOTE = ("'+ NCCL latency' adds to such a best the latency NCCL's own model charges its choice at that "
                     "size (its base and per-step latencies, before any byte moves), roughly what the schedule would "
                     "pay run by NCCL; 'latency decides' is yes where that leaves it no faster than the best NCCL "
                     "schedule (NCCL's model where none ran): it is ahead by latency NCCL pays and it does not, not "
                     "by its algorithm.")
"""What the NCCL comparison's columns ``+ NCCL latency`` and ``latency decides`` mean."""


def nccl_comparison_note(results: pd.DataFrame, comparison: pd.DataFrame | None = None) -> str:
    """:data:`NCCL_COMPARISON_NOTE` where a schedule outside NCCL's family ran beside NCCL's choice, and
    :data:`NCCL_LATENCY_NOTE` where one is simnet's best (``""`` where only NCCL's schedules ran, or no row has an
    NCCL choice); `comparison` is :func:`nccl_comparison` of `results` where the caller has it."""
    if "nccl_choice" not in results:
        return ""
    chosen = results[results["nccl_choice"].astype(str) != ""]
    outside = ~chosen["algorithm"].isin([*NCCL_NAMES, *NCCL_CHOICES])
    if not outside.any():
        return ""
    if comparison is None:
        comparison = nccl_comparison(results)
    best_outside = not comparison["simnet_best_pays_nccl_latency"].all()
    return f"{NCCL_COMPARISON_NOTE} {NCCL_LATENCY_NOTE}" if best_outside else NCCL_COMPARISON_NOTE


def nccl_switched_off(results: pd.DataFrame) -> str:
    """A note naming NCCL's schedules that ran where NCCL's own model has them off (``""`` if none did).

    On a system simnet models NCCL on, a schedule a scenario forces (``nccl_algorithm:
    pat``, ``nccl_tree``, ...) runs even where NCCL's cost model gives it no time,
    as NCCL would not launch it there: its model column is empty. PAT is the usual
    case: NCCL enables it only with one GPU per server (``ncclPatEnable``,
    ``src/graph/tuning.cc`` of NCCL 2.30.7) unless ``NCCL_PAT_ENABLE=1``. CollNet has no
    model time for another reason, said apart: simnet's twin derives no CollNet graphs.
    """
    if "nccl_choice" not in results:
        return ""
    resolved = results["resolved"] if "resolved" in results else pd.Series("", index=results.index)
    keys = pd.Series([nccl_key(algorithm, str(params or ""), str(text or "")) for algorithm, params, text in
                      zip(results["algorithm"], results["params"], resolved.fillna(""))], index=results.index)
    off = (results["nccl_choice"].astype(str) != "") & results["model_time_s"].isna() & (keys != "")
    if not off.any():
        return ""
    reasons = {"pat": "NCCL enables PAT only with one GPU per server unless NCCL_PAT_ENABLE=1 (ncclPatEnable, "
                      "tuning.cc)",
               "collnet_direct": _NO_COLLNET, "collnet_chain": _NO_COLLNET}
    named: dict[str, list[str]] = {}
    for algorithm, key, is_off in zip(results["algorithm"], keys, off):
        if is_off:
            why = reasons.get(key.split("/")[0], "NCCL's cost model has it off here, so NCCL would not launch it")
            runs = named.setdefault(why, [])
            runs += [f"{algorithm} ({key})"] if f"{algorithm} ({key})" not in runs else []
    return " ".join(f"{', '.join(runs)} ran without a model time: {why}." for why, runs in named.items())


_NO_COLLNET = ("simnet's twin of NCCL's model derives no CollNet graphs, so it prices no CollNet (NCCL itself does "
               "where SHARP is enabled)")


def nccl_without_model(results: pd.DataFrame) -> str:
    """A note naming NCCL's schedules that ran where simnet has no NCCL cost model (``""`` if none did).

    They carry NCCL's latency constants (base and per-step, the release in their
    ``version``) but have no model time, and no NCCL choice is set beside them, so
    a reader sees them slower than simnet's own schedules at small sizes with no
    model to explain it.
    """
    from simnet.models.nccl.topology import MODELLED_SYSTEMS

    if "nccl_choice" not in results:
        return ""
    alone = results[results["algorithm"].isin(list(NCCL_NAMES)) & (results["nccl_choice"].astype(str) == "")
                    & results["model_time_s"].isna()]
    if not len(alone):
        return ""
    names = ", ".join(dict.fromkeys(alone["algorithm"]))
    note = (f"{names} carry NCCL's latencies (its base and per-step constants) but have no NCCL cost model here: "
            f"simnet derives it for {MODELLED_SYSTEMS}.")
    resolved = alone["resolved"] if "resolved" in alone else pd.Series("", index=alone.index)
    fell: dict[str, dict[str, list]] = {}
    for algorithm, text in zip(alone["algorithm"], resolved.fillna("").astype(str)):
        values = _params(text)
        for key in _FALLBACKS:
            if key in values:
                users = fell.setdefault(key, {}).setdefault(values[key], [])
                users += [algorithm] if algorithm not in users else []
    if not fell:
        return note
    parts = [f"{key}{' fell back' if not parts_so_far else ''} to "
             + " and ".join(f"{value} ({', '.join(users)})" for value, users in sorted(fell[key].items(), key=str))
             for parts_so_far, key in enumerate(fell)]
    advice = " and ".join(f"{key}: ({_FALLBACKS[key]})" for key in fell)
    return (f"{note} Without it, {' and '.join(parts)}: simnet's defaults, not what NCCL would launch. "
            f"Set {advice} in the algorithm's parameters.")


_FALLBACKS = {"channels": "e.g. one per NIC of a server: channel c crosses servers through NIC c mod the NICs, "
                          "as NCCL's graph search spreads them; NCCL launches at most 64",
              "protocol": "simple, ll or ll128"}
"""Parameters NCCL's schedules take from NCCL's model (in the order a note names them), and a hint for
setting each where there is no model."""


def nccl_release(algorithm: str, params: str) -> str:
    """The NCCL release a run of an NCCL-family schedule builds (its ``version``, else
    :data:`~simnet.algorithms.nccl.NCCL_RELEASE`), ``""`` for a schedule outside NCCL's family.

    >>> nccl_release("nccl", '{"version": "2.26.2"}'), nccl_release("nvls", "{}"), nccl_release("ring", "{}")
    ('2.26.2', '2.30.7', '')
    """
    return built_release(algorithm, _params(params))


def nccl_comparison(results: pd.DataFrame) -> pd.DataFrame:
    """Per point, size, sparse payload and NCCL release, simnet's simulated winner beside NCCL's own choice.

    Returns
    -------
    pandas.DataFrame
        ``point, size_bytes, payload, simnet_best, simnet_best_s, simnet_best_pays_nccl_latency,
        simnet_best_with_nccl_latency_s, nccl_release, nccl_best, nccl_best_s, nccl_choice, nccl_model_s,
        nccl_latency_s, nccl_simulated_s, agree, latency_decides`` (``payload`` as in :func:`winners`): the fastest
        simulated run of an exact algorithm (lossy ones, :func:`lossy_rows`, are not competitors; an NCCL
        schedule with the algorithm/protocol it ran, ``nccl (nvls/simple)``) and its time; the NCCL release
        of the row, one row per release the NCCL schedules of the point ran (their ``version``, else
        :data:`~simnet.algorithms.nccl.NCCL_RELEASE`; the release the other rows' choice was priced with where
        no NCCL schedule ran); the fastest simulated run of an NCCL schedule of that release (``""`` and
        ``nan`` if none ran) and its time, the fair comparison for NCCL's choice, since schedules outside
        NCCL's family carry link latencies only, none of NCCL's latencies (an imported MSCCL program carries
        its LL or LL128 wire bytes); what that release's cost model picks (``"algorithm/protocol"``) and
        predicts; the simulated time of that choice where a run of it with that release is in `results`
        (``nan`` otherwise); whether simnet's winner is NCCL's choice (a run of it with that release). Empty
        where no row has an NCCL choice (the topology is not one simnet models NCCL on).

        Whether simnet's best is an NCCL schedule, and so pays NCCL's latencies; its time with the latency
        NCCL's model charges its choice (``nccl_latency_s``) added where it does not (its own time where it
        does); and ``latency_decides``: whether a best outside NCCL's family is faster than the best NCCL
        schedule (NCCL's model time where none ran) only by less than that latency, so that latency NCCL
        pays and it does not, not its algorithm, puts it ahead.
    """
    columns = ["point", "size_bytes", "payload", "simnet_best", "simnet_best_s", "simnet_best_pays_nccl_latency",
               "simnet_best_with_nccl_latency_s", "nccl_release", "nccl_best", "nccl_best_s", "nccl_choice",
               "nccl_model_s", "nccl_latency_s", "nccl_simulated_s", "agree", "latency_decides"]
    rows = []
    chosen = results[results["nccl_choice"].astype(str) != ""] if "nccl_choice" in results else results.iloc[:0]
    for (point, size, payload), group in _with_payload(chosen).groupby(_RUN_KEY, sort=False):
        releases = [nccl_release(algorithm, params) for algorithm, params in zip(group["algorithm"], group["params"])]
        ordered = _exact_first(group.assign(_release=releases)).sort_values("sim_time_s", kind="stable")
        best = ordered.iloc[0]
        keys = _ran(ordered)
        labels = _choice(ordered)
        ran = list(dict.fromkeys(release for release in ordered["_release"] if release))
        for release in ran or [""]:
            own = ordered[ordered["_release"] == release] if release else ordered
            family = [k for k, (key, of) in enumerate(zip(keys, ordered["_release"])) if key and of == release]
            choice = str(own.iloc[0]["nccl_choice"])
            matching = [t for key, t, of in zip(keys, ordered["sim_time_s"], ordered["_release"])
                        if key == choice and of == release]
            nccl_best_s = ordered["sim_time_s"].iloc[family[0]] if family else math.nan
            latency_s = float(own.iloc[0].get("nccl_latency_s", math.nan))
            pays = bool(best["_release"])
            with_latency_s = best["sim_time_s"] if pays else best["sim_time_s"] + latency_s
            against_s = nccl_best_s if family else own.iloc[0]["nccl_model_s"]
            rows.append({
                "point": point,
                "size_bytes": size,
                "payload": payload,
                "simnet_best": labels.iloc[0] + (f" ({keys[0]})" if keys[0] else ""),
                "simnet_best_s": best["sim_time_s"],
                "simnet_best_pays_nccl_latency": pays,
                "simnet_best_with_nccl_latency_s": with_latency_s,
                "nccl_release": release,
                "nccl_best": f"{labels.iloc[family[0]]} ({keys[family[0]]})" if family else "",
                "nccl_best_s": nccl_best_s,
                "nccl_choice": choice,
                "nccl_model_s": own.iloc[0]["nccl_model_s"],
                "nccl_latency_s": latency_s,
                "nccl_simulated_s": min(matching) if matching else math.nan,
                "agree": pays and keys[0] == choice and best["_release"] == release,
                "latency_decides": not pays and best["sim_time_s"] < against_s <= with_latency_s,
            })
    return pd.DataFrame(rows, columns=columns)


def display_nccl_comparison(results: pd.DataFrame, comparison: pd.DataFrame | None = None) -> pd.DataFrame:
    """:func:`nccl_comparison` (`comparison`, where the caller has it) for people: sizes and times with units."""
    frame = nccl_comparison(results) if comparison is None else comparison
    shown = pd.DataFrame({
        "point": frame["point"],
        "size": frame["size_bytes"].map(format_size),
        "payload": frame["payload"],
        "simnet's best (simulated)": frame["simnet_best"].map(lambda label: label.replace('"', "")),
        "time": frame["simnet_best_s"].map(format_time),
        "+ NCCL latency": [("paid" if pays else "—" if t != t else format_time(t)) for pays, t in
                           zip(frame["simnet_best_pays_nccl_latency"], frame["simnet_best_with_nccl_latency_s"])],
        "best NCCL schedule (simulated)": frame["nccl_best"].map(lambda label: label.replace('"', "") or "none run"),
        "its time": frame["nccl_best_s"].map(lambda t: "—" if t != t else format_time(t)),
        "NCCL release": frame["nccl_release"].map(lambda release: release or "—"),
        "NCCL's choice": frame["nccl_choice"],
        "NCCL model": frame["nccl_model_s"].map(format_time),
        "simulated": frame["nccl_simulated_s"].map(lambda t: "not run" if t != t else format_time(t)),
        "same": frame["agree"].map({True: "yes", False: "no"}),
        "latency decides": [("—" if pays or t != t else "yes" if decides else "no") for pays, t, decides in
                            zip(frame["simnet_best_pays_nccl_latency"], frame["simnet_best_with_nccl_latency_s"],
                                frame["latency_decides"])],
    })
    return shown.drop(columns=[c for c in ("point", "payload") if not frame[c].astype(bool).any()])


def residuals(results: pd.DataFrame) -> pd.DataFrame:
    """How far each model is from the simulation, per algorithm (over every size and sparse payload).

    Returns
    -------
    pandas.DataFrame
        ``algorithm, params, runs, model_median, model_worst, critical_path_median,
        critical_path_worst``: medians and the largest deviations of
        ``sim / model - 1`` and ``sim / critical_path - 1`` (positive: the simulation
        is slower than the model predicts, e.g. because of contention).
    """
    frame = results.assign(
        params=results["params"].map(lambda p: json.dumps({k: v for k, v in _params(p).items() if k != "payload"},
                                                          sort_keys=True) if "payload" in _params(p) else p),
        model_residual=results["sim_over_model"] - 1,
        critical_path_residual=results["sim_over_critical_path"] - 1,
    )

    def worst(values: pd.Series) -> float:
        known = values.dropna()
        return float(known.iloc[known.abs().argmax()]) if len(known) else math.nan

    grouped = frame.groupby(["algorithm", "params"], sort=False)
    return grouped.agg(
        runs=("sim_time_s", "size"),
        model_median=("model_residual", "median"),
        model_worst=("model_residual", worst),
        critical_path_median=("critical_path_residual", "median"),
        critical_path_worst=("critical_path_residual", worst),
    ).reset_index()


def tier_summary(trace: Trace) -> pd.DataFrame:
    """Where the time went, by tier, along the critical path of one run.

    A thin alias of :meth:`simnet.engine.Trace.tiers` with the time formatted:
    ``tier, time_s, fraction, time``.
    """
    frame = trace.tiers()
    frame["time"] = frame["time_s"].map(format_time)
    return frame


def link_summary(trace: Trace, *, top: int = 10) -> pd.DataFrame:
    """The `top` busiest links of one run, by utilization then bytes.

    Returns
    -------
    pandas.DataFrame
        Rows of :meth:`simnet.engine.Trace.links`, sorted.
    """
    frame = trace.links()
    return frame.sort_values(["utilization", "bytes", "link"], ascending=[False, False, True]).head(top)


def _failed_count(failures: pd.DataFrame) -> str:
    """``1 algorithm at 2 points, 2 whole points``: what `failures` (:data:`FAILURE_COLUMNS`) count (the
    algorithms as the scenario lists them, the points where any of them failed)."""
    def counted(count: int, word: str) -> str:
        return f"{count} {word}{'' if count == 1 else 's'}"

    whole = failures["entry"].fillna("").eq("")
    parts = []
    if (~whole).any():
        chosen = failures[~whole]
        points = chosen["point"].nunique()
        at = f" at {counted(points, 'point')}" if chosen["point"].fillna("").astype(bool).any() else ""
        parts.append(counted(chosen["entry"].nunique(), "algorithm") + at)
    if whole.any():
        parts.append(counted(failures.loc[whole, "index"].nunique(), "whole point"))
    return ", ".join(parts)


def _failed_section(failures: pd.DataFrame) -> list[str]:
    """The ``## Failed`` section of a report: each algorithm a point could not run (or point that failed as a
    whole), the sizes and the one-line error."""
    error = [": ".join(part for part in (path if path != entry else "", message) if part)
             for path, entry, message in zip(failures["path"].fillna(""), failures["entry"].fillna(""),
                                              failures["message"].fillna(""))]
    algorithm = [f"{name} ({entry})" if entry else "every algorithm (the point failed)"
                 for name, entry in zip(failures["algorithm"].fillna(""), failures["entry"].fillna(""))]
    shown = pd.DataFrame({"point": failures["point"].fillna(""), "algorithm": algorithm,
                          "sizes": failures["sizes"].fillna(""), "error": [e.replace("|", "\\|") for e in error]})
    if not shown["point"].astype(bool).any():
        shown = shown.drop(columns="point")
    return ["## Failed", "", "What the input made fail: it has no rows in the tables of this report, and the run "
            "exited with an error.", "", shown.to_markdown(index=False), ""]


def _routing_fact(results: pd.DataFrame) -> list[str]:
    text = routing_text(results)
    return [f"- routing: {text}"] if text else []


def _headed(title: str, facts: list[str], failures: pd.DataFrame | None) -> list[str]:
    """A report's title and `facts`, the failures' count among them, and the failures' section when any failed."""
    failed = failures is not None and len(failures) > 0
    lines = [f"# {title}", "", *facts]
    if failed:
        lines += [f"- failed: {_failed_count(failures)} (listed under Failed, below)"]
    lines += [""]
    return lines + (_failed_section(failures) if failed else [])


def markdown_summary(results: pd.DataFrame, *, title: str, baseline: str | None = None,
                     failures: pd.DataFrame | None = None) -> str:
    """A short Markdown report of a results frame: what failed, winners, models' residuals, results.

    Parameters
    ----------
    results : pandas.DataFrame
        Rows with :data:`RESULT_COLUMNS`.
    title : str
        First heading.
    baseline : str, optional
        The choice speedups are measured against (:func:`baseline_runs`; default:
        :func:`default_baseline`), shown wherever more than one choice ran.
    failures : pandas.DataFrame, optional
        What failed (:data:`FAILURE_COLUMNS`, as :class:`simnet.errors.SweepFailed` holds it): counted in
        the header and listed first, under ``## Failed``.
    """
    topologies = dict.fromkeys(results["topology"])
    lines = _headed(title, [f"- topology: {', '.join(topologies)}",
                            f"- collective: {', '.join(sorted(set(results['op'])))}",
                            f"- link model: {', '.join(sorted(set(results['network_model'])))}",
                            *_routing_fact(results),
                            f"- runs: {len(results)}"], failures)
    lines += ["## Fastest choice per size", ""]
    best = winners(results)
    shown = pd.DataFrame({
        "point": best["point"],
        "size": best["size_bytes"].map(format_size),
        "payload": best["payload"],
        "winner": best["winner"],
        "time": best["time_s"].map(format_time),
        "runner-up": best["runner_up"],
        "margin": best["margin"].map(lambda m: "" if m != m else f"{m:.1%}"),
        "model agrees": best["model_agrees"].map(lambda agrees: "—" if agrees is None else ("yes" if agrees else "no")),
    })
    shown = shown.drop(columns=[c for c in ("point", "payload") if not shown[c].astype(bool).any()])
    lines += [shown.to_markdown(index=False), ""]
    lossy = lossy_rows(results)
    if lossy.any() and (~lossy).any():
        names = ", ".join(dict.fromkeys(results.loc[lossy, "algorithm"]))
        lines += [f"{names}{LOSSY_LABEL}: lossy by design, not an exact {', '.join(dict.fromkeys(results['op']))}, "
                  "so never named the fastest beside exact choices; its rows are labelled.", ""]
    baseline = baseline or default_baseline(results)
    if baseline is not None and _choice(results).nunique() > 1:
        table = speedups(results, baseline)
        pivot = table.assign(choice=_marked(_column_choice(table), table), size=table["size_bytes"].map(format_size))
        pivot = pivot.pivot_table(index=["point", "size_bytes", "size", "payload"], columns="choice",
                                  values="speedup", sort=False).reset_index().drop(columns=["size_bytes"])
        pivot = pivot.drop(columns=[c for c in ("point", "payload") if not pivot[c].astype(bool).any()])
        lines += [f"## Speedup over {baseline_label(results, baseline)}", "",
                  pivot.to_markdown(index=False, floatfmt=".3f"), ""]
    spread = hash_seed_spread(results)
    if len(spread):
        shown = spread.assign(size=spread["size_bytes"].map(format_size), median=spread["median_s"].map(format_time),
                              **{"worst/best": spread["worst_over_best"]},
                              **{f"{name} (seed)": [f"{format_time(time_s)} ({seed})" for time_s, seed in
                                                    zip(spread[f"{name}_s"], spread[f"{name}_seed"])]
                                 for name in ("best", "worst")})
        others = [c for c in spread.columns if c not in _SPREAD_COLUMNS]
        shown = shown[[*others, "choice", "size", "seeds", "best (seed)", "median", "worst (seed)", "worst/best"]]
        lines += ["## Over ECMP hash seeds", "",
                  "Each `network.hash_seed` is one draw of the ECMP hash: the fastest, median and slowest simulated "
                  "time over the seeds run, with the seeds that gave them.", "",
                  shown.to_markdown(index=False, floatfmt=".3f"), ""]
    if "nccl_choice" in results and results["nccl_choice"].astype(str).ne("").any():
        compared = nccl_comparison(results)
        lines += ["## NCCL's choice beside simnet's", "",
                  "What NCCL's own cost model picks per size (and sparse payload) and predicts "
                  "(`simnet.models.nccl`), beside the fastest "
                  "simulated run, the fastest simulated NCCL schedule and, where it ran, the simulated time of NCCL's "
                  f"choice. {nccl_comparison_note(results, compared)}".rstrip(), "",
                  display_nccl_comparison(results, compared).to_markdown(index=False), ""]
    for note in (nccl_without_model(results), nccl_switched_off(results)):
        if note:
            lines += [note, ""]
    lines += ["## Models against the simulation", "",
              "`sim/model − 1` and `sim/critical path − 1`: positive when the simulation is slower.", ""]
    lines += [residuals(results).to_markdown(index=False, floatfmt=".2e"), ""]
    lines += ["## All runs", "", display_table(results).to_markdown(index=False), ""]
    return "\n".join(lines)


def _nccl_pick(params: str) -> str:
    """`` (pat/simple x16)``: what NCCL's choice resolved to for a job's communicator, from its params JSON."""
    chosen = json.loads(params or "{}")
    if "nccl_algorithm" not in chosen:
        return ""
    channels = f" x{chosen['channels']}" if "channels" in chosen else ""
    return f" ({chosen['nccl_algorithm']}/{chosen.get('protocol', 'simple')}{channels})"


def _density(params: str) -> str:
    """`` d=1/128``: the density of a job's sparse payload, from its params JSON (empty for a dense job)."""
    payload = _params(params).get("payload")
    return f" d={format_fraction(payload['density'])}" if isinstance(payload, dict) else ""


JOBS_NOTE = ("shared: time during which a link held the job back while another job had traffic on it; "
             "most shared link: the link with the most of that time (whenever shared > 0); slowed by: the other job "
             "with the most of it, named only if the job took longer than alone (slowdown > 1: sharing a link need "
             "not delay a job's end).")
"""How the jobs table's ``shared``, ``most shared link`` and ``slowed by`` columns are defined."""


def display_jobs(jobs: pd.DataFrame) -> pd.DataFrame:
    """A copy of a jobs frame (:data:`JOB_COLUMNS`) for people: times with units, ratios rounded; a sparse
    job's size is its dense size with its density (``64 MB d=1/128``) and its bus bandwidth is empty."""
    shown = pd.DataFrame({
        "point": jobs["point"],
        "job": jobs["job"],
        "op": jobs["op"],
        "algorithm": [name + _nccl_pick(params) for name, params in zip(jobs["algorithm"], jobs["params"])],
        "GPUs": jobs["gpus"],
        "comms x ranks": jobs["communicators"].astype(str) + " x " + jobs["ranks"].astype(str),
        "size": [format_size(size) + _density(params) for size, params in zip(jobs["size_bytes"], jobs["params"])],
        "repeat": jobs["repeat"],
        "time": jobs["time_s"].map(format_time),
        "alone": jobs["alone_s"].map(lambda t: "" if t != t else format_time(t)),
        "slowdown": jobs["slowdown"].map(lambda x: "" if x != x else f"{x:.3f}"),
        "busbw GB/s": _bandwidth(jobs["busbw_GBps"]),
        "shared": jobs["shared_s"].map(format_time),
        "slowed by": jobs["slowed_by"].fillna(""),
        "most shared link": jobs["shared_link"].fillna(""),
    })
    if not jobs["point"].astype(bool).any():
        shown = shown.drop(columns="point")
    return shown


def jobs_markdown(jobs: pd.DataFrame, interference: pd.DataFrame, *, title: str, top: int = 10,
                  failures: pd.DataFrame | None = None) -> str:
    """A Markdown report of jobs run together: their times, slowdowns, and the shared links that slowed them.

    Parameters
    ----------
    jobs : pandas.DataFrame
        Rows with :data:`JOB_COLUMNS`.
    interference : pandas.DataFrame
        Rows of :data:`simnet.jobs.INTERFERENCE_COLUMNS` (with a ``point`` column).
    title : str
        First heading.
    top : int, optional
        Shared links listed per job (largest ``shared_s`` first).
    failures : pandas.DataFrame, optional
        Sweep points that failed (:data:`FAILURE_COLUMNS`): counted in the header and listed under
        ``## Failed``.
    """
    lines = _headed(title, [f"- topology: {', '.join(dict.fromkeys(jobs['topology']))}",
                            f"- link model: {', '.join(sorted(set(jobs['network_model'])))}",
                            *_routing_fact(jobs),
                            f"- jobs: {', '.join(dict.fromkeys(jobs['job']))}"], failures)
    lines += ["## Jobs", "",
              "`time`: from the job's start to the end of its last collective (background flows: the mean flow "
              "completion time); `alone`: the same with the job alone on the fabric. " + JOBS_NOTE, ""]
    lines += [display_jobs(jobs).to_markdown(index=False), ""]
    lines += ["## Shared links", "",
              "Per job, the links that held it back while another job used them: `held` is how long the link held "
              "the job back, `shared` how much of that time the other job had traffic on it, `other bytes` what the "
              "other job pushed through it meanwhile.", ""]
    if interference.empty:
        lines += ["No job was held back on a link another job used.", ""]
        return "\n".join(lines)
    frame = interference.copy()
    if "point" not in frame:
        frame["point"] = ""
    for (point, job), group in frame.groupby(["point", "job"], sort=False):
        heading = f"### {job}" + (f" ({point})" if point else "")
        shown = group.sort_values("shared_s", ascending=False, kind="stable").head(top)
        table = pd.DataFrame({
            "link": shown["src"] + " -> " + shown["dst"],
            "tier": shown["tier"],
            "other job": shown["other"],
            "held": shown["held_s"].map(format_time),
            "shared": shown["shared_s"].map(format_time),
            "other bytes": shown["other_bytes"].map(format_size),
        })
        lines += [heading, "", table.to_markdown(index=False), ""]
    return "\n".join(lines)
