"""Fixtures for the agent tests: a fake LLM server and a kernel with the builtin plugins, the
bundled model providers, the SQLite session store and the seed calculator plugin, pointed at that server."""

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


def agent_config(server: FakeLLMServer, **extra: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "model": {"provider": "custom", "base_url": server.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "plugins": {"enabled": ["calculator"]},
        # the scripts answer the agent's requests in order: no background title request
        "sessions": {"auto_title": False},
    }
    config.update(extra)
    return config


@pytest.fixture
def kernel_for(home: Path, calculator: Path, server: FakeLLMServer,  # type: ignore[no-untyped-def]
               workdir: Path):
    """``kernel_for(**config)``: a booted kernel whose model is the fake server. Its user
    trusts ``workdir`` (their own project) unless ``projects=`` says otherwise."""

    def build(**extra: Any) -> Any:
        extra.setdefault("projects", {"trusted": [str(workdir)]})
        return make_kernel(home, config=agent_config(server, **extra),
                           env={"HERMES_HOME": str(home)}, builtins=True)

    return build


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """The user's project folder (trusted by ``kernel_for``'s kernels)."""
    path = tmp_path / "work"
    path.mkdir()
    return path


def write_unreachable_config(home: Path, max_retries: int) -> None:
    """config.yaml naming a server on a closed 127.0.0.1 port, retried with tiny delays."""
    import socket

    import yaml

    with socket.socket() as probe:  # nobody listens on the port once it is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (home / "config.yaml").write_text(yaml.safe_dump({"model": {
        "provider": "custom", "base_url": f"http://127.0.0.1:{port}/v1", "default": "m",
        "max_retries": max_retries, "retry_delay": 0.01}}))
