"""Real image bytes for the vision tests (PNG made with zlib) and the kernels they use: the
agent's builtins with a real model-provider plugin per API mode, pointed at the fake LLM."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path
from typing import Any

from hermes_agent.testing import make_kernel


def png(width: int = 3, height: int = 2, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A valid RGB PNG of one colour."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    row = b"\x00" + bytes(rgb) * width
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2,
                                                              0, 0, 0))
            + chunk(b"IDAT", zlib.compress(row * height)) + chunk(b"IEND", b""))


def data_url(data: bytes, media: str = "image/png") -> str:
    return f"data:{media};base64,{base64.b64encode(data).decode()}"


MODES = ("chat_completions", "anthropic_messages", "codex_responses")


def mode_settings(mode: str, llm: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """``(model section, env)`` of a real provider plugin speaking ``mode`` to ``llm``: the
    custom endpoint (told its model sees images), anthropic, openai-codex."""
    if mode == "chat_completions":
        return {"provider": "custom", "base_url": llm.openai_base_url, "default": "m",
                "max_retries": 0, "supports_vision": True}, {}
    if mode == "anthropic_messages":
        return ({"provider": "anthropic", "default": "claude-haiku-4-5", "max_retries": 0},
                {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": llm.url})
    return ({"provider": "openai-codex", "default": "gpt-5", "max_retries": 0},
            {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": llm.openai_base_url})


def agent_kernel(home: Path, model: dict[str, Any], env: dict[str, str] | None = None,
                 **config: Any) -> Any:
    return make_kernel(home, config={"model": model, "sessions": {"auto_title": False},
                                     **config},
                       env={"HERMES_HOME": str(home), **(env or {})}, builtins=True)


def sent_images(request: Any) -> list[Any]:
    """The image blocks of the last user message of a recorded request, in its wire format."""
    body = request.body
    if request.style == "responses":
        users = [i for i in body["input"] if i.get("role") == "user"]
        return [p for p in users[-1]["content"] if p.get("type") == "input_image"]
    users = [m for m in body["messages"] if m["role"] == "user"]
    content = users[-1]["content"]
    if request.style == "anthropic":
        return [b for b in content if b.get("type") == "image"]
    return [p for p in content if isinstance(p, dict) and p.get("type") == "image_url"]


def image_bytes(block: Any, style: str) -> bytes:
    """The bytes an image block carries, whatever the wire format."""
    if style == "anthropic":
        assert block["source"]["type"] == "base64", block
        return base64.b64decode(block["source"]["data"])
    url = block["image_url"] if style == "responses" else block["image_url"]["url"]
    head, _, payload = url.partition(",")
    assert head.startswith("data:image/") and head.endswith(";base64"), head
    return base64.b64decode(payload)


class ImageSite:
    """A loopback web server with one image at ``/picture.png`` (``hits`` counts its GETs)."""

    def __init__(self, body: bytes):
        import threading
        from http.server import BaseHTTPRequestHandler

        from hermes_agent.testing.local_server import LocalHTTPServer

        site = self
        self.body, self.hits = body, 0

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                site.hits += 1
                found = self.path == "/picture.png"
                payload = site.body if found else b"not found"
                self.send_response(200 if found else 404)
                self.send_header("Content-Type", "image/png" if found else "text/plain")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = LocalHTTPServer(Handler, None)
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/picture.png"

    def __enter__(self) -> "ImageSite":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def serving(kernel: Any, platform: str) -> Any:
    """A started gateway whose one enabled platform is ``platform`` (async context manager
    yielding ``(runner, adapter)``), as the gateway tests start one."""
    import contextlib

    @contextlib.asynccontextmanager
    async def run() -> Any:
        from hermes_agent.builtin_plugins.gateway.platforms import build_adapters
        from hermes_agent.builtin_plugins.gateway.runner import GatewayRunner

        adapters, entries, problems = build_adapters(kernel)
        assert not problems, problems
        runner = GatewayRunner(kernel, adapters, entries=entries)
        assert await runner.start() == [platform]
        try:
            yield runner, adapters[platform]
        finally:
            await runner.stop(30.0)

    return run()
