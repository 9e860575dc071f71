"""CLI commands declared in plugin.yaml (``cli_commands:``): listed by ``hermes --help``
without importing the plugin, run while the plugin is on, explained while it is off;
essential builtins cannot be disabled. Run through the real CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hermes_agent.cli.root import main
from hermes_agent.testing import write_plugin

WEATHER_MANIFEST = """\
name: weather
version: 1.0.0
cli_commands:
  weather:
    entry: ".cli:weather"
    help: Print the forecast.
"""
WEATHER_CLI = """\
import click

@click.command()
@click.argument("city")
def weather(city):
    \"\"\"Print the forecast for CITY.\"\"\"
    click.echo(f"sunny in {city}")
"""
IMPORT_MARKER = "from pathlib import Path\n(Path(__file__).parent / 'imported').touch()\n"


def run(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def commands_listed(help_text: str) -> set[str]:
    block = help_text.split("Commands:")[1].split("\n\n")[0]
    # a command's line starts with two spaces; a wrapped help line is indented further
    return {line.split()[0] for line in block.splitlines() if line[:3].strip() and line.strip()}


def test_disabling_a_builtin_takes_its_commands_away_and_says_how_to_get_them_back(home, capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0 and {"sessions", "chat", "model", "setup"} <= commands_listed(out)

    code, out, _ = run(capsys, "plugins", "disable", "sessions")
    assert code == 0 and "hermes sessions" in out
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "sessions" not in commands_listed(out)
    assert "plugins" in commands_listed(out)
    code, _, err = run(capsys, "sessions", "list")
    assert code == 1
    assert "plugin 'sessions'" in err and "disabled" in err
    assert "hermes plugins enable sessions" in err
    assert run(capsys, "sessions", "--help")[0] == 1  # no help of a command that is off

    assert run(capsys, "plugins", "enable", "sessions")[0] == 0
    code, out, _ = run(capsys, "--help")
    assert "sessions" in commands_listed(out)
    assert run(capsys, "sessions", "list")[0] == 0


def test_disabling_the_agent_turns_off_chat_and_bare_hermes(home, capsys):
    assert run(capsys, "plugins", "disable", "agent")[0] == 0
    for args in (["chat", "-q", "hi"], []):
        code, _, err = run(capsys, *args)
        assert code == 1 and "`hermes chat` is unavailable" in err, args
        assert "hermes plugins enable agent" in err


def test_an_essential_builtin_cannot_be_disabled_and_keeps_its_commands(home, capsys):
    code, _, err = run(capsys, "plugins", "disable", "plugin-admin")
    assert code == 1 and "essential" in err
    assert not (home / "config.yaml").exists() or "plugin-admin" not in \
        (home / "config.yaml").read_text()
    # listed by hand in config.yaml all the same: it still loads, its commands still run
    (home / "config.yaml").write_text("plugins:\n  disabled: [plugin-admin]\n")
    code, out, _ = run(capsys, "--help")
    assert {"plugins", "config", "tools"} <= commands_listed(out)
    assert run(capsys, "plugins", "enable", "plugin-admin")[0] == 0


def test_a_plugin_declares_a_command_listed_without_importing_it(home, capsys):
    plugin = write_plugin(home / "plugins", "weather", IMPORT_MARKER, manifest=WEATHER_MANIFEST,
                          files={"cli.py": WEATHER_CLI})
    code, out, _ = run(capsys, "--help")
    assert "weather" not in commands_listed(out)  # not enabled yet
    code, _, err = run(capsys, "weather", "Oslo")
    assert code == 1 and "not enabled" in err and "hermes plugins enable weather" in err
    assert not (plugin / "imported").exists()

    assert run(capsys, "plugins", "enable", "weather")[0] == 0
    code, out, _ = run(capsys, "--help")
    assert "weather" in commands_listed(out) and "Print the forecast." in out
    assert not (plugin / "imported").exists()  # listed from plugin.yaml alone

    code, out, _ = run(capsys, "weather", "Oslo")  # running it loads the plugin, then imports
    assert code == 0 and out.strip().endswith("sunny in Oslo")
    code, out, _ = run(capsys, "plugins", "info", "weather")
    assert "cli_commands: weather" in out

    assert run(capsys, "plugins", "disable", "weather")[0] == 0
    code, _, err = run(capsys, "weather", "Oslo")
    assert code == 1 and "disabled" in err


def test_a_declared_command_of_a_plugin_that_fails_to_load_says_why(home, capsys):
    write_plugin(home / "plugins", "weather", "raise RuntimeError('no forecast today')\n",
                 manifest=WEATHER_MANIFEST, files={"cli.py": WEATHER_CLI})
    (home / "config.yaml").write_text("plugins:\n  enabled: [weather]\n")
    code, _, err = run(capsys, "weather", "Oslo")
    assert code == 1 and "plugin 'weather'" in err and "no forecast today" in err


def test_a_plugin_cannot_take_a_builtin_command_name(home, capsys):
    manifest = WEATHER_MANIFEST.replace("  weather:\n", "  sessions:\n")
    write_plugin(home / "plugins", "weather", "", manifest=manifest,
                 files={"cli.py": WEATHER_CLI})
    (home / "config.yaml").write_text("plugins:\n  enabled: [weather]\n")
    code, out, _ = run(capsys, "plugins", "list", "--load", "--json")
    assert code == 0 and "hermes itself" in out and "'sessions'" in out
    assert run(capsys, "sessions", "list")[0] == 0  # still the builtin's


def test_help_stays_light_with_a_declared_command(home):
    write_plugin(home / "plugins", "weather", IMPORT_MARKER, manifest=WEATHER_MANIFEST,
                 files={"cli.py": WEATHER_CLI})
    (home / "config.yaml").write_text("plugins:\n  enabled: [weather]\n")
    code = ("import sys\nfrom hermes_agent.cli.root import main\n"
            "main(['--help'])\n"
            "print(sorted({'click.testing', 'pydantic', 'yaml'} & set(sys.modules)),"
            " [m for m in sys.modules if m.startswith('hermes_plugins')])")
    for _ in range(2):  # the first run in a home validates into its cache
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True).stdout
    assert "weather" in out and out.strip().endswith("[] []"), out
    assert not (Path(home) / "plugins" / "weather" / "imported").exists()


def test_a_declared_entry_that_cannot_be_imported_is_a_clear_error(home, capsys):
    manifest = WEATHER_MANIFEST.replace(".cli:weather", ".cli:forecast")
    write_plugin(home / "plugins", "weather", "", manifest=manifest,
                 files={"cli.py": WEATHER_CLI})
    (home / "config.yaml").write_text("plugins:\n  enabled: [weather]\n")
    code, _, err = run(capsys, "weather", "Oslo")
    assert code == 1
    assert "plugin 'weather' declares `hermes weather` as '.cli:forecast'" in err
    assert "AttributeError" in err and "fix cli_commands in its plugin.yaml" in err


def test_two_plugins_declaring_one_command_clash_like_any_registration(home, capsys):
    for name in ("weather", "meteo"):
        write_plugin(home / "plugins", name, "", manifest=WEATHER_MANIFEST.replace(
            "name: weather", f"name: {name}"), files={"cli.py": WEATHER_CLI})
    (home / "config.yaml").write_text("plugins:\n  enabled: [weather, meteo]\n")
    code, out, _ = run(capsys, "weather", "Oslo")  # one of them keeps it and runs it
    assert code == 0 and out.strip().endswith("sunny in Oslo")
    code, out, _ = run(capsys, "plugins", "list", "--json")
    import json

    states = sorted(row["state"] for row in json.loads(out) if row["name"] in ("weather", "meteo"))
    assert states == ["failed", "loaded"]
    assert "CLI command 'hermes weather' is registered by both" in out
