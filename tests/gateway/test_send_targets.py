"""How send_message and hermes send name a chat (targets.py), and where the control socket
goes when $HERMES_HOME is too deep for a Unix socket's path."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.builtin_plugins.gateway.control import socket_path
from hermes_agent.builtin_plugins.gateway.targets import Directory, Target, TargetError


class Config(dict):
    def get(self, key: str, default: Any = None) -> Any:  # "platforms.<name>" lookups
        node: Any = self
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node


def directory(env: dict[str, str] | None = None, **platforms: Any) -> Directory:
    return Directory(Config(platforms=platforms), env or {}, sorted(platforms),
                     known_chat=lambda key: key == "matrix:!room:example.org")


def test_targets_resolve_as_in_the_original() -> None:
    d = directory(telegram={"home_channel": "-100123:17", "channels": {"#Ops": "-100999"}},
                  matrix={}, discord={"channels": {"ops": "600"}})
    assert d.resolve("telegram") == Target("telegram", "-100123", "17", "Home")
    assert d.resolve("telegram:-100555:42") == Target("telegram", "-100555", "42")
    assert d.resolve("telegram:#ops").chat_id == "-100999"  # names: no '#', any case
    assert d.resolve("telegram:OPS").chat_id == "-100999"
    assert d.resolve("matrix:!room:example.org") == Target("matrix", "!room:example.org")
    with pytest.raises(TargetError, match="several platforms"):
        d.resolve("ops")
    with pytest.raises(TargetError, match="no channel named '#nope'"):
        d.resolve("telegram:#nope")
    with pytest.raises(TargetError, match="matrix has no home channel.*MATRIX_HOME_CHANNEL"):
        d.resolve("matrix")


def test_the_home_channel_may_come_from_the_environment() -> None:
    d = directory({"TELEGRAM_HOME_CHANNEL": "42", "TELEGRAM_HOME_CHANNEL_NAME": "Me"},
                  telegram={})
    assert d.resolve("telegram") == Target("telegram", "42", None, "Me")
    assert d.resolve("me").chat_id == "42"


def test_only_chats_the_owner_allowed_pass_the_check() -> None:
    d = directory({"TELEGRAM_ALLOWED_USERS": "1001", "SIGNAL_ALLOWED_CHATS": "+15550001"},
                  telegram={"home_channel": "-1", "allowed_chats": [-100777]}, signal={},
                  matrix={})
    for allowed in ("telegram", "telegram:1001", "telegram:-100777", "signal:+15550001",
                    "matrix:!room:example.org"):
        d.check(d.resolve(allowed))
    for refused in ("telegram:1002", "signal:+15550002", "matrix:!other:example.org"):
        with pytest.raises(TargetError, match="not a chat hermes may send to"):
            d.check(d.resolve(refused))


def test_a_home_too_deep_for_a_socket_path_gets_one_in_a_private_folder(tmp_path: Path,
                                                                       monkeypatch) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    deep = tmp_path / ("d" * 120) / "home"
    path = socket_path(deep)
    assert path.parent == tmp_path / "run" / f"hermes-{os.getuid()}"
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
    assert socket_path(deep) == path and socket_path(tmp_path / "other" / ("e" * 120)) != path
    assert socket_path(tmp_path / "h") == tmp_path / "h" / "gateway" / "control.sock"
