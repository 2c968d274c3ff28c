"""The registry of families (``generators.families``): a family is declared once, in its module, and everything
that lists families derives from the registry (issue 42: ``FAMILIES`` was a hand-written tuple, the pictures'
parameters a table of their own, and ``generators`` exported 8 of the 11 builders)."""

from __future__ import annotations

import os
import subprocess
import sys

import generators
from generators.declare import REGISTRY
from generators.drawing import REPRESENTATIVE
from generators.families import FAMILIES
from tests.conftest import REPO

PROBE = '''"""A probe family of tests/test_families.py: a crossbar under another name."""

from generators.topologies.crossbar import crossbar, estimate
from generators.declare import family
from generators.params import Param, positive_int


@family(
    summary="a probe family (tests/test_families.py)",
    params=(Param("hosts", positive_int, "number of hosts"),),
    estimate=lambda values: estimate({**values, "nbl": None}),
    smallest={"hosts": 2},
    drawn={"hosts": 5},
)
def NAME(hosts):
    return crossbar.__wrapped__(hosts, 1e9, 1e-6, None, 1e9)
'''

CHECK = """
import sys
import generators
from generators.drawing import REPRESENTATIVE, draw_platform
from generators.families import FAMILIES
name, out = sys.argv[1], sys.argv[2]
assert name in FAMILIES, sorted(FAMILIES)
assert REPRESENTATIVE[name] == {"hosts": 5}
platform = generators.build_platform(name, FAMILIES[name].smallest)
assert platform.family == name and len(platform.hosts) == 2
draw_platform(generators.build_platform(name, REPRESENTATIVE[name]), out + "/probe.png")
print("ok")
"""


def test_every_family_is_registered_exported_and_drawn() -> None:
    assert FAMILIES == dict(sorted(REGISTRY.items())) and len(FAMILIES) == 11
    for name, spec in FAMILIES.items():
        assert getattr(generators, name) is spec.build and name in generators.__all__, name
        assert REPRESENTATIVE[name] == dict(spec.drawn)
        assert generators.build_platform(name, spec.smallest).family == name


def test_adding_a_family_module_is_the_whole_job(tmp_path) -> None:
    """A new module of generators.topologies that declares a family is found, built, offered by the CLI and drawn, with
    no other change."""
    name = f"probe{os.getpid()}"
    module = REPO / "generators" / "topologies" / f"{name}.py"
    module.write_text(PROBE.replace("NAME", name))
    try:
        checked = subprocess.run([sys.executable, "-c", CHECK, name, str(tmp_path)], capture_output=True, text=True,
                                 cwd=REPO, timeout=120)  # fmt: skip
        cli = subprocess.run([sys.executable, "-m", "generators", name, "--hosts", "3", "-o", str(tmp_path / "p.xml")],
                             capture_output=True, text=True, cwd=REPO, timeout=120)  # fmt: skip
        listed = subprocess.run([sys.executable, "-m", "generators", "--help"], capture_output=True, text=True,
                                cwd=REPO, timeout=120)  # fmt: skip
    finally:
        module.unlink()
    assert checked.stdout.strip() == "ok", checked.stderr
    assert cli.returncode == 0 and (tmp_path / "p.xml").is_file(), cli.stderr
    assert name in listed.stdout and "a probe family" in listed.stdout
    assert (tmp_path / "probe.png").stat().st_size > 1000
