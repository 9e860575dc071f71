"""`hermes sessions list | show | search | export | import | rename | delete | prune | stats`."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

import click
from hermes_agent.api import SessionImporter, SessionStore, SessionStoreError, session_store
from hermes_agent.kits.text import plural
from hermes_agent.kits.sql.values import usage_estimated
from hermes_agent.kits.cli import confirm_at_terminal, ListingGroup

from .inputs import MAX_LIMIT, clean_text


class _Text(click.ParamType):
    """A string argument with undecodable bytes repaired (see inputs.clean_text), so what a
    terminal passes in invalid UTF-8 is searched and printed without a traceback."""

    name = "text"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> str:
        return clean_text(value if isinstance(value, str) else str(value))


TEXT = _Text()
LIMIT = click.IntRange(0, MAX_LIMIT)


def _store() -> SessionStore:
    from hermes_agent.kits.cli import cli_kernel

    return session_store(cli_kernel())


def _when(ts: float | None) -> str:
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M") if ts else "-"


def _resolve(store: SessionStore, key: str) -> str:
    found = store.resolve_session_id(key)
    if found is None:
        raise SessionStoreError(f"no session matches {key!r} (an id, a unique id prefix or a "
                                "title); see `hermes sessions list`")
    return found


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


@click.group(cls=ListingGroup, default="list")
def sessions() -> None:
    """List, show, search, export, import and clean up stored sessions (state.db)."""


@sessions.command(name="list")
@click.option("--source", type=TEXT, help="Only this source (cli, telegram, cron, ...).")
@click.option("--limit", type=LIMIT, default=20, show_default=True, help="How many.")
@click.option("--all", "include_children", is_flag=True, help="Include subagent sessions.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_cmd(source: str | None, limit: int, include_children: bool, as_json: bool) -> None:
    """Recent sessions, one line per conversation (compression chains show their tip)."""
    rows = _store().list_sessions_rich(source=source, limit=limit,
                                       include_children=include_children)
    if as_json:
        _echo_json(rows)
        return
    if not rows:
        click.echo("No sessions yet.")
    for row in rows:
        title = row.get("title") or row.get("preview") or "(empty)"
        chain = f" [{len(row['lineage'])} parts]" if len(row.get("lineage") or []) > 1 else ""
        click.echo(f"{row['id']}  {_when(row['last_active'])}  {row['source']:<9} "
                   f"{row['message_count']:>4} msgs  {title[:60]}{chain}")


@sessions.command()
@click.argument("session", type=TEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the session and messages as JSON.")
@click.option("--reasoning", is_flag=True, help="Also show stored reasoning.")
def show(session: str, as_json: bool, reasoning: bool) -> None:
    """Show one conversation (SESSION: an id, a unique id prefix or a title)."""
    store = _store()
    data = store.export_session(_resolve(store, session))
    assert data is not None
    if as_json:
        _echo_json(data)
        return
    click.echo(click.style(data.get("title") or data["id"], bold=True))
    click.echo(f"id {data['id']} · {data['source']} · {data.get('model') or '-'} · started "
               f"{_when(data['started_at'])} · {plural(data['message_count'], 'message')} · "
               f"{'~' if usage_estimated(data) else ''}{data['input_tokens']}+"
               f"{data['output_tokens']} tokens · cost "
               f"{_session_cost(data)}")
    for msg in data["messages"]:
        click.echo("")
        click.echo(click.style(_label(msg), bold=True, fg=_COLOURS.get(msg["role"])))
        if reasoning and msg.get("reasoning"):
            click.echo(click.style(_indent(msg["reasoning"]), dim=True))
        content = msg.get("content")
        if content:
            click.echo(_indent(content if isinstance(content, str) else
                               json.dumps(content, ensure_ascii=False)))
        for call in msg.get("tool_calls") or []:
            fn = call.get("function", {}) if isinstance(call, dict) else {}
            click.echo(f"  → {fn.get('name', '?')}({fn.get('arguments', '')})")


def _session_cost(session: dict[str, Any]) -> str:
    """No model call (e.g. a compression child not yet answered): none, not $0.0000."""
    used = any(session.get(k) for k in ("api_call_count", "input_tokens", "output_tokens"))
    return _cost(session.get("estimated_cost_usd")) if used else "none (no model calls)"


_COLOURS = {"user": "cyan", "assistant": "green", "tool": "yellow", "system": "magenta"}


def _label(msg: dict[str, Any]) -> str:
    extra = f" {msg['tool_name']}" if msg.get("tool_name") else ""
    return f"{msg['role']}{extra} · {_when(msg['timestamp'])}"


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in str(text).splitlines())


@sessions.command()
@click.argument("query", type=TEXT)
@click.option("--source", type=TEXT, multiple=True, help="Only these sources (repeatable).")
@click.option("--exclude-source", type=TEXT, multiple=True, help="Leave out these sources.")
@click.option("--role", type=TEXT, multiple=True, help="Only these roles (user, assistant, tool).")
@click.option("--limit", type=LIMIT, default=20, show_default=True)
@click.option("--sort", type=click.Choice(["relevance", "newest", "oldest"]), default="relevance")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def search(query: str, source: tuple[str, ...], exclude_source: tuple[str, ...],
           role: tuple[str, ...], limit: int, sort: str, as_json: bool) -> None:
    """Full-text search: words, "phrases", OR, NOT, prefix*; CJK text works too."""
    results = _store().search_messages(
        query, source_filter=source or None, exclude_sources=exclude_source or None,
        role_filter=role or None, limit=limit, sort=None if sort == "relevance" else sort)
    if as_json:
        _echo_json(results)
        return
    if not results:
        click.echo("No matches.")
    for hit in results:
        click.echo(f"{hit['session_id']}  {_when(hit['timestamp'])}  {hit['source']}  "
                   f"{hit['role']}")
        click.echo("  " + " ".join(hit["snippet"].split()))


@sessions.command()
@click.argument("session", type=TEXT, required=False)
@click.option("--source", type=TEXT, help="Export only sessions of this source.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write to this file (default: standard output).")
def export(session: str | None, source: str | None, output: Path | None) -> None:
    """Export one session or all of them as JSON lines (one session with its messages a line)."""
    from .transfer import write_jsonl

    store = _store()
    if session:
        data = store.export_session(_resolve(store, session))
        records: Any = [data] if data else []
    else:
        records = store.export_all(source=source)
    if output is None:
        write_jsonl(records, sys.stdout)
        return
    with output.open("w", encoding="utf-8") as handle:
        n = write_jsonl(records, handle)
    click.echo(f"Exported {n} session(s) to {output}", err=True)


@sessions.command(name="import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--include-inactive", is_flag=True,
              help="Also copy rows a Hermes Agent state.db hides (compacted or rewound).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def import_cmd(path: Path, include_inactive: bool, as_json: bool) -> None:
    """Copy sessions from a state.db (Hermes Agent 0.19 or hermes) or a JSONL export."""
    from .transfer import import_records, import_state_db, read_jsonl

    from .store import SqliteSessionStore
    from .transfer import state_db_records

    store = _store()
    with path.open("rb") as handle:
        is_sqlite = handle.read(16) == b"SQLite format 3\x00"
    if not isinstance(store, SqliteSessionStore):  # another backend imports records itself
        if not isinstance(store, SessionImporter):
            raise click.ClickException(f"the {store.name} session store cannot import sessions "
                                       "(it has no import_records)")
        records = (state_db_records(path, include_inactive) if is_sqlite else read_jsonl(path))
        stats = store.import_records(records)
    elif is_sqlite:
        stats = import_state_db(store, path, include_inactive=include_inactive)
    else:
        stats = import_records(store, read_jsonl(path))
    if as_json:
        _echo_json(stats)
    else:
        click.echo(f"Imported {stats['sessions']} session(s) and {stats['messages']} message(s); "
                   f"skipped {stats['skipped']} already present.")


@sessions.command(name="migrate")
@click.option("--to", "target", required=True, type=TEXT, metavar="DSN|PATH",
              help="Where to copy: a PostgreSQL DSN or a state.db path.")
@click.option("--from", "origin", type=TEXT, metavar="DSN|PATH",
              help="Copy from here instead of the store sessions.store selects.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def migrate_cmd(target: str, origin: str | None, as_json: bool) -> None:
    """Copy every session and message to another store (several sources merge: messages are
    numbered by the target), then verify them (counts and a checksum per session). The source
    is only read; sessions already there and identical are skipped, so run it again to resume;
    ones there with other content are named and left as they are."""
    from hermes_agent.kits.cli import cli_kernel
    from hermes_agent.kits.secrets import mask_url

    from .migrate import migrate, open_location

    kernel = cli_kernel()
    source = open_location(kernel, origin) if origin else session_store(kernel)
    destination = open_location(kernel, target)
    try:
        report = migrate(source, destination, progress=lambda line: click.echo(line, err=True))
    finally:
        destination.close()
        if origin:
            source.close()
    where = mask_url(target)
    if as_json:
        _echo_json(report)
    else:
        click.echo(f"Copied {plural(report['copied'], 'session')} "
                   f"({plural(report['copied_messages'], 'message')}); "
                   f"{report['skipped']} already there, identical. Verified "
                   f"{report['sessions']} session(s) and {report['messages']} message(s) in "
                   f"{where}.")
        for moved in report["renamed"]:
            click.echo(f"{moved['id']}: the title {moved['source_title']!r} was taken in "
                       f"{where}, so it is {moved['title']!r} there.")
    refused = report["refused"]
    if refused:
        raise SessionStoreError(
            f"{len(refused)} session(s) already in {where} with other content were not copied "
            f"(nothing was overwritten): {', '.join(refused[:10])}"
            f"{' ...' if len(refused) > 10 else ''}. Keep the target's version, or delete it "
            "there (hermes sessions delete ID) and run the command again.")
    if not report["ok"]:
        bad = (report["missing"] + report["mismatched"])[:5]
        raise SessionStoreError(
            f"{len(report['missing'])} session(s) missing and {len(report['mismatched'])} "
            f"different in {where} after the copy (first: {', '.join(bad)}); something wrote "
            "there meanwhile. Stop it and run the command again.")


@sessions.command()
@click.argument("session", type=TEXT)
@click.argument("title", type=TEXT)
def rename(session: str, title: str) -> None:
    """Set the title of SESSION (titles are unique; "" clears it)."""
    store = _store()
    sid = _resolve(store, session)
    clean = store.set_session_title(sid, title)
    click.echo(f"{sid}: {clean!r}" if clean else f"{sid}: title cleared")


@sessions.command()
@click.argument("session", type=TEXT)
@click.option("--yes", "-y", is_flag=True, help="Do not ask.")
def delete(session: str, yes: bool) -> None:
    """Delete a session and its messages."""
    store = _store()
    sid = _resolve(store, session)
    if not yes and not confirm_at_terminal(f"Delete session {sid} and its messages?",
                                           "run it again with --yes to delete it"):
        raise click.Abort()
    store.delete_session(sid)
    click.echo(f"Deleted {sid}")


@sessions.command()
@click.option("--older-than", "days", type=click.FloatRange(0, 1e6), default=90.0,
              show_default=True, help="Age in days.")
@click.option("--source", type=TEXT, help="Only this source.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def prune(days: float, source: str | None, yes: bool, as_json: bool) -> None:
    """Delete ENDED sessions older than --older-than days (active ones are kept)."""
    store = _store()
    if not yes and not as_json:
        count = _prunable(store, days, source)
        if not count:
            click.echo(f"No ended session is older than {days:g} days"
                       f"{f' from {source}' if source else ''}; nothing to delete.")
            return
        question = (f"Delete {plural(count, 'ended session')} older than {days:g} days"
                    f"{f' from {source}' if source else ''}, with their messages?")
        if not confirm_at_terminal(question, "run it again with --yes to delete them"):
            raise click.Abort()
    n = store.prune_sessions(older_than_days=days, source=source)
    if as_json:
        _echo_json({"deleted": n})
    else:
        click.echo(f"Deleted {n} session(s).")


def _prunable(store: Any, days: float, source: str | None, page: int = 500) -> int:
    """How many sessions ``prune_sessions`` would delete now: ended, started before the
    cut-off (read through the listing, page by page)."""
    import time

    cutoff, count, offset = time.time() - days * 86400, 0, 0
    while True:
        rows = store.list_sessions(source=source, limit=page, offset=offset)
        count += sum(1 for r in rows if r.get("ended_at") and r["started_at"] < cutoff)
        if len(rows) < page:
            return count
        offset += page


@sessions.command()
@click.option("--source", type=TEXT, help="Only this source.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def stats(source: str | None, as_json: bool) -> None:
    """Sessions, messages, tokens and cost in total, by model and by source."""
    data = _store().usage_stats(source=source)
    if as_json:
        _echo_json(data)
        return
    t = data["total"]
    click.echo(f"{plural(t['sessions'], 'session')}, {plural(t['messages'], 'message')}, "
               f"{plural(t['tool_calls'], 'tool call')}, {plural(t['api_calls'], 'API call')}")
    click.echo(f"tokens: {t['input_tokens']} in, {t['output_tokens']} out, "
               f"{t['cache_read_tokens']} cache read, {t['cache_write_tokens']} cache write, "
               f"{t['reasoning_tokens']} reasoning; cost "
               f"{_cost(t['estimated_cost_usd'], t.get('unpriced_sessions', 0))}")
    for row in data["by_model"]:
        click.echo(f"  {row['model'] or '(none)':<30} {plural(row['sessions'], 'session'):>14} "
                   f"{row['input_tokens'] + row['output_tokens']:>10} tokens "
                   f"{_cost(row['estimated_cost_usd'], row.get('unpriced_sessions', 0))}")


def _cost(amount: float | None, unpriced: int = 0) -> str:
    """An estimated cost; a model without a price makes it unknown, never $0."""
    if amount is None:
        return "unknown (no price for the model)"
    if not unpriced:
        return f"${amount:.4f} estimated"
    return (f"${amount:.4f} estimated, plus unknown for {unpriced} session"
            f"{'s' if unpriced != 1 else ''} whose model has no price")
