"""``python -m simnet``: the ``simnet`` command line."""

import sys

from simnet.cli import main

sys.exit(main())
