"""The file tools attacked as a prompt-injected model would: links, hard links and /proc paths
to secrets, a link swapped between the check and the open, devices and named pipes, huge
lines, writes onto credentials and hermes's own files, odd .gitignore lines. Real files in a
fake ``$HOME`` (see :func:`.test_credential_read.secrets`), the real tools."""

from __future__ import annotations

import json
import os
import threading
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .conftest import Call
from .test_credential_read import SENTINEL, Secrets, secrets  # noqa: F401  (the fixture)


def within(seconds: float, fn: Callable[[], Any]) -> Any:
    """``fn()``, failing the test (instead of hanging it) when it takes longer."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001  (re-raised below)
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still running after {seconds}s"
    if "error" in box:
        raise box["error"]
    return box["value"]


# --- reading secrets by another name ---------------------------------------------------------

def test_the_process_environment_is_not_read(call: Call, secrets: Secrets,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """hermes's environment holds the keys loaded from its .env; /proc/self/environ is that
    environment, under whatever name it is reached."""
    monkeypatch.setenv("OPENROUTER_API_KEY", SENTINEL)
    os.putenv("OPENROUTER_API_KEY", SENTINEL)  # /proc shows the C environment
    (secrets.work / "env-view").symlink_to("/proc/self/environ")
    for path in ("/proc/self/environ", f"/proc/{os.getpid()}/environ",
                 f"/proc/self/task/{threading.get_native_id()}/environ",
                 "/proc/thread-self/environ", "env-view"):
        result = call("read_file", {"path": path})
        assert SENTINEL not in json.dumps(result), path
        assert "holds secrets" in result["error"], path
    found = call("search_files", {"pattern": "OPENROUTER", "path": str(secrets.work)})
    assert SENTINEL not in json.dumps(found) and found["total"] == 0


def test_a_hard_link_to_a_secret_is_refused(call: Call, secrets: Secrets) -> None:
    os.link(secrets.home / ".ssh" / "id_ed25519", secrets.work / "innocent.txt")
    os.link(secrets.hermes / ".env", secrets.work / "settings.ini")
    for name in ("innocent.txt", "settings.ini"):
        result = call("read_file", {"path": name})
        assert SENTINEL not in json.dumps(result) and "holds secrets" in result["error"]
        assert "hard link" in result["error"]
    found = call("search_files", {"pattern": "SENTINEL", "path": str(secrets.work)})
    assert found["total"] == 0
    patched = call("patch", {"path": "innocent.txt", "old_string": "PRIVATE", "new_string": "X"})
    assert SENTINEL not in json.dumps(patched) and "holds secrets" in patched["error"]


def _files(secrets: Secrets) -> dict[Path, bytes]:
    """The bytes of every file in the homes, but the workspace checkpoints hermes itself
    keeps (a refused write is still checkpointed before)."""
    own = secrets.hermes / "checkpoints"
    return {p: p.read_bytes() for p in (*secrets.home.rglob("*"), *secrets.hermes.rglob("*"))
            if p.is_file() and own not in p.parents}


@pytest.mark.parametrize("path", ["/proc/self/root{home}/.ssh/id_ed25519",
                                  "{work}/../fakehome/.ssh/id_ed25519",
                                  "{work}/key-link/../../fakehome/.aws/credentials",
                                  "~/.ssh/../.ssh/./id_ed25519"])
def test_other_spellings_of_a_secret_are_refused(call: Call, secrets: Secrets,
                                                 path: str) -> None:
    raw = path.format(home=secrets.home, work=secrets.work)
    result = call("read_file", {"path": raw})
    assert SENTINEL not in json.dumps(result) and "error" in result, raw


def test_an_open_descriptor_of_a_secret_is_refused(call: Call, secrets: Secrets) -> None:
    fd = os.open(secrets.home / ".netrc", os.O_RDONLY)
    try:
        for path in (f"/proc/self/fd/{fd}", f"/dev/fd/{fd}"):
            result = call("read_file", {"path": path})
            assert SENTINEL not in json.dumps(result) and "holds secrets" in result["error"]
    finally:
        os.close(fd)


def test_a_link_swapped_between_the_check_and_the_open_never_leaks(call: Call,
                                                                   secrets: Secrets) -> None:
    """The attacker flips a project link between a harmless file and a key while read_file
    runs: whatever it opens is checked, not what it looked at a moment before."""
    harmless = secrets.work / "notes.txt"
    secret = secrets.home / ".ssh" / "id_ed25519"
    link, spare = secrets.work / "flip", secrets.work / ".flip.tmp"
    link.symlink_to(harmless)
    stop = threading.Event()

    def flipper() -> None:
        while not stop.is_set():
            for target in (secret, harmless):
                spare.unlink(missing_ok=True)
                spare.symlink_to(target)
                os.replace(spare, link)

    thread = threading.Thread(target=flipper, daemon=True)
    thread.start()
    leaked, reads = [], 0
    try:
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            for tool, args in (("read_file", {"path": "flip"}),
                               ("patch", {"path": "flip", "old_string": "PRIVATE KEY",
                                          "new_string": "PUBLIC KEY"})):
                text = json.dumps(call(tool, args))
                reads += 1
                if SENTINEL in text:
                    leaked.append(tool)
    finally:
        stop.set()
        thread.join()
    assert reads > 50 and not leaked
    assert SENTINEL in secret.read_text() and "PRIVATE KEY" in secret.read_text()


# --- devices, pipes and huge files -------------------------------------------------------------

def test_pipes_and_devices_are_refused_without_hanging(call: Call, work: Path) -> None:
    os.mkfifo(work / "pipe")
    (work / "pipe-link").symlink_to(work / "pipe")
    (work / "zero-link").symlink_to("/dev/zero")
    for path in ("pipe", "pipe-link", "/dev/zero", "/dev/urandom", "zero-link"):
        result = within(5, lambda p=path: call("read_file", {"path": p}))
        assert "not a regular file" in result["error"], (path, result)
        assert "error" in within(5, lambda p=path: call("patch", {
            "path": p, "old_string": "a", "new_string": "b"}))
    (work / "text.txt").write_text("needle\n")
    found = within(10, lambda: call("search_files", {"pattern": "needle", "path": str(work)}))
    assert [m["path"] for m in found["matches"]] == ["text.txt"]


def test_a_huge_file_is_read_and_refused_in_little_memory(call: Call, work: Path) -> None:
    big = work / "one-line.min.js"
    with big.open("w") as handle:
        for _ in range(64):
            handle.write("x" * (1 << 20))
        handle.write("\nsecond line\n")
    tracemalloc.start()
    try:
        result = call("read_file", {"path": "one-line.min.js"})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result["total_lines"] == 2 and "2|second line" in result["content"]
    assert result["content"].startswith("1|" + "x" * 100) and "[line truncated]" in result["content"]
    assert peak < 16 << 20, f"peak {peak / 2**20:.0f} MiB for a 64 MiB line"
    with big.open("a") as handle:  # past patch's cap
        for _ in range(-(-(50_000_001 - big.stat().st_size) // (1 << 20))):
            handle.write("y" * (1 << 20))
    tracemalloc.start()
    try:
        patched = call("patch", {"path": "one-line.min.js", "old_string": "second",
                                 "new_string": "2nd"})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "larger than 50,000,000 bytes" in patched["error"] and "terminal" in patched["error"]
    assert peak < 64 << 20, f"patch peaked at {peak / 2**20:.0f} MiB"


# --- writing where it must not ------------------------------------------------------------------

@pytest.mark.parametrize("path", ["{hermes}/.env", "{hermes}/auth.json", "{hermes}/config.yaml",
                                  "{hermes}/state.db", "{hermes}/state.db-wal",
                                  "{home}/.ssh/authorized_keys", "{home}/.ssh/id_ed25519",
                                  "{home}/.aws/credentials", "{home}/.bashrc", "~/.zshrc",
                                  "key-link", "ssh-dir/authorized_keys", "cfg-link"])
def test_writes_onto_credentials_and_hermes_own_files_are_refused(
        call: Call, secrets: Secrets, path: str) -> None:
    (secrets.work / "ssh-dir").symlink_to(secrets.home / ".ssh")
    (secrets.hermes / "config.yaml").write_text("approvals:\n  mode: manual\n")
    (secrets.work / "cfg-link").symlink_to(secrets.hermes / "config.yaml")
    raw = path.format(home=secrets.home, hermes=secrets.hermes)
    before = _files(secrets)
    wrote = call("write_file", {"path": raw, "content": "approvals:\n  mode: off\n"})
    patched = call("patch", {"path": raw, "old_string": "manual", "new_string": "off"})
    for result in (wrote, patched):
        assert "error" in result and "terminal" in result["error"], (raw, result)
        assert SENTINEL not in json.dumps(result)
    after = _files(secrets)
    assert after == before
    assert (secrets.work / "key-link").is_symlink() and (secrets.work / "cfg-link").is_symlink()


def test_ordinary_writes_still_work(call: Call, secrets: Secrets) -> None:
    assert call("write_file", {"path": ".env", "content": "DEBUG=0\n"})["created"] is False
    assert call("patch", {"path": ".env", "old_string": "0", "new_string": "1"})["replacements"]
    assert (secrets.work / ".env").read_text() == "DEBUG=1\n"
    assert call("write_file", {"path": "src/app.py", "content": "x = 1\n"})["created"]
    for name in ("deploy/ssh/authorized_keys", ".env.local", "ci/known_hosts"):
        assert call("write_file", {"path": name, "content": "x\n"})["created"], name


def test_writing_onto_a_link_writes_its_target_and_keeps_the_link(call: Call,
                                                                  work: Path) -> None:
    (work / "real.txt").write_text("one\n")
    (work / "alias.txt").symlink_to("real.txt")
    call("write_file", {"path": "alias.txt", "content": "two\n"})
    assert (work / "alias.txt").is_symlink() and (work / "real.txt").read_text() == "two\n"
    call("patch", {"path": "alias.txt", "old_string": "two", "new_string": "three"})
    assert (work / "alias.txt").is_symlink() and (work / "real.txt").read_text() == "three\n"


def test_file_modes_are_kept_and_new_files_follow_the_umask(call: Call, work: Path) -> None:
    private = work / "private.txt"
    private.write_text("a\n")
    os.chmod(private, 0o600)
    call("write_file", {"path": "private.txt", "content": "b\n"})
    assert private.stat().st_mode & 0o777 == 0o600
    old = os.umask(0o022)
    try:
        call("write_file", {"path": "public.html", "content": "<p>hi</p>\n"})
    finally:
        os.umask(old)
    assert (work / "public.html").stat().st_mode & 0o777 == 0o644
    assert not [p for p in work.iterdir() if p.name.endswith(".tmp")]


# --- search_files ---------------------------------------------------------------------------------

def test_a_broken_gitignore_line_does_not_break_search(call: Call, work: Path) -> None:
    (work / ".git").mkdir()
    (work / ".gitignore").write_text("[z-a]\n[[:alpha:]\n*.log\n")
    (work / "app.py").write_text("needle\n")
    (work / "debug.log").write_text("needle\n")
    found = call("search_files", {"pattern": "needle", "path": str(work)})
    assert [m["path"] for m in found["matches"]] == ["app.py"]


def test_a_symlink_loop_does_not_hang_search(call: Call, work: Path) -> None:
    (work / "loop").symlink_to(work)
    (work / "a").symlink_to(work / "b")
    (work / "b").symlink_to(work / "a")
    (work / "text.txt").write_text("needle\n")
    found = within(10, lambda: call("search_files", {"pattern": "needle", "path": str(work)}))
    assert [m["path"] for m in found["matches"]] == ["text.txt"]
    assert "error" in call("read_file", {"path": "a"})


def test_a_path_with_a_nul_byte_is_an_error_not_a_crash(call: Call, work: Path) -> None:
    for tool in ("read_file", "write_file", "patch", "search_files"):
        result = call(tool, {"path": "a\x00b", "content": "x", "old_string": "a",
                             "new_string": "b", "pattern": "x"})
        assert "NUL" in result["error"], (tool, result)


@pytest.mark.parametrize("path", ["/etc/cron.d/job", "/etc/sudoers.d/me", "/usr/local/bin/ls",
                                  "/var/spool/cron/crontabs/root", "/proc/sys/kernel/x"])
def test_system_files_are_not_written(path: str) -> None:
    from hermes_agent.builtin_plugins.core_tools.secrets import write_refusal

    refused = write_refusal(path, path)
    assert refused is not None and "system file" in refused and "terminal" in refused
    assert write_refusal("app.js", "/usr/src/app/app.js") is None  # a container's project


def test_a_catastrophic_regex_is_stopped_at_the_deadline(work: Path) -> None:
    """(a+)+$ backtracks 2^40 times on forty a's: re cannot be interrupted, so the search runs
    in a child process that is killed at the deadline."""
    from hermes_agent.api import ToolCallContext
    from hermes_agent.builtin_plugins.core_tools.search import run_in_child

    (work / "redos.txt").write_text("a" * 40 + "!\n")
    started = time.monotonic()
    result = json.loads(within(20, lambda: run_in_child({"pattern": "(a+)+$"},
                                                        ToolCallContext(cwd=work), seconds=2)))
    assert "longer than 2 s" in result["error"] and "(a+)+" in result["error"]
    assert time.monotonic() - started < 10


def test_a_search_in_the_child_returns_any_text(work: Path) -> None:
    from hermes_agent.api import ToolCallContext
    from hermes_agent.builtin_plugins.core_tools.search import run_in_child

    (work / "poem.txt").write_text("héllo wörld ✓\n")
    found = json.loads(within(20, lambda: run_in_child({"pattern": "w.rld", "path": str(work)},
                                                       ToolCallContext(cwd=work))))
    assert found["matches"][0]["text"] == "héllo wörld ✓"


@pytest.mark.parametrize("pattern", ["(a+)+$", "(?:\\s+\\w+)*x", "(a|aa)*b", ".*a.*b",
                                     "(\\w)\\1", "[^,]*,[^,]*;"])
def test_a_pattern_that_may_backtrack_runs_in_the_child(pattern: str) -> None:
    from hermes_agent.builtin_plugins.core_tools.search import may_backtrack

    assert may_backtrack(pattern)


@pytest.mark.parametrize("pattern", ["def ", "TODO|FIXME", "def \\w+\\(", "foo.*bar",
                                     "class \\w+\\(\\w+\\)", "import (os|sys)", "x{2,5}y"])
def test_an_ordinary_pattern_is_searched_here_without_a_child(pattern: str) -> None:
    from hermes_agent.builtin_plugins.core_tools.search import may_backtrack

    assert not may_backtrack(pattern)


def test_the_tool_stops_a_catastrophic_pattern(call: Call, work: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_agent.builtin_plugins.core_tools import search

    monkeypatch.setattr(search, "SEARCH_SECONDS", 2.0)
    (work / "redos.txt").write_text("a" * 40 + "!\n")
    result = within(20, lambda: call("search_files", {"pattern": "(a+)+$", "path": str(work)}))
    assert "longer than 2 s" in result["error"]


@pytest.mark.parametrize("name", [".git/hooks/pre-commit", ".git/config",
                                  ".git/modules/lib/hooks/post-checkout"])
def test_gits_hooks_and_configuration_are_not_written(call: Call, work: Path, name: str) -> None:
    """git runs what they hold later, unchecked (a hook, core.pager, an alias): the terminal
    asks the user first, so the file tools leave them to it."""
    (work / ".git" / "hooks").mkdir(parents=True)
    (work / ".git" / "config").write_text("[core]\n\tbare = false\n")
    result = call("write_file", {"path": name, "content": "[alias]\n\tx = !sh evil.sh\n"})
    assert "git's hooks or its configuration" in result["error"] and "terminal" in result["error"]
    assert (work / ".git" / "config").read_text() == "[core]\n\tbare = false\n"
    assert not (work / ".git" / "hooks" / "pre-commit").exists()
    assert call("write_file", {"path": ".gitignore", "content": "build/\n"})["created"]
