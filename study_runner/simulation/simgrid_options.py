"""SimGrid's ``--cfg`` options: the one place that writes the smpirun word of one (:func:`cfg`; every group of them,
the standard options of ``simulation.smpi``, tracing's, a recording's and a replay's, the jobs', the computation
modes', is built with it), reads one back (:func:`cfg_value`), and checks them against the SimGrid topolab built
before smpirun runs.

Given an option it does not know (``--cfg=garbage``, ``--cfg=network/model:NOPE``), SimGrid aborts the
simulation with a C++ backtrace and exit status 134. smpirun-on asks the same SimGrid first, without running
anything: ``platform_check`` (linked against libsimgrid) parses the options exactly as a simulation does and
creates the models they name; ``smpimain --help-coll`` lists the collective algorithms SMPI can select.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from study_runner.paths import BIN_DIR

__all__ = ["cfg", "cfg_problem", "cfg_value", "cfgs", "collective_algorithms", "options_problem"]

_CFG = "--cfg="
"""How smpirun takes a SimGrid option: ``--cfg=NAME:VALUE``."""


def cfg(option: str) -> str:
    """The smpirun word of a SimGrid option written ``NAME:VALUE`` (as ``smpirun --help-cfg`` names it, and as
    smpirun-on's ``--cfg=`` takes it). A word that is one already is returned as is.

    >>> cfg("network/model:CM02"), cfg("--cfg=smpi/or:1e-6")
    ('--cfg=network/model:CM02', '--cfg=smpi/or:1e-6')
    """
    return _CFG + option.removeprefix(_CFG)


def cfgs(*options: str) -> tuple[str, ...]:
    """The smpirun words of a group of SimGrid options, each written ``NAME:VALUE`` (:func:`cfg`), in order.

    >>> cfgs("smpi/wtime:0", "smpi/or:1e-6")
    ('--cfg=smpi/wtime:0', '--cfg=smpi/or:1e-6')
    """
    return tuple(cfg(option) for option in options)


def cfg_value(word: str) -> str | None:
    """The ``NAME:VALUE`` of an smpirun word that sets a SimGrid option, None for another word.

    >>> cfg_value(cfg("smpi/or:1e-6")), cfg_value("--log=root.thres:warning")
    ('smpi/or:1e-6', None)
    """
    return word.removeprefix(_CFG) if word.startswith(_CFG) else None


PLATFORM_CHECK = BIN_DIR / "platform_check"
_NO_PLATFORM = "/nonexistent/topolab-cfg-check.xml"  # SimGrid reads the options and models before the platform
_MESSAGE = re.compile(r"^\[[0-9.]+\] (?:\S+: )?\[[^\]]+/(?:CRITICAL|ERROR)\] (.*)$")


def _simgrid_prefix() -> Path | None:
    smpirun = shutil.which("smpirun")
    return None if smpirun is None else Path(smpirun).resolve().parent.parent


@cache
def collective_algorithms() -> dict[str, tuple[str, ...]]:
    """Each collective SMPI can configure (``smpi/<name>``) and its algorithms, from ``smpimain --help-coll``."""
    prefix = _simgrid_prefix()
    smpimain = None if prefix is None else prefix / "lib" / "simgrid" / "smpimain"
    if smpimain is None or not smpimain.is_file():
        return {}
    env = {**os.environ, "LD_LIBRARY_PATH": str(prefix / "lib")}
    done = subprocess.run([smpimain, "--help-coll"], capture_output=True, text=True, timeout=60, env=env, check=False)
    table: dict[str, list[str]] = {}
    current = None
    for line in (done.stdout + done.stderr).splitlines():
        header = re.match(r'^Collective: "(\w+)"', line)
        if header:
            current = table.setdefault(header.group(1), [])
        elif current is not None and line.startswith("  ") and line.strip():
            current.append(line.split()[0])
    return {name: tuple(algorithms) for name, algorithms in table.items()}


@cache
def _simgrid_refusal(options: tuple[str, ...]) -> str | None:
    """What SimGrid says of ``options`` (NAME:VALUE each), or None if it accepts them all (asked once per process)."""
    if not PLATFORM_CHECK.is_file():
        return None  # the apps are not built: smpirun will say it
    command = [str(PLATFORM_CHECK), _NO_PLATFORM, *(cfg(option) for option in options)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    if done.returncode == 1 and "does not exist" in done.stderr:
        return None
    for line in done.stderr.splitlines():
        if line.startswith("platform_check: error: Bad config key: "):
            return f"SimGrid has no option {line.rsplit(': ', 1)[1]!r} (smpirun --help-cfg lists them)"
        found = _MESSAGE.match(line)
        if found and "Configuration change" not in line:
            return found.group(1).strip()
    return f"SimGrid refuses these options (exit status {done.returncode})"


def cfg_problem(options: Sequence[str]) -> str | None:
    """None if SimGrid takes every ``--cfg`` option, else one line naming the first problem."""
    for option in options:
        name, colon, value = option.partition(":")
        if not colon or not name.strip() or not value.strip():
            return f"{cfg(option)}: a SimGrid option is NAME:VALUE, e.g. {cfg('network/model:CM02')}"
        collective = name.removeprefix("smpi/")
        algorithms = collective_algorithms().get(collective) if name.startswith("smpi/") else None
        if algorithms and value not in algorithms:
            return f"{cfg(option)}: SMPI has no {collective} algorithm {value!r}; known: {', '.join(algorithms)}"
    refusal = _simgrid_refusal(tuple(options)) if options else None
    return None if refusal is None else f"--cfg: {refusal}"


def options_problem(words: Sequence[str]) -> str | None:
    """:func:`cfg_problem` of the ``--cfg=NAME:VALUE`` words among smpirun options ``words``."""
    return cfg_problem([value for value in map(cfg_value, words) if value is not None])
