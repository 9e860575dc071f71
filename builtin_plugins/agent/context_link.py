"""Where the agent loop meets the context engine (the ``context_engine`` slot, chosen by
``context.engine``, default ``compressor``).

Each agent works on its own copy of the registered engine (its counters and its running
summary belong to one conversation). The host keeps the engine's counters current
(``update_model`` when the model changes, ``update_from_response`` after every call), asks
``should_compress`` before every model call, and when the engine compresses, continues in a
new session of the same lineage: the old one ends with end_reason ``compression``, the new
one has it as parent, a numbered title ("X #2") and a rebuilt system prompt. Engines written
for the original's ``ContextEngine`` work unchanged: optional arguments their methods do not
accept are left out.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from hermes_agent.api import MODELS
from hermes_agent.kits.tokens import estimate_tokens

from . import context_tools, memory_link
from .engine_calls import call_filtered
from .history import last_user_index
from .host import AgentHost
from .provenance import mark_written
from .turn_types import EventSink, new_session_id

log = logging.getLogger("hermes_agent.agent.context")
MAX_MEMORY_CONTEXT = 6_000  # characters of the memory providers' on_pre_compress text


def attach(agent: AgentHost) -> Any:
    """The agent's own copy of the selected engine, sized for its model (None: no engine)."""
    kernel = agent.kernel
    try:
        shared = kernel.slots.active("context_engine", kernel.config)
    except Exception as exc:  # context.engine names nothing installed (SlotError)
        log.warning("context compression is off for this agent: %s", exc)
        return None
    if shared is None:
        return None
    try:  # the kernel is shared, never copied
        engine = copy.deepcopy(shared, {id(kernel): kernel})
    except Exception as exc:
        log.warning("context engine %r cannot be copied (%s); this agent shares the registered "
                    "instance", getattr(shared, "name", "?"), exc)
        engine = shared
    agent.context_mark = 0
    update_model(agent, engine)
    context_tools.offer(agent, engine)
    return engine


def update_model(agent: AgentHost, engine: Any = None) -> None:
    """Tell the engine the model and its window (at start and after ``/model``)."""
    engine = engine if engine is not None else agent.context
    if engine is None:
        return
    active = agent.client.active
    window = agent.kernel.service(MODELS).context_length(active.model)
    call_filtered(engine.update_model, active.model, window, base_url=active.base_url,
                  api_key=active.api_key, provider=active.name, api_mode=active.api_mode)


def session_started(agent: AgentHost) -> None:
    """A new or resumed session: ``on_session_start`` (optional arguments filtered)."""
    if agent.context is not None:
        call_filtered(agent.context.on_session_start, agent.session_id, platform=agent.platform,
                      model=agent.model)


def record_usage(agent: AgentHost, usage: Any) -> None:
    """The latest call's usage, in the counters the engine keeps."""
    if agent.context is None:
        return
    agent.context.update_from_response({
        "prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens, "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens, "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens})
    # the messages that prompt held: not the answer just recorded (it is sent next time)
    answered = bool(agent.history) and agent.history[-1].get("role") == "assistant"
    agent.context_mark = len(agent.history) - (1 if answered else 0)


def _estimated_prompt_tokens(agent: AgentHost) -> int:
    """The last reported prompt size plus every message added since (the model's answer with
    its tool calls' arguments, tool results, a new user message), counted roughly."""
    engine = agent.context
    added = agent.history[agent.context_mark:]
    return int(engine.last_prompt_tokens or 0) + estimate_tokens(added)


def next_prompt_tokens(agent: AgentHost) -> tuple[int, bool]:
    """``(tokens, reported)``: the size of the next request, from the last reported prompt
    size plus what was added since (``reported`` True), or counted roughly from the system
    prompt and the whole conversation before any report and right after a compression."""
    engine = agent.context
    if engine is not None and engine.last_prompt_tokens:
        return _estimated_prompt_tokens(agent), True
    return (estimate_tokens([{"content": agent.system_prompt or ""}])
            + estimate_tokens(agent.history)), False


def fill(agent: AgentHost) -> float:
    """The share of the model's window the next request would take (:func:`next_prompt_tokens`)."""
    window = agent.kernel.service(MODELS).context_length(agent.model)
    return next_prompt_tokens(agent)[0] / window if window else 0.0


def compress_if_due(agent: AgentHost, current: int, emit: EventSink) -> int:
    """Before a model call: compress when the engine says so. Returns the index of the
    turn's user message in the (possibly new) history."""
    engine = agent.context
    if engine is None or len(agent.history) < 2:
        return current
    if engine.last_prompt_tokens > 0:
        due = engine.should_compress(_estimated_prompt_tokens(agent))
    else:  # no usage reported yet in this session: the engine's own estimate
        due = engine.should_compress_preflight(list(agent.history))
    if not due or not engine.has_content_to_compress(list(agent.history)):
        return current  # (a turn that alone passes the threshold: nothing older to summarise)
    return compress(agent, emit, current=current)[1]


def compress(agent: AgentHost, emit: EventSink, *, current: int | None = None,
             focus: str = "", force: bool = False, answered: bool = False) -> tuple[bool, int]:
    """Compress now. Returns (compressed, index of the current user message). A failing or
    ineffective engine leaves the conversation as it was and says so in a warning (the
    notice event; logged too unless ``answered``: the caller shows it as its answer)."""
    engine, history, old = agent.context, agent.history, agent.session_id
    current = last_user_index(history) if current is None else current
    unchanged = (False, -1 if current is None else current)
    if engine is None or not history:
        return unchanged
    memory = agent.memory
    memory_context = (memory.on_pre_compress(list(history))[:MAX_MEMORY_CONTEXT]
                      if memory is not None and memory.initialized else "")
    try:
        result = call_filtered(engine.compress, list(history),
                               current_tokens=_estimated_prompt_tokens(agent),
                               focus_topic=focus or None, force=force,
                               memory_context=memory_context, interrupt=agent._interrupt)
    except Exception as exc:
        result, reason = None, f"{type(exc).__name__}: {exc}"
    else:
        reason = getattr(engine, "last_error", "") or "the engine returned it unchanged"
    if not isinstance(result, list) or not result or result == history:
        _warn(agent, emit, f"context compression did not run ({reason}); the conversation "
                           "continues uncompressed", answered)
        return unchanged
    before = len(history)
    anchor = history[current] if current is not None and current < before else None
    try:
        split_session(agent, result)
    except Exception as exc:  # the store failed: go on in the old session, uncompressed
        _warn(agent, emit, f"context compression did not run (the continuation session could "
                           f"not be stored: {type(exc).__name__}: {exc}); the conversation "
                           "continues uncompressed", answered)
        return unchanged
    emit({"type": "compressed", "session_id": agent.session_id, "parent_session_id": old,
          "messages_before": before, "messages_after": len(result),
          "compression_count": engine.compression_count,
          "message": f"conversation compressed: {before} messages -> {len(result)}, "
                     f"continuing in session {agent.session_id}"})
    return True, _find(agent.history, anchor)


def _find(history: list[dict[str, Any]], anchor: dict[str, Any] | None) -> int:
    """The index of the turn's user message after compression (the tail keeps it)."""
    if anchor is not None:
        for index in range(len(history) - 1, -1, -1):
            if history[index] is anchor or history[index] == anchor:
                return index
    found = last_user_index(history)
    return found if found is not None else len(history) - 1


def split_session(agent: AgentHost, compressed: list[dict[str, Any]]) -> None:
    """Continue in a child session: the old one ended with end_reason ``compression``, the
    new one holding the compressed history, a numbered title and a rebuilt system prompt."""
    sessions, old, new = agent.sessions, agent.session_id, new_session_id()
    title = sessions.title(old)
    sessions.end(old, "compression")  # first: a continuation starts after its parent ended
    try:
        sessions.create(new, source=agent.platform, model=agent.model, provider=agent.provider,
                        parent_session_id=old, fence_nonce=agent.taint.nonce)
        if title:
            sessions.set_title(new, sessions.next_title(title))
        if agent.taint.source is not None:  # a summary of untrusted text is untrusted too
            mark_written(compressed, agent.history)
        sessions.replace(new, compressed)
    except Exception:
        sessions.reopen(old)
        raise
    agent.session_id, agent.history = new, list(compressed)
    agent.reset_sent_context()
    agent.system_prompt = agent.rebuild_system_prompt()
    engine = agent.context
    try:
        engine.on_session_start(new, boundary_reason="compression", old_session_id=old)
    except TypeError:  # an engine whose on_session_start takes no keywords
        engine.on_session_start(new)
    memory_link.session_switch(agent, old, reset=False, reason="compression")
    agent.context_mark = len(agent.history)


def _warn(agent: AgentHost, emit: EventSink, message: str, answered: bool = False) -> None:
    log.log(logging.INFO if answered else logging.WARNING, "session %s: %s", agent.session_id,
            message)
    emit({"type": "notice", "level": "warning", "message": message,
          "session_id": agent.session_id})
