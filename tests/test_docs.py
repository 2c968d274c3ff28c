"""Docs that restate code are checked against it (issue 42: docs/platforms.md's smpirun command lacked
``--cfg=smpi/coll-selector:ompi``, so a user of plain smpirun got other collective algorithms than topolab's runs)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from study_runner.simulation.smpi import STANDARD_OPTIONS
from tests.conftest import REPO


def _smpirun_commands(text: str) -> list[list[str]]:
    """The smpirun commands of a Markdown text's code blocks, as words (continuation lines joined)."""
    commands = []
    for block in re.findall(r"```[^\n]*\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            if line.lstrip().startswith("smpirun "):
                commands.append(shlex.split(line, comments=True))
    return commands


def test_the_docs_smpirun_commands_carry_the_standard_options() -> None:
    """Each smpirun command shown in the docs with SimGrid options runs with topolab's standard options, all of
    them, in order (a command with none shows SimGrid's plain use of a ready platform)."""
    found = []
    for doc in sorted([REPO / "README.md", *(REPO / "docs").glob("*.md")]):
        for words in _smpirun_commands(doc.read_text(encoding="utf-8")):
            options = [w for w in words if w.startswith(("--cfg=", "--log="))]
            if options:
                assert options[: len(STANDARD_OPTIONS)] == list(STANDARD_OPTIONS), f"{doc.name}: {shlex.join(words)}"
                found.append(doc.name)
    assert sorted(set(found)) == ["platforms.md", "smpirun-on.md"]


_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen "
    "eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()


def _in_words(number: int) -> str:
    """``24`` as the docs write it in words: ``twenty-four`` (below 100)."""
    if number < 20:
        return _UNITS[number]
    return _TENS[number // 10 - 2] + ("" if number % 10 == 0 else f"-{_UNITS[number % 10]}")


_COUNTS = {_in_words(n): n for n in range(100)}


def test_the_docs_count_the_simgrid_patches_there_are() -> None:
    """Issue 59: the README and docs/simgrid.md say how many patches scripts/simgrid-patches/ holds, in digits or
    in words; every count they give is the real one."""
    patches = len(list((REPO / "scripts" / "simgrid-patches").glob("*.patch")))
    count = r"\b(\d+|[a-z]+(?:-[a-z]+)?) "
    for doc in ("README.md", "docs/simgrid.md"):
        text = (REPO / doc).read_text(encoding="utf-8")
        said = re.findall(rf"{count}patches\b", text) + re.findall(rf"\*\.patch`\s*\({count}today", text)
        counts = [int(word) if word.isdigit() else _COUNTS[word] for word in said if word.isdigit() or word in _COUNTS]
        assert counts, f"{doc} no longer says how many patches there are"
        assert set(counts) == {patches}, f"{doc} says {counts} patches; scripts/simgrid-patches/ holds {patches}"


def _headings(path: Path) -> set[str]:
    return {line.lstrip("#").strip() for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#")}


def test_every_section_cross_reference_names_a_real_heading() -> None:
    """Issue 59: platforms/README.md sent readers to a README section that did not exist. A reference of the form
    ``the README's "Title"`` or ``docs/<name>.md's "Title"`` names a heading of that file."""
    docs = [REPO / "README.md", REPO / "platforms" / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    found = 0
    for doc in docs:
        for target, title in re.findall(r"\b(README|[\w/.-]+\.md)'s \"([^\"]+)\"", doc.read_text(encoding="utf-8")):
            path = REPO / ("README.md" if target == "README" else target)
            assert path.is_file(), f"{doc.relative_to(REPO)} cites {target}, which does not exist"
            assert title in _headings(path), f'{doc.relative_to(REPO)} cites {target}\'s "{title}": no such heading'
            found += 1
    assert found >= 2  # docs/sweeps.md's and platforms/README.md's references at least
