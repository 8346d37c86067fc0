"""NcclGraph, NcclGraphs, NcclSystem, NcclEnv: plain records that refuse bad values, naming the field."""

from __future__ import annotations

import pytest

from simnet.errors import SimnetError
from simnet.models.nccl import NcclEnv, NcclGraph, NcclGraphs, NcclSystem


@pytest.mark.parametrize(
    ("build", "path"),
    [
        (lambda: NcclGraph(pattern="mesh"), "pattern"),
        (lambda: NcclGraph(n_channels=-1), "n_channels"),
        (lambda: NcclGraph(bw_intra_GBps=float("nan")), "bw_intra_GBps"),
        (lambda: NcclGraph(type_inter="pix"), "type_inter"),
        (lambda: NcclGraph(same_channels=1), "same_channels"),
        (lambda: NcclGraph(cross_nic=True), "cross_nic"),
        (lambda: NcclGraphs(ring="ring"), "ring"),
        (lambda: NcclSystem(n_ranks=0, n_nodes=1, min_compcap=90), "n_ranks"),
        (lambda: NcclSystem(n_ranks=4, n_nodes=8, min_compcap=90), "n_nodes"),
        (lambda: NcclSystem(n_ranks=4, n_nodes=1, min_compcap=90, max_compcap=80), "max_compcap"),
        (lambda: NcclSystem(n_ranks=4, n_nodes=1, min_compcap=90, cpu_vendor="Intel"), "cpu_vendor"),
        (lambda: NcclSystem(n_ranks=4, n_nodes=1, min_compcap=90, n_channels=0), "n_channels"),
        (lambda: NcclSystem(n_ranks=4, n_nodes=1, min_compcap=90, mnnvl="no"), "mnnvl"),
        (lambda: NcclEnv(algo=["ring"]), "algo"),
        (lambda: NcclEnv(nthreads="256"), "nthreads"),
        (lambda: NcclEnv(pat_enable=3), "pat_enable"),
    ],
)
def test_bad_fields_are_refused_by_name(build, path):
    with pytest.raises(SimnetError) as error:
        build()
    assert error.value.path == path
    assert "\n" not in str(error.value)


def test_defaults():
    system = NcclSystem(n_ranks=16, n_nodes=2, min_compcap=90)
    assert (system.max_compcap, system.max_local_ranks, system.cpu_vendor) == (90, 8, "intel")
    graphs = NcclGraphs()
    assert graphs.of_algorithm(6) is graphs.tree and graphs.of_algorithm(5) is graphs.nvls
    assert graphs.nvls.n_channels == 0 and graphs.tree.pattern == "balanced_tree"
