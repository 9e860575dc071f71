"""The validation results shipped with the package (``hermes_agent/prevalidated.json``):
what validating each builtin and bundled plugin.yaml, and the default configuration, stores
in a home's validation cache (:class:`hermes_agent.ValidationCache`), keyed the same
way (content hash, hermes version, schema revision). A new home reads these instead of
importing pydantic; a plugin.yaml edited in place hashes differently and is validated.

Regenerate after changing a builtin or bundled plugin.yaml, a validation model or the
version (tests/test_prevalidated.py fails while the table is stale)::

    python -m hermes_agent.cli.prevalidated

A build-time tool of the CLI layer, not a ``hermes`` command.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import hermes_agent
from hermes_agent import ValidationCache, discover, load_config

COMMAND = "python -m hermes_agent.cli.prevalidated"
#: the table's place in the package (package data, read by :class:`ValidationCache`)
SHIPPED = Path(hermes_agent.__file__).with_name("prevalidated.json")


def compute() -> dict[str, Any]:
    """The table, validated now: discovery of the builtin and bundled plugins and the config
    of an empty home (no config.yaml, no environment), with nothing read from the table."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        cache = ValidationCache(None, shipped=False)  # in memory: what a save would write
        discover(home, env={}, cache=cache, entry_points=False)
        config = load_config(home, env={}, cache=cache)
        table: dict[str, Any] = json.loads(json.dumps(dict(cache.items())))
    if config.warnings:  # they would name this temporary home
        raise RuntimeError(f"the default configuration warns: {config.warnings}")
    return dict(sorted(table.items()))


def render(table: dict[str, Any]) -> str:
    return json.dumps(table, indent=0, sort_keys=True, ensure_ascii=False) + "\n"


def main() -> int:
    SHIPPED.write_text(render(compute()), encoding="utf-8")
    print(f"wrote {SHIPPED}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
