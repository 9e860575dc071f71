"""Every hook, dispatched through the real kernel: payloads, dispatch rules, bus behaviour.

Each hook in ``EVENT_HOOKS`` and ``REGISTRATION_HOOKS`` has a test named
``test_hook_<name>`` (``tests/test_hooks_have_tests.py`` enforces it). Plugins are
in-memory objects loaded with ``kernel.register_plugin``, in both styles: pluggy
``@hookimpl`` functions on a module-like object, and ``register(ctx)`` functions using
``ctx.register_hook``. Nothing of ours is mocked.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from hermes_agent import hookimpl
from hermes_agent.hookspecs import (
    DISPATCH,
    EVENT_HOOKS,
    NOT_FIRED,
    REGISTRATION_HOOKS,
    hook_arguments,
)
from hermes_agent.testing import HookRecorder, make_kernel, register_plugin

TELEMETRY_KEY = "telemetry_schema_version"


# --- helpers -------------------------------------------------------------------------------
def payload_for(hook: str) -> dict[str, Any]:
    """The hook's full payload: one distinct value per spec argument."""
    return {arg: f"{hook}.{arg}" for arg in hook_arguments(hook)}


def make_impl(hook: str, argnames: tuple[str, ...] | list[str],
              body: Callable[..., Any], **marker: Any) -> Callable[..., Any]:
    """A ``@hookimpl`` function called ``hook`` whose signature is exactly ``argnames``.

    It forwards what it receives to ``body(**kwargs)`` and returns body's result (pluggy
    validates the signature against the spec, so it must be real, not ``**kwargs``).
    """
    params = ", ".join(argnames)
    forward = ", ".join(f"{a}={a}" for a in argnames)
    namespace: dict[str, Any] = {"_body": body}
    exec(f"def {hook}({params}):\n    return _body({forward})\n", namespace)  # noqa: S102
    function = namespace[hook]
    return hookimpl(**marker)(function) if marker else hookimpl(function)


def impl_plugin(hook: str, argnames: tuple[str, ...] | list[str], body: Callable[..., Any],
                **marker: Any) -> SimpleNamespace:
    """A module-like plugin object with one ``@hookimpl``."""
    return SimpleNamespace(**{hook: make_impl(hook, argnames, body, **marker)})


def ctx_plugin(hook: str, callback: Callable[..., Any]) -> Callable[[Any], None]:
    """A ``register(ctx)`` plugin subscribing ``callback`` with ``ctx.register_hook``."""
    def register(ctx: Any) -> None:
        ctx.register_hook(hook, callback)
    return register


def load(kernel: Any, plugin: Any, name: str) -> Any:
    status = kernel.register_plugin(plugin, name)
    assert status.state == "loaded", status.reason
    return status


def returning(value: Any, calls: list[str] | None = None, tag: str = "") -> Callable[..., Any]:
    """A ``**kwargs`` callback that records ``tag`` in ``calls`` and returns ``value``."""
    def callback(**kwargs: Any) -> Any:
        if calls is not None:
            calls.append(tag)
        return value
    return callback


def load_returning(kernel: Any, hook: str, values: list[Any], calls: list[str],
                   styles: str = "ci") -> None:
    """One plugin per value, alternating register_hook ("c") and @hookimpl ("i") styles."""
    args = hook_arguments(hook)
    for index, value in enumerate(values):
        tag = f"p{index}"
        if styles[index % len(styles)] == "c":
            load(kernel, ctx_plugin(hook, returning(value, calls, tag)), tag)
        else:
            load(kernel, impl_plugin(hook, args[:1], returning(value, calls, tag)), tag)


@pytest.fixture
def kernel(tmp_path: Path) -> Any:
    return make_kernel(tmp_path)


# --- broadcast hooks -----------------------------------------------------------------------
def check_broadcast(kernel: Any, hook: str) -> dict[str, Any]:
    """Both plugin styles receive the payload of a broadcast hook; results change nothing."""
    assert DISPATCH[hook] == "broadcast"
    args = hook_arguments(hook)
    subset = tuple(dict.fromkeys((args[-1], args[0])))  # any subset, in any order
    payload = payload_for(hook)
    seen: list[tuple[str, dict[str, Any]]] = []

    def everything(**kwargs: Any) -> Any:
        seen.append(("callback", kwargs))
        return {"action": "block", "message": "observers cannot veto"}

    def some(**kwargs: Any) -> Any:
        seen.append(("impl", kwargs))
        return "observers cannot replace anything"

    def last(**kwargs: Any) -> None:
        seen.append(("last", kwargs))

    load(kernel, ctx_plugin(hook, everything), "callback-style")
    load(kernel, impl_plugin(hook, subset, some), "hookimpl-style")
    load(kernel, ctx_plugin(hook, last), "last")

    result = kernel.hooks.fire(hook, **payload)

    assert [who for who, _ in seen] == ["callback", "impl", "last"]
    full = seen[0][1]
    assert {key: full[key] for key in payload} == payload  # every payload key
    assert set(full) - set(payload) <= {TELEMETRY_KEY}
    assert seen[1][1] == {name: payload[name] for name in subset}  # just the named ones
    assert isinstance(result, list)  # broadcast: no directive, no replacement
    return payload


def check_not_fired_registration(kernel: Any, hook: str, caplog: pytest.LogCaptureFixture) -> Any:
    """Subscribing to a hook this version never fires loads the plugin with a notice."""
    notice = NOT_FIRED[hook]
    with caplog.at_level(logging.WARNING):
        status = kernel.register_plugin(ctx_plugin(hook, returning(None)), f"{hook}-listener")
    assert status.state == "loaded", status.reason
    assert status.hooks == [hook]
    assert any(notice in warning for warning in status.warnings), status.warnings
    assert notice in caplog.text
    assert kernel.hooks.has_hook(hook)  # still subscribed, so calling it works
    return status


def test_hook_post_tool_call(kernel: Any) -> None:
    check_broadcast(kernel, "post_tool_call")
    summaries = []

    @hookimpl
    def post_tool_call(tool_name, status, duration_ms):  # the docs' example
        summaries.append(f"{tool_name}: {status} in {duration_ms:.0f} ms")

    load(kernel, SimpleNamespace(post_tool_call=post_tool_call), "timer")
    kernel.hooks.fire("post_tool_call", tool_name="terminal", args={}, result="{}",
                      duration_ms=12.4, status="ok")
    assert summaries == ["terminal: ok in 12 ms"]


def test_hook_post_llm_call(kernel: Any) -> None:
    check_broadcast(kernel, "post_llm_call")


def test_hook_pre_api_request(kernel: Any) -> None:
    check_broadcast(kernel, "pre_api_request")


def test_hook_post_api_request(kernel: Any) -> None:
    payload = check_broadcast(kernel, "post_api_request")
    assert "api_request_id" in payload


def test_hook_api_request_error(kernel: Any) -> None:
    check_broadcast(kernel, "api_request_error")


def test_hook_on_session_start(kernel: Any) -> None:
    check_broadcast(kernel, "on_session_start")


def test_hook_on_session_end(kernel: Any) -> None:
    check_broadcast(kernel, "on_session_end")


def test_hook_on_session_finalize(kernel: Any) -> None:
    check_broadcast(kernel, "on_session_finalize")


def test_hook_on_session_reset(kernel: Any) -> None:
    check_broadcast(kernel, "on_session_reset")


def test_hook_subagent_start(kernel: Any) -> None:
    check_broadcast(kernel, "subagent_start")


def test_hook_subagent_stop(kernel: Any) -> None:
    check_broadcast(kernel, "subagent_stop")


def test_hook_on_plugins_loaded(kernel: Any, tmp_path: Path) -> None:
    check_broadcast(kernel, "on_plugins_loaded")
    # Fired once by a real boot, after every plugin loaded or failed, to plugins that loaded.
    from hermes_agent.testing import write_plugin

    home = tmp_path / "booting"
    write_plugin(home / "plugins", "watcher", """
        SEEN = []

        def register(ctx):
            ctx.register_hook("on_plugins_loaded", lambda plugins, home, **kw: SEEN.append(
                ({name: status.state for name, status in plugins.items()}, home)))
        """, manifest="name: watcher\nprovides_hooks: [on_plugins_loaded]\n")
    write_plugin(home / "plugins", "broken", "raise RuntimeError('no')\n")
    booted = make_kernel(home, config={"plugins": {"enabled": ["watcher", "broken"]}})
    import sys

    seen = sys.modules["hermes_plugins.watcher"].SEEN
    (states, seen_home), = seen
    assert seen_home == home and (states["watcher"], states["broken"]) == ("loaded", "failed")
    assert set(states) == set(booted.plugins)  # every discovered plugin, bundled ones too
    booted.boot()  # idempotent: no second announcement
    assert len(seen) == 1


def test_hook_plugin_install_times(kernel: Any, tmp_path: Path) -> None:
    # The first answer that is not None is used; an implementation that raises is skipped.
    def broken(records: Any) -> Any:
        raise RuntimeError("plugins.lock unreadable")

    load(kernel, ctx_plugin("plugin_install_times", broken), "broken-times")
    load(kernel, ctx_plugin("plugin_install_times", lambda records: None), "no-answer")
    load(kernel, ctx_plugin("plugin_install_times",
                            lambda records: {r: 7 for r in records}), "answers")
    load(kernel, ctx_plugin("plugin_install_times", lambda records: {"late": 1}), "late")
    assert kernel.hooks.fire("plugin_install_times", records=["a", "b"]) == {"a": 7, "b": 7}
    # A real boot asks once the shipped plugins are loaded: plugin-admin answers, from the
    # folders of installed plugins (plugins.lock has none of them), and they load in that order.
    from hermes_agent.testing import write_plugin

    home = tmp_path / "booting"
    for name in ("zeta", "alpha"):
        write_plugin(home / "plugins", name, "def register(ctx):\n    pass\n")
    import os

    os.utime(home / "plugins" / "zeta", ns=(1_000_000_000, 1_000_000_000))
    booted = make_kernel(home, config={"plugins": {"enabled": ["zeta", "alpha"]}}, builtins=True)
    assert booted.install_stamps["zeta"] == 1_000_000_000
    assert booted.install_stamps["alpha"] > booted.install_stamps["zeta"]
    assert all(booted.install_stamps[n] is None for n, s in booted.plugins.items()
               if s.record.source in ("builtin", "bundled") and n in booted.install_stamps)


def test_hook_find_slot_provider(kernel: Any, tmp_path: Path) -> None:
    class Found:
        name = "found"

    asked = []

    def finder(slot: str, target: Any) -> Any:
        asked.append(slot)
        return Found() if slot == "memory" else None

    load(kernel, ctx_plugin("find_slot_provider", lambda slot, target: None), "no-answer")
    load(kernel, ctx_plugin("find_slot_provider", finder), "finder")
    assert kernel.hooks.fire("find_slot_provider", slot="memory", target=object()).name == "found"
    assert kernel.hooks.fire("find_slot_provider", slot="context_engine", target=object()) is None
    # A real boot asks for a memory provider folder that registers nothing: the compat plugin
    # finds the class its module defines.
    from hermes_agent.testing import write_plugin

    home = tmp_path / "booting"
    folder = home / "plugins" / "duckmem"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(
        "class DuckMemory:\n    name = 'duckmem'\n    def is_available(self): return True\n"
        "    def initialize(self, session_id, **kw): pass\n"
        "    def get_tool_schemas(self): return []\n", encoding="utf-8")
    booted = make_kernel(home, config={"memory": {"provider": "duckmem"}}, builtins=True)
    assert booted.plugins["duckmem"].state == "loaded", booted.plugins["duckmem"].reason
    assert booted.plugins["duckmem"].providers == ["memory:duckmem"]
    assert "find_slot_provider" in booted.plugins["compat"].hooks


def test_hook_inject_message(kernel: Any) -> None:
    # ctx.inject_message asks the plugin driving a conversation; its answer is the result.
    captured: dict[str, Any] = {}
    load(kernel, lambda ctx: captured.setdefault("ctx", ctx), "caller")
    ctx = captured["ctx"]
    assert ctx.inject_message("nobody listens") is False
    queued: list[tuple[str, str]] = []
    load(kernel, ctx_plugin("inject_message", lambda content, role: None), "idle")
    load(kernel, ctx_plugin("inject_message", lambda content, role: bool(
        content.strip()) and not queued.append((role, content)) or False), "conversation")
    assert ctx.inject_message("hello", role="system") is True
    assert ctx.inject_message("   ") is False  # refused by the conversation
    assert queued == [("system", "hello")]


def test_hook_platform_adapter(kernel: Any) -> None:
    captured: dict[str, Any] = {}
    load(kernel, lambda ctx: captured.setdefault("ctx", ctx), "caller")
    ctx = captured["ctx"]
    assert ctx.get_platform_adapter("telegram") is None  # no gateway runs here
    adapter = object()
    load(kernel, ctx_plugin("platform_adapter", lambda name: None), "other")
    load(kernel, ctx_plugin("platform_adapter",
                            lambda name: adapter if name == "telegram" else None), "gateway-like")
    assert ctx.get_platform_adapter("telegram") is adapter
    assert ctx.get_platform_adapter("discord") is None


def test_hook_doctor_checks(kernel: Any) -> None:
    # gather: every implementation runs, lists are joined in load order, a single value is
    # one item, None adds nothing; both styles get the payload.
    from hermes_agent.api import Finding

    first = Finding("a", "ok", "fine")
    second = Finding("b", "problem", "broken", "fix it")
    third = Finding("c", "warn", "odd", "look")
    seen: list[tuple[str, Any]] = []
    load(kernel, ctx_plugin("doctor_checks", lambda kernel, config, offline, **kw: (
        seen.append(("ctx", offline)) or [first, second])), "lists")
    load(kernel, impl_plugin("doctor_checks", ("offline",),
                             lambda offline: seen.append(("impl", offline)) or third), "single")
    load(kernel, ctx_plugin("doctor_checks", returning(None)), "nothing")
    assert DISPATCH["doctor_checks"] == "gather"
    assert kernel.hooks.fire("doctor_checks", kernel=kernel, config=kernel.config,
                             offline=True) == [first, second, third]
    assert seen == [("ctx", True), ("impl", True)]
    assert kernel.hooks.call_plugin("doctor_checks", "single", kernel=kernel,
                                    config=kernel.config, offline=False) == [third]


def test_hook_on_memory_write(kernel: Any) -> None:
    check_broadcast(kernel, "on_memory_write")
    mirrored = []

    @hookimpl
    def on_memory_write(action, target, content):
        mirrored.append((action, target, content))

    load(kernel, SimpleNamespace(on_memory_write=on_memory_write), "mirror")
    kernel.hooks.fire("on_memory_write", action="add", target="user", content="likes tea",
                      metadata=None, session_id="s1", platform="cli")
    assert mirrored == [("add", "user", "likes tea")]


def test_hook_pre_approval_request(kernel: Any) -> None:
    check_broadcast(kernel, "pre_approval_request")


def test_hook_post_approval_response(kernel: Any) -> None:
    check_broadcast(kernel, "post_approval_response")


def test_hook_kanban_task_claimed(kernel: Any, caplog: pytest.LogCaptureFixture) -> None:
    check_not_fired_registration(kernel, "kanban_task_claimed", caplog)
    check_broadcast(kernel, "kanban_task_claimed")


def test_hook_kanban_task_completed(kernel: Any, caplog: pytest.LogCaptureFixture) -> None:
    check_not_fired_registration(kernel, "kanban_task_completed", caplog)
    check_broadcast(kernel, "kanban_task_completed")


def test_hook_kanban_task_blocked(kernel: Any, caplog: pytest.LogCaptureFixture) -> None:
    check_not_fired_registration(kernel, "kanban_task_blocked", caplog)
    check_broadcast(kernel, "kanban_task_blocked")


def test_not_fired_hookimpl_also_gets_the_notice(kernel: Any) -> None:
    status = load(kernel, impl_plugin("kanban_task_blocked", ("reason",), returning(None)),
                  "kanban-impl")
    assert any(NOT_FIRED["kanban_task_blocked"] in w for w in status.warnings)


def test_fired_hooks_carry_no_not_fired_notice(kernel: Any) -> None:
    status = load(kernel, ctx_plugin("post_tool_call", returning(None)), "plain")
    assert not any("Not fired by this version" in w for w in status.warnings)


# --- pre_tool_call: veto ---------------------------------------------------------------------
def test_hook_pre_tool_call(kernel: Any) -> None:
    assert DISPATCH["pre_tool_call"] == "veto"
    payload = payload_for("pre_tool_call")
    observed: list[tuple[str, dict[str, Any]]] = []

    def observer(tag: str, value: Any = None) -> Callable[..., Any]:
        def callback(**kwargs: Any) -> Any:
            observed.append((tag, kwargs))
            return value
        return callback

    load(kernel, ctx_plugin("pre_tool_call", observer("watcher")), "watcher")
    load(kernel, impl_plugin("pre_tool_call", ("tool_name", "args"),
                             observer("guard", {"action": "block", "message": "first"})), "guard")
    load(kernel, ctx_plugin("pre_tool_call", observer(
        "policy", {"action": "block", "message": "second"})), "policy")
    load(kernel, impl_plugin("pre_tool_call", ("tool_name",), observer("auditor")), "auditor")

    directive = kernel.hooks.fire("pre_tool_call", **payload)

    assert directive == {"action": "block", "message": "first"}
    assert [tag for tag, _ in observed] == ["watcher", "guard", "policy", "auditor"]
    assert {k: observed[0][1][k] for k in payload} == payload
    assert observed[1][1] == {"tool_name": payload["tool_name"], "args": payload["args"]}
    assert observed[3][1] == {"tool_name": payload["tool_name"]}


def test_hook_pre_tool_call_no_opinion_is_none(kernel: Any) -> None:
    assert kernel.hooks.fire("pre_tool_call", **payload_for("pre_tool_call")) is None
    load(kernel, ctx_plugin("pre_tool_call", returning(None)), "quiet")
    assert kernel.hooks.fire("pre_tool_call", **payload_for("pre_tool_call")) is None


def test_hook_pre_tool_call_block_without_message_ignored(kernel: Any) -> None:
    calls: list[str] = []
    load_returning(kernel, "pre_tool_call", [
        {"action": "block"},
        {"action": "block", "message": ""},
        {"action": "block", "message": None},
        {"action": "block", "message": 42},
        {"action": "block", "message": "real reason"},
    ], calls)
    directive = kernel.hooks.fire("pre_tool_call", **payload_for("pre_tool_call"))
    assert directive == {"action": "block", "message": "real reason"}
    assert calls == ["p0", "p1", "p2", "p3", "p4"]


def test_hook_pre_tool_call_only_invalid_blocks_means_no_directive(kernel: Any) -> None:
    calls: list[str] = []
    load_returning(kernel, "pre_tool_call", [{"action": "block"},
                                             {"action": "block", "message": ""}], calls)
    assert kernel.hooks.fire("pre_tool_call", **payload_for("pre_tool_call")) is None
    assert calls == ["p0", "p1"]


def test_hook_pre_tool_call_non_dict_results_ignored(kernel: Any) -> None:
    calls: list[str] = []
    load_returning(kernel, "pre_tool_call", [
        "block", ["action", "block"], 42, True, {"action": "deny", "message": "unknown action"},
        ("block", "tuple"),
    ], calls)
    assert kernel.hooks.fire("pre_tool_call", **payload_for("pre_tool_call")) is None
    assert calls == ["p0", "p1", "p2", "p3", "p4", "p5"]


def test_hook_pre_tool_call_approve_directive_returned(kernel: Any) -> None:
    calls: list[str] = []
    load_returning(kernel, "pre_tool_call", [
        None,
        {"action": "approve", "message": "Run rm?", "rule_key": "rm", "extra": "dropped"},
        {"action": "block", "message": "later block loses"},
    ], calls)
    directive = kernel.hooks.fire("pre_tool_call", **payload_for("pre_tool_call"))
    assert directive == {"action": "approve", "message": "Run rm?", "rule_key": "rm"}
    assert calls == ["p0", "p1", "p2"]  # every implementation still ran


def test_hook_pre_tool_call_bare_approve(kernel: Any) -> None:
    load(kernel, ctx_plugin("pre_tool_call", returning({"action": "approve"})), "gate")
    assert kernel.hooks.fire("pre_tool_call", **payload_for("pre_tool_call")) == {
        "action": "approve"}


def test_hook_pre_tool_call_docs_example(kernel: Any) -> None:
    @hookimpl
    def pre_tool_call(tool_name, args):
        if tool_name == "terminal" and "rm -rf" in args.get("command", ""):
            return {"action": "block", "message": "Refusing to delete recursively."}
        return None

    load(kernel, SimpleNamespace(pre_tool_call=pre_tool_call), "guard")
    blocked = kernel.hooks.fire("pre_tool_call", tool_name="terminal", args={"command": "rm -rf /"})
    allowed = kernel.hooks.fire("pre_tool_call", tool_name="terminal", args={"command": "ls"})
    assert blocked == {"action": "block", "message": "Refusing to delete recursively."}
    assert allowed is None


# --- pre_llm_call: context -----------------------------------------------------------------
def test_hook_pre_llm_call(kernel: Any) -> None:
    assert DISPATCH["pre_llm_call"] == "context"
    calls: list[str] = []
    load_returning(kernel, "pre_llm_call", [
        "alpha",
        None,
        {"context": "beta"},
        "",
        {"context": ""},
        "   ",
        42,
        {"context": 7},
        {"other": "no context key"},
        "gamma\nline two",
    ], calls)
    context = kernel.hooks.fire("pre_llm_call", **payload_for("pre_llm_call"))
    assert context == "alpha\n\nbeta\n\ngamma\nline two"
    assert calls == [f"p{i}" for i in range(10)]


def test_hook_pre_llm_call_nothing_is_empty_string(kernel: Any) -> None:
    assert kernel.hooks.fire("pre_llm_call", **payload_for("pre_llm_call")) == ""
    load(kernel, ctx_plugin("pre_llm_call", returning(None)), "quiet")
    assert kernel.hooks.fire("pre_llm_call", **payload_for("pre_llm_call")) == ""


def test_hook_pre_llm_call_docs_example(kernel: Any) -> None:
    @hookimpl
    def pre_llm_call(user_message, is_first_turn):
        if is_first_turn:
            return {"context": "The user prefers short answers."}
        return None

    load(kernel, SimpleNamespace(pre_llm_call=pre_llm_call), "memory")
    load(kernel, ctx_plugin("pre_llm_call", lambda user_message, **kw: f"Echo: {user_message}"),
         "echo")
    assert kernel.hooks.fire("pre_llm_call", user_message="hi", is_first_turn=True) == (
        "The user prefers short answers.\n\nEcho: hi")
    assert kernel.hooks.fire("pre_llm_call", user_message="hi", is_first_turn=False) == "Echo: hi"


# --- transforms: first string / first non-empty string -------------------------------------
def check_first_str(kernel: Any, hook: str) -> None:
    assert DISPATCH[hook] == "first_str"
    calls: list[str] = []
    load_returning(kernel, hook, [None, 42, {"text": "dict"}, b"bytes", "", "later", "last"], calls)
    result = kernel.hooks.fire(hook, **payload_for(hook))
    assert result == ""  # the empty string counts as a replacement
    assert calls == ["p0", "p1", "p2", "p3", "p4"]  # later callbacks were not called


def check_first_str_nonempty_wins(kernel: Any, hook: str) -> None:
    calls: list[str] = []
    load_returning(kernel, hook, [None, "replaced", "never"], calls)
    assert kernel.hooks.fire(hook, **payload_for(hook)) == "replaced"
    assert calls == ["p0", "p1"]


def test_hook_transform_tool_result(kernel: Any) -> None:
    check_first_str(kernel, "transform_tool_result")


def test_hook_transform_tool_result_first_str_wins(kernel: Any) -> None:
    check_first_str_nonempty_wins(kernel, "transform_tool_result")


def test_hook_transform_tool_result_none_keeps_result(kernel: Any) -> None:
    calls: list[str] = []
    load_returning(kernel, "transform_tool_result", [None, 1, ["x"]], calls)
    assert kernel.hooks.fire("transform_tool_result", **payload_for("transform_tool_result")) is None
    assert calls == ["p0", "p1", "p2"]


def test_hook_transform_tool_result_redacts(kernel: Any) -> None:
    @hookimpl
    def transform_tool_result(result):
        return result.replace("sk-secret", "[redacted]") if "sk-secret" in result else None

    load(kernel, SimpleNamespace(transform_tool_result=transform_tool_result), "redactor")
    out = kernel.hooks.fire("transform_tool_result", tool_name="read_file", args={},
                            result='{"key": "sk-secret"}', status="ok")
    assert out == '{"key": "[redacted]"}'
    assert kernel.hooks.fire("transform_tool_result", tool_name="x", args={}, result="{}") is None


def test_hook_transform_terminal_output(kernel: Any) -> None:
    check_first_str(kernel, "transform_terminal_output")


def test_hook_transform_terminal_output_first_str_wins(kernel: Any) -> None:
    check_first_str_nonempty_wins(kernel, "transform_terminal_output")


def test_hook_transform_llm_output(kernel: Any) -> None:
    assert DISPATCH["transform_llm_output"] == "first_nonempty_str"
    calls: list[str] = []
    load_returning(kernel, "transform_llm_output", [None, "", 42, "rewritten", "never"], calls)
    assert kernel.hooks.fire("transform_llm_output",
                             **payload_for("transform_llm_output")) == "rewritten"
    assert calls == ["p0", "p1", "p2", "p3"]  # "" did not win; after "rewritten" nothing ran


def test_hook_transform_llm_output_empty_string_does_not_win(kernel: Any) -> None:
    calls: list[str] = []
    load_returning(kernel, "transform_llm_output", ["", None, ""], calls)
    assert kernel.hooks.fire("transform_llm_output", **payload_for("transform_llm_output")) is None
    assert calls == ["p0", "p1", "p2"]


# --- gateway and verification directives (pre_verify is not fired by this version) ----------
def test_hook_pre_gateway_dispatch(kernel: Any) -> None:
    """The gateway fires it (tests/gateway); here, how its results combine."""
    assert DISPATCH["pre_gateway_dispatch"] == "gateway_directive"
    calls: list[str] = []
    load_returning(kernel, "pre_gateway_dispatch", [
        {"action": "bogus"}, "skip", {"text": "no action"},
        {"action": "rewrite", "text": "normalised"},
        {"action": "skip", "reason": "never reached"},
    ], calls)
    directive = kernel.hooks.fire("pre_gateway_dispatch", event=SimpleNamespace(text="HI"),
                                  gateway=object(), session_store={})
    assert directive == {"action": "rewrite", "text": "normalised"}
    assert calls == ["p0", "p1", "p2", "p3"]  # first directive wins, later not called


@pytest.mark.parametrize("directive", [{"action": "skip", "reason": "spam"}, {"action": "allow"}])
def test_hook_pre_gateway_dispatch_skip_and_allow(kernel: Any, directive: dict[str, Any]) -> None:
    calls: list[str] = []
    load_returning(kernel, "pre_gateway_dispatch",
                   [None, directive, {"action": "rewrite", "text": "x"}], calls)
    assert kernel.hooks.fire("pre_gateway_dispatch", **payload_for("pre_gateway_dispatch")) == (
        directive)
    assert calls == ["p0", "p1"]


def test_hook_pre_gateway_dispatch_no_directive(kernel: Any) -> None:
    load_returning(kernel, "pre_gateway_dispatch", [None, {"action": "nope"}], [])
    assert kernel.hooks.fire("pre_gateway_dispatch", **payload_for("pre_gateway_dispatch")) is None


def test_hook_pre_verify(kernel: Any, caplog: pytest.LogCaptureFixture) -> None:
    assert DISPATCH["pre_verify"] == "verify_directive"
    check_not_fired_registration(kernel, "pre_verify", caplog)
    calls: list[str] = []
    load_returning(kernel, "pre_verify", [
        {"action": "continue", "message": ""},  # no message: ignored
        {"decision": "block", "reason": ""},  # no reason: ignored
        "continue",
        {"action": "continue", "message": "Tests fail: fix test_x"},
        {"decision": "block", "reason": "later loses"},
    ], calls)
    directive = kernel.hooks.fire("pre_verify", **payload_for("pre_verify"))
    assert directive == {"action": "continue", "message": "Tests fail: fix test_x"}
    assert calls == ["p0", "p1", "p2", "p3", "p4"]  # every implementation runs


def test_hook_pre_verify_decision_block_form(kernel: Any) -> None:
    calls: list[str] = []
    load_returning(kernel, "pre_verify", [None, {"decision": "block", "reason": "lint errors"},
                                          {"action": "continue", "message": "later"}], calls)
    assert kernel.hooks.fire("pre_verify", **payload_for("pre_verify")) == {
        "decision": "block", "reason": "lint errors"}
    assert calls == ["p0", "p1", "p2"]


def test_hook_pre_verify_none_lets_agent_finish(kernel: Any) -> None:
    load_returning(kernel, "pre_verify", [None, {"action": "continue"}], [])
    assert kernel.hooks.fire("pre_verify", **payload_for("pre_verify")) is None


# --- registration (collector) hooks ----------------------------------------------------------
SCHEMA = {"name": "calc_add", "description": "Add two numbers.",
          "parameters": {"type": "object", "properties": {"a": {"type": "number"},
                                                          "b": {"type": "number"}}}}


def test_hook_register_tools(kernel: Any) -> None:
    assert DISPATCH["register_tools"] == "collector"
    runs = []

    @hookimpl
    def register_tools(register):
        runs.append(register)
        register("calc_add", "calc", SCHEMA,
                 lambda args, **kw: json.dumps({"sum": args["a"] + args["b"]}), emoji="+")

    status = load(kernel, SimpleNamespace(register_tools=register_tools), "calc-plugin")

    assert len(runs) == 1  # called once, while the plugin loaded
    assert status.tools == ["calc_add"]
    spec = kernel.tools.tools["calc_add"]
    assert (spec.plugin, spec.toolset, spec.emoji, spec.schema) == ("calc-plugin", "calc", "+",
                                                                    SCHEMA)
    assert json.loads(kernel.tools.dispatch("calc_add", {"a": 2, "b": 3})) == {"sum": 5}
    assert kernel.tools.resolve_toolsets(["calc"]) == (["calc_add"], [])
    assert not kernel.hooks.has_hook("register_tools")  # collectors are not on the event bus
    kernel.hooks.fire("register_tools", register=lambda *a, **k: None)
    assert len(runs) == 1


def test_hook_register_tools_async_handler(kernel: Any) -> None:
    @hookimpl
    def register_tools(register):
        async def handler(args, **kwargs):
            await asyncio.sleep(0)
            return json.dumps({"echo": args["x"]})
        register("aecho", "async", {"name": "aecho", "description": "",
                                    "parameters": {}}, handler, is_async=True)

    load(kernel, SimpleNamespace(register_tools=register_tools), "async-tools")
    assert json.loads(kernel.tools.dispatch("aecho", {"x": "hi"})) == {"echo": "hi"}


def test_hook_register_tools_clash_fails_second_plugin(kernel: Any) -> None:
    def plugin() -> SimpleNamespace:
        @hookimpl
        def register_tools(register):
            register("calc_add", "calc", SCHEMA, lambda args, **kw: "{}")
        return SimpleNamespace(register_tools=register_tools)

    load(kernel, plugin(), "first")
    status = kernel.register_plugin(plugin(), "second")
    assert status.state == "failed"
    assert "first" in status.reason and "second" in status.reason
    assert kernel.tools.tools["calc_add"].plugin == "first"


def test_hook_register_toolsets(kernel: Any) -> None:
    assert DISPATCH["register_toolsets"] == "collector"

    @hookimpl
    def register_tools(register):
        for name, toolset in (("t_one", "leaf_a"), ("t_two", "leaf_b"), ("t_three", "leaf_c")):
            register(name, toolset, {"name": name, "description": "", "parameters": {}},
                     lambda args, **kw: "{}")

    @hookimpl
    def register_toolsets(register):
        register("combo", tools=["t_one"], includes=["leaf_b"], description="one and b")
        register("outer", includes=["combo", "leaf_c"])

    status = load(kernel, SimpleNamespace(register_tools=register_tools,
                                          register_toolsets=register_toolsets), "sets")
    assert status.state == "loaded"
    combo = kernel.tools.toolsets["combo"]
    assert (combo.kind, combo.plugin, combo.description) == ("composite", "sets", "one and b")
    assert kernel.tools.resolve_toolsets(["combo"]) == (["t_one", "t_two"], [])
    assert kernel.tools.resolve_toolsets(["outer"]) == (["t_one", "t_two", "t_three"], [])


def test_hook_register_cli_commands(kernel: Any) -> None:
    import click
    from click.testing import CliRunner

    assert DISPATCH["register_cli_commands"] == "collector"

    @hookimpl
    def register_cli_commands(register):
        @click.command("hooktest-greet", help="Say hello.")
        @click.argument("who")
        def greet(who):
            click.echo(f"hello {who}")
        register(greet)

    status = load(kernel, SimpleNamespace(register_cli_commands=register_cli_commands), "greeter")
    assert status.cli_commands == ["hooktest-greet"]
    entry = kernel.cli_commands["hooktest-greet"]
    assert (entry.plugin, entry.help) == ("greeter", "Say hello.")
    assert isinstance(entry.command, click.Command)
    outcome = CliRunner().invoke(entry.command, ["world"])
    assert outcome.exit_code == 0 and outcome.output == "hello world\n"


def test_hook_register_cli_commands_reserved_name_fails(kernel: Any) -> None:
    import click

    @hookimpl
    def register_cli_commands(register):
        register(click.Command("plugins", callback=lambda: None))

    status = kernel.register_plugin(SimpleNamespace(register_cli_commands=register_cli_commands),
                                    "usurper")
    assert status.state == "failed"
    assert "hermes itself" in status.reason
    assert "plugins" not in kernel.cli_commands


def test_hook_register_slash_commands(kernel: Any) -> None:
    assert DISPATCH["register_slash_commands"] == "collector"

    @hookimpl
    def register_slash_commands(register):
        register("ping", lambda raw_args: "pong", description="Check the plugin is alive")
        register("  /My Command ", lambda raw_args: f"got {raw_args}", args_hint="<text>")

    status = load(kernel, SimpleNamespace(register_slash_commands=register_slash_commands), "pinger")
    assert sorted(status.commands) == ["my-command", "ping"]
    assert set(kernel.registered("slash_command")) >= {"ping", "my-command"}
    ping, mine = kernel.registered("slash_command")["ping"], kernel.registered("slash_command")["my-command"]
    assert (ping.plugin, ping.description, ping.handler("")) == (
        "pinger", "Check the plugin is alive", "pong")
    assert (mine.args_hint, mine.handler("x y")) == ("<text>", "got x y")


def test_hook_register_slash_commands_clash_fails_second_plugin(kernel: Any) -> None:
    def plugin() -> SimpleNamespace:
        @hookimpl
        def register_slash_commands(register):
            register("ping", lambda raw_args: "pong")
        return SimpleNamespace(register_slash_commands=register_slash_commands)

    load(kernel, plugin(), "one")
    status = kernel.register_plugin(plugin(), "two")
    assert status.state == "failed" and "'/ping'" in status.reason
    assert kernel.registered("slash_command")["ping"].plugin == "one"


def test_hook_register_skills(kernel: Any, tmp_path: Path) -> None:
    assert DISPATCH["register_skills"] == "collector"
    folder = tmp_path / "skills" / "summarise"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("# Summarise\n", encoding="utf-8")
    single = tmp_path / "skills" / "review.md"
    single.write_text("# Review\n", encoding="utf-8")

    @hookimpl
    def register_skills(register):
        register("summarise", folder, description="Summarise a text")
        register("code_review", str(single))

    status = load(kernel, SimpleNamespace(register_skills=register_skills), "writer")
    assert sorted(status.skills) == ["writer:code_review", "writer:summarise"]
    skill = kernel.registered("skill")["writer:summarise"]
    assert (skill.path, skill.plugin, skill.description) == (folder / "SKILL.md", "writer",
                                                             "Summarise a text")
    assert kernel.registered("skill")["writer:code_review"].path == single


def test_hook_register_providers(kernel: Any) -> None:
    assert DISPATCH["register_providers"] == "collector"
    search = SimpleNamespace(name="fake-search", search=lambda q: [q])
    store = SimpleNamespace(name="memory-store")

    @hookimpl
    def register_providers(register):
        register("web_search", search)
        register("session_store", store)

    status = load(kernel, SimpleNamespace(register_providers=register_providers), "backend")
    assert sorted(status.providers) == ["session_store:memory-store", "web_search:fake-search"]
    assert kernel.slots.get("web_search", "fake-search") is search
    assert kernel.slots.get("session_store", "memory-store") is store
    assert kernel.slots.owner("web_search", "fake-search") == "backend"


def test_hook_register_providers_clash_fails_second_plugin(kernel: Any) -> None:
    def plugin() -> SimpleNamespace:
        @hookimpl
        def register_providers(register):
            register("web_search", SimpleNamespace(name="dup"))
        return SimpleNamespace(register_providers=register_providers)

    load(kernel, plugin(), "a")
    status = kernel.register_plugin(plugin(), "b")
    assert status.state == "failed" and "'a'" in status.reason and "'b'" in status.reason


def test_hook_register_providers_raising_collector_fails_plugin(kernel: Any) -> None:
    @hookimpl
    def register_providers(register):
        register("no_such_slot", SimpleNamespace(name="x"))

    status = kernel.register_plugin(SimpleNamespace(register_providers=register_providers), "bad")
    assert status.state == "failed"
    assert "no_such_slot" in status.reason
    assert kernel.pm.get_plugin("bad") is None


def test_hook_register_skills_missing_path_fails_plugin(kernel: Any, tmp_path: Path) -> None:
    @hookimpl
    def register_skills(register):
        register("ghost", tmp_path / "missing")

    status = kernel.register_plugin(SimpleNamespace(register_skills=register_skills), "ghosts")
    assert status.state == "failed" and "does not exist" in status.reason
    assert not kernel.registered("skill")


def test_register_ctx_skill_missing_path_fails_plugin(kernel: Any, tmp_path: Path) -> None:
    def register(ctx: Any) -> None:
        ctx.register_skill("ghost", tmp_path / "missing")

    status = kernel.register_plugin(register, "ghosts")
    assert status.state == "failed" and "does not exist" in status.reason
    assert not kernel.registered("skill")


def test_registration_hook_via_register_hook_is_unknown(kernel: Any) -> None:
    status = load(kernel, ctx_plugin("register_tools", returning(None)), "confused")
    assert any("unknown hook 'register_tools'" in w for w in status.warnings), status.warnings


# --- general bus behaviour -------------------------------------------------------------------
def test_raising_callback_is_logged_and_skipped(kernel: Any,
                                                caplog: pytest.LogCaptureFixture) -> None:
    calls: list[str] = []

    def boom(**kwargs: Any) -> Any:
        calls.append("boom")
        raise RuntimeError("kaboom")

    @hookimpl
    def pre_llm_call(user_message):
        calls.append("impl-boom")
        raise ValueError("bad impl")

    load(kernel, ctx_plugin("pre_llm_call", returning("before", calls, "before")), "before")
    load(kernel, ctx_plugin("pre_llm_call", boom), "exploder")
    load(kernel, SimpleNamespace(pre_llm_call=pre_llm_call), "impl-exploder")
    load(kernel, ctx_plugin("pre_llm_call", returning("after", calls, "after")), "after")

    with caplog.at_level(logging.WARNING, logger="hermes_agent.hooks"):
        context = kernel.hooks.fire("pre_llm_call", **payload_for("pre_llm_call"))

    assert context == "before\n\nafter"
    assert calls == ["before", "boom", "impl-boom", "after"]
    messages = [r.getMessage() for r in caplog.records if r.name == "hermes_agent.hooks"]
    assert any("pre_llm_call" in m and "RuntimeError" in m and "kaboom" in m and "exploder" in m
               for m in messages), messages
    assert any("ValueError" in m and "bad impl" in m for m in messages), messages
    assert kernel.hooks.errors == {"exploder": 1, "impl-exploder": 1}


def test_raising_callback_skipped_in_first_str_and_veto(kernel: Any) -> None:
    def boom(**kwargs: Any) -> Any:
        raise RuntimeError("nope")

    for hook, good in (("transform_tool_result", "clean"),
                       ("pre_tool_call", {"action": "block", "message": "stop"})):
        load(kernel, ctx_plugin(hook, boom), f"{hook}-boom")
        load(kernel, ctx_plugin(hook, returning(good)), f"{hook}-good")
        assert kernel.hooks.fire(hook, **payload_for(hook)) == good


def test_async_callbacks_are_awaited_in_fire_and_call(kernel: Any) -> None:
    async def context(**kwargs: Any) -> str:
        await asyncio.sleep(0)
        return "async context"

    async def transform(result):
        await asyncio.sleep(0)
        return result.upper()

    seen = []

    async def observe(**kwargs: Any) -> None:
        await asyncio.sleep(0)
        seen.append(kwargs["tool_name"])

    load(kernel, ctx_plugin("pre_llm_call", context), "async-ctx")
    load(kernel, impl_plugin("transform_tool_result", ("result",), transform), "async-impl")
    load(kernel, ctx_plugin("post_tool_call", observe), "async-observer")

    assert kernel.hooks.fire("pre_llm_call", **payload_for("pre_llm_call")) == "async context"
    assert kernel.hooks.fire("transform_tool_result", result="abc") == "ABC"
    assert kernel.hooks.call("pre_llm_call", user_message="x") == ["async context"]
    kernel.hooks.fire("post_tool_call", tool_name="t1")
    assert seen == ["t1"]


def test_async_hookimpl_result_counts_in_veto(kernel: Any) -> None:
    async def guard(tool_name):
        await asyncio.sleep(0)
        return {"action": "block", "message": f"no {tool_name}"}

    load(kernel, impl_plugin("pre_tool_call", ("tool_name",), guard), "async-guard")
    assert kernel.hooks.fire("pre_tool_call", tool_name="rm") == {"action": "block",
                                                                  "message": "no rm"}


def test_fire_inside_running_event_loop_awaits_async_callbacks(kernel: Any) -> None:
    async def context(**kwargs: Any) -> str:
        await asyncio.sleep(0)
        return "from a coroutine"

    load(kernel, ctx_plugin("pre_llm_call", context), "async-ctx")

    async def main() -> str:
        return kernel.hooks.fire("pre_llm_call", user_message="hi")  # sync call, loop running

    assert asyncio.run(main()) == "from a coroutine"


def test_acall_awaits_async_and_runs_sync_callbacks(kernel: Any,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    order: list[str] = []

    async def slow(**kwargs: Any) -> str:
        await asyncio.sleep(0.01)
        order.append("async")
        return f"async:{kwargs['session_id']}"

    def sync(session_id, **kwargs: Any) -> str:
        order.append("sync")
        return f"sync:{session_id}"

    async def boom(**kwargs: Any) -> None:
        raise RuntimeError("async failure")

    @hookimpl
    async def on_session_start(model):
        order.append("impl")
        return f"impl:{model}"

    load(kernel, ctx_plugin("on_session_start", slow), "slow")
    load(kernel, ctx_plugin("on_session_start", boom), "boom")
    load(kernel, SimpleNamespace(on_session_start=on_session_start), "impl")
    load(kernel, ctx_plugin("on_session_start", sync), "sync")

    with caplog.at_level(logging.WARNING, logger="hermes_agent.hooks"):
        results = asyncio.run(kernel.hooks.acall("on_session_start", session_id="s1",
                                                 model="m", platform="cli"))
    assert results == ["async:s1", "impl:m", "sync:s1"]
    assert order == ["async", "impl", "sync"]  # awaited one by one, in load order
    assert "async failure" in caplog.text
    assert asyncio.run(kernel.hooks.acall("post_tool_call", tool_name="x")) == []


def test_tryfirst_trylast_and_load_order(kernel: Any) -> None:
    calls: list[str] = []
    hook = "post_tool_call"

    def body(tag: str) -> Callable[..., None]:
        return lambda **kwargs: calls.append(tag)

    load(kernel, impl_plugin(hook, ("tool_name",), body("a")), "a")
    load(kernel, impl_plugin(hook, ("tool_name",), body("b-last"), trylast=True), "b")
    load(kernel, ctx_plugin(hook, body("c")), "c")
    load(kernel, impl_plugin(hook, ("tool_name",), body("d-first"), tryfirst=True), "d")
    load(kernel, impl_plugin(hook, ("tool_name",), body("e")), "e")
    load(kernel, impl_plugin(hook, ("tool_name",), body("f-first"), tryfirst=True), "f")
    load(kernel, impl_plugin(hook, ("tool_name",), body("g-last"), trylast=True), "g")

    kernel.hooks.fire(hook, **payload_for(hook))
    # tryfirst group, normal group, trylast group; load order inside each (not pluggy's LIFO)
    assert calls == ["d-first", "f-first", "a", "c", "e", "b-last", "g-last"]
    assert [c.plugin for c in kernel.hooks.callbacks(hook)] == ["d", "f", "a", "c", "e", "b", "g"]


def test_load_order_decides_first_str_winner(kernel: Any) -> None:
    load(kernel, impl_plugin("transform_tool_result", ("result",), returning("early")), "early")
    load(kernel, impl_plugin("transform_tool_result", ("result",), returning("late")), "late")
    assert kernel.hooks.fire("transform_tool_result", result="r") == "early"
    load(kernel, impl_plugin("transform_tool_result", ("result",), returning("first"),
                             tryfirst=True), "jumper")
    assert kernel.hooks.fire("transform_tool_result", result="r") == "first"


def test_has_hook(kernel: Any) -> None:
    assert not kernel.hooks.has_hook("post_llm_call")
    with register_plugin(kernel, ctx_plugin("post_llm_call", returning(None)), "temp") as status:
        assert status.state == "loaded"
        assert kernel.hooks.has_hook("post_llm_call")
        assert not kernel.hooks.has_hook("pre_llm_call")
    assert not kernel.hooks.has_hook("post_llm_call")  # the with block removed it
    assert "temp" not in kernel.plugins


def test_unregister_plugin_removes_hookimpls(kernel: Any) -> None:
    calls: list[str] = []
    load(kernel, impl_plugin("post_llm_call", ("model",), returning(None, calls, "x")), "gone")
    kernel.unregister_plugin("gone")
    assert kernel.hooks.fire("post_llm_call", model="m") == []
    assert calls == [] and kernel.pm.get_plugin("gone") is None


def test_trace_hooks_env_writes_to_stderr(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    traced = make_kernel(tmp_path / "traced", env={"HERMES_TRACE_HOOKS": "1"})
    load(traced, ctx_plugin("on_session_start", returning("hello")), "tracer")
    capsys.readouterr()
    traced.hooks.fire("on_session_start", session_id="s", model="m", platform="cli")
    err = capsys.readouterr().err
    assert "[hermes hooks] on_session_start(" in err
    assert "tracer:" in err and "'hello'" in err

    async def fails(**kwargs: Any) -> None:
        raise RuntimeError("async boom")

    load(traced, ctx_plugin("on_session_start", fails), "async-tracer")
    capsys.readouterr()
    assert asyncio.run(traced.hooks.acall("on_session_start", session_id="s", model="m",
                                          platform="cli")) == ["hello"]
    err = capsys.readouterr().err
    assert "tracer:" in err and "'hello'" in err  # acall traces each callback too
    assert "async-tracer:" in err and "raised RuntimeError: async boom" in err

    quiet = make_kernel(tmp_path / "quiet")
    load(quiet, ctx_plugin("on_session_start", returning("hello")), "tracer")
    capsys.readouterr()
    quiet.hooks.fire("on_session_start", session_id="s", model="m", platform="cli")
    assert "on_session_start" not in capsys.readouterr().err


def test_register_hook_unknown_name_warns_did_you_mean(kernel: Any,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    calls: list[str] = []
    with caplog.at_level(logging.WARNING):
        status = kernel.register_plugin(ctx_plugin("pre_tool_cal", returning(None, calls, "typo")),
                                        "typo")
    assert status.state == "loaded"
    warning = next(w for w in status.warnings if "pre_tool_cal'" in w)
    assert "did you mean 'pre_tool_call'" in warning
    assert "did you mean 'pre_tool_call'" in caplog.text
    kernel.hooks.fire("pre_tool_call", **payload_for("pre_tool_call"))
    assert calls == []  # the real hook does not reach the misspelled subscription


def test_register_hook_unknown_name_without_suggestion(kernel: Any) -> None:
    status = load(kernel, ctx_plugin("zzzz_qqqq", returning(None)), "nonsense")
    warning = next(w for w in status.warnings if "zzzz_qqqq" in w)
    assert "unknown hook" in warning and "did you mean" not in warning


def test_misspelled_hookimpl_loads_with_suggestion(kernel: Any) -> None:
    calls: list[str] = []

    @hookimpl
    def pre_tool_cal(tool_name):
        calls.append(tool_name)

    @hookimpl
    def post_tool_call(tool_name):
        calls.append(f"post:{tool_name}")

    status = kernel.register_plugin(SimpleNamespace(pre_tool_cal=pre_tool_cal,
                                                    post_tool_call=post_tool_call), "typo-impl")
    assert status.state == "loaded", status.reason
    warning = next(w for w in status.warnings if "pre_tool_cal'" in w)
    assert "@hookimpl" in warning and "did you mean 'pre_tool_call'" in warning
    assert status.hooks == ["post_tool_call"]
    assert not kernel.hooks.has_hook("pre_tool_call")
    kernel.hooks.fire("pre_tool_call", tool_name="x")
    kernel.hooks.fire("post_tool_call", tool_name="y")
    assert calls == ["post:y"]


def test_hookimpl_with_unknown_argument_fails_plugin(kernel: Any,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    @hookimpl
    def post_tool_call(tool_name):
        pass

    @hookimpl
    def pre_tool_call(tool_name, bogus_argument):
        pass

    @hookimpl
    def register_tools(register):
        register("never", "x", {"name": "never", "description": "", "parameters": {}},
                 lambda args, **kw: "{}")

    plugin = SimpleNamespace(post_tool_call=post_tool_call, pre_tool_call=pre_tool_call,
                             register_tools=register_tools)
    with caplog.at_level(logging.WARNING):
        status = kernel.register_plugin(plugin, "broken")
    assert status.state == "failed"
    assert "invalid @hookimpl" in status.reason and "bogus_argument" in status.reason
    assert "bogus_argument" in caplog.text
    # nothing registered: no hooks on the bus, no tools, not left in the plugin manager
    assert not kernel.hooks.has_hook("post_tool_call")
    assert not kernel.hooks.has_hook("pre_tool_call")
    assert "never" not in kernel.tools.tools
    assert kernel.pm.get_plugin("broken") is None
    assert kernel.plugins["broken"].state == "failed"
    # the name is free again: a corrected plugin loads
    load(kernel, SimpleNamespace(post_tool_call=post_tool_call), "broken")
    assert kernel.hooks.has_hook("post_tool_call")


def test_hookimpl_wrapper_is_skipped_with_warning(kernel: Any) -> None:
    @hookimpl(wrapper=True)
    def post_tool_call(tool_name):
        return (yield)

    status = load(kernel, SimpleNamespace(post_tool_call=post_tool_call), "wrapper")
    assert any("wrappers are not supported" in w for w in status.warnings)
    assert not kernel.hooks.has_hook("post_tool_call")


def test_callback_without_kwargs_gets_only_its_parameters(kernel: Any) -> None:
    received = []

    def narrow(tool_name, status):
        received.append((tool_name, status))

    load(kernel, ctx_plugin("post_tool_call", narrow), "narrow")
    kernel.hooks.fire("post_tool_call", **payload_for("post_tool_call"))
    assert received == [("post_tool_call.tool_name", "post_tool_call.status")]


def test_missing_payload_arguments_arrive_as_none(kernel: Any) -> None:
    received = []
    load(kernel, impl_plugin("on_session_end", ("session_id", "reason"),
                             lambda **kw: received.append(kw)), "partial")
    kernel.hooks.fire("on_session_end", session_id="s1")
    assert received == [{"session_id": "s1", "reason": None}]


def test_both_styles_in_one_plugin(kernel: Any) -> None:
    calls: list[str] = []

    @hookimpl
    def post_llm_call(model):
        calls.append(f"impl:{model}")

    def register(ctx: Any) -> None:
        ctx.register_hook("post_llm_call", lambda model, **kw: calls.append(f"ctx:{model}"))

    status = load(kernel, SimpleNamespace(post_llm_call=post_llm_call, register=register), "both")
    assert status.hooks == ["post_llm_call"]
    kernel.hooks.fire("post_llm_call", model="m")
    assert calls == ["impl:m", "ctx:m"]


def test_hook_recorder_records_payloads(kernel: Any) -> None:
    recorder = HookRecorder(kernel, hooks=["on_session_start", "post_tool_call"])
    start = payload_for("on_session_start")
    kernel.hooks.fire("on_session_start", **start)
    kernel.hooks.fire("post_tool_call", tool_name="calc", status="ok")
    kernel.hooks.fire("pre_llm_call", user_message="not recorded")

    assert recorder.names() == ["on_session_start", "post_tool_call"]
    assert recorder.payloads("on_session_start") == [start]  # no telemetry key
    post = recorder.payloads("post_tool_call")[0]
    assert set(post) == set(hook_arguments("post_tool_call"))  # missing args filled in
    assert (post["tool_name"], post["status"], post["result"]) == ("calc", "ok", None)

    recorder.close()
    assert not kernel.hooks.has_hook("on_session_start")
    kernel.hooks.fire("on_session_start", **start)
    assert len(recorder.calls) == 2


def test_hook_recorder_defaults_to_every_event_hook(kernel: Any) -> None:
    recorder = HookRecorder(kernel)
    assert kernel.plugins["hook-recorder"].state == "loaded"
    for hook in EVENT_HOOKS:
        kernel.hooks.fire(hook, **payload_for(hook))
    assert recorder.names() == list(EVENT_HOOKS)
    assert all(recorder.payloads(h) == [payload_for(h)] for h in EVENT_HOOKS)


def test_every_hook_has_a_dispatch_rule() -> None:
    assert set(DISPATCH) == set(EVENT_HOOKS) | set(REGISTRATION_HOOKS)
