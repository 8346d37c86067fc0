"""Fuzzing the loaders: whatever the input, only simnet's documented error type escapes."""

import copy

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simnet.errors import SimnetError
from simnet.scenario import expand, parse_scenario
from simnet.topology import dumps, loads, switch

from tests.test_scenario import QUICKSTART

KEYS = ["name", "topology", "collective", "sizes", "network", "sweep", "builder", "hosts", "bandwidth",
        "latency", "op", "algorithms", "chunks", "model", "grid", "points", "file", "nodes", "links", "from",
        "to", "tier", "kind", "cables", "k", "dims", "overhead", "stragglers", "tier_efficiency"]
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["1 KiB", "100 Gbps", "1 us", "-3 MiB", "nan GB/s", "1e999 B", "ring", "switch", "fifo",
                     "maxmin", "gpu", "gpu0", "sw", "dgx1", "80%", "1/0", "", "µs", "\x00", "a.b.c"]),
    st.text(max_size=12),
)
DATA = st.recursive(
    SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=6)), children,
                                               max_size=5)),
    max_leaves=20,
)
FUZZ = settings(max_examples=int(__import__("os").environ.get("SIMNET_FUZZ_EXAMPLES", "150")), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def leaves(data, path=()):
    if isinstance(data, dict):
        for key, value in data.items():
            yield from leaves(value, (*path, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from leaves(value, (*path, index))
    yield path


def replaced(data, path, value):
    data = copy.deepcopy(data)
    if not path:
        return value
    target = data
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return data


def only_simnet_errors(call):
    try:
        call()
    except SimnetError as error:
        assert str(error) and "\n" not in str(error)


@FUZZ
@given(DATA)
def test_scenario_loader_on_arbitrary_data(data):
    only_simnet_errors(lambda: expand(parse_scenario(data)))


@FUZZ
@given(st.data())
def test_scenario_loader_on_mutated_quickstart(draw):
    paths = list(leaves(QUICKSTART))
    path = draw.draw(st.sampled_from(paths))
    mutated = replaced(QUICKSTART, path, draw.draw(DATA))
    only_simnet_errors(lambda: expand(parse_scenario(mutated)))


@FUZZ
@given(st.text(max_size=200))
def test_topology_loader_on_arbitrary_text(text):
    only_simnet_errors(lambda: loads(text))


@FUZZ
@given(st.data())
def test_topology_loader_on_mutated_explicit_file(draw):
    graph = switch(3, 25e9, 1e-6)
    graph.graph.pop("builder")
    spec = yaml.safe_load(dumps(graph))
    path = draw.draw(st.sampled_from(list(leaves(spec))))
    mutated = replaced(spec, path, draw.draw(DATA))
    only_simnet_errors(lambda: loads(yaml.safe_dump(mutated)))
