"""`hermes config edit`: config.yaml opened in the user's editor, then checked.

The editor works on the file itself (config.yaml is the user's, comments and all). When it
exits the file is validated as every command would load it; a problem is reported with its
place and the way to fix it, and the file is kept exactly as written, so nothing typed is
lost. Keys written in plain text are pointed to $HERMES_HOME/.env.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
from hermes_agent import ConfigError, load_config, private_dir, write_atomic
from hermes_agent.kits.secret_text import is_secret_name
from hermes_agent.kits.cli import report_config_warnings
from hermes_agent.kits.editor import run_editor

TEMPLATE = """\
# hermes settings; docs/configuration.md lists them, `hermes config show` prints the
# effective configuration. Keys belong in .env, not here: `hermes config set
# OPENROUTER_API_KEY ...`, then refer to one as ${OPENROUTER_API_KEY} if a setting needs it.
"""


def run_edit(home: Path) -> None:
    path = home / "config.yaml"
    if not path.exists():
        private_dir(home)
        write_atomic(path, TEMPLATE, mode=0o600)
        click.echo(f"Created {path}.", err=True)
    before = path.read_bytes()
    code = run_editor(path)
    if code != 0:
        raise click.ClickException(f"the editor exited with status {code}; {path} is kept as "
                                   "it is now (run `hermes config edit` again to go on)")
    changed = path.read_bytes() != before
    try:
        cfg = load_config(home)
    except ConfigError as exc:
        raise click.ClickException(
            f"{path} is saved as you wrote it, but hermes cannot use it:\n{exc}\nFix the "
            f"lines named above with `hermes config edit` (or `hermes config unset KEY` for "
            f"a setting you do not need); until then commands that load the configuration "
            f"stop with this error.") from exc
    report_config_warnings(cfg)
    for dotted in plain_keys(_raw(path)):
        click.echo(f"warning: {dotted} holds a secret in plain text in {path}; keep keys in "
                   f"{home / '.env'} (`hermes config set NAME VALUE`) and write "
                   f"${{NAME}} here instead", err=True)
    click.echo(f"{path} {'saved' if changed else 'unchanged'}; the settings are valid.")


def _raw(path: Path) -> Any:
    import yaml

    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None


def plain_keys(node: Any, where: str = "") -> Iterator[str]:
    """The dotted places of secret-named settings holding a literal value (not ``${VAR}``)."""
    if isinstance(node, dict):
        for key, value in node.items():
            dotted = f"{where}.{key}" if where else str(key)
            if isinstance(value, str) and value and is_secret_name(str(key)) and not (
                    value.startswith("${") and value.endswith("}")):
                yield dotted
            else:
                yield from plain_keys(value, dotted)
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from plain_keys(item, f"{where}[{index}]")
