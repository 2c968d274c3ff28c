"""The contract between a study file's grids and its analysis (study_runner.studies.grid_fields): a study whose grid,
variable or named value the analysis reads is gone fails when it loads, before anything runs; and every grid an
analysis addresses in its code is one it declares."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path
from types import ModuleType

import pytest

from study_runner.errors import StudyError
from study_runner.studies import analyses
from study_runner.studies.study import load_study
from tests.conftest import REPO
from tests.conftest import Edit
from tests.conftest import apply_edit

# A shipped study file, one edit, and the error it must give when it loads (the old code loaded each of them and
# failed, if at all, after every simulation had run: a KeyError or "has 0 runs at ..., not one").
EDITS = [
    ("tofu-allgather", ('algorithm = ["ring", "bruck"]', 'algorithm = ["ring", "brook"]'),
     "grid 'allgather': variable 'algorithm' has no value 'bruck', which the analysis names"),
    ("nbl-combine", ('name = "fig4"', 'name = "figure4"'),
     "the analysis reads grid 'fig4', which the study file does not generate (its grids: sweep, figure4)"),
    ("interconnects", ("order", "ordering"), "grid 'shifts' has no variable 'order', which the analysis reads"),
    ("bgq-pairing", ('name = "pairing"', 'name = "pairings"'),
     "the analysis reads grid 'pairing', which the study file does not generate (its grids: pairings)"),
]  # fmt: skip


@pytest.mark.parametrize(("study", "edit", "message"), EDITS, ids=[case[0] for case in EDITS])
def test_a_study_without_what_its_analysis_reads_fails_when_it_loads(
    tmp_path: Path, study: str, edit: Edit, message: str
) -> None:
    edited = tmp_path / f"{study}.toml"
    edited.write_text(apply_edit((REPO / "studies" / f"{study}.toml").read_text(), edit))
    with pytest.raises(StudyError) as raised:
        load_study(edited)
    assert str(raised.value) == f"{edited}: {message}"


def _analysis_modules() -> list[ModuleType]:
    found = []
    for info in pkgutil.iter_modules(analyses.__path__):
        module = importlib.import_module(f"{analyses.__name__}.{info.name}")
        found.append(module)
        if info.ispkg:
            found += [
                importlib.import_module(f"{module.__name__}.{sub.name}")
                for sub in pkgutil.iter_modules(module.__path__)
            ]
    return found


def _grids_addressed(module: ModuleType) -> set[str]:
    """The grids a module's code names in ``run_at``, ``values`` and ``runs_of`` calls (constants resolved)."""
    grids = set()
    for node in ast.walk(ast.parse(Path(module.__file__ or "").read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            if node.func.attr in ("run_at", "values", "runs_of") and isinstance(node.func.value, ast.Attribute):
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    grids.add(first.value)
                elif isinstance(first, ast.Name) and isinstance(getattr(module, first.id, None), str):
                    grids.add(getattr(module, first.id))
    return grids


def test_every_grid_an_analysis_addresses_is_declared() -> None:
    declared_by_analysis = {}
    for module in _analysis_modules():
        analysis = module.__name__.split(".")[3]
        declared_by_analysis.setdefault(analysis, importlib.import_module(f"{analyses.__name__}.{analysis}"))
        addressed = _grids_addressed(module)
        declared = set(getattr(declared_by_analysis[analysis], "GRIDS", {}))
        assert addressed <= declared, f"{module.__name__} addresses grids {sorted(addressed - declared)} undeclared"
    # and the check sees them: the analyses that address grids are the ones that declare them
    assert {name for name, module in declared_by_analysis.items() if getattr(module, "GRIDS", None)} == {
        "bgq_pairing", "fail_in_place", "interconnects", "interference", "mlfm_alltoall", "nbl_combine",
        "threequads_transpose", "tofu_allgather",
    }  # fmt: skip


def test_every_shipped_study_keeps_the_contract() -> None:
    for path in sorted((REPO / "studies").glob("*.toml")):
        load_study(path)
