"""plugin.yaml as plain data: the :class:`Manifest` of one plugin, and where its file is.

``kind`` comes from the manifest (default ``standalone``), never guessed from source text.
Reading and validating the file is :mod:`.manifest_read`'s (pydantic models in
:mod:`.validation`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


KINDS = ("standalone", "backend", "exclusive", "platform", "model-provider")
MANIFEST_NAMES = ("plugin.yaml", "plugin.yml")
BUILTIN_ONLY = ("essential", "config_sections", "slots", "legacy_config")
CARDINALITIES = ("one", "many")


@dataclass(frozen=True)
class EnvRequirement:
    """One entry of ``requires_env`` / ``optional_env``."""

    name: str
    description: str = ""
    url: str = ""
    secret: bool = False


@dataclass(frozen=True)
class CliDeclaration:
    """A CLI command declared in plugin.yaml: ``entry`` is imported only when it runs."""

    entry: str
    help: str = ""


@dataclass(frozen=True)
class SlotDeclaration:
    """A provider slot a builtin plugin declares (``slots:`` in its plugin.yaml): the kernel
    keeps each slot's providers by name; the declaring plugin says how one is chosen."""

    config_key: str = ""  # the config.yaml key selecting the active provider ("": none)
    cardinality: str = "one"  # one of CARDINALITIES: one active provider, or several at once
    default: str = ""  # the provider selected when config.yaml names none ("": none)
    label: str = ""  # how messages name a provider of the slot ("memory provider")
    enables: bool = False  # naming a plugin in config_key enables it, whatever its kind


@dataclass(frozen=True)
class Manifest:
    """A validated plugin.yaml, as plain data (``validation.ManifestModel`` validates it)."""

    name: str
    version: str = ""
    description: str = ""
    author: str = ""
    kind: str = "standalone"
    requires_env: tuple[EnvRequirement, ...] = ()
    optional_env: tuple[EnvRequirement, ...] = ()
    provides_tools: tuple[str, ...] = ()
    provides_hooks: tuple[str, ...] = ()
    manifest_version: int = 1
    license: str = ""
    homepage: str = ""
    tags: tuple[str, ...] = ()
    requires_hermes: str = ""
    python_dependencies: tuple[str, ...] = ()
    label: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    essential: bool = False  # honoured for builtin plugins only
    cli_commands: dict[str, CliDeclaration] = field(default_factory=dict)
    config_sections: dict[str, str] = field(default_factory=dict)  # builtin plugins only
    slots: dict[str, SlotDeclaration] = field(default_factory=dict)  # builtin plugins only
    legacy_config: tuple[str, ...] = ()  # builtin only: config.yaml keys kept as written
    synthesized: bool = False  # built from package metadata, no plugin.yaml

    @classmethod
    def from_data(cls, data: dict[str, Any], synthesized: bool = False) -> "Manifest":
        plain = dict(data, synthesized=synthesized)
        for key in ("provides_tools", "provides_hooks", "tags", "python_dependencies",
                    "legacy_config"):
            plain[key] = tuple(plain.get(key, ()))
        for key in ("requires_env", "optional_env"):
            plain[key] = tuple(EnvRequirement(i) if isinstance(i, str) else EnvRequirement(
                i["name"], i.get("description", ""), i.get("url", ""), bool(i.get("secret", False)))
                for i in data.get(key, ()))
        plain["cli_commands"] = {name: CliDeclaration(**spec)
                                 for name, spec in (data.get("cli_commands") or {}).items()}
        plain["slots"] = {name: SlotDeclaration(**spec)
                          for name, spec in (data.get("slots") or {}).items()}
        return cls(**plain)


def builtin_only_warnings(manifest: Manifest | None, source: str) -> list[str]:
    """Keys only builtin plugins may use, set in another plugin's manifest (then ignored)."""
    if manifest is None or source == "builtin":
        return []
    return [f"'{key}:' is honoured for builtin plugins only and is ignored" + (
        " (keep a plugin's settings under plugins.entries.<name> in config.yaml)"
        if key == "config_sections" else "") for key in BUILTIN_ONLY if getattr(manifest, key)]


def find_manifest(directory: Path) -> Path | None:
    """``directory``'s manifest file, or None."""
    return next((directory / n for n in MANIFEST_NAMES if (directory / n).is_file()), None)
