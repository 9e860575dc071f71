"""Three real `hermes gateway run` processes on one PostgreSQL database, one Telegram bot
(the fake Bot API) and an api-server each: 200 Telegram chats, the replica that polls
Telegram killed with SIGKILL while every turn waits on the model; the other two take over
the polling and its chats, and every message is answered exactly once, in order, each chat
in one session. Then 20 api-server conversations alternate between the two survivors, each
staying one session."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text
from hermes_agent.testing.fake_telegram import FakeTelegram

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
pytest.importorskip("psycopg", reason="the shared queue needs the session-postgres extra")
CHATS = 200
WAIT = 120.0
KEY = "sk-replicas"
CONVERSATIONS = 20


@pytest.fixture
def telegram() -> Iterator[FakeTelegram]:
    with FakeTelegram() as fake:
        yield fake


def wait_for(check: Any, what: str, bound: float = WAIT) -> Any:
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def replica_home(root: Path, name: str, dsn: str, llm: FakeLLMServer,
                 telegram: FakeTelegram) -> Path:
    home = root / name
    home.mkdir()
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": llm.openai_base_url,
                  "default": "fake-model", "max_retries": 0, "timeout": WAIT},
        "sessions": {"auto_title": False, "store": "postgres", "dsn": dsn},
        "gateway": {"stream_replies": False, "lease_seconds": 4, "run_cron": False},
        "platforms": {"telegram": {"enabled": True, "base_url": telegram.base_url,
                                   "poll_timeout": 1, "allow_all_users": True},
                      "api_server": {"enabled": True, "port": free_port()}}}))
    return home


def start(home: Path, telegram: FakeTelegram) -> subprocess.Popen[str]:
    hermes = Path(sys.executable).parent / "hermes"
    env = {**os.environ, "HERMES_HOME": str(home), "TELEGRAM_BOT_TOKEN": telegram.token,
           "API_SERVER_KEY": KEY}
    return subprocess.Popen([str(hermes), "gateway", "run"], env=env, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def api_conversations(ports: list[int]) -> list[list[str]]:
    """``CONVERSATIONS`` conversations at once, two requests each, the first to one replica
    and the second to the other; the answers, per conversation."""
    from concurrent.futures import ThreadPoolExecutor

    import httpx2

    def conversation(n: int) -> list[str]:
        answers = []
        with httpx2.Client(timeout=WAIT) as http:
            for turn, port in enumerate(ports[n % 2:] + ports[:n % 2]):
                response = http.post(
                    f"http://127.0.0.1:{port}/v1/chat/completions",
                    headers={"Authorization": f"Bearer {KEY}", "X-Hermes-Session": f"conv{n}"},
                    json={"model": "hermes-agent",
                          "messages": [{"role": "user", "content": f"api {turn}"}]})
                assert response.status_code == 200, response.text
                answers.append(response.json()["choices"][0]["message"]["content"])
        return answers

    with ThreadPoolExecutor(CONVERSATIONS) as pool:
        return list(pool.map(conversation, range(CONVERSATIONS)))


def replicas(home: Path) -> list[dict[str, Any]]:
    hermes = Path(sys.executable).parent / "hermes"
    out = subprocess.run([str(hermes), "gateway", "status", "--json"], capture_output=True,
                         text=True, timeout=60, env={**os.environ, "HERMES_HOME": str(home)})
    return json.loads(out.stdout).get("shared", {}).get("replicas", []) if out.stdout else []


def test_three_replicas_survive_the_poller_being_killed(tmp_path, fake_llm, telegram,
                                                       pg_schemas):
    dsn = pg_schemas("three")
    release = threading.Event()  # the first turns wait on the model until the poller is dead
    fake_llm.default_reply = reply_text("answered", hold=release)
    homes = [replica_home(tmp_path, f"r{n}", dsn, fake_llm, telegram) for n in range(3)]
    procs = [start(home, telegram) for home in homes]
    try:
        def polling() -> list[dict[str, Any]]:
            alive = replicas(homes[0])
            return alive if len(alive) == 3 and any(r.get("receiving") for r in alive) else []

        [poller] = [r for r in wait_for(polling, "three replicas, one polling")
                    if r.get("receiving")]
        victim = next(p for p in procs if p.pid == poller["pid"])
        for n in range(CHATS):
            telegram.user_message(1000 + n, 1000 + n, "first")
        # every first turn is waiting on the model: nobody is between a send and its record
        wait_for(lambda: len([r for r in fake_llm.requests if r.method == "POST"]) >= CHATS,
                 "every chat's first turn at the model")
        victim.send_signal(signal.SIGKILL)
        victim.wait(WAIT)
        fake_llm.default_reply = reply_text("answered")  # the rest at once
        release.set()
        for n in range(CHATS):  # the survivors take over the polling
            telegram.user_message(1000 + n, 1000 + n, "second")
        wait_for(lambda: all(len(telegram.texts(1000 + n)) >= 2 for n in range(CHATS)),
                 "two answers in every chat")
        survivors = [p for p in procs if p is not victim]
        # the api-server: each conversation's requests alternate between the survivors
        fake_llm.default_reply = reply_text("api answer")
        ports = [yaml.safe_load((home / "config.yaml").read_text())["platforms"]["api_server"]
                 ["port"] for home, p in zip(homes, procs) if p is not victim]
        assert api_conversations(ports) == [["api answer"] * 2] * CONVERSATIONS
        for proc in survivors:
            proc.send_signal(signal.SIGTERM)
        for proc in survivors:
            proc.wait(WAIT)  # draining: a duplicate would be sent before it exits
            assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    for n in range(CHATS):
        assert telegram.texts(1000 + n) == ["answered", "answered"], n  # once each
    seconds = [[m["content"] for m in r.body["messages"] if m["role"] == "user"]
               for r in fake_llm.requests if r.method == "POST"]
    api = [users for users in seconds if users[-1] == "api 1"]
    assert len(api) == CONVERSATIONS and all(users == ["api 0", "api 1"] for users in api)
    seconds = [users for users in seconds if users[-1] == "second"]
    assert len(seconds) == CHATS  # each second turn ran once, after its chat's first, in
    bad = [users for users in seconds if users != ["first", "second"]]
    assert not bad, bad[:5]  # the same session
