"""The consent step of an interactive ``hermes chat``: before its first prompt, on the main
thread (turns run on worker threads, and nothing asks in the middle of one), each configured
hook that is not approved is shown with its command and script and asked about (y/N). A yes
is stored in the allowlist; a no leaves the hook skipped for this run. Every other surface
(``chat -q``, ``--json``, the gateway, cron, other commands) asks nothing: there an
unapproved hook is skipped with a warning naming ``hermes hooks approve``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from .allowlist import Allowlist, scripts_of
from .runner import ShellHook


def interactive_chat() -> bool:
    """Whether this process is an interactive ``hermes chat`` at a terminal."""
    import click

    ctx = click.get_current_context(silent=True)
    while ctx is not None and (ctx.command is None or ctx.command.name != "chat"):
        ctx = ctx.parent
    if ctx is None or ctx.params.get("query") is not None or ctx.params.get("as_json"):
        return False
    return all(stream is not None and stream.isatty() for stream in (sys.stdin, sys.stderr))


def ask_at_chat_start(allowlist: Allowlist, hooks: Iterable[ShellHook], warned: set[str]) -> None:
    """Ask about each unapproved hook (interactive chat only); ``warned`` gets the ones the
    user turned down, so the skip is not warned about again."""
    pending = [h for h in hooks if allowlist.status(h.event, h.command) != "approved"]
    if not pending or not interactive_chat():
        return
    import click

    for hook in pending:
        changed = allowlist.status(hook.event, hook.command) == "script-changed"
        click.echo(f"\nShell hook {hook.event}"
                   + (f" (matcher {hook.matcher})" if hook.matcher else "")
                   + (": its script changed since you approved it" if changed else "")
                   + f"\n  {hook.command}", err=True)
        for script in scripts_of(hook.command):
            click.echo(f"  script: {script}", err=True)
        try:
            yes = click.confirm("Run it (in the sandbox) at every such event?", default=False,
                                err=True)
        except click.Abort:  # Ctrl-C or Ctrl-D: not approved, and the chat goes on
            yes = False
            click.echo("", err=True)
        if yes and allowlist.approve(hook.event, hook.command):
            click.echo("  approved (`hermes hooks revoke` withdraws it)", err=True)
        else:
            status = "script-changed" if changed else "unapproved"
            warned.add(f"{status}:{hook.event}:{hook.command}")
            click.echo(f"  not approved: skipped (`hermes hooks approve {hook.event}` later)",
                       err=True)
