"""`hermes plugins install SPEC`: fetch, validate, show, ask, then place everything at once.

Nothing is placed before the manifest validated and the user answered. Placing the files (or
the pip install), the .env values, the config entry and the lock entry happen inside one
:class:`Transaction`: if any step fails, all of them are undone.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from shlex import quote
from typing import Any

import click
from hermes_agent import Kernel, load_config, private_dir, write_config_value
from hermes_agent.kits.files import set_env_values
from hermes_agent.kits.secrets import mask_url

from .envfile import prompt_missing_env
from .lockfile import Transaction, make_entry, read_lock, write_lock
from .pipdeps import check_hermes_command, explain_host, normalize_dist, split_host
from .sources import Candidate, Source, classify, fetch, pip, run

COPY_IGNORE = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".pytest_cache")


def describe(candidate: Candidate) -> list[str]:
    """What the plugin declares, in the words shown before the user is asked anything."""
    m = candidate.manifest
    where = {"pip": f"pip distribution {candidate.dist} {candidate.dist_version}",
             "git": f"git {mask_url(candidate.source.location)}"
             + (f" @ {candidate.commit[:12]}" if candidate.commit else ""),
             "path": f"folder {candidate.directory}"}[candidate.source.kind]
    lines = [f"Plugin {candidate.name} {m.version or ''}".rstrip() + f" ({where})"]
    if m.description:
        lines.append(f"  {m.description}")
    lines.append(f"  kind:     {m.kind}")
    lines.append(f"  tools:    {', '.join(m.provides_tools) or 'none declared'}")
    lines.append(f"  hooks:    {', '.join(m.provides_hooks) or 'none declared'}")
    if m.requires_env:
        lines.append(f"  env vars: {', '.join(e.name for e in m.requires_env)} (required)")
    if m.optional_env:
        lines.append(f"  optional: {', '.join(e.name for e in m.optional_env)}")
    if m.python_dependencies:
        lines.append(f"  python:   {', '.join(m.python_dependencies)}")
    if m.synthesized:
        lines.append("  (no plugin.yaml in the package: capabilities are not declared)")
    lines.extend(f"  warning: {w}" for w in candidate.warnings)
    return lines


def check_clash(kernel: Kernel, candidate: Candidate) -> None:
    existing = kernel.discover().get(candidate.name)
    locked = read_lock(kernel.home).get(candidate.name)
    if locked is not None:
        locked.fields("install over")  # a bad entry is refused with its fix
    dest = kernel.home / "plugins" / candidate.name
    if existing is None and locked is None and candidate.directory is not None and (
            dest.exists() or dest.is_symlink()):
        raise click.ClickException(f"{dest} already exists and is not a plugin (no plugin.yaml); "
                                   "move it out of the way, then install again")
    if existing is None and locked is None:
        return
    same_dist = (existing is not None and existing.entry_point is not None and candidate.dist
                 and normalize_dist(existing.entry_point.dist_name) == normalize_dist(candidate.dist))
    if locked is not None or same_dist or (existing is not None and existing.source == "user"):
        raise click.ClickException(
            f"a plugin named {candidate.name!r} is already installed"
            + (f" ({existing.location})" if existing else "")
            + f"; run `hermes plugins update {quote(candidate.name)}` to change it, or "
            f"`hermes plugins remove {quote(candidate.name)}` first")
    assert existing is not None
    reserved = " (builtin names are reserved)" if existing.source == "builtin" else ""
    raise click.ClickException(
        f"the name {candidate.name!r} clashes with the {existing.source} plugin at "
        f"{existing.location}{reserved}; rename the new plugin in its plugin.yaml")


def enable_in_config(kernel: Kernel, name: str) -> None:
    """Add ``name`` to plugins.enabled and take it out of plugins.disabled (other keys kept)."""
    config = load_config(kernel.home)  # re-read: an earlier step may have written it
    disabled = [n for n in config.plugins_disabled if n != name]
    if disabled != config.plugins_disabled:
        write_config_value(kernel.home, "plugins.disabled", disabled)
    enabled = list(config.plugins_enabled or [])
    if name not in enabled:
        write_config_value(kernel.home, "plugins.enabled", [*enabled, name])


def place_directory(home: Path, candidate: Candidate, txn: Transaction) -> Path:
    """Copy the plugin folder next to its destination, then rename it into place."""
    assert candidate.directory is not None
    plugins = private_dir(home / "plugins")
    dest = plugins / candidate.name
    staging = Path(tempfile.mkdtemp(prefix=f".staging-{candidate.name}-", dir=plugins))
    try:
        shutil.copytree(candidate.directory, staging / "tree", ignore=COPY_IGNORE)
        os.replace(staging / "tree", dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    txn.placed(dest)
    return dest


def progress(text: str) -> None:
    """A slow step starts (pip, git): say so on stderr, so stdout stays the command's own."""
    click.echo(f"{text}…", err=True)


def pip_install(candidate: Candidate, txn: Transaction, *extra: str) -> None:
    """pip-install the candidate's wheel; a wheel that depends on hermes-agent is installed
    without it (see pipdeps). Afterwards `hermes` must still be this hermes."""
    assert candidate.wheel is not None
    dist, what = candidate.dist, f"pip install {candidate.source.spec}"
    host, others = split_host(candidate.requires)
    if host:
        click.echo(explain_host(f"{dist} {candidate.dist_version}", host, others))
        extra = (*extra, "--no-deps")
    progress(f"Installing {dist} {candidate.dist_version} with pip")
    run(pip("install", "-q", *extra, str(candidate.wheel)), what)
    txn.on_failure(lambda: run(pip("uninstall", "-y", "-q", dist), f"pip uninstall {dist}"))
    if host and others:
        progress(f"Installing {', '.join(others)} (for {dist}) with pip")
        run(pip("install", "-q", *others), f"pip install {' '.join(others)} (for {dist})")
    check_hermes_command(f"{dist} {candidate.dist_version}")


def confirm(question: str, answer: bool | None, no_input: bool) -> bool:
    if answer is not None:
        return answer
    if no_input:
        return False
    from hermes_agent.kits.cli import confirm_at_terminal

    return confirm_at_terminal(question, "pass --enable to install and enable it, or "
                               "--no-enable to install it switched off")


def install(kernel: Kernel, spec: str, *, enable: bool | None, no_input: bool,
            allow_build: bool = False) -> list[str]:
    """Install every plugin ``spec`` holds; returns their names."""
    source = classify(spec)
    scratch = Path(tempfile.mkdtemp(prefix="hermes-install-"))
    try:
        if source.kind != "path":  # pip downloads (or builds) a wheel, git clones
            tool = "git" if source.kind == "git" else "pip"
            progress(f"Fetching {mask_url(spec)} with {tool}")
        candidates = fetch(source, scratch, allow_build=allow_build)
        for candidate in candidates:
            check_clash(kernel, candidate)
        for candidate in candidates:
            click.echo("\n".join(describe(candidate)))
        names = [c.name for c in candidates]
        turn_on = confirm(f"Enable {', '.join(names)} now?", enable, no_input)
        env_values: dict[str, str] = {}
        for candidate in candidates:
            env_values.update(prompt_missing_env(candidate.manifest.requires_env,
                                                 {**kernel.env, **env_values},
                                                 kernel.home / ".env", no_input))
        with Transaction(kernel.home) as txn:
            _apply(kernel, source, candidates, txn, env_values, turn_on)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for candidate in candidates:
        click.echo(f"✓ Installed {candidate.name} {candidate.manifest.version}".rstrip()
                   + f" (source: {source.kind})")
        if turn_on:
            click.echo(f"  Enabled: it loads in the next session. Check it with "
                       f"`hermes plugins doctor {quote(candidate.name)}`.")
        else:
            click.echo(f"  Not enabled. Turn it on with `hermes plugins enable {quote(candidate.name)}`.")
    return names


def _apply(kernel: Kernel, source: Source, candidates: list[Candidate], txn: Transaction,
           env_values: dict[str, str], turn_on: bool) -> None:
    entries: dict[str, dict[str, Any]] = {}
    if source.kind == "pip":
        pip_install(candidates[0], txn)
    for candidate in candidates:
        location: dict[str, Any] = {}
        if candidate.directory is not None:
            location["path"] = str(place_directory(kernel.home, candidate, txn))
        entries[candidate.name] = make_entry(source=source.kind, spec=source.spec,
                                             manifest=candidate.manifest,
                                             files_digest=candidate.files_digest,
                                             **candidate.lock_extra(), **location)
    set_env_values(kernel.home / ".env", env_values)
    if turn_on:
        for candidate in candidates:
            enable_in_config(kernel, candidate.name)
    write_lock(kernel.home, read_lock(kernel.home), entries)
