"""``hermes send``: deliver a message to a platform's chat from a shell, a script or a crontab,
with Hermes Agent 0.19's options (``--to``, ``--file``, ``--subject``, ``--list``, ``--quiet``,
``--json``). It goes through the ``delivery`` service, so through the running gateway's
adapters (its control socket), checked against the same allow-lists as ``send_message``."""

from __future__ import annotations

import json
import sys

import click


@click.command("send")
@click.argument("message", required=False)
@click.option("-t", "--to", "target", help="Where: 'platform' (its home channel), "
              "'platform:chat_id[:thread_id]', 'platform:#name' or a configured name.")
@click.option("-f", "--file", "path", type=click.Path(dir_okay=False, allow_dash=True),
              help="Read the message from a file ('-': standard input).")
@click.option("-s", "--subject", help="A first line put before the message.")
@click.option("-l", "--list", "listing", is_flag=True,
              help="List the targets (MESSAGE, if given, is a platform to filter by).")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing on success.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def send(message: str | None, target: str | None, path: str | None, subject: str | None,
         listing: bool, quiet: bool, as_json: bool) -> None:
    """Send MESSAGE (else the --file, else standard input) to a chat of a connected platform,
    through the running gateway."""
    from hermes_agent.api.services import DELIVERY
    from hermes_agent.kits.cli import cli_kernel

    delivery = cli_kernel().service(DELIVERY)
    if listing:
        _print_targets(delivery.targets((message or "").strip().lower() or None), as_json)
        return
    if not target:
        raise click.UsageError("say where with --to (e.g. --to telegram, --to "
                               "telegram:123456789); --list shows the configured targets")
    text = _text(message, path)
    if subject:
        text = f"{subject}\n\n{text}" if text.strip() else subject
    if not text.strip():
        raise click.UsageError("nothing to send: give MESSAGE, --file or standard input")
    result = delivery.send(target, text)
    if as_json:
        click.echo(json.dumps(result, indent=2))
    elif result.get("success") and not quiet:
        click.echo(f"sent to {result.get('target', target)}"
                   + (f" ({result['pieces']} messages)" if result.get("pieces", 1) > 1 else ""))
    if not result.get("success"):
        if not as_json:
            click.echo(f"error: {result.get('error')}", err=True)
        sys.exit(1)


def _text(message: str | None, path: str | None) -> str:
    if message is not None:
        return message
    if path is not None:
        with click.open_file(path, encoding="utf-8", errors="replace") as handle:
            return str(handle.read()).rstrip("\n")
    if sys.stdin.isatty():
        raise click.UsageError("nothing to send: give MESSAGE, --file or pipe the text in")
    return sys.stdin.read().rstrip("\n")  # a command's output ends with a newline


def _print_targets(rows: list[dict], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("no home channel or named channel is configured (platforms.<name>."
                   "home_channel, platforms.<name>.channels); 'platform:chat_id' still reaches "
                   "a chat the gateway answers")
        return
    for row in rows:
        where = row["chat_id"] + (f":{row['thread_id']}" if row.get("thread_id") else "")
        state = "" if row.get("connected") else "  (platform not connected)"
        click.echo(f"{row['target']:<28} {where:<24} {row['name']}{state}")
