"""Layered configuration: defaults < $HERMES_HOME/config.yaml < ``${VAR}`` expansion (the
environment over $HERMES_HOME/.env) < runtime overrides, validated with pydantic (the
kernel's keys plus the sections and slots builtin plugins declare). Keys an earlier version
used (``legacy_config:`` of a builtin plugin; the compat plugin lists the original's) are kept
with a note; an unknown key close to a known one is reported as a likely typo.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from .errors import ConfigError
from .home import ValidationCache, hermes_home
from .dotenv import read_env_file
from .seal import EXPORTED_FROM_DOTENV
from .manifest import SlotDeclaration
from .slots import declared_slots, slot_defaults

CONFIG_FILE = "config.yaml"
#: The kernel's own keys; the slots' selections and the sections plugins own add theirs.
DEFAULTS: dict[str, Any] = {"plugins": {"enabled": None, "disabled": [], "entries": {}},
                            "projects": {"trusted": []}}
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class Declared(NamedTuple):
    """What builtin plugins declare in their plugin.yaml about config.yaml."""

    sections: dict[str, str]  # config_sections: key -> "module:attr" of its model
    slots: dict[str, SlotDeclaration]  # slots: their selections are config keys
    kept: tuple[str, ...]  # legacy_config: keys of an earlier version, kept as written
    owners: dict[str, str]  # section holding a slot's selection -> the declaring plugin's module


class Config:
    """The validated, merged configuration. ``get("a.b")`` reads dotted keys."""

    def __init__(self, data: dict[str, Any], home: Path, warnings: list[str] | None = None,
                 notes: list[str] | None = None,
                 slots: Mapping[str, SlotDeclaration] | None = None):
        self.data = data
        self.home = home
        self.slots = dict(slots or {})  # the provider slots builtin plugins declare, by name
        self.notes = notes or []  # informational (keys kept for Hermes Agent 0.19)
        self.startup_warnings = warnings or []  # shown once by every command
        self.warnings = [*self.notes, *self.startup_warnings]

    @property
    def path(self) -> Path:
        return self.home / CONFIG_FILE

    def get(self, dotted: str, default: Any = None) -> Any:
        node: Any = self.data
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node

    @property
    def plugins_enabled(self) -> list[str] | None:
        return self.get("plugins.enabled")

    @property
    def plugins_disabled(self) -> list[str]:
        return self.get("plugins.disabled") or []

    def plugin_entry(self, *names: str) -> dict[str, Any]:
        entries = self.get("plugins.entries") or {}
        return next((entries[name] or {} for name in names if name in entries), {})


# What this process put into os.environ from a .env file: name -> value (see effective_env;
# the cache key's location ignores these, see seal.cache_key_path).
_EXPORTED_FROM_DOTENV = EXPORTED_FROM_DOTENV


def effective_env(home: Path, env: Mapping[str, str] | None) -> tuple[dict[str, str], frozenset[str]]:
    """``env`` (default: the process environment) over $HERMES_HOME/.env, and the names whose
    value came from .env. For the process environment the .env values are also put into
    ``os.environ`` (plugins read their keys there); the names keep them apart, so commands the
    agent runs do not inherit them (see ``hermes_agent.kits.secrets.command_env``)."""
    dotenv = read_env_file(home / ".env")
    if env is not None:
        return {**dotenv, **env}, frozenset(n for n in dotenv if n not in env)
    for key, value in dotenv.items():
        if key not in os.environ:
            os.environ[key] = value
            _EXPORTED_FROM_DOTENV[key] = value
    return dict(os.environ), frozenset(n for n in dotenv if n in _EXPORTED_FROM_DOTENV
                                       and os.environ.get(n) == _EXPORTED_FROM_DOTENV[n])


def read_raw_config(home: Path, cache: ValidationCache | None = None) -> dict[str, Any]:
    """The user's config.yaml as written ({} when missing); with a ``cache``, a file parsed
    before is not parsed (nor PyYAML imported) again."""
    path = home / CONFIG_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc}", path=str(path)) from exc
    key = ValidationCache.key("config-yaml", text.encode()) if cache else ""
    hit = cache.get(key) if cache else None
    if isinstance(hit, dict):
        return hit
    data = parse_config_text(text, path)
    if cache and json.loads(json.dumps(data, default=str)) == data:  # JSON keeps it exactly
        cache.put(key, data)
    return data


def parse_config_text(text: str, path: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "somewhere"
        raise ConfigError(f"{path} is not valid YAML ({where}: {getattr(exc, 'problem', exc)}); "
                          "fix the indentation or quoting there", path=str(path)) from exc
    if data is not None and not isinstance(data, dict):
        raise ConfigError(f"{path} must be a mapping of settings (key: value), not "
                          f"{type(data).__name__}", path=str(path))
    return data or {}


def deep_merge(base: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def expand_vars(value: Any, env: Mapping[str, str], where: str = "",
                missing: list[str] | None = None) -> Any:
    """Replace ``${VAR}`` / ``${VAR:-default}`` in every string; unset names stay as written."""
    def sub(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        if missing is not None:
            missing.append(f"{where}: ${{{name}}} is not set (export it or add it to .env)")
        return match.group(0)

    if isinstance(value, str):
        return _VAR.sub(sub, value)
    if isinstance(value, dict):
        return {k: expand_vars(v, env, f"{where}.{k}" if where else str(k), missing)
                for k, v in value.items()}
    if isinstance(value, list):
        return [expand_vars(v, env, f"{where}[{i}]", missing) for i, v in enumerate(value)]
    return value


def set_dotted(data: dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``a.b.c`` in ``data``, creating the parent mappings as needed."""
    *parents, leaf = dotted.split(".")
    node = data
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[leaf] = value


def load_config(home: Path | None = None, overrides: Mapping[str, Any] | None = None,
                env: Mapping[str, str] | None = None, cache: ValidationCache | None = None,
                raw: dict[str, Any] | None = None) -> Config:
    """Load, merge, expand and validate the configuration. Raises :class:`ConfigError`."""
    home = hermes_home(env) if home is None else home
    declared = builtin_declarations(cache)
    hit, missing = check_config(home, read_raw_config(home, cache) if raw is None else raw,
                                overrides, env, cache, declared)
    if "error" in hit:
        raise ConfigError(f"{home / CONFIG_FILE} has invalid settings:", hit["error"],
                          path=str(home / CONFIG_FILE))
    return Config(hit["data"], home, [*hit["warnings"], *missing], hit.get("notes"),
                  declared.slots)


def check_config(home: Path, user: dict[str, Any], overrides: Mapping[str, Any] | None = None,
                 env: Mapping[str, str] | None = None, cache: ValidationCache | None = None,
                 declared: Declared | None = None
                 ) -> tuple[dict[str, Any], list[str]]:
    """Validate ``user`` (config.yaml's content) over the defaults, without raising:
    ``({"error": [...]} | {"data", "warnings", "notes", "unknown"}, unset ${VAR} warnings)``;
    ``unknown`` maps each unknown key to its closest known key ("" when none is close).
    ``declared``: :func:`builtin_declarations` (read when not given)."""
    env = os.environ if env is None else env
    declared = builtin_declarations(cache) if declared is None else declared
    selections = slot_defaults(declared.slots)  # memory.provider, context.engine, sessions.store, ...
    missing: list[str] = []
    merged = expand_vars(deep_merge(deep_merge(DEFAULTS, selections), user),
                         {**read_env_file(home / ".env"), **env}, missing=missing)
    tree: dict[str, Any] = {}
    for dotted, value in (overrides or {}).items():
        set_dotted(tree, dotted, value)
    merged = deep_merge(merged, tree)
    key = ValidationCache.key("config", json.dumps(
        [merged, declared.sections, selections, declared.kept, declared.owners],
        sort_keys=True, default=str).encode())
    hit = cache.get(key) if cache else None
    if hit is None:
        hit = _validate(merged, str(home / CONFIG_FILE), declared, selections)
        if cache:
            cache.put(key, hit)
    return hit, missing


def builtin_declarations(cache: ValidationCache | None = None) -> Declared:
    """What builtin plugins declare in their plugin.yaml about config.yaml: the keys they own,
    the provider slots, and the keys of an earlier version kept as written (the compat
    plugin lists Hermes Agent 0.19's). Imports no plugin."""
    from .discovery import builtin_records
    from .loader import config_sections

    records = [r for r in builtin_records(cache) if r.manifest is not None and not r.error]
    manifests = [r.manifest for r in records if r.manifest is not None]
    kept = tuple(sorted({key for manifest in manifests for key in manifest.legacy_config}))
    owners: dict[str, str] = {}
    for record in records:
        for declaration in record.manifest.slots.values():  # type: ignore[union-attr]
            if declaration.config_key:
                owners.setdefault(declaration.config_key.partition(".")[0], record.module)
    return Declared(config_sections(records), declared_slots(manifests), kept, owners)


def _validate(merged: dict[str, Any], path: str, declared: Declared,
              selections: dict[str, dict[str, str]]) -> dict[str, Any]:
    import difflib

    from pydantic import ValidationError

    from .validation import config_model, render_errors, unknown_keys

    try:
        model = config_model(declared.sections, selections, declared.owners).model_validate(merged)
    except ValidationError as exc:
        return {"error": render_errors(exc)}
    warnings: list[str] = []
    unused: list[str] = []
    unknown: dict[str, str] = {}
    for dotted, siblings in unknown_keys(model):
        parent, _, leaf = dotted.rpartition(".")
        close = difflib.get_close_matches(leaf, [*siblings, *(() if parent else declared.kept)],
                                          1, 0.75)
        if close and close[0] != leaf:
            unknown[dotted] = f"{parent}.{close[0]}" if parent else close[0]
            warnings.append(f"{path}: unknown key '{dotted}' — did you mean '{unknown[dotted]}'?")
        elif dotted.split(".")[0] in declared.kept:
            unused.append(dotted)
        else:
            unknown[dotted] = ""
    notes = [f"{path}: not used by this version (kept as written): "
             f"{', '.join(sorted(unused))}"] if unused else []
    plain = sorted(k for k, close in unknown.items() if not close)
    if plain:
        warnings.append(f"{path}: unknown keys ignored (check the spelling): {', '.join(plain)}")
    return {"data": model.model_dump(mode="json"), "warnings": warnings, "notes": notes,
            "unknown": unknown}
