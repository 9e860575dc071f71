"""The cached listing of ``hermes --help`` ($HERMES_HOME/cache/help-index.json): read while
nothing it depends on changed, computed again as soon as anything did. Run through the CLI.

The cache skips inputs changed in the last two seconds (file times are coarse), so these
tests back-date the home before a listing that should be stored."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hermes_agent.cli import commands as cli_commands
from hermes_agent.cli.root import main
from hermes_agent.testing import write_plugin

from test_cli_declared import WEATHER_CLI, WEATHER_MANIFEST, commands_listed

INDEX = Path("cache") / "help-index.json"
FORECAST_MANIFEST = """\
name: forecast
version: 1.0.0
requires_env: [FORECAST_API_KEY]
cli_commands:
  forecast:
    entry: ".cli:weather"
    help: Print the forecast (needs a key).
"""


def age(home: Path, seconds: float = 60.0) -> None:
    """Back-date every file and folder of ``home`` (by ``seconds``, to the nanosecond)."""
    then = time.time_ns() - int(seconds * 1e9)
    for path in [home, *home.rglob("*")]:
        os.utime(path, ns=(then, then), follow_symlinks=False)


def listed(capsys: pytest.CaptureFixture[str]) -> tuple[set[str], str]:
    capsys.readouterr()
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    return commands_listed(out), out


def from_cache(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
               home: Path) -> set[str]:
    """Store the listing (a back-dated home), then list it again with the table unreachable:
    the second listing can only come from the cache. Returns what both listed."""
    age(home)
    first, _ = listed(capsys)
    assert (home / INDEX).is_file()
    stored = (home / INDEX).stat()

    def no_table() -> None:
        raise AssertionError("--help computed the table although nothing changed")

    with monkeypatch.context() as patch:
        patch.setattr(cli_commands, "_table", no_table)
        again, _ = listed(capsys)
    assert again == first
    assert (home / INDEX).stat().st_mtime_ns == stored.st_mtime_ns  # read, not rewritten
    return again


def test_a_second_help_reads_the_cache_and_imports_no_discovery_config_or_policy(home, calculator):
    (home / "config.yaml").write_text("plugins:\n  enabled: [calculator]\n")
    age(home)
    code = ("import sys\nfrom hermes_agent.cli.root import main\n"
            "main(['--help'])\n"
            "kernel = ['hermes_agent.discovery', 'hermes_agent.config', 'hermes_agent.policy',\n"
            "          'hermes_agent.manifest', 'hermes_agent.cli.commands']\n"
            "print('LOADED', [m for m in kernel if m in sys.modules])")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout for _ in range(2)]
    assert "hermes_agent.discovery" in runs[0]  # the first run computed the listing
    assert runs[1].strip().endswith("LOADED []"), runs[1]
    assert runs[1].split("LOADED")[0] == runs[0].split("LOADED")[0]  # the same help
    assert stat.S_IMODE((home / INDEX).stat().st_mode) == 0o600


def test_a_builtin_disabled_by_hand_leaves_the_listing_even_at_the_same_size(
        home, capsys, monkeypatch):
    config = home / "config.yaml"
    config.write_text("plugins:\n  disabled: [sessionz]\n")
    assert "sessions" in from_cache(capsys, monkeypatch, home)
    before = config.stat()
    with open(config, "r+", encoding="utf-8") as handle:  # in place: same inode, same size
        handle.write("plugins:\n  disabled: [sessions]\n")
    os.utime(config, ns=(before.st_mtime_ns + 1_000_000,) * 2)  # one millisecond later
    after = config.stat()
    assert (after.st_ino, after.st_size) == (before.st_ino, before.st_size)
    names, out = listed(capsys)
    # the note lists every declared command whose plugin is off (the bundled `local` memory
    # provider's `facts` too), wrapped: compare with the line breaks as spaces
    assert "sessions" not in names and "sessions (plugin sessions)" in " ".join(out.split())
    assert "sessions" not in from_cache(capsys, monkeypatch, home)


def test_a_new_plugin_folder_safe_mode_and_a_required_variable_change_the_listing(
        home, capsys, monkeypatch):
    (home / "config.yaml").write_text("plugins:\n  enabled: [weather, forecast]\n")
    (home / "plugins" / "outdoors").mkdir()  # a category folder: plugins go one level deeper
    assert "weather" not in from_cache(capsys, monkeypatch, home)

    folder = write_plugin(home / "plugins" / "outdoors", "weather", "",
                          manifest=WEATHER_MANIFEST, files={"cli.py": WEATHER_CLI})
    assert "weather" in listed(capsys)[0]
    assert "weather" in from_cache(capsys, monkeypatch, home)
    with open(folder / "plugin.yaml", "r+", encoding="utf-8") as handle:  # edited in place
        handle.write(WEATHER_MANIFEST.replace("Print the forecast.", "Say the forecast!!"))
    assert "Say the forecast!!" in listed(capsys)[1]

    monkeypatch.setenv("HERMES_SAFE_MODE", "1")
    assert "weather" not in listed(capsys)[0]
    assert "weather" not in from_cache(capsys, monkeypatch, home)
    monkeypatch.delenv("HERMES_SAFE_MODE")
    assert "weather" in from_cache(capsys, monkeypatch, home)

    write_plugin(home / "plugins", "forecast", "", manifest=FORECAST_MANIFEST,
                 files={"cli.py": WEATHER_CLI})
    assert "forecast" not in from_cache(capsys, monkeypatch, home)  # FORECAST_API_KEY unset
    monkeypatch.setenv("FORECAST_API_KEY", "k")
    assert "forecast" in listed(capsys)[0]
    assert "forecast" in from_cache(capsys, monkeypatch, home)
    entry = (home / INDEX).read_text()
    assert "FORECAST_API_KEY" in entry and '"k"' not in entry  # names kept, values hashed


def test_project_plugins_are_listed_for_the_folder_hermes_runs_in(home, tmp_path, capsys,
                                                                  monkeypatch):
    (home / "config.yaml").write_text("plugins:\n  enabled: [weather]\n")
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    write_plugin(project / ".hermes" / "plugins", "weather", "", manifest=WEATHER_MANIFEST,
                 files={"cli.py": WEATHER_CLI})
    elsewhere.mkdir()
    age(project)
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "1")
    monkeypatch.chdir(project)
    assert "weather" not in from_cache(capsys, monkeypatch, home)  # the folder is not trusted
    (home / "config.yaml").write_text(f"plugins:\n  enabled: [weather]\n"
                                      f"projects:\n  trusted: [{project}]\n")
    assert "weather" in from_cache(capsys, monkeypatch, home)
    monkeypatch.chdir(elsewhere)
    assert "weather" not in listed(capsys)[0]
    monkeypatch.delenv("HERMES_ENABLE_PROJECT_PLUGINS")
    monkeypatch.chdir(project)
    assert "weather" not in listed(capsys)[0]


@pytest.mark.parametrize("garbage", ["{not json", "[]", '{"key": 1}', "",
                                     '{"key": "x", "vars": [], "cwd": false, "watch": []}'])
def test_a_corrupt_cache_is_ignored_and_rewritten(home, capsys, monkeypatch, garbage):
    expected = from_cache(capsys, monkeypatch, home)
    (home / INDEX).write_text(garbage)
    assert listed(capsys)[0] == expected
    entry = json.loads((home / INDEX).read_text())
    assert set(entry["commands"]) >= expected
    assert from_cache(capsys, monkeypatch, home) == expected


def test_a_broken_config_still_lists_every_command_and_config_still_runs(home, capsys,
                                                                        monkeypatch):
    (home / "config.yaml").write_text("plugins: [\n")
    assert {"config", "plugins", "sessions"} <= from_cache(capsys, monkeypatch, home)
    capsys.readouterr()
    assert main(["config", "path"]) == 0
    assert "config.yaml" in capsys.readouterr().out


def test_inputs_changed_within_two_seconds_are_not_stored(home, capsys):
    """A second change within the same timestamp tick would look like no change."""
    (home / "config.yaml").write_text("plugins:\n  disabled: [sessions]\n")
    assert "sessions" not in listed(capsys)[0]
    assert not (home / INDEX).exists()
