"""Interrupting a call from another thread: the call runs on the caller's thread, the token
shuts its connection down (waiting for headers or mid-stream, in every API mode), and no
thread is left behind."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from hermes_agent.builtin_plugins.models.client import ModelClient
from hermes_agent.api import CancelToken, ChatRequest, ChatResponse, ProviderProfile, RequestInterrupted
from hermes_agent.builtin_plugins.models.retry import RetryPolicy
from hermes_agent.testing.fake_llm import reply_stall, reply_text

ASK = [{"role": "user", "content": "hello"}]
MODES = ["chat_completions", "anthropic_messages", "codex_responses"]
NO_RETRY = RetryPolicy(max_retries=0)


def client_for(mode: str, kernel_in_mode: Any) -> ModelClient:
    client = ModelClient.from_config(kernel_in_mode(mode), retry=NO_RETRY)
    assert client.active.api_mode == mode
    return client


def wait_until(check: Callable[[], bool], seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return check()


def new_threads(before: set[threading.Thread]) -> list[str]:
    """Threads started since ``before`` that are still alive, except the fake server's."""
    return [t.name for t in threading.enumerate()
            if t not in before and t.is_alive() and t.name != "fake-llm-handler"]


def interrupted_call(client: ModelClient, token: threading.Event, stream: bool,
                     events: list[Any], after: float = 0.3,
                     when: Callable[[], bool] | None = None) -> float:
    """Make a call and set ``token`` from another thread after ``after`` s and, with ``when``,
    not before ``when()`` holds (the server has the request: on a loaded machine 0.3 s may pass
    before it arrives, and an interrupt before the send closes nothing the server would see);
    return the elapsed time."""
    def trigger() -> None:
        time.sleep(after)
        if when is not None:
            wait_until(when, 10)
        token.set()

    timer = threading.Thread(target=trigger, name="test-interrupt")
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(RequestInterrupted):
            client.chat(ChatRequest(ASK, stream=stream), on_event=events.append, interrupt=token)
        return time.monotonic() - started
    finally:
        timer.join()


@pytest.mark.parametrize("stream", [False, True], ids=["waiting", "streaming"])
@pytest.mark.parametrize("mode", MODES)
def test_interrupt_closes_the_connection_and_leaves_no_thread(kernel_in_mode, server, mode: str,
                                                              stream: bool) -> None:
    client = client_for(mode, kernel_in_mode)
    server.script(reply_text("warm"))  # SDK imports and the first connection, not timed
    assert client.chat(ChatRequest(ASK), interrupt=CancelToken()).content == "warm"
    # not streamed: the server holds the response back; streamed: it stops after two events
    server.script(reply_stall("Hello there, a long answer", stall=30, chunk_size=5) if stream
                  else reply_text("too late", delay=30))
    before = set(threading.enumerate())
    events: list[Any] = []
    elapsed = interrupted_call(client, CancelToken(), stream, events,
                               when=lambda: len(server.posts()) == 2)
    assert 0.25 <= elapsed < 3, f"the interrupt took {elapsed:.2f} s"
    assert new_threads(before) == []
    # the HTTP connection was really closed: the server saw the client hang up
    assert wait_until(lambda: server.hangups == 1), "the server never saw the connection close"
    if stream and mode == "chat_completions":
        assert [e.text for e in events] == ["Hello"]  # the stream had started
    # the client is still usable (the broken connection left the pool)
    server.script(reply_text("after"))
    assert client.chat(ChatRequest(ASK, stream=stream), interrupt=CancelToken()).content == "after"
    assert new_threads(before) == []


@pytest.mark.parametrize("stream", [False, True], ids=["waiting", "streaming"])
def test_plain_event_is_polled(kernel_in_mode, server, stream: bool) -> None:
    client = client_for("chat_completions", kernel_in_mode)
    server.script(reply_stall("Hello there", stall=30) if stream else reply_text("late", delay=30))
    before = set(threading.enumerate())
    elapsed = interrupted_call(client, threading.Event(), stream, [],
                               when=lambda: len(server.posts()) == 1)
    assert elapsed < 3
    assert new_threads(before) == []
    assert wait_until(lambda: server.hangups == 1)


def test_token_set_before_the_call_sends_nothing(kernel_in_mode, server) -> None:
    client = client_for("chat_completions", kernel_in_mode)
    token = CancelToken()
    token.set()
    with pytest.raises(RequestInterrupted):
        client.chat(ChatRequest(ASK), interrupt=token)
    assert server.posts() == []


def test_interrupt_during_backoff_leaves_no_thread(kernel_in_mode, server) -> None:
    from hermes_agent.testing.fake_llm import reply_error

    client = client_for("chat_completions", kernel_in_mode)
    client.retry = RetryPolicy(max_retries=3)
    server.script(reply_error(503, "busy", retry_after=60))
    before = set(threading.enumerate())
    elapsed = interrupted_call(client, CancelToken(), False, [])
    assert elapsed < 3 and len(server.posts()) == 1
    assert new_threads(before) == []


def test_completed_call_is_not_touched_by_a_late_interrupt(kernel_in_mode, server) -> None:
    client = client_for("chat_completions", kernel_in_mode)
    token = CancelToken()
    server.script(reply_text("one"), reply_text("two"))
    assert client.chat(ChatRequest(ASK), interrupt=token).content == "one"
    token.set()  # the call is over: its pooled connection must stay healthy
    assert client.chat(ChatRequest(ASK), interrupt=CancelToken()).content == "two"
    assert server.hangups == 0


class _BlockingTransport:
    """A custom-protocol transport: blocks until its closer (given to ``on_open``) runs."""

    def __init__(self, runtime: Any):
        self.runtime = runtime
        self.closed = threading.Event()

    def build_kwargs(self, request: ChatRequest) -> dict[str, Any]:
        return {"model": self.runtime.model}

    def send(self, kwargs: dict[str, Any], emit: Any, on_open: Any) -> ChatResponse:
        on_open(self.closed.set)
        if not self.closed.wait(10):
            return ChatResponse(content="never interrupted")
        raise ConnectionAbortedError("closed by the interrupt")


def test_custom_transport_closer_runs_on_interrupt() -> None:
    from hermes_agent.builtin_plugins.models.runtime import RuntimeProvider

    profile = ProviderProfile(name="acme", api_mode="acme-wire", key_required=False,
                              transport=_BlockingTransport)
    client = ModelClient(RuntimeProvider(profile, model="a1", base_url=""), retry=NO_RETRY)
    before = set(threading.enumerate())
    elapsed = interrupted_call(client, CancelToken(), True, [])
    assert elapsed < 3 and client.active.transport().closed.is_set()
    assert new_threads(before) == []
