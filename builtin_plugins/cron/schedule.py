"""Schedules of cron jobs, stored in jobs.json as Hermes Agent 0.19 stores them:

- ``{"kind": "interval", "minutes": 120, "display": "every 120m"}`` from ``every 2h``;
- ``{"kind": "once", "run_at": ISO, "display": ...}`` from ``in 30m``, ``30m`` or an ISO time;
- ``{"kind": "cron", "expr": "0 9 * * 1-5", "display": ...}`` from a cron expression, with
  ``"tz": "Europe/Paris"`` when written ``CRON_TZ=Europe/Paris 0 9 * * 1-5``; without it the
  expression follows ``cron.timezone``, else ``timezone``, else the machine's zone.

Cron expressions need ``croniter`` (the ``cron`` extra); the other kinds need nothing.
Every time here is an aware datetime; jobs.json keeps them as ISO 8601 text in UTC.
"""

from __future__ import annotations

import logging
import math
import os
import re
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .schema import EXAMPLES

log = logging.getLogger("hermes_agent.cron")

ONCE_GRACE = timedelta(seconds=60)  # an ISO time this far in the past still runs (now)
_DURATION = re.compile(r"^(\d+)\s*(m|min|mins|minute|minutes|h|hr|hrs|hour|hours|d|day|days)\Z")
_UNIT_MINUTES = {"m": 1, "h": 60, "d": 1440}
_TZ_PREFIX = re.compile(r"^(?:CRON_TZ|TZ)=(\S+)\s+(.*)$", re.IGNORECASE)
_MACROS = {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
_CRON_FIELD = re.compile(r"^[0-9A-Za-z*?,/\-#LW]+\Z")


class ScheduleError(ValueError):
    """A schedule string that cannot be read; the message shows good ones."""


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def parse_time(text: str | None) -> datetime | None:
    """An ISO time from jobs.json (naive ones are taken as UTC), or None."""
    if not text:
        return None
    try:
        value = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def iso(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(timezone.utc).isoformat()


def zone(name: str) -> tzinfo:
    """The IANA zone ``name``; a ScheduleError naming the fix when it is unknown."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ScheduleError(f"unknown time zone {name!r}: use an IANA name such as "
                            "Europe/Paris, America/New_York or UTC") from exc


def local_zone() -> tzinfo:
    """The machine's zone: ``$TZ`` or /etc/localtime when they name one, else its offset now."""
    candidates = [os.environ.get("TZ", "").lstrip(":")]
    try:
        link = os.readlink("/etc/localtime")
        candidates.append(link.split("zoneinfo/", 1)[1] if "zoneinfo/" in link else "")
    except OSError:
        pass
    for name in filter(None, candidates):
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            continue
    return datetime.now().astimezone().tzinfo or timezone.utc


def default_zone(config: Any) -> tzinfo:
    """The zone of cron expressions without ``CRON_TZ=``: ``cron.timezone``, then the
    top-level ``timezone`` of config.yaml, then the machine's."""
    name = str(config.get("cron.timezone") or "").strip()
    if name:
        return zone(name)  # checked when config.yaml is read
    name = str(config.get("timezone") or "").strip()
    try:
        return zone(name) if name else local_zone()
    except ScheduleError as exc:
        log.warning("timezone in config.yaml: %s; cron uses the machine's zone", exc)
        return local_zone()


def _bad(text: str, why: str) -> ScheduleError:
    return ScheduleError(f"invalid schedule {text!r}: {why}. Write one of: {EXAMPLES}.")


def duration_minutes(text: str) -> int | None:
    match = _DURATION.match(text.strip().lower())
    if not match:
        return None
    return int(match.group(1)) * _UNIT_MINUTES[match.group(2)[0]]


def parse_schedule(text: str, *, now: datetime, tz: tzinfo) -> dict[str, Any]:
    """The stored form of ``text``; ``now`` anchors ``in 30m``, ``tz`` reads naive ISO times."""
    original = (text or "").strip()
    lowered = original.lower()
    if not original:
        raise _bad(original, "it is empty")
    if lowered.startswith("every "):
        minutes = duration_minutes(original[6:])
        if not minutes:
            raise _bad(original, "an interval is a positive number with m, h or d")
        return {"kind": "interval", "minutes": minutes, "display": f"every {minutes}m"}
    relative = original[3:] if lowered.startswith("in ") else original
    minutes = duration_minutes(relative)
    if minutes is not None:
        if minutes <= 0:
            raise _bad(original, "the delay must be positive")
        return {"kind": "once", "run_at": iso(now + timedelta(minutes=minutes)),
                "display": f"once in {relative.strip()}"}
    if re.match(r"^\d{4}-\d{2}-\d{2}", original):
        return _once_at(original, now, tz)
    return _cron(original)


def _once_at(text: str, now: datetime, tz: tzinfo) -> dict[str, Any]:
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise _bad(text, f"not an ISO 8601 time ({exc})") from exc
    when = when if when.tzinfo else when.replace(tzinfo=tz)
    if when < now - ONCE_GRACE:
        raise _bad(text, f"{when.isoformat()} is in the past")
    return {"kind": "once", "run_at": iso(when),
            "display": f"once at {when.strftime('%Y-%m-%d %H:%M %Z').strip()}"}


def _cron(text: str) -> dict[str, Any]:
    tz_name = None
    expr = text
    prefixed = _TZ_PREFIX.match(text)
    if prefixed:
        tz_name, expr = prefixed.group(1), prefixed.group(2).strip()
        zone(tz_name)
    fields = expr.split()
    is_macro = len(fields) == 1 and fields[0].lower() in _MACROS
    if not is_macro and (len(fields) != 5 or not all(_CRON_FIELD.match(f) for f in fields)):
        raise _bad(text, "not an interval, a delay, an ISO time or a cron expression of 5 "
                         "fields (minute hour day-of-month month day-of-week)")
    croniter = _croniter()
    try:
        croniter(expr, datetime(2000, 1, 1, tzinfo=timezone.utc))
    except Exception as exc:  # croniter raises several error types for bad fields
        raise _bad(text, f"not a valid cron expression ({exc})") from exc
    schedule: dict[str, Any] = {"kind": "cron", "expr": " ".join(fields),
                                "display": " ".join(fields) + (f" ({tz_name})" if tz_name else "")}
    if tz_name:
        schedule["tz"] = tz_name
    return schedule


def _croniter() -> Any:
    try:
        from croniter import croniter
    except ImportError as exc:
        raise ScheduleError("cron expressions need the croniter package: pip install "
                            "'hermes-agent-runtime[cron]' (or use an interval such as "
                            "'every 1h')") from exc
    return croniter


def first_run(schedule: dict[str, Any], now: datetime, tz: tzinfo) -> datetime | None:
    """When a new (or resumed) job first runs."""
    kind = schedule.get("kind")
    if kind == "once":
        return parse_time(schedule.get("run_at"))
    if kind == "interval":
        return now + timedelta(minutes=int(schedule["minutes"]))
    return _cron_after(schedule, now, tz)


def following(schedule: dict[str, Any], due: datetime | None, now: datetime,
              tz: tzinfo) -> datetime | None:
    """The next run after the one due at ``due`` ran at ``now``: strictly after ``now``, so
    runs missed while nothing ticked are caught up once, not once each. None: no more runs."""
    kind = schedule.get("kind")
    if kind == "once":
        return None
    if kind == "interval":
        step = timedelta(minutes=int(schedule["minutes"]))
        if due is None or due > now:
            return now + step
        return due + step * (math.floor((now - due) / step) + 1)  # stays on the grid
    return _cron_after(schedule, now, tz)


def _cron_after(schedule: dict[str, Any], after: datetime, tz: tzinfo) -> datetime:
    where = zone(schedule["tz"]) if schedule.get("tz") else tz
    nxt = _croniter()(schedule["expr"], after.astimezone(where)).get_next(datetime)
    return nxt.astimezone(timezone.utc)
