"""`hermes sessions migrate`: copy every session and message from one store to another.

The source is only read (``export_all``). Sessions keep their ids; messages are numbered by the
target (their ids are the target's own), so several sources (a laptop's and a server's
state.db) merge into one store. Each session the target lacks arrives with its messages in one
transaction (``import_records``); one already there and identical is skipped (so an interrupted
run is resumed by running it again); one there and different is refused, named in the report,
and never overwritten. Then both sides are compared: the number of sessions and messages, and a
checksum per session over its row and its messages (without message ids).

A target is a state.db path (the sqlite store) or a DSN, opened through the installed store
that serves it (``postgres``: its ``at(dsn)`` gives a store at another address).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent.api import SessionImporter, SessionStore, SessionStoreError

if TYPE_CHECKING:
    from hermes_agent import Kernel

DSN_SCHEMES = ("postgresql://", "postgres://")
Progress = Callable[[str], None]


def is_dsn(location: str) -> bool:
    return location.startswith(DSN_SCHEMES) or ("=" in location and "dbname" in location)


def open_location(kernel: Kernel, location: str) -> SessionStore:
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
    """The session's row (but its title, see :func:`same`) and messages, without message ids,
    as a sha256 hex digest."""
    body = {k: v for k, v in record.items() if k not in ("messages", "title")}
    body["messages"] = [{k: v for k, v in m.items() if k not in ("id", "session_id")}
                        for m in record.get("messages") or []]
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def same(copy: dict[str, Any], record: dict[str, Any]) -> bool:
    """Whether ``copy`` (in the target) is ``record`` (from the source): the same checksum,
    and the same title or that title with the " #<n>" an import gives a taken one."""
    if checksum(copy) != checksum(record):
        return False
    title, copied = record.get("title"), copy.get("title")
    return copied == title or bool(title and copied and re.fullmatch(
        re.escape(str(title)) + r" #\d+", str(copied)))


def migrate(source: SessionStore, target: SessionStore,
            progress: Progress = lambda line: None) -> dict[str, Any]:
    """Copy the sessions ``target`` lacks, skip those it holds identical, refuse those it
    holds different (``refused``), then verify; returns counts and any mismatches."""
    if not isinstance(target, SessionImporter):
        raise SessionStoreError(f"the {target.name} store cannot import sessions "
                                "(it has no import_records)")
    target.list_sessions(limit=1)  # an unreachable target fails before the source is read
    copied = skipped = messages = 0
    refused: list[str] = []
    renamed: list[dict[str, Any]] = []
    for record in source.export_all():
        there = target.export_session(record["id"])
        if there is None:
            stats = target.import_records([record])
            copied += stats["sessions"]
            skipped += stats["skipped"]
            messages += stats["messages"]
            there = target.get_session(record["id"]) if stats["sessions"] else None
            if there is not None and there.get("title") != record.get("title"):
                renamed.append({"id": record["id"], "title": there.get("title"),
                                "source_title": record.get("title")})
        elif same(there, record):
            skipped += 1
        else:
            refused.append(record["id"])
        if (copied + skipped + len(refused)) % 500 == 0:
            progress(f"{copied + skipped + len(refused)} sessions done")
    report = verify(source, target)
    report.update(copied=copied, skipped=skipped, copied_messages=messages, refused=refused,
                  renamed=renamed)
    return report


def verify(source: SessionStore, target: SessionStore) -> dict[str, Any]:
    """Sessions and messages counted on both sides, and each source session compared with
    the target's copy (:func:`same`)."""
    mismatched: list[str] = []
    missing: list[str] = []
    sessions = total = 0
    for record in source.export_all():
        sessions += 1
        total += len(record["messages"])
        copy = target.export_session(record["id"])
        if copy is None:
            missing.append(record["id"])
        elif not same(copy, record):
            mismatched.append(record["id"])
    return {"sessions": sessions, "messages": total, "missing": missing,
            "mismatched": mismatched, "ok": not missing and not mismatched}
