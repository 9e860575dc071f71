"""Questions the CLI asks, with and without a terminal: without one, the command says what
it would do and how to confirm on the command line, exits 1 and changes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

CODE = ("import sys; from hermes_agent.cli.root import main; "
        "sys.argv[0] = 'hermes'; sys.exit(main())")


def hermes(home: Path, *args: str, stdin: int | None = subprocess.DEVNULL,
           input: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HERMES_HOME": str(home)}
    env.pop("HERMES_RAISE_ERRORS", None)
    kwargs = {"input": input} if input is not None else {"stdin": stdin}
    return subprocess.run([sys.executable, "-c", CODE, *args], capture_output=True, text=True,
                          timeout=120, env=env, **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def old_sessions(home: Path) -> list[str]:
    """Three ended CLI sessions started 100 days ago and one active one."""
    from hermes_agent.builtin_plugins.sessions.store import SqliteSessionStore

    store = SqliteSessionStore(home / "state.db")
    old = time.time() - 100 * 86400
    ids = [store.create_session(f"old{i}", source="cli", started_at=old) for i in range(3)]
    for sid in ids:
        store.end_session(sid, "user")
    store.create_session("active", source="cli", started_at=old)
    store.close()
    return ids


def _remaining(home: Path) -> list[str]:
    from hermes_agent.builtin_plugins.sessions.store import SqliteSessionStore

    store = SqliteSessionStore(home / "state.db")
    try:
        return sorted(r["id"] for r in store.list_sessions(limit=100))
    finally:
        store.close()


def test_prune_without_a_terminal_says_how_many_and_how_to_confirm(home, old_sessions) -> None:
    done = hermes(home, "sessions", "prune")
    assert done.returncode == 1
    assert "Delete 3 ended sessions older than 90 days, with their messages?" in done.stderr
    assert "run it again with --yes" in done.stderr
    assert "Aborted!" not in done.stderr and "Traceback" not in done.stderr
    assert _remaining(home) == ["active", "old0", "old1", "old2"]
    assert hermes(home, "sessions", "prune", "--yes").stdout == "Deleted 3 session(s).\n"
    assert _remaining(home) == ["active"]
    again = hermes(home, "sessions", "prune")
    assert again.returncode == 0 and "nothing to delete" in again.stdout


def test_delete_without_a_terminal_explains_and_keeps_the_session(home, old_sessions) -> None:
    done = hermes(home, "sessions", "delete", "old1")
    assert done.returncode == 1
    assert "Delete session old1 and its messages?" in done.stderr
    assert "--yes" in done.stderr and "Traceback" not in done.stderr
    assert "old1" in _remaining(home)
    assert hermes(home, "sessions", "delete", "old1", "-y").returncode == 0
    assert "old1" not in _remaining(home)


def test_prune_at_a_terminal_states_the_count(home, old_sessions) -> None:
    """A real terminal (a pty) answers the question."""
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # the child: hermes on the pty
        os.environ["HERMES_HOME"] = str(home)
        os.execv(sys.executable, [sys.executable, "-c", CODE, "sessions", "prune"])
    seen = b""
    deadline = time.monotonic() + 60
    while b"[y/N]" not in seen and time.monotonic() < deadline:
        try:
            seen += os.read(fd, 1024)
        except OSError:
            break
    assert b"Delete 3 ended sessions older than 90 days, with their messages? [y/N]" in seen
    os.write(fd, b"y\n")
    while time.monotonic() < deadline:
        try:
            chunk = os.read(fd, 1024)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, seen
    assert b"Deleted 3 session(s)." in seen
    assert _remaining(home) == ["active"]


def test_plugin_install_without_a_terminal_asks_for_enable_or_no_enable(home, tmp_path) -> None:
    plugin = tmp_path / "hello_plugin"
    plugin.mkdir()
    (plugin / "plugin.yaml").write_text("name: hello_plugin\nversion: 1.0.0\n")
    (plugin / "__init__.py").write_text("def register(ctx):\n    pass\n")
    done = hermes(home, "plugins", "install", str(plugin))
    assert done.returncode == 1, done.stderr
    assert "Enable hello_plugin now?" in done.stderr and "--enable" in done.stderr
    assert "--no-enable" in done.stderr and "Aborted!" not in done.stderr
    assert not (home / "plugins" / "hello_plugin").exists()  # nothing was installed
    assert hermes(home, "plugins", "install", str(plugin), "--no-enable").returncode == 0
    assert (home / "plugins" / "hello_plugin").is_dir()
