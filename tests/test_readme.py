"""The README's tree and requirements stay in step with the repository: every command in scripts/ is listed,
the Debian packages are the ones scripts/setup installs, the Python ones those pyproject.toml declares."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    """The README's section ``## title``, up to the next one."""
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end >= 0 else None]


def tree_entry(folder: str) -> str:
    """The text of one entry of the tree in *What is here* (its continuation lines included)."""
    block = section("What is here").split("```text\n", 1)[1].split("```", 1)[0]
    entries = re.split(r"\n(?=\S)", block)
    (entry,) = [e for e in entries if e.split()[0] == folder]
    return entry.removeprefix(folder)


def requirement_names(text: str) -> set[str]:
    """Package names from requirement strings (``dask[distributed]>=2024.1`` is ``dask[distributed]``)."""
    return {re.match(r"[\w.\[\]-]+", t.strip()).group(0) for t in text if t.strip()}  # type: ignore[union-attr]


def test_the_tree_lists_every_command_in_scripts() -> None:
    commands = {p.name for p in (ROOT / "scripts").iterdir() if p.is_file()}
    listed = set(re.findall(r"[\w-]+", tree_entry("scripts/")))
    assert commands <= listed, f"add to the README's tree: {sorted(commands - listed)}"


def test_the_tree_lists_every_folder_of_the_repository() -> None:
    """Every top-level folder that git tracks, and every layer of the runner, has its entry in the tree."""
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    folders = {f"{path.split('/', 1)[0]}/" for path in tracked.splitlines() if "/" in path}
    block = section("What is here").split("```text\n", 1)[1].split("```", 1)[0]
    listed = {line.split()[0] for line in block.splitlines() if line.strip() and not line.startswith(" ")}
    assert folders <= listed, f"add to the README's tree: {sorted(folders - listed)}"
    layers = {f"{p.name}/" for p in (ROOT / "study_runner").iterdir() if p.is_dir() and p.name != "__pycache__"}
    runner = tree_entry("study_runner/")
    assert all(f"\n  {layer}" in runner for layer in layers), f"the runner's layers are {sorted(layers)}"


def test_the_debian_packages_are_the_ones_setup_installs() -> None:
    setup = (ROOT / "scripts" / "setup").read_text(encoding="utf-8")
    installed = set(re.search(r"^packages=\(([^)]*)\)", setup, re.M).group(1).split())  # type: ignore[union-attr]
    requirements = section("Requirements")
    listed = set(re.findall(r"`([\w.+-]+)`", requirements.split("when missing", 1)[0]))
    assert listed == installed


def test_the_python_packages_are_the_ones_pyproject_declares() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = requirement_names(project["dependencies"]) | requirement_names(project["optional-dependencies"]["dev"])
    named = section("Requirements").split("`pyproject.toml`:", 1)[1].split(")", 1)[0]
    listed = requirement_names(re.split(r"[,;]|\band\b|for development", named))
    assert listed == declared
