"""Time our provider layer adds to one model call over a bare SDK call.

Both sides call the same local fake server (hermes_agent.testing.fake_llm) through the same
SDK with the same messages and model, after the same warm-up, alternating call by call (and
which of the pair goes first) so drift hits both equally. Reported: p50 of each side and the
p50 of the per-pair difference, for the three API modes, streamed and not, each without and
with an interrupt token (the agent loop always passes one). Target: under 2 ms added per call.

    .venv/bin/python benchmarks/bench_providers.py [--calls 300]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from hermes_agent.builtin_plugins.models.client import ModelClient
from hermes_agent.api import CancelToken, ChatRequest
from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

MESSAGES = [{"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Say hello to the benchmark."}]


def timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def compare(label: str, bare: Callable[[], Any], ours: Callable[[], Any], calls: int) -> dict[str, float]:
    for _ in range(20):  # warm connections and caches of both
        bare()
        ours()
    bare_ms, ours_ms, diffs = [], [], []
    for call in range(calls):
        if call % 2:  # alternate which goes first, so neither always gets the warmer machine
            o, b = timed(ours), timed(bare)
        else:
            b, o = timed(bare), timed(ours)
        bare_ms.append(b)
        ours_ms.append(o)
        diffs.append(o - b)
    row = {"bare_p50": statistics.median(bare_ms), "ours_p50": statistics.median(ours_ms),
           "added_p50": statistics.median(diffs)}
    print(f"{label:<50} bare {row['bare_p50']:6.2f} ms   ours {row['ours_p50']:6.2f} ms   "
          f"added p50 {row['added_p50']:+6.2f} ms")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    calls = parser.parse_args().calls
    import anthropic
    import openai

    with FakeLLMServer(default_reply=reply_text("Hello, benchmark! " * 4, chunk_size=8)) as server:
        home = tempfile.mkdtemp(prefix="hermes-bench-")
        chat_kernel = make_kernel(home + "/chat", config={"model": {
            "provider": "custom", "base_url": server.openai_base_url, "default": "bench"}})
        ant_kernel = make_kernel(home + "/ant", config={"model": {
            "provider": "anthropic", "default": "claude-haiku-4-5"}},
            env={"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": server.url})
        resp_kernel = make_kernel(home + "/resp", config={"model": {
            "provider": "openai-codex", "default": "gpt-5"}},
            env={"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.openai_base_url})
        chat = ModelClient.from_config(chat_kernel)
        ant = ModelClient.from_config(ant_kernel)
        resp = ModelClient.from_config(resp_kernel)
        bare_openai = openai.OpenAI(api_key="k", base_url=server.openai_base_url, max_retries=0)
        bare_ant = anthropic.Anthropic(api_key="k", base_url=server.url, max_retries=0)
        sink: list[Any] = []

        def openai_plain() -> None:
            bare_openai.chat.completions.create(model="bench", messages=MESSAGES)

        def openai_stream() -> None:
            for chunk in bare_openai.chat.completions.create(
                    model="bench", messages=MESSAGES, stream=True, stream_options={"include_usage": True}):
                sink.append(chunk)
            sink.clear()

        def ant_plain() -> None:
            bare_ant.messages.create(model="claude-haiku-4-5", max_tokens=8192, messages=MESSAGES[1:],
                                     system=MESSAGES[0]["content"])

        def ant_stream() -> None:
            for event in bare_ant.messages.create(model="claude-haiku-4-5", max_tokens=8192,
                                                  messages=MESSAGES[1:], system=MESSAGES[0]["content"],
                                                  stream=True):
                sink.append(event)
            sink.clear()

        def ours(client: ModelClient, stream: bool, token: bool = False) -> Callable[[], Any]:
            return lambda: client.chat(ChatRequest(MESSAGES, stream=stream), on_event=sink.append,
                                       interrupt=CancelToken() if token else None) and sink.clear()

        def responses_plain() -> None:
            bare_openai.responses.create(model="gpt-5", input=MESSAGES[1:], instructions=MESSAGES[0]["content"],
                                         store=False)

        def responses_stream() -> None:
            for event in bare_openai.responses.create(model="gpt-5", input=MESSAGES[1:],
                                                      instructions=MESSAGES[0]["content"], store=False,
                                                      stream=True):
                sink.append(event)
            sink.clear()

        print(f"{calls} calls per row, alternating bare SDK / hermes (p50 of per-pair differences)")
        rows = [("chat_completions", chat, openai_plain, openai_stream),
                ("anthropic_messages", ant, ant_plain, ant_stream),
                ("codex_responses", resp, responses_plain, responses_stream)]
        for mode, client, plain, streamed in rows:
            compare(f"{mode}, not streamed", plain, ours(client, False), calls)
            compare(f"{mode}, streamed", streamed, ours(client, True), calls)
            compare(f"{mode}, not streamed + interrupt token", plain, ours(client, False, True), calls)
            compare(f"{mode}, streamed + interrupt token", streamed, ours(client, True, True), calls)


if __name__ == "__main__":
    main()
