"""The generators' layers: a module imports its own layer or a lower one, as in the runner (tests/test_layers.py).

    basics      errors, units, sizes, files and their owners, the mixing hash, finite fields, fault specs
    model       the platform model and its parameters, the XML writer, the static analysis, Blue Gene/Q's partitions
    pieces      what families are built from: the node, paths and router graphs, allocation policies, collective
                schedules, OpenSM's tables (generators.opensm) and fabric files
    declaring   a family's declaration (generators.declare) and the subnet manager's parameters every family takes
    families    the topology families, one module each in generators.topologies (tofu builds on torus)
    registry    the registry of families, named placements, the ready machines, drawing
    commands    the command lines and the package's front door

``generators`` imports nothing of ``paper_models`` or ``study_runner`` (they build on it). Every import counts, at the
top of a module or inside a function, but one: ``generators.drawing`` imported by a command only when a picture is
asked for (matplotlib takes most of a second to import), which is not a cycle.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests import layering
from tests.conftest import REPO

PACKAGE = REPO / "generators"
LAYERS: dict[str, tuple[str, ...]] = {
    "basics": ("errors", "units", "size", "owners", "files", "mixing", "finite_field", "faults"),
    "model": ("model", "params", "analysis", "writer", "bgq"),
    "pieces": ("node", "spread", "router_graph", "allocation", "schedules", "opensm", "ibnetdiscover"),
    "declaring": ("subnet", "declare"),
    "families": ("topologies",),
    "registry": ("families", "placement", "machines", "drawing"),
    "commands": ("cli", "opensm_cli", "opensm_failures", "__main__", "__init__", "opensm.__main__"),
}
TOPOLAB = ("generators", "paper_models", "study_runner")
LAZY_ALLOWED = {"generators.drawing"}
"""What a function may import: the drawing, for its import time (not to dodge a cycle)."""


def layer_of(module: str) -> int:
    """The layer of ``generators.<part>...``: its own entry (``drawing.cli``) or its first part's (``drawing``)."""
    parts = module.split(".")[1:] or ["__init__"]
    for name in (".".join(parts), parts[0]):
        for number, members in enumerate(LAYERS.values()):
            if name in members:
                return number
    raise AssertionError(f"{module}: not in a layer of tests/test_generator_layers.py (a new module needs its place)")


def wrong_imports(package: Path) -> list[str]:
    """Every import of a higher layer, of paper_models or study_runner, or inside a function (but the drawing's)."""
    return layering.wrong_imports(package, layer_of, TOPOLAB, LAZY_ALLOWED)


def test_no_layer_imports_a_higher_one_or_inside_a_function() -> None:
    wrong = wrong_imports(PACKAGE)
    assert not wrong, "imports against the generators' layers:\n" + "\n".join(wrong)


def test_an_upward_or_hidden_import_is_caught(tmp_path: Path) -> None:
    """The check itself, on a copy of the tree: the model importing a family, and a family importing the registry
    inside a function (the cycle a lazy import would dodge), each fail it; so does a module in no layer."""
    copy = tmp_path / "generators"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    model, torus = copy / "model.py", copy / "topologies" / "torus.py"
    model.write_text(model.read_text() + "\n\nfrom generators.topologies.torus import torus\n")
    torus.write_text(torus.read_text() + "\n\ndef _late() -> None:\n    from generators.faults import draw\n")
    wrong = wrong_imports(copy)
    assert len(wrong) == 2, wrong
    assert "generators.model (layer 1) imports generators.topologies.torus (layer 4)" in wrong[0]
    assert "generators.topologies.torus imports generators.faults inside a function" in wrong[1]
    (copy / "stray.py").write_text("", encoding="utf-8")  # a module in no layer stops the check
    with pytest.raises(AssertionError, match=r"generators\.stray: not in a layer"):
        wrong_imports(copy)
