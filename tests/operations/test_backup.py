"""`hermes backup` and `hermes restore` in subprocesses, on sessions written through the
session store's interface: a restored home has the same sessions, memory and config; keys
only with --include-secrets; modes kept; a non-empty home and a damaged archive refused;
state.db copied consistently while another process writes to it."""

from __future__ import annotations

import gzip
import io
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from .ops_home import environ, hermes, make_home, store_of

MEMORY = "Ada prefers short answers.\n§\nThe project lives in ~/src/engine.\n"


@pytest.fixture(autouse=True)
def _state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


def seed(home: Path) -> None:
    """Sessions (with messages, tool calls, titles and token counts), memory, a key, a plugin
    with an executable script, a cron job."""
    kernel, store = store_of(home)
    try:
        for i in range(12):
            sid = store.create_session(source="telegram" if i % 3 else "cli", model=f"m{i % 2}")
            store.append_message(sid, "user", f"question {i} about the engine")
            store.append_message(sid, "assistant", None, tool_calls=[{
                "id": f"call_{i}", "type": "function",
                "function": {"name": "terminal", "arguments": '{"command": "ls"}'}}])
            store.append_message(sid, "tool", "README.md", tool_call_id=f"call_{i}",
                                 tool_name="terminal")
            store.append_message(sid, "assistant", f"answer {i}")
            store.update_token_counts(sid, input_tokens=100 * i, output_tokens=10 * i,
                                      estimated_cost_usd=0.01 * i, api_call_count=2)
            store.set_session_title(sid, f"engine talk {i}")
            if i % 4 == 0:
                store.end_session(sid)
    finally:
        kernel.close()
    (home / "memories").mkdir(mode=0o700)
    (home / "memories" / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    (home / ".env").write_text("OPENROUTER_API_KEY=sk-or-test-123\n", encoding="utf-8")
    os.chmod(home / ".env", 0o600)
    plugin = home / "plugins" / "greeter"
    plugin.mkdir(parents=True)
    (plugin / "run.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(plugin / "run.sh", 0o750)
    (home / "cron").mkdir()
    (home / "cron" / "jobs.json").write_text('{"jobs": []}\n')


def sessions_of(home: Path) -> list[dict[str, Any]]:
    kernel, store = store_of(home)
    try:
        return sorted(store.export_all(), key=lambda s: s["id"])
    finally:
        kernel.close()


def backup(home: Path, out: Path, *args: str) -> Path:
    run = hermes(home, "backup", "-o", str(out), *args)
    assert run.code == 0, run.err
    archives = list(out.glob("hermes-backup-*.tar.gz")) if out.is_dir() else [out]
    assert len(archives) == 1, archives
    return archives[0]


def test_backup_then_restore_gives_the_same_sessions_memory_and_config(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    seed(home)
    out = tmp_path / "backups"
    out.mkdir()
    archive = backup(home, out)
    assert stat.S_IMODE(archive.stat().st_mode) == 0o600
    with tarfile.open(archive) as tar:
        names = tar.getnames()
    assert "home/.env" not in names and "home/state.db" in names
    assert not any(n.startswith("home/cache") or n.endswith(("-wal", "-shm")) for n in names)

    new = tmp_path / "restored"
    run = hermes(new, "restore", str(archive))
    assert run.code == 0, run.err
    assert "put them back into .env" in run.out
    # a backup written into the home (the default when run there) is not archived again
    inside = backup(home, home)
    with tarfile.open(inside) as tar:
        assert not any("hermes-backup-" in n for n in tar.getnames())

    before, after = sessions_of(home), sessions_of(new)
    assert len(after) == 12 and after == before
    assert {m["role"] for s in after for m in s["messages"]} == {"user", "assistant", "tool"}
    assert (new / "memories" / "MEMORY.md").read_text(encoding="utf-8") == MEMORY
    assert (new / "config.yaml").read_bytes() == (home / "config.yaml").read_bytes()
    assert not (new / ".env").exists()
    assert stat.S_IMODE((new / "plugins" / "greeter" / "run.sh").stat().st_mode) == 0o750
    assert stat.S_IMODE((new / "config.yaml").stat().st_mode) == 0o600
    assert stat.S_IMODE((new / "memories").stat().st_mode) == 0o700
    # the restored home works: the CLI reads its sessions
    listed = hermes(new, "sessions", "list")
    assert listed.code == 0 and "engine talk 11" in listed.out, listed.out + listed.err


def test_keys_only_with_include_secrets(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    seed(home)
    archive = backup(home, tmp_path / "with-keys.tar.gz", "--include-secrets")
    new = tmp_path / "restored"
    assert hermes(new, "restore", str(archive)).code == 0
    assert (new / ".env").read_text() == "OPENROUTER_API_KEY=sk-or-test-123\n"
    assert stat.S_IMODE((new / ".env").stat().st_mode) == 0o600


def test_a_non_empty_home_is_refused_unless_forced(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    seed(home)
    archive = backup(home, tmp_path / "b.tar.gz")
    other = make_home(tmp_path, "other")
    (other / "notes.txt").write_text("mine")
    run = hermes(other, "restore", str(archive))
    assert run.code == 1 and "is not empty" in run.err and "--force" in run.err
    assert not (other / "state.db").exists()
    forced = hermes(other, "restore", str(archive), "--force")
    assert forced.code == 0, forced.err
    assert (other / "notes.txt").read_text() == "mine"  # the home's other files stay
    assert len(sessions_of(other)) == 12


def test_a_damaged_archive_restores_nothing(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    seed(home)
    archive = backup(home, tmp_path / "b.tar.gz")
    # rewrite the archive with one changed byte in MEMORY.md (the manifest unchanged)
    damaged = tmp_path / "damaged.tar.gz"
    with tarfile.open(archive) as src, gzip.open(damaged, "wb") as raw, \
            tarfile.open(fileobj=raw, mode="w") as dst:
        for member in src.getmembers():
            data = src.extractfile(member).read() if member.isfile() else None  # type: ignore[union-attr]
            if member.name == "home/memories/MEMORY.md":
                data = data.replace(b"short", b"shirt")  # type: ignore[union-attr]
            dst.addfile(member, io.BytesIO(data) if data is not None else None)
    new = tmp_path / "restored"
    run = hermes(new, "restore", str(damaged))
    assert run.code == 1 and "does not match its checksum" in run.err, run.err
    assert not (new / "state.db").exists() and not (new / "memories").exists()
    not_backup = tmp_path / "x.tar.gz"
    not_backup.write_bytes(b"not an archive")
    assert "hermes backup" in hermes(new, "restore", str(not_backup)).err


WRITER = """
import sys, time
from hermes_agent.api import session_store
from hermes_agent.testing import make_kernel
kernel = make_kernel(sys.argv[1], builtins=True)
store = session_store(kernel)
sid = store.create_session(source="cli", model="writer")
print(sid, flush=True)
n = 0
while True:  # writes until killed: each message is its own transaction
    store.append_message(sid, "user", f"line {n} " + "x" * 2000)
    n += 1
    if n == 200:
        print("200", flush=True)
"""


def test_state_db_is_copied_consistently_while_a_writer_runs(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    seed(home)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(home)], env=environ(home),
                              stdout=subprocess.PIPE, text=True)
    try:
        sid = writer.stdout.readline().strip()  # type: ignore[union-attr]
        assert writer.stdout.readline().strip() == "200"  # type: ignore[union-attr]
        archive = backup(home, tmp_path / "live.tar.gz")
    finally:
        writer.kill()
        writer.wait(timeout=30)
    new = tmp_path / "restored"
    assert hermes(new, "restore", str(archive)).code == 0
    sessions = {s["id"]: s for s in sessions_of(new)}
    copied = sessions[sid]
    # one consistent state: the counter the same transaction updates matches the rows
    assert copied["message_count"] == len(copied["messages"]) >= 200
    assert [m["content"].split()[1] for m in copied["messages"]] == [
        str(n) for n in range(len(copied["messages"]))]
    assert len(sessions) == 13


def test_a_running_gateway_and_an_escaping_archive_are_refused(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    seed(home)
    archive = backup(home, tmp_path / "b.tar.gz")
    target = tmp_path / "target"
    (target / "gateway").mkdir(parents=True)
    sleeper = subprocess.Popen(["sleep", "300"])
    try:
        (target / "gateway" / "state.json").write_text(f'{{"pid": {sleeper.pid}}}')
        run = hermes(target, "restore", str(archive), "--force")
        assert run.code == 1 and f"a gateway (pid {sleeper.pid})" in run.err
    finally:
        sleeper.kill()
        sleeper.wait()
    # an archive whose member climbs out of the home, with a manifest that lists it
    with tarfile.open(archive) as src:
        manifest = src.extractfile("hermes-backup.json").read()  # type: ignore[union-attr]
    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as tar:
        for name, data in (("hermes-backup.json", manifest), ("home/../../escaped", b"x")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    fresh = tmp_path / "fresh"
    run = hermes(fresh, "restore", str(evil))
    assert run.code == 1 and "damaged or unsafe" in run.err, run.err
    assert not (tmp_path / "escaped").exists() and not (fresh / "state.db").exists()


PROVIDER = '''
import os
from hermes_agent.api import MemoryProvider

class OutsideMemory(MemoryProvider):
    name = "extmem"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        pass

    def get_tool_schemas(self):
        return []

    def backup_paths(self):
        return [os.environ["EXTMEM_DIR"], "relative/ignored"]

def register(ctx):
    ctx.register_memory_provider(OutsideMemory())
'''


def test_what_the_memory_provider_keeps_outside_the_home(tmp_path: Path) -> None:
    home = make_home(tmp_path, config={
        "model": {"provider": "custom", "base_url": "http://127.0.0.1:9/v1",
                  "default": "fake-model"}, "memory": {"provider": "extmem"}})
    folder = home / "plugins" / "extmem"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(PROVIDER)
    outside = tmp_path / "outside-memory"
    outside.mkdir()
    (outside / "facts.txt").write_text("tea, no sugar\n")
    conn = sqlite3.connect(outside / "facts.db")
    conn.execute("CREATE TABLE facts (text)")
    conn.execute("INSERT INTO facts VALUES ('likes tea')")
    conn.commit()
    conn.close()
    run = hermes(home, "backup", "-o", str(tmp_path / "b.tar.gz"), EXTMEM_DIR=str(outside))
    assert run.code == 0, run.err
    assert f"archived too: {outside}" in run.out
    shutil.rmtree(outside)
    new = tmp_path / "restored"
    done = hermes(new, "restore", str(tmp_path / "b.tar.gz"))
    assert done.code == 0, done.err
    assert f"{outside} restored" in done.out
    assert (outside / "facts.txt").read_text() == "tea, no sugar\n"
    conn = sqlite3.connect(outside / "facts.db")
    assert conn.execute("SELECT text FROM facts").fetchall() == [("likes tea",)]
    conn.close()
    again = hermes(tmp_path / "third", "restore", str(tmp_path / "b.tar.gz"))
    assert again.code == 0 and "exists and was left as it is" in again.out
