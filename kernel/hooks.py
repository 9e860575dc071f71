"""Hooks: pluggy's plugin manager is the one registry of implementations; the hook bus
dispatches from it with per-implementation isolation and each hook's combine rule.

A plugin's ``@hookimpl`` functions get the arguments they name; each ``ctx.register_hook``
callback is wrapped in a :class:`Subscription` (a one-implementation pluggy plugin) and gets
the payload by keyword. Implementations run in load order (``tryfirst``/``trylast``
respected); one that raises is logged and skipped, and one raising what would stop hermes is
reported to ``on_halt`` (see :mod:`.containment`). Registration hooks and wrappers are never
dispatched. ``HERMES_TRACE_HOOKS=1`` traces every call to stderr.
"""

from __future__ import annotations

import inspect
import itertools
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pluggy

from .containment import describe, halts, reraise_async_shutdown, reraise_shutdown
from .hookspecs import DISPATCH, EVENT_HOOKS, MODULES, PROJECT_NAME, hook_arguments, hookimpl
from .hookspecs.results import COMBINE

log = logging.getLogger("hermes_agent.hooks")
TELEMETRY_SCHEMA_VERSION = "hermes.observer.v1"
_SPEC_NAMES: dict[str, frozenset[str]] = {}  # hook -> its spec's argument names
_EVENTS = frozenset(EVENT_HOOKS)
_FORWARDERS: dict[tuple[str, ...], Callable[..., Any]] = {}


def callback_argnames(fn: Callable[..., Any]) -> tuple[str, ...] | None:
    """The keyword names ``fn`` accepts; None when it takes ``**kwargs`` (or has no readable
    signature) and so gets the whole payload."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return tuple(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def _forwarder(argnames: tuple[str, ...], send: Callable[..., Any]) -> Callable[..., Any]:
    """A function taking exactly ``argnames`` (pluggy passes an implementation the arguments
    it declares, by position) that hands them to ``send`` by keyword."""
    make = _FORWARDERS.get(argnames)
    if make is None:  # the names are a hookspec's parameters, so valid identifiers
        params = ", ".join(argnames)
        keywords = ", ".join(f"{name}={name}" for name in argnames)
        namespace: dict[str, Any] = {}
        exec(f"def make(send):\n    def forward({params}):\n"  # noqa: S102 - our own text
             f"        return send({keywords})\n    return forward\n", namespace)
        make = _FORWARDERS[argnames] = namespace["make"]
    return make(send)


@dataclass(eq=False)  # compared by identity, as pluggy tells plugin objects apart
class HookCallback:
    """One implementation of a hook as the bus calls it."""

    hook: str
    fn: Callable[..., Any]
    plugin: str
    argnames: tuple[str, ...] | None  # None: takes **kwargs, gets the whole payload
    order: int = 1  # 0 tryfirst, 1 normal, 2 trylast
    description: str = ""

    @property
    def label(self) -> str:
        return f"{self.plugin}:{getattr(self.fn, '__qualname__', repr(self.fn))}"


def _kwargs(callback: HookCallback, payload: dict[str, Any]) -> dict[str, Any]:
    names = callback.argnames
    return payload if names is None else {n: payload[n] for n in names if n in payload}


class Subscription(HookCallback):
    """A ``ctx.register_hook`` callback, also a pluggy plugin: ``forward`` is its
    ``@hookimpl(specname=hook)``, so ``pm.hook.<hook>(...)`` reaches it too."""

    def __init__(self, hook: str, fn: Callable[..., Any], plugin: str, description: str = ""):
        super().__init__(hook, fn, plugin, callback_argnames(fn), 1, description)
        try:
            spec_args = hook_arguments(hook)
        except KeyError:  # an unknown hook: kept, but nothing fires it
            spec_args = ()
        forward = _forwarder(spec_args, lambda **payload: self.fn(**_kwargs(self, payload)))
        forward.__name__ = forward.__qualname__ = hook
        self.forward = hookimpl(specname=hook)(forward)

    @property
    def owner(self) -> str:
        """The hermes plugin that subscribed (pluggy knows the subscription by its own name)."""
        return self.plugin

    def __repr__(self) -> str:
        return f"<Subscription {self.plugin}:{self.hook}>"


class HookRegistry(pluggy.PluginManager):
    """The kernel's pluggy plugin manager, with every hookspec added. It also keeps the load
    order (pluggy's own list is LIFO), the plugins still loading (validated by pluggy, not
    dispatched until committed), and tells ``on_change`` of every change."""

    def __init__(self) -> None:
        super().__init__(PROJECT_NAME)
        self._count = itertools.count()
        self.rank: dict[str, int] = {}  # plugin name -> registration number (load order)
        self.loading: set[int] = set()  # ids of plugin objects registered but not committed
        self.on_change: Callable[[], None] | None = None  # the hook bus's cache reset
        for module in MODULES:
            self.add_hookspecs(module)

    def register(self, plugin: object, name: str | None = None, *,
                 loading: bool = False) -> str | None:
        if loading:
            self.loading.add(id(plugin))
        try:
            registered = super().register(plugin, name)
        except BaseException as exc:
            self.loading.discard(id(plugin))
            key = name or self.get_canonical_name(plugin)
            if isinstance(exc, pluggy.PluginValidationError) and self.get_plugin(key) is plugin:
                super().unregister(plugin, key)  # pluggy < 1.7 leaves an invalid one half-added
            raise
        if registered is not None:
            self.rank[registered] = next(self._count)
            self.changed()
        return registered

    def committed(self, plugin: object) -> None:
        """The plugin loaded (or failed and was removed): stop hiding it."""
        if id(plugin) in self.loading:
            self.loading.discard(id(plugin))
            self.changed()

    def unregister(self, plugin: object | None = None, name: str | None = None) -> Any:
        key = name if name is not None else self.get_name(plugin) if plugin is not None else None
        removed = super().unregister(plugin, name)
        self.rank.pop(key, None)  # type: ignore[arg-type]
        self.changed()
        return removed

    def parse_hookimpl_opts(self, plugin: object, name: str) -> Any:
        if isinstance(plugin, Subscription) and name != "forward":
            return None  # its callback may carry a marker of its own
        return super().parse_hookimpl_opts(plugin, name)

    def changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def subscribe(self, subscriptions: Iterable[Subscription]) -> None:
        """Register ``ctx.register_hook`` callbacks, all or none."""
        done: list[str] = []
        try:
            for subscription in subscriptions:
                name = f"{subscription.plugin}:register_hook:{subscription.hook}:{next(self._count)}"
                self.register(subscription, name)
                done.append(name)
        except BaseException:
            for name in done:
                self.unregister(name=name)
            raise

    def remove_plugin(self, owner: str) -> None:
        """Unregister the hermes plugin ``owner``: its own object and its callbacks."""
        for name, plugin in self.list_name_plugin():
            if name == owner or isinstance(plugin, Subscription) and plugin.plugin == owner:
                self.unregister(name=name)


def _run_awaitable(awaitable: Any) -> Any:
    """Run ``awaitable`` to its end; from a thread whose event loop is running, on another."""
    import asyncio

    async def wrap() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wrap())
    box: dict[str, Any] = {}

    def runner() -> None:
        try:
            box["value"] = asyncio.run(wrap())
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=runner, name="hermes-hook-await")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")


@dataclass
class HookBus:
    """Dispatches hooks to the implementations pluggy holds (see the module docstring)."""

    registry: HookRegistry = field(default_factory=HookRegistry)
    trace: bool = False
    errors: dict[str, int] = field(default_factory=dict)  # plugin -> callbacks that raised
    on_halt: Callable[[str, str, BaseException], Any] | None = None  # (plugin, where, exc)
    # hook -> its implementations in call order, as (function, argument names, callback) for
    # :meth:`call`'s loop; replaced whole when the registry changes, so a dispatch in progress
    # keeps its tuple
    _plans: dict[str, tuple[tuple[Any, Any, HookCallback], ...]] = field(default_factory=dict,
                                                                         repr=False)

    def __post_init__(self) -> None:
        self.registry.on_change = self._forget

    def _forget(self) -> None:
        self._plans = {}

    def _plan(self, hook: str) -> tuple[tuple[Any, Any, HookCallback], ...]:
        plans = self._plans  # a change while reading drops this dict, not the next one
        registry = self.registry
        caller = getattr(registry.hook, hook, None)
        found: list[tuple[int, int, HookCallback]] = []
        for impl in caller.get_hookimpls() if isinstance(caller, pluggy.HookCaller) else ():
            plugin = impl.plugin
            rank = registry.rank.get(impl.plugin_name, 0)
            if isinstance(plugin, Subscription):
                found.append((1, rank, plugin))
            elif (hook in _EVENTS and not (impl.wrapper or impl.hookwrapper)
                  and id(plugin) not in registry.loading):
                order = 0 if impl.tryfirst else 2 if impl.trylast else 1
                found.append((order, rank, HookCallback(hook, impl.function, impl.plugin_name,
                                                        tuple(impl.argnames), order)))
        found.sort(key=lambda item: item[:2])  # stable: pluggy's order within one plugin
        plan = plans[hook] = tuple((c.fn, c.argnames, c) for *_, c in found)
        return plan

    def _entries(self, hook: str) -> tuple[tuple[Any, Any, HookCallback], ...]:
        plan = self._plans.get(hook)
        return self._plan(hook) if plan is None else plan

    def _listeners(self, hook: str) -> tuple[HookCallback, ...]:
        return tuple(callback for *_, callback in self._entries(hook))

    def add_callback(self, hook: str, fn: Callable[..., Any], *, plugin: str,
                     description: str = "") -> None:
        self.registry.subscribe([Subscription(hook, fn, plugin, description)])

    def remove_plugin(self, plugin: str) -> None:
        self.registry.remove_plugin(plugin)

    def has_hook(self, hook: str) -> bool:
        """Cheap guard: is anyone listening? (Build expensive payloads only when True.)"""
        return bool(self._entries(hook))

    def callbacks(self, hook: str) -> list[HookCallback]:
        return list(self._listeners(hook))

    def hook_names(self, plugin: str) -> list[str]:
        names = [n for n, c in vars(self.registry.hook).items() if isinstance(c, pluggy.HookCaller)]
        return sorted(n for n in names if any(c.plugin == plugin for c in self.callbacks(n)))

    def _invoke(self, callback: HookCallback, payload: dict[str, Any]) -> tuple[bool, Any]:
        started = time.perf_counter()
        try:
            result = callback.fn(**_kwargs(callback, payload))
            if result is not None and inspect.isawaitable(result):
                result = _run_awaitable(result)
        except BaseException as exc:
            reraise_shutdown(exc)
            return self._failed(callback, exc)
        return self._done(callback, result, started)

    async def _ainvoke(self, callback: HookCallback, payload: dict[str, Any]) -> tuple[bool, Any]:
        started = time.perf_counter()
        try:
            result = callback.fn(**_kwargs(callback, payload))
            if result is not None and inspect.isawaitable(result):
                result = await result
        except BaseException as exc:
            reraise_async_shutdown(exc)
            return self._failed(callback, exc)
        return self._done(callback, result, started)

    def _failed(self, callback: HookCallback, exc: BaseException) -> tuple[bool, Any]:
        self.errors[callback.plugin] = self.errors.get(callback.plugin, 0) + 1
        log.warning("hook %r: callback %s raised %s (skipped)", callback.hook,
                    callback.label, describe(exc))
        self._trace(f"  {callback.label} raised {describe(exc)}")
        if halts(exc) and self.on_halt is not None:
            self.on_halt(callback.plugin, f"its {callback.hook} hook", exc)
        return False, None

    def _done(self, callback: HookCallback, result: Any, started: float) -> tuple[bool, Any]:
        if self.trace:
            self._trace(f"  {callback.label} -> {result!r:.200} "
                        f"({(time.perf_counter() - started) * 1000:.2f} ms)")
        return True, result

    def _trace(self, line: str) -> None:
        if self.trace:
            sys.stderr.write(f"[hermes hooks] {line}\n")

    def _payload(self, hook: str, payload: dict[str, Any]) -> dict[str, Any]:
        if self.trace:
            self._trace(f"{hook}({', '.join(sorted(payload))})")
        if hook in _EVENTS:  # pluggy-style impls may name any spec argument
            names = _SPEC_NAMES.get(hook)
            if names is None:
                names = _SPEC_NAMES[hook] = frozenset(hook_arguments(hook))
            if not payload.keys() >= names:
                payload.update(dict.fromkeys(n for n in names if n not in payload))
        payload["telemetry_schema_version"] = TELEMETRY_SCHEMA_VERSION  # filtered out by name
        return payload

    def call(self, hook: str, **payload: Any) -> list[Any]:
        """Call every callback; return their non-None results in call order."""
        calls = self._entries(hook)
        if not calls:
            return []
        if self.trace:
            return self._call(hook, [callback for *_, callback in calls], payload)
        payload = self._payload(hook, payload)
        results = []
        for fn, names, callback in calls:  # the hot path: _invoke inlined, no tracing
            try:
                result = fn(**payload) if names is None else fn(
                    **{n: payload[n] for n in names if n in payload})
                if result is not None and inspect.isawaitable(result):
                    result = _run_awaitable(result)
            except BaseException as exc:
                reraise_shutdown(exc)
                self._failed(callback, exc)
                continue
            if result is not None:
                results.append(result)
        return results

    def call_plugin(self, hook: str, plugin: str, **payload: Any) -> list[Any]:
        """Like :meth:`call`, for the callbacks of one plugin only (e.g. stopping just it)."""
        return self._call(hook, [c for c in self._listeners(hook) if c.plugin == plugin], payload)

    def _call(self, hook: str, callbacks: Iterable[HookCallback], payload: dict[str, Any]) -> list[Any]:
        if not callbacks:
            return []
        payload = self._payload(hook, payload)
        calls = (self._invoke(callback, payload) for callback in callbacks)
        return [result for ok, result in calls if ok and result is not None]

    async def acall(self, hook: str, **payload: Any) -> list[Any]:
        """Like :meth:`call`, from async code: sync callbacks run inline, coroutines are awaited."""
        callbacks = self._listeners(hook)
        if not callbacks:
            return []
        payload = self._payload(hook, payload)
        results = []
        for callback in callbacks:
            ok, result = await self._ainvoke(callback, payload)
            if ok and result is not None:
                results.append(result)
        return results

    def first(self, hook: str, accept: Callable[[Any], bool], **payload: Any) -> Any:
        """Call callbacks in order until one returns a value ``accept`` takes; return it."""
        callbacks = self._listeners(hook)
        if not callbacks:
            return None
        payload = self._payload(hook, payload)
        calls = (self._invoke(callback, payload) for callback in callbacks)
        return next((result for ok, result in calls if ok and result is not None
                     and accept(result)), None)

    def fire(self, hook: str, **payload: Any) -> Any:
        """Dispatch ``hook`` and combine the results by its documented rule."""
        how, combine = COMBINE[DISPATCH.get(hook, "broadcast")]
        if how == "first":
            return self.first(hook, combine, **payload)  # type: ignore[arg-type]
        results = self.call(hook, **payload)
        return combine(results) if combine else results
