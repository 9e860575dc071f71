"""`hermes model` and `hermes setup`, run in-process with click's CliRunner."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from hermes_agent.cli import root as cli_root
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

from test_provider_resolution import NO_LOCAL


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    for var in ("OPENROUTER_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DEEPSEEK_API_KEY",
                "GEMINI_API_KEY", "GOOGLE_API_KEY", "NOUS_API_KEY", "HERMES_INFERENCE_PROVIDER",
                "HERMES_LOAD_PLUGINS", "HERMES_SAFE_MODE", "HERMES_RAISE_ERRORS"):
        monkeypatch.delenv(var, raising=False)
    for key, value in NO_LOCAL.items():
        monkeypatch.setenv(key, value)

    def run(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
        root = cli_root._build_root()  # a fresh kernel per command (the root context's), like main()
        return CliRunner().invoke(root, list(args), input=input, catch_exceptions=False)

    run.home = home  # type: ignore[attr-defined]
    saved = dict(os.environ)
    yield run
    os.environ.clear()  # the CLI copies $HERMES_HOME/.env into the process environment
    os.environ.update(saved)


def config(home: Path) -> dict:
    return yaml.safe_load((home / "config.yaml").read_text())


def test_model_shows_lists_and_switches(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    result = cli("model")
    assert "No model provider is configured" in result.output and "hermes setup" in result.output
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-ds")
    listing = cli("model", "--list").output
    rows = {line.split()[0]: line for line in listing.splitlines()}
    assert {"openai", "anthropic", "openrouter", "nous", "deepseek", "gemini", "ollama",
            "lmstudio", "custom", "openai-codex"} <= set(rows)
    assert "key set" in rows["deepseek"] and "missing OPENROUTER_API_KEY" in rows["openrouter"]
    assert "no key needed" in rows["ollama"]

    result = cli("model", "--provider", "deepseek")
    assert result.exit_code == 0, result.output
    assert config(cli.home)["model"] == {"provider": "deepseek", "default": "deepseek-chat"}
    shown = cli("model").output
    assert "DeepSeek (deepseek, chat_completions)" in shown and "deepseek-chat" in shown

    cli("model", "--provider", "custom", "--model", "qwen", "--base-url", "http://127.0.0.1:9/v1")
    assert config(cli.home)["model"] == {"provider": "custom", "default": "qwen",
                                         "base_url": "http://127.0.0.1:9/v1"}
    # switching away drops the old provider's endpoint
    cli("model", "--provider", "openrouter", "--model", "openai/gpt-5")
    assert config(cli.home)["model"] == {"provider": "openrouter", "default": "openai/gpt-5"}
    assert cli("model", "--provider", "nope").exit_code != 0


def test_model_choose_interactively(cli) -> None:
    listing = cli("model", "--list").output.splitlines()
    number = next(i for i, line in enumerate(listing[1:], 1) if line.startswith("gemini"))
    result = cli("model", "--choose", input=f"{number}\ngemini-2.5-flash\n")
    assert result.exit_code == 0, result.output
    assert config(cli.home)["model"] == {"provider": "gemini", "default": "gemini-2.5-flash"}


def test_setup_wizard_stores_key_0600_and_tests_the_provider(cli, monkeypatch) -> None:
    env_file = cli.home / ".env"
    env_file.write_text("# mine\nOTHER=keep me\nOPENROUTER_API_KEY=old\n")
    with FakeLLMServer(reply_text("ready")) as server:
        monkeypatch.setenv("OPENROUTER_BASE_URL", server.openai_base_url)
        listing = cli("model", "--list").output.splitlines()
        number = next(i for i, line in enumerate(listing[1:], 1) if line.startswith("openrouter"))
        result = cli("setup", input=f"{number}\nn\nsk-or-new\n\n")
        assert result.exit_code == 0, result.output
        assert "Test call OK" in result.output and "'ready'" in result.output
        assert server.last.headers["authorization"] == "Bearer sk-or-new"
        assert server.last.body["messages"][0]["content"].startswith("Reply with")
    lines = env_file.read_text().splitlines()
    assert lines == ["# mine", "OTHER=keep me", "OPENROUTER_API_KEY=sk-or-new"]
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    assert config(cli.home)["model"] == {"provider": "openrouter",
                                         "default": "anthropic/claude-sonnet-4.5"}


def test_setup_unattended_with_flags_and_failed_test(cli, monkeypatch) -> None:
    with FakeLLMServer() as server:
        from hermes_agent.testing.fake_llm import reply_error

        server.script(reply_error(401, "bad key"))
        monkeypatch.setenv("DEEPSEEK_BASE_URL", server.openai_base_url)
        result = cli("setup", "--provider", "deepseek", "--api-key", "sk-x", "--yes")
        assert result.exit_code == 1
        assert "Test call failed" in result.output and "DEEPSEEK_API_KEY" in result.output
    assert "DEEPSEEK_API_KEY=sk-x" in (cli.home / ".env").read_text()
    assert config(cli.home)["model"]["provider"] == "deepseek"  # kept, so it can be fixed
    missing = cli("setup", "--provider", "anthropic", "--yes", "--no-test")
    assert missing.exit_code != 0 and "needs an API key" in missing.output


def test_setup_offers_the_current_provider_and_the_models_the_server_reports(cli) -> None:
    with FakeLLMServer(reply_text("ready")) as server:
        server.models[:] = ["llama-3.1-8b", "qwen2.5-7b", "mistral-7b"]
        (cli.home / "config.yaml").write_text(
            "# my local server\nmodel:\n  provider: custom  # LM server on this machine\n"
            f"  base_url: {server.openai_base_url}\n  default: qwen2.5-7b\n")
        listing = cli("model", "--list").output.splitlines()
        count = len(listing) - 1
        custom = next(i for i, line in enumerate(listing[1:], 1) if line.startswith("custom"))
        # a bad number is explained and asked again; Enter keeps the current provider
        answers = "99\n\n\n7\n3\n"  # Enter keeps the configured base URL too
        result = cli("setup", input=answers)
        assert result.exit_code == 0, result.output
        out = result.output
        assert f"Provider (number or name) [{custom}]: " in out  # the configured one is the default
        assert out.count(f"Error: enter a number between 1 and {count}, or a provider name\n") == 1
        assert f"Models at {server.openai_base_url}:" in out
        assert "   1. llama-3.1-8b\n   2. qwen2.5-7b\n   3. mistral-7b\n" in out
        assert "Model (number or id) [qwen2.5-7b]: " in out  # the configured model
        assert out.count("Error: enter a number between 1 and 3, or a model id\n") == 1
        assert "Test call OK" in out and server.last.body["model"] == "mistral-7b"
    text = (cli.home / "config.yaml").read_text()
    assert "# my local server" in text and "# LM server on this machine" in text
    assert config(cli.home)["model"]["default"] == "mistral-7b"


def test_switching_to_a_local_server_that_does_not_answer_changes_nothing(
        cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-ds")
    assert cli("model", "--provider", "deepseek", "--model", "deepseek-reasoner").exit_code == 0
    before = (cli.home / "config.yaml").read_text()
    result = cli("model", "--provider", "ollama")  # OLLAMA_BASE_URL: a closed port
    assert result.exit_code == 1 and "Switched" not in result.output
    assert f"nothing answers at {NO_LOCAL['OLLAMA_BASE_URL']} (Ollama)" in result.output
    assert "ollama serve" in result.output and "--base-url" in result.output
    assert (cli.home / "config.yaml").read_text() == before
    listing = {line.split()[0]: line for line in cli("model", "--list").output.splitlines()}
    assert listing["deepseek"].endswith("← active")
    assert not any(line.endswith("← active") for name, line in listing.items()
                   if name != "deepseek")


def test_switching_to_a_local_server_that_answers_takes_its_model(
        cli, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeLLMServer() as server:
        server.models[:] = ["llama3.2:3b", "qwen3:8b"]
        monkeypatch.setenv("OLLAMA_BASE_URL", server.openai_base_url)
        result = cli("model", "--provider", "ollama")
        assert result.exit_code == 0, result.output
        assert "Switched to Ollama (ollama)." in result.output
        assert config(cli.home)["model"] == {"provider": "ollama", "default": "llama3.2:3b"}
        listing = {line.split()[0]: line for line in cli("model", "--list").output.splitlines()}
        assert listing["ollama"].endswith("← active")
