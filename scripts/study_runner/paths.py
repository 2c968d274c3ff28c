"""Where things are: the repository the runner belongs to (every layer may use it)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["REPO"]

REPO = Path(__file__).resolve().parents[2]
"""The repository's root: ``scripts/study_runner/paths.py`` is two folders below it."""
