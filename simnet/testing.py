"""Pin simulated timings in a test suite: comparison helpers and a pytest fixture.

Simulated times are deterministic, so a change in them is a change in the model,
the topology or the schedule — worth a failing test that says which row moved.
This module is also a pytest plugin: list it in your ``conftest.py`` with
``pytest_plugins = ["simnet.testing"]`` to get the ``simnet_golden`` fixture and the
``--simnet-update-golden`` option.

Examples
--------
In a test file ``tests/test_my_allreduce.py``::

    import simnet

    def test_my_allreduce_timings(simnet_golden):
        results = simnet.run(simnet.load_scenario("scenarios/my_allreduce.yaml"))
        simnet_golden.check("my_allreduce", results)

The first ``pytest --simnet-update-golden`` writes ``tests/golden/my_allreduce.csv``
(commit it); later runs fail with a readable table of every row that moved by more
than the tolerance.
"""

from __future__ import annotations

import io
import math
import numbers
from pathlib import Path

import pandas as pd
import pytest

from simnet.errors import SimnetError

__all__ = ["KEY_COLUMNS", "LABEL_COLUMNS", "TIME_COLUMNS", "JOB_KEY_COLUMNS", "JOB_TIME_COLUMNS", "timing_changes",
           "assert_timings", "assert_under", "Golden", "simnet_golden"]

KEY_COLUMNS = ("scenario", "point", "algorithm", "params", "network_model", "ranks", "size_bytes")
TIME_COLUMNS = ("sim_time_s", "model_time_s", "critical_path_s")
LABEL_COLUMNS = ("topology", "resolved")
"""Columns compared as text: the topology's name, and what an algorithm chose at run time (NCCL's algorithm,
protocol and channels); a table written before ``resolved`` was kept is compared without it."""
JOB_KEY_COLUMNS = ("scenario", "point", "job", "algorithm", "params", "network_model", "ranks", "size_bytes")
JOB_TIME_COLUMNS = ("time_s", "alone_s", "shared_s")
"""Key and time columns of a ``jobs:`` scenario's rows (:data:`simnet.analysis.JOB_COLUMNS`)."""


def _columns(frame: pd.DataFrame) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Key and time columns of a results frame: per (algorithm, size) runs, or per job."""
    return (JOB_KEY_COLUMNS, JOB_TIME_COLUMNS) if "job" in frame.columns else (KEY_COLUMNS, TIME_COLUMNS)


def _keyed(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    """The key, label and time columns of `frame` (the argument `name`), types as :func:`simnet.run` gives them.

    Raises
    ------
    SimnetError
        At `name`, for a missing column, or rows that repeat another's key (a frame concatenated twice, say):
        each row must be one run.
    """
    from simnet.analysis import json_text

    keys, times = _columns(frame)
    labels = [c for c in LABEL_COLUMNS if c != "resolved" or c in frame.columns]
    missing = [c for c in (*keys, *labels, *times) if c not in frame.columns]
    if missing:
        raise SimnetError(f"timings need the columns {missing}", path=name)
    keyed = frame.loc[:, [*keys, *labels, *times]]
    for column in ("params", "resolved"):
        if column in keyed:
            keyed[column] = [json_text(value) for value in keyed[column]]
    keyed = keyed.astype({"point": str, "ranks": "int64", "size_bytes": "int64"})
    for column in times:
        keyed[column] = pd.to_numeric(keyed[column].replace("", float("nan")), errors="raise")
    repeated = keyed.duplicated(list(keys))
    if repeated.any():
        first = keyed.loc[repeated, list(keys)].to_dict(orient="records")[0]
        shown = ", ".join(f"{key}={value!r}" for key, value in first.items())
        raise SimnetError(f"expected one row per ({', '.join(keys)}); {int(repeated.sum())} row(s) repeat an "
                          f"earlier one, the first: {shown}", path=name)
    return keyed


def _tolerance(rtol: float) -> float:
    """`rtol` checked: a finite number ≥ 0."""
    if isinstance(rtol, bool) or not isinstance(rtol, numbers.Real) or not 0 <= rtol < math.inf:
        raise SimnetError(f"must be a finite number ≥ 0 (a relative tolerance such as 1e-9), got {rtol!r}",
                          path="rtol")
    return float(rtol)


def timing_changes(actual: pd.DataFrame, expected: pd.DataFrame, *, rtol: float = 1e-9) -> pd.DataFrame:
    """Rows whose simulated or model time moved by more than `rtol`, or that appeared or vanished.

    Parameters
    ----------
    actual, expected : pandas.DataFrame
        Result frames as returned by :func:`simnet.run`, or read back from results.csv or
        results.json (:func:`simnet.analysis.read_results`, or pandas' own readers: ``params``
        and ``resolved`` may be the objects results.json holds); the rows of a ``jobs:``
        scenario are keyed by job and compare ``time_s``, ``alone_s`` and ``shared_s``.
    rtol : float
        Relative tolerance on each time column.

    Returns
    -------
    pandas.DataFrame
        One row per change: the key columns, ``column``, ``expected``, ``actual``,
        ``relative_change`` (``NaN`` for added or removed rows) and ``change``.

    Raises
    ------
    SimnetError
        Naming the argument: `rtol` not a finite number ≥ 0; a frame without the compared columns, or with
        two rows of one key (each row must be one run).
    """
    _tolerance(rtol)
    key_columns, time_columns = _columns(actual)
    expected, actual = _keyed(expected, "expected"), _keyed(actual, "actual")
    label_columns = [c for c in LABEL_COLUMNS if c in expected and c in actual]
    expected, actual = (frame.drop(columns=[c for c in LABEL_COLUMNS if c in frame and c not in label_columns])
                        for frame in (expected, actual))
    merged = expected.merge(
        actual, on=list(key_columns), how="outer", suffixes=("_expected", "_actual"), indicator=True
    )
    changes = []
    for row in merged.to_dict(orient="records"):
        keys = {k: row[k] for k in key_columns}
        if row["_merge"] != "both":
            change = "removed" if row["_merge"] == "left_only" else "added"
            changes.append(keys | {"column": "", "expected": None, "actual": None,
                                   "relative_change": float("nan"), "change": change})
            continue
        for column in label_columns:
            old, new = row[f"{column}_expected"], row[f"{column}_actual"]
            if old != new:
                changes.append(keys | {"column": column, "expected": old, "actual": new,
                                       "relative_change": float("nan"), "change": "relabelled"})
        for column in time_columns:
            old, new = row[f"{column}_expected"], row[f"{column}_actual"]
            if old != old or new != new:
                if (old != old) != (new != new):
                    changes.append(keys | {"column": column, "expected": old, "actual": new,
                                           "relative_change": float("nan"), "change": "moved"})
                continue
            relative = abs(new - old) / abs(old) if old else abs(new - old)
            if relative > rtol:
                changes.append(keys | {"column": column, "expected": old, "actual": new,
                                       "relative_change": (new - old) / old if old else float("inf"),
                                       "change": "moved"})
    return pd.DataFrame(changes, columns=[*key_columns, "column", "expected", "actual", "relative_change", "change"])


def _differing(old: str, new: str, context: int = 12) -> tuple[str, str]:
    """`old` and `new` with their common beginning and end cut to `context` characters beside what differs."""
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    head = max(0, start - context)

    def cut(text: str) -> str:
        tail = len(text) - max(0, end - context)
        return ("…" if head else "") + text[head:tail] + ("…" if tail < len(text) else "")
    return cut(old), cut(new)


def _describe(changes: pd.DataFrame) -> str:
    labels = ["scenario", "point", *(["job"] if "job" in changes.columns else []), "algorithm", "params", "size_bytes"]
    shown = changes.loc[:, [*labels, "column", "expected", "actual", "relative_change",
                            "change"]].astype({"expected": object, "actual": object})
    relabelled = shown["change"] == "relabelled"
    for index in shown.index[relabelled]:
        shown.loc[index, ["expected", "actual"]] = _differing(str(shown.at[index, "expected"]),
                                                              str(shown.at[index, "actual"]))
    buffer = io.StringIO()
    with pd.option_context("display.width", 200, "display.max_colwidth", 40, "display.max_rows", 200):
        buffer.write(shown.to_string(index=False, float_format=lambda x: f"{x:.9g}"))
    return buffer.getvalue()


def _counted(changes: pd.DataFrame) -> str:
    """What changed, counted by kind: ``"9 timing(s) changed"``, then ``", 2 row(s) added"``, ``", 1 row(s)
    removed"`` and ``", 3 label(s) changed"`` (topologies or choices relabelled) where there are any."""
    kinds = changes["change"]
    counts = [(int((kinds == kind).sum()), what) for kind, what in (
        ("moved", "timing(s) changed"), ("added", "row(s) added"), ("removed", "row(s) removed"),
        ("relabelled", "label(s) changed"))]
    return ", ".join(f"{count} {what}" for count, what in counts if count)


def assert_timings(actual: pd.DataFrame, expected: pd.DataFrame, *, rtol: float = 1e-9) -> None:
    """Fail with a readable table if any simulated or model time moved by more than `rtol`.

    Raises
    ------
    AssertionError
        Listing each moved, added or removed row with old and new values.
    SimnetError
        For bad arguments, as :func:`timing_changes`.
    """
    changes = timing_changes(actual, expected, rtol=rtol)
    if len(changes):
        raise AssertionError(f"{_counted(changes)} (rtol={rtol:g}):\n{_describe(changes)}")


def assert_under(results: pd.DataFrame, limit: str | float, *, column: str = "sim_time_s") -> None:
    """Fail with a readable table if any row's `column` exceeds `limit`: a budget rather than a golden value.

    Parameters
    ----------
    results : pandas.DataFrame
        Rows as :func:`simnet.run` returns them (or any frame with `column`).
    limit : str or float
        The budget: ``"6.5 ms"`` (any time :func:`simnet.units.parse_time` reads), or seconds.
    column : str, optional
        The time column to bound (``"time_s"`` for the rows of a ``jobs:`` scenario).

    Raises
    ------
    AssertionError
        Listing the rows over the budget with their time.
    SimnetError
        For a `limit` that is not a time > 0 (``path="limit"``), or a `column` the rows do not have.
    """
    from simnet.units import format_time, parse_time

    try:
        limit_s = parse_time(limit) if isinstance(limit, str) else limit
    except SimnetError as error:
        raise SimnetError(error.message, path="limit") from None
    if isinstance(limit_s, bool) or not isinstance(limit_s, numbers.Real) or not 0 < limit_s < math.inf:
        raise SimnetError(f"must be a time > 0 such as '6.5 ms' (or seconds), got {limit!r}", path="limit")
    if column not in results:
        raise SimnetError(f"no column {column!r} to bound; the rows have {list(results.columns)}", path="column")
    over = results[results[column] > limit_s]
    if len(over):
        labels = [c for c in ("scenario", "point", "job", "algorithm", "params", "size_bytes") if c in over]
        shown = over.loc[:, labels].assign(**{column: over[column].map(format_time)})
        with pd.option_context("display.width", 200, "display.max_colwidth", 40):
            table = shown.to_string(index=False)
        raise AssertionError(f"{len(over)} row(s) over {format_time(limit_s)} in {column}:\n{table}")


class Golden:
    """Golden timing tables in a directory, checked or rewritten.

    Parameters
    ----------
    directory : pathlib.Path
        Where ``NAME.csv`` tables live.
    update : bool
        Rewrite tables instead of comparing (and report what moved).
    rtol : float
        Relative tolerance of comparisons.
    """

    def __init__(self, directory: Path, *, update: bool = False, rtol: float = 1e-9) -> None:
        self.directory = Path(directory)
        self.update = update
        self.rtol = _tolerance(rtol)

    def path(self, name: str) -> Path:
        """File of golden table `name`."""
        return self.directory / f"{name}.csv"

    def check(self, name: str, results: pd.DataFrame, *, rtol: float | None = None) -> pd.DataFrame:
        """Compare `results` with golden table `name`, or rewrite it in update mode.

        In update mode a table in which nothing moved by more than the tolerance is
        left as it is (no rewrite of last-digit noise).

        Parameters
        ----------
        name : str
            The table, ``golden/<name>.csv``.
        results : pandas.DataFrame
            Rows as :func:`simnet.run` returns them (:func:`simnet.analysis.result_row` builds one).
        rtol : float, optional
            Relative tolerance of this check, instead of the :class:`Golden`'s.

        Returns
        -------
        pandas.DataFrame
            The changes found (empty when nothing moved).
        """
        path = self.path(name)
        rtol = self.rtol if rtol is None else _tolerance(rtol)
        current = _keyed(results, "results")
        if not path.exists():
            if not self.update:
                pytest.fail(f"no golden table {path}; run pytest with --simnet-update-golden to create it",
                            pytrace=False)
            changes = timing_changes(current, current.iloc[0:0], rtol=rtol)
        else:
            try:
                changes = timing_changes(current, pd.read_csv(path, keep_default_na=False), rtol=rtol)
            except ValueError as error:
                if not self.update:
                    pytest.fail(f"{path}: {error}; regenerate it with --simnet-update-golden", pytrace=False)
                changes = timing_changes(current, current.iloc[0:0], rtol=rtol)
        if self.update:
            if path.exists() and not len(changes):
                return changes
            self.directory.mkdir(parents=True, exist_ok=True)
            temporary = path.with_suffix(".csv.tmp")
            current.to_csv(temporary, index=False, lineterminator="\n", float_format="%.17g")
            temporary.replace(path)
            if len(changes):
                print(f"\n{path}: {len(changes)} change(s)\n{_describe(changes)}")
            return changes
        if len(changes):
            pytest.fail(f"{path}: {_counted(changes)} (rtol={rtol:g}):\n{_describe(changes)}", pytrace=False)
        return changes


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register ``--simnet-update-golden``."""
    parser.addoption(
        "--simnet-update-golden",
        action="store_true",
        default=False,
        help="Rewrite simnet golden timing tables instead of comparing with them.",
    )


@pytest.fixture
def simnet_golden(request: pytest.FixtureRequest) -> Golden:
    """A :class:`Golden` for the ``golden/`` directory beside the requesting test file."""
    directory = Path(request.node.path).parent / "golden"
    return Golden(directory, update=request.config.getoption("--simnet-update-golden"))
