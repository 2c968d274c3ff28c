"""Input limits of the TOML files a user gives (issue 61, point 6): every entry point (study files, sweep files, jobs
files) reads them with one reader (``study_runner.studies.toml_input``) that refuses, with one line and in well
under a second, a file nested too deeply (600 levels were a RecursionError), a 100,000-part dotted header (over a
minute of parsing), a FIFO (read forever), a device, a directory and a file too large; and ``dims = 442``, an integer
where a list of dimensions is meant, is refused where it was a 442-node ring."""

from __future__ import annotations

import json
import os
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from generators.errors import TopologyError
from generators.families import check_file_params
from study_runner.errors import StudyError
from study_runner.studies.study import load_study
from study_runner.studies.toml_input import MAX_BYTES
from study_runner.studies.toml_input import MAX_DEPTH
from study_runner.studies.toml_input import nesting_bound
from study_runner.studies.toml_input import nesting_depth
from study_runner.studies.toml_input import read_toml
from study_runner.sweeps.sweep import load_sweep
from study_runner.tools.run_jobs import read_jobs_file
from tests.conftest import REPO
from tests.hostile_judge import time_limit

LOADERS: dict[str, Callable[[Path], Any]] = {"study": load_study, "sweep": load_sweep, "jobs": read_jobs_file}
GOOD = {
    "study": (REPO / "tests" / "data" / "schema" / "study.toml").read_text(encoding="utf-8"),
    "sweep": (REPO / "tests" / "data" / "schema" / "sweep.toml").read_text(encoding="utf-8"),
    "jobs": '[platform]\nfamily = "crossbar"\nhosts = 4\n[[jobs]]\nname = "a"\napp = "pingpong"\nranks = 2\n',
}
HOSTILE_TEXTS = {
    "arrays 600 deep": "x = " + "[" * 600 + "]" * 600 + "\n",
    "arrays 400 deep": "x = " + "[" * 400 + "]" * 400 + "\n",
    "inline tables 600 deep": "x = " + "{a = " * 600 + "1" + "}" * 600 + "\n",
    "a 100,000-part dotted header": "[" + ".".join(["a"] * 100_000) + "]\n",
    "a 100,000-part dotted key": ".".join(["a"] * 100_000) + " = 1\n",
    "40 nested headers": "".join("[" + ".".join(["a"] * n) + "]\n" for n in range(1, 41)),
    "arrays of tables 40 deep": "".join("[[" + ".".join(["a"] * n) + "]]\n" for n in range(1, 41)),
    "more than 1 MiB": "# " + "x" * MAX_BYTES + "\n",
}
MESSAGES = {"more than 1 MiB": "larger than 1024 KiB"}


def _refused_at_once(load: Callable[[Path], Any], path: Path) -> str:
    """The one-line error of loading ``path``, within 2 s (a FIFO blocked forever, a dotted header took a minute)."""
    started = time.monotonic()
    with time_limit(20), pytest.raises(StudyError) as refused:
        load(path)
    assert time.monotonic() - started < 2, f"{path} took {time.monotonic() - started:.1f} s to refuse"
    message = str(refused.value)
    assert len(message.splitlines()) == 1, message
    return message


@pytest.mark.parametrize("kind", sorted(LOADERS))
@pytest.mark.parametrize("case", sorted(HOSTILE_TEXTS))
def test_a_hostile_file_is_one_line_at_once(kind: str, case: str, tmp_path: Path) -> None:
    path = tmp_path / f"{kind}.toml"
    path.write_text(GOOD[kind] + HOSTILE_TEXTS[case], encoding="utf-8")
    message = _refused_at_once(LOADERS[kind], path)
    expected = MESSAGES.get(case, f"nested more than {MAX_DEPTH} levels deep")
    assert message.startswith(f"{path}: {expected}"), message


@pytest.mark.parametrize("kind", sorted(LOADERS))
@pytest.mark.parametrize("what", ["a FIFO", "a character device", "a directory"])
def test_a_file_that_is_not_a_regular_file_is_refused(kind: str, what: str, tmp_path: Path) -> None:
    """A FIFO with no writer (``open`` itself used to wait forever), ``/dev/zero`` (endless), a directory; each
    named as a TOML file (a study is then a path, not a name)."""
    path = tmp_path / f"{kind}.toml"
    if what == "a FIFO":
        os.mkfifo(path)
    elif what == "a character device":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()
    message = _refused_at_once(LOADERS[kind], path)
    assert message.endswith(f"{path}: it is {what}, not a file"), message


def test_the_depth_limit_is_exact(tmp_path: Path) -> None:
    """A file nested exactly MAX_DEPTH deep is read; one level more is refused."""
    for depth, accepted in ((MAX_DEPTH, True), (MAX_DEPTH + 1, False)):
        (tmp_path / "d.toml").write_text("x = " + "[" * (depth - 1) + "]" * (depth - 1) + "\n")
        if accepted:
            assert nesting_depth(read_toml(tmp_path / "d.toml", "study file")) == depth
        else:
            with pytest.raises(StudyError, match=f"nested more than {MAX_DEPTH} levels deep"):
                read_toml(tmp_path / "d.toml", "study file")


def _inline(value: Any) -> str:
    """``value`` as a TOML inline value (tables inline, strings as JSON writes them, which TOML reads)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(key)} = {_inline(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_inline(item) for item in value) + "]"
    return "true" if value is True else "false" if value is False else json.dumps(value)


TEXTS = st.text(alphabet="[]{}.,=#\"'\\x \n", max_size=6)
VALUES = st.recursive(
    st.integers() | TEXTS | st.booleans(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXTS, inner, max_size=3),
    max_leaves=12,
)


@given(st.dictionaries(st.from_regex(r"[a-z]{1,3}", fullmatch=True), VALUES, max_size=3))
def test_the_scan_bounds_the_depth_of_what_is_parsed(document: dict[str, Any]) -> None:
    """The scan that keeps deep files from the parser counts brackets and dots of keys, never those inside strings
    (keys and values full of brackets, dots, quotes and hashes): within one level of the exact depth."""
    text = "".join(f"{key} = {_inline(value)}\n" for key, value in document.items())
    depth = nesting_depth(tomllib.loads(text))
    assert depth <= nesting_bound(text) <= depth + 1, text


@pytest.mark.parametrize("kind", sorted(LOADERS))
def test_an_integer_where_dimensions_are_meant_is_refused(kind: str, tmp_path: Path) -> None:
    """``dims = 442`` was a 442-node ring (over a minute to write); a slip for "4x4x2" is more likely."""
    platform = {"study": 'family = "crossbar"\nhosts = 2', "sweep": 'family = "crossbar"\nhosts = 2'}
    text = GOOD[kind].replace(platform.get(kind, 'family = "crossbar"\nhosts = 4'), 'family = "torus"\ndims = 442')
    path = tmp_path / f"{kind}.toml"
    path.write_text(text)
    assert "dims = 442" in text
    message = _refused_at_once(LOADERS[kind], path)
    assert "dims must be a list of integers >= 1 such as '4x4x2' or [4, 4, 2], got the integer 442" in message


def test_dimensions_as_text_or_a_list_and_one_value_for_all_stay_accepted() -> None:
    assert check_file_params("torus", {"dims": "442"})["dims"] == (442,)
    assert check_file_params("torus", {"dims": [4, 4, 2]})["dims"] == (4, 4, 2)
    assert check_file_params("mlfm", {"d": 3, "servers_per_leaf": 2})["servers_per_leaf"] == (2,)
    with pytest.raises(TopologyError, match="got the integer 8"):
        check_file_params("hyperx", {"dims": 8})
