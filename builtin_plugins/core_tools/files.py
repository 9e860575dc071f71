"""read_file, write_file and patch. Paths are resolved against the call's working directory;
every failure is a JSON error result that says what to do instead."""

from __future__ import annotations

import difflib
import errno
import io
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from hermes_agent.api import ToolCallContext, tool_error

from .boundary import OutOfBounds, default_policy, precheck_write, walked
from .file_io import Refused, open_regular, replace_in, replace_text
from .sandbox.policy import SandboxPolicy
from .secrets import shown_masked, write_refusal

BINARY_PROBE = 8192
DIFF_LIMIT = 4000
PATCH_MAX_BYTES = 50_000_000  # patch holds the file (and its new text) in memory
MASKED_MAX_BYTES = 5_000_000  # hermes's config.yaml is masked whole, so held in memory
MASKED_NOTE = ("This is hermes's configuration: the values of secret settings (api_key, "
               "token, password, headers...) are shown as ***. Keys belong in "
               "$HERMES_HOME/.env; the user sees them with `hermes config show --show-secrets`.")


def _ok(**data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)


def _int_arg(args: dict[str, Any], key: str, default: int, low: int, high: int | None = None) -> int:
    value = args.get(key, default)
    try:
        number = int(value) if value is not None else default
    except (TypeError, ValueError):
        number = default
    number = max(low, number)
    return min(number, high) if high is not None else number


def missing_file_error(path: Path, raw: str) -> str:
    """Error for a path that does not exist, naming close matches in its directory."""
    parent = path.parent
    hint = ""
    if parent.is_dir():
        names = sorted(p.name for p in parent.iterdir())
        close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
        if close:
            hint = f" Similar names in {parent}: {', '.join(close)}."
    elif not parent.exists():
        hint = f" The directory {parent} does not exist either."
    return tool_error(f"File not found: {raw} (resolved to {path}).{hint} "
                        "Use search_files with target='files' to locate it.")


def bad_path(raw: Any, tool: str) -> str | None:
    """The error for a missing or unusable ``path`` argument, else None."""
    if not isinstance(raw, str) or not raw.strip():
        return tool_error(f"{tool} needs a 'path' (the file to use).")
    if "\0" in raw:
        return tool_error(f"the path {raw!r} contains a NUL byte; give the file's name "
                          "without it.")
    return None


def open_error(exc: OSError, path: Path, raw: str) -> str:
    """A tool error for an ``open`` that failed."""
    if isinstance(exc, FileNotFoundError):
        return missing_file_error(path, raw)
    if isinstance(exc, IsADirectoryError):
        return tool_error(f"{raw} is a directory; list it with search_files "
                          f"(target='files', path='{raw}').")
    if exc.errno == errno.ELOOP:
        return tool_error(f"{raw} is a symlink loop (its links point at each other); give the "
                          "path of a real file.")
    return tool_error(f"Cannot read {raw}: {exc.strerror or exc}.")


def _opened(path: Path, raw: str, policy: SandboxPolicy) -> tuple[BinaryIO, str] | str:
    """:func:`open_regular`, or the tool error saying why the file is not opened."""
    try:
        return open_regular(path, raw, policy)
    except Refused as refused:
        return tool_error(str(refused))
    except OSError as exc:
        return open_error(exc, path, raw)


def masked_text(handle: BinaryIO, raw: str) -> TextIO:
    """The text of hermes's config.yaml (open in ``handle``) with its secret values masked
    (``hermes_agent.kits.secret_text.mask_config_text``), to read like the file."""
    from hermes_agent.kits.secret_text import mask_config_text

    data = handle.read(MASKED_MAX_BYTES + 1)
    if len(data) > MASKED_MAX_BYTES:
        raise OSError(f"{raw} is hermes's configuration and larger than {MASKED_MAX_BYTES:,} "
                      "bytes; ask the user to check it")
    return io.StringIO(mask_config_text(data.decode("utf-8", errors="replace")), newline="")


def bounded_lines(handle: TextIO, keep: int) -> Iterator[tuple[str, bool]]:
    """Each line's first ``keep`` characters (without its line end) and whether it was longer;
    the rest of a long line is skipped a piece at a time, never held whole."""
    while True:
        part = handle.readline(keep + 1)
        if not part:
            return
        text = part.rstrip("\r\n")
        if len(part) > keep and text == part:  # cut before its line end: skip the rest
            while (rest := handle.readline(1 << 16)) and not rest.endswith(("\n", "\r")):
                pass
        yield text[:keep], len(text) > keep


def read_file(args: dict[str, Any], ctx: ToolCallContext, *, max_lines: int = 2000,
              max_line_length: int = 2000, policy: SandboxPolicy | None = None) -> str:
    """``policy``: what the session may reach (the sandbox's; None: the defaults)."""
    raw = args.get("path")
    if (problem := bad_path(raw, "read_file")) is not None:
        return problem
    path = ctx.resolve(raw)
    policy = default_policy(ctx.cwd) if policy is None else policy
    offset = _int_arg(args, "offset", 1, 1)
    limit = _int_arg(args, "limit", 500, 1, max_lines)
    opened = _opened(path, raw, policy)
    if isinstance(opened, str):
        return opened
    handle, real = opened
    lines: list[str] = []
    total = 0
    long_lines = 0
    try:
        with handle:
            info = os.fstat(handle.fileno())
            if b"\0" in handle.read(BINARY_PROBE):
                return tool_error(f"{raw} is a binary file ({info.st_size} "
                                  "bytes); read_file shows text only.")
            handle.seek(0)
            masked = shown_masked(real, info)
            text = masked_text(handle, raw) if masked else io.TextIOWrapper(
                handle, encoding="utf-8", errors="replace", newline="")
            for number, (line, longer) in enumerate(bounded_lines(text, max_line_length), 1):
                total = number
                if offset <= number < offset + limit:
                    if longer:
                        line += " ... [line truncated]"
                        long_lines += 1
                    lines.append(f"{number}|{line}")
    except OSError as exc:
        return tool_error(f"Cannot read {raw}: {exc.strerror or exc}.")
    if total and offset > total:
        return tool_error(f"offset {offset} is past the end of {raw} ({total} lines); "
                            f"use an offset between 1 and {total}.")
    end = offset + len(lines) - 1
    result: dict[str, Any] = {"path": str(path), "content": "\n".join(lines),
                              "total_lines": total, "start_line": offset if lines else 0,
                              "end_line": end if lines else 0,
                              "next_offset": end + 1 if end < total else None}
    notes = [MASKED_NOTE] if masked else []
    if long_lines:
        notes.append(f"{long_lines} line(s) longer than {max_line_length} characters were "
                     "shortened.")
    if notes:
        result["note"] = " ".join(notes)
    return _ok(**result)


def write_file(args: dict[str, Any], ctx: ToolCallContext, *,
               policy: SandboxPolicy | None = None) -> str:
    raw, content = args.get("path"), args.get("content")
    if (problem := bad_path(raw, "write_file")) is not None:
        return problem
    if not isinstance(content, str):
        return tool_error("write_file needs 'content' as a string (the whole new file).")
    path = ctx.resolve(raw)
    policy = default_policy(ctx.cwd) if policy is None else policy
    try:
        real = path.resolve()  # a link is written through: its target is what is checked
    except (OSError, RuntimeError):
        return tool_error(f"{raw} is a symlink loop (its links point at each other); give the "
                          "path of a real file.")
    if real.is_dir():
        return tool_error(f"{raw} is a directory; give a file path.")
    if (refused := write_refusal(raw, str(path.absolute()), str(real))) is not None:
        return tool_error(refused)
    if policy.confined and (refused := precheck_write(raw, policy, path)) is not None:
        return tool_error(refused)  # judged before anything is opened or made
    try:
        if policy.confined:
            created = _write_confined(path, raw, content, policy)
        else:
            created = not real.exists()
            real.parent.mkdir(parents=True, exist_ok=True)
            replace_text(real, content, raw)
    except Refused as refusal:
        return tool_error(str(refusal))
    except OSError as exc:
        return tool_error(f"Cannot write {raw}: {exc.strerror or exc}.")
    return _ok(path=str(path), created=created, bytes_written=len(content.encode("utf-8")),
               lines=content.count("\n") + (1 if content and not content.endswith("\n") else 0))


def _write_confined(path: Path, raw: str, content: str, policy: SandboxPolicy) -> bool:
    """``content`` written at ``path`` by a walk that stays in the writable roots (missing
    folders made there); whether the file is new. :class:`Refused` with the reason."""
    try:
        with walked(path, raw, policy, write=True, create_folders=True) as where:
            real = where.real
            if (refused := write_refusal(raw, str(real))) is not None:  # as walked
                raise Refused(refused)
            try:
                mode = os.stat(where.name, dir_fd=where.folder, follow_symlinks=False).st_mode
            except FileNotFoundError:
                mode = None
            if mode is not None and stat.S_ISDIR(mode):
                raise Refused(f"{raw} is a directory; give a file path.")
            replace_in(where.folder, where.name, content)
            return mode is None
    except OutOfBounds as out:
        raise Refused(str(out)) from None


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _near_miss(text: str, old: str) -> str:
    """Where ``old`` would match if whitespace were ignored: a hint for the model."""
    squashed = " ".join(old.split())
    if not squashed:
        return ""
    lines = text.splitlines()
    first = old.strip().splitlines()[0].strip() if old.strip() else ""
    for number, line in enumerate(lines, start=1):
        if first and first in line.strip():
            window = " ".join(" ".join(lines[number - 1:number - 1 + old.count("\n") + 1]).split())
            if squashed in window or window in squashed:
                return (f" Text matching apart from whitespace starts at line {number}; copy it "
                        "exactly (read_file shows the indentation).")
    return ""


def patch(args: dict[str, Any], ctx: ToolCallContext, *,
          policy: SandboxPolicy | None = None) -> str:
    raw = args.get("path")
    old, new = args.get("old_string"), args.get("new_string")
    if (problem := bad_path(raw, "patch")) is not None:
        return problem
    if not isinstance(old, str) or not isinstance(new, str):
        return tool_error("patch needs 'old_string' and 'new_string' as strings.")
    if not old:
        return tool_error("old_string is empty; to create or overwrite a file use write_file.")
    if old == new:
        return tool_error("old_string and new_string are identical; nothing to change.")
    path = ctx.resolve(raw)
    policy = default_policy(ctx.cwd) if policy is None else policy
    try:
        resolved = str(path.resolve())
    except (OSError, RuntimeError):
        resolved = str(path.absolute())
    if (refused := write_refusal(raw, str(path.absolute()), resolved)) is not None:
        return tool_error(refused)
    if policy.confined and (refused := precheck_write(raw, policy, path)) is not None:
        return tool_error(refused)
    opened = _opened(path, raw, policy)
    if isinstance(opened, str):
        return opened
    handle, real = opened
    try:
        with handle:
            if shown_masked(real, os.fstat(handle.fileno())):  # a hard link to config.yaml
                return tool_error(f"{raw} is another name of hermes's config.yaml ({real}); "
                                  "patch does not change hermes's settings. Ask the user to "
                                  "change them (`hermes config set`, `hermes config edit`).")
            data = handle.read(PATCH_MAX_BYTES + 1)
    except OSError as exc:
        return tool_error(f"Cannot read {raw}: {exc.strerror or exc}.")
    if len(data) > PATCH_MAX_BYTES:
        return tool_error(f"{raw} is larger than {PATCH_MAX_BYTES:,} bytes; patch edits smaller "
                          "files. Change it with the terminal tool (sed -i, or a script).")
    if b"\0" in data[:BINARY_PROBE]:
        return tool_error(f"{raw} is a binary file; patch edits text files only.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return tool_error(f"{raw} is not UTF-8 text; patch edits UTF-8 files only.")
    if (refused := write_refusal(raw, real)) is not None:  # what was opened, links followed
        return tool_error(refused)
    count = text.count(old)
    if count == 0:
        return tool_error(f"old_string was not found in {raw}.{_near_miss(text, old)} "
                            "Read the file again and copy the text exactly.")
    replace_all = args.get("replace_all") is True
    if count > 1 and not replace_all:
        starts, index = [], text.find(old)
        while index != -1 and len(starts) < 10:
            starts.append(_line_of(text, index))
            index = text.find(old, index + 1)
        return tool_error(f"old_string occurs {count} times in {raw} (lines "
                            f"{', '.join(map(str, starts))}); include more surrounding text to "
                            "make it unique, or set replace_all=true.")
    updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    try:
        replace_text(Path(real), updated, raw, policy)  # the file read, not the path again
    except Refused as refusal:
        return tool_error(str(refusal))
    except OSError as exc:
        return tool_error(f"Cannot write {raw}: {exc.strerror or exc}.")
    diff = "".join(difflib.unified_diff(text.splitlines(keepends=True),
                                        updated.splitlines(keepends=True),
                                        fromfile=f"a/{raw}", tofile=f"b/{raw}", n=2))
    if len(diff) > DIFF_LIMIT:
        diff = diff[:DIFF_LIMIT] + "\n... [diff shortened]"
    return _ok(path=str(path), replacements=count if replace_all else 1, diff=diff)
