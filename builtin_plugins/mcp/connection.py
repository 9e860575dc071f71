"""One MCP server: its session, kept open in one task of the runtime's loop, and the calls
made on it. Everything here that touches the SDK runs on that loop; the SDK is imported
when a server is first started."""

from __future__ import annotations

import asyncio
import logging
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from .errlog import StderrLog
from .settings import ServerSettings

log = logging.getLogger("hermes_agent.mcp")
BACKOFF_MAX = 60.0  # seconds between reconnection attempts, at most
LIST_CHANGED = {f"notifications/{kind}/list_changed" for kind in ("tools", "prompts", "resources")}


def describe(exc: BaseException) -> str:
    """One line for an exception, looking inside task-group exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def attr(obj: Any, *names: str, default: Any = None) -> Any:
    """The first attribute present (the SDK spells fields snake_case, older ones camelCase)."""
    for name in names:
        if hasattr(obj, name):
            return getattr(obj, name)
    return default


class ServerConnection:
    """State: ``idle`` (never started), ``cached`` (not started; its tools are offered from
    the tool cache), ``ready``, ``failed`` (start failed or the session broke; ``error`` says
    why and ``retry_at`` when to try again)."""

    def __init__(self, settings: ServerSettings, log_dir: Path):
        self.settings = settings
        self.log_path = log_dir / f"mcp-{settings.name}.log"
        self.state = "idle"
        self.error = ""
        self.failures = 0
        self.retry_at = 0.0
        self.session: Any = None
        self.capabilities: Any = None
        self.tools: list[Any] = []  # the SDK's Tool objects, as last listed
        self.has: set[str] = set()  # "prompts", "resources": what it listed some of
        self.tools_changed = False  # the server sent notifications/tools/list_changed
        self.malformed = ""  # the last message the server sent that was not valid
        self._task: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self._errlog: StderrLog | None = None
        self.listing_cut = False  # the server listed more tools than hermes reads
        self.listed = 0  # how many tools it listed (at least, when listing_cut)

    # --- lifecycle (coroutines run on the runtime's loop) --------------------------------
    async def start(self) -> None:
        """Start the server and list its tools, within ``connect_timeout``; on failure the
        state is ``failed`` with the reason, and the error is raised."""
        await self.stop()
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        self._closing = asyncio.Event()
        self.tools_changed, self.malformed = False, ""
        self._task = loop.create_task(self._serve(ready), name=f"mcp-{self.settings.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.settings.connect_timeout)
            await self.list_tools()
            await self.list_extras()
        except BaseException as exc:
            await self.stop()
            reason = (f"did not start within {self.settings.connect_timeout:g} s "
                      "(mcp_servers.<name>.connect_timeout)"
                      if isinstance(exc, (asyncio.TimeoutError, TimeoutError)) else describe(exc))
            self._failed(f"could not start: {reason}{self._stderr_tail()}")
            raise ConnectionError(self.error) from None
        self.state, self.error, self.failures = "ready", "", 0

    async def _serve(self, ready: asyncio.Future[None]) -> None:
        try:
            from mcp import ClientSession

            async with AsyncExitStack() as stack:
                streams = await stack.enter_async_context(self._transport())
                session = await stack.enter_async_context(ClientSession(
                    streams[0], streams[1], message_handler=self._on_message))
                init = await session.initialize()
                self.session, self.capabilities = session, attr(init, "capabilities")
                if not ready.done():
                    ready.set_result(None)
                assert self._closing is not None
                await self._closing.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception)
                                    else ConnectionError(describe(exc)))
            elif not (self._closing and self._closing.is_set()):
                self.lost(describe(exc))
            if not isinstance(exc, Exception):
                raise
        finally:
            self.session = None

    def _transport(self) -> Any:
        settings = self.settings
        if settings.kind == "stdio":
            from mcp import StdioServerParameters, stdio_client

            if self._errlog is not None:
                self._errlog.close(0)
            self._errlog = StderrLog(self.log_path, settings.limits.max_log_bytes)
            params = StdioServerParameters(command=settings.command, args=settings.args,
                                           env=settings.env or None, cwd=settings.cwd or None)
            return stdio_client(params, errlog=self._errlog.writer)
        if settings.kind == "sse":
            from mcp.client.sse import sse_client

            return sse_client(settings.url, headers=settings.headers or None,
                              timeout=settings.connect_timeout,
                              sse_read_timeout=max(300.0, settings.timeout))
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        client = create_mcp_http_client(headers=settings.headers or None)
        return streamable_http_client(settings.url, http_client=client)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):  # a line that is not a JSON-RPC message
            self.malformed = describe(message)[:300]
            log.warning("MCP server %r sent an invalid message: %s", self.settings.name,
                        self.malformed)
            return
        root = getattr(message, "root", message)
        if getattr(root, "method", "") in LIST_CHANGED:
            self.tools_changed = True  # prompts and resources are offered through tools too

    async def stop(self) -> None:
        task, self._task = self._task, None
        if self._closing is not None:
            self._closing.set()
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(task, 5.0)
            except BaseException:  # it would not close in time: cut it off
                task.cancel()
                try:
                    await asyncio.wait_for(task, 2.0)
                except BaseException as exc:
                    log.debug("MCP server %r: stopping raised %s", self.settings.name,
                              describe(exc))
        self.session = None
        if self._errlog is not None:
            self._errlog.close(0.5)
            self._errlog = None

    # --- failures -------------------------------------------------------------------------
    def _failed(self, reason: str) -> None:
        self.state, self.error = "failed", reason
        self.failures += 1
        # the first restart comes before the next turn; then 1, 2, 4 ... 60 s apart
        wait = 0.0 if self.failures == 1 else min(BACKOFF_MAX, 2.0 ** (self.failures - 2))
        self.retry_at = time.monotonic() + wait
        log.warning("MCP server %r %s", self.settings.name, reason)

    def lost(self, reason: str) -> None:
        """The session broke (the process exited, the connection dropped)."""
        if self.state != "failed":
            self._failed(f"stopped working: {reason}{self._stderr_tail()}")

    def check_alive(self) -> None:
        """Mark the session lost when its connection has closed since the last call (the
        process exited between turns). Reads the SDK dispatcher's ``_closed`` flag where it
        has one; otherwise the next call finds out."""
        dispatcher = getattr(self.session, "_dispatcher", None)
        if self.state == "ready" and getattr(dispatcher, "_closed", False) is True:
            self.lost("the connection closed")

    def _stderr_tail(self) -> str:
        if self.settings.kind != "stdio":
            return ""
        if self._errlog is not None:
            self._errlog.settle()
        lines: list[str] = []
        for path in (self.log_path, self.log_path.with_name(self.log_path.name + ".1")):
            try:
                with open(path, "rb") as logged:
                    start = max(0, logged.seek(0, 2) - 4096)  # the end is enough
                    logged.seek(start)
                    text = logged.read().decode("utf-8", "replace")
                lines = text.splitlines()[1 if start else 0:]
            except OSError:
                continue
            if any(line.strip() for line in lines):
                break
        tail = " | ".join(line.strip() for line in lines[-3:] if line.strip())
        return f" (its stderr ends: {tail[-400:]}; full log: {self.log_path})" if tail else ""

    # --- requests -------------------------------------------------------------------------
    def _session(self) -> Any:
        if self.session is None:
            raise ConnectionError(self.error or "not connected")
        return self.session

    async def list_tools(self) -> list[Any]:
        """The server's tools, page by page, up to ten times ``max_tools`` (a listing without
        end is cut there: ``listing_cut``)."""
        session, tools, cursor = self._session(), [], None
        most = 10 * self.settings.limits.max_tools
        self.listing_cut = False
        while True:
            if cursor:
                from mcp import types

                page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
            else:
                page = await session.list_tools()
            tools.extend(page.tools)
            cursor = attr(page, "next_cursor", "nextCursor")
            if len(tools) > most:
                self.listed, self.listing_cut = len(tools), bool(cursor)
                tools = tools[:most]
                break
            self.listed = len(tools)
            if not cursor:
                break
        self.tools, self.tools_changed = tools, False
        return tools

    async def list_extras(self) -> set[str]:
        """Which of prompts and resources the server has: it must declare the capability
        and list at least one (the SDKs declare both for every server, most have none)."""
        found: set[str] = set()
        for kind, listers in (("prompts", ("list_prompts",)),
                              ("resources", ("list_resources", "list_resource_templates"))):
            if not self.offers(kind):
                continue
            for lister in listers:
                try:
                    listed = await getattr(self._session(), lister)()
                except Exception as exc:  # e.g. "method not found": it has none
                    log.debug("MCP server %r: %s failed: %s", self.settings.name, lister,
                              describe(exc))
                    continue
                fields = (("resource_templates", "resourceTemplates")
                          if lister == "list_resource_templates" else (kind,))
                if attr(listed, *fields):
                    found.add(kind)
                    break
        self.has = found
        return found

    async def call_tool(self, name: str, args: dict[str, Any]) -> Any:
        return await self._session().call_tool(name, args,
                                               read_timeout_seconds=self.settings.timeout)

    async def list_resources(self) -> Any:
        return await self._session().list_resources()

    async def read_resource(self, uri: str) -> Any:
        return await self._session().read_resource(uri)

    async def list_prompts(self) -> Any:
        return await self._session().list_prompts()

    async def get_prompt(self, name: str, args: dict[str, str]) -> Any:
        return await self._session().get_prompt(name, args)

    def offers(self, capability: str) -> bool:
        return getattr(self.capabilities, capability, None) is not None
