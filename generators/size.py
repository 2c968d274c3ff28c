"""What a platform request will build, estimated before anything is built, and the limits it must stay within.

Every family module has an ``estimate(params) -> Size`` beside its builder: closed forms of the family's checked
parameters (Python integers, so ``--hosts 99999999999999999999999`` is arithmetic, not an allocation) giving the
numbers of hosts, routers, links, routes and route hops the builder would make, hence the memory of the model and
the bytes of the XML. :func:`check_size` refuses, with one :class:`~generators.errors.TopologyError` naming the
estimate and the limit, a platform beyond what this machine and SimGrid can hold. The family's builder
(``generators.declare.builds``) checks the model's memory before building; the CLIs, which write what they build,
and :func:`generators.writer.write_platform` also check the XML's bytes. Tests compare every estimate with the
counts of the model built, so an estimate cannot drift from its builder.

The limits, from measurements on this machine (2 cores, 23 GB; ``docs/``, ``platforms/``):

* XML: 1 GB (:data:`MAX_XML_BYTES`). The largest XML the project calls practical is a Full zone of explicit routes
  for about 2000 hosts (``generators.topologies.torus.MAX_EXPLICIT_HOSTS`` = 2048): 879 MB for 2048 hosts, 21 s and
  529 MB of RSS for SimGrid to load it (measured on SimGrid 3.32, docs/simgrid.md). The writer streams about 5 to 9 MB/s
  (crossbar 512 with NBL: 48.8 MB in 5.3 s; a 8x8x4 torus: 16.1 MB in 3.1 s), so 1 GB is already two to three
  minutes of writing.
* Model: 2 GB (:data:`MAX_MODEL_BYTES`). The largest platform shipped, Sequoia (``platforms/``: a 16x16x16x12x2 torus,
  98304 hosts and 884736 links, a compiled zone), takes 239 MB and 5 to 6 s to build here, about 245 bytes per host,
  link or graph edge (MLFM d = 18: 191; each link holds its kind and ends). SimGrid's compiled zone then needs about
  0.8 GB (Mira, half its size, loads with 0.4 GB). 2 GB admits about eight Sequoias (the estimate says 246 MB for
  one): half a minute to build, some 6.5 GB in SimGrid, a third of this machine; beyond that a request is refused
  rather than left to exhaust the memory. The estimate bounds what a build really holds: measured on four large
  models (a compiled torus of Sequoia's shape, MLFM d = 18, the Frontier-shaped dragonfly, a 300 x 300 mesh's
  graph), a build's peak resident memory is 0.72 to 1.21 times its estimate (``tests/test_size.py`` holds it under
  1.5), so a request the limit admits takes at most 3 GB to build.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from generators.errors import TopologyError

__all__ = ["MAX_MODEL_BYTES", "MAX_XML_BYTES", "Size", "bytes_text", "check_size", "count_text", "switched_size"]

MAX_XML_BYTES = 10**9
MAX_MODEL_BYTES = 2 * 10**9

# Bytes per element of the XML the writer emits, read off its files (every family, 3 to 6156 hosts: the estimate
# is within -7% and +19% of the file; tests/test_size.py keeps it within -20% and +30%): a <host>, a <router>, a
# <link>, a <route> element without its links, one <link_ctn> in a route; a compiled platform writes a parameter
# file of about 0.5 kB.
_XML_HEADER, _XML_HOST, _XML_ROUTER, _XML_LINK, _XML_ROUTE, _XML_HOP = 400, 45, 30, 110, 60, 40
_PARAMETER_FILE = 1000
# Bytes of the Python model per host, router, link, graph edge or link of a graph edge (measured 191 to 243).
_MODEL_ELEMENT = 250


def switched_size(hosts: int, switches: int, cables: int, limited: bool) -> Size:
    """The size of a compiled zone of hosts on switches: each host's cable (two links) and its limiter when
    ``limited``, two links per switch-to-switch cable (the dragonfly, fat trees of three or more levels, HyperX,
    Slim Fly).

    >>> switched_size(hosts=8, switches=2, cables=1, limited=True).links
    26
    """
    return Size(hosts=hosts, routers=switches, links=(2 + limited) * hosts + 2 * cables, compiled=True)


@dataclass(frozen=True)
class Size:
    """What a platform request builds: its elements, counted exactly by the family's closed forms.

    ``routes`` and ``route_links`` are the explicit routes of a Full zone (one per ordered pair of distinct hosts,
    computed and written one at a time, never held) and their link references; ``edges`` and ``edge_links`` the
    routing graph of a Dijkstra zone (held in memory, written as routes). ``routers`` counts every ``<router>``
    written, the graph-only ones included. A compiled platform writes only a parameter file.
    """

    hosts: int
    routers: int
    links: int
    routes: int = 0
    route_links: int = 0
    edges: int = 0
    edge_links: int = 0
    compiled: bool = False
    hint: str = ""
    """What the user can do when the XML is too large (e.g. another representation), or empty."""

    @property
    def xml_bytes(self) -> int:
        """About the bytes of the platform file written (the parameter file of a compiled platform)."""
        if self.compiled:
            return _PARAMETER_FILE
        elements = _XML_HOST * self.hosts + _XML_ROUTER * self.routers + _XML_LINK * self.links
        return (
            _XML_HEADER
            + elements
            + _XML_ROUTE * (self.routes + self.edges)
            + _XML_HOP * (self.route_links + self.edge_links)
        )

    @property
    def model_bytes(self) -> int:
        """About the memory of the platform model in Python."""
        return _MODEL_ELEMENT * (self.hosts + self.routers + self.links + self.edges + self.edge_links)

    def describe(self) -> str:
        """``"6 hosts, 1 router, 12 links and 30 routes"``: the counts a refusal names."""
        parts = [
            (self.hosts, "host"),
            (self.routers, "router"),
            (self.links, "link"),
            (self.routes + self.edges, "route"),
        ]
        counts = [f"{count_text(n)} {noun}{'' if n == 1 else 's'}" for n, noun in parts]
        return f"{', '.join(counts[:-1])} and {counts[-1]}"


def count_text(n: int) -> str:
    """``n`` exactly when it is short, else in powers of ten, without ever converting a huge integer to text (Python
    refuses past 4300 digits) or to a float (past 1.8e308).

    >>> count_text(12), count_text(10**23), count_text(3 * 10**400)
    ('12', '1.00e23', '3.00e400')
    """
    if n < 10**12:
        return str(n)
    shift = max(n.bit_length() - 64, 0)
    exponent = math.log10(n >> shift) + shift * math.log10(2)
    whole = math.floor(exponent)
    mantissa = 10 ** (exponent - whole)
    if mantissa >= 9.995:  # 9.999e9 would print as 10.00e9
        mantissa, whole = mantissa / 10, whole + 1
    return f"{mantissa:.2f}e{whole}"


def bytes_text(n: int) -> str:
    """A number of bytes for a message: ``"512 bytes"``, ``"1.5 GB"``, ``"1.75e30 bytes"``."""
    if n < 10**6:
        return f"{n} bytes"
    if n < 10**15:
        return f"{n / 1e9:.3g} GB"
    return f"{count_text(n)} bytes"


def check_size(family: str, size: Size, *, written: bool) -> None:
    """Refuse ``size`` beyond the model's memory limit, and when the platform is to be ``written``, beyond the XML's.

    >>> try:
    ...     check_size("crossbar", Size(hosts=10**9, routers=1, links=2 * 10**9), written=False)
    ... except TopologyError as err:
    ...     print(str(err)[:111])
    crossbar: too large to build: 1000000000 hosts, 1 router, 2000000000 links and 0 routes would need about 750 GB
    """
    checks = [(size.model_bytes, MAX_MODEL_BYTES, "build", "of memory", "")]
    if written:
        checks.append((size.xml_bytes, MAX_XML_BYTES, "write", "of XML", f"; {size.hint}" if size.hint else ""))
    for estimate, limit, verb, what, hint in checks:
        if estimate > limit:
            raise TopologyError(
                f"{family}: too large to {verb}: {size.describe()} would need about {bytes_text(estimate)} {what}, "
                f"over the limit of {bytes_text(limit)} (generators/size.py says why){hint}"
            )
