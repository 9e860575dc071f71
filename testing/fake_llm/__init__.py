"""Fake LLM servers for tests: real HTTP on 127.0.0.1 speaking Chat Completions, Anthropic
Messages and Responses (SSE included), driven by the official SDKs.

    from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call

    def test_agent(tmp_path):
        with FakeLLMServer() as server:
            server.script(reply_tool_call("read_file", {"path": "x"}), reply_text("done"))
            ...  # point model.base_url at server.openai_base_url (or server.url for Anthropic)
            assert server.posts()[1].body["messages"][-1]["role"] == "tool"

The ``fake_llm`` pytest fixture (from the ``pytest11`` entry point) yields a started server.
"""

from .replies import (FakeToolCall, Reply, reply_cut, reply_error, reply_looping, reply_stall,
                      reply_text, reply_tool_call, reply_tool_calls)
from .server import FakeLLMServer, RecordedRequest

__all__ = ["FakeLLMServer", "RecordedRequest", "Reply", "FakeToolCall", "reply_text",
           "reply_tool_call", "reply_tool_calls", "reply_error", "reply_stall", "reply_cut",
           "reply_looping"]
