"""Composition: copies of a server template on a network fabric.

:func:`cluster` is the one composition builder. It takes a server template by name
(:data:`simnet.topology.nodes.NODES`) and a fabric by name
(:data:`simnet.topology.fabrics.FABRICS`), each with its own parameters, so that
the same call is written in a topology file as plain keys.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import networkx as nx

from simnet.errors import TopologyError
from simnet.topology.contract import validate
from simnet.topology.fabrics import FABRICS, _check_int, _label, add_cable
from simnet.topology.nodes import NODES
from simnet.topology.params import call
from simnet.units import format_bandwidth

__all__ = ["cluster"]


def cluster(
    node: str,
    nodes: int,
    *,
    fabric: str = "switch",
    fabric_params: Mapping | None = None,
    node_params: Mapping | None = None,
    rails: bool = True,
    pxn: bool = False,
) -> nx.DiGraph:
    """`nodes` copies of a server template, their NICs cabled to a fabric.

    Server ``h`` gets the template's nodes renamed ``n{h}.<name>`` (``n0.gpu0``,
    ``n0.nic3``, ...) with ``host = h``. Ranks are hierarchy-major: all GPUs of
    server 0 in template order, then server 1, and so on, so rank
    ``h * g + local_rank`` is GPU ``local_rank`` of server ``h`` (``g`` GPUs per
    server). GPUs reach the fabric through the NICs the template gives them (their
    PCIe switch), never through another server: the graph has
    ``host_transit = False``.

    The fabric is built without hosts; its host ports, in the fabric's own host
    order (see each builder), receive the NICs. With ``rails=True`` NIC ``j`` of
    server ``h`` takes port ``j * P + h``: rail ``j`` (the ``j``-th NICs of all
    servers) fills its own block of ``P`` ports. On a leaf-spine whose leaves split
    evenly among the rails (``leaves`` a multiple of ``nics``: a group of
    ``leaves / nics`` leaves per rail; or a divisor of it with ``hosts_per_leaf`` a
    multiple of ``nics / leaves``: several whole rails per leaf), ``P = leaves *
    hosts_per_leaf / nics``, so every rail keeps leaves of its own for any `nodes`
    up to ``P`` (rail-optimised, as in NVIDIA SuperPODs), the spine cabling as the
    fabric has it and unused ports empty; more servers than ``P`` is an error. On
    any other fabric ``P = nodes``: the rails follow one another. With
    ``rails=False`` NIC ``j`` takes port ``h * nics + j``: a server's NICs are
    neighbours, all on one leaf when ``hosts_per_leaf`` is a multiple of ``nics``.
    A NIC gets its port index as
    ``port`` (the destination index of d-mod-k). Its cable to its edge switch runs
    at the lower of the NIC's ``port_bandwidth_Bps`` and the fabric's
    ``bandwidth_Bps``, as an InfiniBand or Ethernet link trains at the fastest rate
    both of its ports support, with the fabric's latency and tier; the graph's name
    prints that rate, and a leaf-spine fabric's name the uplink cables of a leaf
    (count and rate). Unused ports stay empty.

    Parameters
    ----------
    node : str
        Server template, a key of :data:`~simnet.topology.nodes.NODES`
        (``"dgx1"``, ``"dgx_a100"``, ``"abci_node"``, ...).
    nodes : int
        Number of servers, ≥ 1.
    fabric : str, optional
        Fabric family, a key of :data:`~simnet.topology.fabrics.FABRICS`:
        ``"switch"`` (default), ``"leaf_spine"``, ``"fat_tree"``, ``"pgft"`` or ``"torus"``.
    fabric_params : mapping, optional
        Parameters of the fabric builder except what only concerns hosts; its
        ``tier`` defaults to ``"ib"``. For ``"switch"``, ``hosts`` (the port count)
        defaults to the number of NICs.
    node_params : mapping, optional
        Parameters of the server template (default: its published figures).
    rails : bool, optional
        Rail-major port assignment (default True), see above.
    pxn : bool, optional
        Send to another server through the NIC of the destination's rail, reached
        over NVLink (graph attribute ``pxn``; default False).

    Returns
    -------
    networkx.DiGraph
        ``nodes * g`` GPUs; the fabric's switches; graph attributes ``builder``,
        ``params``, ``sources`` (the template's) and, on a torus, ``routing`` and
        ``dims``.

    Raises
    ------
    TopologyError
        For an unknown template or fabric, bad parameters (path
        ``node_params.<key>`` or ``fabric_params.<key>``), a fabric with fewer
        host ports than NICs, or (path ``nodes``) more servers than a rail-optimised
        leaf-spine has ports per rail.

    Examples
    --------
    >>> G = cluster("dgx_a100", 2, fabric_params={"bandwidth_Bps": 25e9, "latency_s": 1e-6})
    >>> G.number_of_nodes() - 1
    46
    """
    if node not in NODES:
        raise TopologyError(f"unknown server template {node!r}; expected one of {sorted(NODES)}", path="node")
    if fabric not in FABRICS:
        raise TopologyError(f"unknown fabric {fabric!r}; expected one of {sorted(FABRICS)}", path="fabric")
    _check_int(nodes, "nodes", 1)
    for key, flag in (("rails", rails), ("pxn", pxn)):
        if not isinstance(flag, bool):
            raise TopologyError(f"must be true or false, got {flag!r}", path=key)
    for key, value in (("fabric_params", fabric_params), ("node_params", node_params)):
        if value is not None and not isinstance(value, Mapping):
            raise TopologyError(f"must be a mapping of parameters, got {value!r}", path=key)
    template = call(NODES[node], dict(node_params or {}), "node_params")
    nics = [name for name, kind in template.nodes(data="kind") if kind == "nic"]
    if not nics:
        raise TopologyError(f"server template {node!r} has no NIC to cable to a fabric", path="node")
    skeleton = FABRICS[fabric][1]
    given = dict(fabric_params or {})
    settings = {"tier": "ib", **given}
    if fabric == "switch":
        settings.setdefault("hosts", nodes * len(nics))
    params = dict(
        node=node,
        nodes=nodes,
        fabric=fabric,
        fabric_params=given or None,
        node_params=dict(node_params) if node_params else None,
        rails=rails,
        pxn=pxn,
    )
    graph = nx.DiGraph(
        builder="cluster",
        params=params,
        sources=list(template.graph.get("sources", [])),
        host_transit=False,
    )
    if pxn:
        graph.graph["pxn"] = True
    for h in range(nodes):
        for name, data in template.nodes(data=True):
            graph.add_node(f"n{h}.{name}", **{**data, "host": h})
        for u, v, data in template.edges(data=True):
            graph.add_edge(f"n{h}.{u}", f"n{h}.{v}", **data)
    ports = call(functools.partial(skeleton, graph), settings, "fabric_params")
    per_rail = _rail_ports(fabric, settings, len(ports), len(nics), nodes) if rails else None
    if len(ports) < nodes * len(nics):
        raise TopologyError(
            f"the {fabric} fabric has {len(ports)} host ports but {nodes} servers x {len(nics)} NICs need "
            f"{nodes * len(nics)}",
            path="fabric_params",
        )
    fabric_Bps = settings["bandwidth_Bps"]
    rates = [min(template.nodes[nic].get("port_bandwidth_Bps", fabric_Bps), fabric_Bps) for nic in nics]
    for h in range(nodes):
        for j, (nic, rate) in enumerate(zip(nics, rates)):
            index = j * per_rail + h if rails else h * len(nics) + j
            graph.nodes[f"n{h}.{nic}"]["port"] = index
            add_cable(graph, f"n{h}.{nic}", ports[index], rate, settings["latency_s"], settings["tier"])
    shown = ", ".join(format_bandwidth(rate) for rate in dict.fromkeys(rates))
    options = f"rails={rails}" + (", pxn=True" if pxn else "")
    graph.graph["name"] = (
        f"cluster({nodes} x {template.graph['name']} on {_label(fabric, **given)}, NIC cables {shown}, {options})"
    )
    return validate(graph)


def _rail_ports(fabric: str, settings: Mapping, ports: int, nics: int, nodes: int) -> int:
    """Host ports of one rail's block: a leaf-spine's share per rail when its leaves split among the rails."""
    if fabric != "leaf_spine" or ports % nics:
        return nodes
    per_rail, per_leaf = ports // nics, settings["hosts_per_leaf"]
    if per_rail % per_leaf and per_leaf % per_rail:
        return nodes
    if nodes > per_rail:
        raise TopologyError(
            f"{nodes} servers do not fit the rail-optimised leaf_spine of {settings['leaves']} leaves x {per_leaf} "
            f"hosts_per_leaf: each of the {nics} rails (NICs per server) has {per_rail} host ports; expected "
            f"nodes ≤ {per_rail}, or more fabric_params.leaves or hosts_per_leaf",
            path="nodes",
        )
    return per_rail
