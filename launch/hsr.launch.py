"""The HSR driver on a Toyota HSR's ROS 2 interfaces (or on the fake_hsr test double).

    ros2 launch sg_search hsr.launch.py [namespace:=...] [params_file:=...] [fake:=false] [use_sim_time:=...]

The driver's relative topics are remapped onto the HSR's: base cmd_vel and wheel odometry of
the omni base, the head/arm/gripper trajectory controllers, /joint_states. The planner's
`cmd_vel` goes through the driver (velocity limits, dead-man, emergency stop on
`emergency_stop`). With fake:=true the fake_hsr test double stands in for the robot, and the
driver runs on its simulated clock (use_sim_time, which defaults to fake; set it true for a
simulated HSR that publishes /clock, e.g. in Gazebo).
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory("sg_search")
    default_params = os.path.join(share, "config", "sg_search.yaml")
    namespace = LaunchConfiguration("namespace")
    params = LaunchConfiguration("params_file")
    return LaunchDescription(
        [
            DeclareLaunchArgument("namespace", default_value="", description="namespace of the driver"),
            DeclareLaunchArgument("params_file", default_value=default_params, description="ROS params YAML"),
            DeclareLaunchArgument(
                "fake", default_value="false", description="start the fake_hsr test double"
            ),
            DeclareLaunchArgument(
                "use_sim_time",
                default_value=LaunchConfiguration("fake"),
                description="the driver's timeouts on /clock (a simulated HSR's; default: fake)",
            ),
            Node(
                package="sg_search",
                executable="hsr_driver",
                name="hsr_driver",
                namespace=namespace,
                parameters=[params, {"use_sim_time": LaunchConfiguration("use_sim_time")}],
                remappings=[
                    ("base_cmd_vel", "/omni_base_controller/cmd_vel"),
                    ("odom", "/omni_base_controller/wheel_odom"),
                    ("head_trajectory", "/head_trajectory_controller/joint_trajectory"),
                    ("arm_trajectory", "/arm_trajectory_controller/joint_trajectory"),
                    ("gripper_trajectory", "/gripper_controller/joint_trajectory"),
                    ("joint_states", "/joint_states"),
                ],
                output="screen",
            ),
            Node(
                package="sg_search",
                executable="fake_hsr",
                name="fake_hsr",
                condition=IfCondition(LaunchConfiguration("fake")),
                output="screen",
            ),
        ]
    )
