"""``hermes cron``: create (add), list, edit, pause, resume, run, remove, status, runs, tick
and daemon."""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from hermes_agent.api import CRON
from hermes_agent.kits.text import plural
from hermes_agent.kits.cli import ListingGroup, cli_kernel

from .cli_show import print_record, print_runs, print_status, print_table, when
from .schema import EXAMPLES

ALIASES = {"add": "create"}


class CronGroup(ListingGroup):
    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, ALIASES.get(cmd_name, cmd_name))


def _fail(exc: Exception) -> click.ClickException:
    return click.ClickException(str(exc))


def _store_and_zone(boot: bool = False) -> tuple[Any, Any, Any]:
    from .jobs import JobStore
    from .schedule import ScheduleError, default_zone

    kernel = cli_kernel(boot=boot)
    try:
        return kernel, JobStore(kernel.home), default_zone(kernel.config)
    except ScheduleError as exc:
        raise click.ClickException(f"cron.timezone: {exc}") from exc


def _toolsets(value: str | None) -> list[str] | None:
    return None if value is None else [t.strip() for t in value.split(",") if t.strip()]


def job_options(fn: Any) -> Any:
    """The options create and edit share."""
    for option in reversed([
        click.option("--name", help="A short name (default: the prompt's start)."),
        click.option("--deliver", help="Where results go: local (default), file:PATH or "
                                       "PLATFORM:CHAT_ID; several separated by commas."),
        click.option("--repeat", type=int, help="Runs in all (default: 1 for a one-shot "
                                                "time, forever otherwise)."),
        click.option("--retries", type=int, help="Retries of a failed run (default: "
                                                  "cron.retries, 1)."),
        click.option("--retry-delay", type=float, help="Seconds before a retry (default: "
                                                       "cron.retry_delay, 60)."),
        click.option("--toolsets", help="Comma-separated toolsets of each run (default: "
                                        "platform_toolsets.cron, else hermes-cron)."),
        click.option("--workdir", help="The folder each run works in."),
        click.option("--model", help="The model of each run (default: the configured one)."),
        click.option("--provider", help="The provider of each run."),
    ]):
        fn = option(fn)
    return fn


@click.group(cls=CronGroup, default="list")
def cron() -> None:
    """Scheduled jobs: the agent runs a prompt on a schedule and delivers the result."""


@cron.command()
@click.argument("schedule")
@click.argument("prompt", required=False)
@job_options
def create(schedule: str, prompt: str | None, **options: Any) -> None:
    """Create a job (alias: add): SCHEDULE then PROMPT (read from stdin when left out).

    SCHEDULE examples: 'every 2h', 'in 30m', '2026-06-01T09:00', '0 9 * * 1-5',
    'CRON_TZ=Europe/Paris 0 9 * * *'.
    """
    from .jobs import JobError, new_job
    from .schedule import ScheduleError, utc_now

    if prompt is None and not sys.stdin.isatty():
        prompt = sys.stdin.read()
    if not (prompt or "").strip():
        raise click.UsageError("give the PROMPT: what the agent should do at each run, e.g. "
                               "hermes cron create 'every 1d' 'Summarise my inbox'")
    _kernel, store, tz = _store_and_zone()
    try:
        job = new_job(schedule, prompt or "", now=utc_now(), tz=tz, name=options["name"],
                      deliver=options["deliver"], repeat=options["repeat"],
                      retries=options["retries"], retry_delay=options["retry_delay"],
                      toolsets=_toolsets(options["toolsets"]), workdir=options["workdir"],
                      model=options["model"], provider=options["provider"])
    except (JobError, ScheduleError) as exc:
        raise _fail(exc) from exc
    with store.locked() as jobs:
        jobs.append(job)
    click.echo(f"Created job {job['id']} {job['name']!r}: {job['schedule_display']}, "
               f"next run {when(job['next_run_at'], tz)}, delivered to {job['deliver']}.")


@cron.command(name="list")
@click.option("--all", "show_all", is_flag=True, help="Include paused and finished jobs.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_jobs(show_all: bool, as_json: bool) -> None:
    """The jobs: schedule, next run, state and last result."""
    from .jobs import JobError

    kernel, store, tz = _store_and_zone()
    try:
        jobs = store.load()
    except JobError as exc:
        raise _fail(exc) from exc
    shown = jobs if show_all else [j for j in jobs if j.get("enabled", True)]
    if as_json:
        click.echo(json.dumps(shown, indent=2, ensure_ascii=False))
        return
    if not jobs:
        click.echo(f"No cron jobs. Create one: hermes cron create SCHEDULE PROMPT "
                   f"(schedules: {EXAMPLES}).")
        return
    print_table(kernel.home, shown, tz)
    hidden = len(jobs) - len(shown)
    if hidden:
        click.echo(f"({plural(hidden, 'paused or finished job')} not shown: --all)")


@cron.command()
@click.argument("job")
@click.option("--schedule", help="A new schedule.")
@click.option("--prompt", help="A new prompt.")
@job_options
def edit(job: str, **changes: Any) -> None:
    """Change a job's schedule, prompt, name, delivery or run options."""
    from .jobs import JobError, apply_update
    from .schedule import ScheduleError, utc_now

    changes["toolsets"] = _toolsets(changes["toolsets"])
    if all(v is None for v in changes.values()):
        raise click.UsageError("nothing to change: give --schedule, --prompt, --name, "
                               "--deliver or another option (see --help)")
    _kernel, store, tz = _store_and_zone()
    try:
        with store.change(job) as found:
            apply_update(found, changes, now=utc_now(), tz=tz)
    except (JobError, ScheduleError) as exc:
        raise _fail(exc) from exc
    click.echo(f"Updated job {found['id']} {found['name']!r}: {found['schedule_display']}, "
               f"next run {when(found.get('next_run_at'), tz)}.")


@cron.command()
@click.argument("job")
@click.option("--reason", help="Why (shown by list and status).")
def pause(job: str, reason: str | None) -> None:
    """Stop running a job until it is resumed."""
    from .jobs import JobError, pause as pause_job
    from .schedule import utc_now

    _kernel, store, _tz = _store_and_zone()
    try:
        with store.change(job) as found:
            pause_job(found, utc_now(), reason)
    except JobError as exc:
        raise _fail(exc) from exc
    click.echo(f"Paused job {found['id']} {found['name']!r}.")


@cron.command()
@click.argument("job")
def resume(job: str) -> None:
    """Put a paused job back on its schedule (from now)."""
    from .jobs import JobError, resume as resume_job
    from .schedule import utc_now

    _kernel, store, tz = _store_and_zone()
    try:
        with store.change(job) as found:
            resume_job(found, utc_now(), tz)
    except JobError as exc:
        raise _fail(exc) from exc
    click.echo(f"Resumed job {found['id']} {found['name']!r}: next run "
               f"{when(found.get('next_run_at'), tz)}.")


@cron.command()
@click.argument("job")
def remove(job: str) -> None:
    """Delete a job (its output files and run history stay)."""
    from .jobs import JobError

    _kernel, store, _tz = _store_and_zone()
    try:
        found = store.remove(job)
    except JobError as exc:
        raise _fail(exc) from exc
    click.echo(f"Removed job {found['id']} {found['name']!r}.")


@cron.command()
@click.argument("job")
def run(job: str) -> None:
    """Run a job now, in this process, whatever its schedule."""
    from .jobs import JobError
    from .scheduler import AlreadyRunning

    kernel = cli_kernel()
    try:
        record = kernel.service(CRON).run_now(job)
    except (JobError, AlreadyRunning) as exc:
        raise _fail(exc) from exc
    print_record(record)
    if record.status != "ok":
        sys.exit(1)


@cron.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(as_json: bool) -> None:
    """Whether a scheduler runs (gateway or daemon), and the jobs due next or running."""
    kernel, store, tz = _store_and_zone()
    print_status(kernel.home, store, tz, as_json)


@cron.command()
@click.argument("job", required=False)
@click.option("--limit", type=click.IntRange(1, 500), default=20, show_default=True,
              help="Attempts to show.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def runs(job: str | None, limit: int, as_json: bool) -> None:
    """The history of attempts (newest first): start, end, status, error, output file."""
    from .jobs import JobError
    from .runs import RunLog

    kernel, store, tz = _store_and_zone()
    job_id = None
    if job:
        try:
            job_id = store.find(job)["id"]
        except JobError:
            job_id = job  # a removed job keeps its history
    rows = RunLog(kernel.home).list(job_id, limit)
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    print_runs(rows, tz)


@cron.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def tick(as_json: bool) -> None:
    """Run the jobs due now once and exit (for a system crontab: `* * * * * hermes cron tick`)."""
    from dataclasses import asdict

    from .jobs import JobError
    from .service import own_service

    scheduler = own_service(cli_kernel()).scheduler()
    try:
        records = scheduler.tick()
    except JobError as exc:
        raise _fail(exc) from exc
    if as_json:
        click.echo(json.dumps({"runs": [asdict(r) for r in records], "skipped": scheduler.busy},
                              indent=2, ensure_ascii=False))
        return
    if not records and not scheduler.busy:
        click.echo("No job is due.")
    for record in records:
        print_record(record)
    names = {j["id"]: j.get("name") for j in scheduler.store.load()}
    for job_id, pid in scheduler.busy.items():
        click.echo(f"{job_id} {names.get(job_id)!r}: skipped, running in process {pid}")


@cron.command()
@click.option("--interval", type=float, help="Seconds between looks at jobs.json at most "
                                             "(default: cron.tick_interval, 60).")
def daemon(interval: float | None) -> None:
    """Run the scheduler in the foreground until SIGTERM, SIGHUP or Ctrl-C (without the gateway)."""
    import asyncio
    import os
    import signal

    from .service import Heartbeat

    kernel = cli_kernel()
    other = Heartbeat(kernel.home).read()
    if other and other.get("pid") != os.getpid():
        click.echo(f"warning: a scheduler already runs (pid {other['pid']}, in "
                   f"{other.get('where')}); both are safe together (a job never runs twice "
                   "at once) but one is enough", err=True)

    async def serve() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        # SIGHUP (a closed terminal) too: the running job is interrupted and recorded.
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(sig, stop.set)
        click.echo(f"cron scheduler running (pid {os.getpid()}); SIGTERM or Ctrl-C stops it",
                   err=True)
        await kernel.service(CRON).serve(stop, label="daemon", interval=interval)
        click.echo("cron scheduler stopped", err=True)

    asyncio.run(serve())
