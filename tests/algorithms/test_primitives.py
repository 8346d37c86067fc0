"""The phases and the primitive collectives (the builder's rules are in test_builder.py)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnet.algorithms import ALGORITHMS, all_reduce
from simnet.algorithms.primitives import (
    all_gather,
    binomial_parents,
    broadcast,
    reduce,
    reduce_scatter,
)
from simnet.errors import ScheduleError
from simnet.schedule import check


def test_binomial_parents_form_the_mpich_tree():
    assert binomial_parents(8) == [None, 0, 0, 2, 0, 4, 4, 6]


@pytest.mark.parametrize("build", [reduce_scatter, all_gather])
@settings(max_examples=15, deadline=None)
@given(p=st.integers(2, 24), size=st.integers(1, 500), chunks=st.integers(1, 3))
def test_ring_primitives_compute_their_collective(build, p, size, chunks):
    schedule = build(p, size, chunks=chunks)
    assert len(schedule) == (p - 1) * p * chunks
    check(schedule, numeric=True)


@pytest.mark.parametrize("build", [broadcast, reduce])
@settings(max_examples=15, deadline=None)
@given(p=st.integers(2, 64), size=st.integers(1, 500), chunks=st.integers(1, 3), data=st.data())
def test_rooted_primitives_compute_their_collective(build, p, size, chunks, data):
    root = data.draw(st.integers(0, p - 1))
    schedule = build(p, size, root=root, chunks=chunks)
    assert schedule.root == root and len(schedule) == (p - 1) * chunks
    check(schedule, numeric=True)


def test_all_reduce_dispatches_by_name():
    assert all_reduce(4, 64, algorithm="halving_doubling").algorithm == "halving_doubling"
    with pytest.raises(ScheduleError) as error:
        all_reduce(4, 64, algorithm="broadcast")
    assert error.value.path == "algorithm"


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [({"nranks": 1}, "nranks"), ({"size_bytes": 0}, "size_bytes"), ({"chunks": 0}, "chunks"), ({"root": 4}, "root")],
)
def test_bad_arguments_name_the_parameter(kwargs, path):
    args = {"nranks": 4, "size_bytes": 64} | kwargs
    with pytest.raises(ScheduleError) as error:
        broadcast(args.pop("nranks"), args.pop("size_bytes"), **args)
    assert error.value.path == path


def test_registry_entries_describe_themselves():
    for name in ("ring", "blueconnect", "reduce_scatter", "all_gather", "broadcast", "reduce"):
        entry = ALGORITHMS[name]
        assert entry.ops and set(entry.ops) <= {"allreduce", "reduce_scatter", "all_gather", "broadcast", "reduce"}
        assert entry.description and entry.formula, name
        assert "chunks" in {p.name for p in entry.parameters}, name
    blue = {p.name: p for p in ALGORITHMS["blueconnect"].parameters}
    assert blue["factors"].default is None and "int" in blue["factors"].type
