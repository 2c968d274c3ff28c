"""Entry point of ``python -m study_runner``."""

import sys

from study_runner.cli import main

sys.exit(main())
