"""One ToolCallContext per tool call: the executor builds it once, the approval gate, a core
tool and a handler written for the original (``(args, **kwargs)``) all see its values; the
arguments are parsed once; a tool_error result's status is known without parsing it."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.api import ToolCallContext, tool_error, with_context
from hermes_agent.kits.tool_results import tool_status
from hermes_agent.builtin_plugins.agent import tool_exec
from hermes_agent.builtin_plugins.agent.tool_exec import ToolExecutor, ToolTurn
from hermes_agent.builtin_plugins.core_tools.approval import ApprovalGate
from hermes_agent.builtin_plugins.core_tools.todo import TodoStore
from hermes_agent.api import ToolCall
from hermes_agent.testing import make_kernel

SEEN: dict[str, Any] = {}


def legacy(args: dict[str, Any], **kwargs: Any) -> str:
    """A handler as the plugin guide writes them."""
    SEEN["legacy"] = (args, kwargs)
    return json.dumps({"ok": True})


@with_context
def modern(args: dict[str, Any], ctx: ToolCallContext) -> str:
    SEEN["modern"] = (args, ctx)
    return json.dumps({"ok": True})


def failing(args: dict[str, Any], **kwargs: Any) -> str:
    return tool_error("quota exceeded", error_type="quota")


def plain_error(args: dict[str, Any], **kwargs: Any) -> str:
    return json.dumps({"error": "written by hand"})


def plugin(ctx: Any) -> None:
    for name, handler in (("legacy", legacy), ("modern", modern), ("failing", failing),
                          ("plain_error", plain_error)):
        ctx.register_tool(name=name, toolset="probe", handler=handler,
                          schema={"name": name, "description": name, "parameters": {}})


@pytest.fixture
def kernel(tmp_path: Path) -> Any:
    SEEN.clear()
    return make_kernel(tmp_path / "home", builtins=True, plugins=[plugin])


def hook(kernel: Any, name: str, callback: Any) -> None:
    status = kernel.register_plugin(lambda ctx: ctx.register_hook("pre_tool_call", callback),
                                    name)
    assert status.state == "loaded", status.reason


def turn_for(kernel: Any, work: Path, **fields: Any) -> ToolTurn:
    context = ToolCallContext(session_id="s1", task_id="t1", turn_id="turn1", platform="cli",
                              cwd=work, extra={"agent": None}, **fields)
    return ToolTurn(context, allowed=frozenset(kernel.tools.tools))


def test_one_context_reaches_the_gate_a_core_tool_and_a_legacy_handler(
        kernel: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}
    decide, handle = ApprovalGate.decide, TodoStore.handle

    def gate(self: ApprovalGate, subject: str, description: str, keys: Any,
             ctx: ToolCallContext) -> Any:
        seen.setdefault("gate", []).append(ctx)
        return decide(self, subject, description, keys, ctx)

    def todo(self: TodoStore, args: dict[str, Any], ctx: ToolCallContext) -> str:
        seen["todo"] = ctx
        return handle(self, args, ctx)

    monkeypatch.setattr(ApprovalGate, "decide", gate)
    monkeypatch.setattr(TodoStore, "handle", todo)
    hook(kernel, "asker", lambda **kw: {"action": "approve"} if kw["tool_name"] == "modern"
         else None)
    approve = lambda request: "once"  # noqa: E731
    turn = turn_for(kernel, tmp_path, approval_callback=approve)
    calls = [ToolCall("c1", "todo", '{"todos": []}'), ToolCall("c2", "legacy", '{"x": 1}'),
             ToolCall("c3", "modern", '{"y": 2}')]
    outcomes = ToolExecutor(kernel).run_all(calls, turn)
    assert [o.status for o in outcomes] == ["ok", "ok", "ok"], [o.result for o in outcomes]

    core = seen["todo"]
    assert isinstance(core, ToolCallContext) and core.tool_call_id == "c1"
    assert (core.session_id, core.task_id, core.turn_id, core.cwd) == ("s1", "t1", "turn1",
                                                                      tmp_path.resolve())
    assert core.interrupt_event is turn.interrupt and core.approval_callback is approve

    args, kwargs = SEEN["legacy"]
    assert args == {"x": 1}
    assert kwargs == {**core.as_kwargs(), "tool_call_id": "c2"}
    assert set(kwargs) == {"session_id", "task_id", "turn_id", "tool_call_id", "platform", "chat_id",
                           "cwd", "approval_callback", "interrupt_event", "agent"}
    assert kwargs["cwd"] == str(tmp_path.resolve()) and kwargs["interrupt_event"] is turn.interrupt

    _, ctx = SEEN["modern"]
    assert seen["gate"] == [ctx] and seen["gate"][0] is ctx  # the gate saw the handler's context
    assert ctx.tool_call_id == "c3"


def test_arguments_are_parsed_once_and_shared_by_plan_hooks_and_handler(
        kernel: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    texts = ['{"path": "a.txt"}', '{"path": "b.txt"}', '{"x": 1}']
    parsed: list[str] = []
    loads = json.loads

    def counting(text: Any, *args: Any, **kwargs: Any) -> Any:
        if text in texts:
            parsed.append(text)
        return loads(text, *args, **kwargs)

    monkeypatch.setattr(json, "loads", counting)
    hook_args: list[Any] = []
    hook(kernel, "watcher", lambda **kw: hook_args.append(kw["args"]))
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    calls = [ToolCall("r1", "read_file", texts[0]), ToolCall("r2", "read_file", texts[1]),
             ToolCall("l1", "legacy", texts[2])]
    outcomes = ToolExecutor(kernel).run_all(calls, turn_for(kernel, tmp_path))
    assert [o.status for o in outcomes] == ["ok", "ok", "ok"]
    assert sorted(parsed) == sorted(texts)  # once each, though read_file calls were planned
    assert SEEN["legacy"][0] is hook_args[-1] is outcomes[2].args  # one dict all the way


def test_a_tool_error_status_is_known_without_parsing_the_result(
        kernel: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = kernel.tools.dispatch("failing", {})
    parsed: list[str] = []
    loads = json.loads
    monkeypatch.setattr(json, "loads", lambda text, *a, **k: parsed.append(text) or loads(text))
    assert tool_status(result) == ("error", "quota", "quota exceeded")
    outcome = ToolExecutor(kernel).run_one(ToolCall("f1", "failing", "{}"),
                                           turn_for(kernel, tmp_path))
    assert (outcome.status, outcome.error_type) == ("error", "quota")
    assert parsed == ["{}"]  # the arguments only, never the result
    assert type(outcome.result) is str and loads(outcome.result)["error"] == "quota exceeded"
    # A handler's own JSON with an "error" key still counts as an error (parsed, as before).
    hand = ToolExecutor(kernel).run_one(ToolCall("p1", "plain_error", "{}"),
                                        turn_for(kernel, tmp_path))
    assert (hand.status, hand.error_type) == ("error", "tool_error")


def test_a_context_handler_called_with_keyword_arguments_gets_a_context(kernel: Any,
                                                                        tmp_path: Path) -> None:
    event = threading.Event()
    result = kernel.tools.dispatch("modern", {"y": 1}, session_id="s7", cwd=str(tmp_path),
                                   interrupt_event=event, agent="me")
    assert json.loads(result) == {"ok": True}
    _, ctx = SEEN["modern"]
    assert (ctx.session_id, ctx.cwd, ctx.interrupt_event) == ("s7", tmp_path.resolve(), event)
    assert ctx.extra == {"agent": "me"}
    assert ToolCallContext.from_kwargs(ctx.as_kwargs()) == ctx  # one mapping, both ways
    # Keyword arguments beside a context reach a context handler through ``extra``.
    kernel.tools.dispatch("modern", {}, context=ctx, note="hi")
    assert SEEN["modern"][1].extra == {"agent": "me", "note": "hi"}
    kernel.tools.dispatch("legacy", {}, context=ctx, note="hi")
    assert SEEN["legacy"][1] == {**ctx.as_kwargs(), "note": "hi"}


DOCS = Path(__file__).parents[2] / "docs"


def python_block(doc: str, heading: str) -> str:
    from textwrap import dedent

    section = doc[doc.index(heading):]
    return dedent(section.split("```python\n", 1)[1].split("```", 1)[0])


def test_the_docs_list_every_field_and_keyword_of_the_context() -> None:
    from dataclasses import fields

    tools = (DOCS / "tools.md").read_text(encoding="utf-8")
    section = tools[tools.index("## What the caller"):tools.index("## Toolsets")]
    names = {f.name for f in fields(ToolCallContext)}
    names |= set(ToolCallContext(approval_callback=print, clarify_callback=print,
                                 interrupt_event=threading.Event()).as_kwargs())
    assert [n for n in sorted(names) if f"`{n}`" not in section] == []


def test_the_docs_examples_run_with_a_context_and_with_keywords(tmp_path: Path) -> None:
    guide = (DOCS / "writing-plugins.md").read_text(encoding="utf-8")
    namespace: dict[str, Any] = {}
    exec(python_block(guide, "## The tool-call context"), namespace)
    kernel = make_kernel(tmp_path / "home", plugins=[namespace["register"]])
    ctx = ToolCallContext(session_id="s1")
    assert json.loads(kernel.tools.dispatch("greet", {"name": "Ada"}, context=ctx)) == {
        "greeting": "Hello, Ada", "session": "s1"}
    assert json.loads(kernel.tools.dispatch("greet", {"name": "Ada"}, session_id="s2"))[
        "session"] == "s2"
    assert tool_status(kernel.tools.dispatch("greet", {}))[0] == "error"

    tools = (DOCS / "tools.md").read_text(encoding="utf-8")
    exec(python_block(tools, "## What the caller"), namespace)
    weather = namespace["weather"]
    assert json.loads(weather({"city": "Oslo"}, ctx))["asked_in"] == str(ctx.cwd)
    assert json.loads(weather({"city": "Oslo"}, cwd=str(tmp_path)))["asked_in"] == str(
        tmp_path.resolve())
