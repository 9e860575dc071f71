"""The ``cron`` service (``kernel.service(CRON)``, ``hermes_agent.api.CRON``): the scheduler of this kernel's home.
:meth:`CronService.serve` is the loop ``hermes gateway`` and ``hermes cron daemon`` run;
:meth:`tick` runs the due jobs once (``hermes cron tick``, a system crontab)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent.api import CRON
from hermes_agent import write_atomic

from .deliver import Deliverer
from .execute import AgentJobRunner
from .jobs import cron_dir
from .scheduler import Policy, RunRecord, Scheduler
from .schedule import default_zone, utc_now

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.cron")
MIN_WAIT = 1.0  # seconds between ticks at least, unless tick_interval is shorter


class Heartbeat:
    """``$HERMES_HOME/cron/scheduler.json``: the running scheduler loop (pid, where it runs,
    its last tick), for ``hermes cron status`` and the ``cronjob`` tool."""

    def __init__(self, home: Path):
        self.path = Path(home) / "cron" / "scheduler.json"

    def write(self, **data: Any) -> None:
        cron_dir(self.path.parent.parent)
        write_atomic(self.path, json.dumps({"pid": os.getpid(), **data}), mode=0o600)

    def read(self) -> dict[str, Any] | None:
        """The loop's record, or None when no loop runs (a record left by a dead one too)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            os.kill(int(data["pid"]), 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            return data
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return data

    def remove(self) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("pid") == os.getpid():
                self.path.unlink()
        except (OSError, ValueError):
            pass


class CronService:
    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.loop: asyncio.AbstractEventLoop | None = None  # the loop serve() runs on
        self.heartbeat = Heartbeat(kernel.home)

    def policy(self) -> Policy:
        config = self.kernel.config
        return Policy(retries=int(config.get("cron.retries", 1)),
                      retry_delay=float(config.get("cron.retry_delay", 60)),
                      output_keep=int(config.get("cron.output_keep", 50)))

    def scheduler(self, *, clock: Callable[[], datetime] = utc_now,
                  runner: Callable[[dict[str, Any]], Any] | None = None,
                  occurrence_guard: Callable[[str], bool] | None = None) -> Scheduler:
        """A scheduler over this home running jobs as agent sessions (or with ``runner``);
        ``occurrence_guard``: see :class:`Scheduler` (gateway replicas)."""
        return Scheduler(self.kernel.home, runner or AgentJobRunner(self.kernel),
                         tz=default_zone(self.kernel.config), clock=clock,
                         policy=self.policy(), deliverer=Deliverer(self.send),
                         occurrence_guard=occurrence_guard)

    def send(self, target: str, text: str) -> dict[str, Any]:
        """A platform target's delivery: the ``delivery`` service (the gateway plugin's), as
        ``send_message`` and ``hermes send`` deliver."""
        from hermes_agent import ServiceError
        from hermes_agent.api.services import DELIVERY

        try:
            delivery = self.kernel.service(DELIVERY)
        except ServiceError:
            return {"success": False, "error": "the gateway plugin, which delivers to "
                                               "platforms, is not loaded"}
        return delivery.send(target, text)

    def tick(self, now: datetime | None = None) -> list[RunRecord]:
        """Run the jobs due now once, in this thread."""
        return self.scheduler().tick(now)

    def run_now(self, ref: str) -> RunRecord:
        return self.scheduler().run_now(ref)

    async def serve(self, stop: asyncio.Event, *, label: str = "gateway",
                    clock: Callable[[], datetime] = utc_now,
                    interval: float | None = None,
                    occurrence_guard: Callable[[str], bool] | None = None) -> None:
        """Tick until ``stop`` is set: at each job's due time, and every ``cron.tick_interval``
        seconds (60) to see jobs other processes added. Runs happen in a worker thread; on
        ``stop`` the job running is interrupted and jobs not started stay due."""
        self.loop = asyncio.get_running_loop()
        scheduler = self.scheduler(clock=clock, occurrence_guard=occurrence_guard)
        every = float(interval or self.kernel.config.get("cron.tick_interval", 60))
        started = time.time()
        try:
            while not stop.is_set():
                self.heartbeat.write(where=label, started_at=started, last_tick_at=time.time())
                await self._tick_until(scheduler, stop)
                if stop.is_set():
                    break
                try:
                    await asyncio.wait_for(stop.wait(), self._wait(scheduler, every, clock))
                except asyncio.TimeoutError:
                    pass
        finally:
            self.heartbeat.remove()
            self.loop = None

    async def _tick_until(self, scheduler: Scheduler, stop: asyncio.Event) -> None:
        tick = asyncio.ensure_future(asyncio.to_thread(self._safe_tick, scheduler))
        stopped = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({tick, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if not tick.done():
                scheduler.stopping.set()
                interrupt = getattr(scheduler.runner, "interrupt", None)
                if interrupt is not None:
                    interrupt()
                await tick
        finally:
            stopped.cancel()

    @staticmethod
    def _safe_tick(scheduler: Scheduler) -> None:
        try:
            for record in scheduler.tick():
                if record.status == "ok":
                    log.info("cron: job %s (%s) ok", record.job_id, record.name)
                else:
                    log.warning("cron: job %s (%s) %s: %s", record.job_id, record.name,
                                record.status, record.error)
        except Exception as exc:  # a corrupt jobs.json or a full disk: log, keep the loop
            log.error("cron: tick failed: %s", exc)

    @staticmethod
    def _wait(scheduler: Scheduler, every: float, clock: Callable[[], datetime]) -> float:
        floor = min(every, MIN_WAIT)
        try:
            wake = scheduler.next_wakeup()
        except Exception:
            return every
        if wake is None:
            return every
        return max(floor, min(every, (wake - clock()).total_seconds()))


def own_service(kernel: Kernel) -> CronService:
    """The ``cron`` service of ``kernel`` as this plugin's own class (its CLI uses more of it
    than the :class:`~hermes_agent.api.CronScheduler` contract)."""
    service = kernel.service(CRON)
    if not isinstance(service, CronService):
        raise TypeError(f"the cron service is {type(service).__name__}, not the cron plugin's")
    return service
