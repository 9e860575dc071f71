"""What the model writes to last beyond the session is capped and scanned: `skill_manage`
(skills.max_skill_bytes) and the `memory` tool (memory.memory_char_limit,
memory.user_char_limit) refuse an oversized write and every shape of the injection probe,
saying why, and nothing reaches the next session's prompt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.api import ToolCallContext
from hermes_agent.builtin_plugins.agent.prompt import build_system_prompt
from hermes_agent.errors import ConfigError
from hermes_agent.testing import make_kernel

from .conftest import call, skill_text


def _probes() -> list[tuple[str, str]]:
    """The probe corpus of the scanner's tests (tests/agent_prompt/probe_corpus.py)."""
    import importlib.util

    path = Path(__file__).parents[1] / "agent_prompt" / "probe_corpus.py"
    spec = importlib.util.spec_from_file_location("probe_corpus", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.PROBES)


PROBES = _probes()

# one text of each shape of the probe
SHAPES = list({category: text for category, text in PROBES}.items())
SAMPLE = [text for _, text in PROBES[::6]] + [text for _, text in SHAPES]


def test_skill_manage_refuses_a_skill_over_max_skill_bytes(home: Path) -> None:
    kernel = make_kernel(home, config={"skills": {"max_skill_bytes": 2000}},
                         env={"HERMES_HOME": str(home)}, builtins=True)
    big = skill_text("big", body="Step. " * 400)
    refused = call(kernel, "skill_manage", action="create", name="big", content=big)
    assert "over the 2,000 limit (skills.max_skill_bytes)" in refused["error"]
    assert not list((home / "skills").rglob("big"))
    small = skill_text("small", body="# small\n\n" + "Step. " * 100)
    assert call(kernel, "skill_manage", action="create", name="small", content=small)["success"]
    grown = call(kernel, "skill_manage", action="patch", name="small", old_string="# small",
                 new_string="# small\n" + "Step. " * 400)
    assert "skills.max_skill_bytes" in grown["error"]


def test_the_default_skill_cap_is_100_kb_and_the_key_is_validated(kernel: Any,
                                                                  home: Path) -> None:
    refused = call(kernel, "skill_manage", action="create", name="huge",
                   content=skill_text("huge", body="x" * 150_000))
    assert "over the 100,000 limit" in refused["error"]
    with pytest.raises(ConfigError, match="skills.max_skill_bytes"):
        make_kernel(home, config={"skills": {"max_skill_bytes": 10_000_000}}, builtins=True)


@pytest.mark.parametrize("text", SAMPLE, ids=[t[:30] for t in SAMPLE])
def test_skill_manage_refuses_each_probe_shape(kernel: Any, home: Path, text: str) -> None:
    refused = call(kernel, "skill_manage", action="create", name="probe",
                   content=skill_text("probe", body=f"# probe\n\n{text}"))
    assert "looks like a prompt injection" in refused["error"], refused
    assert not list((home / "skills").rglob("probe"))


@pytest.mark.parametrize("text", SAMPLE, ids=[t[:30] for t in SAMPLE])
def test_memory_refuses_each_probe_shape_and_the_next_prompt_is_unchanged(
        kernel: Any, home: Path, text: str) -> None:
    ctx = ToolCallContext(session_id="s1", platform="cli")
    for target in ("memory", "user"):
        result = json.loads(kernel.tools.dispatch(
            "memory", {"target": target, "action": "add", "content": text}, ctx))
        assert "prompt injection" in result["error"] or "secret" in result["error"], result
    after = build_system_prompt(kernel, session_id="s2", tool_names=["memory"],
                                skip_context_files=True).text
    assert text not in after and "MEMORY (your personal notes)" not in after
    assert not (home / "memories" / "MEMORY.md").exists()
    assert not (home / "memories" / "USER.md").exists()


def test_memory_writes_are_capped_by_the_originals_keys(home: Path) -> None:
    kernel = make_kernel(home, config={"memory": {"memory_char_limit": 100,
                                                  "user_char_limit": 50, "provider": ""}},
                         env={"HERMES_HOME": str(home)}, builtins=True)
    ctx = ToolCallContext(session_id="s1", platform="cli")
    for target, limit in (("memory", 100), ("user", 50)):
        result = json.loads(kernel.tools.dispatch(
            "memory", {"target": target, "action": "add", "content": "z" * (limit + 1)}, ctx))
        assert f"over its limit of {limit}" in result["error"]
    assert not (home / "memories" / "MEMORY.md").exists()
