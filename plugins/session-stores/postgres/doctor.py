"""``hermes doctor``'s check of the PostgreSQL session store (``doctor_checks``): the DSN is
set and valid, and the server answers (one connection, ``SELECT version()``; skipped
offline). Nothing is created or migrated."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_agent.api import Finding

if TYPE_CHECKING:
    from hermes_agent import Kernel

CHECK = "postgres"
TIMEOUT_S = 3


def store_findings(kernel: "Kernel", config: Any, offline: bool) -> list[Finding]:
    if config.get("sessions.store") != "postgres":
        return []
    dsn = config.get("sessions.dsn", "") or kernel.env.get("HERMES_POSTGRES_DSN", "")
    if not dsn:
        return [Finding(CHECK, "problem", "sessions.store is 'postgres' but no database is "
                        "named", "set sessions.dsn in config.yaml or HERMES_POSTGRES_DSN in "
                        f"{kernel.home / '.env'} (e.g. postgresql://hermes@127.0.0.1:5432/hermes)")]
    import psycopg

    from .connection import _reason, connect_fix, mask_dsn

    label = mask_dsn(dsn)
    try:
        psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as exc:
        return [Finding(CHECK, "problem", f"{label!r} is not a valid PostgreSQL address "
                        f"({_reason(exc, '')})",
                        "write it as postgresql://USER:PASSWORD@HOST:5432/DATABASE")]
    if offline:
        return [Finding(CHECK, "ok", f"{label} (not reached: --offline)")]
    try:
        with psycopg.connect(dsn, connect_timeout=TIMEOUT_S) as conn:
            version = str(conn.execute("SELECT version()").fetchone()[0]).split(" on ")[0]
    except psycopg.Error as exc:
        reason = _reason(exc, dsn)
        return [Finding(CHECK, "problem", f"cannot connect to {label}: {reason}",
                        f"{connect_fix(reason)} (sessions.dsn or HERMES_POSTGRES_DSN)")]
    return [Finding(CHECK, "ok", f"{label} answers ({version})")]
