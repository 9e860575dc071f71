"""`hermes sessions migrate`: copy every session and message from one store to another.

The source is only read (``export_all``); the target gets each missing session with its
messages, which keep their ids, in one transaction (``import_records``), so an interrupted run is resumed by running
it again: sessions already copied are skipped. Then both sides are compared: the number of
sessions and messages, and a checksum per session over its row and its messages (everything
but the message ids, which each store numbers itself).

A target is a state.db path (the sqlite store) or a DSN, opened through the installed store
that serves it (``postgres``: its ``at(dsn)`` gives a store at another address).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes_agent.api import SessionStore, SessionStoreError

DSN_SCHEMES = ("postgresql://", "postgres://")
Progress = Callable[[str], None]


def is_dsn(location: str) -> bool:
    return location.startswith(DSN_SCHEMES) or ("=" in location and "dbname" in location)


def open_location(kernel: Any, location: str) -> SessionStore:
    """A store at ``location``: a DSN through the installed ``postgres`` store, else a path."""
    if is_dsn(location):
        try:
            server = kernel.slots.get("session_store", "postgres")
        except Exception as exc:
            raise SessionStoreError(f"{location.split('@')[-1]} is a PostgreSQL address but the "
                                    "postgres session store is not installed: pip install "
                                    "'hermes-agent-runtime[session-postgres]'") from exc
        return server.at(location)  # type: ignore[no-any-return]
    from .store import SqliteSessionStore

    return SqliteSessionStore(Path(location).expanduser())


def checksum(record: dict[str, Any]) -> str:
    """The session's row and messages, without message ids, as a sha256 hex digest."""
    body = {k: v for k, v in record.items() if k != "messages"}
    body["messages"] = [{k: v for k, v in m.items() if k not in ("id", "session_id")}
                        for m in record.get("messages") or []]
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def migrate(source: SessionStore, target: SessionStore,
            progress: Progress = lambda line: None) -> dict[str, Any]:
    """Copy what ``target`` lacks, then verify; returns counts and any mismatches."""
    importer = getattr(target, "import_records", None)
    if importer is None:
        raise SessionStoreError(f"the {target.name} store cannot import sessions "
                                "(it has no import_records)")
    copied = skipped = messages = 0
    for record in source.export_all():
        stats = importer([record], keep_message_ids=True)
        copied += stats["sessions"]
        skipped += stats["skipped"]
        messages += stats["messages"]
        if (copied + skipped) % 500 == 0:
            progress(f"{copied + skipped} sessions done")
    report = verify(source, target)
    report.update(copied=copied, skipped=skipped, copied_messages=messages)
    return report


def verify(source: SessionStore, target: SessionStore) -> dict[str, Any]:
    """Sessions and messages counted on both sides, and each source session's checksum
    compared with the target's copy."""
    mismatched: list[str] = []
    missing: list[str] = []
    sessions = total = 0
    for record in source.export_all():
        sessions += 1
        total += len(record["messages"])
        copy = target.export_session(record["id"])
        if copy is None:
            missing.append(record["id"])
        elif checksum(copy) != checksum(record):
            mismatched.append(record["id"])
    return {"sessions": sessions, "messages": total, "missing": missing,
            "mismatched": mismatched, "ok": not missing and not mismatched}
