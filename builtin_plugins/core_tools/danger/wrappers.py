"""Commands that run another command: ``sudo``, ``env``, ``xargs``, ``timeout``, ``nice``, ...

:func:`unwrap` returns what runs after the wrapper's own options, or a script text for the
wrappers that take one string (``su -c``, ``watch``, ``flock -c``, ``env -S``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .site import OPAQUE


@dataclass
class Unwrapped:
    argv: list[str]  # the command that runs (empty: none)
    script: str | None = None  # a shell string to run instead
    elevated: bool = False  # runs as another user (sudo, doas, su)
    login_shell: bool = False  # sudo -i / sudo -s / su without a command
    via_xargs: bool = False
    replace: str | None = None  # xargs -I: the string replaced by each input item
    cwd: str | None = None  # env -C DIR, sudo -D DIR: where the command runs
    assigns: list[str] = field(default_factory=list)  # env NAME=VALUE: the command's variables
    reads: list[str] = field(default_factory=list)  # xargs -a FILE: files read into the command


def _skip(args: list[str], valued: frozenset[str], long_valued: frozenset[str] = frozenset(),
          numeric_first: bool = False) -> int:
    """Index of the first argument that is not one of the wrapper's options."""
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return i + 1
        if not a.startswith("-") or a == "-":
            return i
        if a.startswith("--"):
            if "=" not in a and a in long_valued:
                i += 1
        elif a in valued or ("-" + a[-1] in valued and not any(
                "-" + c in valued for c in a[1:-1])):  # -u root, or -Eu root (bundled)
            i += 1
        elif numeric_first and a[1:].isdigit():
            pass
        i += 1
    return i


_SUDO_VALUED = frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "-R"})
_SUDO_LONG = frozenset({"--user", "--group", "--close-from", "--chdir", "--host", "--prompt",
                        "--role", "--type", "--other-user", "--command-timeout", "--chroot"})
_TIME_VALUED = frozenset({"-f", "-o", "--format", "--output"})
_NICE_VALUED = frozenset({"-n", "--adjustment"})
_IONICE_VALUED = frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"})
_TIMEOUT_VALUED = frozenset({"-s", "-k"})
_TIMEOUT_LONG = frozenset({"--signal", "--kill-after"})
_STDBUF_VALUED = frozenset({"-i", "-o", "-e"})
_XARGS_VALUED = frozenset({"-I", "-L", "-n", "-P", "-d", "-E", "-s", "-a"})
_XARGS_LONG = frozenset({"--arg-file", "--delimiter", "--max-args", "--max-procs",
                         "--max-lines", "--max-chars", "--replace", "--eof"})
_ENV_VALUED = frozenset({"-u", "-C", "--unset", "--chdir"})
_SIMPLE = frozenset({"nohup", "setsid", "builtin", "unbuffer", "caffeinate", "catchsegv",
                     "proxychains", "proxychains4", "torsocks", "fakeroot", "eatmydata"})

_PARALLEL_VALUED = frozenset({"-j", "-P", "-N", "-n", "-L", "-S", "-a", "-d", "-E", "-I",
                              "--jobs", "--sshlogin", "--arg-file", "--delay", "--timeout",
                              "--joblog", "--results", "--colsep", "--tagstring"})
_SYSTEMD_RUN_VALUED = frozenset({"-p", "-u", "-M", "-H", "-E", "--property", "--unit",
                                 "--machine", "--host", "--setenv", "--uid", "--gid", "--nice",
                                 "--slice", "--description", "--working-directory",
                                 "--on-active", "--on-calendar"})
_NPX_VALUED = frozenset({"-p", "--package", "-c", "--call"})
#: wrappers that run the command after their options: (valued options, valued long options)
_RUNNERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "unshare": (frozenset({"-S", "-G", "-R", "-w"}),
                frozenset({"--setuid", "--setgid", "--root", "--wd", "--map-user",
                           "--map-group"})),
    "nsenter": (frozenset({"-t", "-S", "-G"}), frozenset({"--target", "--setuid", "--setgid"})),
    "firejail": (frozenset(), frozenset()), "prlimit": (frozenset({"-p"}), frozenset({"--pid"})),
    "cgexec": (frozenset({"-g"}), frozenset()), "numactl": (frozenset(), frozenset()),
    "trickle": (frozenset({"-d", "-u", "-w", "-t", "-l", "-n"}), frozenset()),
    "faketime": (frozenset({"-f"}), frozenset()), "catchsegv": (frozenset(), frozenset()),
    "valgrind": (frozenset(), frozenset()),
    "dbus-run-session": (frozenset(), frozenset()), "xvfb-run": (frozenset({"-n", "-s", "-f"}),
                                                                  frozenset()),
}


#: project and tool runners, ``NAME [options] run [options] COMMAND ...`` (``uv run``,
#: ``uv tool run``/``uvx``, ``pipx run``, ``poetry run``, ``conda run -n ENV``, ...): their
#: valued options, before and after ``run``
_UV_VALUED = frozenset({
    "--directory", "--project", "--cache-dir", "--config-file", "--color", "-p", "--python",
    "--with", "--with-editable", "--with-requirements", "--from", "--package", "--extra",
    "--group", "--only-group", "--no-group", "--env-file", "--index", "--default-index", "-i",
    "--index-url", "--extra-index-url", "-f", "--find-links", "--index-strategy",
    "--keyring-provider", "--resolution", "--prerelease", "--exclude-newer", "--link-mode",
    "-C", "--config-setting", "-P", "--upgrade-package", "--reinstall-package",
    "--refresh-package", "--python-platform", "--allow-insecure-host", "--no-binary-package",
    "--no-build-package"})
_CONDA_VALUED = frozenset({"-n", "--name", "-p", "--prefix", "--cwd"})
_PROJECT_RUNNERS: dict[str, frozenset[str]] = {
    "uv": _UV_VALUED, "poetry": frozenset({"-C", "--directory", "-P", "--project"}),
    "pdm": frozenset({"-p", "--project", "--venv"}), "pipenv": frozenset({"--python"}),
    "hatch": frozenset({"-e", "--env", "--data-dir", "--cache-dir", "--config"}),
    "rye": frozenset({"--pyproject"}), "conda": _CONDA_VALUED, "mamba": _CONDA_VALUED,
    "micromamba": _CONDA_VALUED, "pixi": frozenset({"-e", "--environment", "--manifest-path"}),
    "pipx": frozenset({"--spec", "--python", "-i", "--index-url", "--pip-args"}),
    # 1Password's `op run [--env-file F] -- COMMAND`: the command runs with secrets in its env
    "op": frozenset({"--account", "--config", "--encoding", "--format", "--session",
                     "--env-file", "--environment"})}
_VERSION_PIN = re.compile(r"[@=<>!~\[].*$")


def _project_run(name: str, args: list[str]) -> Unwrapped | None:
    """What ``uv run``, ``uvx``, ``pipx run``, ``poetry run``, ... run; None for their other
    sub-commands. A tool named with a version (``uvx ruff@0.5``) is the tool; ``uv run -m M``
    runs ``python -m M``, and ``uv run x.py`` runs python on the script."""
    valued = _PROJECT_RUNNERS[name]
    i = _skip(args, valued, valued)
    words, tool = args[i:], name == "pipx"
    if name == "uv" and words[:2] == ["tool", "run"]:
        words, tool = words[1:], True
    if words[:1] != ["run"]:
        return None
    j = _skip(words[1:], valued, valued)
    options, command = words[1:j + 1], words[j + 1:]
    if name == "uv" and ("-m" in options or "--module" in options):
        return Unwrapped(["python", "-m", *command])
    if tool and command:
        command = [_VERSION_PIN.sub("", command[0]), *command[1:]]
    elif name == "uv" and command[:1] and command[0].endswith(".py"):
        command = ["python", *command]
    return Unwrapped(command)


def _option_value(options: list[str], names: tuple[str, ...]) -> str | None:
    for k, a in enumerate(options):
        if a in names and k + 1 < len(options):
            return options[k + 1]
        if "=" in a and a.split("=", 1)[0] in names:
            return a.split("=", 1)[1]
    return None


def unwrap(name: str, args: list[str]) -> Unwrapped | None:
    """What the wrapper ``name`` runs, or None when ``name`` is not a wrapper."""
    if name in _SIMPLE:
        return Unwrapped(args)
    if name in ("sudo", "doas", "pkexec", "run0"):
        i = _skip(args, _SUDO_VALUED, _SUDO_LONG)
        flags = "".join(a[1:] for a in args[:i] if a.startswith("-") and not a.startswith("--"))
        login = ("i" in flags or "s" in flags or "--login" in args[:i] or "--shell" in args[:i])
        if name == "sudo" and any(f in flags for f in "lvkKe"):
            return Unwrapped([])  # listing, validating, or sudoedit (judged as sudoedit)
        return Unwrapped(args[i:], elevated=True, login_shell=login and i >= len(args),
                         cwd=_option_value(args[:i], ("-D", "--chdir")))
    if name in ("su", "runuser", "sg"):
        for j, a in enumerate(args):
            if a in ("-c", "--command") and j + 1 < len(args):
                return Unwrapped([], script=args[j + 1], elevated=True)
            if a.startswith("--command="):
                return Unwrapped([], script=a.split("=", 1)[1], elevated=True)
        if name == "runuser" and "--" in args:
            return Unwrapped(args[args.index("--") + 1:], elevated=True)
        return Unwrapped([], elevated=True, login_shell=True)
    if name == "env":
        i = 0
        while i < len(args):
            a = args[i]
            if a in ("-S", "--split-string") and i + 1 < len(args):
                return Unwrapped([], script=" ".join(args[i + 1:]))
            if a.startswith("-S") and len(a) > 2:
                return Unwrapped([], script=" ".join([a[2:], *args[i + 1:]]))
            if a in _ENV_VALUED:
                i += 2
            elif a.startswith("-") or "=" in a:  # env takes any NAME=VALUE, even BASH_FUNC_f%%
                i += 1
            else:
                break
        return Unwrapped(args[i:], cwd=_option_value(args[:i], ("-C", "--chdir")),
                         assigns=[a for a in args[:i] if "=" in a and not a.startswith("-")])
    if name == "exec":
        return Unwrapped(args[_skip(args, frozenset({"-a"})):])
    if name == "command":
        if any(a in ("-v", "-V") for a in args[:1]):
            return Unwrapped([])
        return Unwrapped(args[_skip(args, frozenset()):])
    if name == "time":
        return Unwrapped(args[_skip(args, _TIME_VALUED, _TIME_VALUED):])
    if name == "nice":
        return Unwrapped(args[_skip(args, _NICE_VALUED, _NICE_VALUED, numeric_first=True):])
    if name == "ionice":
        return Unwrapped(args[_skip(args, _IONICE_VALUED, _IONICE_VALUED):])
    if name in ("timeout", "gtimeout"):
        i = _skip(args, _TIMEOUT_VALUED, _TIMEOUT_LONG)
        return Unwrapped(args[i + 1:])
    if name == "stdbuf":
        return Unwrapped(args[_skip(args, _STDBUF_VALUED):])
    if name in ("chrt", "taskset"):  # chrt PRIO CMD, taskset [-c] MASK CMD (-c is a flag)
        return Unwrapped(args[_skip(args, frozenset()) + 1:])
    if name in _RUNNERS:
        valued, long_valued = _RUNNERS[name]
        return Unwrapped(args[_skip(args, valued, long_valued):],
                         elevated=name in ("unshare", "nsenter"))
    if name == "chroot":
        i = _skip(args, frozenset(), frozenset({"--userspec", "--groups"}))
        return Unwrapped(args[i + 1:], elevated=True)
    if name == "flock":
        for j, a in enumerate(args):
            if a in ("-c", "--command") and j + 1 < len(args):
                return Unwrapped([], script=args[j + 1])
        i = _skip(args, frozenset({"-w", "-E"}), frozenset({"--timeout", "--conflict-exit-code"}))
        return Unwrapped(args[i + 1:])
    if name == "watch":
        i = _skip(args, frozenset({"-n", "-d", "-q"}), frozenset({"--interval"}))
        return Unwrapped([], script=" ".join(args[i:]))
    if name == "script":
        for j, a in enumerate(args):
            if (a == "--command" or a.startswith("-") and not a.startswith("--")
                    and a.endswith("c")) and j + 1 < len(args):
                return Unwrapped([], script=args[j + 1])
        return Unwrapped([])
    if name == "parallel":
        i = _skip(args, _PARALLEL_VALUED, _PARALLEL_VALUED)
        end = next((k for k in range(i, len(args)) if args[k] in (":::", "::::", ":::+")),
                   len(args))
        return Unwrapped(args[i:end] + args[end + 1:end + 2], via_xargs=end == len(args))
    if name == "systemd-run":
        return Unwrapped(args[_skip(args, _SYSTEMD_RUN_VALUED, _SYSTEMD_RUN_VALUED):],
                         elevated=True)
    if name in ("npx", "pnpx", "bunx"):
        for j, a in enumerate(args):
            if a in ("-c", "--call") and j + 1 < len(args):
                return Unwrapped([], script=args[j + 1])
        return Unwrapped(args[_skip(args, _NPX_VALUED, _NPX_VALUED):])
    if name in ("strace", "ltrace"):
        return Unwrapped(args[_skip(args, frozenset({"-e", "-o", "-p", "-s", "-u", "-E"})):])
    if name in _PROJECT_RUNNERS:
        return _project_run(name, args)
    if name == "uvx":
        return _project_run("uv", ["tool", "run", *args])
    if name == "xargs":
        i = _skip(args, _XARGS_VALUED, _XARGS_LONG)
        replace = next((args[k + 1] for k in range(i - 1) if args[k] == "-I"), None)
        replace = replace or next((a[2:] for a in args[:i] if a.startswith("-I") and len(a) > 2),
                                  None)
        arg_file = _option_value(args[:i], ("-a", "--arg-file"))
        return Unwrapped(args[i:] or ["echo"], via_xargs=True, replace=replace,
                         reads=[arg_file] if arg_file else [])
    return None


#: options whose value is a command line the tool runs through a shell
_CODE_OPTIONS: dict[str, frozenset[str]] = {
    "tar": frozenset({"--to-command", "--use-compress-program", "-I", "--info-script", "-F",
                      "--new-volume-script", "--checkpoint-action"}),
    "rsync": frozenset({"-e", "--rsh", "--rsync-path"}),
    "zip": frozenset({"-TT", "--unzip-command"}),
    "scp": frozenset({"-S"}), "sftp": frozenset({"-S"}), "man": frozenset({"-P", "--pager"}),
    # git sub-commands' options naming a program or command line to run
    "git": frozenset({"--upload-pack", "--receive-pack", "--exec",
                      "--tree-filter", "--index-filter", "--msg-filter", "--env-filter",
                      "--commit-filter", "--parent-filter", "--tag-name-filter"}),
}
_GIT_SHORT = {"clone": frozenset({"-u"}), "fetch": frozenset({"-u"}),
              "ls-remote": frozenset({"-u"}), "archive": frozenset({"-u"}),
              "rebase": frozenset({"-x"})}
#: git sub-commands whose remaining words are a command that runs
_GIT_RUNS = {("submodule", "foreach"): "script", ("bisect", "run"): "argv"}
#: ``-o`` settings (ssh family) and ``-c`` settings (git) whose value is a command line
_SSH_CODE = re.compile(r"(?i)(?:ProxyCommand|LocalCommand|RemoteCommand|KnownHostsCommand)"
                       r"\s*=?\s*(.*)", re.S)
_GIT_CODE = re.compile(r"(?i)(?:core\.(?:sshCommand|pager|editor|fsmonitor|askPass)|"
                       r"sequence\.editor|diff\.external|alias\.[\w.-]+|credential\.helper|"
                       r"[\w.-]+\.(?:textconv|command|cmd|process|clean|smudge))=(.*)", re.S)


def option_code(name: str, args: list[str]) -> list[str]:
    """Command lines hidden in a tool's options (``tar --to-command``, ``rsync -e``,
    ``ssh -o ProxyCommand=``, ``git -c core.pager=``, ...)."""
    found: list[str] = []
    options = _CODE_OPTIONS.get(name, frozenset())
    if name == "git":  # clone -u PROG, rebase -x CMD
        sub = next((a for a in args if not a.startswith("-")), "")
        options = options | _GIT_SHORT.get(sub, frozenset())
    for k, a in enumerate(args):
        value = args[k + 1] if k + 1 < len(args) else ""
        key, eq, inline = a.partition("=")
        if a[:1] == "-" and a[1:2] != "-" and len(a) > 2 and a[:2] in options | {"-o", "-c"}:
            a, value = a[:2], a[2:]  # a value stuck to a short option: -oProxyCommand=..., -e'sh'
        if name in ("ssh", "scp", "sftp") and a == "-o" and (m := _SSH_CODE.match(value)):
            found.append(m.group(1))
        elif name == "git" and a == "-c" and (m := _GIT_CODE.match(value)):
            found.append(m.group(1).lstrip("!"))
        elif a in options:
            found.append(value)
        elif eq and key in options:
            found.append(inline)
    if name in _EDITORS:
        found += _editor_code(args)
    if name == "git":
        found += _git_config_code(args)
        words = [a for a in args if not a.startswith("-")]
        for (sub, verb), kind in _GIT_RUNS.items():
            if sub in words and verb in words[words.index(sub):]:
                rest = args[args.index(verb, args.index(sub)) + 1:]
                rest = [a for a in rest if a not in ("--recursive", "-q", "--quiet")]
                found.append(rest[0] if kind == "script" and rest else " ".join(rest))
    return [code.removeprefix("exec=") for code in found if code]


_EDITORS = frozenset({"vim", "vi", "nvim", "ex", "view", "gvim", "vimdiff", "rvim"})
#: editor commands that run something the text does not show
_EDITOR_OPAQUE = re.compile(r"\bsystem\s*\(|\bterm(?:inal)?\b|^\s*(?:py|pyt|python\d?|lua|perl|"
                            r"ruby|so|source)\b|\bexe(?:cute)?\b|\blibcall", re.I)


def _editor_code(args: list[str]) -> list[str]:
    """``vim -c '!cmd'``, ``vim +'r !cmd'``: shell commands in editor commands."""
    found: list[str] = []
    commands = [args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-c", "--cmd", "-S")]
    commands += [a[1:] for a in args if a.startswith("+") and len(a) > 1]
    for command in commands:
        text = command.lstrip(": ")
        if "!" in text:
            found.append(text.split("!", 1)[1])
        if _EDITOR_OPAQUE.search(text):
            found.append(OPAQUE)
    return found


_GIT_CONFIG_VALUED = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment",
                                "--value", "-t"})


def _git_config_code(args: list[str]) -> list[str]:
    """``git config alias.x '!rm -rf ~'``, ``git config core.pager CMD``: a command line git
    runs later; ``core.hooksPath`` (also ``-c``): hooks from a folder the command does not
    show."""
    settings = [args[k + 1] for k, a in enumerate(args[:-1]) if a == "-c"]
    i = 0
    while i < len(args) and args[i].startswith("-"):  # git's own options
        i += 2 if args[i] in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") else 1
    found: list[str] = []
    if args[i:i + 1] == ["config"]:
        rest = args[i + 1:]
        words = [a for k, a in enumerate(rest) if not a.startswith("-")
                 and not (k and rest[k - 1] in _GIT_CONFIG_VALUED)]
        if words[:1] == ["set"]:
            words = words[1:]
        if len(words) >= 2:
            setting = f"{words[0]}={words[1]}"
            settings.append(setting)
            if m := _GIT_CODE.match(setting):
                found.append(m.group(1).lstrip("!"))
    found += [OPAQUE for s in settings if s.lower().startswith("core.hookspath=")]
    return found
