"""What ``/verbose`` and ``/reasoning show`` change in the terminal renderer: which tool calls
get a line, how much of them, and the reasoning text."""

from __future__ import annotations

import io

from hermes_agent.builtin_plugins.agent.chat.render import TerminalRenderer


def calls(mode: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    renderer = TerminalRenderer(out, err, color=False, tools=mode)
    for n, name in enumerate(["read_file", "read_file", "terminal", "read_file"]):
        renderer({"type": "tool_start", "name": name, "tool_call_id": str(n),
                  "args": {"path": "x" * 100}})
        renderer({"type": "tool_end", "name": name, "tool_call_id": str(n), "status": "ok",
                  "duration_ms": 12.0, "result": "the result text"})
    return err.getvalue()


def test_each_verbose_mode_shows_its_share_of_the_tool_calls() -> None:
    assert calls("off") == ""
    assert calls("all").count("⚙") == 4 and "the result text" not in calls("all")
    assert [line.split()[1] for line in calls("new").splitlines()] == [
        "read_file", "terminal", "read_file"]  # a line when the tool changes
    verbose = calls("verbose")
    assert "x" * 100 in verbose and verbose.count("→ ok in 12 ms: the result text") == 4
    assert "x" * 100 not in calls("all")  # shortened there


def test_reasoning_text_is_shown_only_when_asked() -> None:
    out, err = io.StringIO(), io.StringIO()
    renderer = TerminalRenderer(out, err, color=False)
    renderer({"type": "reasoning_delta", "text": "hidden thought"})
    renderer.show_reasoning = True
    renderer({"type": "reasoning_delta", "text": "shown thought"})
    renderer({"type": "text_delta", "text": "Answer."})
    assert err.getvalue() == "shown thought\n" and out.getvalue() == "Answer."
