"""`hermes plugins doctor` output: every problem of an invalid plugin.yaml on its own line under
the plugin, and plugin names quoted for the shell in the commands it suggests."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from hermes_agent.cli.root import main
from hermes_agent.testing import write_plugin

BAD_MANIFEST = """\
name: badyaml
kind: nonsense
provides_tools: 5
requires_env:
  - description: the key, without its name
"""


def doctor(capsys, *args: str) -> tuple[int, str]:
    code = main(["plugins", "doctor", *args])
    return code, capsys.readouterr().out


def test_multi_line_manifest_errors_stay_readable(home: Path, capsys) -> None:
    write_plugin(home / "plugins", "badyaml", "", manifest=BAD_MANIFEST)
    (home / "config.yaml").write_text("plugins:\n  enabled: [badyaml]\n")
    code, out = doctor(capsys, "badyaml")
    assert code == 1
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if "[manifest_invalid]" in line)
    manifest = home / "plugins" / "badyaml" / "plugin.yaml"
    assert lines[head] == f"    - [manifest_invalid] invalid manifest: {manifest}:"
    problems = lines[head + 1:head + 4]
    assert all(line.startswith("        ") for line in problems), problems
    assert sorted(line.strip().split(":")[0] for line in problems) == \
        ["kind", "provides_tools", "requires_env.0.name"]
    assert ("        provides_tools: Input should be a valid list (write it as a YAML list, "
            "e.g. [a, b])") in problems  # whole, not cut
    assert lines[head + 4].startswith("      fix: fix plugin.yaml")
    code, out = doctor(capsys, "badyaml", "--json")
    message = json.loads(out)["plugins"][0]["reasons"][0]["message"]
    assert message.splitlines()[1:] == [line.strip() for line in problems]


def test_suggested_commands_quote_odd_plugin_names(home: Path, capsys) -> None:
    # A folder whose plugin.yaml has no name is known by the folder's name.
    write_plugin(home / "plugins", "my plugin", "", manifest="version: 1.0.0\n")
    (home / "config.yaml").write_text("plugins:\n  enabled: ['ghost;rm -rf ~']\n")
    code, out = doctor(capsys)
    assert code == 1
    fixes = [line.split("fix: ", 1)[1] for line in out.splitlines() if "fix: " in line]
    enable = next(f for f in fixes if f.startswith("hermes plugins enable"))
    assert enable == "hermes plugins enable 'my plugin'"
    assert shlex.split(enable)[-1] == "my plugin"
    remove = next(f for f in fixes if "hermes plugins remove" in f)
    command = remove.split("remove it: ", 1)[1]
    assert shlex.split(command) == ["hermes", "plugins", "remove", "ghost;rm -rf ~"]
