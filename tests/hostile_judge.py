"""The judge of the hostile-input property tests (tests/test_hostile_input.py, tests/test_hostile_environment.py):
a case's outcome (exit status and stderr, or the traceback or hang it ended in), its verdict against the oracle, and
the report of the long run (``scripts/check-hostile-input``: every case counted into ``$TOPOLAB_HOSTILE_REPORT``,
and a survey that keeps going after a failure)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import traceback
from collections import Counter
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import BIN
from tests.hostile_commands import Command

HANG_SECONDS = 30  # the threshold: a case running longer is a hang
REPORT = os.environ.get("TOPOLAB_HOSTILE_REPORT")
SURVEY = os.environ.get("TOPOLAB_HYPOTHESIS_PROFILE") == "long"  # count every failure instead of stopping


class Hang(Exception):
    """A case ran longer than HANG_SECONDS."""


class Ran(Exception):
    """smpirun-on got as far as running smpirun (``os.execvp``, replaced): the command it would run."""

    def __init__(self, command: Sequence[str]) -> None:
        super().__init__(command)
        self.command = list(command)


@dataclass
class Outcome:
    status: int | None
    stderr: str
    failure: str | None = None
    """``"traceback"`` or ``"hang"``, with ``detail``."""
    detail: str = ""
    command: list[str] | None = None
    stdout: str = ""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    def expire(signum: int, frame: object) -> None:
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_in_process(main: Callable[[list[str]], int], argv: list[str]) -> Outcome:
    """``main(argv)`` with stdout and stderr captured: its exit status, or the traceback or hang it ended in."""
    err = io.StringIO()
    command = None
    try:
        with time_limit(HANG_SECONDS), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            try:
                status: int | None = main(argv)
            except SystemExit as exit_:
                status = exit_.code if isinstance(exit_.code, int) else 1
            except Ran as ran:
                status, command = 0, ran.command
    except Hang as hang:
        return Outcome(None, err.getvalue(), "hang", str(hang))
    except Exception:  # any exception escaping main is the bug this test looks for
        return Outcome(None, err.getvalue(), "traceback", traceback.format_exc(limit=-4))
    return Outcome(status, err.getvalue(), command=command)


def verdict(command: Command, outcome: Outcome) -> str:
    """``ok`` or what went wrong: traceback, hang, invalid accepted, valid refused, bad status or stderr."""
    if outcome.failure is not None:
        return outcome.failure
    if outcome.status == 0:
        return "ok" if command.ok else "invalid_accepted"
    if command.ok:
        return "valid_refused"
    if outcome.status != 2:
        return "bad_status"
    lines = outcome.stderr.splitlines()
    return "ok" if len(lines) == 1 and " error: " in lines[0] else "bad_stderr"


def load(path: Path) -> dict[str, Any]:
    done = subprocess.run([str(BIN / "platform_check"), str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


class Judge:
    """Records every case (the report of the long run) and fails at once, or at the end of a survey."""

    def __init__(self, test: str) -> None:
        self.test, self.failures = test, []

    def __call__(self, command: Command, argv: list[str], outcome: Outcome, seconds: float, kind: str) -> None:
        if REPORT:
            record = {"test": self.test, "verdict": kind, "valid": command.ok, "seconds": round(seconds, 4)}
            with open(REPORT, "a", encoding="utf-8") as report:
                report.write(json.dumps(record | ({} if kind == "ok" else {"argv": argv})) + "\n")
        if kind != "ok":
            message = f"{kind}: {argv!r}\nexit {outcome.status}, stderr:\n{outcome.stderr}{outcome.detail}"
            if not SURVEY:
                raise AssertionError(message)
            self.failures.append(message)

    def finish(self) -> None:
        assert not self.failures, f"{len(self.failures)} failures, the first:\n{self.failures[0]}"


def run_command(argv: Sequence[str], env: dict[str, str], cwd: Path, seconds: float = HANG_SECONDS) -> Outcome:
    """A real command in a subprocess: its exit status and output, or the traceback or hang it ended in."""
    try:
        done = subprocess.run(
            list(argv), capture_output=True, text=True, errors="replace", env=env, cwd=cwd, timeout=seconds, check=False
        )
    except subprocess.TimeoutExpired:
        return Outcome(None, "", "hang", f"still running after {seconds} s")
    if "Traceback (most recent call last)" in done.stderr:
        return Outcome(done.returncode, done.stderr, "traceback", stdout=done.stdout)
    return Outcome(done.returncode, done.stderr, stdout=done.stdout)


def summary(report: Path, seconds: int) -> str:
    """What the cases of a long run did (``scripts/check-hostile-input``): how many ran, and each kind of failure.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "report.jsonl"
    >>> case = {"verdict": "ok", "valid": True, "test": "t", "argv": []}
    >>> _ = path.write_text(json.dumps(case) + "\\n" + json.dumps({**case, "verdict": "hang", "valid": False}) + "\\n")
    >>> print(summary(path, 5).splitlines()[1:3])
    ['hostile input: 2 cases in 5 s (1 valid, 1 invalid)', '  tracebacks: 0']
    """
    records = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines() if line.strip()]
    verdicts = Counter(record["verdict"] for record in records)
    valid = sum(record["valid"] for record in records)
    lines = ["", f"hostile input: {len(records)} cases in {seconds} s ({valid} valid, {len(records) - valid} invalid)"]
    kinds = (("tracebacks", "traceback"), ("hangs", "hang"), ("invalid values accepted", "invalid_accepted"),
             ("valid values refused", "valid_refused"))  # fmt: skip
    for label, verdict in kinds:
        lines.append(f"  {label}: {verdicts.pop(verdict, 0)}")
    verdicts.pop("ok", None)
    lines.append(f"  other failures: {sum(verdicts.values())}" + (f" {dict(verdicts)}" if verdicts else ""))
    lines += [f"  e.g. {r['verdict']}: {r['test']}: {r['argv']}" for r in records if r["verdict"] != "ok"][:5]
    return "\n".join(lines)


if __name__ == "__main__":  # scripts/check-hostile-input: python -m tests.hostile_judge REPORT SECONDS
    print(summary(Path(sys.argv[1]), int(sys.argv[2])))
