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

from importlib.metadata import PackageNotFoundError, version

from simnet import algorithms, models, topology, units
from simnet.engine import Simulation, Trace, simulate
from simnet.errors import ScenarioError, ScheduleError, SimnetError, TopologyError, UnitError
from simnet.network import Network
from simnet.scenario import Scenario, load_scenario, parse_scenario, run
from simnet.schedule import Schedule, Transfer, check

try:
    __version__ = version("simnet")
except PackageNotFoundError:
    __version__ = "0+unknown"

__all__ = [
    "__version__",
    "algorithms",
    "models",
    "topology",
    "units",
    "Network",
    "Schedule",
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
