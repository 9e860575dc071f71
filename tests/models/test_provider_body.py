"""The history and tool schemas reach the SDKs through ``extra_body`` (runtime.sent_as_json),
skipping their per-call TypedDict walk. The request body must stay exactly what a plain
SDK ``create(**kwargs)`` sends: same JSON, same key order, caller's extra_body still winning."""

from __future__ import annotations

import json

import pytest

from hermes_agent.builtin_plugins.models.client import ModelClient
from hermes_agent.api import ChatRequest
from hermes_agent.builtin_plugins.models.runtime import sent_as_json
from hermes_agent.testing.fake_llm import reply_text

TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "Read a file",
                                           "parameters": {"type": "object", "properties": {
                                               "path": {"type": "string"}}}}}]
HISTORY = [{"role": "system", "content": "be brief"},
           {"role": "user", "content": "what is in notes.txt? 你好"},
           {"role": "assistant", "content": None, "tool_calls": [
               {"id": "call_1", "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "notes.txt"}'}}]},
           {"role": "tool", "tool_call_id": "call_1", "content": "hello"},
           {"role": "user", "content": [{"type": "text", "text": "and now?"}]}]
SDK_CALL = {"chat_completions": lambda c: c.chat.completions.create,
            "anthropic_messages": lambda c: c.messages.create,
            "codex_responses": lambda c: c.responses.create}


def _bytes(body: object) -> str:
    return json.dumps(body, ensure_ascii=False)  # json.loads kept the wire's key order


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("mode", list(SDK_CALL))
def test_body_is_what_the_sdk_would_send(kernel_in_mode, server, mode: str, stream: bool) -> None:
    client = ModelClient.from_config(kernel_in_mode(mode))
    transport = client.primary.transport()
    request = ChatRequest(list(HISTORY), tools=TOOLS, stream=stream, temperature=0.5,
                          max_tokens=300, extra_body={"top_k": 3})
    server.script(reply_text("one"), reply_text("two"))

    assert client.chat(request).content == "one"
    ours = server.last.body
    # the same call made the plain way, through the SDK's own create()
    kwargs = transport.build_kwargs(request)
    result = SDK_CALL[mode](transport.client)(**kwargs)
    if stream:
        with result:
            list(result)
    plain = server.last.body

    assert _bytes(ours) == _bytes(plain)
    assert ours["top_k"] == 3 and "extra_body" not in ours


def test_callers_extra_body_wins_and_nothing_else_changes() -> None:
    kwargs = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "timeout": 5.0,
              "extra_body": {"messages": "override", "seed": 1}}
    sdk = sent_as_json(kwargs, ("messages", "tools"))
    assert sdk["messages"] == () and "tools" not in sdk  # placeholder only for what it moves
    assert sdk["extra_body"] == {"messages": "override", "seed": 1}
    assert kwargs["messages"] == [{"role": "user", "content": "hi"}]  # the input is not touched
    assert sent_as_json({"model": "m"}, ("messages",)) == {"model": "m"}
