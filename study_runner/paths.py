"""Where things are: the repository the runner belongs to (every layer may use it)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["REPO"]

REPO = Path(__file__).resolve().parents[1]
"""The repository's root: ``study_runner/paths.py`` is one folder below it."""
