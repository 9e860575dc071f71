"""Scheduler wake-up cost with 1,000 jobs: one tick deciding what is due.

Run with our interpreter::

    .venv/bin/python benchmarks/bench_cron.py [--jobs 1000] [--ticks 200] [--due 10]

A fresh temporary HERMES_HOME gets ``--jobs`` jobs in jobs.json (a third each: intervals,
cron expressions in several zones, one-shot times), created as ``hermes cron create`` does.
Measured, on a simulated clock:

- **idle tick**: a wake-up with nothing due (read and parse jobs.json without the lock, check
  every job), ``--ticks`` times: the scheduler's cost every minute of every day;
- **next wake-up**: computing how long to sleep (the earliest due time);
- **tick with due jobs**: ``--due`` jobs due at once, each claimed (next run computed,
  jobs.json rewritten durably) and then run by a runner that returns at once, so what is left
  is the scheduler's own work per run (runs history, output file, job update).

Each prints median and p95 in ms. Target: idle tick p95 < 50 ms at 1,000 jobs.
Stdlib only, besides our package (croniter for the cron expressions).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hermes_agent.builtin_plugins.cron.execute import Outcome
from hermes_agent.builtin_plugins.cron.jobs import JobStore, new_job
from hermes_agent.builtin_plugins.cron.scheduler import Scheduler

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=timezone.utc)
ZONES = ["UTC", "Europe/Paris", "America/New_York", "Asia/Tokyo"]


def schedules(rng: random.Random, count: int) -> list[str]:
    out = []
    for n in range(count):
        kind = n % 3
        if kind == 0:
            out.append(f"every {rng.choice([5, 15, 30, 60, 120, 1440])}m")
        elif kind == 1:
            out.append(f"CRON_TZ={rng.choice(ZONES)} {rng.randrange(60)} {rng.randrange(24)} "
                       "* * 1-5")
        else:
            out.append((T0 + timedelta(days=rng.randrange(1, 60))).isoformat())
    return out


def stats(samples: list[float]) -> str:
    samples = sorted(samples)
    p95 = samples[max(0, int(len(samples) * 0.95) - 1)]
    return f"median {statistics.median(samples):7.2f} ms   p95 {p95:7.2f} ms"


def timed(fn, rounds: int) -> list[float]:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(rounds):
        began = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - began) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--ticks", type=int, default=200)
    parser.add_argument("--due", type=int, default=10)
    args = parser.parse_args()
    rng = random.Random(20)
    home = Path(tempfile.mkdtemp(prefix="hermes-bench-cron-"))
    store = JobStore(home)
    with store.locked() as jobs:
        for n, schedule in enumerate(schedules(rng, args.jobs)):
            jobs.append(new_job(schedule, f"Job number {n}: report.", now=T0,
                                tz=timezone.utc))
    size = store.path.stat().st_size
    clock_now = [T0 + timedelta(seconds=30)]  # nothing is due yet (the first is at +5 min)
    scheduler = Scheduler(home, lambda job: Outcome(True, "done"), tz=timezone.utc,
                          clock=lambda: clock_now[0])
    print(f"cron scheduler: {args.jobs:,} jobs, jobs.json {size / 1000:.0f} KB")

    assert scheduler.tick() == []
    print(f"  idle tick (nothing due)      {stats(timed(scheduler.tick, args.ticks))}")
    print(f"  next wake-up                 {stats(timed(scheduler.next_wakeup, args.ticks))}")

    rounds = 20
    due_samples = []
    for _ in range(rounds):
        with store.locked() as jobs:  # make --due jobs due now
            for job in rng.sample(jobs, args.due):
                job.update(enabled=True, next_run_at=clock_now[0].isoformat())
        began = time.perf_counter()
        ran = scheduler.tick()
        due_samples.append((time.perf_counter() - began) * 1000)
        assert len(ran) == args.due, len(ran)
        clock_now[0] += timedelta(seconds=1)
    print(f"  tick with {args.due} due jobs (no-op runs) {stats(due_samples)}"
          f"   ({statistics.median(due_samples) / args.due:.2f} ms per run)")


if __name__ == "__main__":
    main()
