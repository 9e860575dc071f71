#!/usr/bin/env python3
"""The postgres session store against the sqlite one, in one run, at ``--count`` messages.

    .venv/bin/python benchmarks/bench_session_stores.py --count 100000 [--migrate] [--json out.json]

For each store: the corpus (``_session_corpus.py``: sessions of 20 messages, Zipf words, some
Chinese, tool calls) is imported session by session; then ``--appends`` single appends are
timed one by one (throughput and the worst one), then ``--per-kind`` searches of each query
kind (p50/p95, after one untimed pass). With ``--migrate``, ``hermes sessions migrate``'s copy
runs state.db -> PostgreSQL -> a new state.db and the JSONL exports of the first and last are
compared byte for byte.

PostgreSQL is HERMES_BENCH_POSTGRES_DSN (default postgresql://postgres@127.0.0.1:5432/test); the
run works in a schema of its own, dropped at the end.
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _session_corpus import QUERY_KINDS, SOURCES, Corpus  # noqa: E402

from hermes_agent.builtin_plugins.sessions.migrate import migrate  # noqa: E402
from hermes_agent.builtin_plugins.sessions.store import SqliteSessionStore  # noqa: E402
from hermes_agent.builtin_plugins.sessions.transfer import write_jsonl  # noqa: E402

PER_SESSION = 20
DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/test"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def load(store: Any, count: int) -> float:
    start, began = time.time() - count, time.perf_counter()
    record: dict[str, Any] = {}
    for i, (sid, message) in enumerate(Corpus().messages(count, PER_SESSION)):
        if record.get("id") != sid:
            if record:
                store.import_records([record])
            record = {"id": sid, "source": SOURCES[(i // PER_SESSION) % len(SOURCES)],
                      "started_at": start + i, "model": "m", "messages": []}
        record["messages"].append({**message, "timestamp": start + i})
    if record:
        store.import_records([record])
    return time.perf_counter() - began


def appends(store: Any, n: int) -> dict[str, float]:
    sid = store.create_session(source="cli")
    corpus, times = Corpus(seed=11), []
    for i in range(n):
        text = corpus.text(200, 700)
        began = time.perf_counter()
        store.append_message(sid, "user" if i % 2 else "assistant", text)
        times.append(time.perf_counter() - began)
    return {"per_s": n / sum(times), "p50_ms": statistics.median(times) * 1e3,
            "worst_ms": max(times) * 1e3}


def searches(store: Any, per_kind: int) -> dict[str, dict[str, float]]:
    corpus, out = Corpus(), {}
    for kind in QUERY_KINDS:
        queries = corpus.queries(kind, per_kind)
        for q in queries:  # warm-up
            _search(store, q)
        times, hits, stopped = [], 0, 0
        for q in queries:
            began = time.perf_counter()
            found = _search(store, q)
            times.append(time.perf_counter() - began)
            hits += max(found, 0)
            stopped += found < 0
        out[kind] = {"p50_ms": statistics.median(times) * 1e3, "p95_ms": pct(times, 0.95) * 1e3,
                     "hits": hits / len(queries), "stopped": stopped}
    return out


def _search(store: Any, query: str) -> int:
    """Hits of one search; -1 when the store's time budget stopped it."""
    from hermes_agent.api import SearchTimeoutError

    try:
        return len(store.search_messages(query))
    except SearchTimeoutError:
        return -1


def jsonl(store: Any) -> str:
    out = io.StringIO()
    write_jsonl(store.export_all(), out)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--appends", type=int, default=2_000)
    parser.add_argument("--per-kind", type=int, default=40)
    parser.add_argument("--migrate", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    import psycopg
    from psycopg.conninfo import make_conninfo

    base = os.environ.get("HERMES_BENCH_POSTGRES_DSN") or DEFAULT_DSN
    schemas = [f"hermes_bench_{uuid.uuid4().hex[:8]}_{n}" for n in ("a", "b")]
    pg_store = importlib.import_module("hermes_agent.plugins.session-stores.postgres.store")
    with psycopg.connect(base, autocommit=True) as admin:
        for schema in schemas:
            admin.execute(f'CREATE SCHEMA "{schema}"')
    dsns = [make_conninfo(base, options=f"-csearch_path={s},public") for s in schemas]
    results: dict[str, Any] = {"count": args.count}
    try:
        with tempfile.TemporaryDirectory(prefix="hermes-bench-") as tmp:
            stores = {"sqlite": SqliteSessionStore(Path(tmp) / "state.db"),
                      "postgres": pg_store.PostgresSessionStore(dsns[0])}
            for name, store in stores.items():
                log(f"{name}: loading {args.count} messages")
                row: dict[str, Any] = {"load_s": load(store, args.count)}
                log(f"{name}: {args.appends} appends")
                row["append"] = appends(store, args.appends)
                log(f"{name}: searches")
                row["search"] = searches(store, args.per_kind)
                results[name] = row
            if args.migrate:
                log("migrating state.db -> PostgreSQL -> state.db")
                target = pg_store.PostgresSessionStore(dsns[1])
                began = time.perf_counter()
                there = migrate(stores["sqlite"], target)
                back = SqliteSessionStore(Path(tmp) / "back.db")
                middle = time.perf_counter()
                again = migrate(target, back)
                results["migrate"] = {
                    "to_postgres_s": middle - began, "back_s": time.perf_counter() - middle,
                    "verified": there["ok"] and again["ok"],
                    "exports_identical": jsonl(stores["sqlite"]) == jsonl(back)}
                target.close()
                back.close()
            for store in stores.values():
                store.close()
    finally:
        with psycopg.connect(base, autocommit=True) as admin:
            for schema in schemas:
                admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    report(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


def report(results: dict[str, Any]) -> None:
    print(f"{results['count']} messages")
    print(f"{'':14}{'sqlite':>14}{'postgres':>14}")
    s, p = results["sqlite"], results["postgres"]
    print(f"{'load s':14}{s['load_s']:14.1f}{p['load_s']:14.1f}")
    for key, label in (("per_s", "appends/s"), ("p50_ms", "append p50 ms"),
                       ("worst_ms", "append worst")):
        print(f"{label:14}{s['append'][key]:14.2f}{p['append'][key]:14.2f}")
    for kind in QUERY_KINDS:
        print(f"{kind[:14]:14}{s['search'][kind]['p95_ms']:11.1f} ms{p['search'][kind]['p95_ms']:11.1f}"
              f" ms  (p95; hits {s['search'][kind]['hits']:.0f} / {p['search'][kind]['hits']:.0f};"
              f" stopped {s['search'][kind]['stopped']} / {p['search'][kind]['stopped']})")
    if "migrate" in results:
        m = results["migrate"]
        print(f"migrate: to PostgreSQL {m['to_postgres_s']:.1f} s, back {m['back_s']:.1f} s, "
              f"verified {m['verified']}, exports identical {m['exports_identical']}")


if __name__ == "__main__":
    main()
