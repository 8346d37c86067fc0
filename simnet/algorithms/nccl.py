"""NCCL's all-reduce algorithms as schedules: channels of rings and trees, NVLS and CollNet in-network reductions.

Each builder lays out the data and the messages the way NCCL runs them on servers
of ``gpus_per_node`` GPUs (ranks hierarchy-major, as simnet's cluster builders
number them), and the protocol (``"simple"``, ``"ll"``, ``"ll128"``) sets how the
data is cut, what crosses the wire and what each message waits for:

``nccl_ring``
    ``channels`` rings. Channel ``c`` enters every server at its GPU
    ``e = c mod g`` (the GPU of rail ``e``), visits the server's GPUs in the order
    ``e, e+1, ...`` (``e, e-1, ...`` for the second channel of a rail), ending at a
    GPU that reaches the NIC of rail ``e`` over PCIe (``exits``, from the network),
    and leaves for the next server's GPU ``e``, so consecutive servers talk over
    rail ``e`` (NCCL's graph search with ``crossNic = 0``, ``ncclTopoSearchCheckNet``
    in ``src/graph/search.cc``; where no GPU but ``e`` reaches that NIC, a cluster
    built with ``pxn=True`` relays the last hop over NVLink, as NCCL's PXN does).
    Each channel all-reduces its share of the
    payload as a ring reduce-scatter then all-gather, its blocks cut into slices
    that pipeline over the ring.
``nccl_tree``
    per channel, a chain through every server's GPUs starting at ``e`` and, between
    servers, NCCL's binary tree over the servers (the first half of the channels
    use tree 0, the duplicates tree 1: ``ncclGetDtree``); chunks are reduced up and
    broadcast down concurrently (``runTreeSplit``).
``nvls``
    one server, NVSwitch multicast and in-switch reduction: GPU ``j`` owns one
    ``g``-th of the payload; the switch sums that part from every GPU and returns it
    to ``j`` (``multimem.ld_reduce``), which stores it back through the switch to
    all GPUs (``multimem.st``).
``nvls_tree``
    several servers: per server an NVLS reduction to ``heads`` head GPUs (one per
    NIC), NCCL's double binary tree between the servers' heads (chunks alternating
    between the two trees), and an NVLS multicast back.
``collnet_direct``, ``collnet_chain``
    InfiniBand SHARP: the GPUs of a server reduce their part onto its head GPU (all
    directly, or along a chain), the heads of all servers add it up along the
    fabric's aggregation tree (the heads of a leaf in that leaf when a rail spans
    several leaves, the leaves' sums in the lowest reduce-capable switch common to
    the rail), which returns the sum down the tree to every head, and the heads
    broadcast it inside their server.

Protocols (NCCL 2.30.7, ``src/include/device.h``, ``collectives.h``,
``enqueue.cc`` ``calcCollChunking``): ``"simple"`` sends the data as is, a ring in
slices of 1 MiB (chunks of 2 MiB in 2 slices) and a tree in 512 KiB chunks;
``"ll"`` sends 8-byte flags with every 8 bytes of data (16-byte lines: twice the
bytes on the wire) in 32 KiB chunks; ``"ll128"`` one 8-byte flag per 120 bytes
(128-byte lines) in chunks of 576000 bytes. NVLS cuts 128 KiB chunks, CollNet
512 KiB (direct) and 256 KiB (chain), all ``"simple"``. At most `max_pieces`
pieces per block keep schedules of large payloads small; the pipeline's fill then
grows with the piece.

Latency: every message carries NCCL's own latency for its step
(:attr:`simnet.schedule.TransferTable.delay_s`): the algorithm's base latency on
the messages that start the collective, and per hop the hardware latency of
``hwLatencies[NVLink|PCI|NET][algorithm][protocol]`` (``src/graph/tuning.cc``)
for a hop inside a server or between servers, placed so that the sum along the
critical path is NCCL's latency formula (``ncclTopoTuneModel``; research notes
§3.5): ``(nsteps - inter) · intra + inter · net`` for a ring, ``2((ppn - 1)
intra + log2(nodes) net)`` for a tree, NVLS's latency once, CollNet's inter-node
latency split between its two network hops. These latencies are added to the
links' own latency, on top of which the simulation puts the bytes.

References
----------
NVIDIA NCCL 2.30.7, ``src/graph/tuning.cc``, ``src/graph/trees.cc``,
``src/graph/connect.cc``, ``src/device/all_reduce.h``, ``src/enqueue.cc``.
Jeaugey, S. (2019). Massively scale your deep learning training with NCCL 2.4
(double binary trees). NVIDIA Developer Blog.
Klenk, B. et al. (2020). An in-network architecture for accelerating shared-memory
multiprocessor collectives. ISCA '20 (NVSwitch reductions).
Graham, R. L. et al. (2016). Scalable Hierarchical Aggregation Protocol (SHArP).
COMHPC '16.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np

from simnet.algorithms.builder import ScheduleBuilder
from simnet.algorithms.dense import double_binary_tree_parents
from simnet.algorithms.primitives import ring_all_gather, ring_reduce_scatter
from simnet.algorithms.registry import Algorithm, PairCosts
from simnet.errors import ScheduleError, SimnetError, did_you_mean
from simnet.schedule import Schedule, split_bytes
from simnet.speed import gc_paused
from simnet.units import format_size

__all__ = [
    "PROTOCOLS",
    "Protocol",
    "NCCL_RELEASE",
    "rail_ring_orders",
    "nccl_ring_allreduce",
    "nccl_ring_all_gather",
    "nccl_ring_reduce_scatter",
    "nccl_ring_broadcast",
    "nccl_ring_reduce",
    "nccl_pat_all_gather",
    "nccl_pat_reduce_scatter",
    "pat_aggregation",
    "pat_chunk_bytes",
    "pat_offsets",
    "nccl_tree_allreduce",
    "nvls_allreduce",
    "nvls_tree_allreduce",
    "collnet_direct_allreduce",
    "collnet_chain_allreduce",
    "nccl_allreduce",
    "nccl_all_gather",
    "nccl_reduce_scatter",
    "nccl_broadcast",
    "nccl_reduce",
    "NCCL_CHOICES",
    "NCCL_NAMES",
    "built_release",
    "SWITCH_SCHEDULES",
    "NVLS_CHUNK_BYTES",
    "nccl_variants",
    "ALGORITHMS",
]

NCCL_RELEASE = "2.30.7"
"""NCCL release whose constants the builders use by default."""

KiB = 1 << 10
MiB = 1 << 20


@dataclass(frozen=True)
class Protocol:
    """How NCCL moves data on one connection.

    Attributes
    ----------
    name : str
        ``"simple"``, ``"ll"`` or ``"ll128"``.
    line_bytes, line_payload_bytes : int
        A line on the wire and the payload it carries (LL: 16 and 8, LL128: 128 and
        120; Simple: 1 and 1).
    ring_slice_bytes : int
        Payload of one pipelined message of a ring step.
    tree_chunk_bytes : int
        Payload of one pipelined message of a tree.
    """

    name: str
    line_bytes: int
    line_payload_bytes: int
    ring_slice_bytes: int
    tree_chunk_bytes: int

    def wire_bytes(self, payload_bytes: np.ndarray) -> np.ndarray:
        """Bytes on the wire for payloads (whole lines)."""
        payload = np.asarray(payload_bytes, dtype=np.int64)
        return -(-payload // self.line_payload_bytes) * self.line_bytes

    @property
    def efficiency(self) -> Fraction:
        """Payload per wire byte."""
        return Fraction(self.line_payload_bytes, self.line_bytes)


PROTOCOLS = {
    "simple": Protocol("simple", 1, 1, 1 * MiB, 512 * KiB),
    "ll": Protocol("ll", 16, 8, 32 * KiB, 32 * KiB),
    "ll128": Protocol("ll128", 128, 120, 576000, 576000),
}
"""NCCL's protocols (NCCL_STEPS = 8 slots of 4 MiB / 8 for Simple, 512 KiB / 8 for LL,
4,915,200 B / 8 for LL128; ring all-reduce chunks of 4 steps in 2 slices for Simple, one
step otherwise, LL halving and LL128 taking 15/16 of the step as payload)."""

NVLS_CHUNK_BYTES = 128 * KiB
"""Bytes of one NVLS chunk (NCCL's ``nvlsChunkSize``, 128 KiB)."""
COLLNET_DIRECT_CHUNK_BYTES = 512 * KiB
COLLNET_CHAIN_CHUNK_BYTES = 256 * KiB
COLLNET_ARITY_US = 0.4

_ALGO = {"tree": 0, "ring": 1, "collnet_direct": 2, "collnet_chain": 3, "nvls": 4, "nvls_tree": 5, "pat": 6}
_PROTO = {"ll": 0, "ll128": 1, "simple": 2}
_HW = {"nvlink": 0, "pci": 1, "net": 2}
INTRA_LINKS = ("nvlink", "pci")


def _constants(version: str):
    from simnet.models.nccl.versions import nccl_version

    return nccl_version(version)


def _latencies_s(version: str, algorithm: str, protocol: str, intra: str, ppn: int) -> tuple[float, float, float]:
    """NCCL's base latency, intra-server and inter-server hop latency of one algorithm and protocol, seconds."""
    constants = _constants(version)
    a, p = _ALGO[algorithm], _PROTO[protocol]
    base = constants.base_latency_us[a][p]
    intra_hop = constants.hw_latency_us[_HW[intra]][a][p]
    net_algo = _ALGO["tree"] if ppn == 1 and constants.ppn1_tree_latency else a
    inter_hop = constants.hw_latency_us[_HW["net"]][net_algo][p]
    return base * 1e-6, intra_hop * 1e-6, inter_hop * 1e-6


def _check(nranks: int, size_bytes: int, gpus_per_node: int | None, protocol: str, intra: str,
           max_pieces: int, *, allowed: Sequence[str] = tuple(PROTOCOLS)) -> tuple[int, int]:
    """Validate the common parameters; return ``(g, nodes)``."""
    if not isinstance(nranks, int) or isinstance(nranks, bool) or nranks < 2:
        raise ScheduleError(f"must be an integer ≥ 2, got {nranks!r}", path="nranks")
    if not isinstance(size_bytes, int) or isinstance(size_bytes, bool) or size_bytes < 1:
        raise ScheduleError(f"must be a whole number of bytes ≥ 1, got {size_bytes!r}", path="size_bytes")
    g = nranks if gpus_per_node is None else gpus_per_node
    if not isinstance(g, int) or isinstance(g, bool) or g < 1 or nranks % g:
        raise ScheduleError(f"must be an integer ≥ 1 dividing the {nranks} ranks, got {gpus_per_node!r}",
                            path="gpus_per_node")
    if protocol not in allowed:
        hint = ("; 'auto' is NCCL's choice on a network: build with the parameters of "
                "ALGORITHMS[name].resolved(network, size_bytes, params)") if protocol == "auto" else ""
        raise ScheduleError(f"must be one of {', '.join(allowed)}, got {protocol!r}{hint}", path="protocol")
    if intra not in INTRA_LINKS:
        raise ScheduleError(f"must be one of {', '.join(INTRA_LINKS)}, got {intra!r}", path="intra")
    if not isinstance(max_pieces, int) or isinstance(max_pieces, bool) or max_pieces < 1:
        raise ScheduleError(f"must be an integer ≥ 1, got {max_pieces!r}", path="max_pieces")
    return g, nranks // g


def _check_count(value: int, path: str, limit: int | None = None) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1 or (limit is not None and value > limit):
        bound = f" and ≤ {limit}" if limit is not None else ""
        raise ScheduleError(f"must be an integer ≥ 1{bound}, got {value!r}", path=path)


def _pieces(nbytes: int, piece_bytes: int, max_pieces: int) -> list[int]:
    """`nbytes` cut into pieces of at most `piece_bytes` (at most `max_pieces`, at least one)."""
    count = min(max_pieces, max(1, -(-nbytes // piece_bytes)))
    return split_bytes(nbytes, count)


def rail_ring_orders(nranks: int, gpus_per_node: int, channels: int,
                     exits: Sequence[Sequence[int]] | None = None,
                     entries: Sequence[int] | None = None) -> list[list[int]]:
    """Rank order of each NCCL ring channel on servers of `gpus_per_node` GPUs.

    Channel ``c`` enters every server at its GPU ``e = entries[c mod g]`` (default
    ``c mod g``) and visits the server's GPUs ``e, e+1, ..., e-1`` (for ``(c // g)``
    odd: ``e, e-1, ..., e+1``) before the next server's GPU ``e``. With `exits`, the
    ring leaves each server from the last GPU of that order that is in ``exits[e]``,
    moved to the end (the others keep their order); where none is, from the last of
    the order.

    >>> rail_ring_orders(8, 4, 2)
    [[0, 1, 2, 3, 4, 5, 6, 7], [1, 2, 3, 0, 5, 6, 7, 4]]
    >>> rail_ring_orders(8, 4, 2, exits=[[1], [0], [3], [2]])
    [[0, 2, 3, 1, 4, 6, 7, 5], [1, 2, 3, 0, 5, 6, 7, 4]]
    >>> rail_ring_orders(8, 4, 2, exits=[[1], [0], [3], [2]], entries=[0, 2, 1, 3])
    [[0, 2, 3, 1, 4, 6, 7, 5], [2, 0, 1, 3, 6, 4, 5, 7]]
    """
    g = gpus_per_node
    starts = list(range(g)) if entries is None else list(entries)
    orders = []
    for c in range(channels):
        entry, step = starts[c % g], 1 if (c // g) % 2 == 0 else -1
        local = [(entry + step * i) % g for i in range(g)]
        if exits is not None:
            last = next((gpu for gpu in reversed(local[1:]) if gpu in exits[entry]), local[-1])
            local = [gpu for gpu in local if gpu != last] + [last]
        orders.append([node * g + r for node in range(nranks // g) for r in local])
    return orders


def _check_entries(entries: Sequence[int] | None, g: int) -> list[int] | None:
    """Validate `entries` (see :func:`nccl_ring_allreduce`) for servers of `g` GPUs; return it as a list."""
    if entries is None:
        return None
    if not isinstance(entries, (list, tuple)) or not all(
            isinstance(x, int) and not isinstance(x, bool) for x in entries) or sorted(entries) != list(range(g)):
        raise ScheduleError(f"must be the {g} GPUs of a server, 0 to {g - 1}, in the order channels enter at "
                            f"them, got {entries!r}", path="entries")
    return list(entries)


def _check_exits(exits: Sequence[Sequence[int]] | None, g: int) -> list[list[int]] | None:
    """Validate `exits` (see :func:`nccl_ring_allreduce`) for servers of `g` GPUs; return it as lists."""
    if exits is None:
        return None
    expected = f"{g} lists (one per GPU of a server) of GPUs in [0, {g})"
    if not isinstance(exits, (list, tuple)) or len(exits) != g:
        raise ScheduleError(f"must be {expected}, got {exits!r}", path="exits")
    for e, gpus in enumerate(exits):
        if not isinstance(gpus, (list, tuple)) or not all(
                isinstance(x, int) and not isinstance(x, bool) and 0 <= x < g for x in gpus):
            raise ScheduleError(f"must be a list of GPUs in [0, {g}), got {gpus!r}", path=f"exits[{e}]")
    return [list(gpus) for gpus in exits]


def _annotate(schedule: Schedule, protocol: Protocol, node_of: np.ndarray, base_s: float,
              hop_s: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
              chunk_channel: np.ndarray | None = None) -> Schedule:
    """Wire bytes, NCCL latencies and connections of every message.

    ``node_of[e]`` is the server of endpoint ``e`` (``-1`` for a fabric switch);
    ``hop_s(src, dst, same_server)`` gives each message's hop latency; the messages
    that wait for nothing also carry the base latency. Every (NCCL channel of the
    chunk, stage) is a connection of its own: NCCL runs channels on separate thread
    blocks and the phases of NVLS and CollNet on separate warps, so they share a
    link instead of queueing behind each other.
    """
    if chunk_channel is None:
        chunk_channel = np.zeros(len(schedule.chunk_bytes), dtype=np.int64)
    table = schedule.transfers
    same = node_of[table.src] == node_of[table.dst]
    delay = hop_s(table.src, table.dst, same) + np.where(np.diff(table.dep_offsets) == 0, base_s, 0.0)
    wire = protocol.wire_bytes(table.nbytes) if protocol.line_bytes != 1 else None
    first_chunk = table.piece_chunks[table.piece_offsets[:-1]][table.piece]
    channel = table.stage.astype(np.int64) + len(table.stages) * chunk_channel[first_chunk]
    return schedule.replace(transfers=table.replace(wire_bytes=wire, delay_s=delay, channel=channel))


def _rail_params(exits: list[list[int]] | None, entries: list[int] | None) -> dict:
    """The ``exits`` and ``entries`` a schedule records in its params, those given."""
    return {key: value for key, value in (("exits", exits), ("entries", entries)) if value is not None}


def _ranks_node_of(nranks: int, g: int, extra: Sequence[int] = ()) -> np.ndarray:
    return np.concatenate([np.arange(nranks) // g, np.asarray(extra, dtype=np.int64)]).astype(np.int64)


@gc_paused()
def nccl_ring_allreduce(nranks: int, size_bytes: int, *, gpus_per_node: int | None = None, channels: int = 2,
                        protocol: str = "simple", intra: str = "nvlink", max_pieces: int = 64,
                        version: str = NCCL_RELEASE, exits: Sequence[Sequence[int]] | None = None,
                        entries: Sequence[int] | None = None) -> Schedule:
    """NCCL's ring all-reduce: `channels` rail-aligned rings, each on its share of the payload.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2 (``p / g`` servers).
    size_bytes : int
        Payload per rank, bytes; channel ``c`` carries the ``c``-th of ``channels``
        contiguous parts.
    gpus_per_node : int, optional
        GPUs per server ``g`` (default: all ranks on one server).
    channels : int, optional
        Rings (NCCL's channels); a payload of fewer bytes uses one per byte.
    protocol : {"simple", "ll", "ll128"}, optional
        NCCL protocol (see the module docstring).
    intra : {"nvlink", "pci"}, optional
        Which hardware latency NCCL charges a hop inside a server.
    max_pieces : int, optional
        At most this many pipelined slices per ring block.
    version : str, optional
        NCCL release of the latency constants.
    exits : list of list of int, optional
        Per GPU ``e`` of a server, the GPUs of the server whose messages to the
        next server's GPU ``e`` leave through the NIC of ``e``'s rail without a
        relay: the ring entering at ``e`` leaves from one of them, so it stays on
        one rail (NCCL's graph search with ``crossNic = 0`` ends the server's chain
        at a GPU whose path to the NIC it entered through is PIX or PXB:
        ``ncclTopoSearchCheckNet`` in ``src/graph/search.cc``). A network gives it
        (the registry's ``resolve``, from :meth:`simnet.network.Network.exit_rail`);
        default: the order of :func:`rail_ring_orders` without it.
    entries : list of int, optional
        The GPUs of a server in the order channels enter at them: channel ``c``
        enters at ``entries[c mod g]`` (default ``c mod g``). NCCL's graph search
        starts channel ``c`` from the ``c``-th NIC of the server (modulo their
        number), at the GPU nearest it (``ncclTopoSearchRecNet`` and
        ``ncclTopoGetLocalGpu`` in ``src/graph/search.cc`` and ``topo.cc``), so its
        channels spread over the NICs; a network gives the GPUs NIC by NIC, the
        first GPU of every NIC, then the second, ... (the registry's ``resolve``,
        from the GPUs' ``rail``): ``[0, 2, 1, 3]`` where GPUs 0-1 share NIC 0 and
        2-3 NIC 1.

    Returns
    -------
    Schedule
        Stages ``reduce_scatter`` and ``all_gather``; the rank-``0`` ring's block
        ``b`` of channel ``c`` is chunks ``(c p + b) P .. (c p + b) P + P - 1``.
    """
    g, nodes = _check(nranks, size_bytes, gpus_per_node, protocol, intra, max_pieces)
    _check_count(channels, "channels")
    exits = _check_exits(exits, g)
    entries = _check_entries(entries, g)
    channels = min(channels, size_bytes)
    proto = PROTOCOLS[protocol]
    chunk_bytes: list[int] = []
    chunk_channel: list[int] = []
    groups = []
    for channel, (members, part) in enumerate(zip(rail_ring_orders(nranks, g, channels, exits, entries),
                                                 split_bytes(size_bytes, channels))):
        blocks = []
        for block_bytes in split_bytes(part, nranks):
            slices = _pieces(block_bytes, proto.ring_slice_bytes, max_pieces)
            blocks.append([(len(chunk_bytes) + i,) for i in range(len(slices))])
            chunk_bytes.extend(slices)
            chunk_channel.extend([channel] * len(slices))
        groups.append((members, blocks))
    builder = ScheduleBuilder(chunk_bytes, nranks)
    ring_reduce_scatter(builder, groups, "reduce_scatter")
    ring_all_gather(builder, groups, "all_gather")
    params = dict(gpus_per_node=g, channels=channels, protocol=protocol, intra=intra, max_pieces=max_pieces,
                  version=version, **_rail_params(exits, entries))
    schedule = builder.schedule("allreduce", "nccl_ring", params)
    base, intra_s, inter_s = _latencies_s(version, "ring", protocol, intra, g)
    return _annotate(schedule, proto, _ranks_node_of(nranks, g), base,
                     lambda src, dst, same: np.where(same, intra_s, inter_s), np.array(chunk_channel))


def _ring_phase(collective: str, nranks: int, size_bytes: int, gpus_per_node: int | None, channels: int,
                protocol: str, intra: str, max_pieces: int, version: str,
                exits: Sequence[Sequence[int]] | None, entries: Sequence[int] | None) -> Schedule:
    """NCCL's ring all-gather or reduce-scatter: one ring phase per channel over every rank's share.

    Rank ``r``'s share (its contribution to an all-gather, its result of a
    reduce-scatter) is part ``r`` of `size_bytes`, and chunks are numbered as the
    buffer lays them out: share by share, each cut into one part per channel, each
    part into the slices the all-reduce ring cuts its blocks into. Channel ``c``
    carries part ``c`` of every share; on its ring the member at position ``i``
    starts with (all-gather) or ends with (reduce-scatter) its own share, as in
    NCCL, where a rank's block of the ring is the one at its rank's offset.
    """
    g, _ = _check(nranks, size_bytes, gpus_per_node, protocol, intra, max_pieces)
    _check_count(channels, "channels")
    exits = _check_exits(exits, g)
    entries = _check_entries(entries, g)
    shares = split_bytes(size_bytes, nranks)
    channels = max(1, min(channels, min(shares)))
    proto = PROTOCOLS[protocol]
    chunk_bytes: list[int] = []
    chunk_channel: list[int] = []
    owners: list[int] = []
    parts: dict[tuple[int, int], list[tuple[int, ...]]] = {}
    for rank, share in enumerate(shares):
        for channel, part in enumerate(split_bytes(share, channels)):
            slices = _pieces(part, proto.ring_slice_bytes, max_pieces)
            parts[rank, channel] = [(len(chunk_bytes) + i,) for i in range(len(slices))]
            chunk_bytes.extend(slices)
            chunk_channel.extend([channel] * len(slices))
            owners.extend([rank] * len(slices))
    groups = []
    for channel, members in enumerate(rail_ring_orders(nranks, g, channels, exits, entries)):
        blocks: list[list[tuple[int, ...]]] = [[] for _ in members]
        for position, rank in enumerate(members):
            blocks[(position + 1) % nranks] = parts[rank, channel]
        groups.append((members, blocks))
    builder = ScheduleBuilder(chunk_bytes, nranks)
    (ring_all_gather if collective == "all_gather" else ring_reduce_scatter)(builder, groups, collective)
    params = dict(gpus_per_node=g, channels=channels, protocol=protocol, intra=intra, max_pieces=max_pieces,
                  version=version, **_rail_params(exits, entries))
    schedule = builder.schedule(collective, f"nccl_ring_{collective}", params, owners=tuple(owners))
    base, intra_s, inter_s = _latencies_s(version, "ring", protocol, intra, g)
    return _annotate(schedule, proto, _ranks_node_of(nranks, g), base,
                     lambda src, dst, same: np.where(same, intra_s, inter_s), np.array(chunk_channel))


@gc_paused()
def nccl_ring_all_gather(nranks: int, size_bytes: int, *, gpus_per_node: int | None = None, channels: int = 2,
                         protocol: str = "simple", intra: str = "nvlink", max_pieces: int = 64,
                         version: str = NCCL_RELEASE, exits: Sequence[Sequence[int]] | None = None,
                         entries: Sequence[int] | None = None) -> Schedule:
    """NCCL's ring all-gather: ``p - 1`` steps on each of `channels` rail-aligned rings.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Size of the gathered result, bytes (nccl-tests' size): rank ``r`` contributes
        part ``r`` of ``p``.
    gpus_per_node, channels, protocol, intra, max_pieces, version, exits, entries
        As :func:`nccl_ring_allreduce`; channels are at most the bytes of the
        smallest contribution.
    """
    return _ring_phase("all_gather", nranks, size_bytes, gpus_per_node, channels, protocol, intra, max_pieces,
                       version, exits, entries)


@gc_paused()
def nccl_ring_reduce_scatter(nranks: int, size_bytes: int, *, gpus_per_node: int | None = None, channels: int = 2,
                             protocol: str = "simple", intra: str = "nvlink", max_pieces: int = 64,
                             version: str = NCCL_RELEASE, exits: Sequence[Sequence[int]] | None = None,
                             entries: Sequence[int] | None = None) -> Schedule:
    """NCCL's ring reduce-scatter: ``p - 1`` steps on each of `channels` rail-aligned rings.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Payload per rank, bytes (nccl-tests' size): rank ``r`` ends with part ``r``
        of ``p``, summed over the ranks.
    gpus_per_node, channels, protocol, intra, max_pieces, version, exits, entries
        As :func:`nccl_ring_allreduce`; channels are at most the bytes of the
        smallest part.
    """
    return _ring_phase("reduce_scatter", nranks, size_bytes, gpus_per_node, channels, protocol, intra, max_pieces,
                       version, exits, entries)


def pat_chunk_bytes(collective: str, size_bytes: int, channels: int) -> int:
    """Bytes of one PAT chunk: a Simple step (512 KiB), halved while a loop over the channels exceeds the data.

    NCCL halves the chunk while ``chunk × channels × 32`` (all-gather; 16 for
    reduce-scatter) exceeds the operation's bytes and the chunk is above 64 KiB
    (``calcCollChunking``, ``src/enqueue.cc`` of NCCL 2.30.7).

    >>> pat_chunk_bytes("all_gather", 1 << 30, 16), pat_chunk_bytes("all_gather", 1 << 20, 2)
    (524288, 65536)
    """
    chunk = PROTOCOLS["simple"].tree_chunk_bytes
    loops = 32 if collective == "all_gather" else 16
    while chunk * channels * loops > size_bytes and chunk > 64 * KiB:
        chunk //= 2
    return chunk


def pat_aggregation(nranks: int, chunk_bytes: int, part_bytes: int) -> int:
    """Blocks PAT sends in one message: the ``R_agg`` of Jeaugey (2025), NCCL's ``postFreq``.

    The largest power of two ``F`` with ``F × part ≤ chunk`` (doubled while
    ``chunk // (F × part) ≥ 2``), stopping once ``F ≥ p // 2``: a channel's part
    of a share that fits many times in a chunk is aggregated (small operations, a
    logarithmic number of messages); a part of a chunk or more travels alone
    (``p - 1`` messages per rank). NCCL then lets up to 8 such messages
    (``NCCL_STEPS``) be in flight per peer, which in simnet its connections' order
    and the dependencies decide (``PatAGAlgorithm``'s constructor,
    ``src/include/collectives.h`` of NCCL 2.30.7).

    >>> pat_aggregation(64, 512 * 1024, 1 << 20), pat_aggregation(64, 65536, 1024), pat_aggregation(4, 65536, 1)
    (1, 32, 2)
    """
    factor = 1
    while chunk_bytes // (part_bytes * factor) >= 2 and factor < nranks // 2:
        factor *= 2
    return factor


def pat_offsets(nranks: int, dim: int) -> list[int]:
    """Offsets ``h`` of the blocks a rank forwards in dimension `dim` of PAT: multiples of ``2^(dim+1)`` with
    ``h + 2^dim < nranks``.

    In dimension ``d`` rank ``x`` sends rank ``x - 2^d`` the blocks of ranks ``x + h``
    it holds; dimensions run from the farthest, ``ceil(log2 p) - 1``, to 0, so every
    block reaches every rank exactly once along a binomial tree and the farthest
    messages carry one block each (the dimension-reversed Bruck algorithm of
    Jeaugey, 2025).

    >>> [pat_offsets(8, d) for d in (2, 1, 0)], pat_offsets(5, 0)
    ([[0], [0, 4], [0, 2, 4, 6]], [0, 2])
    """
    step = 2 << dim
    return list(range(0, nranks - (1 << dim), step))


def _pat(collective: str, nranks: int, size_bytes: int, gpus_per_node: int | None, channels: int, intra: str,
         max_pieces: int, version: str) -> Schedule:
    """NCCL's PAT all-gather or reduce-scatter (see :func:`nccl_pat_all_gather`)."""
    g, _ = _check(nranks, size_bytes, gpus_per_node, "simple", intra, max_pieces)
    _check_count(channels, "channels")
    constants = _constants(version)
    if constants.pat_factor is None:
        raise ScheduleError(f"NCCL {version} has no PAT (it came with 2.23)", path="version")
    shares = split_bytes(size_bytes, nranks)
    channels = max(1, min(channels, min(shares)))
    chunk = pat_chunk_bytes(collective, size_bytes, channels)
    largest = split_bytes(max(shares), channels)
    sweeps = [len(_pieces(part, chunk, max_pieces)) for part in largest]
    chunk_bytes: list[int] = []
    chunk_channel: list[int] = []
    owners: list[int] = []
    rounds: dict[tuple[int, int], list[int]] = {}
    for rank, share in enumerate(shares):
        for channel, part in enumerate(split_bytes(share, channels)):
            pieces = split_bytes(part, sweeps[channel])
            rounds[rank, channel] = list(range(len(chunk_bytes), len(chunk_bytes) + len(pieces)))
            chunk_bytes.extend(pieces)
            chunk_channel.extend([channel] * len(pieces))
            owners.extend([rank] * len(pieces))
    builder = ScheduleBuilder(chunk_bytes, nranks)
    ranks = np.arange(nranks)
    dims = range(max(1, (nranks - 1).bit_length()))
    order = reversed(dims) if collective == "all_gather" else dims
    op = "copy" if collective == "all_gather" else "reduce"
    for dim in order:
        offsets = pat_offsets(nranks, dim)
        near, far = ranks.tolist(), ((ranks - (1 << dim)) % nranks).tolist()
        senders, receivers = (near, far) if collective == "all_gather" else (far, near)
        src, dst, pieces = [], [], []
        for channel in range(channels):
            size = pat_aggregation(nranks, chunk, largest[channel])
            for k in range(sweeps[channel]):
                for first in range(0, len(offsets), size):
                    group = offsets[first:first + size]
                    src.extend(senders)
                    dst.extend(receivers)
                    pieces.extend(builder.piece(tuple(rounds[(x + h) % nranks, channel][k] for h in group))
                                  for x in near)
        builder.send_batch(src, dst, pieces, op, collective)
    params = dict(gpus_per_node=g, channels=channels, intra=intra, max_pieces=max_pieces, version=version)
    schedule = builder.schedule(collective, f"nccl_pat_{collective}", params, owners=tuple(owners))
    schedule = _annotate(schedule, PROTOCOLS["simple"], _ranks_node_of(nranks, g),
                         *_pat_latencies_s(constants, nranks, g, intra), np.array(chunk_channel))
    table = schedule.transfers
    efficiency = Fraction(str(constants.pat_factor))
    wire = -(-table.nbytes.astype(np.int64) * efficiency.denominator // efficiency.numerator)
    return schedule.replace(transfers=table.replace(wire_bytes=wire))


def _pat_latencies_s(constants, nranks: int, g: int, intra: str):
    """PAT's base latency and the hop latency function of :func:`_annotate`, placed on the critical path.

    NCCL models PAT's latency as ``8 + log2(nodes) · net / 3.5 + 2.8 · ranks`` µs
    (``ncclTopoTuneModel``; research notes §3.5): the constant and per-rank terms
    are charged once, on the messages that wait for nothing, and ``net / 3.5``
    (``intra / 3.5`` inside a server) on every message, once per dimension
    along the path of a fully aggregated block.
    """
    from simnet.models.nccl.model import PAT_BASE_LATENCY_US, PAT_PER_RANK_LATENCY_US

    a, p = _ALGO["pat"], _PROTO["simple"]
    net_algo = _ALGO["tree"] if g == 1 and constants.ppn1_tree_latency else a
    inter_s = constants.hw_latency_us[_HW["net"]][net_algo][p] / 3.5 * 1e-6
    intra_s = constants.hw_latency_us[_HW[intra]][a][p] / 3.5 * 1e-6
    base_s = (PAT_BASE_LATENCY_US + nranks * PAT_PER_RANK_LATENCY_US) * 1e-6
    return base_s, lambda src, dst, same: np.where(same, intra_s, inter_s)


@gc_paused()
def nccl_pat_all_gather(nranks: int, size_bytes: int, *, gpus_per_node: int | None = None, channels: int = 2,
                        intra: str = "nvlink", max_pieces: int = 64, version: str = NCCL_RELEASE) -> Schedule:
    """NCCL's PAT all-gather (Parallel Aggregated Trees): ``ceil(log2 p)`` dimensions, farthest first.

    Every rank's block is broadcast along a binomial tree shifted to that rank, and
    the trees run in parallel: in dimension ``d`` (from ``ceil(log2 p) - 1`` down to
    0) rank ``x`` sends rank ``x - 2^d`` the blocks of ranks ``x + h`` it holds
    (:func:`pat_offsets`), so a block travels one hop per set bit of its offset and
    arrives once; with no cap on aggregation this is the Bruck algorithm with its
    dimensions reversed: one block on the longest hop, ``p/2`` on the shortest, a
    logarithmic number of messages. PAT caps a message at ``R_agg`` blocks
    (:func:`pat_aggregation`, what its bounded intermediate buffer holds), so large
    operations send more, smaller messages, ``p - 1`` per rank and sweep once a
    channel's part of a share fills a chunk. A dimension's blocks go in windows of
    consecutive offsets (NCCL's lower dimensions interleave offsets of one residue
    instead: the same message sizes and counts for ``p`` a power of two, in another
    order). Each channel's part of every share is cut into chunks
    (:func:`pat_chunk_bytes`; at most `max_pieces`) and every chunk makes its own
    sweep; a message waits only for the blocks it carries. Simple protocol only, as
    in NCCL.

    Bytes move at NCCL's PAT efficiency (``patFactor`` of the release's model,
    0.85 in 2.23 and 0.75 since 2.24, ``src/graph/tuning.cc``): a message of ``n``
    bytes puts ``ceil(n / efficiency)`` on the wire, as NCCL's model divides PAT's
    bandwidth by it. NCCL does not say where the loss comes from; NVLS's
    ``nvlsEfficiency`` enters simnet the same way, as a rate below the links'.
    Latency: NCCL's PAT formula (:func:`_pat_latencies_s`), added to the links' own.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2 (NCCL enables PAT with one GPU per server).
    size_bytes : int
        Size of the gathered result, bytes: rank ``r`` contributes part ``r`` of ``p``.
    gpus_per_node, channels, intra, max_pieces, version
        As :func:`nccl_ring_allreduce` (no `protocol`: PAT is Simple only).

    Raises
    ------
    ScheduleError
        For bad parameters, or a `version` before 2.23 (no PAT).

    References
    ----------
    Jeaugey, S. (2025). PAT: a new algorithm for all-gather and reduce-scatter
    operations at scale. arXiv:2506.20252. NVIDIA NCCL 2.30.7,
    ``src/include/collectives.h`` (``PatAGAlgorithm``), ``src/enqueue.cc``,
    ``src/graph/tuning.cc``.
    """
    return _pat("all_gather", nranks, size_bytes, gpus_per_node, channels, intra, max_pieces, version)


@gc_paused()
def nccl_pat_reduce_scatter(nranks: int, size_bytes: int, *, gpus_per_node: int | None = None, channels: int = 2,
                            intra: str = "nvlink", max_pieces: int = 64, version: str = NCCL_RELEASE) -> Schedule:
    """NCCL's PAT reduce-scatter: :func:`nccl_pat_all_gather` run backwards, summing on the way.

    Dimensions run from 0 up: in dimension ``d`` rank ``x - 2^d`` sends rank ``x``
    its partial sums of the blocks of ranks ``x + h`` (:func:`pat_offsets`), which
    ``x`` adds to its own; rank ``t`` ends with block ``t`` summed over all ranks.
    Aggregation, chunks and latencies as the all-gather's.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Payload per rank, bytes: rank ``r`` ends with part ``r`` of ``p``, summed over the ranks.
    gpus_per_node, channels, intra, max_pieces, version
        As :func:`nccl_pat_all_gather`.

    References
    ----------
    Jeaugey (2025), as :func:`nccl_pat_all_gather`; NCCL 2.30.7 ``PatRSAlgorithm``.
    """
    return _pat("reduce_scatter", nranks, size_bytes, gpus_per_node, channels, intra, max_pieces, version)


def _ring_chain(collective: str, nranks: int, size_bytes: int, root: int, gpus_per_node: int | None, channels: int,
                protocol: str, intra: str, max_pieces: int, version: str,
                exits: Sequence[Sequence[int]] | None, entries: Sequence[int] | None) -> Schedule:
    """NCCL's ring broadcast or reduce: the data flows once around each channel's ring.

    A broadcast leaves `root` and is forwarded by every rank to the next of the
    ring (``recvCopySend``) until the rank before `root`; a reduce starts at the
    rank after `root`, and every rank adds its data and forwards the sum
    (``recvReduceSend``) until `root` (``runRing`` of NCCL's ``broadcast.h`` and
    ``reduce.h``). Channel ``c`` carries part ``c`` of the payload in slices of one
    step (``BROADCAST_CHUNKSTEPS = REDUCE_CHUNKSTEPS = 1``): 512 KiB for Simple, a
    ring slice for LL and LL128.
    """
    g, _ = _check(nranks, size_bytes, gpus_per_node, protocol, intra, max_pieces)
    _check_count(channels, "channels")
    if not isinstance(root, int) or isinstance(root, bool) or not 0 <= root < nranks:
        raise ScheduleError(f"must be a rank in [0, {nranks}), got {root!r}", path="root")
    exits = _check_exits(exits, g)
    entries = _check_entries(entries, g)
    channels = min(channels, size_bytes)
    proto = PROTOCOLS[protocol]
    step = proto.tree_chunk_bytes if protocol == "simple" else proto.ring_slice_bytes
    chunk_bytes: list[int] = []
    chunk_channel: list[int] = []
    chains = []
    for channel, (order, part) in enumerate(zip(rail_ring_orders(nranks, g, channels, exits, entries),
                                               split_bytes(size_bytes, channels))):
        at = order.index(root)
        chain = order[at:] + order[:at] if collective == "broadcast" else order[at + 1:] + order[:at + 1]
        slices = _pieces(part, step, max_pieces)
        chains.append((chain, range(len(chunk_bytes), len(chunk_bytes) + len(slices))))
        chunk_bytes.extend(slices)
        chunk_channel.extend([channel] * len(slices))
    builder = ScheduleBuilder(chunk_bytes, nranks)
    op = "copy" if collective == "broadcast" else "reduce"
    for hop in range(nranks - 1):
        src = [chain[hop] for chain, chunks in chains for _ in chunks]
        dst = [chain[hop + 1] for chain, chunks in chains for _ in chunks]
        pieces = [builder.piece((chunk,)) for _, chunks in chains for chunk in chunks]
        builder.send_batch(src, dst, pieces, op, collective)
    params = dict(root=root, gpus_per_node=g, channels=channels, protocol=protocol, intra=intra,
                  max_pieces=max_pieces, version=version, **_rail_params(exits, entries))
    schedule = builder.schedule(collective, f"nccl_ring_{collective}", params, root=root)
    base, intra_s, inter_s = _latencies_s(version, "ring", protocol, intra, g)
    return _annotate(schedule, proto, _ranks_node_of(nranks, g), base,
                     lambda src, dst, same: np.where(same, intra_s, inter_s), np.array(chunk_channel))


@gc_paused()
def nccl_ring_broadcast(nranks: int, size_bytes: int, *, root: int = 0, gpus_per_node: int | None = None,
                        channels: int = 2, protocol: str = "simple", intra: str = "nvlink", max_pieces: int = 64,
                        version: str = NCCL_RELEASE, exits: Sequence[Sequence[int]] | None = None,
                        entries: Sequence[int] | None = None) -> Schedule:
    """NCCL's ring broadcast from `root`: a pipelined chain around each of `channels` rail-aligned rings.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Payload, bytes (nccl-tests' size).
    root : int, optional
        Rank that holds the data.
    gpus_per_node, channels, protocol, intra, max_pieces, version, exits, entries
        As :func:`nccl_ring_allreduce`.
    """
    return _ring_chain("broadcast", nranks, size_bytes, root, gpus_per_node, channels, protocol, intra, max_pieces,
                       version, exits, entries)


@gc_paused()
def nccl_ring_reduce(nranks: int, size_bytes: int, *, root: int = 0, gpus_per_node: int | None = None,
                     channels: int = 2, protocol: str = "simple", intra: str = "nvlink", max_pieces: int = 64,
                     version: str = NCCL_RELEASE, exits: Sequence[Sequence[int]] | None = None,
                     entries: Sequence[int] | None = None) -> Schedule:
    """NCCL's ring reduce to `root`: a pipelined chain of additions around each of `channels` rings.

    Parameters
    ----------
    nranks : int
        Ranks ``p`` ≥ 2.
    size_bytes : int
        Payload per rank, bytes (nccl-tests' size).
    root : int, optional
        Rank that ends with the sum.
    gpus_per_node, channels, protocol, intra, max_pieces, version, exits, entries
        As :func:`nccl_ring_allreduce`.
    """
    return _ring_chain("reduce", nranks, size_bytes, root, gpus_per_node, channels, protocol, intra, max_pieces,
                       version, exits, entries)


def _tree_parents(nranks: int, g: int, channel: int, channels: int,
                  entries: Sequence[int] | None = None) -> list[int | None]:
    """Parent rank of every rank in channel `channel`'s tree (chain in servers, binary tree between them); the
    chain starts at GPU ``entries[channel mod g]`` (default ``channel mod g``)."""
    nodes = nranks // g
    entry = channel % g if entries is None else entries[channel % g]
    chain = [(entry + i) % g for i in range(g)]
    dual = double_binary_tree_parents(nodes) if nodes > 1 else ([None], [None])
    tree = dual[0] if channel < max(1, channels - channels // 2) else dual[1]
    parents: list[int | None] = [None] * nranks
    for node in range(nodes):
        for position, local in enumerate(chain):
            rank = node * g + local
            if position > 0:
                parents[rank] = node * g + chain[position - 1]
            elif tree[node] is not None:
                parents[rank] = tree[node] * g + chain[0]
    return parents


def _depths(parents: Sequence[int | None]) -> list[int]:
    depth = [-1] * len(parents)
    for rank in range(len(parents)):
        path = []
        node: int | None = rank
        while node is not None and depth[node] < 0:
            path.append(node)
            node = parents[node]
        known = -1 if node is None else depth[node]
        for member in reversed(path):
            known += 1
            depth[member] = known
    return depth


def _tree_batches(edges: list[tuple[int, int, int, int, int]] | np.ndarray, builder: ScheduleBuilder, op: str,
                  stage: str, upward: bool) -> None:
    """Send ``(depth, slot, src, dst, piece)`` edges (rows) level by level, one batch per (depth, sibling slot),
    each batch in the edges' order."""
    if len(edges) == 0:
        return
    array = np.array(edges, dtype=np.int64)
    depth, slot = array[:, 0], array[:, 1]
    order = np.lexsort((slot, -depth if upward else depth))
    array = array[order]
    keys = array[:, 0] * (int(array[:, 1].max()) + 1) + array[:, 1]
    cuts = np.flatnonzero(np.diff(keys)) + 1
    for batch in np.split(array, cuts):
        builder.send_batch(batch[:, 2], batch[:, 3], batch[:, 4], op, stage)


def _slots(parents: Sequence[int | None]) -> list[int]:
    """Index of every rank among its parent's children (ranks in increasing order)."""
    seen: dict[int, int] = {}
    slots = []
    for parent in parents:
        if parent is None:
            slots.append(0)
            continue
        slots.append(seen.get(parent, 0))
        seen[parent] = slots[-1] + 1
    return slots


@gc_paused()
def nccl_tree_allreduce(nranks: int, size_bytes: int, *, gpus_per_node: int | None = None, channels: int = 2,
                        protocol: str = "simple", intra: str = "nvlink", max_pieces: int = 256,
                        version: str = NCCL_RELEASE, entries: Sequence[int] | None = None) -> Schedule:
    """NCCL's tree all-reduce: per channel a chain in every server and a binary tree between servers.

    Channel ``c`` reduces its share of the payload up the chain of every server
    (starting at GPU ``e = entries[c mod g]``, default ``c mod g``, whose NIC's rail
    carries the inter-server tree, and going on at ``e+1, ..., e-1``)
    and up NCCL's binary tree over the servers (tree 0 for the first half of the
    channels, the mirrored or shifted tree 1 for the rest), then broadcasts the sum
    back down, chunk after chunk, reduction and broadcast overlapping.

    Parameters
    ----------
    nranks, size_bytes, gpus_per_node, channels, protocol, intra, version, entries
        As :func:`nccl_ring_allreduce`.
    max_pieces : int, optional
        At most this many pipelined chunks per channel.

    Returns
    -------
    Schedule
        Stages ``reduce`` and ``broadcast``.
    """
    g, nodes = _check(nranks, size_bytes, gpus_per_node, protocol, intra, max_pieces)
    _check_count(channels, "channels")
    entries = _check_entries(entries, g)
    channels = min(channels, size_bytes)
    proto = PROTOCOLS[protocol]
    chunk_bytes: list[int] = []
    chunk_channel: list[int] = []
    trees = []
    for channel, part in enumerate(split_bytes(size_bytes, channels)):
        pieces = _pieces(part, proto.tree_chunk_bytes, max_pieces)
        trees.append((_tree_parents(nranks, g, channel, channels, entries), range(len(chunk_bytes), len(chunk_bytes)
                                                                         + len(pieces))))
        chunk_bytes.extend(pieces)
        chunk_channel.extend([channel] * len(pieces))
    builder = ScheduleBuilder(chunk_bytes, nranks)
    up, down = [], []
    for parents, chunks in trees:
        ranks = np.array([rank for rank, parent in enumerate(parents) if parent is not None], dtype=np.int64)
        if not len(ranks):
            continue
        parent = np.array([parents[rank] for rank in ranks.tolist()], dtype=np.int64)
        depth, slot = np.array(_depths(parents))[ranks], np.array(_slots(parents))[ranks]
        pieces = np.array([builder.piece((chunk,)) for chunk in chunks], dtype=np.int64)
        edges = np.stack([*(np.repeat(column, len(pieces)) for column in (depth, slot, ranks, parent)),
                          np.tile(pieces, len(ranks))], axis=1)
        up.append(edges)
        down.append(edges[:, [0, 1, 3, 2, 4]])
    for edges, op, stage, upward in ((up, "reduce", "reduce", True), (down, "copy", "broadcast", False)):
        _tree_batches(np.concatenate(edges) if edges else np.zeros((0, 5), dtype=np.int64), builder, op, stage,
                      upward)
    params = dict(gpus_per_node=g, channels=channels, protocol=protocol, intra=intra, max_pieces=max_pieces,
                  version=version, **_rail_params(None, entries))
    schedule = builder.schedule("allreduce", "nccl_tree", params)
    base, intra_s, inter_s = _latencies_s(version, "tree", protocol, intra, g)
    return _annotate(schedule, proto, _ranks_node_of(nranks, g), base,
                     lambda src, dst, same: np.where(same, intra_s, inter_s), np.array(chunk_channel))


def _switch_reduce(builder: ScheduleBuilder, sources: np.ndarray, switch: np.ndarray, pieces: np.ndarray,
                   stage: str) -> None:
    """Every source adds every piece into its switch: one batch per source column (columns are disjoint)."""
    for column in range(sources.shape[1]):
        builder.send_batch(sources[:, column], switch, pieces, "reduce", stage)


@gc_paused()
def nvls_allreduce(nranks: int, size_bytes: int, *, max_pieces: int = 64, version: str = NCCL_RELEASE) -> Schedule:
    """NVLS all-reduce on one server: in-switch reduction to each part's owner, multicast back.

    GPU ``j`` owns the ``j``-th of ``p`` parts. For each of its chunks, every GPU
    adds its copy into the switch (a ``multimem.ld_reduce`` reads them all), the
    switch returns the sum to ``j``, and ``j`` stores it through the switch to
    every other GPU (``multimem.st``). The schedule's one switch endpoint
    (endpoint ``p``) serves all ranks; the network places it on the server's
    reduce-capable NVSwitch.

    Parameters
    ----------
    nranks : int
        GPUs of the server, ≥ 2.
    size_bytes : int
        Payload per rank, bytes.
    max_pieces : int, optional
        At most this many 128 KiB chunks per part.
    version : str, optional
        NCCL release of the latency constant.

    Returns
    -------
    Schedule
        Stages ``reduce`` (to the switch and back to the owner) and ``multicast``.
    """
    _check(nranks, size_bytes, None, "simple", "nvlink", max_pieces)
    owners, chunk_bytes = [], []
    for owner, part in enumerate(split_bytes(size_bytes, nranks)):
        pieces = _pieces(part, NVLS_CHUNK_BYTES, max_pieces)
        owners.extend([owner] * len(pieces))
        chunk_bytes.extend(pieces)
    switch = nranks
    builder = ScheduleBuilder(chunk_bytes, nranks, switches=[tuple(range(nranks))])
    owner = np.array(owners, dtype=np.int64)
    pieces = np.array([builder.piece((c,)) for c in range(len(chunk_bytes))], dtype=np.int64)
    at_switch = np.full(len(pieces), switch, dtype=np.int64)
    everyone = (owner[:, None] + np.arange(nranks)[None, :]) % nranks
    _switch_reduce(builder, everyone, at_switch, pieces, "reduce")
    builder.send_batch(at_switch, owner, pieces, "copy", "reduce")
    builder.send_batch(owner, at_switch, pieces, "copy", "multicast")
    for column in range(1, nranks):
        builder.send_batch(at_switch, everyone[:, column], pieces, "copy", "multicast")
    schedule = builder.schedule("allreduce", "nvls", dict(max_pieces=max_pieces, version=version))
    base, intra_s, _ = _latencies_s(version, "nvls", "simple", "nvlink", nranks)
    return _annotate(schedule, PROTOCOLS["simple"], np.zeros(nranks + 1, dtype=np.int64), base + intra_s,
                     lambda src, dst, same: np.zeros(len(src)), owner)


def _check_heads(heads: int | None, g: int) -> int:
    heads = g if heads is None else heads
    _check_count(heads, "heads", g)
    return heads


def _head_parts(size_bytes: int, heads: int, chunk: int, max_pieces: int) -> tuple[list[int], list[int]]:
    """Chunks of each head's part: (head of every chunk, bytes of every chunk)."""
    head_of, chunk_bytes = [], []
    for head, part in enumerate(split_bytes(size_bytes, heads)):
        pieces = _pieces(part, chunk, max_pieces)
        head_of.extend([head] * len(pieces))
        chunk_bytes.extend(pieces)
    return head_of, chunk_bytes


def _inter_tree(builder: ScheduleBuilder, nodes: int, g: int, head_of: np.ndarray, pieces: np.ndarray,
                op: str, stage: str, upward: bool) -> None:
    """NCCL's double binary tree between the servers' heads: a head's chunks alternate between trees 0 and 1."""
    trees = double_binary_tree_parents(nodes)
    shapes = [(parents, _depths(parents), _slots(parents)) for parents in trees]
    edges = []
    for head in np.unique(head_of).tolist():
        for position, piece in enumerate(pieces[head_of == head].tolist()):
            parents, depth, slot = shapes[position % 2]
            for node, parent in enumerate(parents):
                if parent is None:
                    continue
                child, up = node * g + head, parent * g + head
                edges.append((depth[node], slot[node], child, up, piece) if upward
                             else (depth[node], slot[node], up, child, piece))
    _tree_batches(edges, builder, op, stage, upward)


@gc_paused()
def nvls_tree_allreduce(nranks: int, size_bytes: int, *, gpus_per_node: int | None = None,
                        heads: int | None = None, max_pieces: int = 64, version: str = NCCL_RELEASE) -> Schedule:
    """NVLSTree all-reduce: NVLS inside every server, NCCL's double binary tree between the servers' heads.

    The payload is cut into `heads` parts; part ``h`` is reduced inside every
    server by the server's NVSwitch onto its GPU ``h`` (the GPU of NIC ``h``),
    all-reduced between the servers' GPUs ``h`` over NCCL's two trees (its chunks
    alternate between them, so that a server inner in one tree is a leaf in the
    other and the NICs carry the same load, as NCCL's NVLS channel ``c`` serves all
    heads over tree ``c mod 2``: ``connectNvls`` in ``src/graph/connect.cc``), and
    multicast back by the NVSwitch. Switch endpoint ``p + k`` is server ``k``'s.

    Parameters
    ----------
    nranks, size_bytes, gpus_per_node, version
        As :func:`nccl_ring_allreduce`; at least two servers.
    heads : int, optional
        Head GPUs per server (default: every GPU, one per NIC on DGX servers).
    max_pieces : int, optional
        At most this many 128 KiB chunks per part.

    Returns
    -------
    Schedule
        Stages ``reduce``, ``tree_reduce``, ``tree_broadcast``, ``multicast``.
    """
    g, nodes = _check(nranks, size_bytes, gpus_per_node, "simple", "nvlink", max_pieces)
    if nodes < 2:
        raise ScheduleError(f"NVLSTree joins servers; {nranks} ranks of {g} GPUs are one server (use nvls)",
                            path="gpus_per_node")
    heads = _check_heads(heads, g)
    head_list, chunk_bytes = _head_parts(size_bytes, heads, NVLS_CHUNK_BYTES, max_pieces)
    builder = ScheduleBuilder(chunk_bytes, nranks, switches=[tuple(range(k * g, k * g + g)) for k in range(nodes)])
    head_of = np.array(head_list, dtype=np.int64)
    pieces = np.array([builder.piece((c,)) for c in range(len(chunk_bytes))], dtype=np.int64)
    count = len(pieces)
    for node in range(nodes):
        switch = np.full(count, nranks + node, dtype=np.int64)
        local = node * g + (head_of[:, None] + np.arange(g)[None, :]) % g
        _switch_reduce(builder, local, switch, pieces, "reduce")
        builder.send_batch(switch, local[:, 0], pieces, "copy", "reduce")
    _inter_tree(builder, nodes, g, head_of, pieces, "reduce", "tree_reduce", upward=True)
    _inter_tree(builder, nodes, g, head_of, pieces, "copy", "tree_broadcast", upward=False)
    for node in range(nodes):
        switch = np.full(count, nranks + node, dtype=np.int64)
        local = node * g + (head_of[:, None] + np.arange(g)[None, :]) % g
        builder.send_batch(local[:, 0], switch, pieces, "copy", "multicast")
        for column in range(1, g):
            builder.send_batch(switch, local[:, column], pieces, "copy", "multicast")
    params = dict(gpus_per_node=g, heads=heads, max_pieces=max_pieces, version=version)
    schedule = builder.schedule("allreduce", "nvls_tree", params)
    base, _, inter_s = _latencies_s(version, "nvls_tree", "simple", "nvlink", g)
    intra_latency = _constants(version).hw_latency_us[_HW["nvlink"]][_ALGO["nvls_tree"]][_PROTO["simple"]] * 1e-6
    node_of = _ranks_node_of(nranks, g, range(nodes))
    return _annotate(schedule, PROTOCOLS["simple"], node_of, base + intra_latency,
                     lambda src, dst, same: np.where(same, 0.0, inter_s), head_of)


def _leaf_groups(leaf_servers: Sequence[int] | None, nodes: int) -> list[range]:
    """The servers under each leaf of the aggregation tree, consecutive runs of `leaf_servers` (all: one leaf)."""
    if leaf_servers is None:
        return [range(nodes)]
    sizes = [int(size) for size in leaf_servers] if isinstance(leaf_servers, (list, tuple)) else None
    if sizes is None or any(size < 1 for size in sizes) or sum(sizes) != nodes or any(
            size != given for size, given in zip(sizes, leaf_servers)):
        raise ScheduleError(f"must be a list of server counts ≥ 1 that add up to the {nodes} servers, "
                            f"got {leaf_servers!r}", path="leaf_servers")
    starts = np.cumsum([0, *sizes]).tolist()
    return [range(a, b) for a, b in zip(starts, starts[1:])]


def _sharp_tree(builder: ScheduleBuilder, nranks: int, heads: int, head_of: np.ndarray, pieces: np.ndarray,
                tops: list[np.ndarray], leaves: list[range]) -> None:
    """The fabric's part of CollNet: each head's part summed along the aggregation tree and returned down it.

    ``tops[k]`` holds server ``k``'s head of every chunk. Switch endpoint ``p + h`` sums part ``h`` (the
    tree's root). The heads of the servers of ``leaves[i]`` (a leaf of several servers) add into that
    leaf's endpoint ``p + heads + i·heads + h``, which adds its sum into the root; the root returns the
    sum to the leaves and they to their heads. Every other head talks to the root.
    """
    root = nranks + head_of
    target = [root] * len(tops)
    below = [nranks + heads * (i + 1) + head_of for i in range(len(leaves))]
    for leaf, group in zip(below, leaves):
        for node in group:
            target[node] = leaf
    for node, top in enumerate(tops):
        builder.send_batch(top, target[node], pieces, "reduce", "sharp")
    for leaf in below:
        builder.send_batch(leaf, root, pieces, "reduce", "sharp")
    for leaf in below:
        builder.send_batch(root, leaf, pieces, "copy", "sharp")
    for node, top in enumerate(tops):
        builder.send_batch(target[node], top, pieces, "copy", "sharp")


def _collnet(nranks: int, size_bytes: int, gpus_per_node: int | None, heads: int | None, max_pieces: int,
             version: str, chain: bool, leaf_servers: Sequence[int] | None = None) -> Schedule:
    name = "collnet_chain" if chain else "collnet_direct"
    g, nodes = _check(nranks, size_bytes, gpus_per_node, "simple", "nvlink", max_pieces)
    if nodes < 2:
        raise ScheduleError(f"CollNet joins servers through the fabric; {nranks} ranks of {g} GPUs are one server",
                            path="gpus_per_node")
    heads = _check_heads(heads, g)
    groups = _leaf_groups(leaf_servers, nodes)
    shared = [group for group in groups if len(group) > 1] if len(groups) > 1 else []
    chunk = COLLNET_CHAIN_CHUNK_BYTES if chain else COLLNET_DIRECT_CHUNK_BYTES
    head_list, chunk_bytes = _head_parts(size_bytes, heads, chunk, max_pieces)
    switches = [tuple(k * g + h for k in range(nodes)) for h in range(heads)]
    switches += [tuple(k * g + h for k in group) for group in shared for h in range(heads)]
    builder = ScheduleBuilder(chunk_bytes, nranks, switches=switches)
    head_of = np.array(head_list, dtype=np.int64)
    pieces = np.array([builder.piece((c,)) for c in range(len(chunk_bytes))], dtype=np.int64)
    local = [node * g + (head_of[:, None] + np.arange(g)[None, :]) % g for node in range(nodes)]
    if chain:
        for column in range(g - 1, 0, -1):
            for node in range(nodes):
                builder.send_batch(local[node][:, column], local[node][:, column - 1], pieces, "reduce", "reduce")
    else:
        for column in range(1, g):
            for node in range(nodes):
                builder.send_batch(local[node][:, column], local[node][:, 0], pieces, "reduce", "reduce")
    _sharp_tree(builder, nranks, heads, head_of, pieces, [local[node][:, 0] for node in range(nodes)], shared)
    if chain:
        for column in range(1, g):
            for node in range(nodes):
                builder.send_batch(local[node][:, column - 1], local[node][:, column], pieces, "copy", "broadcast")
    else:
        for column in range(1, g):
            for node in range(nodes):
                builder.send_batch(local[node][:, 0], local[node][:, column], pieces, "copy", "broadcast")
    params = dict(gpus_per_node=g, heads=heads, max_pieces=max_pieces, version=version)
    if leaf_servers is not None:
        params["leaf_servers"] = [len(group) for group in groups]
    schedule = builder.schedule("allreduce", name, params)
    _, intra_s, inter_s = _latencies_s(version, name, "simple", "nvlink", g)
    if not chain:
        intra_s = min(1, g - 1) * intra_s + (g - 1) * COLLNET_ARITY_US * 1e-6
    node_of = _ranks_node_of(nranks, g, [-1] * len(switches))
    return _annotate(schedule, PROTOCOLS["simple"], node_of, 0.0,
                     lambda src, dst, same: np.where((src >= nranks) & (dst >= nranks), 0.0,
                                                     np.where(same, intra_s, inter_s / 2)), head_of)


@gc_paused()
def collnet_direct_allreduce(nranks: int, size_bytes: int, *, gpus_per_node: int | None = None,
                             heads: int | None = None, max_pieces: int = 64, version: str = NCCL_RELEASE,
                             leaf_servers: Sequence[int] | None = None) -> Schedule:
    """CollNet Direct (InfiniBand SHARP) all-reduce: every GPU to its part's head, the fabric sums the heads.

    Part ``h`` of the payload: every GPU of a server adds it into the server's GPU
    ``h`` directly, the GPUs ``h`` of all servers add it into the fabric along
    SHARP's aggregation tree, which returns the sum to each of them; each
    broadcasts it inside its server. The tree's root is switch endpoint ``p + h``,
    placed by the network on the lowest reduce-capable switch that reaches all of
    them (the rail's leaf on a rail-optimised fabric of one leaf per rail, a spine
    when a rail spans several leaves). With `leaf_servers`, the heads of each
    leaf of several servers first add into that leaf's endpoint, which sends one
    stream up to the root and returns the root's sum to them (Graham et al.,
    2016: every aggregation node reduces its children and forwards one result).

    Parameters
    ----------
    nranks, size_bytes, gpus_per_node, version
        As :func:`nccl_ring_allreduce`; at least two servers.
    heads : int, optional
        Head GPUs per server, one per SHARP-attached NIC (default: every GPU).
    max_pieces : int, optional
        At most this many 512 KiB chunks per part.
    leaf_servers : sequence of int, optional
        Servers under each leaf switch of the aggregation tree, consecutive in
        server order, adding up to all servers (default: one leaf, every head
        adds into the root). The registry's ``resolve`` derives it from the
        network (:meth:`simnet.network.Network.aggregation_switches`) where a
        rail spans several leaves.
    """
    return _collnet(nranks, size_bytes, gpus_per_node, heads, max_pieces, version, chain=False,
                    leaf_servers=leaf_servers)


@gc_paused()
def collnet_chain_allreduce(nranks: int, size_bytes: int, *, gpus_per_node: int | None = None,
                            heads: int | None = None, max_pieces: int = 64, version: str = NCCL_RELEASE,
                            leaf_servers: Sequence[int] | None = None) -> Schedule:
    """CollNet Chain (InfiniBand SHARP) all-reduce: a chain in every server, the fabric sums the chains' heads.

    As :func:`collnet_direct_allreduce` (the same aggregation tree in the fabric),
    but each part is reduced along the chain ``h+g-1 -> ... -> h+1 -> h`` of a
    server and broadcast back along it, and chunks are 256 KiB.
    """
    return _collnet(nranks, size_bytes, gpus_per_node, heads, max_pieces, version, chain=True,
                    leaf_servers=leaf_servers)


def nccl_allreduce(nranks: int, size_bytes: int, *, nccl_algorithm: str = "ring", version: str = NCCL_RELEASE,
                   **params) -> Schedule:
    """The all-reduce NCCL runs: the schedule of `nccl_algorithm` (``"ring"``, ``"tree"``, ``"nvls"``, ...).

    The registry's ``nccl`` entry resolves `nccl_algorithm`, ``protocol`` and
    ``channels`` per size from NCCL's own cost model on the network
    (:func:`simnet.models.nccl.choose`) of release `version`, as that release does at
    run time; `params` are those of that algorithm's builder.
    """
    if nccl_algorithm not in _BUILDERS:
        raise ScheduleError(f"must be one of {', '.join(_BUILDERS)}, got {nccl_algorithm!r}", path="nccl_algorithm")
    schedule = _BUILDERS[nccl_algorithm](nranks, size_bytes, version=version, **params)
    return schedule.replace(algorithm="nccl", params={"nccl_algorithm": nccl_algorithm, **schedule.params})


def _nccl_choice(collective: str, nranks: int, size_bytes: int, nccl_algorithm: str, params: dict) -> Schedule:
    builders = _COLLECTIVE_BUILDERS[collective]
    if nccl_algorithm not in builders:
        raise ScheduleError(f"simnet builds NCCL's {collective} as {' or '.join(builders)}, got {nccl_algorithm!r}",
                            path="nccl_algorithm")
    schedule = builders[nccl_algorithm](nranks, size_bytes, **params)
    return schedule.replace(algorithm=f"nccl_{collective}",
                            params={"nccl_algorithm": nccl_algorithm, **schedule.params})


def nccl_all_gather(nranks: int, size_bytes: int, *, nccl_algorithm: str = "ring", version: str = NCCL_RELEASE,
                    **params) -> Schedule:
    """The all-gather NCCL runs: its own choice per size, Ring (:func:`nccl_ring_all_gather`) or PAT
    (:func:`nccl_pat_all_gather`).

    The registry's ``nccl_all_gather`` entry resolves `nccl_algorithm`, ``protocol``
    and ``channels`` from NCCL's cost model of AllGather on the network; another
    choice (NVLS, CollNet) is refused with a one-line error.
    """
    return _nccl_choice("all_gather", nranks, size_bytes, nccl_algorithm, {"version": version, **params})


def nccl_reduce_scatter(nranks: int, size_bytes: int, *, nccl_algorithm: str = "ring", version: str = NCCL_RELEASE,
                        **params) -> Schedule:
    """The reduce-scatter NCCL runs: its own choice per size, Ring or PAT (see :func:`nccl_all_gather`)."""
    return _nccl_choice("reduce_scatter", nranks, size_bytes, nccl_algorithm, {"version": version, **params})


def nccl_broadcast(nranks: int, size_bytes: int, *, nccl_algorithm: str = "ring", version: str = NCCL_RELEASE,
                   **params) -> Schedule:
    """The broadcast NCCL runs: Ring, its only broadcast algorithm, with NCCL's protocol and channels per size."""
    return _nccl_choice("broadcast", nranks, size_bytes, nccl_algorithm, {"version": version, **params})


def nccl_reduce(nranks: int, size_bytes: int, *, nccl_algorithm: str = "ring", version: str = NCCL_RELEASE,
                **params) -> Schedule:
    """The reduce NCCL runs: Ring, its only reduce algorithm, with NCCL's protocol and channels per size."""
    return _nccl_choice("reduce", nranks, size_bytes, nccl_algorithm, {"version": version, **params})


def _model(algorithm: str, collective: str = "allreduce"):
    """NCCL's own model time of `algorithm` (``ncclTopoGetAlgoTime``) on the costs' network.

    ``nan`` where NCCL has no model of the network (see
    :func:`simnet.models.nccl.network_tuning`) or its model disables the entry
    (CollNet without a CollNet plugin, NVLS without NVSwitch SHARP).
    """

    def model(costs: PairCosts, nranks: int, size_bytes: int, *, gamma_s_per_byte: float = 0.0,
              protocol: str = "simple", version: str = NCCL_RELEASE, nccl_algorithm: str | None = None,
              **ignored) -> float:
        from simnet.models.nccl import algo_time_s

        tuning = _tuning(costs.network, version)
        if tuning is None:
            return math.nan
        time_s = algo_time_s(tuning, collective, nccl_algorithm or algorithm, protocol, size_bytes)
        return time_s if math.isfinite(time_s) else math.nan

    return model


def _tuning(network, version: str, ranks=None):
    """NCCL's model of a network (or of the communicator of `ranks`), or None where simnet cannot derive
    NCCL's graphs."""
    from simnet.models.nccl import network_tuning

    return network_tuning(network, version, ranks)


def _gpus_per_node(network, ranks=None) -> int:
    from simnet.algorithms.hierarchy import hierarchy_factors

    gpus = list(network.ranks) if ranks is None else [network.ranks[rank] for rank in ranks]
    try:
        return hierarchy_factors(network.graph, ["host"], ranks=None if ranks is None else gpus)[0]
    except SimnetError:
        hosts = {network.graph.nodes[gpu].get("host") for gpu in gpus}
        if len(hosts) > 1 and None not in hosts:
            raise SimnetError(f"NCCL's schedules take the ranks server by server, the same number on each (NCCL lays "
                              f"its rings and trees out by the topology; simnet builds them from rank order), and these "
                              f"{len(gpus)} ranks on {len(hosts)} servers are not: place them server by server (e.g. "
                              f"placement contiguous or rail_aligned)", path="ranks") from None
        return len(gpus)


def _leaf_servers(network, ranks, g: int, heads: int | None) -> list[int] | None:
    """CollNet's ``leaf_servers`` on the network (or the communicator of `ranks`, network ranks): the
    servers under each leaf of SHARP's aggregation tree, or None where every rail sums in one switch.

    Server ``k``'s leaf is the tuple of :meth:`simnet.network.Network.aggregation_switches` of its heads,
    one per rail; consecutive servers with the same tuple share a leaf. None also where the heads cannot
    be laid out (the builder and the placement say why).
    """
    members = list(range(network.size)) if ranks is None else [int(rank) for rank in ranks]
    heads = g if heads is None else heads
    if not (isinstance(g, int) and isinstance(heads, int) and 1 <= heads <= g and len(members) % g == 0
            and len(members) >= 2 * g):
        return None

    def derive() -> list[int] | None:
        nodes = len(members) // g
        try:
            rails = [network.aggregation_switches([members[k * g + h] for k in range(nodes)])
                     for h in range(heads)]
        except SimnetError:
            return None
        labels = list(zip(*rails))
        sizes = [1]
        for before, after in zip(labels, labels[1:]):
            if after == before:
                sizes[-1] += 1
            else:
                sizes.append(1)
        return tuple(sizes) if 1 < len(sizes) < nodes else None

    return network.derived(("collnet_leaf_servers", tuple(members), g, heads), derive)


def _ring_exits(network, ranks, g: int) -> list[list[int]] | None:
    """The rings' ``exits`` on the network (or the communicator of `ranks`, network ranks): per GPU ``e`` of a
    server, the server's other GPUs whose route to the next server's GPU ``e`` leaves on ``e``'s rail without a
    relay (:meth:`simnet.network.Network.exit_rail`), read off the communicator's first two servers; None on
    one server, or where no GPU leaves on another's rail (no rails)."""
    members = list(range(network.size)) if ranks is None else [int(rank) for rank in ranks]
    if not isinstance(g, int) or g < 2 or len(members) % g or len(members) < 2 * g:
        return None

    def derive() -> list[list[int]] | None:
        nodes = network.graph.nodes
        exits = []
        for e, target in enumerate(members[g:2 * g]):
            rail = nodes[network.node(target)].get("rail")
            exits.append([] if rail is None else
                         [x for x in range(g) if x != e and network.exit_rail(members[x], target) == rail])
        return exits if any(exits) else None

    return network.derived(("nccl_ring_exits", tuple(members[:2 * g]), g), derive)


def _rail_entries(network, ranks, g: int) -> list[int] | None:
    """The channels' ``entries`` on the network (or the communicator of `ranks`, network ranks): the GPUs of the
    communicator's first server NIC by NIC (by their ``rail``, NICs in the order of their first GPU), the first
    GPU of every NIC, then the second, ...; None where that is ``0, 1, ..., g-1`` (a NIC per GPU), on one
    GPU per server, or where a GPU has no rail."""
    members = list(range(network.size)) if ranks is None else [int(rank) for rank in ranks]
    if not isinstance(g, int) or g < 2 or len(members) < g:
        return None
    rails = [network.graph.nodes[network.node(rank)].get("rail") for rank in members[:g]]
    if None in rails:
        return None
    by_rail: dict = {}
    for local, rail in enumerate(rails):
        by_rail.setdefault(rail, []).append(local)
    groups = list(by_rail.values())
    entries = [group[turn] for turn in range(max(map(len, groups))) for group in groups if turn < len(group)]
    return None if entries == list(range(g)) else entries


def _keywords(builder) -> set[str]:
    import inspect

    return {p.name for p in inspect.signature(builder).parameters.values() if p.kind is inspect.Parameter.KEYWORD_ONLY}


def _resolver(algorithm: str, collective: str = "allreduce"):
    """Fill in what NCCL decides at run time on the network (or on the communicator of `ranks`, network ranks):
    algorithm, protocol, channels, server size."""

    def resolve(network, size_bytes: int, params: dict, ranks=None) -> dict:
        from simnet.models.nccl import MODELLED_SYSTEMS, choose, cost_table, launch_config

        given, params = params, dict(params)
        version = params.get("version", NCCL_RELEASE)
        tuning = _tuning(network, version, ranks)
        chosen = algorithm
        builders = _BUILDERS if collective == "allreduce" else _COLLECTIVE_BUILDERS[collective]
        if algorithm == "nccl":
            if tuning is None:
                raise SimnetError(f"NCCL's choice needs NCCL's model of the topology, which simnet derives for "
                                  f"{MODELLED_SYSTEMS}", path="nccl_algorithm")
            if "nccl_algorithm" not in params:
                pick = choose(tuning, collective, size_bytes)
                params["nccl_algorithm"] = pick.algorithm
                if "protocol" in _keywords(builders.get(pick.algorithm, nccl_ring_allreduce)):
                    params.setdefault("protocol", pick.protocol)
            chosen = params["nccl_algorithm"]
            if chosen not in builders:
                if "nccl_algorithm" in given:
                    raise SimnetError(f"unknown algorithm {chosen!r}{did_you_mean(str(chosen), list(builders))} "
                                      f"(simnet builds NCCL's {collective} as: {', '.join(builders)})",
                                      path="nccl_algorithm")
                built = "" if collective == "allreduce" else f" for {collective} (it builds {' and '.join(builders)})"
                ring = "nccl_ring" if collective == "allreduce" else f"nccl_ring_{collective}"
                raise SimnetError(f"NCCL {version} chose {chosen!r} at {format_size(size_bytes)}, which simnet does "
                                  f"not build{built}; give nccl_algorithm: ring (or list {ring}) to run NCCL's ring "
                                  f"there, or another version", path="nccl_algorithm")
        keywords = _keywords(builders[chosen])
        if "gpus_per_node" in keywords:
            params.setdefault("gpus_per_node", _gpus_per_node(network, ranks))
        if "exits" in keywords and "exits" not in params:
            exits = _ring_exits(network, ranks, params["gpus_per_node"])
            if exits is not None:
                params["exits"] = exits
        if "entries" in keywords and "entries" not in params:
            entries = _rail_entries(network, ranks, params["gpus_per_node"])
            if entries is not None:
                params["entries"] = entries
        if "leaf_servers" in keywords and "leaf_servers" not in params:
            leaves = _leaf_servers(network, ranks, params["gpus_per_node"], params.get("heads"))
            if leaves is not None:
                params["leaf_servers"] = list(leaves)
        if "protocol" in keywords:
            params.setdefault("protocol", "auto" if algorithm == "nccl" or tuning is not None else "simple")
            if params["protocol"] == "auto":
                if tuning is None:
                    raise SimnetError(f"protocol auto needs NCCL's model of the topology, which simnet derives for "
                                      f"{MODELLED_SYSTEMS}; choose simple, ll or ll128", path="protocol")
                table = cost_table(tuning, collective, size_bytes)
                params["protocol"] = min(PROTOCOL_ORDER, key=lambda p: (table[(chosen, p)], PROTOCOL_ORDER.index(p)))
        if "channels" in keywords and "channels" not in params:
            channels = 2
            if tuning is not None:
                channels = launch_config(tuning, collective, chosen, params.get("protocol", "simple"), size_bytes)[0]
            params["channels"] = max(1, min(channels, size_bytes))
        if "intra" in keywords and "intra" not in params and tuning is not None:
            params["intra"] = "nvlink" if tuning.graphs.ring.type_intra in ("NVL", "NVB") else "pci"
        if algorithm == "nccl":
            params = {k: v for k, v in params.items() if k in keywords or k == "nccl_algorithm"}
        return params

    return resolve


def _piece_bound(size_bytes: int, parts: int, piece_bytes: int, max_pieces: int) -> int:
    """Pieces when :func:`split_bytes` splits `size_bytes` into `parts` parts (or parts of those, all differing by
    at most a byte) and :func:`_pieces` cuts each: at most ``parts`` times those of the largest part,
    ``ceil(size_bytes / parts)`` bytes."""
    largest = -(-size_bytes // parts)
    return parts * min(max_pieces, max(1, -(-largest // piece_bytes)))


def _channels(params) -> int:
    return int(params.get("channels", 2))


def _max_pieces(params, default: int = 64) -> int:
    return int(params.get("max_pieces", default))


def _protocol(params) -> Protocol:
    return PROTOCOLS.get(params.get("protocol"), PROTOCOLS["ll"])


def _ring_transfers(nranks: int, size_bytes: int, params) -> int:
    """``2 (p - 1)`` messages per slice of each channel's ``p`` blocks."""
    slices = _piece_bound(size_bytes, _channels(params) * nranks, _protocol(params).ring_slice_bytes,
                          _max_pieces(params))
    return 2 * (nranks - 1) * slices


def _tree_transfers(nranks: int, size_bytes: int, params) -> int:
    """At most ``2 p`` messages (up and down every tree edge) per chunk of each channel."""
    return 2 * nranks * _piece_bound(size_bytes, _channels(params), _protocol(params).tree_chunk_bytes,
                                     _max_pieces(params, 256))


def _switch_transfers(nranks: int, size_bytes: int, params) -> int:
    """``2 p + 1`` messages per chunk of each rank's part: ``p`` into the switch, the sum to its owner, the owner's
    store into the switch and ``p - 1`` multicast copies."""
    return (2 * nranks + 1) * _piece_bound(size_bytes, nranks, NVLS_CHUNK_BYTES, _max_pieces(params))


def _head_transfers(chunk_bytes: int, per_server: int) -> Callable[..., int]:
    """Estimate of a schedule cutting each head's part into chunks of `chunk_bytes` and sending, per chunk, ``2 p``
    messages inside the servers (every GPU into the head or switch and back) and at most `per_server` per server
    between them: NVLSTree's ``p + s`` into and out of the switches plus ``2 (s - 1)`` tree edges over ``s``
    servers is ``2 p + 3 s - 2``; CollNet's ``2 (p - s)`` inside, ``2 s`` to and from the fabric and two per leaf
    of several servers is at most ``2 p + s``. Without ``gpus_per_node``, every rank counts as a server."""
    def transfers(nranks: int, size_bytes: int, params) -> int:
        g = params.get("gpus_per_node")
        servers = nranks // g if isinstance(g, int) and g >= 1 else nranks
        heads = params.get("heads") or g
        per_chunk = 2 * nranks + per_server * servers
        if not isinstance(heads, int) or heads < 1:
            return per_chunk * min(nranks * _max_pieces(params), size_bytes // chunk_bytes + nranks)
        return per_chunk * _piece_bound(size_bytes, heads, chunk_bytes, _max_pieces(params))
    return transfers


_NCCL = ("NVIDIA NCCL 2.30.7 (src/graph/tuning.cc, trees.cc, connect.cc, src/device/all_reduce.h, enqueue.cc); "
         "Jeaugey, S. (2019), NCCL 2.4 double binary trees, NVIDIA Developer Blog")
_NO_ALPHA_BETA = "NCCL's own cost model (ncclTopoGetAlgoTime) is its model"

PROTOCOL_ORDER = ("ll", "ll128", "simple")
"""NCCL's protocol ids (ties in its cost table go to the lower id)."""

_RECORDS = {
    "nccl_ring": Algorithm(
        "nccl_ring", ("allreduce",), nccl_ring_allreduce,
        "NCCL's ring: rail-aligned channel rings, sliced and pipelined, Simple/LL/LL128",
        "NCCL model: lat + n / bw, lat = base + (2(p-1) - 2(N-1))·hw_intra + 2(N-1)·hw_net, bw = channels·bw_ch·p/(2(p-1))",
        model=_model("ring"), citation=_NCCL, transfers=_ring_transfers,
        resolve=_resolver("ring"),
    ),
    "nccl_tree": Algorithm(
        "nccl_tree", ("allreduce",), nccl_tree_allreduce,
        "NCCL's tree: chains inside servers, double binary tree between them, pipelined",
        "NCCL model: lat + n / bw, lat = base + 2((p/N - 1)·hw_intra + log2 N·hw_net), bw = channels·bw_ch/2 (×corr)",
        model=_model("tree"), citation=_NCCL, transfers=_tree_transfers,
        resolve=_resolver("tree"),
    ),
    "nvls": Algorithm(
        "nvls", ("allreduce",), nvls_allreduce,
        "NVLS: NVSwitch in-switch reduction and multicast on one server",
        "NCCL model: hw_nvls + n / bw, bw = channels·bw_ch·eff_nvls·2(c-1)/c·p/(2(p-1))",
        model=_model("nvls"), citation=_NCCL + "; Klenk et al. (2020), ISCA", transfers=_switch_transfers,
        resolve=_resolver("nvls"),
    ),
    "nvls_tree": Algorithm(
        "nvls_tree", ("allreduce",), nvls_tree_allreduce,
        "NVLSTree: NVLS inside servers, double binary tree between their head GPUs",
        "NCCL model: hw_nvls + 2 log2 N·hw_net + n / bw",
        model=_model("nvls_tree"), citation=_NCCL, transfers=_head_transfers(NVLS_CHUNK_BYTES, 3),
        resolve=_resolver("nvls_tree"),
        supports=lambda nranks: nranks >= 4,
    ),
    "collnet_direct": Algorithm(
        "collnet_direct", ("allreduce",), collnet_direct_allreduce,
        "CollNet Direct: InfiniBand SHARP sums the servers' head GPUs along the fabric's aggregation tree, "
        "direct intra-server reduce/broadcast",
        "NCCL model: 2(hw_intra + (ppn-1)·0.4 us) + hw_net + n / bw",
        model=_model("collnet_direct"), citation=_NCCL + "; Graham et al. (2016), SHArP",
        transfers=_head_transfers(COLLNET_DIRECT_CHUNK_BYTES, 1),
        resolve=_resolver("collnet_direct"),
        supports=lambda nranks: nranks >= 4,
    ),
    "collnet_chain": Algorithm(
        "collnet_chain", ("allreduce",), collnet_chain_allreduce,
        "CollNet Chain: InfiniBand SHARP sums the heads of chains through each server along the fabric's "
        "aggregation tree",
        "NCCL model: 2(ppn-1)·hw_intra + hw_net + n / bw",
        model=_model("collnet_chain"), citation=_NCCL + "; Graham et al. (2016), SHArP",
        transfers=_head_transfers(COLLNET_CHAIN_CHUNK_BYTES, 1),
        resolve=_resolver("collnet_chain"),
        supports=lambda nranks: nranks >= 4,
    ),
}

NCCL_CHOICES = ("nccl", "nccl_all_gather", "nccl_reduce_scatter", "nccl_broadcast", "nccl_reduce")
"""Registry names of NCCL's own choice of algorithm, per collective."""

NCCL_NAMES = {"nccl_ring": "ring", "nccl_tree": "tree", "nvls": "nvls", "nvls_tree": "nvls_tree",
              "collnet_direct": "collnet_direct", "collnet_chain": "collnet_chain",
              "nccl_ring_all_gather": "ring", "nccl_ring_reduce_scatter": "ring", "nccl_ring_broadcast": "ring",
              "nccl_ring_reduce": "ring", "nccl_pat_all_gather": "pat", "nccl_pat_reduce_scatter": "pat"}
"""simnet's name of each of NCCL's schedules -> NCCL's algorithm name
(:data:`simnet.models.nccl.ALGORITHMS`, the tuner file's ``algorithm``)."""


def built_release(name: str, params: Mapping[str, Any]) -> str:
    """The NCCL release a run of registry entry `name` with `params` builds: its ``version``, else
    :data:`NCCL_RELEASE`; ``""`` for a schedule outside NCCL's family.

    >>> built_release("nccl", {"version": "2.26.2"}), built_release("nvls", {}), built_release("ring", {})
    ('2.26.2', '2.30.7', '')
    """
    if name not in NCCL_NAMES and name not in NCCL_CHOICES:
        return ""
    return str(params.get("version", NCCL_RELEASE))


SWITCH_SCHEDULES = ("nvls", "nvls_tree", "collnet_direct", "collnet_chain")
"""NCCL's schedules that reduce in a switch: they run only where a reduce-capable switch serves each of their
groups of GPUs (:attr:`simnet.schedule.Schedule.switches`, placed by :meth:`simnet.network.Network.place`)."""

_BUILDERS = {NCCL_NAMES[name]: record.builder for name, record in _RECORDS.items()}
"""NCCL's algorithm names -> all-reduce builders."""

_RINGS = {"all_gather": nccl_ring_all_gather, "reduce_scatter": nccl_ring_reduce_scatter,
          "broadcast": nccl_ring_broadcast, "reduce": nccl_ring_reduce}
"""NCCL's ring builders of the collectives other than all-reduce."""

_PATS = {"all_gather": nccl_pat_all_gather, "reduce_scatter": nccl_pat_reduce_scatter}
"""NCCL's PAT builders."""

_COLLECTIVE_BUILDERS = {collective: {"ring": ring, **({"pat": _PATS[collective]} if collective in _PATS else {})}
                        for collective, ring in _RINGS.items()}
"""NCCL's algorithm names -> builders, per collective other than all-reduce."""


def _phase_transfers(nranks: int, size_bytes: int, params) -> int:
    """``p - 1`` messages per slice of each share's channel parts: a ring phase's count."""
    slices = _piece_bound(size_bytes, _channels(params) * nranks, _protocol(params).ring_slice_bytes,
                          _max_pieces(params))
    return (nranks - 1) * slices


def _pat_transfers(nranks: int, size_bytes: int, params) -> int:
    """At most ``p (p - 1)`` messages per channel and sweep (one block each), a sweep per chunk of the largest
    share's channel part (chunks are :func:`pat_chunk_bytes`, all-gather's the smaller)."""
    channels = _channels(params)
    chunk_bytes = pat_chunk_bytes("all_gather", size_bytes, channels)
    return (nranks - 1) * _piece_bound(size_bytes, nranks * channels, chunk_bytes, _max_pieces(params))


def _chain_transfers(nranks: int, size_bytes: int, params) -> int:
    """``p - 1`` messages per slice of each channel's part."""
    protocol = _protocol(params)
    step = protocol.tree_chunk_bytes if protocol.name == "simple" else protocol.ring_slice_bytes
    return (nranks - 1) * _piece_bound(size_bytes, _channels(params), step, _max_pieces(params))


_PHASE_FORMULA = ("NCCL model: lat + n / bw, lat = base + (p-1 - (N-1))·hw_intra + (N-1)·hw_net, "
                  "bw = channels·bw_ch·p/(p-1)")
_CHAIN_FORMULA = "NCCL model: lat + n / bw, lat = base + p·hw (one hw per ring step), bw = channels·bw_ch"
_RING_FORMULAS = {"all_gather": _PHASE_FORMULA, "reduce_scatter": _PHASE_FORMULA,
                  "broadcast": _CHAIN_FORMULA, "reduce": _CHAIN_FORMULA}
_RING_TRANSFERS = {"all_gather": _phase_transfers, "reduce_scatter": _phase_transfers,
                   "broadcast": _chain_transfers, "reduce": _chain_transfers}


def _chosen_transfers(estimates: Mapping[str, Callable[..., int]]) -> Callable[..., int]:
    """The estimate of the algorithm NCCL chose (``nccl_algorithm``), the largest of `estimates` before it is."""
    def transfers(nranks: int, size_bytes: int, params) -> int:
        chosen = params.get("nccl_algorithm")
        if chosen in estimates:
            return estimates[chosen](nranks, size_bytes, params)
        return max(estimate(nranks, size_bytes, params) for estimate in estimates.values())
    return transfers


_PAT_FORMULA = ("NCCL model: lat + n / bw, lat = 8 us + log2(N)·hw_net/3.5 + 2.8 us·p, "
                "bw = channels·bw_ch·0.75 (tree graph)")


def _decided_by(builders: dict) -> str:
    """What decides `nccl_algorithm` of NCCL's choice when a run does not give it."""
    names = f"one of {', '.join(builders)}" if len(builders) > 1 else next(iter(builders))
    return f"NCCL's choice per size, from its cost model of the topology (give {names} to force it, as NCCL_ALGO does)"


def nccl_variants(name: str) -> list[dict]:
    """The parameter sets a tuner tries for NCCL schedule `name`: one per protocol it runs.

    Ring and Tree run LL, LL128 and Simple; NVLS, NVLSTree and CollNet run Simple
    only (NCCL's model disables their LL and LL128 entries), so they have one
    variant without parameters. Channels are left to NCCL's launch configuration
    at each size (the registry's ``resolve``).

    >>> nccl_variants("nccl_tree"), nccl_variants("nvls")
    ([{'protocol': 'll'}, {'protocol': 'll128'}, {'protocol': 'simple'}], [{}])
    """
    builder = next(record.builder for record in ALGORITHMS if record.name == name)
    return [{"protocol": p} for p in PROTOCOL_ORDER] if "protocol" in _keywords(builder) else [{}]


_NETWORK_DECIDED = {
    "protocol": "NCCL's choice per size where simnet has NCCL's model of the topology, else 'simple' (give simple, "
                "ll or ll128 to force it, as NCCL_PROTO does)",
    "channels": "the channels NCCL launches at that size where simnet has NCCL's model of the topology, else 2 "
                "(give a number to force it)",
    "exits": "per GPU of a server, the GPUs whose route to the next server's GPU leaves on its rail without a relay "
             "(Network.exit_rail); none on one server or without rails",
    "entries": "a server's GPUs NIC by NIC (the first GPU of every rail, then the second, ...), so channel c crosses "
               "servers through NIC c mod NICs as in NCCL's graph search; none where each GPU has its own NIC or "
               "without rails",
    "leaf_servers": "the servers under each leaf of SHARP's aggregation tree where a rail spans several leaves, "
                    "else one leaf (Network.aggregation_switches)",
}
"""What the NCCL resolver decides on a network when a run does not give it (see :func:`_resolver`)."""


def _network_decided(record: Algorithm) -> Algorithm:
    """`record` saying which of its builder's parameters the network decides (:data:`_NETWORK_DECIDED`)."""
    decided = {name: text for name, text in _NETWORK_DECIDED.items() if name in _keywords(record.builder)}
    return replace(record, decided_by={**decided, **record.decided_by}) if decided else record


ALGORITHMS = (
    *_RECORDS.values(),
    Algorithm(
        "nccl", ("allreduce",), nccl_allreduce,
        "what NCCL runs: its own choice of algorithm, protocol and channels per size, from its cost model",
        "NCCL model of the chosen algorithm and protocol",
        model=_model("ring"), citation=_NCCL,
        transfers=_chosen_transfers({NCCL_NAMES[name]: record.transfers for name, record in _RECORDS.items()}),
        resolve=_resolver("nccl"), decided_by={"nccl_algorithm": _decided_by(_BUILDERS)},
    ),
    *(Algorithm(
        f"nccl_ring_{collective}", (collective,), builder,
        f"NCCL's ring {collective.replace('_', '-')}: rail-aligned channel rings, sliced and pipelined, "
        "Simple/LL/LL128",
        _RING_FORMULAS[collective], model=_model("ring", collective), citation=_NCCL,
        transfers=_RING_TRANSFERS[collective], resolve=_resolver("ring", collective),
    ) for collective, builder in _RINGS.items()),
    *(Algorithm(
        f"nccl_pat_{collective}", (collective,), builder,
        f"NCCL's PAT {collective.replace('_', '-')}: parallel binomial trees, farthest dimension first, "
        "aggregated up to its buffer (Simple)",
        _PAT_FORMULA, model=_model("pat", collective),
        citation=_NCCL + "; Jeaugey, S. (2025), PAT, arXiv:2506.20252", transfers=_pat_transfers,
        resolve=_resolver("pat", collective),
    ) for collective, builder in _PATS.items()),
    *(Algorithm(
        f"nccl_{collective}", (collective,), builder,
        f"what NCCL runs for {collective.replace('_', '-')}: its own choice per size "
        f"(simnet builds {' and '.join(_COLLECTIVE_BUILDERS[collective])})",
        "NCCL model of the chosen algorithm and protocol",
        model=_model("ring", collective), citation=_NCCL,
        transfers=_chosen_transfers({"ring": _RING_TRANSFERS[collective],
                                     **({"pat": _pat_transfers} if collective in _PATS else {})}),
        resolve=_resolver("nccl", collective),
        decided_by={"nccl_algorithm": _decided_by(_COLLECTIVE_BUILDERS[collective])},
    ) for collective, builder in (("all_gather", nccl_all_gather), ("reduce_scatter", nccl_reduce_scatter),
                                  ("broadcast", nccl_broadcast), ("reduce", nccl_reduce))),
)
ALGORITHMS = tuple(_network_decided(record) for record in ALGORITHMS)
"""Registry records of NCCL's algorithms: all-reduce, and the rings of the other four collectives."""
