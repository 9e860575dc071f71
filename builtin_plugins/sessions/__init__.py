"""Builtin plugin: the SQLite session store (``$HERMES_HOME/state.db``) and ``hermes sessions``.

``register(ctx)`` puts a lazy :class:`SqliteSessionStore` into the ``session_store`` slot under
the name ``sqlite``; the database is opened on the first call, never at registration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_agent import Kernel


def register(ctx: Any) -> None:
    from .store import SqliteSessionStore

    ctx.register_session_store(SqliteSessionStore(home=ctx.kernel.home))
    ctx.register_hook("doctor_checks", _doctor_checks,
                      description="hermes doctor: state.db's pages and search indexes")


def _doctor_checks(kernel: "Kernel", config: Any, offline: bool, **_: Any) -> Any:
    from .doctor import store_findings

    return store_findings(kernel, config)
