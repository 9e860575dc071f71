"""Text that is not valid Unicode (a lone surrogate, as JSON's ``"\\ud800"`` decodes) is
repaired where it enters, so it never reaches the model request or the session store in a
form that fails later turns: at the gateway's edge (every platform's inbound text), and in the
agent itself (a tool result, say)."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.api import session_store
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call

from .test_api_server import KEY, WAIT, kernel, served

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")


def complete(base: str, text: str, session: str) -> tuple[int, Any]:
    # the raw JSON escape: json.loads on the server turns it into a lone surrogate
    body = json.dumps({"model": "hermes-agent", "messages": [{"role": "user", "content": text}]},
                      ensure_ascii=True).encode()
    request = urllib.request.Request(f"{base}/v1/chat/completions", body, headers={
        "Content-Type": "application/json", "Authorization": f"Bearer {KEY}",
        "X-Hermes-Session": session})
    try:
        with urllib.request.urlopen(request, timeout=WAIT) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def answer(reply: Any) -> str:
    return str(reply[1]["choices"][0]["message"]["content"])


def test_a_lone_surrogate_in_an_api_message_does_not_brick_the_conversation(
        home: Path, fake_llm: FakeLLMServer) -> None:
    fake_llm.script(reply_text("first"), reply_text("second"), reply_text("third"))

    async def scenario() -> list[Any]:
        async with served(kernel(home, fake_llm)) as (_runner, base):
            return [await asyncio.to_thread(complete, base, text, "conv")
                    for text in ("broken \ud800 text", "next turn", "and another")]

    replies = asyncio.run(scenario())
    assert [answer(r) for r in replies] == ["first", "second", "third"]
    sent = [m["content"] for m in fake_llm.posts()[0].body["messages"] if m["role"] == "user"]
    assert sent == ["broken \ufffd text"]
    store = session_store(kernel(home, fake_llm))
    stored = [m for s in store.list_sessions() for m in store.get_messages(s["id"])]
    assert "broken \ufffd text" in [m["content"] for m in stored]


def test_a_lone_surrogate_in_a_tool_result_does_not_brick_the_session(
        home: Path, fake_llm: FakeLLMServer) -> None:
    def bad_tool(ctx: Any) -> None:
        ctx.register_tool("bad", "testing", {
            "name": "bad", "description": "Returns broken text.",
            "parameters": {"type": "object", "properties": {}}},
            lambda args, **_: "half a pair: \udc00!")
    bad_tool.__name__ = "bad_tool"
    fake_llm.script(reply_tool_call("bad", {}), reply_text("read it"), reply_text("later"))
    from hermes_agent.testing import make_kernel

    k = make_kernel(home, config={
        "model": {"provider": "custom", "base_url": fake_llm.openai_base_url,
                  "default": "fake-model", "max_retries": 0}, "sessions": {"auto_title": False}},
        builtins=True, plugins=[bad_tool], env={"HERMES_HOME": str(home)})
    agent = k.service("agent").create(platform="cli")
    first = agent.run_conversation("use the tool")
    second = agent.run_conversation("and then?")
    assert not first.failed and first.final_response == "read it", first.error
    assert not second.failed and second.final_response == "later", second.error
    tool_message = [m for m in fake_llm.posts()[1].body["messages"] if m["role"] == "tool"][0]
    assert "\ufffd" in json.dumps(tool_message, ensure_ascii=False)
