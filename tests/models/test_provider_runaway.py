"""Runaway replies: every request carries an output cap (``model.max_tokens``, else the
provider's default, in each API mode's own parameter); a streamed reply that loops is cut
(the stream closed, so the server stops generating) while legitimately repeated lines are
not; an interrupt still stops a long stream at once; and usage a server does not report is
estimated and marked so."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from hermes_agent.api import CancelToken, ChatRequest, RequestInterrupted
from hermes_agent.builtin_plugins.models.client import ModelClient
from hermes_agent.builtin_plugins.models.retry import RetryPolicy
from hermes_agent.testing.fake_llm import reply_looping, reply_text

ASK = [{"role": "user", "content": "tell me about foxes"}]
MODES = ["chat_completions", "anthropic_messages", "codex_responses"]
CAP_KEY = {"chat_completions": "max_tokens", "anthropic_messages": "max_tokens",
           "codex_responses": "max_output_tokens"}
PROFILE_DEFAULT = {"chat_completions": 4096, "anthropic_messages": 16384,  # custom, anthropic
                   "codex_responses": 32768}  # openai-codex
NO_RETRY = RetryPolicy(max_retries=0)
PARAGRAPH = ("Foxes are small omnivorous mammals of the family Canidae. They have a flattened "
             "skull, upright triangular ears and a long bushy tail, and they live on every "
             "continent except Antarctica.\n\n")


@pytest.mark.parametrize("mode", MODES)
def test_every_request_carries_the_provider_default_cap(mode, kernel_in_mode, server) -> None:
    client = ModelClient.from_config(kernel_in_mode(mode), retry=NO_RETRY)
    server.script(reply_text("ok"))
    client.chat(ChatRequest(ASK))
    assert server.last.body[CAP_KEY[mode]] == PROFILE_DEFAULT[mode]


@pytest.mark.parametrize("mode", MODES)
def test_model_max_tokens_in_config_wins_and_zero_sends_none(mode, kernel_in_mode,
                                                             kernel_for, server) -> None:
    kernel = kernel_in_mode(mode)
    kernel.config.data["model"]["max_tokens"] = 777
    server.script(reply_text("ok"), reply_text("ok"))
    ModelClient.from_config(kernel, retry=NO_RETRY).chat(ChatRequest(ASK))
    assert server.last.body[CAP_KEY[mode]] == 777
    kernel.config.data["model"]["max_tokens"] = 0
    ModelClient.from_config(kernel, retry=NO_RETRY).chat(ChatRequest(ASK))
    if mode == "anthropic_messages":  # required by the API: its own default then
        assert server.last.body["max_tokens"] == 8192
    else:
        assert CAP_KEY[mode] not in server.last.body


def test_openai_sends_max_completion_tokens_by_default(kernel_for, server) -> None:
    kernel = kernel_for({"model": {"provider": "openai", "default": "o4-mini"}},
                        env={"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.openai_base_url})
    server.script(reply_text("ok"))
    ModelClient.from_config(kernel, retry=NO_RETRY).chat(ChatRequest(ASK))
    assert server.last.body["max_completion_tokens"] == 16384
    assert "max_tokens" not in server.last.body


@pytest.mark.parametrize("mode", MODES)
def test_a_looping_reply_is_cut_and_its_stream_closed(mode, kernel_in_mode, server) -> None:
    client = ModelClient.from_config(kernel_in_mode(mode), retry=NO_RETRY)
    looping = reply_looping(PARAGRAPH, copies=150, intro="Here is what I know.\n\n",
                            pace=0.003)
    total_chunks = len(looping.chunks())
    server.script(looping)
    shown: list[str] = []
    response = client.chat(ChatRequest(ASK), on_event=lambda e: shown.append(e.text)
                           if e.kind == "text" else None)
    assert response.finish_reason == "repetition"
    assert response.content == "Here is what I know.\n\n" + PARAGRAPH.rstrip()
    assert response.repeated == len("".join(shown)) - len(response.content) > 0
    # the client hung up long before the server's 150 copies: counted in events the server
    # sent, not in seconds (a loaded machine stretches every 3 ms pause)
    deadline = time.monotonic() + 5
    while not server.last.hung_up and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.last.hung_up and server.last.events_sent < total_chunks / 5
    assert response.usage.estimated and response.usage.output_tokens >= len("".join(shown)) // 4


def test_repeated_table_rows_and_list_items_are_not_cut(kernel_in_mode, server) -> None:
    client = ModelClient.from_config(kernel_in_mode("chat_completions"), retry=NO_RETRY)
    table = "| name | value |\n|------|-------|\n" + "| x    | 0     |\n" * 30
    items = "".join(f"- step {n}: run the same check again and compare the output\n"
                    for n in range(1, 60))
    checklist = "- [ ] todo\n" * 40
    text = f"Results:\n\n{table}\n{items}\n{checklist}\nAll done."
    server.script(reply_text(text))
    response = client.chat(ChatRequest(ASK), on_event=lambda e: None)
    assert response.finish_reason == "stop" and response.content == text


def test_interrupt_stops_a_long_stream_promptly(kernel_in_mode, server) -> None:
    client = ModelClient.from_config(kernel_in_mode("chat_completions"), retry=NO_RETRY)
    long_reply = "".join(f"Line {n}: a different sentence each time, number {n * 7}.\n"
                         for n in range(2000))
    server.script(reply_text(long_reply, pace=0.005))
    token = CancelToken()
    shown: list[str] = []

    def stop_after_some_text(event: Any) -> None:
        shown.append(event.text)
        if len(shown) == 50:
            threading.Timer(0.2, token.set).start()

    started = time.monotonic()
    with pytest.raises(RequestInterrupted):
        client.chat(ChatRequest(ASK), on_event=stop_after_some_text, interrupt=token)
    assert time.monotonic() - started < 5  # the whole reply would take over 100 s
    deadline = time.monotonic() + 5
    while not server.last.hung_up and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.last.hung_up


@pytest.mark.parametrize("stream", [True, False])
def test_usage_the_server_does_not_report_is_estimated(stream, kernel_in_mode, server) -> None:
    client = ModelClient.from_config(kernel_in_mode("chat_completions"), retry=NO_RETRY)
    server.script(reply_text("x" * 400, report_usage=False), reply_text("y" * 400))
    guessed = client.chat(ChatRequest(ASK, stream=stream)).usage
    assert guessed.estimated and guessed.output_tokens == 100 and guessed.input_tokens > 0
    reported = client.chat(ChatRequest(ASK, stream=stream)).usage
    assert not reported.estimated and reported.output_tokens == 100  # the server's count
    assert (guessed + reported).estimated and (guessed + reported).to_dict()["estimated"]
