"""A platform plugin written for Hermes Agent 0.19 (its own plugin.yaml, ``gateway.config`` and
``gateway.platforms.base`` imports, ``MessageEvent`` + ``build_source`` + ``handle_message``)
loads unmodified from $HERMES_HOME/plugins and runs in the real gateway.

(Under pytest, ``gateway`` is this test package: the compat hook still serves the
``gateway.*`` submodules the plugin imports, as it does when no ``gateway`` exists.)"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.api import PlatformAdapter, session_store
from hermes_agent.builtin_plugins.compat import modules
from hermes_agent.testing import make_kernel, write_plugin
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

WAIT = 30.0
MANIFEST = """\
name: relaychat-platform
label: Relay chat
kind: platform
version: 1.0.0
description: A relay chat adapter written for Hermes Agent 0.19.
author: someone
requires_env:
  - name: RELAYCHAT_TOKEN
    description: "The relay's token"
    prompt: "Relay token"
    password: true
"""
ADAPTER = '''
import asyncio
import os
from typing import Any, Dict, Optional

from gateway.config import Platform, PlatformConfig
from gateway.platforms.base import (
    BasePlatformAdapter,
    MessageEvent,
    MessageType,
    SendResult,
)

MAX_MESSAGE_LENGTH = 40


class RelayAdapter(BasePlatformAdapter):
    MAX_MESSAGE_LENGTH = MAX_MESSAGE_LENGTH

    def __init__(self, config: PlatformConfig):
        super().__init__(config=config, platform=Platform("relaychat"))
        extra = config.extra or {}
        self.room_prefix = extra.get("room_prefix", "")
        self.token = os.getenv("RELAYCHAT_TOKEN", "")
        self.outbox = []
        self.flood_once = True
        self.changed = asyncio.Event()

    async def connect(self, *, is_reconnect: bool = False) -> bool:
        if not self.token:
            return False
        self._mark_connected()
        return True

    async def disconnect(self) -> None:
        self._mark_disconnected()

    async def on_relay_message(self, payload: Dict[str, Any]) -> None:
        source = self.build_source(
            chat_id=self.room_prefix + payload["room"],
            chat_name=payload["room"],
            chat_type="group",
            user_id=payload["from"],
            user_name=payload.get("name"),
            thread_id=payload.get("thread"),
        )
        event = MessageEvent(
            text=payload["text"],
            message_type=MessageType.TEXT,
            source=source,
            message_id=payload["id"],
            raw_message=payload,
        )
        await self.handle_message(event)

    async def send(self, chat_id: str, content: str, reply_to: Optional[str] = None,
                   metadata: Optional[Dict[str, Any]] = None) -> SendResult:
        if self.flood_once and reply_to:  # the first answer is rate-limited once
            self.flood_once = False
            return SendResult(success=False, error="flood", retryable=True, retry_after=0.05)
        self.outbox.append({"chat_id": chat_id, "content": content, "reply_to": reply_to,
                            "metadata": dict(metadata or {})})
        self.changed.set()
        return SendResult(success=True, message_id=str(len(self.outbox)),
                          raw_response={"ok": True})

    async def get_chat_info(self, chat_id: str) -> Dict[str, Any]:
        return {"name": chat_id, "type": "group"}


def check_requirements() -> bool:
    return True


def validate_config(config) -> bool:
    return bool((config.extra or {}).get("room_prefix"))


def register(ctx) -> None:
    ctx.register_platform(
        name="relaychat",
        label="Relay chat",
        adapter_factory=lambda cfg: RelayAdapter(cfg),
        check_fn=check_requirements,
        validate_config=validate_config,
        required_env=["RELAYCHAT_TOKEN"],
        install_hint="nothing to install",
        allowed_users_env="RELAYCHAT_ALLOWED_USERS",
        allow_all_env="RELAYCHAT_ALLOW_ALL_USERS",
        max_message_length=MAX_MESSAGE_LENGTH,
        emoji="💬",
        platform_hint="You are talking through a relay.",
    )
'''


@pytest.fixture
def legacy_kernel(home: Path, fake_llm: FakeLLMServer,  # type: ignore[no-untyped-def]
                  monkeypatch: pytest.MonkeyPatch):
    """``legacy_kernel(extra)``: a kernel with the builtins and the 0.19 plugin in
    $HERMES_HOME/plugins, its platform enabled with ``extra`` as ``platforms.relaychat.extra``."""
    modules.uninstall()
    # 0.19 adapters read os.environ; .env is exported there
    monkeypatch.setenv("RELAYCHAT_TOKEN", "t0ken")
    write_plugin(home / "plugins", "relaychat", "from .adapter import register\n",
                 manifest=MANIFEST, files={"adapter.py": ADAPTER})

    def build(extra: dict[str, Any] | None = None) -> Any:
        config = {"model": {"provider": "custom", "base_url": fake_llm.openai_base_url,
                            "default": "fake-model", "max_retries": 0},
                  "sessions": {"auto_title": False},
                  "plugins": {"enabled": ["relaychat-platform"]},
                  "platforms": {"relaychat": {"enabled": True, "extra": extra if extra is not None
                                              else {"room_prefix": "r/"}}}}
        return make_kernel(home, config=config, builtins=True, env={
            "RELAYCHAT_TOKEN": "t0ken", "RELAYCHAT_ALLOWED_USERS": "ada"})

    yield build
    modules.uninstall()


async def outbox(adapter: Any, count: int) -> list[dict[str, Any]]:
    async def enough() -> None:
        while len(adapter.outbox) < count:
            adapter.changed.clear()
            await adapter.changed.wait()
    await asyncio.wait_for(enough(), WAIT)
    return adapter.outbox[:count]


def test_a_0_19_platform_plugin_loads_receives_and_replies(home, fake_llm, legacy_kernel):
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters
    from hermes_agent.builtin_plugins.gateway.runner import GatewayRunner

    k = legacy_kernel()
    assert k.plugins["relaychat-platform"].state == "loaded", k.plugins["relaychat-platform"].reason
    answer = "A reply long enough to be split.\n\nIts second paragraph."
    fake_llm.script(reply_text(answer))

    async def scenario() -> None:
        adapters, entries, problems = build_adapters(k)
        assert not problems
        adapter = adapters["relaychat"]
        assert isinstance(adapter, PlatformAdapter) and adapter.max_message_length == 40
        runner = GatewayRunner(k, adapters, entries=entries)
        assert await runner.start() == ["relaychat"]
        try:
            assert adapter.is_connected and adapter.name == "relaychat"
            await adapter.on_relay_message({"room": "lobby", "from": "mallory", "id": "m-0",
                                            "text": "let me in"})
            [refusal] = await outbox(adapter, 1)
            assert "not allowed" in refusal["content"] and refusal["chat_id"] == "r/lobby"
            await adapter.on_relay_message({"room": "lobby", "from": "ada", "name": "Ada",
                                            "thread": "t-1", "id": "m-1", "text": "hello"})
            _, first, second = await outbox(adapter, 3)
            assert [first["content"], second["content"]] == answer.split("\n\n")
            assert first["reply_to"] == "m-1" and second["reply_to"] is None
            assert first["metadata"] == {"thread_id": "t-1"}
            assert list(runner.chats) == ["relaychat:r/lobby:t-1"]
        finally:
            await runner.stop(WAIT)
        assert not adapter.is_connected

    asyncio.run(scenario())
    [request] = [r for r in fake_llm.requests if r.method == "POST"]
    assert [m["content"] for m in request.body["messages"] if m["role"] == "user"] == ["hello"]
    assert len(session_store(k).list_sessions(source="relaychat")) == 1


def test_its_own_checks_still_apply(home, legacy_kernel):
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters

    k = legacy_kernel({})  # its validate_config fails without room_prefix
    _, _, problems = build_adapters(k)
    assert problems == ["relaychat: its configuration is invalid; check platforms.relaychat "
                        "in config.yaml and its environment variables"]


def test_the_0_19_types_behave_as_there(legacy_kernel):
    legacy_kernel()  # the compat hook is installed by the builtin plugin at boot
    from gateway.config import Platform, PlatformConfig
    from gateway.platforms.base import MessageEvent, SendResult
    from gateway.session import SessionSource

    assert Platform("relaychat") is Platform("RelayChat") and Platform.TELEGRAM.value == "telegram"
    config = PlatformConfig(enabled=True, extra={"a": 1})
    assert config.enabled is True and config.extra == {"a": 1} and config.token is None
    event = MessageEvent(text="/new fresh", source=SessionSource(Platform("x"), "c", user_id="u"))
    assert (event.is_command(), event.get_command(), event.get_command_args()) == (
        True, "new", "fresh")
    inbound = event.to_inbound("x")
    assert (inbound.platform, inbound.chat_id, inbound.user_id, inbound.text) == (
        "x", "c", "u", "/new fresh")
    result = SendResult(success=True, raw_response={"id": 1})
    assert result.raw == {"id": 1} and not result.retryable
