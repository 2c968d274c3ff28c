"""``python -m generators.opensm``: OpenSM's routes for a family's fabric (``generators.opensm_cli``)."""

from generators.opensm_cli import main

raise SystemExit(main())
