"""fake_hsr: the ROS host of the HSR test double (:mod:`sg_search.sim.hsr.fake_hsr`), for the
driver's tests and ``hsr.launch.py fake:=true``.

It speaks the HSR's ROS 2 names: ``/omni_base_controller/cmd_vel`` (Twist, base frame)
integrated at ``rate_hz`` into ``/omni_base_controller/wheel_odom`` and TF odom ->
base_footprint (map -> odom identity); ``/head_trajectory_controller``,
``/arm_trajectory_controller`` and ``/gripper_controller`` ``/joint_trajectory`` topics set
joint targets; ``/joint_states``; ``/fake_hsr/state`` (std_msgs/String JSON): base pose, held
container, openings. Parameter ``containers``: a JSON list (see the simulator's docstring).

Its time is simulated: each tick advances it 1/``rate_hz`` s from the wall time at start, on
``/clock`` and in every stamp. A driver with ``use_sim_time`` counts its timeouts in it, so a
simulator starved of CPU (a loaded test machine) slows the driver's clock with its own.
"""

from __future__ import annotations

import json

import numpy as np
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.time import Time
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory

from sg_search.geometry import frames
from sg_search.geometry.transforms import Transform, quat_from_yaw
from sg_search.ros.qos import CMD_VEL_QOS
from sg_search.ros.tf import TfBroadcaster, transform_to_msg
from sg_search.sim.hsr.fake_hsr import FakeHsrModel, FakeHsrParams


class FakeHsr(Node):
    """See the module docstring. A test double: nothing here is tuned to a real HSR."""

    def __init__(self, node_name: str = "fake_hsr", **kwargs: object) -> None:
        super().__init__(node_name, **kwargs)  # type: ignore[arg-type]
        self.rate = float(self.declare_parameter("rate_hz", 50.0).value)
        params = FakeHsrParams(
            joint_speed=float(self.declare_parameter("joint_speed", 1.0).value),
            hand_reach_m=float(self.declare_parameter("hand_reach_m", 0.6).value),
            hand_height_at_zero_lift_m=float(
                self.declare_parameter("hand_height_at_zero_lift_m", 0.35).value
            ),
            grasp_tolerance_m=float(self.declare_parameter("grasp_tolerance_m", 0.05).value),
            handle_width=float(self.declare_parameter("handle_width", 0.3).value),
        )
        specs = json.loads(str(self.declare_parameter("containers", "[]").value))
        start = [float(v) for v in self.declare_parameter("start_pose", [0.0, 0.0, 0.0]).value]
        self.robot = FakeHsrModel(params, specs, (start[0], start[1], start[2]))
        self.tf = TfBroadcaster(self)
        self.tf.send_static([transform_to_msg(frames.MAP, frames.ODOM, 0.0, Transform())])
        self._odom = self.create_publisher(Odometry, "/omni_base_controller/wheel_odom", 10)
        self._joints = self.create_publisher(JointState, "/joint_states", 10)
        self._state = self.create_publisher(String, "/fake_hsr/state", 10)
        self._sim_clock = self.create_publisher(Clock, "/clock", 10)
        self._now_ns = self.get_clock().now().nanoseconds  # simulated time [ns]
        self.create_subscription(Twist, "/omni_base_controller/cmd_vel", self._on_twist, CMD_VEL_QOS)
        for controller in ("head_trajectory_controller", "arm_trajectory_controller", "gripper_controller"):
            self.create_subscription(
                JointTrajectory, f"/{controller}/joint_trajectory", self._on_trajectory, 10
            )
        self.create_timer(1.0 / self.rate, self._tick)

    def _on_twist(self, msg: Twist) -> None:
        self.robot.twist = (msg.linear.x, msg.linear.y, msg.angular.z)

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        if msg.points:
            self.robot.targets.update(
                zip(msg.joint_names, (float(p) for p in msg.points[-1].positions), strict=False)
            )

    def _tick(self) -> None:
        self.robot.tick(1.0 / self.rate)
        self._now_ns += round(1e9 / self.rate)
        self._sim_clock.publish(Clock(clock=Time(nanoseconds=self._now_ns).to_msg()))
        self._publish()

    def _publish(self) -> None:
        stamp = Time(nanoseconds=self._now_ns)
        x, y, yaw = self.robot.pose
        odom = Odometry()
        odom.header.stamp, odom.header.frame_id, odom.child_frame_id = (
            stamp.to_msg(),
            "odom",
            "base_footprint",
        )
        odom.pose.pose.position.x, odom.pose.pose.position.y = x, y
        q = quat_from_yaw(yaw)
        o = odom.pose.pose.orientation
        o.x, o.y, o.z, o.w = (float(v) for v in q)
        odom.twist.twist.linear.x, odom.twist.twist.linear.y, odom.twist.twist.angular.z = self.robot.twist
        self._odom.publish(odom)
        self.tf.send(
            [
                transform_to_msg(
                    "odom", "base_footprint", stamp.nanoseconds * 1e-9, Transform(np.array([x, y, 0.0]), q)
                )
            ]
        )
        joints = self.robot.joints
        self._joints.publish(
            JointState(header=odom.header, name=list(joints), position=list(joints.values()))
        )
        self._state.publish(String(data=json.dumps(self.robot.state())))
