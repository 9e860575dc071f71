"""The logs hermes writes ($HERMES_HOME/logs/<component>.log, rotated and bounded) and
`hermes logs [COMPONENT] [-f]`, with real `hermes` processes."""

from __future__ import annotations

import os
import queue
import stat
import subprocess
import threading
from pathlib import Path

from .ops_home import environ, hermes, hermes_argv, make_home

NOISY = '''
import logging, os

def register(ctx):
    count = int(os.environ.get("NOISY_COUNT", "1"))
    for n in range(count):
        logging.getLogger("hermes_agent.gateway.noisy").error("gateway trouble %d %s", n, "g" * 300)
        logging.getLogger("hermes_agent.cron").warning("cron trouble %d", n)
        logging.getLogger("hermes_agent.plugins.noisy").warning(
            "agent trouble %d via https://user:hunter2@example.com/x", n)
        logging.getLogger("hermes_agent.plugins.noisy").info("not kept %d", n)
'''


def noisy_home(tmp_path: Path) -> Path:
    home = make_home(tmp_path, config={
        "model": {"provider": "custom", "base_url": "http://127.0.0.1:9/v1",
                  "default": "fake-model"}, "plugins": {"enabled": ["noisy"]}})
    plugin = home / "plugins" / "noisy"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: noisy\nversion: 1.0.0\ndescription: Logs.\n")
    (plugin / "__init__.py").write_text(NOISY)
    return home


def test_a_fresh_home_has_no_logs(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    run = hermes(home, "logs")
    assert run.code == 0 and "No logs yet" in run.out
    assert not (home / "logs").exists()
    assert "no log 'nope'" in hermes(home, "logs", "nope").err
    (home / "processes").mkdir(mode=0o700)
    (home / "processes" / "proc_1a2b3c.log").write_text("server listening on :3000\n")
    shown = hermes(home, "logs", "proc_1a2b3c")
    assert shown.code == 0 and shown.out == "server listening on :3000\n"


def test_each_component_has_its_log_and_stderr_still_shows_warnings(tmp_path: Path) -> None:
    home = noisy_home(tmp_path)
    run = hermes(home, "status")  # boots the kernel: the plugin logs while it loads
    assert run.code == 0, run.err
    assert "gateway trouble 0" in run.err  # what was printed on stderr still is
    logs = home / "logs"
    assert stat.S_IMODE(logs.stat().st_mode) == 0o700
    assert sorted(p.name for p in logs.iterdir()) == ["agent.log", "cron.log", "gateway.log"]
    for path in logs.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    gateway = (logs / "gateway.log").read_text()
    assert "ERROR hermes_agent.gateway.noisy" in gateway and "cron trouble" not in gateway
    assert "cron trouble 0" in (logs / "cron.log").read_text()
    agent = (logs / "agent.log").read_text()
    assert "agent trouble 0" in agent and "hunter2" not in agent and "not kept" not in agent
    shown = hermes(home, "logs", "cron")
    assert shown.code == 0 and "cron trouble 0" in shown.out and "gateway" not in shown.out
    every = hermes(home, "logs", "-n", "1").out
    assert "==> gateway" in every and "==> cron" in every and "==> agent" in every
    listed = hermes(home, "logs", "--list").out
    assert "gateway.log" in listed and "bytes" in listed


def test_the_logs_are_rotated_and_bounded(tmp_path: Path) -> None:
    home = noisy_home(tmp_path)
    for _ in range(2):
        run = hermes(home, "status", NOISY_COUNT="150", HERMES_LOG_MAX_BYTES="8192")
        assert run.code == 0, run.err[-2000:]
    names = sorted(p.name for p in (home / "logs").iterdir() if p.name.startswith("gateway"))
    assert names == ["gateway.log", "gateway.log.1", "gateway.log.2", "gateway.log.3"]
    assert all((home / "logs" / n).stat().st_size <= 8192 for n in names)
    assert "gateway trouble 149" in (home / "logs" / "gateway.log").read_text()


def test_follow_prints_new_lines_across_a_rotation(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    (home / "logs").mkdir(mode=0o700)
    log = home / "logs" / "gateway.log"
    log.write_text("old line\n")
    proc = subprocess.Popen([*hermes_argv(), "logs", "gateway", "-f", "-n", "1"],
                            env=environ(home), stdout=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x.rstrip("\n")) for x in proc.stdout],  # type: ignore[union-attr]
                     daemon=True).start()

    def next_line() -> str:
        return lines.get(timeout=60)

    try:
        assert next_line() == "old line"
        with open(log, "a") as out:
            out.write("first new line\n")
        assert next_line() == "first new line"
        os.replace(log, home / "logs" / "gateway.log.1")  # what the rotating handler does
        log.write_text("after the rotation\n")
        assert next_line() == "after the rotation"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert lines.empty()
