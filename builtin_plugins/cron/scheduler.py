"""The scheduler: :meth:`Scheduler.tick` runs the jobs due at ``now`` (a clock is injected,
for tests), one after the other.

A due job is *claimed* under the jobs.json lock: its job lease is taken (another process
running it keeps it) and ``next_run_at`` moves to the first time after ``now``, so no other
scheduler sees it due and runs missed while nothing ticked are caught up once. The run is then
recorded in the runs history, its output saved and delivered, and the job updated: its
repeat count, its last status, and on failure a retry ``retry_delay`` seconds later (at most
``retries`` times per occurrence; the job's own values, else ``cron.retries`` and
``cron.retry_delay``). A one-shot job is removed once it has run its ``repeat.times``; one
that failed for good is kept, paused, with its error.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

from hermes_agent import HermesError

from .deliver import Deliverer, as_records
from .execute import Outcome, write_output
from .jobs import JobStore
from .lease import JobLease
from .runs import RunLog
from .schedule import following, iso, parse_time, utc_now

log = logging.getLogger("hermes_agent.cron")
Runner = Callable[[dict[str, Any]], Outcome]


@dataclass
class Policy:
    retries: int = 1
    retry_delay: float = 60.0
    output_keep: int = 50


@dataclass
class RunRecord:
    """What one attempt did (also a row of the runs history)."""

    job_id: str
    name: str
    trigger: str
    attempt: int
    status: str
    started_at: str
    finished_at: str
    error: str | None = None
    output_path: str | None = None
    session_id: str | None = None
    delivery: list[dict[str, Any]] = field(default_factory=list)
    scheduled_for: str | None = None  # the occurrence run (None: a manual run)


class AlreadyRunning(Exception):
    def __init__(self, job_id: str, pid: int | None):
        self.pid = pid
        super().__init__(f"job {job_id} is running now (process {pid}); wait for that run to "
                         "finish (`hermes cron runs` shows it)")


class Scheduler:
    def __init__(self, home: Path, runner: Runner, *, tz: tzinfo,
                 clock: Callable[[], datetime] = utc_now, policy: Policy | None = None,
                 deliverer: Deliverer | None = None,
                 occurrence_guard: Callable[[str], bool] | None = None):
        self.home = Path(home)
        self.runner = runner
        self.tz = tz
        self.clock = clock
        self.policy = policy or Policy()
        self.deliverer = deliverer or Deliverer()
        self.store = JobStore(self.home)
        self.runs = RunLog(self.home)
        self.stopping = threading.Event()
        self.busy: dict[str, int | None] = {}  # due jobs the last tick left to their runner
        # gateway replicas with copies of the same jobs: True for the one that runs an
        # occurrence ("job:scheduled time:attempt"), False for the others
        self.occurrence_guard = occurrence_guard

    # --- what is due -------------------------------------------------------------------------
    @staticmethod
    def is_due(job: dict[str, Any], now: datetime) -> bool:
        due = parse_time(job.get("next_run_at"))
        return bool(job.get("enabled", True)) and due is not None and due <= now

    def next_wakeup(self) -> datetime | None:
        """The earliest ``next_run_at`` of an enabled job."""
        times = [parse_time(j.get("next_run_at")) for j in self.store.load()
                 if j.get("enabled", True)]
        return min((t for t in times if t is not None), default=None)

    def due_jobs(self, now: datetime, jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [job for job in jobs if self.is_due(job, now)]

    # --- one tick ----------------------------------------------------------------------------
    def tick(self, now: datetime | None = None) -> list[RunRecord]:
        """Run every job due at ``now`` (default: the clock) once; returns the attempts. Once
        :attr:`stopping` is set, jobs claimed but not started go back to being due."""
        now = now or self.clock()
        records = []
        self.busy = {}
        claimed = self._claim(now)
        if claimed:
            self.runs.reap()
        try:
            while claimed:
                job, lease, trigger, attempt, due = claimed[0]
                if self.stopping.is_set():
                    break
                claimed.pop(0)
                records.append(self._run(job, lease, trigger, attempt,
                                         job.get("scheduled_at") or due))
        finally:  # stopping, or a run that could not even be recorded: the rest stay due
            for job, lease, _trigger, _attempt, due in claimed:
                self._unclaim(job["id"], due, lease)
        return records

    def _claim(self, now: datetime) -> list[tuple[dict[str, Any], JobLease, str, int, str]]:
        claimed: list[tuple[dict[str, Any], JobLease, str, int, str]] = []
        if not self.due_jobs(now, self.store.load()):  # the usual wake-up: no lock, no write
            return claimed
        with self.store.locked() as jobs:
            for job in self.due_jobs(now, jobs):
                lease = JobLease(self.home, job["id"])
                if not lease.acquire():  # another process runs it: due until that run ends
                    self.busy[job["id"]] = lease.holder()
                    continue
                due = job["next_run_at"]
                retrying = int(job.get("attempt") or 0)
                if not retrying:
                    job["scheduled_at"] = due  # the occurrence (kept while it is retried)
                anchor = parse_time(job.get("scheduled_at")) or parse_time(due)
                job["next_run_at"] = iso(self._following(job, anchor, now))
                occurrence = f"{job['id']}:{job.get('scheduled_at') or due}:{retrying + 1}"
                ours = self._ours(occurrence)
                if not ours:
                    lease.release()
                    if ours is None:  # unknown: it stays due for the next tick
                        job["next_run_at"] = due
                    elif not retrying:
                        job.pop("scheduled_at", None)
                    continue
                claimed.append((dict(job), lease, "retry" if retrying else "schedule",
                                retrying + 1, due))
        return claimed

    def _ours(self, occurrence: str) -> bool | None:
        """Whether this scheduler runs ``occurrence`` (always, without replicas); None when
        the replicas' database cannot say."""
        if self.occurrence_guard is None:
            return True
        try:
            ours = self.occurrence_guard(occurrence)
        except Exception as exc:  # the shared database is away: not run here this time
            log.warning("cron: cannot tell whether another replica runs %s (%s); it stays due",
                        occurrence, exc)
            return None
        if not ours:
            log.info("cron: another replica runs %s", occurrence)
        return ours

    def _unclaim(self, job_id: str, due: str, lease: JobLease) -> None:
        try:
            with self.store.locked() as jobs:
                for job in jobs:
                    if job.get("id") == job_id:
                        job["next_run_at"] = due
        except Exception as exc:  # it runs at its next time instead
            log.error("cron: job %s could not be put back to due: %s", job_id, exc)
        finally:
            lease.release()

    def _following(self, job: dict[str, Any], anchor: datetime | None,
                   now: datetime) -> datetime | None:
        try:
            return following(job.get("schedule") or {}, anchor, now, self.tz)
        except Exception as exc:  # croniter missing or a job edited by hand
            log.error("cron: job %s: cannot compute its next run: %s", job.get("id"), exc)
            return None

    def run_now(self, ref: str) -> RunRecord:
        """Run one job now in this process, whatever its schedule (``hermes cron run``)."""
        job = self.store.find(ref)
        lease = JobLease(self.home, job["id"])
        if not lease.acquire():
            raise AlreadyRunning(job["id"], lease.holder())
        return self._run(dict(job), lease, "manual", 1, None)

    # --- one attempt -------------------------------------------------------------------------
    def _run(self, job: dict[str, Any], lease: JobLease, trigger: str, attempt: int,
             due: str | None) -> RunRecord:
        started = self.clock()
        try:
            run_id = self.runs.start(job, trigger=trigger, attempt=attempt,
                                     started_at=iso(started) or "", scheduled_for=due)
            try:
                outcome = self.runner(job)
            except Exception as exc:  # a failing run is recorded, never raised into the loop
                if isinstance(exc, HermesError):  # its message says what to fix
                    log.info("cron: job %s failed: %s", job["id"], exc)
                    outcome = Outcome(False, error=str(exc))
                else:
                    log.exception("cron: job %s raised", job["id"])
                    outcome = Outcome(False, error=f"{type(exc).__name__}: {exc}")
            finished = self.clock()
            record = self._record(run_id, job, trigger, attempt, started, finished, outcome)
            record.scheduled_for = due
            self._update_job(job["id"], trigger, outcome, record, finished)
            return record
        finally:
            lease.release()

    def _record(self, run_id: int, job: dict[str, Any], trigger: str, attempt: int,
                started: datetime, finished: datetime, outcome: Outcome) -> RunRecord:
        output = write_output(self.home, job, started, finished, outcome,
                              self.policy.output_keep, self.tz)
        final_failure = not outcome.ok and (trigger == "manual" or
                                            attempt > self._retries(job))
        delivery: list[dict[str, Any]] = []
        if outcome.ok:
            delivery = as_records(self.deliverer.deliver(job, outcome.text or "(no response)"))
        elif final_failure:
            delivery = as_records(self.deliverer.deliver(
                job, f"Cron job {job.get('name')!r} failed: {outcome.error}"))
        status = "ok" if outcome.ok else ("interrupted" if outcome.interrupted else "error")
        record = RunRecord(job["id"], str(job.get("name") or ""), trigger, attempt, status,
                           iso(started) or "", iso(finished) or "", outcome.error, str(output),
                           outcome.session_id, delivery)
        self.runs.finish(run_id, status=status, finished_at=record.finished_at,
                         error=record.error, output_path=record.output_path,
                         session_id=record.session_id, delivery=delivery)
        return record

    def _retries(self, job: dict[str, Any]) -> int:
        value = job.get("retries")
        return int(self.policy.retries if value is None else value)

    def _retry_delay(self, job: dict[str, Any]) -> float:
        value = job.get("retry_delay")
        return float(self.policy.retry_delay if value is None else value)

    def _update_job(self, job_id: str, trigger: str, outcome: Outcome, record: RunRecord,
                    finished: datetime) -> None:
        failed = [d["error"] for d in record.delivery if not d["ok"]]
        with self.store.locked() as jobs:
            job = next((j for j in jobs if j.get("id") == job_id), None)
            if job is None:
                return  # removed while it ran
            job.update(last_run_at=record.started_at, last_status="ok" if outcome.ok else "error",
                       last_error=outcome.error, last_delivery_error="; ".join(failed) or None)
            if trigger == "manual":
                return
            if outcome.ok:
                self._done(jobs, job)
            else:
                self._failed(jobs, job, finished)

    def _done(self, jobs: list[dict[str, Any]], job: dict[str, Any]) -> None:
        job["attempt"] = 0
        job.pop("scheduled_at", None)
        repeat = job.setdefault("repeat", {"times": None, "completed": 0})
        repeat["completed"] = int(repeat.get("completed") or 0) + 1
        times = repeat.get("times")
        if (times and repeat["completed"] >= times) or (
                job.get("next_run_at") is None and (job.get("schedule") or {}).get("kind") == "once"):
            jobs.remove(job)
            return
        self._settle(job)

    def _failed(self, jobs: list[dict[str, Any]], job: dict[str, Any],
                finished: datetime) -> None:
        attempt = int(job.get("attempt") or 0) + 1
        if attempt <= self._retries(job):
            job["attempt"] = attempt
            retry_at = finished + timedelta(seconds=self._retry_delay(job))
            regular = parse_time(job.get("next_run_at"))
            job["next_run_at"] = iso(min(retry_at, regular) if regular else retry_at)
            job["state"] = "retrying"
            return
        job["attempt"] = 0
        job.pop("scheduled_at", None)
        repeat = job.setdefault("repeat", {"times": None, "completed": 0})
        repeat["completed"] = int(repeat.get("completed") or 0) + 1
        if job.get("next_run_at") is None:  # a one-shot that failed for good: kept, paused
            job.update(enabled=False, state="failed", paused_at=iso(finished),
                       paused_reason="the run failed; `hermes cron resume ID` runs it again")
            return
        if repeat.get("times") and repeat["completed"] >= repeat["times"]:
            jobs.remove(job)
            return
        self._settle(job)

    @staticmethod
    def _settle(job: dict[str, Any]) -> None:
        if not job.get("enabled", True):
            job["state"] = "paused"
        elif job.get("next_run_at") is None:
            job["state"] = "error"
            job["last_error"] = job.get("last_error") or (
                "cannot compute the next run (for a cron expression: is croniter installed? "
                "pip install 'hermes-agent-runtime[cron]')")
        else:
            job["state"] = "scheduled"
