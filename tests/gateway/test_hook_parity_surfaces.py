"""One plugin records every hook it receives; the same scripted conversation through a real
`hermes chat -q` process, the api-server and Telegram yields the same hook sequence, from
the session's start to its end."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call

pytest.importorskip("starlette", reason="the api-server needs the platform-api-server extra")
openai = pytest.importorskip("openai")
from hermes_agent.testing.fake_telegram import FakeTelegram  # noqa: E402

KEY = "sk-parity"
ALICE = 1001
WAIT = 60.0
RECORDER = '''
from pathlib import Path
from hermes_agent.hookspecs import EVENT_HOOKS

def register(ctx):
    log = Path(ctx.kernel.home) / "hooks.log"
    def recorder(name):
        def record(**payload):
            with open(log, "a") as out:
                out.write(f"{name} {payload.get('platform') or ''}\\n")
        return record
    for name in EVENT_HOOKS:
        if name != "pre_gateway_dispatch":
            ctx.register_hook(name, recorder(name))
    ctx.register_tool("add", "recorder", {"name": "add", "description": "Add two numbers.",
        "parameters": {"type": "object", "properties": {"a": {"type": "number"},
                                                          "b": {"type": "number"}}}},
        lambda args, **_: str(args["a"] + args["b"]))
'''


@pytest.fixture
def telegram() -> Iterator[FakeTelegram]:
    with FakeTelegram() as fake:
        yield fake


def script(llm: FakeLLMServer) -> None:
    llm.script(reply_tool_call("add", {"a": 2, "b": 3}), reply_text("5"))


def recorded(home: Path) -> list[tuple[str, str]]:
    """The hooks fired since the last call, as (hook, platform) pairs."""
    log = home / "hooks.log"
    lines = log.read_text().splitlines() if log.exists() else []
    log.unlink(missing_ok=True)
    return [tuple(line.split(" ", 1)) for line in lines]  # type: ignore[misc]


@contextlib.asynccontextmanager
async def gateway(home: Path, llm: FakeLLMServer, telegram: FakeTelegram
                  ) -> AsyncIterator[tuple[str, Any]]:
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters
    from hermes_agent.builtin_plugins.gateway.runner import GatewayRunner

    kernel = make_kernel(home, builtins=True, env={
        "HERMES_HOME": str(home), "API_SERVER_KEY": KEY, "TELEGRAM_BOT_TOKEN": telegram.token,
        "TELEGRAM_ALLOWED_USERS": str(ALICE)})
    adapters, entries, problems = build_adapters(kernel)
    assert not problems, problems
    runner = GatewayRunner(kernel, adapters, entries=entries)
    assert sorted(await runner.start()) == ["api_server", "telegram"]
    try:
        yield f"http://127.0.0.1:{adapters['api_server'].port}/v1", runner
    finally:
        await runner.stop(WAIT)  # ends the chats' sessions, as the CLI does at exit
        kernel.close()  # on_shutdown, as at the end of `hermes gateway run`


def test_chat_q_api_server_and_telegram_fire_the_same_hooks(home, fake_llm, telegram):
    plugin = home / "plugins" / "recorder"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: recorder\nversion: 1.0.0\n"
                                        "description: Records every hook.\n")
    (plugin / "__init__.py").write_text(RECORDER)
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": fake_llm.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "sessions": {"auto_title": False}, "plugins": {"enabled": ["recorder"]},
        "gateway": {"stream_replies": False},
        "platforms": {"api_server": {"enabled": True, "port": 0},
                      "telegram": {"enabled": True, "base_url": telegram.base_url,
                                   "poll_timeout": 1}}}))

    script(fake_llm)
    hermes = Path(sys.executable).parent / "hermes"
    run = subprocess.run([str(hermes), "chat", "-q", "what is 2 + 3?"], capture_output=True,
                         text=True, timeout=WAIT, env={**os.environ, "HERMES_HOME": str(home)})
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().endswith("5")
    cli = recorded(home)

    script(fake_llm)

    async def through_api_server() -> None:
        async with gateway(home, fake_llm, telegram) as (base, _):
            api = openai.AsyncOpenAI(base_url=base, api_key=KEY, max_retries=0, timeout=WAIT)
            answer = await api.chat.completions.create(
                model="hermes-agent", user="alice",
                messages=[{"role": "user", "content": "what is 2 + 3?"}])
            assert answer.choices[0].message.content == "5"

    asyncio.run(through_api_server())
    api_server = recorded(home)

    script(fake_llm)

    async def through_telegram() -> None:
        async with gateway(home, fake_llm, telegram):
            telegram.user_message(ALICE, ALICE, "what is 2 + 3?")
            assert [m.plain for m in await asyncio.to_thread(
                telegram.wait_sent, 1, ALICE, WAIT)] == ["5"]

    asyncio.run(through_telegram())
    via_telegram = recorded(home)

    def hooks(events: list[tuple[str, str]]) -> list[str]:
        return [name for name, _ in events]

    assert {"on_session_start", "pre_llm_call", "pre_tool_call", "post_tool_call",
            "on_session_end", "on_session_finalize"} <= set(hooks(cli))
    assert hooks(api_server) == hooks(cli)
    assert hooks(via_telegram) == hooks(cli)
    # each surface names itself where a hook carries the platform
    assert {p for _, p in cli} - {""} == {"cli"}
    assert {p for _, p in api_server} - {""} == {"api_server"}
    assert {p for _, p in via_telegram} - {""} == {"telegram"}
