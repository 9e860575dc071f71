"""``cron/jobs.json``: the original's shape round-trips (keys this version does not use are
kept), private modes, concurrent writers from several processes lose nothing, and a corrupt
file is never overwritten."""

from __future__ import annotations

import json
import multiprocessing
import stat
from datetime import timezone
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.builtin_plugins.cron.jobs import JobError, JobStore, pause, resume

from .conftest import T0, WAIT, Clock, add_job, load_job

# A job as Hermes Agent 0.19 writes it (with keys this version does not use).
ORIGINAL_JOB = {
    "id": "a1b2c3d4e5f6", "name": "Morning brief", "prompt": "Summarise my calendar.",
    "skills": [], "skill": None, "model": None, "provider": None, "provider_snapshot": None,
    "model_snapshot": None, "base_url": None, "script": None, "no_agent": False,
    "context_from": None,
    "schedule": {"kind": "interval", "minutes": 30, "display": "every 30m"},
    "schedule_display": "every 30m", "repeat": {"times": None, "completed": 4},
    "enabled": True, "state": "scheduled", "paused_at": None, "paused_reason": None,
    "created_at": "2026-03-01T07:00:00+00:00", "next_run_at": "2026-03-02T08:30:00+00:00",
    "last_run_at": "2026-03-02T08:00:00+00:00", "last_status": "ok", "last_error": None,
    "last_delivery_error": None, "deliver": "local", "origin": None,
    "enabled_toolsets": None, "workdir": None,
}


def write_original(home: Path) -> Path:
    path = home / "cron" / "jobs.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"jobs": [ORIGINAL_JOB],
                                "updated_at": "2026-03-02T08:00:05+00:00"}, indent=2))
    return path


def test_a_jobs_file_written_by_the_original_loads_runs_and_keeps_its_keys(kernel_for, home):
    path = write_original(home)
    kernel = kernel_for()
    clock = Clock()
    [record] = kernel.service("cron").scheduler(clock=clock).tick(clock.advance(minutes=30))
    assert record.job_id == "a1b2c3d4e5f6" and record.status == "ok"
    stored = json.loads(path.read_text())
    job = stored["jobs"][0]
    assert {k: job[k] for k in ("skills", "provider_snapshot", "context_from", "no_agent")} == {
        "skills": [], "provider_snapshot": None, "context_from": None, "no_agent": False}
    assert job["repeat"] == {"times": None, "completed": 5}
    assert job["next_run_at"] == "2026-03-02T09:00:00+00:00"
    assert job["last_run_at"] == "2026-03-02T08:30:00+00:00" and job["last_status"] == "ok"
    assert set(ORIGINAL_JOB) <= set(job) and "updated_at" in stored


def test_jobs_round_trip_through_the_file_with_private_modes(kernel_for):
    kernel = kernel_for()
    job = add_job(kernel, "CRON_TZ=Europe/Paris 0 9 * * 1-5", "Weekday brief.", name="brief",
                  deliver="telegram:42", retries=3, retry_delay=30)
    store = JobStore(kernel.home)
    assert store.load() == [job]
    assert json.loads(store.path.read_text())["jobs"] == [job]
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
    with store.change("brief") as found:
        pause(found, T0, "holiday")
    assert load_job(kernel, job["id"])["state"] == "paused"
    with store.change(job["id"][:6]) as found:  # a unique id prefix names it too
        resume(found, T0, timezone.utc)
    again = load_job(kernel, job["id"])
    assert again == {**job, "paused_at": None, "paused_reason": None}


def add_many(home: str, prefix: str, count: int, barrier: Any) -> None:
    from hermes_agent.builtin_plugins.cron.jobs import JobStore

    store = JobStore(Path(home))
    barrier.wait(timeout=WAIT)
    for n in range(count):
        with store.locked() as jobs:
            jobs.append({"id": f"{prefix}{n}", "name": f"{prefix}{n}"})


def test_writers_in_several_processes_lose_no_change(home):
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(3)
    workers = [context.Process(target=add_many, args=(str(home), p, 40, barrier))
               for p in ("a", "b", "c")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    ids = sorted(j["id"] for j in JobStore(home).load())
    assert ids == sorted(f"{p}{n}" for p in "abc" for n in range(40))


def test_a_corrupt_jobs_file_is_reported_and_never_overwritten(kernel_for, home):
    kernel = kernel_for()
    path = home / "cron" / "jobs.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"jobs": [{"id": "x",')
    with pytest.raises(JobError, match="is not valid JSON .*fix it by hand or move it away"):
        add_job(kernel, "every 1h")
    with pytest.raises(JobError, match="is not valid JSON"):
        kernel.service("cron").tick()
    assert path.read_text() == '{"jobs": [{"id": "x",'


def test_an_unknown_job_and_an_ambiguous_name_name_the_fix(kernel_for):
    kernel = kernel_for()
    add_job(kernel, "every 1h", name="twin")
    add_job(kernel, "every 2h", name="twin")
    store = JobStore(kernel.home)
    with pytest.raises(JobError, match="`hermes cron list --all` shows the ids"):
        store.find("nope")
    with pytest.raises(JobError, match="'twin' names 2 jobs .*use the job id"):
        store.find("twin")
