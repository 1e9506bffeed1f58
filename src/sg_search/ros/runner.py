"""Start nodes: one per process (console scripts) or several composed in one process."""

from __future__ import annotations

import faulthandler
import signal
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from sg_search.ros_env import ensure_ros_env, use_localhost_profile

ensure_ros_env()
use_localhost_profile()  # loopback-only DDS unless SG_SEARCH_MULTI_MACHINE=1

import rclpy  # noqa: E402
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402

NodeFactory = Callable[[], Node]
# Actions (search, navigate) hold a thread for their whole run; sensor, TF and timer
# callbacks need threads of their own beside them, whatever the number of cores.
EXECUTOR_THREADS = 8


def spin_nodes(factories: Sequence[NodeFactory], args: Sequence[str] | None = None) -> int:
    """Create the nodes, spin them on one MultiThreadedExecutor until shutdown; exit code.
    ``kill -USR1 <pid>`` prints every thread's Python stack to stderr (also while a thread
    holds the interpreter in a call into the middleware): what a node that does not react is
    doing."""
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    rclpy.init(args=list(args) if args is not None else sys.argv)
    nodes: list[Node] = []
    executor = MultiThreadedExecutor(num_threads=EXECUTOR_THREADS)
    try:
        for factory in factories:
            node = factory()
            nodes.append(node)
            executor.add_node(node)
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        try:
            shut_down(executor)
        finally:  # what a node writes on destruction (a recording's footer) is written whatever happened
            for node in nodes:
                node.destroy_node()
            if rclpy.ok():
                rclpy.shutdown()
    return 0


def shut_down(executor: MultiThreadedExecutor) -> None:
    """Shut ``executor`` down once its spin loop has returned: first let the handlers already
    queued in its thread pool run, then destroy its guard condition. rclpy's own shutdown does
    it the other way round, and each handler still queued then fails on the destroyed guard
    condition ("cannot use Destroyable because destruction was requested"), printed at exit as
    an exception never retrieved (up to 20 lines after a demo run)."""
    pool = getattr(executor, "_executor", None)  # its pool: rclpy has no public way to wait for it
    if isinstance(pool, ThreadPoolExecutor):
        pool.shutdown(wait=True)
    executor.shutdown()


def scene_graph_server_main() -> int:
    """Console script ``scene_graph_server``."""
    from sg_search.ros.scene_graph_server import SceneGraphServer

    return spin_nodes([SceneGraphServer])


def reasoner_main() -> int:
    """Console script ``reasoner``."""
    from sg_search.ros.reasoner_node import ReasonerNode

    return spin_nodes([ReasonerNode])


def observation_replay_main() -> int:
    """Console script ``observation_replay``."""
    from sg_search.ros.observation_replay import ObservationReplay

    return spin_nodes([ObservationReplay])


def sim_bridge_main() -> int:
    """Console script ``sim_bridge``."""
    from sg_search.ros.sim_bridge import SimBridge

    return spin_nodes([SimBridge])


def frontier_planner_main() -> int:
    """Console script ``frontier_planner``."""
    from sg_search.ros.frontier_planner import FrontierPlanner

    return spin_nodes([FrontierPlanner])


def perception_main() -> int:
    """Console script ``perception``."""
    from sg_search.ros.perception_node import Perception

    return spin_nodes([Perception])


def hsr_driver_main() -> int:
    """Console script ``hsr_driver``."""
    from sg_search.ros.hsr_driver import HsrDriver

    return spin_nodes([HsrDriver])


def fake_hsr_main() -> int:
    """Console script ``fake_hsr`` (a test double of the robot)."""
    from sg_search.ros.fake_hsr_bridge import FakeHsr

    return spin_nodes([FakeHsr])


def habitat_bridge_main() -> int:
    """Console script ``habitat_bridge`` (needs habitat-sim)."""
    from sg_search.ros.habitat_bridge import HabitatBridge

    return spin_nodes([HabitatBridge])


def affordance_executor_main() -> int:
    """Console script ``affordance_executor``."""
    from sg_search.ros.affordance_executor import AffordanceExecutorNode

    return spin_nodes([AffordanceExecutorNode])


def recorder_main() -> int:
    """Console script ``recorder`` (MCAP)."""
    from sg_search.ros.recorder import Recorder

    return spin_nodes([Recorder])


def live_view_main() -> int:
    """Console script ``live_view`` (Rerun: run.rrd and, with ``viewer_url``, a live viewer)."""
    from sg_search.ros.live_view import LiveView

    return spin_nodes([LiveView])
