"""Reading plugin.yaml: validating a plugin's manifest without importing its code.

Unknown keys and legacy aliases produce warnings; a malformed file is a :class:`ManifestError`
naming the file, the field and the fix. A file validated before (the same bytes) is taken
from the :class:`~.home.ValidationCache`, so neither PyYAML nor pydantic is imported.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._version import __version__
from .errors import ManifestError
from .home import ValidationCache
from .manifest import KINDS, Manifest

# Legacy keys still found in published plugins, mapped to the key that replaced them.
LEGACY_ALIASES = {"hooks": "provides_hooks", "tools": "provides_tools",
                  "pip_dependencies": "python_dependencies"}
# Keys the original's bundled manifests carry that nothing reads; accepted with a notice.
IGNORED_KEYS = ("platforms", "provides_web_providers", "provides_browser_providers",
                "external_dependencies", "key")


@dataclass
class ManifestResult:
    """A manifest read: the manifest or the error, and the warnings either way."""

    manifest: Manifest | None
    warnings: list[str]
    error: ManifestError | None = None


def read_manifest(path: Path, cache: ValidationCache | None = None,
                  default_name: str | None = None) -> ManifestResult:
    """Read and validate ``path``. Never raises for bad content: errors are in the result."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return ManifestResult(None, [], ManifestError(str(path), [f"cannot read the file: {exc}"]))
    key = ValidationCache.key(f"manifest:{default_name}", raw)
    hit = cache.get(key) if cache else None
    if hit is None:
        hit = _validate(raw, default_name)
        if cache:
            cache.put(key, hit)
    if "error" in hit:
        error = ManifestError(str(path), hit["error"], hit.get("code", "manifest_invalid"))
        return ManifestResult(None, hit["warnings"], error)
    return ManifestResult(Manifest.from_data(hit["data"]), hit["warnings"])


def _validate(raw: bytes, default_name: str | None) -> dict[str, Any]:
    """``{"data", "warnings"}`` or ``{"error", "warnings", "code"}``, as the cache keeps it."""
    import yaml
    from pydantic import ValidationError

    from .validation import ManifestModel, render_errors

    warnings: list[str] = []
    try:
        data = yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problems = [f"{where}not valid YAML ({getattr(exc, 'problem', exc)}); "
                    "check indentation and quoting"]
        return {"error": problems, "warnings": warnings, "code": "manifest_invalid"}
    data = {} if data is None else data
    if not isinstance(data, dict):
        problems = ["(top level): the file must be a mapping of keys such as name: and version:"]
        return {"error": problems, "warnings": warnings, "code": "manifest_invalid"}
    data, warnings = normalize_legacy(data)
    if "name" not in data and default_name:
        data["name"] = default_name
    try:
        normalized = ManifestModel.model_validate(data).model_dump(mode="json")
    except ValidationError as exc:
        problems = render_errors(exc)
        kind = [p for p in problems if p.startswith("kind:")]
        if kind and not any(KINDS[0] in p for p in kind):  # pydantic did not list them
            problems.append(f"kind: must be one of {', '.join(KINDS)}")
        return {"error": problems, "warnings": warnings, "code": "manifest_invalid"}
    problem = control_characters(normalized) or check_requires_hermes(normalized["requires_hermes"])
    if problem:
        malformed = "is not a version clause" in problem
        return {"error": [problem], "warnings": warnings,
                "code": "manifest_invalid" if malformed else "incompatible"}
    return {"data": normalized, "warnings": warnings}


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_CONTROL_OR_BREAK = re.compile(_CONTROL.pattern[:-1] + "\t\n]")


def control_characters(data: Any, field: str = "") -> str | None:
    """A problem line for the first field holding a control character: an escape sequence
    in a description would rewrite what `hermes plugins list` shows. Newlines and tabs are
    text in descriptions and help, nowhere else; ``config`` (the plugin's own defaults) is
    not shown."""
    if isinstance(data, str):
        text = _CONTROL if field.endswith(("description", "help")) else _CONTROL_OR_BREAK
        found = sorted(set(text.findall(data)))
        return (f"{field}: holds control characters ({', '.join(repr(c) for c in found)}); "
                "remove them") if found else None
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(
        data, list) else ()
    for key, value in items:
        if field or key != "config":
            problem = control_characters(value, f"{field}.{key}" if field else str(key))
            if problem:
                return problem
    return None


def without_controls(text: str) -> str:
    """``text`` (package metadata shown as a plugin's description) without control
    characters."""
    return _CONTROL_OR_BREAK.sub(" ", text).strip()


def normalize_legacy(data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Map legacy keys onto current ones and drop unknown keys, returning warnings for both."""
    data = dict(data)
    warnings: list[str] = []
    known = {f.name for f in dataclasses.fields(Manifest)} - {"synthesized"}
    provides = data.pop("provides", None)
    if isinstance(provides, dict):
        warnings.append("'provides:' is a legacy form; use provides_tools: and provides_hooks: lists")
        for sub in ("tools", "hooks"):
            if isinstance(provides.get(sub), list):
                data.setdefault(f"provides_{sub}", provides[sub])
    for old, new in LEGACY_ALIASES.items():
        if old in data:
            warnings.append(f"'{old}:' is a legacy alias; rename it to '{new}:'")
            data.setdefault(new, data.pop(old))
    for key in [k for k in data if k not in known]:
        data.pop(key)
        warnings.append(f"'{key}:' is not used by this version and is ignored" if key in IGNORED_KEYS
                        else f"unknown key '{key}:' is ignored (check its spelling; "
                             f"known keys: {', '.join(sorted(known))})")
    return data, warnings


def check_requires_hermes(spec: str, version: str = __version__) -> str | None:
    """A problem line if ``spec`` (e.g. ``>=0.1,<2``; a bare version means ``==``) excludes
    ``version``, else None."""
    from packaging.specifiers import InvalidSpecifier, Specifier

    for clause in (c.strip() for c in spec.split(",")) if spec.strip() else ():
        try:
            ok = Specifier(f"=={clause}" if clause[:1].isdigit() else clause).contains(
                version, prereleases=True)
        except InvalidSpecifier:
            return f"requires_hermes: {clause!r} is not a version clause (write e.g. '>=0.1,<1')"
        if not ok:
            return (f"requires_hermes: this plugin needs hermes {spec}, but this is {version}; "
                    "install a compatible version of the plugin")
    return None
