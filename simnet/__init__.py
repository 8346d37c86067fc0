"""simnet: how long does this collective take on that network, why, and what would make it faster?

A discrete-event network simulator (SimPy) and cost modeller for collective
communication on GPU clusters. The data flow is::

    scenario -> topology graph -> Network -> Schedule -> simulate() -> Trace -> analysis

Examples
--------
>>> import simnet
>>> net = simnet.Network(simnet.topology.switch(8, 12.5e9, 1e-6))
>>> trace = simnet.simulate(net, simnet.algorithms.ring_allreduce(8, 1 << 20))
>>> round(trace.time_s * 1e6, 3)
174.801
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

__all__ = [
    "__version__",
    "algorithms",
    "models",
    "topology",
    "units",
    "Network",
    "Schedule",
    "ScheduleBuilder",
    "Transfer",
    "check",
    "simulate",
    "Simulation",
    "Trace",
    "Scenario",
    "load_scenario",
    "parse_scenario",
    "run",
    "SimnetError",
    "UnitError",
    "TopologyError",
    "ScheduleError",
    "ScenarioError",
]

_SUBMODULES = ("algorithms", "models", "topology", "units")
_WHERE = {
    "Simulation": "simnet.engine",
    "Trace": "simnet.engine",
    "simulate": "simnet.engine",
    "ScenarioError": "simnet.errors",
    "ScheduleError": "simnet.errors",
    "SimnetError": "simnet.errors",
    "TopologyError": "simnet.errors",
    "UnitError": "simnet.errors",
    "Network": "simnet.network",
    "Scenario": "simnet.scenario",
    "load_scenario": "simnet.scenario",
    "parse_scenario": "simnet.scenario",
    "run": "simnet.scenario",
    "Schedule": "simnet.schedule",
    "ScheduleBuilder": "simnet.algorithms.builder",
    "Transfer": "simnet.schedule",
    "check": "simnet.schedule",
}
"""Module of each name exported here: imported on first use (PEP 562), so that
``import simnet.cli`` and ``simnet --help`` load neither numpy, pandas, SimPy,
NetworkX, pydantic nor matplotlib. Every other submodule (``simnet.testing``,
``simnet.sweep``, ``simnet.analysis``, ...) is also an attribute after a bare
``import simnet``, imported on first use."""


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("simnet")
    except PackageNotFoundError:
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value = _version()
    elif name in _SUBMODULES:
        value = importlib.import_module(f"simnet.{name}")
    elif name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name]), name)
    elif not name.startswith("_") and importlib.util.find_spec(f"simnet.{name}") is not None:
        value = importlib.import_module(f"simnet.{name}")
    else:
        raise AttributeError(f"module 'simnet' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
