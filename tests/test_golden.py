"""The writer's output, pinned: one small platform of every family (and each representation) against a
committed file in ``tests/data/golden/``, byte for byte.

A change to a generator or to the writer that changes what users get must change these files in the same
commit, where review sees it. To rewrite them after such a change:

    .venv/bin/python -m tests.test_golden
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from generators import build_platform
from generators import platform_suffix
from generators import write_platform

GOLDEN = Path(__file__).parent / "data" / "golden"

CASES: dict[str, tuple[str, dict[str, object]]] = {
    "crossbar-2-cores": ("crossbar", {"hosts": 2, "cores": 4, "shm_bw": "10GBps", "shm_lat": "500ns"}),
    "crossbar-3-nominal": ("crossbar", {"hosts": 3, "nbl": "nominal"}),
    "dragonfly-5x2x2-valiant": (
        "dragonfly",
        {
            "groups": 5,
            "routers": 2,
            "hosts": 2,
            "global_ports": 2,
            "routing": "valiant",
            "arrangement": "relative",
            "nbl": 1,
        },
    ),
    "enterprise-2x3": ("enterprise", {"modules": 2, "ports": 3, "backplane": "2GBps", "module_fabric": "1GBps"}),
    "fattree-4": ("fattree", {"radix": 4, "nbl": 2}),
    "fattree-4-l3-compiled": ("fattree", {"radix": 4, "levels": 3, "leaves": 4}),
    "fattree-6-4down": ("fattree", {"radix": 6, "servers_per_leaf": 4, "leaves": 3}),
    "fattree-6-l3-4down-compiled": ("fattree", {"radix": 6, "levels": 3, "leaves": 3, "servers_per_leaf": 4}),
    "hyperx-3x2-k2-nbl": ("hyperx", {"dims": "3x2", "hosts": 2, "links": 2, "nbl": 1}),
    "slimfly-q3-nbl": ("slimfly", {"q": 3, "hosts": 1, "nbl": 1}),
    "mesh-2x2-shm": ("mesh", {"width": 2, "height": 2, "cores": 2, "shm_bw": "20GBps", "shm_lat": "100ns"}),
    "mesh-3x2-nbl": ("mesh", {"width": 3, "height": 2, "nbl": "nominal"}),
    "mlfm-2": ("mlfm", {"d": 2}),
    "mlfm-3-testbed-compiled": (
        "mlfm",
        {
            "d": 3,
            "servers_per_leaf": "3,3,2",
            "spine_bw": "2GBps",
            "spine_choice": "destination",
            "nbl": 1,
            "zone": "compiled",
        },
    ),
    "threequads-2": ("threequads", {"q": 2, "switch_fabric": "1GBps"}),
    "tofu-1x1x1-auto": ("tofu", {"xyz": "1x1x1", "zone": "auto"}),
    "tofu-1x1x2-compiled": ("tofu", {"xyz": "1x1x2"}),
    "torus-3x3-graph": ("torus", {"dims": "3x3"}),
    "torus-4x2-full": ("torus", {"dims": "4x2", "link_lat": "1.54us"}),
    "torus-4x2-compiled-shm": (
        "torus",
        {"dims": "4x2", "zone": "compiled", "cores": 16, "shm_bw": "20GBps", "shm_lat": "200ns"},
    ),
    "torus-4x4x2-compiled": ("torus", {"dims": "4x4x2", "zone": "compiled"}),
}
"""Each case's file: the XML, or for a compiled zone its parameter file (the shared object is built code)."""


def _written(name: str, directory: Path) -> Path:
    """Writes case ``name`` into ``directory``; the text file that pins it."""
    family, params = CASES[name]
    model = build_platform(family, params)
    path = directory / f"{name}{platform_suffix(model)}"
    write_platform(model, path)
    return path.with_suffix(".params") if path.suffix == ".so" else path


def _golden(written: Path) -> Path:
    return GOLDEN / written.name


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_writer_output_is_the_committed_file(name: str, tmp_path: Path) -> None:
    written = _written(name, tmp_path)
    golden = _golden(written)
    assert golden.is_file(), f"{golden} is missing: run .venv/bin/python -m tests.test_golden"
    new, old = written.read_text().splitlines(), golden.read_text().splitlines()
    first = next((k for k, (a, b) in enumerate(zip(new, old, strict=False)) if a != b), min(len(new), len(old)))
    assert new == old, (
        f"{name}: the generator now writes another file than {golden.relative_to(GOLDEN.parents[2])}; "
        f"first difference at line {first + 1}:\n  committed: {old[first] if first < len(old) else '<end>'}\n"
        f"  written:   {new[first] if first < len(new) else '<end>'}\n"
        "If the change is intended, rewrite the golden files (.venv/bin/python -m tests.test_golden) "
        "in the same commit."
    )


def test_every_family_is_pinned(tmp_path: Path) -> None:
    from generators.families import FAMILIES

    assert {family for family, _ in CASES.values()} == set(FAMILIES)
    assert {p.name for p in GOLDEN.iterdir()} == {_written(name, tmp_path).name for name in CASES}


def main() -> int:
    """Rewrite every golden file from the current generators."""
    import tempfile

    GOLDEN.mkdir(parents=True, exist_ok=True)
    for stale in GOLDEN.iterdir():
        stale.unlink()
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(CASES):
            written = _written(name, Path(tmp))
            _golden(written).write_bytes(written.read_bytes())
            print(f"wrote {_golden(written)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
