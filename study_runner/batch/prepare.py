"""Runs made ready, a study's and a sweep's alike: their platforms built and written, each run's hostfile, command and
cache key.

Everything that can be wrong with the runs (a bad platform, a placement that does not fit, a missing binary or one
built with a real MPI's compiler, an option SimGrid does not know) is found here, before anything is simulated;
``study_runner.batch.execute`` then runs what this prepares. A run that
replays (``RunSpec.replay``) gets the recording of its trace beside it (``study_runner.simulation.replay``); a run
traced for its link bytes (``RunSpec.trace_links``) gets its traced twin after it (``<id>.links``,
``study_runner.simulation.tracing``), a simulation of the batch like the others.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path

from generators import TopologyError
from generators import build_platform
from generators import place_ranks
from generators import platform_files
from generators import platform_suffix
from generators import write_hostfile
from generators import write_platform
from generators.model import Platform
from study_runner.batch.execute import PreparedRun
from study_runner.batch.runs import PlatformSpec
from study_runner.batch.runs import RunSpec
from study_runner.errors import StudyError
from study_runner.simulation.cache import file_digest
from study_runner.simulation.codes import app_path
from study_runner.simulation.codes import runnable_binary
from study_runner.simulation.compute import calibration
from study_runner.simulation.compute import compute_options
from study_runner.simulation.jobs import MEASURED
from study_runner.simulation.jobs import Job
from study_runner.simulation.jobs import allocate
from study_runner.simulation.jobs import prepare_jobs
from study_runner.simulation.node_memory import MemoryTarget
from study_runner.simulation.node_memory import memory_mode_speed
from study_runner.simulation.prepared import smpirun_simulation
from study_runner.simulation.replay import TraceStore
from study_runner.simulation.replay import placement_free
from study_runner.simulation.replay import replay_options
from study_runner.simulation.replay import replay_program
from study_runner.simulation.replay import trace_recording
from study_runner.simulation.simgrid_options import options_problem
from study_runner.simulation.tracing import LINK_BYTES_FORMAT
from study_runner.simulation.tracing import tracing_options

__all__ = ["prepare_runs"]


def prepare_runs(
    name: str,
    specs: Mapping[str, PlatformSpec],
    runs: Sequence[RunSpec],
    quick: bool,
    bin_dir: Path,
    workdir: Path,
    traces: TraceStore | None = None,
) -> tuple[dict[str, Platform], list[PreparedRun]]:
    """Build every platform of ``specs`` that ``runs`` use (a quick run may use few of a study's platforms), write
    its XML and ``runs``' hostfiles under ``workdir``, key each run (``quick``: with its quick arguments). Replays
    read and record their traces in ``traces``.

    Raises ``StudyError`` naming ``name`` (the study or sweep) for a bad platform, a placement that does not fit, a
    missing app binary or an option SimGrid refuses, before anything is simulated.
    """
    used = {spec.platform for spec in runs}
    platforms, xml_paths, xml_digests = _written_platforms(
        name, {pname: spec for pname, spec in specs.items() if pname in used}, workdir
    )
    binary_digests: dict[str, str] = {}
    checked: set[tuple[str, ...]] = set()
    prepared = []
    recordings: dict[str, PreparedRun] = {}
    reference = calibration().flops if any(spec.compute != "off" for spec in runs) else None
    for spec in runs:
        label = f"{name}/{spec.id}"
        binary = runnable_binary(spec.app, label, bin_dir)
        if spec.app not in binary_digests:
            binary_digests[spec.app] = file_digest(binary)
        if spec.neighbours:
            options = (*compute_options(spec.compute, None), *spec.options)
            _check_options(label, options, checked)
            platform_file = (xml_paths[spec.platform], xml_digests[spec.platform])
            prepared.append(
                _jobs_run(spec, label, platforms[spec.platform], platform_file, bin_dir, options, workdir, traces)
            )
            continue
        try:
            hosts = place_ranks(platforms[spec.platform], spec.ranks, spec.placement, spec.ranks_per_node)
        except TopologyError as err:
            raise StudyError(f"{label}: {err}") from None
        hostfile = workdir / f"{spec.id}.hosts"
        write_hostfile(hosts, hostfile)
        args = spec.arguments(quick)
        compute, scale = _computation(spec, label, platforms[spec.platform], hosts, reference)
        options = (*compute, *spec.options)
        _check_options(label, options, checked)
        files = {xml_paths[spec.platform]: xml_digests[spec.platform], hostfile: file_digest(hostfile),
                 binary: binary_digests[spec.app]}  # fmt: skip
        simulation = smpirun_simulation(binary, args, xml_paths[spec.platform], hostfile, spec.ranks, options,
                                        output=spec.output, files=files)  # fmt: skip
        run = PreparedRun(spec, label, simulation, hosts, binary, xml_paths[spec.platform], hostfile, scale)
        if spec.replay:
            if traces is None:
                raise StudyError(f"{label}: a replay needs a trace store")
            run = _replay(run, args, options, platforms[spec.platform], traces, recordings, workdir)
        prepared.append(run)
        if spec.trace_links or spec.counters:
            prepared.append(_traced(run, args, options))
    return platforms, prepared


def _computation(
    spec: RunSpec, label: str, platform: Platform, hosts: list[str], reference: float | None
) -> tuple[tuple[str, ...], float | None]:
    """The SMPI options of the run's compute mode (``simulation.compute``) and its compute scale: simulated seconds
    of computation per rank per benchmarked second (``PreparedRun.compute_scale``; None when computation is off).

    ``memory``: the burst's memory part at the rank's share of the node's memory bandwidth, the platform's
    ``memory_bw`` shared by the ranks of its fullest host (``simulation.node_memory``)."""
    if spec.compute == "off" or reference is None:
        return compute_options(spec.compute), None
    core = platform.hosts[0].speed
    if spec.compute != "memory":
        return compute_options(spec.compute, reference), reference / (core * spec.ranks)
    node, core_bw = platform.params.get("memory_bw"), platform.params.get("core_memory_bw")
    if not isinstance(node, int | float) or spec.memory_fraction is None:
        raise StudyError(f'{label}: compute = "memory" needs the node\'s memory bandwidth: platform {platform.name} '
                         "records none (its memory_bw, e.g. \"42.6GBps\")")  # fmt: skip
    target = MemoryTarget(float(node), max(Counter(hosts).values()), core_bw if isinstance(core_bw, float) else None)
    speed, local_work, _ = memory_mode_speed(reference, spec.memory_fraction, core, target)
    return compute_options("memory", speed, local_work), speed / (core * spec.ranks)


def _written_platforms(
    name: str, specs: Mapping[str, PlatformSpec], workdir: Path
) -> tuple[dict[str, Platform], dict[str, Path], dict[str, str]]:
    """Each platform of ``specs`` built and written under ``workdir``: the models, their files and their digests."""
    platforms: dict[str, Platform] = {}
    xml_paths: dict[str, Path] = {}
    for pname, pspec in specs.items():
        try:
            platforms[pname] = build_platform(pspec.family, pspec.params)
            xml_paths[pname] = workdir / f"{pname}{platform_suffix(platforms[pname])}"
            write_platform(platforms[pname], xml_paths[pname])
        except TopologyError as err:
            raise StudyError(f"{name}: platform {pname}: {err}") from None
    digests = {pname: "+".join(file_digest(part) for part in platform_files(path)) for pname, path in xml_paths.items()}
    return platforms, xml_paths, digests


def _jobs_run(
    spec: RunSpec,
    label: str,
    platform: Platform,
    platform_file: tuple[Path, str],
    bin_dir: Path,
    options: tuple[str, ...],
    workdir: Path,
    traces: TraceStore | None,
) -> PreparedRun:
    """A run among neighbours (``RunSpec.neighbours``): every job's hosts from the run's allocation, and its
    simulations (``simulation.jobs.prepare_jobs``): the recording of each job's trace (its trace kept in
    ``traces``), each a run of its own that the run waits for, then the steps that serve the run (the jobs together,
    then each alone), whose keys make its key."""
    if spec.trace_links or spec.counters:
        raise StudyError(f"{label}: trace_links and counters trace one app's run; a run with neighbours replays "
                         "several jobs")  # fmt: skip
    measured = Job(MEASURED, app_path(spec.app), spec.args, spec.ranks, 0.0, spec.ranks_per_node, spec.placement)
    jobs = []
    for job in (measured, *spec.neighbours):
        binary = runnable_binary(str(job.app), f"{label}: job {job.name}", bin_dir)
        jobs.append(dataclasses.replace(job, app=binary.absolute()))
    try:
        hosts = allocate(platform, jobs, spec.allocation)
    except TopologyError as err:
        raise StudyError(f"{label}: {err}") from None
    try:
        machine = prepare_jobs(platform_file[0], jobs, hosts, workdir, options, spec.online, traces, spec.id,
                               platform_file[1])  # fmt: skip
    except StudyError as err:
        raise StudyError(f"{label}: {err}") from None
    hostfile = workdir / f"{spec.id}.{MEASURED}.hosts"
    recordings = tuple(
        PreparedRun(
            dataclasses.replace(spec, id=f"{spec.id}.{name}.record", ranks=len(machine.hosts[name]), neighbours=()),
            f"{label}: job {name} (recording its trace)", recording, list(machine.hosts[name]),
            next(job.app for job in jobs if job.name == name), platform_file[0], workdir / f"{spec.id}.{name}.hosts",
            traces=machine.traces,
        )
        for name, recording in machine.recordings.items()
    )  # fmt: skip
    return PreparedRun(spec, label, machine.steps, list(machine.hosts[MEASURED]), jobs[0].app, platform_file[0],
                       hostfile, recordings=recordings, jobs=machine)  # fmt: skip


def _traced(run: PreparedRun, args: tuple[str, ...], options: tuple[str, ...]) -> PreparedRun:
    """The twin of ``run`` (whose app arguments are ``args`` and SMPI options after the standard ones ``options``)
    that SimGrid traces: the same command with the link tracing flags, reading the same files, its result the bytes
    each link carried and what the app printed (``batch.execute``)."""
    output = "link series" if run.spec.counters else "links"
    simulation = smpirun_simulation(
        run.binary, args, run.platform_file, run.hostfile, run.spec.ranks, (*options, *tracing_options()),
        output=output, facts={"format": LINK_BYTES_FORMAT}, files=run.simulation.files,
    )  # fmt: skip
    # tracing slows a simulation down (bgq-pairing's smallest run: 17 s, 27 s traced)
    spec = dataclasses.replace(run.spec, id=run.spec.traced_id, trace_links=False, timeout=2 * run.spec.timeout)
    return dataclasses.replace(run, spec=spec, label=f"{run.label} (traced)", simulation=simulation,
                               links_traced=True)  # fmt: skip


def _check_options(label: str, options: tuple[str, ...], checked: set[tuple[str, ...]]) -> None:
    """Ask SimGrid about each distinct set of SimGrid options once, before anything runs: an option it does not
    know would otherwise abort the first simulation that has it with a C++ backtrace (``simgrid_options``)."""
    if options in checked:
        return
    checked.add(options)
    problem = options_problem(options)
    if problem is not None:
        raise StudyError(f"{label}: {problem}")


def _replay(
    online: PreparedRun,
    args: tuple[str, ...],
    options: tuple[str, ...],
    platform: Platform,
    traces: TraceStore,
    recordings: dict[str, PreparedRun],
    workdir: Path,
) -> PreparedRun:
    """The replay of the run ``online`` (whose app arguments are ``args`` and SMPI options after the standard ones
    ``options``), with the recording of its trace: one per trace key in ``recordings``, on the platform of the first
    run that needs it, its key the same on any placement (``simulation.replay.placement_free``).
    """
    if online.spec.compute != "off":
        raise StudyError(f'{online.label}: a replay needs compute = "off" (a benchmarked run is not repeatable)')
    speed = {host.name: host.speed for host in platform.hosts}
    speeds = [speed[name] for name in online.hosts]
    read = placement_free(online.binary, online.simulation.files[online.binary], online.platform_file,
                          online.hostfile, speeds)  # fmt: skip
    recording = trace_recording(online.binary, args, online.platform_file, online.hostfile, online.spec.ranks, options,
                                read)  # fmt: skip
    index = workdir / f"{recording.key}.replay"
    if recording.key not in recordings:
        recordings[recording.key] = dataclasses.replace(
            online,
            spec=dataclasses.replace(online.spec, id=f"{online.spec.id}.record", replay=False),
            label=f"{online.label} (recording its trace)",
            simulation=recording,
            traces=traces,
        )
        traces.write_index(recording.key, online.spec.ranks, index)
    replay_files = {
        online.platform_file: online.simulation.files[online.platform_file],
        online.hostfile: online.simulation.files[online.hostfile],
        replay_program(): online.simulation.simgrid,  # SimGrid's own program
        index: f"trace {recording.key}",
    }
    replay = smpirun_simulation(replay_program(), (), online.platform_file, online.hostfile, online.spec.ranks,
                                replay_options(options, index), output="replay", files=replay_files)  # fmt: skip
    return dataclasses.replace(online, simulation=replay, recordings=(recordings[recording.key],))
