"""Ready platforms: the machines of the papers as files a SimGrid user hands to ``smpirun``.

``platforms/machines.toml`` describes each ready platform once (folder, file, paper, where each figure comes
from, family and parameters as on the command line, hostfiles). From it this module writes

* ``platforms/<machine>/<file>.xml`` (or ``.params`` for a compiled zone) and the hostfiles, committed, and
  ``platforms/README.md``, the table a reader looks at (``python -m generators.machines``);
* ``build/platforms/<machine>/``: every platform complete, the compiled ones with their shared object and the
  XML files too large to commit (``python -m generators.machines --build build/platforms``; ``scripts/build``).

A platform is built exactly as ``python -m generators <family> --<param> <text> ...`` builds it (the same
strings through the same checks), so the command printed in the README writes the same bytes.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import sys
import tempfile
import tomllib
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from generators.errors import TopologyError
from generators.families import FAMILIES
from generators.families import build_platform
from generators.files import atomic_write_text
from generators.model import Platform
from generators.placement import place_ranks
from generators.placement import write_hostfile
from generators.writer import REPO
from generators.writer import platform_suffix
from generators.writer import write_parameters
from generators.writer import write_platform

__all__ = ["CATALOGUE", "SHIP_LIMIT", "ReadyPlatform", "load_catalogue", "main", "write_build", "write_ready"]

CATALOGUE = REPO / "platforms" / "machines.toml"
# An XML file above this size is not committed (git is no place for it); --build writes it.
SHIP_LIMIT = 4_000_000

_KEYS = {"machine", "file", "title", "paper", "figures", "node", "family", "params", "hostfiles"}
_OPTIONAL = {"params", "hostfiles"}


@dataclass(frozen=True)
class ReadyPlatform:
    """One ready platform of the catalogue; ``params`` are the command-line texts of the family's parameters."""

    machine: str
    file: str
    title: str
    paper: str
    figures: str
    node: str
    """Where the hosts' cores and per-core speed come from (hardware figure, or a placeholder the paper leaves open)."""
    family: str
    params: dict[str, str]
    hostfiles: dict[str, str]

    @property
    def key(self) -> str:
        """``<machine>/<file>``, the name a study uses."""
        return f"{self.machine}/{self.file}"

    def build(self) -> Platform:
        """The platform model, built from the same strings the CLI would pass."""
        return build_platform(self.family, self.params)

    def arguments(self) -> list[str]:
        """The generator's command-line arguments, parameters in the family's declared order."""
        args = [self.family]
        for param in FAMILIES[self.family].params:
            if param.name in self.params:
                args += [param.option, self.params[param.name]]
        return args

    def hosts(self, platform: Platform, placement: str) -> list[str]:
        """The hostfile of ``placement``: ``"all"`` (every host, in host order) or a named placement."""
        return place_ranks(platform, None, None if placement == "all" else placement)


def _text(value: object, where: str) -> str:
    """A TOML parameter value as command-line text (exact: floats by their shortest round-trip repr)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise TopologyError(f"{where} must be a string or a number, got {value!r}")
    return value if isinstance(value, str) else repr(value)


def _entry(raw: object, where: str) -> ReadyPlatform:
    if not isinstance(raw, dict):
        raise TopologyError(f"{where} must be a table")
    unknown, missing = sorted(raw.keys() - _KEYS), sorted(_KEYS - _OPTIONAL - raw.keys())
    if unknown or missing:
        problem = f"unknown key {unknown[0]!r}" if unknown else f"missing key {missing[0]!r}"
        raise TopologyError(f"{where}: {problem} (keys: {', '.join(sorted(_KEYS))})")
    texts = {key: raw[key] for key in ("machine", "file", "title", "paper", "figures", "node", "family")}
    for key, value in texts.items():
        if not isinstance(value, str) or not value.strip():
            raise TopologyError(f"{where}: {key} must be a non-empty string, got {value!r}")
    for key in ("machine", "file"):
        if not texts[key].replace("-", "").replace("x", "").isalnum() or texts[key] != texts[key].lower():
            raise TopologyError(f"{where}: {key} must be lower-case letters, digits and '-', got {texts[key]!r}")
    if texts["family"] not in FAMILIES:
        raise TopologyError(f"{where}: unknown family {texts['family']!r} (families: {', '.join(sorted(FAMILIES))})")
    tables = {key: raw.get(key, {}) for key in ("params", "hostfiles")}
    for key, table in tables.items():
        if not isinstance(table, dict):
            raise TopologyError(f"{where}: {key} must be a table")
    params = {name: _text(value, f"{where}: params.{name}") for name, value in tables["params"].items()}
    hostfiles = {name: _text(value, f"{where}: hostfiles.{name}") for name, value in tables["hostfiles"].items()}
    return ReadyPlatform(**texts, params=params, hostfiles=hostfiles)  # type: ignore[arg-type]


def load_catalogue(path: Path = CATALOGUE) -> dict[str, ReadyPlatform]:
    """Every ready platform of ``path``, by ``<machine>/<file>``; ``TopologyError`` names any problem."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise TopologyError(f"cannot read the platform catalogue {path}: {err}") from None
    if set(data) != {"platform"} or not isinstance(data["platform"], list):
        raise TopologyError(f"{path}: the catalogue is a list of [[platform]] tables only")
    found: dict[str, ReadyPlatform] = {}
    for number, raw in enumerate(data["platform"], start=1):
        entry = _entry(raw, f"{path}: platform {number}")
        if entry.key in found:
            raise TopologyError(f"{path}: platform {number}: {entry.key} is described twice")
        found[entry.key] = entry
    return found


def _command(entry: ReadyPlatform, output: str, hostfile: tuple[str, str] | None = None) -> str:
    words = ["python -m generators", *entry.arguments(), "-o", output]
    if hostfile is not None:
        name, placement = hostfile
        words += ["--hostfile", name] + ([] if placement == "all" else ["--placement", placement])
    return " ".join(words)


@dataclass(frozen=True)
class _Written:
    entry: ReadyPlatform
    platform: Platform
    suffix: str
    size: int
    shipped: bool


def write_ready(root: Path, catalogue: dict[str, ReadyPlatform], *, progress: bool = False) -> list[Path]:
    """Write the committed files of every ready platform and ``README.md`` under ``root``; return the files."""
    files: list[Path] = []
    written: list[_Written] = []
    for entry in catalogue.values():
        if progress:
            print(f"machines: {entry.key}", file=sys.stderr)
        try:
            platform = entry.build()
        except TopologyError as err:
            raise TopologyError(f"{entry.key}: {err}") from None
        suffix = platform_suffix(platform)
        folder = root / entry.machine
        folder.mkdir(parents=True, exist_ok=True)
        if suffix == ".so":
            target = folder / f"{entry.file}.params"
            write_parameters(platform, target)
            size, shipped = target.stat().st_size, True
        else:
            target = folder / f"{entry.file}.xml"
            with tempfile.TemporaryDirectory() as scratch:
                draft = Path(scratch) / target.name
                write_platform(platform, draft)
                size = draft.stat().st_size
                shipped = size <= SHIP_LIMIT
                if shipped:
                    shutil.move(draft, target)
        files += [target] if shipped else []
        for name, placement in entry.hostfiles.items():
            write_hostfile(entry.hosts(platform, placement), folder / f"{name}.hosts")
            files.append(folder / f"{name}.hosts")
        written.append(_Written(entry, platform, suffix, size, shipped))
    atomic_write_text(root / "README.md", _readme(written))
    return [*files, root / "README.md"]


def write_build(root: Path, catalogue: dict[str, ReadyPlatform], *, progress: bool = False) -> None:
    """Write every platform complete under ``root``: compiled ones with their shared object, large XML too."""
    for entry in catalogue.values():
        platform = entry.build()
        target = root / entry.machine / f"{entry.file}{platform_suffix(platform)}"
        target.parent.mkdir(parents=True, exist_ok=True)
        write_platform(platform, target)
        if progress:
            print(f"machines: wrote {target}", file=sys.stderr)


def _size(size: int) -> str:
    return f"{size / 1e6:.1f} MB" if size >= 100_000 else f"{size / 1e3:.1f} kB"


def _readme(written: Sequence[_Written]) -> str:
    lines = [
        "# Ready platforms",
        "",
        "<!-- Written by `python -m generators.machines` from machines.toml: edit that file, not this one. -->",
        "",
        "The machines of the papers as SimGrid platforms (XML 4.1), with hostfiles for the papers' placements. Hand",
        'them to `smpirun` (docs/platforms.md\'s "Ready platforms" says how). `machines.toml` says where each',
        "parameter comes from; tests/test_machines.py regenerates every file here and compares bytes, and loads each "
        "in SimGrid.",
        "",
        "| machine / file | paper | hosts | links | file | size | hostfiles |",
        "|---|---|---:|---:|---|---:|---|",
    ]
    for w in written:
        name = f"{w.entry.file}{'.params' if w.suffix == '.so' else '.xml'}"
        file = name if w.shipped else f"{name} (not committed: `scripts/build`)"
        hostfiles = ", ".join(f"{h}.hosts" for h in w.entry.hostfiles) or "-"
        lines.append(
            f"| {w.entry.key} | {w.entry.paper} | {len(w.platform.hosts)} | {len(w.platform.links)} | {file} "
            f"| {_size(w.size)} | {hostfiles} |"
        )
    lines += [
        "",
        "*.params* files are compiled zones (`simgrid_cpp/<family>_zone.cpp`, the torus's or the dragonfly's): SimGrid",
        "loads the shared object `<file>.so`, which reads `<file>.params` beside it. `scripts/build` writes every",
        "platform complete, the",
        "shared objects and the XML too large to commit included, into `build/platforms/<machine>/`.",
        "",
        "## What each one is",
        "",
    ]
    for w in written:
        lines += [f"- **{w.entry.key}**: {w.entry.title}. Figures: {w.entry.figures}. Node: {w.entry.node}."]
    lines += ["", "## The commands that wrote them", "", "```sh"]
    for w in written:
        folder = f"platforms/{w.entry.machine}"
        output = f"{folder}/{w.entry.file}{w.suffix}"
        hostfiles = list(w.entry.hostfiles.items()) or [None]
        for hostfile in hostfiles:
            named = None if hostfile is None else (f"{folder}/{hostfile[0]}.hosts", hostfile[1])
            lines.append(_command(w.entry, output, named))
    lines += ["```", ""]
    return "\n".join(lines)


def _stale(root: Path, expected: Iterable[Path]) -> list[Path]:
    """Files under ``root`` that the catalogue does not write (``machines.toml`` and shared objects aside)."""
    keep = set(expected) | {root / CATALOGUE.name}
    return sorted(p for p in root.rglob("*") if p.is_file() and p not in keep and p.suffix != ".so")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m generators.machines [--check] [--build DIR]``; return the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m generators.machines",
        description="Write the ready platforms of platforms/machines.toml into platforms/ (and README.md).",
    )
    parser.add_argument("--catalogue", type=Path, default=CATALOGUE, help="the catalogue (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="compare with the committed files; write nothing")
    parser.add_argument("--build", type=Path, metavar="DIR", help="write every platform complete into DIR instead")
    args = parser.parse_args(argv)
    root = args.catalogue.parent
    try:
        catalogue = load_catalogue(args.catalogue)
        if args.build is not None:
            write_build(args.build, catalogue, progress=True)
            return 0
        if args.check:
            with tempfile.TemporaryDirectory() as scratch:
                files = write_ready(Path(scratch), catalogue)
                differ = [f.relative_to(scratch) for f in files if not _same(f, root / f.relative_to(scratch))]
                stale = _stale(root, (root / f.relative_to(scratch) for f in files))
            for path in differ:
                print(f"{parser.prog}: {root / path} differs from what machines.toml writes", file=sys.stderr)
            for path in stale:
                print(f"{parser.prog}: {path} is not written by machines.toml", file=sys.stderr)
            return 1 if differ or stale else 0
        files = write_ready(root, catalogue, progress=True)
        for path in _stale(root, files):
            print(f"{parser.prog}: warning: {path} is not written by machines.toml (remove it?)", file=sys.stderr)
    except TopologyError as err:
        parser.exit(2, f"{parser.prog}: error: {err}\n")
    except OSError as err:
        parser.exit(1, f"{parser.prog}: error: {err}\n")
    return 0


def _same(a: Path, b: Path) -> bool:
    return b.is_file() and filecmp.cmp(a, b, shallow=False)


if __name__ == "__main__":
    sys.exit(main())
