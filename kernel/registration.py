"""Staged registrations: what one plugin asked for, committed all at once or not at all."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .slots import SLOTS  # noqa: F401  (re-exported for the loading code)


@dataclass
class ToolSpec:
    """A tool a plugin registers: its OpenAI function schema and handler."""

    name: str
    toolset: str
    schema: dict[str, Any]
    handler: Callable[..., Any]
    plugin: str = ""
    check_fn: Callable[[], bool] | None = None
    requires_env: tuple[str, ...] = ()
    is_async: bool = False
    description: str = ""
    emoji: str = ""
    override: bool = False


@dataclass
class ToolsetSpec:
    """A named group of tools and included toolsets."""

    name: str
    tools: tuple[str, ...] = ()
    includes: tuple[str, ...] = ()
    description: str = ""
    kind: str = "composite"  # leaf | composite | platform
    plugin: str = ""


@dataclass
class HookSpecEntry:
    """A hook the plugin implements: a ``ctx.register_hook`` callback, registered in pluggy
    when the plugin commits, or (``hookimpl``) an ``@hookimpl`` pluggy already holds."""

    hook: str
    callback: Callable[..., Any]
    plugin: str
    description: str = ""
    hookimpl: bool = False


@dataclass
class SlashCommand:
    """A ``/name`` command available inside a chat."""

    name: str
    handler: Callable[..., Any]
    plugin: str
    description: str = ""
    args_hint: str = ""


@dataclass
class CliCommand:
    """A ``hermes <name>`` command: a click command, an argparse pair, or a declared entry."""

    name: str
    command: Any  # a click.Command; None for an argparse or a declared command
    plugin: str
    help: str = ""
    setup_fn: Callable[..., Any] | None = None
    handler_fn: Callable[..., Any] | None = None
    entry: str = ""  # declared in plugin.yaml: "module:attr", imported when it runs


@dataclass
class Skill:
    """A SKILL.md a plugin ships."""

    name: str  # "<plugin>:<skill>"
    path: Path  # the SKILL.md file
    plugin: str
    description: str = ""


@dataclass
class Provider:
    """An object filling a provider slot under a name."""

    slot: str
    name: str
    obj: Any
    plugin: str


@dataclass
class Service:
    """A named capability one plugin offers the others (``ctx.register_service``): built by
    ``factory(kernel)`` on first use, one instance per kernel."""

    name: str
    factory: Callable[[Any], Any]
    plugin: str


@dataclass
class Registration:
    """Everything a plugin registered while it loaded, not yet visible to anyone."""

    plugin: str
    tools: list[ToolSpec] = field(default_factory=list)
    toolsets: list[ToolsetSpec] = field(default_factory=list)
    hooks: list[HookSpecEntry] = field(default_factory=list)
    commands: list[SlashCommand] = field(default_factory=list)
    cli_commands: list[CliCommand] = field(default_factory=list)
    skills: list[Skill] = field(default_factory=list)
    providers: list[Provider] = field(default_factory=list)
    services: list[Service] = field(default_factory=list)
    middleware: list[tuple[str, Callable[..., Any]]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def hook_names(self) -> list[str]:
        return sorted({entry.hook for entry in self.hooks})
