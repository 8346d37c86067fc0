"""Sweep executors: run a scenario's points on local processes or a Dask cluster.

A scenario may carry a ``sweep:`` block that varies any of its keys, named by
dotted path (see :func:`simnet.scenario.expand`)::

    sweep:
      grid:                                   # every combination, in the order written
        topology.hosts: [4, 8, 16]
        topology.bandwidth: [100 Gbps, 200 Gbps]
      points:                                 # and/or explicit combinations
        - {collective.chunks: 1}
        - {collective.chunks: 4, network.model: fifo}

A point's algorithm that its network cannot run fails alone: the point's other
algorithms run, and what failed is recorded (see :func:`run_sweep`). So does a point
whose scenario does not validate (a topology its values cannot build, a straggler rank
it does not have): the other points run.

Results survive interruptions. With an output directory, every finished point is
written at once to ``points/<index>-<digest>.json`` (temporary file + rename, so a
killed process leaves either the whole file or none, and at most a temporary file,
which the next run into the directory removes); the digest identifies the
point's full scenario, so ``resume=True`` reuses exactly the points that are
unchanged and finished. The combined ``results.csv`` and ``results.json`` are
rewritten atomically from the point files whenever a run ends, even by Ctrl-C; beside
the ``point`` label they have one column per swept key, named by its key path
(:func:`simnet.scenario.swept_columns`). A
``jobs:`` scenario's rows are one per job (:data:`simnet.analysis.JOB_COLUMNS`), and
its points also write ``interference.csv`` and ``timeline.csv`` (see
:func:`simnet.scenario.point_tables`).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import itertools
import json
import numbers
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from simnet.analysis import FAILURE_COLUMNS, JOB_COLUMNS, RESULT_COLUMNS, records, result_frame
from simnet.errors import ScenarioError, SimnetError, SweepFailed, SweepInterrupted
from simnet.jobs import INTERFERENCE_COLUMNS, TIMELINE_COLUMNS
from simnet.outputs import MANIFEST_FILE, PYTHON_ARGUMENTS, claim, record_files, write_atomic
from simnet.scenario import Point, point_tables, swept_columns, valid_points

__all__ = ["SweepInterrupted", "dask_client", "run_sweep", "write_manifest"]


_TABLES = {"interference": ("point", *INTERFERENCE_COLUMNS), "timeline": ("point", *TIMELINE_COLUMNS)}
"""Tables a ``jobs:`` scenario adds to its rows, written as ``<name>.csv`` beside ``results.csv``."""


def _rows(point: Point, force: bool = False,
          on_phase: Callable[[str], None] | None = None) -> dict[str, list[dict]] | SimnetError:
    """The tables of `point`, or the error that a user's input made it raise (the other points go on)."""
    try:
        return point_tables(point, force=force, on_phase=on_phase)
    except SimnetError as error:
        return error


def _point_failure(point: Point, error: SimnetError) -> dict:
    """The failure record (:data:`simnet.analysis.FAILURE_COLUMNS`) of a point that failed as a whole."""
    return {"index": point.index, "point": point.label, "algorithm": "", "entry": "", "sizes": "all",
            "path": error.path, "message": error.message}


def _failed(points: list[Point], failures: list[dict], whole: dict[int, SimnetError],
            finished: dict[int, dict[str, list[dict]]], out_dir: Path | None, results: pd.DataFrame) -> SimnetError:
    """One error naming the first failure of a sweep (a failed point's as a point's scenario errors are named),
    how many more failed, and what ran and where its results are (:class:`SweepFailed`, holding both).

    A sweep of one point of which nothing ran, for one reason, raises that point's own error."""
    failures = sorted(failures, key=lambda failure: failure["index"])
    first = failures[0]
    inner = ": ".join(part for part in (first["path"], first["message"]) if part)
    if len(points) == 1 and not len(results) and (len(failures) == 1 or first["index"] in whole):
        return whole.get(first["index"]) or first.get("error") or ScenarioError(first["message"], path=first["path"])
    more = f"{len(failures) - 1} more failed; " if len(failures) > 1 else ""
    where = f", results in {out_dir / 'results.csv'}" if out_dir is not None and len(results) else ""
    if len(points) == 1:
        summary = f"the other algorithms ran{where}" if len(results) else "no algorithm ran"
        return SweepFailed(f"{first['message']}; {more}{summary}", path=first["path"], results=results,
                           failures=pd.DataFrame(failures, columns=list(FAILURE_COLUMNS)), summary=summary)
    failed_points = {failure["index"] for failure in failures}
    ran = [index for index, tables in finished.items() if tables["rows"]]
    partly = sum(index in failed_points for index in ran)
    if not ran:
        kept = "no point ran"
    else:
        kept = f"{len(ran)} of the {len(points)} points ran" + (f", {partly} of them in part" if partly else "")
    summary = f"{kept}{where}"
    error = whole.get(first["index"])
    return SweepFailed(f"point {first['index']} ({first['point']}): {inner}; {more}{summary}", path="sweep",
                       source=(error.source if error is not None else "") or _source(points), results=results,
                       failures=pd.DataFrame(failures, columns=list(FAILURE_COLUMNS)), summary=summary)


def _load_finished(points_dir: Path, points: list[Point]) -> dict[int, list[dict]]:
    finished = {}
    for point in points:
        path = points_dir / point.filename
        if path.exists():
            record = json.loads(path.read_text(encoding="utf-8"))
            if record.get("digest") == point.digest and not record.get("failed"):
                finished[point.index] = {"rows": record["rows"], **record.get("tables", {})}
    return finished


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class _StopRequest:
    """SIGINT handler: the first Ctrl-C asks the sweep to stop after the running points, the second aborts."""

    def __init__(self) -> None:
        self.requested = False

    def __call__(self, signum, frame) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True


def _local(points: list[Point], workers: int, force: bool, stop: _StopRequest,
           on_phase: Callable[[Point, str], None] | None = None) -> Iterator[tuple[Point, list[dict]]]:
    if workers <= 1:
        for point in points:
            if stop.requested:
                return
            yield point, _rows(point, force, None if on_phase is None else functools.partial(on_phase, point))
        return
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_ignore_sigint)
    pending: dict[Future, Point] = {}
    queue = iter(points)
    try:
        for point in itertools.islice(queue, workers):
            pending[pool.submit(_rows, point, force)] = point
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: pending[f].index):
                point = pending.pop(future)
                yield point, future.result()
                if not stop.requested:
                    for following in itertools.islice(queue, 1):
                        pending[pool.submit(_rows, following, force)] = following
    except BaseException:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _collect_failed_client() -> None:
    """Collect a Dask ``Client`` whose construction failed, now: left to a later collection, its ``__del__``
    can run inside the next ``Client``'s start and wait forever on that client's loop runner (seen with
    distributed 2026.8.0, in a test process that tried several unusable schedulers)."""
    gc.collect()


@contextlib.contextmanager
def dask_client(scheduler: str | None, workers: int) -> Iterator:
    """A dask.distributed ``Client`` for the block: of the scheduler at `scheduler`, or (``None``) of a local
    cluster of `workers` worker processes, one thread each, started for the block and ended after it.

    Raises
    ------
    SimnetError
        Without dask.distributed installed (``path="executor"``), or for a `scheduler` that cannot be reached
        within Dask's ``distributed.comm.timeouts.connect`` (``path="scheduler"``).
    """
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise SimnetError("the dask executor needs dask.distributed: pip install 'simnet[cluster]'",
                          path="executor") from None
    with contextlib.ExitStack() as stack:
        if scheduler is None:
            cluster = stack.enter_context(LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                       dashboard_address=None))
            address = cluster.scheduler_address
        else:
            address = scheduler
        try:
            client = stack.enter_context(Client(address))
        except (OSError, TimeoutError, ValueError) as error:
            _collect_failed_client()
            raise SimnetError(f"cannot reach the Dask scheduler at {address!r}: {error}", path="scheduler") from None
        yield client


def _dask(
    points: list[Point], scheduler: str | None, workers: int, force: bool, stop: _StopRequest
) -> Iterator[tuple[Point, list[dict]]]:
    from dask.distributed import as_completed

    with dask_client(scheduler, workers) as client:
        futures = {client.submit(_rows, point, force, key=f"simnet-point-{point.digest}", pure=False): point
                   for point in points}
        for future in as_completed(futures):
            if stop.requested:
                client.cancel([f for f in futures if not f.done()])
                return
            yield futures[future], future.result()


def write_manifest(out_dir: Path, points: list[Point], *, source: str = "") -> None:
    """Write ``out_dir/manifest.json``: the study's name (its first point's scenario's), simnet's version, the
    scenario file (`source`, else the one the points were read from, if known) and its directory, and each
    point's index, label, digest and full scenario (``simnet plot DIR`` reruns a point from it)."""
    from simnet import __version__

    scenarios = [point.scenario for point in valid_points(points)]
    base = next((scenario.base_dir for scenario in scenarios if scenario.base_dir is not None), None)
    manifest = {"simnet_version": __version__, "scenario": source or _source(points), "name": _study(points),
                "base_dir": str((base or Path()).resolve()),
                "points": [{"index": p.index, "label": p.label, "digest": p.digest} | (
                    {"error": str(p.error)} if p.scenario is None else
                    {"scenario": p.scenario.model_dump(mode="json", exclude_none=True,
                                                       exclude={"sizes"} if p.scenario.jobs else None)})
                           for p in points]}
    write_atomic(out_dir / MANIFEST_FILE, json.dumps(manifest, indent=2) + "\n")


def _study(points: list[Point]) -> str:
    """The name of the study `points` are of: their scenario's."""
    return next((point.scenario.name for point in valid_points(points)), "")


def _source(points: list[Point]) -> str:
    """The scenario file `points` were read from (``""`` if not known)."""
    return next((point.scenario.source for point in valid_points(points)), "")


def run_sweep(
    points: list[Point],
    *,
    out_dir: str | Path | None = None,
    overwrite: bool = False,
    executor: str = "local",
    workers: int = 1,
    scheduler: str | None = None,
    resume: bool = False,
    progress: bool = False,
    on_point: Callable[[Point], None] | None = None,
    force: bool = False,
    on_phase: Callable[[Point, str], None] | None = None,
) -> pd.DataFrame:
    """Run every point of a sweep and return all result rows, in point order.

    Parameters
    ----------
    points : list of Point
        From :func:`simnet.scenario.expand`.
    out_dir : str or pathlib.Path, optional
        Where each finished point is written at once (``points/``) and the combined
        ``results.csv`` / ``results.json`` at the end, with ``manifest.json`` naming the study
        (:func:`write_manifest`). The directory is held for the sweep and holds one study's results,
        as ``simnet run --out`` does (:func:`simnet.outputs.claim`): a directory another run is
        writing, or holding another study's results, is refused.
    overwrite : bool
        Replace another study's results in `out_dir` (the files its manifest lists) instead of
        refusing.
    executor : {"local", "dask"}
        Local worker processes, or a dask.distributed cluster.
    workers : int
        Worker processes: local ones (1 runs in this process), or with ``executor="dask"`` and no
        `scheduler` those of the local Dask cluster started for the sweep (as ``simnet run`` and
        ``simnet tune`` read ``--workers``).
    scheduler : str, optional
        Address of the Dask scheduler (``tcp://host:8786``); ``None`` starts a local
        cluster of `workers` processes (see :func:`dask_client`).
    resume : bool
        Reuse finished points found in ``out_dir/points`` whose scenario is unchanged.
    progress : bool
        Show a tqdm progress bar with ETA on standard error.
    on_point : callable, optional
        Called with each point as it finishes (after its file is written).
    force : bool
        Run points that look too large for the machine (see :mod:`simnet.guards`).
    on_phase : callable, optional
        Called with a point and a line naming each long phase of it before it starts (building the network,
        NCCL's choice, each run's schedule and simulation; see :func:`simnet.scenario.point_tables`), for points
        run in this process (``executor="local"``, ``workers=1``).

    Raises
    ------
    SweepInterrupted
        On Ctrl-C: the first one lets the running points finish and starts no new
        one, the second aborts them; either way every finished point and the
        combined results are written first.
    SweepFailed
        When the input made something fail, after everything else ran and was written
        (and is held by the error, ``results``). An algorithm a point cannot run (``nvls``
        on a server whose NVSwitch does not reduce, say) fails alone, at that point: the
        point's other algorithms run and keep their rows. An error of the point as a
        whole (its topology, its ``network:`` options; a point whose scenario does not
        validate, :attr:`simnet.scenario.Point.error`, is not run) fails the point. The error lists
        what failed (``failures``, :data:`simnet.analysis.FAILURE_COLUMNS`), names the
        first (in a sweep of several points as a point's scenario errors are:
        ``path="sweep"``, ``point <index> (<label>): <key path>: <message>``; of one, at
        its key path) and says how many more failed and what ran (``summary``). A sweep
        of one point of which nothing ran raises that point's own error.
    simnet.outputs.OutputBusy
        When another run is writing into `out_dir`, naming it.
    SimnetError
        When `out_dir` holds another study's results and `overwrite` is false (naming both studies); for
        a `scheduler` that cannot be reached (``path="scheduler"``, within Dask's
        ``distributed.comm.timeouts.connect``), or ``executor="dask"`` without
        dask.distributed installed; before anything runs, for an `executor` other than ``"local"``
        or ``"dask"``, `workers` not an integer ≥ 1, or a `scheduler` without ``executor="dask"``,
        naming the argument.
    """
    if executor not in ("local", "dask"):
        raise SimnetError(f"executor must be 'local' or 'dask', got {executor!r}", path="executor")
    if isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1:
        raise SimnetError(f"must be an integer ≥ 1 (worker processes), got {workers!r}", path="workers")
    if scheduler is not None and executor != "dask":
        raise SimnetError(f"{scheduler!r} is a Dask scheduler; give it with executor='dask'", path="scheduler")
    out_dir = None if out_dir is None else Path(out_dir)
    with claim(out_dir, name=_study(points), command="run_sweep", overwrite=overwrite, options=PYTHON_ARGUMENTS,
               source=_source(points)):
        if out_dir is not None:
            write_manifest(out_dir, points)
        return _run_sweep(points, out_dir=out_dir, executor=executor, workers=workers, scheduler=scheduler,
                          resume=resume, progress=progress, on_point=on_point, force=force, on_phase=on_phase)


def _run_sweep(points: list[Point], *, out_dir: Path | None, executor: str, workers: int, scheduler: str | None,
               resume: bool, progress: bool, on_point: Callable[[Point], None] | None, force: bool,
               on_phase: Callable[[Point, str], None] | None) -> pd.DataFrame:
    """:func:`run_sweep` with its arguments checked, into an `out_dir` the caller holds (or none)."""
    points_dir = out_dir / "points" if out_dir is not None else None
    if points_dir is not None:
        points_dir.mkdir(parents=True, exist_ok=True)
        for stale in points_dir.glob(".*.tmp"):
            stale.unlink(missing_ok=True)
    finished = _load_finished(points_dir, valid_points(points)) if (resume and points_dir is not None) else {}
    todo = [p for p in valid_points(points) if p.index not in finished]
    invalid = [point for point in points if point.scenario is None]
    bar = tqdm(total=len(points), initial=len(finished) + len(invalid), unit="point", disable=not progress,
               file=sys.stderr, dynamic_ncols=True)
    stop = _StopRequest()
    stream = (_local(todo, workers, force, stop, on_phase) if executor == "local"
              else _dask(todo, scheduler, workers, force, stop))
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, stop) if in_main_thread else None
    whole: dict[int, SimnetError] = {point.index: point.error for point in invalid}
    failures: list[dict] = [_point_failure(point, point.error) for point in invalid]
    try:
        for point, tables in stream:
            if isinstance(tables, SimnetError):
                whole[point.index] = tables
                failures.append(_point_failure(point, tables))
                bar.update(1)
                continue
            failed = tables.get("failed", [])
            tables = {name: rows for name, rows in tables.items() if name != "failed"}
            if points_dir is not None:
                record = {"index": point.index, "label": point.label, "digest": point.digest, "rows": tables["rows"]}
                extra = {name: rows for name, rows in tables.items() if name != "rows"}
                if extra:
                    record["tables"] = extra
                if failed:
                    record["failed"] = [{key: value for key, value in failure.items() if key != "error"}
                                        for failure in failed]
                write_atomic(points_dir / point.filename, json.dumps(record, indent=1) + "\n")
            finished[point.index] = tables
            failures.extend(failed)
            bar.update(1)
            if on_point is not None:
                on_point(point)
    except KeyboardInterrupt:
        stop.requested = True
    finally:
        if in_main_thread:
            signal.signal(signal.SIGINT, previous)
        bar.close()
    jobs = any(point.scenario.jobs is not None for point in valid_points(points))
    ran = any(tables["rows"] for tables in finished.values())
    results = _write_results(out_dir if ran or not failures else None, finished,
                             JOB_COLUMNS if jobs else RESULT_COLUMNS, _TABLES if jobs else {}, points)
    if stop.requested and len(finished) + len(whole) < len(points):
        raise SweepInterrupted(
            f"interrupted after {len(finished)} of {len(points)} points; the finished ones are kept"
        )
    if failures:
        raise _failed(points, failures, whole, finished, out_dir, results)
    return results


def _write_results(out_dir: Path | None, finished: dict[int, dict[str, list[dict]]], columns: tuple[str, ...],
                   tables: dict[str, tuple[str, ...]], points: list[Point]) -> pd.DataFrame:
    """The rows of the `finished` points, in point order, with a column per swept key
    (:func:`simnet.scenario.swept_columns`), written with the other `tables` into `out_dir` if given."""
    rows = [row for index in sorted(finished) for row in finished[index]["rows"]]
    results = swept_columns(result_frame(rows, columns), valid_points(points))
    if out_dir is not None:
        write_atomic(out_dir / "results.csv", results.to_csv(index=False, lineterminator="\n"))
        write_atomic(out_dir / "results.json", json.dumps(records(results), indent=2) + "\n")
        for name, table_columns in tables.items():
            table = pd.DataFrame([row for index in sorted(finished) for row in finished[index].get(name, [])],
                                 columns=list(table_columns))
            table = swept_columns(table, valid_points(points))
            write_atomic(out_dir / f"{name}.csv", table.to_csv(index=False, lineterminator="\n"))
        record_files(out_dir, ["results.csv", "results.json", *(f"{name}.csv" for name in tables)])
    return results
