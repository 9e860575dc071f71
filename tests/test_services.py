"""Services: how one plugin offers a capability to the others without being imported."""

from __future__ import annotations

import pytest

from hermes_agent import HermesError
from hermes_agent.testing import make_kernel


class Greeter:
    def __init__(self, kernel):
        self.kernel = kernel
        self.closed = False

    def greet(self, who: str) -> str:
        return f"hello {who}"

    def close(self) -> None:
        self.closed = True


def offers_greeter(ctx):
    ctx.register_service("greeter", Greeter)


def test_a_service_is_built_once_per_kernel_with_the_kernel(tmp_path) -> None:
    kernel = make_kernel(tmp_path, plugins=[offers_greeter])
    first = kernel.service("greeter")
    assert first.greet("you") == "hello you"
    assert first.kernel is kernel
    assert kernel.service("greeter") is first
    assert kernel.service_owner("greeter") == "offers_greeter"


def test_a_missing_service_names_the_fix(tmp_path) -> None:
    kernel = make_kernel(tmp_path)
    with pytest.raises(HermesError, match="no plugin offers the service 'greeter'.*plugins list"):
        kernel.service("greeter")
    with pytest.raises(LookupError):
        kernel.service("greeter")


def test_two_plugins_offering_one_service_fail_the_later(tmp_path) -> None:
    def offers_greeter_too(ctx):
        ctx.register_tool("greet_tool", "misc", {"name": "greet_tool", "parameters": {}},
                          lambda args, **kw: "{}")
        ctx.register_service("greeter", Greeter)

    kernel = make_kernel(tmp_path, plugins=[offers_greeter])
    status = kernel.register_plugin(offers_greeter_too)
    assert status.state == "failed"
    assert "greeter" in status.reason and "offers_greeter" in status.reason
    assert "greet_tool" not in kernel.tools.tools  # transactional: nothing else registered
    assert kernel.service_owner("greeter") == "offers_greeter"


def test_unregistering_the_offering_plugin_closes_and_removes_its_service(tmp_path) -> None:
    kernel = make_kernel(tmp_path, plugins=[offers_greeter])
    greeter = kernel.service("greeter")
    kernel.unregister_plugin("offers_greeter")
    assert greeter.closed
    with pytest.raises(LookupError):
        kernel.service("greeter")


def test_register_service_checks_its_arguments(tmp_path) -> None:
    def bad(ctx):
        ctx.register_service("", None)

    kernel = make_kernel(tmp_path)
    status = kernel.register_plugin(bad)
    assert status.state == "failed"
    assert "register_service(name, factory)" in status.reason


# --- typed keys --------------------------------------------------------------------------

def test_a_service_key_reaches_a_service_offered_by_name_and_the_other_way_round(tmp_path):
    from hermes_agent import ServiceKey

    greeter_key = ServiceKey("greeter", Greeter)

    def offers_by_key(ctx):
        ctx.register_service(ServiceKey("keyed", Greeter), Greeter)

    kernel = make_kernel(tmp_path, plugins=[offers_greeter, offers_by_key])
    assert kernel.service(greeter_key) is kernel.service("greeter")  # a third party's name
    assert kernel.service_owner(greeter_key) == "offers_greeter"
    assert kernel.service("keyed") is kernel.service(ServiceKey("keyed", Greeter))
    assert kernel.service_owner("keyed") == "offers_by_key"
    board = kernel.service(ServiceKey("board", dict), dict)  # a plugin's own per-kernel state
    assert kernel.service("board") is board


def test_a_service_is_still_named_by_keyword_as_before_keys(tmp_path):
    kernel = make_kernel(tmp_path, plugins=[
        lambda ctx: ctx.register_service(name="kw", factory=Greeter)])
    assert kernel.service(name="kw").greet("you") == "hello you"
    assert kernel.service_owner(name="kw") is not None


def test_a_service_key_needs_a_name_and_the_facade_offers_it():
    import hermes_agent
    from hermes_agent.service_keys import ServiceKey

    assert hermes_agent.ServiceKey is ServiceKey
    assert str(ServiceKey("agent", object)) == "agent"
    with pytest.raises(TypeError, match="non-empty name"):
        ServiceKey("", object)


SHARED = {"AGENT": "agent", "MODELS": "models", "APPROVAL_GATE": "core-tools",
          "INJECTION_SCAN": "agent", "PLUGIN_HEALTH": "plugin-admin", "CRON": "cron",
          "GATEWAY": "gateway", "MCP": "mcp"}


@pytest.fixture(scope="module")
def booted(tmp_path_factory):
    kernel = make_kernel(tmp_path_factory.mktemp("home"), builtins=True)
    yield kernel
    kernel.close()


@pytest.mark.parametrize("key_name", sorted(SHARED))
def test_each_shared_key_returns_its_protocol_on_a_booted_kernel(booted, key_name) -> None:
    from hermes_agent import api

    key = getattr(api, key_name)
    service = booted.service(key)
    assert isinstance(service, key.type), f"{key.name}: {type(service).__name__}"
    assert booted.service_owner(key) == SHARED[key_name]
    assert booted.service(key.name) is service  # the same service by its plain name


def test_the_prompt_layer_registry_has_its_key(booted) -> None:
    from hermes_agent.api import PROMPT_LAYERS, PromptLayers, prompt_layers

    assert isinstance(booted.service(PROMPT_LAYERS, PromptLayers), PromptLayers)
    assert prompt_layers(booted) is booted.service(PROMPT_LAYERS)


def test_the_agent_service_builds_a_session_whose_turn_is_an_agent_turn(tmp_path, fake_llm):
    from hermes_agent.api import AGENT, AgentSession, AgentTurn
    from hermes_agent.testing.fake_llm import reply_text

    config = {"model": {"provider": "custom", "base_url": fake_llm.openai_base_url,
                        "default": "fake-model", "max_retries": 0},
              "sessions": {"auto_title": False}}
    kernel = make_kernel(tmp_path, config=config, builtins=True)
    try:
        agent = kernel.service(AGENT).create(platform="cli")
        assert isinstance(agent, AgentSession)
        fake_llm.script(reply_text("hi"))
        turn = agent.run_conversation("hello")
        assert isinstance(turn, AgentTurn)
        assert turn.final_response == "hi" and turn.session_id == agent.session_id
        agent.finalize("shutdown")
    finally:
        kernel.close()


def test_the_stores_declare_what_they_offer_besides_the_session_store() -> None:
    import importlib

    from hermes_agent.api import (GatewayQueue, LastActiveSessions, SessionImporter,
                                  SessionStore, SharedQueueStore)
    from hermes_agent.builtin_plugins.sessions.store import SqliteSessionStore

    pg = "hermes_agent.plugins.session-stores.postgres"
    postgres = importlib.import_module(f"{pg}.store").PostgresSessionStore("postgresql://x")
    queue_class = importlib.import_module(f"{pg}.gateway_queue").SharedGatewayQueue
    for store in (postgres, SqliteSessionStore.__new__(SqliteSessionStore)):
        assert isinstance(store, SessionStore)
        assert isinstance(store, SessionImporter) and isinstance(store, LastActiveSessions)
    assert isinstance(postgres, SharedQueueStore)
    assert not isinstance(SqliteSessionStore.__new__(SqliteSessionStore), SharedQueueStore)
    missing = [m for m in _members(GatewayQueue) if not callable(getattr(queue_class, m, None))]
    assert not missing, f"the postgres gateway queue lacks {missing}"


# --- no plugin looks a service up by a string or probes a provider ----------------------

SERVICE_CALLS = ("service", "service_owner", "register_service")
# engineer "kernel" replaces these two with typed hooks (issue 32); until then, by name
KERNEL_ASKS = {"plugin_install_times", "find_memory_provider"}
# names too generic to tell a provider's member from another object's
GENERIC = {"name", "error", "message", "close", "interrupt"}


def _members(protocol: type) -> set[str]:
    return {n for n in vars(protocol) if not n.startswith("_")} | set(
        getattr(protocol, "__annotations__", {}))


def _plugin_sources():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for folder in ("builtin_plugins", "plugins"):
        for path in sorted((root / folder).rglob("*.py")):
            yield path.relative_to(root), path.read_text(encoding="utf-8")


def _keys_in(tree) -> set[str]:
    """Names a module binds to a key: imported from hermes_agent.api (or .services), or
    assigned a ``ServiceKey(...)`` call."""
    import ast

    keys: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in (
                "hermes_agent.api", "hermes_agent.api.services"):
            keys |= {a.asname or a.name for a in node.names if a.name.isupper()}
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and getattr(node.value.func, "id", None) == "ServiceKey":
            keys |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return keys


def test_plugins_look_services_up_by_typed_keys_only() -> None:
    import ast

    wrong = []
    for path, text in _plugin_sources():
        tree = ast.parse(text)
        keys = _keys_in(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in SERVICE_CALLS and node.args):
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant) and first.value in KERNEL_ASKS:
                continue
            if not (isinstance(first, ast.Name) and first.id in keys):
                wrong.append(f"{path}:{node.lineno}: {ast.unparse(node)[:70]}")
    assert not wrong, "look services up by a key from hermes_agent.api:\n" + "\n".join(wrong)


def test_plugins_use_what_a_store_or_service_declares_instead_of_probing_it() -> None:
    import ast

    from hermes_agent.api import SessionStore, services, store_capabilities

    contracts = [SessionStore, *(v for m in (services, store_capabilities)
                                 for v in vars(m).values()
                                 if isinstance(v, type) and getattr(v, "_is_protocol", False)
                                 and v.__module__ == m.__name__)]
    declared = set().union(*map(_members, contracts)) - GENERIC
    wrong = []
    for path, text in _plugin_sources():
        for node in ast.walk(ast.parse(text)):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2):
                continue
            target, attr = ast.unparse(node.args[0]), node.args[1]
            probed = attr.value if isinstance(attr, ast.Constant) else None
            if probed in declared or "store" in target.lower() or "service(" in target:
                wrong.append(f"{path}:{node.lineno}: {ast.unparse(node)[:70]}")
    assert not wrong, ("use the declared contract (hermes_agent.api: SessionStore, the store "
                       "capabilities, the services' Protocols):\n" + "\n".join(wrong))


def test_plugins_type_the_kernel_they_are_given() -> None:
    import ast

    untyped = []
    for path, text in _plugin_sources():
        if path.name == "cli_process.py":  # the CLI's process kernel (engineer "cli")
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.arg, ast.AnnAssign)):
                name = node.arg if isinstance(node, ast.arg) else ast.unparse(node.target)
                note = node.annotation
                if name in ("kernel", "_kernel", "self.kernel") and note is not None \
                        and ast.unparse(note).strip("'\"") in ("Any", "Any | None"):
                    untyped.append(f"{path}:{node.lineno}: {name}")
    assert not untyped, "type it as hermes_agent.Kernel:\n" + "\n".join(untyped)
