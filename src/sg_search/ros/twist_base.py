"""A mobile base over ROS for the core's navigator: pose from TF (``map_frame`` <- ``base_frame``),
velocity commands on a Twist publisher, one command per control period (wall clock)."""

from __future__ import annotations

import time

from geometry_msgs.msg import Twist
from rclpy.publisher import Publisher

from sg_search.geometry import Pose2D
from sg_search.planning.follower import Command
from sg_search.ros.tf import TransformSource, base_pose


class TwistBase:
    """A :class:`~sg_search.planning.navigator.Base` (see the module docstring)."""

    def __init__(
        self, tf: TransformSource, cmd_vel: Publisher, map_frame: str, base_frame: str, period_s: float
    ) -> None:
        self.tf, self.cmd_vel = tf, cmd_vel
        self.map_frame, self.base_frame, self.period_s = map_frame, base_frame, period_s

    def pose(self) -> Pose2D | None:
        """The base in the map, or None while TF does not know it."""
        return base_pose(self.tf, self.map_frame, self.base_frame)

    def command(self, command: Command) -> bool:
        """Publish the command, then wait one control period."""
        twist = Twist()
        twist.linear.x, twist.angular.z = command.linear, command.angular
        self.cmd_vel.publish(twist)
        time.sleep(self.period_s)
        return True

    def now(self) -> float:
        """Wall-clock seconds."""
        return time.monotonic()
