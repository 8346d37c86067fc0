import os
from pathlib import Path

from hypothesis import settings

pytest_plugins = ["simnet.testing"]

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

_LONGEST_FIRST = (
    "test_reproducibility.py",
    "validation/test_simgrid.py",
    "plots/test_every_scenario.py",
    "validation/test_nccl_curves.py",
    "test_sweep.py",
    "test_notebooks.py",
    "test_quoted_numbers.py",
    "interchange/test_msccl.py",
    "test_golden.py",
)
"""Test modules that take longest, longest first (measured with ``--durations``)."""


def pytest_collection_modifyitems(session, config, items):
    """Start the longest modules first, so that ``make test``'s workers (one module each at a time,
    ``--dist loadfile``) finish together instead of one running a long module alone at the end.
    Tests are independent of their order."""
    root = Path(__file__).parent
    rank = {name: position for position, name in enumerate(_LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.relative_to(root).as_posix(), len(rank)))
