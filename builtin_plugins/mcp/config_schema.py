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


MCP_SERVERS = (dict[str, McpServerSection], {})
