"""The core-tools plugin as the runtime loads it: tools, toolsets, protection, determinism."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_agent.builtin_plugins.agent.tool_selection import select_tools
from hermes_agent.testing import make_kernel

CORE = {"read_file", "write_file", "patch", "search_files", "terminal", "process", "todo",
        "clarify"}


def test_builtin_plugin_registers_tools_and_toolsets(tmp_path: Path) -> None:
    kernel = make_kernel(tmp_path / "home", builtins=True)
    status = kernel.plugins["core-tools"]
    assert status.state == "loaded" and not status.warnings  # plugin.yaml matches
    assert {n for n, t in kernel.tools.tools.items() if t.plugin == "core-tools"} == CORE
    assert kernel.tools.resolve_toolsets(["file"]) == (
        ["read_file", "write_file", "patch", "search_files"], [])
    debugging, notes = kernel.tools.resolve_toolsets(["debugging"])
    assert set(debugging) == {"terminal", "process", "read_file", "write_file", "patch",
                              "search_files"}
    cli, notes = kernel.tools.resolve_toolsets(["hermes-cli"])
    assert CORE <= set(cli) and notes == []
    assert kernel.tools.toolsets["hermes-cli"].kind == "platform"


def test_config_toolsets_select_the_tools(tmp_path: Path) -> None:
    kernel = make_kernel(tmp_path / "home", builtins=True, config={"toolsets": ["file", "todo"]})
    selected, notes = select_tools(kernel.tools, kernel.config.get("toolsets"))
    assert selected == ["read_file", "write_file", "patch", "search_files", "todo"] and not notes


def test_core_tool_names_are_protected(tmp_path: Path) -> None:
    def impostor(ctx):
        ctx.register_tool("terminal", "mine", {"name": "terminal", "description": "x",
                                               "parameters": {"type": "object"}},
                          lambda args, **kw: "{}")

    kernel = make_kernel(tmp_path / "home", builtins=True)
    status = kernel.register_plugin(impostor, "impostor")
    assert status.state == "failed" and "clashes with the core tool" in status.reason
    assert kernel.tools.tools["terminal"].plugin == "core-tools"


def test_tool_definitions_are_byte_stable(tmp_path: Path) -> None:
    names = sorted(CORE)
    first = make_kernel(tmp_path / "a", builtins=True).tools.definitions(names)
    second = make_kernel(tmp_path / "b", builtins=True).tools.definitions(names)
    assert json.dumps(first, sort_keys=False) == json.dumps(second, sort_keys=False)
    assert [d["function"]["name"] for d in first] == names


def test_wrong_argument_types_give_tool_errors(tmp_path: Path) -> None:
    kernel = make_kernel(tmp_path / "home", builtins=True)
    for tool, args in (("read_file", {"path": 5}), ("write_file", {"path": "x", "content": 3}),
                       ("patch", {"path": "x"}), ("search_files", {"pattern": None}),
                       ("terminal", {"command": ["ls"]}), ("todo", {"todos": 7}),
                       ("clarify", {"question": 1}), ("read_file", {"path": "x", "limit": "lots"})):
        result = json.loads(kernel.tools.dispatch(tool, args, cwd=str(tmp_path)))
        assert "error" in result and "Tool execution failed" not in result["error"], (tool, result)


def test_tool_modules_load_on_first_call(tmp_path: Path) -> None:
    """Registering the core tools imports none of their modules; a call imports its own."""
    import subprocess
    import sys

    code = (
        "import json, sys\n"
        "from hermes_agent.testing import make_kernel\n"
        f"kernel = make_kernel({str(tmp_path / 'home')!r}, builtins=True)\n"
        "pkg = 'hermes_agent.builtin_plugins.core_tools.'\n"
        "names = ('terminal', 'approval', 'files', 'search', 'todo', 'clarify')\n"
        "before = [n for n in names if pkg + n in sys.modules]\n"
        "result = json.loads(kernel.tools.dispatch('todo', {'todos': []}, session_id='s'))\n"
        "after = [n for n in names if pkg + n in sys.modules]\n"
        "print(json.dumps([before, after, 'error' in result]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after, failed = json.loads(out.stdout.strip().splitlines()[-1])
    assert before == [] and after == ["todo"] and not failed
