"""A quantity typed without its unit is refused (issue 59): ``--link-lat 5`` was written as latency="5.0s" while
``--link-bw 10`` was refused. Text needs a unit, 0 aside; a Python number is in the base unit; a number in a study's
or a sweep's TOML is text a user typed, and refused too."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from generators import crossbar
from generators.errors import TopologyError
from generators.families import build_platform
from generators.families import refuse_numbers_without_unit
from generators.units import parse_bandwidth
from generators.units import parse_speed
from generators.units import parse_time
from study_runner.errors import StudyError
from study_runner.studies.pipeline import prepare_study
from study_runner.studies.study import load_study
from study_runner.sweeps.sweep import load_sweep
from tests.conftest import REPO
from tests.test_study import GOOD_STUDY
from tests.test_study import write_study
from tests.test_sweep import PINGPONG

TIME_HINT = "link_lat 5: give a unit (e.g. 5us or 5ns; units s, ms, us, ns, ps)"


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (parse_time, "5", TIME_HINT),
        (parse_time, " 2.5 ", "link_lat 2.5: give a unit (e.g. 2.5us or 2.5ns;"),
        (parse_time, "1e-7", "link_lat 1e-7: give a unit"),
        (parse_bandwidth, "10", "link_lat 10: give a unit (e.g. 10GBps or 10Gbps; units Bps for bytes/s, bps for"),
        (parse_speed, "2", "link_lat 2: give a unit (e.g. 2Gf; units f for flop/s, with a prefix k, M, G, T)"),
    ],
)
def test_text_without_a_unit_is_refused(parse: object, text: str, message: str) -> None:
    with pytest.raises(TopologyError) as refused:
        parse(text, "link_lat")  # type: ignore[operator]
    assert str(refused.value).startswith(message) and "\n" not in str(refused.value)


def test_zero_and_python_numbers_need_no_unit() -> None:
    assert parse_time("0") == parse_time(" 0.0 ") == parse_time(0) == 0.0
    assert parse_time(5e-6) == 5e-6 and parse_bandwidth(1e9) == 1e9 and parse_speed(2e9) == 2e9
    assert crossbar(2, link_lat=5e-6).links["host-0_to_xbar"].latency == 5e-6
    assert parse_speed("1e9", in_base_unit=True) == 1e9  # a file SimGrid reads: its base unit


def test_the_generator_function_refuses_a_bare_latency() -> None:
    with pytest.raises(TopologyError, match=f"^{re.escape(TIME_HINT)}"):
        build_platform("crossbar", {"hosts": "2", "link_lat": "5"})
    with pytest.raises(TopologyError, match=r"^shm_lat 5: give a unit"):
        crossbar(2, shm_bw="1GBps", shm_lat="5")


def test_python_m_generators_link_lat_5_is_one_error(tmp_path: Path) -> None:
    command = ["crossbar", "--hosts", "2", "--link-lat", "5", "-o", str(tmp_path / "x.xml")]
    done = subprocess.run(
        [sys.executable, "-m", "generators", *command], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"python -m generators: error: {TIME_HINT}"]
    assert done.stdout == "" and list(tmp_path.iterdir()) == []


def test_a_number_in_a_toml_file_is_refused_as_its_text() -> None:
    refuse_numbers_without_unit("crossbar", {"hosts": 2, "link_lat": 0, "link_bw": "1GBps", "nbl": 2})
    with pytest.raises(TopologyError, match=f"^{re.escape(TIME_HINT)}"):
        refuse_numbers_without_unit("crossbar", {"hosts": 2, "link_lat": 5})
    with pytest.raises(TopologyError, match=r"^memory_bw 40000000000\.0: give a unit \(e\.g\. 40000000000\.0GBps"):
        refuse_numbers_without_unit("crossbar", {"memory_bw": 4e10})


def test_a_study_platform_needs_its_units(tmp_path: Path) -> None:
    for latency in ("5", '"5"'):
        study = write_study(tmp_path, GOOD_STUDY.replace("hosts = 2\n", f"hosts = 2\nlink_lat = {latency}\n", 1))
        with pytest.raises(StudyError, match=f"platform '?pair'?: {re.escape(TIME_HINT)}"):
            prepare_study(load_study(study), False, tmp_path / "no-bin", tmp_path)


@pytest.mark.parametrize("latencies", ["[5, 10]", '["5", "10"]'])
def test_a_sweep_platform_needs_its_units(tmp_path: Path, latencies: str) -> None:
    path = tmp_path / "sweep.toml"
    path.write_text(PINGPONG.replace('lat = ["1us", "5us"]', f"lat = {latencies}"))
    with pytest.raises(StudyError, match=f"point 0 .*: {re.escape(TIME_HINT)}"):
        load_sweep(path)
