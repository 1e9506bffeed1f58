"""The one seam between the search and a robot: what the loop, verification and the executor
may ask of the world they act in.

Two implementations: the in-process MuJoCo world (:mod:`sg_search.bench.embodied_world`, for
benchmarks and tests) and the ROS one inside the reasoner node (:mod:`sg_search.ros.ros_world`,
over actions, services, TF and the camera topic). Both run the same :func:`run_search`,
:class:`~sg_search.search.verification.Verifier` and navigator, so a benchmark number
describes the robot that is deployed.

A world that can only be watched (no executor running, a robot driven by hand) is a
:class:`SensedWorld`; one the search can act in is an :class:`ActingWorld`; verification needs a
:class:`VerifyingWorld`. Which one a world is, is its type, checked by mypy and at run time.

Poses are (x, y, yaw) of the base in ``map`` [m, rad]; images are (H, W, 3) uint8 RGB.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from sg_search.geometry import Pose2D
from sg_search.reasoning.base import Candidate
from sg_search.scene_graph import SceneGraph, SceneNode
from sg_search.search.reports import ExecutionReport


@runtime_checkable
class SensedWorld(Protocol):
    """What a search reads every step."""

    def graph(self) -> SceneGraph | None:
        """The current scene graph (a copy or the live one, read between actions), or None if
        there is none yet."""
        ...

    def pose(self) -> Pose2D | None:
        """The base's pose in ``map``, or None when it is not known (no transform yet)."""
        ...

    def recent_images(self) -> Mapping[int, Any]:
        """The latest RGB frames by frame id (oldest first), for VLM reasoners."""
        ...

    def distances(self) -> Mapping[str, float]:
        """Geodesic metres from the base to graph nodes (inf: unreachable); empty when unknown."""
        ...


@runtime_checkable
class ActingWorld(SensedWorld, Protocol):
    """A world the search can act in."""

    def execute(self, candidate: Candidate) -> ExecutionReport:
        """Do the candidate's affordance on its node (navigate, open, inspect, close)."""
        ...

    def stop(self) -> None:
        """Stop the base now (zero velocity); safe to call at any time."""
        ...


@runtime_checkable
class VerifyingWorld(ActingWorld, Protocol):
    """A world in which a goal candidate can be re-observed."""

    def approach(self, node: SceneNode) -> ExecutionReport:
        """Drive within reach of ``node`` (ObjectNav's success region) and face it."""
        ...

    def reobserve(self, node: SceneNode, after_frame: int) -> SceneNode | None:
        """Point the camera at ``node`` and let perception look once more. The candidate's node
        as perception saw it in a frame newer than ``after_frame`` (following a merge), or None
        when perception did not see it again."""
        ...
