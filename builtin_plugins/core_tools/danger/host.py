"""The analyser as the parts mixed into it (:mod:`.expansion`, :mod:`.later`) see it: the
methods they call on ``self``. They are typed against this, so they need not import
:mod:`.analyse`, whose :class:`~.analyse.Analyser` is built from them."""

from __future__ import annotations

from typing import Protocol

from .lexer import Part, Word
from .parse import Command
from .scope import Content, Scope


class AnalyserHost(Protocol):
    _listed_files: dict[str, list[str]]

    def add(self, key: str) -> None: ...

    def script(self, source: str, scope: Scope, depth: int) -> list[Command]: ...

    def run_text(self, text: str, scope: Scope, depth: int) -> None: ...

    def expand(self, word: Word, scope: Scope, depth: int) -> list[str]: ...

    def joined(self, word: Word, scope: Scope, depth: int) -> str: ...

    def run_file(self, path: str, scope: Scope, depth: int, code: bool = False) -> bool: ...

    def stdin_input(self, cmd: Command, scope: Scope, depth: int) -> tuple[str, str | None]: ...

    def producer(self, cmd: Command, scope: Scope, depth: int) -> Content: ...

    # the mixins' own methods, called on the whole analyser
    def _plain_value(self, name: str, part: Part, scope: Scope, depth: int) -> str: ...

    def _listing(self, cmd: Command | None, scope: Scope) -> list[str]: ...
