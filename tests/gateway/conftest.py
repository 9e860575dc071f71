"""The gateway tests' harness: an in-process test platform (``testchat``) whose adapter
records what it sends and lets a test inject inbound messages, a kernel with the builtin
plugins pointed at the fake model server, and a running gateway around both."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.api import InboundMessage, PlatformAdapter, SendResult
from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer

WAIT = 30.0  # generous: a bound, never a pace


class TestAdapter(PlatformAdapter):
    __test__ = False

    def __init__(self, config: Any = None):
        super().__init__(config)
        self.max_message_length = int((config or {}).get("max_length", 0))
        self.sent: list[tuple[str, str, dict[str, Any]]] = []
        self.failures: list[SendResult] = []  # answered, in order, before sending for real
        self.attempts = 0
        self.connected = False
        self._changed: asyncio.Condition | None = None

    async def connect(self, *, is_reconnect: bool = False) -> bool:
        self._changed = asyncio.Condition()
        self.connected = True
        return True

    async def disconnect(self) -> None:
        self.connected = False

    async def send(self, chat_id: str, content: str, reply_to: str | None = None,
                   metadata: dict[str, Any] | None = None) -> SendResult:
        self.attempts += 1
        if self.failures:
            return self.failures.pop(0)
        self.sent.append((chat_id, content, dict(metadata or {})))
        assert self._changed is not None
        async with self._changed:
            self._changed.notify_all()
        return SendResult(True, message_id=str(len(self.sent)))

    async def inject(self, chat_id: str, user_id: str, text: str, **extra: Any) -> None:
        await self.handle_message(InboundMessage("testchat", chat_id, user_id, text, **extra))

    def texts(self, chat_id: str) -> list[str]:
        return [text for chat, text, _ in self.sent if chat == chat_id]

    async def wait_for(self, chat_id: str, count: int) -> list[str]:
        """The chat's first ``count`` sent texts, once there are that many."""
        assert self._changed is not None
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(
                lambda: len(self.texts(chat_id)) >= count), WAIT)
        return self.texts(chat_id)[:count]


class Gate:
    """A tool the model can call that blocks until the test opens it: a slow turn."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.opened = threading.Event()

    def handler(self, args: dict[str, Any], **_: Any) -> str:
        self.entered.set()
        return "opened" if self.opened.wait(WAIT) else "timed out"


def test_platform(gate: Gate, hooks: dict[str, Callable[..., Any]]) -> Callable[[Any], None]:
    def register(ctx: Any) -> None:
        ctx.register_platform("testchat", "Test chat", adapter_factory=TestAdapter,
                              check_fn=lambda: True)
        ctx.register_tool("wait_gate", "testing", {
            "name": "wait_gate", "description": "Wait for the gate.",
            "parameters": {"type": "object", "properties": {}}}, gate.handler)
        for name, callback in hooks.items():
            ctx.register_hook(name, callback)
    register.__name__ = "testchat"
    return register


@pytest.fixture
def server(fake_llm: FakeLLMServer) -> FakeLLMServer:
    return fake_llm


@pytest.fixture
def gate() -> Gate:
    return Gate()


@pytest.fixture
def kernel_for(home: Path, server: FakeLLMServer, gate: Gate):  # type: ignore[no-untyped-def]
    """``kernel_for(hooks={...}, env={...}, **config)``: a booted kernel with the builtins
    and the test platform, its model the fake server, ``alice`` and ``bob`` allowed."""

    def build(hooks: dict[str, Callable[..., Any]] | None = None,
              env: dict[str, str] | None = None, **extra: Any) -> Any:
        config: dict[str, Any] = {
            "model": {"provider": "custom", "base_url": server.openai_base_url,
                      "default": "fake-model", "max_retries": 0},
            "sessions": {"auto_title": False},
            "platforms": {"testchat": {"enabled": True, "allowed_users": ["alice", "bob"]}},
        }
        config.update(extra)
        return make_kernel(home, config=config, env={"HERMES_HOME": str(home), **(env or {})},
                           builtins=True, plugins=[test_platform(gate, hooks or {})])

    return build


@contextlib.asynccontextmanager
async def serving(kernel: Any, platform: str, **options: Any) -> AsyncIterator[tuple[Any, Any]]:
    """A started gateway whose one enabled platform is ``platform``; yields the runner and that
    platform's adapter; stopped (drained) on exit."""
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters
    from hermes_agent.builtin_plugins.gateway.runner import GatewayRunner

    adapters, entries, problems = build_adapters(kernel)
    assert not problems
    runner = GatewayRunner(kernel, adapters, entries=entries, **options)
    assert await runner.start() == [platform]
    try:
        yield runner, adapters[platform]
    finally:
        await runner.stop(WAIT)


@contextlib.asynccontextmanager
async def running(kernel: Any, **options: Any) -> AsyncIterator[tuple[Any, TestAdapter]]:
    """A started gateway with the test platform; stopped (drained) on exit."""
    async with serving(kernel, "testchat", **options) as started:
        yield started
