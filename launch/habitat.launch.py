"""The stack against a Habitat bridge running elsewhere (another process, container or
machine on the same DDS domain): perception on the bridge's ground-truth instances, the
scene graph server and the frontier planner on simulated time, and the reasoner.

    ros2 launch sg_search habitat.launch.py [namespace:=...] [params_file:=...]

Start the bridge itself from the Habitat environment:
``habitat_bridge --ros-args --params-file config/sg_search.yaml -p episodes_file:=...``.
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
            Node(
                package="sg_search",
                executable="affordance_executor",
                name="affordance_executor",
                namespace=namespace,
                parameters=[params, sim_time, {"manipulation": "none"}],
                output="screen",
            ),
            Node(
                package="sg_search",
                executable="reasoner",
                name="reasoner",
                namespace=namespace,
                parameters=[params, sim_time],
                output="screen",
            ),
        ]
    )
