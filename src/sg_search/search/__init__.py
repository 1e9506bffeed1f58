"""The sense-reason-act loop behind the ``search`` action, without ROS."""

from sg_search.search.loop import (
    DecisionRecord,
    ExecutionReport,
    SearchError,
    SearchOutcome,
    SearchParams,
    SearchStep,
    VerificationReport,
    run_search,
)

__all__ = [
    "DecisionRecord",
    "ExecutionReport",
    "SearchError",
    "SearchOutcome",
    "SearchParams",
    "SearchStep",
    "VerificationReport",
    "run_search",
]
