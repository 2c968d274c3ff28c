"""What the layouts and the renderer agree on: the structure picture's colours and how amounts are printed."""

from __future__ import annotations

__all__ = ["CABLE", "HOST", "PALETTE", "SWITCH", "palette_color", "si"]

#: Colours of the things a layout tells apart (spines, torus dimensions ...), in turn.
PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
#: Default colours of hosts, switches and cables in a structure picture.
HOST = "#4c72b0"
SWITCH = "#dd8452"
CABLE = "#555555"


def palette_color(n: int) -> str:
    """The colour of the n-th thing told apart, the palette starting over when it runs out.

    >>> palette_color(0) == palette_color(len(PALETTE))
    True
    """
    return PALETTE[n % len(PALETTE)]


def si(value: float) -> str:
    """An amount with an SI prefix and a space for the unit after it.

    >>> si(1.5e9), si(12.0)
    ('1.5 G', '12 ')
    """
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}"
    return f"{value:.3g} "
