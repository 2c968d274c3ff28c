"""The parts of a picture: the public :class:`Layout` (with its :class:`Edge` and :class:`Group`), and the
:class:`Draft` that each family's layout function returns for :func:`generators.drawing.layout` to complete."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field

from generators.drawing.geometry import Box
from generators.drawing.geometry import Path2D
from generators.drawing.geometry import Point

__all__ = ["Draft", "Edge", "Group", "Layout", "Route", "host_index"]


@dataclass(frozen=True)
class Edge:
    """One cable: the undirected node pair, the directed links it carries and how to draw it.

    ``path`` is the polyline from ``a`` to ``b`` (two points for a straight cable); ``kind`` is
    ``"cable"`` or ``"wrap"`` (a wrap-around cable of a torus ring, drawn dashed); ``color`` is its
    colour in a structure picture (None: the default).
    """

    a: str
    b: str
    links: tuple[str, ...]
    path: Path2D
    kind: str = "cable"
    color: str | None = None


@dataclass(frozen=True)
class Group:
    """A labelled box showing part of the family's structure: ``box`` is (x0, y0, x1, y1)."""

    label: str
    box: Box
    color: str = "#888888"
    fill: bool = False


@dataclass(frozen=True)
class Layout:
    """Where a platform's nodes go and how its cables are drawn.

    Attributes
    ----------
    positions : mapping of str to (x, y)
        Every host and every switch/router; host pitch is about one unit.
    hosts, switches : tuple of str
        The nodes drawn as hosts (circles) and as switches/routers (squares).
    edges : tuple of Edge
        One per cable of the model.
    node_links : mapping of str to tuple of str
        Links inside a node (``_nbl``, ``_port``, ``_fabric``, ``_shm``), by node.
    groups : tuple of Group
        Labelled boxes (modules, layers, quads, Tofu units, subnetworks ...).
    labels : mapping of str to str
        Short labels of nodes, drawn when they fit.
    colors : mapping of str to str
        Structure-picture colours of nodes that differ from the default.
    notes : tuple of str
        Lines of explanation drawn under the title (axes, what dashed means ...).
    legend : tuple of (str, str)
        Extra legend entries (label, colour) for coloured cables.
    """

    positions: Mapping[str, Point]
    hosts: tuple[str, ...]
    switches: tuple[str, ...]
    edges: tuple[Edge, ...]
    node_links: Mapping[str, tuple[str, ...]]
    groups: tuple[Group, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    colors: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    legend: tuple[tuple[str, str], ...] = ()


Route = Callable[[str, str], tuple[Path2D | None, str, str | None]]
"""``route(a, b)``: the (path, kind, colour) of the cable between nodes a and b (path None: straight; colour
None: the default)."""


@dataclass
class Draft:
    """What a family's layout function returns: positions and decorations, and ``route`` for the cables that
    are not straight lines in the default colour (None: all are)."""

    positions: dict[str, Point]
    groups: list[Group] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    colors: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    legend: list[tuple[str, str]] = field(default_factory=list)
    route: Route | None = None


def host_index(host: str) -> int:
    """k of ``host-<k>``, the name of the k-th host of the crossbar, enterprise and torus-like families.

    Kept here because those family modules name hosts this way without exposing the inverse (``torus`` and
    ``crossbar`` strip the prefix inline).

    >>> host_index("host-12")
    12
    """
    return int(host.removeprefix("host-"))
