"""Chat throughput with 1, 2 and 3 gateway replicas on one PostgreSQL database, when the
model is the bottleneck.

Run with our interpreter (PostgreSQL at $HERMES_TEST_POSTGRES_DSN, default
postgresql://postgres@127.0.0.1:5432/test)::

    .venv/bin/python benchmarks/bench_replicas.py [--chats 120] [--delay 0.5] [--turns 4]

Each replica is a real ``hermes gateway run`` process serving the same Telegram bot (the
fake Bot API on 127.0.0.1) with at most ``--turns`` turns at once; the fake model takes
``--delay`` seconds per answer. ``--chats`` users each send one message at once; the figure
is chats answered per second, from the first message to the last answer. Target: 3 replicas
carry at least 2.5x the chats of one.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import yaml

from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text
from hermes_agent.testing.fake_telegram import FakeTelegram

DSN = os.environ.get("HERMES_TEST_POSTGRES_DSN") or "postgresql://postgres@127.0.0.1:5432/test"


def wait_for(check, what: str, bound: float = 300.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.02)
    raise SystemExit(f"timed out waiting for {what}")


def run(replicas: int, chats: int, delay: float, turns: int) -> float:
    import psycopg
    from psycopg.conninfo import make_conninfo

    schema = f"hermes_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public")
        conn.execute(f'CREATE SCHEMA "{schema}"')
    dsn = make_conninfo(DSN, options=f"-csearch_path={schema},public")
    root = Path(tempfile.mkdtemp(prefix="bench-replicas-"))
    hermes = Path(sys.executable).parent / "hermes"
    procs: list[subprocess.Popen[str]] = []
    try:
        with FakeLLMServer(default_reply=reply_text("answered", delay=delay)) as llm, \
                FakeTelegram() as telegram:
            for n in range(replicas):
                home = root / f"r{n}"
                home.mkdir()
                (home / "config.yaml").write_text(yaml.safe_dump({
                    "model": {"provider": "custom", "base_url": llm.openai_base_url,
                              "default": "fake-model", "max_retries": 0},
                    "sessions": {"auto_title": False, "store": "postgres", "dsn": dsn},
                    "gateway": {"stream_replies": False, "max_concurrent_turns": turns,
                                "run_cron": False},
                    "platforms": {"telegram": {"enabled": True, "base_url": telegram.base_url,
                                               "poll_timeout": 1, "allow_all_users": True}}}))
                procs.append(subprocess.Popen(
                    [str(hermes), "gateway", "run"], text=True, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    env={**os.environ, "HERMES_HOME": str(home),
                         "TELEGRAM_BOT_TOKEN": telegram.token}))
            wait_for(lambda: telegram.requests("getUpdates"), "a replica polling")
            time.sleep(1.0)  # the replicas' first claims and leases settle
            began = time.perf_counter()
            for n in range(chats):
                telegram.user_message(5000 + n, 5000 + n, "hello")
            wait_for(lambda: sum(len(telegram.texts(5000 + n)) for n in range(chats)) >= chats,
                     "every chat's answer")
            elapsed = time.perf_counter() - began
            answered = sum(len(telegram.texts(5000 + n)) for n in range(chats))
            assert answered == chats, f"{answered} answers for {chats} chats"
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(60)
        with psycopg.connect(DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    return chats / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=120)
    parser.add_argument("--delay", type=float, default=0.5)
    parser.add_argument("--turns", type=int, default=4, help="turns at once per replica")
    args = parser.parse_args()
    rates = {}
    for replicas in (1, 2, 3):
        rates[replicas] = run(replicas, args.chats, args.delay, args.turns)
        print(f"{replicas} replica(s): {rates[replicas]:.2f} chats/s "
              f"({rates[replicas] / rates[1]:.2f}x one)", flush=True)
    print(f"target: 3 replicas >= 2.5x one: {'met' if rates[3] >= 2.5 * rates[1] else 'not met'}")


if __name__ == "__main__":
    main()
