"""The runner's layers, as its folders show them, depend one way: a module imports its own layer or a lower one.

    errors, paths          what every layer shares
    simulation/            one smpirun: the prepared simulation, options, its output, computation, tracing, work
                           dirs, the cache, codes, platform files and their cache, Debian sources
    batch/                 many simulations: prepared runs, the engines, the estimate of the time left, progress
    studies/               study files, their checks and analyses, reports
    sweeps/                sweep files, their tables and plots
    tools/                 smpirun-on, real codes, conformance, HPCC, benchmarks of the simulator
    cli, __main__          ``scripts/repro``: argument parsing

Every import counts, at the top of a module or inside a function (a lazy import is a dependency too).
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.layering import wrong_imports

PACKAGE = REPO / "study_runner"
LAYERS = ("errors", "paths", "simulation", "batch", "studies", "sweeps", "tools", "cli")
"""Lowest first; ``errors`` and ``paths`` are one layer (0), ``__main__`` belongs with ``cli``."""


def layer_of(module: str) -> int:
    """The layer of ``study_runner.<part>...`` (its first part: a folder or a top-level module)."""
    part = module.split(".")[1] if "." in module else "__init__"
    part = {"__main__": "cli", "__init__": "errors"}.get(part, part)
    if part not in LAYERS:
        raise AssertionError(f"{module}: not in a layer of {LAYERS} (a new folder needs its place here)")
    return max(LAYERS.index(part) - 1, 0)  # errors and paths share layer 0


def upward_imports(package: Path) -> list[str]:
    """Every import of a higher layer by a lower one under ``package``, as ``file:line: a (layer) imports b``."""
    return wrong_imports(package, layer_of, roots=("study_runner",))


def test_no_layer_imports_a_higher_one() -> None:
    wrong = upward_imports(PACKAGE)
    assert not wrong, "imports against the layers' direction:\n" + "\n".join(wrong)


def test_an_upward_import_is_caught(tmp_path: Path) -> None:
    """The check itself: a simulation module that imports a study module fails it (a copy of the tree), and so does
    a module in no layer."""
    copy = tmp_path / "study_runner"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    smpi = copy / "simulation" / "smpi.py"
    smpi.write_text(smpi.read_text() + "\n\ndef _late() -> None:\n    from study_runner.studies import study\n")
    wrong = upward_imports(copy)
    assert (
        len(wrong) == 1
        and "study_runner.simulation.smpi (layer 1) imports study_runner.studies.study (layer 3)" in wrong[0]
    )
    (copy / "stray.py").write_text("", encoding="utf-8")  # a module in no layer stops the check
    with pytest.raises(AssertionError, match=r"study_runner\.stray: not in a layer"):
        upward_imports(copy)


@pytest.mark.parametrize("layer", LAYERS[2:7])
def test_each_layer_folder_says_what_it_is(layer: str) -> None:
    init = PACKAGE / layer / "__init__.py"
    assert init.is_file() and ast.get_docstring(ast.parse(init.read_text())), f"{layer}/ needs a docstring"
