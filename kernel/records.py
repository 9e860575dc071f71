"""What plugins register, as plain records: staged in a :class:`Registration` while a plugin
loads, then committed by the kernel into its registries and slots; and each plugin's outcome
(:class:`PluginStatus`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from .discovery import PluginRecord
    from .hooks import HookCallback


@dataclass
class ToolSpec:
    name: str
    toolset: str
    schema: dict[str, Any]  # the OpenAI function format
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
    name: str
    tools: tuple[str, ...] = ()
    includes: tuple[str, ...] = ()
    description: str = ""
    kind: str = "composite"  # leaf | composite | platform
    plugin: str = ""


@dataclass
class SlashCommand:
    """``/name`` in a chat: ``ctx.register_command`` (read with ``kernel.registered``)."""

    kind: ClassVar[str] = "slash_command"
    name: str
    handler: Callable[..., Any]
    plugin: str
    description: str = ""
    args_hint: str = ""


@dataclass
class CliCommand:
    """``hermes <name>``: a click command, an argparse pair, or an entry in plugin.yaml."""

    name: str
    command: Any  # a click.Command; None for an argparse or a declared command
    plugin: str
    help: str = ""
    setup_fn: Callable[..., Any] | None = None
    handler_fn: Callable[..., Any] | None = None
    entry: str = ""  # "module:attr", imported when the command runs


@dataclass
class Skill:
    """A SKILL.md a plugin ships: ``ctx.register_skill`` (read with ``kernel.registered``)."""

    kind: ClassVar[str] = "skill"
    name: str  # "<plugin>:<skill>"
    path: Path  # the SKILL.md file
    plugin: str
    description: str = ""


@dataclass
class Provider:
    slot: str
    name: str
    obj: Any
    plugin: str


@dataclass
class Service:
    name: str
    factory: Callable[[Any], Any]  # factory(kernel), called on first use
    plugin: str


@dataclass
class Registration:
    """Everything a plugin registered while it loaded, not yet visible to anyone."""

    plugin: str
    tools: list[ToolSpec] = field(default_factory=list)
    toolsets: list[ToolsetSpec] = field(default_factory=list)
    hooks: list[HookCallback] = field(default_factory=list)  # Subscriptions: register_hook
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


@dataclass
class PluginStatus:
    """What happened to one plugin: the record, its state and what it registered."""

    record: PluginRecord
    state: str
    reason: str = ""
    code: str = ""  # why it is not loaded, e.g. "import_error" (docs/writing-plugins.md)
    cause: str = ""  # first line of the exception behind a failed load
    clash: dict[str, str] = field(default_factory=dict)  # code "duplicate": kind, name, kept_by
    tools: list[str] = field(default_factory=list)
    hooks: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    cli_commands: list[str] = field(default_factory=list)
    providers: list[str] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.record.name
