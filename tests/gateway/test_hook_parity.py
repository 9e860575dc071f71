"""A turn through the gateway fires the same hooks, in the same order, as the same turn
through the agent API that ``hermes chat -q`` drives."""

from __future__ import annotations

import asyncio
from typing import Any

from hermes_agent.hookspecs import EVENT_HOOKS
from hermes_agent.testing.fake_llm import reply_text, reply_tool_call

from .conftest import running


def test_a_gateway_turn_fires_the_hooks_of_a_cli_turn(kernel_for, server, gate):
    fired: list[str] = []

    def recorder(name: str) -> Any:
        def record(**_: Any) -> None:
            fired.append(name)
        return record

    hooks = {name: recorder(name) for name in EVENT_HOOKS if name != "pre_gateway_dispatch"}
    gate.opened.set()
    script = (reply_tool_call("wait_gate", {}), reply_text("done"))
    kernel = kernel_for(hooks=hooks)

    server.script(*script)
    fired.clear()
    agent = kernel.service("agent").create(platform="cli")
    assert agent.run_conversation("open the gate").final_response == "done"
    cli = list(fired)

    server.script(*script)
    fired.clear()

    async def scenario() -> None:
        async with running(kernel) as (_, chat):
            await chat.inject("A", "alice", "open the gate")
            assert await chat.wait_for("A", 1) == ["done"]
            turn = list(fired)
            assert turn == cli, "the gateway turn fired other hooks than the CLI turn"

    asyncio.run(scenario())
    assert {"on_session_start", "pre_llm_call", "pre_tool_call", "post_tool_call"} <= set(cli)
