"""Fixtures for session_search and titles: the agent's model on one fake server, the auxiliary
tasks (session_search, title_generation) on another, so each script answers one side only."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def aux() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def kernel_for(home: Path, server: FakeLLMServer, aux: FakeLLMServer):  # type: ignore[no-untyped-def]
    """``kernel_for(auto_title=False, **config)``: a booted kernel with the builtin plugins."""

    def build(auto_title: bool = False, **extra: Any) -> Any:
        side = {"provider": "custom", "base_url": aux.openai_base_url, "model": "aux-model"}
        config: dict[str, Any] = {
            "model": {"provider": "custom", "base_url": server.openai_base_url,
                      "default": "fake-model", "max_retries": 0},
            "auxiliary": {"session_search": side, "title_generation": side},
            "sessions": {"auto_title": auto_title},
        }
        config.update(extra)
        return make_kernel(home, config=config, env={"HERMES_HOME": str(home)}, builtins=True)

    return build


def join_title_thread(session_id: str, timeout: float = 20.0) -> None:
    """Wait for the background thread naming ``session_id``, if one was started."""
    for thread in threading.enumerate():
        if thread.name == f"hermes-title:{session_id}":
            thread.join(timeout)


def wait_for(predicate: Any, timeout: float = 20.0) -> None:
    """Until ``predicate()`` is true (checked every 20 ms), else fail."""
    event = threading.Event()
    deadline = timeout
    while not predicate():
        if deadline <= 0:
            raise AssertionError("condition not met in time")
        event.wait(0.02)
        deadline -= 0.02
