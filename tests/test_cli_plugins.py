"""`hermes plugins list | info | enable | disable` and `hermes tools list`, run in-process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

import hermes_agent.builtin_plugins
from hermes_agent.cli.root import main
from hermes_agent.testing import write_plugin


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_list_shows_decisions_then_real_outcomes(home, calculator, capsys):
    write_plugin(home / "plugins", "broken", "raise RuntimeError('nope')\n")
    code, out, _ = run(capsys, "plugins", "list")
    assert code == 0
    assert "calculator" in out and "not enabled" in out and "hermes plugins enable calculator" in out
    assert run(capsys, "plugins", "enable", "calculator")[0] == 0
    assert run(capsys, "plugins", "enable", "broken")[0] == 0
    code, out, _ = run(capsys, "plugins", "list", "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["calculator"]["state"] == "enabled" and "not loaded since" in rows["calculator"]["reason"]
    code, out, _ = run(capsys, "plugins", "list", "--json", "--load")
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["calculator"]["state"] == "loaded"
    assert rows["calculator"]["tools"] == ["calculate", "unit_convert"]
    assert rows["broken"]["state"] == "failed" and "RuntimeError: nope" in rows["broken"]["reason"]
    # without --load the listing now reports what the last boot really did
    code, out, _ = run(capsys, "plugins", "list", "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["calculator"]["state"] == "loaded" and rows["broken"]["state"] == "failed"
    assert "plugin-admin" not in rows
    code, out, _ = run(capsys, "plugins", "list", "--all", "--json")
    assert "plugin-admin" in {r["name"] for r in json.loads(out)}


def test_enable_and_disable_write_config_and_keep_other_keys(home, calculator, capsys):
    (home / "config.yaml").write_text("model:\n  default: my-model\ndisplay:\n  skin: dark\n")
    assert run(capsys, "plugins", "enable", "calculator")[0] == 0
    data = yaml.safe_load((home / "config.yaml").read_text())
    assert data["plugins"]["enabled"] == ["calculator"]
    assert data["model"]["default"] == "my-model" and data["display"] == {"skin": "dark"}
    assert run(capsys, "plugins", "disable", "calculator")[0] == 0
    data = yaml.safe_load((home / "config.yaml").read_text())
    assert data["plugins"]["enabled"] == [] and data["plugins"]["disabled"] == ["calculator"]
    assert run(capsys, "plugins", "enable", "calculator")[0] == 0
    data = yaml.safe_load((home / "config.yaml").read_text())
    assert data["plugins"] == {"enabled": ["calculator"], "disabled": []}


def test_unknown_names_are_refused_with_suggestions(home, calculator, capsys):
    before = (home / "config.yaml").exists()
    code, _, err = run(capsys, "plugins", "enable", "calc")
    assert code == 1 and "no plugin named 'calc'" in err and "calculator" in err
    code, _, err = run(capsys, "plugins", "disable", "calculater")
    assert code == 1 and "calculator" in err
    assert (home / "config.yaml").exists() == before


def test_essential_builtin_cannot_be_disabled(home, capsys):
    code, _, err = run(capsys, "plugins", "disable", "plugin-admin")
    assert code == 1 and "essential" in err


def test_commands_work_while_plugins_are_broken(home, capsys):
    write_plugin(home / "plugins", "badyaml", "", manifest="name: [\n")
    write_plugin(home / "plugins", "crash", "import sys; sys.exit(3)\n")
    (home / "config.yaml").write_text("plugins:\n  enabled: [crash]\n")
    assert run(capsys, "plugins", "list")[0] == 0
    code, out, _ = run(capsys, "plugins", "info", "badyaml")
    assert code == 0 and "failed" in out and "not valid YAML" in out
    assert run(capsys, "plugins", "disable", "badyaml")[0] == 0
    code, out, _ = run(capsys, "plugins", "info", "plugin-admin")
    assert code == 0 and "builtin" in out


def test_info_reports_env_requirements(home, capsys):
    write_plugin(home / "plugins", "weather", "def register(ctx): pass\n",
                 manifest="name: weather\nversion: 2.1.0\nrequires_env:\n  - name: WEATHER_API_KEY\n    description: OpenWeather key\n")
    (home / "config.yaml").write_text("plugins:\n  enabled: [weather]\n")
    code, out, _ = run(capsys, "plugins", "info", "weather")
    assert code == 0
    assert "missing env" in out and "WEATHER_API_KEY (MISSING) — OpenWeather key" in out
    code, out, _ = run(capsys, "plugins", "info", "weather", "--json")
    assert json.loads(out)["requires_env"][0]["set"] is False


def test_tools_list(home, calculator, capsys):
    (home / "config.yaml").write_text("plugins:\n  enabled: [calculator]\n")
    code, out, _ = run(capsys, "tools", "list", "--json", "--load")
    data = json.loads(out)
    assert code == 0
    builtin = {yaml.safe_load(p.read_text())["name"] for p in BUILTINS.glob("*/plugin.yaml")}
    assert {t["name"]: t["plugin"] for t in data["tools"]
            if t["plugin"] not in builtin} == {"calculate": "calculator",
                                                              "unit_convert": "calculator"}
    # every available tool is selected (image_generate waits for its provider's key, and
    # text_to_speech for espeak-ng where it is not installed)
    assert all(t["selected"] for t in data["tools"] if t["available"])
    assert "image_generate" in {t["name"] for t in data["tools"] if not t["available"]}
    assert {t["name"] for t in data["tools"] if not t["available"]} <= {"image_generate",
                                                                        "text_to_speech"}
    (home / "config.yaml").write_text("plugins:\n  enabled: [calculator]\ntoolsets: [nope]\n")
    code, out, _ = run(capsys, "tools", "list", "--json", "--load")
    data = json.loads(out)
    assert not any(t["selected"] for t in data["tools"])
    assert any("unknown toolset 'nope'" in n for n in data["notes"])


BUILTINS = Path(hermes_agent.builtin_plugins.__file__).parent

MARKED = """\
import json
from pathlib import Path


def register(ctx):
    (Path(__file__).parent / "register-ran").write_text("yes")
    ctx.register_tool("mark_echo", "marks", {"name": "mark_echo", "description": "Echo.",
                      "parameters": {"type": "object", "properties": {}}},
                      lambda args, **kw: json.dumps(args))
"""


def test_tools_list_and_doctor_run_no_register_unless_asked_to_load(home, capsys):
    plugin = write_plugin(home / "plugins", "marked", MARKED,
                          manifest="name: marked\nprovides_tools: [mark_echo, mark_more]\n")
    marker = plugin / "register-ran"
    (home / "config.yaml").write_text("plugins:\n  enabled: [marked]\n")
    code, out, _ = run(capsys, "tools", "list", "--json")
    rows = {t["name"]: t for t in json.loads(out)["tools"]}
    assert code == 0 and not marker.exists()
    assert (rows["mark_echo"]["plugin"], rows["mark_echo"]["loaded"]) == ("marked", False)
    assert rows["mark_more"]["loaded"] is False  # declared only; nothing is known yet
    code, out, _ = run(capsys, "plugins", "doctor", "marked")
    assert code == 0 and not marker.exists()
    assert "[not_loaded]" in out and "hermes plugins doctor --load marked" in out

    assert run(capsys, "plugins", "list", "--load")[0] == 0  # a real load, recorded
    assert marker.exists()
    marker.unlink()
    code, out, _ = run(capsys, "tools", "list", "--json")
    rows = {t["name"]: t for t in json.loads(out)["tools"]}
    assert (rows["mark_echo"]["loaded"], rows["mark_echo"]["toolset"]) == (True, "marks")
    assert rows["mark_echo"]["description"] == "Echo."
    assert rows["mark_more"]["loaded"] is False
    code, out, _ = run(capsys, "tools", "list")
    assert "✓ mark_echo" in out and "· mark_more" in out
    code, out, _ = run(capsys, "plugins", "doctor", "marked")
    assert code == 0 and "[unregistered_tool] declares tool 'mark_more'" in out
    assert not marker.exists()


def test_doctor_finds_register_failures_of_the_last_load_without_loading(home, capsys):
    plugin = write_plugin(home / "plugins", "badreg", "from pathlib import Path\n"
                          "def register(ctx):\n"
                          "    (Path(__file__).parent / 'register-ran').write_text('yes')\n"
                          "    raise KeyError('api_url')\n", manifest="name: badreg\n")
    (home / "config.yaml").write_text("plugins:\n  enabled: [badreg]\n")
    assert run(capsys, "plugins", "list", "--load")[0] == 0
    (plugin / "register-ran").unlink()
    code, out, _ = run(capsys, "plugins", "doctor", "badreg")
    assert code == 1 and "[register_error]" in out and "KeyError: 'api_url'" in out
    assert not (plugin / "register-ran").exists()
    code, out, _ = run(capsys, "plugins", "doctor", "badreg", "--load")
    assert code == 1 and "[register_error]" in out and (plugin / "register-ran").exists()


def test_plugin_cli_command_via_argparse_bridge(home, capsys):
    write_plugin(home / "plugins", "greeter", '''
def _setup(parser):
    sub = parser.add_subparsers(dest="greet_command")
    hello = sub.add_parser("hello")
    hello.add_argument("--name", default="world")
def _run(args):
    if args.greet_command == "hello":
        print(f"hello {args.name}")
    else:
        print("usage: hermes greet hello")
def register(ctx):
    ctx.register_cli_command(name="greet", help="Say hello", setup_fn=_setup, handler_fn=_run)
''')
    (home / "config.yaml").write_text("plugins:\n  enabled: [greeter]\n")
    code, out, _ = run(capsys, "greet", "hello", "--name", "ada")
    assert code == 0 and out.strip() == "hello ada"
    code, out, _ = run(capsys, "--help")  # listed from the last load, no plugin code imported
    assert code == 0
    added = out.split("Commands added by plugins (as of their last load):")[1]
    assert "greet" in added and "(from the greeter plugin)" in added
    code, _, err = run(capsys, "gret")
    assert code == 2 and "Did you mean 'greet'" in err
    code, _, err = run(capsys, "sesions")  # a builtin's command, suggested once
    assert code == 2 and "Did you mean 'sessions'?" in err


def test_version_and_help_are_cheap(home, calculator):
    """``--help`` lists commands from plugin.yaml files and config.yaml, validated once into
    the cache: from then on it imports no SDK, no pydantic, YAML or pluggy, and no plugin."""
    (home / "config.yaml").write_text("plugins:\n  enabled: [calculator]\n")
    code = ("import sys, runpy; sys.argv=['hermes', '{arg}']\n"
            "from hermes_agent.cli.root import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit: pass\n"
            "heavy = {{'openai', 'anthropic', 'pydantic', 'pluggy', 'yaml', 'ruamel'}}\n"
            "heavy &= set(sys.modules)\n"
            "plugins = [m for m in sys.modules if m.startswith('hermes_plugins') or\n"
            "           m.startswith('hermes_agent.builtin_plugins.') and\n"
            "           not m.split('.')[2].startswith('cli_')]\n"
            "print(sorted(heavy), plugins)")
    subprocess.run([sys.executable, "-c", code.format(arg="--help")], check=True,
                   capture_output=True)  # the first run in a home validates into its cache
    for arg in ("--version", "--help"):
        out = subprocess.run([sys.executable, "-c", code.format(arg=arg)], capture_output=True,
                             text=True, check=True).stdout
        assert out.strip().endswith("[] []"), (arg, out)


def test_plugins_list_imports_no_plugin_code_nor_sdks(home, calculator):
    (home / "config.yaml").write_text("plugins:\n  enabled: [calculator]\n")
    code = ("import sys\nfrom hermes_agent.cli.root import main\nmain(['plugins', 'list'])\n"
            "print('MODS', sorted({'openai', 'anthropic', 'ruamel'} & set(sys.modules)),"
            " [m for m in sys.modules if m.startswith('hermes_plugins')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "MODS [] []" in out
