"""The ready platforms of platforms/: exactly what platforms/machines.toml writes, byte for byte, and loadable by
SimGrid with the model's hosts, links and routes."""

from __future__ import annotations

import filecmp
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators import TopologyError
from generators import build_platform
from generators.machines import CATALOGUE
from generators.machines import load_catalogue
from generators.machines import main
from generators.machines import write_ready
from generators.writer import compiled_library
from generators.writer import write_platform
from tests.conftest import simgrid_link_count

REPO = Path(__file__).resolve().parent.parent
PLATFORMS = REPO / "platforms"
READY = load_catalogue()
# SimGrid adds one link of its own to every platform (``__loopback__``).


@pytest.mark.slow  # builds every machine (or a large model): seconds to a minute
def test_every_committed_file_is_what_the_catalogue_writes(tmp_path: Path) -> None:
    """A generator change that changes a ready platform must change the committed file in the same commit."""
    written = write_ready(tmp_path, READY)
    expected = {path.relative_to(tmp_path) for path in written}
    differ = sorted(str(p) for p in expected if not filecmp.cmp(tmp_path / p, PLATFORMS / p, shallow=False))
    assert not differ, f"regenerate with `python -m generators.machines`: {differ} differ"
    committed = {p.relative_to(PLATFORMS) for p in PLATFORMS.rglob("*") if p.is_file() and p.suffix != ".so"}
    assert committed - {Path(CATALOGUE.name)} == expected


@pytest.mark.slow  # builds every machine (or a large model): seconds to a minute
def test_every_machine_of_the_papers_is_there() -> None:
    machines = {entry.machine for entry in READY.values()}
    assert machines >= {"three-quads", "chassis-4x16", "mlfm-testbed", "mlfm-d18", "fattree-648", "delta", "mira",
                        "juqueen", "sequoia", "bgq-partitions", "fx10"}  # fmt: skip
    sizes = {key: len(entry.build().hosts) for key, entry in READY.items() if entry.family != "torus"}
    assert sizes["three-quads/three-quads"] == sizes["chassis-4x16/chassis-4x16"] == 64
    assert (sizes["mlfm-testbed/mlfm-testbed"], sizes["mlfm-d18/mlfm-d18"]) == (32, 6156)
    assert (sizes["fattree-648/fattree-648"], sizes["delta/delta-nominal"], sizes["fx10/fx10"]) == (648, 512, 768)


def _pairs(hosts: list[str]) -> list[str]:
    """--route arguments: first to last, first to the middle, the middle to the first."""
    a, b, c = hosts[0], hosts[len(hosts) // 2], hosts[-1]
    return ["--route", a, c, "--route", a, b, "--route", b, a] if len(hosts) > 2 else ["--route", a, c]


@pytest.mark.parametrize("key", sorted(READY))
def test_simgrid_loads_it_as_the_model(key: str, tmp_path: Path, load_platform: Callable[..., dict[str, Any]]) -> None:
    entry = READY[key]
    model = entry.build()
    committed = PLATFORMS / entry.machine / f"{entry.file}{'.params' if model.compiled else '.xml'}"
    if model.compiled is not None:  # SimGrid loads the shared object, which reads the committed .params beside it
        shutil.copy(committed, tmp_path / committed.name)
        shutil.copy(compiled_library(model.compiled.library), tmp_path / f"{entry.file}.so")
        path = tmp_path / f"{entry.file}.so"
    elif committed.is_file():
        path = committed
    else:  # too large to commit: the same bytes, written here
        path = tmp_path / f"{entry.file}.xml"
        write_platform(model, path)
    loaded = load_platform(path, *_pairs(model.host_names))
    assert (loaded["hosts"], loaded["links"]) == (len(model.hosts), simgrid_link_count(model))
    for route in loaded["routes"]:
        assert route["links"] == model.route(route["src"], route["dst"])
    for name in entry.hostfiles:
        hosts = (PLATFORMS / entry.machine / f"{name}.hosts").read_text().split()
        assert hosts and set(hosts) <= set(model.host_names) and len(set(hosts)) == len(hosts)


def test_the_readme_command_writes_the_same_bytes(tmp_path: Path) -> None:
    """platforms/README.md gives each file's generator command: run as printed, it writes the committed bytes."""
    readme = (PLATFORMS / "README.md").read_text()
    wanted = ("platforms/mlfm-testbed/mlfm-testbed.xml", "platforms/mlfm-testbed/alloc-2x4x3.hosts")
    (line,) = [line for line in readme.splitlines() if line.startswith("python -m generators") and wanted[1] in line]
    (tmp_path / "platforms" / "mlfm-testbed").mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, *shlex.split(line)[1:]], cwd=tmp_path, capture_output=True, text=True, env=_env()
    )
    assert done.returncode == 0, done.stderr
    for name in wanted:
        assert (tmp_path / name).read_bytes() == (REPO / name).read_bytes(), name


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


TEXTS = 'title = "t"\npaper = "p"\nfigures = "f"\nnode = "n"\n'
"""The descriptive keys every catalogue entry needs."""


def _small_catalogue(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "machines.toml"
    path.write_text(
        '[[platform]]\nmachine = "pair"\nfile = "pair"\n' + TEXTS + 'family = "mesh"\n'
        'params = { width = 2, height = 1, link_lat = "100ns" }\nhostfiles = { "pair" = "all" }\n' + extra
    )
    return path


def test_check_fails_on_one_changed_byte(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    catalogue = _small_catalogue(tmp_path)
    assert main(["--catalogue", str(catalogue)]) == 0
    platform = tmp_path / "pair" / "pair.xml"
    assert main(["--catalogue", str(catalogue), "--check"]) == 0
    data = bytearray(platform.read_bytes())
    data[data.index(b'latency="1e-07s"') + 9] = ord("2")  # 1e-07 -> 2e-07
    platform.write_bytes(bytes(data))
    assert main(["--catalogue", str(catalogue), "--check"]) == 1
    assert f"{platform} differs from what machines.toml writes" in capsys.readouterr().err
    (tmp_path / "pair" / "stray.xml").write_text("")
    platform.unlink()
    assert main(["--catalogue", str(catalogue), "--check"]) == 1
    assert "stray.xml is not written by machines.toml" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('[[platform]]\nmachine = "x"\n', r"platform 2: missing key 'family'"),
        ('[[platform]]\nmachine = "pair"\nfile = "pair"\n' + TEXTS + 'family = "mesh"\n'
         "params = { width = 2, height = 2 }\n", r"pair/pair is described twice"),
        ('[[platform]]\nmachine = "q"\nfile = "q"\n' + TEXTS + 'family = "hypercube"\n',
         r"unknown family 'hypercube'"),
        ('[[platform]]\nmachine = "q"\nfile = "q"\n' + TEXTS + 'family = "mesh"\n'
         "params = { width = true }\n", r"params.width must be a string or a number, got True"),
        ('[[platform]]\nmachine = "Q/../x"\nfile = "q"\n' + TEXTS + 'family = "mesh"\n',
         r"machine must be lower-case letters"),
        ('[[platform]]\nmachine = "q"\ncolour = 3\n', r"platform 2: unknown key 'colour'"),
    ],
)  # fmt: skip
def test_a_bad_catalogue_is_one_clear_error(tmp_path: Path, extra: str, message: str) -> None:
    with pytest.raises(TopologyError, match=message):
        load_catalogue(_small_catalogue(tmp_path, extra))


def test_a_catalogue_is_platform_tables_only(tmp_path: Path) -> None:
    (tmp_path / "machines.toml").write_text("colour = 3\n")
    with pytest.raises(TopologyError, match=r"the catalogue is a list of \[\[platform\]\] tables only"):
        load_catalogue(tmp_path / "machines.toml")


def test_a_bad_parameter_names_the_platform(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    catalogue = _small_catalogue(tmp_path)
    catalogue.write_text(catalogue.read_text().replace("width = 2", "width = -2"))
    with pytest.raises(SystemExit) as exit_:
        main(["--catalogue", str(catalogue)])
    assert exit_.value.code == 2
    assert "error: pair/pair: width must be an integer >= 1, got -2" in capsys.readouterr().err
    assert not (tmp_path / "pair").exists() or not any((tmp_path / "pair").iterdir())


def test_studies_run_on_the_committed_bytes(tmp_path: Path) -> None:
    """A study platform named by machine is built from the catalogue's family and parameters: the study simulates
    the very file that is committed."""
    from study_runner.studies.study import load_study

    study = load_study("nbl-combine")
    spec = study.platforms["mesh16x32.nominal"]
    assert spec.machine == "delta/delta-nominal"
    write_platform(build_platform(spec.family, spec.params), tmp_path / "p.xml")
    assert (tmp_path / "p.xml").read_bytes() == (PLATFORMS / "delta" / "delta-nominal.xml").read_bytes()


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('machine = "delta/nowhere"', r"platforms.p.machine: no ready platform 'delta/nowhere' \(bgq-partitions/"),
        ('machine = "delta/pair-2x1"\nwidth = 3', r"platforms.p: unknown key 'width'; known: machine"),
    ],
)
def test_a_study_naming_a_bad_machine_is_refused(tmp_path: Path, table: str, message: str) -> None:
    from study_runner.errors import StudyError
    from study_runner.studies.study import load_study

    path = tmp_path / "s.toml"
    path.write_text(f'name = "s"\ntitle = "t"\nanalysis = "sanity_alpha_beta"\nruns = []\n[platforms.p]\n{table}\n')
    with pytest.raises(StudyError, match=message):
        load_study(path)


@pytest.mark.slow  # builds every machine (or a large model): seconds to a minute
def test_every_machine_says_where_its_node_comes_from() -> None:
    # A node given by cores/host_speed is a hardware figure with its source; a node the paper leaves open is the
    # placeholder (one core of 1 Gflop/s), and says so.
    for key, entry in load_catalogue().items():
        hosts = entry.build().hosts
        given = {"cores", "host_speed"} & entry.params.keys()
        if given:
            assert "hardware figure" in entry.node, key
            assert f"{hosts[0].cores} core" in entry.node, key
        else:
            assert "placeholder" in entry.node and (hosts[0].cores, hosts[0].speed) == (1, 1e9), key


@pytest.mark.slow  # builds every machine (or a large model): seconds to a minute
def test_blue_gene_q_and_fx10_nodes_are_their_data_sheets() -> None:
    catalogue = load_catalogue()
    for key, cores, speed in (("mira/mira", 16, 12.8e9), ("sequoia/sequoia", 16, 12.8e9), ("fx10/fx10", 16, 14.784e9)):
        host = catalogue[key].build().hosts[0]
        assert (host.cores, host.speed) == (cores, speed)
        assert host.cores * host.speed == pytest.approx({12.8e9: 204.8e9, 14.784e9: 236.544e9}[speed])
