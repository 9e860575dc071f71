"""``hermes doctor``'s check of scheduled jobs (``doctor_checks``): jobs.json is readable, and
enabled jobs that are overdue have something running them (the gateway, ``hermes cron
daemon`` or a crontab's ``hermes cron tick``)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from hermes_agent.api import Finding

#: a job this late with no scheduler running means nothing runs the jobs
OVERDUE = timedelta(minutes=10)


def cron_findings(home: Path, now: datetime | None = None) -> list[Finding]:
    from .jobs import JobError, JobStore
    from .schedule import parse_time
    from .service import Heartbeat

    store = JobStore(home)
    if not store.path.exists():
        return []
    try:
        jobs = store.load()
    except JobError as exc:
        what, _, fix = str(exc).partition("; ")
        return [Finding("cron", "problem", what, fix or f"fix or move away {store.path}")]
    now = now or datetime.now(timezone.utc)
    late = [job for job in jobs if job.get("enabled", True)
            and (moment := parse_time(job.get("next_run_at"))) is not None
            and now - moment > OVERDUE]
    if late and Heartbeat(home).read() is None:
        names = ", ".join(str(job.get("name") or job.get("id")) for job in late[:5])
        return [Finding("cron", "warn", f"{len(late)} enabled job(s) overdue by more than "
                        f"{OVERDUE.seconds // 60} minutes ({names}) and no scheduler runs",
                        "run `hermes gateway run` or `hermes cron daemon`, or add `* * * * * "
                        "hermes cron tick` to your crontab")]
    enabled = sum(1 for job in jobs if job.get("enabled", True))
    return [Finding("cron", "ok", f"{len(jobs)} job(s), {enabled} enabled")]

