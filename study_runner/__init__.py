"""topolab's study runner: run studies (data) under smpirun, check them, write results and the report."""

from study_runner.errors import StudyError

__all__ = ["StudyError"]
