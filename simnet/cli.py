"""The ``simnet`` command line: thin wiring of library calls.

Errors in user input print one line ``error: <file>: <key path>: <message>`` on
standard error and exit with status 2; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import click

from simnet import analysis, plots
from simnet.errors import SimnetError
from simnet.scenario import load_scenario, run as run_scenario
from simnet.topology import describe, find, format_description, load

__all__ = ["main"]


def _write_atomic(path: Path, text: str) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


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
              help="Write results.csv, results.json and time_vs_size.png here.")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table",
              show_default=True, help="What to print on standard output.")
def run(scenario: Path, out_dir: Path | None, fmt: str) -> None:
    """Run a scenario: simulate each algorithm and size, beside its α-β model.

    \b
    Example:
      simnet run scenarios/quickstart.yaml --out results/quickstart
      simnet run scenarios/quickstart.yaml --format json
    """
    loaded = load_scenario(scenario)
    try:
        results = run_scenario(loaded)
    except SimnetError as error:
        raise error.at(source=str(scenario)) from None
    as_json = json.dumps(results.to_dict(orient="records"), indent=2) + "\n"
    as_csv = results.to_csv(index=False, lineterminator="\n")
    if fmt == "json":
        click.echo(as_json, nl=False)
    elif fmt == "csv":
        click.echo(as_csv, nl=False)
    else:
        click.echo(f"{loaded.name}: {results['topology'].iloc[0]}, {results['op'].iloc[0]}, "
                   f"{results['network_model'].iloc[0]} links")
        click.echo(analysis.display_table(results).to_string(index=False))
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        _write_atomic(out_dir / "results.csv", as_csv)
        _write_atomic(out_dir / "results.json", as_json)
        plot_path = out_dir / "time_vs_size.png"
        plots.time_vs_size(results, plot_path, title=f"{loaded.name}: {results['topology'].iloc[0]}")
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


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``simnet`` console script; returns the exit status."""
    debug = "--debug" in (sys.argv[1:] if argv is None else argv)
    try:
        cli.main(args=argv, prog_name="simnet", standalone_mode=False)
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
