"""One home for SimGrid's options (issue 62): the runner's code writes the smpirun word of a SimGrid option
(``--cfg=NAME:VALUE``) in one module, ``study_runner.simulation.simgrid_options`` (``cfg``); every other module
builds its options with it. Docstrings (their doctests show the words) and smpirun-on's usage text (``--cfg=OPT``)
are prose, not options."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

HOME = "study_runner/simulation/simgrid_options.py"


def _docstrings(tree: ast.AST) -> set[int]:
    """The strings that are statements of their own: docstrings of modules, classes, functions and attributes."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }


def spellings(root: Path) -> list[str]:
    """``file:line`` of every string in code (not a docstring, not a usage text) that spells ``--cfg=``."""
    found = []
    for package in ("study_runner", "generators"):
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docs = _docstrings(tree)
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and "--cfg=" in node.value:
                    usage = "--cfg=OPT" in node.value
                    if id(node) not in docs and not usage:
                        found.append(f"{path.relative_to(root)}:{node.lineno}")
    return [place for place in found if not place.startswith(HOME)]


def test_one_module_spells_simgrids_options() -> None:
    assert spellings(REPO) == []


def test_a_spelling_elsewhere_is_caught(tmp_path: Path) -> None:
    for package in ("study_runner", "generators"):
        (tmp_path / package).mkdir()
    (tmp_path / "study_runner" / "late.py").write_text('"""Says --cfg=a:b in prose."""\nOPTION = "--cfg=smpi/or:1"\n')
    assert spellings(tmp_path) == ["study_runner/late.py:2"]
