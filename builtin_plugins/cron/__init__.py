"""Builtin plugin: scheduled jobs.

Jobs live in ``$HERMES_HOME/cron/jobs.json`` (:mod:`.jobs`); the ``cronjob`` tool
(:mod:`.tool`) and ``hermes cron`` (:mod:`.cli`) change them; the scheduler
(:mod:`.scheduler`) runs the due ones as agent sessions (:mod:`.execute`) and delivers their
output (:mod:`.deliver`). The ``cron`` service (:mod:`.service`) offers the loop that
``hermes gateway`` and ``hermes cron daemon`` run. Toolsets: ``cronjob`` (the tool) and the
platform toolset ``hermes-cron`` (what a run may use: the ``hermes-cli`` set; the runner
removes the cronjob, clarify and messaging tools).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_agent import hookimpl

if TYPE_CHECKING:
    from hermes_agent import Kernel

    from .service import CronService


def register(ctx: Any) -> None:
    """Registers the tool and the service; their modules load on first use, so booting a
    kernel (every ``hermes`` command) imports nothing of the scheduler."""
    from hermes_agent.api import CRON, with_context

    from .schema import CRONJOB

    kernel = ctx.kernel
    tool: list[Any] = []

    def cronjob(args: dict[str, Any], call: Any) -> str:
        if not tool:
            from .service import Heartbeat
            from .tool import CronjobTool

            tool.append(CronjobTool(kernel, Heartbeat(kernel.home).read))
        return str(tool[0](args, call))

    def service(k: Kernel) -> CronService:
        from .service import CronService

        return CronService(k)

    ctx.register_tool(name="cronjob", toolset="cronjob", schema=CRONJOB,
                      handler=with_context(cronjob), description=CRONJOB["description"],
                      emoji="⏰")
    ctx.register_service(CRON, service)
    ctx.register_hook("doctor_checks", _doctor_checks,
                      description="hermes doctor: jobs.json and whether anything runs the jobs")


def _doctor_checks(kernel: "Kernel", config: Any, offline: bool, **_: Any) -> Any:
    from pathlib import Path

    from .doctor import cron_findings

    return cron_findings(Path(kernel.home))


@hookimpl
def register_toolsets(register: Any) -> None:
    register("cronjob", tools=("cronjob",), kind="leaf",
             description="Schedule jobs the agent runs later by itself")
    register("hermes-cron", includes=("hermes-cli",), kind="platform",
             description="What scheduled jobs may use: the hermes-cli toolsets (each run "
                         "loses the cronjob, clarify and messaging tools)")
