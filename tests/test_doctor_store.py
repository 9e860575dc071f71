"""``hermes doctor`` and the session stores (a damaged state.db page, a search index out of
step with the messages, PostgreSQL reachable or not), and the disk-space thresholds."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from doctor_home import doctor, make_home

from hermes_agent.builtin_plugins.doctor.home_checks import MIB, disk_finding


def seed_sessions(home: Path, sessions: int = 30) -> Path:
    """A real state.db written by the store, checkpointed into the main file."""
    from hermes_agent.builtin_plugins.sessions.store import SqliteSessionStore

    store = SqliteSessionStore(home=home)
    for i in range(sessions):
        sid = store.create_session(source="cli", model="fake-model")
        for j in range(20):
            store.append_message(sid, "user", f"message {i} {j} " + "lorem ipsum " * 30)
    store.close()
    path = home / "state.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


def test_a_sound_state_db(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    seed_sessions(home)
    run = doctor(home, "--offline")
    assert [f["status"] for f in run.named("state.db")] == ["ok"]
    assert [f["status"] for f in run.named("session search")] == ["ok"]


def test_a_damaged_state_db_page(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    path = seed_sessions(home)
    conn = sqlite3.connect(path)
    (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'messages'").fetchone()
    (page_size,) = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    data = bytearray(path.read_bytes())
    offset = (root + 1) * page_size  # a page of the messages table after its root
    data[offset:offset + 64] = b"\xff" * 64
    path.write_bytes(bytes(data))
    before = path.read_bytes()
    run = doctor(home, "--offline")
    (found,) = run.named("state.db")
    assert found["status"] == "problem" and f"{path} is damaged" in found["detail"]
    assert f"mv {path} {path}.damaged" in found["fix"] and ".recover" in found["fix"]
    assert "hermes sessions import" in found["fix"] and run.code == 1
    assert path.read_bytes() == before  # the check wrote nothing


def test_a_search_index_out_of_step_with_the_messages(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    path = seed_sessions(home, sessions=3)
    conn = sqlite3.connect(path, isolation_level=None)
    for (trigger,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute("UPDATE messages SET content = 'zebra' WHERE id IN "
                 "(SELECT id FROM messages LIMIT 5)")  # the index keeps the old words
    conn.close()
    run = doctor(home, "--offline")
    assert run.named("state.db")[0]["status"] == "ok"  # every page is sound
    (found,) = run.named("session search")
    assert found["status"] == "problem" and "messages_fts" in found["detail"]
    assert "INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')" in found["fix"]


def test_slot_selections_nobody_provides(tmp_path: Path) -> None:
    home = make_home(tmp_path, {"sessions": {"store": "nosuch"}, "web": {"backend": "nosuch2"}})
    run = doctor(home, "--offline")
    (store,) = run.named("session store")
    assert store["status"] == "problem" and "'nosuch'" in store["detail"]
    assert "installed: postgres, sqlite" in store["detail"]
    assert store["fix"] == "set sessions.store to one of those, or install and enable the " \
                           "plugin that provides 'nosuch'."
    (web,) = run.named("web search provider")
    assert web["status"] == "problem" and "'nosuch2'" in web["detail"] and run.code == 1
    assert run.named("state.db") == []  # sqlite is not the store in use


def test_postgres_unreachable_and_reachable(tmp_path: Path, postgres_dsn: str) -> None:
    home = make_home(tmp_path, {"sessions": {"store": "postgres",
                                             "dsn": "postgresql://hermes:pw@127.0.0.1:9/x"},
                                "model": {"provider": "custom", "default": "m",
                                          "base_url": "http://127.0.0.1:9/v1"}})
    run = doctor(home)
    (found,) = run.named("postgres")
    assert found["status"] == "problem" and "cannot connect to" in found["detail"]
    assert "start the server or fix the host and port" in found["fix"]
    assert "pw" not in found["detail"]  # the password is masked
    assert run.named("state.db") == []  # the sqlite store is not the one in use
    offline = doctor(home, "--offline").named("postgres")
    assert offline[0]["status"] == "ok" and "--offline" in offline[0]["detail"]
    second = tmp_path / "second"
    second.mkdir()
    home2 = make_home(second, {"sessions": {"store": "postgres", "dsn": postgres_dsn}})
    (online,) = doctor(home2).named("postgres")
    assert online["status"] == "ok" and "answers (PostgreSQL" in online["detail"]


@pytest.mark.parametrize(("free_mib", "status"), [(50, "problem"), (199, "problem"),
                                                  (200, "warn"), (1023, "warn"),
                                                  (1024, "ok"), (50_000, "ok")])
def test_disk_thresholds(free_mib: int, status: str) -> None:
    found = disk_finding(free_mib * MIB, 100_000 * MIB, where="/h")
    assert found.status == status
    assert f"{free_mib:,} MiB free" in found.detail
    assert (found.fix != "") == (status != "ok")


def test_disk_thresholds_are_parameters() -> None:
    found = disk_finding(500 * MIB, 1000 * MIB, where="/h", problem_below=600 * MIB)
    assert found.status == "problem" and "hermes sessions prune" in found.fix
