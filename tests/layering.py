"""The layer check the runner's and the generators' tests share (tests/test_layers.py, tests/test_generator_layers.py):
every import of a package's module, read from its syntax tree, against the layers the test declares."""

from __future__ import annotations

import ast
from collections.abc import Callable
from collections.abc import Collection
from pathlib import Path


def module_name(path: Path, package: Path) -> str:
    """``study_runner.studies.study`` for ``<package>/studies/study.py``."""
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, package: Path, roots: Collection[str]) -> list[tuple[int, str, bool]]:
    """(line, module, inside a function) of every import of the file from the packages ``roots``, lazy ones included
    (``from generators import bgq`` names the module ``generators.bgq``, ``from generators import build_platform``
    the package)."""
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lazy = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) for n in ast.walk(f) if n is not f}
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            folder = package.parent.joinpath(*node.module.split("."))
            submodule = [(folder / a.name).is_dir() or (folder / f"{a.name}.py").is_file() for a in node.names]
            names = [
                f"{node.module}.{a.name}" if sub else node.module for a, sub in zip(node.names, submodule, strict=True)
            ]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        found += [(node.lineno, name, id(node) in lazy) for name in names if name.split(".")[0] in roots]
    return found


def wrong_imports(
    package: Path,
    layer_of: Callable[[str], int],
    roots: Collection[str],
    lazy_allowed: Collection[str] | None = None,
) -> list[str]:
    """Every import under ``package``, as ``file:line: a ...``, of a higher layer, of another of the ``roots`` (which
    build on it), or, where ``lazy_allowed`` is given, inside a function (but of those modules). A module in no layer
    fails at once (``layer_of`` raises: a new module needs its place)."""
    wrong = []
    for path in sorted(package.rglob("*.py")):
        here = module_name(path, package)
        level = layer_of(here)
        for line, target, lazy in imports(path, package, roots):
            where = f"{path.relative_to(package.parent)}:{line}: {here}"
            if target.split(".")[0] != package.name:
                wrong.append(f"{where} imports {target}, which builds on {package.name}")
            elif layer_of(target) > level:
                wrong.append(f"{where} (layer {level}) imports {target} (layer {layer_of(target)})")
            elif lazy and lazy_allowed is not None and not any(_within(target, a) for a in lazy_allowed):
                wrong.append(f"{where} imports {target} inside a function")
    return wrong


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")
