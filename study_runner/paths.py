"""Where things are: the repository the runner belongs to (every layer may use it)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["BIN_DIR", "REPO", "app_not_found"]

REPO = Path(__file__).resolve().parents[1]
"""The repository's root: ``study_runner/paths.py`` is one folder below it."""

BIN_DIR = REPO / "build" / "bin"
"""Where ``scripts/build`` puts topolab's apps and SimGrid programs (platform_check, jobs_run)."""


def app_not_found(binary: Path) -> str:
    """What every layer says of an app binary that is not there (topolab's apps are built by ``scripts/build``)."""
    return f"app binary {binary} not found; build topolab's apps first (scripts/build)"
