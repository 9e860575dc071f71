"""What media providers and their users share (docs/voice.md, docs/image-generation.md); the
voice plugin's ``SPEECH`` service is in :mod:`.services`."""

from __future__ import annotations

from dataclasses import dataclass


class MediaError(Exception):
    """A tts, stt or image_gen provider's failure: ``kind`` (missing_key, unreachable, http,
    malformed, invalid, not_configured, ...) and a message that names the fix."""

    def __init__(self, message: str, kind: str = "http", *, status: int | None = None):
        super().__init__(message)
        self.kind, self.status = kind, status


@dataclass(frozen=True)
class GeneratedImage:  # what an image_gen provider returns: bytes, or a url (http(s), data:)
    data: bytes | None = None
    url: str = ""
    mime_type: str = "image/png"
    revised_prompt: str = ""
