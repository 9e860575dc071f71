"""Fixtures for the model-provider tests: a fake LLM server and a kernel whose bundled
provider plugins are loaded (entry points and user plugins off)."""

from __future__ import annotations

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
def kernel_for(tmp_path: Path):  # type: ignore[no-untyped-def]
    """``kernel_for(config, env)``: a booted kernel with the bundled model providers."""

    def build(config: dict[str, Any] | None = None, env: dict[str, str] | None = None) -> Any:
        return make_kernel(tmp_path / "home", config=config or {}, env=env or {})

    return build


@pytest.fixture
def kernel_in_mode(kernel_for, server):  # type: ignore[no-untyped-def]
    """``kernel_in_mode(api_mode, **config)``: a kernel whose model provider speaks ``api_mode``
    to the ``server`` fixture (custom, anthropic or openai-codex)."""

    def build(mode: str, **config: Any) -> Any:
        if mode == "chat_completions":
            return kernel_for({"model": {"provider": "custom", "base_url": server.openai_base_url,
                                         "default": "m"}, **config})
        if mode == "anthropic_messages":
            return kernel_for({"model": {"provider": "anthropic", "default": "claude-haiku-4-5"},
                               **config},
                              env={"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": server.url})
        return kernel_for({"model": {"provider": "openai-codex", "default": "gpt-5"}, **config},
                          env={"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.openai_base_url})

    return build
