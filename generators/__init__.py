"""topolab's platform generators: topology models, SimGrid XML, hostfiles and static analyses.

>>> import generators
>>> p = generators.build_platform("crossbar", {"hosts": 4, "link_bw": "1GBps", "nbl": "nominal"})
>>> len(p.hosts), len(p.links)
(4, 12)
"""

from generators.analysis import link_loads
from generators.analysis import max_link_load
from generators.errors import TopologyError
from generators.families import FAMILIES
from generators.families import build_platform
from generators.model import Host
from generators.model import Link
from generators.model import Platform
from generators.model import RoutingGraph
from generators.model import duplex_link
from generators.model import graph_routes
from generators.placement import place_ranks
from generators.placement import write_hostfile
from generators.topologies.crossbar import crossbar
from generators.topologies.dragonfly import dragonfly
from generators.topologies.enterprise import enterprise
from generators.topologies.fattree import fattree
from generators.topologies.hyperx import hyperx
from generators.topologies.mlfm import mlfm
from generators.topologies.slimfly import slimfly
from generators.topologies.threequads import threequads
from generators.topologies.tofu import tofu
from generators.topologies.torus import mesh
from generators.topologies.torus import torus
from generators.writer import platform_files
from generators.writer import platform_suffix
from generators.writer import write_platform

__all__ = [
    "FAMILIES",
    "Host",
    "Link",
    "Platform",
    "RoutingGraph",
    "TopologyError",
    "build_platform",
    "crossbar",
    "dragonfly",
    "duplex_link",
    "enterprise",
    "fattree",
    "graph_routes",
    "hyperx",
    "link_loads",
    "max_link_load",
    "mesh",
    "mlfm",
    "place_ranks",
    "platform_files",
    "platform_suffix",
    "slimfly",
    "threequads",
    "tofu",
    "torus",
    "write_hostfile",
    "write_platform",
]
