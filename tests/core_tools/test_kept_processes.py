"""A background process started with ``keep: true`` outlives the hermes that started it
(the real process exits), keeps writing its log, is listed by a real ``hermes processes``
and stopped by ``hermes processes kill ID``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hermes_agent.builtin_plugins.core_tools.process_groups import descendants

from .conftest import SANDBOX_PYTHON
from .test_terminal_signals import alive, wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")

STARTER = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    import hermes_agent.builtin_plugins.core_tools as core_tools
    from hermes_agent.api import ToolCallContext
    from hermes_agent.testing import make_kernel

    home, work, command = sys.argv[1:4]
    kernel = make_kernel(Path(home))
    kernel.register_plugin(core_tools, "core-tools")
    context = ToolCallContext(session_id="s1", cwd=Path(work))
    for keep in (True, False):
        print(kernel.tools.dispatch("terminal", {"command": command, "background": True,
                                                 "keep": keep}, context=context))
    kernel.hooks.fire("on_session_finalize", session_id="s1", platform="cli",
                      reason="shutdown", old_session_id=None, new_session_id=None)
    kernel.close()
""")


def hermes(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HERMES_HOME": str(home)}
    return subprocess.run([sys.executable, "-c", "from hermes_agent.cli.root import main; main()",
                           *args], env=env, capture_output=True, text=True, timeout=60)


def test_a_kept_process_outlives_hermes_and_hermes_processes_lists_and_kills_it(
        tmp_path: Path, work: Path) -> None:
    home = tmp_path / "home"
    ticker = (f"{SANDBOX_PYTHON} -u -c \"import time\nfor i in range(100000): "
              "print('tick', i); time.sleep(0.05)\"")
    done = subprocess.run([sys.executable, "-c", STARTER, str(home), str(work), ticker],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    kept, plain = (json.loads(line) for line in done.stdout.splitlines()[-2:])
    assert "keeps running after this session and hermes end" in kept["note"]
    wait_until(lambda: not alive(plain["pid"]), "the plain one to end with its session", 10)
    assert alive(kept["pid"])  # the hermes that started it is gone
    inside = [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in descendants(kept["pid"])]
    assert any(b"bwrap" in argv for argv in inside)  # still in its sandbox

    log = home / "processes" / f"{kept['session_id']}.log"
    size = log.stat().st_size
    wait_until(lambda: log.stat().st_size > size, "the log to grow without hermes", 10)
    assert "tick" in log.read_text()

    listed = hermes(home, "processes")
    assert listed.returncode == 0, listed.stderr
    assert kept["session_id"] in listed.stdout and "running" in listed.stdout
    assert plain["session_id"] not in listed.stdout
    rows = json.loads(hermes(home, "processes", "list", "--json").stdout)
    assert [(r["id"], r["status"], r["pid"]) for r in rows] == [
        (kept["session_id"], "running", kept["pid"])]

    stopped = hermes(home, "processes", "kill", kept["session_id"])
    assert stopped.returncode == 0 and "killed" in stopped.stdout, stopped.stderr
    wait_until(lambda: not alive(kept["pid"]), "the kept process to die", 10)
    assert "No kept background processes." in hermes(home, "processes").stdout
    unknown = hermes(home, "processes", "kill", kept["session_id"])
    assert unknown.returncode == 1 and "hermes processes" in unknown.stderr


KILLED = textwrap.dedent("""
    import os, signal, sys, threading
    from pathlib import Path
    import hermes_agent.builtin_plugins.core_tools as core_tools
    from hermes_agent.api import ToolCallContext
    from hermes_agent.testing import make_kernel

    home, work = sys.argv[1:3]
    kernel = make_kernel(Path(home))
    kernel.register_plugin(core_tools, "core-tools")
    context = ToolCallContext(session_id="s1", cwd=Path(work))
    def call():  # from a thread that ends, as a tool call's may
        print(kernel.tools.dispatch("terminal", {"command": "sleep 300", "background": True},
                                    context=context), flush=True)
    worker = threading.Thread(target=call)
    worker.start()
    worker.join()
    sys.stdin.readline()
    os.kill(os.getpid(), signal.SIGKILL)
""")


def test_a_sigkilled_hermes_takes_its_background_processes_along(tmp_path: Path,
                                                                work: Path) -> None:
    hermes_like = subprocess.Popen([sys.executable, "-c", KILLED, str(tmp_path / "home"),
                                    str(work)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   text=True)
    assert hermes_like.stdout is not None and hermes_like.stdin is not None
    started = json.loads(hermes_like.stdout.readline())
    family = [started["pid"], *descendants(started["pid"])]
    assert alive(started["pid"])  # the call's thread ended; the process did not
    hermes_like.stdin.write("\n")
    hermes_like.stdin.flush()
    assert hermes_like.wait(timeout=30) == -9
    wait_until(lambda: not [pid for pid in family if alive(pid)], "the sandbox to die", 10)
