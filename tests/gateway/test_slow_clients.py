"""Slow and idle clients against the platforms' HTTP server (hermes_agent.kits.asgi.AsgiServer):
real sockets on 127.0.0.1, both of uvicorn's HTTP parsers."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import PlainTextResponse, Response  # noqa: E402
from starlette.routing import Route  # noqa: E402

from hermes_agent.kits.asgi import (  # noqa: E402
    AsgiServer, BodyIncomplete, BodyTooLarge, ClientLimits, client_limits, read_body,
)

FAST = ClientLimits(header_timeout=0.5, body_timeout=0.5, body_min_rate=1000, max_connections=50)


def make_app(seen: list[Any]) -> Starlette:
    async def echo(request: Request) -> Response:
        try:
            body = await read_body(request, 100_000)
        except (BodyIncomplete, BodyTooLarge) as exc:
            seen.append(exc)
            return PlainTextResponse(str(exc), status_code=exc.status)
        seen.append(len(body))
        return PlainTextResponse(f"got {len(body)}")

    async def slow(request: Request) -> Response:
        await asyncio.sleep(1.2)  # longer than every timeout above: a turn being answered
        return PlainTextResponse("done")

    return Starlette(routes=[Route("/echo", echo, methods=["POST"]), Route("/slow", slow)])


@pytest.fixture(params=["auto", "h11"])
def http(request: pytest.FixtureRequest) -> str:
    return request.param


async def serving(http: str, limits: ClientLimits, seen: list[Any]) -> AsgiServer:
    server = AsgiServer(make_app(seen), "127.0.0.1", 0, limits=limits, http=http)
    assert await server.start()
    return server


async def read_until_closed(reader: asyncio.StreamReader, limit: float = 5.0) -> bytes:
    return await asyncio.wait_for(reader.read(), limit)


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_the_auto_parser_is_httptools_when_installed() -> None:
    pytest.importorskip("httptools")
    from hermes_agent.kits.asgi import guarded_protocol

    assert guarded_protocol("auto", FAST, "t").__name__ == "GuardedHttpToolsProtocol"
    assert guarded_protocol("h11", FAST, "t").__name__ == "GuardedH11Protocol"


def test_an_idle_connection_is_answered_408_and_closed(http: str) -> None:
    async def scenario() -> tuple[bytes, float]:
        server = await serving(http, FAST, [])
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            started = time.monotonic()
            answer = await read_until_closed(reader)
            writer.close()
            return answer, time.monotonic() - started
        finally:
            await server.stop()

    answer, waited = run(scenario())
    assert status_of(answer) == 408
    assert 0.4 <= waited < 4


def test_headers_trickled_a_line_at_a_time_are_cut_off(http: str) -> None:
    """Each line comes well within the timeout, but the headers as a whole do not."""
    async def scenario() -> tuple[bytes, int]:
        server = await serving(http, FAST, [])
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(b"GET /slow HTTP/1.1\r\nHost: x\r\n")
            sent = 0
            for _ in range(20):  # 4 s of trickling if nothing stops it
                await asyncio.sleep(0.2)
                if reader.at_eof() or writer.is_closing():
                    break
                try:
                    writer.write(b"X-Drip: 1\r\n")
                    await writer.drain()
                except ConnectionError:
                    break
                sent += 1
            try:  # a line written after the server closed may reset the connection,
                answer = await read_until_closed(reader)  # and lose its 408
            except ConnectionError:
                answer = b""
            writer.close()
            return answer, sent
        finally:
            await server.stop()

    answer, sent = run(scenario())
    assert sent < 10  # cut after about 0.5 s (2 lines), not after the 20
    assert answer == b"" or status_of(answer) == 408


def test_a_body_sent_too_slowly_is_cut_off_and_the_app_told(http: str) -> None:
    async def scenario() -> tuple[bytes, list[Any]]:
        seen: list[Any] = []
        server = await serving(http, FAST, seen)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\nab")
            answer = await read_until_closed(reader)
            writer.close()
            for _ in range(50):  # the app's task ends just after the connection
                if seen:
                    break
                await asyncio.sleep(0.02)
            return answer, seen
        finally:
            await server.stop()

    answer, seen = run(scenario())
    assert status_of(answer) == 408
    assert len(seen) == 1 and isinstance(seen[0], BodyIncomplete)


def test_a_large_body_uploaded_at_the_minimum_rate_is_received_whole(http: str) -> None:
    """The body's deadline grows by a second per ``body_min_rate`` bytes received: 3,000
    bytes over 1.2 s (beyond the 0.5 s timeout) at about 2,500 bytes a second pass."""
    async def scenario() -> tuple[bytes, list[Any]]:
        seen: list[Any] = []
        server = await serving(http, FAST, seen)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3000\r\n"
                         b"Connection: close\r\n\r\n")
            for _ in range(3):
                await asyncio.sleep(0.4)
                writer.write(b"x" * 1000)
                await writer.drain()
            answer = await read_until_closed(reader)
            writer.close()
            return answer, seen
        finally:
            await server.stop()

    answer, seen = run(scenario())
    assert status_of(answer) == 200, answer
    assert answer.endswith(b"got 3000") and seen == [3000]


def test_a_request_being_answered_is_not_cut_and_keep_alive_still_works(http: str) -> None:
    """The header timeout counts only while the server waits for a request: an answer that
    takes longer than every limit arrives, and the next request on the connection too."""
    async def scenario() -> list[bytes]:
        server = await serving(http, FAST, [])
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            answers = []
            for path in (b"/slow", b"/slow"):
                writer.write(b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n")
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                answers.append(head + await reader.readexactly(length))
                await asyncio.sleep(0.2)  # well within the header timeout
            writer.close()
            return answers
        finally:
            await server.stop()

    answers = run(scenario())
    assert [status_of(a) for a in answers] == [200, 200]
    assert all(a.endswith(b"done") for a in answers)


def test_connections_past_the_limit_are_answered_503_until_one_closes(http: str) -> None:
    limits = ClientLimits(header_timeout=10, body_timeout=10, max_connections=3)

    async def scenario() -> tuple[bytes, int]:
        server = await serving(http, limits, [])
        try:
            held = [await asyncio.open_connection("127.0.0.1", server.port) for _ in range(3)]
            await asyncio.sleep(0.1)
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            refused = await read_until_closed(reader)
            writer.close()
            held[0][1].close()
            await asyncio.sleep(0.2)  # the server sees it close
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
                         b"Connection: close\r\n\r\nhi")
            served = status_of(await read_until_closed(reader))
            writer.close()
            for _, other in held[1:]:
                other.close()
            return refused, served
        finally:
            await server.stop()

    refused, served = run(scenario())
    assert status_of(refused) == 503 and b"Retry-After: 1" in refused
    assert served == 200


def test_client_limits_from_a_platform_section() -> None:
    limits = client_limits({"header_timeout": 5, "extra": {"max_connections": "64"}},
                           "platforms.webhook")
    assert limits == ClientLimits(header_timeout=5.0, max_connections=64)
    assert client_limits({}, "platforms.webhook") == ClientLimits()
    with pytest.raises(ValueError, match=r"platforms\.webhook\.max_connections must be a "
                                         r"positive whole number, not 'lots'"):
        client_limits({"max_connections": "lots"}, "platforms.webhook")
    with pytest.raises(ValueError, match=r"platforms\.api_server\.body_timeout"):
        client_limits({"body_timeout": 0}, "platforms.api_server")


def test_platform_settings_refuse_bad_limits_and_carry_good_ones() -> None:
    import importlib

    def settings_of(folder: str) -> Any:  # "api-server" is no identifier: import it by name
        return importlib.import_module(f"hermes_agent.plugins.platforms.{folder}.settings")

    api, hook, telegram = (settings_of(f) for f in ("api-server", "webhook", "telegram"))
    env = {"API_SERVER_KEY": "k" * 32}
    assert api.load({"max_connections": 1000}, env).limits.max_connections == 1000
    with pytest.raises(api.SettingsError, match="platforms.api_server.max_connections"):
        api.load({"max_connections": -1}, env)
    config = {"reply_url": "http://127.0.0.1:9/replies", "header_timeout": 3}
    assert hook.load(config, {"WEBHOOK_SECRET": "s" * 32}).limits.header_timeout == 3.0
    with pytest.raises(telegram.SettingsError, match="platforms.telegram.body_timeout"):
        telegram.load({"body_timeout": "slow"}, {"TELEGRAM_BOT_TOKEN": "1:abc"})
