"""Validation against published nccl-tests figures and the α-β closed forms (docs/validation.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from simnet.network import Network
from simnet.calibration import PUBLISHED, calibrated_cluster, calibrated_node
from tests.validation.tables import alpha_beta_table, markdown, published_table

INTRA_NODE_BOUND = 0.10
DOC = Path(__file__).resolve().parents[2] / "docs" / "validation.md"


@pytest.fixture(scope="module")
def published():
    return published_table()


def test_every_row_cites_its_source_and_the_figure(published):
    assert len(published) == len(PUBLISHED)
    for row in PUBLISHED:
        assert row.source.startswith(("NVIDIA/nccl-tests#", "NVIDIA/nccl#")) and row.quote
    assert published["source"].str.len().gt(0).all()


def test_intra_node_dgx_rows_are_within_ten_percent(published):
    intra = published[published["intra-node"]]
    assert set(intra["GPUs"]) == {8} and len(intra) >= 2
    assert intra["error"].abs().max() <= INTRA_NODE_BOUND, intra.to_string()


def test_calibrated_ports_are_nccl_effective_rates_times_datasheet_link_counts():
    """12 NVLink3 x 20 GB/s (A100), 18 NVLink4 x 20.6 GB/s (H100), 18 NVLink5 x 40.1 GB/s (B200, GB200):
    NVIDIA/nccl src/graph/topo.h SM80/SM90/SM100_NVLINK_BW; NICs at NET_BW 12 GB/s per 100 Gbit/s."""
    for kind, links, per_link, nic_Bps in (
        ("dgx_a100", 12, 20.0e9, 24e9), ("dgx_h100", 18, 20.6e9, 48e9), ("dgx_b200", 18, 40.1e9, 48e9),
        ("gb200_nvl72", 18, 40.1e9, 48e9),
    ):
        graph = calibrated_node(kind)
        assert graph.edges["gpu0", "nvswitch0"]["bandwidth_Bps"] == pytest.approx(links * per_link, rel=1e-12)
        assert graph.edges["gpu0", "nvswitch0"]["cables"] == links
        assert graph.nodes["nic0"]["port_bandwidth_Bps"] == pytest.approx(nic_Bps, rel=1e-12)


def test_calibrated_nvl72_racks_put_every_rail_on_its_own_leaf():
    graph = calibrated_cluster("gb200_nvl72", 2)
    assert all(graph.has_edge(f"n{h}.nic{j}", f"leaf{j}") for h in range(2) for j in range(72))
    assert Network(graph).route_bandwidth_Bps(3, 72 + 3) == pytest.approx(48e9, rel=1e-12)


def test_calibrated_cluster_sends_every_rail_through_its_own_nic():
    network = Network(calibrated_cluster("dgx_a100", 2, nic_share=0.5))
    for local in range(8):
        route = [network.links[i] for i in network.route(local, 8 + local)]
        assert (f"n0.gpu{local}", f"n0.pcie{local // 2}", 0) == route[0]
        assert [u for u, _, _ in route if "nic" in u] == [f"n0.nic{local}", f"n1.nic{local}"]


def test_simulation_equals_the_alpha_beta_closed_forms():
    table = alpha_beta_table()
    assert set(table["algorithm"]) == {"ring", "halving_doubling", "recursive_doubling"}
    assert table["max relative error"].max() <= 1e-9, table.to_string()


@pytest.mark.parametrize("table", [published_table, alpha_beta_table], ids=["published", "alpha_beta"])
def test_docs_show_the_tables_the_command_prints(table):
    """docs/validation.md must be refreshed with `python -m tests.validation.tables` when a number moves."""
    text = DOC.read_text(encoding="utf-8")
    missing = [line for line in markdown(table()).splitlines() if line not in text]
    assert not missing, "rows of docs/validation.md differ from the command's output:\n" + "\n".join(missing)
