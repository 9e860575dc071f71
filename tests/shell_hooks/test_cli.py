"""``hermes hooks list|test|approve|revoke|doctor`` and ``hermes --accept-hooks`` as a user
runs them, and ``chat -q`` with nobody to approve: the unapproved hook is skipped and the
warning says how to approve it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_agent.api.services import SANDBOX, Sandbox
from hermes_agent.builtin_plugins.core_tools.sandbox.runner import mechanism
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call

from .conftest import World

HERMES = str(Path(sys.executable).with_name("hermes"))


def hermes(world: World, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(world.home), "HERMES_HOME": str(world.hermes),
           "NO_PROXY": "127.0.0.1,localhost"}
    env.pop("HERMES_ACCEPT_HOOKS", None)
    return subprocess.run([HERMES, *args], capture_output=True, text=True, timeout=120,
                          cwd=world.work, env=env, input=stdin if stdin is not None else "")


def test_list_approve_revoke_and_doctor(world: World) -> None:
    guard = world.script("guard.sh", 'echo \'{"action": "block", "message": "no"}\'\n')
    world.configure({"pre_tool_call": [{"matcher": "terminal", "command": str(guard),
                                        "timeout": 5}]})
    listed = hermes(world, "hooks", "list")
    assert listed.returncode == 0, listed.stderr
    assert f"pre_tool_call [matcher: terminal]: {guard}  (timeout 5 s)" in listed.stdout
    assert "NOT APPROVED (does not run)" in listed.stdout
    doctor = hermes(world, "hooks", "doctor")
    assert doctor.returncode == 1 and "run `hermes hooks approve pre_tool_call`" in doctor.stdout

    refused = hermes(world, "hooks", "approve", "pre_tool_call", stdin="n\n")
    assert "not approved" in refused.stdout
    approved = hermes(world, "hooks", "approve", "pre_tool_call", stdin="y\n")
    assert approved.returncode == 0 and "  approved" in approved.stdout, approved.stderr
    rows = json.loads(hermes(world, "hooks", "list", "--json").stdout)["hooks"]
    assert [r["status"] for r in rows] == ["approved"]
    doctor = hermes(world, "hooks", "doctor")
    assert doctor.returncode == (0 if mechanism().works else 1), doctor.stdout
    assert "hooks: 1, approved: 1" in doctor.stdout

    revoked = hermes(world, "hooks", "revoke", "pre_tool_call")
    assert f"revoked pre_tool_call: {guard}" in revoked.stdout
    assert "NOT APPROVED" in hermes(world, "hooks", "list").stdout
    accepted = hermes(world, "--accept-hooks", "hooks", "list")
    assert "every hook runs without approval (HERMES_ACCEPT_HOOKS is set)" in accepted.stdout


def test_approve_with_nobody_to_answer_asks_for_yes(world: World) -> None:
    world.configure({"post_tool_call": [{"command": "true"}]})
    done = hermes(world, "hooks", "approve")
    assert done.returncode == 1 and "hermes hooks approve --yes" in done.stderr
    assert hermes(world, "hooks", "approve", "--yes").returncode == 0
    assert "approved" in hermes(world, "hooks", "list").stdout


def test_doctor_reports_a_forged_allowlist_entry(world: World) -> None:
    world.configure({"post_tool_call": [{"command": "true"}]})
    (world.hermes / "shell-hooks-allowlist.json").write_text(json.dumps(
        {"approvals": [{"event": "post_tool_call", "command": "true",
                        "approved_at": "2026-01-01T00:00:00Z", "hermes-seal": "0" * 64}]}))
    doctor = hermes(world, "hooks", "doctor")
    assert doctor.returncode == 1
    assert "1 entry was changed or written outside `hermes hooks approve`" in doctor.stdout


def test_test_runs_a_hook_once_and_shows_its_answer(world: World) -> None:
    guard = world.script("guard.sh", 'cat > event.json\necho \'{"decision": "block", '
                                     '"reason": "tested"}\'\n')
    world.configure({"pre_tool_call": [{"command": str(guard)}]})
    done = hermes(world, "hooks", "test", "pre_tool_call", "--tool", "write_file")
    assert done.returncode == 0, done.stderr
    assert '  answer: {"action": "block", "message": "tested"}' in done.stdout
    assert json.loads((world.work / "event.json").read_text())["tool_name"] == "write_file"
    missing = hermes(world, "hooks", "test", "on_session_start")
    assert missing.returncode == 1 and "no shell hook for 'on_session_start'" in missing.stderr


@pytest.mark.skipif(not mechanism().works, reason=f"no sandbox here: {mechanism().why_none}")
def test_chat_q_skips_an_unapproved_hook_and_accept_hooks_runs_it(world: World) -> None:
    guard = world.script("guard.sh", 'echo \'{"action": "block", "message": "hook says no"}\'\n')
    with FakeLLMServer() as server:
        world.configure({"pre_tool_call": [{"command": str(guard)}]},
                        model={"provider": "custom", "base_url": server.openai_base_url,
                               "default": "fake-model", "max_retries": 0})
        server.script(reply_tool_call("terminal", {"command": "touch ran1"}), reply_text("one"),
                      reply_tool_call("terminal", {"command": "touch ran2"}), reply_text("two"))
        first = hermes(world, "chat", "-q", "go")
        assert first.returncode == 0 and first.stdout.strip() == "one", first.stderr
        assert (world.work / "ran1").exists()  # not approved: skipped, the tool ran
        assert "did not run: it is not approved" in first.stderr
        assert "hermes hooks approve pre_tool_call" in first.stderr
        second = hermes(world, "--accept-hooks", "chat", "-q", "go")
        assert second.returncode == 0 and second.stdout.strip() == "two", second.stderr
        assert not (world.work / "ran2").exists()
        blocked = [m for m in server.posts()[-1].body["messages"] if m["role"] == "tool"]
        assert "hook says no" in blocked[-1]["content"]


def test_the_sandbox_service_is_core_tools(world: World) -> None:
    kernel = world.kernel()
    service = kernel.service(SANDBOX)
    assert isinstance(service, Sandbox) and kernel.service_owner(SANDBOX) == "core-tools"
    run = service.run("cat; echo oops >&2; exit 3", cwd=world.work, timeout=10, stdin="in",
                      max_output=1000)
    assert (run.stdout, run.stderr, run.returncode, run.timed_out) == ("in", "oops\n", 3, False)
    big = service.run("head -c 100000 /dev/zero | tr '\\0' x", cwd=world.work, timeout=10,
                      max_output=1000)
    assert len(big.stdout) < 1200 and "[output shortened: " in big.stdout


def test_doctor_says_a_script_in_hermes_home_cannot_run(world: World) -> None:
    (world.hermes / "agent-hooks").mkdir()
    script = world.hermes / "agent-hooks" / "guard.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o644)
    world.configure({"pre_tool_call": [{"command": str(script)}]})
    doctor = hermes(world, "hooks", "doctor")
    assert doctor.returncode == 1
    assert f"{script} is inside $HERMES_HOME, which the sandbox hides" in doctor.stdout
    assert f"{script} is not executable (chmod +x)" in doctor.stdout


def _pty_terminal() -> type:
    """tests/agent's pseudo-terminal driver (loaded by path: the folders are separate packages)."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "agent" / "pty_terminal.py"
    spec = importlib.util.spec_from_file_location("shell_hooks_pty_terminal", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Terminal  # type: ignore[no-any-return]


@pytest.mark.skipif(not mechanism().works, reason=f"no sandbox here: {mechanism().why_none}")
def test_the_interactive_chat_asks_before_its_first_prompt(world: World) -> None:
    guard = world.script("guard.sh", 'echo \'{"action": "block", "message": "hook says no"}\'\n')
    other = world.script("other.sh", "echo ran >> marks.txt\n")
    with FakeLLMServer() as server:
        world.configure({"pre_tool_call": [{"matcher": "terminal", "command": str(guard)}],
                         "post_tool_call": [{"command": str(other)}]},
                        model={"provider": "custom", "base_url": server.openai_base_url,
                               "default": "fake-model", "max_retries": 0},
                        projects={"trusted": [str(world.work)]})  # no trust question first
        server.script(reply_tool_call("terminal", {"command": "touch ran.txt"}),
                      reply_text("Blocked, as asked."))
        env = {"HERMES_HOME": str(world.hermes), "HOME": str(world.home), "TERM": "dumb",
               "PATH": os.environ.get("PATH", ""), "NO_PROXY": "127.0.0.1,localhost",
               "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]}
        term = _pty_terminal()([HERMES, "chat"], env, cwd=world.work)
        asked = []
        for _ in range(2):  # in config.yaml's order; guard.sh approved, other.sh not
            shown = term.read_until("at every such event? [y/N]: ").replace("\r", "")
            asked.append(shown)
            term.type("y\r" if str(guard) in shown else "n\r")
        assert any(f"Shell hook pre_tool_call (matcher terminal)\n  {guard}\n" in a for a in asked)
        assert any(f"Shell hook post_tool_call\n  {other}\n" in a for a in asked)
        screen = "".join(asked) + term.read_until("› ")
        assert "approved (`hermes hooks revoke` withdraws it)" in screen
        assert "not approved: skipped (`hermes hooks approve post_tool_call` later)" in screen
        term.type("make a file\r")
        assert "Blocked, as asked." in term.read_until("› ")
        term.type("/quit\r")
        assert term.wait() == 0
    assert not (world.work / "ran.txt").exists() and not (world.work / "marks.txt").exists()
    statuses = json.loads(hermes(world, "hooks", "list", "--json").stdout)["hooks"]
    assert {s["event"]: s["status"] for s in statuses} == {"pre_tool_call": "approved",
                                                           "post_tool_call": "unapproved"}
