"""pluggy is the one registry of hook implementations: what the bus dispatches is what
``kernel.pm`` holds, for both plugin styles, added and removed in one place."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from hermes_agent import hookimpl
from hermes_agent.hookspecs import hook_arguments
from hermes_agent.testing import make_kernel


@pytest.fixture
def kernel(tmp_path: Path) -> Any:
    return make_kernel(tmp_path)


def owners(kernel: Any, hook: str) -> list[str]:
    """Who implements ``hook`` in pluggy (a callback's owner, or the plugin's name)."""
    return sorted(getattr(i.plugin, "owner", i.plugin_name)
                  for i in getattr(kernel.pm.hook, hook).get_hookimpls())


def names_in_pm(kernel: Any, plugin: str) -> list[str]:
    return [name for name, obj in kernel.pm.list_name_plugin()
            if name == plugin or getattr(obj, "owner", None) == plugin]


def test_both_styles_are_pluggy_hookimpls(kernel: Any) -> None:
    seen: list[Any] = []

    @hookimpl
    def post_llm_call(model):
        seen.append(("impl", model))

    def callback(session_id, **kwargs: Any) -> None:
        seen.append(("callback", session_id, "model" in kwargs))

    def register(ctx: Any) -> None:
        ctx.register_hook("post_llm_call", callback)

    kernel.register_plugin(SimpleNamespace(post_llm_call=post_llm_call), "impl")
    kernel.register_plugin(register, "cb")
    assert owners(kernel, "post_llm_call") == ["cb", "impl"]
    kernel.hooks.fire("post_llm_call", session_id="s", model="m")
    assert seen == [("impl", "m"), ("callback", "s", True)]

    # pluggy's own call reaches the callback too, with the spec's arguments by keyword
    seen.clear()
    kernel.pm.hook.post_llm_call(**{n: n for n in hook_arguments("post_llm_call")})
    assert sorted(seen) == [("callback", "session_id", True), ("impl", "model")]


def test_firstresult_hook_through_pluggy_stops_at_first(kernel: Any) -> None:
    calls: list[str] = []

    def register(tag: str, value: Any) -> Any:
        def plugin(ctx: Any) -> None:
            ctx.register_hook("transform_tool_result",
                              lambda **kw: calls.append(tag) or value)
        return plugin

    kernel.register_plugin(register("a", None), "a")
    kernel.register_plugin(register("b", "B"), "b")
    kernel.register_plugin(register("c", "C"), "c")
    assert kernel.hooks.fire("transform_tool_result", result="r") == "B"
    assert calls == ["a", "b"]
    calls.clear()
    # pluggy calls LIFO, stops at the first result that is not None
    payload = dict.fromkeys(hook_arguments("transform_tool_result"), "r")
    assert kernel.pm.hook.transform_tool_result(**payload) == "C"
    assert calls == ["c"]


def test_unregister_removes_everything_from_pluggy(kernel: Any) -> None:
    @hookimpl
    def on_session_start(session_id):
        pass

    def register(ctx: Any) -> None:
        ctx.register_hook("on_session_start", lambda **kw: None)
        ctx.register_hook("post_tool_call", lambda **kw: None)

    plugin = SimpleNamespace(on_session_start=on_session_start, register=register)
    kernel.register_plugin(plugin, "both")
    assert len(names_in_pm(kernel, "both")) == 3
    assert kernel.hooks.hook_names("both") == ["on_session_start", "post_tool_call"]
    kernel.unregister_plugin("both")
    assert names_in_pm(kernel, "both") == []
    assert owners(kernel, "on_session_start") == owners(kernel, "post_tool_call") == []
    assert not kernel.hooks.has_hook("on_session_start")
    assert kernel.hooks.hook_names("both") == []


@pytest.mark.parametrize("failure", ["register", "commit"])
def test_failed_load_leaves_nothing_in_pluggy(kernel: Any, failure: str) -> None:
    calls: list[str] = []

    @hookimpl
    def post_tool_call(tool_name):
        calls.append("impl")

    def register(ctx: Any) -> None:
        ctx.register_hook("post_tool_call", lambda **kw: calls.append("callback"))
        ctx.register_command("ping", lambda raw: "pong")
        if failure == "register":
            raise RuntimeError("register failed")

    kernel.register_plugin(lambda ctx: ctx.register_command("ping", lambda raw: ""), "owner")
    status = kernel.register_plugin(
        SimpleNamespace(post_tool_call=post_tool_call, register=register), "doomed")
    assert status.state == "failed"  # "commit": the /ping clash is found while committing
    assert names_in_pm(kernel, "doomed") == []
    assert not kernel.hooks.has_hook("post_tool_call")
    kernel.hooks.fire("post_tool_call", tool_name="x")
    assert calls == []


def test_duplicate_name_leaves_the_loaded_plugin_alone(kernel: Any) -> None:
    def plugin() -> SimpleNamespace:
        @hookimpl
        def on_session_start(session_id):
            return "impl"

        return SimpleNamespace(on_session_start=on_session_start, register=lambda ctx: (
            ctx.register_hook("on_session_start", lambda **kw: "callback")))

    kernel.register_plugin(plugin(), "same")
    status = kernel.register_plugin(plugin(), "same")
    assert (status.state, status.code) == ("failed", "duplicate")
    assert kernel.hooks.call("on_session_start", session_id="s") == ["impl", "callback"]
    assert len(names_in_pm(kernel, "same")) == 2


def test_same_object_twice_keeps_the_first(kernel: Any) -> None:
    @hookimpl
    def on_session_start(session_id):
        return "impl"

    plugin = SimpleNamespace(on_session_start=on_session_start)
    kernel.register_plugin(plugin, "once")
    assert kernel.register_plugin(plugin, "once").code == "duplicate"
    assert kernel.pm.get_plugin("once") is plugin
    assert kernel.hooks.call("on_session_start", session_id="s") == ["impl"]


def test_loading_plugin_is_not_dispatched_until_committed(kernel: Any) -> None:
    seen: list[Any] = []

    @hookimpl
    def on_session_start(session_id):
        seen.append(("self", session_id))

    def register(ctx: Any) -> None:  # fires the hook while it is still loading
        seen.append(("during", ctx.kernel.hooks.call("on_session_start", session_id="early")))

    kernel.register_plugin(lambda ctx: ctx.register_hook(
        "on_session_start", lambda **kw: seen.append(("other", kw["session_id"]))), "other")
    assert kernel.register_plugin(SimpleNamespace(on_session_start=on_session_start,
                                                  register=register), "late").state == "loaded"
    assert seen == [("other", "early"), ("during", [])]
    seen.clear()
    kernel.hooks.call("on_session_start", session_id="now")
    assert seen == [("other", "now"), ("self", "now")]


def test_plain_pluggy_registration_is_dispatched(kernel: Any) -> None:
    """The bus reads pluggy, so a plugin registered with ``kernel.pm`` directly counts too,
    and unregistering it there is enough."""
    seen: list[str] = []

    @hookimpl
    def post_tool_call(tool_name):
        seen.append(tool_name)

    assert not kernel.hooks.has_hook("post_tool_call")  # cached as empty first
    kernel.pm.register(SimpleNamespace(post_tool_call=post_tool_call), name="raw")
    kernel.hooks.fire("post_tool_call", tool_name="t")
    kernel.pm.unregister(name="raw")
    kernel.hooks.fire("post_tool_call", tool_name="u")
    assert seen == ["t"]


def test_marked_function_as_callback_registers_once(kernel: Any) -> None:
    """A ``@hookimpl`` function handed to ``ctx.register_hook`` is one subscription."""
    calls: list[str] = []

    @hookimpl
    def on_session_end(session_id, **kwargs: Any):
        calls.append(session_id)

    kernel.register_plugin(lambda ctx: ctx.register_hook("on_session_end", on_session_end),
                           "marked")
    kernel.hooks.fire("on_session_end", session_id="s")
    assert calls == ["s"] and owners(kernel, "on_session_end") == ["marked"]


def test_private_name_is_not_a_hook(kernel: Any) -> None:
    status = kernel.register_plugin(lambda ctx: ctx.register_hook("__init__", print), "odd")
    assert status.state == "failed" and "not a hook name" in status.reason
    assert names_in_pm(kernel, "odd") == []


def test_unknown_hook_is_kept_in_pluggy_but_never_fired(kernel: Any) -> None:
    status = kernel.register_plugin(lambda ctx: ctx.register_hook("zzzz_qqqq", print), "typo")
    assert status.state == "loaded" and any("unknown hook" in w for w in status.warnings)
    assert owners(kernel, "zzzz_qqqq") == ["typo"]
    assert not kernel.pm.hook.zzzz_qqqq.has_spec()


def test_add_callback_registers_in_pluggy(kernel: Any) -> None:
    kernel.hooks.add_callback("post_tool_call", lambda **kw: "x", plugin="p01")
    assert owners(kernel, "post_tool_call") == ["p01"]
    assert kernel.hooks.call("post_tool_call", tool_name="t") == ["x"]
    kernel.hooks.remove_plugin("p01")
    assert kernel.hooks.call("post_tool_call", tool_name="t") == []
