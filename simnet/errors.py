"""The one error type simnet raises for bad input, and its key-path context.

Every mistake a user can make in a scenario, a topology file, a unit string or an
argument of the Python API surfaces as a :class:`SimnetError` (or a subclass).
The command line turns it into a single line ``error: <file>: <key path>: <message>``
and exit code 2; the Python API lets it propagate.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["SimnetError", "UnitError", "TopologyError", "ScheduleError", "ScenarioError", "SweepInterrupted",
           "SweepFailed", "UnknownName", "did_you_mean", "expect_instance"]


class SimnetError(ValueError):
    """Bad input, with an optional key path and source file.

    Parameters
    ----------
    message : str
        What was expected and what was found.
    path : str, optional
        Dotted key path of the offending value, e.g. ``"topology.hosts"``.
    source : str, optional
        File the value came from.
    """

    def __init__(self, message: str, *, path: str = "", source: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.source = source

    def at(self, path: str = "", source: str = "") -> "SimnetError":
        """Return a copy whose key path is prefixed by `path` and whose source is `source`."""
        joined = ".".join(p for p in (path, self.path) if p)
        clone = type(self)(self.message, path=joined, source=source or self.source)
        return clone

    def __str__(self) -> str:
        parts = [p if p.isprintable() else repr(p) for p in (self.source, self.path) if p]
        return ": ".join([*parts, self.message])


class UnitError(SimnetError):
    """A quantity with a missing, unknown or wrong unit."""


class TopologyError(SimnetError):
    """A graph that breaks the topology contract, naming the node or edge."""


class ScheduleError(SimnetError):
    """A schedule that is malformed or does not compute its collective."""


class ScenarioError(SimnetError):
    """A scenario file that does not validate."""


class SweepInterrupted(SimnetError):
    """A sweep stopped by the user before every point finished; finished points are kept."""


class SweepFailed(SimnetError):
    """Runs of a sweep the input made fail (the error of the first), after the others ran.

    Parameters
    ----------
    message, path, source
        As :class:`SimnetError`.
    results : pandas.DataFrame, optional
        The result rows of what ran.
    failures : pandas.DataFrame, optional
        What failed, one row per algorithm and error of a point, or per point that failed as a whole
        (:data:`simnet.analysis.FAILURE_COLUMNS`).
    summary : str, optional
        How many failed and what ran, without the first error (the end of `message`).
    """

    def __init__(self, message: str, *, path: str = "", source: str = "", results=None, failures=None,
                 summary: str = "") -> None:
        super().__init__(message, path=path, source=source)
        self.results = results
        self.failures = failures
        self.summary = summary

    def at(self, path: str = "", source: str = "") -> "SweepFailed":
        """As :meth:`SimnetError.at`, keeping :attr:`results`, :attr:`failures` and :attr:`summary`."""
        clone = super().at(path, source)
        clone.results, clone.failures, clone.summary = self.results, self.failures, self.summary
        return clone


class UnknownName(SimnetError, KeyError):
    """A name looked up in a registry (of algorithms, say) that holds no such entry; also a :class:`KeyError`."""


def expect_instance(value: object, kind: type, path: str, *, error: type[SimnetError] = SimnetError) -> None:
    """Raise `error` at `path` unless `value` is a `kind`, naming what was given instead.

    A topology graph given where a ``Network`` is expected is told how to make one.
    """
    if isinstance(value, kind):
        return
    given = type(value).__name__
    hint = "; make one of a topology graph with simnet.Network(graph)" if kind.__name__ == "Network" and \
        given.endswith("Graph") else ""
    raise error(f"expected a simnet.{kind.__name__}, got a {given}{hint}", path=path)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'ring'?"`` for the choice closest to `word`, or ``""`` when none is close."""
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""
