"""Whole hostile commands for the property tests: a family request (tests/hostile.py) plus the options of
``python -m generators`` or of ``scripts/smpirun-on``, each command knowing whether it is valid.

Paths are written relative to the case's own directory (``{dir}``), which the test fills in.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field

from hypothesis import strategies as st

from tests.hostile import Case
from tests.hostile import Drawn
from tests.hostile import count
from tests.hostile_families import FAMILY_CASES
from tests.hostile_families import mlfm_layers

SMPIRUN_CFG = {  # --cfg values and whether SimGrid takes them (checked by smpirun-on before anything runs)
    "network/model:CM02": True,
    "network/crosstraffic:0": True,
    "garbage": False,
    "": False,
    ":1": False,
    "network/model:": False,
    "network/model:NOPE": False,
    "network/nope:1": False,
}
PROGRAMS = {  # "{dir}/app": a stand-in smpirun is given (the test's smpirun runs nothing)
    "{dir}/app": True,
    "/bin/true": False,  # an executable of its own, not a program SMPI loads (not built with smpicc)
    "{dir}/missing": False,
    "{dir}": False,
    "{dir}/plain": False,
    "": False,
    "no-such-program-xyz": False,
}
HOSTFILES = {  # a hostfile for the 4-host platform file: its text and the ranks it holds (None: invalid)
    "host-0\nhost-1\n": 2,
    "host-0:2\nhost-3\n": 3,
    "\nhost-2\n\n": 1,
    "host-0:0\n": None,
    "host-9\n": None,
    "host-0:\u0662\n": None,
    "host-0:x\n": None,
    "": None,
    "\n\n": None,
}


@dataclass
class Command:
    """A drawn command line (``{dir}`` stands for the case's directory) and what the oracle says of it."""

    argv: list[str]
    ok: bool
    hosts: int = 0
    """Hosts of the platform written (0 for an invalid command)."""
    ranks: int | None = None
    """Ranks of the hostfile or of the run (None: no hostfile)."""
    files: dict[str, str] = field(default_factory=dict)
    """Files to write in the case's directory before the run (name -> text)."""


def _allocation(case: Case, clean: bool) -> st.SearchStrategy[tuple[str, bool, int]]:
    """MLFM ``allocation:n,l,m``: valid when the servers (i < n, j < l, k < m) all exist."""
    per_leaf = mlfm_layers(case.values) if case.ok else None
    item = (count(1, 4).good if clean else count(1, 4).any).filter(lambda d: "x" not in d.text and "," not in d.text)

    def fits(n: Drawn, l: Drawn, m: Drawn) -> bool:  # noqa: E741 (the paper's l)
        if not (n.ok and l.ok and m.ok) or per_leaf is None:
            return False
        return n.value <= len(per_leaf) and l.value <= case.values["d"] + 1 and m.value <= min(per_leaf[: n.value])

    named = st.tuples(item, item, item, st.sampled_from([",", "x"])).map(
        lambda t: (
            f"allocation:{t[3].join(d.text for d in t[:3])}",
            fits(*t[:3]),
            math.prod(d.value or 0 for d in t[:3]),
        )
    )
    bad = st.sampled_from(["allocation:", "allocation:1,2", "allocation", "bogus:1", ":1", "allocation:1,1,1,1"])
    return named if clean else st.one_of(named, bad.map(lambda t: (t, False, 0)))


def _shape(case: Case, clean: bool) -> st.SearchStrategy[tuple[str, bool, int]]:
    """Tofu ``shape:S1xS2xS3[@O1,O2,O3][/fold]``: valid when the cuboid lies inside the virtual (2X, 3Y, 2Z)."""
    xyz = (4, 4, 4) if case.values.get("preset") == "fx10" else case.values.get("xyz")
    size = (2 * xyz[0], 3 * xyz[1], 2 * xyz[2]) if case.ok else None
    numbers = st.tuples(*[st.integers(0, 4)] * 3)

    def spec(shape: tuple[int, ...], offset: tuple[int, ...] | None, fold: str) -> tuple[str, bool, int]:
        text = "x".join(map(str, shape)) + ("" if offset is None else "@" + ",".join(map(str, offset))) + fold
        corner = offset or (0, 0, 0)
        fits = size is not None and min(shape) >= 1 and fold in ("", "/snake", "/block")
        fits = fits and all(o + s <= m for o, s, m in zip(corner, shape, size or (), strict=False))
        return f"shape:{text}", fits, math.prod(shape)

    folds = st.sampled_from(["", "/snake", "/block"] if clean else ["", "/snake", "/block", "/zigzag"])
    named = st.tuples(numbers, st.one_of(st.none(), numbers), folds).map(lambda t: spec(*t))
    bad = st.sampled_from(["shape:", "shape:2x3", "shape:+2x3x4", "shape:2x3x4@1,2", "shape:\u0662x1x1", "bogus:1"])
    return named if clean else st.one_of(named, bad.map(lambda t: (t, False, 0)))


def _host_list(case: Case, clean: bool) -> st.SearchStrategy[tuple[str, bool, int]]:
    """A comma-separated list of ``host-<i>``: valid when each exists, once, and none is empty."""
    listed = st.lists(st.integers(0, case.hosts + 1), min_size=1, max_size=5).map(
        lambda ks: (
            ",".join(f"host-{k}" for k in ks),
            all(k < case.hosts for k in ks) and len(set(ks)) == len(ks),
            len(ks),
        )
    )
    bad = st.sampled_from(["host-0,,host-1", "host-0,", ",", "host-x", "bogus:1"]).map(lambda t: (t, False, 0))
    return listed if clean else st.one_of(listed, bad)


def _placements(
    case: Case, host_lists: bool, clean: bool, given: bool = False
) -> st.SearchStrategy[tuple[str, bool, int] | None]:
    """No placement (unless ``given``), or one the family names (``host_lists``: also lists of hosts, as
    smpirun-on takes); when ``clean``, only well-formed ones (which may still not fit)."""
    if case.family == "mlfm":
        spec = _allocation(case, clean)
    elif case.family == "tofu":
        spec = _shape(case, clean)
    elif host_lists and case.family not in ("dragonfly", "fattree", "hyperx", "slimfly"):  # hosts not host-<i>
        spec = _host_list(case, clean)
    elif clean:
        return st.none()
    else:
        spec = st.just(("bogus:1", False, 0))  # a family without named placements has no --placement
    return spec if given else st.one_of(st.none(), spec)


def _ranks(limit: int, clean: bool) -> st.SearchStrategy[tuple[str, bool, int] | None]:
    """No rank count, or one valid when at most ``limit``."""
    drawn = count(1, 6).good if clean else count(1, 6).any
    return st.one_of(st.none(), drawn.map(lambda d: (d.text, d.ok and d.value <= limit, d.value or 0)))


PER_NODE_FAULTS = [Drawn(text, False) for text in ("0", "-1", "", " ", "x", "1.5", "\u0662", "2,", "+")]
"""Bad ``--ranks-per-node`` values (with a hostfile)."""

MODES = {"clean": 0, "param": 1, "option": 0, "wild": -1}
"""How a command is drawn: the number of family parameters taking any value (tests/hostile.py), and its own
options clean, one of them hostile ("option") or all ("wild")."""


def _mode(draw: st.DrawFn, options: tuple[str, ...]) -> tuple[int, Callable[[str], bool]]:
    """The faults of the family request, and which options are hostile."""
    mode = draw(st.sampled_from(sorted(MODES)))
    hostile = set(options) if mode == "wild" else {draw(st.sampled_from(options))} if mode == "option" else set()
    return MODES[mode], lambda option: option in hostile


@st.composite
def generator_command(draw: st.DrawFn, family: str) -> Command:
    """``python -m generators FAMILY [params] -o FILE [--hostfile FILE [--ranks N] [--ranks-per-node K]
    [--placement SPEC]]``."""
    faults, hostile = _mode(draw, ("output", "hostfile", "placement", "ranks", "ranks_per_node", "picture"))
    case = draw(FAMILY_CASES[family](faults))
    ok, argv = case.ok, [*case.argv]
    suffix = ".so" if case.compiled else ".xml"
    other = ".so" if suffix == ".xml" else ".xml"
    output = draw(st.sampled_from([other, "", " "] if hostile("output") else [suffix]))
    ok = ok and output == suffix
    argv += ["-o", f"{{dir}}/platform{output}" if output.strip() else output]
    # --ranks and --placement only shape the hostfile: hostile ones come without it (well-formed, and refused for
    # that alone) or with it (and malformed).
    shaping = hostile("ranks") or hostile("ranks_per_node") or hostile("placement")
    choices = ["", " "] if hostile("hostfile") else [None, None, "{dir}/hosts"] if shaping else [None, "{dir}/hosts"]
    hostfile = draw(st.sampled_from(choices))
    if hostfile is not None:
        argv += [f"--hostfile={hostfile}"]
        ok = ok and hostfile.strip() != ""
    placed = case.hosts
    if hostile("placement") or (hostfile and draw(st.booleans())):
        placement = draw(_placements(case, False, hostfile is None or not hostile("placement"), hostile("placement")))
        if placement is not None:
            argv += [f"--placement={placement[0]}"]
            ok, placed = ok and placement[1] and bool(hostfile), placement[2]
    per_node = 1
    if hostile("ranks_per_node"):  # well-formed without --hostfile, or malformed (a huge K may be valid: not drawn)
        drawn = draw(count(1, 3).good if hostfile is None else st.sampled_from(PER_NODE_FAULTS))
        argv += [f"--ranks-per-node={drawn.text}"]
        ok, per_node = ok and drawn.ok and bool(hostfile), drawn.value or 1
    elif hostfile and draw(st.booleans()):
        drawn = draw(count(1, 3).good)
        argv += [f"--ranks-per-node={drawn.text}"]
        per_node = drawn.value
    placed *= per_node
    ranks = None
    if hostile("ranks"):
        drawn = draw(count(1, 6).good if hostfile is None else count(1, 6).fault)
        ranks = (drawn.text, drawn.ok and drawn.value <= placed, drawn.value or 0)
    elif hostfile:
        ranks = draw(_ranks(placed, True))
    if ranks is not None:
        argv += [f"--ranks={ranks[0]}"]
        ok = ok and ranks[1] and bool(hostfile)
    if hostile("picture"):  # pictures are slow to draw: only bad ones, refused before anything
        argv += [f"--picture={draw(st.sampled_from(['', ' ', '{dir}/p.txt', '{dir}/p.svg']))}"]
        ok = False
    count_ranks = (ranks[2] if ranks is not None else placed) if hostfile else None
    return Command(argv, ok, case.hosts if ok else 0, count_ranks)


@st.composite
def smpirun_on_command(draw: st.DrawFn) -> Command:
    """``scripts/smpirun-on`` on a family request or on a 4-host platform file, with its options and a program."""
    faults, hostile = _mode(draw, ("hostfile", "placement", "np", "cfg", "keep", "program", "separator"))
    files = {"plain": "not a program\n", "app": "#!/bin/sh\n"}
    if draw(st.integers(0, 3)) == 0:
        argv, ok, slots, hosts = ["{dir}/x.xml"], True, 4, 4  # the test writes a 4-host crossbar there
        good = sorted(text for text, slots in HOSTFILES.items() if slots)
        bad = st.one_of(st.sampled_from(sorted(HOSTFILES)), st.sampled_from(["", " ", "missing"]))
        text = draw(bad if hostile("hostfile") else st.one_of(st.none(), st.sampled_from(good)))
        if text is not None and text.strip() in ("", "missing") and text not in HOSTFILES:
            argv += [f"--hostfile={'{dir}/missing' if text == 'missing' else text}"]
            ok = False
        elif text is not None:
            files["hosts"] = text
            argv += ["--hostfile={dir}/hosts"]
            slots, ok = HOSTFILES[text] or 0, HOSTFILES[text] is not None
    else:
        case = draw(FAMILY_CASES[draw(st.sampled_from(sorted(FAMILY_CASES)))](faults))
        argv, ok, hosts = [*case.argv], case.ok, case.hosts
        placement = draw(_placements(case, True, not hostile("placement")))
        slots = hosts
        if placement is not None:
            argv += [f"--placement={placement[0]}"]
            ok, slots = ok and placement[1], placement[2]
    ranks = draw(_ranks(slots, not hostile("np")))
    if ranks is not None:
        argv += [f"--np={ranks[0]}"]
        ok = ok and ranks[1]
    cfg = sorted(option for option, good in SMPIRUN_CFG.items() if good != hostile("cfg"))
    for option in draw(st.lists(st.sampled_from(cfg), min_size=hostile("cfg"), max_size=2)):
        argv += [f"--cfg={option}"]
        ok = ok and SMPIRUN_CFG[option]
    keep = draw(st.sampled_from(["", " "] if hostile("keep") else [None, None, "{dir}/kept"]))
    if keep is not None:
        argv += [f"--keep={keep}"]
        ok = ok and keep.strip() != ""
    bad_programs = sorted(program for program, good in PROGRAMS.items() if not good)
    program = draw(st.sampled_from(bad_programs if hostile("program") else ["{dir}/app"]))
    separator = None if hostile("separator") else "--"
    argv += [*([separator] if separator else []), program]
    ok = ok and PROGRAMS[program] and separator is not None
    return Command(argv, ok, hosts if ok else 0, (ranks[2] if ranks is not None else slots) if ok else None, files)
