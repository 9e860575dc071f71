"""Rules for git, services, processes, accounts, cron, firewalls and the network."""

from __future__ import annotations

import re
from collections.abc import Callable

from .rules_files import short_flags, split_options
from .rules_git import git
from .rules_network import NETWORK_RULES, stops_network
from .rules_process import ps, ps_shows_environment
from .rules_secrets import prints_secret
from .site import HERMES_PID, SECRET, Site, base_name

_SYSTEMCTL_VERBS = frozenset({"restart", "stop", "disable", "mask", "kill", "poweroff",
                              "reboot", "halt", "isolate", "try-restart", "reload-or-restart"})


def systemctl(site: Site, args: list[str]) -> None:
    verbs = [a for a in args if not a.startswith("-")]
    if verbs and verbs[0] in _SYSTEMCTL_VERBS:
        site.add("service_control")
    if verbs and stops_network(verbs[0], verbs[1:]):
        site.add("network_lockout")


def service(site: Site, args: list[str]) -> None:
    if len(args) >= 2 and args[1] in ("restart", "stop", "force-reload"):
        site.add("service_control")
    if len(args) >= 2 and stops_network(args[1], args[:1]):
        site.add("network_lockout")


def launchctl(site: Site, args: list[str]) -> None:
    if args and args[0] in ("unload", "stop", "remove", "bootout", "disable"):
        site.add("service_control")


def shutdown(site: Site, args: list[str]) -> None:
    site.add("shutdown")


def init(site: Site, args: list[str]) -> None:
    if args and args[0] in ("0", "6"):
        site.add("shutdown")
    if args and args[0] in ("1", "s", "S", "single"):  # single-user: no network, no logins
        site.add("network_lockout")


#: signals that leave hermes running: ``kill -0 $PPID`` asks whether it is alive
_HARMLESS_SIGNALS = frozenset({"0", "CONT"})


def _signal(args: list[str]) -> str | None:
    """The signal ``kill`` sends (TERM when none is named), None when it only lists signals."""
    signal = "TERM"
    k = 0
    while k < len(args) and args[k].startswith("-") and args[k] not in ("-", "--"):
        a = args[k]
        k += 1
        if a in ("-l", "-L", "--list", "--table"):
            return None
        if a in ("-s", "-n", "--signal"):
            signal, k = args[k] if k < len(args) else "", k + 1
        else:  # -STOP, -19, -SIGSTOP, --signal=STOP
            signal = a.removeprefix("--signal=").removeprefix("-")
    return signal.upper().removeprefix("SIG")


def kill(site: Site, args: list[str]) -> None:
    signals = {"-9", "-KILL", "-SIGKILL"}
    if "-1" in args or signals & set(args) or any(
            a == "-s" and args[k + 1:k + 2] in (["9"], ["KILL"], ["SIGKILL"])
            for k, a in enumerate(args)):
        site.add("kill_all")
    signal = _signal(args)
    # the commands hermes runs are its children: stopped or ended, the user's session ends
    if signal is not None and signal not in _HARMLESS_SIGNALS and any(
            HERMES_PID in a for a in args):
        site.add("kill_hermes")


def kill_all(site: Site, args: list[str]) -> None:
    site.add("kill_all")
    if any(stops_network("kill", [a]) for a in args if not a.startswith("-")):
        site.add("network_lockout")  # pkill sshd, killall NetworkManager


def privilege(site: Site, args: list[str]) -> None:
    site.add("privilege_change")


def sudoedit(site: Site, args: list[str]) -> None:
    for target in split_options(args, frozenset({"-u", "-g"}))[1]:
        site.write(target)


def crontab(site: Site, args: list[str]) -> None:
    options, _ = split_options(args, frozenset({"-u"}))
    if "r" in short_flags(options):
        site.add("crontab_remove")


#: ``hermes GROUP ACTION`` commands that change settings, plugins, memory, skills or jobs
#: (the second word, or none, that only shows something is read-only)
_HERMES_GROUPS = frozenset({"config", "cron", "skills", "memory", "plugins", "facts", "auth",
                            "setup", "model", "tools", "sessions"})
_HERMES_READ_ONLY = frozenset({"list", "ls", "show", "status", "view", "get", "path", "runs",
                               "search", "stats", "doctor", "check", "help", "export"})


def hermes(site: Site, args: list[str]) -> None:
    """``hermes config set approvals.mode off``, ``hermes cron create ...``: a model must not
    change its own approvals or schedule work around the ``cronjob`` tool's checks unasked."""
    words = [a for a in args if not a.startswith("-")]
    for index, word in enumerate(words):
        if word in _HERMES_GROUPS:
            action = words[index + 1] if index + 1 < len(words) else ""
            if action and action not in _HERMES_READ_ONLY:
                site.add("hermes_state")
            return


#: python's options whose value follows (in the same word or the next)
_PYTHON_VALUED = frozenset("XW")


def python_module(args: list[str]) -> tuple[str, list[str]] | None:
    """(module, its arguments) of ``python [options] -m MODULE ARGS``; None when python runs
    inline code, a script or stdin instead."""
    k = 0
    while k < len(args):
        a = args[k]
        if not a.startswith("-") or a in ("-", "--"):
            return None
        if a.startswith("--"):
            k += 2 if a == "--check-hash-based-pycs" else 1
            continue
        for j, letter in enumerate(a[1:], 2):  # -um MOD, -mMOD, -Xdev, -X dev
            if letter == "c":
                return None
            if letter == "m":
                return (a[j:], args[k + 1:]) if a[j:] else (
                    (args[k + 1], args[k + 2:]) if k + 1 < len(args) else None)
            if letter in _PYTHON_VALUED:
                k += 0 if a[j:] else 1
                break
        k += 1
    return None


def python_modules(site: Site, args: list[str]) -> None:
    """Modules ``python -m`` runs as commands: ``hermes_agent[.cli.root]`` is
    hermes's CLI (judged like ``hermes ...``), ``tarfile``/``zipfile`` are judged like the
    ``tar``/``zip``/``unzip`` command they stand for, ``keyring get`` prints a secret."""
    found = python_module(args)
    if found is None:
        return
    module, rest = found
    if module == "hermes_agent" or module.startswith("hermes_agent."):
        hermes(site, rest)
    elif module in ("tarfile", "zipfile") and (command := _archiver(module, rest)):
        site.run(command)
    elif module == "keyring" and prints_secret(["keyring", *rest]):
        site.add("credential_read")


def _archiver(module: str, args: list[str]) -> list[str] | None:
    """``python -m tarfile -c OUT FILES`` as ``tar -c -f OUT FILES``, ``-e ARCHIVE DIR`` as
    ``tar -x -f ARCHIVE -C DIR`` (zipfile: ``zip -r``, ``unzip -d``); None to list or test."""
    for k, a in enumerate(args):
        names = [w for w in args[k + 1:] if not w.startswith("-")]
        if a in ("-c", "--create") and names:
            return (["tar", "-c", "-f", *names] if module == "tarfile"
                    else ["zip", "-r", *names])
        if a in ("-e", "--extract") and names:
            into = names[1] if len(names) > 1 else "."
            return (["tar", "-x", "-f", names[0], "-C", into] if module == "tarfile"
                    else ["unzip", names[0], "-d", into])
    return None


NETCATS = frozenset({"nc", "ncat", "netcat", "nc.traditional", "nc.openbsd", "pwncat"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh",
                    "rbash", "yash", "busybox"})
#: tools that send data over the network; option values that are local key files are skipped
NETWORK: dict[str, frozenset[str]] = {
    "curl": frozenset({"--cert", "-E", "--key", "--cacert", "--capath", "-K", "--config",
                       "--netrc-file", "--proxy-cert", "--proxy-key", "-o", "--output",
                       "-c", "--cookie-jar", "-D", "--dump-header"}),
    "wget": frozenset({"-O", "--output-document", "-o", "--output-file", "-a"}),
    "scp": frozenset({"-i", "-F", "-o", "-S", "-J"}), "sftp": frozenset({"-i", "-F", "-o"}),
    "ssh": frozenset({"-i", "-F", "-o", "-J", "-E"}), "rsync": frozenset({"-e", "--rsh"}),
    "nc": frozenset(), "ncat": frozenset(), "netcat": frozenset(), "socat": frozenset(),
    "telnet": frozenset(), "ftp": frozenset(), "tftp": frozenset(), "lftp": frozenset(),
    "http": frozenset(), "https": frozenset(), "xh": frozenset(), "aws": frozenset(),
    "gsutil": frozenset(), "rclone": frozenset({"--config"}), "smbclient": frozenset(),
    "mail": frozenset(), "mailx": frozenset(), "sendmail": frozenset(), "mutt": frozenset(),
    "openssl": frozenset({"-key", "-cert", "-CAfile", "-in"})}
_REMOTE_ARG = re.compile(r"^[^/\s]*:")


_ENVIRON = re.compile(r"^[@<]?/proc/[^/]+/(?:task/[^/]+/)?environ$|[=@]/proc/[^/]+/environ$")
#: builtins that print every (exported) variable with these options
_ENV_PRINTERS = {"env": None, "printenv": None, "set": frozenset({"-o", "posix", "+o"}),
                 "export": frozenset({"-p"}), "declare": frozenset({"-x", "-p", "-px", "-xp"}),
                 "typeset": frozenset({"-x", "-p", "-px", "-xp"}), "compgen": frozenset({"-e"})}


def dumps_environment(argv: list[str], fold: bool = False) -> bool:
    """Whether the command prints the environment (``env``, ``printenv``, ``set``,
    ``export -p``, ``declare -x``, ``cat /proc/self/environ``, ``ps e``); ``fold``: command names
    ignore case (``ENV`` runs env where file names do)."""
    if not argv:
        return False
    name = base_name(argv[0].casefold() if fold else argv[0])
    if any(_ENVIRON.search(a) for a in argv[1:]):
        return True
    if name == "ps":  # ps eww: every process's environment
        return ps_shows_environment(argv[1:])
    if name not in _ENV_PRINTERS:
        return False
    allowed = _ENV_PRINTERS[name]
    if allowed is None:  # env / printenv: with no command after options and assignments
        return name == "printenv" or all(a.startswith("-") or "=" in a for a in argv[1:])
    return all(a in allowed for a in argv[1:]) and (name != "compgen" or bool(argv[1:]))


def _candidates(arg: str) -> list[str]:
    found = [arg]
    if "@" in arg:
        found.append(arg.rsplit("@", 1)[1])
    if "=" in arg:
        found.append(arg.split("=", 1)[1].lstrip("@<"))
    return found


def network(site: Site, args: list[str]) -> None:
    """Credentials sent by a network tool, and shells wired to one."""
    name = site.command
    if name == "openssl" and "s_client" not in args:
        return  # keys, certificates and digests: local work
    skipped = NETWORK.get(name, frozenset())
    copies = name in ("scp", "sftp", "rsync", "rclone")
    sends = False
    k = 0
    while k < len(args):
        arg = args[k]
        if arg in skipped or arg.split("=", 1)[0] in skipped:
            k += 1 if "=" in arg else 2
            continue
        if SECRET in arg or (not (copies and _REMOTE_ARG.match(arg)) and any(
                site.is_credential(c) for c in _candidates(arg))):
            sends = True
        k += 1
    if any(site.is_credential(p) for p in site.stdin_paths):
        sends = True
    if any(site.is_credential(c) for argv in site.pipeline for a in argv[1:]
           for c in _candidates(a)):
        sends = True
    if any(dumps_environment(argv, bool(site.fold)) or prints_secret(argv)
           for argv in site.pipeline) or any(
            _ENVIRON.search(a) for a in [*args, *site.stdin_paths]):
        sends = True
    if sends:
        site.add("secret_upload")
    if name in NETCATS or name == "telnet" or name == "socat" or name == "openssl":
        if any(base_name(argv[0]) in SHELLS for argv in site.pipeline if argv):
            site.add("reverse_shell")
    if name in NETCATS:
        options = [a for a in args if a.startswith("-")]
        if any(c in short_flags([o for o in options if not o.startswith("--")]) for c in "ec") or \
                any(o.startswith(("--exec", "--sh-exec", "--lua-exec")) for o in options):
            site.add("reverse_shell")
    if name == "socat" and any(re.search(r"(?i)(?:^|[,!])(?:exec|system):", a) for a in args):
        site.add("reverse_shell")
    if name == "curl":
        _outputs(site, args, ("-o", "--output"))
    elif name == "wget":
        _outputs(site, args, ("-O", "--output-document"))


def _outputs(site: Site, args: list[str], options: tuple[str, ...]) -> None:
    for k, a in enumerate(args):
        if a in options and k + 1 < len(args):
            site.write(args[k + 1])
        elif a.startswith(tuple(o + "=" for o in options if o.startswith("--"))):
            site.write(a.split("=", 1)[1])


_DOCKER_FLAGS = frozenset({"-d", "-i", "-t", "-it", "-ti", "-dit", "-itd", "--rm", "--privileged",
                           "--init", "--detach", "--interactive", "--tty", "-P", "--publish-all",
                           "--read-only", "-q", "--quiet", "--no-healthcheck"})
_HOST_PLACES = frozenset({"root", "home", "system_dir", "credential", "secret_dir"})


def container(site: Site, args: list[str]) -> None:
    """``docker``/``podman run|create|exec``: the command run in the container is judged like
    the command ``ssh`` runs; mounting the host's root, home, system or credential folders,
    the engine's socket, or running privileged or in the host's namespaces gives the
    container the host (``privilege_change``)."""
    sub = next((k for k, a in enumerate(args) if not a.startswith("-")), None)
    if sub is None or args[sub] not in ("run", "create", "exec"):
        return
    k = sub + 1
    while k < len(args) and args[k].startswith("-"):
        option, _, inline = args[k].partition("=")
        value = inline if inline else args[k + 1] if k + 1 < len(args) else ""
        if option in ("-v", "--volume", "--mount"):
            source = value.split(":", 1)[0] if option != "--mount" else next(
                (p.split("=", 1)[1] for p in value.split(",")
                 if p.startswith(("source=", "src="))), "")
            if site.labels(source) & _HOST_PLACES or (
                    source.casefold() if site.fold else source).endswith(".sock"):
                site.add("privilege_change")
        if option == "--privileged" or option in ("--pid", "--userns", "--ipc", "--uts") and (
                value == "host") or option == "--cap-add" and value.upper() in (
                "ALL", "SYS_ADMIN", "CAP_SYS_ADMIN"):
            site.add("privilege_change")
        k += 1 if args[k] in _DOCKER_FLAGS or inline else 2
    inner = args[k + 1:]  # after the image or the container
    if inner:
        site.run(inner)


def kubectl(site: Site, args: list[str]) -> None:
    """``kubectl exec POD -- CMD``: the command is judged like a remote one."""
    if args[:1] == ["exec"] and "--" in args:
        inner = args[args.index("--") + 1:]
        if inner:
            site.run(inner)


def enable(site: Site, args: list[str]) -> None:
    """``enable -f lib.so NAME`` loads a builtin from a shared library: code it cannot read."""
    if any(a.startswith("-") and "f" in a for a in args):
        site.add("indirect_command")


_PRIVILEGE = ("passwd", "chpasswd", "usermod", "useradd", "userdel", "adduser", "deluser",
              "addgroup", "delgroup", "groupadd", "groupdel", "groupmod", "gpasswd", "visudo",
              "vipw", "vigr", "chsh", "chfn", "chage", "newusers")

SYSTEM_RULES: dict[str, Callable[[Site, list[str]], None]] = {
    "git": git, "systemctl": systemctl, "service": service, "launchctl": launchctl,
    "shutdown": shutdown, "reboot": shutdown, "halt": shutdown, "poweroff": shutdown,
    "init": init, "telinit": init, "kill": kill, "killall": kill_all, "pkill": kill_all,
    "killall5": kill_all, "sudoedit": sudoedit, "crontab": crontab, **NETWORK_RULES,
    "enable": enable, "docker": container, "podman": container, "nerdctl": container,
    "kubectl": kubectl, "ps": ps, "hermes": hermes,
    **{name: privilege for name in _PRIVILEGE}, **{name: network for name in NETWORK},
    **{name: network for name in NETCATS}}
