"""Reading the platform files and hostfiles users give ``smpirun-on``: their hosts, the ranks a hostfile places, and
the core speed of the hosts (what ``--compute memory`` needs to know of the target)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path

from lxml import etree

from generators.errors import TopologyError
from generators.errors import shown
from generators.families import build_platform
from generators.files import atomic_write_text
from generators.model import Platform
from generators.params import positive_int
from generators.units import parse_speed
from study_runner.errors import UsageError

__all__ = [
    "compiled_hosts",
    "core_speed",
    "hostfile_slots",
    "node_memory",
    "platform_model",
    "ranks_on_hosts",
    "ranks_per_host",
    "xml_hosts",
]

PROVENANCE_CHARS = 1 << 16
"""How far into a platform file its provenance line may start (it is the first comment: a few hundred bytes in)."""


def xml_hosts(path: Path) -> list[str]:
    """Host ids of a SimGrid XML platform, in document order."""
    hosts = []
    try:  # an open file, not a name: libxml2 would unescape a '%' in the name (a URI to it)
        with open(path, "rb") as source:
            for _, element in etree.iterparse(source, events=("end",), tag=("host", "cluster"), load_dtd=False):
                if element.tag == "cluster":
                    raise UsageError(f"{path} declares hosts in a <cluster>: give --hostfile")
                hosts.append(element.get("id"))
                element.clear()
    except etree.XMLSyntaxError as err:
        raise UsageError(f"{path} is not a readable platform XML: {err}") from None
    return hosts


def compiled_hosts(path: Path, cache_dir: Path | None = None, say: Callable[[str], None] | None = None) -> list[str]:
    """Hosts of a topolab compiled platform, rebuilt from the provenance line of its ``.params`` file.

    The line records the platform's family and the parameters it was built from (``generators.writer``); the
    model built from them again has the same hosts in the same order. That takes long for a large machine (14.6 s
    for Fugaku's 158,976 nodes and 1.7 million links), so with ``cache_dir`` the list is kept in
    ``cache_dir/hosts/``, named by the digest of the ``.params`` file, with its count on its first line (a list
    that does not hold as many hosts is built again), and ``say`` is told before a model is built.
    """
    params = path.with_suffix(".params")
    listed = None
    if cache_dir is not None and params.is_file():
        listed = cache_dir / "hosts" / f"{hashlib.sha256(params.read_bytes()).hexdigest()[:24]}.txt"
        kept = listed.read_text(encoding="utf-8").split("\n") if listed.is_file() else []
        if kept and kept[0].startswith("# ") and kept[0][2:].isdigit() and int(kept[0][2:]) == len(kept) - 2:
            return kept[1:-1]
        if say is not None:
            say(f"listing the hosts of {path.name}: building its model again from {params.name} (once: then kept in "
                f"{listed.parent})")  # fmt: skip
    model = platform_model(path)
    if model is None:
        raise UsageError(f"cannot tell the hosts of {path} from {params}: give --hostfile")
    if listed is not None:
        atomic_write_text(listed, f"# {len(model.host_names)}\n" + "".join(f"{host}\n" for host in model.host_names))
    return model.host_names


def hostfile_slots(path: Path, hosts: set[str], platform: str) -> int:
    """Ranks a hostfile can take: one per line, or N for a ``host:N`` line (smpirun's syntax); every host must be
    one of the platform's ``hosts`` (SimGrid would abort with a backtrace)."""
    slots = 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        name, colon, count = line.strip().partition(":")
        if not name:
            continue
        try:
            slots += positive_int(count, "N") if colon else 1
        except TopologyError:
            raise UsageError(f"hostfile {path}: bad line {shown(line)} (HOST or HOST:N, N >= 1)") from None
        if name not in hosts:
            raise UsageError(f"hostfile {path}, line {number}: {shown(name)} is not a host of {platform}")
    return slots


def core_speed(path: Path) -> float:
    """The speed of one core of the hosts of a platform file (flop/s): the ``speed`` of its ``<host>`` elements, or
    the ``host_speed`` line of a compiled platform's ``.params`` (1 Gflop/s, the model's default, without one).
    Every host must have the same: what depends on it (``--compute memory``) is one figure per run."""
    if path.suffix == ".so":
        for line in path.with_suffix(".params").read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(" ")
            if key == "host_speed":
                return parse_speed(value.strip(), "host_speed", in_base_unit=True)
        return 1e9
    speeds = set()
    try:
        with open(path, "rb") as source:
            for _, element in etree.iterparse(source, events=("end",), tag="host", load_dtd=False):
                speeds.add(parse_speed(element.get("speed", ""), "speed", in_base_unit=True))
                element.clear()
    except etree.XMLSyntaxError as err:
        raise UsageError(f"{path} is not a readable platform XML: {err}") from None
    if len(speeds) != 1:
        raise UsageError(f"{path} has hosts of {len(speeds)} core speeds: --compute memory needs one")
    return speeds.pop()


def _provenance(path: Path) -> str:
    """The start of the file holding a platform's provenance line (``generators.writer``): the first line of a
    compiled platform's ``.params``, the first comment of an XML file."""
    source = path.with_suffix(".params") if path.suffix == ".so" else path
    with source.open(encoding="utf-8", errors="replace") as file:
        return file.read(PROVENANCE_CHARS)


def platform_model(path: Path) -> Platform | None:
    """The model a topolab platform file was built from, built again from its provenance line (its family and the
    parameters as built); None for a platform file topolab did not write."""
    head = _provenance(path)
    family = re.search(r": family ([\w-]+), ", head)
    recorded = _as_built(path, head)
    if family is None or not recorded:
        return None
    try:
        return build_platform(family[1], recorded)
    except TopologyError:
        return None


def _as_built(path: Path, head: str | None = None) -> dict[str, object]:
    """The parameters a topolab platform file records it was built from (``generators.writer``'s provenance line,
    in ``head``, read from ``path`` when not given); empty for a platform topolab did not write."""
    head = _provenance(path) if head is None else head
    start = head.find(", as built {")
    if start < 0:
        return {}
    try:
        recorded, _ = json.JSONDecoder().raw_decode(head, start + len(", as built "))
    except ValueError:
        return {}
    return recorded if isinstance(recorded, dict) else {}


def node_memory(path: Path) -> tuple[float | None, float | None]:
    """The node's memory bandwidth and one core's (B/s) that a topolab platform file records (``memory_bw``,
    ``core_memory_bw``: ``generators.node``), each None where it records none."""
    recorded = _as_built(path)
    values = []
    for key in ("memory_bw", "core_memory_bw"):
        value = recorded.get(key)
        values.append(float(value) if isinstance(value, (int, float)) and value > 0 else None)
    return values[0], values[1]


def ranks_per_host(hostfile: Path, ranks: int) -> int:
    """The most ranks any host of ``hostfile`` takes among the first ``ranks`` slots (``HOST`` or ``HOST:N`` lines).

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "hosts"
    >>> _ = path.write_text("a\\na\\nb:3\\nc\\n")
    >>> ranks_per_host(path, 3), ranks_per_host(path, 4), ranks_per_host(path, 6)
    (2, 2, 3)
    """
    return max(ranks_on_hosts(hostfile, ranks).values(), default=1)


def ranks_on_hosts(hostfile: Path, ranks: int) -> dict[str, int]:
    """How many of the first ``ranks`` slots of ``hostfile`` (``HOST`` or ``HOST:N`` lines) each host takes, hosts in
    the order of their first rank.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "hosts"
    >>> _ = path.write_text("a\\nb:3\\na\\nc\\n")
    >>> ranks_on_hosts(path, 5)
    {'a': 2, 'b': 3}
    """
    counts: dict[str, int] = {}
    left = ranks
    for line in hostfile.read_text(encoding="utf-8").splitlines():
        name, colon, count = line.strip().partition(":")
        if not name or left <= 0:
            continue
        taken = min(left, int(count) if colon else 1)
        counts[name] = counts.get(name, 0) + taken
        left -= taken
    return counts
