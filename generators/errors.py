"""The one exception type that topolab's generators raise for bad input."""

__all__ = ["TopologyError"]


class TopologyError(ValueError):
    """A topology parameter, family name or platform request is invalid.

    The message always names the offending parameter, the rule it breaks and the value given,
    e.g. ``hosts must be an integer >= 1, got '0'``.
    """
