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
from tests.conftest import Edit
from tests.conftest import apply_edit

SHIPPED = {
    "study.schema.json": sorted((REPO / "studies").glob("*.toml")),
    "sweep.schema.json": sorted((REPO / "sweeps").glob("*.toml")),
    "jobs.schema.json": sorted((REPO / "jobs").glob("*.toml")),
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
         "generate[0].run.compute: 'fast' is not one of ['off', 'benchmark', 'memory']"),
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
def test_a_bad_field_is_named_by_its_path(kind: str, edit: Edit, message: str, tmp_path: Path) -> None:
    path = tmp_path / f"{kind}.toml"
    path.write_text(apply_edit(GOOD[kind].read_text(encoding="utf-8"), edit, 1))
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
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{key} = {_toml(item)}" for key, item in value.items()) + " }"
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
    "compute": st.sampled_from(["off", "benchmark", "memory", "fast", 1]),
    "memory_fraction": st.sampled_from([0.3, 1, 1.5, -0.1, "x"]),
    "ranks_per_node": st.sampled_from([1, 2, 0, 1.5, "1"]),
    "output": st.sampled_from(["json", "nas", "xml"]),
    "replay": st.sampled_from([True, False, "yes", 1]),
    "folded_buffers": st.sampled_from([65536, 0, 2.5, "big"]),
    "collectives": st.sampled_from([{"barrier": "ompi_bruck"}, {"barrier": 3}, {"Barrier": "x"}, {}, "rdb"]),
    "message_overhead": st.sampled_from([5.4e-05, 0, -1e-6, float("inf")]),
    "privatization": st.sampled_from([False, True, "no"]),
    "stack_guard": st.sampled_from([False, 0]),
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


JOBS = '[platform]\nfamily = "crossbar"\nhosts = 4\n[[jobs]]\nname = "a"\napp = "pingpong"\nranks = 2\n'
FIGURES = 'analysis = "sanity_alpha_beta"\n[figures]\npingpong = "a"\ntwo_exchanges = "b"'
EDITS: dict[str, list[tuple[str, str, str, str]]] = {  # kind: (name, text, its replacement, verdict)
    # verdict: "good" (both accept), "bad" (both refuse), "loader" (only the loader refuses: LOADER_ONLY)
    "study": [
        ("ranks 2.0", "ranks = 2\n[[runs]]", "ranks = 2.0\n[[runs]]", "good"),
        ("timeout 5", "ranks = 2\n[[runs]]", "ranks = 2\ntimeout = 5\n[[runs]]", "good"),
        ("timeout inf", "ranks = 2\n[[runs]]", "ranks = 2\ntimeout = inf\n[[runs]]", "bad"),
        ("timeout nan", "ranks = 2\n[[runs]]", "ranks = 2\ntimeout = nan\n[[runs]]", "loader"),
        ("full_timeout inf", 'id = "b"', 'id = "b"\nfull_timeout = inf', "bad"),
        ("duplicate id", 'id = "b"', 'id = "a"', "loader"),
        ("unknown platform", 'platform = "pair"\napp', 'platform = "nope"\napp', "loader"),
        ("unknown family", 'family = "crossbar"', 'family = "hypercube"', "bad"),
        ("unknown family parameter", "hosts = 2", "hosts = 2\ncolour = 1", "bad"),
        ("missing family parameter", "hosts = 2\n", "", "bad"),
        ("bad family value", "hosts = 2", "hosts = 0", "bad"),
        ("family value as text", "hosts = 2", 'hosts = "2"', "good"),
        ("unknown machine", 'family = "crossbar"\nhosts = 2', 'machine = "nowhere/x"', "bad"),
        ("figures", 'analysis = "none"', FIGURES, "good"),
        ("unknown [figures] key", "[figures]\n", "[figures]\ncolour = 1\n", "bad"),
        ("missing [figures] key", 'two_exchanges = "b"', "", "bad"),
        ("[figures] of the wrong type", 'pingpong = "a"', "pingpong = 3", "bad"),
        ("[figures] naming no run", 'pingpong = "a"', 'pingpong = "zz"', "loader"),
        ("empty axis", "n = [1, 2]", "n = []", "bad"),
        ("an axis of lists", "n = [1, 2]", "n = [1, [2]]", "bad"),
        ("inf on an axis", "n = [1, 2]", "n = [1, inf]", "bad"),
        ("nan on an axis", "n = [1, 2]", "n = [1, nan]", "loader"),
        ("bad variable name", "n = [1, 2]", "n = [1, 2]\n2x = [1]", "bad"),
        ("zip", "[generate.grid]\nn = [1, 2]", "[[generate.zip]]\nn = [1, 2]\nm = [3, 4]", "good"),
        ("zip lengths", "[generate.grid]\nn = [1, 2]", "[[generate.zip]]\nn = [1, 2]\nm = [3]", "loader"),
        ("no axis", "[generate.grid]\nn = [1, 2]\n", "", "bad"),
        ("misspelled check field", "tolerance = 0.1", "tolerence = 0.1", "bad"),
        ("unknown check kind", 'kind = "prediction"', 'kind = "guess"', "bad"),
        ("templated tolerance", "tolerance = 0.1", 'tolerance = "{0.1 * n}"', "good"),
        ("unknown field of a by table", 'source = "s"\n', 'source = "s"\n[checks.by.n.1]\ncolour = 1\n', "bad"),
        ("check of an unknown grid", 'grid = "scan"\nid', 'grid = "nope"\nid', "loader"),
    ],
    "sweep": [
        ("ranks 2.0", 'ranks = "{n + 1}"', "ranks = 2.0", "good"),
        ("timeout inf", 'app = "pingpong"', 'app = "pingpong"\ntimeout = inf', "bad"),
        ("timeout nan", 'app = "pingpong"', 'app = "pingpong"\ntimeout = nan', "loader"),
        ("unknown family", 'family = "crossbar"', 'family = "hypercube"', "bad"),
        ("templated family", 'family = "crossbar"', 'family = "{\'crossbar\'}"', "good"),
        ("unknown family parameter", "hosts = 2", "hosts = 2\ncolour = 1", "bad"),
        ("empty axis", "n = [1, 2]", "n = []", "bad"),
        ("zip", "[grid]\nn = [1, 2]", "[[zip]]\nn = [1, 2]\nm = [3, 4]", "good"),
        ("zip lengths", "[grid]\nn = [1, 2]", "[[zip]]\nn = [1, 2]\nm = [3]", "loader"),
        ("no axis", "[grid]\nn = [1, 2]\n", "", "bad"),
    ],
    "jobs": [
        ("ranks 2.0", "ranks = 2", "ranks = 2.0", "good"),
        ("second job", 'ranks = 2\n', 'ranks = 2\n[[jobs]]\nname = "b"\napp = "pingpong"\nranks = 2\n', "good"),
        ("duplicate job", 'ranks = 2\n', 'ranks = 2\n[[jobs]]\nname = "a"\napp = "pingpong"\nranks = 2\n', "loader"),
        ("unknown family", 'family = "crossbar"', 'family = "hypercube"', "bad"),
        ("unknown family parameter", "hosts = 4", "hosts = 4\ncolour = 1", "bad"),
        ("negative family value", "hosts = 4", "hosts = -4", "bad"),
        ("ranks 0", "ranks = 2", "ranks = 0", "bad"),
    ],
}  # fmt: skip
BASES = {"study": GOOD["study"].read_text(encoding="utf-8"), "sweep": GOOD["sweep"].read_text(encoding="utf-8"),
         "jobs": JOBS}  # fmt: skip
SCHEMAS = {"study": "study.schema.json", "sweep": "sweep.schema.json", "jobs": "jobs.schema.json"}


def _load(kind: str, path: Path) -> object:
    from study_runner.tools.run_jobs import read_jobs_file

    return {**LOADERS, "jobs": read_jobs_file}[kind](path)


def _edited(kind: str, edits: list[tuple[str, str, str, str]]) -> tuple[str, list[tuple[str, str]]]:
    """The base file of ``kind`` after ``edits`` (each applied where its text is still found and the result is still
    TOML), and the (name, verdict) of each applied edit."""
    text, applied = BASES[kind], []
    for name, old, new, expected in edits:
        edited = text.replace(old, new, 1)
        try:
            tomllib.loads(edited)
        except tomllib.TOMLDecodeError:  # a key given twice
            continue
        if old in text:
            text, applied = edited, [*applied, (name, expected)]
    return text, applied


def _agreement(kind: str, text: str, applied: list[tuple[str, str]], tmp_path: Path) -> None:
    """The published schema refuses ``text`` exactly when a "bad" edit was applied; the loader exactly when a "bad"
    or a "loader" edit was."""
    published = json.loads((SCHEMA_DIR / SCHEMAS[kind]).read_text(encoding="utf-8"))
    errors = [error.message for error in jsonschema.Draft202012Validator(published).iter_errors(tomllib.loads(text))]
    path = tmp_path / f"{kind}.toml"
    path.write_text(text)
    try:
        loaded, refusal = _load(kind, path), ""
    except StudyError as err:
        loaded, refusal = None, str(err)
    templated = "templated family" in dict(applied)  # which family, and so which parameters, is known per point
    verdicts = {"loader" if templated and name == "unknown family parameter" else verdict for name, verdict in applied}
    assert (not errors) == ("bad" not in verdicts), (applied, errors)
    assert (loaded is not None) == verdicts.isdisjoint({"bad", "loader"}), (applied, refusal)
    if loaded is not None and "ranks 2.0" in dict(applied):
        ranks = [run.ranks for run in getattr(loaded, "runs", getattr(loaded, "points", getattr(loaded, "jobs", [])))]
        assert all(type(n) is int for n in ranks) and 2 in ranks


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(sorted(EDITS)), data=st.data())
def test_the_published_schema_and_the_loader_agree(kind: str, data: st.DataObject, tmp_path: Path) -> None:
    """Issue 61, point 8: the schema an editor checks with and the loader accept and refuse the same files, but for
    the rules JSON Schema cannot say (``LOADER_ONLY``, which the schemas' descriptions state), which the loader
    alone refuses: NaN, ids used twice, a run's unknown platform, zip lists of unequal lengths, a family's values, a
    [figures] run id. ``ranks = 2.0`` is an integer to both (JSON's integers), and runs as 2."""
    edits = data.draw(st.lists(st.sampled_from(EDITS[kind]), max_size=3, unique=True))
    _agreement(kind, *_edited(kind, edits), tmp_path)


FIGURES_EDITS = {"unknown [figures] key", "missing [figures] key", "[figures] of the wrong type",
                 "[figures] naming no run"}  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "edit"),
    [pytest.param(kind, edit, id=f"{kind}: {edit[0]}") for kind, edits in EDITS.items() for edit in edits],
)
def test_each_edit_alone(kind: str, edit: tuple[str, str, str, str], tmp_path: Path) -> None:
    """Every case of the catalogue, alone (a [figures] edit after the one that gives the study its figures)."""
    first = [next(e for e in EDITS[kind] if e[0] == "figures")] if edit[0] in FIGURES_EDITS else []
    text, applied = _edited(kind, [*first, edit])
    assert applied[-1] == (edit[0], edit[3])
    _agreement(kind, text, applied, tmp_path)


def test_the_typed_option_fields_are_the_options_they_name(tmp_path: Path) -> None:
    """A run's option groups (``folded_buffers``, ``collectives``, ``message_overhead``, ``privatization``,
    ``stack_guard``) give the SMPI options the raw ``--cfg`` words would, in a fixed order, before the raw ones."""
    typed = ('folded_buffers = 65536\ncollectives = { barrier = "ompi_bruck", allreduce = "rdb" }\n'
             'message_overhead = 5.4e-05\nprivatization = false\nstack_guard = false\n'
             'options = ["--cfg=smpi/display-timing:yes"]\n')  # fmt: skip
    sweep = 'name = "m"\n[grid]\nn = [1]\n[platform]\nfamily = "crossbar"\nhosts = 4\n[run]\napp = "pingpong"\n'
    (tmp_path / "w.toml").write_text(sweep + "ranks = 2\n" + typed)
    (point,) = load_sweep(tmp_path / "w.toml").points
    assert point.options == (
        "--cfg=smpi/shared-malloc:local", "--cfg=smpi/auto-shared-malloc-thresh:65536", "--cfg=smpi/barrier:ompi_bruck",
        "--cfg=smpi/allreduce:rdb", "--cfg=smpi/os:2.7e-05", "--cfg=smpi/ois:2.7e-05", "--cfg=smpi/or:2.7e-05",
        "--cfg=smpi/privatization:0", "--cfg=contexts/guard-size:0", "--cfg=smpi/display-timing:yes",
    )  # fmt: skip
