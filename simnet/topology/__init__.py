"""Topologies as NetworkX graphs: the contract, its validator, builders and routing.

See :mod:`simnet.topology.contract` for the attributes every graph carries.
``BUILDERS`` maps the names used in scenario and topology files to builder
functions: fabrics (:mod:`~simnet.topology.fabrics`), server templates
(:mod:`~simnet.topology.nodes`), their composition (:func:`cluster`) and the
templates at NCCL's effective rates (:mod:`~simnet.topology.calibrated`).
"""

from __future__ import annotations

from simnet.topology.calibrated import calibrated_cluster, calibrated_node
from simnet.topology.cluster import cluster
from simnet.topology.contract import (
    NODE_KINDS, ROUTINGS, gpus, reduce_efficiency, reducing_switches, separate_cables, striped, torus_coordinates,
    validate,
)
from simnet.topology.describe import describe, format_description
from simnet.topology.fabrics import (FABRICS, add_cable, fat_tree, leaf_spine, pgft, ring, switch, tiers_by_level,
                                     torus)
from simnet.topology.io import BUILDERS, PRESETS, build, dumps, export_graphml, find, load, loads, resolve, save
from simnet.topology.nodes import (
    NODES, abci_node, dgx1, dgx2, dgx_a100, dgx_b200, dgx_h100, gb200_nvl72, power9_ac922,
)
from simnet.topology.routing import Router

__all__ = [
    "NODE_KINDS",
    "ROUTINGS",
    "BUILDERS",
    "FABRICS",
    "NODES",
    "validate",
    "gpus",
    "striped",
    "separate_cables",
    "reducing_switches",
    "reduce_efficiency",
    "torus_coordinates",
    "add_cable",
    "tiers_by_level",
    "switch",
    "ring",
    "fat_tree",
    "leaf_spine",
    "torus",
    "pgft",
    "dgx1",
    "dgx2",
    "dgx_a100",
    "dgx_h100",
    "dgx_b200",
    "gb200_nvl72",
    "power9_ac922",
    "abci_node",
    "cluster",
    "calibrated_node",
    "calibrated_cluster",
    "Router",
    "PRESETS",
    "find",
    "build",
    "resolve",
    "load",
    "loads",
    "save",
    "dumps",
    "export_graphml",
    "describe",
    "format_description",
]
