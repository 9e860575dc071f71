"""Where the agent loop keeps a session's fence nonce and taint (:mod:`.provenance`).

The nonce is drawn when a session starts (or first resumes without one), stored in the
session's ``model_config`` JSON and passed to prompt layers (``LayerRequest.fence_nonce``)
and to the tool executor, which fences untrusted results with it. The session is tainted
from its first untrusted message on, a resumed one too; the user sees one notice when that
happens (or when a tainted session is resumed), and a tainted turn's tool calls go through
the :class:`~.taint_policy.TaintPolicy`, its replies through the :class:`~.exfil.ReplyFilter`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_agent.kits.fence import new_nonce, sources

from .exfil import ReplyFilter, scrub_reply
from .provenance import first_untrusted, source_of, user_and_untrusted_text
from .taint_policy import TaintPolicy

if TYPE_CHECKING:
    from .host import AgentHost as Agent

NOTICE = ("this turn read untrusted text from {source}: from now on in this session, calls "
          "that send data out or change what later sessions see need your approval "
          "(security.tainted_turns: {mode}) and links built with data in them are removed")
RESUMED = ("this session holds untrusted text from {source}: calls that send data out or "
           "change what later sessions see need your approval (security.tainted_turns: {mode})")


class SessionTaint:
    """One agent's nonce and taint for its current session."""

    def __init__(self, agent: "Agent"):
        self.agent = agent
        self.nonce = ""
        self.source: str | None = None
        self.announce: str | None = None  # a notice not shown yet
        self.sender_untrusted = False  # this turn's message came from an untrusted sender

    def mode(self) -> str:
        return str(self.agent.kernel.config.get("security.tainted_turns", "ask") or "ask")

    def started(self) -> None:
        """A new session: a fresh nonce (stored by the caller when it creates the row)."""
        self.nonce, self.source, self.announce = new_nonce(), None, None

    def resumed(self, session_id: str, history: list[dict[str, Any]]) -> None:
        agent = self.agent
        self.nonce = agent.sessions.fence_nonce(session_id)
        if not self.nonce:  # a session stored before nonces were kept
            self.nonce = new_nonce()
            agent.sessions.set_fence_nonce(session_id, self.nonce)
        self.source = first_untrusted(history)
        self.announce = (RESUMED.format(source=self.source, mode=self.mode())
                         if self.source else None)

    def prompt_built(self, prompt: str | None) -> None:
        """The system prompt holds untrusted text (an untrusted project's context files,
        fenced with the session's nonce): the session is tainted from its start."""
        if self.source is None and prompt and self.nonce:
            found = sources(prompt, self.nonce)
            if found:
                self.source = found[0]
                self.announce = NOTICE.format(source=self.source, mode=self.mode())

    def rewound(self, history: list[dict[str, Any]]) -> None:
        """``/undo``, ``/retry``: the taint goes with the last untrusted message removed
        (not the one the system prompt holds)."""
        self.source = first_untrusted(history)
        self.prompt_built(self.agent.system_prompt)
        if self.source is None:
            self.announce = None

    def reset(self) -> None:
        self.nonce, self.source, self.announce = "", None, None

    def recorded(self, message: dict[str, Any]) -> None:
        """A message entered the context: the first untrusted one taints the session."""
        if self.source is None:
            source = source_of(message)
            if source is not None:
                self.source = source
                self.announce = NOTICE.format(source=source, mode=self.mode())

    def show(self, emit: Any) -> None:
        if self.announce:
            emit({"type": "notice", "level": "warning", "reason": "tainted",
                  "source": self.source, "message": self.announce,
                  "session_id": self.agent.session_id})
            self.announce = None

    def _known_text(self) -> str:
        return user_and_untrusted_text(self.agent.history)

    def policy(self, source: str | None = None) -> TaintPolicy | None:
        """The turn's policy; ``source`` taints it when the session is not (yet) tainted: a
        script's later calls after one of its calls returned untrusted text."""
        source = self.source or source
        if source is None:
            return None
        return TaintPolicy.for_turn(self.agent.kernel, source, self._known_text,
                                    asker_trusted=not self.sender_untrusted)

    def reply_filter(self) -> ReplyFilter | None:
        policy = self.policy()
        if policy is None or policy.mode == "allow":
            return None
        return ReplyFilter(policy.known)

    def scrub(self, text: str) -> str:
        """A whole reply, filtered when the session is tainted."""
        policy = self.policy()
        if policy is None or policy.mode == "allow" or not text:
            return text
        return scrub_reply(text, policy.known)[0]
