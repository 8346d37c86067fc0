"""NCCL_VERSIONS: every release 2.18.3-2.30.7, constants as in each release's tuning.cc (nccl_model.md §2, §3.9)."""

from __future__ import annotations

import pytest

from simnet.errors import SimnetError
from simnet.models.nccl import NCCL_VERSIONS, NcclVersion, nccl_version

TREE, RING, COLLNET_DIRECT, COLLNET_CHAIN, NVLS, NVLS_TREE, PAT = range(7)
LL, LL128, SIMPLE = range(3)
NVLINK, PCI, NET = range(3)


def test_releases_and_tags():
    assert list(NCCL_VERSIONS)[0] == "2.18.3" and list(NCCL_VERSIONS)[-1] == "2.30.7"
    assert len(NCCL_VERSIONS) == 30
    for release, version in NCCL_VERSIONS.items():
        assert version.release == release and version.tag == f"v{release}-1"
        assert version.source.startswith("NVIDIA/nccl v") and "tuning.cc" in version.source
    keys = [version.key for version in NCCL_VERSIONS.values()]
    assert keys == sorted(keys)


def test_constants_of_the_change_log():
    """Spot values of §3.9's table, one per release where a constant changed."""
    v = NCCL_VERSIONS
    assert v["2.18.6"].base_latency_us[NVLS][SIMPLE] == 23.0 and v["2.19.4"].base_latency_us[NVLS][SIMPLE] == 0
    assert v["2.18.6"].hw_latency_us[NVLINK][TREE][SIMPLE] == 4.0
    assert v["2.22.3"].hw_latency_us[NET][TREE][SIMPLE] == 28.0 and v["2.23.4"].hw_latency_us[NET][TREE][SIMPLE] == 14
    assert v["2.20.5"].hw_latency_us[NVLINK][NVLS][SIMPLE] == 23
    assert v["2.21.5"].hw_latency_us[NVLINK][NVLS][SIMPLE] == 25
    assert v["2.20.5"].ll_max_GBps[2] == (87.7, 22.5, 19.0) and v["2.21.5"].ll_max_GBps[2] == (141.0, 45.0, 35.0)
    assert v["2.28.7"].hw_latency_us[NET][NVLS_TREE][SIMPLE] == 14
    assert v["2.28.9"].hw_latency_us[NET][NVLS_TREE][SIMPLE] == 20.9
    assert [v[r].ring_ll128_GBps[3] for r in ("2.25.1", "2.28.7", "2.29.3", "2.29.7")] == [
        (73.4, 73.4, 73.4), (73.4, 34.6, 73.4), (34.5, 34.6, 34.5), (40.0, 40.0, 40.0)]
    assert [v[r].nvls_tree_GBps[3][2] for r in ("2.28.3", "2.28.9", "2.29.7", "2.30.7")] == [43.1, 43.8, 43.8, 80.0]
    assert v["2.27.7"].nvls_efficiency is None and v["2.28.3"].nvls_efficiency == (0.0, 0.0, 0.85, 0.74)
    assert v["2.28.3"].base_latency_us[PAT] == (8.0, 8.0, 8.0) and v["2.27.7"].base_latency_us[PAT] == (0, 0, 0)
    assert len(v["2.28.9"].tree_correction[0]) == 23 and len(v["2.29.2"].tree_correction[0]) == 24
    assert v["2.19.4"].nvlink_sm90_GBps == 20.0 and v["2.20.3"].nvlink_sm90_GBps == 20.6
    assert v["2.26.6"].nvlink_sm100_GBps == 40.0 and v["2.27.3"].nvlink_sm100_GBps == 40.1
    assert [v[r].n_algorithms for r in ("2.22.3", "2.23.4")] == [6, 7]
    assert [v[r].pat_factor for r in ("2.22.3", "2.23.4", "2.24.3")] == [None, 0.85, 0.75]


def test_formula_variants_change_where_the_notes_say():
    def releases(predicate):
        return [r for r, version in NCCL_VERSIONS.items() if predicate(version)]

    assert releases(lambda v: v.ring_ll_rule == "quarter")[-1] == "2.20.5"
    assert releases(lambda v: v.inter_steps_2n)[-1] == "2.22.3"
    assert releases(lambda v: v.ring_backup is not None) == ["2.19.1", "2.19.3", "2.19.4", "2.20.3", "2.20.5",
                                                             "2.21.5", "2.22.3", "2.23.4"]
    assert releases(lambda v: v.mnnvl_single_node) == ["2.20.3", "2.20.5"]
    assert releases(lambda v: v.per_function_enable)[0] == "2.24.3"
    assert releases(lambda v: v.nvls_model == "2.28")[0] == "2.28.3"
    assert releases(lambda v: v.collnet_chain_support_check) == ["2.30.7"]


def test_nccl_version_lookup():
    assert nccl_version("2.30.7") is NCCL_VERSIONS["2.30.7"]
    assert isinstance(nccl_version(NCCL_VERSIONS["2.22.3"]), NcclVersion)
    with pytest.raises(SimnetError, match="unknown NCCL release '2.17.1'") as error:
        nccl_version("2.17.1")
    assert error.value.path == "version"
