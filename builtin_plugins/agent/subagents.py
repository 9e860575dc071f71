"""Subagents: the children one agent runs for ``delegate_task``, concurrently and, from the
interactive chat, in the background.

Each task is a child :class:`~.loop.Agent` with its own session (``parent_session_id`` links
it), tools (the parent's minus :data:`BLOCKED`), iteration budget, optional cheaper model
(``delegation.model``/``provider``/``base_url``/``api_key``) and time limit
(``delegation.child_timeout_seconds``). At most ``delegation.max_concurrent_children`` run at
once; the others wait for a free slot. A foreground batch stops with the parent's turn
(Ctrl-C); a background batch stops with ``/stop`` or when the chat ends.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hermes_agent.api import MODELS, CancelToken
from hermes_agent.api.tools import untrusted_result

from .provenance import TAINTED_WRITE

if TYPE_CHECKING:
    from .loop import Agent

# Tools a subagent never gets: no recursion, no human in the loop, no shared memory writes,
# nothing that outlives it.
BLOCKED = frozenset({"delegate_task", "clarify", "memory", "send_message", "execute_code",
                     "cronjob"})
CHILD_PROMPT = """You are a focused subagent. Complete this task with your tools, then reply
with a concise summary: what you did, what you found, files you changed and any problems.

TASK:
{goal}
{context}"""
BACKGROUND_NOTE = "[Background delegation finished; its results follow as JSON:]"


@dataclass
class Task:
    goal: str
    context: str = ""
    toolsets: list[str] | None = None


@dataclass
class Child:
    """One running or finished subagent, as ``/agents`` shows it."""

    goal: str
    agent: "Agent"
    background: bool
    token: CancelToken
    started: float = field(default_factory=time.monotonic)
    status: str = "running"  # then completed, failed, interrupted, timeout
    api_calls: int = 0

    @property
    def session_id(self) -> str:
        return self.agent.session_id

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started


class Subagents:
    """The subagents of one (top-level or orchestrating) agent."""

    def __init__(self, parent: "Agent"):
        self.parent = parent
        self._lock = threading.Lock()
        self.children: list[Child] = []  # every child of this agent, the latest last
        self._background: list[threading.Thread] = []

    def setting(self, key: str, default: Any) -> Any:
        value = self.parent.kernel.config.get(f"delegation.{key}")
        return default if value in (None, "") else value

    # --- what runs ----------------------------------------------------------------------
    def running(self) -> list[Child]:
        with self._lock:
            return [c for c in self.children if c.status == "running"]

    def stop(self, *, background_only: bool = True) -> int:
        """Interrupt the running children (by default the background ones); their count."""
        stopped = [c for c in self.running() if c.background or not background_only]
        for child in stopped:
            child.token.set()
        return len(stopped)

    def wait(self, timeout: float | None = None) -> None:
        """Wait for the background batches to finish (tests, and a chat that ends)."""
        for thread in list(self._background):
            thread.join(timeout)

    def add(self, child: Child, work: Any) -> int:
        """Track a background run started elsewhere (``/background``) and start ``work`` on
        its own thread; the child's number in :attr:`children` (from 1)."""
        thread = threading.Thread(target=work, daemon=True, name="hermes-background")
        with self._lock:
            self.children.append(child)
            number = len(self.children)
        self._background.append(thread)
        thread.start()
        return number

    # --- running a batch ------------------------------------------------------------------
    def run(self, tasks: list[Task], *, turn_id: str | None,
            interrupt: threading.Event | None, background: bool = False) -> str:
        """Run ``tasks``; the JSON result for the model. In the background, it returns at
        once and the results arrive in the parent's inbox as a new message."""
        if background:
            token = CancelToken()  # independent of the turn that started it
            children = [self._child_record(task, token, background=True) for task in tasks]
            thread = threading.Thread(target=self._background_batch,
                                      args=(tasks, children, turn_id), daemon=True,
                                      name="hermes-subagents")
            self._background.append(thread)
            thread.start()
            return json.dumps({"status": "started", "background": True,
                               "session_ids": [c.session_id for c in children],
                               "note": "The subagents run in the background; their results "
                                       "arrive as a new message when all are done. Go on "
                                       "with other work or finish your answer."})
        token = CancelToken()
        unlink = _linked(interrupt, token)  # Ctrl-C on the parent's turn stops them all
        try:
            children = [self._child_record(task, token, background=False) for task in tasks]
            results = self._batch(tasks, children, turn_id)
        finally:
            unlink()
        text = json.dumps(results[0] if len(results) == 1 else _combined(results))
        source = self._tainted(children)
        return untrusted_result(text, source) if source else text

    def _child_record(self, task: Task, token: CancelToken, *, background: bool) -> Child:
        child = Child(task.goal, self._build(task), background, CancelToken())
        token.on_cancel(child.token.set)
        with self._lock:
            self.children.append(child)
        return child

    @staticmethod
    def _tainted(children: list[Child]) -> str | None:
        """Where the batch's summaries came from when a child read untrusted text: they are
        untrusted in the parent too (docs/security.md)."""
        read = [c.agent.taint.source for c in children if c.agent.taint.source is not None]
        return f"{TAINTED_WRITE} (a subagent read {read[0]})" if read else None

    def _background_batch(self, tasks: list[Task], children: list[Child],
                          turn_id: str | None) -> None:
        results = self._batch(tasks, children, turn_id)
        text = json.dumps(results[0] if len(results) == 1 else _combined(results))
        self.parent.inbox.put(f"{BACKGROUND_NOTE}\n{text}", source=self._tainted(children))
        notify = self.parent.extra_tool_kwargs.get("background_notify")
        if callable(notify):
            notify(f"background delegation finished: {_one_line(results)}")

    def _batch(self, tasks: list[Task], children: list[Child],
               turn_id: str | None) -> list[dict[str, Any]]:
        limit = max(1, int(self.setting("max_concurrent_children", 3)))
        if len(tasks) == 1:
            return [self._one(tasks[0], children[0], turn_id)]
        with ThreadPoolExecutor(max_workers=min(limit, len(tasks)),
                                thread_name_prefix="hermes-subagent") as pool:
            futures = [pool.submit(self._one, task, child, turn_id)
                       for task, child in zip(tasks, children)]
            return [future.result() for future in futures]

    def _one(self, task: Task, record: Child, turn_id: str | None) -> dict[str, Any]:
        parent = self.parent
        started = time.perf_counter()
        if record.token.is_set():
            record.status = "interrupted"
            return {"status": "interrupted", "goal": task.goal, "session_id": record.session_id,
                    "summary": "", "api_calls": 0, "duration_ms": 0}
        child = record.agent
        hooks = parent.hooks
        if hooks.has_hook("subagent_start"):
            hooks.fire("subagent_start", parent_session_id=parent.session_id,
                       parent_turn_id=turn_id, parent_subagent_id=None,
                       child_session_id=child.session_id, child_subagent_id=child.session_id,
                       child_role="leaf", child_goal=task.goal)
        timeout = float(self.setting("child_timeout_seconds", 0) or 0)
        timed_out = threading.Event()

        def expire() -> None:
            timed_out.set()
            record.token.set()

        timer = threading.Timer(timeout, expire) if timeout > 0 else None
        if timer is not None:
            timer.daemon = True
            timer.start()
        context = f"\nCONTEXT:\n{task.context}" if task.context else ""
        try:
            # a tainted parent wrote the task: the child starts tainted (docs/security.md)
            result = child.run_conversation(
                CHILD_PROMPT.format(goal=task.goal, context=context), interrupt=record.token,
                source=TAINTED_WRITE if parent.taint.source else None)
        finally:
            if timer is not None:
                timer.cancel()
            child.finalize("session_boundary")
        duration = (time.perf_counter() - started) * 1000
        status = ("timeout" if result.interrupted and timed_out.is_set() else
                  "interrupted" if result.interrupted else
                  "completed" if result.completed else "failed")
        record.status, record.api_calls = status, result.api_calls
        if hooks.has_hook("subagent_stop"):
            hooks.fire("subagent_stop", parent_session_id=parent.session_id,
                       parent_turn_id=turn_id, child_session_id=child.session_id,
                       child_role="leaf", child_summary=result.final_response,
                       child_status=status, duration_ms=duration)
        if parent.memory is not None:
            parent.memory.on_delegation(task.goal, result.final_response or "",
                                        child_session_id=child.session_id)
        payload: dict[str, Any] = {"status": status, "summary": result.final_response,
                                   "session_id": child.session_id, "api_calls": result.api_calls,
                                   "duration_ms": round(duration)}
        if status == "timeout":
            payload["error"] = (f"stopped after delegation.child_timeout_seconds ({timeout:g} s)"
                                "; give it a smaller task or raise the limit")
        elif result.error:
            payload["error"] = result.error
        return payload

    def _build(self, task: Task) -> "Agent":
        from .loop import Agent, AgentOptions

        parent = self.parent
        allowed = frozenset(parent.tool_names) - BLOCKED
        if task.toolsets:
            wanted, _ = parent.kernel.tools.resolve_toolsets(task.toolsets)
            allowed &= frozenset(wanted)
        overrides = {key: self.setting(key, None)
                     for key in ("provider", "model", "base_url", "api_key")}
        client = (parent.kernel.service(MODELS).client(**overrides)
                  if any(overrides.values()) else parent.client.fork())
        options = AgentOptions(
            platform="subagent", toolsets=None, only_tools=allowed,
            max_iterations=int(self.setting("max_iterations", 50)), stream=False,
            parent_session_id=parent.session_id, cwd=parent.options.cwd,
            approval_callback=None, clarify_callback=None, depth=parent.options.depth + 1)
        return Agent(parent.kernel, options, client=client, store=parent.sessions.store)


def _linked(interrupt: threading.Event | None, token: CancelToken) -> Any:
    """Set ``token`` when ``interrupt`` is set; returns the function that undoes the link.
    A plain event (a caller that has no cancel token) is watched from a thread."""
    if interrupt is None:
        return lambda: None
    if isinstance(interrupt, CancelToken):
        return interrupt.on_cancel(token.set)
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.05):
            if interrupt.is_set():
                token.set()
                return

    threading.Thread(target=watch, daemon=True, name="hermes-subagent-link").start()
    return done.set


def _combined(results: list[dict[str, Any]]) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for result in results:
        counts[result["status"]] = counts.get(result["status"], 0) + 1
    return {"status": "completed" if counts.get("completed") == len(results) else "partial",
            "counts": counts, "results": [{"task_index": i, **r} for i, r in enumerate(results)]}


def _one_line(results: list[dict[str, Any]]) -> str:
    return ", ".join(f"{r['status']}" for r in results)
