"""Export a network as a SimGrid platform, so that SimGrid/SMPI can replay it.

:func:`to_simgrid_platform` writes a platform file (SimGrid DTD version 4.1) with

* one ``<host>`` per GPU, named after the GPU node, in rank order;
* one ``<link>`` per simnet link (simnet links are directed and full duplex, so
  each direction of a cable is its own shared link), named ``"u->v"``, or
  ``"u->v#k"`` for cable ``k`` of a bundle of separate cables, with the link's
  effective bandwidth (after the network's tier efficiencies) and latency;
* an explicit, asymmetric ``<route>`` for every ordered pair of GPUs, listing the
  links of simnet's own route (:meth:`simnet.network.Network.route`), inside a
  single zone with ``routing="Full"``, so SimGrid routes exactly as simnet does;
* a route from every host to itself over a private loopback link that costs no
  time at the sizes simnet cares about (1 PB/s, 0 s), since MPI collectives such as
  SMPI's ``lr`` copy data to themselves.

Switches, NICs and other forwarding nodes do not appear: a route is a list of
links. :func:`write_hostfile` writes the matching SMPI hostfile (rank ``i`` runs
on the host of GPU ``i``).

:func:`to_simgrid_cluster` instead writes SimGrid's *own* description of the same
machine, a ``<cluster>`` whose zone builds the links and routes by SimGrid's code:
``FAT_TREE`` for :func:`~simnet.topology.pgft`, ``TORUS`` for a
:func:`~simnet.topology.torus` whose GPUs are the routers, a flat cluster (a private
link per host, a crossbar) for :func:`~simnet.topology.switch`. Comparing simnet with
routing ``"simgrid"`` against it checks simnet's routing and sharing against an
independent implementation rather than against its own routes.
:func:`simgrid_hosts` names the SimGrid host of each rank for its hostfile.

References
----------
SimGrid platform description: https://simgrid.org/doc/latest/Platform.html
(``<zone routing="Full">``, ``<link sharing_policy=...>``, ``<route symmetrical="NO">``,
``<cluster topology="FAT_TREE|TORUS" topo_parameters=...>``); SimGrid 3.32 sources
src/kernel/routing/FatTreeZone.cpp and TorusZone.cpp (host numbering and links).
"""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from collections.abc import Sequence

import numpy as np

from simnet.errors import SimnetError
from simnet.network import Network

__all__ = ["to_simgrid_platform", "to_simgrid_cluster", "simgrid_hosts", "write_hostfile"]

_LOOPBACK_BPS = 1e15
_DOCTYPE = '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">'


def to_simgrid_platform(
    network: Network, path: str | os.PathLike, *, host_speed: str = "1Gf"
) -> None:
    """Write `network` as a SimGrid 4.1 platform file at `path`.

    Parameters
    ----------
    network : Network
        The network to export: its ranks, effective link bandwidths and routes.
    path : str or path-like
        File to write.
    host_speed : str, optional
        Computing speed of every host, SimGrid syntax (default ``"1Gf"``; simnet
        charges no computation, and SMPI should run with
        ``--cfg=smpi/simulate-computation:no``).

    Examples
    --------
    >>> import tempfile, os
    >>> from simnet.topology import switch
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     to_simgrid_platform(Network(switch(2, 12.5e9, 1e-6)), os.path.join(tmp, "p.xml"))
    ...     text = open(os.path.join(tmp, "p.xml")).read()
    >>> '<link id="gpu0-&gt;switch" bandwidth="12500000000.0Bps" latency="1e-06s" />' in text
    True
    """
    platform = ET.Element("platform", version="4.1")
    zone = ET.SubElement(platform, "zone", id="simnet", routing="Full")
    hosts = [str(node) for node in network.ranks]
    for host in hosts:
        ET.SubElement(zone, "host", id=host, speed=host_speed)
    bundled = {(u, v) for u, v, cable in network.links if cable > 0}
    names = [f"{u}->{v}#{cable}" if (u, v) in bundled else f"{u}->{v}" for u, v, cable in network.links]
    for name, bandwidth, latency in zip(names, network.bandwidth_Bps, network.latency_s):
        ET.SubElement(zone, "link", id=name, bandwidth=f"{float(bandwidth)!r}Bps", latency=f"{float(latency)!r}s")
    for host in hosts:
        ET.SubElement(
            zone,
            "link",
            id=f"{host}.loopback",
            bandwidth=f"{_LOOPBACK_BPS!r}Bps",
            latency="0.0s",
            sharing_policy="FATPIPE",
        )
    for src, source in enumerate(hosts):
        for dst, target in enumerate(hosts):
            route = ET.SubElement(zone, "route", src=source, dst=target, symmetrical="NO")
            links = [f"{source}.loopback"] if src == dst else [names[i] for i in network.route(src, dst)]
            for name in links:
                ET.SubElement(route, "link_ctn", id=name)
    ET.indent(platform)
    with open(path, "w", encoding="utf-8") as out:
        out.write("<?xml version='1.0'?>\n")
        out.write(_DOCTYPE + "\n")
        out.write(ET.tostring(platform, encoding="unicode"))
        out.write("\n")


def _cluster(network: Network) -> tuple[dict, dict]:
    """Attributes of SimGrid's ``<cluster>`` for `network`'s graph, and GPU -> SimGrid host index."""
    graph = network.graph
    builder, params = graph.graph.get("builder"), graph.graph.get("params") or {}
    if not np.all(network.efficiency == 1.0):
        raise SimnetError("a SimGrid cluster has one bandwidth for all links; remove network.tier_efficiency")
    gpus = [node for node, kind in graph.nodes(data="kind") if kind == "gpu"]
    attributes: dict = {}
    if builder == "pgft":
        levels = len(params["down"])
        parallel = params.get("parallel") or [1] * levels
        numbers = [params["down"], params["up"], parallel]
        attributes["topology"] = "FAT_TREE"
        attributes["topo_parameters"] = ";".join([str(levels), *(",".join(map(str, n)) for n in numbers)])
        index = {node: graph.nodes[node]["port"] for node in gpus}
    elif builder == "torus" and params.get("gpu_routers"):
        dims = params["dims"]
        attributes["topology"] = "TORUS"
        attributes["topo_parameters"] = ",".join(map(str, dims))
        index = {
            node: sum(c * math.prod(dims[:axis]) for axis, c in enumerate(graph.nodes[node]["coord"]))
            for node in gpus
        }
    elif builder == "switch":
        index = {node: i for i, node in enumerate(gpus)}
    else:
        raise SimnetError(
            f"SimGrid has no cluster zone for a {builder or 'hand-made'} topology; it has FAT_TREE (pgft), "
            "TORUS (torus with gpu_routers) and flat clusters (switch); use to_simgrid_platform"
        )
    return {"bw": f"{float(params['bandwidth_Bps'])!r}Bps", "lat": f"{float(params['latency_s'])!r}s", **attributes}, index


def simgrid_hosts(network: Network) -> tuple[str, ...]:
    """Name of the SimGrid host of each rank on the cluster :func:`to_simgrid_cluster` writes.

    SimGrid numbers a fat-tree's hosts by position (simnet's ``port``) and a torus'
    by coordinates, dimension 0 varying fastest (``c0 + d0 c1 + d0 d1 c2 ...``).
    """
    index = _cluster(network)[1]
    return tuple(f"host{index[node]}" for node in network.ranks)


def to_simgrid_cluster(network: Network, path: str | os.PathLike, *, host_speed: str = "1Gf") -> None:
    """Write SimGrid's own ``<cluster>`` of `network`'s topology as a platform file at `path`.

    Hosts are ``host0 ..``; links run at the topology's ``bandwidth`` and ``latency``,
    split-duplex (one link per direction, as simnet's), with a free loopback per host.

    Parameters
    ----------
    network : Network
        A network on :func:`~simnet.topology.pgft` (``FAT_TREE``), a
        :func:`~simnet.topology.torus` with ``gpu_routers`` (``TORUS``) or
        :func:`~simnet.topology.switch` (flat cluster), without tier efficiencies.
    path : str or path-like
        File to write.
    host_speed : str, optional
        Computing speed of every host, SimGrid syntax (default ``"1Gf"``).

    Raises
    ------
    SimnetError
        For a topology SimGrid has no cluster zone for.

    Examples
    --------
    >>> import tempfile, os
    >>> from simnet.topology import pgft
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     to_simgrid_cluster(Network(pgft([4, 4], [1, 2], 12.5e9, 1e-6, parallel=[1, 2])), os.path.join(tmp, "p.xml"))
    ...     'topo_parameters="2;4,4;1,2;1,2"' in open(os.path.join(tmp, "p.xml")).read()
    True
    """
    attributes, index = _cluster(network)
    platform = ET.Element("platform", version="4.1")
    zone = ET.SubElement(platform, "zone", id="world", routing="Full")
    ET.SubElement(
        zone,
        "cluster",
        id="simnet",
        prefix="host",
        suffix="",
        radical=f"0-{len(index) - 1}",
        speed=host_speed,
        sharing_policy="SPLITDUPLEX",
        loopback_bw=f"{_LOOPBACK_BPS!r}Bps",
        loopback_lat="0s",
        **attributes,
    )
    ET.indent(platform)
    with open(path, "w", encoding="utf-8") as out:
        out.write("<?xml version='1.0'?>\n")
        out.write(_DOCTYPE + "\n")
        out.write(ET.tostring(platform, encoding="unicode"))
        out.write("\n")


def write_hostfile(network: Network, path: str | os.PathLike, *, hosts: Sequence[str] | None = None) -> None:
    """Write an SMPI hostfile: the host of each rank, one per line, in rank order.

    `hosts` names them (default the GPU nodes, the hosts of :func:`to_simgrid_platform`;
    :func:`simgrid_hosts` for :func:`to_simgrid_cluster`).
    """
    names = [str(node) for node in network.ranks] if hosts is None else list(hosts)
    with open(path, "w", encoding="utf-8") as out:
        out.writelines(f"{name}\n" for name in names)
