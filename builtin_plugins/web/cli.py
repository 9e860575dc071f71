"""`hermes web [status] | search QUERY | extract URL`: which backends are selected and
installed, and a backend run directly (no fallback, no cache), so a user can check a key
before the agent relies on it."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, NoReturn

import click
from hermes_agent.api import WebBackend, WebError
from hermes_agent.kits.http import check_url
from hermes_agent.kits.cli import ListingGroup, cli_kernel

from .failure import Failure
from .runner import call_once
from .selection import backend_states, find_backend, listing, resolve
from .settings import CAPABILITIES, load_settings
from .tools import search_rows

if TYPE_CHECKING:
    from hermes_agent import Kernel


def _backend(kernel: Kernel, name: str | None, capability: str) -> WebBackend:
    if name:
        return find_backend(kernel, name, "--backend", capability)
    try:
        choice = resolve(kernel, load_settings(kernel), capability)
    except Failure as failure:
        if failure.kind == "not_configured":
            failure.message = (f"no web backend is selected for {capability}: pass --backend "
                               "NAME, or choose one with `hermes config set web.backend NAME`.")
        raise
    return find_backend(kernel, choice.name, choice.key, capability)


def _selected(kernel: Kernel, settings: Any, capability: str) -> dict[str, str]:
    """What ``hermes web status`` shows for ``capability``: the backend that would answer,
    the key that selected it, and why it is not the one that key names."""
    try:
        choice = resolve(kernel, settings, capability)
    except Failure as failure:
        name, key = settings.selection(capability)
        return {"backend": name, "key": key, "note": failure.message if name else ""}
    return {"backend": choice.name, "key": choice.key, "note": choice.note}


def _fail(failure: Failure) -> NoReturn:
    wait = f" (retry after {failure.retry_after:g} s)" if failure.retry_after is not None else ""
    raise click.ClickException(f"[{failure.kind}] {failure.message}{wait}")


@click.group(cls=ListingGroup, default="status")
def web() -> None:
    """Web search and extraction backends (web.backend in config.yaml)."""


@web.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(as_json: bool) -> None:
    """The backend selected for search and for extraction, and every installed backend."""
    kernel = cli_kernel()
    settings = load_settings(kernel)
    data = {"selected": {cap: _selected(kernel, settings, cap) for cap in CAPABILITIES},
            "fallback": settings.fallbacks(""), "installed": backend_states(kernel)}
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    for cap, chosen in data["selected"].items():
        why = chosen["note"] or chosen["key"]  # the note says why another one answers
        click.echo(f"{cap:<8} {chosen['backend'] or '(none)'}" + (f"  ({why})" if why else ""))
    click.echo(f"fallback {', '.join(data['fallback']) or '(none)'}")
    click.echo(listing(kernel))
    for name, state in data["installed"].items():  # why a loaded backend cannot answer
        if state.startswith("unavailable"):
            click.echo(f"  {name}: {state}")
    click.echo("Choose: hermes config set web.backend NAME · try: hermes web search QUERY")


@web.command()
@click.argument("query", nargs=-1, required=True)
@click.option("--backend", "name", help="The backend to use (default: the selected one).")
@click.option("--limit", type=click.IntRange(1, 50), default=5, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def search(query: tuple[str, ...], name: str | None, limit: int, as_json: bool) -> None:
    """Search with a backend directly."""
    kernel = cli_kernel()
    text = " ".join(query)
    try:
        backend = _backend(kernel, name, "search")
        results = call_once(backend, lambda b: search_rows(b.search(text, limit), limit, b.name),
                            load_settings(kernel))
    except Failure as failure:
        _fail(failure)
    if as_json:
        click.echo(json.dumps({"backend": backend.name, "query": text,
                               "results": [r.as_dict() for r in results]}, indent=2))
        return
    click.echo(f"{len(results)} result(s) from {backend.name} for {text!r}")
    for position, hit in enumerate(results, 1):
        click.echo(f"{position}. {hit.title}\n   {hit.url}")
        if hit.snippet:
            click.echo(f"   {hit.snippet[:200]}")


@web.command()
@click.argument("url")
@click.option("--backend", "name", help="The backend to use (default: the selected one).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def extract(url: str, name: str | None, as_json: bool) -> None:
    """Read one page with a backend directly (its content as markdown)."""
    kernel = cli_kernel()
    settings = load_settings(kernel)
    try:
        check_url(url, allow_private=settings.allow_private_networks,
                  deadline=time.monotonic() + settings.timeout)
        backend = _backend(kernel, name, "extract")
        pages = call_once(backend, lambda b: b.extract(
            [url], allow_private_networks=settings.allow_private_networks,
            timeout=settings.timeout), settings)
    except WebError as exc:
        _fail(Failure.from_web_error(exc, ""))
    except Failure as failure:
        _fail(failure)
    page = pages[0] if isinstance(pages, list) and pages else None
    if page is None or page.status != "ok":
        raise click.ClickException(f"{backend.name} could not read {url}: "
                                   f"{page.error if page else 'no page returned'}")
    if as_json:
        click.echo(json.dumps({"backend": backend.name, "page": page.as_dict()}, indent=2))
    else:
        click.echo(f"# {page.title or page.url}  ({backend.name}, {len(page.content)} chars)\n")
        click.echo(page.content)
