"""The `register(ctx)` API as published plugins use it, and the slot/tool registries."""

from __future__ import annotations

import asyncio
import json
import types

import pytest

from hermes_agent import SlotError, hookimpl
from hermes_agent.builtin_plugins.agent.memory_slot import active_memory
from hermes_agent.builtin_plugins.agent.tool_selection import select_tools
from hermes_agent.testing import make_kernel, register_plugin


def test_register_hook_positional_keyword_and_kwargs_payload(tmp_path):
    seen = {}

    def register(ctx):
        ctx.register_hook("pre_api_request", lambda **kw: seen.setdefault("positional", kw))
        ctx.register_hook(name="post_api_request", handler=lambda **kw: seen.setdefault("keyword", kw),
                          description="observer")

    kernel = make_kernel(tmp_path, plugins=[register])
    kernel.hooks.fire("pre_api_request", api_request_id="r1", request={"model": "m"}, model="m")
    kernel.hooks.fire("post_api_request", api_request_id="r1", response={"id": "x"},
                      usage={"input_tokens": 3})
    assert seen["positional"]["api_request_id"] == "r1"
    assert seen["positional"]["request"] == {"model": "m"}
    assert seen["keyword"]["usage"] == {"input_tokens": 3}
    assert seen["keyword"]["telemetry_schema_version"] == "hermes.observer.v1"


def test_register_command_positional_name_sync_and_async(tmp_path):
    async def later(raw_args):
        return f"async {raw_args}"

    def register(ctx):
        ctx.register_command("/My Cmd", lambda raw: f"got {raw}", "demo")
        ctx.register_command("later", later)

    kernel = make_kernel(tmp_path, plugins=[register])
    assert kernel.registered("slash_command")["my-cmd"].handler("x") == "got x"
    assert asyncio.run(kernel.registered("slash_command")["later"].handler("y")) == "async y"


def test_register_skill_file_or_folder(tmp_path):
    folder = tmp_path / "skill-dir"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: a\n---\n")
    single = tmp_path / "other.md"
    single.write_text("# other")

    def register(ctx):
        ctx.register_skill("folder-skill", folder)
        ctx.register_skill("file_skill", single, description="one file")

    kernel = make_kernel(tmp_path / "home", plugins=[register])
    assert kernel.registered("skill")["register:folder-skill"].path == folder / "SKILL.md"
    assert kernel.registered("skill")["register:file_skill"].description == "one file"

    def bad(ctx):
        ctx.register_skill("nope", tmp_path / "missing")

    status = kernel.register_plugin(bad, "bad-skill")
    assert status.state == "failed" and "does not exist" in status.reason


def test_unsupported_registrations_warn_instead_of_failing(tmp_path):
    def register(ctx):
        ctx.register_video_gen_provider(object())
        ctx.register_tool("t", "ts", {"name": "t"}, lambda a, **k: "{}")

    kernel = make_kernel(tmp_path)
    status = kernel.register_plugin(register, "imagey")
    assert status.state == "loaded"
    assert any("register_video_gen_provider() is not supported" in w for w in status.warnings)


def test_ctx_exposes_manifest_config_and_data_dir(tmp_path):
    captured = {}

    def register(ctx):
        captured.update(name=ctx.plugin_name, data=ctx.data_dir, config=ctx.config,
                        manifest=ctx.manifest.name)

    kernel = make_kernel(tmp_path, config={"plugins": {"entries": {"register": {"color": "red"}}}})
    kernel.register_plugin(register)
    assert captured["config"] == {"color": "red", "allow_tool_override": False}
    assert captured["data"] == tmp_path / "plugin-data" / "register" and captured["data"].is_dir()


class Mem:
    def __init__(self, name):
        self.name = name


def test_slots_select_by_name_and_never_fall_back(tmp_path):
    kernel = make_kernel(tmp_path, config={"context": {"engine": "lcm"}, "model": {"provider": "nope"}})

    @hookimpl
    def register_providers(register):
        register("context_engine", Mem("compressor"))
        register("memory", Mem("builtin"))
        register("memory", Mem("honcho"))
        register("model_provider", Mem("test-llm"))

    kernel.register_plugin(types.SimpleNamespace(register_providers=register_providers), "providers")
    with pytest.raises(SlotError) as err:
        kernel.active_provider("context_engine")
    assert "'lcm'" in str(err.value) and "installed: compressor" in str(err.value)
    assert "context.engine" in str(err.value)
    with pytest.raises(SlotError, match="model provider 'nope'.*installed: .*test-llm"):
        kernel.active_provider("model_provider")
    assert [m.name for m in active_memory(kernel)] == ["builtin"]
    kernel.config.data["memory"]["provider"] = "honcho"
    assert [m.name for m in active_memory(kernel)] == ["builtin", "honcho"]
    kernel.config.data["memory"]["provider"] = "mem0"
    with pytest.raises(SlotError, match="memory provider 'mem0'.*installed: builtin, honcho"):
        active_memory(kernel)
    assert kernel.active_provider("web_search") is None  # nothing selected, nothing guessed


def test_duplicate_provider_names_name_both_plugins(tmp_path):
    kernel = make_kernel(tmp_path)
    kernel.register_plugin(lambda ctx: ctx.register_web_search_provider(Mem("ddg")), "first")
    status = kernel.register_plugin(lambda ctx: ctx.register_web_search_provider(Mem("ddg")), "second")
    assert status.state == "failed"
    assert "'first'" in status.reason and "'second'" in status.reason
    platform = kernel.register_plugin(
        lambda ctx: ctx.register_platform("irc", "IRC", adapter_factory=lambda cfg: None,
                                          check_fn=lambda: True, max_message_length=400), "irc")
    assert platform.state == "loaded"
    assert kernel.slots.get("platform", "irc").max_message_length == 400


def test_every_slot_registration_method_of_ctx(tmp_path):
    kernel = make_kernel(tmp_path, config={"model": {"provider": "local"},
                                           "sessions": {"store": "pg"}})
    engine, model, store = Mem("lcm"), Mem("local"), Mem("pg")

    def register(ctx):
        ctx.register_memory_provider(Mem("honcho"))
        ctx.register_context_engine(engine)
        ctx.register_model_provider(model)
        ctx.register_web_search_provider(Mem("ddg"))
        ctx.register_session_store(store)
        ctx.register_middleware("tool_request", lambda **kw: None)
        ctx.register_middleware("bogus", lambda **kw: None)

    status = kernel.register_plugin(register, "everything")
    assert sorted(status.providers) == ["context_engine:lcm", "memory:honcho", "model_provider:local",
                                        "session_store:pg", "web_search:ddg"]
    assert kernel.active_provider("model_provider") is model
    assert kernel.active_provider("session_store") is store
    assert kernel.slots.get("context_engine", "lcm") is engine
    assert [kind for kind, _, plugin in kernel.middleware] == ["tool_request", "bogus"]
    assert kernel.middleware_for("tool_request") == [kernel.middleware[0][1]]
    assert kernel.middleware_for("llm_request") == []
    assert any("unknown middleware kind 'bogus'" in w for w in status.warnings)
    nameless = kernel.register_plugin(lambda ctx: ctx.register_context_engine(object()), "nameless")
    assert nameless.state == "failed"
    assert "context engine provider needs a non-empty `name`" in nameless.reason


def test_ctx_dispatch_tool_reaches_other_plugins_tools(tmp_path):
    kernel = make_kernel(tmp_path)
    kernel.register_plugin(lambda ctx: ctx.register_tool(
        "echo", "demo", {**SCHEMA, "name": "echo"}, lambda args, **kw: json.dumps(args)), "echo")
    captured = {}

    def register(ctx):
        captured["ctx"] = ctx

    kernel.register_plugin(register, "caller")
    ctx = captured["ctx"]
    assert json.loads(ctx.dispatch_tool("echo", {"x": 1})) == {"x": 1}
    assert "error" in json.loads(ctx.dispatch_tool("missing", {}))
    assert ctx.inject_message("hello") is False  # no running conversation accepts one here
    received = []  # the plugin driving a conversation answers the inject_message hook
    kernel.register_plugin(lambda ctx: ctx.register_hook(
        "inject_message", lambda content, role: received.append((role, content)) or True),
        "conversation")
    assert ctx.inject_message("from a plugin") is True
    assert ctx.inject_message("a note", role="assistant") is True
    assert received == [("user", "from a plugin"), ("assistant", "a note")]


SCHEMA = {"name": "x", "description": "d", "parameters": {"type": "object", "properties": {}}}


def test_tool_dispatch_contract(tmp_path):
    async def slow(args, **kw):
        await asyncio.sleep(0)
        return json.dumps({"async": True, "task": kw.get("task_id")})

    def register(ctx):
        ctx.register_tool("ok", "demo", {**SCHEMA, "name": "ok"}, lambda a, **k: json.dumps(a))
        ctx.register_tool("raises", "demo", {**SCHEMA, "name": "raises"}, lambda a, **k: 1 / 0)
        ctx.register_tool("dict", "demo", {**SCHEMA, "name": "dict"}, lambda a, **k: {"r": 1})
        ctx.register_tool("slow", "demo", {**SCHEMA, "name": "slow"}, slow, is_async=True)
        ctx.register_tool("hidden", "extra", {**SCHEMA, "name": "hidden"}, lambda a, **k: "{}",
                          check_fn=lambda: False)
        ctx.register_tool("flaky", "extra", {**SCHEMA, "name": "flaky"}, lambda a, **k: "{}",
                          check_fn=lambda: 1 / 0)

    kernel = make_kernel(tmp_path, plugins=[register])
    assert json.loads(kernel.tools.dispatch("ok", {"a": 1})) == {"a": 1}
    assert "ZeroDivisionError" in json.loads(kernel.tools.dispatch("raises", {}))["error"]
    assert "not a JSON string" in json.loads(kernel.tools.dispatch("dict", {}))["error"]
    assert json.loads(kernel.tools.dispatch("slow", {}, task_id="t9")) == {"async": True, "task": "t9"}
    assert "Unknown tool" in json.loads(kernel.tools.dispatch("missing", {}))["error"]
    tools, notes = select_tools(kernel.tools, None)
    assert sorted(tools) == ["dict", "ok", "raises", "slow"]
    assert any("'hidden' hidden" in n for n in notes) and any("'flaky'" in n for n in notes)
    assert kernel.tools.definitions(["ok"]) == [{"type": "function", "function": {**SCHEMA, "name": "ok"}}]


def test_toolsets_leaf_composite_platform(tmp_path):
    @hookimpl
    def register_toolsets(register):
        register("debugging", tools=["ok"], includes=["extra"], kind="composite")
        register("hermes-demo", includes=["debugging", "ghost"], kind="platform")

    def register(ctx):
        ctx.register_tool("ok", "demo", {**SCHEMA, "name": "ok"}, lambda a, **k: "{}")
        ctx.register_tool("other", "extra", {**SCHEMA, "name": "other"}, lambda a, **k: "{}")

    kernel = make_kernel(tmp_path, plugins=[register])
    kernel.register_plugin(types.SimpleNamespace(register_toolsets=register_toolsets), "sets")
    tools, notes = kernel.tools.resolve_toolsets(["hermes-demo"])
    assert tools == ["ok", "other"]
    assert notes and "unknown toolset 'ghost' (included by 'hermes-demo')" in notes[0]
    assert select_tools(kernel.tools, ["extra"])[0] == ["other"]



def test_register_toolset_from_register_ctx(tmp_path):
    def register(ctx):
        ctx.register_tool("ok", "demo", {**SCHEMA, "name": "ok"}, lambda a, **k: "{}")
        ctx.register_toolset("demo-all", tools=["ok"], description="everything of demo")
        ctx.register_toolset("hermes-demo", includes=["demo-all"], kind="platform")

    kernel = make_kernel(tmp_path, plugins=[register])
    assert kernel.tools.resolve_toolsets(["hermes-demo"]) == (["ok"], [])
    bad = kernel.register_plugin(lambda ctx: ctx.register_toolset("x", kind="weird"), "bad")
    assert bad.state == "failed" and "kind must be leaf, composite or platform" in bad.reason


def test_kernel_services_are_per_kernel_and_forget_unregistered_plugins(tmp_path):
    class Board:
        def __init__(self):
            self.notes = {}

        def remove_plugin(self, plugin):
            self.notes.pop(plugin, None)

    first, second = make_kernel(tmp_path / "a"), make_kernel(tmp_path / "b")
    board = first.service("board", Board)
    assert first.service("board", Board) is board  # created once
    assert second.service("board", Board) is not board  # never shared between kernels
    first.register_plugin(lambda ctx: board.notes.update({ctx.plugin_name: "hi"}), "noter")
    assert board.notes == {"noter": "hi"}
    first.unregister_plugin("noter")
    assert board.notes == {}


def test_kernel_close_closes_providers_and_services_and_survives_a_failing_one(tmp_path, caplog):
    closed = []

    class Store:
        name = "memo"

        def close(self):
            closed.append("store")

    class Broken:
        name = "broken"

        def close(self):
            raise RuntimeError("disk gone")

    class Ledger:
        def close(self):
            closed.append("service")

    kernel = make_kernel(tmp_path)
    kernel.register_plugin(lambda ctx: ctx.register_web_search_provider(Broken()), "b")
    kernel.register_plugin(lambda ctx: ctx.register_session_store(Store()), "s")
    kernel.service("ledger", Ledger)
    kernel.close()
    assert closed == ["store", "service"]
    assert "closing" in caplog.text and "RuntimeError: disk gone" in caplog.text


def test_register_plugin_context_manager_removes_everything(tmp_path):
    kernel = make_kernel(tmp_path)

    def register(ctx):
        ctx.register_tool("temp", "t", {**SCHEMA, "name": "temp"}, lambda a, **k: "{}")
        ctx.register_hook("pre_tool_call", lambda **kw: None)

    with register_plugin(kernel, register, "temporary") as status:
        assert status.state == "loaded" and kernel.hooks.has_hook("pre_tool_call")
    assert "temp" not in kernel.tools.tools and not kernel.hooks.has_hook("pre_tool_call")
    assert "temporary" not in kernel.plugins


def test_fixtures_from_the_pytest11_plugin(hermes_kernel, hook_recorder):
    hermes_kernel.hooks.fire("on_session_start", session_id="s1", model="m", platform="cli")
    assert hook_recorder.payloads("on_session_start") == [
        {"session_id": "s1", "model": "m", "platform": "cli"}]
