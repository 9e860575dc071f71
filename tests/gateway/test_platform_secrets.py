"""Every credential a shipped plugin reads is declared secret in its plugin.yaml, so the
commands the agent runs never see it (``printenv`` would hand it to the model, and the tool
result to state.db). The credentials are found in each plugin's code: the environment
variables it reads (``os.environ``, ``os.getenv``, ``env.get``/``env[...]``, ``key_env``,
a constant named ``*_ENV``) whose names look like credentials."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

import hermes_agent.builtin_plugins
import hermes_agent.plugins
from hermes_agent import Kernel
from hermes_agent.api import ToolCallContext
from hermes_agent.kits.secrets import secret_env_names

ROOTS = {"builtin_plugins": Path(hermes_agent.builtin_plugins.__path__[0]),
         "plugins": Path(hermes_agent.plugins.__path__[0])}
CREDENTIAL = re.compile(r"(^|_)(KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?|AUTH|"
                        r"PRIVATE|COOKIE|SESSION_ID|DSN)(_|$)")
ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$")
MANIFESTS = sorted(p for root in ROOTS.values() for p in root.rglob("plugin.yaml"))
PLATFORM_SECRETS = {"API_SERVER_KEY": "api-key-5c1f0e", "WEBHOOK_SECRET": "whsec-9d2b77",
                    "DISCORD_BOT_TOKEN": "discord-tok-31aa4e",
                    "TELEGRAM_BOT_TOKEN": "123:telegram-tok-8e0c",
                    "TELEGRAM_WEBHOOK_SECRET": "tg-hook-6b3d90",
                    "SLACK_BOT_TOKEN": "xoxb-slack-tok-2f9a61", "SLACK_APP_TOKEN": "xapp-1-7c4e02",
                    "SLACK_SIGNING_SECRET": "slack-sign-0d5b8e",
                    "EMAIL_PASSWORD": "mail-pw-4f7a21"}


def _reads_env(receiver: ast.AST) -> bool:
    text = ast.unparse(receiver).lower()
    return "environ" in text or text.endswith("env") or text == "os"


def env_reads(source: str) -> set[str]:
    """The environment variable names a module reads (string constants, or module constants
    naming them)."""
    tree = ast.parse(source)
    constants = {target.id: node.value.value for node in tree.body
                 if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                 and isinstance(node.value.value, str)
                 for target in node.targets if isinstance(target, ast.Name)}
    for node in tree.body:  # A, B = "X", "Y"
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple):
            for target in node.targets:
                if isinstance(target, ast.Tuple):
                    for name, value in zip(target.elts, node.value.elts):
                        if isinstance(name, ast.Name) and isinstance(value, ast.Constant):
                            constants[name.id] = value.value

    def strings(node: ast.AST | None) -> set[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return {node.value}
        if isinstance(node, ast.Name) and isinstance(constants.get(node.id), str):
            return {constants[node.id]}
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return {s for item in node.elts for s in strings(item)}
        return set()

    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _reads_env(node.value):
            found |= strings(node.slice)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("get", "getenv", "pop", "setdefault") and node.args \
                    and _reads_env(node.func.value):
                found |= strings(node.args[0])
        if isinstance(node, ast.keyword) and node.arg and "env" in node.arg.lower():
            found |= strings(node.value)
        if isinstance(node, ast.Assign) and any(
                "env" in ast.unparse(t).lower() for t in node.targets):
            found |= strings(node.value)
    return {name for name in found if ENV_NAME.match(name)}


def declared(manifest: Path) -> tuple[set[str], set[str]]:
    """(every env name the manifest declares, those declared secret)."""
    data = yaml.safe_load(manifest.read_text(encoding="utf-8")) or {}
    entries = [e if isinstance(e, dict) else {"name": e}
               for key in ("requires_env", "optional_env") for e in data.get(key) or ()]
    return {e["name"] for e in entries}, {e["name"] for e in entries if e.get("secret")}


def test_the_scan_sees_every_manifest_and_the_platforms_credentials() -> None:
    assert len(MANIFESTS) >= 30
    reads = {name for m in MANIFESTS if m.parent.name in ("api-server", "webhook", "discord")
             for py in m.parent.rglob("*.py") for name in env_reads(py.read_text())}
    assert {"API_SERVER_KEY", "WEBHOOK_SECRET", "DISCORD_BOT_TOKEN"} <= reads


@pytest.mark.parametrize("manifest", MANIFESTS,
                         ids=[m.parent.name for m in MANIFESTS])
def test_every_credential_a_plugin_reads_is_declared_secret(manifest: Path) -> None:
    reads = {name for py in manifest.parent.rglob("*.py")
             for name in env_reads(py.read_text(encoding="utf-8"))}
    _, secret = declared(manifest)
    missing = sorted(name for name in reads if CREDENTIAL.search(name) and name not in secret)
    assert not missing, (f"{manifest} reads {missing} but does not declare "
                         "them: add each under optional_env (or requires_env) with "
                         "'secret: true', so commands the agent runs never see them")


def test_printenv_in_the_terminal_shows_no_platform_secret(
        home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (home / "config.yaml").write_text("approvals:\n  mode: off\n")
    for name, value in PLATFORM_SECRETS.items():  # exported in the shell, not in .env
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HERMES_HOME", str(home))
    kernel = Kernel(home, entry_points=False, builtins=True).boot()
    assert set(PLATFORM_SECRETS) <= secret_env_names(kernel)
    result: dict[str, Any] = json.loads(kernel.tools.dispatch(
        "terminal", {"command": "printenv"}, context=ToolCallContext(session_id="s", cwd=tmp_path)))
    assert result["exit_code"] == 0 and "PATH=" in result["output"]
    for name, value in PLATFORM_SECRETS.items():
        assert value not in result["output"], name
