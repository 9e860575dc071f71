"""The ``cron`` service's loop (what the gateway and ``hermes cron daemon`` run): it wakes
when a job is due, records itself for ``hermes cron status``, and on stop interrupts the run
in progress, which is recorded and retried later."""

from __future__ import annotations

import asyncio
import json
import time

from hermes_agent.testing.fake_llm import reply_text

from .conftest import WAIT, add_job, load_job


def test_stop_interrupts_the_run_in_progress_and_it_is_retried_later(kernel_for, server):
    kernel = kernel_for()
    job = add_job(kernel, "every 1h", "A long job.", retries=1, retry_delay=600)
    server.script(reply_text("too late", delay=WAIT))  # answered only if nobody hangs up
    service = kernel.service("cron")

    async def scenario() -> float:
        kernel.tools.dispatch("cronjob", {"action": "run", "job_id": job["id"]})
        stop = asyncio.Event()
        serving = asyncio.create_task(service.serve(stop, interval=0.05))
        deadline = time.monotonic() + WAIT
        while not server.posts() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)  # polling a condition (the request arrived), bounded
        assert server.posts(), "the job never reached the model"
        beat = json.loads((kernel.home / "cron" / "scheduler.json").read_text())
        assert beat["where"] == "gateway" and beat["pid"] > 0
        stopped_at = time.monotonic()
        stop.set()
        await asyncio.wait_for(serving, WAIT)
        return time.monotonic() - stopped_at

    took = asyncio.run(scenario())
    assert took < WAIT / 2  # the model's answer was not waited for
    [run] = service.scheduler().runs.list(job["id"])
    assert run["status"] == "interrupted" and run["finished_at"]
    stored = load_job(kernel, job["id"])
    assert stored["state"] == "retrying" and stored["attempt"] == 1
    assert not (kernel.home / "cron" / "scheduler.json").exists()
