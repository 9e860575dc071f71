"""``hermes cron`` through the real CLI entry point: create (add), list, edit, pause, resume,
run, remove, status, runs, tick; and ``daemon`` as a process stopped by SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import yaml

from hermes_agent.cli.root import main
from hermes_agent.testing.fake_llm import reply_text

from .conftest import WAIT, cron_config


def run(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def configure(home: Path, server, **extra) -> None:  # type: ignore[no-untyped-def]
    (home / "config.yaml").write_text(yaml.safe_dump(cron_config(server, **extra)))


def jobs(home: Path) -> list[dict]:
    return json.loads((home / "cron" / "jobs.json").read_text())["jobs"]


def test_create_list_edit_pause_resume_remove(home, server, capsys):
    configure(home, server)
    code, out, err = run(capsys, "cron", "create", "every 2h", "Check the build.",
                         "--name", "build", "--deliver", "telegram:42")
    assert code == 0, err
    [job] = jobs(home)
    assert out.startswith(f"Created job {job['id']} 'build': every 120m, next run ")
    assert job["deliver"] == "telegram:42" and job["schedule"]["minutes"] == 120
    code, out, _ = run(capsys, "cron", "add", "0 9 * * 1-5", "Weekday brief.")
    assert code == 0 and len(jobs(home)) == 2
    code, out, _ = run(capsys, "cron", "list")
    assert code == 0 and "build" in out and "0 9 * * 1-5" in out and "telegram:42" in out
    assert run(capsys, "cron") == (code, out, "")  # the group alone lists

    code, out, _ = run(capsys, "cron", "edit", "build", "--schedule", "every 30m",
                       "--prompt", "Check the build and the tests.")
    assert code == 0 and "every 30m" in out
    edited = next(j for j in jobs(home) if j["name"] == "build")
    assert edited["prompt"] == "Check the build and the tests."
    assert edited["schedule"] == {"kind": "interval", "minutes": 30, "display": "every 30m"}

    assert run(capsys, "cron", "pause", "build", "--reason", "flaky")[0] == 0
    code, out, _ = run(capsys, "cron", "list")
    assert "build" not in out and "1 paused or finished job not shown: --all" in out
    code, out, _ = run(capsys, "cron", "list", "--all", "--json")
    paused = next(j for j in json.loads(out) if j["name"] == "build")
    assert paused["state"] == "paused" and paused["paused_reason"] == "flaky"
    assert run(capsys, "cron", "resume", job["id"])[0] == 0
    assert next(j for j in jobs(home) if j["name"] == "build")["enabled"] is True

    code, out, _ = run(capsys, "cron", "remove", "build")
    assert code == 0 and f"Removed job {job['id']}" in out
    assert [j["name"] for j in jobs(home)] == ["Weekday brief."]
    code, _, err = run(capsys, "cron", "remove", "build")
    assert code == 1 and "no cron job 'build'" in err


def test_a_bad_schedule_is_refused_with_an_example(home, server, capsys):
    configure(home, server)
    code, out, err = run(capsys, "cron", "create", "every blue moon", "x")
    assert code == 1
    assert "invalid schedule 'every blue moon'" in err and "'every 30m'" in err
    assert not (home / "cron" / "jobs.json").exists()


def test_run_tick_runs_and_status(home, server, capsys, tmp_path):
    configure(home, server)
    report = tmp_path / "out.md"
    run(capsys, "cron", "create", "in 1m", "Say hello.", "--name", "hello",
        "--deliver", f"file:{report}")
    [job] = jobs(home)
    server.script(reply_text("Hello!"))
    code, out, err = run(capsys, "cron", "run", "hello")
    assert code == 0, err
    assert f"{job['id']} 'hello': ok (manual, attempt 1)" in out
    assert f"file:{report}: delivered" in out and report.read_text() == "Hello!\n"
    assert jobs(home)[0]["repeat"]["completed"] == 0  # a manual run leaves the schedule

    code, out, _ = run(capsys, "cron", "tick")
    assert code == 0 and out == "No job is due.\n"
    code, out, _ = run(capsys, "cron", "runs", "hello")
    assert code == 0 and "ok" in out and "manual #1" in out and ".md" in out
    code, out, _ = run(capsys, "cron", "runs", "--json")
    [row] = json.loads(out)
    assert row["status"] == "ok" and Path(row["output_path"]).read_text().count("Hello!") == 1

    code, out, _ = run(capsys, "cron", "status")
    assert code == 0 and "Scheduler: not running" in out and "hermes cron tick" in out
    assert "Jobs: 1 (1 enabled)" in out and f"Next: {job['id']} 'hello'" in out


def test_tick_runs_what_is_due_for_a_system_crontab(home, server, capsys):
    configure(home, server)
    run(capsys, "cron", "create", "every 1h", "Due now.", "--name", "due")
    stored = jobs(home)
    stored[0]["next_run_at"] = "2026-01-01T00:00:00+00:00"  # long overdue
    (home / "cron" / "jobs.json").write_text(json.dumps({"jobs": stored}))
    code, out, err = run(capsys, "cron", "tick", "--json")
    assert code == 0, err
    [record] = json.loads(out)["runs"]
    assert record["status"] == "ok" and record["trigger"] == "schedule"
    assert run(capsys, "cron", "tick")[1] == "No job is due.\n"


def _start_daemon(hermes: str, env: dict[str, str]) -> subprocess.Popen[str]:
    """``hermes cron daemon``, once ``cron status`` reports it running."""
    daemon = subprocess.Popen([hermes, "cron", "daemon"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + WAIT
    status = ""
    while "Scheduler: running in daemon" not in status and time.monotonic() < deadline:
        status = subprocess.run([hermes, "cron", "status"], env=env, capture_output=True,
                                text=True, timeout=WAIT).stdout
    if f"Scheduler: running in daemon (pid {daemon.pid})" not in status:
        daemon.kill()
        raise AssertionError(f"the daemon did not report running: {status!r}")
    return daemon


def test_the_daemon_runs_due_jobs_and_stops_on_sigterm(home, server):
    configure(home, server, cron={"tick_interval": 0.2})
    env = {**os.environ, "HERMES_HOME": str(home)}
    hermes = str(Path(sys.executable).parent / "hermes")
    subprocess.run([hermes, "cron", "create", "every 1h"], input="Daemon job.\n", env=env,
                   check=True, capture_output=True, text=True, timeout=WAIT)  # prompt on stdin
    assert jobs(home)[0]["prompt"] == "Daemon job."
    daemon = _start_daemon(hermes, env)
    try:
        now = datetime.now(timezone.utc).isoformat()  # a one-shot time: now
        subprocess.run([hermes, "cron", "edit", jobs(home)[0]["id"], "--schedule", now],
                       env=env, check=True, capture_output=True, timeout=WAIT)
        deadline = time.monotonic() + WAIT
        while (home / "cron" / "jobs.json").exists() and jobs(home) \
                and time.monotonic() < deadline:
            time.sleep(0.05)  # polling a condition (the one-shot ran and went), bounded
        assert jobs(home) == []
    finally:
        daemon.send_signal(signal.SIGTERM)
        out, err = daemon.communicate(timeout=WAIT)
    assert daemon.returncode == 0, err
    assert "cron scheduler stopped" in err
    assert not (home / "cron" / "scheduler.json").exists()


def test_the_daemon_stops_cleanly_when_its_terminal_closes(home, server):
    configure(home, server, cron={"tick_interval": 0.2})
    env = {**os.environ, "HERMES_HOME": str(home)}
    hermes = str(Path(sys.executable).parent / "hermes")
    daemon = _start_daemon(hermes, env)
    try:
        daemon.send_signal(signal.SIGHUP)
        out, err = daemon.communicate(timeout=WAIT)
    finally:
        if daemon.poll() is None:
            daemon.kill()
    assert daemon.returncode == 0, err  # not -SIGHUP: it stopped through its handler
    assert "cron scheduler stopped" in err
    assert not (home / "cron" / "scheduler.json").exists()
