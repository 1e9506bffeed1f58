"""Why a closed-loop search ended as it did: one cause per episode (like SCOUT's real-robot
failure analysis), from facts the in-process world records.

The chain of a find is: enter the target's room -> open its container (when it is inside a
closed one) -> detect the target in a frame -> fuse it into the graph -> verify it -> end
within the success region. An episode that did not succeed is put down to the first link
it missed, unless its ending says more: a verified wrong object (false positive), a
rejected target (verification's false negative), or a navigation that could not go on.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class EndCause(Enum):
    """The cause of an episode's end (value = the label in tables)."""

    FOUND = "found"
    VERIFIED_OUTSIDE = "verified, ended outside the success region"
    FALSE_POSITIVE = "a false positive accepted"
    REJECTED = "the target rejected by verification"
    NAVIGATION = "navigation stuck / nothing reachable"
    ROOM_NEVER_ENTERED = "target room never entered"
    CONTAINER_NEVER_OPENED = "container never opened"
    NEVER_DETECTED = "target never detected"
    NEVER_FUSED = "detected, never fused into the graph"
    BUDGET_VERIFYING = "budget spent on verification"
    BUDGET_EXPLORING = "budget spent while exploring"


@dataclass(frozen=True)
class EpisodeFacts:
    """What happened in one episode.

    Attributes:
        success: ObjectNav's success at the end.
        verified: the search stopped with a verified find.
        found_target: that find was the target.
        end: the search's end code name ("NONE", "NOT_FOUND", ...) or "BUDGET".
        entered_room: the base was inside the target's room at some point.
        needs_opening: the target lies inside an openable container.
        container_opened: that container was opened.
        detected: the detector reported the target in some frame.
        fused: a confirmed instance of the target reached the graph.
        rejected: verification rejected a node of the target.
        last_phase: the phase that was running when the episode ended.
    """

    success: bool
    verified: bool
    found_target: bool
    end: str
    entered_room: bool
    needs_opening: bool
    container_opened: bool
    detected: bool
    fused: bool
    rejected: bool
    last_phase: str


def classify(facts: EpisodeFacts) -> EndCause:
    """The one cause (module docstring)."""
    f = facts
    if f.success:
        return EndCause.FOUND
    if f.verified:
        return EndCause.VERIFIED_OUTSIDE if f.found_target else EndCause.FALSE_POSITIVE
    if f.rejected:
        return EndCause.REJECTED
    if f.end in ("EXECUTION_FAILED", "NO_REACHABLE_TARGETS"):
        return EndCause.NAVIGATION
    if not f.entered_room:
        return EndCause.ROOM_NEVER_ENTERED
    if f.needs_opening and not f.container_opened:
        return EndCause.CONTAINER_NEVER_OPENED
    if not f.detected:
        return EndCause.NEVER_DETECTED
    if not f.fused:
        return EndCause.NEVER_FUSED
    return EndCause.BUDGET_VERIFYING if f.last_phase == "verification" else EndCause.BUDGET_EXPLORING
