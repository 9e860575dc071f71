"""hermes's own secrets beyond .env and auth.json, attacked as a prompt-injected model would
with the real file tools: the keys written in config.yaml (shown masked, never refused), the
cache (which holds the merged config with ${VAR}s expanded) and every backup, swap file and
copy of .env. Real files in the kernel's home and a fake ``$HOME``; links, hard links,
relative paths, ``..`` and case variants."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hermes_agent import Kernel
from hermes_agent.builtin_plugins.core_tools.danger.paths import is_secret_file, kernel_home

from .conftest import SANDBOX_OFF, Call, core_kernel
from .test_credential_read import SENTINEL, Secrets, secrets  # noqa: F401  (the fixture)

CONFIG = f"""\
model:
  default: anthropic/claude-sonnet-4
  provider: openrouter
  api_key: {SENTINEL}-model  # pasted by hand
  key_env: OPENROUTER_API_KEY
fallback_providers:
  - provider: openai
    api_key: "{SENTINEL}-fallback"
  - provider: deepseek
    api_key: ${{DEEPSEEK_API_KEY}}
mcp_servers:
  github:
    url: https://user:{SENTINEL}-url@mcp.example.com/v1
    headers:
      Authorization: Bearer {SENTINEL}-header
      X-Api-Key: {SENTINEL}-xkey
    env: {{GITHUB_TOKEN: {SENTINEL}-env, LOG_LEVEL: debug}}
  files:
    command: npx
    args: [server-files]
    private_key: |
      -----BEGIN OPENSSH PRIVATE KEY-----
      {SENTINEL}-pem
      -----END OPENSSH PRIVATE KEY-----
# old key: sk-or-v1-{SENTINEL}
toolsets: [terminal, file]
"""
#: what these tests show is the file tools without the sandbox (``sandbox.mode: off``): under
#: it $HERMES_HOME is hidden whole, config.yaml included (tests/core_tools/test_file_boundary.py)
@pytest.fixture
def kernel(tmp_path: Path) -> Kernel:
    return core_kernel(tmp_path / "home", config=SANDBOX_OFF)


#: what the agent may still see of its configuration
VISIBLE = ("anthropic/claude-sonnet-4", "key_env: OPENROUTER_API_KEY", "${DEEPSEEK_API_KEY}",
           "mcp.example.com", "LOG_LEVEL: debug", "command: npx", "toolsets: [terminal, file]",
           "api_key: ***", "Authorization: ***")

ENV_COPIES = (".env~", ".env.swp", "..env.swp", ".env.save", ".env.orig", ".env.bak",
              "env.backup", "env.bak", ".env.1", "#.env#", ".#.env", ".env (copy)",
              ".env-old", ".env.bak~", ".env.SAVE", "env.BACKUP", ".env.local.swp")


@pytest.fixture
def config(secrets: Secrets) -> Path:
    path = secrets.hermes / "config.yaml"
    path.write_text(CONFIG)
    return path


def _shows_settings_not_keys(result: dict) -> None:
    text = result["content"]
    assert SENTINEL not in json.dumps(result), text
    for visible in VISIBLE:
        assert visible in text, (visible, text)
    assert "***" in result["note"] and ".env" in result["note"]


# --- config.yaml: read masked, searched masked, never written ----------------------------

@pytest.mark.parametrize("spelling", ["{hermes}/config.yaml", "cfg-link", "cfg-hard",
                                      "../home/config.yaml", "{hermes}/../home/./config.yaml",
                                      "dir-link/config.yaml", "/proc/self/root{hermes}/config.yaml"])
def test_config_yaml_is_read_with_its_secret_values_masked(call: Call, secrets: Secrets,
                                                           config: Path, spelling: str) -> None:
    (secrets.work / "cfg-link").symlink_to(config)
    os.link(config, secrets.work / "cfg-hard")
    (secrets.work / "dir-link").symlink_to(secrets.hermes)
    assert Path(secrets.work / "../home").resolve() == secrets.hermes.resolve()
    result = call("read_file", {"path": spelling.format(hermes=secrets.hermes)})
    _shows_settings_not_keys(result)


def test_a_backup_of_config_yaml_is_masked_too(call: Call, secrets: Secrets) -> None:
    for name in ("config.yaml~", "config.yaml.bak", ".config.yaml.swp", "#config.yaml#"):
        (secrets.hermes / name).write_text(CONFIG)
        _shows_settings_not_keys(call("read_file", {"path": str(secrets.hermes / name)}))


def test_reading_a_masked_config_in_pages_keeps_line_numbers(call: Call, secrets: Secrets,
                                                              config: Path) -> None:
    result = call("read_file", {"path": str(config), "offset": 4, "limit": 1})
    assert result["content"] == "4|  api_key: ***" and result["total_lines"] == len(
        CONFIG.splitlines())


def test_search_matches_the_masked_text_so_it_cannot_spell_out_a_key(
        call: Call, secrets: Secrets, config: Path) -> None:
    """A search for the key's first characters must not answer yes or no about them."""
    os.link(config, secrets.work / "cfg-hard")
    for root in (secrets.hermes, secrets.work):
        for pattern in ("SENTINEL", "api_key: S", "Bearer", f"{SENTINEL[:9]}", "sk-or-v1"):
            for mode in ("content", "files_only", "count"):
                found = call("search_files", {"pattern": pattern, "path": str(root),
                                              "output_mode": mode})
                assert found["total"] == 0, (root, pattern, mode, found)
        found = call("search_files", {"pattern": "api_key|key_env", "path": str(root)})
        assert SENTINEL not in json.dumps(found)
        assert {m["text"].strip() for m in found["matches"]} >= {
            "api_key: ***", "key_env: OPENROUTER_API_KEY", 'api_key: "***"'}


def test_config_yaml_is_not_patched_through_any_name(call: Call, secrets: Secrets,
                                                     config: Path) -> None:
    (secrets.work / "cfg-link").symlink_to(config)
    os.link(config, secrets.work / "cfg-hard")
    for name in (str(config), "cfg-link", "cfg-hard"):
        result = call("patch", {"path": name, "old_string": "openrouter",
                                "new_string": "evil"})
        assert "error" in result and SENTINEL not in json.dumps(result), result
        probe = call("patch", {"path": name, "old_string": f"{SENTINEL}-model",
                               "new_string": "x"})  # no "found / not found" oracle either
        assert "error" in probe and "not found" not in probe["error"], probe
    assert config.read_text() == CONFIG


# --- the cache ---------------------------------------------------------------------------

def test_the_cache_is_refused_whole(call: Call, secrets: Secrets) -> None:
    """A real kernel expands ${OPENROUTER_API_KEY} from .env into the merged config it caches."""
    (secrets.hermes / "config.yaml").write_text("model:\n  api_key: ${OPENROUTER_API_KEY}\n")
    Kernel(secrets.hermes, env={}, entry_points=False, builtins=False)
    cached = secrets.hermes / "cache" / "validated.json"
    assert SENTINEL in cached.read_text()  # so the refusals below guard something real
    (secrets.work / "cache-link").symlink_to(cached)
    os.link(cached, secrets.work / "cache-hard")
    for name in (str(cached), "cache-link", "cache-hard", "../home/cache/validated.json",
                 "../home/cache/../cache/validated.json"):
        result = call("read_file", {"path": name})
        assert SENTINEL not in json.dumps(result) and "holds secrets" in result["error"], name
    for root in (secrets.hermes, secrets.hermes / "cache", secrets.work):
        found = call("search_files", {"pattern": "SENTINEL|api_key", "path": str(root)})
        assert SENTINEL not in json.dumps(found) and not any(
            "cache" in m["path"] for m in found["matches"]), found
        listed = call("search_files", {"pattern": "*", "target": "files", "path": str(root)})
        assert not any("validated" in f or "cache-link" in f for f in listed["files"]), listed
    before = cached.read_bytes()
    for name in (str(cached), str(secrets.hermes / "cache" / "new.json")):
        wrote = call("write_file", {"path": name, "content": "{}"})
        assert "error" in wrote and "hermes's cache" in wrote["error"], wrote
        patched = call("patch", {"path": name, "old_string": "data", "new_string": "x"})
        assert "error" in patched and SENTINEL not in json.dumps(patched)
    assert cached.read_bytes() == before and not (secrets.hermes / "cache" / "new.json").exists()


# --- backups, swap files and copies of .env ----------------------------------------------

@pytest.mark.parametrize("name", ENV_COPIES)
def test_every_copy_of_a_protected_env_is_refused(call: Call, secrets: Secrets,
                                                  name: str) -> None:
    folders = (secrets.hermes, secrets.home)
    for folder in folders:  # the copies exist before the model starts
        (folder / name).write_text(f"OPENROUTER_API_KEY={SENTINEL}\n")
        (secrets.work / f"link-{folder.name}").symlink_to(folder / name)
        os.link(folder / name, secrets.work / f"hard-{folder.name}.txt")
    for folder in folders:
        for raw in (str(folder / name), os.path.relpath(folder / name, secrets.work),
                    f"link-{folder.name}", f"hard-{folder.name}.txt"):
            result = call("read_file", {"path": raw})
            assert SENTINEL not in json.dumps(result) and "holds secrets" in result["error"], raw
        wrote = call("write_file", {"path": str(folder / name), "content": "X=1\n"})
        assert "error" in wrote, wrote
    for root in (*folders, secrets.work):
        found = call("search_files", {"pattern": "OPENROUTER|SENTINEL", "path": str(root)})
        assert SENTINEL not in json.dumps(found) and found["total"] == 0, found
        listed = call("search_files", {"pattern": "*", "target": "files", "path": str(root)})
        assert not {name, "link-home", "link-fakehome"} & {  # a hard link's name tells nothing
            Path(f).name for f in listed["files"]}, listed


@pytest.mark.parametrize("name", [".ENV~", ".Env.Orig", "ENV.BAK", "#.ENV#", "..ENV.SWP"])
def test_case_variants_count_where_the_file_system_ignores_case(name: str) -> None:
    """On macOS and Windows ``~/.HERMES/.ENV~`` is a copy of ~/.hermes/.env; on a
    case-sensitive system .ENV is another file, judged like any other."""
    for where in ("/home/u/.hermes/", "/home/u/.HERMES/", "/home/u/"):
        with kernel_home("/home/u/.hermes"):
            assert is_secret_file(where + name, fold=True), where + name
            assert not is_secret_file("/home/u/proj/" + name, fold=True)
    assert not is_secret_file("/home/u/.hermes/" + name, fold=False)


def test_a_projects_env_backup_stays_readable_like_its_env(call: Call, secrets: Secrets) -> None:
    """A project's .env is its working material, so are its backups."""
    for name in (".env~", ".env.swp", "env.backup"):
        (secrets.work / name).write_text("DEBUG=1\n")
        assert "DEBUG=1" in call("read_file", {"path": name})["content"]
    (secrets.work / "env.py").write_text("DEBUG = 1\n")
    assert "DEBUG = 1" in call("read_file", {"path": "env.py"})["content"]


def test_the_terminal_asks_before_printing_a_copy_of_hermes_env(call: Call,
                                                                secrets: Secrets) -> None:
    (secrets.hermes / ".env~").write_text(f"OPENROUTER_API_KEY={SENTINEL}\n")
    (secrets.hermes / "cache").mkdir(exist_ok=True)
    (secrets.hermes / "cache" / "validated.json").write_text(SENTINEL)
    for command in (f"cat {secrets.hermes}/.env~", f"cat {secrets.hermes}/cache/validated.json",
                    f"grep -r KEY {secrets.hermes}/cache"):
        result = call("terminal", {"command": command})
        assert result.get("status") == "blocked" and SENTINEL not in json.dumps(result), command
