"""The allgather model of the tofu-allgather study: eq. (1) interpolation, the algorithms' steps, collision counts."""

from __future__ import annotations

import math

import pytest

from generators import torus
from generators.topologies.tofu import fx10
from generators.topologies.tofu import shape_hosts
from paper_models import collision_allgather as model


def test_eq1_interpolates_between_the_two_nearest_sizes() -> None:
    measured = {100: 1.0, 200: 2.0, 300: 4.0}
    assert model.interpolate(measured, 150) == 1.5
    assert model.interpolate(measured, 250) == 3.0
    assert model.interpolate(measured, 200) == 2.0
    assert model.interpolate(measured, 400) == 6.0  # beyond the range: the last two points' line
    assert model.interpolate(measured, 50) == 0.5
    with pytest.raises(ValueError, match="at least two"):
        model.interpolate({1: 1.0}, 1)


@pytest.mark.parametrize("ranks", [2, 3, 5, 8, 24])
def test_steps_of_ring_and_bruck(ranks: int) -> None:
    ring = model.steps("ring", ranks, 10)
    assert len(ring) == ranks - 1 and all(size == 10 for _, size in ring)
    bruck = model.steps("bruck", ranks, 10)
    assert len(bruck) == math.ceil(math.log2(ranks))
    assert sum(size for _, size in bruck) == (ranks - 1) * 10  # every rank receives the P - 1 other blocks
    for messages, _ in ring + bruck:
        assert sorted(dst for _, dst in messages) == list(range(ranks))  # one message into every rank
    assert [size for _, size in model.steps("bruck", 24, 1)] == [1, 2, 4, 8, 8]


def test_collisions_hand_checked_on_a_ring_of_four() -> None:
    """Ranks 0..3 on hosts 0, 2, 1, 3 of a ring: Ring's messages 0->2, 2->1, 1->3, 3->0; 0->2 and 1->3 both
    take cable 1->2 (SimGrid's tie rule sends both "+"), so C = 2. In natural order every message is one hop."""
    ring4 = torus((4,))
    step, _ = model.steps("ring", 4, 1)[0]
    assert model.step_collisions(ring4, ["host-0", "host-2", "host-1", "host-3"], step) == 2
    assert model.step_collisions(ring4, ["host-0", "host-1", "host-2", "host-3"], step) == 1


def test_collisions_depend_on_the_shape_on_fx10() -> None:
    """The paper's Fig. 3 point: the same algorithm collides or not depending on the placement."""
    machine = fx10()
    step, _ = model.steps("ring", 24, 1)[0]
    assert model.step_collisions(machine, shape_hosts(machine, (1, 6, 4)), step) == 1
    assert model.step_collisions(machine, shape_hosts(machine, (2, 3, 4)), step) == 2


def test_prediction_with_collisions() -> None:
    comm = {1: 1.0, 1000: 10.0, 10000: 100.0}
    plain = model.predict("ring", 4, 1000, comm)
    assert plain == 3 * 10.0
    assert model.predict("ring", 4, 1000, comm, collisions=[1, 1, 1]) == plain
    assert model.predict("ring", 4, 1000, comm, collisions=[2, 1, 1]) == 20.0 + 10.0 + 10.0
    memcpy = {1: 0.0, 10**6: 1.0}
    bruck = model.predict("bruck", 4, 1000, comm, memcpy)
    assert bruck == pytest.approx(10.0 + 20.0 + (3000 + 1000 + 3000) / 10**6 * (1 - 0) + 0.0, rel=1e-6)
    with pytest.raises(ValueError, match="collision counts"):
        model.predict("ring", 4, 1000, comm, collisions=[1])


def test_crossover() -> None:
    sizes = [1, 10, 100]
    assert model.crossover(sizes, [5.0, 3.0, 1.0], [1.0, 3.0, 5.0]) == pytest.approx(10.0)
    assert model.crossover(sizes, [1.0, 1.0, 1.0], [2.0, 2.0, 2.0]) is None
