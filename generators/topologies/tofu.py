"""Tofu (Fujitsu K computer / PRIMEHPC FX10): a 6-D mesh/torus, and the job scheduler's virtual 3-D shapes.

Source: Sugiyama et al., "Topology Aware Performance Prediction of Collective Communication Algorithms on
Multi-Dimensional Mesh/Torus", Table I: Fujitsu
PRIMEHPC FX10, 768 nodes, Tofu interconnect (6D mesh/torus), link bandwidth 5 GB/s; "the network is
physically 6-D, but the job scheduler groups it two dimensions at a time into a virtual 3-D shape, and
users specify nodes in 3-D"; the experiments use the shapes 1x6x4 and 2x3x4 (24 nodes).

Physical network. Dimensions (X, Y, Z, A, B, C): a Tofu unit of 12 nodes is A x B x C = 2 x 3 x 2, A and
C meshes of 2 (one cable), B a ring of 3; units are cabled as an X x Y x Z torus (``xyz``, ``xyz_wrap``).
Node ``host-k`` has coordinates (x, y, z, a, b, c), X fastest: ``k = x + X*(y + Y*(z + Z*(a + 2*(b + 3*c))))``.
The platform is what ``generators.topologies.torus.torus(dims=(X, Y, Z, 2, 3, 2), wrap=(wx, wy, wz, False, True,
False))`` (one implementation: its cables, dimension-ordered routing X first with SimGrid's tie rule,
endpoint-only limiter and compiled zone), renamed ``tofu-XxYxZ`` (``-wrap<flags>`` appended when X, Y, Z
are not all wrapped) in family ``tofu``. Real Tofu routes X, Y, Z, A, B, C in an order of its own and can
detour around faults; dimension order X first is the model's, stated as such.

Parameters (``python -m generators tofu --help``):

* ``xyz``: X x Y x Z, the number of Tofu units along each torus dimension (``4x4x4``); or ``preset``.
* ``preset``: ``fx10``, the paper's 768-node machine, X = Y = Z = 4 (:func:`fx10`). 768 = 12 * X*Y*Z needs
  X*Y*Z = 64; the paper does not give the machine's cabling, and 4x4x4 is the cubic choice: its virtual
  shape (2X, 3Y, 2Z) = 8 x 12 x 8 holds both experiment shapes (1x6x4 and 2x3x4) with room to move them.
  Another factorisation is a documented what-if through ``xyz``.
* ``xyz_wrap``: wrap-around of X, Y, Z (``yes``, ``no`` or ``1,1,0``); default yes (Tofu's X, Y, Z are
  tori). A, B, C are always mesh, ring, mesh.
* ``link_bw``: 5 GB/s per direction (Table I), every cable.
* ``link_lat``: 100 ns per cable, an ASSUMPTION: the order of Tofu's per-hop (router + cable) latency
  reported by Ajima et al. (2009); the end-to-end software overhead (about 1 us) is the MPI model's
  business, not the network's.
* ``nbl``: 4 link bandwidths, a DOCUMENTED MODELLING CHOICE. A Tofu node has 4 RDMA engines (Tofu network
  interfaces), each injecting at up to one link's bandwidth (Ajima et al., "Tofu: A 6D Mesh/Torus
  Interconnect for Exascale Computers", IEEE Computer 42(11), 2009; Hot Interconnects 2009), so at most 4
  of its 10 links are fed at once. The model's limiter (``generators.topologies.torus``) is endpoint-only and caps
  a node's injection PLUS reception together: nbl = 4 means 4 x 5 = 20 GB/s shared by everything the
  node sends and receives, not 20 GB/s each way. It binds only when a node has more than 4 links' worth
  of traffic in flight in total (e.g. 3 sends and 2 receives at full rate); ring and Bruck allgather steps
  (one send, one receive per node) stay below it. ``none`` drops it.
* ``host_speed``: 1 Gf, as every topolab family (the collectives studied are communication only).
* ``cores``, ``shm_bw``, ``shm_lat``: the node, as every family (``generators.node``): one core and SimGrid's
  implicit loopback by default; applied once, to the Tofu platform (torus builds it with the defaults).
* ``zone``: ``compiled`` (default: the platform is the compiled SimGrid zone ``NAME.so`` + ``NAME.params``;
  768 nodes of explicit routes would be an XML of 590 000 routes) or ``auto`` (``torus``'s choice: a
  routing graph when every ring is odd or of length <= 2, else explicit routes).

Virtual 3-D shape. The scheduler's virtual dimension i folds physical (X, A), (Y, B), (Z, C): the
virtual machine is (2X, 3Y, 2Z). Virtual coordinate v along a dimension whose folded unit dimension has
size n (2, 3, 2) maps to the torus coordinate ``p = v // n`` and the unit coordinate ``q``:

* ``fold="snake"`` (default): ``q = v % n`` when p is even, ``n - 1 - v % n`` when p is odd, so that
  consecutive virtual coordinates are physical neighbours (one cable apart);
* ``fold="block"``: ``q = v % n``; at each unit boundary (v = n*p - 1 -> n*p) two coordinates change, so
  consecutive virtual coordinates are two hops apart there.

Named placement ``shape:S1xS2xS3[@O1,O2,O3][/snake|/block]`` (:func:`shape_hosts`): the nodes of the
virtual cuboid S1 x S2 x S3 whose corner is at virtual offset (O1, O2, O3) (default 0,0,0), folded as
given (default snake); rank r runs at virtual coordinates offset + (r % S1, r // S1 % S2, r // (S1*S2)),
the first virtual dimension fastest. E.g. ``shape:2x3x4``, ``shape:1x6x4@3,0,2``, ``shape:2x3x4/block``,
``shape:2x3x4@0,3,0/block``. The cuboid must lie inside the virtual machine (no wrapping).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from generators.declare import family
from generators.errors import TopologyError
from generators.errors import shown
from generators.model import Grid
from generators.model import Platform
from generators.node import NODE_PARAMS
from generators.params import Param
from generators.params import cable_params
from generators.params import choice
from generators.params import flag_tuple
from generators.params import int_tuple
from generators.params import nbl_param
from generators.params import nonnegative_int
from generators.params import optional
from generators.size import Size
from generators.topologies.torus import build_torus
from generators.topologies.torus import coordinates
from generators.topologies.torus import estimate as torus_estimate
from generators.topologies.torus import index

__all__ = [
    "FOLDS",
    "PRESETS",
    "UNIT",
    "estimate",
    "fx10",
    "physical_dims",
    "shape_hosts",
    "tofu",
    "virtual_dims",
    "virtual_to_host",
]

UNIT = (2, 3, 2)  # A, B, C: the 12-node Tofu unit
UNIT_WRAP = (False, True, False)  # A and C meshes of 2, B a ring of 3
FOLDS = ("snake", "block")
PRESETS: dict[str, tuple[int, int, int]] = {"fx10": (4, 4, 4)}


def _xyz(value: object) -> tuple[int, int, int]:
    """Validate X, Y, Z: three integers >= 1."""
    if not isinstance(value, tuple | list) or len(value) != 3:
        raise TopologyError(f"xyz must be three integers >= 1 (X x Y x Z, e.g. 4x4x4), got {shown(value)}")
    for n in value:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise TopologyError(f"xyz must be three integers >= 1 (X x Y x Z, e.g. 4x4x4), got {shown(value)}")
    return (value[0], value[1], value[2])


def physical_dims(xyz: tuple[int, int, int]) -> tuple[int, ...]:
    """The 6-D shape (X, Y, Z, A, B, C).

    >>> physical_dims((4, 4, 4))
    (4, 4, 4, 2, 3, 2)
    """
    return (*_xyz(xyz), *UNIT)


def virtual_dims(xyz: tuple[int, int, int]) -> tuple[int, int, int]:
    """The scheduler's virtual 3-D shape (2X, 3Y, 2Z).

    >>> virtual_dims((4, 4, 4))
    (8, 12, 8)
    """
    x, y, z = _xyz(xyz)
    return (x * UNIT[0], y * UNIT[1], z * UNIT[2])


def _machine_xyz(platform_or_xyz: Platform | tuple[int, ...]) -> tuple[int, int, int]:
    """X, Y, Z of a tofu platform, of (X, Y, Z), or of the physical dims (X, Y, Z, 2, 3, 2)."""
    if isinstance(platform_or_xyz, Platform):
        if platform_or_xyz.family != "tofu":
            raise TopologyError(f"{platform_or_xyz.name} is not a tofu platform (family {platform_or_xyz.family})")
        assert platform_or_xyz.grid is not None  # every tofu platform has one
        return _xyz(platform_or_xyz.grid.dims[:3])
    dims = tuple(platform_or_xyz)
    if len(dims) == 6 and dims[3:] == UNIT:
        dims = dims[:3]
    return _xyz(dims)


def virtual_to_host(platform_or_xyz: Platform | tuple[int, ...], v: tuple[int, int, int], fold: str = "snake") -> str:
    """The host at virtual coordinates ``v`` of a tofu machine (a platform, or its (X, Y, Z)).

    >>> [virtual_to_host((4, 4, 4), (v, 0, 0)) for v in range(4)]  # snake: (x, a) = (0,0) (0,1) (1,1) (1,0)
    ['host-0', 'host-64', 'host-65', 'host-1']
    >>> [virtual_to_host((4, 4, 4), (v, 0, 0), "block") for v in range(4)]  # block: (0,0) (0,1) (1,0) (1,1)
    ['host-0', 'host-64', 'host-1', 'host-65']
    """
    xyz = _machine_xyz(platform_or_xyz)
    if fold not in FOLDS:
        raise TopologyError(f"fold must be one of {', '.join(FOLDS)}, got {fold!r}")
    size = virtual_dims(xyz)
    if len(v) != 3 or not all(isinstance(c, int) and 0 <= c < s for c, s in zip(v, size, strict=True)):
        raise TopologyError(f"virtual coordinates {v!r} are outside the virtual {'x'.join(map(str, size))} machine")
    torus_coords, unit_coords = [], []
    for c, n in zip(v, UNIT, strict=True):
        p, q = divmod(c, n)
        torus_coords.append(p)
        unit_coords.append(n - 1 - q if fold == "snake" and p % 2 else q)
    return f"host-{index((*torus_coords, *unit_coords), physical_dims(xyz))}"


def shape_hosts(
    platform_or_xyz: Platform | tuple[int, ...],
    shape: tuple[int, int, int],
    offset: tuple[int, int, int] = (0, 0, 0),
    fold: str = "snake",
) -> list[str]:
    """Hosts of the virtual cuboid ``shape`` at ``offset``, in rank order (first virtual dimension fastest).

    >>> shape_hosts((4, 4, 4), (2, 3, 1))
    ['host-0', 'host-64', 'host-128', 'host-192', 'host-256', 'host-320']
    """
    xyz = _machine_xyz(platform_or_xyz)
    size = virtual_dims(xyz)
    text = "x".join(map(str, shape))
    if len(shape) != 3 or len(offset) != 3 or min(shape) < 1 or min(offset) < 0:
        raise TopologyError(f"shape {text} at offset {offset!r}: need three sizes >= 1 and three offsets >= 0")
    if any(o + s > m for o, s, m in zip(offset, shape, size, strict=True)):
        raise TopologyError(
            f"shape {text} at offset {','.join(map(str, offset))} does not fit the virtual "
            f"{'x'.join(map(str, size))} machine (2X x 3Y x 2Z of xyz {'x'.join(map(str, xyz))})"
        )
    corners = (coordinates(r, tuple(shape)) for r in range(math.prod(shape)))  # first dimension fastest
    return [virtual_to_host(xyz, tuple(o + c for o, c in zip(offset, v, strict=True)), fold) for v in corners]


_SHAPE = re.compile(r"(\d+)x(\d+)x(\d+)(?:@(\d+),(\d+),(\d+))?(?:/(\w+))?", re.ASCII)


def _shape_placement(platform: Platform, argument: str) -> list[str]:
    """Named placement ``shape:S1xS2xS3[@O1,O2,O3][/snake|/block]``."""
    match = _SHAPE.fullmatch(argument.strip())
    if match is None or (match[7] is not None and match[7] not in FOLDS):
        raise TopologyError(
            f"placement shape needs S1xS2xS3[@O1,O2,O3][/snake|/block] (e.g. shape:2x3x4@0,3,0/block), got {argument!r}"
        )
    numbers = [nonnegative_int(g, "placement shape") if g is not None else 0 for g in match.groups()[:6]]
    return shape_hosts(platform, tuple(numbers[:3]), tuple(numbers[3:]), match[7] or "snake")  # type: ignore[arg-type]


def _machine(
    xyz: tuple[int, ...] | None, preset: str | None, xyz_wrap: tuple[bool, ...]
) -> tuple[tuple[int, int, int], tuple[bool, ...]]:
    """X, Y, Z (from ``xyz`` or the preset, which must agree) and the wrap-around of each."""
    if preset is not None:
        if xyz is not None and tuple(xyz) != PRESETS[preset]:
            shape = "x".join(map(str, PRESETS[preset]))
            raise TopologyError(f"preset {preset} is xyz {shape}; got xyz {'x'.join(map(str, xyz))} too")
        xyz = PRESETS[preset]
    if xyz is None:
        raise TopologyError("tofu needs xyz (X x Y x Z Tofu units, e.g. 4x4x4) or a preset (fx10)")
    checked = _xyz(tuple(xyz))
    wraps = xyz_wrap * 3 if len(xyz_wrap) == 1 else xyz_wrap
    if len(wraps) != 3:
        raise TopologyError(f"xyz_wrap must be one flag or one per X, Y, Z dimension (3), got {len(wraps)}")
    return checked, wraps


def estimate(params: Mapping[str, Any]) -> Size:
    """What :func:`tofu` builds: the torus estimate (``generators.topologies.torus.estimate``) of its 6-D shape.

    >>> estimate({"xyz": (4, 4, 4), "preset": None, "xyz_wrap": (True,), "nbl": 4.0, "zone": "compiled"}).hosts
    768
    """
    xyz, wraps = _machine(params["xyz"], params["preset"], params["xyz_wrap"])
    return torus_estimate({**params, "dims": physical_dims(xyz), "wrap": (*wraps, *UNIT_WRAP)})


@family(
    summary="Tofu 6-D mesh/torus (X, Y, Z tori x 2x3x2 units), virtual 3-D shape placements",
    params=(
        Param("xyz", optional(int_tuple), "Tofu units along X, Y, Z (e.g. 4x4x4; 12 nodes each), or none", "none"),
        Param("preset", optional(choice(*PRESETS)), "fx10: the paper's 768-node FX10 (xyz 4x4x4), or none", "none"),
        Param("xyz_wrap", flag_tuple, "wrap-around of X, Y, Z: yes, no or 1,1,0 (A, C mesh, B ring)", "yes"),
        *cable_params("5GBps", "100ns", bw_note="Table I: 5 GB/s", lat_note="assumed Tofu per-hop order"),
        nbl_param(
            help="endpoint-only cap on a node's injection + reception in link bandwidths (4 RDMA engines), or none",
            default="4",
        ),
        *NODE_PARAMS,
        Param(
            "zone",
            choice("compiled", "auto"),
            "SimGrid representation: compiled (a shared object: the file must end in .so) or auto (XML)",
            "compiled",
        ),
    ),
    estimate=estimate,
    placements={"shape": _shape_placement},
    smallest={"xyz": "1x1x1", "zone": "auto"},
    drawn={"xyz": "2x2x2", "zone": "auto"},  # 8 Tofu units, 96 nodes
)
def tofu(
    xyz: tuple[int, int, int] | None,
    preset: str | None,
    xyz_wrap: tuple[bool, ...],
    link_bw: float,
    link_lat: float,
    nbl: float | None,
    host_speed: float,
    zone: str,
) -> Platform:
    """Return the model of a Tofu machine of X x Y x Z units (module docstring: every parameter's figure).

    Examples
    --------
    >>> p = tofu((2, 2, 1), zone="auto")
    >>> p.name, len(p.hosts), p.grid.dims, p.grid.wraps
    ('tofu-2x2x1', 48, (2, 2, 1, 2, 3, 2), (True, True, True, False, True, False))
    >>> p.route("host-0", "host-5")  # (0,0,0,0,0,0) -> (1,0,0,1,0,0): X, then A
    ['host-0_nbl', 'host-0_to_host-1', 'host-1_to_host-5', 'host-5_nbl']
    """
    xyz, wraps = _machine(xyz, preset, xyz_wrap)
    # The node values (cores, shm_bw, shm_lat) are applied by tofu's own declaration, as for any family.
    name = "tofu-" + "x".join(map(str, xyz)) + ("" if all(wraps) else "-wrap" + "".join(str(int(w)) for w in wraps))
    platform = build_torus(Grid(physical_dims(xyz), (*wraps, *UNIT_WRAP)), link_bw, link_lat, nbl, host_speed, zone)
    platform.name = name  # its compiled zone's too: the writer names the zone by its platform
    return platform


def fx10(**kwargs: object) -> Platform:
    """The paper's Fujitsu PRIMEHPC FX10: 768 nodes, xyz 4x4x4, virtual shape 8x12x8.

    >>> p = fx10()
    >>> len(p.hosts), virtual_dims(p.grid.dims[:3]), p.compiled is not None
    (768, (8, 12, 8), True)
    """
    return tofu(preset="fx10", **kwargs)  # type: ignore[arg-type]
