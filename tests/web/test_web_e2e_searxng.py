"""End to end: the agent, driven by the fake model server, calls ``web_search`` (SearXNG,
against the fake SearXNG) and then ``web_extract`` (the local extractor, fetching the page the
fake SearXNG serves on 127.0.0.1, hence ``web.allow_private_networks: true``), and answers
with what the page says. The local extractor needs trafilatura (the web-local extra): without
it the test is skipped and says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import hermes_agent.builtin_plugins.web  # noqa: F401 - the tools under test, never skipped

pytest.importorskip("trafilatura", reason="the local extractor's library is not installed: "
                                          "pip install 'hermes-agent-runtime[web-local]'")

from hermes_agent.builtin_plugins.agent.loop import Agent  # noqa: E402
from hermes_agent.kits.fence import unfence  # noqa: E402
from hermes_agent.testing import make_kernel  # noqa: E402
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call  # noqa: E402
from hermes_agent.testing.fake_web import FakeSearXNG  # noqa: E402

FACT = "steep Tieguanyin oolong at 92 degrees for exactly 50 seconds"
PARAGRAPHS = [
    "Oolong sits between green and black tea: partly oxidised, rolled, and roasted to taste. "
    "Its leaves unfurl slowly, which is why the first infusion is kept short.",
    f"The tea house's rule of thumb is simple: {FACT}, then add ten seconds for every "
    "further infusion. Water that is too hot turns the cup bitter; too cool and it stays flat.",
    "A small pot or gaiwan works best, with about five grams of leaf for every hundred "
    "millilitres of water, and the leaves can be infused six or seven times.",
]
PAGE = ("<!doctype html><html><head><title>Brewing oolong tea</title></head><body>"
        "<nav><a href='/'>Home</a> | <a href='/shop'>Shop</a></nav><main><article>"
        "<h1>Brewing oolong tea</h1>" + "".join(f"<p>{p}</p>" for p in PARAGRAPHS) +
        "</article></main><footer>© The tea house</footer></body></html>")


def tool_results(body: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}


def test_the_agent_searches_then_extracts_through_searxng(home: Path) -> None:
    with FakeLLMServer() as model, FakeSearXNG() as searxng:
        page_url = searxng.serve_page("/guides/oolong.html", PAGE)
        searxng.add("Brewing oolong tea", page_url,
                    "How long and how hot to brew oolong tea, infusion by infusion.")
        searxng.add("Green tea", "https://green.example/", "Green tea, briefly brewed.")
        config = {
            "model": {"provider": "custom", "base_url": model.openai_base_url,
                      "default": "fake-model", "max_retries": 0},
            "web": {"backend": "searxng", "extract_backend": "local",
                    "allow_private_networks": True},
        }
        kernel = make_kernel(home, config=config, builtins=True,
                             env={"HERMES_HOME": str(home), "SEARXNG_URL": searxng.url})
        model.script(
            reply_tool_call("web_search", {"query": "brew oolong tea", "limit": 3}, id="s1"),
            reply_tool_call("web_extract", {"urls": [page_url]}, id="e1"),
            reply_text(f"According to the tea house: {FACT}."),
        )
        result = Agent(kernel).run_conversation("How should I brew oolong tea?")
        posts = [p.body for p in model.posts()]
        searched = searxng.requests

    assert result.completed and FACT in result.final_response
    assert [(r.path, r.param("q"), r.param("format")) for r in searched] == [
        ("/search", "brew oolong tea", "json")]
    found = tool_results(posts[1])["s1"]
    assert page_url in found and "Brewing oolong tea" in found
    assert "green.example" not in found  # not a match for every word of the query
    extracted = tool_results(posts[2])["e1"]
    assert FACT in extracted
    assert json.loads(unfence(extracted))  # a JSON-string tool result, in the agent's fence
