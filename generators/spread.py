"""A message spread over several paths: the Python twin of ``simgrid_cpp/spread.hpp``.

A network that spreads the packets of a message over several paths (per-packet Valiant, packet spraying over
parallel cables) is modelled at flow level as one flow whose route lists every cable the paths cross, once, with
the share of the message that crosses it: SimGrid charges each cable with that share (topolab's SimGrid patch 0008)
and max-min sharing then solves the spread flows exactly. The compiled zones build these routes; this module builds
the same ones for the model (the same cables in the same order, the same shares to the last bit), so that the loader
check and the static analyses see what SimGrid simulates. docs/adaptive-routing.md describes the routing modes.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Sequence

from generators.errors import TopologyError
from generators.model import with_nbl
from generators.params import Param
from generators.params import choice
from generators.params import latency
from generators.params import nonnegative_int

__all__ = [
    "ROUTING_MODES",
    "SPREADS",
    "backpressure_param",
    "framed",
    "hop_latency",
    "revisit_param",
    "spread_evenly",
    "spread_param",
    "zone_routing",
]

SPREADS = ("message", "packet")
"""How finely a message is routed: along one path (``message``), or its packets spread over the rule's paths."""


def spread_param(
    message: str = "one path per message", packet: str = "a message's packets spread over the rule's paths"
) -> Param:
    """The ``spread`` parameter of a family: ``message`` (the default, not recorded in the platform's name) or
    ``packet``, each with what it means for the family."""
    return Param(
        "spread",
        choice(*SPREADS),
        f"message ({message}) or packet ({packet})",
        "message",
        recorded_when_default=False,
    )


def revisit_param() -> Param:
    """The ``revisit`` parameter of a family that routes adaptively: how often the decisions of the messages in
    flight are taken again (``0``, the default, not recorded in the platform's file: a message keeps the route chosen
    when it started)."""
    return Param(
        "revisit",
        latency,
        "adaptive routing only: every this long, the messages in flight are routed again on the network's state "
        "(0: a message keeps the route chosen when it started; docs/adaptive-routing.md)",
        "0",
        recorded_when_default=False,
    )


def backpressure_param() -> Param:
    """The ``backpressure`` parameter of a family with UGAL-L: how many cables after a router's own output port its
    queue reflects (``0``, the default, not recorded: its own port only)."""
    return Param(
        "backpressure",
        nonnegative_int,
        "ugal-l only: how many cables after a router's own port its queue reflects, their congestion backing up "
        "through credits (0: its own port's load only; docs/adaptive-routing.md)",
        "0",
        recorded_when_default=False,
    )


def zone_routing(
    routing: str, default: str | None, spread: str, revisit: float, adaptive: bool, backpressure: int = 0
) -> dict[str, str]:
    """The routing keys of a compiled zone's parameters, each only when it is not its default (``default``, the
    family's static rule; None: always ``routing``), so that older files read the same: ``routing``, ``spread``,
    ``revisit`` (seconds), which needs an ``adaptive`` routing, and ``backpressure``, which needs ``ugal-l``.

    >>> zone_routing("ugal-g", "minimal", "packet", 1e-4, adaptive=True)
    {'routing': 'ugal-g', 'spread': 'packet', 'revisit': '0.0001'}
    >>> zone_routing("minimal", "minimal", "message", 0.0, adaptive=False)
    {}
    """
    if revisit > 0 and not adaptive:
        raise TopologyError(f"revisit needs an adaptive routing, got routing {routing}")
    if backpressure > 0 and routing != "ugal-l":
        raise TopologyError(f"backpressure needs routing ugal-l (a router's local view), got routing {routing}")
    entries = {"routing": routing} if routing != default else {}
    entries |= {"spread": spread} if spread != "message" else {}
    entries |= {"revisit": repr(float(revisit))} if revisit > 0 else {}
    entries |= {"backpressure": str(backpressure)} if backpressure > 0 else {}
    return entries


ROUTING_MODES = {
    "minimal": "minimal paths",
    "valiant": "through a random intermediate (Valiant)",
    "ugal-l": "adaptive, UGAL with the source switch's view",
    "ugal-g": "adaptive, UGAL with the global view",
}
"""The routing rules of the families that offer a choice, as the ``routing`` parameter names them."""


def spread_evenly(paths: Iterable[Sequence[str]]) -> list[tuple[str, float]]:
    """Every cable of ``paths`` once, in the order the paths first cross it, with the share of a message spread
    evenly over them: the paths that cross the cable over all the paths (integer counts divided once, as the
    compiled zones do). A message whose paths are all the same path takes it whole (every share 1).

    >>> spread_evenly([["a", "x", "b"], ["a", "y", "b"]])
    [('a', 1.0), ('x', 0.5), ('b', 1.0), ('y', 0.5)]
    """
    counts: dict[str, int] = {}
    total = 0
    for path in paths:
        for cable in path:
            counts[cable] = counts.get(cable, 0) + 1
        total += 1
    return [(cable, count / total) for cable, count in counts.items()]


def framed(
    src: str, dst: str, up: str, down: str, between: Sequence[tuple[str, float]], limited: bool
) -> tuple[tuple[str, float], ...]:
    """A spread route between two hosts: the spread cables ``between`` framed by the hosts' own links, which carry
    the whole message (the source's limiter, its cable ``up``, then ``down`` to the destination, its limiter).

    >>> framed("h0", "h1", "h0_to_s", "t_to_h1", [("s_to_t", 0.5)], limited=False)
    (('h0_to_s', 1.0), ('s_to_t', 0.5), ('t_to_h1', 1.0))
    """
    names = with_nbl(src, dst, [up, down], limited)
    cut = names.index(up) + 1
    return (*((name, 1.0) for name in names[:cut]), *between, *((name, 1.0) for name in names[cut:]))


def hop_latency(hops: int, link_lat: float) -> float:
    """The latency of ``hops`` cables of ``link_lat`` each, summed one by one as the compiled zones sum them (not
    ``hops * link_lat``, which can differ in the last bit)."""
    total = 0.0
    for _ in range(hops):
        total += link_lat
    return total
