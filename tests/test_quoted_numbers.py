"""Every number that README.md, docs/*.md and the comments of scenarios/*.yaml quote from simnet, computed again.

A claim is a snippet exactly as the file has it, the number it quotes (a part of the snippet), a
function that computes that number fresh, and a formatter that writes it as the text does.
``test_the_text_has_the_snippet`` fails when the text is edited, ``test_the_quoted_number_is_computed``
when the code moves the number. A doc that changes a number changes its snippet here, in the same
commit.

The conclusions of ``notebooks/02_sparse_vs_dense_abci.ipynb`` (its last markdown cell) and the line
docs/validation.md gives them are claims too, computed by running the notebook's code cells here.

Not claims: inputs (hardware figures with their source, the units of syntax examples, the sizes a
scenario asks for), defaults and tolerances that the tests of the code pin (``tune``'s 1.5, the 1 % and
25 % bounds the algorithm tests assert), and docs/performance.md, whose measurements of the simulator's
own speed live there with their command and run. docs/validation.md, docs/nccl.md and docs/interchange.md
are outside this module.

Computations are shared (``functools.cache``): the shipped scenarios, the sparse study's schedules
(built once per GPU count and density, simulated under both link models), the all-to-all runs.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import json
import math
import re
import statistics
import tempfile
import textwrap
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import networkx as nx
import pytest
import yaml

from simnet.algorithms import ALGORITHMS, ring_allreduce
from simnet.algorithms.alltoall import direct_alltoall
from simnet.algorithms.hierarchical import torus_2d_allreduce
from simnet.algorithms.hierarchy import hierarchy_factors
from simnet.algorithms.sparse import fill_in
from simnet.analysis import busbw_factor
from simnet.engine import simulate
from simnet.errors import SimnetError
from simnet.jobs import communicators
from simnet.network import Network
from simnet.scenario import load_scenario, parse_scenario, run
from simnet.smpi import as_mpi
from simnet.testing import KEY_COLUMNS, Golden
from simnet.topology import build, describe, dgx_a100, fat_tree, find, gpus, leaf_spine, load, torus
from simnet.units import format_size, parse_count_range, parse_fraction_range, parse_size_range
from tests.validation.test_simgrid import CLUSTERS, SHUFFLED, cluster_network

ROOT = Path(__file__).resolve().parents[1]
MIB = 2**20
WORDS = "zero one two three four five six seven eight nine ten eleven twelve".split()


@dataclass(frozen=True)
class Claim:
    path: str
    snippet: str
    quoted: str
    compute: Callable[[], Any]
    fmt: Callable[[Any], str] = str


def claims(path: str, snippet: str, *numbers: tuple) -> list[Claim]:
    """One claim per `(quoted, compute, fmt)` of `snippet` (fmt defaults to ``str``)."""
    return [Claim(path, snippet, *number) for number in numbers]


@functools.cache
def text(path: str) -> str:
    return (ROOT / path).read_text(encoding="utf-8")


# -- formatters ---------------------------------------------------------------------------------------


def ms(digits: int) -> Callable[[float], str]:
    return lambda seconds: f"{seconds * 1e3:.{digits}f}"


def fixed(digits: int) -> Callable[[float], str]:
    return lambda value: f"{value:.{digits}f}"


def span(digits: int, scale: float = 1.0, last_digits: int | None = None) -> Callable[[tuple], str]:
    """``low-high`` of a (low, high) pair, times `scale`."""
    last = digits if last_digits is None else last_digits
    return lambda pair: f"{pair[0] * scale:.{digits}f}-{pair[1] * scale:.{last}f}"


def words(count: int) -> str:
    return WORDS[count]


def power_of_ten_bound(value: float) -> str:
    """The least power of ten at or above `value` (``1e-15`` for 2.2e-16)."""
    return "exact" if value == 0 else f"1e{math.ceil(math.log10(value))}"


def percent_bound(value: float) -> str:
    return f"{math.ceil(value * 100)} %"


def identity(text_: str) -> str:
    return text_


# -- shipped scenarios --------------------------------------------------------------------------------


@functools.cache
def scenario_rows(name: str):
    return run(load_scenario(ROOT / "scenarios" / f"{name}.yaml"))


def row(name: str, algorithm: str, size_bytes: int, **params) -> dict:
    """The one result row of `algorithm` at `size_bytes` whose params include `params`."""
    frame = scenario_rows(name)
    found = [r for r in frame.to_dict(orient="records")
             if r["algorithm"] == algorithm and r["size_bytes"] == size_bytes
             and params.items() <= json.loads(r["params"]).items()]
    assert len(found) == 1, (name, algorithm, size_bytes, params, len(found))
    return found[0]


def sim_s(name: str, algorithm: str, size_bytes: int, **params) -> float:
    return row(name, algorithm, size_bytes, **params)["sim_time_s"]


def default_factors(name: str, algorithm: str) -> list[int]:
    """The factors `algorithm` derives from the topology of scenario `name` when it is given none."""
    graph = load_scenario(ROOT / "scenarios" / f"{name}.yaml").built_network().graph
    return list(ALGORITHMS[algorithm].defaults(functools.partial(hierarchy_factors, graph))["factors"])


def blueconnect_dgx_speedup() -> float:
    return sim_s("blueconnect_dgx", "ring", 64 * MIB) / sim_s("blueconnect_dgx", "blueconnect", 64 * MIB,
                                                              factors=[4, 2, 4])


def blueconnect_dgx_hierarchical_span() -> tuple[float, float]:
    times = [sim_s("blueconnect_dgx", "blueconnect", 64 * MIB, factors=f) for f in ([4, 2, 4], [8, 4])]
    times.append(sim_s("blueconnect_dgx", "halving_doubling", 64 * MIB))
    return min(times), max(times)


def blueconnect_dgx_model_error() -> float:
    frame = scenario_rows("blueconnect_dgx")
    return float((frame["sim_time_s"] / frame["model_time_s"] - 1).abs().max())


def pipelined_blueconnect_sim_over_model() -> float:
    """``blueconnect [8, 4]`` with 8 chunks on four calibrated DGX H100 at 256 MiB: simulated over modelled."""
    data = {"name": "pipelined", "topology": {"builder": "calibrated_cluster", "kind": "dgx_h100", "nodes": 4,
                                              "pxn": True},
            "collective": {"op": "allreduce", "algorithms": [{"name": "blueconnect", "factors": [8, 4], "chunks": 8}]},
            "sizes": ["256 MiB"]}
    (record,) = run(parse_scenario(data)).to_dict(orient="records")
    return record["sim_time_s"] / record["model_time_s"]


def torus_2d_column_hops() -> int:
    network = load_scenario(ROOT / "scenarios" / "torus_2d.yaml").built_network()
    x = json.loads(row("torus_2d", "torus_2d", MIB)["params"])["factors"][0]
    return len(network.route(0, x))


# -- README -------------------------------------------------------------------------------------------


@functools.cache
def cli_output(*argv: str) -> str:
    from simnet.cli import main

    out = io.StringIO()
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(out):
        assert main(list(argv)) == 0
    return out.getvalue()


@functools.cache
def readme_python_output() -> list[str]:
    """What the README's Python example prints, run as it stands in the README."""
    block = re.search(r"## Python\n\n```python\n(.*?)```", text("README.md"), re.S).group(1)
    out = io.StringIO()
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(out):
        exec(compile(block, "README.md", "exec"), {})
    return out.getvalue().splitlines()


def size_range(spec: str) -> str:
    sizes = [format_size(s) for s in parse_size_range(spec)]
    return f"{sizes[0]}, {sizes[1]}, … {sizes[-2]}, {sizes[-1]}"


# -- docs/testing.md ----------------------------------------------------------------------------------


@functools.cache
def golden_failure(network_key: str, value: str) -> str:
    """The message of a golden check of quickstart after `network.<network_key>: <value>`, indented as in the doc."""
    data = yaml.safe_load(text("scenarios/quickstart.yaml"))
    data["network"][network_key] = value
    with tempfile.TemporaryDirectory() as directory:
        golden = Path(directory) / "golden"
        Golden(golden, update=True).check("quickstart", scenario_rows("quickstart"))
        with pytest.raises(pytest.fail.Exception) as failure:
            Golden(golden).check("quickstart", run(parse_scenario(data)))
        message = str(failure.value.msg).replace(f"{golden}/", "golden/")
    return textwrap.indent(message, "   ")


# -- docs/algorithms.md: all-to-all busbw -------------------------------------------------------------

BANDWIDTH_Bps, LATENCY_S, BLOCK_BYTES = 12.5e9, 1e-6, 8 * MIB


ECMP_SEEDS = range(8)
"""The hash seeds over which docs/algorithms.md states ECMP's figures: each seed is one draw of the hash."""
ECMP_COUNTS = (8, 16, 32, 64)


@functools.cache
def fat_tree_network(routing: str, hash_seed: int = 0) -> Network:
    return Network(fat_tree(8, BANDWIDTH_Bps, LATENCY_S), routing=routing, hash_seed=hash_seed)


@functools.cache
def alltoall_busbw_fraction(routing: str, nranks: int, window: int = 1, hash_seed: int = 0) -> float:
    """busbw of `direct` all-to-all over the injection bandwidth, as tests/algorithms/test_alltoall.py runs it."""
    size = nranks * BLOCK_BYTES
    time_s = simulate(fat_tree_network(routing, hash_seed), direct_alltoall(nranks, size, window=window)).time_s
    return size / time_s * busbw_factor("alltoall", nranks) / BANDWIDTH_Bps


def busbw_span(routing: str, counts, full_window: bool = False) -> tuple[float, float]:
    fractions = [alltoall_busbw_fraction(routing, p, p - 1 if full_window else 1) for p in counts]
    return min(fractions), max(fractions)


def ecmp_busbw(full_window: bool) -> dict[int, list[float]]:
    """busbw fractions of `direct` under ``ecmp_hash`` per rank count of ECMP_COUNTS, one per seed of ECMP_SEEDS."""
    return {p: [alltoall_busbw_fraction("ecmp_hash", p, p - 1 if full_window else 1, seed) for seed in ECMP_SEEDS]
            for p in ECMP_COUNTS}


def ecmp_busbw_span(full_window: bool) -> tuple[float, float]:
    fractions = [f for per_seed in ecmp_busbw(full_window).values() for f in per_seed]
    return min(fractions), max(fractions)


def ecmp_busbw_medians(full_window: bool) -> list[float]:
    return [statistics.median(per_seed) for per_seed in ecmp_busbw(full_window).values()]


def percents(values) -> str:
    return ", ".join(f"{value * 100:.1f}" for value in values)


def most_flows_on_a_link(routing: str, counts, hash_seed: int = 0) -> int:
    """The most routes one link carries in any shift i -> i + s of the pairwise exchange."""
    network = fat_tree_network(routing, hash_seed)
    return max(max(Counter(link for i in range(p) for link in network.route(i, (i + s) % p)).values())
               for p in counts for s in range(1, p))


def ecmp_most_flows_span(counts) -> tuple[int, int]:
    """The least and the most, over ECMP_SEEDS, of :func:`most_flows_on_a_link` under ``ecmp_hash``."""
    most = [most_flows_on_a_link("ecmp_hash", counts, seed) for seed in ECMP_SEEDS]
    return min(most), max(most)


# -- docs/fidelity.md ---------------------------------------------------------------------------------

SMPI_BANDWIDTH_Bps = 12.5e9


def plain_ring_gain(size_bytes: int) -> float:
    """How much earlier simnet's own ring ends than as_mpi's on the exported oversubscribed leaf-spine."""
    network = Network(leaf_spine(4, 2, 4, SMPI_BANDWIDTH_Bps, LATENCY_S, oversubscription=2.0))
    schedule = ALGORITHMS["ring"].build(network.size, size_bytes)
    return 1 - simulate(network, schedule).time_s / simulate(network, as_mpi(schedule)).time_s


@functools.cache
def shuffled_halving_doubling_s(mpi: bool) -> float:
    graph = leaf_spine(4, 2, 4, SMPI_BANDWIDTH_Bps, LATENCY_S)
    ranks = gpus(graph)
    network = Network(graph, routing="ecmp_hash", ranks=[ranks[i] for i in SHUFFLED[16]])
    schedule = ALGORITHMS["halving_doubling"].build(network.size, 64 * MIB)
    return simulate(network, as_mpi(schedule) if mpi else schedule, sharing="rtt_weighted").time_s


def shuffled_torus_ring_s(bandwidth_factor: float) -> float:
    assert CLUSTERS["torus_4x4x4"]().graph["params"]["bandwidth_Bps"] == SMPI_BANDWIDTH_Bps
    graph = torus([4, 4, 4], SMPI_BANDWIDTH_Bps * bandwidth_factor, LATENCY_S, gpu_routers=True)
    schedule = as_mpi(ALGORITHMS["ring"].build(64, 4 * MIB))
    return simulate(cluster_network(graph, "shuffled"), schedule, sharing="rtt_weighted").time_s


# -- docs/sparse.md -----------------------------------------------------------------------------------


@functools.cache
def sparse_study():
    spec = importlib.util.spec_from_file_location("sparse_study", ROOT / "benchmarks" / "sparse_study.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def sparse_schedules(count: int, density: str) -> dict:
    return sparse_study().schedules(count, sparse_study().payload("16M", density))


@functools.cache
def sparse_network(count: int) -> Network:
    return sparse_study().abci_network(count)


@functools.cache
def sparse_times(count: int, density: str, model: str) -> dict[str, float]:
    return sparse_study().simulated(sparse_network(count), sparse_schedules(count, density), model)


def sparse_row(count: int, density: str, model: str = "fifo") -> str:
    study = sparse_study()
    return study.row(sparse_network(count), study.payload("16M", density), "16M", density,
                     sparse_times(count, density, model), model)


FIFO_ROWS = [(16, "1/128"), (16, "1/512"), (32, "1/512"), (64, "1/512")]
MAXMIN_ROWS = [(16, "1/128"), (64, "1/512")]


def sparse_margins(over: str) -> tuple[float, float]:
    """The fastest exact algorithm's lead over the next one (`over="next"`) or the best dense all-reduce
    `simnet tune` finds (`over="dense"`), per FIFO row."""
    study = sparse_study()
    leads = []
    for count, density in FIFO_ROWS:
        times = sparse_times(count, density, "fifo")
        ranked = sorted(study.EXACT, key=times.get)
        over_s = (times[ranked[1]] if over == "next"
                  else study.best_dense(count, study.payload("16M", density).size_bytes, "fifo")[1])
        leads.append(over_s / times[ranked[0]])
    return min(leads), max(leads)


@functools.cache
def sparse_crossover_row(count: int) -> str:
    return sparse_study().crossover_row(count, "16M", "maxmin")


def sparse_crossover(count: int) -> str:
    """The density `sparse_ring_ring` on `count` GPUs meets the best dense all-reduce at (N = 16M), as ``1/n``."""
    return sparse_crossover_row(count).split(" | ")[3].split(" ")[0]


def sparse_runners_up() -> list[tuple[str, str]]:
    """The distinct (second, third) fastest exact algorithms over the FIFO rows."""
    exact = sparse_study().EXACT
    ranked = [sorted(exact, key=sparse_times(count, density, "fifo").get) for count, density in FIFO_ROWS]
    return sorted({(r[1], r[2]) for r in ranked})


def split_allgather_over_model(rows: list, model: str) -> list[float]:
    """Simulated over modelled time of the two split all-gathers in `rows` under link `model`."""
    from simnet.models import predict

    study = sparse_study()
    ratios = []
    for count, density in rows:
        sparse = study.payload("16M", density)
        for name in ("ssar_split_allgather", "dsar_split_allgather"):
            modelled = predict(name, sparse_network(count), count, sparse.size_bytes, payload=sparse)
            ratios.append(sparse_times(count, density, model)[name] / modelled)
    return ratios


def fill_in_row(stage: str, merged: int) -> str:
    """One row of the fill-in table of sparse_ring_ring at 16 ranks, 16M, 1/128; ``a/b_c`` names two stages."""
    table = fill_in(sparse_schedules(16, "1/128")["sparse_ring_ring"]).set_index(["stage", "merged"])
    if "/" in stage:
        prefixes, suffix = stage.split("_", 1)
        stages = [f"{prefix}_{suffix}" for prefix in prefixes.split("/")]
    else:
        stages = [stage]
    cells = {(round(table.loc[(s, merged), "measured"], 6), round(table.loc[(s, merged), "expected"], 6))
             for s in stages}
    return " ".join(f"| {stage} | {merged} | {m:.6f} | {e:.6f} |" for m, e in sorted(cells))


def abci_scenario_matches_the_study(count: int, dimension: str, density: str) -> str:
    """The case of scenarios/sparse_study/abci_16.yaml on which every simulated time is the study's (its ring,
    one channel per HCA, the ring of two channels; the study's reference ring has one)."""
    data = yaml.safe_load(text(f"scenarios/sparse_study/abci_{count}.yaml"))
    data["payload"] |= {"dimension": dimension, "density": density}
    frame = run(parse_scenario(data))
    scenario = dict(zip(frame["algorithm"], frame["sim_time_s"]))
    study = sparse_times(count, density, "fifo") | {"ring": simulate(
        sparse_network(count), ALGORITHMS["ring"].build(count, int(frame["size_bytes"].iloc[0]), channels=2),
        model="fifo").time_s}
    same = len(frame) == len(study) and all(scenario[name] == time_s for name, time_s in study.items())
    return f"{count} GPUs, N = {dimension}, d = {density}" if same else f"differs: {scenario} vs {study}"


def sparse_doc_python_output() -> str:
    """What docs/sparse.md's Python block prints, run as it stands in the doc."""
    (block,) = re.findall(r"```python\n(.*?)```", text("docs/sparse.md"), re.S)
    out = io.StringIO()
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(out):
        exec(compile(block, "docs/sparse.md", "exec"), {})
    return out.getvalue().strip()


def sparse_doc_yaml_topology_size() -> str:
    """The GPUs of the topology docs/sparse.md writes in YAML, if scenarios/sparse_study/abci_16.yaml has it."""
    doc = " ".join(text("docs/sparse.md").split())
    written = yaml.safe_load(re.search(r"\(`(topology: \{builder: cluster.*?)`\)", doc).group(1))["topology"]
    assert written == yaml.safe_load(text("scenarios/sparse_study/abci_16.yaml"))["topology"]
    return str(Network(build(written)).size)


def sparse_quick_effective_busbw_GBps(algorithm: str, density: float) -> float:
    """The dense-equivalent busbw of `algorithm` at `density` in scenarios/sparse_quick.yaml."""
    found = [r["effective_busbw_GBps"] for r in scenario_rows("sparse_quick").to_dict(orient="records")
             if r["algorithm"] == algorithm and json.loads(r["params"])["payload"]["density"] == density]
    assert len(found) == 1, found
    return found[0]


# -- notebooks/02_sparse_vs_dense_abci.ipynb and its line in docs/validation.md ------------------------

SPARSE_NOTEBOOK = "notebooks/02_sparse_vs_dense_abci.ipynb"


@functools.cache
def notebook_namespace(path: str) -> dict:
    """The variables a notebook leaves once its code cells ran in order (figures drawn off screen, closed)."""
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*non-interactive.*", category=UserWarning)
        for cell in json.loads(text(path))["cells"]:
            if cell["cell_type"] == "code":
                exec(compile("".join(cell["source"]), path, "exec"), namespace)
    plt.close("all")
    return namespace


def sparse_notebook(expression: str):
    """`expression` evaluated among the variables of the sparse notebook."""
    return eval(expression, notebook_namespace(SPARSE_NOTEBOOK))


def one_over(digits: int = 0) -> Callable[[float], str]:
    return lambda density: f"1/{1 / density:.{digits}f}"


def times_sign(value: float) -> str:
    return f"{value:.2f}×"


# -- docs/algorithms.md: torus_2d on a torus ---------------------------------------------------------


def torus_graph(dims: tuple):
    return torus(list(dims), 25e9, 1e-6)


def torus_default(dims: tuple, levels: tuple | None = None) -> list[int]:
    """torus_2d's default factors on a torus of `dims`, or the hierarchy factors of `levels`."""
    graph = torus_graph(dims)
    if levels is not None:
        return list(hierarchy_factors(graph, levels))
    return list(ALGORITHMS["torus_2d"].defaults(functools.partial(hierarchy_factors, graph))["factors"])


@functools.cache
def torus_allreduce_s(dims: tuple, algorithm: str, factors: tuple | None = None) -> float:
    """A 64 MiB all-reduce of `algorithm` (its default factors unless given) on a 25 GB/s, 1 us torus of `dims`."""
    entry = algorithm if factors is None else {"name": algorithm, "factors": list(factors)}
    topology = {"builder": "torus", "dims": list(dims), "bandwidth": "25 GB/s", "latency": "1 us"}
    frame = run(parse_scenario({"name": "torus", "topology": topology,
                                "collective": {"op": "allreduce", "algorithms": [entry]}, "sizes": ["64 MiB"]}))
    return float(frame["sim_time_s"].iloc[0])


# -- docs/topology.md ---------------------------------------------------------------------------------


def rank_halves_GBps(dims: tuple) -> float:
    """The maximum flow from the first half of a 25 GB/s torus' ranks to the second, GB/s (no cut chosen)."""
    graph = torus_graph(dims)
    ranks = gpus(graph)
    flow = nx.DiGraph()
    flow.add_edges_from((u, v, {"capacity": bw}) for u, v, bw in graph.edges(data="bandwidth_Bps"))
    flow.add_edges_from(("source", node) for node in ranks[: len(ranks) // 2])
    flow.add_edges_from((node, "sink") for node in ranks[len(ranks) // 2:])
    return nx.maximum_flow_value(flow, "source", "sink") / 1e9


NDR_64_FEWER = ("leaf_spine(leaves=16, spines=4, hosts_per_leaf=32, parallel=8, bandwidth=50 GB/s, latency=1 us, "
                "sharp=True, oversubscription=2.0; 16 uplink cables of 50 GB/s per leaf (2:1 keeps 16 of 32 at full "
                "rate))")
NDR_64_SLOWER = ("leaf_spine(leaves=16, spines=4, hosts_per_leaf=32, parallel=8, bandwidth=50 GB/s, latency=1 us, "
                 "sharp=True, oversubscription=2.5; 32 uplink cables of 20 GB/s per leaf (2.5:1 does not divide 32 "
                 "cables: each runs at 1/2.5 of full rate))")


@functools.cache
def ndr_64_fabric(ratio: str) -> tuple[int, float, str, set]:
    """dgx_h100_ndr_32 on 64 servers (16 leaves) at `ratio`: a leaf's uplink cables, their rate in GB/s, the
    fabric's name, and the cables a leaf has to each spine."""
    graph = build({"file": "dgx_h100_ndr_32", "nodes": 64, "fabric_params": {"leaves": 16, "oversubscription": ratio}})
    edges = [graph.edges["leaf0", v] for v in graph.successors("leaf0") if v.startswith("spine")]
    rates = {edge["bandwidth_Bps"] / edge["cables"] / 1e9 for edge in edges}
    assert len(rates) == 1
    name = re.search(r"leaf_spine\([^()]*(\([^()]*\))?\)", graph.graph["name"]).group(0)
    return sum(edge["cables"] for edge in edges), rates.pop(), name, {edge["cables"] for edge in edges}


@functools.cache
def jobs_sparse_tp(tp_in_gpu_order: bool = False, nccl: bool = False) -> dict[str, tuple[float, float]]:
    """Per density of scenarios/jobs_sparse_tp.yaml, the job ``grad``'s (time_s, alone_s): as shipped, with the TP
    rings in GPU order, or with NCCL's dense all-reduce as ``grad``."""
    from simnet.scenario import expand, read_yaml, run_jobs_point

    data = read_yaml(ROOT / "scenarios" / "jobs_sparse_tp.yaml")
    if tp_in_gpu_order:
        for job in data["jobs"].values():
            job["ranks"] = sorted(job["ranks"]) if isinstance(job["ranks"], list) else job["ranks"]
    if nccl:
        data["jobs"]["grad"]["collective"] = {"op": "allreduce", "algorithm": "nccl",
                                              "payload": data["jobs"]["grad"]["collective"]["payload"]}
        del data["sweep"]
        densities = ["1/128"]
    else:
        densities = data["sweep"]["grid"]["jobs.grad.collective.payload.density"]
    times = {}
    for density, point in zip(densities, expand(parse_scenario(data)), strict=True):
        grad = run_jobs_point(point).jobs.set_index("job").loc["grad"]
        times[density] = (float(grad.time_s), float(grad.alone_s))
    return times


def us(digits: int) -> Callable[[float], str]:
    return lambda seconds: f"{seconds * 1e6:.{digits}f}"


@functools.cache
def preset_counts(name: str) -> tuple[int, int]:
    """(servers, GPUs) of a preset in simnet/topology/presets/."""
    graph = load(find(name))
    ranks = gpus(graph)
    return len({graph.nodes[g]["host"] for g in ranks}), len(ranks)


@functools.cache
def ring_busbw_GBps(topology: str, size: str) -> float:
    """Bus bandwidth of a ring all-reduce of `size` in a scenario on `topology` (JSON of its mapping)."""
    data = {"name": "plateau", "topology": json.loads(topology),
            "collective": {"op": "allreduce", "algorithms": ["ring"]}, "sizes": [size]}
    return float(run(parse_scenario(data)).iloc[0].busbw_GBps)


def gb200_800g_busbw(node_params: dict) -> float:
    return ring_busbw_GBps(json.dumps({"file": "gb200_nvl72_xdr_2", "node_params": node_params}), "1 GiB")


def override_error(spec: dict) -> str:
    """The one-line error of a scenario on topology `spec`, as ``simnet run s.yaml`` prints it."""
    data = {"name": "override", "topology": spec, "collective": {"op": "allreduce", "algorithms": ["ring"]},
            "sizes": ["1 MiB"]}
    try:
        parse_scenario(data, source="s.yaml")
    except SimnetError as error:
        return f"error: {error}"
    return "no error"


def empty_ports_per_leaf(spec: dict) -> int:
    """Host ports of ``leaf0`` that no NIC of the overridden preset `spec` takes."""
    graph = build(spec)
    cabled = sum(1 for nic, kind in graph.nodes(data="kind") if kind == "nic" and graph.has_edge(nic, "leaf0"))
    return graph.graph["params"]["fabric_params"]["hosts_per_leaf"] - cabled


def a100_plane_share() -> str:
    whole = Network(dgx_a100()).route_bandwidth_Bps(0, 1)
    plane = Network(dgx_a100(nvswitch_planes=True)).route_bandwidth_Bps(0, 1)
    return f"1/{whole / plane:g}"


# -- the claims ---------------------------------------------------------------------------------------

QUICKSTART_TABLE = """\
quickstart: switch(hosts=8, bandwidth=12.5 GB/s, latency=1 us), allreduce, fifo links, routing shortest
algorithm   params  ranks   size sim time model time sim/model sim/crit.path algbw GB/s busbw GB/s
     ring chunks=1      8  1 KiB 28.14 us   28.14 us    1.0000        1.0000       0.04       0.06
     ring chunks=1      8  1 MiB 174.8 us   174.8 us    1.0000        1.0000       6.00      10.50
     ring chunks=1      8 64 MiB 9.423 ms   9.423 ms    1.0000        1.0000       7.12      12.46
"""

OVERRIDE_ERROR = (
    "error: s.yaml: topology.nodes: 40 servers do not fit the rail-optimised leaf_spine of 8 leaves x 32 "
    "hosts_per_leaf: each of the 8 rails (NICs per server) has 32 host ports; expected nodes ≤ 32, or more "
    "fabric_params.leaves or hosts_per_leaf"
)

GOLDEN_FAILURE = """\
   golden/quickstart.csv: 9 timing(s) changed (rtol=1e-09):
     scenario point algorithm        params  size_bytes          column      expected        actual  relative_change change
   quickstart            ring {"chunks": 1}        1024      sim_time_s  2.814336e-05  2.954336e-05      0.049745304  moved
   quickstart            ring {"chunks": 1}        1024    model_time_s  2.814336e-05  2.954336e-05      0.049745304  moved
   quickstart            ring {"chunks": 1}        1024 critical_path_s  2.814336e-05  2.954336e-05      0.049745304  moved
   quickstart            ring {"chunks": 1}     1048576      sim_time_s 0.00017480064 0.00017620064    0.00800912399  moved
   quickstart            ring {"chunks": 1}     1048576    model_time_s 0.00017480064 0.00017620064    0.00800912399  moved
   quickstart            ring {"chunks": 1}     1048576 critical_path_s 0.00017480064 0.00017620064    0.00800912399  moved
   quickstart            ring {"chunks": 1}    67108864      sim_time_s 0.00942324096 0.00942464096   0.000148568842  moved
   quickstart            ring {"chunks": 1}    67108864    model_time_s 0.00942324096 0.00942464096   0.000148568842  moved
   quickstart            ring {"chunks": 1}    67108864 critical_path_s 0.00942324096 0.00942464096   0.000148568842  moved"""

SPARSE_FIFO_ROWS = {
    (16, "1/128"): "| 16 | 16M | 1/128 | 0.95 (0.96) | 1.71 (1.71) | 1.94 (1.94) | 2.61 (2.50) | 12.03 (9.84) | 2.26 (2.45) | 0.41 (0.66) | sparse_ring_ring | 1.81x | 9.60 | 4.33 halving_doubling chunks=4 | 4.56x |",  # noqa: E501
    (16, "1/512"): "| 16 | 16M | 1/512 | 0.27 (0.27) | 0.45 (0.45) | 0.50 (0.50) | 0.72 (0.72) | 11.60 (9.73) | 0.58 (0.65) | 0.11 (0.18) | sparse_ring_ring | 1.65x | 9.60 | 4.33 halving_doubling chunks=4 | 16.00x |",  # noqa: E501
    (32, "1/512"): "| 32 | 16M | 1/512 | 0.54 (0.58) | 0.91 (0.91) | 1.13 (1.13) | 1.65 (1.43) | 13.91 (10.14) | 1.24 (1.33) | 0.16 (0.23) | sparse_ring_ring | 1.68x | 9.92 | 4.96 ring channels=2 chunks=1 | 9.18x |",  # noqa: E501
    (64, "1/512"): "| 64 | 16M | 1/512 | 1.10 (1.18) | 1.80 (1.79) | 2.37 (2.38) | 3.66 (2.79) | 15.08 (10.50) | 2.57 (2.71) | 0.21 (0.28) | sparse_ring_ring | 1.64x | 10.08 | 5.04 ring channels=2 chunks=1 | 4.60x |",  # noqa: E501
}
SPARSE_MAXMIN_ROWS = {
    (16, "1/128"): "| 16 | 16M | 1/128 | 0.96 (0.96) | 1.71 (1.71) | 1.94 (1.94) | 2.33 (2.50) | 9.18 (9.84) | 2.28 (2.45) | 0.49 (0.66) | sparse_ring_ring | 1.78x | 9.60 | 4.33 halving_doubling chunks=4 | 4.50x |",  # noqa: E501
    (64, "1/512"): "| 64 | 16M | 1/512 | 1.17 (1.18) | 1.80 (1.79) | 2.38 (2.38) | 2.76 (2.79) | 10.33 (10.50) | 2.66 (2.71) | 0.33 (0.28) | sparse_ring_ring | 1.53x | 10.08 | 5.04 ring channels=2 chunks=1 | 4.30x |",  # noqa: E501
}
SPARSE_CROSSOVER_ROWS = {
    16: "| 16 | 16M | 4.33 halving_doubling chunks=4 | 1/21 (faster at 1/21.2, not at 1/20.1) |",
    32: "| 32 | 16M | 4.96 ring channels=2 chunks=1 | 1/32 (faster at 1/32.7, not at 1/31.0) |",
    64: "| 64 | 16M | 5.04 ring channels=2 chunks=1 | 1/76 (faster at 1/77.8, not at 1/73.7) |",
}
FILL_IN_ROWS = [
    ("| intra_reduce_scatter | 1 | 0.007808 | 0.007812 |", "intra_reduce_scatter", 1),
    ("| intra_reduce_scatter | 2 | 0.015569 | 0.015564 |", "intra_reduce_scatter", 2),
    ("| intra_reduce_scatter | 3 | 0.023248 | 0.023255 |", "intra_reduce_scatter", 3),
    ("| inter_reduce_scatter | 4 | 0.030939 | 0.030886 |", "inter_reduce_scatter", 4),
    ("| inter_reduce_scatter | 8 | 0.060831 | 0.060817 |", "inter_reduce_scatter", 8),
    ("| inter_reduce_scatter | 12 | 0.089832 | 0.089825 |", "inter_reduce_scatter", 12),
    ("| inter/intra_all_gather | 16 | 0.117941 | 0.117936 |", "inter/intra_all_gather", 16),
]

CLAIMS = [
    # README.md
    *claims("README.md", QUICKSTART_TABLE,
            (QUICKSTART_TABLE, lambda: cli_output("run", "scenarios/quickstart.yaml"), identity)),
    *claims("README.md", 'print(f"{trace.time_s:.10f}")                                    # 0.0101263296',
            ("0.0101263296", lambda: readme_python_output()[0], identity)),
    *claims("README.md", "print(f\"{simnet.models.predict('ring', net, 16, 64 * 2**20):.10f}\")  # 0.0101263296,",
            ("0.0101263296", lambda: readme_python_output()[1], identity)),
    *claims("README.md", "1 KiB, 8 KiB, … 256 MiB, 1 GiB",
            ("1 KiB, 8 KiB, … 256 MiB, 1 GiB", lambda: size_range("1KiB..1GiB:x8"), identity)),
    # scenarios/*.yaml
    *claims("scenarios/blueconnect.yaml", "[16] is the ring (10.126 ms at 64 MiB)",
            ("10.126", lambda: sim_s("blueconnect", "blueconnect", 64 * MIB, factors=[16]), ms(3))),
    *claims("scenarios/blueconnect.yaml", "Rabenseifner's halving-doubling (10.082 ms)",
            ("10.082", lambda: sim_s("blueconnect", "blueconnect", 64 * MIB, factors=[2, 2, 2, 2]), ms(3))),
    *claims("scenarios/blueconnect.yaml", "[4, 4] sits between (10.090 ms)",
            ("10.090", lambda: sim_s("blueconnect", "blueconnect", 64 * MIB, factors=[4, 4]), ms(3))),
    *claims("scenarios/blueconnect_dgx.yaml", "# 4 nodes = [4, 2, 4].",
            ("[4, 2, 4]", lambda: default_factors("blueconnect_dgx", "blueconnect"))),
    *claims("scenarios/blueconnect_dgx.yaml", "BlueConnect and halving-doubling (0.91-0.93 ms)",
            ("0.91-0.93", blueconnect_dgx_hierarchical_span, span(2, 1e3))),
    *claims("scenarios/blueconnect_dgx.yaml", "# flat ring (5.2 ms: one 25 GB/s NIC carries each server boundary) by ~5.6x",
            ("5.2", lambda: sim_s("blueconnect_dgx", "ring", 64 * MIB), ms(1)),
            ("5.6", blueconnect_dgx_speedup, fixed(1))),
    *claims("scenarios/blueconnect_dgx.yaml", "funnels everything through one leader per node, loses (5.4 ms)",
            ("5.4", lambda: sim_s("blueconnect_dgx", "hierarchical_ring", 64 * MIB), ms(1))),
    *claims("scenarios/halving_doubling.yaml", "takes 10.082 ms against the ring's 10.126 ms",
            ("10.082", lambda: sim_s("halving_doubling", "halving_doubling", 64 * MIB), ms(3)),
            ("10.126", lambda: sim_s("halving_doubling", "ring", 64 * MIB), ms(3))),
    *claims("scenarios/recursive_doubling.yaml", "64 MiB takes 21.483 ms",
            ("21.483", lambda: sim_s("recursive_doubling", "recursive_doubling", 64 * MIB), ms(3))),
    *claims("scenarios/torus_2d.yaml", "Its columns are 4 hops apart on this ring",
            ("4", torus_2d_column_hops)),
    *claims("scenarios/torus_2d.yaml", "from the topology, [1, 16] on this ring",
            ("[1, 16]", lambda: default_factors("torus_2d", "torus_2d"))),
    *claims("scenarios/torus_2d.yaml", "the Python builder's own default is the near-square [4, 4]",
            ("[4, 4]", lambda: torus_2d_allreduce(16, MIB).params["factors"])),
    # docs/design.md and docs/algorithms.md
    *claims("docs/design.md", "a 1024-rank ring of 2 M transfers",
            ("2 M", lambda: len(ring_allreduce(1024, MIB).transfers), lambda n: f"{n / 1e6:.0f} M")),
    *claims("docs/algorithms.md", "256 MiB runs 0.98 × its closed form",
            ("0.98", pipelined_blueconnect_sim_over_model, fixed(2))),
    *claims("docs/algorithms.md", "2 M-transfer ring of 1024 ranks",
            ("2 M", lambda: len(ring_allreduce(1024, MIB).transfers), lambda n: f"{n / 1e6:.0f} M")),
    *claims("docs/algorithms.md", "contention-free too (99.1-99.7 %, tested)",
            ("99.1-99.7", lambda: busbw_span("dmodk", (2, 4, 8, 16, 32, 64)), span(1, 100))),
    *claims("docs/algorithms.md", "other rank counts wrap around unevenly, two flows meet on",
            ("two", lambda: most_flows_on_a_link("dmodk", (9, 17, 33, 63)), words)),
    *claims("docs/algorithms.md", "busbw drops to 43-56 % (9,",
            ("43-56", lambda: busbw_span("dmodk", (9, 17, 33, 63)), span(0, 100))),
    *claims("docs/algorithms.md", "shifts collide for most counts (five or six flows",
            ("five or six", lambda: ecmp_most_flows_span((64,)), lambda pair: f"{words(pair[0])} or {words(pair[1])}")),
    *claims("docs/algorithms.md", "reaches 34-77 % for 8, 16, 32 and 64 ranks (medians 64.3, 46.5, 40.6, 35.4 %)",
            ("34-77", lambda: ecmp_busbw_span(False), span(0, 100)),
            ("64.3, 46.5, 40.6, 35.4", lambda: ecmp_busbw_medians(False), percents)),
    *claims("docs/algorithms.md", "(every peer at once) 76-99.9 % (medians 99.9, 88.2, 79.5, 80.8 %)",
            ("76-99.9", lambda: ecmp_busbw_span(True), span(0, 100, last_digits=1)),
            ("99.9, 88.2, 79.5, 80.8", lambda: ecmp_busbw_medians(True), percents)),
    *claims("docs/algorithms.md", "rings along the first: `dims: [4, 8]` gets `[8, 4]`",
            ("[8, 4]", lambda: torus_default((4, 8)))),
    *claims("docs/algorithms.md", "On `dims: [4, 4]` at 25 GB/s and 1 us a 64 MiB all-reduce takes 5.069 ms",
            ("5.069", lambda: torus_allreduce_s((4, 4), "torus_2d"), ms(3))),
    *claims("docs/algorithms.md", "`[1, 16]`, a plain ring, took 5.131 ms",
            ("[1, 16]", lambda: torus_default((4, 4), ("host",))),
            ("5.131", lambda: torus_allreduce_s((4, 4), "torus_2d", (1, 16)), ms(3))),
    *claims("docs/algorithms.md", "`[4, 4, 4]` gets `[4, 16]`, 5.401 ms against 5.703 ms for `[1, 64]`",
            ("[4, 16]", lambda: torus_default((4, 4, 4))),
            ("5.401", lambda: torus_allreduce_s((4, 4, 4), "torus_2d"), ms(3)),
            ("5.703", lambda: torus_allreduce_s((4, 4, 4), "torus_2d", (1, 64)), ms(3))),
    *claims("docs/algorithms.md", "`[8, 8]` (5.373 ms) beats the other fold, `[32, 2]` (5.485 ms)",
            ("[8, 8]", lambda: torus_default((2, 4, 8))),
            ("5.373", lambda: torus_allreduce_s((2, 4, 8), "torus_2d"), ms(3)),
            ("5.485", lambda: torus_allreduce_s((2, 4, 8), "torus_2d", (32, 2)), ms(3))),
    *claims("docs/algorithms.md", "(`[4, 4, 4]`: 5.339 ms)",
            ("5.339", lambda: torus_allreduce_s((4, 4, 4), "blueconnect", (4, 4, 4)), ms(3))),
    *claims("docs/algorithms.md", "give 0.923 ms at 64 MiB against the ring's 5.20 ms",
            ("0.923", lambda: sim_s("blueconnect_dgx", "blueconnect", 64 * MIB, factors=[4, 2, 4]), ms(3)),
            ("5.20", lambda: sim_s("blueconnect_dgx", "ring", 64 * MIB), ms(2))),
    *claims("docs/algorithms.md", "simulation (FIFO links) to 1e-15",
            ("1e-15", blueconnect_dgx_model_error, power_of_ten_bound)),
    # docs/concurrency.md
    *claims("docs/concurrency.md", "four `tp` groups of 8 consecutive ranks",
            ("four", lambda: len(communicators(range(32), {"tp": 8, "dp": "rest"})["tp"]), words),
            ("8 consecutive", lambda: communicators(range(32), {"tp": 8, "dp": "rest"})["tp"],
             lambda groups: f"{len(groups[0])} consecutive"
             if all(list(g) == list(range(g[0], g[0] + len(g))) for g in groups) else "not consecutive")),
    *claims("docs/concurrency.md", "eight `dp` groups of 4 ranks 8 apart",
            ("eight", lambda: len(communicators(range(32), {"tp": 8, "dp": "rest"})["dp"]), words),
            ("4 ranks 8 apart", lambda: communicators(range(32), {"tp": 8, "dp": "rest"})["dp"],
             lambda groups: f"{len(groups[0])} ranks "
             + "/".join(str(s) for s in sorted({b - a for g in groups for a, b in zip(g, g[1:])})) + " apart")),
    *claims("docs/concurrency.md", "`simnet run scenarios/jobs_sparse_tp.yaml` gives `grad` 238.6 us beside TP against "
            "176.1 us alone at",
            ("238.6", lambda: jobs_sparse_tp()["1/128"][0], us(1)),
            ("176.1", lambda: jobs_sparse_tp()["1/128"][1], us(1))),
    *claims("docs/concurrency.md", "density 1/128 (slowdown 1.355), and 59.63 us against 50.96 us at 1/1024 (1.170)",
            ("1.355", lambda: jobs_sparse_tp()["1/128"][0] / jobs_sparse_tp()["1/128"][1], fixed(3)),
            ("59.63", lambda: jobs_sparse_tp()["1/1024"][0], us(2)),
            ("50.96", lambda: jobs_sparse_tp()["1/1024"][1], us(2)),
            ("1.170", lambda: jobs_sparse_tp()["1/1024"][0] / jobs_sparse_tp()["1/1024"][1], fixed(3))),
    *claims("docs/concurrency.md", "`nccl: 421.4 us beside TP, 407.2 us alone`",
            ("421.4", lambda: jobs_sparse_tp(nccl=True)["1/128"][0], us(1)),
            ("407.2", lambda: jobs_sparse_tp(nccl=True)["1/128"][1], us(1))),
    *claims("docs/concurrency.md", "stays 1.77x faster than NCCL with TP running (2.31x alone)",
            ("1.77", lambda: jobs_sparse_tp(nccl=True)["1/128"][0] / jobs_sparse_tp()["1/128"][0], fixed(2)),
            ("2.31", lambda: jobs_sparse_tp(nccl=True)["1/128"][1] / jobs_sparse_tp()["1/128"][1], fixed(2))),
    *claims("docs/concurrency.md", "329.0 us at 1/128 and 272.7 us at 1/1024",
            ("329.0", lambda: jobs_sparse_tp(tp_in_gpu_order=True)["1/128"][0], us(1)),
            ("272.7", lambda: jobs_sparse_tp(tp_in_gpu_order=True)["1/1024"][0], us(1))),
    # docs/fidelity.md
    *claims("docs/fidelity.md", "on the oversubscribed leaf-spine below finishes 1.7 %",
            ("1.7", lambda: plain_ring_gain(16 * MIB), lambda g: f"{g * 100:.1f}")),
    *claims("docs/fidelity.md", "earlier than `as_mpi`'s at 16 MiB and 34 % earlier at 64 KiB",
            ("34", lambda: plain_ring_gain(64 * 1024), lambda g: f"{g * 100:.0f}")),
    *claims("docs/fidelity.md", "takes 23.254561 ms as simnet's own schedule and 18.939255 ms with `as_mpi`",
            ("23.254561", lambda: shuffled_halving_doubling_s(False), ms(6)),
            ("18.939255", lambda: shuffled_halving_doubling_s(True), ms(6))),
    *claims("docs/fidelity.md", "moves simnet's 4 MiB ring there from 1.880 ms to 1.867 ms",
            ("1.880", lambda: shuffled_torus_ring_s(1.0), ms(3)),
            ("1.867", lambda: shuffled_torus_ring_s(1 + 1e-12), ms(3))),
    # docs/sparse.md
    *claims("docs/sparse.md", "(gtopk on 12.5 GB/s links at density 1/128: 167 GB/s)",
            ("167", lambda: sparse_quick_effective_busbw_GBps("gtopk", 1 / 128), fixed(0))),
    *[c for snippet, stage, merged in FILL_IN_ROWS
      for c in claims("docs/sparse.md", snippet,
                      (snippet, functools.partial(fill_in_row, stage, merged), identity))],
    *claims("docs/sparse.md", "`dimension: 256Ki..4Mi:x4` is 256Ki, 1Mi and 4Mi entries",
            ("256Ki, 1Mi and 4Mi", lambda: parse_count_range("256Ki..4Mi:x4"),
             lambda counts: ", ".join(f"{c // 1024}Ki" if c < 2**20 else f"{c // 2**20}Mi" for c in counts[:-1])
             + f" and {counts[-1] // 2**20}Mi")),
    *claims("docs/sparse.md", "`density: 1/1024..1/4:x4` the densities\n1/1024, 1/256, 1/64, 1/16 and 1/4",
            ("1/1024, 1/256, 1/64, 1/16 and 1/4", lambda: parse_fraction_range("1/1024..1/4:x4"),
             lambda ds: ", ".join(f"1/{1 / d:.0f}" for d in ds[:-1]) + f" and 1/{1 / ds[-1]:.0f}")),
    *claims("docs/sparse.md", "prints `16` (GPUs)", ("16", sparse_doc_python_output),
            ("16", sparse_doc_yaml_topology_size)),
    *claims("docs/sparse.md", "(checked for 16 GPUs, N = 16M, d = 1/512)",
            ("16 GPUs, N = 16M, d = 1/512", lambda: abci_scenario_matches_the_study(16, "16M", "1/512"), identity)),
    *[c for (count, density), line in SPARSE_FIFO_ROWS.items()
      for c in claims("docs/sparse.md", line, (line, functools.partial(sparse_row, count, density), identity))],
    *[c for (count, density), line in SPARSE_MAXMIN_ROWS.items()
      for c in claims("docs/sparse.md", line,
                      (line, functools.partial(sparse_row, count, density, "maxmin"), identity))],
    *claims("docs/sparse.md", "`sparse_ring_ring` is the fastest exact algorithm, 1.64-1.81x",
            ("1.64-1.81", lambda: sparse_margins("next"), span(2))),
    *claims("docs/sparse.md", "(always `sparse_ring`, then `ssar_recursive_doubling`)",
            ("always `sparse_ring`, then `ssar_recursive_doubling`", sparse_runners_up,
             lambda found: "always `{}`, then `{}`".format(*found[0]) if len(found) == 1 else f"varies: {found}")),
    *claims("docs/sparse.md", "4.6-16x ahead of the best dense all-reduce",
            ("4.6-16", lambda: sparse_margins("dense"), span(1, last_digits=0))),
    *[c for count, line in SPARSE_CROSSOVER_ROWS.items()
      for c in claims("docs/sparse.md", line, (line, functools.partial(sparse_crossover_row, count), identity))],
    *claims("docs/sparse.md", "from about 1/21 on 4 nodes to 1/76 on 16",
            ("1/21", functools.partial(sparse_crossover, 16), identity),
            ("1/76", functools.partial(sparse_crossover, 64), identity)),
    *claims("docs/sparse.md", "bottleneck-link model does not see (up to 1.4x)",
            ("1.4", lambda: max(split_allgather_over_model(FIFO_ROWS, "fifo")), fixed(1))),
    *claims("docs/sparse.md", "land within 7 % of their model",
            ("7 %", lambda: max(abs(r - 1) for r in split_allgather_over_model(MAXMIN_ROWS, "maxmin")),
             percent_bound)),
    # notebooks/02_sparse_vs_dense_abci.ipynb, and docs/validation.md's line on it
    *claims(SPARSE_NOTEBOOK, "with a 512K-entry gradient, the best dense all-reduce `simnet tune` finds is "
                             "`ring channels=2 chunks=4`",
            ("ring channels=2 chunks=4", lambda: sparse_notebook("BEST_DENSE"), identity)),
    *claims(SPARSE_NOTEBOOK, "(0.1685 ms: one ring per EDR HCA of a node, pipelined); the one-channel ring takes "
                             "0.3311 ms and",
            ("0.1685", lambda: sparse_notebook("best_dense.iloc[0]"), fixed(4)),
            ("0.3311", lambda: sparse_notebook("times['ring, 1 channel (dense)'].iloc[0]"), fixed(4))),
    *claims(SPARSE_NOTEBOOK, "BlueConnect `[2, 2, 8]` 0.2677 ms. `sparse_ring_ring` is 2.47× faster than the best "
                             "dense all-reduce",
            ("0.2677", lambda: sparse_notebook("times[list(dense)[2]].iloc[0]"), fixed(4)),
            ("2.47×", lambda: sparse_notebook("speedup[DENSITIES[0]]"), times_sign)),
    *claims(SPARSE_NOTEBOOK, "at density 1/1024 and 1.37× at 1/128; the gain falls monotonically and **is gone at "
                             "density 1/68**",
            ("1.37×", lambda: sparse_notebook("speedup[1 / 128]"), times_sign),
            ("1/68", lambda: sparse_notebook("crossover"), one_over())),
    *claims(SPARSE_NOTEBOOK, "(bisected: faster at 1/68.3, not at 1/67.6); at 1/16 it runs at 0.71× the dense speed.",
            ("1/68.3", lambda: sparse_notebook("fast"), one_over(1)),
            ("1/67.6", lambda: sparse_notebook("slow"), one_over(1)),
            ("0.71×", lambda: sparse_notebook("speedup[1 / 16]"), times_sign)),
    *claims(SPARSE_NOTEBOOK, "1/64 the sparse schedule already sends 47 % of the dense volume",
            ("47 %", lambda: sparse_notebook("volume[1 / 64] / dense_volume"), lambda f: f"{f * 100:.0f} %")),
    *claims(SPARSE_NOTEBOOK, "at every density and 1.25–1.84× faster than the flat sparse ring",
            ("1.25–1.84", lambda: sparse_notebook("(aware_vs_flat.min(), aware_vs_flat.max())"),
             lambda pair: f"{pair[0]:.2f}–{pair[1]:.2f}")),
    *claims(SPARSE_NOTEBOOK, "The practical rule for this machine: sparsify only below about 1/70",
            ("1/70", lambda: sparse_notebook("crossover"), lambda d: f"1/{round(1 / d, -1):.0f}")),
    *claims("docs/validation.md", "(`ring channels=2 chunks=4`, one ring per HCA) 2.47× at density 1/1024 and is as "
                                  "fast at density 1/68;",
            ("ring channels=2 chunks=4", lambda: sparse_notebook("BEST_DENSE"), identity),
            ("2.47×", lambda: sparse_notebook("speedup[DENSITIES[0]]"), times_sign),
            ("1/68", lambda: sparse_notebook("crossover"), one_over())),
    # docs/testing.md
    *claims("docs/testing.md", GOLDEN_FAILURE,
            (GOLDEN_FAILURE, lambda: golden_failure("overhead", "100 ns"), identity)),
    *claims("docs/testing.md", "Rows are matched on `scenario, point, algorithm, params, network_model, ranks, size_bytes`",
            ("scenario, point, algorithm, params, network_model, ranks, size_bytes", lambda: ", ".join(KEY_COLUMNS),
             identity)),
    # docs/topology.md
    *claims("docs/topology.md", "`[4, 8]` and `[8, 4]` would differ (400 vs 200 GB/s at 25 GB/s)",
            ("400", lambda: rank_halves_GBps((4, 8)), fixed(0)),
            ("200", lambda: rank_halves_GBps((8, 4)), fixed(0))),
    *claims("docs/topology.md", "orders of `[4, 8]`: 200 GB/s)",
            ("200", lambda: {describe(torus_graph(d))["bisection_Bps"] / 1e9 for d in ((4, 8), (8, 4))},
             lambda values: " or ".join(f"{v:.0f}" for v in sorted(values)))),
    *claims("docs/topology.md", "(`cut across torus dimension 1 of [4, 8]: c1 < 4 -> c1 ≥ 4`;",
            ("cut across torus dimension 1 of [4, 8]: c1 < 4 -> c1 ≥ 4",
             lambda: describe(torus_graph((4, 8)))["bisection_cut"], identity)),
    *claims("docs/topology.md", "keeps 16 cables per leaf at 50 GB/s, the NDR rate, 4 to every spine",
            ("16", lambda: ndr_64_fabric("2:1")[0]), ("50", lambda: ndr_64_fabric("2:1")[1], fixed(0)),
            ("4", lambda: ndr_64_fabric("2:1")[3], lambda counts: " or ".join(map(str, sorted(counts))))),
    *claims("docs/topology.md", "`oversubscription: 5:2` keeps all 32 at 20 GB/s",
            ("32", lambda: ndr_64_fabric("5:2")[0]), ("20", lambda: ndr_64_fabric("5:2")[1], fixed(0))),
    *claims("docs/topology.md", "They carry 800 and 640 GB/s up per leaf",
            ("800", lambda: ndr_64_fabric("2:1")[0] * ndr_64_fabric("2:1")[1], fixed(0)),
            ("640", lambda: ndr_64_fabric("5:2")[0] * ndr_64_fabric("5:2")[1], fixed(0))),
    *claims("docs/topology.md", NDR_64_FEWER, (NDR_64_FEWER, lambda: ndr_64_fabric("2:1")[2], identity)),
    *claims("docs/topology.md", NDR_64_SLOWER, (NDR_64_SLOWER, lambda: ndr_64_fabric("5:2")[2], identity)),
    *claims("docs/topology.md", "a GPU pair then uses a single plane (1/6 of an A100's links)",
            ("1/6", a100_plane_share, identity)),
    *claims("docs/topology.md", "a DGX H100 ring reaches 18 × 25 =\n450 GB/s of busbw",
            ("450", lambda: ring_busbw_GBps('"dgx_h100"', "64 GiB"), fixed(0))),
    *claims("docs/topology.md", "(a ring plateaus at 18 × 20.6 = 370.8 GB/s,",
            ("370.8", lambda: ring_busbw_GBps('{"builder": "calibrated_node", "kind": "dgx_h100"}', "64 GiB"),
             fixed(1))),
    *claims("docs/topology.md", "a ring's busbw stays at 63 GB/s instead of 100",
            ("63", lambda: gb200_800g_busbw({"nic_bandwidth": "800 Gb/s"}), fixed(0)),
            ("100", lambda: gb200_800g_busbw({"nic_bandwidth": "800 Gb/s", "pcie_bandwidth": "800 Gb/s"}),
             fixed(0))),
    *claims("docs/topology.md", "`leaf{j}` alone and 28 ports of every leaf stay empty",
            ("28", lambda: empty_ports_per_leaf({"file": "dgx_h100_ndr_32", "nodes": 4}))),
    *claims("docs/topology.md", OVERRIDE_ERROR,
            (OVERRIDE_ERROR, lambda: override_error({"file": "dgx_h100_ndr_32", "nodes": 40}), identity)),
    *claims("docs/topology.md", "(`abci_rack`: 34 nodes, 136",
            ("34 nodes, 136", lambda: preset_counts("abci_rack"), lambda c: f"{c[0]} nodes, {c[1]}")),
    *claims("docs/topology.md", "(`dgx_a100_superpod_slice`: 4 nodes,",
            ("4 nodes", lambda: preset_counts("dgx_a100_superpod_slice"), lambda c: f"{c[0]} nodes")),
    *claims("docs/topology.md", "| `dgx_h100_ndr_32` | 32 DGX H100 (256 GPUs) |",
            ("32 DGX H100 (256 GPUs)", lambda: preset_counts("dgx_h100_ndr_32"),
             lambda c: f"{c[0]} DGX H100 ({c[1]} GPUs)")),
    *claims("docs/topology.md", "| `gb200_nvl72_xdr_2` | 2 GB200 NVL72 racks (144 GPUs) |",
            ("2 GB200 NVL72 racks (144 GPUs)", lambda: preset_counts("gb200_nvl72_xdr_2"),
             lambda c: f"{c[0]} GB200 NVL72 racks ({c[1]} GPUs)")),
]


def _id(claim: Claim) -> str:
    first = claim.quoted.strip().splitlines()[0]
    return f"{claim.path}:{first[:48]}"


@pytest.mark.parametrize("claim", CLAIMS, ids=_id)
def test_the_text_has_the_snippet(claim):
    assert claim.quoted in claim.snippet, "the quoted number must be part of its snippet"
    assert claim.snippet in text(claim.path), f"{claim.path} no longer says:\n{claim.snippet}"


@pytest.mark.parametrize("claim", CLAIMS, ids=_id)
def test_the_quoted_number_is_computed(claim):
    assert claim.fmt(claim.compute()) == claim.quoted, f"{claim.path}: {claim.snippet!r}"
