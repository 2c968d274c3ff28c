"""Rank placement and hostfiles (``generators.placement``): the platform's order, an explicit order, and bad
placements as one clear error. Named placements are their family's: tests/test_mlfm.py, test_tofu.py, test_node.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from generators import crossbar
from generators import place_ranks
from generators import write_hostfile
from generators.errors import TopologyError


class TestPlacement:
    def test_default_order(self, tmp_path: Path) -> None:
        hosts = place_ranks(crossbar(4), 3)
        write_hostfile(hosts, tmp_path / "h")
        assert (tmp_path / "h").read_text() == "host-0\nhost-1\nhost-2\n"

    def test_explicit_order(self) -> None:
        assert place_ranks(crossbar(4), 2, ["host-3", "host-1"]) == ["host-3", "host-1"]

    @pytest.mark.parametrize(
        ("ranks", "order", "message"),
        [
            (5, None, r"5 ranks do not fit on 4 hosts"),
            (0, None, r"ranks must be an integer >= 1, got 0"),
            (2, ["host-1", "host-1"], r"names a host twice"),
            (1, ["host-7"], r"has no host 'host-7'"),
        ],
    )
    def test_bad_placements(self, ranks: int, order: list[str] | None, message: str) -> None:
        with pytest.raises(TopologyError, match=message):
            place_ranks(crossbar(4), ranks, order)
