"""Hostile input, property-based (issue 19): any request to ``python -m generators`` and any ``scripts/smpirun-on``
command line either exits 0 with a platform that SimGrid loads, or exits 2 with exactly one ``error:`` line on
stderr; exit 0 exactly when the drawn input is valid (tests/hostile.py knows); never a traceback, never a hang. A
damaged cache entry (issue 41) is served as written only while it is sound, else a miss with one warning.

Both commands run in this process (their ``main``, stdout and stderr captured, a per-case time limit) for speed,
smpirun-on with ``os.execvp`` replaced so that nothing runs; a few real subprocesses check the same end to end.
Profiles (tests/conftest.py): the suite's derandomized default, and ``TOPOLAB_HYPOTHESIS_PROFILE=long``
(``scripts/check-hostile-input``), which counts every case into ``$TOPOLAB_HOSTILE_REPORT`` and keeps going after
a failure so that the report says how many of each kind there were.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from generators import crossbar
from generators import write_platform
from generators.cli import main as generators_main
from study_runner.errors import StudyError
from study_runner.studies.toml_input import MAX_BYTES
from study_runner.studies.toml_input import MAX_DEPTH
from study_runner.tools import smpirun_on
from tests.conftest import REPO
from tests.hostile_commands import Command
from tests.hostile_commands import generator_command
from tests.hostile_commands import smpirun_on_command
from tests.hostile_families import FAMILY_CASES
from tests.hostile_judge import HANG_SECONDS
from tests.hostile_judge import Judge
from tests.hostile_judge import Ran
from tests.hostile_judge import load
from tests.hostile_judge import run_in_process
from tests.hostile_judge import verdict

pytestmark = pytest.mark.simgrid  # valid platforms are loaded by SimGrid's loader


def _materialize(command: Command, directory: Path) -> list[str]:
    for name, text in command.files.items():
        (directory / name).write_text(text)
        if text.startswith("#!"):
            (directory / name).chmod(0o755)
    return [arg.replace("{dir}", str(directory)) for arg in command.argv]


@pytest.mark.parametrize("family", sorted(FAMILY_CASES))
def test_generator_cli(family: str, tmp_path: Path) -> None:
    judge = Judge(f"generators {family}")

    @given(generator_command(family))
    def case(command: Command) -> None:
        with tempfile.TemporaryDirectory(dir=tmp_path) as name:
            directory = Path(name)
            argv = _materialize(command, directory)
            start = time.perf_counter()
            outcome = run_in_process(generators_main, argv)
            kind = verdict(command, outcome)
            written = sorted(p.name for p in directory.iterdir())
            if kind == "ok" and command.ok:
                platform = next(directory / n for n in written if n.startswith("platform") and n != "platform.params")
                loaded = load(platform)
                kind = "ok" if loaded["hosts"] == command.hosts else f"loaded {loaded['hosts']} hosts"
                hosts = (directory / "hosts").read_text().split() if command.ranks is not None else None
                if hosts is not None and len(hosts) != command.ranks:
                    kind = f"hostfile of {len(hosts)} ranks, not {command.ranks}"
            elif kind == "ok" and written:
                kind = f"refused but wrote {written}"
            judge(command, argv, outcome, time.perf_counter() - start, kind)

    case()
    judge.finish()


def test_smpirun_on(tmp_path: Path) -> None:
    """smpirun-on's whole argument handling, with a fake smpirun first on PATH and os.execvp replaced."""
    judge = Judge("smpirun-on")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "smpirun").write_text("#!/bin/sh\nexit 0\n")
    (fake / "smpirun").chmod(0o755)
    environment = {"PATH": f"{fake}{os.pathsep}{os.environ['PATH']}", "TOPOLAB_CACHE": str(tmp_path / "cache")}

    def fake_exec(file: str, args: Sequence[str]) -> None:
        raise Ran(args)

    @given(smpirun_on_command())
    def case(command: Command) -> None:
        with tempfile.TemporaryDirectory(dir=tmp_path) as name:
            directory = Path(name)
            write_platform(crossbar(4), directory / "x.xml")
            argv = _materialize(command, directory)
            start = time.perf_counter()
            with mock.patch.dict(os.environ, environment), mock.patch("os.execvp", fake_exec):
                outcome = run_in_process(smpirun_on.main, argv)
            kind = verdict(command, outcome)
            if kind == "ok" and command.ok:
                assert outcome.command is not None
                ranks = int(outcome.command[outcome.command.index("-np") + 1])
                loaded = load(Path(outcome.command[outcome.command.index("-platform") + 1]))
                if (loaded["hosts"], ranks) != (command.hosts, command.ranks):
                    kind = f"ran {ranks} ranks on {loaded['hosts']} hosts, not {command.ranks} on {command.hosts}"
            judge(command, argv, outcome, time.perf_counter() - start, kind)

    case()
    judge.finish()


ENTRY_RECORDS = [{"app": "pingpong", "bytes": 1, "oneway_s_min": 1.25e-07}, {"app": "exchange", "time_s_min": 2.5}]
ENTRY_FIELDS = ("format", "key", "record_counts", "records_sha256", "records", "inputs", "measured")
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def damaged_entries(draw: st.DrawFn, text: str) -> str:
    """A cache entry's text, damaged as a disk, a hand or another program could: cut, bytes changed or inserted, a
    field removed or replaced, a record's value changed."""
    how = draw(st.sampled_from(["cut", "byte", "insert", "drop field", "field", "record value", "same"]))
    if how == "cut":
        return text[: draw(st.integers(0, len(text)))]
    if how in ("byte", "insert"):
        at = draw(st.integers(0, len(text)))
        piece = draw(st.text(min_size=1, max_size=4))
        return text[:at] + piece + text[at + (how == "byte") :]
    entry = json.loads(text)
    if how == "drop field":
        entry.pop(draw(st.sampled_from(ENTRY_FIELDS)))
    elif how == "field":
        entry[draw(st.sampled_from(ENTRY_FIELDS))] = draw(JSON_VALUES)
    elif how == "record value":
        record = entry["records"][draw(st.integers(0, len(entry["records"]) - 1))]
        record[draw(st.sampled_from([*record, "new"]))] = draw(JSON_VALUES)
    return json.dumps(entry, indent=draw(st.sampled_from([None, 1])))


def _sound(text: str, original: dict[str, Any]) -> bool:
    """Whether a damaged entry still says what the original said (its proof and its records unchanged)."""
    try:
        entry = json.loads(text)
    except ValueError:
        return False
    proof = ("format", "key", "record_counts", "records_sha256", "records")

    def same(a: object, b: object) -> bool:  # as JSON: 1, 1.0 and true are three values
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)

    return isinstance(entry, dict) and all(k in entry and same(entry[k], original[k]) for k in proof)


def test_cache_entries(tmp_path: Path) -> None:
    """A cache entry damaged in any way is either still sound and served as written, or a miss with one warning line
    naming it (issue 41: an entry that parsed was trusted); never other records, never a traceback."""
    from study_runner.simulation.cache import Cache
    from study_runner.simulation.cache import run_key

    judge = Judge("cache entry")
    key = run_key(case="hostile")
    Cache(tmp_path / "proto").put(key, ENTRY_RECORDS, {"case": "hostile"})
    original_text = (tmp_path / "proto" / key[:2] / f"{key}.json").read_text()
    original = json.loads(original_text)

    @given(damaged_entries(original_text))
    def case(text: str) -> None:
        with tempfile.TemporaryDirectory(dir=tmp_path) as name:
            cache = Cache(Path(name))
            path = Path(name) / key[:2] / f"{key}.json"
            path.parent.mkdir()
            path.write_text(text)
            sound = _sound(text, original)
            start = time.perf_counter()
            outcome = run_in_process(lambda _argv: _served(cache, key), [])
            got = _GOT.pop("records", "nothing")
            if outcome.failure is not None:
                kind = outcome.failure
            elif got == "nothing":
                kind = "traceback"
            elif sound:
                kind = "ok" if got == ENTRY_RECORDS and not outcome.stderr else "valid_refused"
            elif got is not None:
                kind = "invalid_accepted"
            else:
                lines = outcome.stderr.splitlines()
                kind = "ok" if len(lines) == 1 and lines[0].startswith(f"warning: cache entry {path}") else "bad_stderr"
            judge(Command([text[:200]], sound), [text[:200]], outcome, time.perf_counter() - start, kind)

    case()
    judge.finish()


_GOT: dict[str, Any] = {}


def _served(cache: Any, key: str) -> int:
    _GOT["records"] = cache.get(key)
    return 0


@pytest.mark.parametrize(
    ("command", "valid"),
    [
        (["-m", "generators", "mlfm", "--d", "99999999999999999999999", "-o", "{dir}/p.xml"], False),
        (["-m", "generators", "crossbar", "--hosts", "3", "--nbl", "", "-o", "{dir}/p.xml"], False),
        (["-m", "generators", "tofu", "--xyz", "1x1x1", "--zone", "auto", "-o", "{dir}/p.xml"], True),
        (["scripts/smpirun-on", "crossbar", "--hosts", "2", "--np", "\u0662", "--", "/bin/true"], False),
        (["scripts/smpirun-on", "mesh", "--width", "2", "--height", "2", "--keep", "", "--", "/bin/true"], False),
    ],
)
def test_real_commands(command: list[str], valid: bool, tmp_path: Path) -> None:
    """The same contract end to end, through the real commands (a subprocess each)."""
    argv = [arg.replace("{dir}", str(tmp_path)) for arg in command]
    program = [str(REPO / argv[0])] if argv[0].startswith("scripts/") else [sys.executable]
    environment = {**os.environ, "TOPOLAB_CACHE": str(tmp_path / "cache")}
    done = subprocess.run(
        [*program, *argv[1 if program[0] != sys.executable else 0 :]],
        capture_output=True, text=True, cwd=REPO, timeout=HANG_SECONDS, env=environment, check=False,
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    if valid:
        assert done.returncode == 0, done.stderr
        assert load(tmp_path / "p.xml")["hosts"] == 12
    else:
        assert done.returncode == 2
        assert len(done.stderr.splitlines()) == 1 and " error: " in done.stderr


_STUDY = (REPO / "tests" / "data" / "schema" / "study.toml").read_text(encoding="utf-8")
_BASES = {  # a good file of each kind, and where a drawn nesting goes in it (a study's reference value takes any)
    "study": (_STUDY + '[reference.deep]\nsource = "s"\n', "value"),
    "sweep": ((REPO / "tests" / "data" / "schema" / "sweep.toml").read_text(encoding="utf-8"), None),
    "jobs": ('[platform]\nfamily = "crossbar"\nhosts = 4\n[[jobs]]\nname = "a"\napp = "pingpong"\nranks = 2\n', None),
}
_SPECIAL = ("a FIFO", "a character device", "a directory")


@st.composite
def toml_files(draw: st.DrawFn) -> tuple[str, str, str, bool]:
    """A kind of file (study, sweep, jobs), how it is hostile, its text, and whether it is valid (issue 61, point 6):
    nesting of any depth (arrays, inline tables, dotted keys; 3 levels are the study's own, so 3 + n > 32 is too
    deep), a size about the 1 MiB limit, a FIFO, a device or a directory; only a study's reference value may nest."""
    kind = draw(st.sampled_from(sorted(_BASES)))
    text, slot = _BASES[kind]
    mode = draw(st.sampled_from(["none", "arrays", "tables", "dotted key", "size", *_SPECIAL]))
    n = draw(st.one_of(st.integers(1, 40), st.sampled_from([400, 600, 5000, 100_000])))
    key = slot or "extra"
    if mode == "arrays":
        text += f"{key} = {'[' * n}{']' * n}\n"
    elif mode == "tables":
        text += f"{key} = {'{a = ' * n}1{'}' * n}\n"
    elif mode == "dotted key":
        text += f"{key}{'.a' * n} = 1\n"
    elif slot is not None:  # the reference's value, plain
        text += f"{slot} = 1\n"
    if mode == "size":
        text += "#" * (MAX_BYTES - len(text.encode()) + draw(st.integers(-2, 2))) + "\n"
    depth = {"arrays": 3 + n, "tables": 3 + n, "dotted key": 3 + n}.get(mode, 0)
    valid = mode not in _SPECIAL and depth <= MAX_DEPTH and len(text.encode()) <= MAX_BYTES
    valid = valid and (mode in ("none", "size") or slot is not None)  # elsewhere, a nested key is an unknown key
    return kind, mode, text, valid


def _entry_point(kind: str) -> Any:
    """What each entry point does with the file, as a command: ``scripts/sweep FILE --list``; the study's and the
    jobs file's loaders (what ``scripts/repro`` and ``scripts/run-jobs`` do before anything runs), a StudyError one
    ``error:`` line and 2."""
    from study_runner.studies.study import load_study
    from study_runner.sweeps import sweep_cli
    from study_runner.tools.run_jobs import read_jobs_file

    if kind == "sweep":
        return lambda argv: sweep_cli.main([argv[0], "--list", "--results", argv[1]])
    load = load_study if kind == "study" else read_jobs_file

    def loaded(argv: list[str]) -> int:
        try:
            load(Path(argv[0]))
        except StudyError as err:
            print(f"{kind}: error: {err}", file=sys.stderr)
            return 2
        return 0

    return loaded


def test_toml_files(tmp_path: Path) -> None:
    """Every TOML entry point reads its file through one reader (``studies/toml_input.py``): a FIFO, a device, a
    directory, a file over 1 MiB or nested over 32 levels is one error line and exit 2, at once (never a
    RecursionError, a minute of parsing or a FIFO read forever); the rest loads."""
    judge = Judge("toml files")

    @given(toml_files())
    def case(drawn: tuple[str, str, str, bool]) -> None:
        kind, mode, text, valid = drawn
        with tempfile.TemporaryDirectory(dir=tmp_path) as name:
            path = Path(name) / f"{kind}.toml"
            if mode == "a FIFO":
                os.mkfifo(path)
            elif mode == "a character device":
                path.symlink_to("/dev/zero")
            elif mode == "a directory":
                path.mkdir()
            else:
                path.write_text(text, encoding="utf-8")
            argv = [str(path), str(Path(name) / "results")]
            start = time.perf_counter()
            outcome = run_in_process(_entry_point(kind), argv)
            command = Command([kind, mode, text[:120]], valid)
            judge(command, command.argv, outcome, time.perf_counter() - start, verdict(command, outcome))

    case()
    judge.finish()
