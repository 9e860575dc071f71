"""Retries, Retry-After, error messages, fallback, interrupts, timeouts and the API hooks."""

from __future__ import annotations

import threading
import time

import pytest

from hermes_agent.builtin_plugins.models.client import ModelClient
from hermes_agent.api import CancelToken, ChatRequest, ProviderError, RequestInterrupted
from hermes_agent.builtin_plugins.models.retry import RetryPolicy
from hermes_agent.hookspecs import hook_arguments
from hermes_agent.testing import HookRecorder
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_error, reply_stall, reply_text

ASK = [{"role": "user", "content": "hello"}]
FAST = RetryPolicy(max_retries=3, base_delay=0.01, max_delay=0.02)


def custom(kernel_for, server, **config):  # type: ignore[no-untyped-def]
    kernel = kernel_for({"model": {"provider": "custom", "base_url": server.openai_base_url,
                                   "default": "m"}, **config})
    return kernel, ModelClient.from_config(kernel, retry=FAST)


@pytest.mark.parametrize("stream", [False, True])
def test_retries_on_429_and_500_honour_retry_after(kernel_for, server, stream: bool) -> None:
    kernel, client = custom(kernel_for, server)
    recorder = HookRecorder(kernel, ["api_request_error", "pre_api_request", "post_api_request"])
    server.script(reply_error(429, "slow down", retry_after=1),
                  reply_error(500, "boom", retry_after=0.25), reply_text("finally"))
    started = time.monotonic()
    response = client.chat(ChatRequest(ASK, stream=stream))
    elapsed = time.monotonic() - started
    assert response.content == "finally" and response.attempts == 3
    assert elapsed >= 1.25, "Retry-After (1 s) and retry-after-ms (250 ms) were not honoured"
    assert elapsed < 5
    # the SDK does not retry on its own: one HTTP request per attempt
    assert [r.headers["x-stainless-retry-count"] for r in server.posts()] == ["0", "0", "0"]
    errors = recorder.payloads("api_request_error")
    assert [(e["reason"], e["status_code"], e["retry_count"], e["retryable"]) for e in errors] == [
        ("rate_limit", 429, 0, True), ("server_error", 500, 1, True)]
    assert len({p["api_request_id"] for _, p in recorder.calls}) == 1
    assert recorder.names() == ["pre_api_request", "api_request_error", "pre_api_request",
                                "api_request_error", "pre_api_request", "post_api_request"]


def test_gives_up_after_max_retries(kernel_for, server) -> None:
    _, client = custom(kernel_for, server)
    client.retry = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=0.01)
    server.script(*[reply_error(503, "down")] * 3)
    with pytest.raises(ProviderError) as err:
        client.chat(ChatRequest(ASK, stream=False))
    assert err.value.reason == "server_error" and "gave up after 3 attempts" in str(err.value)
    assert len(server.posts()) == 3


def test_authentication_error_states_the_fix(kernel_for, server) -> None:
    kernel = kernel_for({"model": {"provider": "openrouter", "default": "x/y"}},
                        env={"OPENROUTER_API_KEY": "sk-or-bad",
                             "OPENROUTER_BASE_URL": server.openai_base_url})
    client = ModelClient.from_config(kernel, retry=FAST)
    server.script(reply_error(401, "Invalid API key provided"))
    with pytest.raises(ProviderError) as err:
        client.chat(ChatRequest(ASK))
    message = str(err.value)
    assert err.value.reason == "auth" and err.value.status_code == 401
    assert "Invalid API key provided" in message
    assert "OPENROUTER_API_KEY" in message and "hermes setup" in message
    assert len(server.posts()) == 1  # never retried


def test_fallback_to_next_provider_for_the_rest_of_the_turn(kernel_for, server) -> None:
    with FakeLLMServer() as backup:
        kernel = kernel_for(
            {"model": {"provider": "custom", "base_url": server.openai_base_url, "default": "m"},
             "fallback_providers": [{"provider": "deepseek", "model": "deepseek-chat"}]},
            env={"DEEPSEEK_API_KEY": "sk-ds", "DEEPSEEK_BASE_URL": backup.openai_base_url})
        client = ModelClient.from_config(kernel, retry=RetryPolicy(max_retries=1, base_delay=0.01))
        server.script(reply_error(500, "down"), reply_error(500, "still down"), reply_text("primary"))
        backup.script(reply_text("from backup"), reply_text("backup again"))
        first = client.chat(ChatRequest(ASK))
        assert (first.content, first.provider, first.model) == ("from backup", "deepseek", "deepseek-chat")
        assert backup.last.headers["authorization"] == "Bearer sk-ds"
        assert client.chat(ChatRequest(ASK)).content == "backup again"  # same turn: stays
        client.new_turn()
        assert client.chat(ChatRequest(ASK)).content == "primary"


def test_non_fallback_errors_are_raised(kernel_for, server) -> None:
    with FakeLLMServer() as backup:
        kernel = kernel_for(
            {"model": {"provider": "custom", "base_url": server.openai_base_url, "default": "m"},
             "fallback_providers": ["deepseek"]},
            env={"DEEPSEEK_API_KEY": "k", "DEEPSEEK_BASE_URL": backup.openai_base_url})
        client = ModelClient.from_config(kernel, retry=FAST)
        server.script(reply_error(400, "This model's maximum context length is 8192 tokens"))
        with pytest.raises(ProviderError) as err:
            client.chat(ChatRequest(ASK))
        assert err.value.reason == "context_overflow" and backup.posts() == []


@pytest.mark.parametrize("token_type", [CancelToken, threading.Event])
def test_interrupt_during_a_stream(kernel_for, server, token_type: type) -> None:
    _, client = custom(kernel_for, server)
    server.script(reply_stall("Hello there, this is a long answer", stall=30, chunk_size=5))
    token = token_type()
    events = []

    def on_event(event: object) -> None:  # interrupted once the stream has started (not on a
        events.append(event)             # timer: a loaded machine may not have sent it yet)
        token.set()

    started = time.monotonic()
    with pytest.raises(RequestInterrupted):
        client.chat(ChatRequest(ASK), on_event=on_event, interrupt=token)
    assert time.monotonic() - started < 3  # the server stalls 30 s after its first chunk
    assert events and events[0].text == "Hello"  # the stream had started


def test_interrupt_during_backoff(kernel_for, server) -> None:
    _, client = custom(kernel_for, server)
    client.retry = RetryPolicy(max_retries=3)
    server.script(reply_error(429, "wait", retry_after=60))
    token = CancelToken()
    threading.Timer(0.3, token.set).start()
    started = time.monotonic()
    with pytest.raises(RequestInterrupted):
        client.chat(ChatRequest(ASK, stream=False), interrupt=token)
    assert time.monotonic() - started < 3


def test_per_call_timeout(kernel_for, server) -> None:
    _, client = custom(kernel_for, server)
    client.retry = RetryPolicy(max_retries=0)
    server.script(reply_text("late", delay=3))
    with pytest.raises(ProviderError) as err:
        client.chat(ChatRequest(ASK, stream=False, timeout=0.3))
    assert err.value.reason == "timeout" and "model.timeout" in str(err.value)


def test_hook_pre_api_request_and_post_api_request_payloads(kernel_for, server) -> None:
    kernel, client = custom(kernel_for, server)
    recorder = HookRecorder(kernel, ["pre_api_request", "post_api_request"])
    server.script(reply_text("hi", usage={"input_tokens": 10, "output_tokens": 2}))
    from hermes_agent.api import CallContext

    context = CallContext(session_id="s1", turn_id="t1", task_id="k1", platform="cli",
                          user_message="hello", api_call_count=2)
    client.chat(ChatRequest(ASK, max_tokens=64), context=context)
    (pre_name, pre), (post_name, post) = recorder.calls
    assert (pre_name, post_name) == ("pre_api_request", "post_api_request")
    assert set(pre) == set(hook_arguments("pre_api_request"))
    assert set(post) == set(hook_arguments("post_api_request"))
    assert pre["api_request_id"] == post["api_request_id"]
    assert (pre["session_id"], pre["turn_id"], pre["task_id"], pre["api_call_count"]) == ("s1", "t1", "k1", 2)
    assert (pre["provider"], pre["model"], pre["api_mode"]) == ("custom", "m", "chat_completions")
    assert pre["request_messages"] == ASK and pre["max_tokens"] == 64 and pre["tool_count"] == 0
    assert pre["request"]["messages"] == ASK and "api_key" not in pre["request"]
    assert post["usage"]["input_tokens"] == 10 and post["usage"]["cost"]["status"] == "unknown"
    assert post["assistant_message"] == {"role": "assistant", "content": "hi"}
    assert post["finish_reason"] == "stop" and post["api_duration"] >= 0
