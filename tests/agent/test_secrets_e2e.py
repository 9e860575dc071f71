"""End to end, as the attacker would try it: `hermes chat -q` in its own process, the API key
only in $HERMES_HOME/.env, and a model (the fake server) that asks the terminal tool for the
environment. The provider must receive the key; the model, the screen and state.db must not.
A base_url with credentials that cannot be reached must not print its password either."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call

API_KEY = "sk-proj-e2e-only-in-dotenv-9d3f1a"
PASSWORD = "pr0xy-Pa55word"
PROBE = ("printenv; env; cat /proc/self/environ | tr '\\0' '\\n'; "
         "cat /proc/$PPID/environ | tr '\\0' '\\n'; "  # hermes itself
         "echo \"key=$OPENAI_API_KEY\"")


def _hermes(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "HERMES_")) and k not in ("CUSTOM_API_KEY",)}
    env.update(HERMES_HOME=str(home), NO_PROXY="127.0.0.1,localhost")
    return subprocess.run([sys.executable, "-m", "hermes_agent.cli.root", *args], capture_output=True,
                          text=True, timeout=120, env=env, cwd=home)


def test_the_provider_gets_the_dotenv_key_and_the_terminal_does_not(home: Path,
                                                                    server: FakeLLMServer) -> None:
    (home / ".env").write_text(f"OPENAI_API_KEY={API_KEY}\n")
    (home / "config.yaml").write_text(
        f"model:\n  provider: openai\n  base_url: {server.openai_base_url}\n"
        "  default: fake-model\n  max_retries: 0\nsessions:\n  auto_title: false\n"
        # reading /proc/$PPID/environ asks first (credential_read), and `chat -q` has nobody
        # to ask: with approvals off the probe runs, and hermes's environment must still not
        # hold the key
        "approvals:\n  mode: off\n"
        # hermes's own environment is under test: in the sandbox /proc/$PPID is not hermes
        # (and hermes's home, the cwd here, is hidden)
        "sandbox:\n  mode: off\n")
    server.script(reply_tool_call("terminal", {"command": PROBE}), reply_text("looked"))
    proc = _hermes(home, "chat", "-q", "show me your environment")
    assert proc.returncode == 0, proc.stderr
    first, second = server.posts()
    assert first.headers["authorization"] == f"Bearer {API_KEY}"  # the provider has it
    tool_result = json.loads(second.body["messages"][-1]["content"])
    assert "PATH=" in tool_result["output"] and "key=\n" in tool_result["output"] + "\n"
    assert API_KEY not in json.dumps(second.body)  # the model never sees it
    assert API_KEY not in proc.stdout + proc.stderr
    stored = b"".join(p.read_bytes() for p in home.glob("state.db*"))
    assert b"PATH=" in stored and API_KEY.encode() not in stored


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_an_unreachable_base_url_never_prints_its_password(home: Path) -> None:
    url = f"http://alice:{PASSWORD}@127.0.0.1:{_closed_port()}/v1?api_key=qk-{PASSWORD}"
    (home / "config.yaml").write_text(
        f"model:\n  provider: custom\n  base_url: '{url}'\n  default: m\n  max_retries: 0\n")
    proc = _hermes(home, "chat", "-q", "hi")
    assert proc.returncode == 1
    assert "cannot reach http://alice:***@127.0.0.1:" in proc.stderr, proc.stderr
    assert PASSWORD not in proc.stdout + proc.stderr
    events = _hermes(home, "chat", "-q", "hi", "--json")
    assert PASSWORD not in events.stdout + events.stderr and "alice:***@" in events.stdout
    stored = b"".join(p.read_bytes() for p in home.glob("state.db*"))
    assert stored and PASSWORD.encode() not in stored
