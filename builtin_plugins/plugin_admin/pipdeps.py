"""pip installs that keep the `hermes` command working.

Some published plugins declare ``hermes-agent`` (the Hermes Agent distribution) as a
dependency. hermes provides the plugin API (``hermes_agent``) itself, and installing that
distribution would replace the ``hermes`` console script and pull in its own dependencies. Such a
wheel is installed with ``--no-deps`` and its other requirements separately. After every pip
install the ``hermes`` command is checked: it must still run ``hermes_agent.cli.root:main``.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import sysconfig
from pathlib import Path

import click

HOST_DIST = "hermes-agent"
ENTRY = "hermes_agent.cli.root:main"
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def normalize_dist(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    match = _NAME.match(requirement)
    return normalize_dist(match.group(1)) if match else ""


def split_host(requires: list[str]) -> tuple[list[str], list[str]]:
    """(requirements naming hermes-agent, the other requirements pip should install).
    Requirements that apply only to an extra (``; extra == "test"``) are not installed."""
    host, others = [], []
    for requirement in requires:
        marker = requirement.partition(";")[2]
        if requirement_name(requirement) == HOST_DIST:
            host.append(requirement.strip())
        elif not re.search(r"\bextra\s*==", marker):
            others.append(requirement.strip())
    return host, others


def explain_host(dist: str, host: list[str], others: list[str]) -> str:
    rest = (f"its other requirements are installed separately: {', '.join(others)}" if others
            else "it has no other requirements")
    return (f"{dist} declares {', '.join(host)} as a dependency. hermes provides that API itself "
            "(the hermes_agent package), and installing the hermes-agent distribution would "
            "replace this `hermes` command, so it is skipped: the wheel is installed with "
            f"--no-deps and {rest}.")


def hermes_command_problems() -> list[tuple[str, str]]:
    """(distribution or "", problem) for each way `hermes` no longer runs hermes_agent.cli.root:main."""
    from importlib.metadata import entry_points

    importlib.invalidate_caches()
    problems = []
    for ep in entry_points(group="console_scripts", name="hermes"):
        if ep.value.replace(" ", "") != ENTRY:
            dist = ep.dist.metadata["Name"] if ep.dist is not None else ""
            problems.append((dist, f"{dist or 'a distribution'} installs a `hermes` command "
                                   f"running {ep.value}"))
    script = Path(sysconfig.get_path("scripts")) / "hermes"
    if os.name != "nt" and script.is_file():
        if ENTRY.partition(":")[0] not in script.read_text(encoding="utf-8", errors="replace"):
            problems.append(("", f"{script} no longer runs {ENTRY}"))
    return problems


def own_distribution() -> str:
    from importlib.metadata import packages_distributions

    names = [n for n in packages_distributions().get("hermes_agent", [])
             if normalize_dist(n) != HOST_DIST]
    return names[0] if names else "hermes-agent-runtime"


def check_hermes_command(what: str) -> None:
    """Raise with the fix when installing ``what`` replaced the `hermes` command."""
    problems = hermes_command_problems()
    if not problems:
        return
    offenders = sorted({dist for dist, _ in problems if dist})
    pip = f"{sys.executable} -m pip"
    steps = [f"`{pip} uninstall -y {' '.join(offenders)}`"] if offenders else []
    steps.append(f"reinstall hermes the way you installed it (for example `{pip} install "
                 f"--force-reinstall --no-deps {own_distribution()}`)")
    raise click.ClickException(
        f"installing {what} replaced the `hermes` command: "
        f"{'; '.join(text for _, text in problems)}. The plugin was not installed. To repair: "
        f"{', then '.join(steps)}. Until then `{sys.executable} -m hermes_agent.cli.root` runs hermes.")
