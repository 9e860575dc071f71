"""Rule-based fact extraction from a user's message (deterministic, no model call).

The message is cleaned (fenced code blocks, indented code and quoted ``>`` lines dropped,
inline code unwrapped), split into sentences (``. ! ? 。！？;`` and line breaks), and a
sentence is kept when all of these hold:

1. It is 12-300 characters long (a CJK character counts three toward the 12) and has at
   most 60 words.
2. It is not a question (no final ``?``/``？``, no leading question word such as "what",
   "can you", "do you") and not a greeting or thanks ("hi", "thanks", "good morning").
3. It states something durable about the user, matching one of :data:`DURABLE` at its
   start (after "also", "btw", "note:", "fyi"): "I use/prefer/like/work/live/am/have...",
   "my ... is/are ...", "we use/deploy/run/host...", "our ... is ...", "call me ...",
   "remember that ..." (stored without the "remember that"), or their Chinese forms
   ("我用/我喜欢/我的...是/请记住..."). Requests and passing states ("I want you to",
   "I'm trying to", "I think", "I was wondering") are not facts.
4. It holds nothing that looks like a secret (``hermes_agent.kits.secret_text.looks_secret``).

The provider also refuses what the injection scan flags; the model's answer is never mined.
"""

from __future__ import annotations

import re

from hermes_agent.kits.secret_text import looks_secret  # the detector the builtin memory uses too

MIN_CHARS, MAX_CHARS, MAX_WORDS = 12, 300, 60

_FENCED = re.compile(r"(```|~~~).*?(?:\1|\Z)", re.DOTALL)
_INDENTED = re.compile(r"^(?: {4}|\t).*$", re.MULTILINE)
_QUOTED = re.compile(r"^\s*>.*$", re.MULTILINE)
_INLINE = re.compile(r"`([^`\n]*)`")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|[。！？；;\n]+")
_LEAD = re.compile(r"^(?:(?:also|btw|by the way|fyi|note|ps|and|oh|ok|okay|so)\b[\s,:;-]*)+",
                   re.IGNORECASE)

_QUESTION_START = re.compile(
    r"^(?:what|which|who|whom|whose|when|where|why|how|is|are|am|was|were|do|does|did|can|"
    r"could|would|will|should|shall|may|might|have|has|any|isn't|aren't|don't|doesn't)\b",
    re.IGNORECASE)
_GREETING = re.compile(r"^(?:hi|hello|hey|yo|thanks|thank you|thx|cheers|good (?:morning|"
                       r"afternoon|evening|night)|bye|goodbye|see you|ok|okay|great|cool|"
                       r"nice|sure|yes|no)\b", re.IGNORECASE)
_TRANSIENT = re.compile(
    r"^(?:i|we)(?:'m| am| are|'re)? (?:(?:just |now |currently )?(?:trying|going|about|"
    r"looking|wondering|not sure|confused|stuck|done|back|here|ready)\b)|"
    r"^i (?:want|need|would like|'d like) (?:you|to know)\b|"
    r"^(?:i|we) (?:think|guess|wonder|hope|believe|suppose|was wondering|just)\b|"
    r"^(?:i|we) (?:want|need|have) to\b", re.IGNORECASE)
_REMEMBER = re.compile(r"^(?:please )?(?:remember|note|keep in mind)(?: that|:)?\s+",
                       re.IGNORECASE)
_REMEMBER_ZH = re.compile(r"^(?:请)?(?:记住|记得)[:：，,]?\s*")
DURABLE = (
    re.compile(r"^i(?:'m| am) (?:a|an|the|from|based|located|living|working|allergic|"
               r"vegetarian|vegan|left-handed|right-handed)\b", re.IGNORECASE),
    re.compile(r"^i (?:always |usually |mostly |never |only |also |still |mainly |don't |do "
               r"not |no longer )?(?:use|prefer|like|love|enjoy|hate|dislike|avoid|work|live|"
               r"run|deploy|host|write|code|program|develop|speak|drink|eat|own|have|keep|"
               r"store|study|teach|maintain|build|ship|commute|go|wake|sleep)\b",
               re.IGNORECASE),
    re.compile(r"^my [^.?!]{1,60}? (?:is|are|was|=|lives|runs|uses)\b", re.IGNORECASE),
    re.compile(r"^my [^.?!:]{1,40}:\s*\S", re.IGNORECASE),
    re.compile(r"^(?:we|our team|our company) (?:always |usually |mostly |never |only |also |"
               r"don't |do not )?(?:use|prefer|deploy|run|host|build|ship|work|write|keep|"
               r"store|release|test|review|target|support)\b", re.IGNORECASE),
    re.compile(r"^our [^.?!]{1,60}? (?:is|are|runs|uses|lives)\b", re.IGNORECASE),
    re.compile(r"^(?:call me|my name is|i go by|i'm called)\b", re.IGNORECASE),
    re.compile(r"^我(?:们)?(?:一直|通常|总是|平时|也|不|只)?(?:用|使用|喜欢|偏好|更喜欢|讨厌|"
               r"住在|在|是|有|叫|部署|写|开发|喝|吃|养)"),
    re.compile(r"^我(?:们)?的.{1,20}?(?:是|叫|在)"),
)

_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def weight(text: str) -> int:
    """Length for the minimum: a CJK character counts three (it carries a word's meaning)."""
    return len(text) + 2 * len(_CJK_CHAR.findall(text))


def problem(text: str) -> str | None:
    """Why ``text`` cannot be stored as a fact (length or a secret), None when it can."""
    size = len(text.strip())
    if weight(text.strip()) < MIN_CHARS or size > MAX_CHARS:
        return f"a fact must be {MIN_CHARS}-{MAX_CHARS} characters long (this one has {size})"
    if looks_secret(text):
        return "it looks like it contains a secret (a key, token or password); secrets are not stored"
    return None


# --- extraction ---------------------------------------------------------------------------
def sentences(message: str) -> list[str]:
    text = _FENCED.sub("\n", message or "")
    text = _QUOTED.sub("\n", _INDENTED.sub("\n", text))
    text = _INLINE.sub(r"\1", text)
    return [s.strip(" \t-*•,") for s in _SENTENCE_END.split(text) if s and s.strip(" \t-*•,")]


def durable(sentence: str) -> str | None:
    """The fact ``sentence`` states (as stored), or None when it is not one (rules 2-3)."""
    text = _LEAD.sub("", sentence.strip()).strip()
    if not text or text.endswith(("?", "？")) or _QUESTION_START.match(text):
        return None
    remembered = _REMEMBER.sub("", text, count=1)
    remembered = _REMEMBER_ZH.sub("", remembered, count=1)
    if remembered != text:  # "remember that X": X is the fact, whatever its form
        return remembered.strip() or None
    if _GREETING.match(text) or _TRANSIENT.match(text):
        return None
    if any(rule.match(text) for rule in DURABLE):
        return text
    return None


def extract_facts(message: str) -> list[str]:
    """The durable facts in a user's message, in order, without repeats."""
    found: list[str] = []
    for sentence in sentences(message):
        fact = durable(sentence)
        if (fact is None or len(fact.split()) > MAX_WORDS or problem(fact) is not None
                or fact in found):
            continue
        found.append(fact)
    return found
