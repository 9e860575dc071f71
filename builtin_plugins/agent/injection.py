"""Prompt-injection scan for text that goes into the system prompt (SOUL.md, context files).

A file that matches any rule is not injected; :func:`blocked_notice` replaces it. Rules are
grouped by category; each finding is ``<category>:<rule>`` (or ``invisible_unicode_U+XXXX``).
The text is NFKC-normalised first so look-alike characters do not slip through, and the gap
allowed between keywords is a few words, so ordinary prose rarely trips a rule.
"""

from __future__ import annotations

import re
import unicodedata

_GAP = r"(?:[\s,;:'\"*_-]+[\w'-]+){0,5}?[\s,;:'\"*_-]+"  # up to five filler words

_RULES: dict[str, tuple[tuple[str, str], ...]] = {
    "instruction_override": (
        ("ignore_previous", rf"\b(?:ignore|disregard|forget|override|skip)\b{_GAP}"
                            r"(?:previous|prior|above|earlier|preceding|all|any|your|the|other)"
                            rf"(?:{_GAP})?(?:instructions?|rules|directions|guidelines|prompts?|"
                            r"constraints|guardrails)\b"),
        ("new_instructions", r"\b(?:your|the)\s+(?:new|real|actual|updated)\s+instructions\s+"
                             r"(?:are|follow)\b"),
        ("bypass", rf"\b(?:bypass|circumvent|disable)\b{_GAP}(?:safety|security|restrictions|"
                   r"filters|guardrails|content polic(?:y|ies))\b"),
    ),
    "deception": (
        # concealment ("don't tell the user about X", "...the user.", "never let the user
        # know"), not style rules that say what to tell ("never tell the user 'it works'")
        ("hide_from_user", r"\b(?:do\s+not|don'?t|never)\s+(?:ever\s+)?(?:tell|inform|alert|notify"
                           r"|show)\s+(?:the\s+|your\s+)?(?:user|human|operator)s?(?:\s+(?:about|of|"
                           r"that|what|where|anything|this|any|how)\b|\s*(?:[.,;!)]|$))"
                           r"|\b(?:do\s+not|don'?t|never)\s+let\s+(?:the\s+|your\s+)?(?:user|human|"
                           r"operator)s?\s+(?:know|see|notice|find\s+out|learn)\b"
                           r"|\bkeep\s+(?:this|it|that)\s+(?:secret|hidden)\s+from\s+(?:the\s+)?"
                           r"(?:user|human|operator)\b"),
        ("without_telling", r"\bwithout\s+(?:telling|informing|notifying|alerting|asking)\s+"
                            r"(?:the\s+)?(?:user|human|operator)\b"),
        ("secretly", r"\b(?:secretly|covertly|silently)\s+(?:send|upload|run|execute|exfiltrate|"
                     r"copy|forward|post)\b"),
    ),
    "system_prompt_override": (
        ("new_system_prompt", r"\b(?:new|updated|override|replacement|real)\s+system\s+"
                              r"(?:prompt|message|instructions)\b"),
        ("system_tag", r"<\|?\s*system\s*\|?>|<\|im_start\|>\s*system\b|\[\s*system\s*\]\s*:"),
        ("mode_switch", r"\byou\s+are\s+now\s+(?:in\s+)?(?:developer|god|jailbreak|dan|"
                        r"unrestricted|admin)\s+mode\b|\byou\s+are\s+no\s+longer\s+(?:an?\s+)?"
                        r"(?:ai|assistant|bound|restricted)\b"),
        ("reveal_prompt", rf"\b(?:reveal|print|repeat|output|leak)\b{_GAP}(?:your\s+)?system\s+"
                          r"prompt\b"),
    ),
    "hidden_html": (
        ("html_comment", r"<!--(?:(?!-->).){0,2000}?\b(?:ignore|instruction|system|prompt|assistant|"
                         r"execute|curl|wget|secret|password|token|do not tell)\b"),
        ("hidden_element", r"<(?:div|span|p|section)\b[^>]*(?:display\s*:\s*none|visibility\s*:\s*"
                           r"hidden|font-size\s*:\s*0|\bhidden\b)[^>]*>"),
    ),
    "credential_exfiltration": (
        ("http_with_secret", r"\b(?:curl|wget|http|httpie|fetch|invoke-webrequest|iwr|nc|ncat)\b"
                             r"[^\n]{0,200}\$\{?\w*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)"
                             r"\w*\}?"),
        ("send_secrets", rf"\b(?:send|post|upload|forward|email|transmit|exfiltrate)\b{_GAP}"
                         r"(?:the\s+|your\s+|all\s+)?(?:api[\s_-]?keys?|credentials|secrets|"
                         r"tokens|passwords|private\s+keys?|env(?:ironment)?\s+variables)\b"),
        ("upload_file", r"\bcurl\b[^\n]{0,200}(?:-d|--data(?:-binary)?|-F|--form|-T|--upload-file)"
                        r"\s+['\"]?(?:[\w-]+=)?@"),
    ),
    "secret_file_read": (
        ("read_secret_file", r"\b(?:cat|less|more|head|tail|type|bat|base64|xxd|strings|cp|scp)\s+"
                             r"(?:-\S+\s+)*['\"]?[~\w./$-]*(?:\.env(?:\.local|\.production)?"
                             r"(?![\w.-])|\.ssh/\S*|id_(?:rsa|ed25519|ecdsa)\b|\.aws/credentials|"
                             r"\.netrc\b|\.npmrc\b|\.pypirc\b|\.git-credentials\b|/etc/shadow\b|"
                             r"\.hermes/(?:\.env|auth\.json)|credentials\.json\b)"),
        ("print_env", r"\b(?:printenv|env)\s*(?:\||>)\s*(?:curl|nc|wget|tee\s+/tmp)|"
                      r"\bos\.environ\b[^\n]{0,80}\b(?:requests|urllib|httpx)\b"),
    ),
}

_COMPILED = [(f"{category}:{rule}", re.compile(pattern, re.IGNORECASE | re.DOTALL))
             for category, rules in _RULES.items() for rule, pattern in rules]

#: Characters that are invisible or reorder text: zero-width, bidi controls, word joiners, tags.
INVISIBLE = frozenset([0x00AD, 0x180E, *range(0x200B, 0x2010), *range(0x202A, 0x202F),
                       *range(0x2060, 0x2065), *range(0x2066, 0x206A), 0xFEFF])

CATEGORIES: tuple[str, ...] = (*_RULES, "invisible_unicode")


def scan(text: str) -> list[str]:
    """Findings in ``text`` (empty: clean). Deterministic order: rules, then characters."""
    text = text.removeprefix("\ufeff")
    findings = [f"invisible_unicode_U+{cp:04X}" for cp in sorted({ord(c) for c in text} & INVISIBLE)]
    findings.extend(sorted({f"invisible_unicode_U+{ord(c):05X}" for c in text
                            if 0xE0000 <= ord(c) <= 0xE007F}))
    normal = unicodedata.normalize("NFKC", text)
    rules = [name for name, rx in _COMPILED if rx.search(normal)]
    return rules + findings


def blocked_notice(name: str, findings: list[str]) -> str:
    shown = ", ".join(findings[:6]) + (f", +{len(findings) - 6} more" if len(findings) > 6 else "")
    return (f"[BLOCKED: {name} contained potential prompt injection ({shown}). "
            "Content not loaded.]")
