"""Small MSCCL XML programs for the tests, written the way msccl-tools lays files out.

``step("s", "i0", "i0")`` is one ``<step>``; ``program(...)`` assembles a file from
``{rank: [(send, recv, chan, [steps...]), ...]}``. The generators write well-known
algorithms (ring, all-pairs, ...) in MSCCLang's style; the tests break them on purpose.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["step", "nop", "program", "ring", "allpairs", "direct_alltoall"]

Step = dict
Threadblock = tuple  # (send, recv, chan, [Step, ...])


def _slot(text: str | None, default: tuple[str, int]) -> tuple[str, int]:
    return default if text is None else (text[0], int(text[1:]))


def step(kind: str, src: str | None = None, dst: str | None = None, cnt: int = 1, dep: tuple[int, int] = (-1, -1),
         hasdep: int = 0) -> Step:
    """One step; `src` and `dst` like ``"i3"`` (buffer letter and offset), defaults as ``ir_to_xml`` writes them."""
    if src is None and dst is not None and kind in ("s", "r", "rcs"):
        src = dst
    if dst is None and src is not None and kind in ("s", "rrs"):
        dst = src
    srcbuf, srcoff = _slot(src, ("i", -1))
    dstbuf, dstoff = _slot(dst, ("o", -1))
    return {"type": kind, "srcbuf": srcbuf, "srcoff": srcoff, "dstbuf": dstbuf, "dstoff": dstoff,
            "cnt": 0 if kind == "nop" else cnt, "depid": dep[0], "deps": dep[1], "hasdep": hasdep}


def nop(tb: int, s: int) -> Step:
    """A ``nop`` carrying one dependency on step `s` of thread block `tb`."""
    return step("nop", dep=(tb, s))


def program(gpus: dict[int, Sequence[Threadblock]], *, nchunks: int, coll: str = "allreduce", inplace: int = 1,
            outofplace: int | None = None, proto: str = "Simple", name: str = "test", nchannels: int | None = None,
            min_bytes: int = 0, max_bytes: int = 0, chunks: dict[int, tuple[int, int, int]] | None = None) -> str:
    """The XML text; `chunks` overrides a rank's ``(i_chunks, o_chunks, s_chunks)``."""
    used = [chan for tbs in gpus.values() for _, _, chan, _ in tbs]
    nchannels = nchannels if nchannels is not None else max(used, default=0) + 1
    outofplace = (1 - inplace) if outofplace is None else outofplace
    lines = [f'<algo name="{name}" proto="{proto}" nchannels="{nchannels}" nchunksperloop="{nchunks}" '
             f'ngpus="{len(gpus)}" coll="{coll}" inplace="{inplace}" outofplace="{outofplace}" '
             f'minBytes="{min_bytes}" maxBytes="{max_bytes}">']
    for rank in sorted(gpus):
        i_chunks, o_chunks, s_chunks = (chunks or {}).get(rank, (nchunks, nchunks, nchunks))
        lines.append(f'  <gpu id="{rank}" i_chunks="{i_chunks}" o_chunks="{o_chunks}" s_chunks="{s_chunks}">')
        for index, (send, recv, chan, steps) in enumerate(gpus[rank]):
            lines.append(f'    <tb id="{index}" send="{send}" recv="{recv}" chan="{chan}">')
            for s, entry in enumerate(steps):
                attrs = " ".join(f'{key}="{value}"' for key, value in entry.items())
                lines.append(f'      <step s="{s}" {attrs}/>')
            lines.append("    </tb>")
        lines.append("  </gpu>")
    lines.append("</algo>")
    return "\n".join(lines) + "\n"


def ring(nranks: int, order: Sequence[int] | None = None, *, chan: int = 0) -> dict[int, list[Threadblock]]:
    """MSCCLang's ring all-reduce (``s``, ``rrs``, ``rrcs``, ``rcs``, ``r``) over `order`, chunk ``i`` at position ``i``."""
    order = list(range(nranks)) if order is None else list(order)
    p = len(order)
    gpus = {}
    for i, rank in enumerate(order):
        plan = [("s", i)] + [("rrs", (i - s) % p) for s in range(1, p - 1)] + [("rrcs", (i + 1) % p)]
        plan += [("rcs", (i - j + 1) % p) for j in range(1, p - 1)] + [("r", (i + 2) % p)]
        steps = [step(kind, f"i{chunk}", f"i{chunk}") for kind, chunk in plan]
        gpus[rank] = [(order[(i + 1) % p], order[(i - 1) % p], chan, steps)]
    return gpus


def allpairs(nranks: int) -> dict[int, list[Threadblock]]:
    """All-pairs all-reduce: rank ``r`` owns chunk ``r``; peers' partial sums land in scratch, ``re`` adds them
    (``nop`` steps carry the extra dependencies), then the sum goes back to every peer."""
    gpus = {}
    for r in range(nranks):
        peers = [q for q in range(nranks) if q != r]
        tbs = []
        for j, q in enumerate(peers):
            tbs.append((q, q, 0, [
                step("s", f"i{q}", f"s{r if r < q else r - 1}"),
                step("r", f"i{r}", f"s{j}", hasdep=1),
                step("s", f"i{r}", f"i{r}", dep=(len(peers), 2 * len(peers) - 2)),
                step("r", f"i{q}", f"i{q}"),
            ]))
        reducer = [nop(j, 1) for j in range(len(peers) - 1)]
        for j in range(len(peers)):
            dep = (len(peers) - 1, 1) if j == 0 else (-1, -1)
            source = len(peers) - 1 if j == 0 else j - 1
            reducer.append(step("re", f"s{source}", f"i{r}", dep=dep, hasdep=int(j == len(peers) - 1)))
        tbs.append((-1, -1, 0, reducer))
        gpus[r] = tbs
    return gpus


def direct_alltoall(nranks: int, per_peer: int, *, self_copy: bool = True) -> dict[int, list[Threadblock]]:
    """Every rank sends its block for each peer straight to it; its own block it copies from i to o."""
    gpus = {}
    for r in range(nranks):
        tbs = [(q, q, 0, [step("s", f"i{q * per_peer}", f"o{r * per_peer}", cnt=per_peer),
                          step("r", f"i{r * per_peer}", f"o{q * per_peer}", cnt=per_peer)])
               for q in range(nranks) if q != r]
        if self_copy:
            tbs.append((-1, -1, 0, [step("cpy", f"i{r * per_peer}", f"o{r * per_peer}", cnt=per_peer)]))
        gpus[r] = tbs
    return gpus
