"""One MCP server's settings as the plugin uses them, read from ``mcp_servers`` (``${VAR}``
values are already expanded by the config loader, the environment over $HERMES_HOME/.env)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlparse

from pydantic import Field, ValidationError

from .config_schema import BOUNDS, McpBounds, McpServerSection

INSTALL_HINT = ("the MCP client library is not installed: "
                "pip install 'hermes-agent-runtime[mcp]' (or pip install 'mcp>=2.3,<3')")
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


class ServerSettings(McpServerSection):
    """One ``mcp_servers`` entry (the validated section: its fields and defaults are written
    once, there) with its name, and what the plugin derives from it."""

    name: str = ""
    limits: McpBounds = Field(default_factory=McpBounds)  # its own bounds over the `mcp:` ones

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

    @property
    def resources(self) -> bool:
        return self.tools.resources

    @property
    def prompts(self) -> bool:
        return self.tools.prompts

    def wants(self, tool: str) -> bool:
        """The include/exclude filters (by the server's own tool name)."""
        if self.tools.include is not None and tool not in self.tools.include:
            return False
        return tool not in self.tools.exclude


def server_settings(config: Any) -> list[ServerSettings]:
    """Every server under ``mcp_servers`` (disabled ones too), in the file's order. The config
    loader has validated each entry with :class:`.config_schema.McpServerSection` (types
    checked, defaults filled); an entry that did not pass is read with the same model here."""
    servers = config.get("mcp_servers") or {}
    if not isinstance(servers, dict):
        return []
    defaults = section_bounds(config)
    found = []
    for name, raw in servers.items():
        settings = ServerSettings.model_validate({**dict(raw or {}), "name": str(name)})
        own = {key: getattr(settings, key) for key in BOUNDS if getattr(settings, key) is not None}
        settings.limits = defaults.model_copy(update=own)
        found.append(settings)
    return found


def section_bounds(config: Any) -> McpBounds:
    """The ``mcp:`` section (validated by the config loader; the defaults when it is not
    a mapping or did not pass)."""
    raw = config.get("mcp")
    if hasattr(raw, "model_dump"):
        raw = raw.model_dump()
    try:
        return McpBounds.model_validate(dict(raw) if isinstance(raw, dict) else {})
    except ValidationError:
        return McpBounds()
