"""scripts/lib/python_deps.py: the machine's environment of topolab's Python dependencies is named by what it holds,
so clones of the same dependencies share it and a changed list gets an environment of its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "lib" / "python_deps.py"

PYPROJECT = """
[project]
name = "x"
dependencies = ["lxml>=4.9", "numpy>=1.24"]
[project.optional-dependencies]
dev = ["pytest>=7.4"]
"""


def _run(what: str, pyproject: Path) -> str:
    return subprocess.run(
        [sys.executable, str(SCRIPT), what, str(pyproject)], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_the_requirements_are_the_dependencies_and_the_dev_extras(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    assert _run("requirements", tmp_path / "pyproject.toml").splitlines() == ["lxml>=4.9", "numpy>=1.24", "pytest>=7.4"]


def test_the_key_follows_the_requirements_not_the_rest_of_the_file(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    key = _run("key", tmp_path / "pyproject.toml")
    assert key.startswith(f"python-{sys.version_info.major}.{sys.version_info.minor}.")
    (tmp_path / "pyproject.toml").write_text(PYPROJECT + "\n[tool.ruff]\nline-length = 120\n")
    assert _run("key", tmp_path / "pyproject.toml") == key
    (tmp_path / "pyproject.toml").write_text(PYPROJECT.replace("numpy>=1.24", "numpy>=2"))
    assert _run("key", tmp_path / "pyproject.toml") != key


def test_this_clone_reads_the_machines_environment() -> None:
    """scripts/setup made .venv a venv without pip whose topolab.pth reads the machine's dependencies and this clone."""
    pth = next((REPO / ".venv" / "lib").glob("python3*/site-packages/topolab.pth"))
    shared = (REPO / ".venv" / ".topolab-installed").read_text().strip()
    assert Path(shared).name == _run("key", REPO / "pyproject.toml")
    assert pth.read_text().splitlines()[1] == str(REPO)
    assert shared in pth.read_text().splitlines()[0]
