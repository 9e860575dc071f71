"""Several real processes writing one state.db: nothing lost, nothing failed; a writer killed
with SIGKILL mid-stream leaves a sound database that holds every acknowledged message."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from hermes_agent.builtin_plugins.sessions.store import SqliteSessionStore

WRITER = r"""
import json, sys, time
from hermes_agent.builtin_plugins.sessions.store import SqliteSessionStore
path, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = SqliteSessionStore(path)
sid = store.create_session(name, source="cli")
errors, worst = [], 0.0
for i in range(count):
    start = time.perf_counter()
    try:
        store.append_message(sid, "user" if i % 2 else "assistant", f"{name} message {i} " * 8,
                             tool_calls=[{"id": f"c{i}", "function": {"name": "t"}}] if i % 7 == 0 else None)
    except Exception as exc:
        errors.append(repr(exc))
    worst = max(worst, time.perf_counter() - start)
    if "--ack" in sys.argv:
        print(i, flush=True)
store.close()
print(json.dumps({"errors": errors, "worst": worst}), flush=True)
"""


def _spawn(path: Path, name: str, count: int, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(path), name, str(count), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_eight_processes_append_2000_messages_each(tmp_path, integrity):
    path = tmp_path / "state.db"
    SqliteSessionStore(path).close()  # schema created once, up front
    procs = [_spawn(path, f"w{n}", 2000) for n in range(8)]
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        reports.append(json.loads(out.strip().splitlines()[-1]))
    assert [r["errors"] for r in reports] == [[]] * 8
    store = SqliteSessionStore(path)
    for n in range(8):
        msgs = store.get_messages(f"w{n}")
        assert [int(m["content"].split()[2]) for m in msgs] == list(range(2000))
        row = store.get_session(f"w{n}")
        assert (row["message_count"], row["tool_call_count"]) == (2000, 286)
    assert len(store.search_messages('"w3 message 1999"', limit=5)) == 1
    assert store.conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 16000
    store.close()
    assert integrity(path) == "ok"


def test_sigkill_mid_stream_loses_at_most_the_message_in_flight(tmp_path, integrity):
    path = tmp_path / "state.db"
    SqliteSessionStore(path).close()
    acknowledged: dict[str, int] = {}
    for round_no, wait_for in enumerate((50, 333, 1200)):
        name = f"k{round_no}"
        proc = _spawn(path, name, 100000, "--ack")
        last = -1
        assert proc.stdout is not None
        while last < wait_for:
            line = proc.stdout.readline()
            assert line, proc.stderr.read() if proc.stderr else "writer exited"
            last = int(line)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        for line in proc.stdout.read().split():  # acknowledged before the kill landed
            last = int(line)
        acknowledged[name] = last
    assert integrity(path) == "ok"
    store = SqliteSessionStore(path)
    for name, last in acknowledged.items():
        stored = [int(m["content"].split()[2]) for m in store.get_messages(name)]
        assert stored == list(range(len(stored)))  # no gaps, no duplicates
        assert last + 1 <= len(stored) <= last + 2  # every acknowledged one, plus one in flight
        assert store.get_session(name)["message_count"] == len(stored)
    store.append_message("k0", "user", "the file still takes writes")
    store.close()
