"""Where things are: the repository the runner belongs to (every layer may use it)."""

from __future__ import annotations

from pathlib import Path

from generators.errors import missing_build

__all__ = ["BIN_DIR", "REPO", "app_not_found"]

REPO = Path(__file__).resolve().parents[1]
"""The repository's root: ``study_runner/paths.py`` is one folder below it."""

BIN_DIR = REPO / "build" / "bin"
"""Where ``scripts/build`` puts topolab's apps and SimGrid programs (platform_check, jobs_run)."""


def app_not_found(binary: Path, topolab_app: bool) -> str:
    """What every layer says of an app binary that is not there: one of topolab's apps (named, not a path or a
    third-party code) is built by ``scripts/build``; a user's own is just not found."""
    return missing_build(f"app binary {binary}") if topolab_app else f"app binary {binary} not found"
