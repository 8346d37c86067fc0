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

References
----------
SimGrid platform description: https://simgrid.org/doc/latest/Platform.html
(``<zone routing="Full">``, ``<link sharing_policy=...>``, ``<route symmetrical="NO">``).
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

from simnet.network import Network

__all__ = ["to_simgrid_platform", "write_hostfile"]

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


def write_hostfile(network: Network, path: str | os.PathLike) -> None:
    """Write an SMPI hostfile: the host of each rank, one per line, in rank order."""
    with open(path, "w", encoding="utf-8") as out:
        out.writelines(f"{node}\n" for node in network.ranks)
