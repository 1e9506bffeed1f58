"""The sense-reason-act loop behind the ``search`` action, without ROS."""

from sg_search.geometry import Pose2D
from sg_search.search.loop import run_search
from sg_search.search.outcome import DecisionRecord, SearchError, SearchOutcome, SearchParams, SearchStep
from sg_search.search.reports import ExecutionReport, VerificationReport
from sg_search.search.verification import Verifier
from sg_search.search.world import ActingWorld, SensedWorld, VerifyingWorld

__all__ = [
    "ActingWorld",
    "DecisionRecord",
    "ExecutionReport",
    "Pose2D",
    "SearchError",
    "SearchOutcome",
    "SearchParams",
    "SearchStep",
    "SensedWorld",
    "VerificationReport",
    "Verifier",
    "VerifyingWorld",
    "run_search",
]
