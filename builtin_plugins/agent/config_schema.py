"""The config.yaml keys the agent reads, validated with the rest of the file (they are listed
in ``config_sections:`` of its plugin.yaml). Imports nothing but pydantic."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class AgentSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    system_prompt: str = ""
    max_turns: int = Field(90, gt=0)  # tool-calling iterations per user message
    parallel_tools: list[str] = Field(default_factory=list)  # more read-only tools to batch
    personalities: dict[str, str] = Field(default_factory=dict)  # /personality NAME -> text


class SecuritySection(BaseModel):
    model_config = ConfigDict(extra="allow")  # the original's other security keys are kept

    # what a turn whose context holds untrusted text may do (docs/security.md)
    tainted_turns: Literal["ask", "allow", "deny"] = "ask"


class DelegationSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    max_iterations: int = Field(50, gt=0)
    max_spawn_depth: int = Field(1, ge=1)
    max_concurrent_children: int = Field(3, ge=1)  # tasks per call, run in parallel
    child_timeout_seconds: float = Field(0, ge=0)  # 0: no limit
    # the subagents' model (empty: the parent's), e.g. a cheaper one
    model: str = ""
    provider: str = ""
    base_url: str = ""
    api_key: str = ""


class CodeExecutionSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    timeout: float = Field(300, gt=0)  # seconds an execute_code script may run


# Context files (AGENTS.md, ...) longer than this are cut, head and tail (default 20,000).
context_file_max_chars = (int | None, Field(None, gt=0))

# The toolsets a turn gets (None: every registered toolset), and per platform (cron, a chat
# platform) the toolsets its sessions get instead.
toolsets = (list[str] | None, None)
platform_toolsets = (dict[str, list[str]], Field(default_factory=dict))
