"""The provider catalogue: profiles.yaml validated and registered by the kit, the generated
doc table and plugin.yaml variables in step with it, and new providers used end to end
against the fake LLM server with their own key variables."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import hermes_agent.plugins
from hermes_agent.api import ChatRequest, Usage
from hermes_agent.builtin_plugins.models.auxiliary import call_llm
from hermes_agent.builtin_plugins.models.client import ModelClient
from hermes_agent.builtin_plugins.models.context_window import context_window
from hermes_agent.builtin_plugins.models.pricing import estimate_cost
from hermes_agent.builtin_plugins.models.resolve import installed_profiles, resolve_provider
from hermes_agent.kits.model_catalogue import CatalogueError, load_profiles
from hermes_agent.kits.model_catalogue.rows import ProfileRow, read_catalogue
from hermes_agent.kits.model_catalogue.views import manifest_env, replace_table
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

from test_provider_resolution import NO_LOCAL

FOLDER = Path(list(hermes_agent.plugins.__path__)[0]) / "model-providers" / "catalogue"
DOC = Path(__file__).resolve().parents[2] / "docs" / "model-providers.md"
FIRST_TEN = {"openai", "openai-codex", "anthropic", "openrouter", "nous", "deepseek", "gemini",
             "ollama", "lmstudio", "custom"}
ASKED_FOR = {"groq", "mistral", "xai", "together", "fireworks", "cerebras", "deepinfra",
             "perplexity", "kimi-coding", "minimax", "zai", "alibaba", "nvidia", "huggingface",
             "vllm", "llamacpp"}
ROWS = read_catalogue(FOLDER / "profiles.yaml").profiles


def test_the_doc_table_is_generated_from_the_rows() -> None:
    if not DOC.is_file():
        pytest.skip(f"docs/ is not next to the package ({DOC}): run from the checkout")
    text = DOC.read_text(encoding="utf-8")
    assert replace_table(text, ROWS) == text, (
        "docs/model-providers.md's catalogue table is stale: run "
        "`python -m hermes_agent.kits.model_catalogue`")
    assert "| groq | Groq | chat_completions | https://api.groq.com/openai/v1 | GROQ_API_KEY |" in text


def test_plugin_yaml_declares_every_variable_of_the_rows() -> None:
    manifest = yaml.safe_load((FOLDER / "plugin.yaml").read_text(encoding="utf-8"))
    assert manifest["optional_env"] == manifest_env(ROWS), (
        "plugin.yaml's optional_env is stale: run `python -m hermes_agent.kits.model_catalogue`")
    secret = {e["name"] for e in manifest["optional_env"] if e.get("secret")}
    assert {"GROQ_API_KEY", "HF_TOKEN", "DASHSCOPE_API_KEY", "OPENAI_API_KEY"} <= secret
    assert "GROQ_BASE_URL" not in secret


def test_one_plugin_registers_every_profile(kernel_for) -> None:
    kernel = kernel_for({}, env=NO_LOCAL)
    profiles = installed_profiles(kernel)
    assert set(profiles) == {row.name for row in ROWS}
    assert len(profiles) >= 40 and FIRST_TEN | ASKED_FOR <= set(profiles)
    assert {kernel.slots.owner("model_provider", name) for name in profiles} == {"catalogue"}
    openai = profiles["openai"]  # the first ten keep their fields
    assert (openai.max_tokens_param, openai.default_max_tokens, openai.default_model) == (
        "max_completion_tokens", 16384, "gpt-4.1")
    assert profiles["anthropic"].key_env == ("ANTHROPIC_API_KEY", "ANTHROPIC_TOKEN")
    assert profiles["minimax"].api_mode == "anthropic_messages"
    assert profiles["zai"].key_env == ("GLM_API_KEY", "ZAI_API_KEY", "Z_AI_API_KEY")
    assert profiles["huggingface"].auto_detect is False  # HF_TOKEN alone picks nothing
    assert profiles["llamacpp"].local and "llama.cpp" in profiles["llamacpp"].aliases


@pytest.mark.parametrize("name,alias", [("kimi-coding", "moonshot"), ("zai", "glm"),
                                        ("alibaba", "dashscope"), ("xai", "grok")])
def test_aliases_select_their_profile(kernel_for, name: str, alias: str) -> None:
    row = next(r for r in ROWS if r.name == name)
    env = {row.key_env[0]: "k", **NO_LOCAL}
    runtime = resolve_provider(kernel_for({"model": {"provider": alias}}, env=env))
    assert (runtime.profile.name, runtime.model, runtime.base_url) == (
        name, row.default_model, row.base_url)


def test_a_key_alone_selects_a_new_provider(kernel_for) -> None:
    runtime = resolve_provider(kernel_for({}, env={"MISTRAL_API_KEY": "m", **NO_LOCAL}))
    assert (runtime.profile.name, runtime.model) == ("mistral", "mistral-large-latest")
    # the first ten keep their place in the automatic order
    both = resolve_provider(kernel_for({}, env={"MISTRAL_API_KEY": "m", "DEEPSEEK_API_KEY": "d",
                                                **NO_LOCAL}))
    assert both.profile.name == "deepseek"
    nothing = kernel_for({}, env={"HF_TOKEN": "hf", **NO_LOCAL})
    with pytest.raises(Exception, match="No model provider is configured"):
        resolve_provider(nothing)


def _write(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "profiles.yaml"
    path.write_text(yaml.safe_dump({"profiles": rows}), encoding="utf-8")
    return path


GOOD = {"name": "acme", "label": "Acme", "base_url": "https://api.acme.test/v1",
        "key_env": ["ACME_API_KEY"]}


@pytest.mark.parametrize("change,expected", [
    ({"base_ur": "x"}, "profiles[0] (acme).base_ur: Extra inputs are not permitted"),
    ({"base_url": "api.acme.test"}, "must start with http:// or https://"),
    ({"key_env": ["acme-key"]}, "not environment variable names: acme-key"),
    ({"key_env": []}, "names its variables (key_env), or sets key_required: false"),
    ({"api_mode": "bedrock_converse"}, "profiles[0] (acme).api_mode"),
    ({"models": [{"id": "a", "context_length": -5}]}, "context_length: Input should be greater than 0"),
])
def test_a_wrong_row_is_named_with_the_fix(tmp_path: Path, change: dict, expected: str) -> None:
    with pytest.raises(CatalogueError) as error:
        read_catalogue(_write(tmp_path, [{**GOOD, **change}]))
    assert expected in str(error.value) and "Fix those rows" in str(error.value)


def test_a_name_used_twice_is_refused(tmp_path: Path) -> None:
    twin = {**GOOD, "name": "acme2", "aliases": ["acme"]}
    with pytest.raises(CatalogueError, match="'acme' names both 'acme' and 'acme2'"):
        read_catalogue(_write(tmp_path, [GOOD, twin]))


def test_published_numbers_of_a_row_are_used(kernel_for) -> None:
    row = ProfileRow.model_validate({**GOOD, "models": [
        "acme-plain", {"id": "acme-large", "context_length": 65536, "input_price": 1.0,
                       "output_price": 4.0}]})
    profile = row.profile()
    assert profile.models == ("acme-plain", "acme-large")
    assert profile.context_lengths == {"acme-large": 65536}
    cost = estimate_cost(profile, "acme-large", Usage(input_tokens=1_000_000, output_tokens=500_000))
    assert (cost.amount_usd, cost.status) == (3.0, "estimated")
    assert estimate_cost(profile, "acme-plain", Usage(input_tokens=10)).status == "unknown"
    assert context_window("acme-large", None, [profile]) == 65536
    assert context_window("acme-plain", None, [profile]) == 128_000


def test_choosing_a_provider_by_name_or_alias(tmp_path: Path, monkeypatch) -> None:
    from click.testing import CliRunner
    from hermes_agent.cli import root as cli_root

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    for key, value in NO_LOCAL.items():
        monkeypatch.setenv(key, value)
    saved = dict(os.environ)
    try:
        result = CliRunner().invoke(cli_root._build_root(), ["model", "--choose"],
                                    input="nope\nmoonshot\n\n", catch_exceptions=False)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    assert result.exit_code == 0, result.output
    assert "enter a number between 1 and" in result.output and "or a provider name" in result.output
    assert yaml.safe_load((home / "config.yaml").read_text())["model"] == {
        "provider": "kimi-coding", "default": "kimi-k2.6"}


def _hermes() -> str:
    path = shutil.which("hermes", path=str(Path(sys.executable).parent))
    if not path:
        pytest.skip("the hermes script is not installed next to this interpreter")
    return path


def test_groq_end_to_end_with_its_key_variable(tmp_path: Path) -> None:
    """`hermes chat -q` with only GROQ_API_KEY (and GROQ_BASE_URL at the fake server) set."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(yaml.safe_dump({"sessions": {"auto_title": False}}))
    with FakeLLMServer(reply_text("Hello from Groq.")) as server:
        env = {"HERMES_HOME": str(home), "HOME": str(tmp_path), "PATH": os.environ.get("PATH", ""),
               "TERM": "dumb", "GROQ_API_KEY": "gsk-test-key",
               "GROQ_BASE_URL": server.openai_base_url, **NO_LOCAL}
        done = subprocess.run([_hermes(), "chat", "-q", "hi"], env=env, capture_output=True,
                              text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stderr
        assert "Hello from Groq." in done.stdout
        call = server.posts()[-1]
    assert call.path == "/v1/chat/completions"
    assert call.headers.get("authorization") == "Bearer gsk-test-key"
    assert call.body["model"] == "llama-3.3-70b-versatile"
    assert call.body["max_tokens"] == 8192
    assert call.body["messages"][-1]["content"] == "hi"


def test_groq_auxiliary_calls_use_its_small_model(kernel_for, server) -> None:
    kernel = kernel_for({}, env={"GROQ_API_KEY": "gsk", "GROQ_BASE_URL": server.openai_base_url,
                                 **NO_LOCAL})
    server.script(reply_text("A title"))
    reply = call_llm(task="title_generation", messages=[{"role": "user", "content": "x"}],
                     kernel=kernel)
    assert reply.content == "A title" and server.last.body["model"] == "llama-3.1-8b-instant"


def test_minimax_speaks_anthropic_messages_with_its_key(kernel_for, server) -> None:
    kernel = kernel_for({"model": {"provider": "minimax"}},
                        env={"MINIMAX_API_KEY": "mm-key", "MINIMAX_BASE_URL": server.url,
                             **NO_LOCAL})
    server.script(reply_text("Hi from MiniMax."))
    reply = ModelClient.from_config(kernel).chat(
        ChatRequest([{"role": "user", "content": "hello"}])).content
    assert reply == "Hi from MiniMax."
    headers = server.last.headers  # the anthropic SDK sends the key as x-api-key or a bearer
    assert server.last.path == "/v1/messages"
    assert "mm-key" in (headers.get("x-api-key"), headers.get("authorization", "")[7:])
    assert server.last.body["model"] == "MiniMax-M2.7"


def test_a_later_start_builds_the_profiles_from_the_sealed_cache(tmp_path: Path) -> None:
    """The first kernel validates the file; the next one, in a fresh process, neither parses
    YAML for it nor imports the pydantic rows, and gets the same profiles."""
    probe = (
        "import sys, json\n"
        "from hermes_agent import Kernel\n"
        "from hermes_agent.builtin_plugins.models.resolve import installed_profiles\n"
        f"kernel = Kernel({str(tmp_path / 'home')!r}).boot()\n"
        "names = sorted(installed_profiles(kernel))\n"
        "groq = installed_profiles(kernel)['groq']\n"
        "kernel.close()\n"
        "print(json.dumps([names, groq.default_model, list(groq.key_env),\n"
        "                  'hermes_agent.kits.model_catalogue.rows' in sys.modules]))\n")
    env = {**os.environ, "HERMES_HOME": str(tmp_path / "home")}
    env.pop("HERMES_BUNDLED_PLUGINS", None)
    runs = [subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                           text=True, timeout=120) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    first, second = (json.loads(run.stdout.strip().splitlines()[-1]) for run in runs)
    assert first[:3] == second[:3] and first[1:3] == ["llama-3.3-70b-versatile", ["GROQ_API_KEY"]]
    assert first[3] is True and second[3] is False  # validated once, then read from the cache
    assert len(first[0]) == len(ROWS)


def test_load_profiles_validates_a_changed_file_again(tmp_path: Path) -> None:
    from hermes_agent import ValidationCache

    cache = ValidationCache(tmp_path / "validated.json", shipped=False)
    path = _write(tmp_path, [GOOD])
    assert [p.name for p in load_profiles(path, cache)] == ["acme"]
    assert [p.name for p in load_profiles(path, cache)] == ["acme"]  # a hit
    _write(tmp_path, [{**GOOD, "base_url": "nope"}])
    with pytest.raises(CatalogueError, match="must start with http"):
        load_profiles(path, cache)


def test_xai_speaks_responses_and_its_published_price_makes_the_cost(kernel_for, server) -> None:
    kernel = kernel_for({"model": {"provider": "grok"}},
                        env={"XAI_API_KEY": "xai-key", "XAI_BASE_URL": server.openai_base_url,
                             **NO_LOCAL})
    server.script(reply_text("Hi from Grok.", usage={"input_tokens": 1_000_000,
                                                      "output_tokens": 100_000}))
    response = ModelClient.from_config(kernel).chat(
        ChatRequest([{"role": "user", "content": "hello"}]))
    assert response.content == "Hi from Grok."
    assert server.last.path == "/v1/responses" and server.last.body["model"] == "grok-4.6"
    assert server.last.headers.get("authorization") == "Bearer xai-key"
    assert (response.cost.amount_usd, response.cost.status) == (2.6, "estimated")  # 2 + 0.6


def test_the_context_window_comes_from_the_active_profile_first(kernel_for) -> None:
    from hermes_agent.builtin_plugins.models.service import ModelService

    kernel = kernel_for({"model": {"provider": "xai"}}, env={"XAI_API_KEY": "k", **NO_LOCAL})
    service = ModelService(kernel)
    assert service.context_length("grok-4.6") == 500_000  # the row's published window
    assert service.context_length("llama-3.1-8b-instant") == 131_072  # groq's row
    assert service.context_length("grok-4-0709") == 256_000  # the families table


def test_a_row_has_every_field_of_the_profile() -> None:
    """ProfileRow is made from ProviderProfile's fields: one added there is a row field."""
    import dataclasses

    from hermes_agent.api import ProviderProfile
    from hermes_agent.kits.model_catalogue.rows import NOT_IN_ROWS

    profile_fields = {f.name for f in dataclasses.fields(ProviderProfile)} - set(NOT_IN_ROWS)
    assert set(ProfileRow.model_fields) == profile_fields | {"description"}
    row = ProfileRow.model_validate({**GOOD, "supports_vision": True})
    assert row.profile().supports_vision is True
    vision = {r.name for r in ROWS if r.supports_vision}
    assert {"openai", "anthropic", "openrouter", "gemini", "openai-codex", "xai"} == vision


def test_a_user_plugin_ships_its_own_catalogue(kernel_for, tmp_path: Path, server) -> None:
    """A model-provider plugin in $HERMES_HOME with its own profiles.yaml, read by the kit."""
    plugin = tmp_path / "home" / "plugins" / "acme"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: acme\nversion: 0.1.0\nkind: model-provider\n"
                                        "description: Acme's models\n")
    (plugin / "__init__.py").write_text(
        "from pathlib import Path\n"
        "from hermes_agent.kits.model_catalogue import register_catalogue\n\n\n"
        "def register(ctx):\n"
        "    register_catalogue(ctx, Path(__file__).with_name('profiles.yaml'))\n")
    _write(plugin, [{**GOOD, "base_url_env": "ACME_BASE_URL", "default_model": "acme-large"}])
    kernel = kernel_for({"plugins": {"enabled": ["acme"]}, "model": {"provider": "acme"}},
                        env={"ACME_API_KEY": "ak", "ACME_BASE_URL": server.openai_base_url,
                             **NO_LOCAL})
    assert kernel.slots.owner("model_provider", "acme") == "acme"
    server.script(reply_text("Hi from Acme."))
    response = ModelClient.from_config(kernel).chat(
        ChatRequest([{"role": "user", "content": "hello"}]))
    assert response.content == "Hi from Acme." and server.last.body["model"] == "acme-large"
