"""One simulation made ready, as one value: exactly what runs (its argv), every file it reads with what that file
contributes (the SHA-256 of its bytes, or what stands for them), the SimGrid build that runs it and how its output
is read. Its cache key, the provenance stored with its result and its history key (what it cost, whatever build
runs it) are all computed from this value and nothing else, so none of them can drift from what runs.

>>> app = Path("/opt/app")
>>> simulation = Simulation(("smpirun", "-np", "2", str(app)), {app: "1f2e"}, "SimGrid 4.1", built=(app,))
>>> simulation.provenance()["argv"][-1], simulation.provenance()["files"]
('/opt/app', {'/opt/app': '1f2e'})
>>> rebuilt = Simulation(simulation.argv, {app: "9a9a"}, "SimGrid 4.2", built=(app,))
>>> rebuilt.key == simulation.key, rebuilt.history_key == simulation.history_key
(False, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from functools import cached_property
from pathlib import Path
from typing import Any

from generators import platform_files
from study_runner.simulation.cache import file_digest
from study_runner.simulation.cache import run_key
from study_runner.simulation.smpi import simgrid_version
from study_runner.simulation.smpi import smpirun_command

__all__ = ["Simulation", "Steps", "command_key", "smpirun_simulation"]


@dataclass(frozen=True)
class Simulation:
    """A simulation ready to run: ``argv`` runs it, word for word.

    ``files``: every file it reads by path, with what it contributes to the result (the SHA-256 of its bytes, or
    what stands for them: a trace recorded on any placement stands for every hostfile). ``simgrid``: the SimGrid
    build (``smpi.simgrid_version``). ``output``: how its output is read (``json``, a third-party format,
    ``replay``, ``jobs``, ``links``...; None for a recording, whose output is its trace). ``facts``: anything else
    that decides the result and that the argv does not say. ``built``: the files a rebuild changes (app binaries,
    topolab's and SimGrid's programs), left out of the history key by their content, kept by their name. ``history``:
    what a file stands for in the history key when it is made from built files (a jobs file naming the traces of
    apps that a rebuild changes: their recordings' history keys).
    """

    argv: tuple[str, ...]
    files: Mapping[Path, str]
    simgrid: str
    output: str | None = "json"
    facts: Mapping[str, Any] = field(default_factory=dict)
    built: tuple[Path, ...] = ()
    history: Mapping[Path, str] = field(default_factory=dict)

    def _described(self) -> dict[str, Any]:
        return {**({"output": self.output} if self.output is not None else {}), **self.facts}

    @cached_property
    def key(self) -> str:
        """The cache key: the argv with each file read replaced by what it contributes (paths never enter a key),
        the SimGrid build, how the output is read and the other facts (:func:`command_key`)."""
        return command_key(self.argv, self.files, simgrid=self.simgrid, **self._described())

    @cached_property
    def history_key(self) -> str:
        """The key of this simulation whatever build runs it: the key without the SimGrid build, with each built
        file standing for its name instead of its bytes (a rebuilt app is the same simulation; another app is not)."""
        built = {Path(path).absolute() for path in self.built}
        files = {path: f"built {Path(path).name}" if Path(path).absolute() in built else digest
                 for path, digest in self.files.items()}  # fmt: skip
        files.update(self.history)
        return command_key(self.argv, files, **self._described())

    def provenance(self) -> dict[str, Any]:
        """What produced a result, as stored beside it in the cache and with a recorded trace: the argv as it ran,
        each file read with its digest, the SimGrid build, how the output was read and the other facts."""
        files = {str(path): digest for path, digest in self.files.items()}
        return {"argv": list(self.argv), "files": files, "simgrid": self.simgrid, **self._described()}


@dataclass(frozen=True)
class Steps:
    """Simulations that give one result together, run one after the other in one work directory (a run among
    neighbours: its jobs together, then each alone, ``simulation.jobs``), as one value: its key, history key and
    provenance are its steps', by name and in order, so that none of them can drift from what runs either.

    >>> one = Simulation(("jobs_run", "a.xml", "together.txt"), {}, "SimGrid 4.1", output="jobs")
    >>> two = Simulation(("jobs_run", "a.xml", "alone.txt"), {}, "SimGrid 4.1", output="jobs")
    >>> Steps({"together": one, "alone": two}).key == Steps({"together": one, "alone": one}).key
    False
    >>> list(Steps({"together": one}).provenance()["steps"])
    ['together']
    """

    steps: Mapping[str, Simulation]

    @cached_property
    def key(self) -> str:
        """The cache key of the result: each step's key, by name, in order."""
        return run_key(steps=[[name, step.key] for name, step in self.steps.items()])

    @cached_property
    def history_key(self) -> str:
        """Each step's history key, by name, in order (:attr:`Simulation.history_key`)."""
        return run_key(steps=[[name, step.history_key] for name, step in self.steps.items()])

    @property
    def simgrid(self) -> str:
        """The SimGrid build that runs the steps (the first one's: they are prepared together)."""
        return next(iter(self.steps.values())).simgrid

    @property
    def files(self) -> dict[Path, str]:
        """Every file a step reads, with what it contributes."""
        return {path: digest for step in self.steps.values() for path, digest in step.files.items()}

    def provenance(self) -> dict[str, Any]:
        """Each step's provenance (:meth:`Simulation.provenance`), by name, in the order they run."""
        return {"steps": {name: step.provenance() for name, step in self.steps.items()}}


def smpirun_simulation(
    binary: Path,
    args: Sequence[str],
    platform: Path,
    hostfile: Path,
    ranks: int,
    options: Sequence[str] = (),
    *,
    output: str | None = "json",
    facts: Mapping[str, Any] | None = None,
    files: Mapping[Path, str] | None = None,
    launcher: Sequence[str] = (),
) -> Simulation:
    """The one way a simulation of ``binary`` under smpirun is prepared, for every entry point (a study's or sweep's
    runs, their recordings, replays and traced twins, ``smpirun-on``, a job's recording, the benchmarks): its
    command (``smpi.smpirun_command``: ``launcher`` holds smpirun's own options, ``options`` the run's SimGrid
    options) and what it reads: ``files``, or by default the platform (a compiled one's library and parameters),
    the hostfile and the binary, each by the SHA-256 of its bytes.
    """
    command = smpirun_command(binary, args, platform, hostfile, ranks, options, launcher)
    if files is None:
        platform_digest = "+".join(file_digest(part) for part in platform_files(Path(platform)))
        files = {Path(platform): platform_digest, Path(hostfile): file_digest(hostfile), binary: file_digest(binary)}
    return Simulation(tuple(command), files, simgrid_version(), output, facts or {}, built=(binary,))


def command_key(command: Sequence[str], files: Mapping[Path, str], **facts: object) -> str:
    """The cache key of the smpirun ``command``: the command itself, word for word, with each file it names by path
    replaced by what it contributes (``files``: its path -> the SHA-256 of its bytes, or what stands for it), and
    the ``facts`` that the command does not say (the SimGrid version, how the output is read). Whatever changes the
    command changes the key: it is made from the command, not beside it.

    A word naming an existing file by an absolute path that ``files`` does not cover (an input file among the
    program's arguments) stands for the SHA-256 of its bytes too: a path is never in a key, a file's content always.

    >>> app = {Path("/bin/sh"): "sha256:1f2e"}
    >>> key = command_key(["smpirun", "-np", "2", "/bin/sh"], app, simgrid="4.1")
    >>> key == command_key(["smpirun", "-np", "2", "/bin/sh"], app, simgrid="4.1")
    True
    >>> key == command_key(["smpirun", "-np", "3", "/bin/sh"], app, simgrid="4.1")
    False
    """
    named = {Path(path).absolute(): stands for path, stands in files.items()}
    words = []
    for word in command:
        path = Path(word).absolute() if word else None
        if path is not None and path in named:
            words.append(named[path])
        elif word.startswith("/") and Path(word).is_file():
            words.append(file_digest(Path(word)))
        else:
            words.append(word)
    return run_key(command=words, **facts)
