"""The MCP servers of one kernel: their tools registered in ``kernel.tools`` as
``mcp__<server>__<tool>`` (toolset ``mcp-<server>``) before the first turn, re-listed after a
``tools/list_changed`` notification and restarted after a crash (with backoff), always
between turns (:meth:`McpManager.refresh`, from the ``pre_llm_call`` hook).

A server whose listing is in the tool cache (:mod:`.cache`) is not started then: its cached
tools are offered (state ``cached``) and it starts on the first call of one of them
(:meth:`McpManager.connect`), so a turn that uses none pays nothing for it. Without a cached
listing (the first time, or after its entry in config.yaml changed) it starts before the turn."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent import ToolSpec, write_atomic
from hermes_agent.api import tool_error
from hermes_agent.kits.fence import new_nonce

from . import calls
from .cache import ToolCache
from .connection import ServerConnection, attr
from .results import described, short_descriptions
from .runtime import Runtime
from .settings import INSTALL_HINT, ServerSettings, server_settings, tool_name, toolset_name

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.mcp")
PLUGIN = "mcp"
PROGRESS_AFTER = 1.0  # seconds a start may take before the user is told what hermes waits for


@contextmanager
def _progress(conns: list[ServerConnection]) -> Iterator[None]:
    """Say which servers hermes waits for once starting them takes over a second (a warning:
    the chat shows it on the terminal, the gateway and cron in their logs)."""
    if not conns:
        yield
        return
    names = ", ".join(repr(c.settings.name) for c in conns)
    timer = threading.Timer(PROGRESS_AFTER, log.warning,
                            (f"starting MCP server{'s' if len(conns) > 1 else ''} {names}…",))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def sdk_installed() -> bool:
    return importlib.util.find_spec("mcp") is not None


class McpManager:
    def __init__(self, kernel: Kernel, data_dir: Path | None = None,
                 settings: list[ServerSettings] | None = None, lazy: bool = True):
        self.kernel = kernel
        self.settings = server_settings(kernel.config) if settings is None else settings
        self.data_dir = data_dir or Path(kernel.home) / "plugin-data" / PLUGIN
        self.cache = ToolCache(self.data_dir / "tools-cache.json")
        self.lazy = lazy  # servers with a cached listing start on their first call
        log_dir = Path(kernel.home) / "logs"
        self.connections = {s.name: ServerConnection(s, log_dir)
                            for s in self.settings if s.enabled and not s.problem}
        self.registered: dict[str, dict[str, dict[str, Any]]] = {}  # server -> name -> schema
        self.clashes: dict[str, list[str]] = {}
        self.warnings: dict[str, list[str]] = {}  # server -> what was dropped (max_tools)
        self.nonce = new_nonce()  # fences the servers' descriptions while this manager lives
        self._runtime: Runtime | None = None
        self._lock = threading.Lock()
        self._warned: set[str] = set()

    @property
    def runtime(self) -> Runtime:
        if self._runtime is None or not self._runtime.alive:
            self._runtime = Runtime()
        return self._runtime

    # --- between turns --------------------------------------------------------------------
    def refresh(self) -> None:
        """Start servers not started yet, restart failed ones whose backoff has passed,
        re-list those that said their tools changed; update the registered tools."""
        if not self.connections:
            return
        if not sdk_installed():
            if "sdk" not in self._warned:
                self._warned.add("sdk")
                log.warning("mcp_servers are configured but %s", INSTALL_HINT)
            for conn in self.connections.values():
                conn.state, conn.error = "failed", INSTALL_HINT
            return
        with self._lock:
            cached = [c for c in self.connections.values() if c.state == "idle" and self.lazy
                      and self._from_cache(c)]
            for conn in self.connections.values():
                conn.check_alive()
            now = time.monotonic()
            start = [c for c in self.connections.values()
                     if c.state == "idle" or (c.state == "failed" and now >= c.retry_at)]
            relist = [c for c in self.connections.values()
                      if c.state == "ready" and c.tools_changed]
            if start or relist:
                timeout = max((c.settings.connect_timeout for c in start + relist), default=30.0)
                with _progress(start):
                    self._run_all([c.start() for c in start] + [self._relist(c) for c in relist],
                                  timeout)
                for conn in start + relist:
                    if conn.state == "ready":
                        self.cache.put(conn.settings, conn.tools, conn.has)
                        self._register(conn)
            if cached or start or relist:
                self._save_status()

    def _from_cache(self, conn: ServerConnection) -> bool:
        cached = self.cache.get(conn.settings)
        if cached is None:
            return False
        conn.tools, conn.has = cached
        conn.state = "cached"
        self._register(conn)
        return True

    def connect(self, conn: ServerConnection, interrupt: Any = None) -> None:
        """Start a server offered from the cache (its first call, within the turn). When
        its listing changed, the cache is updated and the tools are registered again before
        the next turn; on failure the state is ``failed`` with the reason."""
        with self._lock:
            if conn.state != "cached":
                return  # another call started it meanwhile
            try:
                with _progress([conn]):
                    self.runtime.run(conn.start(), conn.settings.connect_timeout + 5.0, interrupt)
            except InterruptedError:
                conn.state = "cached"  # stays offered; the next call starts it
                raise
            except Exception as exc:  # the reason is on the connection
                log.debug("MCP server %r: lazy start failed: %s", conn.settings.name, exc)
                if conn.state != "failed":
                    conn.lost(str(exc) or type(exc).__name__)
            else:
                conn.tools_changed = self.cache.put(conn.settings, conn.tools, conn.has)
            self._save_status()

    async def _relist(self, conn: ServerConnection) -> None:
        try:
            await asyncio.wait_for(conn.list_tools(), conn.settings.timeout)
            await asyncio.wait_for(conn.list_extras(), conn.settings.timeout)
        except BaseException as exc:
            conn.lost(f"listing its tools failed ({type(exc).__name__}: {exc})")

    def _run_all(self, coros: list[Any], timeout: float) -> None:
        async def together() -> None:
            await asyncio.gather(*coros, return_exceptions=True)
        try:
            self.runtime.run(together(), timeout + 10.0)
        except Exception as exc:  # the errors are on each connection already
            log.warning("MCP servers: starting took too long (%s)", exc)

    def _register(self, conn: ServerConnection) -> None:
        server, settings = conn.settings.name, conn.settings
        toolset = toolset_name(server)
        wanted: dict[str, tuple[dict[str, Any], Any]] = {}
        clashes: list[str] = []
        chosen = [tool for tool in conn.tools if settings.wants(tool.name)]
        most = settings.limits.max_tools
        offers = max(len(chosen), conn.listed if settings.tools.include is None else 0)
        warnings = [] if len(chosen) <= most else [
            f"it offers {'over ' if conn.listing_cut else ''}{offers:,} tools; only the first "
            f"{most:,} are offered (mcp_servers.{server}.max_tools or mcp.max_tools raises the "
            "bound; tools.include picks which)"]
        for tool in chosen[:most]:
            name = tool_name(server, tool.name)
            if name in wanted:
                clashes.append(f"{name}: tools {wanted[name][0]['x-mcp-tool']!r} and "
                               f"{tool.name!r} of this server map to the same name")
                continue
            schema = {"name": name, "description": described(
                          tool.description, server, f"tool {tool.name}", self.nonce,
                          settings.limits),
                      "parameters": short_descriptions(
                          attr(tool, "input_schema", "inputSchema")
                          or {"type": "object", "properties": {}},
                          settings.limits.max_description_chars), "x-mcp-tool": tool.name}
            wanted[name] = (schema, calls.tool_handler(self, server, tool.name))
        for name, (schema, handler) in calls.extra_tools(self, conn).items():
            if name in wanted:  # the server's own tool keeps its name
                clashes.append(f"{name}: a tool of this server has the name of the resource/"
                               "prompt helper; the helper is not offered")
                continue
            wanted[name] = (schema, handler)
        tools = self.kernel.tools
        for name in set(self.registered.get(server, {})) - set(wanted):
            tools.discard(name)
        mine: dict[str, dict[str, Any]] = {}
        for name, (schema, handler) in wanted.items():
            owner = tools.tools.get(name)
            other = next((s for s, names in self.registered.items()
                          if s != server and name in names), None)
            if other is not None:  # two servers whose names clean up alike (de.mo, de_mo)
                clashes.append(f"{name}: already offered by MCP server {other!r}, whose name "
                               "maps to the same prefix; rename one of the servers")
                continue
            if owner is not None and (owner.plugin != PLUGIN or owner.toolset != toolset):
                clashes.append(f"{name}: already registered by plugin '{owner.plugin}' "
                               f"(toolset {owner.toolset}); this server's tool is not offered")
                continue
            schema = {k: v for k, v in schema.items() if k != "x-mcp-tool"}
            mine[name] = schema
            if owner is None or owner.schema != schema:
                if settings.parallel_safe:
                    from hermes_agent.api import parallel_safe

                    handler = parallel_safe(handler)
                tools.add(ToolSpec(name, toolset, schema, handler, PLUGIN,
                                   description=schema["description"], emoji="🔌"))
        for clash in clashes:
            if clash not in self.clashes.get(server, []):
                log.warning("MCP server %r: tool name clash: %s", server, clash)
        for warning in warnings:
            if warning not in self.warnings.get(server, []):
                log.warning("MCP server %r: %s", server, warning)
        self.registered[server], self.clashes[server] = mine, clashes
        self.warnings[server] = warnings
        self._join_platform_toolsets(toolset)

    def _join_platform_toolsets(self, toolset: str) -> None:
        """Platform toolsets (hermes-cli, ...) include every MCP server's toolset."""
        for spec in list(self.kernel.tools.toolsets.values()):
            if spec.kind == "platform" and toolset not in spec.includes:
                self.kernel.tools.add_toolset(replace(spec, includes=(*spec.includes, toolset)))

    # --- status and shutdown ---------------------------------------------------------------
    def status(self) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        for settings in self.settings:
            conn = self.connections.get(settings.name)
            found[settings.name] = {
                "transport": settings.kind, "enabled": settings.enabled,
                "state": conn.state if conn else "disabled" if not settings.enabled else "invalid",
                "error": conn.error if conn else settings.problem,
                "tools": (sorted(self.registered[settings.name])
                          if settings.name in self.registered else None),
                "clashes": self.clashes.get(settings.name, []),
                "warnings": self.warnings.get(settings.name, []),
                "at": time.time()}
        return found

    def _save_status(self) -> None:
        try:
            path = self.data_dir / "status.json"
            try:  # other servers' entries (`hermes mcp test` starts only one) stay
                saved = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                saved = {}
            saved = saved if isinstance(saved, dict) else {}
            write_atomic(path, json.dumps({**saved, **self.status()}, indent=1))
        except OSError as exc:
            log.debug("MCP: could not save status: %s", exc)

    def close(self) -> None:
        if self._runtime is None or not self._runtime.alive:
            return
        async def stop_all() -> None:
            await asyncio.gather(*(c.stop() for c in self.connections.values()),
                                 return_exceptions=True)
        try:
            self._runtime.run(stop_all(), 15.0)
        except Exception as exc:
            log.warning("MCP servers did not all stop cleanly: %s", exc)
        self._runtime.stop()
        for server in list(self.registered):
            for name in self.registered.pop(server):
                self.kernel.tools.discard(name)

    def scan(self, text: str) -> list[str]:
        """The agent plugin's injection scan of a result (none when it is unavailable)."""
        from hermes_agent.api import INJECTION_SCAN

        try:
            scanner = self.kernel.service(INJECTION_SCAN)
        except Exception as exc:  # the agent plugin is off: the result still goes out fenced
            log.debug("MCP: injection_scan unavailable (%s)", exc)
            return []
        return list(scanner.scan(text))

    def unavailable(self, server: str) -> str:
        conn = self.connections.get(server)
        why = conn.error if conn and conn.error else "it is not connected"
        return tool_error(f"MCP server '{server}' is unavailable: {why}. hermes restarts it "
                          f"before the next turn; `hermes mcp test {server}` shows what goes "
                          "wrong.", error_type="mcp_unavailable")
