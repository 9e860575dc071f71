"""Fixtures: real MCP servers (the stdio script and a streamable-HTTP server on 127.0.0.1),
the fake LLM, and a kernel with the builtin plugins configured for them."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
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


@contextmanager
def serving(app: Any, path: str) -> Iterator[str]:
    """``app`` under uvicorn on a free 127.0.0.1 port until the block ends; yields its URL."""
    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           lifespan="on", timeout_graceful_shutdown=2))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the HTTP server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture
def http_mcp() -> Iterator[str]:
    """The test server over streamable HTTP on 127.0.0.1; yields its URL."""
    from mcp_test_server import build

    with serving(build("web-demo").streamable_http_app(host="127.0.0.1"), "/mcp") as url:
        yield url


@pytest.fixture
def sse_mcp() -> Iterator[str]:
    """The test server over the older SSE transport on 127.0.0.1; yields its URL."""
    from mcp_test_server import build

    with serving(build("sse-demo").sse_app(host="127.0.0.1"), "/sse") as url:
        yield url


@pytest.fixture
def mcp_kernel(home: Path, llm: FakeLLMServer) -> Iterator[Any]:
    """``mcp_kernel(servers, **config)``: a booted kernel with the builtins, the fake LLM as
    its model and ``servers`` as mcp_servers; its MCP servers are stopped afterwards."""
    kernels: list[Any] = []

    def build(servers: dict[str, Any], **extra: Any) -> Any:
        config = {"model": {"provider": "custom", "base_url": llm.openai_base_url,
                            "default": "fake-model", "max_retries": 0},
                  "sessions": {"auto_title": False}, "mcp_servers": servers,
                  # these tests are about the servers: a result's taint would hold back the
                  # next call (test_mcp_taint.py tests that)
                  "security": {"tainted_turns": "allow"}, **extra}
        kernel = make_kernel(home, config=config, env={"HERMES_HOME": str(home)}, builtins=True)
        kernels.append(kernel)
        return kernel

    yield build
    for kernel in kernels:
        kernel.close()
