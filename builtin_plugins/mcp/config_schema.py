"""``mcp_servers`` in config.yaml: one entry per server, in the shape Hermes Agent 0.19
reads. Lenient on purpose: a server with neither ``command`` nor ``url`` is reported for
itself (``hermes mcp list``) instead of making the whole file invalid. Imports only pydantic."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ToolFilter(BaseModel):
    model_config = ConfigDict(extra="allow")

    include: list[str] | None = None  # only these tools (server names, before prefixing)
    exclude: list[str] = Field(default_factory=list)  # never these
    resources: bool = True  # offer list_resources / read_resource when the server has them
    prompts: bool = True  # offer list_prompts / get_prompt when the server has them


class McpBounds(BaseModel):
    """How much of a server's text hermes takes (the ``mcp:`` section; each server may set
    its own under ``mcp_servers.<name>``)."""

    model_config = ConfigDict(extra="allow")

    max_result_chars: int = Field(100_000, ge=1000)  # a tool result (the rest is cut)
    max_error_chars: int = Field(4000, ge=200)  # an error message or an isError result
    max_description_chars: int = Field(1024, ge=64)  # a tool's, prompt's or resource's description
    max_tools: int = Field(128, ge=1)  # tools one server may offer; the rest are dropped
    max_log_bytes: int = Field(1_000_000, ge=10_000)  # a stdio server's stderr log, then rotated


BOUNDS = tuple(McpBounds.model_fields)


class McpServerSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    # stdio: a command started with its arguments, environment and working directory
    command: str = ""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str = ""
    # HTTP: streamable HTTP, or SSE when transport says so (or the path ends in /sse)
    url: str = ""
    headers: dict[str, str] = Field(default_factory=dict)
    transport: str = ""  # "", stdio, http, streamable_http, sse
    timeout: float = Field(60.0, gt=0)  # seconds one call may take
    connect_timeout: float = Field(30.0, gt=0)  # seconds to start and initialise
    enabled: bool = True
    parallel_safe: bool = False  # its tools may run side by side with other read-only calls
    tools: ToolFilter = Field(default_factory=ToolFilter)
    # the bounds of McpBounds for this server alone (unset: the `mcp:` section's)
    max_result_chars: int | None = Field(None, ge=1000)
    max_error_chars: int | None = Field(None, ge=200)
    max_description_chars: int | None = Field(None, ge=64)
    max_tools: int | None = Field(None, ge=1)
    max_log_bytes: int | None = Field(None, ge=10_000)


MCP_SERVERS = (dict[str, McpServerSection], {})
