"""reasoner: hosts the ``search`` action (SearchObject) and ``select_target`` (SelectTarget).

The node mirrors the scene graph (GraphMirror) and runs the core's :func:`run_search` and
:class:`Verifier` in its ROS world (:mod:`sg_search.ros.ros_world`: TF, the camera, the
planner's distances and the ``execute_affordance`` action); without an executor running the
search is observe-only (see sg_search.search.loop).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Sequence
from typing import Any

from geometry_msgs.msg import PointStamped
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.parameter_client import AsyncParameterClient
from sg_search_interfaces.action import ExecuteAffordance, SearchObject
from sg_search_interfaces.msg import TargetScore
from sg_search_interfaces.srv import RunGraphCode, SelectTarget

from sg_search.perception.categories import query_category
from sg_search.reasoning import ReasonerInput, SkillAffordance, create_reasoner
from sg_search.reasoning.llm.base import stats_line
from sg_search.reasoning.registry import reasoner_params_type, section_key
from sg_search.ros.action_client import ActionClient
from sg_search.ros.conversions import point_to_msg
from sg_search.ros.futures import wait_future
from sg_search.ros.graph_mirror import GraphMirror
from sg_search.ros.liveliness import announce_alive
from sg_search.ros.params import declare_config
from sg_search.ros.ros_world import RosSensing, RosWorld
from sg_search.scene_graph.sandbox import SandboxResult
from sg_search.search import SearchError, SearchStep, Verifier, run_search
from sg_search.search.config import ReasonerNodeConfig


class ReasonerNode(Node):
    """One search at a time; a second goal is rejected while one runs."""

    def __init__(self, node_name: str = "reasoner", **kwargs: object) -> None:
        super().__init__(node_name, **kwargs)  # type: ignore[arg-type]
        self.config = declare_config(self, ReasonerNodeConfig)
        # Fail at start-up on a bad name, and load models now rather than in the first search.
        create_reasoner(
            self.config.default_reasoner, self._params_for(self.config.default_reasoner)
        ).warm_up()
        self._mirror = GraphMirror(self)
        self._busy = threading.Lock()
        self._knowledge: Any = None
        self._pushed: set[str] = set()
        self._vocabulary_client = AsyncParameterClient(self, self.config.vocabulary_node)
        self._target = self.create_publisher(PointStamped, "search/target", 10)
        self._alive = announce_alive(self)  # DDS liveliness: dependants see this node die
        self._sensing = RosSensing(self, self.config, self._mirror)
        self._run_code_client = self.create_client(
            RunGraphCode, "scene_graph/run_code", callback_group=ReentrantCallbackGroup()
        )
        actions = ReentrantCallbackGroup()
        self._executor_client = ActionClient(
            self, ExecuteAffordance, self.config.executor_action, callback_group=actions
        )
        ActionServer(
            self,
            SearchObject,
            "search",
            execute_callback=self._execute_search,
            goal_callback=self._on_goal,
            cancel_callback=lambda _: CancelResponse.ACCEPT,
            callback_group=actions,
        )
        self.create_service(
            SelectTarget, "select_target", self._on_select, callback_group=MutuallyExclusiveCallbackGroup()
        )

    def _on_goal(self, goal: SearchObject.Goal) -> GoalResponse:
        if self._busy.locked():
            self.get_logger().warning(f"rejected search for {goal.query!r}: a search is already running")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _execute_search(self, handle: ServerGoalHandle) -> SearchObject.Result:
        goal: SearchObject.Goal = handle.request
        result = SearchObject.Result()
        if not self._busy.acquire(blocking=False):
            handle.abort()
            result.error_code, result.error_msg = SearchError.UNKNOWN, "another search is running"
            return result
        try:
            return self._search(handle, goal, result)
        finally:
            self._busy.release()

    def _search(
        self, handle: ServerGoalHandle, goal: SearchObject.Goal, result: SearchObject.Result
    ) -> SearchObject.Result:
        name = goal.reasoner or self.config.default_reasoner
        try:
            reasoner = create_reasoner(name, {**self._params_for(name), "run_code": self._run_code})
        except KeyError as exc:
            handle.abort()
            result.error_code, result.error_msg = SearchError.UNKNOWN_REASONER, str(exc.args[0])
            return result
        self._mirror.copy(wait_s=self.config.graph_wait_s)  # sync once; later steps read at once
        # A sensing node restarted just before this goal may not be matched here yet: give it
        # graph_wait_s to come back before the first action would end the search naming it.
        self._sensing.wait_alive(self.config.graph_wait_s)

        def on_step(step: SearchStep) -> None:
            self._publish_target(step.target_node_id)
            self._push_vocabulary(reasoner.vocabulary_updates())
            handle.publish_feedback(
                SearchObject.Feedback(
                    step=step.step,
                    phase=step.phase,
                    target_node_id=step.target_node_id,
                    utility=float(step.utility),
                    explanation=step.explanation,
                    path_length=float(step.path_length),
                    candidates=[
                        TargetScore(
                            node_id=i, affordance=int(SkillAffordance[a.upper()]), utility=float(u), reason=r
                        )
                        for i, a, u, r in step.top
                    ],
                )
            )

        try:
            params = self.config.search_params(goal.max_steps, goal.timeout_s)
        except ValueError as exc:
            handle.abort()
            result.error_code, result.error_msg = SearchError.INVALID_QUERY, f"bad goal: {exc}"
            return result
        deadline = time.monotonic() + params.timeout_s

        def stop() -> bool:  # the search itself judges its budget (TIMEOUT) on its own clock
            return bool(handle.is_cancel_requested or not handle.is_active)

        def stop_acting() -> bool:  # the budget also ends an execution in flight
            return stop() or time.monotonic() > deadline

        world: RosSensing | RosWorld = self._sensing
        verifier = None
        if self._executor_client.wait_for_server(timeout_sec=self.config.executor_wait_s):
            acting = RosWorld(self._sensing, self._executor_client, stop_acting)
            world = acting
            if self.config.verify:
                context = reasoner.verification_context() or self._cooccurrence
                verifier = Verifier(acting, self.config.credibility(), context, reasoner)
        else:
            self.get_logger().info("no affordance executor running: observe-only search")
        outcome = run_search(
            goal.query,
            reasoner,
            world,
            params=params,
            verifier=verifier,
            on_step=on_step,
            should_stop=stop,
        )
        result.success = outcome.success
        result.error_code = int(outcome.error)
        result.error_msg = outcome.message
        result.steps = outcome.steps
        result.path_length = float(outcome.path_length)
        llm = stats_line(reasoner.stats())
        result.explanation = f"{outcome.explanation} [{llm}]" if llm else outcome.explanation
        if outcome.found is not None:
            found = outcome.found
            result.object_id, result.category, result.room_id = found.id, found.category, found.room_id
            result.pose.header.frame_id = self.config.map_frame
            result.pose.header.stamp = self.get_clock().now().to_msg()
            result.pose.pose.position = point_to_msg(found.position)
            result.pose.pose.orientation.w = 1.0
        if outcome.error == SearchError.CANCELED:
            handle.canceled()
        elif outcome.success:
            handle.succeed()
        else:
            handle.abort()
        self.get_logger().info(
            f"search {goal.query!r}: {outcome.error.name} {outcome.message or outcome.explanation}"
        )
        return result

    def _params_for(self, name: str) -> dict[str, Any]:
        """The shared values and reasoner ``name``'s section, whose fields are declared as
        parameters ``<section>.<field>`` when the reasoner is first used (KeyError if unknown)."""
        kind = reasoner_params_type(name)
        section = dataclasses.asdict(declare_config(self, kind, section_key(name))) if kind else {}
        return self.config.reasoner_params(section)

    def _run_code(self, code: str, graph: object) -> SandboxResult:
        """SG-RwR's Retriever code, run by the scene-graph server's sandbox on its live graph
        (``graph``, the reasoner's copy, is not sent)."""
        if not self._run_code_client.wait_for_service(timeout_sec=self.config.graph_wait_s):
            return SandboxResult(False, "", "scene_graph/run_code is not available")
        limit = self.config.run_code_timeout_s
        response = wait_future(self._run_code_client.call_async(RunGraphCode.Request(code=code)), limit)
        if response is None:
            return SandboxResult(False, "", f"scene_graph/run_code did not answer within {limit:.0f} s", True)
        return SandboxResult(response.success, response.stdout, response.error, response.timed_out)

    def _push_vocabulary(self, names: Sequence[str]) -> None:
        """Add a reasoner's new category names to perception's ``vocabulary`` parameter (MSGNav's
        adaptive vocabulary). An empty vocabulary already means every category: left as is."""
        new = [n for n in names if n not in self._pushed]
        if not new:
            return
        self._pushed.update(new)
        client = self._vocabulary_client

        def with_current(future: Any) -> None:
            values = future.result().values if future.result() is not None else []
            current = list(values[0].string_array_value) if values else []
            if current:
                merged = current + [n for n in new if n not in current]
                client.set_parameters([Parameter("vocabulary", value=merged)])
                self.get_logger().info(f"perception vocabulary += {new}")

        if client.services_are_ready():
            client.get_parameters(["vocabulary"]).add_done_callback(with_current)

    def _publish_target(self, node_id: str) -> None:
        """The current target's position on ``search/target`` (rviz)."""
        graph = self._mirror.copy() if node_id else None
        node = graph.get(node_id) if graph is not None else None
        if node is not None:
            msg = PointStamped(point=point_to_msg(node.position))
            msg.header.frame_id, msg.header.stamp = self.config.map_frame, self.get_clock().now().to_msg()
            self._target.publish(msg)

    def _cooccurrence(self, labels: Sequence[str], goal: str) -> list[float]:
        if self._knowledge is None:
            from sg_search.reasoning.knowledge.model import KnowledgeModel

            self._knowledge = KnowledgeModel.load_default()
        scores: list[float] = self._knowledge.cooccurrence_with(labels, goal)
        return scores

    def _on_select(
        self, request: SelectTarget.Request, response: SelectTarget.Response
    ) -> SelectTarget.Response:
        try:
            query_category(request.query)  # what a search would refuse, refused here too
            name = request.reasoner or self.config.default_reasoner
            reasoner = create_reasoner(name, self._params_for(name))
        except ValueError as exc:
            response.success, response.message = False, f"query {request.query[:40]!r}: {exc}"
            return response
        except KeyError as exc:
            response.success, response.message = False, str(exc.args[0])
            return response
        graph = self._mirror.copy()
        if graph is None:
            response.success, response.message = False, "no scene graph received yet"
            return response
        decision = reasoner.decide(ReasonerInput(graph, request.query))
        ranked = decision.ranked[: request.max_results] if request.max_results else decision.ranked
        response.ranked = [
            TargetScore(
                node_id=c.node_id,
                affordance=int(c.affordance),
                utility=float(c.utility),
                distance=float(c.distance),
                reason=c.reason,
            )
            for c in ranked
        ]
        response.explanation = decision.explanation
        response.success = True
        return response
