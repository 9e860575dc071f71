"""``PluginContext``: the ``register(ctx)`` API of plugins written for the original. Every
call is staged in a :class:`~.records.Registration`, committed only if the plugin loads.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TypeVar, overload

from .home import private_dir
from .records import (CliCommand, Provider, Registration, Service, Skill, SlashCommand, ToolSpec,
                      ToolsetSpec)
from .service_keys import ServiceKey, service_name

if TYPE_CHECKING:
    from .discovery import PluginRecord

log = logging.getLogger("hermes_agent.plugins")
T = TypeVar("T")
_SKILL_NAME = re.compile(r"^[A-Za-z0-9_-]+\Z")
MIDDLEWARE_KINDS = ("tool_request", "tool_execution", "llm_request", "llm_execution")
# register_* methods of the original that have no provider slot in this version.
UNSUPPORTED = ("video_gen_provider", "dashboard_auth_provider",
               "secret_source", "auxiliary_task", "slack_action_handler", "cron_scheduler")


def _slot(slot: str) -> Callable[["PluginContext", Any], None]:
    def register(self: "PluginContext", provider: Any) -> None:
        self._provider(slot, provider)
    return register


class PluginContext:
    """Handed to a plugin's ``register(ctx)``. Attributes: ``manifest``, ``plugin_name``,
    ``profile_name``, ``config`` (the plugin's ``plugins.entries.<name>`` mapping) and
    ``data_dir`` (``$HERMES_HOME/plugin-data/<name>``, kept across reinstalls)."""

    # ``kernel``: the :class:`~.kernel.Kernel` loading the plugin (typed ``Any``: the kernel
    # module imports this one, and no import circle is allowed, not even for type checking)
    def __init__(self, kernel: Any, record: "PluginRecord", staged: Registration):
        self.kernel = kernel
        self._staged = staged
        self.manifest = record.manifest
        self.plugin_name = record.name
        self.profile_name = "default"
        self.config = kernel.config.plugin_entry(record.name, *record.aliases)

    @property
    def data_dir(self) -> Path:
        return private_dir(self.kernel.home / "plugin-data" / self.plugin_name)

    def register_tool(self, name: str, toolset: str, schema: dict[str, Any],
                      handler: Callable[..., Any], check_fn: Callable[[], bool] | None = None,
                      requires_env: list[str] | tuple[str, ...] | None = None,
                      is_async: bool = False, description: str = "", emoji: str = "",
                      override: bool = False) -> None:
        if not isinstance(schema, dict):
            raise TypeError(f"register_tool({name!r}): schema must be a dict in the OpenAI "
                            "function format ({'name', 'description', 'parameters'})")
        if not callable(handler):
            raise TypeError(f"register_tool({name!r}): handler must be callable")
        self._staged.tools.append(ToolSpec(
            name, toolset or self.plugin_name, schema, handler, self.plugin_name, check_fn,
            tuple(requires_env or ()), is_async, description, emoji, override))

    def register_toolset(self, name: str, tools: list[str] | tuple[str, ...] = (),
                         includes: list[str] | tuple[str, ...] = (), description: str = "",
                         kind: str = "composite") -> None:
        if kind not in ("leaf", "composite", "platform"):
            raise ValueError(f"toolset {name!r}: kind must be leaf, composite or platform")
        self._staged.toolsets.append(ToolsetSpec(name, tuple(tools), tuple(includes),
                                                 description, kind, self.plugin_name))

    def register_hook(self, hook_name: str | None = None, callback: Callable[..., Any] | None = None,
                      *, name: str | None = None, handler: Callable[..., Any] | None = None,
                      event: str | None = None, description: str = "") -> None:
        """Subscribe ``callback`` to ``hook_name``: it gets the payload by keyword (only the
        names it takes, unless it accepts ``**kwargs``)."""
        hook = hook_name or name or event
        fn = callback or handler
        if not isinstance(hook, str) or not hook or not callable(fn):
            raise TypeError("register_hook needs a hook name and a callable, e.g. "
                            "ctx.register_hook('post_tool_call', on_tool_done)")
        if hook.startswith("_"):  # pluggy keeps hooks as attributes; no hook name starts so
            raise ValueError(f"register_hook: {hook!r} is not a hook name")
        from .hooks import Subscription  # registered in pluggy when the plugin commits

        self._staged.hooks.append(Subscription(hook, fn, self.plugin_name, description))

    def register_command(self, name: str, handler: Callable[..., Any], description: str = "",
                         args_hint: str = "") -> None:
        clean = name.strip().lower().lstrip("/").replace(" ", "-")
        if not clean or not callable(handler):
            raise TypeError("register_command needs a non-empty name and a callable handler")
        self._staged.commands.append(SlashCommand(clean, handler, self.plugin_name,
                                                  description, args_hint))

    def register_cli_command(self, name: str, help: str = "", setup_fn: Callable[..., Any] | None = None,
                             handler_fn: Callable[..., Any] | None = None,
                             description: str = "") -> None:
        """An argparse-style command ``hermes NAME``: ``setup_fn(parser)`` adds its arguments,
        ``handler_fn(args)`` (or ``args.func``) runs it."""
        self._staged.cli_commands.append(CliCommand(name, None, self.plugin_name,
                                                    help or description, setup_fn, handler_fn))

    def register_skill(self, name: str, path: str | Path, description: str = "") -> None:
        if not _SKILL_NAME.match(name or ""):
            raise ValueError(f"skill name {name!r} must use only letters, digits, '-' and '_'")
        target = Path(path)
        if target.is_dir():
            target = target / "SKILL.md"
        if not target.is_file():
            raise FileNotFoundError(f"register_skill({name!r}): {target} does not exist "
                                    "(pass a SKILL.md file or a folder holding one)")
        self._staged.skills.append(Skill(f"{self.plugin_name}:{name}", target,
                                         self.plugin_name, description))

    def register_middleware(self, kind: str, callback: Callable[..., Any]) -> None:
        if kind not in MIDDLEWARE_KINDS:
            self._staged.warnings.append(f"unknown middleware kind {kind!r} "
                                         f"(known: {', '.join(MIDDLEWARE_KINDS)})")
        self._staged.middleware.append((kind, callback))

    @overload
    def register_service(self, name: ServiceKey[T], factory: Callable[[Any], T]) -> None: ...

    @overload
    def register_service(self, name: str, factory: Callable[[Any], Any]) -> None: ...

    def register_service(self, name: ServiceKey[Any] | str,
                         factory: Callable[[Any], Any]) -> None:
        """Offer other plugins a capability under a key (:class:`~.service_keys.ServiceKey`)
        or a name: ``kernel.service(key)`` returns ``factory(kernel)``, built on first use."""
        name = service_name(name)
        if not isinstance(name, str) or not name or not callable(factory):
            raise TypeError("register_service(name, factory) needs a name and a callable")
        self._staged.services.append(Service(name, factory, self.plugin_name))

    def _provider(self, slot: str, obj: Any, name: str | None = None) -> None:
        self.kernel.slots.check(slot)
        provider_name = name or getattr(obj, "name", None)
        if not isinstance(provider_name, str) or not provider_name:
            raise TypeError(f"a {slot.replace('_', ' ')} provider needs a non-empty `name`")
        self._staged.providers.append(Provider(slot, provider_name, obj, self.plugin_name))

    register_memory_provider = _slot("memory")
    register_context_engine = _slot("context_engine")
    register_model_provider = _slot("model_provider")
    register_web_search_provider = _slot("web_search")
    register_browser_provider = _slot("browser")
    register_session_store = _slot("session_store")
    register_tts_provider = _slot("tts")
    register_transcription_provider = _slot("stt")
    register_image_gen_provider = _slot("image_gen")

    def register_platform(self, name: str, label: str = "", adapter_factory: Callable[..., Any] | None = None,
                          check_fn: Callable[[], bool] | None = None,
                          validate_config: Callable[..., Any] | None = None,
                          required_env: list[str] | None = None, install_hint: str = "",
                          **entry: Any) -> None:
        platform = SimpleNamespace(name=name, label=label or name, adapter_factory=adapter_factory,
                                   check_fn=check_fn, validate_config=validate_config,
                                   required_env=list(required_env or []),
                                   install_hint=install_hint, plugin_name=self.plugin_name,
                                   **entry)
        self._provider("platform", platform, name)

    def get_platform_adapter(self, name: str) -> Any:
        """The live adapter of platform ``name`` in the running gateway (the
        ``platform_adapter`` hook), or None (no gateway runs in this process, or the platform
        is not connected)."""
        return self.kernel.hooks.fire("platform_adapter", name=name)

    def dispatch_tool(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        return self.kernel.tools.dispatch(tool_name, args, **kwargs)

    def inject_message(self, content: str, role: str = "user") -> bool:
        """Queue a message for the running conversation (the ``inject_message`` hook, which
        the plugin driving it answers). Returns False, with a warning, when none accepts it."""
        accepted = self.kernel.hooks.fire("inject_message", content=content, role=role)
        if accepted is None:
            log.warning("plugin %s: inject_message() dropped a %s message: no conversation is "
                        "running to receive it", self.plugin_name, role)
            return False
        return accepted is not False

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("register_") and attr[len("register_"):] in UNSUPPORTED:
            def unsupported(*args: Any, **kwargs: Any) -> None:
                self._staged.warnings.append(
                    f"ctx.{attr}() is not supported by this version; the registration was ignored")
            return unsupported
        raise AttributeError(f"PluginContext has no attribute {attr!r}")
