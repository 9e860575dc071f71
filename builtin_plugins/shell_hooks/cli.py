"""``hermes hooks {list,test,approve,revoke,doctor}``: the shell hooks of config.yaml."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click
from hermes_agent.kits.cli import ListingGroup, cli_kernel, confirm_at_terminal

from .allowlist import Allowlist, hook_id, script_of, scripts_of
from .runner import TOOL_HOOKS, ShellHook, answer, configured, payload

STATUS = {"approved": "approved", "unapproved": "NOT APPROVED (does not run)",
          "script-changed": "SCRIPT CHANGED since approval (does not run)"}


def _hooks(boot: bool = False) -> tuple[Any, list[ShellHook], list[str], Allowlist]:
    kernel = cli_kernel(boot=boot)
    hooks, problems = configured(kernel.config)
    return kernel, hooks, problems, Allowlist(Path(kernel.home))


@click.group(name="hooks", cls=ListingGroup)
def hooks() -> None:
    """The shell hooks of config.yaml's `hooks:` (docs/hooks.md#shell-hooks)."""


@hooks.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_(as_json: bool) -> None:
    """Each configured hook, its matcher, timeout and whether it is approved."""
    from . import accept_all

    kernel, found, problems, allowlist = _hooks()
    rows = [{"event": h.event, "matcher": h.matcher, "command": h.command,
             "timeout": h.timeout, "id": hook_id(h.event, h.command),
             "status": allowlist.status(h.event, h.command)} for h in found]
    if as_json:
        click.echo(json.dumps({"hooks": rows, "problems": problems,
                               "accept_all": accept_all(kernel)}, indent=2))
        return
    if not rows:
        click.echo("No shell hooks: add them under `hooks:` in config.yaml "
                   "(docs/hooks.md#shell-hooks).")
    for row in rows:
        matcher = f" [matcher: {row['matcher']}]" if row["matcher"] else ""
        click.echo(f"{row['event']}{matcher}: {row['command']}  (timeout {row['timeout']:g} s)")
        click.echo(f"  {STATUS[row['status']]}")
    for problem in problems:
        click.echo(f"problem: {problem}", err=True)
    why = accept_all(kernel)
    if why:
        click.echo(f"every hook runs without approval ({why} is set)")


@hooks.command()
@click.argument("name")
@click.option("--tool", default="terminal", show_default=True,
              help="The tool_name of the test event (tool hooks).")
@click.option("--payload", "extra", default="{}",
              help="JSON object merged into the test event's arguments.")
def test(name: str, tool: str, extra: str) -> None:
    """Run the hooks of NAME once with a test event, in the sandbox, and show their answers
    (also an unapproved hook: you asked for this run)."""
    kernel, found, problems, allowlist = _hooks(boot=True)
    chosen = [h for h in found if h.event == name]
    if not chosen:
        raise click.ClickException(f"no shell hook for {name!r} in config.yaml"
                                   + "".join(f"; {p}" for p in problems if name in p))
    try:
        arguments = {"tool_name": tool if name in TOOL_HOOKS else None,
                     "args": {"command": "echo test"} if name in TOOL_HOOKS else None,
                     "session_id": "hooks-test", **json.loads(extra)}
    except ValueError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="'--payload'") from None
    from hermes_agent.api.services import SANDBOX

    sandbox = kernel.service(SANDBOX)
    click.echo(f"sandbox: {sandbox.describe()}")
    cwd = str(Path.cwd())
    for hook in chosen:
        if not hook.matches(arguments.get("tool_name")):
            click.echo(f"- {hook.command}: matcher {hook.matcher!r} does not match {tool!r}; "
                       "not run")
            continue
        click.echo(f"- {hook.command} ({STATUS[allowlist.status(hook.event, hook.command)]})")
        run = sandbox.run(hook.command, cwd=cwd, timeout=hook.timeout,
                          stdin=payload(hook.event, arguments, cwd),
                          env={"HERMES_HOOK_EVENT": hook.event})
        state = "timed out" if run.timed_out else f"exit {run.returncode}"
        click.echo(f"  {state} in {run.duration_s:.2f} s")
        if run.stdout.strip():
            click.echo(f"  stdout: {run.stdout.strip()[:2000]}")
        if run.stderr.strip():
            click.echo(f"  stderr: {run.stderr.strip()[:2000]}")
        click.echo(f"  answer: {json.dumps(answer(hook, run))}")


def _chosen(found: list[ShellHook], name: str | None, command: str | None) -> list[ShellHook]:
    return [h for h in found if (name is None or h.event == name)
            and (command is None or h.command == command)]


@hooks.command()
@click.argument("name", required=False)
@click.option("--command", "command", default=None, help="Only the hook with this command.")
@click.option("--yes", "-y", is_flag=True, help="Approve without asking.")
def approve(name: str | None, command: str | None, yes: bool) -> None:
    """Approve the configured hooks of NAME (all hooks without NAME) that are not approved:
    each exact command is asked about, then stored (sealed) in the allowlist."""
    _kernel, found, _problems, allowlist = _hooks()
    pending = [h for h in _chosen(found, name, command)
               if allowlist.status(h.event, h.command) != "approved"]
    if not pending:
        click.echo("Nothing to approve: " + ("every configured hook is approved."
                                             if _chosen(found, name, command) else
                                             "no such hook in config.yaml."))
        return
    for hook in pending:
        script = script_of(hook.command)
        click.echo(f"{hook.event}: {hook.command}" + (f"\n  script: {script}" if script else ""))
        if not yes and not confirm_at_terminal(
                "Run this command (in the sandbox) at every such event?",
                "run `hermes hooks approve --yes` to approve without asking"):
            click.echo("  not approved")
            continue
        if not allowlist.approve(hook.event, hook.command):
            raise click.ClickException(
                "the approval cannot be sealed (no usable cache key, see `hermes hooks "
                "doctor`); start hermes with --accept-hooks instead")
        click.echo("  approved")


@hooks.command()
@click.argument("name", required=False)
@click.option("--command", "command", default=None, help="Only the approval of this command.")
@click.option("--all", "everything", is_flag=True, help="Every approval.")
def revoke(name: str | None, command: str | None, everything: bool) -> None:
    """Withdraw the approvals of NAME's hooks (or of one --command, or --all)."""
    _kernel, _found, _problems, allowlist = _hooks()
    if name is None and not everything:
        raise click.UsageError("name a hook (e.g. pre_tool_call) or pass --all")
    events = sorted({a.event for a in allowlist.entries().values()}) if everything else [name]
    gone = [a for event in events for a in allowlist.revoke(str(event), command)]
    for approval in gone:
        click.echo(f"revoked {approval.event}: {approval.command}")
    if not gone:
        click.echo("No such approval.")


@hooks.command()
def doctor() -> None:
    """Check the shell hooks: config, approvals, scripts, the sandbox, the cache key."""
    from hermes_agent import cache_key_path

    from . import accept_all
    from .runner import TRANSFORMS

    kernel, found, problems, allowlist = _hooks()
    bad = list(problems)
    notes: list[str] = []
    allowlist.entries()
    if allowlist.rejected:
        bad.append(f"{allowlist.path}: {allowlist.rejected} entr"
                   f"{'y was' if allowlist.rejected == 1 else 'ies were'} changed or written "
                   "outside `hermes hooks approve` (seal does not match): not believed; "
                   "approve those hooks again")
    from hermes_agent import seal_json

    if seal_json("shell-hook-approval", {}) is None:
        bad.append(f"no usable cache key at {cache_key_path()}: approvals cannot be stored "
                   "or believed; fix the folder's permissions (or use --accept-hooks)")
    for hook in found:
        label = f"{hook.event} `{hook.command}`"
        status = allowlist.status(hook.event, hook.command)
        if status != "approved":
            bad.append(f"{label}: {STATUS[status]}; run `hermes hooks approve {hook.event}`")
        script = script_of(hook.command)
        first = os.path.expanduser(hook.command.split()[0])
        if script is None and "/" in first:
            bad.append(f"{label}: its script does not exist")
        elif script is not None and str(script) == first and not os.access(script, os.X_OK):
            bad.append(f"{label}: {script} is not executable (chmod +x)")
        home = Path(kernel.home).resolve()
        for path in scripts_of(hook.command):
            if path.resolve() == home or home in path.resolve().parents:
                bad.append(f"{label}: {path} is inside $HERMES_HOME, which the sandbox hides "
                           "from commands: move it out (e.g. to ~/.config/hermes-hooks/)")
        if hook.matcher and hook.event not in TOOL_HOOKS:
            notes.append(f"{label}: matcher is used only by tool hooks; it runs at every event")
        if hook.event in TRANSFORMS or hook.event in ("pre_tool_call", "pre_llm_call"):
            notes.append(f"{label}: its JSON answer counts (docs/hooks.md#shell-hooks)")
    from hermes_agent.api.services import SANDBOX

    try:
        mechanism = cli_kernel().service(SANDBOX).describe()
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        mechanism = f"unavailable ({exc}): hooks do not run"
    click.echo(f"sandbox: {mechanism}")
    if mechanism.startswith(("NONE", "unavailable")):
        bad.append(f"hooks are not confined: {mechanism}")
    why = accept_all(kernel)
    if why:
        notes.append(f"every hook runs without approval: {why} is set")
    click.echo(f"hooks: {len(found)}, approved: "
               f"{sum(allowlist.status(h.event, h.command) == 'approved' for h in found)}")
    for line in notes:
        click.echo(f"note: {line}")
    for line in bad:
        click.echo(f"problem: {line}")
    if bad:
        sys.exit(1)
    click.echo("ok")
