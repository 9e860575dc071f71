"""The interactive terminal chat: banner, line editing with history (readline), multi-line
input (end a line with ``\\``, or wrap a block in triple quotes), streamed answers, Ctrl-C to
interrupt a turn, lines typed during a turn (``/steer``, ``/queue``; see :mod:`.busy_input`),
slash commands, Ctrl-D or ``/quit`` to leave."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .busy_input import RUN_AT_ONCE, TurnInput, command_name
from .plugin_notices import FaultNotices
from .questions import TerminalQuestions
from .render import TerminalRenderer, banner, recap, resume_hint
from .status import StatusLine
from .runner import ChatStopped, run_turn
from .slash import QUIT, ChatState, run_slash

if TYPE_CHECKING:
    from hermes_agent import Kernel

PROMPT, MORE = "› ", "… "


def _setup_readline(history: Path) -> Any:
    try:
        import readline
    except ImportError:  # pragma: no cover - e.g. some Windows builds
        return None
    try:
        readline.read_history_file(history)
    except OSError:
        pass
    readline.set_history_length(2000)
    return readline


def read_message(out: TextIO) -> str | None:
    """One user message (several lines joined); None at end of input."""
    lines: list[str] = []
    prompt = PROMPT
    block = False
    while True:
        try:
            line = input(prompt)
        except EOFError:
            if lines:
                return "\n".join(lines)
            return None
        if not lines and line.strip() == '"""':
            block, prompt = True, MORE
            continue
        if block:
            if line.strip() == '"""':
                return "\n".join(lines)
            lines.append(line)
            continue
        if line.endswith("\\"):
            lines.append(line[:-1])
            prompt = MORE
            continue
        lines.append(line)
        return "\n".join(lines)


class Turns:
    """Runs the chat's turns, reading what is typed meanwhile (see :mod:`.busy_input`)."""

    def __init__(self, state: ChatState, renderer: TerminalRenderer,
                 questions: TerminalQuestions, status: StatusLine | None, readline: Any):
        self.state, self.renderer, self.questions, self.status = state, renderer, questions, status
        self.readline = readline
        self.input = TurnInput(self.typed)

    def note(self, text: str) -> None:
        self.renderer({"type": "chat_note", "message": text})

    def typed(self, line: str) -> None:
        """A line typed while the turn runs."""
        state = self.state
        if self.readline is not None:
            self.readline.add_history(line)
        name = command_name(line.strip())
        if name in RUN_AT_ONCE:
            result = run_slash(state, line.strip())
            if isinstance(result, str):
                self.note(result)
            return
        state.pending.append(line)
        if name is None:
            self.note("Queued as the next message (/steer TEXT adds it to the running turn "
                      "instead).")
        else:
            self.note(f"/{name} runs when this turn ends.")

    def run(self, message: str) -> None:
        self.state.turn_running = True
        self.input.start_turn()
        try:
            run_turn(self.state.agent, message, self.renderer, self.questions, self.status,
                     self.input)
        finally:
            self.state.turn_running = False
            left = self.state.agent.take_steer()
            if left is not None:  # no tool result came to carry it
                self.state.pending.appendleft(left)
                self.note("The turn ended before a tool result could carry the /steer text; "
                          "it is sent as the next message.")

    def send_injected(self, limit: int = 5) -> None:
        """Messages plugins injected after a turn's last model call go in as the next turns
        (at most ``limit`` in a row; more wait for the next message)."""
        for _ in range(limit):
            text = self.state.agent.take_injected()
            if text is None:
                return
            self.renderer({"type": "injected", "content": text})
            self.run(text)


def names_an_image(line: str, cwd: Any) -> bool:
    from .images import names_an_image as names

    return names(line, cwd)


def with_images(state: ChatState, message: str, out: TextIO) -> Any:
    """The message with the images ``/image`` attached and those whose paths it names."""
    from .images import compose

    if not isinstance(message, str):  # /retry of a message with images: as it was
        return message
    content, notes = compose(state.kernel, message, state.images)
    state.images = []
    for note in notes:
        out.write(f"warning: image not attached: {note}\n")
    return content


def _arrived(out: TextIO, text: str) -> None:
    """Said from a background thread while the chat waits at its prompt."""
    out.write(f"\n⚙ {text}; press Enter to hand the results to the model\n{PROMPT}")
    out.flush()


def _said(out: TextIO, text: str) -> None:
    """Printed from a background thread (a ``/background`` task's answer)."""
    out.write(f"\n⚙ {text}\n{PROMPT}")
    out.flush()


def interactive(agent: Any, kernel: Kernel, questions: TerminalQuestions, *,
                out: TextIO | None = None) -> int:
    out = out or sys.stdout
    color = out.isatty()
    history_file = Path(kernel.home) / "chat_history"
    readline = _setup_readline(history_file)
    status = StatusLine(sys.stderr) if sys.stderr.isatty() else None
    renderer = TerminalRenderer(out, sys.stderr, color=color, status=status)
    questions.status = status
    state = ChatState(agent, kernel, renderer=renderer,
                      say=lambda text: _said(out, text))
    turns = Turns(state, renderer, questions, status, readline)
    notices = FaultNotices(kernel)
    agent.extra_tool_kwargs["background_notify"] = lambda text: _arrived(out, text)
    out.write(banner(agent, color=color) + "\n")
    if agent.history:
        out.write(recap(agent, color=color) + "\n")
    out.flush()
    reason = "shutdown"
    try:
        while not state.quit:
            if state.pending:  # typed during the last turn
                message = state.pending.popleft()
                out.write(f"{PROMPT}{message}\n")
            else:
                try:
                    message = read_message(out)
                except KeyboardInterrupt:
                    out.write("\n(Ctrl-D or /quit leaves)\n")
                    continue
            if message is None:
                out.write("\n")
                break
            if not message.strip():  # Enter alone: what background work sent goes in now
                try:
                    turns.send_injected()
                except KeyboardInterrupt:
                    out.write("\n[interrupted]\n")
                continue
            if message.startswith("/") and "\n" not in message \
                    and not names_an_image(message, kernel.cwd or Path.cwd()):
                try:
                    result = run_slash(state, message.strip())
                except KeyboardInterrupt:  # Ctrl-C during a slash command stops it, not the chat
                    out.write("\n[interrupted]\n")
                    continue
                if result is QUIT:
                    break
                if isinstance(result, str):
                    out.write(result + "\n")
                if state.resend is None:
                    continue
                message, state.resend = state.resend, None
            try:
                turns.run(with_images(state, message, out))
                turns.send_injected()
            except KeyboardInterrupt:  # a Ctrl-C just before or after a turn: no turn to stop
                out.write("\n[interrupted]\n")
            for line in notices.new():
                out.write(f"warning: {line}\n")
    except ChatStopped:  # SIGTERM or SIGHUP during a turn
        reason = "interrupted"
        raise
    finally:
        from ..delegate import subagents_of

        if subagents_of(agent).stop():  # background subagents end with the chat
            subagents_of(agent).wait(10)
        if readline is not None:
            try:
                readline.write_history_file(history_file)
            except OSError:
                pass
        agent.finalize(reason)
        if agent.session_stored:
            out.write(resume_hint(agent.session_id) + "\n")
            out.flush()
    return 0
