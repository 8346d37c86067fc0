"""MSCCL XML algorithm files in and out of simnet schedules.

MSCCL XML is how schedule synthesizers (MSCCLang/msccl-tools, TACCL, TE-CCL) and
runtimes (the MSCCL executor for NCCL, the MSCCL scheduler, RCCL) exchange
collective algorithms. :func:`read` parses a file with the runtime's rules,
:meth:`Program.schedule` (or :func:`load` in one call) verifies it and turns it into
a :class:`~simnet.schedule.Schedule` that :func:`~simnet.schedule.check` has proved
correct, and :func:`dumps` / :func:`dump` write a simnet schedule as a file those
runtimes load. ``docs/interchange.md`` has the mapping, its semantics and the public
files checked with it.

The format
----------
``<algo>`` (``name``, ``proto``, ``nchannels``, ``nchunksperloop``, ``ngpus``,
``coll``, ``inplace``, ``outofplace``, ``minBytes``, ``maxBytes``) holds one ``<gpu>``
per rank with its buffers' sizes in chunks (``i_chunks``, ``o_chunks``,
``s_chunks``), each holding thread blocks ``<tb>`` (one ``send`` peer, one ``recv``
peer, one ``chan``) whose ``<step>`` instructions run strictly in order. A step
(``type`` ``s``, ``r``, ``rcs``, ``rrs``, ``rrc``, ``rrcs``, ``cpy``, ``re``, ``nop``)
moves ``cnt`` consecutive chunks from ``srcbuf[srcoff]`` to ``dstbuf[dstoff]``
(buffers ``i`` input, ``o`` output, ``s`` scratch). The k-th send of a thread block
to peer ``B`` on channel ``c`` is received by the k-th receive of ``B``'s thread
block receiving from it on ``c``. A step waits for step ``deps`` of thread block
``depid`` of its GPU (released by the first step from ``deps`` on that has
``hasdep="1"``); further dependencies are ``nop`` steps just before it. A chunk is
``nBytes / nchunksperloop`` bytes, ``nBytes`` the larger of the collective's two
buffers.

Mapping onto simnet
-------------------
simnet transfers move one logical chunk index between buffers of two ranks (or two
buffers of one rank); MSCCL steps move buffer *slots* whose contents change. The
importer executes the program symbolically (which chunk, summed over which ranks,
each slot holds) and gives every value a simnet cell ``(rank, buffer, chunk)``: a
value in the slot where the collective wants that chunk's result is in ``"work"``,
an untouched out-of-place input in ``"input"``, any other slot gets a scratch buffer
(``"scratch"``, ``"scratch1"``, ...) chosen so that two slots that ever hold the same
chunk on one rank never share one. Every network hop (a send matched with its
receive) is one simnet transfer, a ``cpy`` or ``re`` a local transfer.

Timing: a hop starts when its sending step may run (its thread block's previous
step and its dependencies are complete; a fused receive-send step has also received)
and the receiver's destination is free of earlier accesses; a step completes when
its own transfers and everything it waited for are complete, so a receive completes
once its data has arrived *and* its thread block got there. Sends are eager, as on
the runtime's connection FIFOs: a program whose every GPU sends before it receives
does not deadlock.

Protocol: the runtimes run a program's steps on NCCL's primitives with the file's
``proto`` (microsoft/msccl ``src/collectives/device/custom_collective.h`` instantiates
its interpreter with ``ProtoSimple``, ``ProtoLL`` and ``ProtoLL128``), so a hop of an
``LL`` file puts 16-byte lines of 8 payload bytes on the wire and one of an ``LL128``
file 128-byte lines of 120 (:data:`simnet.algorithms.nccl.PROTOCOLS`): its transfers
carry those wire bytes (:attr:`simnet.schedule.TransferTable.wire_bytes`); local
``cpy``/``re`` steps cross no connection and carry their payload. NCCL's per-hop and
base latencies are not charged: they are constants of NCCL's cost model for its own
algorithms (``src/graph/tuning.cc`` has none for MSCCL, whose runtimes pick a file by
``minBytes``/``maxBytes``, not by a cost).

References
----------
Cowan, M. et al. (2023). MSCCLang: Microsoft Collective Communication Language.
ASPLOS '23. Shah, A. et al. (2023). TACCL: Guiding collective algorithm synthesis
using communication sketches. NSDI '23. Runtime semantics (parser, step types,
dependencies, limits) as implemented by Azure/msccl-executor-nccl
(``src/misc/msccl/msccl_parser.cc``, ``src/device/msccl_kernel.cu``), ROCm/rccl
(``src/misc/msccl/*``, ``src/device/msccl_kernel_impl.h``) and microsoft/msccl
(``src/graph/topo.cc``, ``src/collectives/device/msccl_interpreter.h``); the file
layout written by msccl-tools' ``ir_to_xml`` (``msccl/language/ir.py``).
"""

from __future__ import annotations

import functools
import heapq
import re
from bisect import bisect_right
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from simnet.algorithms.nccl import PROTOCOLS as NCCL_PROTOCOLS
from simnet.algorithms.registry import Algorithm
from simnet.errors import ScheduleError, SimnetError
from simnet.schedule import (
    COLLECTIVES,
    INPUT,
    MAX_BUFFERS,
    REDUCE,
    SCRATCH,
    WORK,
    Schedule,
    TransferTable,
    check,
    split_bytes,
)

__all__ = [
    "MscclError",
    "MscclDefect",
    "MscclUnsupported",
    "Limits",
    "RUNTIME_LIMITS",
    "EXPORT_LIMITS",
    "COLLECTIVE_NAMES",
    "PROTOCOLS",
    "Program",
    "read",
    "reads",
    "load",
    "loads",
    "dump",
    "dumps",
]


class MscclError(SimnetError):
    """An MSCCL file simnet cannot take, with the file and ``gpu, tb, step`` as its path.

    Parameters
    ----------
    message : str
        What is wrong.
    kind : str
        Short class of the problem for summaries (``"deadlock"``, ``"unmatched"``,
        ``"wrong result"``, ``"race"``, ``"overflow"``, ``"limit"``, ``"format"``,
        ``"collective"``, ``"buffering"``, ``"export"``).
    path, source : str, optional
        Where: ``"gpu 3, tb 1, step 4"`` and the file.
    """

    def __init__(self, message: str, *, kind: str = "format", path: str = "", source: str = "") -> None:
        super().__init__(message, path=path, source=source)
        self.kind = kind

    def at(self, path: str = "", source: str = "") -> MscclError:
        """A copy with `path` prefixed and `source` set (keeping :attr:`kind`)."""
        joined = ".".join(p for p in (path, self.path) if p)
        return type(self)(self.message, kind=self.kind, path=joined, source=source or self.source)


class MscclDefect(MscclError):
    """A file that no MSCCL runtime runs correctly: malformed, beyond every runtime's limits, or wrong."""


class MscclUnsupported(MscclError):
    """A valid file that simnet cannot represent (a collective simnet lacks, a program needing FIFO buffering)."""


@dataclass(frozen=True)
class Limits:
    """Bounds an MSCCL runtime puts on a file.

    Attributes
    ----------
    max_steps : int
        Steps per thread block, ``nop`` included (``MSCCL_MAX_NUM_STEPS``).
    max_threadblocks : int
        Thread blocks per GPU (``MSCCL_MAX_NUM_THREAD_BLOCKS``; ``depid`` is an
        8-bit integer, so at most 128 can be depended on).
    max_channels : int
        Channels: ``chan < max_channels`` (``MAXCHANNELS``).
    max_count : int
        ``cnt`` of a step (``MSCCL_MAX_COUNT - 1``).
    max_per_channel : int
        Thread blocks with a send (or a receive) peer per channel on one GPU.
    max_fused_reductions : int
        Consecutive ``re`` steps the runtime fuses into one reduction.
    fused_ops : bool
        Whether ``rcs``, ``rrs``, ``rrc``, ``rrcs`` are allowed.
    """

    max_steps: int
    max_threadblocks: int
    max_channels: int
    max_count: int = 71
    max_per_channel: int = 32
    max_fused_reductions: int = 16
    fused_ops: bool = True


RUNTIME_LIMITS = Limits(max_steps=256, max_threadblocks=1024, max_channels=128)
"""The most any runtime accepts (steps: microsoft/msccl; thread blocks: the MSCCL
executor; channels: RCCL): a file beyond them runs nowhere and is a defect."""

EXPORT_LIMITS = Limits(max_steps=64, max_threadblocks=128, max_channels=32)
"""What :func:`dumps` writes by default: files that the MSCCL executor (default build:
64 steps) and microsoft/msccl (216 thread blocks, 32 channels) both load. RCCL also
needs at most 64 thread blocks and no fused operations."""

PROTOCOLS = ("Simple", "LL", "LL128")
"""Values of ``proto`` (kept in the schedule's ``params``)."""

COLLECTIVE_NAMES = {
    "allreduce": "allreduce",
    "allgather": "all_gather",
    "reducescatter": "reduce_scatter",
    "reduce_scatter": "reduce_scatter",
    "broadcast": "broadcast",
    "reduce": "reduce",
    "alltoall": "alltoall",
    "alltoallv": "alltoallv",
    "gather": "gather",
    "scatter": "scatter",
    "send": "send",
    "recv": "recv",
    "sendrecv": "sendrecv",
    "custom": "custom",
}
"""MSCCL ``coll`` -> simnet collective. The runtimes spell reduce-scatter
``reducescatter`` (RCCL, the executor, MSCCLang) or ``reduce_scatter``
(microsoft/msccl, TACCL). Those simnet lacks are refused as unsupported."""

_STEP_TYPES = ("s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop")
_SENDS = frozenset({"s", "rcs", "rrs", "rrcs"})
_RECEIVES = frozenset({"r", "rcs", "rrs", "rrc", "rrcs"})
_FUSED = frozenset({"rcs", "rrs", "rrc", "rrcs"})
_READS_SRC = frozenset({"s", "rrs", "rrc", "rrcs", "cpy", "re"})
_WRITES_DST = frozenset({"r", "rcs", "rrc", "rrcs", "cpy", "re"})
_BUFFER_NAMES = {"i": "input", "o": "output", "s": "scratch"}
_STEP_ATTRIBUTES = ("s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "depid", "deps", "hasdep")
_MAX_ATTRIBUTES = 16

_NEWLINE = re.compile("\n")
_GAP = re.compile("[ \n\r]*")
_TAG = re.compile(r'<([^ >/\n\r\t]+)((?: +[^ <>/"\n\r\t=]+="[^"]*")*) *(/?)>')
"""A tag the reader below accepts as it stands: a name, attributes separated by spaces, ``>`` or ``/>``.
Anything else (and a repeated or 17th attribute) goes through the reader's checks, which name the error."""
_ATTRIBUTE = re.compile(r' +([^=]+)="([^"]*)"')
_MAX_DEPID = 127


# ---------------------------------------------------------------------------------------------
# The XML dialect of the runtime parsers


class _Element:
    __slots__ = ("tag", "attrs", "children", "line")

    def __init__(self, tag: str, line: int) -> None:
        self.tag = tag
        self.attrs: dict[str, str] = {}
        self.children: list[_Element] = []
        self.line = line


def _document(text: str, source: str) -> list[_Element]:
    """Top-level elements of `text`, read as the MSCCL runtimes' XML reader reads them.

    That reader (NCCL's topology-XML parser, reused by every runtime) skips only
    spaces and line breaks between elements and ``<!-- -->`` comments, reads a
    tag's attributes on one line, separated by spaces, with double-quoted values,
    and rejects an ``<?xml?>`` declaration, tabs and text between elements.
    """
    newlines = [match.start() for match in _NEWLINE.finditer(text)]

    def fail(position: int, message: str) -> MscclDefect:
        return MscclDefect(f"line {bisect_right(newlines, position - 1) + 1}: {message}", kind="format",
                           source=source)

    top: list[_Element] = []
    stack: list[_Element] = []
    n, pos = len(text), 0
    while True:
        pos = _GAP.match(text, pos).end()
        if pos >= n:
            break
        if text.startswith("<!--", pos):
            end = text.find("-->", pos + 4)
            if end < 0:
                raise fail(pos, "unterminated comment")
            pos = end + 3
            continue
        char = text[pos]
        if char != "<":
            what = {"\t": "a tab", "\ufeff": "a byte-order mark"}.get(char, f"text ({char!r})")
            raise fail(pos, f"{what} between elements; the MSCCL parser allows only spaces and line breaks there")
        if text.startswith("<?", pos):
            raise fail(pos, "an XML declaration '<?...?>', which the MSCCL parser rejects")
        if text.startswith("</", pos):
            end = text.find(">", pos)
            name = text[pos + 2 : end].strip() if end > 0 else ""
            if not stack or end < 0 or name != stack[-1].tag:
                expected = f"</{stack[-1].tag}>" if stack else "no closing tag"
                raise fail(pos, f"unexpected </{name}>, expected {expected}")
            stack.pop()
            pos = end + 1
            continue
        start = pos
        tag = _TAG.match(text, pos)
        if tag is not None:
            attributes = _ATTRIBUTE.findall(tag[2])
            element = _Element(tag[1], bisect_right(newlines, start - 1) + 1)
            element.attrs = dict(attributes)
            if len(element.attrs) == len(attributes) <= _MAX_ATTRIBUTES:
                (stack[-1].children if stack else top).append(element)
                if not tag[3]:
                    stack.append(element)
                pos = tag.end()
                continue
        pos += 1
        while pos < n and text[pos] not in " >/\n\r\t":
            pos += 1
        element = _Element(text[start + 1 : pos], bisect_right(newlines, start - 1) + 1)
        if not element.tag:
            raise fail(start, "an element without a name")
        closed = False
        while True:
            if pos >= n:
                raise fail(start, f"unterminated <{element.tag}> tag")
            char = text[pos]
            if char == " ":
                pos += 1
                continue
            if char == ">":
                pos += 1
                break
            if char == "/":
                if not text.startswith("/>", pos):
                    raise fail(pos, f"expected '/>' in <{element.tag}>")
                pos += 2
                closed = True
                break
            if char in "\n\r\t":
                raise fail(pos, f"a {'tab' if char == chr(9) else 'line break'} inside the <{element.tag}> tag; "
                                "the MSCCL parser reads a tag's attributes on one line separated by spaces")
            equals = text.find("=", pos)
            name = text[pos:equals] if equals > 0 else ""
            if not name or any(c in name for c in ' <>/"\n\r\t'):
                raise fail(pos, f"expected an attribute name=\"value\" in <{element.tag}>")
            if equals + 1 >= n or text[equals + 1] != '"':
                raise fail(equals, f"attribute {name} of <{element.tag}>: values must be in double quotes")
            close = text.find('"', equals + 2)
            if close < 0:
                raise fail(equals, f"attribute {name} of <{element.tag}>: unterminated value")
            if name in element.attrs:
                raise fail(pos, f"attribute {name} of <{element.tag}> is given twice")
            element.attrs[name] = text[equals + 2 : close]
            if len(element.attrs) > _MAX_ATTRIBUTES:
                raise fail(pos, f"<{element.tag}> has more than {_MAX_ATTRIBUTES} attributes, the parser's limit")
            pos = close + 1
            if pos < n and text[pos] not in " />\n\r\t":
                raise fail(pos, f"expected a space, '>' or '/>' after attribute {name} of <{element.tag}>")
        (stack[-1].children if stack else top).append(element)
        if not closed:
            stack.append(element)
    if stack:
        raise fail(n, f"<{stack[-1].tag}> (line {stack[-1].line}) is never closed")
    return top


_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")


def _integer(element: _Element, name: str, where: str, source: str, *, default: int | None = None) -> int:
    """Attribute `name` of `element` as a decimal integer (the runtime's ``strtol`` reads ``010`` as octal)."""
    value = element.attrs.get(name)
    if value is None:
        if default is not None:
            return default
        raise MscclDefect(f"<{element.tag}> (line {element.line}) has no {name} attribute, which the runtime "
                          f"requires", kind="format", path=where, source=source)
    if not _INTEGER.fullmatch(value):
        raise MscclDefect(f"{name}={value!r} (line {element.line}) is not a plain decimal integer (the runtime "
                          f"parses it with strtol base 0, where 010 is octal and garbage is 0)", kind="format",
                          path=where, source=source)
    return int(value)


# ---------------------------------------------------------------------------------------------
# The program


@dataclass(frozen=True, slots=True)
class _Step:
    gpu: int
    tb: int
    pos: int
    line: int
    kind: str
    srcbuf: str
    srcoff: int
    dstbuf: str
    dstoff: int
    cnt: int
    depid: int
    deps: int
    hasdep: bool


@dataclass(frozen=True, slots=True)
class _Tb:
    gpu: int
    id: int
    send: int
    recv: int
    chan: int
    line: int
    steps: tuple[_Step, ...]


@dataclass(frozen=True, slots=True)
class _Gpu:
    id: int
    i_chunks: int
    o_chunks: int
    s_chunks: int
    line: int
    tbs: tuple[_Tb, ...]
    copies: int = 0


def _where(gpu: int, tb: int | None = None, pos: int | None = None) -> str:
    parts = [f"gpu {gpu}"]
    if tb is not None:
        parts.append(f"tb {tb}")
    if pos is not None:
        parts.append(f"step {pos}")
    return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class _Layout:
    """Where a collective's chunks start and must end, in MSCCL buffer slots.

    ``N`` chunks of ``nBytes / N`` bytes; ``m = N / ngpus``. Slots are ``(buffer,
    offset)``; in-place runs alias one buffer onto the other. Logical chunks are
    buffer positions, except for ``alltoall``, whose chunk ``r N + x`` is rank
    ``r``'s input chunk ``x`` (for rank ``x // m``, where it lands in ``o[r m + x % m]``),
    as simnet numbers all-to-all blocks across the communicator.
    """

    name: str

    def sizes(self, n: int, g: int) -> tuple[int, int]:
        """Chunks in ``i`` and in ``o``."""
        m = n // g
        return {"all_gather": (m, n), "reduce_scatter": (n, m)}.get(self.name, (n, n))

    def nchunks(self, n: int, g: int) -> int:
        """Logical chunks of the simnet schedule."""
        return n * g if self.name == "alltoall" else n

    def chunk_bytes(self, size_bytes: int, n: int, g: int) -> list[int]:
        """Bytes of every logical chunk for collectives of `size_bytes` (MSCCL's ``nBytes``)."""
        return split_bytes(size_bytes, n) * (g if self.name == "alltoall" else 1)

    def alias(self, rank: int, n: int, g: int, buf: str, off: int, inplace: bool) -> tuple[str, int]:
        """The slot that (buf, off) is, canonically, in an in-place run."""
        if not inplace:
            return buf, off
        m = n // g
        if self.name == "all_gather" and buf == "i":
            return "o", rank * m + off
        if self.name == "reduce_scatter" and buf == "o":
            return "i", rank * m + off
        if self.name in ("allreduce", "broadcast", "reduce", "alltoall") and buf == "o":
            return "i", off
        return buf, off

    def initial(self, rank: int, n: int, g: int, root: int) -> list[tuple[int, int]]:
        """``(input offset, chunk)`` of the rank's input slots and the chunk each holds."""
        m = n // g
        if self.name == "all_gather":
            return [(j, rank * m + j) for j in range(m)]
        if self.name == "alltoall":
            return [(x, rank * n + x) for x in range(n)]
        if self.name == "broadcast" and rank != root:
            return []
        return [(k, k) for k in range(n)]

    def result(self, rank: int, n: int, g: int, root: int) -> list[tuple[int, int, int | None]]:
        """``(output offset, chunk, owner)``: the chunk each output slot must end with,
        summed over every rank (``owner`` None) or holding rank ``owner``'s contribution."""
        m = n // g
        if self.name == "all_gather":
            return [(k, k, k // m) for k in range(n)]
        if self.name == "reduce_scatter":
            return [(j, rank * m + j, None) for j in range(m)]
        if self.name == "alltoall":
            return [(r * m + k, r * n + rank * m + k, r) for r in range(g) for k in range(m)]
        if self.name == "broadcast":
            return [(k, k, root) for k in range(n)]
        if self.name == "reduce":
            return [(k, k, None) for k in range(n)] if rank == root else []
        return [(k, k, None) for k in range(n)]

    def home(self, rank: int, n: int, g: int, inplace: bool, chunk: int) -> tuple[str, int] | None:
        """The canonical slot of `chunk` on `rank` that is simnet's ``work`` cell: where the collective wants
        its result (and, in an in-place all-to-all, where its owner starts with it)."""
        m = n // g
        if self.name == "reduce_scatter":
            if inplace:
                return "i", chunk
            return ("o", chunk - rank * m) if chunk // m == rank else None
        if self.name == "all_gather":
            return "o", chunk
        if self.name == "alltoall":
            owner, x = divmod(chunk, n)
            if x // m == rank:
                return ("i" if inplace else "o"), owner * m + x % m
            return ("i", x) if inplace and owner == rank else None
        return ("i", chunk) if inplace else ("o", chunk)

    def owners(self, n: int, g: int) -> tuple[int, ...] | None:
        """Rank owning each logical chunk (``Schedule.owners``)."""
        if self.name in ("all_gather", "reduce_scatter"):
            return tuple(c // (n // g) for c in range(n))
        if self.name == "alltoall":
            return tuple(c // n for c in range(n * g))
        return None

    def targets(self, n: int, g: int) -> tuple[int, ...] | None:
        """Rank each logical chunk must end at (``Schedule.targets``, all-to-all only)."""
        return tuple((c % n) // (n // g) for c in range(n * g)) if self.name == "alltoall" else None


_LAYOUTS = {name: _Layout(name) for name in ("allreduce", "all_gather", "reduce_scatter", "broadcast", "reduce",
                                             "alltoall")}
"""simnet collectives with an MSCCL buffer layout; a collective added to simnet becomes
importable by giving it one here (``alltoallv`` has none: its counts are not in the file)."""


def _program(text: str, source: str, limits: Limits) -> tuple[dict, tuple[_Gpu, ...]]:
    """The ``<algo>`` attributes and the GPUs of a file, with every check that needs no execution."""
    elements = _document(text, source)
    if not elements or elements[0].tag != "algo":
        first = f"<{elements[0].tag}>" if elements else "nothing"
        raise MscclDefect(f"the first element must be <algo> (the runtime reads only the first), found {first}",
                          kind="format", source=source)
    algo = elements[0]

    def integer(element: _Element, name: str, where: str = "", default: int | None = None) -> int:
        return _integer(element, name, where, source, default=default)

    def need(element: _Element, name: str, where: str = "") -> str:
        if name not in element.attrs:
            raise MscclDefect(f"<{element.tag}> (line {element.line}) has no {name} attribute, which the runtime "
                              f"requires", kind="format", path=where, source=source)
        return element.attrs[name]

    proto = need(algo, "proto")
    if proto not in PROTOCOLS:
        raise MscclDefect(f"proto={proto!r}: the runtime accepts {', '.join(PROTOCOLS)} (case-sensitive)",
                          kind="format", source=source)
    coll = need(algo, "coll")
    if coll not in COLLECTIVE_NAMES:
        raise MscclDefect(f"coll={coll!r} is no MSCCL collective ({', '.join(COLLECTIVE_NAMES)})", kind="format",
                          source=source)
    meta = {
        "name": algo.attrs.get("name", Path(source).stem if source else "msccl"),
        "coll": coll,
        "proto": proto,
        "nchannels": integer(algo, "nchannels"),
        "nchunksperloop": integer(algo, "nchunksperloop"),
        "ngpus": integer(algo, "ngpus"),
        "inplace": integer(algo, "inplace") != 0,
        "min_bytes": integer(algo, "minBytes", default=0),
        "max_bytes": integer(algo, "maxBytes", default=0),
        "redop": algo.attrs.get("redop", ""),
    }
    meta["outofplace"] = integer(algo, "outofplace", default=0 if meta["inplace"] else 1) != 0
    for key, low in (("ngpus", 1), ("nchunksperloop", 1), ("nchannels", 1), ("min_bytes", 0), ("max_bytes", 0)):
        if meta[key] < low:
            attribute = {"min_bytes": "minBytes", "max_bytes": "maxBytes"}.get(key, key)
            raise MscclDefect(f"{attribute}={meta[key]} must be ≥ {low}", kind="format", source=source)
    if meta["nchannels"] > limits.max_channels:
        raise MscclDefect(f"nchannels={meta['nchannels']} is more than the {limits.max_channels} channels any "
                          f"runtime has", kind="limit", source=source)
    if not (meta["inplace"] or meta["outofplace"]):
        raise MscclDefect("inplace=0 and outofplace=0: the runtime never selects the algorithm", kind="format",
                          source=source)
    if meta["max_bytes"] and meta["max_bytes"] < meta["min_bytes"]:
        raise MscclDefect(f"maxBytes={meta['max_bytes']} is below minBytes={meta['min_bytes']}", kind="format",
                          source=source)
    ngpus, n = meta["ngpus"], meta["nchunksperloop"]
    if COLLECTIVE_NAMES[coll] in ("all_gather", "reduce_scatter", "alltoall") and n % ngpus:
        raise MscclDefect(f"nchunksperloop={n} is not a multiple of ngpus={ngpus}, which the {coll} layout needs "
                          f"(blocks of nchunksperloop / ngpus chunks per rank)", kind="format", source=source)
    layout = _LAYOUTS.get(COLLECTIVE_NAMES[coll])
    sizes = layout.sizes(n, ngpus) if layout is not None else (n, n)
    gpus: dict[int, _Gpu] = {}
    for gpu_element in (e for e in algo.children if e.tag == "gpu"):
        rank = integer(gpu_element, "id")
        where = f"gpu {rank}"
        if not 0 <= rank < ngpus:
            raise MscclDefect(f"<gpu id={rank}> (line {gpu_element.line}) is not a rank in [0, {ngpus})",
                              kind="format", source=source)
        if rank in gpus:
            raise MscclDefect(f"<gpu id={rank}> appears twice (lines {gpus[rank].line} and {gpu_element.line})",
                              kind="format", source=source)
        chunks = {name: integer(gpu_element, name, where) for name in ("i_chunks", "o_chunks", "s_chunks")}
        for name, value in chunks.items():
            if value < 0:
                raise MscclDefect(f"{name}={value} must be ≥ 0", kind="format", path=where, source=source)
        real = {"i": sizes[0], "o": sizes[1], "s": chunks["s_chunks"]}
        declared = {"i": chunks["i_chunks"], "o": chunks["o_chunks"], "s": chunks["s_chunks"]}
        tbs = _threadblocks(gpu_element, rank, meta, real, declared, limits, source)
        copies = sum(1 for e in gpu_element.children if e.tag == "copy")
        gpus[rank] = _Gpu(rank, chunks["i_chunks"], chunks["o_chunks"], chunks["s_chunks"], gpu_element.line, tbs,
                          copies)
    missing = [rank for rank in range(ngpus) if rank not in gpus]
    if missing:
        raise MscclDefect(f"no <gpu id={missing[0]}>: ngpus={ngpus} but rank {missing[0]} has no program",
                          kind="format", source=source)
    return meta, tuple(gpus[rank] for rank in range(ngpus))


def _threadblocks(gpu_element: _Element, rank: int, meta: dict, real: dict, declared: dict, limits: Limits,
                  source: str) -> tuple[_Tb, ...]:
    """The thread blocks of one GPU, in id order, each checked on its own."""
    ngpus = meta["ngpus"]
    found: dict[int, _Tb] = {}
    for tb_element in (e for e in gpu_element.children if e.tag == "tb"):
        tb = _integer(tb_element, "id", _where(rank), source)
        where = _where(rank, tb)
        if tb in found:
            raise MscclDefect(f"thread block id {tb} appears twice (lines {found[tb].line} and {tb_element.line})",
                              kind="format", path=_where(rank), source=source)
        if not 0 <= tb < limits.max_threadblocks:
            raise MscclDefect(f"thread block id {tb} is outside [0, {limits.max_threadblocks}), the most any "
                              f"runtime launches", kind="limit", path=_where(rank), source=source)
        send, recv, chan = (_integer(tb_element, name, where, source) for name in ("send", "recv", "chan"))
        for name, peer in (("send", send), ("recv", recv)):
            if peer != -1 and not 0 <= peer < ngpus:
                raise MscclDefect(f"{name}={peer} is neither -1 nor a rank in [0, {ngpus})", kind="format",
                                  path=where, source=source)
            if peer == rank:
                raise MscclDefect(f"{name}={peer} is the GPU itself", kind="format", path=where, source=source)
        if not 0 <= chan < limits.max_channels:
            raise MscclDefect(f"chan={chan} is outside [0, {limits.max_channels})", kind="limit", path=where,
                              source=source)
        if chan >= meta["nchannels"]:
            raise MscclDefect(f"chan={chan} but nchannels={meta['nchannels']}: the runtime connects channels "
                              f"0 .. {meta['nchannels'] - 1} only, so this thread block would hang", kind="limit",
                              path=where, source=source)
        steps = _steps(tb_element, rank, tb, send, recv, real, declared, limits, source)
        found[tb] = _Tb(rank, tb, send, recv, chan, tb_element.line, steps)
    for expected in range(len(found)):
        if expected not in found:
            raise MscclDefect(f"thread block {expected} is missing (ids must be 0 .. {len(found) - 1}; the runtime "
                              f"refuses gaps)", kind="format", path=_where(rank), source=source)
    tbs = tuple(found[i] for i in range(len(found)))
    for role in ("send", "recv"):
        owner: dict[tuple[int, int], int] = {}
        per_channel: dict[int, int] = {}
        for tb in tbs:
            peer = getattr(tb, role)
            if peer < 0:
                continue
            key = (peer, tb.chan)
            if key in owner:
                verb = "send to" if role == "send" else "receive from"
                raise MscclDefect(f"thread blocks {owner[key]} and {tb.id} both {verb} gpu {peer} on channel "
                                  f"{tb.chan}: they would share one connection and interleave its slots",
                                  kind="limit", path=_where(rank), source=source)
            owner[key] = tb.id
            per_channel[tb.chan] = per_channel.get(tb.chan, 0) + 1
            if per_channel[tb.chan] > limits.max_per_channel:
                raise MscclDefect(f"more than {limits.max_per_channel} thread blocks with a {role} peer on channel "
                                  f"{tb.chan}, the runtime's limit", kind="limit", path=_where(rank, tb.id),
                                  source=source)
    return tbs


def _steps(tb_element: _Element, rank: int, tb: int, send: int, recv: int, real: dict, declared: dict,
           limits: Limits, source: str) -> tuple[_Step, ...]:
    """The steps of one thread block, each checked against the runtime's parser and the buffers' sizes."""
    steps: list[_Step] = []
    pending_nops = 0
    fused_run = 0
    for element in (e for e in tb_element.children if e.tag == "step"):
        pos = len(steps)
        where = _where(rank, tb, pos)
        values = {}
        for name in _STEP_ATTRIBUTES:
            if name not in element.attrs:
                raise MscclDefect(f"<step> (line {element.line}) has no {name} attribute; the runtime requires all "
                                  f"ten, also on nop", kind="format", path=where, source=source)
        kind = element.attrs["type"]
        if kind not in _STEP_TYPES:
            raise MscclDefect(f"type={kind!r} is none of {', '.join(_STEP_TYPES)}", kind="format", path=where,
                              source=source)
        for name in ("srcbuf", "dstbuf"):
            if element.attrs[name] not in _BUFFER_NAMES:
                raise MscclDefect(f"{name}={element.attrs[name]!r} is none of i, o, s (checked on every step)",
                                  kind="format", path=where, source=source)
        for name in ("s", "srcoff", "dstoff", "cnt", "depid", "deps", "hasdep"):
            values[name] = _integer(element, name, where, source)
        if values["s"] != pos:
            raise MscclDefect(f"s={values['s']} but it is step {pos} of its thread block: the runtime numbers "
                              f"steps by position, so dependencies naming s={values['s']} mean another step",
                              kind="format", path=where, source=source)
        if pos >= limits.max_steps:
            raise MscclDefect(f"more than {limits.max_steps} steps in one thread block, the most any runtime "
                              f"holds", kind="limit", path=where, source=source)
        if values["hasdep"] not in (0, 1):
            raise MscclDefect(f"hasdep={values['hasdep']} must be 0 or 1", kind="format", path=where,
                              source=source)
        depid, deps, cnt = values["depid"], values["deps"], values["cnt"]
        if depid < -1 or depid > _MAX_DEPID or (depid >= 0 and deps < 0):
            raise MscclDefect(f"depid={depid} deps={deps}: a dependency names a thread block 0 .. {_MAX_DEPID} "
                              f"(an 8-bit integer in the runtime) and one of its steps, or is -1 -1",
                              kind="format", path=where, source=source)
        step = _Step(rank, tb, pos, element.line, kind, element.attrs["srcbuf"], values["srcoff"],
                     element.attrs["dstbuf"], values["dstoff"], cnt, depid, deps, bool(values["hasdep"]))
        if kind == "nop":
            if depid < 0:
                raise MscclDefect("a nop without a dependency: the runtime drops it, which renumbers every later "
                                  "step of the thread block", kind="format", path=where, source=source)
            pending_nops += 1
            fused_run = 0
            steps.append(step)
            continue
        if pending_nops and depid < 0:
            raise MscclDefect(f"the {pending_nops} nop(s) before this step carry dependencies but the step itself "
                              f"has none; the runtime requires the step to carry the last one", kind="format",
                              path=where, source=source)
        pending_nops = 0
        if not 1 <= cnt <= limits.max_count:
            raise MscclDefect(f"cnt={cnt} must be 1 .. {limits.max_count}", kind="limit", path=where, source=source)
        if kind in _SENDS and send < 0:
            raise MscclDefect(f"a {kind} step in a thread block without a send peer (send=-1)", kind="format",
                              path=where, source=source)
        if kind in _RECEIVES and recv < 0:
            raise MscclDefect(f"a {kind} step in a thread block without a receive peer (recv=-1)", kind="format",
                              path=where, source=source)
        for side, uses in (("src", _READS_SRC), ("dst", _WRITES_DST)):
            if kind not in uses:
                continue
            buf, off = getattr(step, f"{side}buf"), getattr(step, f"{side}off")
            if off < 0 or (off >= declared[buf] and kind != "rrc"):
                raise MscclDefect(f"{side}off={off} is outside {buf}_chunks={declared[buf]} of gpu {rank} (the "
                                  f"runtime refuses the file)", kind="overflow", path=where, source=source)
            if off + cnt > real[buf]:
                raise MscclDefect(f"{side}buf={buf} {side}off={off} cnt={cnt} runs past the {real[buf]} chunks of "
                                  f"the {_BUFFER_NAMES[buf]} buffer", kind="overflow", path=where, source=source)
        previous = next((s for s in reversed(steps) if s.kind != "nop"), None)
        fuses = (kind == "re" and previous is not None and previous.kind == "re" and depid < 0
                 and not previous.hasdep and previous.pos == pos - 1
                 and (previous.dstbuf, previous.dstoff, previous.srcbuf) == (step.dstbuf, step.dstoff, step.srcbuf))
        fused_run = fused_run + 1 if fuses else 1
        if fused_run > limits.max_fused_reductions:
            raise MscclDefect(f"{fused_run} consecutive re steps into {step.dstbuf}[{step.dstoff}] fuse into one "
                              f"reduction; the runtime's reduction holds {limits.max_fused_reductions} sources",
                              kind="limit", path=where, source=source)
        steps.append(step)
    if pending_nops:
        raise MscclDefect(f"the thread block ends with {pending_nops} nop(s), whose dependencies the runtime drops",
                          kind="format", path=_where(rank, tb, len(steps) - 1), source=source)
    return tuple(steps)


@dataclass(frozen=True)
class Program:
    """A parsed MSCCL algorithm file (from :func:`read`); :meth:`schedule` verifies and translates it.

    Attributes
    ----------
    source : str
        The file (or ``"<string>"``), for messages.
    name, coll, proto : str
        ``<algo>`` attributes as written (``proto`` sets the wire bytes of the
        schedule's hops and is kept in its ``params``).
    collective : str
        The simnet collective of ``coll`` (:data:`COLLECTIVE_NAMES`).
    nchannels, nchunksperloop, ngpus : int
        ``<algo>`` attributes.
    inplace, outofplace : bool
        Buffer modes the algorithm declares (``outofplace`` defaults to the
        opposite of ``inplace`` when the file omits it).
    min_bytes, max_bytes : int
        Sizes the runtime selects the algorithm for, bytes of the larger buffer,
        inclusive; ``max_bytes == 0`` is no upper bound (RCCL and the executor).
    redop : str
        ``redop`` as written (no runtime reads it).
    """

    source: str
    name: str
    coll: str
    collective: str
    proto: str
    nchannels: int
    nchunksperloop: int
    ngpus: int
    inplace: bool
    outofplace: bool
    min_bytes: int
    max_bytes: int
    redop: str
    _gpus: tuple = field(repr=False, compare=False)
    _translations: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def steps(self) -> int:
        """Steps in the file, ``nop`` included."""
        return sum(len(tb.steps) for gpu in self._gpus for tb in gpu.tbs)

    @property
    def threadblocks(self) -> int:
        """Thread blocks of all GPUs."""
        return sum(len(gpu.tbs) for gpu in self._gpus)

    def covers(self, size_bytes: int) -> bool:
        """Whether the runtime selects the algorithm for `size_bytes` (the larger buffer), by minBytes/maxBytes.

        RCCL and the MSCCL executor and scheduler select ``minBytes <= n`` and
        (``maxBytes == 0`` or ``n <= maxBytes``); microsoft/msccl excludes ``maxBytes``.
        """
        return self.min_bytes <= size_bytes and (self.max_bytes == 0 or size_bytes <= self.max_bytes)

    def verify(self, *, inplace: bool | None = None, root: int = 0) -> None:
        """Check the program without building a schedule of some size (see :meth:`schedule`)."""
        self._translated(inplace, root)

    def schedule(self, size_bytes: int, *, inplace: bool | None = None, root: int = 0) -> Schedule:
        """The program as a simnet schedule for collectives of `size_bytes`, proved correct by ``check()``.

        Parameters
        ----------
        size_bytes : int
            Bytes of the collective's larger buffer (MSCCL's ``nBytes``, simnet's
            ``size_bytes``: the all-reduce payload, the gathered all-gather result,
            the reduce-scatter input, a rank's all-to-all send buffer), split into
            ``nchunksperloop`` chunks of whole bytes (on every rank, for all-to-all;
            the first ``size_bytes % nchunksperloop`` one byte larger; the runtimes
            only run sizes that divide evenly).
        inplace : bool, optional
            Run the in-place or the out-of-place form (default: in-place when the
            file declares it).
        root : int, optional
            Root rank of a broadcast or reduce (the file does not name one).

        Returns
        -------
        Schedule
            Named ``msccl:<name>``; ``params`` holds the file, ``name``, ``proto``,
            ``nchannels``, ``nchunksperloop``, ``inplace``, ``min_bytes``,
            ``max_bytes`` and ``selected`` (whether the runtime selects the
            algorithm for `size_bytes`, :meth:`covers`). Under ``proto`` ``LL`` or
            ``LL128`` the hops between ranks carry that protocol's wire bytes (2× and
            128/120× their payload, whole lines; see :mod:`simnet.interchange.msccl`). Translations are cached per
            buffer mode and root, so other sizes cost only the byte counts.

        Raises
        ------
        MscclDefect
            For a defect: deadlock, unmatched send or receive, a read of a slot that
            holds nothing, a race, a wrong result, ...; one line naming the GPU,
            thread block and step.
        MscclUnsupported
            For a collective simnet lacks, or a program that relies on the connection
            buffers holding data (see :mod:`simnet.interchange.msccl`).
        """
        if not isinstance(size_bytes, int) or isinstance(size_bytes, bool) or size_bytes < 1:
            raise MscclError(f"must be a whole number of bytes ≥ 1, got {size_bytes!r}", kind="format",
                             path="size_bytes", source=self.source)
        table, owners, mode = self._translated(inplace, root)
        layout = _LAYOUTS[self.collective]
        chunk_bytes = np.array(layout.chunk_bytes(size_bytes, self.nchunksperloop, self.ngpus), dtype=np.int64)
        piece_bytes = np.add.reduceat(chunk_bytes[table.piece_chunks], table.piece_offsets[:-1]) if len(
            table.piece_offsets) > 1 else np.zeros(0, dtype=np.int64)
        nbytes = piece_bytes[table.piece] if len(table) else np.zeros(0, dtype=np.int64)
        params = {"file": self.source, "name": self.name, "proto": self.proto, "nchannels": self.nchannels,
                  "nchunksperloop": self.nchunksperloop, "inplace": mode, "min_bytes": self.min_bytes,
                  "max_bytes": self.max_bytes, "selected": self.covers(size_bytes)}
        wire = _wire_bytes(self.proto, table.src, table.dst, nbytes)
        return Schedule(self.collective, self.ngpus, tuple(chunk_bytes.tolist()),
                        table.replace(nbytes=nbytes, wire_bytes=wire),
                        algorithm=f"msccl:{self.name}", root=root if self.collective in ("broadcast", "reduce")
                        else None, owners=owners, params=params,
                        targets=layout.targets(self.nchunksperloop, self.ngpus))

    def algorithm(self, *, inplace: bool | None = None, root: int = 0) -> Algorithm:
        """The program as an :class:`~simnet.algorithms.registry.Algorithm` record named ``msccl:<name>``.

        It is registered nowhere: scenarios build one per ``{msccl: PATH}`` entry, so
        the program runs beside the registry's algorithms. It takes exactly
        ``ngpus`` ranks and has no closed form.
        """
        builder = functools.partial(_build, self, inplace, root)
        return Algorithm(
            name=f"msccl:{self.name}", ops=(self.collective,), builder=builder,
            description=f"MSCCL program {self.source} ({self.coll}, {self.proto}, {self.nchannels} channels)",
            no_model="an imported MSCCL program has no closed form; the critical path and the simulation time it",
            citation=self.source, transfers=lambda nranks, size_bytes, params: 2 * self.steps,
            supports=lambda nranks: nranks == self.ngpus)

    def _translated(self, inplace: bool | None, root: int) -> tuple[TransferTable, tuple[int, ...] | None, bool]:
        mode = self.inplace if inplace is None else bool(inplace)
        if not isinstance(root, int) or isinstance(root, bool) or not 0 <= root < self.ngpus:
            raise MscclError(f"must be a rank in [0, {self.ngpus}), got {root!r}", kind="format", path="root",
                             source=self.source)
        if mode and not self.inplace or not mode and not self.outofplace:
            raise MscclError(f"the file declares inplace={int(self.inplace)} outofplace={int(self.outofplace)}; "
                             f"no {'in-place' if mode else 'out-of-place'} form", kind="format", path="inplace",
                             source=self.source)
        key = (mode, root if self.collective in ("broadcast", "reduce") else 0)
        if key not in self._translations:
            layout = _LAYOUTS.get(self.collective)
            if layout is None or self.collective not in COLLECTIVES:
                have = ", ".join(_LAYOUTS)
                raise MscclUnsupported(f"coll={self.coll!r}: simnet has no {self.collective} collective (it "
                                       f"imports {have})", kind="collective", source=self.source)
            translation = _Translation(self, layout, mode, key[1])
            table = translation.table()
            owners = layout.owners(self.nchunksperloop, self.ngpus)
            unit = Schedule(self.collective, self.ngpus, (1,) * layout.nchunks(self.nchunksperloop, self.ngpus),
                            table.replace(nbytes=np.diff(table.piece_offsets)[table.piece]),
                            root=key[1] if self.collective in ("broadcast", "reduce") else None, owners=owners,
                            targets=layout.targets(self.nchunksperloop, self.ngpus))
            try:
                check(unit)
            except ScheduleError as error:
                message = re.sub(r"\b(transfers?|and) (\d+)\b",
                                 lambda m: f"{m.group(0)} ({translation.locations[int(m.group(2))]})", error.message)
                raise MscclDefect(f"simnet's check() refuses the translation: {message}", kind="wrong result",
                                  source=self.source) from None
            self._translations[key] = (table, owners, mode)
        return self._translations[key]


def _wire_bytes(proto: str, src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray) -> np.ndarray | None:
    """Bytes on the wire of transfers of `nbytes` under the file's `proto` (``None`` for Simple): whole lines of
    NCCL's LL or LL128 on every hop between two ranks, the payload on a local transfer."""
    protocol = NCCL_PROTOCOLS[proto.lower()]
    if protocol.line_bytes == 1:
        return None
    return np.where(src != dst, protocol.wire_bytes(nbytes), nbytes)


def _build(program: Program, inplace: bool | None, root: int, nranks: int, size_bytes: int) -> Schedule:
    """``builder(nranks, size_bytes)`` of :meth:`Program.algorithm`."""
    if nranks != program.ngpus:
        raise MscclError(f"the program is for ngpus={program.ngpus} ranks, not {nranks}", kind="format",
                         path="nranks", source=program.source)
    return program.schedule(size_bytes, inplace=inplace, root=root)


def reads(text: str, *, source: str = "<string>", limits: Limits = RUNTIME_LIMITS) -> Program:
    """Parse MSCCL XML text (see :func:`read`)."""
    meta, gpus = _program(text, source, limits)
    return Program(source=source, collective=COLLECTIVE_NAMES[meta["coll"]], _gpus=gpus, **meta)


def read(path: str | Path, *, limits: Limits = RUNTIME_LIMITS) -> Program:
    """Parse an MSCCL XML algorithm file with the runtime parser's rules and check what needs no execution.

    Parameters
    ----------
    path : str or pathlib.Path
        The file.
    limits : Limits, optional
        Bounds beyond which a file is a defect (default: the most any runtime allows).

    Raises
    ------
    MscclDefect
        Naming the file, and the GPU, thread block and step where it applies.
    """
    source = str(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise MscclError("file not found", kind="format", source=source) from None
    except OSError as error:
        raise MscclError(f"cannot read: {error.strerror}", kind="format", source=source) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise MscclDefect(f"not UTF-8 text (byte {error.start})", kind="format", source=source) from None
    return reads(text, source=source, limits=limits)


def load(path: str | Path, size_bytes: int, *, inplace: bool | None = None, root: int = 0) -> Schedule:
    """The schedule of an MSCCL XML file for `size_bytes`: ``read(path).schedule(size_bytes, ...)``.

    See :meth:`Program.schedule`.

    Examples
    --------
    >>> schedule = load("ring.xml", 64 * 2**20)  # doctest: +SKIP
    >>> schedule.algorithm, schedule.params["proto"]  # doctest: +SKIP
    ('msccl:allreduce_ring', 'Simple')
    """
    return read(path).schedule(size_bytes, inplace=inplace, root=root)


def loads(text: str, size_bytes: int, *, source: str = "<string>", inplace: bool | None = None,
          root: int = 0) -> Schedule:
    """The schedule of MSCCL XML text for `size_bytes` (see :func:`load`)."""
    return reads(text, source=source).schedule(size_bytes, inplace=inplace, root=root)


# ---------------------------------------------------------------------------------------------
# Verification and translation

_INITIAL = -1
"""The 'step' that put a rank's input in place, before every real step."""


class _Slot:
    """Accesses of one buffer slot since its last overwrite (steps), for race checks."""

    __slots__ = ("writes", "adds", "reads", "log")

    def __init__(self, initial: bool) -> None:
        self.writes: list[int] = [_INITIAL] if initial else []
        self.adds: list[int] = []
        self.reads: list[int] = []
        self.log: list[tuple[int, str]] = []


class _Cell:
    """A simnet cell's last writes, additions since and reads since (transfers), as the schedule builder keeps them."""

    __slots__ = ("base", "red", "reads")

    def __init__(self) -> None:
        self.base: list[int] = []
        self.red: list[int] = []
        self.reads: list[int] = []


@dataclass(slots=True)
class _Op:
    src: int
    dst: int
    chunks: tuple[int, ...]
    sb: int
    db: int
    reduce: bool
    sender: int
    receiver: int
    label: str
    deps: set = field(default_factory=set)


class _Translation:
    """Verify one program in one buffer mode and translate it into transfers (see the module docstring).

    Steps run in a topological order of the happens-before graph (thread-block
    order, dependencies, send before its matched receive): a cycle is a deadlock.
    Symbolic execution in that order gives every slot's value; a conflicting access
    that the graph does not order after the previous ones is a race, decided with
    vector clocks over thread blocks. Then every value gets its simnet cell and
    every step its transfers, with the dependencies of the timing rules.
    """

    def __init__(self, program: Program, layout: _Layout, inplace: bool, root: int) -> None:
        self.program = program
        self.layout = layout
        self.inplace = inplace
        self.root = root
        self.source = program.source
        self.n = program.nchunksperloop
        self.g = program.ngpus
        self.everyone = (1 << self.g) - 1
        self._nodes()
        self._match()
        self._graph()
        self._clocks()
        self._execute()
        self._colour()
        self._transfers()

    # errors

    def _at(self, node: int) -> str:
        step = self.steps[node]
        return _where(step.gpu, step.tb, step.pos)

    def _defect(self, node: int | None, message: str, kind: str) -> MscclDefect:
        return MscclDefect(message, kind=kind, path="" if node is None else self._at(node), source=self.source)

    def _slot_name(self, slot: tuple[int, str, int]) -> str:
        return f"{slot[1]}[{slot[2]}]"

    # structure

    def _nodes(self) -> None:
        self.steps: list[_Step] = []
        self.node_of: dict[tuple[int, int, int], int] = {}
        self.waits: list[list[tuple[int, int]]] = []
        self.tb_index: dict[tuple[int, int], int] = {}
        for gpu in self.program._gpus:
            for tb in gpu.tbs:
                self.tb_index[(gpu.id, tb.id)] = len(self.tb_index)
                pending: list[tuple[int, int]] = []
                for step in tb.steps:
                    if step.depid >= 0:
                        pending.append((step.depid, step.deps))
                    if step.kind == "nop":
                        continue
                    self.node_of[(gpu.id, tb.id, step.pos)] = len(self.steps)
                    self.steps.append(step)
                    self.waits.append(pending)
                    pending = []

    def _match(self) -> None:
        sends: dict[tuple[int, int, int], list[int]] = {}
        receives: dict[tuple[int, int, int], list[int]] = {}
        gpus = self.program._gpus
        for node, step in enumerate(self.steps):
            tb = gpus[step.gpu].tbs[step.tb]
            if step.kind in _SENDS:
                sends.setdefault((step.gpu, tb.send, tb.chan), []).append(node)
            if step.kind in _RECEIVES:
                receives.setdefault((tb.recv, step.gpu, tb.chan), []).append(node)
        self.receiver: dict[int, int] = {}
        self.sender: dict[int, int] = {}
        problems: list[tuple[int, str, str]] = []
        for key in set(sends) | set(receives):
            a, b, chan = key
            out, into = sends.get(key, []), receives.get(key, [])
            for x, y in zip(out, into):
                self.receiver[x], self.sender[y] = y, x
                if self.steps[x].cnt != self.steps[y].cnt:
                    problems.append((x, f"sends {self.steps[x].cnt} chunk(s) but the matching receive ({self._at(y)}) "
                                        f"takes {self.steps[y].cnt}", "unmatched"))
            if len(out) > len(into):
                x = out[len(into)]
                problems.append((x, f"send {len(into) + 1} of {len(out)} to gpu {b} on channel {chan} is never "
                                    f"received: gpu {b} receives {len(into)} message(s) from gpu {a} on that channel",
                                 "unmatched"))
            elif len(into) > len(out):
                y = into[len(out)]
                problems.append((y, f"receive {len(out) + 1} of {len(into)} from gpu {a} on channel {chan} is never "
                                    f"sent: gpu {a} sends {len(out)} message(s) to gpu {b} on that channel",
                                 "unmatched"))
        if problems:
            node, message, kind = min(problems)
            raise self._defect(node, message, kind)

    def _graph(self) -> None:
        gpus = self.program._gpus
        count = len(self.steps)
        self.control: list[list[int]] = [[] for _ in range(count)]
        self.preds: list[list[tuple[int, str]]] = [[] for _ in range(count)]
        previous: dict[tuple[int, int], int] = {}
        for node, step in enumerate(self.steps):
            before = previous.get((step.gpu, step.tb))
            if before is not None:
                self.control[node].append(before)
                self.preds[node].append((before, "the previous step of its thread block"))
            previous[(step.gpu, step.tb)] = node
            for depid, deps in self.waits[node]:
                tbs = gpus[step.gpu].tbs
                if depid >= len(tbs):
                    raise self._defect(node, f"depends on thread block {depid}, which gpu {step.gpu} does not have",
                                       "format")
                target = tbs[depid]
                if deps >= len(target.steps):
                    raise self._defect(node, f"depends on step {deps} of thread block {depid}, which has "
                                             f"{len(target.steps)} steps", "format")
                publisher = next((s for s in target.steps[deps:] if s.kind != "nop" and s.hasdep), None)
                if publisher is None:
                    raise self._defect(node, f"waits for tb {depid} step {deps}, which never signals: no step of that "
                                             f"thread block from step {deps} on has hasdep=1 (only those publish "
                                             f"progress), so this step deadlocks", "deadlock")
                source = self.node_of[(step.gpu, depid, publisher.pos)]
                note = "" if publisher.pos == deps else f", signalled by its step {publisher.pos}"
                self.control[node].append(source)
                self.preds[node].append((source, f"its dependency on tb {depid} step {deps}{note}"))
            if node in self.sender:
                x = self.sender[node]
                self.preds[node].append((x, f"the data from gpu {self.steps[x].gpu}"))
        successors: list[list[int]] = [[] for _ in range(count)]
        waiting = [0] * count
        for node in range(count):
            for pred, _ in self.preds[node]:
                successors[pred].append(node)
                waiting[node] += 1
        queue = deque(node for node in range(count) if waiting[node] == 0)
        order: list[int] = []
        while queue:
            node = queue.popleft()
            order.append(node)
            for nxt in successors[node]:
                waiting[nxt] -= 1
                if waiting[nxt] == 0:
                    queue.append(nxt)
        if len(order) < count:
            self._deadlock({node for node in range(count) if waiting[node] > 0})
        self.order = order

    def _deadlock(self, stuck: set[int]) -> None:
        node = min(stuck)
        seen: dict[int, int] = {}
        path: list[tuple[int, str]] = []
        while node not in seen:
            seen[node] = len(path)
            pred, reason = next((p, r) for p, r in self.preds[node] if p in stuck)
            path.append((node, reason))
            node = pred
        cycle = path[seen[node]:]
        hops = [f"{self._at(member)} waits for {self._at(cycle[(i + 1) % len(cycle)][0])} ({reason})"
                for i, (member, reason) in enumerate(cycle)]
        if len(hops) > 6:
            hops = [*hops[:4], f"… {len(hops) - 5} more …", hops[-1]]
        raise self._defect(cycle[0][0], "deadlock, a cycle through thread-block order, dependencies and send/receive "
                                        "matching: " + "; ".join(hops), "deadlock")

    def _clocks(self) -> None:
        """Vector clocks of the steps over the thread blocks: a step happens before another exactly when the
        other's clock has reached its position in its thread block.

        Every query compares two steps of one GPU (accesses to that GPU's buffers), so each step keeps only
        its clock over its own GPU's thread blocks, a row of a matrix per GPU (:meth:`_nodes` numbers steps
        and thread blocks GPU by GPU). The whole clock is built from its predecessors' when the step's turn
        comes in :attr:`order` and dropped once its last successor has read it.
        """
        steps, preds = self.steps, self.preds
        count = len(steps)
        self.gpu_of = [step.gpu for step in steps]
        self.tb_of = [self.tb_index[(step.gpu, step.tb)] for step in steps]
        self.first_step: dict[int, int] = {}
        self.first_tb: dict[int, int] = {}
        for node, gpu in enumerate(self.gpu_of):
            self.first_step.setdefault(gpu, node)
        for (gpu, _), index in self.tb_index.items():
            self.first_tb.setdefault(gpu, index)
        steps_on, tbs_on = Counter(self.gpu_of), Counter(gpu for gpu, _ in self.tb_index)
        span = {gpu: (steps_on[gpu], tbs_on[gpu]) for gpu in self.first_step}
        kept = sum(rows * columns for rows, columns in span.values()) * 2
        if kept > 2**30:
            raise MscclUnsupported(f"{count} steps over {len(self.tb_index)} thread blocks need {kept / 2**30:.1f} GiB "
                                   "of clocks, too large to verify here", kind="limit", source=self.source)
        self.clocks = {gpu: np.full(shape, -1, dtype=np.int16) for gpu, shape in span.items()}
        readers = [0] * count
        for node in range(count):
            for pred, _ in preds[node]:
                readers[pred] += 1
        whole: dict[int, np.ndarray] = {}
        width = len(self.tb_index)
        for node in self.order:
            row = None
            for pred, _ in preds[node]:
                clock = whole[pred]
                readers[pred] -= 1
                last = readers[pred] == 0
                if last:
                    del whole[pred]
                if row is None:
                    row = clock if last else clock.copy()
                else:
                    np.maximum(row, clock, out=row)
            if row is None:
                row = np.full(width, -1, dtype=np.int16)
            gpu = self.gpu_of[node]
            row[self.tb_of[node]] = steps[node].pos
            start = self.first_tb[gpu]
            self.clocks[gpu][node - self.first_step[gpu]] = row[start : start + span[gpu][1]]
            if readers[node]:
                whole[node] = row

    def _precedes(self, earlier: int, later: int) -> bool:
        """Whether step `earlier` happens before step `later`, a step of the same GPU (the initial input
        precedes every step)."""
        if earlier == _INITIAL:
            return True
        gpu = self.gpu_of[later]
        if self.gpu_of[earlier] != gpu:
            raise ValueError(f"steps {earlier} and {later} are on different GPUs; their order is not kept")
        return earlier != later and (self.clocks[gpu][later - self.first_step[gpu], self.tb_of[earlier]
                                                      - self.first_tb[gpu]] >= self.steps[earlier].pos)

    # symbolic execution

    def _canon(self, rank: int, buf: str, off: int) -> tuple[int, str, int]:
        return (rank, *self.layout.alias(rank, self.n, self.g, buf, off, self.inplace))

    def _key(self, slot: tuple[int, str, int], chunk: int):
        """The cell key of `chunk`'s value in `slot`: ``"work"``, ``"input"``, or a slot displacement."""
        rank, buf, off = slot
        if self.layout.home(rank, self.n, self.g, self.inplace, chunk) == (buf, off):
            return "work"
        if not self.inplace and buf == "i":
            return "input"
        return ("x", buf, off - chunk)

    def _ranks(self, mask: int) -> str:
        if mask == self.everyone:
            return f"all {self.g} ranks"
        members = [str(r) for r in range(self.g) if mask >> r & 1]
        return ("rank " if len(members) == 1 else "ranks {") + ", ".join(members) + ("" if len(members) == 1 else "}")

    def _describe(self, value) -> str:
        if value is None:
            return "nothing"
        chunk, mask = value
        return f"chunk {chunk} of {self._ranks(mask)}"

    def _combine(self, node: int, into, added, what: str):
        if into[0] != added[0]:
            raise self._defect(node, f"adds chunk {added[0]} to {what}, which holds chunk {into[0]}", "wrong result")
        overlap = into[1] & added[1]
        if overlap:
            raise self._defect(node, f"counts the contributions of {self._ranks(overlap)} to chunk {into[0]} twice "
                                     f"in {what}", "wrong result")
        return into[0], into[1] | added[1]

    def _slot(self, slot: tuple[int, str, int]) -> _Slot:
        state = self.slots.get(slot)
        if state is None:
            state = self.slots[slot] = _Slot(initial=slot in self.values)
        return state

    def _race(self, node: int, other: int, slot, verb: str) -> MscclDefect:
        return self._defect(node, f"{verb} {self._slot_name(slot)} while {self._at(other)} "
                                  f"{'writes' if verb == 'reads' else 'may still access'} it, and no dependency, "
                                  f"thread-block order or message orders the two", "race")

    def _read(self, node: int, slot) -> tuple[int, int]:
        value = self.values.get(slot)
        if value is None:
            raise self._defect(node, f"reads {self._slot_name(slot)}, which holds nothing yet", "wrong result")
        state = self._slot(slot)
        for writer in (*state.writes, *state.adds):
            if writer != node and not self._precedes(writer, node):
                raise self._race(node, writer, slot, "reads")
        state.reads.append(node)
        state.log.append((node, "r"))
        return value

    def _operand(self, node: int, slot) -> tuple[int, int]:
        """The value an addition adds into (its order with other accesses is checked as the addition's write)."""
        value = self.values.get(slot)
        if value is None:
            raise self._defect(node, f"adds into {self._slot_name(slot)}, which holds nothing yet", "wrong result")
        return value

    def _write(self, node: int, slot, value, addition: bool) -> None:
        if not self.inplace and slot[1] == "i":
            raise self._defect(node, f"writes i[{slot[2]}], the caller's input buffer, in an out-of-place run",
                               "wrong result")
        state = self._slot(slot)
        readers = [r for r in state.reads if r != node]
        earlier = readers or [*state.writes, *state.adds]
        for other in earlier:
            if other != node and not self._precedes(other, node):
                if addition and other in state.adds:
                    raise self._defect(node, f"adds into {self._slot_name(slot)} while {self._at(other)} may still "
                                             f"add into it, and nothing orders the two: each is a load, an add and "
                                             f"a store, so one sum can be lost", "race")
                raise self._race(node, other, slot, "writes")
        if addition and not readers:
            state.adds.append(node)
        else:
            state.writes, state.adds, state.reads = [node], [], []
        state.log.append((node, "a" if addition else "w"))
        self.values[slot] = value
        self.last_writer[slot] = node

    def _execute(self) -> None:
        self.values: dict[tuple[int, str, int], tuple[int, int]] = {}
        self.slots: dict[tuple[int, str, int], _Slot] = {}
        self.last_writer: dict[tuple[int, str, int], int] = {}
        for rank in range(self.g):
            for off, chunk in self.layout.initial(rank, self.n, self.g, self.root):
                self.values[self._canon(rank, "i", off)] = (chunk, 1 << rank)
        count = len(self.steps)
        self.sent: list[list] = [[] for _ in range(count)]
        self.src_slots: list[list] = [[] for _ in range(count)]
        self.dst_slots: list[list] = [[] for _ in range(count)]
        self.src_cells: list[list] = [[] for _ in range(count)]
        self.dst_cells: list[list] = [[] for _ in range(count)]
        for node in self.order:
            step = self.steps[node]
            kind, rank = step.kind, step.gpu
            incoming = self.sent[self.sender[node]] if kind in _RECEIVES else None
            for k in range(step.cnt):
                src = self._canon(rank, step.srcbuf, step.srcoff + k) if kind in _READS_SRC else None
                dst = self._canon(rank, step.dstbuf, step.dstoff + k) if kind in _WRITES_DST else None
                self.src_slots[node].append(src)
                self.dst_slots[node].append(dst)
                if kind == "re":
                    added = self._read(node, src)
                    result = self._combine(node, self._operand(node, dst), added, self._slot_name(dst))
                    self._write(node, dst, result, addition=True)
                elif kind in ("rrc", "rrcs") and src == dst:
                    result = self._combine(node, self._operand(node, dst), incoming[k], self._slot_name(dst))
                    self._write(node, dst, result, addition=True)
                else:
                    value = self._read(node, src) if src is not None else None
                    if kind in ("s", "cpy"):
                        result = value
                    elif kind in ("r", "rcs"):
                        result = incoming[k]
                    else:
                        result = self._combine(node, value, incoming[k], self._slot_name(src))
                    if dst is not None:
                        self._write(node, dst, result, addition=False)
                self.src_cells[node].append((self._key(src, result[0]), result[0]) if src is not None else None)
                self.dst_cells[node].append((self._key(dst, result[0]), result[0]) if dst is not None else None)
                if kind in _SENDS:
                    self.sent[node].append(result)
        for rank in range(self.g):
            for off, chunk, owner in self.layout.result(rank, self.n, self.g, self.root):
                slot = self._canon(rank, "o", off)
                value = self.values.get(slot)
                want = (chunk, self.everyone if owner is None else 1 << owner)
                if value != want:
                    writer = self.last_writer.get(slot)
                    where = _where(rank) if writer is None else self._at(writer)
                    last = "" if writer is None else " (this step wrote it last)"
                    if value is None and self.program._gpus[rank].copies:
                        last = "; the gpu's <copy> elements (TACCL) are ignored by every MSCCL runtime"
                    raise MscclDefect(f"the result o[{off}] ends with {self._describe(value)}, expected "
                                      f"{self._describe(want)}{last}", kind="wrong result", path=where,
                                      source=self.source)
        self.dead: set[int] = set()
        for node in self.order:
            if self.steps[node].kind == "rrs" and all(self._overwritten(node, slot) for slot in self.src_slots[node]):
                self.dead.add(node)

    def _overwritten(self, node: int, slot) -> bool:
        """Whether the next access to `slot` after `node` overwrites it (so `node` may reuse its cell)."""
        log = self.slots[slot].log
        index = max(i for i, (who, _) in enumerate(log) if who == node)
        return index + 1 < len(log) and log[index + 1][1] == "w"

    # cells

    def _landing(self, node: int, k: int):
        """``(key, chunk)`` of the cell where the data a receive step takes lands."""
        step = self.steps[node]
        if step.kind == "rrs":
            return self.src_cells[node][k] if node in self.dead else (("t", node), self.src_cells[node][k][1])
        return self.dst_cells[node][k]

    def _sending(self, node: int, k: int):
        """``(key, chunk)`` of the cell a send-type step sends from."""
        kind = self.steps[node].kind
        if kind == "s":
            return self.src_cells[node][k]
        if kind == "rrs":
            return self._landing(node, k)
        return self.dst_cells[node][k]

    def _colour(self) -> None:
        chunks: list[dict] = [{} for _ in range(self.g)]

        def use(rank: int, key, chunk: int) -> None:
            if key not in ("work", "input"):
                chunks[rank].setdefault(key, set()).add(chunk)

        for node in self.order:
            step = self.steps[node]
            for k in range(step.cnt):
                for cell in (self.src_cells[node][k], self.dst_cells[node][k]):
                    if cell is not None:
                        use(step.gpu, *cell)
                if step.kind == "rrs":
                    use(step.gpu, *self._landing(node, k))
        self.code: list[dict] = []
        for rank in range(self.g):
            codes = {"work": WORK, "input": INPUT}
            taken: dict[int, set[int]] = {}
            for key, members in chunks[rank].items():
                used = set().union(*(taken.get(c, set()) for c in members))
                code = SCRATCH
                while code in used:
                    code += 1
                if code >= MAX_BUFFERS:
                    raise MscclUnsupported(f"gpu {rank} holds more than {MAX_BUFFERS - SCRATCH} copies of one chunk "
                                           f"in distinct slots; simnet has {MAX_BUFFERS - SCRATCH} scratch buffers",
                                           kind="limit", source=self.source)
                codes[key] = code
                for c in members:
                    taken.setdefault(c, set()).add(code)
            self.code.append(codes)

    # transfers

    def _cell(self, rank: int, key_chunk) -> tuple[int, int, int]:
        key, chunk = key_chunk
        return rank, self.code[rank][key], chunk

    def _prune(self, ids) -> frozenset:
        """`ids` without those another member already waits for directly."""
        ids = frozenset(ids)
        if len(ids) < 2:
            return ids
        covered = set()
        for member in ids:
            covered.update(self.ops[member].deps & ids)
        return ids - covered

    def _new_op(self, src: int, dst: int, cells: list, reduce: bool, sender: int, receiver: int, label: str,
                deps) -> list[int]:
        """One transfer per (source buffer, destination buffer) among `cells` (``(k, source cell, destination cell)``)."""
        groups: dict[tuple[int, int], list[int]] = {}
        for _, (_, sb, chunk), (_, db, _) in cells:
            groups.setdefault((sb, db), []).append(chunk)
        made = []
        for (sb, db), chunks in groups.items():
            made.append(len(self.ops))
            self.ops.append(_Op(src, dst, tuple(chunks), sb, db, reduce, sender, receiver, label, set(deps)))
        return made

    def _record_read(self, op: int, cell) -> None:
        self.cells.setdefault(cell, _Cell()).reads.append(op)

    def _access_step(self, op: int, cell) -> int:
        transfer = self.ops[op]
        return transfer.sender if cell[0] == transfer.src and transfer.src != transfer.dst else transfer.receiver

    def _partners(self, op: int, other: int) -> bool:
        """Whether `op` and `other` form a pairwise exchange in the sense of :mod:`simnet.schedule`."""
        a, b = self.ops[op], self.ops[other]
        return (a.src != a.dst and b.src == a.dst and b.dst == a.src and a.chunks == b.chunks
                and a.sb == a.db == b.sb == b.db)

    def _land(self, op: int, cell, addition: bool, node: int, check: bool) -> set[int]:
        """Record that `op` writes `cell` at step `node`; return the transfers the write must wait for."""
        state = self.cells.setdefault(cell, _Cell())
        readers = [r for r in state.reads if r != op]
        partners = [r for r in readers if self._partners(op, r)]
        others = [r for r in readers if r not in partners]
        if others:
            candidates = others
        elif partners:
            candidates = [*state.base, *state.red]
        else:
            candidates = [*state.base, *([] if addition else state.red)]
        waits = set()
        for other in candidates:
            if other == op:
                continue
            step = self._access_step(other, cell)
            if step == node or self._precedes(step, node):
                waits.add(other)
            elif not (addition and self.ops[other].reduce):
                raise self._defect(node, f"writes a cell that {self._at(step)} accesses with nothing ordering the "
                                         f"two", "race")
        if partners:
            state.base, state.red, state.reads = [op, *partners], [], []
        elif addition and not readers:
            state.red.append(op)
        else:
            state.base, state.red, state.reads = [op], [], []
        return waits if check else set()

    def _adds_on_arrival(self, node: int) -> bool:
        """Whether the data a receive step takes is added into its landing cell as it arrives.

        ``rrc``/``rrcs`` in place and ``rrs`` whose source is overwritten next (so its
        cell can take the sum) do; a ``recv ⊕ src`` written elsewhere lands as a copy
        and a local reduction then adds ``src`` (the runtime reads both at once; simnet
        lets the data land as soon as its destination is free, as a FIFO would hold it).
        """
        kind = self.steps[node].kind
        if kind in ("rrc", "rrcs"):
            return self.src_slots[node][0] == self.dst_slots[node][0]
        return kind == "rrs" and node in self.dead

    def _local(self, node: int, sources: list, targets: list, reduce: bool, label: str, deps) -> list[int]:
        """Local transfers of step `node` from cells `sources` to `targets` (``(key, chunk)`` per chunk)."""
        rank = self.steps[node].gpu
        cells = [(k, self._cell(rank, source), self._cell(rank, target))
                 for k, (source, target) in enumerate(zip(sources, targets))]
        made = self._new_op(rank, rank, cells, reduce, node, node, label, deps)
        for op in made:
            transfer = self.ops[op]
            for chunk in transfer.chunks:
                self._record_read(op, (rank, transfer.sb, chunk))
                self._land(op, (rank, transfer.db, chunk), reduce, node, check=False)
        return made

    def _transfers(self) -> None:
        self.ops: list[_Op] = []
        self.cells: dict[tuple[int, int, int], _Cell] = {}
        done: list[frozenset] = [frozenset()] * len(self.steps)
        outgoing: dict[int, list[int]] = {}
        for node in self.order:
            step = self.steps[node]
            kind, rank, cnt = step.kind, step.gpu, step.cnt
            ready = self._prune(set().union(*(done[p] for p in self.control[node])))
            own: list[int] = []
            if kind in ("cpy", "re"):
                own = self._local(node, self.src_cells[node], self.dst_cells[node], kind == "re", kind, ready)
            arrived: list[int] = []
            if kind in _RECEIVES:
                adding = self._adds_on_arrival(node)
                for op in outgoing.pop(self.sender[node]):
                    transfer = self.ops[op]
                    for chunk in transfer.chunks:
                        transfer.deps |= self._land(op, (rank, transfer.db, chunk), adding, node, check=True)
                    arrived.append(op)
                if kind in ("rrs", "rrc", "rrcs") and not adding:
                    targets = [self._landing(node, k) for k in range(cnt)]
                    own = self._local(node, self.src_cells[node], targets, True, f"{kind} add",
                                      ready | set(arrived))
            if kind in _SENDS:
                peer = self.receiver[node]
                peer_rank = self.steps[peer].gpu
                cells = [(k, self._cell(rank, self._sending(node, k)), self._cell(peer_rank, self._landing(peer, k)))
                         for k in range(cnt)]
                made = self._new_op(rank, peer_rank, cells, self._adds_on_arrival(peer), node, peer,
                                    f"{kind}>{self.steps[peer].kind}", ready | set(arrived) | set(own))
                for op in made:
                    for chunk in self.ops[op].chunks:
                        self._record_read(op, (rank, self.ops[op].sb, chunk))
                outgoing[node] = made
                done[node] = frozenset(made)
            elif kind in _RECEIVES:
                done[node] = self._prune(ready | set(arrived) | set(own))
            else:
                done[node] = frozenset(own)

    def table(self) -> TransferTable:
        """The transfers in the canonical order (see :func:`_canonical_order`), as a table (``nbytes`` zero)."""
        order = _canonical_order(self.ops, self._buffering)
        position = np.empty(len(self.ops), dtype=np.int64)
        position[order] = np.arange(len(order))
        pieces: dict[tuple[int, ...], int] = {}
        stages: dict[str, int] = {}
        columns = {name: [] for name in ("src", "dst", "op", "src_buffer", "dst_buffer", "piece", "stage")}
        deps: list[int] = []
        offsets = [0]
        self.locations = []
        for index in order:
            op = self.ops[index]
            self.locations.append(self._at(op.receiver) if op.src == op.dst else
                                  f"{self._at(op.sender)} -> {self._at(op.receiver)}")
            columns["src"].append(op.src)
            columns["dst"].append(op.dst)
            columns["op"].append(1 if op.reduce else 0)
            columns["src_buffer"].append(op.sb)
            columns["dst_buffer"].append(op.db)
            columns["piece"].append(pieces.setdefault(op.chunks, len(pieces)))
            columns["stage"].append(stages.setdefault(op.label, len(stages)))
            deps.extend(sorted(int(position[d]) for d in op.deps))
            offsets.append(len(deps))
        lengths = [len(p) for p in pieces]
        return TransferTable(
            src=np.array(columns["src"], dtype=np.int64), dst=np.array(columns["dst"], dtype=np.int64),
            nbytes=np.zeros(len(order), dtype=np.int64), op=np.array(columns["op"], dtype=np.int64),
            piece=np.array(columns["piece"], dtype=np.int64),
            pieces=(np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]),
                    np.array([c for p in pieces for c in p], dtype=np.int64)),
            deps=np.array(deps, dtype=np.int64), dep_offsets=np.array(offsets, dtype=np.int64),
            stage=np.array(columns["stage"], dtype=np.int64), stages=list(stages) or [""],
            src_buffer=np.array(columns["src_buffer"], dtype=np.int64),
            dst_buffer=np.array(columns["dst_buffer"], dtype=np.int64))

    def _buffering(self, stuck: list[int]) -> MscclUnsupported:
        op = self.ops[min(stuck)]
        return MscclUnsupported(f"{len(stuck)} transfers wait for each other, the one from {self._at(op.sender)} to "
                                f"{self._at(op.receiver)} among them: the program relies on the connection FIFO "
                                f"holding data until a destination its receiver still reads is free, and simnet "
                                f"transfers write on arrival", kind="buffering", path=self._at(op.receiver),
                                source=self.source)


def _canonical_order(ops: Sequence[_Op], stuck_error) -> list[int]:
    """A deterministic topological order of `ops` (an MSCCL file has no global order of its messages).

    Among the transfers whose dependencies are listed, the next is the one of lowest
    (first chunk's buffer position, dependency depth, lower and higher rank of the
    pair, sender): pieces in buffer order, each round by round, the two directions of
    an exchange together. The order matters where simultaneous transfers compete:
    between one pair of ranks they drain in schedule order, and under ``fifo`` links
    they are served in schedule order.
    """
    count = len(ops)
    successors: list[list[int]] = [[] for _ in range(count)]
    waiting = [0] * count
    for index, op in enumerate(ops):
        for dep in op.deps:
            successors[dep].append(index)
        waiting[index] = len(op.deps)
    depth = [0] * count
    queue = deque(i for i in range(count) if waiting[i] == 0)
    left = list(waiting)
    seen = 0
    while queue:
        index = queue.popleft()
        seen += 1
        for nxt in successors[index]:
            depth[nxt] = max(depth[nxt], depth[index] + 1)
            left[nxt] -= 1
            if left[nxt] == 0:
                queue.append(nxt)
    if seen < count:
        raise stuck_error([i for i in range(count) if left[i] > 0])

    def key(index: int) -> tuple:
        op = ops[index]
        return (min(op.chunks), depth[index], min(op.src, op.dst), max(op.src, op.dst), op.src, index)

    heap = [key(i) for i in range(count) if waiting[i] == 0]
    heapq.heapify(heap)
    order = []
    while heap:
        index = heapq.heappop(heap)[-1]
        order.append(index)
        for nxt in successors[index]:
            waiting[nxt] -= 1
            if waiting[nxt] == 0:
                heapq.heappush(heap, key(nxt))
    return order


# ---------------------------------------------------------------------------------------------
# Export

_EXPORTABLE = {"allreduce": ("allreduce", "i"), "all_gather": ("allgather", "o"),
               "reduce_scatter": ("reducescatter", "i")}
"""simnet collective -> (MSCCL ``coll``, the buffer an in-place run works in)."""
_MAX_EXPORT_TRANSFERS = 200_000
_NAME = re.compile(r"[A-Za-z0-9_.:+-]{1,63}")


def _export_error(message: str) -> MscclError:
    return MscclError(message, kind="export", path="schedule")


def _positions(schedule: Schedule, table: TransferTable) -> np.ndarray:
    """Buffer position of every chunk: first use in transfer order (ranks' blocks first for all-gather and
    reduce-scatter), or natural order when that keeps more pieces contiguous."""
    nchunks = len(schedule.chunk_bytes)
    first = np.full(nchunks, len(table), dtype=np.int64)
    seen: set[int] = set()
    offsets, members = table.piece_offsets.tolist(), table.piece_chunks.tolist()
    for index, piece in enumerate(table.piece.tolist()):
        if piece not in seen:
            seen.add(piece)
            for chunk in members[offsets[piece] : offsets[piece + 1]]:
                first[chunk] = min(first[chunk], index)
    owners = np.zeros(nchunks, dtype=np.int64) if schedule.owners is None else np.asarray(schedule.owners)
    candidates = [np.lexsort((np.arange(nchunks), first, owners)), np.lexsort((np.arange(nchunks), owners))]
    best, best_broken = None, None
    for order in candidates:
        position = np.empty(nchunks, dtype=np.int64)
        position[order] = np.arange(nchunks)
        broken = sum(not _contiguous(position[table.piece_chunks[table.piece_offsets[p] : table.piece_offsets[p + 1]]])
                     for p in range(len(table.piece_offsets) - 1))
        if best is None or broken < best_broken:
            best, best_broken = position, broken
    return best


def _contiguous(positions: np.ndarray) -> bool:
    return int(positions.max()) - int(positions.min()) + 1 == len(positions)


def _runs(positions: list[int]) -> list[tuple[int, int]]:
    """Maximal runs ``(first position, count)`` of a set of positions."""
    ordered = sorted(positions)
    runs = []
    for pos in ordered:
        if runs and pos == runs[-1][0] + runs[-1][1]:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((pos, 1))
    return runs


def _ordered_additions(table: TransferTable) -> tuple[TransferTable, list[int]]:
    """`table` with every reduction into a buffer slot waiting for the previous reduction into it, and
    :func:`_ancestors` of the result.

    simnet adds on arrival, so a schedule may leave the additions into one cell unordered (they commute).
    An MSCCL runtime's ``rrc`` or ``re`` is a load, an add and a store by one thread block, with nothing
    atomic: two of them into one slot at once lose one sum. msccl-tools orders every write of a slot, a
    reduction included, after the slot's previous write (``InstructionDAG._write``); so does this, in
    transfer order: a reduction not already after the previous reduction into one of its slots (since that
    slot was last overwritten) gets a dependency on it.
    """
    dst, buffers, reducing = table.dst.tolist(), table.dst_buffer.tolist(), (table.op == REDUCE).tolist()
    offsets, members, pieces = table.piece_offsets.tolist(), table.piece_chunks.tolist(), table.piece.tolist()
    deps, dep_offsets = table.deps.tolist(), table.dep_offsets.tolist()
    last: dict[tuple[int, int, int], int | None] = {}
    waits: list[list[int]] = []
    ancestors: list[int] = []
    for index in range(len(table)):
        wait = deps[dep_offsets[index]:dep_offsets[index + 1]]
        bits = 0
        for dep in wait:
            bits |= ancestors[dep] | (1 << dep)
        piece = pieces[index]
        cells = [(dst[index], buffers[index], chunk) for chunk in members[offsets[piece]:offsets[piece + 1]]]
        if reducing[index]:
            behind = sorted({last[cell] for cell in cells if last.get(cell) is not None} - set(wait))
            for previous in behind:
                if not bits >> previous & 1:
                    wait = sorted({*wait, previous})
                    bits |= ancestors[previous] | (1 << previous)
        for cell in cells:
            last[cell] = index if reducing[index] else None
        waits.append(wait)
        ancestors.append(bits)
    if sum(map(len, waits)) == len(deps):
        return table, ancestors
    counts = np.array([len(w) for w in waits], dtype=np.int64)
    ordered = table.replace(deps=np.array([d for w in waits for d in w], dtype=np.int64),
                            dep_offsets=np.concatenate(([0], np.cumsum(counts))))
    return ordered, ancestors


def _exchanges(table: TransferTable, ancestors: list[int]) -> dict[int, int]:
    """Pairwise exchanges (:mod:`simnet.schedule`): ``a -> b`` and ``b -> a`` over one piece and buffer, unordered."""
    waiting: dict[tuple, list[int]] = {}
    partners: dict[int, int] = {}
    rows = zip(table.src.tolist(), table.dst.tolist(), table.piece.tolist(), table.src_buffer.tolist(),
               table.dst_buffer.tolist())
    for index, (src, dst, piece, sb, db) in enumerate(rows):
        if sb != db or src == dst:
            continue
        earlier = waiting.get((dst, src, piece, sb))
        match = next((i for i in earlier if not ancestors[index] >> i & 1), None) if earlier else None
        if match is None:
            waiting.setdefault((src, dst, piece, sb), []).append(index)
        else:
            earlier.remove(match)
            partners[index], partners[match] = match, index
    return partners


@dataclass
class _Lane:
    """A thread block being written: its peers, channel and the transfers whose steps it runs, in order."""

    gpu: int
    send: int
    recv: int
    chan: int
    items: list = field(default_factory=list)


def dumps(schedule: Schedule, *, name: str | None = None, proto: str | None = None, min_bytes: int = 0,
          max_bytes: int = 0, limits: Limits = EXPORT_LIMITS, exact: bool = True) -> str:
    """A simnet schedule as MSCCL XML text, laid out exactly as msccl-tools' ``ir_to_xml`` writes files.

    Every transfer becomes a send step on its source GPU and a receive (``r``, or
    ``rrc`` for a reduction) on its destination, a transfer between two buffers of one
    rank a ``cpy`` or ``re``. Transfers between one pair of ranks that may overlap in
    the schedule go to different channels: a thread block runs its steps one after the
    other, so each one holds a chain of transfers each of which already waits for the
    one before it. Every dependency of a transfer becomes a dependency of its send
    step (when it involves the sending rank) or of its receive step (otherwise), extra
    ones as ``nop`` steps before it, with ``hasdep="1"`` on the steps waited for; the
    receive of a pairwise exchange also waits for the send that reads its destination,
    and a reduction into a slot for the previous reduction into it (the runtimes' ``rrc``
    is not atomic; see :func:`_ordered_additions`).
    :func:`load` of the text then simulates to the schedule's time (see
    ``docs/interchange.md`` for the conditions).

    The file holds the program, not simnet's model of NCCL's runtime: the per-message
    wire bytes, NCCL latencies and connections of the NCCL-family schedules are not
    written (``proto`` is).

    Parameters
    ----------
    schedule : Schedule
        A dense ``allreduce``, ``all_gather`` or ``reduce_scatter`` schedule in the
        ``work`` and scratch buffers, without switch endpoints.
    name : str, optional
        ``name`` of the algorithm (default: the schedule's algorithm).
    proto : {"Simple", "LL", "LL128"}, optional
        ``proto`` to write (default: the schedule's NCCL ``protocol`` parameter, if
        any, else ``"Simple"``).
    min_bytes, max_bytes : int, optional
        Size range the runtime selects the algorithm for (``0``, ``0``: every size,
        as ``ir_to_xml`` writes).
    limits : Limits, optional
        Bounds the file must respect (default :data:`EXPORT_LIMITS`).
    exact : bool, optional
        Refuse a schedule that needs more thread blocks or channels than `limits`
        allow (default). ``False`` puts transfers that may overlap into one thread
        block, oldest chain first, until the file fits: a valid program that runs
        those transfers one after the other, so it may be slower than the schedule.

    Returns
    -------
    str
        The file, in-place form, ending with a newline.

    Raises
    ------
    MscclError
        When the schedule cannot be written within `limits` (too many channels,
        thread blocks or steps) or uses what MSCCL cannot express (a dependency
        between transfers of other ranks, the ``input`` buffer, sparse payloads).
    """
    if schedule.collective not in _EXPORTABLE:
        raise _export_error(f"MSCCL export takes {', '.join(_EXPORTABLE)} schedules, got {schedule.collective}")
    table = schedule.transfers
    if schedule.switches:
        raise _export_error("in-network reduction at switch endpoints (NVLS, SHARP) has no MSCCL form")
    if table.sparse or (table.op > 1).any():
        raise _export_error("sparse payloads and top-k reductions have no MSCCL form")
    if (table.src_buffer == INPUT).any():
        raise _export_error("a transfer reads the input buffer; MSCCL export writes in-place files (work and "
                            "scratch buffers)")
    if len(table) > _MAX_EXPORT_TRANSFERS:
        raise _export_error(f"{len(table)} transfers; MSCCL files of more than {_MAX_EXPORT_TRANSFERS} are beyond "
                            f"every runtime's limits")
    if proto is None:
        proto = {p.lower(): p for p in PROTOCOLS}.get(str(schedule.params.get("protocol", "")).lower(), "Simple")
    if proto not in PROTOCOLS:
        raise MscclError(f"must be one of {PROTOCOLS}, got {proto!r}", kind="export", path="proto")
    label = name if name is not None else schedule.algorithm or "simnet"
    if not _NAME.fullmatch(label):
        raise MscclError(f"must be 1-63 letters, digits or _.:+-, got {label!r}", kind="export", path="name")
    for key, value in (("min_bytes", min_bytes), ("max_bytes", max_bytes)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise MscclError(f"must be a whole number of bytes ≥ 0, got {value!r}", kind="export", path=key)
    coll, home = _EXPORTABLE[schedule.collective]
    p, nchunks = schedule.nranks, len(schedule.chunk_bytes)
    if schedule.owners is not None:
        counts = np.bincount(np.asarray(schedule.owners), minlength=p)
        if nchunks % p or (counts != nchunks // p).any():
            raise _export_error(f"MSCCL gives every rank nchunksperloop / ngpus chunks of a {coll}; the schedule's "
                                f"ranks own {sorted(set(counts.tolist()))} of its {nchunks} chunks")
    position = _positions(schedule, table)
    table, ancestors = _ordered_additions(table)
    partners = _exchanges(table, ancestors)
    layout, lanes = _lay_out(table, ancestors, partners, position, limits, exact)
    return _write(schedule, label, proto, coll, home, layout, lanes, min_bytes, max_bytes)


def dump(schedule: Schedule, path: str | Path, **options) -> None:
    """Write :func:`dumps` of `schedule` to `path` (UTF-8, ``\\n`` line ends)."""
    Path(path).write_text(dumps(schedule, **options), encoding="utf-8", newline="\n")


def _lay_out(table: TransferTable, ancestors: list[int], partners: dict[int, int], position: np.ndarray,
             limits: Limits, exact: bool):
    """Thread blocks of every GPU and the steps of each: ``(steps, lanes)``.

    ``steps[(t, side)]`` is ``(lane, first position, step count, dependencies)`` of
    transfer ``t``'s send (``"X"``), receive (``"Y"``) or local (``"L"``) side; a lane
    is a thread block, its items ``(t, side)`` in order.
    """
    src, dst = table.src.tolist(), table.dst.tolist()
    deps, offsets = table.deps.tolist(), table.dep_offsets.tolist()
    count = len(table)

    def items(t: int) -> list[tuple[int, int]]:
        piece = int(table.piece[t])
        chunks = table.piece_chunks[table.piece_offsets[piece] : table.piece_offsets[piece + 1]]
        pieces = []
        for first, run in _runs(position[chunks].tolist()):
            for start in range(0, run, limits.max_count):
                pieces.append((first + start, min(limits.max_count, run - start)))
        return pieces

    def side_of(u: int, rank: int) -> str:
        return "L" if src[u] == dst[u] else ("X" if src[u] == rank else "Y")

    waits: dict[tuple[int, str], list[tuple[int, str]]] = {}
    for t in range(count):
        a, b = src[t], dst[t]
        mine: dict[str, list[tuple[int, str]]] = {"L": []} if a == b else {"X": [], "Y": []}
        for u in deps[offsets[t] : offsets[t + 1]]:
            if src[u] == a or dst[u] == a:
                mine["L" if a == b else "X"].append((u, side_of(u, a)))
            elif src[u] == b or dst[u] == b:
                mine["Y"].append((u, side_of(u, b)))
            else:
                raise _export_error(f"transfer {t} ({a} -> {b}) waits for transfer {u} ({src[u]} -> {dst[u]}), "
                                    f"which involves neither rank; MSCCL dependencies join steps of one GPU")
        if t in partners and a != b:
            mine["Y"].append((partners[t], "X"))
        for side, targets in mine.items():
            waits[(t, side)] = targets

    kept_of: dict[tuple[int, str, int | None], list[tuple[int, str]]] = {}

    def pruned(t: int, side: str, previous: int | None) -> list[tuple[int, str]]:
        """What `t`'s `side` must wait for once the step of `previous` before it in its thread block is done (the
        same for every attempt below, so computed once; the lists are only read)."""
        key = (t, side, previous)
        if key in kept_of:
            return kept_of[key]
        targets = dict.fromkeys(waits[(t, side)])
        kept = []
        for u, where in targets:
            if previous is not None and (u == previous or ancestors[previous] >> u & 1):
                continue
            if any(v != u and ancestors[v] >> u & 1 for v, _ in targets):
                continue
            kept.append((u, where))
        kept_of[key] = kept
        return kept

    pieces = {t: items(t) for t in range(count)}
    pairs: dict[tuple[int, int], list[int]] = {}
    for t in range(count):
        pairs.setdefault((src[t], dst[t]), []).append(t)

    built_for: dict[tuple[tuple[int, int], int | None], list[list[int]]] = {}

    def chains(pair: tuple[int, int], cap: int | None) -> list[list[int]]:
        """Chains of the transfers of `pair` in which every transfer waits for the one before (beyond `cap`
        chains: the oldest chain); each (pair, cap) is built once."""
        if (pair, cap) in built_for:
            return built_for[(pair, cap)]
        built: list[list[int]] = []
        for t in pairs[pair]:
            fitting = [chain for chain in built if ancestors[t] >> chain[-1] & 1]
            if fitting:
                max(fitting, key=lambda chain: chain[-1]).append(t)
            elif cap is None or len(built) < cap:
                built.append([t])
            else:
                min(built, key=lambda chain: chain[-1]).append(t)
        built_for[(pair, cap)] = built
        return built

    def segments(chain: list[int], sides: tuple[str, ...]) -> list[list[int]]:
        """`chain` cut where a thread block would exceed the step limit on either side."""
        cut: list[list[int]] = []
        current: list[int] = []
        used = dict.fromkeys(sides, 0)
        for t in chain:
            cost = {side: len(pieces[t]) + max(0, len(pruned(t, side, current[-1] if current else None)) - 1)
                    for side in sides}
            if current and any(used[side] + cost[side] > limits.max_steps for side in sides):
                cut.append(current)
                current, used = [], dict.fromkeys(sides, 0)
                cost = {side: len(pieces[t]) + max(0, len(pruned(t, side, None)) - 1) for side in sides}
            if any(cost[side] > limits.max_steps for side in sides):
                raise _export_error(f"transfer {t} needs {max(cost.values())} steps in one thread block, more than "
                                    f"{limits.max_steps}")
            current.append(t)
            for side in sides:
                used[side] += cost[side]
        return [*cut, current]

    def attempt(cap: int | None) -> str | tuple:
        lanes: list[_Lane] = []
        steps: dict[tuple[int, str], tuple[_Lane, list[tuple[int, str]]]] = {}
        for a, b in sorted(pairs):
            sides = ("L",) if a == b else ("X", "Y")
            cuts = [segment for chain in chains((a, b), cap) for segment in segments(chain, sides)]
            if a != b and len(cuts) > limits.max_channels:
                return (f"transfers from rank {a} to rank {b} need {len(cuts)} channels (one per chain of transfers "
                        f"that may overlap, at most {limits.max_steps} steps each), more than {limits.max_channels}")
            for chan, segment in enumerate(cuts):
                owners = [_Lane(a, -1, -1, 0)] if a == b else [_Lane(a, b, -1, chan), _Lane(b, -1, a, chan)]
                lanes.extend(owners)
                for side, lane in zip(sides, owners):
                    previous = None
                    for t in segment:
                        lane.items.append((t, side))
                        steps[(t, side)] = (lane, pruned(t, side, previous))
                        previous = t
        per_gpu: dict[int, int] = {}
        per_channel: dict[tuple[int, int, bool], int] = {}
        for lane in lanes:
            per_gpu[lane.gpu] = per_gpu.get(lane.gpu, 0) + 1
            if lane.send >= 0 or lane.recv >= 0:
                key = (lane.gpu, lane.chan, lane.send >= 0)
                per_channel[key] = per_channel.get(key, 0) + 1
        gpu, most = max(per_gpu.items(), key=lambda item: (item[1], -item[0]))
        if most > limits.max_threadblocks:
            return f"rank {gpu} needs {most} thread blocks, more than {limits.max_threadblocks}"
        (gpu, chan, sending), most = max(per_channel.items(), key=lambda item: (item[1], item[0]))
        if most > limits.max_per_channel:
            return (f"rank {gpu} needs {most} thread blocks {'sending' if sending else 'receiving'} on channel "
                    f"{chan}, more than {limits.max_per_channel}")
        return (steps, pieces), lanes

    def surely_too_many(cap: int) -> bool:
        """Whether the chains alone (each at least one thread block per side, on channels 0, 1, ...) already
        break a limit, so that :func:`attempt` with `cap` must fail whatever its segments.

        A transfer too long for one thread block raises in every try that reaches it,
        whatever the cap, so skipping a try never lets a layout through that the
        tries in order would refuse; it can only change which refusal is reported.
        """
        per_gpu: dict[int, int] = {}
        per_channel: dict[tuple[int, int, bool], int] = {}
        for a, b in pairs:
            count = len(chains((a, b), cap))
            if a != b and count > limits.max_channels:
                return True
            for gpu, sending in ((a, True),) if a == b else ((a, True), (b, False)):
                per_gpu[gpu] = per_gpu.get(gpu, 0) + count
                for chan in range(count if a != b else 0):
                    per_channel[(gpu, chan, sending)] = per_channel.get((gpu, chan, sending), 0) + 1
        return max(per_gpu.values(), default=0) > limits.max_threadblocks or \
            max(per_channel.values(), default=0) > limits.max_per_channel

    result = attempt(None)
    if isinstance(result, str) and not exact:
        for cap in range(limits.max_channels, 0, -1):
            if cap > 1 and surely_too_many(cap):
                continue
            result = attempt(cap)
            if not isinstance(result, str):
                break
    if isinstance(result, str):
        hint = "; exact=False (--serialize) orders overlapping transfers into fewer thread blocks" if exact else ""
        raise _export_error(result + hint)
    return result


def _write(schedule: Schedule, name: str, proto: str, coll: str, home: str, layout, lanes: list[_Lane],
           min_bytes: int, max_bytes: int) -> str:
    """The XML text, as ``ir_to_xml`` lays it out (lxml, two-space indentation, attributes in its order)."""
    steps, pieces = layout
    table = schedule.transfers
    p, n = schedule.nranks, len(schedule.chunk_bytes)
    m = n // p
    by_gpu: list[list[_Lane]] = [[] for _ in range(p)]
    for lane in lanes:
        by_gpu[lane.gpu].append(lane)
    tb_id: dict[int, int] = {}
    for gpu_lanes in by_gpu:
        gpu_lanes.sort(key=lambda lane: (lane.send, lane.recv, lane.chan))
        for index, lane in enumerate(gpu_lanes):
            tb_id[id(lane)] = index
    rows: dict[int, list[tuple]] = {}
    place: dict[tuple[int, str], tuple[int, int]] = {}
    for gpu_lanes in by_gpu:
        for lane in gpu_lanes:
            listed = []
            for t, side in lane.items:
                _, targets = steps[(t, side)]
                listed.extend(("nop", t, None, target) for target in targets[:-1])
                listed.extend((side, t, run, targets[-1] if index == 0 and targets else None)
                              for index, run in enumerate(pieces[t]))
                place[(t, side)] = (lane.gpu, tb_id[id(lane)], len(listed) - 1)
            rows[id(lane)] = listed
    depended = set()
    for listed in rows.values():
        for entry in listed:
            if entry[3] is not None:
                depended.add(place[entry[3]])
    if any(tb > _MAX_DEPID for _, tb, _ in depended):
        raise _export_error(f"a thread block beyond id {_MAX_DEPID} is depended on; depid is an 8-bit integer")

    def slot(buffer: int, first: int) -> tuple[str, int]:
        return (home, first) if buffer == WORK else ("s", (buffer - SCRATCH) * n + first)

    lines = [f'<algo name="{name}" proto="{proto}" nchannels="{max((l.chan for l in lanes), default=0) + 1}" '
             f'nchunksperloop="{n}" ngpus="{p}" coll="{coll}" inplace="1" outofplace="0" minBytes="{min_bytes}" '
             f'maxBytes="{max_bytes}">']
    sizes = {"allreduce": (n, 0), "allgather": (m, n), "reducescatter": (n, m)}[coll]
    for rank, gpu_lanes in enumerate(by_gpu):
        body = []
        scratch = 0
        for lane in gpu_lanes:
            body.append(f'    <tb id="{tb_id[id(lane)]}" send="{lane.send}" recv="{lane.recv}" chan="{lane.chan}">')
            for s, (side, t, run, target) in enumerate(rows[id(lane)]):
                depid, deps = place[target][1:] if target is not None else (-1, -1)
                hasdep = int((rank, tb_id[id(lane)], s) in depended)
                if side == "nop":
                    body.append(f'      <step s="{s}" type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" '
                                f'cnt="0" depid="{depid}" deps="{deps}" hasdep="{hasdep}"/>')
                    continue
                first, cnt = run
                source = slot(int(table.src_buffer[t]), first)
                target_slot = slot(int(table.dst_buffer[t]), first)
                reduce = bool(table.op[t])
                if side == "X":
                    kind_name = "s"
                elif side == "Y":
                    kind_name = "rrc" if reduce else "r"
                    if reduce:
                        source = target_slot
                else:
                    kind_name = "re" if reduce else "cpy"
                local = {"X": (source,), "Y": (target_slot,), "L": (source, target_slot)}[side]
                scratch = max([scratch, *(off + cnt for buf, off in local if buf == "s")])
                body.append(f'      <step s="{s}" type="{kind_name}" srcbuf="{source[0]}" srcoff="{source[1]}" '
                            f'dstbuf="{target_slot[0]}" dstoff="{target_slot[1]}" cnt="{cnt}" depid="{depid}" '
                            f'deps="{deps}" hasdep="{hasdep}"/>')
            body.append("    </tb>")
        head = f'  <gpu id="{rank}" i_chunks="{sizes[0]}" o_chunks="{sizes[1]}" s_chunks="{scratch}"'
        lines.extend([head + ">", *body, "  </gpu>"] if body else [head + "/>"])
    lines.append("</algo>")
    return "\n".join(lines) + "\n"
