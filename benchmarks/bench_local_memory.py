"""Prefetch latency of the bundled ``local`` memory provider with 10,000 stored facts.

Run with our interpreter::

    .venv/bin/python benchmarks/bench_local_memory.py [--facts 10000] [--queries 300] [--rounds 3]

A fresh temporary HERMES_HOME gets ``--facts`` generated first-person facts (English and a
share in Chinese), written through the store (one transaction each, as ``sync_turn`` does).
Then ``prefetch`` runs for ``--queries`` varied user messages (questions sharing words with
the facts, questions sharing none, Chinese ones, hostile FTS syntax), on the calling thread,
``--rounds`` times; each round's p50/p95 is printed and the medians over rounds summarise.
The scan for injections is not involved (prefetch only reads). Target: p95 < 20 ms.
Stdlib only, besides our package.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time

from hermes_agent.plugins.memory.local.provider import LocalMemoryProvider

TOOLS = ["neovim", "emacs", "helix", "vscode", "zsh", "fish", "tmux", "docker", "podman",
         "kubernetes", "postgres", "sqlite", "redis", "rust", "python", "go", "terraform",
         "ansible", "nginx", "caddy", "grafana", "prometheus", "uv", "poetry", "pytest"]
PLACES = ["Lisbon", "Berlin", "Osaka", "Toronto", "Nairobi", "Lima", "Oslo", "Hanoi"]
HOSTS = ["Fly.io", "Hetzner", "AWS", "GCP", "a Raspberry Pi", "Render", "DigitalOcean"]
TEMPLATES = ["I use {tool} for project {n}", "We deploy service {n} on {host}",
             "My team {n} prefers {tool} over {other}", "I lived near {place} in {year}, flat {n}",
             "Our staging cluster {n} runs {tool} on {host}", "I prefer {tool} with {other} for task {n}",
             "My build {n} of the {tool} plugin is pinned to {year}"]
ZH = ["我喜欢用{tool}写代码{n}", "我们的服务{n}部署在{host}", "我住在{place}附近{n}年了"]
QUERIES = ["which {tool} setup do I use?", "where do we deploy service {n}?",
           "what do I prefer for {tool}", "do you remember my {tool} config for project {n}",
           "how do I configure {other} together with {tool}", "anything about {place}?",
           "tell me a joke about cats", "what's the capital of France",
           "我的服务部署在哪里？", "{tool} 代码", "住在",
           '"{tool}" NEAR( OR col:{other} * ^-', "-- '; DROP TABLE facts; {tool}"]


def fill(rng: random.Random, template: str, n: int) -> str:
    return template.format(tool=rng.choice(TOOLS), other=rng.choice(TOOLS), n=n,
                           host=rng.choice(HOSTS), place=rng.choice(PLACES),
                           year=rng.randint(2001, 2026))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(16)
    home = tempfile.mkdtemp(prefix="hermes-bench-local-")
    provider = LocalMemoryProvider({"max_facts": args.facts + 1})
    provider.initialize("bench", hermes_home=home, platform="cli")
    assert provider.store is not None
    started = time.perf_counter()
    day = 86400.0
    for n in range(args.facts):
        template = rng.choice(ZH if n % 10 == 0 else TEMPLATES)
        provider.store.add(f"{fill(rng, template, n)}", now=time.time() - rng.random() * 365 * day)
    fill_s = time.perf_counter() - started
    queries = [fill(rng, rng.choice(QUERIES), rng.randrange(args.facts))
               for _ in range(args.queries)]
    print(f"local memory: {provider.store.count():,} facts stored in {fill_s:.1f} s "
          f"({fill_s / args.facts * 1000:.2f} ms each), "
          f"{provider.store.size_bytes() / 1e6:.1f} MB")
    p50s, p95s, hits = [], [], 0
    for round_no in range(args.rounds):
        samples = []
        for query in queries:
            provider._cache.clear()  # measure the search, not the warmed cache
            began = time.perf_counter()
            text = provider.prefetch(query)
            samples.append((time.perf_counter() - began) * 1000)
            hits += bool(text)
        samples.sort()
        p50, p95 = statistics.median(samples), samples[int(len(samples) * 0.95) - 1]
        p50s.append(p50)
        p95s.append(p95)
        print(f"  round {round_no + 1}: p50 {p50:.2f} ms, p95 {p95:.2f} ms, "
              f"max {samples[-1]:.2f} ms")
    print(f"prefetch over {args.queries} queries x {args.rounds} rounds: median p50 "
          f"{statistics.median(p50s):.2f} ms, median p95 {statistics.median(p95s):.2f} ms "
          f"(target p95 < 20 ms); {hits / (args.queries * args.rounds):.0%} returned facts")
    provider.shutdown()


if __name__ == "__main__":
    main()
