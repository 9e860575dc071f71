"""Simple commands from the lexer's tokens: assignments, words, redirections, pipelines and
the function each command is defined in."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .lexer import REDIRECTS, Op, Part, Word, lex

#: reserved words that may start a command and are not the command itself
_LEADING = frozenset({"if", "then", "elif", "else", "do", "while", "until", "!", "time", "fi",
                      "done", "esac", "{", "}", "[[", "coproc"})
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?)\+?=")
_SEPARATORS = frozenset({";", ";;", ";&", ";;&", "&&", "||", "&", "\n"})
#: compound commands: the word that opens one -> the word that closes it
_OPENERS = {"if": "fi", "while": "done", "until": "done", "for": "done", "select": "done",
            "case": "esac", "{": "}"}
_CLOSERS = frozenset(_OPENERS.values())


@dataclass(eq=False)
class Redirect:
    op: str
    target: Word | None
    heredoc: Word | None = None
    fd: str = ""  # 3 in 3<<< ...: the descriptor it opens


@dataclass(eq=False)
class Command:
    """One simple command. ``kind`` is ``simple``, or ``header`` for ``for``/``case`` lines and
    ``case`` patterns (their words are not run, but their substitutions are)."""

    words: list[Word] = field(default_factory=list)
    assigns: list[tuple[str, Word | None]] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    pipe_from: "Command | None" = None
    terminator: str = ""
    function: str | None = None
    kind: str = "simple"
    argv: list[str] | None = None  # set by the analyser: what runs, after unwrapping
    words_text: list[str] = field(default_factory=list)  # set by the analyser: the expanded words
    elevated: bool = False  # set by the analyser: behind sudo / doas / su

    @property
    def empty(self) -> bool:
        return not (self.words or self.assigns or self.redirects)


def _split_assignment(word: Word) -> tuple[str, Word] | None:
    first = word.parts[0] if word.parts else None
    if first is None or first.kind != "lit" or first.quoted:
        return None
    m = _ASSIGNMENT.match(first.value)
    if not m:
        return None
    rest = first.value[m.end():]
    value = ([Part("lit", rest)] if rest else []) + word.parts[1:]
    return m.group(1), Word(value or [Part("lit", "")])


class _Parser:
    def __init__(self, tokens: list[Word | Op]):
        self.tokens = tokens
        self.commands: list[Command] = []
        self.functions: list[str | None] = []  # stack of open { } groups: function name or None
        self.pending_function: str | None = None
        self.case_depth = 0
        self.paren_depth = 0
        self.cur = Command()
        self.skip_header = False
        #: compound commands on the right of a pipe: [closer, nesting, the pipe's writer];
        #: every command inside reads that pipe (x | while ...; do sh; done)
        self.inherit: list[list] = []
        #: open while/until loops: where their first command goes in ``commands``; and the
        #: loop ``done`` just closed, whose redirections follow (done < <(find ...))
        self.loops: list[int | None] = []
        self.closed_loop: int | None = None

    def _open(self, closer: str) -> None:
        for entry in self.inherit:
            if entry[0] == closer:
                entry[1] += 1
        if self.cur.pipe_from is not None:
            self.inherit.append([closer, 1, self.cur.pipe_from])

    def _close(self, closer: str) -> None:
        for entry in self.inherit:
            if entry[0] == closer:
                entry[1] -= 1
        self.inherit = [entry for entry in self.inherit if entry[1] > 0]

    def run(self) -> list[Command]:
        i = 0
        toks = self.tokens
        while i < len(toks):
            tok = toks[i]
            if isinstance(tok, Word) and tok.literal == "coproc" and self.cur.empty and i + 2 < len(
                    toks) and isinstance(toks[i + 1], Word) and _opens_group(toks[i + 2]):
                i += 2  # coproc NAME { ...; }: NAME names the co-process, it is not run
                continue
            if isinstance(tok, Word):
                self._word(tok)
            elif tok.text in REDIRECTS:
                nxt = toks[i + 1] if i + 1 < len(toks) else None
                target = nxt if isinstance(nxt, Word) else None
                if target is not None:
                    i += 1
                self.cur.redirects.append(Redirect(tok.text, target, tok.heredoc, tok.fd))
            elif tok.text == "(":
                nxt = toks[i + 1] if i + 1 < len(toks) else None
                if (len(self.cur.words) == 1 and not self.cur.assigns and isinstance(nxt, Op)
                        and nxt.text == ")"):
                    self.pending_function = self.cur.words[0].literal or "\x00"
                    self.cur = Command()
                    i += 2
                    continue
                self._open(")")
                self._finish("(")
                self.paren_depth += 1
            elif tok.text == ")":
                if self.paren_depth == 0 and self.case_depth:
                    self.cur.kind = "header"  # a case pattern
                else:
                    self.paren_depth = max(0, self.paren_depth - 1)
                    self._close(")")
                self._finish(")")
            elif tok.text == "\n" and self.cur.empty and self.cur.pipe_from is not None:
                pass  # a | at the end of a line: the pipeline goes on on the next line
            elif tok.text in ("|", "|&"):
                prev = self.cur
                self._finish("|")
                self.cur.pipe_from = prev
            else:
                self._finish(tok.text)
            i += 1
        self._finish("")
        return self.commands

    def _word(self, word: Word) -> None:
        cur = self.cur
        text = word.literal
        if not cur.words and not cur.assigns and cur.kind == "simple":
            if text in _OPENERS:
                self._open(_OPENERS[text])
                if _OPENERS[text] == "done":
                    self.loops.append(len(self.commands) if text in ("while", "until") else None)
            elif text in _CLOSERS:
                self._close(text)
                if text == "done" and self.loops:
                    self.closed_loop = self.loops.pop()
            if text in ("{", "}"):
                if text == "{":
                    self.functions.append(self.pending_function)
                    self.pending_function = None
                elif self.functions:
                    self.functions.pop()
                return
            if text == "function":
                cur.kind = "function"
                return
            if text in ("for", "select", "case"):
                cur.kind = "header"
                if text == "case":
                    self.case_depth += 1
                    return
                self.skip_header = True
                return
            if text == "esac":
                self.case_depth = max(0, self.case_depth - 1)
                return
            if text in _LEADING:
                return
            assignment = _split_assignment(word)
            if assignment is not None:
                cur.assigns.append(assignment)
                return
        if cur.kind == "function":
            self.pending_function = text or "\x00"
            cur.kind = "simple"
            return
        if cur.kind == "header" and self.skip_header:
            self.skip_header = False
            if text:
                cur.assigns.append((text, None))  # the loop variable: unknown values
            return
        cur.words.append(word)

    def _finish(self, terminator: str) -> None:
        cur = self.cur
        self.skip_header = False
        loop, self.closed_loop = self.closed_loop, None
        if loop is not None and loop < len(self.commands) and not cur.words and not cur.assigns:
            # `while read f; do ...; done < FILE`: the loop's stdin is read by its condition
            first = self.commands[loop]
            moved = [r for r in cur.redirects if r.op in ("<", "<<", "<<-", "<<<") and not r.fd]
            first.redirects.extend(moved)
            cur.redirects = [r for r in cur.redirects if r not in moved]
        if not cur.empty:
            cur.terminator = terminator
            cur.function = next((f for f in reversed(self.functions) if f), None)
            self.commands.append(cur)
        self.cur = Command()
        if self.inherit:
            self.cur.pipe_from = self.inherit[-1][2]


def _opens_group(tok: Word | Op) -> bool:
    return tok.literal == "{" if isinstance(tok, Word) else tok.text == "("


def parse(source: str) -> list[Command]:
    """The simple commands of ``source`` in the order they appear."""
    return _Parser(lex(source)).run()
