"""A clone can follow every reference: code and docs name only files that are in the repository.

Facts the code relies on live in ``docs/``; papers are cited by authors, title and section, never by a file. Two
rules, over every tracked text file: no path out of the repository to the developers' notes or papers, and every
repository path a file names exists (or is a ready platform ``scripts/build`` writes beside its committed
hostfile or parameters).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_NOTES_FOLDER = "sha" + "red"  # spelled in parts: this guard names what it refuses without citing it
OUTSIDE = re.compile(
    rf"\.\./{_NOTES_FOLDER}|{_NOTES_FOLDER}/papers|SIMGRID_{'NOTES'}|\b(?:DESIGN|STYLE|DEVELOPERS)\.md\b"
)
"""Files beside a developer's checkout (the developers' notes and papers), not in a clone."""

TOP = ("docs", "scripts", "generators", "apps", "tests", "platforms", "paper_models", "simgrid_cpp", ".ci")
PATH = re.compile(r"(?<![\w./$-])((?:" + "|".join(re.escape(t) for t in TOP) + r")/[\w./-]*\w)(?![\w<*{])")
"""A repository path as prose and code write it (not part of a longer path such as ``build/platforms/...``; not a
pattern such as ``platforms/<machine>/`` or ``tests/test_*.py``)."""

BINARY = {".png", ".so", ".gz", ".parquet", ".pdf"}


def tracked_texts() -> list[Path]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    paths = [ROOT / name for name in listed.split()]
    return [p for p in paths if p.suffix not in BINARY and "golden" not in p.parts and p != Path(__file__).resolve()]


def names_repository_file(reference: str) -> bool:
    """The path exists, or it is a ready platform that ``scripts/build`` writes (its hostfile or params committed)."""
    path = ROOT / reference
    if path.exists():
        return True
    return path.parts[-3] == "platforms" and any(path.with_suffix(s).exists() for s in (".hosts", ".params"))


def test_no_reference_leaves_the_repository() -> None:
    found = [
        f"{p.relative_to(ROOT)}:{n}: {line.strip()[:100]}"
        for p in tracked_texts()
        for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not found, "cite papers by title and section, and move facts into docs/:\n" + "\n".join(found)


def test_every_repository_path_named_exists() -> None:
    missing = sorted(
        f"{p.relative_to(ROOT)}: {m.group(1)}"
        for p in tracked_texts()
        for m in PATH.finditer(p.read_text(encoding="utf-8", errors="replace"))
        if not names_repository_file(m.group(1))
    )
    assert not missing, "these files name repository paths that do not exist:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        ("see docs/simgrid.md, and `tests/test_torus.py::test_x`.", ["docs/simgrid.md", "tests/test_torus.py"]),
        ("build/platforms/mira/mira.so and $repo/scripts/build", []),
        ("platforms/<machine>/ and tests/test_*.py", []),
        ("(generators/model.py)", ["generators/model.py"]),
    ],
)
def test_what_counts_as_a_repository_path(text: str, paths: list[str]) -> None:
    assert [m.group(1) for m in PATH.finditer(text)] == paths


def test_a_built_platform_counts_and_a_missing_file_does_not() -> None:
    assert names_repository_file("platforms/mira/mira.so")  # built; mira.hosts is committed
    assert not names_repository_file("docs/mlfm-schedule.md")
    assert not names_repository_file("platforms/mira/nowhere.so")
