"""The sense-reason-act loop behind the ``search`` action, without ROS."""

from sg_search.search.loop import (
    ExecutionReport,
    SearchError,
    SearchOutcome,
    SearchParams,
    SearchStep,
    run_search,
)

__all__ = ["ExecutionReport", "SearchError", "SearchOutcome", "SearchParams", "SearchStep", "run_search"]
