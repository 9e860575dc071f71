"""The interactive chat's banner names every plugin that should be active and is not, one
line each with the doctor command (quoted for the shell); plugins that are off on purpose
are not mentioned."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from hermes_agent.cli import root as cli_root
from hermes_agent.builtin_plugins.agent.chat import command
from hermes_agent.testing import write_plugin

from .conftest import agent_config

GOOD = "def register(ctx):\n    pass\n"


@pytest.fixture
def broken_home(home: Path, calculator: Path, server, monkeypatch: pytest.MonkeyPatch) -> Path:
    plugins = home / "plugins"
    write_plugin(plugins, "badyaml", GOOD, manifest="name: badyaml\nkind: nonsense\n"
                 "provides_tools: 5\n")
    write_plugin(plugins, "x;rm", GOOD, manifest="version: 1.0.0\n")  # the folder name is invalid
    write_plugin(plugins, "keyless", GOOD, manifest="name: keyless\nrequires_env: [KEYLESS_KEY]\n")
    write_plugin(plugins, "badreg", "def register(ctx):\n    raise KeyError('api_url')\n",
                 manifest="name: badreg\n")
    write_plugin(plugins, "idle", "raise ImportError('never imported')\n", manifest="name: idle\n")
    write_plugin(plugins, "shut", "raise ImportError('never imported')\n", manifest="name: shut\n")
    config = agent_config(server)
    config["plugins"] = {"enabled": ["calculator", "badyaml", "x;rm", "keyless", "badreg", "shut"],
                         "disabled": ["shut"]}
    (home / "config.yaml").write_text(yaml.safe_dump(config))
    monkeypatch.delenv("KEYLESS_KEY", raising=False)
    monkeypatch.setattr(command, "stdin_is_tty", lambda: True)
    return home


def banner_lines(output: str) -> dict[str, str]:
    """Banner warning lines by plugin name."""
    found = {}
    for line in output.splitlines():
        if line.startswith("⚠ plugin '"):
            found[line.split("'")[1]] = line
    return found


def test_banner_lists_each_enabled_plugin_that_is_not_active(broken_home: Path) -> None:
    result = CliRunner().invoke(cli_root._build_root(), ["chat"], input="/quit\n",
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "calculator: calculate, unit_convert" in result.output
    lines = banner_lines(result.output)
    assert sorted(lines) == ["badreg", "badyaml", "keyless", "x;rm"]  # not idle, not shut
    assert lines["badyaml"].startswith("⚠ plugin 'badyaml' is not active: invalid plugin.yaml: ")
    assert "(and 1 more)" in lines["badyaml"]  # provides_tools; kind is not repeated
    assert lines["badyaml"].endswith("see `hermes plugins doctor badyaml`")
    assert "missing environment variable: KEYLESS_KEY" in lines["keyless"]
    assert "register() failed: KeyError: 'api_url'" in lines["badreg"]
    command_line = lines["x;rm"].rsplit("`", 2)[1]
    assert command_line == "hermes plugins doctor 'x;rm'"
    assert shlex.split(command_line) == ["hermes", "plugins", "doctor", "x;rm"]


def test_the_banner_and_tools_name_the_plugin_of_a_memory_providers_tools(
        home: Path, server, monkeypatch: pytest.MonkeyPatch) -> None:
    """Local memory's tools are its provider's (routed, not registered): listed under its
    plugin, not under '?'; /tools lists them too."""
    config = agent_config(server)
    config["memory"] = {"provider": "local"}
    (home / "config.yaml").write_text(yaml.safe_dump(config))
    monkeypatch.setattr(command, "stdin_is_tty", lambda: True)
    result = CliRunner().invoke(cli_root._build_root(), ["chat"], input="/tools\n/quit\n",
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "  local: forget_fact, recall_facts, remember_fact" in result.output
    assert not [line for line in result.output.splitlines() if line.startswith("  ?:")]
    rows = [line.split() for line in result.output.splitlines() if "recall_facts" in line]
    assert ["recall_facts", "memory,", "local"] == rows[-1][:3], result.output
