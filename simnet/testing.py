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
from pathlib import Path

import pandas as pd
import pytest

__all__ = ["KEY_COLUMNS", "LABEL_COLUMNS", "TIME_COLUMNS", "JOB_KEY_COLUMNS", "JOB_TIME_COLUMNS", "timing_changes",
           "assert_timings", "Golden", "simnet_golden"]

KEY_COLUMNS = ("scenario", "point", "algorithm", "params", "network_model", "ranks", "size_bytes")
TIME_COLUMNS = ("sim_time_s", "model_time_s", "critical_path_s")
LABEL_COLUMNS = ("topology",)
JOB_KEY_COLUMNS = ("scenario", "point", "job", "algorithm", "params", "network_model", "ranks", "size_bytes")
JOB_TIME_COLUMNS = ("time_s", "alone_s", "shared_s")
"""Key and time columns of a ``jobs:`` scenario's rows (:data:`simnet.analysis.JOB_COLUMNS`)."""


def _columns(frame: pd.DataFrame) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Key and time columns of a results frame: per (algorithm, size) runs, or per job."""
    return (JOB_KEY_COLUMNS, JOB_TIME_COLUMNS) if "job" in frame.columns else (KEY_COLUMNS, TIME_COLUMNS)


def _keyed(frame: pd.DataFrame) -> pd.DataFrame:
    keys, times = _columns(frame)
    missing = [c for c in (*keys, *LABEL_COLUMNS, *times) if c not in frame.columns]
    if missing:
        raise ValueError(f"timings need the columns {missing}")
    keyed = frame.loc[:, [*keys, *LABEL_COLUMNS, *times]]
    keyed = keyed.astype({"point": str, "ranks": "int64", "size_bytes": "int64"})
    for column in times:
        keyed[column] = pd.to_numeric(keyed[column].replace("", float("nan")), errors="raise")
    return keyed


def timing_changes(actual: pd.DataFrame, expected: pd.DataFrame, *, rtol: float = 1e-9) -> pd.DataFrame:
    """Rows whose simulated or model time moved by more than `rtol`, or that appeared or vanished.

    Parameters
    ----------
    actual, expected : pandas.DataFrame
        Result frames as returned by :func:`simnet.run` (or read back from CSV); the
        rows of a ``jobs:`` scenario are keyed by job and compare ``time_s``,
        ``alone_s`` and ``shared_s``.
    rtol : float
        Relative tolerance on each time column.

    Returns
    -------
    pandas.DataFrame
        One row per change: the key columns, ``column``, ``expected``, ``actual``,
        ``relative_change`` (``NaN`` for added or removed rows) and ``change``.
    """
    key_columns, time_columns = _columns(actual)
    merged = _keyed(expected).merge(
        _keyed(actual), on=list(key_columns), how="outer", suffixes=("_expected", "_actual"), indicator=True
    )
    changes = []
    for row in merged.to_dict(orient="records"):
        keys = {k: row[k] for k in key_columns}
        if row["_merge"] != "both":
            change = "removed" if row["_merge"] == "left_only" else "added"
            changes.append(keys | {"column": "", "expected": None, "actual": None,
                                   "relative_change": float("nan"), "change": change})
            continue
        for column in LABEL_COLUMNS:
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


def _describe(changes: pd.DataFrame) -> str:
    labels = ["scenario", "point", *(["job"] if "job" in changes.columns else []), "algorithm", "params", "size_bytes"]
    shown = changes.loc[:, [*labels, "column", "expected", "actual", "relative_change",
                            "change"]].astype({"expected": object, "actual": object})
    buffer = io.StringIO()
    with pd.option_context("display.width", 200, "display.max_colwidth", 40, "display.max_rows", 200):
        buffer.write(shown.to_string(index=False, float_format=lambda x: f"{x:.9g}"))
    return buffer.getvalue()


def assert_timings(actual: pd.DataFrame, expected: pd.DataFrame, *, rtol: float = 1e-9) -> None:
    """Fail with a readable table if any simulated or model time moved by more than `rtol`.

    Raises
    ------
    AssertionError
        Listing each moved, added or removed row with old and new values.
    """
    changes = timing_changes(actual, expected, rtol=rtol)
    if len(changes):
        raise AssertionError(f"{len(changes)} timing(s) changed (rtol={rtol:g}):\n{_describe(changes)}")


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
        self.rtol = rtol

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
        rtol = self.rtol if rtol is None else rtol
        current = _keyed(results)
        if not path.exists():
            if not self.update:
                pytest.fail(f"no golden table {path}; run pytest with --simnet-update-golden to create it")
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
            pytest.fail(f"{path}: {len(changes)} timing(s) changed (rtol={rtol:g}):\n{_describe(changes)}",
                        pytrace=False)
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
