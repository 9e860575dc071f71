"""One run of a job: an agent session on platform ``cron`` (its sessions have source
``cron``) through the ``agent`` service, and the run's output file.

Toolsets: the job's ``enabled_toolsets``, else ``platform_toolsets.cron`` of config.yaml,
else ``hermes-cron`` (what ``hermes-cli`` offers); the tools of ``cronjob`` (a job must not
schedule jobs), ``clarify`` and ``messaging`` (nobody is there to answer) and of
``agent.disabled_toolsets`` are always removed. Dangerous commands follow
``approvals.cron_mode``: ``deny`` (the default) gives the agent no approval callback, so the
approval gate denies them; ``approve`` approves each one (the hard floor still refuses)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent import private_dir, write_atomic
from hermes_agent.api import AGENT

if TYPE_CHECKING:
    from hermes_agent import Kernel

ALWAYS_DISABLED = ("cronjob", "clarify", "messaging")
HINT = ("This is the scheduled job {name!r} (id {id}), run by the scheduler with nobody "
        "watching. Do the task and give the result as your final answer: it is saved and "
        "delivered to {deliver}.")


@dataclass
class Outcome:
    ok: bool
    text: str = ""
    error: str | None = None
    session_id: str | None = None
    interrupted: bool = False


def approve_all(_request: Any) -> str:
    """The approval callback of ``approvals.cron_mode: approve``."""
    return "once"


def cron_mode(config: Any) -> str:
    mode = str(config.get("approvals.cron_mode") or "deny").strip().lower()
    return "approve" if mode in ("approve", "allow", "yes", "off") else "deny"


class AgentJobRunner:
    """Runs a job as an agent session; ``interrupt()`` stops the run in progress."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self._agents: set[Any] = set()
        self._lock = threading.Lock()

    def toolsets(self, job: dict[str, Any]) -> tuple[list[str], frozenset[str]]:
        config = self.kernel.config
        chosen = job.get("enabled_toolsets") or config.get("platform_toolsets.cron") \
            or ["hermes-cron"]
        disabled = [*ALWAYS_DISABLED, *(config.get("agent.disabled_toolsets") or [])]
        tools, _notes = self.kernel.tools.resolve_toolsets(disabled)
        return list(chosen), frozenset(tools)

    def __call__(self, job: dict[str, Any]) -> Outcome:
        if job.get("no_agent") or job.get("script"):
            return Outcome(False, error="script jobs (script, no_agent) are not supported by "
                                        "this version; give the job a prompt with `hermes cron "
                                        "edit ID --prompt ...` or remove it")
        toolsets, excluded = self.toolsets(job)
        options: dict[str, Any] = {
            "platform": "cron", "toolsets": toolsets, "exclude_tools": excluded,
            "stream": False,
            "ephemeral_system_prompt": HINT.format(name=job.get("name"), id=job.get("id"),
                                                   deliver=job.get("deliver") or "local"),
            "approval_callback": approve_all if cron_mode(self.kernel.config) == "approve"
            else None,
        }
        if job.get("workdir"):
            options["cwd"] = Path(job["workdir"])
        for key in ("provider", "model"):
            if job.get(key):
                options[key] = job[key]
        agent = self.kernel.service(AGENT).create(**options)
        with self._lock:
            self._agents.add(agent)
        try:
            result = agent.run_conversation(str(job.get("prompt") or ""))
        finally:
            with self._lock:
                self._agents.discard(agent)
            agent.finalize("shutdown")
        if result.completed and not result.failed:
            return Outcome(True, result.final_response, session_id=result.session_id)
        error = result.error or ("interrupted" if result.interrupted else
                                 f"the agent stopped before a final answer "
                                 f"({result.exit_reason or 'unknown reason'})")
        return Outcome(False, result.final_response, error, result.session_id,
                       result.interrupted)

    def interrupt(self) -> None:
        with self._lock:
            agents = list(self._agents)
        for agent in agents:
            agent.interrupt()


def write_output(home: Path, job: dict[str, Any], started: datetime, finished: datetime,
                 outcome: Outcome, keep: int, tz: tzinfo) -> Path:
    """``$HERMES_HOME/cron/output/<job id>/<start time in tz>.md``; older files beyond
    ``keep`` go."""
    folder = private_dir(Path(home) / "cron" / "output" / str(job["id"]))
    stamp = started.astimezone(tz).strftime("%Y-%m-%d_%H-%M-%S")
    path = folder / f"{stamp}.md"
    number = 1
    while path.exists():
        number += 1
        path = folder / f"{stamp}_{number}.md"
    status = "ok" if outcome.ok else f"error: {outcome.error}"
    lines = [f"# Cron job: {job.get('name')} ({job['id']})", "",
             f"- schedule: {job.get('schedule_display') or ''}",
             f"- started: {started.isoformat()}", f"- finished: {finished.isoformat()}",
             f"- status: {status}", f"- session: {outcome.session_id or '-'}", "",
             "## Prompt", "", str(job.get("prompt") or ""), "", "## Response", "",
             outcome.text or "(no response)", ""]
    write_atomic(path, "\n".join(lines), mode=0o600)
    for old in sorted(folder.glob("*.md"))[:-keep or None] if keep > 0 else []:
        old.unlink(missing_ok=True)
    return path
