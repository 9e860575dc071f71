"""Commands that read a file into their output (or into a copy or archive the next command
can print): reading a credential this way hands the secret to the model."""

from __future__ import annotations

import os
import posixpath
import re

from .inline import interpreter
from .paths import SECRET_DIR, SECRET_FILE, classify
from .rules_files import short_flags, split_options, tar_extracts
from .site import Site

#: tools that print, transform or search the files they are given
PRINTERS = frozenset({
    "cat", "tac", "nl", "head", "tail", "less", "more", "most", "bat", "batcat", "view",
    "strings", "od", "xxd", "hexdump", "hd", "base64", "base32", "basenc", "uuencode", "sort",
    "uniq", "cut", "paste", "column", "fold", "fmt", "pr", "diff", "comm", "jq", "yq", "awk",
    "gawk", "mawk", "sed", "grep", "egrep", "fgrep", "zcat", "gzip", "bzip2", "xz", "zstd",
    "gpg", "iconv", "expand", "rev", "tr", "dos2unix"})
#: tools that print a file named anywhere in their arguments: interpreters running code on
#: it (``perl -pe1 F``, ``python3 -c CODE F``, ``python3 -m base64 F``), ``git diff
#: --no-index``, ``git add`` (then pushed), editors in batch mode
ARGUMENT_READERS = frozenset({"git", "vim", "vi", "nvim", "ex", "ed", "emacs", "nano",
                              "sqlite3", "xclip", "xsel", "wl-copy", "pbcopy"})
#: ``openssl`` sub-commands that print or encode the private key or data they read
_OPENSSL_PRINTERS = frozenset({"base64", "enc", "rsa", "pkey", "ec", "dsa", "pkcs8",
                               "asn1parse", "pkcs12", "cms", "smime"})
#: builtins that load a file's variables into the shell (``source ~/.hermes/.env; echo $KEY``)
LOADERS = frozenset({"source", "."})
#: tools that copy or archive files (a later command can print the copy)
COPIERS = frozenset({"cp", "install", "ln", "rsync", "scp", "dd", "tar", "bsdtar", "zip",
                     "7z", "7za", "cpio", "pax"})
#: tools that read directories recursively whatever their options
ALWAYS_RECURSIVE = frozenset({"rg", "ag", "ack", "tar", "bsdtar", "7z", "7za", "rsync", "zip"})
#: options whose value is not a file the command reads
_VALUED: dict[str, frozenset[str]] = {
    "tar": frozenset({"-C", "--directory", "-f", "--file", "-X", "--exclude-from", "-b"}),
    "scp": frozenset({"-i", "-F", "-o", "-S", "-J", "-P", "-l", "-c"}),
    "rsync": frozenset({"-e", "--rsh", "--exclude", "--include", "-f", "--filter"}),
    "grep": frozenset({"-e", "-m", "-A", "-B", "-C", "--regexp"}),
    "head": frozenset({"-n", "-c"}), "tail": frozenset({"-n", "-c"}),
    "cut": frozenset({"-d", "-f", "-c", "-b"}), "sort": frozenset({"-t", "-k", "-o"}),
    "cp": frozenset({"-t", "-S", "--target-directory"}), "zip": frozenset({"-x", "-i"})}
_VALUED["bsdtar"] = _VALUED["tar"]
#: copiers whose last operand is the destination
_DESTINED = frozenset({"cp", "install", "ln", "rsync", "scp"})
_GLOB = re.compile(r"[*?\[]")
#: options that make a tool read a file as its own configuration or list of URLs, and print
#: it: ``curl -K FILE`` warns about each name it does not know (a crafted file can send what it
#: names), ``wget --config=FILE`` the first one; ``wget -i FILE`` and ``-e input=FILE`` print
#: every line as a URL (and look it up as a host name). By tool: the long options, the short
#: letters, and every short letter that takes a value (which ends a group like ``-sK``).
_CONFIG_OPTIONS: dict[str, tuple[frozenset[str], str, str]] = {
    "curl": (frozenset({"--config"}), "K", "EKCbcdDFPHhmoUQreXYytzTuAw"),
    "wget": (frozenset({"--config", "--input-file", "--execute"}), "ie", "eoaiBtOTwQPUlARDIX")}
#: tools whose long options also take ``--option=value`` (curl takes ``--config FILE`` only)
_LONG_EQUALS = frozenset({"wget"})
#: options whose value is a command (``wget -e 'input = FILE'``): the file is after the ``=``
_COMMAND_OPTIONS = frozenset({"-e", "--execute"})


def config_files(name: str, args: list[str]) -> list[str]:
    """The files ``name`` reads through a configuration or input-file option."""
    spec = _CONFIG_OPTIONS.get(name)
    if spec is None:
        return []
    longs, shorts, valued = spec
    found: list[tuple[str, str]] = []
    k = 0
    while k < len(args):
        a, following = args[k], args[k + 1] if k + 1 < len(args) else None
        if a == "--":
            break
        if a.startswith("--"):
            option, equals, value = a.partition("=")
            if option in longs and equals and name in _LONG_EQUALS:
                found.append((option, value))
            elif option in longs and not equals and following is not None:
                found.append((option, following))
                k += 1
        elif a.startswith("-"):
            for j, letter in enumerate(a[1:], 2):
                if letter in valued:  # the rest of the word, else the next word, is its value
                    value = a[j:] or following
                    if letter in shorts and value is not None:
                        found.append(("-" + letter, value))
                    k += 0 if a[j:] else 1
                    break
        k += 1
    return [value.split("=", 1)[1].strip() if option in _COMMAND_OPTIONS else value
            for option, value in found if option not in _COMMAND_OPTIONS or "=" in value]


def _recursive(name: str, options: list[str]) -> bool:
    if name in ALWAYS_RECURSIVE:
        return True
    flags = short_flags(options)
    return any(o in ("--recursive", "--dereference-recursive", "--archive") for o in options) \
        or "r" in flags or "R" in flags or (name == "cp" and "a" in flags)


def reads(site: Site, args: list[str]) -> None:
    """``credential_read`` when the command reads a secret file, or a folder holding secrets
    recursively (``grep -r``, ``tar``, ``cp -r``) or through a glob (``cat ~/.ssh/*``)."""
    name = site.command
    _serves(site, name, args)
    if any(_secret(site, p, recursive=False) for p in config_files(name, args)):
        site.add("credential_read")  # curl -K ~/.hermes/.env, wget -i ~/.ssh/id_rsa
    if name in ARGUMENT_READERS or interpreter(name) is not None or name == "openssl" and (
            args[:1] and args[0] in _OPENSSL_PRINTERS):
        named = [c for a in args for c in (a, a.split("=", 1)[-1]) if not c.startswith("-")]
        if any(_secret(site, p, recursive=False) for p in named) or name == "git" and any(
                {"credential", SECRET_DIR} <= site.labels(p) for p in named):
            site.add("credential_read")  # also git -C ~/.ssh add -A (then pushed)
        return
    if not (name in PRINTERS or name in COPIERS or name in ALWAYS_RECURSIVE or name in LOADERS):
        return
    if name in ("tar", "bsdtar") and tar_extracts(args):
        return  # extraction writes (judged as a write), it does not read the target
    options, operands = split_options(args, _VALUED.get(name, frozenset()))
    if name in ("tar", "bsdtar"):  # tar -C DIR: later names are relative to DIR
        base = next((options[k + 1] for k in range(len(options) - 1)
                     if options[k] in ("-C", "--directory")), None)
        if base is not None:
            operands = [o if o.startswith(("/", "~")) else posixpath.join(base, o)
                        for o in operands]
    if name in _DESTINED and len(operands) > 1 and not any(
            o.startswith(("-t", "--target-directory")) for o in options):
        operands = operands[:-1]
    recursive = _recursive(name, options)
    paths = operands + site.stdin_paths + [a.split("=", 1)[1] for a in args
                                           if a.startswith(("if=", "--file=", "--input="))]
    if any(_secret(site, path, recursive) for path in paths):
        site.add("credential_read")


def _serves(site: Site, name: str, args: list[str]) -> None:
    """A web server started on the home folder or a credential folder hands its secrets to
    anyone who asks (``python3 -m http.server -d ~``, ``php -S 0.0.0.0:80 -t ~``)."""
    kind = interpreter(name)
    module = args[args.index("-m") + 1] if "-m" in args[:-1] else ""
    if kind == "python" and module == "http.server":
        option = ("-d", "--directory")
    elif kind == "php" and any(a.startswith("-S") for a in args):
        option = ("-t", "--docroot")
    else:
        return
    folder = next((args[k + 1] for k, a in enumerate(args[:-1]) if a in option), None)
    folder = folder or next((a.split("=", 1)[1] for a in args
                             if a.startswith(tuple(o + "=" for o in option))), None)
    if folder is None and site.cwd is None:
        return
    labels = site.labels(folder or site.cwd or ".")
    if labels & {"home", "root", SECRET_DIR} or SECRET_FILE in labels:
        site.add("secret_upload")


def _secret(site: Site, path: str, recursive: bool) -> bool:
    """Whether reading ``path`` (recursively, or through a glob) reads a secret."""
    labels = site.labels(path)
    return SECRET_FILE in labels or _links_to_secret(site.cwd, path, site.fold) or (
        SECRET_DIR in labels and (recursive or _GLOB.search(path) is not None))


def redirected(site: Site, paths: list[str]) -> None:
    """``credential_read`` when a secret file is opened for reading by a redirection, whatever
    the command (``read k < ~/.ssh/id_rsa``, ``exec 3< ...``, ``$(< ~/.hermes/.env)``,
    ``while ...; done < ...``): the shell hands its contents to the command."""
    if any(_secret(site, p, recursive=False) for p in paths):
        site.add("credential_read")


def _links_to_secret(cwd: str | None, path: str, fold: bool | None = None) -> bool:
    """Whether ``path`` is an existing symlink (or lies under one) that leads to a secret."""
    if cwd is None and not path.startswith("/") or path.startswith("~") or any(
            c < " " for c in path) or _GLOB.search(path):
        return False
    full = posixpath.join(cwd or "/", path)
    try:  # a link it may not follow (another user's /proc/<pid>/cwd), a name with a marker
        real = os.path.realpath(full)
    except (OSError, ValueError):
        return False
    own = f"/proc/{os.getpid()}/"
    if real.startswith(own):  # /dev/fd/3, /proc/self/...: the command's own, not the analyser's
        real = "/proc/self/" + real[len(own):]
    return real != posixpath.normpath(full) and SECRET_FILE in classify(real, fold=fold)


def reads_in_code(site: Site, literals: list[str]) -> None:
    """Interpreter inline code naming a secret file (``open('~/.ssh/id_rsa').read()``)."""
    if any(SECRET_FILE in site.labels(s) for s in literals if s.startswith(("/", "~"))):
        site.add("credential_read")
