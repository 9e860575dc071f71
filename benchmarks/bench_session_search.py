#!/usr/bin/env python3
"""session_search latency up to the summarisation stage, on a state.db of ``--count`` messages.

    .venv/bin/python benchmarks/bench_session_search.py --count 100000 --json out.json

What one keyword search costs before any model is asked: the current session's lineage
looked up, the full-text recall (60 hits, the lineage left out), hits grouped by session, the
top 3 sessions loaded, rendered as transcripts and cut around the matches, and the summariser
prompts built (``recall.recall`` + ``summarise.prompt``). Target: p95 under 50 ms at 100,000
messages. The empty query (the recent listing) is timed too.

The corpus is ``_session_corpus.py``'s (sessions of 20 messages, Zipf-distributed words, about
5% Chinese, tool calls with JSON arguments), imported once into ``--workdir`` and reused; the
newest session is the "current" one, continued after a compression split, so its lineage has
two sessions. Queries are drawn per kind from the corpus vocabulary (``--per-kind`` each);
each kind's p50/p95 is over its queries, after one untimed warm-up pass over all of them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _session_corpus import QUERY_KINDS, SOURCES, Corpus  # noqa: E402

from hermes_agent.builtin_plugins.recall.recall import recall, recent  # noqa: E402
from hermes_agent.builtin_plugins.recall.summarise import prompt  # noqa: E402
from hermes_agent.builtin_plugins.sessions.store import SqliteSessionStore  # noqa: E402

PER_SESSION = 20
CURRENT = "bench_current"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def build(path: Path, count: int) -> None:
    """The corpus as ``count // 20`` sessions, one import transaction per session, plus the
    current conversation (a compression split) as the newest sessions."""
    store = SqliteSessionStore(path)
    start = time.time() - count  # one second per message, oldest first
    record: dict[str, Any] = {}

    def flush() -> None:
        if record:
            store.import_records([record])

    for i, (sid, message) in enumerate(Corpus().messages(count, PER_SESSION)):
        if record.get("id") != sid:
            flush()
            n = i // PER_SESSION
            record = {"id": sid, "source": SOURCES[n % len(SOURCES)], "started_at": start + i,
                      "model": "m", "messages": []}
        record["messages"].append({**message, "timestamp": start + i})
    flush()
    store.create_session(f"{CURRENT}_root", source="cli")
    store.append_message(f"{CURRENT}_root", "user", "deploy the docker image to the cluster")
    store.end_session(f"{CURRENT}_root", "compression")
    store.create_session(CURRENT, source="cli", parent_session_id=f"{CURRENT}_root")
    store.append_message(CURRENT, "user", "and now the kubernetes config")
    store.close()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def one_search(store: SqliteSessionStore, query: str) -> tuple[float, float, int]:
    """(wall ms, this thread's CPU ms: what the machine's load barely moves, sessions)."""
    started, cpu = time.perf_counter(), time.thread_time()
    found = recall(store, query, current_session=CURRENT, roles=None, limit=3,
                   window_chars=100_000)
    for item in found:
        prompt(query, item)
    return ((time.perf_counter() - started) * 1000, (time.thread_time() - cpu) * 1000,
            len(found))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--per-kind", type=int, default=40)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/hermes-bench"))
    parser.add_argument("--json", type=Path)
    opts = parser.parse_args()
    opts.workdir.mkdir(parents=True, exist_ok=True)
    path = opts.workdir / f"session-search-{opts.count}.db"
    if not path.exists():
        log(f"building {path} ({opts.count:,} messages)")
        t0 = time.perf_counter()
        build(path, opts.count)
        log(f"built in {time.perf_counter() - t0:.0f} s")
    store = SqliteSessionStore(path)
    corpus = Corpus()
    queries = {kind: corpus.queries(kind, opts.per_kind) for kind in QUERY_KINDS}
    for qs in queries.values():  # warm-up: page cache, reader pool, parser imports
        for q in qs:
            one_search(store, q)
    rows, everything, all_cpu = [], [], []
    for kind, qs in queries.items():
        times, cpus, sessions = [], [], []
        for q in qs:
            ms, cpu, n = one_search(store, q)
            times.append(ms)
            cpus.append(cpu)
            sessions.append(n)
        everything += times
        all_cpu += cpus
        rows.append({"kind": kind, "p50_ms": round(statistics.median(times), 2),
                     "p95_ms": round(pct(times, 0.95), 2),
                     "cpu_p50_ms": round(statistics.median(cpus), 2),
                     "cpu_p95_ms": round(pct(cpus, 0.95), 2),
                     "sessions_found": round(statistics.mean(sessions), 2)})
    listing, listing_cpu = [], []
    for _ in range(50):
        t0, c0 = time.perf_counter(), time.thread_time()
        recent(store, current_session=CURRENT, limit=3)
        listing.append((time.perf_counter() - t0) * 1000)
        listing_cpu.append((time.thread_time() - c0) * 1000)
    store.close()

    def row(kind: str, wall: list[float], cpu: list[float]) -> dict[str, Any]:
        return {"kind": kind, "p50_ms": round(statistics.median(wall), 2),
                "p95_ms": round(pct(wall, 0.95), 2), "cpu_p50_ms": round(statistics.median(cpu), 2),
                "cpu_p95_ms": round(pct(cpu, 0.95), 2), "sessions_found": None}

    total = row("all keyword queries", everything, all_cpu)
    recent_row = row("empty query (recent)", listing, listing_cpu)
    print(f"session_search up to summarisation, {opts.count:,} messages "
          f"({opts.per_kind} queries per kind)")
    print(f"{'kind':<24}{'p50 ms':>9}{'p95 ms':>9}{'cpu p50':>9}{'cpu p95':>9}{'sessions':>10}")
    for r in [*rows, total, recent_row]:
        found = "" if r["sessions_found"] is None else f"{r['sessions_found']:.2f}"
        print(f"{r['kind']:<24}{r['p50_ms']:>9.2f}{r['p95_ms']:>9.2f}{r['cpu_p50_ms']:>9.2f}"
              f"{r['cpu_p95_ms']:>9.2f}{found:>10}")
    verdict = "met" if total["p95_ms"] < 50 else "MISSED"
    print(f"target p95 < 50 ms over all keyword queries: {verdict}")
    if opts.json:
        opts.json.write_text(json.dumps({"count": opts.count, "rows": rows, "total": total,
                                         "recent": recent_row}, indent=2))


if __name__ == "__main__":
    main()
