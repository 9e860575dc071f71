"""Memory providers written for the original, unmodified, through the memory slot and a real
``hermes chat -q`` process: one pip-installed from a wheel (an entry point of the
``hermes_agent.plugins`` group, importing the original's module paths) and one copied as a
folder without plugin.yaml into $HERMES_HOME/plugins. Each one's recall reaches the model
inside the ``<memory-context>`` fence of the user message, and its tool is offered."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text
from venvkit import clean_env, make_venv, pip_install, plugin_pyproject, run

PROVIDER = '''
import json
import os
from pathlib import Path

from agent.memory_provider import MemoryProvider
from tools.registry import tool_error, tool_result


class OriginalStyleMemory(MemoryProvider):
    """Keeps its notes in a JSON file under hermes_home, as third-party providers do."""

    @property
    def name(self):
        return "{name}"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        self.path = Path(kwargs["hermes_home"]) / "{name}.json"
        self.platform = kwargs["platform"]

    def get_tool_schemas(self):
        return [{{"name": "{name}_lookup", "description": "Look a note up.",
                 "parameters": {{"type": "object", "properties": {{"q": {{"type": "string"}}}}}}}}]

    def handle_tool_call(self, tool_name, args, **kwargs):
        return tool_result(notes=[]) if args.get("q") else tool_error("q is required")

    def prefetch(self, query, *, session_id=""):
        return "{name} recalls: the user takes tea without sugar (platform " + self.platform + ")"

    def sync_turn(self, user_content, assistant_content, *, session_id=""):
        self.path.write_text(json.dumps([user_content, assistant_content]))
'''


def chat(python: Path, home: Path, server: FakeLLMServer, provider: str) -> None:
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": server.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "sessions": {"auto_title": False},  # the script answers the chat's requests only
        "memory": {"provider": provider}}), encoding="utf-8")
    server.script(reply_text("Tea, no sugar."))
    proc = subprocess.run([str(python), "-m", "hermes_agent.cli.root", "chat", "-q",
                           "how do I take my tea?"], env=clean_env(HERMES_HOME=str(home)),
                          cwd=home, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Tea, no sugar." in proc.stdout


def assert_recalled(server: FakeLLMServer, home: Path, name: str) -> None:
    body = server.posts()[-1].body
    system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
    assert user.startswith("how do I take my tea?\n\n<memory-context>")
    assert f"{name} recalls: the user takes tea without sugar (platform cli)" in user
    assert "<memory-context>" not in system
    assert f"{name}_lookup" in [t["function"]["name"] for t in body["tools"]]
    # sync_turn ran in the background before the process exited
    assert json.loads((home / f"{name}.json").read_text()) == ["how do I take my tea?",
                                                              "Tea, no sugar."]


@pytest.fixture
def server():
    with FakeLLMServer() as fake:
        yield fake


def test_a_pip_installed_provider_for_the_original_works_through_the_slot(
        tmp_path: Path, server: FakeLLMServer) -> None:
    for module in ("setuptools", "wheel"):
        pytest.importorskip(module, reason=f"building the test wheel needs {module}")
    source = tmp_path / "src"
    (source / "teamemory").mkdir(parents=True)
    (source / "teamemory" / "__init__.py").write_text(
        textwrap.dedent(PROVIDER.format(name="teamemory"))
        + "\n\ndef register(ctx):\n    ctx.register_memory_provider(OriginalStyleMemory())\n",
        encoding="utf-8")
    (source / "pyproject.toml").write_text(plugin_pyproject(
        "hermes-teamemory", "1.0.0", "hermes_agent.plugins", "teamemory", "teamemory",
        "teamemory", []), encoding="utf-8")
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "-q", "-w", str(tmp_path / "dist"), str(source)], env=clean_env())
    python = make_venv(tmp_path)
    pip_install(python, *sorted((tmp_path / "dist").glob("*.whl")))
    home = tmp_path / "home"
    home.mkdir()
    chat(python, home, server, "teamemory")
    assert_recalled(server, home, "teamemory")


def test_a_provider_folder_without_plugin_yaml_works_through_the_slot(
        tmp_path: Path, server: FakeLLMServer) -> None:
    home = tmp_path / "home"
    folder = home / "plugins" / "foldermemory"
    folder.mkdir(parents=True)
    # no register(): the original instantiates the module's provider class
    (folder / "__init__.py").write_text(textwrap.dedent(PROVIDER.format(name="foldermemory")),
                                        encoding="utf-8")
    chat(Path(sys.executable), home, server, "foldermemory")
    assert_recalled(server, home, "foldermemory")
