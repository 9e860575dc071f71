"""anthropic_messages mode through the real anthropic SDK against the fake server."""

from __future__ import annotations

import pytest

from hermes_agent.builtin_plugins.models.client import ModelClient
from hermes_agent.api import ChatRequest
from hermes_agent.builtin_plugins.models.anthropic_convert import convert_messages
from hermes_agent.testing.fake_llm import reply_text, reply_tool_call

EPHEMERAL = {"type": "ephemeral"}


def anthropic_client(kernel_for, server):  # type: ignore[no-untyped-def]
    kernel = kernel_for({"model": {"provider": "anthropic", "default": "claude-haiku-4-5"}},
                        env={"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": server.url})
    return ModelClient.from_config(kernel)


@pytest.mark.parametrize("stream", [False, True])
def test_tool_round_trip_with_cache_markers_and_thinking(kernel_for, server, stream: bool) -> None:
    client = anthropic_client(kernel_for, server)
    server.script(reply_tool_call("read_file", {"path": "a.txt"}, id="call_9", text="Checking.",
                                  reasoning="I should read it.",
                                  usage={"input_tokens": 12, "output_tokens": 30,
                                         "cache_read_tokens": 2000, "cache_write_tokens": 150}),
                  reply_text("It says hi."))
    messages = [{"role": "system", "content": "You are terse."},
                {"role": "user", "content": "read a.txt"}]
    first = client.chat(ChatRequest(messages, tools=[{"name": "read_file", "description": "read",
                                                      "parameters": {"type": "object"}}],
                                    reasoning_effort="low", stream=stream))
    assert first.finish_reason == "tool_calls" and first.tool_calls[0].name == "read_file"
    assert first.tool_calls[0].args == {"path": "a.txt"}
    assert first.reasoning == "I should read it."
    assert first.reasoning_details and first.reasoning_details[0]["signature"].startswith("sig-")
    usage = first.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens,
            usage.cache_write_tokens) == (12, 30, 2000, 150)
    sent = server.posts()[0].body
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert sent["max_tokens"] > 4096
    assert sent["tools"] == [{"name": "read_file", "description": "read",
                              "input_schema": {"type": "object"}}]

    tool_id = first.tool_calls[0].id
    messages += [first.assistant_message(),
                 {"role": "tool", "tool_call_id": tool_id, "content": "hi"},
                 {"role": "user", "content": "and?"}]
    assert client.chat(ChatRequest(messages, stream=stream)).content == "It says hi."
    body = server.last.body
    # system_and_3: the system prompt plus the last three messages carry the marker
    assert body["system"] == [{"type": "text", "text": "You are terse.", "cache_control": EPHEMERAL}]
    sent_messages = body["messages"]
    assert [m["role"] for m in sent_messages] == ["user", "assistant", "user"]
    assert sent_messages[0]["content"] == [{"type": "text", "text": "read a.txt",
                                            "cache_control": EPHEMERAL}]
    thinking, text, tool_use = sent_messages[1]["content"]
    assert thinking["type"] == "thinking" and "cache_control" not in thinking
    assert thinking["signature"] == first.reasoning_details[0]["signature"]
    assert text == {"type": "text", "text": "Checking."}
    assert tool_use == {"type": "tool_use", "id": tool_id, "name": "read_file",
                        "input": {"path": "a.txt"}, "cache_control": EPHEMERAL}
    result, question = sent_messages[2]["content"]
    assert result == {"type": "tool_result", "tool_use_id": tool_id,
                      "content": [{"type": "text", "text": "hi"}]}
    assert question == {"type": "text", "text": "and?", "cache_control": EPHEMERAL}
    markers = sum(1 for m in sent_messages for b in m["content"] if "cache_control" in b)
    assert markers + 1 == 4


def test_one_hour_cache_ttl(kernel_for, server) -> None:
    client = anthropic_client(kernel_for, server)
    server.script(reply_text("ok"))
    client.chat(ChatRequest([{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
                            cache_ttl="1h", stream=False))
    assert server.last.body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}


def test_role_alternation_is_repaired() -> None:
    system, messages = convert_messages([
        {"role": "assistant", "content": "earlier answer"},
        {"role": "user", "content": "one"},
        {"role": "user", "content": "two"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{}"}}]},
        {"role": "user", "content": "never answered the tool"},
        {"role": "tool", "tool_call_id": "orphan", "content": "stray result"},
    ])
    assert system == []
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant", "user", "assistant", "user"]
    assert [b["text"] for b in messages[2]["content"]] == ["one", "two"]
    # the unanswered tool_use and the orphan result are gone
    assert messages[3]["content"] == [{"type": "text", "text": "(tool call removed)"}]
    assert all(b["type"] != "tool_result" for b in messages[4]["content"])


def test_anthropic_error_mapping(kernel_for, server) -> None:
    from hermes_agent.api import ProviderError
    from hermes_agent.builtin_plugins.models.retry import RetryPolicy

    client = anthropic_client(kernel_for, server)
    client.retry = RetryPolicy(max_retries=0)
    server.script(_anthropic_overflow())
    with pytest.raises(ProviderError) as err:
        client.chat(ChatRequest([{"role": "user", "content": "x"}], stream=False))
    assert err.value.reason == "context_overflow" and "/compress" in str(err.value)


def _anthropic_overflow():  # type: ignore[no-untyped-def]
    from hermes_agent.testing.fake_llm import reply_error

    return reply_error(400, "prompt is too long: 250000 tokens > 200000 maximum")
