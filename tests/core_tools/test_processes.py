"""Background processes (``terminal`` with ``background: true``) and the ``process`` tool, with
real processes in the real sandbox: a local HTTP server answers and is killed at session end,
50 MB of output never reaches the model past the bound, wait, stdin, killing a group with
grandchildren, the state kept across compression."""

from __future__ import annotations

import json
import socket
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any
from collections.abc import Iterator

import pytest

from hermes_agent.api import ToolCallContext
from hermes_agent.api.sessions import session_store
from hermes_agent.builtin_plugins.core_tools.process_groups import descendants
from hermes_agent.testing import make_kernel

from .conftest import SANDBOX_OFF, SANDBOX_PYTHON, Call
from .test_terminal_signals import alive, wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")


@pytest.fixture(autouse=True)
def _closed(kernel: Any) -> Iterator[None]:
    """Each test's kernel closes after it (its processes end, as when hermes exits)."""
    yield
    kernel.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def finalize(kernel: Any, session: str = "s1") -> None:
    kernel.hooks.fire("on_session_finalize", session_id=session, platform="cli",
                      reason="shutdown", old_session_id=None, new_session_id=None)


def start(call: Call, command: str, **args: Any) -> dict[str, Any]:
    started = call("terminal", {"command": command, "background": True, **args})
    assert started["session_id"].startswith("proc_"), started
    return started


def poll_until(call: Call, proc_id: str, text: str, seen: str = "",
               timeout: float = 30.0) -> str:
    """Poll until ``text`` is in the output (``seen``: what the start already showed)."""
    deadline = time.monotonic() + timeout
    while text not in seen:
        assert time.monotonic() < deadline, f"no {text!r} from {proc_id}; saw {seen[-500:]!r}"
        seen += call("process", {"action": "poll", "session_id": proc_id})["output"]
        time.sleep(0.02)
    return seen


def test_a_background_http_server_answers_is_polled_and_dies_with_the_session(
        call: Call, kernel: Any, work: Path) -> None:
    (work / "index.html").write_text("hello from the workspace\n")
    port = free_port()
    started = start(call, f"{SANDBOX_PYTHON} -u -m http.server {port} --bind 127.0.0.1")
    assert started["status"] == "running" and "sandbox" not in started  # confined, silent
    proc_id, pid = started["session_id"], started["pid"]
    poll_until(call, proc_id, "Serving HTTP", started["output"])
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html", timeout=10) as reply:
        assert reply.read() == b"hello from the workspace\n"
    polled = poll_until(call, proc_id, "GET /index.html")  # the request, polled while it runs
    assert "Serving HTTP" not in polled  # only what is new since the last poll
    listed = call("process", {"action": "list"})["processes"]
    assert [(p["session_id"], p["status"], p["sandbox"]) for p in listed] == [
        (proc_id, "running", "sandboxed")]
    tree = [pid, *descendants(pid)]
    assert len(tree) >= 2  # bubblewrap and the server inside it

    finalize(kernel)
    wait_until(lambda: not port_open(port), "the port to close", 10)
    wait_until(lambda: not [p for p in tree if alive(p)], "every pid of it to be gone", 10)
    assert call("process", {"action": "list"})["processes"] == []
    assert not list((Path(kernel.home) / "processes").glob(f"{proc_id}*"))  # its log too


def test_fifty_megabytes_never_send_more_than_the_bound(tmp_path: Path, work: Path) -> None:
    from .conftest import core_kernel

    bound = 20_000
    kernel = core_kernel(tmp_path / "home", {"tool_output": {"max_bytes": bound},
                                             "terminal": {"background_max_log_bytes": 1 << 20}})
    context = ToolCallContext(session_id="s1", cwd=work)

    def call(tool: str, args: dict[str, Any]) -> tuple[dict[str, Any], int]:
        text = kernel.tools.dispatch(tool, args, context=context)
        return json.loads(text), len(text)

    line = "y" * 99
    started, size = call("terminal", {"background": True, "command": (
        f"{SANDBOX_PYTHON} -c \"import sys; [sys.stdout.write('{line}\\n') "
        "for _ in range(500000)]; print('THE END')\"")})
    results = [(started, size)]
    proc_id = started["session_id"]
    while results[-1][0]["status"] == "running":
        results.append(call("process", {"action": "wait", "session_id": proc_id,
                                        "timeout": 60}))
    results.append(call("process", {"action": "poll", "session_id": proc_id}))
    results.append(call("process", {"action": "log", "session_id": proc_id, "limit": 2000}))
    results.append(call("process", {"action": "log", "session_id": proc_id, "offset": 0}))
    for body, size in results:
        assert len(body.get("output", "")) <= bound and size < bound + 1_000, body.get("summary")
    waited = results[-4][0]
    assert waited["exit_code"] == 0 and waited["output"].endswith("THE END\n")
    assert "pages the whole log" in waited["summary"]
    assert waited["output"].startswith(line + "\n")  # the tail starts at a whole line
    polled = [body for body, _ in results[:-2]]
    assert sum(body["new_bytes"] for body in polled) == 500000 * 100 + 8  # all counted
    assert sum(body.get("skipped_bytes", 0) for body in polled) > 49_000_000  # most not shown
    tail, head = results[-2][0], results[-1][0]
    assert tail["output"].endswith("THE END") and tail["rotated_bytes"] > 40_000_000
    assert head["offset"] == 0 and head["next_offset"] == head["lines"] == 200
    on_disk = sum(p.stat().st_size for p in (Path(kernel.home) / "processes").iterdir())
    assert on_disk <= 2 * (1 << 20) + 65536  # two parts of the configured size


def test_wait_returns_at_its_timeout_and_kill_stops_the_process(call: Call) -> None:
    started = start(call, "echo begun; sleep 60")
    began = time.monotonic()
    waited = call("process", {"action": "wait", "session_id": started["session_id"],
                              "timeout": 1})
    assert 0.9 <= time.monotonic() - began < 5
    assert waited["status"] == "running" and waited["timed_out"] is True
    assert "Still running after 1 s" in waited["note"]
    killed = call("process", {"action": "kill", "session_id": started["session_id"]})
    assert killed["status"] == "killed" and killed["killed_by"] == "kill"
    assert not alive(started["pid"])
    done = call("process", {"action": "wait", "session_id": started["session_id"]})
    assert done["status"] == "killed" and "timed_out" not in done


def test_write_submit_and_close_feed_cat_and_a_python_repl(call: Call) -> None:
    cat = start(call, "cat")["session_id"]
    assert call("process", {"action": "write", "session_id": cat, "data": "no newline "})[
        "written_bytes"] == 11
    call("process", {"action": "submit", "session_id": cat, "data": "then a line"})
    assert poll_until(call, cat, "then a line\n") == "no newline then a line\n"
    call("process", {"action": "close", "session_id": cat})
    ended = call("process", {"action": "wait", "session_id": cat, "timeout": 10})
    assert (ended["status"], ended["exit_code"]) == ("exited", 0)
    refused = call("process", {"action": "submit", "session_id": cat, "data": "late"})
    assert "stdin is closed" in refused["error"]

    bash = start(call, "bash")["session_id"]  # a shell's stdin is a command line
    blocked = call("process", {"action": "submit", "session_id": bash, "data": "rm -rf ~"})
    assert blocked["status"] == "blocked" and blocked["process_status"] == "running"
    call("process", {"action": "submit", "session_id": bash, "data": "echo fine"})
    assert poll_until(call, bash, "fine") == "fine\n"

    repl = start(call, f"{SANDBOX_PYTHON} -i -q -u")["session_id"]
    call("process", {"action": "submit", "session_id": repl, "data": "x = 6"})
    call("process", {"action": "submit", "session_id": repl, "data": "print(x * 7)"})
    assert "42" in poll_until(call, repl, "42")
    call("process", {"action": "close", "session_id": repl})
    assert call("process", {"action": "wait", "session_id": repl, "timeout": 10})[
        "exit_code"] == 0


@pytest.mark.parametrize("kernel", [None, SANDBOX_OFF], indirect=True,
                         ids=["sandboxed", "unconfined"])
def test_kill_stops_the_whole_group_with_its_grandchildren(call: Call) -> None:
    # a grandchild in the group, and one that left it with a session of its own
    started = start(call, "(sleep 300 & setsid sleep 301 & wait) & echo ready; wait")
    poll_until(call, started["session_id"], "ready", started["output"])
    wait_until(lambda: len(sleepers(started["pid"])) == 2, "both sleeps to start")
    family = [started["pid"], *descendants(started["pid"])]
    killed = call("process", {"action": "kill", "session_id": started["session_id"]})
    assert killed["status"] == "killed"
    wait_until(lambda: not [p for p in family if alive(p)], "the whole family to die", 10)


def sleepers(pid: int) -> list[int]:
    return [child for child in descendants(pid)
            if Path(f"/proc/{child}/cmdline").read_bytes().startswith(b"sleep")]


def test_too_many_running_processes_are_refused(call: Call,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_agent.builtin_plugins.core_tools import process_tool

    monkeypatch.setattr(process_tool, "MAX_RUNNING", 2)
    first = start(call, "sleep 30")
    start(call, "sleep 30")
    refused = call("terminal", {"command": "sleep 30", "background": True})
    assert "at most 2" in refused["error"] and "kill the ones" in refused["error"]
    call("process", {"action": "kill", "session_id": first["session_id"]})
    assert start(call, "true")["session_id"]  # room again


def test_unknown_ids_and_actions_say_what_to_do(call: Call) -> None:
    assert "one of list, poll, log" in call("process", {"action": "peek"})["error"]
    assert "needs the session_id" in call("process", {"action": "poll"})["error"]
    missing = call("process", {"action": "poll", "session_id": "proc_nope"})
    assert "process(action='list')" in missing["error"]
    other = start(call, "sleep 30")
    hidden = call("process", {"action": "poll", "session_id": other["session_id"]},
                  session_id="someone-else")
    assert "No background process" in hidden["error"]  # another session's process
    call("process", {"action": "kill", "session_id": other["session_id"]})


def test_processes_follow_the_session_through_compression(tmp_path: Path, work: Path) -> None:
    kernel = make_kernel(tmp_path / "home", builtins=True)
    store = session_store(kernel)
    store.create_session("root", source="cli")
    store.end_session("root", "compression")
    store.create_session("tip", source="cli", parent_session_id="root")
    store.create_session("child", source="subagent", parent_session_id="tip")

    def call(tool: str, args: dict[str, Any], session: str) -> dict[str, Any]:
        context = ToolCallContext(session_id=session, cwd=work)
        return json.loads(kernel.tools.dispatch(tool, args, context=context))

    started = call("terminal", {"command": "sleep 60", "background": True}, "root")
    assert [p["session_id"] for p in call("process", {"action": "list"}, "tip")[
        "processes"]] == [started["session_id"]]
    finalize(kernel, "child")  # a subagent's end does not take its parent's processes
    assert alive(started["pid"])
    finalize(kernel, "tip")  # the compressed session's continuation ends: so does it
    wait_until(lambda: not alive(started["pid"]), "the process to die at session end", 10)


def test_hermes_exit_kills_background_processes(kernel: Any, call: Call) -> None:
    started = start(call, "sleep 60")
    kernel.hooks.fire("on_shutdown")
    wait_until(lambda: not alive(started["pid"]), "the process to die with hermes", 10)
