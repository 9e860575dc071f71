"""A gateway chat's identity reaches the plugins that keep things per chat: memory providers
get the chat and the sender in ``initialize``, as in Hermes Agent 0.19."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from hermes_agent.testing.fake_llm import reply_text, reply_tool_call

from .conftest import running


RECORDER = '''
import json
from pathlib import Path

from agent.memory_provider import MemoryProvider


class Recorder(MemoryProvider):
    @property
    def name(self):
        return "recorder"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        Path(kwargs["hermes_home"], "initialized.json").write_text(json.dumps(kwargs))

    def get_tool_schemas(self):
        return []
'''


def test_a_memory_provider_learns_the_chat_and_user_of_a_gateway_session(
        kernel_for, server, home: Path) -> None:
    """As in Hermes Agent 0.19, a provider's ``initialize`` gets the gateway's ``chat_id``
    (and the sender as ``user_id``), so it can keep a group chat's memories apart."""
    folder = home / "plugins" / "recorder"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(RECORDER, encoding="utf-8")
    server.script(reply_text("Noted."))
    kernel = kernel_for(memory={"provider": "recorder"})

    async def scenario() -> None:
        async with running(kernel) as (runner, chat):
            await chat.inject("team-room", "alice", "remember the release is on Friday")
            assert await chat.wait_for("team-room", 1) == ["Noted."]

    asyncio.run(scenario())
    seen = json.loads((home / "initialized.json").read_text())
    assert (seen["platform"], seen["user_id"], seen["chat_id"]) == ("testchat", "alice",
                                                                     "team-room")


WHEREAMI = '''
import json
from pathlib import Path


def whereami(args, **kwargs):
    seen = {k: v for k, v in kwargs.items() if isinstance(v, str)}
    Path(kwargs["cwd"], "whereami.json").write_text(json.dumps(seen))
    return json.dumps({"ok": True})


def register(ctx):
    ctx.register_tool("whereami", "testing", {
        "name": "whereami", "description": "Say where the call comes from.",
        "parameters": {"type": "object", "properties": {}}}, whereami)
'''


def test_a_handler_written_for_keyword_arguments_gets_the_chat(
        kernel_for, server, home: Path, tmp_path: Path, monkeypatch) -> None:
    """A ``handler(args, **kwargs)`` tool run in a gateway chat gets ``chat_id`` among its
    keyword arguments, as a context handler gets it on its context."""
    folder = home / "plugins" / "whereami"
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text("name: whereami\n", encoding="utf-8")
    (folder / "__init__.py").write_text(WHEREAMI, encoding="utf-8")
    workdir = tmp_path / "work"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    server.script(reply_tool_call("whereami", {}), reply_text("Here."))
    kernel = kernel_for(plugins={"enabled": ["whereami"]})
    assert kernel.plugins["whereami"].state == "loaded", kernel.plugins["whereami"]

    async def scenario() -> None:
        async with running(kernel) as (runner, chat):
            await chat.inject("team-room", "alice", "where are you?")
            assert await chat.wait_for("team-room", 1) == ["Here."]

    asyncio.run(scenario())
    seen = json.loads((workdir / "whereami.json").read_text())  # the turn's cwd: here
    assert (seen["platform"], seen["chat_id"]) == ("testchat", "team-room")
