"""``python -m planner.cli``: the ``ivm`` command."""

import sys

from planner.cli.main import main

sys.exit(main())
