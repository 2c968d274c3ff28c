"""SimGrid platform XML (version 4.1) from a platform model, streamed with lxml.

A platform without a routing graph becomes a Full zone with one explicit route per ordered host
pair; that table grows as hosts^2, so routes are written one element at a time with
``lxml.etree.xmlfile`` and never held as a tree. A platform with a routing graph becomes a
DijkstraCache zone whose routes are the graph's edges (SimGrid computes each source's shortest
paths once, on first use). Elements follow the order SimGrid requires: hosts,
routers, links, then routes. Every value carries its unit and is written exactly (shortest
round-trip float text), so the same model always gives the same bytes.
"""

from __future__ import annotations

import json
import os

from lxml import etree

from generators.files import atomic_path
from generators.model import Platform
from generators.units import format_bandwidth, format_speed, format_time

__all__ = ["write_platform"]

DOCTYPE = '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">'


def _provenance(platform: Platform) -> str:
    params = json.dumps(platform.params, sort_keys=True)
    return f" topolab platform {platform.name}: family {platform.family}, parameters {params} "


def write_platform(platform: Platform, path: str | os.PathLike[str]) -> None:
    """Write ``platform`` as SimGrid XML to ``path`` (atomically: no partial file on failure)."""
    with atomic_path(path) as tmp, etree.xmlfile(str(tmp), encoding="utf-8") as xf:
        xf.write_declaration()
        xf.write_doctype(DOCTYPE)
        with xf.element("platform", version="4.1"):
            xf.write("\n", etree.Comment(_provenance(platform)), "\n")
            graph = platform.graph
            with xf.element("zone", id=platform.name, routing="Full" if graph is None else "DijkstraCache"):
                xf.write("\n")
                for host in platform.hosts:
                    xf.write(etree.Element("host", id=host.name, speed=format_speed(host.speed)), "\n")
                for router in [*platform.routers, *(graph.virtual_routers if graph else ())]:
                    xf.write(etree.Element("router", id=router), "\n")
                for link in platform.links.values():
                    element = etree.Element(
                        "link",
                        id=link.name,
                        bandwidth=format_bandwidth(link.bandwidth),
                        latency=format_time(link.latency),
                        sharing_policy=link.sharing,
                    )
                    xf.write(element, "\n")
                # SimGrid 3.32's Dijkstra zone reports the links of each edge in reverse order: written
                # reversed, SimGrid's routes list every link in travel order (the loader tests check it).
                routes = platform.routes() if graph is None else ((a, b, links[::-1]) for a, b, links in graph.edges)
                for src, dst, route in routes:
                    element = etree.Element("route", src=src, dst=dst, symmetrical="NO")
                    for name in route:
                        etree.SubElement(element, "link_ctn", id=name)
                    xf.write(element, "\n")
            xf.write("\n")
