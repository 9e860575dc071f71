"""A real `hermes gateway run` on Slack killed with SIGKILL mid-turn, over Socket Mode and
over the Events API: every event it had acknowledged (the envelope's ack, the HTTP 200) is
answered by the restarted gateway, once each and in order, in the chat's session."""

from __future__ import annotations

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


class Gateway:
    """`hermes gateway run` in a process of its own, its stderr read as it comes (the line
    naming the Events API's URL, and what it said before dying)."""

    def __init__(self, home: Path, slack: FakeSlack, mode: str):
        hermes = Path(sys.executable).parent / "hermes"
        env = {**os.environ, "HERMES_HOME": str(home), "SLACK_BOT_TOKEN": slack.bot_token,
               "SLACK_ALLOWED_USERS": ALICE}
        env.update({"SLACK_APP_TOKEN": slack.app_token} if mode == "socket" else
                   {"SLACK_SIGNING_SECRET": slack.signing_secret})
        self.proc = subprocess.Popen([str(hermes), "gateway", "run"], env=env, text=True,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def wait_for(self, check: Any, what: str) -> Any:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            value = check()
            if value:
                return value
            if self.proc.poll() is not None:
                raise AssertionError(f"the gateway exited ({self.proc.returncode}) before "
                                     f"{what}: {''.join(self.lines)}")
            time.sleep(0.02)
        raise AssertionError(f"timed out waiting for {what}")

    def events_url(self) -> str:
        line = self.wait_for(lambda: next(
            (x for x in self.lines if x.startswith("slack listening on ")), None),
            "the Events API's URL")
        return str(line.split(" on ", 1)[1].strip())

    def stop(self, sig: int) -> int:
        try:
            self.proc.send_signal(sig)
            return self.proc.wait(WAIT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


def user_texts(request: Any) -> list[str]:
    return [m["content"] for m in request.body["messages"] if m["role"] == "user"]


@pytest.mark.parametrize("mode", ["socket", "http"])
def test_sigkill_mid_turn_loses_no_acknowledged_message(home: Path, fake_llm: FakeLLMServer,
                                                        slack: FakeSlack, mode: str) -> None:
    section: dict[str, Any] = {"enabled": True, "api_base": slack.api_base}
    if mode == "http":
        section.update(mode="http", port=0)
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": fake_llm.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "sessions": {"auto_title": False}, "gateway": {"stream_replies": False},
        "platforms": {"slack": section}}))
    fake_llm.script(reply_text("first answer"), reply_text("never sent", delay=WAIT))
    first = Gateway(home, slack, mode)
    try:
        if mode == "http":
            slack.events_url = first.events_url()
        else:
            first.wait_for(lambda: slack.connections, "the Socket Mode connection")
        slack.user_says(DM, ALICE, "first")
        first.wait_for(lambda: slack.texts(DM) == ["first answer"], "the first answer")
        slack.user_says(DM, ALICE, "second")  # its model call hangs
        first.wait_for(lambda: fake_llm.pending == 0, "the second turn's model call")
        slack.user_says(DM, ALICE, "third")  # waits behind it
        if mode == "socket":
            first.wait_for(lambda: not slack.unacked, "both envelopes acknowledged")
    finally:
        first.stop(signal.SIGKILL)
    acknowledged = list(slack.acked)
    answered = list(slack.http_answers)

    fake_llm.script(reply_text("second answer"), reply_text("third answer"))
    second = Gateway(home, slack, mode)
    try:
        second.wait_for(lambda: len(slack.texts(DM)) >= 3, "the replayed answers")
    finally:
        assert second.stop(signal.SIGTERM) == 0
    assert slack.texts(DM) == ["first answer", "second answer", "third answer"]
    if mode == "socket":
        assert len(slack.connections) == 2
        # nothing had to be sent again: the answers came from the gateway's inbox
        assert slack.acked[:len(acknowledged)] == acknowledged
        assert all(e["retry_attempt"] == 0 for e in slack.envelopes.values())
    else:  # each of the user's three POSTs was answered 200 (the bot's echoes were too)
        assert len(answered) >= 3 and {status for status, _ in answered} == {200}
    posts = [r for r in fake_llm.requests if r.method == "POST"]
    assert user_texts(posts[-1]) == ["first", "second", "third"]  # one session, in order
