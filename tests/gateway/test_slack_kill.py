"""A real `hermes gateway run` on Slack's Socket Mode killed with SIGKILL mid-turn: every
envelope it had acknowledged is answered by the restarted gateway, once each and in order,
in the chat's session (and what it never acknowledged, Slack sends again)."""

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

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
pytest.importorskip("slack_sdk", reason="the Slack platform needs slack-sdk: "
                    "pip install 'hermes-agent-runtime[platform-slack]'")
pytest.importorskip("aiohttp", reason="slack-sdk's asyncio clients need aiohttp")
pytest.importorskip("websockets", reason="the fake Slack's Socket Mode server needs websockets")
from hermes_agent.testing.fake_slack import FakeSlack  # noqa: E402

ALICE, DM = "U0ALICE1", "D0ALICE"
WAIT = 60.0


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
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


def gateway(home: Path, slack: FakeSlack) -> subprocess.Popen[str]:
    hermes = Path(sys.executable).parent / "hermes"
    env = {**os.environ, "HERMES_HOME": str(home), "SLACK_BOT_TOKEN": slack.bot_token,
           "SLACK_APP_TOKEN": slack.app_token, "SLACK_ALLOWED_USERS": ALICE}
    return subprocess.Popen([str(hermes), "gateway", "run"], env=env, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def user_texts(request: Any) -> list[str]:
    return [m["content"] for m in request.body["messages"] if m["role"] == "user"]


def test_sigkill_mid_turn_loses_no_acknowledged_message(home: Path, fake_llm: FakeLLMServer,
                                                        slack: FakeSlack) -> None:
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": fake_llm.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "sessions": {"auto_title": False}, "gateway": {"stream_replies": False},
        "platforms": {"slack": {"enabled": True, "api_base": slack.api_base}}}))
    fake_llm.script(reply_text("first answer"), reply_text("never sent", delay=WAIT))
    first = gateway(home, slack)
    try:
        wait_for(lambda: slack.connections, "the Socket Mode connection", first)
        slack.user_says(DM, ALICE, "first")
        wait_for(lambda: slack.texts(DM) == ["first answer"], "the first answer", first)
        slack.user_says(DM, ALICE, "second")  # its model call hangs
        wait_for(lambda: fake_llm.pending == 0, "the second turn's model call", first)
        slack.user_says(DM, ALICE, "third")  # waits behind it
        wait_for(lambda: not slack.unacked, "both envelopes acknowledged", first)
        first.send_signal(signal.SIGKILL)
        first.wait(WAIT)
    finally:
        if first.poll() is None:
            first.kill()
    acknowledged = list(slack.acked)

    fake_llm.script(reply_text("second answer"), reply_text("third answer"))
    second = gateway(home, slack)
    try:
        wait_for(lambda: len(slack.texts(DM)) >= 3, "the replayed answers", second)
        second.send_signal(signal.SIGTERM)
        second.wait(WAIT)
    finally:
        if second.poll() is None:
            second.kill()
    assert slack.texts(DM) == ["first answer", "second answer", "third answer"]
    assert len(slack.connections) == 2
    # nothing had to be sent again: the answers came from the gateway's inbox
    assert slack.acked[:len(acknowledged)] == acknowledged
    assert all(e["retry_attempt"] == 0 for e in slack.envelopes.values())
    posts = [r for r in fake_llm.requests if r.method == "POST"]
    assert user_texts(posts[-1]) == ["first", "second", "third"]  # one session, in order
    assert second.returncode == 0
