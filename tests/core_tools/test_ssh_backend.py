"""The ssh terminal backend against a real OpenSSH server on 127.0.0.1 (see sshd.py): a
tool-using turn whose command runs on the "remote" host, timeouts and interrupts that kill the
remote command, secrets that stay on the local side, and the errors of a wrong host or key."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import hermes_agent.builtin_plugins.core_tools as core_tools
from hermes_agent import ConfigError, Kernel
from hermes_agent.api import ToolCallContext
from hermes_agent.builtin_plugins.agent.loop import Agent, AgentOptions
from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call

from .sshd import MISSING, SSHD, Sshd, start_sshd

pytestmark = pytest.mark.skipif(SSHD is None, reason=MISSING)

OPENAI_KEY = "sk-proj-dotenv-ssh-5e2b7c91"
SHELL_KEY = "acme-shell-exported-ssh-3f0a"
LC_SECRET = "lc-forwardable-secret-91d2"  # LC_* is what ssh_config's SendEnv forwards


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    server = start_sshd(tmp_path_factory.mktemp("sshd"))
    yield server
    server.stop()


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """The remote working directory (on loopback: a folder of this machine)."""
    path = tmp_path / "remote-cwd"
    path.mkdir()
    return path


def _kernel(home: Path, terminal: dict[str, Any], **config: Any) -> Kernel:
    kernel = make_kernel(home, config={"terminal": terminal, "approvals": {"mode": "off"},
                                       **config})
    assert kernel.register_plugin(core_tools, "core-tools").state == "loaded"
    return kernel


def _run(kernel: Kernel, args: dict[str, Any], cwd: Path,
         interrupt: threading.Event | None = None) -> dict[str, Any]:
    context = ToolCallContext(session_id="s", cwd=cwd, interrupt_event=interrupt)
    return json.loads(kernel.tools.dispatch("terminal", args, context=context))


def _gone(pid: int, tries: int = 400) -> bool:
    """Whether process ``pid`` ends (polled, up to ~20 s on a loaded machine); a zombie has
    ended (an init that does not reap keeps it listed)."""
    for _ in range(tries):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return True
        if stat.rsplit(")", 1)[1].split()[0] in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def test_a_tool_using_turn_runs_its_command_on_the_ssh_host(sshd: Sshd, home: Path, remote: Path,
                                                            tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with FakeLLMServer() as server:
        kernel = make_kernel(home, builtins=True, config={
            "model": {"provider": "custom", "base_url": server.openai_base_url,
                      "default": "fake-model", "max_retries": 0},
            "sessions": {"auto_title": False}, "approvals": {"mode": "off"},
            "terminal": sshd.config(remote)})
        server.script(
            reply_tool_call("terminal", {"command": "echo made-remotely > made.txt && pwd && "
                                                    "echo conn=$SSH_CONNECTION"}, id="t1"),
            reply_text("Wrote made.txt on the host."))
        try:
            result = Agent(kernel, AgentOptions(cwd=workspace)).run_conversation("make a file")
        finally:
            kernel.close()
        assert result.completed and result.final_response == "Wrote made.txt on the host."
        tool = [m for m in server.posts()[-1].body["messages"] if m["role"] == "tool"]
    body = json.loads(tool[0]["content"])
    assert body["exit_code"] == 0, body
    assert body["output"].splitlines()[0] == str(remote)
    assert f"127.0.0.1 {sshd.port}" in body["output"]  # it came in through our sshd
    assert (remote / "made.txt").read_text() == "made-remotely\n"
    assert list(workspace.iterdir()) == []  # the local workspace was not used


def test_commands_share_one_connection_and_keep_exit_codes_and_workdir(
        sshd: Sshd, home: Path, remote: Path, tmp_path: Path) -> None:
    (remote / "sub dir").mkdir()
    kernel = _kernel(home, sshd.config(remote))
    try:
        first = _run(kernel, {"command": "echo $SSH_CONNECTION; exit 3"}, tmp_path)
        second = _run(kernel, {"command": "pwd; echo $SSH_CONNECTION", "workdir": "sub dir"},
                      tmp_path)
        quoted = _run(kernel, {"command": "printf '%s|' \"a b\" 'it'\\''s' $'tab\\there'"},
                      tmp_path)
    finally:
        kernel.close()
    assert first["exit_code"] == 3
    lines = second["output"].splitlines()
    assert second["exit_code"] == 0 and lines[0] == str(remote / "sub dir")
    assert lines[1] == first["output"]  # same client port: the shared connection
    assert quoted["output"] == "a b|it's|tab\there|"


def test_a_timeout_kills_the_remote_command(sshd: Sshd, home: Path, remote: Path,
                                            tmp_path: Path) -> None:
    kernel = _kernel(home, sshd.config(remote))
    try:
        result = _run(kernel, {"command": "echo $$ > pid; sleep 60; touch marker",
                               "timeout": 2}, tmp_path)
    finally:
        kernel.close()
    assert result["exit_code"] is None and "timed out after 2 s" in result["error"]
    pid = int((remote / "pid").read_text())  # the remote shell had started
    assert _gone(pid), "the remote command outlived its timeout"
    assert not (remote / "marker").exists()  # it was killed before the sleep ended


def test_an_interrupt_kills_the_remote_command(sshd: Sshd, home: Path, remote: Path,
                                               tmp_path: Path) -> None:
    kernel = _kernel(home, sshd.config(remote))
    interrupt = threading.Event()

    def interrupt_once_started() -> None:  # the barrier: the remote shell wrote its pid
        for _ in range(400):
            if (remote / "pid").exists() and (remote / "pid").read_text().strip():
                break
            time.sleep(0.05)
        interrupt.set()

    helper = threading.Thread(target=interrupt_once_started)
    helper.start()
    try:
        result = _run(kernel, {"command": "echo $$ > pid; sleep 60; touch marker"}, tmp_path,
                      interrupt)
    finally:
        helper.join()
        kernel.close()
    assert result["exit_code"] is None and "interrupted" in result["error"]
    assert _gone(int((remote / "pid").read_text()))
    assert not (remote / "marker").exists()


def test_secrets_stay_on_the_local_side(sshd: Sshd, home: Path, remote: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # the kernel is built on the process environment, as the CLI builds it: .env is exported
    (home / ".env").write_text(f"OPENAI_API_KEY={OPENAI_KEY}\nPROJECT_LABEL=from-dotenv\n")
    monkeypatch.setenv("ACME_API_KEY", SHELL_KEY)
    monkeypatch.setenv("LC_HERMES_SECRET", LC_SECRET)
    monkeypatch.setenv("HERMES_SECRET_TOKEN", LC_SECRET)
    for name in ("OPENAI_API_KEY", "PROJECT_LABEL"):
        monkeypatch.delenv(name, raising=False)
    import yaml

    (home / "config.yaml").write_text(yaml.safe_dump({
        "approvals": {"mode": "off"},
        "terminal": sshd.config(remote, env_passthrough=["PROJECT_LABEL"])}))
    kernel = Kernel(home, entry_points=False, builtins=False).boot()
    assert kernel.register_plugin(core_tools, "core-tools").state == "loaded"
    try:
        assert os.environ["OPENAI_API_KEY"] == OPENAI_KEY  # the local side has them all
        result = _run(kernel, {"command": "printenv; echo conn=$SSH_CONNECTION"}, tmp_path)
    finally:
        kernel.close()
    output = result["output"]
    assert result["exit_code"] == 0 and f"127.0.0.1 {sshd.port}" in output
    assert "PROJECT_LABEL=from-dotenv" in output  # opted in by env_passthrough
    for secret in (OPENAI_KEY, SHELL_KEY, LC_SECRET):
        assert secret not in output
    # the control: an ssh client given this environment and SendEnv (Debian's ssh_config has
    # `SendEnv LANG LC_*`) does carry the secrets to this server
    naive = subprocess.run(
        ["ssh", "-T", "-o", "BatchMode=yes", "-o", f"UserKnownHostsFile={sshd.known_hosts}",
         "-o", "SendEnv=LC_* HERMES_* *_API_KEY", "-i", str(sshd.key), "-p", str(sshd.port),
         "-l", sshd.user, "127.0.0.1", "printenv"], env=dict(os.environ),
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert LC_SECRET in naive.stdout and SHELL_KEY in naive.stdout, naive.stderr


@pytest.mark.parametrize("wrong", ["port", "key", "host_key"])
def test_a_wrong_host_or_key_names_the_host_and_the_fix(sshd: Sshd, home: Path, remote: Path,
                                                        tmp_path: Path, wrong: str) -> None:
    from .sshd import _free_port, _keygen

    terminal = sshd.config(remote)
    if wrong == "port":
        terminal["ssh_port"] = _free_port()  # nobody listens there
    elif wrong == "key":
        _keygen(tmp_path / "stranger")
        terminal["ssh_key"] = str(tmp_path / "stranger")
    else:  # the server is not the host known_hosts knows
        (tmp_path / "known").write_text(
            f"[127.0.0.1]:{sshd.port} ssh-ed25519 "
            "AAAAC3NzaC1lZDI1NTE5AAAAIByNUmyZxvhR9ZM3QIfC8JHuxIdtbdGZBbOvkMvTbQqk\n")
        terminal["ssh_options"] = [f"UserKnownHostsFile={tmp_path / 'known'}"]
    kernel = _kernel(home, terminal)
    try:
        result = _run(kernel, {"command": "touch should-not-exist"}, tmp_path)
    finally:
        kernel.close()
    error = result["error"]
    assert f"cannot run commands on {sshd.user}@127.0.0.1:{terminal['ssh_port']}" in error
    assert "terminal.ssh_host" in error and "works here without a prompt" in error
    assert {"port": "refused", "key": "Permission denied",
            "host_key": "Host key verification failed"}[wrong] in error
    assert not (remote / "should-not-exist").exists()


def test_a_missing_remote_directory_is_named(sshd: Sshd, home: Path, tmp_path: Path) -> None:
    kernel = _kernel(home, sshd.config(tmp_path / "no-such-dir"))
    try:
        result = _run(kernel, {"command": "true"}, tmp_path)
    finally:
        kernel.close()
    assert result["exit_code"] == 126
    assert f"no directory {tmp_path / 'no-such-dir'}" in result["output"]
    assert "terminal.cwd" in result["output"]


def test_backend_settings_fall_back_to_the_original_variables(sshd: Sshd, home: Path,
                                                              remote: Path, tmp_path: Path) -> None:
    env = {"TERMINAL_ENV": "ssh", "TERMINAL_SSH_HOST": "127.0.0.1",
           "TERMINAL_SSH_PORT": str(sshd.port), "TERMINAL_SSH_USER": sshd.user,
           "TERMINAL_SSH_KEY": str(sshd.key), "TERMINAL_CWD": str(remote)}
    kernel = make_kernel(home, env=env, config={
        "approvals": {"mode": "off"},
        "terminal": {"ssh_options": [f"UserKnownHostsFile={sshd.known_hosts}"]}})
    assert kernel.register_plugin(core_tools, "core-tools").state == "loaded"
    try:
        result = _run(kernel, {"command": "pwd; echo $SSH_CONNECTION"}, tmp_path)
    finally:
        kernel.close()
    assert result["output"].splitlines()[0] == str(remote)
    assert f"127.0.0.1 {sshd.port}" in result["output"]


@pytest.mark.parametrize(("terminal", "message"), [
    ({"backend": "docker"}, "not available in this version"),
    ({"backend": "ssh", "ssh_host": "-oProxyCommand=touch x"}, "not a host or user name"),
    ({"backend": "ssh", "ssh_options": ["-F/tmp/x"]}, "Key=value"),
    ({"backend": "ssh", "ssh_options": ["SendEnv=OPENAI_API_KEY"]}, "SendEnv is refused"),
    ({"backend": "ssh", "ssh_port": 70000}, "ssh_port"),
])
def test_bad_backend_settings_are_config_errors(home: Path, terminal: dict[str, Any],
                                                message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        make_kernel(home, config={"terminal": terminal})


def test_ssh_without_a_host_says_which_key_to_set(home: Path, tmp_path: Path) -> None:
    kernel = _kernel(home, {"backend": "ssh"})
    result = _run(kernel, {"command": "true"}, tmp_path)
    assert "no host is set" in result["error"] and "terminal.ssh_host" in result["error"]


def test_an_unshipped_backend_named_by_terminal_env_is_an_error_not_local(
        home: Path, tmp_path: Path) -> None:
    kernel = make_kernel(home, env={"TERMINAL_ENV": "docker"},
                         config={"approvals": {"mode": "off"}})
    assert kernel.register_plugin(core_tools, "core-tools").state == "loaded"
    result = _run(kernel, {"command": "touch ran-locally"}, tmp_path)
    assert "'docker' is not available in this version" in result["error"]
    assert not (tmp_path / "ran-locally").exists()


def test_a_killed_shared_connection_is_replaced_without_noise(sshd: Sshd, remote: Path) -> None:
    import signal

    from hermes_agent.builtin_plugins.core_tools.backends import SSHBackend, SSHSettings

    settings = SSHSettings(host="127.0.0.1", user=sshd.user, port=sshd.port, key=str(sshd.key),
                           cwd=str(remote), options=(f"UserKnownHostsFile={sshd.known_hosts}",))
    backend = SSHBackend(settings)
    try:
        first = backend.run("echo $SSH_CONNECTION", None, 30, 10_000, {}, None, None)
        check = subprocess.run(backend._base("-O", "check"), env=backend.client_env,
                               capture_output=True, text=True, stdin=subprocess.DEVNULL)
        master = int(check.stderr.split("pid=")[1].split(")")[0])
        os.kill(master, signal.SIGKILL)  # its socket stays behind
        assert _gone(master)
        second = backend.run("echo $SSH_CONNECTION", None, 30, 10_000, {}, None, None)
        third = backend.run("echo $SSH_CONNECTION", None, 30, 10_000, {}, None, None)
    finally:
        backend.close()
    assert first.returncode == second.returncode == 0
    assert second.output != first.output  # a new connection ...
    assert third.output == second.output  # ... shared again
    assert second.output.startswith("127.0.0.1 ") and "Control socket" not in second.output


def test_the_ssh_agent_socket_is_for_the_ssh_client_not_for_commands(
        home: Path, tmp_path: Path) -> None:
    # SSH_AUTH_SOCK lets whoever holds it sign with your keys: local commands do not get it
    socket_path = str(tmp_path / "agent.sock")
    withheld = make_kernel(home, env={"SSH_AUTH_SOCK": socket_path, "PATH": os.defpath},
                           config={"approvals": {"mode": "off"}})
    assert withheld.register_plugin(core_tools, "core-tools").state == "loaded"
    assert socket_path not in _run(withheld, {"command": "printenv"}, tmp_path)["output"]
    opted_in = make_kernel(tmp_path / "home2", env={"SSH_AUTH_SOCK": socket_path},
                           config={"approvals": {"mode": "off"},
                                   "terminal": {"env_passthrough": ["SSH_AUTH_SOCK"]}})
    assert opted_in.register_plugin(core_tools, "core-tools").state == "loaded"
    assert socket_path in _run(opted_in, {"command": "printenv"}, tmp_path)["output"]
    from hermes_agent.builtin_plugins.core_tools.backends import SSHSettings

    remote = make_kernel(tmp_path / "home3", env={"SSH_AUTH_SOCK": socket_path},
                         config={"terminal": {"backend": "ssh", "ssh_host": "127.0.0.1"}})
    settings = SSHSettings.from_kernel(remote)  # no passthrough: the ssh client has it still
    assert dict(settings.client_env)["SSH_AUTH_SOCK"] == socket_path
