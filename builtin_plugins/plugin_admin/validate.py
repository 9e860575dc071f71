"""`hermes plugins validate PATH`: check a plugin under development without enabling it.

PATH is a plugin folder (holding plugin.yaml), a plugin.yaml file, or a pip project whose
pyproject.toml names the plugin in ``[project.entry-points."hermes_agent.plugins"]``. The
manifest is validated, then the plugin is loaded into a throw-away kernel (its own temporary
HERMES_HOME; the user's config is not read or written) and what it registers is compared
with what plugin.yaml declares.
"""

from __future__ import annotations

import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from hermes_agent import MANIFEST_NAMES, Kernel, PluginRecord, find_manifest, read_manifest

from .doctor import _mismatch, first_line


@dataclass
class Validation:
    path: str
    name: str = ""
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    hooks: list[str] = field(default_factory=list)
    providers: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "ok": self.ok}


def locate(path: Path) -> tuple[Path, Path | None]:
    """The plugin folder, and the folder to put on sys.path (pip projects) or None."""
    path = path.expanduser().resolve()
    if path.is_file() and path.name in MANIFEST_NAMES:
        return path.parent, None
    if not path.is_dir():
        raise click.ClickException(f"{path} does not exist; give a plugin folder, its plugin.yaml "
                                   "or a project folder with pyproject.toml")
    if find_manifest(path) is not None:
        return path, None
    pyproject = path / "pyproject.toml"
    if pyproject.is_file():
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        eps = data.get("project", {}).get("entry-points", {})
        targets = {**eps.get("hermes_agent.plugins", {}), **eps.get("hermes_agent.memory_providers", {})}
        for target in targets.values():
            module = str(target).split(":")[0].strip().replace(".", "/")
            for root in (path / "src", path):
                if find_manifest(root / module) is not None:
                    return root / module, root
        if not targets:
            raise click.ClickException(f"{pyproject} declares no hermes_agent.plugins entry point; "
                                       'add [project.entry-points."hermes_agent.plugins"]')
    raise click.ClickException(f"no plugin.yaml found in {path}; a plugin folder holds plugin.yaml "
                               "next to __init__.py")


def validate(path: Path) -> Validation:
    directory, import_root = locate(path)
    result = Validation(str(directory))
    manifest_path = find_manifest(directory) or directory / MANIFEST_NAMES[0]
    read = read_manifest(manifest_path, default_name=directory.name)
    result.warnings.extend(read.warnings)
    if read.error is not None or read.manifest is None:
        result.errors.extend(str(read.error).splitlines())
        return result
    manifest = read.manifest
    result.name = manifest.name
    if not (directory / "__init__.py").is_file():
        result.errors.append(f"{directory} has no __init__.py (a plugin is a Python package with "
                             "register(ctx) or @hookimpl functions)")
        return result
    with tempfile.TemporaryDirectory(prefix="hermes-validate-") as home:
        kernel = Kernel(Path(home), env={"HERMES_HOME": home}, entry_points=False, builtins=False)
        record = PluginRecord(manifest.name, "user", manifest, path=directory)
        if import_root is not None:
            sys.path.insert(0, str(import_root))
        try:
            status = kernel.load(record)
        finally:
            kernel.close()  # the plugin is stopped (on_shutdown) as soon as it was checked
            if import_root is not None:
                sys.path.remove(str(import_root))
    if status.state != "loaded":
        result.errors.append(first_line(status.reason))
        return result
    result.tools, result.hooks, result.providers = status.tools, status.hooks, status.providers
    for reason in _mismatch(status):
        result.errors.append(f"{reason.message} ({reason.fix})")
    result.warnings.extend(w for w in status.warnings if "declare" not in w)
    return result


def format_validation(result: Validation) -> str:
    lines = [f"{'✓' if result.ok else '✗'} {result.name or result.path} ({result.path})"]
    for label in ("tools", "hooks", "providers"):
        values = getattr(result, label)
        if values:
            lines.append(f"  {label}: {', '.join(values)}")
    lines.extend(f"  error: {e}" for e in result.errors)
    lines.extend(f"  warning: {w}" for w in result.warnings)
    return "\n".join(lines)
