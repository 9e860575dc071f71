"""Memory in the agent loop: per-turn cost and prompt-cache reuse with memory on vs off.

Two 20-turn sessions of the agent against the fake model server (3 tool calls per turn, an
instant model, as in bench_agent.py), alternating which goes first, ``--sessions`` pairs:

  off: builtin memory with empty files, no external provider;
  on:  builtin memory with entries in MEMORY.md and USER.md, and the bundled ``local``
       provider selected, its store seeded with ``--facts`` facts (recall on every turn,
       each turn stored in the background).

Reported: the per-turn wall time of each (median over all turns) and the difference (target:
under 5 ms per turn), and the share of each session's request bytes that is a byte-identical
prefix of the previous request (target with memory on: at least 95%, as without it).

    .venv/bin/python benchmarks/bench_memory_agent.py [--sessions 3] [--turns 20] [--facts 1000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from bench_agent import make_work, prefix_stats, turn_replies  # noqa: E402

from hermes_agent.testing.fake_llm import FakeLLMServer  # noqa: E402

MEMORY_ENTRIES = ["User's project is a Rust web service at ~/code/myapi",
                  "This machine runs Debian 12; tests run with cargo nextest",
                  "Deploys go through GitHub Actions to fly.io"]
USER_ENTRIES = ["Name: Ada", "Prefers short answers with code first"]
FACT_TOPICS = ["rust", "postgres", "tea", "deploy", "editor", "python", "docker", "tests"]


STUB = '''
class Recall:
    name = "stub"
    def is_available(self):
        return True
    def initialize(self, session_id, **kwargs):
        pass
    def get_tool_schemas(self):
        return []
    def prefetch(self, query, *, session_id=""):
        return "\\n".join(f"- fact {n} about {query[:40]}" for n in range(5))
    def sync_turn(self, user_content, assistant_content, *, session_id=""):
        pass
'''


def seed_memory(home: Path, provider: str, facts: int) -> None:
    (home / "memories").mkdir(parents=True, exist_ok=True)
    (home / "memories" / "MEMORY.md").write_text("\n§\n".join(MEMORY_ENTRIES) + "\n")
    (home / "memories" / "USER.md").write_text("\n§\n".join(USER_ENTRIES) + "\n")
    if provider == "local" and facts:
        from hermes_agent.plugins.memory.local.store import FactStore, db_path

        store = FactStore(db_path(home))
        for n in range(facts):
            topic = FACT_TOPICS[n % len(FACT_TOPICS)]
            store.add(f"I use {topic} setup number {n} with option {n * 7 % 101}")
        store.close()
    if provider == "stub":  # a provider folder answering at once: the manager's own cost
        (home / "plugins" / "stub").mkdir(parents=True, exist_ok=True)
        (home / "plugins" / "stub" / "__init__.py").write_text(STUB)


def session(root: Path, memory_on: bool, turns: int, provider: str, facts: int
            ) -> tuple[list[float], list[dict[str, Any]]]:
    from hermes_agent.builtin_plugins.agent.loop import Agent, AgentOptions
    from hermes_agent.testing import make_kernel

    work = make_work(root)
    home = root / "hermes"
    home.mkdir(parents=True, exist_ok=True)
    with FakeLLMServer() as server:
        config: dict[str, Any] = {"model": {"provider": "custom", "default": "fake-model",
                                            "base_url": server.openai_base_url}}
        if memory_on:
            seed_memory(home, provider, facts)
            config["memory"] = {"provider": provider}
        kernel = make_kernel(home, config=config, env={"HERMES_HOME": str(home)}, builtins=True)
        agent = Agent(kernel, AgentOptions(toolsets=["file", "memory"], cwd=work))
        times = []
        for turn in range(turns):
            server.script(*turn_replies(work, turn))
            started = time.perf_counter()
            result = agent.run_conversation(
                f"turn {turn}: about {FACT_TOPICS[turn % len(FACT_TOPICS)]}, look at the files "
                f"in {work}")
            times.append(time.perf_counter() - started)
            assert result.completed, result
            if agent.memory is not None:
                agent.memory.drain(10)  # untimed: a real model call leaves it seconds
        if memory_on:
            assert agent.memory is not None and agent.memory.external, f"{provider} did not load"
            assert any("<memory-context>" in str(p.body["messages"]) for p in server.posts())
        agent.finalize("shutdown")
        return times, [p.body for p in server.posts()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--facts", type=int, default=1000)
    parser.add_argument("--provider", default="local", choices=("local", "stub"),
                        help="the external provider (stub: answers at once)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-memory-agent-"))
    times: dict[str, list[float]] = {"off": [], "on": []}
    prefix: dict[str, dict[str, float]] = {}
    for n in range(args.sessions):
        order = ("off", "on") if n % 2 == 0 else ("on", "off")
        for side in order:
            t, bodies = session(root / f"{side}-{n}", side == "on", args.turns, args.provider,
                                args.facts)
            times[side].extend(t)
            prefix.setdefault(side, prefix_stats(bodies))
    off, on = (statistics.median(times[s]) * 1000 for s in ("off", "on"))
    print(f"per turn (median of {len(times['on'])} turns): memory off {off:.2f} ms, "
          f"memory on {on:.2f} ms, overhead {on - off:+.2f} ms (target < 5 ms)")
    for side in ("off", "on"):
        p = prefix[side]
        print(f"prompt-cache prefix, memory {side}: {p['session']:.1%} of "
              f"{p['requests']} requests' bytes (min {p['min']:.1%}, {p['breaks']} breaks)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
