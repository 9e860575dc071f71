"""The injection scan of prompt files, remembered across runs for text it has seen.

SOUL.md and a project's context files are the same text run after run, and scanning them
means compiling the scanner's patterns first, which costs more than the rest of building the
prompt. The findings for a text are stored in the validation cache under the text's hash and
a digest of the scanner's own source files, so any change to the rules rescans. A text seen
for the first time, or without a cache, is scanned as before. The cache file is sealed
(docs/cache.md): a finding removed from it outside hermes (an injected AGENTS.md marked
clean) voids the whole file, and the text is scanned again.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any

_SCANNER_SOURCES = ("injection.py", "injection_rules.py", "injection_intl.py",
                    "injection_decode.py", "rule_needs.py", "unicode_fold.py")


@lru_cache(maxsize=1)
def scanner_digest() -> bytes:
    digest = hashlib.sha256()
    for name in _SCANNER_SOURCES:
        digest.update((Path(__file__).parent / name).read_bytes())
    return digest.digest()


def scan_findings(text: str, cache: Any = None) -> list[str]:
    """The injection scan's findings for ``text`` (empty: clean); ``cache`` is a
    the kernel's validation cache (``kernel.cache``) or None."""
    key = ""
    if cache is not None:
        key = cache.key("injection-scan", scanner_digest() + text.encode("utf-8", "surrogatepass"))
        hit = cache.get(key)
        if isinstance(hit, list) and all(isinstance(f, str) for f in hit):
            return list(hit)
    from .injection import scan

    findings = scan(text)
    if cache is not None:
        cache.put(key, findings)
    return findings


def blocked_notice(name: str, findings: list[str]) -> str:
    """What replaces a file the scan blocked."""
    shown = ", ".join(findings[:6]) + (f", +{len(findings) - 6} more" if len(findings) > 6 else "")
    return (f"[BLOCKED: {name} contained potential prompt injection ({shown}). "
            "Content not loaded.]")
