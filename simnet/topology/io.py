"""Topology files: load and save YAML, export GraphML.

A topology file is YAML in one of two forms; both may carry ``description`` (str),
``sources`` (list of str: where the figures come from) and ``switch_ports`` (int: the
ports of the switch model its fabric switches are, which ``simnet topo show`` and
``simnet run`` compare with each switch's cables, see
:func:`simnet.topology.describe.over_ports`).

Builder form
    ``builder`` names a function of :data:`simnet.topology.BUILDERS`; every other
    key is one of its parameters, written without the unit suffix and with a unit
    string (see :mod:`simnet.topology.params`)::

        builder: leaf_spine
        leaves: 4
        spines: 2
        hosts_per_leaf: 8
        bandwidth: 100 Gb/s
        latency: 1 us
        oversubscription: 2.0

    For ``cluster``, ``node_params`` and ``fabric_params`` are mappings of the
    template's and the fabric's parameters, written the same way.

Explicit form
    ``nodes`` is a list of mappings with ``name``, ``kind`` and any other node
    attribute of the contract (``port_bandwidth`` with a unit; a switch that
    reduces in flight, NVLS or SHARP, carries ``reduce: true`` and optionally
    ``reduce_efficiency: 0.85``); ``links`` is a list
    of full-duplex cables ``{from, to, bandwidth, latency, tier, cables, striped}``
    where ``bandwidth`` is per direction for all ``cables`` (default 1) together and
    ``striped`` says whether they act as one link (default: inside a server).
    Optional top-level keys: ``name``, ``routing``, ``dims``, ``host_transit``,
    ``pxn``, and ``server``, the server template (a name of
    :data:`simnet.topology.NODES`, such as ``dgx_h100``) whose GPUs the file's GPUs
    are, which NCCL's model needs (:func:`simnet.models.nccl.graphs_from_network`);
    :func:`save` writes it for a graph built from a template and edited since::

        name: two GPUs on a switch
        nodes:
        - {name: gpu0, kind: gpu}
        - {name: gpu1, kind: gpu}
        - {name: sw, kind: switch}
        links:
        - {from: gpu0, to: sw, bandwidth: 25 GB/s, latency: 1 us, tier: fabric}
        - {from: gpu1, to: sw, bandwidth: 25 GB/s, latency: 1 us, tier: fabric}

Files are read with :func:`simnet.yamlio.safe_load` only (``yaml.safe_load`` without base-60 numbers, so
``oversubscription: 2:1`` stays the ratio ``"2:1"``). A malformed file raises one
:class:`~simnet.errors.TopologyError` whose key path (``links[2].bandwidth``) and
message name the offending node or link. :func:`save` writes the builder form when
the graph was built by a builder and the explicit form otherwise, so that
``save(load(f))`` reproduces a file that ``save`` wrote, byte for byte.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

import networkx as nx
import yaml

from simnet import yamlio
from simnet.errors import SimnetError, TopologyError, UnitError, did_you_mean
from simnet.topology.calibrated import calibrated_cluster, calibrated_node
from simnet.topology.cluster import cluster
from simnet.topology.contract import NODE_KINDS, switch_capability_error, validate
from simnet.topology.fabrics import FABRICS, fat_tree, leaf_spine, pgft, ring, switch, tiers_by_level, torus
from simnet.topology.nodes import NODES
from simnet.topology.params import SUFFIXES, _yaml_name, call, quantity, to_python, to_yaml
from simnet.units import parse_bandwidth, parse_time

__all__ = ["BUILDERS", "PRESETS", "find", "build", "split_tiers", "resolve", "load", "loads", "save", "dumps",
           "to_spec", "export_graphml", "server_template"]

PRESETS = Path(__file__).resolve().parent / "presets"
"""Directory of the preset topology files shipped with simnet."""

BUILDERS = MappingProxyType(
    {
        "switch": switch,
        "ring": ring,
        "fat_tree": fat_tree,
        "leaf_spine": leaf_spine,
        "torus": torus,
        "pgft": pgft,
        **NODES,
        "cluster": cluster,
        "calibrated_node": calibrated_node,
        "calibrated_cluster": calibrated_cluster,
    }
)
"""Builder name (as in files and scenarios) -> builder function."""

_META = ("description", "sources", "switch_ports")
_GRAPH_KEYS = ("name", "routing", "dims", "host_transit", "pxn", "server")
_LINK_KEYS = ("from", "to", "bandwidth", "latency", "tier", "cables", "striped")


def _nested(builder: str, params: Mapping, convert) -> dict:
    """Convert ``node_params``/``fabric_params`` of a cluster with `convert`."""
    result = dict(params)
    if builder != "cluster":
        return result
    node, fabric = result.get("node"), result.get("fabric", "switch")
    if "node_params" in result and node in NODES and isinstance(result["node_params"], Mapping):
        result["node_params"] = convert(NODES[node], result["node_params"], "node_params")
    if "fabric_params" in result and fabric in FABRICS and isinstance(result["fabric_params"], Mapping):
        result["fabric_params"] = convert(FABRICS[fabric][0], result["fabric_params"], "fabric_params")
    return result


def _check_meta(spec: Mapping) -> None:
    description = spec.get("description")
    if description is not None and not isinstance(description, str):
        raise TopologyError(f"must be text, got {description!r}", path="description")
    sources = spec.get("sources")
    if sources is not None and (not isinstance(sources, list) or not all(isinstance(s, str) for s in sources)):
        raise TopologyError("must be a list of citations (text)", path="sources")
    ports = spec.get("switch_ports")
    if ports is not None and (isinstance(ports, bool) or not isinstance(ports, int) or ports < 1):
        raise TopologyError(f"must be the whole number of ports of the fabric's switch model, ≥ 1, got {ports!r}",
                            path="switch_ports")


def _meta_value(key: str, value):
    """A copy of the file-level `value` of `key` (one of ``_META``)."""
    return list(value) if key == "sources" else value


def _from_builder(spec: Mapping) -> nx.DiGraph:
    name = spec["builder"]
    if not isinstance(name, str) or name not in BUILDERS:
        raise TopologyError(f"unknown builder {name!r}; expected one of {sorted(BUILDERS)}", path="builder")
    builder = BUILDERS[name]
    given = {key: value for key, value in spec.items() if key not in ("builder", *_META)}
    params = to_python(builder, given)
    params = _nested(name, params, to_python)
    return call(builder, params, written="yaml")


def _link_where(index: int, link: Mapping) -> str:
    return f"link {link.get('from')!r} <-> {link.get('to')!r}"


def _quantity_of(link: Mapping, key: str, parse, index: int, where: str) -> float:
    path = f"links[{index}].{key}"
    if key not in link:
        example = "25 GB/s" if key == "bandwidth" else "1 us"
        raise TopologyError(f"{where}: missing {key} (such as '{example}')", path=path)
    try:
        value = parse(link[key])
    except UnitError as error:
        raise TopologyError(f"{where}: {error.message}", path=path) from None
    if key == "bandwidth" and value <= 0:
        raise TopologyError(f"{where}: bandwidth must be > 0, got {link[key]!r}", path=path)
    if key == "latency" and value < 0:
        raise TopologyError(f"{where}: latency must be ≥ 0, got {link[key]!r}", path=path)
    return value


def _from_explicit(spec: Mapping) -> nx.DiGraph:
    unknown = sorted(set(spec) - {"nodes", "links", *_META, *_GRAPH_KEYS}, key=str)
    if unknown:
        raise TopologyError(
            f"unknown key {unknown[0]!r}; expected builder or nodes/links and {sorted((*_META, *_GRAPH_KEYS))}",
            path=str(unknown[0]),
        )
    nodes, links = spec.get("nodes"), spec.get("links")
    if not isinstance(nodes, list):
        raise TopologyError(f"must be a list of nodes such as {{name: gpu0, kind: gpu}}, got {nodes!r}", path="nodes")
    if not isinstance(links, list):
        raise TopologyError(f"must be a list of links such as {{from: gpu0, to: sw, ...}}, got {links!r}", path="links")
    if "server" in spec and (not isinstance(spec["server"], str) or spec["server"] not in NODES):
        raise TopologyError(f"unknown server template {spec['server']!r}; expected one of {sorted(NODES)}",
                            path="server")
    graph = nx.DiGraph(**{key: spec[key] for key in _GRAPH_KEYS if key in spec})
    first_seen: dict = {}
    for index, entry in enumerate(nodes):
        path = f"nodes[{index}]"
        if not isinstance(entry, Mapping) or "name" not in entry:
            raise TopologyError(f"must be a mapping with a name and a kind, got {entry!r}", path=path)
        name = entry["name"]
        if not isinstance(name, (str, int)) or isinstance(name, bool):
            raise TopologyError(f"node name must be text or an integer, got {name!r}", path=f"{path}.name")
        if name in first_seen:
            raise TopologyError(
                f"duplicate node {name!r} (first declared at nodes[{first_seen[name]}])", path=f"{path}.name"
            )
        first_seen[name] = index
        attrs = {key: value for key, value in entry.items() if key != "name"}
        if not isinstance(attrs.get("kind"), str) or attrs["kind"] not in NODE_KINDS:
            raise TopologyError(
                f"node {name!r}: kind must be one of {sorted(NODE_KINDS)}, got {attrs.get('kind')!r}", path=f"{path}.kind"
            )
        if "coord" in attrs and isinstance(attrs["coord"], list):
            attrs["coord"] = tuple(attrs["coord"])
        if "port_bandwidth" in attrs:
            try:
                rate = parse_bandwidth(attrs["port_bandwidth"])
            except UnitError as error:
                raise TopologyError(f"node {name!r}: {error.message}", path=f"{path}.port_bandwidth") from None
            attrs = {("port_bandwidth_Bps" if key == "port_bandwidth" else key):
                     (rate if key == "port_bandwidth" else value) for key, value in attrs.items()}
        problem = switch_capability_error(name, attrs)
        if problem is not None:
            raise TopologyError(problem[1], path=f"{path}.{problem[0]}")
        graph.add_node(name, **attrs)
    cables_at: dict = {}
    for index, link in enumerate(links):
        path = f"links[{index}]"
        if not isinstance(link, Mapping):
            raise TopologyError(f"must be a mapping {{from, to, bandwidth, latency, tier}}, got {link!r}", path=path)
        where = _link_where(index, link)
        extra = sorted(set(link) - set(_LINK_KEYS), key=str)
        if extra:
            raise TopologyError(f"{where}: unknown key {extra[0]!r}; expected {list(_LINK_KEYS)}", path=f"{path}.{extra[0]}")
        for end in ("from", "to"):
            if end not in link:
                raise TopologyError(f"{where}: missing {end!r}", path=f"{path}.{end}")
            if not isinstance(link[end], (str, int)) or link[end] not in first_seen:
                raise TopologyError(f"{where}: node {link[end]!r} is not declared under nodes", path=f"{path}.{end}")
        u, v = link["from"], link["to"]
        if u == v:
            raise TopologyError(f"{where}: a link needs two different ends", path=path)
        pair = frozenset((u, v))
        if pair in cables_at:
            raise TopologyError(
                f"{where}: listed twice (first at links[{cables_at[pair]}]); give one entry with cables: n", path=path
            )
        cables_at[pair] = index
        bandwidth = _quantity_of(link, "bandwidth", parse_bandwidth, index, where)
        latency = _quantity_of(link, "latency", parse_time, index, where)
        tier = link.get("tier")
        if not isinstance(tier, str) or not tier:
            raise TopologyError(f"{where}: tier must be a non-empty name such as 'nvlink', got {tier!r}", path=f"{path}.tier")
        cables = link.get("cables", 1)
        if not isinstance(cables, int) or isinstance(cables, bool) or cables < 1:
            raise TopologyError(f"{where}: cables must be an integer ≥ 1, got {cables!r}", path=f"{path}.cables")
        extra = {}
        if "striped" in link:
            if link["striped"] not in (True, False):
                raise TopologyError(f"{where}: striped must be true or false, got {link['striped']!r}",
                                    path=f"{path}.striped")
            extra["striped"] = link["striped"]
        for a, b in ((u, v), (v, u)):
            graph.add_edge(a, b, bandwidth_Bps=bandwidth, latency_s=latency, tier=tier, cables=cables, **extra)
    return validate(graph)


def split_tiers(spec: Mapping) -> tuple[Mapping, bool]:
    """`spec` without its ``tiers`` key, and whether that asked for a tier per fabric level
    (``tiers: per_level``, :func:`simnet.topology.tiers_by_level`).

    Raises
    ------
    TopologyError
        For another value (``path="tiers"``).
    """
    if "tiers" not in spec:
        return spec, False
    if spec["tiers"] != "per_level":
        raise TopologyError(f"must be 'per_level' (a tier per level of the fabric), got {spec['tiers']!r}",
                            path="tiers")
    return {key: value for key, value in spec.items() if key != "tiers"}, True


def build(spec: Mapping, *, base: str | Path | None = None, including: tuple[Path, ...] = ()) -> nx.DiGraph:
    """Build a topology from a mapping in either file form, or ``{file: PATH}``.

    Parameters
    ----------
    spec : mapping
        ``{builder: NAME, ...params}``, ``{nodes: [...], links: [...]}`` or
        ``{file: PATH}`` (a topology file or preset name, see :func:`find`), which
        may override parameters of the file's builder (see :func:`resolve`).
    base : str or Path, optional
        Directory relative file paths start from (default: the working directory).
    including : tuple of Path, optional
        Files being read that led here, outermost first; a file that includes
        itself, directly or not, is an error rather than endless recursion.

    Returns
    -------
    networkx.DiGraph
        The validated topology; ``description`` and ``sources`` become graph
        attributes.

    Raises
    ------
    TopologyError
        Naming the key path and the offending node, link or parameter.
    """
    if not isinstance(spec, Mapping):
        raise TopologyError(f"a topology must be a mapping with 'builder', 'nodes' or 'file', got {spec!r}")
    rest, per_level = split_tiers(spec)
    if per_level:
        return tiers_by_level(build(rest, base=base, including=including))
    if "file" in spec:
        if set(spec) != {"file"}:
            return _overridden(spec, base, including)
        return load(_target(spec["file"], base, including), including=including)
    _check_meta(spec)
    if "builder" in spec:
        graph = _from_builder(spec)
    elif "nodes" in spec or "links" in spec:
        graph = _from_explicit(spec)
    else:
        raise TopologyError("a topology needs 'builder' (with parameters), 'nodes' and 'links', or 'file'")
    for key in _META:
        if key in spec:
            graph.graph[key] = _meta_value(key, spec[key])
    return graph


def _target(name: object, base: str | Path | None, including: tuple[Path, ...]) -> Path:
    target = find(name, base=base).resolve()
    if target in including:
        cycle = " -> ".join(str(p) for p in (*including, target))
        raise TopologyError(f"files include each other in a cycle: {cycle}", path="file")
    return target


def _merge(base: Mapping, override: Mapping) -> dict:
    """`base` with `override` merged in: mappings key by key (recursively), any other value replaced."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _flat(mapping: Mapping, prefix: str = "") -> list[str]:
    items = []
    for key, value in mapping.items():
        if isinstance(value, Mapping) and value:
            items += _flat(value, f"{prefix}{key}.")
        else:
            items.append(f"{prefix}{key}: {value}")
    return items


def _check_overrides(spec: Mapping, overrides: Mapping, name: object) -> None:
    """Refuse an override of a key that the builder of the file `name` (resolved to `spec`) does not take."""
    first = str(next(iter(overrides)))
    if "builder" not in spec:
        raise TopologyError(f"{str(name)!r} lists its nodes and links: only a file of the builder form takes "
                            f"parameters to override, got {first!r}", path=first)
    builder = spec["builder"]
    if not isinstance(builder, str) or builder not in BUILDERS:
        return
    known = inspect.signature(BUILDERS[builder]).parameters
    taken = sorted(_yaml_name(parameter) for parameter in known)
    for key in overrides:
        if key not in known and not any(f"{key}{suffix}" in known for suffix in SUFFIXES):
            raise TopologyError(f"{str(name)!r} is built by {builder!r}, which takes no {str(key)!r}"
                                f"{did_you_mean(str(key), taken)} (it takes: {', '.join(taken)})", path=str(key))


def _read_spec(path: Path) -> Mapping:
    """The mapping a topology file holds; errors name the file as their source."""
    source = str(path)
    spec = _parse(_read_text(path), source)
    if not isinstance(spec, Mapping):
        raise TopologyError(f"a topology must be a mapping with 'builder', 'nodes' or 'file', got {spec!r}",
                            source=source)
    return spec


def resolve(spec: Mapping, *, base: str | Path | None = None, including: tuple[Path, ...] = ()) -> dict:
    """The mapping in builder or explicit form that a topology spec stands for.

    ``{file: PATH}`` stands for the file's own mapping (itself resolved when it names
    a file in turn). Any other key beside ``file`` overrides a parameter of the file's
    builder: the file's mapping and the overrides are merged key by key, mappings
    (``node_params``, ``fabric_params``) recursively, the override winning::

        {file: gb200_nvl72_xdr_2, nodes: 1, node_params: {nic_bandwidth: 800 Gb/s}}

    is the preset with 1 rack and its node parameters plus ``nic_bandwidth`` (a
    ``cluster`` on a rail-optimised leaf-spine keeps every rail on its leaves). The
    ``description`` of the result says what was overridden. Any other mapping is
    returned as it is.

    Raises
    ------
    TopologyError
        For an override of a key the builder does not take (its path, naming the
        keys it takes), overrides of a file of nodes and links, a missing file
        (path ``file``), or a malformed file (with the file as ``source``).
    """
    if not isinstance(spec, Mapping):
        raise TopologyError(f"a topology must be a mapping with 'builder', 'nodes' or 'file', got {spec!r}")
    if "file" not in spec:
        return dict(spec)
    target = _target(spec["file"], base, including)
    try:
        resolved = resolve(_read_spec(target), base=target.parent, including=(*including, target))
    except SimnetError as error:
        raise TopologyError(error.message, path=error.path, source=error.source or str(target)) from None
    overrides = {key: value for key, value in spec.items() if key != "file"}
    if overrides:
        _check_overrides(resolved, overrides, spec["file"])
        resolved = _merge(resolved, overrides)
        shown = f"Overridden: {', '.join(_flat(overrides))}."
        resolved["description"] = f"{resolved['description']} {shown}" if resolved.get("description") else shown
    return resolved


def _overridden(spec: Mapping, base: str | Path | None, including: tuple[Path, ...]) -> nx.DiGraph:
    """The graph of a ``{file: PATH, **overrides}`` spec; an error in an overridden key names its path alone."""
    resolved = resolve(spec, base=base, including=including)
    overridden = {_yaml_name(str(key)) for key in spec if key != "file"}
    try:
        return build(resolved)
    except SimnetError as error:
        head = _yaml_name(error.path.split(".")[0].split("[")[0])
        source = "" if head in overridden else error.source or str(find(spec["file"], base=base))
        raise TopologyError(error.message, path=error.path, source=source) from None


def find(name: str | Path, *, base: str | Path | None = None) -> Path:
    """Path of a topology file given as a path or as the name of a preset.

    Parameters
    ----------
    name : str or Path
        A file (relative paths start at `base`, default the working directory), or
        the stem of a file in :data:`PRESETS` such as ``"dgx1"`` or ``"abci_rack"``.

    Raises
    ------
    TopologyError
        If neither exists (path ``file``), listing the presets.
    """
    if not isinstance(name, (str, Path)) or not str(name):
        raise TopologyError(f"expected a file path or a preset name, got {name!r}", path="file")
    path = Path(name)
    if base is not None and not path.is_absolute():
        path = Path(base) / path
    if path.is_file():
        return path
    preset = PRESETS / f"{name}.yaml"
    if "/" not in str(name) and preset.is_file():
        return preset
    names = sorted(p.stem for p in PRESETS.glob("*.yaml"))
    raise TopologyError(f"no topology file {str(path)!r} and no preset of that name{did_you_mean(str(name), names)} "
                        f"(presets: {', '.join(names)})", path="file")


def _parse(text: str, source: str):
    """The YAML data of a topology file's `text` (not empty)."""
    try:
        spec = yamlio.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(error, "problem", None) or "not valid YAML"
        raise TopologyError(f"{where}{problem}", source=source) from None
    if spec is None:
        raise TopologyError("empty file; expected a mapping with 'builder', 'nodes' or 'file'", source=source)
    return spec


def _read_text(path: str | Path) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise TopologyError(f"not UTF-8 text (byte {error.start})", source=str(path)) from None
    except OSError as error:
        raise TopologyError(f"cannot read topology file: {error.strerror}", source=str(path)) from None


def loads(
    text: str, *, source: str = "", base: str | Path | None = None, including: tuple[Path, ...] = ()
) -> nx.DiGraph:
    """Build a topology from YAML text (see the module docstring for the format).

    `base` is where relative ``file`` includes start; `including` is as in :func:`build`.
    """
    spec = _parse(text, source)
    try:
        return build(spec, base=base, including=including)
    except SimnetError as error:
        raise TopologyError(error.message, path=error.path, source=error.source or source) from None


def load(path: str | Path, *, including: tuple[Path, ...] = ()) -> nx.DiGraph:
    """Read a topology file, or a preset by name (``load("dgx_h100_ndr_32")``, as :func:`find`).

    Relative ``file`` includes in the file start from its directory.

    Raises
    ------
    TopologyError
        With ``source`` set to `path`, for an unreadable or malformed file; with
        path ``file``, listing the presets, when `path` is neither a file nor a preset.
    """
    if isinstance(path, str) and not Path(path).exists():
        path = find(path)
    text = _read_text(path)
    resolved = Path(path).resolve()
    return loads(text, source=str(path), base=resolved.parent, including=(*including, resolved))


def server_template(graph: nx.DiGraph) -> str | None:
    """The server template whose GPUs `graph`'s GPUs are: its ``server`` key, else the template a ``cluster``
    was built from, else the builder's name (``None`` for a graph no builder made)."""
    if "server" in graph.graph:
        return graph.graph["server"]
    builder = graph.graph.get("builder")
    if builder == "cluster":
        return (graph.graph.get("params") or {}).get("node")
    return builder


def _explicit(graph: nx.DiGraph) -> dict:
    spec: dict = {key: graph.graph[key] for key in _GRAPH_KEYS if key in graph.graph}
    server = server_template(graph)
    if "server" not in spec and server in NODES:
        spec["server"] = server
    if "dims" in spec:
        spec["dims"] = list(spec["dims"])
    nodes = []
    for name, data in graph.nodes(data=True):
        entry = {"name": name}
        for key, value in data.items():
            if key == "port_bandwidth_Bps":
                entry["port_bandwidth"] = quantity(key, value)
            elif isinstance(value, tuple):
                entry[key] = list(value)
            else:
                entry[key] = value
        nodes.append(entry)
    links = []
    done = set()
    for u, v, data in graph.edges(data=True):
        if (v, u) in done:
            continue
        done.add((u, v))
        back = graph.edges[v, u]
        if any(back.get(key) != data.get(key) for key in ("bandwidth_Bps", "latency_s", "tier", "cables", "striped")):
            raise TopologyError(
                f"link {u!r} <-> {v!r}: the two directions differ, which the explicit file form cannot express"
            )
        link = {
            "from": u,
            "to": v,
            "bandwidth": quantity("bandwidth_Bps", data["bandwidth_Bps"]),
            "latency": quantity("latency_s", data["latency_s"]),
            "tier": data["tier"],
        }
        if data.get("cables", 1) != 1:
            link["cables"] = data["cables"]
        if "striped" in data:
            link["striped"] = data["striped"]
        links.append(link)
    spec["nodes"] = nodes
    spec["links"] = links
    return spec


def _built_as_recorded(graph: nx.DiGraph, name: str) -> bool:
    """Whether `graph` is still what its builder makes of its recorded parameters (not edited since)."""
    try:
        rebuilt = call(BUILDERS[name], dict(graph.graph["params"]))
    except (SimnetError, TypeError, ValueError):
        return False
    return (list(rebuilt) == list(graph) and dict(rebuilt.nodes(data=True)) == dict(graph.nodes(data=True))
            and rebuilt.adj == graph.adj
            and all(rebuilt.graph.get(key) == graph.graph.get(key) for key in _GRAPH_KEYS if key != "server"))


def to_spec(graph: nx.DiGraph) -> dict:
    """The mapping :func:`dumps` writes: builder form when the graph is what its builder made, else explicit.

    A graph edited after it was built (nodes removed, a link slowed) is written in the
    explicit form, so that loading the file gives the edited graph, and its name says
    ``edited`` before the builder's description.
    """
    spec: dict = {}
    name = graph.graph.get("builder")
    if (name in BUILDERS and isinstance(graph.graph.get("params"), Mapping)
            and _built_as_recorded(graph, name)):
        spec["builder"] = name
    for key in _META:
        if key in graph.graph:
            spec[key] = _meta_value(key, graph.graph[key])
    if "builder" in spec:
        params = to_yaml(BUILDERS[name], graph.graph["params"])
        spec.update(_nested(name, params, lambda builder, given, _path: to_yaml(builder, given, keep_defaults=True)))
    else:
        spec.update(_explicit(graph))
        if name in BUILDERS and "name" in spec and not str(spec["name"]).startswith("edited "):
            spec["name"] = f"edited {spec['name']}"
    return spec


def dumps(graph: nx.DiGraph) -> str:
    """YAML text of `graph` (see :func:`save`)."""
    return yaml.safe_dump(to_spec(graph), sort_keys=False, allow_unicode=True, width=100)


def save(graph: nx.DiGraph, path: str | Path) -> None:
    """Write `graph` as a topology file: builder form if a builder made it as it is, else explicit."""
    Path(path).write_text(dumps(graph), encoding="utf-8")


def export_graphml(graph: nx.DiGraph, path: str | Path) -> None:
    """Write `graph` as GraphML (for Gephi, yEd, igraph).

    Scalar attributes are kept as they are; lists, tuples and mappings (``params``,
    ``sources``, ``coord``, ``dims``) are written as JSON text.
    """

    def plain(attrs: Mapping) -> dict:
        return {
            key: json.dumps(value) if isinstance(value, (list, tuple, dict)) else value
            for key, value in attrs.items()
            if value is not None
        }

    copy = nx.DiGraph(**plain(graph.graph))
    copy.add_nodes_from((str(node), plain(data)) for node, data in graph.nodes(data=True))
    copy.add_edges_from((str(u), str(v), plain(data)) for u, v, data in graph.edges(data=True))
    nx.write_graphml(copy, str(path))
