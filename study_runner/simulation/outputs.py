"""What an app prints, read into records: topolab's JSON lines, or a third-party code's own report.

topolab's apps print one JSON object per result line (``json``). Third-party codes run unmodified print their own
reports; a run (study or sweep point) names its format with ``output = "<format>"`` and the reader here turns the
report into one record with the code's figures and whether its own verification passed:

``nas``
    The NAS Parallel Benchmarks' closing report (``c_print_results`` of NPB, as SimGrid ships IS, EP and DT):
    ``{"benchmark", "class", "processes", "time_s", "mops_total", "verified"}``.

A report without the lines a format needs is an error naming the run, never a record with holes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from study_runner.errors import StudyError

__all__ = ["OUTPUT_FORMATS", "parse_nas", "parse_output"]

_NAS_FIELDS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "Class": ("class", str),
    "Total processes": ("processes", int),
    "Time in seconds": ("time_s", float),
    "Mop/s total": ("mops_total", float),
    "Verification": ("verified", lambda text: text == "SUCCESSFUL"),
}
_NAS_LINE = re.compile(r"^\s*([A-Za-z/ ]+?)\s+=\s+(\S.*?)\s*$")


def parse_nas(stdout: str, label: str) -> list[dict[str, Any]]:
    """The closing report of a NAS Parallel Benchmark as one record.

    >>> report = '''
    ...  IS Benchmark Completed
    ...  Class           =                        S
    ...  Size            =                    65536
    ...  Iterations      =                       10
    ...  Time in seconds =                     0.01
    ...  Total processes =                        4
    ...  Mop/s total     =                    52.94
    ...  Verification    =               SUCCESSFUL
    ... '''
    >>> parse_nas(report, "is")
    [{'benchmark': 'IS', 'class': 'S', 'time_s': 0.01, 'processes': 4, 'mops_total': 52.94, 'verified': True}]
    """
    completed = re.search(r"^\s*(\S+) Benchmark Completed", stdout, re.MULTILINE)
    if completed is None:
        raise StudyError(f"{label}: no NAS report ('... Benchmark Completed') on stdout")
    record: dict[str, Any] = {"benchmark": completed.group(1)}
    for line in stdout[completed.end() :].splitlines():
        match = _NAS_LINE.match(line)
        if match and match.group(1) in _NAS_FIELDS:
            key, convert = _NAS_FIELDS[match.group(1)]
            record[key] = convert(match.group(2))
    missing = sorted(key for key, _ in _NAS_FIELDS.values() if key not in record)
    if missing:
        raise StudyError(f"{label}: the NAS report has no {', '.join(missing)}")
    return [record]


OUTPUT_FORMATS = ("json", "nas")
"""The formats a run may name (``json``: topolab's JSON lines, read by ``study_runner.batch.execute.parse_records``)."""


def parse_output(output: str, stdout: str, label: str) -> list[dict[str, Any]]:
    """The records of a third-party report of format ``output`` (``json`` is read by ``parse_records``)."""
    if output == "nas":
        return parse_nas(stdout, label)
    raise StudyError(f"{label}: unknown output format {output!r}; known: {', '.join(OUTPUT_FORMATS)}")
