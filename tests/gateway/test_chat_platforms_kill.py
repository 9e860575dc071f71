"""A real `hermes gateway run` on WhatsApp, Signal or Mattermost (each against its fake),
killed with SIGKILL mid-turn: the restarted gateway answers every message it had
acknowledged to its sender, once each and in order, in the chat's session."""

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

from .chat_drivers import Driver, fakes

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
pytest.importorskip("websockets", reason="the Mattermost platform and its fake need websockets")
pytest.importorskip("starlette", reason="the WhatsApp webhook needs starlette and uvicorn")
WAIT = 60.0


@pytest.fixture(params=sorted(fakes()))
def driver(request: Any, home: Path) -> Iterator[Driver]:
    fake_class, driver_class = fakes()[request.param]
    with fake_class() as fake:
        yield driver_class(fake, home)


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


def user_texts(request: Any) -> list[str]:
    return [m["content"] for m in request.body["messages"] if m["role"] == "user"]


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
