"""Kernel lifetime hooks: the kernel asks plugins while loading the others, has finished
loading plugins, or is stopping one.

A kernel boots once: it discovers plugins, decides which load, loads them, and then
announces the outcome. While it loads, it asks the shipped plugins what only they know:
when each installed plugin was installed (the load order), and which provider a plugin
written for the original holds when it registers none. Two calls of a plugin's ``ctx`` are
answered the same way by the plugin owning the answer: ``ctx.inject_message`` (the running
conversation) and ``ctx.get_platform_adapter`` (the running gateway). Plugins that watch or record the
other plugins listen here. When the process exits, or a plugin is unloaded or removed, the
plugin is told to stop what it started.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .markers import hookspec

if TYPE_CHECKING:
    import os
    from collections.abc import Mapping, Sequence

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


@hookspec(firstresult=True)
def plugin_install_times(records: Sequence[Any]) -> Mapping[str, int | None] | None:
    """Asked once per kernel boot: when was each installed plugin installed?

    The kernel loads the plugins shipped with hermes first, then the installed ones
    earliest-installed first, so a name two plugins claim stays with the one that had it
    first. Install times are the business of whoever installs plugins, never the kernel's.

    :param records: The installed plugins about to load, each a ``PluginRecord`` (name,
        source, location, manifest). Read-only.
    :returns: A mapping of plugin name to install time (nanoseconds since the epoch; None:
        unknown, loaded first), or None to leave the question to another implementation.
        With no answer the installed plugins load by name.

    Dispatch: first result. Implementations run in order until one returns a value that
    is not None; that mapping is used.
    firstresult: yes. historic: no.
    Implemented by: the builtin plugin-admin plugin, from plugins.lock (``hermes plugins
    install`` writes it) and the plugins' folders.
    Fired: by the kernel, in ``Kernel.boot()``, once the shipped plugins are loaded and
    before any installed one is (not fired when none is installed).
    """


@hookspec(firstresult=True)
def find_slot_provider(slot: str, target: Any) -> Any:
    """Asked for a slot's plugin that registered no provider: which one does its code hold?

    The plugin was found in a slot's folder or entry-point group. Plugins written for Hermes Agent 0.19 as memory providers often register nothing: that
    version took the provider class their module defines. Recognising such code is
    compatibility policy, so the kernel asks instead of guessing.

    :param slot: The slot the plugin was found for (``"memory"``, ``"context_engine"``).
    :param target: What importing the plugin gave: its module, or the class or object its
        entry point names.
    :returns: The provider object (with a ``name``) to register in ``slot`` for the plugin,
        or None when the implementation recognises none.

    Dispatch: first result. Implementations run in order until one returns a value that
    is not None; that provider is registered. What an implementation raises (a provider
    class failing to instantiate) fails the plugin being loaded, with that error.
    firstresult: yes. historic: no.
    Implemented by: the builtin compat plugin (memory provider classes of the original).
    Fired: by the kernel, in ``Kernel.load()``, for a plugin of a slot that registered no
    provider.
    """


@hookspec(firstresult=True)
def inject_message(content: str, role: str) -> bool | None:
    """Asked by ``ctx.inject_message``: queue a message for the running conversation.

    A plugin calls ``ctx.inject_message(content, role="user")`` (the original's API) to have
    the conversation running in this process answer a message it did not get from the user.
    The kernel holds no conversation: the plugin driving one answers here.

    :param content: The message text.
    :param role: Its role, ``"user"`` unless the plugin said otherwise.
    :returns: True when the message was queued, False when it was refused (empty, not
        text), None when no conversation of this implementation is running.

    Dispatch: first result. Implementations run in order until one returns a value that
    is not None; ``ctx.inject_message`` returns whether it was True (no answer: False,
    with a warning).
    firstresult: yes. historic: no.
    Implemented by: the builtin agent plugin, while ``Agent.run_conversation`` runs (the
    message is delivered before the next model call).
    Fired: by ``PluginContext.inject_message``.
    """


@hookspec(firstresult=True)
def platform_adapter(name: str) -> Any:
    """Asked by ``ctx.get_platform_adapter``: the live adapter of a connected platform.

    :param name: The platform's name (``"telegram"``, ``"discord"``, ...).
    :returns: The connected adapter, or None when this implementation runs none by that name.

    Dispatch: first result. Implementations run in order until one returns a value that
    is not None; ``ctx.get_platform_adapter`` returns it (no answer: None).
    firstresult: yes. historic: no.
    Implemented by: the builtin gateway plugin, for the platforms its running gateway has
    connected in this process.
    Fired: by ``PluginContext.get_platform_adapter``; the cron plugin asks it to deliver a
    job's output to a connected platform.
    """
