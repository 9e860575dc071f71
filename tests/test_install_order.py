"""Tool-name clashes are decided by install time, never by alphabetical load order: the
plugin installed first keeps the name; the later one fails, and doctor says why."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
import yaml

from hermes_agent import Kernel, PluginRecord
from hermes_agent.cli import root as cli_root
from hermes_agent.discovery import EntryPointRef
from hermes_agent.builtin_plugins.plugin_admin.install_order import install_stamp
from hermes_agent.policy import by_install_time, format_stamp
from hermes_agent.testing import write_plugin

WEATHER = """\
def register(ctx):
    ctx.register_tool("weather", "{name}", {{"name": "weather", "description": "{name}",
                      "parameters": {{"type": "object", "properties": {{}}}}}},
                      lambda args, **kw: '"{name}"')
"""
DAY = 86_400


def install(home: Path, name: str, days_ago: int) -> Path:
    """A plugin folder as if copied into place ``days_ago`` days ago."""
    directory = write_plugin(home / "plugins", name, WEATHER.format(name=name),
                             manifest=f"name: {name}\nprovides_tools: [weather]\n")
    stamp = time.time() - days_ago * DAY
    for path in (directory / "__init__.py", directory / "plugin.yaml", directory):
        os.utime(path, (stamp, stamp))
    return directory


@pytest.fixture
def pair(home: Path) -> Path:
    (home / "config.yaml").write_text(yaml.safe_dump({"plugins": {"enabled": ["alpha", "zeta"]}}))
    return home


def boot(home: Path) -> Kernel:
    return Kernel(home, env={"HERMES_HOME": str(home)}, entry_points=False).boot()


@pytest.mark.parametrize(("alpha_days", "zeta_days", "keeper", "loser"), [
    (1, 30, "zeta", "alpha"),  # alpha sorts first but was installed later
    (30, 1, "alpha", "zeta"),
])
def test_the_earlier_installed_plugin_keeps_the_tool(pair: Path, alpha_days: int, zeta_days: int,
                                                     keeper: str, loser: str) -> None:
    install(pair, "alpha", alpha_days)
    install(pair, "zeta", zeta_days)
    for _ in range(2):  # the first load adds __pycache__ (touching the folders): same verdict
        kernel = boot(pair)
        assert kernel.plugins[keeper].state == "loaded"
        assert kernel.tools.tools["weather"].plugin == keeper
        lost = kernel.plugins[loser]
        assert (lost.state, lost.code) == ("failed", "duplicate")
        assert lost.clash == {"kind": "tool", "name": "weather", "kept_by": keeper,
                              "lost_by": loser}
        assert f"'{keeper}' keeps it because '{keeper}' was installed first" in lost.reason
        assert list(kernel.plugins)[-2:] == ["alpha", "zeta"]  # listed by name, as discovered


def test_doctor_explains_who_kept_the_tool_and_how_to_fix_it(pair: Path, capsys) -> None:
    install(pair, "alpha", 1)
    install(pair, "zeta", 30)
    assert cli_root.main(["plugins", "doctor", "--load", "--json"]) == 1  # alpha is enabled, not active
    reports = {r["name"]: r for r in json.loads(capsys.readouterr().out)["plugins"]}
    (reason,) = [r for r in reports["alpha"]["reasons"] if r["code"] == "duplicate"]
    assert "tool 'weather' is registered by both plugin 'zeta' and plugin 'alpha'" in reason["message"]
    assert format_stamp(time.time_ns() - 30 * DAY * 10**9)[:10] in reason["message"]
    assert "hermes plugins disable alpha" in reason["fix"]
    assert "hermes plugins disable zeta" in reason["fix"] and "rename the tool" in reason["fix"]
    (note,) = [r for r in reports["zeta"]["reasons"] if r["code"] == "kept_name"]
    assert "keeps tool 'weather'" in note["message"] and "'alpha'" in note["message"]
    assert cli_root.main(["plugins", "list"]) == 0
    listing = capsys.readouterr().out
    assert "alpha" in listing and "'zeta' keeps it" in listing


def test_the_lock_records_install_time_over_file_times(pair: Path) -> None:
    install(pair, "alpha", 30)  # older files, but installed (per the lock) after zeta
    install(pair, "zeta", 1)
    lock = {"lock_version": 1, "plugins": {
        "alpha": {"source": "path", "installed_at": "2026-03-02T00:00:00Z"},
        "zeta": {"source": "path", "installed_at": "2026-03-05T00:00:00Z",  # updated later...
                 "history": [{"installed_at": "2026-03-01T00:00:00Z"}]}}}  # ...first installed
    (pair / "plugins.lock").write_text(json.dumps(lock))
    kernel = boot(pair)
    assert kernel.tools.tools["weather"].plugin == "zeta"
    assert "2026-03-01 00:00:00 UTC" in kernel.plugins["alpha"].reason


def test_equal_install_times_are_decided_by_name(pair: Path) -> None:
    for name in ("zeta", "alpha"):
        install(pair, name, 5)
    stamp = os.stat(pair / "plugins" / "zeta").st_mtime
    for name in ("alpha", "zeta"):
        for path in (pair / "plugins" / name, pair / "plugins" / name / "plugin.yaml"):
            os.utime(path, (stamp, stamp))
    kernel = boot(pair)
    assert kernel.tools.tools["weather"].plugin == "alpha"
    assert "of equal install times the name sorting first keeps it" in kernel.plugins["zeta"].reason


def test_entry_points_use_their_record_time_and_the_lock_wins(tmp_path: Path) -> None:
    def entry(name: str, stamp: int) -> PluginRecord:
        return PluginRecord(name, "entrypoint", None,
                            entry_point=EntryPointRef("hermes_agent.plugins", name, "m:f",
                                                      dist_stamp=stamp))

    records = [entry("aa-new", 300), entry("mm-old", 100), entry("zz-unknown", 0)]
    stamps = {r.name: install_stamp(r, {}) for r in records}
    assert [r.name for r in by_install_time(records, stamps)] == ["zz-unknown", "mm-old", "aa-new"]
    assert install_stamp(entry("mm-old", 100), {"mm-old": 7}) == 7  # the lock wins


def test_shipped_plugins_load_before_installed_ones(pair: Path) -> None:
    """The install times come from plugin-admin, itself a shipped plugin: every shipped plugin
    is loaded before the first installed one."""
    install(pair, "alpha", 1)
    install(pair, "zeta", 30)
    trail = pair / "trail.txt"
    kernel = Kernel(pair, env={"HERMES_HOME": str(pair), "HERMES_LOAD_TRAIL": str(trail)},
                    entry_points=False).boot()
    order = trail.read_text().split()
    shipped = [name for name, s in kernel.plugins.items() if s.record.source in ("builtin", "bundled")
               and name in order]
    assert "plugin-admin" in shipped and order[-2:] == ["zeta", "alpha"]
    assert set(order[:-2]) == set(shipped)


def test_without_plugin_admin_installed_plugins_load_by_name(pair: Path) -> None:
    install(pair, "alpha", 1)
    install(pair, "zeta", 30)
    kernel = Kernel(pair, env={"HERMES_HOME": str(pair)}, entry_points=False, builtins=False).boot()
    assert kernel.tools.tools["weather"].plugin == "alpha"  # no install times: by name
    assert "'alpha' was loaded first" in kernel.plugins["zeta"].reason
