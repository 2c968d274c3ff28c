"""The one exception type that topolab's generators raise for bad input, and how a message shows a bad value."""

__all__ = ["BUILD_HINT", "TopologyError", "missing_build", "shown"]

_SHOWN_CHARS = 60

BUILD_HINT = "run scripts/build"
"""How every error about a file that ``scripts/build`` makes ends (the tests' quick run knows those errors by it)."""


class TopologyError(ValueError):
    """A topology parameter, family name or platform request is invalid.

    The message always names the offending parameter, the rule it breaks and the value given,
    e.g. ``hosts must be an integer >= 1, got '0'``.
    """


def shown(value: object) -> str:
    """``repr(value)`` for a message, cut short when long: an error stays one readable line whatever was given.

    >>> shown("4x4"), shown(-(10**5000))
    ("'4x4'", '-(an integer of 5001 digits)')
    >>> shown("9" * 100)[-20:]
    '... (102 characters)'
    """
    if isinstance(value, int) and not isinstance(value, bool) and abs(value).bit_length() > 3000:
        # repr() refuses integers past 4300 digits; the count of digits is what matters
        digits = int(abs(value).bit_length() * 0.30102999566398120) + 1
        digits -= abs(value) < 10 ** (digits - 1)
        return f"{'-' if value < 0 else ''}(an integer of {digits} digits)"
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS + 20 else f"{text[:_SHOWN_CHARS]}... ({len(text)} characters)"


def missing_build(what: str) -> str:
    """The one message for a file that ``scripts/build`` makes and that is not there.

    >>> missing_build("build/bin/jobs_run")
    'build/bin/jobs_run is missing: run scripts/build'
    """
    return f"{what} is missing: {BUILD_HINT}"
