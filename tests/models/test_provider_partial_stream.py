"""A stream that dies part-way: retried while nothing has reached the callback, otherwise a
PartialStreamError (no retry, no fallback), so no delta is ever shown twice."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_agent.builtin_plugins.models.client import ModelClient
from hermes_agent.api import CancelToken, ChatRequest, PartialStreamError, ProviderError
from hermes_agent.builtin_plugins.models.retry import RetryPolicy
from hermes_agent.testing import HookRecorder
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_cut, reply_text, reply_tool_call

ASK = [{"role": "user", "content": "hello"}]
FAST = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=0.02)
ANSWER = "Hello there, friend"
# events sent before the cut so that exactly the deltas "Hello" and " ther" went out:
# chat: role chunk + 2 text chunks; anthropic: message_start, ping, content_block_start + 2
# deltas; responses: response.created, output_item.added + 2 deltas
CUT_AFTER_TWO_DELTAS = {"chat_completions": 3, "anthropic_messages": 5, "codex_responses": 4}
MODES = list(CUT_AFTER_TWO_DELTAS)


def kernel_and_client(mode: str, kernel_in_mode: Any) -> tuple[Any, ModelClient]:
    kernel = kernel_in_mode(mode)
    return kernel, ModelClient.from_config(kernel, retry=FAST)


def texts(events: list[Any]) -> list[str]:
    return [e.text for e in events if e.kind == "text"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("with_token", [False, True], ids=["no-token", "token"])
def test_cut_after_shown_text_raises_and_is_not_retried(kernel_in_mode, server, mode: str,
                                                        with_token: bool) -> None:
    kernel, client = kernel_and_client(mode, kernel_in_mode)
    recorder = HookRecorder(kernel, ["api_request_error"])
    server.script(reply_cut(ANSWER, after=CUT_AFTER_TWO_DELTAS[mode], chunk_size=5),
                  reply_text("a second, different answer"))
    events: list[Any] = []
    with pytest.raises(PartialStreamError) as err:
        client.chat(ChatRequest(ASK), on_event=events.append,
                    interrupt=CancelToken() if with_token else None)
    assert texts(events) == ["Hello", " ther"]  # shown once, nothing after the cut
    error = err.value
    assert isinstance(error, ProviderError) and error.reason == "network"
    assert (error.partial_text, error.events, error.retryable) == ("Hello ther", 2, False)
    assert "10 characters" in str(error) and "Fix: ask again" in str(error)
    assert len(server.posts()) == 1 and server.pending == 1  # never retried
    (payload,) = recorder.payloads("api_request_error")
    assert (payload["reason"], payload["retryable"]) == ("network", False)


@pytest.mark.parametrize("mode", MODES)
def test_cut_before_anything_was_shown_is_retried(kernel_in_mode, server, mode: str) -> None:
    _, client = kernel_and_client(mode, kernel_in_mode)
    server.script(reply_cut(ANSWER, after=1), reply_text("Complete answer.", chunk_size=8))
    events: list[Any] = []
    response = client.chat(ChatRequest(ASK), on_event=events.append, interrupt=CancelToken())
    assert response.content == "Complete answer." and response.attempts == 2
    assert "".join(texts(events)) == "Complete answer."
    assert len(server.posts()) == 2


def test_cut_during_tool_call_arguments_is_not_retried(kernel_in_mode, server) -> None:
    _, client = kernel_and_client("chat_completions", kernel_in_mode)
    # role chunk, tool-call header, first half of the arguments, then the cut
    server.script(reply_tool_call("read_file", {"path": "notes.txt"}, cut_after=3),
                  reply_text("unused"))
    events: list[Any] = []
    with pytest.raises(PartialStreamError) as err:
        client.chat(ChatRequest(ASK), on_event=events.append)
    assert [e.name for e in events if e.name] == ["read_file"]
    assert err.value.partial_text == "" and err.value.events == len(events) == 2
    assert "2 deltas" in str(err.value) and server.pending == 1


def test_no_fallback_once_text_was_shown(kernel_for, server) -> None:
    with FakeLLMServer() as backup:
        kernel = kernel_for({"model": {"provider": "custom", "base_url": server.openai_base_url,
                                       "default": "m"},
                             "fallback_providers": [{"provider": "deepseek", "model": "deepseek-chat"}]},
                            env={"DEEPSEEK_API_KEY": "k", "DEEPSEEK_BASE_URL": backup.openai_base_url})
        client = ModelClient.from_config(kernel, retry=FAST)
        assert client.fallbacks  # a fallback is configured and would be used for a network error
        server.script(reply_cut(ANSWER, after=3, chunk_size=5))
        backup.script(reply_text("from backup"))
        with pytest.raises(PartialStreamError):
            client.chat(ChatRequest(ASK), on_event=lambda event: None)
        assert backup.posts() == [] and client.active is client.primary


def test_without_a_callback_a_cut_stream_is_retried(kernel_in_mode, server) -> None:
    _, client = kernel_and_client("chat_completions", kernel_in_mode)
    server.script(reply_cut(ANSWER, after=3, chunk_size=5), reply_text(ANSWER))
    response = client.chat(ChatRequest(ASK, stream=True))
    assert response.content == ANSWER and response.attempts == 2


@pytest.mark.parametrize("mode", MODES)
def test_plain_reply_cut_half_way_is_a_retried_network_error(kernel_in_mode, server, mode: str) -> None:
    kernel, client = kernel_and_client(mode, kernel_in_mode)
    recorder = HookRecorder(kernel, ["api_request_error"])
    server.script(reply_cut(ANSWER), reply_text(ANSWER))
    response = client.chat(ChatRequest(ASK, stream=False), interrupt=CancelToken())
    assert response.content == ANSWER and response.attempts == 2
    assert [p["reason"] for p in recorder.payloads("api_request_error")] == ["network"]


def test_a_failing_callback_is_raised_unchanged_and_not_retried(kernel_in_mode, server) -> None:
    _, client = kernel_and_client("chat_completions", kernel_in_mode)
    server.script(reply_text(ANSWER), reply_text("unused"))

    def broken(event: Any) -> None:
        raise KeyError("display went away")

    with pytest.raises(KeyError, match="display went away"):
        client.chat(ChatRequest(ASK), on_event=broken, interrupt=CancelToken())
    assert len(server.posts()) == 1
