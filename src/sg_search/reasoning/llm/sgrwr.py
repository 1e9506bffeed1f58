"""SG-RwR (METHODS.md section 3): a Reasoner and a Retriever agent that share only queries and
retrieved data.

- Both agents get the scene-graph schema (:func:`schema_text`, the one the scene-graph server
  publishes), never the graph. The Reasoner's reply is a ``[Query]`` for the Retriever, a
  ``[Tool]`` call (``distance <id>``: geodesic metres from the robot; ``path <room> <room>``:
  rooms through doors), or ``[Answer] ... TASK TERMINATE`` (templates ``sgrwr_*``).
- The Retriever writes Python for each query; it runs in the scene-graph sandbox
  (:func:`run_graph_code`, or the server's ``scene_graph/run_code`` service through the
  ``run_code`` argument). On an error the code and the error go back to the Retriever, at
  most ``max_debug`` times (self-debugging). What the code printed is the retrieved data.
- A Reasoner reply that assumes ("assume", "assuming", "assumption") is re-prompted to query
  instead; a reply in no allowed form, or an answer that fails the task's check (a search
  answer must be a listed candidate id), is re-prompted with the problem. After
  ``max_turns`` Reasoner turns without a valid answer the agent gives up (:class:`LlmError`,
  so a search falls back).
- Where the server constrains text (``llm_text_regex``), the Reasoner's replies are held to
  those forms (:func:`reasoner_form`; a search's answer to the listed candidate ids) and the
  Retriever's to one python block.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from sg_search.config import from_params
from sg_search.llm import ChatClient, LlmError, render
from sg_search.llm.client import Message
from sg_search.reasoning.base import Candidate, Decision, ReasonerInput
from sg_search.reasoning.llm import forms
from sg_search.reasoning.llm.base import LlmReasoner, LlmReasonerParams, ranked_with_choice
from sg_search.reasoning.llm.text import as_quoted, candidate_lines, label, robot_room
from sg_search.reasoning.registry import takes_params
from sg_search.scene_graph import EdgeKind, SceneGraph
from sg_search.scene_graph.sandbox import SandboxLimits, SandboxResult, run_graph_code
from sg_search.scene_graph.schema import schema_text

CodeRunner = Callable[[str, SceneGraph], SandboxResult]
AnswerCheck = Callable[[str], str | None]
_ASSUME = re.compile(r"\bassum(e|es|ed|ing|ption)\b", re.I)
_CODE = re.compile(r"```(?:python)?\s*\n(.*?)```", re.S)
_ID = r"[\w\-]{1,40}"
_LINE_WITHOUT_TAGS = r"[^\n\[]{{1,{}}}"  # no "[Answer]" inside a query or a summary
CODE_FORM = r"```python\n[^`]{1,600}```"
"""The Retriever's reply where the server constrains text: one python block."""


def reasoner_form(answers: Sequence[str] = ()) -> str:
    """The Reasoner's reply as a regex: a query, a tool call, or a summary with an answer
    (one of ``answers`` when given, else a line of text)."""
    ids = forms.alternatives(answers) if answers else _ID
    answer = ids if answers else forms.line(200)
    return "|".join(
        (
            r"\[Query\] " + _LINE_WITHOUT_TAGS.format(160),
            r"\[Tool\] distance " + ids,
            rf"\[Tool\] path {_ID} {_ID}",
            r"\[Summary\] " + _LINE_WITHOUT_TAGS.format(120) + r" \[Answer\] " + answer + " TASK TERMINATE",
        )
    )


@dataclass(frozen=True)
class SgRwrParams(LlmReasonerParams):
    """``sgrwr`` section: the local sandbox's time limit [s] (the node uses the graph server's),
    Reasoner/Retriever turns and code-repair rounds at most."""

    sandbox_time_s: float = 5.0
    max_turns: int = 6
    max_debug: int = 2


@dataclass
class AgentResult:
    """The final answer and the conversation between the agents (for explanations)."""

    answer: str
    summary: str
    transcript: list[str] = field(default_factory=list)


def local_runner(limits: SandboxLimits | None = None) -> CodeRunner:
    """Runs Retriever code in a sandbox process on this machine."""
    return lambda code, graph: run_graph_code(code, graph, limits)


class SgRwrAgent:
    """The two agents over one client; see the module docstring."""

    def __init__(
        self, client: ChatClient, run_code: CodeRunner, max_turns: int = 6, max_debug: int = 2
    ) -> None:
        self.client = client
        self.run_code = run_code
        self.max_turns = max_turns
        self.max_debug = max_debug

    def solve(
        self,
        task: str,
        graph: SceneGraph,
        distances: Mapping[str, float] | None = None,
        check: AnswerCheck | None = None,
        answers: Sequence[str] = (),
    ) -> AgentResult:
        """Run the Reasoner on ``task`` until it answers (checked by ``check``; ``answers``
        lists the valid ones where there is a closed set, for the reply's regex)."""
        messages: list[Message] = [
            {"role": "system", "content": render("sgrwr_reasoner", schema=schema_text())},
            {"role": "user", "content": task},
        ]
        transcript: list[str] = []
        form = reasoner_form(answers)
        for _ in range(self.max_turns):
            reply = self.client.complete(messages, regex=form)
            messages.append({"role": "assistant", "content": reply})
            transcript.append(f"Reasoner: {reply.strip()[:300]}")
            feedback = self._respond(reply, graph, distances or {}, check, transcript)
            if isinstance(feedback, AgentResult):
                return feedback
            messages.append({"role": "user", "content": feedback})
        raise LlmError(f"SG-RwR gave no valid answer within {self.max_turns} turns")

    def _respond(
        self,
        reply: str,
        graph: SceneGraph,
        distances: Mapping[str, float],
        check: AnswerCheck | None,
        transcript: list[str],
    ) -> str | AgentResult:
        """The next user message for the Reasoner, or the result when it answered validly."""
        answer = re.search(r"\[Answer\]\s*(.*?)\s*(?:TASK TERMINATE|$)", reply, re.S)
        if _ASSUME.search(reply.split("[Answer]")[0]):
            return render("sgrwr_no_assume")
        if answer is not None:
            text = answer.group(1).strip().strip("`\"'").strip()
            problem = check(text) if check is not None else (None if text else "the answer is empty")
            if problem is None:
                summary = re.search(r"\[Summary\]\s*(.*?)\s*\[Answer\]", reply, re.S)
                return AgentResult(text, summary.group(1).strip() if summary else "", transcript)
            self.client.counters.repairs += 1
            return render("sgrwr_format", problem=problem)
        query = re.search(r"\[Query\]\s*(.+)", reply, re.S)
        if query is not None:
            data = self.retrieve(query.group(1).strip(), graph, transcript)
            return f"[Retrieved] {as_quoted(data)}"
        tool = re.search(r"\[Tool\]\s*(distance|path)\s+(.+)", reply)
        if tool is not None:
            return f"[Tool result] {as_quoted(_tool(tool.group(1), tool.group(2).split(), graph, distances))}"
        self.client.counters.parse_failures += 1
        self.client.counters.repairs += 1
        return render("sgrwr_format", problem="it has no [Query], [Tool] or [Answer]")

    def retrieve(self, query: str, graph: SceneGraph, transcript: list[str] | None = None) -> str:
        """The Retriever: code for ``query``, run, debugged up to ``max_debug`` times."""
        messages: list[Message] = [
            {"role": "system", "content": render("sgrwr_retriever", schema=schema_text())},
            {"role": "user", "content": query},
        ]
        problem = ""
        for _ in range(1 + self.max_debug):
            reply = self.client.complete(messages, regex=CODE_FORM)
            messages.append({"role": "assistant", "content": reply})
            found = _CODE.search(reply)
            if found is None:
                self.client.counters.parse_failures += 1
                problem = "no ```python block in the reply"
                messages.append({"role": "user", "content": render("sgrwr_debug", error=problem)})
                continue
            result = self.run_code(found.group(1), graph)
            if transcript is not None:
                transcript.append(f"Retriever ran code: {'ok' if result.ok else result.error[:120]}")
            if result.ok:
                return result.stdout.strip()[:2000] or "(the code printed nothing)"
            problem = result.error
            messages.append({"role": "user", "content": render("sgrwr_debug", error=problem[:500])})
        return f"nothing retrieved: {problem[:300]}"


def _tool(name: str, args: list[str], graph: SceneGraph, distances: Mapping[str, float]) -> str:
    """The Reasoner's tools: geodesic distance from the robot, and room paths through doors."""
    args = [a.strip(",.;`'\"") for a in args]
    if name == "distance":
        if not args or args[0] not in distances:
            return f"no distance known for {args[0] if args else '(no id)'}"
        return f"{args[0]} is {distances[args[0]]:.1f} m away"
    if len(args) < 2:
        return "path needs two room ids"
    doors = nx.Graph((e.source, e.target) for e in graph.edges(EdgeKind.ADJACENCY))
    try:
        rooms = nx.shortest_path(doors, args[0], args[1])
    except (nx.NetworkXNoPath, nx.NodeNotFound):
        return f"no known path from {args[0]} to {args[1]}"
    return " -> ".join(f"{r} ({label(graph.node(r))})" for r in rooms)


class SgRwrReasoner(LlmReasoner):
    """SG-RwR as a search reasoner: the answer is the candidate to act on next."""

    def __init__(self, params: Mapping[str, Any]) -> None:
        """``params["run_code"]`` may name the :data:`CodeRunner` to use (the reasoner node
        passes the scene-graph server's ``scene_graph/run_code``); else a local sandbox."""
        super().__init__("sgrwr", params)
        p = from_params(SgRwrParams, params, source="sgrwr")
        self.agent = SgRwrAgent(
            self.client,
            params.get("run_code") or local_runner(SandboxLimits(time_s=p.sandbox_time_s)),
            p.max_turns,
            p.max_debug,
        )

    def _decide(self, observation: ReasonerInput, candidates: list[Candidate]) -> Decision:
        graph = observation.graph
        listed = candidates[: self.max_listed]
        ids = {c.node_id for c in listed}
        room = robot_room(graph, observation.robot_position)
        task = render(
            "sgrwr_search_task",
            goal=self.query,
            room=f"{label(room)} ({room.id})" if room is not None else "unknown room",
            candidates=candidate_lines(graph, listed),
        )

        def check(answer: str) -> str | None:
            first = re.split(r"[\s,;]+", answer)[0] if answer else ""
            return None if first in ids else f"{first!r} is not one of the listed node ids"

        result = self.agent.solve(task, graph, observation.distances, check, [c.node_id for c in listed])
        choice = re.split(r"[\s,;]+", result.answer)[0]
        return ranked_with_choice(candidates, [choice], {choice: result.summary[:200] or f"chose {choice}"})


def ask(
    question: str, graph: SceneGraph, client: ChatClient, run_code: CodeRunner | None = None
) -> AgentResult:
    """Answer a question about ``graph`` (``sg-search graph ask``)."""
    agent = SgRwrAgent(client, run_code or local_runner())
    return agent.solve(render("sgrwr_question_task", question=question), graph)


@takes_params(SgRwrParams)
def create_sgrwr(params: Mapping[str, Any]) -> SgRwrReasoner:
    return SgRwrReasoner(params)
