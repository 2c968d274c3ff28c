"""``scripts/smpirun-on``: run an MPI program under smpirun on a topolab platform in one command.

::

    scripts/smpirun-on FAMILY [parameters] [--placement SPEC] [--np N] [--cfg=OPT ...] [--keep DIR] -- APP [ARG ...]
    scripts/smpirun-on PLATFORM.xml|.so [--hostfile FILE] [--np N] [--cfg=OPT ...] [--keep DIR] -- APP [ARG ...]

With a family, the platform is built from the family's parameters (the options of ``python -m generators FAMILY
--help``, validated by :func:`generators.build_platform`) and written once into a content-addressed directory,
``<cache>/platforms/<key>/`` (``<cache>`` is ``$TOPOLAB_CACHE`` or ``.topolab-cache/``); the key is the SHA-256 of
the family, its validated parameters, the generators' source and, for a compiled platform, the shared object it
copies. Later calls with the same platform reuse that directory untouched, however the parameters are spelled, once
its files match the SHA-256 its ``platform.json`` records (``simulation.platform_cache``; else it is written
again, with a warning). The hostfile is written under ``<cache>/hostfiles/`` (named by its content, and rewritten
when it no longer holds it): rank i on the i-th host of the placement, which is the platform's host order by
default, a named placement of the family (``allocation:2,4,3``) or a list of hosts (``host-0,host-63``). ``--np``
defaults to the number of hosts placed.

Then smpirun runs with topolab's standard options (:data:`study_runner.simulation.smpi.STANDARD_OPTIONS`) followed
by the user's ``--cfg`` options, which therefore win. The command is printed on stderr first, so that it can be
rerun by hand (the run itself gives smpirun a ``-tmpdir`` of its own, which the next topolab run removes: the
hostfile smpirun keeps when the app fails is not left in TMPDIR); smpirun replaces this process, so the program's
output streams through and the exit status is smpirun's. Bad input is one ``smpirun-on: error:`` line on stderr and
exit status 2, before anything runs: among it a program that SMPI cannot load, built with a real MPI's ``mpicc``
rather than SimGrid's ``smpicc`` (``study_runner.simulation.binaries``).

With ``--counters DIR`` the run is traced and smpirun runs as a child instead: once it ends, ``DIR`` gets the bytes
and utilisation of every link, their time series and a heat map cropped to the job (``study_runner.tools.counters``).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from generators.allocation import ALLOCATION_POLICIES
from generators.cli import add_family_params
from generators.cli import given_params
from generators.cli import nonempty
from generators.errors import TopologyError
from generators.errors import shown
from generators.families import FAMILIES
from generators.files import atomic_write_text
from generators.model import Platform
from generators.params import positive_int
from generators.placement import named_placement
from generators.placement import place_ranks
from generators.writer import platform_files
from study_runner.errors import StudyError
from study_runner.errors import UsageError
from study_runner.simulation.binaries import check_smpi_binary
from study_runner.simulation.cache import default_cache_dir
from study_runner.simulation.compute import COMPUTE_MODES
from study_runner.simulation.compute import OFF_NOTICE
from study_runner.simulation.compute import calibration
from study_runner.simulation.compute import compute_options
from study_runner.simulation.node_memory import memory_mode_speed
from study_runner.simulation.platform_cache import hostfile_path
from study_runner.simulation.platform_cache import platform_directory
from study_runner.simulation.platform_cache import write_platform_directory
from study_runner.simulation.platform_files import compiled_hosts
from study_runner.simulation.platform_files import core_speed
from study_runner.simulation.platform_files import hostfile_slots
from study_runner.simulation.platform_files import node_memory
from study_runner.simulation.platform_files import platform_model
from study_runner.simulation.platform_files import ranks_per_host
from study_runner.simulation.platform_files import xml_hosts
from study_runner.simulation.prepared import smpirun_simulation
from study_runner.simulation.simgrid_options import cfg
from study_runner.simulation.simgrid_options import cfg_problem
from study_runner.simulation.smpi import SETUP_HINT
from study_runner.simulation.smpi import smpi_tmpdir
from study_runner.simulation.solver_statistics import STATISTICS_LOG
from study_runner.simulation.workdirs import owned_directory
from study_runner.tools.counters import counters_directory
from study_runner.tools.counters import counters_options
from study_runner.tools.counters import run_with_counters
from study_runner.tools.memory_mode import MEMORY_MODE
from study_runner.tools.memory_mode import fraction
from study_runner.tools.memory_mode import memory_target
from study_runner.tools.memory_mode import unused
from study_runner.tools.this_machine import THIS_MACHINE
from study_runner.tools.this_machine import describe_this_machine
from study_runner.tools.this_machine import this_machine

__all__ = ["DIES_WITH_SMPIRUN", "Prepared", "main", "prepare", "prepare_run"]

PROG = "smpirun-on"

USAGE = f"""\
usage: {PROG} FAMILY [family parameters] [--placement SPEC] [--np N] [--compute MODE] [--cfg=OPT ...] [--keep DIR]
           [--counters DIR] -- APP [ARG ...]
       {PROG} PLATFORM.xml|PLATFORM.so [--hostfile FILE | --placement SPEC] [--np N] [--compute MODE] [--cfg=OPT ...]
           [--keep DIR] [--counters DIR] -- APP [ARG ...]
       {PROG} this-machine [--np N] [--ranks-per-node K] [--compute MODE] ... -- APP [ARG ...]
       {PROG} FAMILY --help            (the family's parameters)
"""

HELP = (
    USAGE
    + f"""
Run APP under smpirun on a topolab platform: built from FAMILY and its parameters (written once into
a content-addressed directory of the cache, reused later), or given as a platform file. Ranks fill
the hosts of the placement in turn, --ranks-per-node at a time (default one); smpirun gets topolab's
standard options, the --compute mode's, then the --cfg options (they win). The smpirun command is
printed on stderr before it runs; the exit status is smpirun's, or 2 for bad input.

families: {", ".join(sorted(FAMILIES))}
this-machine: one host with this machine's cores at their calibrated speed and its intra-node path (an MPICH
  ping-pong), each measured on first use and cached: run your code here with mpiexec and on it with
  --compute benchmark to see how far the simulation is from the real run

options:
  --placement SPEC  a named placement: an allocation policy of every family (random:3, stride:2, ...) or the
                    family's own (NAME:ARG, e.g. allocation:2,4,3 on mlfm), or a comma-separated list of hosts
                    (host-0,host-63); default: the platform's host order. On a platform file: a list of its
                    hosts, or a named placement when topolab wrote the file (platforms/: its family is recorded)
  --np N            number of ranks (default: every slot of the placement or of the hostfile)
  --ranks-per-node K  K consecutive ranks on each host of the placement (default 1); they share the host's
                    cores (--cores) and talk through its intra-node path (--shm-bw, --shm-lat)
  --hostfile FILE   (platform file only) smpirun hostfile to use; default: the platform's hosts in order
  --compute MODE    off (default): computation costs nothing, times are communication only (deterministic);
                    benchmark: each CPU burst is timed on this machine and charged at the platform's core
                    speed (this machine's speed: scripts/calibrate-compute, measured once and cached);
                    memory: as benchmark, and the part of each burst that moves memory (--memory-fraction M,
                    from scripts/measure-memory-fraction) is charged at the rank's share of the node's memory
                    bandwidth: the platform's (a family's --memory-bw and --core-memory-bw; the paper machines
                    and this-machine record theirs), or --memory-bw BW [--core-memory-bw BW] after a file
  --cfg=OPT         SimGrid option passed as --cfg=OPT after topolab's standard ones (repeatable)
  --keep DIR        also write the platform, the hostfile and the command (smpirun.sh) into DIR, and run
                    from those files
  --counters DIR    network counters: trace the run's links and write into DIR links.csv (bytes and utilisation
                    per link, busiest first), link_series.csv (utilisation over time) and heatmap.png (cropped
                    to the job's nodes); the busiest links are printed (docs/smpirun-on.md)
  --statistics      at the end, what the run cost: its event dates, the wall time per date, and the max-min
                    solves (how many, how much of the system each solved, their wall time; docs/simulation-speed.md)
"""
)


class _Parser(argparse.ArgumentParser):
    """An argparse parser whose errors are one line (no usage dump), raised as :class:`UsageError`."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _say(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr, flush=True)


def _text_option(parser: argparse.ArgumentParser, option: str, metavar: str, help_text: str) -> None:
    """Add ``option``, whose value is a text that must not be empty."""
    parser.add_argument(option, metavar=metavar, type=nonempty, help=help_text)


def _common_options(parser: argparse.ArgumentParser, *, placement_help: str, memory_bandwidths: bool = True) -> None:
    # Values stay text, checked by prepare(): an empty one is an error, never the default (--keep '' would
    # otherwise write into the current directory).
    _text_option(parser, "--placement", "SPEC", placement_help)
    parser.add_argument("--np", metavar="N", help="number of ranks (default: every slot placed)")
    parser.add_argument(
        "--ranks-per-node", metavar="K", help="K consecutive ranks on each host of the placement (default 1)"
    )
    parser.add_argument(
        "--compute",
        choices=COMPUTE_MODES,
        default="off",
        help="off: communication only (default); benchmark: CPU bursts timed here, charged at the core speed; "
        "memory: as benchmark, their memory part charged at the rank's share of the node's memory bandwidth",
    )
    memory = parser.add_argument_group("--compute memory")
    memory.add_argument("--memory-fraction", metavar="M", help="the code's memory fraction (measure-memory-fraction)")
    if memory_bandwidths:  # a family declares them as node parameters (generators.node), which its platform records
        node_help = "a node's memory bandwidth, shared by its ranks (default: the platform's)"
        core_help = "what one core draws alone (default: the platform's, else the node's)"
        memory.add_argument("--memory-bw", metavar="BW", help=node_help)
        memory.add_argument("--core-memory-bw", metavar="BW", help=core_help)
    parser.add_argument(
        "--cfg", action="append", default=[], metavar="OPT", help="SimGrid option, after the standard ones (wins)"
    )
    _text_option(parser, "--keep", "DIR", "also write platform, hostfile and smpirun.sh into DIR")
    _text_option(
        parser, "--counters", "DIR", "trace the run: per-link bytes, utilisation over time and a heat map into DIR"
    )
    parser.add_argument("--statistics", action="store_true", help="print what the run cost: event dates, solves")


def _family_parser(family: str) -> argparse.ArgumentParser:
    spec = FAMILIES[family]
    parser = _Parser(
        prog=f"{PROG} {family}",
        usage=f"{PROG} {family} [parameters] [--placement SPEC] [--np N] [--cfg=OPT ...] [--keep DIR] -- APP [ARG ...]",
        description=spec.summary,
        allow_abbrev=False,
    )
    add_family_params(parser, spec)
    named = ", ".join(f"{name}:ARG" for name in (*ALLOCATION_POLICIES, *spec.placements))
    placement = (
        f"named placement ({named}) or comma-separated hosts, rank i on the i-th (default: the platform's host order)"
    )
    _common_options(parser, placement_help=placement, memory_bandwidths=False)
    return parser


def _file_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, usage=USAGE, allow_abbrev=False)
    _text_option(parser, "--hostfile", "FILE", "smpirun hostfile (default: the platform's hosts)")
    placement = "hosts in order (host-0,host-63), or a named placement of the family a topolab file records (random:3)"
    _common_options(parser, placement_help=placement)
    return parser


def _file_slots(path: Path, hosts: list[str], spec: str, per_node: int) -> list[str]:
    """The host of each slot of ``--placement`` on a platform file: a list of its hosts, or a named placement of the
    family that a platform file topolab wrote records (``platform_files.platform_model``)."""
    model = platform_model(path) if ":" in spec else None
    if ":" in spec and model is None:
        raise UsageError(f"placement {spec}: {path} records no topolab family to place by; give its hosts in order")
    if model is not None:
        return place_ranks(model, None, _placement_order(model, spec), per_node)
    order = _placement_order_list(spec)
    known = set(hosts)
    unknown = [host for host in order if host not in known]
    if unknown or len(set(order)) != len(order):
        what = f"no host {unknown[0]!r}" if unknown else "a host twice"
        raise UsageError(f"placement {shown(spec)} names {what} (hosts of {path.name}: {hosts[0]}, ...)")
    return [host for host in order for _ in range(per_node)]


def _placement_order(platform: Platform, spec: str | None) -> list[str] | None:
    """The hosts of ``--placement``: a named placement, the allocation policies of every family and the family's own
    (``generators.placement.named_placement``, the generators' vocabulary), or a list of hosts."""
    if spec is None:
        return None
    if ":" in spec:
        return named_placement(platform, spec)
    return _placement_order_list(spec)


def _placement_order_list(spec: str) -> list[str]:
    hosts = [name.strip() for name in spec.split(",")]
    if not all(hosts):
        raise TopologyError(f"placement {shown(spec)} has an empty host name (hosts are separated by single commas)")
    return hosts


def _platform_file(text: str) -> Path:
    path = Path(text)
    if path.suffix not in (".xml", ".so"):
        raise UsageError(f"{text!r} is neither a family ({', '.join(sorted(FAMILIES))}) nor a .xml/.so platform file")
    if not path.is_file():
        raise UsageError(f"platform file {text} not found")
    if path.suffix == ".so" and not path.with_suffix(".params").is_file():
        raise UsageError(
            f"{text} is a compiled platform but its parameter file {path.with_suffix('.params')} is missing"
        )
    # SimGrid dlopens a .so platform, which needs a path with a '/': every path is made absolute.
    return path.absolute()


def _program(text: str) -> Path:
    """The program to run: a path (relative to the current directory) or a command found on PATH."""
    if "/" not in text:
        found = shutil.which(text)
        if found is None:
            hint = f" (to run the file in this directory, say ./{text})" if Path(text).is_file() else ""
            raise UsageError(f"program {text!r} not found on PATH{hint}")
        return Path(found).absolute()
    path = Path(text)
    if path.is_dir():
        raise UsageError(f"program {text} is a directory")
    if not path.is_file():
        raise UsageError(f"program {text} not found")
    if not os.access(path, os.X_OK):
        raise UsageError(f"program {text} is not executable")
    return path.absolute()


def _keep(directory: Path, platform: Path, hostfile: Path) -> tuple[Path, Path]:
    """Copy the platform's files and the hostfile into ``directory``; return the copies."""
    directory.mkdir(parents=True, exist_ok=True)
    kept = directory.absolute() / platform.name
    for source in platform_files(platform):
        shutil.copy2(source, kept.with_suffix(source.suffix))
    kept_hosts = directory.absolute() / "hostfile"
    shutil.copyfile(hostfile, kept_hosts)
    return kept, kept_hosts


def _split(argv: Sequence[str]) -> tuple[list[str], list[str] | None]:
    argv = list(argv)
    if "--" not in argv:
        return argv, None
    cut = argv.index("--")
    return argv[:cut], argv[cut + 1 :]


def _on_family(family: str, args: argparse.Namespace, cache_dir: Path) -> tuple[Path, Path, int]:
    """Platform file, hostfile and rank count of a family run; the platform is written only if new."""
    given = given_params(args, FAMILIES[family])
    cached = platform_directory(family, given, cache_dir)
    platform, path = cached.platform, cached.path
    order = _placement_order(platform, args.placement)
    hosts = place_ranks(platform, args.np, order, args.ranks_per_node)
    why = cached.problem()
    if why is None:
        _say(f"reusing platform {path}")
    else:
        if why != "absent":
            print(f"warning: cached platform {path.parent} is damaged ({why}): writing it again", file=sys.stderr)
        write_platform_directory(cached)
        _say(f"wrote platform {path} ({len(platform.hosts)} hosts, {len(platform.links)} links)")
    return path, hostfile_path(hosts, cache_dir), len(hosts)


def _on_file(text: str, args: argparse.Namespace, cache_dir: Path) -> tuple[Path, Path, int]:
    """Platform file, hostfile and rank count of a run on a given platform file."""
    path = _platform_file(text)
    hosts = xml_hosts(path) if path.suffix == ".xml" else compiled_hosts(path, cache_dir, _say)
    if args.hostfile is not None and args.ranks_per_node != 1:
        raise UsageError("--ranks-per-node shapes the default placement: with --hostfile, write HOST:K lines instead")
    if args.hostfile is not None and args.placement is not None:
        raise UsageError("--placement and --hostfile both place the ranks: give one")
    if args.placement is not None:
        hosts = _file_slots(path, hosts, args.placement, args.ranks_per_node)
    else:
        hosts = [host for host in hosts for _ in range(args.ranks_per_node)]
    slots = len(hosts)
    if args.hostfile is not None:
        hostfile = Path(args.hostfile)
        if not hostfile.is_file():
            raise UsageError(f"hostfile {args.hostfile} not found")
        slots = hostfile_slots(hostfile, set(hosts), text)
    where = args.hostfile or text
    if slots < 1:
        raise UsageError(f"no hosts in {where}")
    ranks = args.np or slots
    if ranks > slots:
        per_node = f" x {args.ranks_per_node} ranks per node" if args.ranks_per_node > 1 else ""
        raise UsageError(
            f"{ranks} ranks do not fit on the {len(hosts) // args.ranks_per_node} hosts{per_node} of {where}"
        )
    if args.hostfile is not None:
        return path, hostfile.absolute(), ranks
    return path, hostfile_path(hosts[:ranks], cache_dir), ranks


DIES_WITH_SMPIRUN = ("-wrapper", "setpriv --pdeathsig KILL --") if shutil.which("setpriv") else ()
"""smpirun starts the simulation (``smpimain``) as its child and waits for it; this process becomes smpirun, so a
SIGKILL of it would leave the simulation running on. smpirun's ``-wrapper`` runs smpimain under util-linux's
setpriv, which gives it SIGKILL when smpirun dies (the parent-death signal)."""


@dataclass(frozen=True)
class Prepared:
    """A run ready to start: the smpirun command, what it runs on, and where its counters go (None: not asked)."""

    command: list[str]
    platform: Path
    hostfile: Path
    ranks: int
    counters: Path | None


def prepare(argv: Sequence[str]) -> list[str]:
    """Validate the command line, write what is missing, and return the smpirun command to run."""
    return prepare_run(argv).command


def _parse(argv: Sequence[str]) -> tuple[str, argparse.Namespace, list[str]]:
    """The platform (a family or a file), the options and the program (with its arguments) of a command line."""
    options, program = _split(argv)
    if not options:
        raise UsageError("no platform: give a family or a .xml/.so platform file (--help for usage)")
    first, rest = options[0], options[1:]
    wants_help = any(arg in ("-h", "--help") for arg in options)
    if first in ("-h", "--help"):
        print(HELP, end="")
        raise SystemExit(0)
    if first.startswith("-"):
        raise UsageError(f"the first argument must be a family or a platform file, got {first!r} (--help for usage)")
    if first == THIS_MACHINE and not any(arg in ("-h", "--help") for arg in rest):
        # Every rank on the one host (its own --ranks-per-node, given after, wins): --np of them, else one per core.
        given = [rest[i + 1] for i, arg in enumerate(rest[:-1]) if arg == "--np"]
        given += [arg.removeprefix("--np=") for arg in rest if arg.startswith("--np=")]
        np = given[-1] if given else str(os.cpu_count() or 1)
        first, rest = "crossbar", [*this_machine(default_cache_dir())[1:], "--ranks-per-node", np, *rest]
        _say(describe_this_machine(default_cache_dir()))
    is_family = first in FAMILIES
    if not is_family and "/" not in first and Path(first).suffix not in (".xml", ".so"):
        raise UsageError(
            f"unknown family {first!r}: families are {', '.join(sorted(FAMILIES))}, or give a .xml/.so platform file"
        )
    parser = _family_parser(first) if is_family else _file_parser()
    if program is None and not wants_help:
        raise UsageError(f"missing '--' before the program: {PROG} {first} [options] -- ./app [args]")
    args = parser.parse_args(rest)
    if program is None or not program:
        raise UsageError(f"no program after '--': {PROG} {first} [options] -- ./app [args]")
    if args.np is not None:
        args.np = positive_int(args.np, "--np")
    args.ranks_per_node = 1 if args.ranks_per_node is None else positive_int(args.ranks_per_node, "--ranks-per-node")
    unused(args, platform_figures=is_family)
    return first, args, program


def prepare_run(argv: Sequence[str]) -> Prepared:
    """Validate the command line, write what is missing, and return the run to start."""
    first, args, program = _parse(argv)
    binary = _program(program[0])
    check_smpi_binary(binary, program[0])
    if shutil.which("smpirun") is None:
        raise UsageError(f"smpirun not found: {SETUP_HINT}")
    problem = cfg_problem(args.cfg)
    if problem is not None:
        raise UsageError(problem)
    counters = None if args.counters is None else counters_directory(args.counters, args.cfg)
    cache_dir = default_cache_dir()
    if first in FAMILIES:
        platform_path, hostfile, ranks = _on_family(first, args, cache_dir)
    else:
        platform_path, hostfile, ranks = _on_file(first, args, cache_dir)
    if args.keep is not None:
        platform_path, hostfile = _keep(Path(args.keep), platform_path, hostfile)
    reference = calibration(cache_dir) if args.compute != "off" else None
    _say(OFF_NOTICE if reference is None else f"computation benchmarked at this machine's {reference.describe()}")
    speed, local_work = reference and reference.flops, None
    if args.compute == MEMORY_MODE:
        target = memory_target(args, node_memory(platform_path), ranks_per_host(hostfile, ranks))
        speed, local_work, line = memory_mode_speed(
            reference.flops, fraction(args), core_speed(platform_path), target, cache_dir
        )
        _say(line)
    cfg_words = [*compute_options(args.compute, speed, local_work), *(cfg(option) for option in args.cfg)]
    cfg_words += counters_options(counters) if counters is not None else ()
    cfg_words += [STATISTICS_LOG] if args.statistics else []
    launcher = (*DIES_WITH_SMPIRUN, *_tmpdir_option())
    command = list(smpirun_simulation(binary, program[1:], platform_path, hostfile, ranks, cfg_words,
                                      launcher=launcher).argv)  # fmt: skip
    if args.keep is not None:
        script = Path(args.keep).absolute() / "smpirun.sh"
        atomic_write_text(script, f'#!/bin/sh\n# written by {PROG}\nexec {shlex.join(command)} "$@"\n')
        script.chmod(0o755)
    return Prepared(command, platform_path, hostfile, ranks, counters)


def _tmpdir_option() -> list[str]:
    """smpirun's ``-tmpdir`` when the directory its ``mktemp`` would find cannot be given to SimGrid (whitespace or a
    comma: the same directory through a link, ``smpi.smpi_tmpdir``) or does not exist (Python's fallback)."""
    usable = smpi_tmpdir()
    return [] if str(usable) == (os.environ.get("TMPDIR") or "/tmp") else ["-tmpdir", str(usable)]


def _in_owned_tmpdir(command: list[str]) -> list[str]:
    """``command`` with smpirun's temporary files (the unrolled hostfile it keeps when the app fails, SMPI's copies of
    the app) in a directory named for this process, which smpirun becomes: the next topolab run removes it
    (``workdirs.owned_directory``). Not in the printed or kept command, which must run again later."""
    if "-tmpdir" in command:
        at = command.index("-tmpdir")
        command = [*command[:at], *command[at + 2 :]]
    return [command[0], "-tmpdir", str(smpi_tmpdir(owned_directory("smpirun"))), *command[1:]]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command: prepare, print the smpirun command, then become smpirun (its exit status); with
    ``--counters``, run smpirun as a child and then write the counters (``study_runner.tools.counters``)."""
    try:
        prepared = prepare_run(sys.argv[1:] if argv is None else argv)
    except (UsageError, TopologyError, StudyError) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # the environment (a cache that cannot be written, a full disk): exit 2 as bad input
        print(f"{PROG}: error: {err.strerror or err}{f': {err.filename}' if err.filename else ''}", file=sys.stderr)
        return 2
    print(shlex.join(prepared.command), file=sys.stderr, flush=True)
    sys.stdout.flush()
    command = _in_owned_tmpdir(prepared.command)
    if prepared.counters is not None:  # smpirun runs as a child: its trace is read once it ends
        return run_with_counters(command, prepared.counters, prepared.platform, prepared.hostfile, prepared.ranks)
    os.execvp(command[0], command)


if __name__ == "__main__":
    sys.exit(main())
