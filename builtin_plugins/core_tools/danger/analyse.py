"""The analyser: walks the parsed commands in order and judges what runs and what it touches.

Variables assigned earlier in the text are resolved, ``cd`` moves the working directory,
wrappers (``sudo``, ``env``, ``xargs``, ...) are looked through, and text that is run as code
(``bash -c``, ``eval``, heredocs and pipes into a shell, interpreters' inline code) is judged
in turn. Text the analyser cannot read carries a marker (see :mod:`.site`); running it as a
command is reported under the marker's key, never passed as safe.
"""

from __future__ import annotations

from .expansion import Expansions
from .flows import output_of
from .inline import code_argument, inspect_code, interpreter, ipython_shell, string_literals
from .later import LaterCode
from .lexer import ARITH, LIT, TILDE, VAR, Word, lex, lex_text
from .listings import secret_listed
from .names import is_pattern, stand_ins
from .parse import Command, parse
from .paths import GIT_HOOK, classify, expand_braces, file_key, normalise
from .rules_files import file_rule, short_flags, split_options
from .rules_process import attaches
from .rules_read import reads, reads_in_code, redirected
from .rules_secrets import prints_secret, secret_printer
from .rules_system import SHELLS, SYSTEM_RULES, python_modules
from .scope import (DOWNLOADERS, MAX_DEPTH, MAX_VALUE, OUTPUT_OPTIONS, SSH_VALUED, STDIN_FILES,
                    WRITES, Content, Scope)
from .shell_state import SCOPE_BUILTINS, evaluated_code
from .site import FETCHED, MARKERS, OPAQUE, Site, base_name, opaque_key
from .wrappers import option_code, unwrap


class Analyser(Expansions, LaterCode):
    def __init__(self) -> None:
        self.found: dict[str, None] = {}
        # expansions by word (the word is kept so that its id is not reused)
        self._fields: dict[int, tuple[Word, list[str]]] = {}
        self._stand_ins = 256  # commands judged for glob command names, per check
        self._functions: set[str] = set()  # names of the functions the text defines
        #: <( ) files holding a listing of secret files (see :meth:`_listing`)
        self._listed_files: dict[str, list[str]] = {}

    def add(self, key: str) -> None:
        self.found.setdefault(key)

    # ------------------------------------------------------------------ scripts
    def script(self, source: str, scope: Scope, depth: int) -> list[Command]:
        if depth > MAX_DEPTH:
            self.add("indirect_command")
            return []
        commands = parse(source)
        self._functions.update(cmd.function for cmd in commands if cmd.function)
        for cmd in commands:
            self.command(cmd, scope, depth)
        for cmd in commands:
            if (cmd.function and cmd.argv and base_name(cmd.argv[0]) == cmd.function
                    and (cmd.terminator in ("&", "|") or cmd.pipe_from is not None)):
                self.add("fork_bomb")
        return commands

    def run_text(self, text: str, scope: Scope, depth: int) -> None:
        """``text`` is run by a shell (``bash -c``, ``eval``, a heredoc fed to ``sh``)."""
        if text.strip(MARKERS + " \t\n") == "" and (key := opaque_key(text)):
            self.add(key)
            return
        self.script(text, scope, depth + 1)

    # ------------------------------------------------------------------ expansion
    def expand(self, word: Word, scope: Scope, depth: int) -> list[str]:
        """The fields ``word`` becomes; unreadable pieces are markers."""
        cached = self._fields.get(id(word))
        if cached is not None and cached[0] is word:
            return cached[1]
        fields: list[list[str]] = [[]]  # pieces of each field, joined at the end
        quoted = False
        for part in word.parts:
            quoted = quoted or part.quoted
            if part.kind == LIT:
                fields[-1].append(part.value)
            elif part.kind == TILDE:
                fields[-1].append("~" + part.value)
            elif part.kind == ARITH:  # its substitutions run; its value is a number
                self.expand(lex_text(part.value), scope, depth)
                fields[-1].append(OPAQUE)
            else:
                value = (self._variable(part, scope, depth) if part.kind == VAR
                         else self._substitution(part, scope, depth))
                values = value if isinstance(value, list) else [value]
                for n, item in enumerate(values):  # array elements are separate fields
                    if n:
                        fields.append([])
                    if part.quoted:
                        fields[-1].append(item)
                        continue
                    pieces = scope.split(item)
                    if item[:1] and scope.separates(item[0]) and fields[-1]:
                        fields.append([])
                    if pieces:
                        fields[-1].append(pieces[0])
                        fields.extend([p] for p in pieces[1:])
                        if scope.separates(item[-1]):
                            fields.append([])
        result = ["".join(f) for f in fields]
        if not (quoted and len(result) == 1):
            result = [f for f in result if f]  # empty unquoted expansions vanish
        self._fields[id(word)] = (word, result)
        return result

    def joined(self, word: Word, scope: Scope, depth: int) -> str:
        return " ".join(self.expand(word, scope, depth))

    @staticmethod
    def _noop(argv: list[str]) -> None:
        return None

    # ------------------------------------------------------------------ commands
    def command(self, cmd: Command, scope: Scope, depth: int) -> None:
        for name, value in cmd.assigns:
            text = OPAQUE if value is None else self.joined(value, scope, depth)
            self._evaluated([text], scope, depth)
            self._variable_code([f"{name}={text}"], scope, depth)
            if cmd.words:
                continue
            if value is not None and text.startswith("(") and text.endswith(")"):
                elements = [f for w in lex(text[1:-1]) if isinstance(w, Word)
                            for f in self.expand(w, scope, depth)]
                scope.arrays[name] = elements
                text = elements[0] if elements else ""
            scope.env[name] = text if len(text) <= MAX_VALUE else OPAQUE
        site = Site(self.add, scope.cwd, self._noop, links=scope.links, fold=scope.fold)
        stdin_paths: list[str] = []
        for r in cmd.redirects:
            if r.heredoc is not None:
                self.expand(r.heredoc, scope, depth)
            if r.fd not in ("", "0") and r.op in ("<<", "<<-", "<<<"):  # 3<<< CODE: /dev/fd/3
                body = r.heredoc if r.op != "<<<" else r.target
                text = self.joined(body, scope, depth) if body is not None else ""
                for path in (f"/dev/fd/{r.fd}", f"/proc/self/fd/{r.fd}"):
                    scope.files[path] = ("", text)
            if r.target is None or r.op in ("<<", "<<-"):
                continue
            target = self.joined(r.target, scope, depth)
            if "socket" in site.labels(target):
                self.add("reverse_shell")
            if r.op in WRITES or (r.op == ">&" and not target.isdigit() and target != "-"):
                site.write(target, redirect=True)
            if r.op in ("<", "<>"):
                stdin_paths.append(target)
        redirected(site, stdin_paths)
        argv = [f for w in cmd.words for f in self.expand(w, scope, depth)]
        cmd.words_text = argv
        self._evaluated(argv, scope, depth)
        if cmd.kind == "header" and cmd.assigns and cmd.assigns[0][1] is None:
            # for f in WORDS: the variable takes each word; unknown, unless one is a secret
            # file (for f in ~/.ssh/*; do cat "$f"; done reads the keys)
            words = argv[1:] if argv[:1] == ["in"] else []
            secret = secret_listed(words, site.labels)
            scope.env[cmd.assigns[0][0]] = secret[0] if secret else OPAQUE
        if cmd.kind != "simple" or not argv:
            cmd.argv = []
        else:
            self.run(argv, cmd, scope, depth, stdin_paths=stdin_paths)
        for r in cmd.redirects:
            if r.target is not None and r.op in (">", ">>", ">|", "&>", "&>>"):
                content = self.producer(cmd, scope, depth) if cmd.argv else ("", "")
                self.remember(self.joined(r.target, scope, depth), content, scope, depth)

    def _evaluated(self, texts: list[str], scope: Scope, depth: int) -> None:
        """Substitutions in text bash evaluates as arithmetic or as a name run."""
        for text in texts:
            if evaluated_code(text) and depth < MAX_DEPTH:
                self.expand(lex_text(text), scope, depth + 1)

    def remember(self, path: str, content: Content, scope: Scope, depth: int = 0) -> None:
        scope.files[file_key(path, scope.cwd, scope.fold)] = content
        if GIT_HOOK in classify(path, scope.cwd, scope.fold) and content[1]:  # git will run it
            self.run_text(content[1], scope.child(), depth)

    def run_file(self, path: str, scope: Scope, depth: int, code: bool = False) -> bool:
        """Judge a script file written earlier in the text; False when it was not."""
        content = scope.files.get(file_key(path, scope.cwd, scope.fold))
        if content is None:
            if key := opaque_key(path):
                self.add(key)
            return False
        marker, text = content
        if marker:
            self.add(opaque_key(marker) or "indirect_command")
        elif text and code:
            self._inspect(text, scope, depth,
                          Site(self.add, scope.cwd, self._noop, fold=scope.fold))
        elif text:
            self.run_text(text, scope.child(), depth)
        return True

    def stdin_input(self, cmd: Command, scope: Scope, depth: int) -> tuple[str, str | None]:
        """(marker, text) of what ``cmd`` reads on stdin: text when it can be read, a marker
        when it cannot, ("", None) for a plain file or nothing."""
        for r in cmd.redirects:
            if r.op in ("<<", "<<-") and r.heredoc is not None:
                return "", self.joined(r.heredoc, scope, depth)
            if r.op == "<<<" and r.target is not None:
                return "", self.joined(r.target, scope, depth)
            if r.op == "<" and r.target is not None:
                target = self.joined(r.target, scope, depth)
                known = scope.files.get(file_key(target, scope.cwd, scope.fold))
                if known is not None:
                    return known
                return next((m for m in target if m in MARKERS), ""), None
        if cmd.pipe_from is not None:
            return self.producer(cmd.pipe_from, scope, depth)
        return scope.stdin or ("", None)

    def producer(self, cmd: Command, scope: Scope, depth: int) -> Content:
        """(marker, text) of what ``cmd`` writes to its stdout."""
        return output_of(cmd, lambda: self.stdin_input(cmd, scope, depth))

    # ------------------------------------------------------------------ what runs
    def run(self, argv: list[str], cmd: Command, scope: Scope, depth: int,
            stdin_paths: list[str] | None = None, elevated: bool = False,
            via_xargs: bool = False) -> None:
        for _ in range(16):
            if not argv:
                cmd.argv = []
                return
            if key := opaque_key(argv[0]):
                self.add(key)
                cmd.argv = argv
                return
            if scope.fold and (folded := argv[0].casefold()) != argv[0] and not (
                    argv[0] in scope.aliases or argv[0] in self._functions
                    or base_name(folded) in SCOPE_BUILTINS):
                # where names ignore case, RM and /BIN/RM are found in PATH as rm (aliases,
                # functions and builtins are matched in their case; /usr/bin/cd & co. run
                # the builtin in a child and change no state here)
                argv = [folded, *argv[1:]]
            if is_pattern(argv[0]):  # /bin/r? -rf ~: what the glob matches runs
                self.add("indirect_command")
                for stand_in in stand_ins(argv, scope.cwd)[:max(0, self._stand_ins)]:
                    self._stand_ins -= 1  # a bounded number per check (asked anyway)
                    self.run(stand_in, cmd, scope, depth + 1, elevated=elevated)
                cmd.argv = argv
                return
            if argv[0] in scope.aliases and depth < MAX_DEPTH:
                cmd.argv = []
                inner = scope.child()  # without the alias, so that `alias ls='ls -l'` ends
                self.run_text(" ".join([inner.aliases.pop(argv[0]), *argv[1:]]), inner, depth)
                return
            if "/" in argv[0] and self.run_file(argv[0], scope, depth):
                cmd.argv = argv
                return
            if "{" in argv[0] and "," in argv[0]:  # {rm,-rf,~}: brace expansion
                expanded = [w for w in expand_braces(argv[0]) if w]  # empty words vanish
                if expanded != [argv[0]]:
                    argv = expanded + argv[1:]
                    continue
            if attaches(base_name(argv[0]), argv[1:]):  # strace -p is also a wrapper
                self.add("process_attach")
            wrapped = unwrap(base_name(argv[0]), argv[1:])
            if wrapped is None:
                break
            if prints_secret(argv):  # a runner that shows secrets (op run --no-masking -- ...)
                self.add("credential_read")
            elevated = elevated or wrapped.elevated
            if wrapped.cwd is not None:  # env -C DIR: the rest runs there
                scope = scope.child()
                moved = normalise(wrapped.cwd, scope.cwd)
                scope.cwd = moved if moved.startswith("/") else None
            if wrapped.login_shell:
                self.add("privilege_change")
            if wrapped.script is not None:
                cmd.argv = []
                self.run_text(wrapped.script, scope, depth)
                return
            argv = wrapped.argv
            stdin_paths = [*(stdin_paths or []), *wrapped.reads]
            self._variable_code(wrapped.assigns, scope, depth)
            if wrapped.via_xargs:
                via_xargs = True
                marker, text = self.stdin_input(cmd, scope, depth)
                item = (text or "").strip() if not marker else marker
                # find ~/.ssh -type f | xargs cat: the secret files listed are its arguments
                listing = self._input_listing(cmd, scope, depth)
                if wrapped.replace:
                    argv = [a.replace(wrapped.replace, listing[0] if listing else item)
                            for a in argv]
                else:
                    argv = argv + item.split() + listing
        cmd.argv = argv
        cmd.elevated = elevated
        name = base_name(argv[0])
        site = Site(self.add, scope.cwd,
                    lambda inner: self.run(inner, Command(), scope, depth, elevated=elevated),
                    command=name, elevated=elevated, via_xargs=via_xargs,
                    stdin_paths=stdin_paths or [], pipeline=self._pipeline(cmd),
                    links=scope.links, fold=scope.fold)
        redirected(site, site.stdin_paths)
        if name in SHELLS:
            self._shell(argv, cmd, scope, depth, elevated)
        elif name in ("eval", "trap", "source", "."):
            args = argv[2:] if argv[1:2] == ["--"] else argv[1:]  # eval -- CODE, trap -- ...
            if name == "eval":
                self.run_text(" ".join(args), scope, depth)
            elif name == "trap" and len(args) > 1:
                self.run_text(args[0], scope, depth)
            elif name != "trap" and args and args[0] in STDIN_FILES:
                self._code_from_stdin(cmd, scope, depth, elevated=False)
            elif name != "trap" and args:
                self.run_file(args[0], scope, depth)
        elif name in ("at", "batch"):
            files = [argv[k + 1] for k in range(1, len(argv) - 1) if argv[k] == "-f"]
            if files:
                self.run_file(files[0], scope, depth)
            else:
                self._code_from_stdin(cmd, scope, depth, elevated=False)
        elif name == "crontab":
            self._crontab(argv[1:], cmd, scope, depth)
        elif name == "ssh":
            i = 1
            while i < len(argv) and argv[i].startswith("-"):
                i += 2 if argv[i] in SSH_VALUED else 1
            if i + 1 < len(argv):  # a command for the remote shell
                self.run_text(" ".join(argv[i + 1:]), scope.child(), depth)
        elif name in SCOPE_BUILTINS:
            SCOPE_BUILTINS[name](scope, argv)
            self._variable_code([a for a in argv[1:] if "=" in a], scope, depth)
            if name == "read" and (listing := self._input_listing(cmd, scope, depth)):
                # find ~/.ssh -type f | while read f; do cat "$f"; done
                names = [a for a in argv[1:] if a.isidentifier()]
                if names:
                    scope.env[names[-1]] = listing[0]
        kind = interpreter(name)
        if kind is not None:
            self._interpreter(kind, argv, cmd, scope, depth, site)
        for code in option_code(name, argv[1:]):
            self.run_text(code, scope.child(), depth)
        if name in ("make", "gmake"):
            self._make(argv[1:], cmd, scope, depth)
        rules = [r for r in (file_rule(name), SYSTEM_RULES.get(name)) if r is not None]
        for rule in rules:
            rule(site, argv[1:])
        secret_printer(site, argv)
        reads(site, argv[1:])
        self._outputs(name, argv, cmd, scope, depth, site, judged=bool(rules))

    def _outputs(self, name: str, argv: list[str], cmd: Command, scope: Scope, depth: int,
                 site: Site, judged: bool) -> None:
        """Files the command writes through an output option, ``tee``, ``cp`` or ``mv``."""
        outputs = [argv[k + 1] for k in range(1, len(argv) - 1)
                   if argv[k] in OUTPUT_OPTIONS or name == "wget" and argv[k] == "-O"]
        outputs += [a.split("=", 1)[1] for a in argv[1:]
                    if a.startswith("--") and a.split("=", 1)[0] in OUTPUT_OPTIONS and "=" in a]
        for path in outputs:
            if not judged:
                site.write(path)
            self.remember(path, (FETCHED, None) if name in DOWNLOADERS else (OPAQUE, None),
                          scope)
        if name == "tee":
            content = self.stdin_input(cmd, scope, depth)
            for path in split_options(argv[1:])[1]:
                self.remember(path, content, scope)
        elif name in ("cp", "mv", "install", "ln"):
            operands = split_options(argv[1:])[1]
            if name == "ln" and len(operands) == 2:  # later writes to the link reach its target
                scope.links[file_key(operands[1], scope.cwd, scope.fold)] = normalise(
                    operands[0], scope.cwd)
            if len(operands) == 2:
                known = scope.files.get(file_key(operands[0], scope.cwd, scope.fold))
                if known is not None:
                    self.remember(operands[1], known, scope)

    def _pipeline(self, cmd: Command) -> list[list[str]]:
        earlier: list[list[str]] = []
        prev = cmd.pipe_from
        while prev is not None and len(earlier) < 32:
            inputs = [f for r in prev.redirects if r.op in ("<", "<>") and r.target is not None
                      for f in self._fields.get(id(r.target), (None, []))[1]]
            earlier.append(prev.argv or prev.words_text or [])
            if inputs:  # base64 < ~/.ssh/id_rsa | nc ...: what it reads, as arguments of "<"
                earlier.append(["<", *inputs])
            prev = prev.pipe_from
        return earlier

    def _shell(self, argv: list[str], cmd: Command, scope: Scope, depth: int,
               elevated: bool) -> None:
        args = argv[1:]
        if base_name(argv[0]) == "busybox":
            if args and base_name(args[0]) not in SHELLS:
                self.run(args, Command(), scope, depth, elevated=elevated)
                return
            args = args[1:]
        command_mode = reads_stdin = False
        i = 0
        while i < len(args):
            a = args[i]
            if a in ("--", "-"):
                i += 1
                break
            if a in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                i += 2
                continue
            if a.startswith("--"):
                i += 1
                continue
            if a[:1] in "-+" and len(a) > 1:
                command_mode = command_mode or "c" in a
                reads_stdin = reads_stdin or a[:1] == "-" and "s" in a
                i += 1
                continue
            break
        rest = args[i:]
        if command_mode:  # bash -c CODE NAME ARGS...: $0, $1, ... are NAME, ARGS
            inner = scope.child()
            inner.env.update({str(n): a for n, a in enumerate(rest[1:10])})
            self.run_text(rest[0] if rest else "", inner, depth)
            return
        if rest and not reads_stdin and rest[0] not in STDIN_FILES:
            self.run_file(rest[0], scope, depth)
            return
        self._code_from_stdin(cmd, scope, depth, elevated)

    def _code_from_stdin(self, cmd: Command, scope: Scope, depth: int, elevated: bool) -> None:
        marker, text = self.stdin_input(cmd, scope, depth)
        if text is not None and not marker:
            self.run_text(text, scope.child(), depth)
        elif marker:
            self.add(opaque_key(marker) or "indirect_command")
        elif elevated:
            self.add("privilege_change")

    def _inspect(self, code: str, scope: Scope, depth: int, site: Site) -> None:
        def shell(text: str) -> None:
            self.script(text, scope.child(), depth + 1)

        inspect_code(code, self.add, shell, site.write, lambda path: site.delete(path, True))

    def _interpreter(self, kind: str, argv: list[str], cmd: Command, scope: Scope, depth: int,
                     site: Site) -> None:
        args = argv[1:]
        if kind in ("python", "pypy"):  # python -m hermes_agent config set, -m tarfile -c
            python_modules(site, args)
        code, reads_stdin = code_argument(kind, args)
        script = next((a for a in args if not a.startswith("-")), None)
        if code is None and script in STDIN_FILES:  # perl /dev/stdin <<< CODE
            reads_stdin = True
        elif code is None and not reads_stdin and script is not None and script != code:
            self.run_file(script, scope, depth, code=True)
        if code is None and reads_stdin:
            marker, text = self.stdin_input(cmd, scope, depth)
            if marker:
                self.add(opaque_key(marker) or "indirect_command")
            code = text
        if code is None:
            return
        if key := opaque_key(code):
            self.add(key)
        if kind in ("pwsh", "powershell") and any(
                a.lower() in ("-encodedcommand", "-ec", "-e") for a in args):
            self.add("indirect_command")
        self._inspect(code, scope, depth, site)
        if base_name(argv[0]).startswith("ipython"):  # ipython -c '!rm -rf ~'
            for text in ipython_shell(code):
                self.run_text(text, scope.child(), depth)
        reads_in_code(site, string_literals(code))
        if kind == "perl" and "i" in short_flags([a for a in args if a.startswith("-")]):
            for target in split_options(args)[1]:
                if target != code:
                    site.write(target)


__all__ = ["Analyser", "Scope"]
