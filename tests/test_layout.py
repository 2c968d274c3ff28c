"""The code stays readable by a newcomer: no Python file of 500 lines or more, no function over 80 lines, and no
schedule computed outside generators/schedules.py (issue 17's limits, kept by a test rather than by memory)."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAX_FILE_LINES = 499
MAX_FUNCTION_LINES = 80


def python_files() -> list[Path]:
    """The repository's Python files as git sees them (tracked, or new and not ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [REPO / name for name in listed if (REPO / name).is_file()]


def test_every_python_file_is_under_500_lines() -> None:
    long = {
        str(p.relative_to(REPO)): n for p in python_files() if (n := len(p.read_text().splitlines())) > MAX_FILE_LINES
    }
    assert long == {}


def test_no_function_is_over_80_lines() -> None:
    long = {}
    for path in python_files():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(REPO)}:{node.lineno} {node.name}"] = length
    assert long == {}


def test_schedules_live_in_one_module() -> None:
    """The old homes of the combine pipeline, the pairing partner and the Ring/Bruck steps define none again."""
    defined = {
        f"{path.relative_to(REPO)}: {node.name}"
        for path in python_files()
        if path.name != "schedules.py"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef)
        and node.name in {"partner", "pipeline_steps", "_pipe_node", "ring_steps", "bruck_steps", "antipode"}
    }
    assert defined == set()
