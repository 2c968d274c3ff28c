"""Docs that restate code are checked against it (issue 42: docs/platforms.md's smpirun command lacked
``--cfg=smpi/coll-selector:ompi``, so a user of plain smpirun got other collective algorithms than topolab's runs)."""

from __future__ import annotations

import re
import shlex

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
