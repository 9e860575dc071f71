"""Attacking hermes through its CLI with plugins that exit: every command keeps working and
reports the plugin as failed (in-process through the click root, and as real processes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hermes_agent.cli import root as cli_root
from hermes_agent.testing import write_plugin
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

from .conftest import agent_config

HERMES = Path(sys.executable).with_name("hermes")
EXITER = "import sys\n\ndef register(ctx):\n    sys.exit(3)\n"
INTERRUPTER = "def register(ctx):\n    raise KeyboardInterrupt\n"
HOOK_EXITER = """\
import sys

def register(ctx):
    ctx.register_hook("pre_llm_call", lambda **kw: sys.exit(7))
"""


@pytest.fixture
def hostile_home(home: Path, calculator: Path, server: FakeLLMServer) -> Path:
    write_plugin(home / "plugins", "exiter", EXITER)
    write_plugin(home / "plugins", "interrupter", INTERRUPTER)
    config = agent_config(server, plugins={"enabled": ["calculator", "exiter", "interrupter"]})
    (home / "config.yaml").write_text(yaml.safe_dump(config))
    return home


def test_every_command_survives_plugins_that_exit_while_loading(hostile_home: Path,
                                                               server: FakeLLMServer,
                                                               capsys) -> None:
    assert cli_root.main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("hermes ")
    assert cli_root.main(["tools", "list"]) == 0  # declared facts: runs no plugin code
    assert "calculate" in capsys.readouterr().out
    assert cli_root.main(["tools", "list", "--load"]) == 0  # a real load, recorded
    assert "calculate" in capsys.readouterr().out
    assert cli_root.main(["plugins", "list"]) == 0
    listing = capsys.readouterr().out
    for name, cause in (("exiter", "SystemExit: 3"), ("interrupter", "KeyboardInterrupt")):
        row = next(line for line in listing.splitlines() if line.startswith(name))
        assert " failed " in row
        assert f"register() of plugin '{name}' failed: {cause}" in listing
    assert cli_root.main(["plugins", "doctor", "--load"]) == 1  # enabled plugins are not active
    doctor = capsys.readouterr().out
    assert "✗ exiter" in doctor and "[register_error] register() of plugin 'exiter' failed: " \
        "SystemExit: 3 (the plugin called sys.exit" in doctor
    assert "✗ interrupter" in doctor and "KeyboardInterrupt (raised by the plugin" in doctor
    assert "✓ calculator" in doctor
    server.script(reply_text("still here"))
    assert cli_root.main(["chat", "-q", "hello?"]) == 0
    out, err = capsys.readouterr()
    assert out == "still here\n"
    for name in ("exiter", "interrupter"):
        assert f"warning: plugin '{name}' is not active: register() failed: " in err
        assert f"see `hermes plugins doctor {name}`" in err


def test_the_banner_names_each_failed_plugin(hostile_home: Path) -> None:
    from hermes_agent import Kernel
    from hermes_agent.builtin_plugins.agent.chat.render import banner
    from hermes_agent.builtin_plugins.agent.loop import Agent, AgentOptions

    kernel = Kernel(hostile_home).boot()
    text = banner(Agent(kernel, AgentOptions(platform="cli")), color=False)
    lines = [line for line in text.splitlines() if line.startswith("⚠ plugin ")]
    assert lines == [
        "⚠ plugin 'exiter' is not active: register() failed: SystemExit: 3; "
        "see `hermes plugins doctor exiter`",
        "⚠ plugin 'interrupter' is not active: register() failed: KeyboardInterrupt; "
        "see `hermes plugins doctor interrupter`"]


def test_a_hook_that_exits_during_a_turn_does_not_end_the_chat(home: Path, calculator: Path,
                                                              server: FakeLLMServer,
                                                              capsys) -> None:
    write_plugin(home / "plugins", "hookexit", HOOK_EXITER)
    config = agent_config(server, plugins={"enabled": ["calculator", "hookexit"]})
    (home / "config.yaml").write_text(yaml.safe_dump(config))
    server.script(reply_text("answered"), reply_text("again"))
    assert cli_root.main(["chat", "--json", "-q", "hi"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert events[-2]["type"] == "turn_end" and events[-2]["final_response"] == "answered"
    (failed,) = [e for e in events if e["type"] == "plugin_failed"]
    assert failed["message"].startswith("plugin hookexit was unloaded: it raised SystemExit: 7")
    assert "hermes plugins disable hookexit" in failed["message"]
    assert cli_root.main(["plugins", "list"]) == 0  # the ledger recorded the unloading
    listing = capsys.readouterr().out
    row = next(line for line in listing.splitlines() if line.startswith("hookexit"))
    assert " failed " in row and "raised SystemExit: 7" in listing
    assert cli_root.main(["plugins", "doctor", "--load", "hookexit"]) == 0  # it loads again...
    doctor = capsys.readouterr().out
    assert "✓ hookexit" in doctor  # ...and doctor still tells what it did last time
    assert "[halt_attempt] in an earlier session: plugin 'hookexit' raised SystemExit: 7 " \
        "(the plugin called sys.exit" in doctor and "from its pre_llm_call hook" in doctor
    assert cli_root.main(["plugins", "list"]) == 0
    assert "in an earlier session: plugin 'hookexit' raised" in capsys.readouterr().out
    assert cli_root.main(["chat", "-q", "and now?"]) == 0  # text mode: the warning on stderr
    out, err = capsys.readouterr()
    assert out == "again\n" and "warning: plugin hookexit was unloaded" in err


@pytest.mark.skipif(not HERMES.exists(), reason="needs the hermes console script")
def test_real_processes_exit_with_their_own_code(hostile_home: Path,
                                                 server: FakeLLMServer) -> None:
    env = {**os.environ, "HERMES_HOME": str(hostile_home)}

    def hermes(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(HERMES), *args], env=env, capture_output=True, text=True,
                              timeout=60)

    doctor = hermes("plugins", "doctor", "--load", "exiter")
    assert doctor.returncode == 1 and "SystemExit: 3" in doctor.stdout
    server.script(reply_text("from a real process"))
    chat = hermes("chat", "-q", "hi")
    assert (chat.returncode, chat.stdout) == (0, "from a real process\n")
    assert "plugin 'exiter' is not active: register() failed: SystemExit: 3" in chat.stderr


def test_isolated_doctor_names_a_plugin_that_ends_the_process(home: Path, capsys) -> None:
    write_plugin(home / "plugins", "vanisher", "import os\n\ndef register(ctx):\n    os._exit(9)\n")
    write_plugin(home / "plugins", "steady", "def register(ctx):\n    pass\n")
    (home / "config.yaml").write_text(yaml.safe_dump({"plugins": {"enabled": ["vanisher",
                                                                             "steady"]}}))
    assert cli_root.main(["plugins", "doctor", "--isolated"]) == 1
    out = capsys.readouterr().out
    assert "✓ steady" in out and "✗ vanisher" in out
    assert "[process_exit] loading it ended the hermes process (exit status 9)" in out
    assert "hermes plugins disable vanisher" in out and "load_filter" not in out
