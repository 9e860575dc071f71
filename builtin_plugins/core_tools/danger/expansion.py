"""Expanding variables and command substitutions, mixed into the analyser: a value assigned
earlier in the text, ``${x:-default}`` and its operators, ``$(cmd)`` whose output is known
(``$(which rm)``), and listings of files (``$(find ~/.ssh)``, ``< <(find ...)``) a reader is
handed next."""

from __future__ import annotations

from .host import AnalyserHost
from .lexer import VAR, Part, lex_text, lex_word
from .listings import listed, secret_listed
from .params import element, modify
from .parse import Command
from .paths import CREDENTIAL, KEY_FILE, classify, current_hermes_home, file_key
from .rules_secrets import prints_secret
from .scope import QUERIES, SELECTORS, Scope
from .site import HERMES_PID, MARKERS, OPAQUE, SECRET, base_name


class Expansions:
    """Mixed into :class:`.analyse.Analyser`."""

    def _variable(self: AnalyserHost, part: Part, scope: Scope, depth: int) -> str | list[str]:
        """A variable's value; a list for the elements of ``${array[@]}``."""
        name, modifier = part.value, part.modifier
        if "$" in part.source or "`" in part.source:  # ${x:+$(cmd)}, ${x/a/$(cmd)}: it runs
            if modifier.startswith((":+", "+")):  # the alternative's value, like a default
                value = self._plain_value(name, Part(VAR, name), scope, depth)
                alternative = lex_text(modifier.split("+", 1)[1]) if part.quoted else lex_word(
                    modifier.split("+", 1)[1])
                text = self.joined(alternative, scope, depth)
                return text if value else ""
            self.expand(lex_text(part.source), scope, depth)
            return OPAQUE
        if modifier == "!":  # ${!x}: the variable named by x's value
            name, modifier = scope.env.get(name, OPAQUE), ""
        if modifier.startswith("["):
            return element(scope.arrays.get(name), modifier)
        value = self._plain_value(name, part, scope, depth)
        if not modifier:
            return value
        if OPAQUE in value or any(m in value for m in MARKERS):
            return OPAQUE
        changed = modify(value, modifier)
        return OPAQUE if changed is None else changed

    def _plain_value(self: AnalyserHost, name: str, part: Part, scope: Scope, depth: int) -> str:
        if name in scope.env:
            return scope.env[name]
        if name == "HOME":
            return "~"
        if name == "HERMES_HOME":
            return current_hermes_home() or "~/.hermes"
        if name == "PWD" and scope.cwd:
            return scope.cwd
        if name == "IFS":
            return " "
        if name == "PPID":
            return HERMES_PID
        if name == "HISTFILE":  # the shell's history file, where pasted keys end up
            return "~/.bash_history"
        if part.default is not None:
            default = lex_text(part.default) if part.quoted else lex_word(part.default)
            return self.joined(default, scope, depth)
        return OPAQUE

    def _substitution(self: AnalyserHost, part: Part, scope: Scope, depth: int) -> str | list[str]:
        """The output of ``$(...)``, a marker when unknown; a list of words (the marker, then
        the secret files it may list) for a quoted ``"$(find ~/.ssh ...)"``."""
        inner = scope.child()
        if part.procsub == ">":  # >(sh): reads what the command writes, unknown here
            inner.stdin = (OPAQUE, None)
        commands = self.script(part.value, inner, depth + 1)
        if not commands:
            return ""
        last = commands[-1]
        marker, text = self.producer(last, scope, depth)
        if part.procsub:  # <( ): a file holding the output, judged when it is run
            path = f"/dev/fd/{63 + len(scope.files)}"
            scope.files[path] = (marker, text)
            if listing := self._listing(last, inner):  # while read f ...; done < <(find ...)
                self._listed_files[path] = listing
            return path
        words = last.words_text
        if words and base_name(words[0]) in QUERIES and len(words) > 1:
            return base_name(words[-1])  # $(which rm) -> rm
        reads_secret = any(classify(a, scope.cwd, scope.fold) & {CREDENTIAL, KEY_FILE}
                           for c in commands for a in (c.argv or [])[1:]) or any(
            prints_secret(c.argv or []) for c in commands)  # $(gh auth token)
        if text is not None and not marker:
            return text.strip() + (SECRET if reads_secret else "")
        value = (marker or OPAQUE) + (SECRET if reads_secret else "")
        listing = self._listing(last, inner)
        if not listing:
            return value
        # cat $(find ~/.ssh -type f): the secret files it may list are more words (after the
        # marker: run as a command, it still can't be told); quoted, the one word it gives may
        # be any of them (cat "$(find ~/.ssh -name id_rsa)")
        return [value, *listing] if part.quoted else value + " " + " ".join(listing)

    def _listing(self: AnalyserHost, cmd: Command | None, scope: Scope) -> list[str]:
        """The secret files among those ``cmd`` lists on its output (``find ~/.ssh``, also
        through filters that pass lines on: ``find ~ -name '*.pem' | grep -v test``)."""
        for _ in range(8):
            if cmd is None or not cmd.argv:
                return []
            if base_name(cmd.argv[0]) not in SELECTORS:
                break
            cmd = cmd.pipe_from
        else:
            return []
        found = listed(cmd.argv)
        return secret_listed(found, lambda p: classify(p, scope.cwd, scope.fold)) if found \
            else []

    def _input_listing(self: AnalyserHost, cmd: Command, scope: Scope, depth: int) -> list[str]:
        """The secret files listed on ``cmd``'s stdin (a pipe from ``find``, or ``< <(find)``)."""
        for r in cmd.redirects:
            if r.op in ("<<", "<<-", "<<<"):
                return []
            if r.op == "<" and r.target is not None:
                target = file_key(self.joined(r.target, scope, depth), scope.cwd, scope.fold)
                return self._listed_files.get(target, [])
        return self._listing(cmd.pipe_from, scope)
