"""The check of the smpirun-on example of ``docs/smpirun-on.md`` (``scripts/check-smpirun-on-example``): NetPIPE's
times on Three Quads and on the chassis switch against the platform model.

Three Quads is slower at every message size, by the model's route-latency difference (2 us) within 20 ns; every
NetPIPE time is within 20 ns of latency + (S + 16) / bandwidth; the 1 MiB throughputs agree within 0.1%.

    python -m study_runner.tools.smpirun_on_example NP_DIR   # NP_DIR holds threequads.np and enterprise.np
"""

from __future__ import annotations

import sys
from pathlib import Path

from generators import build_platform
from study_runner.simulation.smpi import SMPI_ENVELOPE_BYTES

__all__ = ["PLATFORMS", "TOLERANCE_S", "failures", "main"]

TOLERANCE_S = 20e-9
"""NetPIPE prints 10 ns; its microsecond clock over 100 round trips adds at most 5 ns."""

PLATFORMS = {"threequads": {"q": 4}, "enterprise": {"modules": 4, "ports": 16}}
"""The two machines of the example, as it builds them."""

Row = tuple[int, float, float]
"""A NetPIPE line: message size (bytes), throughput (Mbit/s), time (s)."""


def _runs(np_dir: Path) -> dict[str, list[Row]]:
    runs = {}
    for family in PLATFORMS:
        rows = [line.split() for line in (np_dir / f"{family}.np").read_text().splitlines() if line.strip()]
        runs[family] = [(int(size), float(mbps), float(seconds)) for size, mbps, seconds in rows]
    return runs


def failures(runs: dict[str, list[Row]]) -> tuple[list[str], str]:
    """What fails of the check on NetPIPE's ``runs`` by family, and the line that says what holds."""
    model = {}
    for family, params in PLATFORMS.items():
        platform = build_platform(family, params)
        model[family] = platform.route_latency("host-0", "host-63"), platform.route_bandwidth("host-0", "host-63")
    failed = []
    tq, es = runs["threequads"], runs["enterprise"]
    if [r[0] for r in tq] != [r[0] for r in es] or len(tq) < 30 or tq[0][0] != 1 or tq[-1][0] != 1 << 20:
        failed.append(f"unexpected message sizes: {[r[0] for r in tq]} / {[r[0] for r in es]}")
    for family, rows in runs.items():
        latency, bandwidth = model[family]
        worst = max(abs(t - (latency + (size + SMPI_ENVELOPE_BYTES) / bandwidth)) for size, _, t in rows)
        if worst > TOLERANCE_S:
            failed.append(f"{family}: a NetPIPE time is {worst * 1e9:.0f} ns off the model")
    expected = model["threequads"][0] - model["enterprise"][0]
    differences = [a[2] - b[2] for a, b in zip(tq, es, strict=False)]
    if not all(d > 0 for d in differences):
        failed.append("Three Quads is not slower than the chassis at every size")
    if max(abs(d - expected) for d in differences) > TOLERANCE_S:
        failed.append(f"differences {min(differences) * 1e6:.3f}-{max(differences) * 1e6:.3f} us, model "
                      f"{expected * 1e6} us")  # fmt: skip
    if abs(tq[-1][1] / es[-1][1] - 1) > 1e-3:
        failed.append(f"1 MiB throughputs differ: {tq[-1][1]} vs {es[-1][1]} Mbit/s")
    holds = (
        f"Three Quads slower by {min(differences) * 1e6:.2f}-{max(differences) * 1e6:.2f} us at all {len(tq)} sizes "
        f"(model {expected * 1e6:g} us); 1 byte {tq[0][2] * 1e6:.2f} vs {es[0][2] * 1e6:.2f} us; "
        f"1 MiB {tq[-1][1]:.2f} vs {es[-1][1]:.2f} Mbit/s"
    )
    return failed, holds


def main(argv: list[str] | None = None) -> int:
    """Check the NetPIPE outputs in the directory ``argv[0]``: 0 when everything holds, 1 otherwise."""
    (np_dir,) = sys.argv[1:] if argv is None else argv
    failed, holds = failures(_runs(Path(np_dir)))
    for failure in failed:
        print(f"check-smpirun-on-example: FAIL: {failure}", file=sys.stderr)
    if not failed:
        print(f"check-smpirun-on-example: ok: {holds}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
