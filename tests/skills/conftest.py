"""Helpers for the skills tests: SKILL.md files written into a temporary HERMES_HOME."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_agent.api import ToolCallContext
from hermes_agent.testing import make_kernel

CTX = ToolCallContext(session_id="s1", platform="cli")


def skill_text(name: str, description: str = "", body: str = "", **front: Any) -> str:
    data = {"name": name, "description": description or f"Use {name} for testing", **front}
    return (f"---\n{yaml.safe_dump(data, sort_keys=False)}---\n\n"
            f"{body or f'# {name}' + chr(10) + chr(10) + 'Step one.'}\n")


def write_skill(home: Path, category: str, name: str, **front: Any) -> Path:
    folder = home / "skills" / category / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(skill_text(name, **front), encoding="utf-8")
    return folder


@pytest.fixture
def kernel(home: Path) -> Any:
    return make_kernel(home, config={}, env={"HERMES_HOME": str(home)}, builtins=True)


def call(kernel: Any, tool: str, **args: Any) -> dict[str, Any]:
    return json.loads(kernel.tools.dispatch(tool, args, CTX))
