"""The exception of the study runner: one clear message naming the problem."""

__all__ = ["StudyError"]


class StudyError(Exception):
    """A study file, an app binary or a simulation is not usable; the message says which and why."""
