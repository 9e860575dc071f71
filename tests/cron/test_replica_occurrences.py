"""Gateway replicas whose homes hold copies of the same jobs run each occurrence once: the
first scheduler to claim it in the shared PostgreSQL database runs it, the others skip it.
Skipped when no PostgreSQL server answers."""

from __future__ import annotations

import shutil
from datetime import timedelta
from typing import Any

import pytest

from hermes_agent.testing import make_kernel

from .conftest import T0, add_job, cron_config

pytest.importorskip("psycopg", reason="the shared queue needs the session-postgres extra")


def test_copies_of_a_job_on_two_replicas_run_each_minute_once(tmp_path, server, clock,
                                                              pg_schemas):
    dsn = pg_schemas("cron")
    homes = [tmp_path / "one", tmp_path / "two"]
    config = cron_config(server, sessions={"auto_title": False, "store": "postgres",
                                           "dsn": dsn})
    first = make_kernel(homes[0], config=config, env={"HERMES_HOME": str(homes[0])},
                        builtins=True)
    add_job(first, "every 1m", "Report.")
    shutil.copytree(homes[0] / "cron", homes[1] / "cron")  # the same jobs on the other one
    second = make_kernel(homes[1], config=config, env={"HERMES_HOME": str(homes[1])},
                         builtins=True)
    from hermes_agent.api import session_store
    from hermes_agent.builtin_plugins.cron.execute import Outcome

    queue = session_store(first).gateway_queue()
    runs: list[Any] = []

    def runner(name: str) -> Any:
        def run(job: dict[str, Any], *args: Any, **kwargs: Any) -> Outcome:
            runs.append(name)
            return Outcome(True, "done")
        return run

    schedulers = [kernel.service("cron").scheduler(
        clock=clock, runner=runner(name),
        occurrence_guard=lambda occurrence, name=name: queue.claim_occurrence(name, occurrence))
        for kernel, name in ((first, "one"), (second, "two"))]
    while clock.now < T0 + timedelta(minutes=10):
        clock.advance(seconds=20)
        for scheduler in schedulers:
            scheduler.tick()
    assert len(runs) == 10  # ten minutes, ten runs across both replicas
    assert set(runs) == {"one"}  # the first to tick each minute claimed it
    queue.close()
