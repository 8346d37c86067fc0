"""The ``simnet`` command line: thin wiring of library calls.

Errors in user input print one line ``error: <file>: <key path>: <message>`` on
standard error and exit with status 2; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sys
import typing
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    import pandas as pd

from simnet.errors import SimnetError, SweepFailed, SweepInterrupted

__all__ = ["main"]


class _Format(click.Choice):
    """``table|csv|json``, the one choice of what a command prints; ``text`` (the old
    spelling of ``topo show``) is still read as ``table``."""

    def __init__(self) -> None:
        super().__init__(["table", "csv", "json"])

    def convert(self, value, param, context):
        return super().convert("table" if value == "text" else value, param, context)


def _format_option(help_text: str = "What to print on standard output."):
    return click.option("--format", "fmt", type=_Format(), default="table", show_default=True, help=help_text)


def _csv(rows: list[dict]) -> str:
    """`rows` as CSV text, columns in the order of the first row."""
    import csv
    import io

    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(rows[0]) if rows else [], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return text.getvalue()


def _flat(value, prefix: str = "") -> list[dict]:
    """Nested mappings as ``key, value`` rows with dotted keys (lists joined by spaces)."""
    if isinstance(value, dict):
        return [row for key, item in value.items() for row in _flat(item, f"{prefix}.{key}" if prefix else str(key))]
    if isinstance(value, list):
        value = " ".join(str(item) for item in value)
    return [{"key": prefix, "value": value}]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.version_option(package_name="simnet")
@click.pass_context
def cli(context: click.Context, debug: bool) -> None:
    """Simulate and model collective communication on GPU clusters.

    \b
    Examples:
      simnet run scenarios/quickstart.yaml --out results/quickstart
      simnet compare scenarios/blueconnect_dgx.yaml
      simnet tune dgx_a100_superpod_slice --sizes 1KiB..1GiB:x8
      simnet algorithms
      simnet topo list
      simnet export msccl scenarios/quickstart.yaml --algorithm ring --out ring.xml
      simnet verify msccl ring.xml
    """
    context.obj = {"debug": debug}


@cli.command()
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write results.csv, results.json, results.md, plots and each finished sweep point here "
                   "(jobs scenarios: also interference.csv and timeline.csv).")
@_format_option()
@click.option("--executor", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Run sweep points in local processes or on a dask.distributed cluster (--scheduler, or "
                   "a local one of --workers processes).")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes (1 with the local executor: run in this process).")
@click.option("--scheduler", metavar="ADDRESS", help="Dask scheduler address, e.g. tcp://10.0.0.1:8786.")
@click.option("--resume", is_flag=True, help="Skip sweep points already finished in --out.")
@click.option("--overwrite", is_flag=True, help="Replace another scenario's results in --out instead of refusing.")
@click.option("--plots/--no-plots", "draw", default=True, show_default=True,
              help="With --out: draw the plots, or write only the tables and results.md (draw later with "
                   "`simnet plot`).")
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when a terminal).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no notes on stderr.")
@click.option("--force", is_flag=True, help="Run even if the estimated memory exceeds what this machine has.")
def run(scenario: Path, out_dir: Path | None, fmt: str, executor: str, workers: int, scheduler: str | None,
        resume: bool, overwrite: bool, draw: bool, progress: bool | None, quiet: bool, force: bool) -> None:
    """Run a scenario (or its sweep): simulate each algorithm and size, beside its α-β model.

    A scenario with `jobs:` runs its jobs together on one fabric, then each alone,
    and reports each job's slowdown and the shared links that caused it.

    --out DIR is owned by one run at a time, and holds one scenario's results: a
    second run into it while the first is going is refused, naming the first, and
    so is a run of another scenario unless --overwrite is given.

    \b
    Examples:
      simnet run scenarios/quickstart.yaml --out results/quickstart
      simnet run scenarios/quickstart.yaml --format json
      simnet run sweep.yaml --out results/sweep --workers 2 --resume
      simnet run sweep.yaml --out results/sweep --executor dask --scheduler tcp://head:8786
    """
    from simnet import analysis

    _check_out_options(out_dir, resume=resume, overwrite=overwrite)
    _check_scheduler(executor, scheduler)
    loaded, points = _load(scenario, force=force)
    if not quiet:
        _note_repeats(points, force=force)
        _note_ports(points, force=force)
    from simnet.outputs import claim

    with claim(out_dir, name=loaded.name, command="run", source=str(scenario), overwrite=overwrite):
        results, failed = _partial(lambda: _sweep(
            scenario, loaded, points, out_dir, executor=executor, workers=workers, scheduler=scheduler,
            resume=resume, progress=False if quiet else progress, force=force))
        if fmt == "json":
            click.echo(json.dumps(analysis.records(results), indent=2))
        elif fmt == "csv":
            click.echo(results.to_csv(index=False, lineterminator="\n"), nl=False)
        else:
            where = f"{len(points)} sweep points" if len(points) > 1 else results["topology"].iloc[0]
            if failed is not None:
                where = _with_failures(where, results, points, failed)
            if loaded.jobs is not None:
                click.echo(f"{loaded.name}: {where}, {results['job'].nunique()} jobs together, "
                           f"{results['network_model'].iloc[0]} links{_routing_header(results)}")
                click.echo(analysis.display_jobs(results).to_string(index=False))
                if (results["shared_s"] > 0).any():
                    click.echo(analysis.JOBS_NOTE)
            else:
                click.echo(f"{loaded.name}: {where}, {results['op'].iloc[0]}, "
                           f"{results['network_model'].iloc[0]} links{_routing_header(results)}")
                click.echo(analysis.display_table(results).to_string(index=False))
                compared = analysis.nccl_comparison(results)
                if len(compared):
                    click.echo("\nNCCL's own choice (its cost model) beside simnet's simulated best:")
                    click.echo(analysis.display_nccl_comparison(results, compared).to_string(index=False))
                for note in (analysis.nccl_comparison_note(results, compared), analysis.nccl_without_model(results),
                             analysis.nccl_switched_off(results)):
                    if note:
                        click.echo(note)
        failures = failed.failures if failed is not None else None
        if out_dir is not None and loaded.jobs is not None:
            _write_jobs_report(out_dir, loaded.name, results, draw=draw, quiet=quiet, failures=failures)
        elif out_dir is not None:
            _write_report(out_dir, loaded.name, results, _ran(points, results), draw=draw, quiet=quiet,
                          failures=failures)
        if failed is not None:
            _raise_failures(failed, out_dir)


def _routing_header(results) -> str:
    """``, routing <rule>`` for a run's header line (with the hash seed under ``ecmp_hash``), or ``""``."""
    from simnet.analysis import routing_text

    text = routing_text(results)
    return f", routing {text}" if text else ""


def _note_ports(points, *, force: bool = False) -> None:
    """Say on stderr, one line per topology, which fabric switches have more cables than the ports of the switch
    model the topology file names (``switch_ports``); topologies without it are not built here, the others
    once for the run (:meth:`~simnet.scenario.Scenario.built_network` keeps them)."""
    from simnet.scenario import split_tiers, valid_points
    from simnet.topology.describe import ports_warning
    from simnet.topology.io import resolve

    where: dict[str, list[int]] = {}
    for point in valid_points(points):
        spec = point.scenario.topology
        try:
            if "switch_ports" not in resolve(split_tiers(spec)[0], base=point.scenario.base_dir):
                continue
            warning = ports_warning(point.scenario.built_network(force=force).graph)
        except SimnetError:
            continue
        if warning:
            where.setdefault(warning, []).append(point.index)
    for warning, at in where.items():
        some = f" (sweep point{'s' if len(at) > 1 else ''} {', '.join(map(str, at))})" if len(at) < len(points) else ""
        click.echo(f"{warning}{some}", err=True)


def _check_out_options(out_dir: Path | None, *, resume: bool = False, overwrite: bool = False) -> None:
    if resume and out_dir is None:
        raise click.UsageError("--resume needs --out DIR (where the finished points are)")
    if overwrite and out_dir is None:
        raise click.UsageError("--overwrite needs --out DIR")
    if resume and overwrite:
        raise click.UsageError("--resume keeps the finished points in --out and --overwrite removes them; choose one")


def _check_scheduler(executor: str, scheduler: str | None) -> None:
    if scheduler is not None and executor != "dask":
        raise SimnetError(f"{scheduler!r} is a Dask scheduler; give it with --executor dask", path="--scheduler")


def _load(scenario: Path, *, force: bool = False, collective: str = ""):
    """The scenario and its sweep points; `collective` names a command that needs a collective, not jobs."""
    from simnet.scenario import expand, load_scenario

    loaded = load_scenario(scenario, force=force)
    if collective and loaded.jobs is not None:
        raise SimnetError(f"{collective} compares algorithms of one collective; run a jobs scenario with "
                          "`simnet run`", path="jobs", source=str(scenario))
    return loaded, expand(loaded, source=str(scenario), force=force)


def _note_repeats(points, *, force: bool = False) -> None:
    """Say on stderr, one line each, which listed algorithms run what an earlier entry runs (and so run once)."""
    from simnet.scenario import repeated_algorithms, valid_points

    where: dict[tuple[int, int, str], list[int]] = {}
    for point in valid_points(points):
        for repeat in repeated_algorithms(point.scenario, force=force):
            where.setdefault(repeat, []).append(point.index)
    for (index, first, choice), at in where.items():
        some = f" at sweep points {', '.join(map(str, at))}" if len(at) < len(points) else ""
        click.echo(f"note: collective.algorithms[{index}] is the same run as collective.algorithms[{first}] "
                   f"({choice}){some}; it runs once", err=True)


def _sweep(scenario: Path, loaded, points, out_dir: Path | None, *, executor: str = "local", workers: int = 1,
           scheduler: str | None = None, resume: bool = False, progress: bool | None = None, force: bool = False):
    from simnet.sweep import _run_sweep, write_manifest

    show_progress = progress if progress is not None else (len(points) > 1 and sys.stderr.isatty())
    on_phase = None if progress is False or executor != "local" or workers > 1 else _PhaseLines(loaded.name,
                                                                                                 len(points))
    if out_dir is not None:
        write_manifest(out_dir, points, source=str(scenario))
    try:
        return _run_sweep(points, out_dir=out_dir, executor=executor, workers=workers, scheduler=scheduler,
                          resume=resume, progress=show_progress, on_point=None, force=force, on_phase=on_phase)
    except SweepInterrupted as error:
        again = f"simnet run {scenario} --out {out_dir} --resume" if out_dir else "rerun with --out DIR"
        raise SweepInterrupted(f"{error.message}; resume with: {again}", source=str(scenario)) from None
    except SimnetError as error:
        if error.path in ("scheduler", "executor") and not error.source:
            raise SimnetError(error.message, path=f"--{error.path}") from None
        raise error.at(source=str(scenario)) from None
    finally:
        if on_phase is not None:
            on_phase.close()


_QUIET_FOR_S = 3.0
"""A run's phases are printed on stderr from this long after it started (shorter runs print none)."""


class _PhaseLines:
    """Prints each phase of a run's points on stderr as it starts (``h100_512n: [12 s] nccl at 64 MiB (1 of 4):
    simulating 2,486,272 transfers``), with the time since the run started, once the run has taken
    :data:`_QUIET_FOR_S`: the phase going on then at that moment (from a timer), every later one as it starts."""

    def __init__(self, name: str, points: int) -> None:
        import threading
        import time

        self._name, self._points, self._clock = name, points, time.monotonic
        self._began = self._clock()
        self._current: str | None = None
        self._printing = _QUIET_FOR_S <= 0
        self._lock = threading.Lock()
        self._timer = threading.Timer(_QUIET_FOR_S, self._wake)
        self._timer.daemon = True
        self._timer.start()

    def __call__(self, point, text: str) -> None:
        where = f"{self._name}, point {point.index} ({point.label})" if self._points > 1 else self._name
        with self._lock:
            self._current = f"{where}: [{{:.0f}} s] {text}"
            if self._printing:
                self._print()

    def _wake(self) -> None:
        with self._lock:
            self._printing = True
            if self._current is not None:
                self._print()

    def _print(self) -> None:
        from tqdm import tqdm

        tqdm.write(self._current.format(self._clock() - self._began), file=sys.stderr)

    def close(self) -> None:
        """Stop the timer (nothing more is printed)."""
        self._timer.cancel()
        with self._lock:
            self._printing = False


def _ran(points: list, results: pd.DataFrame) -> list:
    """The sweep points with rows in `results` (not those that failed), whose models the plots draw."""
    labels = set(results["point"].astype(str))
    return [point for point in points if point.label in labels]


def _partial(run: Callable[[], pd.DataFrame]) -> tuple[pd.DataFrame, SweepFailed | None]:
    """The results of a sweep, and the error of what failed (None if nothing did), when something ran: a
    command reports that before it fails (:func:`_raise_failures`)."""
    try:
        return run(), None
    except SweepFailed as error:
        if error.results is None or not len(error.results):
            _raise_failures(error, None)
        return error.results, error


def _with_failures(where: str, results: pd.DataFrame, points: list, failed: SweepFailed) -> str:
    """`where` a table's heading says it ran (``4 sweep points``), with how much of it ran and how many failures
    follow on stderr."""
    count = len(failed.failures) if failed.failures is not None else 1
    ran = f"{results['point'].nunique()} of {where}" if len(points) > 1 else where
    return f"{ran} ({count} failure{'' if count == 1 else 's'}, on stderr)"


def _raise_failures(failed: SweepFailed, out_dir: Path | None) -> typing.NoReturn:
    """Print one ``error:`` line per failure of `failed` (a point that failed, or an algorithm a point could not
    run), then raise the line saying how many failed, where they are listed and what ran."""
    failures = failed.failures
    if failures is None or not len(failures):
        raise failed
    sweep = failed.path == "sweep"
    for failure in failures.itertuples(index=False):
        inner = ": ".join(part for part in (failure.path, failure.message) if part)
        line = SimnetError(f"point {failure.index} ({failure.point}): {inner}", path="sweep", source=failed.source) \
            if sweep else SimnetError(failure.message, path=failure.path, source=failed.source)
        click.echo(f"error: {line}", err=True)
    listed = f" (also listed in {out_dir / 'results.md'})" if out_dir is not None and len(failed.results) else ""
    raise SimnetError(f"{len(failures)} failure{'' if len(failures) == 1 else 's'}{listed}; {failed.summary}",
                      path="sweep" if sweep else "", source=failed.source)


def _run_scenario(scenario: Path, out_dir: Path | None, *, executor: str = "local", workers: int = 1,
                  scheduler: str | None = None, resume: bool = False, progress: bool | None = None,
                  force: bool = False):
    loaded, points = _load(scenario, force=force)
    results = _sweep(scenario, loaded, points, out_dir, executor=executor, workers=workers, scheduler=scheduler,
                     resume=resume, progress=progress, force=force)
    return loaded, points, results


def _record_files(out_dir: Path, written: list[Path]) -> None:
    """List the files a run wrote in its manifest, so that an overwrite removes exactly those."""
    from simnet.outputs import record_files

    record_files(out_dir, [path.name for path in written])


def _write_jobs_report(out_dir: Path, name: str, results, *, draw: bool = True, quiet: bool = False,
                       failures=None) -> None:
    """Gantt and slowdown bars (if `draw`) and results.md of a jobs scenario, next to the tables run_sweep wrote;
    results.md lists the `failures` (:data:`simnet.analysis.FAILURE_COLUMNS`)."""
    import pandas as pd

    from simnet import analysis
    from simnet.outputs import write_atomic

    interference = pd.read_csv(out_dir / "interference.csv", keep_default_na=False)
    written = [out_dir / f"{table}.{kind}" for table, kind in (("results", "csv"), ("results", "json"),
                                                                ("interference", "csv"), ("timeline", "csv"))]
    if draw:
        from simnet import plots

        timeline = pd.read_csv(out_dir / "timeline.csv", keep_default_na=False)
        plots.jobs_gantt(timeline, out_dir / "jobs_gantt.png", title=name)
        plots.slowdown_bars(results, out_dir / "slowdown.png", title=name)
        written += [out_dir / "jobs_gantt.png", out_dir / "slowdown.png"]
    write_atomic(out_dir / "results.md", analysis.jobs_markdown(results, interference, title=name,
                                                                failures=failures))
    written.append(out_dir / "results.md")
    _record_files(out_dir, written)
    if not quiet:
        click.echo("wrote " + ", ".join(str(path) for path in written), err=True)


def _write_report(out_dir: Path, name: str, results, points, *, baseline: str | None = None, draw: bool = True,
                  quiet: bool = False, failures=None) -> None:
    """Plots (if `draw`) and results.md next to results.csv / results.json; results.md lists the `failures`
    (:data:`simnet.analysis.FAILURE_COLUMNS`) first.

    time and busbw against the size (``time_vs_size.png``, ``busbw_vs_size.png``)
    when sizes vary, and against every other swept key (``time_vs_<key>.png``; of keys
    that change together, the first, see :func:`simnet.plots.plotted_axes`),
    the α-β model drawn over the whole range; speedup bars when an algorithm ran
    beside the baseline.
    """
    from simnet import analysis
    from simnet.outputs import write_atomic

    written = [out_dir / "results.csv", out_dir / "results.json"]
    baseline = baseline or analysis.default_baseline(results)
    if draw:
        from simnet import plots

        against = plots.plotted_axes(results)
        for key in against:
            curves = _curves(points, results, key)
            for metric in plots.METRICS:
                target = out_dir / f"{metric}_vs_{key.replace('.', '_')}.png"
                plots.metric_plot(results, target, metric=metric, against=key, curves=curves, title=name)
                written.append(target)
        if baseline is not None and _compared(results, baseline):
            plots.speedup_bars(results, out_dir / "speedup.png", baseline=baseline, against=against[0], title=name)
            written.append(out_dir / "speedup.png")
    write_atomic(out_dir / "results.md", analysis.markdown_summary(results, title=name, baseline=baseline,
                                                                   failures=failures))
    written.append(out_dir / "results.md")
    _record_files(out_dir, written)
    if not quiet:
        click.echo("wrote " + ", ".join(str(path) for path in written), err=True)


def _compared(results, baseline: str) -> bool:
    """Whether a choice other than `baseline` ran at some point beside it."""
    from simnet import analysis

    try:
        own = analysis.baseline_runs(results, baseline)
    except SimnetError:
        return False
    choices = analysis.factors(results)["choice"]
    return bool((~own).any()) or choices[own].nunique() > 1


def _curves(points, results, against: str, *, per_octave: int = 4):
    """The closed forms of `points` along `against` (size or density), densely between the runs' extremes."""
    import numpy as np

    from simnet import analysis
    from simnet.scenario import model_curves

    if points is None or against not in ("size", "payload.density"):
        return None
    values = analysis.factors(results)[against].dropna().astype(float)
    if values.empty:
        return None
    low, high = float(values.min()), float(values.max())
    count = int(min(64, max(16, per_octave * np.log2(high / low) + 1))) if high > low else 1
    grid = sorted(set(np.geomspace(low, high, count).tolist()) | set(values.tolist()))
    return model_curves(points, against, grid)


@cli.command()
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--baseline", default=None,
              help="Choice the speedups are measured against: an algorithm, or one with its parameters as the "
                   "tables show it, e.g. 'ring {\"channels\": 8}' (default: ring if it ran, else the first listed).")
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write results, plots (with speedup bars) and results.md here.")
@click.option("--overwrite", is_flag=True, help="Replace another scenario's results in --out instead of refusing.")
@_format_option("What to print on standard output (csv: the winners).")
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when a terminal).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no notes on stderr.")
@click.option("--force", is_flag=True, help="Run even if the estimated memory exceeds what this machine has.")
def compare(scenario: Path, baseline: str | None, out_dir: Path | None, overwrite: bool, fmt: str,
            progress: bool | None,
            quiet: bool, force: bool) -> None:
    """Which algorithm wins at each size, by how much, and does the model agree?

    \b
    Example:
      simnet compare scenarios/blueconnect_dgx.yaml --baseline ring --out results/compare
    """
    from simnet import analysis

    _check_out_options(out_dir, overwrite=overwrite)
    loaded, points = _load(scenario, force=force, collective="compare")
    if not quiet:
        _note_repeats(points, force=force)
    if baseline is not None:
        from simnet.scenario import valid_points

        listed = {entry.name for point in valid_points(points) for entry in point.scenario.collective.algorithms}
        try:
            name = analysis.parse_choice(baseline)[0]
        except SimnetError as error:
            raise SimnetError(error.message, path="--baseline", source=str(scenario)) from None
        if name.partition(":")[0] not in listed:
            raise SimnetError(f"baseline {baseline!r} names {name!r}, which the scenario does not list "
                              f"({', '.join(sorted(listed))})", path="--baseline", source=str(scenario))
    from simnet.outputs import claim

    with claim(out_dir, name=loaded.name, command="compare", source=str(scenario), overwrite=overwrite):
        results, failed = _partial(lambda: _sweep(scenario, loaded, points, out_dir,
                                                  progress=False if quiet else progress, force=force))
        baseline = baseline or analysis.default_baseline(results)
        try:
            best = analysis.winners(results)
            gains = analysis.speedups(results, baseline)
        except SimnetError as error:
            if failed is not None:
                _raise_failures(failed, None)
            path = "--baseline" if error.path == "baseline" else error.path
            raise SimnetError(error.message, path=path, source=str(scenario)) from None
        if fmt == "json":
            click.echo(json.dumps({"winners": analysis.records(best), "speedups": analysis.records(gains)},
                                  indent=2))
        elif fmt == "csv":
            click.echo(best.to_csv(index=False, lineterminator="\n"), nl=False)
        else:
            click.echo(f"{loaded.name}: fastest choice per size (simulated), speedups over {baseline}")
            failures = failed.failures if failed is not None else None
            click.echo(analysis.markdown_summary(results, title=loaded.name, baseline=baseline,
                                                 failures=failures).split("## All runs")[0])
        if out_dir is not None:
            _write_report(out_dir, loaded.name, results, _ran(points, results), baseline=baseline, quiet=quiet,
                          failures=failed.failures if failed is not None else None)
        if failed is not None:
            _raise_failures(failed, out_dir)


_NETWORK_OPTIONS = {
    "model": "--network-model",
    "routing": "--routing",
    "hash_seed": "--hash-seed",
    "bundles": "--bundles",
    "sharing": "--sharing",
    "overhead": "--overhead",
    "reduce_bandwidth": "--reduce-bandwidth",
    "tier_efficiency": "--tier-efficiency",
    "stragglers": "--straggler",
    "start_offset": "--start-offset",
}
"""The key of a scenario's ``network:`` block each `tune` option sets."""

_LINK_MODELS = ("maxmin", "fifo")
_ROUTINGS = ("shortest", "ecmp_hash", "dmodk", "dimension_order", "simgrid")
_BUNDLES = ("cables", "merged")
_SHARING = ("equal", "rtt_weighted")


def _pairs(values: tuple[str, ...], option: str, example: str) -> dict[str, str]:
    """``("nvlink=80%", "ib=0.9")`` -> ``{"nvlink": "80%", "ib": "0.9"}``."""
    found = {}
    for value in values:
        key, equals, text = value.partition("=")
        if not equals or not key.strip() or not text.strip():
            raise SimnetError(f"expected {example}, got {value!r}", path=option)
        found[key.strip()] = text.strip()
    return found


def _tune_target(topology: str) -> tuple[object, dict]:
    """The graph and the ``network:`` block of `tune`'s TOPOLOGY argument.

    A scenario file gives its topology and its ``network:`` block; anything else is a
    topology file or preset with the default network.
    """
    from simnet.scenario import build_topology, load_scenario, read_yaml

    path = Path(topology)
    if path.suffix in (".yaml", ".yml") and path.is_file():
        data = read_yaml(path)
        if isinstance(data, dict) and "collective" in data:
            scenario = load_scenario(path)
            varied = [key for key in (scenario.sweep.grid if scenario.sweep else {})
                      if key.split(".")[0] in ("topology", "network")]
            varied += [key for point in (scenario.sweep.points if scenario.sweep else []) for key in point
                       if key.split(".")[0] in ("topology", "network")]
            if varied:
                raise SimnetError(f"its sweep varies {varied[0]}, so it has more than one network; "
                                  "tune one topology file or a scenario without such a sweep",
                                  path="sweep", source=topology)
            try:
                graph = build_topology(scenario.topology, base=scenario.base_dir)
            except SimnetError as error:
                raise error.at(path="topology", source=topology) from None
            return graph, scenario.network.model_dump(mode="json", exclude_defaults=True)
    return _topology_graph(topology), {}


def _topology_graph(topology: str, point_text: str = "0"):
    """The graph of a TOPOLOGY argument (a file or a preset name, or a scenario file: the topology of its sweep
    point `point_text`, overrides applied); a name that is none of them is an error of TOPOLOGY."""
    from simnet.topology import find, load

    if _is_scenario_file(topology):
        from simnet.scenario import expand, load_scenario

        points = expand(load_scenario(Path(topology)), source=topology)
        index = _point_number(point_text, [point.label for point in points], source=topology)
        point = _valid(points[index], topology)
        if len(points) > 1:
            click.echo(f"{topology}: the topology of sweep point {index} {point.label!r} (of {len(points)}, "
                       "--point picks another)", err=True)
        return point.scenario.built_network().graph
    if point_text.strip() != "0":
        raise SimnetError(f"picks a sweep point of a scenario file, got {point_text!r} with a topology",
                          path="--point", source=topology)
    try:
        path = find(topology)
    except SimnetError as error:
        raise type(error)(error.message, path="TOPOLOGY") from None
    return load(path)


def _valid(point, source: str):
    """`point`, for a command that needs its scenario; for a sweep point whose scenario does not validate, its
    error as a sweep names it (``sweep: point 1 (<label>): <key path>: <message>``)."""
    from simnet.scenario import point_error

    if point.error is not None:
        raise point_error(point, source=source)
    return point


def _is_scenario_file(text: str) -> bool:
    """Whether `text` is a YAML file of a scenario (a mapping with ``topology`` beside ``collective`` or ``jobs``)
    rather than of a topology."""
    import yaml

    from simnet import yamlio

    path = Path(text)
    if path.suffix not in (".yaml", ".yml") or not path.is_file():
        return False
    try:
        data = yamlio.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SimnetError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and "topology" in data and ("collective" in data or "jobs" in data)


@cli.command()
@click.argument("topology")
@click.option("--op", type=click.Choice(["allreduce", "all_gather", "reduce_scatter", "broadcast", "reduce"]),
              default="allreduce", show_default=True,
              help="Collective to tune (all_gather: sizes are the gathered result; broadcast and reduce from rank 0).")
@click.option("--sizes", default="1KiB..1GiB:x4", show_default=True,
              help="LOW..HIGH (doubling) or LOW..HIGH:xN (N-fold steps), both ends included; or a comma-separated list.")
@click.option("--prune-factor", type=click.FloatRange(min=1), default=1.5, show_default=True,
              help="Simulate only the candidates whose model time is within this factor of the best time known "
                   "at each size: the best model time, or the best simulated time if larger ('inf': all).")
@click.option("--top", hidden=True, type=int, help="Replaced by --prune-factor.")
@click.option("--algorithms", "algorithm_text", metavar="NAMES",
              help="Tune only these algorithms, comma-separated, e.g. 'blueconnect,ring' (default: all).")
@click.option("--chunks", "chunk_text", default="1,4", show_default=True, help="Chunk counts to try.")
@click.option("--channels", "channel_text", default="1,2,4,8", show_default=True, help="Ring channel counts to try.")
@click.option("--network-model", type=click.Choice(_LINK_MODELS), default=None,
              help="Link sharing model, as network.model of a scenario [default: maxmin].")
@click.option("--routing", type=click.Choice(_ROUTINGS), default=None,
              help="Routing rule instead of the topology's own (network.routing).")
@click.option("--hash-seed", type=int, default=None,
              help="Seed of ecmp_hash's hash, 0 by default (network.hash_seed); each seed is one draw of hash luck.")
@click.option("--bundles", type=click.Choice(_BUNDLES), default=None,
              help="Parallel cables as separate links or one merged link (network.bundles).")
@click.option("--sharing", type=click.Choice(_SHARING), default=None,
              help="How max-min sharing weighs flows (network.sharing).")
@click.option("--overhead", metavar="TIME", help="Software overhead per message, e.g. '5 us' (network.overhead).")
@click.option("--reduce-bandwidth", metavar="BANDWIDTH",
              help="A GPU's reduction throughput, e.g. '100 GB/s' (network.reduce_bandwidth).")
@click.option("--tier-efficiency", metavar="TIER=FRACTION", multiple=True,
              help="Fraction of line rate a tier reaches, e.g. 'nvlink=80%' (network.tier_efficiency); repeatable.")
@click.option("--straggler", metavar="RANK=FACTOR", multiple=True,
              help="Slow down a rank's overhead and reductions, e.g. '3=1.5' (network.stragglers); repeatable.")
@click.option("--start-offset", metavar="RANK=TIME", multiple=True,
              help="A rank starts late, e.g. '0=5us' (network.start_offset); repeatable.")
@_format_option()
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write tuner.csv (the table) and candidates.csv (every priced candidate).")
@click.option("--overwrite", is_flag=True, help="Replace another study's results in --out instead of refusing.")
@click.option("--nccl", is_flag=True,
              help="Also try NCCL's schedules (nccl_ring, nccl_tree, nvls, nvls_tree, collnet_*) in every protocol, "
                   "priced by NCCL's own model and pruned among themselves (servers of GPUs on one NVSwitch); "
                   "CollNet, which that model cannot price, is simulated at every size where the fabric has SHARP. "
                   "Those the topology cannot run are named on stderr.")
@click.option("--emit", nargs=2, type=(click.Choice(["nccl-tuner"]), click.Path(dir_okay=False, path_type=Path)),
              default=None, metavar="nccl-tuner FILE",
              help="Write NCCL's example tuner plugin configuration (nccl_tuner.conf) from the fastest simulated "
                   "NCCL schedule per size; implies --nccl.")
@click.option("--executor", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Run the simulations in local processes or on a dask.distributed cluster (--scheduler, or "
                   "a local one of --workers processes).")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes (1 with the local executor: simulate in this process).")
@click.option("--scheduler", metavar="ADDRESS", help="Dask scheduler address, e.g. tcp://10.0.0.1:8786.")
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when a terminal).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no notes on stderr.")
def tune(topology: str, op: str, sizes: str, prune_factor: float, top: int | None, algorithm_text: str | None,
         chunk_text: str, channel_text: str,
         network_model: str | None, routing: str | None, hash_seed: int | None, bundles: str | None,
         sharing: str | None,
         overhead: str | None, reduce_bandwidth: str | None, tier_efficiency: tuple[str, ...],
         straggler: tuple[str, ...], start_offset: tuple[str, ...], fmt: str, out_dir: Path | None,
         overwrite: bool, nccl: bool, emit: tuple[str, Path] | None, executor: str, workers: int,
         scheduler: str | None, progress: bool | None, quiet: bool) -> None:
    """Best algorithm and parameters per size range for a topology, NCCL-tuner style.

    Every candidate is priced by its α-β model and simulated, in order of model
    time, while its model time is within --prune-factor of the best time known at
    that size (the best model time, or the best simulated time if larger); the
    simulated winner is kept. TOPOLOGY is a
    topology file, a preset name (see `simnet topo list`) or a scenario file, whose
    topology and network: block are used (options given here override the block),
    so tuned times are the times `simnet run` simulates. Predicted and simulated
    times are those at the size in the 'at size' column, the largest of each range.
    Sizes are tuned independently, so --workers N simulates up to N candidates at a
    time (each worker holds one simulation's memory); what is simulated, pruned and
    chosen does not depend on it.

    \b
    Examples:
      simnet tune dgx_a100_superpod_slice --sizes 1KiB..1GiB:x8
      simnet tune power9_ac922 --sizes 1MiB,64MiB --format json
      simnet tune dgx_h100 --tier-efficiency nvswitch=80% --overhead 5us --reduce-bandwidth 200GB/s
      simnet tune scenarios/blueconnect_dgx.yaml --prune-factor inf
      simnet tune power9_cluster --algorithms blueconnect,ring --sizes 1MiB,256MiB
      simnet tune dgx_h100 --sizes 64KiB..4GiB:x4 --emit nccl-tuner nccl_tuner.conf
      simnet tune dgx_h100_ndr_32 --sizes 1MiB..1GiB:x32 --nccl --workers 2
    """
    from simnet.analysis import routing_label
    from simnet.tune import comparison_note, display_tuner_table, skipped_note, tune as tune_sizes, tuner_table
    from simnet.units import format_size_span, parse_size_range

    if top is not None:
        raise click.UsageError("--top is gone: tune simulates the candidates within --prune-factor (default 1.5) "
                               "of the best time known at each size")
    counts = {}
    for option, text in (("--chunks", chunk_text), ("--channels", channel_text)):
        try:
            counts[option] = [int(part) for part in text.split(",")]
        except ValueError:
            raise SimnetError(f"expected comma-separated integers such as '1,4', got {text!r}", path=option) from None
        if any(count < 1 for count in counts[option]):
            raise SimnetError(f"counts must be ≥ 1, got {text!r}", path=option)
    try:
        size_list = parse_size_range(sizes)
    except SimnetError as error:
        raise error.at(path="--sizes") from None
    algorithms = None
    if algorithm_text is not None:
        algorithms = list(dict.fromkeys(part.strip() for part in algorithm_text.split(",") if part.strip()))
        if not algorithms:
            raise SimnetError(f"expected comma-separated algorithm names such as 'blueconnect,ring', got "
                              f"{algorithm_text!r}", path="--algorithms")
    _check_out_options(out_dir, overwrite=overwrite)
    graph, block = _tune_target(topology)
    given = {key: value for key, value in (("model", network_model), ("routing", routing), ("hash_seed", hash_seed),
                                           ("bundles", bundles), ("sharing", sharing), ("overhead", overhead),
                                           ("reduce_bandwidth", reduce_bandwidth)) if value is not None}
    for key, values, example in (("tier_efficiency", tier_efficiency, "TIER=FRACTION such as 'nvlink=80%'"),
                                 ("stragglers", straggler, "RANK=FACTOR such as '3=1.5'"),
                                 ("start_offset", start_offset, "RANK=TIME such as '0=5us'")):
        if values:
            given[key] = {**block.get(key, {}), **_pairs(values, _NETWORK_OPTIONS[key], example)}
    network = {**block, **given}
    show_progress = not quiet and (progress if progress is not None else sys.stderr.isatty())
    name = f"tune {Path(topology).stem if Path(topology).suffix in ('.yaml', '.yml') else topology}"
    from simnet.outputs import claim

    with claim(out_dir, name=name, command="tune", source=topology, overwrite=overwrite):
        try:
            if emit is not None:
                _check_emit(emit[1], graph, network)
            with _tune_executor(executor, workers, scheduler) as pool:
                tuned = tune_sizes(graph, size_list, op=op, network=network, prune_factor=prune_factor,
                                   chunk_counts=counts["--chunks"], channel_counts=counts["--channels"],
                                   nccl=nccl or emit is not None, algorithms=algorithms, progress=show_progress,
                                   executor=pool)
        except KeyboardInterrupt:
            raise SweepInterrupted(f"tune writes its table once every size is tuned, so nothing of this run is "
                                   f"kept; tune fewer sizes at a time (--sizes, {len(size_list)} now) to keep "
                                   "answers as they come") from None
        except SimnetError as error:
            key, _, rest = error.path.removeprefix("network.").replace(".[key]", "").partition(".")
            if error.path.startswith("network.") and key in given:
                raise SimnetError(error.message, path=" ".join(filter(None, (_NETWORK_OPTIONS[key], rest)))) from None
            if error.path.startswith("network"):
                raise error.at(source=topology) from None
            if error.path == "algorithms":
                raise SimnetError(error.message, path="--algorithms") from None
            raise
        table = tuner_table(tuned)
        simulated = int((~tuned["pruned"]).sum())
        summary = (f"simulated {simulated} of {len(tuned)} (size, candidate) pairs; pruned {len(tuned) - simulated} "
                   f"whose model time exceeds {prune_factor:g}× the best time known at their size")
        if fmt == "json":
            click.echo(json.dumps(table.to_dict(orient="records"), indent=2))
        elif fmt == "csv":
            click.echo(table.to_csv(index=False, lineterminator="\n"), nl=False)
        else:
            model = network.get("model", "maxmin")
            rule = network.get("routing") or graph.graph.get("routing", "shortest")
            counted = f"{len(size_list)} sizes" if len(size_list) > 1 else "1 size"
            click.echo(f"{graph.graph.get('name', topology)}: {op}, {model} links, "
                       f"routing {routing_label(rule, [int(network.get('hash_seed', 0))])}, {counted} "
                       f"({format_size_span(size_list[0], size_list[-1])}), "
                       f"{tuned['choice'].nunique()} candidates; {summary}")
            click.echo("predicted and simulated times are those at the size in 'at size', the largest of each range")
            click.echo(display_tuner_table(table).to_string(index=False))
            if note := comparison_note(tuned, table):
                click.echo(note)
        if fmt != "table" and not quiet:
            click.echo(summary, err=True)
        if (note := skipped_note(tuned)) and not quiet:
            click.echo(f"--nccl: {note}", err=True)
        if emit is not None:
            _emit_nccl_tuner(emit[1], tuned, graph, network, op=op, quiet=quiet)
        if out_dir is not None:
            from simnet import __version__
            from simnet.outputs import MANIFEST_FILE
            from simnet.outputs import write_atomic

            manifest = {"simnet_version": __version__, "command": "tune", "name": name, "source": topology,
                        "sizes": size_list, "network": network, "prune_factor": prune_factor,
                        "files": ["candidates.csv", "tuner.csv"]}
            write_atomic(out_dir / MANIFEST_FILE, json.dumps(manifest, indent=2) + "\n")
            write_atomic(out_dir / "tuner.csv", table.to_csv(index=False, lineterminator="\n"))
            write_atomic(out_dir / "candidates.csv", tuned.to_csv(index=False, lineterminator="\n"))
            if not quiet:
                click.echo(f"wrote {out_dir / 'tuner.csv'}, {out_dir / 'candidates.csv'}", err=True)


def _terminate(pool: ProcessPoolExecutor) -> None:
    """Shut `pool` down without finishing the tasks its workers hold (``shutdown`` would wait for them):
    ``terminate_workers`` from Python 3.14, before it the worker processes themselves."""
    terminate = getattr(pool, "terminate_workers", None)
    if terminate is not None:
        terminate()
        return
    processes = list((pool._processes or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    for process in processes:
        process.join()


@contextlib.contextmanager
def _tune_executor(executor: str, workers: int, scheduler: str | None) -> Iterator[Executor | None]:
    """Where `tune` simulates: ``None`` (this process), local worker processes, or a Dask cluster's executor
    (the scheduler's, or a local cluster of `workers` processes). On any error or interrupt the local
    workers are ended at once."""
    _check_scheduler(executor, scheduler)
    if executor == "dask":
        from simnet.sweep import dask_client

        with contextlib.ExitStack() as stack:
            try:
                client = stack.enter_context(dask_client(scheduler, workers))
            except SimnetError as error:
                raise SimnetError(error.message, path=f"--{error.path}") from None
            yield client.get_executor()
    elif workers > 1:
        from simnet.sweep import _ignore_sigint

        pool = ProcessPoolExecutor(max_workers=workers, initializer=_ignore_sigint)
        try:
            yield pool
        except BrokenProcessPool:
            _terminate(pool)
            raise SimnetError(f"a worker process died (out of memory? each of the {workers} holds one "
                              "simulation)", path="--workers") from None
        except BaseException:
            _terminate(pool)
            raise
        pool.shutdown()
    else:
        yield None


def _writable(path: Path, option: str) -> None:
    """Create the directory `path` goes in (as `run -o` does) and check that the file can be written there (before
    any work that would be lost), or say in one line why not. A new file is made and removed, an existing regular
    file opened to append (unchanged); a link, a pipe or a device is left to the writer."""
    for parent in (path.parent, *path.parent.parents):
        if parent.exists() and not parent.is_dir():
            raise SimnetError(f"cannot write {str(path)!r}: {str(parent)!r} is a file, not a directory", path=option)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise SimnetError(f"cannot create the directory of {str(path)!r}: {error.strerror}", path=option) from None
    try:
        if path.is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        if not os.path.lexists(path):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
            path.unlink()
        elif path.is_file() and not path.is_symlink():
            with open(path, "a"):
                pass
    except OSError as error:
        raise SimnetError(f"cannot write {str(path)!r}: {error.strerror}", path=option) from None


@contextlib.contextmanager
def _writing(path: Path, option: str) -> Iterator[None]:
    """Create the directory of the file `path` (see :func:`_writable`) for the writing done inside, and say in
    one line why the file could not be written if it could not."""
    _writable(path, option)
    try:
        yield
    except OSError as error:
        raise SimnetError(f"cannot write {str(path)!r}: {error.strerror or error}", path=option) from None


def _check_emit(path: Path, graph, network: dict) -> None:
    """Refuse ``--emit nccl-tuner`` before tuning where NCCL's model of the topology cannot be derived."""
    from simnet.models.nccl import MODELLED_SYSTEMS, network_tuning
    from simnet.scenario import parse_network

    if network_tuning(parse_network(network).network(graph)) is None:
        raise SimnetError(f"NCCL's model exists for {MODELLED_SYSTEMS}; this topology has none, so there is no NCCL "
                          "schedule to emit", path="--emit")
    _writable(path, "--emit")


def _emit_nccl_tuner(path: Path, tuned, graph, network: dict, *, op: str, quiet: bool) -> None:
    """Write ``nccl_tuner.conf`` from the simulated NCCL winners of `tuned` (see :func:`simnet.tune.nccl_tuner_rows`)."""
    from simnet.models.nccl import tuner_rows_to_csv
    from simnet.scenario import parse_network
    from simnet.outputs import write_atomic
    from simnet.tune import nccl_tuner_rows

    try:
        rows, comments = nccl_tuner_rows(tuned, parse_network(network).network(graph), op=op)
    except SimnetError as error:
        raise SimnetError(error.message, path="--emit") from None
    with _writing(path, "--emit"):
        write_atomic(path, tuner_rows_to_csv(rows, comments))
    if not quiet:
        click.echo(f"wrote {path} ({len(rows)} line(s) for NCCL's example tuner plugin)", err=True)


_RESULT_PLOTS = ("time", "busbw", "speedup")
_TRACE_PLOTS = ("links", "gantt")
_JOB_PLOTS = ("jobs", "slowdown")


@cli.command()
@click.argument("source", type=click.Path(exists=False, path_type=Path))
@click.option("--kind", type=click.Choice([*_RESULT_PLOTS, *_TRACE_PLOTS, *_JOB_PLOTS]), required=True,
              help="jobs and slowdown: the per-job Gantt and slowdown bars of a jobs scenario.")
@click.option("-o", "--out", "output", type=click.Path(dir_okay=False, path_type=Path),
              help="PNG to write (default: <kind>.png next to the results, or in the working directory).")
@click.option("--against", metavar="KEY",
              help="For time/busbw/speedup: the x axis, `size`, `payload.density` or a swept key such as "
                   "topology.hosts (default: size when sizes vary, else the first swept key).")
@click.option("--baseline", help="For --kind speedup: the choice speedups are measured against (default: ring if "
                                  "it ran, else the first listed), as in compare.")
@click.option("--algorithm", help="For links/gantt: which algorithm of the scenario, as results name it "
                                   "(ring, msccl:<name>, 'blueconnect {\"factors\": [8, 4]}' or "
                                   "'blueconnect factors=[8,4]'; default: the first listed).")
@click.option("--size", "size_text", help="For links/gantt: which size (default: the largest).")
@click.option("--density", "density_text", help="For links/gantt of a sparse payload: which density (default: the "
                                                 "first at that size).")
@click.option("--point", "point_text", default="0", show_default=True,
              help="For links/gantt/jobs: which sweep point, by index (counted from 0) or by its label as tables "
                   "and results.csv name it ('topology.hosts=8').")
@click.option("--metric", type=click.Choice(["load", "busy", "held"]),
              help="For links: colour each link by its load, bytes / (capacity x time), highest on the link that "
                   "carried the most for its capacity (the default); by the time it held transfers back below "
                   "their lone rate / time, highest where they competed (held); or by its busy time / time.")
def plot(source: Path, kind: str, output: Path | None, against: str | None, baseline: str | None, algorithm: str | None,
         size_text: str | None, density_text: str | None, point_text: str, metric: str | None) -> None:
    """Draw one plot from a results directory (written by `simnet run --out`) or a scenario.

    links and gantt need per-transfer detail, so they re-run one (algorithm, size)
    of the scenario (a results directory's manifest.json records it); simulated
    times are deterministic, so it is the same run.

    \b
    Examples:
      simnet plot results/quickstart --kind busbw
      simnet plot results/sweep --kind time --against collective.chunks
      simnet plot scenarios/blueconnect_dgx.yaml --kind speedup -o speedup.png
      simnet plot scenarios/blueconnect_dgx.yaml --kind gantt --algorithm ring --size 64MiB
      simnet plot scenarios/sparse_quick.yaml --kind links --algorithm gtopk --density 1/128
      simnet plot results/quickstart --kind links --metric busy
      simnet plot results/quickstart --kind links --metric held
      simnet plot scenarios/jobs_tp_dp.yaml --kind slowdown
    """
    from simnet import analysis, plots
    from simnet.scenario import expand, load_scenario

    if metric is not None and kind != "links":
        raise SimnetError(f"only --kind links is coloured by a metric, not {kind}", path="--metric",
                          source=str(source))
    if kind in _JOB_PLOTS:
        _plot_jobs(source, kind, output, point_text)
        return
    if source.is_dir():
        if _recorded_jobs(source):
            raise SimnetError(_NO_SINGLE_RUN, path="--kind", source=str(source))
        name, points = _recorded(source, required=kind in _TRACE_PLOTS)
        target = output or source / f"{kind}.png"
        _writable(target, "--out")
        results = _read_results(source) if kind in _RESULT_PLOTS else None
    elif source.suffix in (".yaml", ".yml") and source.is_file():
        loaded = load_scenario(source)
        if loaded.jobs is not None:
            raise SimnetError(_NO_SINGLE_RUN, path="--kind", source=str(source))
        name, points = loaded.name, expand(loaded, source=str(source))
        target = output or Path(f"{kind}.png")
        _writable(target, "--out")
        results = _run_scenario(source, None)[2] if kind in _RESULT_PLOTS else None
    elif not source.exists():
        raise SimnetError("no such file or directory", source=str(source))
    else:
        raise SimnetError("expected a results directory (written by `simnet run --out`) or a scenario .yaml file, "
                          f"got a file ending in {source.suffix!r}" if source.suffix else
                          "expected a results directory (written by `simnet run --out`) or a scenario .yaml file",
                          source=str(source))
    if kind in _TRACE_PLOTS:
        index = _point_number(point_text, [point.label for point in points], source=str(source))
        only = _one_run(points, index, algorithm, size_text, density_text, source=str(source))
        with _writing(target, "--out"):
            if kind == "links":
                plots.link_utilization(only.trace, target, metric=metric or "load")
            else:
                plots.gantt(only.trace, target)
        click.echo(f"wrote {target}", err=True)
        return
    try:
        x = against or plots.default_against(results)
        with _writing(target, "--out"):
            if kind == "speedup":
                plots.speedup_bars(results, target, baseline=baseline or analysis.default_baseline(results),
                                   against=x, title=name)
            else:
                plots.metric_plot(results, target, metric=kind, against=x, curves=_curves(points, results, x),
                                  title=name)
    except SimnetError as error:
        path = {"against": "--against", "baseline": "--baseline"}.get(error.path, error.path)
        raise SimnetError(error.message, path=path, source=str(source)) from None
    click.echo(f"wrote {target}", err=True)


def _point_number(text: str, labels: list[str], *, source: str) -> int:
    """The index of the sweep point `text` names: an index counted from 0, or a point's label as tables and
    results.csv show it (spaces aside).

    Raises
    ------
    SimnetError
        At ``--point``, listing the points by index and label, for a number out of range or a label of no point.
    """
    text = text.strip()
    shown = "; ".join(f"{index} = {label!r}" for index, label in enumerate(labels[:_POINTS_LISTED]) if label)
    more = f"; ... ({len(labels) - _POINTS_LISTED} more)" if len(labels) > _POINTS_LISTED else ""
    listing = f" (points: {shown}{more})" if shown else ""
    if text.lstrip("-").isdigit():
        index = int(text)
        if not 0 <= index < len(labels):
            raise SimnetError(f"no point {index}; the sweep has {len(labels)}{listing}", path="--point",
                              source=source)
        return index
    squashed = "".join(text.split())
    found = [index for index, label in enumerate(labels) if "".join(label.split()) == squashed]
    if not found:
        raise SimnetError(f"no point {text!r}; give an index from 0 to {len(labels) - 1} or a label{listing}",
                          path="--point", source=source)
    return found[0]


_POINTS_LISTED = 20
"""Most points a --point error lists."""


def _read_results(directory: Path):
    """results.csv of a results directory, as the run returned it (:func:`simnet.analysis.read_results`)."""
    from simnet.analysis import read_results

    csv = directory / "results.csv"
    if not csv.is_file():
        raise SimnetError(f"no results.csv in this directory; `simnet run SCENARIO --out {directory}` writes it",
                          source=str(directory))
    return read_results(csv)


_NO_SINGLE_RUN = "a jobs scenario has no single run to draw; use --kind jobs or --kind slowdown"


def _recorded_jobs(directory: Path) -> bool:
    """Whether a results directory's manifest.json records a ``jobs:`` scenario (False without a readable one)."""
    try:
        recorded = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
        return any("jobs" in (point.get("scenario") or {}) for point in recorded["points"])
    except (OSError, json.JSONDecodeError, KeyError, TypeError):
        return False


def _recorded(directory: Path, *, required: bool):
    """The scenario name and sweep points a results directory's manifest.json records (points None if absent)."""
    from simnet.errors import ScenarioError
    from simnet.scenario import NetworkCache, Point, parse_scenario

    manifest = directory / "manifest.json"
    if not manifest.is_file():
        if required:
            raise SimnetError("no manifest.json in this directory: links and gantt re-run one case of the scenario "
                              f"it records (`simnet run SCENARIO --out {directory}` writes it)", source=str(directory))
        return directory.name, None
    try:
        recorded = json.loads(manifest.read_text(encoding="utf-8"))
        cache = NetworkCache()
        base = recorded.get("base_dir")
        points = [Point(p["index"], p["label"], p["digest"], None, error=ScenarioError(p["error"]))
                  if "error" in p else
                  Point(p["index"], p["label"], p["digest"], parse_scenario(p["scenario"], networks=cache,
                                                                           base_dir=base))
                  for p in recorded["points"]]
    except (json.JSONDecodeError, KeyError, TypeError) as error:
        raise SimnetError(f"unreadable manifest.json ({type(error).__name__}: {error})", source=str(directory)) \
            from None
    except SimnetError as error:
        raise error.at(source=str(manifest)) from None
    return recorded.get("name", directory.name), points


def _one_run(points, index: int, algorithm: str | None, size_text: str | None, density_text: str | None, *,
             source: str):
    """Simulate the one (algorithm, size, density) of sweep point `index` (in range: :func:`_point_number`) that
    --algorithm/--size/--density name."""
    from simnet.scenario import Point, algorithm_index, runs
    from simnet.units import format_size, parse_fraction, parse_size

    point = _valid(points[index], source)
    chosen = point.scenario
    if chosen.jobs is not None:
        raise SimnetError(_NO_SINGLE_RUN, path="--kind", source=source)
    try:
        listed = algorithm_index(chosen, algorithm) if algorithm else 0
    except SimnetError as error:
        raise SimnetError(error.message, path="--algorithm" if error.path == "algorithm" else error.path,
                          source=source) from None
    payloads = chosen.sparse_payloads()
    sizes = sorted({p.size_bytes for p in payloads} if payloads else set(chosen.sizes))
    size = max(sizes)
    if size_text:
        try:
            size = parse_size(size_text)
        except SimnetError as error:
            raise error.at(path="--size", source=source) from None
        if size not in sizes:
            raise SimnetError(f"size {size_text!r} is not in the scenario's sizes "
                              f"({', '.join(format_size(s) for s in sizes)})", path="--size", source=source)
    update: dict = {"collective": chosen.collective.model_copy(update={
        "algorithms": [chosen.collective.algorithms[listed]]})}
    if payloads:
        densities = [p.density for p in payloads if p.size_bytes == size]
        density = densities[0]
        if density_text:
            try:
                density = parse_fraction(density_text)
            except SimnetError as error:
                raise error.at(path="--density", source=source) from None
            if not any(abs(density - d) <= 1e-12 * d for d in densities):
                raise SimnetError(f"density {density_text!r} is not among the payload's densities at "
                                  f"{format_size(size)} ({', '.join(f'{d:g}' for d in densities)})",
                                  path="--density", source=source)
        dimension = next(p.dimension for p in payloads if p.size_bytes == size)
        update["payload"] = chosen.payload.model_copy(update={"dimension": [dimension], "density": [density]})
    else:
        if density_text:
            raise SimnetError("the scenario has no sparse payload", path="--density", source=source)
        update["sizes"] = [size]
    (only,) = runs(Point(0, point.label, point.digest, chosen.model_copy(update=update)))
    return only


def _plot_jobs(source: Path, kind: str, output: Path | None, point_text: str) -> None:
    """The per-job Gantt (of sweep point `point`) or the slowdown bars (of every point), from a results directory
    or by running a jobs scenario."""
    import pandas as pd

    from simnet import plots
    from simnet.outputs import owner_of
    from simnet.scenario import expand, load_scenario, run_jobs_point

    if kind != "jobs" and point_text.strip() != "0":
        raise SimnetError(f"{kind} draws every sweep point; --point picks one for jobs, links and gantt",
                          path="--point", source=str(source))
    if source.is_dir():
        needed = source / ("timeline.csv" if kind == "jobs" else "results.csv")
        if not needed.is_file() or not (source / "timeline.csv").is_file():
            raise SimnetError("no results of a jobs scenario here; run `simnet run SCENARIO --out DIR` first",
                              source=str(source))
        table = pd.read_csv(needed, keep_default_na=False)
        title, target = (owner_of(source) or {}).get("name", source.name), output or source / f"{kind}.png"
        labels = list(dict.fromkeys(table["point"].astype(str))) if "point" in table else [""]
        point = _point_number(point_text, labels, source=str(source)) if kind == "jobs" else 0
    elif source.suffix in (".yaml", ".yml"):
        loaded = load_scenario(source)
        points = expand(loaded, source=str(source))
        if loaded.jobs is None:
            raise SimnetError("this scenario has no jobs; --kind jobs and slowdown draw jobs scenarios", path="--kind",
                              source=str(source))
        title, target = loaded.name, output or Path(f"{kind}.png")
        if kind == "jobs":
            point = _point_number(point_text, [one.label for one in points], source=str(source))
            if len(points) > 1:
                title += f"\n{points[point].label} (sweep point {point} of {len(points)}, counted from 0)"
            points, point = [points[point]], 0
        results = [run_jobs_point(_valid(one, str(source))) for one in points]
        table = pd.concat([r.timeline if kind == "jobs" else r.jobs for r in results], ignore_index=True)
    else:
        raise SimnetError("expected a results directory (from `simnet run --out`) or a scenario .yaml",
                          source=str(source))
    with _writing(target, "--out"):
        if kind == "jobs":
            try:
                plots.jobs_gantt(table, target, title=title, point=point)
            except SimnetError as error:
                if error.path != "point":
                    raise
                raise SimnetError(error.message, path="--point", source=str(source)) from None
        else:
            plots.slowdown_bars(table, target, title=title)
    click.echo(f"wrote {target}", err=True)


@cli.group()
def topo() -> None:
    """Inspect topologies: a topology file, or a preset name such as dgx1 or abci_rack.

    \b
    Examples:
      simnet topo list
      simnet topo show dgx1
      simnet topo draw fat_tree_k4 -o fat_tree.png
    """


@topo.command("list")
@_format_option()
def list_presets(fmt: str) -> None:
    """List the preset topologies: GPUs, hosts and what each models (CSV and JSON add the sources).

    \b
    Examples:
      simnet topo list
      simnet topo list --format csv
    """
    from simnet import yamlio
    from simnet.topology import PRESETS, gpus, load

    entries = []
    for path in sorted(PRESETS.glob("*.yaml")):
        spec = yamlio.safe_load(path.read_text(encoding="utf-8"))
        graph = load(path)
        ranks = gpus(graph)
        entries.append({
            "name": path.stem,
            "gpus": len(ranks),
            "hosts": len({graph.nodes[node].get("host") for node in ranks} - {None}),
            "builder": spec["builder"],
            "description": spec.get("description", ""),
            "sources": spec.get("sources", []),
        })
    if fmt == "json":
        click.echo(json.dumps(entries, indent=2))
        return
    if fmt == "csv":
        click.echo(_csv([{**item, "sources": " | ".join(item["sources"])} for item in entries]), nl=False)
        return
    for item in entries:
        hosts = f" on {item['hosts']} host{'s' if item['hosts'] != 1 else ''}" if item["hosts"] else ""
        click.echo(f"{item['name']}: {item['gpus']} GPUs{hosts} ({item['builder']})")
        if item["description"]:
            click.echo(f"    {item['description']}")


_SCENARIO_POINT = click.option("--point", "point_text", default="0", show_default=True,
                                help="For a scenario file: which sweep point's topology, by index (counted from 0) "
                                     "or by its label ('topology.hosts=8').")


@topo.command()
@click.argument("topology")
@_format_option()
@_SCENARIO_POINT
def show(topology: str, fmt: str, point_text: str) -> None:
    """Counts per node kind and tier, bisection bandwidth and diameter, of a topology file, a preset, or a
    scenario's topology (its overrides applied).

    \b
    Example:
      simnet topo show dgx_a100_superpod_slice
      simnet topo show fat_tree_k4 --format json
      simnet topo show scenarios/quickstart.yaml
    """
    from simnet.topology import describe, format_description

    graph = _topology_graph(topology, point_text)
    try:
        info = describe(graph)
    except SimnetError as error:
        raise error.at(source=error.source or topology) from None
    if fmt == "json":
        click.echo(json.dumps(info, indent=2))
    elif fmt == "csv":
        click.echo(_csv(_flat(info)), nl=False)
    else:
        click.echo(format_description(info))


@topo.command()
@click.argument("topology")
@click.option("-o", "--out", "out_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="PNG file to write.")
@_SCENARIO_POINT
def draw(topology: str, out_path: Path, point_text: str) -> None:
    """Draw a topology: in layers node by node when small; servers as boxes, large switch levels as
    groups and cables summed when large; a torus as grids of routers.

    \b
    Examples:
      simnet topo draw dgx1 -o dgx1.png
      simnet topo draw abci_rack -o abci_rack.png
    """
    from simnet import plots

    graph = _topology_graph(topology, point_text)
    with _writing(out_path, "--out"):
        plots.draw_topology(graph, out_path)
    click.echo(f"wrote {out_path}", err=True)


@cli.group()
def export() -> None:
    """Write a scenario's schedule in another tool's format.

    \b
    Example:
      simnet export msccl scenarios/blueconnect_dgx.yaml --algorithm blueconnect --out blueconnect.xml
    """


@export.command("msccl")
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--algorithm", required=True,
              help="An algorithm the scenario lists, as results name it (ring, msccl:<name>, "
                   "'blueconnect factors=[8,4]').")
@click.option("--size", "size_text", help="Size to build the schedule for (default: the scenario's first size).")
@click.option("-o", "--out", "out_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="MSCCL XML file to write.")
@click.option("--proto", type=click.Choice(["Simple", "LL", "LL128"]),
              help="proto attribute of the file (default: the schedule's NCCL protocol, else Simple).")
@click.option("--name", help="name attribute of the file (default: the algorithm's name).")
@click.option("--point", "point_text", default="0", show_default=True,
              help="Which sweep point, by index (counted from 0) or by its label ('topology.hosts=8').")
@click.option("--serialize", is_flag=True,
              help="Fit the runtime's limits by running transfers that may overlap one after the other.")
def export_msccl(scenario: Path, algorithm: str, size_text: str | None, out_path: Path, proto: str,
                 name: str | None, point_text: str, serialize: bool) -> None:
    """Write the schedule of one of a scenario's algorithms as an MSCCL XML algorithm file.

    The file runs on the MSCCL executor for NCCL and on microsoft/msccl (RCCL does not
    run the fused rrc step); importing it back simulates to the schedule's time.

    \b
    Examples:
      simnet export msccl scenarios/blueconnect_dgx.yaml --algorithm blueconnect --out bc.xml
      simnet export msccl scenarios/quickstart.yaml --algorithm ring --size 64MiB --proto LL128 --out ring.xml
    """
    from simnet.interchange import msccl
    from simnet.scenario import build_schedule, expand, load_scenario
    from simnet.units import parse_size

    points = expand(load_scenario(scenario), source=str(scenario))
    point = _valid(points[_point_number(point_text, [one.label for one in points], source=str(scenario))],
                   str(scenario))
    try:
        size = parse_size(size_text) if size_text else point.scenario.sizes[0]
    except SimnetError as error:
        raise error.at(path="--size") from None
    try:
        schedule = build_schedule(point, algorithm, size)
    except SimnetError as error:
        path = "--algorithm" if error.path == "algorithm" else error.path
        raise SimnetError(error.message, path=path, source=str(scenario)) from None
    algorithm = schedule.algorithm if algorithm == "msccl" else algorithm.strip()
    try:
        text = msccl.dumps(schedule, name=name or schedule.algorithm.removeprefix("msccl:"), proto=proto,
                           exact=not serialize)
    except SimnetError as error:
        raise SimnetError(error.message, path=f"--{error.path}" if error.path in ("name", "proto") else "--algorithm",
                          source=str(scenario)) from None
    with _writing(out_path, "--out"):
        out_path.write_text(text, encoding="utf-8", newline="\n")
    click.echo(f"wrote {out_path}: {algorithm} on {schedule.nranks} ranks, {len(schedule)} transfers, "
               f"{text.count('<tb ')} thread blocks, {text.count('<step ')} steps", err=True)


@cli.group()
def verify() -> None:
    """Check a schedule file from another tool and say what simnet makes of it.

    \b
    Example:
      simnet verify msccl allreduce_ring.xml
    """


@verify.command("msccl")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--inplace/--outofplace", default=None, help="Buffer mode to check (default: in-place if declared).")
@click.option("--root", type=int, default=0, show_default=True, help="Root rank of a broadcast or reduce.")
def verify_msccl(file: Path, inplace: bool | None, root: int) -> None:
    """Verify an MSCCL XML algorithm file: the runtime's parser rules and limits, send/receive matching,
    deadlock, races, buffer bounds and the collective's result, then simnet's check().

    A defect is one line naming the file, GPU, thread block and step (exit status 2).

    \b
    Examples:
      simnet verify msccl allreduce_ring.xml
      simnet verify msccl allgather.xml --outofplace
    """
    from simnet.interchange import msccl
    from simnet.units import format_size_bound

    program = msccl.read(file)
    schedule = program.schedule(program.nchunksperloop, inplace=inplace, root=root)
    mode = "in-place" if schedule.params["inplace"] else "out-of-place"
    upper = format_size_bound(program.max_bytes) if program.max_bytes else "no limit"
    click.echo(f"{file}: {program.name}, {program.collective} on {program.ngpus} GPUs ({mode}, {program.proto}, "
               f"{program.nchannels} channel{'s' if program.nchannels != 1 else ''}, {program.nchunksperloop} chunks, "
               f"sizes {format_size_bound(program.min_bytes)}"
               f" .. {upper}): {program.threadblocks} thread blocks, {program.steps} steps -> {len(schedule)} "
               f"transfers; passes check()")


@cli.command()
@_format_option()
def algorithms(fmt: str) -> None:
    """List the algorithms, their parameters and their α-β cost formula.

    \b
    Example:
      simnet algorithms
    """
    from simnet.algorithms import ALGORITHMS

    entries = [
        {
            "name": name,
            "collectives": list(record.ops),
            "description": record.description,
            "parameters": {p.name: {"type": p.type, "default": p.default, "decided_by": p.decided_by or None}
                           for p in record.parameters},
            "formula": record.formula if record.model is not None else f"no closed form: {record.no_model}",
            "citation": record.citation,
        }
        for name, record in ALGORITHMS.items()
    ]
    if fmt == "json":
        click.echo(json.dumps(entries, indent=2))
        return
    if fmt == "csv":
        click.echo(_csv([{**item, "collectives": " ".join(item["collectives"]),
                          "parameters": json.dumps(item["parameters"])} for item in entries]), nl=False)
        return
    for item in entries:
        shown = ", ".join(f"{k}: {v['type']} = {v.get('decided_by') or repr(v['default'])}"
                          for k, v in item["parameters"].items())
        click.echo(f"{item['name']} ({', '.join(item['collectives'])}): {item['description']}")
        click.echo(f"    parameters: {shown or 'none'}")
        click.echo(f"    time: {item['formula']}")


def _command_path(args: list[str]) -> str:
    """``simnet`` and the commands and subcommands `args` name before anything else."""
    command, path = cli, ["simnet"]
    for arg in args:
        if arg.startswith("-"):
            continue
        if not isinstance(command, click.Group) or arg not in command.commands:
            break
        command = command.commands[arg]
        path.append(arg)
    return " ".join(path)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``simnet`` console script; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    if debug:
        rest = [arg for arg in args if arg != "--debug"]
        args = ["--debug", *rest] if rest else []
    try:
        cli.main(args=args, prog_name="simnet", standalone_mode=False)
    except SweepInterrupted as error:
        click.echo(f"interrupted: {error}", err=True)
        return 130
    except SimnetError as error:
        if debug:
            raise
        click.echo(f"error: {error}", err=True)
        return 2
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 130
    except click.exceptions.NoArgsIsHelpError as error:
        error.show()
        return 2
    except click.ClickException as error:
        context = getattr(error, "ctx", None)
        hint = ""
        if isinstance(error, click.UsageError):
            hint = f" (see '{context.command_path if context else _command_path(args)} --help')"
        click.echo(f"error: {' '.join(error.format_message().split())}{hint}", err=True)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
