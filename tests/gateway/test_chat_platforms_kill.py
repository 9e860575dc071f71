"""A real `hermes gateway run` on WhatsApp, Signal or Mattermost (each against its fake),
killed with SIGKILL mid-turn: the restarted gateway answers every message it had
acknowledged to its sender, once each and in order, in the chat's session."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

from .chat_drivers import Driver
from .test_chat_platforms import driver  # noqa: F401  (the fixture: one run per platform)
from .test_kill import user_texts, wait_for

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
pytest.importorskip("websockets", reason="the Mattermost platform and its fake need websockets")
pytest.importorskip("starlette", reason="the WhatsApp webhook needs starlette and uvicorn")
WAIT = 60.0  # as test_kill's


def gateway(home: Path, driver: Driver, connections: int) -> subprocess.Popen[str]:
    hermes = Path(sys.executable).parent / "hermes"
    env = {**os.environ, "HERMES_HOME": str(home), **driver.env()}
    proc = subprocess.Popen([str(hermes), "gateway", "run"], env=env, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        driver.wait_ready(connections, WAIT)
    except AssertionError:
        proc.kill()
        raise
    return proc


def test_sigkill_mid_turn_loses_no_acknowledged_message(home: Path, fake_llm: FakeLLMServer,
                                                        driver: Driver) -> None:
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": fake_llm.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "sessions": {"auto_title": False}, "gateway": {"stream_replies": False},
        "platforms": {driver.platform: {"enabled": True, **driver.section()}}}))
    fake_llm.script(reply_text("first answer"), reply_text("never sent", delay=WAIT))
    first = gateway(home, driver, 1)
    try:
        driver.say("alice", "first")
        wait_for(lambda: driver.texts("alice") == ["first answer"], "the first answer", first)
        driver.say("alice", "second")  # its model call hangs
        wait_for(lambda: fake_llm.pending == 0, "the second turn's model call", first)
        driver.say("alice", "third")  # waits behind it
        wait_for(lambda: driver.acks() == 3, "all three messages acknowledged", first)
        first.send_signal(signal.SIGKILL)
        first.wait(WAIT)
    finally:
        if first.poll() is None:
            first.kill()

    fake_llm.script(reply_text("second answer"), reply_text("third answer"))
    second = gateway(home, driver, 2)
    try:
        wait_for(lambda: len(driver.texts("alice")) >= 3, "the replayed answers", second)
        second.send_signal(signal.SIGTERM)
        second.wait(WAIT)
    finally:
        if second.poll() is None:
            second.kill()
    assert driver.texts("alice") == ["first answer", "second answer", "third answer"]
    posts = [r for r in fake_llm.requests if r.method == "POST"]
    # one session, each message in it once, in order
    assert user_texts(posts[-1]) == ["first", "second", "third"]
    assert second.returncode == 0
