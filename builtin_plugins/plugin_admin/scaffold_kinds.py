"""Per-kind templates for `hermes plugins new` (see scaffold.py). Placeholders: __NAME__
(plugin name), __PKG__ (import package), __SLUG__ (identifier), __CLASS__ (class prefix)."""

from __future__ import annotations

# kind -> (manifest kind, plugin.yaml extra lines, schemas.py, handlers.py, register body,
#          test body)
KINDS: dict[str, tuple[str, str, str, str, str, str]] = {}

KINDS["tool"] = ("standalone", "provides_tools:\n  - __SLUG___greet\n", '''\
"""Tool schemas: what the model reads to decide when to call each tool."""

GREET = {
    "name": "__SLUG___greet",
    "description": "Greet someone by name. Use it when the user asks to be greeted.",
    "parameters": {
        "type": "object",
        "properties": {"name": {"type": "string", "description": "Who to greet"}},
        "required": ["name"],
    },
}
''', '''\
"""Tool handlers: handler(args: dict, **kwargs) -> str (always a JSON string, never raises)."""

import json


def greet(args: dict, **kwargs) -> str:
    name = str(args.get("name", "")).strip()
    if not name:
        return json.dumps({"error": "name is required"})
    return json.dumps({"greeting": f"Hello, {name}!"})
''', '''\
    ctx.register_tool(name="__SLUG___greet", toolset="__SLUG__", schema=schemas.GREET,
                      handler=handlers.greet)
''', '''\
def test_greet_tool(kernel):
    result = json.loads(kernel.tools.dispatch("__SLUG___greet", {"name": "Ada"}))
    assert result == {"greeting": "Hello, Ada!"}
    assert "error" in json.loads(kernel.tools.dispatch("__SLUG___greet", {}))
''')

KINDS["hook"] = ("standalone", "provides_hooks:\n  - pre_llm_call\n  - post_tool_call\n", '''\
"""Settings this plugin reads from plugins.entries.__NAME__ in config.yaml, with defaults."""

DEFAULTS = {"note": "Answer concisely."}
''', '''\
"""Hook callbacks. They receive the hook's payload as keyword arguments; accept **kwargs."""

TOOL_CALLS: dict[str, int] = {}


def make_context_hook(note: str):
    def add_context(user_message: str = "", **kwargs):
        return {"context": note} if user_message else None
    return add_context


def count_tool_call(tool_name: str = "", **kwargs) -> None:
    TOOL_CALLS[tool_name] = TOOL_CALLS.get(tool_name, 0) + 1
''', '''\
    note = ctx.config.get("note", schemas.DEFAULTS["note"])
    ctx.register_hook("pre_llm_call", handlers.make_context_hook(note))
    ctx.register_hook("post_tool_call", handlers.count_tool_call)
''', '''\
def test_context_is_added_to_the_turn(kernel):
    assert kernel.hooks.fire("pre_llm_call", user_message="hi") == "Answer concisely."
    assert kernel.hooks.fire("pre_llm_call", user_message="") == ""


def test_tool_calls_are_counted(kernel):
    from __PKG__ import handlers

    before = handlers.TOOL_CALLS.get("terminal", 0)
    kernel.hooks.fire("post_tool_call", tool_name="terminal", args={}, result="{}")
    assert handlers.TOOL_CALLS["terminal"] == before + 1
''')

KINDS["memory"] = ("exclusive", "", '''\
"""Settings this provider reads from plugins.entries.__NAME__ in config.yaml, with defaults."""

DEFAULTS = {"max_items": 200}
''', '''\
"""A memory provider that keeps notes in a JSON file under the plugin's data folder
($HERMES_HOME/plugin-data/__NAME__), which survives reinstalls and updates."""

import json
from pathlib import Path

from hermes_agent.api import MemoryProvider


class __CLASS__Memory(MemoryProvider):
    """The methods hermes calls, and when: docs/memory.md of hermes ("The interface")."""

    name = "__NAME__"

    def __init__(self, data_dir: Path, max_items: int):
        self.path = Path(data_dir) / "notes.json"
        self.max_items = max_items
        self.session_id = ""

    def is_available(self) -> bool:
        return True  # no network here: check config and dependencies only

    def initialize(self, session_id: str, **kwargs) -> None:
        self.session_id = session_id

    def _notes(self) -> list:
        try:
            return json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  **kwargs) -> None:
        notes = (self._notes() + [user_content])[-self.max_items:]
        self.path.write_text(json.dumps(notes), encoding="utf-8")

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        words = {w.lower() for w in query.split()}
        hits = [n for n in self._notes() if words & {w.lower() for w in n.split()}]
        return "\\n".join(f"- {n}" for n in hits[-5:])

    def system_prompt_block(self) -> str:
        return ""

    def get_tool_schemas(self) -> list:
        return []

    def shutdown(self) -> None:
        pass
''', '''\
    max_items = int(ctx.config.get("max_items", schemas.DEFAULTS["max_items"]))
    ctx.register_memory_provider(handlers.__CLASS__Memory(ctx.data_dir, max_items))
''', '''\
def test_remembers_across_turns(kernel):
    provider = kernel.slots.get("memory", "__NAME__")
    assert provider.is_available()
    provider.initialize("session-1")
    provider.sync_turn("I drink green tea", "Noted.")
    assert "green tea" in provider.prefetch("what tea do I like")
    assert provider.prefetch("unrelated") == ""
''')

KINDS["model-provider"] = ("model-provider", "", '''\
"""Settings this provider reads from plugins.entries.__NAME__ in config.yaml, with defaults."""

DEFAULTS = {"base_url": "https://api.example.com/v1", "api_key_env": "__CLASS_UPPER___API_KEY",
            "models": ["example-small", "example-large"]}
''', '''\
"""The model provider profile: an OpenAI-compatible endpoint and its models."""

from dataclasses import dataclass, field


@dataclass
class __CLASS__Profile:
    name: str
    base_url: str
    api_key_env: str
    fallback_models: list = field(default_factory=list)
    api_mode: str = "chat_completions"
    display_name: str = "__NAME__"

    def models(self) -> list:
        return list(self.fallback_models)
''', '''\
    settings = {**schemas.DEFAULTS, **ctx.config}
    ctx.register_model_provider(handlers.__CLASS__Profile(
        name="__NAME__", base_url=settings["base_url"], api_key_env=settings["api_key_env"],
        fallback_models=list(settings["models"])))
''', '''\
def test_profile_is_registered(kernel):
    profile = kernel.slots.get("model_provider", "__NAME__")
    assert profile.base_url.startswith("https://")
    assert profile.api_mode == "chat_completions"
    assert profile.models() == ["example-small", "example-large"]
''')

KINDS["web"] = ("backend", "", '''\
"""Settings this provider reads from plugins.entries.__NAME__ in config.yaml, with defaults."""

DEFAULTS = {"endpoint": "https://search.example.com/api/search", "timeout": 10}
''', '''\
"""A web search provider calling a JSON search API: GET endpoint?q=...&limit=... returning
{"results": [{"title", "url", "snippet"}]}."""

import json
import urllib.parse
import urllib.request


class __CLASS__Search:
    name = "__NAME__"

    def __init__(self, endpoint: str, timeout: float):
        self.endpoint = endpoint
        self.timeout = timeout

    def is_available(self) -> bool:
        return bool(self.endpoint)

    def search(self, query: str, limit: int = 5) -> dict:
        url = f"{self.endpoint}?{urllib.parse.urlencode({'q': query, 'limit': limit})}"
        try:
            with urllib.request.urlopen(url, timeout=self.timeout) as response:
                results = json.loads(response.read().decode("utf-8")).get("results", [])
        except (OSError, ValueError) as exc:
            return {"success": False, "error": f"search failed: {exc}"}
        web = [{"title": r.get("title", ""), "url": r.get("url", ""),
                "description": r.get("snippet", ""), "position": i + 1}
               for i, r in enumerate(results[:limit])]
        return {"success": True, "data": {"web": web}}
''', '''\
    settings = {**schemas.DEFAULTS, **ctx.config}
    ctx.register_web_search_provider(handlers.__CLASS__Search(settings["endpoint"],
                                                              float(settings["timeout"])))
''', '''\
def test_search_calls_the_api(kernel):
    import http.server
    import threading
    from urllib.parse import parse_qs, urlparse

    class Api(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            query = parse_qs(urlparse(self.path).query)
            body = json.dumps({"results": [{"title": f"About {query['q'][0]}",
                                            "url": "https://example.org", "snippet": "x"}]})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        provider = kernel.slots.get("web_search", "__NAME__")
        provider.endpoint = f"http://127.0.0.1:{server.server_port}/search"
        result = provider.search("hermes", limit=3)
    finally:
        server.shutdown()
    assert result["success"] is True
    assert result["data"]["web"][0]["title"] == "About hermes"
''')

KINDS["platform"] = ("platform", "", '''\
"""Settings this platform reads from plugins.entries.__NAME__ in config.yaml, with defaults."""

DEFAULTS = {"max_message_length": 4000}
''', '''\
"""A platform adapter. This one keeps sent messages in memory; a real adapter talks to its
service in connect/send/disconnect."""


class __CLASS__Adapter:
    def __init__(self, config: dict | None = None):
        self.config = config or {}
        self.connected = False
        self.sent: list = []

    def connect(self, *, is_reconnect: bool = False) -> bool:
        self.connected = True
        return True

    def disconnect(self) -> None:
        self.connected = False

    def send(self, chat_id: str, content: str, reply_to=None, metadata=None) -> dict:
        if not self.connected:
            return {"success": False, "error": "not connected"}
        self.sent.append((chat_id, content))
        return {"success": True, "message_id": str(len(self.sent))}

    def get_chat_info(self, chat_id: str) -> dict:
        return {"name": chat_id, "type": "dm"}
''', '''\
    settings = {**schemas.DEFAULTS, **ctx.config}
    ctx.register_platform("__NAME__", label="__NAME__", adapter_factory=handlers.__CLASS__Adapter,
                          check_fn=lambda: True,
                          max_message_length=int(settings["max_message_length"]))
''', '''\
def test_adapter_sends_after_connecting(kernel):
    platform = kernel.slots.get("platform", "__NAME__")
    assert platform.check_fn() is True
    adapter = platform.adapter_factory({})
    assert adapter.send("chat-1", "hi")["success"] is False
    assert adapter.connect() is True
    assert adapter.send("chat-1", "hi") == {"success": True, "message_id": "1"}
    assert adapter.get_chat_info("chat-1")["type"] == "dm"
''')
