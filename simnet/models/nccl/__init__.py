"""NCCL's own cost model and choice of algorithm and protocol, reproduced (the "NCCL twin" model).

NCCL decides, per collective and size, which algorithm (Tree, Ring, CollNetDirect,
CollNetChain, NVLS, NVLSTree, PAT) and protocol (LL, LL128, Simple) to run from an
analytical model it builds at init. This package reproduces that model for NCCL
2.18.3 to 2.30.7, so that simnet can show NCCL's choice and time beside its own
simulation, replay public NCCL logs, and write NCCL's ext-tuner configuration.

* :mod:`~simnet.models.nccl.inputs`: the model's inputs as plain data
  (:class:`NcclGraph`, :class:`NcclGraphs`, :class:`NcclSystem`, :class:`NcclEnv`).
* :mod:`~simnet.models.nccl.versions`: per-release constants and formula variants
  (:data:`NCCL_VERSIONS`), each cited to NCCL's source.
* :mod:`~simnet.models.nccl.model`: :func:`tune_model` (``ncclTopoTuneModel``),
  :func:`algo_time_s` (``ncclTopoGetAlgoTime``), :func:`cost_table`,
  :func:`choose` and :func:`launch_config` (``topoGetAlgoInfo``).
* :mod:`~simnet.models.nccl.logs`: NCCL's TUNING lines, printed
  (:func:`init_table`, :func:`decision_line`) and parsed.
* :mod:`~simnet.models.nccl.topology`: :func:`graphs_from_network`, the search
  graphs of a simnet topology (an approximation of NCCL's search).
* :mod:`~simnet.models.nccl.tuner`: ``nccl_tuner.conf`` rows, writer, strict parser.

Public functions take sizes in bytes and return seconds; the tables keep NCCL's
units (µs, GB/s) in their names. docs/nccl.md describes what is modelled and
validated.

Examples
--------
>>> from simnet.network import Network
>>> from simnet.topology import dgx_h100
>>> system, graphs = graphs_from_network(Network(dgx_h100()), "2.30.7")
>>> tuning = tune_model(system, graphs, "2.30.7")
>>> choose(tuning, "allreduce", 1 << 20)[:2], choose(tuning, "allreduce", 2 << 20)[:2]
(('ring', 'll'), ('nvls', 'simple'))
"""

from simnet.models.nccl.inputs import (
    ALGORITHMS,
    FUNCTIONS,
    PROTOCOLS,
    NcclEnv,
    NcclGraph,
    NcclGraphs,
    NcclSystem,
)
from simnet.models.nccl.logs import (
    Decision,
    InitTable,
    decision_line,
    init_table,
    log_message,
    parse_decision_line,
    parse_init_table,
    thread_thresholds_line,
)
from simnet.models.nccl.model import (
    NcclChoice,
    NcclTuning,
    algo_latency_s,
    algo_time_s,
    choose,
    cost_table,
    launch_config,
    model_nbytes,
    tune_model,
)
from simnet.models.nccl.topology import MODELLED_SYSTEMS, NcclInputs, graphs_from_network, network_tuning
from simnet.models.nccl.tuner import TunerRow, parse_tuner_csv, tuner_lookup, tuner_rows_to_csv
from simnet.models.nccl.versions import NCCL_VERSIONS, NcclVersion, nccl_version

__all__ = [
    "ALGORITHMS",
    "FUNCTIONS",
    "PROTOCOLS",
    "NCCL_VERSIONS",
    "NcclVersion",
    "nccl_version",
    "NcclGraph",
    "NcclGraphs",
    "NcclSystem",
    "NcclEnv",
    "NcclTuning",
    "network_tuning",
    "MODELLED_SYSTEMS",
    "NcclChoice",
    "NcclInputs",
    "tune_model",
    "algo_time_s",
    "algo_latency_s",
    "cost_table",
    "choose",
    "launch_config",
    "model_nbytes",
    "init_table",
    "thread_thresholds_line",
    "decision_line",
    "log_message",
    "InitTable",
    "parse_init_table",
    "Decision",
    "parse_decision_line",
    "graphs_from_network",
    "TunerRow",
    "tuner_rows_to_csv",
    "parse_tuner_csv",
    "tuner_lookup",
]
