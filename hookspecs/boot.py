"""Kernel lifetime hooks: the kernel has finished loading plugins, or is stopping one.

A kernel boots once: it discovers plugins, decides which load, loads them, and then
announces the outcome. Plugins that watch or record the other plugins listen here. When the
process exits, or a plugin is unloaded or removed, the plugin is told to stop what it
started.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .markers import hookspec

if TYPE_CHECKING:
    import os
    from collections.abc import Mapping

    from .payloads import ShutdownReason


@hookspec
def on_plugins_loaded(plugins: Mapping[str, Any], home: os.PathLike[str]) -> None:
    """Called once per kernel boot, after every plugin has loaded or failed to.

    :param plugins: Every discovered plugin by name, each a ``PluginStatus``: its state
        (``loaded``, ``failed``, ``disabled``, ``not enabled``, ...), the reason and code
        when it is not loaded, and what a loaded plugin registered. Read-only.
    :param home: The ``$HERMES_HOME`` directory of the kernel that booted.
    :returns: Ignored.

    Dispatch: broadcast. Every implementation runs; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: standalone plugins that inspect or record the other plugins; the
    builtin plugin-admin plugin keeps the load ledger that ``hermes plugins list`` shows.
    Fired: by the kernel, at the end of ``Kernel.boot()``.
    """


@hookspec
def on_shutdown(reason: ShutdownReason) -> None:
    """Called once per loaded plugin when the kernel stops it: stop what it started.

    A plugin that started a subprocess, a thread or a server in ``register(ctx)`` or in a
    hook stops it here (terminate the child and wait for it). The kernel calls it once: at
    ``Kernel.close()`` (the ``hermes`` command does that before the process exits) for every
    plugin still loaded, or when one plugin is unloaded (``Kernel.unregister_plugin``, which
    ``hermes plugins remove`` uses when the plugin is loaded in that process). It is not a
    session event: ``on_session_finalize`` marks the end of a conversation.

    :param reason: ``"exit"`` when the kernel closes, ``"unload"`` when only this plugin is
        unloaded or removed.
    :returns: Ignored.

    Dispatch: broadcast. Every implementation runs; return values are discarded. On unload
    only the unloaded plugin's implementations run.
    firstresult: no. historic: no.
    Implemented by: any plugin that starts processes, threads or servers.
    Fired: by the kernel, in ``Kernel.close()`` (reason ``"exit"``) and in
    ``Kernel.unregister_plugin()`` (reason ``"unload"``); at most once per plugin.
    """
