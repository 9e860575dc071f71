"""The agent loop: one library API that the CLI, the gateway and subagents all drive.

    agent = Agent(kernel, AgentOptions(platform="cli"))
    result = agent.run_conversation("What is in README.md?", on_event=print)
    agent.finalize("shutdown")

Per user message: ``on_session_start`` once for a new session (whose system prompt is built
here, frozen and stored); ``pre_llm_call`` context appended to the current user message in
the request only; model calls through the selected provider; tool calls run and their
results appended, until a final answer or the iteration budget is spent; every message
persisted with usage and cost; ``transform_llm_output`` and ``post_llm_call`` for a finished
turn and ``on_session_end`` for every run. While a run is going the agent's inbox answers the
``inject_message`` hook, so ``ctx.inject_message`` reaches it (see :mod:`.inbox`); the system
prompt's notices are shown once per session as ``notice`` events. Front ends call
:meth:`Agent.new_session` / :meth:`Agent.finalize` at real session boundaries
(``on_session_finalize``, ``on_session_reset``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import asdict
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent.api import (
    MODELS, CallContext, CancelToken, ChatRequest, ChatResponse, ModelClient, PartialStreamError,
    ProviderError, RequestInterrupted, StreamEvent, Usage,
)
from hermes_agent.kits.private_process import keep_process_private

from . import context_link, memory_link
from .history import SentContext, api_messages, content_text, repair_text
from .inbox import Inbox, into_tool_result, steer_into_tool_result
from .memory_fence import StreamScrubber, strip_fences
from .middleware import model_middleware
from .provenance import untrusted
from .session_life import SessionLifecycle
from .store_link import SessionLink, active_store
from .taint_link import SessionTaint
from .tool_selection import select_tools
from .turn_types import AgentOptions, EventSink, TurnResult, new_session_id

__all__ = ["Agent", "AgentOptions", "TurnResult", "EventSink", "new_session_id"]

if TYPE_CHECKING:  # the tool machinery loads with the first tool call
    from hermes_agent import Kernel
    from .tool_exec import ToolExecutor, ToolTurn

DEFAULT_MAX_ITERATIONS = 90
REPEATED_NOTE = ("{model} kept repeating itself, so the reply was stopped: {kept:,} characters "
                 "kept, {dropped:,} repeated ones dropped. Ask again or rephrase; if it keeps "
                 "happening, use a larger model or lower model.max_tokens.")
BUDGET_NOTE = ("You have used every tool-calling step allowed for this request. Do not call "
               "any more tools: reply now with a final answer that summarises what you found "
               "and did, and what is left to do.")
# Responses that only ran execute_code are free (as in the original), this many in a row.
FREE_CODE_STEPS = 3


class Agent(SessionLifecycle):
    """A conversation with one session at a time. Not thread-safe except :meth:`interrupt`."""

    def __init__(self, kernel: Kernel, options: AgentOptions | None = None, *,
                 session_id: str | None = None, client: ModelClient | None = None,
                 store: Any = None):
        keep_process_private()  # its tools' commands must not read this process's keys
        self.kernel = kernel
        self.options = options or AgentOptions()
        self.hooks = kernel.hooks
        self.client = client or kernel.service(MODELS).client(
            provider=self.options.provider, model=self.options.model)
        self.sessions = SessionLink(store if store is not None else active_store(kernel))
        self._tools_generation = -1
        self.tool_names: list[str] = []
        self.tool_notes: list[str] = []
        self.tool_defs: list[dict[str, Any]] = []
        self.tool_routes: dict[str, Callable[..., str]] = {}  # memory & context engine tools
        self.tool_origins: dict[str, tuple[str, str]] = {}  # their (toolset, plugin)
        self.refresh_tools()
        self.memory = memory_link.attach(self)
        self.context_mark = 0  # history length at the engine's last usage report
        self.context = context_link.attach(self)  # the context engine (compression)
        self.session_id = new_session_id()
        self.history: list[dict[str, Any]] = []
        self._sent_context = SentContext()  # request-only text, re-sent for the prompt cache
        self.system_prompt: str | None = None
        self.session_usage = Usage()
        self.session_cost: float | None = 0.0
        self.session_api_calls = 0
        self.extra_tool_kwargs: dict[str, Any] = {"agent": self}
        self._stored = False  # the session row exists
        self._interrupt = CancelToken()
        self.inbox = Inbox()  # messages plugins inject (ctx.inject_message)
        self._injected: tuple[str, str] | None = None  # an untrusted one take_injected gave
        self._notices: list[str] = []  # system prompt notices not yet shown
        self._notices_shown: set[str] = set()  # this session's, shown already
        self._turn_start = 0  # where this turn's messages begin in the history
        self.tool_turn: ToolTurn | None = None  # the running turn's (execute_code reuses it)
        self.taint = SessionTaint(self)  # the session's fence nonce and taint
        if session_id is not None:
            self.resume(session_id)

    # --- identity -------------------------------------------------------------------------
    @property
    def model(self) -> str:
        return self.client.active.model

    @property
    def provider(self) -> str:
        return self.client.active.name

    @property
    def platform(self) -> str:
        return self.options.platform

    @property
    def session_stored(self) -> bool:
        """Whether the session has its row in the store (created with the first message)."""
        return self._stored

    @property
    def max_iterations(self) -> int:
        if self.options.max_iterations is not None:
            return max(1, self.options.max_iterations)
        configured = self.kernel.config.get("agent.max_turns")
        return int(configured) if configured else DEFAULT_MAX_ITERATIONS

    def refresh_tools(self) -> bool:
        """Select the tools again when the registry changed since the last selection (a
        plugin added or withdrew tools while hermes runs, e.g. an MCP server's). Called
        between turns, after ``pre_llm_call``; True when the selection was made again."""
        generation = self.kernel.tools.generation
        if generation == self._tools_generation:
            return False
        self._tools_generation = generation
        routed = [(name, d) for name, d in zip(self.tool_names, self.tool_defs)
                  if name in self.tool_routes]  # memory and context-engine tools stay
        names, self.tool_notes = self._select_tools()
        names = [n for n in names if n not in self.tool_routes]
        self.tool_names = names + [name for name, _ in routed]
        self.tool_defs = self.kernel.tools.definitions(names) + [d for _, d in routed]
        return True

    def reselect_tools(self) -> None:
        """Select the tools again now (``/tools disable``, ``/toolsets enable``: the
        options changed, not the registry)."""
        self._tools_generation = -1
        self.refresh_tools()

    def _select_tools(self) -> tuple[list[str], list[str]]:
        toolsets = self.options.toolsets
        if toolsets is None:
            toolsets = self.kernel.config.get("toolsets")
        names, notes = select_tools(self.kernel.tools, toolsets)
        only = self.options.only_tools
        return [n for n in names if n not in self.options.exclude_tools
                and (only is None or n in only)], notes

    def reset_sent_context(self) -> None:
        self._sent_context.clear()

    def compress(self, focus: str = "", on_event: EventSink | None = None) -> bool:
        """Compress the conversation now (``/compress [focus]``); False when it stays as it
        was (nothing to compress, no engine, or the engine failed: a warning event says why;
        a caller with ``on_event`` shows it, so it is not logged as a warning as well)."""
        if self.context is None or not self.history:
            return False
        self._interrupt = CancelToken()  # interrupt() stops this summariser call
        return context_link.compress(self, on_event or _ignore, focus=focus, force=True,
                                     answered=on_event is not None)[0]

    def tool_origin(self, name: str) -> tuple[str, str]:
        """``(toolset, plugin)`` of a tool the model is offered: a registered tool's, or for
        a memory provider's or context engine's tool the plugin that registered that one."""
        spec = self.kernel.tools.tools.get(name)
        if spec is not None:
            return spec.toolset, spec.plugin
        return self.tool_origins.get(name, ("?", "?"))

    def context_fill(self) -> float:
        """How full the model's window is with this conversation (0.0-1.0+, estimated)."""
        return context_link.fill(self)

    def switch_model(self, model: str, provider: str | None = None) -> None:
        """Use another model from the next request on. The session's system prompt stays as it
        was frozen (it names no model), so the history and prompt go on unchanged."""
        self.client = self.kernel.service(MODELS).client(
            provider=provider or self.provider, model=model)
        context_link.update_model(self)
        if self._stored:  # a resume goes on with it
            self.sessions.set_model(self.session_id, self.provider, self.model)

    # --- interrupt -------------------------------------------------------------------------
    def interrupt(self) -> None:
        """Stop the running model call or tool (thread-safe). Subagents share the token, so
        they stop too."""
        self._interrupt.set()

    def steer(self, text: str) -> bool:
        """Add guidance to the running turn without stopping it (thread-safe, ``/steer``):
        appended to the next tool result the model reads; False for empty text."""
        return self.inbox.steer(text)

    def take_steer(self) -> str | None:
        """Steer text no tool result carried before the run ended."""
        return self.inbox.take_steer()

    @property
    def interrupted(self) -> bool:
        return self._interrupt.is_set()

    # --- the turn ----------------------------------------------------------------------------
    def run_conversation(self, user_message: str | list[dict[str, Any]], *,
                         task_id: str | None = None,
                         on_event: EventSink | None = None,
                         interrupt: CancelToken | None = None,
                         source: str | None = None) -> TurnResult:
        """Run one user turn to its final answer (or interrupt, failure, spent budget).
        ``interrupt``: a token shared with a caller (a parent agent) that stops this turn.
        ``source``: the message is untrusted, from there (a gateway user who is not the
        owner: ``platform:<name>:<user>``). ``user_message`` may be OpenAI content parts
        (text and ``image_url`` parts): the images are stored by reference (docs/vision.md)
        and hooks and memory get the text."""
        emit = on_event or _ignore
        content: str | list[dict[str, Any]] = user_message
        if isinstance(user_message, list):
            content, notes = self._stored_images(user_message)
            for note in notes:
                emit({"type": "notice", "level": "warning", "reason": "image",
                      "message": f"image not attached: {note}"})
            user_message = content_text(content)
        if self._injected is not None:  # the text take_injected handed out, sent back
            if source is None and user_message == self._injected[0]:
                source = self._injected[1]
            self._injected = None
        task_id = task_id or uuid.uuid4().hex[:12]
        self._interrupt = interrupt if interrupt is not None else CancelToken()
        self.client.new_turn()
        turn = TurnResult("", self.session_id, task_id, "")
        self._turn_start = len(self.history)
        with self._receiving_injected():
            try:
                self._run(turn, user_message, emit, on_event is not None, source, content)
            except RequestInterrupted:
                turn.interrupted, turn.exit_reason = True, "interrupted"
            except ProviderError as exc:
                turn.failed, turn.error, turn.exit_reason = True, str(exc), f"error:{exc.reason}"
                emit({"type": "error", "message": str(exc), "reason": exc.reason})
            finally:
                turn.messages = self.history[self._turn_start:]
                self._finish(turn, user_message, emit)
        return turn

    def _receiving_injected(self) -> Any:
        """The top-level agent receives ``ctx.inject_message`` while it runs (a subagent,
        or a ``/background`` run, leaves them to the chat's agent)."""
        if self.options.depth > 0 or not self.options.receive_injected:
            from contextlib import nullcontext

            return nullcontext()
        return self.inbox.installed(self.kernel)

    def take_injected(self) -> str | None:
        """Injected messages still waiting (they arrived after the last model call of the
        run); a front end sends them as the next user message, which keeps their provenance
        (an untrusted one's source is the next run's)."""
        text = self.inbox.take()
        self._injected = (text, self.inbox.taken_source) if text and self.inbox.taken_source \
            else None
        return text

    def _stored_images(self, parts: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
        from .images import stored_content

        return stored_content(self.kernel, parts)

    def _run(self, turn: TurnResult, user_message: str, emit: EventSink,
             shown_to_user: bool, source: str | None = None,
             content: str | list[dict[str, Any]] | None = None) -> None:
        if self.memory and not self.memory.initialized:
            memory_link.initialize(self)
        if self.system_prompt is None:
            self._start_session()
        turn.session_id = self.session_id
        turn.turn_id = f"{self.session_id}:{turn.task_id}:{uuid.uuid4().hex[:8]}"
        emit({"type": "turn_start", "session_id": self.session_id, "turn_id": turn.turn_id,
              "model": self.model, "provider": self.provider})
        self._show_notices(emit, shown_to_user)
        is_first = not any(m.get("role") == "user" for m in self.history)
        self._deliver_injected(emit)  # left over from the previous run: they came first
        self.taint.sender_untrusted = source is not None
        self._record({"role": "user", "content": user_message if content is None else content,
                      **({"provenance": untrusted(source)} if source else {})})
        self.taint.show(emit)
        # preflight compression: plugins' pre_llm_call sees the history the model will see
        current = self._compress_if_due(turn, len(self.history) - 1, emit)
        context = memory_link.turn_context(
            self, user_message, self._pre_llm_context(turn, user_message, is_first))
        self.refresh_tools()  # pre_llm_call may have changed runtime tools (MCP servers)
        self._tool_loop(turn, user_message, current, context, emit)

    def _pre_llm_context(self, turn: TurnResult, user_message: str, is_first: bool) -> str:
        if not self.hooks.has_hook("pre_llm_call"):
            return ""
        return self.hooks.fire(
            "pre_llm_call", session_id=self.session_id, task_id=turn.task_id,
            turn_id=turn.turn_id, user_message=user_message,
            conversation_history=list(self.history), is_first_turn=is_first,
            model=self.model, platform=self.platform, sender_id=self.options.sender_id) or ""

    def _tool_loop(self, turn: TurnResult, user_message: str, current: int, context: str,
                   emit: EventSink) -> None:
        tool_turn: ToolTurn | None = None
        step, free = -1, 0  # free: consecutive execute_code-only steps not counted
        while (step := step + 1) < self.max_iterations:
            if self.interrupted:
                raise RequestInterrupted(self.provider, self.model)
            self._deliver_injected(emit)
            current = self._compress_if_due(turn, current, emit)
            if tool_turn is not None and tool_turn.context.session_id != self.session_id:
                tool_turn = None  # compressed: later tool calls belong to the new session
            response = self._call(turn, user_message, current, context, emit, tools=True)
            if not response.tool_calls:
                if self.inbox and step + 1 < self.max_iterations:
                    continue  # a message was injected meanwhile: the model answers it too
                turn.final_response, turn.completed = response.content, True
                turn.exit_reason = "final_answer"
                return
            tool_turn = self.tool_turn = tool_turn or self._tool_turn(turn, emit)
            tool_turn.api_request_id = response.id or None
            tool_turn.taint = self.taint.policy()  # the context the model made the calls in
            outcomes = self.executor.run_all(response.tool_calls, tool_turn)
            code_only = all(call.name == "execute_code" for call in response.tool_calls)
            free = free + 1 if code_only else 0
            if code_only and free <= FREE_CODE_STEPS:
                step -= 1  # as in the original: a step that only ran scripts is refunded
            injected = self.inbox.take() if outcomes else None
            if injected is not None:
                outcomes[-1].result = into_tool_result(outcomes[-1].result, injected)
                if self.inbox.taken_source and outcomes[-1].source is None:
                    outcomes[-1].source = self.inbox.taken_source
                emit({"type": "injected", "content": injected, "session_id": self.session_id})
            steer = self.inbox.take_steer() if outcomes else None
            if steer is not None:
                outcomes[-1].result = steer_into_tool_result(outcomes[-1].result, steer)
                emit({"type": "steered", "content": steer, "session_id": self.session_id})
            for outcome in outcomes:
                self._record(outcome.message())
            self.taint.show(emit)
            if self.interrupted:
                raise RequestInterrupted(self.provider, self.model)
        # Budget spent: one more call without tools for a summary.
        current = self._compress_if_due(turn, current, emit)
        response = self._call(turn, user_message, current, context, emit, tools=False,
                              note=BUDGET_NOTE)
        turn.final_response, turn.completed = response.content, True
        turn.exit_reason = "budget_exhausted"

    def _compress_if_due(self, turn: TurnResult, current: int, emit: EventSink) -> int:
        session = self.session_id
        current = context_link.compress_if_due(self, current, emit)
        if self.session_id != session:  # compressed: the turn continues in a new session
            turn.session_id, self._turn_start = self.session_id, current
        return current

    def _tool_turn(self, turn: TurnResult, emit: EventSink) -> ToolTurn:
        from hermes_agent.api import ToolCallContext
        from hermes_agent.kits.tool_results import is_parallel_safe

        from .tool_exec import PARALLEL_SAFE, ToolTurn

        context = ToolCallContext(
            session_id=self.session_id, task_id=turn.task_id, turn_id=turn.turn_id,
            platform=self.platform, chat_id=self.options.chat_id or "",
            cwd=Path(self.options.cwd or self.kernel.cwd or Path.cwd()).expanduser().resolve(),
            approval_callback=self.options.approval_callback,
            clarify_callback=self.options.clarify_callback, interrupt_event=self._interrupt,
            extra=self.extra_tool_kwargs)
        return ToolTurn(context, allowed=frozenset(self.tool_names), on_event=emit,
                        routes=self.tool_routes, fence_nonce=self.taint.nonce,
                        parallel_safe=PARALLEL_SAFE | frozenset(
                            self.kernel.config.get("agent.parallel_tools") or ()) | frozenset(
                            name for name in self.tool_names if is_parallel_safe(
                                getattr(self.kernel.tools.tools.get(name), "handler", None))))

    @cached_property
    def executor(self) -> ToolExecutor:
        from .tool_exec import ToolExecutor

        return ToolExecutor(self.kernel)

    def _call(self, turn: TurnResult, user_message: str, current: int, context: str,
              emit: EventSink, *, tools: bool, note: str = "") -> ChatResponse:
        contexts = self._sent_context.for_request(self.history, current, context)
        ephemeral = "\n\n".join(part for part in (self.options.ephemeral_system_prompt,
                                                   self.options.personality) if part)
        messages = api_messages(self.system_prompt or "", self.history, contexts, ephemeral)
        if note:
            messages.append({"role": "user", "content": note})
        if any(isinstance(m.get("content"), list) for m in messages):
            from .images import with_images_resolved

            messages = with_images_resolved(self.kernel, self.client, messages)
        request = ChatRequest(messages, tools=self.tool_defs if tools and self.tool_defs else None,
                              stream=self.options.stream, max_tokens=self.options.max_tokens,
                              reasoning_effort=self.options.reasoning_effort)
        turn.api_calls += 1
        self.session_api_calls += 1
        ctx = CallContext(session_id=self.session_id, task_id=turn.task_id,
                          turn_id=turn.turn_id, platform=self.platform,
                          user_message=user_message, conversation_history=self.history,
                          api_call_count=turn.api_calls, middleware=model_middleware(self.kernel),
                          on_retry=lambda notice: emit({"type": "retry", **asdict(notice),
                                                        "message": notice.text()}))
        partial: list[str] = []
        scrub = StreamScrubber() if self.memory else None  # no memory fence reaches the user
        guard = self.taint.reply_filter()  # tainted: no link built with data reaches a client

        def on_delta(event: StreamEvent) -> None:
            if event.kind == "text":
                text = scrub.feed(event.text) if scrub else event.text
                text = guard.feed(text) if guard and text else text
                if text:
                    partial.append(text)
                    emit({"type": "text_delta", "text": text})
            elif event.kind == "reasoning":
                emit({"type": "reasoning_delta", "text": event.text})

        try:
            response = self.client.chat(request, on_event=on_delta, interrupt=self._interrupt,
                                        context=ctx)
        except (RequestInterrupted, PartialStreamError) as exc:
            if partial:  # keep what the user already saw (a broken stream is not retried)
                reason = "interrupted" if isinstance(exc, RequestInterrupted) else "error"
                self._record({"role": "assistant", "content": "".join(partial)},
                             finish_reason=reason)
            raise
        if scrub:
            tail = scrub.flush()
            tail = guard.feed(tail) if guard and tail else tail
            if tail:
                emit({"type": "text_delta", "text": tail})
            response.content = strip_fences(response.content or "")
        if guard:
            tail = guard.flush()
            if tail:
                emit({"type": "text_delta", "text": tail})
            response.content = self.taint.scrub(response.content or "")
        message = response.assistant_message()
        self._record(message, finish_reason=response.finish_reason,
                     token_count=response.usage.output_tokens or None)
        self._account(turn, response)
        if response.finish_reason == "repetition":
            emit({"type": "notice", "level": "warning", "reason": "repetition",
                  "session_id": self.session_id, "message": REPEATED_NOTE.format(
                      model=self.model, kept=len(response.content), dropped=response.repeated)})
        emit({"type": "assistant", "content": response.content,
              "tool_calls": [c.to_message() for c in response.tool_calls],
              "finish_reason": response.finish_reason, "usage": response.usage.to_dict()})
        return response

    def _deliver_injected(self, emit: EventSink) -> None:
        """Injected messages as a user message, unless the history ends with tool results
        (then they wait for the next batch's results, keeping the alternation valid)."""
        if not self.inbox or (self.history and self.history[-1].get("role") == "tool"):
            return
        text = self.inbox.take()
        if text is not None:
            source = self.inbox.taken_source
            self._record({"role": "user", "content": text,
                          **({"provenance": untrusted(source)} if source else {})})
            emit({"type": "injected", "content": text, "session_id": self.session_id})

    def _record(self, message: dict[str, Any], finish_reason: str | None = None,
                token_count: int | None = None) -> None:
        # whatever its source (the user, a tool, the model), text that no UTF-8 request can
        # carry would fail every later turn of the session: repaired once, here
        message.update({key: repair_text(value) for key, value in message.items()})
        self.history.append(message)
        self.sessions.append(self.session_id, message, finish_reason=finish_reason,
                             token_count=token_count)
        self.taint.recorded(message)

    def _account(self, turn: TurnResult, response: ChatResponse) -> None:
        turn.usage = turn.usage + response.usage
        self.session_usage = self.session_usage + response.usage
        amount = response.cost.amount_usd if response.cost else None
        turn.cost_usd = None if amount is None or turn.cost_usd is None else turn.cost_usd + amount
        self.session_cost = (None if amount is None or self.session_cost is None
                             else self.session_cost + amount)
        self.sessions.add_usage(self.session_id, response)
        context_link.record_usage(self, response.usage)

    def _finish(self, turn: TurnResult, user_message: str, emit: EventSink) -> None:
        if turn.completed and not turn.interrupted:
            if self.hooks.has_hook("transform_llm_output"):
                replaced = self.hooks.fire("transform_llm_output",
                                           response_text=turn.final_response,
                                           session_id=self.session_id, model=self.model,
                                           platform=self.platform)
                if replaced:
                    turn.final_response, turn.response_transformed = replaced, True
            memory_link.after_turn(self, user_message, turn.final_response)
            if self.hooks.has_hook("post_llm_call"):
                self.hooks.fire("post_llm_call", session_id=self.session_id,
                                task_id=turn.task_id, turn_id=turn.turn_id,
                                user_message=user_message,
                                assistant_response=turn.final_response,
                                conversation_history=list(self.history), model=self.model,
                                platform=self.platform)
        if self.hooks.has_hook("on_session_end"):
            self.hooks.fire("on_session_end", session_id=self.session_id, task_id=turn.task_id,
                            turn_id=turn.turn_id, completed=turn.completed,
                            interrupted=turn.interrupted, model=self.model,
                            platform=self.platform, reason=turn.exit_reason or None)
        emit({"type": "turn_end", **turn.to_dict()})


def _ignore(_event: dict[str, Any]) -> None:
    return None
