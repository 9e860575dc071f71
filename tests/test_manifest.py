"""plugin.yaml reading and validation (hermes_agent.manifest)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hermes_agent import __version__
from hermes_agent.errors import ManifestError
from hermes_agent.manifest import KINDS, CliDeclaration, EnvRequirement, Manifest
from hermes_agent.manifest_read import check_requires_hermes, read_manifest
from hermes_agent.home import ValidationCache

FIXTURES = Path(__file__).parent / "fixtures"


def write(tmp_path: Path, text: str, name: str = "plugin.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def read_ok(tmp_path: Path, text: str):
    result = read_manifest(write(tmp_path, text))
    assert result.error is None, str(result.error)
    assert isinstance(result.manifest, Manifest)
    return result


def read_bad(tmp_path: Path, text: str):
    path = write(tmp_path, text)
    result = read_manifest(path)
    assert result.manifest is None
    assert isinstance(result.error, ManifestError)
    assert result.error.path == str(path)
    assert str(path) in str(result.error)
    return result


# --- valid manifests ---------------------------------------------------------------------


def test_seed_calculator_manifest_validates():
    result = read_manifest(FIXTURES / "calculator" / "plugin.yaml")
    assert result.error is None, str(result.error)
    assert result.warnings == []
    m = result.manifest
    assert m.name == "calculator"
    assert m.version == "1.0.0"
    assert m.kind == "standalone"
    assert m.provides_tools == ("calculate", "unit_convert")
    assert m.provides_hooks == ("post_tool_call",)
    assert "calculator" in m.description.lower()


def test_defaults(tmp_path):
    result = read_ok(tmp_path, "name: minimal\n")
    m = result.manifest
    assert result.warnings == []
    assert m.name == "minimal"
    assert m.kind == "standalone"
    assert m.version == ""
    assert m.description == ""
    assert m.requires_env == ()
    assert m.optional_env == ()
    assert m.provides_tools == ()
    assert m.provides_hooks == ()
    assert m.manifest_version == 1
    assert m.requires_hermes == ""
    assert m.config == {}
    assert m.synthesized is False


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_value(tmp_path, kind):
    assert set(KINDS) == {"standalone", "backend", "exclusive", "platform", "model-provider"}
    m = read_ok(tmp_path, f"name: p\nkind: {kind}\n").manifest
    assert m.kind == kind


def test_unknown_kind_is_an_error_naming_kind_and_valid_kinds(tmp_path):
    result = read_bad(tmp_path, "name: p\nkind: plugin-of-doom\n")
    problems = result.error.problems
    assert any(p.startswith("kind:") for p in problems), problems
    text = str(result.error)
    for kind in KINDS:
        assert kind in text


def test_missing_name_is_an_error(tmp_path):
    result = read_bad(tmp_path, "version: 1.0.0\n")
    assert any(p.startswith("name:") for p in result.error.problems)


def test_default_name_fills_a_missing_name(tmp_path):
    result = read_manifest(write(tmp_path, "version: '2'\n"), default_name="from-dir")
    assert result.error is None
    assert result.manifest.name == "from-dir"


def test_bad_plugin_name_is_an_error(tmp_path):
    result = read_bad(tmp_path, "name: 'has spaces'\n")
    assert any(p.startswith("name:") for p in result.error.problems)


# --- requires_env -------------------------------------------------------------------------


def test_requires_env_simple_and_rich_forms_mixed(tmp_path):
    m = read_ok(tmp_path, """\
        name: weather
        requires_env:
          - SIMPLE_KEY
          - name: WEATHER_API_KEY
            description: API key for the weather service
            url: https://example.com/keys
            secret: true
          - name: WEATHER_REGION
        optional_env:
          - OPTIONAL_ONE
          - name: OPTIONAL_TWO
            description: optional
        """).manifest
    assert m.requires_env == (
        EnvRequirement("SIMPLE_KEY"),
        EnvRequirement("WEATHER_API_KEY", "API key for the weather service",
                       "https://example.com/keys", True),
        EnvRequirement("WEATHER_REGION"),
    )
    assert [e.name for e in m.optional_env] == ["OPTIONAL_ONE", "OPTIONAL_TWO"]
    assert m.optional_env[1].description == "optional"
    assert all(isinstance(e, EnvRequirement) for e in m.requires_env + m.optional_env)


@pytest.mark.parametrize("entry", ["'1BAD'", "'BAD-NAME'", "'has space'",
                                   "{name: 'bad-name'}", "{name: '9X'}"])
def test_bad_env_name_is_an_error(tmp_path, entry):
    result = read_bad(tmp_path, f"name: p\nrequires_env: [{entry}]\n")
    problems = result.error.problems
    assert any(p.startswith("requires_env") and "environment variable name" in p
               for p in problems), problems


def test_rich_env_entry_without_name_is_an_error(tmp_path):
    result = read_bad(tmp_path, "name: p\nrequires_env: [{description: no name}]\n")
    assert any(p.startswith("requires_env") for p in result.error.problems)


# --- forward-compatible, unknown and legacy keys --------------------------------------------


def test_forward_compatible_keys_are_accepted(tmp_path):
    result = read_ok(tmp_path, """\
        name: future
        manifest_version: 2
        license: MIT
        homepage: https://example.com/future
        tags: [search, web]
        requires_hermes: ">=0.1"
        python_dependencies: ["httpx>=0.27", "rich"]
        optional_env: [FUTURE_TOKEN]
        label: Future Plugin
        config:
          depth: 3
          nested: {a: 1}
        """)
    assert result.warnings == []
    m = result.manifest
    assert m.manifest_version == 2
    assert m.license == "MIT"
    assert m.homepage == "https://example.com/future"
    assert m.tags == ("search", "web")
    assert m.requires_hermes == ">=0.1"
    assert m.python_dependencies == ("httpx>=0.27", "rich")
    assert m.optional_env == (EnvRequirement("FUTURE_TOKEN"),)
    assert m.label == "Future Plugin"
    assert m.config == {"depth": 3, "nested": {"a": 1}}


def test_unknown_key_is_a_warning_not_an_error(tmp_path):
    result = read_ok(tmp_path, "name: p\nfrobnicate: yes\nversion: '1'\n")
    assert result.manifest.name == "p"
    assert len(result.warnings) == 1
    assert "frobnicate" in result.warnings[0]
    assert not hasattr(result.manifest, "frobnicate")


def test_original_ignored_keys_are_warnings(tmp_path):
    result = read_ok(tmp_path, "name: p\nplatforms: [cli]\nexternal_dependencies: []\n")
    assert any("platforms" in w for w in result.warnings)
    assert any("external_dependencies" in w for w in result.warnings)


def test_legacy_aliases_are_mapped_with_warnings(tmp_path):
    result = read_ok(tmp_path, """\
        name: legacy
        hooks: [pre_tool_call]
        tools: [old_tool]
        pip_dependencies: [requests]
        """)
    m = result.manifest
    assert m.provides_hooks == ("pre_tool_call",)
    assert m.provides_tools == ("old_tool",)
    assert m.python_dependencies == ("requests",)
    joined = "\n".join(result.warnings)
    for old, new in (("hooks", "provides_hooks"), ("tools", "provides_tools"),
                     ("pip_dependencies", "python_dependencies")):
        assert f"'{old}:'" in joined and new in joined


def test_legacy_provides_mapping_is_mapped_with_a_warning(tmp_path):
    result = read_ok(tmp_path, "name: legacy\nprovides:\n  tools: [t1, t2]\n  hooks: [h1]\n")
    assert result.manifest.provides_tools == ("t1", "t2")
    assert result.manifest.provides_hooks == ("h1",)
    assert any("provides" in w for w in result.warnings)


def test_current_key_wins_over_legacy_alias(tmp_path):
    result = read_ok(tmp_path, "name: p\nprovides_tools: [new]\ntools: [old]\n")
    assert result.manifest.provides_tools == ("new",)
    assert result.warnings


# --- malformed files ---------------------------------------------------------------------------


def test_malformed_yaml_names_the_line_and_path(tmp_path):
    result = read_bad(tmp_path, "name: p\nversion: 1.0\n  description: broken: here\n")
    (problem,) = result.error.problems
    assert "line 3" in problem
    assert "YAML" in problem


def test_unclosed_bracket_reports_a_line(tmp_path):
    result = read_bad(tmp_path, "name: p\nprovides_tools: [a, b\n")
    assert "line " in result.error.problems[0]


def test_top_level_list_is_a_clear_error(tmp_path):
    result = read_bad(tmp_path, "- name: p\n- version: 1\n")
    (problem,) = result.error.problems
    assert problem.startswith("(top level):")
    assert "mapping" in problem


def test_top_level_scalar_is_a_clear_error(tmp_path):
    result = read_bad(tmp_path, "just some text\n")
    assert "mapping" in result.error.problems[0]


def test_provides_tools_as_a_string_is_an_error(tmp_path):
    result = read_bad(tmp_path, "name: p\nprovides_tools: calculate\n")
    problems = result.error.problems
    assert any(p.startswith("provides_tools: ") for p in problems), problems
    assert any("list" in p for p in problems)


def test_wrong_type_for_tags_is_an_error(tmp_path):
    result = read_bad(tmp_path, "name: p\ntags: {a: 1}\n")
    assert any(p.startswith("tags") for p in result.error.problems)


def test_missing_file_is_an_error_not_an_exception(tmp_path):
    path = tmp_path / "nope" / "plugin.yaml"
    result = read_manifest(path)
    assert result.manifest is None
    assert isinstance(result.error, ManifestError)
    assert str(path) in str(result.error)


@pytest.mark.parametrize("raw, expected", [("1.0", "1.0"), ("2", "2"), ("'1.0.0'", "1.0.0"),
                                           ("0.5", "0.5")])
def test_numeric_version_becomes_text(tmp_path, raw, expected):
    assert read_ok(tmp_path, f"name: p\nversion: {raw}\n").manifest.version == expected


# --- requires_hermes ---------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["", "  ", f"=={__version__}", ">=0.1", ">=0.1,<99",
                                  "<99", "~=0.1", "==0.*", "!=99.0", ">0.0.1"])
def test_requires_hermes_satisfied(spec):
    assert check_requires_hermes(spec) is None


@pytest.mark.parametrize("spec", [">=99", "<0.0.1", "==99.*", "!=" + __version__,
                                  ">=0.1,<0.1", "~=99.0"])
def test_requires_hermes_unsatisfied(spec):
    problem = check_requires_hermes(spec)
    assert problem is not None
    assert problem.startswith("requires_hermes:")
    assert __version__ in problem


@pytest.mark.parametrize("spec", ["garbage", ">=", ">=0.1,,<2", "=>1.0", "latest"])
def test_requires_hermes_garbage(spec):
    problem = check_requires_hermes(spec)
    assert problem is not None
    assert problem.startswith("requires_hermes:")
    assert "not a version clause" in problem


def test_requires_hermes_with_explicit_version():
    assert check_requires_hermes(">=1.2,<2", version="1.5.0") is None
    assert check_requires_hermes(">=1.2,<2", version="2.0.0") is not None
    assert check_requires_hermes("~=1.2", version="1.9") is None
    assert check_requires_hermes("~=1.2", version="2.0") is not None


def test_unsatisfied_requires_hermes_fails_the_manifest(tmp_path):
    result = read_bad(tmp_path, "name: p\nrequires_hermes: '>=99'\n")
    assert result.error.problems[0].startswith("requires_hermes:")


def test_garbage_requires_hermes_fails_the_manifest(tmp_path):
    result = read_bad(tmp_path, "name: p\nrequires_hermes: whenever\n")
    assert "not a version clause" in result.error.problems[0]


# --- validation cache -------------------------------------------------------------------------


def test_cache_round_trip_in_process(tmp_path):
    path = write(tmp_path, "name: cached\nversion: 1.0\nhooks: [h]\nrequires_env: [{name: K, secret: true}]\n")
    cache_file = tmp_path / "cache.json"
    cache = ValidationCache(cache_file)
    first = read_manifest(path, cache)
    cache.save()
    assert cache_file.is_file()
    assert json.loads(cache_file.read_text())  # valid JSON, not empty

    second = read_manifest(path, ValidationCache(cache_file))
    assert second.error is None
    assert second.manifest == first.manifest
    assert second.warnings == first.warnings
    assert second.manifest.requires_env == (EnvRequirement("K", secret=True),)


def test_cache_keeps_errors(tmp_path):
    path = write(tmp_path, "name: p\nkind: nope\n")
    cache_file = tmp_path / "cache.json"
    cache = ValidationCache(cache_file)
    first = read_manifest(path, cache)
    cache.save()
    second = read_manifest(path, ValidationCache(cache_file))
    assert second.manifest is None
    assert isinstance(second.error, ManifestError)
    assert second.error.problems == first.error.problems
    assert second.error.path == str(path)


def test_changed_bytes_are_revalidated(tmp_path):
    path = write(tmp_path, "name: p\nversion: '1'\n")
    cache = ValidationCache(tmp_path / "cache.json")
    assert read_manifest(path, cache).manifest.version == "1"
    path.write_text("name: p\nversion: '2'\n")
    assert read_manifest(path, cache).manifest.version == "2"
    path.write_text("name: p\nkind: bogus\n")
    assert read_manifest(path, cache).error is not None


_CHILD = textwrap.dedent("""\
    import sys
    from pathlib import Path
    from hermes_agent.manifest_read import read_manifest
    from hermes_agent.home import ValidationCache

    manifest, cache_file, phase = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    cache = ValidationCache(cache_file)
    first = read_manifest(manifest, cache)
    second = read_manifest(manifest, cache)
    assert first.error is None and second.error is None, first.error
    assert first.manifest == second.manifest
    assert first.manifest.name == "cached"
    if phase == "fill":
        cache.save()
        assert "pydantic" in sys.modules
    else:
        assert "pydantic" not in sys.modules, "cache hit imported pydantic"
    print("ok", phase)
    """)


def test_cache_hit_does_not_import_pydantic(tmp_path):
    path = write(tmp_path, "name: cached\nversion: 1.0\nprovides_tools: [t]\n")
    cache_file = tmp_path / "state" / "vcache.json"

    def run(phase: str) -> None:
        proc = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(cache_file), phase],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == f"ok {phase}"

    run("fill")
    assert cache_file.is_file()
    run("hit")


@pytest.mark.parametrize("garbage", ["{not json", "", "[1, 2, 3]", "\x00\x01binary", "null"])
def test_corrupt_cache_file_is_ignored(tmp_path, garbage):
    path = write(tmp_path, "name: p\nversion: '3'\n")
    cache_file = tmp_path / "cache.json"
    cache_file.write_text(garbage, encoding="utf-8")
    cache = ValidationCache(cache_file)
    result = read_manifest(path, cache)
    assert result.error is None
    assert result.manifest.version == "3"
    cache.save()  # replaces the corrupt file with a valid one
    assert isinstance(json.loads(cache_file.read_text()), dict)
    assert read_manifest(path, ValidationCache(cache_file)).manifest == result.manifest


def test_unwritable_cache_location_is_ignored(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cache = ValidationCache(blocker / "sub" / "cache.json")  # parent is a file
    result = read_manifest(write(tmp_path, "name: p\n"), cache)
    assert result.error is None
    cache.save()  # must not raise


def test_cache_key_depends_on_kind_and_bytes():
    a = ValidationCache.key("manifest:None", b"name: p\n")
    assert a == ValidationCache.key("manifest:None", b"name: p\n")
    assert a != ValidationCache.key("manifest:None", b"name: q\n")
    assert a != ValidationCache.key("config", b"name: p\n")


# --- what the kernel reads without importing the plugin -------------------------------------


def test_declarations_for_the_kernel(tmp_path):
    result = read_ok(tmp_path, """\
        name: weather
        essential: true
        cli_commands:
          weather:
            entry: ".cli:weather"
            help: Print the forecast.
          weather-alerts: "weather_pkg.alerts:command"
        config_sections:
          weather: ".schema:WeatherSection"
        """)
    m = result.manifest
    assert result.warnings == []
    assert m.essential is True
    assert m.cli_commands["weather"] == CliDeclaration(".cli:weather", "Print the forecast.")
    assert m.cli_commands["weather-alerts"] == CliDeclaration("weather_pkg.alerts:command")
    assert m.config_sections == {"weather": ".schema:WeatherSection"}


def test_declarations_default_to_nothing(tmp_path):
    m = read_ok(tmp_path, "name: p\n").manifest
    assert (m.essential, m.cli_commands, m.config_sections) == (False, {}, {})


@pytest.mark.parametrize("text, where", [
    ("cli_commands: {Weather: '.cli:w'}", "cli_commands: Value error, 'Weather' is not a command"),
    ("cli_commands: {weather: 'cli.weather'}", "cli_commands.weather.entry: Value error, "
                                               "'cli.weather' is not 'module:attribute'"),
    ("cli_commands: {weather: {entry: '.cli:w', hlep: x}}", "cli_commands.weather.hlep: "),
    ("cli_commands: [weather]", "cli_commands: Input should be a valid dictionary"),
    ("config_sections: {Weather: '.s:W'}", "config_sections: Value error, 'Weather' is not"),
    ("config_sections: {weather: 's.W'}", "config_sections: Value error, 's.W' is not"),
    ("essential: perhaps", "essential: Input should be a valid boolean"),
])
def test_bad_declarations_are_errors_naming_the_field(tmp_path, text, where):
    problems = read_bad(tmp_path, f"name: p\n{text}\n").error.problems
    assert any(p.startswith(where) for p in problems), problems


def test_only_builtins_may_be_essential_or_own_config_sections(tmp_path):
    from hermes_agent.discovery import discover

    plugin = tmp_path / "home" / "plugins" / "greedy"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: greedy\nessential: true\n"
                                        "config_sections: {greedy: '.s:S'}\n")
    record = discover(tmp_path / "home", {}, entry_points=False).get("greedy")
    assert record is not None and not record.error
    assert any("'essential:' is honoured for builtin plugins only" in w for w in record.warnings)
    assert any("'config_sections:'" in w and "plugins.entries" in w for w in record.warnings)


def test_the_manifest_is_modelled_once_in_two_forms():
    """The plain dataclass (read from the cache without pydantic) and the pydantic model
    that validates a file have the same keys."""
    from dataclasses import fields

    from hermes_agent.validation import ManifestModel

    plain = {f.name for f in fields(Manifest)} - {"synthesized"}
    assert plain == set(ManifestModel.model_fields)


def test_every_manifest_key_is_documented():
    doc = (Path(__file__).parent.parent / "docs" / "plugins.md").read_text(encoding="utf-8")
    table = doc.split("## plugin.yaml")[1].split("\n## ")[0]
    from hermes_agent.validation import ManifestModel

    missing = [key for key in ManifestModel.model_fields if f"`{key}`" not in table]
    assert missing == []


def test_a_cache_written_before_a_schema_change_is_not_reused(tmp_path, monkeypatch):
    from hermes_agent import home

    path = write(tmp_path, "name: p\ncli_commands: {p: '.cli:p'}\n")
    cache = ValidationCache(tmp_path / "cache.json")
    monkeypatch.setattr(home, "SCHEMA_REVISION", "4")  # as the version before the fields
    cache.put(ValidationCache.key("manifest:None", path.read_bytes()),
              {"data": {"name": "p"}, "warnings": []})
    monkeypatch.undo()
    assert read_manifest(path, cache).manifest.cli_commands == {"p": CliDeclaration(".cli:p")}
