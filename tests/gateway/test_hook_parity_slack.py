"""Hook parity for Slack: the same scripted conversation through a real `hermes chat -q`
process and through Slack (Socket Mode, against the fake Slack) yields the same hook
sequence, from the session's start to its end (test_hook_parity_surfaces.py does the same
for the api-server and Telegram)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer

from .test_hook_parity_surfaces import RECORDER, recorded, script

pytest.importorskip("slack_sdk", reason="the Slack platform needs slack-sdk: "
                    "pip install 'hermes-agent-runtime[platform-slack]'")
pytest.importorskip("aiohttp", reason="slack-sdk's asyncio clients need aiohttp")
pytest.importorskip("websockets", reason="the fake Slack's Socket Mode server needs websockets")
from hermes_agent.testing.fake_slack import FakeSlack  # noqa: E402

ALICE = "U0ALICE1"
WAIT = 60.0


def test_chat_q_and_slack_fire_the_same_hooks(home: Path, fake_llm: FakeLLMServer) -> None:
    plugin = home / "plugins" / "recorder"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: recorder\nversion: 1.0.0\n"
                                        "description: Records every hook.\n")
    (plugin / "__init__.py").write_text(RECORDER)
    with FakeSlack() as slack:
        (home / "config.yaml").write_text(yaml.safe_dump({
            "model": {"provider": "custom", "base_url": fake_llm.openai_base_url,
                      "default": "fake-model", "max_retries": 0},
            "sessions": {"auto_title": False}, "plugins": {"enabled": ["recorder"]},
            "gateway": {"stream_replies": False},
            "platforms": {"slack": {"enabled": True, "api_base": slack.api_base}}}))

        script(fake_llm)
        hermes = Path(sys.executable).parent / "hermes"
        run = subprocess.run([str(hermes), "chat", "-q", "what is 2 + 3?"],
                             capture_output=True, text=True, timeout=WAIT,
                             env={**os.environ, "HERMES_HOME": str(home)})
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip().endswith("5")
        cli = recorded(home)

        script(fake_llm)

        async def through_slack() -> None:
            from hermes_agent.builtin_plugins.gateway.platforms import build_adapters
            from hermes_agent.builtin_plugins.gateway.runner import GatewayRunner

            kernel = make_kernel(home, builtins=True, env={
                "HERMES_HOME": str(home), "SLACK_BOT_TOKEN": slack.bot_token,
                "SLACK_APP_TOKEN": slack.app_token, "SLACK_ALLOWED_USERS": ALICE})
            adapters, entries, problems = build_adapters(kernel)
            assert not problems, problems
            runner = GatewayRunner(kernel, adapters, entries=entries)
            assert await runner.start() == ["slack"]
            try:
                slack.user_says("D0ALICE", ALICE, "what is 2 + 3?")
                await asyncio.to_thread(slack.wait, lambda: slack.texts("D0ALICE"), WAIT)
            finally:
                await runner.stop(WAIT)  # ends the chat's session, as the CLI does at exit
                kernel.close()
            assert slack.texts("D0ALICE") == ["5"]

        asyncio.run(through_slack())
        via_slack = recorded(home)

    def hooks(events: list[tuple[str, str]]) -> list[str]:
        return [name for name, _ in events]

    assert {"on_session_start", "pre_llm_call", "pre_tool_call", "post_tool_call",
            "on_session_end", "on_session_finalize"} <= set(hooks(cli))
    assert hooks(via_slack) == hooks(cli)
    assert {p for _, p in via_slack} - {""} == {"slack"}
