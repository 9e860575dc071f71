"""Interpreter inline code (``python -c``, ``perl -e``, ``node -e``, ``ruby -e``, ``php -r``,
...): which options carry code, and what the code does."""

from __future__ import annotations

import re
from collections.abc import Callable

#: interpreter name (without version suffix) -> options whose value is inline code
CODE_OPTIONS: dict[str, tuple[str, ...]] = {
    "python": ("-c",), "pypy": ("-c",), "perl": ("-e", "-E"), "ruby": ("-e",),
    "node": ("-e", "--eval", "-p", "--print"), "nodejs": ("-e", "--eval", "-p", "--print"),
    "bun": ("-e", "--eval", "-p", "--print"), "deno": ("eval",), "php": ("-r",),
    "lua": ("-e",), "luajit": ("-e",), "Rscript": ("-e",), "osascript": ("-e",),
    "pwsh": ("-c", "-command", "-encodedcommand", "-ec"),
    "powershell": ("-c", "-command", "-encodedcommand", "-ec"),
    "tclsh": (), "awk": (), "gawk": (), "mawk": (), "nawk": ()}
_VERSIONED = re.compile(r"(python|pypy|perl|ruby|node|php|lua)[\d.]*(?:-\w+)?$")
#: IPython runs Python code (``ipython -c CODE``) with shell escapes of its own
_IPYTHON = re.compile(r"ipython[\d.]*$")
#: an IPython line run by the shell: ``!cmd``, ``x = !cmd``, ``%sx cmd``, ``%system cmd``
_IPYTHON_SHELL_LINE = re.compile(r"^\s*(?:\w+\s*=\s*)?(?:!+|%(?:sx|system)\s)(.*)$", re.M)
#: an IPython cell whose body the shell runs (``%%bash``, ``%%sh``, ``%%script sh``)
_IPYTHON_SHELL_CELL = re.compile(r"^\s*%%(?:bash|sh|zsh|script)\b[^\n]*\n(.*)", re.S | re.M)

_DELETE = re.compile(
    r"rmtree|remove_tree|rmSync|rmdirSync|unlinkSync|\bunlink\b|\brmdir\b|os\.remove|removedirs|"
    r"File\.delete|Dir\.delete|FileUtils\.rm|fs\.rm\b|fs\.promises\.rm|promises\.rm\b|\.rm\(|"
    r"Remove-Item|\brm\s+-[a-zA-Z]*[rf]|\bdel\s+/|\bdelete_dir|\.delete\(\)")
_WRITE = re.compile(
    r"""open\s*\([^)]*['"][wax]\+?b?['"]|write_text|write_bytes|writeFileSync|appendFileSync|"""
    r"""writeFile|appendFile|File\.write|IO\.write|file_put_contents|\btruncate\b|"""
    r"""open\s*\(\s*\w+\s*,\s*['"]?\+?>|open\s*\(\s*['"]\+?>|Set-Content|Out-File|"""
    r"""\bcopyfile\b|shutil\.copy|shutil\.move|os\.rename|os\.replace|renameSync|copyFileSync|"""
    r"""symlink""")
_EXEC = re.compile(
    r"""os\.system|subprocess|os\.exec\w*|os\.popen|os\.spawn\w*|pty\.spawn|child_process|"""
    r"""execSync|spawnSync|\bexecFile|\bexec\s*[("'\s]|\bsystem\s*[("'\s]|\bpopen|proc_open|"""
    r"""shell_exec|passthru|`[^`]*`|IO\.popen|Kernel\.(?:exec|system|spawn)|%x[{(\[]|"""
    r"""\bspawn\s*\(|\beval\s*\(|Invoke-Expression|\biex\b|Start-Process|do shell script|"""
    r"""os\.execute|io\.popen|\bqx[{(/]""")
_PERMISSIONS = re.compile(r"\bl?chmod\b|\bl?chown\b|chmodSync|chownSync|\bsetuid\b|\bsetgid\b")
_SOCKET = re.compile(r"socket|TCPSocket|fsockopen|stream_socket_client|net\.connect|"
                     r"createConnection|IO::Socket|Net::|/inet/tcp|/dev/tcp/|new-object\s+"
                     r"system\.net\.sockets", re.I)
_SHELL_SPAWN = re.compile(r"pty\.spawn|\bdup2\b|/bin/(?:ba|z|da)?sh\b|[\"'](?:ba)?sh[\"']|"
                          r"cmd\.exe|\|&\s*getline|-i\s*<&")
_FORK = re.compile(r"\bfork\b")
_LOOP = re.compile(r"\bwhile\b|\bfor\b|\bloop\b|\buntil\b|\brepeat\b")
#: code that names the root, the home directory or a system directory as a whole
_PROTECTED = re.compile(
    r"""(['"])(?:/|~/?|/(?:bin|boot|etc|home|lib|lib64|opt|root|sbin|srv|usr|var)/?)\1|"""
    r"""expanduser\(\s*['"]~['"]\s*\)|Path\.home\(\)|environ\[\s*['"]HOME['"]\s*\]|"""
    r"""environ\.get\(\s*['"]HOME['"]|getenv\(\s*['"]HOME['"]|process\.env\.HOME|"""
    r"""ENV\[\s*['"]HOME['"]\s*\]|\$ENV\{\s*['"]?HOME['"]?\s*\}|homedir\(\)|Dir\.home|"""
    r"""\$env:(?:USERPROFILE|HOME)|\$HOME\b""")
#: Python importing hermes's own package (an import statement, ``__import__``,
#: ``importlib.import_module``, ``runpy.run_module``, ``pkgutil.resolve_name``): the code can
#: change hermes's settings, keys and stores as its CLI does (a plain mention is not an import)
_HERMES_IMPORT = re.compile(
    r"""\bfrom\s+hermes_agent\b|\bimport\s+(?:[\w.]+(?:\s+as\s+\w+)?\s*,\s*)*hermes_agent\b|"""
    r"""\b(?:__import__|import_module|run_module|resolve_name)\s*\(\s*(?:name\s*=\s*)?"""
    r"""['"]hermes_agent\b""")
_STRING = re.compile(r"""'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)\"""")
_LIST = re.compile(r"""\[\s*((?:(?:'[^']*'|"[^"]*")\s*,\s*)*(?:'[^']*'|"[^"]*"))\s*,?\s*\]""")


def interpreter(name: str) -> str | None:
    """The key of :data:`CODE_OPTIONS` for a command name (``python3.11`` -> ``python``)."""
    if name in CODE_OPTIONS:
        return name
    if _IPYTHON.match(name):
        return "python"
    m = _VERSIONED.match(name)
    return m.group(1) if m else None


#: per interpreter: (flags that may be bundled before it, the letter of the short option that
#: takes the code): ``python -Ic CODE``, ``perl -ne CODE``, ``php -rCODE``
_BUNDLED = {kind: re.compile(rf"-{f'[{flags}]*' if flags else ''}[{letters}](.*)", re.S)
            for kind, flags, letters in (
                ("python", "bBdEhiIOPqsSuvx", "c"), ("pypy", "bBdEhiIOPqsSuvx", "c"),
                ("perl", "acfnpsStTuUwWl", "eE"), ("ruby", "acdlnpsSvwWy", "e"),
                ("php", "", "r"))}


def code_argument(kind: str, args: list[str]) -> tuple[str | None, bool]:
    """(inline code, reads code from stdin) for an interpreter's arguments."""
    options = CODE_OPTIONS.get(kind, ())
    if kind in ("awk", "gawk", "mawk", "nawk"):
        program = next((a for a in args if not a.startswith("-")), None)
        return program, False
    bundled = _BUNDLED.get(kind)
    i = 0
    while i < len(args):
        arg = args[i]
        following = args[i + 1] if i + 1 < len(args) else ""
        low = arg.lower() if kind in ("pwsh", "powershell") else arg
        name, eq, value = low.partition("=")
        if low in options or (kind == "deno" and arg == "eval"):
            return following, False
        if eq and name in options and name.startswith("--"):
            return arg.split("=", 1)[1], False
        m = bundled.fullmatch(arg) if bundled else None
        if m:
            return (m.group(1) or following), False
        if kind in ("python", "pypy") and arg == "-m":
            return None, False
        if arg == "-":
            return None, True
        if not arg.startswith("-"):
            return None, False  # a script file
        if kind in ("python", "pypy") and arg in ("-W", "-X", "--check-hash-based-pycs"):
            i += 1
        i += 1
    return None, kind not in ("pwsh", "powershell", "osascript", "deno")


def ipython_shell(code: str) -> list[str]:
    """The shell commands IPython code runs through its own syntax (``!rm -rf ~``)."""
    cell = _IPYTHON_SHELL_CELL.search(code)
    return [m.group(1) for m in _IPYTHON_SHELL_LINE.finditer(code)] + (
        [cell.group(1)] if cell else [])


def string_literals(code: str) -> list[str]:
    """The contents of the quoted strings in ``code``."""
    return [m.group(1) if m.group(1) is not None else m.group(2) for m in _STRING.finditer(code)]


def inspect_code(code: str, add: Callable[[str], None], shell: Callable[[str], None],
                 write: Callable[[str], None], delete: Callable[[str], None]) -> None:
    """Report what ``code`` does through ``add(key)``. String literals handed to a command
    runner are judged as shell commands through ``shell(text)``; when the code writes or
    deletes, its string literals are judged as paths through ``write`` and ``delete``."""
    deletes = bool(_DELETE.search(code))
    writes = bool(_WRITE.search(code))
    runs = bool(_EXEC.search(code))
    if _FORK.search(code) and _LOOP.search(code):
        add("fork_bomb")
    if _SOCKET.search(code) and (runs or _SHELL_SPAWN.search(code)):
        add("reverse_shell")
    if deletes or runs or writes or _PERMISSIONS.search(code):
        add("inline_code")
    if deletes and _PROTECTED.search(code):
        add("delete_root")
    if "hermes_agent" in code and _HERMES_IMPORT.search(code):
        add("hermes_state")
    if writes or deletes:
        for m in _STRING.finditer(code):
            literal = m.group(1) if m.group(1) is not None else m.group(2)
            if literal.startswith(("/", "~")) or "." in literal:
                (delete if deletes else write)(literal)
    if runs or deletes:
        for m in _STRING.finditer(code):
            shell(m.group(1) if m.group(1) is not None else m.group(2))
        for m in _LIST.finditer(code):
            shell(" ".join(s.group(1) if s.group(1) is not None else s.group(2)
                           for s in _STRING.finditer(m.group(1))))
