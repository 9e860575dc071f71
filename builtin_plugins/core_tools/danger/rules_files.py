"""Rules for commands that delete, write, move or change permissions of files and disks."""

from __future__ import annotations

import re
from collections.abc import Callable

from .listings import fd_found, fd_parts, find_found, secret_listed
from .site import Site, base_name


def split_options(args: list[str], valued: frozenset[str] = frozenset()
                  ) -> tuple[list[str], list[str]]:
    """(options, operands); GNU style: options may follow operands until ``--``."""
    options: list[str] = []
    operands: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            operands.extend(args[i + 1:])
            break
        if a.startswith("-") and a != "-":
            options.append(a)
            if a in valued and i + 1 < len(args):
                options.append(args[i + 1])
                i += 1
        else:
            operands.append(a)
        i += 1
    return options, operands


def short_flags(options: list[str]) -> str:
    return "".join(o[1:] for o in options if o.startswith("-") and not o.startswith("--"))


def _recursive(options: list[str]) -> bool:
    return "--recursive" in options or any(c in short_flags(options) for c in "rR")


def rm(site: Site, args: list[str]) -> None:
    options, targets = split_options(args)
    recursive = _recursive(options)
    if recursive:
        site.add("recursive_delete")
    if site.via_xargs:
        site.add("find_delete")
    for target in targets:
        site.delete(target, recursive)


def rimraf(site: Site, args: list[str]) -> None:
    """``rimraf``, ``del-cli``: recursive deletion under another name."""
    site.add("recursive_delete")
    for target in split_options(args)[1]:
        site.delete(target, True)


def tar_extracts(args: list[str]) -> bool:
    first = args[0] if args else ""
    return ("x" in first.lstrip("-") and not first.startswith("--")) or any(
        a in ("--extract", "--get") or re.fullmatch(r"-[A-Za-z]*x[A-Za-z]*", a) for a in args)


def extract(site: Site, args: list[str]) -> None:
    """``tar -x -C DIR``, ``unzip -d DIR``: files written into DIR."""
    if site.command != "unzip" and not tar_extracts(args):
        return
    options = ("-d",) if site.command == "unzip" else ("-C", "--directory")
    into = [args[k + 1] for k, a in enumerate(args) if a in options and k + 1 < len(args)]
    into += [a.split("=", 1)[1] for a in args if a.startswith("--directory=")]
    for target in into:
        site.write(target)
    for target in into or ([site.cwd] if site.cwd else []):
        _into_home(site, [], target, contents=True)


def unlink(site: Site, args: list[str]) -> None:
    for target in split_options(args)[1]:
        site.delete(target, False)


def shred(site: Site, args: list[str]) -> None:
    site.add("disk_tool")
    for target in split_options(args, frozenset({"-n", "-s", "--iterations", "--size"}))[1]:
        site.write(target)
        site.delete(target, False)


_FIND_EXPR = re.compile(r"^[-(!)]")
_DELETERS = frozenset({"rm", "unlink", "shred", "rmdir"})
#: find tests that select some files: with one, find does not delete the whole tree
_FIND_TESTS = frozenset({
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
    "-type", "-newer", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-size",
    "-user", "-group", "-perm", "-empty", "-links", "-inum", "-samefile", "-lname", "-ilname",
    "-uid", "-gid", "-nouser", "-nogroup", "-used", "-fstype", "-xtype", "-context"})


def find(site: Site, args: list[str]) -> None:
    starts: list[str] = []
    i = 0
    while i < len(args) and args[i] in ("-H", "-L", "-P"):
        i += 1
    while i < len(args) and not _FIND_EXPR.match(args[i]):
        starts.append(args[i])
        i += 1
    start = starts[0] if starts else "."
    expr = args[i:]
    deletes = "-delete" in expr
    found: list[str] | None = None
    j = 0
    while j < len(expr):
        if expr[j] in ("-exec", "-execdir", "-ok", "-okdir"):
            k = j + 1
            while k < len(expr) and expr[k] not in (";", "+"):
                k += 1
            if found is None:  # what {} names: the start folder, and the secret files it may
                # be (find ~/.ssh -exec cat {} +, find ~ -name id_rsa -exec cat {} \;), first:
                # sh -c '...' _ {} gets them as $1
                found = [*secret_listed(find_found(args), site.labels), start]
            # GNU find also replaces {} inside a word (sh -c 'cat {}', {}.bak)
            inner = [f for a in expr[j + 1:k] for f in (
                found if a == "{}" else [a.replace("{}", found[0])] if "{}" in a else [a])]
            if inner and base_name(inner[0]) in _DELETERS:
                deletes = True
            if inner:
                site.run(inner)
            j = k
        j += 1
    if deletes:
        site.add("find_delete")
        # a test narrows what is deleted, unless it matches everything (-name '*', -type f:
        # every file) or an -o / ! may apply -delete to what the test leaves out
        whole_tree = any(a in ("-o", "-or", "!", "-not") for a in expr) or not any(
            a in _FIND_TESTS and a not in ("-type", "-xtype")
            and expr[k + 1:k + 2] not in (["*"], [".*"], ["**"], ["*.*"])
            for k, a in enumerate(expr))
        for s in starts or ["."]:
            site.delete(s, whole_tree)


_FD_PLACEHOLDER = re.compile(r"\{(?:/|//|\.|/\.)?\}")


def fd(site: Site, args: list[str]) -> None:
    """``fd ... -x CMD`` / ``-X CMD``: CMD runs on the files found, ``{}`` standing for each
    (without a placeholder they are its last words): the secret files the search may find
    (``fd id_rsa ~ -x cat``), else what it may find (fd never prints the folder it
    searches); a deleter is ``find_delete``."""
    call = fd_parts(args)
    if not call.commands:
        return
    stand_ins = fd_found(call)
    found = secret_listed(stand_ins, site.labels) or stand_ins[:1]
    for command in call.commands:
        if not any(_FD_PLACEHOLDER.search(w) for w in command):
            command = [*command, *found]
        inner = [f for a in command for f in (
            found if a == "{}" else [a.replace("{}", found[0])] if "{}" in a else [a])]
        if inner and base_name(inner[0]) in _DELETERS:
            site.add("find_delete")
        if inner:
            site.run(inner)


def _destination(args: list[str], valued: frozenset[str]) -> tuple[list[str], str | None]:
    """(sources, destination) of cp / mv / ln / install."""
    options, operands = split_options(args, valued)
    for k, o in enumerate(options):
        if o in ("-t", "--target-directory") and k + 1 < len(options):
            return operands, options[k + 1]
        if o.startswith("--target-directory="):
            return operands, o.split("=", 1)[1]
    if len(operands) < 2:
        return [], None
    return operands[:-1], operands[-1]


_COPY_VALUED = frozenset({"-t", "-S", "-m", "-o", "-g", "--target-directory", "--suffix",
                          "--mode", "--owner", "--group"})


def copy(site: Site, args: list[str]) -> None:
    sources, dest = _destination(args, _COPY_VALUED)
    if dest is not None:
        site.write(dest)
        _into_home(site, sources, dest)
    if site.command == "install":  # install -m 4755 /bin/bash x: a mode like chmod's
        modes = [v for k, o in enumerate(args) if o in ("-m", "--mode")
                 for v in args[k + 1:k + 2]] + [o.split("=", 1)[1] for o in args
                                                 if o.startswith("--mode=")]
        for mode in modes:
            world, special = _mode_effects(mode) if _OCTAL.fullmatch(mode) or \
                _SYMBOLIC.fullmatch(mode) else (False, False)
            if world:
                site.add("world_writable")
            if special:
                site.add("permission_change")


def move(site: Site, args: list[str]) -> None:
    sources, dest = _destination(args, _COPY_VALUED)
    for source in sources:
        site.delete(source, True)
    if dest is not None:
        site.write(dest)
        _into_home(site, sources, dest)


def _into_home(site: Site, sources: list[str], dest: str, contents: bool = False) -> None:
    """Files copied, moved or extracted into the home directory itself land on its start-up
    and credential files: ``cp evil/.bashrc ~`` writes ``~/.bashrc``; copying the contents of
    a folder (``cp -r x/. ~``, ``rsync -a x/ ~``, ``tar -x -C ~``) writes files it cannot
    name."""
    if "home" not in site.labels(dest):
        return
    if contents and not sources:
        site.add("credential_write")
    for source in sources:
        name = base_name(source)
        if name in ("", ".", "..", "*", ".*") or contents and source.endswith(("/", "/.")):
            site.add("credential_write")
        else:
            site.write(dest.rstrip("/") + "/" + name)


def tee(site: Site, args: list[str]) -> None:
    """``tee`` and ``sponge``: every operand is written."""
    for target in split_options(args)[1]:
        site.write(target)


def uniq(site: Site, args: list[str]) -> None:
    """``uniq IN OUT`` writes OUT."""
    operands = split_options(args, frozenset({"-f", "-s", "-w"}))[1]
    if len(operands) > 1:
        site.write(operands[1])


def setcap(site: Site, args: list[str]) -> None:
    """File capabilities (``cap_setuid+ep``) grant root powers like the setuid bit."""
    if "-v" not in args and "-r" not in args:
        site.add("permission_change")


def truncate(site: Site, args: list[str]) -> None:
    valued = frozenset({"-s", "-r", "-o", "--size", "--reference"})
    for target in split_options(args, valued)[1]:
        site.write(target)


def dd(site: Site, args: list[str]) -> None:
    site.add("disk_tool")
    for a in args:
        if a.startswith("of="):
            target = a[3:]
            if "device" in site.labels(target):
                site.add("dd_device")
            else:
                site.write(target)


#: a sed command after its address: the letter and the rest of the line
_ADDRESS = r"(?:\d+|\$|/(?:[^/\\]|\\.)*/)"
#: a sed command after its address: the letter and the rest of the line
_SED_COMMAND = re.compile(rf"\s*(?:{_ADDRESS}(?:,{_ADDRESS})?[IM]*\s*!?\s*)?([a-zA-Z])(.*)", re.S)
#: s/PATTERN/REPLACEMENT/FLAGS [w FILE]
_SED_SUBSTITUTE = re.compile(r"(.)(?:(?!\1)[^\\]|\\.)*\1((?:(?!\1)[^\\]|\\.)*)\1"
                             r"([gpiImMe0-9]*)(?:w\s*(.*))?", re.S)


def _sed_script(site: Site, script: str) -> None:
    """GNU sed commands that run code (``e CMD``, ``s///e``), write (``w FILE``) or read
    (``r FILE``)."""
    for line in re.split(r"[\n;]", script):
        m = _SED_COMMAND.match(line)
        if m is None:
            continue
        letter, rest = m.group(1), m.group(2).strip()
        if letter == "e":
            if rest:
                site.run(["sh", "-c", rest])
            else:
                site.add("indirect_command")  # runs the line being edited
        elif letter in "wW" and rest:
            site.write(rest)
        elif letter in "rR" and rest and site.is_secret(rest):
            site.add("credential_read")
        elif letter == "s" and (sub := _SED_SUBSTITUTE.match(rest)):
            if "e" in sub.group(3):  # the edited line, often the replacement, is run
                site.add("indirect_command")
                site.run(["sh", "-c", sub.group(2)])
            if sub.group(4):
                site.write(sub.group(4).strip())


def sed(site: Site, args: list[str]) -> None:
    valued = frozenset({"-e", "-f", "--expression", "--file", "-l", "--line-length"})
    options, operands = split_options(args, valued)
    scripts = [options[k + 1] for k in range(len(options) - 1)
               if options[k] in ("-e", "--expression")]
    scripts += [o.split("=", 1)[1] for o in options if o.startswith("--expression=")]
    if not scripts and not any(o in ("-f", "--file") or o.startswith("--file=")
                               for o in options) and operands:
        scripts = operands[:1]
    for script in scripts:
        _sed_script(site, script)
    in_place = any(o.startswith(("-i", "--in-place")) or
                   (o.startswith("-") and not o.startswith("--") and "i" in o[1:].split(".")[0])
                   for o in options if o not in valued)
    if not in_place:
        return
    scripted = any(o in ("-e", "-f", "--expression", "--file") or
                   o.startswith(("--expression=", "--file=")) for o in options)
    for target in operands if scripted else operands[1:]:
        site.write(target)


_OCTAL = re.compile(r"[0-7]{1,4}")
_SYMBOLIC = re.compile(r"[ugoa]*(?:[-+=][rwxXstugo]*)+(?:,[ugoa]*(?:[-+=][rwxXstugo]*)+)*")


def _mode_effects(mode: str) -> tuple[bool, bool]:
    """(world-writable, setuid/setgid) for a chmod mode."""
    if _OCTAL.fullmatch(mode):
        digits = mode.zfill(4)
        return int(digits[-1]) & 2 != 0, int(digits[0]) & 6 != 0
    world = special = False
    for clause in mode.split(","):
        m = re.match(r"([ugoa]*)(.*)", clause)
        assert m is not None
        who, actions = m.group(1), m.group(2)
        for op, perms in re.findall(r"([-+=])([rwxXstugo]*)", actions):
            if op == "-":
                continue
            if "w" in perms and ("o" in who or "a" in who):
                world = True
            if "s" in perms:
                special = True
    return world, special


def chmod(site: Site, args: list[str]) -> None:
    mode: str | None = None
    options: list[str] = []
    targets: list[str] = []
    for a in args:
        if mode is None and not a.startswith("--reference") and (
                _OCTAL.fullmatch(a) or _SYMBOLIC.fullmatch(a)):
            mode = a
        elif a.startswith("-") and a != "-":
            options.append(a)
        else:
            targets.append(a)
    world, special = _mode_effects(mode) if mode else (False, False)
    if world:
        site.add("world_writable")
    if special or "R" in short_flags(options) or "--recursive" in options:
        site.add("permission_change")
    _system_targets(site, targets)


def _system_targets(site: Site, targets: list[str]) -> None:
    for target in targets:
        labels = site.labels(target)
        if labels & {"root", "system_dir", "system_file", "home", "device", "sudoers"}:
            site.add("permission_change")


def chown(site: Site, args: list[str]) -> None:
    options, operands = split_options(args, frozenset({"--from"}))
    if "R" in short_flags(options) or "--recursive" in options:
        site.add("chown_root" if site.command == "chown" else "permission_change")
    has_reference = any(o.startswith("--reference") for o in options)
    _system_targets(site, operands if has_reference else operands[1:])


def setfacl(site: Site, args: list[str]) -> None:
    valued = frozenset({"-m", "-x", "-M", "-X", "--modify", "--remove", "--set", "--set-file",
                        "--modify-file", "--remove-file"})
    options, operands = split_options(args, valued)
    if "R" in short_flags([o for o in options if o.startswith("-")]) or "--recursive" in options:
        site.add("permission_change")
    _system_targets(site, operands)


def chattr(site: Site, args: list[str]) -> None:
    _system_targets(site, [a for a in args if not a.startswith(("-", "+", "="))])


def rsync(site: Site, args: list[str]) -> None:
    valued = frozenset({"-e", "--rsh", "-f", "--filter", "--exclude", "--include", "-T",
                        "--temp-dir", "--backup-dir", "--password-file", "--exclude-from",
                        "--include-from", "--files-from", "--log-file", "--chown", "--chmod"})
    options, operands = split_options(args, valued)
    if len(operands) < 2:
        return
    dest = operands[-1]
    if re.match(r"^[^/]*:", dest):
        return  # remote destination
    if any(o.startswith(("--delete", "--del")) for o in options):
        labels = site.labels(dest)
        if labels & {"root", "home", "system_dir", "system_file", "credential"}:
            site.add("sync_delete")
        site.delete(dest, True)
    site.write(dest)
    _into_home(site, operands[:-1], dest, contents=True)


def disk_tool(site: Site, args: list[str]) -> None:
    site.add("disk_tool")


def format_disk(site: Site, args: list[str]) -> None:
    site.add("format_disk")


#: tools that erase or re-label a disk, with the words that make them do it (empty: always)
_ERASERS: dict[str, frozenset[str]] = {
    "cryptsetup": frozenset({"luksFormat", "erase", "luksErase", "reencrypt"}),
    "nvme": frozenset({"format", "sanitize"}),
    "hdparm": frozenset({"--security-erase", "--security-erase-enhanced",
                         "--trim-sector-ranges", "--write-sector", "--make-bad-sector"}),
    "sg_format": frozenset(), "sg_sanitize": frozenset(), "pvcreate": frozenset(),
    "pvremove": frozenset(), "zpool": frozenset({"create", "labelclear"}),
    "mdadm": frozenset({"--create", "-C", "--zero-superblock"}),
    "vgremove": frozenset(), "lvremove": frozenset()}


def eraser(site: Site, args: list[str]) -> None:
    """``cryptsetup luksFormat``, ``nvme format``, ``hdparm --security-erase``, ...: the disk's
    contents are gone, like formatting it."""
    words = _ERASERS.get(site.command, frozenset())
    if not words or any(a in words or a.split("=", 1)[0] in words for a in args):
        site.add("format_disk")


def ddrescue(site: Site, args: list[str]) -> None:
    """``ddrescue IN OUT [MAP]``: OUT is overwritten."""
    site.add("disk_tool")
    operands = split_options(args)[1]
    if len(operands) > 1:
        target = operands[1]
        if "device" in site.labels(target):
            site.add("dd_device")
        else:
            site.write(target)


def blkdiscard(site: Site, args: list[str]) -> None:
    for target in split_options(args, frozenset({"-o", "-l", "-p"}))[1]:
        site.write(target)
    site.add("disk_tool")


FILE_RULES: dict[str, Callable[[Site, list[str]], None]] = {
    "rm": rm, "unlink": unlink, "shred": shred, "find": find, "fd": fd, "fdfind": fd,
    "cp": copy, "install": copy, "ln": copy, "mv": move, "tee": tee, "sponge": tee, "uniq": uniq,
    "setcap": setcap,
    "truncate": truncate, "dd": dd, "sed": sed, "gsed": sed,
    "chmod": chmod, "chown": chown, "chgrp": chown, "setfacl": setfacl, "chattr": chattr,
    "rsync": rsync, "fdisk": disk_tool, "sfdisk": disk_tool, "cfdisk": disk_tool,
    "parted": disk_tool, "gdisk": disk_tool, "sgdisk": disk_tool, "mke2fs": format_disk,
    "mkswap": format_disk, "wipefs": format_disk, "mkntfs": format_disk, "mkdosfs": format_disk,
    "newfs": format_disk, "blkdiscard": blkdiscard, "rimraf": rimraf, "del-cli": rimraf,
    "tar": extract, "unzip": extract, "bsdtar": extract, "ddrescue": ddrescue, "dcfldd": dd,
    **{name: eraser for name in _ERASERS}}


def file_rule(name: str) -> Callable[[Site, list[str]], None] | None:
    if name.startswith("mkfs"):
        return format_disk
    return FILE_RULES.get(name)
