"""The handlers of MCP tools: each submits the request to the runtime's loop and waits at
most the server's ``timeout``; a hung call is cut off there with an error that says so. A
failure concerns that server's tools only. Every handler is marked ``untrusted_output`` with
source ``mcp:<server>``: whatever a server answers is data, fenced by the agent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from hermes_agent.api import ToolCallContext, tool_error, tool_result, with_context
from hermes_agent.api.tools import untrusted_output

from .connection import ServerConnection, attr, describe
from .results import (NOTICE, bounded, call_result, content_text, described, resource_text,
                      wrap_untrusted)
from .runtime import CallTimeout, Runtime
from .settings import tool_name

_TIMEOUT_CODES = (-32001, 408)  # REQUEST_TIMEOUT in the SDK's 2.x and 1.x
_CLOSED_CODES = (-32000,)  # CONNECTION_CLOSED


class Servers(Protocol):
    """What the handlers use of the manager (:class:`.manager.McpManager`, which builds them)."""

    connections: dict[str, ServerConnection]
    nonce: str  # the fence delimiter of descriptions (hermes_agent.kits.fence)

    @property
    def runtime(self) -> Runtime: ...

    def connect(self, conn: ServerConnection, interrupt: Any = None) -> None: ...

    def unavailable(self, server: str) -> str: ...

    def scan(self, text: str) -> list[str]: ...


def request(manager: Servers, server: str, what: str, make: Callable[[ServerConnection], Any],
            ctx: ToolCallContext | None, answer: Callable[[Any], str]) -> str:
    """Run ``make(conn)`` (a coroutine) on the server within its timeout; ``answer`` turns
    the result into the handler's text."""
    conn = manager.connections.get(server)
    if conn is not None and conn.state == "cached":  # offered from the cache: start it now
        try:
            manager.connect(conn, ctx.interrupt_event if ctx is not None else None)
        except InterruptedError:
            return tool_error(f"starting MCP server '{server}' for {what} was interrupted by "
                              "the user", error_type="interrupted")
    if conn is None or conn.session is None or conn.state != "ready":
        return manager.unavailable(server)
    timeout = conn.settings.timeout
    try:
        result = manager.runtime.run(make(conn), timeout + 1.0,
                                     ctx.interrupt_event if ctx is not None else None)
    except InterruptedError:
        return tool_error(f"{what} on MCP server '{server}' was interrupted by the user",
                          error_type="interrupted")
    except CallTimeout:
        return _timed_out(conn, what)
    except Exception as exc:
        code = getattr(exc, "code", None)
        if code in _TIMEOUT_CODES:
            return _timed_out(conn, what)
        if code is not None and code not in _CLOSED_CODES:  # the server refused the request
            why = bounded(describe(exc), conn.settings.limits.max_error_chars, "the error",
                          f"mcp_servers.{server}.max_error_chars")
            return tool_error(f"MCP server '{server}' refused {what}: {why}",
                              error_type="mcp_error")
        conn.lost(describe(exc))
        return manager.unavailable(server)
    return answer(result)


def _timed_out(conn: ServerConnection, what: str) -> str:
    name = conn.settings.name
    hint = (f" It also sent an invalid message ({conn.malformed}): it may be writing logs to "
            "stdout instead of stderr.") if conn.malformed else ""
    return tool_error(f"MCP server '{name}' did not answer {what} within "
                      f"{conn.settings.timeout:g} s, so the call was cancelled (raise "
                      f"mcp_servers.{name}.timeout for slow tools).{hint}",
                      error_type="mcp_timeout")


def tool_handler(manager: Servers, server: str, tool: str) -> Callable[..., str]:
    source = f"mcp:{server}/{tool}"

    @untrusted_output(f"mcp:{server}")
    @with_context
    def handler(args: dict[str, Any], ctx: ToolCallContext) -> str:
        return request(manager, server, f"the call of tool '{tool}'",
                       lambda conn: conn.call_tool(tool, args), ctx,
                       lambda result: call_result(result, source, _limits(manager, server),
                                                  server, manager.scan))
    return handler


Offered = dict[str, tuple[dict[str, Any], Any]]  # tool name -> (schema, handler)


def _limits(manager: Servers, server: str) -> Any:
    conn = manager.connections.get(server)
    return conn.settings.limits if conn is not None else None


def _long(manager: Servers, server: str, text: str) -> str:
    """A resource's or a prompt's text cut to the server's ``max_result_chars``."""
    limits = _limits(manager, server)
    if limits is None:
        return text
    return bounded(text, limits.max_result_chars, "the text",
                   f"mcp_servers.{server}.max_result_chars")


def extra_tools(manager: Servers, conn: ServerConnection) -> Offered:
    """``list_resources`` / ``read_resource`` and ``list_prompts`` / ``get_prompt`` for a
    server that has some (``conn.has``; unless ``tools.resources`` / ``tools.prompts`` is
    false)."""
    server, found = conn.settings.name, {}
    if conn.settings.resources and "resources" in conn.has:
        found[tool_name(server, "list_resources")] = (
            _schema(server, "list_resources", f"List the resources MCP server '{server}' "
                    "offers (URI, name, description, type).", {}),
            _simple(manager, server, "list_resources", lambda c, a: c.list_resources(),
                    lambda r: _resource_rows(manager, server, r)))
        found[tool_name(server, "read_resource")] = (
            _schema(server, "read_resource", f"Read one resource of MCP server '{server}' by "
                    "its URI.", {"uri": {"type": "string", "description": "The resource URI"}},
                    ["uri"]),
            _simple(manager, server, "read_resource", lambda c, a: c.read_resource(str(a["uri"])),
                    lambda r: tool_result(result=wrap_untrusted(_long(manager, server, "\n".join(
                        resource_text(item) for item in r.contents)), f"mcp:{server}/resource"),
                        notice=NOTICE), required="uri"))
    if conn.settings.prompts and "prompts" in conn.has:
        found[tool_name(server, "list_prompts")] = (
            _schema(server, "list_prompts", f"List the prompt templates MCP server '{server}' "
                    "offers, with their arguments.", {}),
            _simple(manager, server, "list_prompts", lambda c, a: c.list_prompts(),
                    lambda r: _prompt_rows(manager, server, r)))
        found[tool_name(server, "get_prompt")] = (
            _schema(server, "get_prompt", f"Fill in one prompt template of MCP server "
                    f"'{server}'.", {"name": {"type": "string"},
                                     "arguments": {"type": "object",
                                                   "additionalProperties": {"type": "string"}}},
                    ["name"]),
            _simple(manager, server, "get_prompt",
                    lambda c, a: c.get_prompt(str(a["name"]), {str(k): str(v) for k, v in
                                                               (a.get("arguments") or {}).items()}),
                    lambda r: tool_result(result=wrap_untrusted(_long(manager, server, "\n\n".join(
                        f"[{m.role}] {content_text(m.content)}" for m in r.messages)),
                        f"mcp:{server}/prompt"), notice=NOTICE), required="name"))
    return found


def _schema(server: str, what: str, description: str, properties: dict[str, Any],
            required: list[str] | None = None) -> dict[str, Any]:
    return {"name": tool_name(server, what), "description": description,
            "parameters": {"type": "object", "properties": properties,
                           **({"required": required} if required else {})}}


def _simple(manager: Servers, server: str, what: str,
            make: Callable[[ServerConnection, dict[str, Any]], Any],
            answer: Callable[[Any], str], required: str = "") -> Callable[..., str]:
    @untrusted_output(f"mcp:{server}")
    @with_context
    def handler(args: dict[str, Any], ctx: ToolCallContext) -> str:
        if required and not args.get(required):
            return tool_error(f"{what} needs '{required}'")
        return request(manager, server, what, lambda conn: make(conn, args), ctx, answer)
    return handler


def _resource_rows(manager: Servers, server: str, result: Any) -> str:
    limits = _limits(manager, server)
    rows = [{"uri": str(r.uri), "name": r.name,
             "description": described(r.description, server, f"resource {r.uri}", manager.nonce,
                                      limits),
             "mime_type": attr(r, "mime_type", "mimeType") or ""}
            for r in result.resources[:_most(limits)]]
    return tool_result(resources=rows, notice=NOTICE, **_left_out(result.resources, limits))


def _prompt_rows(manager: Servers, server: str, result: Any) -> str:
    limits = _limits(manager, server)
    rows = [{"name": p.name,
             "description": described(p.description, server, f"prompt {p.name}", manager.nonce,
                                      limits),
             "arguments": [{"name": a.name, "required": bool(a.required)}
                           for a in p.arguments or []]} for p in result.prompts[:_most(limits)]]
    return tool_result(prompts=rows, notice=NOTICE, **_left_out(result.prompts, limits))


def _most(limits: Any) -> int:
    """A listing shows as many prompts or resources as a server may offer tools."""
    return limits.max_tools if limits is not None else 128


def _left_out(items: list[Any], limits: Any) -> dict[str, str]:
    extra = len(items) - _most(limits)
    return {"cut": f"{extra:,} more not shown (max_tools)"} if extra > 0 else {}
