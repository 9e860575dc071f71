"""Shell hooks in throwaway homes: a ``$HOME`` outside /tmp (the sandbox's private /tmp would
hide one under the host's /tmp altogether) holding ``$HERMES_HOME``, a workspace inside it,
real shell scripts as hooks, and kernels with the builtin plugins started in the workspace."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_agent import Kernel
from hermes_agent.builtin_plugins.shell_hooks.allowlist import Allowlist

SECRET = "SENTINEL-shell-hook-secret-7f3a"


@dataclass
class World:
    home: Path  # $HOME
    hermes: Path  # $HERMES_HOME
    work: Path  # the workspace (the kernel's working directory)
    kernels: list[Kernel]

    def script(self, name: str, body: str) -> Path:
        """An executable ``#!/bin/sh`` script in the workspace."""
        path = self.work / name
        path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
        path.chmod(0o755)
        return path

    def configure(self, hooks: dict[str, Any], **more: Any) -> None:
        config = {"hooks": hooks, "sessions": {"auto_title": False}, **more}
        (self.hermes / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")

    def approve(self, event: str, command: str | Path) -> None:
        assert Allowlist(self.hermes).approve(event, str(command))

    def kernel(self, env: dict[str, str] | None = None) -> Kernel:
        kernel = Kernel(self.hermes, env={"HERMES_HOME": str(self.hermes), **(env or {})},
                        cwd=self.work, entry_points=False, builtins=True)
        kernel.boot()
        self.kernels.append(kernel)
        return kernel


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    base = Path(tempfile.mkdtemp(prefix="hermes-shellhooks-", dir="/var/tmp"))
    home = base / "home"
    hermes = home / ".hermes"
    work = home / "proj"
    for folder in (hermes, work):
        folder.mkdir(parents=True)
    (hermes / ".env").write_text(f"OPENROUTER_API_KEY={SECRET}\n", encoding="utf-8")
    (home / ".bashrc").write_text("# keep me\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HERMES_HOME", str(hermes))
    monkeypatch.chdir(work)
    made = World(home, hermes, work, [])
    yield made
    for kernel in made.kernels:
        kernel.close()
    shutil.rmtree(base, ignore_errors=True)


PreToolCall = Callable[..., Any]


def fire_pre_tool_call(kernel: Kernel, tool: str = "terminal", **args: Any) -> Any:
    """``pre_tool_call`` as the tool executor fires it."""
    return kernel.hooks.fire("pre_tool_call", tool_name=tool, args=args or {"command": "ls"},
                             task_id="t1", session_id="s1", tool_call_id="c1", turn_id="u1",
                             api_request_id="a1", middleware_trace=[])
