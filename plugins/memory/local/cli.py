"""``hermes facts``: inspect and edit local memory from the shell (no session needed).

The database is ``$HERMES_HOME/memories/local.db``; ``list``, ``search`` and ``stats`` never
create it. ``add`` applies the checks the agent's writes get (length, secrets, injection
scan).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import click
from hermes_agent import hermes_home
from hermes_agent.api import INJECTION_SCAN
from hermes_agent.kits.text import ellipsize, plural, table
from hermes_agent.kits.cli import ListingGroup, cli_kernel

from . import settings as settings_mod
from .extract import problem
from .query import parse
from .store import Fact, FactStore, db_path


def _path() -> Path:
    return db_path(hermes_home())


def _store(create: bool = False) -> FactStore | None:
    path = _path()
    if not create and not path.exists():
        return None
    entry = cli_kernel(boot=False).config.plugin_entry("local")
    return FactStore(path, max_facts=settings_mod.from_mapping(entry).max_facts)


def _day(stamp: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(stamp))


def _show(facts: list[Fact], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps([f.as_dict() for f in facts], ensure_ascii=False, indent=2))
        return
    if not facts:
        click.echo("No facts.")
        return
    click.echo("\n".join(table(
        ["id", "stored", "last used", "hits", "fact"],
        [[str(f.id), _day(f.created_at), _day(f.last_used_at), str(f.hits), ellipsize(f.text, 100)]
         for f in facts])))


@click.group(cls=ListingGroup, default="list")
def facts() -> None:
    """List, search, add and forget the facts of local memory ($HERMES_HOME/memories/local.db)."""


@facts.command("list")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 10_000),
              help="How many facts (most recently used first).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_facts(limit: int, as_json: bool) -> None:
    """The most recently used facts."""
    store = _store()
    _show(store.recent(limit) if store else [], as_json)


@facts.command("search")
@click.argument("query")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 50))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def search_facts(query: str, limit: int, as_json: bool) -> None:
    """Facts matching QUERY, best first (as the agent recalls them)."""
    store = _store()
    entry = cli_kernel(boot=False).config.plugin_entry("local")
    half_life = settings_mod.from_mapping(entry).half_life_days
    found = store.search(parse(query), limit=limit, half_life_days=half_life) if store else []
    _show([fact for fact, _ in found], as_json)


@facts.command("add")
@click.argument("text")
def add_fact(text: str) -> None:
    """Store TEXT as a fact (refused: secrets, injection-looking text, bad length)."""
    why = problem(text)
    if why is None:
        try:
            findings = list(cli_kernel().service(INJECTION_SCAN).scan(text))
        except Exception as exc:
            raise click.ClickException(f"nothing was stored: the injection scan is "
                                       f"unavailable ({exc})") from exc
        if findings:
            why = "it looks like a prompt injection (" + "; ".join(findings) + ")"
    if why is not None:
        raise click.ClickException(f"nothing was stored: {why}")
    store = _store(create=True)
    assert store is not None
    fact, new = store.add(text, origin="cli")
    click.echo(f"{'stored' if new else 'already known'}: #{fact.id} {fact.text}")


@facts.command("forget")
@click.argument("fact_id", metavar="ID", type=int)
def forget_fact(fact_id: int) -> None:
    """Delete the fact with this ID."""
    store = _store()
    fact = store.delete(fact_id) if store else None
    if fact is None:
        raise click.ClickException(f"no fact has id {fact_id} (`hermes facts list` shows ids)")
    click.echo(f"forgotten: #{fact.id} {fact.text}")


@facts.command("stats")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def stats(as_json: bool) -> None:
    """How many facts there are, the database's size and where it is."""
    path = _path()
    store = _store()
    data = {"path": str(path), "exists": store is not None,
            "facts": store.count() if store else 0,
            "size_bytes": store.size_bytes() if store else 0}
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    click.echo(f"{plural(data['facts'], 'fact')} in {path}"
               + (f" ({data['size_bytes']:,} bytes)" if store else " (not created yet)"))
