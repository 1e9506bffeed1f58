"""The whole stack against the embedded MuJoCo simulator, on simulated time.

    ros2 launch sg_search sim.launch.py [scene:=Rs_int] [rviz:=true] [viewer:=true] [namespace:=...]
        [params_file:=...] [target_query:=plate target_relation:=inside target_holder:=<furniture id>]

sim_bridge renders the house and publishes rgb/depth/instances/camera_info/odom/TF and /clock;
perception (ground-truth detector) fuses instances for the scene graph server, which also
segments rooms from the planner's map; the frontier planner maps and serves `navigate`; the
affordance executor opens containers through the bridge's services; the reasoner hosts
`search`. With viewer:=true, live_view streams the search to a Rerun viewer (start one first:
`rerun --bind 127.0.0.1 --port 9876`) and writes run.rrd. Then: `sg-search search plate`.
`sg-search demo` starts the same node set in one process (no ros2 launch needed) and writes a
report.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def _frontier_planner(
    context: LaunchContext, namespace: LaunchConfiguration, params: LaunchConfiguration, sim_time: dict
) -> list[Node]:
    """The planner on the grid of the house the bridge lays out (its rooms and a margin, as
    `sg-search demo` and the in-process robot map it), not the shipped 40 m around the origin."""
    from sg_search.config import from_params, load_node_params
    from sg_search.sim.layout import planner_grid_params
    from sg_search.sim.mujoco.config import SimBridgeConfig

    path = params.perform(context)
    seed = from_params(SimBridgeConfig, load_node_params(path, "sim_bridge")).layout_seed
    grid = planner_grid_params(LaunchConfiguration("scene").perform(context), seed, path)
    return [
        Node(
            package="sg_search",
            executable="frontier_planner",
            name="frontier_planner",
            namespace=namespace,
            parameters=[params, sim_time, grid],
            output="screen",
        )
    ]


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory("sg_search")
    default_params = os.path.join(share, "config", "sg_search.yaml")
    rviz_config = os.path.join(share, "config", "sg_search.rviz")
    namespace = LaunchConfiguration("namespace")
    params = LaunchConfiguration("params_file")
    sim_time = {"use_sim_time": True}
    target = {
        "scene": LaunchConfiguration("scene"),
        "target_query": LaunchConfiguration("target_query"),
        "target_relation": LaunchConfiguration("target_relation"),
        "target_holder": LaunchConfiguration("target_holder"),
    }
    return LaunchDescription(
        [
            DeclareLaunchArgument("namespace", default_value="", description="namespace of all nodes"),
            DeclareLaunchArgument("params_file", default_value=default_params, description="ROS params YAML"),
            DeclareLaunchArgument("scene", default_value="Rs_int", description="bddl scene"),
            DeclareLaunchArgument("target_query", default_value="", description="object to place"),
            DeclareLaunchArgument("target_relation", default_value="", description="inside | ontop | inroom"),
            DeclareLaunchArgument("target_holder", default_value="", description="furniture or room id"),
            DeclareLaunchArgument(
                "rviz", default_value="false", description="start rviz2 with sg_search.rviz"
            ),
            Node(
                package="sg_search",
                executable="sim_bridge",
                name="sim_bridge",
                namespace=namespace,
                parameters=[params, target],
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
            OpaqueFunction(function=_frontier_planner, args=[namespace, params, sim_time]),
            Node(
                package="sg_search",
                executable="affordance_executor",
                name="affordance_executor",
                namespace=namespace,
                parameters=[params, sim_time],
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
            DeclareLaunchArgument(
                "viewer", default_value="false", description="stream to a Rerun viewer on 127.0.0.1:9876"
            ),
            Node(
                package="sg_search",
                executable="live_view",
                name="live_view",
                namespace=namespace,
                parameters=[params, sim_time, {"viewer_url": "rerun+http://127.0.0.1:9876/proxy"}],
                output="screen",
                condition=IfCondition(LaunchConfiguration("viewer")),
            ),
            Node(
                package="rviz2",
                executable="rviz2",
                name="rviz2",
                arguments=["-d", rviz_config],
                parameters=[sim_time],
                condition=IfCondition(LaunchConfiguration("rviz")),
            ),
        ]
    )
