"""One phase of the session-store benchmark, run inside the interpreter of one implementation.

    python _sessions_worker.py IMPL PHASE DB [options as JSON]

IMPL is ``ours`` (hermes_agent's SqliteSessionStore) or ``original`` (hermes_state.SessionDB of
hermes-agent 0.19.0). Prints one JSON object.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _session_corpus import CRAFTED_QUERIES, QUERY_KINDS, SOURCES, Corpus  # noqa: E402


class Adapter:
    def __init__(self, impl: str, path: Path):
        self.impl = impl
        if impl == "ours":
            from hermes_agent.builtin_plugins.sessions.store import SqliteSessionStore

            self.db: Any = SqliteSessionStore(path)
            self.conn = self.db.conn
        else:
            from hermes_state import SessionDB

            self.db = SessionDB(db_path=path)
            self.conn = self.db._conn

    def create(self, sid: str, source: str) -> None:
        self.db.create_session(sid, source=source, model="anthropic/claude-sonnet-4.6")

    def append(self, sid: str, m: dict[str, Any]) -> None:
        self.db.append_message(sid, m["role"], m["content"], tool_name=m.get("tool_name"),
                               tool_calls=m.get("tool_calls"), tool_call_id=m.get("tool_call_id"))

    def search(self, query: str) -> list[Any]:
        return self.db.search_messages(query, limit=20)

    def rich(self, offset: int) -> list[Any]:
        return self.db.list_sessions_rich(limit=20, offset=offset)

    def close(self) -> None:
        self.db.close()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def size_of(path: Path) -> int:
    return sum(os.path.getsize(p) for p in (path, Path(f"{path}-wal")) if p.exists())


def phase_append(db: Adapter, path: Path, opts: dict[str, Any]) -> dict[str, Any]:
    count = opts["count"]
    block = opts.get("block", max(1, min(10000, count // 10)))
    corpus = Corpus(seed=opts.get("seed", 7))
    lat: list[float] = []
    items = list(corpus.messages(count))  # generated before the clock starts
    text_bytes = sum(len(m["content"].encode()) + len(json.dumps(m["tool_calls"]))
                     if m.get("tool_calls") else len(m["content"].encode()) for _, m in items)
    seen: set[str] = set()
    start = time.perf_counter()
    for sid, msg in items:
        if sid not in seen:
            seen.add(sid)
            db.create(sid, SOURCES[len(seen) % len(SOURCES)])
        t0 = time.perf_counter()
        db.append(sid, msg)
        lat.append(time.perf_counter() - t0)
    total = time.perf_counter() - start
    db.close()
    blocks = [block / sum(lat[i:i + block]) for i in range(0, len(lat) - block + 1, block)]
    stalls = [x for x in lat if x > 0.1]
    return {"count": count, "wall_s": total, "rate": count / total,
            "append_rate": count / sum(lat), "rate_by_block": blocks,
            "p50_ms": pct(lat, 0.5) * 1e3, "p99_ms": pct(lat, 0.99) * 1e3,
            "worst_ms": max(lat) * 1e3, "over_50ms": sum(x > 0.05 for x in lat),
            "stalls_over_100ms": len(stalls), "stall_share": sum(stalls) / sum(lat),
            "size_bytes": size_of(path), "text_bytes": text_bytes, "sessions": len(seen)}


def phase_bulk(db: Adapter, path: Path, opts: dict[str, Any]) -> dict[str, Any]:
    """Fill quickly (2,000 messages a transaction, through each store's own schema and
    triggers), then merge each FTS index fully; used for the 1M-message search runs."""
    corpus = Corpus(seed=opts.get("seed", 7))
    conn = db.conn
    start = time.perf_counter()
    batch: list[tuple[Any, ...]] = []
    sessions: list[tuple[Any, ...]] = []
    now = time.time()
    seen: set[str] = set()

    def flush() -> None:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT INTO sessions (id, source, model, started_at) VALUES (?,?,?,?)",
                         sessions)
        conn.executemany("INSERT INTO messages (session_id, role, content, tool_call_id, "
                         "tool_calls, tool_name, timestamp) VALUES (?,?,?,?,?,?,?)", batch)
        conn.execute("COMMIT")
        batch.clear()
        sessions.clear()

    for i, (sid, m) in enumerate(corpus.messages(opts["count"])):
        if sid not in seen:
            seen.add(sid)
            sessions.append((sid, SOURCES[len(seen) % len(SOURCES)], "m", now + i))
        batch.append((sid, m["role"], m["content"], m.get("tool_call_id"),
                      json.dumps(m["tool_calls"]) if m.get("tool_calls") else None,
                      m.get("tool_name"), now + i))
        if len(batch) >= 2000:
            flush()
    if batch:
        flush()
    for table in ("messages_fts", "messages_fts_trigram"):
        conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    built = time.perf_counter() - start
    db.close()
    return {"count": opts["count"], "build_s": built, "size_bytes": size_of(path)}


def phase_search(db: Adapter, path: Path, opts: dict[str, Any]) -> dict[str, Any]:
    """Search times by query kind. With ``rounds`` > 1 this process runs only every
    ``rounds``-th query from ``round`` on and returns the raw times (the driver interleaves
    the implementations round by round and pools them)."""
    corpus = Corpus(seed=opts.get("seed", 7))
    rounds, first = opts.get("rounds", 1), opts.get("round", 0)
    out: dict[str, Any] = {}
    pooled: list[float] = []
    for kind in QUERY_KINDS:
        queries = corpus.queries(kind, opts.get("queries", 40))
        db.search(queries[0])  # warm the page cache
        times, cpu, hits = [], [], []
        for q in queries[first::rounds]:
            t0, c0 = time.perf_counter(), time.thread_time()
            hits.append(len(db.search(q)))
            times.append(time.perf_counter() - t0)
            cpu.append(time.thread_time() - c0)  # this thread's CPU: not the machine's load
        out[kind] = {"times": times, "cpu": cpu, "hits": hits}
        pooled += times
    db.close()
    return summarise(out) if rounds == 1 else out


def summarise(raw: dict[str, Any]) -> dict[str, Any]:
    """p50/p95 (ms, wall and CPU) and mean hits per kind from raw times, plus all kinds
    pooled."""
    out: dict[str, Any] = {}
    for kind, v in raw.items():
        out[kind] = {"p50_ms": statistics.median(v["times"]) * 1e3,
                     "p95_ms": pct(v["times"], 0.95) * 1e3,
                     "cpu_p50_ms": statistics.median(v["cpu"]) * 1e3,
                     "cpu_p95_ms": pct(v["cpu"], 0.95) * 1e3,
                     "mean_hits": statistics.mean(v["hits"])}
    pooled = [t for v in raw.values() for t in v["times"]]
    cpu = [t for v in raw.values() for t in v["cpu"]]
    out["all kinds"] = {"p50_ms": statistics.median(pooled) * 1e3,
                        "p95_ms": pct(pooled, 0.95) * 1e3,
                        "cpu_p50_ms": statistics.median(cpu) * 1e3,
                        "cpu_p95_ms": pct(cpu, 0.95) * 1e3, "mean_hits": 0}
    return out


def phase_crafted(db: Adapter, path: Path, opts: dict[str, Any]) -> dict[str, Any]:
    """Each crafted query once (after one warm-up search), while another thread appends
    messages without pause: the query's time, the worst append during it, and how many
    appends completed while it ran (0 means the query blocked them)."""
    import threading

    sid = f"crafted_{os.getpid()}"
    db.create(sid, "cli")
    corpus = Corpus(seed=11)
    items = [m for _, m in corpus.messages(5000, per_session=10**9)]
    out: dict[str, Any] = {}
    for name, query in CRAFTED_QUERIES.items():
        db.search("docker")
        stop = threading.Event()
        lat: list[tuple[float, float]] = []  # (start, duration) of each append

        def appender() -> None:
            i = 0
            while not stop.is_set():
                t0 = time.perf_counter()
                db.append(sid, items[i % len(items)])
                lat.append((t0, time.perf_counter() - t0))
                i += 1

        thread = threading.Thread(target=appender, daemon=True)
        thread.start()
        while not lat:  # the appender is running before the query starts
            time.sleep(0.001)
        t0 = time.perf_counter()
        error = ""
        try:
            hits = len(db.search(query))
        except Exception as exc:  # a documented refusal (time budget) is a result here
            hits, error = 0, type(exc).__name__
        t1 = time.perf_counter()
        stop.set()
        thread.join()
        during = [d for s, d in lat if s + d >= t0 and s <= t1]
        out[name] = {"query_ms": (t1 - t0) * 1e3, "hits": hits, "error": error,
                     "appends_during": sum(1 for s, d in lat if t0 <= s and s + d <= t1),
                     "worst_append_ms": max(during) * 1e3 if during else 0.0}
    db.close()
    return out


def phase_rich(db: Adapter, path: Path, opts: dict[str, Any]) -> dict[str, Any]:
    import random

    rng = random.Random(3)
    times = []
    rows = 0
    for i in range(opts.get("calls", 60)):
        offset = 0 if i % 2 == 0 else rng.randrange(0, opts.get("sessions", 5000) - 20)
        t0 = time.perf_counter()
        rows += len(db.rich(offset))
        times.append(time.perf_counter() - t0)
    db.close()
    return {"p50_ms": statistics.median(times) * 1e3, "p95_ms": pct(times, 0.95) * 1e3,
            "rows": rows}


def phase_writer(db: Adapter, path: Path, opts: dict[str, Any]) -> dict[str, Any]:
    """One of several concurrent writers: its own session, ``count`` appends."""
    corpus = Corpus(seed=opts["seed"])
    sid = f"writer_{opts['seed']}"
    db.create(sid, "cli")
    lat, errors = [], 0
    items = [m for _, m in corpus.messages(opts["count"], per_session=10**9)]
    if opts.get("wait_until"):  # all writers start together
        time.sleep(max(0.0, opts["wait_until"] - time.time()))
    start = time.perf_counter()
    for msg in items:
        t0 = time.perf_counter()
        try:
            db.append(sid, msg)
        except Exception:  # counted and reported: a failed write is a result here
            errors += 1
        lat.append(time.perf_counter() - t0)
    wall = time.perf_counter() - start
    db.close()
    return {"wall_s": wall, "worst_ms": max(lat) * 1e3, "p99_ms": pct(lat, 0.99) * 1e3,
            "errors": errors, "started": time.time() - wall}


def phase_init(db: Adapter, path: Path, opts: dict[str, Any]) -> dict[str, Any]:
    db.close()
    return {"size_bytes": size_of(path)}


PHASES = {"init": phase_init, "append": phase_append, "bulk": phase_bulk, "search": phase_search,
          "rich": phase_rich, "writer": phase_writer, "crafted": phase_crafted}

if __name__ == "__main__":
    impl, phase, db_path = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    options = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
    result = PHASES[phase](Adapter(impl, db_path), db_path, options)
    print(json.dumps(result))
