"""chat_completions mode through the real openai SDK against the fake server."""

from __future__ import annotations

import json

import pytest

from hermes_agent.builtin_plugins.models.client import ModelClient
from hermes_agent.api import ChatRequest, StreamEvent, ToolCall
from hermes_agent.testing.fake_llm import reply_text, reply_tool_call, reply_tool_calls

TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "Read a file",
                                           "parameters": {"type": "object", "properties": {
                                               "path": {"type": "string"}}}}}]


def custom_client(kernel_for, server, **model):  # type: ignore[no-untyped-def]
    kernel = kernel_for({"model": {"provider": "custom", "base_url": server.openai_base_url,
                                   "default": "local-model", **model}})
    return ModelClient.from_config(kernel)


@pytest.mark.parametrize("stream", [False, True])
def test_tool_call_round_trip(kernel_for, server, stream: bool) -> None:
    client = custom_client(kernel_for, server)
    server.script(reply_tool_call("read_file", {"path": "notes.txt"}, id="call_7"),
                  reply_text("The file says hello."))
    messages = [{"role": "system", "content": "be brief"},
                {"role": "user", "content": "what is in notes.txt?"}]
    first = client.chat(ChatRequest(messages, tools=TOOLS, stream=stream))
    assert first.finish_reason == "tool_calls"
    assert first.tool_calls == [ToolCall("call_7", "read_file", '{"path": "notes.txt"}')]
    assert first.tool_calls[0].args == {"path": "notes.txt"}
    messages.append(first.assistant_message())
    messages.append({"role": "tool", "tool_call_id": "call_7", "tool_name": "read_file",
                     "content": "hello"})
    second = client.chat(ChatRequest(messages, tools=TOOLS, stream=stream))
    assert second.content == "The file says hello."
    assert second.finish_reason == "stop"
    sent = server.last.body
    assert sent["model"] == "local-model"
    assert sent["tools"] == TOOLS
    assert sent.get("stream", False) is stream
    assert sent["messages"][2] == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_7", "type": "function",
         "function": {"name": "read_file", "arguments": '{"path": "notes.txt"}'}}]}
    # our bookkeeping key tool_name is not sent; the wire message has only API keys
    assert sent["messages"][3] == {"role": "tool", "tool_call_id": "call_7", "content": "hello"}


def test_stream_deltas_reach_the_callback(kernel_for, server) -> None:
    client = custom_client(kernel_for, server)
    server.script(reply_tool_calls(("a", {"x": 1}), ("b", {}), text="Let me look.",
                                   reasoning="thinking..."))
    events: list[StreamEvent] = []
    response = client.chat(ChatRequest([{"role": "user", "content": "go"}]), on_event=events.append)
    assert "".join(e.text for e in events if e.kind == "text") == "Let me look."
    assert "".join(e.text for e in events if e.kind == "reasoning") == "thinking..."
    firsts = [e for e in events if e.kind == "tool_call" and e.name]
    assert [(e.index, e.name) for e in firsts] == [(0, "a"), (1, "b")]
    args0 = "".join(e.text for e in events if e.kind == "tool_call" and e.index == 0)
    assert json.loads(args0) == {"x": 1}
    assert [c.name for c in response.tool_calls] == ["a", "b"]
    assert response.reasoning == "thinking..."
    assert server.last.body["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("stream", [False, True])
def test_usage_mapping(kernel_for, server, stream: bool) -> None:
    client = custom_client(kernel_for, server)
    server.script(reply_text("ok", usage={"input_tokens": 100, "output_tokens": 20,
                                          "cache_read_tokens": 900, "reasoning_tokens": 7}))
    usage = client.chat(ChatRequest([{"role": "user", "content": "q"}], stream=stream)).usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens,
            usage.cache_write_tokens, usage.reasoning_tokens) == (100, 20, 900, 0, 7)
    assert usage.prompt_tokens == 1000


def test_options_reach_the_wire(kernel_for, server) -> None:
    client = custom_client(kernel_for, server)
    server.script(reply_text("ok"))
    client.chat(ChatRequest([{"role": "user", "content": "q"}], max_tokens=50, temperature=0.2,
                            reasoning_effort="high", extra_body={"top_k": 5}, stream=False))
    body = server.last.body
    assert (body["max_tokens"], body["temperature"], body["reasoning_effort"], body["top_k"]) == (
        50, 0.2, "high", 5)


def test_openai_profile_uses_max_completion_tokens(kernel_for, server) -> None:
    kernel = kernel_for({"model": {"provider": "openai", "default": "gpt-4.1"}},
                        env={"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.openai_base_url})
    server.script(reply_text("ok", usage={"input_tokens": 1_000_000, "output_tokens": 0}))
    response = ModelClient.from_config(kernel).chat(
        ChatRequest([{"role": "user", "content": "q"}], max_tokens=10, stream=False))
    assert server.last.body["max_completion_tokens"] == 10
    assert server.last.headers["authorization"] == "Bearer sk-test"
    assert response.cost is not None and response.cost.amount_usd == pytest.approx(2.0)
    assert response.cost.status == "estimated"
