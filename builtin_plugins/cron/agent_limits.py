"""What a job the model schedules with the ``cronjob`` tool may be: it runs later, unattended,
so it must not do more than the session that made it, nor grow without bound.

- Its prompt and name pass the injection scan (the prompt is what the run obeys; the name is
  in the run's system prompt), and are of bounded size.
- It delivers to ``local``, ``origin`` or a report file (``.md``, ``.txt``, ``.log``; not
  hidden, nothing under a dot-folder, not in ``$HERMES_HOME``), never to a chat the session
  could not reach (``PLATFORM:CHAT_ID``) nor onto a file that runs later (``~/.bashrc``).
- It runs at most every :data:`MIN_GAP`, and there are at most :data:`MAX_JOBS` jobs.
- It changes the prompt or delivery of its own jobs only, not of jobs the user created.

The user sets anything else with ``hermes cron create`` / ``hermes cron edit``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

from .jobs import JobError
from .schedule import following, first_run

MAX_JOBS = 50
MIN_GAP = timedelta(minutes=10)
MAX_PROMPT_CHARS = 8000
MAX_NAME_CHARS = 100
REPORT_SUFFIXES = (".md", ".txt", ".log")
#: the origin mark of a job the model made (``origin.by``)
AGENT = "agent"
_ASK = "ask the user to run `hermes cron {how}`"


def made_by_agent(job: dict[str, Any]) -> bool:
    return (job.get("origin") or {}).get("by") == AGENT


def check_text(prompt: str | None, name: str | None, scan: Callable[[str], list[str]]) -> None:
    if prompt is not None and len(prompt) > MAX_PROMPT_CHARS:
        raise JobError(f"the prompt is {len(prompt):,} characters; a job's prompt is at most "
                       f"{MAX_PROMPT_CHARS:,}: keep it to the task and put material in a file "
                       "the run reads")
    if name is not None and len(name) > MAX_NAME_CHARS:
        raise JobError(f"the name is at most {MAX_NAME_CHARS} characters")
    for what, text in (("prompt", prompt), ("name", name)):
        findings = scan(text) if text else []
        if findings:
            raise JobError(f"Refused: the job's {what} looks like a prompt injection "
                           f"({', '.join(findings)}); a job runs it later with nobody watching. "
                           "Nothing was scheduled: write the task plainly, as the user asked "
                           "for it.")


def check_deliver(deliver: str | None, home: Path) -> None:
    """Refuse targets the model may not choose (``deliver`` as ``jobs.check_deliver`` made
    it: file paths absolute and resolved)."""
    for target in (deliver or "local").split(","):
        if target in ("local", "origin"):
            continue
        if not target.startswith("file:"):
            how = f"edit ID --deliver {target}"
            raise JobError(f"a job you schedule cannot deliver to {target!r}: a chat is "
                           f"chosen by the user. Use 'local' or 'origin', or "
                           f"{_ASK.format(how=how)}")
        path = Path(target[5:])
        hidden = any(part.startswith(".") for part in path.parts)
        if hidden or path.suffix.lower() not in REPORT_SUFFIXES or path.is_relative_to(
                Path(home).resolve()):
            raise JobError(
                f"a job you schedule delivers to a report file only: a .md, .txt or .log "
                f"file, not hidden, not in a dot-folder and not in hermes's home ({path} is "
                f"not one), so its output cannot land in a file that runs later. Choose such "
                f"a file, or {_ASK.format(how='edit ID --deliver file:...')}")


def check_schedule(schedule: dict[str, Any], now: datetime, tz: tzinfo) -> None:
    """At most one run every :data:`MIN_GAP` (the closest of its next runs)."""
    if schedule.get("kind") == "once":
        return
    runs: list[datetime] = []
    nxt = first_run(schedule, now, tz)
    while nxt is not None and len(runs) < 12:
        runs.append(nxt)
        nxt = following(schedule, nxt, nxt, tz)
    gaps = [b - a for a, b in zip(runs, runs[1:])]
    if gaps and min(gaps) < MIN_GAP:
        minutes = int(MIN_GAP.total_seconds() // 60)
        raise JobError(f"a job you schedule runs at most every {minutes} minutes (this one "
                       f"would run {min(gaps).total_seconds() / 60:g} minutes apart): choose a "
                       f"slower schedule, or {_ASK.format(how='create')}")


def check_room(jobs: list[dict[str, Any]]) -> None:
    if len(jobs) >= MAX_JOBS:
        raise JobError(f"there are {len(jobs)} jobs already, the most you may schedule "
                       f"({MAX_JOBS}): remove jobs that are no longer needed (action 'list' "
                       f"shows them, 'remove' deletes one), or {_ASK.format(how='create')}")


def check_owner(job: dict[str, Any], changes: dict[str, Any]) -> None:
    changed = [k for k in ("prompt", "deliver") if changes.get(k) is not None]
    if changed and not made_by_agent(job):
        raise JobError(f"job {job.get('id')} was created by the user: its "
                       f"{' and '.join(changed)} are theirs to change; "
                       f"{_ASK.format(how='edit ' + str(job.get('id')))}")
