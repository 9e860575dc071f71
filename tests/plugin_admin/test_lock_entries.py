"""plugins.lock is checked once, where it is read: an entry that could aim remove, update,
rollback or install at a folder hermes did not make (a path out of $HERMES_HOME/plugins, a
symbolic link, a name that is a path) or hand pip an option is kept and shown by `plugins
list` and `doctor`, and every command that would act on it refuses with the fix, while the
entries beside it keep working. Real folders in tmp_path; HOME and HERMES_HOME are temporary;
pip runs only in a throw-away virtualenv."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from adminkit import hermes, plugin_folder, snapshot


@pytest.fixture(autouse=True)
def _fake_home(user_home: Path) -> Path:
    return user_home


def _lock(home: Path) -> dict[str, Any]:
    return json.loads((home / "plugins.lock").read_text())["plugins"]


def _write_lock(home: Path, plugins: dict[str, Any]) -> None:
    (home / "plugins.lock").write_text(json.dumps({"lock_version": 1, "plugins": plugins}))


# How each entry is tampered with: (entry name, change to the lock), and a word of the message.
def _dotdot(home: Path, precious: Path, lock: dict[str, Any]) -> str:
    lock["demo"]["path"] = str(home / "plugins" / ".." / ".." / precious.name)
    return "demo"


def _absolute(home: Path, precious: Path, lock: dict[str, Any]) -> str:
    lock["demo"]["path"] = str(precious)
    return "demo"


def _symlink(home: Path, precious: Path, lock: dict[str, Any]) -> str:
    shutil.rmtree(home / "plugins" / "demo")  # the plugin folder becomes a link to precious
    (home / "plugins" / "demo").symlink_to(precious, target_is_directory=True)
    return "demo"


def _dist(home: Path, precious: Path, lock: dict[str, Any]) -> str:
    lock["demo"]["dist"] = "--index-url=http://127.0.0.1:9/simple"
    return "demo"


def _name(home: Path, precious: Path, lock: dict[str, Any]) -> str:
    lock["../../precious"] = lock.pop("demo")
    return "../../precious"


def _not_an_object(home: Path, precious: Path, lock: dict[str, Any]) -> str:
    lock["demo"] = [str(precious)]
    return "demo"


TAMPERED = {"dotdot": (_dotdot, "not a folder in"), "absolute": (_absolute, "not a folder in"),
            "symlink": (_symlink, "symbolic link"), "dist": (_dist, "not a distribution name"),
            "name": (_name, "not a plugin name"), "not-object": (_not_an_object, "not an object")}


@pytest.fixture
def precious(tmp_path: Path) -> Path:
    folder = tmp_path / "precious"
    folder.mkdir()
    (folder / "thesis.txt").write_text("years of work")
    return folder


@pytest.mark.parametrize("how", list(TAMPERED))
def test_a_bad_entry_is_shown_and_refused_and_the_good_one_beside_it_works(
        home, tmp_path, precious, cli, how):
    src = {n: plugin_folder(tmp_path / "src" / n, f"name: {n}\nversion: 1.0.0\n")
           for n in ("demo", "good")}
    for folder in src.values():
        assert cli("plugins", "install", str(folder), "--no-input")[0] == 0
    lock = _lock(home)
    tamper, problem = TAMPERED[how]
    bad = tamper(home, precious, lock)
    _write_lock(home, lock)
    stored = _lock(home)[bad]
    fix = f"edit that entry, or delete it from {home / 'plugins.lock'}"

    # read-only commands work and show the entry's problem with its fix
    code, out, err = cli("plugins", "list")
    assert code == 0, err
    assert f"! the {bad!r} entry of plugins.lock" in out and problem in out and fix in out
    assert "good" in out
    code, out, err = cli("plugins", "list", "--json")
    rows = {row["name"]: row for row in json.loads(out)}
    assert code == 0 and problem in err and "good" in rows and "lock_problem" not in rows["good"]
    if bad in rows:
        assert problem in rows[bad]["lock_problem"]
    code, out, _ = cli("plugins", "doctor")
    assert "[lock_entry]" in out and problem in out and fix in out
    assert code == 0  # a bad entry turns no plugin off

    # every command that would act on the entry refuses, naming the entry and the fix
    src["demo"].joinpath("plugin.yaml").write_text("name: demo\nversion: 2.0.0\n")
    for command in (("remove", bad, "--no-input"), ("update", bad, "--yes"),
                    ("rollback", bad), ("install", str(src["demo"]), "--no-input")):
        if command[0] == "install" and how == "name":
            continue  # the bad entry is not named demo: installing over demo is not over it
        code, _, err = cli("plugins", *command)
        assert code == 1 and problem in err, (command, err)
        assert f"the {bad!r} entry of {home / 'plugins.lock'}" in err
        assert "Edit that entry, or delete it from" in err, (command, err)
        assert snapshot(precious) == {"thesis.txt": b"years of work"}
        assert _lock(home)[bad] == stored

    # the good entry beside it: updated, rolled back and removed; the bad one stays as it was
    src["good"].joinpath("plugin.yaml").write_text("name: good\nversion: 2.0.0\n")
    for command in (("update", "good", "--yes"), ("rollback", "good"),
                    ("remove", "good", "--no-input")):
        code, _, err = cli("plugins", *command)
        assert code == 0, (command, err)
    assert _lock(home) == {bad: stored}
    assert not (home / "plugins" / "good").exists()
    assert snapshot(precious) == {"thesis.txt": b"years of work"}


def test_once_the_entry_is_fixed_the_commands_work(home, tmp_path, precious, cli):
    """The fix the refusal states works: the entry's path edited back, remove goes ahead."""
    assert cli("plugins", "install", str(plugin_folder(tmp_path / "src" / "demo")),
               "--no-input")[0] == 0
    lock = _lock(home)
    right = lock["demo"]["path"]
    lock["demo"]["path"] = str(precious)
    _write_lock(home, lock)
    assert cli("plugins", "remove", "demo", "--no-input")[0] == 1
    lock["demo"]["path"] = right
    _write_lock(home, lock)
    code, out, err = cli("plugins", "remove", "demo", "--no-input")
    assert code == 0 and "Removed demo" in out, err
    assert _lock(home) == {} and not (home / "plugins" / "demo").exists()
    assert snapshot(precious) == {"thesis.txt": b"years of work"}


@pytest.mark.parametrize("change, problem", [
    ({"source": "ftp"}, "records the source 'ftp', which is not one of path, git, pip"),
    ({"spec": 3}, "records spec as 3, not as text"),
    ({"source": "git"}, "records url as None, not as text"),
    ({"source": "pip", "dist": "hermes-demo"}, "records dist_version as None, not as text"),
    ({"history": "old"}, "records a history that is not a list of entries"),
    ({"history": [{"source": "path", "spec": "x", "backup": "/tmp"}]},
     "keeps an older version that records the folder '/tmp', which is not a folder in"),
    ({"capabilities": {"tools": [1]}}, "records capabilities that are not names"),
])
def test_malformed_entries_are_flagged_not_fatal(home, tmp_path, cli, change, problem):
    """A hand-edited entry of the wrong shape would fail deep inside a command (a traceback,
    half done): it is flagged like a tampered one, and listing still works."""
    assert cli("plugins", "install", str(plugin_folder(tmp_path / "src" / "demo")),
               "--no-input")[0] == 0
    lock = _lock(home)
    lock["demo"].update(change)
    _write_lock(home, lock)
    code, out, err = cli("plugins", "list")
    assert code == 0 and problem in out, out + err
    code, _, err = cli("plugins", "update", "demo", "--yes")
    assert code == 1 and problem in err and "Edit that entry, or delete it from" in err
    assert "Traceback" not in err


def test_an_installed_entry_is_sound(home, tmp_path, cli):
    src = plugin_folder(tmp_path / "src" / "demo")
    assert cli("plugins", "install", str(src), "--no-input")[0] == 0
    src.joinpath("plugin.yaml").write_text("name: demo\nversion: 2.0.0\n")
    assert cli("plugins", "update", "demo", "--yes")[0] == 0  # an entry with a history
    code, out, err = cli("plugins", "list")
    assert code == 0 and "plugins.lock" not in out + err


def test_an_unreadable_lock_does_not_stop_list_or_doctor(home, tmp_path, cli):
    assert cli("plugins", "install", str(plugin_folder(tmp_path / "src" / "demo")),
               "--no-input")[0] == 0
    (home / "plugins.lock").write_text("{not json")
    code, out, err = cli("plugins", "list")
    assert code == 0 and "demo" in out and "plugins.lock is unreadable" in out, err
    code, out, _ = cli("plugins", "doctor")
    assert "[lock_unreadable]" in out and "restore it from a backup or delete it" in out
    code, _, err = cli("plugins", "update", "demo", "--yes")
    assert code == 1 and "is unreadable" in err and "restore it from a backup" in err


# --- each place a tampered entry reached before it was checked once --------------------


def _tamper(home: Path, name: str, **changes: str) -> None:
    path = home / "plugins.lock"
    data = json.loads(path.read_text())
    data["plugins"][name].update(changes)
    path.write_text(json.dumps(data))


def test_remove_refuses_a_lock_path_outside_plugins(home, tmp_path, precious, cli):
    src = plugin_folder(tmp_path / "src" / "demo")
    assert cli("plugins", "install", str(src), "--no-input")[0] == 0
    _tamper(home, "demo", path=str(precious))
    shutil.rmtree(home / "plugins" / "demo")  # not discovered: the lock's path is used
    code, _, err = cli("plugins", "remove", "demo", "--no-input")
    assert snapshot(precious) == {"thesis.txt": b"years of work"}
    assert code == 1 and "not a folder in" in err and "plugins.lock" in err
    _tamper(home, "demo", path=str(home / "plugins" / ".." / ".." / "precious"))
    code, _, err = cli("plugins", "remove", "demo", "--no-input")
    assert code == 1 and snapshot(precious) == {"thesis.txt": b"years of work"}


def test_remove_refuses_a_lock_name_that_is_a_path(python, home, tmp_path, precious, cli):
    """A lock entry named ../../precious sharing a distribution with the removed plugin: its
    backup and plugin-data folders ($HERMES_HOME/plugin-data/../../precious) were deleted."""
    src = plugin_folder(tmp_path / "src" / "demo")
    assert cli("plugins", "install", str(src), "--no-input")[0] == 0
    path = home / "plugins.lock"
    data = json.loads(path.read_text())
    data["plugins"]["demo"]["dist"] = "no-such-dist-attack"
    data["plugins"]["../../precious"] = {"source": "pip", "spec": "x",
                                         "dist": "no-such-dist-attack"}
    path.write_text(json.dumps(data))
    proc = hermes(python, home, "plugins", "remove", "demo", "--no-input")  # runs pip uninstall
    assert snapshot(precious) == {"thesis.txt": b"years of work"}
    assert proc.returncode == 1 and "is not a plugin name" in proc.stderr, proc.stderr
    assert (home / "plugins" / "demo" / "plugin.yaml").exists()


def test_update_and_rollback_refuse_a_lock_path_outside_plugins(home, tmp_path, precious, cli):
    src = plugin_folder(tmp_path / "src" / "demo")
    assert cli("plugins", "install", str(src), "--no-input")[0] == 0
    (src / "plugin.yaml").write_text("name: demo\nversion: 2.0.0\n")
    assert cli("plugins", "update", "demo", "--yes")[0] == 0
    _tamper(home, "demo", path=str(precious))
    (src / "plugin.yaml").write_text("name: demo\nversion: 3.0.0\n")
    code, _, err = cli("plugins", "update", "demo", "--yes")
    assert snapshot(precious) == {"thesis.txt": b"years of work"}
    assert code == 1 and "not a folder in" in err
    code, _, err = cli("plugins", "rollback", "demo")
    assert snapshot(precious) == {"thesis.txt": b"years of work"}
    assert code == 1 and "not a folder in" in err
    lock = json.loads((home / "plugins.lock").read_text())["plugins"]["demo"]
    _tamper(home, "demo", path=str(home / "plugins" / "demo"),
            history=[{**lock["history"][0], "backup": str(precious)}])
    code, _, err = cli("plugins", "rollback", "demo")
    assert snapshot(precious) == {"thesis.txt": b"years of work"}
    assert code == 1 and "not a folder in" in err
    installed = home / "plugins" / "demo" / "plugin.yaml"
    assert installed.read_text() == "name: demo\nversion: 2.0.0\n"


def test_update_refuses_a_history_backup_outside_plugin_backups(home, tmp_path, precious, cli):
    """The oldest recorded version falls off on an update and its backup folder is deleted:
    a history entry edited to name another folder had that folder deleted."""
    src = plugin_folder(tmp_path / "src" / "demo")
    assert cli("plugins", "install", str(src), "--no-input")[0] == 0
    (src / "plugin.yaml").write_text("name: demo\nversion: 2.0.0\n")
    assert cli("plugins", "update", "demo", "--yes")[0] == 0
    lock = json.loads((home / "plugins.lock").read_text())["plugins"]["demo"]
    old = lock["history"][0]
    _tamper(home, "demo", history=[old, {**old}, {**old, "backup": str(precious)}])
    (src / "plugin.yaml").write_text("name: demo\nversion: 3.0.0\n")
    code, _, err = cli("plugins", "update", "demo", "--yes")
    assert snapshot(precious) == {"thesis.txt": b"years of work"}
    assert code == 1 and "not a folder in" in err and "plugin-backups" in err
    installed = home / "plugins" / "demo" / "plugin.yaml"
    assert installed.read_text() == "name: demo\nversion: 2.0.0\n"


def test_remove_refuses_a_lock_distribution_that_is_an_option(python, home, tmp_path, cli):
    """The lock's distribution name went to `pip uninstall`: `--log=FILE` made pip write FILE
    (and `-rFILE` would uninstall everything FILE lists)."""
    src = plugin_folder(tmp_path / "src" / "demo")
    assert cli("plugins", "install", str(src), "--no-input")[0] == 0
    marker = tmp_path / "pip.log"
    _tamper(home, "demo", dist=f"--log={marker}")
    proc = hermes(python, home, "plugins", "remove", "demo", "--no-input")
    assert not marker.exists()
    assert proc.returncode == 1 and "not a distribution name" in proc.stderr, proc.stderr
    assert (home / "plugins" / "demo" / "plugin.yaml").exists()


def test_remove_refuses_a_plugin_folder_linked_from_elsewhere(home, tmp_path, cli):
    """Already safe: a plugin folder that is a link to a folder outside $HERMES_HOME/plugins is
    not moved or deleted by remove."""
    outside = plugin_folder(tmp_path / "work" / "linked", "name: linked\n")
    (home / "plugins" / "linked").symlink_to(outside)
    before = snapshot(outside)
    code, _, err = cli("plugins", "remove", "linked", "--no-input")
    assert code == 1 and "remove it by hand" in err
    assert snapshot(outside) == before and (home / "plugins" / "linked").is_symlink()
