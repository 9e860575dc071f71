"""What hermes creates under HERMES_HOME is private to its owner, whatever the umask: folders
0700, .env and a new config.yaml 0600. Folders and files the user made keep their modes."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_agent import Kernel
from hermes_agent.kits.files import set_env_values
from hermes_agent.cli.root import main
from hermes_agent.testing import make_kernel


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def permissive_umask() -> Iterator[None]:
    """The common default, under which a plain mkdir gives 0755 and a file 0644."""
    old = os.umask(0o022)
    yield
    os.umask(old)


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HERMES_HOME that does not exist yet, two folders deep in a 0755 folder."""
    outer = tmp_path / "outer"
    outer.mkdir()
    os.chmod(outer, 0o755)
    path = outer / "profiles" / "hermes-home"
    monkeypatch.setenv("HERMES_HOME", str(path))
    for name in ("HERMES_RAISE_ERRORS", "HERMES_SAFE_MODE", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return path


def test_a_home_the_kernel_creates_is_0700(fresh: Path) -> None:
    Kernel(fresh, env={"HERMES_HOME": str(fresh)}, entry_points=False, builtins=False).boot()
    assert mode(fresh) == 0o700 and mode(fresh.parent) == 0o700  # both created by hermes
    assert mode(fresh / "cache") == 0o700
    assert mode(fresh.parent.parent) == 0o755  # it existed: left alone


def test_an_existing_home_keeps_its_mode(tmp_path: Path) -> None:
    home = tmp_path / "mine"
    home.mkdir(mode=0o750)
    os.chmod(home, 0o750)
    make_kernel(home)
    assert mode(home) == 0o750 and mode(home / "cache") == 0o700


def test_plugin_data_dir_is_0700(tmp_path: Path) -> None:
    seen: list[Path] = []
    make_kernel(tmp_path / "h", plugins=[lambda ctx: seen.append(ctx.data_dir)])
    assert mode(seen[0]) == 0o700 and mode(seen[0].parent) == 0o700


def test_set_env_values_writes_0600_in_a_0700_home(fresh: Path) -> None:
    set_env_values(fresh / ".env", {"OPENAI_API_KEY": "sk-abc"})
    assert mode(fresh) == 0o700 and mode(fresh / ".env") == 0o600
    os.chmod(fresh / ".env", 0o644)  # loosened by hand: the next write tightens it again
    set_env_values(fresh / ".env", {"OTHER": "x"})
    assert mode(fresh / ".env") == 0o600
    assert (fresh / ".env").read_text() == "OPENAI_API_KEY=sk-abc\nOTHER=x\n"


def test_hermes_setup_on_a_fresh_home(fresh: Path) -> None:
    code = main(["setup", "--provider", "openai", "--api-key", "sk-setup-123", "--model", "gpt-x",
                 "--no-test", "--yes"])
    assert code == 0
    assert mode(fresh) == 0o700 and mode(fresh / ".env") == 0o600
    assert mode(fresh / "config.yaml") == 0o600
    assert "OPENAI_API_KEY=sk-setup-123" in (fresh / ".env").read_text()


def test_config_set_creates_0600_and_keeps_a_users_mode(fresh: Path) -> None:
    assert main(["config", "set", "memory.provider", "x"]) == 0
    assert mode(fresh / "config.yaml") == 0o600
    os.chmod(fresh / "config.yaml", 0o640)
    assert main(["config", "set", "memory.provider", "y"]) == 0
    assert mode(fresh / "config.yaml") == 0o640


def test_write_atomic_durable_syncs_the_file_and_its_folder(tmp_path: Path, monkeypatch) -> None:
    from hermes_agent import write_atomic

    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    write_atomic(tmp_path / "cache.json", "{}")
    assert synced == []  # caches: no fsync
    write_atomic(tmp_path / "MEMORY.md", "fact\n", mode=0o600, durable=True)
    assert len(synced) == 2  # the file before the rename, the folder after it
    assert (tmp_path / "MEMORY.md").read_text() == "fact\n"
    assert (tmp_path / "MEMORY.md").stat().st_mode & 0o777 == 0o600


# --- $HERMES_HOME/.env and auth.json written by hand -------------------------------------

def test_a_loose_env_is_made_private_at_start_and_the_user_told(
        fresh: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``echo KEY=... >> ~/.hermes/.env`` under umask 022 creates a 0644 file."""
    fresh.mkdir(parents=True)
    env = fresh / ".env"
    with open(env, "a") as handle:  # what the shell's >> does
        handle.write("OPENROUTER_API_KEY=sk-or-v1-test\n")
    (fresh / "auth.json").write_text("{}")
    os.chmod(fresh / "auth.json", 0o664)
    assert mode(env) == 0o644
    assert main(["config", "path"]) == 0
    err = capsys.readouterr().err
    assert mode(env) == 0o600 and mode(fresh / "auth.json") == 0o600
    assert f"{env} holds keys and was readable by other users (mode 0644)" in err
    assert "sk-or-v1-test" not in err
    assert main(["config", "path"]) == 0  # once tightened, nothing more to say
    assert "holds keys" not in capsys.readouterr().err


def test_a_private_env_is_left_alone(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("A=1\n")
    os.chmod(env, 0o400)  # the user's own stricter choice stays
    kernel = Kernel(tmp_path, env={}, entry_points=False, builtins=False)
    assert mode(env) == 0o400 and not any("holds keys" in w for w in kernel.config.warnings)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="giving a file to another user needs root")
def test_an_env_owned_by_another_user_is_not_changed_but_warned_about(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("A=1\n")
    os.chmod(env, 0o644)
    os.chown(env, 65534, 65534)  # nobody's file in my home: not mine to change
    kernel = Kernel(tmp_path, env={}, entry_points=False, builtins=False)
    assert mode(env) == 0o644
    said = [w for w in kernel.config.startup_warnings if "holds keys" in w]
    assert said and "owned by another user" in said[0] and f"chmod 600 {env}" in said[0]


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root may chmod any file")
def test_an_env_that_cannot_be_changed_is_warned_about(tmp_path: Path) -> None:
    """A .env that is a link to a file of another user (here root's /etc/passwd, 0644): chmod
    fails, the warning says what to run."""
    target = Path("/etc/passwd")
    if not target.exists() or mode(target) & 0o077 == 0 or target.stat().st_uid == os.getuid():
        pytest.skip("needs another user's readable file")
    (tmp_path / ".env").symlink_to(target)
    kernel = Kernel(tmp_path, env={}, entry_points=False, builtins=False)
    said = [w for w in kernel.config.startup_warnings if "holds keys" in w]
    assert said and "chmod 600" in said[0] and mode(target) & 0o077
