"""``ctx.register_middleware`` end to end: plugins written the original's way (a folder with
plugin.yaml and ``register(ctx)`` in a throwaway home) register each kind; real turns run
against the fake Chat Completions server.

- ``tool_request`` rewrites the arguments the tool gets, before ``pre_tool_call``; the
  change is in the ``middleware_trace`` of ``pre_tool_call`` and ``post_tool_call``.
- ``tool_execution`` wraps the tool: ``next_call`` runs it once, a second call raises; a
  callback raising before ``next_call`` is skipped, one raising after it keeps the result; a
  tool's error propagates.
- ``llm_request`` rewrites what the server receives, before ``pre_api_request``;
  ``llm_execution`` wraps the call.
- an unknown kind is a warning, and stored.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest
from hermes_agent.builtin_plugins.agent.loop import Agent
from hermes_agent.testing import HookRecorder, write_plugin
from hermes_agent.testing.fake_llm import reply_error, reply_text, reply_tool_call

TOOL = '''
import json

RUNS = []


def echo(args, **kwargs):
    RUNS.append(dict(args))
    if args.get("explode"):
        raise RuntimeError("the tool itself failed")
    return json.dumps({"echo": args})


SCHEMA = {"name": "echo", "description": "Echo the arguments.",
          "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}
'''

MANIFEST = """\
name: {name}
version: 1.0.0
provides_tools: [echo]
"""


def _plugin(home: Path, name: str, body: str) -> Any:
    """A directory plugin ``name`` with the ``echo`` tool and ``body`` (its ``middleware(ctx)``
    registers what the test needs); returns nothing: read its module after boot."""
    source = TOOL + body + '''

def register(ctx):
    ctx.register_tool(name="echo", toolset="echo", schema=SCHEMA, handler=echo)
    middleware(ctx)
'''
    write_plugin(home / "plugins", name, source, manifest=MANIFEST.format(name=name))


def _module(name: str) -> Any:
    return sys.modules[f"hermes_plugins.{name}"]


def _boot(kernel_for: Any, name: str) -> Any:
    kernel = kernel_for(plugins={"enabled": ["calculator", name]})
    assert kernel.plugins[name].state == "loaded", kernel.plugins[name].reason
    return kernel


def _turn(kernel_for: Any, server: Any, name: str, message: str, *replies: Any,
          hooks: tuple[str, ...] = ()) -> tuple[Any, HookRecorder, Any]:
    """Boot a kernel with plugin ``name``, record ``hooks`` (all when empty), script the
    server's ``replies`` and run one turn: (the agent, the recorder, the turn's result)."""
    kernel = _boot(kernel_for, name)
    recorder = HookRecorder(kernel, hooks)
    server.script(*replies)
    agent = Agent(kernel)
    return agent, recorder, agent.run_conversation(message)


def _tool_results(server: Any) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in server.last.body["messages"] if m["role"] == "tool"]


def test_tool_request_rewrites_the_arguments_before_pre_tool_call(kernel_for, server,
                                                                  home: Path) -> None:
    _plugin(home, "rewriter", '''
SEEN = []

def middleware(ctx):
    def shout(tool_name, args, original_args, **context):
        SEEN.append(("shout", tool_name, dict(args), dict(original_args), context))
        return {"args": {**args, "text": args["text"].upper()}, "source": "shout",
                "reason": "louder"}

    def meddle(args, original_args, **context):  # in place, returning None: no effect
        args["text"] = "meddled"
        original_args["text"] = "meddled"

    def tag(args, original_args, **context):
        SEEN.append(("tag", dict(args), dict(original_args)))
        return {"args": {**args, "tag": 1}}

    def broken(**context):
        raise ValueError("rewriter is broken")

    for callback in (shout, meddle, broken, tag):
        ctx.register_middleware("tool_request", callback)
''')
    agent, recorder, turn = _turn(kernel_for, server, "rewriter", "echo hi",
                                  reply_tool_call("echo", {"text": "hi"}), reply_text("done"),
                                  hooks=("pre_tool_call", "post_tool_call"))
    assert turn.final_response == "done"

    module = _module("rewriter")
    assert module.RUNS == [{"text": "HI", "tag": 1}]  # what the tool got
    assert _tool_results(server) == [{"echo": {"text": "HI", "tag": 1}}]
    trace = [{"source": "shout", "reason": "louder"}, {"source": "plugin"}]
    (pre,), (post,) = recorder.payloads("pre_tool_call"), recorder.payloads("post_tool_call")
    assert pre["args"] == post["args"] == {"text": "HI", "tag": 1}
    assert pre["middleware_trace"] == post["middleware_trace"] == trace
    first, second = module.SEEN
    assert first[:4] == ("shout", "echo", {"text": "hi"}, {"text": "hi"})
    context = first[4]
    assert context["session_id"] == agent.session_id == pre["session_id"]
    assert context["tool_call_id"] == pre["tool_call_id"] and context["turn_id"] == pre["turn_id"]
    assert context["middleware_schema_version"] == "hermes.middleware.v1"
    assert second == ("tag", {"text": "HI"}, {"text": "hi"})  # the meddling changed nothing


def test_tool_request_rewrites_only_what_it_returns_and_a_blocked_call_keeps_the_trace(
        kernel_for, server, home: Path) -> None:
    _plugin(home, "guarded", '''
def middleware(ctx):
    ctx.register_middleware("tool_request",
                            lambda args, **kw: {"args": {"text": "rm"}, "name": "swap"})
    ctx.register_middleware("tool_request", lambda **kw: "not a dict")
    ctx.register_middleware("tool_request", lambda **kw: {"args": "not a dict"})
    ctx.register_hook("pre_tool_call", lambda args, **kw: {"action": "block", "message": "no"}
                      if args.get("text") == "rm" else None)
''')
    _, recorder, _ = _turn(kernel_for, server, "guarded", "echo ls",
                           reply_tool_call("echo", {"text": "ls"}), reply_text("blocked"),
                           hooks=("post_tool_call",))
    assert _module("guarded").RUNS == []
    (post,) = recorder.payloads("post_tool_call")
    assert post["status"] == "blocked" and post["args"] == {"text": "rm"}
    assert post["middleware_trace"] == [{"name": "swap"}]


def test_tool_execution_wraps_the_tool_and_next_call_runs_it_once(
        kernel_for, server, home: Path, caplog: pytest.LogCaptureFixture) -> None:
    _plugin(home, "wrapper", '''
import json

EVENTS = []

def middleware(ctx):
    def failing_first(**context):
        EVENTS.append("failing_first")
        raise ValueError("wrapper broke before next_call")

    def outer(tool_name, args, original_args, next_call, **context):
        EVENTS.append(("outer", tool_name, dict(args), dict(original_args)))
        result = next_call()
        try:
            next_call()
        except RuntimeError as exc:
            EVENTS.append(("twice", str(exc)))
        return json.dumps({"wrapped": json.loads(result)})

    def inner(args, next_call, **context):
        EVENTS.append(("inner", dict(args)))
        result = next_call({**args, "text": "from inner"})
        raise KeyError("inner broke after next_call")  # the result below still counts

    for callback in (failing_first, outer, inner):
        ctx.register_middleware("tool_execution", callback)
''')
    with caplog.at_level(logging.WARNING, logger="hermes_agent.middleware"):
        _, _, turn = _turn(kernel_for, server, "wrapper", "echo",
                           reply_tool_call("echo", {"text": "hi"}), reply_text("done"))
    assert turn.final_response == "done"
    module = _module("wrapper")
    assert module.RUNS == [{"text": "from inner"}]  # once, with the arguments next_call got
    assert _tool_results(server) == [{"wrapped": {"echo": {"text": "from inner"}}}]
    assert module.EVENTS[:3] == ["failing_first", ("outer", "echo", {"text": "hi"},
                                                   {"text": "hi"}), ("inner", {"text": "hi"})]
    assert module.EVENTS[3][0] == "twice" and "next_call() twice" in module.EVENTS[3][1]
    warnings = [r.getMessage() for r in caplog.records]
    assert any("hermes_plugins.wrapper" in w and "failing_first" in w and "skipped" in w
               for w in warnings), warnings
    assert any("inner broke after next_call" in w and "downstream result kept" in w
               for w in warnings), warnings


def test_tool_execution_sees_a_failing_tool_as_its_error_result(kernel_for, server,
                                                                home: Path) -> None:
    # the registry turns a handler's exception into an error result, so the middleware
    # around it gets that result (and may change it), not an exception
    _plugin(home, "passthrough", '''
SEEN = []

def middleware(ctx):
    def watch(next_call, **context):
        result = next_call()
        SEEN.append(result)
        return result

    ctx.register_middleware("tool_execution", watch)
''')
    _turn(kernel_for, server, "passthrough", "explode",
          reply_tool_call("echo", {"text": "x", "explode": True}), reply_text("ok"))
    module = _module("passthrough")
    assert module.RUNS == [{"text": "x", "explode": True}]
    (result,) = _tool_results(server)
    assert "the tool itself failed" in result["error"]
    assert [json.loads(text) for text in module.SEEN] == [result]


def test_llm_request_rewrites_what_the_server_receives_before_pre_api_request(
        kernel_for, server, home: Path) -> None:
    _plugin(home, "redactor", '''
SEEN = []

def middleware(ctx):
    def redact(request, original_request, **context):
        SEEN.append((context["api_call_count"], context["model"], context["provider"],
                     context["session_id"], context["api_request_id"]))
        messages = [{**m, "content": m["content"].replace("hunter2", "[secret]")}
                    if isinstance(m.get("content"), str) else m for m in request["messages"]]
        return {"request": {**request, "messages": messages, "temperature": 0.25},
                "source": "redactor", "reason": "secret"}

    ctx.register_middleware("llm_request", redact)
''')
    agent, recorder, turn = _turn(kernel_for, server, "redactor", "my password is hunter2",
                                  reply_tool_call("echo", {"text": "x"}), reply_text("done"),
                                  hooks=("pre_api_request",))
    assert turn.final_response == "done"
    first, second = [r.body for r in server.requests if r.method == "POST"][-2:]
    for body in (first, second):
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        assert users == ["my password is [secret]"] and body["temperature"] == 0.25
    pre = recorder.payloads("pre_api_request")
    assert [p["middleware_trace"] for p in pre] == [[{"source": "redactor",
                                                      "reason": "secret"}]] * 2
    assert pre[0]["request"]["temperature"] == 0.25  # the request after middleware
    assert "hunter2" not in json.dumps(pre[0]["request"])
    assert [seen[0] for seen in _module("redactor").SEEN] == [1, 2]
    count, model, provider, session, request_id = _module("redactor").SEEN[0]
    assert (model, session) == ("fake-model", agent.session_id)
    assert provider == pre[0]["provider"] and request_id == pre[0]["api_request_id"]


def test_llm_execution_wraps_the_call_and_sees_downstream_errors(
        kernel_for, server, home: Path) -> None:
    _plugin(home, "timer", '''
EVENTS = []

def middleware(ctx):
    def skipped(**context):
        raise ValueError("timer broke before next_call")

    def wrap(request, original_request, next_call, **context):
        EVENTS.append(("before", request["messages"][-1]["content"],
                       original_request["messages"][-1]["content"]))
        try:
            response = next_call()
        except Exception as exc:
            EVENTS.append(("failed", type(exc).__name__))
            raise
        EVENTS.append(("after", response.content))
        response.content = response.content + " (timed)"
        return response

    ctx.register_middleware("llm_request", lambda request, **kw: {"request": {
        **request, "messages": [*request["messages"], {"role": "user", "content": "extra"}]}})
    ctx.register_middleware("llm_execution", skipped)
    ctx.register_middleware("llm_execution", wrap)
''')
    agent, recorder, turn = _turn(kernel_for, server, "timer", "hi", reply_text("hello"),
                                  hooks=("api_request_error",))
    assert turn.final_response == "hello (timed)"
    assert _module("timer").EVENTS == [("before", "extra", "hi"), ("after", "hello")]
    assert server.last.body["messages"][-1] == {"role": "user", "content": "extra"}

    server.script(reply_error(500, "the model is down"))
    turn = agent.run_conversation("again")
    assert turn.error and "the model is down" in turn.error  # propagated to the loop
    assert _module("timer").EVENTS[-1][0] == "failed"
    assert len(recorder.payloads("api_request_error")) == 1


def test_unknown_kind_is_a_warning_and_stored(kernel_for, server, home: Path) -> None:
    _plugin(home, "futurist", '''
def middleware(ctx):
    ctx.register_middleware("tool_response", lambda **kw: None)
    ctx.register_middleware("tool_request", lambda **kw: None)
''')
    kernel = _boot(kernel_for, "futurist")
    assert any("unknown middleware kind 'tool_response'" in w
               for w in kernel.plugins["futurist"].warnings)
    assert len(kernel.middleware_for("tool_response")) == 1  # stored, never run
    assert len(kernel.middleware_for("tool_request")) == 1
    server.script(reply_tool_call("echo", {"text": "x"}), reply_text("fine"))
    assert Agent(kernel).run_conversation("go").final_response == "fine"
    assert _module("futurist").RUNS == [{"text": "x"}]


def test_no_middleware_leaves_the_call_as_built(kernel_for, server) -> None:
    kernel = kernel_for()
    recorder = HookRecorder(kernel, ["pre_tool_call", "post_tool_call", "pre_api_request"])
    server.script(reply_tool_call("calculate", {"expression": "2+2"}), reply_text("4"))
    assert Agent(kernel).run_conversation("2+2?").final_response == "4"
    assert _tool_results(server) == [{"expression": "2+2", "result": 4}]
    assert all(p["middleware_trace"] == [] for _, p in recorder.calls)
    assert {name for name, _ in recorder.calls} == {"pre_tool_call", "post_tool_call",
                                                    "pre_api_request"}


@pytest.mark.parametrize("kind", ["tool_request", "tool_execution"])
def test_middleware_that_tries_to_stop_hermes_unloads_its_plugin(kernel_for, server, home: Path,
                                                                  kind: str) -> None:
    _plugin(home, "quitter", f'''
CALLS = []

def middleware(ctx):
    def leave(**context):
        CALLS.append(1)
        raise SystemExit(3)

    ctx.register_middleware("{kind}", leave)
''')
    kernel = _boot(kernel_for, "quitter")
    server.script(reply_tool_call("echo", {"text": "hi"}), reply_text("done"))
    agent = Agent(kernel)
    assert agent.run_conversation("echo hi").final_response == "done"  # hermes went on
    # the plugin went with its tool, before the call could run
    assert _tool_results(server) == [{"error": "Unknown tool: echo"}]
    status = kernel.plugins["quitter"]
    assert status.state == "failed" and "SystemExit" in status.reason
    assert f"its {kind} middleware" in status.reason
    assert kernel.middleware_for(kind) == []
    calls = _module("quitter").CALLS
    assert calls == [1]
    server.script(reply_text("still here"))
    assert agent.run_conversation("again").final_response == "still here"
    assert calls == [1]  # never called again
