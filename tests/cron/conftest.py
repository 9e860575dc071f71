"""The cron tests' harness: a controllable clock, a kernel with the builtin plugins whose
model is the fake LLM server, and a way to create jobs at a given (simulated) time."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

T0 = datetime(2026, 3, 2, 8, 0, 0, tzinfo=timezone.utc)  # a Monday
WAIT = 30.0  # generous: a bound on waiting for a condition, never a pace


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, start: datetime = T0):
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(default_reply=reply_text("done")) as fake:
        yield fake


def cron_config(server: FakeLLMServer, **extra: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "model": {"provider": "custom", "base_url": server.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "sessions": {"auto_title": False},  # the scripts answer the runs' requests only
        "cron": {"timezone": "UTC"},
    }
    for key, value in extra.items():
        config[key] = {**config.get(key, {}), **value} if isinstance(value, dict) else value
    return config


@pytest.fixture
def kernel_for(home: Path, server: FakeLLMServer):  # type: ignore[no-untyped-def]
    """``kernel_for(**config)``: a booted kernel with the builtins, its model the fake server."""

    def build(**extra: Any) -> Any:
        return make_kernel(home, config=cron_config(server, **extra),
                           env={"HERMES_HOME": str(home)}, builtins=True)

    return build


def add_job(kernel: Any, schedule: str, prompt: str = "Say done.", *, at: datetime = T0,
            **options: Any) -> dict[str, Any]:
    """Create a job as the CLI and the tool do, at the simulated time ``at``."""
    from hermes_agent.builtin_plugins.cron.jobs import JobStore, new_job
    from hermes_agent.builtin_plugins.cron.schedule import default_zone

    job = new_job(schedule, prompt, now=at, tz=default_zone(kernel.config), **options)
    with JobStore(kernel.home).locked() as jobs:
        jobs.append(job)
    return job


def load_job(kernel: Any, job_id: str) -> dict[str, Any] | None:
    from hermes_agent.builtin_plugins.cron.jobs import JobStore

    return next((j for j in JobStore(kernel.home).load() if j["id"] == job_id), None)
