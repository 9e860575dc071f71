"""The fake Bot API's files: voice notes users send (:func:`voice_update`), ``getFile`` and
the download URL (``GET /file/bot<TOKEN>/<file_path>``), and the uploads the bot makes
(``sendVoice``, ``sendPhoto``, ``sendAudio``, ``sendDocument``: multipart/form-data, as the
real API takes them), recorded as :class:`SentMedia`."""

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


def get_file(state: Any, params: dict[str, Any], error: type[Exception]) -> dict[str, Any]:
    stored = state.files.get(str(params.get("file_id") or ""))
    if stored is None:
        raise error(400, "Bad Request: invalid file_id")
    return {"file_id": params["file_id"], "file_unique_id": "u" + str(params["file_id"]),
            "file_size": len(stored[1]), "file_path": stored[0]}


def download(state: Any, path: str) -> bytes | None:
    """The bytes of ``/file/bot<TOKEN>/<file_path>``, or None (a 404)."""
    prefix = f"/file/bot{state.token}/"
    if not path.startswith(prefix):
        return None
    wanted = path[len(prefix):]
    return next((content for file_path, content in state.files.values()
                 if file_path == wanted), None)


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
