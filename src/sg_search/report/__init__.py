"""A run folder a person would rather look at than read: report.html and its figures."""

from sg_search.report.html import write_report
from sg_search.report.record import RunRecord

__all__ = ["RunRecord", "write_report"]
