"""The terminal tool with real subprocesses."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from hermes_agent import Kernel
from hermes_agent.testing import HookRecorder

from .conftest import Call, core_kernel


def test_runs_in_the_working_directory_and_reports_exit_code(call: Call, work: Path) -> None:
    (work / "here.txt").write_text("x")
    result = call("terminal", {"command": "ls; echo err >&2; exit 3"})
    assert result["exit_code"] == 3 and result["error"] is None
    assert "here.txt" in result["output"] and "err" in result["output"]
    (work / "sub").mkdir()
    assert call("terminal", {"command": "pwd", "workdir": "sub"})["output"] == str(work / "sub")
    assert "does not exist" in call("terminal", {"command": "pwd", "workdir": "nope"})["error"]
    assert "needs a 'command'" in call("terminal", {"command": "  "})["error"]


def test_timeout_kills_the_whole_process_group(call: Call, work: Path) -> None:
    marker = work / "survived"
    started = time.monotonic()
    result = call("terminal", {"command": f"(sleep 3; touch {marker}) & sleep 30",
                               "timeout": 1})
    assert time.monotonic() - started < 5
    assert "timed out after 1 s" in result["error"] and result["exit_code"] is None
    time.sleep(3.2)
    assert not marker.exists()  # the background child was killed too


def test_interrupt_event_stops_a_running_command(call: Call) -> None:
    event = threading.Event()
    threading.Timer(0.3, event.set).start()
    started = time.monotonic()
    result = call("terminal", {"command": "sleep 20"}, interrupt_event=event)
    assert time.monotonic() - started < 5 and "interrupted" in result["error"]


def test_long_output_is_shortened_head_and_tail(tmp_path: Path, work: Path) -> None:
    kernel = core_kernel(tmp_path / "h", {"tool_output": {"max_bytes": 1000}})
    import json

    out = json.loads(kernel.tools.dispatch("terminal", {"command": "seq 1 20000"}, cwd=str(work)))
    text = out["output"]
    assert text.startswith("1\n2\n") and text.endswith("19999\n20000")
    assert "output shortened" in text and len(text) < 1200


def test_transform_terminal_output_sees_everything_and_may_replace(kernel: Kernel,
                                                                   call: Call) -> None:
    seen: list[dict] = []

    def register(ctx) -> None:
        def transform(command, output, returncode, task_id, env_type, **kwargs):
            seen.append({"command": command, "len": len(output), "rc": returncode,
                         "task": task_id, "env": env_type})
            return output.replace("SECRET", "[redacted]")
        ctx.register_hook("transform_terminal_output", transform)

    kernel.register_plugin(register, "redactor")
    result = call("terminal", {"command": "echo token=SECRET; seq 1 100000 >/dev/null"})
    assert result["output"] == "token=[redacted]"
    assert seen == [{"command": "echo token=SECRET; seq 1 100000 >/dev/null", "len": 13,
                     "rc": 0, "task": "t1", "env": "local"}]


def test_ansi_escapes_are_stripped(call: Call) -> None:
    result = call("terminal", {"command": r"printf '\033[31mred\033[0m plain\n'"})
    assert result["output"] == "red plain"


def test_hook_recorder_sees_no_approval_for_safe_commands(kernel: Kernel, call: Call) -> None:
    recorder = HookRecorder(kernel, ["pre_approval_request", "post_approval_response"])
    assert call("terminal", {"command": "echo fine"})["output"] == "fine"
    assert recorder.calls == []


def test_closing_the_kernel_kills_the_commands_still_running(kernel: Kernel, call: Call,
                                                             work: Path) -> None:
    """What a gateway or cron daemon does on its way out (kernel.close(), on_shutdown):
    no command it started outlives it, background children of the command included."""
    from .test_terminal_signals import alive, host_pid, wait_until

    results: list[dict] = []
    command = (f"sleep 300 & echo $! > {work}/child.tmp; mv {work}/child.tmp {work}/child; "
               "wait")
    worker = threading.Thread(target=lambda: results.append(
        call("terminal", {"command": command, "timeout": 600})))
    worker.start()
    wait_until(lambda: (work / "child").exists(), "the command to start")
    child = host_pid(int((work / "child").read_text()), "sleep 300")
    kernel.close()
    worker.join(10)
    assert not worker.is_alive() and results and results[0]["exit_code"] != 0
    wait_until(lambda: not alive(child), "the background child to die", 5)
