"""What the world reports back to the search: one execution, one verification."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExecutionReport:
    """What the executor did with a candidate. ``path_length`` in metres; ``code`` is an
    ExecuteAffordance result code; ``fatal``: the executor or robot is unavailable, so
    trying another target would fail too."""

    success: bool
    path_length: float = 0.0
    message: str = ""
    code: int = 0
    fatal: bool = False


@dataclass(frozen=True)
class VerificationReport:
    """Re-perception of a goal candidate (see :mod:`sg_search.search.verification`)."""

    accepted: bool
    credibility: float = 1.0
    observations: int = 0
    path_length: float = 0.0
    message: str = ""
    reached: bool = True  # the approach got within reach of the candidate
