"""search_files: regex over file contents, or glob over file names, in a tree that honours
.gitignore. Results are in path order so the same search gives the same answer."""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hermes_agent.api import ToolCallContext, tool_error

from .boundary import default_policy, policy_from_json, policy_to_json, precheck_read
from .file_io import Refused, open_regular
from .sandbox.policy import SandboxPolicy
from .files import BINARY_PROBE, _int_arg, masked_text
from .gitignore import IgnoreRules, rules_for
from .secrets import holds_secret, shown_masked

MAX_FILE_BYTES = 5_000_000  # larger files are skipped by content search
MAX_LINE_CHARS = 400
ALWAYS_SKIPPED = frozenset({".git"})


def walk(root: Path, policy: SandboxPolicy | None = None) -> Iterator[tuple[Path, str]]:
    """Files under ``root`` (sorted, depth first) not ignored by .gitignore, with their path
    relative to ``root``; folders hidden by ``policy`` are not entered (links to folders
    never are)."""
    base_rules, repo_rel = rules_for(root)

    def repo_path(rel: str) -> str:
        return f"{repo_rel}/{rel}" if repo_rel and rel else (repo_rel or rel)

    def visit(directory: Path, rel: str, rules: IgnoreRules) -> Iterator[tuple[Path, str]]:
        rules = rules.extended(directory, repo_path(rel))
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            child_rel = f"{rel}/{entry.name}" if rel else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir and entry.name in ALWAYS_SKIPPED:
                continue
            if rules.ignored(repo_path(child_rel), is_dir):
                continue
            if is_dir:
                if policy is None or not policy.is_hidden(Path(os.path.realpath(entry.path))):
                    yield from visit(Path(entry.path), child_rel, rules)
                continue
            try:
                is_file = entry.is_file()  # a link loop raises
            except OSError:
                continue
            if is_file:
                yield Path(entry.path), child_rel

    yield from visit(root, "", base_rules)


def _glob_match(name: str, rel: str, glob: str) -> bool:
    return fnmatch.fnmatchcase(rel, glob) if "/" in glob else fnmatch.fnmatchcase(name, glob)


def _read_lines(path: Path, policy: SandboxPolicy) -> list[str] | None:
    """The file's lines; None for a file not searched (secret, hidden, binary, too big, not
    regular)."""
    try:
        handle, real = open_regular(path, str(path), policy)  # checked as opened, as read_file
        with handle:
            if shown_masked(real, os.fstat(handle.fileno())):  # matched as read_file shows it
                return masked_text(handle, str(path)).read().splitlines()
            data = handle.read(MAX_FILE_BYTES + 1)
    except (OSError, Refused):
        return None
    if len(data) > MAX_FILE_BYTES:
        return None
    if b"\0" in data[:BINARY_PROBE]:
        return None
    return data.decode("utf-8", errors="replace").splitlines()


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + " ..."


def search_files(args: dict[str, Any], ctx: ToolCallContext, *,
                 policy: SandboxPolicy | None = None) -> str:
    """A content search whose pattern could backtrack for hours (``(a+)+$`` on a line of
    ``a``s) runs in a child process killed at :data:`SEARCH_SECONDS` or when the call is
    interrupted: Python's regex engine cannot be stopped. Every other search runs here (a
    child costs about 150 ms to start)."""
    policy = default_policy(ctx.cwd) if policy is None else policy
    pattern = args.get("pattern")
    if (args.get("target") or "content") != "content" or not isinstance(pattern, str) \
            or not pattern:
        return search_here(args, ctx, policy)
    try:
        re.compile(pattern)
    except re.error:
        return search_here(args, ctx, policy)  # the error, said here
    if may_backtrack(pattern):
        return run_in_child(args, ctx, policy=policy)
    return search_here(args, ctx, policy)


def may_backtrack(pattern: str) -> bool:
    """True unless ``pattern`` matches a line in about linear time: a repetition holding
    another repetition or alternatives, a back-reference, or two or more unbounded
    repetitions of almost any character (``.*a.*b``, ``[^,]*,[^,]*`` on one long line) may
    not."""
    try:
        from re import _parser as sre  # the parser of the running Python's re module
        tree = sre.parse(pattern)
        repeats = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)
    except Exception:  # a Python whose re has no such parser: assume the worst
        return True
    unbounded = 0

    def nested(items: Any, in_repeat: bool) -> bool:
        nonlocal unbounded
        for op, av in items:
            if op in repeats:
                if av[1] <= 1:  # optional: tried at most twice
                    if nested(av[2], in_repeat):
                        return True
                    continue
                if in_repeat:
                    return True
                body = list(av[2])
                unbounded += av[1] > 100 and len(body) == 1 and (
                    body[0][0] in (sre.ANY, sre.NOT_LITERAL)
                    or (body[0][0] is sre.IN and body[0][1][:1] == [(sre.NEGATE, None)]))
                if nested(av[2], True):
                    return True
            elif op is sre.BRANCH:
                if in_repeat or any(nested(branch, False) for branch in av[1]):
                    return True
            elif op in (sre.GROUPREF, sre.GROUPREF_EXISTS):
                return True
            elif op is sre.SUBPATTERN and nested(av[-1], in_repeat):
                return True
            elif op in (sre.ASSERT, sre.ASSERT_NOT) and nested(av[1], in_repeat):
                return True
            elif op is sre.ATOMIC_GROUP and nested(av, in_repeat):
                return True
        return False

    return nested(tree, False) or unbounded > 1


def search_here(args: dict[str, Any], ctx: ToolCallContext,
                policy: SandboxPolicy | None = None) -> str:
    pattern = args.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        return tool_error("search_files needs a 'pattern'.")
    target = args.get("target") or "content"
    if target not in ("content", "files"):
        return tool_error("target must be 'content' (search inside files) or 'files' "
                            "(find files by name).")
    mode = args.get("output_mode") or "content"
    if mode not in ("content", "files_only", "count"):
        return tool_error("output_mode must be 'content', 'files_only' or 'count'.")
    raw_path = args.get("path") or "."
    if "\0" in str(raw_path):
        return tool_error(f"the path {raw_path!r} contains a NUL byte; give the folder's name "
                          "without it.")
    root = ctx.resolve(str(raw_path))
    policy = default_policy(ctx.cwd) if policy is None else policy
    if policy.confined and (hidden := precheck_read(str(raw_path), policy, root)) is not None:
        empty: dict[str, Any] = ({"files": []} if target == "files" or mode == "files_only"
                                 else {"counts": [], "total_matches": 0} if mode == "count"
                                 else {"matches": []})
        return json.dumps({"root": str(root), "total": 0, **empty, "note": hidden},
                          ensure_ascii=False)
    if not root.exists():
        return tool_error(f"Path not found: {raw_path} (resolved to {root}).")
    limit = _int_arg(args, "limit", 50, 1, 1000)
    offset = _int_arg(args, "offset", 0, 0)
    context = _int_arg(args, "context", 0, 0, 20)
    file_glob = args.get("file_glob") if isinstance(args.get("file_glob"), str) else ""
    files = [(p, rel) for p, rel in ([(root, root.name)] if root.is_file() else walk(root, policy))
             if target == "content" or not (holds_secret(p) or policy.is_hidden(
                 Path(os.path.realpath(p))))]  # contents: _read_lines judges
    if file_glob:
        files = [(p, rel) for p, rel in files if _glob_match(p.name, rel, file_glob)]
    if target == "files":
        found = [rel for p, rel in files if _glob_match(p.name, rel, pattern)]
        page = found[offset:offset + limit]
        return _result(root, total=len(found), offset=offset, page_size=len(page), files=page)
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        return tool_error(f"Invalid regular expression {pattern!r}: {exc}. Escape special "
                            "characters such as ( [ . * with a backslash for a literal search.")
    if mode == "files_only":
        matched = [rel for p, rel in files
                   if (lines := _read_lines(p, policy)) and any(regex.search(x) for x in lines)]
        page = matched[offset:offset + limit]
        return _result(root, total=len(matched), offset=offset, page_size=len(page), files=page)
    if mode == "count":
        counts = []
        for p, rel in files:
            lines = _read_lines(p, policy) or []
            n = sum(1 for x in lines if regex.search(x))
            if n:
                counts.append({"path": rel, "count": n})
        page = counts[offset:offset + limit]
        return _result(root, total=len(counts), offset=offset, page_size=len(page),
                       counts=page, total_matches=sum(c["count"] for c in counts))
    matches: list[dict[str, Any]] = []
    total = 0
    for p, rel in files:
        lines = _read_lines(p, policy)
        if not lines:
            continue
        for index, line in enumerate(lines):
            if not regex.search(line):
                continue
            total += 1
            if offset < total <= offset + limit:
                match: dict[str, Any] = {"path": rel, "line": index + 1, "text": _clip(line)}
                if context:
                    lo, hi = max(0, index - context), min(len(lines), index + context + 1)
                    match["before"] = [_clip(x) for x in lines[lo:index]]
                    match["after"] = [_clip(x) for x in lines[index + 1:hi]]
                matches.append(match)
    return _result(root, total=total, offset=offset, page_size=len(matches), matches=matches)


def _result(root: Path, *, total: int, offset: int, page_size: int, **data: Any) -> str:
    shown_to = offset + page_size
    body: dict[str, Any] = {"root": str(root), "total": total, **data}
    if shown_to < total:
        body["next_offset"] = shown_to
    return json.dumps(body, ensure_ascii=False)


#: how long a content search may take before its child process is killed
SEARCH_SECONDS = 60.0
_CHILD = ("import sys; from hermes_agent.builtin_plugins.core_tools.search import child_main; "
          "child_main()")


def run_in_child(args: dict[str, Any], ctx: ToolCallContext, *,
                 seconds: float | None = None, policy: SandboxPolicy | None = None) -> str:
    """:func:`search_here` in a child process with a deadline."""
    from .danger.paths import current_hermes_home

    seconds = SEARCH_SECONDS if seconds is None else seconds
    policy = default_policy(ctx.cwd) if policy is None else policy
    payload = json.dumps({"args": args, "cwd": str(ctx.cwd),
                          "hermes_home": current_hermes_home(),
                          "policy": policy_to_json(policy)})
    try:
        child = subprocess.Popen([sys.executable, "-c", _CHILD], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 encoding="utf-8", errors="replace")
    except OSError:  # no interpreter to start (an embedded Python): search here, unbounded
        return search_here(args, ctx, policy)
    box: list[tuple[str, str]] = []
    reader = threading.Thread(target=lambda: box.append(child.communicate(payload)),
                              daemon=True)
    reader.start()
    deadline = time.monotonic() + seconds
    while reader.is_alive() and time.monotonic() < deadline:
        if ctx.interrupt_event is not None and ctx.interrupt_event.is_set():
            break
        reader.join(0.05)
    if reader.is_alive():
        child.kill()
        reader.join()
        if ctx.interrupt_event is not None and ctx.interrupt_event.is_set():
            return tool_error("search_files was interrupted.")
        return tool_error(f"search_files took longer than {seconds:g} s and was stopped. If the "
                          "pattern nests repetitions such as (a+)+ or (a|a)*, it can take "
                          "forever on some lines: write it without the nesting; else search a "
                          "smaller folder (path) or fewer files (file_glob).")
    out, err = box[0]
    if child.returncode != 0 or not out.strip():
        last = (err.strip().splitlines() or ["no output"])[-1]
        return tool_error(f"search_files failed ({last}); try again or search a smaller folder.")
    return out


def child_main() -> None:
    """The child's side of :func:`run_in_child`: arguments on stdin, the result on stdout."""
    from .danger.paths import kernel_home

    payload = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    ctx = ToolCallContext(cwd=Path(payload["cwd"]))
    home = payload.get("hermes_home")
    with kernel_home(home) if home else contextlib.nullcontext():
        result = search_here(payload["args"], ctx, policy_from_json(payload["policy"]))
    sys.stdout.buffer.write(result.encode("utf-8"))
