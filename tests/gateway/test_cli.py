"""`hermes gateway run` in a real process: status from its state file, and `hermes gateway
stop` (SIGTERM) lets the accepted turn finish before it exits."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from hermes_agent.testing.fake_llm import reply_text, reply_tool_call

PLUGIN = '''
import asyncio, pathlib, time
from hermes_agent.api import InboundMessage, PlatformAdapter, SendResult

class FileChat(PlatformAdapter):
    async def connect(self, *, is_reconnect=False):
        self.dir = pathlib.Path(self.config["dir"])
        asyncio.get_running_loop().create_task(self.handle_message(
            InboundMessage("filechat", "room", "alice", "hold the door")))
        return True

    async def disconnect(self):
        (self.dir / "disconnected").write_text("yes")

    async def send(self, chat_id, content, reply_to=None, metadata=None):
        with open(self.dir / "outbox", "a") as out:
            out.write(content + "\\n")
        return SendResult(True)

def hold(args, **kw):
    folder = pathlib.Path(__import__("os").environ["FILECHAT_DIR"])
    (folder / "entered").write_text("yes")
    while not (folder / "open").exists():
        time.sleep(0.02)
    return "held"

def register(ctx):
    ctx.register_platform("filechat", "File chat", adapter_factory=FileChat)
    ctx.register_tool("hold", "filechat", {"name": "hold", "description": "Hold.",
        "parameters": {"type": "object", "properties": {}}}, hold)
'''


def wait_for(check, what: str, bound: float = 30.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


HERMES = Path(sys.executable).parent / "hermes"


def _start_held_gateway(home: Path, server, tmp_path: Path) -> tuple[subprocess.Popen[str], Path, dict[str, str]]:
    """``hermes gateway run`` with a file-based platform whose one turn is held in a tool
    until ``box/open`` exists."""
    box = tmp_path / "box"
    box.mkdir()
    plugin = home / "plugins" / "filechat"
    plugin.mkdir()
    (plugin / "plugin.yaml").write_text("name: filechat\nversion: 1.0.0\n"
                                        "description: A platform on files.\n")
    (plugin / "__init__.py").write_text(PLUGIN)
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": server.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "sessions": {"auto_title": False}, "plugins": {"enabled": ["filechat"]},
        "platforms": {"filechat": {"enabled": True, "dir": str(box),
                                   "allowed_users": ["alice"]}}}))
    server.script(reply_tool_call("hold", {}), reply_text("door held"))
    env = {**os.environ, "HERMES_HOME": str(home), "FILECHAT_DIR": str(box)}
    proc = subprocess.Popen([str(HERMES), "gateway", "run"], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return proc, box, env


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_gateway_run_status_and_graceful_sigterm(home: Path, server, tmp_path: Path) -> None:
    proc, box, env = _start_held_gateway(home, server, tmp_path)
    try:
        wait_for(lambda: (box / "entered").exists(), "the turn to reach its tool")
        status = subprocess.run([str(HERMES), "gateway", "status", "--json"], env=env,
                                capture_output=True, text=True, timeout=60)
        state = json.loads(status.stdout)
        assert state["running"] is True and state["pid"] == proc.pid
        assert state["platforms"] == ["filechat"] and state["chats"] == 1
        stop = subprocess.run([str(HERMES), "gateway", "stop"], env=env,
                              capture_output=True, text=True, timeout=60)
        assert stop.returncode == 0, stop.stderr  # SIGTERM to the pid in the state file
        (box / "open").write_text("yes")  # the turn finishes after SIGTERM
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert (box / "outbox").read_text() == "door held\n"
    assert (box / "disconnected").exists()
    status = subprocess.run([str(HERMES), "gateway", "status"], env=env, capture_output=True,
                            text=True, timeout=60)
    assert status.returncode != 0 and "not running" in status.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_closed_terminal_stops_the_gateway_as_sigterm_does(home: Path, server,
                                                             tmp_path: Path) -> None:
    proc, box, env = _start_held_gateway(home, server, tmp_path)
    try:
        wait_for(lambda: (box / "entered").exists(), "the turn to reach its tool")
        proc.send_signal(signal.SIGHUP)  # what the terminal's session leader gets on close
        (box / "open").write_text("yes")
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err  # not -SIGHUP: the handler ran
    assert "gateway stopping: finishing accepted turns" in err
    assert (box / "outbox").read_text() == "door held\n"  # the accepted turn finished
    assert (box / "disconnected").exists()
    status = subprocess.run([str(HERMES), "gateway", "status"], env=env, capture_output=True,
                            text=True, timeout=60)
    assert status.returncode != 0 and "not running" in status.stderr
