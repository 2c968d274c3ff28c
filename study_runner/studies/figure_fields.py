"""The contract between a study file's ``[figures]`` and its analysis: each analysis module declares what it reads
there (``FIGURES``: a key and the kind of value), and a study is checked against it when it loads, before anything
runs: a key the analysis does not read, one it needs and does not find, or a value of the wrong kind (a run id that
names no run) is one error naming the key, instead of a KeyError after every simulation has run.

>>> declared = {"pingpong": run_id(), "heatmaps": table("servers", "size")}
>>> figures_problem({"pingpong": "pp", "heatmaps": {"servers": "24B", "size": 16}}, declared, {"pp"})
>>> figures_problem({"pingpong": "pp", "heatmap": {}}, declared, {"pp"})
"[figures] has no key 'heatmap' that the analysis reads (it reads: heatmaps, pingpong)"
>>> figures_problem({"pingpong": "p", "heatmaps": {"servers": "24B", "size": 16}}, declared, {"pp"})
"[figures] pingpong: 'p' is not a run of the study"
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["FigureField", "figures_problem", "run_id", "strings", "table", "text", "texts_by_name"]


@dataclass(frozen=True)
class FigureField:
    """A value of ``[figures]`` an analysis reads: what it is, in words, and its check (the value and the study's
    run ids -> the problem, or None)."""

    what: str
    problem: Callable[[object, Collection[str]], str | None]
    schema: Mapping[str, object]
    """The same as JSON Schema, but for what it cannot say (that a run id names a run of the study)."""


def run_id() -> FigureField:
    """A run of the study, by id."""
    return FigureField(
        "a run id",
        lambda value, runs: None if value in runs else f"{value!r} is not a run of the study",
        {"type": "string", "description": "a run id of the study (the loader checks that it names one)"},
    )


def texts_by_name(words: int = 1) -> FigureField:
    """A table of names, each a string of ``words`` words (``"bruck 1x6x4"``: an algorithm and a shape)."""

    def problem(value: object, runs: Collection[str]) -> str | None:
        if not isinstance(value, dict) or not value:
            return f"must be a table of names to strings, got {value!r}"
        bad = [v for v in value.values() if not isinstance(v, str) or len(v.split()) != words]
        return None if not bad else f"{bad[0]!r} is not {words} word(s)"

    words_pattern = rf"^\s*\S+(\s+\S+){{{words - 1}}}\s*$"
    schema = {
        "type": "object",
        "minProperties": 1,
        "additionalProperties": {"type": "string", "pattern": words_pattern},
    }
    return FigureField(f"a table of names to strings of {words} word(s)", problem, schema)


def table(*required: str, optional: Collection[str] = ()) -> FigureField:
    """A table with the keys ``required`` (and maybe ``optional``): the arguments of a figure function."""

    def problem(value: object, runs: Collection[str]) -> str | None:
        if not isinstance(value, dict):
            return f"must be a table with {', '.join(required)}, got {value!r}"
        missing = [key for key in required if key not in value]
        unknown = sorted(set(value) - set(required) - set(optional))
        if missing:
            return f"lacks {missing[0]!r} (it takes {', '.join([*required, *optional])})"
        return None if not unknown else f"has no key {unknown[0]!r} (it takes {', '.join([*required, *optional])})"

    keys = {key: {} for key in (*required, *optional)}
    schema = {"type": "object", "properties": keys, "required": list(required), "additionalProperties": False}
    return FigureField(f"a table of {', '.join(required)}", problem, schema)


def strings() -> FigureField:
    """A list of strings."""
    return FigureField(
        "a list of strings",
        lambda value, runs: (
            None
            if isinstance(value, list) and value and all(isinstance(v, str) for v in value)
            else f"must be a list of strings, got {value!r}"
        ),
        {"type": "array", "minItems": 1, "items": {"type": "string"}},
    )


def text() -> FigureField:
    """A string."""
    return FigureField(
        "a string",
        lambda value, runs: None if isinstance(value, str) and value else f"must be a string, got {value!r}",
        {"type": "string", "minLength": 1},
    )


def figures_problem(
    figures: Mapping[str, object], declared: Mapping[str, FigureField], runs: Collection[str]
) -> str | None:
    """The first way ``figures`` (a study's ``[figures]``) breaks what its analysis ``declared`` it reads, given the
    study's run ids ``runs``; None when it keeps to it."""
    reads = ", ".join(sorted(declared)) or "nothing"
    for key in sorted(figures):
        if key not in declared:
            return f"[figures] has no key {key!r} that the analysis reads (it reads: {reads})"
    for key, field in sorted(declared.items()):
        if key not in figures:
            return f"[figures] lacks {key!r}, {field.what} the analysis reads"
        problem = field.problem(figures[key], runs)
        if problem is not None:
            return f"[figures] {key}: {problem}"
    return None
