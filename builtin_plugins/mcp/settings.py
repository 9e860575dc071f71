"""One MCP server's settings as the plugin uses them, read from ``mcp_servers`` (``${VAR}``
values are already expanded by the config loader, the environment over $HERMES_HOME/.env)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any
from urllib.parse import urlparse

INSTALL_HINT = ("the MCP client library is not installed: pip install 'hermes-agent[mcp]' "
                "(or pip install 'mcp>=2.3,<3')")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME = 64


def safe_name(name: str) -> str:
    """A name part the model APIs accept (letters, digits, ``_`` and ``-``)."""
    return _UNSAFE.sub("_", name) or "_"


def tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``; past the 64 characters model APIs accept, its first 55
    and a hash of the whole name."""
    name = f"mcp__{safe_name(server)}__{safe_name(tool)}"
    if len(name) <= MAX_NAME:
        return name
    import hashlib

    return f"{name[:MAX_NAME - 9]}_{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def toolset_name(server: str) -> str:
    return f"mcp-{safe_name(server)}"


@dataclass
class ServerSettings:
    name: str
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = ""
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    transport: str = ""
    timeout: float = 60.0
    connect_timeout: float = 30.0
    enabled: bool = True
    parallel_safe: bool = False
    include: list[str] | None = None
    exclude: list[str] = field(default_factory=list)
    resources: bool = True
    prompts: bool = True

    @property
    def kind(self) -> str:
        """``stdio``, ``http`` (streamable HTTP) or ``sse``; ``invalid`` without a target."""
        wanted = self.transport.lower().replace("-", "_")
        if wanted == "stdio" or (self.command and not self.url):
            return "stdio" if self.command else "invalid"
        if not self.url:
            return "invalid"
        if wanted == "sse" or (not wanted and urlparse(self.url).path.rstrip("/").endswith("/sse")):
            return "sse"
        return "http"

    @property
    def problem(self) -> str:
        if self.kind == "invalid":
            return (f"mcp_servers.{self.name} needs `command` (a stdio server) or `url` (an HTTP "
                    f"server), e.g. `hermes mcp add {self.name} --command npx --arg -y --arg "
                    "@modelcontextprotocol/server-everything`")
        return ""

    @property
    def target(self) -> str:
        return " ".join([self.command, *self.args]) if self.kind == "stdio" else self.url

    def wants(self, tool: str) -> bool:
        """The include/exclude filters (by the server's own tool name)."""
        if self.include is not None and tool not in self.include:
            return False
        return tool not in self.exclude


_TOOL_KEYS = ("include", "exclude", "resources", "prompts")  # under an entry's ``tools``
_SERVER_KEYS = frozenset(f.name for f in fields(ServerSettings)) - {"name", *_TOOL_KEYS}


def server_settings(config: Any) -> list[ServerSettings]:
    """Every server under ``mcp_servers`` (disabled ones too), in the file's order. The config
    loader has validated each entry with :class:`.config_schema.McpServerSection` (its types
    checked, its defaults filled), so the entries are taken as they are."""
    servers = config.get("mcp_servers") or {}
    found: list[ServerSettings] = []
    for name, raw in servers.items() if isinstance(servers, dict) else ():
        entry = dict(raw or {})
        tools = entry.pop("tools", None) or {}
        known = {k: v for k, v in entry.items() if k in _SERVER_KEYS}
        found.append(ServerSettings(name=str(name), **known,
                                    **{k: tools[k] for k in _TOOL_KEYS if k in tools}))
    return found
