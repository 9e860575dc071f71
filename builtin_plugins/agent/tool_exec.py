"""Tool execution for the agent loop: hooks around every call, parallel read-only batches.

For each call the order is ``tool_request`` middleware (it may rewrite the arguments, see
:mod:`.middleware`), ``pre_tool_call`` (a block directive stops the call and its message
becomes the error result; an approve directive goes through the kernel's approval gate, the
one ``terminal`` uses, where no callback, a refusal or a timeout blocks), the tool itself
(wrapped by ``tool_execution`` middleware), ``post_tool_call`` with duration, status and the
middleware trace, then ``transform_tool_result``. While a handler runs, an interrupt also
marks its thread for the ``is_interrupted()`` helper. Calls with malformed JSON arguments or
an unknown tool name get an error result the model can recover from. Consecutive read-only
calls run together in a thread pool; everything else runs one at a time. Results keep the
order of the calls.

Each call's arguments are parsed once (the plan and the run share them) and each call gets
one ``ToolCallContext``: the turn's, stamped with the call's id. It goes to the approval
gate and to the handler (``kernel.tools.dispatch(name, args, context=...)``).

In a tainted turn the turn's :class:`~.taint_policy.TaintPolicy` judges each call first (it may
ask the approval gate, or refuse). The result of a handler marked ``untrusted_output`` goes
back fenced with the session's nonce, its source named, and marked untrusted.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from hermes_agent.api import APPROVAL_GATE, ToolCallContext, tool_error
from hermes_agent.kits.interrupt import set_interrupted
from hermes_agent.kits.tool_results import tool_status, untrusted_source

from .middleware import Middleware, Trace, tool_ids
from .provenance import fenced, untrusted

if TYPE_CHECKING:
    from hermes_agent import Kernel

    from .taint_policy import TaintPolicy

# Tools that only read: safe to run side by side.
PARALLEL_SAFE = frozenset({"read_file", "search_files", "web_search", "web_extract",
                           "session_search", "skill_view", "skills_list", "vision_analyze"})
MAX_WORKERS = 8
CANCELLED = "[Tool execution cancelled: {name} was skipped because the user interrupted]"


@dataclass
class ToolCallOutcome:
    """The result of one call, as it goes back to the model."""

    call_id: str
    name: str
    args: dict[str, Any]
    result: str
    status: str  # ok | error | blocked | cancelled
    duration_ms: float = 0.0
    error_type: str | None = None
    source: str | None = None  # untrusted: where the result came from

    def message(self) -> dict[str, Any]:
        message = {"role": "tool", "tool_call_id": self.call_id, "tool_name": self.name,
                   "content": self.result}
        if self.source is not None:
            message["provenance"] = untrusted(self.source)
        return message


@dataclass
class ToolTurn:
    """What every tool call of one turn shares: the context each call copies (with its own
    ``tool_call_id``), the tools the model may call, and where events go."""

    context: ToolCallContext
    allowed: frozenset[str] = frozenset()
    # Tools served outside the registry (memory providers'): name -> route(name, args, ctx).
    routes: Mapping[str, Callable[[str, dict[str, Any], ToolCallContext], str]] = field(
        default_factory=dict)
    api_request_id: str | None = None
    parallel_safe: frozenset[str] = PARALLEL_SAFE  # plus config ``agent.parallel_tools``
    on_event: Callable[[dict[str, Any]], None] | None = None
    fence_nonce: str = ""  # the session's (untrusted results are fenced with it)
    taint: "TaintPolicy | None" = None  # the turn's, when its context holds untrusted text

    def __post_init__(self) -> None:
        if self.context.interrupt_event is None:
            self.context = replace(self.context, interrupt_event=threading.Event())

    @property
    def interrupt(self) -> threading.Event:
        assert self.context.interrupt_event is not None
        return self.context.interrupt_event


Parsed = tuple[dict[str, Any] | None, str | None]  # (args, None) or (None, problem)


def parse_arguments(raw: Any) -> Parsed:
    """``(args, None)`` or ``(None, error)`` for the JSON text the model sent."""
    if isinstance(raw, dict):
        return raw, None
    text = raw if isinstance(raw, str) else ""
    if not text.strip():
        return {}, None
    try:
        value = json.loads(text)
    except ValueError as exc:
        return None, f"the arguments are not valid JSON ({exc})"
    if not isinstance(value, dict):
        return None, f"the arguments must be a JSON object, not {type(value).__name__}"
    return value, None


class ToolExecutor:
    """Runs the tool calls of one model response against the kernel's registry."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.hooks = kernel.hooks
        self.registry = kernel.tools
        self.middleware = Middleware(kernel)

    # --- planning -------------------------------------------------------------------------
    @staticmethod
    def plan(calls: list[Any], parsed: list[Parsed],
             parallel_safe: frozenset[str] = PARALLEL_SAFE) -> list[list[int]]:
        """Group call indexes: runs of 2+ read-only calls with valid arguments together, the
        rest alone. ``parsed`` holds each call's :func:`parse_arguments`."""
        groups: list[list[int]] = []
        run: list[int] = []
        for index, call in enumerate(calls):
            if call.name in parallel_safe and parsed[index][1] is None:
                run.append(index)
                continue
            groups.extend([run] if len(run) > 1 else [[i] for i in run])
            run = []
            groups.append([index])
        groups.extend([run] if len(run) > 1 else [[i] for i in run])
        return groups

    def run_all(self, calls: list[Any], turn: ToolTurn) -> list[ToolCallOutcome]:
        """Run every call; results are in call order. After an interrupt the remaining calls
        are cancelled (each still gets a result, so the history stays valid)."""
        outcomes: list[ToolCallOutcome | None] = [None] * len(calls)
        parsed = [parse_arguments(call.arguments) for call in calls]
        for group in self.plan(calls, parsed, turn.parallel_safe):
            if turn.interrupt.is_set():
                for i in group:
                    outcomes[i] = self.cancelled(calls[i])
                continue
            if len(group) == 1:
                outcomes[group[0]] = self.run_one(calls[group[0]], turn, parsed[group[0]])
                continue
            with ThreadPoolExecutor(max_workers=min(len(group), MAX_WORKERS),
                                    thread_name_prefix="hermes-tool") as pool:
                futures = {i: pool.submit(self.run_one, calls[i], turn, parsed[i])
                           for i in group}
                for i, future in futures.items():
                    outcomes[i] = future.result()
        return [o for o in outcomes if o is not None]

    @staticmethod
    def cancelled(call: Any) -> ToolCallOutcome:
        return ToolCallOutcome(call.id, call.name, {}, tool_error(CANCELLED.format(name=call.name)),
                               "cancelled", error_type="interrupted")

    # --- one call ---------------------------------------------------------------------------
    def run_one(self, call: Any, turn: ToolTurn, parsed: Parsed | None = None
                ) -> ToolCallOutcome:
        name, call_id = call.name, call.id
        args, problem = parsed if parsed is not None else parse_arguments(call.arguments)
        ctx = replace(turn.context, tool_call_id=call_id)
        if turn.on_event:
            turn.on_event({"type": "tool_start", "name": name, "tool_call_id": call_id,
                           "args": args if args is not None else call.arguments})
        started = time.perf_counter()
        status, error_type = "ok", None
        trace: Trace = []
        if problem is not None:
            result = tool_error(f"Tool call {name!r} was not run: {problem}. Send the call again "
                            "with a JSON object as arguments.")
            status, error_type, args = "error", "invalid_arguments", {}
        elif name not in turn.allowed or (name not in self.registry.tools
                                          and name not in turn.routes):
            known = ", ".join(sorted(turn.allowed)) or "(none)"
            result = tool_error(f"Unknown tool: {name!r}. Available tools: {known}.")
            status, error_type = "error", "unknown_tool"
        else:
            assert args is not None
            original = args
            args, trace = self.middleware.tool_request(name, args,
                                                       tool_ids(ctx, turn.api_request_id))
            result, status, error_type = self._guarded(name, args, ctx, turn, trace, original)
        known = getattr(result, "untrusted_source", None)  # a SourcedResult (a subagent's)
        duration = (time.perf_counter() - started) * 1000
        error_message = None
        if status == "ok":
            status, error_type, error_message = tool_status(result)
        elif status in ("error", "blocked"):
            error_message = tool_status(result)[2]
        result = self._after(name, args or {}, str(result), ctx, turn, duration, status,
                             error_type, error_message, trace)
        source = None
        if status in ("ok", "error") and error_type not in ("invalid_arguments", "unknown_tool"):
            spec = self.registry.tools.get(name) if name not in turn.routes else None
            source = (known or untrusted_source(spec.handler, args or {}, ctx)
                      if spec is not None else None)
            if source is not None:
                result = fenced(result, source, turn.fence_nonce) if turn.fence_nonce else result
        outcome = ToolCallOutcome(call_id, name, args or {}, result, status, duration, error_type,
                                  source)
        if turn.on_event:
            turn.on_event({"type": "tool_end", "name": name, "tool_call_id": call_id,
                           "status": status, "duration_ms": round(duration, 2),
                           "result": result[:2000]})
        return outcome

    def _guarded(self, name: str, args: dict[str, Any], ctx: ToolCallContext, turn: ToolTurn,
                 trace: Trace, original: dict[str, Any]) -> tuple[str, str, str | None]:
        refusal = turn.taint.check(name, args, ctx) if turn.taint is not None else None
        if refusal:
            return tool_error(refusal, blocked=True), "blocked", "tainted_turn"
        directive = None
        if self.hooks.has_hook("pre_tool_call"):
            directive = self.hooks.fire(
                "pre_tool_call", tool_name=name, args=args, task_id=ctx.task_id,
                session_id=ctx.session_id, tool_call_id=ctx.tool_call_id, turn_id=ctx.turn_id,
                api_request_id=turn.api_request_id, middleware_trace=trace)
        if directive and directive["action"] == "block":
            return tool_error(directive["message"], blocked=True), "blocked", "blocked_by_hook"
        if directive and directive["action"] == "approve":
            refusal = self._approve(name, args, directive, ctx)
            if refusal:
                return tool_error(refusal, blocked=True), "blocked", "approval_denied"
        route = turn.routes.get(name) if name not in self.registry.tools else None

        def run(final: dict[str, Any]) -> str:
            if route is not None:
                return route(name, final, ctx)
            return self.registry.dispatch(name, final, context=ctx)

        with interrupt_marked(turn.interrupt):  # through tool_execution middleware, if any
            return self.middleware.tool_execution(name, args, run, tool_ids(
                ctx, turn.api_request_id), original), "ok", None

    def _approve(self, name: str, args: dict[str, Any], directive: dict[str, Any],
                 ctx: ToolCallContext) -> str | None:
        """None when approved; else why the call is blocked. The kernel's approval gate
        remembers "session"/"always" answers under the directive's rule key and fires
        ``pre_approval_request`` / ``post_approval_response``."""

        reason = str(directive.get("message") or "") or f"a plugin asks before {name} runs"
        gate = self.kernel.service(APPROVAL_GATE)
        if gate.mode == "off":
            return None
        verdict = gate.decide(_subject(name, args), reason, (rule_key(name, directive, reason),),
                              ctx)
        if verdict.allowed:
            return None
        if ctx.approval_callback is None:
            return (f"Blocked: {name} needs approval ({reason}) and nobody can approve it "
                    "here. Do not retry it; ask the user.")
        if verdict.choice == "timeout":
            return (f"Blocked: nobody answered the approval request for {name} ({reason}). "
                    "Do not retry it without asking the user.")
        return f"Blocked: the user did not approve {name} ({reason}). Do not retry it."

    def _after(self, name: str, args: dict[str, Any], result: str, ctx: ToolCallContext,
               turn: ToolTurn, duration: float, status: str, error_type: str | None,
               error_message: str | None, trace: Trace) -> str:
        common = dict(tool_name=name, args=args, result=result, task_id=ctx.task_id,
                      session_id=ctx.session_id, tool_call_id=ctx.tool_call_id,
                      turn_id=ctx.turn_id, api_request_id=turn.api_request_id,
                      duration_ms=duration, status=status,
                      error_type=error_type, error_message=error_message)
        if self.hooks.has_hook("post_tool_call"):
            self.hooks.fire("post_tool_call", middleware_trace=trace, **common)
        if self.hooks.has_hook("transform_tool_result"):
            replaced = self.hooks.fire("transform_tool_result", **common)
            if isinstance(replaced, str):
                return replaced
        return result


def rule_key(name: str, directive: dict[str, Any], reason: str) -> str:
    """The approval memory key of a directive: ``plugin_rule:<rule_key>``, else one per tool
    and reason (so "always" for one rule does not approve another rule on the same tool)."""
    key = directive.get("rule_key")
    if isinstance(key, str) and key.strip():
        return f"plugin_rule:{key.strip()}"
    digest = hashlib.sha256(reason.encode("utf-8")).hexdigest()[:12]
    return f"plugin_rule:{name}:{digest}"


def _subject(name: str, args: dict[str, Any]) -> str:
    """What the person asked sees: the tool and its arguments (long ones cut)."""
    text = json.dumps(args, ensure_ascii=False, sort_keys=True, default=str)
    return f"{name} {text if len(text) <= 400 else text[:399] + '…'}"


_running = threading.local()  # per thread: the interrupt events of the calls running on it


@contextmanager
def interrupt_marked(interrupt: threading.Event) -> Iterator[None]:
    """While the block runs, an interrupt marks this thread for ``is_interrupted()`` (the
    helper plugins written for Hermes Agent 0.19 poll); the mark is cleared afterwards, unless
    an outer call on the same thread (a subagent's parent tool) was interrupted too."""
    thread = threading.get_ident()
    stack: list[threading.Event] = _running.__dict__.setdefault("events", [])
    stack.append(interrupt)
    on_cancel = getattr(interrupt, "on_cancel", None)
    remove = on_cancel(lambda: set_interrupted(thread)) if callable(on_cancel) else None
    if interrupt.is_set():
        set_interrupted(thread)
    try:
        yield
    finally:
        if callable(remove):
            remove()
        stack.pop()
        set_interrupted(thread, any(event.is_set() for event in stack))
