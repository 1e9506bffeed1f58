"""The stack against the embedded scene: scene graph server, reasoner, and the scene's source.

Today the embedded simulator is not part of the stack yet; the scene's perception is
replayed from a recording of the demo apartment (config/demo/apartment.yaml).

    ros2 launch sg_search sim.launch.py [namespace:=robot1] [params_file:=...]
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
    scene = os.path.join(share, "config", "demo", "apartment.yaml")
    namespace = LaunchConfiguration("namespace")
    params = LaunchConfiguration("params_file")
    return LaunchDescription(
        [
            DeclareLaunchArgument("namespace", default_value="", description="namespace of all nodes"),
            DeclareLaunchArgument("params_file", default_value=default_params, description="ROS params YAML"),
            Node(
                package="sg_search",
                executable="scene_graph_server",
                name="scene_graph_server",
                namespace=namespace,
                parameters=[params, {"prior_scene_file": scene}],
                output="screen",
            ),
            Node(
                package="sg_search",
                executable="observation_replay",
                name="observation_replay",
                namespace=namespace,
                parameters=[params, {"replay_file": scene}],
                output="screen",
            ),
            Node(
                package="sg_search",
                executable="reasoner",
                name="reasoner",
                namespace=namespace,
                parameters=[params],
                output="screen",
            ),
        ]
    )
