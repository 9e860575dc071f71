"""Shell hooks in real agent turns against the fake model server: a ``pre_tool_call`` script
blocks ``terminal`` (the command never runs, the model gets the hook's message), a
``pre_llm_call`` script adds context, ``transform_tool_result`` replaces a result, and a
failing or slow hook never breaks the turn."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from typing import Any

import pytest

from hermes_agent.builtin_plugins.agent.loop import Agent
from hermes_agent.builtin_plugins.core_tools.sandbox.runner import mechanism
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call

from .conftest import World

pytestmark = pytest.mark.skipif(not mechanism().works,
                                reason=f"no sandbox mechanism here: {mechanism().why_none}")


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def model(server: FakeLLMServer) -> dict[str, Any]:
    return {"model": {"provider": "custom", "base_url": server.openai_base_url,
                      "default": "fake-model", "max_retries": 0}}


def tool_results(server: FakeLLMServer) -> list[dict[str, Any]]:
    messages = server.posts()[-1].body["messages"]
    return [json.loads(m["content"]) for m in messages if m["role"] == "tool"]


def test_a_pre_tool_call_script_blocks_terminal_in_a_turn(world: World,
                                                          server: FakeLLMServer) -> None:
    guard = world.script("guard.sh", 'cat > seen.json\n'
                         'echo \'{"action": "block", "message": "no shell today (guard.sh)"}\'\n')
    world.configure({"pre_tool_call": [{"matcher": "terminal", "command": str(guard),
                                        "timeout": 10}]}, **model(server))
    world.approve("pre_tool_call", guard)
    server.script(reply_tool_call("terminal", {"command": "touch ran.txt"}),
                  reply_text("The hook stopped me."))
    turn = Agent(world.kernel()).run_conversation("make a file")
    assert turn.final_response == "The hook stopped me."
    assert not (world.work / "ran.txt").exists()  # the command never ran
    (result,) = tool_results(server)
    assert "no shell today (guard.sh)" in json.dumps(result)
    seen = json.loads((world.work / "seen.json").read_text())
    assert seen["hook_event_name"] == "pre_tool_call"
    assert seen["tool_name"] == "terminal"
    assert seen["tool_input"] == {"command": "touch ran.txt"}
    assert seen["cwd"] == str(world.work) and seen["session_id"] == turn.session_id
    assert set(seen["extra"]) >= {"task_id", "tool_call_id", "turn_id", "middleware_trace"}


def test_the_matcher_chooses_the_tools_and_exit_2_blocks(world: World,
                                                         server: FakeLLMServer) -> None:
    guard = world.script("guard.sh", 'echo "writes are reviewed first" >&2\nexit 2\n')
    world.configure({"pre_tool_call": [{"matcher": "write_file|patch", "command": str(guard)}]},
                    **model(server))
    world.approve("pre_tool_call", guard)
    server.script(reply_tool_call("terminal", {"command": "echo hi > a.txt"}),
                  reply_tool_call("write_file", {"path": "b.txt", "content": "x"}),
                  reply_text("done"))
    Agent(world.kernel()).run_conversation("write two files")
    assert (world.work / "a.txt").read_text() == "hi\n"  # terminal does not match
    assert not (world.work / "b.txt").exists()
    assert "writes are reviewed first" in json.dumps(tool_results(server)[1])


def test_context_and_a_replaced_result_reach_the_model(world: World,
                                                       server: FakeLLMServer) -> None:
    context = world.script("context.sh", 'echo \'{"context": "The deploy freeze is on."}\'\n')
    redact = world.script("redact.sh", 'echo \'{"replace": "[result withheld by policy]"}\'\n')
    world.configure({"pre_llm_call": [{"command": str(context)}],
                     "transform_tool_result": [{"matcher": "terminal", "command": str(redact)}]},
                    **model(server))
    world.approve("pre_llm_call", context)
    world.approve("transform_tool_result", redact)
    server.script(reply_tool_call("terminal", {"command": "echo secret-output"}),
                  reply_text("ok"))
    Agent(world.kernel()).run_conversation("deploy")
    first = server.posts()[0].body["messages"]
    assert "The deploy freeze is on." in first[-1]["content"]
    tool = [m for m in server.posts()[-1].body["messages"] if m["role"] == "tool"]
    assert tool[0]["content"] == "[result withheld by policy]"


def test_a_failing_and_a_slow_hook_never_break_the_turn(world: World, server: FakeLLMServer,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    broken = world.script("broken.sh", 'echo "oops" >&2\nexit 1\n')
    slow = world.script("slow.sh", 'sleep 30\necho \'{"action": "block", "message": "late"}\'\n')
    garbage = world.script("garbage.sh", "echo 'not json {'\n")
    world.configure({"pre_tool_call": [{"command": str(broken)}, {"command": str(garbage)},
                                       {"command": str(slow), "timeout": 1}]}, **model(server))
    for script in (broken, slow, garbage):
        world.approve("pre_tool_call", script)
    server.script(reply_tool_call("terminal", {"command": "echo hi > a.txt"}), reply_text("ok"))
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="hermes_agent.shell_hooks"):
        turn = Agent(world.kernel()).run_conversation("go")
    assert turn.final_response == "ok" and (world.work / "a.txt").exists()
    assert time.monotonic() - started < 20  # the slow hook was killed at its timeout
    text = caplog.text
    assert "broken.sh` failed (exit 1): oops" in text
    assert "slow.sh` timed out after 1 s and was killed" in text


def test_a_python_plugins_block_comes_before_a_shell_hooks(world: World) -> None:
    """Shell hooks are subscribed after every plugin loaded (a user's plugin too): a Python
    plugin's directive wins, as in Hermes Agent 0.19."""
    from hermes_agent.testing import write_plugin

    from .conftest import fire_pre_tool_call

    write_plugin(world.hermes / "plugins", "python-guard", """
        def guard(tool_name, **kwargs):
            return {"action": "block", "message": "python"}

        def register(ctx):
            ctx.register_hook("pre_tool_call", guard)
        """, manifest="name: python-guard\nversion: 1.0.0\nprovides_hooks: [pre_tool_call]\n")
    guard = world.script("guard.sh", 'echo \'{"action": "block", "message": "shell"}\'\n')
    world.configure({"pre_tool_call": [{"command": str(guard)}]},
                    plugins={"enabled": ["python-guard"]})
    world.approve("pre_tool_call", guard)
    kernel = world.kernel()
    assert kernel.plugins["python-guard"].state == "loaded"
    labels = [c.plugin for c in kernel.hooks.callbacks("pre_tool_call")]
    assert labels.index("python-guard") < labels.index("shell-hooks")
    assert fire_pre_tool_call(kernel) == {"action": "block", "message": "python"}
