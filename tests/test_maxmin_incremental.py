"""SimGrid patches 0020, 0022, 0024, 0025, 0026, 0028, 0029, 0030 and 0034: the max-min solver re-solves, when flows
start or end, only the flows whose rate the change can alter (``maxmin/incremental``, on by default), first only
those on the changed links where the rest stays max-min fair (``maxmin/incremental-local``, 0022, on by default), and
every flow and computation ends when a whole solve would have ended it. ``simgrid_cpp/maxmin_incremental_check.cpp``
builds seeded random networks (spread routes, FATPIPE links, latencies, rate caps, computations beside the flows);
its comment says what it exercises. Patch 0025 finds each level's constraints to saturate in a heap
(``maxmin/level-heap``, on by default), where 0026 pushes a constraint's new level once per level; 0028 lets a local
solve follow a change through more rounds before it solves the whole component; 0029 uses the heap only where few
levels changed since the last level, and reads the table where many did; 0030 walks a few links side by side when it
looks for the flows to re-solve; 0034 sorts a link's flows by level, to find where the flows that start saturate it,
only where its load at the lowest such level found so far does not already put it above."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

QUIET = "--log=root.thres:critical"


def checked(bin_dir: Path, *words: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """The program of ``simgrid_cpp/maxmin_incremental_check.cpp`` run with ``words`` (its arguments, options)."""
    return subprocess.run(
        [str(bin_dir / "maxmin_incremental_check"), *words], capture_output=True, text=True, timeout=timeout
    )


def end_dates(bin_dir: Path, seed: int, *options: str, flows: int = 300) -> dict[tuple[str, int], float]:
    """The end date of every flow and computation, by kind and id."""
    done = checked(bin_dir, str(seed), str(flows), *options, QUIET)
    assert done.returncode == 0, done.stderr[-2000:]
    dates = {}
    for line in done.stdout.splitlines():
        record = json.loads(line)
        dates[(record["kind"], record["id"])] = record["end"]
    assert len(dates) == flows + flows // 4
    return dates


LOCAL = ["--cfg=maxmin/incremental-local:yes", "--cfg=maxmin/incremental-local:no"]


@pytest.mark.parametrize("local", LOCAL)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_incremental_solves_end_every_flow_when_whole_solves_do(bin_dir: Path, seed: int, local: str) -> None:
    whole = end_dates(bin_dir, seed, "--cfg=maxmin/incremental:no")
    incremental = end_dates(bin_dir, seed, "--cfg=maxmin/incremental:yes", local)
    assert incremental.keys() == whole.keys()
    for key, date in whole.items():
        assert incremental[key] == pytest.approx(date, rel=1e-9, abs=1e-12), key


@pytest.mark.parametrize("local", LOCAL)
@pytest.mark.parametrize("seed", [4, 5])
def test_every_incremental_solve_equals_a_whole_one(bin_dir: Path, seed: int, local: str) -> None:
    """maxmin/incremental-check solves the whole system after each incremental solve and aborts where a rate differs
    by more than 1e-9 of the larger of the rate and its links' capacity (the patch header says why); it then keeps
    the incremental rates, so the run's dates are the incremental run's, bit for bit."""
    on = "--cfg=maxmin/incremental:yes"
    checked = end_dates(bin_dir, seed, on, local, "--cfg=maxmin/incremental-check:yes", flows=150)
    assert checked == end_dates(bin_dir, seed, on, local, flows=150)


def test_every_local_solve_equals_a_whole_one_on_many_networks(bin_dir: Path) -> None:
    """Patch 0022's checks of max-min fairness, on 40 seeds of 400 flows: while it was written, a FATPIPE link that
    a kept flow fills (seed 2 of 300 flows: a rate 379 times too high), and links other than FATPIPE left out of the
    check that every link holds its bound (seeds 10, 11, 12, 14, 21, 29 and 40; seed 10 by 8.8e-8) failed here."""
    for seed in range(1, 41):
        end_dates(bin_dir, seed, "--cfg=maxmin/incremental-check:yes", flows=400)


@pytest.mark.parametrize("local", LOCAL)
@pytest.mark.parametrize("seed", [1, 2, 6, 7])
def test_one_walk_of_each_constraint_gives_the_dates_of_two(bin_dir: Path, seed: int, local: str) -> None:
    """Patch 0024: the walk that finds the flows to re-solve also computes, link by link and in maxmin_solve's order,
    what the flows that keep their rate leave and the usage of the others, so maxmin_solve does not walk the links
    again (``maxmin/incremental-single-walk``, on by default). It is a speed-up only: every date is the same, bit for
    bit, as with the second walk, on spread routes, FATPIPE links and local solves that give up part way."""
    on = "--cfg=maxmin/incremental:yes"
    one_walk = end_dates(bin_dir, seed, on, local, flows=400)
    assert one_walk == end_dates(bin_dir, seed, on, local, "--cfg=maxmin/incremental-single-walk:no", flows=400)


@pytest.mark.parametrize("incremental", ["--cfg=maxmin/incremental:yes", "--cfg=maxmin/incremental:no"])
@pytest.mark.parametrize("seed", [1, 3, 8, 9])
def test_a_heap_of_levels_gives_the_dates_of_the_scan(bin_dir: Path, seed: int, incremental: str) -> None:
    """Patches 0025 and 0026: the constraints that saturate at each level are found in a heap of their levels instead
    of by reading every unsaturated constraint (``maxmin/level-heap``, on by default): the same constraints (exactly the
    lowest level, ties in the table's order), so every date is the same, bit for bit, with rate caps (a level set by
    a bound), FATPIPE links and whole or incremental solves."""
    heap = end_dates(bin_dir, seed, incremental, flows=400)
    assert heap == end_dates(bin_dir, seed, incremental, "--cfg=maxmin/level-heap:no", flows=400)


def test_a_local_solve_follows_a_change_past_four_rounds_and_ends_fair(bin_dir: Path) -> None:
    """Patch 0028: a local solve (0022) may take 16 rounds, each adding up to 8 variables for each one it has solved,
    before it solves the whole component instead; it gave up after 4 rounds, or at once when a round added more
    variables than it had solved, which on the 1024-rank UGAL-G all-to-all made 75 thousand whole solves of thousands
    of links. On a denser network (30 hosts, 60 core links, 400 flows) with every incremental solve compared with a
    whole one (``maxmin/incremental-check``), local solves of more than 4 rounds happen and are fair (each logs its
    rounds at ``ker_lmm`` verbose; SimGrid without 0028 logs none)."""
    network = ["1", "400", "30", "60"]  # seed, flows, hosts, core links
    logs = ["--log=root.thres:critical", "--log=ker_lmm.thres:verbose"]
    done = checked(bin_dir, *network, "--cfg=maxmin/incremental-check:yes", *logs)
    assert done.returncode == 0, done.stderr[-2000:]
    rounds = [int(n) for n in re.findall(r"local solve: fair after (\d+) rounds", done.stderr)]
    assert any(n > 4 for n in rounds), sorted(set(rounds))


@pytest.mark.parametrize("incremental", ["--cfg=maxmin/incremental:yes", "--cfg=maxmin/incremental:no"])
@pytest.mark.parametrize("seed", [1, 3])
def test_levels_found_in_the_heap_or_by_a_scan_give_the_dates_of_the_scan(
    bin_dir: Path, seed: int, incremental: str
) -> None:
    """Patch 0029: before each level, the heap of levels (0025, 0026) is used where fewer constraints changed level than
    one in 16 of the table, and the table is read where more did (a flow spread by packet changes the levels of dozens
    of links at once: the heap was 29% of a per-packet UGAL-G run). Each solve logs how many levels it found each way;
    here both ways happen, within the same solves too, and every date is the scan's, bit for bit."""
    logged = checked(bin_dir, str(seed), "400", incremental, QUIET, "--log=ker_lmm_levels.thres:verbose")
    assert logged.returncode == 0, logged.stderr[-2000:]
    counts = [
        (int(h), int(s))
        for h, s in re.findall(r"found in the heap: (\d+), by a scan of the table: (\d+)", logged.stderr)
    ]
    assert any(heap > 0 and scanned > 0 for heap, scanned in counts), counts[:20]
    mixed = end_dates(bin_dir, seed, incremental, flows=400)
    assert mixed == end_dates(bin_dir, seed, incremental, "--cfg=maxmin/level-heap:no", flows=400)


@pytest.mark.parametrize("local", LOCAL)
@pytest.mark.parametrize("seed", [1, 2, 6, 7])
def test_links_walked_side_by_side_give_the_dates_of_one_at_a_time(bin_dir: Path, seed: int, local: str) -> None:
    """Patch 0030: the walk that finds the flows to re-solve (0020, 0024) reads ``maxmin/walk-width`` links side by
    side, an element of each in turn (4 by default; 1 is one link at a time, as before), so that their waits on memory
    overlap, then takes the flows they hold link by link in the list's order. The links it reaches are appended to the
    list being walked, also by the last batch of it: every date is the same, bit for bit, at every width (a walk that
    stopped at the end of the list as it was when the batch was taken changed the dates of every seed here)."""
    on = "--cfg=maxmin/incremental:yes"
    one_at_a_time = end_dates(bin_dir, seed, on, local, "--cfg=maxmin/walk-width:1", flows=400)
    assert end_dates(bin_dir, seed, on, local, flows=400) == one_at_a_time
    for width in (3, 16):
        assert end_dates(bin_dir, seed, on, local, f"--cfg=maxmin/walk-width:{width}", flows=400) == one_at_a_time


@pytest.mark.parametrize("local", LOCAL)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_addition_levels_bounded_without_sorting_give_the_dates_of_sorting(
    bin_dir: Path, seed: int, local: str
) -> None:
    """Patch 0034: the level at which the flows that start saturate a link was found by sorting every other flow of the
    link by level (8.8% of a per-packet UGAL-G all-to-all, where each link holds hundreds of spread flows). Now a link
    whose load at the lowest such level found so far stays well within its bandwidth is known to saturate above it,
    and only the others are sorted (``maxmin/addition-level-bound``, on by default). Each solve logs how many links it
    sorted and how many it bounded; here both happen, and every date is that of sorting them all, bit for bit."""
    on = "--cfg=maxmin/incremental:yes"
    logged = checked(bin_dir, str(seed), "400", on, local, QUIET, "--log=ker_lmm_addition.thres:verbose")
    assert logged.returncode == 0, logged.stderr[-2000:]
    counts = [
        (int(s), int(n)) for s, n in re.findall(r"addition level: (\d+) constraints sorted, (\d+) not", logged.stderr)
    ]
    assert sum(sorted_ for sorted_, _ in counts) > 0 and sum(bounded for _, bounded in counts) > 0, counts[:20]
    sorting_all = end_dates(bin_dir, seed, on, local, "--cfg=maxmin/addition-level-bound:no", flows=400)
    assert end_dates(bin_dir, seed, on, local, flows=400) == sorting_all


@pytest.mark.parametrize("width", ["0", "17"])
def test_a_walk_width_out_of_range_is_refused(bin_dir: Path, width: str) -> None:
    done = checked(bin_dir, "1", "10", f"--cfg=maxmin/walk-width:{width}", timeout=60)
    assert done.returncode != 0
    assert f"maxmin/walk-width must be between 1 and 16, got {width}" in done.stderr


def test_the_dates_depend_on_the_network(bin_dir: Path) -> None:
    """The comparisons above compare something: two seeds give different networks and different dates."""
    assert end_dates(bin_dir, 1, flows=50) != end_dates(bin_dir, 2, flows=50)
