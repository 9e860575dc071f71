"""The agent's commands cannot read hermes's own environment (the keys exported before it
started) once the process is private (hermes_agent.kits.private_process.keep_process_private). Real
processes: a "hermes" process holding a secret in its initial environment runs a command
that reads /proc/<its pid>/environ, as a prompt-injected model would ask."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import hermes_agent.kits.private_process as private_process

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="process privacy uses Linux's prctl")
SECRET = "sk-test-0123456789abcdef"

# The "hermes" process: the module under test loaded from its file, then a command run as
# the terminal tool runs one (bash -c, an environment without the secret).
HERMES_LIKE = """
import importlib.util, json, subprocess, sys
spec = importlib.util.spec_from_file_location("private_process", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
private = module.keep_process_private()
command = subprocess.run(["/bin/sh", "-c", "cat /proc/$PPID/environ"], capture_output=True,
                         env={"PATH": "/usr/bin:/bin"})
print(json.dumps({"private": private, "output": command.stdout.decode("latin-1"),
                  "error": command.stderr.decode("latin-1")}))
"""


def run_hermes_like(debuggable: bool) -> dict[str, object]:
    """Run HERMES_LIKE as an ordinary user: this one, or nobody when the tests run as root
    (root may read any process, so only another user shows the protection)."""
    env = {"PATH": "/usr/bin:/bin", "PROBE_API_KEY": SECRET}
    if debuggable:
        env["HERMES_DEBUGGABLE"] = "1"
    folder = Path(tempfile.mkdtemp(prefix="hermes-private-"))
    try:
        module = folder / "private_process.py"
        shutil.copyfile(private_process.__file__, module)
        folder.chmod(0o755)
        module.chmod(0o644)
        command = [sys.executable, "-c", HERMES_LIKE, str(module)]
        if os.geteuid() == 0:
            setpriv, python = shutil.which("setpriv"), "/usr/bin/python3"
            if setpriv is None or not os.access(python, os.X_OK):
                pytest.skip("running as root: needs setpriv and /usr/bin/python3 to run the "
                            "process as another user")
            command = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", python,
                       "-c", HERMES_LIKE, str(module)]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60,
                              cwd="/")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_command_cannot_read_the_private_process_environment() -> None:
    seen = run_hermes_like(debuggable=False)
    assert seen["private"] is True
    assert SECRET not in str(seen["output"])
    assert "Permission denied" in str(seen["error"])


def test_without_it_the_command_reads_the_key_exported_before_start() -> None:
    """The same process with HERMES_DEBUGGABLE=1: the leak the protection closes."""
    seen = run_hermes_like(debuggable=True)
    assert seen["private"] is False
    assert f"PROBE_API_KEY={SECRET}" in str(seen["output"])


def test_an_agent_makes_its_process_private(tmp_path: Path) -> None:
    """Every surface builds an Agent: the process is private before any tool runs."""
    script = f"""
import ctypes
from hermes_agent.testing import make_kernel
from hermes_agent.builtin_plugins.agent.loop import Agent
libc = ctypes.CDLL(None)
before = libc.prctl(3, 0, 0, 0, 0)
kernel = make_kernel({str(tmp_path)!r}, config={{"model": {{
    "provider": "custom", "base_url": "http://127.0.0.1:9/v1", "default": "m"}}}},
    env={{"HERMES_HOME": {str(tmp_path)!r}}}, builtins=True)
Agent(kernel)
print(before, libc.prctl(3, 0, 0, 0, 0))
"""
    env = {k: v for k, v in os.environ.items() if k != "HERMES_DEBUGGABLE"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "0"]
