"""The ``cronjob`` tool (toolset ``cronjob``): create, list, update, pause, resume, remove and
run scheduled jobs. ``run`` makes the job due now: the running scheduler (in ``hermes
gateway`` or ``hermes cron daemon``) picks it up at its next tick."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_agent.api import INJECTION_SCAN, ToolCallContext, tool_error, tool_result

from . import agent_limits as limits
from .jobs import JobError, JobStore, apply_update, new_job, pause, resume
from .schedule import ScheduleError, default_zone, iso, utc_now
from .schema import ACTIONS, EXAMPLES

if TYPE_CHECKING:
    from hermes_agent import Kernel


def summary(job: dict[str, Any]) -> dict[str, Any]:
    repeat = job.get("repeat") or {}
    return {"job_id": job.get("id"), "name": job.get("name"),
            "schedule": job.get("schedule_display"), "state": job.get("state"),
            "enabled": job.get("enabled", True), "next_run_at": job.get("next_run_at"),
            "last_run_at": job.get("last_run_at"), "last_status": job.get("last_status"),
            "last_error": job.get("last_error"), "deliver": job.get("deliver") or "local",
            "repeat": {"times": repeat.get("times"), "completed": repeat.get("completed", 0)},
            "prompt": str(job.get("prompt") or "")[:200]}


class CronjobTool:
    def __init__(self, kernel: Kernel, scheduler_running: Any):
        self.kernel = kernel
        self.scheduler_running = scheduler_running  # () -> dict | None

    def __call__(self, args: dict[str, Any], ctx: ToolCallContext) -> str:
        action = str(args.get("action") or "").strip().lower()
        if action not in ACTIONS:
            return tool_error(f"action must be one of: {', '.join(ACTIONS)}")
        try:
            return getattr(self, f"_{action}")(args, ctx)
        except (JobError, ScheduleError) as exc:
            return tool_error(str(exc))

    @property
    def store(self) -> JobStore:
        return JobStore(self.kernel.home)

    def scan(self, text: str) -> list[str]:
        try:
            scanner = self.kernel.service(INJECTION_SCAN)
        except Exception as exc:  # the agent plugin is not loaded: schedule nothing unchecked
            raise JobError("Nothing was scheduled: the injection scan that checks a job's "
                           "prompt (the agent plugin's injection_scan service) is unavailable; "
                           "enable the agent plugin (hermes plugins enable agent)") from exc
        return list(scanner.scan(text))

    def _checked(self, job: dict[str, Any], changes: dict[str, Any]) -> None:
        """The limits of a job the model makes or changes (:mod:`.agent_limits`)."""
        limits.check_text(changes.get("prompt"), changes.get("name"), self.scan)
        if changes.get("deliver") is not None:
            limits.check_deliver(job.get("deliver"), self.kernel.home)
        if changes.get("schedule"):
            limits.check_schedule(job["schedule"], utc_now(), default_zone(self.kernel.config))

    def _create(self, args: dict[str, Any], ctx: ToolCallContext) -> str:
        if not args.get("schedule") or not args.get("prompt"):
            return tool_error(f"create needs `schedule` and `prompt`. Schedules: {EXAMPLES}")
        job = new_job(str(args["schedule"]), str(args["prompt"]), now=utc_now(),
                      tz=default_zone(self.kernel.config), name=args.get("name"),
                      deliver=args.get("deliver"), repeat=_int(args.get("repeat")),
                      retries=_int(args.get("retries")), retry_delay=args.get("retry_delay"),
                      origin={"platform": ctx.platform, "session_id": ctx.session_id,
                              **({"chat_id": ctx.chat_id} if ctx.chat_id else {}),
                              "by": limits.AGENT})
        self._checked(job, {"prompt": job["prompt"], "name": job["name"], "deliver": "",
                            "schedule": True})
        with self.store.locked() as jobs:
            limits.check_room(jobs)
            jobs.append(job)
        return tool_result(success=True, job=summary(job),
                           message=f"Scheduled {job['name']!r} ({job['schedule_display']}); "
                                   f"first run at {job['next_run_at']}.{self._note()}")

    def _list(self, args: dict[str, Any], ctx: ToolCallContext) -> str:
        jobs = [summary(j) for j in self.store.load()]
        return tool_result(success=True, count=len(jobs), jobs=jobs)

    def _update(self, args: dict[str, Any], ctx: ToolCallContext) -> str:
        changes = {k: args.get(k) for k in ("schedule", "prompt", "name", "deliver", "repeat",
                                            "retries", "retry_delay")}
        if all(v is None for v in changes.values()):
            return tool_error("update needs at least one of schedule, prompt, name, deliver, "
                              "repeat, retries, retry_delay")
        with self.store.change(self._ref(args)) as job:
            limits.check_owner(job, changes)
            apply_update(job, changes, now=utc_now(), tz=default_zone(self.kernel.config))
            self._checked(job, changes)  # raising leaves jobs.json as it was
        return tool_result(success=True, job=summary(job))

    def _pause(self, args: dict[str, Any], ctx: ToolCallContext) -> str:
        with self.store.change(self._ref(args)) as job:
            pause(job, utc_now(), "paused by the agent")
        return tool_result(success=True, job=summary(job))

    def _resume(self, args: dict[str, Any], ctx: ToolCallContext) -> str:
        with self.store.change(self._ref(args)) as job:
            resume(job, utc_now(), default_zone(self.kernel.config))
        return tool_result(success=True, job=summary(job))

    def _remove(self, args: dict[str, Any], ctx: ToolCallContext) -> str:
        job = self.store.remove(self._ref(args))
        return tool_result(success=True, removed=job.get("id"), name=job.get("name"))

    def _run(self, args: dict[str, Any], ctx: ToolCallContext) -> str:
        with self.store.change(self._ref(args)) as job:
            job.update(enabled=True, state="scheduled", paused_at=None, paused_reason=None,
                       next_run_at=iso(utc_now()))
        return tool_result(success=True, job=summary(job),
                           message=f"{job['name']!r} is due now.{self._note()}")

    def _note(self) -> str:
        running = self.scheduler_running()
        if running:
            return f" The scheduler (in {running.get('where', 'a process')}) runs it."
        return (" No scheduler is running now: jobs run while `hermes gateway` or `hermes cron "
                "daemon` runs, or when `hermes cron tick` is run (e.g. from a system crontab).")

    @staticmethod
    def _ref(args: dict[str, Any]) -> str:
        ref = str(args.get("job_id") or "").strip()
        if not ref:
            raise JobError("this action needs `job_id` (the `list` action shows the ids)")
        return ref


def _int(value: Any) -> int | None:
    return None if value is None or value == "" else int(value)
