"""The sandbox policy from config.yaml: the workspace rule, the hidden paths, the modes, and
the ``sandbox:`` section's validation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from hermes_agent.builtin_plugins.core_tools.config_schema import SandboxSection, TerminalSection
from hermes_agent.builtin_plugins.core_tools.sandbox.policy import (
    HOME_CREDENTIALS, policy_for)


class Config(dict):
    """``config.get(dotted)`` over a nested dict, as the kernel's config reads."""

    def get(self, dotted: str, default: Any = None) -> Any:
        node: Any = self
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    (path / "proj").mkdir(parents=True)
    return path


def policy(home: Path, cwd: Path, **config: Any):
    return policy_for(Config(config), cwd, home / ".hermes", env={"HOME": str(home)})


def test_project_folder_is_the_workspace_and_only_it_is_writable(home: Path) -> None:
    found = policy(home, home / "proj")
    assert found.mode == "workspace" and found.confined and found.network
    assert found.workspace == (home / "proj").resolve()
    assert found.may_write((home / "proj" / "a" / "b").resolve())
    assert not found.may_write((home / "other").resolve())
    assert not found.may_write(Path("/etc/passwd"))


@pytest.mark.parametrize("where", ["~", "/", "/etc", "/usr", "/tmp"])
def test_home_root_and_system_folders_are_never_the_workspace(home: Path, where: str) -> None:
    cwd = home if where == "~" else Path(where)
    found = policy(home, cwd)
    assert found.workspace is None and found.writable == ()
    assert "project folder" in found.why_no_workspace
    assert not found.may_write((cwd / "x").resolve())


def test_hidden_paths_are_hermes_home_credentials_and_configured_ones(home: Path) -> None:
    found = policy(home, home / "proj", sandbox={"hidden_paths": ["~/secrets", "/srv/keys"]})
    hidden = set(found.hidden)
    assert (home / ".hermes").resolve() in hidden
    for name in (".ssh", ".aws", ".gnupg", ".netrc", ".config/gh", ".docker", ".bash_history",
                 ".python_history", ".local/share/fish/fish_history"):
        assert name in HOME_CREDENTIALS and (home / name).resolve() in hidden
    assert (home / "secrets").resolve() in hidden and Path("/srv/keys") in hidden
    assert found.is_hidden(Path("/etc/shadow")) and found.is_hidden(Path("/etc/gshadow"))
    assert found.is_hidden((home / ".ssh" / "id_rsa").resolve())
    assert found.is_hidden((home / ".hermes" / ".env").resolve())
    assert not found.is_hidden((home / "proj" / "x").resolve())


def test_hidden_wins_over_writable_inside_the_workspace(home: Path) -> None:
    found = policy(home, home / "proj", sandbox={"hidden_paths": [".secrets"]})
    assert not found.may_write((home / "proj" / ".secrets" / "k").resolve())
    assert found.may_write((home / "proj" / "src").resolve())


def test_writable_paths_add_roots(home: Path) -> None:
    found = policy(home, home / "proj", terminal={"writable_paths": ["~/.cache/pip", "/srv/out"]})
    assert found.may_write((home / ".cache" / "pip" / "x").resolve())
    assert found.may_write(Path("/srv/out/y"))
    assert not found.may_write((home / ".cache" / "other").resolve())


def test_strict_has_no_network_whatever_network_says(home: Path) -> None:
    assert not policy(home, home / "proj", sandbox={"mode": "strict", "network": True}).network
    assert not policy(home, home / "proj", sandbox={"network": False}).network
    assert policy(home, home / "proj", sandbox={"network": True}).network


def test_off_lifts_everything_and_an_unknown_mode_never_falls_open(home: Path) -> None:
    off = policy(home, home / "proj", sandbox={"mode": "off"})
    assert not off.confined and off.may_write(Path("/etc/passwd"))
    assert not off.is_hidden((home / ".ssh").resolve())
    typo = policy(home, home / "proj", sandbox={"mode": "of"})
    assert typo.mode == "workspace" and not typo.may_write(Path("/etc/passwd"))


def test_approvals_off_does_not_lift_the_sandbox(home: Path) -> None:
    found = policy(home, home / "proj", approvals={"mode": "off"})
    assert found.confined and not found.may_write(Path("/etc/x"))


def test_sandbox_section_validation() -> None:
    assert SandboxSection().mode == "workspace" and SandboxSection().network is True
    assert SandboxSection(mode=False).mode == "off"  # YAML's bare `off`
    assert SandboxSection(hidden_paths="~/k").hidden_paths == ["~/k"]
    for bad in ({"mode": "loose"}, {"mode": True}, {"netwrok": False}):
        with pytest.raises(ValidationError):
            SandboxSection(**bad)
    assert TerminalSection(writable_paths="~/.cache").writable_paths == ["~/.cache"]
