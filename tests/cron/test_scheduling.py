"""When jobs run, on a simulated clock, each run a real agent session against the fake model:
once per occurrence, a missed run caught up once after downtime, retries per the job's
policy, one-shot jobs removed once done."""

from __future__ import annotations

from datetime import datetime, timedelta

from hermes_agent.testing.fake_llm import reply_error, reply_text

from .conftest import T0, Clock, add_job, load_job


def minutes(values: list[str | None]) -> list[datetime]:
    return [datetime.fromisoformat(v) for v in values if v]


def test_an_every_minute_job_fires_exactly_once_per_minute_over_an_hour(kernel_for, clock,
                                                                       server):
    kernel = kernel_for()
    interval = add_job(kernel, "every 1m", "Interval job.")
    expression = add_job(kernel, "* * * * *", "Cron job.")
    scheduler = kernel.service("cron").scheduler(clock=clock)
    records = []
    while clock.now < T0 + timedelta(hours=1):
        clock.advance(seconds=15)
        records += scheduler.tick()
    expected = [T0 + timedelta(minutes=n) for n in range(1, 61)]
    for job in (interval, expression):
        mine = [r for r in records if r.job_id == job["id"]]
        assert [r.status for r in mine] == ["ok"] * 60
        assert minutes([r.scheduled_for for r in mine]) == expected
        # each ran in the tick of its minute, not later
        assert minutes([r.started_at for r in mine]) == expected
    assert len(scheduler.runs.list(limit=500)) == 120
    assert len(server.posts()) == 120  # one agent turn each, nothing else
    assert load_job(kernel, interval["id"])["next_run_at"] == (T0 + timedelta(minutes=61)).isoformat()


def test_a_job_missed_during_downtime_runs_once_on_start_then_keeps_its_grid(kernel_for,
                                                                          clock):
    kernel = kernel_for()
    hourly = add_job(kernel, "every 1h")
    on_the_hour = add_job(kernel, "0 * * * *")
    clock.advance(hours=5, minutes=30)  # nothing ticked for five and a half hours
    scheduler = kernel.service("cron").scheduler(clock=clock)
    first = scheduler.tick()
    assert sorted(r.job_id for r in first) == sorted([hourly["id"], on_the_hour["id"]])
    assert scheduler.tick() == [] and scheduler.tick(clock.advance(minutes=29)) == []
    assert load_job(kernel, hourly["id"])["next_run_at"] == (T0 + timedelta(hours=6)).isoformat()
    later = scheduler.tick(clock.advance(minutes=1))  # 14:00
    assert sorted(r.job_id for r in later) == sorted([hourly["id"], on_the_hour["id"]])
    assert len(scheduler.runs.list()) == 4


def test_a_failed_run_is_retried_per_the_jobs_policy_and_recorded(kernel_for, clock, server):
    kernel = kernel_for()
    job = add_job(kernel, "every 1h", retries=2, retry_delay=120)
    server.script(reply_error(500, "model down"), reply_error(500, "model down again"),
                  reply_text("third time lucky"))
    scheduler = kernel.service("cron").scheduler(clock=clock)
    first = scheduler.tick(clock.advance(hours=1))
    assert [(r.status, r.trigger, r.attempt) for r in first] == [("error", "schedule", 1)]
    assert "model down" in first[0].error
    stored = load_job(kernel, job["id"])
    assert stored["state"] == "retrying" and stored["last_status"] == "error"
    assert stored["next_run_at"] == (T0 + timedelta(hours=1, minutes=2)).isoformat()
    assert scheduler.tick(clock.advance(minutes=1)) == []  # not before the delay
    second = scheduler.tick(clock.advance(minutes=1))
    assert [(r.status, r.trigger, r.attempt) for r in second] == [("error", "retry", 2)]
    third = scheduler.tick(clock.advance(minutes=2))
    assert [(r.status, r.trigger, r.attempt) for r in third] == [("ok", "retry", 3)]
    # the retried occurrence is the 09:00 one; the grid goes on at 10:00
    assert {r.scheduled_for for r in first + second + third} == {
        (T0 + timedelta(hours=1)).isoformat()}
    stored = load_job(kernel, job["id"])
    assert stored["state"] == "scheduled" and stored["attempt"] == 0
    assert stored["last_status"] == "ok" and stored["last_error"] is None
    assert stored["next_run_at"] == (T0 + timedelta(hours=2)).isoformat()
    history = scheduler.runs.list(job["id"])
    assert [(h["status"], h["attempt"]) for h in history] == [("ok", 3), ("error", 2),
                                                              ("error", 1)]
    assert all(h["output_path"] and h["finished_at"] for h in history)


def test_retries_run_out_and_the_schedule_goes_on(kernel_for, clock, server):
    kernel = kernel_for(cron={"retries": 1, "retry_delay": 60})
    job = add_job(kernel, "every 1h")
    server.script(reply_error(500, "down"), reply_error(500, "still down"))
    scheduler = kernel.service("cron").scheduler(clock=clock)
    assert [r.attempt for r in scheduler.tick(clock.advance(hours=1))] == [1]
    assert [r.attempt for r in scheduler.tick(clock.advance(minutes=1))] == [2]
    stored = load_job(kernel, job["id"])
    assert stored["attempt"] == 0 and stored["last_status"] == "error"
    assert stored["enabled"] and "still down" in stored["last_error"]
    assert stored["next_run_at"] == (T0 + timedelta(hours=2)).isoformat()


def test_a_one_shot_job_runs_once_and_is_removed(kernel_for, clock):
    kernel = kernel_for()
    job = add_job(kernel, "in 30m")
    scheduler = kernel.service("cron").scheduler(clock=clock)
    assert scheduler.tick(clock.advance(minutes=29)) == []
    assert [r.status for r in scheduler.tick(clock.advance(minutes=1))] == ["ok"]
    assert load_job(kernel, job["id"]) is None
    assert scheduler.tick(clock.advance(hours=1)) == []
    assert [r["status"] for r in scheduler.runs.list(job["id"])] == ["ok"]


def test_a_one_shot_job_that_fails_for_good_is_kept_paused_with_its_error(kernel_for, clock,
                                                                        server):
    kernel = kernel_for()
    job = add_job(kernel, "2026-03-02T09:00", retries=0)
    server.script(reply_error(500, "boom"))
    scheduler = kernel.service("cron").scheduler(clock=clock)
    assert [r.status for r in scheduler.tick(clock.advance(hours=1))] == ["error"]
    stored = load_job(kernel, job["id"])
    assert stored["enabled"] is False and stored["state"] == "failed"
    assert "boom" in stored["last_error"]
    assert scheduler.tick(clock.advance(hours=1)) == []


def test_repeat_limits_the_runs_and_a_paused_job_does_not_run(kernel_for, clock):
    from hermes_agent.builtin_plugins.cron.jobs import JobStore, pause, resume

    kernel = kernel_for()
    limited = add_job(kernel, "every 10m", repeat=2)
    paused = add_job(kernel, "every 10m")
    store = JobStore(kernel.home)
    with store.change(paused["id"]) as job:
        pause(job, clock())
    scheduler = kernel.service("cron").scheduler(clock=clock)
    ran = [r.job_id for _ in range(4) for r in scheduler.tick(clock.advance(minutes=10))]
    assert ran == [limited["id"], limited["id"]]
    assert load_job(kernel, limited["id"]) is None
    with store.change(paused["id"]) as job:
        resume(job, clock(), scheduler.tz)
    assert scheduler.tick(clock.advance(minutes=10))[0].job_id == paused["id"]


def test_jobs_claimed_but_not_started_stay_due_when_the_scheduler_stops(kernel_for):
    kernel = kernel_for()
    clock = Clock()
    jobs = [add_job(kernel, "every 1h", f"job {n}") for n in range(3)]
    scheduler = kernel.service("cron").scheduler(clock=clock)
    seen = []

    def first_then_stop(job):
        seen.append(job["id"])
        scheduler.stopping.set()
        from hermes_agent.builtin_plugins.cron.execute import Outcome
        return Outcome(True, "ok")

    scheduler.runner = first_then_stop
    assert len(scheduler.tick(clock.advance(hours=1))) == 1
    left = [load_job(kernel, j["id"]) for j in jobs if j["id"] not in seen]
    assert len(left) == 2
    assert all(j["next_run_at"] == (T0 + timedelta(hours=1)).isoformat() for j in left)
