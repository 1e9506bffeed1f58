"""A mobile base over ROS for the core's navigator: pose from TF (``map_frame`` <- ``base_frame``),
velocity commands on a Twist publisher, one command per control period (wall clock). Given a
:class:`~sg_search.planning.stall.StallDetector`, a base that is told to drive forward and does
not move reports itself blocked (``on_blocked`` with its pose; the command returns False).
:meth:`TwistBase.now` and the stall window run on ``clock``, the clock the base moves in: the
node's (simulated time under ``use_sim_time``), so a simulator that falls behind the wall clock
on a loaded machine is not taken for a blocked base, nor a turn on the spot that takes longer
in wall time for a drive without progress (the follower's window and the navigator's timeout
read :meth:`TwistBase.now`). :meth:`TwistBase.halt` stops the base at once from another thread
(a goal's cancel), whatever the control loop is doing."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from geometry_msgs.msg import Twist
from rclpy.publisher import Publisher

from sg_search.geometry import Pose2D
from sg_search.planning.follower import Command
from sg_search.planning.stall import StallDetector
from sg_search.ros.tf import TransformSource, base_pose


class TwistBase:
    """A :class:`~sg_search.planning.navigator.Base` (see the module docstring)."""

    def __init__(
        self,
        tf: TransformSource,
        cmd_vel: Publisher,
        map_frame: str,
        base_frame: str,
        period_s: float,
        stall: StallDetector | None = None,
        on_blocked: Callable[[Pose2D], None] = lambda pose: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.tf, self.cmd_vel = tf, cmd_vel
        self.map_frame, self.base_frame, self.period_s = map_frame, base_frame, period_s
        self.stall, self.on_blocked, self.clock = stall, on_blocked, clock
        self._lock = threading.Lock()
        self._halted = False

    def pose(self) -> Pose2D | None:
        """The base in the map, or None while TF does not know it."""
        return base_pose(self.tf, self.map_frame, self.base_frame)

    def halt(self) -> None:
        """Stop now, from any thread (a goal's cancel while the control loop plans, which took
        up to 0.9 s on a loaded machine): a zero command goes out at once, and every command
        after it goes out as zero until :meth:`resume`."""
        with self._lock:
            self._halted = True
            self.cmd_vel.publish(Twist())

    def resume(self) -> None:
        """Commands go out as given again (a new goal)."""
        with self._lock:
            self._halted = False

    def command(self, command: Command) -> bool:
        """Publish the command (zero while halted), then wait one control period; False when
        the base is blocked."""
        twist = Twist()
        with self._lock:  # a halt is never followed by a command that moves
            if not self._halted:
                twist.linear.x, twist.angular.z = command.linear, command.angular
            self.cmd_vel.publish(twist)
        time.sleep(self.period_s)
        if self.stall is None:
            return True
        pose = self.pose()  # judged on what was sent: a halted base stands still on purpose
        if pose is None or not self.stall.update(self.clock(), pose, twist.linear.x):
            return True
        self.on_blocked(pose)
        return False

    def now(self) -> float:
        """Seconds on ``clock`` (module docstring)."""
        return self.clock()
