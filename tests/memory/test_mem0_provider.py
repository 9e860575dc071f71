"""The mem0 memory provider against the fake Mem0 server: availability, identities, recall
before a turn (and the queued one), storing turns, mirroring builtin memory writes, the
tools, settings and how the plugin loads."""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from pathlib import Path

import pytest
import yaml

from hermes_agent.plugins.memory.mem0.provider import Mem0Provider
from hermes_agent.testing import make_kernel

from .mem0_support import KEY, provider_for


def searches(mem0) -> list:
    return mem0.requests_to("POST", "/v2/memories/search/")


def test_available_with_a_key_or_a_host_without_touching_the_network() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    assert not Mem0Provider({}, {}).is_available()
    assert Mem0Provider({}, {"MEM0_API_KEY": KEY}).is_available()
    assert Mem0Provider({}, {"MEM0_HOST": closed}).is_available()  # self-hosted, no key
    assert Mem0Provider({"host": closed}, {}).is_available()
    assert Mem0Provider({}, {}).name == "mem0"


def test_whose_memories_the_environment_then_settings_then_the_session_then_a_default() -> None:
    def ids(config: dict, env: dict, **kwargs: str) -> tuple[str, str]:
        provider = Mem0Provider(config, {"MEM0_API_KEY": KEY, **env})
        provider.initialize("s", hermes_home="/x", platform="telegram", **kwargs)
        return provider.user_id, provider.agent_id

    assert ids({}, {}) == ("hermes-user", "hermes")
    assert ids({}, {}, user_id="tg-42") == ("tg-42", "hermes")  # the gateway's sender
    assert ids({"user_id": "ada", "agent_id": "bot"}, {}, user_id="tg-42") == ("ada", "bot")
    assert ids({"user_id": "ada"}, {"MEM0_USER_ID": "grace", "MEM0_AGENT_ID": "h2"},
               user_id="tg-42") == ("grace", "h2")


def test_a_finished_turn_is_stored_with_its_session(mem0) -> None:
    provider = provider_for(mem0)
    provider.sync_turn("I drink green tea", "Noted, green tea.", session_id="session-1")
    request = mem0.requests_to("POST", "/v1/memories/")[0]
    assert request.body == {
        "messages": [{"role": "user", "content": "I drink green tea"},
                     {"role": "assistant", "content": "Noted, green tea."}],
        "user_id": "alice", "agent_id": "hermes",
        "metadata": {"source": "hermes", "session_id": "session-1", "platform": "cli"}}
    provider.sync_turn("", "nothing asked")
    assert len(mem0.requests) == 1
    assert not provider_for(mem0, sync_turns=False).sync_turn("x", "y")
    assert len(mem0.requests) == 1


def test_recall_is_the_users_memories_as_a_list(mem0) -> None:
    mem0.seed("I drink green tea", user_id="alice")
    mem0.seed("I drink black coffee", user_id="bob")
    provider = provider_for(mem0, top_k=3)
    recall = provider.prefetch("what do I drink?")
    assert recall == "Mem0 memories about the user:\n- I drink green tea"
    assert searches(mem0)[0].body == {"query": "what do I drink?", "top_k": 3,
                                      "filters": {"AND": [{"user_id": "alice"}]}}
    assert provider.prefetch("   ") == "" and len(searches(mem0)) == 1
    assert provider.prefetch("quantum chromodynamics") == ""


def test_a_queued_recall_serves_the_next_matching_prefetch_once(mem0) -> None:
    mem0.seed("I drink green tea", user_id="alice")
    provider = provider_for(mem0)
    provider.queue_prefetch("what do I drink?")
    assert len(searches(mem0)) == 1
    assert "green tea" in provider.prefetch("what do I drink?")
    assert len(searches(mem0)) == 1  # served from the queued recall
    assert "green tea" in provider.prefetch("what do I drink?")
    assert len(searches(mem0)) == 2  # consumed: searched again
    provider.queue_prefetch("what do I drink?")
    provider.prefetch("something else about drinks")
    assert searches(mem0)[-1].body["query"] == "something else about drinks"


def test_a_failing_or_hung_mem0_gives_no_recall_within_the_budget(mem0, caplog) -> None:
    provider = provider_for(mem0, prefetch_timeout=0.5)
    mem0.fail(500, always=True)
    with caplog.at_level(logging.WARNING, logger="hermes_agent.plugins.mem0"):
        assert provider.prefetch("tea") == ""
    assert "recall failed: Mem0 at http://127.0.0.1" in caplog.text and "HTTP 500" in caplog.text
    mem0.clear_faults()
    mem0.hang(30, always=True)
    started = time.monotonic()
    assert provider.prefetch("tea") == ""
    assert time.monotonic() - started < 3


def test_a_down_mem0_is_paused_and_then_costs_nothing(mem0) -> None:
    provider = provider_for(mem0, failure_threshold=2, cooldown=60)
    mem0.fail(503, always=True)
    provider.prefetch("tea")
    provider.sync_turn("hello", "hi")
    assert provider.breaker.is_open and len(mem0.requests) == 2
    provider.prefetch("tea")
    provider.sync_turn("hello", "hi")
    result = json.loads(provider.handle_tool_call("mem0_search", {"query": "tea"}))
    assert len(mem0.requests) == 2  # no request while paused
    assert result["error_type"] == "mem0_unavailable" and "paused" in result["error"]


def test_the_tools_add_search_and_forget(mem0) -> None:
    provider = provider_for(mem0)
    names = [s["name"] for s in provider.get_tool_schemas()]
    assert names == ["mem0_search", "mem0_add", "mem0_forget"]
    saved = json.loads(provider.handle_tool_call("mem0_add", {"content": "Ada prefers tabs"}))
    assert saved["saved"][0]["memory"] == "Ada prefers tabs" and saved["queued"] is False
    add = mem0.requests_to("POST", "/v1/memories/")[0].body
    assert add["infer"] is False and add["metadata"]["source"] == "hermes_tool"
    found = json.loads(provider.handle_tool_call("mem0_search", {"query": "tabs", "top_k": 2}))
    assert found["count"] == 1 and found["results"][0]["memory"] == "Ada prefers tabs"
    assert searches(mem0)[0].body["top_k"] == 2
    memory_id = found["results"][0]["id"]
    assert json.loads(provider.handle_tool_call("mem0_forget", {"memory_id": memory_id})) == \
        {"deleted": memory_id}
    assert mem0.memories() == []
    again = json.loads(provider.handle_tool_call("mem0_forget", {"memory_id": memory_id}))
    assert again["error_type"] == "mem0_error" and "HTTP 404" in again["error"]


def test_tool_argument_errors_are_tool_errors(mem0) -> None:
    provider = provider_for(mem0)
    assert "needs a 'query'" in json.loads(provider.handle_tool_call("mem0_search", {}))["error"]
    assert "'content'" in json.loads(provider.handle_tool_call("mem0_add", {"content": " "}))[
        "error"]
    assert "'memory_id'" in json.loads(provider.handle_tool_call("mem0_forget", {}))["error"]
    bad = json.loads(provider.handle_tool_call("mem0_search", {"query": "x", "top_k": "many"}))
    assert "bad arguments" in bad["error"]
    assert "no tool 'mem0_dance'" in json.loads(provider.handle_tool_call("mem0_dance", {}))[
        "error"]
    assert mem0.requests == []


def test_builtin_memory_writes_are_mirrored(mem0) -> None:
    provider = provider_for(mem0)
    provider.on_memory_write("add", "user", "Prefers dark mode")
    [stored] = mem0.memories()
    assert stored["memory"] == "Prefers dark mode" and stored["user_id"] == "alice"
    assert stored["metadata"] == {"source": "hermes_builtin_memory", "target": "user",
                                  "session_id": "session-1", "platform": "cli"}
    assert mem0.requests_to("POST", "/v1/memories/")[0].body["infer"] is False
    provider.on_memory_write("replace", "user", "Prefers light mode",
                             {"old_text": "dark", "replaced": "Prefers dark mode"})
    assert [(m["id"], m["memory"]) for m in mem0.memories()] == [
        (stored["id"], "Prefers light mode")]
    provider.on_memory_write("remove", "user", "Prefers light mode", {"old_text": "light"})
    assert mem0.memories() == []
    provider.on_memory_write("replace", "memory", "Uses zsh", {"replaced": "never mirrored"})
    assert [m["memory"] for m in mem0.memories()] == ["Uses zsh"]
    quiet = provider_for(mem0, mirror_builtin_memory=False)
    before = len(mem0.requests)
    quiet.on_memory_write("add", "user", "Likes cats")
    assert len(mem0.requests) == before


def test_settings_with_wrong_values_fall_back_to_defaults(caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="hermes_agent.plugins.mem0"):
        provider = Mem0Provider({"top_k": "many", "timeout": -1, "sync_turns": "off",
                                 "max_retries": "4"}, {"MEM0_API_KEY": KEY})
    settings = provider.settings
    assert (settings.top_k, settings.timeout, settings.sync_turns, settings.max_retries) == \
        (5, 10.0, False, 4)
    assert "plugins.entries.mem0.top_k = 'many' is not a int" in caplog.text


def test_save_config_writes_settings_to_config_yaml_and_the_key_to_env(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("# my settings\nmemory:\n  provider: mem0  # chosen\n")
    provider = Mem0Provider({}, {})
    keys = {field["key"] for field in provider.get_config_schema()}
    assert {"api_key", "host", "user_id", "agent_id", "top_k"} <= keys
    assert next(f for f in provider.get_config_schema() if f["key"] == "api_key")["secret"]
    provider.save_config({"MEM0_API_KEY": KEY, "user_id": "ada", "top_k": "7",
                          "sync_turns": "no", "host": ""}, str(home))
    text = (home / "config.yaml").read_text()
    assert "# my settings" in text and "provider: mem0  # chosen" in text
    assert yaml.safe_load(text)["plugins"]["entries"]["mem0"] == {
        "user_id": "ada", "top_k": 7, "sync_turns": False}
    assert KEY not in text
    assert f"MEM0_API_KEY={KEY}" in (home / ".env").read_text()
    assert os.stat(home / ".env").st_mode & 0o777 == 0o600
    with pytest.raises(ValueError, match="no setting 'colour'"):
        provider.save_config({"colour": "blue"}, str(home))


def test_the_bundled_plugin_loads_when_selected_and_reads_its_settings(tmp_path: Path) -> None:
    config = {"memory": {"provider": "mem0"},
              "plugins": {"entries": {"mem0": {"top_k": 3, "agent_id": "ops"}}}}
    kernel = make_kernel(tmp_path / "a", config=config, env={"MEM0_API_KEY": KEY})
    provider = kernel.slots.get("memory", "mem0")
    assert provider.is_available() and provider.settings.top_k == 3
    assert provider.agent_id == "ops"
    idle = make_kernel(tmp_path / "b", env={"MEM0_API_KEY": KEY})
    assert idle.plugins["mem0"].state != "loaded"  # not selected: stays off
    keyless = make_kernel(tmp_path / "c", config=config)
    status = keyless.plugins["mem0"]
    assert status.state != "loaded" and "MEM0_API_KEY" in status.reason


def test_shutdown_closes_the_client_and_a_later_call_opens_a_new_one(mem0) -> None:
    provider = provider_for(mem0)
    first = provider.client
    provider.shutdown()
    assert first.closed
    provider.sync_turn("still here", "yes")
    assert provider.client is not first and len(mem0.memories()) == 1
    provider.shutdown()
    provider.shutdown()  # twice is fine
