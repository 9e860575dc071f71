"""Builtin memory keeps secrets out of every later prompt: the memory tool and `hermes memory
edit` refuse entries holding an API key, a token, a PEM block or a password (with the shared
detector, ``hermes_agent.kits.secret_text.find_secret``, that the local provider uses too),
and an entry saved before (or by hand) is left out of the prompt but kept in the file. Real files in a
temporary HERMES_HOME, the real tool and the real CLI with a real editor command."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.api import ToolCallContext
from hermes_agent.kits.secret_text import find_secret
from hermes_agent.builtin_plugins.agent.prompt import build_system_prompt
from hermes_agent.cli.root import main
from hermes_agent.testing import make_kernel

CTX = ToolCallContext(session_id="s1", platform="cli")
SECRETS = {
    "OpenRouter key for the user: sk-or-v1-0a1b2c3d4e5f60718293a4b5c6d7e8f9": "an API key",
    "CI uses ghp_abcdefghijklmnopqrstuvwxyz0123456789": "an access token",
    "Deploy key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
    "-----END OPENSSH PRIVATE KEY-----": "a private key (PEM block)",
    "The staging database password is hunter22": "a password, key or token",
    "AWS access key AKIAABCDEFGHIJKLMNOP": "an AWS access key",
    "Grafana is at https://admin:s3cretpass@grafana.internal/": "credentials in a URL",
    "Call the API with Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345": "Authorization",
}
PLAIN = ("The deploy token is in $HERMES_HOME/.env as DEPLOY_TOKEN",
         "The GitHub token is stored in 1Password", "the key is GITHUB_TOKEN",
         "Project uses Python 3.12 on Ubuntu 22.04", "User prefers tabs over spaces",
         "Password manager: the user uses Bitwarden")


@pytest.fixture
def kernel(home: Path) -> Any:
    return make_kernel(home, config={}, env={"HERMES_HOME": str(home)}, builtins=True)


def call(kernel: Any, **args: Any) -> dict[str, Any]:
    return json.loads(kernel.tools.dispatch("memory", args, CTX))


def _secret_part(text: str) -> str:
    return text.split()[-1] if "BEGIN" not in text else "b3BlbnNzaC1rZXktdjEAAAAA"


@pytest.mark.parametrize("content", SECRETS)
@pytest.mark.parametrize("target", ["memory", "user"])
def test_the_memory_tool_refuses_secrets_and_says_what_to_do(kernel: Any, home: Path,
                                                             content: str, target: str) -> None:
    result = call(kernel, target=target, action="add", content=content)
    assert result.get("success") is not True
    error = result["error"]
    assert SECRETS[content] in error and "hermes config set" in error, error
    assert "nothing was saved" in error and _secret_part(content) not in json.dumps(result)
    assert not (home / "memories" / ("MEMORY.md" if target == "memory" else "USER.md")).exists()


def test_a_replace_that_adds_a_secret_is_refused_and_the_entry_kept(kernel: Any,
                                                                    home: Path) -> None:
    assert call(kernel, target="memory", action="add", content="CI runs on GitHub Actions")
    result = call(kernel, target="memory", action="replace", old_text="Actions",
                  content="CI runs on GitHub Actions with ghp_abcdefghijklmnopqrstuvwxyz0123")
    assert "access token" in result["error"]
    assert (home / "memories" / "MEMORY.md").read_text() == "CI runs on GitHub Actions\n"


@pytest.mark.parametrize("content", PLAIN)
def test_notes_about_where_a_secret_lives_are_saved(kernel: Any, content: str) -> None:
    assert find_secret(content) is None
    assert call(kernel, target="memory", action="add", content=content)["success"]


def test_a_secret_saved_before_is_kept_in_the_file_but_not_shown(kernel: Any,
                                                                 home: Path) -> None:
    folder = home / "memories"
    folder.mkdir(mode=0o700)
    text = "Project is atlas\n§\nOpenRouter key sk-or-v1-0a1b2c3d4e5f60718293a4b5c6d7e8f9\n"
    (folder / "MEMORY.md").write_text(text)
    shown = build_system_prompt(kernel, session_id="s1", tool_names=["memory"],
                                skip_context_files=True).text
    assert "Project is atlas" in shown and "sk-or-v1" not in shown
    assert "hermes memory edit memory" in shown and "an API key" in shown
    assert (folder / "MEMORY.md").read_text() == text  # nothing saved is lost


def test_hermes_memory_edit_refuses_a_new_secret_without_echoing_it(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    (home / "memories").mkdir()
    memory = home / "memories" / "MEMORY.md"
    memory.write_text("Project is atlas\n")
    script = tmp_path / "editor.py"
    script.write_text(textwrap.dedent("""\
        import sys
        with open(sys.argv[1], "a") as f:
            f.write("§\\nThe admin token is ghp_abcdefghijklmnopqrstuvwxyz0123\\n")
        """))
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    monkeypatch.delenv("VISUAL", raising=False)
    code = main(["memory", "edit"])
    err = capsys.readouterr().err
    assert code != 0 and "entry 2 looks like it holds an access token" in err, err
    assert "ghp_" not in err and "hermes config set" in err
    assert memory.read_text() == "Project is atlas\n"
    assert "ghp_" in (home / "memories" / "MEMORY.md.edit").read_text()  # the edit is kept
