"""Scenario files: YAML -> validated :class:`Scenario` -> results frame.

A scenario names a topology, a collective with the algorithms to compare, the
payload sizes and the network model::

    name: quickstart
    topology: {builder: switch, hosts: 8, bandwidth: 100 Gbps, latency: 1 us}
    collective: {op: allreduce, algorithms: [ring], chunks: 1}
    sizes: [1 KiB, 1 MiB, 64 MiB]
    network: {model: fifo}

``sizes`` may also be a range, ``1 KiB..1 GiB:x4`` (every fourfold size from 1 KiB to 1 GiB, both
ends included; without ``:xN`` each size doubles), as ``simnet tune --sizes`` takes it, alone or as an
item of the list.

Every file a scenario names (a topology file, a traffic matrix, a sparse payload's files, an MSCCL
file) is relative to the scenario file's directory, or to the working directory for a scenario given
as data (:func:`scenario_path`); a topology name that is no such file is a preset.

Builder and algorithm parameters are checked against the function they go to:
a YAML key ``bandwidth`` feeds the parameter ``bandwidth_Bps`` and is parsed as a
bandwidth, ``latency`` feeds ``latency_s`` as a time, ``size`` feeds ``size_bytes``
as a size; other keys keep their name and the parameter's type. Algorithms whose
registry record derives parameters from the topology's hierarchy (the ``factors``
of ``blueconnect``, ``torus_2d``, ``hierarchical_ring``) get them when the scenario
gives none. Every error is a
:class:`~simnet.errors.ScenarioError` naming the key path, e.g.
``topology.hosts: must be an integer ≥ 2, got 1``. A scenario, and the points of its
sweep, build each distinct network once (:class:`NetworkCache`).

A sparse scenario replaces ``sizes`` by a ``payload`` (see :class:`PayloadSpec`)::

    payload: {kind: sparse, dimension: 32M, density: 1/128, distribution: uniform, seed: 1}

Every combination of its ``dimension`` and ``density`` (each a value, a range such as
``1/1024..1/4:x4`` as ``sizes`` takes one, or a list of them) runs
at the dense size ``dimension * value_bytes``; sparse algorithms receive the
:class:`~simnet.payloads.SparsePayload` as their ``payload`` parameter.

An ``alltoallv`` takes a traffic ``matrix`` (see :func:`parse_matrix`)::

    collective: {op: alltoallv, algorithms: [direct, bruck], matrix: {kind: zipf, exponent: 1.2, seed: 1}}

A scenario may instead run several *jobs* at once on its fabric, each placed on
its own GPUs (see :class:`JobSpec` and :func:`simnet.jobs.run_jobs`)::

    jobs:
      train: {ranks: 32, groups: {tp: 8, dp: rest},
              collective: {op: allreduce, algorithm: ring, size: 64 MiB}, repeat: 2}
      moe: {ranks: 16, placement: {kind: random, seed: 1},
            collective: {op: alltoallv, algorithm: direct, size: 16 MiB, matrix: zipf}}
      noise: {flows: {pattern: permutation, load: 30%, size: 4 MiB}}

Its results are one row per job (:data:`simnet.analysis.JOB_COLUMNS`) with the
links and jobs that slowed it (:func:`run_jobs_point`).
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
import hashlib
import inspect
import itertools
import json
import math
import shlex
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import pandas as pd
import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    PrivateAttr,
    TypeAdapter,
    ValidationError,
)

from simnet import engine, units, yamlio
from simnet.algorithms import ALGORITHMS
from simnet.algorithms.nccl import NCCL_RELEASE, built_release
from simnet.algorithms.registry import Algorithm, resolved_changes
from simnet.analysis import (RESULT_COLUMNS, choice_matches, choice_text, format_fraction, parse_choice, result_row,
                             sent_bytes_per_rank, typed_column)
from simnet.engine import Trace, simulate
from simnet.errors import ScenarioError, SimnetError, UnitError, did_you_mean
from simnet.guards import BYTES_PER_GPU, BYTES_PER_TRANSFER, check_fits, estimate_gpus
from simnet.interchange import msccl
from simnet.jobs import INTERFERENCE_COLUMNS, PLACEMENTS, TIMELINE_COLUMNS, Flows, Job, JobsResult, communicators, \
    place, run_jobs
from simnet.models import NetworkCosts, critical_path_time
from simnet.links import LINK_MODELS, SHARING
from simnet.network import BUNDLES, Network
from simnet.payloads import DISTRIBUTIONS, SparsePayload
from simnet.schedule import COLLECTIVES, Schedule
from simnet.topology import BUILDERS, ROUTINGS, tiers_by_level
from simnet.topology import build as topology_build
from simnet.topology.io import resolve as topology_resolve
from simnet.topology.io import split_tiers
from simnet.topology.params import parse_quantity, written_number
from simnet.traffic import MATRICES, PATTERNS, TrafficMatrix

__all__ = [
    "Scenario",
    "SweepSpec",
    "Point",
    "read_yaml",
    "load_scenario",
    "parse_scenario",
    "parse_network",
    "expand",
    "point_error",
    "valid_points",
    "build_topology",
    "call_with_units",
    "run",
    "Run",
    "runs",
    "run_point",
    "Failure",
    "build_schedule",
    "algorithm_index",
    "repeated_algorithms",
    "run_jobs_point",
    "point_tables",
    "swept_columns",
    "parse_matrix",
    "scenario_path",
    "JobSpec",
    "JobPlan",
    "plan_jobs",
    "NetworkCache",
    "CURVE_COLUMNS",
    "model_curves",
]

_UNIT_SUFFIXES = (
    ("_Bps", "a bandwidth such as '25 GB/s'"),
    ("_bytes", "a size such as '64 MiB'"),
    ("_s", "a time such as '1 us'"),
)

_AS_SIZE = PlainSerializer(lambda v: units.format_exact(v, "size"), when_used="json")
Size = Annotated[int, BeforeValidator(units.parse_payload_size), _AS_SIZE]


def scenario_path(base: str | Path | None, name: str | Path) -> Path:
    """Where a file a scenario names is: a relative `name` starts at `base`, the scenario file's directory
    (the working directory when `base` is ``None``, for a scenario given as data); an absolute one stays.

    The one rule for every path in a scenario: topology files, traffic matrices, sparse payload files and
    MSCCL files. Errors about a missing file name the path this returns.
    """
    path = Path(name)
    return path if base is None or path.is_absolute() else Path(base) / path


def _is_range(item: Any) -> bool:
    """Whether an item of ``sizes`` (or of a payload's ``dimension`` or ``density``) is a range or a
    comma-separated list."""
    return isinstance(item, str) and (".." in item or "," in item)


def _size_list(value: Any) -> list[int]:
    """A scenario's ``sizes`` as a list of sizes in bytes: one size or range stands for a list of it; a range such as
    ``1 KiB..1 GiB:x4`` or a comma-separated list (:func:`simnet.units.parse_size_range`) stands for its
    sizes, in place. An error names the item as written (``sizes[1]``, or ``sizes`` for a lone value); a
    size listed twice is refused where a range is involved (recorded results may hold plain repeats, see
    :func:`_no_repeats`)."""
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        items, where = [value], ""
    elif isinstance(value, list):
        items, where = value, "[{}]"
    else:
        raise ScenarioError(f"expected a size such as '64 MiB', a range such as '1 KiB..1 GiB:x4' or a list of "
                            f"them, got {value!r}")
    first: dict[int, int] = {}
    sizes: list[int] = []
    for index, item in enumerate(items):
        try:
            found = units.parse_size_range(item) if _is_range(item) else [units.parse_payload_size(item)]
        except SimnetError as error:
            raise ScenarioError(error.message, path=where.format(index)) from None
        for size in found:
            if size in first and (_is_range(item) or _is_range(items[first[size]])):
                raise ScenarioError(f"{units.format_size(size)} is listed twice (also sizes[{first[size]}])",
                                    path=where.format(index))
            first.setdefault(size, index)
            sizes.append(size)
    return sizes


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AlgorithmSpec(_Strict):
    """One algorithm to run, with its own parameters (``{name: ring, chunks: 4}``), or an MSCCL file
    (``{msccl: PATH}``, optionally with ``inplace`` and ``root``; its ``name`` is ``"msccl"``)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    name: str


def _algorithm_entry(value: Any) -> Any:
    if isinstance(value, str):
        return {"name": value}
    if isinstance(value, dict) and "msccl" in value and "name" not in value:
        return {"name": "msccl", **value}
    return value


class CollectiveSpec(_Strict):
    """The collective and the algorithms to compare.

    Keys other than ``op`` and ``algorithms`` are parameters shared by every listed
    algorithm that takes them (``chunks: 4``).
    """

    model_config = ConfigDict(extra="allow", frozen=True)
    op: Literal[COLLECTIVES] = "allreduce"  # type: ignore[valid-type]
    algorithms: list[Annotated[AlgorithmSpec, BeforeValidator(_algorithm_entry)]] = Field(min_length=1)


Time = Annotated[float, BeforeValidator(units.parse_time), Field(ge=0),
                 PlainSerializer(lambda v: units.format_exact(v, "time"), when_used="json")]
Bandwidth = Annotated[float, BeforeValidator(units.parse_bandwidth), Field(gt=0),
                      PlainSerializer(lambda v: units.format_exact(v, "bandwidth"), when_used="json")]
Fraction = Annotated[float, BeforeValidator(units.parse_fraction), Field(gt=0, le=1)]


class NetworkSpec(_Strict):
    """How links are shared between concurrent transfers, and what each message costs beyond them.

    ``model`` (``maxmin`` or ``fifo``), ``overhead`` (software overhead per message,
    a time), ``reduce_bandwidth`` (a GPU's reduction throughput: γ = 1 / it),
    ``tier_efficiency`` (``{tier: fraction of line rate}``), ``stragglers``
    (``{rank: slowdown factor}`` of its overhead and γ) and ``start_offset``
    (``{rank: time}`` before which the rank sends nothing); see :func:`simnet.engine.simulate`.
    ``routing`` overrides the topology's routing rule (``dmodk``, ``ecmp_hash``,
    ``shortest``, ``dimension_order``, ``simgrid``), ``hash_seed`` seeds ``ecmp_hash``'s
    hash (0 by default; every seed is one draw of the hash's luck, a sweep over seeds gives their spread;
    refused under another routing) and ``bundles`` (``cables`` or
    ``merged``) says how bundles of parallel cables are modelled (see
    :class:`simnet.network.Network`); ``sharing`` (``equal`` or ``rtt_weighted``, the
    latter ``maxmin`` only) how max-min sharing weighs flows (see :mod:`simnet.links`).
    """

    model: Literal[tuple(LINK_MODELS)] = "maxmin"  # type: ignore[valid-type]
    routing: Literal[ROUTINGS] | None = None  # type: ignore[valid-type]
    hash_seed: int = Field(0, ge=0, lt=2**64)
    bundles: Literal[BUNDLES] = "cables"  # type: ignore[valid-type]
    sharing: Literal[SHARING] = "equal"  # type: ignore[valid-type]
    overhead: Time = 0.0
    reduce_bandwidth: Bandwidth | None = None
    tier_efficiency: dict[str, Fraction] = {}
    stragglers: dict[int, Annotated[float, Field(gt=0)]] = {}
    start_offset: dict[int, Time] = {}

    def network(self, graph) -> Network:
        """The :class:`Network` of `graph` with these tier efficiencies, routing, hash seed and bundles."""
        try:
            network = Network(graph, tier_efficiency=self.tier_efficiency, routing=self.routing,
                              hash_seed=self.hash_seed, bundles=self.bundles)
            if self.routing is not None and network.size > 1:
                network.route(0, network.size - 1)
        except SimnetError as error:
            raise ScenarioError(error.message, path=f"network.{error.path or 'routing'}") from None
        return network

    def simulate_kwargs(self, nranks: int) -> dict[str, Any]:
        """Keyword arguments of :func:`simnet.engine.simulate` for `nranks` ranks."""
        per_rank = {}
        for key, values, default in (("stragglers", self.stragglers, 1.0), ("start_offset", self.start_offset, 0.0)):
            for rank in values:
                if not 0 <= rank < nranks:
                    raise ScenarioError(f"no rank {rank}; ranks are 0 .. {nranks - 1}", path=f"network.{key}[{rank}]")
            per_rank[key] = [values.get(rank, default) for rank in range(nranks)]
        if self.sharing != "equal" and self.model != "maxmin":
            raise ScenarioError(f"{self.sharing!r} sharing needs model maxmin, got {self.model!r}", path="network.sharing")
        return {
            "model": self.model,
            "sharing": self.sharing,
            "overhead_s": self.overhead,
            "gamma_s_per_byte": 0.0 if self.reduce_bandwidth is None else 1.0 / self.reduce_bandwidth,
            "slowdown": per_rank["stragglers"],
            "start_offset_s": per_rank["start_offset"],
        }


_OPTION_PATHS = {
    "model": "network.model",
    "sharing": "network.sharing",
    "overhead_s": "network.overhead",
    "gamma_s_per_byte": "network.reduce_bandwidth",
    "slowdown": "network.stragglers",
    "start_offset_s": "network.start_offset",
}
"""Key path of each :meth:`simnet.engine.Simulation.run` option in a scenario."""


class NetworkCache:
    """The networks of a scenario and of its sweep points: each distinct topology is built once.

    Keyed by the SHA-256 of the topology spec, the directory its relative file paths start from, the
    tier efficiencies, the routing, its hash seed and how bundles are modelled (what :meth:`NetworkSpec.network`
    builds from). A cache
    travels with its scenario (and the scenario's points) but not to other
    processes: a worker of a sweep builds what it needs once itself.
    """

    def __init__(self) -> None:
        self._networks: dict[str, Network] = {}

    def network(self, topology: Mapping[str, Any], spec: NetworkSpec, *, force: bool = False,
                base: Path | None = None) -> Network:
        """The network of `topology` with `spec`'s tier efficiencies, routing, hash seed and bundles, built on
        first use; a relative topology file starts at `base` (see :func:`build_topology`)."""
        key = hashlib.sha256(json.dumps([topology, None if base is None else str(base), spec.tier_efficiency,
                                         spec.routing, spec.hash_seed, spec.bundles], sort_keys=True,
                                        default=str).encode()).hexdigest()
        network = self._networks.get(key)
        if network is None:
            network = self._networks[key] = spec.network(build_topology(topology, force=force, base=base))
        return network

    def __len__(self) -> int:
        return len(self._networks)

    def __getstate__(self) -> dict:
        return {"_networks": {}}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NetworkCache)

    __hash__ = None


class SweepSpec(_Strict):
    """Keys to vary, by dotted path: a ``grid`` of every combination and/or listed ``points``."""

    grid: dict[str, list[Any]] = Field(default_factory=dict)
    points: list[dict[str, Any]] = Field(default_factory=list)


Count = Annotated[int, BeforeValidator(units.parse_count), Field(ge=1)]


def _ranges(parse_range: Callable[[str], list], parse: Callable[[Any], Any], what: str,
            most: float = math.inf) -> Callable[[Any], list]:
    """A validator of a list of values (or one), each read by `parse`, in which an item may be a range
    ``LOW..HIGH[:xN]`` or a comma-separated list, read by `parse_range` and put in place of the item, as
    ``sizes`` reads them. An error names the item as written (``[1]``, or no index for a lone value): a value
    `parse` refuses, a range that goes above `most`, or a value listed twice where a range is involved."""

    def expanded(value: Any) -> list:
        items, where = (value, "[{}]") if isinstance(value, list) else ([value], "")
        values: list = []
        first: dict = {}
        for index, item in enumerate(items):
            ranged = _is_range(item)
            try:
                found = parse_range(item) if ranged else [parse(item)]
            except SimnetError as error:
                raise ScenarioError(error.message, path=where.format(index)) from None
            if max(found) > most:
                raise ScenarioError(f"must be ≤ {most:g}, got {item!r}", path=where.format(index))
            for one in found:
                if one in first and (ranged or first[one][1]):
                    raise ScenarioError(f"{what} {one!r} is listed twice (also {what}{where.format(first[one][0])})",
                                        path=where.format(index))
                first.setdefault(one, (index, ranged))
                values.append(one)
        return values

    return expanded


class PayloadSpec(_Strict):
    """A sparse payload; keys as :class:`simnet.payloads.SparsePayload`, counts like ``32M``,
    densities like ``1/128`` or ``0.5%``; ``dimension`` and ``density`` may be lists, whose items may be
    ranges as ``sizes`` takes them: ``256Ki..4Mi:x4`` (every fourfold count, both ends included; without
    ``:xN`` each doubles), ``1/1024..1/4:x4``."""

    kind: Literal["sparse"]
    dimension: Annotated[list[Count], BeforeValidator(_ranges(units.parse_count_range, units.parse_positive_count,
                                                               "dimension")), Field(min_length=1)]
    density: Annotated[list[Annotated[float, Field(gt=0, le=1)]],
                       BeforeValidator(_ranges(units.parse_fraction_range, units.parse_positive_fraction, "density",
                                               1.0)),
                       Field(min_length=1)] = [1 / 128]
    distribution: Literal[DISTRIBUTIONS] = "uniform"  # type: ignore[valid-type]
    seed: int = Field(0, ge=0)
    index_bytes: int = Field(4, ge=1)
    value_bytes: int = Field(4, ge=1)
    header_bytes: int = Field(4, ge=0)
    skew: float = Field(1.1, gt=0)
    cluster: int = Field(64, ge=1)
    indices_file: str = ""
    values_file: str = ""

    def payloads(self, base: Path | None = None, *, path: str = "payload") -> list[SparsePayload]:
        """One payload per (dimension, density), dimensions outermost; relative ``indices_file`` and
        ``values_file`` templates start at `base` (see :func:`scenario_path`); errors name keys under `path`."""
        fixed = self.model_dump(exclude={"kind", "dimension", "density"})
        for key in ("indices_file", "values_file"):
            if fixed[key] and base is not None:
                fixed[key] = str(scenario_path(str(base).replace("{", "{{").replace("}", "}}"), fixed[key]))
        try:
            return [SparsePayload(dimension=n, density=d, **fixed) for n in self.dimension for d in self.density]
        except SimnetError as error:
            raise ScenarioError(error.message, path=f"{path}.{error.path}") from None


class _PayloadBlock(_Strict):
    payload: PayloadSpec


def _job_payload(value: Any, path: str, base: Path | None) -> SparsePayload:
    """The one sparse payload of a job's collective, given as the top-level ``payload`` is, at key path `path`
    (``jobs.<name>.collective.payload`` or a level's ``jobs.<name>.groups.<level>.payload``)."""
    if not isinstance(value, Mapping):
        raise ScenarioError(f"expected a sparse payload such as {{kind: sparse, dimension: 16M, density: 1/128}}, "
                            f"got {value!r}", path=path)
    try:
        spec = _PayloadBlock.model_validate({"payload": value}).payload
    except ValidationError as error:
        found = _format_validation_error(error)
        raise ScenarioError(found.message, path=path + found.path.removeprefix("payload")) from None
    for key in ("dimension", "density"):
        values = getattr(spec, key)
        if len(values) > 1:
            raise ScenarioError(f"a job runs one payload, got {len(values)} values; give one, and sweep "
                                f"{path}.{key} to compare several", path=f"{path}.{key}")
    (payload,) = spec.payloads(base, path=path)
    return payload


def _placement(value: Any) -> Any:
    if isinstance(value, str):
        return {"kind": value}
    if isinstance(value, list):
        return {"kind": "explicit", "ranks": value}
    return value


class PlacementSpec(_Strict):
    """How a job's GPUs are picked: a kind of :data:`simnet.jobs.PLACEMENTS` (see
    :func:`simnet.jobs.place`), or ``explicit`` with the list of ``ranks``. In YAML a
    kind name or a list of ranks is enough."""

    kind: Literal[(*PLACEMENTS, "explicit")] = "contiguous"  # type: ignore[valid-type]
    seed: int = Field(0, ge=0)
    stride: int | None = Field(None, ge=1)
    ranks: list[Annotated[int, Field(ge=0)]] | None = None


def _job_ranks(value: Any) -> Any:
    if value is None or value == "all":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, list)):
        raise ScenarioError(f"expected a number of GPUs, 'all' or a list of ranks, got {value!r}")
    if isinstance(value, int) and value < 2:
        raise ScenarioError(f"a job needs at least 2 GPUs, got {value}")
    if isinstance(value, list) and not all(isinstance(r, int) and not isinstance(r, bool) and r >= 0 for r in value):
        raise ScenarioError(f"a list of ranks must hold integers ≥ 0, got {value!r}")
    return value


def _group(value: Any) -> Any:
    if isinstance(value, dict):
        return value
    return {"ranks": value}


class FlowsSpec(_Strict):
    """Background flows (see :class:`simnet.jobs.Flows`): ``pattern``, offered ``load``
    (a fraction), ``size`` of each flow, ``seed`` and an optional ``duration``."""

    pattern: Literal[PATTERNS] = "permutation"  # type: ignore[valid-type]
    load: Fraction
    size: Size
    seed: int = Field(0, ge=0)
    duration: Annotated[float, BeforeValidator(units.parse_time), Field(gt=0),
                        PlainSerializer(lambda v: units.format_exact(v, "time"), when_used="json")] | None = None


class JobCollectiveSpec(_Strict):
    """A job's collective: ``op``, ``algorithm``, ``size`` per rank (or a sparse ``payload``, as the top-level
    one, which then fixes the size), and the algorithm's parameters."""

    model_config = ConfigDict(extra="allow", frozen=True)
    op: Literal[COLLECTIVES]  # type: ignore[valid-type]
    algorithm: str
    size: Size | None = None


class JobSpec(_Strict):
    """One job of a ``jobs:`` scenario.

    ``ranks`` (a number of GPUs, ``all``, or a list of network ranks) and
    ``placement`` say where it runs: collective jobs take GPUs that earlier jobs
    left free, in the order the jobs are written; background flows may use any GPU
    (default: all). ``groups`` (``{tp: 8, dp: rest}``, innermost first) cut its
    ranks into communicators, each level a job of its own named ``<job>.<level>``,
    whose collective may override keys of ``collective`` (``dp: {ranks: rest, size:
    256 MiB}``). ``start`` (a time) and ``repeat`` (collectives per communicator,
    one after the other). Exactly one of ``collective`` and ``flows``.
    """

    ranks: Annotated[Any, BeforeValidator(_job_ranks)] = None
    placement: Annotated[PlacementSpec, BeforeValidator(_placement)] = PlacementSpec()
    groups: dict[str, Annotated[dict[str, Any], BeforeValidator(_group)]] | None = None
    collective: JobCollectiveSpec | None = None
    flows: FlowsSpec | None = None
    start: Time = 0.0
    repeat: int = Field(1, ge=1)


def _topology_entry(value: Any) -> Any:
    """A bare string names a topology file or preset: ``topology: dgx_h100_ndr_32`` is ``{file: dgx_h100_ndr_32}``.

    Keys beside ``file`` override parameters of the file's builder (see :func:`build_topology`).
    """
    if isinstance(value, str):
        return {"file": value}
    if not isinstance(value, Mapping):
        raise ScenarioError(f"expected {{builder: NAME, ...}}, {{file: PATH}} or a preset name, got {value!r}")
    if "file" in value and (not isinstance(value["file"], str) or not value["file"]):
        raise ScenarioError(f"expected a topology file or a preset name, got {value['file']!r}", path="file")
    return value


class Scenario(_Strict):
    """A validated scenario (see the module docstring for the YAML form)."""

    name: str = Field(min_length=1)
    description: str = ""
    topology: Annotated[dict[str, Any], BeforeValidator(_topology_entry)]
    collective: CollectiveSpec | None = None
    sizes: Annotated[list[Annotated[int, _AS_SIZE]], BeforeValidator(_size_list)] = []
    payload: PayloadSpec | None = None
    network: NetworkSpec = NetworkSpec()
    jobs: dict[str, JobSpec] | None = None
    sweep: SweepSpec | None = None
    _networks: NetworkCache = PrivateAttr(default_factory=NetworkCache)
    _base_dir: Path | None = PrivateAttr(default=None)
    _source: str = PrivateAttr(default="")
    _programs: dict = PrivateAttr(default_factory=dict)

    @property
    def source(self) -> str:
        """The file the scenario was read from (:func:`load_scenario`), or ``""`` for one given as data;
        its sweep points keep it."""
        return self._source

    @property
    def base_dir(self) -> Path | None:
        """The directory relative file paths of the scenario start from (see :func:`scenario_path`):
        the scenario file's, or ``None`` (the working directory) for a scenario given as data."""
        return self._base_dir

    def built_network(self, *, force: bool = False) -> Network:
        """The scenario's network (built once, shared with the scenario's sweep points)."""
        return self._networks.network(self.topology, self.network, force=force, base=self._base_dir)

    def sparse_payloads(self) -> list[SparsePayload]:
        """The payloads of its sparse ``payload`` (none without one), files relative to :attr:`base_dir`."""
        return [] if self.payload is None else self.payload.payloads(self._base_dir)


@dataclass(frozen=True)
class Point:
    """One point of a scenario's sweep (the only point of a scenario without one).

    Attributes
    ----------
    index : int
        Position in the sweep: grid combinations in the order written, each with
        every listed point.
    label : str
        The overridden keys and values, e.g. ``"topology.hosts=8,collective.chunks=4"``;
        empty for a scenario without a sweep.
    digest : str
        First 16 hex digits of the SHA-256 of the point's full scenario.
    scenario : Scenario or None
        The point's validated scenario, without a sweep; ``None`` when it does not validate
        (see `error`).
    values : tuple of (str, object)
        The overridden keys and their values as the sweep wrote them, in the label's order
        (see :func:`swept_columns`); empty for a scenario without a sweep.
    error : SimnetError or None
        Why the point's scenario does not validate (its topology cannot be built with the
        point's values, its ``network:`` options name a rank it does not have, ...), at the
        key path inside the point; ``None`` for a valid point. :func:`simnet.sweep.run_sweep`
        records it as the point's failure and runs the other points; :func:`point_error`
        gives it as the sweep names it.
    """

    index: int
    label: str
    digest: str
    scenario: Scenario | None
    values: tuple[tuple[str, Any], ...] = ()
    error: SimnetError | None = None

    @property
    def filename(self) -> str:
        """Name of the point's result file in a sweep's output directory."""
        return f"{self.index:05d}-{self.digest}.json"


def _yaml_key(parameter: str) -> str:
    for suffix, _ in _UNIT_SUFFIXES:
        if parameter.endswith(suffix):
            return parameter.removesuffix(suffix)
    return parameter


def _parser(parameter: str, annotation: Any) -> tuple[Callable[[Any], Any], str]:
    for suffix, expected in _UNIT_SUFFIXES:
        if parameter.endswith(suffix):
            return functools.partial(parse_quantity, suffix), expected
    adapter = TypeAdapter(annotation)

    def parse(value: Any) -> Any:
        try:
            value = written_number(parameter, value, annotation)
            return adapter.validate_python(value, strict=True)
        except ValidationError as error:
            raise ScenarioError(f"{error.errors()[0]['msg'].lower()}, got {value!r}") from None
        except UnitError as error:
            raise ScenarioError(error.message) from None

    return parse, getattr(annotation, "__name__", str(annotation))


def _no_repeats(scenario: Scenario) -> None:
    """Refuse a size or an algorithm entry listed twice in a scenario file: it would only repeat identical result
    rows. (Results written before this check keep their repeats and can still be plotted.)"""
    first: dict = {}
    for index, size in enumerate(scenario.sizes):
        if size in first:
            raise ScenarioError(f"{units.format_size(size)} is listed twice (also sizes[{first[size]}])",
                                path=f"sizes[{index}]")
        first[size] = index
    seen: dict = {}
    for index, entry in enumerate(scenario.collective.algorithms):
        key = json.dumps([entry.name, entry.model_extra or {}], sort_keys=True, default=str)
        if key in seen:
            raise ScenarioError(f"the same algorithm and parameters as collective.algorithms[{seen[key]}]",
                                path=f"collective.algorithms[{index}]")
        seen[key] = index


def _unknown(kind: str, word: str, choices: list[str]) -> str:
    return f"unknown {kind} {word!r}{did_you_mean(word, choices)} (expected one of: {', '.join(choices)})"


def _missing(key: str, given: Sequence[str], expected: str = "") -> str:
    """The error of a missing `key`: naming the key among `given` (the mapping's keys that are not its own)
    it is likely a misspelling of, else what `expected` says it needs."""
    close = difflib.get_close_matches(key, list(given), n=1)
    if close:
        return f"missing (the key {close[0]!r} is not one; a misspelling of {key!r}?)"
    return f"missing; expected {expected}" if expected else "missing"


def _keyword_parameters(function: Callable) -> dict[str, tuple[inspect.Parameter, Any]]:
    hints = typing.get_type_hints(function)
    return {
        name: (parameter, hints.get(name, Any))
        for name, parameter in inspect.signature(function).parameters.items()
        if parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)
    }


def call_with_units(
    function: Callable,
    raw: Mapping[str, Any],
    *,
    path: str,
    what: str,
    skip: tuple[str, ...] = (),
    required: bool = True,
) -> dict[str, Any]:
    """Call `function` with YAML values converted to its parameters' units and types.

    Parameters
    ----------
    function : callable
        Builder or algorithm whose parameters carry unit suffixes and type hints.
    raw : mapping
        YAML keys (without unit suffixes) and values.
    path : str
        Key path of `raw` in the scenario, for error messages.
    what : str
        What `function` is, for error messages (``"builder 'switch'"``).
    skip : tuple of str
        Parameters supplied by the caller, not by YAML.
    required : bool
        Whether parameters without a default must be present in `raw`.

    Returns
    -------
    dict
        Keyword arguments for `function`, in SI units.
    """
    parameters = {
        _yaml_key(name): (name, parameter, annotation)
        for name, (parameter, annotation) in _keyword_parameters(function).items()
        if name not in skip
    }
    kwargs = {}
    for key, value in raw.items():
        if key not in parameters:
            raise ScenarioError(_unknown(f"parameter of {what}", key, sorted(parameters)), path=f"{path}.{key}")
        name, _, annotation = parameters[key]
        parse, _ = _parser(name, annotation)
        try:
            kwargs[name] = parse(value)
        except SimnetError as error:
            raise ScenarioError(error.message, path=f"{path}.{key}") from None
    for key, (name, parameter, annotation) in parameters.items():
        if required and name not in kwargs and parameter.default is inspect.Parameter.empty:
            _, expected = _parser(name, annotation)
            raise ScenarioError(f"missing; {what} needs {expected}", path=f"{path}.{key}")
    return kwargs


def _raise_translated(error: SimnetError, path: str) -> typing.NoReturn:
    key = _yaml_key(error.path) if error.path else ""
    raise ScenarioError(error.message, path=".".join(p for p in (path, key) if p)) from None


def build_topology(spec: Mapping[str, Any], *, path: str = "topology", force: bool = False,
                   base: str | Path | None = None):
    """Build the topology graph described by ``{builder: NAME, **params}`` or ``{file: PATH}``.

    ``file`` is a topology file (a relative path starts at `base`, the scenario file's
    directory, or the working directory if `base` is ``None``; see :func:`scenario_path`)
    or, if there is no such file, the name of a preset in ``simnet/topology/presets/``;
    the other keys beside it override parameters of the file's builder
    (:func:`simnet.topology.io.resolve`: mappings merged key by key, the override
    winning), and an error in one names its key path
    (``topology.node_params.nic_bandwidth``). ``cluster`` and files go through
    :func:`simnet.topology.build`, which parses their nested unit strings. A fabric
    too large for this machine's memory is refused before it is built, unless
    `force` (see :mod:`simnet.guards`). ``tiers: per_level`` beside them names the fabric's cables by the
    levels they join (:func:`simnet.topology.tiers_by_level`).
    """
    try:
        rest, per_level = split_tiers(spec)
    except SimnetError as error:
        _raise_translated(error, path)
    if per_level:
        return tiers_by_level(build_topology(rest, path=path, force=force, base=base))
    try:
        resolved = topology_resolve(spec, base=base) if "file" in spec else spec
    except SimnetError:
        resolved = {}
    gpus = estimate_gpus(resolved)
    if gpus is not None:
        check_fits(f"a {resolved['builder']} topology of {gpus:,} GPUs", gpus * BYTES_PER_GPU, force=force, path=path)
    if "file" in spec or spec.get("builder") == "cluster":
        try:
            return topology_build(spec, base=base)
        except SimnetError as error:
            inner = ": ".join(p for p in (error.source, error.path) if p)
            in_file = "file" in spec and (error.source or not error.path)
            where = f"{path}.file" if in_file else ".".join(p for p in (path, error.path) if p)
            message = f"{inner}: {error.message}" if error.source else error.message
            raise ScenarioError(message, path=where) from None
    if "builder" not in spec:
        for key in spec:
            close = did_you_mean(str(key), ["builder", "file"])
            if close:
                raise ScenarioError(f"unknown key{close} (a topology needs builder, with its parameters, or file)",
                                    path=f"{path}.{key}")
        raise ScenarioError(f"missing; expected one of: {', '.join(BUILDERS)}", path=f"{path}.builder")
    name = spec["builder"]
    if not isinstance(name, str) or name not in BUILDERS:
        raise ScenarioError(_unknown("builder", str(name), sorted(BUILDERS)), path=f"{path}.builder")
    builder = BUILDERS[name]
    params = {k: v for k, v in spec.items() if k != "builder"}
    kwargs = call_with_units(builder, params, path=path, what=f"builder {name!r}")
    try:
        return builder(**kwargs)
    except SimnetError as error:
        _raise_translated(error, path)


def parse_matrix(value: Any, *, path: str = "matrix", base: str | Path | None = None) -> TrafficMatrix:
    """A traffic matrix from YAML.

    Accepted forms: a kind (``uniform``, ``zipf``, ``hotspot``); a mapping with
    ``kind`` and its parameters (``{kind: zipf, exponent: 1.2, seed: 3}``,
    ``{kind: hotspot, hotspots: 2, fraction: 80%, seed: 1}``); a list of rows of
    non-negative weights; or ``{file: traffic.npy}``, an ``n × n`` array saved with
    :func:`numpy.save` (a relative path starts at `base`, the scenario file's directory, or
    the working directory if `base` is ``None``; see :func:`scenario_path`). Weights are relative:
    the collective's ``size`` is the mean bytes a rank sends (see
    :class:`simnet.traffic.TrafficMatrix`), so a matrix measured in bytes runs
    as measured with ``size`` its total over ``n``.

    Raises
    ------
    ScenarioError
        Naming `path` and the offending key.
    """
    if isinstance(value, str):
        value = {"kind": value}
    elif isinstance(value, list):
        value = {"kind": "explicit", "weights": value}
    if not isinstance(value, dict):
        raise ScenarioError(f"expected a kind ({', '.join(MATRICES[:-1])}), a mapping, a list of rows or "
                            f"{{file: PATH.npy}}, got {value!r}", path=path)
    spec = dict(value)
    if "file" in spec:
        extra = sorted(set(spec) - {"file"})
        if extra:
            raise ScenarioError("a matrix file takes no other keys", path=f"{path}.{extra[0]}")
        name = spec["file"]
        if not isinstance(name, str) or not name:
            raise ScenarioError(f"must be the path of a .npy file, got {name!r}", path=f"{path}.file")
        file = str(scenario_path(base, name))
        try:
            weights = np.load(file, allow_pickle=False)
        except FileNotFoundError:
            raise ScenarioError(f"no file {file!r}", path=f"{path}.file") from None
        except (OSError, ValueError) as error:
            raise ScenarioError(f"cannot read {file!r} as a .npy array ({error})", path=f"{path}.file") from None
        spec = {"kind": "explicit", "weights": weights, "source": name}
    kind = spec.get("kind", "uniform")
    allowed = {"uniform": ("kind",), "zipf": ("kind", "exponent", "seed"),
               "hotspot": ("kind", "hotspots", "fraction", "seed"), "explicit": ("kind", "weights", "source")}
    if kind not in allowed:
        raise ScenarioError(_unknown("matrix kind", str(kind), list(MATRICES)), path=f"{path}.kind")
    for key in spec:
        if key not in allowed[kind]:
            raise ScenarioError(_unknown(f"key of a {kind} matrix", str(key), list(allowed[kind])), path=f"{path}.{key}")
    try:
        if "fraction" in spec:
            spec["fraction"] = units.parse_fraction(spec["fraction"])
        if kind == "explicit" and not isinstance(spec.get("weights"), np.ndarray):
            try:
                spec["weights"] = np.array(spec.get("weights"), dtype=float)
            except (TypeError, ValueError):
                raise ScenarioError("must be rows of numbers", path="weights") from None
        return TrafficMatrix(**spec)
    except SimnetError as error:
        raise ScenarioError(error.message, path=".".join(p for p in (path, error.path) if p)) from None


def _matrix_param(op: str, spec: Any, path: str, base: Path | None) -> dict[str, Any]:
    """``{"matrix": ...}`` for an ``alltoallv``; nothing for the others (which must not get a matrix).
    A matrix file starts at `base` (see :func:`parse_matrix`)."""
    if op == "alltoallv":
        if spec is None:
            raise ScenarioError("missing; alltoallv needs a traffic matrix (uniform, zipf, hotspot, a list of rows "
                                "or {file: PATH.npy})", path=path)
        return {"matrix": parse_matrix(spec, path=path, base=base)}
    if spec is not None:
        raise ScenarioError(f"a traffic matrix makes the collective an alltoallv, not {op}", path=path)
    return {}


_MSCCL_KEYS = ("msccl", "inplace", "root", "range")


def _imported(scenario: Scenario, own: dict[str, Any], where: str, nranks: int) -> msccl.Program:
    """The verified program of an ``{msccl: PATH, inplace: ..., root: ..., range: ...}`` entry.

    A relative PATH starts at the scenario file's directory (see :func:`scenario_path`). The
    file is read and verified once per scenario and its sweep points. A size outside the
    file's ``minBytes`` .. ``maxBytes`` (where the runtime would not select it) is refused
    unless ``range: ignore``.
    """
    for key in own:
        if key not in _MSCCL_KEYS:
            raise ScenarioError(_unknown("key of an msccl entry", key, list(_MSCCL_KEYS)), path=f"{where}.{key}")
    path, inplace, root = own["msccl"], own.get("inplace"), own.get("root", 0)
    if not isinstance(path, str) or not path:
        raise ScenarioError(f"must be the path of an MSCCL XML file, got {path!r}", path=f"{where}.msccl")
    if inplace is not None and not isinstance(inplace, bool):
        raise ScenarioError(f"must be true or false, got {inplace!r}", path=f"{where}.inplace")
    if not isinstance(root, int) or isinstance(root, bool) or not 0 <= root < nranks:
        raise ScenarioError(f"must be a rank in [0, {nranks}), got {root!r}", path=f"{where}.root")
    if own.get("range", "enforce") not in ("enforce", "ignore"):
        raise ScenarioError(f"must be 'enforce' or 'ignore', got {own['range']!r}", path=f"{where}.range")
    file = scenario_path(scenario.base_dir, path)
    key = (str(file), inplace, root)
    if key not in scenario._programs:
        try:
            program = msccl.read(file)
            if program.ngpus != nranks:
                raise ScenarioError(f"{file}: the program is for ngpus={program.ngpus} ranks, the topology has "
                                    f"{nranks}")
            if program.collective != scenario.collective.op:
                raise ScenarioError(f"{file}: the program computes {program.collective} (coll={program.coll!r}), "
                                    f"not {scenario.collective.op}")
            program.verify(inplace=inplace, root=root)
        except SimnetError as error:
            raise ScenarioError(str(error), path=f"{where}.msccl") from None
        scenario._programs[key] = program
    program = scenario._programs[key]
    sizes = scenario.sizes or [payload.size_bytes for payload in scenario.sparse_payloads()]
    outside = [size for size in sizes if not program.covers(size)]
    if outside and own.get("range", "enforce") == "enforce":
        upper = units.format_size_bound(program.max_bytes) if program.max_bytes else "any size"
        raise ScenarioError(f"{file} is selected for {units.format_size_bound(program.min_bytes)} .. {upper} "
                            f"(minBytes/maxBytes); {', '.join(units.format_size(size) for size in outside)} "
                            f"{'is' if len(outside) == 1 else 'are'} outside: list sizes in range, or add "
                            f"'range: ignore' to simulate it there anyway", path=f"{where}.msccl")
    return program


def _algorithm_runs(
    scenario: Scenario, nranks: int
) -> list[tuple[Algorithm, dict[str, Any], dict[str, str], dict[str, Any]]]:
    """Per listed algorithm: its record, converted parameters, each parameter's key path, and what else
    its result rows show in ``params`` (an MSCCL file's path as written and its protocol).

    Parameters the scenario provides itself (``payload``) are not read from YAML.
    """
    collective = scenario.collective
    supplied = _supplied(scenario)
    shared = dict(collective.model_extra or {})
    runs = []
    used_shared: set[str] = set()
    offered = set(CollectiveSpec.model_fields)
    for index, entry in enumerate(collective.algorithms):
        name = entry.name
        own = dict(entry.model_extra or {})
        where = f"collective.algorithms[{index}]"
        if _is_msccl(entry):
            program = _imported(scenario, own, where, nranks)
            record = program.algorithm(inplace=own.get("inplace"), root=own.get("root", 0))
            runs.append((record, {}, {}, {**own, "proto": program.proto}))
            continue
        if name not in ALGORITHMS:
            raise ScenarioError(f"unknown algorithm {name!r}{did_you_mean(name, sorted(ALGORITHMS))} (algorithms "
                                f"for {collective.op}: {', '.join(ALGORITHMS.for_op(collective.op))})", path=where)
        if collective.op not in ALGORITHMS[name].ops:
            fitting = ALGORITHMS.for_op(collective.op)
            raise ScenarioError(
                f"algorithm {name!r} computes {', '.join(ALGORITHMS[name].ops)}, not {collective.op} "
                f"(algorithms for {collective.op}: {', '.join(fitting)})",
                path=where,
            )
        builder = ALGORITHMS[name].builder
        accepted = {_yaml_key(p) for p in _keyword_parameters(builder)}
        taken = {k: v for k, v in shared.items() if k in accepted}
        used_shared.update(taken)
        what, skip = f"algorithm {name!r}", ("nranks", "size_bytes", "matrix", *supplied)
        offered |= accepted - {_yaml_key(p) for p in ("nranks", "size_bytes", *supplied)}
        own_matrix, shared_matrix = own.pop("matrix", None), taken.pop("matrix", None)
        matrix = (own_matrix, f"{where}.matrix") if own_matrix is not None else (shared_matrix, "collective.matrix")
        params = call_with_units(builder, taken, path="collective", what=what, skip=skip, required=False)
        params |= call_with_units(builder, own, path=where, what=what, skip=skip, required=False)
        for parameter_name, (parameter, annotation) in _keyword_parameters(builder).items():
            if parameter_name not in (*skip, *params) and parameter.default is inspect.Parameter.empty:
                _, expected = _parser(parameter_name, annotation)
                raise ScenarioError(f"missing; {what} needs {expected}", path=f"{where}.{_yaml_key(parameter_name)}")
        origins = {key: f"collective.{key}" for key in taken} | {key: f"{where}.{key}" for key in own}
        origins[_LISTED] = where
        if "matrix" in accepted:
            params |= _matrix_param(collective.op, *matrix, scenario.base_dir)
            origins["matrix"] = matrix[1]
        runs.append((ALGORITHMS[name], params, origins, {}))
    for key in shared:
        if key not in used_shared:
            raise ScenarioError(
                f"no listed algorithm takes this parameter{did_you_mean(str(key), sorted(offered))} (algorithms: "
                f"{', '.join(a.name for a in collective.algorithms)})",
                path=f"collective.{key}",
            )
    return runs


def _format_validation_error(error: ValidationError) -> ScenarioError:
    first = error.errors()[0]
    path = ""
    for part in first["loc"][:-1] if first["loc"][-1:] == ("[key]",) else first["loc"]:
        name = str(part) if str(part).isprintable() else repr(str(part))
        path += f"[{part}]" if isinstance(part, int) else (f".{name}" if path else name)
    kind, ctx, value = first["type"], first.get("ctx", {}), first.get("input")
    if kind == "missing":
        missing, parent = str(first["loc"][-1]), first["loc"][:-1]
        unknown = [str(other["loc"][-1]) for other in error.errors()
                   if other["type"] == "extra_forbidden" and other["loc"][:-1] == parent]
        if isinstance(value, Mapping):
            unknown += [str(key) for key in value if str(key) not in _fields_at(parent)]
        message = _missing(missing, unknown)
    elif kind == "extra_forbidden":
        parent = first["loc"][:-1]
        fields = _fields_at(parent)
        message = "unknown key" + did_you_mean(str(first["loc"][-1]), fields) + (
            f" (expected one of: {', '.join(fields)})" if fields else ""
        )
    elif kind == "value_error" and isinstance(ctx.get("error"), SimnetError):
        message = ctx["error"].message
        inner = ctx["error"].path
        if inner:
            path += inner if inner.startswith("[") or not path else f".{inner}"
    elif kind == "greater_than_equal":
        message = f"must be ≥ {ctx['ge']}, got {value!r}"
    elif kind == "literal_error":
        message = f"must be one of {ctx['expected']}, got {value!r}"
    elif kind == "too_short":
        message = f"must not be empty, got {value!r}"
    else:
        message = f"{first['msg'][0].lower()}{first['msg'][1:]}, got {value!r}"
    return ScenarioError(message, path=path)


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model an annotation holds (itself, or inside ``X | None`` / ``Annotated[X, ...]``)."""
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
        if typing.get_origin(candidate) is Annotated and _model_in(typing.get_args(candidate)[0]):
            return _model_in(typing.get_args(candidate)[0])
    return None


def _mapped(annotation: Any) -> Any:
    """The value type of a ``dict[str, X]`` (also inside ``X | None``), or ``None``."""
    for candidate in (annotation, *typing.get_args(annotation)):
        if typing.get_origin(candidate) is dict:
            return typing.get_args(candidate)[1]
    return None


def _fields_at(loc: tuple) -> list[str]:
    annotation: Any = Scenario
    for part in loc:
        model = _model_in(annotation)
        entry = model.model_fields.get(part) if model is not None and isinstance(part, str) else None
        if entry is not None:
            annotation = entry.annotation
            continue
        annotation = _mapped(annotation)
        if annotation is None:
            return []
    model = _model_in(annotation)
    return list(model.model_fields) if model is not None else []


def parse_scenario(data: Any, *, source: str = "", force: bool = False,
                   networks: NetworkCache | None = None, base_dir: str | Path | None = None,
                   programs: dict | None = None) -> Scenario:
    """Validate a scenario given as plain data (e.g. from :func:`simnet.yamlio.safe_load`).

    Its network is built once, into `networks` (a new cache if not given), and
    reused by everything that runs the scenario or its sweep points. Every relative
    file path in it (topology files, traffic matrices, sparse payload files, MSCCL
    files) starts at `base_dir`, the working directory if not given (see
    :func:`scenario_path`; :func:`load_scenario` passes the file's directory). Each
    MSCCL file is read and verified once, into `programs` (a new cache if not given).

    Raises
    ------
    ScenarioError
        Naming `source`, the key path, what was expected and what was found.
    """
    if not isinstance(data, dict):
        found = "an empty file" if data is None else f"a {type(data).__name__}"
        raise ScenarioError(
            f"expected a mapping with keys name, topology, collective, sizes; found {found}", source=source
        )
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as error:
        raise _format_validation_error(error).at(source=source) from None
    if networks is not None:
        scenario._networks = networks
    if programs is not None:
        scenario._programs = programs
    scenario._base_dir = None if base_dir is None else Path(base_dir)
    scenario._source = source
    try:
        if scenario.jobs is None and scenario.collective is None:
            raise ScenarioError("missing; a scenario runs a collective (with sizes) or jobs", path="collective")
        network = scenario.built_network(force=force)
        scenario.network.simulate_kwargs(network.size)
        if scenario.jobs is not None:
            _check_jobs_scenario(scenario, data)
            plan_jobs(scenario, network)
            return scenario
        if scenario.payload is None and not scenario.sizes:
            given = "sizes" in data
            raise ScenarioError(f"must not be empty, got {data['sizes']!r}" if given else "missing", path="sizes")
        if scenario.payload is not None and scenario.sizes:
            raise ScenarioError("a sparse payload fixes the size (dimension * value_bytes); remove sizes", path="sizes")
        _algorithm_runs(scenario, network.size)
        if scenario.payload is not None:
            scenario.sparse_payloads()
    except SimnetError as error:
        raise error.at(source=source) from None
    return scenario


class _NetworkBlock(_Strict):
    network: NetworkSpec = NetworkSpec()


def parse_network(data: Mapping[str, Any] | None, *, source: str = "") -> NetworkSpec:
    """Validate a scenario's ``network:`` block on its own (``None`` is the default network).

    Raises
    ------
    ScenarioError
        Naming `source` and the key path under ``network``, as :func:`parse_scenario` would.
    """
    try:
        return _NetworkBlock.model_validate({"network": {} if data is None else data}).network
    except ValidationError as error:
        raise _format_validation_error(error).at(source=source) from None


def read_yaml(path: str | Path) -> Any:
    """Read a YAML file as plain data with :func:`simnet.yamlio.safe_load` (``2:1`` stays a string); errors name the
    file and line."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError("file not found", source=source) from None
    except UnicodeDecodeError as error:
        raise ScenarioError(f"not UTF-8 text (byte {error.start})", source=source) from None
    except OSError as error:
        raise ScenarioError(f"cannot read: {error.strerror}", source=source) from None
    try:
        data = yamlio.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ScenarioError(f"{where}invalid YAML: {problem}", source=source) from None
    return data


def load_scenario(path: str | Path, *, force: bool = False) -> Scenario:
    """Read and validate a scenario YAML file, including its sweep's points.

    Relative file paths in it start at the file's directory (see :func:`scenario_path`).
    `force` lets topologies through that look too large for this machine.
    """
    scenario = parse_scenario(read_yaml(path), source=str(path), force=force, base_dir=Path(path).parent)
    if scenario.jobs is None:
        try:
            _no_repeats(scenario)
        except SimnetError as error:
            raise error.at(source=str(path)) from None
    expand(scenario, source=str(path), force=force)
    return scenario


_LIST_KEYS = ("sizes", "collective.algorithms")


def _set(data: dict, dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    target = data
    for depth, part in enumerate(parts[:-1]):
        child = target.setdefault(part, {})
        if not isinstance(child, dict):
            raise ScenarioError(f"cannot set {dotted!r}: {'.'.join(parts[: depth + 1])} is not a mapping")
        target = child
    if dotted in _LIST_KEYS and not isinstance(value, list):
        value = [value]
    target[parts[-1]] = value


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def expand(scenario: Scenario, *, source: str = "", force: bool = False) -> list[Point]:
    """The points of `scenario`'s sweep, each a validated scenario without a sweep.

    Grid values multiply with each other and with the listed points; ``sizes`` and
    ``collective.algorithms`` accept a single value as a one-element list. A
    scenario without a sweep has one point with an empty label.

    A point whose scenario does not validate (its values make a topology that cannot
    be built, say, or leave a ``network:`` option naming a rank the point does not have)
    is kept with its error (:attr:`Point.error`, ``scenario=None``): the other points run,
    and a sweep records it as failed (:func:`simnet.sweep.run_sweep`). An error of the sweep
    itself, or of every point alike, is an error of the scenario as a whole and is raised.

    Raises
    ------
    ScenarioError
        Naming the sweep key; or when no point validates, the first point's error as
        :func:`point_error` gives it (``sweep: point 0 (<label>): <key path>: <message>``).
    """
    base = scenario.model_dump(mode="json", exclude={"sweep"}, exclude_defaults=True)
    sweep = scenario.sweep or SweepSpec()
    for key, values in sweep.grid.items():
        if not values:
            raise ScenarioError("must list at least one value", path=f"sweep.grid.{key}", source=source)
    grid = [[(key, value) for value in values] for key, values in sweep.grid.items()]
    listed = [list(point.items()) for point in sweep.points] or [[]]
    points = []
    for index, (combination, extra) in enumerate(itertools.product(itertools.product(*grid), listed)):
        overrides = [*combination, *extra]
        data = copy.deepcopy(base)
        for key, value in overrides:
            try:
                _set(data, key, value)
            except ScenarioError as error:
                raise error.at(path="sweep", source=source) from None
        label = ",".join(f"{key}={_shown(value)}" for key, value in overrides)
        try:
            point = parse_scenario(data, force=force, networks=scenario._networks, base_dir=scenario._base_dir,
                                   programs=scenario._programs)
            if point.jobs is None and any(key == "sizes" for key, _ in overrides):
                _no_repeats(point)
        except SimnetError as error:
            digest = hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]
            points.append(Point(index, label, digest, None, tuple(overrides), error=error))
            continue
        point._source = scenario.source
        digest = hashlib.sha256(point.model_dump_json().encode()).hexdigest()[:16]
        points.append(Point(index, label, digest, point, tuple(overrides)))
    if all(point.scenario is None for point in points):
        raise point_error(points[0], source=source)
    return points


def point_error(point: Point, *, source: str = "") -> ScenarioError:
    """The error of a `point` whose scenario does not validate (:attr:`Point.error`) as a sweep names it:
    ``sweep: point <index> (<label>): <key path>: <message>``, from the scenario file `source`."""
    return ScenarioError(f"point {point.index} ({point.label}): {point.error}", path="sweep", source=source)


def valid_points(points: Sequence[Point]) -> list[Point]:
    """The points of `points` whose scenario validates (:attr:`Point.error` is ``None``)."""
    return [point for point in points if point.scenario is not None]


def _cell(value: Any) -> Any:
    """A swept value in a table: a number as itself, a string as written, anything else (a list, a mapping, a
    boolean) as the JSON text the point's label shows."""
    if isinstance(value, (int, float, str)) and not isinstance(value, bool):
        return value
    return json.dumps(value, sort_keys=True)


def swept_columns(table: pd.DataFrame, points: Sequence[Point]) -> pd.DataFrame:
    """`table` with one column per key the sweep of `points` sets, right after its ``point`` column.

    Each column is named by the key's dotted path (``topology.hosts``); a key that is already a column of
    `table` (``topology``, when a sweep varies whole topologies) is named ``sweep.<key>``. A row's cell is the
    value its point gives the key (matched by the ``point`` label): a number as a number, a string as written
    (``"100 Gbps"``), a boolean, list or mapping as the JSON text the label shows (``"false"``, ``"[4, 2]"``),
    and ``None`` where the point leaves
    the key as the scenario has it (a sweep of ``points`` may set different keys at each); the column has the
    type its cells share (:func:`simnet.analysis.typed_column`: ``int64`` for integers, ...). The ``point``
    label itself is kept.

    Parameters
    ----------
    table : pandas.DataFrame
        Rows with a ``point`` column (result rows, a ``jobs:`` scenario's tables).
    points : sequence of Point
        The sweep's points (:func:`expand`).

    Returns
    -------
    pandas.DataFrame
        A new frame; `table` itself when no point sets a key.

    Examples
    --------
    >>> points = [Point(0, "topology.hosts=4", "", None, (("topology.hosts", 4),)),
    ...           Point(1, "topology.hosts=8", "", None, (("topology.hosts", 8),))]
    >>> swept_columns(pd.DataFrame({"point": ["topology.hosts=8", "topology.hosts=4"], "x": [1, 2]}), points)
                  point topology.hosts  x
    0  topology.hosts=8              8  1
    1  topology.hosts=4              4  2
    """
    keys = list(dict.fromkeys(key for point in points for key, _ in point.values))
    if not keys:
        return table
    given = {point.label: dict(point.values) for point in points}
    frame = table.copy()
    at = list(frame.columns).index("point") + 1
    for offset, key in enumerate(keys):
        cells = [_cell(given[label][key]) if key in given.get(label, {}) else None for label in frame["point"]]
        frame.insert(at + offset, f"sweep.{key}" if key in table.columns else key, typed_column(cells, frame.index))
    return frame


@dataclass(frozen=True)
class Run:
    """One simulated (algorithm, size) of a point, with its models.

    Attributes
    ----------
    algorithm : str
        Algorithm name.
    params : dict
        Its parameters as passed to the builder (SI units; defaults filled in).
    size_bytes : int
        Payload per rank.
    trace : Trace
        The simulation (schedule, network and per-transfer times).
    row : dict
        The result row (see :func:`simnet.analysis.result_row`).
    """

    algorithm: str
    params: dict
    size_bytes: int
    trace: Trace
    row: dict


def _supplied(scenario: Scenario) -> tuple[str, ...]:
    return ("payload",) if scenario.payload is not None else ()


def _shrinking(record: Algorithm, nranks: int, size_bytes: int, params: Mapping[str, Any]) -> list[str]:
    """The whole-number parameters of `record` whose lowering to 1 lowers its transfer estimate on `nranks`
    ranks at `size_bytes`, as ``"max_pieces (64 now)"``: the value given, else the builder's default; the name
    alone where the run decides the value (NCCL's channels) or there is no default."""
    estimate = record.transfers(nranks, size_bytes, params)
    shrinking = []
    for name, parameter in inspect.signature(record.builder).parameters.items():
        if parameter.kind is not parameter.KEYWORD_ONLY:
            continue
        value = params.get(name, parameter.default)
        known = isinstance(value, int) and not isinstance(value, bool)
        if known and value <= 1 or not (known or value is None or value is parameter.empty):
            continue
        if record.transfers(nranks, size_bytes, {**params, name: 1}) < estimate:
            shown = known and (name in params or name not in record.decided_by)
            shrinking.append(f"{_yaml_key(name)} ({value} now)" if shown else _yaml_key(name))
    return shrinking


_LISTED = "<listed>"
"""Key of :func:`_algorithm_runs`' origins under which an algorithm's own key path (``collective.algorithms[i]``)
is kept, for errors about no parameter the scenario gave."""


def _estimated_transfers(listed: list, network: Network, sizes: Sequence[int]) -> int:
    """Transfers the algorithms `listed` (as :func:`_algorithm_runs` gives them) are estimated to send at
    `sizes`, in all; an algorithm whose parameters do not resolve counts none (its own run reports why)."""
    total = 0
    for record, params, _, _ in listed:
        try:
            params = record.with_topology_defaults(network, params)
            total += sum(record.transfers(network.size, size, params) for size in sizes)
        except SimnetError:
            continue
    return total


def _built(record: Algorithm, params: dict[str, Any], origins: dict[str, str], network: Network, size: int,
           *, sized_by: str = "sizes", fits: Callable[[dict[str, Any], int], None] | None = None
           ) -> tuple[dict[str, Any], Schedule]:
    """The parameters `record` resolves on the network and size from `params` (the topology's defaults already
    filled in: :meth:`~simnet.algorithms.registry.Algorithm.with_topology_defaults`), and
    ``record.builder(nranks, size, **them)``, with errors at their scenario key paths; `fits` sees the resolved
    parameters and the size before anything is built."""
    try:
        params = record.resolved(network, size, params)
    except SimnetError as error:
        raise _at_key(error, record, origins, sized_by) from None
    if fits is not None:
        fits(params, size)
    try:
        return params, record.builder(network.size, size, **params)
    except SimnetError as error:
        raise _at_key(error, record, origins, sized_by) from None


def _at_key(error: SimnetError, record: Algorithm, origins: dict[str, str], sized_by: str) -> ScenarioError:
    """`error` of resolving or building `record` as a :class:`ScenarioError` at its scenario key path."""
    key = _yaml_key(error.path)
    where = {"nranks": "topology", "size": sized_by}.get(key) or origins.get(key)
    if where is None and _LISTED in origins:
        return ScenarioError(f"{record.name}: {error.message}", path=origins[_LISTED])
    return ScenarioError(error.message, path=where or f"collective.{key}")


def build_schedule(point: Point, algorithm: str, size_bytes: int, *, force: bool = False) -> Schedule:
    """The schedule the point's `algorithm` builds for `size_bytes`, with the point's parameters, unsimulated.

    `algorithm` names a listed algorithm as :func:`algorithm_index` reads it (as result
    rows and tables name it: ``ring``, ``msccl:<name>``, ``blueconnect {"factors": [8, 4]}``).

    Raises
    ------
    ScenarioError
        If the point lists no such algorithm, or several (see :func:`algorithm_index`), or its
        builder refuses the size.
    """
    scenario = point.scenario
    network = scenario.built_network(force=force)
    listed = _algorithm_runs(scenario, network.size)
    record, params, origins, _ = listed[_listed_index(scenario, listed, network, algorithm)]
    return _built(record, record.with_topology_defaults(network, params), origins, network, size_bytes)[1]


def algorithm_index(scenario: Scenario, algorithm: str, *, force: bool = False) -> int:
    """Where in ``collective.algorithms`` the entry `algorithm` names is, named as results name a choice.

    `algorithm` is an algorithm's name (``ring``, ``msccl:<name>`` for the ``name``
    attribute of an MSCCL file, or a bare ``msccl`` for the one MSCCL file listed),
    optionally with parameters as :func:`simnet.analysis.parse_choice` reads them:
    ``blueconnect {"factors": [8, 4]}`` (exactly the parameters of a run, topology-derived
    defaults included, as the tables and ``compare --baseline`` name a choice) or
    ``blueconnect factors=[8, 4]`` (these among them, as the run table's ``params``
    column shows them). A bare name is the entry whose choice it is (``ring`` listed
    without parameters), else the one entry of that algorithm; entries that run the same
    choice are one (the first is meant).

    Raises
    ------
    ScenarioError
        If the scenario lists no such choice, or `algorithm` fits several listed choices
        (``path="algorithm"``; the message lists them as they would be typed).
    """
    network = scenario.built_network(force=force)
    return _listed_index(scenario, _algorithm_runs(scenario, network.size), network, algorithm)


def _listed_choice(record: Algorithm, params: dict[str, Any], shown_extra: dict[str, Any], network: Network
                   ) -> dict[str, Any]:
    """The parameters of a listed entry's result rows (their ``params`` read as JSON, without a payload)."""
    given = {k: _jsonable(v) for k, v in record.with_topology_defaults(network, params).items() if k != "payload"}
    return json.loads(_shown_params(given | shown_extra, None))


def repeated_algorithms(scenario: Scenario, *, force: bool = False) -> list[tuple[int, int, str]]:
    """The entries of ``collective.algorithms`` that run what an earlier entry runs, once topology-derived
    defaults are filled in (``blueconnect`` and ``{name: blueconnect, factors: [2, 2, 8]}`` where the
    hierarchy's factors are ``[2, 2, 8]``): ``(index, earlier index, choice)``, the choice as the tables name it.

    :func:`runs` runs such an entry once, under the earlier entry.
    """
    if scenario.collective is None:
        return []
    network = scenario.built_network(force=force)
    listed = _algorithm_runs(scenario, network.size)
    repeated = []
    for index, first in _repeats(listed, network).items():
        record, params, _, extra = listed[index]
        repeated.append((index, first, choice_text(record.name, _listed_choice(record, params, extra, network))))
    return repeated


def _repeats(listed: list, network: Network) -> dict[int, int]:
    """Index of each entry of `listed` that runs what an earlier one runs → the earliest such entry's index:
    the same algorithm with the same parameters as its result rows show them, and the same traffic matrices."""
    seen: list[tuple[int, tuple]] = []
    repeats = {}
    for index, (record, params, _, extra) in enumerate(listed):
        key = (record.name, _listed_choice(record, params, extra, network),
               {k: v for k, v in params.items() if isinstance(v, TrafficMatrix)})
        first = next((earlier for earlier, same in seen if same == key), None)
        if first is None:
            seen.append((index, key))
        else:
            repeats[index] = first
    return repeats


def _listed_index(scenario: Scenario, listed: list, network: Network, algorithm: str) -> int:
    name, asked, exact = parse_choice(algorithm, what="algorithm")
    names = [record.name for record, *_ in listed]
    choices = [_listed_choice(record, params, extra, network) for record, params, _, extra in listed]
    texts = [choice_text(n, c) for n, c in zip(names, choices)]
    files = [(index, f"{names[index]} ({entry.model_extra['msccl']})")
             for index, entry in enumerate(scenario.collective.algorithms) if _is_msccl(entry)]
    if name == "msccl" and asked is None and files:
        if len(files) > 1:
            raise ScenarioError(f"'msccl' is ambiguous: the scenario lists {len(files)} MSCCL files; name one as "
                                f"result rows do: {', '.join(shown for _, shown in files)}", path="algorithm")
        return files[0][0]
    if name not in names:
        raise ScenarioError(f"the scenario lists no algorithm {name!r}{did_you_mean(name, names)} (it lists "
                            f"{', '.join(dict.fromkeys(names))})", path="algorithm")
    if asked is None and name in texts:
        return texts.index(name)
    fitting = [index for index, (listed_name, choice) in enumerate(zip(names, choices))
               if listed_name == name and (asked is None or choice_matches(choice, asked, exact))]
    distinct = list(dict.fromkeys(texts[index] for index in fitting))
    if len(distinct) == 1:
        return fitting[0]
    if not fitting:
        own = dict.fromkeys(text for text, listed_name in zip(texts, names) if listed_name == name)
        raise ScenarioError(f"the scenario lists no {algorithm.strip()!r}; its {name} choices, as they would be "
                            f"typed: {', '.join(map(shlex.quote, own))}", path="algorithm")
    raise ScenarioError(f"{algorithm.strip()!r} is ambiguous: the scenario lists {len(distinct)} {name} choices; "
                        f"name one as the tables do: {', '.join(map(shlex.quote, distinct))}", path="algorithm")


def _is_msccl(entry: AlgorithmSpec) -> bool:
    return entry.name == "msccl" and "msccl" in (entry.model_extra or {})


def _nccl_references(network: Network, op: str, sizes: Sequence[int],
                     version: str = NCCL_RELEASE) -> dict[int, tuple[str, float, float]]:
    """NCCL's own choice (``"algorithm/protocol"``), model time and the latency part of it
    (:func:`~simnet.models.nccl.algo_latency_s`) per size with NCCL release `version`, where simnet models NCCL
    on the network (none for a release NCCL's model does not know: the run says so).

    simnet's size of an all-gather (the gathered result) and of a reduce-scatter (each rank's input) is
    already the total NCCL feeds its model (:func:`~simnet.models.nccl.model_nbytes` of the per-rank count).
    """
    from simnet.models.nccl import algo_latency_s, choose, network_tuning

    try:
        tuning = network_tuning(network, version)
    except SimnetError:
        return {}
    if tuning is None:
        return {}
    references = {}
    for size in sizes:
        try:
            pick = choose(tuning, op, size)
        except SimnetError:
            continue
        references[size] = (f"{pick.algorithm}/{pick.protocol}", pick.time_s,
                            algo_latency_s(tuning, op, pick.algorithm, pick.protocol, size))
    return references


def _shown_params(params: dict[str, Any], payload: SparsePayload | None) -> str:
    """The ``params`` column of a result row: YAML keys, and the payload's description."""
    described = {_yaml_key(k): v for k, v in params.items()}
    return json.dumps(described | ({"payload": payload.describe()} if payload else {}), sort_keys=True)


def runs(point: Point, *, force: bool = False) -> Iterator[Run]:
    """Simulate every (algorithm, size) of one point, in scenario order, with its models.

    An entry that runs what an earlier one runs (:func:`repeated_algorithms`) runs once, as the earlier one.

    A schedule estimated not to fit in memory is refused before it is built,
    unless `force` (see :mod:`simnet.guards`). The point's schedules are one batch for
    :data:`simnet.engine.COMPILED_IN_BATCHES_FROM` (the same traces, sooner).

    Raises
    ------
    ScenarioError
        The first error of the point, after the runs before it were yielded
        (:func:`point_tables` goes on past an algorithm's error and records it instead).
    """
    for attempt in _attempts(point, force=force):
        if isinstance(attempt, Failure):
            raise attempt.error
        yield attempt


@dataclass(frozen=True)
class Failure:
    """An (algorithm, case) of a point that raised an error: the network cannot run it, or its parameters
    do not fit the size.

    Attributes
    ----------
    algorithm : str
        The algorithm's name.
    entry : str
        Key path of its entry in the scenario (``collective.algorithms[1]``).
    case : str
        The size (and sparse density) it failed at (``"1 MiB"``); ``""`` when it failed before any size
        (its memory estimate, or parameters derived from the topology).
    error : SimnetError
        The error, its key path in the scenario.
    """

    algorithm: str
    entry: str
    case: str
    error: SimnetError


def _case_text(size: int, payload: SparsePayload | None) -> str:
    """A case as failures name it: ``1 MiB``, or ``128 MiB density 1/128`` for a sparse payload."""
    if payload is None:
        return units.format_size(size)
    return f"{units.format_size(size)} density {format_fraction(payload.density)}"


def _attempts(point: Point, *, force: bool = False,
              on_phase: Callable[[str], None] | None = None) -> Iterator[Run | Failure]:
    """Every (algorithm, size) of one point as :func:`runs` simulates it, an error of one algorithm (at one
    size, or at all) as a :class:`Failure` in its place, and the point's other runs after it.

    Errors of the point as a whole (its network, its ``network:`` options, its list of algorithms) are raised.
    `on_phase`, if given, is called with a line naming each phase before it starts (see :func:`point_tables`).
    """
    scenario = point.scenario
    if scenario.jobs is not None:
        raise ScenarioError("a jobs scenario runs its jobs together; use run_jobs_point", path="jobs")
    phase = on_phase or (lambda text: None)
    phase("building the network")
    network = scenario.built_network(force=force)
    nranks = network.size
    options = scenario.network.simulate_kwargs(nranks)
    costs = NetworkCosts(network, overhead_s=[options["overhead_s"] * slowdown for slowdown in options["slowdown"]])
    cases = [(size, None) for size in scenario.sizes]
    if scenario.payload is not None:
        cases = [(payload.size_bytes, payload) for payload in scenario.sparse_payloads()]
    listed = _algorithm_runs(scenario, nranks)
    repeats = _repeats(listed, network)
    kept = [(index, entry) for index, entry in enumerate(listed) if index not in repeats]
    releases = [built_release(record.name, params) for _, (record, params, _, _) in kept]
    pinned = set(filter(None, releases))
    others = pinned.pop() if len(pinned) == 1 else NCCL_RELEASE
    phase(f"NCCL's own choice on {nranks:,} ranks")
    priced = {release: _nccl_references(network, scenario.collective.op, [size for size, _ in cases], release)
              for release in {release or others for release in releases}}
    estimate = _estimated_transfers([entry for _, entry in kept], network, [size for size, _ in cases])
    done = 0
    for (index, (record, params, origins, shown_extra)), release in zip(kept, releases):
        where = f"collective.algorithms[{index}]"
        references = priced[release or others]

        def fits(chosen: dict[str, Any], size: int, record: Algorithm = record) -> None:
            transfers = record.transfers(nranks, size, chosen)
            check_fits(f"{record.name} on {nranks:,} ranks (about {transfers:,} transfers)",
                       transfers * BYTES_PER_TRANSFER + nranks * BYTES_PER_GPU, force=force, path="collective",
                       lower=_shrinking(record, nranks, size, chosen))

        try:
            base = record.with_topology_defaults(network, params)
        except SimnetError as error:
            yield Failure(record.name, where, "", error)
            continue
        for size, payload in cases:
            done += 1
            step = f"{record.name} at {_case_text(size, payload)} ({done} of {len(kept) * len(cases)})"
            try:
                yield _one_run(point, network, options, costs, estimate, references, (record, base, origins,
                                                                                      shown_extra),
                               size, payload, fits, lambda text, step=step: phase(f"{step}: {text}"))
            except SimnetError as error:
                yield Failure(record.name, where, _case_text(size, payload), error)


def _one_run(point: Point, network: Network, options: dict[str, Any], costs: NetworkCosts, estimate: int,
             references: dict[int, tuple[str, float, float]], listed: tuple, size: int, payload: SparsePayload | None,
             fits: Callable[[dict[str, Any], int], None], phase: Callable[[str], None]) -> Run:
    """Build, simulate and model one listed algorithm (as :func:`_algorithm_runs` gives it, topology-derived
    defaults filled in) at one case of `point`, `phase` called before the build and the simulation; errors at
    their scenario key paths."""
    scenario = point.scenario
    record, base, origins, shown_extra = listed
    name, op, nranks = record.name, scenario.collective.op, network.size
    gamma = options["gamma_s_per_byte"]
    given = base | ({"payload": payload} if payload is not None and record.payload == "sparse" else {})
    phase("building the schedule")
    params, schedule = _built(record, given, origins, network, size, sized_by="payload" if payload else "sizes",
                              fits=fits)
    shown = _shown_params({k: _jsonable(v) for k, v in given.items() if k != "payload"} | shown_extra, payload)
    chosen = {_yaml_key(k): _jsonable(v) for k, v in resolved_changes(given, params).items()}
    phase(f"simulating {len(schedule):,} transfers")
    try:
        trace = simulate(network, schedule, **options,
                         compiled=engine._batch_compiled(options["model"], estimate, len(schedule)))
    except SimnetError as error:
        if error.path in _OPTION_PATHS or _LISTED not in origins:
            raise ScenarioError(error.message, path=_OPTION_PATHS.get(error.path, error.path)) from None
        raise ScenarioError(f"{name} on this topology: {error.message}", path=origins[_LISTED]) from None
    row = result_row(
        scenario=scenario.name,
        point=point.label,
        topology=network.name,
        op=op,
        algorithm=name,
        params=shown,
        resolved=json.dumps(chosen, sort_keys=True) if chosen else "",
        network_model=scenario.network.model,
        routing=network.routing,
        hash_seed=network.hash_seed,
        ranks=nranks,
        size_bytes=size,
        sim_time_s=trace.time_s,
        model_time_s=record.predict(costs, nranks, size, gamma_s_per_byte=gamma, **params),
        critical_path_s=critical_path_time(network, schedule, gamma, overhead_s=options["overhead_s"],
                                           start_offset_s=options["start_offset_s"],
                                           slowdown=options["slowdown"]),
        nccl_choice=references.get(size, ("", math.nan, math.nan))[0],
        nccl_model_s=references.get(size, ("", math.nan, math.nan))[1],
        nccl_latency_s=references.get(size, ("", math.nan, math.nan))[2],
        payload_kind=record.payload,
        sent_bytes_per_rank=sent_bytes_per_rank(schedule),
    )
    return Run(name, params, size, trace, row)


def _jsonable(value: Any) -> Any:
    return value.describe() if isinstance(value, TrafficMatrix) else value


def _check_jobs_scenario(scenario: Scenario, data: dict) -> None:
    if scenario.collective is not None:
        raise ScenarioError("a scenario runs either one collective over sizes or jobs, not both; remove collective "
                            "or jobs", path="jobs")
    if "sizes" in data or scenario.payload is not None:
        if "sizes" in data:
            raise ScenarioError("every job gives its own size; remove sizes", path="sizes")
        raise ScenarioError("every job gives its own payload; move it into the job's collective "
                            "(jobs.<name>.collective.payload, in place of size)", path="payload")
    if not scenario.jobs:
        raise ScenarioError("must list at least one job", path="jobs")


@dataclass(frozen=True)
class JobPlan:
    """One job of a scenario, resolved against its network (nothing built yet).

    Attributes
    ----------
    name : str
        The job's name (``<job>.<level>`` for a level of ``groups``).
    path : str
        Key path of the job in the scenario.
    communicators : tuple of tuple of int
        Network ranks of each communicator.
    start_s : float
        Start time, seconds.
    repeat : int
        Collectives per communicator.
    algorithm : str
        Algorithm name (empty for background flows).
    op : str
        Collective (``"flows"`` for background flows).
    size_bytes : int
        Size per rank (a sparse payload's dense size ``dimension * value_bytes``; of every flow for
        background flows).
    params : dict
        The algorithm's parameters, SI units, topology-derived defaults filled in (a sparse algorithm's
        :class:`~simnet.payloads.SparsePayload` as ``payload``).
    origins : dict
        Key path of each given parameter (and of ``size``, ``algorithm``, ``ranks``).
    flows : Flows or None
        The background traffic of a flows job.
    """

    name: str
    path: str
    communicators: tuple[tuple[int, ...], ...]
    start_s: float
    repeat: int
    algorithm: str = ""
    op: str = "flows"
    size_bytes: int = 0
    params: dict = field(default_factory=dict)
    origins: dict = field(default_factory=dict)
    flows: Flows | None = None


def _job_ranks_of(spec: JobSpec, where: str, network: Network, taken: list[int], collective: bool) -> tuple[int, ...]:
    placement = spec.placement
    explicit = placement.ranks if placement.kind == "explicit" else None
    if isinstance(spec.ranks, list):
        if explicit is not None:
            raise ScenarioError("give the ranks either as a list or as an explicit placement", path=f"{where}.ranks")
        explicit = spec.ranks
    if explicit is not None:
        key = f"{where}.ranks" if isinstance(spec.ranks, list) else f"{where}.placement.ranks"
        if isinstance(spec.ranks, int) and spec.ranks != len(explicit):
            raise ScenarioError(f"asks for {spec.ranks} GPUs but the placement lists {len(explicit)}",
                                path=f"{where}.ranks")
        if len(set(explicit)) != len(explicit) or len(explicit) < 2:
            raise ScenarioError(f"must be at least 2 distinct ranks, got {explicit}", path=key)
        outside = [r for r in explicit if r >= network.size]
        if outside:
            raise ScenarioError(f"rank {outside[0]} is not among the network's {network.size} GPUs", path=key)
        return tuple(explicit)
    if placement.kind == "explicit":
        raise ScenarioError("an explicit placement needs its list of ranks", path=f"{where}.placement.ranks")
    blocked = taken if collective else ()
    free = network.size - len(set(blocked))
    if spec.ranks is None and free == 0:
        raise ScenarioError(f"ranks: all, but earlier jobs took all {network.size} GPUs; give an explicit list of "
                            "ranks to share GPUs with them (ranks: [0, 1, ...])", path=f"{where}.ranks")
    count = spec.ranks if spec.ranks is not None else free
    if placement.kind == "random" and count == free:
        raise ScenarioError(f"a random placement of all {free} free GPUs is the contiguous one whatever its seed "
                            "(random picks which GPUs, then ranks them in GPU order); use kind shuffled for a "
                            "seeded random rank order, or ask for fewer GPUs", path=f"{where}.placement")
    try:
        return place(network, placement.kind, count, taken=blocked, seed=placement.seed, stride=placement.stride)
    except SimnetError as error:
        key = "ranks" if error.path == "ranks" else f"placement.{error.path}"
        raise ScenarioError(error.message, path=f"{where}.{key}") from None


def _job_collective(raw: dict[str, tuple[Any, str]], network: Network, members: tuple[int, ...],
                    base: Path | None) -> tuple[str, str, int, dict, dict]:
    """(op, algorithm, size_bytes, params, origins) of a job's collective; `raw` maps keys to (value, key path);
    a matrix file starts at `base`."""
    op, op_path = raw["op"]
    name, name_path = raw["algorithm"]
    if name not in ALGORITHMS:
        raise ScenarioError(_unknown("algorithm", str(name), sorted(ALGORITHMS)), path=name_path)
    record = ALGORITHMS[name]
    if op not in record.ops:
        raise ScenarioError(f"algorithm {name!r} computes {', '.join(record.ops)}, not {op} "
                            f"(algorithms for {op}: {', '.join(ALGORITHMS.for_op(op))})", path=name_path)
    payload = _job_payload(*raw["payload"], base) if "payload" in raw else None
    if record.payload == "sparse" and payload is None:
        raise ScenarioError(f"{name!r} is a sparse all-reduce and needs a sparse payload in place of size "
                            "(payload: {kind: sparse, dimension: 16M, density: 1/128}: docs/sparse.md)",
                            path=name_path)
    if payload is not None and "size" in raw:
        raise ScenarioError("a sparse payload fixes the size (dimension * value_bytes); remove size",
                            path=raw["size"][1])
    if payload is not None:
        size_bytes = payload.size_bytes
    elif "size" in raw:
        size, size_path = raw["size"]
        try:
            size_bytes = units.parse_payload_size(size)
        except SimnetError as error:
            raise ScenarioError(error.message, path=size_path) from None
    else:
        raise ScenarioError("missing; give the size of the collective (or a sparse payload, which fixes it)",
                            path=f"{op_path.rsplit('.', 1)[0]}.size")
    what = f"algorithm {name!r}"
    params: dict[str, Any] = {}
    matrix = raw.get("matrix", (None, f"{name_path.rsplit('.', 1)[0]}.matrix"))
    for key, (value, path) in raw.items():
        if key in ("op", "algorithm", "size", "matrix", "payload"):
            continue
        params |= call_with_units(record.builder, {key: value}, path=path.rsplit(".", 1)[0], what=what,
                                  skip=("nranks", "size_bytes", "matrix"), required=False)
    if "matrix" in {p.name for p in record.parameters}:
        params |= _matrix_param(op, *matrix, base)
    elif matrix[0] is not None:
        raise ScenarioError(f"{what} takes no traffic matrix", path=matrix[1])
    if record.payload == "sparse":
        params["payload"] = payload
    origins = {key: path for key, (_, path) in raw.items()}
    try:
        derived = record.with_topology_defaults(network, params, ranks=members)
    except SimnetError as error:
        raise ScenarioError(error.message, path=name_path) from None
    try:
        params = record.resolved(network, size_bytes, derived, ranks=members)
    except SimnetError as error:
        key = _yaml_key(error.path)
        raise ScenarioError(f"{name}: {error.message}", path=origins.get(key, name_path)) from None
    return op, name, size_bytes, params, origins


def plan_jobs(scenario: Scenario, network: Network) -> list[JobPlan]:
    """The jobs of a ``jobs:`` scenario, placed on `network` in the order written.

    Raises
    ------
    ScenarioError
        Naming the job's key path (``jobs.<name>.placement``, ``jobs.<name>.groups.dp``, ...).
    """
    plans: list[JobPlan] = []
    taken: list[int] = []
    for name, spec in (scenario.jobs or {}).items():
        where = f"jobs.{name}"
        if (spec.collective is None) == (spec.flows is None):
            message = "give a collective or flows, not both" if spec.collective else "missing; give a collective or flows"
            raise ScenarioError(message, path=f"{where}.collective")
        ranks = _job_ranks_of(spec, where, network, taken, spec.collective is not None)
        if spec.flows is not None:
            if spec.groups:
                raise ScenarioError("background flows have no communicator groups", path=f"{where}.groups")
            flows = spec.flows
            try:
                background = Flows(flows.pattern, flows.load, flows.size, flows.seed, flows.duration)
            except SimnetError as error:
                raise ScenarioError(error.message, path=f"{where}.flows.{_yaml_key(error.path)}") from None
            plans.append(JobPlan(name, where, (ranks,), spec.start, spec.repeat, flows.pattern, "flows", flows.size,
                                 origins={"ranks": f"{where}.ranks"}, flows=background))
            continue
        taken.extend(ranks)
        groups = spec.groups or {}
        for level, group in groups.items():
            if "ranks" not in group:
                raise ScenarioError(_missing("ranks", [str(key) for key in group], "an integer ≥ 1 or 'rest'"),
                                    path=f"{where}.groups.{level}.ranks")
        try:
            levels = communicators(ranks, {level: group.get("ranks") for level, group in groups.items()} or None)
        except SimnetError as error:
            raise ScenarioError(error.message, path=f"{where}.groups.{error.path}") from None
        size = None if spec.collective.size is None else units.format_exact(spec.collective.size, "size")
        base = {key: (value, f"{where}.collective.{key}")
                for key, value in {"op": spec.collective.op, "algorithm": spec.collective.algorithm,
                                   "size": size, **(spec.collective.model_extra or {})}.items()
                if key != "size" or value is not None}
        for level, members in levels.items():
            override = {key: (value, f"{where}.groups.{level}.{key}")
                        for key, value in groups.get(level, {}).items() if key != "ranks"}
            raw = {key: value for key, value in base.items()
                   if not (key in ("size", "payload") and ("size" in override or "payload" in override))}
            raw |= override
            op, algorithm, size, params, origins = _job_collective(raw, network, members[0], scenario.base_dir)
            path = f"{where}.groups.{level}" if level else where
            origins["ranks"] = path if level else f"{where}.ranks"
            plans.append(JobPlan(f"{name}.{level}" if level else name, path, members, spec.start, spec.repeat,
                                 algorithm, op, size, params, origins))
    return plans


def _build_job(plan: JobPlan, network: Network, *, force: bool) -> Job:
    if plan.flows is not None:
        return Job(plan.name, plan.communicators, flows=plan.flows, start_s=plan.start_s, repeat=plan.repeat)
    record = ALGORITHMS[plan.algorithm]
    width = len(plan.communicators[0])
    transfers = record.transfers(width, plan.size_bytes, plan.params) * len(plan.communicators) * plan.repeat
    repeat = [f"repeat ({plan.repeat} now)"] if plan.repeat > 1 else []
    check_fits(f"job {plan.name} (about {transfers:,} transfers)", transfers * BYTES_PER_TRANSFER, force=force,
               path=plan.path, lower=_shrinking(record, width, plan.size_bytes, plan.params) + repeat)
    try:
        schedule = record.builder(width, plan.size_bytes, **plan.params)
    except SimnetError as error:
        key = _yaml_key(error.path).split(".")[0]
        where = plan.origins.get(key) or plan.origins.get({"nranks": "ranks"}.get(key, key)) or plan.origins["algorithm"]
        raise ScenarioError(error.message, path=where) from None
    if schedule.switches:
        _check_switches(plan, network, schedule)
    return Job(plan.name, plan.communicators, schedule=schedule, start_s=plan.start_s, repeat=plan.repeat)


def _check_switches(plan: JobPlan, network: Network, schedule: Schedule) -> None:
    """Refuse a job whose in-network reduction has no reduce-capable switch for one of its communicators, naming
    the job (or its level of groups) and where its algorithm was given."""
    origin = plan.origins["algorithm"]
    for members in plan.communicators:
        try:
            network.place(members, schedule.switches)
        except SimnetError as error:
            if origin.startswith(f"{plan.path}."):
                raise ScenarioError(f"{plan.algorithm}: {error.message}", path=origin) from None
            raise ScenarioError(f"{plan.algorithm} (from {origin}): {error.message}", path=plan.path) from None


def run_jobs_point(point: Point, *, force: bool = False) -> JobsResult:
    """Run the jobs of one point of a ``jobs:`` scenario together, then each alone (:func:`simnet.jobs.run_jobs`).

    The frames carry the scenario's name and the point's label; ``interference`` and
    ``timeline`` get a ``point`` column first.
    """
    scenario = point.scenario
    if scenario.jobs is None:
        raise ScenarioError("this scenario has no jobs; run it with run_point", path="jobs")
    network = scenario.built_network(force=force)
    jobs = [_build_job(plan, network, force=force) for plan in plan_jobs(scenario, network)]
    options = scenario.network.simulate_kwargs(network.size)
    try:
        result = run_jobs(network, jobs, **options)
    except SimnetError as error:
        raise ScenarioError(error.message, path=_OPTION_PATHS.get(error.path, f"jobs.{error.path}")) from None
    frame = result.jobs.assign(scenario=scenario.name, point=point.label)
    extra = {name: table.assign(point=point.label)[["point", *columns]]
             for name, table, columns in (("interference", result.interference, INTERFERENCE_COLUMNS),
                                          ("timeline", result.timeline, TIMELINE_COLUMNS))}
    return JobsResult(frame, extra["timeline"], extra["interference"], result.traces)


def point_tables(point: Point, *, force: bool = False,
                 on_phase: Callable[[str], None] | None = None) -> dict[str, list[dict]]:
    """The result rows of one point as plain records: ``{"rows": [...], "failed": [...]}``, and for a ``jobs:``
    scenario ``"rows"``, ``"interference"`` and ``"timeline"`` (see :func:`run_jobs_point`).

    An algorithm the point cannot run (an error of building, resolving or simulating its schedule, or of its
    memory estimate) does not stop the others: its error is one record of ``"failed"``
    (:data:`simnet.analysis.FAILURE_COLUMNS`) per algorithm and error, naming the sizes it failed at, and the
    sizes it ran at keep their rows; each record also holds the first such error itself (``"error"``).

    `on_phase`, if given, is called with one line before each long phase of a collective's point (building the
    network, NCCL's choice, and each run's schedule and simulation: ``"nccl at 64 MiB (1 of 4): simulating
    621,568 transfers"``), so a caller can show where a long point is.

    Raises
    ------
    SimnetError
        An error of the point as a whole: its network, its ``network:`` options, its list of algorithms, or
        any error of a ``jobs:`` scenario.
    """
    if point.scenario.jobs is None:
        rows, failed = [], {}
        cases = len(point.scenario.sizes) or len(point.scenario.sparse_payloads())
        for attempt in _attempts(point, force=force, on_phase=on_phase):
            if isinstance(attempt, Run):
                rows.append(attempt.row)
                continue
            error = attempt.error
            key = (attempt.entry, error.path, error.message)
            failed.setdefault(key, {"index": point.index, "point": point.label, "algorithm": attempt.algorithm,
                                    "entry": attempt.entry, "sizes": [], "path": error.path,
                                    "message": error.message, "error": error})
            if attempt.case:
                failed[key]["sizes"].append(attempt.case)
        for record in failed.values():
            record["sizes"] = ", ".join(record["sizes"]) if 0 < len(record["sizes"]) < cases else "all"
        frame = pd.DataFrame(rows, columns=list(RESULT_COLUMNS))
        return {"rows": frame.to_dict(orient="records"), "failed": list(failed.values())}
    result = run_jobs_point(point, force=force)
    return {"rows": result.jobs.to_dict(orient="records"),
            "interference": result.interference.to_dict(orient="records"),
            "timeline": result.timeline.to_dict(orient="records")}


def run_point(point: Point, *, force: bool = False) -> pd.DataFrame:
    """Result rows of one point: every (algorithm, size) beside its models, or every job.

    Returns
    -------
    pandas.DataFrame
        One row per (algorithm, size) with the columns of
        :data:`simnet.analysis.RESULT_COLUMNS`; for a ``jobs:`` scenario one row per
        job with :data:`simnet.analysis.JOB_COLUMNS` (see :func:`run_jobs_point`).
    """
    if point.scenario.jobs is not None:
        return run_jobs_point(point, force=force).jobs
    rows = [r.row for r in runs(point, force=force)]
    return pd.DataFrame(rows, columns=list(RESULT_COLUMNS))


def run(scenario: Scenario, *, force: bool = False) -> pd.DataFrame:
    """Run every point of `scenario` in this process and concatenate the rows.

    Failures are handled as :func:`simnet.sweep.run_sweep` handles them (it runs the points,
    with no output directory): an algorithm a point cannot run, or a point whose scenario does
    not validate, fails alone, every other run goes on, and the error raised at the end holds
    the rows of what ran. For sweeps on several processes or a cluster, with results kept on
    disk as they finish, call :func:`simnet.sweep.run_sweep` itself.

    Returns
    -------
    pandas.DataFrame
        One row per (point, algorithm, size) with the columns of
        :data:`simnet.analysis.RESULT_COLUMNS`; for a ``jobs:`` scenario one row per
        (point, job) with :data:`simnet.analysis.JOB_COLUMNS`, whose per-link tables
        (``interference``, ``timeline``) and traces :func:`run_jobs_point` gives; after
        ``point``, one column per swept key (:func:`swept_columns`).

    Raises
    ------
    simnet.errors.SweepFailed
        When something failed, after the rest ran: its ``results`` are the rows of what ran, its
        ``failures`` list what failed (:data:`simnet.analysis.FAILURE_COLUMNS`), and its message
        names the scenario file (:attr:`Scenario.source`), the first failure's point by index and
        label, key path and error, and how many more failed. A scenario of one point of which
        nothing ran raises that point's own error, naming the file.
    simnet.errors.SweepInterrupted
        On Ctrl-C, as :func:`simnet.sweep.run_sweep`: the first lets the running point finish, the second
        aborts it.
    """
    from simnet.sweep import run_sweep

    points = expand(scenario, source=scenario.source, force=force)
    try:
        return run_sweep(points, force=force)
    except SimnetError as error:
        raise error.at(source=scenario.source) from None


CURVE_COLUMNS = ("scenario", "point", "topology", "op", "algorithm", "params", "payload_kind", "ranks", "size_bytes",
                 "model_time_s")
"""Columns of :func:`model_curves`."""


def model_curves(points: Sequence[Point], along: str, values: Sequence[float], *, force: bool = False) -> pd.DataFrame:
    """Closed-form times of every algorithm of every point, along one variable beyond the runs' own cases.

    Parameters
    ----------
    points : sequence of Point
        Points of a scenario (see :func:`expand`).
    along : {"size", "payload.density"}
        ``"size"``: every algorithm at each payload size in `values` (bytes); a
        sparse payload keeps its density and takes the dimension
        ``size // value_bytes`` (its dense size is then that many values).
        ``"payload.density"``: sparse payloads at each density in `values`, at each
        of the point's dimensions (a point without a sparse payload gives no rows).
    values : sequence of float
        Where to evaluate, e.g. 32 sizes spaced evenly in log between the smallest
        and largest size run.
    force : bool, optional
        Build networks that look too large for this machine.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`CURVE_COLUMNS`, one row per (point, algorithm, case, value)
        whose closed form gives a time; ``params`` is written as in result rows.
        A value the closed form refuses (a size the algorithm cannot split) is left out,
        and so is a point whose scenario does not validate (:attr:`Point.error`).
    """
    if along not in ("size", "payload.density"):
        raise ScenarioError(f"must be 'size' or 'payload.density', got {along!r}", path="along")
    rows = []
    for point in valid_points(points):
        scenario = point.scenario
        if scenario.collective is None:
            continue
        network = scenario.built_network(force=force)
        options = scenario.network.simulate_kwargs(network.size)
        gamma = options["gamma_s_per_byte"]
        costs = NetworkCosts(network, overhead_s=[options["overhead_s"] * slowdown for slowdown in options["slowdown"]])
        payloads = scenario.sparse_payloads()
        if along == "size":
            bases = list({p.density: p for p in payloads}.values()) or [None]
            cases = [_resized(base, value) for base in bases for value in values]
        else:
            bases = list({p.dimension: p for p in payloads}.values())
            cases = [(base.size_bytes, dataclasses.replace(base, density=float(value)))
                     for base in bases for value in values]
        listed = _algorithm_runs(scenario, network.size)
        repeats = _repeats(listed, network)
        for record, params, _, _ in (entry for index, entry in enumerate(listed) if index not in repeats):
            if record.model is None:
                continue
            name = record.name
            params = record.with_topology_defaults(network, params)
            for size, payload in cases:
                given = params | ({"payload": payload} if payload is not None and record.payload == "sparse" else {})
                try:
                    resolved = record.resolved(network, size, given)
                    time_s = record.predict(costs, network.size, size, gamma_s_per_byte=gamma, **resolved)
                except SimnetError:
                    continue
                rows.append((scenario.name, point.label, network.name, scenario.collective.op, name,
                             _shown_params({k: _jsonable(v) for k, v in params.items()}, payload), record.payload,
                             network.size, size, time_s))
    return pd.DataFrame(rows, columns=list(CURVE_COLUMNS))


def _resized(payload: SparsePayload | None, size: float) -> tuple[int, SparsePayload | None]:
    """A case of `size` bytes: the size itself, or a sparse payload of that dense size."""
    if payload is None:
        return max(1, round(size)), None
    dimension = max(1, round(size) // payload.value_bytes)
    return dimension * payload.value_bytes, dataclasses.replace(payload, dimension=dimension)
