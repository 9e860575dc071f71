"""docs/hooks.md's Middleware section documents the kinds the kernel knows, each with the
arguments the agent passes (recorded in a real turn), and docs/writing-plugins.md points to it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.context import MIDDLEWARE_KINDS
from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call

DOCS = Path(__file__).resolve().parent.parent / "docs"
KIND_HEADING = re.compile(r"### `([a-z_]+)`")


def _middleware_section() -> str:
    text = (DOCS / "hooks.md").read_text(encoding="utf-8")
    start = text.index("\n## Middleware\n")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def documented_arguments() -> dict[str, list[str]]:
    """kind -> the names on its ``Arguments:`` line, from each ``### `kind` `` subsection."""
    found: dict[str, list[str]] = {}
    kind = None
    for line in _middleware_section().splitlines():
        heading = KIND_HEADING.fullmatch(line.strip())
        if heading:
            kind = heading.group(1)
            assert kind not in found, f"{kind} has two subsections"
            found[kind] = []
        elif line.startswith("Arguments:") and kind is not None:
            assert not found[kind], f"{kind}: two Arguments lines"
            found[kind] = re.findall(r"`([a-z_]+)`", line)
    return found


RECORDER = """
PAYLOADS = {}

def register(ctx):
    def request(kind, key):
        def record(**payload):
            PAYLOADS[kind] = sorted(payload)
        return record

    def execution(kind):
        def record(next_call, **payload):
            PAYLOADS[kind] = sorted([*payload, "next_call"])
            return next_call()
        return record

    ctx.register_middleware("tool_request", request("tool_request", "args"))
    ctx.register_middleware("llm_request", request("llm_request", "request"))
    ctx.register_middleware("tool_execution", execution("tool_execution"))
    ctx.register_middleware("llm_execution", execution("llm_execution"))
"""


@pytest.fixture
def recorded(home: Path, calculator: Path) -> Iterator[dict[str, list[str]]]:
    import sys

    from hermes_agent.builtin_plugins.agent.loop import Agent
    from hermes_agent.testing import write_plugin

    write_plugin(home / "plugins", "recorder", RECORDER)
    with FakeLLMServer() as server:
        kernel = make_kernel(home, config={
            "model": {"provider": "custom", "base_url": server.openai_base_url,
                      "default": "fake-model", "max_retries": 0},
            "plugins": {"enabled": ["calculator", "recorder"]},
            "sessions": {"auto_title": False}}, env={"HERMES_HOME": str(home)}, builtins=True)
        server.script(reply_tool_call("calculate", {"expression": "1+1"}), reply_text("2"))
        assert Agent(kernel).run_conversation("1+1?").final_response == "2"
        yield sys.modules["hermes_plugins.recorder"].PAYLOADS
        kernel.close()


def test_every_kind_has_a_subsection_and_nothing_else() -> None:
    assert list(documented_arguments()) == list(MIDDLEWARE_KINDS)
    table = _middleware_section().split("```")[0]
    for kind in MIDDLEWARE_KINDS:
        assert f"| `{kind}` |" in table, f"the kinds table lacks {kind}"


def test_arguments_lines_are_what_the_agent_passes(recorded: dict[str, list[str]]) -> None:
    documented = documented_arguments()
    assert set(recorded) == set(MIDDLEWARE_KINDS)
    for kind in MIDDLEWARE_KINDS:
        assert sorted(documented[kind]) == recorded[kind], kind
        assert len(set(documented[kind])) == len(documented[kind]), f"{kind}: a name twice"


def test_writing_plugins_describes_register_middleware() -> None:
    text = (DOCS / "writing-plugins.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines()
               if line.startswith("| `register_middleware(kind, callback)`"))
    for kind in MIDDLEWARE_KINDS:
        assert f"`{kind}`" in row
    assert "hooks.md#middleware" in row and "## Middleware" in text


def test_hook_docs_name_the_middleware_trace() -> None:
    text = (DOCS / "hooks.md").read_text(encoding="utf-8")
    for hook in ("pre_tool_call", "post_tool_call", "pre_api_request"):
        body = text.split(f"\n## {hook}\n", 1)[1].split("\n## ", 1)[0]
        prose = [line for line in body.splitlines() if not line.startswith("Arguments:")]
        assert "middleware_trace" in "\n".join(prose), f"{hook}: the trace is not explained"
