"""Owner: the builtin plugin `gateway`. A reply's text on its way to a chat: cut into pieces
a platform accepts (:func:`split_message`), or shown while the model writes it, by editing one
message as it grows (:class:`EditedReply`, the stream the gateway uses for an adapter with
``supports_streaming``). Not part of the contract docs/api.md locks (docs/kits.md)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from hermes_agent.api import PlatformAdapter, ReplyStream, SendResult


class EditedReply(ReplyStream):
    """The default stream: the first text is sent as a message that is then edited as the
    reply grows (at most every ``interval`` seconds); the final reply replaces it, with any
    part beyond the platform's limit sent as further messages."""

    interval = 1.0

    def __init__(self, adapter: PlatformAdapter, chat_id: str, reply_to: str | None,
                 metadata: dict[str, Any] | None):
        self.adapter, self.chat_id, self.reply_to = adapter, chat_id, reply_to
        self.metadata = metadata or {}
        self.text, self.message_id, self.shown, self.last_edit = "", None, "", 0.0
        self.broken = False  # the platform refused a send or an edit: stop streaming

    async def push(self, text: str) -> None:
        self.text += text
        limit = self.adapter.max_message_length
        if self.broken or not self.text.strip() or (limit and len(self.text) > limit):
            return
        if self.message_id is None:
            await self._show(await self.adapter.send(self.chat_id, self.text, self.reply_to,
                                                     self.metadata))
        elif time.monotonic() - self.last_edit >= self.interval:
            await self._show(await self.adapter.edit_message(self.chat_id, self.message_id,
                                                             self.text, self.metadata))

    async def _show(self, result: SendResult) -> None:
        if not result.success:
            self.broken = True
            return
        self.message_id = self.message_id or result.message_id
        self.shown, self.last_edit = self.text, time.monotonic()
        if self.message_id is None:
            self.broken = True  # sent, but cannot be edited without its id

    async def finish(self, text: str) -> list[str] | None:
        if self.message_id is None:
            return None  # nothing shown yet: a plain send
        formatted = self.adapter.format_message(text)
        pieces = split_message(formatted, self.adapter.max_message_length) or [formatted]
        if pieces[0] != self.shown:
            result = await self.adapter.edit_message(self.chat_id, self.message_id, pieces[0],
                                                     self.metadata)
            if not result.success:  # the streamed text stays; the whole reply follows it
                return pieces
        return pieces[1:]


_FENCE = re.compile(r"^\s*(```|~~~)")


def split_message(text: str, limit: int, len_fn: Callable[[str], int] | None = None) -> list[str]:
    """``text`` in pieces of at most ``limit`` (0: no limit): whole paragraphs and code blocks
    packed together; a longer block is cut at lines, then spaces, and a code block cut in two
    is closed and reopened with its fence."""
    size = len_fn or len
    if limit <= 0 or size(text) <= limit:
        return [text] if text.strip() else []
    pieces: list[str] = []
    current = ""
    for block in _blocks(text):
        joined = f"{current}\n\n{block}" if current else block
        if size(joined) <= limit:
            current = joined
            continue
        if current:
            pieces.append(current)
        current = ""
        parts = _split_block(block, limit, size)
        pieces += parts[:-1]
        current = parts[-1]
    if current:
        pieces.append(current)
    return pieces


def _blocks(text: str) -> list[str]:
    """Paragraphs (split at blank lines) and fenced code blocks (kept whole)."""
    blocks: list[str] = []
    lines: list[str] = []
    fence = ""
    for line in text.splitlines():
        if _FENCE.match(line):
            fence = "" if fence else line.strip()
        if not fence and not line.strip():
            if lines:
                blocks.append("\n".join(lines))
            lines = []
            continue
        lines.append(line)
    if lines:
        blocks.append("\n".join(lines))
    return blocks


def _split_block(block: str, limit: int, size: Callable[[str], int]) -> list[str]:
    lines = block.split("\n")
    opener = lines[0].strip() if _FENCE.match(lines[0]) else ""
    reserve = size("\n```") if opener else 0
    pieces: list[str] = []
    current = ""
    for line in lines:
        while True:
            joined = f"{current}\n{line}" if current else line
            if size(joined) <= limit - reserve:
                current = joined
                break
            if current and current != opener:
                pieces.append(current)
                current, line = (opener if opener else ""), line
                if current:
                    continue
            room = limit - reserve - (size(current) + 1 if current else 0)
            cut = _cut(line, max(1, room), size)
            head = line[:cut].rstrip(" ")
            pieces.append(f"{current}\n{head}" if current else head)
            current, line = opener, line[cut:].lstrip(" ")
            if not line:
                break
    if current and current != opener:
        pieces.append(current)
    if opener:  # close every piece but the last, reopen every piece but the first
        pieces = [p if p.rstrip().endswith(("```", "~~~")) and i == len(pieces) - 1
                  else p + "\n```" for i, p in enumerate(pieces)]
    return pieces


def _cut(line: str, room: int, size: Callable[[str], int]) -> int:
    """Where to cut an overlong line: the last space that fits, else hard at ``room``."""
    end = min(len(line), room)
    while end > 1 and size(line[:end]) > room:
        end -= 1
    space = line.rfind(" ", 0, end + 1)  # a space just past the room may go
    return space if space > end // 2 else end


_CODE = re.compile(r"(```.*?```|`[^`\n]+`)", re.S)
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
_LINK = re.compile(r"\[([^\]\n]+)\]\((\S+?)\)")


def light_markdown(text: str, bold: str = "*", strike: str = "~") -> str:
    """Markdown for a chat that knows only light markup (WhatsApp: ``*bold*``, ``~strike~``;
    Signal without styles: ``bold=""``): bold, strikethrough and headings in the chat's
    markers, links as ``text (url)``; code spans and blocks are left as they are."""
    def convert(part: str) -> str:
        part = _HEADING.sub(lambda m: f"{bold}{m.group(1)}{bold}", part)
        part = _BOLD.sub(lambda m: f"{bold}{m.group(1) or m.group(2)}{bold}", part)
        part = _STRIKE.sub(lambda m: f"{strike}{m.group(1)}{strike}", part)
        return _LINK.sub(lambda m: m.group(1) if m.group(1) == m.group(2)
                         else f"{m.group(1)} ({m.group(2)})", part)

    return "".join(piece if index % 2 else convert(piece)
                   for index, piece in enumerate(_CODE.split(text)))
