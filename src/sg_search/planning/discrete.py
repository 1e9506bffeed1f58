"""A base that moves in Habitat ObjectNav's discrete actions (forward 0.25 m, turn 30 degrees),
driven by the navigator's velocity commands.

Each command is quantised into one action: a command that turns in place or backs off (a
recovery; there is no backward action) becomes a turn in the commanded direction; a command
that drives forward becomes a forward move of the distance the command would cover in one
step's time (at most ``forward_step_m``) unless a turn serves better. Turning whenever the
heading error exceeds half a turn step would chatter: a path between two of the base's 30-degree
headings was followed as turn, step, turn back, step (half of all actions were turns). So the
base keeps driving with up to half a turn step plus ``turn_hysteresis_rad`` of error, as long as
it stays within ``drift_tolerance_m`` of the path; beyond that it turns at half a turn step.
The base's clock advances by the time the action would take at the follower's top speeds, so
the follower's stuck detection works in simulated seconds.
Metres, radians, seconds; poses in ``map``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from sg_search.geometry import Pose2D
from sg_search.planning.follower import Command, FollowerParams, FollowStatus


class DiscreteActuator(Protocol):
    """What moves: a simulator (or a robot) that takes discrete relative moves."""

    def pose(self) -> Pose2D:
        """The base's pose in ``map``."""
        ...

    def act(self, forward_m: float, turn_rad: float) -> bool:
        """One action (then one sensor frame); False if the move was blocked."""
        ...


@dataclass(frozen=True)
class DiscreteParams:
    """Habitat's action sizes."""

    forward_step_m: float = 0.25
    turn_step_rad: float = math.radians(30.0)
    turn_hysteresis_rad: float = math.radians(15.0)
    drift_tolerance_m: float = 0.1


class DiscreteBase:
    """A navigator :class:`~sg_search.planning.navigator.Base` over a :class:`DiscreteActuator`."""

    def __init__(
        self, actuator: DiscreteActuator, follower: FollowerParams, params: DiscreteParams | None = None
    ) -> None:
        self.actuator = actuator
        self.params = params or DiscreteParams()
        self.follower = follower
        self.clock = 0.0

    def pose(self) -> Pose2D | None:
        """The actuator's pose."""
        return self.actuator.pose()

    def now(self) -> float:
        """Simulated seconds since this base was made."""
        return self.clock

    def command(self, command: Command) -> bool:
        """One action for ``command`` (module docstring); False if it was blocked."""
        p, f = self.params, self.follower
        turn_s = p.turn_step_rad / f.max_angular
        if command.linear <= 1e-3:
            if abs(command.angular) <= 1e-3 and command.linear >= -1e-3:
                if command.status != FollowStatus.STOP:  # a stop takes no time: nothing moves
                    self.clock += turn_s  # nothing to do this period (waiting): time passes
                return True
            self.clock += turn_s
            return self.actuator.act(0.0, math.copysign(p.turn_step_rad, command.angular or 1.0))
        error, tolerance = abs(command.heading_error), p.turn_step_rad / 2
        if error > tolerance + p.turn_hysteresis_rad or (
            error > tolerance and command.cross_track_m > p.drift_tolerance_m
        ):
            self.clock += turn_s
            return self.actuator.act(0.0, math.copysign(p.turn_step_rad, command.heading_error))
        step_s = p.forward_step_m / f.max_linear
        forward = min(p.forward_step_m, command.linear * step_s)
        self.clock += step_s
        return self.actuator.act(forward, 0.0)
