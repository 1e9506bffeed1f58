"""The embedded MuJoCo simulator, perception, the scene graph and the frontier planner on
simulated time.

    ros2 launch sg_search mujoco.launch.py [scene:=Rs_int] [namespace:=...] [params_file:=...]

sim_bridge renders the house and publishes rgb/depth/instances/camera_info/odom/TF and
/clock; perception (ground-truth detector) fuses instances into `observations` for the
scene graph server; the frontier planner maps from the depth and serves `navigate`.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory("sg_search")
    default_params = os.path.join(share, "config", "sg_search.yaml")
    namespace = LaunchConfiguration("namespace")
    params = LaunchConfiguration("params_file")
    sim_time = {"use_sim_time": True}
    return LaunchDescription(
        [
            DeclareLaunchArgument("namespace", default_value="", description="namespace of all nodes"),
            DeclareLaunchArgument("params_file", default_value=default_params, description="ROS params YAML"),
            DeclareLaunchArgument("scene", default_value="Rs_int", description="bddl scene"),
            Node(
                package="sg_search",
                executable="sim_bridge",
                name="sim_bridge",
                namespace=namespace,
                parameters=[params, {"scene": LaunchConfiguration("scene")}],
                output="screen",
            ),
            Node(
                package="sg_search",
                executable="perception",
                name="perception",
                namespace=namespace,
                parameters=[params, sim_time],
                output="screen",
            ),
            Node(
                package="sg_search",
                executable="scene_graph_server",
                name="scene_graph_server",
                namespace=namespace,
                parameters=[params, sim_time],
                output="screen",
            ),
            Node(
                package="sg_search",
                executable="frontier_planner",
                name="frontier_planner",
                namespace=namespace,
                parameters=[params, sim_time],
                output="screen",
            ),
        ]
    )
