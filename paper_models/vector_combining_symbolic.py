"""The optimal block size of Snake and Fence: the symbolic derivation and the paper's printed closed forms.

The models' step tables (``paper_models.vector_combining``) are summed symbolically (sympy) and
``dT/dS = 0`` is solved for the block size S (:func:`symbolic_optimal_block`, :func:`optimal_block`);
:func:`paper_optimal_block` evaluates the closed forms as Littlefield printed them, whose differences
from the derivation ``paper_models.vector_combining``'s docstring lists.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any
from typing import NamedTuple

import sympy as sp

from paper_models.vector_combining import MachineParams
from paper_models.vector_combining import NBLFunction
from paper_models.vector_combining import _check_algorithm
from paper_models.vector_combining import _check_mesh
from paper_models.vector_combining import _require_int
from paper_models.vector_combining import _rows
from paper_models.vector_combining import _sum_rows

__all__ = [
    "SYMBOLS",
    "Symbols",
    "optimal_block",
    "paper_optimal_block",
    "paper_optimal_block_expr",
    "symbolic_optimal_block",
    "symbolic_time",
]


class Symbols(NamedTuple):
    """The sympy symbols of the derivation (all positive; ``f`` is an undefined function, printed ``f(2)``)."""

    n: sp.Symbol
    width: sp.Symbol
    height: sp.Symbol
    s: sp.Symbol
    alpha: sp.Symbol
    beta: sp.Symbol
    c2: sp.Symbol
    c3: sp.Symbol
    f: Any


SYMBOLS = Symbols(*sp.symbols("N W H S alpha beta c_2 c_3", positive=True), sp.Function("f"))

_LINKS = {"snake": (1, 2, 3, 4), "fence": (1, 2, 3, 4, 6)}


def symbolic_time(algorithm: str) -> sp.Expr:
    """T(S) of Snake or Fence as a sympy expression, with B = N/S continuous (as the paper differentiates it).

    >>> y = SYMBOLS
    >>> sp.limit(sp.diff(symbolic_time("fence"), y.s) * y.s**2, y.s, 0)  # -D in dT/dS = K - D/S**2
    -6*N*alpha
    """
    _check_algorithm(algorithm)
    y = SYMBOLS
    rows = _rows(algorithm, y.width, y.height, y.n / y.s)
    return sp.expand(_sum_rows(rows, y.s, y.alpha, y.beta, {"c2": y.c2, "c3": y.c3, "none": 0}, y.f))


class _Derivation(NamedTuple):
    s_opt: sp.Expr
    slope: sp.Expr
    s_opt_value: Callable[..., float]
    slope_value: Callable[..., float]


@functools.cache
def _derivation(algorithm: str) -> _Derivation:
    """Solve dT/dS = 0 for S > 0 (cached: sympy takes a fraction of a second)."""
    y = SYMBOLS
    time = symbolic_time(algorithm)
    derivative = sp.diff(time, y.s)
    # dT/dS = K - D/S**2 with D = (links of the B - 3 row) * N * alpha > 0: the roots are +-sqrt(D/K), real when the
    # slope K (the S coefficient of T) is > 0; d2T/dS2 = 2D/S**3 > 0 makes the positive root the minimum.
    slope = sp.limit(derivative, y.s, sp.oo)
    roots = sp.solve(sp.Eq(derivative, 0), y.s)
    sample = {y.n: 1000, y.width: 16, y.height: 16, y.alpha: 54, y.beta: 1.54, y.c2: 0.25, y.c3: 0.37}
    sample |= {y.f(links): links for links in _LINKS[algorithm]}
    positive = [root for root in roots if root.subs(sample) > 0]
    if len(positive) != 1:  # pragma: no cover - a change of the tables or of sympy
        raise RuntimeError(f"{algorithm}: expected one positive root of dT/dS = 0, got {roots}")
    args = [y.n, y.width, y.height, y.alpha, y.beta, y.c2, y.c3, [y.f(links) for links in _LINKS[algorithm]]]
    return _Derivation(
        positive[0],
        slope,
        sp.lambdify(args, positive[0], modules="math"),
        sp.lambdify(args, slope, modules="math"),
    )


def symbolic_optimal_block(algorithm: str) -> sp.Expr:
    """S_opt of Snake or Fence derived with sympy: the root S > 0 of dT/dS = 0 of :func:`symbolic_time`.

    >>> y = SYMBOLS
    >>> sp.simplify(symbolic_optimal_block("snake") ** 2 - 4 * y.n * y.alpha / (
    ...     2 * y.beta * y.f(1) + (y.width * y.height - 2) * (y.c2 + 2 * y.beta * y.f(2))
    ...     + 2 * y.beta * y.f(3) - 3 * y.beta * y.f(4)))
    0
    """
    _check_algorithm(algorithm)
    return _derivation(algorithm).s_opt


def _numeric_args(algorithm: str, n: int, width: int, height: int, machine: MachineParams, f: NBLFunction) -> list[Any]:
    n = _require_int("n", n, 1)
    width, height = _check_mesh(algorithm, width, height)
    f_values = [f(links) for links in _LINKS[algorithm]]
    return [n, width, height, machine.alpha, machine.beta, machine.c2, machine.c3, f_values]


def optimal_block(algorithm: str, n: int, width: int, height: int, machine: MachineParams, f: NBLFunction) -> float:
    """The continuous optimum block size S_opt (doubles) of Snake or Fence, from :func:`symbolic_optimal_block`.

    It is the stationary point of the model with B = N/S, not clipped to ``B >= 3`` or to integers (see
    :func:`integer_optimal_block`). Raises ``ValueError`` when the S coefficient of T(S) is <= 0 (tiny meshes, e.g.
    Snake on 2 nodes under the nominal model): then T decreases with S and dT/dS = 0 has no root S > 0.

    >>> from paper_models.vector_combining import DELTA, STANDARD
    >>> round(optimal_block("fence", 10_000, 16, 16, DELTA, STANDARD), 3)
    180.298
    >>> round(optimal_block("snake", 10_000, 16, 16, DELTA, STANDARD), 3)  # the printed form gives 25.290
    50.489
    """
    _check_algorithm(algorithm)
    derivation = _derivation(algorithm)
    args = _numeric_args(algorithm, n, width, height, machine, f)
    slope = derivation.slope_value(*args)
    if not slope > 0:
        raise ValueError(
            f"{algorithm} on {width}x{height} with f={f.name}: dT/dS = 0 has no root S > 0 (the S coefficient of "
            f"T(S) is {slope:.4g} s/double <= 0, so T decreases with S); use integer_optimal_block"
        )
    return float(derivation.s_opt_value(*args))


def _printed_terms(
    algorithm: str, n: Any, width: Any, height: Any, alpha: Any, beta: Any, c2: Any, c3: Any, f: Any
) -> tuple[Any, Any]:
    """(numerator, denominator) of the Appendix's printed S_opt = (numerator / denominator)^(1/2)."""
    p = width * height
    if algorithm == "snake":
        return n * alpha, (p - 2) * (c2 + 2 * beta * f(2)) + 2 * beta * f(3) - 3 * beta * f(4)
    # eq. (1)
    return 6 * n * alpha, (
        height * (c2 + 2 * beta * f(2))
        + width * (c3 + 2 * beta * f(3))
        - 3 * c3
        + beta * (2 * f(1) - 2 * f(2) - 4 * f(3) + 2 * f(4) - 3 * f(6))
    )


def paper_optimal_block_expr(algorithm: str) -> sp.Expr:
    """The Appendix's printed S_opt for Snake or eq. (1) for Fence, as a sympy expression in :data:`SYMBOLS`.

    Fence's eq. (1) equals :func:`symbolic_optimal_block`; Snake's printed form does not (see the module docstring).
    """
    _check_algorithm(algorithm)
    y = SYMBOLS
    numerator, denominator = _printed_terms(algorithm, y.n, y.width, y.height, y.alpha, y.beta, y.c2, y.c3, y.f)
    return sp.sqrt(numerator / denominator)


def paper_optimal_block(
    algorithm: str, n: int, width: int, height: int, machine: MachineParams, f: NBLFunction
) -> float:
    """The Appendix's printed closed form of S_opt, evaluated as printed (Snake's differs from the derivation).

    >>> from paper_models.vector_combining import DELTA, STANDARD
    >>> round(paper_optimal_block("fence", 10_000, 16, 16, DELTA, STANDARD), 3)
    180.298
    """
    _check_algorithm(algorithm)
    n, width, height, alpha, beta, c2, c3, _ = _numeric_args(algorithm, n, width, height, machine, f)
    numerator, denominator = _printed_terms(algorithm, n, width, height, alpha, beta, c2, c3, f)
    if not denominator > 0:
        raise ValueError(
            f"{algorithm} on {width}x{height} with f={f.name}: the printed S_opt has a denominator "
            f"{denominator:.4g} <= 0"
        )
    return math.sqrt(numerator / denominator)
