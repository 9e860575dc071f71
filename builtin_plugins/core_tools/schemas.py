"""Function schemas of the core tools: the text the model reads. Keep them byte-stable: tool
definitions are part of every request's cached prefix."""

from __future__ import annotations

from typing import Any

READ_LINE_LIMIT = 2000
CLARIFY_MAX_CHOICES = 4
TODO_STATUSES = ("pending", "in_progress", "completed", "cancelled")


def _schema(name: str, description: str, properties: dict[str, Any],
            required: list[str]) -> dict[str, Any]:
    return {"name": name, "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required}}


READ_FILE = _schema(
    "read_file",
    "Read a text file. Lines come back numbered as 'N|text', starting at `offset` (1-based), "
    "at most `limit` lines per call; `next_offset` says where to continue. Use this instead of "
    "cat/head/tail in the terminal.",
    {"path": {"type": "string", "description": "File path, absolute or relative to the "
              "working directory"},
     "offset": {"type": "integer", "default": 1, "minimum": 1,
                "description": "First line to return (1-based)"},
     "limit": {"type": "integer", "default": 500, "minimum": 1, "maximum": READ_LINE_LIMIT,
               "description": "How many lines to return"}},
    ["path"])

WRITE_FILE = _schema(
    "write_file",
    "Create or overwrite a file with exactly `content`; missing parent directories are "
    "created. To change part of an existing file, use patch instead.",
    {"path": {"type": "string", "description": "File path, absolute or relative to the "
              "working directory"},
     "content": {"type": "string", "description": "The complete new file content"}},
    ["path", "content"])

PATCH = _schema(
    "patch",
    "Edit a file by replacing an exact piece of text. `old_string` must occur exactly once "
    "(include a few surrounding lines to make it unique), or set `replace_all` to change every "
    "occurrence. Whitespace and indentation must match the file; read_file shows it.",
    {"path": {"type": "string", "description": "File to edit"},
     "old_string": {"type": "string", "description": "The exact text to replace"},
     "new_string": {"type": "string", "description": "The replacement text (may be empty)"},
     "replace_all": {"type": "boolean", "default": False,
                     "description": "Replace every occurrence instead of exactly one"}},
    ["path", "old_string", "new_string"])

SEARCH_FILES = _schema(
    "search_files",
    "Search a directory tree. target='content' (default) finds lines matching the regular "
    "expression `pattern`; target='files' finds files whose name matches the glob `pattern` "
    "(e.g. '*.py'). Files ignored by .gitignore and the .git folder are skipped. Results are "
    "sorted by path and paged with `offset`/`limit`.",
    {"pattern": {"type": "string", "description": "Regular expression (content) or glob (files)"},
     "target": {"type": "string", "enum": ["content", "files"], "default": "content"},
     "path": {"type": "string", "default": ".", "description": "Directory (or file) to search"},
     "file_glob": {"type": "string", "description": "Only search files whose name matches "
                   "this glob, e.g. '*.ts'"},
     "limit": {"type": "integer", "default": 50, "minimum": 1},
     "offset": {"type": "integer", "default": 0, "minimum": 0},
     "output_mode": {"type": "string", "enum": ["content", "files_only", "count"],
                     "default": "content",
                     "description": "content: matching lines; files_only: paths; count: "
                     "matches per file"},
     "context": {"type": "integer", "default": 0, "minimum": 0,
                 "description": "Lines of context before and after each match"}},
    ["pattern"])

TERMINAL = _schema(
    "terminal",
    "Run a shell command (bash) in the working directory and return its combined output and "
    "exit code. Commands run non-interactively: pass flags such as -y and avoid editors or "
    "pagers. Long output is shortened in the middle. Dangerous commands (recursive deletes, "
    "disk formatting, piping downloads into a shell, restarting services, ...) need the "
    "user's approval and may be denied. Commands run in a sandbox: only the workspace and a "
    "private /tmp are writable, hermes's home and credentials are hidden; a result's "
    "`sandbox` note says when the sandbox stopped something. Prefer read_file, patch and "
    "search_files for files.",
    {"command": {"type": "string", "description": "The command line to run"},
     "timeout": {"type": "integer", "minimum": 1,
                 "description": "Seconds before the command is killed (default from config)"},
     "workdir": {"type": "string", "description": "Directory to run in, absolute or relative "
                 "to the working directory"},
     "unconfined": {"type": "boolean", "description": "Run outside the sandbox. Only when a "
                    "sandbox note showed it is needed; the user must approve this command"},
     "background": {"type": "boolean", "description": "Start the command in the background "
                    "(servers, watchers, long builds) and return its session_id at once; "
                    "watch it with the process tool. It ends with this session"},
     "keep": {"type": "boolean", "description": "With background: keep it running after this "
              "session and hermes end (only when the user asks for that)"},
     "session": {"type": "string", "description": "Run in the persistent shell of this name "
                 "(e.g. 'main'): cd, variables and an activated virtualenv carry over to the "
                 "next calls with the same session"}},
    ["command"])

PROCESS = _schema(
    "process",
    "Manage the background processes terminal started with background: true. list: all of "
    "this session; poll: status and the output since the last poll; log: a window of the "
    "whole output by lines (offset, limit; default the last 200); wait: block until it ends "
    "or `timeout` seconds pass; kill: stop it and its children; write: send `data` to its "
    "stdin; submit: send `data` and a newline; close: close its stdin. Long output comes "
    "back as its tail, with how much was skipped.",
    {"action": {"type": "string", "enum": ["list", "poll", "log", "wait", "kill", "write",
                                           "submit", "close"]},
     "session_id": {"type": "string", "description": "The process's id (proc_...) from "
                    "terminal or list; not needed for list"},
     "data": {"type": "string", "description": "Text for write and submit"},
     "timeout": {"type": "integer", "minimum": 0, "maximum": 600,
                 "description": "wait: seconds to wait at most (default 30)"},
     "offset": {"type": "integer", "minimum": 0,
                "description": "log: first line to return (0-based)"},
     "limit": {"type": "integer", "minimum": 1, "maximum": 2000,
               "description": "log: how many lines to return (default 200)"}},
    ["action"])

TODO = _schema(
    "todo",
    "Keep a task list for multi-step work in this session. Call with no arguments to read it. "
    "Pass `todos` to replace the whole list, or with merge=true to update or add items by id. "
    "Keep exactly one item in_progress while working and mark items completed as you finish.",
    {"todos": {"type": "array", "description": "Items to write",
               "items": {"type": "object",
                         "properties": {"id": {"type": "string"},
                                        "content": {"type": "string"},
                                        "status": {"type": "string", "enum": list(TODO_STATUSES)}},
                         "required": ["id", "content", "status"]}},
     "merge": {"type": "boolean", "default": False,
               "description": "Update items by id instead of replacing the list"}},
    [])

CLARIFY = _schema(
    "clarify",
    "Ask the user a question when the request is ambiguous or a decision is theirs to make, "
    f"optionally offering up to {CLARIFY_MAX_CHOICES} choices. Do not use it for confirmation "
    "of routine steps.",
    {"question": {"type": "string", "description": "The question to ask"},
     "choices": {"type": "array", "items": {"type": "string"}, "maxItems": CLARIFY_MAX_CHOICES,
                 "description": "Suggested answers; the user may still answer freely"}},
    ["question"])
