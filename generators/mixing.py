"""The hash by which oblivious routing rules choose among equal paths, per pair of hosts.

A static route per pair of hosts is what SimGrid's routing zones give; where a rule has several equally good
paths (a copy of a global cable, a Valiant intermediate group, one of parallel cables, one of several shortest
paths), it picks one by a hash of the pair, so that a pattern spreads over the choices as random choices would and
the same pair always takes the same path. The compiled zones compute the same hash (``simgrid_cpp/zone_common.hpp``).
"""

from __future__ import annotations

__all__ = ["mix"]

_MASK = (1 << 64) - 1


_MASK = (1 << 64) - 1


def mix(pair: int) -> int:
    """SplitMix64's output function of ``pair`` (Steele, Lea and Flood, OOPSLA 2014): a 64-bit hash whose every
    bit depends on every bit of the input, the same in the compiled zone (unsigned 64-bit arithmetic).

    >>> hex(mix(0)), mix(1) % 7  # 0xe220a8397b1dcdaf: the first output of SplitMix64 seeded with 0
    ('0xe220a8397b1dcdaf', 2)
    """
    z = (pair + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)
