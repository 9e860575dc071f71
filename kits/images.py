"""Owner: the builtin plugin `vision`.

Images in conversations (docs/vision.md). A user message may carry OpenAI content parts; an
image arrives as ``{"type": "image_url", "image_url": {"url": ...}}`` with a ``data:`` URL,
an http(s) URL or a stored reference, and is kept **by reference**: its bytes go to
``$HERMES_HOME/images/<sha256>.<ext>`` (one file per content, size-capped), the message keeps

    {"type": "image_url", "image_url": {"url": "hermes-image:<sha256>.<ext>"},
     "image": {"name": "cat.png", "media_type": "image/png", "width": 640, "height": 480,
               "bytes": 12345}}

and never the base64. Each request resolves the references again (:func:`for_model`): a
``data:`` URL for a model that sees images, a line of text (``[image: cat.png, 640x480,
12 KB, ...]``) for one that does not. Not part of the contract docs/api.md locks
(docs/kits.md).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent import HermesError, private_dir

if TYPE_CHECKING:
    from hermes_agent import Kernel

REF_PREFIX = "hermes-image:"
DEFAULT_MAX_BYTES = 10_000_000  # per image (``vision.max_image_bytes``)
DEFAULT_MAX_IMAGES = 10  # per message (``vision.max_images``)
# the largest image an API mode takes (Anthropic: 5 MB of base64); a larger one is described
SENDABLE_BYTES = {"anthropic_messages": 3_900_000}
SUFFIXES = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".gif", ".webp")
_REF = re.compile(r"^hermes-image:([0-9a-f]{64})\.(png|jpg|gif|webp)$")

#: fetches an http(s) URL under the web SSRF policy; returns the body (raises HermesError)
UrlFetcher = Callable[[str, int], bytes]


class ImageError(HermesError):
    """An image that cannot be used; the message says what to do instead."""


@dataclass(frozen=True)
class ImageInfo:
    media_type: str
    width: int
    height: int


def sniff(data: bytes) -> ImageInfo | None:
    """The format and pixel size of PNG, JPEG, GIF or WebP bytes; None for anything else."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        return ImageInfo("image/png", width, height)
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return ImageInfo("image/gif", width, height)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP" and len(data) >= 30:
        return ImageInfo("image/webp", *_webp_size(data))
    if data.startswith(b"\xff\xd8"):
        return ImageInfo("image/jpeg", *_jpeg_size(data))
    return None


def _webp_size(data: bytes) -> tuple[int, int]:
    chunk = data[12:16]
    if chunk == b"VP8X":
        return (int.from_bytes(data[24:27], "little") + 1,
                int.from_bytes(data[27:30], "little") + 1)
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    return 0, 0


def _jpeg_size(data: bytes) -> tuple[int, int]:
    index = 2
    while index + 9 < len(data):
        if data[index] != 0xFF:
            index += 1
            continue
        marker = data[index + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            index += 2
            continue
        length = int.from_bytes(data[index + 2:index + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE,
                      0xCF):
            height, width = struct.unpack(">HH", data[index + 5:index + 9])
            return width, height
        index += 2 + length
    return 0, 0


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.0f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def is_image_part(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") == "image_url"


def part_url(part: dict[str, Any]) -> str:
    value = part.get("image_url")
    if isinstance(value, str):  # some clients send the URL bare
        return value
    return str((value or {}).get("url") or "") if isinstance(value, dict) else ""


def content_text(content: Any) -> str:
    """The text of a message's content (text parts joined; images left out)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(str(p.get("text", "")) for p in content
                     if isinstance(p, dict) and p.get("type") == "text")


def parse_data_url(url: str) -> bytes:
    """The bytes of a base64 ``data:image/...`` URL."""
    head, sep, payload = url.partition(",")
    if not sep or not head.startswith("data:") or not head.endswith(";base64"):
        raise ImageError("an image data URL must look like data:image/png;base64,<data>")
    try:
        return base64.b64decode(payload, validate=False)
    except (binascii.Error, ValueError) as exc:
        raise ImageError(f"the image data URL is not valid base64 ({exc})") from None


def data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"


class ImageStore:
    """The images of one home, ``<home>/images/<sha256>.<ext>``: saved once per content."""

    def __init__(self, home: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES,
                 max_images: int = DEFAULT_MAX_IMAGES):
        self.root = Path(home).expanduser() / "images"
        self.max_bytes = max_bytes
        self.max_images = max_images

    @classmethod
    def of(cls, kernel: Kernel) -> "ImageStore":
        """The store of ``kernel``'s home, with its ``vision.*`` limits."""
        config = kernel.config
        return cls(kernel.home,
                   max_bytes=int(config.get("vision.max_image_bytes") or DEFAULT_MAX_BYTES),
                   max_images=int(config.get("vision.max_images") or DEFAULT_MAX_IMAGES))

    def save(self, data: bytes, name: str = "") -> dict[str, Any]:
        """Store ``data`` (PNG, JPEG, GIF or WebP, at most ``max_bytes``); its part."""
        if len(data) > self.max_bytes:
            raise ImageError(f"the image {name or ''} has {human_size(len(data))}, more than "
                             f"vision.max_image_bytes ({human_size(self.max_bytes)}); send a "
                             "smaller one or raise that limit in config.yaml".replace("  ", " "))
        info = sniff(data)
        if info is None:
            raise ImageError(f"{name or 'the attachment'} is not a PNG, JPEG, GIF or WebP "
                             "image; convert it to one of those")
        digest = hashlib.sha256(data).hexdigest()
        ref = f"{REF_PREFIX}{digest}.{SUFFIXES[info.media_type]}"
        path = self.path(ref)
        if not path.exists():
            private_dir(self.root)
            tmp = path.with_name(f".{path.name}.{os.urandom(6).hex()}.tmp")
            tmp.write_bytes(data)
            os.chmod(tmp, 0o600)
            os.replace(tmp, path)
        return {"type": "image_url", "image_url": {"url": ref},
                "image": {"name": name or f"image.{SUFFIXES[info.media_type]}",
                          "media_type": info.media_type, "width": info.width,
                          "height": info.height, "bytes": len(data)}}

    def save_file(self, path: str | os.PathLike[str]) -> dict[str, Any]:
        file = Path(path).expanduser()
        try:
            size = file.stat().st_size
        except OSError as exc:
            raise ImageError(f"cannot read the image {file}: {exc.strerror or exc}") from None
        if size > self.max_bytes:
            raise ImageError(f"{file} has {human_size(size)}, more than vision.max_image_bytes "
                             f"({human_size(self.max_bytes)}); use a smaller image")
        return self.save(file.read_bytes(), file.name)

    def path(self, ref: str) -> Path:
        """Where a reference's bytes are (the reference checked: no other file is named)."""
        match = _REF.match(ref)
        if match is None:
            raise ImageError(f"{ref!r} is not a stored image reference")
        return self.root / ref[len(REF_PREFIX):]

    def load(self, ref: str) -> bytes:
        path = self.path(ref)
        try:
            return _read(str(path), path.stat().st_mtime_ns)
        except OSError:
            raise ImageError(f"the stored image {path.name} is gone from {self.root}") from None

    def store_parts(self, content: list[Any], fetch_url: UrlFetcher | None = None
                    ) -> list[dict[str, Any]]:
        """``content`` with every image stored and referenced: ``data:`` URLs decoded,
        http(s) URLs fetched through ``fetch_url`` (the web SSRF policy; refused without
        one), references kept when their file exists. Text parts stay; other parts are
        dropped. :class:`ImageError` says which image could not be used."""
        out: list[dict[str, Any]] = []
        images = 0
        for part in content:
            if isinstance(part, str):
                out.append({"type": "text", "text": part})
                continue
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text":
                out.append({"type": "text", "text": str(part.get("text") or "")})
                continue
            if not is_image_part(part):
                continue
            images += 1
            if images > self.max_images:
                raise ImageError(f"a message may carry at most {self.max_images} images "
                                 "(vision.max_images); send the others in another message")
            out.append(self._stored(part, fetch_url))
        return out

    def _stored(self, part: dict[str, Any], fetch_url: UrlFetcher | None) -> dict[str, Any]:
        url = part_url(part)
        name = str((part.get("image") or {}).get("name") or "") if isinstance(
            part.get("image"), dict) else ""
        if url.startswith(REF_PREFIX):  # stored before (a resent message): still there
            return self.save(self.load(url), name)
        if url.startswith("data:"):
            return self.save(parse_data_url(url), name)
        if url.startswith(("http://", "https://")):
            if fetch_url is None:
                raise ImageError("image URLs cannot be fetched here; send the image itself "
                                 "(a data: URL)")
            return self.save(fetch_url(url, self.max_bytes),
                             name or url.rsplit("/", 1)[-1].split("?")[0][:80])
        raise ImageError(f"an image_url must be an https URL or a data: URL, not {url[:40]!r}")


def web_fetcher(kernel: Kernel) -> UrlFetcher:
    """Fetches an image URL as ``web_extract`` fetches pages (``hermes_agent.kits.http``):
    public addresses only unless ``web.allow_private_networks``, every redirect re-checked,
    the body capped at the image limit."""
    allow_private = bool(kernel.config.get("web.allow_private_networks"))

    def fetch_url(url: str, max_bytes: int) -> bytes:
        from hermes_agent.api import WebError

        from .http import fetch

        try:
            got = fetch(url, allow_private=allow_private, max_bytes=max_bytes, timeout=30.0,
                        text_only=False)
        except WebError as exc:
            raise ImageError(f"cannot fetch the image {url}: {exc}") from None
        if got.status >= 400:
            raise ImageError(f"cannot fetch the image {url}: HTTP {got.status}")
        return got.content

    return fetch_url


@lru_cache(maxsize=32)
def _read(path: str, _mtime: int) -> bytes:
    return Path(path).read_bytes()


def describe(part: dict[str, Any], store: ImageStore | None = None) -> str:
    """The line a model that cannot see gets instead of the image."""
    meta = part.get("image") if isinstance(part.get("image"), dict) else {}
    url = part_url(part)
    bits = [str(meta.get("name") or ("image" if not url.startswith("http") else url))]
    if meta.get("width") and meta.get("height"):
        bits.append(f"{meta['width']}x{meta['height']}")
    if meta.get("bytes"):
        bits.append(human_size(int(meta["bytes"])))
    if store is not None and url.startswith(REF_PREFIX):
        try:
            bits.append(f"saved at {store.path(url)}; vision_analyze can look at it")
        except ImageError:
            pass
    return f"[image: {', '.join(bits)}]"


def for_model(messages: Iterable[dict[str, Any]], store: ImageStore, *, vision: bool,
              api_mode: str = "") -> list[dict[str, Any]]:
    """Request copies of ``messages``: stored images as ``data:`` URLs when ``vision``,
    else as their description (also an image larger than ``api_mode`` takes, see
    :data:`SENDABLE_BYTES`); messages without images are passed through as they are."""
    limit = SENDABLE_BYTES.get(api_mode)
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list) and any(is_image_part(p) for p in content):
            message = {**message, "content": _resolved(content, store, vision, limit)}
        out.append(message)
    return out


def _resolved(content: list[Any], store: ImageStore, vision: bool,
              limit: int | None = None) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for part in content:
        if not is_image_part(part):
            parts.append(part)
            continue
        url = part_url(part)
        if not vision:
            parts.append({"type": "text", "text": describe(part, store)})
        elif url.startswith(REF_PREFIX):
            try:
                data = store.load(url)
            except ImageError as exc:
                parts.append({"type": "text", "text": f"[image unavailable: {exc}]"})
                continue
            if limit is not None and len(data) > limit:
                parts.append({"type": "text", "text": describe(part, store).replace(
                    "[image: ", f"[image too large for this model (over {human_size(limit)}): ",
                    1)})
                continue
            media = (part.get("image") or {}).get("media_type") or (
                sniff(data) or ImageInfo("image/png", 0, 0)).media_type
            parts.append({"type": "image_url", "image_url": {"url": data_url(media, data)}})
        else:
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


_PATH = re.compile(r"""(?:"([^"]+)"|'([^']+)'|((?:\\ |[^\s"'])+))""")


def image_paths(text: str, cwd: str | os.PathLike[str] = ".") -> list[Path]:
    """Paths of existing image files written in ``text``: quoted, or bare with ``\\ `` for
    spaces as a terminal pastes a dragged file, or as a ``file://`` URL (trailing
    punctuation ignored)."""
    found: list[Path] = []
    for match in _PATH.finditer(text):
        quoted = match.group(1) or match.group(2)
        raw = quoted or match.group(3).rstrip("?!,;:)]")
        if not raw.lower().endswith(IMAGE_EXTENSIONS):
            continue
        raw = raw.replace("\\ ", " ")
        if raw.startswith("file://"):  # a file dropped on some terminals
            from urllib.parse import unquote, urlsplit

            raw = unquote(urlsplit(raw).path)
        path = Path(raw).expanduser()
        if not path.is_absolute():
            path = Path(cwd) / path
        if path.is_file() and path not in found:
            found.append(path)
    return found
