"""Small finite fields GF(q), q a prime power, for the algebraic constructions of low-diameter networks (Slim Fly).

GF(p), p prime, is the integers modulo p. GF(p^n), n > 1, is the polynomials over GF(p) modulo a monic
irreducible polynomial of degree n: the smallest one, in the order of its coefficients read as the digits of an
integer in base p (constant term first, the least significant digit), found by search. An element is encoded as
an integer 0 .. q - 1 by its coefficient digits (``a0 + a1 p + ... + a(n-1) p^(n-1)``), so that GF(p) elements are
their own integers, 0 is zero and 1 is one. The fields here are small (q <= a few hundred): every sum and product
is a table look-up, built once.

A primitive element is the smallest (by encoding) whose powers give every non-zero element.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

from generators.errors import TopologyError

__all__ = ["FiniteField", "prime_power"]


def prime_power(q: int) -> tuple[int, int] | None:
    """``(p, n)`` when ``q = p^n`` with p prime and n >= 1, else None.

    >>> prime_power(9), prime_power(64), prime_power(7), prime_power(12), prime_power(1)
    ((3, 2), (2, 6), (7, 1), None, None)
    """
    if q < 2:
        return None
    p = next(d for d in range(2, q + 1) if q % d == 0)  # the smallest factor: a prime
    n, rest = 0, q
    while rest % p == 0:
        rest, n = rest // p, n + 1
    return (p, n) if rest == 1 else None


def _digits(value: int, p: int, n: int) -> list[int]:
    """The n base-p digits of ``value``, least significant first: a polynomial's coefficients, constant first."""
    out = []
    for _ in range(n):
        value, digit = divmod(value, p)
        out.append(digit)
    return out


def _number(coefficients: list[int], p: int) -> int:
    """The integer whose base-p digits are ``coefficients`` (constant first)."""
    return sum(c * p**i for i, c in enumerate(coefficients))


def _remainder(dividend: list[int], divisor: list[int], p: int) -> list[int]:
    """``dividend mod divisor`` over GF(p); ``divisor`` is monic (its last coefficient 1), coefficients constant
    first. The remainder has ``len(divisor) - 1`` coefficients."""
    rest = list(dividend)
    degree = len(divisor) - 1
    for top in range(len(rest) - 1, degree - 1, -1):
        factor = rest[top]
        if factor:
            for i, c in enumerate(divisor):
                rest[top - degree + i] = (rest[top - degree + i] - factor * c) % p
    return (rest + [0] * degree)[:degree]


def _irreducible(p: int, n: int) -> list[int]:
    """The smallest monic irreducible polynomial of degree n over GF(p) (coefficients constant first): the first
    with no monic divisor of degree 1 .. n // 2 (a reducible polynomial has a factor of at most half its degree)."""
    for low in range(p**n):
        candidate = [*_digits(low, p, n), 1]
        divisors = ([*_digits(d, p, m), 1] for m in range(1, n // 2 + 1) for d in range(p**m))
        if all(any(_remainder(candidate, divisor, p)) for divisor in divisors):
            return candidate
    raise AssertionError(f"no irreducible polynomial of degree {n} over GF({p})")  # there always is one


def _product(a: list[int], b: list[int], p: int) -> list[int]:
    """The product of two polynomials over GF(p), coefficients constant first."""
    out = [0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] = (out[i + j] + x * y) % p
    return out


@dataclass(frozen=True)
class FiniteField:
    """GF(q) with its elements encoded as 0 .. q - 1 (module docstring): sum, difference and product tables.

    >>> f = FiniteField.of(4)
    >>> f.modulus, f.mul(2, 2), f.add(2, 3), f.primitive, f.powers()
    ((1, 1, 1), 3, 1, 2, [1, 2, 3])
    """

    q: int
    p: int
    n: int
    modulus: tuple[int, ...]
    """The irreducible polynomial's coefficients, constant first (``(0, 1)``: x, for a prime field)."""
    sums: tuple[tuple[int, ...], ...] = field(repr=False)
    products: tuple[tuple[int, ...], ...] = field(repr=False)
    primitive: int = 0
    negatives: tuple[int, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "negatives", tuple(row.index(0) for row in self.sums))

    @classmethod
    def of(cls, q: int) -> FiniteField:
        """GF(q); ``TopologyError`` unless q is a prime power."""
        found = prime_power(q)
        if found is None:
            raise TopologyError(f"GF(q) needs a prime power q (p^n, p prime, n >= 1), got {q}")
        p, n = found
        modulus = _irreducible(p, n) if n > 1 else [0, 1]
        polys = [_digits(a, p, n) for a in range(q)]
        sums = tuple(tuple(_number([(x + y) % p for x, y in zip(a, b, strict=True)], p) for b in polys) for a in polys)
        products = tuple(tuple(_number(_remainder(_product(a, b, p), modulus, p), p) for b in polys) for a in polys)
        field_ = cls(q, p, n, tuple(modulus), sums, products)
        primitive = next(g for g in range(1, q) if len(set(field_.powers(g))) == q - 1)
        return cls(q, p, n, tuple(modulus), sums, products, primitive)

    def add(self, a: int, b: int) -> int:
        """a + b."""
        return self.sums[a][b]

    def neg(self, a: int) -> int:
        """-a: the element whose sum with a is 0."""
        return self.negatives[a]

    def sub(self, a: int, b: int) -> int:
        """a - b."""
        return self.sums[a][self.negatives[b]]

    def mul(self, a: int, b: int) -> int:
        """a b."""
        return self.products[a][b]

    def inverse(self, a: int) -> int:
        """The inverse of a non-zero a; ``ZeroDivisionError`` for 0."""
        if a == 0:
            raise ZeroDivisionError("0 has no inverse in a field")
        return self.products[a].index(1)

    def powers(self, g: int | None = None) -> list[int]:
        """``g^0, g^1, ..., g^(q-2)`` (default: the primitive element's, every non-zero element once)."""
        base = self.primitive if g is None else g
        out, value = [], 1
        for _ in range(self.q - 1):
            out.append(value)
            value = self.mul(value, base)
        return out
