"""``hermes status [--json] [--active MINUTES]``: what runs on this home.

Read from what the running parts leave in ``$HERMES_HOME`` (records whose pid is gone are
not running): the gateway's ``gateway/state.json`` (docs/gateway.md), the scheduler's
``cron/scheduler.json`` and the jobs in ``cron/jobs.json`` (docs/cron.md), the kept
background processes' ``processes/proc_*.json`` (``hermes processes``); the sessions from
the session store's interface (open ones with a message in the last MINUTES)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from hermes_agent.kits.cli import cli_kernel
from hermes_agent.kits.files import pid_alive

if TYPE_CHECKING:
    from hermes_agent import Kernel

SESSION_PAGE = 200  # sessions read per page while looking for the active ones
SESSION_PAGES = 5


def _json_file(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def gateway_status(home: Path) -> dict[str, Any]:
    state = _json_file(home / "gateway" / "state.json")
    if state is None or not pid_alive(state.get("pid")):
        return {"running": False}
    keys = ("pid", "started_at", "platforms", "chats", "turns_running", "queue_depth",
            "failed_platforms")
    return {"running": True, **{k: state[k] for k in keys if k in state}}


def cron_status(home: Path) -> dict[str, Any]:
    beat = _json_file(home / "cron" / "scheduler.json")
    running = beat is not None and pid_alive(beat.get("pid"))
    out: dict[str, Any] = {"scheduler": {"running": running, **(beat or {})} if running
                           else {"running": False}}
    jobs_file = home / "cron" / "jobs.json"
    data = _json_file(jobs_file) if jobs_file.exists() else {"jobs": []}
    if data is None or not isinstance(data.get("jobs"), list):
        out["error"] = f"{jobs_file} is not readable; `hermes doctor` says how to fix it"
        return out
    jobs = [j for j in data["jobs"] if isinstance(j, dict)]
    enabled = [j for j in jobs if j.get("enabled", True)]
    due = sorted((str(j["next_run_at"]), str(j.get("name") or j.get("id")))
                 for j in enabled if j.get("next_run_at"))
    out.update(jobs=len(jobs), enabled=len(enabled),
               next={"at": due[0][0], "job": due[0][1]} if due else None)
    return out


def _same_process(record: dict[str, Any]) -> bool:
    """The record's pid runs and (where /proc tells) started when the record says: a reused
    pid is not the process."""
    pid = record.get("pid")
    if not pid_alive(pid):
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read()
    except OSError:
        return True
    started = record.get("pid_start")
    return started is None or int(fields[fields.rfind(b")") + 2:].split()[19]) == started


def processes_status(home: Path) -> list[dict[str, Any]]:
    """The kept background processes whose pid still runs and that wrote no exit status."""
    found = []
    folder = home / "processes"
    for path in sorted(folder.glob("proc_*.json")) if folder.is_dir() else []:
        record = _json_file(path)
        if record is None:
            continue
        proc_id = str(record.get("id", path.stem))
        if (folder / f"{proc_id}.exit").exists() or not _same_process(record):
            continue
        found.append({"id": proc_id, "pid": record.get("pid"),
                      "command": record.get("command"), "started": record.get("started"),
                      "session_id": record.get("session_id")})
    return found


def sessions_status(kernel: "Kernel", minutes: float) -> dict[str, Any]:
    from hermes_agent.api import session_store

    try:
        store = session_store(kernel)
        cutoff = time.time() - minutes * 60
        active = []
        for page in range(SESSION_PAGES):
            rows = store.list_sessions_rich(limit=SESSION_PAGE, offset=page * SESSION_PAGE,
                                            include_children=True,
                                            project_compression_tips=False)
            for row in rows:
                last = float(row.get("last_active") or row.get("started_at") or 0)
                if row.get("ended_at") is None and last >= cutoff:
                    active.append({"id": row["id"], "source": row.get("source"),
                                   "model": row.get("model"), "title": row.get("title"),
                                   "last_active": last,
                                   "messages": row.get("message_count", 0)})
            if len(rows) < SESSION_PAGE:
                break
    except Exception as exc:  # a store that cannot be read: said, not fatal
        return {"error": f"{type(exc).__name__}: {exc}", "active": []}
    return {"window_minutes": minutes, "active": active, "store": store.name}


def _ago(ts: float | None) -> str:
    if not ts:
        return "?"
    seconds = max(0.0, time.time() - float(ts))
    if seconds < 120:
        return f"{seconds:.0f}s ago"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m ago"
    return f"{seconds / 3600:.1f}h ago"


def render(status: dict[str, Any]) -> list[str]:
    gw, cron = status["gateway"], status["cron"]
    lines = [f"home: {status['home']}"]
    if gw["running"]:
        lines.append(f"gateway: running (pid {gw.get('pid')}, since "
                     f"{_ago(gw.get('started_at'))}): platforms "
                     f"{', '.join(gw.get('platforms') or []) or 'none'}; chats "
                     f"{gw.get('chats', 0)}; turns running {gw.get('turns_running', 0)}; "
                     f"queue depth {gw.get('queue_depth', 0)}")
        lines += [f"  stopped: {name}: {why}"
                  for name, why in (gw.get("failed_platforms") or {}).items()]
    else:
        lines.append("gateway: not running (`hermes gateway run` starts it)")
    sched = cron["scheduler"]
    where = f" in the {sched['where']}" if sched.get("where") else ""
    scheduler = (f"running (pid {sched.get('pid')}{where})" if sched["running"]
                 else "not running")
    if "error" in cron:
        jobs = cron["error"]
    else:
        jobs = f"{cron.get('enabled', 0)} of {cron.get('jobs', 0)} jobs enabled"
        if cron.get("next"):
            jobs += f", next: {cron['next']['job']} at {cron['next']['at']}"
    lines.append(f"cron: scheduler {scheduler}; {jobs}")
    procs = status["processes"]
    lines.append(f"background processes: {len(procs)} running"
                 + (" (`hermes processes` lists them)" if procs else ""))
    lines += [f"  {p['id']}  pid {p['pid']}  {p['command']}" for p in procs]
    sessions = status["sessions"]
    if "error" in sessions:
        lines.append(f"sessions: cannot be read: {sessions['error']}")
    else:
        active = sessions["active"]
        lines.append(f"sessions: {len(active)} active in the last "
                     f"{sessions['window_minutes']:g} minutes")
        lines += [f"  {s['id']}  {s['source']}  {s.get('model') or '-'}  "
                  f"{s['messages']} messages  {_ago(s['last_active'])}"
                  + (f"  {s['title']}" if s.get("title") else "") for s in active[:20]]
        if len(active) > 20:
            lines.append(f"  ... and {len(active) - 20} more (`hermes sessions list`)")
    return lines


@click.command(name="status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--active", "minutes", type=click.FloatRange(min=0.1), default=60.0,
              show_default=True, help="An open session with a message in the last MINUTES "
              "is active.")
def status(as_json: bool, minutes: float) -> None:
    """What runs on this home: the gateway (platforms, chats, queue), the cron scheduler and
    the jobs, background processes, active sessions."""
    kernel = cli_kernel()
    home = Path(kernel.home)
    report = {"home": str(home), "gateway": gateway_status(home), "cron": cron_status(home),
              "processes": processes_status(home), "sessions": sessions_status(kernel, minutes)}
    if as_json:
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        click.echo("\n".join(render(report)))
