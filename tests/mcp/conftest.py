"""Fixtures: real MCP servers (the stdio script and a streamable-HTTP server on 127.0.0.1),
the fake LLM, and a kernel with the builtin plugins configured for them."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer

pytest.importorskip("mcp")


@pytest.fixture
def llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def http_mcp() -> Iterator[str]:
    """The test server over streamable HTTP on a free 127.0.0.1 port; yields its URL."""
    import uvicorn

    from mcp_test_server import build

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = build("web-demo").streamable_http_app(host="127.0.0.1")
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           lifespan="on", timeout_graceful_shutdown=2))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the HTTP server did not start"
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}/mcp"
    server.should_exit = True
    thread.join(10)


@pytest.fixture
def mcp_kernel(home: Path, llm: FakeLLMServer) -> Iterator[Any]:
    """``mcp_kernel(servers, **config)``: a booted kernel with the builtins, the fake LLM as
    its model and ``servers`` as mcp_servers; its MCP servers are stopped afterwards."""
    kernels: list[Any] = []

    def build(servers: dict[str, Any], **extra: Any) -> Any:
        config = {"model": {"provider": "custom", "base_url": llm.openai_base_url,
                            "default": "fake-model", "max_retries": 0},
                  "sessions": {"auto_title": False}, "mcp_servers": servers, **extra}
        kernel = make_kernel(home, config=config, env={"HERMES_HOME": str(home)}, builtins=True)
        kernels.append(kernel)
        return kernel

    yield build
    for kernel in kernels:
        kernel.close()
