"""Layered configuration (hermes_agent.config)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

from hermes_agent.config import (
    DEFAULTS,
    Config,
    hermes_home,
    load_config,
    read_env_file,
)
from hermes_agent import write_config_value
from hermes_agent.errors import ConfigError, HermesError
from hermes_agent.home import ValidationCache


def write_config(home: Path, text: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def load(home: Path, overrides=None, env=None) -> Config:
    return load_config(home, overrides=overrides, env={} if env is None else env)


def config_error(home: Path, **kw) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load(home, **kw)
    assert isinstance(info.value, HermesError)
    return info.value


# --- defaults and merging -----------------------------------------------------------------


def test_defaults_when_no_file(tmp_path):
    cfg = load(tmp_path)
    assert cfg.warnings == []
    assert cfg.home == tmp_path
    assert cfg.path == tmp_path / "config.yaml"
    assert cfg.plugins_enabled is None
    assert cfg.get("plugins.enabled") is None
    assert cfg.plugins_disabled == []
    assert cfg.get("context.engine") == "compressor"  # the builtin context plugin's engine
    assert cfg.get("sessions.store") == "sqlite"
    assert cfg.get("memory.provider") == ""
    assert cfg.get("toolsets") is None
    assert cfg.get("model.default") == ""
    assert cfg.plugin_entry("anything") == {}


def test_defaults_when_home_does_not_exist(tmp_path):
    cfg = load(tmp_path / "missing" / "home")
    assert cfg.get("sessions.store") == "sqlite"


def test_empty_file_means_defaults(tmp_path):
    write_config(tmp_path, "")
    assert load(tmp_path).get("context.engine") == "compressor"
    write_config(tmp_path, "# only a comment\n")
    assert load(tmp_path).plugins_enabled is None


def test_defaults_are_not_mutated(tmp_path):
    snapshot = yaml.safe_dump(DEFAULTS)
    write_config(tmp_path, "plugins:\n  enabled: [a]\n  disabled: [b]\nmemory:\n  provider: x\n")
    cfg = load(tmp_path)
    cfg.data["plugins"]["disabled"].append("c")
    assert yaml.safe_dump(DEFAULTS) == snapshot


def test_get_missing_key_returns_default(tmp_path):
    cfg = load(tmp_path)
    assert cfg.get("no.such.key") is None
    assert cfg.get("no.such.key", 5) == 5
    assert cfg.get("context.engine.deeper", "d") == "d"


def test_deep_merge_over_defaults(tmp_path):
    write_config(tmp_path, """\
        model:
          default: gpt-4o
        plugins:
          enabled: [calculator, web]
          entries:
            calculator:
              allow_tool_override: true
              precision: 4
        context:
          engine: lcm
        """)
    cfg = load(tmp_path)
    assert cfg.get("model.default") == "gpt-4o"
    assert cfg.get("model.provider") == ""  # sibling default kept
    assert cfg.get("model.base_url") == ""
    assert cfg.plugins_enabled == ["calculator", "web"]
    assert cfg.plugins_disabled == []
    assert cfg.get("context.engine") == "lcm"
    assert cfg.get("sessions.store") == "sqlite"
    entry = cfg.plugin_entry("missing", "calculator")
    assert entry["allow_tool_override"] is True
    assert entry["precision"] == 4
    assert cfg.warnings == []


# --- ${VAR} expansion ---------------------------------------------------------------------


def test_var_expansion_from_env(tmp_path):
    write_config(tmp_path, "model:\n  api_key: ${MY_KEY}\n  base_url: https://${HOST}/v1\n")
    cfg = load(tmp_path, env={"MY_KEY": "sk-env", "HOST": "api.example.com"})
    assert cfg.get("model.api_key") == "sk-env"
    assert cfg.get("model.base_url") == "https://api.example.com/v1"
    assert cfg.warnings == []


def test_var_expansion_from_dotenv_and_environment_wins(tmp_path):
    write_config(tmp_path, "model:\n  api_key: ${MY_KEY}\n  provider: ${PROVIDER}\n")
    (tmp_path / ".env").write_text("MY_KEY=sk-dotenv\nPROVIDER=openrouter\n")
    cfg = load(tmp_path, env={})
    assert cfg.get("model.api_key") == "sk-dotenv"
    assert cfg.get("model.provider") == "openrouter"
    cfg = load(tmp_path, env={"MY_KEY": "sk-env"})
    assert cfg.get("model.api_key") == "sk-env"  # environment wins over .env
    assert cfg.get("model.provider") == "openrouter"


def test_var_default_form(tmp_path):
    write_config(tmp_path, "sessions:\n  store: ${STORE:-files}\nmemory:\n  provider: ${MEM:-}\n")
    cfg = load(tmp_path)
    assert cfg.get("sessions.store") == "files"
    assert cfg.get("memory.provider") == ""
    assert cfg.warnings == []
    assert load(tmp_path, env={"STORE": "sqlite"}).get("sessions.store") == "sqlite"


def test_unset_var_is_left_as_written_with_a_warning(tmp_path):
    write_config(tmp_path, "model:\n  api_key: ${NOT_SET_ANYWHERE}\n")
    cfg = load(tmp_path)
    assert cfg.get("model.api_key") == "${NOT_SET_ANYWHERE}"
    assert len(cfg.warnings) == 1
    assert "model.api_key" in cfg.warnings[0]
    assert "NOT_SET_ANYWHERE" in cfg.warnings[0]


def test_var_expansion_inside_lists(tmp_path):
    write_config(tmp_path, "plugins:\n  enabled: [base, '${EXTRA}']\n")
    assert load(tmp_path, env={"EXTRA": "more"}).plugins_enabled == ["base", "more"]


def test_env_defaults_to_os_environ(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_TEST_STORE", "from-os")
    write_config(tmp_path, "sessions:\n  store: ${HERMES_TEST_STORE}\n")
    assert load_config(tmp_path).get("sessions.store") == "from-os"


# --- overrides ----------------------------------------------------------------------------


def test_runtime_overrides_win_over_everything(tmp_path):
    write_config(tmp_path, """\
        memory:
          provider: ${MEM}
        sessions:
          store: files
        plugins:
          enabled: [a]
        """)
    (tmp_path / ".env").write_text("MEM=honcho\n")
    cfg = load(tmp_path, env={"MEM": "mem0"}, overrides={
        "memory.provider": "holographic",
        "sessions.store": "sqlite",
        "plugins.enabled": ["b", "c"],
        "context.engine": "lcm",
        "brand.new.key": 1,
    })
    assert cfg.get("memory.provider") == "holographic"
    assert cfg.get("sessions.store") == "sqlite"
    assert cfg.plugins_enabled == ["b", "c"]
    assert cfg.get("context.engine") == "lcm"
    assert cfg.get("plugins.disabled") == []  # siblings of an overridden key are kept
    assert cfg.get("brand.new.key") == 1


def test_invalid_override_is_an_error(tmp_path):
    err = config_error(tmp_path, overrides={"plugins.enabled": "a,b"})
    assert any(p.startswith("plugins.enabled:") for p in err.problems)


# --- validation errors --------------------------------------------------------------------


def test_plugins_enabled_as_string_is_an_error(tmp_path):
    path = write_config(tmp_path, 'plugins:\n  enabled: "a,b"\n')
    err = config_error(tmp_path)
    assert any(p.startswith("plugins.enabled:") for p in err.problems), err.problems
    assert err.path == str(path)
    assert str(path) in str(err)
    assert "plugins.enabled:" in str(err)


@pytest.mark.parametrize("text, location", [
    ("memory:\n  provider: [1]\n", "memory.provider"),
    ("plugins:\n  disabled: nope\n", "plugins.disabled"),
    ("toolsets: hermes-cli\n", "toolsets"),
    ("context: compressor\n", "context"),
    ("plugins:\n  entries:\n    foo:\n      allow_tool_override: maybe\n",
     "plugins.entries.foo.allow_tool_override"),
    ("platform_toolsets:\n  telegram: hermes-telegram\n", "platform_toolsets.telegram"),
])
def test_wrong_types_are_errors(tmp_path, text, location):
    write_config(tmp_path, text)
    err = config_error(tmp_path)
    assert any(p.startswith(f"{location}:") for p in err.problems), err.problems


def test_all_problems_are_reported_at_once(tmp_path):
    write_config(tmp_path, "memory:\n  provider: [1]\nplugins:\n  enabled: x\n")
    err = config_error(tmp_path)
    assert any(p.startswith("memory.provider:") for p in err.problems)
    assert any(p.startswith("plugins.enabled:") for p in err.problems)


# --- compatibility with the original's config.yaml -----------------------------------------


ORIGINAL_CONFIG = """\
    model:
      default: anthropic/claude-sonnet-4
      provider: openrouter
    toolsets:
      - hermes-cli
    display:
      compact: false
      personality: helpful
      resume_display: full
      skin: default
    terminal:
      backend: local
      cwd: .
      timeout: 180
    compression:
      enabled: true
      threshold: 0.5
    memory:
      memory_enabled: true
      user_profile_enabled: true
      provider: ""
    _config_version: 33
    plugins:
      enabled: [x]
    """


def test_original_config_loads_with_a_warning_listing_unused_keys(tmp_path):
    path = write_config(tmp_path, ORIGINAL_CONFIG)
    cfg = load(tmp_path)
    assert cfg.get("model.default") == "anthropic/claude-sonnet-4"
    assert cfg.get("model.provider") == "openrouter"
    assert cfg.get("toolsets") == ["hermes-cli"]
    assert cfg.plugins_enabled == ["x"]
    assert cfg.get("memory.provider") == ""
    # unused keys are kept as written
    assert cfg.get("display.skin") == "default"
    assert cfg.get("terminal.timeout") == 180
    assert cfg.get("_config_version") == 33
    assert len(cfg.warnings) == 1
    warning = cfg.warnings[0]
    assert str(path) in warning
    assert "not used" in warning
    for key in ("display", "terminal", "_config_version",
                "memory.memory_enabled", "memory.user_profile_enabled"):
        assert key in warning
    assert "compression" not in warning  # the compressor reads it
    assert cfg.get("compression.threshold") == 0.5
    assert "unknown keys" not in warning


def test_unknown_top_level_key_warns(tmp_path):
    write_config(tmp_path, "frobnicate: 1\nsessions:\n  store: files\n")
    cfg = load(tmp_path)
    assert cfg.get("sessions.store") == "files"
    assert len(cfg.warnings) == 1
    assert "unknown keys" in cfg.warnings[0]
    assert "frobnicate" in cfg.warnings[0]


def test_model_as_a_plain_string(tmp_path):
    write_config(tmp_path, "model: some-model\n")
    cfg = load(tmp_path)
    assert cfg.get("model") == "some-model"  # the models plugin reads it as model.default
    assert cfg.get("model.provider") is None


# --- malformed files ----------------------------------------------------------------------


def test_malformed_yaml_names_the_line(tmp_path):
    path = write_config(tmp_path, "model:\n  default: x\n    provider: y\n")
    err = config_error(tmp_path)
    message = str(err)
    assert str(path) in message
    assert "line 3" in message
    assert "YAML" in message
    assert err.path == str(path)


def test_unclosed_bracket_names_a_line(tmp_path):
    write_config(tmp_path, "plugins:\n  enabled: [a, b\n")
    assert "line " in str(config_error(tmp_path))


@pytest.mark.parametrize("text, kind", [("- a\n- b\n", "list"), ("just text\n", "str"),
                                        ("42\n", "int")])
def test_non_mapping_file_is_an_error(tmp_path, text, kind):
    path = write_config(tmp_path, text)
    err = config_error(tmp_path)
    assert str(path) in str(err)
    assert "mapping" in str(err)
    assert kind in str(err)


# --- validation cache ---------------------------------------------------------------------


def test_config_validation_cache(tmp_path):
    write_config(tmp_path, ORIGINAL_CONFIG)
    cache_file = tmp_path / "cache.json"
    cache = ValidationCache(cache_file)
    first = load_config(tmp_path, env={}, cache=cache)
    cache.save()
    second = load_config(tmp_path, env={}, cache=ValidationCache(cache_file))
    assert second.data == first.data
    assert second.warnings == first.warnings

    write_config(tmp_path, "memory:\n  provider: [1]\n")
    cache = ValidationCache(cache_file)
    with pytest.raises(ConfigError):
        load_config(tmp_path, env={}, cache=cache)
    cache.save()
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, env={}, cache=ValidationCache(cache_file))
    assert any(p.startswith("memory.provider:") for p in info.value.problems)


# --- writing ------------------------------------------------------------------------------


USER_CONFIG = """\
    # my settings
    model:
      default: anthropic/claude-sonnet-4
      api_key: ${OPENROUTER_API_KEY}
    display:
      skin: mono
    my_custom_thing:
      nested: [1, 2]
    plugins:
      enabled: [calculator]
    """


def test_write_keeps_other_keys(tmp_path):
    path = write_config(tmp_path, USER_CONFIG)
    write_config_value(tmp_path, "memory.provider", "honcho")
    data = yaml.safe_load(path.read_text())
    assert data["memory"] == {"provider": "honcho"}
    assert data["model"] == {"default": "anthropic/claude-sonnet-4",
                             "api_key": "${OPENROUTER_API_KEY}"}  # not expanded
    assert data["display"] == {"skin": "mono"}
    assert data["my_custom_thing"] == {"nested": [1, 2]}
    assert data["plugins"] == {"enabled": ["calculator"]}
    assert "fallback_providers" not in data  # defaults are not written out
    cfg = load(tmp_path, env={"OPENROUTER_API_KEY": "sk"})
    assert cfg.get("memory.provider") == "honcho"


def test_write_replaces_nested_value(tmp_path):
    path = write_config(tmp_path, USER_CONFIG)
    write_config_value(tmp_path, "plugins.enabled", ["a", "b"])
    write_config_value(tmp_path, "plugins.entries.a.allow_tool_override", True)
    data = yaml.safe_load(path.read_text())
    assert data["plugins"] == {"enabled": ["a", "b"],
                               "entries": {"a": {"allow_tool_override": True}}}
    assert load(tmp_path).plugins_enabled == ["a", "b"]


def test_write_creates_the_file_and_home(tmp_path):
    home = tmp_path / "new-home"
    write_config_value(home, "sessions.store", "files")
    assert yaml.safe_load((home / "config.yaml").read_text()) == {"sessions": {"store": "files"}}
    assert not [p for p in home.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("key, value", [("plugins.enabled", "notalist"),
                                        ("memory.provider", [1]),
                                        ("plugins.entries.x.allow_tool_override", "maybe"),
                                        ("context", "flat")])
def test_write_refuses_invalid_values_and_leaves_file_unchanged(tmp_path, key, value):
    path = write_config(tmp_path, USER_CONFIG)
    before = path.read_bytes()
    with pytest.raises(ConfigError) as info:
        write_config_value(tmp_path, key, value)
    assert any(p.startswith(key.split(".")[0]) for p in info.value.problems)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml"]


def test_write_refuses_invalid_value_without_creating_a_file(tmp_path):
    with pytest.raises(ConfigError):
        write_config_value(tmp_path, "plugins.enabled", "a,b")
    assert not (tmp_path / "config.yaml").exists()


def test_write_into_malformed_file_raises_and_leaves_it(tmp_path):
    path = write_config(tmp_path, "model:\n  default: x\n    provider: y\n")
    before = path.read_bytes()
    with pytest.raises(ConfigError):
        write_config_value(tmp_path, "memory.provider", "honcho")
    assert path.read_bytes() == before


def test_unset(tmp_path):
    path = write_config(tmp_path, USER_CONFIG)
    write_config_value(tmp_path, "plugins.enabled", None, unset=True)
    data = yaml.safe_load(path.read_text())
    assert "enabled" not in (data.get("plugins") or {})
    assert data["display"] == {"skin": "mono"}
    assert load(tmp_path).plugins_enabled is None  # default again

    write_config_value(tmp_path, "display", None, unset=True)
    assert "display" not in yaml.safe_load(path.read_text())


def test_unset_missing_key_is_harmless(tmp_path):
    path = write_config(tmp_path, USER_CONFIG)
    write_config_value(tmp_path, "no.such.key", None, unset=True)
    write_config_value(tmp_path, "model.default.deeper", None, unset=True)
    data = yaml.safe_load(path.read_text())
    assert data["model"]["default"] == "anthropic/claude-sonnet-4"
    assert data["my_custom_thing"] == {"nested": [1, 2]}


# --- hermes_home ----------------------------------------------------------------------------


def test_hermes_home_default(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("HERMES_HOME", raising=False)
    assert hermes_home({}) == Path.home() / ".hermes"
    assert hermes_home() == tmp_path / ".hermes"
    assert hermes_home({"HERMES_HOME": ""}) == tmp_path / ".hermes"


def test_hermes_home_from_env(monkeypatch, tmp_path):
    assert hermes_home({"HERMES_HOME": str(tmp_path / "h")}) == tmp_path / "h"
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "other"))
    assert hermes_home() == tmp_path / "other"
    monkeypatch.setenv("HOME", str(tmp_path))
    assert hermes_home({"HERMES_HOME": "~/x"}) == tmp_path / "x"


def test_load_config_uses_hermes_home_from_env(tmp_path):
    write_config(tmp_path, "sessions:\n  store: files\n")
    cfg = load_config(env={"HERMES_HOME": str(tmp_path)})
    assert cfg.home == tmp_path
    assert cfg.get("sessions.store") == "files"


# --- .env parsing -------------------------------------------------------------------------


def test_read_env_file(tmp_path):
    path = tmp_path / ".env"
    path.write_text(textwrap.dedent("""\
        # a comment line
        PLAIN=value
        export EXPORTED=yes
        DOUBLE="two words"
        SINGLE='single quoted'
        COMMENTED=abc # trailing comment
        HASH=has#hash
          SPACED = padded
        EMPTY=
        EQUALS=a=b=c
        not a pair

        QUOTED_HASH="a # b"
        """), encoding="utf-8")
    assert read_env_file(path) == {
        "PLAIN": "value",
        "EXPORTED": "yes",
        "DOUBLE": "two words",
        "SINGLE": "single quoted",
        "COMMENTED": "abc",
        "HASH": "has#hash",
        "SPACED": "padded",
        "EMPTY": "",
        "EQUALS": "a=b=c",
        "QUOTED_HASH": "a # b",
    }


def test_read_env_file_quoted_value_with_trailing_comment(tmp_path):
    path = tmp_path / ".env"
    path.write_text('KEY="quoted" # note\nOTHER=\'x\'  # note\n')
    assert read_env_file(path) == {"KEY": "quoted", "OTHER": "x"}


def test_read_env_file_missing(tmp_path):
    assert read_env_file(tmp_path / "nope.env") == {}


def test_sections_declared_by_builtin_plugins_are_validated_with_the_file(tmp_path):
    from hermes_agent.config import builtin_declarations
    from hermes_agent.slots import slot_defaults
    from hermes_agent.validation import ConfigModel

    # The kernel's own model knows none of them: the plugins that read them declare them
    # (config_sections: in their plugin.yaml).
    sections, slots, *_ = builtin_declarations()
    assert {"approvals", "agent", "context_file_max_chars", "model"} <= set(sections)
    assert not set(sections) & set(ConfigModel.model_fields)
    # ... some extend the sections holding slot selections (builtin memory's limits in
    # `memory`, recall's `sessions.auto_title`, the web tools' keys in `web`, the browser
    # tools' in `browser`, the voice and image tools' in `tts`, `stt` and `image_gen`); `model`
    # (a plain string or a section) is the models plugin's own
    assert set(sections) & set(slot_defaults(slots)) == {"memory", "sessions", "web", "model",
                                                         "browser", "tts", "stt", "image_gen"}
    write_config(tmp_path, """
        approvals: {mode: sometimes}
        agent: {max_turns: 0}
        context_file_max_chars: many
    """)
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path, env={})
    text = str(err.value)
    assert "approvals.mode: Input should be 'manual', 'smart' or 'off'" in text
    assert "agent.max_turns: Input should be greater than 0" in text
    assert "context_file_max_chars: Input should be a valid integer" in text

    write_config(tmp_path, "approvals: {mode: off}\nagent: {max_turns: 7, colour: red}\n")
    config = load_config(tmp_path, env={})
    assert config.get("approvals.mode") == "off"  # YAML's bare off (false) is understood
    assert config.get("agent.max_turns") == 7 and config.get("terminal.timeout") == 180
    assert any("agent.colour" in w for w in config.warnings)


def test_parsed_config_is_cached_so_yaml_is_not_imported_again(tmp_path):
    import subprocess
    import sys

    write_config(tmp_path, "model:\n  default: m1\nplugins:\n  enabled: [a]\n")
    code = ("import sys\nfrom pathlib import Path\n"
            "from hermes_agent.config import load_config\n"
            "from hermes_agent.home import ValidationCache\n"
            "home = Path(sys.argv[1])\n"
            "cache = ValidationCache(home / 'cache' / 'validated.json')\n"
            "config = load_config(home, env={}, cache=cache)\n"
            "cache.save()\n"
            "print(config.get('model.default'), 'yaml' in sys.modules)\n")

    def run() -> str:
        return subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                              text=True, check=True).stdout.strip()

    assert run() == "m1 True"  # first read parses the file
    assert run() == "m1 False"  # same bytes: served from the cache, PyYAML never imported
    write_config(tmp_path, "model:\n  default: m2\n")
    assert run() == "m2 True"  # an edit is parsed again


def test_a_disabled_builtin_keeps_its_section_validated_and_accepted(tmp_path):
    """Sections belong to the plugin's plugin.yaml, not to its being loaded: disabling the
    agent neither rejects its settings nor lets a wrong one through."""
    write_config(tmp_path, "plugins: {disabled: [agent]}\nagent: {max_turns: 0}\n")
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path, env={})
    assert "agent.max_turns: Input should be greater than 0" in str(err.value)
    write_config(tmp_path, "plugins: {disabled: [agent]}\nagent: {max_turns: 7}\n")
    config = load_config(tmp_path, env={})
    assert config.get("agent.max_turns") == 7 and config.startup_warnings == []


def test_config_validated_under_other_sections_is_validated_again(tmp_path, monkeypatch):
    """The cache key holds the sections plugins declare: a plugin.yaml that adds or drops
    one never reuses a result validated without it."""
    import hermes_agent.config as config_module

    write_config(tmp_path, "agent: {max_turns: 0}\n")
    cache = ValidationCache(tmp_path / "cache.json")
    declared = config_module.builtin_declarations(cache)
    monkeypatch.setattr(config_module, "builtin_declarations", lambda cache=None: declared._replace(
        sections={k: v for k, v in declared.sections.items() if k != "agent"}))
    assert load_config(tmp_path, env={}, cache=cache).get("agent.max_turns") == 0  # unknown
    monkeypatch.undo()
    with pytest.raises(ConfigError):
        load_config(tmp_path, env={}, cache=cache)
