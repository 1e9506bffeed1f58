"""The failure taxonomy on constructed episodes whose cause is known."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sg_search.bench.failures import EndCause, EpisodeFacts, classify

# An episode that got every link of the chain right but ran out of actions while exploring.
ALL_LINKS = EpisodeFacts(
    success=False, verified=False, found_target=False, end="BUDGET", entered_room=True, needs_opening=True,
    container_opened=True, detected=True, fused=True, rejected=False, last_phase="exploration",
)  # fmt: skip


@pytest.mark.parametrize(
    ("change", "cause"),
    [
        ({"success": True, "verified": True, "found_target": True, "end": "NONE"}, EndCause.FOUND),
        ({"verified": True, "found_target": True, "end": "NONE"}, EndCause.VERIFIED_OUTSIDE),
        ({"verified": True, "found_target": False, "end": "NONE"}, EndCause.FALSE_POSITIVE),
        ({"rejected": True}, EndCause.REJECTED),
        ({"end": "EXECUTION_FAILED", "entered_room": False}, EndCause.NAVIGATION),
        ({"end": "NO_REACHABLE_TARGETS"}, EndCause.NAVIGATION),
        ({"entered_room": False, "container_opened": False, "detected": False, "fused": False},
         EndCause.ROOM_NEVER_ENTERED),
        ({"container_opened": False, "detected": False, "fused": False}, EndCause.CONTAINER_NEVER_OPENED),
        ({"needs_opening": False, "container_opened": False, "detected": False, "fused": False},
         EndCause.NEVER_DETECTED),
        ({"fused": False}, EndCause.NEVER_FUSED),
        ({"last_phase": "verification"}, EndCause.BUDGET_VERIFYING),
        ({}, EndCause.BUDGET_EXPLORING),
    ],
)  # fmt: skip
def test_each_cause_from_the_first_missing_link(change: dict[str, object], cause: EndCause) -> None:
    assert classify(replace(ALL_LINKS, **change)) == cause  # type: ignore[arg-type]


def test_a_success_wins_over_everything_else() -> None:
    odd = replace(ALL_LINKS, success=True, rejected=True, end="NONE", verified=True, found_target=True)
    assert classify(odd) == EndCause.FOUND
