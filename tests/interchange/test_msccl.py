import functools
import inspect
import json
import re
import shutil
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simnet
from simnet.algorithms import ALGORITHMS
from simnet.algorithms.hierarchy import hierarchy_factors
from simnet.cli import main
from simnet.engine import simulate
from simnet.errors import SimnetError
from simnet.interchange import msccl
from simnet.interchange.msccl import EXPORT_LIMITS, MscclDefect, MscclError, MscclUnsupported
from simnet.network import Network
from simnet.scenario import load_scenario, parse_scenario, run
from simnet.schedule import Schedule, Transfer, check
from simnet.topology import cluster, dgx_a100, switch, torus

from tests.interchange.programs import allpairs, direct_alltoall, nop, program, ring, step

FILES = Path(__file__).resolve().parent / "files"
HIERARCHICAL = FILES / "hierarchical_2x4.xml"


def locate(error: MscclError) -> str:
    """The ``gpu .., tb .., step ..`` part of a one-line error."""
    text = str(error)
    assert "\n" not in text
    return error.path


# ----------------------------------------------------------------------------------------------
# Reading: the runtime parser's dialect


@pytest.mark.parametrize(("edit", "expected"), [
    (lambda t: '<?xml version="1.0"?>\n' + t, "XML declaration"),
    (lambda t: t.replace("  <gpu", "\t<gpu", 1), "a tab between elements"),
    (lambda t: t.replace(' proto="Simple"', '\n proto="Simple"', 1), "line break inside the <algo> tag"),
    (lambda t: t.replace('nchannels="1"', "nchannels='1'", 1), "double quotes"),
    (lambda t: t.replace('<gpu id="1"', 'junk <gpu id="1"', 1), "text"),
    (lambda t: t.replace('ngpus="2"', 'ngpus="02"', 1), "octal"),
    (lambda t: t.replace(' hasdep="0"/>', "/>", 1), "no hasdep attribute"),
    (lambda t: t.replace('<step s="1"', '<step s="7"', 1), "s=7 but it is step 1"),
    (lambda t: t.replace('proto="Simple"', 'proto="simple"', 1), "proto='simple'"),
    (lambda t: t.replace('coll="allreduce"', 'coll="allreduces"', 1), "no MSCCL collective"),
    (lambda t: t.replace('<gpu id="1"', '<gpu id="3"', 1), "not a rank"),
    (lambda t: t.replace("</algo>", ""), "never closed"),
])
def test_the_reader_refuses_what_the_runtime_parser_refuses(edit, expected):
    text = program(ring(2), nchunks=2)
    msccl.reads(text)
    with pytest.raises(MscclDefect, match=re.escape(expected)) as caught:
        msccl.reads(edit(text))
    assert caught.value.kind == "format" and "\n" not in str(caught.value)


def test_comments_and_extra_attributes_are_ignored_and_missing_optional_attributes_default():
    text = program(ring(3), nchunks=3).replace('<algo name="test"', '<!-- a comment -->\n<algo redop="nop" name="test"')
    text = text.replace(' outofplace="0" minBytes="0" maxBytes="0"', "")
    text = text.replace("<tb ", '<copy i_off="0" o_off="0"/>\n    <tb ', 1)
    prog = msccl.reads(text)
    assert (prog.outofplace, prog.min_bytes, prog.max_bytes, prog.redop) == (False, 0, 0, "nop")
    assert prog.covers(1) and prog.covers(2**40)


def test_verify_prints_the_size_range_exactly_in_binary_units(tmp_path, capsys):
    """minBytes 2030 KiB and maxBytes 32 MiB - 1 (as Azure/msccl-scheduler's files have them) printed in one unit
    system that shows the boundary: not ``2.079 MB .. 33.55 MB``."""
    path = tmp_path / "ranged.xml"
    path.write_text(program(ring(2), nchunks=2, min_bytes=2030 * 2**10, max_bytes=2**25 - 1))
    assert main(["verify", "msccl", str(path)]) == 0
    assert "sizes 2030 KiB .. 32 MiB - 1 B)" in capsys.readouterr().out
    scenario = tmp_path / "ranged.yaml"
    scenario.write_text("name: ranged\ntopology: {builder: switch, hosts: 2, bandwidth: 25 GB/s, latency: 1 us}\n"
                        "collective: {op: allreduce, algorithms: [{msccl: ranged.xml}]}\nsizes: [1 MiB]\n")
    with pytest.raises(SimnetError, match=re.escape("is selected for 2030 KiB .. 32 MiB - 1 B (minBytes/maxBytes)")):
        load_scenario(scenario)


def test_size_range_is_inclusive_and_zero_max_is_unbounded():
    prog = msccl.reads(program(ring(2), nchunks=2, min_bytes=512, max_bytes=4096))
    assert [prog.covers(n) for n in (511, 512, 4096, 4097)] == [False, True, True, False]
    schedule = prog.schedule(8192)
    assert schedule.params["selected"] is False and schedule.params["proto"] == "Simple"


@pytest.mark.parametrize("proto, line_bytes, line_payload_bytes", [("LL", 16, 8), ("LL128", 128, 120)])
def test_ll_and_ll128_hops_carry_the_protocols_wire_bytes_and_local_steps_their_payload(proto, line_bytes,
                                                                                       line_payload_bytes):
    text = program(allpairs(4), nchunks=4)
    simple = msccl.loads(text, 4 * 1000 + 3)
    table = msccl.loads(text.replace('proto="Simple"', f'proto="{proto}"'), 4 * 1000 + 3).transfers
    hops = table.src != table.dst
    assert simple.transfers.wire_bytes is None and hops.any() and (~hops).any()
    assert np.array_equal(table.nbytes, simple.transfers.nbytes)
    lines = -(-table.nbytes[hops] // line_payload_bytes)
    assert np.array_equal(table.wire_bytes[hops], lines * line_bytes)
    assert np.array_equal(table.wire_bytes[~hops], table.nbytes[~hops])
    assert table.delay_s is None and table.channel is None


def ring_busbw_GBps(proto: str) -> float:
    """Bus bandwidth of MSCCLang's 8-GPU ring all-reduce with `proto` at 16 MiB on one DGX H100."""
    from simnet.analysis import busbw_factor
    from simnet.topology import dgx_h100

    size = 16 * 2**20
    trace = simulate(Network(dgx_h100()), msccl.loads(program(ring(8), nchunks=8, proto=proto), size))
    return size / trace.time_s * busbw_factor("allreduce", 8) / 1e9


def test_an_ll_program_stays_under_half_the_nvlink_rate_and_docs_quote_its_busbw():
    """LL moves 8 payload bytes per 16 on the wire: an LL ring cannot exceed half of DGX H100's 450 GB/s NVLink,
    while the same ring under Simple reaches 406 GB/s at 16 MiB; docs/interchange.md quotes the three."""
    busbw = {proto: ring_busbw_GBps(proto) for proto in msccl.PROTOCOLS}
    assert busbw["LL"] < 450 / 2 < busbw["LL128"] < min(busbw["Simple"], 450 * 120 / 128)
    doc = (Path(__file__).resolve().parents[2] / "docs" / "interchange.md").read_text()
    quoted = (f"busbw {busbw['Simple']:.1f} GB/s under `Simple`, {busbw['LL128']:.1f} under `LL128` and "
              f"{busbw['LL']:.1f} under `LL`")
    assert quoted in " ".join(doc.split())


# ----------------------------------------------------------------------------------------------
# Every step type, with the runtime's semantics


@pytest.mark.parametrize("nranks", [2, 3, 5, 8])
def test_mscclang_ring_is_simnets_ring_bit_for_bit(nranks):
    """s, rrs, rrcs, rcs, r: the fused ring reduces in place and forwards, one transfer per hop."""
    schedule = msccl.loads(program(ring(nranks), nchunks=nranks), nranks * 3000)
    check(schedule, numeric=True)
    assert {t.src_buffer for t in schedule.transfers} == {"work"} and len(schedule) == 2 * nranks * (nranks - 1)
    net = Network(switch(nranks, 12.5e9, 1e-6))
    reference = simnet.algorithms.ring_allreduce(nranks, nranks * 3000)
    for options in ({}, {"overhead_s": 1e-6, "gamma_s_per_byte": 1e-10}):
        assert simulate(net, schedule, **options).time_s == simulate(net, reference, **options).time_s


def test_allpairs_with_scratch_nop_and_re():
    schedule = msccl.loads(program(allpairs(4), nchunks=4), 4096)
    check(schedule, numeric=True)
    scratch = {t.dst_buffer for t in schedule.transfers if t.dst_buffer.startswith("scratch")}
    assert len(scratch) == 3, "three partial sums of one chunk live at once on a rank"
    reductions = [t for t in schedule.transfers if t.stage == "re"]
    assert len(reductions) == 12 and all(t.src == t.dst and t.op == "reduce" for t in reductions)


def test_out_of_place_copy_and_receive_reduce_copy():
    """cpy into o, then rrc o <- o + received; and rrc o <- i + received (lands in o, then a local addition)."""
    copied = {r: [(-1, -1, 0, [step("cpy", "i0", "o0", cnt=2, hasdep=1)]),
                  (1 - r, 1 - r, 0, [step("s", "i0", "o0", cnt=2), step("rrc", "o0", "o0", cnt=2, dep=(0, 0))])]
              for r in (0, 1)}
    direct = {r: [(1 - r, 1 - r, 0, [step("s", "i0", "o0", cnt=2), step("rrc", "i0", "o0", cnt=2)])] for r in (0, 1)}
    for gpus, local in ((copied, "cpy"), (direct, "rrc add")):
        prog = msccl.reads(program(gpus, nchunks=2, inplace=0))
        schedule = prog.schedule(64)
        check(schedule, numeric=True)
        assert schedule.params["inplace"] is False
        assert [t.stage for t in schedule.transfers].count(local) == 2
        assert {t.src_buffer for t in schedule.transfers if t.src != t.dst} == {"input"}
        with pytest.raises(MscclError, match="no in-place form"):
            prog.schedule(64, inplace=True)


def tree_root(ordered: bool) -> dict:
    """Rank 0 adds its children's data in two rrc steps of two thread blocks (the second waiting for the first
    when `ordered`), then sends the sum down."""
    second = step("rrc", "i0", "i0", dep=(0, 0) if ordered else (-1, -1), hasdep=1)
    return {0: [(-1, 1, 0, [step("rrc", "i0", "i0", hasdep=1)]), (-1, 2, 0, [second]),
                (1, -1, 0, [nop(0, 0), step("s", "i0", dep=(1, 0))]),
                (2, -1, 0, [nop(0, 0), step("s", "i0", dep=(1, 0))])],
            1: [(0, 0, 0, [step("s", "i0"), step("r", dst="i0")])],
            2: [(0, 0, 0, [step("s", "i0"), step("r", dst="i0")])]}


def test_receive_reduce_copies_into_one_slot_are_ordered():
    """An rrc is a load, an add and a store by its thread block, with nothing atomic: two into one slot that
    nothing orders lose a sum on the runtimes (msccl-tools orders them, ``InstructionDAG._write``), so they are
    a race; ordered by a dependency, the tree is right."""
    check(msccl.loads(program(tree_root(ordered=True), nchunks=1), 100), numeric=True)
    with pytest.raises(MscclDefect, match=re.escape("gpu 0, tb 1, step 0: adds into i[0] while gpu 0, tb 0, step 0 "
                                                    "may still add into it")) as caught:
        msccl.loads(program(tree_root(ordered=False), nchunks=1), 100)
    assert caught.value.kind == "race"


def ring_gather(nranks: int, inplace: bool) -> dict:
    """Ring all-gather: rank r forwards chunk (r - s) mod p; out of place it first copies its input to o."""
    gpus = {}
    for r in range(nranks):
        steps = [step("s", f"o{r}" if inplace else "i0", f"o{r}")]
        steps += [step("rcs", dst=f"o{(r - s) % nranks}") for s in range(1, nranks - 1)]
        steps += [step("r", dst=f"o{(r + 1) % nranks}")]
        tbs = [((r + 1) % nranks, (r - 1) % nranks, 0, steps)]
        if not inplace:
            tbs.append((-1, -1, 0, [step("cpy", "i0", f"o{r}")]))
        gpus[r] = tbs
    return gpus


def ring_scatter(nranks: int) -> dict:
    """Ring reduce-scatter in place: rank r ends with chunk r summed."""
    gpus = {}
    for r in range(nranks):
        steps = [step("s", f"i{(r + 1) % nranks}")]
        steps += [step("rrs", f"i{(r + 1 + s) % nranks}") for s in range(1, nranks - 1)]
        steps += [step("rrc", f"i{r}", f"i{r}")]
        gpus[r] = [((r - 1) % nranks, (r + 1) % nranks, 0, steps)]
    return gpus


@pytest.mark.parametrize("inplace", [True, False])
def test_allgather_layouts(inplace):
    text = program(ring_gather(4, inplace), nchunks=4, coll="allgather", inplace=int(inplace),
                   chunks={r: (1, 4, 0) for r in range(4)})
    schedule = msccl.loads(text, 4096)
    assert schedule.collective == "all_gather" and schedule.owners == (0, 1, 2, 3)
    check(schedule, numeric=True)


@pytest.mark.parametrize("coll", ["reducescatter", "reduce_scatter"])
def test_reduce_scatter_in_both_spellings(coll):
    text = program(ring_scatter(4), nchunks=4, coll=coll, chunks={r: (4, 1, 0) for r in range(4)})
    schedule = msccl.loads(text, 4096)
    assert schedule.collective == "reduce_scatter"
    check(schedule, numeric=True)


def test_broadcast_and_reduce_take_their_root():
    cast = {0: [(-1, 1, 0, [step("r", dst="i0")])], 1: [(0, -1, 0, [step("s", "i0")])]}
    schedule = msccl.loads(program(cast, nchunks=1, coll="broadcast"), 8, root=1)
    assert schedule.root == 1
    check(schedule, numeric=True)
    with pytest.raises(MscclDefect, match="reads i\\[0\\], which holds nothing yet"):
        msccl.loads(program(cast, nchunks=1, coll="broadcast"), 8, root=0)
    gather = {0: [(-1, 1, 0, [step("rrc", "i0", "i0")])], 1: [(0, -1, 0, [step("s", "i0")])]}
    check(msccl.loads(program(gather, nchunks=1, coll="reduce"), 8), numeric=True)


def test_chunk_sizes_follow_the_collective_size():
    schedule = msccl.loads(program(ring(4), nchunks=4), 4 * 1000 + 2)
    assert schedule.chunk_bytes == (1001, 1001, 1000, 1000)
    assert schedule.size_bytes == 4002
    assert sorted(set(schedule.transfers.nbytes.tolist())) == [1000, 1001]


# ----------------------------------------------------------------------------------------------
# Defects: one line naming the file, GPU, thread block and step


def two_ranks(tb0, tb1, **options) -> str:
    return program({0: tb0, 1: tb1}, nchunks=options.pop("nchunks", 1), **options)


EXCHANGE = [(0, 0, 0, [step("s", "i0"), step("rrc", "i0", "i0")])]
"""Rank 1's side of an exchange with rank 0."""

DEFECTS = {
    "deadlock": (two_ranks([(1, 1, 0, [step("r", dst="s0"), step("s", "i0")])],
                           [(0, 0, 0, [step("r", dst="s0"), step("s", "i0")])]), "deadlock", "gpu 0, tb 0, step 0"),
    "never signalled": (two_ranks([(1, 1, 0, [step("s", "i0"), step("rrc", "i0", "i0")]),
                                   (-1, -1, 0, [step("cpy", "i0", "s0", dep=(0, 0))])],
                                  [(0, 0, 0, [step("s", "i0"), step("rrc", "i0", "i0")])]),
                        "deadlock", "gpu 0, tb 1, step 0"),
    "unmatched send": (two_ranks([(1, 1, 0, [step("s", "i0"), step("s", "i0"), step("rrc", "i0", "i0")])],
                                 [(0, 0, 0, [step("s", "i0"), step("rrc", "i0", "i0")])]),
                       "unmatched", "gpu 0, tb 0, step 1"),
    "unmatched receive": (two_ranks([(-1, 1, 0, [step("r", dst="s0")])], [(-1, -1, 0, [step("cpy", "i0", "s0")])]),
                          "unmatched", "gpu 0, tb 0, step 0"),
    "count mismatch": (two_ranks([(1, 1, 0, [step("s", "i0", cnt=2), step("rrc", "i0", "i0", cnt=2)])],
                                 [(0, 0, 0, [step("s", "i0"), step("rrc", "i0", "i0", cnt=2)])], nchunks=2),
                       "unmatched", "gpu 1, tb 0, step 0"),
    "overflow": (two_ranks([(1, 1, 0, [step("s", "i0", cnt=2), step("rrc", "i0", "i0", cnt=2)])], EXCHANGE,
                           chunks={0: (1, 1, 1), 1: (1, 1, 1)}), "overflow", "gpu 0, tb 0, step 0"),
    "count limit": (two_ranks([(1, 1, 0, [step("s", "i0", cnt=72), step("rrc", "i0", "i0")])], EXCHANGE),
                    "limit", "gpu 0, tb 0, step 0"),
    "channel": (two_ranks([(1, 1, 1, [step("s", "i0"), step("rrc", "i0", "i0")])], EXCHANGE, nchannels=1),
                "limit", "gpu 0, tb 0"),
    "shared connection": (two_ranks([(1, -1, 0, [step("s", "i0")]), (1, 1, 0, [step("rrc", "i0", "i0")])], EXCHANGE),
                          "limit", "gpu 0"),
    "no send peer": (two_ranks([(-1, 1, 0, [step("s", "i0"), step("rrc", "i0", "i0")])], EXCHANGE),
                     "format", "gpu 0, tb 0, step 0"),
    "empty read": (two_ranks([(1, 1, 0, [step("s", "s0"), step("rrc", "i0", "i0")])], EXCHANGE), "wrong result",
                   "gpu 0, tb 0, step 0"),
    "missing contribution": (two_ranks([(1, 1, 0, [step("s", "i0"), step("r", dst="s0")])], EXCHANGE),
                             "wrong result", "gpu 0"),
    "double counting": (two_ranks([(1, 1, 0, [step("s", "i0"), step("rrc", "i0", "i0", hasdep=1)]),
                                   (-1, -1, 0, [step("re", "i0", "i0", dep=(0, 1))])],
                                  EXCHANGE, chunks={0: (1, 1, 1), 1: (1, 1, 1)}),
                        "wrong result", "gpu 0, tb 1, step 0"),
    "race": (two_ranks([(1, -1, 0, [step("s", "i0")]), (-1, 1, 0, [step("rrc", "i0", "i0")])], EXCHANGE),
             "race", "gpu 0, tb 1, step 0"),
    "input written out of place": (two_ranks([(1, 1, 0, [step("s", "i0"), step("rrc", "i0", "i0")])], EXCHANGE,
                                             inplace=0, outofplace=1), "wrong result", "gpu 0, tb 0, step 1"),
}


@pytest.mark.parametrize("name", list(DEFECTS))
def test_defects_are_one_line_with_file_gpu_thread_block_and_step(name, tmp_path):
    text, kind, where = DEFECTS[name]
    path = tmp_path / f"{name.replace(' ', '_')}.xml"
    path.write_text(text)
    with pytest.raises(MscclDefect) as caught:
        msccl.load(path, 1024)
    assert caught.value.kind == kind
    assert locate(caught.value) == where
    assert str(caught.value).startswith(f"{path}: {where}: ")


def test_a_correct_exchange_passes_and_is_simnets_pairwise_exchange():
    schedule = msccl.loads(two_ranks([(1, 1, 0, [step("s", "i0"), step("rrc", "i0", "i0")])], EXCHANGE), 1024)
    assert len(schedule) == 2 and all(t.deps == () for t in schedule.transfers)
    check(schedule, numeric=True)


def test_alltoall_blocks_land_where_simnet_wants_them():
    text = program(direct_alltoall(4, 2), nchunks=8, coll="alltoall", inplace=0)
    schedule = msccl.loads(text, 8 * 1024)
    assert schedule.collective == "alltoall" and len(schedule.chunk_bytes) == 32
    assert schedule.owners[9] == 1 and schedule.targets[9] == 0
    check(schedule, numeric=True)
    assert schedule.size_bytes == 8 * 1024 and sum(schedule.chunk_bytes) == 4 * 8 * 1024
    copyless = program(direct_alltoall(4, 2, self_copy=False), nchunks=8, coll="alltoall", inplace=0)
    with pytest.raises(MscclDefect, match=re.escape("o[0] ends with nothing, expected chunk 0 of rank 0")):
        msccl.loads(copyless, 8 * 1024)


def test_a_collective_simnet_lacks_is_unsupported():
    gpus = {r: [(1 - r, 1 - r, 0, [step("s", f"i{1 - r}"), step("r", dst=f"o{1 - r}")]),
                (-1, -1, 0, [step("cpy", f"i{r}", f"o{r}")])] for r in (0, 1)}
    with pytest.raises(MscclUnsupported, match="custom") as caught:
        msccl.loads(program(gpus, nchunks=2, coll="custom", inplace=0), 1024)
    assert caught.value.kind == "collective"


def rotation(landing: str) -> str:
    """All-reduce on 3 ranks by rotating copies around a ring: each rank sends what its scratch slot holds and
    receives the previous rank's into `landing`, twice, adding what arrives."""
    gpus = {}
    for r in range(3):
        ring_tb = [step("s", "s0", dep=(1, 0)), step("r", dst=landing, hasdep=1), step("s", landing),
                   step("r", dst="s2", dep=(1, 1), hasdep=1)]
        local = [step("cpy", "i0", "s0", hasdep=1), step("re", landing, "i0", dep=(0, 1), hasdep=1),
                 step("re", "s2", "i0", dep=(0, 3))]
        gpus[r] = [((r + 1) % 3, (r - 1) % 3, 0, ring_tb), (-1, -1, 0, local)]
    return program(gpus, nchunks=1, chunks={r: (1, 1, 3) for r in range(3)})


def test_a_rotation_that_needs_the_connection_buffers_is_unsupported():
    """Received into the slot it has just sent from, the data must wait in the connection FIFO until the send
    has read it; the three ranks' transfers, which write on arrival, would wait for each other."""
    check(msccl.loads(rotation("s1"), 64), numeric=True)
    with pytest.raises(MscclUnsupported, match="connection FIFO") as caught:
        msccl.loads(rotation("s0"), 64)
    assert caught.value.kind == "buffering" and caught.value.path.startswith("gpu ")


# ----------------------------------------------------------------------------------------------
# Laws


@settings(max_examples=25, deadline=None)
@given(st.permutations(range(6)), st.integers(2, 6), st.integers(1, 3))
def test_imported_rings_pass_check_for_every_rank_order(order, nranks, rings):
    """Several ring channels over rank orders (the forward ring and its reverse): every import passes check()."""
    members = [r for r in order if r < nranks]
    gpus: dict = {r: [] for r in range(nranks)}
    nchunks = nranks * rings
    for k in range(rings):
        ordering = members if k % 2 == 0 else members[::-1]
        for rank, tbs in ring(nranks, ordering, chan=k).items():
            for send, recv, chan, steps in tbs:
                for entry in steps:
                    for side in ("src", "dst"):
                        if entry[f"{side}off"] >= 0:
                            entry[f"{side}off"] += k * nranks
                gpus[rank].append((send, recv, chan, steps))
    schedule = msccl.loads(program(gpus, nchunks=nchunks), nchunks * 16)
    check(schedule, numeric=True)
    again = msccl.loads(program(gpus, nchunks=nchunks), nchunks * 16)
    assert again.transfers == schedule.transfers


NETWORKS = {
    "switch": lambda: Network(switch(8, 12.5e9, 1e-6)),
    "cluster": lambda: Network(cluster("abci_node", 2, fabric_params={"bandwidth_Bps": 12.5e9, "latency_s": 1e-6})),
    "torus": lambda: Network(torus((2, 4), 12.5e9, 1e-6)),
    "dgx_a100": lambda: Network(dgx_a100()),
}
EXPORTED = [name for name, record in ALGORITHMS.items()
            if record.payload == "dense" and set(record.ops) & {"allreduce", "all_gather", "reduce_scatter"}]


SERVED_IN_FILE_ORDER = {("nccl_ring_reduce_scatter", "cluster"), ("nccl_ring_all_gather", "cluster")}
"""Exports whose per-transfer times may change on import: the two channel rings both cross GPU 2 -> 3 of each
server (each ring leaves its server from the GPU that shares the NIC of its entry rail), so two transfers are
ready on that connection at once, and an MSCCL file has no global order (the import takes its
canonical one, :func:`simnet.interchange.msccl._canonical_order`), which serves the other first. The makespan
is the same up to rounding."""


@functools.cache
def network(name: str) -> Network:
    return NETWORKS[name]()


def built(name: str, net: Network, size: int, **params) -> Schedule:
    """`name` built on `net` as a scenario builds it; `params` only where the builder takes them."""
    record = ALGORITHMS[name]
    signature = inspect.signature(record.builder).parameters.values()
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature):
        params = {key: value for key, value in params.items() if key in {p.name for p in record.parameters}}
    derived = record.defaults(functools.partial(hierarchy_factors, net.graph)) if record.defaults else {}
    params = derived | params
    if record.resolve is not None:
        params = record.resolve(net, size, params)
    return record.build(net.size, size, **params)


def program_only(schedule: Schedule) -> Schedule:
    """`schedule` without the NCCL family's latencies and connections, which are simnet's model of NCCL's runtime
    and not part of an MSCCL program; the wire bytes of LL and LL128 stay, as the file's ``proto`` carries them."""
    table = schedule.transfers
    wire = table.wire_bytes if schedule.params.get("protocol") in ("ll", "ll128") else None
    return schedule.replace(transfers=table.replace(wire_bytes=wire, delay_s=None, channel=None))

SPLIT_ON_EXPORT = {"nccl_pat_all_gather", "nccl_pat_reduce_scatter"}
"""Exports whose messages carry chunks that no one buffer layout keeps contiguous: PAT aggregates the blocks of
ranks ``x - h`` for every rank ``x`` (NCCL packs them in its intermediate buffer). An MSCCL step moves one run of
consecutive chunks, so each such message becomes one step per run; the program computes the same collective with
the same bytes, in more messages."""


@pytest.mark.parametrize("topology", ["switch", "cluster", "dgx_a100"])
@pytest.mark.parametrize("name", EXPORTED)
def test_export_round_trips_simulate_to_the_identical_time(name, topology):
    net = network(topology)
    size = net.size * 2 * 3 * 2**12
    try:
        schedule = program_only(built(name, net, size, chunks=2, channels=2))
    except simnet.errors.SimnetError as error:
        pytest.skip(f"{name} does not run on {topology}: {error.message}")
    if schedule.switches:
        with pytest.raises(MscclError, match="switch endpoints"):
            msccl.dumps(schedule)
        return
    back = msccl.loads(msccl.dumps(schedule), size)
    if name in SPLIT_ON_EXPORT:
        check(back)
        assert len(back) > len(schedule) and back.transfers.nbytes.sum() == schedule.transfers.nbytes.sum()
        return
    assert back.collective == schedule.collective and len(back) == len(schedule)
    for options in ({}, {"overhead_s": 2e-6, "gamma_s_per_byte": 1e-10}):
        original, imported = simulate(net, schedule, **options), simulate(net, back, **options)
        if (name, topology) in SERVED_IN_FILE_ORDER:
            assert imported.time_s == pytest.approx(original.time_s, rel=1e-12)
            continue
        assert imported.time_s == original.time_s
        assert np.array_equal(np.sort(imported.end_s), np.sort(original.end_s))


def test_round_trips_hold_on_a_torus_under_maxmin():
    net = network("torus")
    for name in ("ring", "recursive_doubling", "halving_doubling", "double_binary_tree"):
        schedule = built(name, net, 8 * 2**12, chunks=2)
        back = msccl.loads(msccl.dumps(schedule), 8 * 2**12)
        assert simulate(net, back).time_s == simulate(net, schedule).time_s


def test_exports_respect_the_limits_and_ir_to_xml_layout():
    schedule = built("blueconnect", network("cluster"), 2**20, chunks=2)
    text = msccl.dumps(schedule, proto="LL128", name="bc")
    assert text == msccl.dumps(schedule, proto="LL128", name="bc")
    assert text.startswith('<algo name="bc" proto="LL128" nchannels="') and text.endswith("</algo>\n")
    assert "\t" not in text and "<?xml" not in text
    for line in text.splitlines():
        depth = {"<algo": 0, "</algo": 0, "<gpu": 2, "</gpu": 2, "<tb": 4, "</tb": 4, "<step": 6}
        tag = re.match(r"\s*(</?\w+)", line).group(1)
        assert line.startswith(" " * depth[tag] + tag)
    msccl.reads(text, limits=EXPORT_LIMITS)
    published = set(re.findall(r'hasdep="1"', text))
    assert published == {'hasdep="1"'}
    depended, flagged = set(), set()
    for gpu in re.split(r"<gpu ", text)[1:]:
        rank = int(re.match(r'id="(\d+)"', gpu).group(1))
        for tb in re.split(r"<tb ", gpu)[1:]:
            tb_id = int(re.match(r'id="(\d+)"', tb).group(1))
            for s, depid, deps, hasdep in re.findall(r'<step s="(\d+)".*?depid="(-?\d+)" deps="(-?\d+)" '
                                                      r'hasdep="(\d)"', tb):
                if hasdep == "1":
                    flagged.add((rank, tb_id, int(s)))
                if depid != "-1":
                    depended.add((rank, int(depid), int(deps)))
    assert flagged == depended, "hasdep=1 exactly on the steps some step waits for"


def test_an_export_beyond_the_channel_limit_is_refused_or_serialized():
    net = Network(switch(8, 12.5e9, 1e-6))
    schedule = simnet.algorithms.ring_allreduce(8, 2**20, chunks=8)
    narrow = msccl.Limits(max_steps=64, max_threadblocks=128, max_channels=4)
    with pytest.raises(MscclError, match="need .* channels .* more than 4") as caught:
        msccl.dumps(schedule, limits=narrow)
    assert caught.value.kind == "export"
    text = msccl.dumps(schedule, limits=narrow, exact=False)
    back = msccl.reads(text, limits=narrow).schedule(2**20)
    assert simulate(net, back).time_s >= simulate(net, schedule).time_s


@pytest.mark.parametrize("limits,most", [((64, 16, 4), 2), ((16, 12, 8), 2), ((64, 8, 2), 1)])
def test_a_serialized_export_within_thread_block_limits_reads_back_to_the_same_collective(limits, most):
    """Halving-doubling on 16 ranks with 4 chunks needs more thread blocks than these limits allow: serialized, the
    file keeps to every limit (thread blocks per GPU and per channel, channels, steps), computes the all-reduce,
    and keeps the most channels that fit (`most`: what trying every chain count in turn finds, as it did before
    tries that surely fail were skipped)."""
    steps, blocks, channels = limits
    narrow = msccl.Limits(max_steps=steps, max_threadblocks=blocks, max_channels=channels)
    schedule = ALGORITHMS["halving_doubling"].build(16, 2**20, chunks=4)
    with pytest.raises(MscclError):
        msccl.dumps(schedule, limits=narrow)
    text = msccl.dumps(schedule, limits=narrow, exact=False)
    assert int(re.search(r'nchannels="(\d+)"', text).group(1)) == most <= channels
    for gpu in re.split(r"<gpu ", text)[1:]:
        blocks_here = re.split(r"<tb ", gpu)[1:]
        assert len(blocks_here) <= blocks
        assert all(len(re.findall(r"<step ", tb)) <= steps for tb in blocks_here)
    back = msccl.reads(text, limits=narrow).schedule(2**20)
    check(back)


def test_what_msccl_cannot_express_is_refused():
    with pytest.raises(MscclError, match="allreduce, all_gather, reduce_scatter"):
        msccl.dumps(simnet.algorithms.broadcast(4, 1024))
    unrelated = Schedule("allreduce", 4, (8,), [Transfer(2, 3, (0,), 8, "reduce"), Transfer(3, 2, (0,), 8, "copy", (0,)),
                                                Transfer(0, 1, (0,), 8, "reduce", (0,)),
                                                Transfer(1, 0, (0,), 8, "copy", (2,))])
    with pytest.raises(MscclError, match="involves neither rank"):
        msccl.dumps(unrelated)
    with pytest.raises(MscclError, match="name"):
        msccl.dumps(simnet.algorithms.ring_allreduce(4, 1024), name='a"b')


# ----------------------------------------------------------------------------------------------
# Scenarios and the command line


def scenario_dir(tmp_path: Path, algorithms: str, sizes: str = "[1 KiB, 1 MiB]") -> Path:
    shutil.copy(HIERARCHICAL, tmp_path / HIERARCHICAL.name)
    path = tmp_path / "compare.yaml"
    path.write_text(
        "name: hierarchical_vs_blueconnect\n"
        "topology: {builder: cluster, node: abci_node, nodes: 2, fabric: switch,\n"
        "           fabric_params: {bandwidth: 100 Gbps, latency: 1 us}}\n"
        f"collective: {{op: allreduce, algorithms: {algorithms}}}\n"
        f"sizes: {sizes}\n")
    return path


def test_the_nccl_comparison_note_names_an_ll_import_and_what_it_pays(tmp_path, capsys):
    """An LL program beats NCCL's ring/LL at 32 KiB on a DGX H100 only by NCCL's latencies, which it does not pay:
    the note under the comparison says so, and the program's row pays the LL wire bytes at 16 MiB."""
    from simnet.analysis import NCCL_COMPARISON_NOTE, NCCL_LATENCY_NOTE

    (tmp_path / "ring_ll.xml").write_text(program(ring(8), nchunks=8, proto="LL", name="ring_ll"))
    path = tmp_path / "ll.yaml"
    path.write_text("name: ll\ntopology: {file: dgx_h100}\n"
                    "collective: {op: allreduce, algorithms: [{msccl: ring_ll.xml}, {name: nccl_ring, protocol: ll}]}\n"
                    "sizes: [32 KiB, 16 MiB]\n")
    assert main(["run", str(path), "-o", str(tmp_path / "out"), "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert f"{NCCL_COMPARISON_NOTE} {NCCL_LATENCY_NOTE}" in out.splitlines()
    assert "imported MSCCL programs" in NCCL_COMPARISON_NOTE and "LL or LL128 wire bytes" in NCCL_COMPARISON_NOTE
    rows = json.loads((tmp_path / "out" / "results.json").read_text())
    busbw = {(row["algorithm"], row["size_bytes"]): row["busbw_GBps"] for row in rows}
    assert busbw["msccl:ring_ll", 16 * 2**20] < 450 / 2


def test_scenarios_run_msccl_files_beside_registered_algorithms(tmp_path):
    path = scenario_dir(tmp_path, f"[{{msccl: {HIERARCHICAL.name}}}, blueconnect]")
    results = run(load_scenario(path))
    assert set(results["algorithm"]) == {"msccl:hierarchical_2x4", "blueconnect"}
    imported = results[results["algorithm"] == "msccl:hierarchical_2x4"]
    assert imported["params"].tolist() == ['{"msccl": "hierarchical_2x4.xml", "proto": "Simple"}'] * 2
    assert imported["resolved"].tolist() == ["", ""], "a file chooses nothing per size"
    assert imported["model_time_s"].isna().all() and (imported["sim_over_critical_path"] >= 1 - 1e-12).all()


@pytest.mark.parametrize(("entry", "message"), [
    ("{msccl: missing.xml}", "file not found"),
    ("{msccl: hierarchical_2x4.xml, chunks: 2}", "unknown key of an msccl entry 'chunks'"),
    ("{msccl: hierarchical_2x4.xml, root: 9}", "must be a rank in [0, 8)"),
])
def test_scenario_msccl_entries_are_validated_with_key_paths(tmp_path, entry, message):
    with pytest.raises(simnet.errors.ScenarioError, match=re.escape(message)) as caught:
        load_scenario(scenario_dir(tmp_path, f"[{entry}]"))
    assert caught.value.path.startswith("collective.algorithms[0]")


def test_scenario_sizes_outside_the_files_range_are_refused_unless_ignored(tmp_path):
    with pytest.raises(simnet.errors.ScenarioError, match="128 MiB is outside"):
        load_scenario(scenario_dir(tmp_path, f"[{{msccl: {HIERARCHICAL.name}}}]", "[1 MiB, 128 MiB]"))
    ignored = scenario_dir(tmp_path, f"[{{msccl: {HIERARCHICAL.name}, range: ignore}}]", "[1 MiB, 128 MiB]")
    assert len(run(load_scenario(ignored))) == 2


def test_scenario_msccl_files_must_fit_the_topology_and_the_collective(tmp_path):
    data = {"name": "x", "topology": {"builder": "switch", "hosts": 4, "bandwidth": "10 GB/s", "latency": "1 us"},
            "collective": {"op": "allreduce", "algorithms": [{"msccl": str(HIERARCHICAL)}]}, "sizes": ["1 MiB"]}
    with pytest.raises(simnet.errors.ScenarioError, match="ngpus=8 ranks, the topology has 4"):
        parse_scenario(data)
    data["topology"]["hosts"] = 8
    data["collective"]["op"] = "all_gather"
    with pytest.raises(simnet.errors.ScenarioError, match="computes allreduce"):
        parse_scenario(data)


def test_compare_puts_an_imported_hierarchical_allreduce_beside_blueconnect(tmp_path, capsys):
    path = scenario_dir(tmp_path, f"[{{msccl: {HIERARCHICAL.name}}}, blueconnect]")
    assert main(["compare", str(path), "--baseline", "blueconnect"]) == 0
    out = capsys.readouterr().out
    table = out.split('## Speedup over blueconnect {"factors": [2, 2, 2]}\n')[1].split("##")[0]
    header = table.strip().splitlines()[0]
    assert "msccl:hierarchical_2x4" in header and "blueconnect" in header


def test_cli_export_then_verify(tmp_path, capsys):
    path = scenario_dir(tmp_path, "[blueconnect, ring]")
    out = tmp_path / "bc.xml"
    assert main(["export", "msccl", str(path), "--algorithm", "blueconnect", "--size", "1MiB", "--out", str(out)]) == 0
    assert "blueconnect on 8 ranks" in capsys.readouterr().err
    assert main(["verify", "msccl", str(out)]) == 0
    assert "allreduce on 8 GPUs" in capsys.readouterr().out
    schedule = built("blueconnect", Network(load_scenario(path).built_network().graph), 2**20)
    assert msccl.load(out, 2**20).total_bytes == schedule.total_bytes
    assert main(["export", "msccl", str(path), "--algorithm", "nope", "--out", str(out)]) == 2
    assert "--algorithm: the scenario lists no algorithm 'nope'" in capsys.readouterr().err


def test_cli_export_takes_a_bare_msccl_only_when_the_scenario_lists_one_file(tmp_path, capsys):
    path = scenario_dir(tmp_path, f"[{{msccl: {HIERARCHICAL.name}}}, blueconnect]")
    out = tmp_path / "again.xml"
    assert main(["export", "msccl", str(path), "--algorithm", "msccl", "--out", str(out)]) == 0
    assert "msccl:hierarchical_2x4 on 8 ranks" in capsys.readouterr().err
    assert msccl.read(out).name == "hierarchical_2x4"
    (tmp_path / "ring8.xml").write_text(program(ring(8), nchunks=8, name="ring8"))
    path = scenario_dir(tmp_path, f"[{{msccl: {HIERARCHICAL.name}}}, {{msccl: ring8.xml}}]")
    assert main(["export", "msccl", str(path), "--algorithm", "msccl:ring8", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["export", "msccl", str(path), "--algorithm", "msccl", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--algorithm: 'msccl' is ambiguous: the scenario lists 2 MSCCL files; name one " \
        "as result rows do: msccl:hierarchical_2x4 (hierarchical_2x4.xml), msccl:ring8 (ring8.xml)" in err


def test_cli_verify_reports_a_defect_in_one_line_with_exit_code_2(tmp_path, capsys):
    path = tmp_path / "deadlock.xml"
    path.write_text(DEFECTS["deadlock"][0])
    assert main(["verify", "msccl", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: gpu 0, tb 0, step 0: deadlock") and err.count("\n") == 1


_FRAGMENTS = ['<algo', '<gpu', '<tb', '<step', ' ', '  ', 'id="0"', 'id="1"', 's="2 = 3"', 'a="<b/>"', 'x="\n"',
              '"', '=', '/>', '>', '/', '</algo>', '</gpu>', '</tb>', '\n', '\r', '\t', '<!-- c -->', 'z', '<', '<?x?>',
              *(f'k{i}="{i}"' for i in range(17))]


def _elements(elements) -> list:
    return [(e.tag, list(e.attrs.items()), e.line, _elements(e.children)) for e in elements]


def _read(text: str) -> object:
    try:
        return _elements(msccl._document(text, "f.xml"))
    except MscclDefect as error:
        return str(error)


_SEPARATORS = st.sampled_from([" ", " ", " ", "  ", "\t", "\n", ""])
_ATTRIBUTES = st.lists(st.tuples(_SEPARATORS, st.sampled_from([f'k{i}="{i}"' for i in range(17)] + ['s="1 = 2"'])),
                       max_size=18)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=40),
       st.lists(st.tuples(st.sampled_from(["<gpu", "<tb", "<step", "</gpu>"]), _ATTRIBUTES, _SEPARATORS,
                          st.sampled_from(["/>", ">", "/"])), max_size=8))
def test_the_readers_whole_tag_match_reads_every_text_as_its_step_by_step_checks_do(loose, tags):
    """Tags the reader matches whole are read as its character-by-character checks read them, and any other
    text falls to those checks: elements, attributes, lines and errors are the same with the match disabled."""
    texts = ["".join(loose), "\n".join(name + "".join(map("".join, attributes)) + gap + end
                                       for name, attributes, gap, end in tags)]
    fast = [_read(text) for text in texts]
    with mock.patch.object(msccl, "_TAG", re.compile("(?!)")):
        assert [_read(text) for text in texts] == fast


def test_compare_takes_an_imported_program_as_its_baseline(tmp_path, capsys):
    """An msccl entry's results are named msccl:<name>, and --baseline takes that name."""
    path = scenario_dir(tmp_path, f"[{{msccl: {HIERARCHICAL.name}}}, blueconnect]")
    assert main(["compare", str(path), "--baseline", "msccl:hierarchical_2x4", "-q"]) == 0
    assert "speedups over msccl:hierarchical_2x4" in capsys.readouterr().out


def test_the_documented_way_to_run_a_python_built_schedule_in_a_scenario_works(tmp_path, monkeypatch, capsys):
    """docs/algorithms.md's example: a schedule built with simnet.ScheduleBuilder, checked and dumped as MSCCL,
    runs in a scenario beside simnet's `ring`, at every size, in the ring's time (the same algorithm)."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "algorithms.md").read_text()
    section = doc.split("## Running a schedule you built in Python", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    scenario = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "docs/algorithms.md", "exec"), {})
    (tmp_path / "mine.yaml").write_text(scenario)
    assert main(["run", "mine.yaml", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    times = {(row["algorithm"], row["size_bytes"]): row["sim_time_s"] for row in rows}
    assert {algorithm for algorithm, _ in times} == {"msccl:my_ring", "ring"}
    for size in (2**20, 2**26):
        assert times["msccl:my_ring", size] == pytest.approx(times["ring", size], rel=1e-12)
