"""`hermes mcp list | add | remove | test`: config.yaml edited with comments kept, and one
server started to show its tools."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from hermes_agent.cli.root import main
from mcp_test_server import stdio_server


def hermes(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_add_list_remove_keep_the_rest_of_config_yaml(home: Path, capsys) -> None:
    (home / "config.yaml").write_text("# my settings\nagent:\n  max_turns: 5  # enough\n")
    code, out, err = hermes(capsys, "mcp", "add", "files", "--command", "npx", "--arg", "-y",
                            "--arg", "@scope/server", "--env", "TOKEN=${FILES_TOKEN}")
    assert code == 0, err
    code, _, err = hermes(capsys, "mcp", "add", "remote", "--url", "https://example.org/sse",
                          "--header", "Authorization=Bearer ${REMOTE_KEY}", "--timeout", "5")
    assert code == 0, err
    text = (home / "config.yaml").read_text()
    assert text.startswith("# my settings\nagent:\n  max_turns: 5  # enough\n")
    servers = yaml.safe_load(text)["mcp_servers"]
    assert servers["files"] == {"command": "npx", "args": ["-y", "@scope/server"],
                                "env": {"TOKEN": "${FILES_TOKEN}"}}
    assert servers["remote"]["headers"] == {"Authorization": "Bearer ${REMOTE_KEY}"}
    code, out, _ = hermes(capsys, "mcp", "list")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "TRANSPORT", "ENABLED", "TOOLS", "TARGET"]
    assert lines[1].split()[:4] == ["files", "stdio", "yes", "?"]
    assert lines[2].split()[:2] == ["remote", "sse"]  # the URL's path says SSE
    code, out, _ = hermes(capsys, "mcp", "remove", "files")
    assert code == 0 and "files" not in yaml.safe_load((home / "config.yaml").read_text())[
        "mcp_servers"]
    code, _, err = hermes(capsys, "mcp", "remove", "files")
    assert code == 1 and "no MCP server 'files'" in err


def test_add_needs_exactly_one_target(home: Path, capsys) -> None:
    code, _, err = hermes(capsys, "mcp", "add", "x")
    assert code == 2 and "--command CMD" in err
    code, _, err = hermes(capsys, "mcp", "add", "x", "--command", "a", "--url", "http://b")
    assert code == 2
    code, _, err = hermes(capsys, "mcp", "add", "bad.name", "--command", "a")
    assert code == 2 and "letters, digits" in err
    assert not (home / "config.yaml").exists()


def test_test_lists_the_tools_with_schemas_and_list_shows_the_count(home: Path, capsys) -> None:
    entry = stdio_server(tools={"exclude": ["crash"]})
    (home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {"demo": entry}}))
    code, out, err = hermes(capsys, "mcp", "test", "demo", "--json")
    assert code == 0, err
    report = json.loads(out)  # stdout is the JSON alone; the wait is announced on stderr
    assert "Connecting to MCP server 'demo'" in err
    add = next(t for t in report["tools"] if t["name"] == "mcp__demo__add")
    assert add["parameters"]["properties"]["a"]["type"] == "integer"
    assert "mcp__demo__crash" not in [t["name"] for t in report["tools"]]
    assert report["prompts"] == ["greet"] and report["resources"] == ["note://hello"]
    code, out, _ = hermes(capsys, "mcp", "test", "demo")
    assert code == 0 and "mcp__demo__echo: Repeat the text." in out
    code, out, _ = hermes(capsys, "mcp", "list")
    assert out.splitlines()[1].split()[:4] == ["demo", "stdio", "yes", str(len(report["tools"]))]


def test_test_fails_with_the_servers_own_error(home: Path, capsys) -> None:
    (home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {
        "broken": stdio_server("--die-at-start"),
        "missing": {"command": str(home / "no-such-program")},
        "empty": {"timeout": 3}}}))
    code, _, err = hermes(capsys, "mcp", "test", "broken")
    assert code == 1 and "could not start" in err and "DEMO_TOKEN" in err
    code, _, err = hermes(capsys, "mcp", "test", "missing")
    assert code == 1 and "could not start" in err
    code, _, err = hermes(capsys, "mcp", "test", "empty")
    assert code == 1 and "needs `command`" in err
    code, out, _ = hermes(capsys, "mcp", "list")
    assert "broken: could not start" in out and "empty: mcp_servers.empty needs" in out
    code, _, err = hermes(capsys, "mcp", "test", "nope")
    assert code == 1 and "configured: broken, empty, missing" in err


def test_help_does_not_import_the_sdk(home: Path) -> None:
    import subprocess

    probe = ("import sys; from hermes_agent.cli.root import main\n"
             "try:\n    main(['mcp', '--help'])\nexcept SystemExit:\n    pass\n"
             "print('mcp' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "False", done.stderr
    assert "list" in done.stdout and "test" in done.stdout


def test_test_without_the_sdk_prints_the_install_hint(home: Path, capsys, monkeypatch) -> None:
    (home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {"demo": stdio_server()}}))
    monkeypatch.setitem(sys.modules, "mcp", None)  # as if the extra were not installed
    code, _, err = hermes(capsys, "mcp", "test", "demo")
    assert code == 1 and "pip install 'hermes-agent-runtime[mcp]'" in err
