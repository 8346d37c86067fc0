"""The ``simnet`` command line: thin wiring of library calls.

Errors in user input print one line ``error: <file>: <key path>: <message>`` on
standard error and exit with status 2; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from simnet import __version__, analysis, plots
from simnet.algorithms import ALGORITHMS, Algorithm
from simnet.errors import SimnetError
from simnet.scenario import expand, load_scenario
from simnet.sweep import SweepInterrupted, run_sweep, write_atomic
from simnet.topology import describe, find, format_description, load

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.version_option(package_name="simnet")
@click.pass_context
def cli(context: click.Context, debug: bool) -> None:
    """Simulate and model collective communication on GPU clusters."""
    context.obj = {"debug": debug}


@cli.command()
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write results.csv, results.json, time_vs_size.png and each finished sweep point here.")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table",
              show_default=True, help="What to print on standard output.")
@click.option("--executor", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Run sweep points in local processes or on a dask.distributed cluster.")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Local worker processes.")
@click.option("--scheduler", metavar="ADDRESS", help="Dask scheduler address, e.g. tcp://10.0.0.1:8786.")
@click.option("--resume", is_flag=True, help="Skip sweep points already finished in --out.")
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when a terminal).")
@click.option("--force", is_flag=True, help="Run even if the estimated memory exceeds what this machine has.")
def run(scenario: Path, out_dir: Path | None, fmt: str, executor: str, workers: int, scheduler: str | None,
        resume: bool, progress: bool | None, force: bool) -> None:
    """Run a scenario (or its sweep): simulate each algorithm and size, beside its α-β model.

    \b
    Examples:
      simnet run scenarios/quickstart.yaml --out results/quickstart
      simnet run scenarios/quickstart.yaml --format json
      simnet run sweep.yaml --out results/sweep --workers 2 --resume
      simnet run sweep.yaml --out results/sweep --executor dask --scheduler tcp://head:8786
    """
    if resume and out_dir is None:
        raise click.UsageError("--resume needs --out DIR (where the finished points are)")
    loaded = load_scenario(scenario, force=force)
    points = expand(loaded, source=str(scenario), force=force)
    show_progress = progress if progress is not None else (len(points) > 1 and sys.stderr.isatty())
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        manifest = {"simnet_version": __version__, "scenario": str(scenario), "name": loaded.name,
                    "points": [{"index": p.index, "label": p.label, "digest": p.digest} for p in points]}
        write_atomic(out_dir / "manifest.json", json.dumps(manifest, indent=2) + "\n")
    try:
        results = run_sweep(points, out_dir=out_dir, executor=executor, workers=workers, scheduler=scheduler,
                            resume=resume, progress=show_progress, force=force)
    except SweepInterrupted as error:
        again = f"simnet run {scenario} --out {out_dir} --resume" if out_dir else "rerun with --out DIR"
        raise SweepInterrupted(f"{error.message}; resume with: {again}", source=str(scenario)) from None
    except SimnetError as error:
        raise error.at(source=str(scenario)) from None
    if fmt == "json":
        click.echo(json.dumps(results.to_dict(orient="records"), indent=2))
    elif fmt == "csv":
        click.echo(results.to_csv(index=False, lineterminator="\n"), nl=False)
    else:
        where = f"{len(points)} sweep points" if len(points) > 1 else results["topology"].iloc[0]
        click.echo(f"{loaded.name}: {where}, {results['op'].iloc[0]}, {results['network_model'].iloc[0]} links")
        click.echo(analysis.display_table(results).to_string(index=False))
    if out_dir is not None:
        plot_path = out_dir / "time_vs_size.png"
        title = loaded.name if len(points) > 1 else f"{loaded.name}: {results['topology'].iloc[0]}"
        plots.time_vs_size(results, plot_path, title=title)
        click.echo(f"wrote {out_dir / 'results.csv'}, {out_dir / 'results.json'}, {plot_path}", err=True)


@cli.group()
def topo() -> None:
    """Inspect topologies: a topology file, or a preset name such as dgx1 or abci_rack."""


@topo.command()
@click.argument("topology")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def show(topology: str, fmt: str) -> None:
    """Counts per node kind and tier, bisection bandwidth and diameter.

    \b
    Example:
      simnet topo show dgx_a100_superpod_slice
      simnet topo show topologies/fat_tree_k4.yaml --format json
    """
    info = describe(load(find(topology)))
    click.echo(json.dumps(info, indent=2) if fmt == "json" else format_description(info))


@topo.command()
@click.argument("topology")
@click.option("-o", "--out", "out_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="PNG file to write.")
def draw(topology: str, out_path: Path) -> None:
    """Draw a topology in layers: GPUs, NICs and server switches, fabric switches.

    \b
    Example:
      simnet topo draw dgx1 -o dgx1.png
    """
    plots.draw_topology(load(find(topology)), out_path)
    click.echo(f"wrote {out_path}", err=True)


@cli.command()
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="What to print on standard output.")
def algorithms(fmt: str) -> None:
    """List the algorithms, their parameters and their α-β cost formula.

    \b
    Example:
      simnet algorithms
    """
    entries = [
        {
            "name": name,
            "collective": entry.collective,
            "description": entry.description,
            "parameters": {p.name: {"type": p.type, "default": p.default} for p in entry.parameters},
            "formula": entry.formula,
        }
        for name, entry in ((name, Algorithm(*entry)) for name, entry in ALGORITHMS.items())
    ]
    if fmt == "json":
        click.echo(json.dumps(entries, indent=2))
        return
    for item in entries:
        shown = ", ".join(f"{k}: {v['type']} = {v['default']!r}" for k, v in item["parameters"].items())
        click.echo(f"{item['name']} ({item['collective']}): {item['description']}")
        click.echo(f"    parameters: {shown or 'none'}")
        click.echo(f"    time: {item['formula']}")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``simnet`` console script; returns the exit status."""
    debug = "--debug" in (sys.argv[1:] if argv is None else argv)
    try:
        cli.main(args=argv, prog_name="simnet", standalone_mode=False)
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
    except click.ClickException as error:
        error.show()
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
