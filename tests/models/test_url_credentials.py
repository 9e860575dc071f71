"""A base_url carrying credentials, against a port where nothing listens: the error, the
api_request_error hook payload, the log records and `describe()` show the host, never the
password or a secret query parameter."""

from __future__ import annotations

import io
import logging
import socket

import pytest

from hermes_agent.builtin_plugins.models.client import ModelClient
from hermes_agent.api import ChatRequest, ProviderError
from hermes_agent.builtin_plugins.models.retry import RetryPolicy
from hermes_agent.testing import HookRecorder

PASSWORD = "s3cret-Pa55"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_connection_error_hook_and_logs_mask_the_password(kernel_for,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    url = f"http://alice:{PASSWORD}@127.0.0.1:{_closed_port()}/v1?token=tk-{PASSWORD}"
    kernel = kernel_for({"model": {"provider": "custom", "base_url": url, "default": "m"}})
    recorder = HookRecorder(kernel, ["api_request_error"])
    client = ModelClient.from_config(kernel, retry=RetryPolicy(max_retries=1, base_delay=0.01,
                                                               jitter=0))
    assert client.active.base_url == url  # the real URL is what the SDK is given
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ProviderError) as caught:
        client.chat(ChatRequest([{"role": "user", "content": "hi"}], stream=False))
    message = str(caught.value)
    assert caught.value.reason == "network" and "(gave up after 2 attempts)" in message
    assert "cannot reach http://alice:***@127.0.0.1:" in message and "token=***" in message
    payloads = recorder.payloads("api_request_error")
    assert len(payloads) == 2
    for payload in payloads:
        assert payload["base_url"].startswith("http://alice:***@127.0.0.1:")
        assert PASSWORD not in repr(payload)
    assert caplog.records and not any(PASSWORD in r.getMessage() for r in caplog.records)
    assert PASSWORD not in repr(client.active.describe())


def test_the_http_librarys_request_log_is_masked_by_the_cli_filter(
        kernel_for, server, caplog: pytest.LogCaptureFixture) -> None:
    """The HTTP client logs every request URL at INFO, userinfo included; the filter the CLI
    installs on the handlers masks it. (A handler on the library's own logger sees the record
    before the root handlers' filters do.)"""
    from hermes_agent.kits.secrets import install_log_masking
    from hermes_agent.testing.fake_llm import reply_text

    url = server.openai_base_url.replace("http://", f"http://alice:{PASSWORD}@")
    kernel = kernel_for({"model": {"provider": "custom", "base_url": url, "default": "m"}})
    client = ModelClient.from_config(kernel)
    raw: list[str] = []
    library = logging.getLogger("httpx2")
    probe = logging.Handler()
    probe.emit = lambda record: raw.append(record.getMessage())  # type: ignore[method-assign]
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    library.addHandler(probe)
    logging.getLogger().addHandler(handler)
    caplog.set_level(logging.INFO)
    server.script(reply_text("one"))
    try:
        install_log_masking()
        client.chat(ChatRequest([{"role": "user", "content": "hi"}], stream=False))
    finally:
        library.removeHandler(probe)
        logging.getLogger().removeHandler(handler)
    assert any(PASSWORD in message for message in raw)  # what the library logs by itself
    logged = stream.getvalue()
    assert "HTTP Request: POST http://alice:***@127.0.0.1:" in logged and PASSWORD not in logged
