import pytest
from hypothesis import given
from hypothesis import strategies as st

from simnet.errors import TopologyError
from simnet.topology import ring, switch


@given(st.integers(min_value=2, max_value=200))
def test_switch_counts_and_degrees(n):
    graph = switch(n, 12.5e9, 1e-6)
    assert graph.number_of_nodes() == n + 1
    assert graph.number_of_edges() == 2 * n
    assert graph.in_degree("switch") == graph.out_degree("switch") == n
    assert all(graph.in_degree(f"gpu{i}") == graph.out_degree(f"gpu{i}") == 1 for i in range(n))
    assert graph.graph["name"] == f"switch(hosts={n}, bandwidth=12.5 GB/s, latency=1 us)"


@given(st.integers(min_value=3, max_value=200))
def test_ring_is_two_regular(n):
    graph = ring(n, 25e9, 1e-6)
    assert graph.number_of_edges() == 2 * n
    assert all(graph.in_degree(v) == graph.out_degree(v) == 2 for v in graph)


def test_two_host_ring_has_a_single_cable():
    graph = ring(2, 25e9, 1e-6)
    assert graph.number_of_edges() == 2
    assert graph.edges["gpu0", "gpu1"]["bandwidth_Bps"] == 25e9
    assert graph.edges["gpu0", "gpu1"]["cables"] == 1


@pytest.mark.parametrize("builder", [switch, ring])
@pytest.mark.parametrize(
    ("args", "path"),
    [((1, 1e9, 0.0), "hosts"), ((2.5, 1e9, 0.0), "hosts"), ((4, 0.0, 0.0), "bandwidth_Bps"),
     ((4, -1e9, 0.0), "bandwidth_Bps"), ((4, float("inf"), 0.0), "bandwidth_Bps"), ((4, 1e9, -1.0), "latency_s")],
)
def test_builders_reject_bad_arguments_naming_them(builder, args, path):
    with pytest.raises(TopologyError) as raised:
        builder(*args)
    assert raised.value.path == path
