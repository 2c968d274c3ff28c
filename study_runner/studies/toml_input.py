"""The one reader of the TOML files a user gives topolab: study files, sweep files, jobs files (``read_toml``).

A file is refused with one ``StudyError`` line, before anything is parsed, when it could hang, exhaust or crash the
parser: a FIFO, a device or a socket (reading a FIFO waits for a writer forever; ``/dev/zero`` never ends), a file of
more than :data:`MAX_BYTES`, or one nested more than :data:`MAX_DEPTH` levels deep (tables, arrays, inline tables
and dotted keys: Python's TOML parser recurses into nested arrays, ``RecursionError`` at about 600 levels, and takes
time quadratic in the parts of a dotted key, over a minute for a 100,000-part header). The depth is bounded twice:
first by a scan of the text's brackets and dots outside strings and comments (:func:`nesting_bound`, which keeps
such files away from the parser), then exactly on what was parsed (:func:`nesting_depth`), so that what the loaders
and the schema check walk is never deeper than :data:`MAX_DEPTH`.

>>> nesting_bound('[a.b]\\nx = [[1, 2.5], {y = "[[[[.]]]]"}]  # [[[[\\n'), nesting_depth({"a": {"b": {"x": [[1]]}}})
(6, 5)
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from pathlib import Path
from typing import Any

from study_runner.errors import StudyError

__all__ = ["MAX_BYTES", "MAX_DEPTH", "nesting_bound", "nesting_depth", "read_toml"]

MAX_BYTES = 1 << 20
"""The largest file read: 1 MiB (the largest shipped study file is under 30 KB)."""
MAX_DEPTH = 32
"""The deepest nesting of tables and arrays read (:func:`nesting_depth`; the shipped files reach 7)."""

_TOKENS = re.compile(
    r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}.,=\n]', re.DOTALL
)
"""Strings and comments (whose brackets and dots are text), and the characters that nest or end a key."""
_FILE_KINDS = {stat.S_ISFIFO: "a FIFO", stat.S_ISCHR: "a character device", stat.S_ISBLK: "a block device",
               stat.S_ISSOCK: "a socket", stat.S_ISDIR: "a directory"}  # fmt: skip


def nesting_bound(text: str) -> int:
    """About the nesting depth of the TOML ``text``, from its brackets and dots outside strings and comments: the
    parts of the last table header (``[[a.b]]``: an array's table, 3), plus the brackets open, plus the dots of the
    key or number being read. Linear in the text, whatever it holds. It counts exactly what makes the parser recurse
    (brackets) or slow down (the parts of a key); a header below an array of tables (``[a.b]`` after ``[[a]]``) it
    counts one level short for each such array, which the exact check after parsing counts.
    """
    header_parts = header_brackets = open_brackets = dots = 0
    deepest = 1  # the document is a table
    in_header, line_start = False, True
    for token in _TOKENS.finditer(text):
        piece = token.group()
        if piece == "\n":
            if open_brackets == 0:
                dots, in_header, line_start = 0, False, True
            continue
        in_header = in_header or (piece == "[" and line_start and open_brackets == 0)
        line_start = False
        if piece in ("[", "{"):
            open_brackets, dots = open_brackets + 1, dots if in_header else 0
            header_brackets = open_brackets if in_header else header_brackets
        elif piece in ("]", "}"):
            open_brackets = max(open_brackets - 1, 0)
            header_parts = dots + header_brackets if in_header and open_brackets == 0 else header_parts
        elif piece == ".":
            dots += 1
        elif piece in (",", "="):
            dots = 0
        deepest = max(deepest, (0 if in_header else header_parts) + open_brackets + dots + 1)
    return deepest


def nesting_depth(data: object) -> int:
    """The number of tables and arrays around the deepest value of ``data`` (a table alone is 1), without
    recursion."""
    deepest, pending = 0, [(data, 1)]
    while pending:
        value, depth = pending.pop()
        deepest = max(deepest, depth)
        inner = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        pending.extend((item, depth + 1) for item in inner if isinstance(item, dict | list))
    return deepest


def _too_deep(path: Path) -> StudyError:
    return StudyError(f"{path}: nested more than {MAX_DEPTH} levels deep (tables, arrays, dotted keys)")


def _read_bytes(path: Path, kind: str) -> bytes:
    """The bytes of ``path``, a regular file of at most :data:`MAX_BYTES`; opened without waiting (a FIFO with no
    writer would block ``open`` itself), then checked by what was opened, not by its name."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise StudyError(f"cannot read {kind} {path}: {err.strerror or err}") from None
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        what = next((name for test, name in _FILE_KINDS.items() if test(mode)), "not a regular file")
        raise StudyError(f"cannot read {kind} {path}: it is {what}, not a file")
    with os.fdopen(descriptor, "rb") as handle:
        try:
            data = handle.read(MAX_BYTES + 1)
        except OSError as err:
            raise StudyError(f"cannot read {kind} {path}: {err.strerror or err}") from None
    if len(data) > MAX_BYTES:
        raise StudyError(f"{path}: larger than {MAX_BYTES // 1024} KiB: not a {kind} (they are a few KB)")
    return data


def read_toml(path: Path, kind: str) -> dict[str, Any]:
    """The TOML file ``path`` (a "study file", a "sweep file", a "jobs file"); ``StudyError`` if it is not a
    regular file, is too large or too deeply nested, unreadable or malformed."""
    try:
        text = _read_bytes(path, kind).decode("utf-8")
    except UnicodeDecodeError:
        raise StudyError(f"{path}: not a text file (UTF-8)") from None
    if nesting_bound(text) > 2 * MAX_DEPTH:  # far too deep: kept from the parser (the exact check is below)
        raise _too_deep(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise StudyError(f"{path}: malformed TOML: {err}") from None
    except RecursionError:  # not expected below the bound; a line, not a traceback, if it ever is
        raise _too_deep(path) from None
    if nesting_depth(data) > MAX_DEPTH:
        raise _too_deep(path)
    return data
