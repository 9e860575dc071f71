"""Turning agent events into terminal output (streamed text, tool progress) or JSON lines."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

DIM, RESET, BOLD, RED, YELLOW = "\033[2m", "\033[0m", "\033[1m", "\033[31m", "\033[33m"


def _short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


class TerminalRenderer:
    """Streams the answer to ``out``; tool progress and errors go to ``err``."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None, *,
                 color: bool | None = None, show_tools: bool = True):
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.color = self.out.isatty() if color is None else color
        self.show_tools = show_tools
        self.at_line_start = True
        self.streamed = False

    def _style(self, text: str, code: str) -> str:
        return f"{code}{text}{RESET}" if self.color else text

    def _newline(self) -> None:
        if not self.at_line_start:
            self.out.write("\n")
            self.at_line_start = True

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "text_delta":
            text = event["text"]
            self.out.write(text)
            self.out.flush()
            self.streamed = True
            self.at_line_start = text.endswith("\n")
        elif kind == "tool_start" and self.show_tools:
            self._newline()
            args = event.get("args")
            summary = _short(args) if args else ""
            self.err.write(self._style(f"  ⚙ {event['name']} {summary}", DIM) + "\n")
            self.err.flush()
        elif kind == "tool_end" and self.show_tools and event.get("status") != "ok":
            self.err.write(self._style(f"    {event['status']}: {_short(event.get('result'))}",
                                       DIM) + "\n")
            self.err.flush()
        elif kind == "notice":
            self._newline()
            self.err.write(self._style(f"⚠ {event['message']}", YELLOW) + "\n")
            self.err.flush()
        elif kind == "injected":
            self._newline()
            self.err.write(self._style(f"  ↳ message added to the conversation: "
                                       f"{_short(event['content'])}", DIM) + "\n")
            self.err.flush()
        elif kind == "error":
            self._newline()
            self.err.write(self._style(f"Error: {event['message']}", RED) + "\n")
            self.err.flush()
        elif kind == "turn_end":
            if event.get("response_transformed") or (not self.streamed
                                                     and event.get("final_response")):
                self._newline()
                self.out.write(event["final_response"])
                self.at_line_start = False
            if event.get("interrupted"):
                self._newline()
                self.err.write(self._style("[interrupted]", DIM) + "\n")
            self._newline()
            self.out.flush()
            self.streamed = False


class JsonRenderer:
    """One JSON object per line for every event (``hermes chat --json``)."""

    def __init__(self, out: TextIO | None = None):
        self.out = out or sys.stdout

    def __call__(self, event: dict[str, Any]) -> None:
        self.out.write(json.dumps(event, ensure_ascii=False, default=str) + "\n")
        self.out.flush()


def banner(agent: Any, *, color: bool) -> str:
    """Model, session and the tools grouped by the plugin that provides them."""
    def style(text: str, code: str) -> str:
        return f"{code}{text}{RESET}" if color else text

    from hermes_agent import __version__

    lines = [style(f"hermes {__version__}", BOLD) + f"  model {agent.model} via {agent.provider}",
             f"session {agent.session_id}"]
    groups: dict[str, list[str]] = {}
    for name in agent.tool_names:
        spec = agent.kernel.tools.tools.get(name)
        groups.setdefault(spec.plugin if spec else "?", []).append(name)
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
