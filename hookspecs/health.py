"""Health checks: ``hermes doctor`` asks every loaded plugin what is wrong in its part of the
setup (its configuration, keys, the services it reaches, the files it keeps).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .markers import hookspec

if TYPE_CHECKING:
    from collections.abc import Sequence


@hookspec
def doctor_checks(kernel: Any, config: Any, offline: bool) -> Sequence[Any] | None:
    """Asked by ``hermes doctor``: check this plugin's part of the setup, say what is wrong.

    Each plugin checks what only it knows: the sandbox (core tools), the model providers
    and their keys (models), the session store (sessions), the plugins (plugin admin). A
    check is quick (well under a second; a network probe has a short timeout) and changes
    nothing.

    :param kernel: The booted kernel of the ``hermes doctor`` run (its ``home``, ``env``,
        plugins and slots).
    :param config: The kernel's validated configuration (``Config``; ``config.get("a.b")``).
    :param offline: True with ``hermes doctor --offline``: make no network connection (a
        check that needs one returns nothing, or a finding saying it was skipped).
    :returns: A list of ``hermes_agent.api.Finding`` (check, status ``ok``/``warn``/``problem``,
        detail, fix), or None when there is nothing to report.

    Dispatch: gather. Every implementation runs; the lists they return are joined in call
    order (a single ``Finding`` counts as a list of one; the doctor reports anything that is
    not a ``Finding`` as a warning naming the plugin).
    firstresult: no. historic: no.
    Implemented by: the builtin core-tools, models, sessions, memory, gateway, cron,
    plugin-admin and doctor plugins, the bundled postgres store, and any plugin with something to check.
    Fired: by the builtin doctor plugin, in ``hermes doctor``, once per implementing plugin.
    """
