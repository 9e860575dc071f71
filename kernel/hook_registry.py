"""pluggy's plugin manager as the one registry of hook implementations.

Both plugin styles are pluggy hook implementations here. A plugin's ``@hookimpl``
functions are registered with the plugin, under its name, as pluggy registers them. Each
``ctx.register_hook(event, callback)`` callback is wrapped in a :class:`Subscription`: a
small plugin object whose one implementation (pluggy's ``specname`` option names the
hook) takes the spec's arguments and passes them on by keyword, registered under a name
derived from its plugin's. Removing a plugin removes both (:meth:`remove_plugin`).

The registry also keeps what the hook bus needs to read it quickly: the order plugins
were registered in (pluggy's own list is LIFO), the plugins still loading (registered,
so pluggy validates them, but not called until their plugin commits) and a listener told
of every change, so the bus rebuilds its cached call order then, and only then.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable, Iterable
from typing import Any

import pluggy

from .hookspecs import MODULES, PROJECT_NAME, hook_arguments, hookimpl


def callback_argnames(fn: Callable[..., Any]) -> tuple[str, ...] | None:
    """The keyword names ``fn`` accepts, or None when it takes ``**kwargs`` (or has no
    readable signature) and so gets the whole payload."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return tuple(p.name for p in params
                 if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


_FORWARDERS: dict[tuple[str, ...], Callable[..., Any]] = {}


def _forwarder(argnames: tuple[str, ...], send: Callable[..., Any]) -> Callable[..., Any]:
    """A function taking exactly ``argnames`` (pluggy passes an implementation the
    arguments it declares, by position) that hands them to ``send`` by keyword."""
    make = _FORWARDERS.get(argnames)
    if make is None:  # the names are a hookspec's parameters, so valid identifiers
        params = ", ".join(argnames)
        keywords = ", ".join(f"{name}={name}" for name in argnames)
        namespace: dict[str, Any] = {}
        exec(f"def make(send):\n    def forward({params}):\n"  # noqa: S102 - our own text
             f"        return send({keywords})\n    return forward\n", namespace)
        make = _FORWARDERS[argnames] = namespace["make"]
    return make(send)


class Subscription:
    """One ``ctx.register_hook`` callback as a pluggy plugin: its ``forward`` attribute is
    a ``@hookimpl(specname=hook)``. The bus calls ``callback`` directly with the whole
    payload (filtered to ``argnames`` unless it takes ``**kwargs``); a plain
    ``pm.hook.<hook>(...)`` reaches it through ``forward`` with the spec's arguments."""

    def __init__(self, hook: str, callback: Callable[..., Any], owner: str,
                 description: str = ""):
        self.hook = hook
        self.callback = callback
        self.owner = owner  # the hermes plugin that subscribed
        self.description = description
        self.argnames = callback_argnames(callback)
        try:
            spec_args = hook_arguments(hook)
        except KeyError:  # an unknown hook: kept, but nothing fires it
            spec_args = ()
        forward = _forwarder(spec_args, self.deliver)
        forward.__name__ = forward.__qualname__ = hook
        self.forward = hookimpl(specname=hook)(forward)

    def deliver(self, **payload: Any) -> Any:
        names = self.argnames
        return self.callback(**(payload if names is None else
                                {n: payload[n] for n in names if n in payload}))

    def __repr__(self) -> str:
        return f"<Subscription {self.owner}:{self.hook}>"


class HookRegistry(pluggy.PluginManager):
    """The kernel's pluggy plugin manager, with every hookspec added."""

    def __init__(self) -> None:
        super().__init__(PROJECT_NAME)
        self._count = itertools.count()
        self.rank: dict[str, int] = {}  # plugin name -> registration number (load order)
        self.loading: set[int] = set()  # ids of plugin objects registered but not committed
        self.on_change: Callable[[], None] | None = None  # the hook bus's cache reset
        for module in MODULES:
            self.add_hookspecs(module)

    # --- pluggy's registration, noted --------------------------------------------------
    def register(self, plugin: object, name: str | None = None, *,
                 loading: bool = False) -> str | None:
        """pluggy's ``register``; ``loading=True`` keeps the plugin's implementations out
        of hermes' dispatch until :meth:`committed`."""
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
        if key is not None:
            self.rank.pop(key, None)
        self.changed()
        return removed

    def parse_hookimpl_opts(self, plugin: object, name: str) -> Any:
        if isinstance(plugin, Subscription) and name != "forward":
            return None  # its callback may carry a marker of its own
        return super().parse_hookimpl_opts(plugin, name)

    def changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    # --- callbacks and plugins -----------------------------------------------------------
    def subscribe(self, subscriptions: Iterable[Subscription]) -> None:
        """Register ``ctx.register_hook`` callbacks, all or none."""
        done: list[str] = []
        try:
            for subscription in subscriptions:
                name = f"{subscription.owner}:register_hook:{subscription.hook}:{next(self._count)}"
                self.register(subscription, name)
                done.append(name)
        except BaseException:
            for name in done:
                self.unregister(name=name)
            raise

    def remove_plugin(self, owner: str) -> None:
        """Unregister the hermes plugin ``owner``: its own object and its callbacks."""
        for name, plugin in self.list_name_plugin():
            if name == owner or isinstance(plugin, Subscription) and plugin.owner == owner:
                self.unregister(name=name)
