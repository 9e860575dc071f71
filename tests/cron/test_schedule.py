"""Schedule strings: intervals, delays, ISO times and cron expressions (with time zones), the
next run after downtime, and bad strings refused with examples of good ones."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_agent.builtin_plugins.cron.schedule import (ScheduleError, first_run, following,
                                                        parse_schedule)

from .conftest import T0

UTC = timezone.utc
PARIS = ZoneInfo("Europe/Paris")


def parse(text: str, tz=UTC):  # type: ignore[no-untyped-def]
    return parse_schedule(text, now=T0, tz=tz)


@pytest.mark.parametrize(("text", "stored"), [
    ("every 30m", {"kind": "interval", "minutes": 30, "display": "every 30m"}),
    ("every 2h", {"kind": "interval", "minutes": 120, "display": "every 120m"}),
    ("Every 1 day", {"kind": "interval", "minutes": 1440, "display": "every 1440m"}),
    ("in 30m", {"kind": "once", "run_at": "2026-03-02T08:30:00+00:00",
                "display": "once in 30m"}),
    ("2h", {"kind": "once", "run_at": "2026-03-02T10:00:00+00:00", "display": "once in 2h"}),
    ("0 9 * * 1-5", {"kind": "cron", "expr": "0 9 * * 1-5", "display": "0 9 * * 1-5"}),
    ("@daily", {"kind": "cron", "expr": "@daily", "display": "@daily"}),
    ("CRON_TZ=Europe/Paris 30 7 * * mon", {"kind": "cron", "expr": "30 7 * * mon",
                                           "tz": "Europe/Paris",
                                           "display": "30 7 * * mon (Europe/Paris)"}),
])
def test_the_schedule_forms_are_stored_in_the_originals_shape(text, stored):
    assert parse(text) == stored


def test_an_iso_time_without_offset_is_read_in_the_zone_given():
    assert parse("2026-03-02T12:00", PARIS)["run_at"] == "2026-03-02T11:00:00+00:00"
    assert parse("2026-03-02T12:00:00Z", PARIS)["run_at"] == "2026-03-02T12:00:00+00:00"
    assert parse("2026-03-02 09:15+01:00")["run_at"] == "2026-03-02T08:15:00+00:00"


@pytest.mark.parametrize(("text", "why"), [
    ("every 2 fortnights", "an interval is a positive number with m, h or d"),
    ("every 0m", "an interval is a positive number"),
    ("tomorrow morning", "not an interval, a delay, an ISO time or a cron expression"),
    ("61 * * * *", "not a valid cron expression"),
    ("* * * *", "not an interval, a delay, an ISO time or a cron expression"),
    ("2026-02-30T09:00", "not an ISO 8601 time"),
    ("2025-01-01T09:00", "is in the past"),
    ("", "it is empty"),
])
def test_a_bad_schedule_is_refused_with_examples_of_good_ones(text, why):
    with pytest.raises(ScheduleError) as caught:
        parse(text)
    message = str(caught.value)
    assert why in message
    assert "'every 30m'" in message and "'0 9 * * 1-5'" in message and "'in 30m'" in message


def test_an_unknown_time_zone_names_the_fix():
    with pytest.raises(ScheduleError, match="use an IANA name such as Europe/Paris"):
        parse("CRON_TZ=Mars/Olympus 0 9 * * *")


def test_cron_times_follow_the_zone_across_a_daylight_saving_change():
    schedule = parse("CRON_TZ=Europe/Paris 0 9 * * *")
    before = datetime(2026, 3, 28, 12, 0, tzinfo=UTC)  # Paris is UTC+1 until the 29th
    first = first_run(schedule, before, UTC)
    second = following(schedule, first, first + timedelta(minutes=1), UTC)
    assert first == datetime(2026, 3, 29, 7, 0, tzinfo=UTC)  # 09:00 CEST (UTC+2)
    assert second == datetime(2026, 3, 30, 7, 0, tzinfo=UTC)
    plain = parse("0 9 * * *")  # no CRON_TZ: the zone passed in (cron.timezone)
    assert first_run(plain, before, PARIS) == datetime(2026, 3, 29, 7, 0, tzinfo=UTC)
    assert first_run(plain, before, UTC) == datetime(2026, 3, 29, 9, 0, tzinfo=UTC)


def test_after_downtime_the_next_run_is_the_first_one_after_now_on_the_grid():
    hourly = parse("every 1h")
    due = T0 + timedelta(hours=1)
    now = T0 + timedelta(hours=5, minutes=30)
    assert following(hourly, due, now, UTC) == T0 + timedelta(hours=6)
    assert following(hourly, due, due, UTC) == due + timedelta(hours=1)
    weekdays = parse("0 9 * * 1-5")
    friday_night = datetime(2026, 3, 6, 22, 0, tzinfo=UTC)
    assert following(weekdays, None, friday_night, UTC) == datetime(2026, 3, 9, 9, 0, tzinfo=UTC)
    assert following(parse("in 5m"), due, now, UTC) is None


@given(step=st.integers(1, 3 * 1440), late=st.integers(0, 60 * 24 * 90 * 60))
def test_an_interval_job_catches_up_once_and_stays_on_its_grid(step, late):
    schedule = {"kind": "interval", "minutes": step, "display": f"every {step}m"}
    due = T0
    now = T0 + timedelta(seconds=late)
    nxt = following(schedule, due, now, UTC)
    assert now < nxt <= now + timedelta(minutes=step)  # the next one after now, no backlog
    assert (nxt - due) % timedelta(minutes=step) == timedelta(0)


@settings(max_examples=60, deadline=None)
@given(minute=st.sampled_from(["0", "*/5", "30", "15,45"]),
       hour=st.sampled_from(["*", "9", "*/6", "22"]),
       weekday=st.sampled_from(["*", "1-5", "0", "6"]),
       late=st.integers(0, 60 * 24 * 30 * 60), zone_name=st.sampled_from(
           ["UTC", "Europe/Paris", "America/New_York", "Australia/Lord_Howe"]))
def test_a_cron_job_runs_next_at_the_first_match_after_now(minute, hour, weekday, late,
                                                          zone_name):
    from croniter import croniter

    expr = f"{minute} {hour} * * {weekday}"
    schedule = parse(f"CRON_TZ={zone_name} {expr}")
    now = T0 + timedelta(seconds=late)
    nxt = following(schedule, T0, now, UTC)
    assert nxt > now
    local = nxt.astimezone(ZoneInfo(zone_name))
    assert croniter.match(expr, local.replace(tzinfo=None))
    previous = croniter(expr, local).get_prev(datetime)
    assert previous <= now  # nothing matches between now and the next run
