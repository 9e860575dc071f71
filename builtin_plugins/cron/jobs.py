"""``$HERMES_HOME/cron/jobs.json``: the jobs, as Hermes Agent 0.19 writes them
(``{"jobs": [...], "updated_at": ...}``). Every change is a read-modify-write under an
exclusive ``fcntl.flock`` on ``jobs.json.lock``, so processes never lose each other's
changes; the file is replaced atomically (0600, folder 0700), so readers never see half of
it. Keys this version does not use are kept as written."""

from __future__ import annotations

import fcntl
import json
import os
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from hermes_agent import private_dir, write_atomic

from .schedule import first_run, iso, parse_schedule

FILE_MODE = 0o600
_PLATFORM_TARGET = re.compile(r"^[a-z][a-z0-9_-]*:.+\Z")
# a platform alone (its home channel) or a channel name of platforms.<name>.channels
_NAMED_TARGET = re.compile(r"^#?[A-Za-z0-9][A-Za-z0-9_.-]*\Z")


class JobError(Exception):
    """A job cannot be found, created or changed; the message says what to do."""


def cron_dir(home: Path) -> Path:
    return private_dir(Path(home) / "cron")


class JobStore:
    def __init__(self, home: Path):
        self.home = Path(home)
        self.path = self.home / "cron" / "jobs.json"

    @contextmanager
    def locked(self) -> Iterator[list[dict[str, Any]]]:
        """The jobs, under the cross-process lock; changes to the list (and its jobs) are
        written back when the block ends without an exception."""
        folder = cron_dir(self.home)
        fd = os.open(folder / "jobs.json.lock", os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            text = self._read()
            jobs, pristine = self._parse(text), self._parse(text)  # parsing beats deep copies
            yield jobs
            if jobs != pristine:
                self._save(jobs)
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    def load(self) -> list[dict[str, Any]]:
        """The jobs as stored now (no lock needed: writes are atomic)."""
        return self._parse(self._read())

    def _read(self) -> str:
        try:
            return self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""

    def _parse(self, text: str) -> list[dict[str, Any]]:
        try:
            data = json.loads(text) if text.strip() else {"jobs": []}
        except ValueError as exc:
            raise JobError(f"{self.path} is not valid JSON ({exc}); fix it by hand or move it "
                           "away (nothing is written to it until then)") from exc
        jobs = data.get("jobs") if isinstance(data, dict) else data
        if not isinstance(jobs, list) or not all(isinstance(j, dict) for j in jobs):
            raise JobError(f"{self.path} does not hold a list of jobs under \"jobs\"; fix it "
                           "by hand or move it away")
        return jobs

    def _save(self, jobs: list[dict[str, Any]]) -> None:
        """One job per line: readable, and written by the C encoder (``indent`` is not)."""
        from .schedule import utc_now

        encode = json.JSONEncoder(ensure_ascii=False).encode
        lines = ",\n".join("  " + encode(job) for job in jobs)
        stamp = encode(iso(utc_now()))
        text = (f'{{"jobs": [\n{lines}\n], "updated_at": {stamp}}}\n' if jobs
                else f'{{"jobs": [], "updated_at": {stamp}}}\n')
        write_atomic(self.path, text, mode=FILE_MODE, durable=True)

    # --- queries -----------------------------------------------------------------------------
    def find(self, ref: str, jobs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The job whose id (or unique id prefix, or name) is ``ref``."""
        jobs = self.load() if jobs is None else jobs
        for test in (lambda j: j.get("id") == ref, lambda j: j.get("name") == ref,
                     lambda j: len(ref) >= 4 and str(j.get("id", "")).startswith(ref)):
            found = [j for j in jobs if test(j)]
            if len(found) == 1:
                return found[0]
            if len(found) > 1:
                ids = ", ".join(str(j.get("id")) for j in found)
                raise JobError(f"{ref!r} names {len(found)} jobs ({ids}); use the job id")
        raise JobError(f"no cron job {ref!r}; `hermes cron list --all` shows the ids")

    @contextmanager
    def change(self, ref: str) -> Iterator[dict[str, Any]]:
        """One job, under the lock, written back after the block."""
        with self.locked() as jobs:
            yield self.find(ref, jobs)

    def remove(self, ref: str) -> dict[str, Any]:
        with self.locked() as jobs:
            job = self.find(ref, jobs)
            jobs.remove(job)
        return job


def check_deliver(deliver: str | None) -> str:
    """``local`` (the default), ``origin``, ``file:PATH`` (made absolute), ``platform``,
    ``platform:chat_id`` or a channel name; several separated by commas."""
    targets = []
    for target in (deliver or "local").split(","):
        target = target.strip()
        if target in ("local", "origin"):
            targets.append(target)
        elif target.startswith("file:"):
            path = Path(os.path.expanduser(target[5:].strip()))
            if not target[5:].strip():
                raise JobError("deliver 'file:' needs a path, e.g. file:~/reports/daily.md")
            targets.append(f"file:{path.resolve()}")
        elif _PLATFORM_TARGET.match(target) or _NAMED_TARGET.match(target):
            targets.append(target)
        else:
            raise JobError(f"unknown delivery target {target!r}: use local, file:PATH, "
                           "PLATFORM (its home channel), PLATFORM:CHAT_ID (e.g. "
                           "telegram:123456789) or a configured channel name")
    return ",".join(targets)


def new_job(schedule: str, prompt: str, *, now: datetime, tz: tzinfo, name: str | None = None,
            deliver: str | None = None, repeat: int | None = None, retries: int | None = None,
            retry_delay: float | None = None, toolsets: list[str] | None = None,
            workdir: str | None = None, model: str | None = None, provider: str | None = None,
            origin: dict[str, Any] | None = None) -> dict[str, Any]:
    """A job record in the original's shape (plus ``retries`` and ``retry_delay``)."""
    prompt = (prompt or "").strip()
    if not prompt:
        raise JobError("a job needs a prompt: what the agent should do at each run")
    parsed = parse_schedule(schedule, now=now, tz=tz)
    if parsed["kind"] == "once" and repeat is None:
        repeat = 1
    if repeat is not None and repeat < 1:
        raise JobError("repeat must be 1 or more (omit it to repeat forever)")
    _check_retry(retries, retry_delay)
    if workdir:
        folder = Path(os.path.expanduser(workdir)).resolve()
        if not folder.is_dir():
            raise JobError(f"workdir {workdir!r} is not a folder")
        workdir = str(folder)
    return {
        "id": uuid.uuid4().hex[:12],
        "name": (name or prompt.splitlines()[0][:50]).strip(),
        "prompt": prompt,
        "model": model or None,
        "provider": provider or None,
        "schedule": parsed,
        "schedule_display": parsed["display"],
        "repeat": {"times": repeat, "completed": 0},
        "enabled": True,
        "state": "scheduled",
        "paused_at": None,
        "paused_reason": None,
        "created_at": iso(now),
        "next_run_at": iso(first_run(parsed, now, tz)),
        "last_run_at": None,
        "last_status": None,
        "last_error": None,
        "last_delivery_error": None,
        "deliver": check_deliver(deliver),
        "origin": origin,
        "enabled_toolsets": list(toolsets) if toolsets else None,
        "workdir": workdir or None,
        "retries": retries,
        "retry_delay": retry_delay,
        "attempt": 0,
    }


def _check_retry(retries: int | None, retry_delay: float | None) -> None:
    if retries is not None and not 0 <= retries <= 20:
        raise JobError("retries must be between 0 and 20")
    if retry_delay is not None and retry_delay < 0:
        raise JobError("retry_delay is a number of seconds, 0 or more")


def apply_update(job: dict[str, Any], changes: dict[str, Any], *, now: datetime,
                 tz: tzinfo) -> None:
    """Change the given fields of ``job`` (None values are left alone)."""
    if changes.get("schedule"):
        parsed = parse_schedule(changes["schedule"], now=now, tz=tz)
        job["schedule"], job["schedule_display"] = parsed, parsed["display"]
        job["attempt"] = 0
        job.pop("scheduled_at", None)
        if job.get("enabled", True):
            job["next_run_at"] = iso(first_run(parsed, now, tz))
    if changes.get("prompt") is not None:
        if not str(changes["prompt"]).strip():
            raise JobError("the prompt cannot be empty")
        job["prompt"] = str(changes["prompt"]).strip()
    if changes.get("name"):
        job["name"] = str(changes["name"]).strip()
    if changes.get("deliver") is not None:
        job["deliver"] = check_deliver(changes["deliver"])
    if changes.get("repeat") is not None:
        if int(changes["repeat"]) < 1:
            raise JobError("repeat must be 1 or more")
        job["repeat"] = {**(job.get("repeat") or {}), "times": int(changes["repeat"])}
    _check_retry(changes.get("retries"), changes.get("retry_delay"))
    for key in ("retries", "retry_delay", "model", "provider"):
        if changes.get(key) is not None:
            job[key] = changes[key]
    if changes.get("toolsets") is not None:
        job["enabled_toolsets"] = list(changes["toolsets"]) or None
    if changes.get("workdir") is not None:
        folder = Path(os.path.expanduser(changes["workdir"])).resolve()
        if not folder.is_dir():
            raise JobError(f"workdir {changes['workdir']!r} is not a folder")
        job["workdir"] = str(folder)


def pause(job: dict[str, Any], now: datetime, reason: str | None = None) -> None:
    job.update(enabled=False, state="paused", paused_at=iso(now), paused_reason=reason)


def resume(job: dict[str, Any], now: datetime, tz: tzinfo) -> None:
    """Back on schedule from now (a one-shot time already past runs at the next tick)."""
    schedule = job.get("schedule") or {}
    nxt = first_run(schedule, now, tz)
    job.pop("scheduled_at", None)
    job.update(enabled=True, state="scheduled", paused_at=None, paused_reason=None,
               attempt=0, next_run_at=iso(nxt if nxt is None or nxt > now else now))
