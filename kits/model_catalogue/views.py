"""Owner: the builtin plugin `models`. Views generated from a catalogue's rows: the table
of docs/model-providers.md and the ``optional_env`` of the catalogue plugin's plugin.yaml."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from . import CatalogueError
from .rows import ProfileRow, read_catalogue

def _models_cell(row: ProfileRow) -> str:
    if row.default_model:
        cell = f"`{row.default_model}`"
    elif row.local:
        cell = "first served model"
    else:
        cell = "`model.default`"
    if row.auxiliary_model and row.auxiliary_model != row.default_model:
        cell += f" / `{row.auxiliary_model}`"
    return cell


def _known_cell(row: ProfileRow) -> str:
    known = []
    for model in row.models:
        facts = []
        if model.context_length:
            facts.append(f"{model.context_length // 1000}K")
        if model.priced:
            facts.append(f"${model.input_price:g}/${model.output_price:g}")
        if facts:
            known.append(f"{model.id}: {', '.join(facts)}")
    return "; ".join(known)


def markdown_table(rows: Iterable[ProfileRow]) -> str:
    """The catalogue table of docs/model-providers.md."""
    lines = ["| name | label | API mode | base URL | key variables | base-URL variable | "
             "default / auxiliary model | context, price in/out per M |",
             "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        keys = ", ".join(row.key_env) + ("" if row.key_required else " (optional)")
        lines.append("| " + " | ".join((
            row.name + (f" ({', '.join(row.aliases)})" if row.aliases else ""), row.label,
            row.api_mode, row.base_url or "`model.base_url`", keys.strip() or "(none)",
            row.base_url_env or "", _models_cell(row), _known_cell(row))) + " |")
    return "\n".join(lines) + "\n"


def manifest_env(rows: Iterable[ProfileRow]) -> list[dict[str, Any]]:
    """plugin.yaml's ``optional_env``: every key (secret) and base-URL variable, once."""
    entries: dict[str, dict[str, Any]] = {}
    for row in rows:
        for name in row.key_env:
            entries.setdefault(name, {"name": name, "description": f"{row.label} API key",
                                      "secret": True})
        if row.base_url_env:
            entries.setdefault(row.base_url_env, {
                "name": row.base_url_env, "description": f"overrides the {row.label} base URL"})
    return list(entries.values())


TABLE_START = "<!-- catalogue: generated from plugins/model-providers/catalogue/profiles.yaml -->"
TABLE_END = "<!-- end of catalogue -->"


def replace_table(doc: str, rows: Iterable[ProfileRow]) -> str:
    """``doc`` with the text between the catalogue markers replaced by the table."""
    head, start, rest = doc.partition(TABLE_START)
    _, end, tail = rest.partition(TABLE_END)
    if not start or not end:
        raise CatalogueError(f"the doc has no {TABLE_START} ... {TABLE_END} markers")
    return f"{head}{TABLE_START}\n{markdown_table(rows)}{TABLE_END}{tail}"


def rewrite(root: Path) -> str:
    """Regenerate the doc table and plugin.yaml's variables in the checkout at ``root``."""
    import yaml

    folder = root / "plugins" / "model-providers" / "catalogue"
    rows = read_catalogue(folder / "profiles.yaml").profiles
    doc = root / "docs" / "model-providers.md"
    doc.write_text(replace_table(doc.read_text(encoding="utf-8"), rows), encoding="utf-8")
    manifest = folder / "plugin.yaml"
    head = manifest.read_text(encoding="utf-8").split("optional_env:", 1)[0]
    manifest.write_text(head + yaml.safe_dump({"optional_env": manifest_env(rows)},
                                              sort_keys=False, width=100), encoding="utf-8")
    return f"wrote {doc} and {manifest} ({len(rows)} profiles)"
