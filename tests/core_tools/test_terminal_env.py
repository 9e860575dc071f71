"""What a command run by the terminal tool can see of the secrets in $HERMES_HOME/.env.

The kernel here is built on the process environment, as the CLI builds it, so the .env
values really are exported into ``os.environ`` (plugins written for Hermes Agent 0.19 read
them there). The attacker is the model: it asks the terminal tool for the environment in
every way it can.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import hermes_agent.builtin_plugins.core_tools as core_tools
from hermes_agent import EnvRequirement, Kernel, Manifest
from hermes_agent.api import ProviderProfile, ToolCallContext
from hermes_agent.kits.secrets import command_env

OPENAI_KEY = "sk-proj-dotenv-4f9c2a7be1d04a5f"
SHELL_KEY = "acme-shell-exported-77d1e0"
PLUGIN_SECRET = "weather-secret-0b6a9c"

# Every way the model might read the environment of its command.
READERS = ["printenv", "env", "cat /proc/self/environ | tr '\\0' '\\n'",
           "echo \"key=$OPENAI_API_KEY\"", "export -p", "set",
           "cat /proc/$PPID/environ | tr '\\0' '\\n'",  # hermes's own environ
           "python3 -c 'import os; print(dict(os.environ))'"]


def _kernel(home: Path, monkeypatch: pytest.MonkeyPatch, config: str = "") -> Kernel:
    home.mkdir(parents=True, exist_ok=True)
    (home / ".env").write_text(f"OPENAI_API_KEY={OPENAI_KEY}\nWEATHER_TOKEN={PLUGIN_SECRET}\n"
                               "PROJECT_LABEL=from-dotenv\n")
    (home / "config.yaml").write_text(config)
    monkeypatch.setenv("HERMES_HOME", str(home))
    monkeypatch.setenv("ACME_API_KEY", SHELL_KEY)  # a provider key exported in the shell
    for name in ("OPENAI_API_KEY", "WEATHER_TOKEN", "PROJECT_LABEL"):
        monkeypatch.delenv(name, raising=False)
    kernel = Kernel(home, entry_points=False, builtins=False).boot()
    assert kernel.register_plugin(core_tools, "core-tools").state == "loaded"

    def providers(ctx: Any) -> None:
        ctx.register_model_provider(ProviderProfile("acme", key_env=("ACME_API_KEY",)))

    assert kernel.register_plugin(providers, "acme-provider").state == "loaded"
    manifest = Manifest(name="weather", requires_env=(EnvRequirement("WEATHER_TOKEN", secret=True),))
    assert kernel.register_plugin(lambda ctx: None, "weather", manifest=manifest).state == "loaded"
    return kernel


def _run(kernel: Kernel, command: str, cwd: Path) -> dict[str, Any]:
    return json.loads(kernel.tools.dispatch("terminal", {"command": command},
                                            context=ToolCallContext(session_id="s", cwd=cwd)))


def test_in_process_plugins_still_read_the_dotenv_keys(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    kernel = _kernel(tmp_path / "home", monkeypatch)
    assert os.environ["OPENAI_API_KEY"] == OPENAI_KEY  # 0.19 plugins read os.environ
    assert kernel.env["OPENAI_API_KEY"] == OPENAI_KEY  # providers read the kernel's env
    assert kernel.dotenv_names == {"OPENAI_API_KEY", "WEATHER_TOKEN", "PROJECT_LABEL"}


@pytest.mark.parametrize("command", READERS)
def test_no_command_sees_a_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  command: str) -> None:
    # the approval gate asks before a process's environ is read (credential_read); with it
    # off, the command runs, and the environment it reads must still hold no secret
    kernel = _kernel(tmp_path / "home", monkeypatch, config="approvals:\n  mode: off\n")
    result = _run(kernel, command, tmp_path)
    output = result["output"]
    assert result["exit_code"] == 0, output
    assert "PATH" in output or command.startswith("echo")  # the environment itself is there
    for secret in (OPENAI_KEY, SHELL_KEY, PLUGIN_SECRET, "from-dotenv"):
        assert secret not in output, (command, secret)


def test_a_second_kernel_in_the_same_process_still_knows_what_came_from_dotenv(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    _kernel(home, monkeypatch)  # exports .env into os.environ
    again = Kernel(home, entry_points=False, builtins=False).boot()
    again.register_plugin(core_tools, "core-tools")
    assert OPENAI_KEY not in _run(again, "printenv", tmp_path)["output"]


def test_a_variable_exported_in_the_shell_passes_through(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_BUILD_FLAVOUR", "release")
    kernel = _kernel(tmp_path / "home", monkeypatch)
    out = _run(kernel, "echo $MY_BUILD_FLAVOUR $PAGER $TERM", tmp_path)["output"]
    assert out == "release cat dumb"


def test_env_passthrough_opts_names_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kernel = _kernel(tmp_path / "home", monkeypatch,
                     "terminal:\n  env_passthrough: [PROJECT_LABEL, ACME_API_KEY]\n")
    out = _run(kernel, "printenv", tmp_path)["output"]
    assert "PROJECT_LABEL=from-dotenv" in out and f"ACME_API_KEY={SHELL_KEY}" in out
    assert OPENAI_KEY not in out and PLUGIN_SECRET not in out  # not opted in


def test_env_passthrough_rejects_what_is_not_a_variable_name(tmp_path: Path) -> None:
    from hermes_agent import ConfigError, load_config

    (tmp_path / "config.yaml").write_text("terminal:\n  env_passthrough: [$OPENAI_API_KEY]\n")
    with pytest.raises(ConfigError, match="without \\$"):
        load_config(tmp_path, env={})
    (tmp_path / "config.yaml").write_text("terminal:\n  env_passthrough: GITHUB_TOKEN\n")
    assert load_config(tmp_path, env={}).get("terminal.env_passthrough") == ["GITHUB_TOKEN"]


def test_command_env_of_a_kernel_given_its_environment(tmp_path: Path) -> None:
    """An embedder passing ``env=``: .env values reach the kernel, not os.environ, and an
    opted-in one is handed to commands from the kernel's environment."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".env").write_text("DEPLOY_TARGET=staging\nHIDDEN_ONE=x1y2z3\n")
    (home / "config.yaml").write_text("terminal:\n  env_passthrough: [DEPLOY_TARGET]\n")
    kernel = Kernel(home, env={"HERMES_HOME": str(home)}, entry_points=False, builtins=False)
    env = command_env(kernel, {"TERM": "dumb"}, kernel.config.get("terminal.env_passthrough"))
    assert env["DEPLOY_TARGET"] == "staging" and env["TERM"] == "dumb"
    assert "HIDDEN_ONE" not in env and kernel.dotenv_names == {"DEPLOY_TARGET", "HIDDEN_ONE"}
