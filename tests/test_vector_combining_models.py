"""Littlefield (1992) vector-combining models: hand-computed times, step tables, S_opt, Fig. 5's claims."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import sympy as sp

from paper_models.vector_combining import DELTA
from paper_models.vector_combining import FITTED
from paper_models.vector_combining import NOMINAL
from paper_models.vector_combining import PIPELINED
from paper_models.vector_combining import STANDARD
from paper_models.vector_combining import MachineParams
from paper_models.vector_combining import NBLFunction
from paper_models.vector_combining import StepRow
from paper_models.vector_combining import cap
from paper_models.vector_combining import fastest
from paper_models.vector_combining import fence_step_table
from paper_models.vector_combining import fence_time
from paper_models.vector_combining import integer_optimal_block
from paper_models.vector_combining import snake_step_table
from paper_models.vector_combining import snake_time
from paper_models.vector_combining import step_table_time
from paper_models.vector_combining import times_links
from paper_models.vector_combining import tree_time
from paper_models.vector_combining_symbolic import SYMBOLS
from paper_models.vector_combining_symbolic import optimal_block
from paper_models.vector_combining_symbolic import paper_optimal_block
from paper_models.vector_combining_symbolic import paper_optimal_block_expr
from paper_models.vector_combining_symbolic import symbolic_optimal_block
from paper_models.vector_combining_symbolic import symbolic_time

US = 1e-6
TIME = {"snake": snake_time, "fence": fence_time}
F_ALL = (STANDARD, NOMINAL, FITTED, cap(2))


# --- machine and NBL functions ----------------------------------------------------------------------------------------


def test_delta_parameters_are_the_appendix_values() -> None:
    assert (DELTA.alpha, DELTA.beta, DELTA.c2, DELTA.c3) == (54e-6, 1.54e-6, 0.25e-6, 0.37e-6)
    assert [DELTA.combine_cost(kind) for kind in ("c2", "c3", "none")] == [0.25e-6, 0.37e-6, 0.0]


@pytest.mark.parametrize("bad", [-1e-6, math.nan, math.inf, True, "1"])
def test_machine_params_rejects_bad_values(bad: object) -> None:
    with pytest.raises(ValueError, match="beta must be a finite number >= 0"):
        MachineParams(alpha=1e-6, beta=bad, c2=0.0, c3=0.0)  # type: ignore[arg-type]


def test_standard_and_nominal() -> None:
    assert [STANDARD(links) for links in range(1, 7)] == [1.0] * 6
    assert [NOMINAL(links) for links in range(1, 7)] == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert (STANDARD.name, NOMINAL.name, FITTED.name) == ("standard", "nominal", "fitted")


def test_fitted_values_and_undefined_links() -> None:
    assert [FITTED(links) for links in (1, 2, 3, 4, 6)] == [1.0, 1.1, 1.3, 3.9, 5.1]
    with pytest.raises(ValueError, match=r"'fitted' is not defined for L=5"):
        FITTED(5)
    with pytest.raises(ValueError, match=r"'fitted' is not defined for L=7"):
        FITTED(7)


def test_cap() -> None:
    assert [cap(2)(links) for links in range(1, 7)] == [1.0, 1.0, 1.5, 2.0, 2.5, 3.0]
    assert [cap(4)(links) for links in (1, 4, 6)] == [1.0, 1.0, 1.5]
    assert cap(1)(6) == NOMINAL(6)
    assert cap(2.5).name == "cap(2.5)"
    for bad in (0.5, 0, -1, math.inf, True):
        with pytest.raises(ValueError, match="cap"):
            cap(bad)


def test_nbl_function_checks() -> None:
    with pytest.raises(ValueError, match=r"f\(1\) must be 1"):
        NBLFunction("bad", lambda links: 2.0)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="L must be an integer >= 1"):
            NOMINAL(bad)  # type: ignore[arg-type]


def test_times_links_is_the_literal_appendix_row() -> None:
    assert [times_links(NOMINAL)(links) for links in (1, 2, 4, 6)] == [1.0, 4.0, 16.0, 36.0]
    assert [times_links(FITTED)(links) for links in (1, 4)] == [1.0, 4 * 3.9]
    # Snake's first rows read literally, 1 * (1 * (a + f(1) b S) + c2 S) + (P-2) * (2 * (a + f(2) b S) + c2 S) + ...
    a, b, c2, s, f = 54.0, 1.54, 0.25, 100, FITTED
    p, blocks = 16, 10
    literal = (
        1 * (1 * (a + f(1) * b * s) + c2 * s)
        + (p - 2) * (2 * (a + f(2) * b * s) + c2 * s)
        + 1 * (3 * (a + f(3) * b * s) + c2 * s)
        + (blocks - 3) * (4 * (a + f(4) * b * s) + c2 * s)
        + 1 * (3 * (a + f(3) * b * s) + c2 * s)
        + (p - 2) * (2 * (a + f(2) * b * s))
        + 1 * (1 * (a + f(1) * b * s))
    )
    assert snake_time(1000, 100, 4, 4, DELTA, times_links(FITTED)) == pytest.approx(literal * US, rel=1e-12)


# --- times by hand ----------------------------------------------------------------------------------------------------


def test_tree_by_hand() -> None:
    # (log2 4 + log2 4) * (2*(alpha + beta*N) + c2*N), N = 1000
    assert tree_time(1000, 4, 4, DELTA, STANDARD) == pytest.approx((2 + 2) * (2 * (54e-6 + 1.54e-3) + 0.25e-3))
    assert tree_time(1000, 4, 4, DELTA, STANDARD) == pytest.approx(13.752e-3, rel=1e-12)
    # 16 x 32, N = 100: (4 + 5) * (2*(54 + 154) + 25) us = 3969 us
    assert tree_time(100, 16, 32, DELTA, STANDARD) == pytest.approx(3969 * US, rel=1e-12)
    # one link per step, f(1) = 1: the NBL function does not matter
    assert tree_time(100, 16, 32, DELTA, NOMINAL) == tree_time(100, 16, 32, DELTA, FITTED)
    assert tree_time(100, 1, 1, DELTA, STANDARD) == 0.0


def test_snake_by_hand() -> None:
    # 4 x 4 (P = 16), N = 1000, S = 100 (B = 10); in us: alpha = 54, beta*S = 154, c2*S = 25
    nominal = (
        1 * (54 + 154 + 25)  # 1 step, L = 1
        + 14 * (108 + 308 + 25)  # P - 2 steps, L = 2
        + 1 * (162 + 462 + 25)  # L = 3
        + 7 * (216 + 616 + 25)  # B - 3 steps, L = 4
        + 1 * (162 + 462 + 25)  # L = 3
        + 14 * (108 + 308)  # L = 2, no combining
        + 1 * (54 + 154)  # L = 1
    )
    assert nominal == 19736
    assert snake_time(1000, 100, 4, 4, DELTA, NOMINAL) == pytest.approx(nominal * US, rel=1e-12)
    standard = 233 + 14 * (108 + 154 + 25) + (162 + 154 + 25) + 7 * (216 + 154 + 25) + 341 + 14 * 262 + 208
    assert standard == 11574
    assert snake_time(1000, 100, 4, 4, DELTA, STANDARD) == pytest.approx(standard * US, rel=1e-12)


def test_fence_by_hand() -> None:
    # 4 x 4, N = 1000, S = 100 (B = 10); in us: beta*S = 154, c2*S = 25, c3*S = 37
    nominal = (
        1 * (54 + 154 + 25)  # 1 step, L = 1, c2
        + 3 * (108 + 308 + 25)  # H - 1 steps, L = 2, c2
        + 2 * (162 + 462 + 37)  # W - 2 steps, L = 3, c3
        + 1 * (216 + 616 + 37)  # L = 4, c3
        + 7 * (324 + 924 + 37)  # B - 3 steps, L = 6, c3
        + 1 * (216 + 616 + 37)  # L = 4, c3
        + 2 * (162 + 462)  # W - 2, L = 3
        + 3 * (108 + 308)  # H - 1, L = 2
        + 1 * (54 + 154)  # L = 1
    )
    assert nominal == 16315
    assert fence_time(1000, 100, 4, 4, DELTA, NOMINAL) == pytest.approx(nominal * US, rel=1e-12)
    # fitted: f(2) beta S = 169.4, f(3) beta S = 200.2, f(4) beta S = 600.6, f(6) beta S = 785.4
    fitted = (
        233
        + 3 * (108 + 169.4 + 25)
        + 2 * (162 + 200.2 + 37)
        + (216 + 600.6 + 37)
        + 7 * (324 + 785.4 + 37)
        + (216 + 600.6 + 37)
        + 2 * (162 + 200.2)
        + 3 * (108 + 169.4)
        + 208
    )
    assert fitted == pytest.approx(13435.2)
    assert fence_time(1000, 100, 4, 4, DELTA, FITTED) == pytest.approx(fitted * US, rel=1e-12)


def test_step_table_time_sums_rows() -> None:
    rows = [StepRow(2, 1, "c2", ""), StepRow(1, 3, "none", ""), StepRow(4, 6, "c3", "")]
    s, m = 10, DELTA
    expected = (
        2 * (m.alpha + m.beta * s + m.c2 * s)
        + (3 * m.alpha + 3 * m.beta * s)
        + 4 * (6 * m.alpha + 6 * m.beta * s + m.c3 * s)
    )
    assert step_table_time(rows, s, m, NOMINAL) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="combine must be one of"):
        step_table_time([StepRow(1, 1, "c4", "")], s, m, NOMINAL)


# --- step tables ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "s", "width", "height"), [(1000, 100, 4, 4), (10, 3, 2, 1), (12345, 67, 16, 32)])
def test_snake_step_counts(n: int, s: int, width: int, height: int) -> None:
    rows = snake_step_table(n, s, width, height)
    p, blocks = width * height, math.ceil(n / s)
    assert sum(row.steps for row in rows) == 2 * p + blocks - 3
    assert [row.links for row in rows] == [1, 2, 3, 4, 3, 2, 1]
    assert [row.combine for row in rows] == ["c2"] * 5 + ["none"] * 2
    assert [row.steps for row in rows] == [1, p - 2, 1, blocks - 3, 1, p - 2, 1]
    assert max(row.links for row in rows) == 4  # "four links per node are active in the middle of pipelining"


@pytest.mark.parametrize(("n", "s", "width", "height"), [(1000, 100, 4, 4), (10, 3, 2, 1), (12345, 67, 16, 32)])
def test_fence_step_counts(n: int, s: int, width: int, height: int) -> None:
    rows = fence_step_table(n, s, width, height)
    blocks = math.ceil(n / s)
    assert sum(row.steps for row in rows) == 2 * (height - 1) + 2 * (width - 2) + blocks + 1
    assert [row.links for row in rows] == [1, 2, 3, 4, 6, 4, 3, 2, 1]
    assert [row.combine for row in rows] == ["c2", "c2", "c3", "c3", "c3", "c3", "none", "none", "none"]
    assert [row.steps for row in rows] == [1, height - 1, width - 2, 1, blocks - 3, 1, width - 2, height - 1, 1]
    assert max(row.links for row in rows) == 6  # "six links per node are active in the middle of pipelining"


def test_step_tables_are_what_the_times_sum() -> None:
    for f in F_ALL:
        assert snake_time(5000, 70, 8, 4, DELTA, f) == step_table_time(snake_step_table(5000, 70, 8, 4), 70, DELTA, f)
        assert fence_time(5000, 70, 8, 4, DELTA, f) == step_table_time(fence_step_table(5000, 70, 8, 4), 70, DELTA, f)


# --- validation -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", PIPELINED)
def test_pipelined_validation(algorithm: str) -> None:
    time = TIME[algorithm]
    with pytest.raises(ValueError, match="n must be an integer >= 1, got 0"):
        time(0, 1, 4, 4, DELTA, NOMINAL)
    with pytest.raises(ValueError, match="s must be an integer >= 1, got 0"):
        time(100, 0, 4, 4, DELTA, NOMINAL)
    with pytest.raises(ValueError, match=r"s must be an integer >= 1, got 1\.5"):
        time(100, 1.5, 4, 4, DELTA, NOMINAL)
    with pytest.raises(ValueError, match="width must be an integer >= 1, got 0"):
        time(100, 10, 0, 4, DELTA, NOMINAL)
    with pytest.raises(ValueError, match="height must be an integer >= 1, got True"):
        time(100, 10, 4, True, DELTA, NOMINAL)
    with pytest.raises(ValueError, match=r"B = ceil\(N/S\) >= 3 blocks, got B=2 \(N=1000, S=500\); use S <= 499"):
        time(1000, 500, 4, 4, DELTA, NOMINAL)
    assert time(1000, 499, 4, 4, DELTA, NOMINAL) > 0  # B = 3
    with pytest.raises(ValueError, match="'fitted' is not defined"):
        time(1000, 100, 4, 4, DELTA, NBLFunction("partial", lambda links: FITTED(links) if links < 3 else FITTED(5)))


def test_mesh_validation() -> None:
    with pytest.raises(ValueError, match=r"snake needs P = W\*H >= 2 nodes"):
        snake_time(100, 10, 1, 1, DELTA, NOMINAL)
    assert snake_time(100, 10, 1, 2, DELTA, NOMINAL) > 0
    with pytest.raises(ValueError, match="fence needs width W >= 2"):
        fence_time(100, 10, 1, 8, DELTA, NOMINAL)
    assert fence_time(100, 10, 2, 1, DELTA, NOMINAL) > 0
    with pytest.raises(ValueError, match="width must be an integer >= 1"):
        tree_time(100, 0, 4, DELTA, NOMINAL)
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        tree_time(-5, 4, 4, DELTA, NOMINAL)


def test_algorithm_validation() -> None:
    for function in (optimal_block, paper_optimal_block, integer_optimal_block):
        with pytest.raises(ValueError, match="algorithm must be one of snake, fence, got 'tree'"):
            function("tree", 1000, 4, 4, DELTA, NOMINAL)
    with pytest.raises(ValueError, match="algorithm must be one of"):
        symbolic_time("ring")


# --- optimal block size: derivation vs the printed closed forms -----------------------------------------------------


def test_fence_derivation_equals_printed_eq_1() -> None:
    derived, printed = symbolic_optimal_block("fence"), paper_optimal_block_expr("fence")
    assert sp.simplify(derived**2 - printed**2) == 0  # both are positive square roots


def test_snake_derivation_differs_from_printed_form_by_4_and_2_beta_f1() -> None:
    y = SYMBOLS
    derived, printed = symbolic_optimal_block("snake"), paper_optimal_block_expr("snake")
    assert sp.simplify(derived**2 - printed**2) != 0
    # printed: (N alpha / D)^(1/2); derived: (4 N alpha / (D + 2 beta f(1)))^(1/2)
    assert sp.simplify(4 * y.n * y.alpha / derived**2 - y.n * y.alpha / printed**2) == 2 * y.beta * y.f(1)


def test_derivation_is_the_minimum_of_the_continuous_model() -> None:
    y = SYMBOLS
    for algorithm in PIPELINED:
        time, s_opt = symbolic_time(algorithm), symbolic_optimal_block(algorithm)
        assert sp.simplify(sp.diff(time, y.s).subs(y.s, s_opt)) == 0
        assert sp.simplify(sp.diff(time, y.s, 2) - 2 * time.coeff(1 / y.s) / y.s**3) == 0
        # D = (links of the B - 3 row) * N * alpha
        assert time.coeff(1 / y.s) == {"snake": 4, "fence": 6}[algorithm] * y.n * y.alpha
    assert symbolic_optimal_block("snake") is symbolic_optimal_block("snake")  # cached


CASES = [(n, w, h, f) for n in (1000, 10**5) for (w, h) in ((4, 4), (16, 16), (16, 32), (8, 3)) for f in F_ALL]


@pytest.mark.parametrize(("n", "width", "height", "f"), CASES)
def test_optimal_block_numbers(n: int, width: int, height: int, f: NBLFunction) -> None:
    a, b, c2, c3, p = DELTA.alpha, DELTA.beta, DELTA.c2, DELTA.c3, width * height
    # Fence: eq. (1) as printed
    fence = math.sqrt(
        6
        * n
        * a
        / (
            height * (c2 + 2 * b * f(2))
            + width * (c3 + 2 * b * f(3))
            - 3 * c3
            + b * (2 * f(1) - 2 * f(2) - 4 * f(3) + 2 * f(4) - 3 * f(6))
        )
    )
    assert optimal_block("fence", n, width, height, DELTA, f) == pytest.approx(fence, rel=1e-12)
    assert paper_optimal_block("fence", n, width, height, DELTA, f) == pytest.approx(fence, rel=1e-12)
    # Snake: the printed denominator D, and the derivation's 4 N alpha / (D + 2 beta f(1))
    d = (p - 2) * (c2 + 2 * b * f(2)) + 2 * b * f(3) - 3 * b * f(4)
    assert paper_optimal_block("snake", n, width, height, DELTA, f) == pytest.approx(math.sqrt(n * a / d), rel=1e-12)
    snake = math.sqrt(4 * n * a / (d + 2 * b * f(1)))
    assert optimal_block("snake", n, width, height, DELTA, f) == pytest.approx(snake, rel=1e-12)
    # and it is the minimum of the continuous model (B = N/S): a direct evaluation of the table's sum
    for algorithm, s_opt in (("snake", snake), ("fence", fence)):
        t = continuous_time(algorithm, n, width, height, f)
        assert t(s_opt) < t(s_opt * 0.99)
        assert t(s_opt) < t(s_opt * 1.01)


def continuous_time(algorithm: str, n: int, width: int, height: int, f: NBLFunction) -> Callable[[float], float]:
    """T(S) with B = N/S, from the step table (fixed S, then B replaced): independent of sympy."""

    def t(s: float) -> float:
        rows = (snake_step_table if algorithm == "snake" else fence_step_table)(n, 1, width, height)
        total = 0.0
        for row in rows:
            steps = n / s - 3 if row.links == {"snake": 4, "fence": 6}[algorithm] else row.steps
            cost = row.links * DELTA.alpha + f(row.links) * DELTA.beta * s + DELTA.combine_cost(row.combine) * s
            total += steps * cost
        return total

    return t


def test_no_interior_optimum_on_tiny_meshes() -> None:
    # Snake on 2 nodes, nominal: S coefficient 2 beta + 6 beta - 12 beta < 0
    with pytest.raises(ValueError, match=r"snake on 2x1 with f=nominal: dT/dS = 0 has no root S > 0"):
        optimal_block("snake", 1000, 2, 1, DELTA, NOMINAL)
    with pytest.raises(ValueError, match="has no root S > 0"):
        optimal_block("fence", 1000, 2, 1, DELTA, NOMINAL)
    with pytest.raises(ValueError, match="the printed S_opt has a denominator"):
        paper_optimal_block("snake", 1000, 2, 1, DELTA, NOMINAL)
    # the integer search still works: T decreases with S, so the largest S with B >= 3
    assert integer_optimal_block("snake", 1000, 2, 1, DELTA, NOMINAL) == 334


# --- integer optimum --------------------------------------------------------------------------------------------------


def brute_force(algorithm: str, n: int, width: int, height: int, f: NBLFunction) -> int:
    valid = [s for s in range(1, n + 1) if math.ceil(n / s) >= 3]
    return min(valid, key=lambda s: TIME[algorithm](n, s, width, height, DELTA, f))


@pytest.mark.parametrize("algorithm", PIPELINED)
@pytest.mark.parametrize(("n", "width", "height"), [(3, 2, 2), (7, 4, 4), (100, 16, 16), (997, 4, 4), (2500, 2, 8)])
@pytest.mark.parametrize("f", F_ALL, ids=lambda f: f.name)
def test_integer_optimum_equals_brute_force(algorithm: str, n: int, width: int, height: int, f: NBLFunction) -> None:
    assert integer_optimal_block(algorithm, n, width, height, DELTA, f) == brute_force(algorithm, n, width, height, f)


@pytest.mark.parametrize("algorithm", PIPELINED)
@pytest.mark.parametrize(("n", "width", "height"), [(10**4, 4, 4), (10**5, 16, 16), (5 * 10**5, 16, 32)])
@pytest.mark.parametrize("f", F_ALL, ids=lambda f: f.name)
def test_integer_optimum_is_a_local_minimum_near_s_opt(
    algorithm: str, n: int, width: int, height: int, f: NBLFunction
) -> None:
    best = integer_optimal_block(algorithm, n, width, height, DELTA, f)
    time = TIME[algorithm]
    t = time(n, best, width, height, DELTA, f)
    for neighbour in range(max(1, best - 5), best + 6):
        assert t <= time(n, neighbour, width, height, DELTA, f)
    assert best == pytest.approx(optimal_block(algorithm, n, width, height, DELTA, f), rel=0.1)


def test_integer_optimum_needs_three_blocks() -> None:
    assert integer_optimal_block("snake", 3, 4, 4, DELTA, NOMINAL) == 1
    with pytest.raises(ValueError, match=r"needs B = ceil\(N/S\) >= 3 blocks, so N >= 3, got N=2"):
        integer_optimal_block("fence", 2, 4, 4, DELTA, NOMINAL)


# --- fastest and the paper's Fig. 5 -----------------------------------------------------------------------------------


def test_fastest_reports_times_and_blocks() -> None:
    result = fastest(10**4, 16, 16, DELTA, NOMINAL)
    assert set(result.times) == {"tree", "snake", "fence"}
    assert result.winner == min(result.times, key=result.times.get)
    for algorithm in PIPELINED:
        s = integer_optimal_block(algorithm, 10**4, 16, 16, DELTA, NOMINAL)
        assert result.blocks[algorithm] == s
        assert result.times[algorithm] == TIME[algorithm](10**4, s, 16, 16, DELTA, NOMINAL)
    assert result.times["tree"] == tree_time(10**4, 16, 16, DELTA, NOMINAL)


def test_fastest_leaves_out_inapplicable_models() -> None:
    assert fastest(2, 16, 16, DELTA, NOMINAL).times.keys() == {"tree"}
    assert fastest(100, 1, 1, DELTA, NOMINAL).times.keys() == {"tree"}
    assert fastest(100, 1, 8, DELTA, NOMINAL).times.keys() == {"tree", "snake"}


@pytest.mark.parametrize(
    ("n", "f", "winner"),
    [(100, STANDARD, "tree"), (10**4, STANDARD, "fence"), (5 * 10**5, NOMINAL, "snake")],
    ids=["standard-N=1e2-tree", "standard-N=1e4-fence", "nominal-N=5e5-snake"],
)
def test_fig5_claims_on_16x16(n: int, f: NBLFunction, winner: str) -> None:
    assert fastest(n, 16, 16, DELTA, f).winner == winner


MESHES = ((4, 4), (16, 16), (16, 32))
LENGTHS = (10**2, 10**3, 10**4, 10**5, 5 * 10**5)


def test_fig5_regimes_on_the_papers_grid() -> None:
    """Sect. 4.1: Tree for short vectors under both models; without NBL, Fence almost everywhere else and Snake only
    for very long vectors on few nodes; with NBL, Snake over a large regime including long vectors and many nodes."""
    standard = {(w, h, n): fastest(n, w, h, DELTA, STANDARD).winner for w, h in MESHES for n in LENGTHS}
    nominal = {(w, h, n): fastest(n, w, h, DELTA, NOMINAL).winner for w, h in MESHES for n in LENGTHS}
    assert all(standard[w, h, 100] == nominal[w, h, 100] == "tree" for w, h in MESHES)
    assert {key for key, name in standard.items() if name == "snake"} == {(4, 4, 5 * 10**5)}
    assert sum(name == "fence" for name in standard.values()) == 11
    assert all(nominal[w, h, 5 * 10**5] == "snake" for w, h in MESHES)
    assert sum(name == "snake" for name in nominal.values()) > sum(name == "snake" for name in standard.values())


def test_snake_asymptotically_a_third_faster_than_fence_under_nominal() -> None:
    # Sect. 4.2: "Snake is asymptotically up to 33% faster than Fence": (4 beta + c2) / (6 beta + c3) per element
    m = DELTA
    assert 1 - (4 * m.beta + m.c2) / (6 * m.beta + m.c3) == pytest.approx(1 / 3, abs=0.001)
    result = fastest(10**9, 4, 4, DELTA, NOMINAL)
    assert 0.32 < 1 - result.times["snake"] / result.times["fence"] < 1 / 3


def test_the_literal_appendix_reading_contradicts_fig5() -> None:
    # L * (alpha + f(L) beta S) read literally: nominal would make Tree fastest for N = 5e5 on 16 x 16
    assert fastest(5 * 10**5, 16, 16, DELTA, times_links(NOMINAL)).winner == "tree"
    # and f = 1 would already be the no-overlap case
    for algorithm in PIPELINED:
        assert TIME[algorithm](10**4, 50, 16, 16, DELTA, times_links(STANDARD)) == pytest.approx(
            TIME[algorithm](10**4, 50, 16, 16, DELTA, NOMINAL), rel=1e-12
        )
