"""``hermes mcp list | add | remove | test``: the servers under ``mcp_servers`` in
config.yaml, written with the round-trip editor (comments and order kept), and a server
started once to show its tools and their schemas."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from hermes_agent import HermesError, write_config_value
from hermes_agent.kits.text import plural, table
from hermes_agent.kits.cli import ListingGroup, cli_kernel

from .settings import INSTALL_HINT, ServerSettings, server_settings

if TYPE_CHECKING:
    from hermes_agent import Kernel

_NAME = re.compile(r"^[A-Za-z0-9_-]+\Z")


def _pairs(values: tuple[str, ...], option: str) -> dict[str, str]:
    found = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{value!r} is not KEY=VALUE", param_hint=option)
        found[key] = text
    return found


def _last_status(kernel: Kernel) -> dict[str, Any]:
    path = Path(kernel.home) / "plugin-data" / "mcp" / "status.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _find(kernel: Kernel, name: str) -> ServerSettings:
    for settings in server_settings(kernel.config):
        if settings.name == name:
            return settings
    known = ", ".join(s.name for s in server_settings(kernel.config)) or "(none)"
    raise click.ClickException(f"no MCP server {name!r} in mcp_servers (configured: {known}); "
                               f"add one with `hermes mcp add {name} --command CMD` or "
                               "`--url URL`")


@click.group(cls=ListingGroup, default="list")
def mcp() -> None:
    """MCP servers whose tools the agent gets (mcp_servers in config.yaml)."""


@mcp.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_servers(as_json: bool) -> None:
    """The configured servers: transport, enabled, and the tools and name clashes seen when
    each last started (`hermes mcp test NAME` starts one now)."""
    kernel = cli_kernel(boot=False)
    last = _last_status(kernel)
    rows, data = [], {}
    for s in server_settings(kernel.config):
        seen = last.get(s.name) or {}
        data[s.name] = {"transport": s.kind, "enabled": s.enabled, "target": s.target,
                        "problem": s.problem, "tools": seen.get("tools"),
                        "clashes": seen.get("clashes", []), "warnings": seen.get("warnings", []),
                        "error": seen.get("error", "")}
        tools = "?" if seen.get("tools") is None else str(len(seen["tools"]))
        rows.append((s.name, s.kind, "yes" if s.enabled else "no", tools, s.target))
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    if not rows:
        click.echo("No MCP servers configured. Add one with `hermes mcp add NAME --command CMD "
                   "[--arg ARG ...]` or `hermes mcp add NAME --url URL`.")
        return
    for line in table(("NAME", "TRANSPORT", "ENABLED", "TOOLS", "TARGET"), rows):
        click.echo(line)
    for name, entry in data.items():
        for problem in [entry["problem"], entry["error"], *entry["clashes"],
                        *entry["warnings"]]:
            if problem:
                click.echo(f"  {name}: {problem}")


@mcp.command()
@click.argument("name")
@click.option("--command", "command", help="Start a stdio server with this program.")
@click.option("--arg", "args", multiple=True, help="An argument of the command (repeat).")
@click.option("--env", "env", multiple=True, help="KEY=VALUE for the server's environment "
              "(write ${VAR} to take a secret from the environment or .env).")
@click.option("--cwd", default="", help="The stdio server's working directory.")
@click.option("--url", default="", help="A streamable-HTTP (or SSE) server's URL.")
@click.option("--header", "headers", multiple=True, help="KEY=VALUE HTTP header (repeat).")
@click.option("--sse", is_flag=True, help="The URL speaks the older SSE transport.")
@click.option("--timeout", type=float, default=None, help="Seconds one call may take.")
def add(name: str, command: str | None, args: tuple[str, ...], env: tuple[str, ...], cwd: str,
        url: str, headers: tuple[str, ...], sse: bool, timeout: float | None) -> None:
    """Add (or replace) a server in config.yaml."""
    if not _NAME.match(name):
        raise click.BadParameter("use letters, digits, '-' and '_'", param_hint="NAME")
    if bool(command) == bool(url):
        raise click.UsageError("give either --command CMD (a stdio server) or --url URL")
    entry: dict[str, Any]
    if command:
        entry = {"command": command, "args": list(args)}
        if env:
            entry["env"] = _pairs(env, "--env")
        if cwd:
            entry["cwd"] = cwd
    else:
        entry = {"url": url}
        if headers:
            entry["headers"] = _pairs(headers, "--header")
        if sse:
            entry["transport"] = "sse"
    if timeout is not None:
        entry["timeout"] = timeout
    kernel = cli_kernel(boot=False)
    try:
        write_config_value(Path(kernel.home), f"mcp_servers.{name}", entry)
    except HermesError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"Added MCP server {name!r}; its tools are offered from the next session on "
               f"as toolset mcp-{name}. Try it with `hermes mcp test {name}`.")


@mcp.command()
@click.argument("name")
def remove(name: str) -> None:
    """Remove a server from config.yaml."""
    kernel = cli_kernel(boot=False)
    _find(kernel, name)
    write_config_value(Path(kernel.home), f"mcp_servers.{name}", None, unset=True)
    click.echo(f"Removed MCP server {name!r}.")


@mcp.command()
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def test(name: str, as_json: bool) -> None:
    """Start one server, list its tools with their schemas (and its prompts and resources),
    then stop it; exits 1 with the error when it fails."""
    from .manager import McpManager, sdk_installed

    kernel = cli_kernel()
    settings = _find(kernel, name)
    if settings.problem:
        raise click.ClickException(settings.problem)
    if not sdk_installed():
        raise click.ClickException(INSTALL_HINT)
    settings.enabled = True  # a disabled server can be tried too
    manager = McpManager(kernel, settings=[settings], lazy=False)  # start it, cache or not
    try:
        click.echo(f"Connecting to MCP server {name!r} ({settings.target})…", err=True)
        manager.refresh()
        conn = manager.connections[name]
        if conn.state != "ready":
            raise click.ClickException(f"MCP server {name!r} {conn.error}")
        report = _report(manager, name)
    finally:
        manager.close()
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    click.echo(f"{name}: {settings.kind} {settings.target}: "
               f"{plural(len(report['tools']), 'tool')} offered")
    for tool in report["tools"]:
        click.echo(f"  {tool['name']}: {tool['server_description']}")
        click.echo("    " + json.dumps(tool["parameters"], ensure_ascii=False))
    for clash in report["clashes"]:
        click.echo(f"  clash: {clash}")
    for warning in report["warnings"]:
        click.echo(f"  warning: {warning}")
    for kind in ("prompts", "resources"):
        if report[kind]:
            click.echo(f"  {kind}: {', '.join(report[kind])}")


def _report(manager: Any, name: str) -> dict[str, Any]:
    from .settings import tool_name

    conn = manager.connections[name]
    schemas = manager.registered.get(name, {})
    limit = conn.settings.limits.max_description_chars
    own = {tool_name(name, t.name): (t.description or "").strip()[:limit] for t in conn.tools}
    report: dict[str, Any] = {  # description: as the model gets it (fenced)
        "tools": [{"name": n, "description": s.get("description", ""),
                   "server_description": own.get(n, s.get("description", "")),
                   "parameters": s.get("parameters", {})} for n, s in sorted(schemas.items())],
        "clashes": manager.clashes.get(name, []), "warnings": manager.warnings.get(name, []),
        "prompts": [], "resources": []}
    timeout = conn.settings.timeout
    if "prompts" in conn.has:
        listed = manager.runtime.run(conn.list_prompts(), timeout)
        report["prompts"] = [p.name for p in listed.prompts]
    if "resources" in conn.has:
        listed = manager.runtime.run(conn.list_resources(), timeout)
        report["resources"] = [str(r.uri) for r in listed.resources]
    return report
