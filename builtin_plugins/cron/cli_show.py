"""How ``hermes cron`` prints jobs, attempts and the scheduler's status."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from hermes_agent.kits.text import ellipsize, plural, table


def when(value: str | None, tz: Any) -> str:
    """An ISO time from jobs.json in the schedule's zone, ``-`` for none."""
    from .schedule import parse_time

    moment = parse_time(value)
    if moment is None:
        return "-"
    return moment.astimezone(tz).strftime("%Y-%m-%d %H:%M %Z").strip()


def _running(home: Path, job_id: str) -> int | None:
    from .lease import JobLease

    return JobLease(home, job_id).holder()


def print_table(home: Path, jobs: list[dict[str, Any]], tz: Any) -> None:
    rows = []
    for job in jobs:
        pid = _running(home, str(job.get("id")))
        state = f"running (pid {pid})" if pid else str(job.get("state") or "scheduled")
        last = job.get("last_status") or "-"
        if job.get("last_error") and last == "error":
            last = f"error: {ellipsize(str(job['last_error']), 40)}"
        rows.append([str(job.get("id")), ellipsize(str(job.get("name") or ""), 24),
                     ellipsize(str(job.get("schedule_display") or ""), 28),
                     when(job.get("next_run_at"), tz), state, last,
                     ellipsize(str(job.get("deliver") or "local"), 28)])
    click.echo("\n".join(table(["id", "name", "schedule", "next run", "state", "last", "deliver"],
                               rows)))


def print_record(record: Any) -> None:
    click.echo(f"{record.job_id} {record.name!r}: {record.status} ({record.trigger}, attempt "
               f"{record.attempt})")
    if record.error:
        click.echo(f"  error: {record.error}")
    click.echo(f"  output: {record.output_path}")
    for delivery in record.delivery:
        state = "delivered" if delivery["ok"] else f"NOT delivered: {delivery['error']}"
        click.echo(f"  {delivery['target']}: {state}")


def print_runs(rows: list[dict[str, Any]], tz: Any) -> None:
    if not rows:
        click.echo("No runs recorded yet.")
        return
    lines = []
    for row in rows:
        undelivered = [d["target"] for d in row["delivery"] if not d["ok"]]
        note = row["error"] or (f"not delivered to {', '.join(undelivered)}"
                                if undelivered else "")
        lines.append([str(row["id"]), str(row["job_id"]), ellipsize(row["job_name"], 20),
                      when(row["started_at"], tz), when(row["finished_at"], tz),
                      row["status"], f"{row['trigger']} #{row['attempt']}",
                      ellipsize(note, 50), row["output_path"] or "-"])
    click.echo("\n".join(table(["run", "job", "name", "started", "finished", "status",
                                "trigger", "error", "output"], lines)))


def print_status(home: Path, store: Any, tz: Any, as_json: bool) -> None:
    from .jobs import JobError
    from .runs import RunLog
    from .service import Heartbeat

    loop = Heartbeat(home).read()
    try:
        jobs = store.load()
    except JobError as exc:
        raise click.ClickException(str(exc)) from exc
    enabled = [j for j in jobs if j.get("enabled", True)]
    due = sorted((j for j in enabled if j.get("next_run_at")), key=lambda j: j["next_run_at"])
    running = {str(j["id"]): pid for j in jobs if (pid := _running(home, str(j["id"])))}
    data = {"scheduler": loop, "jobs": len(jobs), "enabled": len(enabled),
            "running": running, "next": due[0] if due else None,
            "failed_runs": RunLog(home).count(status="error")}
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
        return
    if loop:
        click.echo(f"Scheduler: running in {loop.get('where')} (pid {loop['pid']}), last tick "
                   f"{when_epoch(loop.get('last_tick_at'), tz)}")
    else:
        click.echo("Scheduler: not running. Jobs run while `hermes gateway` or `hermes cron "
                   "daemon` runs, or at each `hermes cron tick` (e.g. from a system crontab: "
                   "* * * * * hermes cron tick).")
    click.echo(f"Jobs: {len(jobs)} ({len(enabled)} enabled)")
    if due:
        click.echo(f"Next: {due[0]['id']} {due[0].get('name')!r} at "
                   f"{when(due[0]['next_run_at'], tz)}")
    for job_id, pid in running.items():
        click.echo(f"Running: {job_id} (pid {pid})")
    if data["failed_runs"]:
        click.echo(f"{plural(data['failed_runs'], 'failed attempt')} in the history: "
                   "hermes cron runs")


def when_epoch(value: Any, tz: Any) -> str:
    from datetime import datetime

    try:
        return datetime.fromtimestamp(float(value), tz).strftime("%Y-%m-%d %H:%M:%S %Z")
    except (TypeError, ValueError):
        return "-"
