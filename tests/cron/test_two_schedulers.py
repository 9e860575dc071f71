"""Two schedulers on one $HERMES_HOME, in two processes, never run one job twice: ticking in
lockstep over a simulated hour, each occurrence runs once; and a job running in one process
cannot be started by another (`hermes cron run` says who runs it)."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from hermes_agent.testing.fake_llm import reply_text

from .conftest import T0, WAIT, Clock, add_job

STEPS = 4 * 60  # a tick every 15 simulated seconds for an hour


def tick_in_lockstep(home: str, barrier: Any, results: Any) -> None:
    """One process: its own kernel on ``home``, ticking the same simulated times as the
    other, each tick started together (the barrier)."""
    from hermes_agent.testing import make_kernel

    kernel = make_kernel(home, env={"HERMES_HOME": home}, builtins=True)
    clock = Clock()
    scheduler = kernel.service("cron").scheduler(clock=clock)
    mine = []
    for _ in range(STEPS):
        clock.advance(seconds=15)
        barrier.wait(timeout=WAIT)
        mine += [(r.job_id, r.scheduled_for) for r in scheduler.tick()]
    results.put((os.getpid(), mine))


def test_two_processes_ticking_together_run_each_occurrence_once(kernel_for, server):
    kernel = kernel_for()
    jobs = [add_job(kernel, "every 1m", "Minute job."), add_job(kernel, "*/5 * * * *", "Five."),
            add_job(kernel, "every 7m", "Seven.")]
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(2), context.Queue()
    workers = [context.Process(target=tick_in_lockstep,
                               args=(str(kernel.home), barrier, results)) for _ in range(2)]
    for worker in workers:
        worker.start()
    outcomes = [results.get(timeout=300) for _ in workers]
    for worker in workers:
        worker.join(WAIT)
        assert worker.exitcode == 0
    runs = [run for _pid, mine in outcomes for run in mine]
    expected = {jobs[0]["id"]: 60, jobs[1]["id"]: 12, jobs[2]["id"]: 8}
    for job_id, count in expected.items():
        occurrences = [due for ran, due in runs if ran == job_id]
        assert len(occurrences) == count, job_id
        assert len(set(occurrences)) == count  # never the same occurrence twice
    minute = sorted(datetime.fromisoformat(d) for j, d in runs if j == jobs[0]["id"])
    assert minute == [T0 + timedelta(minutes=n) for n in range(1, 61)]
    history = kernel.service("cron").scheduler().runs.list(limit=500)
    assert len(history) == sum(expected.values())
    assert {row["status"] for row in history} == {"ok"}
    assert {row["pid"] for row in history} <= {pid for pid, _ in outcomes}


def hermes(home: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "HERMES_HOME": str(home)}
    return subprocess.Popen([str(Path(sys.executable).parent / "hermes"), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def test_a_job_running_in_one_process_is_not_started_by_another(kernel_for, server, home):
    kernel = kernel_for()
    job = add_job(kernel, "every 1h", "Slow job.")
    server.script(reply_text("finally", delay=4 * WAIT))  # never: the run is killed first
    first = hermes(home, "cron", "run", job["id"])
    deadline = time.monotonic() + WAIT
    while not server.posts() and time.monotonic() < deadline:
        time.sleep(0.02)  # polling a condition (the request arrived), bounded
    assert server.posts(), "the first run never reached the model"
    second = hermes(home, "cron", "run", job["id"])
    out, err = second.communicate(timeout=WAIT)
    assert second.returncode == 1
    assert f"job {job['id']} is running now (process {first.pid})" in err
    ticking = hermes(home, "cron", "tick")  # the job is due (since 09:00 on T0's day)
    out, err = ticking.communicate(timeout=WAIT)
    assert ticking.returncode == 0, err
    assert f"{job['id']} 'Slow job.': skipped, running in process {first.pid}" in out
    first.kill()  # the lease dies with its process
    first.communicate(timeout=WAIT)
    history = kernel.service("cron").scheduler().runs.list(job["id"])
    assert [(h["status"], h["pid"]) for h in history] == [("interrupted", first.pid)]
    server.script(reply_text("second try"))
    third = hermes(home, "cron", "tick")  # the job is still due: now it runs
    out, err = third.communicate(timeout=WAIT)
    assert third.returncode == 0, err
    assert f"{job['id']} 'Slow job.': ok (schedule, attempt 1)" in out
    with sqlite3.connect(home / "cron" / "runs.db") as db:  # the dead run, marked for good
        rows = db.execute("SELECT trigger, status, error FROM runs ORDER BY id").fetchall()
    assert rows == [("manual", "interrupted", f"process {first.pid} ended during the run"),
                    ("schedule", "ok", None)]
