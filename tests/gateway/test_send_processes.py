"""`hermes send`, `hermes chat -q` calling send_message and `hermes cron run`, each in its own
process, deliver through a real `hermes gateway run` (its control socket) to the fake Telegram:
the same path and the same allow-list check as in the gateway; with no gateway running each
says how to start one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hermes_agent.builtin_plugins.gateway.state import StateFile
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call
from hermes_agent.testing.fake_telegram import FakeTelegram

from .test_kill import ALICE, WAIT, gateway, telegram, wait_for  # noqa: F401,F811 (fixture)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="Unix sockets and signals")
GROUP = -100500
HERMES = Path(sys.executable).parent / "hermes"


def hermes(home: Path, telegram: FakeTelegram, *args: str,
           stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HERMES_HOME": str(home), "TELEGRAM_BOT_TOKEN": telegram.token,
           "TELEGRAM_ALLOWED_USERS": str(ALICE)}
    return subprocess.run([str(HERMES), *args], capture_output=True, text=True, input=stdin,
                          timeout=WAIT, env=env)


def configure(home: Path, llm: FakeLLMServer, telegram: FakeTelegram) -> None:
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": llm.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "sessions": {"auto_title": False}, "cron": {"timezone": "UTC"},
        "gateway": {"run_cron": False},  # `hermes cron run` below runs the job itself
        "platforms": {"telegram": {"enabled": True, "base_url": telegram.base_url,
                                   "poll_timeout": 1,
                                   "home_channel": {"chat_id": str(GROUP), "name": "Team"}}}}))
    telegram.add_chat(GROUP, "group", title="Team")
    telegram.add_chat(ALICE, first_name="Alice")


def test_other_processes_deliver_through_the_running_gateway(home: Path, fake_llm: FakeLLMServer,
                                                              telegram: FakeTelegram) -> None:
    configure(home, fake_llm, telegram)
    proc = gateway(home, telegram)
    try:
        wait_for(lambda: (StateFile(home).read() or {}).get("control"), "the control socket",
                 proc)
        sent = hermes(home, telegram, "send", "--to", "telegram", "deploy finished")
        assert sent.returncode == 0, sent.stderr
        assert f"sent to telegram:{GROUP}" in sent.stdout
        piped = hermes(home, telegram, "send", "--to", f"telegram:{ALICE}", "--subject", "[CI]",
                       "--json", stdin="build log line\n")
        assert piped.returncode == 0 and json.loads(piped.stdout)["success"]
        refused = hermes(home, telegram, "send", "--to", "telegram:424242", "secrets")
        assert refused.returncode == 1
        assert "not a chat hermes may send to" in refused.stderr
        listed = json.loads(hermes(home, telegram, "send", "--list", "--json").stdout)
        assert listed == [{"target": "telegram", "platform": "telegram", "chat_id": str(GROUP),
                           "thread_id": None, "name": "Team", "home": True, "connected": True}]

        fake_llm.script(reply_tool_call("send_message", {"target": "telegram",
                                                         "message": "from a terminal chat"}),
                        reply_text("posted"))
        chat = hermes(home, telegram, "chat", "-q", "tell the team")
        assert chat.returncode == 0 and "posted" in chat.stdout, chat.stderr

        created = hermes(home, telegram, "cron", "create", "every 2h", "Report the weather.",
                         "--name", "weather", "--deliver", "telegram")
        assert created.returncode == 0, created.stderr
        fake_llm.script(reply_text("Sunny, 21 degrees."))
        ran = hermes(home, telegram, "cron", "run", "weather")
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert f"telegram: delivered" in ran.stdout
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(WAIT)
    assert telegram.texts(GROUP) == ["deploy finished", "from a terminal chat",
                                     "Sunny, 21 degrees."]
    assert telegram.texts(ALICE) == ["[CI]\n\nbuild log line"]
    assert telegram.texts(424242) == []
    assert proc.returncode == 0

    stopped = hermes(home, telegram, "send", "--to", "telegram", "anyone there?")
    assert stopped.returncode == 1 and "no gateway is running" in stopped.stderr
    assert "`hermes gateway run`" in stopped.stderr
