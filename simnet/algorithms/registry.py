"""The algorithm record and the cost interface that closed forms are written against.

Every algorithm is one :class:`Algorithm` record, defined in its family's module
next to its builder and its closed form, and collected into the one registry
:data:`simnet.algorithms.ALGORITHMS`. The command line's ``algorithms``, scenario
validation, ``tune``, ``predict``, the memory guard and the tests all read the
record, so registering an algorithm is all it takes to offer it everywhere.

Closed forms are written against :class:`PairCosts`, which gives the α and β of
sets of concurrent rank-to-rank messages: algorithms know ranks, never links.
:class:`simnet.models.alphabeta.NetworkCosts` reads them off a network.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from simnet.algorithms.hierarchy import hierarchy_factors
from simnet.errors import SimnetError, UnknownName, did_you_mean
from simnet.schedule import COLLECTIVES, Schedule

__all__ = ["PairCosts", "Parameter", "Algorithm", "TOPOLOGY_DEFAULT", "Stage", "pipelined_time", "steps_time",
           "Registry", "resolved_changes", "chunk_variants"]


class PairCosts(Protocol):
    """α and β of rank-to-rank messages sent at the same time (see :mod:`simnet.models.alphabeta`)."""

    def pairs(self, pairs: Sequence[tuple[int, int]]) -> list[tuple[float, float, float]]:
        """Per ``(src, dst)`` of a set of concurrent messages: ``(α_s, β_s_per_byte, sharing)``.

        A message of ``m`` bytes takes ``α + m β sharing`` alone on its route but
        sharing each link fairly with the others of the set.
        """

    def step(self, pairs: Sequence[tuple[int, int]], message_bytes: float) -> tuple[float, float, float]:
        """``(α, β, sharing)`` of the slowest message of a set of concurrent messages of `message_bytes`."""

    def pattern(self, pairs: Sequence[tuple[int, int]]) -> tuple[float, float]:
        """``(largest α, largest β · sharing)`` of a set of concurrent messages."""

    def load(self, traffic: Sequence[tuple[Sequence[tuple[int, int]], float]]) -> float:
        """Seconds the busiest link needs to carry `traffic`: ``(pairs, bytes each pair sends)`` entries."""


@dataclass(frozen=True)
class Stage:
    """One stage of a pipelined closed form (see :func:`pipelined_time`).

    Attributes
    ----------
    path_s : float
        Time for one piece to cross the stage when it is alone in it.
    interval_s : float
        Time the stage's busiest link needs per piece: pieces follow each other
        this far apart when the stage is the bottleneck.
    busy_s : float
        Time the stage's busiest link is busy with all the pieces, plus the latency
        the last one still needs to arrive.
    first_s : float, optional
        Time the first piece needs through this stage when the pieces are many
        (``path_s`` by default); the bandwidth bound charges it for the stages
        that are not the bottleneck.
    """

    path_s: float
    interval_s: float
    busy_s: float
    first_s: float | None = None


def pipelined_time(stages: Sequence[Stage], pieces: int, *, interval_s: float | None = None,
                   load_s: float = 0.0) -> float:
    """Time of `pieces` pieces pipelined through consecutive `stages`, seconds.

    ``T = max( Σ_i path_i + (C - 1) I ,  max_i ( busy_i + Σ_{j≠i} first_j ),  load )``:
    the first piece's way through every stage with the others following ``I``
    apart; one stage's busiest link busy back to back while the first piece makes
    its way through the other stages; or `load`, the time the busiest link needs
    for the traffic of all pieces and stages together. ``I`` is `interval_s` (the
    busiest link's time per piece over all stages, when the caller knows it;
    stages crossing one link cannot overlap on it) or else the slowest stage's
    interval. One stage with ``path = L(α + mβ)``, ``interval = mβ`` and
    ``busy = L C m β + α`` gives the pipelined ring of Patarasuk & Yuan (2009).
    """
    if not stages:
        return load_s
    firsts = [s.path_s if s.first_s is None else s.first_s for s in stages]
    interval = max(s.interval_s for s in stages) if interval_s is None else interval_s
    latency_bound = sum(s.path_s for s in stages) + (pieces - 1) * interval
    total_first = sum(firsts)
    bandwidth_bound = max(s.busy_s + total_first - first if total_first != first else s.busy_s
                          for s, first in zip(stages, firsts))
    return max(latency_bound, bandwidth_bound, load_s)


def steps_time(costs: PairCosts, steps: Sequence[tuple[Sequence[tuple[int, int]], float, float]],
               pieces: int) -> float:
    """Time of `pieces` pieces each going through consecutive steps of concurrent messages, seconds.

    Each step is ``(pairs, message_bytes, reduction_s)``: every pair sends one
    message of that size per piece (``reduction_s`` is the γ cost of a reducing
    step). A piece takes ``α_k + m β_k s_k`` (+ γ) at step ``k`` (:meth:`PairCosts.step`);
    later pieces follow one piece-load of the busiest link behind
    (:meth:`PairCosts.load` of one piece's traffic, ``I``), and no link can carry
    all pieces faster than ``C I``::

        T = max( Σ_k (α_k + m_k β_k s_k + γ_k) + (C - 1) I ,  C I + min_k α_k )

    For ``C = 1`` this is ``Σ_k (α_k + m_k β_k s_k + γ_k)``.
    """
    stages = []
    for pairs, message, reduction in steps:
        alpha, beta, sharing = costs.step(pairs, message)
        occupancy = message * beta * sharing
        stages.append(Stage(alpha + occupancy + reduction, occupancy, pieces * occupancy + alpha))
    if not stages:
        return 0.0
    interval = costs.load([(pairs, message) for pairs, message, _ in steps if pairs])
    alpha = min(costs.step(pairs, message)[0] for pairs, message, _ in steps if pairs)
    return pipelined_time(stages, pieces, interval_s=interval, load_s=pieces * interval + alpha)


@dataclass(frozen=True)
class Parameter:
    """One keyword parameter of an algorithm's builder.

    Attributes
    ----------
    name : str
        Keyword of the builder (a unit suffix ``_bytes``, ``_s``, ``_Bps`` says how
        a scenario's value is parsed).
    type : str
        Type hint as written in the builder.
    default : object
        Default value (``None`` when required or derived from the topology).
    decided_by : str
        What decides the value on a network when a run does not give it (the
        record's ``resolve``), e.g. NCCL's choice of algorithm per size; ``""`` for a
        parameter whose default is what runs.
    """

    name: str
    type: str
    default: object
    decided_by: str = ""


TOPOLOGY_DEFAULT = "read off the topology's hierarchy on a network (simnet.algorithms.hierarchy)"
"""What :attr:`Parameter.decided_by` says of a parameter an :attr:`Algorithm.defaults` derives."""


def _no_variants(nranks: int, factors: Callable[[Sequence[str]], tuple[int, ...]] | None, chunk_counts,
                 channel_counts) -> list[dict]:
    return []


def chunk_variants(nranks: int, factors: Callable[[Sequence[str]], tuple[int, ...]] | None, chunk_counts,
                   channel_counts) -> list[dict]:
    """Tuning variants of an algorithm whose only knob is its pipelined ``chunks``: one per chunk count."""
    return [{"chunks": chunks} for chunks in chunk_counts]


def _ring_shaped(nranks: int, size_bytes: int, params: Mapping[str, Any]) -> int:
    return 2 * nranks * (nranks - 1) * int(params.get("chunks", 1)) * int(params.get("channels", 1))


@dataclass(frozen=True)
class Algorithm:
    """Registry entry of an algorithm: what it computes, how to build it, what it costs.

    Attributes
    ----------
    name : str
        Name used in scenarios and on the command line.
    ops : tuple of str
        Collectives the builder computes (:data:`simnet.schedule.COLLECTIVES`).
    builder : callable
        ``builder(nranks, size_bytes, **params) -> Schedule``; its keyword-only
        parameters, type hints and defaults are the algorithm's parameters.
    description : str
        One line.
    formula : str
        The α-β(-γ) cost, as text.
    model : callable or None
        Closed form ``model(costs, nranks, size_bytes, *, gamma_s_per_byte, **params)
        -> seconds`` with ``costs`` a :class:`PairCosts`; it honours every parameter
        the builder takes (chunks, channels, factors, ...).
    no_model : str
        Why there is no closed form, when `model` is ``None``.
    citation : str
        Where the algorithm is described.
    defaults : callable, optional
        ``defaults(factors) -> dict``: parameters derived from the topology's
        hierarchy, where ``factors(levels)`` gives the group size per hierarchy
        level (:func:`simnet.algorithms.hierarchy.hierarchy_factors`; the level
        ``"torus"`` gives a torus' ``dims`` innermost first), e.g. the ``factors``
        of BlueConnect.
    variants : callable, optional
        ``variants(nranks, factors, chunk_counts, channel_counts) -> list of dict``:
        the parameter choices the tuner tries (``factors`` is ``None`` on a flat
        topology); empty when the algorithm is not tuned.
    transfers : callable, optional
        ``transfers(nranks, size_bytes, params) -> int``: an upper estimate of the
        number of transfers of the schedule built at `size_bytes`, for the memory
        guard (default: a ring's ``2 p (p - 1) C K``).
    payload : {"dense", "sparse"}
        Whether the builder takes a sparse ``payload`` instead of dense sizes.
    lossy : bool, optional
        Whether its result differs from the exact collective by design (``gtopk``: a
        global top-k, not the sum); result tables never name it the fastest beside
        exact choices and label it ``(lossy)``.
    supports : callable, optional
        ``supports(nranks) -> bool`` (default: every ``nranks ≥ 2``).
    resolve : callable, optional
        ``resolve(network, size_bytes, params, ranks=None) -> params``: fills in
        parameters that depend on the network (or on the communicator of network
        ranks `ranks`) and the size, as a library decides them at run time (NCCL's
        channel count and protocol, ``protocol="auto"``); called by scenarios, jobs
        and the tuner before every build.
    decided_by : mapping of str to str, optional
        Parameters `resolve` always decides when a run does not give them, and what
        decides them (:attr:`Parameter.decided_by`); their builder default is then
        not what runs, so :attr:`parameters` reports none.
    """

    name: str
    ops: tuple[str, ...]
    builder: Callable[..., Schedule]
    description: str
    formula: str = ""
    model: Callable[..., float] | None = None
    no_model: str = ""
    citation: str = ""
    defaults: Callable[[Callable[[Sequence[str]], tuple[int, ...]]], dict] | None = None
    variants: Callable[..., list[dict]] = _no_variants
    transfers: Callable[[int, int, Mapping[str, Any]], int] = _ring_shaped
    payload: str = "dense"
    lossy: bool = False
    supports: Callable[[int], bool] = field(default=lambda nranks: nranks >= 2)
    resolve: Callable[..., dict] | None = None
    decided_by: Mapping[str, str] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        unknown = [op for op in self.ops if op not in COLLECTIVES]
        if not self.ops or unknown:
            raise ValueError(f"algorithm {self.name!r}: ops must be among {COLLECTIVES}, got {self.ops!r}")
        if (self.model is None) == (not self.no_model):
            raise ValueError(f"algorithm {self.name!r}: give a closed form or say why there is none (no_model)")

    @property
    def collective(self) -> str:
        """The (first) collective the algorithm computes."""
        return self.ops[0]

    @property
    def parameters(self) -> tuple[Parameter, ...]:
        """Keyword parameters of the builder, with their type hints and defaults (``None`` if required, or if
        decided on the network: :attr:`decided_by`, or read off the topology's hierarchy: :attr:`defaults`,
        whose builder default only a bare builder call uses)."""
        hints = inspect.get_annotations(self.builder, eval_str=False)
        decided = {**dict.fromkeys(self.derived, TOPOLOGY_DEFAULT), **self.decided_by}
        return tuple(
            Parameter(p.name, str(hints.get(p.name, "")),
                      None if p.default is p.empty or p.name in decided else p.default,
                      decided.get(p.name, ""))
            for p in inspect.signature(self.builder).parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        )

    @property
    def derived(self) -> tuple[str, ...]:
        """Names of the parameters :attr:`defaults` derives from the topology's hierarchy."""
        return () if self.defaults is None else tuple(self.defaults(lambda levels: (2, 1)))

    def build(self, nranks: int, size_bytes: int, **params) -> Schedule:
        """The schedule for `nranks` ranks and `size_bytes` bytes per rank."""
        return self.builder(nranks, size_bytes, **params)

    def with_topology_defaults(self, network: Any, params: dict, ranks: Any = None) -> dict:
        """`params` over the parameters :attr:`defaults` derives from the hierarchy of the network's GPUs (of
        the network ranks `ranks`, if given), e.g. BlueConnect's ``factors`` or the ``gpus_per_node`` of
        ``sparse_ring_ring``; `params` itself for an algorithm that derives nothing.

        Raises
        ------
        SimnetError
            When the GPUs break the hierarchy (not numbered hierarchy-major, groups of different sizes) and
            `params` does not give every parameter the hierarchy would (``path`` the first missing one).
        """
        if self.defaults is None:
            return params
        gpus = list(network.ranks) if ranks is None else [network.ranks[rank] for rank in ranks]
        try:
            derived = self.defaults(functools.partial(hierarchy_factors, network.graph, ranks=gpus))
        except SimnetError as error:
            missing = [key for key in self.derived if key not in params]
            if missing:
                raise SimnetError(f"cannot derive {', '.join(missing)} from the hierarchy of these GPUs "
                                  f"({error.message}); give it", path=missing[0]) from None
            derived = {}
        return {**derived, **params}

    def on_network(self, network: Any, size_bytes: int, params: dict, ranks: Any = None) -> dict:
        """The parameters a run builds on `network` (on the communicator of network ranks `ranks`, if given) at
        `size_bytes`: `params` over the topology's defaults (:meth:`with_topology_defaults`), then what the
        algorithm decides at run time filled in (:meth:`resolved`), as :func:`simnet.models.predict` decides them;
        a scenario run takes the same two steps, the first once per algorithm and the second per size."""
        return self.resolved(network, size_bytes, self.with_topology_defaults(network, params, ranks), ranks)

    def resolved(self, network: Any, size_bytes: int, params: dict, ranks: Any = None) -> dict:
        """`params` with what the algorithm decides on `network` (on the communicator of network ranks `ranks`,
        if given) at `size_bytes` filled in (:attr:`resolve`); `params` itself for an algorithm that decides
        nothing."""
        return params if self.resolve is None else self.resolve(network, size_bytes, params, ranks=ranks)

    def predict(self, costs: PairCosts, nranks: int, size_bytes: int, *, gamma_s_per_byte: float = 0.0,
                **params) -> float:
        """The closed form's time, seconds (``nan`` when the algorithm has none)."""
        if self.model is None:
            return math.nan
        return self.model(costs, nranks, size_bytes, gamma_s_per_byte=gamma_s_per_byte, **params)


def resolved_changes(given: Mapping[str, Any], resolved: Mapping[str, Any]) -> dict[str, Any]:
    """The values :meth:`Algorithm.resolved` added to `given` or changed in it.

    >>> resolved_changes({"protocol": "auto"}, {"protocol": "ll", "channels": 2})
    {'protocol': 'll', 'channels': 2}
    """
    return {key: value for key, value in resolved.items() if key not in given or given[key] != value}


class Registry(Mapping):
    """Name -> :class:`Algorithm`, read-only, in registration order.

    Raises
    ------
    ValueError
        When two records share a name.
    """

    def __init__(self, records: Sequence[Algorithm]) -> None:
        entries: dict[str, Algorithm] = {}
        for record in records:
            if record.name in entries:
                raise ValueError(f"algorithm {record.name!r} is registered twice")
            entries[record.name] = record
        self._entries = entries

    def __getitem__(self, name: str) -> Algorithm:
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            raise UnknownName(f"unknown algorithm {name!r}{did_you_mean(str(name), self._entries)}; known: "
                              f"{', '.join(self._entries)}", path="algorithm") from None

    def __iter__(self):
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({', '.join(self._entries)})"

    def for_op(self, op: str) -> list[str]:
        """Names of the algorithms that compute collective `op`, sorted."""
        return sorted(name for name, record in self._entries.items() if op in record.ops)
