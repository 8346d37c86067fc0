"""NCCL's example tuner plugin configuration (``nccl_tuner.conf``): write, parse strictly, match.

NCCL's example tuner plugin (``plugins/tuner/example/plugin.c`` since 2.29.7,
``ext-tuner/example/plugin.c`` from 2.27.5 to 2.29.2) reads ``$NCCL_TUNER_CONFIG_FILE``
(else ``./nccl_tuner.conf``): one configuration per line, no header::

    collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]]

Lines whose first character is ``#`` or that are empty are skipped; fields are
split on commas (``strtok``: empty fields vanish) and trimmed of spaces and
tabs; lines are read with ``fgets`` into 256 bytes, so a longer line is split.
Names are compared exactly (``strcmp``): ``broadcast reduce allgather
reducescatter allreduce``; ``tree ring collnet_direct collnet_chain nvls
nvls_tree pat``; ``ll ll128 simple``. The plugin silently maps an unknown name to
allreduce / ring / simple and skips a line with fewer than 8 or more than 10
fields; :func:`parse_tuner_csv` refuses such lines instead, so a file it accepts
means to NCCL what it says. ``min_bytes``/``max_bytes`` bound NCCL's model bytes
(:func:`~simnet.models.nccl.model_nbytes`) inclusively; ``channels``, ``nNodes``,
``nRanks``, ``numPipeOps`` and ``regBuff`` accept ``-1`` for "any" (channels:
"keep NCCL's"; ``regBuff`` otherwise 0 or 1). The first matching line wins and
the plugin sets that cost-table entry to 0 (:func:`tuner_lookup`).

Quirk of the example plugin (research notes §9.2): it initialises the channel
count to 1 and never resets it, so with the plugin loaded an operation matching
no line, or a line with ``channels = -1``, runs on one channel.

References
----------
NVIDIA/nccl v2.30.7-1 ``plugins/tuner/example/plugin.c`` l.14-33 (field layout,
``MAX_LINE_LENGTH`` 256), l.60-110 (names), l.195-255 (``loadConfig``),
``plugins/tuner/example/nccl_tuner.conf`` and ``README.md``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from simnet.errors import SimnetError
from simnet.models.nccl.inputs import ALGORITHMS, FUNCTIONS, PROTOCOLS

__all__ = ["TunerRow", "tuner_rows_to_csv", "parse_tuner_csv", "tuner_lookup", "TUNER_COLLECTIVES", "MAX_LINE_LENGTH"]

TUNER_COLLECTIVES = {
    "broadcast": "broadcast",
    "reduce": "reduce",
    "all_gather": "allgather",
    "reduce_scatter": "reducescatter",
    "allreduce": "allreduce",
}
"""simnet collective -> the plugin's ``collective_type`` name."""

MAX_LINE_LENGTH = 256
"""The plugin's ``fgets`` buffer: a line holds at most 254 characters before its newline."""

_FIELDS = ("collective", "min_bytes", "max_bytes", "algorithm", "protocol", "channels", "n_nodes", "n_ranks",
           "num_pipe_ops", "reg_buff")
_MAX_BYTES = 2**64 - 1


def _integer(value: object, path: str, *, minimum: int, wildcard: bool = False, maximum: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SimnetError(f"must be an integer, got {value!r}", path=path)
    if wildcard and value == -1:
        return
    if value < minimum or (maximum is not None and value > maximum):
        allowed = f"-1 or {minimum}..{maximum}" if wildcard and maximum is not None else \
            f"-1 or ≥ {minimum}" if wildcard else f"≥ {minimum}" if maximum is None else f"{minimum}..{maximum}"
        raise SimnetError(f"must be {allowed}, got {value!r}", path=path)


@dataclass(frozen=True)
class TunerRow:
    """One line of ``nccl_tuner.conf``.

    Parameters
    ----------
    collective : str
        simnet collective name (``"allreduce"``, ``"all_gather"``, ...).
    min_bytes, max_bytes : int
        Inclusive range of NCCL's model bytes.
    algorithm, protocol : str
        ``"tree"``, ``"ring"``, ... and ``"ll"``, ``"ll128"``, ``"simple"``.
    channels : int
        Channels to run with, or -1 to keep NCCL's choice.
    n_nodes, n_ranks : int
        Communicator to match, or -1 for any.
    num_pipe_ops : int, optional
        Aggregated operations to match, -1 for any; None omits the field.
    reg_buff : int, optional
        0 or 1 (registered user buffers), -1 for any; None omits the field
        (requires ``num_pipe_ops``).
    """

    collective: str
    min_bytes: int
    max_bytes: int
    algorithm: str
    protocol: str
    channels: int = -1
    n_nodes: int = -1
    n_ranks: int = -1
    num_pipe_ops: int | None = None
    reg_buff: int | None = None

    def __post_init__(self) -> None:
        if self.collective not in TUNER_COLLECTIVES:
            raise SimnetError(f"unknown collective {self.collective!r}; expected one of {', '.join(FUNCTIONS)}",
                              path="collective")
        if self.algorithm not in ALGORITHMS:
            raise SimnetError(f"unknown algorithm {self.algorithm!r}; expected one of {', '.join(ALGORITHMS)}",
                              path="algorithm")
        if self.protocol not in PROTOCOLS:
            raise SimnetError(f"unknown protocol {self.protocol!r}; expected one of {', '.join(PROTOCOLS)}",
                              path="protocol")
        _integer(self.min_bytes, "min_bytes", minimum=0, maximum=_MAX_BYTES)
        _integer(self.max_bytes, "max_bytes", minimum=self.min_bytes, maximum=_MAX_BYTES)
        _integer(self.channels, "channels", minimum=1, wildcard=True)
        _integer(self.n_nodes, "n_nodes", minimum=1, wildcard=True)
        _integer(self.n_ranks, "n_ranks", minimum=1, wildcard=True)
        if self.num_pipe_ops is not None:
            _integer(self.num_pipe_ops, "num_pipe_ops", minimum=1, wildcard=True)
        if self.reg_buff is not None:
            if self.num_pipe_ops is None:
                raise SimnetError("regBuff is the 10th field: give num_pipe_ops (-1 for any) too", path="reg_buff")
            _integer(self.reg_buff, "reg_buff", minimum=0, maximum=1, wildcard=True)

    def to_csv(self) -> str:
        """The line the example plugin reads (no newline)."""
        values = [TUNER_COLLECTIVES[self.collective], self.min_bytes, self.max_bytes, self.algorithm, self.protocol,
                  self.channels, self.n_nodes, self.n_ranks]
        values += [v for v in (self.num_pipe_ops, self.reg_buff) if v is not None]
        return ",".join(str(v) for v in values)


def tuner_rows_to_csv(rows: Iterable[TunerRow], comments: Iterable[str] = ()) -> str:
    """``nccl_tuner.conf`` text: ``# `` comment lines, then one line per row, newline-terminated.

    Raises
    ------
    SimnetError
        For a row that is not a :class:`TunerRow`, a comment with a newline, or a
        line longer than the plugin's 256-byte buffer holds.
    """
    lines = []
    for i, comment in enumerate(comments):
        if not isinstance(comment, str) or "\n" in comment:
            raise SimnetError(f"must be one line of text, got {comment!r}", path=f"comments[{i}]")
        lines.append(f"# {comment}".rstrip())
    for i, row in enumerate(rows):
        if not isinstance(row, TunerRow):
            raise SimnetError(f"must be a TunerRow, got {type(row).__name__}", path=f"rows[{i}]")
        lines.append(row.to_csv())
    for i, line in enumerate(lines):
        if len(line.encode()) > MAX_LINE_LENGTH - 2:
            raise SimnetError(f"line of {len(line)} characters exceeds the plugin's {MAX_LINE_LENGTH}-byte buffer",
                              path=f"lines[{i}]")
    return "".join(f"{line}\n" for line in lines)


def _parse_int(token: str, path: str) -> int:
    text = token.strip(" \t")
    body = text[1:] if text.startswith("-") else text
    if not body.isdigit() or not body.isascii():
        raise SimnetError(f"must be a decimal integer, got {token!r}", path=path)
    return int(text)


def parse_tuner_csv(text: str) -> list[TunerRow]:
    """Parse ``nccl_tuner.conf`` strictly, as the example plugin reads it.

    Raises
    ------
    SimnetError
        With path ``line N`` (or ``line N.<field>``) for a line longer than the
        plugin's buffer, a field count other than 8, 9 or 10, an unknown name, a
        non-integer number, a value out of range, or ``min_bytes > max_bytes``.
    """
    if not isinstance(text, str):
        raise SimnetError(f"must be text, got {type(text).__name__}", path="text")
    rows = []
    names = {name: collective for collective, name in TUNER_COLLECTIVES.items()}
    for number, line in enumerate(text.split("\n"), start=1):
        where = f"line {number}"
        if len(line.encode()) > MAX_LINE_LENGTH - 2:
            raise SimnetError(f"{len(line)} characters; the plugin reads lines of at most {MAX_LINE_LENGTH - 2}",
                              path=where)
        if not line or line.startswith("#"):
            continue
        fields = [token.strip(" \t") for token in line.rstrip("\r").split(",") if token]
        if not 8 <= len(fields) <= 10:
            raise SimnetError(f"{len(fields)} fields; the plugin needs 8, 9 or 10 "
                              "(collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks"
                              "[,numPipeOps[,regBuff]])", path=where)
        if fields[0] not in names:
            raise SimnetError(f"unknown collective_type {fields[0]!r}; expected one of {', '.join(names)}",
                              path=f"{where}.collective_type")
        numbers = {name: _parse_int(fields[i], f"{where}.{name}")
                   for i, name in enumerate(_FIELDS) if i < len(fields) and i not in (0, 3, 4)}
        try:
            rows.append(TunerRow(names[fields[0]], algorithm=fields[3], protocol=fields[4], **numbers))
        except SimnetError as error:
            raise error.at(where) from None
    return rows


def tuner_lookup(rows: Iterable[TunerRow], collective: str, nbytes: int, n_nodes: int, n_ranks: int,
                 num_pipe_ops: int = 1, reg_buff: int = 0,
                 ignored: Iterable[tuple[str, str]] = ()) -> TunerRow | None:
    """The row the example plugin's ``getCollInfo`` applies to an operation, or None.

    The first row matching the collective, ``min_bytes <= nbytes <= max_bytes``
    and the wildcards, skipping rows whose ``(algorithm, protocol)`` is in
    `ignored` (cost-table entries at −1: disabled by NCCL's model or filtered for
    this operation, which the plugin cannot select; ``plugin.c`` l.300-360).
    """
    ignored = set(ignored)
    for row in rows:
        if (row.algorithm, row.protocol) in ignored:
            continue
        if row.collective != collective or not row.min_bytes <= nbytes <= row.max_bytes:
            continue
        if row.n_nodes not in (-1, n_nodes) or row.n_ranks not in (-1, n_ranks):
            continue
        if row.num_pipe_ops not in (None, -1, num_pipe_ops) or row.reg_buff not in (None, -1, reg_buff):
            continue
        return row
    return None
