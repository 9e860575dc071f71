"""The config.yaml keys the core tools read, validated with the rest of the file (they are
listed in ``config_sections:`` of its plugin.yaml). Imports nothing but pydantic."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
_SSH_NAME = re.compile(r"^[A-Za-z0-9_.:%\[\]@-]+\Z")


class ApprovalsSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    mode: Literal["manual", "smart", "off"] = "manual"  # smart asks a human like manual
    timeout: float = Field(60, gt=0)
    # scheduled jobs (nobody to ask): deny dangerous commands, or approve them (hard floor kept)
    cron_mode: Literal["deny", "approve"] = "deny"

    @field_validator("mode", mode="before")
    @classmethod
    def _yaml_bool(cls, value: Any) -> Any:  # YAML reads a bare `off` as false
        return {False: "off", True: "manual"}.get(value, value) if isinstance(value, bool) else value

    @field_validator("cron_mode", mode="before")
    @classmethod
    def _cron_words(cls, value: Any) -> Any:  # the original's synonyms; a YAML bool is unclear
        if isinstance(value, bool):
            raise ValueError("write deny or approve (a bare yes/no/on/off reads as true/false)")
        return {"allow": "approve", "off": "approve"}.get(str(value).strip().lower(), value)


class TerminalSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    timeout: float = Field(180, gt=0)
    # Variables that commands the agent runs may see although they came from .env or hold a
    # provider key (they are withheld otherwise).
    env_passthrough: list[str] = Field(default_factory=list)
    # Folders commands may write besides the workspace (``~/x``, absolute, or relative to it).
    writable_paths: list[str] = Field(default_factory=list)

    @field_validator("writable_paths", mode="before")
    @classmethod
    def _one_path(cls, value: Any) -> Any:  # `writable_paths: ~/.cache/pip` means a list of one
        return [value] if isinstance(value, str) else value

    @field_validator("env_passthrough", mode="before")
    @classmethod
    def _one_name(cls, value: Any) -> Any:  # `env_passthrough: GITHUB_TOKEN` means a list of one
        return [value] if isinstance(value, str) else value

    @field_validator("env_passthrough")
    @classmethod
    def _valid_names(cls, value: list[str]) -> list[str]:
        bad = [name for name in value if not _ENV_NAME.match(name)]
        if bad:
            raise ValueError(f"not environment variable names: {', '.join(map(repr, bad))} "
                             "(write names such as GITHUB_TOKEN, without $)")
        return value

    # Size of one part of a background process's log on disk (two parts are kept).
    background_max_log_bytes: int = Field(10 * 1024 * 1024, ge=4096)

    # --- where commands run (core_tools/backends, docs/terminal-backends.md). A key left unset
    # falls back to the original's variable: TERMINAL_ENV, TERMINAL_SSH_HOST/_USER/_PORT/_KEY.
    backend: str | None = None  # local (default) | ssh
    ssh_host: str | None = None
    ssh_user: str | None = None
    ssh_port: int | None = Field(None, gt=0, lt=65536)
    ssh_key: str | None = None  # private key file; unset: ssh's own defaults and agent
    ssh_options: list[str] = Field(default_factory=list)  # more `ssh -o` options, Key=value

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, value: str | None) -> str | None:
        if value is None or value.strip().lower() in ("local", "ssh"):
            return value and value.strip().lower()
        raise ValueError(f"backend {value!r} is not available in this version: write local "
                         "or ssh (container backends such as docker are not shipped)")

    @field_validator("ssh_host", "ssh_user")
    @classmethod
    def _target_name(cls, value: str | None) -> str | None:
        if value is not None and (value.startswith("-") or not _SSH_NAME.match(value)):
            raise ValueError(f"{value!r} is not a host or user name")
        return value

    @field_validator("ssh_options")
    @classmethod
    def _option_words(cls, value: list[str]) -> list[str]:
        for option in value:
            key = option.split("=", 1)[0].strip().lower()
            if option.startswith("-") or "=" not in option:
                raise ValueError(f"{option!r}: write options as Key=value, e.g. Port=2222")
            if key == "sendenv":
                raise ValueError("SendEnv is refused: local variables (hermes's keys) stay "
                                 "local; opt names in with terminal.env_passthrough")
        return value


class SandboxSection(BaseModel):
    """``sandbox:``: the OS sandbox of every command the agent runs (docs/sandbox.md)."""

    model_config = ConfigDict(extra="forbid")

    # strict: workspace writes, no network; workspace: workspace writes, network; off: none
    mode: Literal["strict", "workspace", "off"] = "workspace"
    network: bool = True
    # auto: bubblewrap where it works, else Landlock; a named one that does not work here
    # refuses commands (docs/sandbox.md#mechanisms)
    mechanism: Literal["auto", "bubblewrap", "landlock"] = "auto"
    # more paths no command may see (besides $HERMES_HOME and the credential locations)
    hidden_paths: list[str] = Field(default_factory=list)

    @field_validator("mode", mode="before")
    @classmethod
    def _yaml_bool(cls, value: Any) -> Any:  # YAML reads a bare `off` as false
        if value is False:
            return "off"
        if value is True:
            raise ValueError("write strict, workspace or off (a bare yes/on reads as true)")
        return value

    @field_validator("hidden_paths", mode="before")
    @classmethod
    def _one_hidden(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class ToolOutputSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    max_bytes: int = Field(50_000, gt=0)
    max_lines: int = Field(2000, gt=0)
    max_line_length: int = Field(2000, gt=0)


# Command patterns approved "always" (written by the approval prompt).
command_allowlist = (list[str], Field(default_factory=list))


class CheckpointsSection(BaseModel):
    """``checkpoints:``: snapshots of the workspace before each turn's first file change, for
    ``/rollback`` and ``hermes checkpoints`` (docs/checkpoints.md)."""

    model_config = ConfigDict(extra="allow")  # keys of the original's that we do not use

    enabled: bool = True
    max_snapshots: int = Field(50, ge=1)  # per workspace; older ones are pruned
    max_file_size_mb: float = Field(10, gt=0)  # larger files are left out of checkpoints
    max_files: int = Field(50_000, ge=1)  # a workspace with more is not checkpointed
