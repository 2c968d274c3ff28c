"""The exceptions of the study runner: one clear message naming the problem."""

__all__ = ["StudyError", "UsageError"]


class StudyError(Exception):
    """A study file, an app binary or a simulation is not usable; the message says which and why."""


class UsageError(Exception):
    """Bad input on a command line (a platform file, a hostfile, an option): reported as one line, exit status 2,
    before anything runs."""
