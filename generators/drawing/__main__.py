"""``python -m generators.drawing``: see :mod:`generators.drawing.cli`."""

import sys

from generators.drawing.cli import main

sys.exit(main())
