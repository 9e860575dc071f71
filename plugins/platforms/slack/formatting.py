"""The model's markdown as Slack's mrkdwn: ``&``, ``<`` and ``>`` escaped (Slack reads them as
markup), ``**bold**`` as ``*bold*``, ``*italics*`` as ``_italics_``, ``~~strike~~`` as
``~strike~``, ``[text](url)`` as ``<url|text>`` and headings as bold lines. Code (fenced or
inline) keeps its text, escaped only."""

from __future__ import annotations

import re

_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]+`", re.DOTALL)
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
_ITALIC = re.compile(r"(?<![*\w])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![*\w])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_BOLD_MARK = "\x00"


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _prose(text: str) -> str:
    text = escape(text)
    text = _HEADING.sub(lambda m: f"{_BOLD_MARK}{m.group(1)}{_BOLD_MARK}", text)
    text = _BOLD.sub(lambda m: f"{_BOLD_MARK}{m.group(1) or m.group(2)}{_BOLD_MARK}", text)
    text = _ITALIC.sub(r"_\1_", text)
    text = _STRIKE.sub(r"~\1~", text)
    text = _LINK.sub(lambda m: f"<{m.group(2)}|{m.group(1)}>", text)
    return text.replace(_BOLD_MARK, "*")


def to_mrkdwn(markdown: str) -> str:
    out, done = [], 0
    for match in _CODE.finditer(markdown):
        out.append(_prose(markdown[done:match.start()]))
        code = match.group(0)
        if code.startswith("```"):  # Slack shows no language tag: drop it
            code = re.sub(r"\A```[\w+-]*[ \t]*\n", "```\n", code)
        out.append(escape(code))
        done = match.end()
    out.append(_prose(markdown[done:]))
    return "".join(out)
