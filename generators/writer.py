"""SimGrid platform XML (version 4.1) from a platform model, streamed with lxml.

A platform without a routing graph becomes a Full zone with one explicit route per ordered host
pair; that table grows as hosts^2, so routes are written one element at a time with
``lxml.etree.xmlfile`` and never held as a tree. A platform with a routing graph becomes a
DijkstraCache zone whose routes are the graph's edges (SimGrid computes each source's shortest
paths once, on first use). A host of several cores gets SimGrid's ``core`` attribute; the intra-node links and
routes of ``generators.node`` are links and routes like the others. Elements follow the order SimGrid requires: hosts,
routers, links, then routes. Every value carries its unit and is written exactly (shortest
round-trip float text), so the same model always gives the same bytes.

A compiled platform (``Platform.compiled``) is not XML: its file is a copy of the built shared object
(``NAME.so``, which SimGrid loads with ``-platform ./NAME.so``) and beside it the parameter file the
library reads (``NAME.params``). :func:`platform_suffix` tells which name a platform needs and
:func:`platform_files` which files make up a written platform.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from lxml import etree

from generators.errors import TopologyError
from generators.errors import missing_build
from generators.errors import shown
from generators.files import atomic_path
from generators.files import atomic_write_text
from generators.model import CompiledZone
from generators.model import Platform
from generators.size import check_size
from generators.units import format_bandwidth
from generators.units import format_speed
from generators.units import format_time

__all__ = [
    "check_platform_path",
    "compiled_library",
    "platform_files",
    "platform_suffix",
    "write_parameters",
    "write_platform",
]

REPO = Path(__file__).resolve().parent.parent

DOCTYPE = '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">'


def _provenance(platform: Platform) -> str:
    """The comment that says what built the file: the family, its parameters as given and as the builder took
    them (units parsed, defaults filled), so a reader sees both ``"100ns"`` and the exact float written; a parameter
    added after platforms were published is left out while at its default (``Platform.unrecorded``)."""

    def text(values: dict[str, object]) -> str:
        return json.dumps(
            {k: v for k, v in values.items() if k not in platform.unrecorded}, sort_keys=True, default=str
        )

    return (
        f" topolab platform {platform.name}: family {platform.family}, "
        f"parameters as given {text(platform.given)}, as built {text(platform.params)} "
    )


def platform_suffix(platform: Platform) -> str:
    """The file name ending ``platform`` must be written under: ``.so`` if compiled, else ``.xml``."""
    return ".so" if platform.compiled is not None else ".xml"


def platform_files(path: str | os.PathLike[str]) -> list[Path]:
    """The files of a written platform: the XML, or the shared object and its parameter file."""
    path = Path(path)
    return [path, path.with_suffix(".params")] if path.suffix == ".so" else [path]


def compiled_library(library: str) -> Path:
    """The built shared object ``<build>/lib/<library>.so`` (``$TOPOLAB_BUILD_DIR`` or ``build/``)."""
    build = Path(os.environ.get("TOPOLAB_BUILD_DIR") or REPO / "build")
    found = build / "lib" / f"{library}.so"
    if not found.is_file():
        raise TopologyError(missing_build(f"the compiled platform library {found}"))
    return found


def check_platform_path(path: str | os.PathLike[str], *, compiled: bool, name: str = "") -> None:
    """``TopologyError`` unless ``path`` suits the platform: a compiled zone must end in ``.so`` (SimGrid loads it
    as a shared object), and an XML platform must not (SimGrid would try to load it as one)."""
    platform = f"platform {name}" if name else "the platform"
    if compiled and Path(path).suffix != ".so":
        raise TopologyError(
            f"{platform} is a compiled zone (a shared object that SimGrid loads): "
            f"its file name must end in .so, got {shown(str(path))}"
        )
    if not compiled and Path(path).suffix == ".so":
        raise TopologyError(
            f"{platform} is XML: its file name must not end in .so (SimGrid would load it as a shared object), "
            f"got {shown(str(path))}"
        )


def _write_compiled(platform: Platform, zone: CompiledZone, path: Path) -> None:
    library = compiled_library(zone.library)
    write_parameters(platform, path.with_suffix(".params"))
    with atomic_path(path) as tmp:
        shutil.copyfile(library, tmp)
    path.chmod(0o755)


def write_parameters(platform: Platform, path: str | os.PathLike[str]) -> None:
    """Write the parameter file of a compiled platform (atomically): the provenance comment, the platform's name,
    then the parameters its library reads. Without the shared object beside it, SimGrid cannot load it yet."""
    if platform.compiled is None:
        raise TopologyError(f"platform {platform.name} is not a compiled zone: it has no parameter file")
    atomic_write_text(path, f"#{_provenance(platform)}\nname {platform.name}\n" + platform.compiled.parameters)


def write_platform(platform: Platform, path: str | os.PathLike[str]) -> None:
    """Write ``platform`` to ``path`` (atomically: no partial file on failure).

    XML, or, for a compiled platform, the shared object ``path`` (must end in ``.so``) and its
    parameter file beside it. A platform whose file would be beyond the size limit (``generators.size``)
    is refused before anything is written.
    """
    check_platform_path(path, compiled=platform.compiled is not None, name=platform.name)
    if platform.size is not None:  # built by a family: its estimate says how large the file will be
        check_size(platform.family, platform.size, written=True)
    if platform.compiled is not None:
        _write_compiled(platform, platform.compiled, Path(path))
        return
    # An open file, not a file name: libxml2 takes a name for a URI and unescapes its '%' (a '%' in a directory's
    # name made the file impossible to write).
    with atomic_path(path) as tmp, open(tmp, "wb") as out, etree.xmlfile(out, encoding="utf-8") as xf:
        xf.write_declaration()
        xf.write_doctype(DOCTYPE)
        with xf.element("platform", version="4.1"):
            xf.write("\n", etree.Comment(_provenance(platform)), "\n")
            graph = platform.graph
            with xf.element("zone", id=platform.name, routing="Full" if graph is None else "DijkstraCache"):
                xf.write("\n")
                for host in platform.hosts:
                    cores = {"core": str(host.cores)} if host.cores > 1 else {}
                    xf.write(etree.Element("host", id=host.name, speed=format_speed(host.speed), **cores), "\n")
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
                # SimGrid's Dijkstra zone (3.32 and 4.1) reports the links of each edge in reverse order: written
                # reversed, SimGrid's routes list every link in travel order (the loader tests check it). A Full zone
                # gets each host's route to itself too when it has an intra-node link (generators.node): SimGrid then
                # uses it instead of its loopback; in a graph that route is the host's edge to itself.
                routes = (
                    platform.routes(itself=True)
                    if graph is None
                    else ((a, b, links[::-1]) for a, b, links in graph.edges)
                )
                for src, dst, route in routes:
                    if not route:  # a pair that failed cables cut apart (generators.opensm): SimGrid refuses them
                        continue
                    element = etree.Element("route", src=src, dst=dst, symmetrical="NO")
                    for name in route:
                        etree.SubElement(element, "link_ctn", id=name)
                    xf.write(element, "\n")
            xf.write("\n")
