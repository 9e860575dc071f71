"""A real `hermes gateway run` killed with SIGKILL mid-turn: the restarted gateway answers
every message it had accepted, once each and in order, in the chat's session."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text
from hermes_agent.testing.fake_telegram import FakeTelegram

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
ALICE = 1001
WAIT = 60.0


@pytest.fixture
def telegram() -> Iterator[FakeTelegram]:
    with FakeTelegram() as fake:
        yield fake


def wait_for(check: Any, what: str, proc: subprocess.Popen[str]) -> Any:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        if proc.poll() is not None:
            raise AssertionError(f"the gateway exited ({proc.returncode}) before {what}: "
                                 f"{proc.stderr.read() if proc.stderr else ''}")
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def gateway(home: Path, telegram: FakeTelegram) -> subprocess.Popen[str]:
    hermes = Path(sys.executable).parent / "hermes"
    env = {**os.environ, "HERMES_HOME": str(home), "TELEGRAM_BOT_TOKEN": telegram.token,
           "TELEGRAM_ALLOWED_USERS": str(ALICE)}
    return subprocess.Popen([str(hermes), "gateway", "run"], env=env, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def user_texts(request: Any) -> list[str]:
    return [m["content"] for m in request.body["messages"] if m["role"] == "user"]


def test_sigkill_mid_turn_loses_no_accepted_message(home: Path, fake_llm: FakeLLMServer,
                                                    telegram: FakeTelegram) -> None:
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": fake_llm.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "sessions": {"auto_title": False}, "gateway": {"stream_replies": False},
        "platforms": {"telegram": {"enabled": True, "base_url": telegram.base_url,
                                   "poll_timeout": 1}}}))
    fake_llm.script(reply_text("first answer"), reply_text("never sent", delay=WAIT))
    first = gateway(home, telegram)
    try:
        telegram.user_message(ALICE, ALICE, "first")
        wait_for(lambda: telegram.texts(ALICE) == ["first answer"], "the first answer", first)
        telegram.user_message(ALICE, ALICE, "second")  # its model call hangs
        wait_for(lambda: fake_llm.pending == 0, "the second turn's model call", first)
        telegram.user_message(ALICE, ALICE, "third")  # waits behind it
        wait_for(lambda: telegram.pending == [], "Telegram to see both updates confirmed", first)
        first.send_signal(signal.SIGKILL)
        first.wait(WAIT)
    finally:
        if first.poll() is None:
            first.kill()

    fake_llm.script(reply_text("second answer"), reply_text("third answer"))
    second = gateway(home, telegram)
    try:
        wait_for(lambda: len(telegram.texts(ALICE)) >= 3, "the replayed answers", second)
        second.send_signal(signal.SIGTERM)
        second.wait(WAIT)
    finally:
        if second.poll() is None:
            second.kill()
    assert telegram.texts(ALICE) == ["first answer", "second answer", "third answer"]
    posts = [r for r in fake_llm.requests if r.method == "POST"]
    # one session, each message in it once, in order
    assert user_texts(posts[-1]) == ["first", "second", "third"]
    assert second.returncode == 0
