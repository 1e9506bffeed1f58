"""The stack on a robot (Toyota HSR topic names and frames by default): perception (YOLO on
the head RGB-D camera), scene graph server, frontier planner (head depth camera, omni base),
affordance executor (the HSR driver's open_container/look_at; run hsr.launch.py beside it), reasoner.

ros2 launch sg_search robot.launch.py yolo_model_path:=/path/yolo.pt [sam_checkpoint:=/path/sam.pth]
    [prior_scene_file:=/path/apartment.yaml]
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
    hsr_params = os.path.join(share, "config", "hsr.yaml")  # the HSR's values over the defaults
    namespace = LaunchConfiguration("namespace")
    params = LaunchConfiguration("params_file")
    prior = LaunchConfiguration("prior_scene_file")
    return LaunchDescription(
        [
            DeclareLaunchArgument("namespace", default_value="", description="namespace of all nodes"),
            DeclareLaunchArgument("params_file", default_value=default_params, description="ROS params YAML"),
            DeclareLaunchArgument("prior_scene_file", default_value="", description="known rooms/furniture"),
            DeclareLaunchArgument("yolo_model_path", default_value="", description="YOLO weights (.pt)"),
            DeclareLaunchArgument("sam_checkpoint", default_value="", description="optional SAM weights"),
            Node(
                package="sg_search",
                executable="perception",
                name="perception",
                namespace=namespace,
                parameters=[
                    params,
                    hsr_params,
                    {
                        "yolo_model_path": LaunchConfiguration("yolo_model_path"),
                        "sam_checkpoint": LaunchConfiguration("sam_checkpoint"),
                    },
                ],
                remappings=[
                    ("rgb", "/head_rgbd_sensor/rgb/image_rect_color"),
                    ("depth", "/head_rgbd_sensor/depth_registered/image_rect_raw"),
                    ("camera_info", "/head_rgbd_sensor/rgb/camera_info"),
                    ("observations", "perception/observations"),
                ],
                output="screen",
            ),
            Node(
                package="sg_search",
                executable="scene_graph_server",
                name="scene_graph_server",
                namespace=namespace,
                parameters=[params, hsr_params, {"prior_scene_file": prior}],
                remappings=[("observations", "perception/observations")],
                output="screen",
            ),
            Node(
                package="sg_search",
                executable="frontier_planner",
                name="frontier_planner",
                namespace=namespace,
                parameters=[params, hsr_params],
                remappings=[
                    ("depth", "/head_rgbd_sensor/depth_registered/image_rect_raw"),
                    ("camera_info", "/head_rgbd_sensor/depth_registered/camera_info"),
                    ("cmd_vel", "/omni_base_controller/cmd_vel"),
                ],
                output="screen",
            ),
            Node(
                package="sg_search",
                executable="affordance_executor",
                name="affordance_executor",
                namespace=namespace,
                parameters=[params, hsr_params],
                remappings=[("cmd_vel", "/omni_base_controller/cmd_vel")],
                output="screen",
            ),
            Node(
                package="sg_search",
                executable="reasoner",
                name="reasoner",
                namespace=namespace,
                parameters=[params, hsr_params],
                remappings=[
                    ("rgb", "/head_rgbd_sensor/rgb/image_rect_color"),  # recent frames for VLM reasoners
                    ("observations", "perception/observations"),
                ],
                output="screen",
            ),
        ]
    )
