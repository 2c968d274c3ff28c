"""SimGrid platform XML (version 4.1) from a platform model, streamed with lxml.

The route table of a Full zone grows as hosts^2, so routes are written one element at a time with
``lxml.etree.xmlfile`` and never held as a tree. Elements follow the order SimGrid requires: hosts,
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
            with xf.element("zone", id=platform.name, routing="Full"):
                xf.write("\n")
                for host in platform.hosts:
                    xf.write(etree.Element("host", id=host.name, speed=format_speed(host.speed)), "\n")
                for router in platform.routers:
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
                for src, dst, route in platform.routes():
                    element = etree.Element("route", src=src, dst=dst, symmetrical="NO")
                    for name in route:
                        etree.SubElement(element, "link_ctn", id=name)
                    xf.write(element, "\n")
            xf.write("\n")
