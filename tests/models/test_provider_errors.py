"""Provider failures as the user meets them: an error body that echoes the API key never shows
it (the error, its cause, the logs, the hooks); a host that does not resolve fails at once
with the host named; a closed port is retried with a progress line before every wait."""

from __future__ import annotations

import logging
import socket
import time
from typing import Any

import pytest

from hermes_agent.api import CallContext, ChatRequest, ProviderError, RetryNotice
from hermes_agent.builtin_plugins.models.client import ModelClient
from hermes_agent.builtin_plugins.models.retry import RetryPolicy
from hermes_agent.testing.fake_llm import reply_error

ASK = [{"role": "user", "content": "hello"}]
KEY = "sk-test-0123456789abcdefSECRET"


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("mode", ["chat_completions", "anthropic_messages"])
def test_a_key_echoed_in_the_error_body_is_masked_everywhere(mode, kernel_for, server,
                                                             caplog) -> None:
    if mode == "chat_completions":
        kernel = kernel_for({"model": {"provider": "custom", "base_url": server.openai_base_url,
                                       "default": "m", "api_key": KEY}})
        echo = "Incorrect API key provided: {authorization}"
    else:
        kernel = kernel_for({"model": {"provider": "anthropic", "default": "claude-haiku-4-5"}},
                            env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.url})
        echo = "invalid credentials: {authorization}{x-api-key}"
    errors: list[dict[str, Any]] = []
    kernel.register_plugin(lambda ctx: ctx.register_hook(
        "api_request_error", lambda **kw: errors.append(kw)), "listener")
    server.script(reply_error(401, echo))
    client = ModelClient.from_config(kernel, retry=RetryPolicy(max_retries=0))
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ProviderError) as caught:
        client.chat(ChatRequest(ASK))
    assert KEY in (server.last.headers.get("authorization", "")
                   + server.last.headers.get("x-api-key", ""))  # the server did echo it
    error = caught.value
    assert error.reason == "auth" and "***" in str(error) and KEY not in str(error)
    cause: BaseException | None = error.__cause__
    while cause is not None:
        assert KEY not in str(cause) and KEY not in repr(getattr(cause, "body", ""))
        cause = cause.__cause__ or cause.__context__
    assert KEY not in caplog.text
    assert errors and KEY not in repr(errors)


def test_an_unknown_host_fails_at_once_naming_it(kernel_for) -> None:
    kernel = kernel_for({"model": {"provider": "custom", "base_url": "http://nohost.invalid/v1",
                                   "default": "m"}})
    notices: list[RetryNotice] = []
    client = ModelClient.from_config(kernel)  # the default policy: 3 retries from 2 s
    started = time.monotonic()
    with pytest.raises(ProviderError) as caught:
        client.chat(ChatRequest(ASK), context=CallContext(on_retry=notices.append))
    assert time.monotonic() - started < 3
    message = str(caught.value)
    assert caught.value.reason == "network" and not caught.value.retryable
    assert "cannot resolve the host name 'nohost.invalid'" in message
    assert "model.base_url" in message and "DNS" in message
    assert notices == []


def test_a_closed_port_is_retried_with_a_progress_line_per_wait(kernel_for) -> None:
    kernel = kernel_for({"model": {"provider": "custom", "default": "m",
                                   "base_url": f"http://127.0.0.1:{closed_port()}/v1"}})
    notices: list[RetryNotice] = []
    client = ModelClient.from_config(kernel, retry=RetryPolicy(max_retries=2, base_delay=0.01))
    with pytest.raises(ProviderError) as caught:
        client.chat(ChatRequest(ASK), context=CallContext(on_retry=notices.append))
    assert "gave up after 3 attempts" in str(caught.value)
    lines = [n.text() for n in notices]
    assert [line.split(" (")[1] for line in lines] == [
        "attempt 2/3: connection refused)", "attempt 3/3: connection refused)"]
    assert all(line.startswith("custom: retrying in 0") for line in lines)


def test_without_a_listener_a_long_wait_is_logged_as_a_warning(kernel_for, caplog) -> None:
    kernel = kernel_for({"model": {"provider": "custom", "default": "m",
                                   "base_url": f"http://127.0.0.1:{closed_port()}/v1"}})
    client = ModelClient.from_config(kernel, retry=RetryPolicy(max_retries=1, base_delay=1.1,
                                                               jitter=0))
    caplog.set_level(logging.INFO, "hermes_agent.models")
    with pytest.raises(ProviderError):
        client.chat(ChatRequest(ASK))
    [record] = [r for r in caplog.records if "retrying in" in r.getMessage()]
    assert record.levelno == logging.WARNING
    assert record.getMessage() == "custom: retrying in 1.1 s (attempt 2/2: connection refused)"
