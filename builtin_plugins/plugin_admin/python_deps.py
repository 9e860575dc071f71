"""A plugin's ``python_dependencies`` (plugin.yaml) that this environment does not satisfy, and
the pip command that installs them. A bundled plugin's libraries are an extra of the package,
not installed with it; a pip-installed plugin's come with it."""

from __future__ import annotations

import shlex
import sys
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement


def missing_python_dependencies(manifest: Any) -> list[str]:
    """The requirements of ``manifest.python_dependencies`` not installed (or at a version
    outside the one asked for), as written; unparsable ones are skipped."""
    missing = []
    for spec in getattr(manifest, "python_dependencies", ()) or ():
        try:
            requirement = Requirement(spec)
        except InvalidRequirement:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        try:
            installed = version(requirement.name)
        except PackageNotFoundError:
            missing.append(spec)
            continue
        if not requirement.specifier.contains(installed, prereleases=True):
            missing.append(spec)
    return missing


def pip_command(requirements: list[str]) -> str:
    """The command that installs ``requirements`` into the interpreter running hermes."""
    return " ".join([shlex.quote(sys.executable), "-m", "pip", "install",
                     *map(shlex.quote, requirements)])
