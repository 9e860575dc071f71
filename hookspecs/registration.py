"""Registration (collector) hooks: how pluggy-style plugins contribute things.

Each hook takes a single argument, ``register``: a callable that the kernel binds to
the plugin being asked, so every registration is attributed to the plugin that made
it. The kernel calls each plugin's implementation separately while it loads that
plugin, before the first session starts. A plugin calls ``register`` as many times as
it likes; what the hook returns is ignored. Registrations are staged and applied only
if the whole plugin loads, so a clash fails the plugin instead of half-registering it.

The ``Register*`` protocols below describe the callables each hook receives::

    @hookimpl
    def register_tools(register):
        register("calculate", "calculator", CALCULATE_SCHEMA, calculate)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Optional, Protocol, Union

from .markers import hookspec

if TYPE_CHECKING:
    import os

    import click

    from .payloads import ProviderSlot, ToolsetKind

#: A slash-command handler: receives the raw argument text, returns a reply or ``None``.
CommandHandler = Callable[[str], Union[Optional[str], Awaitable[Optional[str]]]]


class RegisterTool(Protocol):
    """The ``register`` callable passed to ``register_tools``."""

    def __call__(
        self,
        name: str,
        toolset: str,
        schema: Mapping[str, Any],
        handler: Callable[..., Any],
        *,
        check_fn: Callable[[], bool] | None = None,
        requires_env: Iterable[str] | None = None,
        is_async: bool = False,
        description: str = "",
        emoji: str = "",
        override: bool = False,
    ) -> None: ...


class RegisterToolset(Protocol):
    """The ``register`` callable passed to ``register_toolsets``."""

    def __call__(
        self,
        name: str,
        *,
        tools: Iterable[str] = (),
        includes: Iterable[str] = (),
        description: str = "",
        kind: ToolsetKind = "composite",
    ) -> None: ...


class RegisterCliCommand(Protocol):
    """The ``register`` callable passed to ``register_cli_commands``."""

    def __call__(self, command: click.Command) -> None: ...


class RegisterCommand(Protocol):
    """The ``register`` callable passed to ``register_slash_commands``."""

    def __call__(
        self,
        name: str,
        handler: CommandHandler,
        description: str = "",
        args_hint: str = "",
    ) -> None: ...


class RegisterSkill(Protocol):
    """The ``register`` callable passed to ``register_skills``."""

    def __call__(
        self, name: str, path: str | os.PathLike[str], description: str = ""
    ) -> None: ...


class NamedProvider(Protocol):
    """The least a provider object must offer: a ``name`` (attribute or property)."""

    @property
    def name(self) -> str: ...


class RegisterProvider(Protocol):
    """The ``register`` callable passed to ``register_providers``."""

    def __call__(self, slot: ProviderSlot, provider: NamedProvider) -> None: ...


@hookspec
def register_tools(register: RegisterTool) -> None:
    """Called once per plugin at boot to collect the tools it provides.

    Call ``register(name, toolset, schema, handler, *, check_fn=None, requires_env=None,
    is_async=False, description="", emoji="", override=False)`` for each tool.
    ``schema`` is the function schema the model sees. ``handler(args, **kwargs)``
    returns the result as a string (JSON by convention); with ``is_async=True`` it is a
    coroutine function. ``check_fn()`` returning false hides the tool from the model.
    ``requires_env`` lists environment variables the tool needs. ``override=True`` asks
    to replace a core tool of the same name, which the operator must allow with
    ``allow_tool_override`` in the plugin's configuration entry.

    :param register: Callable bound to this plugin that records one tool per call.
    :returns: Ignored.

    Dispatch: collector. Every implementation runs once and registers through the
    callback; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: standalone, backend, exclusive (memory/context engine) and platform
    plugins.
    Fired: by the kernel during boot, once per plugin, while that plugin is loaded.
    """


@hookspec
def register_toolsets(register: RegisterToolset) -> None:
    """Called once per plugin at boot to collect the toolsets it declares.

    Call ``register(name, *, tools=(), includes=(), description="", kind="composite")``
    for each toolset. ``tools`` names tools directly; ``includes`` names other toolsets
    whose tools are pulled in. ``kind`` is ``"composite"`` (built from other toolsets),
    ``"leaf"`` (a plain group of tools) or ``"platform"`` (the default toolset of a
    platform).

    :param register: Callable bound to this plugin that records one toolset per call.
    :returns: Ignored.

    Dispatch: collector. Every implementation runs once and registers through the
    callback; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: standalone, backend and platform plugins.
    Fired: by the kernel during boot, once per plugin, while that plugin is loaded.
    """


@hookspec
def register_cli_commands(register: RegisterCliCommand) -> None:
    """Called once per plugin to collect ``hermes <name> ...`` subcommands.

    Call ``register(command)`` with a ``click.Command`` (or ``click.Group``); it is
    added to the root ``hermes`` group under ``command.name``. Build the command lazily
    inside the implementation so that importing the plugin does not import ``click``.

    :param register: Callable bound to this plugin that records one click command per
        call.
    :returns: Ignored.

    Dispatch: collector. Every implementation runs once and registers through the
    callback; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: standalone, backend, exclusive (memory/context engine), platform and
    model-provider plugins.
    Fired: by the kernel during boot, once per plugin, while that plugin is loaded.
    """


@hookspec
def register_slash_commands(register: RegisterCommand) -> None:
    """Called once per plugin at boot to collect in-session slash commands.

    Call ``register(name, handler, description="", args_hint="")`` for each command.
    ``name`` is given without the leading slash (it is lower-cased and spaces become
    dashes). ``handler(raw_args: str)`` receives
    the text after the command name and returns a reply string or ``None``; it may be
    a plain function or a coroutine function. ``args_hint`` is a short usage hint shown
    in help, for example ``"<query>"``.

    :param register: Callable bound to this plugin that records one slash command per
        call.
    :returns: Ignored.

    Dispatch: collector. Every implementation runs once and registers through the
    callback; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: standalone, backend, exclusive (memory/context engine) and platform
    plugins.
    Fired: by the kernel during boot, once per plugin, while that plugin is loaded.
    """


@hookspec
def register_skills(register: RegisterSkill) -> None:
    """Called once per plugin at boot to collect the skills it ships.

    Call ``register(name, path, description="")`` for each skill. ``path`` is either a
    ``SKILL.md`` file or a folder that contains one; the skill is read-only and is
    addressed as ``<plugin name>:<name>``.

    :param register: Callable bound to this plugin that records one skill per call.
    :returns: Ignored.

    Dispatch: collector. Every implementation runs once and registers through the
    callback; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: standalone, backend and platform plugins.
    Fired: by the kernel during boot, once per plugin, while that plugin is loaded.
    """


@hookspec
def register_providers(register: RegisterProvider) -> None:
    """Called once per plugin at boot to collect providers for the kernel's slots.

    Call ``register(slot, provider)`` for each provider. ``slot`` is one of
    ``"memory"``, ``"context_engine"``, ``"model_provider"``, ``"web_search"``,
    ``"platform"`` or ``"session_store"``; ``provider`` is an object implementing that
    slot's interface and having a ``name``. Registering does not activate a provider:
    the configuration selects which registered provider fills each slot.

    :param register: Callable bound to this plugin that records one provider per call.
    :returns: Ignored.

    Dispatch: collector. Every implementation runs once and registers through the
    callback; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: backend, exclusive (memory/context engine), platform and
    model-provider plugins.
    Fired: by the kernel during boot, once per plugin, while that plugin is loaded.
    """
