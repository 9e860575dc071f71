"""Which results of the file and command tools are untrusted data: text read from a project
the user has not trusted (``projects.trusted``, docs/projects.md). The file a ``read_file``
opened (symbolic links followed), every file a ``search_files`` result names, and the output
of a command run (on this machine) in such a folder come back as
:func:`~hermes_agent.api.tools.untrusted_result`, their source naming the file or folder
(``file:src/app.py (untrusted project)``): the agent fences them and the turn is tainted
(docs/security.md). A result that is an error names no file's
contents and stays as it is, as does a command that was not run."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent import ProjectTrust
from hermes_agent.api import ToolCallContext
from hermes_agent.api.tools import untrusted_result
from hermes_agent.kits.tool_results import is_error_result

if TYPE_CHECKING:
    from hermes_agent import Kernel

#: the tools whose results are judged here
JUDGED = frozenset({"read_file", "search_files", "terminal", "process"})


def mark(kernel: "Kernel", name: str, args: dict[str, Any], ctx: ToolCallContext,
         result: str) -> str:
    """``result``, marked untrusted when it holds text from an untrusted project."""
    if name not in JUDGED or is_error_result(result) or not isinstance(result, str) \
            or _blocked(result):
        return result
    source = _source(ProjectTrust(kernel.config, kernel.env), kernel, name, args, ctx, result)
    return untrusted_result(result, f"{source} (untrusted project)") if source else result


def _source(trust: ProjectTrust, kernel: "Kernel", name: str, args: dict[str, Any],
            ctx: ToolCallContext, result: str) -> str | None:
    if name == "read_file":
        path = Path(os.path.realpath(ctx.resolve(str(args.get("path") or "."))))
        folder = trust.untrusted_project(path)
        return f"file:{_shown(path, folder)}" if folder is not None else None
    if name == "search_files":
        folder = _searched(trust, result)
        return f"search_files:{folder}" if folder is not None else None
    if not _runs_here(kernel):
        return None
    workdir = args.get("workdir") if name == "terminal" else None
    where = ctx.resolve(workdir) if isinstance(workdir, str) and workdir.strip() else ctx.cwd
    folder = trust.untrusted_project(where)  # what commands print in their folder
    return f"{name}:{folder}" if folder is not None else None


def _shown(path: Path, folder: Path) -> str:
    try:
        return str(path.relative_to(folder))
    except ValueError:
        return str(path)


def _searched(trust: ProjectTrust, result: str) -> Path | None:
    """The first untrusted project among the searched folder and the files found in it."""
    try:
        body = json.loads(result)
    except ValueError:
        return None
    if not isinstance(body, dict) or not isinstance(body.get("root"), str):
        return None
    root = Path(body["root"])
    folder = trust.untrusted_project(root)
    if folder is not None:
        return folder
    found = [item if isinstance(item, str) else item.get("path")
             for key in ("matches", "files", "counts") for item in body.get(key) or []
             if isinstance(item, (str, dict))]
    base = root if root.is_dir() else root.parent
    for relative in dict.fromkeys(p for p in found if isinstance(p, str)):
        folder = trust.untrusted_project(base / relative)
        if folder is not None:
            return folder
    return None


def _blocked(result: str) -> bool:
    """A command that was not run (denied, refused) printed nothing."""
    if not (result.startswith("{") and '"blocked"' in result):
        return False
    try:
        body = json.loads(result)
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("status") == "blocked"


def _runs_here(kernel: "Kernel") -> bool:
    """Whether commands run on this machine (a remote backend's folders are not projects
    here)."""
    from .backends import backend_name

    try:
        return backend_name(kernel) == "local"
    except RuntimeError:
        return True
