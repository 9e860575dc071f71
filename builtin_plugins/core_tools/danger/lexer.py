"""A bash-aware lexer: words (with their quoting and expansions), operators and heredoc bodies.

Quotes are removed as bash removes them; what bash would expand is kept as a typed part
(variable, command substitution, arithmetic, tilde) so the analyser can resolve it or say it
cannot. Unterminated quotes and substitutions run to the end of the text instead of failing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LIT, VAR, SUB, ARITH, TILDE = "lit", "var", "sub", "arith", "tilde"
META = frozenset(" \t\n;&|()<>")
#: operators, longest first
OPERATORS = (";;&", "&>>", "<<<", "<<-", ";;", ";&", "&&", "||", "|&", "&>", ">>", ">|", ">&",
             "<&", "<<", "<>", ";", "&", "|", "(", ")", "<", ">")
REDIRECTS = frozenset({"&>>", "<<<", "<<-", "&>", ">>", ">|", ">&", "<&", "<<", "<>", "<", ">"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FD = re.compile(r"\d+(?=[<>])(?![<>]\()")
_PARAM = re.compile(r"(#?)([A-Za-z_][A-Za-z0-9_]*|\d+|[@*#?$!-])(.*)", re.S)
_ANSI_C = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)",
                     re.S)
_ANSI_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n",
                "r": "\r", "t": "\t", "v": "\v"}


@dataclass(slots=True)
class Part:
    kind: str  # lit | var | sub | arith | tilde
    value: str  # text, variable name, substitution source, or tilde user
    quoted: bool = False
    default: str | None = None  # ${NAME:-default}: the default's source text
    plain: bool = True  # False for ${#x}, ${x%y}, ${!x}: a value derived from the variable
    modifier: str = ""  # what follows the name in ${...}: "%pat", "[@]", ":0:2"; "!" for ${!x}
    procsub: str = ""  # "<" for <( ), ">" for >( )
    source: str = ""  # the text inside ${ }: substitutions in it run too


@dataclass(slots=True)
class Word:
    parts: list[Part]

    @property
    def literal(self) -> str | None:
        """The word's text when it has no expansion at all."""
        if all(p.kind == LIT for p in self.parts):
            return "".join(p.value for p in self.parts)
        return None


@dataclass(slots=True)
class Op:
    text: str
    heredoc: Word | None = None  # filled for << and <<- once the body has been read
    quoted_delimiter: bool = False
    fd: str = ""  # the descriptor a redirection names (3 in 3<<<)


@dataclass
class _Pending:
    op: Op
    delimiter: str
    strip_tabs: bool


def decode_ansi_c(text: str) -> str:
    """The value of a ``$'...'`` string."""

    def one(match: re.Match[str]) -> str:
        esc = match.group(1)
        head = esc[0]
        if head in _ANSI_SIMPLE and len(esc) == 1:
            return _ANSI_SIMPLE[head]
        if head in "xuU" and len(esc) > 1:
            return chr(min(int(esc[1:], 16), 0x10FFFF))
        if head.isdigit():
            return chr(int(esc, 8) & 0xFF)
        if head == "c" and len(esc) == 2:
            return chr(ord(esc[1]) & 0x1F)
        return esc

    return _ANSI_C.sub(one, text)


class Lexer:
    def __init__(self, source: str):
        self.s = source
        self.n = len(source)
        self.i = 0
        self.tokens: list[Word | Op] = []
        self._pending: list[_Pending] = []

    # ------------------------------------------------------------------ top level
    def run(self) -> list[Word | Op]:
        s = self.s
        while self.i < self.n:
            c = s[self.i]
            if c in " \t\r":
                self.i += 1
            elif c == "\\" and s.startswith("\\\n", self.i):
                self.i += 2
            elif c == "\n":
                self.tokens.append(Op("\n"))
                self.i += 1
                self._read_heredocs()
            elif c == "#":
                end = s.find("\n", self.i)
                self.i = self.n if end < 0 else end
            elif (op := self._operator()) is not None:
                self.tokens.append(op)
            else:
                start = self.i
                word = self.word(META)
                prev = self.tokens[-1] if self.tokens else None
                if isinstance(prev, Op) and prev.text in ("<<", "<<-"):
                    raw = s[start:self.i]  # not expanded: <<$X ends at a line "$X"
                    prev.quoted_delimiter = any(q in raw for q in "'\"\\")
                    self._pending.append(_Pending(prev, heredoc_delimiter(raw),
                                                  prev.text == "<<-"))
                self.tokens.append(word)
        self._read_heredocs()
        return self.tokens

    def _operator(self) -> Op | None:
        s, i = self.s, self.i
        fd = _FD.match(s, i)
        start = fd.end() if fd else i
        if s.startswith(("<(", ">("), start):
            return None
        for op in OPERATORS:
            if s.startswith(op, start):
                if fd and op not in REDIRECTS:
                    return None
                self.i = start + len(op)
                return Op(op, fd=fd.group() if fd else "")
        return None

    def _read_heredocs(self) -> None:
        for pending in self._pending:
            lines: list[str] = []
            while self.i < self.n:
                end = self.s.find("\n", self.i)
                line = self.s[self.i:] if end < 0 else self.s[self.i:end]
                self.i = self.n if end < 0 else end + 1
                if pending.strip_tabs:
                    line = line.lstrip("\t")
                if line == pending.delimiter:
                    break
                lines.append(line)
            body = "\n".join(lines)
            pending.op.heredoc = (Word([Part(LIT, body, quoted=True)])
                                  if pending.op.quoted_delimiter else Lexer(body).quoted_text())
        self._pending.clear()

    # ------------------------------------------------------------------ words
    def word(self, stop: frozenset[str]) -> Word:
        s = self.s
        parts: list[Part] = []
        buf: list[str] = []

        def flush() -> None:
            if buf:
                parts.append(Part(LIT, "".join(buf)))
                buf.clear()

        start = self.i
        while self.i < self.n:
            c = s[self.i]
            if c in stop:
                if c in "<>" and self.i == start and s.startswith("(", self.i + 1):
                    end = self._matching(self.i + 2, "(", ")")
                    parts.append(Part(SUB, s[self.i + 2:end], procsub=c))
                    self.i = end + 1
                    continue
                if c == "(" and buf and _is_assignment_prefix("".join(buf)) and not parts:
                    end = self._matching(self.i + 1, "(", ")")  # NAME=( array )
                    buf.append(s[self.i:end + 1])
                    self.i = end + 1
                    continue
                break
            if c == "\\":
                if s.startswith("\\\n", self.i):
                    self.i += 2
                    continue
                flush()
                parts.append(Part(LIT, s[self.i + 1:self.i + 2] or "\\", quoted=True))
                self.i += 2
            elif c == "'":
                end = s.find("'", self.i + 1)
                end = self.n if end < 0 else end
                flush()
                parts.append(Part(LIT, s[self.i + 1:end], quoted=True))
                self.i = end + 1
            elif c == "$" and s.startswith("$'", self.i):
                end = self._ansi_end(self.i + 2)
                flush()
                parts.append(Part(LIT, decode_ansi_c(s[self.i + 2:end]), quoted=True))
                self.i = end + 1
            elif c == '"' or s.startswith('$"', self.i):
                flush()
                self.i += 1 if c == '"' else 2
                parts.extend(self._double_quoted(closing='"'))
            elif c == "$":
                flush()
                parts.append(self._dollar(quoted=False))
            elif c == "`":
                flush()
                parts.append(self._backtick())
            elif c == "~" and self.i == start or c == "~" and buf and buf[-1] in "=:" and not parts:
                flush()
                m = re.compile(r"~([A-Za-z0-9_.-]*)").match(s, self.i)
                assert m is not None
                parts.append(Part(TILDE, m.group(1)))
                self.i = m.end()
            else:
                buf.append(c)
                self.i += 1
        flush()
        return Word(parts)

    def quoted_text(self) -> Word:
        """The whole text read as the inside of double quotes (heredoc bodies, defaults)."""
        return Word(self._double_quoted(closing=None))

    def _double_quoted(self, closing: str | None) -> list[Part]:
        s = self.s
        parts: list[Part] = []
        buf: list[str] = []

        def flush() -> None:
            if buf:
                parts.append(Part(LIT, "".join(buf), quoted=True))
                buf.clear()

        while self.i < self.n:
            c = s[self.i]
            if c == closing:
                self.i += 1
                break
            if c == "\\" and self.i + 1 < self.n and s[self.i + 1] in '$`"\\\n':
                if s[self.i + 1] != "\n":
                    buf.append(s[self.i + 1])
                self.i += 2
            elif c == "$" and self.i + 1 < self.n and (s[self.i + 1] in "({" or
                                                       s[self.i + 1].isalnum() or
                                                       s[self.i + 1] in "_@*#?$!-"):
                flush()
                parts.append(self._dollar(quoted=True))
            elif c == "`":
                flush()
                parts.append(self._backtick())
            else:
                buf.append(c)
                self.i += 1
        flush()
        if not parts:
            parts.append(Part(LIT, "", quoted=True))
        return parts

    def _dollar(self, quoted: bool) -> Part:
        s, i = self.s, self.i
        if s.startswith("$((", i):
            end = self._matching(i + 3, "(", ")", depth=2)
            if end < self.n and s[end - 1] == ")":
                self.i = end + 1
                return Part(ARITH, s[i + 3:end - 1], quoted)
            # not closed by "))": a command substitution that starts with a subshell
        if s.startswith("$(", i):
            end = self._matching(i + 2, "(", ")")
            self.i = end + 1
            return Part(SUB, s[i + 2:end], quoted)
        if s.startswith("${", i):
            end = self._matching(i + 2, "{", "}")
            self.i = end + 1
            return _parameter(s[i + 2:end], quoted)
        m = _NAME.match(s, i + 1)
        if m:
            self.i = m.end()
            return Part(VAR, m.group(), quoted)
        if i + 1 < self.n and (s[i + 1].isdigit() or s[i + 1] in "@*#?$!-"):
            self.i = i + 2
            return Part(VAR, s[i + 1], quoted)
        self.i = i + 1
        return Part(LIT, "$", quoted)

    def _backtick(self) -> Part:
        s = self.s
        j = self.i + 1
        while j < self.n and s[j] != "`":
            j += 2 if s[j] == "\\" else 1
        inner = re.sub(r"\\([`$\\])", r"\1", s[self.i + 1:min(j, self.n)])
        self.i = j + 1
        return Part(SUB, inner)

    def _ansi_end(self, j: int) -> int:
        s = self.s
        while j < self.n and s[j] != "'":
            j += 2 if s[j] == "\\" else 1
        return min(j, self.n)

    def _matching(self, j: int, open_: str, close: str, depth: int = 1) -> int:
        """Index of the ``close`` that balances an already-open ``open_`` (quotes respected);
        the end of the text when it is never closed."""
        s = self.s
        while j < self.n:
            c = s[j]
            if c == "\\":
                j += 2
                continue
            if c == "'" and open_ == "(":
                k = s.find("'", j + 1)
                j = self.n if k < 0 else k + 1
                continue
            if c == '"':
                k = j + 1
                while k < self.n and s[k] != '"':
                    k += 2 if s[k] == "\\" else 1
                j = k + 1
                continue
            if c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    return j
            j += 1
        return self.n


def heredoc_delimiter(raw: str) -> str:
    """The line that ends a heredoc introduced by the word ``raw``: quotes removed, nothing
    expanded (bash ends ``<<$X`` at a line ``$X`` and ``<<~`` at a line ``~``)."""
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == "\\":
            out.append(raw[i + 1:i + 2].replace("\n", ""))
            i += 2
        elif c == "'":
            end = raw.find("'", i + 1)
            end = n if end < 0 else end
            out.append(raw[i + 1:end])
            i = end + 1
        elif raw.startswith("$'", i):
            lexer = Lexer(raw)
            end = lexer._ansi_end(i + 2)
            out.append(decode_ansi_c(raw[i + 2:end]))
            i = end + 1
        elif c == '"' or raw.startswith('$"', i):
            i += 1 if c == '"' else 2
            while i < n and raw[i] != '"':
                if raw[i] == "\\" and raw[i + 1:i + 2] in ('$', '`', '"', "\\", "\n"):
                    out.append(raw[i + 1].replace("\n", ""))
                    i += 2
                else:
                    out.append(raw[i])
                    i += 1
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _is_assignment_prefix(text: str) -> bool:
    m = _NAME.match(text)
    return m is not None and text[m.end():] in ("=", "+=")


def _parameter(inner: str, quoted: bool) -> Part:
    """A ``${...}`` expansion: plain, with a default, or derived (unknown)."""
    if inner.startswith("!") and _NAME.fullmatch(inner[1:]):
        return Part(VAR, inner[1:], quoted, plain=False, modifier="!")
    m = _PARAM.fullmatch(inner)
    if not m or m.group(1) or inner.startswith("!"):
        return Part(VAR, m.group(2) if m else "", quoted, plain=False, modifier="length",
                    source=inner)
    name, rest = m.group(2), m.group(3)
    if not rest:
        return Part(VAR, name, quoted)
    for op in (":-", "-", ":=", "="):
        if rest.startswith(op):
            return Part(VAR, name, quoted, default=rest[len(op):])
    return Part(VAR, name, quoted, plain=False, modifier=rest, source=inner)


def lex(source: str) -> list[Word | Op]:
    return Lexer(source).run()


def lex_word(source: str) -> Word:
    """``source`` read as one unquoted word (quotes removed, no splitting on blanks)."""
    return Lexer(source).word(frozenset())


def lex_text(source: str) -> Word:
    """``source`` read as double-quoted text (no word splitting)."""
    return Lexer(source).quoted_text()


__all__ = ["ARITH", "LIT", "SUB", "TILDE", "VAR", "Lexer", "Op", "Part", "Word", "decode_ansi_c",
           "heredoc_delimiter", "lex", "lex_text", "lex_word"]
