"""codex_responses mode (Responses API) through the real openai SDK against the fake server."""

from __future__ import annotations

import pytest

from hermes_agent.builtin_plugins.models.client import ModelClient
from hermes_agent.api import ChatRequest
from hermes_agent.testing.fake_llm import reply_text, reply_tool_call


@pytest.mark.parametrize("stream", [False, True])
def test_function_call_round_trip_carries_reasoning_items(kernel_for, server, stream: bool) -> None:
    kernel = kernel_for({"model": {"provider": "openai-codex", "default": "gpt-5"}},
                        env={"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.openai_base_url})
    client = ModelClient.from_config(kernel)
    server.script(reply_tool_call("search", {"q": "cats"}, id="call_3", reasoning="look it up",
                                  usage={"input_tokens": 40, "output_tokens": 9,
                                         "cache_read_tokens": 60, "reasoning_tokens": 5}),
                  reply_text("Cats are mammals."))
    events = []
    messages = [{"role": "system", "content": "Be factual."}, {"role": "user", "content": "cats?"}]
    first = client.chat(ChatRequest(messages, tools=[{"name": "search", "parameters": {"type": "object"}}],
                                    reasoning_effort="medium", stream=stream),
                        on_event=events.append)
    assert [(c.id, c.name, c.args) for c in first.tool_calls] == [("call_3", "search", {"q": "cats"})]
    assert first.finish_reason == "tool_calls" and first.reasoning == "look it up"
    usage = first.usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens,
            usage.reasoning_tokens) == (40, 60, 9, 5)
    if stream:
        assert [e.name for e in events if e.kind == "tool_call" and e.name] == ["search"]
        assert "".join(e.text for e in events if e.kind == "reasoning") == "look it up"
    sent = server.posts()[0].body
    assert sent["instructions"] == "Be factual." and sent["store"] is False
    assert sent["reasoning"] == {"effort": "medium", "summary": "auto"}
    assert sent["tools"] == [{"type": "function", "name": "search", "description": "",
                              "parameters": {"type": "object"}}]

    messages += [first.assistant_message(),
                 {"role": "tool", "tool_call_id": "call_3", "content": "mammal facts"}]
    second = client.chat(ChatRequest(messages, stream=stream))
    assert second.content == "Cats are mammals." and second.finish_reason == "stop"
    items = server.last.body["input"]
    assert items[0] == {"role": "user", "content": "cats?"}
    reasoning = items[1]
    assert reasoning["type"] == "reasoning" and reasoning["encrypted_content"].startswith("enc-")
    assert reasoning["id"] == first.reasoning_details[0]["id"]
    assert items[2] == {"type": "function_call", "call_id": "call_3", "name": "search",
                        "arguments": '{"q": "cats"}'}
    assert items[3] == {"type": "function_call_output", "call_id": "call_3", "output": "mammal facts"}


def test_truncated_response_reports_length(kernel_for, server) -> None:
    kernel = kernel_for({"model": {"provider": "openai-codex", "default": "gpt-5"}},
                        env={"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.openai_base_url})
    server.script(reply_text("partial", finish_reason="length"))
    response = ModelClient.from_config(kernel).chat(
        ChatRequest([{"role": "user", "content": "long"}], max_tokens=5, stream=False))
    assert response.finish_reason == "length" and response.content == "partial"
    assert server.last.body["max_output_tokens"] == 5
