"""`hermes gateway run` runs the scheduled jobs: a due job's answer reaches its Telegram chat
through the adapter the gateway connected."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text
from hermes_agent.testing.fake_telegram import FakeTelegram

from .test_kill import ALICE, WAIT, gateway, telegram, wait_for  # noqa: F401,F811 (fixture)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def test_a_due_job_is_delivered_to_a_chat_by_the_gateway(home: Path, fake_llm: FakeLLMServer,
                                                        telegram: FakeTelegram) -> None:
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": fake_llm.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "sessions": {"auto_title": False},
        "platforms": {"telegram": {"enabled": True, "base_url": telegram.base_url,
                                   "poll_timeout": 1}}}))
    hermes = Path(sys.executable).parent / "hermes"
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None).isoformat(timespec="seconds")
    created = subprocess.run(
        [str(hermes), "cron", "create", now, "Report the weather.", "--name", "weather",
         "--deliver", f"telegram:{ALICE}"], capture_output=True, text=True, timeout=WAIT,
        env={**os.environ, "HERMES_HOME": str(home)})
    assert created.returncode == 0, created.stderr
    fake_llm.script(reply_text("Sunny, 21 degrees."))
    telegram.add_chat(ALICE, first_name="Alice")  # she started the bot once, as Telegram requires
    proc = gateway(home, telegram)
    try:
        wait_for(lambda: telegram.texts(ALICE), "the job's delivery", proc)
        proc.send_signal(signal.SIGTERM)
        proc.wait(WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert len(telegram.texts(ALICE)) == 1 and "Sunny, 21 degrees." in telegram.texts(ALICE)[0]
    assert proc.returncode == 0
    posts = [r for r in fake_llm.requests if r.method == "POST"]
    assert posts[0].body["messages"][-1]["content"].endswith("Report the weather.")


def test_a_job_scheduled_in_a_chat_is_delivered_to_that_chat(kernel_for, server) -> None:
    """The cronjob tool records the chat a gateway turn answers, so `deliver: origin` reaches
    it (before, a job made in a chat recorded no chat and its answers stayed local)."""
    import asyncio

    from hermes_agent.testing.fake_llm import reply_tool_call

    from .conftest import running

    server.script(reply_tool_call("cronjob", {
        "action": "create", "schedule": "every 10m", "name": "standup",
        "prompt": "Remind me of the standup.", "deliver": "origin"}), reply_text("Scheduled."),
        reply_text("Standup in 5 minutes."))
    kernel = kernel_for(platform_toolsets={"testchat": ["hermes-cli"]})

    async def scenario() -> tuple[dict, list[str]]:
        from hermes_agent.builtin_plugins.cron.jobs import JobStore

        async with running(kernel) as (runner, chat):
            await chat.inject("A", "alice", "remind me of the standup every 10 minutes")
            assert await chat.wait_for("A", 1) == ["Scheduled."]
            [job] = JobStore(kernel.home).load()
            later = dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=11)
            stop = asyncio.Event()  # the gateway's cron loop, its clock 11 minutes ahead
            loop = asyncio.create_task(kernel.service("cron").serve(
                stop, clock=lambda: later, interval=0.1))
            try:
                return job, await chat.wait_for("A", 2)
            finally:
                stop.set()
                await loop

    job, texts = asyncio.run(scenario())
    assert (job["origin"]["platform"], job["origin"]["chat_id"]) == ("testchat", "A")
    assert texts[1].endswith("Standup in 5 minutes.")
