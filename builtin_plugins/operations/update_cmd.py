"""``hermes update [--dry-run] [--constraint FILE] [--pre]``: upgrade this distribution and
the plugins installed with pip, with the pip of the interpreter running hermes.

What is upgraded:

- ``hermes-agent-runtime``, unless it is installed from a checkout (an editable install):
  then the checkout is yours to update (``git pull``), and pip leaves it alone;
- the distributions that provide hermes plugins through entry points (``hermes_agent.plugins``,
  ``hermes_agent.memory_providers``) and were installed with pip directly;
- the plugins ``hermes plugins install`` recorded in plugins.lock are updated by
  ``hermes plugins update --all`` afterwards, which shows what each new version may do and
  asks again when it may do more (a bare pip upgrade would skip that).

The project ships no lock file of its own. Constraints: ``--constraint FILE`` (pip's ``-c``),
else ``$HERMES_HOME/constraints.txt`` when it exists; pip's own settings (``PIP_INDEX_URL``,
``PIP_CONSTRAINT``, pip.conf) apply as usual. After the upgrade, ``hermes --version`` must
still run."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from importlib.metadata import Distribution, distributions
from pathlib import Path

import click
from hermes_agent import hermes_home

PLUGIN_GROUPS = ("hermes_agent.plugins", "hermes_agent.memory_providers")
OWN = "hermes-agent-runtime"


def _norm(name: str) -> str:
    import re

    return re.sub(r"[-_.]+", "-", name).lower()


def editable_location(dist: Distribution) -> str | None:
    """The folder of an editable (checkout) install, else None (PEP 610's direct_url.json)."""
    try:
        text = dist.read_text("direct_url.json")
        data = json.loads(text) if text else {}
    except (OSError, ValueError):
        return None
    if isinstance(data, dict) and data.get("dir_info", {}).get("editable"):
        url = str(data.get("url", ""))
        return url.removeprefix("file://") or "?"
    return None


def locked_pip_plugins(home: Path) -> dict[str, str]:
    """plugins.lock's pip-installed plugins: name -> distribution."""
    try:
        data = json.loads((home / "plugins.lock").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    plugins = data.get("plugins") if isinstance(data, dict) else None
    found = {}
    for name, entry in (plugins or {}).items():
        if isinstance(entry, dict) and entry.get("source") == "pip":
            found[str(name)] = str(entry.get("dist") or entry.get("spec") or name)
    return found


def plan(home: Path, constraint: Path | None, pre: bool) -> dict[str, object]:
    """What the update will do: the pip command, what is skipped and why, what runs after."""
    locked = {_norm(d) for d in locked_pip_plugins(home).values()}
    targets: list[str] = []
    skipped: list[str] = []
    found: dict[str, list[Distribution]] = {}
    for dist in distributions():  # one name may be seen twice (a checkout's egg-info too)
        name = dist.metadata["Name"] or ""
        if name and (_norm(name) == OWN
                     or any(ep.group in PLUGIN_GROUPS for ep in dist.entry_points)):
            found.setdefault(name, []).append(dist)
    for name, dists in found.items():
        key = _norm(name)
        where = next((w for w in map(editable_location, dists) if w is not None), None)
        if where is not None:
            skipped.append(f"{name} is installed from a checkout ({where}): update it there "
                           "(`git pull`), pip leaves it alone")
        elif key in locked:
            continue  # `hermes plugins update --all` below
        else:
            targets.append(name)
    targets.sort(key=lambda n: (_norm(n) != OWN, _norm(n)))
    if constraint is None and (home / "constraints.txt").is_file():
        constraint = home / "constraints.txt"
    command = [sys.executable, "-m", "pip", "install", "--upgrade"]
    if pre:
        command.append("--pre")
    if constraint is not None:
        command += ["-c", str(constraint)]
    return {"pip": [*command, *targets] if targets else None, "skipped": skipped,
            "constraint": str(constraint) if constraint else None,
            "plugins_update": ([sys.executable, "-m", "hermes_agent.cli.root", "plugins",
                                "update", "--all"] if locked else None)}


def _show(command: list[str]) -> str:
    return " ".join(shlex.quote(part) for part in command)


@click.command(name="update")
@click.option("--dry-run", is_flag=True, help="Print what would run, change nothing.")
@click.option("-c", "--constraint", type=click.Path(exists=True, dir_okay=False,
              path_type=Path), help="A pip constraints file the upgrade keeps to (default: "
              "$HERMES_HOME/constraints.txt when it exists).")
@click.option("--pre", is_flag=True, help="Allow pre-releases.")
def update(dry_run: bool, constraint: Path | None, pre: bool) -> None:
    """Upgrade hermes (hermes-agent-runtime) and the plugins installed with pip, in the
    environment of the interpreter running hermes; then `hermes plugins update --all` for the
    plugins `hermes plugins install` recorded."""
    home = hermes_home()
    todo = plan(home, constraint, pre)
    for note in todo["skipped"]:  # type: ignore[attr-defined]
        click.echo(f"skipped: {note}")
    if todo["constraint"]:
        click.echo(f"constraints: {todo['constraint']}")
    else:
        click.echo("constraints: none (hermes ships no lock file; pass --constraint FILE or "
                   f"write {home / 'constraints.txt'} to pin versions)")
    steps = [c for c in (todo["pip"], todo["plugins_update"]) if c]
    if not steps:
        click.echo("Nothing to upgrade with pip here.")
        return
    for command in steps:
        click.echo(f"{'would run' if dry_run else 'running'}: {_show(command)}")  # type: ignore[arg-type]
        if dry_run:
            continue
        done = subprocess.run(command)  # type: ignore[arg-type]  # the terminal: pip's output, consent prompts
        if done.returncode:
            raise click.ClickException(f"`{_show(command)}` failed (exit {done.returncode}); "  # type: ignore[arg-type]
                                       "its output above says why")
    if dry_run:
        return
    check = subprocess.run([sys.executable, "-m", "hermes_agent.cli.root", "--version"],
                           capture_output=True, text=True)
    if check.returncode:
        raise click.ClickException(
            f"after the upgrade hermes no longer starts: {check.stderr.strip()[-500:]}. "
            f"Reinstall it: `{sys.executable} -m pip install --force-reinstall {OWN}`")
    click.echo(f"updated: {check.stdout.strip()}")
