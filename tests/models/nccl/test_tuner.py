"""nccl_tuner.conf: rows written as NCCL's example plugin reads them, parsed strictly, matched first-wins."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet.errors import SimnetError
from simnet.models.nccl import (
    ALGORITHMS,
    FUNCTIONS,
    PROTOCOLS,
    TunerRow,
    parse_tuner_csv,
    tuner_lookup,
    tuner_rows_to_csv,
)

EXAMPLE_CONF = """\
# NCCL Tuner Configuration File (CSV Format)
# Format: collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff

# Small allreduce operations on single node - use tree algorithm, registered buffers
allreduce,0,65536,tree,simple,2,1,-1,-1,1
allreduce,65537,1048576,ring,simple,4,4,32,1,0
allreduce,1048577,4294967295,ring,ll128,-1,-1,-1,4,-1
allgather,0,4294967295,ring,simple,4,2,-1
reduce,0,4294967295,tree,simple,-1,-1,-1
"""
"""Lines of NVIDIA/nccl v2.30.7-1 plugins/tuner/example/nccl_tuner.conf (comments shortened)."""


def test_the_example_configuration_of_nccl_parses():
    rows = parse_tuner_csv(EXAMPLE_CONF)
    assert len(rows) == 5
    assert rows[0] == TunerRow("allreduce", 0, 65536, "tree", "simple", 2, 1, -1, -1, 1)
    assert rows[3] == TunerRow("all_gather", 0, 4294967295, "ring", "simple", 4, 2, -1)
    assert rows[3].num_pipe_ops is None and rows[4].channels == -1


def test_written_rows_are_the_plugin_format():
    rows = [TunerRow("all_gather", 0, 1 << 20, "nvls", "simple", 16, 1, 8),
            TunerRow("reduce_scatter", 1, 2, "pat", "simple", num_pipe_ops=-1, reg_buff=0)]
    text = tuner_rows_to_csv(rows, comments=["written by simnet", ""])
    assert text == ("# written by simnet\n#\nallgather,0,1048576,nvls,simple,16,1,8\n"
                    "reducescatter,1,2,pat,simple,-1,-1,-1,-1,0\n")
    assert parse_tuner_csv(text) == rows


@settings(max_examples=50, deadline=None)
@given(st.lists(st.builds(
    lambda c, lo, span, a, p, ch, nn, nr, pipe, reg: TunerRow(c, lo, lo + span, a, p, ch, nn, nr, pipe,
                                                              reg if pipe is not None else None),
    st.sampled_from(FUNCTIONS), st.integers(0, 1 << 40), st.integers(0, 1 << 40), st.sampled_from(ALGORITHMS),
    st.sampled_from(PROTOCOLS), st.sampled_from([-1, 1, 64]), st.sampled_from([-1, 1, 4]),
    st.sampled_from([-1, 8, 32]), st.sampled_from([None, -1, 1, 4]), st.sampled_from([-1, 0, 1]),
), max_size=8))
def test_round_trip(rows):
    assert parse_tuner_csv(tuner_rows_to_csv(rows)) == rows


@pytest.mark.parametrize(
    ("text", "path", "match"),
    [
        ("allreduce,0,1,ring,simple,-1,-1\n", "line 1", "7 fields"),
        ("allreduce,0,1,ring,simple,-1,-1,-1,1,0,9\n", "line 1", "11 fields"),
        ("AllReduce,0,1,ring,simple,-1,-1,-1\n", "line 1.collective_type", "unknown collective_type"),
        ("allreduce,0,1,Ring,simple,-1,-1,-1\n", "line 1.algorithm", "unknown algorithm"),
        ("allreduce,0,1,ring,ll64,-1,-1,-1\n", "line 1.protocol", "unknown protocol"),
        ("allreduce,0,1k,ring,simple,-1,-1,-1\n", "line 1.max_bytes", "decimal integer"),
        ("allreduce,9,1,ring,simple,-1,-1,-1\n", "line 1.max_bytes", "9.."),
        ("allreduce,0,1,ring,simple,0,-1,-1\n", "line 1.channels", "-1 or ≥ 1"),
        ("allreduce,0,1,ring,simple,-1,-2,-1\n", "line 1.n_nodes", "-1 or ≥ 1"),
        ("allreduce,0,1,ring,simple,-1,-1,-1,1,2\n", "line 1.reg_buff", "-1 or 0..1"),
        ("#ok\n" + "allreduce,0,1,ring,simple,-1,-1,-1" + " " * 250 + "\n", "line 2", "at most 254"),
    ],
)
def test_strict_parser_refusals(text, path, match):
    with pytest.raises(SimnetError, match=match) as error:
        parse_tuner_csv(text)
    assert error.value.path == path


def test_whitespace_and_empty_fields_as_strtok_reads_them():
    assert parse_tuner_csv(" allreduce , 0,,1 ,ring,\tsimple,-1,-1,-1\n")[0] == TunerRow("allreduce", 0, 1, "ring",
                                                                                           "simple")


def test_row_and_writer_refusals():
    with pytest.raises(SimnetError) as error:
        TunerRow("allreduce", 0, 1, "ring", "simple", reg_buff=1)
    assert error.value.path == "reg_buff"
    with pytest.raises(SimnetError) as error:
        TunerRow("allgather", 0, 1, "ring", "simple")
    assert error.value.path == "collective"
    with pytest.raises(SimnetError) as error:
        tuner_rows_to_csv(["allreduce,0,1,ring,simple,-1,-1,-1"])
    assert error.value.path == "rows[0]"
    with pytest.raises(SimnetError) as error:
        tuner_rows_to_csv([], comments=["two\nlines"])
    assert error.value.path == "comments[0]"


def test_lookup_is_first_match_with_wildcards():
    rows = parse_tuner_csv(EXAMPLE_CONF)
    assert tuner_lookup(rows, "allreduce", 100, n_nodes=1, n_ranks=8, reg_buff=1) is rows[0]
    assert tuner_lookup(rows, "allreduce", 100, n_nodes=1, n_ranks=8, reg_buff=0) is None
    assert tuner_lookup(rows, "allreduce", 1 << 20, n_nodes=4, n_ranks=32) is rows[1]
    assert tuner_lookup(rows, "allreduce", 1 << 21, n_nodes=2, n_ranks=16, num_pipe_ops=4) is rows[2]
    assert tuner_lookup(rows, "all_gather", 1, n_nodes=2, n_ranks=16, num_pipe_ops=7) is rows[3]
    assert tuner_lookup(rows, "allreduce", 100, n_nodes=1, n_ranks=8, reg_buff=1, ignored=[("tree", "simple")]) \
        is None
