"""Questions a turn asks its chat: tool approvals and the clarify tool. The question is sent
to the chat the turn belongs to; the next message from the user whose message started the
turn answers it (it is not queued as a new message). No answer in time is a denial. A
question ends once: answered, timed out, or closed with its turn (or by ``/stop``), whichever
comes first, under one lock, so a message arriving as the question times out is either its
answer or a message of its own, never swallowed by a question nobody waits for. ``always``
(saved to config.yaml for every session) is taken from a chat only with
``gateway.chat_always_approvals: true``; otherwise it approves the chat's session."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.gateway")
ANSWERS = {"o": "once", "once": "once", "y": "once", "yes": "once", "s": "session",
           "session": "session", "a": "always", "always": "always", "d": "deny",
           "deny": "deny", "n": "deny", "no": "deny"}
CLARIFY_TIMEOUT = 600.0


class Question:
    """One open question: :meth:`answer` (the loop) and the asker's timeout (its worker
    thread) race for it, and exactly one of them wins."""

    def __init__(self, asker: str) -> None:
        self.asker = asker
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)
        self._answer: str | None = None
        self._open = True

    @property
    def open(self) -> bool:
        return self._open

    def answer(self, text: str) -> bool:
        """Give the answer; False when the question has ended (timed out or closed)."""
        with self._lock:
            if not self._open:
                return False
            self._open, self._answer = False, text
            self._settled.notify_all()
            return True

    def close(self) -> None:
        """End the question unanswered (its turn ended, or was stopped)."""
        with self._lock:
            self._open = False
            self._settled.notify_all()

    def wait(self, deadline: float) -> str | None:
        """The answer, or None once ``deadline`` (``time.monotonic()``) passes or the question
        is closed; from then on :meth:`answer` refuses."""
        with self._lock:
            while self._open and (left := deadline - time.monotonic()) > 0:
                self._settled.wait(left)
            self._open = False
            return self._answer


class AskingChat(Protocol):
    """What questions use of their chat (:class:`.chat.Chat`)."""

    key: str
    asker: str
    question: Question | None


class Asker(Protocol):
    """What questions use of the runner (:class:`.runner.GatewayRunner`)."""

    kernel: Kernel

    async def reply(self, chat: Any, text: str) -> None: ...


class ChatQuestions:
    """The ``approval_callback`` and ``clarify_callback`` of one chat's agent. They run in
    the turn's worker thread and wait there; the runner's loop delivers the answer."""

    def __init__(self, runner: Asker, chat: AskingChat, loop: asyncio.AbstractEventLoop):
        self.runner, self.chat, self.loop = runner, chat, loop

    def approval(self, request: Any) -> str:
        always = bool(self.runner.kernel.config.get("gateway.chat_always_approvals", False))
        text = (f"⚠ Approval needed: {request.description}\n\n{request.command}\n\n"
                f"Reply once, session, {'always or ' if always else ''}deny "
                f"(no answer within {float(request.timeout):g} s is a denial).")
        answer = self._ask(text, float(request.timeout))
        choice = ANSWERS.get(answer.strip().lower(), "deny") if answer is not None else "timeout"
        if answer is not None and choice == "deny" and answer.strip().lower() not in ANSWERS:
            self._say("Not an answer I know; the command was denied.")
        if choice == "always" and not always:
            # "always" writes config.yaml's command_allowlist: every chat, every platform and
            # the owner's terminal would run such commands unasked. Not a chat member's call.
            self._say("Approved for this chat's session. (\"always\" is not taken from chats: "
                      "it would approve such commands everywhere; the owner can set "
                      "gateway.chat_always_approvals: true to allow it.)")
            choice = "session"
        return choice

    def clarify(self, question: str, choices: list[str] | None = None) -> str:
        lines = [f"? {question}"] + [f"{n}. {c}" for n, c in enumerate(choices or (), 1)]
        answer = (self._ask("\n".join(lines), CLARIFY_TIMEOUT) or "").strip()
        if choices and answer.isdigit() and 1 <= int(answer) <= len(choices):
            return choices[int(answer) - 1]
        return answer

    def _ask(self, text: str, timeout: float) -> str | None:
        """Send ``text`` and wait for the answer; None when none came in ``timeout`` (counted
        from the call, not from when the question was sent, so the question ends no later
        than the approval gate waits for it)."""
        deadline = time.monotonic() + timeout
        question = Question(self.chat.asker)
        previous, self.chat.question = self.chat.question, question
        if previous is not None:
            previous.close()
        try:
            self._say(text)
            return question.wait(deadline)
        finally:
            question.close()
            if self.chat.question is question:
                self.chat.question = None

    def _say(self, text: str) -> None:
        sent = asyncio.run_coroutine_threadsafe(self.runner.reply(self.chat, text), self.loop)
        try:
            sent.result(60)
        except Exception as exc:
            log.warning("gateway: could not ask %s: %s", self.chat.key, exc)


def answers_question(chat: AskingChat, user_id: str, text: str) -> bool:
    """Whether ``text`` answers the chat's open question (and answer it if so)."""
    question = chat.question
    if question is None or user_id != question.asker:
        return False
    return question.answer(text)  # False when it ended meanwhile: a message of its own
