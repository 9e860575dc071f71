"""The Landlock mechanism on its own: the readable set it computes, what it confines that the
shared attack shapes (test_sandbox_attacks.py, run under both mechanisms) do not show, and
that it says what it cannot do. Real commands through the real terminal tool."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_agent.builtin_plugins.core_tools.sandbox.landlock import read_roots
from hermes_agent.builtin_plugins.core_tools.sandbox.runner import mechanism
from hermes_agent.builtin_plugins.core_tools.sandbox.status import sandbox_status, status_lines

from .conftest import SANDBOX_PYTHON, core_kernel
from .test_sandbox_policy import Config

LANDLOCK = mechanism(wanted="landlock")
needs_landlock = pytest.mark.skipif(not LANDLOCK.works,
                                    reason=f"no Landlock here: {LANDLOCK.why_none}")


def test_read_roots_cover_everything_but_the_excluded(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for name in ("proj/src", ".ssh", "docs", ".config/gh", ".config/git"):
        (home / name).mkdir(parents=True)
    (home / ".bashrc").write_text("")
    (home / "to-ssh").symlink_to(home / ".ssh")
    roots = read_roots([home / ".ssh", home / ".config" / "gh", home / "absent",
                        home / ".ssh" / "inner"])
    covered = {root for root in roots if root == home or home in root.parents}
    assert covered == {home / "proj", home / "docs", home / ".bashrc", home / ".config" / "git"}
    assert Path("/usr") in roots and Path("/") not in roots and home not in roots
    assert not any(root == tmp_path or root in tmp_path.parents for root in roots)


@pytest.fixture
def landlock_world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple]:
    if not LANDLOCK.works:
        pytest.skip(f"no Landlock here: {LANDLOCK.why_none}")
    home = Path(os.path.realpath(tmp_path)) / "home"
    work = home / "proj"
    (work / ".secrets").mkdir(parents=True)
    (work / ".secrets" / "token").write_text("TOKEN-in-workspace")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("PRIVATE-KEY")
    (home / ".ssh" / "known_hosts").write_text("host ssh-ed25519 AAAA")
    (home / "ssh-link").symlink_to(home / ".ssh")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HERMES_HOME", str(home / ".hermes"))

    def kernel(**sandbox: object):
        return core_kernel(home / ".hermes", {"approvals": {"mode": "off"}, "sandbox": {
            "mechanism": "landlock", "hidden_paths": [".secrets"], **sandbox}})

    yield kernel, home, work


def terminal(kernel, work: Path, command: str) -> dict:
    return json.loads(kernel.tools.dispatch("terminal", {"command": command}, cwd=str(work)))


def test_hidden_reads_inside_and_outside_the_workspace_and_public_ssh_files(
        landlock_world) -> None:
    make, home, work = landlock_world
    (work / "src").mkdir()
    kernel = make()
    said = terminal(kernel, work, (
        f"cat .secrets/token; cat {home}/ssh-link/id_rsa; cat {home}/.ssh/id_rsa; "
        f"cat {home}/.ssh/known_hosts; echo; mkdir -p src/a && echo made > src/a/f && "
        "cat src/a/f; echo again > .secrets/token"))
    out = said["output"]
    assert "TOKEN-in-workspace" not in out and "PRIVATE-KEY" not in out
    assert "host ssh-ed25519" in out and "made" in out
    # the documented limit: a hidden path in a writable root can be overwritten (not read),
    # and the status says that it is not protected
    assert (work / ".secrets" / "token").read_text() == "again\n"
    status = sandbox_status(Config({"sandbox": {"mechanism": "landlock",
                                                "hidden_paths": [".secrets"]}}),
                            work, home / ".hermes")
    assert not status.hidden_enforced
    assert any(str(work / ".secrets") in limit and "NOT protected" in limit
               for limit in status.limits)
    # and what is made at the top of a folder split for it is readable from the next call
    terminal(kernel, work, "echo top > top.txt; mkdir new && echo n > new/f")
    assert terminal(kernel, work, "cat top.txt new/f")["output"] == "top\nn"
    kernel.close()


class _Server:
    """A TCP server on 127.0.0.1 that answers "pong" to every connection."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.sendall(b"pong")
            conn.close()


def test_network_off_refuses_tcp_connect_and_bind(landlock_world) -> None:
    if LANDLOCK.abi < 4:
        pytest.skip(f"Landlock ABI {LANDLOCK.abi} has no network rules")
    make, _home, work = landlock_world
    server = _Server()
    probe = (f"{SANDBOX_PYTHON} -c \"import socket; s = socket.create_connection(('127.0.0.1', "
             f"{server.port})); print(s.recv(4).decode())\"; {SANDBOX_PYTHON} -c \"import socket; "
             "socket.socket().bind(('127.0.0.1', 0)); print('bound')\"")
    try:
        for network, works in ((True, True), (False, False)):
            kernel = make(network=network)
            said = terminal(kernel, work, probe)
            out = said["output"]
            assert ("pong" in out and "bound" in out) is works, out
            if not works:
                assert "pong" not in out and "bound" not in out and "Permission" in out
                assert "Commands have no network (TCP" in said["sandbox"]
            kernel.close()
    finally:
        server.sock.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="capabilities matter when hermes runs as root")
def test_as_root_the_command_holds_no_capability(landlock_world) -> None:
    make, _home, work = landlock_world
    kernel = make()
    out = terminal(kernel, work, "grep -E '^Cap(Eff|Prm|Bnd|Amb)' /proc/self/status")["output"]
    values = [line.split()[1] for line in out.splitlines()]
    assert len(values) == 4 and set(values) == {"0000000000000000"}, out
    off = core_kernel(Path(os.environ["HERMES_HOME"]), {"sandbox": {"mode": "off"}})
    assert "000000000000" not in terminal(off, work, "grep CapEff /proc/self/status")["output"]
    kernel.close()
    off.close()


def test_private_tmpdir_per_command_removed_after_and_leftovers_end(landlock_world) -> None:
    make, _home, work = landlock_world
    kernel = make()
    first = terminal(kernel, work, "echo $TMPDIR; echo t > $TMPDIR/x && cat $TMPDIR/x")
    tmpdir, content = first["output"].splitlines()
    assert content == "t" and not Path(tmpdir).exists()
    assert terminal(kernel, work, "echo $TMPDIR")["output"] != tmpdir
    started = time.monotonic()
    said = terminal(kernel, work, "sleep 30 & echo $!")
    assert time.monotonic() - started < 10
    pid = int(said["output"])
    deadline = time.monotonic() + 5
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}/cmdline").exists() or b"sleep" not in Path(
        f"/proc/{pid}/cmdline").read_bytes()
    kernel.close()


@needs_landlock
def test_status_says_landlock_and_what_it_cannot_do(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "proj").mkdir(parents=True)
    config = Config({"sandbox": {"mechanism": "landlock", "network": False}})
    found = sandbox_status(config, home / "proj", home / ".hermes")
    assert found.mechanism == "landlock" and found.confined and found.landlock_abi == LANDLOCK.abi
    assert found.hidden_enforced and found.hidden_listable and found.private_tmp == "$TMPDIR"
    assert "named in sandbox.mechanism" in found.why and not found.error
    assert found.network is False and ("TCP" in found.network_enforced
                                       or "NOT enforced" in found.network_enforced)
    assert any("listed" in limit for limit in found.limits)
    text = "\n".join(status_lines(found))
    assert text.startswith("mechanism: landlock (Landlock ABI") and "limits:" in text
    assert "names listable" in text and "network: off (" in text


def test_a_reused_ruleset_follows_the_disk(landlock_world) -> None:
    """Rulesets are built once per policy and reused: a hidden path that appears later is
    hidden at the next command, a workspace made anew is writable again."""
    import shutil
    import tempfile

    make, home, work = landlock_world
    keys = Path(tempfile.mkdtemp(prefix="hermes-sbx-", dir="/var/tmp")) / "keys"  # not /tmp
    (keys.parent / "plain.txt").write_text("plain")
    kernel = make(hidden_paths=[str(keys)])
    assert terminal(kernel, work, f"cat {keys.parent}/plain.txt")["output"] == "plain"
    keys.mkdir()
    (keys / "k").write_text("LATE-SECRET")
    out = terminal(kernel, work, f"cat {keys}/k; cat {keys.parent}/plain.txt")["output"]
    assert "LATE-SECRET" not in out and "plain" in out
    shutil.rmtree(work)
    work.mkdir()
    assert terminal(kernel, work, "echo again > f && cat f")["output"] == "again"
    kernel.close()
    shutil.rmtree(keys.parent)


def test_a_ruleset_the_child_cannot_enforce_stops_the_command(landlock_world, monkeypatch) -> None:
    """Fail closed: when enforcing fails between fork and exec, nothing runs unconfined."""
    from hermes_agent.builtin_plugins.core_tools.sandbox import landlock

    make, home, work = landlock_world

    def refuse(self) -> None:
        raise OSError(1, "restrict_self: Operation not permitted")

    monkeypatch.setattr(landlock.LandlockLaunch, "preexec", refuse)
    kernel = make()
    said = terminal(kernel, work, f"touch {work}/ran")
    assert "could not be applied" in said["error"] and not (work / "ran").exists()
    kernel.close()


def test_a_dead_hermes_temporary_folders_are_swept(landlock_world) -> None:
    """A SIGKILLed hermes cannot remove its commands' temporary folders: the next build does."""
    import signal
    import subprocess
    import tempfile

    from hermes_agent.builtin_plugins.core_tools.sandbox import landlock

    make, _home, work = landlock_world
    dead = subprocess.Popen(["sleep", "30"])
    dead.send_signal(signal.SIGKILL)
    dead.wait()
    orphan = Path(tempfile.gettempdir()) / f"{landlock.TMP_PREFIX}{dead.pid}-x1"
    alive = Path(tempfile.gettempdir()) / f"{landlock.TMP_PREFIX}{os.getpid()}-x2"
    for folder in (orphan, alive):
        (folder / "cmd-1").mkdir(parents=True)
    try:
        kernel = make(network=False)  # a policy not built yet in this process
        assert terminal(kernel, work, "echo ok")["output"] == "ok"
        kernel.close()
        assert not orphan.exists() and alive.exists()
    finally:
        import shutil

        shutil.rmtree(orphan, ignore_errors=True)
        shutil.rmtree(alive, ignore_errors=True)


def test_background_processes_shell_sessions_and_the_sandbox_service_are_confined_too(
        landlock_world) -> None:
    """Every path that starts a command (background, a shell session, the service shell hooks
    use) goes through the same launch, so Landlock applies to each."""
    from hermes_agent.api.services import SANDBOX

    make, home, work = landlock_world
    (home / ".hermes").mkdir(exist_ok=True)
    (home / ".hermes" / ".env").write_text("SECRET_X=sk-landlock-9\n")
    kernel = make()
    try:
        def call(args: dict) -> dict:
            return json.loads(kernel.tools.dispatch(
                args.pop("tool", "terminal"), args, cwd=str(work), session_id="s1"))

        escape = f"echo in > made-$N; touch {home}/x-$N; cat {home}/.hermes/.env"
        started = call({"command": escape.replace("$N", "bg"), "background": True})
        waited = call({"tool": "process", "action": "wait", "session_id": started["session_id"],
                       "timeout": 30})
        assert waited["status"] == "exited", waited
        said = call({"command": escape.replace("$N", "sh"), "session": "main"})
        ran = kernel.service(SANDBOX).run(escape.replace("$N", "svc"), cwd=work, timeout=30)
        assert ran.confined
        for tag in ("bg", "sh", "svc"):
            assert (work / f"made-{tag}").read_text() == "in\n"  # the workspace is writable
            assert not (home / f"x-{tag}").exists()
        assert "sk-landlock-9" not in json.dumps([waited, said]) + ran.stdout + ran.stderr
        kept = call({"command": "sleep 30", "background": True, "keep": True})
        assert "keep: true needs the bubblewrap sandbox" in kept["error"]
    finally:
        kernel.close()
