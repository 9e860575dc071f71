"""Plugin rows for `hermes plugins list`, `info` and `/plugins`, from the one discovery
service plus the load ledger (what the last boot really did). Imports no plugin code."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_agent import Kernel
from hermes_agent.kits.text import plural

from .ledger import recorded_statuses, status_dict
from .lockfile import lock_notes

GLYPHS = {"loaded": "✓", "enabled": "•", "disabled": "✗", "failed": "!", "missing env": "○",
          "not enabled": "○", "not selected": "○", "untrusted": "○"}


def plugin_rows(kernel: Kernel, include_builtin: bool = False,
                notes: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """One dict per plugin: the decision now, merged with the last real load when current;
    ``lock_problem`` when its plugins.lock entry is bad (commands refuse to act on it).
    ``notes``: :func:`~.lockfile.lock_notes`, when the caller has read them already."""
    notes = lock_notes(kernel.home) if notes is None else notes
    rows = _status_rows(kernel, include_builtin)
    for row in rows:
        if row["name"] in notes:
            row["lock_problem"] = notes[row["name"]]
    return rows


def _status_rows(kernel: Kernel, include_builtin: bool) -> list[dict[str, Any]]:
    if kernel.booted:
        statuses = list(kernel.plugins.values())
        return [status_dict(s) for s in statuses if include_builtin or s.record.source != "builtin"]
    rows = []
    for item in recorded_statuses(kernel):
        if item.status.record.source == "builtin" and not include_builtin:
            continue
        row = status_dict(item.status)
        row["counts"] = "registered" if item.outcome is not None else "declared"
        if item.pending:
            row["reason"] = ("enabled; not loaded since it last changed "
                             "(`hermes plugins list --load` loads it now)")
        if item.outcome is not None and item.outcome.get("last_fault"):
            row["last_fault"] = item.outcome["last_fault"]
        rows.append(row)
    return rows


def format_lock_notes(notes: Mapping[str, str]) -> str:
    """The bad entries of plugins.lock (:func:`~.lockfile.lock_notes`, each with its fix),
    or "" when there are none."""
    return "\n".join(f"! {note}" for note in notes.values())


def format_table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return ("No plugins found.\n  Put a plugin folder with a plugin.yaml in $HERMES_HOME/plugins/ "
                "or pip-install one, then `hermes plugins enable NAME`.")
    headers = ("NAME", "VERSION", "KIND", "SOURCE", "STATE", "TOOLS", "HOOKS")
    table = [headers] + [(r["name"], r["version"] or "-", r["kind"], r["source"], r["state"],
                          str(len(r["tools"])), str(len(r["hooks"]))) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    lines = []
    for i, row in enumerate(table):
        lines.append("  ".join(cell.ljust(widths[j]) for j, cell in enumerate(row)).rstrip())
        if not i:
            continue
        row = rows[i - 1]
        if row["reason"] and row["state"] != "loaded":
            lines.append(f"    {row['reason']}")
        elif row.get("last_fault"):
            lines.append(f"    in an earlier session: {row['last_fault'].get('reason', '')}")
    return "\n".join(lines)


def format_slash_listing(kernel: Kernel) -> str:
    lock = lock_notes(kernel.home)  # read once for the rows and the lines below them
    rows = plugin_rows(kernel, notes=lock)
    notes = format_lock_notes(lock)
    if not rows:
        return "\n".join(filter(None, ["No plugins installed. Drop a plugin folder into "
                                        "$HERMES_HOME/plugins/ or pip-install one.", notes]))
    lines = [f"Plugins ({len(rows)}):"]
    for row in rows:
        counts = f"({plural(len(row['tools']), 'tool')}, {plural(len(row['hooks']), 'hook')})"
        version = f" v{row['version']}" if row["version"] else ""
        state = "" if row["state"] == "loaded" else f" [{row['state']}]"
        reason = f" — {row['reason']}" if row["reason"] and row["state"] != "loaded" else ""
        lines.append(f"  {GLYPHS.get(row['state'], '?')} {row['name']}{version}{state} {counts}{reason}")
    return "\n".join(filter(None, [*lines, notes]))
