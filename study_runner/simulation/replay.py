"""Record once, replay many: an app's time-independent (TI) trace, recorded by one smpirun and replayed on other
platforms by SMPI's replayer instead of running the app again.

A TI trace lists what each rank did, in order, without times: ``0 sendRecv 65536 1 65536 15``, ``0 allreduce 1 0``,
``0 compute 5e+06``. Recording (:func:`record_options`) is an ordinary run with SimGrid's TI tracing on; SimGrid
writes one file per rank and an index that lists them. Replaying (:func:`replay_options`) runs SimGrid's
``smpireplaymain`` under ``smpirun -replay INDEX`` on any platform: point-to-point actions become the same SMPI
messages, collective actions run SMPI's collective algorithms (the same ``smpi/<collective>`` and selector options
must be given, and are: a replay takes the run's options), and ``compute`` actions (the apps' modelled computation,
``tl_model_compute``) execute their flops on the rank's host. The replay reports SMPI's simulated time only; the
app's own JSON fields do not exist in a replay.

What a trace depends on: the app binary, its arguments, the rank count, the SMPI options, SimGrid, and the speed of
each rank's host (an app's modelled computation is traced as flops, ``seconds x host speed`` on the recording
platform). It does not depend on the network: the apps' sequence of MPI calls never depends on time. The trace is
therefore recorded once per (app, arguments, ranks, options, host speeds) on the first platform that needs it and
kept in the cache's trace store (:class:`TraceStore`), written atomically.

Measured differences from running the app (tests/test_replay.py, docs/sweeps.md "Record once, replay many"): none
for communication, collectives and SMPI's per-message overheads (``smpi/os``, ``smpi/or``, ``smpi/ois``): equal to
the last of 15 printed decimals. A ``compute`` amount is printed with 6 significant digits (SimGrid 4.1's
``CpuTIData::print``), so each modelled computation of the replay may differ by up to half a unit of its 6th digit
(5e-6 of itself at most); measured: 3.9e-7 of the simulated time of a combine. MPI_Wtime's injected cost
(``smpi/wtime``; topolab's standard options make it 0) is not in a trace.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from study_runner.errors import StudyError
from study_runner.simulation.cache import file_digest
from study_runner.simulation.compute import SIMULATED_TIME_OPTIONS
from study_runner.simulation.compute import compute_timing
from study_runner.simulation.prepared import Simulation
from study_runner.simulation.prepared import smpirun_simulation
from study_runner.simulation.simgrid_options import cfg
from study_runner.simulation.smpi import SETUP_HINT
from study_runner.simulation.smpi import SmpirunOutcome
from study_runner.simulation.smpi import run_smpirun_measured
from study_runner.simulation.workdirs import work_directory

__all__ = [
    "REPLAY_METRIC",
    "REPLAY_OPTIONS",
    "TRACE_NAME",
    "TraceStore",
    "placement_free",
    "record_options",
    "replay_options",
    "replay_program",
    "replayed_records",
    "trace_recording",
]

TRACE_NAME = "ti-trace"
"""The index file a recording writes in its work directory (its rank files go to ``ti-trace_files/``)."""

TRACE_DIGESTS = "rank_sha256"
"""The field of a stored trace's ``inputs.json`` that lists the SHA-256 of each rank's file, rank 0 first."""

REPLAY_METRIC = "simulated_s"
"""The one field of a replayed run's record: SMPI's simulated time, seconds."""

REPLAY_OPTIONS: tuple[str, ...] = (
    # The trace's compute actions are the app's modelled computation: executed only with computation simulated.
    cfg("smpi/simulate-computation:yes"),
    # ... but then SMPI also times the replayer's own code between two actions and charges every gap of 1 us or more
    # (smpi/cpu-threshold) at smpi/host-speed: measured, the replayed time moved from run to run by up to 0.4 ns in
    # 16 us (a 16-rank all-to-all with --verify). No gap is charged (a threshold of 1e9 s; SimGrid 4.1's "-1 for
    # infinity" charges every gap instead: the option's callback sets infinity, then the flag stores -1): the trace's
    # compute actions are executed as flops, which the threshold does not filter, and the replay is deterministic.
    cfg("smpi/cpu-threshold:1e9"),
    # smpireplaymain has no globals of its own: no per-rank copy of it (privatization) is needed.
    cfg("smpi/privatization:no"),
    *SIMULATED_TIME_OPTIONS,
)
"""What a replay adds to the recorded run's options."""


def record_options(trace: str | Path = TRACE_NAME) -> tuple[str, ...]:
    """smpirun options that write the run's TI trace to ``trace`` (its index) and ``<trace>_files/`` (one file per
    rank), relative to smpirun's working directory unless absolute; modelled computation is traced too.

    >>> record_options()[-1]
    '--cfg=tracing/filename:ti-trace'
    """
    return (
        cfg("tracing:yes"),
        cfg("tracing/smpi:yes"),
        cfg("tracing/smpi/format:TI"),
        cfg("tracing/smpi/computing:yes"),
        cfg("tracing/smpi/sleeping:yes"),
        cfg(f"tracing/filename:{trace}"),
    )


def trace_recording(
    binary: Path,
    args: Sequence[str],
    platform_file: Path,
    hostfile: Path,
    ranks: int,
    options: Sequence[str],
    files: Mapping[Path, str],
) -> Simulation:
    """The recording of the TI trace of ``binary`` run with ``args`` on the hosts of ``hostfile`` with the SMPI
    ``options`` after the standard ones: the trace is its output, and its key, the trace's, holds what the trace
    depends on (``files``: the binary, and what stands for the platform and the hostfile; ``placement_free``).
    """
    return smpirun_simulation(binary, args, platform_file, hostfile, ranks, (*options, *record_options()),
                              output=None, facts={"trace": "SMPI time-independent"}, files=files)  # fmt: skip


def placement_free(
    binary: Path, binary_digest: str, platform_file: Path, hostfile: Path, speeds: Sequence[float]
) -> dict[Path, str]:
    """What a recording reads when its app's actions do not depend on time (a replay study's app): the binary and,
    of the platform, only the speed of each rank's host (``speeds``: an app's modelled computation is traced as flops
    at that speed), on any placement. An app that times itself (a background job sending at a rate) depends on its
    hosts: its recording reads the whole platform and hostfile (``simulation.jobs``)."""
    return {
        binary: binary_digest,
        platform_file: f"host speeds {list(speeds[:1]) if len(set(speeds)) == 1 else list(speeds)}",
        hostfile: "any placement",
    }


def replay_program() -> Path:
    """SimGrid's replayer, ``lib/simgrid/smpireplaymain`` of the SimGrid whose smpirun is on ``PATH``."""
    smpirun = shutil.which("smpirun")
    if smpirun is None:
        raise StudyError(f"smpirun not found: {SETUP_HINT}")
    program = Path(smpirun).resolve().parents[1] / "lib" / "simgrid" / "smpireplaymain"
    if not program.is_file():
        raise StudyError(f"this SimGrid has no trace replayer ({program} is missing): {SETUP_HINT}")
    return program


def replay_options(options: Sequence[str], index: Path) -> tuple[str, ...]:
    """The options of the smpirun of SimGrid's replayer (:func:`replay_program`) that replays the trace listed in
    ``index``: the recorded run's ``options``, then :data:`REPLAY_OPTIONS` (after topolab's standard ones)."""
    return (*options, *REPLAY_OPTIONS, "-replay", str(Path(index).absolute()))


def replayed_records(stderr: str, label: str) -> list[dict[str, Any]]:
    """The record of a replay: SMPI's simulated time (``smpi/display-timing``), from what smpirun printed."""
    timing = compute_timing(stderr)
    if REPLAY_METRIC not in timing:
        raise StudyError(f"{label}: the replay printed no simulated time (smpi/display-timing)")
    return [{REPLAY_METRIC: timing[REPLAY_METRIC]}]


class TraceStore:
    """TI traces by key, one directory each (``<root>/<key[:2]>/<key>/rank-<i>.txt`` and ``inputs.json``)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).absolute()

    @classmethod
    def of_cache(cls, cache_dir: Path) -> TraceStore:
        """The trace store of the result cache in ``cache_dir`` (its ``traces/``)."""
        return cls(Path(cache_dir) / "traces")

    def path(self, key: str) -> Path:
        """The directory of the trace ``key`` (which may not exist yet)."""
        return self.root / key[:2] / key

    def has(self, key: str) -> bool:
        """Whether the trace ``key`` is stored and intact (a directory appears whole: :meth:`store` renames it into
        place). A stored trace whose rank files do not match the SHA-256 its ``inputs.json`` records for each (edited,
        truncated, removed, or stored by an older topolab) is removed, with one warning naming it: it is recorded
        again."""
        directory = self.path(key)
        if not directory.is_dir():
            return False
        why = _trace_problem(directory)
        if why is None:
            return True
        print(f"warning: stored trace {directory} is damaged ({why}): recording it again", file=sys.stderr)
        shutil.rmtree(directory, ignore_errors=True)
        return False

    def rank_files(self, key: str, ranks: int) -> list[Path]:
        """The file of each rank of the trace ``key`` (which may not be stored yet), rank 0 first."""
        return [self.path(key) / f"rank-{rank}.txt" for rank in range(ranks)]

    def write_index(self, key: str, ranks: int, index: Path) -> None:
        """Write ``index``, the file ``smpirun -replay`` reads: the absolute path of each rank's file, rank 0 first."""
        index.write_text("".join(f"{name}\n" for name in self.rank_files(key, ranks)), encoding="utf-8")

    def record(self, recording: Simulation, ranks: int, directory: Path, timeout: float, label: str) -> SmpirunOutcome:
        """Run ``recording`` (:func:`trace_recording`) in ``directory`` within ``timeout`` and keep its trace of
        ``ranks`` ranks under its key; what its smpirun printed and cost. A failing app fails its recording in
        smpirun-on's words, ``label`` naming it (SimGrid patch 0027: the TI tracing aborted where a rank exited early
        or the ranks deadlocked, before SimGrid said how the application failed)."""
        outcome = run_smpirun_measured(recording.argv, directory, timeout, label)
        self.store(recording.key, directory / TRACE_NAME, ranks, recording.provenance())
        return outcome

    def store(self, key: str, recorded: Path, ranks: int, inputs: dict[str, Any]) -> None:
        """Keep the trace a recording wrote (``recorded``: its index, listing one file per rank), under ``key``.

        The files are copied into a work directory of the store, then renamed into place: a killed recording leaves
        no partial trace (the next run removes the work directory). A trace stored meanwhile by another recording
        of the same key is kept.
        """
        try:
            listed = [line.strip() for line in recorded.read_text(encoding="utf-8").splitlines() if line.strip()]
        except OSError as err:
            raise StudyError(f"the recording wrote no trace index {recorded}: {err.strerror or err}") from None
        if len(listed) != ranks:
            raise StudyError(f"the trace index {recorded} lists {len(listed)} files for {ranks} ranks")
        final = self.path(key)
        final.parent.mkdir(parents=True, exist_ok=True)
        with work_directory("trace", parent=final.parent) as staging:
            for rank, name in enumerate(listed):
                source = Path(name) if Path(name).is_absolute() else recorded.parent / name
                try:
                    shutil.copyfile(source, staging / f"rank-{rank}.txt")
                except OSError as err:
                    raise StudyError(f"cannot read the trace of rank {rank}, {source}: {err.strerror}") from None
            digests = [file_digest(staging / f"rank-{rank}.txt") for rank in range(ranks)]
            manifest = {**inputs, TRACE_DIGESTS: digests}
            (staging / "inputs.json").write_text(json.dumps(manifest, sort_keys=True) + "\n", encoding="utf-8")
            staging.chmod(0o755)
            if not final.exists():
                try:
                    staging.rename(final)
                except OSError:
                    if not final.is_dir():
                        raise


def _trace_problem(directory: Path) -> str | None:
    """Why the stored trace in ``directory`` cannot be trusted, or None when each rank file has its recorded SHA-256."""
    try:
        digests = json.loads((directory / "inputs.json").read_text(encoding="utf-8")).get(TRACE_DIGESTS)
    except (OSError, ValueError, AttributeError):
        return "no readable inputs.json"
    if not isinstance(digests, list) or not digests:
        return "inputs.json records no digest of its rank files"
    for rank, digest in enumerate(digests):
        path = directory / f"rank-{rank}.txt"
        try:
            if file_digest(path) != digest:
                return f"rank-{rank}.txt does not match its SHA-256"
        except OSError:
            return f"rank-{rank}.txt is missing or unreadable"
    return None
