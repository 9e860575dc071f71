"""What `hermes plugins install | update | remove` refuse, because a source string or a plugin's
files come from a stranger.

- git and pip arguments that would be read as options (a leading ``-``), git's
  ``transport::address`` helpers (``ext::`` runs a command), and pip requirements or
  ``Requires-Dist`` lines that are not PEP 508 requirements (``--index-url …``, ``-e …``);
- plugin, distribution and environment variable names that are not plain names (a path such as
  ``../../.ssh`` would later be a folder hermes writes or deletes; a name ending in a newline
  injects a line into .env);
- control characters in what the consent screen shows (an escape sequence can erase the lines
  listing tools and hooks before the user is asked);
- symbolic links that lead out of the source being installed (to ~/.ssh, to
  $HERMES_HOME/.env), to a device or a pipe, into a loop, or that multiply the copy (two links
  per folder, twenty folders deep, copy a million folders): copying follows links;
- lock entries whose folders are not where hermes puts plugins (or are symbolic links), or
  whose distribution names are not plain names, so a tampered plugins.lock cannot make remove,
  update or rollback move or delete another folder or pass pip an option (lockfile.read_lock
  asks these once per entry and marks the entries that fail).

Each refusal says what to do instead. Nothing is rewritten silently.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

# fullmatch: '$' would also accept a trailing newline
PLUGIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
DIST_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?", re.ASCII)
DIST_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+!_-]*", re.ASCII)
_HELPER = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")  # git's <transport>::<address>
_SCHEMES = ("https", "http", "ssh", "git", "file", "git+ssh", "ssh+git")
_BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f")
SKIPPED = frozenset({".git", "__pycache__", ".pytest_cache"})  # as install.COPY_IGNORE
MAX_ENTRIES = 100_000


def refuse(message: str) -> click.ClickException:
    return click.ClickException(f"refused: {message}")


def _bad_chars(text: str, allow: str = "") -> list[str]:
    import unicodedata  # only when a text is checked: `plugins list` imports this module

    return sorted({repr(c)[1:-1] for c in text if c not in allow
                   and (unicodedata.category(c) == "Cc" or c in _BIDI)})


PLUGIN_NAME_RULE = ("letters, digits, '-', '_' and '.', starting with a letter or digit; "
                    "never a path")


def check_plugin_name(name: str, where: str,
                      fix: str = "ask the plugin's author to rename it") -> None:
    if not isinstance(name, str) or not PLUGIN_NAME.fullmatch(name):
        raise refuse(f"{where} names the plugin {name!r}, which is not a plugin name "
                     f"({PLUGIN_NAME_RULE}); {fix}")


def check_git(url: str, ref: str) -> None:
    """A clone URL and ref that git reads as a location and a revision, never as options."""
    if url.startswith("-") or _bad_chars(url):
        raise refuse(f"{url!r} is not a git URL (it starts with '-' or holds control "
                     "characters, which git would read as an option); give an https://, ssh://, "
                     "git@host: URL, owner/repo or a local folder")
    if _HELPER.match(url):
        raise refuse(f"{url!r} uses git's transport::address form, which runs a helper program "
                     "(ext:: runs any command); give an https://, ssh://, git@host: URL or a "
                     "local folder")
    scheme = url.partition("://")[0].lower() if "://" in url else ""
    if scheme and scheme not in _SCHEMES:
        raise refuse(f"{url!r}: git URLs here use {', '.join(_SCHEMES)}; not {scheme}://")
    if ref and (ref.startswith("-") or _bad_chars(ref) or any(c.isspace() for c in ref)):
        raise refuse(f"{ref!r} is not a branch, tag or commit (it starts with '-' or holds "
                     "spaces or control characters); write the ref after '@' as it is named "
                     "in the repository, e.g. @v1.2 or @main")


def check_requirement(text: str, where: str) -> None:
    """``text`` is a PEP 508 requirement (name, extras, versions, markers), not a pip option."""
    from packaging.requirements import InvalidRequirement, Requirement

    problem = "it starts with '-', which pip reads as an option" if text.lstrip().startswith("-") \
        else ""
    if not problem:
        try:
            Requirement(text)
        except InvalidRequirement as exc:
            problem = str(exc).splitlines()[0]
    if problem or _bad_chars(text):
        raise refuse(f"{where} {text!r} is not a pip requirement "
                     f"({problem or 'control characters'}); write a requirement such as 'name', "
                     "'name[extra]>=1.2' or 'name==1.2', or the path of a wheel, sdist or folder")


def check_distribution(dist: str, version: str, requires: Iterable[str], spec: str) -> None:
    """The wheel's metadata: hermes passes its name, version and Requires-Dist to pip."""
    if not DIST_NAME.fullmatch(dist or "") or not DIST_VERSION.fullmatch(version or ""):
        raise refuse(f"{spec}: the package calls itself {dist!r} version {version!r}, which is "
                     "not a distribution name and version pip accepts; do not install it")
    for requirement in requires:
        check_requirement(requirement, f"{spec}: its Requires-Dist")


#: variables that change what programs load or run, or where they fetch code from
_RUNS_PROGRAMS = frozenset({
    "PATH", "HOME", "SHELL", "ENV", "BASH_ENV", "PROMPT_COMMAND", "IFS", "CDPATH",
    "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONUSERBASE",
    "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB", "NODE_OPTIONS", "NODE_PATH",
    "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXEC_PATH",
    "GIT_ASKPASS", "SSH_ASKPASS", "EDITOR", "VISUAL", "PAGER", "GIT_PAGER", "SSL_CERT_FILE",
    "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "HERMES_HOME"})
_RUNS_PROGRAMS_PREFIXES = ("LD_", "DYLD_", "PIP_", "GIT_CONFIG", "HERMES_")


def runs_programs(name: str) -> bool:
    """Whether the variable ``name`` changes how programs (hermes included) load or run."""
    upper = name.upper()
    return upper in _RUNS_PROGRAMS or upper.startswith(_RUNS_PROGRAMS_PREFIXES)


def check_manifest_text(manifest: Any, where: str) -> None:
    """No control characters (escape sequences) in what the consent screen shows; newlines
    and tabs only in descriptions and help texts."""
    def check(value: Any, field: str, allow: str = "") -> None:
        bad = _bad_chars(value, allow) if isinstance(value, str) else []
        if bad:
            raise refuse(f"{where}: {field} holds control characters ({', '.join(bad)}), which "
                         "can hide or fake the lines shown before you are asked; ask the "
                         "plugin's author to remove them")

    for field in ("name", "version", "author", "kind", "license", "homepage", "label",
                  "requires_hermes"):
        check(getattr(manifest, field, ""), field)
    check(manifest.description, "description", "\n\t")
    for field in ("provides_tools", "provides_hooks", "tags", "python_dependencies"):
        for item in getattr(manifest, field, ()):
            check(item, field)
    for field in ("requires_env", "optional_env"):
        for req in getattr(manifest, field, ()):
            if not ENV_NAME.fullmatch(req.name):
                raise refuse(f"{where}: {field} names {req.name!r}, which is not an environment "
                             "variable name (letters, digits and '_'); ask the plugin's author "
                             "to fix plugin.yaml")
            if runs_programs(req.name):
                raise refuse(f"{where}: {field} asks for {req.name}, which changes how programs "
                             "run (what you type would be saved to .env and loaded into hermes "
                             "and the programs it starts); a plugin's own settings have names "
                             "of their own. Ask the plugin's author to rename it")
            check(req.description, f"{field} {req.name} description", "\n\t")
            check(req.url, f"{field} {req.name} url")
    for name, cli in (getattr(manifest, "cli_commands", None) or {}).items():
        check(name, "cli_commands")
        check(cli.help, f"cli_commands {name} help", "\n\t")


def check_links(directory: Path, root: Path, spec: str) -> None:
    """Every entry of ``directory`` that copying would reach (it follows links) is a regular
    file or folder inside ``root``; no folder contains itself; at most MAX_ENTRIES entries
    (links to folders that link to folders multiply what a small repository copies)."""
    root = root.resolve()
    start = directory.resolve()
    pending = [(directory, start, frozenset({start}))]  # (path, its real path, real ancestors)
    seen = 0
    while pending:
        folder, real_folder, ancestors = pending.pop()
        with os.scandir(folder) as entries:
            listed = [e for e in entries if e.name not in SKIPPED and not e.name.endswith(".pyc")]
        seen += len(listed)
        if seen > MAX_ENTRIES:
            raise refuse(f"{spec}: the plugin folder holds more than {MAX_ENTRIES} files and "
                         "folders (counting what its links lead to); a plugin this large is "
                         "better installed with pip")
        for entry in listed:
            path = Path(entry.path)
            real = real_folder / entry.name
            if entry.is_symlink():
                real = real.resolve()  # its folder is resolved already: only the link is left
                if not real.is_relative_to(root):
                    shown = path.relative_to(directory)
                    raise refuse(f"{spec}: {shown} is a symbolic link to {os.readlink(path)}, "
                                 f"outside the source ({root}); installing copies what links "
                                 "point to. Ask the author to replace the link with the file")
            try:
                mode = entry.stat().st_mode  # follows a link
            except OSError:
                raise refuse(f"{spec}: {path.relative_to(directory)} is a broken symbolic link; "
                             "ask the author to remove it") from None
            if stat.S_ISDIR(mode):
                if real in ancestors:
                    raise refuse(f"{spec}: {path.relative_to(directory)} links back to a folder "
                                 "containing it (a loop copying would never finish); ask the "
                                 "author to remove it")
                pending.append((path, real, ancestors | {real}))
            elif not stat.S_ISREG(mode):
                raise refuse(f"{spec}: {path.relative_to(directory)} is not a regular file (a "
                             "device, pipe or socket); a plugin folder holds files and folders "
                             "only")


def dist_problem(dist: Any, version: Any = "") -> str:
    """Why a distribution name and version from plugins.lock or installed metadata may not
    reach a pip command ("" when they may): ``--index-url=…`` or ``-rFILE`` are pip options."""
    if isinstance(dist, str) and DIST_NAME.fullmatch(dist) and isinstance(version, str) and (
            not version or DIST_VERSION.fullmatch(version)):
        return ""
    return f"{dist!r} {version!r} is not a distribution name and version pip accepts"


def locked_folder_problem(value: Any, parent: Path) -> str:
    """Why a folder from plugins.lock may not be moved or deleted ("" when it may): it must be
    an entry of ``parent`` (where hermes put it) that is not a symbolic link."""
    folder = Path(value) if isinstance(value, str) and value else None
    if folder is None or not folder.is_absolute() or folder.name in ("", ".", "..") \
            or folder.parent.resolve() != parent.resolve():
        return (f"records the folder {value!r}, which is not a folder in {parent.resolve()} "
                "(hermes only moves or deletes the folders it put there)")
    if folder.is_symlink():
        return (f"records the folder {folder}, which is a symbolic link to "
                f"{os.readlink(folder)} (hermes puts real folders there, and does not move or "
                "delete what a link leads to)")
    return ""
