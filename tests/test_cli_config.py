"""`hermes config ...` run in-process through the CLI root's main."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import yaml

from hermes_agent.cli.root import main


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    monkeypatch.delenv("HERMES_RAISE_ERRORS", raising=False)
    monkeypatch.delenv("HERMES_SAFE_MODE", raising=False)
    return tmp_path


def write_config(home: Path, text: str) -> Path:
    path = home / "config.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def run(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()  # drop anything printed before
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


SECRET_CONFIG = """\
    model:
      default: anthropic/claude-sonnet-4
      provider: openrouter
      api_key: sk-very-secret-123
    auxiliary:
      vision:
        provider: openai
        api_key: sk-aux-secret-456
    my_service:
      token: tok-secret-789
    plugins:
      enabled: [calculator]
    """


def test_config_path(home, capsys):
    code, out, err = run(capsys, "config", "path")
    assert code == 0
    assert out.strip() == str(home / "config.yaml")


def test_config_show_defaults(home, capsys):
    code, out, _ = run(capsys, "config", "show")
    assert code == 0
    data = yaml.safe_load(out)
    assert data["context"]["engine"] == "compressor"
    assert data["sessions"]["store"] == "sqlite"
    assert data["plugins"]["enabled"] is None


def test_config_show_masks_secrets(home, capsys):
    write_config(home, SECRET_CONFIG)
    code, out, _ = run(capsys, "config", "show")
    assert code == 0
    for secret in ("sk-very-secret-123", "sk-aux-secret-456", "tok-secret-789"):
        assert secret not in out
    data = yaml.safe_load(out)
    assert data["model"]["api_key"] == "***"
    assert data["auxiliary"]["vision"]["api_key"] == "***"
    assert data["my_service"]["token"] == "***"
    assert data["model"]["default"] == "anthropic/claude-sonnet-4"  # non-secrets shown
    assert data["plugins"]["enabled"] == ["calculator"]


def test_config_show_secrets_flag(home, capsys):
    write_config(home, SECRET_CONFIG)
    code, out, _ = run(capsys, "config", "show", "--show-secrets")
    assert code == 0
    data = yaml.safe_load(out)
    assert data["model"]["api_key"] == "sk-very-secret-123"
    assert data["auxiliary"]["vision"]["api_key"] == "sk-aux-secret-456"
    assert "***" not in out


def test_config_show_json(home, capsys):
    write_config(home, SECRET_CONFIG)
    code, out, _ = run(capsys, "config", "show", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["model"]["api_key"] == "***"
    assert data["model"]["provider"] == "openrouter"
    assert data["sessions"]["store"] == "sqlite"

    code, out, _ = run(capsys, "config", "show", "--json", "--show-secrets")
    assert code == 0
    assert json.loads(out)["model"]["api_key"] == "sk-very-secret-123"


def test_config_show_prints_warnings_on_stderr(home, capsys):
    write_config(home, "frobnicate: 1\ndisplay:\n  skin: mono\n")
    code, out, err = run(capsys, "config", "show", "--json")
    assert code == 0
    json.loads(out)  # stdout stays machine-readable
    assert "warning:" in err
    assert "frobnicate" in err
    assert "display" in err


def test_config_get(home, capsys):
    write_config(home, "plugins:\n  enabled: [calculator, web]\nmemory:\n  provider: honcho\n")
    code, out, _ = run(capsys, "config", "get", "plugins.enabled")
    assert code == 0
    assert yaml.safe_load(out) == ["calculator", "web"]
    code, out, _ = run(capsys, "config", "get", "plugins.enabled", "--json")
    assert json.loads(out) == ["calculator", "web"]
    code, out, _ = run(capsys, "config", "get", "memory.provider")
    assert (code, out.strip()) == (0, "honcho")


def test_config_get_default_and_missing(home, capsys):
    code, out, _ = run(capsys, "config", "get", "plugins.enabled")
    assert (code, out.strip()) == (0, "")
    code, out, _ = run(capsys, "config", "get", "plugins.enabled", "--json")
    assert json.loads(out) is None
    code, out, err = run(capsys, "config", "get", "no.such.setting")
    assert code == 1
    assert "no.such.setting" in err


def test_config_set_list_then_get(home, capsys):
    code, out, _ = run(capsys, "config", "set", "plugins.enabled", "[a, b]")
    assert code == 0, out
    assert "plugins.enabled" in out
    data = yaml.safe_load((home / "config.yaml").read_text())
    assert data["plugins"]["enabled"] == ["a", "b"]
    code, out, _ = run(capsys, "config", "get", "plugins.enabled", "--json")
    assert code == 0
    assert json.loads(out) == ["a", "b"]
    code, out, _ = run(capsys, "config", "get", "plugins.enabled")
    assert yaml.safe_load(out) == ["a", "b"]


def test_config_set_invalid_value_is_refused(home, capsys):
    path = write_config(home, "plugins:\n  enabled: [calculator]\n# keep me\n")
    before = path.read_bytes()
    code, out, err = run(capsys, "config", "set", "plugins.enabled", "notalist")
    assert code == 1
    assert "plugins.enabled" in err
    assert "not saved" in err
    assert path.read_bytes() == before


def test_config_set_invalid_value_without_a_file(home, capsys):
    code, _, err = run(capsys, "config", "set", "plugins.enabled", "notalist")
    assert code == 1
    assert "plugins.enabled" in err
    assert not (home / "config.yaml").exists()


def test_config_set_keeps_other_keys(home, capsys):
    path = write_config(home, """\
        model:
          default: anthropic/claude-sonnet-4
          api_key: ${OPENROUTER_API_KEY}
        display:
          skin: mono
        custom_thing: {a: 1}
        plugins:
          enabled: [calculator]
        """)
    code, out, _ = run(capsys, "config", "set", "memory.provider", "honcho")
    assert code == 0, out
    data = yaml.safe_load(path.read_text())
    assert data["memory"] == {"provider": "honcho"}
    assert data["model"] == {"default": "anthropic/claude-sonnet-4",
                             "api_key": "${OPENROUTER_API_KEY}"}
    assert data["display"] == {"skin": "mono"}
    assert data["custom_thing"] == {"a": 1}
    assert data["plugins"] == {"enabled": ["calculator"]}
    code, out, _ = run(capsys, "config", "get", "memory.provider")
    assert out.strip() == "honcho"


def test_config_set_scalar_types(home, capsys):
    assert run(capsys, "config", "set", "plugins.entries.calc.allow_tool_override", "true")[0] == 0
    assert run(capsys, "config", "set", "plugins.entries.calc.precision", "3")[0] == 0
    data = yaml.safe_load((home / "config.yaml").read_text())
    assert data["plugins"]["entries"]["calc"] == {"allow_tool_override": True, "precision": 3}
    code, out, _ = run(capsys, "config", "get", "plugins.entries.calc.allow_tool_override")
    assert out.strip() == "true"


def test_config_unset(home, capsys):
    path = write_config(home, "memory:\n  provider: honcho\nsessions:\n  store: files\n")
    code, out, _ = run(capsys, "config", "unset", "memory.provider")
    assert code == 0
    assert "memory.provider" in out
    data = yaml.safe_load(path.read_text())
    assert "provider" not in (data.get("memory") or {})
    assert data["sessions"] == {"store": "files"}
    code, out, _ = run(capsys, "config", "get", "memory.provider")
    assert (code, out.strip()) == (0, "")  # default again


def test_invalid_config_show_reports_the_location(home, capsys):
    path = write_config(home, "plugins:\n  enabled: \"a,b\"\n")
    code, out, err = run(capsys, "config", "show")
    assert code == 1
    assert out == ""
    assert err.startswith("Error:")
    assert str(path) in err
    assert any(line.strip().startswith("plugins.enabled:") for line in err.splitlines())
    assert "Traceback" not in err


def test_malformed_config_show_reports_the_line(home, capsys):
    path = write_config(home, "model:\n  default: x\n    provider: y\n")
    code, _, err = run(capsys, "config", "show")
    assert code == 1
    assert err.startswith("Error:")
    assert str(path) in err
    assert "line 3" in err


def test_invalid_config_get_fails_and_set_fixes_one_key_at_a_time(home, capsys):
    path = write_config(home, "memory:\n  provider: [1]\nmodel:\n  max_retries: many\n")
    code, _, err = run(capsys, "config", "get", "memory.provider")
    assert code == 1
    assert "memory.provider:" in err and "model.max_retries:" in err
    assert "model: Input should be a valid string" not in err  # no noise from model's str form
    before = path.read_bytes()
    code, _, err = run(capsys, "config", "set", "sessions.store", "[1]")  # adds a problem
    assert code == 1 and "sessions.store:" in err and "memory.provider" not in err
    assert path.read_bytes() == before
    code, out, err = run(capsys, "config", "set", "model.max_retries", "2")  # fixes one
    assert code == 0 and "saved" in out
    assert "memory.provider:" in err and "max_retries" not in err  # the one left is named
    code, _, err = run(capsys, "config", "set", "memory.provider", "holographic")
    assert code == 0 and err == ""
    assert yaml.safe_load(path.read_text()) == {"memory": {"provider": "holographic"},
                                               "model": {"max_retries": 2}}


# --- keys go to .env -------------------------------------------------------------------

KEY = "sk-or-v1-0a1b2c3d4e5f60718293a4b5c6d7e8f9"


@pytest.fixture
def no_key_env(monkeypatch):
    """Unset, and unset again afterwards (the kernel exports what it reads from .env)."""
    for name in ("OPENROUTER_API_KEY", "MY_SERVICE_TOKEN", "FOO_BAR", "OPENROUTER_BASE_URL"):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_config_set_of_a_providers_key_writes_env_not_config(home, capsys, no_key_env):
    env = home / ".env"
    env.write_text("# my keys\nANTHROPIC_API_KEY=sk-ant-old\nOPENROUTER_API_KEY=old\n")
    env.chmod(0o644)
    code, out, err = run(capsys, "config", "set", "OPENROUTER_API_KEY", KEY)
    assert code == 0, err
    assert env.read_text() == f"# my keys\nANTHROPIC_API_KEY=sk-ant-old\nOPENROUTER_API_KEY={KEY}\n"
    assert _mode(env) == 0o600 and not (home / "config.yaml").exists()
    assert KEY not in out + err and str(env) in out and "not shown" in out
    code, out, _ = run(capsys, "config", "get", "OPENROUTER_API_KEY")
    assert (code, out.strip()) == (0, "***")
    code, out, _ = run(capsys, "config", "get", "OPENROUTER_API_KEY", "--show-secrets")
    assert out.strip() == KEY
    code, out, _ = run(capsys, "config", "unset", "OPENROUTER_API_KEY")
    assert code == 0 and env.read_text() == "# my keys\nANTHROPIC_API_KEY=sk-ant-old\n"


def test_config_set_of_a_credential_name_goes_to_env_even_with_force(home, capsys, no_key_env):
    code, out, err = run(capsys, "config", "set", "--force", "MY_SERVICE_TOKEN", "tok-123456")
    assert code == 0, err
    assert (home / ".env").read_text() == "MY_SERVICE_TOKEN=tok-123456\n"
    assert "tok-123456" not in out and not (home / "config.yaml").exists()


def test_a_declared_variable_that_is_no_secret_is_shown(home, capsys, no_key_env):
    code, out, _ = run(capsys, "config", "set", "OPENROUTER_BASE_URL", "http://127.0.0.1:9/v1")
    assert code == 0 and "= http://127.0.0.1:9/v1" in out
    code, out, _ = run(capsys, "config", "get", "OPENROUTER_BASE_URL")
    assert out.strip() == "http://127.0.0.1:9/v1"


def test_an_undeclared_variable_needs_env_and_says_so(home, capsys, no_key_env):
    code, _, err = run(capsys, "config", "set", "FOO_BAR", "1")
    assert code == 1 and "hermes config set --env FOO_BAR VALUE" in err
    assert not (home / ".env").exists()
    code, out, err = run(capsys, "config", "set", "--env", "FOO_BAR", "1")
    assert code == 0 and (home / ".env").read_text() == "FOO_BAR=1\n"


def test_config_set_warns_when_the_environment_overrides_env(home, capsys, monkeypatch,
                                                             no_key_env):
    monkeypatch.setenv("OPENROUTER_API_KEY", "from-the-shell")
    code, _, err = run(capsys, "config", "set", "OPENROUTER_API_KEY", KEY)
    assert code == 0 and "takes precedence" in err and KEY not in err


def test_config_get_masks_secret_settings_by_name(home, capsys):
    write_config(home, "mcp_servers:\n  gh:\n    url: https://x\n    headers:\n"
                       "      Authorization: Bearer abcdefghijklmnop\n")
    code, out, _ = run(capsys, "config", "get", "mcp_servers.gh.headers")
    assert code == 0 and "abcdefghijklmnop" not in out and "***" in out


# --- hermes config edit ----------------------------------------------------------------

def _editor(tmp_path: Path, body: str) -> str:
    import sys

    script = tmp_path / "editor.py"
    script.write_text("import sys\npath = sys.argv[1]\n" + textwrap.dedent(body))
    return f"{sys.executable} {script}"


def test_config_edit_creates_opens_and_checks_the_file(home, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", _editor(tmp_path, """
        text = open(path).read()
        open(path, "w").write(text + "memory:\\n  provider: honcho\\n")
        """))
    code, out, err = run(capsys, "config", "edit")
    assert code == 0, err
    path = home / "config.yaml"
    assert "Created" in err and "saved; the settings are valid" in out
    assert path.read_text().startswith("# hermes settings") and _mode(path) == 0o600
    code, out, _ = run(capsys, "config", "get", "memory.provider")
    assert out.strip() == "honcho"


def test_config_edit_reports_an_invalid_file_and_keeps_it(home, tmp_path, capsys, monkeypatch):
    write_config(home, "memory:\n  provider: builtin\n")
    broken = "memory:\n  provider: builtin\n plugins: [a\n"
    monkeypatch.setenv("VISUAL", _editor(tmp_path, f"open(path, 'w').write({broken!r})\n"))
    code, _, err = run(capsys, "config", "edit")
    assert code == 1 and "not valid YAML" in err and "line" in err
    assert "saved as you wrote it" in err and "hermes config edit" in err
    assert (home / "config.yaml").read_text() == broken
    invalid = "plugins:\n  enabled: 3\n"
    monkeypatch.setenv("VISUAL", _editor(tmp_path, f"open(path, 'w').write({invalid!r})\n"))
    code, _, err = run(capsys, "config", "edit")
    assert code == 1 and "plugins.enabled" in err and (home / "config.yaml").read_text() == invalid


def test_config_edit_points_plain_keys_to_env(home, tmp_path, capsys, monkeypatch, no_key_env):
    text = f"model:\n  api_key: {KEY}\n  default: x\nauxiliary:\n  vision:\n    api_key: ${{OPENAI_API_KEY}}\n"
    monkeypatch.setenv("VISUAL", _editor(tmp_path, f"open(path, 'w').write({text!r})\n"))
    code, _, err = run(capsys, "config", "edit")
    assert code == 0 and "model.api_key holds a secret in plain text" in err
    assert "auxiliary.vision.api_key holds" not in err and KEY not in err


def test_config_edit_with_a_failing_editor_keeps_the_file(home, tmp_path, capsys, monkeypatch):
    write_config(home, "memory:\n  provider: builtin\n")
    monkeypatch.setenv("VISUAL", _editor(tmp_path, "sys.exit(4)\n"))
    code, _, err = run(capsys, "config", "edit")
    assert code == 1 and "exited with status 4" in err
    monkeypatch.setenv("VISUAL", "/nonexistent/editor")
    code, _, err = run(capsys, "config", "edit")
    assert code == 1 and "could not start the editor" in err and "EDITOR" in err
    assert (home / "config.yaml").read_text() == "memory:\n  provider: builtin\n"
