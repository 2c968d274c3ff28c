"""The check of docs/smpirun-on.md's NetPIPE example (``study_runner.tools.smpirun_on_example``): times the model
predicts pass it, a time 50 ns off or a chassis as slow as Three Quads fail it; and the scripts run no Python of
their own (issue 62: the check was a heredoc in scripts/check-smpirun-on-example)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generators import build_platform
from study_runner.simulation.smpi import SMPI_ENVELOPE_BYTES
from study_runner.tools.smpirun_on_example import PLATFORMS
from study_runner.tools.smpirun_on_example import failures
from study_runner.tools.smpirun_on_example import main
from tests.conftest import REPO

SIZES = [1 << k for k in range(21)] + [3 << k for k in range(19)]


def modelled(family: str) -> list[tuple[int, float, float]]:
    """NetPIPE's lines as the platform model gives them."""
    platform = build_platform(family, PLATFORMS[family])
    latency, bandwidth = platform.route_latency("host-0", "host-63"), platform.route_bandwidth("host-0", "host-63")
    rows = []
    for size in sorted(SIZES):
        seconds = latency + (size + SMPI_ENVELOPE_BYTES) / bandwidth
        rows.append((size, size * 8 / seconds / 1e6, seconds))
    return rows


def test_the_models_own_times_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for family in PLATFORMS:
        lines = [f"{size} {mbps} {seconds!r}" for size, mbps, seconds in modelled(family)]
        (tmp_path / f"{family}.np").write_text("\n".join(lines) + "\n")
    assert main([str(tmp_path)]) == 0
    assert "check-smpirun-on-example: ok: Three Quads slower by 2.00-2.00 us" in capsys.readouterr().err


def test_a_time_off_the_model_fails() -> None:
    runs = {family: modelled(family) for family in PLATFORMS}
    size, mbps, seconds = runs["threequads"][5]
    runs["threequads"][5] = (size, mbps, seconds + 50e-9)
    failed, _ = failures(runs)
    assert failed == ["threequads: a NetPIPE time is 50 ns off the model",
                      failed[1]] and failed[1].startswith("differences")  # fmt: skip
    runs = {"threequads": modelled("threequads"), "enterprise": modelled("threequads")}
    assert "Three Quads is not slower than the chassis at every size" in failures(runs)[0]


def test_no_script_embeds_python() -> None:
    """A script is a thin shell: what it computes lives in a module with its tests."""
    for script in sorted((REPO / "scripts").iterdir()):
        if script.is_file():
            text = script.read_text(encoding="utf-8", errors="replace")
            assert not re.search(r"python3?\"? -( |$)", text, re.M), f"{script.name} pipes Python into an interpreter"
