"""Replacing the default context engine: a plugin's engine selected with ``context.engine``
is the one the agent uses, and an engine written for the original's ``ContextEngine``
(imported from ``agent.context_engine``) loads from a plugin folder unmodified."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from hermes_agent.builtin_plugins.agent.loop import Agent, AgentOptions
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

FILLER = "lorem ipsum dolor sit amet " * 20


def small_model(server: FakeLLMServer) -> dict[str, Any]:
    return {"provider": "custom", "base_url": server.openai_base_url, "default": "fake-model",
            "max_retries": 0, "context_length": 4000}


DOCS = Path(__file__).resolve().parents[2] / "docs" / "context.md"


def docs_engine_module() -> dict[str, Any]:
    """The minimal engine of docs/context.md, run as written."""
    text = DOCS.read_text(encoding="utf-8")
    code = text.split("## Replacing the engine", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict[str, Any] = {}
    exec(compile(code, str(DOCS), "exec"), namespace)
    return namespace


def test_the_engine_in_the_docs_replaces_the_compressor(kernel_for: Any,
                                                       server: FakeLLMServer) -> None:
    server.default_reply = reply_text("ok")
    kernel = kernel_for(model=small_model(server), toolsets=[],
                        context={"engine": "keep-latest"})
    module = docs_engine_module()
    kernel.register_plugin(module["register"], "keep_latest")
    registered = kernel.slots.get("context_engine", "keep-latest")
    agent = Agent(kernel, AgentOptions(stream=False))
    engine = agent.context
    assert type(engine) is module["KeepLatest"] and engine is not registered  # a copy per agent
    assert (engine.context_length, engine.threshold_tokens) == (4000, 3000)
    first = agent.session_id
    for index in range(30):
        agent.run_conversation(f"{index} {FILLER}")
        if engine.compression_count:
            break
    assert engine.compression_count == 1 and registered.compression_count == 0
    assert agent.sessions.get(agent.session_id)["parent_session_id"] == first
    assert agent.history[0]["content"].startswith(f"{index} ")
    assert engine.last_prompt_tokens > 0  # the host kept its counters
    request = server.posts()[-1].body["messages"]
    assert [m["role"] for m in request] == ["system", "user"]  # nothing else was kept
    from hermes_agent.builtin_plugins.context.compressor import Compressor
    assert not any(isinstance(e, Compressor) for e in (engine, registered))


def test_every_compression_key_is_documented() -> None:
    from hermes_agent.builtin_plugins.context.config_schema import CompressionSection

    text = DOCS.read_text(encoding="utf-8")
    for key in CompressionSection.model_fields:
        assert f"`compression.{key}`" in text, key


ORIGINAL_ENGINE = '''
from agent.context_engine import ContextEngine


class LCMEngine(ContextEngine):
    """Written against Hermes Agent 0.19's interface."""

    def __init__(self):
        self.events = []

    @property
    def name(self):
        return "lcm"

    def update_from_response(self, usage):
        self.last_prompt_tokens = usage.get("prompt_tokens", 0)
        self.last_completion_tokens = usage.get("completion_tokens", 0)

    def should_compress(self, prompt_tokens=None):
        return (prompt_tokens or self.last_prompt_tokens) >= self.threshold_tokens

    def compress(self, messages, current_tokens=None, focus_topic=None):
        self.events.append(("compress", len(messages), current_tokens, focus_topic))
        self.compression_count += 1
        return [{"role": "user", "content": "[lcm] earlier turns elided"}] + messages[-2:]

    def on_session_start(self, session_id, **kwargs):
        self.events.append(("start", session_id, kwargs.get("boundary_reason")))


def register(ctx):
    ctx.register_context_engine(LCMEngine())
'''


def test_an_engine_written_for_the_original_loads_unmodified(
        kernel_for: Any, server: FakeLLMServer, home: Path) -> None:
    folder = home / "plugins" / "lcm"
    folder.mkdir()
    (folder / "plugin.yaml").write_text("name: lcm\nversion: 1.0.0\ndescription: LCM engine\n")
    (folder / "__init__.py").write_text(textwrap.dedent(ORIGINAL_ENGINE))
    server.default_reply = reply_text("ok")
    kernel = kernel_for(model=small_model(server), toolsets=[], context={"engine": "lcm"})
    agent = Agent(kernel, AgentOptions(stream=False))
    engine = agent.context
    assert type(engine).__name__ == "LCMEngine" and engine.threshold_tokens == 3000
    first = agent.session_id
    for index in range(30):
        agent.run_conversation(f"{index} {FILLER}")
        if engine.compression_count:
            break
    compress = next(e for e in engine.events if e[0] == "compress")
    assert compress[2] and compress[2] >= 3000 and compress[3] is None  # filtered arguments
    assert ("start", agent.session_id, "compression") in engine.events
    assert agent.sessions.get(first)["end_reason"] == "compression"
    assert agent.history[0]["content"] == "[lcm] earlier turns elided"
    # /compress passes the focus to an engine that accepts it
    assert agent.compress("flights") is True
    assert engine.events[-2][3] == "flights"


def test_with_the_context_plugin_disabled_the_agent_runs_without_compression(
        kernel_for: Any, server: FakeLLMServer, caplog: Any) -> None:
    server.default_reply = reply_text("ok")
    kernel = kernel_for(model=small_model(server), toolsets=[],
                        plugins={"enabled": ["calculator"], "disabled": ["context"]})
    with caplog.at_level("WARNING", logger="hermes_agent.agent.context"):
        agent = Agent(kernel, AgentOptions(stream=False))
    assert agent.context is None
    assert "context compression is off" in caplog.text and "'compressor'" in caplog.text
    for index in range(12):  # well past the threshold: nothing compresses, nothing breaks
        assert agent.run_conversation(f"{index} {FILLER}").completed
    assert agent.compress("anything") is False
    from hermes_agent.builtin_plugins.agent.chat.slash import ChatState, run_slash

    assert "No context engine is active" in run_slash(ChatState(agent, kernel), "/compress")
    assert agent.sessions.get(agent.session_id)["parent_session_id"] is None
