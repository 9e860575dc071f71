"""``python -m hermes_agent.testing.fake_llm``: a fake model to try hermes with, from the
command line: it says where it listens and how to point hermes at it, answers hermes, and
stops on Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import yaml


def test_the_fake_llm_server_runs_from_the_command_line(home: Path) -> None:
    env = {**os.environ, "NO_PROXY": "127.0.0.1,localhost", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "hermes_agent.testing.fake_llm", "--port",
                             "0", "--reply", "pong from the fake"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        match = re.match(r"fake LLM server listening on (http://127\.0\.0\.1:(\d+)) ", first)
        assert match and int(match.group(2)) > 0, first
        shown = [proc.stdout.readline() for _ in range(5)]
        base = f"{match.group(1)}/v1"
        assert f"  hermes config set model.base_url {base}\n" in shown
        assert "  hermes config set model.provider custom\n" in shown
        (home / "config.yaml").write_text(yaml.safe_dump({"model": {
            "provider": "custom", "base_url": base, "default": "fake-model"}}))
        hermes = Path(sys.executable).with_name("hermes")
        chat = subprocess.run([str(hermes), "chat", "-q", "ping"], capture_output=True,
                              text=True, timeout=120, env={**env, "HERMES_HOME": str(home)})
        assert chat.returncode == 0 and chat.stdout == "pong from the fake\n", chat.stderr
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        out, err = proc.communicate(timeout=20)
        assert proc.returncode == 0 and "fake LLM server stopped" in out, err
        assert "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_port_in_use_says_how_to_choose_another() -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "hermes_agent.testing.fake_llm", "--port",
                               str(port)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and f"cannot listen on 127.0.0.1:{port}" in proc.stderr
    assert "--port N" in proc.stderr
