"""`hermes status` in a subprocess: an idle home, then a home where a real gateway holds a
turn (its platform, chat and session), runs the scheduler with a job, and a kept background
process runs."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_agent.testing.fake_llm import reply_text, reply_tool_call

from .ops_home import environ, hermes, hermes_argv, make_home

PLUGIN = '''
import asyncio, os, pathlib, time
from hermes_agent.api import InboundMessage, PlatformAdapter, SendResult

class FileChat(PlatformAdapter):
    async def connect(self, *, is_reconnect=False):
        self.dir = pathlib.Path(self.config["dir"])
        asyncio.get_running_loop().create_task(self.handle_message(
            InboundMessage("filechat", "room", "alice", "hold the door")))
        return True

    async def disconnect(self):
        pass

    async def send(self, chat_id, content, reply_to=None, metadata=None):
        return SendResult(True)

def hold(args, **kw):
    folder = pathlib.Path(os.environ["FILECHAT_DIR"])
    (folder / "entered").write_text("yes")
    while not (folder / "open").exists():
        time.sleep(0.02)
    return "held"

def register(ctx):
    ctx.register_platform("filechat", "File chat", adapter_factory=FileChat)
    ctx.register_tool("hold", "filechat", {"name": "hold", "description": "Hold.",
        "parameters": {"type": "object", "properties": {}}}, hold)
'''


def wait_for(check: Any, what: str, bound: float = 60.0) -> Any:
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _gateway_state(home: Path) -> dict[str, Any]:
    try:
        return dict(json.loads((home / "gateway" / "state.json").read_text()))
    except (OSError, ValueError):
        return {}


def status(home: Path, **extra: str) -> dict[str, Any]:
    run = hermes(home, "status", "--json", **extra)
    assert run.code == 0, run.err
    return dict(json.loads(run.out))


def test_an_idle_home(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    found = status(home)
    assert found["gateway"] == {"running": False}
    assert found["cron"]["scheduler"] == {"running": False} and found["cron"]["jobs"] == 0
    assert found["processes"] == [] and found["sessions"]["active"] == []
    text = hermes(home, "status").out
    assert "gateway: not running" in text and "0 active in the last 60 minutes" in text


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes")
def test_a_running_gateway_scheduler_process_and_session(tmp_path: Path, fake_llm: Any) -> None:
    home = make_home(tmp_path)
    box = tmp_path / "box"
    box.mkdir()
    plugin = home / "plugins" / "filechat"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: filechat\nversion: 1.0.0\n"
                                        "description: A platform on files.\n")
    (plugin / "__init__.py").write_text(PLUGIN)
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": fake_llm.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "sessions": {"auto_title": False}, "plugins": {"enabled": ["filechat"]},
        "platforms": {"filechat": {"enabled": True, "dir": str(box),
                                   "allowed_users": ["alice"]}}}))
    fake_llm.script(reply_tool_call("hold", {}), reply_text("door held"))
    created = hermes(home, "cron", "create", "every 2h", "water the plants", "--name", "plants")
    assert created.code == 0, created.err
    # a kept background process, recorded as the terminal tool records one
    sleeper = subprocess.Popen(["sleep", "300"])
    (home / "processes").mkdir(mode=0o700)
    with open(f"/proc/{sleeper.pid}/stat", "rb") as handle:
        raw = handle.read()
    (home / "processes" / "proc_abc123.json").write_text(json.dumps({
        "id": "proc_abc123", "command": "sleep 300", "cwd": str(tmp_path), "pid": sleeper.pid,
        "pid_start": int(raw[raw.rfind(b")") + 2:].split()[19]), "started": time.time(),
        "session_id": ""}))
    gateway = subprocess.Popen([*hermes_argv(), "gateway", "run"],
                               env=environ(home, FILECHAT_DIR=str(box)), text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: (box / "entered").exists(), "the turn to reach its tool")
        wait_for(lambda: (home / "cron" / "scheduler.json").exists(), "the scheduler")
        wait_for(lambda: _gateway_state(home).get("turns_running") == 1,
                 "the gateway to record its running turn")
        found = status(home)
        (box / "open").write_text("yes")
        text = hermes(home, "status").out
    finally:
        gateway.terminate()
        sleeper.kill()
        sleeper.wait()
        gateway.communicate(timeout=60)
    gw = found["gateway"]
    assert gw["running"] is True and gw["pid"] == gateway.pid
    assert gw["platforms"] == ["filechat"] and gw["chats"] == 1 and gw["turns_running"] == 1
    cron = found["cron"]
    assert cron["scheduler"]["running"] is True and cron["scheduler"]["pid"] == gateway.pid
    assert cron["jobs"] == cron["enabled"] == 1 and cron["next"]["job"] == "plants"
    assert [p["id"] for p in found["processes"]] == ["proc_abc123"]
    assert [s["source"] for s in found["sessions"]["active"]] == ["filechat"]
    assert f"gateway: running (pid {gateway.pid}" in text and "proc_abc123" in text
    # once they stopped, nothing runs
    after = status(home)
    assert after["gateway"] == {"running": False} and after["processes"] == []
    assert after["cron"]["scheduler"] == {"running": False}
