"""Persistent shells (``terminal`` with ``session: NAME``): cd, variables and an activated
virtualenv carry over, confined like every command; a bad command fails alone; a timeout
ends the shell and the next call says it is new; the session's end kills it."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any
from collections.abc import Iterator

import pytest

from hermes_agent.builtin_plugins.core_tools.process_groups import descendants

from .conftest import Call
from .test_terminal_signals import alive, wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")


@pytest.fixture(autouse=True)
def _closed(kernel: Any) -> Iterator[None]:
    """Each test's kernel closes after it (its processes end, as when hermes exits)."""
    yield
    kernel.close()


def shell(call: Call, command: str, name: str = "main", **args: Any) -> dict[str, Any]:
    return call("terminal", {"command": command, "session": name, **args})


def test_cd_variables_and_a_virtualenv_carry_over(call: Call, work: Path) -> None:
    venv = work / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "activate").write_text(f'export VIRTUAL_ENV={work / "venv"}\n'
                                   f'export PATH="{venv}:$PATH"\n')
    (venv / "tool").write_text("#!/bin/sh\necho tool from the venv\n")
    (venv / "tool").chmod(0o755)
    (work / "sub").mkdir()
    first = shell(call, "cd sub && export GREETING=hi && source ../venv/bin/activate")
    assert first["exit_code"] == 0 and "New shell session 'main'" in first["note"]
    second = shell(call, 'pwd; echo "$GREETING $VIRTUAL_ENV"; tool')
    assert second["output"].splitlines() == [str(work / "sub"), f"hi {work / 'venv'}",
                                             "tool from the venv"]
    assert "note" not in second
    other = shell(call, "pwd; echo \"[$GREETING]\"", name="other")  # its own state
    assert other["output"].splitlines() == [str(work), "[]"]


def test_exit_status_stderr_and_syntax_errors_fail_one_call_only(call: Call) -> None:
    shell(call, "X=kept")
    failed = shell(call, "echo out; echo err >&2; exit_status() { return 3; }; exit_status")
    assert failed["exit_code"] == 3 and failed["output"].splitlines() == ["out", "err"]
    broken = shell(call, "if then fi (")
    assert broken["exit_code"] == 2 and "syntax error" in broken["output"]
    reads = shell(call, "read line; echo \"read [$line] $X\"")  # stdin is not the next call
    assert reads["output"] == "read [] kept"
    multi = shell(call, "cat <<EOF\nline one\n$X\nEOF")
    assert multi["output"] == "line one\nkept"


def test_the_shell_is_sandboxed_like_any_command(call: Call, tmp_path: Path) -> None:
    # writable by us, not by commands; outside /tmp, which the sandbox replaces with its own
    folder = Path(tempfile.mkdtemp(prefix="hermes-shell-", dir="/var/tmp"))
    outside = folder / "probe.txt"
    try:
        blocked = shell(call, f"echo x > {outside}")
        assert blocked["exit_code"] != 0 and not outside.exists()
        assert "Read-only file system" in blocked["output"] and "sandbox" in blocked
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    private = shell(call, f"echo x > {tmp_path}/inside.txt && cat {tmp_path}/inside.txt")
    assert private["output"] == "x" and not (tmp_path / "inside.txt").exists()  # its own /tmp


def test_a_timeout_ends_the_shell_and_the_next_call_starts_afresh(call: Call) -> None:
    shell(call, "export X=before")
    slow = shell(call, "sleep 30", timeout=1)
    assert "timed out after 1 s" in slow["error"] and "is gone" in slow["note"]
    fresh = shell(call, 'echo "[$X]"')
    assert fresh["output"] == "[]" and "New shell session" in fresh["note"]
    ended = shell(call, "exit 4")
    assert ended["exit_code"] == 4 and "exited" in ended["note"]


def test_the_session_end_kills_its_shells_and_process_kill_ends_one(call: Call,
                                                                   kernel: Any) -> None:
    before = set(shell_processes())
    shell(call, "true")
    shell(call, "true", name="second")
    assert call("process", {"action": "list"})["shells"] == ["shell:main", "shell:second"]
    assert call("process", {"action": "kill", "session_id": "shell:second"})["status"] == "killed"
    shells = set(shell_processes()) - before
    assert shells  # the one left, with its sandbox
    kernel.hooks.fire("on_session_finalize", session_id="s1", platform="cli",
                      reason="shutdown", old_session_id=None, new_session_id=None)
    wait_until(lambda: not [pid for pid in shells if alive(pid)], "the shell to die", 10)
    assert call("process", {"action": "list"})["shells"] == []


def shell_processes() -> list[int]:
    """This test's persistent shells: the ``bash -s`` among its descendants (and their
    sandbox's processes)."""
    found = []
    for pid in descendants(os.getpid()):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"-s" in argv and any(arg.endswith(b"bash") for arg in argv):
            found.append(pid)
    return found
