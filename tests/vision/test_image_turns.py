"""An image in a user message reaches the model as image content in each API mode (real
provider plugins against the fake LLM server), is stored by reference, and is described in
text to a model that cannot see."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hermes_agent.builtin_plugins.agent.loop import Agent, AgentOptions
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

from .support import MODES, agent_kernel, data_url, image_bytes, mode_settings, png, sent_images


@pytest.mark.parametrize("mode", MODES)
def test_an_image_part_reaches_the_model_as_an_image(tmp_path: Path, fake_llm: FakeLLMServer,
                                                     mode: str) -> None:
    model, env = mode_settings(mode, fake_llm)
    kernel = agent_kernel(tmp_path / "home", model, env)
    picture = png(4, 3)
    fake_llm.script(reply_text("a red square"), reply_text("still red"))
    agent = Agent(kernel, AgentOptions(stream=False))
    result = agent.run_conversation([{"type": "text", "text": "what is this?"},
                                     {"type": "image_url", "image_url": {"url": data_url(picture)}}])
    assert result.final_response == "a red square"
    request = fake_llm.posts()[-1]
    [block] = sent_images(request)
    assert image_bytes(block, request.style) == picture
    # a second turn sends the stored image again, from its file
    agent.run_conversation("and now?")
    [again] = sent_images_in_history(fake_llm.posts()[-1])
    assert image_bytes(again, fake_llm.posts()[-1].style) == picture


def sent_images_in_history(request):  # type: ignore[no-untyped-def]
    body = request.body
    if request.style == "responses":
        items = [i for i in body["input"] if i.get("role") == "user"]
        return [p for i in items if isinstance(i["content"], list) for p in i["content"]
                if p.get("type") == "input_image"]
    users = [m for m in body["messages"] if m["role"] == "user"]
    kind = "image" if request.style == "anthropic" else "image_url"
    return [b for m in users if isinstance(m["content"], list) for b in m["content"]
            if b.get("type") == kind]


def test_the_session_keeps_a_reference_not_the_bytes(tmp_path: Path,
                                                     fake_llm: FakeLLMServer) -> None:
    model, env = mode_settings("chat_completions", fake_llm)
    home = tmp_path / "home"
    kernel = agent_kernel(home, model, env)
    picture = png(5, 5)
    fake_llm.script(reply_text("ok"))
    agent = Agent(kernel, AgentOptions(stream=False))
    agent.run_conversation([{"type": "text", "text": "look"},
                            {"type": "image_url", "image_url": {"url": data_url(picture)}}])
    agent.finalize()
    files = list((home / "images").iterdir())
    assert len(files) == 1 and files[0].read_bytes() == picture
    assert oct(files[0].stat().st_mode & 0o777) == "0o600"
    with sqlite3.connect(home / "state.db") as db:
        [content] = [row[0] for row in db.execute(
            "SELECT content FROM messages WHERE role = 'user'")]
    assert f"hermes-image:{files[0].name}" in content
    assert data_url(picture).split(",")[1] not in content


def test_a_model_that_cannot_see_gets_a_description(tmp_path: Path,
                                                    fake_llm: FakeLLMServer) -> None:
    model, env = mode_settings("chat_completions", fake_llm)
    model["supports_vision"] = False
    kernel = agent_kernel(tmp_path / "home", model, env)
    fake_llm.script(reply_text("I cannot see it"))
    Agent(kernel, AgentOptions(stream=False)).run_conversation(
        [{"type": "text", "text": "what is this?"},
         {"type": "image_url", "image_url": {"url": data_url(png(640, 480))}, "image": {
             "name": "cat.png"}}])
    users = [m for m in fake_llm.posts()[-1].body["messages"] if m["role"] == "user"]
    parts = users[-1]["content"]
    assert not [p for p in parts if p.get("type") == "image_url"]
    described = " ".join(p["text"] for p in parts)
    assert "[image: cat.png, 640x480," in described and "vision_analyze" in described


def test_an_oversized_image_is_refused_with_the_limit(tmp_path: Path,
                                                       fake_llm: FakeLLMServer) -> None:
    model, env = mode_settings("chat_completions", fake_llm)
    kernel = agent_kernel(tmp_path / "home", model, env, vision={"max_image_bytes": 100})
    fake_llm.script(reply_text("ok"))
    events: list[dict] = []
    Agent(kernel, AgentOptions(stream=False)).run_conversation(
        [{"type": "text", "text": "look"},
         {"type": "image_url", "image_url": {"url": data_url(png(64, 64) + b"\0" * 200)}}],
        on_event=events.append)
    notes = [e["message"] for e in events if e.get("reason") == "image"]
    assert notes and "vision.max_image_bytes" in notes[0]
    users = [m for m in fake_llm.posts()[-1].body["messages"] if m["role"] == "user"]
    assert "[image not attached:" in str(users[-1]["content"])
