"""The fake Bot API's voice notes and uploads: the voice notes users send
(:func:`voice_message`, downloaded through ``getFile`` like any file) and the files the bot
uploads (``sendVoice``, ``sendPhoto``, ``sendAudio``, ``sendDocument``: multipart/form-data,
as the real API takes them), recorded as :class:`SentMedia`."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ..local_server import RecordedRequest, multipart

#: upload method -> its file field and the kind the test reads
UPLOADS = {"sendVoice": "voice", "sendPhoto": "photo", "sendAudio": "audio",
           "sendDocument": "document"}


@dataclass
class SentMedia:
    """A file the bot uploaded: ``kind`` is the method's field (``voice``, ``photo``, ...)."""

    message_id: int
    chat_id: str
    kind: str
    filename: str
    content: bytes
    caption: str = ""
    message_thread_id: int | None = None


def voice_message(state: Any, content: bytes, *, mime_type: str = "audio/ogg",
                  duration: int = 2, kind: str = "voice") -> dict[str, Any]:
    """The ``voice`` (or ``audio``) object of a message, its bytes stored for ``getFile``."""
    number = next(state.ids)
    file_id = f"file-{number}"
    state.files[file_id] = (f"{kind}/file_{number}.oga", content)
    return {"file_id": file_id, "file_unique_id": f"unique{number}", "duration": duration,
            "mime_type": mime_type, "file_size": len(content)}


def upload(state: Any, method: str, request: RecordedRequest, params: dict[str, Any],
           chat: dict[str, Any], error: type[Exception]) -> SentMedia:
    field = UPLOADS[method]
    part = multipart(request).get(field)
    if part is None or part.filename is None:
        raise error(400, f"Bad Request: there is no {field} in the request")
    if not part.content:
        raise error(400, "Bad Request: file must be non-empty")
    thread = params.get("message_thread_id")
    return SentMedia(next(state.ids), str(chat["id"]), field, part.filename, part.content,
                     str(params.get("caption") or ""), int(thread) if thread else None)


def media_message(bot: dict[str, Any], chat: dict[str, Any], sent: SentMedia) -> dict[str, Any]:
    return {"message_id": sent.message_id, "date": int(time.time()), "chat": chat, "from": bot,
            sent.kind: {"file_id": f"sent-{sent.message_id}", "file_size": len(sent.content)}}
