"""Code a command leaves behind to run later, outside this check: crontab entries and
command lines stored in variables that other programs run (``PAGER``, ``GIT_SSH_COMMAND``)."""

from __future__ import annotations

import re

from .host import AnalyserHost
from .parse import Command
from .paths import file_key
from .rules_files import short_flags, split_options
from .scope import STDIN_FILES, Scope
from .shell_state import variable_code
from .site import opaque_key


class LaterCode:
    """Mixed into :class:`.analyse.Analyser`."""

    def _variable_code(self: AnalyserHost, assignments: list[str], scope: Scope,
                       depth: int) -> None:
        """``PAGER='cmd'``, ``GIT_SSH_COMMAND=...``, ``BASH_ENV=f``: code run later."""
        for assignment in assignments:
            name, _, value = assignment.partition("=")
            found = variable_code(name, value)
            if found is None:
                continue
            kind, text = found
            if kind == "code":
                self.run_text(text, scope.child(), depth)
            elif kind == "file":
                self.run_file(text, scope, depth)
            else:
                self.add("indirect_command")

    def _crontab(self: AnalyserHost, args: list[str], cmd: Command, scope: Scope,
                 depth: int) -> None:
        """A crontab installed from stdin or a file: its commands will run."""
        options, operands = split_options(args, frozenset({"-u"}))
        if any(c in short_flags(options) for c in "lre") or len(operands) > 1:
            return
        if operands and operands[0] != "-":
            marker, text = scope.files.get(file_key(operands[0], scope.cwd, scope.fold),
                                           ("", None))
        else:
            marker, text = self.stdin_input(cmd, scope, depth)
        if marker:
            self.add(opaque_key(marker) or "indirect_command")
        for line in (text or "").splitlines():
            fields = line.split(None, 1 if line.startswith("@") else 5)
            if line.strip() and not line.lstrip().startswith("#") and "=" not in fields[0]:
                self.run_text(fields[-1], scope.child(), depth)

    def _make(self: AnalyserHost, args: list[str], cmd: Command, scope: Scope, depth: int) -> None:
        """``make -f -`` (a makefile from stdin or written earlier), ``make --eval=...``:
        its recipes and ``$(shell ...)`` calls run."""
        texts = [a.split("=", 1)[1] for a in args if a.startswith("--eval=")]
        texts += [args[k + 1] for k, a in enumerate(args[:-1]) if a in ("--eval", "-E")]
        for k, a in enumerate(args[:-1]):
            if a in ("-f", "--file", "--makefile"):
                if args[k + 1] in STDIN_FILES:
                    marker, text = self.stdin_input(cmd, scope, depth)
                else:
                    marker, text = scope.files.get(file_key(args[k + 1], scope.cwd, scope.fold),
                                                   ("", None))
                if marker:
                    self.add(opaque_key(marker) or "indirect_command")
                texts.append(text or "")
        for text in texts:
            for line in text.splitlines():
                if line.startswith("\t") or ";" in line and ":" in line.split(";", 1)[0]:
                    self.run_text(line.split(";", 1)[1] if not line.startswith("\t") else line,
                                  scope.child(), depth)
                for call in re.findall(r"\$[({]shell\s+([^)}]*)[)}]", line):
                    self.run_text(call, scope.child(), depth)

