"""A real `hermes chat -q` whose `terminal` command is still running when hermes is stopped:
SIGTERM, SIGHUP and Ctrl-C (SIGINT) end hermes promptly, kill the command's whole process
group (a grandchild included) and store the turn as interrupted; a SIGKILLed hermes takes
the group's leader with it (PR_SET_PDEATHSIG)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call

from .conftest import SANDBOX_PYTHON

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
WAIT = 30.0


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its parent counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def host_pid(pid: int, marker: str) -> int:
    """The host's pid of a process that reported ``pid`` from inside the sandbox's PID
    namespace (its last NSpid) and whose command line holds ``marker``; ``pid`` itself when
    no such process runs in a namespace (unconfined, or not Linux)."""
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            nspids = next(line.split()[1:] for line in status.read_text().splitlines()
                          if line.startswith("NSpid:"))
            cmdline = (status.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(
                errors="replace")  # another program's arguments need not be UTF-8
        except (OSError, StopIteration):
            continue
        if len(nspids) > 1 and int(nspids[-1]) == pid and marker in cmdline:
            return int(nspids[0])
    return pid


def wait_until(check: Callable[[], bool], what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def start_chat(home: Path, server: FakeLLMServer, work: Path) -> subprocess.Popen[str]:
    """``hermes chat -q`` whose model runs a command that starts a grandchild (a web server
    on port 0) and waits for it; the pids land in ``work``."""
    (home / "config.yaml").write_text(
        f"model:\n  provider: custom\n  base_url: {server.openai_base_url}\n"
        "  default: fake-model\n  max_retries: 0\nsessions:\n  auto_title: false\n")
    command = (f"{SANDBOX_PYTHON} -m http.server 0 --bind 127.0.0.1 >/dev/null 2>&1 & "
               f"echo $! > {work}/grandchild.tmp; mv {work}/grandchild.tmp {work}/grandchild; "
               f"echo $$ > {work}/leader; wait")
    server.script(reply_tool_call("terminal", {"command": command, "timeout": 600}),
                  reply_text("never asked"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HERMES_"))}
    env.update(HERMES_HOME=str(home), NO_PROXY="127.0.0.1,localhost")
    hermes = Path(sys.executable).parent / "hermes"
    proc = subprocess.Popen([str(hermes), "chat", "-q", "serve the folder"], cwd=work, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: (work / "grandchild").exists() and (work / "leader").exists()
                   or proc.poll() is not None, "the command to start")
    except AssertionError:
        proc.kill()
        raise
    assert proc.poll() is None, proc.communicate()
    return proc


def pids(work: Path) -> tuple[int, int]:
    """The leader's and the grandchild's pids as the host sees them."""
    return (host_pid(int((work / "leader").read_text()), "grandchild"),
            host_pid(int((work / "grandchild").read_text()), "http.server"))


def stored_session(home: Path) -> tuple[dict[str, object], list[dict[str, object]]]:
    with sqlite3.connect(home / "state.db") as db:
        db.row_factory = sqlite3.Row
        session = dict(db.execute("SELECT * FROM sessions").fetchone())
        messages = [dict(r) for r in db.execute(
            "SELECT role, content FROM messages WHERE session_id = ? ORDER BY id",
            (session["id"],))]
    return session, messages


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT],
                         ids=["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_stopped_chat_stops_its_command_and_stores_the_turn_interrupted(
        home: Path, fake_llm: FakeLLMServer, tmp_path: Path, sig: signal.Signals) -> None:
    work = tmp_path / "work"
    work.mkdir()
    proc = start_chat(home, fake_llm, work)
    leader, grandchild = pids(work)
    assert alive(leader) and alive(grandchild)
    started = time.monotonic()
    proc.send_signal(sig)
    try:
        _out, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert time.monotonic() - started < 10, "hermes did not exit promptly"
    assert proc.returncode == 128 + sig, err
    wait_until(lambda: not alive(leader) and not alive(grandchild), "the group to die", 5)
    session, messages = stored_session(home)
    assert session["end_reason"] == "interrupted"
    tool = json.loads(str(messages[-1]["content"]))
    assert messages[-1]["role"] == "tool" and "interrupted" in tool["error"]
    assert len(fake_llm.posts()) == 1  # the model was not asked again


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG")
def test_a_sigkilled_hermes_takes_the_command_leader_with_it(
        home: Path, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """SIGKILL cannot be handled: the leader dies by its parent-death signal; its own
    children remain (docs/tools.md says so), as the test's cleanup shows."""
    work = tmp_path / "work"
    work.mkdir()
    proc = start_chat(home, fake_llm, work)
    leader, grandchild = pids(work)
    proc.kill()
    proc.communicate(timeout=WAIT)
    try:
        wait_until(lambda: not alive(leader), "the leader to die with hermes", 10)
    finally:
        try:
            os.killpg(leader, signal.SIGKILL)  # what remains of the group
        except ProcessLookupError:
            pass
    wait_until(lambda: not alive(grandchild), "the grandchild to be killed", 10)
