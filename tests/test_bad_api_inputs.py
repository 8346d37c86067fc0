"""Bad arguments to the Python API: a SimnetError naming the argument, what it got and what it expected."""

import pytest

import simnet
from simnet.algorithms import ALGORITHMS, ring_allreduce
from simnet.errors import SimnetError, UnknownName
from simnet.models import predict
from simnet.topology import switch

GRAPH = switch(8, 12.5e9, 1e-6)
NETWORK = simnet.Network(GRAPH)
SCHEDULE = ring_allreduce(8, 2**20)

CASES = {
    "graph for network": (lambda: simnet.simulate(GRAPH, SCHEDULE),
                          r"^network: expected a simnet\.Network, got a DiGraph; make one of a topology graph with "
                          r"simnet\.Network\(graph\)$"),
    "swapped arguments": (lambda: simnet.simulate(SCHEDULE, NETWORK),
                          r"^network: expected a simnet\.Network, got a Schedule$"),
    "check of a network": (lambda: simnet.check(NETWORK), r"^schedule: expected a simnet\.Schedule, got a Network$"),
    "size as text": (lambda: predict("ring", NETWORK, 8, "1 MiB"),
                     r"^size_bytes: must be a whole number of bytes ≥ 0 \(simnet\.units\.parse_size\('1 MiB'\) "
                     r"converts a unit string\), got '1 MiB'$"),
    "negative size": (lambda: predict("ring", NETWORK, 8, -5), r"^size_bytes: .* got -5$"),
    "fractional size": (lambda: predict("ring", NETWORK, 8, 1.5), r"^size_bytes: .* got 1\.5$"),
    "one rank": (lambda: predict("ring", NETWORK, 1, 2**20),
                 r"^nranks: must be an integer from 2 to the network's 8 ranks, got 1$"),
    "bandwidth as text": (lambda: switch(8, "100 Gbps", 1e-6),
                          r"^bandwidth_Bps: must be a finite bandwidth > 0 in bytes/s "
                          r"\(simnet\.units\.parse_bandwidth\('100 Gbps'\) converts a unit string\), got '100 Gbps'$"),
    "latency as text": (lambda: switch(8, 12.5e9, "1 us"), r"^latency_s: .*parse_time\('1 us'\).* got '1 us'$"),
    "misspelt algorithm": (lambda: ALGORITHMS["rign"], r"^algorithm: unknown algorithm 'rign'; did you mean 'ring'\?"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_argument_names_itself(case):
    call, message = CASES[case]
    with pytest.raises(SimnetError, match=message):
        call()


def test_an_unknown_algorithm_is_still_a_key_error_for_mapping_code():
    with pytest.raises(KeyError):
        ALGORITHMS["rign"]
    assert issubclass(UnknownName, KeyError)
    assert ALGORITHMS.get("rign") is None and "rign" not in ALGORITHMS
