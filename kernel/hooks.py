"""The hook bus: dispatches lifecycle events to every plugin, in plugin load order.

pluggy holds every hook implementation (see :mod:`.hook_registry`): a plugin's
``@hookimpl`` functions, which receive the arguments they name, and its
``ctx.register_hook`` callbacks, which receive the full payload as keywords (filtered to
their parameters unless they take ``**kwargs``). The bus keeps no list of its own: for
each hook it reads pluggy's implementations once, puts them in call order and caches
that tuple until the registry next changes.

Rules: implementations run in load order (``tryfirst``/``trylast`` respected); one that
raises is logged and skipped; one that raises ``SystemExit``, ``KeyboardInterrupt`` or
another ``BaseException`` is skipped too and reported to ``on_halt`` (the kernel unloads
its plugin), while a real Ctrl-C propagates (see :mod:`.containment`); an awaitable
result is awaited; ``HERMES_TRACE_HOOKS=1`` traces every call to stderr. How results
combine is each hook's dispatch rule (``hookspecs.DISPATCH``, applied by
``hookspecs.results``). Only event hooks' ``@hookimpl`` functions are dispatched:
registration hooks are called once while their plugin loads, and wrappers are skipped.
"""

from __future__ import annotations

import inspect
import logging
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pluggy import HookCaller as _HookCaller

from .containment import describe, halts, reraise_async_shutdown, reraise_shutdown
from .hook_registry import HookRegistry, Subscription
from .hookspecs import DISPATCH, EVENT_HOOKS, hook_arguments
from .hookspecs.results import COMBINE

log = logging.getLogger("hermes_agent.hooks")
TELEMETRY_SCHEMA_VERSION = "hermes.observer.v1"
_SPEC_NAMES: dict[str, frozenset[str]] = {}  # hook -> its spec's argument names
_EVENTS = frozenset(EVENT_HOOKS)


@dataclass
class HookCallback:
    """One implementation of a hook as the bus calls it (read from pluggy)."""

    hook: str
    fn: Callable[..., Any]
    plugin: str
    argnames: tuple[str, ...] | None  # None: takes **kwargs, gets the whole payload
    order: int = 1  # 0 tryfirst, 1 normal, 2 trylast
    description: str = ""

    @property
    def label(self) -> str:
        return f"{self.plugin}:{getattr(self.fn, '__qualname__', repr(self.fn))}"


def _run_awaitable(awaitable: Any) -> Any:
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_wrap(awaitable))
    box: dict[str, Any] = {}  # a loop runs in this thread: finish the coroutine on another one

    def runner() -> None:
        try:
            box["value"] = asyncio.run(_wrap(awaitable))
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=runner, name="hermes-hook-await")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")


async def _wrap(awaitable: Any) -> Any:
    return await awaitable


@dataclass
class HookBus:
    """Dispatches hooks to the implementations pluggy holds (see the module docstring)."""

    registry: HookRegistry = field(default_factory=HookRegistry)  # pluggy: the implementations
    trace: bool = False
    errors: dict[str, int] = field(default_factory=dict)  # plugin -> callbacks that raised
    # Told (plugin, where, exception) when a callback raises what would stop hermes.
    on_halt: Callable[[str, str, BaseException], Any] | None = None
    # hook -> its implementations in call order, read from the registry; the whole dict is
    # replaced when the registry changes, so a dispatch in progress keeps its tuple
    _plans: dict[str, tuple[HookCallback, ...]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.registry.on_change = self._forget

    def _forget(self) -> None:
        self._plans = {}

    def _plan(self, hook: str) -> tuple[HookCallback, ...]:
        """Read ``hook``'s implementations from pluggy, in call order, and cache them."""
        plans = self._plans  # a change while reading drops this dict, not the next one
        registry = self.registry
        caller = getattr(registry.hook, hook, None)
        found: list[tuple[int, int, HookCallback]] = []
        for impl in caller.get_hookimpls() if isinstance(caller, _HookCaller) else ():
            plugin = impl.plugin
            rank = registry.rank.get(impl.plugin_name, 0)
            if isinstance(plugin, Subscription):
                found.append((1, rank, HookCallback(hook, plugin.callback, plugin.owner,
                                                    plugin.argnames, 1, plugin.description)))
            elif (hook in _EVENTS and not (impl.wrapper or impl.hookwrapper)
                  and id(plugin) not in registry.loading):
                order = 0 if impl.tryfirst else 2 if impl.trylast else 1
                found.append((order, rank, HookCallback(hook, impl.function, impl.plugin_name,
                                                        tuple(impl.argnames), order)))
        found.sort(key=lambda item: item[:2])  # stable: pluggy's order within one plugin
        plan = plans[hook] = tuple(callback for *_, callback in found)
        return plan

    # --- registration -----------------------------------------------------------------
    def add_callback(self, hook: str, fn: Callable[..., Any], *, plugin: str,
                     description: str = "") -> None:
        """Subscribe a ``register_hook``-style callback (full payload as keywords) for
        ``plugin``: registered in pluggy like the kernel registers a plugin's callbacks."""
        self.registry.subscribe([Subscription(hook, fn, plugin, description)])

    def remove_plugin(self, plugin: str) -> None:
        """Unregister everything ``plugin`` implements from pluggy."""
        self.registry.remove_plugin(plugin)

    def _listeners(self, hook: str) -> tuple[HookCallback, ...]:
        callbacks = self._plans.get(hook)
        return self._plan(hook) if callbacks is None else callbacks

    def has_hook(self, hook: str) -> bool:
        """Cheap guard: is anyone listening? (Build expensive payloads only when True.)"""
        return bool(self._listeners(hook))

    def callbacks(self, hook: str) -> list[HookCallback]:
        return list(self._listeners(hook))

    def hook_names(self, plugin: str) -> list[str]:
        names = [n for n, caller in vars(self.registry.hook).items() if isinstance(caller, _HookCaller)]
        return sorted(n for n in names if any(c.plugin == plugin for c in self.callbacks(n)))

    # --- dispatch ---------------------------------------------------------------------------
    def _kwargs(self, callback: HookCallback, payload: dict[str, Any]) -> dict[str, Any]:
        if callback.argnames is None:  # ``payload`` already carries the telemetry key
            return payload
        return {name: payload[name] for name in callback.argnames if name in payload}

    def _invoke(self, callback: HookCallback, payload: dict[str, Any]) -> tuple[bool, Any]:
        started = time.perf_counter() if self.trace else 0.0
        try:
            result = callback.fn(**self._kwargs(callback, payload))
            if result is not None and inspect.isawaitable(result):
                result = _run_awaitable(result)
        except BaseException as exc:
            reraise_shutdown(exc)
            return self._failed(callback, exc)
        return self._done(callback, result, started)

    async def _ainvoke(self, callback: HookCallback, payload: dict[str, Any]) -> tuple[bool, Any]:
        started = time.perf_counter() if self.trace else 0.0
        try:
            result = callback.fn(**self._kwargs(callback, payload))
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
        if hook in EVENT_HOOKS:  # pluggy-style impls may name any spec argument
            names = _SPEC_NAMES.get(hook)
            if names is None:
                names = _SPEC_NAMES[hook] = frozenset(hook_arguments(hook))
            if not payload.keys() >= names:
                payload.update(dict.fromkeys(n for n in names if n not in payload))
        payload["telemetry_schema_version"] = TELEMETRY_SCHEMA_VERSION  # filtered out by name
        return payload

    def call(self, hook: str, **payload: Any) -> list[Any]:
        """Call every callback; return their non-None results in call order."""
        callbacks = self._plans.get(hook)
        if callbacks is None:
            callbacks = self._plan(hook)
        if not callbacks:
            return []
        payload = self._payload(hook, payload)
        results = []
        if self.trace:
            for callback in callbacks:
                ok, result = self._invoke(callback, payload)
                if ok and result is not None:
                    results.append(result)
            return results
        for callback in callbacks:  # the hot path: _invoke inlined, no tracing
            names = callback.argnames
            try:
                result = callback.fn(**(payload if names is None else
                                        {n: payload[n] for n in names if n in payload}))
                if result is not None and inspect.isawaitable(result):
                    result = _run_awaitable(result)
            except BaseException as exc:
                reraise_shutdown(exc)
                self._failed(callback, exc)
                continue
            if result is not None:
                results.append(result)
        return results

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

    def call_plugin(self, hook: str, plugin: str, **payload: Any) -> list[Any]:
        """Like :meth:`call`, for the callbacks of one plugin only (e.g. stopping just it)."""
        callbacks = [c for c in self._listeners(hook) if c.plugin == plugin]
        if not callbacks:
            return []
        payload = self._payload(hook, payload)
        results = []
        for callback in callbacks:
            ok, result = self._invoke(callback, payload)
            if ok and result is not None:
                results.append(result)
        return results

    def first(self, hook: str, accept: Callable[[Any], bool], **payload: Any) -> Any:
        """Call callbacks in order until one returns a value ``accept`` takes; return it."""
        callbacks = self._listeners(hook)
        if not callbacks:
            return None
        payload = self._payload(hook, payload)
        for callback in callbacks:
            ok, result = self._invoke(callback, payload)
            if ok and result is not None and accept(result):
                return result
        return None

    def fire(self, hook: str, **payload: Any) -> Any:
        """Dispatch ``hook`` and combine the results by its documented rule."""
        how, combine = COMBINE[DISPATCH.get(hook, "broadcast")]
        if how == "first":
            return self.first(hook, combine, **payload)  # type: ignore[arg-type]
        results = self.call(hook, **payload)
        return combine(results) if combine else results
