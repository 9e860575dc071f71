"""Bundled plugin: the ``postgres`` session store (``sessions.store: postgres``).

``register(ctx)`` puts a lazy :class:`PostgresSessionStore` into the ``session_store`` slot;
psycopg is imported and the server reached on the first call, never at registration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_agent import Kernel


def register(ctx: Any) -> None:
    from .store import PostgresSessionStore

    kernel = ctx.kernel
    ctx.register_session_store(PostgresSessionStore(
        dsn=lambda: kernel.config.get("sessions.dsn", "") or kernel.env.get("HERMES_POSTGRES_DSN", "")))
    ctx.register_hook("doctor_checks", _doctor_checks,
                      description="hermes doctor: the database answers")


def _doctor_checks(kernel: "Kernel", config: Any, offline: bool, **_: Any) -> Any:
    from .doctor import store_findings

    return store_findings(kernel, config, offline)
