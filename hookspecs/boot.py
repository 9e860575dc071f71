"""Boot phase hooks: the kernel has finished loading plugins.

A kernel boots once: it discovers plugins, decides which load, loads them, and then
announces the outcome. Plugins that watch or record the other plugins listen here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .markers import hookspec

if TYPE_CHECKING:
    import os
    from collections.abc import Mapping


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
