"""The interactive chat's question about an untrusted project folder (docs/projects.md).

Asked once per folder, the first time ``hermes chat`` runs at a terminal in a folder that has
context files or project plugins and that ``projects.trusted`` does not cover: yes saves the
folder as trusted (and the chat starts on a kernel that reads it), no goes on untrusted for
this session: its files reach the model as data and a turn that read them asks before it
acts outside. Later chats there print one line instead. The folders asked about are kept in
``$HERMES_HOME/trust_asked`` (one a line). ``chat -q``, ``--json``, the gateway and cron never
ask, so they never trust a folder by themselves. The home folder and ``/`` are never offered:
only ``hermes trust PATH`` naming them trusts them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
from hermes_agent import ConfigError, ProjectTrust, write_atomic

from .. import context_files

if TYPE_CHECKING:
    from hermes_agent import Kernel

ASKED_FILE = "trust_asked"


def what_needs_trust(kernel: Kernel, cwd: Path) -> list[str]:
    """The context files and project plugins an untrusted ``cwd`` keeps from the model."""
    found = [name for name, _ in context_files.find(cwd)]
    plugins = sorted(s.name for s in kernel.plugins.values() if s.code == "untrusted_project")
    return found + [f"project plugin {name}" for name in plugins]


def ask_about_trust(kernel: Kernel) -> Kernel:
    """Ask (or remind) when the working folder is untrusted and has something to trust;
    returns the kernel the chat goes on with (a new one after the folder was trusted)."""
    from hermes_agent.kits.cli import reload_cli_kernel

    cwd = Path(kernel.cwd or Path.cwd()).resolve()
    trust = ProjectTrust(kernel.config, kernel.env)
    if trust.covers(cwd):
        return kernel
    items = what_needs_trust(kernel, cwd)
    if not items:
        return kernel
    folder = trust.folder_to_trust(cwd)
    listing = ", ".join(items) or "its files"
    if trust.never_implicit(folder):
        click.echo(f"note: {folder} is not trusted and hermes never trusts it by itself, so "
                   f"{listing} stay data for the model, never instructions (`hermes trust "
                   f"{folder}` trusts that folder alone)", err=True)
        return kernel
    asked = _asked(kernel.home)
    if str(folder) in asked:
        click.echo(f"note: {folder} is not trusted: {listing} are shown to the model as data, "
                   "not followed as instructions (`hermes trust` trusts it)", err=True)
        return kernel
    has = f"It has {listing}. " if items else ""
    click.echo(f"This folder is not trusted: {folder}\n{has}Trusted, its context files are "
               "instructions for the agent and its project plugins run as code. Untrusted, "
               "its files are shown to the model as data only, a turn that read them asks "
               "you before it reaches the network or writes memory, and no project plugin "
               "loads.")
    yes = click.confirm("Trust this folder (saved in config.yaml)? "
                        "No continues untrusted for this session", default=False)
    _remember(kernel.home, asked, folder)  # not after Ctrl-C / Ctrl-D: asked again next time
    if not yes:
        click.echo(f"Continuing untrusted; `hermes trust {folder}` trusts it later.")
        return kernel
    try:
        trust.add(folder)
    except (ConfigError, OSError) as exc:
        click.echo(f"not trusted: {exc}; continuing untrusted", err=True)
        return kernel
    click.echo(f"Trusted {folder} (`hermes trust --revoke {folder}` undoes it).")
    return reload_cli_kernel()  # its plugins and prompt see the new setting


def _asked(home: Path) -> list[str]:
    try:
        return [line for line in (home / ASKED_FILE).read_text(encoding="utf-8").splitlines()
                if line]
    except OSError:
        return []


def _remember(home: Path, asked: list[str], folder: Path) -> None:
    try:
        write_atomic(home / ASKED_FILE, "".join(f"{line}\n" for line in [*asked, str(folder)]))
    except OSError:
        pass  # asked again next time: no harm
