"""Turning agent events into terminal output (streamed text, tool progress) or JSON lines."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from .status import StatusLine

DIM, RESET, BOLD, RED, YELLOW = "\033[2m", "\033[0m", "\033[1m", "\033[31m", "\033[33m"


def _short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


class TerminalRenderer:
    """Streams the answer to ``out``; tool progress, retries and errors go to ``err``.

    ``tools``: ``"live"`` (or ``"all"``) shows a line as each tool starts (and one more if
    it did not succeed); ``"new"`` only when the tool differs from the previous call's;
    ``"verbose"`` each call's full arguments and its result; ``"summary"`` one line per call
    when it ends, with its outcome (for ``-q``); ``"off"`` none. ``show_reasoning`` streams
    the model's reasoning text (dim, on ``err``). With a ``status`` line, it says what the
    turn is waiting for."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None, *,
                 color: bool | None = None, tools: str = "live",
                 status: StatusLine | None = None):
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.color = self.out.isatty() if color is None else color
        self.tools = tools
        self.status = status
        self.at_line_start = True
        self.streamed = False
        self._started: dict[str, str] = {}  # tool_call_id -> "name args" (summary mode)
        self.show_reasoning = False
        self._last_tool = ""  # for "new"
        self._in_reasoning = False

    def _style(self, text: str, code: str) -> str:
        return f"{code}{text}{RESET}" if self.color else text

    def _newline(self) -> None:
        if not self.at_line_start:
            self.out.write("\n")
            self.at_line_start = True

    def _note(self, text: str, code: str = DIM) -> None:
        """A line on ``err``, after ending a streamed line on ``out``."""
        self._newline()
        self.out.flush()
        self.err.write(self._style(text, code) + "\n")
        self.err.flush()

    def __call__(self, event: dict[str, Any]) -> None:
        if self.status is None:
            self._render(event)
            return
        with self.status.paused():
            self._render(event)
            label = _waiting_for(event)
            if event.get("type") == "reasoning_delta" and self.show_reasoning:
                label = ""  # the reasoning text is on the line the status would take
            if label == "":
                self.status.hide()
            elif label is not None:
                self.status.show(label)

    def _render(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "reasoning_delta":
            if self.show_reasoning:
                self._newline()
                self.err.write(self._style(event["text"], DIM))
                self.err.flush()
                self._in_reasoning = True
            return
        if self._in_reasoning:  # the reasoning's line ends before anything else
            self.err.write("\n")
            self._in_reasoning = False
        if kind == "text_delta":
            text = event["text"]
            self.out.write(text)
            self.out.flush()
            self.streamed = True
            self.at_line_start = text.endswith("\n")
        elif kind == "tool_start" and self.tools != "off":
            args = event.get("args")
            limit = 2000 if self.tools == "verbose" else 80
            call = f"{event['name']} {_short(args, limit) if args else ''}".rstrip()
            new = event["name"] != self._last_tool
            self._last_tool = event["name"]
            if self.tools == "summary":
                self._started[str(event.get("tool_call_id"))] = call
            elif self.tools != "new" or new:
                self._note(f"  ⚙ {call}")
        elif kind == "tool_end" and self.tools != "off":
            problem = _problem(event)
            if self.tools == "summary":
                call = self._started.pop(str(event.get("tool_call_id")), event["name"])
                self._note(f"  ⚙ {call}" + (f" → {problem}" if problem else ""))
            elif self.tools == "verbose":
                self._note(f"    → {event.get('status')} in {event.get('duration_ms', 0):.0f} ms: "
                           f"{_short(event.get('result') or '', 300)}")
            elif problem:
                self._note(f"    {problem}")
        elif kind == "retry":
            self._note(f"  ↻ {event['message']}", YELLOW)
        elif kind == "notice":
            self._note(f"⚠ {event['message']}", YELLOW)
        elif kind == "compressed":
            self._note(f"  ⇣ {event['message']}")
        elif kind == "injected":
            self._note(f"  ↳ message added to the conversation: {_short(event['content'])}")
        elif kind == "steered":
            self._note(f"  ⏩ steer delivered with the tool result: {_short(event['content'])}")
        elif kind == "chat_note":
            self._note(event["message"])
        elif kind == "error":
            self._note(f"Error: {event['message']}", RED)
        elif kind == "turn_end":
            if event.get("response_transformed") or (not self.streamed
                                                     and event.get("final_response")):
                self._newline()
                self.out.write(event["final_response"])
                self.at_line_start = False
            if event.get("interrupted"):
                self._note("[interrupted]")
            self._newline()
            self.out.flush()
            self.streamed = False


def _problem(event: dict[str, Any]) -> str:
    """What went wrong in a ``tool_end`` ("blocked: Denied: ..."), "" when it went well. A
    JSON result's own ``status`` and ``error`` say it better than the raw text."""
    status = event.get("status")
    if status == "ok":
        return ""
    result = event.get("result")
    try:
        parsed = json.loads(result) if isinstance(result, str) else None
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and parsed.get("error"):
        return f"{parsed.get('status') or status}: {_short(parsed['error'])}"
    return f"{status}: {_short(result)}"


def _waiting_for(event: dict[str, Any]) -> str | None:
    """The status label after ``event``: text, "" to hide it, None to leave it."""
    kind = event.get("type")
    if kind in ("turn_start", "tool_end"):
        return "thinking"
    if kind == "tool_start":
        return f"running {event['name']}"
    if kind == "retry":
        return "waiting to retry"
    if kind in ("text_delta", "turn_end", "error"):
        return ""
    return None


class JsonRenderer:
    """One JSON object per line for every event (``hermes chat --json``)."""

    def __init__(self, out: TextIO | None = None):
        self.out = out or sys.stdout

    def __call__(self, event: dict[str, Any]) -> None:
        self.out.write(json.dumps(event, ensure_ascii=False, default=str) + "\n")
        self.out.flush()


def resume_hint(session_id: str) -> str:
    """The line a chat ends with (tools read the id from it)."""
    return f"Resume this session with: hermes --resume {session_id}"


def banner(agent: Any, *, color: bool) -> str:
    """Model, session and the tools grouped by the plugin that provides them."""
    def style(text: str, code: str) -> str:
        return f"{code}{text}{RESET}" if color else text

    from hermes_agent import __version__

    lines = [style(f"hermes {__version__}", BOLD) + f"  model {agent.model} via {agent.provider}",
             f"session {agent.session_id}"]
    groups: dict[str, list[str]] = {}
    for name in agent.tool_names:
        groups.setdefault(agent.tool_origin(name)[1], []).append(name)
    if groups:
        lines.append("tools:")
        for plugin in sorted(groups):
            lines.append(f"  {plugin}: {', '.join(sorted(groups[plugin]))}")
    else:
        lines.append("tools: none")
    from .plugin_notices import load_failures

    lines.extend(style(f"⚠ {line}", YELLOW) for line in load_failures(agent.kernel))
    lines.append(style("Type a message. /help lists commands; end a line with \\ to continue "
                       "it; Ctrl-C interrupts, Ctrl-D or /quit exits.", DIM))
    return "\n".join(lines)


def recap(agent: Any, *, color: bool, width: int = 200) -> str:
    """What a resumed session holds: its title, how many messages, the last exchange."""
    def style(text: str, code: str) -> str:
        return f"{code}{text}{RESET}" if color else text

    history = agent.history
    title = agent.sessions.title(agent.session_id)
    lines = [style(f"Resumed session {agent.session_id}" + (f" \"{title}\"" if title else "")
                   + f": {len(history)} message{'s' if len(history) != 1 else ''}", BOLD)]
    last_user = next((i for i in range(len(history) - 1, -1, -1)
                      if history[i].get("role") == "user"), None)
    if last_user is not None:
        lines.append(f"  you: {_short(_text(history[last_user]), width)}")
        answer = next((m for m in reversed(history[last_user + 1:])
                       if m.get("role") == "assistant" and _text(m)), None)
        if answer is not None:
            lines.append(f"  hermes: {_short(_text(answer), width)}")
    return "\n".join(lines)


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):  # multimodal parts
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict)).strip()
    return str(content or "").strip()
