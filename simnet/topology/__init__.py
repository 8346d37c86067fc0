"""Topologies as NetworkX graphs: the contract, its validator, builders and routing.

See :mod:`simnet.topology.contract` for the attributes every graph carries.
``BUILDERS`` maps the names used in scenario files to builder functions.
"""

from __future__ import annotations

from types import MappingProxyType

from simnet.topology.contract import NODE_KINDS, gpus, validate
from simnet.topology.fabrics import add_cable, ring, switch
from simnet.topology.routing import Router

__all__ = ["NODE_KINDS", "BUILDERS", "validate", "gpus", "add_cable", "switch", "ring", "Router"]

BUILDERS = MappingProxyType({"switch": switch, "ring": ring})
