"""Which process owns a temporary file or directory: its name says so.

A scratch directory (``study_runner.simulation.workdirs``) or a file being written under a temporary name
(``generators.files.atomic_path``) carries ``<pid>.<start>.<domain>`` (:func:`owner_tag`): the owner's PID, its start
time (``/proc/<pid>/stat``), so that a reused PID is not taken for the owner, and ``domain``, the boot and the PID
namespace the owner ran in, since a name on a shared file system (or in a /tmp that containers share) may belong to a
process this one cannot see. What a killed process leaves is then removed by the next run (:func:`owner_gone`), and
never what a live one is writing.
"""

from __future__ import annotations

import hashlib
import os
import re
from functools import cache
from pathlib import Path

__all__ = ["owner_gone", "owner_tag"]

_OWNER = re.compile(r"-(\d+)\.(\d+)\.([0-9a-f]{8})-[a-z0-9_]+(\.tmp)?$")
"""The owner part at the end of an owned name (mkdtemp's or mkstemp's random part last, then a file's ``.tmp``)."""


def _start_time(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot, field 22 of /proc/PID/stat); None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: count the fields after it.
    return int(stat.rsplit(")", 1)[1].split()[19])


@cache
def _domain() -> str:
    """Eight hex digits naming this boot of this machine and this PID namespace: where a PID means this process."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:  # not Linux: PIDs compared on this host only
        boot, namespace = os.uname().nodename, 0
    return hashlib.sha256(f"{boot}/{namespace}".encode()).hexdigest()[:8]


def owner_tag(pid: int | None = None) -> str:
    """``<pid>.<start>.<domain>`` of process ``pid`` (default: this one), as owned names carry it."""
    pid = os.getpid() if pid is None else pid
    return f"{pid}.{_start_time(pid) or 0}.{_domain()}"


def owner_gone(name: str) -> bool:
    """Whether ``name`` is an owned name (:func:`owner_tag`) whose owner process has ended (False when unsure)."""
    match = _OWNER.search(name)
    if match is None or match[3] != _domain():
        return False  # not an owned name, or one of another machine or namespace
    pid, start = int(match[1]), int(match[2])
    now = _start_time(pid)
    if now is not None:
        return start not in (0, now)  # another process has the PID now (0: a start time that was not known)
    if Path("/proc/self/stat").exists():
        return True
    try:  # no /proc: whether some process has the PID is all there is to know
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass
    return False
