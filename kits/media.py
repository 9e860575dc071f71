"""Owner: the builtin plugin `voice` (also used by `image_gen` and the gateway).

What the media providers and their users share: :class:`MediaError` (a tts, stt or image_gen
provider's failure, naming the fix) and :class:`GeneratedImage`; and media files a tool made,
on their way to a chat. A tool result names them the original's
way: ``MEDIA:<path>`` lines (its ``media_tag``), with ``[[audio_as_voice]]`` asking for a
voice message; :func:`split_media` takes them out of a reply's text, :func:`media_in_result`
out of a tool result. :func:`audio_format` tells an audio file's format by its header, and
:func:`to_ogg_opus` converts one to Ogg/Opus (what Telegram's and Discord's voice messages
play) with ffmpeg or opusenc, whichever is installed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MEDIA_PREFIX = "MEDIA:"
VOICE_MARKER = "[[audio_as_voice]]"
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".webp"}
AUDIO_SUFFIXES = {".ogg", ".opus", ".mp3", ".wav", ".m4a", ".flac", ".aac"}
CONVERT_TIMEOUT = 120.0


class MediaError(Exception):
    """A tts, stt or image_gen provider's failure: ``kind`` (missing_key, unreachable, http,
    malformed, invalid, not_configured, ...) and a message that names the fix."""

    def __init__(self, message: str, kind: str = "http", *, status: int | None = None):
        super().__init__(message)
        self.kind, self.status = kind, status


@dataclass(frozen=True)
class SpeechFile:  # what SPEECH.speak writes; voice_compatible: Ogg/Opus, a voice message
    path: Path
    provider: str
    voice_compatible: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GeneratedImage:  # what an image_gen provider returns: bytes, or a url (http(s), data:)
    data: bytes | None = None
    url: str = ""
    mime_type: str = "image/png"
    revised_prompt: str = ""


@dataclass(frozen=True)
class MediaRef:
    """A file to deliver: ``kind`` is ``image``, ``voice`` (a voice message), ``audio`` or
    ``file``."""

    path: Path
    kind: str


def kind_of(path: Path, voice: bool = False) -> str:
    suffix = path.suffix.lower()
    if suffix in IMAGE_SUFFIXES:
        return "image"
    if suffix in AUDIO_SUFFIXES:
        return "voice" if voice and suffix in (".ogg", ".opus") else "audio"
    return "file"


def media_tag(paths: list[Path] | list[str], voice: bool = False) -> str:
    """The ``MEDIA:`` lines naming ``paths`` (after the voice marker when ``voice``)."""
    lines = [f"{MEDIA_PREFIX}{p}" for p in paths]
    return "\n".join([VOICE_MARKER, *lines] if voice else lines)


def split_media(text: str) -> tuple[str, list[MediaRef]]:
    """``text`` without its ``MEDIA:`` lines and voice marker, and the files they name."""
    voice = VOICE_MARKER in text
    kept: list[str] = []
    paths: list[Path] = []
    for line in text.replace(VOICE_MARKER, "").splitlines():
        stripped = line.strip().strip("`")
        named = stripped[len(MEDIA_PREFIX):].strip() if stripped.startswith(MEDIA_PREFIX) else ""
        if named.startswith(("/", "~")):  # a file's path, not prose that starts "MEDIA:"
            paths.append(Path(named))
        else:
            kept.append(line)
    refs = [MediaRef(p, kind_of(p, voice)) for p in dict.fromkeys(paths)]
    return "\n".join(kept).strip(), refs


def media_in_result(result: str) -> list[MediaRef]:
    """The files a successful tool result's ``media_tag`` names (none when the result is no
    JSON object with one)."""
    if MEDIA_PREFIX not in result:
        return []
    try:
        data = json.loads(result)
    except ValueError:
        return []
    tag = data.get("media_tag") if isinstance(data, dict) else None
    if not isinstance(tag, str) or data.get("success") is False:
        return []
    return split_media(tag)[1]


def deliverable(ref: MediaRef, roots: list[Path]) -> bool:
    """``ref`` is an existing file inside one of ``roots`` (what a chat may be sent: a reply
    naming any other path, say after a prompt injection, sends nothing)."""
    try:
        path = ref.path.expanduser().resolve(strict=True)
    except (OSError, RuntimeError):
        return False
    return path.is_file() and any(path.is_relative_to(r.resolve()) for r in roots)


_FENCE = re.compile(r"```.*?(```|\Z)", re.S)
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKS = re.compile(r"(\*\*|__|~~|`|^#{1,6}\s+|^\s*[-*+]\s+|^>\s?)", re.M)
_THINK = re.compile(r"<think>.*?(</think>|\Z)", re.S)


def spoken_text(text: str) -> str:
    """``text`` as it should be read aloud: markdown marks, code blocks, ``<think>`` blocks,
    ``MEDIA:`` lines and link targets taken out."""
    text = split_media(_THINK.sub(" ", text))[0]
    text = _FENCE.sub(" (code omitted) ", text)
    text = _LINK.sub(lambda m: m.group(1), text)
    text = _MARKS.sub("", text).replace("*", "")
    lines = (re.sub(r"[ \t]+", " ", line).strip() for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def audio_format(path: Path) -> str:
    """``ogg-opus``, ``ogg`` (another codec), ``wav``, ``mp3``, ``m4a``, ``flac``, or ``""``
    when the header is none of them."""
    try:
        with open(path, "rb") as file:
            head = file.read(64)
    except OSError:
        return ""
    if head.startswith(b"OggS"):
        return "ogg-opus" if b"OpusHead" in head else "ogg"
    if head.startswith(b"RIFF") and head[8:12] == b"WAVE":
        return "wav"
    if head.startswith(b"ID3") or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0):
        return "mp3"
    if head[4:8] == b"ftyp":
        return "m4a"
    if head.startswith(b"fLaC"):
        return "flac"
    return ""


def ogg_duration(path: Path) -> float:
    """Seconds of an Ogg/Opus file, from its last page's granule position (48 kHz); 0.0
    when it cannot be read."""
    try:
        with open(path, "rb") as file:
            file.seek(0, 2)
            file.seek(max(0, file.tell() - 65536))
            tail = file.read()
    except OSError:
        return 0.0
    page = tail.rfind(b"OggS")
    if page < 0 or len(tail) < page + 14:
        return 0.0
    granule = int.from_bytes(tail[page + 6:page + 14], "little")
    return granule / 48000 if 0 < granule < 1 << 62 else 0.0


def opus_converter() -> str:
    """The program :func:`to_ogg_opus` would use (``ffmpeg``, ``opusenc``), or ``""``."""
    for program in ("ffmpeg", "opusenc"):
        if shutil.which(program):
            return program
    return ""


def to_ogg_opus(source: Path) -> Path | None:
    """``source`` converted to Ogg/Opus beside it (``.ogg``); None when no converter is
    installed or the conversion failed (opusenc reads WAV and FLAC only)."""
    if audio_format(source) == "ogg-opus":
        return source
    target = source.with_suffix(".ogg") if source.suffix != ".ogg" else source.with_name(
        source.stem + ".opus.ogg")
    program = opus_converter()
    if program == "ffmpeg":
        command = ["ffmpeg", "-y", "-loglevel", "error", "-i", str(source), "-c:a", "libopus",
                   "-b:a", "48k", str(target)]
    elif program == "opusenc" and audio_format(source) in ("wav", "flac"):
        command = ["opusenc", "--quiet", "--bitrate", "48", str(source), str(target)]
    else:
        return None
    if _run(command) and audio_format(target) == "ogg-opus":
        return target
    target.unlink(missing_ok=True)
    if program == "opusenc" and shutil.which("sox"):  # a WAV opusenc cannot read (32-bit)
        pcm16 = source.with_name(source.stem + ".pcm16.wav")
        try:
            if _run(["sox", str(source), "-b", "16", str(pcm16)]):
                command[-2] = str(pcm16)
                if _run(command) and audio_format(target) == "ogg-opus":
                    return target
        finally:
            pcm16.unlink(missing_ok=True)
    target.unlink(missing_ok=True)
    return None


def _run(command: list[str]) -> bool:
    try:
        done = subprocess.run(command, capture_output=True, timeout=CONVERT_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


class Transcriber:
    """What a platform adapter does with a voice note or audio file it received: keep it
    under ``$HERMES_HOME/cache/audio/inbound`` and turn it into the text the agent reads,
    through the voice plugin's ``SPEECH`` service (``stt.provider``). ``kernel``: the
    platform plugin's ``ctx.kernel``."""

    def __init__(self, kernel: Any):
        self.kernel = kernel

    def folder(self) -> Path:
        folder = self.kernel.home / "cache" / "audio" / "inbound"
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def save(self, name: str, content: bytes) -> Path:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:120] or "audio"
        path = self.folder() / safe
        path.write_bytes(content)
        return path

    def text_for(self, audio: Path, caption: str = "",
                 label: str = "voice message") -> tuple[str, bool]:
        """The agent's text for ``audio`` (``caption`` after it) and whether it holds a
        transcript; a failure is said in the text, with its fix, so the agent can tell the
        user. ``label``: what the user sent (``voice message``, ``audio file``). Blocking:
        call it in a worker thread."""
        from hermes_agent.api.services import SPEECH

        try:
            if self.kernel.service_owner(SPEECH) is None:
                raise RuntimeError("the voice plugin is not enabled (`hermes plugins enable "
                                   "voice`)")
            transcript = self.kernel.service(SPEECH).transcribe(audio)
        except Exception as exc:  # MediaError says what to set; anything else, what broke
            note = f"[The user sent a {label}, but it could not be transcribed: {exc}]"
            return "\n".join(t for t in (note, caption) if t), False
        if not transcript:
            return "\n".join(t for t in (f"[The user sent a {label} with no speech in it]",
                                         caption) if t), False
        return "\n".join(t for t in (f"[{label}, transcribed] {transcript}", caption)
                         if t), True
