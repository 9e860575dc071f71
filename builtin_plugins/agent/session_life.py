"""The agent's session lifecycle: starting, resuming, finalizing and resetting a session,
and building its frozen system prompt. A part of :class:`~.loop.Agent`, kept apart so the
turn's code reads on its own."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from hermes_agent import HermesError
from hermes_agent.api import SessionStoreError, Usage

from . import context_link, memory_link
from .history import content_text, last_user_index
from .prompt_link import build_system_prompt
from .turn_types import EventSink, new_session_id

if TYPE_CHECKING:
    from hermes_agent import Kernel
    from .history import SentContext
    from .inbox import Inbox
    from .store_link import SessionLink
    from .taint_link import SessionTaint
    from .turn_types import AgentOptions

log = logging.getLogger("hermes_agent.agent")


class SessionLifecycle:
    """Session methods of :class:`~.loop.Agent` (which sets every attribute named here)."""

    kernel: Kernel
    options: "AgentOptions"
    hooks: Any
    sessions: "SessionLink"
    memory: Any
    context: Any
    session_id: str
    history: list[dict[str, Any]]
    system_prompt: str | None
    tool_names: list[str]
    inbox: "Inbox"
    _sent_context: "SentContext"
    _stored: bool
    _notices: list[str]
    _notices_shown: set[str]
    taint: "SessionTaint"
    session_usage: Usage
    session_cost: float | None
    session_api_calls: int
    model: str  # properties of Agent
    platform: str

    def resume(self, session_id: str) -> None:
        """Continue a stored session: its frozen system prompt and its messages (a session
        that was compressed continues in the newest session of its chain)."""
        if self.sessions.get(session_id) is not None:
            session_id = self.sessions.compression_tip(session_id)
        stored = self.sessions.get(session_id)
        if stored is None:
            raise SessionStoreError(f"no session {session_id!r} in the session store; list "
                                    "sessions with `hermes sessions list`")
        old, self.session_id = self.session_id, session_id
        memory_link.session_switch(self, old)
        self.system_prompt = stored.get("system_prompt") or None
        self.history = self.sessions.conversation(session_id)
        self.taint.resumed(session_id, self.history)
        self.taint.prompt_built(self.system_prompt)
        self._sent_context.clear()
        self._stored = True
        self._resume_model()
        context_link.session_started(self)
        if stored.get("ended_at"):
            self.sessions.reopen(session_id)

    def _resume_model(self) -> None:
        """A resumed session goes on with the model it last used (``/model`` included),
        unless this run chose one (``--model``/``--provider``: then that is remembered)."""
        if self.options.model or self.options.provider:
            self.sessions.set_model(self.session_id, self.provider, self.model)
            return
        chosen = self.sessions.chosen_model(self.session_id)
        if chosen is None or chosen == (self.provider, self.model):
            return
        try:
            self.switch_model(chosen[1], chosen[0])
        except HermesError as exc:  # e.g. that provider is no longer configured
            self._notices.append(f"this session used {chosen[1]} via {chosen[0]}, which is "
                                 f"not available now ({exc}); going on with {self.model}")

    def _start_session(self) -> None:
        self.taint.started()
        if not self._stored:
            self.sessions.create(self.session_id, source=self.platform, model=self.model,
                                 provider=self.provider,
                                 parent_session_id=self.options.parent_session_id,
                                 fence_nonce=self.taint.nonce)
            self._stored = True
        else:
            self.sessions.set_fence_nonce(self.session_id, self.taint.nonce)
        self.system_prompt = self._build_prompt()
        self.sessions.set_system_prompt(self.session_id, self.system_prompt)
        self.taint.prompt_built(self.system_prompt)
        context_link.session_started(self)
        if self.hooks.has_hook("on_session_start"):
            self.hooks.fire("on_session_start", session_id=self.session_id, model=self.model,
                            platform=self.platform)

    def rebuild_system_prompt(self) -> str:
        """Build the system prompt anew and store it for the current session (after
        compression, the one time a session's prompt changes)."""
        self.system_prompt = self._build_prompt()
        self.sessions.set_system_prompt(self.session_id, self.system_prompt)
        self.taint.prompt_built(self.system_prompt)
        return self.system_prompt

    def _build_prompt(self) -> str:
        text, notices = build_system_prompt(self.kernel, session_id=self.session_id,
                                            platform=self.platform, tool_names=self.tool_names,
                                            cwd=self.options.cwd,
                                            skip_context_files=self.options.depth > 0,
                                            fence_nonce=self.taint.nonce)
        self._notices += [n for n in notices
                          if n not in self._notices_shown and n not in self._notices]
        return text

    def _show_notices(self, emit: EventSink, shown_to_user: bool) -> None:
        """System prompt notices, once per session: a ``notice`` event and a log record
        (a warning when no front end receives the events)."""
        notices, self._notices = self._notices, []
        for notice in notices:
            self._notices_shown.add(notice)
            log.log(logging.INFO if shown_to_user else logging.WARNING, "%s", notice)
            emit({"type": "notice", "level": "warning", "message": notice,
                  "session_id": self.session_id})

    def finalize(self, reason: str = "shutdown", *, new_session_id: str | None = None) -> None:
        """The session is over for good (exit, ``/new``): ``on_session_finalize``; unless a
        new session follows, the memory providers are shut down too."""
        try:
            self._finalize(reason, new_session_id)
        finally:
            if self.memory is not None and new_session_id is None:
                self.memory.shutdown()

    def _finalize(self, reason: str, new_session_id: str | None) -> None:
        if not self._stored:
            return
        left = self.inbox.take()
        if left is not None:
            log.warning("session %s ended before an injected message was delivered: %.200s",
                        self.session_id, left)
        if self.memory and self.memory.initialized:
            self.memory.on_session_end(self.history)
        if self.context is not None:
            self.context.on_session_end(self.session_id, self.history)
        self.sessions.end(self.session_id, reason)
        if self.hooks.has_hook("on_session_finalize"):
            self.hooks.fire("on_session_finalize", session_id=self.session_id,
                            platform=self.platform, reason=reason,
                            old_session_id=self.session_id if new_session_id else None,
                            new_session_id=new_session_id)

    def new_session(self, reason: str = "new_session") -> str:
        """Finalize this session and start a fresh one (``/new``, ``/reset``)."""
        old, new = self.session_id, new_session_id()
        self.finalize("new_session", new_session_id=new)
        self.session_id, self.history, self.system_prompt, self._stored = new, [], None, False
        self.taint.reset()
        self._sent_context.clear()
        self._notices, self._notices_shown = [], set()
        self.session_usage, self.session_cost, self.session_api_calls = Usage(), 0.0, 0
        memory_link.session_switch(self, old, reset=True)
        if self.context is not None:
            self.context.on_session_reset()
        if self.hooks.has_hook("on_session_reset"):
            self.hooks.fire("on_session_reset", session_id=new, platform=self.platform,
                            reason=reason, old_session_id=old, new_session_id=new)
        return new

    def branch(self, title: str | None = None) -> str:
        """Fork the conversation (``/branch``): a new stored session, linked to this one as
        its parent, holding a copy of the history and the same system prompt; the chat
        goes on in it. This session ends as ``branched``. Returns the new id."""
        if not self._stored:
            raise HermesError("nothing to branch yet: send a message first")
        old, new = self.session_id, new_session_id()
        title = title or None
        if title is None and self.sessions.title(old):
            title = self.sessions.next_title(self.sessions.title(old) or "")
        self.sessions.create(new, source=self.platform, model=self.model,
                             provider=self.provider, parent_session_id=old)
        if self.system_prompt:
            self.sessions.set_system_prompt(new, self.system_prompt)
        self.sessions.replace(new, self.history)
        if title:
            self.sessions.set_title(new, title)
        self.sessions.end(old, "branched")
        self.session_id = new
        self.session_usage, self.session_cost, self.session_api_calls = Usage(), 0.0, 0
        memory_link.session_switch(self, old)
        context_link.session_started(self)
        return new

    def switch_session(self, session_id: str) -> None:
        """Go on in another stored session (``/resume`` inside the chat): this one is
        finalized, the other one resumed with its history and system prompt."""
        if session_id == self.session_id:
            raise HermesError(f"session {session_id} is the one in use")
        if self.sessions.get(session_id) is None:
            raise SessionStoreError(f"no session {session_id!r} in the session store; /resume "
                                    "alone lists the recent ones")
        self.finalize("session_switch", new_session_id=session_id)
        self._notices, self._notices_shown = [], set()
        self.session_usage, self.session_cost, self.session_api_calls = Usage(), 0.0, 0
        self.resume(session_id)

    def rewind(self, user_turns: int = 1) -> str | None:
        """Drop the last ``user_turns`` user messages and everything after them (``/undo``,
        ``/retry``). Returns the text of the last user message removed (of a message with
        images, its text parts)."""
        removed = None
        for _ in range(user_turns):
            index = last_user_index(self.history)
            if index is None:
                break
            removed = self.history[index].get("content")
            del self.history[index:]
        if removed is not None and self._stored:
            self.sessions.replace(self.session_id, self.history)
        self.taint.rewound(self.history)
        if isinstance(removed, list):
            return content_text(removed)
        return removed if isinstance(removed, str) else None
