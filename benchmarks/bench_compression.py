"""Context compression over a long session: input tokens sent and prompt-cache reuse.

One scripted 200-turn session of the agent against the fake model server, run twice per
repetition (alternating which goes first): ``with`` compression (a 32,000-token window, so
the default compressor fires at 16,000) and ``without`` (``compression.enabled: false``,
the same window, which the conversation outgrows: the tokens it would have sent). Every
turn the user writes ~600 characters; every third turn the model reads a 2,000-character
file before answering; answers are ~400 characters. The summariser (the auxiliary
``compression`` model) is a second fake server answering a ~1,500-character summary.

Reported (medians over ``--runs``):

- input tokens sent (the fake server's count: request characters / 4), main model plus
  summariser, with vs without; target: with compression at most a third;
- the cache-reusable prefix: the share of the main model's request bytes that repeat the
  previous request byte for byte (tools, then messages), compression turns included; target
  at least 90%. Also with the summariser's requests counted as uncached bytes.

    .venv/bin/python benchmarks/bench_compression.py [--runs 3] [--turns 200]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from bench_agent import prefix_stats  # noqa: E402

from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_calls  # noqa: E402

WINDOW = 32_000
SUMMARY = "\n".join(f"## {heading}\n{'Concrete notes on this part of the work. ' * 5}"
                    for heading in ("Goal", "Constraints & Preferences", "Progress",
                                    "Key Decisions", "Relevant Files", "Next Steps",
                                    "Critical Context"))


def user_message(turn: int) -> str:
    return f"Turn {turn}: " + f"please look at item {turn} and tell me what changed. " * 12


def replies(work: Path, turn: int) -> list[Any]:
    answer = reply_text(f"Answer {turn}: " + "the item is fine and nothing else changed. " * 9)
    if turn % 3:
        return [answer]
    return [reply_tool_calls(("read_file", {"path": str(work / f"notes-{turn % 7}.txt")})), answer]


def tokens(bodies: list[dict[str, Any]]) -> int:
    return sum(len(json.dumps(b)) // 4 for b in bodies)


def session(root: Path, compress: bool, turns: int) -> dict[str, Any]:
    from hermes_agent.builtin_plugins.agent.loop import Agent, AgentOptions
    from hermes_agent.testing import make_kernel

    work = root / "work"
    work.mkdir(parents=True)
    for n in range(7):
        (work / f"notes-{n}.txt").write_text(f"note {n}: " + "a line of project notes. " * 80)
    home = root / "hermes"
    home.mkdir()
    with FakeLLMServer() as server, FakeLLMServer(default_reply=reply_text(SUMMARY)) as summ:
        config = {"model": {"provider": "custom", "default": "fake-model",
                            "base_url": server.openai_base_url, "context_length": WINDOW},
                  "toolsets": ["file"], "compression": {"enabled": compress},
                  # background titles would ask the scripted server; not measured here
                  "sessions": {"auto_title": False},
                  "auxiliary": {"compression": {"provider": "custom", "model": "summ",
                                                "base_url": summ.openai_base_url}}}
        kernel = make_kernel(home, config=config, env={"HERMES_HOME": str(home)}, builtins=True)
        agent = Agent(kernel, AgentOptions(cwd=work, stream=False))
        compressions = 0
        started = time.perf_counter()
        for turn in range(turns):
            server.script(*replies(work, turn))
            result = agent.run_conversation(
                user_message(turn),
                on_event=lambda e: None)
            assert result.completed, result.error
            compressions = agent.context.compression_count
        elapsed = time.perf_counter() - started
        agent.finalize()
        main = [r.body for r in server.posts()]
        aside = [r.body for r in summ.posts()]
    stats = prefix_stats(main)
    main_bytes = sum(len(json.dumps({"tools": b.get("tools"), "messages": b["messages"]},
                                    ensure_ascii=False)) for b in main[1:])
    aside_bytes = sum(len(json.dumps(b, ensure_ascii=False)) for b in aside)
    return {"tokens": tokens(main) + tokens(aside), "summariser_tokens": tokens(aside),
            "prefix": stats["session"], "breaks": stats["breaks"],
            "prefix_all": stats["session"] * main_bytes / (main_bytes + aside_bytes),
            "largest_request": max(len(json.dumps(b)) // 4 for b in main),
            "compressions": compressions, "ms_per_turn": elapsed * 1000 / turns}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    results: dict[str, list[dict[str, Any]]] = {"with": [], "without": []}
    with tempfile.TemporaryDirectory(prefix="bench-compression-") as tmp:
        for run in range(args.runs):
            order = ["with", "without"] if run % 2 == 0 else ["without", "with"]
            for arm in order:
                results[arm].append(session(Path(tmp) / f"{arm}-{run}", arm == "with",
                                            args.turns))

    def median(arm: str, key: str) -> float:
        return statistics.median(r[key] for r in results[arm])

    ratio = median("with", "tokens") / median("without", "tokens")
    print(f"{args.turns}-turn session, {WINDOW:,}-token window, medians of {args.runs} runs")
    for arm in ("without", "with"):
        print(f"  {arm:8} input tokens {median(arm, 'tokens'):>12,.0f}"
              f"  (summariser {median(arm, 'summariser_tokens'):,.0f})"
              f"  largest request {median(arm, 'largest_request'):,.0f}"
              f"  compressions {median(arm, 'compressions'):.0f}"
              f"  {median(arm, 'ms_per_turn'):.1f} ms/turn")
    print(f"  tokens with / without: {ratio:.3f} (target <= 0.333) "
          f"{'OK' if ratio <= 1 / 3 else 'MISSED'}")
    share, share_all = median("with", "prefix"), median("with", "prefix_all")
    print(f"  cache-reusable prefix with compression: {share:.1%} of request bytes "
          f"({median('with', 'breaks'):.0f} breaks); {share_all:.1%} counting the "
          f"summariser's requests as uncached (target >= 90%) "
          f"{'OK' if share_all >= 0.9 else 'MISSED'}")
    print(f"  without compression: {median('without', 'prefix'):.1%}")
    return 0 if ratio <= 1 / 3 and share_all >= 0.9 else 1


if __name__ == "__main__":
    raise SystemExit(main())
