"""Pictures of a platform drawn from its in-memory model: its structure, and link-load heatmaps.

:func:`layout` places every host and switch of a :class:`~generators.model.Platform` with one
structure-aware layout per family (dispatched on ``platform.family``) and turns every cable of the
model into one :class:`Edge`; :func:`draw_platform` draws it to a PNG, either as a structure picture
or, given per-link loads (e.g. :func:`generators.analysis.link_loads`), as a heatmap.

Everything comes from the model: host and router names, the link table, ``platform.params`` and, for the
torus-like families, ``platform.grid``. Link names are read as the model writes them (``generators.model``):

* ``<a>_to_<b>`` (and ``<b>_to_<a>``): the two directed links of the cable between nodes a and b,
  drawn as one edge;
* ``<host>_nbl`` (node-bandwidth limiter), ``<host>_port`` (the FATPIPE endpoint of a routing-graph
  torus), ``<switch>_fabric`` (the internal capacity of a switch, module or backplane), ``<host>_shm``
  (the intra-node path, ``generators.node``): links inside a node, drawn on the node's marker in a heatmap.

Any other link name is a :class:`~generators.errors.TopologyError`: a picture never silently drops
part of the platform.

``python -m generators.drawing DIRECTORY [--family NAME ...]`` draws every registered family at a
representative size (:data:`REPRESENTATIVE`), one ``<family>.png`` each.

Modules, one job each:

* :mod:`~generators.drawing.layout`: reading the model's links, :func:`layout` (dispatch to the families);
* :mod:`~generators.drawing.switched` and :mod:`~generators.drawing.grids`: the per-family layouts (switched
  families; torus, mesh and Tofu);
* :mod:`~generators.drawing.elements`, :mod:`~generators.drawing.geometry`, :mod:`~generators.drawing.style`:
  the parts of a picture, plane geometry, the shared colours;
* :mod:`~generators.drawing.crop`: a layout cut down to one job's hosts and the nodes its traffic crossed
  (``draw_platform(..., crop_to=hosts)``);
* :mod:`~generators.drawing.render`: matplotlib; :mod:`~generators.drawing.pictures`: PNG files;
  :mod:`~generators.drawing.cli`: the command.
"""

from generators.drawing.cli import main
from generators.drawing.elements import Edge
from generators.drawing.elements import Group
from generators.drawing.elements import Layout
from generators.drawing.layout import layout
from generators.drawing.pictures import REPRESENTATIVE
from generators.drawing.pictures import check_picture
from generators.drawing.pictures import draw_all_families
from generators.drawing.pictures import draw_platform

__all__ = [
    "REPRESENTATIVE",
    "Edge",
    "Group",
    "Layout",
    "check_picture",
    "draw_all_families",
    "draw_platform",
    "layout",
    "main",
]
