"""The published grammar of study and sweep files (``study_runner.studies.schema``): the files in ``schemas/`` are
what the code checks with, every shipped file validates against them, a bad field is named by its path, and a run is
one grammar: a study's run and a sweep's run accept and refuse the same tables, with the same words."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from study_runner.errors import StudyError
from study_runner.paths import REPO
from study_runner.studies.schema import RUN_PROPERTIES
from study_runner.studies.schema import SCHEMA_DIR
from study_runner.studies.schema import published_schemas
from study_runner.studies.study import load_study
from study_runner.sweeps.sweep import load_sweep

SHIPPED = {
    "study.schema.json": sorted((REPO / "studies").glob("*.toml")),
    "sweep.schema.json": sorted((REPO / "sweeps").glob("*.toml")),
}


def test_the_published_schemas_are_the_ones_the_code_checks_with() -> None:
    """schemas/*.json is written by ``python -m study_runner.studies.schema``: run it after changing the grammar."""
    assert sorted(path.name for path in SCHEMA_DIR.glob("*.json")) == sorted(published_schemas())
    for name, schema in published_schemas().items():
        jsonschema.Draft202012Validator.check_schema(schema)
        assert json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8")) == schema, f"schemas/{name} is stale"


@pytest.mark.parametrize(
    ("schema", "path"), [(name, path) for name, paths in SHIPPED.items() for path in paths], ids=lambda p: str(p)
)
def test_every_shipped_file_validates_and_names_its_schema(schema: str, path: Path) -> None:
    """Checked with the published file and the library alone, as an editor would; the first line tells Taplo and
    Even Better TOML where the schema is."""
    text = path.read_text(encoding="utf-8")
    assert text.splitlines()[0] == f"#:schema ../schemas/{schema}"
    published = json.loads((SCHEMA_DIR / schema).read_text(encoding="utf-8"))
    errors = list(jsonschema.Draft202012Validator(published).iter_errors(tomllib.loads(text)))
    assert not errors, errors[0].message


GOOD = {
    "study": REPO / "tests" / "data" / "schema" / "study.toml",
    "sweep": REPO / "tests" / "data" / "schema" / "sweep.toml",
}
LOADERS = {"study": load_study, "sweep": load_sweep}


@pytest.mark.parametrize(
    ("kind", "edit", "message"),
    [
        ("study", ("ranks = 2\n[[runs]]", "ranks = 0\n[[runs]]"), "runs[0].ranks: 0 is less than the minimum of 1"),
        ("study", ('id = "b"', 'id = "b"\ncolour = 1'), "runs[1]: unknown key 'colour'; known: allocation, app, args"),
        ("study", ('compute = "off"', 'compute = "fast"'),
         "generate[0].run.compute: 'fast' is not one of ['off', 'benchmark']"),
        ("study", ("hosts = 2", 'hosts = 2\n[platforms.bad]\nmachine = "x"\nwidth = 1'),
         "platforms.bad: unknown key 'width'"),
        ("study", ('title = "t"', "title = 3"), "title: 3 is not of type 'string'"),
        ("sweep", ('kind = "lines"', 'kind = "pie"'),
         "output.plots[0].kind: 'pie' is not one of ['lines', 'regime', 'split']"),
        ("sweep", ('ranks = "{n + 1}"', "ranks = 0"), "run.ranks: 0 is less than the minimum of 1"),
        ("sweep", ('ranks = "{n + 1}"', 'ranks = "{n - 1}"'),
         "point 0 (n=1): run.ranks: 0 is less than the minimum of 1"),
        ("sweep", ("[output]", "[outputs]"), "unknown key 'outputs'; known: description, grid, name, output"),
    ],
)  # fmt: skip
def test_a_bad_field_is_named_by_its_path(kind: str, edit: tuple[str, str], message: str, tmp_path: Path) -> None:
    text = GOOD[kind].read_text(encoding="utf-8")
    assert edit[0] in text
    path = tmp_path / f"{kind}.toml"
    path.write_text(text.replace(*edit, 1))
    with pytest.raises(StudyError, match=re.escape(f"{path}: {message}")):
        LOADERS[kind](path)


def test_the_good_files_load() -> None:
    """The two files the edits above start from are sound (each edit alone makes them fail)."""
    assert [run.id for run in load_study(GOOD["study"]).runs] == ["a", "b", "scan.1", "scan.2"]
    assert [run.ranks for run in load_sweep(GOOD["sweep"]).points] == [2, 3]


def _toml(value: Any) -> str:
    """A TOML value: TOML writes lists and strings as JSON does, but its own booleans and infinities."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value != value:
        return "nan"
    return "inf" if value == float("inf") else json.dumps(value)


GOOD_RUN = {"app": "pingpong", "ranks": 2}
VALUES = {  # good and bad values of each field, never a template (a study has none in [[runs]])
    "app": st.sampled_from(["pingpong", "", 3]),
    "ranks": st.sampled_from([1, 4, 0, -2, 2.5, "two", True]),
    "args": st.sampled_from([["-s", 8], [], "x", [["nested"]], [True]]),
    "placement": st.sampled_from(["", "allocation:2", ["host-0", "host-1"], [1], 3]),
    "options": st.sampled_from([[], ["--cfg=smpi/simulate-computation:no"], "x", [[1]]]),
    "timeout": st.sampled_from([1, 0.5, 0, -1, "long", float("inf"), float("nan")]),
    "size": st.sampled_from([1, 1e6, 0, "big", float("inf")]),
    "compute": st.sampled_from(["off", "benchmark", "fast", 1]),
    "ranks_per_node": st.sampled_from([1, 2, 0, 1.5, "1"]),
    "output": st.sampled_from(["json", "nas", "xml"]),
    "replay": st.sampled_from([True, False, "yes", 1]),
    "colour": st.sampled_from([1]),
}


def _verdict(load: Any, path: Path, prefix: str) -> str:
    try:
        load(path)
    except StudyError as err:
        return str(err).split(f"{path}: ", 1)[1].replace(prefix, "<run>", 1)
    return "ok"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.fixed_dictionaries({}, optional=VALUES))
def test_a_study_run_and_a_sweep_run_are_one_grammar(changes: dict[str, Any], tmp_path: Path) -> None:
    """Any run table, good or bad, is accepted by both loaders or refused by both with the same words (after the
    run's path: ``runs[0]`` in a study, ``run`` in a sweep)."""
    run = {**GOOD_RUN, **changes}
    fields = "".join(f"{key} = {_toml(value)}\n" for key, value in run.items())
    study = 'name = "m"\ntitle = "t"\nanalysis = "none"\n[platforms.p]\nfamily = "crossbar"\nhosts = 4\n'
    study += f'[[runs]]\nid = "r"\nplatform = "p"\n{fields}'
    sweep = f'name = "m"\n[grid]\nn = [1]\n[platform]\nfamily = "crossbar"\nhosts = 4\n[run]\n{fields}'
    verdicts = []
    for text, load, prefix, name in ((study, load_study, "runs[0]", "s.toml"), (sweep, load_sweep, "run", "w.toml")):
        (tmp_path / name).write_text(text)
        verdicts.append(_verdict(load, tmp_path / name, prefix))
    study_verdict, sweep_verdict = verdicts
    if "point 0 (n=1): " in sweep_verdict:  # a value the file-level check leaves to the rendered point
        sweep_verdict = sweep_verdict.replace("point 0 (n=1): ", "")
    assert study_verdict == sweep_verdict or _known_lists_differ(study_verdict, sweep_verdict)


def _known_lists_differ(study: str, sweep: str) -> bool:
    """An unknown key lists the known ones: a study's run knows its id, platform and variants as well."""
    return study.split("; known:")[0] == sweep.split("; known:")[0] and "unknown key" in study


def test_the_fields_of_a_run_are_declared_once() -> None:
    """The study schema's runs and generate.run and the sweep schema's run hold the very same field schemas."""
    study, sweep = published_schemas()["study.schema.json"], published_schemas()["sweep.schema.json"]
    runs = study["properties"]["runs"]["items"]["properties"]
    generated = study["properties"]["generate"]["items"]["properties"]["run"]["properties"]
    swept = sweep["properties"]["run"]["properties"]
    for name, schema in RUN_PROPERTIES.items():
        assert runs[name] == schema
        assert untemplated(generated[name]) == schema == untemplated(swept[name])


def untemplated(schema: dict) -> dict:
    """A field's schema without its template alternative: of the field, and of each field of its tables."""
    schema = schema["else"]
    items = schema.get("items", {})
    if "properties" in items:
        fields = {name: untemplated(field) for name, field in items["properties"].items()}
        schema = {**schema, "items": {**items, "properties": fields}}
    return schema
