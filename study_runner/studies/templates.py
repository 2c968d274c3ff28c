"""The grid grammar shared by sweep files and study files: variables on axes, and templates that use them.

Axes. ``[grid]`` makes every variable an axis of its own (a cartesian product); each ``[[zip]]`` table is one
more axis whose variables vary together (lists of equal length). Axes vary in the order the file declares
them, the last one fastest, so a ``[[zip]]`` written before ``[grid]`` is the outermost loop.

Templates. Any string may hold ``{expression}`` parts: arithmetic on the variables (``+ - * / // % **``),
comparisons and ``and``/``or``/``not``, and a few functions (``abs``, ``min``, ``max``, ``int``, ``round``, ``str``,
``replace(text, old, new)``); a study's analysis module may add its model's functions (``TEMPLATE_FUNCTIONS``).
A string that is one expression alone keeps its type (``"{side * side}"`` is the integer 16); otherwise each
part is formatted into the string. ``{{`` and ``}}`` are literal braces.

Bounds. A grid expands to at most :data:`MAX_POINTS` points, counted from its axes before anything is expanded; a
template's values stay below :data:`MAX_VALUE_SIZE` (digits of an integer, characters of a string), checked before
a power or a repetition is computed, so that no file can make the loader hang or exhaust memory.
"""

from __future__ import annotations

import ast
import itertools
import math
import operator
import re
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from study_runner.errors import StudyError

__all__ = [
    "BUILTIN_FUNCTIONS",
    "MAX_POINTS",
    "MAX_VALUE_SIZE",
    "assignments",
    "axes",
    "evaluate",
    "positive_number",
    "render",
]

MAX_POINTS = 100_000
"""The most points a grid may have: each is a simulation, and 10^5 of them are already days of a large machine."""

MAX_VALUE_SIZE = 10_000
"""The most decimal digits of an integer, or characters of a string, that a template may compute."""

Functions = Mapping[str, Callable[..., Any]]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TEMPLATE = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_}
_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
BUILTIN_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "abs": abs,
    "min": min,
    "max": max,
    "int": int,
    "round": round,
    "str": str,
    "replace": lambda text, old, new: str(text).replace(old, new),
}


def evaluate(expression: str, variables: Mapping[str, Any], functions: Functions | None = None) -> Any:
    """Value of a template expression: arithmetic and comparisons on ``variables`` and a few functions.

    >>> evaluate("side * side", {"side": 4}), evaluate("max(1, n // 64)", {"n": 100})
    (16, 1)
    >>> evaluate("side == 4 or n <= 10", {"side": 8, "n": 100})
    False
    """
    callables = {**BUILTIN_FUNCTIONS, **(functions or {})}
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError:
        raise StudyError(f"malformed expression {{{expression}}}") from None

    def value(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float | str):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in variables:
                known = ", ".join(sorted(variables)) or "none"
                raise StudyError(f"{{{expression}}} names unknown variable {node.id!r} (variables: {known})")
            return variables[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = value(node.left), value(node.right)
            _check_operation(type(node.op), left, right, expression)
            return _bounded(_BINARY[type(node.op)](left, right), expression)
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](value(node.operand))
        if isinstance(node, ast.BoolOp):
            # Short-circuit like Python, but always a bool: a template's truth value, not an operand.
            values = (bool(value(operand)) for operand in node.values)
            return any(values) if isinstance(node.op, ast.Or) else all(values)
        if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
            operands = [value(node.left), *(value(c) for c in node.comparators)]
            return all(_COMPARE[type(op)](a, b) for op, a, b in zip(node.ops, operands, operands[1:], strict=False))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            if node.func.id in callables:
                return _bounded(callables[node.func.id](*(value(arg) for arg in node.args)), expression)
        raise StudyError(
            f"{{{expression}}}: only arithmetic, comparisons, and/or/not on variables and the functions "
            f"{', '.join(callables)} are allowed in a template"
        )

    try:
        return value(tree)
    except StudyError:
        raise
    except (TypeError, ValueError, ZeroDivisionError, OverflowError) as err:
        raise StudyError(f"{{{expression}}} cannot be evaluated with {dict(variables)}: {err}") from None


def _too_large(expression: str) -> StudyError:
    return StudyError(f"{{{expression}}} computes a value of more than {MAX_VALUE_SIZE} digits or characters")


def _check_operation(op: type, left: Any, right: Any, expression: str) -> None:
    """Refuse a power or a repetition whose result would exceed the bound, before computing it."""
    if op is ast.Pow and all(isinstance(v, int) and not isinstance(v, bool) for v in (left, right)):
        if abs(left) > 1 and right > 0 and right * math.log10(abs(left)) > MAX_VALUE_SIZE:
            raise _too_large(expression)
    if op is ast.Mult and any(isinstance(v, str) for v in (left, right)):
        count = right if isinstance(left, str) else left
        text = left if isinstance(left, str) else right
        if isinstance(count, int) and len(text) * count > MAX_VALUE_SIZE:
            raise _too_large(expression)


def _bounded(result: Any, expression: str) -> Any:
    """``result``, unless it is larger than the bound."""
    if isinstance(result, str) and len(result) > MAX_VALUE_SIZE:
        raise _too_large(expression)
    if isinstance(result, int) and result.bit_length() > MAX_VALUE_SIZE * 3.33:  # 3.33 bits per decimal digit
        raise _too_large(expression)
    return result


def positive_number(value: object) -> bool:
    """Whether ``value`` is a finite number > 0 (not a bool, not nan, not inf): a time limit or a size."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def render(template: Any, variables: Mapping[str, Any], functions: Functions | None = None) -> Any:
    """``template`` with its ``{expression}`` parts evaluated (lists element by element, as arguments).

    Tables are rendered value by value (a run's neighbours), and a list of tables table by table.

    >>> render("{w}x{w}", {"w": 4}), render("{w * 2}", {"w": 4}), render(["-n", "{w}"], {"w": 4})
    ('4x4', 8, ['-n', '4'])
    >>> render([{"ranks": "{w}", "args": ["-s", "{w}"]}], {"w": 4})
    [{'ranks': 4, 'args': ['-s', '4']}]
    """
    if isinstance(template, dict):
        return {key: render(value, variables, functions) for key, value in template.items()}
    if isinstance(template, list):
        return [
            render(item, variables, functions) if isinstance(item, dict)
            else _as_argument(render(item, variables, functions))
            for item in template
        ]  # fmt: skip
    if not isinstance(template, str):
        return template
    whole = _TEMPLATE.fullmatch(template)
    if whole and whole.group(1) is not None:
        return evaluate(whole.group(1), variables, functions)

    def part(match: re.Match[str]) -> str:
        if match.group(1) is None:
            return match.group(0)[0]
        return str(evaluate(match.group(1), variables, functions))

    return _TEMPLATE.sub(part, template)


def _as_argument(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def _values(name: str, values: object, table: str, seen: set[str], where: str) -> list[Any]:
    if not _NAME.match(name):
        raise StudyError(f"{where}: {table} variable {name!r} is not a valid name (letters, digits, _)")
    if name in seen:
        raise StudyError(f"{where}: variable {name!r} is declared twice")
    seen.add(name)
    if not isinstance(values, list):
        raise StudyError(f"{where}: {table}.{name} must be a list of values, got {values!r}")
    if not values:
        raise StudyError(f"{where}: {table}.{name} is empty: the grid has no point")
    for item in values:
        if isinstance(item, dict | list) or (isinstance(item, float) and not math.isfinite(item)):
            raise StudyError(f"{where}: {table}.{name} must hold numbers, strings or booleans, got {item!r}")
    return values


def axes(data: Mapping[str, Any], where: str) -> list[list[dict[str, Any]]]:
    """The axes declared by ``data``'s ``grid`` and ``zip`` keys, in file order; each a list of assignments."""
    found: list[list[dict[str, Any]]] = []
    seen: set[str] = set()
    for key in [k for k in data if k in ("grid", "zip")]:
        if key == "grid":
            grid = data["grid"]
            if not isinstance(grid, dict):
                raise StudyError(f"{where}: grid must be a table of variables ([grid])")
            for name, values in grid.items():
                found.append([{name: value} for value in _values(name, values, "grid", seen, where)])
            continue
        zips = data["zip"]
        if not isinstance(zips, list) or not all(isinstance(z, dict) for z in zips):
            raise StudyError(f"{where}: zip must be an array of tables ([[zip]])")
        for number, table in enumerate(zips, 1):
            if not table:
                raise StudyError(f"{where}: zip table {number} is empty: the grid has no point")
            columns = {name: _values(name, values, f"zip[{number}]", seen, where) for name, values in table.items()}
            lengths = {name: len(values) for name, values in columns.items()}
            if len(set(lengths.values())) > 1:
                sizes = ", ".join(f"{name}: {n}" for name, n in lengths.items())
                raise StudyError(f"{where}: the lists of zip table {number} must have one length, got {sizes}")
            size = next(iter(lengths.values()))
            found.append([{name: columns[name][i] for name in columns} for i in range(size)])
    if not found:
        raise StudyError(f"{where}: the grid is empty: declare variables in [grid] or [[zip]]")
    return found


def assignments(grid_axes: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Every point of the grid: one value of every variable, the last axis varying fastest.

    >>> assignments([[{"a": 1}, {"a": 2}], [{"b": "x", "c": 0}]])
    [{'a': 1, 'b': 'x', 'c': 0}, {'a': 2, 'b': 'x', 'c': 0}]
    """
    count = math.prod(len(axis) for axis in grid_axes)
    if count > MAX_POINTS:
        sizes = " x ".join(str(len(axis)) for axis in grid_axes)
        raise StudyError(
            f"the grid has {count:,} points ({sizes}): more than {MAX_POINTS:,}, the most one file may declare; "
            "split it into several files"
        )
    points = []
    for combination in itertools.product(*grid_axes):
        assignment: dict[str, Any] = {}
        for part in combination:
            assignment.update(part)
        points.append(assignment)
    return points
