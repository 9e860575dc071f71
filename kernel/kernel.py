"""The kernel: one instance per profile, owning the plugin manager, registries and slots.

``Kernel(...).boot()`` discovers plugins, decides which load, imports them and commits what
each registers atomically: a plugin that fails leaves nothing registered.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, overload

from .admission import check_claims, declared_mismatch, unknown_hook_message
from .config import Config, effective_env, load_config
from .context import PluginContext
from .discovery import Discovery, PluginRecord, discover
from .errors import PluginError, ServiceError
from .home import ValidationCache, hermes_home, private_dir, tighten_secret_files
from .policy import SHIPPED, by_install_time, decide, load_filter, truthy
from .records import CliCommand, PluginStatus, Registration
from .service_keys import ServiceKey, service_name
from .slots import Slots

if TYPE_CHECKING:
    from .hooks import HookBus, HookRegistry
    from .tool_registry import ToolRegistry

log = logging.getLogger("hermes_agent.kernel")
T = TypeVar("T")


class Kernel:
    def __init__(self, home: Path | None = None, *, config: Config | None = None,
                 env: Mapping[str, str] | None = None, overrides: Mapping[str, Any] | None = None,
                 cwd: Path | None = None, entry_points: bool = True, builtins: bool = True):
        self.home = hermes_home(env) if home is None else Path(home)
        self.env, self.dotenv_names = effective_env(self.home, env)
        try:
            private_dir(self.home)  # created 0700 before anything is written into it
        except OSError as exc:  # e.g. a read-only location: commands that only read still run
            log.warning("cannot create HERMES_HOME %s: %s", self.home, exc)
        self.cwd = cwd
        self.cache = ValidationCache(self.home / "cache" / "validated.json")
        self.config = config or load_config(self.home, overrides, self.env, self.cache)
        self.cache.save()
        for said in tighten_secret_files(self.home):  # .env written by hand is often 0644
            log.info("%s", said)  # the CLI shows startup warnings once (a log would repeat it)
            self.config.startup_warnings.append(said)
            self.config.warnings.append(said)
        self.use_entry_points = entry_points
        self.use_builtins = builtins
        self.slots = Slots(self.config.slots)  # the slots builtin plugins declare
        self.cli_commands: dict[str, CliCommand] = {}
        # kind -> name -> record: what plugins register by name for the plugin owning the
        # kind to read (``registered``): slash commands, skills
        self._named: dict[str, dict[str, Any]] = {}
        # (kind, callback, plugin) in registration order: ctx.register_middleware
        self.middleware: list[tuple[str, Callable[..., Any], str]] = []
        self._services: dict[str, Any] = {}
        self._offered: dict[str, Any] = {}  # service name -> context.Service
        self.plugins: dict[str, PluginStatus] = {}
        self.discovery: Discovery | None = None
        self._registrations: dict[str, Registration] = {}
        self.install_stamps: dict[str, int | None] = {}  # plugin -> install time (ns), see boot
        # Plugins unloaded because they tried to stop hermes (see quarantine); each listener
        # is told of every one (the plugin-admin plugin records them).
        self.faults: list[PluginStatus] = []
        self.fault_listeners: list[Callable[[PluginStatus], Any]] = []
        self.booted = False
        self.closed = False

    # Built on first use, so listing plugins never imports pluggy or the hook machinery.
    @cached_property
    def pm(self) -> "HookRegistry":
        """pluggy's plugin manager: the one registry of hook implementations."""
        from .hooks import HookRegistry

        return HookRegistry()

    @cached_property
    def hooks(self) -> "HookBus":
        from .hooks import HookBus

        return HookBus(self.pm, trace=truthy(self.env.get("HERMES_TRACE_HOOKS")),
                       on_halt=self.quarantine)

    @cached_property
    def tools(self) -> "ToolRegistry":
        from .tool_registry import ToolRegistry

        return ToolRegistry(on_halt=self.quarantine)

    def discover(self) -> Discovery:
        if self.discovery is None:
            self.discovery = discover(self.home, self.env, self.cwd, self.cache,
                                      entry_points=self.use_entry_points)
            if not self.use_builtins:
                self.discovery.plugins = {n: r for n, r in self.discovery.plugins.items()
                                          if r.source != "builtin"}
            self.cache.save()
        return self.discovery

    def boot(self) -> "Kernel":
        """Discover and load every plugin that should load, earliest-installed first.
        Idempotent."""
        if self.booted:
            return self
        self.booted = True
        from .containment import watch_interrupts

        watch_interrupts()
        found = self.discover()
        for record in found.problems:
            self.plugins[f"{record.name}@{record.location}"] = PluginStatus(
                record, "failed", record.error, record.error_code)
        decisions = {name: decide(record, self.config, self.env)
                     for name, record in found.plugins.items()}
        for name, decision in decisions.items():
            if not decision.load:
                self.plugins[name] = PluginStatus(found.plugins[name], decision.state,
                                                  decision.reason, decision.code)
        loading = [found.plugins[name] for name, decision in decisions.items() if decision.load]
        trail = self.env.get("HERMES_LOAD_TRAIL")  # `plugins doctor --isolated` reads it
        shipped = [record for record in loading if record.source in SHIPPED]
        installed = [record for record in loading if record.source not in SHIPPED]
        self.install_stamps = dict.fromkeys(r.name for r in shipped)  # None: shipped
        for record in shipped:
            self._boot_load(record, decisions[record.name].reason, trail)
        if installed:  # a shipped plugin (plugin-admin) knows when each was installed
            self.install_stamps.update(self._install_times(installed))
        for record in by_install_time(installed, self.install_stamps):
            self._boot_load(record, decisions[record.name].reason, trail)
        loaded = self.plugins  # listed in discovery order, whatever order they loaded in
        self.plugins = {**{k: v for k, v in loaded.items() if k not in found.plugins},
                        **{name: loaded[name] for name in found.plugins if name in loaded}}
        for name in sorted(load_filter(self.env) or ()):
            if found.get(name) is None:
                log.warning("HERMES_LOAD_PLUGINS names %r, which is not installed", name)
        self.cache.save()
        if "pm" in self.__dict__ and self.hooks.has_hook("on_plugins_loaded"):  # else none
            self.hooks.fire("on_plugins_loaded", plugins=dict(self.plugins), home=self.home)
        return self

    def _boot_load(self, record: PluginRecord, note: str, trail: str | None) -> None:
        if trail:
            with open(trail, "a", encoding="utf-8") as breadcrumbs:
                breadcrumbs.write(record.name + "\n")
        status = self.load(record)
        if note:
            status.warnings.append(note)

    def _install_times(self, records: list[PluginRecord]) -> dict[str, int | None]:
        """Each plugin's install time (ns since the epoch), from the ``plugin_install_times``
        hook (plugin-admin, which keeps plugins.lock, implements it); none known without it."""
        if not self.hooks.has_hook("plugin_install_times"):
            log.info("no plugin implements plugin_install_times: installed plugins load by name")
            return {}
        times = self.hooks.fire("plugin_install_times", records=list(records))
        if not isinstance(times, Mapping):  # none answered (a failure is logged by the bus)
            log.warning("no install times known: installed plugins load by name")
            return {}
        return dict(times)

    def load(self, record: PluginRecord, target: Any = None) -> PluginStatus:
        """Import (unless ``target`` is given) and register one plugin, transactionally.
        Whatever its code raises fails this plugin alone; a real Ctrl-C still propagates,
        after the same rollback."""
        import pluggy

        from .containment import first_line
        from .loader import import_plugin, module_name, unimport

        name = record.name
        staged = Registration(name)
        declared = record.manifest.cli_commands if record.manifest else {}
        staged.cli_commands.extend(CliCommand(cli, None, name, spec.help, entry=spec.entry)
                                   for cli, spec in declared.items())
        registered_pm = False
        imported = target is None
        try:
            if target is None:
                target = _plugin_call(name, "import_error", f"Error importing plugin '{name}' "
                                      f"({record.location})", import_plugin, record)
            ctx = PluginContext(self, record, staged)
            if _has_hookimpls(target):
                try:  # validated by pluggy now, dispatched once committed
                    self.pm.register(target, name=name, loading=True)
                except ValueError as exc:  # pluggy: name or object already registered
                    raise PluginError(name, f"plugin '{name}' is already registered: {exc}",
                                      code="duplicate") from exc
                registered_pm = True
                _plugin_call(name, "register_error", f"a registration hook of plugin '{name}' "
                             "failed", self._stage_hookimpls, target, record, staged, ctx)
            register = _register_callable(target)
            if register is not None:
                _plugin_call(name, "register_error", f"register() of plugin '{name}' failed",
                             register, ctx)
            if not staged.providers and (register is not None or not registered_pm):
                # a slot plugin that registered nothing: the provider a plugin recognises in
                # its code (the compat plugin implements find_slot_provider), if any
                finder = self.pm.hook.find_slot_provider
                offered = bool(record.slot) and bool(finder.get_hookimpls())
                provider = _plugin_call(name, "register_error", f"creating the provider of "
                                        f"plugin '{name}' failed", lambda: finder(
                                            slot=record.slot, target=target)) if offered else None
                if provider is not None:
                    ctx._provider(record.slot, provider)
                elif register is None and offered:
                    label = self.slots.label(record.slot)
                    raise PluginError(name, f"plugin '{name}' ({record.location}) is loaded as a "
                                      f"{label} but defines no {label} class and no register(ctx);"
                                      " if it is another kind of plugin, add a plugin.yaml",
                                      code="no_provider")
                elif register is None and not declared:  # plugin.yaml's commands suffice
                    raise PluginError(name, f"plugin '{name}' ({record.location}) has no "
                                      "register(ctx) function, no @hookimpl functions and no "
                                      "cli_commands in plugin.yaml", code="no_entry")
            if record.slot and not staged.providers:
                raise PluginError(name, f"plugin '{name}' is a {record.slot} provider but "
                                  "registered no provider", code="no_provider")
            self._commit(record, staged)
        except BaseException as exc:
            if registered_pm:
                self.pm.unregister(name=name)
            if record.path is not None and imported:
                unimport(module_name(record))
            if not isinstance(exc, (PluginError, pluggy.PluginValidationError)):
                raise  # a real Ctrl-C, or a bug of ours: rolled back, then propagated
            ours = isinstance(exc, PluginError)
            message = str(exc) if ours else f"plugin '{name}' has an invalid @hookimpl: {exc}"
            log.warning("%s", message)
            root = exc.__cause__ if ours else exc
            status = PluginStatus(record, "failed", message, exc.code if ours else "hookimpl_invalid",
                                  first_line(root) if root else "", clash=exc.clash if ours else {})
            self.plugins[name] = status
            return status
        finally:
            if registered_pm:
                self.pm.committed(target)  # dispatched from now on (unless rolled back)
        status = PluginStatus(
            record, "loaded", tools=[t.name for t in staged.tools],
            hooks=staged.hook_names, commands=[c.name for c in staged.commands],
            cli_commands=list(dict.fromkeys(c.name for c in staged.cli_commands)),
            providers=[f"{p.slot}:{p.name}" for p in staged.providers],
            skills=[s.name for s in staged.skills],
            warnings=[*staged.warnings, *declared_mismatch(record, staged)])
        for warning in status.warnings:
            log.warning("plugin %s: %s", name, warning)
        self.plugins[name] = status
        return status

    def register_plugin(self, plugin: Any, name: str | None = None, *, source: str = "test",
                        manifest: Any = None) -> PluginStatus:
        """Load an in-memory plugin object (module, object or register callable). For tests."""
        from .manifest import Manifest

        plugin_name = name or getattr(plugin, "__name__", type(plugin).__name__).rsplit(".", 1)[-1]
        record = PluginRecord(plugin_name, source, manifest or Manifest(name=plugin_name, synthesized=True))
        return self.load(record, target=plugin)

    def unregister_plugin(self, name: str) -> None:
        """Stop a plugin (its ``on_shutdown`` callbacks, then its providers' ``close()``) and
        remove everything it registered."""
        if name in self._registrations and not self.closed:
            self.hooks.call_plugin("on_shutdown", name, reason="unload")
            _close_all(p.obj for entries in self.slots.providers.values()
                       for p in entries.values() if p.plugin == name)
        self.pm.remove_plugin(name)  # every hook implementation it had, both styles
        self.tools.remove_plugin(name)
        self.slots.remove_plugin(name)
        for table in (self.cli_commands, *self._named.values()):
            for key in [k for k, v in table.items() if v.plugin == name]:
                del table[key]
        self.middleware = [m for m in self.middleware if m[2] != name]
        for offered in [s for s in self._offered.values() if s.plugin == name]:
            del self._offered[offered.name]
            _close_all([self._services.pop(offered.name)] if offered.name in self._services else [])
        for service in self._services.values():
            if callable(getattr(service, "remove_plugin", None)):
                service.remove_plugin(name)
        self._registrations.pop(name, None)
        self.plugins.pop(name, None)

    def quarantine(self, name: str, where: str, exc: BaseException) -> None:
        """A loaded plugin raised ``exc`` (SystemExit, KeyboardInterrupt, ...) from ``where``:
        it tried to stop hermes. Unload it for this kernel's life; record it as failed."""
        from .containment import describe, first_line

        status = self.plugins.get(name)
        if status is None or status.state != "loaded":
            return
        reason = (f"plugin '{name}' raised {describe(exc)} from {where}; hermes does not stop "
                  "for a plugin, so the plugin was unloaded for the rest of this session")
        log.warning("%s", reason)
        self.unregister_plugin(name)
        failed = PluginStatus(status.record, "failed", reason, "halt_attempt", first_line(exc))
        self.plugins[name] = failed
        self.faults.append(failed)
        for listener in list(self.fault_listeners):
            try:
                listener(failed)
            except Exception as listener_error:
                log.warning("recording the failure of plugin %s failed: %s", name, listener_error)

    def _stage_hookimpls(self, target: Any, record: PluginRecord, staged: Registration,
                         ctx: PluginContext) -> None:
        from .hooks import HookCallback

        collectors = _collectors(ctx, staged)
        for caller in self.pm.get_hookcallers(target) or []:
            for impl in caller.get_hookimpls():
                if impl.plugin is not target:
                    continue
                if not caller.has_spec():
                    staged.warnings.append(unknown_hook_message(caller.name, "@hookimpl"))
                elif impl.wrapper or impl.hookwrapper:
                    staged.warnings.append(f"@hookimpl {caller.name}: wrappers are not supported "
                                           "for hermes hooks; the implementation was skipped")
                elif caller.name in collectors:
                    impl.function(register=collectors[caller.name])
                else:  # already in pluggy; listed for the plugin's status
                    staged.hooks.append(HookCallback(caller.name, impl.function, record.name,
                                                     tuple(impl.argnames)))

    def _commit(self, record: PluginRecord, staged: Registration) -> None:
        """Check every staged registration against what is live; then apply all or none."""
        from . import hookspecs

        name = record.name
        replacing = check_claims(self, record, staged)
        for entry in staged.hooks:
            if entry.hook not in hookspecs.EVENT_HOOKS:
                staged.warnings.append(unknown_hook_message(entry.hook, "register_hook"))
            elif entry.hook in hookspecs.NOT_FIRED:
                staged.warnings.append(f"hook '{entry.hook}': {hookspecs.NOT_FIRED[entry.hook]}")
        for tool in staged.tools:
            if tool.name in replacing:
                log.warning("plugin %s replaces core tool %r (allowed by config)", name, tool.name)
            self.tools.add(tool)
        for toolset in staged.toolsets:
            self.tools.add_toolset(toolset)
        self.cli_commands.update({c.name: c for c in staged.cli_commands})
        for record in (*staged.commands, *staged.skills):
            self.registered(record.kind)[record.name] = record
        for provider in staged.providers:
            self.slots.add(provider)
        self._offered.update({s.name: s for s in staged.services})
        self.middleware.extend((kind, fn, name) for kind, fn in staged.middleware)
        if staged.hooks:  # last: pluggy then holds the callbacks all or none
            from .hooks import Subscription

            self.pm.subscribe([e for e in staged.hooks if isinstance(e, Subscription)])
        self._registrations[name] = staged

    def active_provider(self, slot: str) -> Any:
        return self.slots.active(slot, self.config)

    def registered(self, kind: str) -> dict[str, Any]:
        """What loaded plugins registered by name of one ``kind``, by name, each record with
        its ``plugin``: ``"slash_command"`` (``ctx.register_command``: ``handler``,
        ``description``, ``args_hint``), ``"skill"`` (``ctx.register_skill``: ``path``,
        ``description``). The plugin owning a kind reads it (the chat, the skills plugin)."""
        return self._named.setdefault(kind, {})

    def middleware_for(self, kind: str) -> list[Callable[..., Any]]:
        """The callbacks loaded plugins registered with ``ctx.register_middleware(kind,
        callback)``, in registration order (kinds: ``tool_request``, ``tool_execution``,
        ``llm_request``, ``llm_execution``; the agent applies them)."""
        return [callback for registered, callback, _ in self.middleware if registered == kind]

    def close(self) -> None:
        """Stop every loaded plugin, once: fire ``on_shutdown`` (reason ``"exit"``), then
        ``close()`` (or a legacy provider's ``shutdown()``) every slot provider and service."""
        if self.closed:
            return
        self.closed = True
        if "pm" in self.__dict__ and self.hooks.has_hook("on_shutdown"):
            self.hooks.fire("on_shutdown", reason="exit")
        objects = [p.obj for entries in self.slots.providers.values() for p in entries.values()]
        _close_all([*objects, *self._services.values()])

    @overload
    def service(self, name: ServiceKey[T], factory: Callable[[], T] | None = None) -> T: ...

    @overload
    def service(self, name: str, factory: Callable[[], Any] | None = None) -> Any: ...

    def service(self, name: ServiceKey[Any] | str,
                factory: Callable[[], Any] | None = None) -> Any:
        """A service by key (:class:`~.service_keys.ServiceKey`, typed) or name, one instance
        per kernel, built on first use: the one a plugin offered (``ctx.register_service``),
        else, given ``factory``, a plugin's own per-kernel state. A service with
        ``remove_plugin(name)`` is told when a plugin is unregistered."""
        name = service_name(name)
        if name not in self._services:  # two threads may both build one: the first stored wins
            offered = self._offered.get(name)
            if offered is not None:
                self._services.setdefault(name, offered.factory(self))
            elif factory is not None:
                self._services.setdefault(name, factory())
            else:
                raise ServiceError(name, self.booted)
        return self._services[name]

    def service_owner(self, name: ServiceKey[Any] | str) -> str | None:
        """The plugin that offers the service of ``name`` (a key or a name), or None."""
        offered = self._offered.get(service_name(name))
        return offered.plugin if offered else None


def _close_all(objects: Any) -> None:
    """``close()`` (else ``shutdown()``) each object; a failure is logged, the rest still run."""
    for obj in objects:
        stop = getattr(obj, "close", None)
        stop = stop if callable(stop) else getattr(obj, "shutdown", None)
        if callable(stop):
            try:
                stop()
            except Exception as exc:
                log.warning("closing %r failed: %s: %s", obj, type(exc).__name__, exc)


def _plugin_call(plugin: str, code: str, what: str, fn: Callable[..., Any], *args: Any) -> Any:
    """Run plugin code while loading; what it raises (bar a real Ctrl-C) becomes a
    :class:`PluginError` with ``code``, saying ``what`` failed and why."""
    try:
        return fn(*args)
    except BaseException as exc:
        from .containment import describe, reraise_shutdown

        reraise_shutdown(exc)
        raise PluginError(plugin, f"{what}: {describe(exc)}", code=code) from exc


def _has_hookimpls(target: Any) -> bool:
    from .hookspecs import PROJECT_NAME

    if inspect.isfunction(target) or inspect.isclass(target):
        return False
    marker = f"{PROJECT_NAME}_impl"
    return any(hasattr(getattr(target, n, None), marker) for n in dir(target) if not n.startswith("__"))


def _register_callable(target: Any) -> Callable[[Any], Any] | None:
    if inspect.ismodule(target) or not callable(target) or inspect.isclass(target):
        register = getattr(target, "register", None)
        return register if callable(register) else None
    return target  # an entry point naming a function: `module:function`


def _collectors(ctx: PluginContext, staged: Registration) -> dict[str, Callable[..., Any]]:
    def cli(command: Any) -> None:
        staged.cli_commands.append(CliCommand(command.name, command, ctx.plugin_name,
                                              command.help or ""))

    return {"register_tools": ctx.register_tool, "register_toolsets": ctx.register_toolset,
            "register_cli_commands": cli, "register_slash_commands": ctx.register_command,
            "register_skills": ctx.register_skill, "register_providers": ctx._provider}
