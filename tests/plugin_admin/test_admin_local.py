"""`hermes plugins install | update | rollback | remove` with a local folder and a local git
repository, run in-process against a temporary HERMES_HOME."""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
import yaml


FIXTURES = Path(__file__).parent.parent / "fixtures"
WEATHER_MANIFEST = """\
name: weather
version: 1.0.0
provides_tools: [weather_now]
requires_env:
  - name: WEATHER_API_KEY
    description: Key for the weather service
    secret: true
  - WEATHER_REGION
"""
WEATHER_INIT = """\
import json


def _now(args, **kwargs):
    return json.dumps({"temp": 21})


def register(ctx):
    ctx.register_tool("weather_now", "weather", {"name": "weather_now", "description": "now",
                      "parameters": {"type": "object", "properties": {}}}, _now)
"""


def lock(home: Path) -> dict:
    path = home / "plugins.lock"
    return json.loads(path.read_text())["plugins"] if path.exists() else {}


def config(home: Path) -> dict:
    path = home / "config.yaml"
    return (yaml.safe_load(path.read_text()) or {}) if path.exists() else {}


def make_source(root: Path, name: str, manifest: str, init: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "plugin.yaml").write_text(manifest)
    (root / "__init__.py").write_text(init)
    return root


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org",
                           "-c", "init.defaultBranch=main", *args], cwd=repo, check=True,
                          capture_output=True, text=True).stdout.strip()


def test_install_folder_shows_capabilities_asks_and_writes_env(home, tmp_path, cli):
    src = make_source(tmp_path / "src" / "weather", "weather", WEATHER_MANIFEST, WEATHER_INIT)
    (home / ".env").write_text("# mine\nOTHER=1\nWEATHER_REGION=eu\n")
    (home / "config.yaml").write_text("display:\n  skin: dark\n")
    code, out, err = cli("plugins", "install", str(src), input="y\nsecret-key\n")
    assert code == 0, err
    assert "tools:    weather_now" in out and "WEATHER_API_KEY, WEATHER_REGION (required)" in out
    assert "Enable weather now? [y/N]" in out
    assert (home / "plugins" / "weather" / "plugin.yaml").read_text() == WEATHER_MANIFEST
    env_text = (home / ".env").read_text()
    assert env_text == "# mine\nOTHER=1\nWEATHER_REGION=eu\nWEATHER_API_KEY=secret-key\n"
    assert stat.S_IMODE((home / ".env").stat().st_mode) == 0o600
    assert config(home) == {"display": {"skin": "dark"}, "plugins": {"enabled": ["weather"]}}
    entry = lock(home)["weather"]
    assert (entry["source"], entry["spec"], entry["version"]) == ("path", str(src), "1.0.0")
    assert entry["capabilities"]["tools"] == ["weather_now"]
    assert entry["capabilities"]["env"] == ["WEATHER_API_KEY", "WEATHER_REGION"]
    assert entry["files_digest"].startswith("sha256:") and entry["installed_at"].endswith("Z")
    code, out, _ = cli("plugins", "list", "--json", "--load")
    row = next(r for r in json.loads(out) if r["name"] == "weather")
    assert (row["state"], row["tools"]) == ("loaded", ["weather_now"])
    # A second install of the same name is refused and changes nothing.
    before = (home / "plugins.lock").read_text()
    code, _, err = cli("plugins", "install", str(src), "--no-input")
    assert code == 1 and "already installed" in err and "hermes plugins update weather" in err
    assert (home / "plugins.lock").read_text() == before


def test_no_input_installs_without_enabling_or_prompting(home, calculator, tmp_path, cli):
    shutil.rmtree(calculator)  # the fixture's copy; install the same plugin from elsewhere
    src = tmp_path / "calc"
    shutil.copytree(FIXTURES / "calculator", src)
    code, out, err = cli("plugins", "install", str(src), "--no-input")
    assert code == 0, err
    assert "Enable" not in out and "hermes plugins enable calculator" in out
    assert "plugins" not in config(home)
    assert lock(home)["calculator"]["source"] == "path"


def test_invalid_manifest_leaves_nothing(home, tmp_path, cli):
    src = make_source(tmp_path / "bad", "bad", "name: bad\nkind: sometimes\n", "")
    code, _, err = cli("plugins", "install", str(src), "--enable", "--no-input")
    assert code == 1 and "invalid manifest" in err and "kind" in err
    assert list((home / "plugins").iterdir()) == []
    assert not (home / "plugins.lock").exists() and not (home / "config.yaml").exists()


def test_failure_after_placing_files_undoes_everything(home, tmp_path, cli):
    src = make_source(tmp_path / "src" / "weather", "weather", WEATHER_MANIFEST, WEATHER_INIT)
    (home / ".env").write_text("OTHER=1\n")
    (home / "config.yaml").write_text("plugins:\n  enabled: []\n")
    (home / "plugins.lock").write_text('{"lock_version": 1, "plugins": {}}')
    # config.yaml becomes unreadable only after install read it: the write of
    # plugins.enabled fails once the files and .env are already in place.
    import hermes_agent.builtin_plugins.plugin_admin.install as install_module

    real = install_module.enable_in_config

    def broken(kernel, name):
        (home / "config.yaml").write_text("plugins: [unclosed\n")
        real(kernel, name)
    install_module.enable_in_config = broken
    try:
        code, _, err = cli("plugins", "install", str(src), "--enable", input="k\nr\n")
    finally:
        install_module.enable_in_config = real
    assert code == 1 and "not valid YAML" in err
    assert list((home / "plugins").iterdir()) == []
    assert (home / ".env").read_text() == "OTHER=1\n"
    assert (home / "config.yaml").read_text() == "plugins:\n  enabled: []\n"
    assert lock(home) == {}


def test_bad_sources_are_clear_errors(home, tmp_path, cli):
    code, _, err = cli("plugins", "install", str(tmp_path / "missing" / "dir"))
    assert code == 1 and "does not exist" in err
    (tmp_path / "empty").mkdir()
    code, _, err = cli("plugins", "install", str(tmp_path / "empty"))
    assert code == 1 and "no plugin.yaml" in err
    code, _, err = cli("plugins", "install", f"git+file://{tmp_path}/no-such-repo")
    assert code == 1 and "git clone" in err and "failed" in err
    make_source(tmp_path / "clash", "clash", "name: plugin-admin\n", "def register(ctx): pass\n")
    code, _, err = cli("plugins", "install", str(tmp_path / "clash"), "--no-input")
    assert code == 1 and "clashes with the builtin plugin" in err and "reserved" in err
    assert lock(home) == {}


@pytest.mark.parametrize("spec", ["./nope", "../nope/plugin", ".hidden/x", "~/nope-plugin",
                                  "/nope/abs", "./nope.git", "./nope.whl#subdirectory=x"])
def test_a_mistyped_path_is_reported_as_missing_not_fetched(home, tmp_path, cli, monkeypatch,
                                                             spec):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PATH", "")  # a git or pip run would fail differently
    code, out, err = cli("plugins", "install", spec, "--no-input")
    assert code == 1 and "does not exist" in err and "Check the path" in err
    assert str(tmp_path) in err  # where it looked
    assert "github.com" not in err + out and "git clone" not in err and "pip could" not in err
    assert lock(home) == {} and list((home / "plugins").iterdir()) == []


def test_an_existing_folder_named_like_owner_repo_is_a_path(home, tmp_path, cli, monkeypatch):
    make_source(tmp_path / "owner" / "weather", "weather", WEATHER_MANIFEST, WEATHER_INIT)
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("plugins", "install", "owner/weather", "--no-input")
    assert code == 0, err
    assert lock(home)["weather"]["source"] == "path"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with the plugin in a subdirectory, one commit."""
    repo = tmp_path / "repo"
    make_source(repo / "plugins" / "weather", "weather", WEATHER_MANIFEST, WEATHER_INIT)
    (repo / "README.md").write_text("several plugins\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "v1")
    return repo


def add_hook_commit(repo: Path) -> str:
    weather = repo / "plugins" / "weather"
    (weather / "plugin.yaml").write_text(WEATHER_MANIFEST.replace("1.0.0", "1.1.0")
                                         + "provides_hooks: [post_tool_call]\n")
    (weather / "__init__.py").write_text(WEATHER_INIT + "    ctx.register_hook('post_tool_call', "
                                         "lambda **kw: None)\n")
    git(repo, "commit", "-q", "-am", "v2 adds a hook")
    return git(repo, "rev-parse", "HEAD")


def test_git_update_consent_rollback_and_remove(home, repo, cli):
    first = git(repo, "rev-parse", "HEAD")
    spec = f"git+file://{repo}#subdirectory=plugins/weather"
    code, out, err = cli("plugins", "install", spec, "--enable", "--no-input")
    assert code == 0, err
    entry = lock(home)["weather"]
    assert (entry["source"], entry["commit"], entry["subdirectory"]) == ("git", first, "plugins/weather")
    assert entry["url"] == f"file://{repo}"
    assert not (home / "plugins" / "weather" / ".git").exists()
    data = home / "plugin-data" / "weather"
    data.mkdir(parents=True)
    (data / "state.db").write_text("keep me")

    code, out, _ = cli("plugins", "update", "weather")
    assert code == 0 and "up to date" in out
    second = add_hook_commit(repo)
    code, out, _ = cli("plugins", "update", "weather", "--dry-run")
    assert code == 0 and "+ new hooks: post_tool_call" in out and "Dry run" in out
    assert lock(home)["weather"]["commit"] == first
    code, out, err = cli("plugins", "update", "weather", input="n\n")
    assert code == 1 and "Accept it? [y/N]" in out and "declined" in err
    code, _, err = cli("plugins", "update", "weather", "--no-input")
    assert code == 1 and "--yes" in err
    assert lock(home)["weather"]["commit"] == first
    assert "1.0.0" in (home / "plugins" / "weather" / "plugin.yaml").read_text()

    code, out, err = cli("plugins", "update", "weather", input="y\n")
    assert code == 0, err
    entry = lock(home)["weather"]
    assert (entry["commit"], entry["version"]) == (second, "1.1.0")
    assert entry["capabilities"]["hooks"] == ["post_tool_call"]
    assert [h["commit"] for h in entry["history"]] == [first]
    assert (Path(entry["history"][0]["backup"]) / "plugin.yaml").read_text() == WEATHER_MANIFEST
    assert (data / "state.db").read_text() == "keep me"
    assert config(home)["plugins"]["enabled"] == ["weather"]

    code, out, err = cli("plugins", "rollback", "weather")
    assert code == 0 and "1.0.0" in out, err
    assert "1.0.0" in (home / "plugins" / "weather" / "plugin.yaml").read_text()
    assert (lock(home)["weather"]["commit"], lock(home)["weather"]["history"]) == (first, [])
    code, _, err = cli("plugins", "rollback", "weather")  # no swapping back to the newer one
    assert code == 1 and "nothing older to roll back to" in err
    assert "1.0.0" in (home / "plugins" / "weather" / "plugin.yaml").read_text()

    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"default": "m"}, "plugins": {"enabled": ["weather"], "disabled": ["weather"],
                                               "entries": {"weather": {"units": "C"}, "x": {"a": 1}}}}))
    code, out, err = cli("plugins", "remove", "weather", "--keep-data")
    assert code == 0, err
    assert not (home / "plugins" / "weather").exists()
    assert not (home / "plugin-backups" / "weather").exists()
    assert lock(home) == {}
    assert config(home) == {"model": {"default": "m"},
                            "plugins": {"enabled": [], "disabled": [], "entries": {"x": {"a": 1}}}}
    assert (data / "state.db").read_text() == "keep me"
    code, _, err = cli("plugins", "remove", "weather")
    assert code == 1 and "no plugin named 'weather'" in err


def test_folder_update_and_remove_deletes_data_by_default(home, tmp_path, cli):
    src = make_source(tmp_path / "w", "weather", WEATHER_MANIFEST, WEATHER_INIT)
    assert cli("plugins", "install", str(src), "--no-input")[0] == 0
    (src / "plugin.yaml").write_text(WEATHER_MANIFEST.replace("1.0.0", "1.0.1"))
    code, out, err = cli("plugins", "update", "--all", "--no-input")
    assert code == 0, err
    assert "Capability changes:\n  none" in out  # no consent needed: nothing grew
    assert lock(home)["weather"]["version"] == "1.0.1"
    (home / "plugin-data" / "weather").mkdir(parents=True)
    assert cli("plugins", "remove", "weather")[0] == 0
    assert not (home / "plugin-data" / "weather").exists()


def test_unknown_names_get_suggestions(home, tmp_path, cli):
    src = make_source(tmp_path / "w", "weather", WEATHER_MANIFEST, WEATHER_INIT)
    assert cli("plugins", "install", str(src), "--no-input")[0] == 0
    for command in ("update", "rollback", "remove", "doctor"):
        code, _, err = cli("plugins", command, "wether")
        assert code == 1 and "weather" in err, (command, err)
    code, _, err = cli("plugins", "rollback", "weather")
    assert code == 1 and "no previous version" in err


def test_repeated_rollbacks_walk_back_through_the_last_three_versions(home, tmp_path, cli):
    src = make_source(tmp_path / "w", "weather", WEATHER_MANIFEST, WEATHER_INIT)
    assert cli("plugins", "install", str(src), "--no-input")[0] == 0
    for minor in range(1, 5):  # 1.0.0 -> 1.1.0 -> ... -> 1.4.0
        (src / "plugin.yaml").write_text(WEATHER_MANIFEST.replace("1.0.0", f"1.{minor}.0"))
        code, _, err = cli("plugins", "update", "weather", "--no-input")
        assert code == 0, err
    entry = lock(home)["weather"]
    assert [h["version"] for h in entry["history"]] == ["1.3.0", "1.2.0", "1.1.0"]
    slots = home / "plugin-backups" / "weather"
    assert sorted(p.name for p in slots.iterdir()) == sorted(
        Path(h["backup"]).name for h in entry["history"])  # 1.0.0's saved files were dropped

    def installed() -> str:
        return yaml.safe_load((home / "plugins" / "weather" / "plugin.yaml").read_text())["version"]

    for expected, left in (("1.3.0", 2), ("1.2.0", 1), ("1.1.0", 0)):
        code, out, err = cli("plugins", "rollback", "weather")
        assert code == 0 and f"Rolled weather back to {expected}" in out, err
        assert (installed(), lock(home)["weather"]["version"]) == (expected, expected)
        assert len(lock(home)["weather"]["history"]) == len(list(slots.iterdir())) == left
    assert "This is the oldest version recorded" in out
    code, _, err = cli("plugins", "rollback", "weather")
    assert code == 1 and "weather is at 1.1.0, the oldest version plugins.lock still records" in err
    assert "hermes plugins update weather" in err and installed() == "1.1.0"
    code, out, err = cli("plugins", "update", "weather", "--no-input")  # back to the newest
    assert code == 0 and installed() == "1.4.0", err
    assert [h["version"] for h in lock(home)["weather"]["history"]] == ["1.1.0"]
    assert "rolled_back" not in lock(home)["weather"]
