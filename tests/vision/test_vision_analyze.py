"""``vision_analyze`` answers a question about an image through the auxiliary ``vision``
model: a model that cannot see is told where the user's image is saved, calls the tool with
that path, and the auxiliary model (another provider, per ``auxiliary.vision``) gets the
image in its own wire format. URLs obey the web SSRF policy."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from hermes_agent.builtin_plugins.agent.loop import Agent, AgentOptions
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call

from .support import ImageSite, agent_kernel, data_url, image_bytes, png, sent_images


def test_a_blind_model_looks_through_the_vision_model(tmp_path: Path,
                                                      fake_llm: FakeLLMServer) -> None:
    home = tmp_path / "home"
    picture = png(6, 6)
    saved = home / "images" / f"{hashlib.sha256(picture).hexdigest()}.png"
    kernel = agent_kernel(
        home, {"provider": "custom", "base_url": fake_llm.openai_base_url, "default": "blind",
               "max_retries": 0},
        {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake_llm.url},
        auxiliary={"vision": {"provider": "anthropic", "model": "claude-haiku-4-5"}})
    fake_llm.script(
        reply_tool_call("vision_analyze", {"image_url": str(saved),
                                           "question": "What colour is it?"}),
        reply_text("It is a red square."),  # the auxiliary vision model
        reply_text("Your picture is a red square."))
    agent = Agent(kernel, AgentOptions(stream=False))
    result = agent.run_conversation([{"type": "text", "text": "what is this?"},
                                     {"type": "image_url", "image_url": {"url": data_url(picture)}}])
    assert result.final_response == "Your picture is a red square."
    main, aux, last = fake_llm.posts()
    assert main.style == "chat" and sent_images(main) == []
    assert f"saved at {saved}" in json.dumps(main.body["messages"])
    assert aux.style == "anthropic" and aux.body["model"] == "claude-haiku-4-5"
    [block] = sent_images(aux)
    assert image_bytes(block, "anthropic") == picture
    assert "What colour is it?" in json.dumps(aux.body["messages"])
    tool_result = [m for m in last.body["messages"] if m["role"] == "tool"][-1]["content"]
    assert "It is a red square." in tool_result and '"width": 6' in tool_result


def test_an_image_url_on_a_private_address_needs_the_web_policy(
        tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    picture = png(2, 2)
    model = {"provider": "custom", "base_url": fake_llm.openai_base_url, "default": "m",
             "max_retries": 0, "supports_vision": True}
    with ImageSite(picture) as site:
        refused = agent_kernel(tmp_path / "a", model)
        fake_llm.script(reply_tool_call("vision_analyze", {"image_url": site.url,
                                                           "question": "what?"}),
                        reply_text("could not look"))
        Agent(refused, AgentOptions(stream=False)).run_conversation("look at it")
        result = [m for m in fake_llm.posts()[-1].body["messages"] if m["role"] == "tool"]
        assert "cannot fetch the image" in result[-1]["content"] and site.hits == 0

        allowed = agent_kernel(tmp_path / "b", model, web={"allow_private_networks": True})
        fake_llm.script(reply_tool_call("vision_analyze", {"image_url": site.url,
                                                           "question": "what?"}),
                        reply_text("Two by two."), reply_text("done"))
        Agent(allowed, AgentOptions(stream=False)).run_conversation("look at it")
        assert site.hits == 1
    aux = fake_llm.posts()[-2]
    [block] = sent_images(aux)
    assert image_bytes(block, "chat") == picture
    tool = [m for m in fake_llm.posts()[-1].body["messages"] if m["role"] == "tool"][-1]
    assert "Two by two." in tool["content"]


def test_a_blind_auxiliary_model_is_not_asked(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    (tmp_path / "a.png").write_bytes(png())
    kernel = agent_kernel(tmp_path / "home", {
        "provider": "custom", "base_url": fake_llm.openai_base_url, "default": "text-only",
        "max_retries": 0})
    fake_llm.script(reply_tool_call("vision_analyze", {"image_url": str(tmp_path / "a.png"),
                                                       "question": "what?"}),
                    reply_text("no luck"))
    Agent(kernel, AgentOptions(stream=False)).run_conversation("look at a.png")
    assert len(fake_llm.posts()) == 2  # the main model twice; no vision call
    tool = [m for m in fake_llm.posts()[-1].body["messages"] if m["role"] == "tool"][-1]
    assert "custom/text-only, which does not see images" in tool["content"]
    assert "auxiliary.vision.provider" in tool["content"]
