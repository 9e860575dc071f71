"""The gateway's shared queue in PostgreSQL, for several ``hermes gateway`` processes (replicas)
on one database. PostgreSQL is the only coordinator:

* an accepted message is a row of ``gateway_inbox`` (committed before the platform hears it
  was accepted; a platform's message id, when it has one, is stored once only), and a
  ``NOTIFY`` wakes idle replicas;
* a replica serves a chat while it holds the chat's lease (``gateway_leases``, renewed while
  it has work there): it claims the chat's messages in order, so one chat's turns never run
  in two replicas at once while different chats run in parallel across replicas;
* a replica that dies stops renewing; once its leases expire another replica takes the chats
  and runs again the messages the dead one had claimed (``attempts`` > 1) from the stored
  session;
* which session each chat continues (``gateway_chats``) and which replicas are alive
  (``gateway_replicas``) are shared too.

Times are the database's clock (``clock_timestamp()``), so replicas' clocks may differ.
"""

from __future__ import annotations

import json
import logging
from typing import Any

log = logging.getLogger("hermes_agent.gateway.postgres")
CHANNEL = "hermes_gateway"
NOW = "extract(epoch FROM clock_timestamp())"

CLAIM_CHATS = f"""
WITH wanted AS (
    SELECT i.chat_key FROM gateway_inbox i
    LEFT JOIN gateway_leases l ON l.chat_key = i.chat_key
    WHERE (l.chat_key IS NULL OR l.replica = %(me)s OR l.expires_at < {NOW})
      AND (i.claimed_by IS NULL OR i.claimed_by <> %(me)s)
    GROUP BY i.chat_key ORDER BY min(i.id) LIMIT %(limit)s)
INSERT INTO gateway_leases (chat_key, replica, expires_at)
SELECT chat_key, %(me)s, {NOW} + %(ttl)s FROM wanted
ON CONFLICT (chat_key) DO UPDATE SET replica = EXCLUDED.replica, expires_at = EXCLUDED.expires_at
    WHERE gateway_leases.replica = %(me)s OR gateway_leases.expires_at < {NOW}
RETURNING chat_key
"""
CLAIM_MESSAGES = """
UPDATE gateway_inbox SET claimed_by = %(me)s, attempts = attempts + 1
WHERE chat_key = ANY(%(chats)s) AND (claimed_by IS NULL OR claimed_by <> %(me)s)
RETURNING id, chat_key, message, attempts
"""


class SharedGatewayQueue:
    """The queue over the store's database (its pool runs every statement)."""

    def __init__(self, db: Any):
        self.db = db
        self._listener: Any = None  # the LISTEN connection, opened on the first wait
        self._leads: dict[str, Any] = {}  # role -> the connection holding its lock

    # --- messages ---------------------------------------------------------------------
    def accept(self, chat_key: str, message: dict[str, Any], dedupe_key: str | None) -> int | None:
        """Store a message; its id, or None when ``dedupe_key`` was stored before (a
        platform that delivered the same message to two replicas)."""
        def do(conn: Any) -> int | None:
            row = conn.execute(
                f"INSERT INTO gateway_inbox (chat_key, message, dedupe_key, accepted_at) "
                f"VALUES (%s, %s, %s, {NOW}) ON CONFLICT (dedupe_key) DO NOTHING RETURNING id",
                (chat_key, json.dumps(message, ensure_ascii=False), dedupe_key)).fetchone()
            conn.execute("SELECT pg_notify(%s, '')", (CHANNEL,))
            return None if row is None else int(row["id"])

        def landed(conn: Any) -> int | None:  # a lost commit: was it stored?
            if dedupe_key is None:
                return None
            row = conn.execute("SELECT id FROM gateway_inbox WHERE dedupe_key = %s",
                               (dedupe_key,)).fetchone()
            return None if row is None else int(row["id"])

        return self.db.run(do, recheck=landed, repeatable=dedupe_key is not None)

    def claim(self, replica: str, ttl: float, limit: int) -> list[tuple[int, str, dict[str, Any], int]]:
        """Lease up to ``limit`` chats with waiting messages that no live replica serves, and
        claim their unclaimed messages: ``(id, chat_key, message, attempts)`` in order."""
        def do(conn: Any) -> list[tuple[int, str, dict[str, Any], int]]:
            chats = [row["chat_key"] for row in conn.execute(
                CLAIM_CHATS, {"me": replica, "ttl": ttl, "limit": limit}).fetchall()]
            if not chats:
                return []
            rows = conn.execute(CLAIM_MESSAGES, {"me": replica, "chats": chats}).fetchall()
            return sorted((int(r["id"]), r["chat_key"], json.loads(r["message"]),
                           int(r["attempts"])) for r in rows)

        return self.db.run(do, repeatable=False)

    def lease(self, replica: str, chat_key: str, ttl: float) -> bool:
        """Take (or keep) the lease of one chat; False while another live replica holds it."""
        row = self.db.run(lambda conn: conn.execute(
            f"INSERT INTO gateway_leases (chat_key, replica, expires_at) VALUES (%s, %s, "
            f"{NOW} + %s) ON CONFLICT (chat_key) DO UPDATE SET replica = EXCLUDED.replica, "
            f"expires_at = EXCLUDED.expires_at WHERE gateway_leases.replica = %s OR "
            f"gateway_leases.expires_at < {NOW} RETURNING chat_key",
            (chat_key, replica, ttl, replica)).fetchone())
        return row is not None

    def done(self, message_id: int) -> None:
        self.db.run(lambda conn: conn.execute("DELETE FROM gateway_inbox WHERE id = %s",
                                              (message_id,)))

    def renew(self, replica: str, chat_keys: list[str], ttl: float) -> list[str]:
        """Extend this replica's leases of ``chat_keys``; returns those it still holds."""
        if not chat_keys:
            return []
        return [row["chat_key"] for row in self.db.run(lambda conn: conn.execute(
            f"UPDATE gateway_leases SET expires_at = {NOW} + %s WHERE replica = %s "
            "AND chat_key = ANY(%s) RETURNING chat_key", (ttl, replica, chat_keys)).fetchall())]

    def release(self, replica: str, chat_keys: list[str] | None = None) -> None:
        """Give up this replica's leases (of ``chat_keys``, else all of them)."""
        def do(conn: Any) -> None:
            if chat_keys is None:
                conn.execute("DELETE FROM gateway_leases WHERE replica = %s", (replica,))
            elif chat_keys:
                conn.execute("DELETE FROM gateway_leases WHERE replica = %s AND "
                             "chat_key = ANY(%s)", (replica, chat_keys))
        self.db.run(do)

    def depth(self) -> int:
        """Messages accepted and not answered yet, across every replica."""
        return int(self.db.run(lambda conn: conn.execute(
            "SELECT count(*) AS n FROM gateway_inbox").fetchone()["n"]))

    def wait(self, timeout: float) -> None:
        """Until a message is accepted somewhere (a NOTIFY) or ``timeout`` seconds pass."""
        import psycopg

        try:
            if self._listener is None:
                self._listener = self.db.connect(autocommit=True)
                self._listener.execute(f"LISTEN {CHANNEL}")
            for _ in self._listener.notifies(timeout=timeout, stop_after=1):
                break
        except psycopg.Error as exc:  # only a wake-up is lost: the next claim looks anyway
            log.debug("gateway queue: LISTEN failed: %s", exc)
            self.close()

    def try_lead(self, role: str) -> bool:
        """Whether this process holds (or now takes) the one lock of ``role`` among the
        replicas on this schema, e.g. the Telegram poller. The lock lives as long as a
        connection of its own: a replica that dies lets it go, and another takes it."""
        import psycopg

        if role in self._leads:
            return True
        conn = self.db.connect(autocommit=True)
        try:
            row = conn.execute("SELECT pg_try_advisory_lock(hashtext(%s || ':hermes-gateway:' "
                               "|| %s))", (self.db.schema, role)).fetchone()
        except psycopg.Error:
            conn.close()
            raise
        if row and row[0]:
            self._leads[role] = conn
            return True
        conn.close()
        return False

    def close(self) -> None:
        """The LISTEN connection and the locks this process leads (they pass to others)."""
        for conn in [self._listener, *self._leads.values()]:
            if conn is not None:
                try:
                    conn.close()
                except Exception as exc:
                    log.debug("gateway queue: closing a connection failed: %s", exc)
        self._listener, self._leads = None, {}

    # --- chats and replicas -----------------------------------------------------------
    def session_of(self, chat_key: str) -> str | None:
        row = self.db.run(lambda conn: conn.execute(
            "SELECT session_id FROM gateway_chats WHERE chat_key = %s", (chat_key,)).fetchone())
        return None if row is None else str(row["session_id"])

    def set_session(self, chat_key: str, session_id: str | None) -> None:
        def do(conn: Any) -> None:
            if session_id is None:
                conn.execute("DELETE FROM gateway_chats WHERE chat_key = %s", (chat_key,))
            else:
                conn.execute("INSERT INTO gateway_chats VALUES (%s, %s) ON CONFLICT (chat_key) "
                             "DO UPDATE SET session_id = EXCLUDED.session_id",
                             (chat_key, session_id))
        self.db.run(do)

    def claim_occurrence(self, replica: str, occurrence: str) -> bool:
        """Whether this replica runs a scheduled job's ``occurrence`` (the first to ask)."""
        def do(conn: Any) -> bool:
            return conn.execute(
                f"INSERT INTO gateway_cron_runs VALUES (%s, %s, {NOW}) ON CONFLICT "
                "(occurrence) DO NOTHING RETURNING occurrence", (occurrence, replica)
            ).fetchone() is not None

        def landed(conn: Any) -> bool | None:  # a lost commit: whose is it?
            row = conn.execute("SELECT replica FROM gateway_cron_runs WHERE occurrence = %s",
                               (occurrence,)).fetchone()
            return None if row is None else row["replica"] == replica

        return bool(self.db.run(do, recheck=landed, repeatable=False))

    def heartbeat(self, replica: str, info: dict[str, Any]) -> None:
        self.db.run(lambda conn: conn.execute(
            f"INSERT INTO gateway_replicas VALUES (%s, %s, {NOW}) ON CONFLICT (replica) DO "
            "UPDATE SET info = EXCLUDED.info, seen_at = EXCLUDED.seen_at",
            (replica, json.dumps(info))))

    def replicas(self, max_age: float) -> list[dict[str, Any]]:
        """The replicas seen in the last ``max_age`` seconds, with what they last said."""
        rows = self.db.run(lambda conn: conn.execute(
            f"SELECT replica, info, {NOW} - seen_at AS age FROM gateway_replicas "
            f"WHERE seen_at > {NOW} - %s ORDER BY replica", (max_age,)).fetchall())
        return [{"replica": r["replica"], "seen_seconds_ago": round(float(r["age"]), 1),
                 **json.loads(r["info"])} for r in rows]

    def leave(self, replica: str) -> None:
        """A replica stopping cleanly: its leases and its row go."""
        def do(conn: Any) -> None:
            conn.execute("DELETE FROM gateway_leases WHERE replica = %s", (replica,))
            conn.execute("DELETE FROM gateway_replicas WHERE replica = %s", (replica,))
        self.db.run(do)

