"""Output directories: owned by one run at a time, never holding two studies' results.

A command writing into a directory (``simnet run/compare/tune --out DIR``, and
:func:`simnet.sweep.run_sweep` given ``out_dir``) first *claims* it with :func:`claim`:

* **One run at a time.** The claim holds an exclusive lock on ``DIR/.simnet.lock``
  (``fcntl.flock``) for the whole run; the file says who holds it (command,
  scenario, pid, host, start time). A second claim while the first holds it is
  refused with :class:`OutputBusy`, naming the first. The kernel releases the lock
  when its process ends, however it ends (even ``kill -9``), so a lock left by a
  dead process never blocks: the file is simply taken over. A finished claim
  removes the file.
* **One study per directory.** ``DIR/manifest.json`` names the study whose results
  the directory holds (its ``name``: a scenario's name, or ``tune <topology>``).
  A claim for another study is refused unless ``overwrite=True``, which first
  removes the files the previous study wrote (those its manifest lists, or the
  names simnet writes when it lists none) and nothing else. Running the same study
  again, with or without ``resume``, is allowed. Whoever claims a directory writes
  its manifest (:func:`simnet.sweep.write_manifest`) and lists the files it wrote
  there (:func:`record_files`).

Without ``fcntl`` (Windows) the lock is not taken and only the study check applies.
"""

from __future__ import annotations

import json
import os
import re
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from simnet.errors import SimnetError

try:
    import fcntl
except ImportError:
    fcntl = None

__all__ = ["LOCK_FILE", "MANIFEST_FILE", "RESULT_FILES", "COMMAND_OPTIONS", "PYTHON_ARGUMENTS", "OutputBusy",
           "claim", "owner_of", "record_files", "write_atomic"]

LOCK_FILE = ".simnet.lock"
"""Name of the lock file inside a claimed directory."""

MANIFEST_FILE = "manifest.json"
"""Name of the file naming the study a directory holds (and, for a run, its points)."""

RESULT_FILES = (
    "results.csv", "results.json", "results.md", "time_vs_size.png", "busbw_vs_size.png", "speedup.png",
    "tuner.csv", "candidates.csv",
)
"""Files simnet writes into an output directory, removed by an overwrite when the manifest lists none."""

COMMAND_OPTIONS = ("--out", "--overwrite")
"""How the command line names the output directory and the overwrite switch, in :func:`claim`'s messages."""

PYTHON_ARGUMENTS = ("out_dir", "overwrite=True")
"""How the Python API (:func:`simnet.sweep.run_sweep`) names them."""

_POINT_FILE = re.compile(r"\d{5}-[0-9a-f]{16}\.json")


class OutputBusy(SimnetError):
    """An output directory claimed by another run that is still going."""


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file and a rename."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "w", encoding="utf-8", newline="") as stream:
        stream.write(text)
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(temporary, path)


def owner_of(out_dir: Path) -> dict | None:
    """The manifest of `out_dir` (``None`` when it has none or it is not readable JSON)."""
    try:
        manifest = json.loads((out_dir / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def _holder(text: str) -> str:
    try:
        info = json.loads(text)
    except ValueError:
        return "another simnet run (starting)"
    if not isinstance(info, dict):
        return "another simnet run"
    what = f"simnet {info.get('command', 'run')}"
    if info.get("name"):
        what += f" of {info['name']!r}"
    if info.get("source"):
        what += f" ({info['source']})"
    where = f"pid {info.get('pid', '?')}"
    if info.get("host") and info["host"] != socket.gethostname():
        where += f" on {info['host']}"
    return f"{what}, {where}, started {info.get('started', '?')}"


def _lock(path: Path, info: dict, out_option: str) -> int | None:
    """Take the lock at `path` (a new file, or one whose holder has ended) and return its descriptor."""
    if fcntl is None:
        return None
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise SimnetError(f"cannot create the lock file: {error.strerror}", source=str(path)) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.pread(fd, 4096, 0).decode("utf-8", errors="replace")
            os.close(fd)
            raise OutputBusy(f"in use by {_holder(text)}; wait for it or choose another {out_option}",
                             source=str(path.parent)) from None
        except OSError as error:
            os.close(fd)
            raise SimnetError(f"cannot lock {path.name}: {error.strerror}", source=str(path.parent)) from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    payload = json.dumps(info).encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, payload, 0)
    return fd


def _unlock(path: Path, fd: int | None) -> None:
    if fd is None:
        return
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    os.close(fd)


def _remove_results(out_dir: Path, manifest: dict) -> None:
    listed = manifest.get("files")
    names = [name for name in listed if isinstance(name, str)] if isinstance(listed, list) else list(RESULT_FILES)
    for name in [*names, MANIFEST_FILE]:
        target = (out_dir / name).resolve()
        if target.parent == out_dir.resolve() and target.is_file():
            target.unlink()
    points = out_dir / "points"
    if points.is_dir():
        for entry in points.iterdir():
            if _POINT_FILE.fullmatch(entry.name):
                entry.unlink()
        if not any(points.iterdir()):
            points.rmdir()


@contextmanager
def claim(out_dir: Path | None, *, name: str, command: str, source: str = "", overwrite: bool = False,
          options: tuple[str, str] = COMMAND_OPTIONS) -> Iterator[Path | None]:
    """Own `out_dir` for the block: its lock, and its study checked or replaced.

    Parameters
    ----------
    out_dir : pathlib.Path or None
        The output directory (created if missing); None: a run without one, nothing to hold.
    name : str
        The study the results will be of: a scenario's name, or ``"tune <topology>"``.
    command : str
        The command writing them (``"run"``, ``"compare"``, ``"tune"``), for the lock file.
    source : str, optional
        The scenario file or topology, for the lock file and messages.
    overwrite : bool, optional
        Replace another study's results instead of refusing.
    options : tuple of str, optional
        How the caller names `out_dir` and `overwrite` in messages: :data:`COMMAND_OPTIONS`
        (``--out``, ``--overwrite``) or :data:`PYTHON_ARGUMENTS` (``out_dir``, ``overwrite=True``).

    Yields
    ------
    pathlib.Path or None
        `out_dir`.

    Raises
    ------
    OutputBusy
        When another run holds the directory, naming it (command, study, pid, start time).
    SimnetError
        When the directory holds another study's results and `overwrite` is false,
        or the directory or its lock file cannot be made.
    """
    if out_dir is None:
        yield None
        return
    out_option, overwrite_option = options
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise SimnetError(f"cannot create the directory: {error.strerror}", path=out_option,
                          source=str(out_dir)) from None
    info = {"command": command, "name": name, "source": source, "pid": os.getpid(),
            "host": socket.gethostname(), "started": time.strftime("%Y-%m-%d %H:%M:%S %z")}
    lock_path = out_dir / LOCK_FILE
    fd = _lock(lock_path, info, out_option)
    try:
        manifest = owner_of(out_dir)
        previous = manifest.get("name") if manifest is not None else None
        if previous is not None and previous != name:
            if not overwrite:
                raise SimnetError(
                    f"holds the results of {previous!r} ({manifest.get('scenario') or manifest.get('source', '?')}), "
                    f"not {name!r}; pass {overwrite_option} to replace them, or choose another {out_option}",
                    source=str(out_dir))
            _remove_results(out_dir, manifest)
        yield out_dir
    finally:
        _unlock(lock_path, fd)


def record_files(out_dir: Path, names: list[str]) -> None:
    """Add `names` (files written into `out_dir`) to the list its manifest keeps, so that an overwrite removes
    exactly those (see :func:`claim`)."""
    manifest = owner_of(out_dir) or {}
    manifest["files"] = sorted({*manifest.get("files", []), *names})
    write_atomic(out_dir / MANIFEST_FILE, json.dumps(manifest, indent=2) + "\n")
