"""Bad files and failing disks: clear errors, nothing overwritten, nothing committed lost."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from hermes_agent.api import SessionStoreError
from hermes_agent.builtin_plugins.sessions.store import SqliteSessionStore


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_non_sqlite_file_is_refused_and_kept(tmp_path):
    path = tmp_path / "state.db"
    path.write_text("these are my notes, not a database\n" * 20)
    before = digest(path)
    with pytest.raises(SessionStoreError, match="is not an SQLite database.*not changed"):
        SqliteSessionStore(path).create_session(source="cli")
    assert digest(path) == before and not Path(f"{path}-wal").exists()


def test_corrupt_database_is_refused_and_kept(tmp_path):
    path = tmp_path / "state.db"
    store = SqliteSessionStore(path)
    store.create_session("s", source="cli")
    store.close()
    data = bytearray(path.read_bytes())
    data[100:4096] = os.urandom(3996)  # header kept, schema page destroyed
    path.write_bytes(bytes(data))
    before = digest(path)
    with pytest.raises(SessionStoreError, match="damaged.*not changed"):
        SqliteSessionStore(path).get_session("s")
    assert digest(path) == before


@contextmanager
def read_only_dir(path: Path) -> Iterator[None]:
    """A directory where no file can be created: chmod, or chattr +i when running as root."""
    if os.geteuid() == 0:
        if shutil.which("chattr") is None or subprocess.run(
                ["chattr", "+i", str(path)], capture_output=True).returncode != 0:
            pytest.skip("running as root without chattr +i: cannot make a read-only directory")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True)
    else:
        path.chmod(0o555)
        try:
            yield
        finally:
            path.chmod(0o755)


def test_read_only_directory_gives_clear_error_and_keeps_data(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    store = SqliteSessionStore(home / "state.db")
    sid = store.create_session(source="cli")
    store.append_message(sid, "user", "committed before the directory became read-only")
    store.close()
    assert not (home / "state.db-wal").exists()
    with read_only_dir(home):
        with pytest.raises(SessionStoreError, match="not writable.*permissions"):
            SqliteSessionStore(home / "state.db").append_message(sid, "user", "new")
        with pytest.raises(SessionStoreError, match="cannot create"):
            SqliteSessionStore(home / "sub" / "state.db").get_session(sid)
    reopened = SqliteSessionStore(home / "state.db")
    assert [m["content"] for m in reopened.get_messages(sid)] == [
        "committed before the directory became read-only"]
    reopened.close()


def test_full_disk_gives_clear_error_and_keeps_committed_rows(tmp_path, integrity):
    store = SqliteSessionStore(tmp_path / "state.db")
    sid = store.create_session(source="cli")
    for i in range(20):
        store.append_message(sid, "user", f"kept message {i}")
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    store.conn.execute(f"PRAGMA max_page_count = {pages}")  # the file may not grow any more
    with pytest.raises(SessionStoreError, match="disk is full.*intact"):
        for i in range(200):
            store.append_message(sid, "user", "filler text that needs new pages " * 40)
    written = store.get_session(sid)["message_count"]
    assert written == len(store.get_messages(sid)) >= 20
    store.conn.execute("PRAGMA max_page_count = 1073741823")
    store.append_message(sid, "user", "space again")
    store.close()
    assert integrity(tmp_path / "state.db") == "ok"
    reopened = SqliteSessionStore(tmp_path / "state.db")
    assert len(reopened.get_messages(sid)) == written + 1
    assert len(reopened.search_messages("kept", limit=50)) == 20
    reopened.close()


def test_other_programs_database_is_refused(tmp_path):
    path = tmp_path / "state.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER)")
    conn.commit()
    conn.close()
    with pytest.raises(SessionStoreError, match="another program"):
        SqliteSessionStore(path).list_sessions()
