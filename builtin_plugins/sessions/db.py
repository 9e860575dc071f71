"""Connections to state.db: opening safely, writing under contention, background upkeep.

* Opening never overwrites anything: a file that is not SQLite, or is damaged, is an error
  naming the fix, and the file stays as it was.
* Writes run in ``BEGIN IMMEDIATE`` transactions with a short busy timeout; while another
  process holds the lock, the write is retried after short random pauses, then up to 15 times
  after a random 20-150 ms pause, so competing writers neither stall nor retry in lockstep.
* WAL with ``synchronous=NORMAL``: a committed write survives the process being killed; a power
  cut can lose the last few commits but never corrupts the file.
* A daemon thread with its own connection checkpoints the WAL every 50 writes (restarting it,
  so it stays a few MB) and merges FTS segments in small steps, so neither costs an append its
  latency; when nobody has written for two seconds it merges the indexes down further, so
  searches read few segments. If the thread is starved and falls 200 writes behind, the writer
  checkpoints itself, so the WAL stays bounded on a busy machine too.
"""

from __future__ import annotations

import logging
import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

from hermes_agent import private_dir
from hermes_agent.api import SessionStoreError

from . import cjk, shortest
from .health import damaged, verify
from .file_modes import create_database_file, open_private
from .schema import FTS_TABLES, check_supported, ensure_schema

log = logging.getLogger("hermes_agent.sessions")
T = TypeVar("T")

BUSY_TIMEOUT_MS = 2  # SQLite's own wait; our retries below do the rest
FAST_RETRY_S = 0.5
OPEN_TIMEOUT_MS = 2000  # opening (schema check, WAL recovery) may wait for other processes
WRITE_RETRIES = 15
RETRY_MIN_S, RETRY_MAX_S = 0.020, 0.150
CHECKPOINT_EVERY = 50
CHECKPOINT_LAG = 4 * CHECKPOINT_EVERY  # the upkeep thread is this far behind: writers help
MERGE_EVERY = 25
MERGE_PAGES = 64
IDLE_S = 2.0  # no writes for this long: compact the FTS indexes
_HEADER = b"SQLite format 3\x00"


def explain(exc: BaseException, path: Path, action: str = "open") -> SessionStoreError:
    """A clear SessionStoreError for an sqlite3 error on ``path``."""
    text = str(exc).lower()
    if "disk is full" in text or "disk i/o" in text and "full" in text:
        return SessionStoreError(
            f"cannot write {path}: the disk is full. Free some space and try again; everything "
            "saved before this write is intact.")
    if "readonly" in text or "read-only" in text or "unable to open" in text or (
            "permission" in text):
        return SessionStoreError(
            f"cannot {action} {path}: the file or its directory ({path.parent}) is not "
            "writable. Fix the permissions (the directory must be writable for the -wal and "
            "-shm files) or point HERMES_HOME elsewhere.")
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return damaged(path, exc)
    return SessionStoreError(f"session store {path}: {exc}")


def check_file(path: Path) -> None:
    """Refuse a non-empty file that is not an SQLite database, before SQLite touches it."""
    try:
        with path.open("rb") as handle:
            head = handle.read(16)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise SessionStoreError(f"cannot read {path}: {exc}. Fix its permissions.") from exc
    if head and head != _HEADER:
        raise SessionStoreError(
            f"{path} is not an SQLite database (it starts with {head[:8]!r}). It was not changed. "
            "Move it aside so hermes can create a new state.db there.")


def connect(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    """An autocommit connection with the store's pragmas (no schema work)."""
    if readonly:
        uri = Path(path).absolute().as_uri() + "?mode=ro"  # as_uri escapes ?, # and %
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False,
                               timeout=OPEN_TIMEOUT_MS / 1000)
    else:
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False,
                               timeout=OPEN_TIMEOUT_MS / 1000)
    conn.execute(f"PRAGMA busy_timeout = {OPEN_TIMEOUT_MS}")  # lowered once open
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA cache_size = -65536")  # 64 MiB at most: FTS merges stay in memory
    if not readonly:
        conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def open_database(path: Path) -> tuple[sqlite3.Connection, list[str], bool]:
    """Open (creating or upgrading) state.db at ``path``; returns the connection, what the
    schema step changed and whether the file is known to be sound (see :mod:`.health`).
    A damaged file is refused before anything is written to it."""
    try:
        private_dir(path.parent)
    except OSError as exc:
        raise SessionStoreError(f"cannot create {path.parent}: {exc}. Make the directory "
                                "writable or point HERMES_HOME elsewhere.") from exc
    check_file(path)
    create_database_file(path)
    conn = None
    try:
        conn = connect(path)
        sound = verify(conn, path)
        check_supported(conn, str(path))  # before WAL mode rewrites the header
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            log.warning("%s: WAL is not available here (journal_mode=%s); concurrent readers "
                        "will wait for writers", path, mode)
        conn.execute("PRAGMA wal_autocheckpoint = 0")  # the upkeep thread checkpoints
        changes = retry_busy(lambda: ensure_schema(conn, str(path)))
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    except SessionStoreError:
        if conn is not None:
            conn.close()
        raise
    except sqlite3.Error as exc:
        if conn is not None:
            conn.close()
        raise explain(exc, path) from exc
    return conn, changes, sound


def open_reader(path: Path) -> sqlite3.Connection:
    """A connection for reads only (``query_only``): under WAL it neither waits for writers
    nor makes them wait."""
    conn = connect(path)
    cjk.prepare(conn)  # a temp table: created before query_only forbids it
    shortest.prepare(conn)  # once: registering a function expires the prepared statements
    conn.execute("PRAGMA query_only = ON")
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.row_factory = sqlite3.Row
    return conn


def is_busy(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def retry_busy(fn: Callable[[], T]) -> T:
    """Run ``fn``; while another writer holds the lock, retry.

    For the first half second the retries are fine-grained (0.2-2 ms random pauses), so a
    write waits about as long as the other writer's transaction and not a polling interval
    more; SQLite's own busy handler backs off up to 100 ms per try, which is what made writers
    stall. After that, up to 15 retries after random 20-150 ms pauses (a writer that holds the
    lock for long, such as a big import)."""
    deadline = time.monotonic() + FAST_RETRY_S
    slow = 0
    while True:
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
            if time.monotonic() < deadline:
                time.sleep(random.uniform(0.0002, 0.002))
                continue
            slow += 1
            if slow >= WRITE_RETRIES:
                raise
            time.sleep(random.uniform(RETRY_MIN_S, RETRY_MAX_S))


class Upkeep:
    """Checkpoints and FTS merges on a daemon thread with its own connection."""

    def __init__(self, path: Path):
        self.path = path
        self.writes = 0
        self._pending = threading.Event()
        self._stop = False
        self._thread: threading.Thread | None = None
        self._since_checkpoint = 0
        self._since_merge = 0
        self._dirty = False  # merges happened since the last compaction
        self._lock = threading.Lock()

    def wrote(self, n: int = 1) -> bool:
        """Count ``n`` committed writes and wake the thread when a step is due. Returns True
        when the thread has fallen so far behind (a starved thread on a busy machine) that the
        writer should checkpoint itself (then call :meth:`checkpointed`)."""
        with self._lock:
            self._since_checkpoint += n
            self._since_merge += n
            due = self._since_checkpoint >= CHECKPOINT_EVERY or self._since_merge >= MERGE_EVERY
            behind = self._since_checkpoint >= CHECKPOINT_LAG
        if due:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="hermes-state-upkeep",
                                                daemon=True)
                self._thread.start()
            self._pending.set()
        return behind

    def checkpointed(self) -> None:
        with self._lock:
            self._since_checkpoint = 0

    def _run(self) -> None:
        try:
            conn = connect(self.path)
        except sqlite3.Error as exc:  # the writer's own connection reports real problems
            log.warning("session store upkeep disabled: %s", exc)
            return
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        gate = WriteGate(self.path)
        try:
            while not self._stop:
                if not self._pending.wait(timeout=IDLE_S):
                    self.compact(conn, gate)  # nobody wrote for a while
                    continue
                self._pending.clear()
                if self._stop:
                    break
                self.step(conn, gate)
                self._dirty = True
        finally:
            gate.close()
            conn.close()

    def compact(self, conn: sqlite3.Connection, gate: WriteGate) -> None:
        """While no one writes, merge the FTS indexes towards one segment each (searches read
        fewer segments), a few pages per transaction; a new write stops it."""
        if not self._dirty:
            return
        try:
            for table in FTS_TABLES:
                while not self._pending.is_set() and not self._stop:
                    before = conn.total_changes
                    with gate:
                        conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('merge', ?)",
                                     (-MERGE_PAGES,))
                    if conn.total_changes - before < 2:
                        break
                else:
                    return  # interrupted: try again at the next quiet moment
            self._dirty = False
            checkpoint_wal(conn, gate)
        except sqlite3.Error as exc:
            log.debug("session store compaction skipped: %s", exc)

    def step(self, conn: sqlite3.Connection, gate: WriteGate) -> None:
        with self._lock:
            merge = self._since_merge >= MERGE_EVERY
            checkpoint = self._since_checkpoint >= CHECKPOINT_EVERY
            if merge:
                self._since_merge = 0
            if checkpoint:
                self._since_checkpoint = 0
        try:
            if merge:
                merge_step(conn, gate)
            if checkpoint:
                checkpoint_wal(conn, gate)
        except sqlite3.Error as exc:
            log.debug("session store upkeep skipped: %s", exc)

    def stop(self) -> None:
        self._stop = True
        self._pending.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self._stop = False  # the store may be used (and reopened) again


class WriteGate:
    """An advisory lock file (``state.db-lock``) that this store's writers queue on.

    SQLite's lock is taken by polling, and a writer in a tight loop re-takes it before polling
    waiters wake up, so one of several writers could wait for many transactions in a row. A
    blocking ``flock`` wakes waiters the moment the lock is released, which hands the database
    over promptly. It is held only around one write transaction and released by the kernel
    if the process dies. Where it cannot be used (no fcntl, read-only directory) writes still
    work: SQLite's lock and the retries above are what keep them correct."""

    def __init__(self, path: Path):
        self.path = Path(f"{path}-lock")
        self.fd: int | None = None
        self.usable = fcntl is not None

    def __enter__(self) -> "WriteGate":
        if self.usable and self.fd is None:
            try:
                self.fd = open_private(self.path)
            except OSError:
                self.usable = False
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def merge_step(conn: sqlite3.Connection, gate: WriteGate, pages: int | None = None) -> None:
    """Merge a few FTS segments (bounded work) in one short write transaction per table."""
    for table in FTS_TABLES:
        with gate:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('merge', ?)",
                             (pages or MERGE_PAGES,))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise


def checkpoint_wal(conn: sqlite3.Connection, gate: WriteGate) -> None:
    """Copy the WAL into the database and make the next writer start the WAL from its
    beginning, so a steady stream of appends cannot make the file grow without bound.

    The bulk is copied without blocking anyone; then, holding the write gate, a RESTART
    checkpoint copies what writers appended meanwhile and waits (briefly) until no reader still
    uses the old frames. A reader in another process that keeps it busy only postpones the
    restart to the next checkpoint."""
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    with gate:
        conn.execute("PRAGMA wal_checkpoint(RESTART)").fetchall()


def file_size(path: Path) -> int:
    return sum(os.path.getsize(p) for p in (path, Path(f"{path}-wal")) if p.exists())
